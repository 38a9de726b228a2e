//! Integration tests of symshape through its public API.
//!
//! Table-driven tests run short text through one `check`-style helper per domain and
//! snapshot the output; property tests compare against a naive BigInt reference.

mod adversarial;
mod eval;
mod fuzz;
mod limits;
mod parse;
mod props;
mod prove;
#[cfg(feature = "serde")]
mod serialize;
mod simplify;
mod tree;

use symshape::{Error, Scope};

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
