//! Timing a materialize against `copy_from_slice` of the same bytes, for the `bench` statement.

use std::time::Instant;

use symshape_kernels::{filled_vec, plan_materialize, ConcreteStack, Element};

/// Figures of one timing: median time of the materialize, bytes written, throughput and the
/// ratio to a single-threaded `copy_from_slice` of the same number of bytes timed in the same call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchFigures {
    /// Median time of one materialize, in nanoseconds.
    pub median_ns: u64,
    /// Bytes of output.
    pub bytes: usize,
    /// Output gigabytes per second.
    pub gbps: f64,
    /// Median time of the materialize over median time of the copy.
    pub memcpy_ratio: f64,
}

impl std::fmt::Display for BenchFigures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bench: median_ns={} bytes={} gbps={:.2} memcpy_ratio={:.2}",
            self.median_ns, self.bytes, self.gbps, self.memcpy_ratio
        )
    }
}

/// Length of the shortest buffer `stack` can read, for statement `stmt`: one past its
/// highest reachable offset (0 when it reaches nothing).
///
/// # Errors
/// A message when the view reaches a negative offset, which no buffer holds.
pub fn buffer_len(stmt: &str, stack: &ConcreteStack) -> Result<usize, String> {
    match stack.levels()[0].extent() {
        Some((lo, hi)) if lo < 0 => Err(format!(
            "{stmt}: the view reads offsets {lo}..={hi}, and no buffer has elements below offset 0; give the view an offset that keeps every element at 0 or above"
        )),
        Some((_, hi)) => usize::try_from(hi)
            .ok()
            .and_then(|h| h.checked_add(1))
            .ok_or_else(|| format!("{stmt}: the view reads up to offset {hi}, beyond this machine's memory")),
        None => Ok(0),
    }
}

/// The buffer `stack` reads, holding `0, 1, 2, ...` up to its highest reachable offset,
/// reserved fallibly within the kernels' allocation limit.
///
/// # Errors
/// As [`buffer_len`], and a message naming `stmt` when the buffer exceeds the limit.
pub fn counting_buffer<T: symshape_kernels::Element>(
    stmt: &'static str,
    stack: &ConcreteStack,
    from_index: impl Fn(usize) -> T,
) -> Result<Vec<T>, String> {
    let len = buffer_len(stmt, stack)?;
    let mut buf = filled_vec(stmt, len, from_index(0)).map_err(|e| {
        format!(
            "{e}; the view reads up to offset {}, so the source buffer needs {len} elements",
            len.saturating_sub(1)
        )
    })?;
    for (i, x) in buf.iter_mut().enumerate() {
        *x = from_index(i);
    }
    Ok(buf)
}

/// Median of `runs` timings of `f`, in nanoseconds (at least 1).
fn median_ns(runs: usize, mut f: impl FnMut()) -> u64 {
    let mut times: Vec<u64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            u64::try_from(t.elapsed().as_nanos())
                .unwrap_or(u64::MAX)
                .max(1)
        })
        .collect();
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or(1)
}

/// Times materializing `view` over an `f32` buffer holding 0, 1, 2, ... (as long as the view
/// needs), `runs` times, as [`bench_materialize`] does.
///
/// # Errors
/// As [`bench_materialize`].
pub fn bench_materialize_f32(view: &ConcreteStack, runs: usize) -> Result<BenchFigures, String> {
    bench_materialize(view, runs, |i| i as f32)
}

/// Times materializing `view` over a buffer of `T` holding `from_index(0), from_index(1), ...`
/// (as long as the view needs), `runs` times, and a `copy_from_slice` of the same output bytes
/// as many times, alternating the two so that both see the same machine load. The output
/// buffer is allocated once, outside the timings, for both.
///
/// # Errors
/// A message when the plan cannot be made, a buffer exceeds the allocation limit or a run fails.
pub fn bench_materialize<T: Element>(
    view: &ConcreteStack,
    runs: usize,
    from_index: impl Fn(usize) -> T,
) -> Result<BenchFigures, String> {
    let plan = plan_materialize::<T>(view).map_err(|e| e.to_string())?;
    let buf = counting_buffer("bench", view, &from_index)?;
    let n = usize::try_from(plan.dst().numel()).unwrap_or(0);
    let mut out = filled_vec("bench", n, T::ZERO).map_err(|e| e.to_string())?;
    let mut copy_src = filled_vec("bench", n, T::ZERO).map_err(|e| e.to_string())?;
    for (i, x) in copy_src.iter_mut().enumerate() {
        *x = from_index(i);
    }
    plan.run_materialize(&buf, &mut out, T::ZERO)
        .map_err(|e| e.to_string())?;
    let mut t_op = Vec::with_capacity(runs);
    let mut t_copy = Vec::with_capacity(runs);
    let mut err = None;
    for _ in 0..runs.max(1) {
        t_op.push(median_ns(1, || {
            if let Err(e) = plan.run_materialize(&buf, &mut out, T::ZERO) {
                err = Some(e);
            }
        }));
        t_copy.push(median_ns(1, || out.copy_from_slice(&copy_src)));
    }
    if let Some(e) = err {
        return Err(e.to_string());
    }
    t_op.sort_unstable();
    t_copy.sort_unstable();
    let op = t_op.get(t_op.len() / 2).copied().unwrap_or(1);
    let copy = t_copy.get(t_copy.len() / 2).copied().unwrap_or(1);
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    Ok(BenchFigures {
        median_ns: op,
        bytes,
        gbps: bytes as f64 / op as f64,
        memcpy_ratio: op as f64 / copy as f64,
    })
}
