//! Large views: reshape and merge decide structurally, and agree with the stack
//! semantics on sampled elements.

use symshape::Scope;
use symshape_view::concrete::{merge, unravel};
use symshape_view::{ConcreteStack, ConcreteView, ViewOps};

fn cv(shape: &[i64]) -> ConcreteView {
    ConcreteView::contiguous(shape).expect("contiguous")
}

/// Sampled elements of `merged` agree with the two-view stack they replace.
fn agrees(lower: &ConcreteView, upper: &ConcreteView, merged: &ConcreteView) {
    let stack = ConcreteStack::unmerged(vec![lower.clone(), upper.clone()]).expect("stack");
    let n = upper.numel();
    let mut x: i64 = 12345;
    for _ in 0..2000 {
        x = (x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407))
        .rem_euclid(1 << 62);
        let idx = unravel(upper.shape(), x % n);
        assert_eq!(
            merged.offset_of(&idx).unwrap(),
            stack.offset_of(&idx).unwrap(),
            "at {idx:?}"
        );
    }
}

fn check(lower: &ConcreteView, upper: &ConcreteView) -> String {
    match merge(lower, upper).expect("in range") {
        Some(m) => {
            agrees(lower, upper, &m);
            m.to_string()
        }
        None => "not one view".to_string(),
    }
}

#[test]
fn transposed_under_reshape_is_not_one_view() {
    let cx = Scope::new();
    let lower = cv(&[4096, 4096]).permute(&cx, &[1, 0]).unwrap();
    insta::assert_snapshot!(check(&lower, &cv(&[2048, 8192])), @"not one view");
}

#[test]
fn strided_select_of_a_transpose() {
    let cx = Scope::new();
    let lower = cv(&[4096, 4096]).permute(&cx, &[1, 0]).unwrap();
    let upper = ConcreteView::create(&[4096, 2048], Some(&[4096, 2]), 0, None).unwrap();
    insta::assert_snapshot!(check(&lower, &upper), @"view shape=[4096, 2048] strides=[1, 8192] offset=0 mask=none");
}

#[test]
fn pad_reshape_shrink_at_256_cubed() {
    let cx = Scope::new();
    let lower = cv(&[256, 256, 256])
        .pad(&cx, &[(1, 1), (0, 0), (0, 0)])
        .unwrap();
    let upper = cv(&[258 * 256, 256])
        .shrink(&cx, &[(256, 257 * 256), (0, 256)])
        .unwrap();
    insta::assert_snapshot!(check(&lower, &upper), @"view shape=[65536, 256] strides=[256, 1] offset=0 mask=none");
}

#[test]
fn padded_rows_flattened_stay_two_views() {
    let cx = Scope::new();
    let lower = cv(&[4096, 4096]).pad(&cx, &[(0, 0), (0, 1)]).unwrap();
    let upper = cv(&[4096 * 4097]);
    insta::assert_snapshot!(check(&lower, &upper), @"not one view");
}

#[test]
fn masked_block_reshape_at_scale() {
    let cx = Scope::new();
    let v = cv(&[4096, 4096])
        .pad(&cx, &[(0, 0), (0, 4096)])
        .unwrap()
        .shrink(&cx, &[(0, 1), (0, 8192)])
        .unwrap();
    insta::assert_snapshot!(v.reshape(&cx, &[2, 4096]).unwrap(), @"view shape=[2, 4096] strides=[0, 1] offset=0 mask=[(0, 1), (0, 4096)]");
}

#[test]
fn transposed_reshape_refused_at_scale() {
    let cx = Scope::new();
    let v = cv(&[4096, 4096]).permute(&cx, &[1, 0]).unwrap();
    insta::assert_snapshot!(v.reshape(&cx, &[2048, 8192]).unwrap_err(), @"reshape: cannot reshape [4096, 4096] with strides [1, 4096] to [2048, 8192]; call contiguous() first");
}

#[test]
fn spanning_axis_is_split_then_merged_back() {
    let cx = Scope::new();
    // The upper axis of 2 * 4096 elements spans two digits of the lower view; the
    // split composition is one view but its two parts do not glue back.
    let lower = cv(&[4096, 4096]).permute(&cx, &[1, 0]).unwrap();
    let upper = cv(&[2048, 8192])
        .shrink(&cx, &[(0, 2048), (0, 4096)])
        .unwrap();
    insta::assert_snapshot!(check(&lower, &upper), @"view shape=[2048, 4096] strides=[2, 4096] offset=0 mask=none");
    let lower = cv(&[8, 4096, 4096])
        .pad(&cx, &[(0, 0), (0, 0), (0, 0)])
        .unwrap()
        .permute(&cx, &[0, 2, 1])
        .unwrap();
    let upper = cv(&[8, 4096 * 4096]);
    insta::assert_snapshot!(check(&lower, &upper), @"not one view");
}
