//! Symbolic integer expressions for tensor dimensions: interned, canonical, with ranges,
//! three-valued proofs, binding and compiled evaluation.
//!
//! # Main types
//!
//! - [`Expr`]: an integer expression (constants, symbols, `+ - *`, floor division,
//!   floor modulo, ceiling division, `min`, `max`). A `Copy` handle (a `u32` into a
//!   process-wide interner), `Send + Sync`, with O(1) equality and hashing. Build it with
//!   operators (`n * 2 + 1`) or parse it (`"2*n + 1".parse()`). Constants come from
//!   `Expr::from(i64)`, and from any other integer type through
//!   [`Expr::constant`] (`Expr::constant(heads)` for a `usize`) or `Expr::try_from`,
//!   which never fails.
//! - [`Cond`]: a boolean condition (`< <= == != >= >`, `and`, `or`, `not`), e.g. the
//!   validity mask of a view.
//! - [`SymbolSpec`]: a symbol's declaration: name, inclusive range (bounds may be
//!   expressions, e.g. a loop index `0..=dim - 1`) and divisor. The declaration *is* the
//!   symbol's identity, so range-based simplification needs no context.
//! - [`Scope`]: declared names (for parsing) plus assumptions (`n <= m`, `n % 8 == 0`,
//!   `n*m == k`); answers [`Scope::simplify`], [`Scope::range`] and [`Scope::prove`]
//!   ([`Proof`]: true, false or unknown with a reason; never wrong).
//! - [`Bindings`]: values of symbols, checked against ranges; [`Expr::eval`],
//!   [`Scope::eval`] (also checks assumptions), [`Scope::substitute`] (partial
//!   binding), [`Scope::solve`] (`2*n + 1 == 9` gives `n = 4`).
//! - [`Program`]: expressions compiled to a flat instruction list for evaluating many
//!   times without hashing or allocation; [`Program::compile_checked`] also checks the
//!   inputs against the symbols' ranges (bounds that are expressions included, see
//!   [`SymbolSpec::lower`]) and the scope's assumptions exactly, in the same run.
//! - [`ExprKind`]/[`CondKind`] ([`Expr::kind`], [`Cond::kind`]): the canonical structure,
//!   for code that lowers expressions itself; [`Expr::coefficient_of`] reads a stride.
//!
//! ```
//! use symshape::{Bindings, CmpOp, Expr, Proof, Scope};
//!
//! let mut cx = Scope::new();
//! let n = cx.declare_str("n 1..=4096")?;
//! let m = cx.declare_str("m 1..=4096")?;
//! let i = cx.declare_str("i 0..n")?; // a loop index below n
//! let j = cx.declare_str("j 0..m")?;
//! cx.assume_str("n % 8 == 0")?;
//!
//! // Algebraically equal polynomials are one handle.
//! assert_eq!((n + 1) * (n - 1), n * n - 1);
//! // Index arithmetic cancels using the ranges of i and j.
//! let flat = i * m + j;
//! assert_eq!(flat.floor_div(m), i);
//! assert_eq!(flat.floor_mod(m), j);
//! assert_eq!(cx.simplify((n + 7).floor_div(8) * 8), n);
//! // Display is canonical and parses back to the same handle.
//! assert_eq!(cx.parse_expr(&flat.to_string())?, flat);
//!
//! assert_eq!(cx.prove(flat, CmpOp::Lt, n * m), Proof::True);
//! assert_eq!(cx.range(flat).to_string(), "[0, 16777215]");
//!
//! let mut b = Bindings::new();
//! cx.bind(&mut b, "n", 16)?;
//! cx.bind(&mut b, "m", 3)?;
//! assert_eq!(cx.eval(n * m + 1, &b)?, 49);
//! # Ok::<(), symshape::Error>(())
//! ```
//!
//! # Semantics
//!
//! Integers are unbounded (coefficients and range bounds are `BigInt`); only evaluation
//! uses i64, checked, and exact: [`Expr::eval`] falls back to unbounded integers when an
//! intermediate of the canonical form overflows, so only a result outside i64 is an
//! error. Division and modulo follow the floor convention of Python:
//! `a // b == floor(a / b)` and `a % b == a - b * (a // b)`, so `-7 // 2 == -4`,
//! `-7 % 2 == 1`, `7 % -3 == -2`. `cdiv(a, b) == ceil(a / b)`. Division by zero is an
//! evaluation error; the node is kept unsimplified when the divisor may be zero. A
//! simplification can remove a sub-expression entirely (`0 * (x // 0)`, `x - x`), and
//! with it an error it would have raised.
//!
//! # Canonical form
//!
//! An integer expression is a polynomial over *atoms* (symbols, `//`, `%`, `cdiv`,
//! `min`, `max`) with `BigInt` coefficients; terms and factors are sorted by a
//! structural order (degree, then symbol names, then structure), never by interning
//! order, so text and term order are identical across runs, threads and processes.
//! Non-polynomial nodes are simplified at construction with the ranges and congruences
//! of their operands; [`Scope::simplify`] rebuilds with the scope's assumptions too.
//! `docs/symbolic.md` lists the rules.
//!
//! # Memory policy
//!
//! The interner is global, thread-safe and append-only: nodes are never freed, and each
//! distinct (sub)expression is stored once, so memory is bounded by the number of
//! distinct expressions a process ever builds (one node per distinct canonical form,
//! tens of bytes each). Re-building an expression allocates nothing new. A long-running
//! process that builds an unbounded stream of *distinct* expressions grows without
//! bound; [`stats`] reports the node count and approximate bytes to watch it. Reads go
//! through a per-thread copy of the entry table (one pointer per node per reading
//! thread, filled lazily), so they take no lock.
//!
//! # Limits
//!
//! Operators never panic and never fail: past a budget ([`MAX_DEPTH`] nesting,
//! [`MAX_TERMS`] terms, [`MAX_DEGREE`], [`MAX_COEF_BITS`], [`MAX_MUL_WORK`] products in
//! one expansion) they return an *invalid* expression that carries the error; every
//! operation on it returns it again, and every fallible call ([`Expr::check`],
//! evaluation, compilation, [`Scope::assume`], parsing) reports it as
//! [`Error::Limit`]. The parser rejects nesting deeper than [`MAX_PARSE_DEPTH`], so
//! deep input is an error, never a stack overflow. Proofs give up (unknown) past a fixed
//! number of variables and constraints, so they always terminate quickly.
//!
//! # Dependencies
//!
//! - `num-bigint`, `num-integer`, `num-traits`: exact coefficients, range bounds and
//!   floor division/gcd on them, so no constant or range product ever overflows.
//! - `hashbrown`: the interner's dedup table and the per-call caches (fast default
//!   hasher; lookups by borrowed node).
//! - `thiserror`: the [`Error`] enum.
//! - `serde` (optional, feature `serde`): `Serialize`/`Deserialize` for [`Expr`] and
//!   [`Cond`], so frameworks can persist caches of compiled kernels keyed by expressions.
//!   The encoding is structural (a node list, children first, constants as decimal
//!   strings, symbols with their whole declaration) and is re-interned on load through
//!   the canonicalising constructors, so a loaded handle equals the one built in the
//!   loading process; malformed input is a deserialization error.

#![forbid(unsafe_code)]

mod build;
mod display;
mod error;
mod eval;
mod expr;
mod facts;
mod inspect;
mod limits;
mod memo;
mod node;
mod num;
mod order;
mod parse;
mod poly;
mod program;
mod prove;
mod rebuild;
mod sample;
#[cfg(test)]
mod sample_tests;
mod scope;
#[cfg(feature = "serde")]
mod serde_impl;
mod visit;

pub use display::abbreviate;
pub use error::Error;
pub use eval::Bindings;
pub use expr::{is_identifier, CmpOp, Cond, Expr, SymbolSpec};
pub use inspect::{CondKind, ExprKind};
pub use limits::{MAX_COEF_BITS, MAX_DEGREE, MAX_DEPTH, MAX_MUL_WORK, MAX_TERMS};
pub use node::{stats, InternerStats};
pub use num::{Cong, Interval};
pub use num_bigint::BigInt;
pub use parse::{split_top_level, MAX_PARSE_DEPTH};
pub use program::{Program, ProgramState};
pub use scope::{Proof, Scope};
