//! Rebuilding expressions with symbols replaced, and structural questions the plan asks.

use symshape::{Cond, CondKind, Expr, ExprKind};

/// `e` with every symbol `s` for which `map(s)` is `Some(r)` replaced by `r`, rebuilt
/// through the canonicalising constructors (not simplified under a scope).
pub(crate) fn subst(e: Expr, map: &dyn Fn(Expr) -> Option<Expr>) -> Expr {
    match e.kind() {
        ExprKind::Const(_) | ExprKind::Invalid(_) => e,
        ExprKind::Symbol(_) => map(e).unwrap_or(e),
        ExprKind::Sum { terms, constant } => {
            let mut acc = Expr::constant(constant);
            for (m, c) in terms {
                acc += subst(m, map) * Expr::constant(c);
            }
            acc
        }
        ExprKind::Product(factors) => {
            let mut acc = Expr::from(1);
            for (a, k) in factors {
                let a = subst(a, map);
                for _ in 0..k {
                    acc *= a;
                }
            }
            acc
        }
        ExprKind::FloorDiv(a, b) => subst(a, map).floor_div(subst(b, map)),
        ExprKind::FloorMod(a, b) => subst(a, map).floor_mod(subst(b, map)),
        ExprKind::CeilDiv(a, b) => subst(a, map).ceil_div(subst(b, map)),
        ExprKind::Min(args) => fold(&args, map, Expr::min),
        ExprKind::Max(args) => fold(&args, map, Expr::max),
        // `ExprKind` is non-exhaustive; an unknown node is kept as it is.
        _ => e,
    }
}

fn fold(args: &[Expr], map: &dyn Fn(Expr) -> Option<Expr>, op: fn(Expr, Expr) -> Expr) -> Expr {
    let mut it = args.iter().map(|&a| subst(a, map));
    let first = it.next().unwrap_or_else(|| Expr::from(0));
    it.fold(first, op)
}

/// [`subst`] on every expression of a condition.
pub(crate) fn subst_cond(c: Cond, map: &dyn Fn(Expr) -> Option<Expr>) -> Cond {
    match c.kind() {
        CondKind::Compare(d, op) => subst(d, map).compare(op, Expr::from(0)),
        CondKind::And(args) => {
            let args: Vec<Cond> = args.into_iter().map(|a| subst_cond(a, map)).collect();
            Cond::all(&args)
        }
        CondKind::Or(args) => {
            let args: Vec<Cond> = args.into_iter().map(|a| subst_cond(a, map)).collect();
            Cond::any(&args)
        }
        _ => c,
    }
}

/// The conjuncts of `c` (itself when it is not an `and`).
pub(crate) fn conjuncts(c: Cond) -> Vec<Cond> {
    match c.kind() {
        CondKind::And(args) => args,
        CondKind::Const(true) => Vec::new(),
        _ => vec![c],
    }
}
