//! The core ops of the exact engine: permute, expand, shrink, pad, flip,
//! unsqueeze and NumPy basic indexing (`apply.rs` runs the rules of unfold and diagonal).

use super::{check_shape, ConcreteView};
use crate::check::Exact;
use crate::error::{check_len, unrepresentable, Error, Result};
use crate::index::{index_result_rank, IndexItem};

impl ConcreteView {
    /// Reorders axes: axis `i` of the result is axis `axes[i]` of `self`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axes` is not a permutation of `0..ndim`.
    pub(crate) fn permute(&self, axes: &[usize]) -> Result<Self> {
        let (shape, strides, mask) = crate::axes::permuted(
            axes,
            &self.shape,
            &self.strides,
            self.mask.as_deref(),
            || self.ctx(),
        )?;
        Ok(Self {
            shape,
            strides,
            offset: self.offset,
            mask,
        })
    }

    /// Broadcasts size-1 axes to `new_shape` with stride 0; a scalar expands to any shape.
    ///
    /// A masked size-1 axis expands to mask `(0, n)` when its element is valid and
    /// `(0, 0)` when it is not.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch (for a non-scalar),
    /// a negative size, or an axis that is neither equal nor of size 1.
    pub(crate) fn expand(&self, new_shape: &[i64]) -> Result<Self> {
        self.check_result_rank("expand", new_shape.len())?;
        check_shape("expand", new_shape)?;
        if self.ndim() == 0 {
            return Self::build(
                "expand",
                new_shape.to_vec(),
                vec![0; new_shape.len()],
                self.offset,
                None,
            );
        }
        if new_shape == self.shape() {
            return Ok(self.clone());
        }
        let mut f = self.to_fields();
        f.expand(&mut Exact, new_shape, &|| self.ctx())?;
        Self::build("expand", f.shape, f.strides, f.offset, f.mask)
    }

    /// Restricts every axis to `[start, end)`, with `0 <= start <= end <= dim`.
    ///
    /// An empty range gives a zero-size view. Mask bounds are intersected with the
    /// range and shifted; an empty intersection becomes an empty mask range.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch or a malformed bound.
    pub(crate) fn shrink(&self, bounds: &[(i64, i64)]) -> Result<Self> {
        check_len("shrink", "bounds", bounds.len(), self.ndim(), || self.ctx())?;
        let mut f = self.to_fields();
        f.shrink(&mut Exact, bounds, &|| self.ctx())?;
        Self::build("shrink", f.shape, f.strides, f.offset, f.mask)
    }

    /// Adds `before` and `after` virtual elements on every axis; they are masked out.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch or negative padding,
    /// [`Error::Overflow`](crate::Error::Overflow) when sizes or offsets leave `i64`.
    pub(crate) fn pad(&self, padding: &[(i64, i64)]) -> Result<Self> {
        check_len("pad", "padding", padding.len(), self.ndim(), || self.ctx())?;
        if padding.iter().all(|&p| p == (0, 0)) {
            return Ok(self.clone());
        }
        let mut f = self.to_fields();
        f.pad(&mut Exact, padding, &|| self.ctx())?;
        Self::build("pad", f.shape, f.strides, f.offset, f.mask)
    }

    /// Reverses the axes whose flag is set.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `flags` has the wrong length.
    pub(crate) fn flip(&self, flags: &[bool]) -> Result<Self> {
        check_len("flip", "flags", flags.len(), self.ndim(), || self.ctx())?;
        let mut f = self.to_fields();
        f.flip(&Exact, flags, &|| self.ctx())?;
        Ok(Self::from_checked_fields(f))
    }

    /// Reverses the listed axes (each at most once).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when an axis is out of range or repeated.
    pub(crate) fn flip_axes(&self, axes: &[usize]) -> Result<Self> {
        self.flip(&crate::axes::flip_flags(axes, self.ndim(), || self.ctx())?)
    }

    /// Inserts a size-1 axis at position `axis` (`0 <= axis <= ndim`).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axis > ndim`;
    /// [`Error::Limit`](crate::Error::Limit) past [`MAX_RANK`](crate::MAX_RANK) axes.
    pub(crate) fn unsqueeze(&self, axis: usize) -> Result<Self> {
        self.check_result_rank("unsqueeze", self.ndim() + 1)?;
        let mut res = self.clone();
        crate::axes::insert_unit_axis(
            axis,
            &mut res.shape,
            &mut res.strides,
            res.mask.as_mut(),
            || self.ctx(),
        )?;
        Ok(res)
    }

    /// NumPy basic indexing: integers select and drop an axis, slices keep it,
    /// `NewAxis` inserts a size-1 axis and `Ellipsis` stands for the remaining axes.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for too many indices, two ellipses, a zero step or an
    /// integer out of range; [`Error::NotRepresentable`](crate::Error::NotRepresentable) when integers select a
    /// masked-out element into a scalar.
    pub(crate) fn index(&self, items: &[IndexItem]) -> Result<Self> {
        self.check_result_rank("index", index_result_rank(items, self.ndim()))?;
        let (kept, shape) = self.index_keepdims(items)?;
        kept.drop_unit_axes("index", &shape)
    }

    /// Applies `items` keeping integer-indexed axes as size 1; returns that view and
    /// the final shape (without those axes).
    pub(crate) fn index_keepdims(&self, items: &[IndexItem]) -> Result<(Self, Vec<i64>)> {
        let mut f = self.to_fields();
        let shape = f.index_keepdims(&mut Exact, items, &|| self.ctx())?;
        Ok((Self::from_kept_fields(f), shape))
    }

    /// Removes size-1 axes by a reshape to `shape`, reporting failure under `op`.
    pub(crate) fn drop_unit_axes(&self, op: &'static str, shape: &[i64]) -> Result<Self> {
        self.reshape(shape).map_err(|e| match e {
            Error::NotRepresentable { .. } => unrepresentable(
                op,
                format!(
                    "{} has no valid element, and a scalar view cannot be masked out; use a ViewStack",
                    self.ctx()
                ),
            ),
            other => other,
        })
    }
}
