//! Integration tests of the kernels crate, through its public API only.

mod adversarial;
mod alloc;
#[cfg(feature = "dlpack")]
mod dlpack;
mod errors;
mod examples;
mod gather;
mod gen;
mod half;
mod hostile;
mod interop;
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
