//! Property tests of symbolic views over random op chains and random in-range
//! bindings: binding after the ops equals the ops after binding (same element
//! mapping, same failures), and lowered expressions agree with the bound mapping.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope, SymbolSpec};
use view::{ConcreteView, IndexItem, Op, PreparedStack, PreparedView, View, ViewStack};

/// Symbols with small ranges, so that every binding can be enumerated cheaply.
struct Syms {
    cx: Scope,
    n: Expr,
    m: Expr,
    k: Expr,
}

/// The symbols; with `assume`, the scope also assumes `k <= n`, which proofs use
/// and bindings must satisfy.
fn syms(assume: bool) -> Syms {
    let mut cx = Scope::new();
    let n = cx.declare(&SymbolSpec::new("n").range(0, 4)).expect("n");
    let m = cx.declare(&SymbolSpec::new("m").range(1, 3)).expect("m");
    let k = cx.declare(&SymbolSpec::new("k").range(0, 2)).expect("k");
    if assume {
        cx.assume(k.le(n)).expect("assume");
    }
    Syms { cx, n, m, k }
}

/// A random op, turned into an [`Op`] against the current symbolic shape.
#[derive(Clone, Debug)]
enum Recipe {
    Permute(u8),
    Flip(u8),
    Shrink(Vec<u8>),
    Pad(Vec<u8>),
    /// Inserts a size-1 axis at the position, then expands it.
    Broadcast(u8, u8),
    /// Merges two adjacent axes.
    Merge(u8),
    /// Reverses the shape (a reshape that is deferred unless sizes match).
    Swap,
    /// Flattens everything.
    Flat,
    Index(Vec<(u8, i8)>),
}

fn arb_recipe() -> impl Strategy<Value = Recipe> {
    prop_oneof![
        any::<u8>().prop_map(Recipe::Permute),
        any::<u8>().prop_map(Recipe::Flip),
        prop::collection::vec(any::<u8>(), 4).prop_map(Recipe::Shrink),
        prop::collection::vec(any::<u8>(), 4).prop_map(Recipe::Pad),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Recipe::Broadcast(a, b)),
        any::<u8>().prop_map(Recipe::Merge),
        Just(Recipe::Swap),
        Just(Recipe::Flat),
        prop::collection::vec((any::<u8>(), -3i8..3), 0..4).prop_map(Recipe::Index),
    ]
}

fn recipe_ops(s: &Syms, r: &Recipe, shape: &[Expr]) -> Vec<Op> {
    let rank = shape.len();
    let c = Expr::from;
    match r {
        Recipe::Permute(x) => {
            let mut axes: Vec<usize> = (0..rank).collect();
            if rank > 1 {
                axes.rotate_left(usize::from(*x) % rank);
            }
            vec![Op::Permute(axes)]
        }
        Recipe::Flip(x) => vec![Op::Flip((0..rank).filter(|a| (x >> a) & 1 == 1).collect())],
        Recipe::Shrink(p) => vec![Op::Shrink(
            shape
                .iter()
                .zip(p.iter().cycle())
                .map(|(&d, &x)| match x % 6 {
                    0 => (c(0), d),
                    1 => (c(1), d),
                    2 => (c(0), d - 1),
                    3 => (c(1), d - 1),
                    4 => (s.k, d),
                    _ => (c(0), s.k),
                })
                .collect(),
        )],
        Recipe::Pad(p) => vec![Op::Pad(
            (0..rank)
                .zip(p.iter().cycle())
                .map(|(_, &x)| match x % 4 {
                    0 => (c(0), c(0)),
                    1 => (c(1), c(0)),
                    2 => (c(0), s.k),
                    _ => (s.k, c(1)),
                })
                .collect(),
        )],
        Recipe::Broadcast(at, to) => {
            let at = usize::from(*at) % (rank + 1);
            let mut with_one = shape.to_vec();
            with_one.insert(at, c(1));
            let mut target = with_one.clone();
            target[at] = [s.m, s.k, s.n][usize::from(*to) % 3];
            vec![Op::Reshape(with_one), Op::Expand(target)]
        }
        Recipe::Merge(x) if rank >= 2 => {
            let a = usize::from(*x) % (rank - 1);
            let mut t = shape[..a].to_vec();
            t.push(shape[a] * shape[a + 1]);
            t.extend_from_slice(&shape[a + 2..]);
            vec![Op::Reshape(t)]
        }
        Recipe::Merge(_) => Vec::new(),
        Recipe::Swap => vec![Op::Reshape(shape.iter().rev().copied().collect())],
        Recipe::Flat => vec![Op::Reshape(vec![shape.iter().copied().product()])],
        Recipe::Index(items) => {
            let mut real = 0;
            let mut out = Vec::new();
            for &(kind, v) in items {
                let it = match kind % 5 {
                    0 => IndexItem::Int(i64::from(v)),
                    1 => IndexItem::NewAxis,
                    2 => IndexItem::Slice {
                        start: Some(i64::from(v)),
                        stop: None,
                        step: None,
                    },
                    3 => IndexItem::Slice {
                        start: None,
                        stop: Some(i64::from(v)),
                        step: Some(-1),
                    },
                    _ => IndexItem::Slice {
                        start: None,
                        stop: None,
                        step: Some(2),
                    },
                };
                let counts = !matches!(it, IndexItem::NewAxis);
                if counts && real == rank {
                    continue;
                }
                real += usize::from(counts);
                out.push(it);
            }
            vec![Op::Index(out)]
        }
    }
}

fn eval_op(op: &Op, b: &Bindings) -> Op {
    let e = |x: &Expr| Expr::from(x.eval(b).expect("arguments are over bound symbols"));
    let ev = |v: &[Expr]| v.iter().map(e).collect();
    let ep = |v: &[(Expr, Expr)]| v.iter().map(|(a, z)| (e(a), e(z))).collect();
    match op {
        Op::Reshape(s) => Op::Reshape(ev(s)),
        Op::Expand(s) => Op::Expand(ev(s)),
        Op::Shrink(p) => Op::Shrink(ep(p)),
        Op::Pad(p) => Op::Pad(ep(p)),
        other => other.clone(),
    }
}

/// A start view: shape, and optionally strides, offset and mask.
type Start = (
    Vec<Expr>,
    Option<Vec<Expr>>,
    Expr,
    Option<Vec<(Expr, Expr)>>,
);

fn starts(s: &Syms) -> Vec<Start> {
    let c = Expr::from;
    let plain = |shape: Vec<Expr>| (shape, None, c(0), None);
    vec![
        plain(vec![s.n, c(3)]),
        plain(vec![c(2), s.m, s.n]),
        plain(vec![s.m * 2, s.n]),
        plain(vec![s.n * s.m, c(2)]),
        plain(vec![s.n]),
        // Transposed, offset and masked, with symbolic strides and mask bounds.
        (
            vec![s.n, s.m],
            Some(vec![c(1), s.n + 1]),
            s.k + 1,
            Some(vec![(c(1), s.n), (c(0), s.m)]),
        ),
        (
            vec![c(3), s.m],
            Some(vec![s.m, c(-1)]),
            s.m,
            Some(vec![(s.k, c(3)), (c(0), s.m)]),
        ),
    ]
}

/// Every binding of the three symbols.
fn all_bindings(s: &Syms) -> Vec<Bindings> {
    let mut out = Vec::new();
    for n in 0..=4 {
        for m in 1..=3 {
            for k in 0..=2 {
                let mut b = Bindings::new();
                b.set(s.n, n).expect("n");
                b.set(s.m, m).expect("m");
                b.set(s.k, k).expect("k");
                out.push(b);
            }
        }
    }
    out
}

/// The reference: the ops run on the concrete view bound first; `None` when a
/// concrete op fails.
fn reference(start: &ConcreteView, ops: &[Op], b: &Bindings) -> Option<Vec<Option<i64>>> {
    let mut st = ViewStack::new(View::from(start));
    for op in ops {
        st = st.apply(&Scope::new(), &eval_op(op, b)).ok()?;
    }
    st.offsets().ok()
}

fn lowered_offsets(
    s: &Syms,
    st: &ViewStack,
    b: &Bindings,
) -> Result<Vec<Option<i64>>, TestCaseError> {
    let low = st
        .lower(&s.cx)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let shape: Vec<i64> = st
        .shape()
        .iter()
        .map(|d| d.eval(b).expect("shape binds"))
        .collect();
    let total: i64 = shape.iter().product();
    let mut out = Vec::new();
    for lin in 0..total {
        let mut rest = lin;
        let mut idx = vec![0; shape.len()];
        for a in (0..shape.len()).rev() {
            idx[a] = rest % shape[a];
            rest /= shape[a];
        }
        let mut bi = b.clone();
        for (&sym, &v) in low.index.iter().zip(&idx) {
            bi.set(sym, v)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        let valid = low
            .valid
            .eval(&bi)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        out.push(if valid {
            Some(
                low.offset
                    .eval(&bi)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?,
            )
        } else {
            None
        });
    }
    Ok(out)
}

/// The start view created from the bound fields directly; `None` when invalid.
fn reference_start(
    shape: &[Expr],
    strides: Option<&[Expr]>,
    offset: Expr,
    mask: Option<&[(Expr, Expr)]>,
    b: &Bindings,
) -> Option<ConcreteView> {
    let ev = |v: &[Expr]| {
        v.iter()
            .map(|e| e.eval(b).ok())
            .collect::<Option<Vec<i64>>>()
    };
    let shape = ev(shape)?;
    let strides = strides.map(ev).map(|x| x.ok_or(())).transpose().ok()?;
    let mask = mask
        .map(|m| {
            m.iter()
                .map(|(lo, hi)| Some((lo.eval(b).ok()?, hi.eval(b).ok()?)))
                .collect::<Option<Vec<_>>>()
                .ok_or(())
        })
        .transpose()
        .ok()?;
    ConcreteView::create(
        &shape,
        strides.as_deref(),
        offset.eval(b).ok()?,
        mask.as_deref(),
    )
    .ok()
}

/// Binds a stack through a prepared program.
fn prepared_stack_offsets(
    s: &Syms,
    st: &ViewStack,
    b: &Bindings,
) -> Result<Vec<Option<i64>>, TestCaseError> {
    let fail = |e: view::Error| TestCaseError::fail(e.to_string());
    let mut p = PreparedStack::new(&s.cx, st).map_err(fail)?;
    let vals: Vec<i64> = p.symbols().iter().map(|&x| b.get(x).unwrap_or(0)).collect();
    p.bind(&vals).and_then(|x| x.offsets()).map_err(fail)
}

/// Binds one view through a prepared program.
fn prepared_offsets(s: &Syms, v: &View, b: &Bindings) -> Result<Vec<Option<i64>>, TestCaseError> {
    let fail = |e: view::Error| TestCaseError::fail(e.to_string());
    let mut p = PreparedView::new(&s.cx, v).map_err(fail)?;
    let vals: Vec<i64> = p.symbols().iter().map(|&x| b.get(x).unwrap_or(0)).collect();
    Ok(p.bind(&vals).map_err(fail)?.offsets())
}

proptest! {
    #[test]
    fn bind_after_ops_equals_ops_after_bind(
        start in 0usize..7,
        recipes in prop::collection::vec(arb_recipe(), 1..4),
        picks in prop::collection::vec(0usize..45, 3),
        assume in any::<bool>(),
    ) {
        let s = syms(assume);
        let (shape, strides, offset, mask) = starts(&s)[start].clone();
        let v0 = View::create_in(&s.cx, &shape, strides.as_deref(), offset, mask.as_deref())
            .expect("start view");
        let mut st = ViewStack::new(v0.clone());
        let mut ops = Vec::new();
        let mut failed_at_op = false;
        'chain: for r in &recipes {
            for op in recipe_ops(&s, r, st.shape()) {
                ops.push(op.clone());
                match st.apply(&s.cx, &op) {
                    Ok(next) => st = next,
                    Err(_) => {
                        failed_at_op = true;
                        break 'chain;
                    }
                }
            }
        }
        let bindings = all_bindings(&s);
        for &p in &picks {
            let b = &bindings[p];
            if s.cx.check(b).is_err() {
                continue;
            }
            let Some(start_c) = reference_start(&shape, strides.as_deref(), offset, mask.as_deref(), b) else {
                prop_assert!(v0.bind(&s.cx, b).is_err(), "start binds but is invalid concretely");
                continue;
            };
            let want = reference(&start_c, &ops, b);
            if failed_at_op {
                // Proven false for every value: the concrete ops fail too.
                prop_assert!(want.is_none(), "symbolic op failed at once but concrete ops succeed: {:?}", ops);
                continue;
            }
            let got = st.bind(&s.cx, b).and_then(|c| c.offsets());
            match (&got, &want) {
                (Ok(g), Some(w)) => {
                    prop_assert_eq!(g, w, "ops {:?}\nstack\n{}", ops, st);
                    prop_assert_eq!(&prepared_stack_offsets(&s, &st, b)?, w, "prepared stack; {}", st);
                    if let [one] = st.views() {
                        prop_assert_eq!(prepared_offsets(&s, one, b)?, w.clone(), "prepared; {}", one);
                    }
                    let low = lowered_offsets(&s, &st, b)?;
                    prop_assert_eq!(&low, w, "lowered; ops {:?}\nstack\n{}", ops, st);
                }
                (Err(_), None) => {
                    prop_assert!(prepared_stack_offsets(&s, &st, b).is_err(), "prepared stack binds; {}", st);
                }
                _ => prop_assert!(false, "bind {:?} vs concrete {:?}; ops {:?}\nstack\n{}", got, want, ops, st),
            }
        }
    }
}
