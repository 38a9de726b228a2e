//! The SIMD level the kernels run at, detected once at run time, and the register transposes
//! of the tiled kernel for each level and element size.
//!
//! x86_64 has SSE2 in its baseline; AVX2 is used when `is_x86_feature_detected!` finds it, and
//! AVX-512 when it finds AVX-512F and AVX-512BW (the byte and word shuffles) as well. Other
//! architectures (and tests that force it) take the portable path: plain loops.

use std::sync::atomic::{AtomicU8, Ordering};

/// A SIMD level; each one's kernels are only called when the CPU has its features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// Plain loops, on every architecture.
    Portable = 1,
    /// SSE2 (x86_64 baseline).
    Sse2 = 2,
    /// AVX2.
    Avx2 = 3,
    /// AVX-512F and AVX-512BW (with AVX2).
    Avx512 = 4,
}

impl Level {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Sse2 => "sse2",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// Every level, lowest first.
    const ALL: [Level; 4] = [Level::Portable, Level::Sse2, Level::Avx2, Level::Avx512];

    /// The level stored as `x` (`x as u8` of a level), if any.
    fn from_u8(x: u8) -> Option<Level> {
        Level::ALL.get(usize::from(x).checked_sub(1)?).copied()
    }
}

/// 0 until detected, then a `Level` as `u8`.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The level of this CPU, capped by the environment variable `SYMSHAPE_SIMD` when it names a
/// level (`portable`, `sse2`, `avx2` or `avx512`); a level above the CPU's, or any other
/// value, is ignored.
fn detect() -> Level {
    capped(detect_cpu(), std::env::var("SYMSHAPE_SIMD").ok().as_deref())
}

/// `cpu`, or the level `cap` names when it is lower.
fn capped(cpu: Level, cap: Option<&str>) -> Level {
    let cap = cap.and_then(|v| {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(v.trim()))
    });
    match cap {
        Some(l) if l < cpu => l,
        _ => cpu,
    }
}

/// The best level this CPU supports.
fn detect_cpu() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return Level::Sse2;
        }
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
        {
            return Level::Avx512;
        }
        Level::Avx2
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Level::Portable
    }
}

/// A level forced by the tests (0: none); never above the detected one.
#[cfg(test)]
pub(crate) static FORCED: AtomicU8 = AtomicU8::new(0);

/// Makes the tests stream every long row copy, whatever the destination's size.
#[cfg(test)]
pub(crate) static FORCE_STREAM: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The bytes at the end of a streamed destination written with ordinary stores in the tests
/// that stream (none unless set).
#[cfg(test)]
pub(crate) static FORCE_CACHED_TAIL: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// The best level this CPU supports (detected on first use).
#[inline]
pub(crate) fn level() -> Level {
    #[cfg(test)]
    {
        let f = FORCED.load(Ordering::Relaxed);
        if let Some(l) = Level::from_u8(f).filter(|&l| l <= detect()) {
            return l;
        }
    }
    match Level::from_u8(LEVEL.load(Ordering::Relaxed)) {
        Some(l) => l,
        None => {
            let l = detect();
            LEVEL.store(l as u8, Ordering::Relaxed);
            l
        }
    }
}

/// Every level this CPU supports, lowest first (the tests run each).
#[cfg(test)]
pub(crate) fn supported() -> Vec<Level> {
    Level::ALL.into_iter().filter(|&l| l <= detect()).collect()
}

/// The SIMD path the kernels take on this CPU: `"avx512"` (AVX-512F and AVX-512BW: whole
/// destination lines in one register for 2-, 4- and 8-byte transposes, 64-byte gathers),
/// `"avx2"` (AVX2 register transposes for 1- and 2-byte elements, SSE2 ones for 4- and 8-byte
/// elements but for whole lines into streamed destinations), `"sse2"` or `"portable"`;
/// [`simd_kernels`] says more.
///
/// Detected once at run time; the benchmarks print it next to their figures. The environment
/// variable `SYMSHAPE_SIMD`, read at that moment, caps it: set it to `avx2`, `sse2` or
/// `portable` to run the kernels of a lower level (to compare them, or to rule a level out).
#[must_use]
pub fn simd_path() -> &'static str {
    level().name()
}

/// What the kernels run at the level of [`simd_path`], element size by element size, in one
/// line (the benchmarks print it in their header).
#[must_use]
pub fn simd_kernels() -> &'static str {
    match level() {
        Level::Avx512 => {
            "tiles: u8 staged through L1 with 32-byte loads (avx2), u16/f32/f64 whole lines in \
             one 64-byte register; a[:, ::2]: 64-byte permutes"
        }
        Level::Avx2 => {
            "tiles: u8 staged through L1 with 32-byte loads, u16 32-byte loads, f32/f64 \
             16-byte blocks (sse2), or whole lines in two 32-byte registers into streamed \
             destinations; a[:, ::2]: 32-byte shuffles"
        }
        Level::Sse2 => "tiles: 16-byte blocks for every element size; a[:, ::2]: plain loops",
        Level::Portable => "tiles and gathers: plain loops",
    }
}

/// One tile of the tiled kernel, in bytes: `rows` source rows (a multiple of `16 / size`, at
/// most `64 / size`: one destination cache line or a whole number of its 16-byte quarters) by
/// `bl` destination rows from `b0`, where source row `k` starts at `sp + k * sa` and
/// destination row `ib` at `dp + ib * db`, element `ib` of a source row going to element `k`
/// of destination row `ib`. Whole groups of destination rows go through register transposes
/// of `level`; returns the number of rows done (from `b0`), the caller copies the rest. Bit
/// moves only, so exact for any element type of that size. With `stream`, whole lines that
/// start on a cache line are written with non-temporal stores (2-, 4- and 8-byte elements at
/// the AVX-512 level, 4- and 8-byte ones at AVX2), for destinations larger than the
/// last-level cache.
///
/// # Safety
/// `level` is supported by this CPU; `size` is 1, 2, 4 or 8 (else nothing is done); `rows`
/// as above (else nothing is done); for `k < rows` and `ib` in `b0..b0 + bl`, the `size`
/// bytes at `sp + k * sa + ib * size` are readable and those at `dp + ib * db + k * size`
/// writable.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn tile(
    level: Level,
    size: usize,
    rows: usize,
    dp: *mut u8,
    sp: *const u8,
    sa: isize,
    db: isize,
    b0: usize,
    bl: usize,
    stream: bool,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        // Quarters of a destination line per tile: 16-byte blocks of `16 / size` rows.
        let bytes = rows.saturating_mul(size);
        if !matches!(size, 1 | 2 | 4 | 8)
            || !bytes.is_multiple_of(16)
            || !(16..=64).contains(&bytes)
        {
            return 0;
        }
        let quads = bytes / 16;
        // Whole destination lines may be written with non-temporal stores: every line of
        // the tile starts on a cache line.
        let on_lines =
            stream && dp.wrapping_offset(b0 as isize * db).align_offset(64) == 0 && db % 64 == 0;
        // `done` rows, and the rows after them at the lower level `$l`.
        macro_rules! rest {
            ($l:expr, $done:expr) => {{
                let done = $done;
                // SAFETY: the caller's contract, for the rows after the first `done`; the
                // lower level's features come with this one's (SSE2 is in the x86_64
                // baseline).
                done + unsafe { tile($l, size, rows, dp, sp, sa, db, b0 + done, bl - done, false) }
            }};
        }
        macro_rules! go {
            ($f:ident, $s:literal, $w:expr) => {{
                let groups = bl / $w;
                // SAFETY: the caller's contract, for the `groups * $w` rows from `b0` and
                // `quads * 16 / S = rows` source rows; the level's features are present
                // (caller; SSE2 is in the x86_64 baseline).
                unsafe { x86::$f::<$s>(dp, sp, sa, db, b0, groups, quads) };
                groups * $w
            }};
        }
        match (level, size) {
            (Level::Portable, _) => 0,
            (Level::Sse2, 1) => go!(tile_sse2, 1, 16),
            (Level::Sse2, 2) => go!(tile_sse2, 2, 8),
            (Level::Sse2, 4) => go!(tile_sse2, 4, 4),
            (Level::Sse2, 8) => go!(tile_sse2, 8, 2),
            (Level::Avx2, 1) if quads == 4 => {
                // Whole 64-row blocks through the staging buffer, then groups of 32.
                let blocks = bl / 64;
                // Software prefetch of the source rows two quarters ahead, when the rows lie
                // less than a page apart: on a Zen 4 the u8 `021` and `201` permutes (rows
                // 256 bytes apart) took 3.5-3.7 ms single-threaded with it against 4.8-4.9
                // without, while rows 4 KiB and 64 KiB apart (transposes, `120`, `210`) were
                // as fast or slower (docs/performance.md).
                // SAFETY: the caller's contract, for the `blocks * 64` rows from `b0` and the
                // 64 source rows; AVX2 was detected (caller).
                unsafe {
                    if sa.unsigned_abs() < 4096 {
                        x86::tile_staged_u8_avx2::<true>(dp, sp, sa, db, b0, blocks)
                    } else {
                        x86::tile_staged_u8_avx2::<false>(dp, sp, sa, db, b0, blocks)
                    }
                };
                let done = blocks * 64;
                let groups = (bl - done) / 32;
                // SAFETY: as above, for the next `groups * 32` rows.
                unsafe { x86::tile_avx2::<1>(dp, sp, sa, db, b0 + done, groups, quads) };
                let done = done + groups * 32;
                rest!(Level::Sse2, done)
            }
            // Groups of 32 or 16 rows, then those of the SSE2 blocks, which the line
            // boundaries of a buffer that is not line-aligned leave.
            (Level::Avx2, 1 | 2) => {
                let done = if size == 1 {
                    go!(tile_avx2, 1, 32)
                } else {
                    go!(tile_avx2, 2, 16)
                };
                rest!(Level::Sse2, done)
            }
            // Destinations that stream, tiles on their lines: whole lines in two registers,
            // written with non-temporal stores (on a Zen 4 capped at AVX2, the f64 transpose
            // 1.3-1.7 times a memcpy with the SSE2 blocks, 0.84-0.93 so; docs/performance.md),
            // then the SSE2 blocks for the rows left.
            (Level::Avx2, 4 | 8) if quads == 4 && on_lines => {
                let w = 32 / size;
                let groups = bl / w;
                // SAFETY: the caller's contract, for the `groups * w` rows from `b0` and the
                // `64 / S` source rows; AVX2 was detected (caller); every destination line is
                // aligned (above).
                unsafe {
                    if size == 4 {
                        x86::tile_lines_avx2::<4>(dp, sp, sa, db, b0, groups);
                    } else {
                        x86::tile_lines_avx2::<8>(dp, sp, sa, db, b0, groups);
                    }
                }
                let done = groups * w;
                rest!(Level::Sse2, done)
            }
            // Otherwise 4- and 8-byte elements keep the SSE2 blocks at the AVX2 level: the
            // 32-byte loads of `tile_avx2` made the f32 transpose slower on a Zen 3
            // (docs/performance.md).
            (Level::Avx2, 4) => go!(tile_sse2, 4, 4),
            (Level::Avx2, 8) => go!(tile_sse2, 8, 2),
            // Whole destination lines in one register each, then the AVX2 level's kernels
            // for the rows left.
            (Level::Avx512, 2 | 4 | 8) if quads == 4 => {
                let w = 64 / size;
                let groups = bl / w;
                macro_rules! lines {
                    ($s:literal) => {
                        // SAFETY: the caller's contract, for the `groups * w` rows from `b0`
                        // and the `64 / S` source rows; AVX-512F and BW were detected
                        // (caller); every destination line is aligned when streaming.
                        unsafe {
                            if on_lines {
                                x86::tile_lines_avx512::<$s, true>(dp, sp, sa, db, b0, groups);
                            } else {
                                x86::tile_lines_avx512::<$s, false>(dp, sp, sa, db, b0, groups);
                            }
                        }
                    };
                }
                match size {
                    2 => lines!(2),
                    4 => lines!(4),
                    _ => lines!(8),
                }
                let done = groups * w;
                rest!(Level::Avx2, done)
            }
            // 1-byte lines keep the AVX2 level's staged blocks (staging them with 64-byte
            // loads was slower on a Zen 4; docs/performance.md), and narrow slabs of 4- and
            // 8-byte elements the AVX2 level's blocks.
            (Level::Avx512, 1) if quads == 4 => rest!(Level::Avx2, 0),
            (Level::Avx512, 4 | 8) => rest!(Level::Avx2, 0),
            // Narrow slabs: groups of 64 or 32 rows, each lane a register transpose.
            (Level::Avx512, 1 | 2) => {
                let done = if size == 1 {
                    go!(tile_avx512, 1, 64)
                } else {
                    go!(tile_avx512, 2, 32)
                };
                rest!(Level::Avx2, done)
            }
            _ => 0,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (level, size, rows, dp, sp, sa, db, b0, bl, stream);
        0
    }
}

/// Copies `bytes` bytes from `sp` to `dp` with non-temporal stores (after an unaligned head
/// that aligns the destination), so that a destination far larger than the last-level cache
/// is neither read before it is written nor evicts the source from the cache. No store fence:
/// the caller calls [`fence`] before the bytes may be read by another thread (the kernels'
/// tasks end with one, `exec::run_units`).
///
/// # Safety
/// `level` is supported by this CPU; `sp..sp + bytes` readable, `dp..dp + bytes` writable, not
/// overlapping.
#[inline]
pub(crate) unsafe fn stream_copy(level: Level, dp: *mut u8, sp: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        match level {
            // SAFETY: the caller's contract; AVX-512F was detected.
            Level::Avx512 => return unsafe { x86::stream_copy_avx512(dp, sp, bytes) },
            // SAFETY: the caller's contract; AVX2 was detected.
            Level::Avx2 => return unsafe { x86::stream_copy_avx2(dp, sp, bytes) },
            // SAFETY: the caller's contract; SSE2 is in the x86_64 baseline.
            Level::Sse2 => return unsafe { x86::stream_copy_sse2(dp, sp, bytes) },
            Level::Portable => {}
        }
    }
    let _ = level;
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(sp, dp, bytes) }
}

/// Copies `rows` rows of `bytes` bytes each, row `i` from `sp + i * sb` to `dp + i * db`
/// (strides in bytes), inline in whole registers of the level's width (the last register of a
/// row overlapping the one before when the width does not divide the row), with no call per
/// row: rows of a few hundred bytes cost about as much to dispatch through `memcpy` as to
/// copy. Rows of fewer bytes than a register take a narrower one, down to a pair of
/// overlapping scalar moves. Bit moves only, so exact for any element type.
///
/// # Safety
/// `level` is supported by this CPU; for `i < rows`, `sp + i * sb .. + bytes` readable and
/// `dp + i * db .. + bytes` writable, the two not overlapping.
#[inline]
pub(crate) unsafe fn copy_rows(
    level: Level,
    dp: *mut u8,
    db: isize,
    sp: *const u8,
    sb: isize,
    rows: usize,
    bytes: usize,
) {
    #[cfg(target_arch = "x86_64")]
    {
        match level {
            Level::Avx512 if bytes >= 64 => {
                // SAFETY: the caller's contract; AVX-512F was detected; a register's width
                // of bytes.
                return unsafe { x86::copy_rows_avx512(dp, db, sp, sb, rows, bytes) };
            }
            Level::Avx512 | Level::Avx2 if bytes >= 32 => {
                // SAFETY: the caller's contract; AVX2 was detected (AVX-512 implies it); a
                // register's width of bytes.
                return unsafe { x86::copy_rows_avx2(dp, db, sp, sb, rows, bytes) };
            }
            Level::Avx512 | Level::Avx2 | Level::Sse2 if bytes >= 16 => {
                // SAFETY: the caller's contract; SSE2 is in the x86_64 baseline; a
                // register's width of bytes.
                return unsafe { x86::copy_rows_sse2(dp, db, sp, sb, rows, bytes) };
            }
            _ => {}
        }
    }
    let _ = level;
    // SAFETY: the caller's contract.
    unsafe { copy_rows_scalar(dp, db, sp, sb, rows, bytes) }
}

/// Copies `bytes` bytes from `sp` to `dp` in whole registers of the level's width with the
/// destination's stores on 64-byte line boundaries: the first and last 64 bytes unaligned,
/// overlapping the aligned lines between them (a store that straddles two lines costs two).
/// It copies the runs of a causal mask's rows, which start anywhere in a line: `memcpy`
/// spent a quarter of its time there in `rep movsb`, which glibc takes for runs of 2 KiB or
/// more on an AMD EPYC family 26 model 2, where the 1.3 MB mask on one thread took 14.2-15.1
/// µs through `memcpy` and 13.2-13.8 with this (docs/performance.md). Runs under 64 bytes,
/// and levels below AVX2, go through `copy_nonoverlapping`.
///
/// # Safety
/// `level` is supported by this CPU; `sp..sp + bytes` readable, `dp..dp + bytes` writable, not
/// overlapping.
#[inline]
pub(crate) unsafe fn copy_run(level: Level, dp: *mut u8, sp: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        match level {
            // SAFETY: the caller's contract; AVX-512F was detected; at least 64 bytes.
            Level::Avx512 if bytes >= 64 => return unsafe { x86::copy_run_avx512(dp, sp, bytes) },
            // SAFETY: the caller's contract; AVX2 was detected; at least 64 bytes.
            Level::Avx2 if bytes >= 64 => return unsafe { x86::copy_run_avx2(dp, sp, bytes) },
            _ => {}
        }
    }
    let _ = level;
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(sp, dp, bytes) }
}

/// [`copy_rows`] without registers: rows of at most 16 bytes as two overlapping moves of
/// the widest integer that fits, longer ones through `copy_nonoverlapping`.
///
/// # Safety
/// As [`copy_rows`].
#[inline]
unsafe fn copy_rows_scalar(
    dp: *mut u8,
    db: isize,
    sp: *const u8,
    sb: isize,
    rows: usize,
    bytes: usize,
) {
    /// Each row as two moves of `$t`, at its start and at its end (`bytes` in
    /// `size_of::<$t>()..=2 * size_of::<$t>()`).
    macro_rules! pair {
        ($t:ty) => {{
            let last = bytes - std::mem::size_of::<$t>();
            for i in 0..rows as isize {
                // SAFETY: both moves lie inside row `i` (the caller's contract).
                unsafe {
                    let (d, s) = (dp.offset(i * db), sp.offset(i * sb));
                    let (a, b) = (
                        (s as *const $t).read_unaligned(),
                        (s.add(last) as *const $t).read_unaligned(),
                    );
                    (d as *mut $t).write_unaligned(a);
                    (d.add(last) as *mut $t).write_unaligned(b);
                }
            }
        }};
    }
    match bytes {
        0 => {}
        1 => {
            for i in 0..rows as isize {
                // SAFETY: the row's one byte.
                unsafe { *dp.offset(i * db) = *sp.offset(i * sb) };
            }
        }
        2..=3 => pair!(u16),
        4..=7 => pair!(u32),
        8..=16 => pair!(u64),
        _ => {
            for i in 0..rows as isize {
                // SAFETY: row `i` (the caller's contract).
                unsafe {
                    std::ptr::copy_nonoverlapping(sp.offset(i * sb), dp.offset(i * db), bytes)
                };
            }
        }
    }
}

/// A store fence after non-temporal stores of `level` (nothing at the portable level, which
/// makes none).
#[inline]
pub(crate) fn fence(level: Level) {
    #[cfg(target_arch = "x86_64")]
    if level != Level::Portable {
        // SAFETY: SSE2 (the fence's feature) is in the x86_64 baseline.
        unsafe { std::arch::x86_64::_mm_sfence() };
    }
    let _ = level;
}

/// Copies every second element: `size` bytes from `sp + 2 i size` to `dp + i size` for
/// `i < len`, in whole registers of the level's width (with non-temporal stores when
/// `stream`, once the destination reaches a cache line). Returns the number of
/// elements done from the start; the caller copies the rest. Bit moves only, so exact for any
/// element type of that size.
///
/// # Safety
/// `level` is supported by this CPU; `size` is 1, 2, 4 or 8 (else nothing is done);
/// `dp..dp + len size` writable and `sp..sp + (2 len - 1) size` readable, not overlapping.
#[inline]
pub(crate) unsafe fn every_second(
    level: Level,
    size: usize,
    dp: *mut u8,
    sp: *const u8,
    len: usize,
    stream: bool,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if !matches!(size, 1 | 2 | 4 | 8) {
            return 0;
        }
        // Bytes of output per register.
        let width = match level {
            Level::Avx512 => 64,
            Level::Avx2 => 32,
            Level::Sse2 | Level::Portable => return 0,
        };
        // Elements until the destination reaches a line, copied one by one, when streaming.
        let head = match stream {
            true => (dp.align_offset(64) / size).min(len),
            false => 0,
        };
        for i in 0..head {
            // SAFETY: `i < len`; the caller's ranges.
            unsafe { std::ptr::copy_nonoverlapping(sp.add(2 * i * size), dp.add(i * size), size) };
        }
        let aligned = stream && dp.wrapping_add(head * size).align_offset(64) == 0;
        // Whole registers of output whose two loads stay in the source range (`2 (len - head)
        // - 1` elements from element `2 head`).
        let n = match len - head {
            0 => 0,
            m => (2 * m - 1) * size / (2 * width),
        };
        // SAFETY: `n` registers of output from element `head`, whose sources are inside the
        // caller's range; the level's features were detected (caller); the destination is on
        // a line when `aligned`.
        unsafe {
            let (d, s) = (dp.add(head * size), sp.add(2 * head * size));
            match (level, aligned) {
                (Level::Avx512, true) => x86::every_second_avx512::<true>(size, d, s, n),
                (Level::Avx512, false) => x86::every_second_avx512::<false>(size, d, s, n),
                (_, true) => x86::every_second_avx2::<true>(size, d, s, n),
                (_, false) => x86::every_second_avx2::<false>(size, d, s, n),
            }
        }
        head + n * width / size
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (level, size, dp, sp, len, stream);
        0
    }
}

/// Reverses the low `bits` bits of `j`: the register that holds transposed row `j` after
/// the unpack network below.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
const fn bitrev(j: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        j.reverse_bits() >> (usize::BITS - bits)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::bitrev;
    use std::arch::x86_64::*;

    /// Bytes copied by ordinary moves until `dp` is aligned to `align`, at most `bytes`.
    fn head(dp: *mut u8, align: usize, bytes: usize) -> usize {
        (dp.align_offset(align)).min(bytes)
    }

    /// The streaming copies, one per register width: an unaligned head, then whole 64-byte
    /// lines loaded and stored with non-temporal stores, then the tail (no fence: the
    /// callers fence).
    macro_rules! stream_copy {
        ($name:ident, $feature:literal, $reg:ty, $load:ident, $stream:ident) => {
            /// # Safety
            /// As [`super::stream_copy`], with the target feature.
            #[inline]
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $name(dp: *mut u8, sp: *const u8, bytes: usize) {
                const PER_LINE: usize = 64 / std::mem::size_of::<$reg>();
                let h = head(dp, 64, bytes);
                let n = (bytes - h) / 64;
                // SAFETY: all offsets below `bytes`, inside the caller's ranges; `dp + h` is
                // 64-byte aligned, as the streaming stores require.
                unsafe {
                    std::ptr::copy_nonoverlapping(sp, dp, h);
                    let (d, s) = (dp.add(h), sp.add(h));
                    for i in 0..n {
                        let (d, s) = (d.add(64 * i) as *mut $reg, s.add(64 * i) as *const $reg);
                        for k in 0..PER_LINE {
                            $stream(d.add(k), $load(s.add(k)));
                        }
                    }
                    let done = h + 64 * n;
                    std::ptr::copy_nonoverlapping(sp.add(done), dp.add(done), bytes - done);
                }
            }
        };
    }
    stream_copy!(
        stream_copy_sse2,
        "sse2",
        __m128i,
        _mm_loadu_si128,
        _mm_stream_si128
    );
    stream_copy!(
        stream_copy_avx2,
        "avx2",
        __m256i,
        _mm256_loadu_si256,
        _mm256_stream_si256
    );
    stream_copy!(
        stream_copy_avx512,
        "avx512f",
        __m512i,
        _mm512_loadu_si512,
        _mm512_stream_si512
    );

    /// The row copies of [`super::copy_rows`], one per register width: rows two at a time,
    /// each in groups of four whole unaligned registers, the eight registers of a pair of
    /// groups loaded before any is stored; the rest of a row (under four registers) likewise,
    /// its last register ending at the row's end and overlapping the one before when the
    /// width does not divide the row. Storing each register right after loading it kept the
    /// loads waiting behind the stores: in C on an AMD EPYC (family 26, model 2), writing
    /// 256-byte rows into a head-major cache took 0.58 ms that way, 0.48 with a row's four
    /// loads first and 0.45-0.46 with two rows' eight (merging heads: 0.63-0.65 against
    /// 0.48-0.50 for four); the kernels' merge heads went from 0.69-0.73 ms to 0.63-0.67
    /// with four, and the cache write from 0.61 to 0.58 with eight (docs/performance.md).
    macro_rules! copy_rows {
        ($name:ident, $feature:literal, $reg:ty, $load:ident, $store:ident) => {
            /// # Safety
            /// As [`super::copy_rows`], with the target feature and `bytes` at least the
            /// register's width.
            #[inline]
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $name(
                dp: *mut u8,
                db: isize,
                sp: *const u8,
                sb: isize,
                rows: usize,
                bytes: usize,
            ) {
                const W: usize = std::mem::size_of::<$reg>();
                let last = bytes - W;
                let whole = bytes - bytes % (4 * W);
                // The registers after the groups: none, or up to four, the last at `last`.
                let tail = match (bytes - whole).div_ceil(W) {
                    0 => None,
                    1 => Some([last; 4]),
                    2 => Some([whole, last, last, last]),
                    3 => Some([whole, whole + W, last, last]),
                    _ => Some([whole, whole + W, whole + 2 * W, last]),
                };
                // Every register starts at most at `last` of its row (`k + 4 * W <= whole` in
                // the groups, `last + W == bytes`). A tail of fewer than four registers loads
                // and stores its last one again, with the same bytes.
                let load = |s: *const u8, at: [usize; 4]| {
                    // SAFETY: inside a row of the caller's, as above.
                    let ld = |k: usize| unsafe { $load(s.add(k) as *const $reg) };
                    (ld(at[0]), ld(at[1]), ld(at[2]), ld(at[3]))
                };
                let store = |d: *mut u8, at: [usize; 4], r: ($reg, $reg, $reg, $reg)| {
                    // SAFETY: inside a row of the caller's, as above; the rows written do
                    // not overlap those read.
                    unsafe {
                        $store(d.add(at[0]) as *mut $reg, r.0);
                        $store(d.add(at[1]) as *mut $reg, r.1);
                        $store(d.add(at[2]) as *mut $reg, r.2);
                        $store(d.add(at[3]) as *mut $reg, r.3);
                    }
                };
                let group = |k: usize| [k, k + W, k + 2 * W, k + 3 * W];
                let row = |i: isize| {
                    // SAFETY: row `i` is one of the caller's rows.
                    unsafe { (dp.offset(i * db), sp.offset(i * sb)) }
                };
                let mut i = 0;
                // Two rows at a time: eight loads issued before their stores.
                while i + 1 < rows as isize {
                    let ((d0, s0), (d1, s1)) = (row(i), row(i + 1));
                    let pair = |at: [usize; 4]| {
                        let (a, b) = (load(s0, at), load(s1, at));
                        store(d0, at, a);
                        store(d1, at, b);
                    };
                    let mut k = 0;
                    while k < whole {
                        pair(group(k));
                        k += 4 * W;
                    }
                    if let Some(at) = tail {
                        pair(at);
                    }
                    i += 2;
                }
                if i < rows as isize {
                    let (d, s) = row(i);
                    let mut k = 0;
                    while k < whole {
                        store(d, group(k), load(s, group(k)));
                        k += 4 * W;
                    }
                    if let Some(at) = tail {
                        store(d, at, load(s, at));
                    }
                }
            }
        };
    }
    copy_rows!(
        copy_rows_sse2,
        "sse2",
        __m128i,
        _mm_loadu_si128,
        _mm_storeu_si128
    );
    copy_rows!(
        copy_rows_avx2,
        "avx2",
        __m256i,
        _mm256_loadu_si256,
        _mm256_storeu_si256
    );
    copy_rows!(
        copy_rows_avx512,
        "avx512f",
        __m512i,
        _mm512_loadu_si512,
        _mm512_storeu_si512
    );

    /// The runs of [`super::copy_run`], one per register width: the first and last 64 bytes
    /// loaded first and stored last (unaligned), the whole lines between them four at a
    /// time, loaded before they are stored, then one at a time, stored aligned.
    macro_rules! copy_run {
        ($name:ident, $feature:literal, $reg:ty, $load:ident, $storeu:ident, $store:ident) => {
            /// # Safety
            /// As [`super::copy_run`], with the target feature and `bytes >= 64`.
            #[inline]
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $name(dp: *mut u8, sp: *const u8, bytes: usize) {
                const W: usize = std::mem::size_of::<$reg>();
                const PER_LINE: usize = 64 / W;
                // SAFETY: every load and store lies inside the caller's `bytes` from `sp` and
                // `dp` (`bytes >= 64`; the aligned lines end at most at `bytes`); the aligned
                // stores start on line boundaries.
                unsafe {
                    let line = |s: *const u8| -> [$reg; PER_LINE] {
                        std::array::from_fn(|k| $load(s.add(k * W).cast()))
                    };
                    let (first, last) = (line(sp), line(sp.add(bytes - 64)));
                    // The first line boundary after `dp` (the first line is in `first`).
                    let mut o = 64 - dp as usize % 64;
                    while o + 256 <= bytes {
                        let r: [[$reg; PER_LINE]; 4] =
                            std::array::from_fn(|j| line(sp.add(o + 64 * j)));
                        for (j, l) in r.iter().enumerate() {
                            for (k, &x) in l.iter().enumerate() {
                                $store(dp.add(o + 64 * j + k * W).cast(), x);
                            }
                        }
                        o += 256;
                    }
                    while o + 64 <= bytes {
                        for (k, x) in line(sp.add(o)).into_iter().enumerate() {
                            $store(dp.add(o + k * W).cast(), x);
                        }
                        o += 64;
                    }
                    for k in 0..PER_LINE {
                        $storeu(dp.add(k * W).cast(), first[k]);
                        $storeu(dp.add(bytes - 64 + k * W).cast(), last[k]);
                    }
                }
            }
        };
    }
    copy_run!(
        copy_run_avx2,
        "avx2",
        __m256i,
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_store_si256
    );
    copy_run!(
        copy_run_avx512,
        "avx512f",
        __m512i,
        _mm512_loadu_si512,
        _mm512_storeu_si512,
        _mm512_store_si512
    );

    /// `$body` once for each `$i` in `0..16`, each time a literal, so that the register
    /// arrays the kernels index with it are indexed by constants and stay in registers.
    macro_rules! each16 {
        ($i:ident => $body:block) => {
            each16!(@ $i $body 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
        };
        (@ $i:ident $body:block $($n:literal)*) => {$({
            let $i: usize = $n;
            $body
        })*};
    }

    /// As [`each16`], for `$i` in `0..4`.
    macro_rules! each4 {
        ($i:ident => $body:block) => {
            each4!(@ $i $body 0 1 2 3)
        };
        (@ $i:ident $body:block $($n:literal)*) => {$({
            let $i: usize = $n;
            $body
        })*};
    }

    /// One stage of the unpack network on the first `$r` registers of `$v`: pair `i` (registers
    /// `2 i` and `2 i + 1`) interleaved by `$lo` into register `i` and by `$hi` into register
    /// `$r / 2 + i`.
    macro_rules! unpack {
        ($v:ident, $r:expr, $lo:ident, $hi:ident) => {{
            let h = $r / 2;
            let mut t = $v;
            unpack!(@ $v t h $lo $hi 0 1 2 3 4 5 6 7);
            $v = t;
        }};
        (@ $v:ident $t:ident $h:ident $lo:ident $hi:ident $($i:literal)*) => {$(
            if $i < $h {
                $t[$i] = $lo($v[2 * $i], $v[2 * $i + 1]);
                $t[$h + $i] = $hi($v[2 * $i], $v[2 * $i + 1]);
            }
        )*};
    }

    /// The unpack network on the first `16 / S` registers of a tile (rows of `16 / S`
    /// elements of `S` bytes, in each 128-bit lane): afterwards register `j` holds, in each
    /// lane, column `j` of that lane's block. One function per register width; every index
    /// is a constant once `S` is, so the registers are never spilled to index them.
    macro_rules! ladder {
        ($name:ident, $feature:literal, $reg:ty,
         [$lo1:ident, $hi1:ident, $lo2:ident, $hi2:ident, $lo4:ident, $hi4:ident,
          $lo8:ident, $hi8:ident]) => {
            #[inline]
            #[target_feature(enable = $feature)]
            fn $name<const S: usize>(mut v: [$reg; 16]) -> [$reg; 16] {
                let r = 16 / S;
                if S <= 1 {
                    unpack!(v, r, $lo1, $hi1);
                }
                if S <= 2 {
                    unpack!(v, r, $lo2, $hi2);
                }
                if S <= 4 {
                    unpack!(v, r, $lo4, $hi4);
                }
                if S <= 8 {
                    unpack!(v, r, $lo8, $hi8);
                }
                // The network leaves column `j` in register `bitrev(j)`.
                let bits = r.trailing_zeros();
                let mut out = v;
                each16!(j => {
                    if j < r {
                        out[j] = v[bitrev(j, bits)];
                    }
                });
                out
            }
        };
    }
    ladder!(
        ladder128,
        "sse2",
        __m128i,
        [
            _mm_unpacklo_epi8,
            _mm_unpackhi_epi8,
            _mm_unpacklo_epi16,
            _mm_unpackhi_epi16,
            _mm_unpacklo_epi32,
            _mm_unpackhi_epi32,
            _mm_unpacklo_epi64,
            _mm_unpackhi_epi64
        ]
    );
    ladder!(
        ladder512,
        "avx512f,avx512bw",
        __m512i,
        [
            _mm512_unpacklo_epi8,
            _mm512_unpackhi_epi8,
            _mm512_unpacklo_epi16,
            _mm512_unpackhi_epi16,
            _mm512_unpacklo_epi32,
            _mm512_unpackhi_epi32,
            _mm512_unpacklo_epi64,
            _mm512_unpackhi_epi64
        ]
    );
    ladder!(
        ladder256,
        "avx2",
        __m256i,
        [
            _mm256_unpacklo_epi8,
            _mm256_unpackhi_epi8,
            _mm256_unpacklo_epi16,
            _mm256_unpackhi_epi16,
            _mm256_unpacklo_epi32,
            _mm256_unpackhi_epi32,
            _mm256_unpacklo_epi64,
            _mm256_unpackhi_epi64
        ]
    );

    /// The even indices `0, 2, 4, ..` of a two-register permute, per element width.
    #[repr(align(64))]
    struct Even<T, const N: usize>([T; N]);
    /// `Even([0, 2, 4, ..])` of `$n` elements of type `$t`.
    macro_rules! evens {
        ($t:ty, $n:literal) => {{
            let mut x = [0 as $t; $n];
            let mut i = 0;
            while i < $n {
                x[i] = 2 * i as $t;
                i += 1;
            }
            Even(x)
        }};
    }
    static EVEN16: Even<u16, 32> = evens!(u16, 32);
    static EVEN32: Even<u32, 16> = evens!(u32, 16);
    static EVEN64: Even<u64, 8> = evens!(u64, 8);

    /// The kernels of [`super::every_second`], one per register width `W`: `n` registers of
    /// output, register `k` from the two unaligned loads `$a` and `$b` at `sp + 2 W k` and
    /// `W` bytes further, their even elements of `$size` bytes (1, 2, 4 or 8) picked by
    /// `$pick` (with what the statements `$setup` bind before the loop) and stored at
    /// `dp + W k`, with non-temporal stores when `STREAM`.
    macro_rules! every_second {
        ($(#[$doc:meta])* $name:ident, $feature:literal, $reg:ty, $load:ident, $storeu:ident,
         $stream:ident, { $($setup:tt)* } |$size:ident, $a:ident, $b:ident| $pick:expr) => {
            $(#[$doc])*
            ///
            /// # Safety
            /// `dp..dp + W n` writable, `sp..sp + 2 W n` readable; the CPU has the target
            /// features; `dp` 64-byte aligned when `STREAM`.
            #[inline]
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $name<const STREAM: bool>(
                $size: usize,
                dp: *mut u8,
                sp: *const u8,
                n: usize,
            ) {
                const W: usize = std::mem::size_of::<$reg>();
                $($setup)*
                for k in 0..n {
                    // SAFETY: output register `k` and its `2 W` source bytes, inside the
                    // caller's ranges; `dp + W k` aligned when streaming.
                    unsafe {
                        let s = sp.add(2 * W * k);
                        let $a = $load(s as *const $reg);
                        let $b = $load(s.add(W) as *const $reg);
                        let x = $pick;
                        let d = dp.add(W * k) as *mut $reg;
                        if STREAM {
                            $stream(d, x);
                        } else {
                            $storeu(d, x);
                        }
                    }
                }
            }
        };
    }
    every_second!(
        /// The even elements picked by a two-source permute, or for bytes, the low byte of
        /// each 16-bit word narrowed.
        every_second_avx512,
        "avx512f,avx512bw",
        __m512i,
        _mm512_loadu_si512,
        _mm512_storeu_si512,
        _mm512_stream_si512,
        {
            // SAFETY: 64-byte statics.
            let (idx16, idx32, idx64) = unsafe {
                (
                    _mm512_load_si512(EVEN16.0.as_ptr() as *const __m512i),
                    _mm512_load_si512(EVEN32.0.as_ptr() as *const __m512i),
                    _mm512_load_si512(EVEN64.0.as_ptr() as *const __m512i),
                )
            };
        }
        |size, a, b| match size {
            1 => _mm512_inserti64x4::<1>(
                _mm512_castsi256_si512(_mm512_cvtepi16_epi8(a)),
                _mm512_cvtepi16_epi8(b),
            ),
            2 => _mm512_permutex2var_epi16(a, idx16, b),
            4 => _mm512_permutex2var_epi32(a, idx32, b),
            _ => _mm512_permutex2var_epi64(a, idx64, b),
        }
    );
    every_second!(
        /// The low part of each pair of elements kept by a mask and packed (1 and 2 bytes) or
        /// the even elements shuffled out (4 and 8 bytes), then the 64-bit quarters put back
        /// in order.
        every_second_avx2,
        "avx2",
        __m256i,
        _mm256_loadu_si256,
        _mm256_storeu_si256,
        _mm256_stream_si256,
        {
            let (lo8, lo16) = (_mm256_set1_epi16(0xff), _mm256_set1_epi32(0xffff));
        }
        |size, a, b| {
            // Per 128-bit lane: [a's evens, b's evens]; the quarters then reordered
            // 0, 2, 1, 3.
            let x = match size {
                1 => _mm256_packus_epi16(_mm256_and_si256(a, lo8), _mm256_and_si256(b, lo8)),
                2 => _mm256_packus_epi32(_mm256_and_si256(a, lo16), _mm256_and_si256(b, lo16)),
                4 => _mm256_castps_si256(_mm256_shuffle_ps::<0x88>(
                    _mm256_castsi256_ps(a),
                    _mm256_castsi256_ps(b),
                )),
                _ => _mm256_unpacklo_epi64(a, b),
            };
            _mm256_permute4x64_epi64::<0xD8>(x)
        }
    );

    /// Lane `k` (0 only) of a 16-byte register.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn lane128(x: __m128i, _k: usize) -> __m128i {
        x
    }

    /// Lane `k` (0 or 1) of a 32-byte register.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lane256(x: __m256i, k: usize) -> __m128i {
        if k == 0 {
            _mm256_castsi256_si128(x)
        } else {
            _mm256_extracti128_si256::<1>(x)
        }
    }

    /// Lane `k` (0 to 3) of a 64-byte register.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn lane512(x: __m512i, k: usize) -> __m128i {
        match k {
            0 => _mm512_castsi512_si128(x),
            1 => _mm512_extracti32x4_epi32::<1>(x),
            2 => _mm512_extracti32x4_epi32::<2>(x),
            _ => _mm512_extracti32x4_epi32::<3>(x),
        }
    }

    /// The 4 x 4 transpose of the 128-bit lanes of four registers: lane `q` of result `k` is
    /// lane `k` of register `q`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn lanes4x4(x: [__m512i; 4]) -> [__m512i; 4] {
        let t0 = _mm512_shuffle_i32x4::<0x44>(x[0], x[1]);
        let t1 = _mm512_shuffle_i32x4::<0xEE>(x[0], x[1]);
        let t2 = _mm512_shuffle_i32x4::<0x44>(x[2], x[3]);
        let t3 = _mm512_shuffle_i32x4::<0xEE>(x[2], x[3]);
        [
            _mm512_shuffle_i32x4::<0x88>(t0, t2),
            _mm512_shuffle_i32x4::<0xDD>(t0, t2),
            _mm512_shuffle_i32x4::<0x88>(t1, t3),
            _mm512_shuffle_i32x4::<0xDD>(t1, t3),
        ]
    }

    /// The four quarters of a destination line, one per 16 bytes of it: for quarter `q`, the
    /// `16 / S` source rows `q * 16 / S..` of a tile loaded from element `$b` on (one register
    /// each) and put through the unpack network, so that register `j` of quarter `q` holds,
    /// in lane `k`, that quarter of destination row `$b + j + k * 16 / S`. An expression, so
    /// that the registers stay in the kernel that uses them.
    ///
    /// Safety: for `k < 64 / S`, the register's bytes from `$sp + k * $sa + $b * S` are
    /// readable; the CPU has the features of `$load` and `$ladder`.
    macro_rules! quarters {
        ($zero:ident, $load:ident, $ladder:ident, $reg:ty, $sp:ident, $sa:ident, $b:ident) => {{
            let r = 16 / S;
            let mut v = [[$zero(); 16]; 4];
            each4!(q => {
                each16!(i => {
                    if i < r {
                        // SAFETY: source row `q * r + i`, the caller's bytes.
                        v[q][i] = unsafe {
                            $load($sp.offset((q * r + i) as isize * $sa + ($b * S) as isize)
                                as *const $reg)
                        };
                    }
                });
                v[q] = $ladder::<S>(v[q]);
            });
            v
        }};
    }

    /// Whole destination lines of `S`-byte elements (`S` is 2, 4 or 8): `groups` groups of
    /// `64 / S` destination rows by the tile's `64 / S` source rows. The four 16-byte quarters
    /// of the line go through the per-lane transposes of [`tile_avx512`], then a transpose of
    /// their lanes puts each destination line in one register, written with one 64-byte store
    /// (a non-temporal one when `STREAM`).
    ///
    /// # Safety
    /// As [`super::tile`], for `64 / S * groups` rows from `b0` and `64 / S` source rows; the
    /// CPU has AVX-512F and AVX-512BW; when `STREAM`, every destination row's first byte
    /// (`dp + row * db`) is 64-byte aligned.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn tile_lines_avx512<const S: usize, const STREAM: bool>(
        dp: *mut u8,
        sp: *const u8,
        sa: isize,
        db: isize,
        b0: usize,
        groups: usize,
    ) {
        let r = 16 / S;
        for g in 0..groups {
            let b = b0 + 4 * r * g;
            // The tile's source rows, bytes of elements `b..b + 4 r` (the caller).
            let v = quarters!(
                _mm512_setzero_si512,
                _mm512_loadu_si512,
                ladder512,
                __m512i,
                sp,
                sa,
                b
            );
            each16!(j => {
                if j < r {
                    let lines = lanes4x4([v[0][j], v[1][j], v[2][j], v[3][j]]);
                    each4!(k => {
                        let row = (b + j + k * r) as isize;
                        // SAFETY: destination row `b + j + k r`, the tile's 64 bytes of it
                        // (aligned when streaming: the caller).
                        unsafe {
                            let d = dp.offset(row * db) as *mut __m512i;
                            if STREAM {
                                _mm512_stream_si512(d, lines[k]);
                            } else {
                                _mm512_storeu_si512(d, lines[k]);
                            }
                        }
                    });
                }
            });
        }
    }

    /// Whole destination lines of `S`-byte elements (`S` is 4 or 8) at the AVX2 level:
    /// `groups` groups of `32 / S` destination rows by the tile's `64 / S` source rows. The
    /// four 16-byte quarters of the line go through the per-lane transposes of
    /// [`tile_avx2`], then a 2 x 2 transpose of lanes puts each half line in one register;
    /// each line is written with two back-to-back 32-byte non-temporal stores.
    ///
    /// # Safety
    /// As [`super::tile`], for `32 / S * groups` rows from `b0` and `64 / S` source rows; the
    /// CPU has AVX2; every destination row's first byte is 64-byte aligned.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn tile_lines_avx2<const S: usize>(
        dp: *mut u8,
        sp: *const u8,
        sa: isize,
        db: isize,
        b0: usize,
        groups: usize,
    ) {
        let r = 16 / S;
        for g in 0..groups {
            let b = b0 + 2 * r * g;
            // The tile's source rows, bytes of elements `b..b + 2 r` (the caller).
            let v = quarters!(
                _mm256_setzero_si256,
                _mm256_loadu_si256,
                ladder256,
                __m256i,
                sp,
                sa,
                b
            );
            each16!(j => {
                if j < r {
                    // Lane `k` of the quarters' registers, two quarters per half line.
                    let halves = [(v[0][j], v[1][j]), (v[2][j], v[3][j])].map(|(x, y)| {
                        [
                            _mm256_permute2x128_si256::<0x20>(x, y),
                            _mm256_permute2x128_si256::<0x31>(x, y),
                        ]
                    });
                    each4!(k => {
                        if k < 2 {
                            let row = (b + j + k * r) as isize;
                            // SAFETY: destination row `b + j + k r`, the tile's 64 bytes of
                            // it, aligned (the caller).
                            unsafe {
                                let d = dp.offset(row * db) as *mut __m256i;
                                _mm256_stream_si256(d, halves[0][k]);
                                _mm256_stream_si256(d.add(1), halves[1][k]);
                            }
                        }
                    });
                }
            });
        }
    }

    /// The tile kernels, one per register width of `LANES` 128-bit lanes: `groups` groups of
    /// `LANES * 16 / S` destination rows; per group, `quads` (at most four) blocks of `16 / S`
    /// source rows, each lane an `R x R` register transpose (`R = 16 / S`) of 16-byte rows,
    /// lane `k` giving destination rows `b + k R..b + (k + 1) R`.
    macro_rules! tile {
        ($(#[$doc:meta])* $name:ident, $feature:literal, $reg:ty, $lanes:literal,
         $zero:ident, $load:ident, $ladder:ident, $lane:ident) => {
            $(#[$doc])*
            ///
            /// # Safety
            /// As [`super::tile`], for `LANES * 16 / S * groups` rows from `b0` and
            /// `quads * 16 / S` source rows; the CPU has the target feature.
            #[inline]
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn $name<const S: usize>(
                dp: *mut u8,
                sp: *const u8,
                sa: isize,
                db: isize,
                b0: usize,
                groups: usize,
                quads: usize,
            ) {
                let r = 16 / S;
                for g in 0..groups {
                    let b = b0 + $lanes * r * g;
                    for q in 0..quads.min(4) {
                        let mut v = [$zero(); 16];
                        each16!(i => {
                            if i < r {
                                // SAFETY: source row `q * r + i` of the tile, columns
                                // `b..b + LANES r`.
                                v[i] = unsafe {
                                    $load(sp.offset((q * r + i) as isize * sa + (b * S) as isize)
                                        as *const $reg)
                                };
                            }
                        });
                        let v = $ladder::<S>(v);
                        each16!(j => {
                            if j < r {
                                each4!(k => {
                                    if k < $lanes {
                                        let row = (b + j + k * r) as isize;
                                        // SAFETY: destination row `b + j + k r`, bytes
                                        // `16 q..16 q + 16` of its line.
                                        unsafe {
                                            _mm_storeu_si128(
                                                dp.offset(row * db + 16 * q as isize)
                                                    as *mut __m128i,
                                                $lane(v[j], k),
                                            )
                                        };
                                    }
                                });
                            }
                        });
                    }
                }
            }
        };
    }
    /// Blocks staged together by [`tile_staged_u8_avx2`].
    const WIDE: usize = 4;

    /// How far ahead (source rows) [`tile_staged_u8_avx2`] prefetches when asked to.
    const PREFETCH_ROWS: isize = 32;

    /// 1-byte elements, whole tiles: `blocks` blocks of 64 destination rows by 64 source rows,
    /// each staged through 4 KiB of a buffer on the stack, [`WIDE`] blocks at a time. The 16
    /// source rows of a quarter are read whole across those blocks (256 bytes of each row,
    /// 32 at a time, back to back) and transposed into the buffer; then each destination
    /// line is written whole, once. At power-of-two strides every source line of a tile (and
    /// every destination line) falls in one set of the L1 cache, so the groups of
    /// [`tile_avx2`] lose lines between the quarters that share them; the buffer's lines are
    /// distinct sets. Staging was 15-20% faster single-threaded on a Zen 3 than the groups,
    /// and four blocks at a time 15-25% faster than one for source rows 64 KiB apart (the
    /// `210` and `120` permutes of 256^3; docs/performance.md). With `PREFETCH`, each quarter
    /// first prefetches the source lines [`PREFETCH_ROWS`] rows further on.
    ///
    /// # Safety
    /// As [`super::tile`], for `blocks * 64` rows from `b0` and 64 source rows; the CPU has
    /// AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn tile_staged_u8_avx2<const PREFETCH: bool>(
        dp: *mut u8,
        sp: *const u8,
        sa: isize,
        db: isize,
        b0: usize,
        blocks: usize,
    ) {
        #[repr(align(64))]
        struct Staging(#[allow(dead_code)] [u8; WIDE * 4096]); // used through raw pointers
                                                               // Never read before written: every byte of a block's 4 KiB is staged before its
                                                               // lines are written out.
        let mut buf = std::mem::MaybeUninit::<Staging>::uninit();
        let base = buf.as_mut_ptr() as *mut u8;
        let mut g0 = 0;
        while g0 < blocks {
            let m = (blocks - g0).min(WIDE);
            for q in 0..4usize {
                for g in 0..m {
                    let b = b0 + 64 * (g0 + g);
                    // SAFETY: block `g < WIDE` of the buffer.
                    let bp = unsafe { base.add(4096 * g) };
                    if PREFETCH {
                        // The rows two quarters ahead (the next tile's for the last two):
                        // a hint, never dereferenced, so it may point past the source.
                        for i in 0..16isize {
                            let row = 16 * q as isize + i + PREFETCH_ROWS;
                            let p = sp.wrapping_offset(row * sa + b as isize);
                            _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
                        }
                    }
                    for h in 0..2usize {
                        let mut v = [_mm256_setzero_si256(); 16];
                        for (i, x) in v.iter_mut().enumerate() {
                            // SAFETY: source row `16 q + i` of the tile, bytes `b + 32 h..+ 32`.
                            *x = unsafe {
                                _mm256_loadu_si256(
                                    sp.offset((16 * q + i) as isize * sa + (b + 32 * h) as isize)
                                        as *const __m256i,
                                )
                            };
                        }
                        let v = ladder256::<1>(v);
                        macro_rules! stage {
                            ($($j:literal)*) => {$(
                                let x = v[$j];
                                // SAFETY: inside block `g` of the buffer, 16-byte aligned.
                                unsafe {
                                    _mm_store_si128(
                                        bp.add((32 * h + $j) * 64 + 16 * q) as *mut __m128i,
                                        _mm256_castsi256_si128(x),
                                    );
                                    _mm_store_si128(
                                        bp.add((32 * h + 16 + $j) * 64 + 16 * q) as *mut __m128i,
                                        _mm256_extracti128_si256::<1>(x),
                                    );
                                }
                            )*};
                        }
                        stage!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
                    }
                }
            }
            for g in 0..m {
                let b = b0 + 64 * (g0 + g);
                // SAFETY: block `g < WIDE` of the buffer, staged above.
                let bp = unsafe { base.add(4096 * g) };
                for r in 0..64usize {
                    // SAFETY: destination row `b + r`, its line of the tile; buffer row `r`.
                    unsafe {
                        let d = dp.offset((b + r) as isize * db) as *mut __m256i;
                        let s = bp.add(64 * r) as *const __m256i;
                        _mm256_storeu_si256(d, _mm256_load_si256(s));
                        _mm256_storeu_si256(d.add(1), _mm256_load_si256(s.add(1)));
                    }
                }
            }
            g0 += m;
        }
    }

    tile!(
        /// 16-byte source loads (SSE2 is in the x86_64 baseline).
        tile_sse2, "sse2", __m128i, 1, _mm_setzero_si128, _mm_loadu_si128, ladder128, lane128
    );
    tile!(
        /// 32-byte source loads, each 128-bit lane transposed as with SSE2.
        tile_avx2, "avx2", __m256i, 2, _mm256_setzero_si256, _mm256_loadu_si256, ladder256,
        lane256
    );
    tile!(
        /// 64-byte source loads, each 128-bit lane transposed as with SSE2.
        tile_avx512, "avx512f,avx512bw", __m512i, 4, _mm512_setzero_si512, _mm512_loadu_si512,
        ladder512, lane512
    );
}

#[cfg(test)]
mod tests {
    use super::{supported, Level, FORCED};
    use crate::{copy, materialize, Element, Input, Output};
    use std::sync::atomic::Ordering;
    use symshape_view::ConcreteView;

    /// Serialises the tests that force a level (the level is process-wide).
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Materializes the permutation `perm` of a row-major block of `shape` and compares it
    /// with an element-by-element gather.
    fn check_permute<T: Element>(shape: &[usize], perm: &[usize], value: impl Fn(usize) -> T) {
        check_permute_at(shape, perm, value, None);
    }

    /// `check_permute`, with the source and destination placed `shift` bytes past a cache
    /// line (a multiple of the element size), or where the allocator puts them.
    fn check_permute_at<T: Element>(
        shape: &[usize],
        perm: &[usize],
        value: impl Fn(usize) -> T,
        shift: Option<[usize; 2]>,
    ) {
        let n: usize = shape.iter().product();
        let size = std::mem::size_of::<T>();
        let pad = 128 / size;
        let mut store: Vec<T> = (0..n + pad).map(|i| value(i % n.max(1))).collect();
        let mut out_store = vec![T::ZERO; n + pad];
        let [s0, d0] = match shift {
            Some([s, d]) => [
                store.as_ptr().align_offset(64) + s / size,
                out_store.as_ptr().align_offset(64) + d / size,
            ],
            None => [0, 0],
        };
        for (i, x) in store[s0..s0 + n].iter_mut().enumerate() {
            *x = value(i);
        }
        let buf = &store[s0..s0 + n];
        let mut strides = vec![1usize; shape.len()];
        for i in (0..shape.len() - 1).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        let p_shape: Vec<i64> = perm.iter().map(|&a| shape[a] as i64).collect();
        let p_strides: Vec<i64> = perm.iter().map(|&a| strides[a] as i64).collect();
        let view = ConcreteView::create(&p_shape, Some(&p_strides), 0, None).expect("view");
        let dst = ConcreteView::contiguous(&p_shape).expect("view");
        let got = &mut out_store[d0..d0 + n];
        copy(Input::new(buf, &view), Output::new(got, &dst)).expect("copy");
        let mut want = Vec::with_capacity(n);
        let mut idx = vec![0usize; perm.len()];
        for _ in 0..n {
            let off: usize = idx
                .iter()
                .zip(&p_strides)
                .map(|(&i, &s)| i * s as usize)
                .sum();
            want.push(buf[off]);
            for k in (0..idx.len()).rev() {
                idx[k] += 1;
                if idx[k] < p_shape[k] as usize {
                    break;
                }
                idx[k] = 0;
            }
        }
        assert!(*got == want, "{} {shape:?} {perm:?} {shift:?}", T::NAME);
    }

    fn check_all_sizes(shape: &[usize], perm: &[usize]) {
        check_permute::<u8>(shape, perm, |i| (i * 7 % 251) as u8);
        check_permute::<u16>(shape, perm, |i| (i * 7 % 65521) as u16);
        check_permute::<u32>(shape, perm, |i| i as u32 ^ 0x8000_0001);
        check_permute::<f32>(shape, perm, |i| i as f32 - 0.5);
        check_permute::<u64>(shape, perm, |i| {
            (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        });
        check_permute::<f64>(shape, perm, |i| i as f64 * 0.25);
    }

    #[test]
    fn every_level_and_element_size_matches_the_reference() {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        for level in supported() {
            FORCED.store(level as u8, Ordering::Relaxed);
            assert_eq!(super::level(), level);
            // Partial tiles on both axes, serial; then sizes that reach the parallel path.
            check_all_sizes(&[67, 131], &[1, 0]);
            check_all_sizes(&[5, 70, 129], &[0, 2, 1]);
            check_all_sizes(&[1029, 1100], &[1, 0]);
            check_all_sizes(&[33, 64, 96], &[2, 1, 0]);
            // 1-byte units staged whole: destination rows 16 KiB or more apart, whole and
            // partial tiles; then rows closer, units of whole slabs and of blocks of a long
            // row.
            check_all_sizes(&[64, 256, 64], &[2, 1, 0]);
            check_all_sizes(&[66, 250, 70], &[2, 0, 1]);
            check_all_sizes(&[64, 64, 64], &[2, 1, 0]);
            check_all_sizes(&[96, 70, 64], &[2, 1, 0]);
            check_all_sizes(&[64, 80, 64], &[2, 0, 1]);
            check_all_sizes(&[48, 100, 300], &[2, 0, 1]);
            check_all_sizes(&[64, 33, 96], &[1, 2, 0]);
            // Slabs narrower than a destination line: whole 16-byte quarters of it go
            // through the register transposes (a quarter, a half, three quarters, and
            // widths that are not a whole number of quarters), through the small gather
            // (at most 1024 elements) and through a plan.
            check_all_sizes(&[8, 8], &[1, 0]);
            check_all_sizes(&[2, 4, 40], &[0, 2, 1]);
            check_all_sizes(&[24, 40], &[1, 0]);
            check_all_sizes(&[3, 48, 7], &[0, 2, 1]);
            check_all_sizes(&[24, 20_000], &[1, 0]);
            check_all_sizes(&[14, 30_000], &[1, 0]);
            check_all_sizes(&[48, 9_000], &[1, 0]);
            check_all_sizes(&[6, 10, 4_000], &[0, 2, 1]);
        }
        FORCED.store(0, Ordering::Relaxed);
    }

    /// Copies `[2, 3, na]` (or `shape`) rows of `na` elements between two gapped layouts (so
    /// no axis merges with the rows and no run of rows lies end to end in the destination:
    /// the rows go through [`super::copy_rows`]), the buffers `shift` elements past a cache
    /// line, and compares the whole destination buffer (gaps included) with an
    /// element-by-element copy.
    fn check_rows<T: Element>(shape: [usize; 3], shift: [usize; 2], value: impl Fn(usize) -> T) {
        let [n0, n1, na] = shape;
        let size = std::mem::size_of::<T>();
        let (ss, ds) = ([na + 2, n0 * (na + 2) + 1], [n1 * (na + 3) + 1, na + 3]);
        let (src_len, dst_len) = (ss[0] * (n0 - 1) + ss[1] * (n1 - 1) + na, ds[0] * n0);
        let room = 64 / size + 8;
        let store: Vec<T> = (0..src_len + room).map(&value).collect();
        let mut out_store = vec![T::ZERO; dst_len + room];
        let s0 = store.as_ptr().align_offset(64) + shift[0];
        let d0 = out_store.as_ptr().align_offset(64) + shift[1];
        let buf = &store[s0..s0 + src_len];
        let view = |st: [usize; 2]| {
            let shape = [n0 as i64, n1 as i64, na as i64];
            let strides = [st[0] as i64, st[1] as i64, 1];
            ConcreteView::create(&shape, Some(&strides), 0, None).expect("view")
        };
        let (src, dst) = (view(ss), view(ds));
        let got = &mut out_store[d0..d0 + dst_len];
        copy(Input::new(buf, &src), Output::new(got, &dst)).expect("copy");
        let mut want = vec![T::ZERO; dst_len];
        for i0 in 0..n0 {
            for i1 in 0..n1 {
                for k in 0..na {
                    want[i0 * ds[0] + i1 * ds[1] + k] = buf[i0 * ss[0] + i1 * ss[1] + k];
                }
            }
        }
        assert!(
            *got == want,
            "{} rows {shape:?} at {:?}",
            T::NAME,
            [s0 * size % 64, d0 * size % 64]
        );
    }

    /// [`check_rows`] for every element size.
    fn check_rows_all_sizes(shape: [usize; 3], shift: [usize; 2]) {
        check_rows::<u8>(shape, shift, |i| (i * 7 % 251 + 1) as u8);
        check_rows::<u16>(shape, shift, |i| (i * 7 % 65521 + 1) as u16);
        check_rows::<f32>(shape, shift, |i| i as f32 + 0.5);
        check_rows::<u64>(shape, shift, |i| {
            (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        });
    }

    #[test]
    fn rows_of_every_short_length_at_odd_alignments_match_the_reference() {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        for level in supported() {
            FORCED.store(level as u8, Ordering::Relaxed);
            for na in 1..=80 {
                for shift in [[0, 0], [1, 3], [5, 0], [0, 7], [3, 1]] {
                    // At least 1025 elements, past the small gather.
                    let n1 = 1025usize.div_ceil(2 * na).max(3);
                    check_rows_all_sizes([2, n1, na], shift);
                }
            }
        }
        FORCED.store(0, Ordering::Relaxed);
    }

    #[test]
    fn streamed_and_parallel_rows_match_the_reference() {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        super::FORCE_STREAM.store(true, Ordering::Relaxed);
        for level in supported() {
            FORCED.store(level as u8, Ordering::Relaxed);
            // Rows of 1 KiB or more stream (whole lines after a head, then a tail).
            for na in [1024, 1031, 1100, 1500] {
                check_rows_all_sizes([2, 3, na], [1, 3]);
            }
        }
        super::FORCE_STREAM.store(false, Ordering::Relaxed);
        // Over the parallel threshold, runs of rows on several tasks.
        for level in supported() {
            FORCED.store(level as u8, Ordering::Relaxed);
            check_rows::<u64>([40, 101, 67], [1, 3], |i| i as u64 * 3 + 1);
            check_rows::<u8>([1, 9000, 120], [5, 0], |i| (i % 253) as u8);
        }
        FORCED.store(0, Ordering::Relaxed);
    }

    #[test]
    fn tiles_at_every_alignment_of_both_buffers_match_the_reference() {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        for level in supported() {
            FORCED.store(level as u8, Ordering::Relaxed);
            for shift in [[0, 0], [16, 16], [48, 0], [0, 32], [8, 56], [40, 24]] {
                // Destination rows of whole lines: the wider elements' tiles start 16 bytes
                // past a line; serial and in blocks along the destination rows.
                for (shape, perm) in [
                    (&[96, 64][..], &[1, 0][..]),
                    (&[3, 40, 128], &[0, 2, 1]),
                    (&[4160, 64], &[1, 0]),
                ] {
                    check_permute_at::<u16>(shape, perm, |i| i as u16, Some(shift));
                    check_permute_at::<f32>(shape, perm, |i| i as f32, Some(shift));
                    check_permute_at::<u64>(shape, perm, |i| i as u64, Some(shift));
                }
                // 1-byte rows of at least 4 KiB: destination rows (in blocks) and source
                // rows cut at the buffers' lines, with odd placements too.
                let odd = [shift[0] + 5, shift[1] + 3];
                for (shape, perm) in [
                    (&[4160, 64][..], &[1, 0][..]),
                    (&[64, 4160], &[1, 0]),
                    (&[2, 4160, 64], &[0, 2, 1]),
                    (&[70, 4160], &[1, 0]),
                ] {
                    for at in [shift, odd] {
                        check_permute_at::<u8>(shape, perm, |i| (i % 251) as u8, Some(at));
                    }
                }
            }
        }
        FORCED.store(0, Ordering::Relaxed);
    }

    /// `copy(level, dp, sp, len)` at every supported level writes exactly `len` bytes of the
    /// source to the destination and nothing around them, for every length of `lens` and
    /// every pair of `offsets(len)`: the destination's offset within a 64-byte line and the
    /// source's from the start of its buffer.
    fn copies_exactly(
        copy: impl Fn(Level, *mut u8, *const u8, usize),
        lens: impl Iterator<Item = usize> + Clone,
        offsets: impl Fn(usize) -> Vec<(usize, usize)>,
    ) {
        let longest = lens.clone().max().unwrap_or(0);
        let src: Vec<u8> = (0..longest + 64).map(|i| (i * 7 % 251) as u8).collect();
        for level in supported() {
            for len in lens.clone() {
                for (off_d, off_s) in offsets(len) {
                    let mut dst = vec![0u8; longest + 128];
                    let d0 = (off_d + 64 - dst.as_ptr() as usize % 64) % 64;
                    // SAFETY: `len` bytes readable from `off_s < 64` in `longest + 64` and
                    // writable from `d0 < 64` in `longest + 128`; two vectors; `level`
                    // supported.
                    copy(
                        level,
                        unsafe { dst.as_mut_ptr().add(d0) },
                        unsafe { src.as_ptr().add(off_s) },
                        len,
                    );
                    assert_eq!(
                        dst[d0..d0 + len],
                        src[off_s..off_s + len],
                        "{level:?}, {len} bytes, line offsets {off_d} and {off_s}"
                    );
                    assert!(dst[..d0].iter().all(|&x| x == 0));
                    assert!(dst[d0 + len..].iter().all(|&x| x == 0));
                }
            }
        }
    }

    #[test]
    fn stream_copy_at_every_alignment() {
        let lens = [0, 1, 15, 63, 64, 65, 127, 200, 4099, 9000, 19_000];
        copies_exactly(
            // SAFETY: the pointers, length and supported level `copies_exactly` gives.
            |level, dp, sp, len| unsafe { super::stream_copy(level, dp, sp, len) },
            lens.into_iter(),
            |_| vec![(0, 0), (1, 0), (0, 3), (17, 5), (63, 62), (32, 1)],
        );
    }

    /// `copy_run` at every level copies exactly its bytes: every length up to 600 (the
    /// unaligned head and tail, zero to several whole lines between, the four-line loop)
    /// and longer ones, from every source and destination offset within a line.
    #[test]
    fn copy_run_at_every_length_and_alignment() {
        copies_exactly(
            // SAFETY: as above.
            |level, dp, sp, len| unsafe { super::copy_run(level, dp, sp, len) },
            (0..=600).chain([1000, 1024, 2047, 2048, 2049, 2560, 2880]),
            |len| (0..64).map(|k| (k, (k * 5 + len) % 64)).collect(),
        );
    }

    #[test]
    fn every_second_element_at_every_length_and_alignment() {
        let src: Vec<u8> = (0..5000u32).map(|i| (i * 29 % 256) as u8).collect();
        for level in supported() {
            for size in [1usize, 2, 4, 8] {
                for stream in [false, true] {
                    for (off_d, off_s) in [(0, 0), (8, 0), (0, 8), (24, 40), (56, 16)] {
                        for len in (0usize..140).chain([255, 256, 257, 300]) {
                            let mut dst = vec![0u8; 2600];
                            let (d, s) = (&mut dst[off_d..], &src[off_s..]);
                            let readable = (2 * len).saturating_sub(1) * size;
                            // SAFETY: `len * size <= 2400` bytes writable from `off_d`,
                            // `readable <= 4792` from `off_s`; two vectors; `level`
                            // supported.
                            let done = unsafe {
                                super::every_second(
                                    level,
                                    size,
                                    d.as_mut_ptr(),
                                    s[..readable].as_ptr(),
                                    len,
                                    stream,
                                )
                            };
                            assert!(done <= len);
                            for i in 0..done {
                                assert_eq!(
                                    d[i * size..(i + 1) * size],
                                    s[2 * i * size..(2 * i + 1) * size],
                                    "{level:?} size {size} len {len} element {i}"
                                );
                            }
                            assert!(d[done * size..].iter().all(|&x| x == 0));
                            // The wide levels leave less than two registers' worth.
                            if level >= Level::Avx2 {
                                assert!((len - done) * size < 128, "{level:?} {len} {done}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn streamed_row_copies_match_the_reference() {
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        super::FORCE_STREAM.store(true, Ordering::Relaxed);
        // Every row streamed, then the rows of the last 40,000 bytes of each destination
        // written with ordinary stores (a row that starts before them streams whole).
        for (level, tail) in supported().into_iter().flat_map(|l| [(l, 0), (l, 40_000)]) {
            super::FORCE_CACHED_TAIL.store(tail, Ordering::Relaxed);
            FORCED.store(level as u8, Ordering::Relaxed);
            // Rows of at least 8 KiB (the streaming bound) in every element size, whole rows
            // reordered, and a block read through a pad.
            check_all_sizes(&[3, 9001], &[0, 1]);
            check_all_sizes(&[3, 5, 9001], &[1, 0, 2]);
            check_padded(level);
            // Tiles written as whole lines with non-temporal stores (AVX-512), with both
            // buffers on lines and elsewhere, whole and partial tiles.
            check_all_sizes(&[67, 131], &[1, 0]);
            check_all_sizes(&[1029, 1100], &[1, 0]);
            check_all_sizes(&[33, 64, 96], &[2, 1, 0]);
            for shift in [[0, 0], [16, 0], [0, 16], [8, 48]] {
                for (shape, perm) in [
                    (&[96, 64][..], &[1, 0][..]),
                    (&[3, 40, 128], &[0, 2, 1]),
                    (&[4160, 64], &[1, 0]),
                    (&[64, 4160], &[1, 0]),
                ] {
                    check_permute_at::<u16>(shape, perm, |i| i as u16, Some(shift));
                    check_permute_at::<f32>(shape, perm, |i| i as f32, Some(shift));
                    check_permute_at::<u64>(shape, perm, |i| i as u64, Some(shift));
                }
            }
            // Every second element, a flip and a broadcast row, each of 8 KiB or more.
            check_strided(&[3, 9001], &[20_000, 2], 0, 60_000);
            check_strided(&[3, 9001], &[-9001, -1], 27_002, 27_003);
            check_strided(&[3, 9001], &[1, 0], 0, 3);
        }
        FORCED.store(0, Ordering::Relaxed);
        super::FORCE_CACHED_TAIL.store(0, Ordering::Relaxed);
        super::FORCE_STREAM.store(false, Ordering::Relaxed);
    }

    #[test]
    fn streamed_fill_map_zip_and_tables_match_the_reference() {
        use crate::{fill, map_into, zip_into};
        use symshape_view::ConcreteStack;
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        super::FORCE_STREAM.store(true, Ordering::Relaxed);
        let lay = |shape: &[i64], strides: &[i64], offset: i64| {
            ConcreteView::create(shape, Some(strides), offset, None).expect("view")
        };
        for level in supported() {
            FORCED.store(level as u8, Ordering::Relaxed);
            // fill: rows of 4990 u16 inside rows of 5000, from element 3.
            let mut buf = vec![1u16; 15_000];
            let v = lay(&[3, 4990], &[5000, 1], 3);
            fill(Output::new(&mut buf, &v), 7).expect("fill");
            for (i, &x) in buf.iter().enumerate() {
                let inside = (3..4993).contains(&(i % 5000));
                assert_eq!(x, if inside { 7 } else { 1 }, "{level:?} fill {i}");
            }
            // map: a flipped [3, 5000] block of f32 into a row-major one.
            let src: Vec<f32> = (0..15_000).map(|i| i as f32).collect();
            let flipped = lay(&[3, 5000], &[-5000, -1], 14_999);
            let mut out = vec![0f32; 15_000];
            let rm = ConcreteView::contiguous(&[3, 5000]).expect("view");
            map_into(
                Input::new(&src, &flipped),
                Output::new(&mut out, &rm),
                |x| 2.0 * x + 1.0,
            )
            .expect("map");
            for (i, &x) in out.iter().enumerate() {
                assert_eq!(x, 2.0 * (14_999 - i) as f32 + 1.0, "{level:?} map {i}");
            }
            // zip: [3, 1] + [1, 5000] of f64.
            let (a, b): (Vec<f64>, Vec<f64>) = (
                (0..3).map(f64::from).collect(),
                (0..5000).map(f64::from).collect(),
            );
            let (la, lb) = (
                ConcreteView::contiguous(&[3, 1]).expect("view"),
                ConcreteView::contiguous(&[1, 5000]).expect("view"),
            );
            let mut out = vec![0f64; 15_000];
            zip_into(
                Input::new(&a, &la),
                Input::new(&b, &lb),
                Output::new(&mut out, &rm),
                |x, y| 10_000.0 * x + y,
            )
            .expect("zip");
            for (i, &x) in out.iter().enumerate() {
                assert_eq!(
                    x,
                    (10_000 * (i / 5000) + i % 5000) as f64,
                    "{level:?} zip {i}"
                );
            }
            // An offset table: every other element of a transpose, read flat.
            let buf: Vec<u32> = (0..24_000).collect();
            let stack = ConcreteStack::unmerged(vec![
                lay(&[6000, 4], &[1, 6000], 0),
                lay(&[12_000], &[2], 0),
            ])
            .expect("stack");
            let got = materialize(Input::new(&buf, &stack)).expect("materialize");
            for (i, &x) in got.values.iter().enumerate() {
                let p = 2 * i;
                assert_eq!(x as usize, p / 4 + 6000 * (p % 4), "{level:?} table {i}");
            }
            // A gather of every third element.
            check_strided(&[3, 9001], &[30_000, 3], 0, 90_000);
        }
        FORCED.store(0, Ordering::Relaxed);
        super::FORCE_STREAM.store(false, Ordering::Relaxed);
    }

    /// Materializes the view `(shape, strides, offset)` of a buffer of `len` elements, for
    /// every element size, and compares it with an element-by-element gather.
    fn check_strided(shape: &[i64], strides: &[i64], offset: i64, len: usize) {
        fn one<T: Element>(shape: &[i64], strides: &[i64], offset: i64, buf: Vec<T>) {
            let view = ConcreteView::create(shape, Some(strides), offset, None).expect("view");
            let got = materialize(Input::new(&buf, &view)).expect("materialize");
            let mut want = Vec::new();
            for i in 0..shape[0] {
                for j in 0..shape[1] {
                    want.push(buf[(offset + i * strides[0] + j * strides[1]) as usize]);
                }
            }
            assert!(got.values == want, "{} {shape:?} {strides:?}", T::NAME);
        }
        one::<u8>(
            shape,
            strides,
            offset,
            (0..len).map(|i| (i % 241) as u8).collect(),
        );
        one::<u16>(shape, strides, offset, (0..len).map(|i| i as u16).collect());
        one::<f32>(shape, strides, offset, (0..len).map(|i| i as f32).collect());
        one::<u64>(shape, strides, offset, (0..len).map(|i| i as u64).collect());
    }

    /// A 20 x 9000 block of `u8` padded by one on every side.
    fn check_padded(level: Level) {
        let (r, c) = (20i64, 9000i64);
        let buf: Vec<u8> = (0..r * c).map(|i| (i % 253) as u8).collect();
        let view = ConcreteView::create(
            &[r + 2, c + 2],
            Some(&[c, 1]),
            -c - 1,
            Some(&[(1, r + 1), (1, c + 1)]),
        )
        .expect("view");
        let got = materialize(Input::new(&buf, &view).pad(7)).expect("materialize");
        for i in 0..r + 2 {
            for j in 0..c + 2 {
                let inside = (1..=r).contains(&i) && (1..=c).contains(&j);
                let want = if inside {
                    buf[((i - 1) * c + j - 1) as usize]
                } else {
                    7
                };
                assert_eq!(got.values[(i * (c + 2) + j) as usize], want, "{level:?}");
            }
        }
    }

    #[test]
    fn the_environment_caps_the_level() {
        use super::capped;
        let all = Level::ALL;
        for cpu in all {
            assert_eq!(capped(cpu, None), cpu);
            assert_eq!(capped(cpu, Some("")), cpu);
            assert_eq!(capped(cpu, Some("avx1024")), cpu);
            for cap in all {
                let want = cap.min(cpu);
                assert_eq!(capped(cpu, Some(cap.name())), want);
                assert_eq!(
                    capped(cpu, Some(&format!(" {} ", cap.name().to_uppercase()))),
                    want
                );
            }
        }
    }

    #[test]
    fn detection_is_stable() {
        // Other tests force levels while they hold the lock.
        let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(super::level(), super::level());
        assert!(supported().contains(&Level::Portable));
    }
}

// `f16` and `bf16` widened to `f32` in whole registers (the reductions' inner loops).
pub(crate) mod widen;
