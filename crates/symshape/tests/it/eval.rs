//! Binding, checked evaluation, partial binding, solving and compiled programs.

use symshape::{Bindings, Expr, Program, Scope};

use crate::{std_scope, table};

/// Binds `n=16, m=3, x=-7, w=5` in the standard scope with `assumptions`, then
/// evaluates each input.
fn check(assumptions: &[&str], inputs: &[&str]) -> String {
    let mut cx = std_scope();
    for a in assumptions {
        cx.assume_str(a).expect(a);
    }
    let mut b = Bindings::new();
    for (name, v) in [("n", 16), ("m", 3), ("x", -7), ("w", 5)] {
        cx.bind(&mut b, name, v).expect(name);
    }
    table(inputs, |s| Ok(cx.eval(cx.parse_expr(s)?, &b)?.to_string()))
}

#[test]
fn evaluation() {
    let out = check(
        &[],
        &[
            "n*m + 1",
            "x // 2",
            "x % 2",
            "x % -3",
            "x // -3",
            "cdiv(x, 2)",
            "cdiv(n, w)",
            "min(x, n, m)",
            "max(x, n, m)",
            "x // (n - 16)",
            "x % (m - 3)",
            "cdiv(x, m - 3)",
            "k + 1",
            "x * 4611686018427387904",
            "n*9223372036854775807",
            "9223372036854775807 + n",
            "-9223372036854775807 - n",
            "170141183460469231731687303715884105727 // 170141183460469231731687303715884105727",
        ],
    );
    insta::assert_snapshot!("evaluation", out);
}

#[test]
fn binding_errors() {
    let mut cx = std_scope();
    cx.assume_str("n % 8 == 0").unwrap();
    cx.assume_str("n <= m").unwrap();
    let attempt = |pairs: &[(&str, i64)]| -> String {
        let mut b = Bindings::new();
        for (name, v) in pairs {
            if let Err(e) = cx.bind(&mut b, name, *v) {
                return format!("error: {e}");
            }
        }
        match cx.check(&b) {
            Ok(()) => format!("ok: {b}"),
            Err(e) => format!("error: {e}"),
        }
    };
    let cases: &[&[(&str, i64)]] = &[
        &[("n", 16), ("m", 32)],
        &[("n", 5000)],
        &[("n", 0)],
        &[("n", 7)],
        &[("n", 16), ("m", 3)],
        &[("q", 1)],
        &[("b", 12)],
        &[("b", 16)],
        &[("n", 8), ("i", 8)],
        &[("n", 8), ("i", 7)],
        &[("i", 4095)],
        &[("i", 4096)],
    ];
    let out: String = cases
        .iter()
        .map(|c| format!("{c:?} => {}\n", attempt(c)))
        .collect();
    insta::assert_snapshot!("binding_errors", out);
}

#[test]
fn eval_errors_name_what_failed() {
    let cx = std_scope();
    let b = Bindings::new();
    let e = cx.parse_expr("n + 1").unwrap();
    insta::assert_snapshot!(e.eval(&b).unwrap_err().to_string(), @"eval: symbol `n` is unbound");
    let n = cx.symbol("n").unwrap();
    let mut b = Bindings::new();
    insta::assert_snapshot!(b.set(n * 2, 3).unwrap_err().to_string(), @"bind: expected a symbol, found `2*n`");
    b.set(n, 4).unwrap();
    insta::assert_snapshot!(b.to_string(), @"n = 4");
}

#[test]
fn partial_binding() {
    let mut cx = std_scope();
    cx.assume_str("j <= 3").unwrap();
    let mut b = Bindings::new();
    cx.bind(&mut b, "m", 4).unwrap();
    cx.bind(&mut b, "x", 10).unwrap();
    let out = table(
        &[
            "n*m + x",
            "(i*m + j) // m",
            "(i*4 + j) // 4",
            "(i*m + j) % 4",
            "x // 3 + n // m",
            "min(x, y)",
            "y % m",
        ],
        |s| Ok(cx.substitute(cx.parse_expr(s)?, &b).to_string()),
    );
    insta::assert_snapshot!("partial_binding", out);
}

#[test]
fn solving() {
    let mut cx = std_scope();
    cx.declare_str("s -inf..=inf").unwrap();
    cx.declare_str("t 0..=10").unwrap();
    let mut b = Bindings::new();
    cx.bind(&mut b, "m", 3).unwrap();
    let out = table(
        &[
            "2*s + 1 == 9",
            "3*s == -12",
            "2*s == 7",
            "s*m == 12",
            "s + m == m",
            "s*s == 4",
            "s + y == 3",
            "s <= 3",
            "m == 3",
            "m == 4",
            "t == 11",
            "4 == 2*t - 6",
        ],
        |s| {
            let (sym, v) = cx.solve_str(s, &b)?;
            Ok(format!("{sym} = {v}"))
        },
    );
    insta::assert_snapshot!("solving", out);
    // Through `solve` the equation is already canonical: `2*s == 7` parsed to `false`.
    let err = cx
        .solve(cx.parse_cond("2*s == 7").unwrap(), &b)
        .unwrap_err()
        .to_string();
    insta::assert_snapshot!(err, @"solve: `false`: it has no integral solution in range");
}

#[test]
fn compiled_program_matches_eval() {
    let mut cx = Scope::new();
    let n = cx.declare_str("n 1..=64").unwrap();
    let m = cx.declare_str("m 1..=64").unwrap();
    let x = cx.declare_str("x -64..=64").unwrap();
    let exprs: Vec<Expr> = [
        "n*m + x",
        "x // 4",
        "x % 8",
        "x // 3",
        "x % 5",
        "x // m",
        "x % m",
        "cdiv(x, m)",
        "min(n, x) + max(m, x)",
        "(n*m + x) // (n + 1)",
        "n*n*m - 3*x",
        "cdiv(x, 3)",
    ]
    .iter()
    .map(|s| cx.parse_expr(s).unwrap())
    .collect();
    let prog = Program::compile(&[n, m, x], &exprs).unwrap();
    let mut st = prog.state();
    for (nv, mv, xv) in [
        (1, 1, -64),
        (3, 7, -5),
        (64, 64, 64),
        (5, 2, 0),
        (9, 13, 17),
    ] {
        let mut b = Bindings::new();
        b.set(n, nv).unwrap();
        b.set(m, mv).unwrap();
        b.set(x, xv).unwrap();
        let want: Vec<i64> = exprs.iter().map(|e| e.eval(&b).unwrap()).collect();
        assert_eq!(
            prog.run(&mut st, &[nv, mv, xv]).unwrap(),
            want.as_slice(),
            "at n={nv} m={mv} x={xv}"
        );
    }
    let conds = [
        cx.parse_cond("x < n and m != 3").unwrap(),
        cx.parse_cond("x % 2 == 0 or n > 60").unwrap(),
    ];
    let prog = Program::compile_conds(&[n, m, x], &conds).unwrap();
    let mut st = prog.state();
    assert_eq!(prog.run(&mut st, &[5, 3, 1]).unwrap(), &[0, 0]);
    assert_eq!(prog.run(&mut st, &[5, 4, 2]).unwrap(), &[1, 1]);
}

#[test]
fn program_errors() {
    let mut cx = Scope::new();
    let n = cx.declare_str("n -inf..=inf").unwrap();
    let m = cx.declare_str("m -inf..=inf").unwrap();
    let out = table(
        &["n // m", "n * m", "n + 1 + m", "n*4611686018427387904"],
        |s| {
            let prog = Program::compile(&[n, m], &[cx.parse_expr(s)?])?;
            let mut st = prog.state();
            let r = prog.run(&mut st, &[i64::MAX, 0]);
            Ok(format!(
                "{:?}",
                r.map(|v| v.to_vec()).map_err(|e| e.to_string())
            ))
        },
    );
    insta::assert_snapshot!("program_errors", out);
    let e = Program::compile(&[n], &[n + m]).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"compile: symbol `m` is unbound");
    let prog = Program::compile(&[n, m], &[n + m]).unwrap();
    let mut st = prog.state();
    insta::assert_snapshot!(prog.run(&mut st, &[1]).unwrap_err().to_string(), @"run: expected one input per slot, found `1 inputs for 2 slots`");
}
