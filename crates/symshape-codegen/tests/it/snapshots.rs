//! The plans and emitted sources of typical stacks, snapshotted.

use insta::assert_snapshot;
use symshape::Scope;
use symshape_codegen::{render_c, CConfig, Plan};
use symshape_view::{Op, ViewStack};

use crate::compiled::check_stack;

/// Runs `ops` (one `Op` per line as the parser below reads them) on a fresh stack over
/// the scope declared by `decls`, and returns the plan followed by the C unit.
fn emit(decls: &[&str], shape: &str, ops: &[&str]) -> String {
    let mut cx = Scope::new();
    for d in decls {
        cx.declare_str(d).expect("a declaration");
    }
    let stack = stack(&cx, shape, ops);
    let plan = Plan::materialize(&cx, &stack).expect("a plan");
    let unit = render_c(&cx, &plan, &CConfig::new("shapetrace")).expect("C source");
    format!("{plan}\n{unit}")
}

fn exprs(cx: &Scope, text: &str) -> Vec<symshape::Expr> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    symshape::split_top_level(inner, ',')
        .expect("a balanced list")
        .into_iter()
        .filter(|t| !t.trim().is_empty())
        .map(|t| cx.parse_expr(t.trim()).expect("an expression"))
        .collect()
}

pub(crate) fn stack(cx: &Scope, shape: &str, ops: &[&str]) -> ViewStack {
    let shape = exprs(cx, shape);
    let mut s = ViewStack::new(symshape_view::View::row_major(cx, &shape).expect("a view"));
    for o in ops {
        let (kw, rest) = o.split_once(' ').expect("`op args`");
        let op = match kw {
            "permute" => Op::Permute(
                exprs(cx, rest)
                    .iter()
                    .map(|e| usize::try_from(e.as_i64().expect("an axis")).expect("an axis"))
                    .collect(),
            ),
            "reshape" => Op::Reshape(exprs(cx, rest)),
            "flip" => Op::Flip(
                exprs(cx, rest)
                    .iter()
                    .map(|e| usize::try_from(e.as_i64().expect("an axis")).expect("an axis"))
                    .collect(),
            ),
            "pad" | "shrink" => {
                let v = exprs(cx, rest);
                let pairs = v.chunks(2).map(|c| (c[0], c[1])).collect();
                if kw == "pad" {
                    Op::Pad(pairs)
                } else {
                    Op::Shrink(pairs)
                }
            }
            "expand" => Op::Expand(exprs(cx, rest)),
            _ => panic!("unknown op {kw}"),
        };
        s = s.apply(cx, &op).expect("the op applies");
    }
    s
}

#[test]
fn transpose_of_a_symbolic_matrix() {
    assert_snapshot!(emit(
        &["n 1..=4096", "m 1..=4096"],
        "[n, m]",
        &["permute [1, 0]"]
    ));
}

#[test]
fn contiguous_axes_merge_into_one_loop() {
    assert_snapshot!(emit(
        &["b 1..=64", "s 1..=8192"],
        "[b, s, 768]",
        &["reshape [b, s, 12, 64]"]
    ));
}

#[test]
fn padding_becomes_loop_bounds() {
    assert_snapshot!(emit(
        &["h 3..=1024", "w 3..=1024"],
        "[h, w]",
        &["pad [1, 1, 1, 1]"]
    ));
}

#[test]
fn flipped_and_shrunk_with_a_guard() {
    assert_snapshot!(emit(
        &["n 1..=64", "p 0..=64"],
        "[n, 8]",
        &["flip [0]", "shrink [0, p, 2, 8]"]
    ));
}

#[test]
fn a_transposed_flatten_is_two_views_with_floor_division() {
    assert_snapshot!(emit(
        &["n 1..=64", "m 1..=64"],
        "[n, m]",
        &["permute [1, 0]", "reshape [m*n]", "pad [1, 0]"]
    ));
}

#[test]
fn broadcast_bias() {
    assert_snapshot!(emit(
        &["b 1..=64", "s 1..=8192"],
        "[1, 1, 768]",
        &["expand [b, s, 768]"]
    ));
}

#[test]
fn snapshotted_stacks_compile_and_agree() {
    let cases: &[(&[&str], &str, &[&str])] = &[
        (&["n 1..=5", "m 1..=5"], "[n, m]", &["permute [1, 0]"]),
        (&["n 1..=5", "m 1..=5"], "[n, m]", &["pad [1, 1, 1, 1]"]),
        (
            &["n 1..=5", "m 1..=5"],
            "[n, m]",
            &["permute [1, 0]", "reshape [m*n]", "pad [1, 0]"],
        ),
    ];
    for (decls, shape, ops) in cases {
        let mut cx = Scope::new();
        for d in *decls {
            cx.declare_str(d).expect("a declaration");
        }
        check_with_syms(&cx, &stack(&cx, shape, ops));
    }
}

/// [`check_stack`] for a scope of two symbols `n`, `m` in `1..=5`.
fn check_with_syms(cx: &Scope, s: &ViewStack) {
    check_stack(cx, s, 7, 8);
}

#[test]
fn errors_name_the_op_and_the_argument() {
    let mut cx = Scope::new();
    let n = cx.declare_str("n 1..=8").expect("n");
    let s = ViewStack::new(symshape_view::View::row_major(&cx, &[n]).expect("a view"));
    let plan = Plan::materialize(&cx, &s).expect("a plan");
    let bad = render_c(&cx, &plan, &CConfig::new("2x")).expect_err("not an identifier");
    assert_snapshot!(bad, @"render_c: prefix `2x` is not a C identifier");
    let empty = Scope::new();
    let plan = Plan::materialize(&empty, &s).expect("a plan");
    let undeclared = render_c(&empty, &plan, &CConfig::new("k")).expect_err("n is undeclared");
    assert_snapshot!(undeclared, @"render_c: symbol `n` is not declared in the scope; declare every symbol the stack uses");
    let none = Plan::elementwise(&cx, &[], &[n]).expect_err("no inputs");
    assert_snapshot!(none, @"plan_elementwise: no inputs to broadcast to [n]");
}
