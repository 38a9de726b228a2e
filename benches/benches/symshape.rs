//! Benchmarks of symshape: simplification, proofs and compiled evaluation.
use criterion::{criterion_group, criterion_main, Criterion};

fn bench_placeholder(c: &mut Criterion) {
    c.bench_function("symshape/placeholder", |b| b.iter(|| std::hint::black_box(1 + 1)));
}

criterion_group!(benches, bench_placeholder);
criterion_main!(benches);
