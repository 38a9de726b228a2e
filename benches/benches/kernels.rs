//! Benchmarks of kernels (filled in with the kernels crate).
use criterion::{criterion_group, criterion_main, Criterion};

fn bench_empty(_c: &mut Criterion) {}

criterion_group!(benches, bench_empty);
criterion_main!(benches);
