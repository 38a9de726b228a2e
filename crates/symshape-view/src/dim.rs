//! [`Dim`]: the type of a size, index or bound argument, `i64` or `Expr`.

use std::fmt;
use std::hash::Hash;

use symshape::Expr;

/// A size, index or bound argument: an `i64` for concrete work, or a
/// [`symshape::Expr`] for symbolic work.
///
/// Implemented for `i64` and `Expr` only. An op whose arguments are `i64` runs on a
/// concrete view without touching the expression interner; both give the same
/// results on constants.
pub trait Dim:
    Copy + fmt::Debug + fmt::Display + Eq + Hash + Into<Expr> + 'static + sealed::Sealed
{
    /// The value when it is a constant.
    fn as_const(self) -> Option<i64>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i64 {}
    impl Sealed for symshape::Expr {}
}

impl Dim for i64 {
    fn as_const(self) -> Option<i64> {
        Some(self)
    }
}

impl Dim for Expr {
    fn as_const(self) -> Option<i64> {
        self.as_i64()
    }
}
