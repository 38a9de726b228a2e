//! Integration tests of the kernels crate, through its public API only.

mod adversarial;
mod alloc;
mod chains;
#[cfg(feature = "dlpack")]
mod dlpack;
mod errors;
mod examples;
mod gather;
mod gen;
mod half;
mod hostile;
mod interop;
// The naive index table of view ops, shared with the view crate's tests and the `chain`
// fuzz target; these tests use part of it.
#[allow(dead_code)]
#[path = "../../../symshape-view/tests/it/model.rs"]
mod model;
#[cfg(feature = "ndarray")]
mod nd;
mod plans;
mod pool;
mod props;
mod reference;
// The views the benchmarks time, shared with the benches crate.
#[path = "../../../../benches/src/shared_views.rs"]
mod shared_views;
mod units;

/// Counts allocations per thread for the `alloc` tests; otherwise the system allocator.
#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;
