"""View stacks against NumPy: random op chains over a buffer that holds its own offsets."""

import threading

import numpy as np
import pytest

import symshape

RANGE = 5


def start(rng, cx, syms):
    rank = rng.randint(1, 3)
    values = {s.symbol_name(): rng.randint(1, RANGE) for s in syms}
    shape = syms[:rank]
    stack = symshape.ViewStack.row_major(cx, shape)
    numel = int(np.prod([values[s.symbol_name()] for s in shape]))
    base = np.arange(numel, dtype=np.int64)
    return stack, base.reshape([values[s.symbol_name()] for s in shape]), values


def random_op(rng, st, x):
    """One op applied to the symbolic stack and to the NumPy array alike."""
    nd = x.ndim
    kind = rng.choice(
        ["permute", "flip", "index", "merge", "expand", "pad", "shrink", "unfold",
         "diagonal", "transpose", "squeeze", "contiguous", "T", "mT", "narrow", "rot90"]
    )
    if kind == "rot90" and nd >= 2:
        a, b = rng.sample(range(nd), 2)
        k = rng.randint(-5, 5)
        return st.rot90(k, (a, b)), np.rot90(x, k, (a, b))
    if kind == "permute":
        p = list(range(nd))
        rng.shuffle(p)
        return st.permute(*p), x.transpose(p)
    if kind == "flip" and nd:
        axes = sorted(rng.sample(range(nd), rng.randint(1, nd)))
        return st.flip(*axes), np.flip(x, axes)
    if kind == "index" and nd:
        key = []
        for k in range(nd):
            r = rng.random()
            if r < 0.2 and x.shape[k] >= 1:
                key.append(rng.choice([0, -1]))
            elif r < 0.3:
                key.append(None)
            else:
                pick = lambda: rng.choice([None, -6, -3, -1, 0, 1, 2, 4, 6])
                key.append(slice(pick(), pick(), rng.choice([None, 1, 2, 3, -1, -2])))
        if rng.random() < 0.2:
            key.insert(rng.randint(0, len(key)), Ellipsis)
            key.pop(rng.randrange(len(key)) if key[-1] is not Ellipsis else 0)
        key = tuple(key)
        return st[key], x[key]
    if kind == "merge" and nd >= 2:
        k = rng.randrange(nd - 1)
        s = st.shape
        new = s[:k] + [s[k] * s[k + 1]] + s[k + 2:]
        return st.reshape(new), x.reshape(x.shape[:k] + (x.shape[k] * x.shape[k + 1],) + x.shape[k + 2:])
    if kind == "expand":
        k = rng.randint(0, nd)
        st, x = st.unsqueeze(k), np.expand_dims(x, k)
        size = rng.randint(0, 3)
        shape = list(st.shape)
        shape[k] = size
        target = list(x.shape)
        target[k] = size
        return st.expand(shape), np.broadcast_to(x, target)
    if kind == "pad" and nd:
        pads = [(rng.randint(0, 2), rng.randint(0, 2)) for _ in range(nd)]
        return st.pad(pads), np.pad(x, pads, constant_values=-1)
    if kind == "shrink" and nd:
        bounds, key = [], []
        for k, d in enumerate(st.shape):
            lo = rng.choice([0, 1]) if x.shape[k] >= 1 else 0
            hi = rng.choice([d, d - 1]) if x.shape[k] - 1 >= lo else d
            hi_value = x.shape[k] if str(hi) == str(d) else x.shape[k] - 1
            bounds.append((lo, hi))
            key.append(slice(lo, hi_value))
        return st.shrink(bounds), x[tuple(key)]
    if kind == "unfold" and nd and x.shape[-1] >= 1:
        axis = rng.randrange(nd)
        if x.shape[axis] < 1:
            return st, x
        size = rng.randint(1, min(x.shape[axis], 3))
        step = rng.randint(1, 3)
        w = np.lib.stride_tricks.sliding_window_view(x, size, axis=axis)
        w = w[(slice(None),) * axis + (slice(None, None, step),)]
        return st.unfold(axis, size, step), w
    if kind == "diagonal" and nd >= 2:
        off = rng.randint(-2, 2)
        return st.diagonal(off, 0, 1), np.diagonal(x, off, 0, 1)
    if kind == "transpose" and nd >= 2:
        a, b = rng.sample(range(nd), 2)
        return st.transpose(a, b), np.swapaxes(x, a, b)
    if kind == "squeeze":
        # A symbolic axis is squeezed only when provably of size 1 (else an error).
        ones = [k for k, d in enumerate(st.shape) if d.is_constant() and int(d) == 1]
        if ones:
            return st.squeeze(*ones), np.squeeze(x, tuple(ones))
    if kind == "contiguous":
        return st.contiguous(), x.copy()
    if kind == "T":
        return st.T, x.T
    if kind == "mT" and nd >= 2:
        return st.mT, np.swapaxes(x, -1, -2)
    if kind == "narrow" and nd and x.shape[0] >= 1:
        start = rng.randint(0, x.shape[0] - 1)
        length = rng.randint(0, x.shape[0] - start)
        return st.narrow(0, start, length), x[start:start + length]
    return st, x


def check(stack, x, values, storage=0):
    """`stack` bound reads the offsets `x`, and materializes their elements from a buffer
    of at least `storage` elements (the bottom view's reach: a buffer holds all of it)."""
    bound = stack.bind(values)
    assert tuple(bound.shape) == x.shape, stack.show()
    off = bound.offsets(pad=-1)
    assert off.dtype == np.int64 and off.shape == x.shape
    assert (off == x).all(), (stack.show(), off, x)
    data = np.arange(max(int(x.max(initial=-1)) + 2, storage), dtype=np.float64) * 3 + 0.5
    expect = np.where(x >= 0, data[np.maximum(x, 0)], 0)
    got = bound.materialize(data)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert (got == expect).all(), (stack.show(), got, expect)
    ints = data.astype(np.int32)
    assert (bound.materialize(ints) == np.where(x >= 0, ints[np.maximum(x, 0)], 0)).all()
    halves = data.astype(np.float16)
    got = bound.materialize(halves)
    assert got.dtype == np.float16
    assert (got == np.where(x >= 0, halves[np.maximum(x, 0)], 0)).all()
    # The same stack over arrays of other layouts: its bottom view addresses their elements
    # in C order, which NumPy's ravel lists.
    for name, arr in layouts(len(data)):
        flat = arr.ravel()
        expect = np.where(x >= 0, flat[np.maximum(x, 0)], 0)
        got = bound.materialize(arr)
        assert got.dtype == arr.dtype and got.shape == x.shape
        assert (got == expect).all(), (name, stack.show(), got, expect)


def layouts(need):
    """Arrays of at least `need` elements in many layouts: transposed, sliced with gaps,
    reversed, broadcast, Fortran-ordered, over foreign read-only memory, of two dtypes."""
    n = need + 3
    big = np.arange(4 * n, dtype=np.float64) * 7 + 0.25
    out = [
        ("gaps", big[::2]),
        ("reversed", big[::-1]),
        ("reversed gaps", big[1:][::-3]),
        ("transposed", big[: 2 * n].reshape(2, n).T),
        ("fortran", np.asfortranarray(big[: 2 * n].reshape(2, n))),
        ("broadcast", np.broadcast_to(big[:n, None], (n, 3))),
        ("broadcast row", np.broadcast_to(big[:3], (n, 3))),
        ("mixed 3-d", big[: 4 * n].reshape(2, 2, n).transpose(2, 0, 1)[::-1, :, ::-1]),
        ("fortran gaps", np.asfortranarray(big[: 2 * n].reshape(2, n))[:, ::-2]),
        ("base gaps", np.frombuffer(big.tobytes(), dtype=np.float64)[::3]),
        # Not a view of a NumPy array (its base is a memoryview): gathered.
        ("foreign gaps", np.asarray(memoryview(big)[::3])),
        ("foreign reversed", np.asarray(memoryview(big)[::-1])),
        ("foreign broadcast gaps", np.broadcast_to(np.asarray(memoryview(big)[::-2])[:n, None, None], (n, 1, 3))),
        ("int32 columns", np.arange(3 * n, dtype=np.int32).reshape(n, 3)[:, 1]),
        ("uint8 reversed", (np.arange(2 * n) % 251).astype(np.uint8)[::-2]),
    ]
    ro = big[::-2]
    ro.flags.writeable = False
    out.append(("read-only", ro))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_random_chains_match_numpy(seed):
    import random

    rng = random.Random(seed)
    for _ in range(40):
        cx = symshape.Scope()
        syms = [cx.declare(f"d{k} 1..={RANGE}") for k in range(3)]
        st, x, values = start(rng, cx, syms)
        storage = int(x.max(initial=-1)) + 1
        for _ in range(rng.randint(1, 6)):
            st, x = random_op(rng, st, x)
        check(st, x, values, storage)


def test_strided_matches_as_strided():
    cx = symshape.Scope()
    n = cx.declare("n 1..=6")
    base = np.arange(64, dtype=np.int64)
    st = symshape.ViewStack.strided(cx, [n, 3], [2, n], offset=1)
    for v in range(1, 7):
        bound = st.bind({"n": v})
        ref = np.lib.stride_tricks.as_strided(base[1:], (v, 3), (2 * 8, v * 8))
        assert (bound.offsets() == ref).all()
        assert bound.strides == [2, v] and bound.offset == 1
        assert (bound.materialize(base) == ref).all()


def test_show_lower_guards_emit():
    cx = symshape.Scope()
    b = cx.declare("b 1..=64")
    s = cx.declare("s 1..=4096")
    x = symshape.ViewStack.row_major(cx, [b, s, 768])
    heads = x.reshape(b, s, 12, 64).permute(0, 2, 1, 3)
    assert heads.show() == "view shape=[b, 12, s, 64] strides=[768*s, 64, 768, 1] offset=0 mask=none"
    offset, valid = heads.lower()
    assert str(offset) == "768*i0*s + 64*i1 + 768*i2 + i3" and valid.as_bool() is True
    merged = heads.reshape(b * 12, s * 64)
    assert merged.depth() == 2
    assert merged.show().splitlines()[1] == "view shape=[12*b, 64*s] strides=[64*s, 1] offset=0 mask=none"
    half = x.reshape(b, s, 2, 384)
    assert half.guards() == []
    g = symshape.ViewStack.row_major(cx, [s]).reshape(s // 2, 2)
    assert [str(c) for c in g.guards()] == ["s == 2*(s // 2)"]
    with pytest.raises(symshape.Error, match="guard"):
        g.bind({"s": 7})
    code = merged.emit_c()
    assert "symshape_materialize" in code and "symshape_guards" in code


def test_errors_name_the_op():
    cx = symshape.Scope()
    n = cx.declare("n 1..=8")
    x = symshape.ViewStack.row_major(cx, [n, 3])
    with pytest.raises(symshape.Error, match=r"^permute: "):
        x.permute(0, 0)
    with pytest.raises(symshape.Error, match=r"^reshape: "):
        x.reshape(5)
    with pytest.raises(symshape.Error):
        x.bind({"n": 0})
    assert (x.bind({"n": 2}).materialize(np.arange(12)[::2]) == np.arange(0, 12, 2).reshape(2, 3)).all()
    with pytest.raises(TypeError, match="materialize"):
        x.bind({"n": 2}).materialize([1, 2, 3])
    with pytest.raises(symshape.Error):
        x.bind({"n": 2}).materialize(np.arange(3))


def test_splits():
    cx = symshape.Scope()
    n = cx.declare("n 1..=8")
    x = symshape.ViewStack.row_major(cx, [n, 6])
    base = np.arange(24).reshape(4, 6)
    for got, ref in zip(x.tensor_split(1, 4), np.array_split(base, 4, axis=1)):
        assert (got.bind({"n": 4}).offsets() == ref).all()
    for got, ref in zip(x.split(1, 4), np.split(base, [4], axis=1)):
        assert (got.bind({"n": 4}).offsets() == ref).all()
    assert len(x.unbind(1)) == 6
    assert len(x.chunk(1, 4)) == 3


def test_more_runner_ops():
    cx = symshape.Scope()
    n = cx.declare("n 1..=8")
    x = symshape.ViewStack.row_major(cx, [n, 6, 4])
    base = np.arange(4 * 6 * 4).reshape(4, 6, 4)

    def offsets(st):
        return st.bind({"n": 4}).offsets()

    for got, ref in zip(x.hsplit(3), np.hsplit(base, 3)):
        assert (offsets(got) == ref).all()
    for got, ref in zip(x.dsplit([1, 3]), np.dsplit(base, [1, 3])):
        assert (offsets(got) == ref).all()
    for got, ref in zip(x.vsplit([n - 1]), np.vsplit(base, [3])):
        assert (offsets(got) == ref).all()
    assert [len(p.shape) for p in x.split_with_sizes(1, [2, 4])] == [3, 3]
    assert (offsets(x.swapdims(0, 2)) == base.swapaxes(0, 2)).all()
    assert (offsets(x.detach()) == base).all() and (offsets(x.alias()) == base).all()
    t = x.permute(2, 0, 1)
    assert (offsets(t.ascontiguousarray()) == base.transpose(2, 0, 1)).all()
    assert t.ascontiguousarray().depth() == 2 and x.ascontiguousarray().depth() == 1
    assert x.astype("float32", "float32", copy=False).depth() == 1
    assert x.astype("int32", "float64").depth() == 2
    with pytest.raises(symshape.Error, match="not an element type"):
        x.astype("int32", "float17")
    row = symshape.ViewStack.row_major(cx, [1, 6, 1])
    assert (offsets(row.expand_as(x)) == np.broadcast_to(np.arange(6).reshape(1, 6, 1), (4, 6, 4))).all()
    assert [str(d) for d in x.reshape(4 * n, 6).reshape_as(x).shape] == ["n", "6", "4"]
    assert [str(d) for d in x.view_as(x.flatten()).shape] == ["24*n"]
    assert (offsets(x.reinterpret(8, 4)) == np.arange(4 * 6 * 8).reshape(4, 6, 8)).all()
    c = x.reshape(n, 6, 2, 2).view_as_complex()
    assert (offsets(c) == np.arange(4 * 6 * 2).reshape(4, 6, 2)).all()
    assert (offsets(c.real()) == 2 * np.arange(4 * 6 * 2).reshape(4, 6, 2)).all()
    assert (offsets(c.imag()) == 2 * np.arange(4 * 6 * 2).reshape(4, 6, 2) + 1).all()


def test_threads_share_a_scope():
    cx = symshape.Scope()
    n = cx.declare("n 1..=64")
    m = cx.declare("m 1..=64")
    x = symshape.ViewStack.row_major(cx, [n, m, 4])
    data = np.arange(64 * 64 * 4, dtype=np.float32)
    errors = []

    def work(k):
        try:
            cx.declare(f"t{k} 0..=9")
            for v in range(1, 20):
                y = x.permute(2, 0, 1).reshape(4, n * m)[:, ::2]
                b = y.bind({"n": v, "m": k + 1})
                ref = data[: v * (k + 1) * 4].reshape(v * (k + 1), 4).T[:, ::2]
                assert (b.materialize(data) == ref).all()
                assert cx.prove(((n * m + k) // m).ge(n)) is True
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cx.symbols()) == 2 + 8


def test_materialize_refuses_unreadable_layouts():
    cx = symshape.Scope()
    n = cx.declare("n 1..=8")
    b = symshape.ViewStack.row_major(cx, [n, 3]).bind({"n": 2})
    swapped = np.arange(12, dtype=np.float64).astype(np.dtype(np.float64).newbyteorder())
    with pytest.raises(symshape.Error, match=r"^materialize: the array's byte order is not native"):
        b.materialize(swapped)
    raw = np.zeros(64, dtype=np.uint8)
    odd = np.ndarray((8,), dtype=np.int32, buffer=raw, strides=(5,))
    with pytest.raises(symshape.Error, match=r"^materialize: the array's byte strides \[5\] are not multiples of its item size 4 \(axis 0\)$"):
        b.materialize(odd)
    unaligned = np.frombuffer(bytes(8 * 13 + 1), dtype=np.float64, offset=1, count=12)
    with pytest.raises(symshape.Error, match=r"^materialize: the array's data is not aligned"):
        b.materialize(unaligned)
    # Many axes: a C-contiguous array is one buffer; a strided one takes at most 32 axes.
    deep = np.arange(4.0).reshape((2, 2) + (1,) * 38)
    flat4 = symshape.ViewStack.row_major(cx, [4]).bind({})
    assert list(flat4.materialize(deep)) == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(symshape.Error, match=r"^materialize: the array is not C-contiguous and has 40 axes"):
        flat4.materialize(np.asarray(memoryview(deep.swapaxes(0, 1))))
    assert list(flat4.materialize(deep.swapaxes(0, 1))) == [0.0, 2.0, 1.0, 3.0]
    # A stack reaching past the array's elements, whatever their layout.
    with pytest.raises(symshape.Error, match=r"^materialize"):
        b.materialize(np.arange(10)[::-2])
    with pytest.raises(symshape.Error):
        b.materialize(np.arange(5))


def test_materialize_zero_size_and_zero_strides():
    cx = symshape.Scope()
    n = cx.declare("n 0..=8")
    st = symshape.ViewStack.row_major(cx, [n, 3])
    empty = st.bind({"n": 0})
    for arr in [np.zeros((0, 4))[:, ::-1], np.zeros((3, 0)).T, np.broadcast_to(np.zeros(0), (5, 0))]:
        got = empty.materialize(arr)
        assert got.shape == (0, 3)
    with pytest.raises(symshape.Error, match=r"^materialize"):
        st.bind({"n": 1}).materialize(np.zeros((0, 4))[:, ::-1])
    # One element broadcast to every index: stride 0 on each axis.
    one = np.broadcast_to(np.float32(2.5), (4, 3))
    assert one.strides == (0, 0)
    assert (st.bind({"n": 4}).materialize(one) == np.full((4, 3), 2.5, dtype=np.float32)).all()
    rev = st.permute(1, 0).flip(0).bind({"n": 2})
    arr = np.broadcast_to(np.arange(3.0)[::-1], (2, 3))
    assert (rev.materialize(arr) == arr.ravel().reshape(2, 3).T[::-1]).all()


def test_materialize_reads_a_fortran_array_in_c_order():
    # A Fortran-ordered array is one flat block of memory, but not in index order.
    cx = symshape.Scope()
    b = symshape.ViewStack.row_major(cx, [6]).bind({})
    a = np.arange(6.0).reshape(2, 3).T
    assert a.flags.f_contiguous and not a.flags.c_contiguous
    assert list(b.materialize(a)) == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
