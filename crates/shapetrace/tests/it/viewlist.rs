//! PyTorch's remaining view ops and the memory models: tensor_split, T, mT,
//! reinterpret, flags, bytes and views from byte strides.

use insta::assert_snapshot;

use crate::{trace, trace_cases};

#[test]
fn tensor_split_keeps_one_piece() {
    assert_snapshot!(trace(
        "
        view [7, 2]
        tensor_split 0 sections 3 0
        show
        offsets
        view [7, 2]
        tensor_split 0 sections 3 2
        show
        offsets
        view [7, 2]
        tensor_split 0 at [2, -1] 1
        offsets
        view [7, 2]
        tensor_split 0 at [5, 2] 1
        show
        view [7, 2]
        tensor_split 1 at [1] 1
        offsets
        sym n 0..=9
        view [n, 2]
        tensor_split 0 sections 3 1
        show
        guards
        bind n=7
        offsets
        view [n, 2]
        tensor_split 0 at [1, n - 1] 1
        show
        offsets
    "
    ));
}

#[test]
fn axis_reversals() {
    assert_snapshot!(trace(
        "
        view [2, 3, 4]
        T
        show
        view [2, 3, 4]
        mT
        show
        offsets
        view [5]
        T
        show
        sym n 1..=8
        view [n, 3]
        mT
        show
    "
    ));
}

#[test]
fn reinterpret_rescales_the_last_axis() {
    assert_snapshot!(trace(
        "
        view [2, 3] offset 1
        reinterpret 4 2
        show
        offsets
        view [2, 4] offset 6
        reinterpret 2 4
        show
        offsets
        reinterpret 4 4
        show
        sym n 1..=8
        view [3, n]
        reinterpret 2 8
        show
        guards
        bind n=8
        offsets
    "
    ));
}

#[test]
fn flags_and_bytes() {
    assert_snapshot!(trace(
        "
        view [2, 3]
        flags
        bytes 4
        T
        flags
        bytes 8
        view [1, 3] strides [7, 1] offset 2
        flags
        bytes 2
        view [0, 3] strides [5, 9]
        flags
        view [3] strides [-1] offset 2
        flags
        bytes 4
        view [2, 3] byte_strides [4, 8] byte_offset 8 itemsize 4
        show
        flags
        bytes 4
        sym n 1..=4
        view [n, 2]
        bind n=3
        flags
        bytes 2
    "
    ));
}

#[test]
fn memory_model_errors() {
    assert_snapshot!(trace_cases(
        &[
            "view [2, 3]\nT\nreinterpret 4 2",
            "view [2, 3]\nreinterpret 2 4",
            "view [2, 4] offset 1\nreinterpret 2 4",
            "view []\nreinterpret 4 2",
            "view [2, 3]\nreinterpret 3 2",
            "view [2, 3]\nreinterpret 4",
            "view [2, 3]\npad [(1, 0), (0, 0)]\nreinterpret 4 2",
            "view [2, 3]\nT\nreshape [6]\nreinterpret 4 2",
            "view [2, 3]\nT\nreshape [6]\nflags",
            "view [2, 3]\npad [(1, 0), (0, 0)]\nflags",
            "view [2, 3]\npad [(1, 0), (0, 0)]\nbytes 4",
            "view [2, 3]\nbytes 0",
            "view [2, 3]\nbytes four",
            "view [2, 3]\nflags now",
            "sym n 1..=4\nview [n, 2]\nflags",
            "view [2, 3] byte_strides [12] byte_offset 0 itemsize 4",
            "sym n 1..=4\nview [n, 3] byte_strides [4] byte_offset 0 itemsize 4",
            "sym n 1..=4\nview [n, 2]\npad [(0, 1), (0, 0)]\nbytes 4",
            "sym n 1..=4\nview [n, 3] byte_strides [4*n, 2] byte_offset 0 itemsize 4",
            "sym n 1..=4\nview [n, 3] byte_strides [4*n, 4] byte_offset 2 itemsize 4",
            "sym k 0..=4\nview [2, 3] byte_strides [12, 2*k] byte_offset 0 itemsize 4\nbind k=1",
            "view [2, 3] byte_strides [12, 6] byte_offset 0 itemsize 4",
            "view [2, 3] byte_strides [12, 4] byte_offset 2 itemsize 4",
            "view [2, 3] byte_strides [12, 4] itemsize 4",
            "view [2, 3] byte_strides [12, 4] byte_offset 0 itemsize 4 mask [(0, 1), (0, 3)]",
            "view [2, 3] byte_strides [12, 4] byte_offset 0 itemsize 0",
            "view [3]\nmT",
            "view [3]\nT 0",
            "view [7]\ntensor_split 0 sections 0 0",
            "view [7]\ntensor_split 0 sections 3 3",
            "view [7]\ntensor_split 0 at [2] 2",
            "view [7]\ntensor_split 1 sections 2 0",
            "view [7]\ntensor_split 0 sections 3",
            "view [7]\ntensor_split 0 pieces 3 0",
        ],
        "=> ",
    ));
}

#[test]
fn ravel_is_a_view_or_a_copy() {
    assert_snapshot!(trace(
        "
        view [2, 1, 3] strides [3, 7, 1] offset 5
        ravel
        show
        offsets
        view [2, 3]
        T
        ravel
        show
        offsets
        values
        view [4] strides [2]
        ravel
        show
        offsets
        view [2, 3]
        pad [(0, 1), (0, 0)]
        ravel
        show
        offsets
        sym n 1..=4
        view [n, 2]
        ravel
        show
        bind n=2
        offsets
    "
    ));
}

/// `flags`, `bytes`, `ravel` and byte strides on symbolic views: answers that hold for
/// every value of the symbols, guards where divisibility depends on them.
#[test]
fn memory_model_of_symbolic_views() {
    assert_snapshot!(trace(
        "
        sym n 2..=64
        sym k 0..=8
        view [n, 4]
        flags
        bytes 4
        ravel
        show
        view [n, 4]
        T
        flags
        bytes 2
        ravel
        show
        view [n, 1] strides [1, 5] offset k
        flags
        ravel
        show
        view [n, 4]
        contiguous
        show
        T
        contiguous
        show
        reshape [4*n]
        show
        view [n, 3] byte_strides [12, 4] byte_offset 4*k itemsize 4
        show
        flags
        view [n, 3] byte_strides [6*n, 2*k] byte_offset 0 itemsize 4
        show
        guards
        bind n=2, k=2
        offsets
    "
    ));
}

#[test]
fn ravel_errors() {
    assert_snapshot!(trace_cases(&["ravel", "view [2, 3]\nravel 0"], "=> "));
}

#[test]
fn complex_views_read_pairs_of_reals() {
    assert_snapshot!(trace(
        "
        view [2, 3] strides [1, 2] offset 1
        view_as_real
        show
        offsets
        view_as_complex
        show
        real
        show
        offsets
        view [2, 3]
        imag
        show
        offsets
        sym n 1..=4
        view [3, n]
        view_as_complex
        show
        guards
        view [3, n]
        real
        show
        bind n=2
        offsets
    "
    ));
}

#[test]
fn complex_view_errors() {
    assert_snapshot!(trace_cases(
        &[
            "view [3, 3]\nview_as_complex",
            "view [3, 2] strides [1, 3]\nview_as_complex",
            "view [3, 2] strides [3, 1]\nview_as_complex",
            "view [3, 2] strides [4, 1] offset 1\nview_as_complex",
            "view []\nview_as_complex",
            "view [2, 2]\npad [(1, 0), (0, 0)]\nreal",
            "view [2, 3]\nT\nreshape [6]\nimag",
            "view [2, 2]\nview_as_real 1",
            "sym n 1..=4\nview [3, n]\nview_as_complex\nbind n=3",
            "sym n 3..=4\nview [3, n]\nview_as_complex",
        ],
        "=> ",
    ));
}

#[test]
fn directional_splits_and_adjoint() {
    assert_snapshot!(trace(
        "
        view [2, 6]
        hsplit sections 3 1
        show
        offsets
        view [6]
        hsplit sections 2 1
        offsets
        view [4, 2]
        vsplit sections 2 1
        offsets
        view [2, 2, 4]
        dsplit sections 2 0
        offsets
        view [2, 7]
        hsplit at [2, -1] 1
        offsets
        view [5, 2]
        vsplit at [3] 1
        offsets
        view [2, 3]
        adjoint
        show
        sym n 1..=8 multiple of 2
        view [3, n]
        hsplit sections 2 1
        show
        bind n=4
        offsets
    "
    ));
}

#[test]
fn directional_split_errors() {
    assert_snapshot!(trace_cases(
        &[
            "view [2, 5]\nhsplit sections 2 0",
            "view []\nhsplit sections 1 0",
            "view [4]\nvsplit sections 2 0",
            "view [2, 4]\ndsplit sections 2 0",
            "view [2, 6]\nhsplit sections 3 3",
            "view [2, 6]\nhsplit sections 0 0",
            "view [2, 6]\nhsplit at [2] 2",
            "view [2, 6]\nhsplit sections 3",
            "view [2, 6]\nhsplit 1 sections 3 0",
            "view [2, 6]\nhsplit",
            "view [2, 6]\nhsplit pieces 3 0",
            "sym n 1..=8\nview [3, n]\nhsplit sections 2 0",
            "view [3]\nadjoint",
            "view [2, 3]\nadjoint 0",
        ],
        "=> ",
    ));
}
