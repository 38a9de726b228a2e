//! Hostile sizes through the library: errors, never a panic, an abort or an overflow.

use symshape_kernels::{fill, materialize, ConcreteView, Input, Output};
use symshape_view::{ViewOps, ViewStack};

fn view(shape: &[i64], strides: &[i64], mask: Option<&[(i64, i64)]>) -> ConcreteView {
    ConcreteView::create(shape, Some(strides), 0, mask).expect("a valid view")
}

#[test]
fn results_larger_than_the_limit_are_errors() {
    let huge = view(&[1 << 62], &[0], None);
    let msg = materialize(Input::new(&[1i64], &huge))
        .expect_err("2^62 elements exceed the allocation limit")
        .to_string();
    assert!(
        msg.starts_with(
            "materialize: 4611686018427387904 elements of 8 bytes exceed the allocation limit"
        ),
        "{msg}"
    );
    let map = symshape_kernels::map(Input::new(&[1i64], &huge), |x| x + 1);
    assert!(map.is_err());
}

#[test]
fn reducing_a_huge_broadcast_is_an_allocation_error() {
    // 2^62 elements from one: the partial folds of the reduced axis (2^47 of them) were
    // collected infallibly, which aborted the process.
    use symshape_kernels::{reduce, ReduceConfig, ReduceOp};
    let huge = view(&[1 << 62], &[0], None);
    let msg = reduce(
        Input::new(&[1i64], &huge),
        &[0],
        ReduceOp::Sum,
        ReduceConfig::default(),
    )
    .expect_err("the partial folds exceed the allocation limit")
    .to_string();
    insta::assert_snapshot!(msg, @"reduce: 140737488355328 elements of 8 bytes exceed the allocation limit of 17179869184 bytes");
    // Outer reduced axes whose offset table exceeds the limit.
    let wide = view(&[1 << 40, 2], &[0, 1], None);
    let msg = reduce(
        Input::new(&[1i64, 2], &wide),
        &[0, 1],
        ReduceOp::Max,
        ReduceConfig::default(),
    )
    .expect_err("the offset table exceeds the allocation limit")
    .to_string();
    insta::assert_snapshot!(msg, @"reduce: 1099511627776 elements of 8 bytes exceed the allocation limit of 17179869184 bytes");
}

#[test]
fn broadcast_shapes_whose_product_leaves_the_address_space_are_errors() {
    let a = view(&[1 << 32, 1], &[1, 0], None);
    let b = view(&[1, 1 << 32], &[0, 1], None);
    let buf = [1i64];
    let res = symshape_kernels::zip(Input::new(&buf, &a), Input::new(&buf, &b), |x, y| x + y);
    let msg = res.expect_err("2^64 elements").to_string();
    assert!(msg.starts_with("zip: "), "{msg}");
    // No destination of that shape exists to write into: the engine refuses the view.
    let out = ConcreteView::create(&[1 << 32, 1 << 32], None, 0, None);
    assert!(out.is_err());
}

#[test]
fn a_view_whose_offsets_leave_i64_is_refused_where_it_is_made() {
    let msg = ConcreteView::create(&[2], Some(&[isize::MAX as i64]), 0, Some(&[(2, 2)]))
        .expect_err("offset 2^63 - 1 times 1 is fine, but the view's reach is checked whole")
        .to_string();
    assert!(msg.contains("exceed i64"), "{msg}");
    // Without the overflow, an all-masked destination writes nothing.
    let dst = view(&[2], &[1 << 40], Some(&[(2, 2)]));
    let mut buf = [7i64; 1];
    fill(Output::new(&mut buf, &dst), 0).expect("nothing to write");
    assert_eq!(buf, [7]);
}

#[test]
fn splitting_into_too_many_pieces_is_an_error() {
    let cx = symshape::Scope::new();
    let stack = ViewStack::new(symshape_view::View::contiguous(&[1 << 24]).expect("view"));
    let msg = stack
        .split(&cx, 0, 1i64)
        .expect_err("2^24 pieces exceed the piece limit")
        .to_string();
    assert!(msg.contains("65536"), "{msg}");
}
