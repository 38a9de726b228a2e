//! Serde round trips of views, stacks, guards and ops (feature `serde`): tables of
//! concrete and symbolic values, the wire text of a small view, malformed input
//! (an error message, never a panic) and a property test over random op chains.
#![cfg(feature = "serde")]

use proptest::prelude::*;
use symshape::{Expr, Scope};
use symshape_view::{parse_index, IndexItem, Op, SplitDirection, View, ViewOps, ViewStack};

use crate::scope_with;

/// Writes `value` as JSON, reads it back, asserts the loaded value equals it, and
/// returns its display.
fn round_trip<T>(value: &T) -> String
where
    T: serde::Serialize
        + serde::de::DeserializeOwned
        + PartialEq
        + std::fmt::Debug
        + std::fmt::Display,
{
    let text = serde_json::to_string(value).expect("serialize");
    let back: T = serde_json::from_str(&text).expect("deserialize");
    assert_eq!(&back, value, "round trip of {value}\nthrough {text}");
    value.to_string()
}

/// The error of loading `json` as a `T`.
fn load_error<T: serde::de::DeserializeOwned + std::fmt::Debug>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(v) => format!("loaded: {v:?}"),
        Err(e) => e.to_string(),
    }
}

struct Syms {
    cx: Scope,
    n: Expr,
    m: Expr,
    p: Expr,
}

fn syms() -> Syms {
    let (cx, [n, m, p]) = scope_with(["n 1..=4096", "m 1..=64 multiple of 4", "p 0..n"]);
    Syms { cx, n, m, p }
}

#[test]
fn views_round_trip() {
    let s = syms();
    let (cx, n, m, p) = (&s.cx, s.n, s.m, s.p);
    let z = Expr::from(0);
    let mut out = Vec::new();
    let views = [
        View::contiguous(&[2, 3, 4]),
        View::contiguous(&[4]).and_then(|v| v.pad(cx, &[(1i64, 2i64)])),
        View::contiguous(&[3, 2]).and_then(|v| v.permute(cx, &[1, 0])),
        View::contiguous(&[0, 5]),
        View::create(cx, &[n, m], None, z, None),
        View::create(cx, &[n, m], None, z, None)
            .and_then(|v| v.apply(cx, &Op::Shrink(vec![(p, n), (z, m)]))),
        View::create(cx, &[n, Expr::from(3)], None, z, None)
            .and_then(|v| v.apply(cx, &Op::Pad(vec![(p, 1.into()), (z, z)]))),
        View::create(cx, &[n, m], None, z, None)
            .and_then(|v| v.apply(cx, &Op::Shrink(vec![(z, m + 1), (z, m)]))),
        View::create(cx, &[n * m], None, p, None)
            .and_then(|v| v.apply(cx, &Op::Reshape(vec![n, m]))),
    ];
    for v in views {
        let v = v.expect("view");
        out.push(round_trip(&v));
        for g in v.guards() {
            out.push(format!("  guard {}", round_trip(g)));
        }
    }
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn loaded_views_hold_the_same_handles() {
    let s = syms();
    let v = View::create(&s.cx, &[s.n, s.m], None, s.p, None).expect("view");
    let back: View = serde_json::from_str(&serde_json::to_string(&v).expect("ser")).expect("de");
    assert_eq!(back.shape(), &[s.n, s.m]);
    assert_eq!(back.offset(), s.p);
    // The loaded symbols are the declared ones: the scope still parses and simplifies them.
    assert_eq!(s.cx.simplify(back.offset() - s.p), Expr::from(0));
}

#[test]
fn stacks_round_trip() {
    let s = syms();
    let mut out = Vec::new();
    let concrete = ViewStack::new(View::contiguous(&[3, 2]).expect("view"))
        .permute(&s.cx, &[1, 0])
        .and_then(|st| st.reshape(&s.cx, &[6i64]))
        .expect("stack");
    assert_eq!(concrete.views().len(), 2);
    out.push(round_trip(&concrete));
    let symbolic =
        ViewStack::new(View::create(&s.cx, &[s.n, s.m], None, Expr::from(0), None).expect("view"))
            .apply(&s.cx, &Op::Permute(vec![1, 0]))
            .expect("stack");
    out.push(round_trip(&symbolic));
    // A symbolic stack of two views: the transpose read row-major as one axis.
    let flat = symbolic
        .apply(&s.cx, &Op::Reshape(vec![s.n * s.m]))
        .expect("stack");
    assert_eq!(flat.views().len(), 2);
    out.push(round_trip(&flat));
    insta::assert_snapshot!(out.join("\n---\n"));
}

#[test]
fn ops_and_index_items_round_trip() {
    let s = syms();
    let (n, m, p) = (s.n, s.m, s.p);
    let items = parse_index("[1, 2:, ::-1, None, ...]").expect("index");
    let ops = [
        Op::Reshape(vec![n, m]),
        Op::Expand(vec![n, 4.into()]),
        Op::Permute(vec![1, 0, 2]),
        Op::Shrink(vec![(p, n)]),
        Op::Pad(vec![(1.into(), p)]),
        Op::Flip(vec![0]),
        Op::Index(items.iter().map(|&i| IndexItem::from(i)).collect()),
        Op::Unfold {
            axis: 1,
            size: m,
            step: 2.into(),
        },
        Op::Diagonal {
            offset: p,
            dim1: 0,
            dim2: 1,
        },
    ];
    let out: Vec<String> = ops.iter().map(round_trip).collect();
    insta::assert_snapshot!(out.join("\n"));
    for item in items {
        let text = serde_json::to_string(&item).expect("ser");
        let back: IndexItem = serde_json::from_str(&text).expect("de");
        assert_eq!(back, item);
    }
}

/// The ops of PyTorch's view list and the memory model, with their wire text.
#[test]
fn view_list_ops_round_trip() {
    let s = syms();
    let ops = [
        Op::TensorSplit {
            axis: 1,
            sections: 3,
            piece: 2,
        },
        Op::TensorSplitAt {
            axis: 0,
            indices: vec![s.p, (-1).into()],
            piece: 1,
        },
        Op::DirectionalSplit {
            direction: SplitDirection::Vertical,
            sections: 2,
            piece: 1,
        },
        Op::DirectionalSplitAt {
            direction: SplitDirection::Depth,
            indices: vec![s.p],
            piece: 0,
        },
        Op::Squeeze(None),
        Op::Squeeze(Some(vec![2, 0])),
        Op::SqueezeProven,
        Op::ReverseAxes,
        Op::MatrixTranspose,
        Op::Reinterpret { from: 4, to: 2 },
        Op::ViewAsReal,
        Op::ViewAsComplex,
        Op::Real,
        Op::Imag,
        Op::Ravel,
        Op::Contiguous,
        Op::T,
        Op::ConjTranspose,
        Op::MatrixConjTranspose,
        Op::Adjoint,
        Op::Rot90 {
            k: -1,
            axes: [1, 0],
        },
        Op::ViewShape(vec![s.n, 4.into()]),
        Op::ViewShape(vec![6.into()]),
        Op::AsStrided {
            shape: vec![2.into()],
            strides: vec![3.into()],
            offset: 1.into(),
        },
        Op::SlidingWindowView {
            window: vec![2.into()],
            axes: Some(vec![1]),
        },
        Op::Copy,
        Op::FlattenCopy,
        Op::AsType {
            from: symshape_view::DType::Int32,
            to: symshape_view::DType::UInt8,
            copy: false,
        },
        Op::Take {
            axis: 1,
            indices: vec![(-1).into(), 0.into()],
        },
        Op::Compress {
            axis: 0,
            mask: vec![true, false],
        },
        Op::BooleanMask(vec![false, true]),
    ];
    let out: Vec<String> = ops
        .iter()
        .map(|op| {
            let text = serde_json::to_string(op).expect("ser");
            let back: Op = serde_json::from_str(&text).expect("de");
            assert_eq!(&back, op);
            if op.to_const().is_some() {
                format!("{op}: {text}")
            } else {
                op.to_string()
            }
        })
        .collect();
    insta::assert_snapshot!(out.join("\n"), @r#"
    tensor_split 1 sections 3 2: {"tensor_split":{"axis":1,"sections":3,"piece":2}}
    tensor_split 0 at [p, -1] 1
    vsplit sections 2 1: {"directional_split":{"direction":"vertical","sections":2,"piece":1}}
    dsplit at [p] 0
    squeeze: {"squeeze":null}
    squeeze [2, 0]: {"squeeze":[2,0]}
    squeeze_proven: "squeeze_proven"
    T: "T"
    mT: "mT"
    reinterpret 4 2: {"reinterpret":{"from":4,"to":2}}
    view_as_real: "view_as_real"
    view_as_complex: "view_as_complex"
    real: "real"
    imag: "imag"
    ravel: "ravel"
    contiguous: "contiguous"
    t: "t"
    H: "H"
    mH: "mH"
    adjoint: "adjoint"
    rot90 -1 1 0: {"rot90":{"k":-1,"axes":[1,0]}}
    view_shape [n, 4]
    view_shape [6]: {"view_shape":[{"nodes":[{"const":"6"}],"root":0}]}
    as_strided [2] strides [3] offset 1: {"as_strided":{"shape":[{"nodes":[{"const":"2"}],"root":0}],"strides":[{"nodes":[{"const":"3"}],"root":0}],"offset":{"nodes":[{"const":"1"}],"root":0}}}
    sliding_window_view [2] axis [1]: {"sliding_window_view":{"window":[{"nodes":[{"const":"2"}],"root":0}],"axes":[1]}}
    copy: "copy"
    flatten_copy: "flatten_copy"
    astype int32 uint8 copy false: {"astype":{"from":"int32","to":"uint8","copy":false}}
    take 1 [-1, 0]: {"take":{"axis":1,"indices":[{"nodes":[{"const":"-1"}],"root":0},{"nodes":[{"const":"0"}],"root":0}]}}
    compress 0 [true, false]: {"compress":{"axis":0,"mask":[true,false]}}
    boolean_mask [false, true]: {"boolean_mask":[false,true]}
    "#);
}

#[test]
fn wire_text_of_a_padded_view() {
    let v = View::contiguous(&[4])
        .and_then(|v| v.pad(&Scope::new(), &[(1i64, 0i64)]))
        .expect("view");
    insta::assert_snapshot!(serde_json::to_string(&v).expect("ser"));
}

/// A constant in symshape's wire form, for hand-written input.
fn c(v: i64) -> String {
    format!(r#"{{"nodes":[{{"const":"{v}"}}],"root":0}}"#)
}

#[test]
fn malformed_input_is_an_error() {
    let sym_n = r#"{"nodes":[{"const":"1"},{"const":"8"},{"sym":{"name":"n","lo":0,"hi":1,"multiple_of":1}}],"root":2}"#;
    let sym_q = r#"{"nodes":[{"const":"-5"},{"const":"-1"},{"sym":{"name":"q","lo":0,"hi":1,"multiple_of":1}}],"root":2}"#;
    let guard = |op: &str, cmp: &str, lhs: &str, rhs: &str| {
        format!(r#"{{"op":"{op}","lhs":{lhs},"cmp":"{cmp}","rhs":{rhs},"what":"test"}}"#)
    };
    let view = |shape: &str, strides: &str, offset: &str, mask: &str, guards: &str| {
        format!(
            r#"{{"shape":{shape},"strides":{strides},"offset":{offset},"mask":{mask},"guards":{guards}}}"#
        )
    };
    // A one-axis view of `size` elements, stride 1, offset 0, no mask, no guards.
    let plain_row = |size: i64| {
        view(
            &format!("[{}]", c(size)),
            &format!("[{}]", c(1)),
            &c(0),
            "null",
            "[]",
        )
    };
    let cases = [
        ("rank", view(&format!("[{}]", c(2)), &format!("[{}, {}]", c(1), c(1)), &c(0), "null", "[]")),
        ("mask rank", view(&format!("[{}]", c(2)), &format!("[{}]", c(1)), &c(0), &format!("[[{}, {}], [{}, {}]]", c(0), c(1), c(0), c(1)), "[]")),
        ("mask bound", view(&format!("[{}]", c(2)), &format!("[{}]", c(1)), &c(0), &format!("[[{}, {}]]", c(0), c(3)), "[]")),
        ("negative size", plain_row(-2)),
        ("symbolic negative size", view(&format!("[{sym_q}]"), &format!("[{}]", c(1)), &c(0), "null", "[]")),
        ("unknown op", view(&format!("[{sym_n}]"), &format!("[{}]", c(1)), &c(0), "null", &format!("[{}]", guard("frobnicate", "<=", sym_n, &c(4))))),
        ("bad comparison", view(&format!("[{sym_n}]"), &format!("[{}]", c(1)), &c(0), "null", &format!("[{}]", guard("shrink", "=<", sym_n, &c(4))))),
        ("false guard", view(&format!("[{sym_n}]"), &format!("[{}]", c(1)), &c(0), "null", &format!("[{}]", guard("shrink", ">", sym_n, &c(8))))),
        ("unknown field", r#"{"shape":[],"strides":[],"offset":{"nodes":[{"const":"0"}],"root":0},"mask":null,"extra":1}"#.to_string()),
        ("bad expression", view("[{\"nodes\":[],\"root\":0}]", &format!("[{}]", c(1)), &c(0), "null", "[]")),
    ];
    let mut out = Vec::new();
    for (name, json) in &cases {
        out.push(format!("{name}: {}", load_error::<View>(json)));
    }
    let stack_cases = [
        ("empty stack", r#"{"views":[]}"#.to_string()),
        (
            "outside the view below",
            format!(r#"{{"views":[{}, {}]}}"#, plain_row(2), plain_row(3)),
        ),
    ];
    for (name, json) in &stack_cases {
        out.push(format!("{name}: {}", load_error::<ViewStack>(json)));
    }
    out.push(format!(
        "guard that always holds: {}",
        load_error::<symshape_view::Guard>(&guard("shrink", "<=", sym_n, &c(8)))
    ));
    out.push(format!("op: {}", load_error::<Op>(r#"{"rotate":[1]}"#)));
    insta::assert_snapshot!(out.join("\n"));
}

/// A random chain of ops on a symbolic or concrete start view: the core ops and the
/// newer ones whose guards a saved view must load again (tensor_split, `T`, `mT`,
/// reinterpret, the complex views, split and chunk pieces).
#[derive(Clone, Debug)]
enum Step {
    Pad(u8, u8),
    Shrink(u8),
    Permute,
    Flip(u8),
    Reshape,
    Index(u8),
    TensorSplit(u8),
    TensorSplitAt(u8),
    ReverseAxes,
    MatrixTranspose,
    Reinterpret(u8),
    Complex(u8),
    Split(u8),
    Chunk(u8),
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u8..3, 0u8..3).prop_map(|(a, b)| Step::Pad(a, b)),
        (0u8..3).prop_map(Step::Shrink),
        Just(Step::Permute),
        (0u8..2).prop_map(Step::Flip),
        Just(Step::Reshape),
        (0u8..3).prop_map(Step::Index),
        (0u8..4).prop_map(Step::TensorSplit),
        (0u8..3).prop_map(Step::TensorSplitAt),
        Just(Step::ReverseAxes),
        Just(Step::MatrixTranspose),
        (0u8..3).prop_map(Step::Reinterpret),
        (0u8..4).prop_map(Step::Complex),
        (0u8..4).prop_map(Step::Split),
        (0u8..4).prop_map(Step::Chunk),
    ]
}

fn apply(s: &Syms, st: &ViewStack, step: &Step) -> Option<ViewStack> {
    let shape = st.shape().to_vec();
    let rank = shape.len();
    let z = Expr::from(0);
    let amount = |k: u8| match k {
        0 => z,
        1 => Expr::from(2),
        _ => s.p,
    };
    let op = match *step {
        Step::Pad(a, b) => Op::Pad(
            shape
                .iter()
                .enumerate()
                .map(|(i, _)| {
                    if i == 0 {
                        (amount(a), amount(b))
                    } else {
                        (z, z)
                    }
                })
                .collect(),
        ),
        Step::Shrink(k) => Op::Shrink(
            shape
                .iter()
                .enumerate()
                .map(|(i, &d)| {
                    if i == 0 {
                        (amount(k).min(d), d)
                    } else {
                        (z, d)
                    }
                })
                .collect(),
        ),
        Step::Permute => Op::Permute((0..rank).rev().collect()),
        Step::Flip(a) => Op::Flip(vec![usize::from(a) % rank.max(1)]),
        Step::Reshape => Op::Reshape(vec![shape.iter().copied().product()]),
        Step::Index(k) => Op::Index(vec![match k {
            0 => IndexItem::Slice {
                start: Some(1.into()),
                stop: None,
                step: None,
            },
            1 => IndexItem::Slice {
                start: None,
                stop: None,
                step: Some((-1).into()),
            },
            _ => IndexItem::NewAxis,
        }]),
        Step::TensorSplit(k) => Op::TensorSplit {
            axis: 0,
            sections: 2 + usize::from(k % 2),
            piece: usize::from(k / 2),
        },
        Step::TensorSplitAt(k) => Op::TensorSplitAt {
            axis: 0,
            indices: vec![s.p, Expr::from(-1)],
            piece: usize::from(k),
        },
        Step::ReverseAxes => Op::ReverseAxes,
        Step::MatrixTranspose => Op::MatrixTranspose,
        Step::Reinterpret(k) => {
            let (from, to) = [(2, 4), (4, 2), (8, 4)][usize::from(k)];
            Op::Reinterpret { from, to }
        }
        Step::Complex(k) => {
            [Op::ViewAsReal, Op::ViewAsComplex, Op::Real, Op::Imag][usize::from(k)].clone()
        }
        Step::Split(k) => Op::Split {
            axis: 0,
            size: if k % 2 == 0 { Expr::from(2) } else { s.p + 1 },
            piece: Expr::from(i64::from(k / 2)),
        },
        Step::Chunk(k) => Op::Chunk {
            axis: 0,
            chunks: 2,
            piece: usize::from(k % 2),
        },
    };
    st.apply(&s.cx, &op).ok()
}

/// Writes every view of `st` (and `st` itself when it loads without new `stack` guards)
/// and reads it back unchanged.
fn round_trips(st: &ViewStack) -> Result<(), TestCaseError> {
    for v in st.views() {
        let text = serde_json::to_string(v).expect("ser");
        let back: Result<View, _> = serde_json::from_str(&text);
        let back = back.map_err(|e| TestCaseError::fail(format!("{v}: {e}\n{text}")))?;
        prop_assert_eq!(&back, v);
    }
    if st.views().len() == 1 || st.views().iter().all(View::is_concrete) {
        let text = serde_json::to_string(st).expect("ser");
        let back: ViewStack = serde_json::from_str(&text).expect("de");
        prop_assert_eq!(&back, st);
    }
    Ok(())
}

proptest! {
    #[test]
    fn random_views_and_stacks_round_trip(
        start in 0u8..3,
        steps in prop::collection::vec(arb_step(), 0..6),
    ) {
        let s = syms();
        let start = match start {
            0 => View::contiguous(&[4i64, 6, 3]),
            1 => View::create(&s.cx, &[s.n, s.m, 3.into()], None, Expr::from(0), None),
            // Byte strides whose divisibility is a guard (`2*n` bytes of 4-byte elements).
            _ => View::from_byte_strides(
                &s.cx,
                &[Expr::from(3), s.n, Expr::from(2)],
                &[s.n * 2, Expr::from(8), Expr::from(4)],
                Expr::from(0),
                4,
            ),
        };
        let mut st = ViewStack::new(start.expect("start"));
        round_trips(&st)?;
        for step in &steps {
            if let Some(next) = apply(&s, &st, step) {
                st = next;
                round_trips(&st)?;
            }
        }
    }
}

/// Views carrying the guards of the newer ops load again: a symbolic `[3, n]` stack
/// reinterpreted from 2- to 4-byte elements, complex views, byte strides, split and
/// chunk pieces, tensor_split.
#[test]
fn guards_of_every_op_load() {
    let s = syms();
    let z = Expr::from(0);
    let base = View::create(&s.cx, &[Expr::from(3), s.n], None, z, None).expect("[3, n]");
    let st = ViewStack::new(base);
    let ops = [
        Op::Reinterpret { from: 2, to: 4 },
        Op::ViewAsComplex,
        Op::Split {
            axis: 1,
            size: s.p + 1,
            piece: Expr::from(1),
        },
        Op::Chunk {
            axis: 1,
            chunks: 3,
            piece: 1,
        },
        Op::SplitSizes {
            axis: 1,
            sizes: vec![s.p, Expr::from(2)],
            piece: 1,
        },
        Op::Take {
            axis: 1,
            indices: vec![s.m],
        },
        Op::Compress {
            axis: 1,
            mask: vec![true, false, true],
        },
        Op::BooleanMask(vec![true; 6]),
        Op::AsStrided {
            shape: vec![s.n],
            strides: vec![Expr::from(3)],
            offset: s.p,
        },
    ];
    let mut out = Vec::new();
    for op in &ops {
        let got = st.apply(&s.cx, op).unwrap_or_else(|e| panic!("{op}: {e}"));
        assert!(!got.guards().is_empty(), "{op} records a guard");
        let text = serde_json::to_string(&got).expect("ser");
        let back: ViewStack = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{op}: {e}"));
        assert_eq!(back, got, "{op}");
        out.push(format!("{op}: {}", got.guards_text().replace('\n', "; ")));
    }
    let bytes = View::from_byte_strides(
        &s.cx,
        &[Expr::from(3), s.n],
        &[s.n * 2, Expr::from(4)],
        z,
        4,
    )
    .expect("byte strides");
    let back: View = serde_json::from_str(&serde_json::to_string(&bytes).expect("ser"))
        .expect("byte_strides guard");
    assert_eq!(back, bytes);
    out.push(format!("byte strides: {}", bytes.guards()[0]));
    insta::assert_snapshot!(out.join("\n"));
}

/// A loaded symbolic stack whose fit is not proven carries the `stack` guard
/// (saved and loaded like any guard); one proven not to fit does not load.
#[test]
fn symbolic_stack_fit_guard_round_trips() {
    let s = syms();
    let z = Expr::from(0);
    let lower = View::create(&s.cx, &[s.n], None, z, None).expect("lower");
    let upper = View::create(&s.cx, &[s.m], None, z, None).expect("upper");
    let st = ViewStack::from_views(&s.cx, vec![lower.clone(), upper]).expect("stack");
    let text = round_trip(&st);
    let guards: Vec<String> = st.views()[1]
        .guards()
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(format!("{text}\n{}", guards.join("\n")), @r"
    view shape=[n] strides=[1] offset=0 mask=none
    view shape=[m] strides=[1] offset=0 mask=none
    stack: m <= n (last element reached is within view [n] with strides [1])
    ");
    let wide = View::create(&s.cx, &[s.n + 1], None, z, None).expect("wide");
    let json = format!(
        r#"{{"views":[{},{}]}}"#,
        serde_json::to_string(&lower).expect("ser"),
        serde_json::to_string(&wide).expect("ser")
    );
    insta::assert_snapshot!(load_error::<ViewStack>(&json), @"deserialize stack: stack: guard n + 1 <= n (last element reached is within view [n] with strides [1]) fails: it is false for every value of the symbols, for view [n + 1] with strides [1]");
}

#[test]
fn a_loaded_view_past_the_rank_limit_is_refused() {
    let axes = |rank: usize| vec![c(1); rank].join(", ");
    let view = |rank: usize| {
        format!(
            r#"{{"shape":[{}],"strides":[{}],"offset":{},"mask":null,"guards":[]}}"#,
            axes(rank),
            axes(rank),
            c(0)
        )
    };
    let over = symshape_view::MAX_RANK + 1;
    assert_eq!(
        load_error::<View>(&view(over)),
        "deserialize view: create: limit: the view would have 65 axes, more than the limit of 64"
    );
    let at: View = serde_json::from_str(&view(symshape_view::MAX_RANK)).expect("at the limit");
    assert_eq!(at.ndim(), symshape_view::MAX_RANK);
}

/// A stack's copy boundary survives a round trip (`copy_at`, left out when nothing was
/// copied), and a `copy_at` that is not a level of the stack is an error.
#[test]
fn a_copy_boundary_round_trips() {
    let cx = Scope::new();
    let st = ViewStack::new(View::contiguous(&[2, 3]).expect("v"))
        .transpose(&cx, 0, 1)
        .and_then(|s| s.copy(&cx))
        .and_then(|s| s.flip(&cx, &[0]))
        .expect("stack");
    assert_eq!(st.storage_level(), 1);
    round_trip(&st);
    let plain = ViewStack::new(View::contiguous(&[2, 3]).expect("v"));
    assert!(!serde_json::to_string(&plain)
        .expect("json")
        .contains("copy_at"));
    let text = serde_json::to_string(&st)
        .expect("json")
        .replace("\"copy_at\":1", "\"copy_at\":2");
    insta::assert_snapshot!(load_error::<ViewStack>(&text), @"deserialize stack: stack: a copy at level 2 is not a level of a stack of 2 views (levels 0 to 1)");
}
