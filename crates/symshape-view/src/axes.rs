//! The axis moves of the core ops, written once over the field type (`i64` or
//! `Expr`): `permute` and `unsqueeze` on a view's shape, strides and mask, and the axes
//! `flip` reverses.

use crate::error::{bad_axis, check_new_axis, invalid, Result};

/// A view's shape, strides and mask after an axis move.
pub(crate) type Moved<D> = (Vec<D>, Vec<D>, Option<Vec<(D, D)>>);

/// The shape, strides and mask of a view permuted by `axes` (axis `i` of the result
/// is axis `axes[i]`), for a view of `shape` described by `ctx`.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) when `axes` is not a permutation of `0..ndim`.
#[inline]
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

/// The axes `flip` reverses on a view of rank `ndim` (at most
/// [`MAX_RANK`](crate::concrete::MAX_RANK)) described by `ctx`, as the bits of one word:
/// bit `a` for axis `a`.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) when an axis is out of range or repeated.
pub(crate) fn flip_flags(axes: &[usize], ndim: usize, ctx: impl Fn() -> String) -> Result<u64> {
    const _: () = assert!(crate::concrete::MAX_RANK <= u64::BITS as usize);
    let mut flags = 0u64;
    for &a in axes {
        if a >= ndim || a >= crate::concrete::MAX_RANK {
            return Err(bad_axis("flip", &ctx(), a, ndim));
        }
        if flags >> a & 1 == 1 {
            let msg = format!("axis {a} is repeated in {axes:?} for {}", ctx());
            return Err(invalid("flip", msg));
        }
        flags |= 1 << a;
    }
    Ok(flags)
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
