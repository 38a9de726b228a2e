//! View statements: view, reshape, expand, permute, shrink, pad, flip, slice, show, offsets.

use insta::assert_snapshot;

use crate::{trace, trace_cases};

#[test]
fn transpose_then_flatten_stacks_a_view() {
    assert_snapshot!(trace(
        "
        view [2, 3, 4]
        permute [2, 0, 1]
        reshape [4, 6]
        show
        offsets
        reshape [24]
        show
        offsets
    "
    ));
}

#[test]
fn masked_views_through_slice_pad_and_flip() {
    assert_snapshot!(trace(
        "
        view [4, 6] strides [6, 1] offset 3 mask [(0, 4), (1, 5)]
        show
        slice [1:, ::-1]
        show
        offsets
        view [3, 4]
        pad [(1, 0), (0, 1)]
        flip [0, 1]
        show
        offsets
        shrink [(1, 3), (0, 5)]
        show
        offsets
    "
    ));
}

#[test]
fn broadcasting_and_indexing() {
    assert_snapshot!(trace(
        "
        view [3, 1]
        expand [3, 4]
        show
        offsets
        slice [None, ..., 1:3]
        show
        offsets
        view [2, 3]
        slice [1]
        show
        offsets
        view [0, 3]
        show
        offsets
    "
    ));
}

#[test]
fn view_errors_name_the_op_and_the_view() {
    let cases = [
        "reshape [6]",
        "view [2, 3]\nreshape [4]",
        "view [2, 3]\npermute [0, 0]",
        "view [2, 3]\nshrink [(0, 3), (0, 3)]",
        "view [2, 3]\npad [(0, -1), (0, 0)]",
        "view [2, 3]\nexpand [4, 3]",
        "view [2, 3]\nflip [2]",
        "view [2, 3]\nslice [5]",
        "view [2, 3] strides [1]",
        "view [2, 3] mask [(0, 3), (0, 3)]",
        "view [2, 3]\nshow me",
        "view [2, 3]\npermute [a]",
        "sym n 1..=8\nview [n, 3]",
    ];
    assert_snapshot!(trace_cases(&cases, "=> "));
}

#[test]
fn symbolic_views_lower_guard_bind_and_infer() {
    assert_snapshot!(trace(
        "
        sym n 1..=4096
        sym m 1..=4096
        sym k 0..=4096
        view [n, 2*m]
        show
        lower
        infer [7, 10]
        offsets
        view [n, 64]
        shrink [(0, k), (0, 64)]
        guards
        pad [(0, 1), (0, 0)]
        show
        lower
        bind n=3, k=2
        values -1
    "
    ));
}

#[test]
fn symbolic_view_errors() {
    let cases = [
        "sym n 1..=8\nview [n, 3]\noffsets",
        "sym n 1..=8\nsym k 0..=16\nview [n]\nshrink [(0, k)]\nbind n=4, k=5",
        "sym n 1..=8\nview [n]\nshrink [(0, n + 1)]",
        "sym n 1..=8\nview [n, 3]\ninfer [7]",
        "sym n 1..=8\nview [2*n]\ninfer [7]",
        "sym n 1..=8\nview [n]\ninfer [x]",
        "sym n 1..=8\nview [n]\nguards now",
    ];
    assert_snapshot!(trace_cases(&cases, "=> "));
}

#[test]
fn squeeze_listed_all_and_proven() {
    assert_snapshot!(trace_cases(
        &[
            "view [2, 1, 3, 1]\nsqueeze\nshow",
            "view [2, 1, 3, 1]\nsqueeze [3, 1]\nshow\noffsets",
            "view [2, 1, 3, 1]\nsqueeze_proven\nshow",
            "sym b 1..=8\nsym s 1..=64\nview [b, 1, s]\nsqueeze\nguards\nbind b = 1, s = 4",
            "sym b 1..=8\nsym s 1..=64\nview [b, 1, s]\nsqueeze_proven\nshow\nguards\nbind b = 1, s = 4\noffsets",
            "sym b 1..=8\nview [b, 1, 3]\nsqueeze [1]\nshow",
            "sym b 1..=8\nview [b, 1, 3]\nsqueeze [0]",
            "view [2, 3]\nsqueeze [0]",
            "view [2, 1]\nsqueeze_proven 1",
            "sym b 1..=8\nview [b, 3]\npermute [1, 0]\nreshape [3, 1, b]\nsqueeze_proven\nshow",
        ],
        "=> ",
    ));
}

/// A zero-size view is valid whatever its other sizes, and `values` of it is empty, as
/// `offsets` and `plan` are.
#[test]
fn zero_size_views_of_huge_sizes() {
    assert_snapshot!(trace(
        "
        view [4611686018427387904, 2, 0]
        show
        offsets
        values
        sym n
        view [n, 2, 0]
        bind n=4611686018427387904
        offsets
        view [4294967296, 4294967296, 0] strides [0, 0, 0]
        offsets
        values
        copy
        values
    "
    ));
}
