//! Benchmarks of view: complete reshape and merge decisions on realistic sizes.
use criterion::{black_box, criterion_main, Criterion};
use symshape::{Expr, Scope, SymbolSpec};
use symshape_view::concrete::merge;
use symshape_view::{ConcreteView, PreparedView, View, ViewStack};

fn cv(shape: &[i64]) -> ConcreteView {
    ConcreteView::contiguous(shape).expect("contiguous")
}

fn bench_reshape(c: &mut Criterion) {
    let flat = cv(&[4096, 4096]);
    c.bench_function("view/reshape/4096x4096_to_flat", |b| {
        b.iter(|| black_box(&flat).reshape(black_box(&[16_777_216])))
    });
    let transposed = cv(&[4096, 4096]).permute(&[1, 0]).expect("permute");
    c.bench_function("view/reshape/4096x4096_transposed_refused", |b| {
        b.iter(|| {
            black_box(&transposed)
                .reshape(black_box(&[2048, 8192]))
                .is_err()
        })
    });
    let padded = cv(&[256, 256, 256])
        .pad(&[(0, 0), (0, 0), (1, 1)])
        .expect("pad")
        .shrink(&[(0, 256), (3, 4), (0, 258)])
        .expect("shrink");
    c.bench_function("view/reshape/256^3_padded_row_split", |b| {
        b.iter(|| black_box(&padded).reshape(black_box(&[256, 2, 129])))
    });
    let heads = cv(&[8, 512, 768]);
    c.bench_function("view/reshape/attention_heads_8x512x768", |b| {
        b.iter(|| {
            black_box(&heads)
                .reshape(&[8, 512, 12, 64])
                .and_then(|v| v.permute(&[0, 2, 1, 3]))
        })
    });
}

fn bench_merge(c: &mut Criterion) {
    let lower = cv(&[4096, 4096]).permute(&[1, 0]).expect("permute");
    let upper = cv(&[2048, 8192]);
    c.bench_function("view/merge/4096x4096_transposed_under_reshape", |b| {
        b.iter(|| merge(black_box(&lower), black_box(&upper)))
    });
    let lower = cv(&[256, 256, 256])
        .pad(&[(1, 1), (0, 0), (0, 0)])
        .expect("pad");
    let upper = cv(&[258 * 256, 256])
        .shrink(&[(256, 257 * 256), (0, 256)])
        .expect("shrink");
    c.bench_function("view/merge/256^3_pad_reshape_shrink", |b| {
        b.iter(|| merge(black_box(&lower), black_box(&upper)))
    });
    let lower = cv(&[4096, 4096]).permute(&[1, 0]).expect("permute");
    let upper = ConcreteView::create(&[4096, 2048], Some(&[4096, 2]), 0, None).expect("upper");
    c.bench_function("view/merge/4096x4096_strided_select", |b| {
        b.iter(|| merge(black_box(&lower), black_box(&upper)))
    });
    // Upper stride 70 straddles rows of 64 without carrying: the no-carry split
    // merges 1.6 million points without evaluating them.
    let lower = ConcreteView::create(&[20000, 64], Some(&[1, 20000]), 0, None).expect("lower");
    let upper = ConcreteView::create(&[2, 16000, 50], Some(&[70, 64, 1]), 0, None).expect("upper");
    c.bench_function("view/merge/straddle_no_carry_1.6M", |b| {
        b.iter(|| merge(black_box(&lower), black_box(&upper)))
    });
    // The column digit 6a + b carries only in the second half (a = 1, b >= 58), so
    // the evaluation decider walks 480000 points before refuting: its worst case
    // near the 2^20-point limit, per point.
    let lower = ConcreteView::create(&[20000, 64], Some(&[1, 20000]), 0, None).expect("lower");
    let upper = ConcreteView::create(&[2, 8000, 60], Some(&[70, 64, 1]), 0, None).expect("upper");
    c.bench_function("view/merge/evaluated_960k_refuted_halfway", |b| {
        b.iter(|| merge(black_box(&lower), black_box(&upper)))
    });
}

fn bench_stack(c: &mut Criterion) {
    let base = View::contiguous(&[64i64, 64, 64]).expect("contiguous");
    c.bench_function("view/stack/pad_reshape_shrink_64^3", |b| {
        b.iter(|| {
            ViewStack::new(black_box(base.clone()))
                .pad(&[(0i64, 0i64), (1, 1), (0, 0)])
                .and_then(|s| s.reshape(&[64i64, 66 * 64]))
                .and_then(|s| s.shrink(&[(0i64, 64i64), (64, 65 * 64)]))
        })
    });
}

/// A rank-4 view over three symbols with a pad, prepared once and bound many times.
fn bench_bind(c: &mut Criterion) {
    let mut cx = Scope::new();
    let b = cx.declare(&SymbolSpec::new("b").range(1, 64)).expect("b");
    let h = cx.declare(&SymbolSpec::new("h").range(1, 1024)).expect("h");
    let w = cx.declare(&SymbolSpec::new("w").range(1, 1024)).expect("w");
    let z = Expr::from(0);
    let v = View::create_in(&cx, &[b, h, w, Expr::from(3)], None, z, None)
        .and_then(|v| v.pad(&[(z, z), (1.into(), 1.into()), (2.into(), 2.into()), (z, z)]))
        .expect("padded view");
    let mut prepared = PreparedView::new(&cx, &v).expect("prepare");
    c.bench_function("view/bind/prepared_rank4_pad", |bn| {
        bn.iter(|| prepared.bind(black_box(&[8, 224, 224])))
    });

    // The same view with an expression bound and `or`/`!=` assumptions, all checked
    // exactly inside the program.
    let mut cx = Scope::new();
    let b = cx.declare_str("b 1..=64").expect("b");
    let h = cx.declare_str("h 1..=1024").expect("h");
    let w = cx.declare_str("w h..=2*h").expect("w");
    cx.assume_str("h % 8 == 0 or b == 1").expect("assume");
    cx.assume_str("w != h + 3").expect("assume");
    let v = View::create_in(&cx, &[b, h, w, Expr::from(3)], None, z, None)
        .and_then(|v| v.pad(&[(z, z), (1.into(), 1.into()), (2.into(), 2.into()), (z, z)]))
        .expect("padded view");
    let mut prepared = PreparedView::new(&cx, &v).expect("prepare");
    c.bench_function("view/bind/prepared_exact_checks", |bn| {
        bn.iter(|| prepared.bind(black_box(&[8, 224, 224])))
    });
}

mod group {
    //! The criterion group (its macro generates an undocumented function).
    #![allow(missing_docs)]
    use super::{bench_bind, bench_merge, bench_reshape, bench_stack};
    use criterion::criterion_group;
    criterion_group!(benches, bench_reshape, bench_merge, bench_stack, bench_bind);
}

criterion_main!(group::benches);
