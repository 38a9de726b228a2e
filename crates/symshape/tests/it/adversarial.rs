//! Adversarial property tests: symbols with negative, symbolic and possibly empty ranges,
//! divisors, relational, non-linear, `!=` and `or` assumptions, negative and huge
//! constants, nested division, checked against a naive BigInt reference.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::Zero;
use proptest::prelude::*;

use crate::strategies::{binary, cmp_op, random_tree, split_index_of};
use crate::tree::{build, bx, holds, reference, split_index, T};
use crate::{parses_back, scope_of};
use symshape::{Bindings, CmpOp, Error, Expr, Program, Proof, Scope};

/// The symbols, in slot order. `i`, `j`, `e` and `q` have symbolic bounds; `e` has no
/// value at all when `m <= 2`; `q` ranges across zero.
const DECLS: [&str; 10] = [
    "a -20..=20",
    "n 1..=64",
    "m 0..=9",
    "c -7..=-2",
    "i 0..n",
    "j -3..m",
    "e 2..m",
    "d -16..=40 multiple of 8",
    "k 0..=200",
    "q -m..=n",
];
const N_SYMS: usize = DECLS.len();

/// Declared ranges, evaluated by hand: `(lo, hi, multiple)` for a binding.
fn declared(s: usize, v: &[i64; N_SYMS]) -> (i64, i64, i64) {
    match s {
        0 => (-20, 20, 1),
        1 => (1, 64, 1),
        2 => (0, 9, 1),
        3 => (-7, -2, 1),
        4 => (0, v[1] - 1, 1),
        5 => (-3, v[2] - 1, 1),
        6 => (2, v[2] - 1, 1),
        7 => (-16, 40, 8),
        8 => (0, 200, 1),
        _ => (-v[2], v[1], 1),
    }
}

/// Assumptions a case may add, each with its obviously-right predicate.
type Pred = fn(&[i64; N_SYMS]) -> bool;
const ASSUMPTIONS: [(&str, Pred); 15] = [
    ("n % 8 == 0", |v| v[1] % 8 == 0),
    ("n*m == k", |v| v[1] * v[2] == v[8]),
    ("a <= m", |v| v[0] <= v[2]),
    ("a != 0", |v| v[0] != 0),
    ("i + 1 < n or a > 3", |v| v[4] + 1 < v[1] || v[0] > 3),
    ("m >= 2", |v| v[2] >= 2),
    ("a + c >= -5", |v| v[0] + v[3] >= -5),
    ("2*a - 3*m <= 4", |v| 2 * v[0] - 3 * v[2] <= 4),
    ("not (a == 5)", |v| v[0] != 5),
    ("max(a, m) <= 6", |v| v[0].max(v[2]) <= 6),
    ("a // 3 >= -2", |v| Integer::div_floor(&v[0], &3) >= -2),
    ("d % 16 == 8 or d < 0", |v| {
        v[7].mod_floor(&16) == 8 || v[7] < 0
    }),
    ("q <= i or q >= n - 1", |v| v[9] <= v[4] || v[9] >= v[1] - 1),
    ("q*m <= k", |v| v[9] * v[2] <= v[8]),
    ("m != 0 and q != 0", |v| v[2] != 0 && v[9] != 0),
];

/// Whether every value of the binding lies in its declared range and divisor.
fn in_declared_ranges(v: &[i64; N_SYMS]) -> bool {
    (0..N_SYMS).all(|s| {
        let (lo, hi, mul) = declared(s, v);
        lo <= v[s] && v[s] <= hi && v[s] % mul == 0
    })
}

/// Whether the binding satisfies the declarations and the chosen assumptions.
fn admissible(v: &[i64; N_SYMS], assume: &[usize]) -> bool {
    in_declared_ranges(v) && assume.iter().all(|&a| (ASSUMPTIONS[a].1)(v))
}

/// Half the default number of cases, for the slower property tests.
fn half_cases() -> ProptestConfig {
    ProptestConfig {
        cases: ProptestConfig::default().cases / 2,
        ..ProptestConfig::default()
    }
}

/// Small constants mostly, sometimes a divisor-like power of two or 3, sometimes an
/// extreme value.
fn constant() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => -12i64..=12,
        1 => prop_oneof![Just(8), Just(-8), Just(16), Just(-16), Just(3), Just(-3)],
        1 => prop_oneof![
            Just(1i64 << 33),
            Just(-(1i64 << 33)),
            Just(i64::MAX),
            Just(i64::MIN)
        ],
    ]
}

/// Random trees over every symbol: every operator, index shapes over symbolic
/// extents, divisors of several terms, and nested division by constants.
fn tree() -> BoxedStrategy<T> {
    let leaf = prop_oneof![constant().prop_map(T::C), (0usize..N_SYMS).prop_map(T::V)];
    random_tree(leaf, 5, 32, |inner| {
        let n_plus_1 = T::Add(bx(T::V(1)), bx(T::C(1)));
        vec![
            // Index shapes over a symbolic extent: (x*n + i) // n, (x*m + j) % m.
            split_index_of(inner, T::V(1), T::V(4), T::V(1), true),
            split_index_of(inner, T::V(2), T::V(5), T::V(2), false),
            // Divisors of several terms: (x*(n + 1) + i) // (n + 1), (x*(n + m) + q) % (m - 3).
            split_index_of(inner, n_plus_1.clone(), T::V(4), n_plus_1, true),
            (inner.clone(), any::<bool>())
                .prop_map(|(x, div)| {
                    let n_plus_m = T::Add(bx(T::V(1)), bx(T::V(2)));
                    let m_minus_3 = T::Add(bx(T::V(2)), bx(T::C(-3)));
                    split_index(x, n_plus_m, T::V(9), m_minus_3, div)
                })
                .boxed(),
            // Nested division by constants of both signs.
            (inner.clone(), constant(), constant())
                .prop_map(|(x, p, q)| T::Div(bx(T::Div(bx(x), bx(T::C(p)))), bx(T::C(q))))
                .boxed(),
            (inner.clone(), constant(), constant())
                .prop_map(|(x, p, q)| T::Mod(bx(T::Mod(bx(x), bx(T::C(p)))), bx(T::C(q))))
                .boxed(),
        ]
    })
}

/// Raw seeds turned into values, mostly admissible for the declarations; one in eight
/// values is drawn from a wider window on purpose (the binding check must then reject
/// it), and `e` has no admissible value when `m <= 2`.
fn binding() -> impl Strategy<Value = [i64; N_SYMS]> {
    (any::<[u16; N_SYMS]>(), any::<[u8; N_SYMS]>(), any::<bool>()).prop_map(|(s, stray, mul)| {
        let w = |i: usize, lo: i64, hi: i64| {
            let hi = hi.max(lo);
            let (lo, hi) = if stray[i] % 8 == 0 {
                (lo - 2, hi + 2)
            } else {
                (lo, hi)
            };
            lo + i64::from(s[i]) % (hi - lo + 1)
        };
        let n = if mul { 8 * w(1, 1, 8) } else { w(1, 1, 64) };
        let m = w(2, 0, 9);
        let k = if stray[8] % 2 == 0 {
            n * m
        } else {
            w(8, 0, 200)
        };
        [
            w(0, -20, 20),
            n,
            m,
            w(3, -7, -2),
            w(4, 0, n - 1),
            w(5, -3, m - 1),
            w(6, 2, m - 1),
            8 * w(7, -2, 5) + if stray[7] % 16 == 1 { 4 } else { 0 },
            k,
            w(9, -m, n),
        ]
    })
}

/// The scope with the chosen assumptions; `None` when the scope refused one as
/// contradictory (checked separately against the sampled bindings).
fn scope(assume: &[usize]) -> Result<(Scope, Vec<Expr>), Error> {
    let (mut cx, syms) = scope_of(&DECLS);
    for &a in assume {
        cx.assume_str(ASSUMPTIONS[a].0)?;
    }
    Ok((cx, syms))
}

/// Binds every symbol without range checks (`Bindings::set` checks each value against
/// what is already bound, so bind in declaration order and stop at the first refusal).
fn bind_all(syms: &[Expr], v: &[i64; N_SYMS]) -> Option<Bindings> {
    let mut b = Bindings::new();
    for (s, x) in syms.iter().zip(v) {
        b.set(*s, *x).ok()?;
    }
    Some(b)
}

/// One case: an expression, a comparison, assumptions and bindings. `Err` describes
/// the first disagreement with the reference.
fn check_case(
    x: &T,
    op: CmpOp,
    y: &T,
    assume: &[usize],
    vals: &[[i64; N_SYMS]],
) -> Result<(), String> {
    let (cx, syms) = match scope(assume) {
        Ok(s) => s,
        Err(Error::Contradiction { assumption }) => {
            // A refused assumption contradicts the earlier ones, so no binding satisfies
            // the whole list.
            if let Some(v) = vals.iter().find(|v| admissible(v, assume)) {
                return Err(format!("`{assumption}` refused but {v:?} satisfies all"));
            }
            return Ok(());
        }
        Err(err) => return Err(format!("scope: {err}")),
    };
    let (ex, ey) = (build(x, &syms), build(y, &syms));
    let (sx, cond) = (cx.simplify(ex), ex.compare(op, ey));
    let proof = cx.prove(ex, op, ey);
    let (range, decl_range) = (cx.range(ex), ex.range());
    // Text parses back to the same handle.
    for e in [ex, sx] {
        parses_back(e, |s| cx.parse_expr(s))?;
    }
    parses_back(cond, |s| cx.parse_cond(s))?;
    let sc = cx.simplify_cond(cond);
    let prog = Program::compile(&syms, &[ex, sx]);
    let cprog = Program::compile_conds(&syms, &[cond]);
    for v in vals {
        let ok = admissible(v, assume);
        let b = bind_all(&syms, v);
        let checked = b.as_ref().is_some_and(|b| cx.check(b).is_ok());
        if ok != checked {
            return Err(format!(
                "binding {v:?}: admissible {ok}, check says {checked}"
            ));
        }
        let Some(b) = b.filter(|_| ok) else { continue };
        let mut big = BigInt::zero();
        let (Some(vx), Some(vy)) = (reference(x, v, &mut big), reference(y, v, &mut big)) else {
            continue;
        };
        let h = holds(op, &vx, &vy);
        match (&proof, h) {
            (Proof::True, false) | (Proof::False, true) => {
                return Err(format!(
                    "prove `{ex}` {op} `{ey}` = {proof} contradicted at {b}: {vx} vs {vy}"
                ))
            }
            _ => {}
        }
        if !range.contains(&vx) || !decl_range.contains(&vx) {
            return Err(format!(
                "`{ex}` = {vx} at {b}, outside {range} / {decl_range}"
            ));
        }
        if let Some(sb) = sc.as_bool() {
            if sb != h {
                return Err(format!("`{cond}` simplified to {sb} but is {h} at {b}"));
            }
        }
        // Partial binding of a, n and m, then evaluation of the rest.
        let mut partial = Bindings::new();
        for s in [0, 1, 2] {
            partial.set(syms[s], v[s]).map_err(|e| e.to_string())?;
        }
        let sub = cx.substitute(ex, &partial);
        let fits = big.bits() <= 60;
        for (what, e) in [("built", ex), ("simplified", sx), ("substituted", sub)] {
            match e.eval(&b) {
                Ok(got) if BigInt::from(got) == vx => {}
                Ok(got) => return Err(format!("{what} `{e}` = {got} at {b}, reference {vx}")),
                Err(err) if fits => return Err(format!("{what} `{e}` at {b}: {err}")),
                Err(_) => {}
            }
        }
        if let Ok(c) = cond.eval(&b) {
            if c != h {
                return Err(format!("`{cond}` evaluates to {c} at {b}, reference {h}"));
            }
        }
        // A constant wider than i64 is a compile error; nothing else is.
        let prog = match &prog {
            Ok(p) => p,
            Err(Error::Overflow { .. }) => continue,
            Err(e) => return Err(format!("compile `{ex}`: {e}")),
        };
        let mut st = prog.state();
        match prog.run(&mut st, v) {
            Ok(got) => {
                if got.iter().any(|g| BigInt::from(*g) != vx) {
                    return Err(format!("program of `{ex}` = {got:?}, reference {vx}"));
                }
            }
            // The program computes in i64 over the canonical form, whose intermediates
            // may be wider than the reference's: an overflow is an error, never a value.
            Err(Error::Overflow { .. }) => {}
            Err(err) => return Err(format!("program of `{ex}` at {b}: {err}")),
        }
        if let Ok(p) = &cprog {
            let mut st = p.state();
            match p.run(&mut st, v) {
                Ok(got) if got == [i64::from(h)] => {}
                Ok(got) => {
                    return Err(format!(
                        "program of `{cond}` = {got:?} at {b}, reference {h}"
                    ))
                }
                Err(Error::Overflow { .. } | Error::DivisionByZero { .. }) => {}
                Err(err) => return Err(format!("program of `{cond}` at {b}: {err}")),
            }
        }
    }
    Ok(())
}

/// Up to three indices into `ASSUMPTIONS`.
fn assumptions() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(0usize..ASSUMPTIONS.len(), 0..4)
}

proptest! {
    #![proptest_config(half_cases())]

    #[test]
    fn adversarial_cases_agree_with_reference(
        x in tree(),
        y in tree(),
        op in cmp_op(),
        assume in assumptions(),
        vals in proptest::collection::vec(binding(), 24),
    ) {
        check_case(&x, op, &y, &assume, &vals).map_err(TestCaseError::fail)?;
    }

    /// Goals relating an expression to a rewritten form of itself, so that proofs can
    /// succeed (or fail) beyond plain ranges.
    #[test]
    fn related_goals_agree_with_reference(
        x in tree(),
        how in 0u8..8,
        c in prop_oneof![2i64..=9, -9i64..=-2],
        t in tree(),
        k in -2i64..=2,
        op in cmp_op(),
        assume in assumptions(),
        vals in proptest::collection::vec(binding(), 24),
    ) {
        let xb = || bx(x.clone());
        let y = match how {
            0 => T::Mul(bx(T::Div(xb(), bx(T::C(c)))), bx(T::C(c))),
            1 => T::Sub(xb(), bx(T::Mod(xb(), bx(T::C(c))))),
            2 => T::Max(xb(), bx(t)),
            3 => T::Min(xb(), bx(t)),
            4 => T::Mul(bx(T::CDiv(xb(), bx(T::C(c)))), bx(T::C(c))),
            5 => T::Div(bx(T::Mul(xb(), bx(T::V(1)))), bx(T::V(1))),
            6 => T::Add(bx(T::Mul(bx(T::Div(xb(), bx(T::V(2)))), bx(T::V(2)))), bx(T::Mod(xb(), bx(T::V(2))))),
            _ => T::Mul(bx(T::Div(xb(), bx(T::V(9)))), bx(T::V(9))),
        };
        let y = T::Add(bx(y), bx(T::C(k)));
        check_case(&x, op, &y, &assume, &vals).map_err(TestCaseError::fail)?;
    }

    /// Relational goals between symbols only, where linear reasoning does the work.
    #[test]
    fn linear_goals_agree_with_reference(
        p in proptest::collection::vec((-3i64..=3, 0usize..N_SYMS), 1..4),
        q in proptest::collection::vec((-3i64..=3, 0usize..N_SYMS), 1..4),
        k in -10i64..=10,
        op in cmp_op(),
        assume in assumptions(),
        vals in proptest::collection::vec(binding(), 48),
    ) {
        let lin = |terms: &[(i64, usize)], k: i64| {
            terms.iter().fold(T::C(k), |acc, (c, s)| {
                T::Add(bx(acc), bx(T::Mul(bx(T::C(*c)), bx(T::V(*s)))))
            })
        };
        let (x, y) = (lin(&p, k), lin(&q, 0));
        check_case(&x, op, &y, &assume, &vals).map_err(TestCaseError::fail)?;
    }
}

/// Shrunk failure: nested division by `-2^33` merged into one division by `2^66`, whose
/// canonical form has an intermediate wider than i64 although every value of the
/// expression as written fits; evaluation is exact and gives the value.
#[test]
fn regression_nested_huge_divisors_evaluate_exactly() {
    let (_, syms) = scope(&[]).unwrap();
    let m = syms[2];
    let e = m.floor_div(-(1i64 << 33)).floor_div(-(1i64 << 33));
    let mut b = Bindings::new();
    b.set(m, 3).unwrap();
    assert_eq!(e.eval(&b).unwrap(), 0);
    b.set(m, 0).unwrap();
    assert_eq!(e.eval(&b).unwrap(), 0);
    let vals = [[0, 1, 3, -7, 0, -3, 2, -16, 3, 0]];
    let t = T::Div(
        bx(T::Div(bx(T::V(2)), bx(T::C(-(1i64 << 33))))),
        bx(T::C(-(1i64 << 33))),
    );
    assert_eq!(check_case(&t, CmpOp::Lt, &T::C(0), &[], &vals), Ok(()));
}

/// A comparison of two in-range values whose difference leaves i64 still evaluates.
#[test]
fn comparison_of_extreme_values_evaluates() {
    let mut cx = Scope::new();
    let x = cx.declare_str("x -inf..=inf").unwrap();
    let y = cx.declare_str("y -inf..=inf").unwrap();
    let mut b = Bindings::new();
    b.set(x, i64::MAX).unwrap();
    b.set(y, i64::MIN).unwrap();
    assert!(!x.lt(y).eval(&b).unwrap());
    assert!(x.gt(y).eval(&b).unwrap());
    assert!(!x.equals(y).eval(&b).unwrap());
    // The final value decides: x - y itself does not fit.
    insta::assert_snapshot!((x - y).eval(&b).unwrap_err(), @"eval: `-y` overflows i64");
    assert_eq!((x - y).floor_div(4).eval(&b).unwrap(), i64::MAX / 2);
}

proptest! {
    /// `solve` against brute force over the unknown's declared range: a solution
    /// satisfies the equation and the range, and an error means there is none (or the
    /// equation has no unknown left).
    #[test]
    fn solve_agrees_with_brute_force(
        kx in -4i64..=4,
        ky in -4i64..=4,
        c in -30i64..=30,
        unknown in 0usize..3,
        vals in binding(),
    ) {
        let (cx, syms) = scope(&[]).unwrap();
        // Unknown `a`, `m` or `i` (whose range depends on the bound `n`); `y` is bound.
        let (x, y) = [(0, 2), (2, 0), (4, 1)][unknown];
        let mut b = Bindings::new();
        for s in [1, 2, 0] {
            if s != x {
                // Stray values are outside their ranges; those cases say nothing here.
                if b.set(syms[s], vals[s]).is_err() {
                    return Ok(());
                }
            }
        }
        let eq = (kx * syms[x] + ky * syms[y] + c).equals(0);
        let v = vals;
        let (lo, hi, _) = declared(x, &v);
        let sols: Vec<i64> = (lo..=hi)
            .filter(|&t| kx * t + ky * v[y] + c == 0)
            .collect();
        match cx.solve(eq, &b) {
            Ok((s, got)) => {
                prop_assert_eq!(s, syms[x]);
                prop_assert_eq!(sols, vec![got], "{} at {}", eq, b);
            }
            Err(err) => prop_assert!(
                kx == 0 || sols.is_empty(),
                "{} at {}: {} but {:?} solve it", eq, b, err, sols
            ),
        }
    }
}

/// Shrunk failure: solving `i == n - 1` for an index `i 0..n` with `n` bound counted the
/// `n` in `i`'s bound as a second unknown.
#[test]
fn regression_solve_ignores_symbols_in_bounds() {
    let (cx, syms) = scope(&[]).unwrap();
    let (n, i) = (syms[1], syms[4]);
    let mut b = Bindings::new();
    b.set(n, 5).unwrap();
    assert_eq!(cx.solve(i.equals(n - 1), &b).unwrap(), (i, 4));
    // `n` unbound: `i` is still the one unknown of `i == 3`.
    assert_eq!(cx.solve(i.equals(3), &Bindings::new()).unwrap(), (i, 3));
    // `i == n` is already `false` when built: `i <= n - 1` by declaration.
    insta::assert_snapshot!(cx.solve(i.equals(n), &b).unwrap_err(), @"solve: `false`: it has no integral solution in range");
}

/// A random condition: comparisons of random trees joined by `and`, `or`, `not`.
#[derive(Clone, Debug)]
enum B {
    Cmp(T, CmpOp, T),
    And(Box<B>, Box<B>),
    Or(Box<B>, Box<B>),
    Not(Box<B>),
}

/// Random conditions whose comparisons relate two trees drawn from `tree`, up to
/// `depth` levels of `and`, `or` and `not` and about `size` comparisons.
fn cond_over(tree: BoxedStrategy<T>, depth: u32, size: u32) -> impl Strategy<Value = B> {
    let leaf = (tree.clone(), cmp_op(), tree).prop_map(|(x, o, y)| B::Cmp(x, o, y));
    leaf.prop_recursive(depth, size, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| B::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| B::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|a| B::Not(Box::new(a))),
        ]
    })
}

/// Reference truth value (`None` when a division by zero is reached).
fn reference_cond(c: &B, v: &[i64; N_SYMS]) -> Option<bool> {
    let mut big = BigInt::zero();
    Some(match c {
        B::Cmp(x, o, y) => holds(*o, &reference(x, v, &mut big)?, &reference(y, v, &mut big)?),
        B::And(a, b) => reference_cond(a, v)? && reference_cond(b, v)?,
        B::Or(a, b) => reference_cond(a, v)? || reference_cond(b, v)?,
        B::Not(a) => !reference_cond(a, v)?,
    })
}

fn build_cond(c: &B, syms: &[Expr]) -> symshape::Cond {
    match c {
        B::Cmp(x, o, y) => build(x, syms).compare(*o, build(y, syms)),
        B::And(a, b) => build_cond(a, syms) & build_cond(b, syms),
        B::Or(a, b) => build_cond(a, syms) | build_cond(b, syms),
        B::Not(a) => !build_cond(a, syms),
    }
}

fn check_cond_case(c: &B, assume: &[usize], vals: &[[i64; N_SYMS]]) -> Result<(), String> {
    let Ok((cx, syms)) = scope(assume) else {
        return Ok(());
    };
    let built = build_cond(c, &syms);
    let simplified = cx.simplify_cond(built);
    let proof = cx.prove_cond(built);
    for e in [built, simplified] {
        parses_back(e, |s| cx.parse_cond(s))?;
    }
    let prog = Program::compile_conds(&syms, &[built, simplified]);
    for v in vals.iter().filter(|v| admissible(v, assume)) {
        // A division by zero anywhere makes the reference undefined: skip the binding.
        let Some(want) = reference_cond(c, v) else {
            continue;
        };
        let Some(b) = bind_all(&syms, v) else {
            return Err(format!("admissible {v:?} refused"));
        };
        if proof.as_bool().is_some_and(|p| p != want) {
            return Err(format!("prove `{built}` = {proof} but it is {want} at {b}"));
        }
        for e in [built, simplified] {
            match e.eval(&b) {
                Ok(got) if got != want => {
                    return Err(format!("`{e}` = {got} at {b}, reference {want}"))
                }
                // Short-circuit order may reach a division by zero the reference skipped.
                _ => {}
            }
        }
        if let Ok(p) = &prog {
            let mut st = p.state();
            if let Ok(got) = p.run(&mut st, v) {
                if got.iter().any(|g| *g != i64::from(want)) {
                    return Err(format!(
                        "program of `{built}` = {got:?} at {b}, reference {want}"
                    ));
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(half_cases())]

    #[test]
    fn conditions_agree_with_reference(
        c in cond_over(tree(), 3, 8),
        assume in assumptions(),
        vals in proptest::collection::vec(binding(), 16),
    ) {
        check_cond_case(&c, &assume, &vals).map_err(TestCaseError::fail)?;
    }
}

/// Small trees, mostly sums and products, divided only by positive constants.
fn small_tree() -> BoxedStrategy<T> {
    let leaf = prop_oneof![(-9i64..=9).prop_map(T::C), (0usize..N_SYMS).prop_map(T::V)];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            3 => binary(&inner, T::Add),
            1 => binary(&inner, T::Sub),
            2 => binary(&inner, T::Mul),
            1 => (inner.clone(), 2i64..=16).prop_map(|(x, c)| T::Div(bx(x), bx(T::C(c)))),
            1 => (inner.clone(), 2i64..=16).prop_map(|(x, c)| T::Mod(bx(x), bx(T::C(c)))),
            1 => binary(&inner, T::Min),
            1 => binary(&inner, T::Max),
        ]
    })
    .boxed()
}

/// Random assumptions: proofs, simplification and ranges under them never disagree with
/// a binding that satisfies them.
fn check_random_assumptions(
    facts: &[B],
    x: &T,
    op: CmpOp,
    y: &T,
    vals: &[[i64; N_SYMS]],
) -> Result<(), String> {
    let (mut cx, syms) = scope_of(&DECLS);
    let mut kept: Vec<&B> = Vec::new();
    for f in facts {
        match cx.assume(build_cond(f, &syms)) {
            Ok(()) => kept.push(f),
            Err(Error::Contradiction { assumption }) => {
                let all = kept.iter().copied().chain(std::iter::once(f));
                let sat = |v: &[i64; N_SYMS]| {
                    in_declared_ranges(v) && all.clone().all(|a| reference_cond(a, v) == Some(true))
                };
                if let Some(v) = vals.iter().find(|v| sat(v)) {
                    return Err(format!("`{assumption}` refused but {v:?} satisfies it"));
                }
            }
            Err(e) => return Err(format!("assume: {e}")),
        }
    }
    let (ex, ey) = (build(x, &syms), build(y, &syms));
    let proof = cx.prove(ex, op, ey);
    let sx = cx.simplify(ex);
    let range = cx.range(ex);
    for v in vals {
        if !in_declared_ranges(v) || !kept.iter().all(|a| reference_cond(a, v) == Some(true)) {
            continue;
        }
        let mut big = BigInt::zero();
        let (Some(vx), Some(vy)) = (reference(x, v, &mut big), reference(y, v, &mut big)) else {
            continue;
        };
        let h = holds(op, &vx, &vy);
        if proof.as_bool().is_some_and(|p| p != h) {
            return Err(format!(
                "prove `{ex}` {op} `{ey}` = {proof} under {:?}, but {h} at {v:?}",
                cx.assumptions()
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
            ));
        }
        if !range.contains(&vx) {
            return Err(format!("`{ex}` = {vx} at {v:?} outside {range}"));
        }
        let b = bind_all(&syms, v).ok_or("admissible binding refused")?;
        if let Ok(got) = sx.eval(&b) {
            if BigInt::from(got) != vx {
                return Err(format!(
                    "simplified `{sx}` = {got} at {v:?}, reference {vx}"
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(half_cases())]

    #[test]
    fn random_assumptions_never_contradicted(
        facts in proptest::collection::vec(cond_over(small_tree(), 2, 4), 1..4),
        x in small_tree(),
        op in cmp_op(),
        y in small_tree(),
        vals in proptest::collection::vec(binding(), 32),
    ) {
        check_random_assumptions(&facts, &x, op, &y, &vals).map_err(TestCaseError::fail)?;
    }
}
