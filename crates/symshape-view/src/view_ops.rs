//! [`ViewOps`]: the named view ops, written once as sugar over [`Op`] and `apply`,
//! for [`View`], [`ViewStack`] and [`ConcreteView`]: the only named-op surface.

use std::borrow::Cow;

use symshape::{Expr, Scope};

use crate::concrete::{ConcreteView, MAX_PIECES};
use crate::dim::Dim;
use crate::dtype::DType;
use crate::error::{invalid, Error, Result};
use crate::index::IndexItem;
use crate::op::{const_op, Op, SplitDirection};
use crate::stack::ViewStack;
use crate::view::View;

/// A [`ViewOps`] method of no argument but the scope that applies `Op::OP`, for each
/// `name => OP`.
macro_rules! unit_ops {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        fn $name(&self, cx: &Scope) -> Result<Self> {
            self.apply_dim(cx, &Op::<i64>::$op)
        }
    )*};
}

/// The view ops by name. Every method builds an [`Op`] and runs
/// [`ViewOps::apply_dim`]; ops that cut an axis into pieces apply one op per piece.
///
/// Every op takes the caller's [`Scope`]: on symbolic views its declarations and
/// assumptions decide which preconditions are proven, refuted or kept as guards.
/// Size arguments are `i64` or [`Expr`] ([`Dim`]); with `i64` arguments a concrete
/// view never touches the expression interner.
///
/// ```
/// use symshape::Scope;
/// use symshape_view::{View, ViewOps, ViewStack};
///
/// let cx = Scope::new();
/// let v = ViewStack::new(View::contiguous(&[3, 2])?);
/// let t = v.transpose(&cx, 0, 1)?.reshape(&cx, &[6i64])?;
/// assert_eq!(t.views().len(), 2); // a transpose is not one flat view
/// let rows = v.unbind(&cx, 0)?;
/// assert_eq!(rows.len(), 3);
/// # Ok::<(), symshape_view::Error>(())
/// ```
pub trait ViewOps: Sized {
    /// Runs `op` under `cx` ([`View::apply_dim`], [`ViewStack::apply_dim`]).
    ///
    /// # Errors
    /// As [`View::apply`] or [`ViewStack::apply`].
    fn apply_dim<D: Dim>(&self, cx: &Scope, op: &Op<D>) -> Result<Self>;

    /// The view whose shape the ops act on (the top of a stack; a concrete view as a
    /// [`View`]).
    fn top_view(&self) -> Cow<'_, View>;

    /// Reinterprets the elements in row-major order ([`Op::Reshape`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn reshape<D: Dim>(&self, cx: &Scope, shape: &[D]) -> Result<Self> {
        self.apply_dim(cx, &Op::Reshape(shape.to_vec()))
    }

    /// Broadcasts size-1 axes ([`Op::Expand`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn expand<D: Dim>(&self, cx: &Scope, shape: &[D]) -> Result<Self> {
        self.apply_dim(cx, &Op::Expand(shape.to_vec()))
    }

    /// Reorders axes ([`Op::Permute`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn permute(&self, cx: &Scope, axes: &[usize]) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Permute(axes.to_vec()))
    }

    /// Keeps `[start, end)` of every axis ([`Op::Shrink`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn shrink<D: Dim>(&self, cx: &Scope, bounds: &[(D, D)]) -> Result<Self> {
        self.apply_dim(cx, &Op::Shrink(bounds.to_vec()))
    }

    /// Adds masked-out padding ([`Op::Pad`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn pad<D: Dim>(&self, cx: &Scope, padding: &[(D, D)]) -> Result<Self> {
        self.apply_dim(cx, &Op::Pad(padding.to_vec()))
    }

    /// Reverses the listed axes ([`Op::Flip`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn flip(&self, cx: &Scope, axes: &[usize]) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Flip(axes.to_vec()))
    }

    /// NumPy basic indexing ([`Op::Index`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn index<D: Dim>(&self, cx: &Scope, items: &[IndexItem<D>]) -> Result<Self> {
        self.apply_dim(cx, &Op::Index(items.to_vec()))
    }

    /// Sliding windows along `axis`, appended last ([`Op::Unfold`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn unfold<D: Dim>(&self, cx: &Scope, axis: usize, size: D, step: D) -> Result<Self> {
        self.apply_dim(cx, &Op::Unfold { axis, size, step })
    }

    /// The diagonal of two axes, appended last ([`Op::Diagonal`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn diagonal<D: Dim>(&self, cx: &Scope, offset: D, dim1: usize, dim2: usize) -> Result<Self> {
        self.apply_dim(cx, &Op::Diagonal { offset, dim1, dim2 })
    }

    /// Removes the listed size-1 axes, or every size-1 axis ([`Op::Squeeze`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn squeeze(&self, cx: &Scope, axes: Option<&[usize]>) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Squeeze(axes.map(<[usize]>::to_vec)))
    }

    /// Removes the axes provably of size 1 under `cx` and keeps the others without a
    /// guard ([`Op::SqueezeProven`]): on `[b, 1, s]` it gives `[b, s]` for every `b`.
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn squeeze_proven(&self, cx: &Scope) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::SqueezeProven)
    }

    /// Inserts a size-1 axis ([`Op::Unsqueeze`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn unsqueeze(&self, cx: &Scope, axis: usize) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Unsqueeze(axis))
    }

    /// Swaps two axes ([`Op::Transpose`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn transpose(&self, cx: &Scope, a: usize, b: usize) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Transpose(a, b))
    }

    /// NumPy's name for [`ViewOps::transpose`] of two axes.
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn swapaxes(&self, cx: &Scope, a: usize, b: usize) -> Result<Self> {
        self.transpose(cx, a, b)
    }

    /// PyTorch's `swapdims`, another name for [`ViewOps::transpose`].
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn swapdims(&self, cx: &Scope, a: usize, b: usize) -> Result<Self> {
        self.transpose(cx, a, b)
    }

    /// PyTorch's `t()` ([`Op::T`]): axes 0 and 1 swapped on rank 2; ranks 0 and 1 are
    /// returned as they are.
    ///
    /// # Errors
    /// [`Error::Invalid`] above rank 2, with PyTorch's reason.
    fn t(&self, cx: &Scope) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::T)
    }

    /// Moves axis `src` to position `dst` ([`Op::Movedim`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn movedim(&self, cx: &Scope, src: usize, dst: usize) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Movedim { src, dst })
    }

    /// NumPy's and PyTorch's `moveaxis`, another name for [`ViewOps::movedim`].
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn moveaxis(&self, cx: &Scope, src: usize, dst: usize) -> Result<Self> {
        self.movedim(cx, src, dst)
    }

    /// PyTorch's `detach()`: the same view. It matters to autograd (the result takes no
    /// part in gradients), which views know nothing of, so no op is recorded.
    #[must_use]
    fn detach(&self) -> Self
    where
        Self: Clone,
    {
        self.clone()
    }

    /// PyTorch's `alias()`: the same view (a new tensor object over the same storage with
    /// the same sizes and strides); no op is recorded.
    #[must_use]
    fn alias(&self) -> Self
    where
        Self: Clone,
    {
        self.clone()
    }

    /// NumPy's `broadcast_to` ([`Op::BroadcastTo`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn broadcast_to<D: Dim>(&self, cx: &Scope, shape: &[D]) -> Result<Self> {
        self.apply_dim(cx, &Op::BroadcastTo(shape.to_vec()))
    }

    /// Keeps `length` indices of `axis` from `start` ([`Op::Narrow`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn narrow<D: Dim>(&self, cx: &Scope, axis: usize, start: D, length: D) -> Result<Self> {
        self.apply_dim(
            cx,
            &Op::Narrow {
                axis,
                start,
                length,
            },
        )
    }

    /// Merges axes `start..=end` ([`Op::Flatten`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn flatten(&self, cx: &Scope, start: usize, end: usize) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Flatten { start, end })
    }

    /// Splits `axis` into `sizes` ([`Op::Unflatten`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn unflatten<D: Dim>(&self, cx: &Scope, axis: usize, sizes: &[D]) -> Result<Self> {
        self.apply_dim(
            cx,
            &Op::Unflatten {
                axis,
                sizes: sizes.to_vec(),
            },
        )
    }

    /// Index `index` of `axis`, with the axis removed ([`Op::Select`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn select<D: Dim>(&self, cx: &Scope, axis: usize, index: D) -> Result<Self> {
        self.apply_dim(cx, &Op::Select { axis, index })
    }

    /// Piece `piece` of [`ViewOps::split`], for a piece that may be symbolic
    /// ([`Op::Split`]); count the pieces with [`View::split_count`].
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn split_piece<D: Dim>(&self, cx: &Scope, axis: usize, size: D, piece: D) -> Result<Self> {
        self.apply_dim(cx, &Op::Split { axis, size, piece })
    }

    /// Cuts `axis` into pieces of `size` indices (the last may be smaller). The
    /// number of pieces, `max(cdiv(dim, size), 1)`, must be a constant of at most
    /// [`MAX_PIECES`]; otherwise take pieces one at a time with
    /// [`ViewOps::split_piece`].
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`]; [`Error::Invalid`] when the count is symbolic or
    /// above the limit.
    fn split<D: Dim>(&self, cx: &Scope, axis: usize, size: D) -> Result<Vec<Self>> {
        let count = self.top_view().split_count(cx, axis, size)?;
        let n = piece_count(&self.top_view(), "split", axis, count, || {
            format!(
                "split_piece({axis}, {}, i) for i below split_count",
                cx.simplify(size.into())
            )
        })?;
        match size.as_const() {
            Some(size) => pieces(self, cx, n, |piece| Op::<i64>::Split {
                axis,
                size,
                piece: piece as i64,
            }),
            None => pieces(self, cx, n, |piece| Op::Split {
                axis,
                size: size.into(),
                piece: Expr::from(piece as i64),
            }),
        }
    }

    /// Cuts `axis` into consecutive pieces of the given sizes, which must add up
    /// to it (proven or kept as a guard).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn split_sizes<D: Dim>(&self, cx: &Scope, axis: usize, sizes: &[D]) -> Result<Vec<Self>> {
        pieces(self, cx, sizes.len(), |piece| Op::SplitSizes {
            axis,
            sizes: sizes.to_vec(),
            piece,
        })
    }

    /// PyTorch's `chunk`: at most `chunks` pieces of `max(cdiv(dim, chunks), 1)`
    /// indices; the number of pieces must be a constant, as for [`ViewOps::split`].
    ///
    /// # Errors
    /// As [`ViewOps::split`].
    fn chunk(&self, cx: &Scope, axis: usize, chunks: usize) -> Result<Vec<Self>> {
        let top = self.top_view();
        let size = crate::engine::chunk_size(cx, &*top, axis, chunks)?;
        let count = top.split_count(cx, axis, size)?;
        let n = piece_count(&top, "chunk", axis, count, || {
            format!("split_piece({axis}, {size}, i) for i below split_count")
        })?;
        pieces(self, cx, n, |piece| Op::<i64>::Chunk {
            axis,
            chunks,
            piece,
        })
    }

    /// One piece per index of `axis`, with the axis removed; the size of `axis`
    /// must be a constant of at most [`MAX_PIECES`] (for a symbolic position,
    /// use [`ViewOps::select`]).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`]; [`Error::Symbolic`] when the size is symbolic.
    fn unbind(&self, cx: &Scope, axis: usize) -> Result<Vec<Self>> {
        let top = self.top_view();
        let d = crate::error::at_axis("unbind", top.shape(), axis, || top.ctx())?;
        let Some(n) = d.as_i64() else {
            return Err(Error::Symbolic {
                op: "unbind",
                what: "number of pieces (select with a symbolic index for one piece)",
                expr: d.to_string(),
            });
        };
        let n = piece_count(&top, "unbind", axis, Expr::from(n), || {
            format!("select({axis}, i) for i below {n}")
        })?;
        pieces(self, cx, n, |i| Op::<i64>::Select {
            axis,
            index: i as i64,
        })
    }

    /// PyTorch's `tensor_split` into `sections` pieces ([`Op::TensorSplit`]): exactly
    /// `sections` pieces, the first `dim % sections` one index longer; pieces may be
    /// empty. Works on symbolic axes (the bounds are `min`/`//`/`%` expressions).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`]; [`Error::Invalid`] when `sections` is 0 or above
    /// [`MAX_PIECES`].
    fn tensor_split(&self, cx: &Scope, axis: usize, sections: usize) -> Result<Vec<Self>> {
        let top = self.top_view();
        crate::error::at_axis("tensor_split", top.shape(), axis, || top.ctx())?;
        let n = i64::try_from(sections).unwrap_or(i64::MAX);
        piece_count(&top, "tensor_split", axis, Expr::from(n), || {
            format!("Op::TensorSplit {{ axis: {axis}, sections: {sections}, piece }}")
        })?;
        // Zero sections still apply one op, which reports them with PyTorch's words.
        pieces(self, cx, sections.max(1), |piece| Op::<i64>::TensorSplit {
            axis,
            sections,
            piece,
        })
    }

    /// PyTorch's `tensor_split` at `indices` ([`Op::TensorSplitAt`]): one more piece
    /// than indices, piece `k` the slice `indices[k - 1]:indices[k]` with Python's
    /// rules (negative indices count from the end, bounds clamp, a stop before its
    /// start gives an empty piece).
    ///
    /// # Errors
    /// As [`ViewOps::apply_dim`].
    fn tensor_split_at<D: Dim>(&self, cx: &Scope, axis: usize, indices: &[D]) -> Result<Vec<Self>> {
        pieces(self, cx, indices.len() + 1, |piece| Op::TensorSplitAt {
            axis,
            indices: indices.to_vec(),
            piece,
        })
    }

    /// PyTorch's `hsplit` into `sections` equal pieces: along axis 1, or axis 0 of a
    /// view of rank 1. The axis size must be provably divisible by `sections`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a view of rank 0 or a size not divisible; as
    /// [`ViewOps::tensor_split`].
    fn hsplit(&self, cx: &Scope, sections: usize) -> Result<Vec<Self>> {
        directional_split(self, cx, SplitDirection::Horizontal, sections)
    }

    /// PyTorch's `hsplit` at `indices` (axis 1, or 0 for rank 1), as
    /// [`ViewOps::tensor_split_at`].
    ///
    /// # Errors
    /// [`Error::Invalid`] for a view of rank 0; as [`ViewOps::tensor_split_at`].
    fn hsplit_at<D: Dim>(&self, cx: &Scope, indices: &[D]) -> Result<Vec<Self>> {
        directional_split_at(self, cx, SplitDirection::Horizontal, indices)
    }

    /// PyTorch's `vsplit` into `sections` equal pieces along axis 0 (rank at least 2).
    ///
    /// # Errors
    /// As [`ViewOps::hsplit`], with rank at least 2.
    fn vsplit(&self, cx: &Scope, sections: usize) -> Result<Vec<Self>> {
        directional_split(self, cx, SplitDirection::Vertical, sections)
    }

    /// PyTorch's `vsplit` at `indices` along axis 0 (rank at least 2).
    ///
    /// # Errors
    /// As [`ViewOps::hsplit_at`], with rank at least 2.
    fn vsplit_at<D: Dim>(&self, cx: &Scope, indices: &[D]) -> Result<Vec<Self>> {
        directional_split_at(self, cx, SplitDirection::Vertical, indices)
    }

    /// PyTorch's `dsplit` into `sections` equal pieces along axis 2 (rank at least 3).
    ///
    /// # Errors
    /// As [`ViewOps::hsplit`], with rank at least 3.
    fn dsplit(&self, cx: &Scope, sections: usize) -> Result<Vec<Self>> {
        directional_split(self, cx, SplitDirection::Depth, sections)
    }

    /// PyTorch's `dsplit` at `indices` along axis 2 (rank at least 3).
    ///
    /// # Errors
    /// As [`ViewOps::hsplit_at`], with rank at least 3.
    fn dsplit_at<D: Dim>(&self, cx: &Scope, indices: &[D]) -> Result<Vec<Self>> {
        directional_split_at(self, cx, SplitDirection::Depth, indices)
    }

    unit_ops! {
        /// NumPy's `ravel` ([`Op::Ravel`]): the elements in row-major order as one axis, a
        /// view of the same buffer when NumPy's `C_CONTIGUOUS` holds (proven, on a symbolic
        /// view). Otherwise NumPy copies: a [`ViewStack`](crate::ViewStack) stacks a
        /// row-major `[numel]` view on top, unmerged, which the kernels materialize.
        ///
        /// # Errors
        /// On a [`View`](crate::View), [`Error::NotRepresentable`] when NumPy copies (a mask,
        /// contiguity refuted or not proven), naming the condition when it depends on the
        /// symbols.
        ravel => Ravel;

        /// PyTorch's `contiguous` ([`Op::Contiguous`]): the view itself when it is contiguous
        /// (PyTorch's `is_contiguous`, NumPy's `C_CONTIGUOUS`; proven, on a symbolic view).
        /// Otherwise PyTorch copies: a [`ViewStack`](crate::ViewStack) stacks a row-major view
        /// of the same shape on top, unmerged, which the kernels materialize.
        ///
        /// # Errors
        /// On a [`View`](crate::View), [`Error::NotRepresentable`] when PyTorch copies.
        contiguous => Contiguous;
    }

    /// NumPy's `ascontiguousarray`: [`ViewOps::contiguous`] (the view itself when it is
    /// C-contiguous, else a copy), of at least one axis: a view of rank 0 is first reshaped
    /// to `[1]`, as NumPy returns an array with `ndim >= 1`. Records `reshape` (for rank 0)
    /// and `contiguous`.
    ///
    /// # Errors
    /// As [`ViewOps::contiguous`].
    fn ascontiguousarray(&self, cx: &Scope) -> Result<Self>
    where
        Self: Clone,
    {
        if self.top_view().ndim() == 0 {
            return self.reshape(cx, &[1i64])?.contiguous(cx);
        }
        self.contiguous(cx)
    }

    unit_ops! {
        /// Every axis reversed: `T` in NumPy and PyTorch ([`Op::ReverseAxes`]).
        ///
        /// # Errors
        /// As [`ViewOps::apply_dim`].
        reverse_axes => ReverseAxes;

        /// The last two axes swapped: PyTorch's `mT` ([`Op::MatrixTranspose`]).
        ///
        /// # Errors
        /// [`Error::Invalid`] for a view of rank below 2.
        matrix_transpose => MatrixTranspose;

        /// PyTorch's `H` ([`Op::ConjTranspose`]): the conjugate transpose of a matrix. Views
        /// know nothing of element values, so for real and complex data alike the view swaps
        /// axes 0 and 1 (conjugation is the kernel's business); a view of rank 0 is returned as
        /// it is.
        ///
        /// # Errors
        /// [`Error::Invalid`] for any other rank than 0 and 2, naming `H`, with PyTorch's reason.
        conj_transpose => ConjTranspose;

        /// PyTorch's `mH` ([`Op::MatrixConjTranspose`]): the conjugate of
        /// [`ViewOps::matrix_transpose`], whose view it is (see [`ViewOps::conj_transpose`]).
        ///
        /// # Errors
        /// [`Error::Invalid`] for a view of rank 1, naming `mH`.
        matrix_conj_transpose => MatrixConjTranspose;

        /// PyTorch's `adjoint()` ([`Op::Adjoint`]): the view of `mH`.
        ///
        /// # Errors
        /// [`Error::Invalid`] for a view of rank 1, naming `adjoint`.
        adjoint => Adjoint;
    }

    /// NumPy's `rot90(m, k, axes)` ([`Op::Rot90`]): `k` quarter turns in the plane of
    /// `axes`, from the first axis towards the second (`k` modulo 4; a negative `k` turns
    /// back). `rot90(m, 1, [0, 1])` of a matrix is its transposed columns in reverse.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `rot90` for an axis out of range or two equal axes.
    fn rot90(&self, cx: &Scope, k: i64, axes: [usize; 2]) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Rot90 { k, axes })
    }

    /// PyTorch's `view(*shape)` ([`Op::ViewShape`]): the reshape when the top view can
    /// express it as one view; never a copy, so on a stack it never pushes a view.
    ///
    /// # Errors
    /// [`Error::NotRepresentable`] with PyTorch's reason ("view size is not compatible with
    /// input tensor's size and stride ...; use .reshape(...) instead"); as
    /// [`ViewOps::reshape`] otherwise.
    fn view_shape<D: Dim>(&self, cx: &Scope, shape: &[D]) -> Result<Self> {
        self.apply_dim(cx, &Op::ViewShape(shape.to_vec()))
    }

    /// PyTorch's `as_strided(size, stride, storage_offset)` ([`Op::AsStrided`]): the top
    /// view's storage read with new sizes, non-negative strides and a non-negative offset,
    /// every element inside the storage (the view below on a stack; up to the last element
    /// it reaches for a single view).
    ///
    /// # Errors
    /// [`Error::Invalid`] with PyTorch's reasons; [`Error::Guard`] for a symbolic condition
    /// proven false.
    fn torch_as_strided<D: Dim>(
        &self,
        cx: &Scope,
        shape: &[D],
        strides: &[D],
        offset: D,
    ) -> Result<Self> {
        self.apply_dim(
            cx,
            &Op::AsStrided {
                shape: shape.to_vec(),
                strides: strides.to_vec(),
                offset,
            },
        )
    }

    /// NumPy's `sliding_window_view(x, window, axis)` ([`Op::SlidingWindowView`]): unfolds
    /// with step 1, one per window size and axis (every axis for `None`), each window axis
    /// appended.
    ///
    /// # Errors
    /// [`Error::Invalid`] with NumPy's reasons; as [`ViewOps::unfold`].
    fn sliding_window_view<D: Dim>(
        &self,
        cx: &Scope,
        window: &[D],
        axes: Option<&[usize]>,
    ) -> Result<Self> {
        self.apply_dim(
            cx,
            &Op::SlidingWindowView {
                window: window.to_vec(),
                axes: axes.map(<[usize]>::to_vec),
            },
        )
    }

    unit_ops! {
        /// NumPy's `copy()` ([`Op::Copy`]): always a copy; a stack stacks a row-major view of
        /// the same shape on top, unmerged, which the kernels materialize.
        ///
        /// # Errors
        /// On a [`View`](crate::View), [`Error::NotRepresentable`] (a copy is no view of the
        /// same buffer).
        copy => Copy;

        /// NumPy's `flatten()` ([`Op::FlattenCopy`]): always a copy, as one axis (PyTorch's
        /// `flatten` is [`ViewOps::flatten`], a reshape).
        ///
        /// # Errors
        /// As [`ViewOps::copy`].
        flatten_copy => FlattenCopy;
    }

    /// NumPy's `astype(to, copy=copy)` on elements of type `from` ([`Op::AsType`]): a copy
    /// when the types differ or `copy` is set (NumPy's default), else the view itself.
    ///
    /// # Errors
    /// On a [`View`](crate::View), [`Error::NotRepresentable`] when it copies.
    fn astype(&self, cx: &Scope, from: DType, to: DType, copy: bool) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::AsType { from, to, copy })
    }

    /// NumPy's `asarray(a, dtype=to)` on elements of type `from`: the view itself when the
    /// types agree, else a copy ([`Op::AsType`] without `copy`).
    ///
    /// # Errors
    /// As [`ViewOps::astype`].
    fn asarray(&self, cx: &Scope, from: DType, to: DType) -> Result<Self> {
        self.astype(cx, from, to, false)
    }

    /// NumPy's fancy indexing along `axis` ([`Op::Take`]): a copy holding the listed
    /// indices (negative ones from the end). On a stack, a new stack over the fresh buffer
    /// the kernels fill.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an index out of bounds (NumPy's `IndexError`);
    /// [`Error::Guard`] for a symbolic one proven out of bounds; on a
    /// [`View`](crate::View), [`Error::NotRepresentable`] (always a copy).
    fn take<D: Dim>(&self, cx: &Scope, axis: usize, indices: &[D]) -> Result<Self> {
        self.apply_dim(
            cx,
            &Op::Take {
                axis,
                indices: indices.to_vec(),
            },
        )
    }

    /// NumPy's boolean indexing along `axis` ([`Op::Compress`], `a[:, mask]`): a copy of
    /// the indices whose mask entry is true; the mask has one entry per index.
    ///
    /// # Errors
    /// As [`ViewOps::take`], for a mask of the wrong length.
    fn compress(&self, cx: &Scope, axis: usize, mask: &[bool]) -> Result<Self> {
        self.apply_dim(
            cx,
            &Op::<i64>::Compress {
                axis,
                mask: mask.to_vec(),
            },
        )
    }

    /// NumPy's boolean indexing by a mask of the whole shape ([`Op::BooleanMask`],
    /// `a[a > 0]`): a copy of the elements whose entry (row-major) is true, as one axis.
    ///
    /// # Errors
    /// As [`ViewOps::take`], for a mask without one entry per element.
    fn boolean_mask(&self, cx: &Scope, mask: &[bool]) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::BooleanMask(mask.to_vec()))
    }

    /// PyTorch's `expand_as`: [`ViewOps::expand`] to the shape of `other` (the top
    /// view's shape for a stack).
    ///
    /// # Errors
    /// As [`ViewOps::expand`].
    fn expand_as<O: ViewOps>(&self, cx: &Scope, other: &O) -> Result<Self> {
        self.expand(cx, other.top_view().shape())
    }

    /// PyTorch's `reshape_as`: [`ViewOps::reshape`] to the shape of `other`.
    ///
    /// # Errors
    /// As [`ViewOps::reshape`].
    fn reshape_as<O: ViewOps>(&self, cx: &Scope, other: &O) -> Result<Self> {
        self.reshape(cx, other.top_view().shape())
    }

    /// PyTorch's `view_as`: [`ViewOps::view_shape`] to the shape of `other` (recorded as
    /// [`Op::ViewShape`], so a replayed `view_as` keeps refusing copies); on a stack it
    /// never pushes a view.
    ///
    /// # Errors
    /// As [`View::apply`] of the reshape on the top view:
    /// [`Error::NotRepresentable`] when the result is not one view.
    fn view_as<O: ViewOps>(&self, cx: &Scope, other: &O) -> Result<Self> {
        let op = Op::ViewShape(other.top_view().shape().to_vec());
        self.apply_dim(cx, &op).map_err(|e| match e {
            Error::NotRepresentable { detail, .. } => Error::NotRepresentable {
                op: "view_as",
                detail,
            },
            other => other,
        })
    }

    /// PyTorch's `view(dtype)`: elements of `from` bytes read as elements of `to`
    /// bytes ([`Op::Reinterpret`]); a stack must hold one view.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming PyTorch's rule that fails (see
    /// [`Op::Reinterpret`]).
    fn reinterpret(&self, cx: &Scope, from: usize, to: usize) -> Result<Self> {
        self.apply_dim(cx, &Op::<i64>::Reinterpret { from, to })
    }

    unit_ops! {
        /// PyTorch's `view_as_real` ([`Op::ViewAsReal`]): complex elements read as pairs
        /// of reals, a pair axis of size 2 and stride 1 appended; a stack must hold one
        /// view.
        ///
        /// # Errors
        /// [`Error::Invalid`] for a masked view or a stack of several views.
        view_as_real => ViewAsReal;

        /// PyTorch's `view_as_complex` ([`Op::ViewAsComplex`]): pairs of reals on the
        /// last axis read as complex elements (see
        /// [`Op::ViewAsComplex`]).
        ///
        /// # Errors
        /// [`Error::Invalid`] with PyTorch's reason; [`Error::Guard`] when a symbolic
        /// condition is proven false.
        view_as_complex => ViewAsComplex;

        /// PyTorch's `real` of a complex view ([`Op::Real`]): the real parts, in reals.
        ///
        /// # Errors
        /// As [`ViewOps::view_as_real`].
        real => Real;

        /// PyTorch's `imag` of a complex view ([`Op::Imag`]): the imaginary parts, in reals.
        ///
        /// # Errors
        /// As [`ViewOps::view_as_real`].
        imag => Imag;
    }
}

/// Which of `hsplit`, `vsplit` and `dsplit`: its name, the rank it needs and its axis.
/// The pieces of `hsplit`, `vsplit` or `dsplit` into `sections` equal pieces, one
/// [`Op::DirectionalSplit`] each.
fn directional_split<V: ViewOps>(
    v: &V,
    cx: &Scope,
    direction: SplitDirection,
    sections: usize,
) -> Result<Vec<V>> {
    let top = v.top_view();
    let axis = direction.axis(top.ndim(), || top.ctx())?;
    let n = i64::try_from(sections).unwrap_or(i64::MAX);
    piece_count(&top, direction.name(), axis, Expr::from(n), || {
        format!("Op::DirectionalSplit {{ direction: {direction:?}, sections: {sections}, piece }}")
    })?;
    // Zero sections still apply one op, which reports them with PyTorch's words.
    pieces(v, cx, sections.max(1), |piece| {
        Op::<i64>::DirectionalSplit {
            direction,
            sections,
            piece,
        }
    })
}

/// The pieces of `hsplit`, `vsplit` or `dsplit` at `indices`, one
/// [`Op::DirectionalSplitAt`] each.
fn directional_split_at<V: ViewOps, D: Dim>(
    v: &V,
    cx: &Scope,
    direction: SplitDirection,
    indices: &[D],
) -> Result<Vec<V>> {
    let top = v.top_view();
    let axis = direction.axis(top.ndim(), || top.ctx())?;
    let count = i64::try_from(indices.len()).map_or(i64::MAX, |n| n.saturating_add(1));
    piece_count(&top, direction.name(), axis, Expr::from(count), || {
        format!("Op::DirectionalSplitAt {{ direction: {direction:?}, indices, piece }}")
    })?;
    pieces(v, cx, indices.len() + 1, |piece| Op::DirectionalSplitAt {
        direction,
        indices: indices.to_vec(),
        piece,
    })
}

/// The views of pieces `0..n` of `v`, `op(piece)` each.
fn pieces<V: ViewOps, D: Dim>(
    v: &V,
    cx: &Scope,
    n: usize,
    op: impl Fn(usize) -> Op<D>,
) -> Result<Vec<V>> {
    (0..n).map(|piece| v.apply_dim(cx, &op(piece))).collect()
}

/// The constant number of pieces `count`, within [`MAX_PIECES`]; `one` says how to take
/// one piece instead.
fn piece_count(
    top: &View,
    op: &'static str,
    axis: usize,
    count: Expr,
    one: impl FnOnce() -> String,
) -> Result<usize> {
    match count.as_i64() {
        // A count is at least 0 (the size of an axis, or a number of pieces).
        Some(n) if n <= MAX_PIECES => Ok(usize::try_from(n).unwrap_or(0)),
        Some(n) => Err(invalid(
            op,
            format!(
                "{n} pieces along axis {axis} of {} exceed the limit of {MAX_PIECES}; take one piece at a time with {}",
                top.ctx(),
                one()
            ),
        )),
        None => Err(invalid(
            op,
            format!(
                "the number of pieces {count} of axis {axis} of {} is not a constant; bind the symbols first, or take one piece at a time with {}",
                top.ctx(),
                one()
            ),
        )),
    }
}

impl ViewOps for View {
    fn apply_dim<D: Dim>(&self, cx: &Scope, op: &Op<D>) -> Result<View> {
        View::apply_dim(self, cx, op)
    }

    fn top_view(&self) -> Cow<'_, View> {
        Cow::Borrowed(self)
    }
}

impl ViewOps for ViewStack {
    fn apply_dim<D: Dim>(&self, cx: &Scope, op: &Op<D>) -> Result<ViewStack> {
        ViewStack::apply_dim(self, cx, op)
    }

    fn top_view(&self) -> Cow<'_, View> {
        Cow::Borrowed(self.top())
    }
}

/// The exact engine's ops by name: every argument must be a constant
/// ([`ConcreteView::apply`] runs the op; `cx` is not read).
impl ViewOps for ConcreteView {
    fn apply_dim<D: Dim>(&self, _cx: &Scope, op: &Op<D>) -> Result<ConcreteView> {
        match const_op(op) {
            Some(k) => self.apply(&k),
            None => Err(Error::Symbolic {
                op: op.name(),
                what: "an argument",
                expr: op.to_string(),
            }),
        }
    }

    fn top_view(&self) -> Cow<'_, View> {
        Cow::Owned(View::from(self.clone()))
    }
}
