//! Serde round trips (feature `serde`): a loaded expression or condition is the very
//! handle that building it gives, and malformed input is an error.

use std::fmt::Display;

use insta::assert_snapshot;
use num_bigint::BigInt;
use proptest::prelude::*;

use crate::strategies::random_tree;
use crate::tree::{build, T};
use crate::{scope_of, TextTable};
use symshape::{Cond, Error, Expr, Scope, SymbolSpec};

/// Serializes to JSON, loads it back, and returns the handle loaded.
fn round_trip_expr(e: Expr) -> Result<Expr, String> {
    let json = serde_json::to_string(&e).map_err(|err| err.to_string())?;
    serde_json::from_str(&json).map_err(|err| format!("{err} in {json}"))
}

/// Serializes a condition to JSON, loads it back, and returns the handle loaded.
fn round_trip_cond(c: Cond) -> Result<Cond, String> {
    let json = serde_json::to_string(&c).map_err(|err| err.to_string())?;
    serde_json::from_str(&json).map_err(|err| format!("{err} in {json}"))
}

/// Describes the outcome of a round trip of `value`: `same handle` or the difference.
fn describe_round_trip<V: PartialEq + Display>(value: V, back: Result<V, String>) -> String {
    match back {
        Ok(back) if back == value => format!("{value}  [same handle]"),
        Ok(back) => format!("{value}  [DIFFERENT: {back}]"),
        Err(err) => format!("{value}  [FAILED: {err}]"),
    }
}

/// Parses the expression `input` in `cx`, round-trips it, and describes the outcome.
fn check_expr(cx: &Scope, input: &str) -> Result<String, Error> {
    let e = cx.parse_expr(input)?;
    Ok(describe_round_trip(e, round_trip_expr(e)))
}

/// Parses the condition `input` in `cx`, round-trips it, and describes the outcome.
fn check_cond(cx: &Scope, input: &str) -> Result<String, Error> {
    let c = cx.parse_cond(input)?;
    Ok(describe_round_trip(c, round_trip_cond(c)))
}

text_tables_test!(TABLES);

/// The snapshotted tables of round trips: parsed in the standard scope with a few more
/// symbols, serialized and loaded back.
const TABLES: &[TextTable] = &[
    TextTable {
        name: "expression_round_trips",
        declare: &["e 2..m", "q -m..=n", "h 0..i"],
        assume: &[],
        render: check_expr,
        inputs: &[
            "0",
            "-7",
            "9223372036854775807",
            "-9223372036854775808",
            "123456789012345678901234567890123456789 * n - 98765432109876543210987654321",
            "n",
            "i",
            "h",
            "b",
            "e + q",
            "i*m + j",
            "(i*m + j) // m",
            "(n + 1) * (n - 1) * m",
            "n*n*n*m - 3*n*m + 2",
            "x // 7 + y % 5",
            "(x*y + z) % (n + 1)",
            "cdiv(x, y)",
            "cdiv(n, 8) * 8",
            "min(x, y, z + 1)",
            "max(n, m) - min(n, m)",
            "max(x // 3, y) * min(z % 4, w)",
            "(x // n) // m + ((x % n) % m)",
            "x // 0",
        ],
    },
    TextTable {
        name: "condition_round_trips",
        declare: &["h 0..i"],
        assume: &[],
        render: check_cond,
        inputs: &[
            "true",
            "false",
            "x < y",
            "n <= m",
            "x == 3",
            "x != y + 1",
            "i < n",
            "h >= 1",
            "x < y and y < z",
            "x < y or x > y + 3",
            "not (x < y and z != 0)",
            "(x % 4 == 0 or y // 3 > z) and not (min(x, y) >= w)",
            "170141183460469231731687303715884105727 * x < y",
        ],
    },
];

/// The wire form is readable and free of process-local ids: this text, written once,
/// must load to the handle built in this process.
#[test]
fn wire_form_is_stable_across_processes() {
    let n = SymbolSpec::new("n").range(1, 4096).build().unwrap();
    let i = SymbolSpec::new("i").below(n).build().unwrap();
    let e = i * 4 + 1;
    let json = serde_json::to_string(&e).unwrap();
    assert_snapshot!(json, @r#"{"nodes":[{"const":"0"},{"const":"1"},{"const":"4096"},{"sym":{"name":"n","lo":1,"hi":2,"multiple_of":1}},{"sum":{"terms":[[3,"1"]],"constant":"-1"}},{"sym":{"name":"i","lo":0,"hi":4,"multiple_of":1}},{"sum":{"terms":[[5,"4"]],"constant":"1"}}],"root":6}"#);
    // Written by hand in another node order: loading does not depend on the order.
    let written = r#"{"nodes":[{"const":"1"},{"const":"4096"},{"sym":{"name":"n","lo":0,"hi":1,"multiple_of":1}},{"const":"0"},{"sum":{"terms":[[2,"1"]],"constant":"-1"}},{"sym":{"name":"i","lo":3,"hi":4,"multiple_of":1}},{"sum":{"terms":[[5,"4"]],"constant":"1"}}],"root":6}"#;
    let loaded: Expr = serde_json::from_str(written).unwrap();
    assert_eq!(loaded, e);
    // A symbol's declaration is part of its identity: another range is another symbol.
    let other = r#"{"nodes":[{"const":"0"},{"const":"9"},{"sym":{"name":"i","lo":0,"hi":1,"multiple_of":1}}],"root":2}"#;
    let loaded: Expr = serde_json::from_str(other).unwrap();
    assert_ne!(loaded, i);
    assert_eq!(loaded, SymbolSpec::new("i").range(0, 9).build().unwrap());
}

#[test]
fn invalid_handles_do_not_serialize() {
    let x = SymbolSpec::new("x").lo(None).hi(None).build().unwrap();
    let mut e = x;
    for _ in 0..300 {
        e = e * e + 1;
    }
    assert_snapshot!(serde_json::to_string(&e).unwrap_err().to_string(), @"serialize: cannot encode an invalid expression: limit: monomial of degree higher than 256");
}

#[test]
fn malformed_input_is_an_error() {
    let deep: String = {
        // 250 nested floor divisions: past MAX_DEPTH.
        let mut nodes = vec![
            r#"{"sym":{"name":"x","lo":null,"hi":null,"multiple_of":1}}"#.to_string(),
            r#"{"sym":{"name":"y","lo":null,"hi":null,"multiple_of":1}}"#.to_string(),
        ];
        for k in 0..250 {
            let prev = nodes.len() - 1;
            nodes.push(format!(
                r#"{{"sum":{{"terms":[[{prev},"1"],[1,"1"]],"constant":"{k}"}}}}"#
            ));
            let sum = nodes.len() - 1;
            nodes.push(format!(
                r#"{{"sym":{{"name":"d{k}","lo":null,"hi":null,"multiple_of":1}}}}"#
            ));
            nodes.push(format!(r#"{{"floor_div":[{sum},{}]}}"#, sum + 1));
        }
        format!(
            r#"{{"nodes":[{}],"root":{}}}"#,
            nodes.join(","),
            nodes.len() - 1
        )
    };
    let huge = format!(
        r#"{{"nodes":[{{"const":"{}"}}],"root":0}}"#,
        "9".repeat(1300)
    );
    let bits_over = format!(
        r#"{{"nodes":[{{"const":"{}"}}],"root":0}}"#,
        "9".repeat(1234)
    );
    let largest = -((BigInt::from(1) << 4096usize) - BigInt::from(1));
    let largest = format!(r#"{{"nodes":[{{"const":"{largest}"}}],"root":0}}"#);
    let x = r#"{"sym":{"name":"x","lo":null,"hi":null,"multiple_of":1}}"#;
    let cases: Vec<(&str, String)> = vec![
        ("not json", "{".into()),
        ("empty object", "{}".into()),
        ("no nodes", r#"{"nodes":[],"root":0}"#.into()),
        ("root past the end", format!(r#"{{"nodes":[{x}],"root":1}}"#)),
        ("forward reference", r#"{"nodes":[{"floor_div":[1,1]},{"const":"2"}],"root":0}"#.into()),
        ("self reference", r#"{"nodes":[{"min":[0]}],"root":0}"#.into()),
        ("negative index", r#"{"nodes":[{"min":[-1]}],"root":0}"#.into()),
        ("unknown node", r#"{"nodes":[{"pow":[0,1]}],"root":0}"#.into()),
        ("unknown field", r#"{"nodes":[],"root":0,"ids":[]}"#.into()),
        ("bad constant", r#"{"nodes":[{"const":"12a"}],"root":0}"#.into()),
        ("empty constant", r#"{"nodes":[{"const":"-"}],"root":0}"#.into()),
        ("constant as number", r#"{"nodes":[{"const":12}],"root":0}"#.into()),
        ("huge constant", huge),
        ("1234 digits, 4100 bits", bits_over),
        ("largest constant", largest),
        ("bad name", r#"{"nodes":[{"sym":{"name":"1x","lo":null,"hi":null,"multiple_of":1}}],"root":0}"#.into()),
        ("keyword name", r#"{"nodes":[{"sym":{"name":"and","lo":null,"hi":null,"multiple_of":1}}],"root":0}"#.into()),
        ("divisor zero", r#"{"nodes":[{"sym":{"name":"x","lo":null,"hi":null,"multiple_of":0}}],"root":0}"#.into()),
        ("empty range", r#"{"nodes":[{"const":"5"},{"const":"4"},{"sym":{"name":"x","lo":0,"hi":1,"multiple_of":1}}],"root":2}"#.into()),
        ("condition as bound", r#"{"nodes":[{"bool":true},{"sym":{"name":"x","lo":0,"hi":null,"multiple_of":1}}],"root":1}"#.into()),
        ("exponent zero", format!(r#"{{"nodes":[{x},{{"prod":[[0,0]]}}],"root":1}}"#)),
        ("exponent too large", format!(r#"{{"nodes":[{x},{{"prod":[[0,4000000000]]}}],"root":1}}"#)),
        ("degree too large", format!(r#"{{"nodes":[{x},{{"prod":[[0,200]]}},{{"prod":[[1,2]]}}],"root":2}}"#)),
        ("min of nothing", r#"{"nodes":[{"min":[]}],"root":0}"#.into()),
        ("strict comparison", format!(r#"{{"nodes":[{x},{{"cmp":[0,"<"]}}],"root":1}}"#)),
        ("integer in and", format!(r#"{{"nodes":[{x},{{"and":[0]}}],"root":1}}"#)),
        ("condition in sum", r#"{"nodes":[{"bool":false},{"sum":{"terms":[[0,"1"]],"constant":"0"}}],"root":1}"#.into()),
        ("condition as expr", r#"{"nodes":[{"bool":true}],"root":0}"#.into()),
        ("too deep", deep),
    ];
    let mut out = String::new();
    for (what, json) in &cases {
        let res = match serde_json::from_str::<Expr>(json) {
            Ok(e) => format!("ok: {}", clip(&e.to_string())),
            Err(err) => format!("error: {err}"),
        };
        out += &format!("{what} => {res}\n");
    }
    let x = r#"{"sym":{"name":"x","lo":null,"hi":null,"multiple_of":1}}"#;
    for (what, json) in [
        ("integer as cond", format!(r#"{{"nodes":[{x}],"root":0}}"#)),
        (
            "comparison",
            format!(r#"{{"nodes":[{x},{{"cmp":[0,"<="]}}],"root":1}}"#),
        ),
        (
            "unknown op",
            format!(r#"{{"nodes":[{x},{{"cmp":[0,"=<"]}}],"root":1}}"#),
        ),
    ] {
        let res = match serde_json::from_str::<Cond>(&json) {
            Ok(c) => format!("ok: {c}"),
            Err(err) => format!("error: {err}"),
        };
        out += &format!("cond {what} => {res}\n");
    }
    assert_snapshot!(out);
}

fn clip(s: &str) -> String {
    if s.len() > 60 {
        format!("{}... ({} chars)", &s[..60], s.len())
    } else {
        s.to_string()
    }
}

/// Symbols of the random expressions: bounds that are expressions of other symbols, a
/// divisor, unbounded and sign-crossing ranges.
const DECLS: [&str; 6] = [
    "n 1..=64",
    "i 0..n",
    "e 2..n",
    "q -n..=n",
    "d 0..=64 multiple of 8",
    "x -inf..=inf",
];

/// Random trees over `DECLS` with every operator, and extreme constants among the leaves.
fn tree() -> BoxedStrategy<T> {
    let leaf = prop_oneof![
        (-10i64..=10).prop_map(T::C),
        Just(T::C(i64::MAX)),
        Just(T::C(i64::MIN)),
        (0usize..DECLS.len()).prop_map(T::V),
    ];
    random_tree(leaf, 4, 24, |_| Vec::new())
}

proptest! {
    /// Every valid expression (built, scoped-simplified) and the conditions comparing two
    /// of them load back as the same handle.
    #[test]
    fn random_round_trips(a in tree(), b in tree(), op in 0usize..6) {
        let (mut cx, syms) = scope_of(&DECLS);
        cx.assume_str("d % 16 == 0 or q < 0").unwrap();
        let (ea, eb) = (build(&a, &syms), build(&b, &syms));
        for e in [ea, eb, cx.simplify(ea), ea - eb * 3] {
            if e.check().is_ok() {
                prop_assert_eq!(round_trip_expr(e).map_err(TestCaseError::fail)?, e);
            }
        }
        let c = match op {
            0 => ea.lt(eb),
            1 => ea.le(eb),
            2 => ea.equals(eb),
            3 => ea.not_equals(eb) & eb.ge(0),
            4 => ea.gt(eb) | !eb.le(syms[0]),
            _ => !(ea.ge(eb) & ea.lt(syms[1])),
        };
        for c in [c, cx.simplify_cond(c)] {
            if c.check().is_ok() {
                prop_assert_eq!(round_trip_cond(c).map_err(TestCaseError::fail)?, c);
            }
        }
    }
}
