//! The field rules of `unfold` (sliding windows) and `diagonal`, written once over the
//! size type for both engines ([`Check`] also decides an offset's sign and the mask of
//! windows over a masked axis).

use symshape::CmpOp;

use crate::check::Check;
use crate::dim::Size;
use crate::error::{at_axis, invalid, overflow, unrepresentable, Result};
use crate::view::Fields;

impl<D: Size> Fields<D> {
    /// PyTorch's `unfold`: `n = (dim - size) // step + 1` windows of `size` indices every
    /// `step` along `axis` (then of stride `stride * step`), the window axis (of stride
    /// `stride`) appended last; `ctx` names the view in errors. `false` when only values
    /// decide whether the windows cut a mask on `axis` into one box (`Expr`; the fields
    /// are then half changed).
    ///
    /// # Errors
    /// When `axis` is out of range or the window or step (provably) does not fit it; on
    /// `i64`, when the count or stride leaves `i64` or the windows cut the mask unevenly.
    pub(crate) fn unfold<C: Check<D>>(
        &mut self,
        c: &mut C,
        (axis, size, step): (usize, D, D),
        ctx: &dyn Fn() -> String,
    ) -> Result<bool> {
        const OP: &str = "unfold";
        let (d, t) = (at_axis(OP, &self.shape, axis, ctx)?, self.strides[axis]);
        let (zero, one) = (D::from(0), D::from(1));
        let misfit = || {
            let what = format!("window size {size} and step {step} do not fit axis {axis}");
            invalid(OP, format!("{what} of size {d} of {}", ctx()))
        };
        let non_negative = || "window size is non-negative".to_string();
        c.require(size, CmpOp::Ge, zero, non_negative, misfit)?;
        let at_most = || format!("window size is at most the size of axis {axis}");
        c.require(size, CmpOp::Le, d, at_most, misfit)?;
        c.require(step, CmpOp::Ge, one, || "step is positive".into(), misfit)?;
        // 0 <= size <= dim and step >= 1: a floor quotient, at most `dim`.
        let room = d - size;
        let n = room.floor_quot(step).try_add(one);
        let n =
            n.ok_or_else(|| overflow(OP, format!("window count along axis {axis} of {}", ctx())))?;
        // One window never moves: an `i64` stride keeps `t` there (no overflow); an
        // `Expr` one that may not evaluate (a step beyond the axis) has the step cut to
        // `max(room, 1)`, no change with two windows or more (`step <= room`).
        let too_big = || overflow(OP, format!("stride {t} times step {step} of {}", ctx()));
        self.strides[axis] = match t.try_mul(step) {
            _ if C::EXACT && c.holds(n, CmpOp::Le, one) => t,
            Some(s) if fits(c, s) => s,
            _ if C::EXACT => return Err(too_big()),
            _ => t * step.min_of(room.max_of(one)),
        };
        self.shape[axis] = n;
        self.shape.push(size);
        self.strides.push(t);
        let Some(m) = &mut self.mask else {
            return Ok(true);
        };
        let (b, e) = m[axis];
        // Windows of no index have no valid element: any mask will do.
        let full = c.holds(b, CmpOp::Eq, zero) && c.holds(e, CmpOp::Eq, d);
        let ranges = if full || c.holds(size, CmpOp::Eq, zero) {
            Some([(zero, n), (zero, size)])
        } else {
            c.windows_box((b, e), n, size, step)
        };
        match ranges {
            Some([w, k]) => {
                m[axis] = w;
                m.push(k);
                Ok(true)
            }
            None if C::EXACT => Err(unrepresentable(OP, format!("windows of size {size} every {step} along axis {axis} of {} cut its mask unevenly; call contiguous() first", ctx()))),
            None => Ok(false),
        }
    }

    /// PyTorch's `diagonal`: removes axes `a` and `b` and appends their diagonal from
    /// `(r0, c0)`, `(0, offset)` or `(-offset, 0)` (positive: above the main one), of
    /// `max(min(dim_a - r0, dim_b - c0), 0)` elements; `ctx` names the view in errors.
    ///
    /// # Errors
    /// When the axes are out of range or equal, the sign of `offset` taken as written is
    /// refuted (`Expr`), or an `i64` stride leaves `i64`.
    pub(crate) fn diagonal<C: Check<D>>(
        &mut self,
        c: &mut C,
        (offset, a, b): (D, usize, usize),
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        const OP: &str = "diagonal";
        let ndim = self.shape.len();
        for x in [a, b] {
            at_axis(OP, &self.shape, x, ctx)?;
        }
        if a == b {
            let differ = format!("axes {a} and {b} must differ for {}", ctx());
            return Err(invalid(OP, differ));
        }
        let (zero, one) = (D::from(0), D::from(1));
        // `-offset` saturates on `i64`: `i64::MIN` and `-i64::MAX` are beyond every axis.
        let (r0, c0) =
            if crate::index::counts_from_end(c, offset, &|| format!("diagonal offset {offset}"))? {
                (offset.try_neg().unwrap_or(D::from(i64::MAX)), zero)
            } else {
                (zero, offset)
            };
        let [da, db] = [a, b].map(|x| self.shape[x]);
        let [ta, tb] = [a, b].map(|x| self.strides[x]);
        // r0, c0 >= 0 and sizes are not negative: no `i64` difference overflows.
        let len = (da - r0).min_of(db - c0).max_of(zero);
        let stride = ta.try_add(tb);
        let stride =
            stride.ok_or_else(|| overflow(OP, format!("strides {ta} + {tb} of {}", ctx())))?;
        let keep = |x: &usize| *x != a && *x != b;
        let mut shape: Vec<D> = (0..ndim).filter(keep).map(|x| self.shape[x]).collect();
        let mut strides: Vec<D> = (0..ndim).filter(keep).map(|x| self.strides[x]).collect();
        shape.push(len);
        strides.push(stride);
        if let Some(m) = &mut self.mask {
            let ((ba, ea), (bb, eb)) = (m[a], m[b]);
            let lo = (ba - r0).max_of(bb - c0).clamp_to(zero, len);
            let hi = (ea - r0).min_of(eb - c0).clamp_to(lo, len);
            let mut kept: Vec<(D, D)> = (0..ndim).filter(keep).map(|x| m[x]).collect();
            kept.push((lo, hi));
            *m = kept;
        }
        // An `i64` offset moves only when the result has an element, the first one an
        // in-shape index (so that it fits, invariant 3; a zero-size view's offset is
        // normalised). An `Expr` shift is made whatever the sizes (binding normalises)
        // but must evaluate: one beyond the axes is cut back to them (no change when
        // the diagonal is not empty, where `r0 < dim_a` and `c0 < dim_b`).
        if !C::EXACT || shape.iter().all(|&x| !c.holds(x, CmpOp::Eq, zero)) {
            let shift = r0 * ta + c0 * tb;
            let cut = |r: D, d: D| r.min_of((d - one).max_of(zero));
            let cut_back = || cut(r0, da) * ta + cut(c0, db) * tb;
            let shift = Some(shift).filter(|&s| fits(c, s));
            self.offset = self.offset + shift.unwrap_or_else(cut_back);
        }
        self.shape = shape;
        self.strides = strides;
        Ok(())
    }
}

/// Whether `e` (provably) evaluates within `i64`, as an `i64` does.
fn fits<D: Size, C: Check<D>>(c: &C, e: D) -> bool {
    let max = D::from(i64::MAX);
    C::EXACT || (c.holds(e, CmpOp::Le, max) && c.holds(e, CmpOp::Ge, -max))
}
