//! Emitted C against `symshape_kernels::materialize`: a ratio table measured in one run,
//! then criterion benchmarks `codegen/<workload>/<shape>` of the Rust side.
//!
//! `cargo bench -p benches --bench codegen` compiles the C that `symshape-codegen` emits for
//! a symbolic transpose and a symbolic pad with `cc -std=c99 -O2`, times it in its own
//! process (median of 15 runs, `clock_gettime`), times `materialize` on the same binding
//! in this process, checks that both outputs agree (a checksum), and prints
//! `C ns / materialize ns` per workload with the target of 3. `materialize` allocates its
//! output on every call while the C kernel writes a buffer it reuses, so the table also
//! gives the ratio against `copy` into a preallocated output, the same work. Without a C compiler the
//! table says so and only criterion runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{black_box, Criterion};
use symshape::{Bindings, Scope};
use symshape_codegen::{render_c, CConfig, Plan};
use symshape_kernels::{copy, materialize, ConcreteStack, ConcreteView, Input, Output};
use symshape_view::{View, ViewOps, ViewStack};

const RUNS: usize = 15;
const TARGET: f64 = 3.0;
const SIDE: i64 = 2048;

/// Runs the kernel of the unit it is linked with: `argv = srclen dstlen pad syms...`;
/// prints the guard result, the median time in ns and a checksum of the output.
const DRIVER: &str = r#"#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int shapetrace_guards(const int64_t *syms);
void shapetrace_materialize(const int64_t *src, int64_t *dst, const int64_t *syms, int64_t pad);

static int cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int64_t k, ls, ld, pad, syms[16], times[64];
    int64_t *src, *dst;
    uint64_t sum = 0;
    int r, runs, g, ns = argc - 5;
    if (argc < 5 || ns > 16) return 2;
    runs = atoi(argv[1]);
    ls = atoll(argv[2]);
    ld = atoll(argv[3]);
    pad = atoll(argv[4]);
    for (k = 0; k < ns; ++k) syms[k] = atoll(argv[5 + k]);
    src = malloc(sizeof(int64_t) * (size_t)(ls + 1));
    dst = malloc(sizeof(int64_t) * (size_t)(ld + 1));
    if (!src || !dst || runs > 64) return 2;
    for (k = 0; k < ls; ++k) src[k] = k % 1024;
    g = shapetrace_guards(syms);
    if (g != 0) { printf("guard %d\n", g); return 1; }
    shapetrace_materialize(src, dst, syms, pad);
    for (r = 0; r < runs; ++r) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        shapetrace_materialize(src, dst, syms, pad);
        clock_gettime(CLOCK_MONOTONIC, &b);
        times[r] = (int64_t)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
    }
    for (k = 0; k < ld; ++k) sum = sum * 31u + (uint64_t)dst[k];
    qsort(times, (size_t)runs, sizeof(int64_t), cmp);
    printf("%lld %llu\n", (long long)times[runs / 2], (unsigned long long)sum);
    return 0;
}
"#;

/// A symbolic stack, the scope it lives in, and the binding it is timed at.
struct Case {
    name: String,
    cx: Scope,
    stack: ViewStack,
    values: Vec<i64>,
}

fn cases() -> Vec<Case> {
    let mut cx = Scope::new();
    let n = cx.declare_str("n 1..=65536").expect("n");
    let m = cx.declare_str("m 1..=65536").expect("m");
    let base = ViewStack::new(View::row_major(&cx, &[n, m]).expect("a view"));
    let transpose = base.permute(&cx, &[1, 0]).expect("permute");
    let pad = base.pad(&cx, &[(1i64, 1i64), (1, 1)]).expect("pad");
    vec![
        Case {
            name: format!("transpose/{SIDE}x{SIDE}"),
            cx: cx.clone(),
            stack: transpose,
            values: vec![SIDE, SIDE],
        },
        Case {
            name: format!("pad/{SIDE}x{SIDE}"),
            cx,
            stack: pad,
            values: vec![SIDE, SIDE],
        },
    ]
}

fn bound(case: &Case) -> ConcreteStack {
    let mut b = Bindings::new();
    for (&s, &v) in case.cx.symbols().iter().zip(&case.values) {
        b.set(s, v).expect("in range");
    }
    case.stack.bind(&case.cx, &b).expect("binds")
}

fn src_len(stack: &ConcreteStack) -> usize {
    stack.levels()[0]
        .extent()
        .map_or(0, |(_, hi)| usize::try_from(hi + 1).expect("a length"))
}

fn checksum(values: &[i64]) -> u64 {
    values
        .iter()
        .fold(0u64, |s, &v| s.wrapping_mul(31).wrapping_add(v as u64))
}

/// Compiles the unit of `case` with the driver; `None` without a working `cc`.
fn compile(case: &Case, dir: &Path, k: usize) -> Option<PathBuf> {
    let plan = Plan::materialize(&case.cx, &case.stack).expect("a plan");
    let unit = render_c(&case.cx, &plan, &CConfig::new("shapetrace")).expect("C source");
    let (kernel, main, exe) = (
        dir.join(format!("kernel{k}.c")),
        dir.join(format!("main{k}.c")),
        dir.join(format!("run{k}")),
    );
    std::fs::write(&kernel, unit).ok()?;
    std::fs::write(&main, DRIVER).ok()?;
    let out = Command::new("cc")
        .args([
            "-std=c99",
            "-O2",
            "-Wall",
            "-Werror",
            "-D_POSIX_C_SOURCE=199309L",
        ])
        .arg(&kernel)
        .arg(&main)
        .arg("-o")
        .arg(&exe)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("cc failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(exe)
}

fn median_ns(mut f: impl FnMut()) -> u64 {
    f();
    let mut times: Vec<u64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
        })
        .collect();
    times.sort_unstable();
    times[RUNS / 2]
}

fn ratio_table() {
    let dir = std::env::temp_dir().join(format!("codegen-bench-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    println!(
        "codegen ratio table (emitted C at -O2 / materialize, median of {RUNS}; target {TARGET}x):"
    );
    for (k, case) in cases().iter().enumerate() {
        let stack = bound(case);
        let len = src_len(&stack);
        let src: Vec<i64> = (0..len).map(|i| (i % 1024) as i64).collect();
        let rust_ns = median_ns(|| {
            black_box(materialize(Input::new(&src, &stack).pad(-1)).expect("materialize"));
        });
        let dst_view = ConcreteView::contiguous(stack.shape()).expect("a contiguous view");
        let mut out_buf = vec![0i64; usize::try_from(stack.numel()).expect("a length")];
        let copy_ns = median_ns(|| {
            copy(
                Input::new(&src, &stack).pad(-1),
                Output::new(&mut out_buf, &dst_view),
            )
            .expect("copy");
        });
        let Some(exe) = compile(case, &dir, k) else {
            println!("  {:<24} no C compiler; skipped", case.name);
            continue;
        };
        let want = materialize(Input::new(&src, &stack).pad(-1)).expect("materialize");
        let out = Command::new(&exe)
            .arg(RUNS.to_string())
            .arg(len.to_string())
            .arg(want.values.len().to_string())
            .arg("-1")
            .args(case.values.iter().map(ToString::to_string))
            .output()
            .expect("the driver runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut parts = text.split_whitespace();
        let c_ns: u64 = parts.next().and_then(|t| t.parse().ok()).expect("a time");
        let sum: u64 = parts
            .next()
            .and_then(|t| t.parse().ok())
            .expect("a checksum");
        assert_eq!(
            sum,
            checksum(&want.values),
            "{}: C and materialize differ",
            case.name
        );
        let ratio = c_ns as f64 / rust_ns.max(1) as f64;
        let copy_ratio = c_ns as f64 / copy_ns.max(1) as f64;
        let verdict = if ratio <= TARGET {
            "ok"
        } else {
            "above target"
        };
        println!(
            "  {:<24} c_ns={c_ns:>10} materialize_ns={rust_ns:>10} ratio={ratio:.2} {verdict} \
             (copy into a preallocated output: {copy_ns} ns, ratio {copy_ratio:.2})",
            case.name
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn bench_materialize(c: &mut Criterion) {
    let mut group = c.benchmark_group("codegen");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for case in cases() {
        let stack = bound(&case);
        let src: Vec<i64> = (0..src_len(&stack)).map(|i| (i % 1024) as i64).collect();
        group.bench_function(format!("materialize/{}", case.name), |b| {
            b.iter(|| {
                black_box(materialize(Input::new(&src, &stack).pad(-1)).expect("materialize"))
            })
        });
    }
    group.finish();
}

fn main() {
    ratio_table();
    let mut c = Criterion::default().configure_from_args();
    bench_materialize(&mut c);
    c.final_summary();
}
