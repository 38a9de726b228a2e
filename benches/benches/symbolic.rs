//! Symbolic op latency: a 24-layer attention block traced over symbolic batch `b`, sequence
//! `s` and cache position `p`, the way a lazy-tensor front end records it, and single
//! symbolic ops.
//!
//! `cargo bench -p benches --bench symbolic` prints a table of per-op means (the whole trace,
//! then by op kind, then single ops on a cold and a warm scope) and runs criterion; set
//! `SYMBOLIC_BENCH=table` to print the table only, `SYMBOLIC_BENCH=criterion` to skip it.
//!
//! Each trace starts from a fresh scope, as a framework does when it compiles a model, so
//! whatever the scope learns while tracing layer 1 is what layers 2-24 reuse. "Cold" single
//! ops run in a freshly declared scope every time (declared outside the timing); "warm" ones
//! in one scope, as an op repeated in every layer is.
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use criterion::{black_box, BatchSize, Criterion};
use symshape::{Expr, Scope};
use symshape_view::{Op, View, ViewOps, ViewStack};

/// Model width, heads and head width.
const WIDTH: i64 = 768;
const HEADS: i64 = 12;
const HEAD_DIM: i64 = 64;
/// Layers traced.
const LAYERS: usize = 24;
/// Kernel length of the causal conv1d.
const CONV: i64 = 4;

fn c(v: i64) -> Expr {
    Expr::from(v)
}

/// The symbols and the scope a model is traced in.
struct Model {
    cx: Scope,
    b: Expr,
    s: Expr,
    p: Expr,
}

fn model() -> Model {
    let mut cx = Scope::new();
    let b = cx.declare_str("b 1..=64").expect("b");
    let s = cx.declare_str("s 1..=4096").expect("s");
    let p = cx.declare_str("p 0..=4096").expect("p");
    cx.assume_str("p + s <= 4096").expect("context length");
    Model { cx, b, s, p }
}

/// Records ops on a stack, timing each one under its op kind.
struct Tracer<'a> {
    cx: &'a Scope,
    times: Option<&'a mut BTreeMap<&'static str, (Duration, usize)>>,
    ops: usize,
}

impl Tracer<'_> {
    fn run(&mut self, x: &ViewStack, op: Op) -> ViewStack {
        let kind = kind(&op);
        let t = Instant::now();
        let res = x.apply(self.cx, &op);
        let dt = t.elapsed();
        self.ops += 1;
        if let Some(times) = self.times.as_deref_mut() {
            let e = times.entry(kind).or_default();
            e.0 += dt;
            e.1 += 1;
        }
        match res {
            Ok(s) => s,
            Err(e) => panic!("{kind} on {:?}: {e}", x.shape()),
        }
    }

    fn reshape(&mut self, x: &ViewStack, shape: &[Expr]) -> ViewStack {
        self.run(x, Op::Reshape(shape.to_vec()))
    }
    fn permute(&mut self, x: &ViewStack, axes: &[usize]) -> ViewStack {
        self.run(x, Op::Permute(axes.to_vec()))
    }
    fn expand(&mut self, x: &ViewStack, shape: &[Expr]) -> ViewStack {
        self.run(x, Op::Expand(shape.to_vec()))
    }
    fn shrink(&mut self, x: &ViewStack, bounds: &[(Expr, Expr)]) -> ViewStack {
        self.run(x, Op::Shrink(bounds.to_vec()))
    }
    fn pad(&mut self, x: &ViewStack, padding: &[(Expr, Expr)]) -> ViewStack {
        self.run(x, Op::Pad(padding.to_vec()))
    }
    fn flip(&mut self, x: &ViewStack, axes: &[usize]) -> ViewStack {
        self.run(x, Op::Flip(axes.to_vec()))
    }
    fn unfold(&mut self, x: &ViewStack, axis: usize, size: i64) -> ViewStack {
        self.run(
            x,
            Op::Unfold {
                axis,
                size: c(size),
                step: c(1),
            },
        )
    }
}

fn kind(op: &Op) -> &'static str {
    match op {
        Op::Reshape(_) => "reshape",
        Op::Permute(_) => "permute",
        Op::Expand(_) => "expand",
        Op::Shrink(_) => "shrink",
        Op::Pad(_) => "pad",
        Op::Flip(_) => "flip",
        Op::Unfold { .. } => "unfold",
        _ => "other",
    }
}

fn input(cx: &Scope, shape: &[Expr]) -> ViewStack {
    ViewStack::new(View::row_major(cx, shape).expect("input"))
}

/// `[b, n, 768]` to `[b, 12, n, 64]`.
fn split_heads(t: &mut Tracer<'_>, x: &ViewStack, b: Expr, n: Expr) -> ViewStack {
    let x = t.reshape(x, &[b, n, c(HEADS), c(HEAD_DIM)]);
    t.permute(&x, &[0, 2, 1, 3])
}

/// Rotary embedding's rotate-half on `[b, 12, n, 64]`: the two halves of each head swapped.
fn rotate_half(t: &mut Tracer<'_>, x: &ViewStack, b: Expr, n: Expr) -> ViewStack {
    let x = t.reshape(x, &[b, c(HEADS), n, c(2), c(HEAD_DIM / 2)]);
    let x = t.flip(&x, &[3]);
    t.reshape(&x, &[b, c(HEADS), n, c(HEAD_DIM)])
}

/// The causal mask `[s, p + s]`, valid where key `j <= p + i`: a row of `p + s` ones padded
/// with `s` zeros, broadcast to `s` rows and read with rows one shorter, so that each row
/// starts one element earlier.
fn causal_mask(t: &mut Tracer<'_>, m: &Model) -> ViewStack {
    let (s, p) = (m.s, m.p);
    let row = input(&m.cx, &[p + s]);
    let row = t.pad(&row, &[(c(0), s)]);
    let n = p + s * 2;
    let rows = t.reshape(&row, &[c(1), n]);
    let rows = t.expand(&rows, &[s, n]);
    let flat = t.reshape(&rows, &[s * n]);
    let flat = t.shrink(&flat, &[(s - 1, s - 1 + s * (n - 1))]);
    let tri = t.reshape(&flat, &[s, n - 1]);
    t.shrink(&tri, &[(c(0), s), (c(0), p + s)])
}

/// One layer over `x: [b, s, 768]` and the cache `kv: [b, p + s, 768]`.
fn layer(t: &mut Tracer<'_>, m: &Model) {
    let (b, s, p) = (m.b, m.s, m.p);
    let z = c(0);
    let x = input(&m.cx, &[b, s, c(WIDTH)]);
    let kv = input(&m.cx, &[b, p + s, c(WIDTH)]);

    // Causal conv1d over the sequence: pad before, sliding windows, channels last.
    let xc = t.permute(&x, &[0, 2, 1]);
    let xc = t.pad(&xc, &[(z, z), (z, z), (c(CONV - 1), z)]);
    let xc = t.unfold(&xc, 2, CONV);
    let xc = t.permute(&xc, &[0, 2, 1, 3]);
    let _ = t.reshape(&xc, &[b, s, c(WIDTH * CONV)]);

    // Token shift: position t reads t - 1.
    let xs = t.pad(&x, &[(z, z), (c(1), z), (z, z)]);
    let _ = t.shrink(&xs, &[(z, b), (z, s), (z, c(WIDTH))]);

    // Queries, keys and values in heads; keys and values over the cache and the new tokens.
    let q = split_heads(t, &x, b, s);
    let q = rotate_half(t, &q, b, s);
    let k = split_heads(t, &kv, b, p + s);
    let k = rotate_half(t, &k, b, p + s);
    let v = split_heads(t, &kv, b, p + s);
    let new_k = t.shrink(&kv, &[(z, b), (p, p + s), (z, c(WIDTH))]);
    let _ = split_heads(t, &new_k, b, s);
    let old_k = t.shrink(&kv, &[(z, b), (z, p), (z, c(WIDTH))]);
    let _ = split_heads(t, &old_k, b, p);

    // Scores q @ k^T as broadcast product operands: [b, 12, s, p + s, 64].
    let kt = t.permute(&k, &[0, 1, 3, 2]);
    let kt = t.permute(&kt, &[0, 1, 3, 2]);
    let qe = t.reshape(&q, &[b, c(HEADS), s, c(1), c(HEAD_DIM)]);
    let qe = t.expand(&qe, &[b, c(HEADS), s, p + s, c(HEAD_DIM)]);
    let ke = t.reshape(&kt, &[b, c(HEADS), c(1), p + s, c(HEAD_DIM)]);
    let ke = t.expand(&ke, &[b, c(HEADS), s, p + s, c(HEAD_DIM)]);
    let _ = t.permute(&qe, &[0, 1, 2, 4, 3]);
    let _ = t.permute(&ke, &[0, 1, 2, 4, 3]);

    // The causal mask broadcast over batch and heads.
    let mask = causal_mask(t, m);
    let mask = t.reshape(&mask, &[c(1), c(1), s, p + s]);
    let _ = t.expand(&mask, &[b, c(HEADS), s, p + s]);

    // Softmax reads the scores row by row and broadcasts the row max back.
    let scores = input(&m.cx, &[b, c(HEADS), s, p + s]);
    let rmax = input(&m.cx, &[b, c(HEADS), s]);
    let rmax = t.reshape(&rmax, &[b, c(HEADS), s, c(1)]);
    let _ = t.expand(&rmax, &[b, c(HEADS), s, p + s]);
    let last = t.flip(&scores, &[3]);
    let _ = t.shrink(&last, &[(z, b), (z, c(HEADS)), (z, s), (z, c(1))]);

    // Probabilities @ v as broadcast operands: [b, 12, s, p + s, 64].
    let pe = t.reshape(&scores, &[b, c(HEADS), s, p + s, c(1)]);
    let _ = t.expand(&pe, &[b, c(HEADS), s, p + s, c(HEAD_DIM)]);
    let ve = t.reshape(&v, &[b, c(HEADS), c(1), p + s, c(HEAD_DIM)]);
    let _ = t.expand(&ve, &[b, c(HEADS), s, p + s, c(HEAD_DIM)]);

    // Merge heads, then the output and MLP projections on rows of tokens.
    let o = input(&m.cx, &[b, c(HEADS), s, c(HEAD_DIM)]);
    let o = t.permute(&o, &[0, 2, 1, 3]);
    let o = t.reshape(&o, &[b, s, c(WIDTH)]);
    let rows = t.reshape(&o, &[b * s, c(WIDTH)]);
    let _ = t.permute(&rows, &[1, 0]);
    let h = input(&m.cx, &[b * s, c(4 * WIDTH)]);
    let h = t.reshape(&h, &[b, s, c(4 * WIDTH)]);
    let _ = t.shrink(&h, &[(z, b), (z, s), (z, c(2 * WIDTH))]);
    let _ = t.shrink(&h, &[(z, b), (z, s), (c(2 * WIDTH), c(4 * WIDTH))]);
    let res = input(&m.cx, &[b, s, c(WIDTH)]);
    let _ = t.flip(&res, &[1]);
    let res = t.reshape(&res, &[b, s, c(1), c(WIDTH)]);
    let _ = t.expand(&res, &[b, s, c(2), c(WIDTH)]);
}

/// Traces the model in a fresh scope; returns the number of ops.
fn trace(times: Option<&mut BTreeMap<&'static str, (Duration, usize)>>) -> usize {
    let m = model();
    let mut t = Tracer {
        cx: &m.cx,
        times,
        ops: 0,
    };
    for _ in 0..LAYERS {
        layer(&mut t, &m);
    }
    t.ops
}

/// A single symbolic op on `[b, 12, s, 64]` (split heads of `[b, s, 768]`) or on the
/// cache `[b, 12, p + s, 64]`.
fn single_ops(m: &Model) -> Vec<(&'static str, ViewStack, Op)> {
    let (b, s, p) = (m.b, m.s, m.p);
    let (z, one) = (c(0), c(1));
    let x = input(&m.cx, &[b, s, c(WIDTH)]);
    let heads = x
        .reshape(&m.cx, &[b, s, c(HEADS), c(HEAD_DIM)])
        .expect("heads");
    let kv = input(&m.cx, &[b, p + s, c(WIDTH)]);
    let split = kv
        .reshape(&m.cx, &[b, p + s, c(HEADS), c(HEAD_DIM)])
        .and_then(|v| v.permute(&m.cx, &[0, 2, 1, 3]))
        .expect("split");
    vec![
        ("permute", heads.clone(), Op::Permute(vec![0, 2, 1, 3])),
        ("flip", heads.clone(), Op::Flip(vec![1])),
        (
            "expand",
            heads.reshape(&m.cx, &[b, s, one, c(WIDTH)]).expect("r"),
            Op::Expand(vec![b, s, c(4), c(WIDTH)]),
        ),
        (
            "shrink",
            kv.clone(),
            Op::Shrink(vec![(z, b), (p, p + s), (z, c(WIDTH))]),
        ),
        (
            "pad",
            heads.clone(),
            Op::Pad(vec![(z, z), (one, z), (z, z), (z, z)]),
        ),
        (
            "reshape_split_heads",
            kv.clone(),
            Op::Reshape(vec![b, p + s, c(HEADS), c(HEAD_DIM)]),
        ),
        (
            "reshape_merge_heads",
            split.permute(&m.cx, &[0, 2, 1, 3]).expect("p"),
            Op::Reshape(vec![b, p + s, c(WIDTH)]),
        ),
    ]
}

fn mean_of(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    // The best of 5 batches: the machine is shared, the minimum is the least disturbed.
    (0..5)
        .map(|_| (0..runs).map(|_| f()).sum::<Duration>() / runs as u32)
        .min()
        .unwrap_or_default()
}

fn us(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e6)
}

fn table() {
    println!("symbolic op latency (microseconds per op; best of 5 batches)");
    // The first trace of the process: nothing is remembered yet, not even per thread.
    let start = Instant::now();
    let ops = trace(None);
    let first_trace = start.elapsed() / ops as u32;
    let total = mean_of(3, || {
        let t = Instant::now();
        black_box(trace(None));
        t.elapsed()
    });
    println!("{:<44} {:>10} {:>8}  target", "workload", "us/op", "ops");
    let per_op = total / ops as u32;
    let status = |d: Duration, target_us: f64| {
        if d.as_secs_f64() * 1e6 <= target_us {
            "met"
        } else {
            "MISSED"
        }
    };
    println!(
        "{:<44} {:>10} {:>8}  <=3 {}",
        format!("symbolic/model/attention_{LAYERS}_layers"),
        us(per_op),
        ops,
        status(per_op, 3.0)
    );
    println!(
        "{:<44} {:>10} {:>8}",
        "symbolic/model/first_trace_in_process",
        us(first_trace),
        ops
    );
    // Layer 1 alone, in a fresh scope: nothing learnt yet.
    let first = mean_of(5, || {
        let m = model();
        let mut t = Tracer {
            cx: &m.cx,
            times: None,
            ops: 0,
        };
        let start = Instant::now();
        layer(&mut t, &m);
        start.elapsed() / t.ops as u32
    });
    println!(
        "{:<44} {:>10} {:>8}",
        "symbolic/model/first_layer",
        us(first),
        ops / LAYERS
    );
    let mut times = BTreeMap::new();
    for _ in 0..3 {
        trace(Some(&mut times));
    }
    for (kind, (d, n)) in &times {
        println!(
            "{:<44} {:>10} {:>8}",
            format!("symbolic/model/by_kind/{kind}"),
            us(*d / *n as u32),
            n / 3
        );
    }
    let m = model();
    for (name, x, op) in single_ops(&m) {
        let target = if matches!(name, "permute" | "flip" | "expand") {
            Some(1.0)
        } else {
            None
        };
        let cold = mean_of(200, || {
            let fresh = model();
            let t = Instant::now();
            black_box(x.apply(&fresh.cx, &op).expect("op"));
            t.elapsed()
        });
        let warm = mean_of(200, || {
            let t = Instant::now();
            black_box(x.apply(&m.cx, &op).expect("op"));
            t.elapsed()
        });
        for (which, d) in [("cold", cold), ("warm", warm)] {
            let goal = target.map_or(String::new(), |g| format!("<={g} {}", status(d, g)));
            println!(
                "{:<44} {:>10} {:>8}  {goal}",
                format!("symbolic/op/{which}/{name}"),
                us(d),
                1
            );
        }
    }
}

fn criterion_benches(c: &mut Criterion) {
    c.bench_function(&format!("symbolic/model/attention_{LAYERS}_layers"), |bn| {
        bn.iter(|| trace(None))
    });
    // One more layer in a scope that has traced one: what layers 2-24 cost.
    let m = model();
    let mut t = Tracer {
        cx: &m.cx,
        times: None,
        ops: 0,
    };
    layer(&mut t, &m);
    c.bench_function("symbolic/model/warm_layer", |bn| {
        bn.iter(|| {
            let mut t = Tracer {
                cx: &m.cx,
                times: None,
                ops: 0,
            };
            layer(&mut t, &m);
        })
    });
    for (name, x, op) in single_ops(&m) {
        c.bench_function(&format!("symbolic/op/cold/{name}"), |bn| {
            bn.iter_batched(
                || model().cx,
                |cx| x.apply(&cx, black_box(&op)),
                BatchSize::SmallInput,
            )
        });
        c.bench_function(&format!("symbolic/op/warm/{name}"), |bn| {
            bn.iter(|| x.apply(&m.cx, black_box(&op)))
        });
    }
}

fn main() {
    let mode = std::env::var("SYMBOLIC_BENCH").unwrap_or_default();
    if mode != "criterion" {
        table();
    }
    if mode == "table" {
        return;
    }
    benches::quick_criterion(criterion_benches);
}
