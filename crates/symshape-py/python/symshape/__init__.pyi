from ._symshape import (
    BoundStack as BoundStack,
    Cond as Cond,
    Error as Error,
    Expr as Expr,
    Scope as Scope,
    ViewStack as ViewStack,
    cdiv as cdiv,
    from_sympy as from_sympy,
    max as max,
    min as min,
    to_sympy as to_sympy,
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
