//! The rank limit: the constructors and every op that adds axes refuse a result of more
//! than `MAX_RANK` axes with a limit error naming the op, before doing any work; views at
//! the limit go through the ops that used to cost a power of the rank.

use symshape::{Expr, Scope};
use symshape_view::{
    broadcast_shapes, ConcreteView, Error, IndexItem, Op, View, ViewOps, ViewStack, MAX_RANK,
};

/// Whether `e` is the rank limit's refusal on behalf of `op`.
fn is_rank_limit<T: std::fmt::Debug>(r: &Result<T, Error>, op: &str) -> bool {
    match r {
        Err(Error::Limit { op: o, detail }) => {
            *o == op && detail.contains(&format!("more than the limit of {MAX_RANK}"))
        }
        _ => false,
    }
}

/// The ops that add axes, each on a view of rank `ndim` giving `ndim + 1` axes (or
/// `MAX_RANK + 1` for the ops that take the result's shape).
fn growing_ops(ndim: usize) -> Vec<Op<i64>> {
    let ones = vec![1i64; ndim + 1];
    vec![
        Op::Unsqueeze(0),
        Op::Index(vec![IndexItem::NewAxis]),
        Op::Index(vec![
            IndexItem::Int(0),
            IndexItem::NewAxis,
            IndexItem::NewAxis,
        ]),
        Op::BroadcastTo(ones.clone()),
        Op::Reshape(ones.clone()),
        Op::ViewShape(ones.clone()),
        Op::Expand(ones.clone()),
        Op::AsStrided {
            shape: ones.clone(),
            strides: vec![0; ndim + 1],
            offset: 0,
        },
        Op::Unfold {
            axis: 0,
            size: 1,
            step: 1,
        },
        Op::SlidingWindowView {
            window: vec![1],
            axes: Some(vec![0]),
        },
        Op::Unflatten {
            axis: 0,
            sizes: vec![1, 1],
        },
        Op::ViewAsReal,
    ]
}

fn exprs(op: &Op<i64>) -> Op<Expr> {
    op.to_expr()
}

/// A scope with `s0..s{rank-1}` declared `1..=4`, and those symbols.
fn symbols(rank: usize) -> (Scope, Vec<Expr>) {
    let mut cx = Scope::new();
    let syms = (0..rank)
        .map(|k| cx.declare_str(&format!("s{k} 1..=4")).expect("declare"))
        .collect();
    (cx, syms)
}

#[test]
fn constructors_refuse_more_axes_than_the_limit() {
    let cx = Scope::new();
    let over = vec![1i64; MAX_RANK + 1];
    assert!(is_rank_limit(&ConcreteView::contiguous(&over), "create"));
    assert!(is_rank_limit(
        &ConcreteView::create(&over, Some(&over), 0, None),
        "create"
    ));
    assert!(is_rank_limit(&View::row_major(&cx, &over), "create"));
    assert!(is_rank_limit(
        &broadcast_shapes(&cx, &[&over]),
        "broadcast_shapes"
    ));
    let (cx, syms) = symbols(MAX_RANK + 1);
    assert!(is_rank_limit(&View::row_major(&cx, &syms), "create"));
    let err = View::row_major(&cx, &syms).expect_err("refused");
    assert_eq!(
        err.to_string(),
        format!("create: limit: the view would have 65 axes, more than the limit of {MAX_RANK}")
    );
    // At the limit every constructor accepts.
    let at = vec![1i64; MAX_RANK];
    assert_eq!(ConcreteView::contiguous(&at).expect("at").ndim(), MAX_RANK);
    assert_eq!(
        View::row_major(&cx, &syms[..MAX_RANK]).expect("at").ndim(),
        MAX_RANK
    );
}

#[test]
fn ops_that_add_axes_refuse_past_the_limit_on_every_engine() {
    let cx = Scope::new();
    let top = ConcreteView::contiguous(&vec![1i64; MAX_RANK]).expect("view");
    let (scx, syms) = symbols(MAX_RANK);
    let symbolic = View::row_major(&scx, &syms).expect("symbolic");
    for op in growing_ops(MAX_RANK) {
        let name = op.name();
        assert!(is_rank_limit(&top.apply(&op), name), "concrete {name}");
        let v = View::from(top.clone());
        assert!(is_rank_limit(&v.apply_dim(&cx, &op), name), "view {name}");
        let stack = ViewStack::new(v);
        assert!(
            is_rank_limit(&stack.apply_dim(&cx, &op), name),
            "stack {name}"
        );
        let e = exprs(&op);
        assert!(
            is_rank_limit(&symbolic.apply(&scx, &e), name),
            "symbolic {name}"
        );
        let s = ViewStack::new(symbolic.clone());
        assert!(
            is_rank_limit(&s.apply(&scx, &e), name),
            "symbolic stack {name}"
        );
    }
    // One below the limit, the same ops reach it.
    let below = ConcreteView::contiguous(&vec![1i64; MAX_RANK - 1]).expect("view");
    for op in growing_ops(MAX_RANK - 1) {
        if let Op::Expand(_) = op {
            // `expand` keeps the rank: more sizes than axes is its own error.
            continue;
        }
        let res = ViewStack::new(View::from(below.clone())).apply_dim(&cx, &op);
        let rank = res.map(|s| s.shape().len());
        assert_eq!(rank, Ok(MAX_RANK), "{}", op.name());
    }
}

#[test]
fn the_named_methods_of_the_exact_engine_refuse_too() {
    let cx = Scope::new();
    let v = ConcreteView::contiguous(&vec![1i64; MAX_RANK]).expect("view");
    let over = vec![1i64; MAX_RANK + 1];
    let zeros = vec![0i64; MAX_RANK + 1];
    // A dense row-major reshape takes a shortcut that builds no view through `create`.
    assert!(is_rank_limit(&v.reshape(&cx, &over), "reshape"));
    assert!(is_rank_limit(&v.view_shape(&cx, &over), "view_shape"));
    assert!(is_rank_limit(&v.expand(&cx, &over), "expand"));
    assert!(is_rank_limit(&v.broadcast_to(&cx, &over), "broadcast_to"));
    assert!(is_rank_limit(&v.unsqueeze(&cx, 0), "unsqueeze"));
    assert!(is_rank_limit(
        &v.index(&cx, &[IndexItem::<i64>::NewAxis]),
        "index"
    ));
    assert!(is_rank_limit(&v.unfold(&cx, 0, 1, 1), "unfold"));
    assert!(is_rank_limit(&v.unflatten(&cx, 0, &[1, 1]), "unflatten"));
    assert!(is_rank_limit(
        &v.torch_as_strided(&cx, &over, &zeros, 0),
        "as_strided"
    ));
    assert!(is_rank_limit(
        &v.sliding_window_view(&cx, &[1], Some(&[0])),
        "sliding_window_view"
    ));
    assert!(is_rank_limit(&v.view_as_real(&cx), "view_as_real"));
    let row = ConcreteView::contiguous(&[2]).expect("row");
    assert!(is_rank_limit(
        &row.reshape(&cx, &vec![1i64; 100_000]),
        "reshape"
    ));
}

#[test]
fn ops_that_keep_the_rank_work_at_the_limit() {
    // `real` and `imag` are `view_as_real` then a select of the pair axis: at the limit
    // the pair axis would be one too many, so they are built without it.
    let cx = Scope::new();
    let mut shape = vec![1i64; MAX_RANK];
    shape[MAX_RANK - 1] = 3;
    let top = ConcreteView::contiguous(&shape).expect("view");
    let (scx, mut syms) = symbols(MAX_RANK - 1);
    syms.push(Expr::from(3));
    let symbolic = View::row_major(&scx, &syms).expect("symbolic");
    for (op, offset) in [(Op::Real, 0), (Op::Imag, 1)] {
        let c = top.apply(&op).expect("a part at the limit");
        assert_eq!(c.shape(), shape.as_slice());
        assert_eq!(c.strides()[MAX_RANK - 1], 2);
        assert_eq!(c.offset(), offset);
        let v = ViewStack::new(View::from(top.clone())).apply_dim(&cx, &op);
        assert_eq!(v.map(|s| s.shape().len()), Ok(MAX_RANK));
        let s = symbolic
            .apply(&scx, &op.to_expr())
            .expect("a symbolic part");
        assert_eq!(s.ndim(), MAX_RANK);
        assert_eq!(s.offset(), Expr::from(offset));
    }
}

#[test]
fn huge_argument_lists_are_refused_at_once() {
    let cx = Scope::new();
    let v = ViewStack::new(View::contiguous(&[2]).expect("view"));
    let many = 1_000_000;
    let none = Op::<i64>::Index(vec![IndexItem::NewAxis; many]);
    let err = v.apply_dim(&cx, &none).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "index: limit: the result on view [2] with strides [1] would have 1000001 axes, more than the limit of 64"
    );
    let mut shape = vec![1i64; many];
    shape.push(2);
    assert!(is_rank_limit(
        &v.apply_dim(&cx, &Op::BroadcastTo(shape)),
        "broadcast_to"
    ));
    let windows = Op::<i64>::SlidingWindowView {
        window: vec![1; many],
        axes: Some(vec![0; many]),
    };
    assert!(is_rank_limit(
        &v.apply_dim(&cx, &windows),
        "sliding_window_view"
    ));
}

#[test]
fn symbolic_views_at_the_limit_copy_lower_and_prove_flags() {
    let (cx, syms) = symbols(MAX_RANK);
    let v = View::row_major(&cx, &syms).expect("view");
    let flags = v.numpy_flags(&cx).expect("flags");
    assert_eq!(flags.c_contiguous.as_bool(), Some(true));
    // A copy of the transpose reads it through a row-major view of the same shape: the
    // lowered offset is the transpose's own, with no `//` or `%` left to prove away.
    let t = ViewStack::new(v)
        .apply(&cx, &Op::ReverseAxes)
        .and_then(|s| s.apply(&cx, &Op::Copy))
        .expect("copy");
    assert_eq!(t.views().len(), 2);
    let lowered = t.lower(&cx).expect("lower");
    let offset = lowered.offset.to_string();
    assert!(!offset.contains("//") && !offset.contains('%'), "{offset}");
    let last = lowered.index[MAX_RANK - 1];
    assert!(offset.starts_with(&format!("{last}*s1*")), "{offset}");
}
