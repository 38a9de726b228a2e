"""Expr and Cond: arithmetic with Python's floor semantics, identity, text, pickling."""

import pickle

import pytest

import symshape
from conftest import bindings_of, random_expr, reference, small_scope


def test_arithmetic_matches_python_ints(rng):
    cx, syms = small_scope()
    envs = list(bindings_of(syms))
    for _ in range(150):
        e = random_expr(rng, syms)
        for env in rng.sample(envs, 12):
            assert cx.eval(e, env) == reference(e, env), (str(e), env)


def test_floor_semantics_of_constants():
    one = symshape.Scope().parse("1")
    for x in range(-9, 10):
        for y in [-4, -3, -1, 1, 2, 5]:
            assert int((one * x) // y) == x // y
            assert int((one * x) % y) == x % y
            assert int(x // (one * y)) == x // y
            assert int(x % (one * y)) == x % y
            assert int(symshape.cdiv(x, y)) == -((-x) // y)
    assert int(-(one * 7)) == -7
    assert int((one * 3) ** 4) == 81


def test_big_ints_are_exact():
    cx = symshape.Scope()
    n = cx.declare("n")
    big = 10**40 + 7
    e = n * big + big
    assert str(e) == f"{big}*n + {big}"
    assert int(e - n * big) == big
    assert cx.range(e) == (big, big * (2**63 - 1) + big)


def test_identity_hash_and_text_round_trip(rng):
    cx, syms = small_scope()
    a, b, c = syms
    assert (a + 1) * (a - 1) == a * a - 1
    assert hash((a + 1) * (a - 1)) == hash(a * a - 1)
    assert a + b != b + a + 1
    cache = {a * b + 1: "x"}
    assert cache[1 + b * a] == "x"
    for _ in range(100):
        e = random_expr(rng, syms)
        back = cx.parse(str(e))
        assert back == e and hash(back) == hash(e)
        assert eval(repr(e), {"Expr": lambda t: cx.parse(t)}) == e


def test_pickle_round_trip(rng):
    cx = symshape.Scope()
    n = cx.declare("n 1..=4096 multiple of 8")
    m = cx.declare("m")
    i = cx.declare("i 0..n")
    j = cx.declare("j 0..m")
    for e in [n, i * m + j, (i * m + j) // m, symshape.cdiv(n, 3) + symshape.max(i, j), cx.parse("-5")]:
        back = pickle.loads(pickle.dumps(e))
        assert back == e and hash(back) == hash(e)
    cond = (i * m + j).lt(n * m) & n.ne(16) | ~m.ge(3)
    assert pickle.loads(pickle.dumps(cond)) == cond
    # A symbol's identity is its whole declaration: the bound of i survives.
    assert pickle.loads(pickle.dumps(i)).symbols() == [i, n]


def test_conds():
    cx, (a, b, c) = small_scope()
    assert a.le(b) == cx.parse_cond("a <= b")
    assert (a.lt(b) & b.lt(3)) == cx.parse_cond("a < b and b < 3")
    assert (a.lt(b) | b.lt(3)) == cx.parse_cond("a < b or b < 3")
    assert ~a.lt(b) == a.ge(b)
    assert a.eq(a).as_bool() is True
    assert a.gt(b).as_bool() is None
    with pytest.raises(TypeError, match="no truth value"):
        bool(a.lt(b))
    assert cx.eval(a.lt(b), {"a": 0, "b": 1, "c": 0}) is True


def test_errors():
    cx = symshape.Scope()
    n = cx.declare("n 1..=8")
    assert issubclass(symshape.Error, ValueError)
    with pytest.raises(symshape.Error, match=r"^parse: column 4: expected an expression, found end of input$"):
        cx.parse("n +")
    with pytest.raises(symshape.Error, match="unknown symbol `q`"):
        cx.parse("q + 1")
    with pytest.raises(symshape.Error):
        cx.declare("n 0..=3")
    with pytest.raises(symshape.Error, match="n"):
        cx.eval(n + 1, {"n": 9})
    with pytest.raises(ZeroDivisionError):
        n // 0
    with pytest.raises(ZeroDivisionError):
        n % (n - n)
    with pytest.raises(TypeError):
        n + 1.5
    with pytest.raises(TypeError):
        n < 3
    with pytest.raises(TypeError, match="not a constant"):
        int(n)
