"""prove and range against brute force over every binding: never wrong."""

import symshape
from conftest import bindings_of, random_expr, small_scope

CMPS = ["le", "lt", "eq", "ne", "ge", "gt"]


def test_range_contains_every_value(rng):
    cx, syms = small_scope()
    envs = list(bindings_of(syms))
    for _ in range(120):
        e = random_expr(rng, syms)
        lo, hi = cx.range(e)
        for env in envs:
            v = cx.eval(e, env)
            assert lo is None or lo <= v, (str(e), env, lo)
            assert hi is None or v <= hi, (str(e), env, hi)


def test_prove_is_never_wrong(rng):
    cx, syms = small_scope()
    envs = list(bindings_of(syms))
    decided = 0
    for _ in range(200):
        a, b = random_expr(rng, syms, 2), random_expr(rng, syms, 2)
        cond = getattr(a, rng.choice(CMPS))(b)
        truth = {cx.eval(cond, env) for env in envs}
        answer = cx.prove(cond)
        if answer is not None:
            decided += 1
            assert truth == {answer}, (str(cond), answer, truth)
    assert decided > 50


def test_prove_with_assumptions_is_never_wrong(rng):
    cx, syms = small_scope()
    cx.assume("a <= b")
    cx.assume(syms[2].ge(0))
    envs = [
        env
        for env in bindings_of(syms)
        if env["a"] <= env["b"] and env["c"] >= 0
    ]
    for _ in range(150):
        a, b = random_expr(rng, syms, 2), random_expr(rng, syms, 2)
        cond = getattr(a, rng.choice(CMPS))(b)
        answer = cx.prove(cond)
        if answer is not None:
            assert {cx.eval(cond, env) for env in envs} == {answer}, str(cond)


def test_index_arithmetic():
    cx = symshape.Scope()
    n = cx.declare("n 1..=4096 multiple of 8")
    m = cx.declare("m 1..=4096")
    i = cx.declare("i 0..n")
    j = cx.declare("j 0..m")
    flat = i * m + j
    assert flat // m == i and flat % m == j
    assert cx.simplify((n + 7) // 8 * 8) == n
    assert cx.prove(flat.lt(n * m)) is True
    assert cx.prove("n % 8 == 0") is True
    assert cx.prove("n == 3") is False
    assert cx.prove("m == 3") is None
    assert cx.range(flat) == (0, 16777215)
    assert cx.range(cx.declare("x")) == (0, 9223372036854775807)
    assert cx.range(cx.declare("y -inf..=inf")) == (None, None)
