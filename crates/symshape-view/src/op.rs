//! [`Op`]: every view op as a value, and [`Dim`], the type of its size arguments.
//!
//! `Op` is the spine of the crate: [`View::apply`](crate::View::apply),
//! [`ViewStack::apply`](crate::ViewStack::apply) and
//! [`ConcreteView::apply`](crate::ConcreteView::apply) run one, [`Trace`](crate::Trace)
//! records them, the `serde` feature stores them and the `shapetrace` runner parses its
//! statements into them. The named methods of [`ViewOps`](crate::ViewOps) only build an
//! `Op` and apply it.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::hash::Hash;

use symshape::Expr;

use crate::dim::Dim;
use crate::dtype::DType;
use crate::error::{fmt_list, fmt_pairs, unrepresentable, Error};
use crate::index::IndexItem;

/// One view op with its arguments.
///
/// `D` is [`Expr`] (the default) for ops recorded on symbolic views, or `i64` for
/// concrete ones. Axes are `usize`. Ops that cut an axis into several pieces
/// (`split`, `split_sizes`, `chunk`, `select`) name the one piece they keep, so
/// every op maps one view to one view; [`ViewOps`](crate::ViewOps) builds the list
/// of pieces from them. The copies (`ravel`, `contiguous`, `copy`, `flatten_copy`,
/// `astype`) read their input through a row-major view stacked on it; the gathers
/// (`take`, `compress`, `boolean_mask`) give a new stack over a fresh buffer that the
/// kernels fill ([`Op::is_gather`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
#[non_exhaustive]
pub enum Op<D = Expr> {
    /// Reinterprets the elements in row-major order.
    Reshape(Vec<D>),
    /// Broadcasts size-1 axes to the given sizes (same rank).
    Expand(Vec<D>),
    /// Reorders axes: axis `i` of the result is axis `axes[i]`.
    Permute(Vec<usize>),
    /// Keeps `[start, end)` of every axis.
    Shrink(Vec<(D, D)>),
    /// Adds masked-out `(before, after)` padding on every axis.
    Pad(Vec<(D, D)>),
    /// Reverses the listed axes.
    Flip(Vec<usize>),
    /// NumPy basic indexing, with symbolic indices and slice bounds allowed.
    Index(Vec<IndexItem<D>>),
    /// Sliding windows of `size` indices every `step` along `axis`; the window
    /// axis is appended last (PyTorch's `unfold`).
    Unfold {
        /// The axis the windows slide along.
        axis: usize,
        /// Indices per window.
        size: D,
        /// Distance between window starts (at least 1).
        step: D,
    },
    /// The diagonal of axes `dim1` and `dim2`, shifted by `offset` (positive:
    /// above the main diagonal), appended last (PyTorch's `diagonal`).
    Diagonal {
        /// Shift of the diagonal; its sign must be known.
        offset: D,
        /// The row axis.
        dim1: usize,
        /// The column axis.
        dim2: usize,
    },
    /// Removes the listed size-1 axes, or every size-1 axis for `None`.
    ///
    /// On a symbolic view `None` removes the axes provably of size 1 and keeps the
    /// others under a guard `d != 1` each, so that the rank never depends on a
    /// value: `[b, 1, s]` gets `[b, s]` with guards `b != 1` and `s != 1`.
    Squeeze(Option<Vec<usize>>),
    /// Removes the axes provably of size 1 under the scope and keeps every other
    /// one, adding no guard: `[b, 1, s]` gets `[b, s]`, and binding `b = 1` is
    /// fine. The result depends on what the scope proves, not on values; on
    /// constant sizes every size-1 axis is proven, so it is `Squeeze(None)`.
    SqueezeProven,
    /// Inserts a size-1 axis at the given position.
    Unsqueeze(usize),
    /// Swaps two axes (`transpose` and `swapaxes` in NumPy and PyTorch).
    Transpose(usize, usize),
    /// Moves axis `src` to position `dst`, keeping the order of the others.
    Movedim {
        /// The axis to move.
        src: usize,
        /// Where it ends up.
        dst: usize,
    },
    /// NumPy's `broadcast_to`: prepends size-1 axes, then expands size-1 axes.
    BroadcastTo(Vec<D>),
    /// Keeps `length` indices of `axis` from `start` (a negative constant start
    /// counts from the end).
    Narrow {
        /// The axis to narrow.
        axis: usize,
        /// The first index kept.
        start: D,
        /// How many indices are kept.
        length: D,
    },
    /// Merges axes `start..=end` into one.
    Flatten {
        /// The first axis merged.
        start: usize,
        /// The last axis merged.
        end: usize,
    },
    /// Splits `axis` into the given sizes, whose product must be its size.
    Unflatten {
        /// The axis to split.
        axis: usize,
        /// The sizes that replace it.
        sizes: Vec<D>,
    },
    /// Piece `piece` of cutting `axis` into pieces of `size` indices (the last may
    /// be smaller; an empty axis gives one empty piece).
    Split {
        /// The axis to cut.
        axis: usize,
        /// Indices per piece (at least 1).
        size: D,
        /// Which piece to keep, from 0.
        piece: D,
    },
    /// Piece `piece` of cutting `axis` into consecutive pieces of the given sizes,
    /// which must add up to the axis.
    SplitSizes {
        /// The axis to cut.
        axis: usize,
        /// The size of every piece.
        sizes: Vec<D>,
        /// Which piece to keep, from 0.
        piece: usize,
    },
    /// Piece `piece` of PyTorch's `chunk`: `axis` cut into at most `chunks`
    /// pieces of `max(ceil(dim / chunks), 1)` indices.
    Chunk {
        /// The axis to cut.
        axis: usize,
        /// The number of chunks asked for (at least 1).
        chunks: usize,
        /// Which piece to keep, from 0.
        piece: usize,
    },
    /// Index `index` of `axis`, with the axis removed (PyTorch's `select`, one
    /// piece of `unbind`); a negative constant index counts from the end.
    Select {
        /// The axis to select from.
        axis: usize,
        /// The index kept.
        index: D,
    },
    /// Piece `piece` of PyTorch's `tensor_split` of `axis` into `sections` pieces:
    /// the first `dim % sections` pieces have `dim / sections + 1` indices, the
    /// others `dim / sections` (pieces may be empty).
    TensorSplit {
        /// The axis to cut.
        axis: usize,
        /// The number of pieces (at least 1).
        sections: usize,
        /// Which piece to keep, from 0.
        piece: usize,
    },
    /// Piece `piece` of PyTorch's `tensor_split` of `axis` at the given indices:
    /// piece `k` is the slice `indices[k - 1]:indices[k]` (Python's slice rules,
    /// so negative indices count from the end and bounds clamp), the first piece
    /// starts at 0 and the last ends at the end of the axis.
    TensorSplitAt {
        /// The axis to cut.
        axis: usize,
        /// Where pieces start (one more piece than indices).
        indices: Vec<D>,
        /// Which piece to keep, from 0.
        piece: usize,
    },
    /// Piece `piece` of PyTorch's `hsplit`, `vsplit` or `dsplit` into `sections`
    /// equal pieces: [`Op::TensorSplit`] along the direction's axis, whose size must
    /// be (provably) divisible by `sections`.
    DirectionalSplit {
        /// Which of the three splits, and so which axis.
        direction: SplitDirection,
        /// The number of pieces (at least 1).
        sections: usize,
        /// Which piece to keep, from 0.
        piece: usize,
    },
    /// Piece `piece` of PyTorch's `hsplit`, `vsplit` or `dsplit` at `indices`:
    /// [`Op::TensorSplitAt`] along the direction's axis.
    DirectionalSplitAt {
        /// Which of the three splits, and so which axis.
        direction: SplitDirection,
        /// Where pieces start (one more piece than indices).
        indices: Vec<D>,
        /// Which piece to keep, from 0.
        piece: usize,
    },
    /// Every axis reversed (`T` in NumPy and PyTorch).
    #[cfg_attr(feature = "serde", serde(rename = "T"))]
    ReverseAxes,
    /// The last two axes swapped (PyTorch's `mT`); a view of rank 0 is its own `mT`,
    /// one of rank 1 is an error.
    #[cfg_attr(feature = "serde", serde(rename = "mT"))]
    MatrixTranspose,
    /// PyTorch's `t()`: axes 0 and 1 swapped on a view of rank 2; a view of rank 0 or 1
    /// is returned as it is; a higher rank is an error.
    #[cfg_attr(feature = "serde", serde(rename = "t"))]
    T,
    /// PyTorch's `H`, the conjugate transpose of a matrix: for a view, axes 0 and 1
    /// swapped (conjugation is element data); rank 2, or rank 0 (the view itself).
    #[cfg_attr(feature = "serde", serde(rename = "H"))]
    ConjTranspose,
    /// PyTorch's `mH`: the conjugate of [`Op::MatrixTranspose`]; for a view, the same
    /// axes swapped, with errors that name `mH`.
    #[cfg_attr(feature = "serde", serde(rename = "mH"))]
    MatrixConjTranspose,
    /// PyTorch's `adjoint()`: the same view as [`Op::MatrixConjTranspose`], with errors
    /// that name `adjoint`.
    Adjoint,
    /// NumPy's `rot90(m, k, axes)`: `k` quarter turns (any integer, taken modulo 4;
    /// negative turns the other way) in the plane of `axes`, from the first axis towards
    /// the second; a flip and a swap of the two axes, so always a view.
    Rot90 {
        /// Quarter turns.
        k: i64,
        /// The plane of the rotation: two different axes.
        axes: [usize; 2],
    },
    /// PyTorch's `view(dtype)`: the element size changes from `from` bytes to `to`
    /// bytes, so the last axis and the other strides and the offset are rescaled
    /// by the ratio (offsets are then counted in `to`-byte elements).
    Reinterpret {
        /// Bytes per element before.
        from: usize,
        /// Bytes per element after.
        to: usize,
    },
    /// PyTorch's `view_as_real`: a view of complex elements read as pairs of reals,
    /// an axis of size 2 and stride 1 appended, the other strides and the offset
    /// doubled (offsets are then counted in reals).
    ViewAsReal,
    /// PyTorch's `view_as_complex`, the inverse of [`Op::ViewAsReal`]: the last axis
    /// must have size 2 and stride 1, the other strides and the offset must be even;
    /// the last axis is removed and they are halved.
    ViewAsComplex,
    /// PyTorch's `real` of a complex view: [`Op::ViewAsReal`], then index 0 of the
    /// pair axis.
    Real,
    /// PyTorch's `imag` of a complex view: [`Op::ViewAsReal`], then index 1 of the
    /// pair axis.
    Imag,
    /// NumPy's `ravel` (order C): the elements in row-major order as one axis. On one
    /// view, the reshape to `[numel]` when NumPy's `C_CONTIGUOUS` holds (proven, on a
    /// symbolic view), else not one view: NumPy copies. On a
    /// [`ViewStack`](crate::ViewStack) the rule applies to the top view (the levels below
    /// are its storage), and a copy is a row-major `[numel]` view stacked on top, unmerged,
    /// which the kernels materialize.
    Ravel,
    /// PyTorch's `contiguous`: on one view, the view itself when it is contiguous
    /// (PyTorch's `is_contiguous`, which is NumPy's `C_CONTIGUOUS`; proven, on a symbolic
    /// view), else not one view: PyTorch copies. On a [`ViewStack`](crate::ViewStack) the
    /// rule applies to the top view, and a copy is a row-major view of the same shape
    /// stacked on top, unmerged, which the kernels materialize: the boundary where a traced
    /// model materializes.
    Contiguous,
    /// PyTorch's `view(*shape)`: the reshape when the top view can express it as one view,
    /// else an error with PyTorch's reason (a [`ViewStack`](crate::ViewStack) never pushes a
    /// view for it, unlike [`Op::Reshape`]).
    ViewShape(Vec<D>),
    /// PyTorch's `as_strided(size, stride, storage_offset)`: the storage of the view read
    /// with new sizes, strides (non-negative) and offset, every element inside the
    /// storage. The storage of the top view of a stack is the view below it; that of a
    /// single view ends after the last element it reaches.
    AsStrided {
        /// The new sizes.
        shape: Vec<D>,
        /// The new strides (each at least 0).
        strides: Vec<D>,
        /// The new offset into the storage (at least 0).
        offset: D,
    },
    /// NumPy's `sliding_window_view(x, window_shape, axis)`: for each window size and axis
    /// in turn, the axis shrinks to `dim - size + 1` window starts and an axis of `size` is
    /// appended (unfold with step 1); `axes` `None` means every axis in order.
    SlidingWindowView {
        /// The window size on each listed axis.
        window: Vec<D>,
        /// The axes, in the order their window axes are appended; `None`: all axes.
        axes: Option<Vec<usize>>,
    },
    /// NumPy's `copy()` (PyTorch's `clone()`): always a copy, in the same shape, row-major.
    /// On one view an error (not one view of the same buffer); a
    /// [`ViewStack`](crate::ViewStack) stacks a row-major view on top, unmerged.
    Copy,
    /// NumPy's `flatten()`: always a copy, as one axis (unlike PyTorch's `flatten`, a
    /// reshape that may be a view).
    FlattenCopy,
    /// NumPy's `astype(to, copy=...)` on elements of type `from` (and `asarray(a, dtype=to)`
    /// with `copy` false): a copy when the types differ or `copy` is set, else the view itself.
    #[cfg_attr(feature = "serde", serde(rename = "astype"))]
    AsType {
        /// The element type of the input.
        from: DType,
        /// The element type asked for.
        to: DType,
        /// Whether to copy even when the types agree (NumPy's default is `true`).
        copy: bool,
    },
    /// NumPy's fancy indexing along one axis (`np.take(a, indices, axis)`, `a[:, [1, 3]]`):
    /// a copy whose `axis` holds the listed indices (negative ones count from the end).
    /// On a [`ViewStack`](crate::ViewStack) the result is a new stack over a fresh
    /// row-major buffer, which the kernels fill (`symshape_kernels::gather`).
    Take {
        /// The axis indexed.
        axis: usize,
        /// The indices, each in `-dim..dim`.
        indices: Vec<D>,
    },
    /// NumPy's boolean indexing along one axis (`a[:, m]`): a copy keeping the indices of
    /// `axis` whose entry of `mask` (one per index) is true; a new stack, as [`Op::Take`].
    Compress {
        /// The axis indexed.
        axis: usize,
        /// One entry per index of the axis.
        mask: Vec<bool>,
    },
    /// NumPy's boolean indexing by a mask of the whole shape (`a[a > 0]`): a copy of the
    /// elements whose mask entry (row-major, one per element) is true, as one axis; a new
    /// stack, as [`Op::Take`].
    BooleanMask(Vec<bool>),
}

impl<D> Op<D> {
    /// The rank of the op's result on a view of rank `ndim` when the op's arguments are
    /// valid for it, counted from the argument lengths without looking at any size.
    #[inline]
    fn result_rank(&self, ndim: usize) -> usize {
        match self {
            Op::Reshape(s) | Op::Expand(s) | Op::BroadcastTo(s) | Op::ViewShape(s) => s.len(),
            Op::AsStrided { shape, .. } => shape.len(),
            Op::Index(items) => crate::index::index_result_rank(items, ndim),
            Op::Unsqueeze(_) | Op::Unfold { .. } | Op::ViewAsReal => ndim.saturating_add(1),
            Op::SlidingWindowView { window, .. } => ndim.saturating_add(window.len()),
            Op::Unflatten { sizes, .. } => ndim.saturating_sub(1).saturating_add(sizes.len()),
            _ => ndim,
        }
    }

    /// Refuses the op on a view of rank `ndim` (described by `ctx`) when its result
    /// would have more than [`MAX_RANK`](crate::MAX_RANK) axes: the one check, run by
    /// every `apply` before any work, that keeps every view within the limit.
    #[inline]
    pub(crate) fn check_rank(
        &self,
        ndim: usize,
        ctx: impl FnOnce() -> String,
    ) -> crate::Result<()> {
        crate::concrete::check_rank_of(
            || self.name(),
            self.result_rank(ndim),
            || format!("the result on {}", ctx()),
        )
    }

    /// The op's name, as error messages and traces print it.
    #[inline]
    pub fn name(&self) -> &'static str {
        match self {
            Op::Reshape(_) => "reshape",
            Op::Expand(_) => "expand",
            Op::Permute(_) => "permute",
            Op::Shrink(_) => "shrink",
            Op::Pad(_) => "pad",
            Op::Flip(_) => "flip",
            Op::Index(_) => "index",
            Op::Unfold { .. } => "unfold",
            Op::Diagonal { .. } => "diagonal",
            Op::Squeeze(_) => "squeeze",
            Op::SqueezeProven => "squeeze_proven",
            Op::Unsqueeze(_) => "unsqueeze",
            Op::Transpose(..) => "transpose",
            Op::Movedim { .. } => "movedim",
            Op::BroadcastTo(_) => "broadcast_to",
            Op::Narrow { .. } => "narrow",
            Op::Flatten { .. } => "flatten",
            Op::Unflatten { .. } => "unflatten",
            Op::Split { .. } => "split",
            Op::SplitSizes { .. } => "split_sizes",
            Op::Chunk { .. } => "chunk",
            Op::Select { .. } => "select",
            Op::TensorSplit { .. } | Op::TensorSplitAt { .. } => "tensor_split",
            Op::DirectionalSplit { direction, .. } | Op::DirectionalSplitAt { direction, .. } => {
                direction.name()
            }
            Op::ReverseAxes => "T",
            Op::MatrixTranspose => "mT",
            Op::Reinterpret { .. } => "reinterpret",
            Op::ViewAsReal => "view_as_real",
            Op::ViewAsComplex => "view_as_complex",
            Op::Real => "real",
            Op::Imag => "imag",
            Op::Ravel => "ravel",
            Op::Contiguous => "contiguous",
            Op::T => "t",
            Op::ConjTranspose => "H",
            Op::MatrixConjTranspose => "mH",
            Op::Adjoint => "adjoint",
            Op::Rot90 { .. } => "rot90",
            Op::ViewShape(_) => "view_shape",
            Op::AsStrided { .. } => "as_strided",
            Op::SlidingWindowView { .. } => "sliding_window_view",
            Op::Copy => "copy",
            Op::FlattenCopy => "flatten_copy",
            Op::AsType { .. } => "astype",
            Op::Take { .. } => "take",
            Op::Compress { .. } => "compress",
            Op::BooleanMask(_) => "boolean_mask",
        }
    }

    /// Whether the op returns a copy whatever its input: NumPy's `copy`, `flatten`, fancy
    /// and boolean indexing, and `astype` to another type or with `copy` set. `ravel`,
    /// `contiguous` and `reshape` copy only when their input is not laid out for a view
    /// ([`ViewStack::copies`](crate::ViewStack::copies) decides for a given stack).
    #[must_use]
    pub fn always_copies(&self) -> bool {
        match self {
            Op::Copy
            | Op::FlattenCopy
            | Op::Take { .. }
            | Op::Compress { .. }
            | Op::BooleanMask(_) => true,
            Op::AsType { from, to, copy } => *copy || from != to,
            _ => false,
        }
    }

    /// Whether the op is a core op that an engine runs on a view's fields alone: reshape,
    /// expand, permute, shrink, pad, flip, unsqueeze, unfold and diagonal. Such an op
    /// lowers to nothing, copies nothing, gathers nothing and reads one view, so the
    /// dispatch takes it to its engine at once.
    #[inline]
    pub(crate) fn is_field_op(&self) -> bool {
        matches!(
            self,
            Op::Reshape(_)
                | Op::Expand(_)
                | Op::Permute(_)
                | Op::Shrink(_)
                | Op::Pad(_)
                | Op::Flip(_)
                | Op::Unsqueeze(_)
                | Op::Unfold { .. }
                | Op::Diagonal { .. }
        )
    }

    /// Whether the result reads a new buffer that the kernels fill by gathering elements
    /// of the input (fancy and boolean indexing), rather than the input's own buffer.
    #[must_use]
    pub fn is_gather(&self) -> bool {
        matches!(
            self,
            Op::Take { .. } | Op::Compress { .. } | Op::BooleanMask(_)
        )
    }
}

impl<D> Op<D> {
    /// The permutation of the ops that reorder axes by a rule of the rank alone (`T`, `mT`,
    /// `t`, `H`, `mH`, `adjoint`) for a view of rank `ndim` (described by `ctx`), with
    /// PyTorch's refusals; `None` for every other op.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) naming the op: `mT`, `mH` and `adjoint` on
    /// rank 1 (rank 0 is its own transpose), `H` on a rank other than 0 and 2, `t` above
    /// rank 2.
    pub(crate) fn rank_permutation(
        &self,
        ndim: usize,
        ctx: impl FnOnce() -> String,
    ) -> crate::Result<Option<Vec<usize>>> {
        let mut axes: Vec<usize> = (0..ndim).collect();
        let name = self.name();
        let refuse = |detail: String| Err(crate::error::invalid(name, detail));
        match self {
            Op::ReverseAxes => axes.reverse(),
            Op::MatrixTranspose | Op::MatrixConjTranspose | Op::Adjoint => {
                let torch = if let Op::Adjoint = self {
                    "adjoint()"
                } else {
                    name
                };
                match ndim {
                    0 => {}
                    1 => {
                        return refuse(format!(
                            "tensor.{torch} is only supported on matrices or batches of matrices, but {} is a 1-D tensor",
                            ctx()
                        ))
                    }
                    _ => axes.swap(ndim - 2, ndim - 1),
                }
            }
            Op::ConjTranspose => match ndim {
                0 => {}
                2 => axes.swap(0, 1),
                _ => {
                    let batches = if ndim > 2 {
                        "; for batches of matrices, consider using tensor.mH"
                    } else {
                        ""
                    };
                    return refuse(format!(
                        "tensor.H is only supported on matrices (2-D tensors), but {} is a {ndim}-D tensor{batches}",
                        ctx()
                    ));
                }
            },
            Op::T => match ndim {
                0 | 1 => {}
                2 => axes.swap(0, 1),
                _ => {
                    return refuse(format!(
                        "t() expects a tensor with <= 2 dimensions, but self ({}) is {ndim}D",
                        ctx()
                    ))
                }
            },
            _ => return Ok(None),
        }
        Ok(Some(axes))
    }
}

/// The windows of NumPy's `sliding_window_view(x, window, axes)` on a view of `shape` (a
/// size is `None` when it is symbolic; `ctx` describes the view): `(axis, size)` per window
/// in order, each an unfold with step 1, after NumPy's checks.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) with NumPy's reasons: a window count that
/// does not match the axes (all of them for `None`), an axis out of range, a negative
/// window, a window larger than what is left of its axis.
pub(crate) fn sliding_windows<D: Dim>(
    window: &[D],
    axes: Option<&[usize]>,
    shape: &[Option<i64>],
    ctx: impl Fn() -> String,
) -> crate::Result<Vec<(usize, D)>> {
    const OP: &str = "sliding_window_view";
    let ndim = shape.len();
    let all: Vec<usize> = (0..ndim).collect();
    let axes = match axes {
        None if window.len() != ndim => {
            return Err(crate::error::invalid(
                OP,
                format!(
                    "since axis is `None`, must provide window_shape for all dimensions of `x`; got {} window_shape elements and `x.ndim` is {ndim}, for {}",
                    window.len(),
                    ctx()
                ),
            ))
        }
        None => all.as_slice(),
        Some(a) if a.len() != window.len() => {
            return Err(crate::error::invalid(
                OP,
                format!(
                    "must provide matching length window_shape and axis; got {} window_shape elements and {} axes elements, for {}",
                    window.len(),
                    a.len(),
                    ctx()
                ),
            ))
        }
        Some(a) => a,
    };
    if window.iter().any(|w| w.as_const().is_some_and(|w| w < 0)) {
        return Err(crate::error::invalid(
            OP,
            format!(
                "`window_shape` cannot contain negative values, got {}, for {}",
                fmt_list(window),
                ctx()
            ),
        ));
    }
    let mut trimmed = shape.to_vec();
    let mut out = Vec::with_capacity(axes.len());
    for (&axis, &w) in axes.iter().zip(window) {
        let Some(d) = trimmed.get_mut(axis) else {
            return Err(crate::error::bad_axis(OP, &ctx(), axis, ndim));
        };
        if let (Some(x), Some(w)) = (*d, w.as_const()) {
            if x < w {
                return Err(crate::error::invalid(
                    OP,
                    format!(
                        "window shape cannot be larger than input array shape: window {w} on axis {axis}, which has {x} indices left, for {}",
                        ctx()
                    ),
                ));
            }
            *d = Some(x - w + 1);
        } else {
            *d = None;
        }
        out.push((axis, w));
    }
    Ok(out)
}

/// PyTorch's argument checks of `as_strided(size, stride, storage_offset)` that do not
/// need the storage: as many strides as sizes, no negative stride, no negative offset
/// (constants; symbolic ones are proven or guarded by the op).
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) with PyTorch's reason.
pub(crate) fn as_strided_args<D: Dim>(shape: &[D], strides: &[D], offset: D) -> crate::Result<()> {
    if shape.len() != strides.len() {
        return Err(crate::error::invalid(
            "as_strided",
            format!(
                "mismatch in length of strides and shape: shape {} has {} entries, strides {} have {}",
                fmt_list(shape),
                shape.len(),
                fmt_list(strides),
                strides.len()
            ),
        ));
    }
    if strides.iter().any(|t| t.as_const().is_some_and(|t| t < 0)) {
        return Err(as_strided_negative(shape, strides, None));
    }
    if offset.as_const().is_some_and(|o| o < 0) {
        return Err(as_strided_negative(shape, strides, Some(offset)));
    }
    Ok(())
}

/// PyTorch's refusal of a negative stride (`offset` is `None`) or a negative storage
/// offset in `as_strided`.
pub(crate) fn as_strided_negative<D: Dim>(
    shape: &[D],
    strides: &[D],
    offset: Option<D>,
) -> crate::Error {
    let why = match offset {
        None => format!(
            "negative strides are not supported at the moment, got strides: {} (for shape {})",
            fmt_list(strides),
            fmt_list(shape)
        ),
        Some(o) => format!(
            "tensor: invalid storage offset {o} (for shape {} with strides {})",
            fmt_list(shape),
            fmt_list(strides)
        ),
    };
    crate::error::invalid("as_strided", why)
}

impl<D: Copy> Op<D> {
    /// The same op with every size argument passed through `f`.
    pub fn map<E>(&self, mut f: impl FnMut(D) -> E) -> Op<E> {
        fn list<D: Copy, E>(v: &[D], f: &mut impl FnMut(D) -> E) -> Vec<E> {
            v.iter().map(|&x| f(x)).collect()
        }
        match self {
            Op::Reshape(s) => Op::Reshape(list(s, &mut f)),
            Op::Expand(s) => Op::Expand(list(s, &mut f)),
            Op::BroadcastTo(s) => Op::BroadcastTo(list(s, &mut f)),
            Op::Permute(a) => Op::Permute(a.clone()),
            Op::Flip(a) => Op::Flip(a.clone()),
            Op::Shrink(p) => Op::Shrink(p.iter().map(|&(a, b)| (f(a), f(b))).collect()),
            Op::Pad(p) => Op::Pad(p.iter().map(|&(a, b)| (f(a), f(b))).collect()),
            Op::Index(items) => Op::Index(items.iter().map(|it| it.map(&mut f)).collect()),
            Op::Unfold { axis, size, step } => Op::Unfold {
                axis: *axis,
                size: f(*size),
                step: f(*step),
            },
            Op::Diagonal { offset, dim1, dim2 } => Op::Diagonal {
                offset: f(*offset),
                dim1: *dim1,
                dim2: *dim2,
            },
            Op::Squeeze(a) => Op::Squeeze(a.clone()),
            Op::SqueezeProven => Op::SqueezeProven,
            Op::Unsqueeze(a) => Op::Unsqueeze(*a),
            Op::Transpose(a, b) => Op::Transpose(*a, *b),
            Op::Movedim { src, dst } => Op::Movedim {
                src: *src,
                dst: *dst,
            },
            Op::Narrow {
                axis,
                start,
                length,
            } => Op::Narrow {
                axis: *axis,
                start: f(*start),
                length: f(*length),
            },
            Op::Flatten { start, end } => Op::Flatten {
                start: *start,
                end: *end,
            },
            Op::Unflatten { axis, sizes } => Op::Unflatten {
                axis: *axis,
                sizes: list(sizes, &mut f),
            },
            Op::Split { axis, size, piece } => Op::Split {
                axis: *axis,
                size: f(*size),
                piece: f(*piece),
            },
            Op::SplitSizes { axis, sizes, piece } => Op::SplitSizes {
                axis: *axis,
                sizes: list(sizes, &mut f),
                piece: *piece,
            },
            Op::Chunk {
                axis,
                chunks,
                piece,
            } => Op::Chunk {
                axis: *axis,
                chunks: *chunks,
                piece: *piece,
            },
            Op::Select { axis, index } => Op::Select {
                axis: *axis,
                index: f(*index),
            },
            Op::TensorSplit {
                axis,
                sections,
                piece,
            } => Op::TensorSplit {
                axis: *axis,
                sections: *sections,
                piece: *piece,
            },
            Op::TensorSplitAt {
                axis,
                indices,
                piece,
            } => Op::TensorSplitAt {
                axis: *axis,
                indices: list(indices, &mut f),
                piece: *piece,
            },
            Op::DirectionalSplit {
                direction,
                sections,
                piece,
            } => Op::DirectionalSplit {
                direction: *direction,
                sections: *sections,
                piece: *piece,
            },
            Op::DirectionalSplitAt {
                direction,
                indices,
                piece,
            } => Op::DirectionalSplitAt {
                direction: *direction,
                indices: list(indices, &mut f),
                piece: *piece,
            },
            Op::ReverseAxes => Op::ReverseAxes,
            Op::MatrixTranspose => Op::MatrixTranspose,
            Op::Reinterpret { from, to } => Op::Reinterpret {
                from: *from,
                to: *to,
            },
            Op::ViewAsReal => Op::ViewAsReal,
            Op::ViewAsComplex => Op::ViewAsComplex,
            Op::Real => Op::Real,
            Op::Imag => Op::Imag,
            Op::Ravel => Op::Ravel,
            Op::Contiguous => Op::Contiguous,
            Op::T => Op::T,
            Op::ConjTranspose => Op::ConjTranspose,
            Op::MatrixConjTranspose => Op::MatrixConjTranspose,
            Op::Adjoint => Op::Adjoint,
            Op::Rot90 { k, axes } => Op::Rot90 { k: *k, axes: *axes },
            Op::ViewShape(s) => Op::ViewShape(list(s, &mut f)),
            Op::AsStrided {
                shape,
                strides,
                offset,
            } => Op::AsStrided {
                shape: list(shape, &mut f),
                strides: list(strides, &mut f),
                offset: f(*offset),
            },
            Op::SlidingWindowView { window, axes } => Op::SlidingWindowView {
                window: list(window, &mut f),
                axes: axes.clone(),
            },
            Op::Copy => Op::Copy,
            Op::FlattenCopy => Op::FlattenCopy,
            Op::AsType { from, to, copy } => Op::AsType {
                from: *from,
                to: *to,
                copy: *copy,
            },
            Op::Take { axis, indices } => Op::Take {
                axis: *axis,
                indices: list(indices, &mut f),
            },
            Op::Compress { axis, mask } => Op::Compress {
                axis: *axis,
                mask: mask.clone(),
            },
            Op::BooleanMask(mask) => Op::BooleanMask(mask.clone()),
        }
    }
}

impl<D: Dim> Op<D> {
    /// The op with `i64` arguments, or `None` when an argument is symbolic.
    #[must_use]
    pub fn to_const(&self) -> Option<Op<i64>> {
        let mut all = true;
        let res = self.map(|d| match d.as_const() {
            Some(c) => c,
            None => {
                all = false;
                0
            }
        });
        all.then_some(res)
    }

    /// The op with expression arguments.
    #[must_use]
    pub fn to_expr(&self) -> Op<Expr> {
        self.map(Into::into)
    }
}

/// The op with `i64` arguments, borrowed when it has them already; `None` when an
/// argument is symbolic.
pub(crate) fn const_op<D: Dim>(op: &Op<D>) -> Option<Cow<'_, Op<i64>>> {
    match (op as &dyn Any).downcast_ref::<Op<i64>>() {
        Some(k) => Some(Cow::Borrowed(k)),
        None => op.to_const().map(Cow::Owned),
    }
}

impl From<Op<i64>> for Op<Expr> {
    fn from(op: Op<i64>) -> Op<Expr> {
        op.to_expr()
    }
}

impl<D: fmt::Display> fmt::Display for Op<D> {
    /// The op as the `shapetrace` runner writes it: `reshape [n, 12, 64]`,
    /// `shrink [(1, n - 1), (0, 64)]`, `index [1:, None]`, `unfold 0 size 3 step 1`,
    /// `diagonal [0, 1] offset k`, `split 0 size 4 piece 1`,
    /// `tensor_split 0 at [2, n] 1`, `mT`, `reinterpret 4 2`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            Op::Reshape(s) | Op::Expand(s) | Op::BroadcastTo(s) | Op::ViewShape(s) => {
                write!(f, "{name} {}", fmt_list(s))
            }
            Op::Permute(a) | Op::Flip(a) => write!(f, "{name} {}", fmt_list(a)),
            Op::Shrink(p) | Op::Pad(p) => write!(f, "{name} {}", fmt_pairs(p)),
            Op::Index(items) => write!(f, "{name} {}", fmt_list(items)),
            Op::Unfold { axis, size, step } => write!(f, "{name} {axis} size {size} step {step}"),
            Op::Diagonal { offset, dim1, dim2 } => {
                write!(f, "{name} [{dim1}, {dim2}] offset {offset}")
            }
            Op::Squeeze(None) => write!(f, "{name}"),
            Op::Squeeze(Some(a)) => write!(f, "{name} {}", fmt_list(a)),
            Op::Unsqueeze(a) => write!(f, "{name} {a}"),
            Op::Transpose(a, b) => write!(f, "{name} {a} {b}"),
            Op::Movedim { src, dst } => write!(f, "{name} {src} {dst}"),
            Op::Narrow {
                axis,
                start,
                length,
            } => write!(f, "{name} {axis} start {start} length {length}"),
            Op::Flatten { start, end } => write!(f, "{name} {start} {end}"),
            Op::Unflatten { axis, sizes } => {
                write!(f, "{name} {axis} {}", fmt_list(sizes))
            }
            Op::Split { axis, size, piece } => write!(f, "{name} {axis} size {size} piece {piece}"),
            Op::SplitSizes { axis, sizes, piece } => {
                write!(f, "{name} {axis} {} piece {piece}", fmt_list(sizes))
            }
            Op::Chunk {
                axis,
                chunks,
                piece,
            } => write!(f, "{name} {axis} chunks {chunks} piece {piece}"),
            Op::Select { axis, index } => write!(f, "{name} {axis} index {index}"),
            Op::TensorSplit {
                axis,
                sections,
                piece,
            } => write!(f, "{name} {axis} sections {sections} {piece}"),
            Op::TensorSplitAt {
                axis,
                indices,
                piece,
            } => write!(f, "{name} {axis} at {} {piece}", fmt_list(indices)),
            Op::DirectionalSplit {
                sections, piece, ..
            } => write!(f, "{name} sections {sections} {piece}"),
            Op::DirectionalSplitAt { indices, piece, .. } => {
                write!(f, "{name} at {} {piece}", fmt_list(indices))
            }
            Op::ReverseAxes
            | Op::SqueezeProven
            | Op::MatrixTranspose
            | Op::ViewAsReal
            | Op::ViewAsComplex
            | Op::Real
            | Op::Imag
            | Op::Ravel
            | Op::Contiguous
            | Op::T
            | Op::ConjTranspose
            | Op::MatrixConjTranspose
            | Op::Adjoint
            | Op::Copy
            | Op::FlattenCopy => write!(f, "{name}"),
            Op::Reinterpret { from, to } => write!(f, "{name} {from} {to}"),
            Op::Rot90 { k, axes: [a, b] } => write!(f, "{name} {k} {a} {b}"),
            Op::AsStrided {
                shape,
                strides,
                offset,
            } => write!(
                f,
                "{name} {} strides {} offset {offset}",
                fmt_list(shape),
                fmt_list(strides)
            ),
            Op::SlidingWindowView { window, axes } => {
                write!(f, "{name} {}", fmt_list(window))?;
                match axes {
                    Some(a) => write!(f, " axis {}", fmt_list(a)),
                    None => Ok(()),
                }
            }
            Op::AsType { from, to, copy } => {
                write!(f, "{name} {from} {to}")?;
                if *copy {
                    Ok(())
                } else {
                    write!(f, " copy false")
                }
            }
            Op::Take { axis, indices } => {
                write!(f, "{name} {axis} {}", fmt_list(indices))
            }
            Op::Compress { axis, mask } => {
                write!(f, "{name} {axis} {}", fmt_list(mask))
            }
            Op::BooleanMask(mask) => write!(f, "{name} {}", fmt_list(mask)),
        }
    }
}

/// Which of PyTorch's `hsplit`, `vsplit` and `dsplit` an [`Op::DirectionalSplit`]
/// is, and so which axis it cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum SplitDirection {
    /// `hsplit`: axis 1, or axis 0 of a view of rank 1.
    Horizontal,
    /// `vsplit`: axis 0 of a view of rank at least 2.
    Vertical,
    /// `dsplit`: axis 2 of a view of rank at least 3.
    Depth,
}

impl SplitDirection {
    /// The op's name: `hsplit`, `vsplit` or `dsplit`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SplitDirection::Horizontal => "hsplit",
            SplitDirection::Vertical => "vsplit",
            SplitDirection::Depth => "dsplit",
        }
    }

    /// The axis the split cuts in a view of rank `ndim` (described by `ctx`), with
    /// PyTorch's refusal of a rank too small.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `ndim` is below 1, 2 or 3.
    pub(crate) fn axis(self, ndim: usize, ctx: impl FnOnce() -> String) -> crate::Result<usize> {
        let (need, axis) = match self {
            SplitDirection::Horizontal => (1, usize::from(ndim > 1)),
            SplitDirection::Vertical => (2, 0),
            SplitDirection::Depth => (3, 2),
        };
        if ndim < need {
            let op = self.name();
            return Err(crate::error::invalid(
                op,
                format!(
                    "torch.{op} requires a tensor with at least {need} dimension{}, but {} has {ndim}",
                    if need == 1 { "" } else { "s" },
                    ctx()
                ),
            ));
        }
        Ok(axis)
    }

    /// PyTorch's refusal of `sections` that do not divide the size `d` of `axis`
    /// (`proven`: whether `d` is a constant or only not provably divisible).
    pub(crate) fn indivisible(
        self,
        axis: usize,
        d: impl fmt::Display,
        constant: bool,
        sections: usize,
        ctx: &str,
    ) -> crate::Error {
        let op = self.name();
        crate::error::invalid(
            op,
            format!(
                "torch.{op} attempted to split along dimension {axis}, but the size of the dimension {d} is not {}divisible by the split_size {sections}, for {ctx}",
                if constant { "" } else { "provably " },
            ),
        )
    }
}

/// The ops whose result is a view of the same buffer or a copy, and which copy into a
/// row-major layout: [`Op::Ravel`] and [`Op::Contiguous`] (a view when the view is
/// C-contiguous, NumPy's `C_CONTIGUOUS`, which is also PyTorch's `is_contiguous`), NumPy's
/// `copy` and `flatten` (always a copy) and `astype` (a copy unless the type stays and no
/// copy is asked for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopyOp {
    /// NumPy's `ravel`: the elements as one axis.
    Ravel,
    /// PyTorch's `contiguous`: the same shape.
    Contiguous,
    /// NumPy's `copy`: the same shape, always a copy.
    Copy,
    /// NumPy's `flatten`: one axis, always a copy.
    FlattenCopy,
    /// NumPy's `astype`: the same shape.
    AsType {
        /// The input's element type.
        from: DType,
        /// The result's element type.
        to: DType,
        /// Whether a copy is asked for even when the types agree.
        copy: bool,
    },
}

impl CopyOp {
    /// The op of `op`, if it is one of them.
    #[inline]
    pub(crate) fn of<D>(op: &Op<D>) -> Option<CopyOp> {
        match *op {
            Op::Ravel => Some(CopyOp::Ravel),
            Op::Contiguous => Some(CopyOp::Contiguous),
            Op::Copy => Some(CopyOp::Copy),
            Op::FlattenCopy => Some(CopyOp::FlattenCopy),
            Op::AsType { from, to, copy } => Some(CopyOp::AsType { from, to, copy }),
            _ => None,
        }
    }

    /// The op itself.
    pub(crate) fn op(self) -> Op<i64> {
        match self {
            CopyOp::Ravel => Op::Ravel,
            CopyOp::Contiguous => Op::Contiguous,
            CopyOp::Copy => Op::Copy,
            CopyOp::FlattenCopy => Op::FlattenCopy,
            CopyOp::AsType { from, to, copy } => Op::AsType { from, to, copy },
        }
    }

    pub(crate) fn name(self) -> &'static str {
        self.op().name()
    }

    /// Why the op copies whatever the view's layout, when it does.
    pub(crate) fn always(self) -> Option<String> {
        match self {
            CopyOp::Copy | CopyOp::FlattenCopy => Some("it always copies".to_string()),
            CopyOp::AsType { from, to, .. } if from != to => {
                Some(format!("the element type changes from {from} to {to}"))
            }
            CopyOp::AsType { copy: true, .. } => Some(
                "copy is set (NumPy's default), so it copies even to the same element type"
                    .to_string(),
            ),
            _ => None,
        }
    }

    /// Whether the op is the view itself whatever its layout (`astype` to the same type
    /// without a copy).
    pub(crate) fn never(self) -> bool {
        matches!(self, CopyOp::AsType { from, to, copy: false } if from == to)
    }

    /// The shape of the result for a view or stack of `shape` with `numel` elements.
    pub(crate) fn shape<T: Copy>(self, shape: &[T], numel: T) -> Vec<T> {
        match self {
            CopyOp::Ravel | CopyOp::FlattenCopy => vec![numel],
            _ => shape.to_vec(),
        }
    }

    /// The refusal of the op on the one view `ctx`, which it copies because `why`.
    pub(crate) fn refusal(self, ctx: &str, why: &str) -> Error {
        let whose = match self {
            CopyOp::Ravel => "NumPy's ravel".to_string(),
            CopyOp::Contiguous => "PyTorch's contiguous".to_string(),
            CopyOp::Copy => "NumPy's copy".to_string(),
            CopyOp::FlattenCopy => "NumPy's flatten".to_string(),
            CopyOp::AsType { from, to, .. } => format!("NumPy's astype from {from} to {to}"),
        };
        unrepresentable(
            self.name(),
            format!(
                "{whose} of {ctx} is a copy: {why}; use a ViewStack, which stacks a row-major view on it"
            ),
        )
    }
}
