//! ndarray interop (feature `ndarray`): array views as kernel operands, results as arrays.
//!
//! An array view becomes a buffer and a [`ConcreteView`] reading the view from it: the buffer is the
//! view's own memory when its elements fill their memory range (any permutation or flip of a
//! contiguous block, broadcast axes included), borrowed through ndarray's safe
//! `to_slice_memory_order`. A view with gaps (a stepped slice such as `a.slice(s![.., ..;2])`)
//! is never covered by one slice: the elements in the gaps may belong to a mutable view alive
//! elsewhere (`multi_slice_mut` hands out interleaved ones), and a slice over them would alias
//! it. Such a source is gathered into a row-major buffer first; such a destination is written
//! through ndarray's element iterator by [`copy_into`].
//!
//! ```
//! use symshape_kernels::{materialize, nd, Input};
//! use ndarray::array;
//! let a = array![[0, 1, 2], [3, 4, 5]];
//! let t = a.t();
//! let (buf, view) = nd::source(&t)?;
//! assert!(matches!(buf, std::borrow::Cow::Borrowed(_))); // no copy
//! let out = materialize(Input::new(&buf, &view))?;
//! assert_eq!(out.into_ndarray()?, t.into_dyn());
//! # Ok::<(), symshape_kernels::Error>(())
//! ```

use std::borrow::Cow;

use ndarray::{ArrayD, ArrayView, ArrayViewD, ArrayViewMut, Axis, Dimension, IxDyn};
use symshape_view::ConcreteView;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::operand::{Input, Output};
use crate::ops::{copy, materialize, Dense};

/// The view of `shape` with `strides` (in elements) at `offset`, as the view crate checks it.
fn view_of(shape: &[usize], strides: &[isize], offset: isize) -> Result<ConcreteView> {
    let overflow = || Error::Overflow {
        op: "ndarray",
        shape: shape.to_vec(),
    };
    let shape: Vec<i64> = shape
        .iter()
        .map(|&d| i64::try_from(d).map_err(|_| overflow()))
        .collect::<Result<_>>()?;
    let strides: Vec<i64> = strides
        .iter()
        .map(|&t| i64::try_from(t).map_err(|_| overflow()))
        .collect::<Result<_>>()?;
    let offset = i64::try_from(offset).map_err(|_| overflow())?;
    Ok(ConcreteView::create(&shape, Some(&strides), offset, None)?)
}

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
/// [`Error::Overflow`] when the shape or strides do not make a view (ndarray's own
/// invariants exclude it); [`Error::Alloc`] when the gather exceeds the allocation limit.
pub fn source<'a, T: Element, D: Dimension>(
    a: &ArrayView<'a, T, D>,
) -> Result<(Cow<'a, [T]>, ConcreteView)> {
    let shape = a.shape().to_vec();
    let n = shape.len();
    if a.is_empty() {
        return Ok((Cow::Borrowed(&[]), view_of(&shape, &vec![0; n], 0)?));
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
        let view = view_of(&shape, &strides, low_offset(&shape, &strides))?;
        return Ok((Cow::Borrowed(slice), view));
    }
    let mut values: Vec<T> = crate::alloc::reserve("source", moving.len())?;
    values.extend(moving.iter().copied());
    let moving_shape: Vec<i64> = moving.shape().iter().map(|&d| d as i64).collect();
    let dense = ConcreteView::contiguous(&moving_shape)?;
    let mut dense = dense.strides().iter();
    for s in strides.iter_mut().filter(|s| **s != 0) {
        *s = dense.next().map_or(0, |&t| t as isize);
    }
    Ok((Cow::Owned(values), view_of(&shape, &strides, 0)?))
}

/// The memory of `a` as a mutable slice and the layout that addresses `a`'s elements in it.
///
/// # Errors
/// [`Error::NotDense`] when `a` leaves gaps in its memory range (use [`copy_into`]).
pub fn destination<'b, T: Element, D: Dimension>(
    a: &'b mut ArrayViewMut<'_, T, D>,
) -> Result<(&'b mut [T], ConcreteView)> {
    let shape = a.shape().to_vec();
    let n = shape.len();
    if a.is_empty() {
        return Ok((&mut [], view_of(&shape, &vec![0; n], 0)?));
    }
    let strides: Vec<isize> = shape
        .iter()
        .zip(a.strides())
        .map(|(&e, &s)| if e > 1 { s } else { 0 })
        .collect();
    let offset = low_offset(&shape, &strides);
    let not_dense = || Error::NotDense {
        op: "destination",
        shape: shape.clone(),
        strides: a.strides().to_vec(),
    };
    let err = not_dense();
    let slice = a.view_mut().into_slice_memory_order().ok_or(err)?;
    Ok((slice, view_of(&shape, &strides, offset)?))
}

/// Copies `src` (a view of `src_buf`) into the array view `dst` of the same shape; masked
/// source elements write `pad`.
///
/// A dense destination is written in place by the planned kernels; one with gaps receives a
/// materialized copy through ndarray's iterator.
///
/// # Errors
/// [`Error::ShapeMismatch`], and the errors of [`copy`].
pub fn copy_into<T: Element, D: Dimension>(
    src: Input<'_, T>,
    dst: &mut ArrayViewMut<'_, T, D>,
) -> Result<()> {
    let same = dst.shape().len() == src.shape().len()
        && dst
            .shape()
            .iter()
            .zip(src.shape())
            .all(|(&a, &b)| a as i64 == b);
    if !same {
        return Err(Error::ShapeMismatch {
            op: "copy",
            dst: dst.shape().iter().map(|&d| d as i64).collect(),
            src: src.shape().to_vec(),
        });
    }
    match destination(dst) {
        Ok((buf, view)) => return copy(src, Output::new(buf, &view)),
        Err(Error::NotDense { .. }) => {}
        Err(e) => return Err(e),
    }
    let values = materialize(src)?.values;
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
    /// [`Error::OutputLength`] when the values do not fill the shape.
    pub fn into_ndarray(self) -> Result<ArrayD<T>> {
        let expected = self
            .shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n));
        let got = self.values.len();
        if expected != Some(got) {
            return Err(Error::OutputLength {
                op: "into_ndarray",
                shape: self.shape,
                expected: expected.unwrap_or(usize::MAX),
                got,
            });
        }
        let shape = self.shape.clone();
        ArrayD::from_shape_vec(IxDyn(&self.shape), self.values).map_err(|_| Error::OutputLength {
            op: "into_ndarray",
            shape,
            expected: got,
            got,
        })
    }
}
