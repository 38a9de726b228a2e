"""Symbolic shapes for Python tensor compilers.

Canonical interned integer expressions with exact floor semantics, three-valued proofs
(``True``, ``False`` or ``None``, never wrong), value ranges, strided views with their ops,
and kernels over NumPy arrays; ``from_sympy``/``to_sympy`` bridge to sympy and to
Inductor's ``FloorDiv``, ``ModularIndexing``, ``CleanDiv``, ``CeilDiv`` and ``PythonMod``.

>>> import symshape
>>> cx = symshape.Scope()
>>> n, m = cx.declare("n 1..=4096"), cx.declare("m 1..=4096")
>>> i, j = cx.declare("i 0..n"), cx.declare("j 0..m")
>>> (i * m + j) // m == i
True
>>> cx.prove((i * m + j).lt(n * m))
True
"""

from ._symshape import (
    BoundStack,
    Cond,
    Error,
    Expr,
    Scope,
    ViewStack,
    cdiv,
    from_sympy,
    max,
    min,
    to_sympy,
)

__all__ = [
    "BoundStack",
    "Cond",
    "Error",
    "Expr",
    "Scope",
    "ViewStack",
    "cdiv",
    "from_sympy",
    "max",
    "min",
    "to_sympy",
]
