//! Integration tests of symshape-codegen: emitted C compiled and run against the kernels,
//! OpenCL kernels run on an OpenCL platform (POCL in CI), and snapshots of plans and sources.

mod compiled;
mod copies;
mod cuda_emu;
mod elementwise;
mod gpu;
mod gpu_kernels;
mod harness;
mod opencl;
// Shared with the GPU benchmark binary, which lives in the benches crate.
#[path = "../../../../benches/src/opencl_host.rs"]
mod opencl_host;
mod snapshots;
