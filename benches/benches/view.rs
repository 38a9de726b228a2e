//! Benchmarks of view (filled in with the view crate).
use criterion::{criterion_group, criterion_main, Criterion};

fn bench_empty(_c: &mut Criterion) {}

criterion_group!(benches, bench_empty);
criterion_main!(benches);
