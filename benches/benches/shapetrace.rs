//! Benchmarks of the runner: a long script of constant view ops, end to end through
//! `shapetrace::run` (parsing, the ops, the merges and the final `show`).
use criterion::{black_box, criterion_main, Criterion};

/// `view [64, 32]`, then `n` times (`permute [1, 0]`, `reshape [2048]`, `reshape [64, 32]`),
/// then `show`: a stack that grows to three views and comes back, 3n + 2 lines.
fn chain_script(n: usize) -> String {
    let mut s = String::from("view [64, 32]\n");
    for _ in 0..n {
        s.push_str("permute [1, 0]\nreshape [2048]\nreshape [64, 32]\n");
    }
    s.push_str("show\n");
    s
}

fn bench_chain(c: &mut Criterion) {
    let script = chain_script(33_333);
    let mut g = c.benchmark_group("shapetrace");
    g.sample_size(10);
    g.bench_function("chain_100k_lines", |b| {
        b.iter(|| {
            let out = shapetrace::run(black_box(&script));
            assert_eq!(out.error, None);
            out.lines.len()
        })
    });
    g.finish();
}

mod group {
    //! The criterion group (its macro generates an undocumented function).
    #![allow(missing_docs)]
    use super::bench_chain;
    use criterion::criterion_group;
    criterion_group!(benches, bench_chain);
}

criterion_main!(group::benches);
