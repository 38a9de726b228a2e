//! The public [`View`]: shape, strides, offset and mask as symshape expressions.
//!
//! Representation invariants:
//!
//! 1. `strides.len() == shape.len()`, and a mask has one `(b, e)` pair per axis.
//! 2. A view whose fields are all constants and that has no pending guard
//!    satisfies every invariant of [`ConcreteView`] (it was produced by one), so
//!    converting it back never fails.
//! 3. For every binding that satisfies the guards, the bound fields satisfy the
//!    invariants of [`ConcreteView`] up to its normalisations (zero-size views,
//!    full masks), which binding applies.
//!
//! Ops on views whose fields and arguments are all constants run on the exact
//! engine in [`crate::concrete`]; the others run in [`crate::symbolic`], which
//! proves, refutes or records each precondition as a guard.

use std::fmt;

use symshape::{Expr, Scope};

use crate::concrete::{format_offsets, ConcreteView};
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::index::{const_items, IndexBound, IndexItem};
use crate::op::Op;
use crate::symbolic;

/// A strided view with an optional per-axis validity mask.
///
/// Element `idx` is valid when `b[i] <= idx[i] < e[i]` on every axis (or there is no
/// mask), and then lives at buffer offset `offset + sum(idx[i] * strides[i])`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct View {
    shape: Vec<Expr>,
    strides: Vec<Expr>,
    offset: Expr,
    mask: Option<Vec<(Expr, Expr)>>,
    guards: Vec<Guard>,
}

fn lit(v: i64) -> Expr {
    Expr::from(v)
}

/// The constant values of `args`, or a [`Error::Symbolic`] naming `op` and `what`.
fn consts<E: Into<Expr> + Copy>(
    op: &'static str,
    what: &'static str,
    args: &[E],
) -> Result<Vec<i64>> {
    args.iter().map(|&e| constant(op, what, e.into())).collect()
}

fn const_pairs<E: Into<Expr> + Copy>(
    op: &'static str,
    what: &'static str,
    args: &[(E, E)],
) -> Result<Vec<(i64, i64)>> {
    args.iter()
        .map(|&(a, b)| Ok((constant(op, what, a.into())?, constant(op, what, b.into())?)))
        .collect()
}

fn constant(op: &'static str, what: &'static str, e: Expr) -> Result<i64> {
    e.as_i64().ok_or_else(|| Error::Symbolic {
        op,
        what,
        expr: e.to_string(),
    })
}

/// `[n, 4*m, 1]`.
pub(crate) fn fmt_list(v: &[Expr]) -> String {
    let parts: Vec<String> = v.iter().map(ToString::to_string).collect();
    format!("[{}]", parts.join(", "))
}

fn into_exprs<E: Into<Expr> + Copy>(v: &[E]) -> Vec<Expr> {
    v.iter().map(|&e| e.into()).collect()
}

fn into_pairs<E: Into<Expr> + Copy>(v: &[(E, E)]) -> Vec<(Expr, Expr)> {
    v.iter().map(|&(a, b)| (a.into(), b.into())).collect()
}

fn all_const(v: &[Expr]) -> Option<Vec<i64>> {
    v.iter().map(|e| e.as_i64()).collect()
}

fn all_const_pairs(v: &[(Expr, Expr)]) -> Option<Vec<(i64, i64)>> {
    v.iter()
        .map(|(a, b)| Some((a.as_i64()?, b.as_i64()?)))
        .collect()
}

fn fmt_exprs(f: &mut fmt::Formatter<'_>, v: &[Expr]) -> fmt::Result {
    write!(f, "[")?;
    for (i, e) in v.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{e}")?;
    }
    write!(f, "]")
}

impl From<&ConcreteView> for View {
    fn from(v: &ConcreteView) -> View {
        View {
            shape: v.shape().iter().map(|&d| lit(d)).collect(),
            strides: v.strides().iter().map(|&d| lit(d)).collect(),
            offset: lit(v.offset()),
            mask: v
                .mask()
                .map(|m| m.iter().map(|&(b, e)| (lit(b), lit(e))).collect()),
            guards: Vec::new(),
        }
    }
}

impl From<ConcreteView> for View {
    fn from(v: ConcreteView) -> View {
        View::from(&v)
    }
}

impl View {
    /// Creates a view, validating every field (see [`ConcreteView::create`]).
    ///
    /// `strides` defaults to row-major strides; a zero-size view gets offset 0 and no
    /// mask; a mask covering everything is dropped.
    ///
    /// A symbolic field gives a symbolic view: without `strides`, row-major
    /// placeholder strides as expressions (`[n, m, 4]` gets `[4*m, 4, 1]`); sizes
    /// and mask bounds that cannot be proven in range become guards. Proofs use the
    /// symbols' declared ranges; [`View::create_in`] also uses a scope's assumptions.
    ///
    /// # Errors
    /// As [`ConcreteView::create`]; [`Error::Guard`] for a precondition proven false.
    pub fn create<E: Into<Expr> + Copy>(
        shape: &[E],
        strides: Option<&[E]>,
        offset: E,
        mask: Option<&[(E, E)]>,
    ) -> Result<View> {
        View::create_in(&Scope::new(), shape, strides, offset, mask)
    }

    /// [`View::create`] with proofs under `cx`.
    ///
    /// # Errors
    /// As [`View::create`].
    pub fn create_in<E: Into<Expr> + Copy>(
        cx: &Scope,
        shape: &[E],
        strides: Option<&[E]>,
        offset: E,
        mask: Option<&[(E, E)]>,
    ) -> Result<View> {
        let shape = into_exprs(shape);
        let strides = strides.map(into_exprs);
        let offset: Expr = offset.into();
        let mask = mask.map(into_pairs);
        let c_shape = all_const(&shape);
        let c_strides = strides.as_deref().map(all_const);
        let c_mask = mask.as_deref().map(all_const_pairs);
        match (c_shape, c_strides, offset.as_i64(), c_mask) {
            (Some(sh), None | Some(Some(_)), Some(o), None | Some(Some(_))) => {
                let st = strides.as_deref().and_then(all_const);
                let m = mask.as_deref().and_then(all_const_pairs);
                ConcreteView::create(&sh, st.as_deref(), o, m.as_deref()).map(View::from)
            }
            _ => symbolic::create(cx, &shape, strides.as_deref(), offset, mask.as_deref()),
        }
    }

    pub(crate) fn from_parts(
        shape: Vec<Expr>,
        strides: Vec<Expr>,
        offset: Expr,
        mask: Option<Vec<(Expr, Expr)>>,
        guards: Vec<Guard>,
    ) -> View {
        View {
            shape,
            strides,
            offset,
            mask,
            guards,
        }
    }

    pub(crate) fn with_guards(mut self, extra: &[Guard]) -> View {
        for g in extra {
            crate::guard::add_guard(&mut self.guards, g.clone());
        }
        self
    }

    /// The guards the ops that built this view recorded: preconditions that
    /// depend on the values of symbols, checked by [`View::bind`].
    pub fn guards(&self) -> &[Guard] {
        &self.guards
    }

    /// The exact engine's form when every field is a constant and no guard is pending.
    pub(crate) fn concrete_opt(&self) -> Option<ConcreteView> {
        if !self.guards.is_empty() {
            return None;
        }
        self.to_concrete("concrete").ok()
    }

    /// A row-major view of `shape` at offset 0.
    ///
    /// # Errors
    /// As [`View::create`].
    pub fn contiguous<E: Into<Expr> + Copy>(shape: &[E]) -> Result<View> {
        let shape = into_exprs(shape);
        View::create_in(&Scope::new(), &shape, None, lit(0), None)
    }

    /// The exact engine's form of this view, or [`Error::Symbolic`] naming `op`.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a field is symbolic or a guard is pending.
    pub fn to_concrete(&self, op: &'static str) -> Result<ConcreteView> {
        if let Some(g) = self.guards.first() {
            return Err(Error::Symbolic {
                op,
                what: "guard",
                expr: g.text(),
            });
        }
        let shape = consts(op, "shape", &self.shape)?;
        let strides = consts(op, "strides", &self.strides)?;
        let offset = constant(op, "offset", self.offset)?;
        let mask = self
            .mask
            .as_ref()
            .map(|m| const_pairs(op, "mask", m))
            .transpose()?;
        ConcreteView::create(&shape, Some(&strides), offset, mask.as_deref())
    }

    /// The sizes of the axes.
    pub fn shape(&self) -> &[Expr] {
        &self.shape
    }

    /// The stride of every axis (also for masked views).
    pub fn strides(&self) -> &[Expr] {
        &self.strides
    }

    /// The buffer offset of index `[0, ..., 0]`, extrapolated when it is masked.
    pub fn offset(&self) -> Expr {
        self.offset
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements, valid or not, as an expression (1 for a scalar).
    pub fn numel(&self) -> Expr {
        self.shape.iter().copied().product()
    }

    /// The size of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis >= ndim`.
    pub fn dim(&self, axis: usize) -> Result<Expr> {
        self.shape
            .get(axis)
            .copied()
            .ok_or_else(|| self.bad_axis("dim", axis))
    }

    /// The stride of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis >= ndim`.
    pub fn stride(&self, axis: usize) -> Result<Expr> {
        self.strides
            .get(axis)
            .copied()
            .ok_or_else(|| self.bad_axis("stride", axis))
    }

    fn bad_axis(&self, op: &'static str, axis: usize) -> Error {
        crate::error::invalid(
            op,
            format!(
                "axis {axis} is out of range for {} of rank {}",
                self.ctx(),
                self.ndim()
            ),
        )
    }

    /// `view [2, 3] with strides [3, 1]`, as error messages name a view.
    pub(crate) fn ctx(&self) -> String {
        let list = |v: &[Expr]| {
            let parts: Vec<String> = v.iter().map(ToString::to_string).collect();
            format!("[{}]", parts.join(", "))
        };
        format!(
            "view {} with strides {}",
            list(&self.shape),
            list(&self.strides)
        )
    }

    /// The per-axis valid ranges `[b, e)`, or `None` when every element is valid.
    pub fn mask(&self) -> Option<&[(Expr, Expr)]> {
        self.mask.as_deref()
    }

    /// Whether the fields are all constants.
    pub fn is_concrete(&self) -> bool {
        self.to_concrete("is_concrete").is_ok()
    }

    /// Whether the view is row-major at offset 0 without a mask (strides of size-1
    /// axes ignored; zero-size views are contiguous). False when a field is symbolic.
    pub fn is_c_contiguous(&self) -> bool {
        self.to_concrete("is_c_contiguous")
            .is_ok_and(|v| v.is_c_contiguous())
    }

    /// The strides when the view has no mask.
    pub fn strides_opt(&self) -> Option<&[Expr]> {
        match self.mask {
            None => Some(&self.strides),
            Some(_) => None,
        }
    }

    /// Whether [`View::strides_opt`] is `Some`.
    pub fn can_get_strides(&self) -> bool {
        self.mask.is_none()
    }

    /// Whether the view is concrete and a plain strided layout.
    pub fn is_materializable(&self) -> bool {
        self.can_get_strides() && self.is_concrete()
    }

    /// `offset + sum(idx[i] * strides[i])`, without bounds or mask checks.
    ///
    /// # Errors
    /// As [`ConcreteView::linear_index`], and [`Error::Symbolic`].
    pub fn linear_index(&self, idx: &[i64]) -> Result<i64> {
        self.to_concrete("linear_index")?.linear_index(idx)
    }

    /// Whether `idx` lies inside the shape and the mask (false on a rank mismatch or
    /// when a field is symbolic).
    pub fn is_valid(&self, idx: &[i64]) -> bool {
        self.to_concrete("is_valid").is_ok_and(|v| v.is_valid(idx))
    }

    /// The buffer offset of element `idx`, `None` when it is masked out.
    ///
    /// # Errors
    /// As [`ConcreteView::offset_of`], and [`Error::Symbolic`].
    pub fn offset_of(&self, idx: &[i64]) -> Result<Option<i64>> {
        self.to_concrete("offset_of")?.offset_of(idx)
    }

    /// The offset of every element in row-major order, `None` for masked-out ones.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a field is symbolic.
    pub fn offsets(&self) -> Result<Vec<Option<i64>>> {
        Ok(self.to_concrete("offsets")?.offsets())
    }

    /// The `offsets` line: `offsets [2, 2]: 0 1 _ 3`.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a field is symbolic.
    pub fn offsets_line(&self) -> Result<String> {
        let v = self.to_concrete("offsets")?;
        Ok(format_offsets(v.shape(), &v.offsets()))
    }

    /// The canonical form: views with the same element mapping canonicalise to the
    /// same view (see [`ConcreteView::canonical`]). On a symbolic view, the rules
    /// apply where they are proven (see [`View::canonical_in`]).
    ///
    /// # Errors
    /// [`Error::Symshape`] when an expression exceeds the budgets.
    pub fn canonical(&self) -> Result<View> {
        self.canonical_in(&Scope::new())
    }

    /// [`View::canonical`] with proofs under `cx`: an axis with provably one valid
    /// index gets stride 0, a provably zero-size or provably empty view gets the
    /// concrete empty form. Binding the result and canonicalising gives the
    /// canonical form of the bound view.
    ///
    /// # Errors
    /// [`Error::Symshape`] when an expression exceeds the budgets.
    pub fn canonical_in(&self, cx: &Scope) -> Result<View> {
        match self.concrete_opt() {
            Some(c) => Ok(View::from(c.canonical())),
            None => symbolic::canonical(cx, self),
        }
    }

    /// Reinterprets the elements in row-major order; succeeds iff the result is one view.
    ///
    /// # Errors
    /// As [`ConcreteView::reshape`], and [`Error::Symbolic`].
    pub fn reshape<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<View> {
        self.apply(&Scope::new(), &Op::Reshape(into_exprs(shape)))
    }

    /// Broadcasts size-1 axes (see [`ConcreteView::expand`]).
    ///
    /// # Errors
    /// As [`ConcreteView::expand`], and [`Error::Symbolic`].
    pub fn expand<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<View> {
        self.apply(&Scope::new(), &Op::Expand(into_exprs(shape)))
    }

    /// Reorders axes: axis `i` of the result is axis `axes[i]`.
    ///
    /// # Errors
    /// As [`ConcreteView::permute`], and [`Error::Symbolic`].
    pub fn permute(&self, axes: &[usize]) -> Result<View> {
        self.apply(&Scope::new(), &Op::Permute(axes.to_vec()))
    }

    /// Restricts every axis to `[start, end)` (see [`ConcreteView::shrink`]).
    ///
    /// # Errors
    /// As [`ConcreteView::shrink`], and [`Error::Symbolic`].
    pub fn shrink<E: Into<Expr> + Copy>(&self, bounds: &[(E, E)]) -> Result<View> {
        self.apply(&Scope::new(), &Op::Shrink(into_pairs(bounds)))
    }

    /// Adds masked-out padding `(before, after)` on every axis.
    ///
    /// # Errors
    /// As [`ConcreteView::pad`], and [`Error::Symbolic`].
    pub fn pad<E: Into<Expr> + Copy>(&self, padding: &[(E, E)]) -> Result<View> {
        self.apply(&Scope::new(), &Op::Pad(into_pairs(padding)))
    }

    /// Reverses the axes whose flag is set.
    ///
    /// # Errors
    /// As [`ConcreteView::flip`], and [`Error::Symbolic`].
    pub fn flip(&self, flags: &[bool]) -> Result<View> {
        match self.concrete_opt() {
            Some(c) => c.flip(flags).map(View::from),
            None => symbolic::flip(&Scope::new(), self, flags),
        }
    }

    /// Reverses the listed axes.
    ///
    /// # Errors
    /// As [`ConcreteView::flip_axes`], and [`Error::Symbolic`].
    pub fn flip_axes(&self, axes: &[usize]) -> Result<View> {
        self.apply(&Scope::new(), &Op::Flip(axes.to_vec()))
    }

    /// NumPy basic indexing (see [`ConcreteView::index`]); entries may be `i64`
    /// or symbolic expressions (see `docs/semantics.md` section 11 for the rules
    /// on symbolic indices, bounds and steps).
    ///
    /// # Errors
    /// As [`ConcreteView::index`], [`Error::Guard`], and [`Error::Invalid`] for a
    /// symbolic step whose sign is not provable.
    pub fn index<B: IndexBound>(&self, items: &[IndexItem<B>]) -> Result<View> {
        if let (Some(c), Some(items)) = (self.concrete_opt(), const_items(items)) {
            return c.index(&items).map(View::from);
        }
        let items = items.iter().map(|it| it.to_expr()).collect();
        self.apply(&Scope::new(), &Op::Index(items))
    }

    /// Runs `op`, proving its preconditions under `cx`.
    ///
    /// On a view whose fields are constants with constant arguments this is the
    /// exact concrete op. Otherwise the op is applied symbolically: preconditions
    /// proven true vanish, a precondition proven false is an [`Error::Guard`], and
    /// the rest become guards of the result ([`View::guards`]). A reshape (or an
    /// index that drops a masked axis, or windows along a masked axis) whose
    /// representability as one view depends on values is
    /// [`Error::NotRepresentable`]; [`ViewStack::apply`](crate::ViewStack::apply)
    /// keeps such results exact.
    ///
    /// # Errors
    /// As the concrete op; [`Error::Guard`]; [`Error::NotRepresentable`].
    pub fn apply(&self, cx: &Scope, op: &Op) -> Result<View> {
        if let Some(c) = self.concrete_opt() {
            if let Some(res) = concrete_apply(&c, op) {
                return res.map(View::from);
            }
        }
        match op {
            Op::Reshape(s) => {
                symbolic::reshape(cx, self, s)?.ok_or_else(|| self.undecided_reshape(cx, s))
            }
            Op::Expand(s) => symbolic::expand(cx, self, s),
            Op::Permute(a) => symbolic::permute(cx, self, a),
            Op::Shrink(b) => symbolic::shrink(cx, self, b),
            Op::Pad(p) => symbolic::pad(cx, self, p),
            Op::Flip(a) => symbolic::flip(cx, self, &symbolic::flags_of(self, a)?),
            Op::Index(items) => {
                let (kept, shape) = symbolic::index_keepdims(cx, self, items)?;
                symbolic::reshape(cx, &kept, &shape)?
                    .ok_or_else(|| kept.undecided_reshape(cx, &shape))
            }
            Op::Unfold { axis, size, step } => symbolic::unfold(cx, self, *axis, *size, *step)?
                .ok_or_else(|| self.undecided_unfold(cx, *axis, *size, *step)),
            Op::Diagonal { offset, dim1, dim2 } => {
                symbolic::diagonal(cx, self, *offset, *dim1, *dim2)
            }
        }
    }

    fn undecided_unfold(&self, cx: &Scope, axis: usize, size: Expr, step: Expr) -> Error {
        crate::error::unrepresentable(
            "unfold",
            format!(
                "whether windows of size {} every {} along masked axis {axis} of {} cut its mask evenly depends on the values of the symbols; use a ViewStack, which reads the masked view through a row-major one",
                cx.simplify(size),
                cx.simplify(step),
                self.ctx_full()
            ),
        )
    }

    fn undecided_reshape(&self, cx: &Scope, shape: &[Expr]) -> Error {
        let shape: Vec<Expr> = shape.iter().map(|&e| cx.simplify(e)).collect();
        crate::error::unrepresentable(
            "reshape",
            format!(
                "whether {} reshapes to {} as one view depends on the values of the symbols; use a ViewStack, which decides it at bind time",
                self.ctx_full(),
                fmt_list(&shape)
            ),
        )
    }

    /// The view as messages name it, with offset and mask when present.
    pub(crate) fn ctx_full(&self) -> String {
        let mut s = self.ctx();
        if self.offset != lit(0) {
            s.push_str(&format!(" offset {}", self.offset));
        }
        if let Some(m) = &self.mask {
            let parts: Vec<String> = m.iter().map(|(b, e)| format!("({b}, {e})")).collect();
            s.push_str(&format!(" mask [{}]", parts.join(", ")));
        }
        s
    }

    /// Removes the listed size-1 axes, or all of them for `None`.
    ///
    /// # Errors
    /// As [`ConcreteView::squeeze`], and [`Error::Symbolic`].
    pub fn squeeze(&self, axes: Option<&[usize]>) -> Result<View> {
        if let Some(c) = self.concrete_opt() {
            return c.squeeze(axes).map(View::from);
        }
        let cx = Scope::new();
        let (shape, guards) = self.squeezed_shape(&cx, axes)?;
        Ok(self.apply(&cx, &Op::Reshape(shape))?.with_guards(&guards))
    }

    /// The shape without the listed (or all provably) size-1 axes, and for
    /// `None` the guards `d != 1` of the kept axes that might be 1 (squeezing
    /// them would change the rank, which one symbolic shape cannot express).
    pub(crate) fn squeezed_shape(
        &self,
        cx: &Scope,
        axes: Option<&[usize]>,
    ) -> Result<(Vec<Expr>, Vec<Guard>)> {
        let one = |d: Expr| cx.prove_eq(d, lit(1)).is_true();
        let Some(list) = axes else {
            let mut ck = crate::guard::Checker::new(cx, "squeeze", &[], self.ctx());
            let mut shape = Vec::new();
            for (axis, &d) in self.shape.iter().enumerate() {
                if one(d) {
                    continue;
                }
                ck.require(d, symshape::CmpOp::Ne, lit(1), || {
                    format!("axis {axis} is kept, so it is not of size 1")
                })?;
                shape.push(d);
            }
            return Ok((shape, ck.guards));
        };
        for &a in list {
            let d = self.dim_for("squeeze", a)?;
            if !one(d) {
                return Err(Error::Symbolic {
                    op: "squeeze",
                    what: "size of a squeezed axis",
                    expr: d.to_string(),
                });
            }
        }
        let shape = self
            .shape
            .iter()
            .enumerate()
            .filter(|(a, _)| !list.contains(a))
            .map(|(_, &d)| d)
            .collect();
        Ok((shape, Vec::new()))
    }

    fn dim_for(&self, op: &'static str, axis: usize) -> Result<Expr> {
        self.shape
            .get(axis)
            .copied()
            .ok_or_else(|| self.bad_axis(op, axis))
    }

    /// Inserts a size-1 axis at `axis`.
    ///
    /// # Errors
    /// As [`ConcreteView::unsqueeze`], and [`Error::Symbolic`].
    pub fn unsqueeze(&self, axis: usize) -> Result<View> {
        match self.concrete_opt() {
            Some(c) => c.unsqueeze(axis).map(View::from),
            None => symbolic::unsqueeze(&Scope::new(), self, axis),
        }
    }

    /// Swaps two axes.
    ///
    /// # Errors
    /// As [`ConcreteView::swapaxes`], and [`Error::Symbolic`].
    pub fn swapaxes(&self, a: usize, b: usize) -> Result<View> {
        match self.concrete_opt() {
            Some(c) => c.swapaxes(a, b).map(View::from),
            None => self.permute_sym("swapaxes", |axes| axes.swap(a, b), a.max(b)),
        }
    }

    /// Same as [`View::swapaxes`].
    ///
    /// # Errors
    /// As [`View::swapaxes`].
    pub fn transpose(&self, a: usize, b: usize) -> Result<View> {
        match self.concrete_opt() {
            Some(c) => c.transpose(a, b).map(View::from),
            None => self.permute_sym("transpose", |axes| axes.swap(a, b), a.max(b)),
        }
    }

    /// Moves axis `src` to position `dst`.
    ///
    /// # Errors
    /// As [`ConcreteView::movedim`], and [`Error::Symbolic`].
    pub fn movedim(&self, src: usize, dst: usize) -> Result<View> {
        match self.concrete_opt() {
            Some(c) => c.movedim(src, dst).map(View::from),
            None => self.permute_sym(
                "movedim",
                |axes| {
                    let x = axes.remove(src);
                    axes.insert(dst, x);
                },
                src.max(dst),
            ),
        }
    }

    /// A permutation of the axes built by `f` from the identity, after checking
    /// that `max_axis` is in range.
    fn permute_sym(
        &self,
        op: &'static str,
        f: impl FnOnce(&mut Vec<usize>),
        max_axis: usize,
    ) -> Result<View> {
        if max_axis >= self.ndim() {
            return Err(self.bad_axis(op, max_axis));
        }
        let mut axes: Vec<usize> = (0..self.ndim()).collect();
        f(&mut axes);
        symbolic::permute(&Scope::new(), self, &axes)
    }

    /// NumPy's `broadcast_to`.
    ///
    /// # Errors
    /// As [`ConcreteView::broadcast_to`], and [`Error::Symbolic`].
    pub fn broadcast_to<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<View> {
        let shape = into_exprs(shape);
        if let (Some(c), Some(s)) = (self.concrete_opt(), all_const(&shape)) {
            return c.broadcast_to(&s).map(View::from);
        }
        let Some(lead) = shape.len().checked_sub(self.ndim()) else {
            return Err(crate::error::invalid(
                "broadcast_to",
                format!(
                    "cannot broadcast {} to {}, which has fewer axes",
                    self.ctx(),
                    fmt_list(&shape)
                ),
            ));
        };
        let cx = Scope::new();
        let mut ones = vec![lit(1); lead];
        ones.extend_from_slice(&self.shape);
        self.apply(&cx, &Op::Reshape(ones))?
            .apply(&cx, &Op::Expand(shape))
    }

    /// Restricts `axis` to `length` indices from `start`.
    ///
    /// # Errors
    /// As [`ConcreteView::narrow`], and [`Error::Symbolic`].
    pub fn narrow(
        &self,
        axis: usize,
        start: impl Into<Expr>,
        length: impl Into<Expr>,
    ) -> Result<View> {
        let (start, length): (Expr, Expr) = (start.into(), length.into());
        if let (Some(c), Some(s), Some(l)) = (self.concrete_opt(), start.as_i64(), length.as_i64())
        {
            return c.narrow(axis, s, l).map(View::from);
        }
        let bounds = self.narrow_bounds(axis, start, length)?;
        self.apply(&Scope::new(), &Op::Shrink(bounds))
    }

    /// Shrink bounds keeping `length` indices of `axis` from `start` (a negative
    /// constant `start` counts from the end).
    pub(crate) fn narrow_bounds(
        &self,
        axis: usize,
        start: Expr,
        length: Expr,
    ) -> Result<Vec<(Expr, Expr)>> {
        let d = self.dim_for("narrow", axis)?;
        let start = match start.as_i64() {
            Some(s) if s < 0 => d + s,
            _ => start,
        };
        Ok(self
            .shape
            .iter()
            .enumerate()
            .map(|(a, &x)| {
                if a == axis {
                    (start, start + length)
                } else {
                    (lit(0), x)
                }
            })
            .collect())
    }

    fn run_many(
        &self,
        op: &'static str,
        f: impl FnOnce(&ConcreteView) -> Result<Vec<ConcreteView>>,
    ) -> Result<Vec<View>> {
        Ok(f(&self.to_concrete(op)?)?
            .into_iter()
            .map(View::from)
            .collect())
    }

    /// Splits `axis` into pieces of `size` indices (the last may be smaller).
    ///
    /// On a symbolic view the number of pieces, `max(cdiv(dim, size), 1)`, must
    /// simplify to a constant; otherwise take pieces one at a time with
    /// [`View::split_piece`] and count them with [`View::split_count`].
    ///
    /// # Errors
    /// As [`ConcreteView::split`]; [`Error::Invalid`] when the number of pieces
    /// is symbolic; [`Error::Guard`].
    pub fn split(&self, axis: usize, size: impl Into<Expr>) -> Result<Vec<View>> {
        self.split_as("split", axis, size.into())
    }

    fn split_as(&self, op: &'static str, axis: usize, size: Expr) -> Result<Vec<View>> {
        if let (Some(c), Some(s)) = (self.concrete_opt(), size.as_i64()) {
            return c
                .split(axis, s)
                .map(|v| v.into_iter().map(View::from).collect());
        }
        let cx = Scope::new();
        let count = symbolic::split_count(&cx, self, axis, size)?;
        let n = match count.as_i64() {
            Some(n) if n <= crate::concrete::MAX_PIECES => n,
            _ => {
                return Err(crate::error::invalid(
                    op,
                    format!(
                        "the number of pieces {count} of axis {axis} of {} is not a constant; bind the symbols first, or take one piece at a time with split_piece({axis}, {}, i) for i below split_count",
                        self.ctx(),
                        cx.simplify(size)
                    ),
                ))
            }
        };
        (0..n)
            .map(|i| symbolic::split_piece(&cx, self, op, axis, size, lit(i)))
            .collect()
    }

    /// The number of pieces [`View::split`] cuts `axis` into, as an expression:
    /// `max(cdiv(dim, size), 1)`, simplified under `cx`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis` is out of range.
    pub fn split_count(&self, cx: &Scope, axis: usize, size: impl Into<Expr>) -> Result<Expr> {
        symbolic::split_count(cx, self, axis, size.into())
    }

    /// Piece `i` of [`View::split`], for a piece index that may be symbolic:
    /// indices `i*size .. min((i + 1)*size, dim)` of `axis`. `size >= 1` and
    /// `0 <= i < split_count` are proven, refuted or kept as guards.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis` is out of range; [`Error::Guard`].
    pub fn split_piece(
        &self,
        cx: &Scope,
        axis: usize,
        size: impl Into<Expr>,
        i: impl Into<Expr>,
    ) -> Result<View> {
        symbolic::split_piece(cx, self, "split", axis, size.into(), i.into())
    }

    /// Splits `axis` into consecutive pieces of the given sizes. Symbolic sizes
    /// are allowed (their count is the number of pieces); that they are
    /// non-negative and add up to the axis is proven or kept as a guard.
    ///
    /// # Errors
    /// As [`ConcreteView::split_sizes`], and [`Error::Guard`].
    pub fn split_sizes<E: Into<Expr> + Copy>(&self, axis: usize, sizes: &[E]) -> Result<Vec<View>> {
        let sizes = into_exprs(sizes);
        if let (Some(c), Some(s)) = (self.concrete_opt(), all_const(&sizes)) {
            return c
                .split_sizes(axis, &s)
                .map(|v| v.into_iter().map(View::from).collect());
        }
        symbolic::split_sizes(&Scope::new(), self, axis, &sizes)
    }

    /// At most `n` pieces of `ceil(dim / n)` indices. On a symbolic view, as
    /// [`View::split`] with size `max(cdiv(dim, n), 1)`.
    ///
    /// # Errors
    /// As [`ConcreteView::chunk`], and as [`View::split`].
    pub fn chunk(&self, axis: usize, n: i64) -> Result<Vec<View>> {
        if let Some(c) = self.concrete_opt() {
            return self.run_many("chunk", |_| c.chunk(axis, n));
        }
        let d = self.dim_for("chunk", axis)?;
        if n <= 0 {
            return Err(crate::error::invalid(
                "chunk",
                format!("chunk count {n} must be positive for {}", self.ctx()),
            ));
        }
        let size = Scope::new().simplify(d.ceil_div(n).max(1));
        self.split_as("chunk", axis, size)
    }

    /// One view per index of `axis`, with the axis removed. On a symbolic view
    /// the size of `axis` must be a constant; for a symbolic position, index
    /// with a symbolic integer instead.
    ///
    /// # Errors
    /// As [`ConcreteView::unbind`]; [`Error::Symbolic`] when the size of `axis`
    /// is symbolic.
    pub fn unbind(&self, axis: usize) -> Result<Vec<View>> {
        if let Some(c) = self.concrete_opt() {
            return self.run_many("unbind", |_| c.unbind(axis));
        }
        let d = self.dim_for("unbind", axis)?;
        let n = match d.as_i64() {
            Some(n) if n <= crate::concrete::MAX_PIECES => n,
            _ => {
                return Err(Error::Symbolic {
                    op: "unbind",
                    what: "number of pieces (index with a symbolic integer for one piece)",
                    expr: d.to_string(),
                })
            }
        };
        let mut items = vec![IndexItem::<Expr>::FULL; axis];
        items.push(IndexItem::Int(lit(0)));
        (0..n)
            .map(|i| {
                if let Some(last) = items.last_mut() {
                    *last = IndexItem::Int(lit(i));
                }
                self.apply(&Scope::new(), &Op::Index(items.clone()))
            })
            .collect()
    }

    /// Sliding windows of `size` every `step` along `axis`, appended as the last
    /// axis. Symbolic sizes, steps and dimensions are allowed: `0 <= size <= dim`
    /// and `step >= 1` are proven or kept as guards.
    ///
    /// # Errors
    /// As [`ConcreteView::unfold`]; [`Error::Guard`]; [`Error::NotRepresentable`]
    /// when `axis` is masked and the cut of its mask depends on the symbols.
    pub fn unfold(
        &self,
        axis: usize,
        size: impl Into<Expr>,
        step: impl Into<Expr>,
    ) -> Result<View> {
        let (size, step) = (size.into(), step.into());
        self.apply(&Scope::new(), &Op::Unfold { axis, size, step })
    }

    /// The diagonal of axes `a` and `b`, shifted by `offset`, appended last. A
    /// symbolic offset needs a known sign (as a symbolic index does).
    ///
    /// # Errors
    /// As [`ConcreteView::diagonal`], and [`Error::Guard`].
    pub fn diagonal(&self, offset: impl Into<Expr>, a: usize, b: usize) -> Result<View> {
        let op = Op::Diagonal {
            offset: offset.into(),
            dim1: a,
            dim2: b,
        };
        self.apply(&Scope::new(), &op)
    }

    /// Merges axes `start..=end` into one.
    ///
    /// # Errors
    /// As [`ConcreteView::flatten`], and [`Error::Symbolic`].
    pub fn flatten(&self, start: usize, end: usize) -> Result<View> {
        if let Some(c) = self.concrete_opt() {
            return c.flatten(start, end).map(View::from);
        }
        let shape = self.flattened_shape(start, end)?;
        self.apply(&Scope::new(), &Op::Reshape(shape))
    }

    pub(crate) fn flattened_shape(&self, start: usize, end: usize) -> Result<Vec<Expr>> {
        if start > end || end >= self.ndim() {
            return Err(crate::error::invalid(
                "flatten",
                format!(
                    "axes {start}..={end} are not a range of axes of {} of rank {}",
                    self.ctx(),
                    self.ndim()
                ),
            ));
        }
        let mut shape = self.shape[..start].to_vec();
        shape.push(self.shape[start..=end].iter().copied().product());
        shape.extend_from_slice(&self.shape[end + 1..]);
        Ok(shape)
    }

    /// Splits `axis` into `sizes`.
    ///
    /// # Errors
    /// As [`ConcreteView::unflatten`], and [`Error::Symbolic`].
    pub fn unflatten<E: Into<Expr> + Copy>(&self, axis: usize, sizes: &[E]) -> Result<View> {
        let sizes = into_exprs(sizes);
        if let (Some(c), Some(s)) = (self.concrete_opt(), all_const(&sizes)) {
            return c.unflatten(axis, &s).map(View::from);
        }
        let shape = self.unflattened_shape(axis, &sizes)?;
        self.apply(&Scope::new(), &Op::Reshape(shape))
    }

    pub(crate) fn unflattened_shape(&self, axis: usize, sizes: &[Expr]) -> Result<Vec<Expr>> {
        self.dim_for("unflatten", axis)?;
        let mut shape = self.shape[..axis].to_vec();
        shape.extend_from_slice(sizes);
        shape.extend_from_slice(&self.shape[axis + 1..]);
        Ok(shape)
    }

    /// NumPy's `as_strided`, checked against a buffer of `buffer_len` elements.
    ///
    /// # Errors
    /// As [`ConcreteView::as_strided`].
    pub fn as_strided(
        shape: &[i64],
        strides: &[i64],
        offset: i64,
        buffer_len: i64,
    ) -> Result<View> {
        ConcreteView::as_strided(shape, strides, offset, buffer_len).map(View::from)
    }
}

impl fmt::Display for View {
    /// `view shape=[2, 3] strides=[3, 1] offset=0 mask=none`, or `mask=[(0, 2), (1, 3)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "view shape=")?;
        fmt_exprs(f, &self.shape)?;
        write!(f, " strides=")?;
        fmt_exprs(f, &self.strides)?;
        write!(f, " offset={} mask=", self.offset)?;
        match &self.mask {
            None => write!(f, "none"),
            Some(m) => {
                write!(f, "[")?;
                for (i, (b, e)) in m.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "({b}, {e})")?;
                }
                write!(f, "]")
            }
        }
    }
}

/// The concrete op when every argument is a constant, else `None`.
fn concrete_apply(v: &ConcreteView, op: &Op) -> Option<Result<ConcreteView>> {
    Some(match op {
        Op::Reshape(s) => v.reshape(&all_const(s)?),
        Op::Expand(s) => v.expand(&all_const(s)?),
        Op::Permute(a) => v.permute(a),
        Op::Shrink(b) => v.shrink(&all_const_pairs(b)?),
        Op::Pad(p) => v.pad(&all_const_pairs(p)?),
        Op::Flip(a) => v.flip_axes(a),
        Op::Index(items) => v.index(&const_items(items)?),
        Op::Unfold { axis, size, step } => v.unfold(*axis, size.as_i64()?, step.as_i64()?),
        Op::Diagonal { offset, dim1, dim2 } => v.diagonal(offset.as_i64()?, *dim1, *dim2),
    })
}
