//! Kernel benchmarks: a ratio table against `copy_from_slice` measured in the same run, then
//! criterion benchmarks `kernels/<workload>/<shape>`.
//!
//! `cargo bench -p benches --bench kernels` prints the table and runs criterion; set
//! `KERNELS_BENCH=table` to print the table only, and `KERNELS_BENCH_FILTER=<text>` to time only
//! the table rows whose name contains the text, `KERNELS_BENCH_PLANS=1` to print the plan of
//! each copy before timing it, and `KERNELS_BENCH_RUNS=<n>` to time each row and its baseline
//! `n` times (9 by default) before taking the medians.

use criterion::{black_box, Criterion};
use std::time::Duration;
use symshape::Scope;
use symshape_kernels::{
    advise_huge_pages, bf16, copy, f16, plan_materialize, reduce, simd_kernels, simd_path,
    zip_into, ConcreteStack, ConcreteView, Element, Input, Output, ReduceConfig, ReduceOp,
};
use symshape_view::{Op, View, ViewOps, ViewStack};

fn view(shape: &[i64], strides: &[i64], offset: i64) -> ConcreteView {
    ConcreteView::create(shape, Some(strides), offset, None).expect("view")
}

fn contiguous(shape: &[i64]) -> ConcreteView {
    ConcreteView::contiguous(shape).expect("view")
}

/// The operation of a workload, run once per call, owning its buffers.
type Run = Box<dyn FnMut()>;

/// A timed workload. `setup` allocates its buffers and returns the operation and the kernels
/// its plan chose (empty when not a copy), so that filtered-out workloads allocate nothing.
struct Workload {
    group: &'static str,
    name: String,
    target: f64,
    /// Bytes the baseline copies (output bytes, input bytes for reductions).
    bytes: usize,
    setup: Box<dyn FnOnce() -> (Run, String)>,
}

fn ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 1024) as f32).collect()
}

/// `0, 1, .., 250, 0, 1, ..` as elements of type `T`.
fn ramp_of<T: Element + From<u8>>(n: usize) -> Vec<T> {
    (0..n).map(|i| T::from((i % 251) as u8)).collect()
}

fn materialize_workload<T: Element + From<u8>>(
    group: &'static str,
    name: String,
    target: f64,
    buf_len: usize,
    view: ConcreteStack,
) -> Workload {
    placed_workload::<T>(group, name, target, buf_len, view, Placement::Malloc)
}

/// Where the buffers of a materialization are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Where the allocator puts them: 16 bytes past a cache line, for `malloc` on Linux
    /// x86-64.
    Malloc,
    /// Both start on a cache line, as a 64-byte-aligned framework allocator places them.
    Lines,
    /// As `Malloc`, both advised for transparent huge pages before they are written
    /// (`advise_huge_pages`).
    Huge,
}

/// A materialization into a preallocated buffer, its buffers placed by `place`.
fn placed_workload<T: Element + From<u8>>(
    group: &'static str,
    name: String,
    target: f64,
    buf_len: usize,
    view: ConcreteStack,
    place: Placement,
) -> Workload {
    let n = view.numel() as usize;
    Workload {
        group,
        name,
        target,
        bytes: n * std::mem::size_of::<T>(),
        setup: Box::new(move || {
            let spare = if place == Placement::Lines { 64 } else { 0 };
            let mut buf: Vec<T> = Vec::with_capacity(buf_len + spare);
            let mut out: Vec<T> = Vec::with_capacity(n + spare);
            if place == Placement::Huge {
                // `false` where the system has no transparent huge pages: the row then
                // measures base pages, as the header's `huge pages` line says.
                let _ = advise_huge_pages(buf.spare_capacity_mut());
                let _ = advise_huge_pages(out.spare_capacity_mut());
            }
            buf.extend(ramp_of::<T>(buf_len + spare));
            out.resize(n + spare, T::ZERO);
            let at = |p: *const T| if spare > 0 { p.align_offset(64) } else { 0 };
            let (b0, o0) = (at(buf.as_ptr()), at(out.as_ptr()));
            buf.copy_within(0..buf_len, b0);
            let dst = contiguous(view.shape());
            let plan = plan_materialize::<T>(&view).expect("plan");
            if std::env::var_os("KERNELS_BENCH_PLANS").is_some() {
                print!("{plan}");
            }
            let path = benches::kernels_of(&plan);
            drop(plan);
            let run: Run = Box::new(move || {
                let (src, out) = (&buf[b0..b0 + buf_len], &mut out[o0..o0 + n]);
                copy(Input::new(src, &view), Output::new(out, &dst)).expect("materialize")
            });
            (run, path)
        }),
    }
}

const N: usize = 4096;

fn one(v: ConcreteView) -> ConcreteStack {
    ConcreteStack::from(v)
}

/// The 4096 x 4096 transpose and every 256^3 permutation of elements of type `T`, named with
/// `suffix` (empty for `f32`).
fn permutes<T: Element + From<u8>>(res: &mut Vec<Workload>, suffix: &str, target: f64) {
    let cx = Scope::new();
    let n = N as i64;
    res.push(materialize_workload::<T>(
        "transpose",
        format!("{N}x{N}{suffix}"),
        target,
        N * N,
        one(contiguous(&[n, n]).permute(&cx, &[1, 0]).expect("perm")),
    ));
    let c3 = contiguous(&[256, 256, 256]);
    for perm in [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
        let name = format!("256x256x256/{}{}{}{suffix}", perm[0], perm[1], perm[2]);
        res.push(materialize_workload::<T>(
            "permute",
            name,
            target,
            1 << 24,
            one(c3.permute(&cx, &perm).expect("perm")),
        ));
    }
}

fn workloads() -> Vec<Workload> {
    let cx = Scope::new();
    let n = N as i64;
    let mut res = Vec::new();
    let c2 = contiguous(&[n, n]);
    res.push(materialize_workload::<f32>(
        "contiguous",
        format!("{N}x{N}"),
        0.8,
        N * N,
        one(c2.clone()),
    ));
    // f16 and bf16 move as 2-byte elements: the kernels of u16, against a memcpy of the
    // same (half as many) bytes.
    res.push(materialize_workload::<f16>(
        "contiguous",
        format!("{N}x{N}/f16"),
        0.8,
        N * N,
        one(c2.clone()),
    ));
    // Transposes and 3-D permutations for every element size: 1.5 for 4- and 8-byte
    // elements, 2.0 for 1- and 2-byte ones.
    permutes::<f32>(&mut res, "", 1.5);
    permutes::<f64>(&mut res, "/f64", 1.5);
    permutes::<u16>(&mut res, "/u16", 2.0);
    permutes::<f16>(&mut res, "/f16", 2.0);
    permutes::<u8>(&mut res, "/u8", 2.0);
    res.push(materialize_workload::<bf16>(
        "transpose",
        format!("{N}x{N}/bf16"),
        2.0,
        N * N,
        one(contiguous(&[n, n]).permute(&cx, &[1, 0]).expect("perm")),
    ));
    // Both buffers on cache lines, where the tiles of the wider elements must not start.
    for (suffix, target) in [("", 1.5), ("/f64", 1.5), ("/u16", 2.0), ("/u8", 2.0)] {
        let placed = |name: String, shape: &[i64], perm: &[usize]| {
            let view = one(contiguous(shape).permute(&cx, perm).expect("perm"));
            let len = shape.iter().product::<i64>() as usize;
            match suffix {
                "" => placed_workload::<f32>("lines", name, target, len, view, Placement::Lines),
                "/f64" => {
                    placed_workload::<f64>("lines", name, target, len, view, Placement::Lines)
                }
                "/u16" => {
                    placed_workload::<u16>("lines", name, target, len, view, Placement::Lines)
                }
                _ => placed_workload::<u8>("lines", name, target, len, view, Placement::Lines),
            }
        };
        res.push(placed(
            format!("transpose/{N}x{N}{suffix}"),
            &[n, n],
            &[1, 0],
        ));
        res.push(placed(
            format!("201/256x256x256{suffix}"),
            &[256; 3],
            &[2, 0, 1],
        ));
    }
    // The 1-byte copies whose rows lie farthest apart, with both buffers on huge pages.
    let huge = |name: String, shape: &[i64], perm: &[usize]| {
        let view = one(contiguous(shape).permute(&cx, perm).expect("perm"));
        let len = shape.iter().product::<i64>() as usize;
        placed_workload::<u8>("huge", name, 2.0, len, view, Placement::Huge)
    };
    res.push(huge(format!("transpose/{N}x{N}/u8"), &[n, n], &[1, 0]));
    for perm in [[1, 2, 0], [2, 0, 1], [2, 1, 0]] {
        let name = format!("256x256x256/{}{}{}/u8", perm[0], perm[1], perm[2]);
        res.push(huge(name, &[256; 3], &perm));
    }
    let flip = view(&[n, n], &[-n, -1], n * n - 1);
    res.push(materialize_workload::<f32>(
        "flip",
        format!("{N}x{N}"),
        1.0,
        N * N,
        one(flip),
    ));
    let m = n - 2;
    let pad = ConcreteView::create(
        &[n, n],
        Some(&[m, 1]),
        -m - 1,
        Some(&[(1, n - 1), (1, n - 1)]),
    )
    .expect("view");
    res.push(materialize_workload::<f32>(
        "pad",
        format!("{m}x{m}"),
        1.0,
        (m * m) as usize,
        one(pad),
    ));
    let every2 = view(&[n, n / 2], &[n, 2], 0);
    res.push(materialize_workload::<f32>(
        "step2",
        format!("{N}x{N}"),
        1.2,
        N * N,
        one(every2),
    ));
    // Merging attention heads: [8, 12, 512, 64] permuted to [8, 512, 12, 64], read as
    // [8, 512, 768]: a row-major reshape of a permute, two views.
    let heads = symshape_view::ViewStack::new(
        symshape_view::View::contiguous(&[8, 12, 512, 64]).expect("view"),
    )
    .permute(&cx, &[0, 2, 1, 3])
    .and_then(|s| s.reshape(&cx, &[8i64, 512, 768]))
    .and_then(|s| s.to_concrete("bench"))
    .expect("stack");
    res.push(materialize_workload::<f32>(
        "merge_heads",
        "8x12x512x64".to_string(),
        1.5,
        8 * 12 * 512 * 64,
        heads,
    ));
    // Splitting them again: [8, 512, 768] read as [8, 512, 12, 64], permuted to
    // [8, 12, 512, 64].
    let split = symshape_view::ViewStack::new(
        symshape_view::View::contiguous(&[8, 512, 768]).expect("view"),
    )
    .reshape(&cx, &[8i64, 512, 12, 64])
    .and_then(|s| s.permute(&cx, &[0, 2, 1, 3]))
    .and_then(|s| s.to_concrete("bench"))
    .expect("stack");
    res.push(materialize_workload::<f32>(
        "split_heads",
        "8x512x768".to_string(),
        1.5,
        8 * 512 * 768,
        split,
    ));
    // im2col of a conv1d with kernel 3 and "same" padding: x [8, 256, 1024] padded by one on
    // the last axis, windows of 3 unfolded, permuted to [8, 1024, 256, 3] and read as the
    // [8192, 768] matrix a matrix product takes.
    let im2col = symshape_view::ViewStack::new(
        symshape_view::View::contiguous(&[8, 256, 1024]).expect("view"),
    )
    .pad(&cx, &[(0i64, 0i64), (0, 0), (1, 1)])
    .and_then(|s| s.unfold(&cx, 2, 3i64, 1i64))
    .and_then(|s| s.permute(&cx, &[0, 2, 1, 3]))
    .and_then(|s| s.reshape(&cx, &[8i64 * 1024, 256 * 3]))
    .and_then(|s| s.to_concrete("bench"))
    .expect("stack");
    res.push(materialize_workload::<f32>(
        "im2col",
        "8x256x1024/k3".to_string(),
        1.5,
        8 * 256 * 1024,
        im2col,
    ));
    cliffs(&mut res);
    res.push(Workload {
        group: "broadcast_add",
        name: format!("{N}x1+1x{N}"),
        target: 0.7,
        bytes: N * N * 4,
        setup: Box::new(move || {
            let (a, b) = (ramp(N), ramp(N));
            let (la, lb) = (contiguous(&[n, 1]), contiguous(&[1, n]));
            let mut out = vec![0f32; N * N];
            let lo = contiguous(&[n, n]);
            let run: Run = Box::new(move || {
                zip_into(
                    Input::new(&a, &la),
                    Input::new(&b, &lb),
                    Output::new(&mut out, &lo),
                    |x, y| x + y,
                )
                .expect("zip");
            });
            (run, String::new())
        }),
    });
    // Every second column of a [4096, 8192] buffer: the strided sums (first axis: rows of
    // strided elements; last axis: strided runs).
    let cols2 = view(&[n, n], &[2 * n, 2], 0);
    for (axis, label) in [(1usize, "last/step2"), (0, "first/step2")] {
        res.push(sum_workload::<f32>(
            &cols2,
            axis,
            format!("{N}x{N}/{label}"),
            1.5,
        ));
        res.push(sum_workload::<f16>(
            &cols2,
            axis,
            format!("{N}x{N}/{label}/f16"),
            1.5,
        ));
    }
    for (axis, label) in [(1usize, "last"), (0, "first")] {
        res.push(sum_workload::<f32>(
            &c2,
            axis,
            format!("{N}x{N}/{label}"),
            0.8,
        ));
        // Accumulated in f32: the same arithmetic on half the bytes read.
        res.push(sum_workload::<f16>(
            &c2,
            axis,
            format!("{N}x{N}/{label}/f16"),
            1.5,
        ));
        res.push(sum_workload::<bf16>(
            &c2,
            axis,
            format!("{N}x{N}/{label}/bf16"),
            1.5,
        ));
    }
    res
}

/// `ops` applied in turn to a row-major view of `shape`, bound to integers.
fn ops_stack(shape: &[i64], ops: &[Op<i64>]) -> ConcreteStack {
    let cx = Scope::new();
    let mut s = ViewStack::new(View::contiguous(shape).expect("view"));
    for op in ops {
        s = s.apply_dim(&cx, op).expect("op");
    }
    s.to_concrete("bench").expect("stack")
}

/// The views a framework once found to fall back to an offset table, each against a copy of
/// the same bytes (target: at most twice as long).
fn cliffs(res: &mut Vec<Workload>) {
    // [8, 512, 768] written into a head-major cache [8, 12, 512, 64] through the
    // merged-heads stack: the cache permuted to [8, 512, 12, 64], read as [8, 512, 768].
    let (x, cache) = ([8i64, 512, 768], [8i64, 12, 512, 64]);
    let n = 8 * 512 * 768;
    res.push(Workload {
        group: "cliff",
        name: "kv_cache_write/8x512x768".to_string(),
        target: 2.0,
        bytes: n * 4,
        setup: Box::new(move || {
            let src = ramp(n);
            let mut out = vec![0f32; n];
            let sv = ops_stack(&x, &[]);
            let dv = ops_stack(
                &cache,
                &[Op::Permute(vec![0, 2, 1, 3]), Op::Reshape(x.to_vec())],
            );
            let run: Run = Box::new(move || {
                copy(Input::new(&src, &sv), Output::new(&mut out, &dv)).expect("copy")
            });
            (run, "two-level destination".to_string())
        }),
    });
    // A causal conv1d's windows: x [8, 512, 768] channels first, 3 zeros before the first
    // token, windows of 4: [8, 768, 512, 4].
    let im2col = ops_stack(&x, &benches::im2col_pad3_ops());
    res.push(materialize_workload::<f32>(
        "cliff",
        "im2col_pad3/8x768x512x4".to_string(),
        2.0,
        n,
        im2col,
    ));
    // The causal mask of s = 512 new tokens after p = 128 cached ones, [512, 640], built
    // from pad, reshape, expand, shrink and flip (as the attention example builds it).
    let (s, len) = (512i64, 640i64);
    let mask = ops_stack(&[len], &benches::causal_mask_ops(s, len - s));
    res.push(materialize_workload::<f32>(
        "cliff",
        "causal_mask/512x640".to_string(),
        2.0,
        len as usize,
        mask,
    ));
}

/// The sum of `l` (over a buffer that ends at its last element) over `axis`, elements of
/// type `T`; the baseline copies the bytes of the elements summed.
fn sum_workload<T: Element + From<u8>>(
    l: &ConcreteView,
    axis: usize,
    name: String,
    target: f64,
) -> Workload {
    let l = l.clone();
    let n = l.numel() as usize;
    let len = l.extent().map_or(0, |(_, hi)| hi as usize + 1);
    Workload {
        group: "sum",
        name,
        target,
        bytes: n * std::mem::size_of::<T>(),
        setup: Box::new(move || {
            let buf = ramp_of::<T>(len);
            let run: Run = Box::new(move || {
                black_box(
                    reduce(
                        Input::new(&buf, &l),
                        &[axis],
                        ReduceOp::Sum,
                        ReduceConfig::default(),
                    )
                    .expect("reduce"),
                );
            });
            (run, String::new())
        }),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Times `run` and a `copy_from_slice` of `bytes`, alternating, `runs` times each.
fn ratio(run: &mut Run, bytes: usize, runs: usize) -> (Duration, Duration) {
    let n = bytes / 4;
    let src = ramp(n);
    let mut dst = vec![0f32; n];
    run();
    dst.copy_from_slice(&src);
    let (mut t_op, mut t_cp) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = std::time::Instant::now();
        run();
        t_op.push(t.elapsed());
        let t = std::time::Instant::now();
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
        t_cp.push(t.elapsed());
    }
    (median(t_op), median(t_cp))
}

/// Mean time of a 64-element materialize (best of 5 batches): through `copy` into a row-major
/// buffer (which skips the planner for small views) or through an explicit plan built every
/// time.
fn small_materialize(explicit_plan: bool) -> Duration {
    let cx = Scope::new();
    let buf = ramp(64);
    let t8 = contiguous(&[8, 8]).permute(&cx, &[1, 0]).expect("view");
    let dst = contiguous(&[8, 8]);
    let mut out = vec![0f32; 64];
    let iters = 200_000;
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        for _ in 0..iters {
            if explicit_plan {
                let plan = plan_materialize::<f32>(black_box(&t8)).expect("plan");
                plan.run_materialize(black_box(&buf), &mut out, 0.0)
                    .expect("materialize");
            } else {
                copy(
                    Input::new(black_box(&buf), black_box(&t8)),
                    Output::new(&mut out, &dst),
                )
                .expect("materialize");
            }
        }
        best = best.min(t.elapsed() / iters);
    }
    best
}

/// The CPU's model name, family and model as `/proc/cpuinfo` gives them (Linux only).
fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
            .and_then(|l| l.split_once(':'))
            .map_or("?", |(_, v)| v.trim())
            .to_string()
    };
    format!(
        "{} (family {}, model {}), {} threads",
        field("model name"),
        field("cpu family"),
        field("model"),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    )
}

fn table() {
    let runs = std::env::var("KERNELS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(9);
    println!("cpu: {}; kernels SIMD path: {}", cpu_model(), simd_path());
    println!("{}", simd_kernels());
    // The rows under `huge/` advise their buffers; the advice takes effect only when this
    // reads `madvise` or `always`.
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
    println!(
        "transparent huge pages: {}",
        thp.as_deref().map_or("unknown", str::trim)
    );
    println!("kernels: ratio = op time / single-threaded copy_from_slice of the same bytes, same run, median of {runs}");
    println!(
        "{:<40} {:>10} {:>8} {:>7} {:>7}  {:<7} kernels",
        "workload", "time", "GB/s", "ratio", "target", "status"
    );
    let mut missed = 0;
    let filter = std::env::var("KERNELS_BENCH_FILTER").unwrap_or_default();
    for w in workloads() {
        if !format!("kernels/{}/{}", w.group, w.name).contains(&filter) {
            continue;
        }
        let (mut run, path) = (w.setup)();
        let (op, cp) = ratio(&mut run, w.bytes, runs);
        drop(run);
        let r = op.as_secs_f64() / cp.as_secs_f64();
        let ok = r <= w.target;
        missed += usize::from(!ok);
        println!(
            "{:<40} {:>8.2}ms {:>8.2} {:>7.2} {:>7}  {:<7} {}",
            format!("kernels/{}/{}", w.group, w.name),
            op.as_secs_f64() * 1e3,
            w.bytes as f64 / op.as_secs_f64() / 1e9,
            r,
            format!("<={}", w.target),
            if ok { "met" } else { "MISSED" },
            path
        );
    }
    for (name, explicit, target) in [
        ("kernels/small/materialize 8x8", false, 50),
        ("kernels/small/plan+run 8x8", true, 200),
    ] {
        if !name.contains(&filter) {
            continue;
        }
        let small = small_materialize(explicit);
        let ok = small <= Duration::from_nanos(target);
        missed += usize::from(!ok);
        println!(
            "{:<40} {:>8}ns {:>8} {:>7} {:>7}  {}",
            name,
            small.as_nanos(),
            "-",
            "-",
            format!("<={target}ns"),
            if ok { "met" } else { "MISSED" }
        );
    }
    println!("{missed} target(s) missed");
}

fn criterion_benches(c: &mut Criterion) {
    let cx = Scope::new();
    for w in workloads() {
        let (mut run, _) = (w.setup)();
        c.bench_function(&format!("kernels/{}/{}", w.group, w.name), |b| {
            b.iter(&mut run)
        });
    }
    let buf = ramp(64);
    let t8 = contiguous(&[8, 8]).permute(&cx, &[1, 0]).expect("view");
    let dst = contiguous(&[8, 8]);
    let mut out = vec![0f32; 64];
    c.bench_function("kernels/small/8x8", |b| {
        b.iter(|| {
            copy(
                Input::new(black_box(&buf), black_box(&t8)),
                Output::new(&mut out, &dst),
            )
            .expect("materialize")
        })
    });
}

fn main() {
    table();
    if std::env::var("KERNELS_BENCH").is_ok_and(|v| v == "table") {
        return;
    }
    benches::quick_criterion(criterion_benches);
}
