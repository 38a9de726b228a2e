//! Strided loops over bound views at memory speed: materialize, copy, fill, map, zip and reduce.
//!
//! # Overview
//!
//! The kernels run on the bound views of the view crate: a [`ConcreteView`] (shape, strides
//! in elements, possibly negative or zero, offset, optional per-axis mask of valid indices)
//! or a [`ConcreteStack`] (views stacked bottom first, each reading the row-major elements of
//! the one below), both through the sealed trait [`Levels`]. This crate adds no view algebra
//! of its own: extents, overlap and broadcasting come from the view crate.
//!
//! - [`Input`]: a buffer, the view that reads it, and the value masked-out elements read
//!   ([`Input::pad`], zero by default) in every operation that reads it: `materialize`,
//!   `copy`, `map`, `zip` and `reduce` alike, so a causal mask padded with `-inf` feeds a
//!   softmax's `max` and `exp` directly;
//!   [`Output`]: a buffer and the view its elements are written through. Every operation
//!   takes its inputs first, then its output, then scalars and closures.
//! - The operations: [`materialize`], [`copy`], [`copy_within`] (source and destination in
//!   one buffer), [`fill`], [`map`]/[`map_into`], [`zip`]/[`zip_into`] (with NumPy
//!   broadcasting), [`reduce`] and [`reduce_with`], generic over the plain [`Element`] types
//!   (`f32`, `f64`, [`struct@f16`], [`bf16`], the integers, `bool`). `f16` and `bf16` move as
//!   2-byte elements through the kernels of `u16`; builtin reductions accumulate them in
//!   `f32` and round once at the end (docs/semantics.md, section 13).
//!   Results the operations allocate are [`Dense`] (shape and row-major values).
//! - [`gather`] ([`take`], [`compress`], [`boolean_mask`]): NumPy's fancy and boolean
//!   indexing, copies into a new buffer of what the view crate's `Selection` reads (the
//!   buffer a gather's new `ViewStack` is a view of).
//! - [`LoopPlan`]: the inspectable plan of a copy or materialize ([`plan_materialize`],
//!   [`plan_copy_into`]): boxes of the destination (an interior without mask checks, border
//!   boxes of pad value), each a simplified loop nest with a chosen [`Kernel`] (boxes cut and
//!   axes merged by the rules of [`symshape_view::nest`], which code generation shares). A stack whose
//!   levels do not compose into one view is cut into boxes that do (the padded ends of the
//!   unfold windows of an im2col), or into boxes of masked rows (a causal mask), before it
//!   falls back to an offset table; [`LoopPlan::table`] says whether a plan reads one and
//!   why. Its `Display` is what `shapetrace plan` prints; it runs with
//!   [`LoopPlan::run_materialize`] or [`LoopPlan::run_copy`] any number of times.
//! - Threads: work above 1 MiB runs on the rayon pool of the calling thread: a caller's
//!   own `ThreadPool` when called inside `pool.install(..)`, else rayon's global pool; a
//!   pool of one thread runs the work inline. Each thread's share writes at least 160 KiB,
//!   so work under 2.5 MiB uses fewer threads of a large pool (a 1.3 MB copy, 8 of 16:
//!   each thread more is a hand-out to wait for). The calling thread works too: the tasks are
//!   shared out between it and the pool's threads, one contiguous share each first, then
//!   what is left of the others. It returns as soon as every task has finished (spinning
//!   for at most 50 µs, then parking), not when every helper it spawned has started: a
//!   helper that starts late finds nothing left and touches none of the call's data. A
//!   panic inside a task (the kernels' tasks do not panic) aborts the process. On the
//!   global pool, a helper done with its share keeps spinning for the next call's for 1
//!   ms ([`set_helper_linger`] changes this; zero turns it off), so that a framework that
//!   calls the kernels between other work does not wake sleeping threads on every call;
//!   while it waits, it runs any other job of the pool. At most the pool's threads but one
//!   linger at a time, so no more threads spin than the pool has. The next call hands each
//!   waiting helper the share it ran last where it has that share, so a thread copying
//!   into the same buffer again writes the part that is already in its cache;
//!   [`helper_counts`] says how many shares went to waiting helpers and how many helpers
//!   were spawned. [`LoopPlan::partition`] prints how a plan splits its work for a given
//!   pool size; results never depend on it.
//! - [`set_alloc_limit`]: every buffer an operation allocates on its own is reserved
//!   fallibly and refused beyond this process-wide limit ([`Error::Alloc`]). On Linux those
//!   that span a 2 MiB huge page are advised for transparent huge pages before they are
//!   written; [`advise_huge_pages`] gives the same advice for a caller's own buffers (large
//!   permutations of 1-byte elements run up to a quarter faster with both buffers advised).
//! - Interop: with the `ndarray` feature, the `nd` module turns ndarray views into operands
//!   (`nd::source`, `nd::destination`, `nd::copy_into`) and results into arrays
//!   (`Dense::into_ndarray`). With the `dlpack` feature, the `dlpack` module reads CPU
//!   DLPack tensors as a slice over exactly their extent and a view (`dlpack::source`,
//!   `dlpack::materialize`), refusing every malformed one with [`Error::Dlpack`], and
//!   exports results as managed tensors that own their values (`Dense::into_dlpack`).
//!
//! Every view's reachable extent is checked against its buffer once, before the loops (for a
//! stack, the range of the offsets its table holds); a destination reaching an element twice
//! is rejected. Work above 1 MiB runs on rayon; results never depend on the number of threads.
//! A single unmasked view of at most 1024 elements materialized into a row-major buffer skips
//! the planner: it is gathered with its axes on the stack, a transpose of its last two axes
//! through the tiled kernel's register transposes.
//!
//! ```
//! use symshape_kernels::{materialize, plan_materialize, Input, Kernel};
//! use symshape_view::ConcreteView;
//! let buf: Vec<f32> = (0..12).map(|i| i as f32).collect();
//! // Flip both axes of a 3 x 4 matrix.
//! let flip = ConcreteView::create(&[3, 4], Some(&[-4, -1]), 11, None)?;
//! let plan = plan_materialize::<f32>(&flip)?;
//! assert_eq!(plan.boxes()[0].nest.kernel, Kernel::ReversedCopy);
//! assert_eq!(materialize(Input::new(&buf, &flip))?.values[..4], [11.0, 10.0, 9.0, 8.0]);
//! # Ok::<(), symshape_kernels::Error>(())
//! ```
//!
//! # SIMD and streaming stores
//!
//! The tiled kernel (transposes and other permutations) moves 1-, 2-, 4- and 8-byte elements
//! through register transposes at the best level the CPU has, detected once with
//! `is_x86_feature_detected!` ([`simd_path`] names it):
//! - SSE2, on every x86_64 CPU: 16-byte blocks;
//! - AVX2: 32-byte loads for 1- and 2-byte elements, and 1-byte tiles staged through an
//!   L1-resident buffer so that every source and destination line is touched whole, once;
//!   4- and 8-byte tiles into streamed destinations (below) put each destination line in two
//!   32-byte registers;
//! - AVX-512 (F and BW): for 2-, 4- and 8-byte elements, each destination line of a tile is
//!   put together in one 64-byte register and written with one store; 64-byte gathers of
//!   every second element (`a[:, ::2]`).
//!
//! Other architectures run the same tiling with plain loops; the tests force every level the
//! CPU supports, the portable one included. The environment variable `SYMSHAPE_SIMD`
//! (`avx2`, `sse2` or `portable`) caps the level, to compare levels or to rule one out.
//!
//! Destinations of 32 MiB or more (larger than the last-level cache of the machines
//! measured) are written with non-temporal stores, which skip reading each destination line
//! before writing it and leave the caches to the source: row copies of 1 KiB or more, the
//! whole-line tiles, and every other row a kernel writes (fills, pads, broadcasts, reversed and
//! strided rows, offset-table gathers, `map` and `zip`), which go through a 4 KiB buffer on
//! the stack. The fills (broadcast and pad rows) of the destination's last 16 MiB are
//! written with ordinary stores, to stay in the cache for whatever reads the result; on a
//! pool of more than 4 threads, 4 MiB per thread, within half the last-level cache (read
//! from Linux's sysfs). docs/performance.md has the measurements behind each of these choices.
//!
//! # Dependencies
//!
//! `thiserror` for the error type, `rayon` for the thread pool, `symshape-view` for the views
//! the kernels run on (and its per-thread [`Memo`](symshape_view::concrete::Memo), which
//! remembers masked-row plans), `half` for the `f16` and `bf16` element types (the types frameworks such as candle
//! and burn use, so their buffers are kernel operands without a copy; only its `std`
//! feature, for the run-time detection of the F16C conversions), and on Linux `libc`
//! for `madvise` (huge-page advice; std has no binding for it). The optional `ndarray`
//! feature (off by default) adds `ndarray` so that frameworks built on it can run the kernels
//! on their arrays, without a copy for views that fill their memory range (any permutation or
//! flip of a block, broadcasts); nothing else in the crate depends on it. The optional `dlpack` feature (off by default) adds `dlpark`
//! (without its default features; it brings `bitflags` and `snafu`): it keeps the DLPack ABI
//! structs, data type and device constants, and the ownership of managed tensors (allocation,
//! deleter, versioned and legacy ABIs) in a maintained crate instead of hand-written FFI here.
//! The crate needs Rust 1.89 (the AVX-512 intrinsics of `std::arch`), which also covers
//! `dlpark`'s 1.88; the other crates of the workspace need only the workspace's rust-version.
//!
//! # Unsafe code
//!
//! All `unsafe` code is in the loop executor, the `madvise` call (`src/alloc.rs`), its SIMD kernels (`src/simd.rs`, each a
//! `#[target_feature]` function called only at a detected level) and the operations' inner
//! rows: raw pointer
//! loops over buffers whose reachable extents were checked once, before the loops (the
//! numbered argument is in the executor's module docs, `src/exec.rs`). The
//! ndarray interop adds none: it borrows an array's memory only through ndarray's own
//! `to_slice_memory_order` (views that fill their memory range) and gathers the elements of
//! views with gaps, because a slice over the gaps could alias another live mutable view.
//! The DLPack interop (`src/dlpack.rs`) has the `unsafe` that any reader of a raw pointer
//! needs: it makes one slice over a tensor's extent after checking every field the tensor
//! carries, and its `unsafe fn`s leave to the caller only what DLPack cannot say, that the
//! memory behind the pointer is there.

#![deny(clippy::undocumented_unsafe_blocks)]

/// The example of the crate's README, compiled and run as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod alloc;
#[cfg(feature = "dlpack")]
pub mod dlpack;
mod element;
mod error;
mod exec;
mod gather;
#[cfg(feature = "ndarray")]
pub mod nd;
mod operand;
mod ops;
mod plan;
mod reduce;
mod simd;

pub use alloc::{
    advise_huge_pages, alloc_limit, filled_vec, set_alloc_limit, DEFAULT_ALLOC_LIMIT, HUGE_PAGE,
};
pub use element::Element;
pub use error::{Error, Result};
pub use exec::{helper_counts, set_helper_linger, HelperCounts};
pub use gather::{boolean_mask, compress, gather, take};
/// The half-precision element types, re-exported so that callers name the same `half` crate.
pub use half::{bf16, f16};
pub use operand::{Input, Output};
pub use ops::{copy, copy_within, fill, map, map_into, materialize, zip, zip_into, Dense};
pub use plan::{
    plan_copy_into, plan_materialize, BoxPartition, Kernel, LoopPlan, Nest, Partition, PlanBox,
    RowRun, TableReason, TableUse,
};
pub use reduce::{reduce, reduce_with, ReduceConfig, ReduceOp};
pub use simd::{simd_kernels, simd_path};
pub use symshape_view::{ConcreteStack, ConcreteView, Levels};
