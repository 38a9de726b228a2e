//! `symshape-compare`: the symshape side of the comparison with NumPy and PyTorch
//! (`benches/compare/compare.py`, `cargo xtask compare`).
//!
//! `symshape-compare list` prints the workloads, one name a line.
//! `symshape-compare run NAME [--threads N] [--runs R] [--gap-us G] [--linger-us L]
//! [--out FILE]` builds the workload's views, fills its source with `0, 1, 2, ...` as `f32` (exact: no buffer has more than 2^24
//! elements), copies it once into a preallocated zeroed destination (writing that buffer, raw
//! little-endian `f32`, to FILE when given, for the driver to compare with NumPy's), copies
//! it again, untimed, for 20 ms (so that the pool's new threads are running on their own
//! CPUs before any timing, as a framework's long-lived pool's are), then times `R` more
//! copies (planning included, as a framework calls `copy`) and prints one line
//! `NAME median_ns=.. min_ns=.. plan_ns=.. run_ns=.. runs=R threads=T bytes=B calls=..
//! handed=.. kept=.. spawned=.. kernels=K`, where `plan_ns` and `run_ns` are the medians of
//! `R` plans alone (`plan_copy_into`) and of `R` runs of one plan (`LoopPlan::run_copy`), the
//! two parts of `copy` (0 for a destination of several views, which has no copy plan), and
//! `calls` to `spawned` count how the `R` timed copies found their helper threads
//! (`helper_counts`). `--gap-us G` sleeps `G` µs before each timed copy
//! (default 0: back to back), as a framework does other work between copies: rayon's idle
//! threads sleep after some tens of µs, the kernels' helpers after lingering `L` µs for the
//! next copy (`--linger-us L`, `set_helper_linger`; default 1000), and a copy that starts
//! later pays for waking them.
//! `symshape-compare plan NAME [--threads N]` prints the workload's plan and how it splits
//! its work on `N` threads (default: the pool's size).
//!
//! `--threads N` builds rayon's global pool, which the kernels run on, with `N` threads
//! (default: rayon's own choice, which honours `RAYON_NUM_THREADS`); `threads=` prints the
//! pool's size.

use std::process::ExitCode;
use std::time::Instant;

use symshape::Scope;
use symshape_kernels::{
    copy, helper_counts, plan_copy_into, plan_materialize, set_helper_linger, ConcreteStack, Input,
    Output,
};
use symshape_view::{Op, View, ViewStack};

/// One workload: a source view over a buffer of `src_len` elements copied through a
/// destination view into a buffer of `dst_len` elements, masked source elements reading `pad`.
struct Workload {
    src: ConcreteStack,
    src_len: usize,
    dst: ConcreteStack,
    dst_len: usize,
    pad: f32,
}

type Res<T> = Result<T, String>;

/// The workloads' names, in the order the driver prints them.
const NAMES: &[&str] = &[
    "contiguous_4096x4096",
    "transpose_4096x4096",
    "permute_256x256x256_021",
    "permute_256x256x256_102",
    "permute_256x256x256_120",
    "permute_256x256x256_201",
    "permute_256x256x256_210",
    "pad_4094_to_4096",
    "every_2nd_column_4096x4096",
    "broadcast_4096x1_to_4096x4096",
    "merge_heads_8x12x512x64",
    "kv_cache_write_8x512x768",
    "im2col_pad3_8x768x512x4",
    "causal_mask_s512_p128",
];

/// `ops` applied in turn to a row-major view of `shape`, bound to integers.
fn stack(shape: &[i64], ops: &[Op<i64>]) -> Res<ConcreteStack> {
    let cx = Scope::new();
    let mut s = ViewStack::new(View::contiguous(shape).map_err(|e| e.to_string())?);
    for op in ops {
        s = s.apply_dim(&cx, op).map_err(|e| e.to_string())?;
    }
    s.to_concrete("symshape-compare").map_err(|e| e.to_string())
}

fn numel(shape: &[i64]) -> usize {
    shape.iter().product::<i64>().try_into().unwrap_or(0)
}

/// A materialization of `ops` over a row-major source of `shape` into a row-major buffer.
fn materialize(shape: &[i64], ops: &[Op<i64>], pad: f32) -> Res<Workload> {
    let src = stack(shape, ops)?;
    let out: Vec<i64> = src.shape().to_vec();
    Ok(Workload {
        src_len: numel(shape),
        dst_len: numel(&out),
        dst: stack(&out, &[])?,
        src,
        pad,
    })
}

fn workload(name: &str) -> Res<Workload> {
    const N: i64 = 4096;
    let cube = [256i64; 3];
    let perm = |p: [usize; 3]| materialize(&cube, &[Op::Permute(p.to_vec())], 0.0);
    match name {
        "contiguous_4096x4096" => materialize(&[N, N], &[], 0.0),
        "transpose_4096x4096" => materialize(&[N, N], &[Op::Permute(vec![1, 0])], 0.0),
        "permute_256x256x256_021" => perm([0, 2, 1]),
        "permute_256x256x256_102" => perm([1, 0, 2]),
        "permute_256x256x256_120" => perm([1, 2, 0]),
        "permute_256x256x256_201" => perm([2, 0, 1]),
        "permute_256x256x256_210" => perm([2, 1, 0]),
        "pad_4094_to_4096" => materialize(&[N - 2, N - 2], &[Op::Pad(vec![(1, 1), (1, 1)])], 0.0),
        // a[:, ::2]: [4096, 4096] read as [4096, 2048, 2], the last index fixed at 0.
        "every_2nd_column_4096x4096" => materialize(
            &[N, N],
            &[
                Op::Reshape(vec![N, N / 2, 2]),
                Op::Shrink(vec![(0, N), (0, N / 2), (0, 1)]),
                Op::Reshape(vec![N, N / 2]),
            ],
            0.0,
        ),
        "broadcast_4096x1_to_4096x4096" => materialize(&[N, 1], &[Op::Expand(vec![N, N])], 0.0),
        // [8, 12, 512, 64] heads permuted to [8, 512, 12, 64] and read as [8, 512, 768].
        "merge_heads_8x12x512x64" => materialize(
            &[8, 12, 512, 64],
            &[
                Op::Permute(vec![0, 2, 1, 3]),
                Op::Reshape(vec![8, 512, 768]),
            ],
            0.0,
        ),
        // [8, 512, 768] written into a head-major cache [8, 12, 512, 64] through the
        // merged-heads stack: the cache permuted to [8, 512, 12, 64], read as [8, 512, 768].
        "kv_cache_write_8x512x768" => {
            let cache = [8i64, 12, 512, 64];
            let x = [8i64, 512, 768];
            Ok(Workload {
                src: stack(&x, &[])?,
                src_len: numel(&x),
                dst: stack(
                    &cache,
                    &[
                        Op::Permute(vec![0, 2, 1, 3]),
                        Op::Reshape(vec![8, 512, 768]),
                    ],
                )?,
                dst_len: numel(&cache),
                pad: 0.0,
            })
        }
        // A causal conv1d's windows: x [8, 512, 768] channels first, 3 zeros before the first
        // token, windows of 4: [8, 768, 512, 4].
        "im2col_pad3_8x768x512x4" => materialize(&[8, 512, 768], &benches::im2col_pad3_ops(), 0.0),
        // The causal mask of s = 512 new tokens after p = 128 cached ones, [512, 640]: element
        // (i, j) reads position s - 1 - i + j of the buffer when j <= p + i, else minus
        // infinity (pad, reshape, shrink and flip, as in the attention example).
        "causal_mask_s512_p128" => {
            let (s, len) = (512i64, 640i64);
            materialize(
                &[len],
                &benches::causal_mask_ops(s, len - s),
                f32::NEG_INFINITY,
            )
        }
        other => Err(format!(
            "unknown workload `{other}`; `symshape-compare list` prints them"
        )),
    }
}

/// The distinct kernels of the materialize plan of `w`, `+`-separated (`table` for an offset
/// table), or `-` when the destination is not one row-major view (no such plan).
fn kernels(w: &Workload) -> String {
    if w.dst.levels().len() > 1 {
        return "-".to_string();
    }
    let Ok(plan) = plan_materialize::<f32>(&w.src) else {
        return "-".to_string();
    };
    benches::kernels_of(&plan)
}

/// How long `run` copies, untimed, after its checked copy and before its timed ones.
const WARM_UP: std::time::Duration = std::time::Duration::from_millis(20);

/// Options of `run`.
struct RunArgs {
    name: String,
    threads: Option<usize>,
    runs: usize,
    /// Microseconds slept before each timed copy.
    gap_us: u64,
    /// Microseconds the pool's helpers linger for the next copy (`set_helper_linger`).
    linger_us: Option<u64>,
    out: Option<String>,
}

fn parse_run(args: &[String]) -> Res<RunArgs> {
    let mut it = args.iter();
    let name = it.next().ok_or("run: missing workload name")?.clone();
    let mut res = RunArgs {
        name,
        threads: None,
        runs: 11,
        gap_us: 0,
        linger_us: None,
        out: None,
    };
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("run: `{flag}` needs a value"))?;
        let whole = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("run: `{flag}` takes a whole number, not `{value}`"))
        };
        let count = || {
            value
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("run: `{flag}` takes a positive integer, not `{value}`"))
        };
        match flag.as_str() {
            "--threads" => res.threads = Some(count()?),
            "--runs" => res.runs = count()?,
            "--gap-us" => res.gap_us = whole()?,
            "--linger-us" => res.linger_us = Some(whole()?),
            "--out" => res.out = Some(value.clone()),
            other => return Err(format!("run: unknown option `{other}`")),
        }
    }
    Ok(res)
}

fn run(args: &RunArgs) -> Res<()> {
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| format!("run: cannot start {n} threads: {e}"))?;
    }
    if let Some(us) = args.linger_us {
        set_helper_linger(std::time::Duration::from_micros(us));
    }
    let w = workload(&args.name)?;
    let src: Vec<f32> = (0..w.src_len).map(|i| i as f32).collect();
    // The destination starts on a cache line, as PyTorch's allocator places `out` and the
    // driver places NumPy's; the source is a plain `Vec`, 16 bytes past a line when large,
    // as NumPy's arrays (PyTorch's sources here) are.
    let mut dst_buf = vec![0f32; w.dst_len + 15];
    let lead = dst_buf.as_ptr().align_offset(64);
    let dst = &mut dst_buf[lead..lead + w.dst_len];
    let once = |dst: &mut [f32]| {
        copy(
            Input::new(&src, &w.src).pad(w.pad),
            Output::new(dst, &w.dst),
        )
        .map_err(|e| format!("{}: {e}", args.name))
    };
    once(dst)?;
    if let Some(path) = &args.out {
        let bytes: Vec<u8> = dst.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(path, bytes).map_err(|e| format!("run: cannot write `{path}`: {e}"))?;
    }
    // Untimed copies for WARM_UP first: the pool's threads are new in this process, and in
    // some processes the helper did not start during the first 22 copies (the causal mask
    // on two threads of an AMD EPYC family 26: the caller ran them all, 17 µs each). Over
    // 30 processes each, the median of 21 copies was 9.25 µs without the warm-up and 8.9
    // with it, and 2 processes against none were slower than 12 µs. NumPy's and PyTorch's
    // threads are warm from the driver's earlier runs.
    let warm = Instant::now();
    while warm.elapsed() < WARM_UP {
        once(dst)?;
    }
    let mut times = Vec::with_capacity(args.runs);
    let before = helper_counts();
    for _ in 0..args.runs {
        if args.gap_us > 0 {
            std::thread::sleep(std::time::Duration::from_micros(args.gap_us));
        }
        let t = Instant::now();
        once(dst)?;
        times.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    let after = helper_counts();
    times.sort_unstable();
    let (plan_ns, run_ns) = split_times(&w, &src, dst, args.runs)?;
    println!(
        "{} median_ns={} min_ns={} plan_ns={plan_ns} run_ns={run_ns} runs={} threads={} bytes={} \
         calls={} handed={} kept={} spawned={} kernels={}",
        args.name,
        times[times.len() / 2],
        times[0],
        args.runs,
        rayon::current_num_threads(),
        w.dst.numel().saturating_mul(4),
        after.calls - before.calls,
        after.handed - before.handed,
        after.kept - before.kept,
        after.spawned - before.spawned,
        kernels(&w)
    );
    Ok(())
}

/// The medians of `runs` plans of `w` alone and of `runs` runs of one plan (0 and 0 for a
/// destination of several views, which has no copy plan).
fn split_times(w: &Workload, src: &[f32], dst: &mut [f32], runs: usize) -> Res<(u64, u64)> {
    let [d] = w.dst.levels() else {
        return Ok((0, 0));
    };
    let median = |mut t: Vec<u64>| {
        t.sort_unstable();
        t[t.len() / 2]
    };
    let ns = |t: Instant| u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let mut plans = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let plan = plan_copy_into::<f32>(&w.src, d).map_err(|e| e.to_string())?;
        plans.push(ns(t));
        drop(plan);
    }
    let plan = plan_copy_into::<f32>(&w.src, d).map_err(|e| e.to_string())?;
    let mut execs = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        plan.run_copy(src, dst, w.pad).map_err(|e| e.to_string())?;
        execs.push(ns(t));
    }
    Ok((median(plans), median(execs)))
}

/// `plan NAME [--threads N]`: the workload's copy plan and its split on `N` threads.
fn show_plan(args: &[String]) -> Res<()> {
    let name = args.first().ok_or("plan: missing workload name")?;
    let threads = match args.get(1..) {
        Some([flag, n]) if flag == "--threads" => n
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("plan: `--threads` takes a positive integer, not `{n}`"))?,
        Some([]) | None => rayon::current_num_threads(),
        Some(_) => return Err("plan: expected `NAME [--threads N]`".to_string()),
    };
    let w = workload(name)?;
    let [d] = w.dst.levels() else {
        return Err(format!(
            "plan: `{name}` writes a destination of several views"
        ));
    };
    let plan = plan_copy_into::<f32>(&w.src, d).map_err(|e| e.to_string())?;
    print!("{plan}{}", plan.partition(threads));
    Ok(())
}

const HELP: &str = "\
usage: symshape-compare list
       symshape-compare run NAME [--threads N] [--runs R] [--gap-us G] [--linger-us L] [--out FILE]
       symshape-compare plan NAME [--threads N]
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let res = match args.first().map(String::as_str) {
        Some("list") => {
            for name in NAMES {
                println!("{name}");
            }
            Ok(())
        }
        Some("run") => parse_run(&args[1..]).and_then(|a| run(&a)),
        Some("plan") => show_plan(&args[1..]),
        Some("-h" | "--help" | "help") => {
            print!("{HELP}");
            Ok(())
        }
        _ => Err(format!("expected `list`, `run` or `plan`\n{HELP}")),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("symshape-compare: {msg}");
            ExitCode::FAILURE
        }
    }
}
