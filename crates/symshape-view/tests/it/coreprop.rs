//! The core ops, one dispatcher for both engines: a random constant view and core op
//! run by the exact engine, and the same view with symbolic sizes run by the symbolic
//! engine and bound afterwards, must read the same elements (or both refuse).

use proptest::prelude::*;
use symshape::Expr;
use symshape_view::{Error, Op, View};

use crate::indexprop::symbolic_view;
use crate::strategy::{arb_raw, Raw};

/// A size near `d`: mostly `d` itself, sometimes another small one.
fn near(d: i64) -> impl Strategy<Value = i64> {
    prop_oneof![3 => Just(d), 1 => 0i64..=4]
}

/// A range of an axis of size `d`: mostly inside it.
fn range(d: i64) -> impl Strategy<Value = (i64, i64)> {
    prop_oneof![
        4 => (0..=d).prop_flat_map(move |s| (Just(s), s..=d)),
        1 => (-1i64..=5, -1i64..=5),
    ]
}

/// A core op (with `i64` arguments) for a view of `shape`, mostly valid.
fn arb_core_op(shape: Vec<i64>) -> impl Strategy<Value = Op<i64>> {
    let n = shape.len();
    let axis = 0..n.max(1);
    let numel: i64 = shape.iter().product();
    let ones: Vec<_> = shape
        .iter()
        .map(|&d| {
            if d == 1 {
                (0i64..=3).boxed()
            } else {
                near(d).boxed()
            }
        })
        .collect();
    let ranges: Vec<_> = shape.iter().map(|&d| range(d)).collect();
    let pads = prop::collection::vec((0i64..=2, 0i64..=2), n);
    let d0 = shape.first().copied().unwrap_or(0);
    prop_oneof![
        Just((0..n).collect::<Vec<_>>())
            .prop_shuffle()
            .prop_map(Op::Permute),
        ones.prop_map(Op::Expand),
        ranges.prop_map(Op::Shrink),
        pads.prop_map(Op::Pad),
        prop::collection::vec(axis.clone(), 0..=2).prop_map(Op::Flip),
        (0..=n).prop_map(Op::Unsqueeze),
        Just(Op::Reshape(vec![numel])),
        Just(Op::ViewShape(vec![numel])),
        Just(Op::Ravel),
        Just(Op::Contiguous),
        (axis.clone(), 1i64..=3, 0i64..=2).prop_map(|(axis, size, piece)| Op::Split {
            axis,
            size,
            piece
        }),
        (axis.clone(), 1usize..=3, 0usize..=2).prop_map(|(axis, chunks, piece)| Op::Chunk {
            axis,
            chunks,
            piece
        }),
        (axis.clone(), 1usize..=3, 0usize..=2).prop_map(|(axis, sections, piece)| {
            Op::TensorSplit {
                axis,
                sections,
                piece,
            }
        }),
        (0..=d0, 0usize..=1).prop_map(move |(k, piece)| Op::SplitSizes {
            axis: 0,
            sizes: vec![k, d0 - k],
            piece
        }),
        (axis.clone(), 0i64..=3, 1i64..=2).prop_map(|(axis, size, step)| Op::Unfold {
            axis,
            size,
            step
        }),
        (-2i64..=2, axis.clone(), axis).prop_map(|(offset, dim1, dim2)| Op::Diagonal {
            offset,
            dim1,
            dim2
        }),
    ]
}

fn arb_case() -> impl Strategy<Value = (Raw, Op<i64>)> {
    arb_raw(3, 0, 4).prop_flat_map(|raw| {
        let op = arb_core_op(raw.shape.clone());
        (Just(raw), op)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn both_engines_run_a_core_op_alike((raw, op) in arb_case()) {
        let Some(cv) = raw.concrete_view() else {
            return Ok(());
        };
        let Some((cx, sv, b)) = symbolic_view(&raw) else {
            return Ok(());
        };
        let exact = cv.apply(&op);
        let symbolic = View::apply(&sv, &cx, &op.map(Expr::from));
        let bound = symbolic.as_ref().map(|v| v.bind(&cx, &b));
        match (&exact, bound) {
            (Ok(e), Ok(Ok(s))) => prop_assert_eq!(
                s.offsets().expect("offsets"),
                e.offsets().expect("offsets"),
                "{} on {} gave {} and, bound, {}", op, sv, e, s
            ),
            // Whether the result is one view may depend on the values of the symbols.
            (Ok(_), Err(Error::NotRepresentable { .. })) => {}
            // An axis that is not provably 1 keeps its size (a documented restriction).
            (Ok(_), Err(Error::Guard { .. }) | Ok(Err(Error::Guard { .. })))
                if matches!(op, Op::Expand(_)) => {}
            (Ok(e), s) => prop_assert!(false, "{} on {} gave {}, symbolically {:?}", op, sv, e, s),
            // A refusal of the exact engine is one of the symbolic engine for these values:
            // at once, or a guard that the binding fails.
            (Err(_), Err(_) | Ok(Err(_))) => {}
            (Err(e), Ok(Ok(s))) => {
                prop_assert!(false, "{} on {} failed ({}) but, bound, gave {}", op, sv, e, s);
            }
        }
    }
}
