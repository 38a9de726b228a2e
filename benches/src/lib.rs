//! Shared helpers for the criterion benchmarks in `benches/benches/`, and the workloads of
//! the GPU benchmark (`gpu_workloads`, run by the `symshape-gpu-bench` binary).
//!
//! Dependencies beyond the workspace's crates: `criterion` for the benchmarks, `rayon` for
//! the thread pool the comparison sizes, and `cudarc` (the CUDA driver API and NVRTC,
//! loaded at run time with its `dynamic-loading` feature) for `symshape-gpu-bench`, so that
//! the binary builds on machines without CUDA and is copied to a GPU machine.

#![forbid(unsafe_code)]

pub mod gpu_workloads;

/// The distinct kernels of a plan's boxes, in order, `+`-separated (`table` for an
/// offset-table gather).
#[must_use]
pub fn kernels_of(plan: &symshape_kernels::LoopPlan<'_>) -> String {
    let mut names: Vec<String> = Vec::new();
    for b in plan.boxes() {
        let name = match b.nest.kernel {
            symshape_kernels::Kernel::OffsetTable => "table".to_string(),
            k => k.to_string().replace(' ', "_"),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join("+")
}
