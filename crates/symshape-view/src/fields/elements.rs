//! The element-size ops written once over the size type for both engines: PyTorch's
//! `view(dtype)` (`reinterpret`) and its special cases, the complex views
//! (`view_as_real`, `real` and `imag` read a complex element as two reals,
//! `view_as_complex` reads two reals as one complex element).
//!
//! A change of element size by a ratio `r` rescales the last axis (which must have
//! stride 1) and multiplies or divides the other strides and the offset by `r`;
//! dividing requires each to be a multiple of `r`, which [`Check`] decides (`i64`) or
//! proves or guards (`Expr`). An axis of size 1 never uses its stride, so one that is
//! not a multiple of `r` becomes 0 (PyTorch gives such axes a product of sizes).

use std::fmt;

use symshape::CmpOp;

use super::Check;
use crate::dim::Size;
use crate::error::{invalid, overflow, refuse_mask, Error, Result};
use crate::layout::BYTES;
use crate::op::Op;
use crate::view::Fields;

/// What the complex views read a view as.
const COMPLEX: &str = "a strided complex tensor";

/// A field that a change of element size scales.
#[derive(Clone, Copy)]
enum Part {
    /// The size of the last axis.
    Size,
    /// The stride of an axis before the last.
    Stride(usize),
    /// The offset.
    Offset,
}

impl fmt::Display for Part {
    /// `size of the last axis`, `stride of axis 0`, `offset`; `{:#}` leaves out the axis.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::Size => f.write_str("size of the last axis"),
            Part::Stride(a) if !f.alternate() => write!(f, "stride of axis {a}"),
            Part::Stride(_) => f.write_str("stride"),
            Part::Offset => f.write_str("offset"),
        }
    }
}

/// Whether `op` is one of the element-size ops, which read a whole stack.
pub(crate) fn is_element_op<A>(op: &Op<A>) -> bool {
    matches!(
        op,
        Op::Reinterpret { .. } | Op::ViewAsReal | Op::ViewAsComplex | Op::Real | Op::Imag
    )
}

/// The refusal of an element-size op on a stack of `views` views: only one view has
/// element strides to rescale (`reinterpret` between equal sizes changes nothing).
///
/// # Errors
/// For an element-size op on a stack of more than one view.
#[inline]
pub(crate) fn refuse_stack<A>(op: &Op<A>, views: usize) -> Result<()> {
    if views <= 1 {
        return Ok(());
    }
    let read = match op {
        Op::Reinterpret { from, to } if from != to => {
            format!("reinterpreted from {from}-byte to {to}-byte elements")
        }
        Op::ViewAsComplex => "read as complex elements".to_string(),
        Op::ViewAsReal | Op::Real | Op::Imag => "read as pairs of reals".to_string(),
        _ => return Ok(()),
    };
    Err(invalid(
        op.name(),
        format!("a stack of {views} views cannot be {read}: only a one-view stack has element strides to rescale; materialize it first"),
    ))
}

impl<D: Size> Fields<D> {
    /// Runs `op`, one of the element-size ops (`reinterpret`, `view_as_real`,
    /// `view_as_complex`, `real`, `imag`); `ctx` names the view in errors.
    ///
    /// # Errors
    /// The op's refusals (a mask, a rank, a stride or offset that does not divide), an
    /// `i64` field that leaves `i64`, or any other op.
    pub(crate) fn read_elements<C: Check<D>, A>(
        &mut self,
        c: &mut C,
        op: &Op<A>,
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        match op {
            Op::Reinterpret { from, to } => self.reinterpret(c, *from, *to, ctx),
            Op::ViewAsReal => self.view_as_real("view_as_real", ctx),
            Op::ViewAsComplex => self.view_as_complex(c, ctx),
            Op::Real => self.complex_part("real", 0, ctx),
            Op::Imag => self.complex_part("imag", 1, ctx),
            _ => Err(invalid(
                op.name(),
                format!("{} keeps the element size", op.name()),
            )),
        }
    }

    /// The refusal of `op`, which reads the view as `what`, of a mask (`what` has none).
    fn unmasked(&self, op: &'static str, what: &str, ctx: &dyn Fn() -> String) -> Result<()> {
        match self.mask {
            Some(_) => Err(refuse_mask(op, ctx(), what)),
            None => Ok(()),
        }
    }

    /// Whether the view has no elements (an axis of size 0, decided or proven), setting
    /// its strides and offset to 0 (the canonical zero-size form) when it has none. A view
    /// that reads no byte is subject only to the element-size ops' conditions on its shape
    /// (a zero-size view's strides are arbitrary, 0 once canonical).
    fn zero_if_empty<C: Check<D>>(&mut self, c: &C) -> bool {
        let zero = D::from(0);
        let empty = self.shape.iter().any(|&x| c.holds(x, CmpOp::Eq, zero));
        if empty {
            self.strides.fill(zero);
            self.offset = zero;
        }
        empty
    }

    /// PyTorch's `view(dtype)`: elements of `from` bytes read as elements of `to` bytes.
    /// Equal sizes change nothing. Otherwise the view must have no mask and at least
    /// one axis, the larger size must be a multiple of the smaller, and the last axis
    /// stride 1 (unless it is of size 1); with the ratio `r`, smaller elements multiply
    /// the size of the last axis, the other strides and the offset by `r`, larger ones
    /// divide them, each required to be a multiple of `r`. A view of no elements (an axis
    /// of size 0, decided or proven) has only the conditions on its shape, and its
    /// strides and offset are 0 ([`zero_if_empty`](Self::zero_if_empty)).
    fn reinterpret<C: Check<D>>(
        &mut self,
        c: &mut C,
        from: usize,
        to: usize,
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        const OP: &str = "reinterpret";
        if from == 0 || to == 0 {
            return Err(invalid(
                OP,
                format!(
                    "element sizes {from} and {to} bytes must be positive, for {}",
                    ctx()
                ),
            ));
        }
        if from == to {
            return Ok(());
        }
        let what = || format!("{from}-byte elements as {to}-byte elements");
        self.unmasked(OP, BYTES, ctx)?;
        let Some(last) = self.shape.len().checked_sub(1) else {
            return Err(invalid(
                OP,
                format!("cannot view {}: a view of rank 0 cannot be reinterpreted when the element sizes differ ({})", what(), ctx()),
            ));
        };
        if from % to != 0 && to % from != 0 {
            return Err(invalid(
                OP,
                format!(
                    "cannot view {}: neither element size divides the other, for {}",
                    what(),
                    ctx()
                ),
            ));
        }
        let (d, t, one) = (self.shape[last], self.strides[last], D::from(1));
        let empty = self.zero_if_empty(c);
        if !empty && !c.holds(d, CmpOp::Eq, one) {
            c.require(
                t,
                CmpOp::Eq,
                one,
                || "the last axis has stride 1 (the element sizes differ)".to_string(),
                || invalid(OP, format!("cannot view {}: the last axis must have stride 1 when the element sizes differ, but it has stride {t} in {}", what(), ctx())),
            )?;
        }
        if from > to {
            let r = from / to;
            self.scale_up(last, r, &|part, x| {
                overflow(OP, format!("{part:#} {x} times the ratio {r} of {}", ctx()))
            })?;
        } else {
            let r = to / from;
            self.scale_down(
                c,
                (last, r, true),
                &|part| format!("the {part} is divisible by the ratio {r} of the element sizes"),
                &|part, x| invalid(OP, format!("cannot view {}: the {part} {x} is not divisible by the ratio {r} of the element sizes, in {}", what(), ctx())),
            )?;
        }
        if !empty {
            self.strides[last] = one;
        }
        Ok(())
    }

    /// Multiplies the size of `last`, the strides before it and the offset by `r`, in
    /// that order, for elements `r` times smaller; `too_big` is the error for a part
    /// whose `i64` product leaves `i64`.
    fn scale_up(
        &mut self,
        last: usize,
        r: usize,
        too_big: &dyn Fn(Part, D) -> Error,
    ) -> Result<()> {
        let times = |part: Part, x: D| x.try_mul_ratio(r).ok_or_else(|| too_big(part, x));
        self.shape[last] = times(Part::Size, self.shape[last])?;
        for a in 0..last {
            self.strides[a] = times(Part::Stride(a), self.strides[a])?;
        }
        self.offset = times(Part::Offset, self.offset)?;
        Ok(())
    }

    /// Divides the size of `last` (when `size` is set), the strides before it and the
    /// offset by `r`, in that order, for elements `r` times larger: each must be a
    /// multiple of `r` (`guard` words the requirement, `error` its failure for a
    /// value), except the stride of an axis of size 1, which becomes 0 when it is not.
    fn scale_down<C: Check<D>>(
        &mut self,
        c: &mut C,
        (last, r, size): (usize, usize, bool),
        guard: &dyn Fn(Part) -> String,
        error: &dyn Fn(Part, D) -> Error,
    ) -> Result<()> {
        let (zero, one) = (D::from(0), D::from(1));
        let whole = |c: &mut C, part: Part, x: D| -> Result<D> {
            c.require(
                x.rem_ratio(r),
                CmpOp::Eq,
                zero,
                || guard(part),
                || error(part, x),
            )?;
            Ok(x.div_ratio(r))
        };
        if size {
            self.shape[last] = whole(c, Part::Size, self.shape[last])?;
        }
        for a in 0..last {
            let t = self.strides[a];
            let unused =
                c.holds(self.shape[a], CmpOp::Eq, one) && !c.holds(t.rem_ratio(r), CmpOp::Eq, zero);
            self.strides[a] = if unused {
                zero
            } else {
                whole(c, Part::Stride(a), t)?
            };
        }
        self.offset = whole(c, Part::Offset, self.offset)?;
        Ok(())
    }

    /// PyTorch's `view_as_real` (errors under `op`): a view of complex elements read as
    /// reals, with an axis of size 2 and stride 1 appended (real part, then imaginary
    /// part) and the other strides and the offset doubled: a change to elements half
    /// the size on a new last axis of size 1.
    fn view_as_real(&mut self, op: &'static str, ctx: &dyn Fn() -> String) -> Result<()> {
        self.unmasked(op, COMPLEX, ctx)?;
        let last = self.shape.len();
        self.shape.push(D::from(1));
        self.strides.push(D::from(1));
        self.scale_up(last, 2, &|part, x| {
            overflow(op, format!("{part:#} {x} doubled, of {}", ctx()))
        })
    }

    /// PyTorch's `real` (`index` 0) or `imag` (1) of a complex view, named `op`:
    /// [`view_as_real`](Self::view_as_real), then index `index` of the pair axis, which
    /// is never added (on a view of the largest rank it would be one axis too many).
    fn complex_part(
        &mut self,
        op: &'static str,
        index: i64,
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        let pair = self.shape.len();
        self.view_as_real(op, ctx)?;
        // The doubled `i64` offset is even, so it stays below i64::MAX with the index.
        self.keep_range(pair, D::from(index), D::from(index + 1), true);
        self.shape.truncate(pair);
        self.strides.truncate(pair);
        Ok(())
    }

    /// PyTorch's `view_as_complex`, the inverse of `view_as_real`, with PyTorch's
    /// reasons: rank at least 1, the last axis of size 2 and stride 1, every other
    /// stride and the offset even (but for a view of no elements, which has only the
    /// conditions on its shape); then a change to elements twice the size, and the last
    /// axis (now of size 1) removed.
    fn view_as_complex<C: Check<D>>(&mut self, c: &mut C, ctx: &dyn Fn() -> String) -> Result<()> {
        const OP: &str = "view_as_complex";
        self.unmasked(OP, COMPLEX, ctx)?;
        let fail = |why: String| invalid(OP, format!("{why}, in {}", ctx()));
        let Some(last) = self.shape.len().checked_sub(1) else {
            return Err(fail(
                "Input tensor must have one or more dimensions".to_string(),
            ));
        };
        let (d, t) = (self.shape[last], self.strides[last]);
        // PyTorch's condition on the last axis, `what` of it, and its words.
        let last_axis = |c: &mut C, x: D, is: i64, what: &str| {
            c.require(
                x,
                CmpOp::Eq,
                D::from(is),
                || format!("Tensor must have a last dimension {what} {is}"),
                || {
                    fail(format!(
                        "Tensor must have a last dimension {what} {is}, not {x}"
                    ))
                },
            )
        };
        last_axis(c, d, 2, "of size")?;
        if !self.zero_if_empty(c) {
            last_axis(c, t, 1, "with stride")?;
        }
        self.scale_down(
            c,
            (last, 2, false),
            &|part| match part {
                Part::Stride(a) => format!(
                    "Tensor must have a stride divisible by 2 for all but last dimension (axis {a})"
                ),
                _ => "Tensor must have a storage_offset divisible by 2".to_string(),
            },
            &|part, x| {
                fail(match part {
                    Part::Stride(a) => format!("Tensor must have a stride divisible by 2 for all but last dimension; axis {a} has stride {x}"),
                    _ => format!("Tensor must have a storage_offset divisible by 2, not {x}"),
                })
            },
        )?;
        self.shape.truncate(last);
        self.strides.truncate(last);
        Ok(())
    }
}
