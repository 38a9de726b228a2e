//! Benchmarks of symshape: simplification, proofs and compiled evaluation.
//!
//! `cargo bench -p benches --bench symshape`; names are `symshape/<area>/<case>`.

use criterion::{black_box, Criterion};
use symshape::{CmpOp, Expr, Program, Scope};

/// A scope with three dimensions and loop indices below each.
fn scope() -> (Scope, [Expr; 3], [Expr; 3]) {
    let mut cx = Scope::new();
    let n = cx.declare_str("n 1..=65536").unwrap();
    let m = cx.declare_str("m 1..=65536").unwrap();
    let k = cx.declare_str("k 1..=65536").unwrap();
    let i0 = cx.declare_str("i0 0..n").unwrap();
    let i1 = cx.declare_str("i1 0..m").unwrap();
    let i2 = cx.declare_str("i2 0..k").unwrap();
    (cx, [n, m, k], [i0, i1, i2])
}

fn bench_simplify(c: &mut Criterion) {
    let (mut cx, [_, m, k], [i0, i1, i2]) = scope();
    // Un-flattening a row-major index of a 3-d view: the cancellations index lowering needs.
    c.bench_function("symshape/simplify/unflatten_3d", |b| {
        b.iter(|| {
            let flat = black_box(i0) * m * k + black_box(i1) * k + black_box(i2);
            let a = flat.floor_div(m * k);
            let bb = flat.floor_div(k).floor_mod(m);
            let cc = flat.floor_mod(k);
            black_box((a, bb, cc))
        })
    });
    c.bench_function("symshape/simplify/const_stride_index", |b| {
        b.iter(|| {
            let flat = black_box(i0) * 12 + black_box(i1) * 4 + 3;
            black_box((
                (flat.floor_div(4)).floor_mod(3),
                flat.floor_mod(4),
                (flat + 1).ceil_div(4),
            ))
        })
    });
    cx.assume_str("n % 8 == 0").unwrap();
    let e = cx
        .parse_expr("(n + 7) // 8 * 8 + max(n, 1) + (n*m + 3) // 4")
        .unwrap();
    c.bench_function("symshape/simplify/scope_assumptions", |b| {
        b.iter(|| black_box(cx.simplify(black_box(e))))
    });
    c.bench_function("symshape/simplify/parse_and_print", |b| {
        b.iter(|| {
            let e = cx
                .parse_expr(black_box("(i0*m*k + i1*k + i2) // k % m + cdiv(n, 4)"))
                .unwrap();
            black_box(e.to_string())
        })
    });
}

fn bench_prove(c: &mut Criterion) {
    let (mut cx, [n, m, _], [i0, i1, _]) = scope();
    c.bench_function("symshape/prove/index_in_bounds", |b| {
        b.iter(|| black_box(cx.prove(black_box(i0 * m + i1), CmpOp::Lt, black_box(n * m))))
    });
    cx.declare_str("a -inf..=inf").unwrap();
    cx.declare_str("bb -inf..=inf").unwrap();
    cx.declare_str("c -inf..=inf").unwrap();
    cx.assume_str("a <= bb").unwrap();
    cx.assume_str("bb <= c").unwrap();
    let (a, cc) = (cx.symbol("a").unwrap(), cx.symbol("c").unwrap());
    c.bench_function("symshape/prove/transitive_chain", |b| {
        b.iter(|| black_box(cx.prove(black_box(a), CmpOp::Le, black_box(cc))))
    });
    let mut split = cx.clone();
    split.assume_str("a >= 5 or a <= -5").unwrap();
    let three = Expr::from(3);
    c.bench_function("symshape/prove/by_cases", |b| {
        b.iter(|| black_box(split.prove(black_box(a), CmpOp::Ne, black_box(three))))
    });
    let x = cx.parse_expr("a // 4 * 4").unwrap();
    c.bench_function("symshape/prove/floor_div_fact", |b| {
        b.iter(|| black_box(cx.prove(black_box(x), CmpOp::Le, black_box(a))))
    });
}

fn bench_compiled(c: &mut Criterion) {
    let (cx, [n, m, k], _) = scope();
    let texts = [
        "n*m*k",
        "m*k",
        "n*m + k",
        "(n + 1) // 2",
        "n % 8",
        "cdiv(m, 4)",
        "max(n, m)",
        "min(m, k) - 1",
        "n*k + m*k + 7",
        "(n*m) // k",
        "(n + m + k) % 3",
        "2*n - 3*m + k",
        "n*n + m*m",
        "(k - 1) // 4 + 1",
        "n % k",
        "max(n*m, k) + min(n, 16)",
    ];
    let exprs: Vec<Expr> = texts.iter().map(|t| cx.parse_expr(t).unwrap()).collect();
    let prog = Program::compile(&[n, m, k], &exprs).unwrap();
    let mut st = prog.state();
    c.bench_function("symshape/compiled_eval/16x3", |b| {
        b.iter(|| {
            let out = prog.run(&mut st, black_box(&[96, 35, 17])).unwrap();
            black_box(out[15])
        })
    });
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_simplify(&mut c);
    bench_prove(&mut c);
    bench_compiled(&mut c);
    c.final_summary();
}
