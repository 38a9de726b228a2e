//! The allocation limit: every buffer whose size the caller's input decides (a
//! materialized result, a temporary, an offset table) is reserved fallibly and
//! refused beyond a process-wide limit; and the huge-page advice for large buffers.

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
/// reserved fallibly: how a caller sizes a buffer from its input the way the kernels do. On
/// Linux, a vector spanning a huge page is advised for huge pages before it is filled
/// ([`advise_huge_pages`]).
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
    // Before the first write, which is when the pages are chosen.
    let _ = advise_range(v.as_ptr() as usize, v.capacity().saturating_mul(size));
    Ok(v)
}

/// A huge page of x86-64 and aarch64 Linux (2 MiB with 4 KiB base pages).
pub const HUGE_PAGE: usize = 1 << 21;

/// Asks the operating system to back the whole huge pages inside `buf` with transparent huge
/// pages, and returns whether it agreed. The buffers the kernels allocate themselves (results
/// of `materialize`, `map`, `zip`, `reduce`, and [`filled_vec`]) get this advice when they
/// span a huge page; advise a buffer of your own before it is first written (the pages are
/// chosen then; later, the kernel may merge them in the background).
///
/// Tiled copies of large permutations touch a line in each of many pages: the u8 `210`
/// permute of 256^3 reads and writes rows 64 KiB apart. With both buffers advised it ran
/// in 2.4-2.5 ms against 3.3-3.4 on 4 KiB pages, on two threads of a Zen 3
/// (docs/performance.md).
///
/// Only on Linux, where `madvise(MADV_HUGEPAGE)` takes effect when
/// `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise` or `always`; elsewhere, and for
/// buffers that hold no whole huge page, nothing is done and the result is `false`. Never
/// changes the contents.
#[must_use = "false means the buffer stays on base pages"]
pub fn advise_huge_pages<T>(buf: &[T]) -> bool {
    advise_range(buf.as_ptr() as usize, std::mem::size_of_val(buf))
}

/// [`advise_huge_pages`] for the `bytes` bytes from address `start`.
fn advise_range(start: usize, bytes: usize) -> bool {
    let Some(end) = start.checked_add(bytes) else {
        return false;
    };
    let first = start.next_multiple_of(HUGE_PAGE);
    let last = end - end % HUGE_PAGE;
    if last <= first {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `first..last` lies inside one live allocation (the caller's buffer or
        // reserved vector) and is page-aligned; MADV_HUGEPAGE changes how pages are backed,
        // never their contents, and does not unmap anything.
        let rc = unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                last - first,
                libc::MADV_HUGEPAGE,
            )
        };
        rc == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The element count of `shape` as `usize`, or an [`Error::Alloc`] naming it.
pub(crate) fn count(op: &'static str, shape: &[usize], elem_bytes: usize) -> Result<usize> {
    // An empty shape has no element, whatever its other sizes.
    if shape.contains(&0) {
        return Ok(0);
    }
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

#[cfg(test)]
mod tests {
    use super::{advise_huge_pages, advise_range, filled_vec, HUGE_PAGE};

    #[test]
    fn advice_needs_a_whole_huge_page_and_keeps_the_contents() {
        let small: Vec<u32> = (0..1000).collect();
        assert!(!advise_huge_pages(&small));
        assert!(!advise_huge_pages::<u8>(&[]));
        assert!(small.iter().copied().eq(0..1000));
        // Ranges that wrap or hold no whole huge page are refused without a system call.
        assert!(!advise_range(usize::MAX - 10, 100));
        assert!(!advise_range(HUGE_PAGE + 1, HUGE_PAGE));

        let big: Vec<u64> = (0..(3 * HUGE_PAGE / 8) as u64).collect();
        let advised = advise_huge_pages(&big);
        let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
        if cfg!(target_os = "linux") && thp.exists() {
            assert!(advised, "madvise(MADV_HUGEPAGE) refused");
        } else {
            assert!(!advised);
        }
        assert!(big.iter().copied().eq(0..(3 * HUGE_PAGE / 8) as u64));
    }

    #[test]
    fn advised_allocations_hold_their_values() {
        let v = filled_vec("test", 3 * HUGE_PAGE + 5, 7u8).expect("allocation");
        assert_eq!(v.len(), 3 * HUGE_PAGE + 5);
        assert!(v.iter().all(|&x| x == 7));
    }
}
