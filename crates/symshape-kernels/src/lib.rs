//! Strided loops over bound views at memory speed: materialize, copy, fill, map, zip and reduce.
//!
//! # Overview
//!
//! - [`Layout`]: a concrete strided view of a flat buffer (shape, strides in elements, possibly
//!   negative or zero, offset, optional per-axis mask of valid indices).
//! - [`LayoutStack`]: layouts stacked bottom first, each above indexing the row-major element
//!   space of the one below (a reshape of a non-contiguous view). Both implement [`View`].
//! - [`LoopPlan`]: the inspectable plan of a copy or materialize ([`plan_materialize`],
//!   [`plan_copy_into`]): boxes of the destination (an interior without mask checks, border
//!   boxes of pad value), each a simplified loop nest with a chosen [`Kernel`]. Its `Display`
//!   is what `shapetrace plan` prints; it runs with [`LoopPlan::run_materialize`] or
//!   [`LoopPlan::run_copy`] any number of times.
//! - The operations: [`materialize`], [`copy`], [`copy_within`] (source and destination in one
//!   buffer), [`fill`], [`map`], [`zip`] (with broadcasting), [`reduce`] and [`reduce_with`],
//!   generic over the plain [`Element`] types.
//! - [`buffer_len`]: the shortest buffer a view can be bound to; [`bench_materialize_f32`]:
//!   times a materialize against `copy_from_slice` of the same bytes.
//! - Interop: [`Layout::from_view`] and [`LayoutStack::from_view_stack`] (also as `TryFrom`)
//!   lower views and view stacks of the `view` crate whose fields are constants; with the
//!   `ndarray` feature, the `nd` module turns ndarray views into operands (`nd::source`,
//!   `nd::destination`, `nd::copy_into`) and results into arrays (`Dense::into_ndarray`).
//!
//! Every view's reachable extent is checked against its buffer once, before the loops; a
//! destination reaching an element twice is rejected. Work above [`PARALLEL_BYTES`] runs on
//! rayon; results never depend on the number of threads.
//!
//! ```
//! use symshape_kernels::{materialize, plan_materialize, Layout, Kernel};
//! let buf: Vec<f32> = (0..12).map(|i| i as f32).collect();
//! // Flip both axes of a 3 x 4 matrix.
//! let flip = Layout::new(&[3, 4], &[-4, -1], 11)?;
//! let plan = plan_materialize::<f32>(&flip)?;
//! assert_eq!(plan.boxes()[0].nest.kernel, Kernel::ReversedCopy);
//! assert_eq!(materialize(&buf, &flip, 0.0)?[..4], [11.0, 10.0, 9.0, 8.0]);
//! # Ok::<(), symshape_kernels::KernelError>(())
//! ```
//!
//! # Dependencies
//!
//! `thiserror` for the error type, `rayon` for the thread pool, `view` for the views the
//! kernels lower from. The optional `ndarray` feature (off by default) adds `ndarray` so that
//! frameworks built on it can run the kernels on their arrays, without a copy for views that
//! fill their memory range (any permutation or flip of a block, broadcasts); nothing else in
//! the crate depends on it.
//!
//! # Unsafe code
//!
//! All `unsafe` code is in the loop executor and the operations' inner rows: raw pointer
//! loops over buffers whose reachable extents were checked once, before the loops (the
//! numbered argument is in the executor's module docs, `src/exec.rs`). The
//! ndarray interop adds none: it borrows an array's memory only through ndarray's own
//! `to_slice_memory_order` (views that fill their memory range) and gathers the elements of
//! views with gaps, because a slice over the gaps could alias another live mutable view.

mod bench;
mod element;
mod error;
mod exec;
mod layout;
mod lower;
#[cfg(feature = "ndarray")]
pub mod nd;
mod ops;
mod plan;
mod reduce;

pub use bench::{bench_materialize_f32, buffer_len, median_ns, BenchFigures};
pub use element::Element;
pub use error::{KernelError, Result};
pub use layout::{Extent, Layout, LayoutStack, View, OVERLAP_CHECK_LIMIT};
pub use ops::{
    broadcast_shapes, copy, copy_within, fill, map, map_into, materialize, materialize_into,
    plan_copy_into, plan_materialize, zip, zip_into, Dense, SMALL_VIEW,
};
pub use plan::{Kernel, LoopPlan, Nest, PlanBox, PARALLEL_BYTES, TILE};
pub use reduce::{reduce, reduce_with, ReduceConfig, ReduceOp};
