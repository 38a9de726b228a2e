//! Saved stacks and the statements that take another tensor: `save`, `load`,
//! `expand_as`, `reshape_as`, `view_as`, `shares_memory`, `may_share_memory`.

use insta::assert_snapshot;

use crate::{trace, trace_scripts};

#[test]
fn the_as_ops_take_the_shape_of_a_saved_stack() {
    assert_snapshot!(trace(
        "
        sym n 1..=16
        view [n, 6]
        save x
        view [1, 6]
        expand_as x
        show
        view [6*n]
        view_as x
        show
        permute [1, 0]
        reshape_as x
        show
        load x
        show
    "
    ));
}

#[test]
fn view_as_refuses_a_copy_where_reshape_as_pushes_a_view() {
    assert_snapshot!(trace(
        "
        view [24]
        save flat
        view [6, 4]
        permute [1, 0]
        reshape_as flat
        show
        view [6, 4]
        permute [1, 0]
        view_as flat
    "
    ));
}

#[test]
fn overlap_of_interleaved_and_crossing_views() {
    assert_snapshot!(trace(
        "
        sym n 1..=64
        view [4, n]
        save all
        slice [:, ::2]
        save even
        load all
        slice [:, 1::2]
        bind n=6
        shares_memory even
        may_share_memory even
        shares_memory all
        shares_memory even max_work 0
        view [4, 4]
        diagonal [0, 1]
        save diag
        view [4, 4]
        slice [1:, :]
        shares_memory diag
        slice [:, :1]
        shares_memory diag
        may_share_memory diag
    "
    ));
}

#[test]
fn named_stack_errors() {
    let cases = [
        "view [2]\nload x",
        "view [2]\nsave x\nexpand_as y",
        "view [2]\nsave 2x",
        "save x",
        "view [2]\nsave x\nshares_memory x max_work lots",
        "view [4, 4]\npermute [1, 0]\nreshape [16]\nsave x\nview [16]\nshares_memory x",
        "view [4, 4]\npermute [1, 0]\nreshape [16]\nsave x\nslice [1:]\nshares_memory x",
        "sym n 1..=4\nview [n]\nsave x\nview [4]\nshares_memory x",
    ];
    assert_snapshot!(trace_scripts(&cases));
}
