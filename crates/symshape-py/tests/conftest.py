"""Shared helpers: random expressions over small declared ranges, and brute force."""

import itertools
import random

import pytest

import symshape


@pytest.fixture
def rng():
    return random.Random(20261126)


def small_scope():
    """A scope with three small symbols (small enough to enumerate every binding)."""
    cx = symshape.Scope()
    syms = [cx.declare("a 0..=5"), cx.declare("b 1..=4"), cx.declare("c -3..=3")]
    return cx, syms


def bindings_of(syms):
    """Every binding of the symbols of `small_scope`."""
    ranges = {"a": range(0, 6), "b": range(1, 5), "c": range(-3, 4)}
    names = [s.symbol_name() for s in syms]
    for values in itertools.product(*(ranges[n] for n in names)):
        yield dict(zip(names, values))


def random_expr(rng, syms, depth=3):
    """A random expression of +, -, *, //, %, min, max and cdiv over `syms`."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.6:
            return rng.choice(syms)
        return syms[0] * 0 + rng.randint(-4, 6)
    a = random_expr(rng, syms, depth - 1)
    b = random_expr(rng, syms, depth - 1)
    op = rng.choice(["+", "-", "*", "//", "%", "min", "max", "cdiv", "divc", "modc"])
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("//", "%", "cdiv"):
        # A divisor that never vanishes: a positive constant, or b (declared >= 1).
        d = rng.choice([2, 3, 4, syms[1], syms[1] + 1])
        if op == "//":
            return a // d
        if op == "%":
            return a % d
        return symshape.cdiv(a, d)
    if op == "divc":
        return a // rng.choice([-3, 2, 8])
    if op == "modc":
        return a % rng.choice([-3, 2, 8])
    if op == "min":
        return symshape.min(a, b)
    return symshape.max(a, b)


def reference(e, env):
    """The value of `e` by Python's own integer arithmetic on its text.

    The text uses `//`, `%`, `min`, `max` and `cdiv`, which are Python's operators and
    builtins (plus `cdiv`), with Python's floor semantics: an independent model.
    """
    names = dict(env)
    names["cdiv"] = lambda x, y: -((-x) // y)
    names["min"] = min
    names["max"] = max
    return eval(str(e), {"__builtins__": {}}, names)
