//! [`ViewStack`]: a list of views that represents any chain of view ops exactly.
//!
//! Representation invariants:
//!
//! 1. There is at least one view; the bottom view maps indices to buffer offsets.
//! 2. Every valid element of a view above maps to an offset inside
//!    `0..numel(view below)`; that offset is a row-major linear index into the view
//!    below, unflattened and mapped through it, down to the buffer.
//! 3. After every op, adjacent concrete views are merged wherever their
//!    composition is one view, and, when every view is concrete and the top has
//!    at most 2^16 elements, any run of views whose composition is one view is
//!    replaced by it. Symbolic views are merged when the merge is proven
//!    (a row-major view below, or a row-major reshape of all of it above),
//!    otherwise when the stack is bound.
//! 4. Every symbolic view's guards hold for a binding before it is used: a
//!    reshape pushed for lack of a proof carries the guard that element counts
//!    are equal, which is invariant 2 for that binding; a stack assembled with
//!    [`ViewStack::from_views`] whose fit cannot be proven carries `stack`
//!    guards (first and last element reached within the view below).

use std::fmt;

use symshape::{CmpOp, Expr, Scope};

use crate::concrete::{
    check_stacked, collapse_run, format_offsets, merge, numel_of, unravel, ConcreteView,
};
use crate::error::{invalid, Error, Result};
use crate::guard::{add_guard, Checker, Guard};
use crate::index::{const_items, IndexBound, IndexItem};
use crate::op::Op;
use crate::symbolic;
use crate::view::View;

/// A stack of views, bottom first. Ops never fail for lack of representability:
/// a reshape that is not one view pushes a row-major view on top.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ViewStack {
    views: Vec<View>,
}

impl From<View> for ViewStack {
    fn from(view: View) -> ViewStack {
        ViewStack { views: vec![view] }
    }
}

impl ViewStack {
    /// A stack of one view.
    pub fn new(view: View) -> ViewStack {
        ViewStack::from(view)
    }

    /// A stack of the given views, bottom first, kept as given (see [`ViewStack::simplify`]).
    ///
    /// Each pair of concrete views is checked now (every valid element of a view
    /// lies within the elements of the view below, invariant 2). For a pair with a
    /// symbolic view the same two comparisons (first and last element reached
    /// against `0..numel(view below)`) are proven from the declared ranges and the
    /// views' guards: one proven false is an error, one not proven becomes a
    /// `stack` guard of the upper view, so binding checks it and ops that merge
    /// the pair keep it.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `views` is empty or a concrete view reaches
    /// outside the elements of the view below; [`Error::Guard`] when a symbolic
    /// view is proven to reach outside them for every value of its symbols.
    pub fn from_views(mut views: Vec<View>) -> Result<ViewStack> {
        if views.is_empty() {
            return Err(invalid("stack", "a stack needs at least one view"));
        }
        for k in 1..views.len() {
            let (lower, upper) = (&views[k - 1], &views[k]);
            if let (Some(lower), Some(upper)) = (lower.concrete_opt(), upper.concrete_opt()) {
                check_stacked(&lower, &upper)?;
                continue;
            }
            let extra = fit_guards(lower, upper)?;
            if !extra.is_empty() {
                views[k] = views[k].clone().with_guards(&extra);
            }
        }
        Ok(ViewStack { views })
    }

    /// The views, bottom first.
    pub fn views(&self) -> &[View] {
        &self.views
    }

    /// The top view, whose shape is the stack's shape.
    pub fn top(&self) -> &View {
        // Invariant 1.
        &self.views[self.views.len() - 1]
    }

    /// The shape of the stack.
    pub fn shape(&self) -> &[Expr] {
        self.top().shape()
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.top().ndim()
    }

    fn concrete(&self, op: &'static str) -> Result<Vec<ConcreteView>> {
        self.views.iter().map(|v| v.to_concrete(op)).collect()
    }

    /// The buffer offset of element `idx`, `None` when it is invalid at any level.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `idx` is outside the shape; [`Error::Symbolic`].
    pub fn offset_of(&self, idx: &[i64]) -> Result<Option<i64>> {
        let views = self.concrete("offset_of")?;
        let mut cur = idx.to_vec();
        for (k, v) in views.iter().enumerate().rev() {
            match v.offset_of(&cur)? {
                None => return Ok(None),
                Some(o) if k == 0 => return Ok(Some(o)),
                Some(o) => cur = unravel(views[k - 1].shape(), o),
            }
        }
        Ok(None)
    }

    /// The offset of every element in row-major order, `None` for invalid ones.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a view is symbolic.
    pub fn offsets(&self) -> Result<Vec<Option<i64>>> {
        let views = self.concrete("offsets")?;
        let (top, below) = match views.split_last() {
            Some(x) => x,
            None => return Ok(Vec::new()),
        };
        // Walk down per element: the views below may be far larger than the top.
        let mut table = top.offsets();
        for v in below.iter().rev() {
            for slot in table.iter_mut() {
                if let Some(l) = *slot {
                    *slot = v.offset_of(&unravel(v.shape(), l))?;
                }
            }
        }
        Ok(table)
    }

    /// The `offsets` line: `offsets [2, 2]: 0 1 _ 3`.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a view is symbolic.
    pub fn offsets_line(&self) -> Result<String> {
        let top = self.top().to_concrete("offsets")?;
        Ok(format_offsets(top.shape(), &self.offsets()?))
    }

    /// Merges adjacent views wherever their composition is one view (and small
    /// runs of views that are one view together, see the module docs).
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a view is symbolic.
    pub fn simplify(&self) -> Result<ViewStack> {
        let mut out: Vec<ConcreteView> = Vec::with_capacity(self.views.len());
        for v in self.concrete("simplify")? {
            let mut cur = v;
            while let Some(lower) = out.last() {
                match merge(lower, &cur)? {
                    Some(m) => {
                        cur = m;
                        out.pop();
                    }
                    None => break,
                }
            }
            out.push(cur);
        }
        ViewStack {
            views: out.into_iter().map(View::from).collect(),
        }
        .merge_top(&Scope::new(), "simplify")
    }

    /// The single view equal to the whole stack, when there is one.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a view is symbolic.
    pub fn to_view(&self) -> Result<Option<View>> {
        let s = self.simplify()?;
        Ok(match s.views.len() {
            1 => s.views.into_iter().next(),
            _ => None,
        })
    }

    /// The simplified stack with every view in canonical form. A stack with a
    /// symbolic view is not merged (that happens at bind); each view gets
    /// [`View::canonical`].
    ///
    /// # Errors
    /// [`Error::Symshape`] when an expression exceeds the budgets.
    pub fn canonical(&self) -> Result<ViewStack> {
        self.canonical_in(&Scope::new())
    }

    /// [`ViewStack::canonical`] with proofs under `cx`.
    ///
    /// # Errors
    /// As [`ViewStack::canonical`].
    pub fn canonical_in(&self, cx: &Scope) -> Result<ViewStack> {
        if self.views.iter().any(|v| v.concrete_opt().is_none()) {
            let views = self
                .views
                .iter()
                .map(|v| v.canonical_in(cx))
                .collect::<Result<_>>()?;
            return Ok(ViewStack { views });
        }
        let s = self.simplify()?;
        let views = s.views.iter().map(View::canonical).collect::<Result<_>>()?;
        Ok(ViewStack { views })
    }

    /// Reshapes the top after a merge: the merge may have turned a concrete top
    /// symbolic (merged into a symbolic view below), which then reshapes
    /// symbolically.
    fn reshape_merged(&self, cx: &Scope, op: &'static str, shape: &[i64]) -> Result<ViewStack> {
        if self.top().concrete_opt().is_some() {
            return self.reshape_i64(op, shape);
        }
        let shape: Vec<Expr> = shape.iter().map(|&d| Expr::from(d)).collect();
        self.reshape_in(cx, &shape)
    }

    /// Replaces the top view by `f(top)` and merges.
    fn on_top(
        &self,
        op: &'static str,
        f: impl FnOnce(&ConcreteView) -> Result<ConcreteView>,
    ) -> Result<ViewStack> {
        let top = self.top().to_concrete(op)?;
        let mut views = self.views.clone();
        let n = views.len();
        views[n - 1] = View::from(f(&top)?);
        ViewStack { views }.merge_top(&Scope::new(), op)
    }

    /// Merges the top view downwards as far as possible; symbolic views are
    /// merged when the merge is proven under `cx` (else when the stack is bound).
    fn merge_top(mut self, cx: &Scope, op: &'static str) -> Result<ViewStack> {
        loop {
            while self.views.len() >= 2 {
                let n = self.views.len();
                let merged = match (
                    self.views[n - 2].concrete_opt(),
                    self.views[n - 1].concrete_opt(),
                ) {
                    (Some(lower), Some(upper)) => merge(&lower, &upper)?.map(View::from),
                    _ => symbolic::merge(cx, &self.views[n - 2], &self.views[n - 1])?,
                };
                match merged {
                    Some(m) => {
                        self.views.truncate(n - 2);
                        self.views.push(m);
                    }
                    None => break,
                }
            }
            if !self.collapse_small(op)? {
                return Ok(self);
            }
        }
    }

    /// Pairwise merging misses a run of three or more views that is one view
    /// together while no adjacent pair is. For small tops, evaluate the run
    /// exactly and replace the deepest run that is one view. Returns whether the
    /// stack changed.
    fn collapse_small(&mut self, op: &'static str) -> Result<bool> {
        let n = self.views.len();
        if n < 3 || self.views.iter().any(|v| v.concrete_opt().is_none()) {
            return Ok(false);
        }
        let views = self.concrete(op)?;
        let Some((level, one)) = collapse_run(&views)? else {
            return Ok(false);
        };
        self.views.truncate(level);
        self.views.push(View::from(one));
        Ok(true)
    }

    /// Reshapes; when the top view cannot be reshaped into one view, pushes a
    /// row-major view of `shape` on top.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the element counts differ; [`Error::Symbolic`].
    pub fn reshape<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<ViewStack> {
        let shape: Vec<Expr> = shape.iter().map(|&e| e.into()).collect();
        self.apply(&Scope::new(), &Op::Reshape(shape))
    }

    /// Runs `op` on the top view under `cx` (see [`View::apply`]) and merges.
    ///
    /// A symbolic reshape that is provably one view replaces the top view; when
    /// that depends on values, a row-major view of the new shape is pushed with a
    /// guard that the element counts are equal, and the merge happens at bind time.
    ///
    /// # Errors
    /// As [`View::apply`], except [`Error::NotRepresentable`].
    pub fn apply(&self, cx: &Scope, op: &Op) -> Result<ViewStack> {
        let top = self.top();
        let concrete = top.concrete_opt();
        match op {
            Op::Reshape(shape) => self.reshape_in(cx, shape),
            Op::Index(items) => match (concrete, const_items(items)) {
                (Some(c), Some(items)) => {
                    let (kept, shape) = c.index_keepdims(&items)?;
                    self.on_top("index", |_| Ok(kept))?
                        .reshape_merged(cx, "index", &shape)
                }
                _ => {
                    let (kept, shape) = symbolic::index_keepdims(cx, top, items)?;
                    self.replace_top_in(cx, "index", kept)?
                        .reshape_in(cx, &shape)
                }
            },
            Op::Unfold { .. } => match top.apply(cx, op) {
                Ok(v) => self.replace_top_in(cx, "unfold", v),
                Err(Error::NotRepresentable { .. }) => {
                    // Windows over a row-major view of the top are always one view.
                    let base = View::create_in(cx, top.shape(), None, Expr::from(0), None)?;
                    let mut views = self.views.clone();
                    views.push(base.apply(cx, op)?);
                    ViewStack { views }.merge_top(cx, "unfold")
                }
                Err(e) => Err(e),
            },
            _ => {
                let v = top.apply(cx, op)?;
                self.replace_top_in(cx, op.name(), v)
            }
        }
    }

    fn replace_top(&self, op: &'static str, v: View) -> Result<ViewStack> {
        self.replace_top_in(&Scope::new(), op, v)
    }

    fn replace_top_in(&self, cx: &Scope, op: &'static str, v: View) -> Result<ViewStack> {
        let mut views = self.views.clone();
        let n = views.len();
        views[n - 1] = v;
        ViewStack { views }.merge_top(cx, op)
    }

    fn reshape_in(&self, cx: &Scope, shape: &[Expr]) -> Result<ViewStack> {
        const OP: &str = "reshape";
        let top = self.top();
        let c_shape: Option<Vec<i64>> = shape.iter().map(|e| e.as_i64()).collect();
        if let (Some(_), Some(s)) = (top.concrete_opt(), c_shape) {
            return self.reshape_i64(OP, &s);
        }
        if let Some(v) = symbolic::reshape(cx, top, shape)? {
            return self.replace_top_in(cx, OP, v);
        }
        let mut ck = Checker::new(cx, OP, &[], top.ctx());
        let (n_old, n_new): (Expr, Expr) = (
            top.shape().iter().copied().product(),
            shape.iter().copied().product(),
        );
        ck.require(n_old, CmpOp::Eq, n_new, || {
            format!(
                "element counts of {} and {} are equal",
                crate::view::fmt_list(top.shape()),
                crate::view::fmt_list(shape)
            )
        })?;
        let pushed =
            symbolic::create(cx, shape, None, Expr::from(0), None)?.with_guards(&ck.guards);
        let mut views = self.views.clone();
        views.push(pushed);
        ViewStack { views }.merge_top(cx, OP)
    }

    /// Every pending guard of the stack, bottom view first, without repeats.
    pub fn guards(&self) -> Vec<Guard> {
        let mut out = Vec::new();
        for v in &self.views {
            for g in v.guards() {
                add_guard(&mut out, g.clone());
            }
        }
        out
    }

    /// `guards: none`, or one guard per line.
    pub fn guards_text(&self) -> String {
        let gs = self.guards();
        if gs.is_empty() {
            return "guards: none".to_string();
        }
        let lines: Vec<String> = gs.iter().map(ToString::to_string).collect();
        lines.join("\n")
    }

    fn reshape_i64(&self, op: &'static str, shape: &[i64]) -> Result<ViewStack> {
        let top = self.top().to_concrete(op)?;
        match top.reshape(shape) {
            Ok(v) => self.on_top(op, |_| Ok(v)),
            Err(Error::NotRepresentable { .. }) => {
                let mut views = self.views.clone();
                views.push(View::from(ConcreteView::contiguous(shape)?));
                ViewStack { views }.merge_top(&Scope::new(), op)
            }
            Err(e) => Err(e),
        }
    }

    /// [`View::expand`] on the top view.
    ///
    /// # Errors
    /// As [`View::expand`].
    pub fn expand<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<ViewStack> {
        let shape: Vec<Expr> = shape.iter().map(|&e| e.into()).collect();
        self.apply(&Scope::new(), &Op::Expand(shape))
    }

    /// [`View::permute`] on the top view.
    ///
    /// # Errors
    /// As [`View::permute`].
    pub fn permute(&self, axes: &[usize]) -> Result<ViewStack> {
        self.apply(&Scope::new(), &Op::Permute(axes.to_vec()))
    }

    /// [`View::shrink`] on the top view.
    ///
    /// # Errors
    /// As [`View::shrink`].
    pub fn shrink<E: Into<Expr> + Copy>(&self, bounds: &[(E, E)]) -> Result<ViewStack> {
        let b = bounds.iter().map(|&(a, z)| (a.into(), z.into())).collect();
        self.apply(&Scope::new(), &Op::Shrink(b))
    }

    /// [`View::pad`] on the top view.
    ///
    /// # Errors
    /// As [`View::pad`].
    pub fn pad<E: Into<Expr> + Copy>(&self, padding: &[(E, E)]) -> Result<ViewStack> {
        let p = padding.iter().map(|&(a, z)| (a.into(), z.into())).collect();
        self.apply(&Scope::new(), &Op::Pad(p))
    }

    /// [`View::flip`] on the top view.
    ///
    /// # Errors
    /// As [`View::flip`].
    pub fn flip(&self, flags: &[bool]) -> Result<ViewStack> {
        let v = self.top().flip(flags)?;
        self.replace_top("flip", v)
    }

    /// [`View::flip_axes`] on the top view.
    ///
    /// # Errors
    /// As [`View::flip_axes`].
    pub fn flip_axes(&self, axes: &[usize]) -> Result<ViewStack> {
        self.apply(&Scope::new(), &Op::Flip(axes.to_vec()))
    }

    /// NumPy basic indexing; never fails for lack of representability.
    ///
    /// # Errors
    /// As [`View::index`], except [`Error::NotRepresentable`].
    pub fn index<B: IndexBound>(&self, items: &[IndexItem<B>]) -> Result<ViewStack> {
        if let (Some(c), Some(items)) = (self.top().concrete_opt(), const_items(items)) {
            // Constant entries on a concrete top: no expressions needed.
            let (kept, shape) = c.index_keepdims(&items)?;
            return self.on_top("index", |_| Ok(kept))?.reshape_merged(
                &Scope::new(),
                "index",
                &shape,
            );
        }
        let items = items.iter().map(|it| it.to_expr()).collect();
        self.apply(&Scope::new(), &Op::Index(items))
    }

    /// [`View::unfold`] on the top view; never fails for lack of
    /// representability (windows that cut a mask unevenly read the top view
    /// through a row-major view pushed on the stack).
    ///
    /// # Errors
    /// As [`View::unfold`], except [`Error::NotRepresentable`].
    pub fn unfold(
        &self,
        axis: usize,
        size: impl Into<Expr>,
        step: impl Into<Expr>,
    ) -> Result<ViewStack> {
        let (size, step) = (size.into(), step.into());
        self.apply(&Scope::new(), &Op::Unfold { axis, size, step })
    }

    /// [`View::diagonal`] on the top view.
    ///
    /// # Errors
    /// As [`View::diagonal`].
    pub fn diagonal(&self, offset: impl Into<Expr>, a: usize, b: usize) -> Result<ViewStack> {
        let op = Op::Diagonal {
            offset: offset.into(),
            dim1: a,
            dim2: b,
        };
        self.apply(&Scope::new(), &op)
    }

    /// [`View::split_count`] of the top view.
    ///
    /// # Errors
    /// As [`View::split_count`].
    pub fn split_count(&self, cx: &Scope, axis: usize, size: impl Into<Expr>) -> Result<Expr> {
        self.top().split_count(cx, axis, size)
    }

    /// [`View::split_piece`] on the top view.
    ///
    /// # Errors
    /// As [`View::split_piece`].
    pub fn split_piece(
        &self,
        cx: &Scope,
        axis: usize,
        size: impl Into<Expr>,
        i: impl Into<Expr>,
    ) -> Result<ViewStack> {
        let v = self.top().split_piece(cx, axis, size, i)?;
        self.replace_top("split", v)
    }

    /// [`View::split`] on the top view: one stack per piece.
    ///
    /// # Errors
    /// As [`View::split`].
    pub fn split(&self, axis: usize, size: impl Into<Expr>) -> Result<Vec<ViewStack>> {
        self.pieces("split", self.top().split(axis, size)?)
    }

    /// [`View::chunk`] on the top view: one stack per piece.
    ///
    /// # Errors
    /// As [`View::chunk`].
    pub fn chunk(&self, axis: usize, n: i64) -> Result<Vec<ViewStack>> {
        self.pieces("chunk", self.top().chunk(axis, n)?)
    }

    /// [`View::unbind`] on the top view: one stack per piece; never fails for
    /// lack of representability.
    ///
    /// # Errors
    /// As [`View::unbind`], except [`Error::NotRepresentable`].
    pub fn unbind(&self, axis: usize) -> Result<Vec<ViewStack>> {
        let top = self.top();
        let d = top.dim(axis).map_err(|_| {
            invalid(
                "unbind",
                format!(
                    "axis {axis} is out of range for {} of rank {}",
                    top.ctx(),
                    top.ndim()
                ),
            )
        })?;
        let n = match d.as_i64() {
            Some(n) if n <= crate::concrete::MAX_PIECES => n,
            Some(n) => {
                return Err(invalid(
                    "unbind",
                    format!(
                        "{n} pieces along axis {axis} of {} exceed the limit of {}",
                        top.ctx(),
                        crate::concrete::MAX_PIECES
                    ),
                ))
            }
            None => {
                return Err(Error::Symbolic {
                    op: "unbind",
                    what: "number of pieces (index with a symbolic integer for one piece)",
                    expr: d.to_string(),
                })
            }
        };
        (0..n)
            .map(|i| {
                let mut items = vec![IndexItem::<Expr>::FULL; axis];
                items.push(IndexItem::Int(Expr::from(i)));
                self.apply(&Scope::new(), &Op::Index(items))
            })
            .collect()
    }

    fn pieces(&self, op: &'static str, views: Vec<View>) -> Result<Vec<ViewStack>> {
        views.into_iter().map(|v| self.replace_top(op, v)).collect()
    }

    /// [`View::unsqueeze`] on the top view.
    ///
    /// # Errors
    /// As [`View::unsqueeze`].
    pub fn unsqueeze(&self, axis: usize) -> Result<ViewStack> {
        let v = self.top().unsqueeze(axis)?;
        self.replace_top("unsqueeze", v)
    }

    /// Removes the listed size-1 axes, or all of them for `None`.
    ///
    /// # Errors
    /// As [`View::squeeze`], except [`Error::NotRepresentable`].
    pub fn squeeze(&self, axes: Option<&[usize]>) -> Result<ViewStack> {
        if self.top().concrete_opt().is_none() {
            let cx = Scope::new();
            let (shape, guards) = self.top().squeezed_shape(&cx, axes)?;
            let mut res = self.reshape_in(&cx, &shape)?;
            if let Some(top) = res.views.pop() {
                res.views.push(top.with_guards(&guards));
            }
            return Ok(res);
        }
        let top = self.top().to_concrete("squeeze")?;
        // Validate on the top view; a masked-out scalar result is fine for a stack.
        match top.squeeze(axes) {
            Ok(v) => self.on_top("squeeze", |_| Ok(v)),
            Err(Error::NotRepresentable { .. }) => {
                let shape: Vec<i64> = match axes {
                    None => top.shape().iter().copied().filter(|&d| d != 1).collect(),
                    Some(list) => top
                        .shape()
                        .iter()
                        .enumerate()
                        .filter(|(a, _)| !list.contains(a))
                        .map(|(_, &d)| d)
                        .collect(),
                };
                self.reshape_i64("squeeze", &shape)
            }
            Err(e) => Err(e),
        }
    }

    /// [`View::swapaxes`] on the top view.
    ///
    /// # Errors
    /// As [`View::swapaxes`].
    pub fn swapaxes(&self, a: usize, b: usize) -> Result<ViewStack> {
        let v = self.top().swapaxes(a, b)?;
        self.replace_top("swapaxes", v)
    }

    /// [`View::movedim`] on the top view.
    ///
    /// # Errors
    /// As [`View::movedim`].
    pub fn movedim(&self, src: usize, dst: usize) -> Result<ViewStack> {
        let v = self.top().movedim(src, dst)?;
        self.replace_top("movedim", v)
    }

    /// [`View::broadcast_to`] on the top view.
    ///
    /// # Errors
    /// As [`View::broadcast_to`].
    pub fn broadcast_to<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<ViewStack> {
        let v = self.top().broadcast_to(shape)?;
        self.replace_top("broadcast_to", v)
    }

    /// [`View::transpose`] on the top view.
    ///
    /// # Errors
    /// As [`View::transpose`].
    pub fn transpose(&self, a: usize, b: usize) -> Result<ViewStack> {
        let v = self.top().transpose(a, b)?;
        self.replace_top("transpose", v)
    }

    /// [`View::narrow`] on the top view.
    ///
    /// # Errors
    /// As [`View::narrow`].
    pub fn narrow(
        &self,
        axis: usize,
        start: impl Into<Expr>,
        length: impl Into<Expr>,
    ) -> Result<ViewStack> {
        let v = self.top().narrow(axis, start, length)?;
        self.replace_top("narrow", v)
    }

    /// Splits `axis` into `sizes`; pushes a view when that is not one view.
    ///
    /// # Errors
    /// As [`View::unflatten`], except [`Error::NotRepresentable`].
    pub fn unflatten<E: Into<Expr> + Copy>(&self, axis: usize, sizes: &[E]) -> Result<ViewStack> {
        let exprs: Vec<Expr> = sizes.iter().map(|&e| e.into()).collect();
        if self.top().concrete_opt().is_none() || exprs.iter().any(|e| !e.is_const()) {
            let shape = self.top().unflattened_shape(axis, &exprs)?;
            return self.reshape_in(&Scope::new(), &shape);
        }
        let top = self.top().to_concrete("unflatten")?;
        let sizes: Vec<i64> = sizes
            .iter()
            .map(|&e| {
                let e: Expr = e.into();
                e.as_i64().ok_or_else(|| Error::Symbolic {
                    op: "unflatten",
                    what: "sizes",
                    expr: e.to_string(),
                })
            })
            .collect::<Result<_>>()?;
        match top.unflatten(axis, &sizes) {
            Ok(v) => self.on_top("unflatten", |_| Ok(v)),
            Err(Error::NotRepresentable { .. }) => {
                let s = top.shape();
                let mut shape = s[..axis].to_vec();
                shape.extend_from_slice(&sizes);
                shape.extend_from_slice(&s[axis + 1..]);
                self.reshape_i64("unflatten", &shape)
            }
            Err(e) => Err(e),
        }
    }

    /// Merges axes `start..=end`; pushes a view when that is not one view.
    ///
    /// # Errors
    /// As [`View::flatten`], except [`Error::NotRepresentable`].
    pub fn flatten(&self, start: usize, end: usize) -> Result<ViewStack> {
        if self.top().concrete_opt().is_none() {
            let shape = self.top().flattened_shape(start, end)?;
            return self.reshape_in(&Scope::new(), &shape);
        }
        let top = self.top().to_concrete("flatten")?;
        match top.flatten(start, end) {
            Ok(v) => self.on_top("flatten", |_| Ok(v)),
            Err(Error::NotRepresentable { .. }) => {
                let s = top.shape();
                let mut shape = s[..start].to_vec();
                shape.push(numel_of(&s[start..=end]).unwrap_or(0));
                shape.extend_from_slice(&s[end + 1..]);
                self.reshape_i64("flatten", &shape)
            }
            Err(e) => Err(e),
        }
    }
}

impl fmt::Display for ViewStack {
    /// One line per view, bottom first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.views.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

/// The guards under which every valid element of the symbolic `upper` lies within
/// the elements of `lower` (invariant 2), after proving what the declared ranges
/// and both views' guards decide. An empty `upper` reaches nothing, hence the
/// factor `min(valid elements, 1)`.
fn fit_guards(lower: &View, upper: &View) -> Result<Vec<Guard>> {
    let zero = Expr::from(0);
    let one = Expr::from(1);
    let bounds: Vec<(Expr, Expr)> = match upper.mask() {
        Some(m) => m.to_vec(),
        None => upper.shape().iter().map(|&d| (zero, d)).collect(),
    };
    let mut first = upper.offset();
    let mut last = upper.offset();
    let mut valid = one;
    for (&(b, e), &t) in bounds.iter().zip(upper.strides()) {
        first += (b * t).min((e - 1) * t);
        last += (b * t).max((e - 1) * t);
        valid *= (e - b).max(zero);
    }
    let any = valid.min(one);
    let mut known = lower.guards().to_vec();
    for g in upper.guards() {
        add_guard(&mut known, g.clone());
    }
    let cx = Scope::new();
    let mut ck = Checker::new(&cx, "stack", &known, upper.ctx());
    let below = lower.ctx();
    ck.require(any * first, CmpOp::Ge, zero, || {
        format!("first element reached is within {below}")
    })?;
    ck.require(any * (last + 1), CmpOp::Le, lower.numel(), || {
        format!("last element reached is within {below}")
    })?;
    Ok(ck.guards.split_off(known.len().min(ck.guards.len())))
}
