//! Error messages of the safety rules: out of buffer, self-overlap, shapes, stacks.

use symshape_kernels::{
    copy, copy_within, fill, materialize, materialize_into, reduce, zip, KernelError, Layout,
    LayoutStack, ReduceConfig, ReduceOp,
};

/// The message of an error, or `ok`.
fn msg<T>(r: Result<T, KernelError>) -> String {
    match r {
        Ok(_) => "ok".to_string(),
        Err(e) => e.to_string(),
    }
}

fn lay(shape: &[usize], strides: &[isize], offset: isize) -> Layout {
    Layout::new(shape, strides, offset).unwrap()
}

#[test]
fn layout_construction() {
    insta::assert_snapshot!(msg(Layout::new(&[2, 3], &[1], 0)), @"layout: shape [2, 3] has 2 axes but strides has 1");
    insta::assert_snapshot!(msg(lay(&[2, 3], &[3, 1], 0).with_mask(&[(0, 2)])), @"layout: shape [2, 3] has 2 axes but mask has 1");
    insta::assert_snapshot!(msg(lay(&[2, 3], &[3, 1], 0).with_mask(&[(0, 2), (2, 4)])), @"layout: mask (2, 4) of axis 1 is not inside 0..3");
    insta::assert_snapshot!(msg(Layout::new(&[usize::MAX, 2], &[1, 1], 0)), @"layout: shape [18446744073709551615, 2] with strides [1, 1] and offset 0 overflows the address range");
    insta::assert_snapshot!(msg(Layout::new(&[1 << 40], &[1 << 40], 0)), @"layout: shape [1099511627776] with strides [1099511627776] and offset 0 overflows the address range");
    insta::assert_snapshot!(msg(lay(&[2, 3], &[3, 1], 0).permuted(&[0, 0])), @"permute: [0, 0] is not a permutation of 2 axes");
}

#[test]
fn stack_construction() {
    insta::assert_snapshot!(msg(LayoutStack::new(vec![])), @"stack: a layout stack needs at least one layout");
    let below = lay(&[2, 3], &[3, 1], 0);
    insta::assert_snapshot!(msg(LayoutStack::new(vec![below.clone(), lay(&[7], &[1], 0)])), @"stack: layout 1 reaches linear indices 0..=6 but layout 0 below it has 6 elements");
    insta::assert_snapshot!(msg(LayoutStack::new(vec![below.clone(), lay(&[3], &[-1], 1)])), @"stack: layout 1 reaches linear indices -1..=1 but layout 0 below it has 6 elements");
    // Masked-out elements may point anywhere.
    let masked = lay(&[7], &[1], 0).with_mask(&[(0, 6)]).unwrap();
    insta::assert_snapshot!(msg(LayoutStack::new(vec![below, masked])), @"ok");
}

#[test]
fn out_of_buffer() {
    let buf = vec![0i32; 6];
    insta::assert_snapshot!(msg(materialize(&buf, &lay(&[2, 4], &[4, 1], 0), 0)), @"materialize: source view reaches offsets 0..=7 but the buffer holds 6 elements");
    insta::assert_snapshot!(msg(materialize(&buf, &lay(&[3], &[-1], 1), 0)), @"materialize: source view reaches offsets -1..=1 but the buffer holds 6 elements");
    // Only valid elements count.
    let masked = lay(&[8], &[1], -1).with_mask(&[(1, 7)]).unwrap();
    insta::assert_snapshot!(msg(materialize(&buf, &masked, 0)), @"ok");
    let mut dst = vec![0i32; 4];
    insta::assert_snapshot!(msg(copy(&mut dst, &lay(&[2, 3], &[3, 1], 0), &buf, &lay(&[2, 3], &[3, 1], 0), 0)), @"copy: destination view reaches offsets 0..=5 but the buffer holds 4 elements");
    insta::assert_snapshot!(msg(fill(&mut dst, &lay(&[5], &[1], 0), 1)), @"fill: destination view reaches offsets 0..=4 but the buffer holds 4 elements");
    let mut out = vec![0i32; 5];
    insta::assert_snapshot!(msg(materialize_into(&buf, &lay(&[2, 3], &[3, 1], 0), 0, &mut out)), @"materialize: output holds 5 elements but shape [2, 3] needs 6");
    let view = lay(&[2, 3], &[3, 1], 0);
    let plan = symshape_kernels::plan_materialize::<f32>(&view).unwrap();
    insta::assert_snapshot!(msg(plan.run_materialize(&buf, &mut [0i32; 6], 0)), @"materialize: plan was made for f32 elements but run on i32");
    // A stack is checked through its bottom layout.
    let s = LayoutStack::new(vec![lay(&[10], &[1], 0), lay(&[2], &[1], 0)]).unwrap();
    insta::assert_snapshot!(msg(materialize(&buf, &s, 0)), @"materialize: source view reaches offsets 0..=9 but the buffer holds 6 elements");
}

#[test]
fn self_overlapping_destinations() {
    let mut buf = vec![0i32; 16];
    let src = lay(&[2, 3], &[3, 1], 0);
    let src_buf = vec![1i32; 6];
    insta::assert_snapshot!(msg(copy(&mut buf, &lay(&[2, 3], &[0, 1], 0), &src_buf, &src, 0)), @"copy: destination view [2, 3] with strides [0, 1] reaches some element through two indices");
    insta::assert_snapshot!(msg(copy(&mut buf, &lay(&[2, 3], &[2, 1], 0), &src_buf, &src, 0)), @"copy: destination view [2, 3] with strides [2, 1] reaches some element through two indices");
    insta::assert_snapshot!(msg(fill(&mut buf, &lay(&[3, 2], &[1, 1], 0), 1)), @"fill: destination view [3, 2] with strides [1, 1] reaches some element through two indices");
    // Not nested by stride, yet no two indices meet: accepted by the exact check.
    insta::assert_snapshot!(msg(fill(&mut buf, &lay(&[2, 2], &[3, 2], 0), 1)), @"ok");
    // A mask that hides the overlapping part makes it legal.
    insta::assert_snapshot!(msg(fill(&mut buf, &lay(&[2, 3], &[2, 1], 0).with_mask(&[(0, 2), (0, 2)]).unwrap(), 1)), @"ok");
    // Too large to enumerate and not provably nested: rejected conservatively.
    let mut big = vec![0u8; 1 << 22];
    let odd = lay(&[1024, 1025], &[1024, 3], 0);
    insta::assert_snapshot!(msg(fill(&mut big, &odd, 1)), @"fill: cannot prove destination view [1024, 1025] with strides [1024, 3] is free of self-overlap (axes sorted by stride do not nest and 1049600 elements exceed the exhaustive-check limit 1048576)");
}

#[test]
fn shapes() {
    let buf = vec![0i32; 6];
    let mut dst = vec![0i32; 6];
    insta::assert_snapshot!(msg(copy(&mut dst, &lay(&[6], &[1], 0), &buf, &lay(&[2, 3], &[3, 1], 0), 0)), @"copy: destination shape [6] differs from source shape [2, 3]");
    insta::assert_snapshot!(msg(copy_within(&mut dst, &lay(&[3], &[1], 0), &lay(&[2], &[1], 0), 0)), @"copy: destination shape [3] differs from source shape [2]");
    insta::assert_snapshot!(msg(zip(&buf, &lay(&[2, 3], &[3, 1], 0), &buf, &lay(&[2], &[1], 0), |a, b| a + b)), @"zip: shapes [2, 3] and [2] do not broadcast");
    insta::assert_snapshot!(msg(reduce(&buf, &lay(&[2, 3], &[3, 1], 0), &[2], ReduceOp::Sum, ReduceConfig::default())), @"reduce: axis 2 is out of range or repeated for a view with 2 axes");
    insta::assert_snapshot!(msg(reduce(&buf, &lay(&[2, 3], &[3, 1], 0), &[1, 1], ReduceOp::Sum, ReduceConfig::default())), @"reduce: axis 1 is out of range or repeated for a view with 2 axes");
}
