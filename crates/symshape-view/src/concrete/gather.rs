//! The gathers, NumPy's fancy and boolean indexing ([`Op::Take`], [`Op::Compress`],
//! [`Op::BooleanMask`]): copies whose elements no strided view of the input can read. The
//! exact rule: argument checks and the [`Selection`] the kernels gather
//! (`symshape_kernels::gather`) into a fresh buffer.

use crate::error::{bad_axis, invalid, unrepresentable, Result};
use crate::op::Op;

/// What a gather reads: along `axis` of an input of `shape`, the listed indices in order;
/// the other axes whole. A boolean mask of the whole shape reads the input flattened, so
/// its `shape` is `[numel]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The shape the selection indexes: the input's, or `[numel]` for a boolean mask of
    /// the whole shape.
    pub shape: Vec<i64>,
    /// The axis the indices select along.
    pub axis: usize,
    /// The selected indices of `axis`, each in `0..shape[axis]`, in the result's order.
    pub indices: Vec<i64>,
}

impl Selection {
    /// The shape of the result: `shape` with `axis` holding one index per selected one (a
    /// selection built by hand with `axis` past its shape leaves the shape as it is).
    #[must_use]
    pub fn result_shape(&self) -> Vec<i64> {
        let mut out = self.shape.clone();
        if let Some(d) = out.get_mut(self.axis) {
            *d = i64::try_from(self.indices.len()).unwrap_or(i64::MAX);
        }
        out
    }

    /// For a gather op with constant arguments on an input of `shape` (described by `ctx`
    /// in messages): what it reads, after NumPy's checks (indices in `-dim..dim`, negative
    /// ones counted from the end; a boolean mask with one entry per index or element).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) naming the op: an axis out of range, an
    /// index out of bounds, a mask of the wrong length, or an op that is not a gather.
    pub fn of(shape: &[i64], op: &Op<i64>, ctx: &str) -> Result<Selection> {
        let name = op.name();
        let size_of = |axis: usize| {
            shape
                .get(axis)
                .copied()
                .ok_or_else(|| bad_axis(name, ctx, axis, shape.len()))
        };
        match op {
            Op::Take { axis, indices } => {
                let d = size_of(*axis)?;
                let indices = indices
                    .iter()
                    .map(|&i| {
                        let at = if i < 0 { i.checked_add(d) } else { Some(i) };
                        at.filter(|&x| (0..d).contains(&x)).ok_or_else(|| {
                            invalid(
                                name,
                                format!(
                                    "index {i} is out of bounds for axis {axis} with size {d}, for {ctx}"
                                ),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Selection {
                    shape: shape.to_vec(),
                    axis: *axis,
                    indices,
                })
            }
            Op::Compress { axis, mask } => {
                let d = size_of(*axis)?;
                if i64::try_from(mask.len()).ok() != Some(d) {
                    return Err(invalid(
                        name,
                        format!(
                            "boolean index did not match indexed array along axis {axis}; size of axis is {d} but size of corresponding boolean axis is {}, for {ctx}",
                            mask.len()
                        ),
                    ));
                }
                Ok(Selection {
                    shape: shape.to_vec(),
                    axis: *axis,
                    indices: trues(mask),
                })
            }
            Op::BooleanMask(mask) => {
                // The element count of a valid shape fits (its views' invariant).
                let n = shape.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
                if n != i64::try_from(mask.len()).ok() {
                    return Err(invalid(
                        name,
                        format!(
                            "boolean index did not match indexed array: the mask has {} entries but {ctx} has {} elements (one entry per element, row-major)",
                            mask.len(),
                            n.map_or_else(|| "too many".to_string(), |n| n.to_string())
                        ),
                    ));
                }
                Ok(Selection {
                    shape: vec![n.unwrap_or(0)],
                    axis: 0,
                    indices: trues(mask),
                })
            }
            other => Err(invalid(
                name,
                format!("{other} is not a gather (take, compress or boolean_mask)"),
            )),
        }
    }
}

/// The positions of the true entries.
pub(crate) fn trues(mask: &[bool]) -> Vec<i64> {
    mask.iter()
        .zip(0i64..)
        .filter(|(&b, _)| b)
        .map(|(_, i)| i)
        .collect()
}

/// The refusal of a gather on one view: its result is a new buffer, not a view.
pub(crate) fn gather_copies(op_name: &'static str, ctx: &str) -> crate::Error {
    unrepresentable(
        op_name,
        format!(
            "NumPy's {} of {ctx} is a copy: its elements are gathered into a new buffer; use a ViewStack, whose result is a new stack over that buffer (the kernels fill it with symshape_kernels::gather)",
            match op_name {
                "take" => "fancy indexing",
                _ => "boolean indexing",
            }
        ),
    )
}
