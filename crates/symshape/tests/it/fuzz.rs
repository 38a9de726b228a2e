//! Fuzzing through the public API: random text for the parsers, random operator chains
//! with extreme constants and deep nesting for the builders, random inputs for compiled
//! programs. Only `Ok` or `Err` may come back, never a panic; and the output is
//! deterministic across threads and build orders.

use proptest::prelude::*;
use symshape::{Bindings, CmpOp, Cond, Expr, Program};

use crate::std_scope;

/// Fragments that make random text likely to reach deep parser states.
const PIECES: [&str; 32] = [
    "n",
    "m",
    "i",
    "x",
    "b",
    "k",
    "0",
    "1",
    "-",
    "+",
    "*",
    "//",
    "%",
    "(",
    ")",
    ",",
    "<",
    "<=",
    "==",
    "!=",
    ">",
    " and ",
    " or ",
    "not ",
    "min(",
    "max(",
    "cdiv(",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "1_000",
    "inf",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(proptest::sample::select(&PIECES[..]), 0..40)
            .prop_map(|v| v.concat()),
        "\\PC{0,40}",
        "[nmx0-9()+*/%<>=!, -]{0,60}",
    ]
}

/// An operation on a stack of expressions.
#[derive(Clone, Debug)]
enum Op {
    Push(i64),
    PushBig(u16),
    Sym(usize),
    Bin(u8),
    Neg,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        any::<i64>().prop_map(Op::Push),
        prop_oneof![
            Just(Op::Push(i64::MIN)),
            Just(Op::Push(i64::MAX)),
            Just(Op::Push(0))
        ],
        (0u16..5000).prop_map(Op::PushBig),
        (0usize..4).prop_map(Op::Sym),
        any::<u8>().prop_map(Op::Bin),
        Just(Op::Neg),
    ];
    proptest::collection::vec(op, 0..120)
}

/// Runs the chain; every fallible call must return, never panic.
fn run_chain(ops: &[Op]) {
    let cx = std_scope();
    let syms = ["n", "x", "i", "b"].map(|s| cx.symbol(s).unwrap());
    let mut stack: Vec<Expr> = vec![syms[1]];
    let mut conds: Vec<Cond> = Vec::new();
    for op in ops {
        match op {
            Op::Push(v) => stack.push(Expr::from(*v)),
            Op::PushBig(bits) => stack.push(Expr::constant(
                symshape::BigInt::from(3) << usize::from(*bits),
            )),
            Op::Sym(s) => stack.push(syms[*s]),
            Op::Neg => {
                let a = stack.pop().unwrap_or(syms[0]);
                stack.push(-a);
            }
            Op::Bin(k) => {
                let b = stack.pop().unwrap_or(syms[0]);
                let a = stack.pop().unwrap_or(syms[1]);
                let r = match k % 12 {
                    0 => a + b,
                    1 => a - b,
                    2 => a * b,
                    3 => a.floor_div(b),
                    4 => a.floor_mod(b),
                    5 => a.ceil_div(b),
                    6 => a.min(b),
                    7 => a.max(b),
                    8 => {
                        conds.push(a.compare(CmpOp::Lt, b));
                        a
                    }
                    9 => {
                        conds.push(a.not_equals(b) | a.equals(b + 1));
                        b
                    }
                    10 => {
                        conds.push(!a.le(b));
                        a * a
                    }
                    _ => a + b * b,
                };
                stack.push(r);
            }
        }
    }
    let mut b = Bindings::new();
    for (s, v) in syms.iter().zip([7, -3, 2, 16]) {
        b.set(*s, v).unwrap();
    }
    for e in stack.iter().rev().take(4) {
        let _ = e.check();
        let _ = e.eval(&b);
        let _ = cx.simplify(*e);
        let _ = cx.range(*e);
        let _ = cx.prove(*e, CmpOp::Le, syms[0]);
        let _ = cx.parse_expr(&e.to_string());
        if let Ok(p) = Program::compile(&syms, &[*e]) {
            let mut st = p.state();
            let _ = p.run(&mut st, &[7, -3, 2, 16]);
            let _ = p.run(&mut st, &[i64::MAX, i64::MIN, i64::MIN, i64::MAX]);
        }
    }
    for c in conds.iter().rev().take(4) {
        let _ = c.eval(&b);
        let _ = cx.prove_cond(*c);
        let _ = cx.parse_cond(&c.to_string());
        let mut cx2 = cx.clone();
        let _ = cx2.assume(*c);
        let _ = cx2.solve(*c, &b);
    }
}

proptest! {
    #[test]
    fn random_text_never_panics(t in text()) {
        let mut cx = std_scope();
        let _ = cx.parse_expr(&t);
        let _ = cx.parse_cond(&t);
        let _ = cx.declare_str(&format!("q {t}"));
        let _ = cx.declare_str(&t);
        let _ = cx.solve_str(&t, &Bindings::new());
        let _ = cx.assume_str(&t);
    }

    #[test]
    fn random_operator_chains_never_panic(ops in ops()) {
        run_chain(&ops);
    }

    #[test]
    fn programs_never_panic_on_inputs(
        vals in proptest::collection::vec(any::<i64>(), 4),
        which in 0usize..4,
    ) {
        let cx = std_scope();
        let syms = ["n", "x", "y", "b"].map(|s| cx.symbol(s).unwrap());
        let exprs = [
            syms[1] * syms[2] + syms[0],
            (syms[1] - syms[2]).floor_div(syms[0]),
            (syms[1] + syms[2]).floor_mod(syms[3]).min(syms[1].ceil_div(syms[2])),
            syms[1] * syms[1] * syms[1] - syms[2],
        ];
        let p = Program::compile(&syms, &exprs[which..]).unwrap();
        let mut st = p.state();
        // Out-of-range and overflowing inputs are errors, never wrong values or panics.
        if let Ok(out) = p.run(&mut st, &vals) {
            let mut b = Bindings::new();
            for (s, v) in syms.iter().zip(&vals) {
                prop_assert!(b.set(*s, *v).is_ok());
            }
            for (e, got) in exprs[which..].iter().zip(out) {
                prop_assert_eq!(e.eval(&b).ok(), Some(*got));
            }
        }
    }
}

#[test]
fn extreme_constants_and_deep_chains() {
    let cx = std_scope();
    let x = cx.symbol("x").unwrap();
    let huge = "9".repeat(1_000_000);
    insta::assert_snapshot!(cx.parse_expr(&huge).unwrap_err(), @"parse: column 1: integer wider than 4096 bits");
    let min = Expr::from(i64::MIN);
    assert_eq!((-min).to_string(), "9223372036854775808");
    assert_eq!((min.floor_div(-1)).to_string(), "9223372036854775808");
    let mut e = x;
    for _ in 0..10_000 {
        e = e.min(x * 2).floor_mod(7) + x;
    }
    assert!(e.check().is_err());
    let mut c = x.lt(1);
    for k in 0..10_000 {
        c = !(c | x.equals(k));
    }
    let _ = cx.prove_cond(c);
}

/// The printed forms of a fixed list of expressions, built in a given order.
fn printed(order: &[usize]) -> Vec<String> {
    let cx = std_scope();
    let s = |n: &str| cx.symbol(n).unwrap();
    let (n, m, i, j, x, y) = (s("n"), s("m"), s("i"), s("j"), s("x"), s("y"));
    let build = |k: usize| -> String {
        match k {
            0 => ((i * m + j) * 3 + x - y * n).to_string(),
            1 => ((y + x) * (x - y) + (n * m).floor_div(4)).to_string(),
            2 => (x.max(y).min(n) + (j * n + i).floor_mod(8) * y).to_string(),
            3 => (m * y * x * n + n * x * y * m - 2 * x).to_string(),
            4 => cx.simplify((x * 4 + y).ceil_div(4) - x).to_string(),
            5 => ((x * 2).lt(y) & n.equals(m + 1) | (i * 3).not_equals(j)).to_string(),
            _ => (y.floor_div(x) - x.floor_div(y) + y * y * x - x * x * y).to_string(),
        }
    };
    let mut out = vec![String::new(); 7];
    for &k in order {
        out[k] = build(k);
    }
    out
}

#[test]
fn text_is_deterministic_across_orders_and_threads() {
    let want = printed(&[0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(printed(&[6, 5, 4, 3, 2, 1, 0]), want);
    assert_eq!(printed(&[3, 0, 6, 1, 5, 2, 4]), want);
    let orders = [[2, 4, 6, 0, 1, 3, 5], [5, 3, 1, 6, 4, 2, 0]];
    let got: Vec<Vec<String>> = std::thread::scope(|s| {
        let hs: Vec<_> = orders.iter().map(|o| s.spawn(move || printed(o))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for g in got {
        assert_eq!(g, want);
    }
    insta::assert_snapshot!(want.join("\n"), @r"
    3*i*m - n*y + 3*j + x
    x*x - y*y + (m*n) // 4
    y*((j*n + i) % 8) + min(n, max(x, y))
    2*m*n*x*y - 2*x
    (y + 3) // 4
    3*i != j or m == n - 1 and 2*x <= y - 1
    -x*x*y + x*y*y - x // y + y // x
    ");
}
