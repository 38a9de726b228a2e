//! The gathers (NumPy's fancy and boolean indexing, [`Op::Take`], [`Op::Compress`],
//! [`Op::BooleanMask`]): their argument rule and result shape, written once over the size
//! type for both engines, and the result shape and guards of a gather on a symbolic view.
//! What the kernels read is `concrete::Selection`, built on the same rule.

use symshape::{CmpOp, Expr, Scope};

use crate::check::Check;
use crate::concrete::{trues, Selection};
use crate::dim::Size;
use crate::error::{at_axis, fmt_list, invalid, Result};
use crate::guard::{Guard, GuardOp};
use crate::op::Op;
use crate::view::View;

/// A count of selected indices as a size.
fn count<D: Size>(n: usize) -> D {
    D::from(i64::try_from(n).unwrap_or(i64::MAX))
}

/// NumPy's rule of a gather `op` on an input of `shape` (`ctx` names it in errors): every
/// index in `-dim..dim`, a mask with one entry per index of its axis (or per element, for
/// a boolean mask of the whole shape). Returns the shape the gather indexes (the input's,
/// or `[numel]` for a boolean mask) and the axis it selects along; the result is that
/// shape with the axis holding one index per selected one.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) naming the op: an axis out of range, an index
/// (proven) out of bounds, a mask (proven) of the wrong length, or an op that is not a
/// gather.
pub(crate) fn indexed<D: Size, C: Check<D>>(
    c: &mut C,
    shape: &[D],
    op: &Op<D>,
    ctx: &dyn Fn() -> String,
) -> Result<(Vec<D>, usize)> {
    let name = op.name();
    let zero = D::from(0);
    match op {
        Op::Take { axis, indices } => {
            let (a, d) = (*axis, at_axis(name, shape, *axis, ctx)?);
            for &i in indices {
                let out = || {
                    let ctx = ctx();
                    let at = format!("index {i} is out of bounds for axis {a} with size {d}");
                    invalid(name, format!("{at}, for {ctx}"))
                };
                // On `i64`, `i + d` leaves `i64` only for a positive `i`.
                if let Some(from_end) = i.try_add(d) {
                    let guard =
                        || format!("index {i} is at least -{d}, the negated size of axis {a}");
                    c.require(from_end, CmpOp::Ge, zero, guard, out)?;
                }
                let guard = || format!("index {i} is below the size of axis {a}");
                c.require(i, CmpOp::Lt, d, guard, out)?;
            }
            Ok((shape.to_vec(), a))
        }
        Op::Compress { axis, mask } => {
            let (a, d, n) = (*axis, at_axis(name, shape, *axis, ctx)?, mask.len());
            let guard = || format!("axis {a} has one index per mask entry");
            let wrong = || {
                let why =
                    format!("size of axis is {d} but size of corresponding boolean axis is {n}");
                let msg =
                    format!("boolean index did not match indexed array along axis {a}; {why}");
                invalid(name, format!("{msg}, for {}", ctx()))
            };
            c.require(d, CmpOp::Eq, count(n), guard, wrong)?;
            Ok((shape.to_vec(), a))
        }
        Op::BooleanMask(mask) => {
            let n = mask.len();
            let wrong = |m: &dyn std::fmt::Display| {
                let why = format!("the mask has {n} entries but {} has {m} elements", ctx());
                let msg = format!("boolean index did not match indexed array: {why}");
                invalid(name, format!("{msg} (one entry per element, row-major)"))
            };
            // The element count of a valid `i64` shape fits (its views' invariant).
            let numel = shape.iter().try_fold(D::from(1), |a, &d| a.try_mul(d));
            let numel = numel.ok_or_else(|| wrong(&"too many"))?;
            let guard = || {
                format!(
                    "the shape {} has one element per mask entry",
                    fmt_list(shape)
                )
            };
            c.require(numel, CmpOp::Eq, count(n), guard, || wrong(&numel))?;
            Ok((vec![numel], 0))
        }
        other => Err(invalid(
            name,
            format!("{other} is not a gather (take, compress or boolean_mask)"),
        )),
    }
}

/// The shape of a gather's result on `v` and the guards it holds under: exact for a
/// concrete view and constant arguments ([`Selection::of`]); otherwise the rule
/// [`indexed`], each index in `-dim..dim` and a mask's length proven or kept as guards.
///
/// # Errors
/// As [`indexed`]; [`Error::Guard`](crate::Error::Guard) for a condition proven false.
pub(crate) fn result_shape(cx: &Scope, v: &View, op: &Op) -> Result<(Vec<Expr>, Vec<Guard>)> {
    if let (Some(c), Some(k)) = (v.as_concrete(), op.to_const()) {
        let shape = Selection::of(c.shape(), &k, &v.ctx())?.result_shape();
        return Ok((shape.into_iter().map(Expr::from).collect(), Vec::new()));
    }
    let gop = match op {
        Op::Take { .. } => GuardOp::TAKE,
        Op::Compress { .. } => GuardOp::COMPRESS,
        _ => GuardOp::BOOLEAN_MASK,
    };
    let mut ck = crate::symbolic::checker(cx, gop, v);
    let (mut shape, axis) = indexed(&mut ck, v.shape(), op, &|| v.ctx())?;
    shape[axis] = count(match op {
        Op::Take { indices, .. } => indices.len(),
        Op::Compress { mask, .. } | Op::BooleanMask(mask) => trues(mask).len(),
        _ => 0,
    });
    Ok((shape, ck.guards))
}
