//! A scope remembers its answers: interleaving assumptions with questions must give, at
//! every step, the answers a scope built afresh from the same assumptions gives.
//!
//! The fresh scope answers on a new thread, so that no per-thread memo of constructor
//! calls or refutations is shared with the scope under test either.

use proptest::prelude::*;
use symshape::{CmpOp, Cond, Expr, Proof, Scope};

use crate::scope_of;
use crate::strategies::{cmp_op, random_tree};
use crate::tree::{build, T};

const DECLS: [&str; 4] = ["n 1..=64", "m 0..=64", "k -8..=8", "i 0..n"];

/// One step: add an assumption, or ask a question.
#[derive(Clone, Debug)]
enum Step {
    Assume(T, CmpOp, T),
    Prove(T, CmpOp, T),
    Simplify(T),
    /// `range` of an expression (its ends are narrowed by proofs).
    Range(T),
}

fn tree() -> BoxedStrategy<T> {
    let leaf = prop_oneof![(-6i64..=6).prop_map(T::C), (0usize..4).prop_map(T::V)];
    random_tree(leaf, 3, 12, |_| Vec::new())
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (tree(), cmp_op(), tree()).prop_map(|(x, op, y)| Step::Assume(x, op, y)),
        (tree(), cmp_op(), tree()).prop_map(|(x, op, y)| Step::Prove(x, op, y)),
        tree().prop_map(Step::Simplify),
        tree().prop_map(Step::Range),
    ]
}

/// What a question answered, comparable across scopes.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    Assumed(bool),
    Proof(Proof),
    Simplified(Expr),
    Range(String),
}

fn ask(cx: &mut Scope, syms: &[Expr], s: &Step) -> Answer {
    match s {
        Step::Assume(x, op, y) => {
            let c: Cond = build(x, syms).compare(*op, build(y, syms));
            Answer::Assumed(cx.assume(c).is_ok())
        }
        Step::Prove(x, op, y) => Answer::Proof(cx.prove(build(x, syms), *op, build(y, syms))),
        Step::Simplify(x) => Answer::Simplified(cx.simplify(build(x, syms))),
        Step::Range(x) => Answer::Range(cx.range(build(x, syms)).to_string()),
    }
}

/// The answer to `s` in a scope built on a new thread from the accepted `assumed` steps.
fn fresh_answer(assumed: &[Step], s: &Step) -> Answer {
    let (assumed, s) = (assumed.to_vec(), s.clone());
    std::thread::spawn(move || {
        let (mut cx, syms) = scope_of(&DECLS);
        for a in &assumed {
            assert_eq!(ask(&mut cx, &syms, a), Answer::Assumed(true), "{a:?}");
        }
        ask(&mut cx, &syms, &s)
    })
    .join()
    .expect("reference thread")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn remembered_answers_match_a_fresh_scope(steps in proptest::collection::vec(step(), 1..12)) {
        let (mut cx, syms) = scope_of(&DECLS);
        // A clone made before any assumption shares the memo until it diverges: it must
        // keep answering for its own (empty) assumptions.
        let mut before = cx.clone();
        let mut assumed: Vec<Step> = Vec::new();
        for s in &steps {
            // Ask twice: the second answer comes from the memo.
            let first = ask(&mut cx.clone(), &syms, s);
            let got = ask(&mut cx, &syms, s);
            prop_assert_eq!(&first, &got, "asked twice: {:?}", s);
            let want = fresh_answer(&assumed, s);
            prop_assert_eq!(&got, &want, "step {:?} after {:?}", s, assumed);
            if got == Answer::Assumed(true) {
                assumed.push(s.clone());
            }
            if !matches!(s, Step::Assume(..)) {
                let old = ask(&mut before, &syms, s);
                prop_assert_eq!(old, fresh_answer(&[], s), "clone before {:?}", assumed);
            }
        }
    }
}

/// A memo entry made before an assumption is not used after it: `n >= 2` is unknown, then
/// assumed, then proven.
#[test]
fn an_assumption_replaces_the_memo() {
    let (mut cx, syms) = scope_of(&DECLS);
    let n = syms[0];
    let two = Expr::from(2);
    assert!(cx.prove(n, CmpOp::Ge, two).as_bool().is_none());
    assert_eq!(cx.simplify(n.min(2)).to_string(), "min(2, n)");
    let copy = cx.clone();
    cx.assume(n.compare(CmpOp::Ge, 2)).expect("assume");
    assert_eq!(cx.prove(n, CmpOp::Ge, two), Proof::True);
    assert_eq!(cx.simplify(n.min(2)), two);
    // The copy made before the assumption shares none of it.
    assert!(copy.prove(n, CmpOp::Ge, two).as_bool().is_none());
    assert_eq!(copy.simplify(n.min(2)).to_string(), "min(2, n)");
}

/// A declaration after a clone does not leak into the clone through a remembered
/// assumption.
#[test]
fn a_declaration_is_not_shared_through_the_memo() {
    let (mut cx, syms) = scope_of(&DECLS);
    let mut other = cx.clone();
    let x = other.declare_str("x 0..=3").expect("x");
    let c = syms[0].compare(CmpOp::Ge, 2);
    cx.assume(c).expect("assume");
    other.assume(c).expect("assume");
    assert_eq!(other.symbol("x"), Some(x));
    assert_eq!(cx.symbol("x"), None);
}

/// Clones share a generation; a change of the scope gives a new one, a repeated
/// declaration or assumption does not.
#[test]
fn generations_follow_changes() {
    let (mut cx, syms) = scope_of(&DECLS);
    let copy = cx.clone();
    assert_eq!(cx.generation(), copy.generation());
    let g0 = cx.generation();
    cx.declare_str("n 1..=64").expect("same declaration");
    assert_eq!(cx.generation(), g0);
    cx.assume(syms[0].compare(CmpOp::Ge, 2)).expect("assume");
    let g1 = cx.generation();
    assert_ne!(g1, g0);
    cx.assume(syms[0].compare(CmpOp::Ge, 2)).expect("again");
    assert_eq!(cx.generation(), g1);
    cx.declare_str("x 0..=3").expect("x");
    assert_ne!(cx.generation(), g1);
    assert_eq!(copy.generation(), g0);
    // Built apart, the same declarations are another generation.
    assert_ne!(scope_of(&DECLS).0.generation(), g0);
}
