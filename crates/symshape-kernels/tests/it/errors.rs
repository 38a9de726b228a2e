//! Error messages of the safety rules: out of buffer, self-overlap, shapes, stacks, limits.

use crate::gen::{lay, WithMask};
use symshape_kernels::{
    copy, copy_within, fill, materialize, reduce, zip, ConcreteStack, ConcreteView, Error, Input,
    Output, ReduceConfig, ReduceOp,
};

/// The message of an error, or `ok`.
fn msg<T, E: std::fmt::Display>(r: Result<T, E>) -> String {
    match r {
        Ok(_) => "ok".to_string(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn stack_construction() {
    insta::assert_snapshot!(msg(ConcreteStack::unmerged(vec![])), @"stack: a stack needs at least one view");
    let below = lay(&[2, 3], &[3, 1], 0);
    insta::assert_snapshot!(msg(ConcreteStack::unmerged(vec![below.clone(), lay(&[7], &[1], 0)])), @"merge: upper view [7] with strides [1] reaches elements 0..=6 outside the 6 elements of lower view [2, 3] with strides [3, 1]");
    insta::assert_snapshot!(msg(ConcreteStack::unmerged(vec![below.clone(), lay(&[3], &[-1], 1)])), @"merge: upper view [3] with strides [-1], offset 1 reaches elements -1..=1 outside the 6 elements of lower view [2, 3] with strides [3, 1]");
    // Masked-out elements may point anywhere.
    let masked = lay(&[7], &[1], 0).with_mask(&[(0, 6)]).unwrap();
    insta::assert_snapshot!(msg(ConcreteStack::unmerged(vec![below, masked])), @"ok");
}

#[test]
fn out_of_buffer() {
    let buf = vec![0i32; 6];
    insta::assert_snapshot!(msg(materialize(Input::new(&buf, &lay(&[2, 4], &[4, 1], 0)))), @"materialize: source view reaches offsets 0..=7 but its buffer holds 6 elements");
    insta::assert_snapshot!(msg(materialize(Input::new(&buf, &lay(&[3], &[-1], 1)))), @"materialize: source view reaches offsets -1..=1 but its buffer holds 6 elements");
    // Only valid elements count.
    let masked = lay(&[8], &[1], -1).with_mask(&[(1, 7)]).unwrap();
    insta::assert_snapshot!(msg(materialize(Input::new(&buf, &masked))), @"ok");
    let mut dst = vec![0i32; 4];
    let rows = lay(&[2, 3], &[3, 1], 0);
    insta::assert_snapshot!(msg(copy(Input::new(&buf, &rows), Output::new(&mut dst, &rows))), @"copy: destination view reaches offsets 0..=5 but its buffer holds 4 elements");
    insta::assert_snapshot!(msg(fill(Output::new(&mut dst, &lay(&[5], &[1], 0)), 1)), @"fill: destination view reaches offsets 0..=4 but its buffer holds 4 elements");
    let view = lay(&[2, 3], &[3, 1], 0);
    let plan = symshape_kernels::plan_materialize::<i32>(&view).unwrap();
    insta::assert_snapshot!(msg(plan.run_materialize(&buf, &mut [0i32; 5], 0)), @"materialize: output holds 5 elements but shape [2, 3] needs 6");
    let plan = symshape_kernels::plan_materialize::<f32>(&view).unwrap();
    insta::assert_snapshot!(msg(plan.run_materialize(&buf, &mut [0i32; 6], 0)), @"materialize: plan was made for f32 elements but run on i32");
    // A stack reads what its table holds: elements 0 and 1 of the bottom.
    let s = ConcreteStack::unmerged(vec![lay(&[10], &[1], 0), lay(&[2], &[1], 0)]).unwrap();
    insta::assert_snapshot!(msg(materialize(Input::new(&buf[..1], &s))), @"materialize: source view reaches offsets 0..=1 but its buffer holds 1 elements");
}

#[test]
fn self_overlapping_destinations() {
    let mut buf = vec![0i32; 16];
    let src = lay(&[2, 3], &[3, 1], 0);
    let src_buf = vec![1i32; 6];
    insta::assert_snapshot!(msg(copy(Input::new(&src_buf, &src), Output::new(&mut buf, &lay(&[2, 3], &[0, 1], 0)))), @"copy: destination view shape=[2, 3] strides=[0, 1] offset=0 mask=none reaches some element through two indices");
    insta::assert_snapshot!(msg(copy(Input::new(&src_buf, &src), Output::new(&mut buf, &lay(&[2, 3], &[2, 1], 0)))), @"copy: destination view shape=[2, 3] strides=[2, 1] offset=0 mask=none reaches some element through two indices");
    insta::assert_snapshot!(msg(fill(Output::new(&mut buf, &lay(&[3, 2], &[1, 1], 0)), 1)), @"fill: destination view shape=[3, 2] strides=[1, 1] offset=0 mask=none reaches some element through two indices");
    // Not nested by stride, yet no two indices meet: accepted by the exact check.
    insta::assert_snapshot!(msg(fill(Output::new(&mut buf, &lay(&[2, 2], &[3, 2], 0)), 1)), @"ok");
    // A mask that hides the overlapping part makes it legal.
    let hidden = lay(&[2, 3], &[2, 1], 0)
        .with_mask(&[(0, 2), (0, 2)])
        .unwrap();
    insta::assert_snapshot!(msg(fill(Output::new(&mut buf, &hidden), 1)), @"ok");
    // Too large to enumerate and not provably nested: rejected conservatively.
    let mut big = vec![0u8; 1 << 22];
    let odd = lay(&[1024, 1025], &[1024, 3], 0);
    insta::assert_snapshot!(msg(fill(Output::new(&mut big, &odd), 1)), @"fill: cannot prove destination view shape=[1024, 1025] strides=[1024, 3] offset=0 mask=none free of self-overlap (its axes sorted by stride do not nest, and it has more than 1048576 valid elements to compare)");
    // A destination stack: each level must be free of overlap.
    let twice =
        ConcreteStack::unmerged(vec![lay(&[4], &[1], 0), lay(&[2, 2], &[0, 1], 0)]).unwrap();
    insta::assert_snapshot!(msg(fill(Output::new(&mut buf, &twice), 1)), @"fill: destination view shape=[2, 2] strides=[0, 1] offset=0 mask=none reaches some element through two indices");
    // Even where the level above reads only one of the two indices: the rule is per level,
    // as conservative as PyTorch's refusal of a written tensor with internal overlap.
    let once = ConcreteStack::unmerged(vec![
        lay(&[4], &[1], 0),
        lay(&[2, 2], &[0, 1], 0),
        lay(&[2], &[1], 0),
    ])
    .unwrap();
    insta::assert_snapshot!(msg(fill(Output::new(&mut buf, &once), 1)), @"fill: destination view shape=[2, 2] strides=[0, 1] offset=0 mask=none reaches some element through two indices");
}

#[test]
fn shapes() {
    let buf = vec![0i32; 6];
    let mut dst = vec![0i32; 6];
    insta::assert_snapshot!(msg(copy(Input::new(&buf, &lay(&[2, 3], &[3, 1], 0)), Output::new(&mut dst, &lay(&[6], &[1], 0)))), @"copy: destination shape [6] differs from source shape [2, 3]");
    insta::assert_snapshot!(msg(copy_within(&mut dst, &lay(&[3], &[1], 0), &lay(&[2], &[1], 0), 0)), @"copy: destination shape [2] differs from source shape [3]");
    insta::assert_snapshot!(msg(zip(Input::new(&buf, &lay(&[2, 3], &[3, 1], 0)), Input::new(&buf, &lay(&[2], &[1], 0)), |a, b| a + b)), @"zip: shapes [2, 3] and [2] do not broadcast");
    insta::assert_snapshot!(msg(reduce(Input::new(&buf, &lay(&[2, 3], &[3, 1], 0)), &[2], ReduceOp::Sum, ReduceConfig::default())), @"reduce: axis 2 is out of range or repeated for a view with 2 axes");
    insta::assert_snapshot!(msg(reduce(Input::new(&buf, &lay(&[2, 3], &[3, 1], 0)), &[1, 1], ReduceOp::Sum, ReduceConfig::default())), @"reduce: axis 1 is out of range or repeated for a view with 2 axes");
}

#[test]
fn allocation_limits() {
    // A broadcast of one element to 2^62 elements: refused, not aborted.
    let huge = ConcreteView::create(&[1 << 62], Some(&[0]), 0, None).unwrap();
    let one = [1i64];
    let r: Result<_, Error> = materialize(Input::new(&one, &huge));
    insta::assert_snapshot!(msg(r), @"materialize: 4611686018427387904 elements of 8 bytes exceed the allocation limit of 17179869184 bytes");
    insta::assert_snapshot!(msg(symshape_kernels::map(Input::new(&one, &huge), |x| x + 1)), @"map: 4611686018427387904 elements of 8 bytes exceed the allocation limit of 17179869184 bytes");
    // Two broadcasts whose common shape has 2^64 elements.
    let col = ConcreteView::create(&[1 << 32, 1], Some(&[0, 0]), 0, None).unwrap();
    let row = ConcreteView::create(&[1, 1 << 32], Some(&[0, 0]), 0, None).unwrap();
    insta::assert_snapshot!(msg(zip(Input::new(&one, &col), Input::new(&one, &row), |a, b| a + b)), @"zip: 18446744073709551616 elements of 8 bytes exceed the address range");
}

/// An empty view has no element whatever its other sizes: materializing it gives an empty
/// result, where the product of its sizes before the 0 leaves the address range.
#[test]
fn empty_views_of_huge_sizes_materialize_to_nothing() {
    let huge = 1i64 << 32;
    let v = ConcreteView::create(&[huge, huge, 0], Some(&[0, 0, 0]), 0, None).expect("view");
    let got = materialize(Input::new(&[0i64], &v)).expect("empty");
    assert!(got.values.is_empty());
    assert_eq!(got.shape, vec![huge as usize, huge as usize, 0]);
}
