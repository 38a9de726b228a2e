//! The runner statements of PyTorch's remaining view ops: each prints the views it
//! builds, and the values they read are checked against an explicit index table.

use insta::assert_snapshot;

use crate::{trace, trace_scripts};

#[test]
fn axis_ops_of_pytorch() {
    assert_snapshot!(trace(
        "
        sym n 1..=16
        view [2, 3, n]
        transpose 0 2
        show
        swapaxes 0 2
        swapdims 1 2
        movedim 0 2
        moveaxis 2 0
        show
        unsqueeze 1
        show
        flatten 0 1
        show
        unflatten 0 [2, 1]
        show
        view [4]
        t
        show
        view [2, 3]
        t
        H
        mH
        show
        broadcast_to [5, 3, 2]
        show
        detach
        alias
        show
        as_strided [2, 2] strides [1, 2] offset 1
        show
    "
    ));
}

#[test]
fn piece_ops_read_the_elements_of_their_pieces() {
    // On a row-major [6, 4] view, the offsets are the row-major indices, so each
    // printed offset list is the index table of the piece.
    assert_snapshot!(trace(
        "
        view [6, 4]
        narrow 0 start -2 length 2
        offsets
        view [6, 4]
        select 1 index -1
        offsets
        view [6, 4]
        unbind 0 5
        offsets
        view [6, 4]
        split 0 size 4 piece 1
        offsets
        view [6, 4]
        split_sizes 1 [1, 3] piece 1
        offsets
        view [6, 4]
        split_with_sizes 0 [5, 1] piece 1
        offsets
        view [6, 4]
        chunk 1 chunks 3 piece 1
        offsets
        sym n 2..=8
        view [n, 4]
        narrow 0 start 1 length n - 1
        split 1 size 3 piece 1
        lower
    "
    ));
}

#[test]
fn errors_of_the_axis_and_piece_statements() {
    let cases = [
        "view [2, 3, 4]\nt",
        "view [2, 3]\ntranspose 0",
        "view [2, 3]\ntranspose 0 5",
        "view [2, 3]\nmovedim a b",
        "view [2, 3]\nunflatten 1",
        "view [2, 3]\nunflatten 1 [2, 2]",
        "view [2, 3]\nnarrow 0 start 1",
        "view [2, 3]\nnarrow 0 length 1 start 0",
        "view [2, 3]\nselect 0 index 2",
        "view [2, 3]\nsplit 0 size 0 piece 0",
        "view [2, 3]\nchunk 0 chunks 0 piece 0",
        "view [2, 3]\nunbind 2 0",
        "view [2, 3]\nsplit_sizes 1 [1, 1] piece 0",
        "view [2, 3]\nH 1",
        "detach",
        "view [2]\ndetach 1",
        "view [2]\nas_strided",
    ];
    assert_snapshot!(trace_scripts(&cases));
}
