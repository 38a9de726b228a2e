//! [`View::apply`]: the one place that chooses between the exact engine and the
//! symbolic rules, and turns the derived ops (transpose, narrow, flatten, pieces,
//! ...) into the core ones on symbolic views; the constructors that may prove.

use std::borrow::Cow;

use symshape::{Expr, Scope};

use crate::axes::flip_flags;
use crate::concrete::ConcreteView;
use crate::dim::Dim;
use crate::error::{invalid, unrepresentable, view_shape_refusal, Error, Result};
use crate::guard::GuardOp;
use crate::lower_op::{lower, Proving};
use crate::op::{const_op, CopyOp, Op};
use crate::symbolic;
use crate::view::{fmt_list, Fields, View};

/// Where an op runs ([`View::engine`]).
pub(crate) enum Engine<'a> {
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
        match self.engine(op) {
            Engine::Exact(c, k) => c.apply(&k).map(View::from),
            Engine::Symbolic(op) => self.apply_symbolic(cx, &op),
        }
    }

    /// The engine `op` runs on over this view: the exact one when the view and the
    /// op's arguments are constants, else the symbolic rules. The one place that
    /// chooses; [`ViewStack`](crate::ViewStack) asks it of its top view.
    pub(crate) fn engine<'a, D: Dim>(&'a self, op: &'a Op<D>) -> Engine<'a> {
        if let Some(c) = self.as_concrete() {
            if let Some(k) = const_op(op) {
                return Engine::Exact(c, k);
            }
        }
        Engine::Symbolic(op.to_expr())
    }

    fn apply_symbolic(&self, cx: &Scope, op: &Op) -> Result<View> {
        let ctx = || self.ctx();
        let mut ck = Proving::new(cx, &ctx);
        if let Some(low) = lower(&mut ck, self.shape(), &ctx, op)? {
            let mut v = self.clone();
            for k in &low.ops {
                v = v.apply_symbolic(cx, k).map_err(|e| low.error(e))?;
            }
            return Ok(if low.guards.is_empty() {
                v
            } else {
                v.with_guards(&low.guards)
            });
        }
        match op {
            Op::Reshape(s) => self.reshape_symbolic(cx, s),
            Op::Expand(s) => symbolic::expand(cx, self, s),
            Op::Permute(a) => symbolic::permute(cx, self, a),
            Op::Shrink(b) => symbolic::shrink(cx, self, b),
            Op::Pad(p) => symbolic::pad(cx, self, p),
            Op::Flip(a) => symbolic::flip(cx, self, &flip_flags(a, self.ndim(), || self.ctx())?),
            Op::Index(items) => {
                let (kept, shape) = symbolic::index_keepdims(cx, self, items)?;
                kept.reshape_symbolic(cx, &shape)
            }
            // The rules of `fields/unfold.rs`.
            Op::Unfold { axis, size, step } => {
                let mut ck = symbolic::checker(cx, GuardOp::UNFOLD, self);
                let mut f = self.fields().clone();
                if f.unfold(&mut ck, (*axis, *size, *step), &|| self.ctx())? {
                    return f.finish(ck);
                }
                Err(self.undecided_unfold(cx, *axis, *size, *step))
            }
            Op::Diagonal { offset, dim1, dim2 } => {
                let mut ck = symbolic::checker(cx, GuardOp::DIAGONAL, self);
                let mut f = self.fields().clone();
                f.diagonal(&mut ck, (*offset, *dim1, *dim2), &|| self.ctx())?;
                f.finish(ck)
            }
            Op::Unsqueeze(axis) => symbolic::unsqueeze(cx, self, *axis),
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
                let what = || {
                    format!(
                        "the storage of {}, up to the last element it reaches",
                        self.ctx()
                    )
                };
                symbolic::torch_as_strided(cx, self, (shape, strides, *offset), None, &what)
            }
            Op::Take { .. } | Op::Compress { .. } | Op::BooleanMask(_) => {
                crate::gather::result_shape(cx, self, op)?;
                Err(crate::concrete::gather_copies(op.name(), &self.ctx()))
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
            Op::Reinterpret { .. } | Op::ViewAsReal | Op::ViewAsComplex | Op::Real | Op::Imag => {
                let gop = match op {
                    Op::Reinterpret { .. } => GuardOp::REINTERPRET,
                    Op::ViewAsComplex => GuardOp::VIEW_AS_COMPLEX,
                    // Reading complex elements as reals requires nothing.
                    _ => GuardOp::VIEW_AS_REAL,
                };
                let mut ck = symbolic::checker(cx, gop, self);
                let mut f = Fields::of(self);
                f.read_elements(&mut ck, op, &ctx)?;
                f.finish(ck)
            }
            Op::Ravel | Op::Contiguous | Op::Copy | Op::FlattenCopy | Op::AsType { .. } => {
                let Some(copy) = CopyOp::of(op) else {
                    return Ok(self.clone());
                };
                copy.view(cx, self)?.ok_or_else(|| copy.copies(cx, self))
            }
            // Every derived op was lowered above.
            _ => Err(invalid(op.name(), format!("{} is a derived op", op.name()))),
        }
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

    /// The piece size of `chunk(axis, chunks)`: `max(cdiv(dim, chunks), 1)`.
    pub(crate) fn chunk_size(&self, cx: &Scope, axis: usize, chunks: usize) -> Result<Expr> {
        let ctx = || self.ctx();
        crate::lower_op::chunk_size(&Proving::new(cx, &ctx), self.shape(), &ctx, axis, chunks)
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
