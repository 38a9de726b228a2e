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
//!    replaced by it (both decisions are remembered per thread, so a chain that
//!    revisits a pair decides it once). Symbolic views are merged when the merge
//!    is proven (a row-major view below, or a row-major reshape of all of it
//!    above), otherwise when the stack is bound.
//! 4. Every symbolic view's guards hold for a binding before it is used: a
//!    reshape pushed for lack of a proof carries the guard that element counts
//!    are equal, which is invariant 2 for that binding; a stack assembled with
//!    [`ViewStack::from_views`] whose fit cannot be proven carries `stack`
//!    guards (first and last element reached within the view below).
//! 5. A copy starts a new storage: the level a copy pushed ([`ViewStack::storage_level`])
//!    reads the copy's buffer, the elements of the levels below in row-major order, so
//!    its offsets are positions in that buffer. No merge crosses it: ops after a copy
//!    compose with the copy's row-major layout, and the levels from it up
//!    ([`ViewStack::on_storage`]) are what NumPy's memory model (flags, byte layout,
//!    `as_strided`, `view`, sharing) answers for. Binding merges across it, since a copy
//!    holds the elements it copied and reading them through it or directly is the same.
//!
//! A symbolic op's result is a function of the scope's state, the stack and the op, so
//! [`ViewStack::apply`] remembers it per thread under the scope's
//! [`generation`](symshape::Scope::generation): a traced model that repeats an op on equal
//! stacks in every layer computes it once.

use std::convert::Infallible;
use std::fmt;

use symshape::{CmpOp, Expr, Scope};

use crate::check::Exact;
use crate::concrete::{
    check_stacked, merge_down, merge_last_pairs, ConcreteStack, ConcreteView, Equivalent, Memo,
    MEMO_CAPACITY,
};
use crate::dim::{exprs, Dim};
use crate::dispatch::Route;
use crate::engine::{view_or_copy, Engine};
use crate::error::{fmt_list, invalid, Error, Result};
use crate::fields::fit_within;
use crate::guard::{add_guards, Checker, Guard, GuardOp};
use crate::lower_op::{lower, Lowering, Proving};
use crate::op::{CopyOp, Op};
use crate::symbolic;
use crate::view::View;

/// Tallest stack whose op results are remembered.
const MAX_REMEMBERED_VIEWS: usize = 16;

thread_local! {
    /// What a symbolic op returned (its errors included) for (scope generation, stack, op).
    static APPLIED: Memo<(u64, ViewStack, Op), Result<ViewStack>> = Memo::new(MEMO_CAPACITY);
}

/// A key of [`APPLIED`], borrowed: looks a result up without copying the stack and the op
/// (it hashes as the owned key does: a tuple hashes its fields in order, a reference as
/// what it points to).
#[derive(Hash)]
struct Applied<'a>(u64, &'a ViewStack, &'a Op);

impl Equivalent<(u64, ViewStack, Op)> for Applied<'_> {
    fn equivalent(&self, key: &(u64, ViewStack, Op)) -> bool {
        self.0 == key.0 && *self.1 == key.1 && *self.2 == key.2
    }
}

/// A stack of views, bottom first. Ops never fail for lack of representability:
/// a reshape that is not one view pushes a row-major view on top.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ViewStack {
    views: Vec<View>,
    /// The first level that reads the stack's storage (invariant 5): 0, or the level the
    /// last copy pushed; always below `views.len()`.
    storage: usize,
}

impl From<View> for ViewStack {
    fn from(view: View) -> ViewStack {
        ViewStack {
            views: vec![view],
            storage: 0,
        }
    }
}

impl From<ConcreteView> for ViewStack {
    fn from(view: ConcreteView) -> ViewStack {
        ViewStack::from(View::from(view))
    }
}

impl From<ConcreteStack> for ViewStack {
    fn from(stack: ConcreteStack) -> ViewStack {
        ViewStack {
            views: stack.into_levels().into_iter().map(View::from).collect(),
            storage: 0,
        }
    }
}

impl ViewStack {
    /// A stack of one view.
    pub fn new(view: View) -> ViewStack {
        ViewStack::from(view)
    }

    /// A stack of the given views, bottom first, kept as given (not merged).
    ///
    /// Each pair of concrete views is checked now (every valid element of a view
    /// lies within the elements of the view below, invariant 2). For a pair with a
    /// symbolic view the same two comparisons (first and last element reached
    /// against `0..numel(view below)`) are proven under `cx` and the views'
    /// guards: one proven false is an error, one not proven becomes a `stack`
    /// guard of the upper view, so binding checks it and ops that merge the pair
    /// keep it.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `views` is empty or a concrete view reaches
    /// outside the elements of the view below; [`Error::Guard`] when a symbolic
    /// view is proven to reach outside them for every value of its symbols.
    pub fn from_views(cx: &Scope, mut views: Vec<View>) -> Result<ViewStack> {
        if views.is_empty() {
            return Err(invalid("stack", "a stack needs at least one view"));
        }
        for k in 1..views.len() {
            let (lower, upper) = (&views[k - 1], &views[k]);
            if let (Some(lower), Some(upper)) = (lower.as_concrete(), upper.as_concrete()) {
                check_stacked(lower, upper)?;
                continue;
            }
            // The rule `fields::fit_within`, proven under `cx` and both views' guards; what
            // is not proven becomes guards (a refutation is a guard error, never `outside`).
            let mut known = lower.guards().to_vec();
            add_guards(&mut known, upper.guards().iter().cloned());
            let mut ck = Checker::new(cx, GuardOp::STACK, &known, upper.ctx());
            let (f, outside) = (upper.fields(), || invalid("stack", "refuted"));
            let (at, bounds) = ((f.offset, f.strides.as_slice()), f.bounds().into_iter());
            fit_within(&mut ck, at, bounds, lower.numel(), &|| lower.ctx(), outside)?;
            let extra = ck.guards.split_off(known.len().min(ck.guards.len()));
            if !extra.is_empty() {
                views[k] = views[k].clone().with_guards(&extra);
            }
        }
        Ok(ViewStack { views, storage: 0 })
    }

    /// The same stack with a copy recorded at `level` (invariant 5): the views from
    /// `level` up read a copy of the views below it (as [`Op::Copy`] pushes one), and no
    /// op merges across it. `level` 0 records nothing.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `level` is not a level of the stack, or is below the copy
    /// already recorded.
    pub fn with_copy_at(mut self, level: usize) -> Result<ViewStack> {
        if level >= self.views.len() {
            return Err(invalid(
                "stack",
                format!(
                    "a copy at level {level} is not a level of a stack of {} views (levels 0 to {})",
                    self.views.len(),
                    self.views.len() - 1
                ),
            ));
        }
        if level < self.storage {
            return Err(invalid(
                "stack",
                format!(
                    "a copy at level {level} is below the copy already at level {}",
                    self.storage
                ),
            ));
        }
        self.storage = level;
        Ok(self)
    }

    /// The first level that reads the stack's storage: the level the last copy
    /// ([`Op::Copy`], [`Op::FlattenCopy`], [`Op::AsType`] that copies, [`Op::Contiguous`]
    /// and [`Op::Ravel`] that copy) pushed, or 0 when nothing was copied. The levels
    /// below it are what was copied.
    #[must_use]
    pub fn storage_level(&self) -> usize {
        self.storage
    }

    /// The levels that read the stack's storage, as a stack of their own over its
    /// buffer: the whole stack when nothing was copied, else the levels from
    /// [`ViewStack::storage_level`] up, whose bottom view's offsets are positions in
    /// the copy (the elements of the levels below, in row-major order). NumPy's memory
    /// model answers for it: flags, byte layout, `shares_memory` with another view of
    /// the same copy.
    #[must_use]
    pub fn on_storage(&self) -> ViewStack {
        ViewStack {
            views: self.views[self.storage..].to_vec(),
            storage: 0,
        }
    }

    /// The views, bottom first.
    #[must_use]
    pub fn views(&self) -> &[View] {
        &self.views
    }

    /// The top view, whose shape is the stack's shape.
    #[must_use]
    #[inline]
    pub fn top(&self) -> &View {
        // Invariant 1.
        &self.views[self.views.len() - 1]
    }

    /// The shape of the stack.
    #[must_use]
    pub fn shape(&self) -> &[Expr] {
        self.top().shape()
    }

    /// The number of axes.
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.top().ndim()
    }

    /// The number of elements, as an expression.
    #[must_use]
    pub fn numel(&self) -> Expr {
        self.top().numel()
    }

    /// The concrete stack, when every view is concrete (constant fields, no
    /// pending guard); it is merged as far as [`ConcreteStack::new`] merges.
    ///
    /// # Errors
    /// [`Error::Symbolic`] naming `op` when a view is symbolic.
    pub fn to_concrete(&self, op: &'static str) -> Result<ConcreteStack> {
        let levels = self
            .views
            .iter()
            .map(|v| v.to_concrete(op))
            .collect::<Result<Vec<_>>>()?;
        // Invariant 2 holds already; invariant 3 merged every concrete pair.
        Ok(ConcreteStack::from_checked(levels))
    }

    /// [`Op::Ravel`] (NumPy's `ravel`) or [`Op::Contiguous`] (PyTorch's `contiguous`). The
    /// top view reads the levels below, materialized, as its storage, so the rule of one view
    /// applies to it: when it is C-contiguous (NumPy's `C_CONTIGUOUS`; proven under `cx`, for
    /// a symbolic view) it is replaced by itself flattened, or kept; otherwise the op copies:
    /// a row-major view of `[numel]`, or of the same shape, is pushed on top. Neither result
    /// is merged with the levels below, so a copy stays one level that the kernels
    /// materialize, and a second `contiguous` or `ravel` of a copy adds nothing. A copy
    /// starts a new storage (invariant 5): no later op merges across it.
    fn view_or_copy(&self, cx: &Scope, copy: CopyOp) -> Result<ViewStack> {
        let mut views = self.views.clone();
        let top = self.top();
        let view = match top.as_concrete() {
            Some(c) => view_or_copy(&(), c, copy)?.ok().map(View::from),
            None => view_or_copy(cx, top, copy)?.ok(),
        };
        let storage = match view {
            Some(x) => {
                views.pop();
                views.push(x);
                self.storage
            }
            None => {
                // From now on only the new copy's storage is observed (invariant 5): the
                // levels it copies merge as one stack again, across an earlier copy, so a
                // chain of copies does not grow the stack.
                views = ViewStack { views, storage: 0 }.merge_top(cx)?.views;
                views.push(View::row_major(
                    cx,
                    &copy.shape(self.shape(), self.numel()),
                )?);
                views.len() - 1
            }
        };
        ViewStack::from_views(cx, views)?.with_copy_at(storage)
    }

    /// A gather ([`Op::Take`], [`Op::Compress`], [`Op::BooleanMask`]): a new stack of one
    /// row-major view of the result's shape over the fresh buffer the kernels fill
    /// (`symshape_kernels::gather`), holding the guards of this stack and the op's.
    fn gather(&self, cx: &Scope, op: &Op) -> Result<ViewStack> {
        let (shape, extra) = crate::gather::result_shape(cx, self.top(), op)?;
        let mut guards = self.guards();
        add_guards(&mut guards, extra);
        Ok(ViewStack::new(
            View::row_major(cx, &shape)?.with_guards(&guards),
        ))
    }

    /// [`Op::AsStrided`] on a stack of several views: the top view's storage is the view
    /// below it (`numel` elements), which the new top view reads.
    fn as_strided_over(&self, cx: &Scope, lower: &View, op: &Op) -> Result<ViewStack> {
        let Op::AsStrided {
            shape,
            strides,
            offset,
        } = op
        else {
            return Ok(self.clone());
        };
        let what = || {
            format!(
                "the storage of the top view, which is the view below it, {}",
                lower.ctx()
            )
        };
        let top = crate::engine::as_strided(
            cx,
            self.top(),
            (shape, strides, *offset),
            Some(lower.numel()),
            &what,
        )?;
        self.replace_top(cx, top)
    }

    /// Whether `op` on this stack returns a copy (NumPy's `OWNDATA` of its result, which
    /// then owns a new buffer) rather than a view of the stack's buffer: an op that always
    /// copies ([`Op::always_copies`]: `copy`, `flatten_copy`, `take`, `compress`,
    /// `boolean_mask`, `astype` that changes the type or asks for a copy), or one the top
    /// view cannot express as one view, so that the result reads the elements through a
    /// row-major view pushed on top (`reshape`, `ravel` and `contiguous` of a view that is
    /// not laid out for it, and the same for masks).
    ///
    /// # Errors
    /// As [`ViewStack::apply`]: the op must succeed on the stack.
    pub fn copies<D: Dim>(&self, cx: &Scope, op: &Op<D>) -> Result<bool> {
        self.apply_dim(cx, op)?;
        Ok(self.top().copied_by(cx, op))
    }

    /// The single view equal to the whole stack, when there is one: a stack of
    /// one view, or a concrete stack whose views merge into one. Symbolic views
    /// merge only where that is proven under `cx`. A stack with a copy recorded
    /// ([`ViewStack::storage_level`]) is no one view of its input: `None`.
    ///
    /// # Errors
    /// [`Error::Symshape`] when an expression exceeds the budgets.
    pub fn to_view(&self, cx: &Scope) -> Result<Option<View>> {
        let merged = self.clone().merge_top(cx)?;
        Ok(match merged.views.len() {
            1 => merged.views.into_iter().next(),
            _ => None,
        })
    }

    /// The stack with every view in canonical form (see [`View::canonical`]).
    ///
    /// # Errors
    /// [`Error::Symshape`] when an expression exceeds the budgets.
    pub fn canonical(&self, cx: &Scope) -> Result<ViewStack> {
        let views = self
            .views
            .iter()
            .map(|v| v.canonical(cx))
            .collect::<Result<_>>()?;
        Ok(self.with_views(views))
    }

    /// Every pending guard of the stack, bottom view first, without repeats.
    #[must_use]
    pub fn guards(&self) -> Vec<Guard> {
        let mut out = Vec::new();
        for v in &self.views {
            add_guards(&mut out, v.guards().iter().cloned());
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

    /// Runs `op` on the top view under `cx` (see [`View::apply`]) and merges.
    ///
    /// Never fails for lack of representability: a reshape (also a flatten,
    /// unflatten or squeeze) that is not one view pushes a row-major view of the
    /// new shape on top; an index that drops a masked axis reshapes through the
    /// stack; windows that cut a mask unevenly read the top view through a
    /// row-major one. A symbolic reshape whose being one view depends on values
    /// pushes a view with a guard that the element counts are equal, and the
    /// merge happens at bind time.
    ///
    /// # Errors
    /// As [`View::apply`], except [`Error::NotRepresentable`].
    pub fn apply(&self, cx: &Scope, op: &Op) -> Result<ViewStack> {
        self.apply_dim(cx, op)
    }

    /// [`ViewStack::apply`] in place: the stack becomes the result, or is left as it was on
    /// an error. An op reads the top view and merges downwards, so on a tall stack it runs
    /// on the top two views and leaves the others where they are: its cost does not grow
    /// with the height of the stack, where [`ViewStack::apply`], which keeps `self`,
    /// copies every level. A trace that replaces its stack with each result (as the
    /// `shapetrace` runner does) is linear in its length this way.
    ///
    /// # Errors
    /// As [`ViewStack::apply`].
    pub fn apply_in_place(&mut self, cx: &Scope, op: &Op) -> Result<()> {
        let whole_stack = op.is_gather() || crate::fields::is_element_op(op);
        if self.views.len() <= 2 || whole_stack || self.views.iter().all(View::is_concrete) {
            *self = self.apply(cx, op)?;
            return Ok(());
        }
        let split = self.views.len() - 2;
        let short = ViewStack {
            views: self.views.split_off(split),
            storage: self.storage.saturating_sub(split),
        };
        match short.apply(cx, op) {
            Err(e) => {
                self.views.extend(short.views);
                Err(e)
            }
            Ok(res) => {
                // The top two merged into one view: it may merge further down.
                let collapsed = res.views.len() == 1;
                if res.storage > 0 {
                    self.storage = split + res.storage;
                }
                self.views.extend(res.views);
                if collapsed {
                    *self = self.clone().merge_top(cx)?;
                }
                Ok(())
            }
        }
    }

    /// [`ViewStack::apply`] for an op with `i64` or expression arguments: with `i64`
    /// arguments on a concrete top nothing is interned.
    ///
    /// # Errors
    /// As [`ViewStack::apply`].
    pub fn apply_dim<D: Dim>(&self, cx: &Scope, op: &Op<D>) -> Result<ViewStack> {
        op.check_rank(self.top().ndim(), || self.top().ctx())?;
        let field_op = op.is_field_op();
        if !field_op {
            if let Some(copy) = CopyOp::of(op) {
                return self.view_or_copy(cx, copy);
            }
            if op.is_gather() {
                return self.gather(cx, &op.to_expr());
            }
            if let (Op::AsStrided { .. }, [.., lower, _]) = (op, self.views.as_slice()) {
                return self.as_strided_over(cx, lower, &op.to_expr());
            }
            crate::fields::refuse_stack(op, self.views.len())?;
        }
        match self.top().engine(op) {
            Route::Exact(top, k) => {
                let ctx = || top.ctx();
                if !field_op {
                    if let Some(low) = lower(&mut Exact, top.shape(), &ctx, &k)? {
                        return self.apply_lowered(cx, &low);
                    }
                }
                self.apply_top(cx, &(), top, &k)
            }
            Route::Symbolic(op) => {
                let top = self.top();
                let ctx = || top.ctx();
                if !field_op {
                    if let Some(low) = lower(&mut Proving::new(cx, &ctx), top.shape(), &ctx, &op)? {
                        return self.apply_lowered(cx, &low);
                    }
                }
                self.apply_remembered(cx, &op)
            }
        }
    }

    /// The ops a derived op stands for, in turn, with its guards on the top view.
    fn apply_lowered<D: Dim>(&self, cx: &Scope, low: &Lowering<D>) -> Result<ViewStack> {
        let mut res = self.clone();
        for k in &low.ops {
            res = res.apply_dim(cx, k).map_err(|e| low.error(e))?;
        }
        if !low.guards.is_empty() {
            if let Some(t) = res.views.pop() {
                res.views.push(t.with_guards(&low.guards));
            }
        }
        Ok(res)
    }

    /// `apply_top` on a symbolic top, remembered per thread by the scope's generation, the
    /// stack and the op: an op is a function of those three, and a traced model repeats
    /// the same op on equal stacks in every layer.
    fn apply_remembered(&self, cx: &Scope, op: &Op) -> Result<ViewStack> {
        if self.views.len() > MAX_REMEMBERED_VIEWS {
            // Hashing a tall stack costs what it saves, and storing it costs memory.
            return self.apply_top(cx, cx, self.top(), op);
        }
        let run = || self.apply_top(cx, cx, self.top(), op);
        let key = Applied(cx.generation(), self, op);
        let own = || (key.0, self.clone(), op.clone());
        // During thread teardown the memo may be gone; the answer stands without it.
        APPLIED
            .try_with(|m| m.remembered(&key, own, || Ok::<_, Infallible>(run())))
            .map_or_else(|_| run(), |Ok(res)| res)
    }

    /// A core op on the top view, `top` on its engine (`ecx`): the new top view, an
    /// index's kept view reshaped, or, where the result is not one view, a row-major view
    /// pushed (a reshape) or read through (windows).
    fn apply_top<E: Engine>(
        &self,
        cx: &Scope,
        ecx: &E::Cx,
        top: &E,
        op: &Op<E::D>,
    ) -> Result<ViewStack>
    where
        View: From<E>,
    {
        match op {
            Op::Reshape(shape) if !E::EXACT => self.reshape_in(cx, shape),
            Op::Index(items) => {
                let (kept, shape) = crate::engine::index_keepdims(ecx, top, items)?;
                self.index_in(cx, View::from(kept), &shape)
            }
            _ => match crate::engine::apply_core(ecx, top, op) {
                Err(e @ Error::NotRepresentable { .. }) => match op {
                    Op::Unfold { .. } => self.unfold_through_row_major(cx, op),
                    Op::Reshape(shape) => self.push_row_major(cx, shape),
                    _ => Err(e),
                },
                v => self.replace_top(cx, View::from(v?)),
            },
        }
    }

    /// Indexing, once an engine has kept the integer-indexed axes of the top as size 1
    /// (`kept`): the top replaced by `kept`, then reshaped to the index's `shape`.
    fn index_in<D: Dim>(&self, cx: &Scope, kept: View, shape: &[D]) -> Result<ViewStack> {
        self.replace_top(cx, kept)?.reshape_in(cx, shape)
    }

    /// Windows over a row-major view of the top, which are always one view.
    fn unfold_through_row_major<D: Dim>(&self, cx: &Scope, op: &Op<D>) -> Result<ViewStack> {
        let base = View::row_major(cx, self.top().shape())?;
        let mut views = self.views.clone();
        views.push(base.apply_dim(cx, op)?);
        self.with_views(views).merge_top(cx)
    }

    /// Replaces the top view by `v` and merges.
    fn replace_top(&self, cx: &Scope, v: View) -> Result<ViewStack> {
        if let [_] = self.views.as_slice() {
            // One level: nothing to merge.
            return Ok(self.with_views(vec![v]));
        }
        let below = &self.views[..self.views.len() - 1];
        let mut views = Vec::with_capacity(self.views.len());
        views.extend_from_slice(below);
        views.push(v);
        self.with_views(views).merge_top(cx)
    }

    /// A stack of `views` (this stack's, with more on top) with this stack's storage.
    fn with_views(&self, views: Vec<View>) -> ViewStack {
        ViewStack {
            views,
            storage: self.storage,
        }
    }

    /// Pushes a row-major view of the constant `shape` on top and merges.
    fn push_row_major<D: Dim>(&self, cx: &Scope, shape: &[D]) -> Result<ViewStack> {
        let mut views = self.views.clone();
        views.push(View::row_major(cx, shape)?);
        self.with_views(views).merge_top(cx)
    }

    fn reshape_in<D: Dim>(&self, cx: &Scope, shape: &[D]) -> Result<ViewStack> {
        const OP: GuardOp = GuardOp::RESHAPE;
        let top = self.top();
        let op = Op::Reshape(shape.to_vec());
        let shape: Vec<Expr> = match top.engine(&op) {
            Route::Exact(c, k) => return self.apply_top(cx, &(), c, &k),
            Route::Symbolic(_) => exprs(shape),
        };
        let shape = shape.as_slice();
        if let Some(v) = symbolic::reshape(cx, top, shape)? {
            return self.replace_top(cx, v);
        }
        let mut ck = Checker::new(cx, OP, &[], top);
        let (n_old, n_new): (Expr, Expr) = (top.numel(), shape.iter().copied().product());
        ck.require(n_old, CmpOp::Eq, n_new, || {
            format!(
                "element counts of {} and {} are equal",
                fmt_list(top.shape()),
                fmt_list(shape)
            )
        })?;
        let pushed =
            symbolic::create(cx, shape, None, Expr::from(0), None)?.with_guards(&ck.guards);
        let mut views = self.views.clone();
        views.push(pushed);
        self.with_views(views).merge_top(cx)
    }

    /// Merges the top view downwards as far as possible: concrete pairs exactly
    /// (and runs of three or more, see invariant 3), symbolic pairs when the merge
    /// is proven under `cx` (else when the stack is bound). Never below the storage's
    /// first level (invariant 5).
    #[inline]
    fn merge_top(self, cx: &Scope) -> Result<ViewStack> {
        if self.views.len() < self.storage + 2 {
            return Ok(self);
        }
        self.merge_levels(cx)
    }

    /// `merge_top` on two or more levels above the storage's first.
    fn merge_levels(mut self, cx: &Scope) -> Result<ViewStack> {
        if self.views[self.storage..].iter().all(View::is_concrete) {
            // The exact engine's merge, with its memo.
            let mut levels: Vec<ConcreteView> = self.views[self.storage..]
                .iter()
                .filter_map(|v| v.as_concrete().cloned())
                .collect();
            merge_down(&mut levels)?;
            self.views.truncate(self.storage);
            self.views.extend(levels.into_iter().map(View::from));
            return Ok(self);
        }
        merge_last_pairs(&mut self.views, self.storage, |lower, upper| {
            match (lower.as_concrete(), upper.as_concrete()) {
                (Some(l), Some(u)) => Ok(crate::concrete::merge_memo(l, u)?.map(View::from)),
                _ => symbolic::merge(cx, lower, upper),
            }
        })?;
        Ok(self)
    }
}

impl fmt::Display for ViewStack {
    /// One line per view, bottom first, and a line `copy` below the storage's first
    /// level when a copy is recorded (the views above it read the copy).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.views.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            if i > 0 && i == self.storage {
                writeln!(f, "copy")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn a_borrowed_key_finds_the_applied_result() {
        let cx = Scope::new();
        let stack = ViewStack::new(View::contiguous(&[3, 4]).expect("view"));
        let op = Op::Permute(vec![1, 0]);
        let owned = (cx.generation(), stack.clone(), op.clone());
        let borrowed = Applied(cx.generation(), &stack, &op);
        let h = hashbrown::DefaultHashBuilder::default();
        assert_eq!(h.hash_one(&borrowed), h.hash_one(&owned));
        assert!(borrowed.equivalent(&owned));
        let other = Applied(cx.generation() + 1, &stack, &op);
        assert!(!other.equivalent(&owned));
        let memo = Memo::new(4);
        let first = memo.remembered(&borrowed, || owned.clone(), || Ok::<_, Infallible>(1));
        let again = memo.remembered(&borrowed, || owned.clone(), || Ok::<_, Infallible>(2));
        assert_eq!((first, again), (Ok(1), Ok(1)));
        assert!(memo.contains(&borrowed) && !memo.contains(&other));
    }
}
