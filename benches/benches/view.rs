//! Benchmarks of view: complete reshape and merge decisions on realistic sizes, op latency on
//! constant and symbolic stacks, prepared binding.
use criterion::{black_box, criterion_main, Criterion};
use symshape::{Bindings, Expr, Scope};
use symshape_view::concrete::merge;
use symshape_view::{ConcreteView, Op, PreparedStack, PreparedView, View, ViewOps, ViewStack};

fn cv(shape: &[i64]) -> ConcreteView {
    ConcreteView::contiguous(shape).expect("contiguous")
}

fn bench_reshape(c: &mut Criterion) {
    let cx = Scope::new();
    let flat = cv(&[4096, 4096]);
    c.bench_function("view/reshape/4096x4096_to_flat", |b| {
        b.iter(|| black_box(&flat).reshape(&cx, black_box(&[16_777_216])))
    });
    let transposed = cv(&[4096, 4096]).permute(&cx, &[1, 0]).expect("permute");
    c.bench_function("view/reshape/4096x4096_transposed_refused", |b| {
        b.iter(|| {
            black_box(&transposed)
                .reshape(&cx, black_box(&[2048, 8192]))
                .is_err()
        })
    });
    let padded = cv(&[256, 256, 256])
        .pad(&cx, &[(0, 0), (0, 0), (1, 1)])
        .expect("pad")
        .shrink(&cx, &[(0, 256), (3, 4), (0, 258)])
        .expect("shrink");
    c.bench_function("view/reshape/256^3_padded_row_split", |b| {
        b.iter(|| black_box(&padded).reshape(&cx, black_box(&[256, 2, 129])))
    });
    let heads = cv(&[8, 512, 768]);
    c.bench_function("view/reshape/attention_heads_8x512x768", |b| {
        b.iter(|| {
            black_box(&heads)
                .reshape(&cx, &[8, 512, 12, 64])
                .and_then(|v| v.permute(&cx, &[0, 2, 1, 3]))
        })
    });
}

fn bench_merge(c: &mut Criterion) {
    let cx = Scope::new();
    let lower = cv(&[4096, 4096]).permute(&cx, &[1, 0]).expect("permute");
    let upper = cv(&[2048, 8192]);
    c.bench_function("view/merge/4096x4096_transposed_under_reshape", |b| {
        b.iter(|| merge(black_box(&lower), black_box(&upper)))
    });
    let lower = cv(&[256, 256, 256])
        .pad(&cx, &[(1, 1), (0, 0), (0, 0)])
        .expect("pad");
    let upper = cv(&[258 * 256, 256])
        .shrink(&cx, &[(256, 257 * 256), (0, 256)])
        .expect("shrink");
    c.bench_function("view/merge/256^3_pad_reshape_shrink", |b| {
        b.iter(|| merge(black_box(&lower), black_box(&upper)))
    });
    let lower = cv(&[4096, 4096]).permute(&cx, &[1, 0]).expect("permute");
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
    // The causal mask [s, p + s] at s = 512, p = 3 (pad, flatten, shrink, reshape, shrink):
    // no structural decider applies, and the evaluation decider refutes the valid set
    // (a staircase, not a box) in its second row.
    let lower = ConcreteView::create(
        &[512, 1027],
        Some(&[515, 1]),
        0,
        Some(&[(0, 512), (0, 515)]),
    )
    .expect("lower");
    let upper = ConcreteView::create(&[512, 515], Some(&[1026, 1]), 511, None).expect("upper");
    c.bench_function("view/merge/causal_mask_512_refuted", |b| {
        b.iter(|| merge(black_box(&lower), black_box(&upper)))
    });
}

fn bench_stack(c: &mut Criterion) {
    let cx = Scope::new();
    let base = View::contiguous(&[64, 64, 64]).expect("contiguous");
    c.bench_function("view/stack/pad_reshape_shrink_64^3", |b| {
        b.iter(|| {
            ViewStack::new(black_box(base.clone()))
                .pad(&cx, &[(0i64, 0i64), (1, 1), (0, 0)])
                .and_then(|s| s.reshape(&cx, &[64i64, 66 * 64]))
                .and_then(|s| s.shrink(&cx, &[(0i64, 64i64), (64, 65 * 64)]))
        })
    });
}

/// One op on a stack of one constant view: the latency a framework pays per traced op on
/// concrete shapes.
fn bench_op_latency(c: &mut Criterion) {
    let cx = Scope::new();
    let s = ViewStack::new(View::contiguous(&[8, 512, 768]).expect("contiguous"));
    let ops: Vec<(&str, Op<i64>)> = vec![
        ("permute", Op::Permute(vec![0, 2, 1])),
        ("reshape", Op::Reshape(vec![8, 512, 12, 64])),
        ("expand", Op::Expand(vec![8, 512, 768])),
        ("shrink", Op::Shrink(vec![(0, 8), (1, 511), (0, 768)])),
        ("pad", Op::Pad(vec![(0, 0), (1, 1), (0, 0)])),
        ("flip", Op::Flip(vec![1])),
        ("reinterpret", Op::Reinterpret { from: 4, to: 2 }),
        ("view_as_real", Op::ViewAsReal),
        (
            "as_strided",
            Op::AsStrided {
                shape: vec![8, 511, 768],
                strides: vec![512 * 768, 768, 1],
                offset: 768,
            },
        ),
        (
            "unfold",
            Op::Unfold {
                axis: 1,
                size: 3,
                step: 1,
            },
        ),
        (
            "diagonal",
            Op::Diagonal {
                offset: 1,
                dim1: 1,
                dim2: 2,
            },
        ),
    ];
    for (name, op) in &ops {
        c.bench_function(&format!("view/op/constant_one_view/{name}"), |b| {
            b.iter(|| black_box(&s).apply_dim(&cx, black_box(op)))
        });
    }
    // The memory-model queries and the canonical form of a constant view.
    let v = ConcreteView::create(&[8, 512, 768], Some(&[768, 6144, 1]), 5, None).expect("view");
    c.bench_function("view/query/constant/numpy_flags", |b| {
        b.iter(|| black_box(&v).numpy_flags())
    });
    c.bench_function("view/query/constant/byte_layout", |b| {
        b.iter(|| black_box(&v).byte_layout(4))
    });
    c.bench_function("view/query/constant/canonical", |b| {
        b.iter(|| black_box(&v).canonical())
    });
    // The chain that grows a stack of three views and returns to it: permute, flatten
    // (not one view: pushes a level), unflatten (merges back).
    let v = ViewStack::new(View::contiguous(&[64, 32]).expect("contiguous"));
    let chain = [
        Op::<i64>::Permute(vec![1, 0]),
        Op::Reshape(vec![2048]),
        Op::Reshape(vec![64, 32]),
    ];
    c.bench_function("view/op/constant_chain/permute_reshape_reshape", |b| {
        b.iter(|| {
            let mut s = black_box(&v).clone();
            for op in &chain {
                s = s.apply_dim(&cx, op).expect("op");
            }
            s
        })
    });
}

/// One op on a symbolic stack of an attention block: the latency of tracing with symbolic
/// batch, sequence and cache position.
fn bench_symbolic_latency(c: &mut Criterion) {
    let mut cx = Scope::new();
    let b = cx.declare_str("b 1..=64").expect("b");
    let s = cx.declare_str("s 1..=4096").expect("s");
    let x = ViewStack::new(View::row_major(&cx, &[b, s, Expr::from(768)]).expect("x"));
    let heads = x
        .reshape(&cx, &[b, s, Expr::from(12), Expr::from(64)])
        .expect("reshape");
    let ops: Vec<(&str, Op)> = vec![
        ("permute", Op::Permute(vec![0, 2, 1, 3])),
        ("flip", Op::Flip(vec![1])),
        ("expand", Op::Expand(vec![b, s, 12.into(), 64.into()])),
        (
            "shrink",
            Op::Shrink(vec![
                (0.into(), b),
                (1.into(), s),
                (0.into(), 12.into()),
                (0.into(), 64.into()),
            ]),
        ),
        (
            "pad",
            Op::Pad(vec![
                (0.into(), 0.into()),
                (1.into(), 0.into()),
                (0.into(), 0.into()),
                (0.into(), 0.into()),
            ]),
        ),
        ("reshape_merge_heads", Op::Reshape(vec![b, s, 768.into()])),
    ];
    for (name, op) in &ops {
        c.bench_function(&format!("view/op/symbolic_attention/{name}"), |bn| {
            bn.iter(|| black_box(&heads).apply(&cx, black_box(op)))
        });
    }
}

/// A rank-4 view over three symbols with a pad, prepared once and bound many times.
fn bench_bind(c: &mut Criterion) {
    let (cx, v) = benches::rank4_pad();
    let prepared = PreparedView::new(&cx, &v).expect("prepare");
    let mut cache = prepared.cache();
    c.bench_function("view/bind/prepared_rank4_pad", |bn| {
        bn.iter(|| prepared.bind(&mut cache, black_box(&[8, 224, 224])))
    });

    // The same view with an expression bound and `or`/`!=` assumptions, all checked
    // exactly inside the program.
    let mut cx = Scope::new();
    let b = cx.declare_str("b 1..=64").expect("b");
    let h = cx.declare_str("h 1..=1024").expect("h");
    let w = cx.declare_str("w h..=2*h").expect("w");
    cx.assume_str("h % 8 == 0 or b == 1").expect("assume");
    cx.assume_str("w != h + 3").expect("assume");
    let v = benches::padded_rank4(&cx, b, h, w);
    let prepared = PreparedView::new(&cx, &v).expect("prepare");
    let mut cache = prepared.cache();
    c.bench_function("view/bind/prepared_exact_checks", |bn| {
        bn.iter(|| prepared.bind(&mut cache, black_box(&[8, 224, 224])))
    });
}

/// The stacks a traced attention block binds, with symbols `b`, `p`, `s` (sorted by name):
/// merged heads, conv windows (pad + unfold) and a causal mask built from pad/reshape/shrink.
fn attention_stacks(cx: &mut Scope) -> Vec<(&'static str, ViewStack)> {
    let b = cx.declare_str("b 1..=64").expect("b");
    let p = cx.declare_str("p 0..=8192").expect("p");
    let s = cx.declare_str("s 1..=8192").expect("s");
    let (z, e) = (Expr::from(0), Expr::from);
    let trace = |x: ViewStack, ops: &[Op]| {
        ops.iter()
            .try_fold(x, |st, op| st.apply(cx, op))
            .expect("trace")
    };
    let input = |shape: &[Expr]| ViewStack::new(View::row_major(cx, shape).expect("input"));
    let heads = trace(
        input(&[b, e(12), s, e(64)]),
        &[
            Op::Permute(vec![0, 2, 1, 3]),
            Op::Reshape(vec![b, s, e(768)]),
        ],
    );
    let conv = trace(
        input(&[b, e(64), s]),
        &[
            Op::Pad(vec![(z, z), (z, z), (e(1), e(1))]),
            Op::Unfold {
                axis: 2,
                size: e(3),
                step: e(1),
            },
        ],
    );
    let w = p + s;
    let causal = trace(
        input(&[s, w]),
        &[
            Op::Pad(vec![(z, z), (z, s)]),
            Op::Reshape(vec![s * (w + s)]),
            Op::Shrink(vec![(s - e(1), s - e(1) + s * (w + s - e(1)))]),
            Op::Reshape(vec![s, w + s - e(1)]),
            Op::Shrink(vec![(z, s), (z, w)]),
        ],
    );
    vec![("heads", heads), ("conv", conv), ("causal", causal)]
}

/// Prepared stacks bound to kernel-ready `ConcreteStack`s: a rank-4 stack of one view, and
/// the attention stacks at s = 512 and s = 4096 (two levels that never merge at these sizes),
/// with the plain bind of the same stacks for comparison. Each iteration binds the next of
/// four batch sizes, so no result is the previous one.
fn bench_prepared_stack(c: &mut Criterion) {
    let mut cx = Scope::new();
    let b = cx.declare_str("b 1..=64").expect("b");
    let h = cx.declare_str("h 1..=1024").expect("h");
    let w = cx.declare_str("w 1..=1024").expect("w");
    let v = benches::padded_rank4(&cx, b, h, w);
    let prepared = PreparedStack::new(&cx, &ViewStack::new(v)).expect("prepare");
    let mut cache = prepared.cache();
    let values = [[8, 224, 224], [4, 224, 224], [2, 224, 224], [1, 224, 224]];
    let mut k = 0;
    c.bench_function("view/bind/prepared_stack/one_view_rank4", |bn| {
        bn.iter(|| {
            k = (k + 1) % 4;
            prepared.bind(&mut cache, black_box(&values[k]))
        })
    });

    let mut cx = Scope::new();
    for (name, stack) in attention_stacks(&mut cx) {
        let prepared = PreparedStack::new(&cx, &stack).expect("prepare");
        let mut cache = prepared.cache();
        for seq in [512i64, 4096] {
            // p = 3 and s = `seq`; b cycles through four batch sizes.
            let values: Vec<Vec<i64>> = [8, 4, 2, 1]
                .iter()
                .map(|&bv| {
                    let value = |sym: &Expr| match sym.to_string().as_str() {
                        "b" => bv,
                        "p" => 3,
                        _ => seq,
                    };
                    prepared.symbols().iter().map(value).collect()
                })
                .collect();
            let bound = prepared.bind(&mut cache, &values[0]).expect("bind");
            assert_eq!(
                bound.levels().len(),
                2,
                "{name} at s = {seq} stays two levels"
            );
            let mut k = 0;
            c.bench_function(&format!("view/bind/prepared_stack/{name}_s{seq}"), |bn| {
                bn.iter(|| {
                    k = (k + 1) % 4;
                    prepared.bind(&mut cache, black_box(&values[k]))
                })
            });
            let bindings: Vec<Bindings> = values
                .iter()
                .map(|vals| {
                    let mut bs = Bindings::new();
                    for (sym, &v) in prepared.symbols().iter().zip(vals) {
                        bs.set(*sym, v).expect("in range");
                    }
                    bs
                })
                .collect();
            c.bench_function(&format!("view/bind/plain_stack/{name}_s{seq}"), |bn| {
                bn.iter(|| {
                    k = (k + 1) % 4;
                    stack.bind(&cx, black_box(&bindings[k]))
                })
            });
        }
    }
}

mod group {
    //! The criterion group (its macro generates an undocumented function).
    #![allow(missing_docs)]
    use super::{
        bench_bind, bench_merge, bench_op_latency, bench_prepared_stack, bench_reshape,
        bench_stack, bench_symbolic_latency,
    };
    use criterion::criterion_group;
    criterion_group!(
        benches,
        bench_reshape,
        bench_merge,
        bench_stack,
        bench_op_latency,
        bench_symbolic_latency,
        bench_bind,
        bench_prepared_stack
    );
}

criterion_main!(group::benches);
