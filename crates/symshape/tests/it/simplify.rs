//! Canonical forms and simplification rules, as text.

use symshape::{Error, Expr, Scope, SymbolSpec};

use crate::{parsed_cond, std_scope, TextTable};

text_tables_test!(TABLES);

/// Canonical form of `input` as built (context-free) and after simplification in `cx`.
fn canonical_form(cx: &Scope, input: &str) -> Result<String, Error> {
    let e = cx.parse_expr(input)?;
    let simp = cx.simplify(e);
    Ok(if simp == e {
        e.to_string()
    } else {
        format!("{e}  |scope| {simp}")
    })
}

#[test]
fn operators_match_parser() {
    let cx = std_scope();
    let s = |n: &str| cx.symbol(n).expect(n);
    let (n, m, x) = (s("n"), s("m"), s("x"));
    assert_eq!(n * 2 + 1, cx.parse_expr("2*n + 1").unwrap());
    assert_eq!(1 + 2 * n - m, cx.parse_expr("2*n - m + 1").unwrap());
    assert_eq!(
        x.floor_div(4).floor_mod(3),
        cx.parse_expr("x // 4 % 3").unwrap()
    );
    assert_eq!(x.ceil_div(m), cx.parse_expr("cdiv(x, m)").unwrap());
    assert_eq!(x.min(n).max(m), cx.parse_expr("max(min(x, n), m)").unwrap());
    assert_eq!(
        Expr::min_of(&[x, n, m]),
        Some(cx.parse_expr("min(m, n, x)").unwrap())
    );
    assert_eq!(
        (x.lt(n) & !x.equals(m)).to_string(),
        "m != x and x <= n - 1"
    );
    let mut acc = Expr::from(0);
    acc += x;
    acc *= 3;
    acc -= 1;
    assert_eq!(acc.to_string(), "3*x - 1");
    assert_eq!([x, n].into_iter().sum::<Expr>(), x + n);
    assert_eq!(Expr::from(6).as_i64(), Some(6));
    assert_eq!(x.as_i64(), None);
    assert_eq!(x.symbol_name(), Some("x"));
}

#[test]
fn handles_are_shared_across_threads() {
    let here = (SymbolSpec::new("t").range(0, 9).build().unwrap() * 3 + 1).to_string();
    let there = std::thread::spawn(|| {
        let t = SymbolSpec::new("t").range(0, 9).build().unwrap();
        t * 3 + 1
    })
    .join()
    .unwrap();
    let t = SymbolSpec::new("t").range(0, 9).build().unwrap();
    assert_eq!(there, t * 3 + 1);
    assert_eq!(there.to_string(), here);
}

#[test]
fn handles_and_scopes_are_send_and_sync() {
    fn check<T: Send + Sync + Copy + Eq + std::hash::Hash>() {}
    fn check_owned<T: Send + Sync + Clone>() {}
    check::<Expr>();
    check::<symshape::Cond>();
    check_owned::<symshape::Scope>();
    check_owned::<symshape::Program>();
    check_owned::<symshape::Bindings>();
}

#[test]
fn structure_is_inspectable() {
    use symshape::{CmpOp, CondKind, ExprKind};
    let cx = std_scope();
    let (i, j, m) = (
        cx.symbol("i").unwrap(),
        cx.symbol("j").unwrap(),
        cx.symbol("m").unwrap(),
    );
    let off = cx.parse_expr("i*m + 4*j + 7").unwrap();
    assert_eq!(off.coefficient_of(j).to_string(), "4");
    assert_eq!(off.coefficient_of(i).to_string(), "0");
    assert_eq!(off.coefficient_of(i * m).to_string(), "1");
    let ExprKind::Sum { terms, constant } = off.kind() else {
        panic!("{off} is a sum")
    };
    let text: Vec<String> = terms.iter().map(|(m, k)| format!("{k}*({m})")).collect();
    assert_eq!(
        format!("{} + {constant}", text.join(" + ")),
        "1*(i*m) + 4*(j) + 7"
    );
    assert_eq!(i.kind(), ExprKind::Symbol("i"));
    assert_eq!((i * m).kind(), ExprKind::Product(vec![(i, 1), (m, 1)]));
    let c = cx.parse_cond("i < m").unwrap();
    assert_eq!(c.kind(), CondKind::Compare(i - m + 1, CmpOp::Le));
}

#[test]
fn concurrent_builders_agree_on_handles() {
    // Threads race to intern the same new expressions; each must get the one handle.
    let build = |t: i64| {
        let x = SymbolSpec::new("race").range(-50, 50).build().unwrap();
        (0..200)
            .map(|k| ((x + k) * (x - t.min(0) - k)).floor_div(k + 2))
            .collect::<Vec<Expr>>()
    };
    let handles: Vec<_> = (0..4)
        .map(|t| std::thread::spawn(move || build(t)))
        .collect();
    let results: Vec<Vec<Expr>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let x = SymbolSpec::new("race").range(-50, 50).build().unwrap();
    for r in &results {
        assert_eq!(r, &results[0]);
    }
    let here: Expr = ((x + 7) * (x - 7)).floor_div(9);
    assert_eq!(here, results[0][7]);
    assert_eq!(here.to_string(), "(race*race + 5) // 9 - 6");
}

/// Divisors of several terms: one step of polynomial division, kept only when the
/// remainder is shown to lie in `0..divisor`.
#[test]
fn polynomial_divisor_cancellation() {
    let mut cx = crate::std_scope();
    cx.declare_str("p 0..n + 1").unwrap();
    cx.declare_str("q 0..=2*m").unwrap();
    let out = crate::table(
        &[
            "(i*(n + 1) + p) // (n + 1)",
            "(i*(n + 1) + p) % (n + 1)",
            "(i*(n + 1) + p + 1) % (n + 1)",
            "(3*i*(n + 1) + p) // (n + 1)",
            "(i*(2*m + 1) + q) // (2*m + 1)",
            "(i*(2*m + 1) + q) % (2*m + 1)",
            "(i*(n*m + m) + j) // (n*m + m)",
            "(x*(n + 1) + p) // (n + 1)",
            "(i*(n - 1) + p) // (n - 1)",
        ],
        |s| Ok(cx.simplify(cx.parse_expr(s)?).to_string()),
    );
    insta::assert_snapshot!(out, @r"
    (i*(n + 1) + p) // (n + 1) => i
    (i*(n + 1) + p) % (n + 1) => p
    (i*(n + 1) + p + 1) % (n + 1) => (i*n + i + p + 1) % (n + 1)
    (3*i*(n + 1) + p) // (n + 1) => 3*i
    (i*(2*m + 1) + q) // (2*m + 1) => i
    (i*(2*m + 1) + q) % (2*m + 1) => q
    (i*(n*m + m) + j) // (n*m + m) => i
    (x*(n + 1) + p) // (n + 1) => x
    (i*(n - 1) + p) // (n - 1) => (i*n - i + p) // (n - 1)
    ");
}

/// The snapshotted tables of canonical forms.
const TABLES: &[TextTable] = &[
    TextTable {
        name: "canonical_polynomials",
        declare: &[],
        assume: &[],
        render: canonical_form,
        inputs: &[
            "(n + 1) * (n - 1)",
            "n*n - 1",
            "2*(x + y) - x",
            "x + 2*y",
            "(x - y) * (x + y) + y*y",
            "3 - x + 2*x - 3",
            "(x + 1)*(x + 1)*(x + 1)",
            "y*x*2 + x*y",
            "-(x - y)",
            "x*0 + 5",
            "n*m*k - k*m*n",
            "(n // 2)*(n // 2) + 2*n",
        ],
    },
    TextTable {
        name: "division_rules",
        declare: &[],
        assume: &[],
        render: canonical_form,
        inputs: &[
            "(4*n + 3) // 4",
            "(4*x + 3) // 4",
            "(8*x) % 4",
            "(8*x + 5) % 4",
            "(x - 1) % 4",
            "(x - 1) // 4",
            "(6*x + 4) // 4",
            "(6*x + 4) % 4",
            "(x // 4) // 3",
            "(x % 8) % 4",
            "(x % 4) % 8",
            "x // -3",
            "x % -3",
            "x // 1",
            "x % 1",
            "x // 0",
            "x % 0",
            "7 // -2",
            "-7 % 2",
            "z % 200",
            "(z + 100) % 201",
            "(z + 100) // 201",
            "b % 8",
            "(b + 3) // 4",
            "b // 8 * 8",
            "cdiv(x, 4)",
            "cdiv(n, m)",
            "cdiv(x, y)",
            "cdiv(x, -4)",
        ],
    },
    TextTable {
        name: "symbolic_divisor_cancellation",
        declare: &[],
        assume: &[],
        render: canonical_form,
        inputs: &[
            "(i*m + j) // m",
            "(i*m + j) % m",
            "(i*m + j + 1) // m",
            "(2*i*m + j) // m",
            "(i*m*w + j*w) // (m*w)",
            "(x*w + 3) // w",
            "(x*w) // w",
            "(x*y) // y",
            "j // m",
            "j % m",
            "n // n",
            "(i*m + j) // -m",
        ],
    },
    TextTable {
        name: "divisor_split_at_a_common_factor",
        declare: &["h 0..12*n", "r 0..64*m", "p 0..768"],
        assume: &[],
        render: canonical_form,
        inputs: &[
            "(64*h*m + r) // (768*m)",
            "(64*h*m + r) % (768*m)",
            "(64*h*m + r + 64*m) // (768*m)",
            "(64*h*m + r + 1) // (768*m)",
            "(768*h + p) // (768*n)",
            "(768*h + p) % (768*n)",
            "(i*m + j) // (m*n)",
            "(n*m - 1) // m",
            "(n*m - 1) % m",
            "(n*m - m) // m",
            "(n*m - m - 1) // m",
        ],
    },
    TextTable {
        name: "min_max_rules",
        declare: &[],
        assume: &["n <= m"],
        render: canonical_form,
        inputs: &[
            "max(n, 1)",
            "min(n, 0)",
            "max(x, 1)",
            "min(x, y, x)",
            "min(min(x, 3), min(y, 5))",
            "max(n, m)",
            "min(x + 1, x + 3)",
            "max(i, n)",
            "min(j, m - 1)",
            "max(z, 200)",
        ],
    },
    TextTable {
        name: "scope_assumptions_simplify",
        declare: &[],
        assume: &["n % 8 == 0", "x >= 0", "x <= 9", "y == 3"],
        render: canonical_form,
        inputs: &[
            "n % 8",
            "(n + 5) // 8",
            "(n + 7) // 8 * 8",
            "n % 4",
            "x % 10",
            "x // 10",
            "max(x, 0)",
            "y * x",
            "(y + 1) % 4",
        ],
    },
    TextTable {
        name: "conditions_canonical",
        declare: &[],
        assume: &[],
        render: parsed_cond,
        inputs: &[
            "x < y",
            "y > x",
            "x + 1 <= y",
            "x >= 1",
            "x > -3",
            "2*x + 2 == 4*y",
            "2*x == 4*y + 1",
            "2*x <= 5",
            "x != y",
            "not (x < y)",
            "not (x == y and y <= 3)",
            "x < y < 7",
            "n >= 1",
            "n > 4096",
            "true and x < y",
            "false or x < y",
            "x < y or x < y",
            "z % 2 == 3",
        ],
    },
];
