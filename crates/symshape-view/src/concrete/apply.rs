//! [`ConcreteView::apply`]: one [`Op`] with constant arguments on the exact engine, and
//! the exact engine's hooks of the core-op dispatcher (`engine.rs`).

use super::ConcreteView;
use super::Selection;
use crate::check::Exact;
use crate::engine::Engine;
use crate::error::{unrepresentable, Error, Result};
use crate::guard::{Guard, GuardOp};
use crate::op::Op;
use crate::view::Fields;

impl ConcreteView {
    /// Runs `op` on the exact engine.
    ///
    /// # Errors
    /// The op's own errors, as [`ViewOps`](crate::ViewOps) documents them: [`Error::Invalid`]
    /// for malformed arguments, [`Error::NotRepresentable`] when the result is not
    /// one view (a [`ViewStack`](crate::ViewStack) keeps such results exact),
    /// [`Error::Overflow`] when a field leaves `i64`.
    ///
    /// [`Error::Invalid`]: crate::Error::Invalid
    /// [`Error::NotRepresentable`]: crate::Error::NotRepresentable
    /// [`Error::Overflow`]: crate::Error::Overflow
    pub fn apply(&self, op: &Op<i64>) -> Result<Self> {
        crate::engine::apply(&(), self, op)
    }
}

impl Engine for ConcreteView {
    type D = i64;
    type Cx = ();
    type Ck<'a> = Exact;
    type Dec<'a> = Exact;
    const EXACT: bool = true;

    fn shape(&self) -> &[i64] {
        &self.shape
    }
    fn strides(&self) -> &[i64] {
        &self.strides
    }
    fn offset(&self) -> i64 {
        self.offset
    }
    fn mask(&self) -> Option<&[(i64, i64)]> {
        self.mask.as_deref()
    }
    fn numel(&self) -> i64 {
        ConcreteView::numel(self)
    }
    fn ctx(&self) -> String {
        ConcreteView::ctx(self)
    }
    fn ctx_full(&self) -> String {
        ConcreteView::ctx(self)
    }
    fn checker(_: &(), _: &Self, _: GuardOp) -> Exact {
        Exact
    }
    fn decider(_: &(), _: &dyn Fn() -> String) -> Exact {
        Exact
    }
    fn finish(op: &'static str, f: Fields<i64>, _: Exact) -> Result<Self> {
        Self::build(op, f.shape, f.strides, f.offset, f.mask)
    }
    fn finish_kept(f: Fields<i64>, _: Exact) -> Result<Self> {
        Ok(Self::from_kept_fields(f))
    }
    fn create(_: &(), shape: &[i64], strides: &[i64], offset: i64) -> Result<Self> {
        ConcreteView::create(shape, Some(strides), offset, None)
    }
    fn with_guards(v: Self, _: &[Guard]) -> Self {
        v
    }
    fn reshape(_: &(), v: &Self, shape: &[i64]) -> Result<Self> {
        ConcreteView::reshape(v, shape)
    }
    fn drop_unit_axes(_: &(), v: &Self, op: &'static str, shape: &[i64]) -> Result<Self> {
        v.reshape(shape).map_err(|e| match e {
            Error::NotRepresentable { .. } => unrepresentable(
                op,
                format!(
                    "{} has no valid element, and a scalar view cannot be masked out; use a ViewStack",
                    v.ctx()
                ),
            ),
            other => other,
        })
    }
    fn flat(_: &(), v: &Self) -> Result<Self> {
        ConcreteView::reshape(v, &[ConcreteView::numel(v)])
    }
    fn none_valid(&self) -> bool {
        ConcreteView::numel(self) > 0 && self.is_empty()
    }
    fn check_gather(_: &(), v: &Self, op: &Op<i64>) -> Result<()> {
        Selection::of(&v.shape, op, &ConcreteView::ctx(v)).map(drop)
    }
}
