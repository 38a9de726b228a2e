//! [`ConcreteView::apply`]: one [`Op`] with constant arguments on the exact engine.

use super::ConcreteView;
use super::Selection;
use crate::check::Exact;
use crate::error::{invalid, Result};
use crate::lower_op::lower;
use crate::op::{CopyOp, Op};

impl ConcreteView {
    /// [`Op::Ravel`] or [`Op::Contiguous`]: the result when NumPy's `C_CONTIGUOUS` holds
    /// (the reshape to `[numel]`, or the view itself), else not one view (the op copies).
    fn view_or_copy(&self, copy: CopyOp) -> Result<Self> {
        if let Some(why) = copy.always() {
            return Err(copy.refusal(&self.ctx(), &why));
        }
        if copy.never() {
            return Ok(self.clone());
        }
        let why = match self.mask() {
            Some(_) => "it has a mask",
            None if self.numpy_flags()?.c_contiguous => {
                return match copy {
                    CopyOp::Ravel => self.reshape(&[self.numel()]),
                    _ => Ok(self.clone()),
                };
            }
            None => "it is not C-contiguous",
        };
        Err(copy.refusal(&self.ctx(), why))
    }

    /// Runs `op` on the exact engine.
    ///
    /// # Errors
    /// The op's own errors, as [`ViewOps`](crate::ViewOps) documents them: [`Error::Invalid`]
    /// for malformed arguments, [`Error::NotRepresentable`] when the result is not
    /// one view (a [`ViewStack`](crate::ViewStack) keeps such results exact),
    /// [`Error::Overflow`] when a field leaves `i64`.
    ///
    /// [`Error::Invalid`]: crate::Error::Invalid
    /// [`Error::NotRepresentable`]: crate::Error::NotRepresentable
    /// [`Error::Overflow`]: crate::Error::Overflow
    pub fn apply(&self, op: &Op<i64>) -> Result<Self> {
        op.check_rank(self.ndim(), || self.ctx())?;
        let ctx = || self.ctx();
        if let Some(low) = lower(&mut Exact, self.shape(), &ctx, op)? {
            if let (Op::Squeeze(_) | Op::SqueezeProven, [Op::Reshape(s)]) = (op, &low.ops[..]) {
                return self.drop_unit_axes("squeeze", s);
            }
            let mut v = self.clone();
            for k in &low.ops {
                v = v.apply(k).map_err(|e| low.error(e))?;
            }
            return Ok(v);
        }
        self.apply_core(op)
    }

    /// Runs `op`, a core op whose result rank is checked, on the exact engine.
    pub(crate) fn apply_core(&self, op: &Op<i64>) -> Result<Self> {
        match op {
            Op::Reshape(s) => self.reshape(s),
            Op::Expand(s) => self.expand(s),
            Op::Permute(a) => self.permute(a),
            Op::Shrink(b) => self.shrink(b),
            Op::Pad(p) => self.pad(p),
            Op::Flip(a) => self.flip_axes(a),
            Op::Index(items) => self.index(items),
            // The rules of `fields/unfold.rs`.
            Op::Unfold { axis, size, step } => {
                // Windows over a view with elements but no valid one have none either,
                // however they cut its mask: the result is all masked.
                let none_valid = *size > 0 && self.numel() > 0 && self.is_empty();
                let mut f = self.to_fields();
                f.mask = f.mask.filter(|_| !none_valid);
                f.unfold(&mut Exact, (*axis, *size, *step), &|| self.ctx())?;
                match none_valid {
                    true => Self::all_masked("unfold", &f.shape),
                    false => Self::build("unfold", f.shape, f.strides, f.offset, f.mask),
                }
            }
            Op::Diagonal { offset, dim1, dim2 } => {
                let mut f = self.to_fields();
                f.diagonal(&mut Exact, (*offset, *dim1, *dim2), &|| self.ctx())?;
                Self::build("diagonal", f.shape, f.strides, f.offset, f.mask)
            }
            Op::Unsqueeze(axis) => self.unsqueeze(*axis),
            Op::Split { axis, size, piece } => self.split_piece(*axis, *size, *piece),
            Op::SplitSizes { axis, sizes, piece } => self.split_sizes_piece(*axis, sizes, *piece),
            Op::Chunk {
                axis,
                chunks,
                piece,
            } => self.chunk_piece(*axis, *chunks, *piece),
            Op::TensorSplit {
                axis,
                sections,
                piece,
            } => self.tensor_split_piece(*axis, *sections, *piece),
            Op::Reinterpret { .. } | Op::ViewAsReal | Op::ViewAsComplex | Op::Real | Op::Imag => {
                let mut f = self.to_fields();
                f.read_elements(&mut Exact, op, &|| self.ctx())?;
                Self::build(op.name(), f.shape, f.strides, f.offset, f.mask)
            }
            Op::Ravel | Op::Contiguous | Op::Copy | Op::FlattenCopy | Op::AsType { .. } => {
                match CopyOp::of(op) {
                    Some(copy) => self.view_or_copy(copy),
                    None => Ok(self.clone()),
                }
            }
            Op::ViewShape(s) => self.view_shape(s),
            Op::AsStrided {
                shape,
                strides,
                offset,
            } => self.torch_as_strided(shape, strides, *offset),
            Op::Take { .. } | Op::Compress { .. } | Op::BooleanMask(_) => {
                let ctx = self.ctx();
                Selection::of(self.shape(), op, &ctx)?;
                Err(super::gather_copies(op.name(), &ctx))
            }
            // Every derived op was lowered above.
            _ => Err(invalid(op.name(), format!("{} is a derived op", op.name()))),
        }
    }
}
