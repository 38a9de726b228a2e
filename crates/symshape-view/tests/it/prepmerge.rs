//! Prepared binding of stacks whose levels merge only at some sizes (merged
//! heads, conv windows, a causal mask built from pad/reshape/shrink), and of
//! random concrete stacks: the prepared bind (one cache reused across bindings,
//! so a remembered refutation meets sizes where it no longer holds), the plain
//! bind and an explicit per-element offset table written from the ops'
//! definitions must agree, and the stack must be one level exactly when the
//! table is one view.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope};
use symshape_view::{ConcreteStack, ConcreteView, Op, PreparedStack, View, ViewStack};

use crate::engine::{fit_upper, model_of_view};
use crate::model::{indices, Model};
use crate::strategy::{arb_raw, Raw};

fn e(v: i64) -> Expr {
    Expr::from(v)
}

/// Symbols `b, c, d, p, s`, all of which may be 0 or 1.
fn scope() -> (Scope, [Expr; 5]) {
    crate::scope_with(["b 0..=3", "c 1..=3", "d 1..=4", "p 0..=5", "s 0..=6"])
}

/// The traced stacks, by name.
fn stacks(cx: &Scope, [b, c, d, p, s]: [Expr; 5]) -> Vec<(&'static str, ViewStack)> {
    let z = e(0);
    let apply = |st: ViewStack, ops: &[Op]| {
        ops.iter()
            .try_fold(st, |st, op| st.apply(cx, op))
            .expect("trace")
    };
    let row_major = |shape: &[Expr]| ViewStack::new(View::row_major(cx, shape).expect("input"));
    // [b, 3, s, d] -> [b, s, 3, d] -> [b, s, 3*d].
    let heads = apply(
        row_major(&[b, e(3), s, d]),
        &[
            Op::Permute(vec![0, 2, 1, 3]),
            Op::Reshape(vec![b, s, e(3) * d]),
        ],
    );
    // [b, c, s] padded by one on each side of the last axis, windows of 3.
    let conv = apply(
        row_major(&[b, c, s]),
        &[
            Op::Pad(vec![(z, z), (z, z), (e(1), e(1))]),
            Op::Unfold {
                axis: 2,
                size: e(3),
                step: e(1),
            },
        ],
    );
    // [s, p + s]: element (i, j) valid when j <= i + p.
    let w = p + s;
    let causal = apply(
        row_major(&[s, w]),
        &[
            Op::Pad(vec![(z, z), (z, s)]),
            Op::Reshape(vec![s * (w + s)]),
            Op::Shrink(vec![(s - e(1), s - e(1) + s * (w + s - e(1)))]),
            Op::Reshape(vec![s, w + s - e(1)]),
            Op::Shrink(vec![(z, s), (z, w)]),
        ],
    );
    vec![("heads", heads), ("conv", conv), ("causal", causal)]
}

/// Row-major digits of `q` in `shape`.
fn digits(shape: &[i64], mut q: i64) -> Vec<i64> {
    let mut res = vec![0; shape.len()];
    for (k, &n) in shape.iter().enumerate().rev() {
        res[k] = q % n;
        q /= n;
    }
    res
}

/// The offset of an element, `None` when it is masked.
type ElementFn = Box<dyn Fn(&[i64]) -> Option<i64>>;

/// The offset table of each stack written from the definitions of its ops, for
/// sizes `[b, c, d, p, s]`; `None` where the ops refuse the sizes.
fn reference(name: &str, [b, c, d, p, s]: [i64; 5]) -> Option<Model> {
    let (shape, at): (Vec<i64>, ElementFn) = match name {
        // Input [b, 3, s, d]; output (i0, i1, i2) reads head i2 / d, position i1.
        "heads" => (
            vec![b, s, 3 * d],
            Box::new(move |i: &[i64]| Some(((i[0] * 3 + i[2] / d) * s + i[1]) * d + i[2] % d)),
        ),
        // Window i2, tap i3 reads position i2 + i3 - 1 of the unpadded axis.
        "conv" => {
            if s + 2 < 3 {
                return None;
            }
            (
                vec![b, c, s, 3],
                Box::new(move |i: &[i64]| {
                    let q = i[2] + i[3] - 1;
                    (0..s).contains(&q).then(|| (i[0] * c + i[1]) * s + q)
                }),
            )
        }
        // Element (i, j) is element (s - 1) + i*(p + 2s - 1) + j of the padded
        // [s, p + 2s] flattened: row r, column k, valid while k < p + s.
        "causal" => {
            if s < 1 {
                return None;
            }
            let w = p + s;
            (
                vec![s, w],
                Box::new(move |i: &[i64]| {
                    let q = s - 1 + i[0] * (w + s - 1) + i[1];
                    let rk = digits(&[s, w + s], q);
                    (rk[1] < w).then(|| rk[0] * w + rk[1])
                }),
            )
        }
        _ => return None,
    };
    let table = indices(&shape).iter().map(|i| at(i)).collect();
    Some(Model { shape, table })
}

/// The table of a bound stack, read level by level through the naive model.
fn model_of_stack(st: &ConcreteStack) -> Model {
    let mut levels = st.levels().iter().map(model_of_view);
    let first = levels.next().expect("a level");
    levels.fold(first, |below, above| below.compose(&above))
}

/// Plain and prepared binding (with `cache`) of `stack` at `vals` agree with each
/// other and with the reference, and the stack is one level exactly when the
/// reference is one view.
fn check_binding(
    cx: &Scope,
    syms: &[Expr; 5],
    name: &str,
    stack: &ViewStack,
    prepared: &PreparedStack,
    cache: &mut symshape_view::BindCache,
    vals: [i64; 5],
) -> Result<(), TestCaseError> {
    let mut b = Bindings::new();
    for (&sym, &v) in syms.iter().zip(&vals) {
        b.set(sym, v).expect("in range");
    }
    let plain = stack.bind(cx, &b);
    let again = prepared.bind_with(cache, &b);
    let fresh = prepared.bind_with(&mut prepared.cache(), &b);
    let show = |r: &symshape_view::Result<ConcreteStack>| match r {
        Ok(st) => st.to_string(),
        Err(e) => format!("error: {e}"),
    };
    prop_assert_eq!(show(&plain), show(&again), "{} at {:?}", name, vals);
    prop_assert_eq!(show(&plain), show(&fresh), "{} at {:?}", name, vals);
    let want = reference(name, vals);
    let (Ok(got), Some(want)) = (plain, want.clone()) else {
        prop_assert!(
            want.is_none(),
            "{} at {:?}: bind refused sizes the ops accept",
            name,
            vals
        );
        return Ok(());
    };
    prop_assert_eq!(
        &model_of_stack(&got),
        &want,
        "{} at {:?}: {}",
        name,
        vals,
        got
    );
    prop_assert_eq!(
        got.levels().len() == 1,
        want.one_view().is_some(),
        "{} at {:?}: {} against the oracle",
        name,
        vals,
        got
    );
    Ok(())
}

fn arb_vals() -> impl Strategy<Value = [i64; 5]> {
    // Sizes 0 and 1 come often: they are where merge decisions flip.
    let small = |hi: i64| prop_oneof![2 => 0i64..=1, 3 => 0i64..=hi];
    (small(3), 1i64..=3, 1i64..=4, small(5), small(6)).prop_map(|(b, c, d, p, s)| [b, c, d, p, s])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn prepared_stacks_agree_with_plain_binding_and_the_table(
        seq in prop::collection::vec(arb_vals(), 1..8),
    ) {
        let (cx, syms) = scope();
        for (name, stack) in stacks(&cx, syms) {
            let prepared = PreparedStack::new(&cx, &stack).expect("prepare");
            let mut cache = prepared.cache();
            for &vals in &seq {
                check_binding(&cx, &syms, name, &stack, &prepared, &mut cache, vals)?;
            }
        }
    }

    /// Random concrete pairs and triples, prepared as a stack kept as given: the
    /// prepared bind equals `ConcreteStack::new` and the oracle's decision.
    #[test]
    fn prepared_concrete_stacks_agree_with_the_deciders(
        lower in arb_raw(3, 1, 4),
        mid in arb_raw(3, 1, 4),
        upper in arb_raw(3, 1, 4),
        shifts in (0i64..1000, 0i64..1000),
        three in any::<bool>(),
    ) {
        let cx = Scope::new();
        let Some(lv) = lower.concrete_view() else { return Ok(()) };
        let Some(mid) = fit(mid, lv.numel(), shifts.0) else { return Ok(()) };
        let mut levels = vec![lv, mid];
        if three {
            let Some(top) = fit(upper, levels[1].numel(), shifts.1) else { return Ok(()) };
            levels.push(top);
        }
        let views: Vec<View> = levels.iter().cloned().map(View::from).collect();
        let stack = ViewStack::from_views(&cx, views).expect("fits");
        let prepared = PreparedStack::new(&cx, &stack).expect("prepare");
        let mut cache = prepared.cache();
        let want = ConcreteStack::new(levels.clone()).expect("stack");
        for _ in 0..2 {
            let got = prepared.bind(&mut cache, &[]).expect("bind");
            prop_assert_eq!(&got, &want);
        }
        let table = model_of_stack(&ConcreteStack::unmerged(levels).expect("fits"));
        prop_assert_eq!(&model_of_stack(&want), &table);
        if table.shape.iter().product::<i64>() > 0 && table.one_view().is_some() {
            prop_assert_eq!(want.levels().len(), 1, "{} is one view", want);
        }
    }
}

/// A random upper view shifted to read within `n` elements.
fn fit(raw: Raw, n: i64, shift: i64) -> Option<ConcreteView> {
    fit_upper(raw, n, shift)?.concrete_view()
}

#[test]
fn a_missing_symbol_is_reported_alike_on_both_paths() {
    let (cx, syms) = scope();
    let [b, _, d, p, _] = syms;
    let mut bind = Bindings::new();
    for (sym, v) in [(b, 2), (d, 2), (p, 1)] {
        bind.set(sym, v).expect("in range");
    }
    let mut out = String::new();
    for (name, stack) in stacks(&cx, syms) {
        let prepared = PreparedStack::new(&cx, &stack).expect("prepare");
        let plain = stack.bind(&cx, &bind).expect_err("s is unbound");
        let again = prepared
            .bind_with(&mut prepared.cache(), &bind)
            .expect_err("s is unbound");
        assert_eq!(plain.to_string(), again.to_string());
        out += &format!("{name}: plain: {plain}\n{name}: prepared: {again}\n");
    }
    // A single view, too.
    let view = View::row_major(&cx, &[syms[4], e(3)]).expect("view");
    out += &format!(
        "view: plain: {}\n",
        view.bind(&cx, &bind).expect_err("s is unbound")
    );
    insta::assert_snapshot!(out);
}

#[test]
fn scope_bind_checks_the_assumptions_it_completes() {
    let mut cx = Scope::new();
    cx.declare_str("p 0..=64").expect("p");
    cx.declare_str("s 1..=64").expect("s");
    cx.assume_str("p + s <= 64").expect("assume");
    let mut b = Bindings::new();
    cx.bind(&mut b, "p", 30).expect("p alone is fine");
    let err = cx.bind(&mut b, "s", 40).expect_err("30 + 40 > 64");
    // The refused value is not kept; a value that fits is.
    let s = cx.symbol("s").expect("s");
    assert_eq!(b.get(s), None);
    cx.bind(&mut b, "s", 34).expect("30 + 34 <= 64");
    let again = cx.bind(&mut b, "p", 31).expect_err("31 + 34 > 64");
    let p = cx.symbol("p").expect("p");
    assert_eq!(b.get(p), Some(30));
    insta::assert_snapshot!(format!("{err}\n{again}"));
}
