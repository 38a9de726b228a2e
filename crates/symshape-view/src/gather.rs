//! The gathers on symbolic views (NumPy's fancy and boolean indexing, [`Op::Take`],
//! [`Op::Compress`], [`Op::BooleanMask`]): the result's shape as expressions, and the
//! guards it holds under. The concrete rule is `concrete::Selection`.

use symshape::{CmpOp, Expr, Scope};

use crate::concrete::{trues, Selection};
use crate::error::{invalid, Result};
use crate::guard::{Guard, GuardOp};
use crate::op::Op;
use crate::view::{fmt_list, View};

fn count(n: usize) -> Expr {
    Expr::from(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The shape of a gather's result on `v` and the guards it holds under: exact for a
/// concrete view and constant arguments; on a symbolic one, each index must lie in
/// `-dim..dim` and a mask's length must equal the axis size (or the element count),
/// proven or kept as guards.
///
/// # Errors
/// As [`Selection::of`]; [`Error::Guard`](crate::Error::Guard) for a condition proven false.
pub(crate) fn result_shape(cx: &Scope, v: &View, op: &Op) -> Result<(Vec<Expr>, Vec<Guard>)> {
    if let (Some(c), Some(k)) = (v.as_concrete(), op.to_const()) {
        let sel = Selection::of(c.shape(), &k, &v.ctx())?;
        return Ok((
            sel.result_shape().into_iter().map(Expr::from).collect(),
            Vec::new(),
        ));
    }
    let name = op.name();
    let (gop, axis) = match op {
        Op::Take { axis, .. } => (GuardOp::TAKE, Some(*axis)),
        Op::Compress { axis, .. } => (GuardOp::COMPRESS, Some(*axis)),
        Op::BooleanMask(_) => (GuardOp::BOOLEAN_MASK, None),
        other => {
            return Err(invalid(
                name,
                format!("{other} is not a gather (take, compress or boolean_mask)"),
            ))
        }
    };
    let d = match axis {
        Some(a) => Some(v.dim_for(name, a)?),
        None => None,
    };
    let mut ck = crate::symbolic::checker(cx, gop, v);
    let mut shape = v.shape().to_vec();
    match (op, axis, d) {
        (Op::Take { indices, .. }, Some(a), Some(d)) => {
            for &i in indices {
                ck.require(i + d, CmpOp::Ge, Expr::from(0), || {
                    format!("index {i} is at least -{d}, the negated size of axis {a}")
                })?;
                ck.require(i, CmpOp::Lt, d, || {
                    format!("index {i} is below the size of axis {a}")
                })?;
            }
            shape[a] = count(indices.len());
        }
        (Op::Compress { mask, .. }, Some(a), Some(d)) => {
            ck.require(d, CmpOp::Eq, count(mask.len()), || {
                format!("axis {a} has one index per mask entry")
            })?;
            shape[a] = count(trues(mask).len());
        }
        (Op::BooleanMask(mask), ..) => {
            ck.require(v.numel(), CmpOp::Eq, count(mask.len()), || {
                format!(
                    "the shape {} has one element per mask entry",
                    fmt_list(v.shape())
                )
            })?;
            shape = vec![count(trues(mask).len())];
        }
        _ => {}
    }
    Ok((shape, ck.guards))
}
