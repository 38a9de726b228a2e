//! The statements of reference 002's view-or-copy table and PyTorch's remaining view ops:
//! `copy`, `flatten_copy`, `astype`, `asarray`, `take`, `compress`, `boolean_mask`,
//! `sliding_window_view`, `owndata`, `base`, `promote_types`, `result_type`,
//! `broadcast_shapes`, `view_shape`, `as_strided`, `t`, `H`, `mH`, `detach` and `alias`.

use insta::assert_snapshot;

use crate::{trace, trace_cases};

#[test]
fn copies_own_their_data() {
    assert_snapshot!(trace(
        "
        view [2, 3]
        owndata
        base
        save a
        T
        copy
        show
        values
        owndata
        base
        save c
        slice [1:]
        owndata
        base
        shares_memory c
        shares_memory a
        load a
        flatten_copy
        show
        values
        load a
        astype int32 int32 copy false
        owndata
        base
        astype int32 float64
        owndata
        load a
        asarray float32 float32
        owndata
        asarray float32 int8
        owndata
        show
        load a
        ravel
        owndata
        load a
        T
        ravel
        owndata
        base
        load a
        T
        ascontiguousarray
        owndata
        show
        view []
        ascontiguousarray
        owndata
        show
    "
    ));
}

#[test]
fn fancy_and_boolean_indexing_gather_into_a_new_buffer() {
    assert_snapshot!(trace(
        "
        view [3, 4]
        T
        save t
        take 1 [2, 0, -1]
        show
        values
        owndata
        shares_memory t
        T
        values
        base
        load t
        compress 0 [true, false, false, true]
        values
        load t
        boolean_mask [true, false, false, false, true, true, false, false, false, false, false, true]
        show
        values
        take 0 [3, 0]
        values
        sym n 1..=8
        sym k -8..=8
        view [n, 2]
        take 0 [k]
        show
        guards
        bind n=3, k=-3
        values
    "
    ));
}

#[test]
fn pytorch_view_ops() {
    assert_snapshot!(trace(
        "
        view [2, 3]
        t
        show
        view [2, 3]
        H
        show
        view [2, 3, 4]
        mH
        show
        view [2, 3, 4]
        adjoint
        show
        view [5]
        t
        show
        view [4, 6]
        view_shape [2, 12]
        show
        view [4, 6]
        T
        reshape [24]
        show
        view [4, 6]
        swapdims 0 1
        moveaxis 0 1
        detach
        alias
        show
        view [2, 6] offset 3
        as_strided [3, 2] strides [1, 3]
        show
        offsets
        view [3, 4]
        T
        contiguous
        as_strided [2, 2] strides [6, 1] offset 1
        show
        values
        sym n 1..=8
        view [n, 4]
        view_shape [4*n]
        show
        as_strided [n] strides [5]
        guards
        view [n, 5]
        sliding_window_view [2, 3]
        show
        bind n=2
        values
    "
    ));
}

#[test]
fn numpy_rot90() {
    assert_snapshot!(trace(
        "
        view [2, 3]
        rot90 1
        show
        offsets
        view [2, 3]
        rot90 -1
        offsets
        view [2, 3]
        rot90 6
        offsets
        view [2, 3, 4]
        rot90 1 2 0
        show
        sym n 1..=8
        view [n, 3]
        pad [(1, 0), (0, 0)]
        rot90 3
        show
        bind n=2
        offsets
    "
    ));
    assert_snapshot!(trace_cases(
        &[
            "view [2, 3]\nrot90 1 1 1",
            "view [2, 3]\nrot90 1 0 2",
            "view [3]\nrot90 1",
            "view [2, 3]\nrot90",
            "view [2, 3]\nrot90 x",
            "view [2, 3]\nrot90 1 0",
        ],
        "=> "
    ));
}

#[test]
fn dtype_promotion_and_broadcast_shapes() {
    assert_snapshot!(trace(
        "
        promote_types int32 float32
        promote_types int8 bool
        promote_types uint64 int64
        result_type float32 1.0
        result_type int32 1.0
        result_type int8 1
        result_type bool 1
        result_type 1 2.5
        broadcast_shapes [3] [2, 4, 3]
        broadcast_shapes [5] [5, 1]
        sym n 1..=8
        broadcast_shapes [n, 1] [1, n] [3]
        bind n=3
        broadcast_shapes [n, 1] [1, n] [3]
    "
    ));
}

#[test]
fn errors_of_the_copy_and_torch_statements() {
    assert_snapshot!(trace_cases(
        &[
            "view [2, 3, 4]\nH",
            "view [3]\nH",
            "view [3]\nmH",
            "view [2, 3, 4]\nt",
            "view [4, 6]\nT\nview_shape [24]",
            "view [4, 6]\nview_shape [5]",
            "view [6]\nas_strided [3] strides [-1]",
            "view [6]\nas_strided [3] strides [1] offset -1",
            "view [6]\nas_strided [4] strides [2]",
            "view [6]\nas_strided [3]",
            "view [6]\nas_strided",
            "view [2, 3]\ntake 1 [3]",
            "view [2, 3]\ntake 2 [0]",
            "view [2, 3]\ntake [0]",
            "view [2, 3]\ncompress 0 [true]",
            "view [2, 3]\ncompress 0 [yes, no]",
            "view [2, 3]\nboolean_mask [true]",
            "view [2, 3]\nsliding_window_view [2]",
            "view [2, 3]\nsliding_window_view [4] axis [1]",
            "view [2, 3]\nsliding_window_view [-1, 1]",
            "view [2, 3]\nastype int32",
            "view [2, 3]\nastype int32 float16",
            "view [2, 3]\nastype int32 int32 copy maybe",
            "view [2, 3]\nasarray int32 int32 copy false",
            "view [2, 3]\ncopy 1",
            "owndata",
            "view [2]\nbase 1",
            "promote_types int32",
            "promote_types int32 1",
            "result_type uint8 300",
            "result_type",
            "broadcast_shapes [3] [4]",
            "sym n 1..=4\nbind n=2\nbroadcast_shapes [n] [3]",
            "sym n 1..=4\nview [n, 4]\nT\nreshape [4*n]\nflags",
            "sym n 1..=4\nview [n, 4]\nT\nreshape [4*n]\nbytes 4",
        ],
        "=> ",
    ));
}

/// Ops after a copy compose with the copy's row-major layout, never with the layout it
/// was copied from: flags, bytes, `as_strided`, `view_shape` and the sharing tests
/// answer for the copy.
#[test]
fn ops_after_a_copy_read_the_copy() {
    assert_snapshot!(trace(
        "
        view [2] strides [2]
        ascontiguousarray
        flags
        bytes 8
        show
        view [2, 3]
        slice [:, :2]
        copy
        slice [1:]
        as_strided [4] strides [1] offset 0
        values
        view [2, 3] strides [1, 2]
        contiguous
        unsqueeze 0
        view_shape [6]
        values
        view [1, 3]
        expand [2, 3]
        copy
        save c
        slice [0]
        save r0
        load c
        slice [1]
        shares_memory r0
        may_share_memory r0
        view [2, 3]
        flip [1]
        contiguous
        slice [:, ::2]
        bytes 8
        flags
        values
        view [3, 2] strides [1, 3]
        flatten_copy
        slice [1:3]
        flags
        bytes 4
        show
        values
        view [3, 2] strides [1, 3]
        reshape [6]
        slice [0:2]
        flags
        bytes 8
        as_strided [3] strides [1]
        values
        sym n 1..=8
        view [n, 4] strides [1, n]
        copy
        slice [1:]
        bytes 8
        bind n=3
        flags
        values
    "
    ));
}

/// The row-major flatten of many symbolic sizes is a view, whatever their number: the
/// prover bounds products of at most 8 factors one by one, and the reshape decides
/// `a <= a*b*...*i` by division instead.
#[test]
fn a_row_major_flatten_of_many_symbols_is_a_view() {
    let names: Vec<String> = (0..12).map(|k| format!("s{k}")).collect();
    let syms: String = names.iter().map(|n| format!("sym {n} 1..=64\n")).collect();
    let script = format!(
        "{syms}view [{0}]\nsave x\nreshape [{1}]\nshow\nowndata\nbase\nload x\nview_shape [{1}]\nshow\nload x\nreshape [s0*s1*s2*s3*s4, s5*s6*s7*s8*s9*s10*s11]\nshow\nowndata",
        names.join(", "),
        names.join("*")
    );
    assert_snapshot!(trace(&script));
}

/// A gather writes the `values` pad for the elements it reads from padding, as a copy
/// does.
#[test]
fn gathers_write_the_pad_as_copy_does() {
    assert_snapshot!(trace(
        "
        view [2, 3]
        pad [(0, 0), (1, 1)]
        save p
        copy
        values 7
        load p
        take 1 [0, 2, 4]
        values 7
        load p
        compress 1 [true, false, false, false, true]
        values 7
        load p
        boolean_mask [true, false, false, false, false, true, false, false, false, true]
        values 7
        take 0 [2, 0]
        values -1
    "
    ), @"
    values [2, 5]: 7 0 1 2 7 7 3 4 5 7
    values [2, 3]: 7 1 7 7 4 7
    values [2, 2]: 7 7 7 7
    values [3]: 7 7 7
    values [2]: -1 -1
    ");
}
