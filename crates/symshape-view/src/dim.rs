//! [`Dim`]: the type of a size, index or bound argument, `i64` or `Expr`; [`Size`], the
//! arithmetic and comparisons the rules written once over it compute with.

use std::fmt;
use std::hash::Hash;
use std::ops::{Add, Mul, Neg, Sub};

use symshape::{CmpOp, Cond, Expr, ExprKind};

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

/// The values of `v` when every one is a constant.
pub(crate) fn consts<D: Dim>(v: &[D]) -> Option<Vec<i64>> {
    v.iter().map(|d| d.as_const()).collect()
}

/// `v` as expressions.
pub(crate) fn exprs<D: Dim>(v: &[D]) -> Vec<Expr> {
    v.iter().map(|&d| d.into()).collect()
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

/// A size type the lowering and the core field rules compute with: `i64` or `Expr`.
///
/// The `try_` operations are `None` when an `i64` result would leave `i64`; an `Expr`
/// never overflows here (its constants are checked when the result is simplified).
pub(crate) trait Size:
    Dim + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Neg<Output = Self> + From<i64>
{
    /// `self + rhs`.
    fn try_add(self, rhs: Self) -> Option<Self>;
    /// `self * rhs`.
    fn try_mul(self, rhs: Self) -> Option<Self>;
    /// `self - rhs`.
    fn try_sub(self, rhs: Self) -> Option<Self>;
    /// `-self`.
    fn try_neg(self) -> Option<Self>;
    /// `min(max(self, lo), hi)`.
    #[must_use]
    fn clamp_to(self, lo: Self, hi: Self) -> Self {
        self.max_of(lo).min_of(hi)
    }
    /// `max(cdiv(self, n), 1)` for `self >= 0` and `n >= 1`.
    #[must_use]
    fn ceil_parts_of(self, n: Self) -> Self;
    /// `min(self, rhs)`.
    #[must_use]
    fn min_of(self, rhs: Self) -> Self;
    /// `max(self, rhs)`.
    #[must_use]
    fn max_of(self, rhs: Self) -> Self;
    /// `self // n` for `n >= 1`.
    #[must_use]
    fn floor_quot(self, n: Self) -> Self;
    /// `cdiv(self, n)` for `self >= 0` and `n >= 1`.
    #[must_use]
    fn ceil_div_by(self, n: Self) -> Self;
    /// `(self // n, self % n)` for `n >= 1`.
    fn div_mod(self, n: i64) -> (Self, Self);
    /// Whether `self` is written negative: a negative constant, or a sum whose symbol
    /// terms all have negative coefficients (`-k`, `-k - 1`, `1 - 2*k`).
    fn written_negative(self) -> bool;
    /// The size of the slice `[x:]` of an axis of size `self` (`from_end`: `x` counts
    /// from the end) in a flatter form than its clamps, where the type has one: a
    /// symbolic size keeps one flat `max` or `min` when such slices repeat.
    fn tail_count(self, x: Self, from_end: bool) -> Option<Self>;
    /// `self * r`, for a ratio `r` that may itself exceed `i64`.
    fn try_mul_ratio(self, r: usize) -> Option<Self>;
    /// A remainder by `r >= 1` that is 0 exactly when `r` divides `self` (`self % r`
    /// for `Expr`, the truncated one for `i64`, which fits).
    #[must_use]
    fn rem_ratio(self, r: usize) -> Self;
    /// `self // r`, for `r >= 1` (exact where the caller has required `r` to divide).
    #[must_use]
    fn div_ratio(self, r: usize) -> Self;
    /// The truth of a condition on sizes: `bool` for `i64`, a `Cond` on the symbols for `Expr`.
    type Truth: Truth;
    /// `self cmp rhs`.
    fn is(self, cmp: CmpOp, rhs: Self) -> Self::Truth;
    /// `self`, or the error when an `Expr` exceeds the budgets.
    ///
    /// # Errors
    /// [`symshape::Error`] from [`Expr::check`].
    fn checked(self) -> std::result::Result<Self, symshape::Error>;
}

/// A truth value that rules are written over (`bool`, [`Cond`]).
pub(crate) trait Truth: Copy {
    /// `self || rhs`.
    #[must_use]
    fn or(self, rhs: Self) -> Self;
    /// Whether every item holds.
    fn all(items: impl Iterator<Item = Self>) -> Self;
}

impl Truth for bool {
    fn or(self, rhs: bool) -> bool {
        self || rhs
    }
    fn all(mut items: impl Iterator<Item = bool>) -> bool {
        items.all(|x| x)
    }
}

impl Truth for Cond {
    fn or(self, rhs: Cond) -> Cond {
        Cond::or(self, rhs)
    }
    fn all(items: impl Iterator<Item = Cond>) -> Cond {
        Cond::all(&items.collect::<Vec<_>>())
    }
}

/// A ratio of element sizes, which may exceed `i64`, as an `i128`.
fn wide(r: usize) -> i128 {
    i128::try_from(r).unwrap_or(i128::MAX)
}

impl Size for i64 {
    fn try_add(self, rhs: i64) -> Option<i64> {
        self.checked_add(rhs)
    }
    fn try_mul(self, rhs: i64) -> Option<i64> {
        self.checked_mul(rhs)
    }
    fn try_sub(self, rhs: i64) -> Option<i64> {
        self.checked_sub(rhs)
    }
    fn try_neg(self) -> Option<i64> {
        self.checked_neg()
    }
    fn ceil_parts_of(self, n: i64) -> i64 {
        crate::concrete::ceil_div(self, n).max(1)
    }
    fn min_of(self, rhs: i64) -> i64 {
        self.min(rhs)
    }
    fn max_of(self, rhs: i64) -> i64 {
        self.max(rhs)
    }
    fn floor_quot(self, n: i64) -> i64 {
        self.div_euclid(n)
    }
    fn div_mod(self, n: i64) -> (i64, i64) {
        (self.div_euclid(n), self.rem_euclid(n))
    }
    fn ceil_div_by(self, n: i64) -> i64 {
        crate::concrete::ceil_div(self, n)
    }
    fn written_negative(self) -> bool {
        self < 0
    }
    fn tail_count(self, _: i64, _: bool) -> Option<i64> {
        None
    }
    fn try_mul_ratio(self, r: usize) -> Option<i64> {
        i128::from(self)
            .checked_mul(wide(r))
            .and_then(|p| i64::try_from(p).ok())
    }
    fn rem_ratio(self, r: usize) -> i64 {
        // |self % r| <= |self|.
        i64::try_from(i128::from(self) % wide(r)).unwrap_or(self)
    }
    fn div_ratio(self, r: usize) -> i64 {
        // |self / r| <= |self|.
        i64::try_from(i128::from(self).div_euclid(wide(r))).unwrap_or(self)
    }
    type Truth = bool;
    fn is(self, cmp: CmpOp, rhs: i64) -> bool {
        cmp.holds(self.cmp(&rhs))
    }
    fn checked(self) -> std::result::Result<i64, symshape::Error> {
        Ok(self)
    }
}

impl Size for Expr {
    fn try_add(self, rhs: Expr) -> Option<Expr> {
        Some(self + rhs)
    }
    fn try_mul(self, rhs: Expr) -> Option<Expr> {
        Some(self * rhs)
    }
    fn try_sub(self, rhs: Expr) -> Option<Expr> {
        Some(self - rhs)
    }
    fn try_neg(self) -> Option<Expr> {
        Some(-self)
    }
    fn ceil_parts_of(self, n: Expr) -> Expr {
        self.ceil_div(n).max(Expr::from(1))
    }
    fn min_of(self, rhs: Expr) -> Expr {
        self.min(rhs)
    }
    fn max_of(self, rhs: Expr) -> Expr {
        self.max(rhs)
    }
    fn floor_quot(self, n: Expr) -> Expr {
        self.floor_div(n)
    }
    fn div_mod(self, n: i64) -> (Expr, Expr) {
        (self.floor_div(n), self.floor_mod(n))
    }
    fn ceil_div_by(self, n: Expr) -> Expr {
        (self + (n - 1)).floor_div(n)
    }
    fn written_negative(self) -> bool {
        let negative = |k: &symshape::BigInt| Expr::from(k.clone()).as_i64().is_some_and(|c| c < 0);
        match self.kind() {
            ExprKind::Sum { terms, .. } => {
                !terms.is_empty() && terms.iter().all(|(_, k)| negative(k))
            }
            _ => self.as_i64().is_some_and(|c| c < 0),
        }
    }
    /// `max(d - x, 0)` with `x` subtracted inside `d` when `d` is itself a `max`
    /// (`max(a, b) - x` is `max(a - x, b - x)`); from the end, `min(-x, d)`, the last
    /// `-x` indices, flat when `d` is itself a `min`.
    fn tail_count(self, x: Expr, from_end: bool) -> Option<Expr> {
        let parts = match (self.kind(), from_end) {
            (ExprKind::Min(args), true) | (ExprKind::Max(args), false) => args,
            _ => vec![self],
        };
        let parts = parts.into_iter();
        Some(if from_end {
            parts.fold(-x, Expr::min)
        } else {
            parts.fold(Expr::from(0), |acc, a| acc.max(a - x))
        })
    }
    fn try_mul_ratio(self, r: usize) -> Option<Expr> {
        Some(self * Expr::constant(r))
    }
    fn rem_ratio(self, r: usize) -> Expr {
        self.floor_mod(Expr::constant(r))
    }
    fn div_ratio(self, r: usize) -> Expr {
        self.floor_div(Expr::constant(r))
    }
    type Truth = Cond;
    fn is(self, cmp: CmpOp, rhs: Expr) -> Cond {
        self.compare(cmp, rhs)
    }
    fn checked(self) -> std::result::Result<Expr, symshape::Error> {
        self.check()
    }
}
