"""The sympy bridge: round trips, Inductor's functions by class name, simplify vs sympy."""

import pytest

sympy = pytest.importorskip("sympy")

import symshape  # noqa: E402
from conftest import bindings_of, random_expr, small_scope  # noqa: E402


def inductor_functions():
    """Stand-ins for Inductor's functions: same class names and arguments, their meaning."""

    class FloorDiv(sympy.Function):
        @classmethod
        def eval(cls, a, b):
            if a.is_Integer and b.is_Integer:
                return sympy.Integer(int(a) // int(b))

    class CleanDiv(FloorDiv):
        pass

    class CeilDiv(sympy.Function):
        @classmethod
        def eval(cls, a, b):
            if a.is_Integer and b.is_Integer:
                return sympy.Integer(-(-int(a) // int(b)))

    class ModularIndexing(sympy.Function):
        @classmethod
        def eval(cls, x, d, m):
            if x.is_Integer and d.is_Integer and m.is_Integer:
                return sympy.Integer((int(x) // int(d)) % int(m))

    class PythonMod(sympy.Function):
        @classmethod
        def eval(cls, a, b):
            if a.is_Integer and b.is_Integer:
                return sympy.Integer(int(a) % int(b))

    return FloorDiv, CleanDiv, CeilDiv, ModularIndexing, PythonMod


def sympy_value(s, env):
    value = s.subs({sympy.Symbol(k, integer=True): v for k, v in env.items()})
    value = value.subs({sym: env[sym.name] for sym in value.free_symbols})
    assert value.is_Integer, value
    return int(value)


def test_round_trip_from_symshape(rng):
    cx, syms = small_scope()
    envs = list(bindings_of(syms))
    exact = 0
    for _ in range(150):
        e = random_expr(rng, syms)
        back = symshape.from_sympy(symshape.to_sympy(e), cx)
        if back == e:
            exact += 1
            continue
        # sympy evaluates some floors with the symbols' signs (`floor(2*b/(b + 1))` is 1
        # for a positive b): the same values, another form.
        for env in envs:
            assert cx.eval(back, env) == cx.eval(e, env), (str(e), str(back), env)
    assert exact > 130


def test_round_trip_from_sympy():
    cx = symshape.Scope()
    for name in "xyz":
        cx.declare(f"{name} 1..=64")
    x, y, z = (sympy.Symbol(n, integer=True, positive=True) for n in "xyz")
    for s in [x * y + 3 * z - 1, sympy.floor((x + y) / z), sympy.Mod(x * y, 8), sympy.Min(x, y), sympy.Max(x, y * z)]:
        assert symshape.to_sympy(symshape.from_sympy(s, cx)) == s


def test_to_sympy_values_agree(rng):
    cx, syms = small_scope()
    envs = list(bindings_of(syms))
    for _ in range(40):
        e = random_expr(rng, syms)
        s = symshape.to_sympy(e)
        for env in rng.sample(envs, 4):
            assert sympy_value(s, env) == cx.eval(e, env), (str(e), s, env)


def test_inductor_functions_by_class_name(rng):
    FloorDiv, CleanDiv, CeilDiv, ModularIndexing, PythonMod = inductor_functions()
    cx = symshape.Scope()
    x, y, z = (sympy.Symbol(n, integer=True, positive=True) for n in "xyz")
    for name in "xyz":
        cx.declare(f"{name} 1..=64")
    cases = [
        FloorDiv(x * y + z, y),
        CleanDiv(8 * x, 4),
        CeilDiv(x + 3, 4),
        ModularIndexing(x * 64 + y, 8, 8),
        PythonMod(x - 40, 7),
        sympy.Min(x, y + 1) + sympy.Max(z, 3) * 2,
        sympy.floor(x / 3) + sympy.ceiling((x + y) / 4),
        sympy.Mod(x * y, z),
        (x + 1) ** 3 - y**2,
    ]
    for s in cases:
        e = symshape.from_sympy(s, cx)
        for _ in range(20):
            env = {n: rng.randint(1, 64) for n in "xyz"}
            sub = s.subs({x: env["x"], y: env["y"], z: env["z"]})
            assert cx.eval(e, env) == int(sub), (s, env)
    assert symshape.from_sympy(FloorDiv(x * y + z, y), cx) == cx.parse("(x*y + z) // y")


def test_unknown_functions_and_rationals_are_errors():
    cx = symshape.Scope()
    cx.declare("x")
    x = sympy.Symbol("x", integer=True)

    class Where(sympy.Function):
        pass

    with pytest.raises(symshape.Error, match="unsupported function `Where`"):
        symshape.from_sympy(Where(x, 1, 2), cx)
    with pytest.raises(symshape.Error, match="is not an integer"):
        symshape.from_sympy(x / 2, cx)
    with pytest.raises(symshape.Error, match="`q` is not declared"):
        symshape.from_sympy(sympy.Symbol("q") + 1, cx)
    with pytest.raises(symshape.Error, match="integer exponent"):
        symshape.from_sympy(x ** sympy.Symbol("x"), cx)


def test_simplify_agrees_with_sympy_at_random_bindings(rng):
    cx, syms = small_scope()
    cx.assume("a <= b + 1")
    envs = [env for env in bindings_of(syms) if env["a"] <= env["b"] + 1]
    for _ in range(40):
        e = random_expr(rng, syms)
        s = cx.simplify(e)
        ours, theirs = symshape.to_sympy(e), sympy.simplify(symshape.to_sympy(s))
        for env in rng.sample(envs, 4):
            assert sympy_value(ours, env) == sympy_value(theirs, env) == cx.eval(e, env)
