//! Read-only views of a node's structure, for code that lowers expressions itself.

use num_bigint::BigInt;

use crate::expr::{CmpOp, Cond, Expr};
use crate::node::{node, CmpKind, Node};

/// The top-level structure of an [`Expr`] in canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExprKind {
    /// An integer constant.
    Const(BigInt),
    /// A symbol (its declaration is [`Expr::symbol_spec`]).
    Symbol(&'static str),
    /// `sum(coef * monomial) + constant`, terms in canonical order.
    Sum {
        /// Monomials (atoms or products) with nonzero coefficients.
        terms: Vec<(Expr, BigInt)>,
        /// The constant term.
        constant: BigInt,
    },
    /// A product of distinct atoms with exponents (total degree >= 2).
    Product(Vec<(Expr, u32)>),
    /// `a // b`.
    FloorDiv(Expr, Expr),
    /// `a % b`.
    FloorMod(Expr, Expr),
    /// `cdiv(a, b)` (only kept when the divisor's sign is unknown).
    CeilDiv(Expr, Expr),
    /// `min(...)` of two or more arguments.
    Min(Vec<Expr>),
    /// `max(...)` of two or more arguments.
    Max(Vec<Expr>),
    /// A budget error carried by the expression (see [`Expr::check`]).
    Invalid(String),
}

/// The top-level structure of a [`Cond`] in canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CondKind {
    /// A constant.
    Const(bool),
    /// `d OP 0` with `OP` one of `<=`, `==`, `!=`.
    Compare(Expr, CmpOp),
    /// Conjunction of two or more conditions.
    And(Vec<Cond>),
    /// Disjunction of two or more conditions.
    Or(Vec<Cond>),
    /// A budget error carried by the condition.
    Invalid(String),
}

impl Expr {
    /// The top-level structure of this expression.
    #[must_use]
    pub fn kind(self) -> ExprKind {
        match node(self.0) {
            Node::Const(v) => ExprKind::Const(v.clone()),
            Node::Sym(s) => ExprKind::Symbol(&s.name),
            Node::Sum(ts, c) => ExprKind::Sum {
                terms: ts.iter().map(|(m, k)| (Expr(*m), k.clone())).collect(),
                constant: c.clone(),
            },
            Node::Prod(fs) => ExprKind::Product(fs.iter().map(|(a, k)| (Expr(*a), *k)).collect()),
            Node::FloorDiv(a, b) => ExprKind::FloorDiv(Expr(*a), Expr(*b)),
            Node::FloorMod(a, b) => ExprKind::FloorMod(Expr(*a), Expr(*b)),
            Node::CeilDiv(a, b) => ExprKind::CeilDiv(Expr(*a), Expr(*b)),
            Node::Min(args) => ExprKind::Min(args.iter().map(|a| Expr(*a)).collect()),
            Node::Max(args) => ExprKind::Max(args.iter().map(|a| Expr(*a)).collect()),
            Node::Invalid(m) => ExprKind::Invalid(m.to_string()),
            // Typed handles keep conditions out of `Expr`.
            Node::Bool(_) | Node::Cmp(..) | Node::And(_) | Node::Or(_) => {
                ExprKind::Invalid("not an integer expression".into())
            }
        }
    }

    /// The coefficient of the monomial `mono` (e.g. a symbol) in this polynomial, 0 when
    /// absent: the stride of an index in an offset expression.
    pub fn coefficient_of(self, mono: Expr) -> BigInt {
        crate::build::Poly::of(self.0)
            .terms
            .iter()
            .find(|t| t.0 == mono.0)
            .map_or_else(BigInt::default, |t| t.1.clone())
    }
}

impl Cond {
    /// The top-level structure of this condition.
    #[must_use]
    pub fn kind(self) -> CondKind {
        match node(self.0) {
            Node::Bool(b) => CondKind::Const(*b),
            Node::Cmp(kind, d) => CondKind::Compare(
                Expr(*d),
                match kind {
                    CmpKind::Le => CmpOp::Le,
                    CmpKind::Eq => CmpOp::Eq,
                    CmpKind::Ne => CmpOp::Ne,
                },
            ),
            Node::And(args) => CondKind::And(args.iter().map(|a| Cond(*a)).collect()),
            Node::Or(args) => CondKind::Or(args.iter().map(|a| Cond(*a)).collect()),
            Node::Invalid(m) => CondKind::Invalid(m.to_string()),
            _ => CondKind::Invalid("not a condition".into()),
        }
    }
}
