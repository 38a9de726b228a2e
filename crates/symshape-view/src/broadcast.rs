//! [`broadcast_shapes`]: NumPy's broadcast of several shapes whose sizes are
//! expressions, with guards where an equality is not proven.

use std::fmt;

use symshape::{CmpOp, Expr, Scope};

use crate::check::Check;
use crate::dim::{consts, exprs, Dim, Size};
use crate::error::{fmt_list, invalid, Error, Result};
use crate::guard::{texts, Checker, Guard, GuardOp};

/// The result of [`broadcast_shapes`]: the broadcast shape and the guards it
/// holds under.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub struct Broadcast {
    /// The broadcast shape, right-aligned as NumPy aligns it.
    pub shape: Vec<Expr>,
    /// What the shape needs and no proof under the scope settled: sizes
    /// non-negative, and equal sizes where neither is provably 1. Check them with
    /// [`Guard::check`] once the symbols are bound (views built on the shape
    /// carry their own guards and do not inherit these).
    pub guards: Vec<Guard>,
}

impl fmt::Display for Broadcast {
    /// `[n, 4]`, then one line per guard.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", fmt_list(&self.shape))?;
        for g in &self.guards {
            write!(f, "\nguard {g}")?;
        }
        Ok(())
    }
}

/// NumPy's broadcast of several shapes, over `i64` sizes or expressions.
///
/// Shapes are right-aligned; a missing axis counts as size 1. For each axis and
/// each pair of sizes `x` (so far) and `y` (next shape):
///
/// 1. `x` and `y` provably equal under `cx` (the same expression included): `x`;
/// 2. `y` provably 1: `x`; else `x` provably 1: `y`;
/// 3. `x` and `y` not provably different: `x`, under the guard `x == y`. Whether
///    a size is 1 would otherwise decide which size wins, so a size that is not
///    provably 1 is taken as not broadcast (as [`Op::Expand`](crate::Op::Expand)
///    takes it);
/// 4. provably different: one of them is 1 under a guard, `y` unless `y` is
///    provably not 1, and the result is the other; both provably not 1 is an
///    error (naming the guards the proof used, if any).
///
/// Every size must be non-negative: provably, or under a guard. With constant
/// sizes only this is [`concrete::broadcast_shapes`](crate::concrete::broadcast_shapes)
/// and gives no guard.
///
/// ```
/// use symshape::Scope;
/// use symshape_view::broadcast_shapes;
///
/// let mut cx = Scope::new();
/// let b = cx.declare_str("b 1..=64")?;
/// let s = cx.declare_str("s 1..=4096")?;
/// let t = cx.declare_str("t 1..=4096")?;
/// let r = broadcast_shapes(&cx, &[&[b, 1.into(), s], &[s], &[1.into(), 12.into(), 1.into()]])?;
/// assert_eq!(r.to_string(), "[b, 12, s]");
/// let r = broadcast_shapes(&cx, &[&[s, 8.into()], &[t, 1.into()]])?;
/// assert_eq!(r.to_string(), "[s, 8]\nguard broadcast_shapes: s == t (axis -2 has equal sizes or size 1)");
/// // Sizes provably different and provably not 1 never broadcast.
/// assert!(broadcast_shapes(&cx, &[&[s + 1], &[s + 2]]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) as the concrete broadcast for
/// constant sizes, and when two sizes are provably different and neither is 1;
/// [`Error::Guard`](crate::Error::Guard) naming the shapes when a size is
/// provably negative; [`Error::Symshape`](crate::Error::Symshape) when an expression exceeds the
/// budgets.
pub fn broadcast_shapes<D: Dim>(cx: &Scope, shapes: &[&[D]]) -> Result<Broadcast> {
    let constant: Option<Vec<Vec<i64>>> = shapes.iter().map(|s| consts(s)).collect();
    if let Some(c) = constant {
        let refs: Vec<&[i64]> = c.iter().map(Vec::as_slice).collect();
        let shape = crate::concrete::broadcast_shapes(&refs)?;
        return Ok(Broadcast {
            shape: shape.into_iter().map(Expr::from).collect(),
            guards: Vec::new(),
        });
    }
    let shapes: Vec<Vec<Expr>> = shapes.iter().map(|s| exprs(s)).collect();
    let ctx = || {
        let all: Vec<String> = shapes.iter().map(|s| fmt_list(s)).collect();
        format!("shapes {}", all.join(", "))
    };
    let mut ck = Checker::new(cx, GuardOp::BROADCAST_SHAPES, &[], ctx());
    let refs: Vec<&[Expr]> = shapes.iter().map(Vec::as_slice).collect();
    let shape = broadcast(&mut ck, &refs)?;
    Ok(Broadcast {
        shape,
        guards: ck.guards,
    })
}

/// The rule of [`broadcast_shapes`], written once over the size type: on `i64` every
/// comparison is decided, so only the first two cases and the error of the fourth apply
/// (NumPy's rule).
pub(crate) fn broadcast<D: Size, C: Check<D>>(c: &mut C, shapes: &[&[D]]) -> Result<Vec<D>> {
    let one = D::from(1);
    let mut res: Vec<D> = Vec::new();
    for (i, s) in shapes.iter().enumerate() {
        crate::engine::require_broadcast_operand(c, i, s)?;
        let n = res.len().max(s.len());
        let mut out = Vec::with_capacity(n);
        for k in 0..n {
            let pick = |v: &[D]| (k + v.len()).checked_sub(n).map_or(one, |i| v[i]);
            let (x, y) = (pick(&res), pick(s));
            let axis = k as i64 - n as i64;
            let differ = |pending: &[Guard]| differ(C::EXACT, pending, [&res, s], [x, y], axis);
            let size = if x == y || c.holds(x, CmpOp::Eq, y) || c.holds(y, CmpOp::Eq, one) {
                x
            } else if c.holds(x, CmpOp::Eq, one) {
                y
            } else if !c.holds(x, CmpOp::Ne, y) {
                // Only an `Expr` gets here: unequal `i64` sizes are provably different.
                c.require(
                    x,
                    CmpOp::Eq,
                    y,
                    || format!("axis {axis} has equal sizes or size 1"),
                    || differ(&[]),
                )?;
                x
            } else if c.holds(x, CmpOp::Ne, one) && c.holds(y, CmpOp::Ne, one) {
                return Err(differ(c.pending()));
            } else {
                // Provably different: one of them must be 1, the one that can be.
                let (keep, unit) = if c.holds(y, CmpOp::Ne, one) {
                    (y, x)
                } else {
                    (x, y)
                };
                c.require(
                    unit,
                    CmpOp::Eq,
                    one,
                    || format!("axis {axis} has different sizes, so this one is 1"),
                    || differ(&[]),
                )?;
                keep
            };
            out.push(c.settle(size));
        }
        res = out;
    }
    Ok(res)
}

/// The error for sizes `x` and `y` of `axis` of the broadcast so far and the next shape,
/// different and neither 1 (provably, for `Expr`: not `exact`), naming the pending guards
/// when the proof needs them.
fn differ<D: Size>(
    exact: bool,
    pending: &[Guard],
    [res, s]: [&[D]; 2],
    [x, y]: [D; 2],
    axis: i64,
) -> Error {
    let mut msg = format!(
        "shapes {} and {} do not broadcast: axis {axis} has sizes {x} and {y}",
        fmt_list(res),
        fmt_list(s)
    );
    if !exact {
        msg.push_str(", different and neither 1");
    }
    if !pending.is_empty() {
        msg.push_str(&format!(
            " under the guards of the earlier axes and shapes ({})",
            texts(pending)
        ));
    }
    invalid("broadcast_shapes", msg)
}
