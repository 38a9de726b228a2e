//! ndarray interop (feature `ndarray`): array views as kernel operands, results as arrays.
//!
//! An array view becomes a buffer and a [`Layout`] reading the view from it: the buffer is the
//! view's own memory when its elements fill their memory range (any permutation or flip of a
//! contiguous block, broadcast axes included), borrowed through ndarray's safe
//! `to_slice_memory_order`. A view with gaps (a stepped slice such as `a.slice(s![.., ..;2])`)
//! is never covered by one slice: the elements in the gaps may belong to a mutable view alive
//! elsewhere (`multi_slice_mut` hands out interleaved ones), and a slice over them would alias
//! it. Such a source is gathered into a row-major buffer first; such a destination is written
//! through ndarray's element iterator by [`copy_into`].
//!
//! ```
//! use symshape_kernels::{materialize, nd, Layout};
//! use ndarray::{array, Axis};
//! let a = array![[0, 1, 2], [3, 4, 5]];
//! let t = a.t();
//! let (buf, layout) = nd::source(&t)?;
//! assert!(matches!(buf, std::borrow::Cow::Borrowed(_))); // no copy
//! let out = symshape_kernels::Dense { shape: layout.shape().to_vec(), values: materialize(&buf, &layout, 0)? };
//! assert_eq!(out.into_ndarray()?, t.into_dyn());
//! # Ok::<(), symshape_kernels::KernelError>(())
//! ```

use crate::element::Element;
use crate::error::{KernelError, Result};
use crate::layout::{row_major_strides, Layout, View};
use crate::ops::{copy, materialize, Dense};
use ndarray::{ArrayD, ArrayView, ArrayViewD, ArrayViewMut, Axis, Dimension, IxDyn};
use std::borrow::Cow;

/// Offset of index zero from the lowest reached element, for the axes of extent > 1.
fn low_offset(shape: &[usize], strides: &[isize]) -> isize {
    shape
        .iter()
        .zip(strides)
        .filter(|&(&n, &s)| n > 1 && s < 0)
        .fold(0isize, |acc, (&n, &s)| {
            // ndarray guarantees the span of a view fits `isize`.
            acc.saturating_add(s.saturating_mul(1 - n as isize))
        })
}

/// The elements of `a` as a buffer and the layout that reads `a` from it.
///
/// The buffer is borrowed from `a` when its elements, ignoring axes of stride 0, fill their
/// memory range; otherwise it is a row-major gather of the distinct elements (broadcast axes
/// stay stride 0), see the module docs.
///
/// # Errors
/// [`KernelError::Overflow`] when the shape or strides do not make a [`Layout`] (ndarray's
/// own invariants exclude it).
pub fn source<'a, T: Element, D: Dimension>(
    a: &ArrayView<'a, T, D>,
) -> Result<(Cow<'a, [T]>, Layout)> {
    let shape = a.shape().to_vec();
    let n = shape.len();
    if a.is_empty() {
        return Ok((Cow::Borrowed(&[]), Layout::new(&shape, &vec![0; n], 0)?));
    }
    let src_strides = a.strides();
    // Drop the axes that do not move (extent 1 or stride 0), last first so that axis numbers
    // stay valid; `index_axis_move` at 0 cannot fail on a non-empty axis.
    let mut moving: ArrayViewD<'a, T> = a.clone().into_dyn();
    let mut strides = vec![0isize; n];
    for k in (0..n).rev() {
        let (ext, s) = (shape.get(k).copied(), src_strides.get(k).copied());
        match (ext, s) {
            (Some(e), Some(s)) if e > 1 && s != 0 => {
                if let Some(x) = strides.get_mut(k) {
                    *x = s;
                }
            }
            _ => moving = moving.index_axis_move(Axis(k), 0),
        }
    }
    if let Some(slice) = moving.to_slice_memory_order() {
        let layout = Layout::new(&shape, &strides, low_offset(&shape, &strides))?;
        return Ok((Cow::Borrowed(slice), layout));
    }
    let values: Vec<T> = moving.iter().copied().collect();
    let dense = row_major_strides(moving.shape()).ok_or_else(|| KernelError::Overflow {
        op: "source",
        shape: shape.clone(),
        strides: src_strides.to_vec(),
        offset: 0,
    })?;
    let mut dense = dense.into_iter();
    for s in strides.iter_mut().filter(|s| **s != 0) {
        *s = dense.next().unwrap_or(0);
    }
    Ok((Cow::Owned(values), Layout::new(&shape, &strides, 0)?))
}

/// The memory of `a` as a mutable slice and the layout that addresses `a`'s elements in it.
///
/// # Errors
/// [`KernelError::NotDense`] when `a` leaves gaps in its memory range (use [`copy_into`]).
pub fn destination<'b, T: Element, D: Dimension>(
    a: &'b mut ArrayViewMut<'_, T, D>,
) -> Result<(&'b mut [T], Layout)> {
    let shape = a.shape().to_vec();
    let n = shape.len();
    if a.is_empty() {
        return Ok((&mut [], Layout::new(&shape, &vec![0; n], 0)?));
    }
    let strides: Vec<isize> = shape
        .iter()
        .zip(a.strides())
        .map(|(&e, &s)| if e > 1 { s } else { 0 })
        .collect();
    let offset = low_offset(&shape, &strides);
    let not_dense = || KernelError::NotDense {
        op: "destination",
        shape: shape.clone(),
        strides: a.strides().to_vec(),
    };
    let err = not_dense();
    let slice = a.view_mut().into_slice_memory_order().ok_or(err)?;
    Ok((slice, Layout::new(&shape, &strides, offset)?))
}

/// Copies `src` (a view of `src_buf`) into the array view `dst` of the same shape; masked
/// source elements write `pad`.
///
/// A dense destination is written in place by the planned kernels; one with gaps receives a
/// materialized copy through ndarray's iterator.
///
/// # Errors
/// [`KernelError::ShapeMismatch`], and the errors of [`copy`].
pub fn copy_into<T: Element, D: Dimension>(
    dst: &mut ArrayViewMut<'_, T, D>,
    src_buf: &[T],
    src: &impl View,
    pad: T,
) -> Result<()> {
    if dst.shape() != src.shape() {
        return Err(KernelError::ShapeMismatch {
            op: "copy",
            dst: dst.shape().to_vec(),
            src: src.shape().to_vec(),
        });
    }
    match destination(dst) {
        Ok((buf, layout)) => return copy(buf, &layout, src_buf, src, pad),
        Err(KernelError::NotDense { .. }) => {}
        Err(e) => return Err(e),
    }
    let values = materialize(src_buf, src, pad)?;
    // Both in logical row-major order, and of equal length (same shape).
    for (d, v) in dst.iter_mut().zip(values) {
        *d = v;
    }
    Ok(())
}

impl<T: Element> Dense<T> {
    /// The values as an ndarray array of the same shape.
    ///
    /// # Errors
    /// [`KernelError::OutputLength`] when the values do not fill the shape.
    pub fn into_ndarray(self) -> Result<ArrayD<T>> {
        let expected = self
            .shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n));
        let got = self.values.len();
        if expected != Some(got) {
            return Err(KernelError::OutputLength {
                op: "into_ndarray",
                shape: self.shape,
                expected: expected.unwrap_or(usize::MAX),
                got,
            });
        }
        let shape = self.shape.clone();
        ArrayD::from_shape_vec(IxDyn(&self.shape), self.values).map_err(|_| {
            KernelError::OutputLength {
                op: "into_ndarray",
                shape,
                expected: got,
                got,
            }
        })
    }
}
