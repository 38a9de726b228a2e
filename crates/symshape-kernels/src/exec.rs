//! Running loop nests over raw buffers: the outer-loop driver (serial or rayon) and the inner
//! kernels. Most of the crate's `unsafe` code lives here; the rest is the inner rows of `fill`,
//! `map`, `zip` and the reductions, which rest on the same argument.
//!
//! The safety argument shared by every `unsafe` block:
//! 1. Before any loop runs, the extent (lowest and highest offset over the valid box) of every
//!    layout the loop addresses is checked against its buffer; for a stack merged to one
//!    layout, the merged layout's extent is checked as well as the bottom one's.
//! 2. Loops visit only indices inside the boxes those extents cover (plan boxes lie inside the
//!    destination's valid box, and a source is read only inside its valid box), so every
//!    pointer formed with `offset` points into its buffer. An offset-table box's source
//!    pointer is a table index and is formed with `wrapping_offset`, never dereferenced.
//! 3. An offset-table gather indexes the table only inside the top layout's extent, checked
//!    against the table's length when the plan is made; non-negative entries are offsets of
//!    valid bottom elements (point 1).
//! 4. Destinations are checked free of self-overlap and parallel units write disjoint index
//!    sets, so no element is written twice, nor concurrently; sources are shared borrows, or,
//!    in `copy_within`, disjoint from the destination.
//! 5. After the checks every offset lies in `0..len` with `len * size_of::<T>() <= isize::MAX`,
//!    so offset arithmetic in the loops cannot overflow; plan-time arithmetic, done before any
//!    buffer is known, wraps (the results are offsets of elements, which fit) or is checked.

use crate::element::Element;
use crate::plan::{
    innermost, tile_rows, BoxPartition, Dst, Kernel, Loop, LoopPlan, Partition, PARALLEL_BYTES,
    ROWS_RUN, TILE,
};
use crate::simd::{self, Level};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Inner-axis elements handled by one unit of work (rows longer than this are split).
const SEG: usize = 1 << 14;

/// Destination bytes from which whole-row copies use non-temporal stores (above the
/// last-level cache of the machines measured; see docs/performance.md).
const STREAM_BYTES: usize = 1 << 25;

fn stream_bytes() -> usize {
    #[cfg(test)]
    if simd::FORCE_STREAM.load(std::sync::atomic::Ordering::Relaxed) {
        return 0;
    }
    STREAM_BYTES
}

/// The last bytes of a streamed destination (by address) whose filled rows (broadcast and
/// pad rows, which read nothing) are written with ordinary stores even so, on any pool
/// ([`fill_tail`] grows it on large ones with a large cache): they stay in the
/// last-level cache for whatever reads the result next (and for the next write of the same
/// buffer), where the lines before them could not have stayed. Half the 32 MiB L3 of an AMD
/// EPYC family 26 model 2: a 64 MiB fill in C took 1.22 ms on two threads with its last 16
/// MiB so, against 1.57 all non-temporal and 1.54 all ordinary (one thread: 1.53, 1.59,
/// 1.93); the kernels' broadcast on two threads 0.97 → 0.79 of PyTorch. Copies keep
/// streaming whole: with the same tail the contiguous copy, the pad and the `102` permute
/// were 6-25% slower (docs/performance.md).
const CACHED_TAIL: usize = 1 << 24;

/// Rows shorter than this (bytes) are written with ordinary stores even when streaming. On a
/// Zen 4 (docs/performance.md) streaming the 1 KiB rows of the f32 `102` permute of 256^3
/// took it from 1.2-1.5 times a memcpy to 0.8-1.0, and the 2 KiB f64 rows from 1.3-1.6 to
/// 0.65-0.8; streaming the 512-byte u16 rows too made them slower (1.0-1.3 to 1.6-1.9).
const STREAM_ROW: usize = 1 << 10;

/// Rows shorter than this (bytes) are copied by [`short_rows`] when they lie end to end in
/// the destination.
const SHORT_ROW: usize = 64;

/// A cache line in bytes, for the stride tests of the short-row kernels and the line
/// boundaries of the tiled kernel.
const LINE: usize = 64;

/// Tiled rows of 1-byte elements at least this long (bytes) are cut at line boundaries of
/// the buffers ([`tile_leads`]).
const LONG_ROW: usize = 4096;

/// Tiles of wider elements start this many bytes past a destination line ([`tile_leads`]).
const TILE_SKEW: usize = 16;

/// Slabs per unit of [`short_rows`]: few enough that their destination rows (3 KiB
/// apart in an im2col, so in four cache sets) stay in the L1 cache while a unit fills them;
/// 8 was fastest of 4 to 128 on a Zen 3 (docs/performance.md).
const SHORT_SLABS: usize = 8;

/// Units of work per rayon task are chosen so that there are about this many tasks.
const TASKS: usize = 64;

/// A raw pointer that may cross threads.
///
/// Sound to share because the kernels only write through it at offsets of distinct
/// destination elements (destinations are checked free of self-overlap) and only read
/// through source pointers that nobody writes during the call.
#[derive(Clone, Copy)]
pub(crate) struct Ptr<T>(pub(crate) *mut T);

impl<T> Ptr<T> {
    /// The pointer (a method, so closures capture the whole `Ptr`, not its raw field).
    #[inline(always)]
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}
// SAFETY: see the type's documentation; the pointee is `Send + Sync` (`Element`).
unsafe impl<T: Send> Send for Ptr<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Ptr<T> {}

/// Walks the outer axes with an odometer (no division per step) and calls
/// `unit(offsets, start, len)` for each segment of the inner axis; with `joined`, the
/// consecutive segments of one outer index that a task runs go to `unit` as one call (for
/// units that take any `start..start + len` of the inner axis), so that the split into units
/// costs nothing on the thread that runs them.
///
/// Work is split into units (outer index x inner segment); on more than one of `threads`,
/// contiguous runs of units go to tasks ([`run_units`]). The split never changes what any
/// unit computes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn drive<const K: usize, F>(
    outer: &[Loop<K>],
    base: [isize; K],
    inner_len: usize,
    seg: usize,
    threads: usize,
    stream: bool,
    joined: bool,
    unit: &F,
) where
    F: Fn([isize; K], usize, usize) + Sync,
{
    if inner_len == 0 || seg == 0 {
        return;
    }
    let n_seg = inner_len.div_ceil(seg);
    let n_outer: usize = outer.iter().map(|a| a.extent).product();
    let units = n_outer.saturating_mul(n_seg);
    let run = |u0: usize, u1: usize| {
        let mut o = u0 / n_seg;
        let mut sg = u0 % n_seg;
        // Up to 8 outer axes without allocating.
        let mut idx_arr = [0usize; 8];
        let mut idx_vec = Vec::new();
        let idx: &mut [usize] = match idx_arr.get_mut(..outer.len()) {
            Some(a) => a,
            None => {
                idx_vec.resize(outer.len(), 0);
                &mut idx_vec
            }
        };
        let mut off = base;
        for (i, l) in idx.iter_mut().zip(outer).rev() {
            let (n, s) = (l.extent, l.steps);
            *i = o % n;
            o /= n;
            for (x, st) in off.iter_mut().zip(s) {
                *x = x.wrapping_add(st.wrapping_mul(*i as isize));
            }
        }
        let mut u = u0;
        while u < u1 {
            let k = if joined { (n_seg - sg).min(u1 - u) } else { 1 };
            let start = sg * seg;
            unit(off, start, (k * seg).min(inner_len - start));
            u += k;
            sg += k;
            if sg < n_seg {
                continue;
            }
            sg = 0;
            // Wrapping: the final step past the last index is never used.
            for (i, l) in idx.iter_mut().zip(outer).rev() {
                let (n, s) = (l.extent, l.steps);
                *i += 1;
                for (x, st) in off.iter_mut().zip(s) {
                    *x = x.wrapping_add(st);
                }
                if *i < n {
                    break;
                }
                *i = 0;
                for (x, st) in off.iter_mut().zip(s) {
                    *x = x.wrapping_sub(st.wrapping_mul(n as isize));
                }
            }
        }
    };
    run_units(threads, units, stream, run);
}

/// Filled bytes per thread of the pool that a streamed destination's cached tail grows to on
/// a pool of many threads, within half the last-level cache ([`fill_tail`]).
const TAIL_PER_THREAD: usize = 1 << 22;

/// The bytes at the end of a streamed destination whose filled rows are written with
/// ordinary stores, on a pool of `threads` (1 for a plan that runs on the caller alone) with
/// a last-level cache of `llc` bytes (0 when unknown): [`CACHED_TAIL`], or [`TAIL_PER_THREAD`]
/// per thread when that is more and fits in half the cache. Many threads fill a destination
/// that stays in a large cache faster with ordinary stores than they stream it out to memory:
/// on 16 threads of an Intel Xeon (family 6, model 207; 300 MiB L3) the 64 MiB broadcast,
/// all of it in the tail this way, took 319-324 µs against 417-420 with the 16 MiB tail
/// (two machines; PyTorch 398-402), where on 1 and 2 threads ordinary stores took 2-2.5 times
/// as long as streaming and on 4 and 8 the two were level (docs/performance.md). A cache of
/// 32 MiB keeps the 16 MiB tail on any pool.
fn fill_tail(threads: usize, llc: usize) -> usize {
    CACHED_TAIL.max(threads.saturating_mul(TAIL_PER_THREAD).min(llc / 2))
}

/// The size in bytes of the last-level cache of the first CPU (the highest cache level that
/// Linux's sysfs lists), read once; 0 where it is unknown.
fn llc_bytes() -> usize {
    static LLC: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LLC.get_or_init(|| {
        let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
        let read = |i: usize, what: &str| {
            std::fs::read_to_string(dir.join(format!("index{i}")).join(what)).ok()
        };
        (0..8)
            .filter_map(|i| {
                let level = read(i, "level")?.trim().parse::<u32>().ok()?;
                Some((level, cache_size(&read(i, "size")?)?))
            })
            .max()
            .map_or(0, |(_, size)| size)
    })
}

/// A cache size as sysfs writes it (`32768K`, `300M`, `512`), in bytes.
fn cache_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let scale: usize = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    digits.parse::<usize>().ok()?.checked_mul(scale)
}

/// The address from which a destination's rows are written with ordinary stores even when it
/// streams: its last [`fill_tail`] bytes (by address, whatever the order of the writes).
fn cached_tail<T>(plan: &LoopPlan, dst: *mut T) -> usize {
    let hi = match &plan.dst {
        Dst::View(v) => v.extent().map(|(_, hi)| hi),
        Dst::RowMajor(_) => i64::try_from(plan.dst_numel).ok().map(|n| n - 1),
    };
    let Some(end) = hi.and_then(|hi| usize::try_from(hi).ok()) else {
        return usize::MAX;
    };
    let threads = if plan.parallel {
        rayon::current_num_threads()
    } else {
        1
    };
    let tail = fill_tail(threads, llc_bytes());
    #[cfg(test)]
    let tail = if simd::FORCE_STREAM.load(std::sync::atomic::Ordering::Relaxed) {
        simd::FORCE_CACHED_TAIL.load(std::sync::atomic::Ordering::Relaxed)
    } else {
        tail
    };
    let end =
        (dst as usize).wrapping_add(end.wrapping_add(1).wrapping_mul(std::mem::size_of::<T>()));
    end.saturating_sub(tail)
}

/// Runs every box of a copy plan through its kernel: the unchecked core of
/// `LoopPlan::run_copy` and `LoopPlan::run_materialize`.
///
/// # Safety
/// `dst` and `src` (which may point into one buffer only if the plan's destination and source
/// reach disjoint offsets) must be valid for writes and reads at every offset the plan reaches:
/// the destination and source extents were checked against the buffer lengths, and for an
/// offset-table plan every non-negative table entry was checked against the source length.
pub(crate) unsafe fn run_boxes<T: Element>(plan: &LoopPlan, dst: *mut T, src: *const T, pad: T) {
    let (d, s) = (Ptr(dst), Ptr(src as *mut T));
    let table = Ptr(plan.stacked().table.as_ptr() as *mut isize);
    let level = simd::level();
    let size = std::mem::size_of::<T>();
    // The boxes write distinct destination elements: at most `dst_numel`, counted first.
    debug_assert!(plan.n_written() <= plan.dst_numel, "{plan}");
    let streams = |n: usize| n.saturating_mul(size) >= stream_bytes();
    let stream = streams(plan.dst_numel) && streams(plan.n_written());
    // Filled rows starting at or past this address are written with ordinary stores
    // (`fill_tail`).
    let cached_from = if stream {
        cached_tail(plan, dst)
    } else {
        usize::MAX
    };
    let streams_at = move |dp: *const T| stream && (dp as usize) < cached_from;
    for b in plan.boxes.iter() {
        let axes = &b.nest.loops;
        let kernel = b.nest.kernel;
        let base = b.nest.base;
        let Some((na, [da, sa], outer)) = innermost(axes) else {
            continue;
        };
        let threads = box_threads(plan, &b.region, rayon::current_num_threads);
        if kernel == Kernel::MaskedRows {
            if let Some(run) = &b.nest.run {
                // SAFETY: the caller's contract, for this box.
                unsafe { masked_rows_box(d, s, axes, base, run, pad, threads) };
            }
            continue;
        }
        if kernel == Kernel::Tiled {
            // SAFETY: the caller's contract, for this box; `level` is the detected one.
            unsafe { tiled_box(level, d, s, outer, base, (na, sa), threads, stream) };
            continue;
        }
        if kernel == Kernel::TiledRows {
            // SAFETY: the caller's contract, for this box.
            unsafe { tiled_rows_box(level, d, s, outer, base, (na, sa), threads) };
            continue;
        }
        if kernel == Kernel::CopyFromSlice && na * size < SHORT_ROW {
            // Rows shorter than a cache line (the windows of an im2col): when an outer axis
            // lays them end to end in the destination, copy runs of them with plain loops
            // rather than a call per row.
            if let Some(k) = outer.iter().position(|a| a.steps[0] == na as isize) {
                // SAFETY: the caller's contract, for this box.
                unsafe { short_row_runs(d, s, outer, k, base, na, threads) };
                continue;
            }
        }
        if kernel == Kernel::CopyFromSlice && na <= SEG {
            if let Some((&run_axis, rest)) = outer.split_last() {
                // SAFETY: the caller's contract, for this box; `level` is the detected one.
                unsafe { row_runs(level, d, s, rest, run_axis, base, na, threads, stream) };
                continue;
            }
        }
        let row = move |off: [isize; 2], start: usize, len: usize| {
            let (di, si) = (off[0] + start as isize * da, off[1] + start as isize * sa);
            // For an offset-table box `si` indexes the table, not the source, and may lie past
            // the end of a shorter source buffer: `wrapping_offset` forms that pointer without
            // the in-bounds requirement of `offset`; only the other kernels dereference it.
            let sp = s.get().wrapping_offset(si) as *const T;
            // SAFETY: elements start..start+len of one row of a box: inside the checked
            // extents; distinct units write distinct destination elements.
            unsafe {
                let dp = d.get().offset(di);
                match kernel {
                    Kernel::CopyFromSlice if stream && len * size >= STREAM_ROW => {
                        // `level` is the detected one.
                        simd::stream_copy(level, dp as *mut u8, sp as *const u8, len * size)
                    }
                    Kernel::CopyFromSlice => std::ptr::copy_nonoverlapping(sp, dp, len),
                    Kernel::StridedGather if da == 1 && sa == 2 => {
                        // Every second element (`a[:, ::2]`) in whole registers; `level`
                        // is the detected one.
                        let done = simd::every_second(
                            level,
                            size,
                            dp as *mut u8,
                            sp as *const u8,
                            len,
                            stream,
                        );
                        strided_row(dp.add(done), 1, sp.add(2 * done), 2, len - done)
                    }
                    // The other kernels' rows of a destination larger than the last-level
                    // cache go through an L1 buffer and out with non-temporal stores
                    // (`write_row`).
                    Kernel::Pad => fill_row_of(level, streams_at(dp), dp, da, len, pad),
                    Kernel::BroadcastFill => fill_row_of(level, streams_at(dp), dp, 1, len, *sp),
                    Kernel::ReversedCopy => write_row(level, stream, dp, 1, len, |o, _, at, n| {
                        reversed_row(o, sp.sub(at), n)
                    }),
                    Kernel::OffsetTable => write_row(level, stream, dp, da, len, |o, os, at, n| {
                        let ti = si + at as isize * sa;
                        table_row(o, os, s.get(), table.get(), ti, sa, n, pad)
                    }),
                    _ => write_row(level, stream, dp, da, len, |o, os, at, n| {
                        strided_row(o, os, sp.offset(at as isize * sa), sa, n)
                    }),
                }
            }
        };
        drive(outer, base, na, SEG, threads, stream, false, &row);
    }
}

/// Destination bytes of the rows of one unit of work of [`row_runs`] (fewer rows for a
/// run that has fewer).
const RUN_BYTES: usize = 1 << 14;

/// The rows of [`row_runs`] a unit copies: [`RUN_BYTES`] of them, at least one row, at most
/// the run.
fn run_rows(na: usize, nb: usize, size: usize) -> usize {
    (RUN_BYTES / na.saturating_mul(size).max(1)).clamp(1, nb.max(1))
}

/// A [`Kernel::CopyFromSlice`] box of rows of at most [`SEG`] elements: `run` (its last
/// outer axis) cut into units of [`run_rows`] rows, a task's consecutive units of one run
/// copied by one call of [`simd::copy_rows`] (or, into a destination that streams, rows of
/// at least [`STREAM_ROW`] bytes with non-temporal stores, fenced once per thread by
/// [`run_units`]), so that neither a call nor the outer odometer is paid per row. Kept out
/// of [`run_boxes`], whose small plans it would slow down.
///
/// # Safety
/// As [`run_boxes`], for the box; `level` is supported by the CPU.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn row_runs<T: Element>(
    level: Level,
    d: Ptr<T>,
    s: Ptr<T>,
    outer: &[Loop<2>],
    Loop {
        extent: nb,
        steps: [db, sb],
    }: Loop<2>,
    base: [isize; 2],
    na: usize,
    threads: usize,
    stream: bool,
) {
    let size = std::mem::size_of::<T>();
    let bytes = na * size;
    let stream = stream && bytes >= STREAM_ROW;
    let (db_b, sb_b) = (
        db.wrapping_mul(size as isize),
        sb.wrapping_mul(size as isize),
    );
    let rows = move |off: [isize; 2], start: usize, len: usize| {
        // SAFETY: rows start..start+len of the run, each `na` unit-stride elements: inside
        // the checked extents; distinct units write distinct destination elements; `level`
        // is the detected one.
        unsafe {
            let dp = d.get().offset(off[0] + start as isize * db) as *mut u8;
            let sp = s.get().offset(off[1] + start as isize * sb) as *const u8;
            if stream {
                for i in 0..len as isize {
                    simd::stream_copy(level, dp.offset(i * db_b), sp.offset(i * sb_b), bytes);
                }
            } else {
                simd::copy_rows(level, dp, db_b, sp, sb_b, len, bytes);
            }
        }
    };
    // Joined: a task's consecutive units of one run are one call, one register loop.
    drive(
        outer,
        base,
        nb,
        run_rows(na, nb, size),
        threads,
        stream,
        true,
        &rows,
    );
}

/// The rows of a [`Kernel::MaskedRows`] box: `axes` the outer loops and the row, each row
/// copying its run (`run`, affine in the outer indices, clamped to the row) and writing `pad`
/// to the rest. Kept out of [`run_boxes`], whose small plans it would slow down.
///
/// # Safety
/// As [`run_boxes`], for the box: the plan checked that every run reads valid source
/// elements inside the source's extent.
#[inline(never)]
unsafe fn masked_rows_box<T: Element>(
    d: Ptr<T>,
    s: Ptr<T>,
    axes: &[Loop<2>],
    base: [isize; 2],
    run: &crate::plan::RowRun,
    pad: T,
    threads: usize,
) {
    let Some((n, [dn, sn], outer)) = innermost(axes) else {
        return;
    };
    // The outer loops step the run's ends along with the offsets.
    let outer4: Vec<Loop<4>> = outer
        .iter()
        .zip(&run.steps)
        .map(
            |(
                &Loop {
                    extent,
                    steps: [da, sa],
                },
                st,
            )| Loop {
                extent,
                steps: [da, sa, st[0], st[1]],
            },
        )
        .collect();
    let base4 = [base[0], base[1], run.base[0], run.base[1]];
    let level = simd::level();
    let row = move |off: [isize; 4], _: usize, _: usize| {
        let n_i = n as isize;
        let lo = off[2].clamp(0, n_i);
        let hi = off[3].clamp(lo, n_i);
        // SAFETY: the destination row lies inside its checked extent; elements `lo..hi` of
        // the source row are the valid ones the plan verified (inside the source's extent);
        // distinct rows write distinct destination elements.
        unsafe {
            let dp = d.get().offset(off[0]);
            fill_wide(level, dp, dn, lo as usize, pad);
            if hi > lo {
                // The offset of element 0 may lie outside the source when the run starts
                // later: only the run's first offset is formed into a pointer.
                let first = off[1].wrapping_add(lo.wrapping_mul(sn));
                let (dr, sr) = (dp.offset(lo * dn), (s.get() as *const T).offset(first));
                let len = (hi - lo) as usize;
                if dn == 1 && sn == 1 {
                    let bytes = len * std::mem::size_of::<T>();
                    simd::copy_run(level, dr.cast(), sr.cast(), bytes);
                } else {
                    strided_row(dr, dn, sr, sn, len);
                }
            }
            if hi < n_i {
                fill_wide(level, dp.offset(hi * dn), dn, (n_i - hi) as usize, pad);
            }
        }
    };
    drive(&outer4, base4, 1, 1, threads, false, false, &row);
}

/// The tiled kernel over one box: `(na, sa)` its last axis (unit stride in the destination),
/// `outer` the others, the last of them the source's unit-stride axis. Kept out of
/// [`run_boxes`], whose small plans it would slow down.
///
/// # Safety
/// As [`run_boxes`], for the box; `level` is supported by the CPU.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn tiled_box<T: Element>(
    level: Level,
    d: Ptr<T>,
    s: Ptr<T>,
    outer: &[Loop<2>],
    base: [isize; 2],
    (na, sa): (usize, isize),
    threads: usize,
    stream: bool,
) {
    let size = std::mem::size_of::<T>();
    let Some((nb, [db, sb], outer)) = innermost(outer) else {
        return;
    };
    // A box of at most a line by a line (an 8 x 8 transpose), not staged (1-byte rows of a
    // whole line may be): straight to the kernel. Where its tiles break is moot, and the
    // leads, blocks and units below cost more than the copy.
    let k = tile_rows(size);
    if outer.is_empty() && !stream && na <= k && nb <= k && (size > 1 || na < LINE) {
        // SAFETY: the box is the one unit, inside the checked extents (caller); `level` is
        // supported (caller).
        unsafe {
            tiled(
                level,
                d.get(),
                s.get(),
                base,
                (0, na),
                (0, nb),
                sa,
                db,
                sb,
                [0; 2],
                false,
            )
        };
        return;
    }
    // Whole destination lines stream at the AVX-512 level (2-, 4- and 8-byte elements) and
    // at AVX2 (4- and 8-byte ones): tiles then start on lines. (Streaming the staged 1-byte
    // lines did not help on a Zen 4.)
    let stream = stream
        && match level {
            Level::Avx512 => size >= 2,
            Level::Avx2 => size >= 4,
            _ => false,
        };
    let lead = tile_leads::<T>(
        d.get(),
        s.get(),
        base,
        outer,
        (na, sa),
        (nb, db, sb),
        stream,
    );
    // 1-byte tiles into destination rows several pages apart go through a staging buffer
    // a unit at a time ([`tile_unit_staged`]), units sized to fill it.
    let staged = size == 1
        && na >= LINE
        && nb.min(TILE).saturating_mul(LINE) <= STAGE_BYTES
        && db.unsigned_abs() >= STAGE_APART;
    let tile = move |off: [isize; 2], a: (usize, usize), b: (usize, usize)| {
        if staged && a.1.saturating_mul(b.1) <= STAGE_BYTES {
            // SAFETY: as below, for the same unit (`T` is 1 byte).
            let done = unsafe { tile_unit_staged(level, d, s, off, a, b, (sa, db, sb)) };
            if done {
                return;
            }
        }
        // SAFETY: the unit covers a sub-rectangle of one slab of the box; all its offsets
        // are inside the checked extents, and units write disjoint elements. `level` is
        // supported (caller).
        unsafe { tiled(level, d.get(), s.get(), off, a, b, sa, db, sb, lead, stream) }
    };
    let a_block = tile_a_block(outer, (na, nb), size, staged, threads);
    let (a, b) = (
        Blocks::new(na, a_block, lead[0]),
        Blocks::new(nb, TILE, lead[1]),
    );
    drive_tiles(outer, base, a, b, threads, stream, &tile);
}

/// A [`Kernel::TiledRows`] box: `outer` ends with the source's unit axis `b` and the tiled
/// axis `a`; each unit copies [`ROWS_RUN`] of `a` by `tile_rows` of `b` (one source cache
/// line), every row of `na` elements (destination unit-stride, source stride `sa`) whole,
/// `a` innermost: each `b` index writes its rows of the unit as one contiguous run of the
/// destination, and the unit's source lines (one per `a` index) stay in the L1 cache while
/// the line's `b` indices read them in turn.
///
/// # Safety
/// As [`run_boxes`], for the box.
#[inline(never)]
unsafe fn tiled_rows_box<T: Element>(
    level: Level,
    d: Ptr<T>,
    s: Ptr<T>,
    outer: &[Loop<2>],
    base: [isize; 2],
    (nr, sr): (usize, isize),
    threads: usize,
) {
    let Some((na, [da, sa], outer)) = innermost(outer) else {
        return;
    };
    let Some((nb, [db, sb], outer)) = innermost(outer) else {
        return;
    };
    let size = std::mem::size_of::<T>();
    // Windows laid end to end in the destination over a unit-stride source axis `b` (an
    // im2col): each chunk of a unit's source block goes through register transposes into a
    // staging buffer, one row of it per `b` index, and every window is then one short copy
    // out of that row.
    let staged = sr == sa && (2..=7).contains(&nr) && da == nr as isize && sb == 1 && {
        let rows = STAGE_ELEMS_BYTES / (STAGE_W * size.max(1));
        tile_rows(size) <= rows && size <= 8
    };
    let tile = move |off: [isize; 2], a: (usize, usize), b: (usize, usize)| {
        if staged {
            // SAFETY: the unit's rows, inside the checked extents (caller).
            unsafe { staged_windows(level, d, s, off, a, b, (nr, sa, db)) };
            return;
        }
        // Rows that step through the source as `a` does (overlapping windows): the
        // `len + nr - 1` elements a chunk of `len` rows reads at one `b` are loaded once.
        let shifted = sr == sa && (2..=7).contains(&nr);
        for ib in b.0..b.0 + b.1 {
            let ib = ib as isize;
            let (d0, s0) = (off[0] + ib * db, off[1] + ib * sb);
            if shifted {
                let mut a0 = a.0;
                while a0 < a.0 + a.1 {
                    let len = (a.0 + a.1 - a0).min(WINDOW_BUF + 1 - nr);
                    let first = s0 + a0 as isize * sa;
                    // SAFETY: elements `a0..a0 + len` of `a` and `0..nr` of the row, at
                    // this `b`: inside the checked extents (the row's `k` reads the element
                    // of `a` index `ia + k`'s offset, the same address).
                    unsafe {
                        let sp = s.get().offset(first) as *const T;
                        let mut v = [*sp; WINDOW_BUF];
                        for (k, x) in v.iter_mut().enumerate().take(len + nr - 1) {
                            *x = *sp.offset(k as isize * sa);
                        }
                        let dp = d.get().offset(d0 + a0 as isize * da);
                        match nr {
                            2 => shifted_rows::<T, 2>(dp, da, &v, len),
                            3 => shifted_rows::<T, 3>(dp, da, &v, len),
                            4 => shifted_rows::<T, 4>(dp, da, &v, len),
                            5 => shifted_rows::<T, 5>(dp, da, &v, len),
                            6 => shifted_rows::<T, 6>(dp, da, &v, len),
                            _ => shifted_rows::<T, 7>(dp, da, &v, len),
                        }
                    }
                    a0 += len;
                }
                continue;
            }
            for ia in a.0..a.0 + a.1 {
                let ia = ia as isize;
                let (di, si) = (d0 + ia * da, s0 + ia * sa);
                // SAFETY: one row of the box: inside the checked extents; units write
                // disjoint elements.
                unsafe {
                    let (dp, sp) = (d.get().offset(di), s.get().offset(si) as *const T);
                    for k in 0..nr as isize {
                        *dp.offset(k) = *sp.offset(k * sr);
                    }
                }
            }
        }
    };
    let (a, b) = (
        Blocks::new(na, ROWS_RUN, 0),
        Blocks::new(nb, tile_rows(size), 0),
    );
    drive_tiles(outer, base, a, b, threads, false, &tile);
}

/// Elements of `a` a [`Kernel::TiledRows`] chunk of shifted rows loads at once: 64 rows and
/// the 7 more the last ones reach, at most.
const WINDOW_BUF: usize = 72;

/// Elements per row of the staging buffer of [`staged_windows`]: a chunk of 64 windows and
/// the 6 more elements its last windows reach, rounded up to whole 16-byte groups.
const STAGE_W: usize = 80;

/// Bytes of the staging buffer of [`staged_windows`]: one row of [`STAGE_W`] elements per
/// `b` index of a unit (`tile_rows` of them, one source line), 5 KiB.
const STAGE_ELEMS_BYTES: usize = 5120;

/// The windows of one [`Kernel::TiledRows`] unit whose rows of `nr` elements lie end to end
/// in the destination (`da == nr`), each window `k` reading the element of `a` index
/// `ia + k` (`sr == sa`), over a unit-stride source axis `b`: chunks of up to 64 windows,
/// their `len + nr - 1` source rows by the unit's `b` indices transposed through
/// [`tiled`] into a staging buffer, then each window copied out of its `b` row.
///
/// # Safety
/// As [`tiled_rows_box`], for the unit; `level` is supported by the CPU; `b.1` rows of
/// [`STAGE_W`] elements fit [`STAGE_ELEMS_BYTES`].
#[inline(never)]
unsafe fn staged_windows<T: Element>(
    level: Level,
    d: Ptr<T>,
    s: Ptr<T>,
    off: [isize; 2],
    a: (usize, usize),
    b: (usize, usize),
    (nr, sa, db): (usize, isize, isize),
) {
    // Only elements written by `tiled` are read back, so the buffer is left uninitialized
    // (a unit would otherwise clear 5 KiB for about 64 KiB it writes).
    let mut buf = std::mem::MaybeUninit::<[u64; STAGE_ELEMS_BYTES / 8]>::uninit();
    let stage = buf.as_mut_ptr() as *mut T;
    const CHUNK: usize = STAGE_W - 16;
    let mut a0 = a.0;
    while a0 < a.0 + a.1 {
        let len = (a.0 + a.1 - a0).min(CHUNK);
        let reach = len + nr - 1;
        // SAFETY: source elements of `a` indices `a0..a0 + reach` (the windows' elements)
        // at the unit's `b` indices, inside the checked extents (caller); staging rows
        // `0..b.1` of `STAGE_W >= reach` elements, inside the buffer (caller).
        unsafe {
            tiled(
                level,
                stage,
                s.get(),
                [0, off[1] + a0 as isize * sa + b.0 as isize],
                (0, reach),
                (0, b.1),
                sa,
                STAGE_W as isize,
                1,
                [0, 0],
                false,
            );
        }
        for (row, ib) in (b.0..b.0 + b.1).enumerate() {
            // SAFETY: staging row `row` holds the `reach` elements just written; the
            // destination's windows `a0..a0 + len` at `b` index `ib` lie inside the checked
            // extent and are this unit's.
            unsafe {
                let sp = stage.add(row * STAGE_W) as *const T;
                let dp = d
                    .get()
                    .offset(off[0] + ib as isize * db + (a0 * nr) as isize);
                match nr {
                    2 => windows::<T, 2>(dp, sp, len),
                    3 => windows::<T, 3>(dp, sp, len),
                    4 => windows::<T, 4>(dp, sp, len),
                    5 => windows::<T, 5>(dp, sp, len),
                    6 => windows::<T, 6>(dp, sp, len),
                    _ => windows::<T, 7>(dp, sp, len),
                }
            }
        }
        a0 += len;
    }
}

/// Writes `n` windows of `N` elements end to end from `dp`, window `i` being elements
/// `i..i + N` of `sp`.
///
/// # Safety
/// `dp..dp + n * N` writable, `sp..sp + n + N - 1` readable.
#[inline(always)]
unsafe fn windows<T: Element, const N: usize>(dp: *mut T, sp: *const T, n: usize) {
    for i in 0..n {
        // SAFETY: window `i` of the caller's windows.
        unsafe {
            let w = std::ptr::read_unaligned(sp.add(i) as *const [T; N]);
            std::ptr::write_unaligned(dp.add(i * N) as *mut [T; N], w);
        }
    }
}

/// Writes `n` rows of `N` elements (row `i` at `dp + i * da`), row `i` being elements
/// `i..i + N` of `v` (`n + N - 1 <= v.len()`).
///
/// # Safety
/// Every such destination element writable.
#[inline(always)]
unsafe fn shifted_rows<T: Element, const N: usize>(dp: *mut T, da: isize, v: &[T], n: usize) {
    for i in 0..n {
        let w = &v[i..i + N];
        // SAFETY: row `i` of the caller's rows.
        unsafe {
            let d = dp.offset(i as isize * da);
            for (k, &x) in w.iter().enumerate() {
                *d.add(k) = x;
            }
        }
    }
}

/// The length along `a` of the tiled kernel's units: whole source rows when the other axes
/// give enough units for the pool (eight, or four per thread on a pool of more than two), else
/// blocks of 16 tiles, so that a 4096 x 4096 transpose (eight slabs of tiles) is cut into 128
/// units on 16 threads rather than 8; staged units no wider than the buffer holds for `b` rows.
fn tile_a_block(
    outer: &[Loop<2>],
    (na, nb): (usize, usize),
    size: usize,
    staged: bool,
    threads: usize,
) -> usize {
    let n_units = outer
        .iter()
        .map(|x| x.extent)
        .product::<usize>()
        .saturating_mul(nb.div_ceil(TILE));
    let a_block = if n_units >= threads.saturating_mul(4).max(8) {
        na
    } else {
        16 * tile_rows(size)
    };
    match staged {
        true => a_block.min(STAGE_BYTES / nb.min(TILE) / LINE * LINE),
        false => a_block,
    }
}

/// The runs of short rows of a box (rows of `na < SHORT_ROW` bytes) that axis `k` of `outer`
/// lays end to end in the destination: copied with plain loops rather than a call per row, and
/// when the last other axis steps through the source by less than a line (the shifted windows
/// of an im2col), eight of its slabs per run ([`short_rows`]). Kept out of
/// [`run_boxes`], whose small plans it would slow down.
///
/// # Safety
/// As [`run_boxes`], for the box.
#[inline(never)]
unsafe fn short_row_runs<T: Element>(
    d: Ptr<T>,
    s: Ptr<T>,
    outer: &[Loop<2>],
    k: usize,
    base: [isize; 2],
    na: usize,
    threads: usize,
) {
    let size = std::mem::size_of::<T>();
    let mut rest: Vec<Loop<2>> = outer.to_vec();
    let Loop {
        extent: nb,
        steps: [db, sb],
    } = rest.remove(k);
    if let Some(&Loop {
        extent: nw,
        steps: [dw, sw],
    }) = rest.last()
    {
        let line = |t: isize| t.unsigned_abs().saturating_mul(size) >= LINE;
        if nw > 1 && !line(sw) && line(sb) {
            rest.pop();
            let block = move |off: [isize; 2], start: usize, len: usize| {
                // SAFETY: for slabs start..start+len of the last axis, the whole run of `nb`
                // rows of `na` elements: inside the checked extents; distinct units write
                // distinct destination elements.
                unsafe {
                    let dp = d.get().offset(off[0] + start as isize * dw);
                    let sp = s.get().offset(off[1] + start as isize * sw) as *const T;
                    short_rows(dp, [db, dw], sp, [sb, sw], (nb, len), na)
                }
            };
            drive(&rest, base, nw, SHORT_SLABS, threads, false, false, &block);
            return;
        }
    }
    let rows = move |off: [isize; 2], start: usize, len: usize| {
        // SAFETY: rows start..start+len of the run, each `na` elements: inside the checked
        // extents; distinct units write distinct destination elements.
        unsafe {
            let dp = d.get().offset(off[0] + start as isize * db);
            let sp = s.get().offset(off[1] + start as isize * sb) as *const T;
            short_rows(dp, [db, 0], sp, [sb, 0], (len, 1), na)
        }
    };
    drive(&rest, base, nb, SEG, threads, false, false, &rows);
}

/// Copies, for each of `rows` rows and each of `slabs` slabs, `na` contiguous elements:
/// row `i` of slab `w` from `sp + i * sb + w * sw` to `dp + i * db + w * dw` (with
/// `[db, dw]` and `[sb, sw]`), the slabs innermost: where consecutive slabs lie less than a
/// line apart in the source (the shifted windows of an im2col), each source line is read
/// for all the slabs that need it at once, instead of once per slab. One slab (the other
/// strides 0): plain rows, the slab loop gone once inlined.
///
/// # Safety
/// For `i < rows`, `w < slabs` and `k < na`: `dp + i * db + w * dw + k` writable,
/// `sp + i * sb + w * sw + k` readable.
#[inline]
unsafe fn short_rows<T: Element>(
    dp: *mut T,
    [db, dw]: [isize; 2],
    sp: *const T,
    [sb, sw]: [isize; 2],
    (rows, slabs): (usize, usize),
    na: usize,
) {
    macro_rules! fixed {
        ($n:expr) => {
            for i in 0..rows as isize {
                for w in 0..slabs as isize {
                    // SAFETY: row `i` of slab `w`, as the caller vouches.
                    unsafe {
                        let (d, s) = (dp.offset(i * db + w * dw), sp.offset(i * sb + w * sw));
                        for k in 0..$n {
                            *d.add(k) = *s.add(k);
                        }
                    }
                }
            }
        };
    }
    match na {
        1 => fixed!(1),
        2 => fixed!(2),
        3 => fixed!(3),
        4 => fixed!(4),
        _ => fixed!(na),
    }
}

/// Writes `v` to `len` elements at stride `ds`.
///
/// # Safety
/// `dp + i * ds` must be valid for writes for `i < len`.
#[inline]
unsafe fn fill_row<T: Element>(dp: *mut T, ds: isize, len: usize, v: T) {
    if ds == 1 {
        // SAFETY: the caller guarantees `len` writable elements from `dp`.
        unsafe { std::slice::from_raw_parts_mut(dp, len) }.fill(v);
        return;
    }
    for i in 0..len {
        // SAFETY: `i < len`, guaranteed writable by the caller.
        unsafe { *dp.offset(i as isize * ds) = v };
    }
}

/// [`fill_row`], unit-stride runs of at least 64 bytes of 1-, 2-, 4- or 8-byte elements
/// written 64 bytes at a time at the AVX2 and AVX-512 levels (the minus-infinity runs of a
/// causal mask; the plain loop of `fill` is compiled for the x86_64 baseline, 16 bytes a
/// store).
///
/// # Safety
/// As [`fill_row`]; `level` is supported by the CPU.
#[inline]
unsafe fn fill_wide<T: Element>(level: Level, dp: *mut T, ds: isize, len: usize, v: T) {
    // SAFETY: the caller's contract.
    if ds == 1 && unsafe { fill_pattern::<T, false>(level, dp, len, v) } {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { fill_row(dp, ds, len, v) }
}

/// Writes `v` to `len` unit-stride elements from `dp` in whole 64-byte patterns, the whole
/// destination lines inside the run with non-temporal stores when `STREAM` (the caller's
/// task fences them, [`run_units`]). Returns false, having written nothing, where there is
/// no such path: below the AVX2 level, for elements of other sizes than 1, 2, 4 or 8 bytes,
/// or for runs shorter than 64 bytes.
///
/// # Safety
/// `dp..dp + len` writable; `level` is supported by the CPU.
#[inline]
unsafe fn fill_pattern<T: Element, const STREAM: bool>(
    level: Level,
    dp: *mut T,
    len: usize,
    v: T,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = len * std::mem::size_of::<T>();
        if bytes >= 64 && level >= Level::Avx2 {
            if let Some(word) = splat(v) {
                // SAFETY: `bytes >= 64` writable bytes from `dp` (caller), which is aligned
                // for `T`, whose size is the period of `word`; the level is supported.
                unsafe {
                    if level >= Level::Avx512 {
                        fill_words_avx512::<STREAM>(dp.cast::<u8>(), bytes, word);
                    } else {
                        fill_words_avx2::<STREAM>(dp.cast::<u8>(), bytes, word);
                    }
                }
                return true;
            }
        }
    }
    let _ = (level, dp, len, v);
    false
}

/// The bytes of `v` repeated over 8 bytes, where its size (1, 2, 4 or 8) divides 8. Formed
/// in registers: a pattern stored element by element and loaded back as one vector stalled
/// the store-to-load forwarding of every call, half the time of a causal mask's fills
/// (docs/performance.md).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn splat<T: Element>(v: T) -> Option<u64> {
    // SAFETY: each arm reads exactly `size_of::<T>()` bytes of `v`, as an integer of that
    // size (every bit pattern of which is valid).
    unsafe {
        Some(match std::mem::size_of::<T>() {
            1 => u64::from(std::mem::transmute_copy::<T, u8>(&v)) * 0x0101_0101_0101_0101,
            2 => u64::from(std::mem::transmute_copy::<T, u16>(&v)) * 0x0001_0001_0001_0001,
            4 => u64::from(std::mem::transmute_copy::<T, u32>(&v)) * 0x0000_0001_0000_0001,
            8 => std::mem::transmute_copy::<T, u64>(&v),
            _ => return None,
        })
    }
}

/// Defines `$name::<STREAM>(dp, bytes, word)`: writes `bytes >= 64` bytes from `dp` with the
/// 8-byte `word` repeated (whose period, an element's size, divides the distance from `dp`
/// to any store, `dp` being aligned for the element, so the pattern is in phase wherever a
/// store starts), in `$vec` stores of `$width` bytes. Ordinary: the first 64 bytes, then
/// whole lines from the first line boundary after `dp`, then the last 64 bytes of the run,
/// overlapping the ones before (a store straddling two lines costs two, and the
/// minus-infinity tail of a causal mask's row starts anywhere in a line). `STREAM`: the
/// bytes before the first line boundary and after the last are copied from the pattern with
/// ordinary stores, every whole line between with non-temporal ones, so that no line gets
/// both kinds (a line written both ways made a streamed fill slower than staging it,
/// docs/performance.md).
macro_rules! fill_words {
    ($name:ident, $feature:literal, $vec:ident, $width:literal, $splat:ident, $store:ident, $stream:ident) => {
        /// See [`fill_words`].
        ///
        /// # Safety
        /// `dp..dp + bytes` writable, `bytes >= 64`, `dp` aligned for the period of `word`;
        /// the CPU supports the target feature.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        unsafe fn $name<const STREAM: bool>(dp: *mut u8, bytes: usize, word: u64) {
            use std::arch::x86_64::{$splat, $store, $stream, $vec};
            // SAFETY: every store lies inside `dp..dp + bytes` (`bytes >= 64`; the head and
            // tail copies are shorter than 64 bytes and inside the run) and starts a whole
            // number of elements after `dp`; the non-temporal stores start on line
            // boundaries, so they are aligned.
            unsafe {
                let x = $splat(word as i64);
                let line = |p: *mut u8| {
                    for k in (0..64).step_by($width) {
                        $store(p.add(k).cast::<$vec>(), x);
                    }
                };
                if STREAM {
                    let mut pattern = [0u8; 64];
                    line(pattern.as_mut_ptr());
                    let head = ((dp as usize).next_multiple_of(64) - dp as usize).min(bytes);
                    std::ptr::copy_nonoverlapping(pattern.as_ptr(), dp, head);
                    let mut o = head;
                    while o + 64 <= bytes {
                        for k in (0..64).step_by($width) {
                            $stream(dp.add(o + k).cast::<$vec>(), x);
                        }
                        o += 64;
                    }
                    std::ptr::copy_nonoverlapping(pattern.as_ptr(), dp.add(o), bytes - o);
                    return;
                }
                line(dp);
                let mut o = 64 - dp as usize % 64;
                while o + 64 <= bytes {
                    line(dp.add(o));
                    o += 64;
                }
                if o < bytes {
                    line(dp.add(bytes - 64));
                }
            }
        }
    };
}

fill_words!(
    fill_words_avx2,
    "avx2",
    __m256i,
    32,
    _mm256_set1_epi64x,
    _mm256_storeu_si256,
    _mm256_stream_si256
);
fill_words!(
    fill_words_avx512,
    "avx512f",
    __m512i,
    64,
    _mm512_set1_epi64,
    _mm512_storeu_si512,
    _mm512_stream_si512
);

/// Writes `v` to one row of `len` elements at stride `ds` (a broadcast row or a row of
/// padding): whole lines with non-temporal stores when `stream` and the row is unit-stride
/// and long ([`fill_pattern`], else staged by [`write_row`]), else ordinary stores
/// ([`fill_wide`]).
///
/// # Safety
/// As [`fill_row`]; `level` is supported by the CPU.
#[inline]
unsafe fn fill_row_of<T: Element>(
    level: Level,
    stream: bool,
    dp: *mut T,
    ds: isize,
    len: usize,
    v: T,
) {
    if stream && ds == 1 && len.saturating_mul(std::mem::size_of::<T>()) >= STREAM_ROW {
        // SAFETY: the caller's contract.
        if !unsafe { fill_pattern::<T, true>(level, dp, len, v) } {
            // SAFETY: the caller's contract.
            unsafe { write_row(level, true, dp, 1, len, |o, os, _, n| fill_row(o, os, n, v)) }
        }
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { fill_wide(level, dp, ds, len, v) }
}

/// Bytes of the stack buffer through which [`streamed_row`] stages a row: well inside the L1
/// cache.
const STREAM_CHUNK: usize = 4096;

/// Writes `len` unit-stride elements from `dp` with non-temporal stores, staged a chunk at a
/// time through a buffer on the stack: `produce(buf, at)` writes elements `at..at + buf.len()`
/// of the row into `buf`. Chunks after the first start on destination cache lines, so that
/// only the row's first and last lines are written with ordinary stores.
///
/// # Safety
/// `level` is supported by the CPU; `dp..dp + len` writable; `produce` reads only what the
/// caller vouches for, for every chunk of the row.
#[inline]
unsafe fn streamed_row<T: Element>(
    level: Level,
    dp: *mut T,
    len: usize,
    mut produce: impl FnMut(&mut [T], usize),
) {
    let mut chunk = [StageLine([0; LINE]); STREAM_CHUNK / LINE];
    let size = std::mem::size_of::<T>();
    let per = STREAM_CHUNK / size;
    // SAFETY: `STREAM_CHUNK` initialised bytes on a line (so aligned for any element, all of
    // at most 8 bytes), and zero bytes are a valid value of every element type.
    let buf = unsafe { std::slice::from_raw_parts_mut(chunk.as_mut_ptr() as *mut T, per) };
    // The first chunk ends at a destination line when the row starts inside one.
    let first = match (dp as usize) % LINE {
        0 => per,
        r if r % size == 0 => per - r / size,
        _ => per,
    };
    let mut at = 0;
    while at < len {
        let n = (if at == 0 { first } else { per }).min(len - at);
        produce(&mut buf[..n], at);
        // SAFETY: elements `at..at + n` of the row, from the buffer just written; the
        // caller's level.
        unsafe {
            simd::stream_copy(
                level,
                dp.add(at) as *mut u8,
                buf.as_ptr() as *const u8,
                n * size,
            )
        };
        at += n;
    }
}

/// Whether a destination of `bytes` bytes is written with non-temporal stores (larger than
/// the last-level caches of the machines measured).
pub(crate) fn streams(bytes: usize) -> bool {
    bytes >= stream_bytes()
}

/// Writes one row of `len` elements from `dp` at stride `ds`: `write(out, stride, at, n)`
/// writes elements `at..at + n` of the row to `out`, `stride` apart. When `stream` and the
/// row is unit-stride and long, through [`streamed_row`] (non-temporal stores), else
/// directly.
///
/// # Safety
/// `level` is supported by the CPU; `dp + k ds` writable for `k < len`; `write` writes only
/// the `n` elements it is given and reads only what the caller vouches for.
#[inline]
pub(crate) unsafe fn write_row<T: Element>(
    level: Level,
    stream: bool,
    dp: *mut T,
    ds: isize,
    len: usize,
    mut write: impl FnMut(*mut T, isize, usize, usize),
) {
    if stream && ds == 1 && len.saturating_mul(std::mem::size_of::<T>()) >= STREAM_ROW {
        // SAFETY: the caller's contract, `len` unit-stride elements from `dp`.
        unsafe {
            streamed_row(level, dp, len, |b, at| {
                write(b.as_mut_ptr(), 1, at, b.len())
            })
        }
    } else {
        write(dp, ds, 0, len);
    }
}

/// Copies `len` elements read backwards from `sp` to `dp` forwards.
///
/// # Safety
/// `dp..dp+len` writable, `sp-len+1..=sp` readable, not overlapping.
#[inline]
unsafe fn reversed_row<T: Element>(dp: *mut T, sp: *const T, len: usize) {
    if len == 0 {
        return;
    }
    // SAFETY: the ranges are the ones the caller guarantees; slices let the compiler vectorise.
    let (d, s) = unsafe {
        (
            std::slice::from_raw_parts_mut(dp, len),
            std::slice::from_raw_parts(sp.sub(len - 1), len),
        )
    };
    for (x, y) in d.iter_mut().zip(s.iter().rev()) {
        *x = *y;
    }
}

/// Copies `len` elements at strides `ds` and `ss`.
///
/// # Safety
/// `dp + i * ds` writable and `sp + i * ss` readable for `i < len`.
#[inline]
unsafe fn strided_row<T: Element>(dp: *mut T, ds: isize, sp: *const T, ss: isize, len: usize) {
    if ds == 1 && ss == 2 && len > 0 {
        // Every second element (`a[:, ::2]`): with the stride a constant, the compiler turns
        // the loop into wide loads and shuffles.
        // SAFETY: `len` writable elements from `dp`; `2 * len - 1` readable from `sp`.
        let (d, s) = unsafe {
            (
                std::slice::from_raw_parts_mut(dp, len),
                std::slice::from_raw_parts(sp, 2 * len - 1),
            )
        };
        for (x, y) in d.iter_mut().zip(s.iter().step_by(2)) {
            *x = *y;
        }
        return;
    }
    if ds == 1 {
        // SAFETY: `len` writable elements from `dp`.
        let d = unsafe { std::slice::from_raw_parts_mut(dp, len) };
        for (i, x) in d.iter_mut().enumerate() {
            // SAFETY: `i < len`.
            *x = unsafe { *sp.offset(i as isize * ss) };
        }
        return;
    }
    for i in 0..len {
        let i = i as isize;
        // SAFETY: `i < len`.
        unsafe { *dp.offset(i * ds) = *sp.offset(i * ss) };
    }
}

/// Gathers `len` elements through an offset table (negative entries are invalid: pad).
///
/// # Safety
/// `table + ti + i * ts` is inside the table for `i < len`; every non-negative entry is a
/// readable offset of `src`; `dp + i * ds` writable.
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn table_row<T: Element>(
    dp: *mut T,
    ds: isize,
    src: *const T,
    table: *const isize,
    ti: isize,
    ts: isize,
    len: usize,
    pad: T,
) {
    for i in 0..len {
        let i = i as isize;
        // SAFETY: as the function's contract states.
        unsafe {
            let o = *table.offset(ti + i * ts);
            *dp.offset(i * ds) = if o < 0 { pad } else { *src.offset(o) };
        }
    }
}

/// Bytes of the per-thread buffer through which [`tile_unit_staged`] stages a unit.
const STAGE_BYTES: usize = 1 << 16;

/// Destination rows at least this far apart (bytes) are tiled through [`tile_unit_staged`]:
/// the 256^3 permutes `201` and `210` (rows 64 KiB apart) gain from it on a Zen 3 and a Zen 4,
/// but the 4096^2 transpose (rows one 4 KiB page apart) was slower with it on a Zen 4: 4.2-4.5
/// ms single-threaded against 3.1-3.7 without, 2.1-2.3 against 1.7-2.0 on two threads
/// (docs/performance.md).
const STAGE_APART: usize = 1 << 14;

/// A cache line of the staging buffer (so that the buffer starts on a line).
#[derive(Clone, Copy)]
#[repr(align(64))]
struct StageLine(#[allow(dead_code)] [u8; LINE]); // read and written through raw pointers

thread_local! {
    /// The staging buffer of [`tile_unit_staged`], allocated on a thread's first use.
    static STAGE: std::cell::RefCell<Vec<StageLine>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A unit of a tiled box of 1-byte elements (source rows `a`, destination rows `b`, at most
/// [`STAGE_BYTES`] in all) tiled into a per-thread buffer laid out as its destination rows,
/// then copied out row by row. For destination rows far apart (the `210` and
/// `201` permutes of 256^3: rows 64 KiB apart) each row of the unit is then written in one
/// run rather than a line at a time by each of its tiles. On two threads of a Zen 3
/// (docs/performance.md) the u8 `201` went from 2.2-2.7 times a memcpy to 1.5-2.4 and
/// `210` from 2.0-3.1 to 1.2-1.6, and with both buffers on huge pages `210` from 1.5-1.9
/// to 1.2 (three runs each). Returns `false`, having done nothing, when the buffer cannot
/// be had (allocation refused, or in use further up this thread's stack).
///
/// # Safety
/// As [`tiled`] for the unit at `off`; `T` is 1 byte; `a.1 * b.1 <= STAGE_BYTES`.
unsafe fn tile_unit_staged<T: Element>(
    level: Level,
    d: Ptr<T>,
    s: Ptr<T>,
    off: [isize; 2],
    a: (usize, usize),
    b: (usize, usize),
    (sa, db, sb): (isize, isize, isize),
) -> bool {
    STAGE.with(|stage| {
        let Ok(mut stage) = stage.try_borrow_mut() else {
            return false;
        };
        let lines = STAGE_BYTES / LINE;
        if stage.len() < lines {
            if stage.try_reserve_exact(lines).is_err() {
                return false;
            }
            stage.resize(lines, StageLine([0; LINE]));
        }
        let sp = stage.as_mut_ptr() as *mut T;
        let (na, nb) = (a.1, b.1);
        let from = off[1] + a.0 as isize * sa + b.0 as isize * sb;
        // SAFETY: the buffer holds `STAGE_BYTES >= na * nb` elements of 1 byte, rows `na`
        // apart, starting on a line; the source side is the caller's unit; then each
        // destination row of the unit gets its `na` elements from its buffer row.
        unsafe {
            tiled(
                level,
                sp,
                s.get(),
                [0, from],
                (0, na),
                (0, nb),
                sa,
                na as isize,
                sb,
                [0, 0],
                false,
            );
            for ib in 0..nb {
                let row = d
                    .get()
                    .offset(off[0] + (b.0 + ib) as isize * db + a.0 as isize);
                std::ptr::copy_nonoverlapping(sp.add(ib * na) as *const T, row, na);
            }
        }
        true
    })
}

/// Where the tiles of a tiled box break its rows (the `lead` of [`tiled`]): at `a` indices
/// `lead[0] + k * tile_rows` in the destination rows, at `b` indices `lead[1] + k * tile_rows`
/// in the source rows. Each is placed against the buffer's cache lines when every row of the
/// box starts at the same place in a line (the other axes step by whole lines), else 0.
///
/// On a Zen 3 (docs/performance.md), measured over every alignment of both buffers:
/// - 1-byte tiles, written whole through a staging buffer, are fastest on line boundaries of
///   both buffers: the u8 transpose of two `malloc` buffers, 16 bytes past a line, took
///   2.5 ms single-threaded against 3.8 cut from their starts. Only along rows of at least
///   [`LONG_ROW`] bytes: shorter rows (256 bytes in a 256^3 permute) were faster without
///   the extra part tile; and for the source, only when its rows are at most that far
///   apart (rows 64 KiB apart, as in the `120` permute, were 10% slower cut at lines).
/// - Wider elements, stored 16 or 32 bytes at a time, are fastest with tiles that start 16
///   bytes past a line (as in a `malloc` buffer): on line boundaries the u16 `201` permute
///   took 14.2 ms against 7.8, the f64 transpose 21.8 against 18.9.
fn tile_leads<T>(
    dst: *const T,
    src: *const T,
    base: [isize; 2],
    outer: &[Loop<2>],
    (na, sa): (usize, isize),
    (nb, db, sb): (usize, isize, isize),
    stream: bool,
) -> [usize; 2] {
    let size = std::mem::size_of::<T>();
    let k = tile_rows(size);
    let whole = |t: isize| {
        t.unsigned_abs()
            .checked_mul(size)
            .is_some_and(|x| x % LINE == 0)
    };
    let long = |n: usize| n.saturating_mul(size) >= LONG_ROW;
    // Elements from the first row's start to the next line boundary, when every row has it.
    let phase =
        |p: *const T, off: isize, rows: bool| match p.wrapping_offset(off).align_offset(LINE) {
            x if rows && x < k => Some(x),
            _ => None,
        };
    let dst_rows = whole(db) && outer.iter().all(|x| whole(x.steps[0]));
    let src_rows = sb == 1 && whole(sa) && outer.iter().all(|x| whole(x.steps[1]));
    let lead_a = match phase(dst, base[0], dst_rows) {
        Some(x) if size >= 2 && stream => x,
        Some(x) if size >= 2 => (x + TILE_SKEW / size) % k,
        Some(x) if long(na) => x,
        _ => 0,
    };
    let lead_b = match phase(src, base[1], src_rows) {
        Some(x) if size == 1 && long(nb) && sa.unsigned_abs() <= LONG_ROW => x,
        _ => 0,
    };
    let inside = |l: usize, n: usize| if l < n { l } else { 0 };
    [inside(lead_a, na), inside(lead_b, nb)]
}

/// An axis of `n` elements cut into blocks of `size`, the first of them `lead` long (so that
/// the others start at a cache-line boundary). A lead of 0, or an axis that is one block, is
/// cut from its start.
#[derive(Debug, Clone, Copy)]
struct Blocks {
    n: usize,
    size: usize,
    lead: usize,
}

impl Blocks {
    fn new(n: usize, size: usize, lead: usize) -> Blocks {
        let lead = if size < n && lead < size { lead } else { 0 };
        Blocks { n, size, lead }
    }

    fn count(&self) -> usize {
        match self.lead {
            0 => self.n.div_ceil(self.size),
            lead => 1 + (self.n - lead).div_ceil(self.size),
        }
    }

    /// Block `i < count()`: (start, length).
    fn get(&self, i: usize) -> (usize, usize) {
        let (start, len) = match (self.lead, i) {
            (0, _) => (i * self.size, self.size),
            (lead, 0) => (0, lead),
            (lead, _) => (lead + (i - 1) * self.size, self.size),
        };
        (start, len.min(self.n - start))
    }
}

/// Runs `unit(offsets, (a_start, a_len), (b_start, b_len))` over every outer index and every
/// block of the two tiled axes (`a` fastest). Each unit is big (a whole block), so it is
/// located by division once; on more than one of `threads`, contiguous runs of units go to
/// tasks ([`run_units`]).
fn drive_tiles<F>(
    outer: &[Loop<2>],
    base: [isize; 2],
    a: Blocks,
    b: Blocks,
    threads: usize,
    stream: bool,
    unit: &F,
) where
    F: Fn([isize; 2], (usize, usize), (usize, usize)) + Sync,
{
    if a.n == 0 || b.n == 0 || a.size == 0 || b.size == 0 {
        return;
    }
    let (n_ab, n_bb) = (a.count(), b.count());
    let n_outer: usize = outer.iter().map(|x| x.extent).product();
    let units = n_outer.saturating_mul(n_ab).saturating_mul(n_bb);
    let run = |u0: usize, u1: usize| {
        for u in u0..u1 {
            let (ai, rest) = (u % n_ab, u / n_ab);
            let (bi, mut o) = (rest % n_bb, rest / n_bb);
            let mut off = base;
            for l in outer.iter().rev() {
                let (n, st) = (l.extent, l.steps);
                let i = (o % n) as isize;
                o /= n;
                off[0] += st[0] * i;
                off[1] += st[1] * i;
            }
            unit(off, a.get(ai), b.get(bi));
        }
    };
    run_units(threads, units, stream, run);
}

/// A cache-blocked copy of a rectangle of a 2-D slab: `dst[ib * db + ia] = src[ia * sa + ib * sb]`
/// for `ia` in the `a` range and `ib` in the `b` range (source rows become destination columns).
///
/// Tiles are one destination cache line wide (`tile_rows` source rows) and the `b` range tall:
/// the source rows are read as that many sequential streams, and every destination line is
/// written whole at once, so neither side depends on the prefetcher guessing a stride or on
/// cache associativity (power-of-two strides make square tiles thrash). `lead` places the
/// line boundaries: the destination's at `a` indices `lead[0] + k * tile_rows`, the source's
/// at `b` indices `lead[1] + k * tile_rows` (0 where they are not known); tiles end at the
/// former, and the register transposes start at the latter.
///
/// # Safety
/// `level` is supported by the CPU; every such destination offset (from `off[0]`) writable and
/// source offset (from `off[1]`) readable.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn tiled<T: Element>(
    level: Level,
    dst: *mut T,
    src: *mut T,
    off: [isize; 2],
    a: (usize, usize),
    b: (usize, usize),
    sa: isize,
    db: isize,
    sb: isize,
    lead: [usize; 2],
    stream: bool,
) {
    let size = std::mem::size_of::<T>();
    let k_full = tile_rows(size);
    if a.1 <= k_full && a.0.is_multiple_of(k_full) && lead == [0; 2] {
        // One tile wide, cut from its start: its one part, without the set-up below (about
        // 150 instructions of the 500 an 8 x 8 `f32` transpose took on an AMD EPYC family 25).
        let bs = (b.0, b.0 + b.1);
        // SAFETY: the rectangle the caller vouches for.
        unsafe { tile_part(level, dst, src, off, a, bs, (sa, db, sb), stream) };
        return;
    }
    let (a_end, b_end) = (a.0 + a.1, b.0 + b.1);
    // The `b` range in two parts: before the source's first line boundary, and from it.
    let b_mid = if b.0 < lead[1] {
        lead[1].min(b_end)
    } else {
        b.0
    };
    let mut a0 = a.0;
    while a0 < a_end {
        let line_end = match lead[0] {
            l if a0 < l => l,
            l => l + ((a0 - l) / k_full + 1) * k_full,
        };
        let kk = line_end.min(a_end) - a0;
        for (b0, b1) in [(b.0, b_mid), (b_mid, b_end)] {
            // SAFETY: rows `a0..a0+kk` of the source and columns `a0..a0+kk` of the
            // destination, for `ib` in `b0..b1`: inside the rectangle the caller vouches for.
            unsafe {
                tile_part(
                    level,
                    dst,
                    src,
                    off,
                    (a0, kk),
                    (b0, b1),
                    (sa, db, sb),
                    stream,
                )
            }
        }
        a0 += kk;
    }
}

/// The part of a tile of [`tiled`] at source rows `a0..a0 + kk` and destination rows `b0..b1`.
///
/// # Safety
/// As [`tiled`], for this part.
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn tile_part<T: Element>(
    level: Level,
    dst: *mut T,
    src: *mut T,
    off: [isize; 2],
    (a0, kk): (usize, usize),
    (b0, b1): (usize, usize),
    (sa, db, sb): (isize, isize, isize),
    stream: bool,
) {
    let size = std::mem::size_of::<T>();
    let k_full = tile_rows(size);
    // SAFETY: inside the part the caller vouches for.
    unsafe {
        let sp = src.offset(off[1] + a0 as isize * sa) as *const T;
        let dp = dst.offset(off[0] + a0 as isize);
        let mut b_start = b0;
        if sb == 1 && (1..=16).contains(&size) && kk % (16 / size) == 0 {
            // Whole groups of destination rows through register transposes (a full line,
            // or whole 16-byte quarters of it for a narrow slab); the remaining rows
            // below.
            let size = size as isize;
            b_start = b0
                + simd::tile(
                    level,
                    size as usize,
                    kk,
                    dp as *mut u8,
                    sp as *const u8,
                    sa * size,
                    db * size,
                    b0,
                    b1 - b0,
                    stream,
                );
        }
        if kk == k_full {
            for ib in b_start..b1 {
                let ib = ib as isize;
                let (d, s) = (dp.offset(ib * db), sp.offset(ib * sb));
                for k in 0..k_full as isize {
                    *d.offset(k) = *s.offset(k * sa);
                }
            }
        } else {
            for ib in b_start..b1 {
                let ib = ib as isize;
                let (d, s) = (dp.offset(ib * db), sp.offset(ib * sb));
                for k in 0..kk as isize {
                    *d.offset(k) = *s.offset(k * sa);
                }
            }
        }
    }
}

/// Runs `run` over `0..units`, split into contiguous ranges ([`split`]: the tasks) shared
/// out between the calling thread and `threads - 1` of the pool's ([`share_out`],
/// [`share_threads`]); the split depends only on `units` and `threads`. When `stream` (the
/// units may write with non-temporal stores, which no kernel fences itself), every thread
/// that ran a task ends with a store fence, before the join hands its elements over: one
/// fence per thread rather than per row or run of rows (a fence per 16 KiB row made a
/// streamed fill in C a quarter slower on an AMD EPYC family 26 model 2; the pad and `102`
/// rows of the comparison gained 4-9%, docs/performance.md).
fn run_units(threads: usize, units: usize, stream: bool, run: impl Fn(usize, usize) + Sync) {
    let (tasks, per) = split(units, threads);
    if tasks > 1 {
        share_out(threads.min(tasks), tasks, stream, |t| {
            run(t * per, ((t + 1) * per).min(units));
        });
    } else {
        run(0, units);
        if stream {
            simd::fence(simd::level());
        }
    }
}

/// A task counter alone on its cache lines, so that threads taking tasks from different
/// shares do not contend for one line.
#[repr(align(128))]
struct Share(AtomicUsize);

/// How long the caller, no task left to take, spins until the helpers' tasks in flight are
/// done before it parks (a thread woken from sleep takes microseconds to run again: a 1.3
/// MB causal mask on two threads of an AMD EPYC family 26 model 2 took 16-17 µs when the
/// caller slept in a pool's join, 10-11 spinning, docs/performance.md).
const SPIN_FOR_HELPERS: Duration = Duration::from_micros(50);

/// How long the caller parks at a time once it has spun for [`SPIN_FOR_HELPERS`] (the
/// helper that finishes the last task unparks it; the timeout only bounds a lost wake-up).
const PARK_FOR_HELPERS: Duration = Duration::from_micros(200);

/// What the caller of [`share_out`] and its helpers share: on the heap, held by each of
/// them, so that a helper that starts after the caller has returned finds it still there.
struct Shares {
    /// `next[j]`: the next task of share `j`, whose tasks are `bound(j)..bound(j + 1)`.
    next: Box<[Share]>,
    threads: usize,
    tasks: usize,
    /// Tasks run to their end (and fenced, when `stream`).
    finished: AtomicUsize,
    stream: bool,
    /// The calling thread, unparked by the helper that finishes the last task.
    caller: std::thread::Thread,
}

/// The tasks' closure, its lifetime erased, for helpers that may outlive the call
/// ([`share_out`] says when it may be called).
struct TaskPtr(*const (dyn Fn(usize) + Sync));

// SAFETY: the closure is `Sync`; the pointer crosses threads only under `share_out`'s
// protocol, which calls it only while the caller's frame that owns it is alive.
unsafe impl Send for TaskPtr {}

impl TaskPtr {
    /// The pointer (a method, so closures capture the whole `TaskPtr`, not its raw field).
    fn get(&self) -> *const (dyn Fn(usize) + Sync) {
        self.0
    }
}

impl Shares {
    /// Counters for `tasks` tasks cut into `threads` shares, each at its share's first task.
    fn new(threads: usize, tasks: usize, stream: bool) -> Self {
        let mut shares = Shares {
            next: Box::default(),
            threads,
            tasks,
            finished: AtomicUsize::new(0),
            stream,
            caller: std::thread::current(),
        };
        shares.next = (0..threads)
            .map(|j| Share(AtomicUsize::new(shares.bound(j))))
            .collect();
        shares
    }

    /// The first task of share `j` (`tasks` for `j == threads`).
    fn bound(&self, j: usize) -> usize {
        j * self.tasks / self.threads
    }

    /// Runs what is left of share `me`, then of the next shares in turn, each task claimed
    /// first; then fences (when `stream`). Returns the tasks it ran, for
    /// [`Shares::finish`]. A share is read before it is claimed from: a spent share costs
    /// the scan a shared read of its line, which many threads make at once, not a locked
    /// increment that takes the line from its owner and waits for it (16 threads scan 15
    /// shares each).
    ///
    /// # Safety
    /// `task` is valid whenever a claim succeeds: the caller of [`share_out`] returns only
    /// after every task has finished, after which no claim succeeds.
    unsafe fn work(&self, me: usize, task: *const (dyn Fn(usize) + Sync)) -> usize {
        let mut ran = 0;
        for j in (me..self.threads).chain(0..me) {
            let end = self.bound(j + 1);
            while self.next[j].0.load(Ordering::Relaxed) < end {
                let t = self.next[j].0.fetch_add(1, Ordering::Relaxed);
                if t >= end {
                    break;
                }
                // SAFETY: task `t` is claimed and not finished, so the caller has not
                // returned and the closure is alive (the function's contract).
                unsafe { (*task)(t) };
                ran += 1;
            }
        }
        if ran > 0 && self.stream {
            simd::fence(simd::level());
        }
        ran
    }

    /// Counts `ran` tasks that a thread ran ([`Shares::work`]) as finished; a helper
    /// (`helper`) that finishes the last one unparks the caller.
    fn finish(&self, ran: usize, helper: bool) {
        if ran > 0 {
            let done = self.finished.fetch_add(ran, Ordering::Release) + ran;
            if done == self.tasks && helper {
                self.caller.unpark();
            }
        }
    }

    /// Waits until every task has finished: spins for [`SPIN_FOR_HELPERS`], then parks.
    fn wait(&self) {
        let start = Instant::now();
        while self.finished.load(Ordering::Acquire) < self.tasks {
            if start.elapsed() < SPIN_FOR_HELPERS {
                std::hint::spin_loop();
            } else {
                std::thread::park_timeout(PARK_FOR_HELPERS);
            }
        }
    }
}

/// Aborts the process if dropped: armed while helpers may run tasks that borrow the
/// caller's frame, which an unwinding caller would free under them.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        std::process::abort();
    }
}

/// Runs tasks `0..tasks` on the calling thread and `threads - 1` helpers spawned on the pool
/// the caller is in (or rayon's global one), so that the caller works rather than waits for
/// a pool thread to wake. The tasks are cut into `threads` contiguous shares: the caller
/// runs share 0 and helper `k` share `k`, each from its front, so that a thread that copies
/// the same buffers again finds its share where it left it (in its own cache when the share
/// fits); a thread done with its share takes what is left of the next shares in turn, so the
/// tasks of a helper that starts late are run by the others. Each thread that ran a task
/// ends with a store fence when `stream`, before it counts its tasks as finished.
///
/// The caller returns as soon as every task has finished, not when every helper has
/// started: a helper woken late (a sleeping pool thread took 8-23 µs to start on an AMD EPYC
/// family 26 model 2, docs/performance.md) finds no task left and ends without touching the
/// call's data, which is why the helpers hold the shared counters (`Shares`) on the heap and
/// call `task` only for a task they claimed. A panic in a task aborts the process (a
/// helper's, as rayon does for a spawned job; the caller's, rather than free data that
/// helpers may still be using): the kernels' tasks do not panic.
///
/// A caller outside any pool (its helpers go to rayon's global pool) first hands shares to
/// the helpers that are lingering after an earlier call ([`help`], [`HELPERS`]), each the
/// share it ran last where it can ([`hand_out`]), and spawns helpers only for the shares
/// left: a lingering helper, spinning on its seat, starts as soon as its share is
/// posted, where waking a sleeping pool thread cost the caller 9 µs and the thread started
/// 28 µs later (the causal mask on two threads of an AMD EPYC family 26 with 100 µs
/// between copies: 19 µs with every helper spawned, 9 with lingering ones;
/// docs/performance.md). Callers inside a pool they installed spawn every helper: the
/// global pool's threads are not theirs. [`helper_counts`] counts what each call did.
fn share_out(threads: usize, tasks: usize, stream: bool, task: impl Fn(usize) + Sync) {
    let shares = std::sync::Arc::new(Shares::new(threads, tasks, stream));
    let task: &(dyn Fn(usize) + Sync) = &task;
    // SAFETY: only the lifetime changes; the pointer is dereferenced only for a claimed
    // task, and this function returns (or aborts) only once every task has finished.
    let task = TaskPtr(unsafe {
        std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync)>(
            task,
        )
    });
    let armed = AbortOnUnwind;
    // Outside any pool, the helpers go to rayon's global pool, whose lingering helpers are
    // handed their shares first.
    let global = rayon::current_thread_index().is_none();
    // Every helper's job is made before any is posted: a post is then plain stores, which
    // no locked increment of the shared count waits behind.
    let mut jobs: Vec<Option<Job>> = (0..threads)
        .map(|k| {
            (k > 0).then(|| Job {
                shares: std::sync::Arc::clone(&shares),
                task: TaskPtr(task.get()),
                k,
            })
        })
        .collect();
    let mut handed = vec![false; threads];
    let kept = if global {
        let _helpers = lock(&HELPERS);
        let seats = seats();
        let mut waiting: Vec<Waiting> = seats
            .iter()
            .enumerate()
            .filter(|(_, seat)| seat.state.load(Ordering::Acquire) == WAITING)
            .map(|(i, seat)| Waiting {
                seat: i,
                last: seat.last.load(Ordering::Relaxed),
            })
            .collect();
        hand_out(&mut waiting, &mut handed, |i, k| {
            if let Some(job) = jobs[k].take() {
                // SAFETY: seat `i` was waiting when read under the lock, still held.
                unsafe { seats[i].post(job) };
            }
        })
    } else {
        0
    };
    let mut spawned = 0;
    for job in jobs.iter_mut().filter_map(Option::take) {
        rayon::spawn(move || help(job, global));
        spawned += 1;
    }
    COUNTS.count(threads.saturating_sub(1 + spawned), kept, spawned);
    // SAFETY: as above.
    let ran = unsafe { shares.work(0, task.get()) };
    shares.finish(ran, false);
    shares.wait();
    std::mem::forget(armed);
}

/// Hands shares `1..handed.len()` to the `waiting` seats (in seat order) through `post`,
/// marking each share handed: first each seat whose last share is one of them gets it
/// again, from the end of the list (a share two seats ran last goes to the later one), then
/// the shares left go to the seats left, from the end. Shares no seat was waiting for stay
/// unmarked. Returns how many seats got their last share back.
///
/// A thread that runs the same share of a call that copies the same buffers again finds
/// the destination lines it wrote last time in its own cache, modified, rather than in
/// another core's. Handed by the order in which the helpers came back, a share could move
/// to another core on every call. With the cap on lingering helpers and the scan's shared
/// reads ([`Shares::work`]), handing shares back took the causal mask on 16 threads of an
/// Intel Xeon family 6 model 207 from 28 to 22 µs and merge heads from 122 to 78 µs
/// (docs/performance.md); the three were not measured apart. Share 0 is always the
/// caller's.
fn hand_out(
    waiting: &mut Vec<Waiting>,
    handed: &mut [bool],
    mut post: impl FnMut(usize, usize),
) -> usize {
    let mut kept = 0;
    for i in (0..waiting.len()).rev() {
        let k = waiting[i].last;
        if (1..handed.len()).contains(&k) && !handed[k] {
            post(waiting.remove(i).seat, k);
            handed[k] = true;
            kept += 1;
        }
    }
    for (k, done) in handed.iter_mut().enumerate().skip(1) {
        if !*done {
            let Some(helper) = waiting.pop() else {
                break;
            };
            post(helper.seat, k);
            *done = true;
        }
    }
    kept
}

/// How the parallel copies, fills and maps of this process found their helper threads
/// ([`helper_counts`]): counts since the process started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HelperCounts {
    /// Calls that shared their work between the calling thread and helpers.
    pub calls: u64,
    /// Shares handed to helpers lingering after an earlier call
    /// ([`set_helper_linger`]), which start at once.
    pub handed: u64,
    /// Of those, shares handed to the helper that ran the same share of the last call.
    pub kept: u64,
    /// Helpers spawned on the pool, for the shares no lingering helper took: each may wake
    /// a sleeping thread (microseconds for the caller, tens for the thread to start).
    pub spawned: u64,
}

/// The counters behind [`helper_counts`], one line of their own.
#[repr(align(128))]
struct Counts {
    calls: std::sync::atomic::AtomicU64,
    handed: std::sync::atomic::AtomicU64,
    kept: std::sync::atomic::AtomicU64,
    spawned: std::sync::atomic::AtomicU64,
}

static COUNTS: Counts = Counts {
    calls: std::sync::atomic::AtomicU64::new(0),
    handed: std::sync::atomic::AtomicU64::new(0),
    kept: std::sync::atomic::AtomicU64::new(0),
    spawned: std::sync::atomic::AtomicU64::new(0),
};

impl Counts {
    fn count(&self, handed: usize, kept: usize, spawned: usize) {
        let add = |c: &std::sync::atomic::AtomicU64, n: usize| {
            if n > 0 {
                c.fetch_add(n as u64, Ordering::Relaxed);
            }
        };
        add(&self.calls, 1);
        add(&self.handed, handed);
        add(&self.kept, kept);
        add(&self.spawned, spawned);
    }
}

/// How the parallel copies, fills and maps of this process have found their helper
/// threads so far. A caller outside any pool that calls the kernels back to back should
/// see `handed` grow and `spawned` stay still after its first calls; `spawned` growing on
/// every call means helpers that come back too late, or calls further apart than the
/// linger time ([`set_helper_linger`]), each call paying for waking threads. Calls inside a pool the
/// caller installed spawn every helper. The counters are shared by the whole process.
#[must_use]
pub fn helper_counts() -> HelperCounts {
    let get = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    HelperCounts {
        calls: get(&COUNTS.calls),
        handed: get(&COUNTS.handed),
        kept: get(&COUNTS.kept),
        spawned: get(&COUNTS.spawned),
    }
}

/// Share `k` of a [`share_out`] call, for a helper.
struct Job {
    shares: std::sync::Arc<Shares>,
    task: TaskPtr,
    k: usize,
}

impl Job {
    /// Runs the share's tasks ([`Shares::work`]); `then` runs before they are counted as
    /// finished, while the caller still waits for them.
    fn run(self, then: impl FnOnce()) {
        // SAFETY: `share_out`'s protocol: `work` calls the task only for a claimed task.
        let ran = unsafe { self.shares.work(self.k, self.task.get()) };
        then();
        self.shares.finish(ran, true);
    }
}

/// How long a helper of rayon's global pool waits, spinning, for the next parallel copy's
/// share after finishing one ([`help`]), unless set otherwise ([`set_helper_linger`]).
const DEFAULT_LINGER: Duration = Duration::from_millis(1);

/// [`DEFAULT_LINGER`] or what [`set_helper_linger`] set, in nanoseconds.
static LINGER_NS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(DEFAULT_LINGER.as_nanos() as u64);

/// Sets how long a helper thread of rayon's global pool, done with its share of a parallel
/// copy, fill or map, keeps spinning for the next one's before it returns to the pool
/// (default 1 ms; `Duration::ZERO`: never). Waking a sleeping pool thread takes
/// microseconds (on two vCPUs of an AMD EPYC family 26 it cost the caller 9 µs, and the
/// thread started 28 µs later): a framework that calls the kernels between other work would
/// pay that on every call, where OpenMP's threads (PyTorch's) spin for about as long. On
/// that machine, two threads, a 1.3 MB causal mask every 500 µs took 18 µs with helpers
/// lingering 200 µs, 9 with 1 ms (PyTorch: 11); every 2 ms, 26 µs with 1 ms and 11 with 5
/// ms (PyTorch: 17). While it waits, a lingering thread runs any job spawned on the global
/// pool (`rayon::yield_now`), so it holds up no other work; the cost is the CPU time spent
/// spinning, up to the linger time per helper after a program's last parallel call; at most
/// the pool's threads but one linger at a time. Kernels called inside a pool the caller
/// installed use no lingering threads.
pub fn set_helper_linger(linger: Duration) {
    let ns = u64::try_from(linger.as_nanos()).unwrap_or(u64::MAX);
    LINGER_NS.store(ns, Ordering::Relaxed);
}

/// A thread of rayon's global pool, seen from [`share_out`]: its state ([`ABSENT`],
/// [`WAITING`], [`POSTED`], [`BUSY`]), the share it ran last, and the job posted to it,
/// together on a line of their own. A thread that lingers ([`help`]) spins on its seat's
/// state; a caller that reads it waiting under the lock of [`HELPERS`] writes the job and
/// then the state, plain stores to the one line that thread reads, so that posting to 15
/// helpers waits for no line 15 times in turn. A thread puts itself back (waiting) with
/// plain stores too, without the lock, so that helpers done at once do not queue for it.
///
/// On 16 threads of an Intel Xeon family 6 model 207, back to back 1.3 MB causal masks:
/// with a list of helpers' mailboxes under one lock (a locked slot, its count and the flag
/// on one line), handing out the shares took 8.6 µs and the last helper started at 13.8;
/// with seats, 4.0 and 4.0, and the copy took 15 µs rather than 20 (docs/performance.md).
#[derive(Default)]
#[repr(align(128))]
struct Seat {
    state: std::sync::atomic::AtomicU8,
    last: AtomicUsize,
    job: std::cell::UnsafeCell<Option<Job>>,
    /// Jobs posted to it so far.
    #[cfg(test)]
    posts: AtomicUsize,
}

/// The seat's thread is not lingering.
const ABSENT: u8 = 0;
/// Lingering, waiting for a job: a caller may post one, under the lock of [`HELPERS`].
const WAITING: u8 = 1;
/// A job is posted; its thread takes it.
const POSTED: u8 = 2;
/// Lingering, running a job or on its way back.
const BUSY: u8 = 3;

// SAFETY: `job` is written only by `Seat::post` and read only by `Seat::take`, whose
// contracts order them through `state` (a poster writes only a waiting seat, read under the
// lock that its thread takes to leave; its thread reads only after seeing it posted); the
// job itself is `Send`.
unsafe impl Sync for Seat {}

impl Seat {
    /// Posts `job`.
    ///
    /// # Safety
    /// The caller holds the lock of [`HELPERS`] and read the seat [`WAITING`] under it: its
    /// thread has taken its last job and reads the slot only once it sees [`POSTED`].
    unsafe fn post(&self, job: Job) {
        // SAFETY: the contract above; the slot is empty, so nothing is dropped here.
        unsafe { *self.job.get() = Some(job) };
        #[cfg(test)]
        self.posts.fetch_add(1, Ordering::Relaxed);
        self.state.store(POSTED, Ordering::Release);
    }

    /// The posted job; the seat is [`BUSY`] again.
    ///
    /// # Safety
    /// Called only by the seat's thread, once it has seen [`POSTED`].
    unsafe fn take(&self) -> Option<Job> {
        self.state.store(BUSY, Ordering::Relaxed);
        // SAFETY: the contract: the post happened before, and no post comes until the
        // seat is waiting again, which only this thread sets.
        unsafe { (*self.job.get()).take() }
    }

    /// Marks the seat waiting, with `last` the share its thread ran last.
    fn wait(&self, last: usize) {
        self.last.store(last, Ordering::Relaxed);
        self.state.store(WAITING, Ordering::Release);
    }
}

/// The global pool's seats, one per thread, made at the first use.
fn seats() -> &'static [Seat] {
    static SEATS: std::sync::OnceLock<Box<[Seat]>> = std::sync::OnceLock::new();
    SEATS.get_or_init(|| {
        // Called outside any pool or on the global one: its size.
        (0..rayon::current_num_threads())
            .map(|_| Seat::default())
            .collect()
    })
}

/// A waiting seat, as [`hand_out`] sees it: its index and the share its thread ran last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Waiting {
    seat: usize,
    last: usize,
}

/// The global pool's lingering helpers: the lock under which callers post to waiting seats
/// and threads leave theirs.
struct Helpers {
    /// Threads lingering: waiting, running a share handed to them, or on their way back.
    /// At most the pool's threads but one ([`help`]).
    lingering: usize,
}

/// The global pool's lingering helpers.
static HELPERS: std::sync::Mutex<Helpers> = std::sync::Mutex::new(Helpers { lingering: 0 });

/// A lock that a panic elsewhere does not poison for the kernels (the data it guards is
/// a count, whole at every step).
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

std::thread_local! {
    /// Whether this thread is a lingering helper (a helper job that this thread runs while
    /// lingering, through `rayon::yield_now`, does not linger itself).
    static LINGERING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A helper of [`share_out`]: runs its share, then, on the global pool (`linger`), waits for
/// the next call's share for the linger time ([`set_helper_linger`]), spinning on its seat,
/// and runs it too, as long as shares come; then returns to the pool.
///
/// A helper marks its seat waiting before it counts its tasks as finished: the caller
/// returns only once every task has finished, so a caller that calls again at once finds
/// every lingering helper of its last call waiting, rather than spawn a helper for the
/// share of one still on its way back (back to back causal masks on 16 threads of an Intel
/// Xeon family 6 model 207 spawned 2.1 helpers a call when helpers went back on a list
/// under a lock after finishing; 0.05 with seats).
///
/// At most the pool's threads but one linger: with a calling thread outside the pool, no
/// more threads spin than the pool has. A helper past that returns to the pool at once:
/// spinning, it would take a CPU from a thread with work (helpers spawned while the
/// lingering ones were busy would otherwise all linger, and keep each other busy).
fn help(job: Job, linger: bool) {
    let linger = linger && !LINGERING.with(std::cell::Cell::get);
    let mut seat = None;
    let k = job.k;
    job.run(|| seat = linger.then(|| start_lingering(k)).flatten());
    let Some(seat) = seat else {
        return;
    };
    LINGERING.with(|l| l.set(true));
    let linger = || Duration::from_nanos(LINGER_NS.load(Ordering::Relaxed));
    loop {
        let start = Instant::now();
        let mut spins = 0u32;
        while seat.state.load(Ordering::Acquire) != POSTED {
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) {
                std::hint::spin_loop();
                continue;
            }
            if start.elapsed() >= linger() {
                break;
            }
            // Any other job of the pool runs here rather than wait for this thread.
            rayon::yield_now();
        }
        if seat.state.load(Ordering::Acquire) != POSTED {
            let mut helpers = lock(&HELPERS);
            if seat.state.load(Ordering::Acquire) == WAITING {
                stop_lingering(seat, &mut helpers);
                break;
            }
            // Posted since: its poster held the lock just taken.
        }
        #[cfg(test)]
        tests::POSTED_RUNS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the seat was seen posted.
        let job = unsafe { seat.take() };
        let mut again = false;
        match job {
            Some(job) => {
                let k = job.k;
                job.run(|| again = wait_again(seat, k));
            }
            None => again = wait_again(seat, seat.last.load(Ordering::Relaxed)),
        }
        if !again {
            break;
        }
    }
    LINGERING.with(|l| l.set(false));
}

/// This thread's seat, marked waiting with `last` the share it ran, if it may start to
/// linger: a thread of the global pool, a linger time above zero, and fewer than the
/// pool's threads but one lingering.
fn start_lingering(last: usize) -> Option<&'static Seat> {
    let seat = seats().get(rayon::current_thread_index()?)?;
    let mut helpers = lock(&HELPERS);
    if LINGER_NS.load(Ordering::Relaxed) == 0
        || helpers.lingering + 1 >= rayon::current_num_threads()
    {
        return None;
    }
    helpers.lingering += 1;
    seat.wait(last);
    Some(seat)
}

/// Marks a lingering thread's seat waiting again, with `last` the share it ran, unless the
/// linger time is now zero: then the thread stops lingering. Returns whether it waits.
fn wait_again(seat: &Seat, last: usize) -> bool {
    if LINGER_NS.load(Ordering::Relaxed) == 0 {
        stop_lingering(seat, &mut lock(&HELPERS));
        return false;
    }
    seat.wait(last);
    true
}

/// Takes a lingering thread's seat off (no caller posts to it again) and counts the thread
/// out, under the lock of [`HELPERS`] (`helpers`).
fn stop_lingering(seat: &Seat, helpers: &mut Helpers) {
    seat.state.store(ABSENT, Ordering::Relaxed);
    helpers.lingering -= 1;
}

impl LoopPlan<'_> {
    // Written beside the execution it predicts: the units are the ones `run_boxes` cuts.
    /// How the plan would split its work on a pool of `threads` threads (the pool a caller
    /// installs, or rayon's global one): per box, the units of work its kernel cuts it into,
    /// the rayon tasks those go to, the bytes each task writes and the threads that share
    /// them (fewer than the pool's where a thread would write less than 160 KiB). A box
    /// under the parallel threshold, or on one thread, runs as one task on the calling
    /// thread.
    #[must_use]
    pub fn partition(&self, threads: usize) -> Partition {
        let boxes = self
            .boxes
            .iter()
            .map(|b| {
                let threads = box_threads(self, &b.region, || threads);
                let units = box_units(&b.nest.loops, b.nest.kernel, self.elem_size, threads);
                let (tasks, _) = split(units, threads);
                let elems = region_elems(&b.region);
                BoxPartition {
                    units,
                    tasks,
                    threads: threads.min(tasks),
                    bytes_per_task: elems.saturating_mul(self.elem_size).div_ceil(tasks.max(1)),
                }
            })
            .collect();
        Partition { threads, boxes }
    }
}

/// The threads box `region` of `plan` shares its work between on a pool of `pool()` threads
/// ([`share_threads`] of its bytes; one when the plan runs on the calling thread).
fn box_threads(plan: &LoopPlan, region: &[(usize, usize)], pool: impl FnOnce() -> usize) -> usize {
    if !plan.parallel {
        return 1;
    }
    share_threads(region_elems(region).saturating_mul(plan.elem_size), pool)
}

/// The elements of a box's region (half-open ranges per axis).
fn region_elems(region: &[(usize, usize)]) -> usize {
    region
        .iter()
        .fold(1usize, |n, &(lo, hi)| n.saturating_mul(hi - lo))
}

/// The least a thread's share of a parallel call writes: a call of fewer than this many bytes
/// per thread of the pool shares its work between fewer threads, each thread more being a
/// hand-out that the others wait for and one more CPU that spins (PyTorch's parallel loops
/// give each thread at least 32768 elements). On a 16-thread pool of an Intel Xeon family 6
/// model 207, the 1.3 MB causal mask took 15 µs on 8 threads, 16 on 6, 10 or 12, and 19 on
/// all 16, while every workload of 12 MiB or more was slower on fewer than 16
/// (docs/performance.md).
const SHARE_BYTES: usize = 160 << 10;

/// The threads a call that writes `bytes` bytes shares its work between on a pool of
/// `pool()` threads: one under [`PARALLEL_BYTES`] (a few KiB, as the pad and edge boxes of an
/// im2col, are not worth a fork and join), else one per [`SHARE_BYTES`], at most the pool's.
/// The pool is asked only when there is something to share: `current_num_threads` is that of
/// the pool the caller installed, if any.
pub(crate) fn share_threads(bytes: usize, pool: impl FnOnce() -> usize) -> usize {
    if bytes < PARALLEL_BYTES {
        return 1;
    }
    pool().min(bytes / SHARE_BYTES).max(1)
}

/// How [`run_units`] splits `units` between `threads` threads: the number of tasks and the
/// units of each (the last may have fewer). One task on one thread; else
/// about [`TASKS`], or four per thread on a pool of more than 16, so that a thread that
/// finishes early takes another task and no thread waits for a long last one.
pub(crate) fn split(units: usize, threads: usize) -> (usize, usize) {
    if threads <= 1 || units <= 1 {
        return (1, units);
    }
    let want = TASKS.max(threads.saturating_mul(4)).min(units);
    let per = units.div_ceil(want);
    (units.div_ceil(per), per)
}

/// The units of work [`run_boxes`] cuts box `nest` of a plan of `size`-byte elements into (for
/// the tiled kernel, counted as if the buffers started on cache lines: a tile aligned to a
/// line may add one block per tiled axis).
pub(crate) fn box_units(axes: &[Loop<2>], kernel: Kernel, size: usize, threads: usize) -> usize {
    let Some((&Loop { extent: na, .. }, outer)) = axes.split_last() else {
        return 0;
    };
    let product = |ax: &[Loop<2>]| ax.iter().map(|a| a.extent).product::<usize>();
    match kernel {
        Kernel::MaskedRows => product(outer),
        Kernel::TiledRows => {
            let Some((&Loop { extent: na, .. }, rest)) = outer.split_last() else {
                return 0;
            };
            let Some((&Loop { extent: nb, .. }, rest)) = rest.split_last() else {
                return 0;
            };
            product(rest)
                .saturating_mul(na.div_ceil(ROWS_RUN))
                .saturating_mul(nb.div_ceil(tile_rows(size)))
        }
        Kernel::Tiled => {
            let Some((nb, [db, _], rest)) = innermost(outer) else {
                return 0;
            };
            let n_units = product(rest).saturating_mul(nb.div_ceil(TILE));
            let staged = size == 1
                && na >= LINE
                && nb.min(TILE).saturating_mul(LINE) <= STAGE_BYTES
                && db.unsigned_abs() >= STAGE_APART;
            let a_block = tile_a_block(rest, (na, nb), size, staged, threads);
            n_units.saturating_mul(na.div_ceil(a_block.max(1)))
        }
        Kernel::CopyFromSlice if na * size < SHORT_ROW => {
            match outer.iter().position(|a| a.steps[0] == na as isize) {
                Some(k) => {
                    let mut rest: Vec<Loop<2>> = outer.to_vec();
                    let Loop {
                        extent: nb,
                        steps: [_, sb],
                    } = rest.remove(k);
                    let line = |t: isize| t.unsigned_abs().saturating_mul(size) >= LINE;
                    match rest.last() {
                        Some(&Loop {
                            extent: nw,
                            steps: [_, sw],
                        }) if nw > 1 && !line(sw) && line(sb) => product(&rest[..rest.len() - 1])
                            .saturating_mul(nw.div_ceil(SHORT_SLABS)),
                        _ => product(&rest).saturating_mul(nb.div_ceil(SEG)),
                    }
                }
                None => row_run_units(outer, na, size),
            }
        }
        Kernel::CopyFromSlice if na <= SEG && !outer.is_empty() => row_run_units(outer, na, size),
        _ => product(outer).saturating_mul(na.div_ceil(SEG)),
    }
}

/// The units of [`row_runs`] over rows of `na` elements of `size` bytes, `outer` its outer
/// axes (the last one the run).
fn row_run_units(outer: &[Loop<2>], na: usize, size: usize) -> usize {
    let Some((&Loop { extent: nb, .. }, rest)) = outer.split_last() else {
        return 1;
    };
    rest.iter()
        .map(|a| a.extent)
        .product::<usize>()
        .saturating_mul(nb.div_ceil(run_rows(na, nb, size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_tail_grows_with_the_pool_within_half_the_cache() {
        let mib = 1 << 20;
        // A cache unknown or of 32 MiB: 16 MiB on any pool.
        for threads in [1, 2, 16, 64] {
            assert_eq!(fill_tail(threads, 0), 16 * mib);
            assert_eq!(fill_tail(threads, 32 * mib), 16 * mib);
        }
        // 300 MiB: 16 MiB up to 4 threads, then 4 MiB a thread, up to half the cache.
        let grown = [(1, 16), (4, 16), (5, 20), (8, 32), (16, 64), (64, 150)];
        for (threads, tail) in grown {
            assert_eq!(
                fill_tail(threads, 300 * mib),
                tail * mib,
                "{threads} threads"
            );
        }
        assert_eq!(fill_tail(usize::MAX, usize::MAX), usize::MAX / 2);
    }

    #[test]
    fn cache_sizes_read_as_sysfs_writes_them() {
        assert_eq!(cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(cache_size("300M"), Some(300 << 20));
        assert_eq!(cache_size("2G"), Some(2 << 30));
        assert_eq!(cache_size("512"), Some(512));
        for bad in ["", "K", "12X", "1.5M", "-1K", "99999999999999999999999G"] {
            assert_eq!(cache_size(bad), None, "{bad:?}");
        }
    }

    /// `share_out` runs every task exactly once, whatever the split of threads and tasks,
    /// from outside a pool, from inside one (the caller then a worker of it) and from a
    /// pool of fewer threads than helpers asked for (helpers that start after the caller
    /// has taken every task find none).
    #[test]
    fn shares_run_every_task_once() {
        let check = |threads: usize, tasks: usize| {
            let runs: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
            share_out(threads, tasks, false, |t| {
                runs[t].fetch_add(1, Ordering::Relaxed);
            });
            let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
            assert!(
                counts.iter().all(|&c| c == 1),
                "{threads} threads, {tasks} tasks: {counts:?}"
            );
        };
        let cases = [(2, 2), (2, 3), (3, 5), (4, 64), (7, 100), (16, 17)];
        for &(threads, tasks) in &cases {
            check(threads, tasks);
        }
        for pool_threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(pool_threads)
                .build()
                .expect("pool");
            pool.install(|| {
                for &(threads, tasks) in &cases {
                    check(threads, tasks);
                }
            });
        }
    }

    /// A caller outside the pool whose helpers cannot start (every thread of rayon's global
    /// pool, where they go, is busy until the call has returned) runs every task itself and
    /// returns without waiting for them (a join would wait forever here); the helpers, run
    /// later, find no task left and run none.
    #[test]
    fn late_helpers_neither_hold_the_caller_nor_run_tasks() {
        use std::sync::{Arc, Barrier};
        let n = rayon::current_num_threads();
        let (busy, release) = (Arc::new(AtomicUsize::new(0)), Arc::new(Barrier::new(n + 1)));
        for _ in 0..n {
            let (busy, release) = (Arc::clone(&busy), Arc::clone(&release));
            rayon::spawn(move || {
                busy.fetch_add(1, Ordering::SeqCst);
                release.wait();
            });
        }
        while busy.load(Ordering::SeqCst) < n {
            std::thread::yield_now();
        }
        let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..40).map(|_| AtomicUsize::new(0)).collect());
        let elsewhere = Arc::new(AtomicUsize::new(0));
        let (done, returned) = std::sync::mpsc::channel();
        let (r, e) = (Arc::clone(&runs), Arc::clone(&elsewhere));
        std::thread::spawn(move || {
            let me = std::thread::current().id();
            share_out(n + 1, 40, false, |t| {
                r[t].fetch_add(1, Ordering::SeqCst);
                if std::thread::current().id() != me {
                    e.fetch_add(1, Ordering::SeqCst);
                }
            });
            let _ = done.send(());
        });
        let waited = returned.recv_timeout(Duration::from_secs(20));
        release.wait();
        assert!(
            waited.is_ok(),
            "the caller waited for helpers that could not start"
        );
        assert_eq!(
            elsewhere.load(Ordering::SeqCst),
            0,
            "a blocked helper ran a task"
        );
        // Let the helpers run (queued behind the blocked jobs), then check that none of
        // them ran a task.
        rayon::join(|| (), || ());
        std::thread::sleep(Duration::from_millis(50));
        let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
        assert!(counts.iter().all(|&c| c == 1), "{counts:?}");
    }

    /// Shares that lingering helpers took from a call's hand.
    pub(super) static POSTED_RUNS: AtomicUsize = AtomicUsize::new(0);

    /// Held by a test that sets the linger time, so that such tests run one at a time;
    /// restores the default when dropped (a failed assertion included).
    struct DefaultLinger(#[allow(dead_code)] std::sync::MutexGuard<'static, ()>);

    impl DefaultLinger {
        fn hold() -> Self {
            static SETTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
            DefaultLinger(lock(&SETTING))
        }
    }

    impl Drop for DefaultLinger {
        fn drop(&mut self) {
            set_helper_linger(DEFAULT_LINGER);
        }
    }

    /// The seats of the global pool waiting for a share.
    fn waiting_seats() -> usize {
        seats()
            .iter()
            .filter(|seat| seat.state.load(Ordering::Acquire) == WAITING)
            .count()
    }

    /// Waits up to 30 s (other tests may hold the global pool's threads) for `done`.
    fn within_30s(done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while !done() {
            if start.elapsed() > Duration::from_secs(30) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// A helper of the global pool that has run its share waits on [`HELPERS`] for the
    /// linger time; the next call from outside a pool hands it a share, which it takes
    /// (every task still exactly once; the helper may run none of them if it is busy with
    /// another job of the pool and the caller takes them all); with the linger set to zero,
    /// the waiting helpers leave.
    #[test]
    fn lingering_helpers_take_the_next_calls_shares_and_leave_when_told() {
        let _restore = DefaultLinger::hold();
        set_helper_linger(Duration::from_secs(60));
        let call = || {
            std::thread::spawn(|| {
                let runs: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
                share_out(2, 64, false, |t| {
                    runs[t].fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_micros(100));
                });
                let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
                assert!(counts.iter().all(|&c| c == 1), "{counts:?}");
            })
            .join()
            .expect("the call");
        };
        call();
        assert!(
            within_30s(|| waiting_seats() > 0),
            "no helper lingered after its share"
        );
        let handed = POSTED_RUNS.load(Ordering::SeqCst);
        let counted = helper_counts();
        call();
        assert!(
            within_30s(|| POSTED_RUNS.load(Ordering::SeqCst) > handed),
            "the second call handed no share to a lingering helper"
        );
        // A call counts its shares after posting them: wait for the count.
        assert!(
            within_30s(|| {
                let now = helper_counts();
                now.calls > counted.calls && now.handed > counted.handed
            }),
            "{counted:?} then {:?}",
            helper_counts()
        );
        let now = helper_counts();
        assert!(now.kept <= now.handed, "{now:?}");
        set_helper_linger(Duration::ZERO);
        assert!(
            within_30s(|| waiting_seats() == 0),
            "lingering helpers stayed with the linger set to zero"
        );
    }

    /// Work under the parallel threshold stays on the calling thread without asking the
    /// pool; above it, each thread's share writes at least `SHARE_BYTES`, on at most the
    /// pool's threads.
    #[test]
    fn shares_write_at_least_their_floor() {
        let unasked = || panic!("the pool was asked for work under the threshold");
        assert_eq!(share_threads(0, unasked), 1);
        assert_eq!(share_threads(PARALLEL_BYTES - 1, unasked), 1);
        assert_eq!(
            share_threads(PARALLEL_BYTES, || 16),
            PARALLEL_BYTES / SHARE_BYTES
        );
        assert_eq!(share_threads(512 * 640 * 4, || 16), 8);
        assert_eq!(share_threads(16 * SHARE_BYTES, || 16), 16);
        assert_eq!(share_threads(64 << 20, || 16), 16);
        assert_eq!(share_threads(64 << 20, || 2), 2);
        assert_eq!(share_threads(usize::MAX, || 1), 1);
    }

    /// A lingering helper that runs a call's last tasks is waiting for the next call's share
    /// by the time the call returns (or has been handed one since), so a caller that calls
    /// again at once need not spawn a helper for its share.
    #[test]
    fn a_lingering_helper_is_back_on_its_seat_before_the_call_returns() {
        let _restore = DefaultLinger::hold();
        set_helper_linger(Duration::from_secs(60));
        // The helper's tasks are slow, so that it finishes last.
        let (mut checked, mut rounds) = (0, 0);
        while checked < 100 && rounds < 5000 {
            rounds += 1;
            let seen = std::sync::Mutex::new(None);
            share_out(2, 8, false, |_| {
                if rayon::current_thread_index().is_none() {
                    std::thread::sleep(Duration::from_micros(10));
                } else if LINGERING.with(std::cell::Cell::get) {
                    let i = rayon::current_thread_index().expect("a pool thread");
                    let posts = seats()[i].posts.load(Ordering::SeqCst);
                    *lock(&seen) = Some((i, posts));
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
            let Some((i, posts)) = lock(&seen).take() else {
                // Run by the caller alone, or by a helper not yet lingering.
                continue;
            };
            let seat = &seats()[i];
            let waiting = seat.state.load(Ordering::SeqCst) == WAITING;
            let since = seat.posts.load(Ordering::SeqCst) - posts;
            assert!(
                waiting || since > 0,
                "round {rounds}: the helper was neither waiting nor handed a share"
            );
            checked += 1;
        }
        assert_eq!(checked, 100, "{rounds} rounds");
    }

    /// Callers outside any pool, several at once, each handing shares to lingering helpers
    /// or spawning new ones, never keep more helpers lingering than the global pool's
    /// threads but one: with a caller, no more threads spin than the pool has.
    #[test]
    fn no_more_helpers_linger_than_the_pool_has_threads_but_one() {
        let cap = rayon::current_num_threads().saturating_sub(1);
        let stop = std::sync::atomic::AtomicBool::new(false);
        let most = AtomicUsize::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    most.fetch_max(lock(&HELPERS).lingering, Ordering::Relaxed);
                    std::thread::yield_now();
                }
            });
            let callers: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        for _ in 0..200 {
                            share_out(cap + 1, 64, false, |_| {
                                let start = Instant::now();
                                while start.elapsed() < Duration::from_micros(5) {
                                    std::hint::spin_loop();
                                }
                            });
                        }
                    })
                })
                .collect();
            for caller in callers {
                caller.join().expect("a caller");
            }
            stop.store(true, Ordering::Relaxed);
        });
        let most = most.load(Ordering::Relaxed);
        assert!(
            most <= cap,
            "{most} helpers lingered on a pool of {}",
            cap + 1
        );
    }

    /// Waiting seats `0..lasts.len()` whose last shares are `lasts`, handed the shares of
    /// a call on `threads` threads: each seat's new share (`None`: still waiting), and the
    /// shares left for new helpers.
    fn handed_out(lasts: &[usize], threads: usize) -> (Vec<Option<usize>>, Vec<usize>) {
        let helpers: Vec<Waiting> = lasts
            .iter()
            .enumerate()
            .map(|(seat, &last)| Waiting { seat, last })
            .collect();
        let mut waiting = helpers.clone();
        let mut handed = vec![false; threads];
        let mut posts = Vec::new();
        hand_out(&mut waiting, &mut handed, |seat, k| posts.push((seat, k)));
        let got = helpers
            .iter()
            .map(|h| {
                let posted: Vec<usize> = posts
                    .iter()
                    .filter(|&&(seat, _)| seat == h.seat)
                    .map(|&(_, k)| k)
                    .collect();
                assert!(posted.len() <= 1, "{posted:?}");
                let still = waiting.contains(h);
                assert_eq!(still, posted.is_empty(), "{lasts:?} on {threads} threads");
                posted.first().copied()
            })
            .collect();
        let left = (1..threads).filter(|&k| !handed[k]).collect();
        (got, left)
    }

    /// Each waiting seat gets the share it ran last when the call has it and no later seat
    /// took it; the other shares go to the last seats left; a seat is never handed share 0
    /// (the caller's) or two shares.
    #[test]
    fn waiting_helpers_get_their_last_shares_back() {
        // Every share back to the seat that ran it, whatever the seats' order.
        assert_eq!(
            handed_out(&[2, 3, 1], 4),
            (vec![Some(2), Some(3), Some(1)], vec![])
        );
        // Two seats ran share 1 (one was late): the later keeps it; the other takes share
        // 2, which no seat ran; one waits, as no share is left for it.
        assert_eq!(
            handed_out(&[9, 1, 1], 3),
            (vec![None, Some(2), Some(1)], vec![])
        );
        // More shares than seats: shares 1 and 3 are theirs; 2 and 4 to new helpers.
        assert_eq!(handed_out(&[3, 1], 5), (vec![Some(3), Some(1)], vec![2, 4]));
        // Shares of a call on more threads are handed out from the last seat.
        assert_eq!(
            handed_out(&[7, 6, 5], 3),
            (vec![None, Some(2), Some(1)], vec![])
        );
        // No seat waiting, or one thread: nothing handed.
        assert_eq!(handed_out(&[], 3), (vec![], vec![1, 2]));
        assert_eq!(handed_out(&[1, 2], 1), (vec![None, None], vec![]));
    }

    /// `fill(level, dp, len, v)` at every supported level writes `v` to exactly its run:
    /// every length in `lens`, runs starting at every element offset within a 64-byte line,
    /// guards around them.
    fn fills_exactly<T: Element + std::fmt::Debug>(
        v: T,
        other: T,
        lens: impl Iterator<Item = usize> + Clone,
        fill: impl Fn(Level, *mut T, usize, T),
    ) {
        let size = std::mem::size_of::<T>();
        for level in simd::supported() {
            for len in lens.clone() {
                for line_offset in (0..64).step_by(size) {
                    let mut buf = vec![other; 64 / size + len + 3];
                    let lead = (line_offset + 64 - buf.as_ptr() as usize % 64) % 64 / size;
                    // SAFETY: `len` elements from `lead` lie inside `buf`.
                    fill(level, unsafe { buf.as_mut_ptr().add(lead) }, len, v);
                    for (i, &x) in buf.iter().enumerate() {
                        let want = if (lead..lead + len).contains(&i) {
                            v
                        } else {
                            other
                        };
                        assert!(x == want, "{level:?} len {len} lead {lead} at {i}: {x:?}");
                    }
                }
            }
        }
    }

    /// The fills: plain ([`fill_wide`]), whole patterns with non-temporal stores
    /// ([`fill_pattern`], or the plain fill where it has no path), and streamed rows
    /// ([`fill_row_of`]) of lengths around [`STREAM_ROW`].
    fn every_fill<T: Element + std::fmt::Debug>(v: T, other: T) {
        let size = std::mem::size_of::<T>();
        fills_exactly(v, other, 0..200, |level, dp, len, v| {
            // SAFETY: the pointer, length and supported level `fills_exactly` gives.
            unsafe { fill_wide(level, dp, 1, len, v) }
        });
        fills_exactly(v, other, 0..200, |level, dp, len, v| {
            // SAFETY: as above.
            if unsafe { fill_pattern::<T, true>(level, dp, len, v) } {
                simd::fence(level);
            } else {
                assert!(
                    level < Level::Avx2 || len * size < 64,
                    "{level:?} len {len}"
                );
                // SAFETY: as above.
                unsafe { fill_wide(level, dp, 1, len, v) };
            }
        });
        let around = STREAM_ROW / size;
        fills_exactly(v, other, around - 3..around + 70, |level, dp, len, v| {
            // SAFETY: as above.
            unsafe { fill_row_of(level, true, dp, 1, len, v) };
            simd::fence(level);
        });
    }

    #[test]
    fn wide_fills_write_exactly_their_run() {
        every_fill::<u8>(0xab, 1);
        every_fill::<u16>(0xabcd, 1);
        every_fill::<f32>(f32::NEG_INFINITY, 0.5);
        every_fill::<f64>(-3.25, 0.5);
        every_fill::<i64>(-7, 9);
    }
}
