//! [`Engine`]: the one dispatcher of the core ops, written once over the size type for
//! the exact engine (`ConcreteView`, `i64`, decided at once by `Exact`) and the symbolic
//! one (`View`, `Expr`, proven or guarded by a `Checker`), and the view-or-copy decision
//! of `ravel`, `contiguous` and `astype`. Each engine supplies only what is its own:
//! its fields and checker, how fields become a view, and its reshape.

use symshape::CmpOp;

use crate::check::Check;
use crate::concrete::ByteLayout;
use crate::dim::Size;
use crate::error::{
    check_len, fmt_list, invalid, overflow, refuse_mask, unrepresentable, view_shape_refusal,
    Error, Result,
};
use crate::fields::{as_strided_within, storage_of};
use crate::guard::{Guard, GuardOp};
use crate::index::IndexItem;
use crate::layout;
use crate::lower_op::{lower, Decide};
use crate::op::{as_strided_args, CopyOp, Op};
use crate::view::Fields;

/// A view type that the core ops run on: its fields, and the hooks where the engines
/// differ.
pub(crate) trait Engine: Clone {
    /// The size type.
    type D: Size;
    /// What the engine proves under: `()` for the exact engine, a `Scope`.
    type Cx: ?Sized;
    /// The decider of the field rules' preconditions.
    type Ck<'a>: Check<Self::D>
    where
        Self: 'a;
    /// The decider of the lowering's questions (and the simplified form of a size).
    type Dec<'a>: Decide<Self::D>
    where
        Self: 'a;
    /// Whether sizes are decided at once (the exact engine's normalisations run).
    const EXACT: bool;

    /// The fields, and the element count.
    fn shape(&self) -> &[Self::D];
    fn strides(&self) -> &[Self::D];
    fn offset(&self) -> Self::D;
    fn mask(&self) -> Option<&[(Self::D, Self::D)]>;
    fn numel(&self) -> Self::D;
    /// The view as messages name it, and as messages about values name it (with its
    /// guards).
    fn ctx(&self) -> String;
    fn ctx_full(&self) -> String;
    /// The checker of `op` on `v`, and the decider of the lowering's questions (and of
    /// the simplified form of a size).
    fn checker<'a>(cx: &'a Self::Cx, v: &'a Self, op: GuardOp) -> Self::Ck<'a>;
    fn decider<'a>(cx: &'a Self::Cx, ctx: &'a dyn Fn() -> String) -> Self::Dec<'a>;
    /// The view of the fields a rule of `op` computed (validated on `i64`), and of
    /// fields it kept valid (the same elements, or fewer).
    fn finish(op: &'static str, f: Fields<Self::D>, ck: Self::Ck<'_>) -> Result<Self>;
    fn finish_kept(f: Fields<Self::D>, ck: Self::Ck<'_>) -> Result<Self>;
    /// An unmasked view of the given fields, as `create` checks them, and a view with
    /// `guards` added (those a checker recorded, or a lowering's).
    fn create(cx: &Self::Cx, shape: &[Self::D], strides: &[Self::D], at: Self::D) -> Result<Self>;
    fn with_guards(v: Self, guards: &[Guard]) -> Self;
    /// The reshape to `shape`: `NotRepresentable` when it is not one view (or, for
    /// `Expr`, when only values decide); the same dropping the size-1 axes for `op`.
    fn reshape(cx: &Self::Cx, v: &Self, shape: &[Self::D]) -> Result<Self>;
    fn drop_unit_axes(cx: &Self::Cx, v: &Self, op: &'static str, s: &[Self::D]) -> Result<Self>;
    /// The C-contiguous `v` as one row-major axis.
    fn flat(cx: &Self::Cx, v: &Self) -> Result<Self>;
    /// Whether `v` has elements but no valid one (decided on `i64` only).
    fn none_valid(&self) -> bool;
    /// Checks the arguments of a gather on `v`.
    fn check_gather(cx: &Self::Cx, v: &Self, op: &Op<Self::D>) -> Result<()>;
}

/// The fields of `v`.
#[inline]
pub(crate) fn fields_of<E: Engine>(v: &E) -> Fields<E::D> {
    Fields {
        shape: v.shape().to_vec(),
        strides: v.strides().to_vec(),
        offset: v.offset(),
        mask: v.mask().map(<[_]>::to_vec),
    }
}

/// The truth of a condition on the sizes of `E`.
type Truth<E> = <<E as Engine>::D as Size>::Truth;

/// NumPy's `C_CONTIGUOUS` and `F_CONTIGUOUS` flags of `v` ([`layout::dense`]).
///
/// # Errors
/// [`Error::Invalid`] for a masked view.
pub(crate) fn numpy_flags<E: Engine>(v: &E) -> Result<(Truth<E>, Truth<E>)> {
    if v.mask().is_some() {
        return Err(refuse_mask("flags", v.ctx(), layout::BYTES));
    }
    let (shape, strides, numel) = (v.shape(), v.strides(), v.numel());
    let dense = |c_order| layout::dense(shape, strides, numel, c_order);
    Ok((dense(true), dense(false)))
}

/// The layout in bytes of `v` for elements of `itemsize` bytes ([`layout::byte_layout`]).
///
/// # Errors
/// As [`layout::byte_layout`].
pub(crate) fn byte_layout<E: Engine>(v: &E, itemsize: i64) -> Result<ByteLayout<E::D>> {
    let fields = (v.shape(), v.strides(), v.offset());
    layout::byte_layout(fields, v.mask().is_some(), itemsize, &|| v.ctx())
}

/// The fields of `v` changed by `rule` under the checker of `op`, then finished: as a
/// view the rule keeps valid (`kept`: it keeps the same elements or a subset, as flip,
/// unsqueeze, shrink and the split pieces do), or checked as a new one.
#[inline]
fn with_fields<E: Engine>(
    cx: &E::Cx,
    v: &E,
    op: GuardOp,
    kept: bool,
    rule: impl FnOnce(&mut Fields<E::D>, &mut E::Ck<'_>) -> Result<()>,
) -> Result<E> {
    let mut ck = E::checker(cx, v, op);
    let mut f = fields_of(v);
    rule(&mut f, &mut ck)?;
    // Taken out field by field: moved whole, the fields the rule has just written would
    // be read back wider than they were written, which stalls the load.
    if kept {
        E::finish_kept(f.take(), ck)
    } else {
        E::finish(op.name(), f.take(), ck)
    }
}

/// Requires every size of `shape` non-negative (on `i64`, also a product that fits);
/// `op` names the failure, the guards the shape `which` of several.
pub(crate) fn require_shape<D: Size, C: Check<D>>(
    c: &mut C,
    op: &'static str,
    shape: &[D],
    which: Option<usize>,
) -> Result<()> {
    let of = which.map(|i| format!(" of shape {i}")).unwrap_or_default();
    for (axis, &d) in shape.iter().enumerate() {
        c.require(
            d,
            CmpOp::Ge,
            D::from(0),
            || format!("size of axis {axis}{of} is non-negative"),
            || {
                invalid(
                    op,
                    format!("negative size {d} in shape {}", fmt_list(shape)),
                )
            },
        )?;
    }
    let product = || {
        shape
            .iter()
            .try_fold(1i64, |a, &d| a.checked_mul(c.value(d)?))
    };
    if C::EXACT && product().is_none() {
        let what = format!("element count of shape {} exceeds i64", fmt_list(shape));
        return Err(overflow(op, what));
    }
    Ok(())
}

/// Requires shape `i` of a broadcast within the rank limit and as [`require_shape`].
pub(crate) fn require_broadcast_operand<D: Size, C: Check<D>>(
    c: &mut C,
    i: usize,
    shape: &[D],
) -> Result<()> {
    let what = || "the broadcast shape".to_string();
    crate::concrete::check_rank("broadcast_shapes", shape.len(), what)?;
    require_shape(c, "broadcast_shapes", shape, Some(i))
}

/// Runs `op` on `v`: checks the result rank, lowers a derived op and runs each op it
/// stands for (a squeeze that is one reshape drops the unit axes; errors under the
/// derived op's name, its guards attached), else runs the core op.
///
/// # Errors
/// The op's errors, as [`ViewOps`](crate::ViewOps) documents them.
pub(crate) fn apply<E: Engine>(cx: &E::Cx, v: &E, op: &Op<E::D>) -> Result<E> {
    op.check_rank(v.shape().len(), || v.ctx())?;
    if op.is_field_op() {
        return apply_core(cx, v, op);
    }
    let ctx = || v.ctx();
    let mut dec = E::decider(cx, &ctx);
    let Some(low) = lower(&mut dec, v.shape(), &ctx, op)? else {
        return apply_core(cx, v, op);
    };
    let r = if let (Op::Squeeze(_) | Op::SqueezeProven, [Op::Reshape(s)]) = (op, &low.ops[..]) {
        E::drop_unit_axes(cx, v, "squeeze", s)?
    } else {
        let mut r = v.clone();
        for k in &low.ops {
            r = apply(cx, &r, k).map_err(|e| low.error(e))?;
        }
        r
    };
    Ok(E::with_guards(r, &low.guards))
}

/// Runs the core op `op`, whose result rank is checked, on `v`.
///
/// # Errors
/// The op's errors, as [`ViewOps`](crate::ViewOps) documents them.
#[inline]
pub(crate) fn apply_core<E: Engine>(cx: &E::Cx, v: &E, op: &Op<E::D>) -> Result<E> {
    let ctx = || v.ctx();
    match op {
        Op::Reshape(s) => E::reshape(cx, v, s),
        Op::Expand(s) => expand(cx, v, s),
        Op::Permute(a) => {
            let ck = E::checker(cx, v, GuardOp::PERMUTE);
            let (shape, strides, mask) =
                crate::axes::permuted(a, v.shape(), v.strides(), v.mask(), ctx)?;
            let offset = v.offset();
            let f = Fields {
                shape,
                strides,
                offset,
                mask,
            };
            E::finish_kept(f, ck)
        }
        Op::Shrink(b) => {
            check_len("shrink", "bounds", b.len(), v.shape().len(), ctx)?;
            with_fields(cx, v, GuardOp::SHRINK, true, |f, ck| f.shrink(ck, b, &ctx))
        }
        Op::Pad(p) => {
            check_len("pad", "padding", p.len(), v.shape().len(), ctx)?;
            let zero = E::D::from(0);
            if E::EXACT && p.iter().all(|&x| x == (zero, zero)) {
                return Ok(v.clone());
            }
            with_fields(cx, v, GuardOp::PAD, false, |f, ck| f.pad(ck, p, &ctx))
        }
        Op::Flip(axes) => {
            let flags = crate::axes::flip_flags(axes, v.shape().len(), ctx)?;
            with_fields(cx, v, GuardOp::FLIP, true, |f, ck| f.flip(ck, flags, &ctx))
        }
        Op::Index(items) => {
            let (kept, shape) = index_keepdims(cx, v, items)?;
            E::drop_unit_axes(cx, &kept, "index", &shape)
        }
        // The rules of `fields/unfold.rs`.
        Op::Unfold { axis, size, step } => {
            let mut ck = E::checker(cx, v, GuardOp::UNFOLD);
            // Windows over a view with elements but no valid one have none either,
            // however they cut its mask: the result is all masked.
            let none_valid = v.none_valid() && ck.holds(*size, CmpOp::Gt, E::D::from(0));
            let mut f = fields_of(v);
            f.mask = f.mask.filter(|_| !none_valid);
            if !f.unfold(&mut ck, (*axis, *size, *step), &ctx)? {
                let dec = E::decider(cx, &ctx);
                let (size, step) = (dec.shown(*size), dec.shown(*step));
                return Err(unrepresentable(
                    "unfold",
                    format!(
                        "whether windows of size {size} every {step} along masked axis {axis} of {} cut its mask evenly depends on the values of the symbols; use a ViewStack, which reads the masked view through a row-major one",
                        v.ctx_full()
                    ),
                ));
            }
            if none_valid {
                let n = f.shape.len();
                (f.strides, f.offset) = (vec![E::D::from(0); n], E::D::from(0));
                f.mask = Some(vec![(E::D::from(0), E::D::from(0)); n]);
            }
            E::finish("unfold", f, ck)
        }
        Op::Diagonal { offset, dim1, dim2 } => {
            let args = (*offset, *dim1, *dim2);
            with_fields(cx, v, GuardOp::DIAGONAL, false, |f, ck| {
                f.diagonal(ck, args, &ctx)
            })
        }
        Op::Unsqueeze(axis) => with_fields(cx, v, GuardOp::UNSQUEEZE, true, |f, _| {
            let (shape, strides) = (&mut f.shape, &mut f.strides);
            crate::axes::insert_unit_axis(*axis, shape, strides, f.mask.as_mut(), ctx)
        }),
        Op::Split { axis, size, piece } => {
            let args = (*axis, *size, *piece);
            with_fields(cx, v, GuardOp::SPLIT, true, |f, ck| {
                f.split_piece(ck, "split", args, &ctx)
            })
        }
        Op::Chunk {
            axis,
            chunks,
            piece,
        } => {
            let size = chunk_size(cx, v, *axis, *chunks)?;
            let piece = E::D::from(i64::try_from(*piece).unwrap_or(i64::MAX));
            with_fields(cx, v, GuardOp::CHUNK, true, |f, ck| {
                f.split_piece(ck, "chunk", (*axis, size, piece), &ctx)
            })
        }
        Op::SplitSizes { axis, sizes, piece } => {
            with_fields(cx, v, GuardOp::SPLIT_SIZES, true, |f, ck| {
                f.split_sizes_piece(ck, *axis, sizes, *piece, &ctx)
            })
        }
        Op::TensorSplit {
            axis,
            sections,
            piece,
        } => {
            let args = (*axis, *sections, *piece);
            with_fields(cx, v, GuardOp::TENSOR_SPLIT, true, |f, ck| {
                f.tensor_split_piece(ck, args, &ctx)
            })
        }
        Op::Reinterpret { .. } | Op::ViewAsReal | Op::ViewAsComplex | Op::Real | Op::Imag => {
            let gop = match op {
                Op::Reinterpret { .. } => GuardOp::REINTERPRET,
                Op::ViewAsComplex => GuardOp::VIEW_AS_COMPLEX,
                // Reading complex elements as reals requires nothing.
                _ => GuardOp::VIEW_AS_REAL,
            };
            let mut ck = E::checker(cx, v, gop);
            let mut f = fields_of(v);
            f.read_elements(&mut ck, op, &ctx)?;
            E::finish(op.name(), f, ck)
        }
        Op::Ravel | Op::Contiguous | Op::Copy | Op::FlattenCopy | Op::AsType { .. } => {
            let Some(copy) = CopyOp::of(op) else {
                return Ok(v.clone());
            };
            view_or_copy(cx, v, copy)?.map_err(|why| copy.refusal(&v.ctx_full(), &why))
        }
        Op::ViewShape(s) => E::reshape(cx, v, s).map_err(|e| match e {
            Error::NotRepresentable { .. } => {
                let dec = E::decider(cx, &ctx);
                let shown: Vec<E::D> = s.iter().map(|&d| dec.shown(d)).collect();
                view_shape_refusal(&fmt_list(&shown), &v.ctx_full(), !E::EXACT)
            }
            other => crate::concrete::rename_op(other, "view_shape"),
        }),
        Op::AsStrided {
            shape,
            strides,
            offset,
        } => {
            let what = || {
                format!(
                    "the storage of {}, up to the last element it reaches",
                    v.ctx()
                )
            };
            as_strided(cx, v, (shape, strides, *offset), None, &what)
        }
        Op::Take { .. } | Op::Compress { .. } | Op::BooleanMask(_) => {
            E::check_gather(cx, v, op)?;
            Err(crate::concrete::gather_copies(op.name(), &v.ctx()))
        }
        // Every derived op is lowered before it gets here.
        _ => Err(invalid(op.name(), format!("{} is a derived op", op.name()))),
    }
}

/// The piece size of `chunk(axis, chunks)` on `v`: `max(cdiv(dim, chunks), 1)`.
///
/// # Errors
/// When the axis is out of range or `chunks` is 0.
pub(crate) fn chunk_size<E: Engine>(cx: &E::Cx, v: &E, axis: usize, chunks: usize) -> Result<E::D> {
    let ctx = || v.ctx();
    let dec = E::decider(cx, &ctx);
    crate::lower_op::chunk_size(&dec, v.shape(), &ctx, axis, chunks)
}

/// The number of pieces `split` cuts `axis` of `v` into, `max(cdiv(dim, size), 1)` (an
/// empty axis gives one empty piece), as messages show it.
///
/// # Errors
/// When the axis is out of range or `size` is (provably) not positive.
pub(crate) fn split_count<E: Engine>(cx: &E::Cx, v: &E, axis: usize, size: E::D) -> Result<E::D> {
    let ctx = || v.ctx();
    let d = crate::error::at_axis("split", v.shape(), axis, ctx)?;
    let dec = E::decider(cx, &ctx);
    if E::checker(cx, v, GuardOp::SPLIT).refutes(size, CmpOp::Ge, E::D::from(1)) {
        let what = format!(
            "piece size {} must be positive for {}",
            dec.shown(size),
            ctx()
        );
        return Err(invalid("split", what));
    }
    Ok(dec.shown(d.ceil_parts_of(size)))
}

/// Broadcasts the size-1 axes of `v` to `shape` (a scalar to any shape).
pub(crate) fn expand<E: Engine>(cx: &E::Cx, v: &E, shape: &[E::D]) -> Result<E> {
    let mut ck = E::checker(cx, v, GuardOp::EXPAND);
    require_shape(&mut ck, "expand", shape, None)?;
    if v.shape().is_empty() {
        let f = Fields {
            shape: shape.to_vec(),
            strides: vec![E::D::from(0); shape.len()],
            offset: v.offset(),
            mask: None,
        };
        return E::finish("expand", f, ck);
    }
    if E::EXACT && shape == v.shape() {
        return Ok(v.clone());
    }
    let mut f = fields_of(v);
    f.expand(&mut ck, shape, &|| v.ctx())?;
    E::finish("expand", f, ck)
}

/// NumPy basic indexing with every indexed axis kept (integer-indexed axes have size
/// 1); returns the view and the shape without those axes.
///
/// # Errors
/// As [`IndexItem`]'s rule (`index.rs`).
pub(crate) fn index_keepdims<E: Engine>(
    cx: &E::Cx,
    v: &E,
    items: &[IndexItem<E::D>],
) -> Result<(E, Vec<E::D>)> {
    let ctx = || v.ctx();
    let mut ck = E::checker(cx, v, GuardOp::INDEX);
    let mut f = fields_of(v);
    let mut shape = f.index_keepdims(&mut ck, items, &ctx)?;
    if !E::EXACT {
        let dec = E::decider(cx, &ctx);
        shape.iter_mut().for_each(|d| *d = dec.shown(*d));
    }
    Ok((E::finish_kept(f, ck)?, shape))
}

/// PyTorch's `as_strided` on `v`, reading a storage of `storage` elements (`what`
/// describes it; `None` for the storage of `v` itself, up to the last element it
/// reaches): the new view, its strides and offset non-negative and its last element
/// inside the storage (decided, proven or kept as guards: `fields::as_strided_within`).
///
/// # Errors
/// PyTorch's reasons: strides and sizes of different lengths, a negative stride or
/// offset, an element outside the storage; as `create`.
pub(crate) fn as_strided<E: Engine>(
    cx: &E::Cx,
    v: &E,
    (shape, strides, offset): (&[E::D], &[E::D], E::D),
    storage: Option<E::D>,
    what: &dyn Fn() -> String,
) -> Result<E> {
    let mut ck = E::checker(cx, v, GuardOp::AS_STRIDED);
    let storage = match storage {
        Some(s) => s,
        None => {
            let (zero, shape) = (E::D::from(0), v.shape());
            let all = |a: usize| v.mask().map_or((zero, shape[a]), |m| m[a]);
            let bounds = (0..shape.len()).map(all);
            storage_of(&ck, v.offset(), v.strides(), bounds)
                .map(|s| s.1)
                .ok_or_else(|| {
                    let what = format!("the storage of {} exceeds i64", v.ctx());
                    overflow("as_strided", what)
                })?
        }
    };
    as_strided_args(shape, strides, offset)?;
    let res = E::create(cx, shape, strides, offset)
        .map_err(|e| crate::concrete::rename_op(e, "as_strided"))?;
    let new = (res.shape(), res.strides(), res.offset());
    as_strided_within(&mut ck, (shape, strides, offset), new, storage, what)?;
    Ok(E::with_guards(res, ck.pending()))
}

/// `copy` on `v` (NumPy's view-or-copy rule): the result when it is a view of the same
/// buffer (`astype` that keeps its type without a copy: `v`; `ravel` and `contiguous`
/// when `v` is C-contiguous, decided or proven: `v` as one axis, or `v`), else why the
/// op copies (it always does, a mask, contiguity refuted or undecided).
///
/// # Errors
/// When an expression exceeds the budgets.
pub(crate) fn view_or_copy<E: Engine>(
    cx: &E::Cx,
    v: &E,
    copy: CopyOp,
) -> Result<std::result::Result<E, String>> {
    if let Some(why) = copy.always() {
        return Ok(Err(why));
    }
    if copy.never() {
        return Ok(Ok(v.clone()));
    }
    if v.mask().is_some() {
        return Ok(Err("it has a mask".to_string()));
    }
    let gop = match copy {
        CopyOp::Ravel => GuardOp::RAVEL,
        _ => GuardOp::CONTIGUOUS,
    };
    let dense = layout::dense(v.shape(), v.strides(), v.numel(), true);
    match E::checker(cx, v, gop).decide(dense)? {
        Ok(true) if copy == CopyOp::Ravel => E::flat(cx, v).map(Ok),
        Ok(true) => Ok(Ok(v.clone())),
        Ok(false) => Ok(Err("it is not C-contiguous".to_string())),
        Err(cond) => Ok(Err(format!(
            "whether it is C-contiguous depends on the symbols (it is exactly when {})",
            symshape::abbreviate(&cond)
        ))),
    }
}
