//! [`Check`]: how a rule written once over the size type decides its preconditions,
//! at once for `i64` ([`Exact`], with the exact engine's errors) or by proof for `Expr`
//! (a [`Checker`], where an undecided comparison becomes a guard).

use symshape::{CmpOp, Cond, Expr, Proof};

use crate::concrete::{slab, Slab};
use crate::dim::Size;
use crate::error::{Error, Result};
use crate::guard::{Checker, Guard};

/// The exact decider: every size is an `i64` and every question is answered at once
/// (the [`Check`] of the field rules, and the lowering's `Decide`).
pub(crate) struct Exact;

/// The precondition checks of the core field rules.
pub(crate) trait Check<D: Size> {
    /// Whether every comparison is decided at once (`i64`).
    const EXACT: bool;
    /// Whether `lhs cmp rhs` holds (is proven).
    fn holds(&self, lhs: D, cmp: CmpOp, rhs: D) -> bool;
    /// Whether `lhs cmp rhs` fails (is refuted).
    fn refutes(&self, lhs: D, cmp: CmpOp, rhs: D) -> bool;
    /// The value of `x` when it is (simplifies to) a constant.
    fn value(&self, x: D) -> Option<i64>;
    /// Requires `lhs cmp rhs`. On `i64`, `exact` is the error when it fails; on `Expr`,
    /// a refutation is an error and an undecided comparison a guard whose text is `guard`.
    ///
    /// # Errors
    /// When the comparison fails or is refuted.
    fn require(
        &mut self,
        lhs: D,
        cmp: CmpOp,
        rhs: D,
        guard: impl FnOnce() -> String,
        exact: impl FnOnce() -> Error,
    ) -> Result<()>;
    /// The masks `[(b, e) of the window count, (b, e) of the window]` of `n` windows of
    /// `size` indices every `step` over an axis masked to `mask`, when the valid elements
    /// are one box (`i64`: the slab test of `merge.rs`); `None` when they are not, or
    /// (`Expr`) only values decide.
    fn windows_box(&self, _mask: (D, D), _n: D, _size: D, _step: D) -> Option<[(D, D); 2]> {
        None
    }
    /// A size as a result keeps it (`Expr`: simplified).
    fn settle(&self, x: D) -> D {
        x
    }
    /// The guards recorded so far (none on `i64`).
    fn pending(&self) -> &[Guard] {
        &[]
    }
    /// Whether the condition `t` holds: decided (`Expr`: proven or refuted), else the
    /// condition simplified, as text.
    ///
    /// # Errors
    /// When the condition exceeds the budgets.
    fn decide(&self, t: D::Truth) -> Result<std::result::Result<bool, String>>;
}

impl Check<i64> for Exact {
    const EXACT: bool = true;

    fn holds(&self, lhs: i64, cmp: CmpOp, rhs: i64) -> bool {
        lhs.is(cmp, rhs)
    }

    fn refutes(&self, lhs: i64, cmp: CmpOp, rhs: i64) -> bool {
        !self.holds(lhs, cmp, rhs)
    }

    fn value(&self, x: i64) -> Option<i64> {
        Some(x)
    }

    fn decide(&self, t: bool) -> Result<std::result::Result<bool, String>> {
        Ok(Ok(t))
    }

    fn require(
        &mut self,
        lhs: i64,
        cmp: CmpOp,
        rhs: i64,
        _: impl FnOnce() -> String,
        exact: impl FnOnce() -> Error,
    ) -> Result<()> {
        if self.holds(lhs, cmp, rhs) {
            Ok(())
        } else {
            Err(exact())
        }
    }

    fn windows_box(&self, (b, e): (i64, i64), n: i64, w: i64, s: i64) -> Option<[(i64, i64); 2]> {
        let wide = |v: [i64; 2]| v.map(i128::from);
        let slab = slab(&wide([s, 1]), &wide([n, w]), 0, b.into(), e.into());
        // A box lies within `0..n` and `0..w`, so its ends fit.
        let end = |x: i128| i64::try_from(x).ok();
        match slab {
            Slab::Box(r) => match r.as_slice() {
                &[(b0, e0), (b1, e1)] => Some([(end(b0)?, end(e0)?), (end(b1)?, end(e1)?)]),
                _ => None,
            },
            Slab::Empty => Some([(0, 0), (0, 0)]),
            Slab::NotBox | Slab::Unknown => None,
        }
    }
}

impl Check<Expr> for Checker<'_> {
    const EXACT: bool = false;

    fn holds(&self, lhs: Expr, cmp: CmpOp, rhs: Expr) -> bool {
        self.is(lhs, cmp, rhs)
    }

    fn refutes(&self, lhs: Expr, cmp: CmpOp, rhs: Expr) -> bool {
        self.prove_cond(lhs.compare(cmp, rhs)) == Proof::False
    }

    fn value(&self, x: Expr) -> Option<i64> {
        self.simplify(x).as_i64()
    }

    fn settle(&self, x: Expr) -> Expr {
        self.simplify(x)
    }

    fn pending(&self) -> &[Guard] {
        &self.guards
    }

    fn decide(&self, t: Cond) -> Result<std::result::Result<bool, String>> {
        let t = t.check()?;
        let text = || self.cx.simplify_cond(t).to_string();
        Ok(self.prove_cond(t).as_bool().ok_or_else(text))
    }

    fn require(
        &mut self,
        lhs: Expr,
        cmp: CmpOp,
        rhs: Expr,
        guard: impl FnOnce() -> String,
        _: impl FnOnce() -> Error,
    ) -> Result<()> {
        Checker::require(self, lhs, cmp, rhs, guard)
    }
}
