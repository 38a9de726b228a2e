//! Canonical text of expressions and conditions: deterministic, readable, and parsed
//! back by `FromStr` to the same handle.

use std::fmt::{self, Write};

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

use crate::expr::{Cond, Expr};
use crate::node::{node, CmpKind, Id, Node};

// Precedence levels of integer text: sum < product (`*`, `//`, `%`) < unary minus < atom.
const SUM: u8 = 1;
const PROD: u8 = 2;
const UNARY: u8 = 3;

// Precedence levels of boolean text: or < and < not/comparison.
const OR: u8 = 1;
const AND: u8 = 2;
const CMP: u8 = 3;

fn int_prec(id: Id) -> u8 {
    match node(id) {
        Node::Const(v) if v.is_negative() => UNARY,
        Node::Sum(..) => SUM,
        Node::Prod(_) | Node::FloorDiv(..) | Node::FloorMod(..) => PROD,
        _ => 4,
    }
}

pub(crate) fn write_int(out: &mut String, id: Id, min_prec: u8) {
    let paren = int_prec(id) < min_prec;
    if paren {
        out.push('(');
    }
    match node(id) {
        Node::Const(v) => {
            let _ = write!(out, "{v}");
        }
        Node::Sym(s) => out.push_str(&s.name),
        Node::Prod(_) => write_mono(out, id),
        Node::Sum(ts, c) => write_poly(out, ts, c),
        Node::FloorDiv(a, b) => write_bin(out, *a, " // ", *b),
        Node::FloorMod(a, b) => write_bin(out, *a, " % ", *b),
        Node::CeilDiv(a, b) => write_call(out, "cdiv", &[*a, *b]),
        Node::Min(args) => write_call(out, "min", args),
        Node::Max(args) => write_call(out, "max", args),
        Node::Invalid(m) => {
            let _ = write!(out, "<invalid: {m}>");
        }
        Node::Bool(_) | Node::Cmp(..) | Node::And(_) | Node::Or(_) => write_cond(out, id, 0),
    }
    if paren {
        out.push(')');
    }
}

fn write_bin(out: &mut String, a: Id, op: &str, b: Id) {
    write_int(out, a, UNARY);
    out.push_str(op);
    write_int(out, b, UNARY);
}

fn write_call(out: &mut String, name: &str, args: &[Id]) {
    out.push_str(name);
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_int(out, *a, 0);
    }
    out.push(')');
}

/// A monomial: atoms joined by `*`, powers written as repeated factors.
fn write_mono(out: &mut String, m: Id) {
    match node(m) {
        Node::Prod(fs) => {
            let mut first = true;
            for (a, k) in fs.iter() {
                for _ in 0..*k {
                    if !first {
                        out.push('*');
                    }
                    first = false;
                    write_int(out, *a, UNARY);
                }
            }
        }
        _ => write_int(out, m, PROD),
    }
}

pub(crate) fn write_term(out: &mut String, m: Id, k: &BigInt) {
    if k.is_one() {
        write_mono(out, m);
        return;
    }
    let _ = write!(out, "{k}*");
    match node(m) {
        Node::Prod(_) => write_mono(out, m),
        _ => write_int(out, m, UNARY),
    }
}

/// `terms + c` with signs folded into ` - `; `0` when empty.
pub(crate) fn write_poly(out: &mut String, terms: &[(Id, BigInt)], c: &BigInt) {
    for (i, (m, k)) in terms.iter().enumerate() {
        if i == 0 {
            if k.is_negative() {
                out.push('-');
                // `-x // 4` would read as `(-x) // 4`.
                if k.abs().is_one() && !matches!(node(*m), Node::Prod(_)) {
                    write_int(out, *m, UNARY);
                    continue;
                }
            }
        } else {
            out.push_str(if k.is_negative() { " - " } else { " + " });
        }
        write_term(out, *m, &k.abs());
    }
    if terms.is_empty() {
        let _ = write!(out, "{c}");
    } else if !c.is_zero() {
        let _ = write!(
            out,
            " {} {}",
            if c.is_negative() { "-" } else { "+" },
            c.abs()
        );
    }
}

fn cond_prec(id: Id) -> u8 {
    match node(id) {
        Node::Or(_) => OR,
        Node::And(_) => AND,
        _ => CMP,
    }
}

pub(crate) fn write_cond(out: &mut String, id: Id, min_prec: u8) {
    let paren = cond_prec(id) < min_prec;
    if paren {
        out.push('(');
    }
    match node(id) {
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Cmp(kind, d) => write_cmp(out, *kind, *d),
        Node::And(args) | Node::Or(args) => {
            let (sep, p) = if matches!(node(id), Node::And(_)) {
                (" and ", CMP)
            } else {
                (" or ", AND)
            };
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                write_cond(out, *a, p);
            }
        }
        _ => write_int(out, id, 0),
    }
    if paren {
        out.push(')');
    }
}

/// `d OP 0` written as `P OP N - c`: positive terms left, negative terms and the
/// constant right (or `N >= c` when no term is positive).
fn write_cmp(out: &mut String, kind: CmpKind, d: Id) {
    let (terms, c): (Vec<(Id, BigInt)>, BigInt) = match node(d) {
        Node::Sum(ts, c) => (ts.to_vec(), c.clone()),
        Node::Const(v) => (Vec::new(), v.clone()),
        _ => (vec![(d, BigInt::one())], BigInt::zero()),
    };
    let pos: Vec<(Id, BigInt)> = terms
        .iter()
        .filter(|t| t.1.is_positive())
        .cloned()
        .collect();
    let negs: Vec<(Id, BigInt)> = terms
        .iter()
        .filter(|t| t.1.is_negative())
        .map(|t| (t.0, -&t.1))
        .collect();
    let op = match kind {
        CmpKind::Le => "<=",
        CmpKind::Eq => "==",
        CmpKind::Ne => "!=",
    };
    if pos.is_empty() {
        let op = match kind {
            CmpKind::Le => ">=",
            _ => op,
        };
        write_poly(out, &negs, &BigInt::zero());
        let _ = write!(out, " {op} {c}");
        return;
    }
    write_poly(out, &pos, &BigInt::zero());
    let _ = write!(out, " {op} ");
    write_poly(out, &negs, &-c);
}

/// `Display` through the writer `$write`, and `Debug` as `Name(text)`.
macro_rules! fmt_impls {
    ($ty:ident, $write:ident) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut s = String::new();
                $write(&mut s, self.0, 0);
                f.write_str(&s)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($ty), "({})"), self)
            }
        }
    };
}

fmt_impls!(Expr, write_int);
fmt_impls!(Cond, write_cond);

/// Longest expression text an error message quotes whole.
const MAX_QUOTED_CHARS: usize = 100;

/// The text of `id` for an error message: whole when short, otherwise its start and end
/// around ` ... ` with the full length named.
pub(crate) fn short_text(id: Id) -> String {
    abbreviate(&id_text(id))
}

/// `text` when at most 100 characters long, otherwise its first 60 and last 30
/// characters around ` ... `, followed by the full length: how error messages quote an
/// expression or condition that may be long.
#[must_use]
pub fn abbreviate(text: &str) -> String {
    let n = text.chars().count();
    if n <= MAX_QUOTED_CHARS {
        return text.to_owned();
    }
    let head: String = text.chars().take(60).collect();
    let tail: String = text.chars().skip(n - 30).collect();
    format!("{head} ... {tail} ({n} characters)")
}

pub(crate) fn id_text(id: Id) -> String {
    let mut s = String::new();
    write_int(&mut s, id, 0);
    s
}
