//! The rules written once for both engines (a gather's arguments and result shape, the
//! fit of a view over the one below it in a stack, the rank of per-axis arguments and
//! axes out of range, the piece count of `split`, the rank and sizes of broadcast shapes): the exact engine, the symbolic engine bound afterwards and a
//! naive model agree.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope};
use symshape_view::{broadcast_shapes, ConcreteView, Op, Selection, View, ViewOps, ViewStack};

use crate::strategy::arb_raw;

/// A scope with one symbol `n{k} lo..=4` per axis of `shape`, those symbols and the
/// binding of each to its size in `shape`.
fn symbols_for(shape: &[i64], lo: i64) -> (Scope, Vec<Expr>, Bindings) {
    let mut cx = Scope::new();
    let mut b = Bindings::new();
    let syms: Vec<Expr> = (0..shape.len())
        .map(|k| cx.declare_str(&format!("n{k} {lo}..=4")).expect("declare"))
        .collect();
    for (&s, &d) in syms.iter().zip(shape) {
        b.set(s, d).expect("in range");
    }
    (cx, syms, b)
}

/// `msg` with the description of the view it names (`view [..] with strides [..]`) cut
/// out, so that the messages of a concrete and a symbolic view compare.
fn unviewed(msg: &str) -> String {
    const STRIDES: &str = " with strides [";
    let Some(start) = msg.find("view [") else {
        return msg.to_string();
    };
    let Some(at) = msg[start..].find(STRIDES) else {
        return msg.to_string();
    };
    let from = start + at + STRIDES.len();
    let end = from + msg[from..].find(']').map_or(0, |e| e + 1);
    format!("{}VIEW{}", &msg[..start], &msg[end..])
}

/// The messages of two results that must both be errors, without the views' descriptions.
fn both_refused<A, B>(
    a: Result<A, symshape_view::Error>,
    b: Result<B, symshape_view::Error>,
) -> Option<(String, String)> {
    match (a, b) {
        (Err(a), Err(b)) => Some((unviewed(&a.to_string()), unviewed(&b.to_string()))),
        _ => None,
    }
}

/// Sizes as a count.
fn count(n: usize) -> i64 {
    i64::try_from(n).expect("small")
}

proptest! {
    /// A gather (take, compress, boolean mask, with an axis that may be out of range and
    /// arguments that may not fit) on a symbolic view bound afterwards, on a concrete view
    /// and as `Selection::of` is refused or has the shape the naive model gives; an axis
    /// out of range is the same error on both engines.
    #[test]
    fn gathers_agree_on_both_engines(
        shape in prop::collection::vec(0i64..=4, 1..4),
        pick in 0usize..4,
        picks in prop::collection::vec(-5i64..5, 0..4),
        bits in prop::collection::vec(any::<bool>(), 0..30),
        shift in -1i64..=1,
        which in 0u8..3,
    ) {
        let axis = pick % (shape.len() + 1);
        let d = shape.get(axis).copied();
        let numel: i64 = shape.iter().product();
        let with_axis = |n: i64| {
            let mut s = shape.clone();
            if let Some(x) = s.get_mut(axis) {
                *x = n;
            }
            s
        };
        let mask_of = |len: i64| -> Vec<bool> {
            (0..len).map(|k| bits.get(usize::try_from(k).expect("small") % 30).copied().unwrap_or(true)).collect()
        };
        let trues = |m: &[bool]| count(m.iter().filter(|&&x| x).count());
        // The op and the naive model's result shape (`None`: refused).
        let (op, want): (Op<i64>, Option<Vec<i64>>) = match which {
            0 => {
                let ok = d.is_some_and(|d| picks.iter().all(|&i| -d <= i && i < d));
                (Op::Take { axis, indices: picks.clone() }, ok.then(|| with_axis(count(picks.len()))))
            }
            1 => {
                let mask = mask_of((d.unwrap_or(2) + shift).max(0));
                let ok = d == Some(count(mask.len()));
                let want = ok.then(|| with_axis(trues(&mask)));
                (Op::Compress { axis, mask }, want)
            }
            _ => {
                let mask = mask_of((numel + shift).max(0));
                let want = (count(mask.len()) == numel).then(|| vec![trues(&mask)]);
                (Op::BooleanMask(mask), want)
            }
        };
        let run = |st: ViewStack, cx: &Scope| match &op {
            Op::Take { axis, indices } => st.take(cx, *axis, indices),
            Op::Compress { axis, mask } => st.compress(cx, *axis, mask),
            Op::BooleanMask(mask) => st.boolean_mask(cx, mask),
            _ => unreachable!("a gather"),
        };
        let selected = Selection::of(&shape, &op, "v").map(|s| s.result_shape());
        prop_assert_eq!(selected.as_ref().ok(), want.as_ref());

        let cx = Scope::new();
        let exact = run(ViewStack::new(View::contiguous(&shape).expect("view")), &cx);
        let exact_shape = exact.as_ref().ok().map(|st| st.shape().to_vec());
        let want_exprs = want.as_ref().map(|w| w.iter().copied().map(Expr::from).collect::<Vec<_>>());
        prop_assert_eq!(exact_shape, want_exprs);

        let (cx, syms, b) = symbols_for(&shape, 0);
        let symbolic = run(ViewStack::new(View::row_major(&cx, &syms).expect("view")), &cx);
        let bound = symbolic.as_ref().ok().and_then(|st| st.bind(&cx, &b).ok());
        prop_assert_eq!(bound.map(|st| st.shape().to_vec()), want);
        if d.is_none() && which < 2 {
            let (e, s) = both_refused(exact, symbolic).expect("axis out of range");
            prop_assert_eq!(e, s);
        }
    }

    /// A view stacked over `[n]` fits on both engines (a concrete lower view, checked at
    /// once; a symbolic one, and a symbolic offset of the upper view, proven or guarded and
    /// bound afterwards) exactly when every valid element it reads lies in `0..n`.
    #[test]
    fn the_stack_fit_agrees_on_both_engines(
        upper in arb_raw(3, 0, 4),
        n in 0i64..=40,
        shift in -2i64..=2,
    ) {
        let Some(up) = ConcreteView::create(
            &upper.shape,
            Some(&upper.strides),
            upper.offset + shift,
            upper.mask.as_deref(),
        )
        .ok() else {
            return Ok(());
        };
        let want = up
            .offsets()
            .expect("small")
            .into_iter()
            .flatten()
            .all(|o| (0..n).contains(&o));
        let cx = Scope::new();
        let lower = View::contiguous(&[n]).expect("view");
        let exact = ViewStack::from_views(&cx, vec![lower, View::from(&up)]);
        prop_assert_eq!(exact.is_ok(), want, "{}", up);

        let mut cx = Scope::new();
        let m = cx.declare_str("m 0..=40").expect("m");
        let p = cx.declare_str("p -2..=2").expect("p");
        let mut b = Bindings::new();
        b.set(m, n).expect("m");
        b.set(p, shift).expect("p");
        let e = |v: &[i64]| v.iter().copied().map(Expr::from).collect::<Vec<_>>();
        let mask: Option<Vec<(Expr, Expr)>> = upper
            .mask
            .as_ref()
            .map(|m| m.iter().map(|&(x, y)| (Expr::from(x), Expr::from(y))).collect());
        let sym_up = View::create(
            &cx,
            &e(&upper.shape),
            Some(&e(&upper.strides)),
            Expr::from(upper.offset) + p,
            mask.as_deref(),
        )
        .expect("fields as the concrete view's");
        let lower = View::row_major(&cx, &[m]).expect("view");
        let symbolic = ViewStack::from_views(&cx, vec![lower, sym_up])
            .and_then(|st| st.bind(&cx, &b));
        prop_assert_eq!(symbolic.is_ok(), want, "{}", up);
    }

    /// An op with one argument per axis given another number of them (`shrink`, `pad`,
    /// `expand`), `flip` of axes out of range or repeated, and `dim`/`stride` of an axis
    /// out of range are refused by both engines with the same message.
    #[test]
    fn ranks_and_axes_are_refused_alike(
        shape in prop::collection::vec(1i64..=4, 0..4),
        len in 0usize..5,
        axis in 0usize..5,
        which in 0u8..5,
    ) {
        let rank = shape.len();
        let (cx, syms, _) = symbols_for(&shape, 1);
        let concrete = ViewStack::new(View::contiguous(&shape).expect("view"));
        let symbolic = ViewStack::new(View::row_major(&cx, &syms).expect("view"));
        let run = |st: &ViewStack| match which {
            0 => st.shrink(&cx, &vec![(0i64, 1i64); len]),
            1 => st.pad(&cx, &vec![(0i64, 1i64); len]),
            2 => st.expand(&cx, &vec![1i64; len]),
            _ => st.flip(&cx, &vec![axis; len]),
        };
        let refused = match which {
            2 => rank > 0 && len != rank,
            3 | 4 => len > 0 && (axis >= rank || len > 1),
            _ => len != rank,
        };
        if which == 4 {
            let (top_c, top_s) = (&concrete.views()[0], &symbolic.views()[0]);
            let pair = both_refused(top_c.dim(axis), top_s.dim(axis));
            prop_assert_eq!(pair.is_some(), axis >= rank);
            if let Some((c, s)) = pair {
                prop_assert_eq!(c, s);
            }
            let pair = both_refused(top_c.stride(axis), top_s.stride(axis));
            prop_assert_eq!(pair.is_some(), axis >= rank);
            if let Some((c, s)) = pair {
                prop_assert_eq!(c, s);
            }
        }
        if refused {
            let (c, s) = both_refused(run(&concrete), run(&symbolic)).expect("refused");
            prop_assert_eq!(c, s);
        }
    }

    /// `split_count` on a concrete view, on a symbolic view (its count evaluated at the
    /// binding) and as the naive model counts (pieces cut one after the other, at least
    /// one) agree; an axis out of range or a piece size below 1 is refused by both with
    /// the same message.
    #[test]
    fn split_counts_agree_on_both_engines(
        shape in prop::collection::vec(0i64..=4, 0..4),
        axis in 0usize..4,
        size in -1i64..=5,
    ) {
        let (cx, syms, b) = symbols_for(&shape, 0);
        let concrete = View::contiguous(&shape).expect("view");
        let symbolic = View::row_major(&cx, &syms).expect("view");
        let c = concrete.split_count(&cx, axis, size);
        let s = symbolic.split_count(&cx, axis, size);
        if axis >= shape.len() || size < 1 {
            let (c, s) = both_refused(c, s).expect("refused");
            prop_assert_eq!(c, s);
        } else {
            let (mut n, mut start) = (0i64, 0i64);
            loop {
                n += 1;
                start += size;
                if start >= shape[axis] {
                    break;
                }
            }
            prop_assert_eq!(c.expect("count"), Expr::from(n));
            prop_assert_eq!(s.expect("count").eval(&b).expect("bound"), n);
        }
    }

    /// `broadcast_shapes` of constant shapes agrees with NumPy's rule (right-aligned,
    /// equal sizes or 1); the same shapes with every size a symbol, bound afterwards, give
    /// the same shape where their guards hold, and a refusal of the rule is a refusal or a
    /// failing guard; a first shape beyond the rank limit is refused alike by both.
    #[test]
    fn broadcasts_agree_on_both_engines(
        shapes in prop::collection::vec(prop::collection::vec(0i64..=3, 0..4), 1..4),
        long in any::<bool>(),
    ) {
        let mut cx = Scope::new();
        let mut b = Bindings::new();
        let mut sym: Vec<Vec<Expr>> = Vec::new();
        for (i, s) in shapes.iter().enumerate() {
            let mut row = Vec::new();
            for (a, &d) in s.iter().enumerate() {
                let e = cx.declare_str(&format!("s{i}_{a} 0..=3")).expect("declare");
                b.set(e, d).expect("in range");
                row.push(e);
            }
            sym.push(row);
        }
        let mut consts = shapes.clone();
        if long {
            consts[0] = vec![1; 65];
            sym[0] = vec![Expr::from(1); 65];
        }
        let c_refs: Vec<&[i64]> = consts.iter().map(Vec::as_slice).collect();
        let s_refs: Vec<&[Expr]> = sym.iter().map(Vec::as_slice).collect();
        let (c, s) = (broadcast_shapes(&cx, &c_refs), broadcast_shapes(&cx, &s_refs));
        if long {
            let (c, s) = both_refused(c, s).expect("refused");
            prop_assert_eq!(&c, &s);
            prop_assert!(c.contains("65 axes"), "{}", c);
            return Ok(());
        }
        // NumPy's rule, one right-aligned axis at a time.
        let n = shapes.iter().map(Vec::len).max().unwrap_or(0);
        let mut model = Some(Vec::new());
        for k in 0..n {
            let sizes: Vec<i64> = shapes
                .iter()
                .filter_map(|s| (k + s.len()).checked_sub(n).map(|i| s[i]))
                .filter(|&d| d != 1)
                .collect();
            match sizes.first() {
                Some(&d) if sizes.iter().any(|&x| x != d) => model = None,
                first => {
                    if let Some(m) = model.as_mut() {
                        m.push(first.copied().unwrap_or(1));
                    }
                }
            }
        }
        let model: Option<Vec<Expr>> = model.map(|m| m.into_iter().map(Expr::from).collect());
        prop_assert_eq!(c.ok().map(|r| r.shape), model.clone());
        if let Ok(r) = s {
            if r.guards.iter().all(|g| g.check(&b).is_ok()) {
                let shape: Vec<Expr> =
                    r.shape.iter().map(|d| Expr::from(d.eval(&b).expect("bound"))).collect();
                prop_assert_eq!(Some(shape), model);
            }
        }
    }
}
