"""Symbolic index questions: symshape against sympy (``python -m symshape.bench``).

The corpus is index arithmetic in Inductor's vocabulary:

- the lowered offsets of attention (head split and merge), convolution (padded windows)
  and KV-cache (a window of a cache, heads split) views, asked whether each offset is in
  bounds, and whether it equals the offset of the same view built another way;
- generated ``FloorDiv``/``ModularIndexing``/``PythonMod`` nests over the row-major flat
  index of ``k`` dimensions (a product of up to 60 symbols), asked whether each nest
  recovers its index, whether the flat index is in bounds, and one false question.

Each question is answered once, cold, by each side. symshape: parse the two sides from
text, simplify them, prove the comparison (``Scope.prove``: True, False or None). sympy:
the same comparison on expressions built beforehand (their construction is not timed), with
``sympy.simplify`` of the relation (True, False, or undecided). Symbols carry the facts each
side can express: sizes are positive integers for both, loop indices nonnegative integers
for sympy and below their dimension for symshape (sympy has no assumption for that).

The report gives, per question kind, the time of each side, and over the corpus the
median and the worst (smallest) per-question speedup, the questions each side decides,
and a check that no decided answer contradicts the other side's or a brute evaluation at
random bindings.
"""

import argparse
import platform
import random
import statistics
import sys
import time

import symshape


def _inductor(sympy):
    """Stand-ins for Inductor's functions: the same class names, arguments and meaning."""

    class FloorDiv(sympy.Function):
        is_integer = True

        @classmethod
        def eval(cls, a, b):
            if a.is_Integer and b.is_Integer:
                return sympy.Integer(int(a) // int(b))

    class ModularIndexing(sympy.Function):
        is_integer = True
        is_nonnegative = True

        @classmethod
        def eval(cls, x, d, m):
            if x.is_Integer and d.is_Integer and m.is_Integer:
                return sympy.Integer((int(x) // int(d)) % int(m))

    class PythonMod(sympy.Function):
        is_integer = True

        @classmethod
        def eval(cls, a, b):
            if a.is_Integer and b.is_Integer:
                return sympy.Integer(int(a) % int(b))

    return FloorDiv, ModularIndexing, PythonMod


class Question:
    """`lhs OP rhs` as symshape text and as sympy expressions, over declared symbols."""

    def __init__(self, kind, decls, lhs, op, rhs, s_lhs, s_rhs):
        self.kind, self.decls = kind, decls
        self.lhs, self.op, self.rhs = lhs, op, rhs
        self.s_lhs, self.s_rhs = s_lhs, s_rhs


OPS = {"<=": "le", "<": "lt", "==": "eq", "!=": "ne", ">=": "ge", ">": "gt"}


def nest_questions(sympy, k):
    """FloorDiv/ModularIndexing nests over the flat index of `k` dimensions."""
    FloorDiv, ModularIndexing, PythonMod = _inductor(sympy)
    decls = [f"s{j} 1..=1024" for j in range(k)] + [f"i{j} 0..s{j}" for j in range(k)]
    s = [sympy.Symbol(f"s{j}", integer=True, positive=True) for j in range(k)]
    i = [sympy.Symbol(f"i{j}", integer=True, nonnegative=True) for j in range(k)]

    def prod_text(js):
        return "*".join(f"s{j}" for j in js) or "1"

    def prod(js):
        return sympy.Mul(*[s[j] for j in js])

    flat_t = " + ".join(f"i{j}*{prod_text(range(j + 1, k))}" for j in range(k))
    flat = sympy.Add(*[i[j] * prod(range(j + 1, k)) for j in range(k)])
    mid = k // 2
    inner = prod_text(range(mid + 1, k))
    qs = [
        Question("nest: ModularIndexing(x, inner, s) == i", decls,
                 f"(({flat_t}) // ({inner})) % s{mid}", "==", f"i{mid}",
                 ModularIndexing(flat, prod(range(mid + 1, k)), s[mid]), i[mid]),
        Question("nest: FloorDiv(x, inner) == i0", decls,
                 f"({flat_t}) // ({prod_text(range(1, k))})", "==", "i0",
                 FloorDiv(flat, prod(range(1, k))), i[0]),
        Question("nest: x < numel", decls, flat_t, "<", prod_text(range(k)),
                 flat, prod(range(k))),
        Question("nest: FloorDiv*s + PythonMod == x", decls,
                 f"(({flat_t}) // s{k - 1})*s{k - 1} + ({flat_t}) % s{k - 1}", "==", flat_t,
                 FloorDiv(flat, s[k - 1]) * s[k - 1] + PythonMod(flat, s[k - 1]), flat),
        Question("nest: ModularIndexing(x, 1, s) <= s - 1", decls,
                 f"({flat_t}) % s{k - 1}", "<=", f"s{k - 1} - 1",
                 ModularIndexing(flat, 1, s[k - 1]), s[k - 1] - 1),
        Question("nest: x == numel (false)", decls, flat_t, "==", prod_text(range(k)),
                 flat, prod(range(k))),
    ]
    return qs


def view_questions(sympy):
    """Lowered offsets of attention, conv and KV-cache views."""
    out = []

    def add(name, decls, build, other=None):
        cx = symshape.Scope()
        for d in decls:
            cx.declare(d)
        stack = build(cx)
        offset, _ = stack.lower()
        # The storage the stack reads: the bottom view's row-major numel.
        idx = sorted({str(sym) for sym in offset.symbols()} - {d.split()[0] for d in decls})
        ds = decls + [f"{name_} 0..{dim}" for name_, dim in zip(idx, [str(d) for d in stack.shape])]
        sym = _sympy_symbols(sympy, ds)
        s_off = _to_sympy_named(sympy, offset, sym)
        base = str(build.base(cx))
        out.append(Question(f"view: {name}: offset >= 0", ds, str(offset), ">=", "0",
                            s_off, sympy.Integer(0)))
        out.append(Question(f"view: {name}: offset < storage", ds, str(offset), "<", base,
                            s_off, _to_sympy_named(sympy, symshape.Scope().parse("0") + build.base(cx), sym)))
        if other is not None:
            # Inductor's form of the same index, written by hand over the same indices.
            hand = cx_q(ds).parse(other)
            out.append(Question(f"view: {name}: offset == Inductor's form", ds, str(offset), "==", other,
                                s_off, _to_sympy_named(sympy, hand, sym)))

    def attention(cx):
        x = symshape.ViewStack.row_major(cx, ["b", "s", 768])
        return x.reshape("b", "s", 12, 64).permute(0, 2, 1, 3).reshape("12*b", "64*s")

    attention.base = lambda cx: cx.parse("768*b*s")

    add("attention heads", ["b 1..=64", "s 1..=4096"], attention,
        "768*s*(i0 // 12) + 768*(i1 // 64) + 64*(i0 % 12) + i1 % 64")

    def merge(cx):
        x = symshape.ViewStack.row_major(cx, ["b", 12, "s", 64])
        return x.permute(0, 2, 1, 3).reshape("b", "s", 768).reshape("b*s", 768)

    merge.base = lambda cx: cx.parse("768*b*s")
    add("attention merge", ["b 1..=64", "s 1..=4096"], merge)

    def conv(cx):
        x = symshape.ViewStack.row_major(cx, ["b", "c", "l"])
        return x.pad([(0, 0), (0, 0), (2, 0)]).unfold(2, 3, 1).permute(0, 2, 1, 3).reshape("b*l", "3*c")

    conv.base = lambda cx: cx.parse("b*c*l")
    add("causal conv1d im2col", ["b 1..=64", "c 1..=1024", "l 1..=4096"], conv)

    def kv(cx):
        x = symshape.ViewStack.row_major(cx, ["b", "t", 8, 128])
        return x.narrow(1, "p", "s").permute(0, 2, 1, 3).reshape("8*b", "s*128")

    kv.base = lambda cx: cx.parse("1024*b*t")
    add("kv-cache window", ["b 1..=64", "t 1..=8192", "p 0..=t - 1", "s 1..=t - p"], kv)

    def strided(cx):
        x = symshape.ViewStack.row_major(cx, ["n", "h", "w", "c"])
        return x[:, ::2, ::2, :].permute(0, 3, 1, 2).reshape("n*c", "((h + 1) // 2)*((w + 1) // 2)")

    strided.base = lambda cx: cx.parse("n*h*w*c")
    add("strided conv input", ["n 1..=64", "h 1..=512", "w 1..=512", "c 1..=256"], strided)
    return out


def cx_q(decls):
    cx = symshape.Scope()
    for d in decls:
        cx.declare(d)
    return cx


def _sympy_symbols(sympy, decls):
    out = {}
    for d in decls:
        name, *rest = d.split(maxsplit=1)
        positive = rest and rest[0].split("..")[0].strip() not in ("0", "")
        out[name] = sympy.Symbol(name, integer=True, **({"positive": True} if positive else {"nonnegative": True}))
    return out


def _to_sympy_named(sympy, e, symbols):
    s = symshape.to_sympy(e)
    return s.subs({v: symbols[v.name] for v in s.free_symbols if v.name in symbols})


def ask_symshape(q):
    cx = symshape.Scope()
    for d in q.decls:
        cx.declare(d)
    t = time.perf_counter()
    a = cx.simplify(cx.parse(q.lhs))
    b = cx.simplify(cx.parse(q.rhs))
    answer = cx.prove(getattr(a, OPS[q.op])(b))
    return time.perf_counter() - t, answer, cx


def ask_sympy(sympy, q):
    rel = {"<=": sympy.Le, "<": sympy.Lt, "==": sympy.Eq, ">=": sympy.Ge}[q.op]
    t = time.perf_counter()
    if q.op == "==":
        d = sympy.simplify(q.s_lhs - q.s_rhs)
        r = sympy.true if d == 0 else sympy.simplify(rel(q.s_lhs, q.s_rhs))
    else:
        r = sympy.simplify(rel(q.s_lhs, q.s_rhs))
    elapsed = time.perf_counter() - t
    answer = True if r is sympy.true else False if r is sympy.false else None
    return elapsed, answer


def brute_check(cx, q, answer, rng, tries=20):
    """A decided answer checked at random admissible bindings (never contradicted)."""
    if answer is None:
        return
    cond = cx.parse_cond(f"{q.lhs} {q.op} {q.rhs}")
    for _ in range(tries):
        env = {}
        for d in q.decls:
            name, rest = d.split(maxsplit=1)
            lo_t, hi_t = rest.split("..")
            inclusive = hi_t.startswith("=")
            hi_t = hi_t.lstrip("=")
            lo = cx.eval(cx.parse(lo_t), env) if lo_t.strip() else 0
            hi = cx.eval(cx.parse(hi_t), env)
            hi = hi if inclusive else hi - 1
            hi = min(hi, lo + 7) if rng.random() < 0.5 else hi
            env[name] = rng.randint(lo, hi)
        assert cx.eval(cond, env) == answer, (q.kind, env)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m symshape.bench", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="2,3,4,6,8,12,16,24,32,48,60",
                   help="the numbers of symbols of the generated nests")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    import sympy

    rng = random.Random(args.seed)
    # One-time costs (module state, sympy's first simplify) stay out of both sides' times.
    warm = Question("warm-up", ["n 1..=8", "i 0..n"], "(i + n) // n", "<=", "2",
                    sympy.floor((sympy.Symbol("i") + 1) / 2), sympy.Integer(2))
    ask_symshape(warm)
    ask_sympy(sympy, warm)
    questions = view_questions(sympy)
    for k in [int(v) for v in args.sizes.split(",")]:
        questions += nest_questions(sympy, k)
    print(f"symshape bench: {len(questions)} questions; sympy {sympy.__version__}, "
          f"Python {platform.python_version()}, CPU {cpu_model()}")
    print(f"{'question':58} {'sympy ms':>10} {'symshape ms':>12} {'speedup':>9}  answers (sympy/symshape)")
    ratios, decided_sympy, decided_ours, total_sympy, total_ours = [], 0, 0, 0.0, 0.0
    ratios_decided, ratios_undecided = [], []
    for q in questions:
        t_ours, a_ours, cx = ask_symshape(q)
        t_sympy, a_sympy = ask_sympy(sympy, q)
        if a_sympy is not None and a_ours is not None and a_sympy != a_ours:
            raise SystemExit(f"contradiction on {q.kind}: sympy {a_sympy}, symshape {a_ours}")
        brute_check(cx, q, a_ours, rng)
        decided_sympy += a_sympy is not None
        decided_ours += a_ours is not None
        total_sympy += t_sympy
        total_ours += t_ours
        ratios.append(t_sympy / t_ours)
        (ratios_decided if a_ours is not None else ratios_undecided).append(t_sympy / t_ours)
        label = f"{q.kind} [{len([d for d in q.decls if d.startswith('s')])}]" if q.kind.startswith("nest") else q.kind
        print(f"{label[:58]:58} {t_sympy * 1e3:10.2f} {t_ours * 1e3:12.3f} {t_sympy / t_ours:8.0f}x  {a_sympy}/{a_ours}")
    print()
    print(f"speedup per question: median {statistics.median(ratios):.0f}x, worst {min(ratios):.0f}x, "
          f"best {max(ratios):.0f}x; total time sympy {total_sympy:.2f} s, symshape {total_ours * 1e3:.1f} ms")
    for name, rs in [("symshape decides", ratios_decided), ("symshape leaves undecided", ratios_undecided)]:
        if rs:
            print(f"  questions {name} ({len(rs)}): median {statistics.median(rs):.0f}x, worst {min(rs):.0f}x")
    print(f"decided: sympy {decided_sympy} of {len(questions)}, symshape {decided_ours} of {len(questions)}; "
          "no contradiction, and every symshape answer held at random bindings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
