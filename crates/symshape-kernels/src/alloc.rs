//! The allocation limit: every buffer whose size the caller's input decides (a
//! materialized result, a temporary, an offset table) is reserved fallibly and
//! refused beyond a process-wide limit.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// The default limit: 16 GiB.
pub const DEFAULT_ALLOC_LIMIT: usize = 1 << 34;

static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_ALLOC_LIMIT);

/// Sets the largest buffer, in bytes, that any operation of this crate allocates
/// on its own (results, temporaries and offset tables); larger ones are an
/// [`Error::Alloc`] instead of an allocation. Process-wide; the default is
/// [`DEFAULT_ALLOC_LIMIT`]. Returns the previous limit.
pub fn set_alloc_limit(bytes: usize) -> usize {
    LIMIT.swap(bytes, Ordering::Relaxed)
}

/// The current allocation limit in bytes (see [`set_alloc_limit`]).
pub fn alloc_limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// A vector of `n` copies of `value`, within the [allocation limit](set_alloc_limit) and
/// reserved fallibly: how a caller sizes a buffer from its input the way the kernels do.
///
/// # Errors
/// [`Error::Alloc`] naming `op` when `n` elements exceed the limit or the allocator
/// refuses them.
pub fn filled_vec<T: Copy>(op: &'static str, n: usize, value: T) -> Result<Vec<T>> {
    let mut v = reserve(op, n)?;
    v.resize(n, value);
    Ok(v)
}

/// An empty vector with room for `n` elements, within the limit.
pub(crate) fn reserve<T>(op: &'static str, n: usize) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let bytes = u128::try_from(n)
        .unwrap_or(u128::MAX)
        .saturating_mul(size as u128);
    let limit = alloc_limit();
    if bytes > limit as u128 {
        return Err(Error::Alloc {
            op,
            elements: n as u128,
            elem_bytes: size,
            detail: format!("the allocation limit of {limit} bytes"),
        });
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| Error::Alloc {
        op,
        elements: n as u128,
        elem_bytes: size,
        detail: format!("what the allocator gives ({e})"),
    })?;
    Ok(v)
}

/// The element count of `shape` as `usize`, or an [`Error::Alloc`] naming it.
pub(crate) fn count(op: &'static str, shape: &[usize], elem_bytes: usize) -> Result<usize> {
    let n = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    n.ok_or_else(|| Error::Alloc {
        op,
        elements: shape
            .iter()
            .fold(1u128, |acc, &d| acc.saturating_mul(d as u128)),
        elem_bytes,
        detail: "the address range".to_string(),
    })
}
