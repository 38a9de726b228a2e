//! Property tests against a naive reference: a plain expression tree evaluated with
//! BigInt and floor semantics.

use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};
use proptest::prelude::*;

use crate::strategies::{binary, cmp_op, negated, random_tree, split_index_of};
use crate::tree::{build, bx, holds, reference, T};
use crate::{parses_back, scope_of};
use symshape::{Bindings, CmpOp, Expr, Program, Proof, Scope};

/// Symbols of the generated expressions: signed, positive, negative, an index below
/// `b`, and a multiple of 4.
const DECLS: [&str; 5] = [
    "a -8..=8",
    "b 1..=6",
    "c -5..=-1",
    "i 0..b",
    "d 0..=20 multiple of 4",
];

/// Random trees over `DECLS`: with `poly_only`, sums, differences, products and
/// negations only; otherwise every operator and index shapes.
fn tree(poly_only: bool) -> BoxedStrategy<T> {
    let leaf = prop_oneof![(-10i64..=10).prop_map(T::C), (0usize..5).prop_map(T::V)];
    if poly_only {
        leaf.prop_recursive(4, 24, 2, |inner| {
            prop_oneof![
                binary(&inner, T::Add),
                binary(&inner, T::Sub),
                binary(&inner, T::Mul),
                negated(&inner)
            ]
        })
        .boxed()
    } else {
        // Index shapes: (x*b + i) // b and % b, with i declared 0..b.
        random_tree(leaf, 4, 24, |inner| {
            vec![
                split_index_of(inner, T::V(1), T::V(3), T::V(1), true),
                split_index_of(inner, T::V(1), T::V(3), T::V(1), false),
            ]
        })
    }
}

/// In-range values for `DECLS`, from raw seeds.
fn binding() -> impl Strategy<Value = [i64; 5]> {
    any::<[u8; 5]>().prop_map(|s| {
        let b = 1 + i64::from(s[1] % 6);
        [
            -8 + i64::from(s[0] % 17),
            b,
            -5 + i64::from(s[2] % 5),
            i64::from(s[3]) % b,
            4 * i64::from(s[4] % 6),
        ]
    })
}

/// The scope of `DECLS` and its symbols.
fn scope() -> (Scope, Vec<Expr>) {
    scope_of(&DECLS)
}

/// Assumptions that the scoped property tests add (bindings violating them are skipped).
const ASSUMPTIONS: [&str; 3] = ["a >= -2 and a <= b", "d % 8 == 0", "c + i != 0"];

/// The scope of `DECLS` (with `ASSUMPTIONS` when `assume`), its symbols and `vals`
/// bound to them; `None` when the binding violates the scope.
fn bound_scope(
    vals: &[i64; 5],
    assume: bool,
) -> Result<Option<(Scope, Vec<Expr>, Bindings)>, String> {
    let (mut cx, syms) = scope();
    if assume {
        for a in ASSUMPTIONS {
            cx.assume_str(a).map_err(|e| e.to_string())?;
        }
    }
    let mut b = Bindings::new();
    for (s, v) in syms.iter().zip(vals) {
        b.set(*s, *v).unwrap();
    }
    Ok(cx.check(&b).is_ok().then_some((cx, syms, b)))
}

/// Compares one tree at one binding; `Err` describes a mismatch.
fn compare_value(t: &T, vals: &[i64; 5], assume: bool) -> Result<(), String> {
    let mut big = BigInt::zero();
    let Some(want) = reference(t, vals, &mut big) else {
        return Ok(());
    };
    if big.bits() > 40 {
        return Ok(());
    }
    let Some((cx, syms, b)) = bound_scope(vals, assume)? else {
        return Ok(());
    };
    let e = build(t, &syms);
    let want = want.to_i64().ok_or("reference out of i64")?;
    // Partial binding: `a`, `b` and `c` substituted, the rest evaluated later.
    let mut partial = Bindings::new();
    for k in 0..3 {
        partial
            .set(syms[k], vals[k])
            .map_err(|err| err.to_string())?;
    }
    let substituted = cx.substitute(e, &partial);
    // The same symbols replaced without a scope, as code generators rename them.
    let replaced = e.substitute(|s| {
        syms[..3]
            .iter()
            .position(|&x| x == s)
            .map(|k| Expr::from(vals[k]))
    });
    for (what, e) in [
        ("built", e),
        ("simplified", cx.simplify(e)),
        ("substituted", substituted),
        ("replaced", replaced),
    ] {
        let got = e
            .eval(&b)
            .map_err(|err| format!("{what} `{e}` failed: {err}"))?;
        if got != want {
            return Err(format!("{what} `{e}` = {got}, reference {want}"));
        }
        if !e.range().contains(&BigInt::from(got)) || !cx.range(e).contains(&BigInt::from(got)) {
            return Err(format!(
                "{what} `{e}` = {got} outside its range {} / {}",
                e.range(),
                cx.range(e)
            ));
        }
    }
    let prog = Program::compile(&syms, &[e]).map_err(|err| err.to_string())?;
    let mut st = prog.state();
    let got = prog
        .run(&mut st, vals)
        .map_err(|err| format!("program of `{e}`: {err}"))?;
    if got != [want] {
        return Err(format!("program of `{e}` = {got:?}, reference {want}"));
    }
    Ok(())
}

/// Checks a proof against one binding; `Err` describes a contradiction.
fn compare_proof(x: &T, op: CmpOp, y: &T, vals: &[i64; 5], assume: bool) -> Result<(), String> {
    let Some((cx, syms, b)) = bound_scope(vals, assume)? else {
        return Ok(());
    };
    let (ex, ey) = (build(x, &syms), build(y, &syms));
    let proof = cx.prove(ex, op, ey);
    let mut big = BigInt::zero();
    let (Some(vx), Some(vy)) = (reference(x, vals, &mut big), reference(y, vals, &mut big)) else {
        return Ok(());
    };
    match (proof, holds(op, &vx, &vy)) {
        (Proof::True, false) | (Proof::False, true) => Err(format!(
            "prove `{ex}` {op} `{ey}` contradicted at {b}: {vx} vs {vy}"
        )),
        _ => Ok(()),
    }
}

/// Display of an expression, a comparison and a simplified form parses back to the same
/// handle; `Err` names the text that did not.
fn check_round_trip(t: &T, u: &T, op: CmpOp) -> Result<(), String> {
    let (cx, syms) = scope();
    let e = build(t, &syms);
    let c = e.compare(op, build(u, &syms));
    for x in [e, cx.simplify(e)] {
        parses_back(x, |s| cx.parse_expr(s))?;
    }
    parses_back(c, |s| cx.parse_cond(s))
}

proptest! {
    #[test]
    fn simplification_preserves_value(t in tree(false), vals in binding(), assume in any::<bool>()) {
        compare_value(&t, &vals, assume).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn equal_polynomials_are_one_handle(p in tree(true), q in tree(true), r in tree(true)) {
        let (_, syms) = scope();
        let (p, q, r) = (build(&p, &syms), build(&q, &syms), build(&r, &syms));
        prop_assert_eq!((p + q) * r, p * r + q * r);
        prop_assert_eq!((p - q) * (p + q), p * p - q * q);
        prop_assert_eq!(p + q - p, q);
        prop_assert_eq!(2 * (p + q) - p, p + 2 * q);
    }

    #[test]
    fn prove_is_never_contradicted(
        x in tree(false),
        y in tree(false),
        op in cmp_op(),
        assume in any::<bool>(),
        bs in proptest::collection::vec(binding(), 8),
    ) {
        for vals in &bs {
            compare_proof(&x, op, &y, vals, assume).map_err(TestCaseError::fail)?;
        }
    }

    /// `prove` refutes an equality with a constant outside the expression's own range
    /// without building the condition; the condition's full proof must agree.
    #[test]
    fn equality_with_a_constant_is_decided_as_its_condition_is(
        x in tree(false),
        c in -40i64..40,
        assume in any::<bool>(),
    ) {
        let (mut cx, syms) = scope();
        if assume {
            for a in ASSUMPTIONS {
                cx.assume_str(a).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
        }
        let e = build(&x, &syms);
        for op in [CmpOp::Eq, CmpOp::Ne] {
            let full = cx.prove_cond(e.compare(op, c));
            prop_assert_eq!(cx.prove(e, op, Expr::from(c)), full.clone(), "{} {} {}", e, op, c);
            prop_assert_eq!(cx.prove(Expr::from(c), op, e), full, "{} {} {}", c, op, e);
        }
    }

    #[test]
    fn display_round_trips(t in tree(false), u in tree(false), op in cmp_op()) {
        check_round_trip(&t, &u, op).map_err(TestCaseError::fail)?;
    }
}

/// Shrunk failure: a leading negated division printed as `-(-2 // a) % 2`, which reads
/// back as `(-(-2 // a)) % 2`.
#[test]
fn regression_negated_division_prints_with_parentheses() {
    let t = T::CDiv(
        Box::new(T::C(0)),
        Box::new(T::Neg(Box::new(T::Mod(
            Box::new(T::Div(Box::new(T::C(-2)), Box::new(T::V(0)))),
            Box::new(T::C(2)),
        )))),
    );
    let (cx, syms) = scope();
    let e = build(&t, &syms);
    assert_eq!(cx.parse_expr(&e.to_string()).unwrap(), e, "text {e}");
    let neg = -(syms[0].floor_div(4));
    assert_eq!(neg.to_string(), "-(a // 4)");
}

/// Shrunk failure: dividing a monomial by itself left the constant `1` as a monomial
/// (`4*1` in the text), breaking canonical form.
#[test]
fn regression_monomial_divided_by_itself_is_a_constant() {
    let (cx, syms) = scope();
    let (b, i) = (syms[1], syms[3]);
    let e = (i * b + 4 * b).floor_div(b);
    assert_eq!(e.to_string(), "i + 4");
    assert_eq!(cx.parse_expr("i + 4").unwrap(), e);
}

/// Shrunk failure: `-1 // ((0 % 0) % 2)` panicked computing a range from a divisor
/// that is always zero.
#[test]
fn regression_always_zero_divisor_has_a_range() {
    let t = T::Div(
        Box::new(T::C(-1)),
        Box::new(T::Mod(
            Box::new(T::Mod(Box::new(T::C(0)), Box::new(T::C(0)))),
            Box::new(T::C(2)),
        )),
    );
    assert_eq!(compare_value(&t, &[-8, 1, -5, 0, 0], false), Ok(()));
    assert_eq!(
        compare_proof(&T::C(0), CmpOp::Lt, &t, &[-8, 1, -5, 0, 0], false),
        Ok(())
    );
}

/// Shrunk failure (pinned from proptest-regressions): the cdiv/mod round trip.
#[test]
fn regression_seed_cdiv_of_negated_mod() {
    let t = T::CDiv(
        bx(T::C(0)),
        bx(T::Mod(bx(T::Div(bx(T::C(-2)), bx(T::V(0)))), bx(T::C(-2)))),
    );
    let u = T::CDiv(
        bx(T::Min(
            bx(T::C(0)),
            bx(T::Div(bx(T::C(0)), bx(T::Sub(bx(T::C(0)), bx(T::V(1)))))),
        )),
        bx(T::CDiv(bx(T::C(-1)), bx(T::C(-7)))),
    );
    assert_eq!(check_round_trip(&t, &u, CmpOp::Ge), Ok(()));
}

/// Shrunk failure (pinned from proptest-regressions): `cdiv(c, c)` left a constant
/// monomial in a comparison.
#[test]
fn regression_seed_constant_monomial_in_comparison() {
    let t = T::Mod(
        bx(T::Mul(bx(T::C(0)), bx(T::Mod(bx(T::C(0)), bx(T::C(1)))))),
        bx(T::Mod(
            bx(T::Neg(bx(T::V(2)))),
            bx(T::Max(bx(T::C(10)), bx(T::C(9)))),
        )),
    );
    let u = T::Mul(
        bx(T::CDiv(bx(T::V(2)), bx(T::V(2)))),
        bx(T::Min(bx(T::C(8)), bx(T::C(-2)))),
    );
    assert_eq!(check_round_trip(&t, &u, CmpOp::Ne), Ok(()));
}

/// Shrunk failure (pinned from proptest-regressions): a divisor that is always zero.
#[test]
fn regression_seed_always_zero_divisor_round_trip() {
    let u = T::Div(
        bx(T::C(-1)),
        bx(T::Mod(bx(T::Mod(bx(T::C(0)), bx(T::C(0)))), bx(T::C(2)))),
    );
    assert_eq!(check_round_trip(&T::C(0), &u, CmpOp::Lt), Ok(()));
}

/// The printed decimal of an integer, the reference for the conversions below.
fn decimal(v: impl ToString) -> String {
    v.to_string()
}

proptest! {
    /// Every integer type converts to the constant of the same value: through
    /// `Expr::constant`, through `Expr::try_from`, and like `Expr::from` on `i64`.
    #[test]
    fn integer_conversions_keep_the_value(
        a in any::<i128>(),
        b in any::<u128>(),
        c in any::<u64>(),
        d in any::<usize>(),
        e in any::<i32>(),
        f in any::<u8>(),
    ) {
        let all = [
            (Expr::constant(a), Expr::try_from(a), decimal(a)),
            (Expr::constant(b), Expr::try_from(b), decimal(b)),
            (Expr::constant(c), Expr::try_from(c), decimal(c)),
            (Expr::constant(d), Expr::try_from(d), decimal(d)),
            (Expr::constant(e), Expr::try_from(e), decimal(e)),
            (Expr::constant(f), Expr::try_from(f), decimal(f)),
        ];
        for (x, y, want) in all {
            prop_assert_eq!(Ok(x), y);
            prop_assert_eq!(x.as_bigint().map(|v| v.to_string()), Some(want.clone()));
            if let Ok(small) = want.parse::<i64>() {
                prop_assert_eq!(x, Expr::from(small));
            }
        }
    }
}

/// Symbols of the flat-index property test: four sizes, an index below each, and two
/// indices bounded by other indices.
const FLAT_DECLS: [&str; 10] = [
    "s0 1..=3",
    "s1 1..=3",
    "s2 1..=2",
    "s3 1..=2",
    "i0 0..s0",
    "i1 0..s1",
    "i2 0..s2",
    "i3 0..s3",
    "k 0..=i1",
    "l -2..=i2",
];

/// Every binding of `FLAT_DECLS`: each symbol over its range, given the symbols before it.
fn every_flat_binding() -> Vec<[i64; 10]> {
    let mut out = Vec::new();
    for s in 0..3 * 3 * 2 * 2 {
        let sizes = [1 + s % 3, 1 + s / 3 % 3, 1 + s / 9 % 2, 1 + s / 18];
        let mut idx = [0i64; 4];
        'index: loop {
            for k in 0..=idx[1] {
                for l in -2..=idx[2] {
                    let mut v = [0i64; 10];
                    v[..4].copy_from_slice(&sizes);
                    v[4..8].copy_from_slice(&idx);
                    (v[8], v[9]) = (k, l);
                    out.push(v);
                }
            }
            // The next index tuple, the last index fastest.
            for d in (0..4).rev() {
                idx[d] += 1;
                if idx[d] < sizes[d] {
                    continue 'index;
                }
                idx[d] = 0;
            }
            break;
        }
    }
    out
}

/// The product of the trees in `ts` (1 when empty).
fn product(ts: impl IntoIterator<Item = T>) -> T {
    ts.into_iter().fold(T::C(1), |a, t| T::Mul(bx(a), bx(t)))
}

/// The flat index of the axes `dims` (sizes `V(d)`, indices `V(4 + d)`), the first
/// outermost, and the number of elements it ranges over.
fn flat_index(dims: &[usize]) -> (T, T) {
    let flat = dims.iter().enumerate().fold(T::C(0), |a, (p, &d)| {
        let inner = product(dims[p + 1..].iter().map(|&e| T::V(e)));
        T::Add(bx(a), bx(T::Mul(bx(T::V(4 + d)), bx(inner))))
    });
    (flat, product(dims.iter().map(|&d| T::V(d))))
}

/// Up to two small terms over products of up to two symbols of `FLAT_DECLS`.
fn flat_noise() -> impl Strategy<Value = Vec<(i64, Vec<usize>)>> {
    proptest::collection::vec(
        (-2i64..=2, proptest::collection::vec(0usize..10, 0..=2)),
        0..=2,
    )
}

/// A random axis order of a random subset of the four axes (at least one).
fn flat_axes() -> impl Strategy<Value = Vec<usize>> {
    Just(vec![0usize, 1, 2, 3])
        .prop_shuffle()
        .prop_flat_map(|dims| (1usize..=4).prop_map(move |r| dims[..r].to_vec()))
}

proptest! {
    /// `a*flat + noise OP b*numel + d` for the flat index of random axes in a random
    /// order: every answer `prove` gives is checked at every admissible binding, and
    /// `flat <= numel - 1 + d` (no noise, `d >= 0`) must be shown, at every rank.
    #[test]
    fn flat_index_bounds_hold_at_every_binding(
        dims in flat_axes(),
        a in 1i64..=2,
        b in 1i64..=2,
        d in -3i64..=3,
        noise in flat_noise(),
        op in cmp_op(),
    ) {
        let (cx, syms) = scope_of(&FLAT_DECLS);
        let (flat, numel) = flat_index(&dims);
        let lhs = noise.iter().fold(T::Mul(bx(T::C(a)), bx(flat.clone())), |acc, (c, vs)| {
            let term = T::Mul(bx(T::C(*c)), bx(product(vs.iter().map(|&v| T::V(v)))));
            T::Add(bx(acc), bx(term))
        });
        let rhs = T::Add(bx(T::Mul(bx(T::C(b)), bx(numel.clone()))), bx(T::C(d)));
        let (x, y) = (build(&lhs, &syms), build(&rhs, &syms));
        let proof = cx.prove(x, op, y);
        for vals in every_flat_binding() {
            let mut big = BigInt::zero();
            let (Some(vx), Some(vy)) = (reference(&lhs, &vals, &mut big), reference(&rhs, &vals, &mut big)) else {
                continue;
            };
            let h = holds(op, &vx, &vy);
            prop_assert!(
                !matches!((&proof, h), (Proof::True, false) | (Proof::False, true)),
                "prove `{}` {} `{}` = {:?}, but {} vs {} at {:?}", x, op, y, proof, vx, vy, vals
            );
        }
        if d >= 0 {
            let (f, n) = (build(&flat, &syms), build(&numel, &syms));
            prop_assert_eq!(cx.prove(f, CmpOp::Le, n - 1 + d), Proof::True, "{} <= {} - 1 + {}", f, n, d);
            prop_assert_eq!(cx.prove(f, CmpOp::Eq, n + d), Proof::False, "{} == {} + {}", f, n, d);
        }
    }
}

/// A product of symbols of `FLAT_DECLS` (by index) and a constant, as a tree.
fn monomial(c: i64, vs: &[usize]) -> T {
    T::Mul(bx(T::C(c)), bx(product(vs.iter().map(|&v| T::V(v)))))
}

proptest! {
    /// `(q*A + r) // (A*B)` and `% (A*B)` with `r` in `0..A` by construction (a flat index
    /// times `g` plus a constant below `g`), or with a term that may leave that range:
    /// built and simplified, each equals the naive value at every admissible binding.
    #[test]
    fn divisions_through_a_common_factor_keep_the_value(
        dims in flat_axes(),
        g in 1i64..=3,
        e_seed in 0i64..3,
        q in (-2i64..=2, proptest::collection::vec(0usize..10, 0..=2)),
        outer in (1i64..=3, proptest::collection::vec(0usize..4, 0..=2)),
        noise in flat_noise(),
    ) {
        let (cx, syms) = scope_of(&FLAT_DECLS);
        let (flat, numel) = flat_index(&dims);
        let inner = T::Mul(bx(T::C(g)), bx(numel));
        let remainder = T::Add(bx(T::Mul(bx(T::C(g)), bx(flat))), bx(T::C(e_seed % g)));
        let mut dividend = T::Add(
            bx(T::Mul(bx(monomial(q.0, &q.1)), bx(inner.clone()))),
            bx(remainder),
        );
        for (c, vs) in &noise {
            dividend = T::Add(bx(dividend), bx(monomial(*c, vs)));
        }
        let divisor = T::Mul(bx(inner), bx(monomial(outer.0, &outer.1)));
        for t in [
            T::Div(bx(dividend.clone()), bx(divisor.clone())),
            T::Mod(bx(dividend.clone()), bx(divisor.clone())),
        ] {
            let e = build(&t, &syms);
            let simplified = cx.simplify(e);
            for vals in every_flat_binding() {
                let mut big = BigInt::zero();
                let want = reference(&t, &vals, &mut big).expect("a positive divisor");
                let mut b = Bindings::new();
                for (s, v) in syms.iter().zip(vals) {
                    b.set(*s, v).unwrap();
                }
                for (what, x) in [("built", e), ("simplified", simplified)] {
                    let got = x.eval(&b).map_err(|err| TestCaseError::fail(err.to_string()))?;
                    prop_assert_eq!(BigInt::from(got), want.clone(), "{} `{}` at {:?}", what, x, vals);
                }
            }
        }
    }
}

proptest! {
    /// Under `s0*s1*s2*s3 <= n`, a flat index over some of the axes and the product of
    /// their sizes against `n + d`: every answer `prove` gives is checked at every binding
    /// that satisfies the assumption, and `flat <= n - 1`, `numel <= n` must be shown.
    #[test]
    fn partial_flat_indices_under_a_size_assumption(
        dims in flat_axes(),
        n in 1i64..=40,
        d in -2i64..=2,
        op in cmp_op(),
    ) {
        let (mut cx, syms) = scope_of(&FLAT_DECLS);
        let (flat, numel) = flat_index(&dims);
        let all = product((0..4).map(T::V));
        cx.assume(build(&all, &syms).le(n)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let admissible: Vec<[i64; 10]> = every_flat_binding()
            .into_iter()
            .filter(|v| v[..4].iter().product::<i64>() <= n)
            .collect();
        let bound = T::C(n + d);
        for lhs in [&flat, &numel] {
            let (x, y) = (build(lhs, &syms), build(&bound, &syms));
            let proof = cx.prove(x, op, y);
            for vals in &admissible {
                let mut big = BigInt::zero();
                let vx = reference(lhs, vals, &mut big).expect("no division");
                let h = holds(op, &vx, &BigInt::from(n + d));
                prop_assert!(
                    !matches!((&proof, h), (Proof::True, false) | (Proof::False, true)),
                    "prove `{}` {} {} = {:?} under `{}` <= {}, but {} at {:?}",
                    x, op, y, proof, build(&all, &syms), n, vx, vals
                );
            }
        }
        let (f, m) = (build(&flat, &syms), build(&numel, &syms));
        prop_assert_eq!(cx.prove(f, CmpOp::Le, Expr::from(n - 1)), Proof::True, "{} <= {} - 1", f, n);
        prop_assert_eq!(cx.prove(m, CmpOp::Le, Expr::from(n)), Proof::True, "{} <= {}", m, n);
    }
}
