//! Binding, checked evaluation, partial binding, solving and compiled programs.

use symshape::{Bindings, Error, Expr, Program, ProgramState, Scope};

use crate::{bind_names, scope_of, std_scope, table, TextTable};

text_tables_test!(TABLES);

/// The value of `input` in `cx` with `n=16, m=3, x=-7, w=5` bound.
fn evaluated(cx: &Scope, input: &str) -> Result<String, Error> {
    let b = bind_names(cx, &[("n", 16), ("m", 3), ("x", -7), ("w", 5)]);
    Ok(cx.eval(cx.parse_expr(input)?, &b)?.to_string())
}

/// `input` in `cx` with `m=4, x=10` substituted.
fn partially_bound(cx: &Scope, input: &str) -> Result<String, Error> {
    let b = bind_names(cx, &[("m", 4), ("x", 10)]);
    Ok(cx.substitute(cx.parse_expr(input)?, &b).to_string())
}

/// The solution of the equation `input` in `cx` with `m=3` bound.
fn solved(cx: &Scope, input: &str) -> Result<String, Error> {
    let (sym, v) = cx.solve_str(input, &bind_names(cx, &[("m", 3)]))?;
    Ok(format!("{sym} = {v}"))
}

#[test]
fn solving_a_canonical_equation() {
    let cx = SOLVING.scope();
    // Through `solve` the equation is already canonical: `2*s == 7` parsed to `false`.
    let err = cx
        .solve(
            cx.parse_cond("2*s == 7").unwrap(),
            &bind_names(&cx, &[("m", 3)]),
        )
        .unwrap_err()
        .to_string();
    insta::assert_snapshot!(err, @"solve: `false`: it has no integral solution in range");
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

/// Each run of `prog` on `values` (in slot order) gives what evaluating `exprs` gives.
fn assert_runs_as_eval(prog: &Program, st: &mut ProgramState, exprs: &[Expr], runs: &[[i64; 3]]) {
    for values in runs {
        let mut b = Bindings::new();
        for (&s, &v) in prog.slots().iter().zip(values) {
            b.set(s, v).unwrap();
        }
        let want: Vec<i64> = exprs.iter().map(|e| e.eval(&b).unwrap()).collect();
        assert_eq!(
            prog.run(st, values).unwrap(),
            want.as_slice(),
            "at {values:?}"
        );
    }
}

#[test]
fn compiled_program_matches_eval() {
    let (cx, slots) = scope_of(&["n 1..=64", "m 1..=64", "x -64..=64"]);
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
    let prog = Program::compile(&slots, &exprs).unwrap();
    let mut st = prog.state();
    let runs = [
        [1, 1, -64],
        [3, 7, -5],
        [64, 64, 64],
        [5, 2, 0],
        [9, 13, 17],
    ];
    assert_runs_as_eval(&prog, &mut st, &exprs, &runs);
    let conds = [
        cx.parse_cond("x < n and m != 3").unwrap(),
        cx.parse_cond("x % 2 == 0 or n > 60").unwrap(),
    ];
    let prog = Program::compile_conds(&slots, &conds).unwrap();
    let mut st = prog.state();
    assert_eq!(prog.run(&mut st, &[5, 3, 1]).unwrap(), &[0, 0]);
    assert_eq!(prog.run(&mut st, &[5, 4, 2]).unwrap(), &[1, 1]);
}

/// A program of more registers than a state's small file (256) runs on the general one:
/// the same answers as `eval`, and errors naming the instruction that failed.
#[test]
fn programs_past_the_small_register_file_match_eval() {
    let (cx, slots) = scope_of(&["n -inf..=inf", "m 1..=64", "x -64..=64"]);
    let mut texts = Vec::new();
    for i in 1..=100 {
        texts.push(format!("(n + {i}) * m"));
        texts.push(format!("(x - {i}) // (m + {i})"));
        texts.push(format!("(x*{i}) % (m + {})", i + 1));
    }
    // Last, so that it is computed past the small file; it overflows for |n| >= 2.
    texts.push("n * 4611686018427387904".into());
    let exprs: Vec<Expr> = texts.iter().map(|t| cx.parse_expr(t).unwrap()).collect();
    let prog = Program::compile(&slots, &exprs).unwrap();
    assert!(prog.len() > 256, "{} instructions", prog.len());
    let mut st = prog.state();
    let runs = [
        [1, 1, -64],
        [-1, 7, -5],
        [0, 64, 64],
        [1, 2, 0],
        [-1, 13, 17],
    ];
    assert_runs_as_eval(&prog, &mut st, &exprs, &runs);
    let e = prog.run(&mut st, &[2, 1, 0]).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"run: `4611686018427387904*n` overflows i64");
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

/// The snapshotted tables of evaluation, partial binding and solving (`SOLVING`).
const TABLES: &[TextTable] = &[
    TextTable {
        name: "evaluation",
        declare: &[],
        assume: &[],
        render: evaluated,
        inputs: &[
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
    },
    TextTable {
        name: "partial_binding",
        declare: &[],
        assume: &["j <= 3"],
        render: partially_bound,
        inputs: &[
            "n*m + x",
            "(i*m + j) // m",
            "(i*4 + j) // 4",
            "(i*m + j) % 4",
            "x // 3 + n // m",
            "min(x, y)",
            "y % m",
        ],
    },
    SOLVING,
];

/// Equations solved for an unbounded `s` or a bounded `t`, with `m` bound.
const SOLVING: TextTable = TextTable {
    name: "solving",
    declare: &["s -inf..=inf", "t 0..=10"],
    assume: &[],
    render: solved,
    inputs: &[
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
};

/// `Program::run_checked` as a caller would get it by hand: a value outside its
/// declared numeric range fails alone (`Bindings::set` on empty bindings); then
/// every value is set (each symbol before the symbols of its bounds, so only
/// declared ranges are checked on the way), `Scope::check`, and each output
/// evaluated with `Expr::eval`.
fn by_hand(
    cx: &Scope,
    slots: &[Expr],
    outputs: &[Expr],
    values: &[i64],
) -> Result<Vec<i64>, symshape::Error> {
    for (&s, &v) in slots.iter().zip(values) {
        Bindings::new().set(s, v)?;
    }
    let mut b = Bindings::new();
    for s in cx.symbols().iter().rev() {
        if let Some(k) = slots.iter().position(|x| x == s) {
            b.set(*s, values[k])?;
        }
    }
    cx.check(&b)?;
    outputs.iter().map(|e| e.eval(&b)).collect()
}

/// Compiles `outputs` over `n, i, j, x` of a scope with expression bounds and
/// `assumptions`, runs it checked on each value list, and compares with `by_hand`.
fn check_run(assumptions: &[&str], outputs: &[&str], runs: &[[i64; 4]]) -> String {
    let mut cx = Scope::new();
    let n = cx.declare_str("n 1..=16").expect("n");
    let i = cx.declare_str("i 0..n").expect("i");
    let j = cx.declare_str("j i..=n + 2").expect("j");
    let x = cx.declare_str("x -inf..=inf").expect("x");
    for a in assumptions {
        cx.assume_str(a).expect(a);
    }
    let outputs: Vec<Expr> = outputs.iter().map(|o| cx.parse_expr(o).expect(o)).collect();
    let slots = [n, i, j, x];
    let prog = Program::compile_checked(&cx, &slots, &outputs).expect("compile");
    let mut st = prog.state();
    let mut out = String::new();
    for vals in runs {
        let got = prog.run_checked(&mut st, vals).map(<[i64]>::to_vec);
        assert_eq!(got, by_hand(&cx, &slots, &outputs, vals), "values {vals:?}");
        match got {
            Ok(v) => out += &format!("{vals:?} => {v:?}\n"),
            Err(e) => out += &format!("{vals:?} => error: {e}\n"),
        }
    }
    out
}

#[test]
fn checked_programs() {
    let out = check_run(
        &[
            "n % 4 == 0 or i == 0",
            "i + j != 7",
            "x*x*x <= 1000000000000000000000 or n == 4",
        ],
        &["n*x + j", "i - j"],
        &[
            [8, 3, 5, 2],
            [8, 8, 9, 0],
            [8, 3, 2, 0],
            [8, 3, 11, 0],
            [5, 2, 3, 0],
            [5, 0, 3, 0],
            [8, 3, 4, 0],
            [8, 1, 2, i64::MAX],
            [4, 1, 2, i64::MAX],
            [17, 0, 0, 0],
            [8, 0, 0, i64::MIN],
        ],
    );
    insta::assert_snapshot!("checked_programs", out);
}

#[test]
fn checked_runs_take_a_state_of_another_program() {
    let mut cx = Scope::new();
    let n = cx.declare_str("n 1..=16").unwrap();
    // A constant beyond i64 in an assumption: every run takes the exact path.
    cx.assume_str("100000000000000000000*n*n + n != 1600000000000000000004")
        .unwrap();
    let prog = Program::compile_checked(&cx, &[n], &[n + 1, n * 2]).unwrap();
    let other = Program::compile(&[n], &[n]).unwrap();
    let mut st = other.state();
    assert_eq!(prog.run_checked(&mut st, &[3]).unwrap(), &[4, 6]);
    let e = prog.run_checked(&mut st, &[4]).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"bind: assumption `100000000000000000000*n*n + n != 1600000000000000000004` is violated by n = 4");
}

#[test]
fn checked_programs_refuse_repeated_slots() {
    let n = Expr::symbol("n").unwrap();
    let e = Program::compile_checked(&Scope::new(), &[n, n], &[n]).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"compile: expected distinct slots, found `n`");
}

proptest::proptest! {
    #[test]
    fn run_checked_equals_checking_by_hand(
        assumption_picks in proptest::collection::vec(0usize..6, 0..3),
        runs in proptest::collection::vec([-2i64..=20, -2i64..=20, -2i64..=22, -40i64..=40], 1..8),
    ) {
        const POOL: [&str; 6] = [
            "n % 4 == 0 or i == 0",
            "i + j != 7",
            "x != 3 or j <= n",
            "n*x <= 50 or i > 2",
            "not (i == 1 and x == -1)",
            "j - i <= 3",
        ];
        let mut cx = Scope::new();
        let n = cx.declare_str("n 1..=16").expect("n");
        let i = cx.declare_str("i 0..n").expect("i");
        let j = cx.declare_str("j i..=n + 2").expect("j");
        let x = cx.declare_str("x -inf..=inf").expect("x");
        for &a in &assumption_picks {
            let _ = cx.assume_str(POOL[a]);
        }
        let outputs = [n * x + j, (x + i).floor_div(n), i - j];
        let slots = [j, x, n, i];
        let prog = Program::compile_checked(&cx, &slots, &outputs).expect("compile");
        let mut st = prog.state();
        for r in &runs {
            let vals = [r[2], r[3], r[0], r[1]];
            let got = prog.run_checked(&mut st, &vals).map(<[i64]>::to_vec);
            proptest::prop_assert_eq!(got, by_hand(&cx, &slots, &outputs, &vals), "values {:?}", vals);
        }
    }
}

/// A wire sum is canonicalised once: the same handle as adding its terms one by
/// one (the obviously-right reference), and a sum of `MAX_TERMS` terms loads in
/// linear time (it used to re-sort the growing sum per term: 4 s to load).
#[cfg(feature = "serde")]
mod wire_sums {
    use proptest::prelude::*;
    use symshape::{Expr, Scope};

    fn pool() -> Vec<Expr> {
        let mut cx = Scope::new();
        let x = cx.declare_str("x -20..=20").expect("x");
        let y = cx.declare_str("y 0..=9").expect("y");
        vec![
            x,
            y,
            x * y,
            x.floor_div(4),
            (x + 1).floor_div(4),
            x.floor_mod(4),
            x.min(y),
            x + 2 * y,
            (x * y).floor_div(2),
        ]
    }

    /// The wire text of `c + sum(k * pool[i])`, each pool entry its own node list entry.
    fn wire(pool: &[Expr], terms: &[(usize, i64)], c: i64) -> String {
        let json = serde_json::to_string(&pool.to_vec()).expect("ser");
        let exprs: Vec<serde_json::Value> = serde_json::from_str(&json).expect("json");
        // Concatenate the pool's node lists, shifting each one's indices.
        let mut nodes: Vec<serde_json::Value> = Vec::new();
        let mut roots = Vec::new();
        for e in exprs {
            let base = nodes.len() as u64;
            let shift = |v: &mut serde_json::Value| shift_indices(v, base);
            for mut n in e["nodes"].as_array().expect("nodes").clone() {
                shift(&mut n);
                nodes.push(n);
            }
            roots.push(base + e["root"].as_u64().expect("root"));
        }
        let terms: Vec<serde_json::Value> = terms
            .iter()
            .map(|&(i, k)| serde_json::json!([roots[i], k.to_string()]))
            .collect();
        nodes.push(serde_json::json!({"sum": {"terms": terms, "constant": c.to_string()}}));
        serde_json::json!({"nodes": nodes, "root": nodes.len() - 1}).to_string()
    }

    /// Adds `base` to every node index inside a wire node.
    fn shift_indices(n: &mut serde_json::Value, base: u64) {
        let Some((kind, body)) = n.as_object_mut().and_then(|o| o.iter_mut().next()) else {
            return;
        };
        let bump = |v: &mut serde_json::Value| {
            if let Some(i) = v.as_u64() {
                *v = serde_json::json!(i + base);
            }
        };
        match kind.as_str() {
            "sym" => {
                bump(&mut body["lo"]);
                bump(&mut body["hi"]);
            }
            "sum" => {
                for t in body["terms"].as_array_mut().expect("terms") {
                    bump(&mut t[0]);
                }
            }
            "prod" => {
                for t in body.as_array_mut().expect("factors") {
                    bump(&mut t[0]);
                }
            }
            "cmp" => bump(&mut body[0]),
            "const" | "bool" => {}
            _ => {
                for v in body.as_array_mut().expect("arguments") {
                    bump(v);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn wire_sum_equals_term_by_term_sum(
            terms in prop::collection::vec((0usize..9, -8i64..=8), 0..10),
            c in -10i64..=10,
        ) {
            let pool = pool();
            let reference = terms
                .iter()
                .fold(Expr::from(c), |acc, &(i, k)| acc + pool[i] * k);
            let loaded: Expr = serde_json::from_str(&wire(&pool, &terms, c)).expect("load");
            prop_assert_eq!(loaded, reference, "{}", reference);
        }
    }

    #[test]
    fn a_sum_of_max_terms_loads() {
        // Loading canonicalises the sum once (rebuilding it term by term was
        // quadratic: seconds for this input); its cost is not asserted here.
        let n = 4096;
        let mut nodes = vec![r#"{"const":"0"}"#.to_string()];
        for i in 0..n {
            nodes.push(format!(
                r#"{{"sym":{{"name":"s{i}","lo":0,"hi":null,"multiple_of":1}}}}"#
            ));
        }
        for i in 1..=n {
            nodes.push(format!(r#"{{"prod":[[{i},1],[{},1]]}}"#, i % n + 1));
        }
        let terms: Vec<String> = (n + 1..=2 * n).map(|i| format!(r#"[{i},"1"]"#)).collect();
        nodes.push(format!(
            r#"{{"sum":{{"terms":[{}],"constant":"0"}}}}"#,
            terms.join(",")
        ));
        let json = format!(r#"{{"nodes":[{}],"root":{}}}"#, nodes.join(","), 2 * n + 1);
        let e: Expr = serde_json::from_str(&json).expect("load");
        assert_eq!(e.symbols().len(), n);
    }
}
