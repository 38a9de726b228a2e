//! The field rules of the core ops expand, shrink, pad and flip (and, in `unfold.rs`,
//! unfold and diagonal), the pieces of cut axes, the reach of a view and PyTorch's
//! `as_strided` storage rule, written once over the size type (`i64` or `Expr`) for both
//! engines; [`Check`] (`check.rs`) decides their preconditions. The element-size ops
//! (`reinterpret` and the complex views) are in `elements.rs`.
//!
//! For `i64` (`Exact`) every precondition is decided at once and a failure is the
//! exact engine's error; for `Expr` (a `Checker`) it is proven, refuted or recorded
//! as a guard. Normalisations that depend on values (skipping the reversal of an axis
//! of at most one index, leaving a zero-size view's offset alone) run only where
//! sizes are decided at once; the symbolic engine leaves them to binding.

use symshape::CmpOp;

use crate::check::Check;
use crate::dim::Size;
use crate::error::{at_axis, check_piece, fmt_list, invalid, overflow, Error, Result};
use crate::op::as_strided_negative;
use crate::view::Fields;

mod elements;
mod unfold;

pub(crate) use elements::{is_element_op, refuse_stack};

/// Requires `0 <= b <= e <= d` of the range `(b, e)` of `axis`, of size `d`: a shrink's
/// bound, a mask's range. `what` starts the requirements' text (`"mask "` for a mask);
/// `outside` is the error on `i64`.
///
/// # Errors
/// When an end is (proven) outside.
#[inline]
pub(crate) fn require_range<D: Size, C: Check<D>>(
    c: &mut C,
    what: &str,
    axis: usize,
    (b, e): (D, D),
    d: D,
    outside: impl Fn() -> Error,
) -> Result<()> {
    for (lhs, cmp, rhs, which, is) in [
        (b, CmpOp::Ge, D::from(0), "start", "is non-negative"),
        (b, CmpOp::Le, e, "start", "is at most its end"),
        (e, CmpOp::Le, d, "end", "is within its size"),
    ] {
        c.require(
            lhs,
            cmp,
            rhs,
            || format!("{what}{which} of axis {axis} {is}"),
            &outside,
        )?;
    }
    Ok(())
}

/// Requires every range of `mask` within its axis of `shape` ([`require_range`]), for
/// `op` creating a view.
///
/// # Errors
/// When a range is (proven) outside its axis.
pub(crate) fn require_mask<D: Size, C: Check<D>>(
    c: &mut C,
    op: &'static str,
    shape: &[D],
    mask: &[(D, D)],
) -> Result<()> {
    for (axis, (&(b, e), &d)) in mask.iter().zip(shape).enumerate() {
        let outside = || {
            invalid(
                op,
                format!(
                    "mask bound ({b}, {e}) on axis {axis} is outside 0 <= b <= e <= {d} for shape {}",
                    fmt_list(shape)
                ),
            )
        };
        require_range(c, "mask ", axis, (b, e), d, outside)?;
    }
    Ok(())
}

impl<D: Size> Fields<D> {
    /// The fields, taken out of `self` one by one (which is left empty): what a rule
    /// that changed them in place hands on to be finished.
    #[inline]
    pub(crate) fn take(&mut self) -> Fields<D> {
        Fields {
            shape: std::mem::take(&mut self.shape),
            strides: std::mem::take(&mut self.strides),
            offset: self.offset,
            mask: self.mask.take(),
        }
    }

    /// Broadcasts the size-1 axes to `shape`, of the view's rank, with stride 0; any
    /// other axis keeps its size. A masked size-1 axis expands to mask `(0, n)` when
    /// its element is valid and `(0, 0)` when it is not. `ctx` names the view in errors.
    ///
    /// # Errors
    /// When `shape` has another rank, or an axis not (provably) of size 1 changes size.
    pub(crate) fn expand<C: Check<D>>(
        &mut self,
        c: &mut C,
        shape: &[D],
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        if shape.len() != self.shape.len() {
            let (s, n) = (fmt_list(shape), shape.len());
            let msg = format!("cannot expand {} to shape {s} of rank {n}", ctx());
            return Err(invalid("expand", msg));
        }
        for (axis, &new) in shape.iter().enumerate() {
            let old = self.shape[axis];
            self.shape[axis] = new;
            if old == new || c.holds(old, CmpOp::Eq, new) {
                continue;
            }
            if c.holds(old, CmpOp::Eq, D::from(1)) {
                self.strides[axis] = D::from(0);
                if let Some(m) = &mut self.mask {
                    // (b, e) is (0, 1) when the one index is valid, else empty.
                    let (b, e) = m[axis];
                    m[axis] = (D::from(0), (e - b) * new);
                }
                continue;
            }
            // Not (provably) 1: the axis must keep its size (for `Expr`, a documented
            // restriction).
            c.require(
                old,
                CmpOp::Eq,
                new,
                || format!("axis {axis} is not provably 1, so it keeps its size"),
                || {
                    crate::error::invalid(
                        "expand",
                        format!(
                            "cannot expand axis {axis} of size {old} to {new} for {}; only size-1 axes expand",
                            ctx()
                        ),
                    )
                },
            )?;
        }
        Ok(())
    }

    /// Restricts every axis to `bounds[axis] = (start, end)`, with
    /// `0 <= start <= end <= dim` (`bounds` has one entry per axis); `ctx` names the
    /// view in errors.
    ///
    /// # Errors
    /// When a bound is (proven) outside its axis.
    pub(crate) fn shrink<C: Check<D>>(
        &mut self,
        c: &mut C,
        bounds: &[(D, D)],
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        let zero = D::from(0);
        let empty = C::EXACT && self.shape.iter().any(|&d| c.holds(d, CmpOp::Eq, zero));
        for (axis, &(s, e)) in bounds.iter().enumerate() {
            let d = self.shape[axis];
            let outside = || {
                crate::error::invalid(
                    "shrink",
                    format!(
                        "bound ({s}, {e}) on axis {axis} is outside 0 <= start <= end <= {d} for {}",
                        ctx()
                    ),
                )
            };
            require_range(c, "", axis, (s, e), d, outside)?;
            // An `i64` start moves the offset only when it is an in-shape index of a
            // non-empty view (so that it fits, invariant 3).
            let shift = !C::EXACT || (!empty && c.holds(s, CmpOp::Lt, d));
            self.keep_range(axis, s, e, shift);
        }
        Ok(())
    }

    /// Piece `piece` of `split(axis, size)` (or of a chunk, reported as `op`): requires
    /// `size >= 1` and `0 <= piece < max(cdiv(dim, size), 1)`, then keeps indices
    /// `[piece*size, min((piece + 1)*size, dim))`. `ctx` names the view in errors.
    ///
    /// # Errors
    /// When `axis` is out of range, `size` is (provably) not positive or `piece`
    /// (provably) not one of the pieces.
    pub(crate) fn split_piece<C: Check<D>>(
        &mut self,
        c: &mut C,
        op: &'static str,
        (axis, size, piece): (usize, D, D),
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        let d = at_axis(op, &self.shape, axis, ctx)?;
        let (zero, one) = (D::from(0), D::from(1));
        c.require(
            size,
            CmpOp::Ge,
            one,
            || "piece size is positive".to_string(),
            || {
                invalid(
                    op,
                    format!("piece size {size} must be positive for {}", ctx()),
                )
            },
        )?;
        let count = d.ceil_parts_of(size);
        let not_piece = || {
            invalid(
                op,
                format!(
                    "piece {piece} is not one of the {count} pieces of size {size} along axis {axis} of {}",
                    ctx()
                ),
            )
        };
        c.require(
            piece,
            CmpOp::Ge,
            zero,
            || format!("piece {piece} is non-negative"),
            not_piece,
        )?;
        c.require(
            piece,
            CmpOp::Lt,
            count,
            || format!("piece {piece} is one of the pieces of axis {axis}"),
            not_piece,
        )?;
        // piece < count keeps an `i64` start within the axis.
        let start = piece * size;
        // Implied by the requirements above; stated when it is refuted, which the prover
        // may see where it cannot refute the count (piece 1 of an empty axis).
        if c.refutes(start, CmpOp::Le, d) {
            c.require(
                start,
                CmpOp::Le,
                d,
                || format!("piece {piece} starts within axis {axis}"),
                not_piece,
            )?;
        }
        // On `i64`, `start + min(size, d - start)`, which cannot overflow.
        let end = if C::EXACT {
            start + size.min_of(d - start)
        } else {
            (start + size).min_of(d)
        };
        self.keep_from(c, axis, start, end);
        Ok(())
    }

    /// Piece `piece` of `tensor_split(axis, sections)`: with `q = dim // n` and
    /// `r = dim % n`, indices `[i*q + min(i, r), (i + 1)*q + min(i + 1, r))`, always
    /// inside the axis, so nothing is required of the sizes.
    ///
    /// # Errors
    /// When `axis` is out of range, `sections` is 0 or `piece` is not below it.
    pub(crate) fn tensor_split_piece<C: Check<D>>(
        &mut self,
        c: &C,
        (axis, sections, piece): (usize, usize, usize),
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        const OP: &str = "tensor_split";
        let d = at_axis(OP, &self.shape, axis, ctx)?;
        if sections == 0 {
            return Err(invalid(
                OP,
                format!(
                    "number of sections must be larger than 0, got 0, for axis {axis} of {}",
                    ctx()
                ),
            ));
        }
        check_piece(OP, ctx, axis, piece, sections)?;
        // piece < sections, so start <= end <= dim and nothing overflows.
        let n = i64::try_from(sections).unwrap_or(i64::MAX);
        let i = i64::try_from(piece).unwrap_or(i64::MAX);
        let (q, r) = d.div_mod(n);
        let start = D::from(i) * q + r.min_of(D::from(i));
        let end = D::from(i + 1) * q + r.min_of(D::from(i + 1));
        self.keep_from(c, axis, start, end);
        Ok(())
    }

    /// Keeps indices `[start, end)` of `axis` (the caller has required
    /// `0 <= start <= end <= dim`), moving an `i64` offset only to an in-shape index of
    /// a non-empty view (so that it fits, invariant 3).
    pub(crate) fn keep_from<C: Check<D>>(&mut self, c: &C, axis: usize, start: D, end: D) {
        let zero = D::from(0);
        let shift = !C::EXACT
            || (!self.shape.iter().any(|&x| c.holds(x, CmpOp::Eq, zero))
                && c.holds(start, CmpOp::Lt, self.shape[axis]));
        self.keep_range(axis, start, end, shift);
    }

    /// Piece `piece` of `split_sizes(axis, sizes)`: requires every size non-negative
    /// and their sum the size of `axis`, then keeps the indices from the sum of the
    /// sizes before the piece, `sizes[piece]` of them. `ctx` names the view in errors.
    ///
    /// # Errors
    /// When `axis` or `piece` is out of range, or the sizes (provably) do not add up.
    pub(crate) fn split_sizes_piece<C: Check<D>>(
        &mut self,
        c: &mut C,
        axis: usize,
        sizes: &[D],
        piece: usize,
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        const OP: &str = "split_sizes";
        let d = at_axis(OP, &self.shape, axis, ctx)?;
        let zero = D::from(0);
        let unsummed = || {
            invalid(
                OP,
                format!(
                    "sizes {} do not add up to size {d} of axis {axis} of {}",
                    fmt_list(sizes),
                    ctx()
                ),
            )
        };
        let mut total = zero;
        for (k, &s) in sizes.iter().enumerate() {
            c.require(
                s,
                CmpOp::Ge,
                zero,
                || format!("size of piece {k} is non-negative"),
                unsummed,
            )?;
            total = total.try_add(s).ok_or_else(unsummed)?;
        }
        c.require(
            total,
            CmpOp::Eq,
            d,
            || {
                format!(
                    "sizes {} add up to the size of axis {axis}",
                    fmt_list(sizes)
                )
            },
            unsummed,
        )?;
        check_piece(OP, ctx, axis, piece, sizes.len())?;
        // The sizes before the piece add up to at most the total.
        let start = sizes[..piece].iter().fold(zero, |a, &s| a + s);
        self.keep_from(c, axis, start, start + sizes[piece]);
        Ok(())
    }

    /// Keeps indices `[start, end)` of `axis` (the caller has required
    /// `0 <= start <= end <= dim`); `shift` moves the offset to `start`.
    #[inline]
    pub(crate) fn keep_range(&mut self, axis: usize, start: D, end: D, shift: bool) {
        if shift {
            self.offset = self.offset + start * self.strides[axis];
        }
        self.shape[axis] = end - start;
        if let Some(m) = &mut self.mask {
            let (b, e) = m[axis];
            m[axis] = (
                b.clamp_to(start, end) - start,
                e.clamp_to(start, end) - start,
            );
        }
    }

    /// Reverses the axes whose bit is set in `flags` (bit `a` for axis `a`); `ctx` names
    /// the view in errors.
    ///
    /// # Errors
    /// When a negated `i64` stride leaves `i64`.
    pub(crate) fn flip<C: Check<D>>(
        &mut self,
        c: &C,
        flags: u64,
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        let zero = D::from(0);
        let empty = C::EXACT && self.shape.iter().any(|&d| c.holds(d, CmpOp::Eq, zero));
        for axis in (0..self.shape.len()).filter(|&a| flags >> a & 1 == 1) {
            if C::EXACT && c.holds(self.shape[axis], CmpOp::Le, D::from(1)) {
                // Reversing zero or one index changes nothing.
                continue;
            }
            let t = self.strides[axis];
            self.reverse_axis(axis, empty)
                .ok_or_else(|| overflow("flip", format!("negating stride {t} of {}", ctx())))?;
        }
        Ok(())
    }

    /// Reverses `axis`; `None`, with the fields unchanged, when its negated stride
    /// leaves `i64`. A zero-size view (`empty`) keeps its offset and mask.
    pub(crate) fn reverse_axis(&mut self, axis: usize, empty: bool) -> Option<()> {
        let (d, t) = (self.shape[axis], self.strides[axis]);
        self.strides[axis] = t.try_neg()?;
        if empty {
            return Some(());
        }
        // In-shape offsets of a non-empty `i64` view fit (invariant 3).
        self.offset = self.offset + (d - D::from(1)) * t;
        if let Some(m) = &mut self.mask {
            let (b, e) = m[axis];
            m[axis] = (d - e, d - b);
        }
        Some(())
    }

    /// The valid range of every axis: its mask, or all of it.
    pub(crate) fn bounds(&self) -> Vec<(D, D)> {
        let all = || self.shape.iter().map(|&d| (D::from(0), d)).collect();
        self.mask.clone().unwrap_or_else(all)
    }

    /// The canonical form as far as `c` decides it, for a view of `numel` elements: a
    /// zero-size view gets strides 0 and offset 0; a view with an empty valid range gets
    /// strides 0, offset 0 and mask `(0, 0)` on every axis; an axis with one valid
    /// index gets stride 0, the offset absorbing it (in-shape, so it fits on `i64`).
    pub(crate) fn canonicalize<C: Check<D>>(&mut self, c: &C, numel: D) {
        let (zero, one) = (D::from(0), D::from(1));
        let n = self.shape.len();
        let bounds = self.bounds();
        let zero_size = c.holds(numel, CmpOp::Eq, zero);
        if zero_size || bounds.iter().any(|&(b, e)| c.holds(b, CmpOp::Ge, e)) {
            self.strides = vec![zero; n];
            self.offset = zero;
            // A zero-size view has no mask; any other keeps an empty one (a symbolic
            // view's `finish` drops only masks proven full).
            self.mask = (!zero_size).then(|| vec![(zero, zero); n]);
            return;
        }
        for (axis, (b, e)) in bounds.into_iter().enumerate() {
            if c.holds(e - b, CmpOp::Eq, one) {
                self.offset = self.offset + b * self.strides[axis];
                self.strides[axis] = zero;
            }
        }
    }

    /// Adds `padding[axis] = (before, after)` virtual elements on every axis, masked
    /// out (`padding` has one entry per axis); `ctx` names the view in errors.
    ///
    /// # Errors
    /// When a padding is (proven) negative, or an `i64` size or offset leaves `i64`.
    pub(crate) fn pad<C: Check<D>>(
        &mut self,
        c: &mut C,
        padding: &[(D, D)],
        ctx: &dyn Fn() -> String,
    ) -> Result<()> {
        let zero = D::from(0);
        for (axis, &p) in padding.iter().enumerate() {
            let negative = || {
                crate::error::invalid(
                    "pad",
                    format!("negative padding {p:?} on axis {axis} for {}", ctx()),
                )
            };
            for (x, side) in [(p.0, "before"), (p.1, "after")] {
                c.require(
                    x,
                    CmpOp::Ge,
                    zero,
                    || format!("padding {side} axis {axis} is non-negative"),
                    negative,
                )?;
            }
        }
        let too_big = || overflow("pad", format!("padding {padding:?} of {}", ctx()));
        // An unmasked view gets its mask here, an axis at a time: bounds written just
        // before would be read back wider than they were written, which stalls the load.
        let unmasked = self.mask.is_none();
        let mask = self
            .mask
            .get_or_insert_with(|| Vec::with_capacity(padding.len()));
        for (axis, &(before, after)) in padding.iter().enumerate() {
            let (d, t) = (self.shape[axis], self.strides[axis]);
            self.shape[axis] = d
                .try_add(before)
                .and_then(|x| x.try_add(after))
                .ok_or_else(too_big)?;
            self.offset = before
                .try_mul(t)
                .and_then(|x| self.offset.try_sub(x))
                .ok_or_else(too_big)?;
            // An unmasked axis is valid on `0..d`.
            if unmasked {
                mask.push((before, d + before));
            } else {
                let (b, e) = mask[axis];
                mask[axis] = (b + before, e + before);
            }
        }
        Ok(())
    }
}

/// The smallest and largest offset the valid elements reach (`bounds` holds the valid
/// range of every axis), and `min(valid elements, 1)`; the two offsets mean nothing when
/// the last is 0. An `i64` view must have a valid element (then every sum fits,
/// invariant 3, and so does the count of valid elements).
pub(crate) fn reach<D: Size>(
    offset: D,
    strides: &[D],
    bounds: impl Iterator<Item = (D, D)>,
) -> (D, D, D) {
    let (zero, one) = (D::from(0), D::from(1));
    let (mut first, mut last, mut valid) = (offset, offset, one);
    for ((b, e), &t) in bounds.zip(strides) {
        first = first + (b * t).min_of((e - one) * t);
        last = last + (b * t).max_of((e - one) * t);
        valid = valid * (e - b).max_of(zero);
    }
    (first, last, valid.min_of(one))
}

/// PyTorch's `as_strided(size, stride, storage_offset)` rule for the arguments `args`
/// and the view `res` they created (unmasked) over a storage of `storage` elements
/// (`what` describes it): the strides and the offset are not negative and the last
/// element reached lies within the storage. Constants that break it are PyTorch's
/// errors (`setStorage: ...`); on `Expr`, the rest is proven or kept as guards.
///
/// # Errors
/// When a requirement fails or is refuted.
pub(crate) fn as_strided_within<D: Size, C: Check<D>>(
    c: &mut C,
    (shape, strides, offset): (&[D], &[D], D),
    res: (&[D], &[D], D),
    storage: D,
    what: &dyn Fn() -> String,
) -> Result<()> {
    let zero = D::from(0);
    for (axis, &t) in strides.iter().enumerate() {
        c.require(
            t,
            CmpOp::Ge,
            zero,
            || format!("stride of axis {axis} is not negative"),
            || as_strided_negative(shape, strides, None),
        )?;
    }
    c.require(
        offset,
        CmpOp::Ge,
        zero,
        || "storage offset is not negative".to_string(),
        || as_strided_negative(shape, strides, Some(offset)),
    )?;
    let zero_to = |&d: &D| (zero, d);
    let need =
        storage_of(c, res.2, res.1, res.0.iter().map(zero_to)).map_or(D::from(i64::MAX), |s| s.1);
    let refused = |n: &dyn std::fmt::Display, st: &dyn std::fmt::Display| {
        invalid(
            "as_strided",
            format!(
                "setStorage: sizes {}, strides {}, storage offset {offset} requiring a storage size of {n} elements are out of bounds for storage of size {st} elements ({})",
                fmt_list(shape),
                fmt_list(strides),
                what()
            ),
        )
    };
    if let (Some(n), Some(st)) = (c.value(need), c.value(storage)) {
        if n > st {
            return Err(refused(&n, &st));
        }
    }
    c.require(
        need,
        CmpOp::Le,
        storage,
        || format!("the last element reached is within {}", what()),
        || refused(&need, &storage),
    )
}

/// The first element a view reaches and the length of the shortest storage it reads (one
/// past the last element it reaches), both 0 when it has none (`bounds` holds the valid
/// range of every axis); `None` when an `i64` length leaves `i64`.
pub(crate) fn storage_of<D: Size, C: Check<D>>(
    c: &C,
    offset: D,
    strides: &[D],
    bounds: impl Iterator<Item = (D, D)> + Clone,
) -> Option<(D, D)> {
    let zero = D::from(0);
    if C::EXACT && bounds.clone().any(|(b, e)| c.holds(b, CmpOp::Ge, e)) {
        return Some((zero, zero));
    }
    let (first, last, any) = reach(offset, strides, bounds);
    Some((any * first, any * last.try_add(D::from(1))?))
}

/// Requires the valid elements of a view ([`storage_of`]'s arguments) to lie within the `n`
/// elements of the view below (a stack's invariant 2; `below` names it in guards); returns
/// the first element reached, 0 when none is valid.
///
/// # Errors
/// `outside` when it does not fit on `i64`; on `Expr`, when that is refuted.
pub(crate) fn fit_within<D: Size, C: Check<D>>(
    c: &mut C,
    (offset, strides): (D, &[D]),
    bounds: impl Iterator<Item = (D, D)> + Clone,
    n: D,
    below: &dyn Fn() -> String,
    outside: impl Fn() -> Error,
) -> Result<D> {
    let (first, end) = storage_of(c, offset, strides, bounds).ok_or_else(&outside)?;
    let zero = D::from(0);
    for (x, cmp, y, which) in [
        (first, CmpOp::Ge, zero, "first"),
        (end, CmpOp::Le, n, "last"),
    ] {
        let what = || format!("{which} element reached is within {}", below());
        c.require(x, cmp, y, what, &outside)?;
    }
    Ok(first)
}
