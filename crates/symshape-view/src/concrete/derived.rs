//! The exact engine's ops beyond the core ones that are not lowered (`lower_op.rs`):
//! `as_strided`, `view(shape)`, and the pieces of an axis cut by split, split_sizes,
//! chunk and tensor_split.

use super::{ceil_div, check_shape, fmt_list, ConcreteView};
use crate::check::Exact;
use crate::error::{invalid, overflow, view_shape_refusal, Result};
use crate::fields;

/// Ops that return one view per piece refuse to build more pieces than this.
pub const MAX_PIECES: i64 = 1 << 16;

impl ConcreteView {
    /// NumPy's `as_strided`, checked: every element must lie in a buffer of `buffer_len` elements.
    ///
    /// # Errors
    /// As [`ConcreteView::create`], and [`Error::Invalid`](crate::Error::Invalid) when an offset leaves the buffer.
    pub fn as_strided(
        shape: &[i64],
        strides: &[i64],
        offset: i64,
        buffer_len: i64,
    ) -> Result<Self> {
        let v = Self::create(shape, Some(strides), offset, None)?;
        let Some((lo, hi)) = v.extent() else {
            return Ok(v);
        };
        if lo < 0 || hi >= buffer_len {
            return Err(invalid(
                "as_strided",
                format!(
                    "{} reaches offsets {lo}..={hi} outside a buffer of {buffer_len} elements",
                    v.ctx()
                ),
            ));
        }
        Ok(v)
    }

    /// PyTorch's `as_strided(size, stride, storage_offset)` on this view: its storage read
    /// with the new fields. The storage of one view is taken to end after the last element it
    /// reaches (`extent`), the smallest buffer it can read; a view of a stack reads the view
    /// below it instead ([`ViewStack`](crate::ViewStack) passes that storage).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) with PyTorch's reasons: strides and sizes of
    /// different lengths, a negative stride or offset, an element outside the storage; as
    /// [`ConcreteView::create`].
    pub(crate) fn torch_as_strided(
        &self,
        shape: &[i64],
        strides: &[i64],
        offset: i64,
    ) -> Result<Self> {
        self.check_result_rank("as_strided", shape.len())?;
        let storage = fields::storage_of(&Exact, self.offset(), self.strides(), self.bounds())
            .map(|s| s.1)
            .ok_or_else(|| {
                overflow(
                    "as_strided",
                    format!("the storage of {} exceeds i64", self.ctx()),
                )
            })?;
        crate::op::as_strided_args(shape, strides, offset)?;
        let v = Self::create(shape, Some(strides), offset, None)
            .map_err(|e| super::rename_op(e, "as_strided"))?;
        let what = || {
            format!(
                "the storage of {}, up to the last element it reaches",
                self.ctx()
            )
        };
        let res = (v.shape(), v.strides(), v.offset());
        fields::as_strided_within(&mut Exact, (shape, strides, offset), res, storage, &what)?;
        Ok(v)
    }

    /// PyTorch's `view(*shape)`: [`ConcreteView::reshape`] when the result is one view,
    /// else PyTorch's refusal (`view` never copies; `reshape` would).
    ///
    /// # Errors
    /// As [`ConcreteView::reshape`], named `view_shape`; [`Error::NotRepresentable`](crate::Error::NotRepresentable)
    /// with PyTorch's reason when the result is not one view.
    pub(crate) fn view_shape(&self, shape: &[i64]) -> Result<Self> {
        self.check_result_rank("view_shape", shape.len())?;
        self.reshape(shape).map_err(|e| match e {
            crate::Error::NotRepresentable { .. } => {
                view_shape_refusal(&fmt_list(shape), &self.ctx(), false)
            }
            other => super::rename_op(other, "view_shape"),
        })
    }

    /// The number of pieces [`ViewOps::split`](crate::ViewOps::split) cuts `axis` into:
    /// `max(ceil(dim / size), 1)`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when the axis is out of range or
    /// `size <= 0`.
    pub fn split_count(&self, axis: usize, size: i64) -> Result<i64> {
        self.ceil_parts("split", axis, size, "piece size")
    }

    /// `max(ceil(dim / n), 1)` for `axis`, after checking the axis and that `n`
    /// (what `op` calls `what`) is positive.
    fn ceil_parts(&self, op: &'static str, axis: usize, n: i64, what: &str) -> Result<i64> {
        crate::error::at_axis(op, self.shape(), axis, || self.ctx())?;
        if n <= 0 {
            return Err(invalid(
                op,
                format!("{what} {n} must be positive for {}", self.ctx()),
            ));
        }
        Ok(ceil_div(self.shape()[axis], n).max(1))
    }

    /// Piece `piece` of [`ViewOps::split`](crate::ViewOps::split): indices
    /// `piece*size .. min((piece + 1)*size, dim)` of `axis`, built without the
    /// other pieces.
    ///
    /// # Errors
    /// As [`ConcreteView::split_count`], and [`Error::Invalid`](crate::Error::Invalid)
    /// when `piece` is not one of the pieces.
    pub(crate) fn split_piece(&self, axis: usize, size: i64, piece: i64) -> Result<Self> {
        let mut f = self.to_fields();
        f.split_piece(&mut Exact, "split", (axis, size, piece), &|| self.ctx())?;
        Self::build("split", f.shape, f.strides, f.offset, f.mask)
    }

    /// Piece `piece` of [`ViewOps::split_sizes`](crate::ViewOps::split_sizes) (the rule
    /// in `fields.rs`).
    pub(crate) fn split_sizes_piece(
        &self,
        axis: usize,
        sizes: &[i64],
        piece: usize,
    ) -> Result<Self> {
        let mut f = self.to_fields();
        f.split_sizes_piece(&mut Exact, axis, sizes, piece, &|| self.ctx())?;
        Self::build("split_sizes", f.shape, f.strides, f.offset, f.mask)
    }

    /// The number of pieces [`ViewOps::chunk`](crate::ViewOps::chunk) gives.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when the axis is out of range or
    /// `chunks == 0`.
    pub fn chunk_count(&self, axis: usize, chunks: usize) -> Result<i64> {
        let size = self.chunk_size(axis, chunks)?;
        self.split_count(axis, size)
    }

    fn chunk_size(&self, axis: usize, chunks: usize) -> Result<i64> {
        let ctx = || self.ctx();
        crate::lower_op::chunk_size(&crate::check::Exact, self.shape(), &ctx, axis, chunks)
    }

    /// Piece `piece` of [`ViewOps::chunk`](crate::ViewOps::chunk).
    ///
    /// # Errors
    /// As [`ConcreteView::chunk_count`] and [`ConcreteView::split_piece`].
    pub(crate) fn chunk_piece(&self, axis: usize, chunks: usize, piece: usize) -> Result<Self> {
        let size = self.chunk_size(axis, chunks)?;
        self.split_piece(axis, size, i64::try_from(piece).unwrap_or(i64::MAX))
    }

    /// Piece `piece` of PyTorch's `tensor_split` of `axis` into `sections` pieces: the
    /// first `dim % sections` pieces have `dim / sections + 1` indices, the others
    /// `dim / sections`, so there are always exactly `sections` pieces (some may be
    /// empty).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when the axis is out of range,
    /// `sections` is 0 or `piece` is not below it.
    pub(crate) fn tensor_split_piece(
        &self,
        axis: usize,
        sections: usize,
        piece: usize,
    ) -> Result<Self> {
        let mut f = self.to_fields();
        f.tensor_split_piece(&Exact, (axis, sections, piece), &|| self.ctx())?;
        Self::build("tensor_split", f.shape, f.strides, f.offset, f.mask)
    }
}

/// NumPy's broadcast of several shapes (right-aligned; equal sizes or 1).
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) showing both shapes when two sizes differ and neither is 1.
pub fn broadcast_shapes(shapes: &[&[i64]]) -> Result<Vec<i64>> {
    let mut res: Vec<i64> = Vec::new();
    for s in shapes {
        super::check_rank("broadcast_shapes", s.len(), || {
            "the broadcast shape".to_string()
        })?;
        check_shape("broadcast_shapes", s)?;
        let n = res.len().max(s.len());
        let mut out = vec![1i64; n];
        for (k, o) in out.iter_mut().enumerate() {
            let pick = |v: &[i64]| (k + v.len()).checked_sub(n).map_or(1, |i| v[i]);
            let (x, y) = (pick(&res), pick(s));
            *o = if x == y || y == 1 {
                x
            } else if x == 1 {
                y
            } else {
                return Err(invalid(
                    "broadcast_shapes",
                    format!(
                        "shapes {} and {} do not broadcast: axis {} has sizes {x} and {y}",
                        fmt_list(&res),
                        fmt_list(s),
                        k as i64 - n as i64
                    ),
                ));
            };
        }
        res = out;
    }
    Ok(res)
}

/// NumPy's and PyTorch's refusal of an axis listed twice in `squeeze`.
pub(crate) fn repeated_squeeze_axis(axis: usize, list: &[usize], ctx: &str) -> crate::Error {
    invalid(
        "squeeze",
        format!("axis {axis} is repeated in the axes {list:?} to squeeze from {ctx}"),
    )
}
