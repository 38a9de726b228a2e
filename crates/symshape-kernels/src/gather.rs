//! The gathers: NumPy's fancy and boolean indexing, copies whose elements no strided view
//! can read. The view crate decides what they read (`concrete::Selection`, the same rule
//! `ViewStack` applies to the shapes); here the input is materialized row-major and the
//! selected rows are copied into a fresh buffer, the one a gather's new stack reads.

use symshape_view::{Op, Selection};

use crate::alloc;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::operand::{top, Input};
use crate::ops::{materialize, Dense};

/// Copies the elements a gather op (`Op::Take`, `Op::Compress` or `Op::BooleanMask`)
/// selects from `src` into a new row-major buffer, in the result's row-major order;
/// masked-out elements of the input read its pad.
///
/// ```
/// use symshape_kernels::{gather, Input};
/// use symshape_view::{ConcreteView, Op};
/// let buf: Vec<i32> = (0..6).collect();
/// let v = ConcreteView::contiguous(&[2, 3])?;
/// // NumPy's a[:, [2, -3]].
/// let got = gather(Input::new(&buf, &v), &Op::Take { axis: 1, indices: vec![2, -3] })?;
/// assert_eq!(got.values, vec![2, 0, 5, 3]);
/// # Ok::<(), symshape_kernels::Error>(())
/// ```
///
/// # Errors
/// [`Error::View`] for an index out of bounds, a mask of the wrong length or another op
/// (NumPy's `IndexError`, as the view crate words it); as [`materialize`] for the input;
/// [`Error::Alloc`] beyond the allocation limit.
pub fn gather<T: Element>(src: Input<'_, T>, op: &Op<i64>) -> Result<Dense<T>> {
    let name = op.name();
    let input = top(src.levels);
    let sel = Selection::of(
        input.shape(),
        op,
        &format!("an input of shape {:?}", input.shape()),
    )?;
    let dense = materialize(src)?;
    let usize_of = |x: i64| {
        usize::try_from(x).map_err(|_| Error::Overflow {
            op: name,
            shape: dense.shape.clone(),
        })
    };
    let shape = sel
        .result_shape()
        .into_iter()
        .map(usize_of)
        .collect::<Result<Vec<usize>>>()?;
    let d = usize_of(sel.shape[sel.axis])?;
    let n = alloc::count(name, &shape, std::mem::size_of::<T>())?;
    let mut values = alloc::filled_vec(name, n, T::ZERO)?;
    if n == 0 {
        return Ok(Dense { shape, values });
    }
    // Every factor divides `n`, which fits, and the input's `outer * d * inner`
    // elements were materialized.
    let outer: usize = shape[..sel.axis].iter().product();
    let inner: usize = shape[sel.axis + 1..].iter().product();
    let rows = sel.indices.len();
    for o in 0..outer {
        for (k, &i) in sel.indices.iter().enumerate() {
            // `Selection::of` put every index in `0..d`.
            let from = (o * d + usize_of(i)?) * inner;
            let to = (o * rows + k) * inner;
            values[to..to + inner].copy_from_slice(&dense.values[from..from + inner]);
        }
    }
    Ok(Dense { shape, values })
}

/// NumPy's fancy indexing along `axis` (`np.take(a, indices, axis)`), a copy: [`gather`]
/// of `Op::Take`.
///
/// # Errors
/// As [`gather`].
pub fn take<T: Element>(src: Input<'_, T>, axis: usize, indices: &[i64]) -> Result<Dense<T>> {
    let op = Op::Take {
        axis,
        indices: indices.to_vec(),
    };
    gather(src, &op)
}

/// NumPy's boolean indexing along `axis` (`a[:, mask]`), a copy: [`gather`] of
/// `Op::Compress`.
///
/// # Errors
/// As [`gather`].
pub fn compress<T: Element>(src: Input<'_, T>, axis: usize, mask: &[bool]) -> Result<Dense<T>> {
    let op = Op::Compress {
        axis,
        mask: mask.to_vec(),
    };
    gather(src, &op)
}

/// NumPy's boolean indexing by a mask of the whole shape (`a[a > 0]`, the mask row-major,
/// one entry per element), a copy as one axis: [`gather`] of `Op::BooleanMask`.
///
/// # Errors
/// As [`gather`].
pub fn boolean_mask<T: Element>(src: Input<'_, T>, mask: &[bool]) -> Result<Dense<T>> {
    gather(src, &Op::BooleanMask(mask.to_vec()))
}
