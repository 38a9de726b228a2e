//! The gathers, NumPy's fancy and boolean indexing ([`Op::Take`], [`Op::Compress`],
//! [`Op::BooleanMask`]): copies whose elements no strided view of the input can read; the
//! [`Selection`] the kernels gather (`symshape_kernels::gather`) into a fresh buffer, after
//! the rule both engines check (`crate::gather::indexed`).

use crate::check::Exact;
use crate::error::{unrepresentable, Result};
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
        let (shape, axis) = crate::gather::indexed(&mut Exact, shape, op, &|| ctx.to_string())?;
        // `indexed` put every index in `-dim..dim`.
        let from_end = |i: i64| if i < 0 { i + shape[axis] } else { i };
        let indices = match op {
            Op::Take { indices, .. } => indices.iter().map(|&i| from_end(i)).collect(),
            Op::Compress { mask, .. } | Op::BooleanMask(mask) => trues(mask),
            _ => Vec::new(),
        };
        Ok(Selection {
            shape,
            axis,
            indices,
        })
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
