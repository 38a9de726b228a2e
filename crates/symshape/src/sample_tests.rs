//! Tests of a scope's sample bindings: every sample is an admissible binding, checked by
//! evaluating the declarations and assumptions with [`Scope::check`]; and a polynomial a
//! sample shows positive is never shown `<= 0` by the linear refutation (which would make
//! the refutation, or the sample, wrong).
use proptest::prelude::*;

use crate::build::Poly;
use crate::eval::Bindings;
use crate::expr::Expr;
use crate::scope::Scope;

/// A scope over `a`, `b`, `c` with constant, symbolic and one-sided bounds, a multiple,
/// and linear assumptions (those refused as contradictions are skipped).
fn scope(decls: [u8; 3], facts: &[(i64, i64, i64, i64)]) -> Scope {
    let mut cx = Scope::new();
    let specs = [
        ["a 0..=9", "a 1..=4096", "a 2..=inf", "a -inf..=5"],
        [
            "b 0..=a",
            "b a..=2*a + 3",
            "b 1..=64 multiple of 8",
            "b -3..=3",
        ],
        [
            "c 0..=a + b",
            "c b..=inf",
            "c 1..=1",
            "c 0..=7 multiple of 2",
        ],
    ];
    for (i, d) in decls.iter().enumerate() {
        let text = specs[i][usize::from(*d) % 4];
        if cx.declare_str(text).is_err() {
            // A range refused as empty: the symbol gets a plain one.
            let name = ["a", "b", "c"][i];
            cx.declare_str(&format!("{name} 0..=3")).expect("fallback");
        }
    }
    for &(x, y, z, k) in facts {
        let _ = cx.assume_str(&format!("{x}*a + {y}*b + {z}*c <= {k}"));
    }
    cx
}

proptest! {
    #[test]
    fn samples_are_admissible_and_never_contradict_a_proof(
        decls in any::<[u8; 3]>(),
        facts in prop::collection::vec((-3i64..=3, -3i64..=3, -3i64..=3, -20i64..=40), 0..3),
        goal in (-4i64..=4, -4i64..=4, -4i64..=4, -4i64..=4, -30i64..=30),
    ) {
        let cx = scope(decls, &facts);
        let samples = cx.samples();
        for vals in &samples.0 {
            let mut b = Bindings::new();
            for (id, v) in vals {
                b.set(Expr(*id), *v).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            prop_assert_eq!(b.len(), cx.symbols().len());
            prop_assert!(cx.check(&b).is_ok(), "sample {} is not admissible: {:?}", b, cx.check(&b));
        }
        let [a, b, c] = [0, 1, 2].map(|i| Poly::of(cx.symbols()[i].0));
        let (x, y, z, w, k) = goal;
        let ab = crate::build::mul(cx.symbols()[0].0, cx.symbols()[1].0);
        let p = a.scale(&x.into())
            .add(&b.scale(&y.into()))
            .add(&c.scale(&z.into()))
            .add(&Poly::of(ab).scale(&w.into()))
            .plus_const(k);
        if samples.exceed(&p) {
            let shown = crate::prove::le0(&cx.facts(), cx.linear_facts(), &p);
            prop_assert!(!shown, "a sample has {p:?} > 0, yet it is shown <= 0");
        }
    }
}

#[test]
fn an_unknown_equality_is_answered_by_two_samples() {
    let mut cx = Scope::new();
    let p = cx.declare_str("p 0..=4096").expect("p");
    let s = cx.declare_str("s 1..=4096").expect("s");
    cx.assume_str("p + s <= 4096").expect("fact");
    let samples = cx.samples();
    assert!(samples.0.len() >= 2, "{samples:?}");
    let d = Poly::of((p + s).0).plus_const(-1);
    // `p + s - 1` is 0 at the lower ends and positive in the middle.
    assert!(samples.exceed(&d));
    assert!(!samples.exceed(&d.clone().scale(&(-1).into())));
    assert!(cx
        .prove(p + s, crate::CmpOp::Eq, Expr::from(1))
        .as_bool()
        .is_none());
}
