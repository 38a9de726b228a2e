//! Shared helpers for the criterion benchmarks in `benches/benches/`, and the workloads of
//! the GPU benchmark (`gpu_workloads`, run by the `symshape-gpu-bench` binary).
//!
//! Dependencies beyond the workspace's crates: `criterion` for the benchmarks, `rayon` for
//! the thread pool the comparison sizes, and `cudarc` (the CUDA driver API and NVRTC,
//! loaded at run time with its `dynamic-loading` feature) for `symshape-gpu-bench`, so that
//! the binary builds on machines without CUDA and is copied to a GPU machine.

#![forbid(unsafe_code)]

pub mod gpu_workloads;
mod shared_views;

pub use shared_views::{causal_mask_ops, padded_rank4, rank4_pad};

use symshape_view::Op;

/// The ops of a causal conv1d's windows over `[8, 512, 768]`: channels first, 3 zeros before
/// the first token, windows of 4 (`[8, 768, 512, 4]`); the kernel table's im2col row and the
/// comparison run the same stack.
#[must_use]
pub fn im2col_pad3_ops() -> Vec<Op<i64>> {
    vec![
        Op::Permute(vec![0, 2, 1]),
        Op::Pad(vec![(0, 0), (0, 0), (3, 0)]),
        Op::Unfold {
            axis: 2,
            size: 4,
            step: 1,
        },
    ]
}

/// Runs `benches` under criterion in a short configuration (10 samples, 0.3 s warm-up, 1 s
/// of measurement, then the command line's options), then prints the summary: the table
/// benchmarks' criterion half.
pub fn quick_criterion(benches: impl FnOnce(&mut criterion::Criterion)) {
    let mut c = criterion::Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    benches(&mut c);
    c.final_summary();
}

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
