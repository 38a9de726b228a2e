//! The axis moves of the core ops, written once over the field type (`i64` or
//! `Expr`): `permute` and `unsqueeze` on a view's shape, strides and mask.

use crate::error::{check_new_axis, invalid, Result};

/// A view's shape, strides and mask after an axis move.
pub(crate) type Moved<D> = (Vec<D>, Vec<D>, Option<Vec<(D, D)>>);

/// The shape, strides and mask of a view permuted by `axes` (axis `i` of the result
/// is axis `axes[i]`), for a view of `shape` described by `ctx`.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) when `axes` is not a permutation of `0..ndim`.
pub(crate) fn permuted<D: Copy>(
    axes: &[usize],
    shape: &[D],
    strides: &[D],
    mask: Option<&[(D, D)]>,
    ctx: impl FnOnce() -> String,
) -> Result<Moved<D>> {
    let n = shape.len();
    if !crate::concrete::is_permutation(axes, n) {
        return Err(invalid(
            "permute",
            format!(
                "axes {axes:?} are not a permutation of 0..{n} for {}",
                ctx()
            ),
        ));
    }
    let pick = |x: &[D]| axes.iter().map(|&a| x[a]).collect::<Vec<_>>();
    Ok((
        pick(shape),
        pick(strides),
        mask.map(|m| axes.iter().map(|&a| m[a]).collect()),
    ))
}

/// Inserts a size-1 axis (stride 0, fully valid) at `axis` (`0 <= axis <= ndim`) into
/// the fields of a view described by `ctx`.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) when `axis > ndim`.
pub(crate) fn insert_unit_axis<D: Copy + From<i64>>(
    axis: usize,
    shape: &mut Vec<D>,
    strides: &mut Vec<D>,
    mask: Option<&mut Vec<(D, D)>>,
    ctx: impl FnOnce() -> String,
) -> Result<()> {
    check_new_axis("unsqueeze", ctx, axis, shape.len())?;
    shape.insert(axis, D::from(1));
    strides.insert(axis, D::from(0));
    if let Some(m) = mask {
        m.insert(axis, (D::from(0), D::from(1)));
    }
    Ok(())
}
