//! Facts that contradict each other are refused where they are stated, so that no proof is
//! vacuous; a refusal is never wrong (checked against every binding of small ranges).

use proptest::prelude::*;
use symshape::{Error, Scope};

use crate::{bind_names, scope_of};

/// A fresh scope declaring each of `decls`, then assuming each of `facts` (panics naming a
/// refused one).
fn scope_with(decls: &[&str], facts: &[&str]) -> Scope {
    let (mut cx, _) = scope_of(decls);
    for f in facts {
        cx.assume_str(f).expect(f);
    }
    cx
}

#[test]
fn contradictions_are_refused_where_they_are_stated() {
    let cases = [
        ("n + m == 7", "n - m == 2"),
        ("n <= m", "m + 1 <= n"),
        ("n % 8 == 5", "n <= 3"),
        ("2*n + 3*m == 12", "n == 1"),
    ];
    for (first, second) in cases {
        let mut cx = scope_with(&["n 0..=100", "m 0..=100"], &[first]);
        let err = cx.assume_str(second).expect_err(second);
        assert!(
            matches!(err, Error::Contradiction { .. }),
            "{first}; {second}: {err}"
        );
        // The refused fact left the scope as it was.
        assert_eq!(cx.assumptions().len(), 1);
    }
}

#[test]
fn a_contradiction_only_over_the_integers_is_refused() {
    // Rationally `n` may lie between 2.25 and 2.5; no integer does. Solving the equality for
    // `m` (coefficient 1) leaves `4*n <= 10` and `8*n >= 18`, which round apart. The range
    // of `n` is too wide for the bindings to be visited: the refutation decides.
    let mut cx = scope_with(&["n 0..=6000", "m 0..=6"], &["3*n + m == 8", "n - m <= 2"]);
    let err = cx
        .assume_str("n + 3*m <= 6")
        .expect_err("no integer solution");
    assert!(matches!(err, Error::Contradiction { .. }), "{err}");
    let n = cx.parse_expr("n").expect("n");
    let r = cx.range(n);
    // The refused fact changed nothing: (n, m) is (1, 5) or (2, 2).
    assert_eq!((r.lo, r.hi), (Some(1.into()), Some(2.into())));
}

/// On ranges small enough to visit every binding (at most 4096), a contradiction is refused
/// even when it needs the integers' products, which the linear refutation relaxes away.
#[test]
fn on_small_ranges_every_contradiction_is_refused() {
    let refused = |decls: &[&str], facts: &[&str], last: &str| {
        scope_with(decls, facts).assume_str(last).is_err()
    };
    // `min(n, k*k + k) >= k*k + 2` needs `k >= 2`, so `k*k + 2 >= 6 > n`.
    let facts = ["k >= 1"];
    let last = "min(n, k*k + k) >= k*k + 2";
    assert!(refused(&["n 0..=4", "k 0..=2"], &facts, last));
    // Over a range of 100,001 values the bindings are not visited, and `k*k` is related to
    // `k` only through `k`'s declared bounds: the fact is kept, and binding refuses every
    // value.
    assert!(!refused(&["n 0..=4", "k 0..=100000"], &facts, last));
    // `m*m == 2*n*n + 1` with `1 <= n <= m <= 6` holds only at (n, m) = (2, 3); the
    // bound of `m` is symbolic, evaluated at each `n`.
    let decls = ["n 0..=6", "m n..=6"];
    let facts = ["m*m == 2*n*n + 1", "n >= 1"];
    assert!(!refused(&decls, &facts, "m == 3"));
    assert!(refused(&decls, &facts, "m != 3"));
    // Multiples: `b` in `4..=12` a multiple of 4 is 4, 8 or 12.
    let decls = ["b 4..=12 multiple of 4"];
    assert!(refused(&decls, &["b*b != 16", "b*b != 64"], "b*b != 144"));
    assert!(!refused(&decls, &["b*b != 16"], "b*b != 144"));
}

#[test]
fn an_empty_symbolic_range_is_refused() {
    let mut cx = Scope::new();
    cx.declare_str("m 0..=10").expect("m");
    let err = cx.declare_str("n m+1..=m").expect_err("empty for every m");
    assert_eq!(
        err.to_string(),
        "declare: symbol `n`: the range m + 1..=m is empty for every value of the symbols it uses"
    );
    // A range empty only for some values is kept: binding checks it.
    cx.declare_str("k m-1..=2*m - 3")
        .expect("non-empty for m >= 2");
}

#[test]
fn repeated_assumptions_are_kept_once() {
    let (mut cx, _) = scope_of(&["n 0..=100", "m 0..=100"]);
    for _ in 0..10_000 {
        cx.assume_str("n <= m + 1").expect("assume");
    }
    assert_eq!(cx.assumptions().len(), 1);
}

/// Every binding of `n` and `m` in `0..=6` that satisfies `facts`.
fn models(facts: &[String]) -> Vec<(i64, i64)> {
    let (cx, _) = scope_of(&["n 0..=6", "m 0..=6"]);
    let conds: Vec<_> = facts
        .iter()
        .map(|f| cx.parse_cond(f).expect("fact"))
        .collect();
    let mut out = Vec::new();
    for n in 0..=6 {
        for m in 0..=6 {
            let b = bind_names(&cx, &[("n", n), ("m", m)]);
            if conds.iter().all(|c| c.eval(&b) == Ok(true)) {
                out.push((n, m));
            }
        }
    }
    out
}

fn linear_fact() -> impl Strategy<Value = String> {
    (
        -3i64..=3,
        -3i64..=3,
        -8i64..=8,
        prop::sample::select(vec!["<=", "==", ">=", "!="]),
    )
        .prop_map(|(a, b, c, op)| format!("{a}*n + {b}*m {op} {c}"))
}

proptest! {
    #[test]
    fn a_refused_fact_really_contradicts_and_proofs_hold_on_every_model(
        facts in prop::collection::vec(linear_fact(), 1..5),
        goal in linear_fact(),
    ) {
        let (mut cx, _) = scope_of(&["n 0..=6", "m 0..=6"]);
        let mut kept: Vec<String> = Vec::new();
        for f in &facts {
            match cx.assume_str(f) {
                Ok(()) => kept.push(f.clone()),
                Err(Error::Contradiction { .. }) => {
                    let mut with = kept.clone();
                    with.push(f.clone());
                    prop_assert!(models(&with).is_empty(), "{f} refused after {kept:?}, which it does not contradict");
                }
                Err(e) => prop_assert!(false, "{f}: {e}"),
            }
        }
        let ms = models(&kept);
        let range_n = cx.range(cx.parse_expr("n").expect("n"));
        if let (Some(lo), Some(hi)) = (&range_n.lo, &range_n.hi) {
            prop_assert!(lo <= hi, "range of n is [{lo}, {hi}] under {kept:?}");
        }
        if ms.is_empty() {
            // Undetected contradiction: nothing to check a proof against.
            return Ok(());
        }
        let g = cx.parse_cond(&goal).expect("goal");
        let holds: Vec<bool> = ms.iter().map(|&(n, m)| {
            g.eval(&bind_names(&cx, &[("n", n), ("m", m)])) == Ok(true)
        }).collect();
        match cx.prove_cond(g).as_bool() {
            Some(true) => prop_assert!(holds.iter().all(|&h| h), "{goal} proven under {kept:?}"),
            Some(false) => prop_assert!(holds.iter().all(|&h| !h), "{goal} refuted under {kept:?}"),
            None => {}
        }
    }
}
