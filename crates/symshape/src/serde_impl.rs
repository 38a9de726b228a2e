//! `Serialize`/`Deserialize` for [`Expr`] and [`Cond`] (feature `serde`).
//!
//! Handles are process-local ids, so they are never written. The wire form is
//! self-contained: `{"nodes": [...], "root": r}`, a list of canonical nodes where every
//! child index points to an *earlier* node, constants are decimal strings (exact for any
//! `BigInt`), and a symbol carries its whole declaration (name, bounds, divisor), which
//! is its identity. Loading rebuilds each node through the public canonicalising
//! constructors, so the result is the very handle that building the same expression in
//! the loading process gives.
//!
//! Invariants checked on load, each failure a deserialization error (never a panic):
//! 1. every child index is smaller than its node's index, and `root` names a node;
//! 2. integer positions hold integer nodes and condition positions hold conditions;
//! 3. constants are decimal integers within [`MAX_COEF_BITS`], exponents within
//!    `1..=MAX_DEGREE`, sums within [`MAX_TERMS`] terms;
//! 4. every rebuilt node passes [`Expr::check`]/[`Cond::check`] (depth and size budgets)
//!    and every symbol passes [`SymbolSpec::build`].

use std::fmt::Display;

use hashbrown::HashMap;
use num_bigint::BigInt;
use serde::{de, ser, Deserialize, Deserializer, Serialize, Serializer};

use crate::build::{from_poly, Poly};
use crate::expr::{CmpOp, Cond, Expr, SymbolSpec};
use crate::inspect::{CondKind, ExprKind};
use crate::limits::{MAX_COEF_BITS, MAX_DEGREE, MAX_TERMS};

/// One canonical node; indices refer to earlier entries of [`Wire::nodes`].
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum WireNode {
    Const(String),
    Sym {
        name: String,
        lo: Option<u32>,
        hi: Option<u32>,
        multiple_of: u64,
    },
    Sum {
        terms: Vec<(u32, String)>,
        constant: String,
    },
    Prod(Vec<(u32, u32)>),
    FloorDiv(u32, u32),
    FloorMod(u32, u32),
    CeilDiv(u32, u32),
    Min(Vec<u32>),
    Max(Vec<u32>),
    Bool(bool),
    /// `lhs OP 0` with `OP` one of `<=`, `==`, `!=`.
    Cmp(u32, String),
    And(Vec<u32>),
    Or(Vec<u32>),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    nodes: Vec<WireNode>,
    root: u32,
}

/// A handle reached while encoding.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Handle {
    Int(Expr),
    Bool(Cond),
}

/// Post-order encoder; shared sub-expressions are written once.
#[derive(Default)]
struct Encoder {
    nodes: Vec<WireNode>,
    seen: HashMap<Handle, u32>,
}

impl Encoder {
    /// The index of `h`, encoding it with `build` the first time it is reached.
    fn node(
        &mut self,
        h: Handle,
        build: impl FnOnce(&mut Self) -> Result<WireNode, String>,
    ) -> Result<u32, String> {
        if let Some(&i) = self.seen.get(&h) {
            return Ok(i);
        }
        let n = build(self)?;
        let i = u32::try_from(self.nodes.len())
            .map_err(|_| "serialize: more than u32::MAX nodes".to_string())?;
        self.nodes.push(n);
        self.seen.insert(h, i);
        Ok(i)
    }

    // Recursion is bounded: valid handles nest at most MAX_DEPTH levels, bounds included.
    fn expr(&mut self, e: Expr) -> Result<u32, String> {
        self.node(Handle::Int(e), |this| this.expr_node(e))
    }

    fn expr_node(&mut self, e: Expr) -> Result<WireNode, String> {
        Ok(match e.kind() {
            ExprKind::Const(v) => WireNode::Const(v.to_string()),
            ExprKind::Symbol(_) => {
                let spec = e
                    .symbol_spec()
                    .ok_or_else(|| format!("serialize: symbol `{e}` has no declaration"))?;
                WireNode::Sym {
                    lo: spec.lo.map(|b| self.expr(b)).transpose()?,
                    hi: spec.hi.map(|b| self.expr(b)).transpose()?,
                    name: spec.name,
                    multiple_of: spec.multiple_of,
                }
            }
            ExprKind::Sum { terms, constant } => WireNode::Sum {
                terms: terms
                    .into_iter()
                    .map(|(m, k)| Ok((self.expr(m)?, k.to_string())))
                    .collect::<Result<_, String>>()?,
                constant: constant.to_string(),
            },
            ExprKind::Product(fs) => WireNode::Prod(
                fs.into_iter()
                    .map(|(a, k)| Ok((self.expr(a)?, k)))
                    .collect::<Result<_, String>>()?,
            ),
            ExprKind::FloorDiv(a, b) => WireNode::FloorDiv(self.expr(a)?, self.expr(b)?),
            ExprKind::FloorMod(a, b) => WireNode::FloorMod(self.expr(a)?, self.expr(b)?),
            ExprKind::CeilDiv(a, b) => WireNode::CeilDiv(self.expr(a)?, self.expr(b)?),
            ExprKind::Min(args) => WireNode::Min(self.exprs(args)?),
            ExprKind::Max(args) => WireNode::Max(self.exprs(args)?),
            ExprKind::Invalid(m) => return Err(invalid("expression", &m)),
        })
    }

    fn exprs(&mut self, args: Vec<Expr>) -> Result<Vec<u32>, String> {
        args.into_iter().map(|a| self.expr(a)).collect()
    }

    fn cond(&mut self, c: Cond) -> Result<u32, String> {
        self.node(Handle::Bool(c), |this| this.cond_node(c))
    }

    fn cond_node(&mut self, c: Cond) -> Result<WireNode, String> {
        Ok(match c.kind() {
            CondKind::Const(b) => WireNode::Bool(b),
            CondKind::Compare(d, op) => WireNode::Cmp(self.expr(d)?, op.as_str().to_string()),
            CondKind::And(args) => WireNode::And(self.conds(args)?),
            CondKind::Or(args) => WireNode::Or(self.conds(args)?),
            CondKind::Invalid(m) => return Err(invalid("condition", &m)),
        })
    }

    fn conds(&mut self, args: Vec<Cond>) -> Result<Vec<u32>, String> {
        args.into_iter().map(|a| self.cond(a)).collect()
    }
}

fn invalid(what: &str, message: &str) -> String {
    format!("serialize: cannot encode an invalid {what}: {message}")
}

/// Rebuilds nodes in order; `built[i]` is node `i`'s handle.
struct Decoder {
    built: Vec<Handle>,
}

impl Decoder {
    fn get(&self, at: usize, i: u32) -> Result<Handle, String> {
        usize::try_from(i)
            .ok()
            .filter(|&i| i < at)
            .and_then(|i| self.built.get(i).copied())
            .ok_or_else(|| format!("node {at}: index {i} is not an earlier node"))
    }

    fn int(&self, at: usize, i: u32) -> Result<Expr, String> {
        match self.get(at, i)? {
            Handle::Int(e) => Ok(e),
            Handle::Bool(_) => Err(format!(
                "node {at}: index {i} is a condition where an integer is expected"
            )),
        }
    }

    fn boolean(&self, at: usize, i: u32) -> Result<Cond, String> {
        match self.get(at, i)? {
            Handle::Bool(c) => Ok(c),
            Handle::Int(_) => Err(format!(
                "node {at}: index {i} is an integer where a condition is expected"
            )),
        }
    }

    fn node(&self, at: usize, n: &WireNode) -> Result<Handle, String> {
        let int = |i: u32| self.int(at, i);
        let ints = |is: &[u32]| is.iter().map(|&i| int(i)).collect::<Result<Vec<_>, _>>();
        let bools = |is: &[u32]| {
            is.iter()
                .map(|&i| self.boolean(at, i))
                .collect::<Result<Vec<_>, _>>()
        };
        let e = match n {
            WireNode::Const(s) => Expr::constant(decimal(at, s)?),
            WireNode::Sym {
                name,
                lo,
                hi,
                multiple_of,
            } => SymbolSpec::new(name)
                .lo(lo.map(int).transpose()?)
                .hi(hi.map(int).transpose()?)
                .multiple_of(*multiple_of)
                .build()
                .map_err(|err| format!("node {at}: {err}"))?,
            WireNode::Sum { terms, constant } => {
                if terms.len() > MAX_TERMS {
                    return Err(format!(
                        "node {at}: a sum of {} terms exceeds {MAX_TERMS}",
                        terms.len()
                    ));
                }
                // One canonicalisation of the whole sum: adding term by term re-sorts
                // the growing sum each time, quadratic in MAX_TERMS.
                let mut p = Poly::constant(decimal(at, constant)?);
                for (m, k) in terms {
                    let t = Poly::of(int(*m)?.0).scale(&decimal(at, k)?);
                    p.terms.extend(t.terms);
                    p.c += t.c;
                }
                Expr(from_poly(p))
            }
            WireNode::Prod(fs) => {
                let mut acc = Expr::from(1);
                for &(a, k) in fs {
                    if !(1..=MAX_DEGREE).contains(&k) {
                        return Err(format!(
                            "node {at}: exponent {k} is outside 1..={MAX_DEGREE}"
                        ));
                    }
                    let a = int(a)?;
                    for _ in 0..k {
                        acc *= a;
                    }
                    // Stop at the first budget error rather than multiply on.
                    acc.check().map_err(|err| format!("node {at}: {err}"))?;
                }
                acc
            }
            WireNode::FloorDiv(a, b) => int(*a)?.floor_div(int(*b)?),
            WireNode::FloorMod(a, b) => int(*a)?.floor_mod(int(*b)?),
            WireNode::CeilDiv(a, b) => int(*a)?.ceil_div(int(*b)?),
            WireNode::Min(args) => Expr::min_of(&ints(args)?)
                .ok_or_else(|| format!("node {at}: min of no arguments"))?,
            WireNode::Max(args) => Expr::max_of(&ints(args)?)
                .ok_or_else(|| format!("node {at}: max of no arguments"))?,
            WireNode::Bool(b) => return Ok(Handle::Bool(Cond::constant(*b))),
            WireNode::Cmp(d, op) => {
                let op = match op.parse::<CmpOp>().ok() {
                    Some(op @ (CmpOp::Le | CmpOp::Eq | CmpOp::Ne)) => op,
                    _ => {
                        return Err(format!(
                            "node {at}: comparison `{op}` is not one of `<=`, `==`, `!=`"
                        ))
                    }
                };
                return checked_cond(at, int(*d)?.compare(op, 0));
            }
            WireNode::And(args) => return checked_cond(at, Cond::all(&bools(args)?)),
            WireNode::Or(args) => return checked_cond(at, Cond::any(&bools(args)?)),
        };
        e.check()
            .map(Handle::Int)
            .map_err(|err| format!("node {at}: {err}"))
    }
}

fn checked_cond(at: usize, c: Cond) -> Result<Handle, String> {
    c.check()
        .map(Handle::Bool)
        .map_err(|err| format!("node {at}: {err}"))
}

/// An exact decimal integer, refusing text too long to stay within [`MAX_COEF_BITS`]
/// before parsing it (parsing cost grows with length).
fn decimal(at: usize, s: &str) -> Result<BigInt, String> {
    let bad = || format!("node {at}: `{}` is not a decimal integer", clip(s));
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // 4096 bits hold at most 1234 decimal digits; leading zeros beyond that are refused too.
    let max_digits = usize::try_from(MAX_COEF_BITS * 30103 / 100000 + 1).unwrap_or(usize::MAX);
    if digits.len() > max_digits {
        return Err(format!(
            "node {at}: constant of {} digits exceeds {MAX_COEF_BITS} bits",
            digits.len()
        ));
    }
    let v: BigInt = s.parse().map_err(|_| bad())?;
    if v.bits() > MAX_COEF_BITS {
        return Err(format!(
            "node {at}: constant of {} bits exceeds {MAX_COEF_BITS} bits",
            v.bits()
        ));
    }
    Ok(v)
}

/// At most 40 characters of caller text, so error messages stay short.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() {
        out.push_str("...");
    }
    out
}

fn decode(w: &Wire) -> Result<Handle, String> {
    let mut d = Decoder {
        built: Vec::with_capacity(w.nodes.len().min(1 << 16)),
    };
    for (at, n) in w.nodes.iter().enumerate() {
        let h = d.node(at, n)?;
        d.built.push(h);
    }
    let len = d.built.len();
    usize::try_from(w.root)
        .ok()
        .and_then(|r| d.built.get(r).copied())
        .ok_or_else(|| format!("root {} is not a node (there are {len})", w.root))
}

fn de_err<E: de::Error>(what: &str, m: impl Display) -> E {
    E::custom(format_args!("deserialize {what}: {m}"))
}

/// `Serialize` and `Deserialize` for a handle type, through the encoder method
/// `$encode` and the `Handle` variant `$variant`; `$name` names it in errors and
/// `$other` is what a root of the other type is.
macro_rules! wire_impls {
    ($ty:ident, $encode:ident, $variant:ident, $name:literal, $other:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut enc = Encoder::default();
                let root = enc.$encode(*self).map_err(ser::Error::custom)?;
                Wire {
                    nodes: enc.nodes,
                    root,
                }
                .serialize(s)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                let w = Wire::deserialize(d)?;
                match decode(&w).map_err(|m| de_err($name, m))? {
                    Handle::$variant(x) => Ok(x),
                    _ => Err(de_err($name, concat!("the root is ", $other))),
                }
            }
        }
    };
}

wire_impls!(Expr, expr, Int, "expr", "a condition");
wire_impls!(Cond, cond, Bool, "cond", "an integer expression");
