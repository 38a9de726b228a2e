//! [`View::apply`]: the one place that chooses between the exact engine and the
//! symbolic rules, and turns the derived ops (transpose, narrow, flatten, pieces,
//! ...) into the core ones on symbolic views; the constructors that may prove.

use symshape::{Expr, Scope};

use crate::concrete::ConcreteView;
use crate::dim::Dim;
use crate::error::{check_piece, invalid, unrepresentable, view_shape_refusal, Error, Result};
use crate::guard::{Guard, GuardOp};
use crate::index::IndexItem;
use crate::memory::CopyOp;
use crate::op::{const_op, sliding_windows, Op, SplitDirection};
use crate::symbolic;
use crate::view::{fmt_list, View};

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
        let consts = |v: &[D]| v.iter().map(|d| d.as_const()).collect::<Option<Vec<_>>>();
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
        let exprs = |v: &[D]| v.iter().map(|&d| d.into()).collect::<Vec<Expr>>();
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
        if let Some(c) = shape
            .iter()
            .map(|d| d.as_const())
            .collect::<Option<Vec<_>>>()
        {
            return View::contiguous(&c);
        }
        let shape: Vec<Expr> = shape.iter().map(|&d| d.into()).collect();
        symbolic::create(cx, &shape, None, Expr::from(0), None)
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
    /// [`Error::Invalid`] when `axis` is out of range.
    pub fn split_count<D: Dim>(&self, cx: &Scope, axis: usize, size: D) -> Result<Expr> {
        if let (Some(c), Some(s)) = (self.as_concrete(), size.as_const()) {
            return c.split_count(axis, s).map(Expr::from);
        }
        symbolic::split_count(cx, self, axis, size.into())
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
        if let Some(c) = self.as_concrete() {
            if let Some(k) = const_op(op) {
                return c.apply(&k).map(View::from);
            }
        }
        self.apply_symbolic(cx, &op.to_expr())
    }

    fn apply_symbolic(&self, cx: &Scope, op: &Op) -> Result<View> {
        match op {
            Op::Reshape(s) => self.reshape_symbolic(cx, s),
            Op::Expand(s) => symbolic::expand(cx, self, s),
            Op::Permute(a) => symbolic::permute(cx, self, a),
            Op::Shrink(b) => symbolic::shrink(cx, self, b),
            Op::Pad(p) => symbolic::pad(cx, self, p),
            Op::Flip(a) => symbolic::flip(cx, self, &symbolic::flags_of(self, a)?),
            Op::Index(items) => {
                let (kept, shape) = symbolic::index_keepdims(cx, self, items)?;
                kept.reshape_symbolic(cx, &shape)
            }
            Op::Select { axis, index } => {
                let items = self.select_items(*axis, *index)?;
                self.apply_symbolic(cx, &Op::Index(items))
            }
            Op::Unfold { axis, size, step } => symbolic::unfold(cx, self, *axis, *size, *step)?
                .ok_or_else(|| self.undecided_unfold(cx, *axis, *size, *step)),
            Op::Diagonal { offset, dim1, dim2 } => {
                symbolic::diagonal(cx, self, *offset, *dim1, *dim2)
            }
            Op::Squeeze(axes) => {
                let (shape, guards) = self.squeezed_shape(cx, axes.as_deref())?;
                Ok(self.reshape_symbolic(cx, &shape)?.with_guards(&guards))
            }
            Op::SqueezeProven => {
                let (shape, _) = self.squeezed_shape(cx, Some(&self.unit_axes(cx)))?;
                self.reshape_symbolic(cx, &shape)
            }
            Op::Unsqueeze(axis) => symbolic::unsqueeze(cx, self, *axis),
            Op::Transpose(..) | Op::Movedim { .. } => {
                let axes = self.permutation_of(op)?;
                symbolic::permute(cx, self, &axes)
            }
            Op::ReverseAxes
            | Op::MatrixTranspose
            | Op::T
            | Op::ConjTranspose
            | Op::MatrixConjTranspose
            | Op::Adjoint => {
                let axes = op.rank_permutation(self.ndim(), || self.ctx())?;
                symbolic::permute(cx, self, &axes.unwrap_or_default())
            }
            Op::ViewShape(shape) => symbolic::reshape(cx, self, shape)
                .map_err(|e| crate::concrete::rename_op(e, "view_shape"))?
                .ok_or_else(|| {
                    let shape: Vec<Expr> = shape.iter().map(|&e| cx.simplify(e)).collect();
                    view_shape_refusal(&fmt_list(&shape), &self.ctx_full(), true)
                }),
            Op::AsStrided {
                shape,
                strides,
                offset,
            } => {
                let (_, last, any) = symbolic::reach(self);
                let what = || {
                    format!(
                        "the storage of {}, up to the last element it reaches",
                        self.ctx()
                    )
                };
                symbolic::torch_as_strided(
                    cx,
                    self,
                    (shape, strides, *offset),
                    any * (last + 1),
                    &what,
                )
            }
            Op::SlidingWindowView { window, axes } => {
                let dims: Vec<Option<i64>> = self.shape().iter().map(|d| d.as_i64()).collect();
                let mut v = self.clone();
                for (axis, size) in sliding_windows(window, axes.as_deref(), &dims, || self.ctx())?
                {
                    let step = Expr::from(1);
                    v = v
                        .apply_symbolic(cx, &Op::Unfold { axis, size, step })
                        .map_err(|e| crate::concrete::rename_op(e, "sliding_window_view"))?;
                }
                Ok(v)
            }
            Op::Take { .. } | Op::Compress { .. } | Op::BooleanMask(_) => {
                crate::gather::result_shape(cx, self, op)?;
                Err(crate::concrete::gather_copies(op.name(), &self.ctx()))
            }
            Op::BroadcastTo(shape) => {
                let ones = self.broadcast_rank(shape)?;
                self.reshape_symbolic(cx, &ones)?
                    .apply_symbolic(cx, &Op::Expand(shape.clone()))
            }
            Op::Narrow {
                axis,
                start,
                length,
            } => {
                let bounds = self.narrow_bounds(*axis, *start, *length)?;
                symbolic::shrink(cx, self, &bounds)
            }
            Op::Flatten { start, end } => {
                let shape = self.flattened_shape(*start, *end)?;
                self.reshape_symbolic(cx, &shape)
            }
            Op::Unflatten { axis, sizes } => {
                let shape = self.unflattened_shape(*axis, sizes)?;
                self.reshape_symbolic(cx, &shape)
            }
            Op::Split { axis, size, piece } => {
                symbolic::split_piece(cx, self, GuardOp::SPLIT, *axis, *size, *piece)
            }
            Op::SplitSizes { axis, sizes, piece } => {
                symbolic::split_sizes_piece(cx, self, *axis, sizes, *piece)
            }
            Op::Chunk {
                axis,
                chunks,
                piece,
            } => {
                let size = self.chunk_size(cx, *axis, *chunks)?;
                let piece = Expr::from(i64::try_from(*piece).unwrap_or(i64::MAX));
                symbolic::split_piece(cx, self, GuardOp::CHUNK, *axis, size, piece)
            }
            Op::TensorSplit {
                axis,
                sections,
                piece,
            } => symbolic::tensor_split_piece(cx, self, *axis, *sections, *piece),
            Op::TensorSplitAt {
                axis,
                indices,
                piece,
            } => {
                let items = self.tensor_split_items(*axis, indices, *piece)?;
                self.apply_symbolic(cx, &Op::Index(items))
            }
            Op::DirectionalSplit {
                direction,
                sections,
                piece,
            } => self.directional_split_piece(cx, *direction, *sections, *piece),
            Op::DirectionalSplitAt {
                direction,
                indices,
                piece,
            } => {
                let items = self.directional_split_items(*direction, indices, *piece)?;
                self.apply_symbolic(cx, &Op::Index(items))
            }
            Op::Reinterpret { from, to } => symbolic::reinterpret(cx, self, *from, *to),
            Op::ViewAsReal => symbolic::view_as_real(cx, self),
            Op::ViewAsComplex => symbolic::view_as_complex(cx, self),
            Op::Real | Op::Imag => {
                // The pair axis has size 2, so selecting index 0 or 1 cannot fail.
                let pairs = symbolic::view_as_real(cx, self)
                    .map_err(|e| crate::concrete::rename_op(e, op.name()))?;
                let axis = self.ndim();
                let index = Expr::from(i64::from(matches!(op, Op::Imag)));
                pairs.apply_symbolic(cx, &Op::Select { axis, index })
            }
            Op::Ravel | Op::Contiguous | Op::Copy | Op::FlattenCopy | Op::AsType { .. } => {
                let Some(copy) = CopyOp::of(op) else {
                    return Ok(self.clone());
                };
                copy.view(cx, self)?.ok_or_else(|| copy.copies(cx, self))
            }
        }
    }

    /// Piece `piece` of `hsplit`, `vsplit` or `dsplit` into `sections` equal pieces
    /// ([`Op::DirectionalSplit`]): the axis size must be provably divisible.
    fn directional_split_piece(
        &self,
        cx: &Scope,
        direction: SplitDirection,
        sections: usize,
        piece: usize,
    ) -> Result<View> {
        let axis = direction.axis(self.ndim(), || self.ctx())?;
        let d = self.dim_for(direction.name(), axis)?;
        let n = i64::try_from(sections).unwrap_or(i64::MAX);
        if n > 0 && !cx.prove_eq(d.floor_mod(n), Expr::from(0)).is_true() {
            let constant = d.as_i64().is_some();
            let ctx = self.ctx();
            return Err(direction.indivisible(axis, cx.simplify(d), constant, sections, &ctx));
        }
        symbolic::tensor_split_piece(cx, self, axis, sections, piece)
            .map_err(|e| crate::concrete::rename_op(e, direction.name()))
    }

    /// The index items of piece `piece` of `tensor_split` at `indices`: a slice
    /// `indices[piece - 1]:indices[piece]` of `axis` (Python's slice rules).
    pub(crate) fn tensor_split_items(
        &self,
        axis: usize,
        indices: &[Expr],
        piece: usize,
    ) -> Result<Vec<IndexItem<Expr>>> {
        self.dim_for("tensor_split", axis)?;
        let pieces = indices.len() + 1;
        check_piece("tensor_split", || self.ctx(), axis, piece, pieces)?;
        let mut items = vec![IndexItem::<Expr>::FULL; axis];
        items.push(IndexItem::Slice {
            start: piece.checked_sub(1).map(|k| indices[k]),
            stop: indices.get(piece).copied(),
            step: None,
        });
        Ok(items)
    }

    fn reshape_symbolic(&self, cx: &Scope, shape: &[Expr]) -> Result<View> {
        symbolic::reshape(cx, self, shape)?.ok_or_else(|| self.undecided_reshape(cx, shape))
    }

    fn undecided_unfold(&self, cx: &Scope, axis: usize, size: Expr, step: Expr) -> Error {
        unrepresentable(
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
        unrepresentable(
            "reshape",
            format!(
                "whether {} reshapes to {} as one view depends on the values of the symbols; use a ViewStack, which decides it at bind time",
                self.ctx_full(),
                fmt_list(&shape)
            ),
        )
    }

    /// The index items of piece `piece` of `hsplit`, `vsplit` or `dsplit` at `indices`: the
    /// slice of `tensor_split` at them along the direction's axis.
    pub(crate) fn directional_split_items(
        &self,
        direction: SplitDirection,
        indices: &[Expr],
        piece: usize,
    ) -> Result<Vec<IndexItem<Expr>>> {
        let axis = direction.axis(self.ndim(), || self.ctx())?;
        self.tensor_split_items(axis, indices, piece)
            .map_err(|e| crate::concrete::rename_op(e, direction.name()))
    }

    /// The index items of `select(axis, index)`.
    pub(crate) fn select_items(&self, axis: usize, index: Expr) -> Result<Vec<IndexItem<Expr>>> {
        self.dim_for("select", axis)?;
        let mut items = vec![IndexItem::<Expr>::FULL; axis];
        items.push(IndexItem::Int(index));
        Ok(items)
    }

    /// The piece size of `chunk(axis, chunks)`: `max(cdiv(dim, chunks), 1)`.
    pub(crate) fn chunk_size(&self, cx: &Scope, axis: usize, chunks: usize) -> Result<Expr> {
        let d = self.dim_for("chunk", axis)?;
        let n = i64::try_from(chunks).unwrap_or(i64::MAX);
        if n == 0 {
            return Err(invalid(
                "chunk",
                format!("chunk count {chunks} must be positive for {}", self.ctx()),
            ));
        }
        Ok(cx.simplify(d.ceil_div(n).max(1)))
    }

    /// The permutation a `transpose` or `movedim` stands for, after checking its axes.
    pub(crate) fn permutation_of<D>(&self, op: &Op<D>) -> Result<Vec<usize>> {
        let n = self.ndim();
        let mut axes: Vec<usize> = (0..n).collect();
        match *op {
            Op::Transpose(a, b) => {
                for x in [a, b] {
                    self.dim_for("transpose", x)?;
                }
                axes.swap(a, b);
            }
            Op::Movedim { src, dst } => {
                for x in [src, dst] {
                    self.dim_for("movedim", x)?;
                }
                let x = axes.remove(src);
                axes.insert(dst, x);
            }
            _ => {}
        }
        Ok(axes)
    }

    /// The shape with the size-1 axes `broadcast_to(shape)` prepends.
    fn broadcast_rank(&self, shape: &[Expr]) -> Result<Vec<Expr>> {
        let Some(lead) = shape.len().checked_sub(self.ndim()) else {
            return Err(invalid(
                "broadcast_to",
                format!(
                    "cannot broadcast {} to {}, which has fewer axes",
                    self.ctx(),
                    fmt_list(shape)
                ),
            ));
        };
        let mut ones = vec![Expr::from(1); lead];
        ones.extend_from_slice(self.shape());
        Ok(ones)
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
            .shape()
            .iter()
            .enumerate()
            .map(|(a, &x)| {
                if a == axis {
                    (start, start + length)
                } else {
                    (Expr::from(0), x)
                }
            })
            .collect())
    }

    pub(crate) fn flattened_shape(&self, start: usize, end: usize) -> Result<Vec<Expr>> {
        if start > end || end >= self.ndim() {
            return Err(invalid(
                "flatten",
                format!(
                    "axes {start}..={end} are not a range of axes of {} of rank {}",
                    self.ctx(),
                    self.ndim()
                ),
            ));
        }
        let s = self.shape();
        let mut shape = s[..start].to_vec();
        shape.push(s[start..=end].iter().copied().product());
        shape.extend_from_slice(&s[end + 1..]);
        Ok(shape)
    }

    pub(crate) fn unflattened_shape(&self, axis: usize, sizes: &[Expr]) -> Result<Vec<Expr>> {
        self.dim_for("unflatten", axis)?;
        let s = self.shape();
        let mut shape = s[..axis].to_vec();
        shape.extend_from_slice(sizes);
        shape.extend_from_slice(&s[axis + 1..]);
        Ok(shape)
    }

    /// The shape without the listed (or all provably) size-1 axes, and for
    /// `None` the guards `d != 1` of the kept axes that might be 1 (squeezing
    /// them would change the rank, which one symbolic shape cannot express).
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

    pub(crate) fn squeezed_shape(
        &self,
        cx: &Scope,
        axes: Option<&[usize]>,
    ) -> Result<(Vec<Expr>, Vec<Guard>)> {
        let one = |d: Expr| cx.prove_eq(d, Expr::from(1)).is_true();
        let Some(list) = axes else {
            let mut ck = crate::guard::Checker::new(cx, GuardOp::SQUEEZE, &[], self);
            let mut shape = Vec::new();
            for (axis, &d) in self.shape().iter().enumerate() {
                if one(d) {
                    continue;
                }
                ck.require(d, symshape::CmpOp::Ne, Expr::from(1), || {
                    format!("axis {axis} is kept, so it is not of size 1")
                })?;
                shape.push(d);
            }
            return Ok((shape, ck.guards));
        };
        for (k, &a) in list.iter().enumerate() {
            let d = self.dim_for("squeeze", a)?;
            if list[..k].contains(&a) {
                return Err(crate::concrete::repeated_squeeze_axis(a, list, &self.ctx()));
            }
            if !one(d) {
                return Err(Error::Symbolic {
                    op: "squeeze",
                    what: "size of a squeezed axis",
                    expr: d.to_string(),
                });
            }
        }
        let shape = self
            .shape()
            .iter()
            .enumerate()
            .filter(|(a, _)| !list.contains(a))
            .map(|(_, &d)| d)
            .collect();
        Ok((shape, Vec::new()))
    }
}
