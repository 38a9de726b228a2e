//! The naive expression tree shared by the property tests: a plain enum, its BigInt
//! reference evaluation with floor semantics, and its construction as an `Expr`.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};
use symshape::Expr;

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
    let bin = |x: &T, y: &T| (build(x, syms), build(y, syms));
    match t {
        T::C(c) => Expr::from(*c),
        T::V(i) => syms[*i],
        T::Add(x, y) => {
            let (a, b) = bin(x, y);
            a + b
        }
        T::Sub(x, y) => {
            let (a, b) = bin(x, y);
            a - b
        }
        T::Mul(x, y) => {
            let (a, b) = bin(x, y);
            a * b
        }
        T::Div(x, y) => {
            let (a, b) = bin(x, y);
            a.floor_div(b)
        }
        T::Mod(x, y) => {
            let (a, b) = bin(x, y);
            a.floor_mod(b)
        }
        T::CDiv(x, y) => {
            let (a, b) = bin(x, y);
            a.ceil_div(b)
        }
        T::Min(x, y) => {
            let (a, b) = bin(x, y);
            a.min(b)
        }
        T::Max(x, y) => {
            let (a, b) = bin(x, y);
            a.max(b)
        }
        T::Neg(x) => -build(x, syms),
    }
}
