//! [`View::apply`]: the one place that chooses between the exact engine and the
//! symbolic rules, and turns the derived ops (transpose, narrow, flatten, pieces,
//! ...) into the core ones on symbolic views; the symbolic engine's hooks of the
//! core-op dispatcher (`engine.rs`); the constructors that may prove.

use std::borrow::Cow;

use symshape::{Expr, Scope};

use crate::concrete::ConcreteView;
use crate::dim::{consts, exprs, Dim};
use crate::engine::Engine;
use crate::error::{fmt_list, unrepresentable, Error, Result};
use crate::guard::{Checker, Guard, GuardOp};
use crate::lower_op::Proving;
use crate::op::{const_op, Op};
use crate::symbolic;
use crate::view::{Fields, View};

/// Where an op runs ([`View::engine`]).
pub(crate) enum Route<'a> {
    /// The exact engine: a concrete view and the op with constant arguments.
    Exact(&'a ConcreteView, Cow<'a, Op<i64>>),
    /// The symbolic rules, with the op's arguments as expressions.
    Symbolic(Op<Expr>),
}

impl View {
    /// Creates a view under `cx`, validating every field.
    ///
    /// `strides` defaults to row-major strides; a zero-size view gets offset 0 and no
    /// mask; a mask covering everything is dropped.
    ///
    /// Constant fields give a concrete view (checked as [`ConcreteView::create`]
    /// checks it). A symbolic field gives a symbolic view: without `strides`,
    /// row-major placeholder strides as expressions (`[n, m, 4]` gets `[4*m, 4, 1]`);
    /// sizes and mask bounds that cannot be proven in range under `cx` become guards.
    ///
    /// # Errors
    /// As [`ConcreteView::create`]; [`Error::Guard`] for a precondition proven false.
    pub fn create<D: Dim>(
        cx: &Scope,
        shape: &[D],
        strides: Option<&[D]>,
        offset: D,
        mask: Option<&[(D, D)]>,
    ) -> Result<View> {
        let c_shape = consts(shape);
        let c_strides = strides.map(consts);
        let c_mask = mask.map(|m| {
            m.iter()
                .map(|(b, e)| Some((b.as_const()?, e.as_const()?)))
                .collect::<Option<Vec<_>>>()
        });
        if let (Some(sh), None | Some(Some(_)), Some(o), None | Some(Some(_))) =
            (&c_shape, &c_strides, offset.as_const(), &c_mask)
        {
            let st = c_strides.as_ref().and_then(Option::as_deref);
            let m = c_mask.as_ref().and_then(Option::as_deref);
            return ConcreteView::create(sh, st, o, m).map(View::from);
        }
        let strides = strides.map(exprs);
        let mask: Option<Vec<(Expr, Expr)>> =
            mask.map(|m| m.iter().map(|&(b, e)| (b.into(), e.into())).collect());
        symbolic::create(
            cx,
            &exprs(shape),
            strides.as_deref(),
            offset.into(),
            mask.as_deref(),
        )
    }

    /// A row-major view of `shape` at offset 0, the usual input of a traced model
    /// (`[n, 768]` gets strides `[768, 1]`). Sizes not provably non-negative under
    /// `cx` become guards.
    ///
    /// # Errors
    /// As [`View::create`].
    pub fn row_major<D: Dim>(cx: &Scope, shape: &[D]) -> Result<View> {
        if let Some(c) = consts(shape) {
            return View::contiguous(&c);
        }
        symbolic::create(cx, &exprs(shape), None, Expr::from(0), None)
    }

    /// The canonical form: views with the same element mapping canonicalise to the
    /// same view (see [`ConcreteView::canonical`]). On a symbolic view the rules
    /// apply where they are proven under `cx`: an axis with provably one valid
    /// index gets stride 0, a provably zero-size or provably empty view gets the
    /// concrete empty form. Binding the result and canonicalising gives the
    /// canonical form of the bound view.
    ///
    /// # Errors
    /// [`Error::Symshape`] when an expression exceeds the budgets.
    pub fn canonical(&self, cx: &Scope) -> Result<View> {
        match self.as_concrete() {
            Some(c) => Ok(View::from(c.canonical())),
            None => symbolic::canonical(cx, self),
        }
    }

    /// The number of pieces [`ViewOps::split`](crate::ViewOps::split) cuts `axis`
    /// into, as an expression: `max(cdiv(dim, size), 1)`, simplified under `cx`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis` is out of range or `size` is provably not
    /// positive.
    pub fn split_count<D: Dim>(&self, cx: &Scope, axis: usize, size: D) -> Result<Expr> {
        if let (Some(c), Some(s)) = (self.as_concrete(), size.as_const()) {
            return c.split_count(axis, s).map(Expr::from);
        }
        crate::engine::split_count(cx, self, axis, size.into())
    }

    /// Runs `op`, proving its preconditions under `cx`.
    ///
    /// On a concrete view with constant arguments this is the exact concrete op
    /// ([`ConcreteView::apply`]). Otherwise the op is applied symbolically:
    /// preconditions proven true vanish, a precondition proven false is an
    /// [`Error::Guard`], and the rest become guards of the result
    /// ([`View::guards`]). A result that is not one view (a reshape of a
    /// transpose, an index that drops a masked axis, windows that cut a mask
    /// unevenly), or whose being one view depends on values, is
    /// [`Error::NotRepresentable`]; [`ViewStack::apply`](crate::ViewStack::apply)
    /// keeps such results exact.
    ///
    /// # Errors
    /// As the concrete op; [`Error::Guard`]; [`Error::NotRepresentable`].
    pub fn apply(&self, cx: &Scope, op: &Op) -> Result<View> {
        self.apply_dim(cx, op)
    }

    /// [`View::apply`] for an op with `i64` or expression arguments: with `i64`
    /// arguments on a concrete view nothing is interned.
    ///
    /// # Errors
    /// As [`View::apply`].
    pub fn apply_dim<D: Dim>(&self, cx: &Scope, op: &Op<D>) -> Result<View> {
        op.check_rank(self.ndim(), || self.ctx())?;
        match self.engine(op) {
            Route::Exact(c, k) => c.apply(&k).map(View::from),
            Route::Symbolic(op) => crate::engine::apply(cx, self, &op),
        }
    }

    /// The engine `op` runs on over this view: the exact one when the view and the
    /// op's arguments are constants, else the symbolic rules. The one place that
    /// chooses; [`ViewStack`](crate::ViewStack) asks it of its top view.
    pub(crate) fn engine<'a, D: Dim>(&'a self, op: &'a Op<D>) -> Route<'a> {
        if let Some(c) = self.as_concrete() {
            if let Some(k) = const_op(op) {
                return Route::Exact(c, k);
            }
        }
        Route::Symbolic(op.to_expr())
    }

    fn undecided_reshape(&self, cx: &Scope, shape: &[Expr]) -> Error {
        let shape: Vec<Expr> = shape.iter().map(|&e| cx.simplify(e)).collect();
        unrepresentable(
            "reshape",
            format!(
                "whether {} reshapes to {} as one view depends on the values of the symbols; use a ViewStack, which decides it at bind time",
                self.ctx_full(),
                fmt_list(&shape)
            ),
        )
    }

    /// The axes whose size is provably 1 under `cx`: what
    /// [`Op::SqueezeProven`] removes. A framework that must keep an axis whatever
    /// its size squeezes an explicit list instead (`Op::Squeeze(Some(axes))`).
    #[must_use]
    pub fn unit_axes(&self, cx: &Scope) -> Vec<usize> {
        self.shape()
            .iter()
            .enumerate()
            .filter(|&(_, &d)| cx.prove_eq(d, Expr::from(1)).is_true())
            .map(|(a, _)| a)
            .collect()
    }
}

impl Engine for View {
    type D = Expr;
    type Cx = Scope;
    type Ck<'a> = Checker<'a>;
    type Dec<'a> = Proving<'a>;
    const EXACT: bool = false;

    fn shape(&self) -> &[Expr] {
        View::shape(self)
    }
    fn strides(&self) -> &[Expr] {
        View::strides(self)
    }
    fn offset(&self) -> Expr {
        View::offset(self)
    }
    fn mask(&self) -> Option<&[(Expr, Expr)]> {
        View::mask(self)
    }
    fn numel(&self) -> Expr {
        View::numel(self)
    }
    fn ctx(&self) -> String {
        View::ctx(self)
    }
    fn ctx_full(&self) -> String {
        View::ctx_full(self)
    }
    fn checker<'a>(cx: &'a Scope, v: &'a View, op: GuardOp) -> Checker<'a> {
        symbolic::checker(cx, op, v)
    }
    fn decider<'a>(cx: &'a Scope, ctx: &'a dyn Fn() -> String) -> Proving<'a> {
        Proving::new(cx, ctx)
    }
    fn finish(_: &'static str, f: Fields, ck: Checker<'_>) -> Result<View> {
        f.finish(ck)
    }
    fn finish_kept(f: Fields, ck: Checker<'_>) -> Result<View> {
        f.finish(ck)
    }
    fn create(cx: &Scope, shape: &[Expr], strides: &[Expr], offset: Expr) -> Result<View> {
        symbolic::create(cx, shape, Some(strides), offset, None)
    }
    fn with_guards(v: View, guards: &[Guard]) -> View {
        v.with_guards(guards)
    }
    fn reshape(cx: &Scope, v: &View, shape: &[Expr]) -> Result<View> {
        symbolic::reshape(cx, v, shape)?.ok_or_else(|| v.undecided_reshape(cx, shape))
    }
    fn drop_unit_axes(cx: &Scope, v: &View, _: &'static str, shape: &[Expr]) -> Result<View> {
        Self::reshape(cx, v, shape)
    }
    fn flat(cx: &Scope, v: &View) -> Result<View> {
        // The elements are consecutive from the offset, in row-major order.
        let (n, one) = (v.numel(), Expr::from(1));
        let flat = symbolic::create(cx, &[n], Some(&[one]), v.offset(), None)?;
        Ok(flat.with_guards(v.guards()))
    }
    fn none_valid(&self) -> bool {
        // Left to binding.
        false
    }
    fn check_gather(cx: &Scope, v: &View, op: &Op) -> Result<()> {
        crate::gather::result_shape(cx, v, op).map(drop)
    }
}
