//! The naive expression tree shared by the property tests: a plain enum, its BigInt
//! reference evaluation with floor semantics, and its construction as an `Expr`.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};
use symshape::{CmpOp, Expr};

/// The naive tree; `V(i)` is the `i`-th symbol of the test's scope.
#[derive(Clone, Debug)]
pub enum T {
    C(i64),
    V(usize),
    Add(Box<T>, Box<T>),
    Sub(Box<T>, Box<T>),
    Mul(Box<T>, Box<T>),
    Div(Box<T>, Box<T>),
    Mod(Box<T>, Box<T>),
    CDiv(Box<T>, Box<T>),
    Min(Box<T>, Box<T>),
    Max(Box<T>, Box<T>),
    Neg(Box<T>),
}

/// Boxes a tree, for building nested trees by hand.
pub fn bx(t: T) -> Box<T> {
    Box::new(t)
}

/// Reference value (`None` on division by zero) and the largest magnitude seen.
pub fn reference(t: &T, vals: &[i64], big: &mut BigInt) -> Option<BigInt> {
    let mut bin = |x: &T, y: &T| -> Option<(BigInt, BigInt)> {
        Some((reference(x, vals, big)?, reference(y, vals, big)?))
    };
    let r = match t {
        T::C(c) => BigInt::from(*c),
        T::V(i) => BigInt::from(vals[*i]),
        T::Add(x, y) => bin(x, y).map(|(x, y)| x + y)?,
        T::Sub(x, y) => bin(x, y).map(|(x, y)| x - y)?,
        T::Mul(x, y) => bin(x, y).map(|(x, y)| x * y)?,
        T::Div(x, y) => bin(x, y).and_then(|(x, y)| (!y.is_zero()).then(|| x.div_floor(&y)))?,
        T::Mod(x, y) => bin(x, y).and_then(|(x, y)| (!y.is_zero()).then(|| x.mod_floor(&y)))?,
        T::CDiv(x, y) => {
            bin(x, y).and_then(|(x, y)| (!y.is_zero()).then(|| -((-x).div_floor(&y))))?
        }
        T::Min(x, y) => bin(x, y).map(|(x, y)| x.min(y))?,
        T::Max(x, y) => bin(x, y).map(|(x, y)| x.max(y))?,
        T::Neg(x) => -reference(x, vals, big)?,
    };
    if r.abs() > *big {
        *big = r.abs();
    }
    Some(r)
}

/// The tree built through the public operators.
pub fn build(t: &T, syms: &[Expr]) -> Expr {
    let b = |x: &T| build(x, syms);
    match t {
        T::C(c) => Expr::from(*c),
        T::V(i) => syms[*i],
        T::Add(x, y) => b(x) + b(y),
        T::Sub(x, y) => b(x) - b(y),
        T::Mul(x, y) => b(x) * b(y),
        T::Div(x, y) => b(x).floor_div(b(y)),
        T::Mod(x, y) => b(x).floor_mod(b(y)),
        T::CDiv(x, y) => b(x).ceil_div(b(y)),
        T::Min(x, y) => b(x).min(b(y)),
        T::Max(x, y) => b(x).max(b(y)),
        T::Neg(x) => -b(x),
    }
}

/// `(x*step + offset) // divisor` when `div`, else `(x*step + offset) % divisor`: a flat
/// index split back into its parts.
pub fn split_index(x: T, step: T, offset: T, divisor: T, div: bool) -> T {
    let flat = bx(T::Add(bx(T::Mul(bx(x), bx(step))), bx(offset)));
    if div {
        T::Div(flat, bx(divisor))
    } else {
        T::Mod(flat, bx(divisor))
    }
}

/// Reference truth of `x op y`.
pub fn holds(op: CmpOp, x: &BigInt, y: &BigInt) -> bool {
    match op {
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
        CmpOp::Ge => x >= y,
        CmpOp::Gt => x > y,
    }
}
