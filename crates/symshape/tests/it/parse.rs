//! Parsing: error messages, declarations and Display round-trips.

use symshape::{Cond, Expr, Scope};

use crate::{parsed_cond, parsed_expr, std_scope, table, TextTable};

text_tables_test!(TABLES);

#[test]
fn declaration_errors() {
    let out = table(
        &[
            "n 1..=4096",
            "n 1..=8",
            "m 5..=4",
            "and 0..=3",
            "9a 0..=3",
            "p 1..=7 multiple of 8",
            "q 0..=64 multiple of 0",
            "r 0..=q",
            "s 0 4",
            "t 0..=n multiple of x",
            "u -inf..=inf",
            "v 0..n",
            "idx 0..n*2",
        ],
        {
            let cx = std::cell::RefCell::new(Scope::new());
            move |s| {
                let mut cx = cx.borrow_mut();
                let e = cx.declare_str(s)?;
                let spec = e.symbol_spec().expect("a symbol");
                Ok(format!("{e}: {}", e.range())
                    + if spec.name() == e.to_string() {
                        ""
                    } else {
                        " (renamed?)"
                    })
            }
        },
    );
    insta::assert_snapshot!("declaration_errors", out);
}

#[test]
fn assumption_errors() {
    let mut cx = std_scope();
    let out = table(
        &[
            "n > 5000",
            "x < 3",
            "x > 5",
            "n",
            "x == x",
            "n % 8 == 0",
            "n == 3",
        ],
        |s| {
            cx.assume_str(s)?;
            Ok("ok".into())
        },
    );
    insta::assert_snapshot!("assumption_errors", out);
}

#[test]
fn display_round_trips() {
    let cx = std_scope();
    for s in [
        "(n + 1) * (n - 1) + m // 3",
        "-x + 3",
        "-(x*y) - 4*x",
        "x // (n*m) + x % (m + 1)",
        "cdiv(x, y) * 2",
        "min(x, y - 1, 3) * max(n, 2*m)",
        "(x % 4) * (x // 4) * (x // 4)",
        "-7",
        "x * -3",
        "-(x // 3)",
    ] {
        let e = cx.parse_expr(s).unwrap();
        let back = cx.parse_expr(&e.to_string()).unwrap();
        assert_eq!(back, e, "{s} printed as {e}");
    }
    for s in [
        "x < y and (y <= 3 or x == 2)",
        "not (x < 2 or y != 5)",
        "n >= 2",
        "x != y",
    ] {
        let c = cx.parse_cond(s).unwrap();
        assert_eq!(
            cx.parse_cond(&c.to_string()).unwrap(),
            c,
            "{s} printed as {c}"
        );
    }
    // Without a scope, names become symbols with the default range.
    let e: Expr = "a*b + 2*a // 3".parse().unwrap();
    assert_eq!(e.to_string().parse::<Expr>().unwrap(), e);
    let c: Cond = "a < b".parse().unwrap();
    insta::assert_snapshot!(c.to_string(), @"a <= b - 1");
}

/// The snapshotted tables of parse errors, for expressions and for conditions.
const TABLES: &[TextTable] = &[
    TextTable {
        name: "parse_errors",
        declare: &[],
        assume: &[],
        render: parsed_expr,
        inputs: &[
            "",
            "2*n + 1 ==",
            "(n",
            "n)",
            "foo(1)",
            "n +* 2",
            "n $ 2",
            "q + 1",
            "n < m",
            "(n < m) + 1",
            "min()",
            "cdiv(n)",
            "cdiv(n, m, 1)",
            "not n",
            "n and m < 3",
            "min",
            "n 2",
            "1__000 + n",
        ],
    },
    TextTable {
        name: "parse_cond_errors",
        declare: &[],
        assume: &[],
        render: parsed_cond,
        inputs: &["n", "n < m and 3", "not", "n < m or"],
    },
];
