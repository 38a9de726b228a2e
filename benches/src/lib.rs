//! Shared helpers for the criterion benchmarks in `benches/benches/`, and the workloads of
//! the GPU benchmark (`gpu_workloads`, run by the `symshape-gpu-bench` binary).
//!
//! Dependencies beyond the workspace's crates: `criterion` for the benchmarks, `rayon` for
//! the thread pool the comparison sizes, and `cudarc` (the CUDA driver API and NVRTC,
//! loaded at run time with its `dynamic-loading` feature) for `symshape-gpu-bench`, so that
//! the binary builds on machines without CUDA and is copied to a GPU machine.

#![forbid(unsafe_code)]

pub mod gpu_workloads;

use symshape_view::Op;

/// The ops that build the causal mask of `s` new tokens after `p` cached ones, `[s, p + s]`,
/// from a row of `p + s` elements (true for the positions a token may attend to): pad,
/// reshape, expand, shrink and flip, as the attention example builds it. The kernel
/// table's cliff row and the comparison with NumPy and PyTorch run the same stack.
#[must_use]
pub fn causal_mask_ops(s: i64, p: i64) -> Vec<Op<i64>> {
    let len = p + s;
    vec![
        Op::Pad(vec![(0, s)]),
        Op::Reshape(vec![1, len + s]),
        Op::Expand(vec![s, len + s]),
        Op::Reshape(vec![s * (len + s)]),
        Op::Pad(vec![(0, s)]),
        Op::Reshape(vec![s, len + s + 1]),
        Op::Shrink(vec![(0, s), (0, len)]),
        Op::Flip(vec![0]),
    ]
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
