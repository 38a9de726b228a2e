//! Budgets: pathological input is an error, never a panic, stack overflow or hang.

use symshape::{Expr, SymbolSpec};

use crate::std_scope;

#[test]
fn deep_parentheses_are_an_error() {
    let cx = std_scope();
    let deep = "(".repeat(100_000) + "n" + &")".repeat(100_000);
    insta::assert_snapshot!(cx.parse_expr(&deep).unwrap_err().to_string(), @"parse: column 101: expression nests deeper than 100 levels");
    let minus = "-".repeat(100_000) + "n";
    insta::assert_snapshot!(cx.parse_expr(&minus).unwrap_err().to_string(), @"parse: column 101: expression nests deeper than 100 levels");
    let nots = "not ".repeat(100_000) + "n < 3";
    assert!(cx.parse_cond(&nots).is_err());
}

#[test]
fn deep_operator_nesting_becomes_invalid() {
    let x = SymbolSpec::new("x").lo(None).hi(None).build().unwrap();
    let mut e = x;
    for i in 0..1000 {
        e = (e + x).floor_div(3 + i % 5) * x;
    }
    let err = e.check().unwrap_err().to_string();
    insta::assert_snapshot!(err, @"limit: expression nests deeper than 200 levels, counting the bounds of its symbols (a symbol bounded by another holds that one's bounds too)");
    // Invalid expressions propagate through every operator and fallible call.
    let f = e + 1;
    assert_eq!(f.check().unwrap_err().to_string(), err);
    assert!(f.eval(&symshape::Bindings::new()).is_err());
    assert!(symshape::Program::compile(&[x], &[f]).is_err());
}

#[test]
fn degree_and_expansion_budgets() {
    let x = Expr::symbol("x").unwrap();
    let mut e = x;
    for _ in 0..20 {
        e = e * e;
    }
    insta::assert_snapshot!(e.check().unwrap_err().to_string(), @"limit: monomial of degree higher than 256");
    let vars: Vec<Expr> = (0..300)
        .map(|i| Expr::symbol(&format!("v{i}")).unwrap())
        .collect();
    let s: Expr = vars.iter().copied().sum();
    insta::assert_snapshot!((s * s).check().unwrap_err().to_string(), @"limit: product would expand to more than 65536 terms");
    let mut c = Expr::from(3);
    for _ in 0..20 {
        c = c * c;
    }
    insta::assert_snapshot!(c.check().unwrap_err().to_string(), @"limit: coefficient wider than 4096 bits");
}

#[test]
fn chains_of_symbol_bounds_are_limited() {
    let mut prev = SymbolSpec::new("s0").range(0, 10).build().unwrap();
    let mut err = None;
    for i in 1..1000 {
        match SymbolSpec::new(&format!("s{i}")).range(0, prev).build() {
            Ok(s) => prev = s,
            Err(e) => {
                err = Some(e.to_string());
                break;
            }
        }
    }
    insta::assert_snapshot!(err.unwrap_or_default(), @"limit: the bounds of `s199` nest deeper than 200 levels");
}

#[test]
fn wide_min_and_long_sums_stay_fast() {
    let vars: Vec<Expr> = (0..2000)
        .map(|i| Expr::symbol(&format!("w{i}")).unwrap())
        .collect();
    let wide = Expr::min_of(&vars).unwrap();
    assert_eq!(wide.check().map(|_| ()), Ok(()));
    let s: Expr = vars.iter().copied().sum();
    let cx = symshape::Scope::new();
    assert_eq!(cx.prove_le(s, s + 1).as_bool(), Some(true));
    assert!(cx.prove_le(s, vars[0]).as_bool().is_none());
}
