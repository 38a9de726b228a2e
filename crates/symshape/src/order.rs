//! Structural total order on nodes: decides term order in canonical forms and Display,
//! independent of interning order (ids differ between processes and threads).

use std::cmp::Ordering;

use crate::node::{info, node, Id, Node};

fn rank(n: &Node) -> u8 {
    match n {
        Node::Const(_) => 0,
        Node::Sym(_) => 1,
        Node::FloorDiv(..) => 2,
        Node::FloorMod(..) => 3,
        Node::CeilDiv(..) => 4,
        Node::Min(_) => 5,
        Node::Max(_) => 6,
        Node::Prod(_) => 7,
        Node::Sum(..) => 8,
        Node::Bool(_) => 9,
        Node::Cmp(..) => 10,
        Node::And(_) => 11,
        Node::Or(_) => 12,
        Node::Invalid(_) => 13,
    }
}

fn cmp_opt(a: Option<Id>, b: Option<Id>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => cmp(x, y),
    }
}

/// The first unequal comparison of two slices' elements in order, if any.
fn first_difference<T>(a: &[T], b: &[T], f: impl Fn(&T, &T) -> Ordering) -> Option<Ordering> {
    a.iter().zip(b).map(|(x, y)| f(x, y)).find(|o| o.is_ne())
}

fn cmp_slice(a: &[Id], b: &[Id]) -> Ordering {
    first_difference(a, b, |x, y| cmp(*x, *y)).unwrap_or_else(|| a.len().cmp(&b.len()))
}

/// Total structural order; `Equal` exactly when the ids are equal (nodes are hash-consed).
pub(crate) fn cmp(a: Id, b: Id) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let (na, nb) = (node(a), node(b));
    let r = rank(na).cmp(&rank(nb));
    if r != Ordering::Equal {
        return r;
    }
    match (na, nb) {
        (Node::Const(x), Node::Const(y)) => x.cmp(y),
        (Node::Sym(x), Node::Sym(y)) => x
            .name
            .cmp(&y.name)
            .then_with(|| cmp_opt(x.lo, y.lo))
            .then_with(|| cmp_opt(x.hi, y.hi))
            .then_with(|| x.multiple_of.cmp(&y.multiple_of)),
        (Node::Prod(x), Node::Prod(y)) => cmp_factors(x, y),
        (Node::Sum(x, cx), Node::Sum(y, cy)) => first_difference(x, y, |(mx, kx), (my, ky)| {
            cmp_mono(*mx, *my).then_with(|| kx.cmp(ky))
        })
        .unwrap_or_else(|| x.len().cmp(&y.len()).then_with(|| cx.cmp(cy))),
        (Node::FloorDiv(a1, b1), Node::FloorDiv(a2, b2))
        | (Node::FloorMod(a1, b1), Node::FloorMod(a2, b2))
        | (Node::CeilDiv(a1, b1), Node::CeilDiv(a2, b2)) => {
            cmp(*a1, *a2).then_with(|| cmp(*b1, *b2))
        }
        (Node::Min(x), Node::Min(y))
        | (Node::Max(x), Node::Max(y))
        | (Node::And(x), Node::And(y))
        | (Node::Or(x), Node::Or(y)) => cmp_slice(x, y),
        (Node::Bool(x), Node::Bool(y)) => x.cmp(y),
        (Node::Cmp(kx, dx), Node::Cmp(ky, dy)) => cmp(*dx, *dy).then_with(|| kx.cmp(ky)),
        (Node::Invalid(x), Node::Invalid(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

fn cmp_factors(x: &[(Id, u32)], y: &[(Id, u32)]) -> Ordering {
    first_difference(x, y, |(ax, kx), (ay, ky)| {
        cmp(*ax, *ay).then_with(|| ky.cmp(kx))
    })
    .unwrap_or_else(|| y.len().cmp(&x.len()))
}

/// Order of monomials inside a sum: higher degree first, then factor by factor.
pub(crate) fn cmp_mono(a: Id, b: Id) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let d = info(b).degree.cmp(&info(a).degree);
    if d != Ordering::Equal {
        return d;
    }
    let single = [(a, 1)];
    let single_b = [(b, 1)];
    let fa: &[(Id, u32)] = match node(a) {
        Node::Prod(f) => f,
        _ => &single,
    };
    let fb: &[(Id, u32)] = match node(b) {
        Node::Prod(f) => f,
        _ => &single_b,
    };
    cmp_factors(fa, fb)
}
