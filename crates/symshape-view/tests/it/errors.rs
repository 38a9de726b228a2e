//! Every error message, snapshotted in one table.

use symshape::{Bindings, Expr, Scope};
use symshape_view::concrete::{broadcast_shapes, merge};
use symshape_view::{parse_index, ConcreteView, IndexItem, Op, View, ViewOps, ViewStack};

use crate::scope_with;

fn v(shape: &[i64]) -> View {
    View::contiguous(shape).expect("contiguous")
}

/// `label: message` of an error, for the tables of error messages.
pub fn line<T: std::fmt::Debug>(label: &str, r: Result<T, symshape_view::Error>) -> String {
    match r {
        Ok(x) => format!("{label}: unexpected success {x:?}"),
        Err(e) => format!("{label}: {e}"),
    }
}

#[test]
fn error_messages() {
    let cx = Scope::new();
    let masked = v(&[2, 3]).pad(&cx, &[(0i64, 0i64), (1, 0)]).expect("pad");
    let lines = vec![
        line(
            "create rank",
            View::create(&cx, &[2i64, 3], Some(&[1i64]), 0, None),
        ),
        line(
            "create negative",
            View::create(&cx, &[2i64, -1], None, 0, None),
        ),
        line(
            "create mask rank",
            View::create(&cx, &[2i64, 3], None, 0, Some(&[(0i64, 1i64)])),
        ),
        line(
            "create mask bound",
            View::create(&cx, &[2i64, 3], None, 0, Some(&[(0i64, 2i64), (2, 4)])),
        ),
        line(
            "create numel overflow",
            View::create(&cx, &[i64::MAX, 2], None, 0, None),
        ),
        line(
            "create offset overflow",
            View::create(&cx, &[3i64], Some(&[i64::MAX / 2]), 10, None),
        ),
        line("dim", v(&[2, 3]).dim(2)),
        line("stride", v(&[2, 3]).stride(5)),
        line(
            "linear_index rank",
            v(&[2, 3])
                .to_concrete("linear_index")
                .and_then(|c| c.linear_index(&[1])),
        ),
        line(
            "offset_of bounds",
            v(&[2, 3])
                .to_concrete("offset_of")
                .and_then(|c| c.offset_of(&[1, 3])),
        ),
        line("reshape count", v(&[2, 3]).reshape(&cx, &[5i64])),
        line("reshape negative", v(&[2, 3]).reshape(&cx, &[-2i64, -3])),
        line(
            "reshape transposed",
            v(&[3, 2])
                .permute(&cx, &[1, 0])
                .and_then(|t| t.reshape(&cx, &[6i64])),
        ),
        line("reshape masked", masked.reshape(&cx, &[8i64])),
        line("expand rank", v(&[2, 3]).expand(&cx, &[2i64, 2, 3])),
        line("expand size", v(&[2, 3]).expand(&cx, &[4i64, 3])),
        line("permute", v(&[2, 3]).permute(&cx, &[0, 0])),
        line(
            "shrink bound",
            v(&[2, 3]).shrink(&cx, &[(0i64, 2i64), (2, 1)]),
        ),
        line("shrink rank", v(&[2, 3]).shrink(&cx, &[(0i64, 2i64)])),
        line(
            "pad negative",
            v(&[2, 3]).pad(&cx, &[(0i64, 0i64), (-1, 0)]),
        ),
        line("pad overflow", v(&[2]).pad(&cx, &[(i64::MAX, 0i64)])),
        line("flip axis", v(&[2, 3]).flip(&cx, &[2])),
        line("flip axes", v(&[2, 3]).flip(&cx, &[1, 1])),
        line(
            "index too many",
            v(&[2, 3]).index(&cx, &parse_index("[0, 0, 0]").expect("parse")),
        ),
        line(
            "index two ellipses",
            v(&[2, 3]).index(&cx, &parse_index("[..., 0, ...]").expect("parse")),
        ),
        line(
            "index step zero",
            v(&[2, 3]).index(&cx, &parse_index("[::0]").expect("parse")),
        ),
        line(
            "index out of bounds",
            v(&[2, 3]).index(&cx, &[IndexItem::FULL, IndexItem::Int(-4)]),
        ),
        line(
            "index masked scalar",
            v(&[3])
                .pad(&cx, &[(1i64, 0i64)])
                .and_then(|p| p.index(&cx, &[IndexItem::Int(0)])),
        ),
        line("squeeze", v(&[2, 1]).squeeze(&cx, Some(&[0]))),
        line("unsqueeze", v(&[2, 1]).unsqueeze(&cx, 3)),
        line("swapaxes", v(&[2, 1]).swapaxes(&cx, 0, 2)),
        line("movedim", v(&[2, 1]).movedim(&cx, 2, 0)),
        line("broadcast_to", v(&[3]).broadcast_to(&cx, &[3i64, 4])),
        line(
            "broadcast_shapes",
            broadcast_shapes(&[&[2, 3, 4], &[3, 1], &[5, 1, 4]]),
        ),
        line("narrow", v(&[2, 3]).narrow(&cx, 1, 2, 2i64)),
        line("split", v(&[2, 3]).split(&cx, 1, 0i64)),
        line("split_sizes", v(&[2, 3]).split_sizes(&cx, 1, &[1i64, 1])),
        line("chunk", v(&[2, 3]).chunk(&cx, 1, 0)),
        line("unbind", v(&[2, 3]).unbind(&cx, 2)),
        line("unfold size", v(&[2, 3]).unfold(&cx, 1, 4i64, 1i64)),
        line("unfold mask", masked.unfold(&cx, 1, 2i64, 1i64)),
        line("diagonal", v(&[2, 3]).diagonal(&cx, 0, 1, 1)),
        line("flatten", v(&[2, 3, 4]).flatten(&cx, 2, 1)),
        line("unflatten", v(&[2, 6]).unflatten(&cx, 1, &[4i64, 2])),
        line("as_strided", View::as_strided(&[3, 3], &[3, 1], 2, 9)),
        line(
            "merge outside",
            merge(
                &ConcreteView::contiguous(&[4]).expect("lower"),
                &ConcreteView::create(&[3], Some(&[2]), 0, None).expect("upper"),
            ),
        ),
        line("stack empty", ViewStack::from_views(&cx, vec![])),
        line(
            "stack outside",
            ViewStack::from_views(&cx, vec![v(&[2]), v(&[3])]),
        ),
        line("parse entry", parse_index("[1, a:2]")),
        line("parse brackets", parse_index("[1, 2")),
        line("parse slice", parse_index("[1:2:3:4]")),
        line(
            "symbolic offsets",
            Expr::symbol("n")
                .map_err(|_| symbol_error())
                .and_then(|n| View::create(&cx, &[n, Expr::from(4)], None, Expr::from(0), None))
                .and_then(|v| v.to_concrete("offsets")),
        ),
        line(
            "symbolic argument",
            Expr::symbol("n")
                .map_err(|_| symbol_error())
                .and_then(|n| v(&[2, 3]).reshape(&cx, &[n, Expr::from(3)])),
        ),
        line(
            "symbolic proven false",
            Expr::symbol("k").map_err(|_| symbol_error()).and_then(|k| {
                ViewStack::new(v(&[2, 3])).shrink(
                    &cx,
                    &[(Expr::from(0), k + 3), (Expr::from(0), Expr::from(3))],
                )
            }),
        ),
        line(
            "symbolic guard at bind",
            Expr::symbol("k").map_err(|_| symbol_error()).and_then(|k| {
                let s = ViewStack::new(v(&[2, 3]))
                    .shrink(&cx, &[(Expr::from(0), k), (Expr::from(0), Expr::from(3))])?;
                let mut b = Bindings::new();
                b.set(k, 5)?;
                s.bind(&Scope::new(), &b)
            }),
        ),
        line(
            "symbolic unbound",
            Expr::symbol("k").map_err(|_| symbol_error()).and_then(|k| {
                ViewStack::new(v(&[2, 3]))
                    .pad(&cx, &[(k, Expr::from(0)), (Expr::from(0), Expr::from(0))])?
                    .bind(&Scope::new(), &Bindings::new())
            }),
        ),
    ];
    insta::assert_snapshot!("errors", lines.join("\n"));
}

fn symbol_error() -> symshape_view::Error {
    symshape_view::Error::Parse {
        detail: "symbol n".into(),
    }
}

/// Errors of symbolic indexing, windows, diagonals and pieces.
#[test]
fn symbolic_op_errors() {
    let (cx, [n, s]) = scope_with(["n 0..=8", "s -2..=2"]);
    let z = Expr::from(0);
    let sym = View::create(&cx, &[n, Expr::from(4)], None, z, None).expect("view");
    let idx = |text: &str| symshape_view::parse_index_in(&cx, text);
    let bind = |st: symshape_view::Result<ViewStack>, value: i64| {
        let mut b = Bindings::new();
        b.set(n, value)?;
        b.set(s, 1)?;
        st?.bind(&cx, &b)
    };
    let lines = vec![
        line("parse unknown symbol", idx("[m:]")),
        line("parse unclosed", idx("[min(n, 2:]")),
        line("parse empty part", idx("[n, , 1]")),
        line("step sign", idx("[::s]").and_then(|i| sym.index(&cx, &i))),
        line(
            "step zero",
            idx("[::s - s]").and_then(|i| sym.index(&cx, &i)),
        ),
        line(
            "index proven out",
            idx("[n + 1]").and_then(|i| sym.index(&cx, &i)),
        ),
        line(
            "index guard at bind",
            bind(
                idx("[n - 1]").and_then(|i| ViewStack::new(sym.clone()).index(&cx, &i)),
                0,
            ),
        ),
        line("unfold axis", sym.unfold(&cx, 2, 1i64, 1i64)),
        line("unfold size", sym.unfold(&cx, 1, 5i64, 1i64)),
        line("unfold step", sym.unfold(&cx, 0, Expr::from(1), z)),
        line(
            "unfold guard at bind",
            bind(
                ViewStack::new(sym.clone()).unfold(&cx, 0, Expr::from(3), Expr::from(1)),
                2,
            ),
        ),
        line(
            "unfold masked",
            sym.pad(&cx, &[(Expr::from(1), z), (z, z)])
                .and_then(|p| p.unfold(&cx, 0, 2i64, 1i64)),
        ),
        line("diagonal axes", sym.diagonal(&cx, z, 1, 1)),
        line("diagonal axis range", sym.diagonal(&cx, z, 0, 3)),
        line("split count", sym.split(&cx, 0, 3i64)),
        line("split piece", sym.split_piece(&cx, 1, 2i64, 2i64)),
        line("split size", sym.split_piece(&cx, 1, z, z)),
        line("chunk count", sym.chunk(&cx, 0, 2)),
        line("chunk zero", sym.chunk(&cx, 0, 0)),
        line("unbind count", sym.unbind(&cx, 0)),
        line(
            "split_sizes sum",
            sym.split_sizes(&cx, 1, &[Expr::from(1), Expr::from(2)]),
        ),
    ];
    insta::assert_snapshot!("symbolic_errors", lines.join("\n"));
}

#[test]
fn flip_refuses_a_stride_that_does_not_negate() {
    let cx = Scope::new();
    // Only a zero-size view may have such a stride.
    let c = ConcreteView::create(&[0, 2], Some(&[1, i64::MIN]), 0, None).expect("create");
    insta::assert_snapshot!(
        line("flip", c.flip(&cx, &[1])),
        @"flip: flip: overflow: negating stride -9223372036854775808 of view [0, 2] with strides [1, -9223372036854775808]"
    );
    // An axis of one index is not reversed, so its stride is kept.
    let one = ConcreteView::create(&[0, 1], Some(&[1, i64::MIN]), 0, None).expect("create");
    assert_eq!(one.flip(&cx, &[1]).expect("flip"), one);
}

#[test]
fn split_sizes_reports_bad_sizes_before_a_bad_piece_on_both_engines() {
    // Sizes that do not add up and a piece past the last: the one rule (fields.rs)
    // checks the sizes first, for constant and symbolic views alike.
    let (cx, [n]) = scope_with(["n 5..=10"]);
    let op = |sizes: Vec<Expr>| Op::SplitSizes {
        axis: 0,
        sizes,
        piece: 5,
    };
    let constant = ConcreteView::contiguous(&[6]).expect("view");
    insta::assert_snapshot!(
        line("exact", constant.apply(&Op::SplitSizes { axis: 0, sizes: vec![2, 2], piece: 5 })),
        @"exact: split_sizes: sizes [2, 2] do not add up to size 6 of axis 0 of view [6] with strides [1]"
    );
    let sym = View::row_major(&cx, &[n]).expect("view");
    insta::assert_snapshot!(
        line("symbolic", sym.apply(&cx, &op(vec![Expr::from(2), Expr::from(2)]))),
        @"symbolic: split_sizes: guard 4 == n (sizes [2, 2] add up to the size of axis 0) fails: it is false for every value of the symbols, for view [n] with strides [1]"
    );
}

#[test]
fn a_concrete_view_refuses_symbolic_arguments_through_view_ops() {
    let (cx, [n]) = scope_with(["n 1..=8"]);
    let c = ConcreteView::contiguous(&[4, 2]).expect("view");
    insta::assert_snapshot!(
        line("reshape", c.reshape(&cx, &[n])),
        @"reshape: reshape: an argument is symbolic (reshape [n]); bind the symbols first"
    );
    // Expressions that are constants run on the exact engine.
    assert_eq!(
        c.reshape(&cx, &[Expr::from(8)]).expect("reshape"),
        c.reshape(&cx, &[8i64]).expect("reshape")
    );
}

#[test]
fn view_ops_on_a_concrete_view_agree_with_the_view() {
    let cx = Scope::new();
    let c = ConcreteView::contiguous(&[5, 3]).expect("view");
    let v = View::from(c.clone());
    let concrete = |r: Vec<ConcreteView>| r.into_iter().map(View::from).collect::<Vec<_>>();
    assert_eq!(
        concrete(c.split(&cx, 0, 2i64).expect("split")),
        v.split(&cx, 0, 2i64).expect("split")
    );
    assert_eq!(
        concrete(c.chunk(&cx, 1, 2).expect("chunk")),
        v.chunk(&cx, 1, 2).expect("chunk")
    );
    assert_eq!(
        View::from(
            c.expand_as(&cx, &View::contiguous(&[5, 3]).expect("view"))
                .expect("expand_as")
        ),
        v.expand_as(&cx, &c).expect("expand_as")
    );
    assert_eq!(
        View::from(c.transpose(&cx, 0, 1).expect("transpose")),
        v.transpose(&cx, 0, 1).expect("transpose")
    );
}
