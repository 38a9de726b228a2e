//! The exact engine's functions beyond the ops: NumPy's checked `as_strided`, the
//! number of pieces of split and chunk, and NumPy's broadcast of shapes.

use super::ConcreteView;
use crate::check::Exact;
use crate::error::{invalid, Result};
use crate::fields::fit_within;

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
        let outside = || {
            let (lo, hi) = v.extent().unwrap_or_default();
            invalid(
                "as_strided",
                format!(
                    "{} reaches offsets {lo}..={hi} outside a buffer of {buffer_len} elements",
                    v.ctx()
                ),
            )
        };
        let buffer = || format!("a buffer of {buffer_len} elements");
        // A negative length holds no element: only a view without one fits.
        let (at, n) = ((v.offset, &v.strides[..]), buffer_len.max(0));
        fit_within(&mut Exact, at, v.bounds(), n, &buffer, outside)?;
        Ok(v)
    }

    /// The number of pieces [`ViewOps::split`](crate::ViewOps::split) cuts `axis` into:
    /// `max(ceil(dim / size), 1)`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when the axis is out of range or
    /// `size <= 0`.
    pub fn split_count(&self, axis: usize, size: i64) -> Result<i64> {
        crate::engine::split_count(&(), self, axis, size)
    }

    /// The number of pieces [`ViewOps::chunk`](crate::ViewOps::chunk) gives.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when the axis is out of range or
    /// `chunks == 0`.
    pub fn chunk_count(&self, axis: usize, chunks: usize) -> Result<i64> {
        let size = crate::engine::chunk_size(&(), self, axis, chunks)?;
        self.split_count(axis, size)
    }
}

/// NumPy's broadcast of several shapes (right-aligned; equal sizes or 1).
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) showing both shapes when two sizes differ and neither is 1.
pub fn broadcast_shapes(shapes: &[&[i64]]) -> Result<Vec<i64>> {
    crate::broadcast::broadcast(&mut Exact, shapes)
}

/// NumPy's and PyTorch's refusal of an axis listed twice in `squeeze`.
pub(crate) fn repeated_squeeze_axis(axis: usize, list: &[usize], ctx: &str) -> crate::Error {
    invalid(
        "squeeze",
        format!("axis {axis} is repeated in the axes {list:?} to squeeze from {ctx}"),
    )
}
