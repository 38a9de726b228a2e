//! Symbolic `slice`, and the `unfold` and `diagonal` statements.

use insta::assert_snapshot;

use crate::{trace, trace_cases};

#[test]
fn slice_takes_expressions() {
    assert_snapshot!(trace(
        "
        sym n 2..=64
        sym p 1..=32
        view [n, n, 4]
        slice [n - 1, 1:n - 1, ::-1]
        show
        lower
        guards
        view [2, 32, 4]
        slice [:, :min(p, 3), (p - 1) % 4, None, ...]
        show
        guards
        bind n=3, p=20
        offsets
    "
    ));
}

#[test]
fn kv_cache_slots_at_a_symbolic_position() {
    assert_snapshot!(trace(
        "
        sym pos 0..=2048
        view [2048, 2]
        slice [:pos + 1]
        show
        slice [pos]
        show
        lower
        guards
        bind pos=3
        offsets
        bind pos=2048
    "
    ));
}

#[test]
fn slice_sign_rules_and_errors() {
    assert_snapshot!(trace(
        "
        sym k 0..=4
        sym s -3..=3
        view [6]
        slice [-k:]
        guards
        bind k=2
        offsets
        slice [::s]
    "
    ));
}

#[test]
fn unfold_windows_with_symbolic_height() {
    assert_snapshot!(trace(
        "
        sym h 3..=512
        view [h, 4]
        unfold 0 size 3 step 2
        show
        lower
        bind h=5
        offsets
        view [h, 2]
        pad [(1, 1), (0, 0)]
        unfold 0 size 3
        show
        lower
        offsets
    "
    ));
}

#[test]
fn diagonal_with_a_symbolic_offset() {
    assert_snapshot!(trace(
        "
        sym n 1..=16
        sym k 0..=15
        view [n, n]
        diagonal [0, 1] offset k
        show
        guards
        lower
        bind n=3, k=1
        offsets
        values
        diagonal [0, 1]
    "
    ));
}

#[test]
fn window_statement_errors() {
    let cases = [
        "view [4, 4]\nunfold 0",
        "view [4, 4]\nunfold x size 2",
        "view [4, 4]\nunfold 2 size 2",
        "view [4, 4]\nunfold 0 size 5",
        "view [4, 4]\nunfold 0 size 2 step 0",
        "view [4, 4]\ndiagonal [0]",
        "view [4, 4]\ndiagonal [0, 0]",
        "view [4, 4]\ndiagonal [0, 1] offset q",
        "view [4]\nslice [1:2:3:4]",
        "view [4]\nslice [min(1, 2]",
        "view [4]\nslice [n]",
    ];
    assert_snapshot!(trace_cases(&cases, "  "));
}
