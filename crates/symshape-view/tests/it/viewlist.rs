//! The rest of PyTorch's view op list (tensor_split, hsplit/vsplit/dsplit, T, mT,
//! expand_as, view_as, reshape_as), each against the model on random views.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope};
use symshape_view::{ConcreteView, Error, Op, View, ViewOps, ViewStack};

use crate::engine::model_of_view;
use crate::model::{py_slice, Model};
use crate::scope_with;
use crate::strategy::arb_raw;

/// The model of `tensor_split(axis, n)`: indices dealt out in order, the first
/// `d % n` pieces taking one index more than the others (PyTorch's docs).
fn sections_model(d: i64, n: i64) -> Vec<Vec<i64>> {
    let mut pieces = Vec::new();
    let mut next = 0;
    for k in 0..n {
        let len = if k < d % n { d / n + 1 } else { d / n };
        pieces.push((next..next + len).collect::<Vec<_>>());
        next += len;
    }
    pieces
}

/// The model of `tensor_split` at `indices`: piece `k` is the Python slice
/// `indices[k-1]:indices[k]` of the axis.
fn at_model(d: i64, indices: &[i64]) -> Vec<Vec<i64>> {
    (0..=indices.len())
        .map(|k| {
            let start = k.checked_sub(1).map(|j| indices[j]);
            py_slice(d, start, indices.get(k).copied(), 1)
        })
        .collect()
}

/// The model restricted to the listed indices of `axis`.
fn take(m: &Model, axis: usize, picks: &[i64]) -> Model {
    let mut shape = m.shape.clone();
    shape[axis] = picks.len() as i64;
    m.map(shape, |idx| {
        let mut src = idx.to_vec();
        src[axis] = picks[idx[axis] as usize];
        Some(src)
    })
}

fn check_pieces(
    got: Result<Vec<ViewStack>, Error>,
    m: &Model,
    axis: usize,
    want: &[Vec<i64>],
) -> Result<(), TestCaseError> {
    let got = got.map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(got.len(), want.len());
    for (piece, picks) in got.iter().zip(want) {
        let c = piece.to_concrete("test").expect("concrete");
        let v = c.to_view().expect("one view");
        prop_assert_eq!(&model_of_view(v), &take(m, axis, picks));
    }
    Ok(())
}

proptest! {
    #[test]
    fn tensor_split_matches_the_model(
        raw in arb_raw(3, 0, 6),
        n in 1usize..6,
        indices in prop::collection::vec(-8i64..=8, 0..4),
        pick in 0usize..8,
    ) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        if c.ndim() == 0 {
            return Ok(());
        }
        let cx = Scope::new();
        let m = model_of_view(&c);
        let axis = pick % c.ndim();
        let d = c.shape()[axis];
        let st = ViewStack::new(View::from(&c));
        check_pieces(st.tensor_split(&cx, axis, n), &m, axis, &sections_model(d, n as i64))?;
        check_pieces(st.tensor_split_at(&cx, axis, &indices), &m, axis, &at_model(d, &indices))?;
        // Symbolic indices, written `i + z` with `z` in 0..=0, agree once bound.
        let (scx, [z]) = scope_with(["z 0..=0"]);
        let mut b = Bindings::new();
        b.set(z, 0).expect("z");
        let sym: Vec<Expr> = indices.iter().map(|&i| Expr::from(i) + z).collect();
        for (k, picks) in at_model(d, &indices).iter().enumerate() {
            let op = Op::TensorSplitAt { axis, indices: sym.clone(), piece: k };
            let got = st.apply(&scx, &op).and_then(|s| s.bind(&scx, &b));
            let got = got.map_err(|e| TestCaseError::fail(format!("{op}: {e}")))?;
            let v = got.to_view().expect("one view");
            prop_assert_eq!(&model_of_view(v), &take(&m, axis, picks), "{}", op);
        }
    }

    #[test]
    fn directional_splits_match_the_model(
        raw in arb_raw(4, 0, 6),
        n in 1usize..5,
        indices in prop::collection::vec(-8i64..=8, 0..3),
    ) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let m = model_of_view(&c);
        let rank = c.ndim();
        let st = ViewStack::new(View::from(&c));
        // PyTorch's axes and minimal ranks, written out independently of the library.
        let cases: [(&str, usize, usize); 3] =
            [("hsplit", 1, usize::from(rank > 1)), ("vsplit", 2, 0), ("dsplit", 3, 2)];
        for (name, need, axis) in cases {
            let (by_sections, at) = match name {
                "hsplit" => (st.hsplit(&cx, n), st.hsplit_at(&cx, &indices)),
                "vsplit" => (st.vsplit(&cx, n), st.vsplit_at(&cx, &indices)),
                _ => (st.dsplit(&cx, n), st.dsplit_at(&cx, &indices)),
            };
            if rank < need {
                prop_assert!(by_sections.is_err() && at.is_err(), "{} on rank {}", name, rank);
                continue;
            }
            let d = c.shape()[axis];
            if d % n as i64 == 0 {
                check_pieces(by_sections, &m, axis, &sections_model(d, n as i64))?;
            } else {
                let e = by_sections.err().map(|e| e.to_string()).unwrap_or_default();
                prop_assert!(e.contains("divisible"), "{} of size {} by {}: {}", name, d, n, e);
            }
            check_pieces(at, &m, axis, &at_model(d, &indices))?;
        }
    }

    #[test]
    fn axis_reversals_match_the_model(raw in arb_raw(4, 0, 4)) {
        let cx = Scope::new();
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let m = model_of_view(&c);
        let rank = c.ndim();
        let rev: Vec<usize> = (0..rank).rev().collect();
        prop_assert_eq!(model_of_view(&c.reverse_axes(&cx).expect("T")), m.permute(&rev));
        match c.matrix_transpose(&cx) {
            Ok(t) => {
                // PyTorch returns a tensor of rank 0 as it is.
                let mut axes: Vec<usize> = (0..rank).collect();
                if rank >= 2 {
                    axes.swap(rank - 2, rank - 1);
                }
                prop_assert_eq!(model_of_view(&t), m.permute(&axes));
            }
            Err(e) => prop_assert!(rank == 1, "{}", e),
        }
        // The same ops through `ViewOps` on a `View`.
        let cx = Scope::new();
        let v = View::from(&c);
        prop_assert_eq!(v.reverse_axes(&cx).expect("T").as_concrete().cloned(), c.reverse_axes(&cx).ok());
        prop_assert_eq!(v.adjoint(&cx).ok().and_then(|t| t.as_concrete().cloned()), c.matrix_transpose(&cx).ok());
    }

    #[test]
    fn as_ops_take_the_other_shape(raw in arb_raw(3, 0, 4), seed in 0u32..1000) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let m = model_of_view(&c);
        let st = ViewStack::new(View::from(&c));
        // reshape_as: the shape of a contiguous view with the same element count.
        let target = crate::strategy::factor_shape(c.numel(), &[seed, seed / 7, seed / 49]);
        let other = ViewStack::new(View::contiguous(&target).expect("other"));
        let r = st.reshape_as(&cx, &other).expect("reshape_as");
        let bound = r.to_concrete("test").expect("concrete");
        prop_assert_eq!(bound.offsets().expect("offsets"), m.reshape(&target).table);
        // view_as: succeeds exactly when the reshape is one view.
        match st.view_as(&cx, &other) {
            Ok(v) => {
                prop_assert_eq!(v.views().len(), 1);
                prop_assert_eq!(&model_of_view(v.top().as_concrete().expect("c")), &m.reshape(&target));
            }
            Err(Error::NotRepresentable { op, .. }) => {
                prop_assert_eq!(op, "view_as");
                prop_assert!(m.reshape(&target).one_view().is_none());
            }
            Err(e) => prop_assert!(false, "{}", e),
        }
        // expand_as: size-1 axes grow to the other's sizes.
        let grown: Vec<i64> = c.shape().iter().map(|&d| if d == 1 { 3 } else { d }).collect();
        let other = View::contiguous(&grown).expect("grown");
        let e = View::from(&c).expand_as(&cx, &other).expect("expand_as");
        prop_assert_eq!(model_of_view(e.as_concrete().expect("c")), m.expand(&grown));
    }
}

/// Symbolic `tensor_split` by sections: bound at every size, the pieces are those
/// of the concrete op on the bound view.
#[test]
fn symbolic_sections_agree_with_concrete_pieces() {
    let (cx, [n]) = scope_with(["n 0..=9"]);
    let sym = View::row_major(&cx, &[n, Expr::from(2)]).expect("view");
    for sections in 1..=4usize {
        let pieces = sym.tensor_split(&cx, 0, sections).expect("pieces");
        assert!(pieces.iter().all(|p| p.guards().is_empty()));
        for value in 0..=9 {
            let mut b = Bindings::new();
            b.set(n, value).expect("n");
            let c = ConcreteView::contiguous(&[value, 2]).expect("c");
            for (k, p) in pieces.iter().enumerate() {
                let want = c
                    .apply(&Op::TensorSplit {
                        axis: 0,
                        sections,
                        piece: k,
                    })
                    .expect("piece");
                assert_eq!(p.bind(&cx, &b).expect("bind"), want, "n={value} piece {k}");
            }
        }
    }
}

#[test]
fn directional_splits() {
    let cx = Scope::new();
    let shapes = |r: Result<Vec<View>, Error>| match r {
        Ok(v) => v
            .iter()
            .map(|p| format!("{:?}", p.as_concrete().expect("c").shape()))
            .collect::<Vec<_>>()
            .join(" "),
        Err(e) => e.to_string(),
    };
    let v1 = View::contiguous(&[6]).expect("v");
    let v3 = View::contiguous(&[4, 6, 2]).expect("v");
    let lines = [
        format!("hsplit rank 1: {}", shapes(v1.hsplit(&cx, 3))),
        format!("hsplit rank 3: {}", shapes(v3.hsplit(&cx, 2))),
        format!("hsplit at: {}", shapes(v3.hsplit_at(&cx, &[1i64, 4]))),
        format!("vsplit: {}", shapes(v3.vsplit(&cx, 4))),
        format!("vsplit at: {}", shapes(v3.vsplit_at(&cx, &[-1i64]))),
        format!("dsplit: {}", shapes(v3.dsplit(&cx, 2))),
        format!("dsplit at: {}", shapes(v3.dsplit_at(&cx, &[5i64]))),
        format!(
            "hsplit rank 0: {}",
            shapes(View::contiguous(&[]).expect("v").hsplit(&cx, 1))
        ),
        format!("vsplit rank 1: {}", shapes(v1.vsplit(&cx, 2))),
        format!(
            "dsplit rank 2: {}",
            shapes(View::contiguous(&[2, 2]).expect("v").dsplit(&cx, 2))
        ),
        format!("hsplit indivisible: {}", shapes(v3.hsplit(&cx, 4))),
        format!("hsplit zero: {}", shapes(v3.hsplit(&cx, 0))),
        format!("tensor_split zero: {}", shapes(v3.tensor_split(&cx, 0, 0))),
        format!("tensor_split axis: {}", shapes(v3.tensor_split(&cx, 3, 2))),
        format!(
            "tensor_split more than the axis: {}",
            shapes(v3.tensor_split(&cx, 2, 5))
        ),
        format!(
            "mT rank 1: {}",
            v1.matrix_transpose(&cx)
                .map_or_else(|e| e.to_string(), |v| v.to_string())
        ),
    ];
    insta::assert_snapshot!(lines.join("\n"), @"
    hsplit rank 1: [2] [2] [2]
    hsplit rank 3: [4, 3, 2] [4, 3, 2]
    hsplit at: [4, 1, 2] [4, 3, 2] [4, 2, 2]
    vsplit: [1, 6, 2] [1, 6, 2] [1, 6, 2] [1, 6, 2]
    vsplit at: [3, 6, 2] [1, 6, 2]
    dsplit: [4, 6, 1] [4, 6, 1]
    dsplit at: [4, 6, 2] [4, 6, 0]
    hsplit rank 0: hsplit: torch.hsplit requires a tensor with at least 1 dimension, but view [] with strides [] has 0
    vsplit rank 1: vsplit: torch.vsplit requires a tensor with at least 2 dimensions, but view [6] with strides [1] has 1
    dsplit rank 2: dsplit: torch.dsplit requires a tensor with at least 3 dimensions, but view [2, 2] with strides [2, 1] has 2
    hsplit indivisible: hsplit: torch.hsplit attempted to split along dimension 1, but the size of the dimension 6 is not divisible by the split_size 4, for view [4, 6, 2] with strides [12, 2, 1]
    hsplit zero: hsplit: number of sections must be larger than 0, got 0, for axis 1 of view [4, 6, 2] with strides [12, 2, 1]
    tensor_split zero: tensor_split: number of sections must be larger than 0, got 0, for axis 0 of view [4, 6, 2] with strides [12, 2, 1]
    tensor_split axis: tensor_split: axis 3 is out of range for view [4, 6, 2] with strides [12, 2, 1] of rank 3
    tensor_split more than the axis: [4, 6, 1] [4, 6, 1] [4, 6, 0] [4, 6, 0] [4, 6, 0]
    mT rank 1: mT: tensor.mT is only supported on matrices or batches of matrices, but view [6] with strides [1] is a 1-D tensor
    ");
}

#[test]
fn symbolic_directional_split_needs_provable_divisibility() {
    let (cx, [n]) = scope_with(["n 1..=64"]);
    let sym = View::row_major(&cx, &[Expr::from(2), n * 4]).expect("view");
    let pieces = sym.hsplit(&cx, 2).expect("4*n splits in two");
    assert_eq!(pieces.len(), 2);
    assert_eq!(
        pieces[1].to_string(),
        "view shape=[2, 2*n] strides=[4*n, 1] offset=2*n mask=none"
    );
    let err = sym
        .hsplit(&cx, 3)
        .expect_err("3 does not provably divide 4*n");
    insta::assert_snapshot!(err.to_string(), @"hsplit: torch.hsplit attempted to split along dimension 1, but the size of the dimension 4*n is not provably divisible by the split_size 3, for view [2, 4*n] with strides [4*n, 1]");
}
