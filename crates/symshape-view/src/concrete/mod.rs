//! The exact engine: views whose fields are `i64` constants, and every op on them.
//!
//! [`ConcreteView`] is what the public [`View`](crate::View) delegates to when all
//! of its fields are constants. Representation invariants, established by
//! [`ConcreteView::create`] and kept by every op:
//!
//! 1. `strides.len() == shape.len()`, and the mask, when present, has one
//!    `(b, e)` pair per axis with `0 <= b <= e <= dim`.
//! 2. Every size is non-negative and the element count fits in an `i64`.
//! 3. The offset of every index in the shape (masked or not) fits in an `i64`.
//! 4. A zero-size view has offset 0 and no mask.
//! 5. A mask that covers every axis completely is dropped (`mask == None`).

mod decide;
mod merge;
mod ops;
mod reshape;

pub use merge::merge;
pub(crate) use merge::{check_stacked, collapse_run};
pub use ops::{broadcast_shapes, MAX_PIECES};

use std::fmt;

use crate::error::{invalid, overflow, Result};

/// A view with constant shape, strides, offset and optional mask.
///
/// Element `idx` of the view is valid when it lies inside the mask (or there
/// is no mask), and then lives at buffer offset `offset + sum(idx[i] * strides[i])`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConcreteView {
    shape: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
    mask: Option<Vec<(i64, i64)>>,
}

pub(crate) fn fmt_list(v: &[i64]) -> String {
    format!("{v:?}")
}

pub(crate) fn fmt_pairs(v: &[(i64, i64)]) -> String {
    format!("{v:?}")
}

/// Element count of `shape`, or `None` on overflow.
pub(crate) fn numel_of(shape: &[i64]) -> Option<i64> {
    if shape.contains(&0) {
        // Zero-size shapes are fine even when the other sizes multiply past i64.
        return Some(0);
    }
    shape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d))
}

/// Row-major strides of `shape`; zero-size axes count as size 1, as NumPy does.
pub(crate) fn c_strides(shape: &[i64]) -> Option<Vec<i64>> {
    let mut res = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for (axis, &d) in shape.iter().enumerate().rev() {
        res[axis] = acc;
        acc = acc.checked_mul(d.max(1))?;
    }
    Some(res)
}

/// Row-major digits of `linear` in `shape` (the caller guarantees `0 <= linear < numel`).
pub fn unravel(shape: &[i64], mut linear: i64) -> Vec<i64> {
    let mut res = vec![0i64; shape.len()];
    for (axis, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            res[axis] = linear % d;
            linear /= d;
        }
    }
    res
}

pub(crate) fn check_shape(op: &'static str, shape: &[i64]) -> Result<i64> {
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(invalid(
            op,
            format!("negative size {d} in shape {}", fmt_list(shape)),
        ));
    }
    numel_of(shape).ok_or_else(|| {
        overflow(
            op,
            format!("element count of shape {} exceeds i64", fmt_list(shape)),
        )
    })
}

impl ConcreteView {
    /// Creates a view, validating every field.
    ///
    /// `strides` defaults to row-major strides. A zero-size view gets offset 0 and
    /// no mask; a mask covering everything is dropped.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when ranks disagree, a size is
    /// negative or a mask bound is outside `0 <= b <= e <= dim`;
    /// [`Error::Overflow`](crate::Error::Overflow) when the element count or a
    /// reachable offset does not fit in an `i64`.
    pub fn create(
        shape: &[i64],
        strides: Option<&[i64]>,
        offset: i64,
        mask: Option<&[(i64, i64)]>,
    ) -> Result<Self> {
        check_shape("create", shape)?;
        let strides = match strides {
            Some(s) => s.to_vec(),
            None => c_strides(shape).ok_or_else(|| {
                overflow(
                    "create",
                    format!("strides of shape {} exceed i64", fmt_list(shape)),
                )
            })?,
        };
        Self::build(
            "create",
            shape.to_vec(),
            strides,
            offset,
            mask.map(<[_]>::to_vec),
        )
    }

    /// A row-major view of `shape` at offset 0.
    ///
    /// # Errors
    /// As [`ConcreteView::create`].
    pub fn contiguous(shape: &[i64]) -> Result<Self> {
        Self::create(shape, None, 0, None)
    }

    /// Validates and normalises raw fields on behalf of `op`.
    pub(crate) fn build(
        op: &'static str,
        shape: Vec<i64>,
        strides: Vec<i64>,
        offset: i64,
        mask: Option<Vec<(i64, i64)>>,
    ) -> Result<Self> {
        if strides.len() != shape.len() {
            return Err(invalid(
                op,
                format!(
                    "strides {} have rank {} but shape {} has rank {}",
                    fmt_list(&strides),
                    strides.len(),
                    fmt_list(&shape),
                    shape.len()
                ),
            ));
        }
        let numel = check_shape(op, &shape)?;
        if let Some(m) = &mask {
            if m.len() != shape.len() {
                return Err(invalid(
                    op,
                    format!(
                        "mask {} has rank {} but shape {} has rank {}",
                        fmt_pairs(m),
                        m.len(),
                        fmt_list(&shape),
                        shape.len()
                    ),
                ));
            }
            for (axis, (&(b, e), &d)) in m.iter().zip(&shape).enumerate() {
                if !(0 <= b && b <= e && e <= d) {
                    return Err(invalid(
                        op,
                        format!(
                            "mask bound ({b}, {e}) on axis {axis} is outside 0 <= b <= e <= {d} for shape {}",
                            fmt_list(&shape)
                        ),
                    ));
                }
            }
        }
        if numel == 0 {
            return Ok(Self {
                shape,
                strides,
                offset: 0,
                mask: None,
            });
        }
        let (mut lo, mut hi) = (offset, offset);
        for (&d, &t) in shape.iter().zip(&strides) {
            let moved = match (d - 1).checked_mul(t) {
                Some(r) if r < 0 => lo.checked_add(r).map(|v| lo = v),
                Some(r) => hi.checked_add(r).map(|v| hi = v),
                None => None,
            };
            // Reaching i64::MIN or i64::MAX itself counts as overflow.
            if moved.is_none() || lo == i64::MIN || hi == i64::MAX {
                return Err(overflow(
                    op,
                    format!(
                        "offsets of shape {} with strides {} and offset {offset} exceed i64",
                        fmt_list(&shape),
                        fmt_list(&strides)
                    ),
                ));
            }
        }
        let mask = mask.filter(|m| m.iter().zip(&shape).any(|(&(b, e), &d)| b != 0 || e != d));
        Ok(Self {
            shape,
            strides,
            offset,
            mask,
        })
    }

    /// The sizes of the axes.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// The stride of every axis, in elements (also for masked views).
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }

    /// The buffer offset of index `[0, ..., 0]` (extrapolated when that index is masked).
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements, valid or not (1 for a scalar).
    pub fn numel(&self) -> i64 {
        // Invariant 2: the count fits.
        numel_of(&self.shape).unwrap_or(0)
    }

    /// The size of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axis >= ndim`.
    pub fn dim(&self, axis: usize) -> Result<i64> {
        self.shape
            .get(axis)
            .copied()
            .ok_or_else(|| self.bad_axis("dim", axis))
    }

    /// The stride of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axis >= ndim`.
    pub fn stride(&self, axis: usize) -> Result<i64> {
        self.strides
            .get(axis)
            .copied()
            .ok_or_else(|| self.bad_axis("stride", axis))
    }

    /// The per-axis valid ranges `[b, e)`, or `None` when every element is valid.
    pub fn mask(&self) -> Option<&[(i64, i64)]> {
        self.mask.as_deref()
    }

    /// The per-axis valid ranges, `(0, dim)` on unmasked axes.
    pub fn valid_bounds(&self) -> Vec<(i64, i64)> {
        match &self.mask {
            Some(m) => m.clone(),
            None => self.shape.iter().map(|&d| (0, d)).collect(),
        }
    }

    /// Whether no element is valid (zero-size, or an empty mask range).
    pub fn is_empty(&self) -> bool {
        self.numel() == 0 || self.valid_bounds().iter().any(|&(b, e)| b >= e)
    }

    /// Whether the view is row-major at offset 0 without a mask.
    ///
    /// The strides of size-1 axes are ignored, as NumPy and PyTorch do, and a
    /// zero-size view is always contiguous.
    pub fn is_c_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        if self.offset != 0 || self.mask.is_some() {
            return false;
        }
        let mut expect = 1i64;
        for (&d, &t) in self.shape.iter().zip(&self.strides).rev() {
            if d != 1 && t != expect {
                return false;
            }
            expect *= d;
        }
        true
    }

    /// The strides when the view is a plain strided layout (no partial mask).
    pub fn strides_opt(&self) -> Option<&[i64]> {
        match self.mask {
            None => Some(&self.strides),
            Some(_) => None,
        }
    }

    /// Whether [`ConcreteView::strides_opt`] is `Some`.
    pub fn can_get_strides(&self) -> bool {
        self.mask.is_none()
    }

    /// Whether the view can be materialised as a plain strided layout.
    pub fn is_materializable(&self) -> bool {
        self.can_get_strides()
    }

    /// `offset + sum(idx[i] * strides[i])`, without bounds or mask checks.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch,
    /// [`Error::Overflow`](crate::Error::Overflow) when the sum leaves `i64`.
    pub fn linear_index(&self, idx: &[i64]) -> Result<i64> {
        self.check_rank("linear_index", "index", idx.len())?;
        idx.iter()
            .zip(&self.strides)
            .try_fold(self.offset, |acc, (&i, &t)| {
                i.checked_mul(t).and_then(|p| acc.checked_add(p))
            })
            .ok_or_else(|| {
                overflow(
                    "linear_index",
                    format!("index {} of {}", fmt_list(idx), self.ctx()),
                )
            })
    }

    /// Whether `idx` is inside the shape and the mask (false on a rank mismatch).
    pub fn is_valid(&self, idx: &[i64]) -> bool {
        idx.len() == self.ndim()
            && idx
                .iter()
                .zip(self.valid_bounds())
                .all(|(&i, (b, e))| b <= i && i < e)
    }

    /// The buffer offset of element `idx`, `None` when it is masked out.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `idx` has the wrong rank or
    /// lies outside the shape.
    pub fn offset_of(&self, idx: &[i64]) -> Result<Option<i64>> {
        self.check_rank("offset_of", "index", idx.len())?;
        if idx.iter().zip(&self.shape).any(|(&i, &d)| i < 0 || i >= d) {
            return Err(invalid(
                "offset_of",
                format!(
                    "index {} is out of bounds for {}",
                    fmt_list(idx),
                    self.ctx()
                ),
            ));
        }
        if !self.is_valid(idx) {
            return Ok(None);
        }
        // Invariant 3: in-shape offsets fit.
        Ok(Some(self.at(idx)))
    }

    /// The offset of every element in row-major order, `None` for masked-out ones.
    pub fn offsets(&self) -> Vec<Option<i64>> {
        let n = usize::try_from(self.numel()).unwrap_or(0);
        // The capacity is only a hint; huge views grow as they go.
        let mut res = Vec::with_capacity(n.min(1 << 20));
        if n == 0 {
            return res;
        }
        let bounds = self.valid_bounds();
        let mut idx = vec![0i64; self.ndim()];
        for _ in 0..n {
            let valid = idx.iter().zip(&bounds).all(|(&i, &(b, e))| b <= i && i < e);
            res.push(valid.then(|| self.at(&idx)));
            for axis in (0..idx.len()).rev() {
                idx[axis] += 1;
                if idx[axis] < self.shape[axis] {
                    break;
                }
                idx[axis] = 0;
            }
        }
        res
    }

    /// `offset + sum(idx * strides)` for an in-shape index. Summing from the offset
    /// keeps every partial sum inside the reachable range (invariant 3).
    fn at(&self, idx: &[i64]) -> i64 {
        idx.iter()
            .zip(&self.strides)
            .fold(self.offset, |acc, (&i, &t)| acc + i * t)
    }

    /// The canonical form: two views with the same element mapping have the same
    /// canonical form.
    ///
    /// Axes with one valid index get stride 0 (the offset absorbs them); a view with
    /// no valid element gets strides 0, offset 0 and mask `(0, 0)` on every axis; a
    /// zero-size view gets strides 0.
    pub fn canonical(&self) -> Self {
        let n = self.ndim();
        if self.numel() == 0 {
            return Self {
                shape: self.shape.clone(),
                strides: vec![0; n],
                offset: 0,
                mask: None,
            };
        }
        if self.is_empty() {
            return Self {
                shape: self.shape.clone(),
                strides: vec![0; n],
                offset: 0,
                mask: Some(vec![(0, 0); n]),
            };
        }
        let mut res = self.clone();
        for (axis, (b, e)) in self.valid_bounds().into_iter().enumerate() {
            if e - b == 1 {
                // Invariant 3 bounds b * stride.
                res.offset += b * res.strides[axis];
                res.strides[axis] = 0;
            }
        }
        res
    }

    /// Whether `self` and `other` map every index to the same offset or both mask it.
    pub fn same_mapping(&self, other: &Self) -> bool {
        self.canonical() == other.canonical()
    }

    // ---- core transformations ----

    /// Reorders axes: axis `i` of the result is axis `axes[i]` of `self`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axes` is not a permutation of `0..ndim`.
    pub fn permute(&self, axes: &[usize]) -> Result<Self> {
        let n = self.ndim();
        if !is_permutation(axes, n) {
            return Err(invalid(
                "permute",
                format!(
                    "axes {axes:?} are not a permutation of 0..{n} for {}",
                    self.ctx()
                ),
            ));
        }
        Ok(Self {
            shape: axes.iter().map(|&a| self.shape[a]).collect(),
            strides: axes.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
            mask: self
                .mask
                .as_ref()
                .map(|m| axes.iter().map(|&a| m[a]).collect()),
        })
    }

    /// Broadcasts size-1 axes to `new_shape` with stride 0; a scalar expands to any shape.
    ///
    /// A masked size-1 axis expands to mask `(0, n)` when its element is valid and
    /// `(0, 0)` when it is not.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch (for a non-scalar),
    /// a negative size, or an axis that is neither equal nor of size 1.
    pub fn expand(&self, new_shape: &[i64]) -> Result<Self> {
        check_shape("expand", new_shape)?;
        if self.ndim() == 0 {
            return Self::build(
                "expand",
                new_shape.to_vec(),
                vec![0; new_shape.len()],
                self.offset,
                None,
            );
        }
        self.check_rank("expand", "shape", new_shape.len())
            .map_err(|_| {
                invalid(
                    "expand",
                    format!(
                        "cannot expand {} to shape {} of rank {}",
                        self.ctx(),
                        fmt_list(new_shape),
                        new_shape.len()
                    ),
                )
            })?;
        let bounds = self.valid_bounds();
        let mut strides = self.strides.clone();
        let mut mask = bounds.clone();
        for (axis, (&d, &nd)) in self.shape.iter().zip(new_shape).enumerate() {
            if d == nd {
                continue;
            }
            if d != 1 {
                return Err(invalid(
                    "expand",
                    format!(
                        "cannot expand axis {axis} of size {d} to {nd} for {}; only size-1 axes expand",
                        self.ctx()
                    ),
                ));
            }
            strides[axis] = 0;
            let (b, e) = bounds[axis];
            mask[axis] = if b < e { (0, nd) } else { (0, 0) };
        }
        Self::build(
            "expand",
            new_shape.to_vec(),
            strides,
            self.offset,
            self.mask.as_ref().map(|_| mask),
        )
    }

    /// Restricts every axis to `[start, end)`, with `0 <= start <= end <= dim`.
    ///
    /// An empty range gives a zero-size view. Mask bounds are intersected with the
    /// range and shifted; an empty intersection becomes an empty mask range.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch or a malformed bound.
    pub fn shrink(&self, bounds: &[(i64, i64)]) -> Result<Self> {
        self.check_rank("shrink", "bounds", bounds.len())?;
        let mut offset = self.offset;
        for (axis, (&(s, e), &d)) in bounds.iter().zip(&self.shape).enumerate() {
            if !(0 <= s && s <= e && e <= d) {
                return Err(invalid(
                    "shrink",
                    format!(
                        "bound ({s}, {e}) on axis {axis} is outside 0 <= start <= end <= {d} for {}",
                        self.ctx()
                    ),
                ));
            }
            if s < d && self.numel() > 0 {
                // In-shape index of a non-empty view, so invariant 3 applies.
                offset += s * self.strides[axis];
            }
        }
        let mask = self.mask.as_ref().map(|m| {
            m.iter()
                .zip(bounds)
                .map(|(&(b, e), &(s, t))| {
                    let lo = b.max(s).min(t);
                    let hi = e.min(t).max(lo);
                    (lo - s, hi - s)
                })
                .collect()
        });
        Self::build(
            "shrink",
            bounds.iter().map(|&(s, e)| e - s).collect(),
            self.strides.clone(),
            offset,
            mask,
        )
    }

    /// Adds `before` and `after` virtual elements on every axis; they are masked out.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch or negative padding,
    /// [`Error::Overflow`](crate::Error::Overflow) when sizes or offsets leave `i64`.
    pub fn pad(&self, padding: &[(i64, i64)]) -> Result<Self> {
        self.check_rank("pad", "padding", padding.len())?;
        if let Some((axis, p)) = padding
            .iter()
            .enumerate()
            .find(|(_, &(b, a))| b < 0 || a < 0)
        {
            return Err(invalid(
                "pad",
                format!("negative padding {p:?} on axis {axis} for {}", self.ctx()),
            ));
        }
        if padding.iter().all(|&p| p == (0, 0)) {
            return Ok(self.clone());
        }
        let too_big = || {
            overflow(
                "pad",
                format!("padding {} of {}", fmt_pairs(padding), self.ctx()),
            )
        };
        let mut shape = Vec::with_capacity(self.ndim());
        let mut offset = self.offset;
        let mut mask = Vec::with_capacity(self.ndim());
        for ((&(before, after), &d), ((b, e), &t)) in padding
            .iter()
            .zip(&self.shape)
            .zip(self.valid_bounds().into_iter().zip(&self.strides))
        {
            let nd = d
                .checked_add(before)
                .and_then(|x| x.checked_add(after))
                .ok_or_else(too_big)?;
            shape.push(nd);
            offset = before
                .checked_mul(t)
                .and_then(|x| offset.checked_sub(x))
                .ok_or_else(too_big)?;
            mask.push((b + before, e + before));
        }
        Self::build("pad", shape, self.strides.clone(), offset, Some(mask))
    }

    /// Reverses the axes whose flag is set.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `flags` has the wrong length.
    pub fn flip(&self, flags: &[bool]) -> Result<Self> {
        self.check_rank("flip", "flags", flags.len())?;
        let mut res = self.clone();
        for (axis, &f) in flags.iter().enumerate() {
            let d = self.shape[axis];
            if !f || d <= 1 {
                // Reversing zero or one index changes nothing.
                continue;
            }
            let t = self.strides[axis];
            res.strides[axis] = t.checked_neg().ok_or_else(|| {
                overflow("flip", format!("negating stride {t} of {}", self.ctx()))
            })?;
            if self.numel() == 0 {
                // Zero-size views keep offset 0 and may have any strides.
                continue;
            }
            // In-shape offsets fit (invariant 3).
            res.offset += (d - 1) * t;
            if let Some(m) = &mut res.mask {
                let (b, e) = m[axis];
                m[axis] = (d - e, d - b);
            }
        }
        Ok(res)
    }

    /// Reverses the listed axes (each at most once).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when an axis is out of range or repeated.
    pub fn flip_axes(&self, axes: &[usize]) -> Result<Self> {
        let mut flags = vec![false; self.ndim()];
        for &a in axes {
            match flags.get_mut(a) {
                Some(f) if !*f => *f = true,
                _ => {
                    return Err(invalid(
                        "flip",
                        format!(
                            "axes {axes:?} must be distinct and below {} for {}",
                            self.ndim(),
                            self.ctx()
                        ),
                    ))
                }
            }
        }
        self.flip(&flags)
    }

    /// Keeps `count` indices `first, first + step, ...` of `axis` (`step != 0`; the
    /// caller guarantees they lie in the axis).
    pub(crate) fn step_axis(
        &self,
        op: &'static str,
        axis: usize,
        first: i64,
        count: i64,
        step: i64,
    ) -> Result<Self> {
        let mut shape = self.shape.clone();
        let mut strides = self.strides.clone();
        shape[axis] = count;
        let t = self.strides[axis];
        strides[axis] = t.checked_mul(step).ok_or_else(|| {
            overflow(
                op,
                format!("stride {t} times step {step} of {}", self.ctx()),
            )
        })?;
        if count == 0 {
            return Self::build(op, shape, strides, 0, None);
        }
        if self.numel() == 0 {
            return Self::build(op, shape, strides, 0, None);
        }
        // An in-shape index of a non-empty view (invariant 3).
        let offset = self.offset + first * t;
        let mask = self.mask.as_ref().map(|m| {
            let mut m = m.clone();
            let (b, e) = m[axis];
            // Valid k: b <= first + k * step < e.
            let (lo, hi) = if step > 0 {
                (ceil_div(b - first, step), ceil_div(e - first, step))
            } else {
                let s = -step;
                ((first - e).div_euclid(s) + 1, (first - b).div_euclid(s) + 1)
            };
            let lo = lo.clamp(0, count);
            m[axis] = (lo, hi.clamp(lo, count));
            m
        });
        Self::build(op, shape, strides, offset, mask)
    }

    /// Inserts a size-1 axis at position `axis` (`0 <= axis <= ndim`).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axis > ndim`.
    pub fn unsqueeze(&self, axis: usize) -> Result<Self> {
        if axis > self.ndim() {
            return Err(invalid(
                "unsqueeze",
                format!(
                    "axis {axis} is out of range 0..={} for {}",
                    self.ndim(),
                    self.ctx()
                ),
            ));
        }
        let mut res = self.clone();
        res.shape.insert(axis, 1);
        res.strides.insert(axis, 0);
        if let Some(m) = &mut res.mask {
            m.insert(axis, (0, 1));
        }
        Ok(res)
    }

    // ---- helpers ----

    /// `view [2, 3] with strides [3, 1]`, plus offset and mask when present; used in messages.
    pub(crate) fn ctx(&self) -> String {
        format!("view {}", self.desc())
    }

    /// `[2, 3] with strides [3, 1]`, plus offset and mask when present.
    pub(crate) fn desc(&self) -> String {
        let mut s = format!(
            "{} with strides {}",
            fmt_list(&self.shape),
            fmt_list(&self.strides)
        );
        if self.offset != 0 {
            s.push_str(&format!(", offset {}", self.offset));
        }
        if let Some(m) = &self.mask {
            s.push_str(&format!(" and mask {}", fmt_pairs(m)));
        }
        s
    }

    fn bad_axis(&self, op: &'static str, axis: usize) -> crate::Error {
        invalid(
            op,
            format!(
                "axis {axis} is out of range for {} of rank {}",
                self.ctx(),
                self.ndim()
            ),
        )
    }

    pub(crate) fn check_axis(&self, op: &'static str, axis: usize) -> Result<()> {
        if axis < self.ndim() {
            Ok(())
        } else {
            Err(self.bad_axis(op, axis))
        }
    }

    pub(crate) fn check_rank(&self, op: &'static str, what: &str, len: usize) -> Result<()> {
        if len == self.ndim() {
            return Ok(());
        }
        Err(invalid(
            op,
            format!(
                "{what} has length {len} but {} has rank {}",
                self.ctx(),
                self.ndim()
            ),
        ))
    }

    /// A view with no valid element: strides 0 and an empty mask on every axis.
    pub(crate) fn all_masked(op: &'static str, shape: &[i64]) -> Result<Self> {
        let n = shape.len();
        Self::build(op, shape.to_vec(), vec![0; n], 0, Some(vec![(0, 0); n]))
    }
}

pub(crate) fn ceil_div(a: i64, b: i64) -> i64 {
    -((-a).div_euclid(b))
}

impl fmt::Display for ConcreteView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "view shape={} strides={} offset={} mask=",
            fmt_list(&self.shape),
            fmt_list(&self.strides),
            self.offset
        )?;
        match &self.mask {
            Some(m) => write!(f, "{}", fmt_pairs(m)),
            None => write!(f, "none"),
        }
    }
}

/// Formats offsets as the `offsets` statement prints them: `offsets [2, 2]: 0 1 _ 3`.
pub fn format_offsets(shape: &[i64], offsets: &[Option<i64>]) -> String {
    let mut s = format!("offsets {}:", fmt_list(shape));
    for o in offsets {
        match o {
            Some(v) => s.push_str(&format!(" {v}")),
            None => s.push_str(" _"),
        }
    }
    s
}

/// Whether `axes` lists each of `0..n` exactly once.
pub(crate) fn is_permutation(axes: &[usize], n: usize) -> bool {
    let mut seen = vec![false; n];
    axes.len() == n
        && axes
            .iter()
            .all(|&a| a < n && !std::mem::replace(&mut seen[a], true))
}
