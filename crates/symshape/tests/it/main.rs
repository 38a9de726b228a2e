//! Integration tests of symshape through its public API.
//!
//! Table-driven tests run short text through one rendering function per table
//! (`TextTable`) and snapshot the output; property tests compare against a naive BigInt
//! reference (`tree`), drawing random trees from shared strategies (`strategies`).

/// Defines the test `text_tables`: the output of each `TextTable` in `$tables` is
/// snapshotted under the table's name. Every table is checked even when one differs,
/// and the test then fails naming the ones that did. A macro because insta names a
/// snapshot file after the module the assertion is written in.
macro_rules! text_tables_test {
    ($tables:expr) => {
        #[test]
        fn text_tables() {
            let differing: Vec<&str> = $tables
                .iter()
                .filter(|t| {
                    std::panic::catch_unwind(|| {
                        let out = t.output();
                        insta::assert_snapshot!(t.name, out);
                    })
                    .is_err()
                })
                .map(|t| t.name)
                .collect();
            assert!(differing.is_empty(), "snapshots differ: {differing:?}");
        }
    };
}

mod adversarial;
mod eval;
mod facts;
mod fuzz;
mod limits;
mod memo;
mod parse;
mod props;
mod prove;
#[cfg(feature = "serde")]
mod serialize;
mod simplify;
mod strategies;
mod tree;

use std::fmt::Display;

use symshape::{Bindings, Error, Expr, Scope};

/// The scope most tables use: positive dimensions, a loop index, signed values and one
/// symbol with a divisor.
#[must_use]
pub fn std_scope() -> Scope {
    let mut cx = Scope::new();
    for decl in [
        "n 1..=4096",
        "m 1..=4096",
        "k 0..=inf",
        "w 1..=inf",
        "x -inf..=inf",
        "y -inf..=inf",
        "z -100..=100",
        "i 0..n",
        "j 0..m",
        "b 8..=1024 multiple of 8",
    ] {
        cx.declare_str(decl).expect(decl);
    }
    cx
}

/// Runs `f` on every input and joins `input => output` lines, errors as `error: ...`.
pub fn table(inputs: &[&str], mut f: impl FnMut(&str) -> Result<String, Error>) -> String {
    let mut out = String::new();
    for input in inputs {
        let res = f(input).unwrap_or_else(|e| format!("error: {e}"));
        out += &format!("{input} => {res}\n");
    }
    out
}

/// A table of text inputs run in the standard scope; its output is snapshotted under
/// its name.
pub struct TextTable {
    /// The snapshot's name.
    pub name: &'static str,
    /// Symbols declared on top of the standard scope.
    pub declare: &'static [&'static str],
    /// Assumptions added after the declarations.
    pub assume: &'static [&'static str],
    /// What one input turns into.
    pub render: fn(&Scope, &str) -> Result<String, Error>,
    /// The inputs, one output line each.
    pub inputs: &'static [&'static str],
}

impl TextTable {
    /// The standard scope with the table's declarations and assumptions.
    #[must_use]
    pub fn scope(&self) -> Scope {
        let mut cx = std_scope();
        for d in self.declare {
            cx.declare_str(d).expect(d);
        }
        for a in self.assume {
            cx.assume_str(a).expect(a);
        }
        cx
    }

    /// Every input rendered in the table's scope, as `table` prints them.
    #[must_use]
    pub fn output(&self) -> String {
        let cx = self.scope();
        table(self.inputs, |s| (self.render)(&cx, s))
    }
}

/// The expression `input` parsed in `cx`, printed.
pub fn parsed_expr(cx: &Scope, input: &str) -> Result<String, Error> {
    Ok(cx.parse_expr(input)?.to_string())
}

/// The condition `input` parsed in `cx`, printed.
pub fn parsed_cond(cx: &Scope, input: &str) -> Result<String, Error> {
    Ok(cx.parse_cond(input)?.to_string())
}

/// The standard scope with each of `assumptions` added (panics naming a refused one).
#[must_use]
pub fn scope_assuming(assumptions: &[&str]) -> Scope {
    let mut cx = std_scope();
    for a in assumptions {
        cx.assume_str(a).expect(a);
    }
    cx
}

/// A fresh scope declaring each of `decls` in order, with the declared symbols.
#[must_use]
pub fn scope_of(decls: &[&str]) -> (Scope, Vec<Expr>) {
    let mut cx = Scope::new();
    let syms = decls.iter().map(|d| cx.declare_str(d).expect(d)).collect();
    (cx, syms)
}

/// Bindings of the named symbols of `cx` to the given values.
#[must_use]
pub fn bind_names(cx: &Scope, values: &[(&str, i64)]) -> Bindings {
    let mut b = Bindings::new();
    for (name, v) in values {
        cx.bind(&mut b, name, *v).expect(name);
    }
    b
}

/// Prints `value`, parses the text back with `parse`, and describes the failure when
/// that does not give the same handle.
pub fn parses_back<V: Copy + PartialEq + Display>(
    value: V,
    parse: impl Fn(&str) -> Result<V, Error>,
) -> Result<(), String> {
    let back = parse(&value.to_string()).map_err(|err| format!("text `{value}`: {err}"))?;
    if back == value {
        Ok(())
    } else {
        Err(format!("text `{value}` parses to `{back}`"))
    }
}
