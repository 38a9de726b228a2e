//! [`ConcreteView`]: a view whose fields are `i64` constants, its constructors,
//! queries and the helpers every op shares.
//!
//! Representation invariants, established by [`ConcreteView::create`] and kept by
//! every op:
//!
//! 1. `strides.len() == shape.len()`, and the mask, when present, has one
//!    `(b, e)` pair per axis with `0 <= b <= e <= dim`.
//! 2. Every size is non-negative and the element count fits in an `i64`.
//! 3. The offset of every index in the shape (masked or not) fits in an `i64`.
//! 4. A zero-size view has offset 0 and no mask.
//! 5. A mask that covers every axis completely is dropped (`mask == None`).

use std::fmt;

use crate::check::Exact;
use crate::error::{
    at_axis, check_len, field_rank, fmt_list, fmt_pairs, invalid, overflow, Result,
};
use crate::fields::require_mask;

/// A view with constant shape, strides, offset and optional mask.
///
/// Element `idx` of the view is valid when it lies inside the mask (or there
/// is no mask), and then lives at buffer offset `offset + sum(idx[i] * strides[i])`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConcreteView {
    pub(super) shape: Vec<i64>,
    pub(super) strides: Vec<i64>,
    pub(super) offset: i64,
    pub(super) mask: Option<Vec<(i64, i64)>>,
}

/// `KIND shape=[..] strides=[..] offset=N`, the start of a layout's text form.
pub(crate) fn write_strided<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    kind: &str,
    shape: &[T],
    strides: &[T],
    offset: &T,
) -> fmt::Result {
    write!(
        f,
        "{kind} shape={} strides={} offset={offset}",
        fmt_list(shape),
        fmt_list(strides)
    )
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
    // An empty view reads nothing, so it is valid whatever its other extents: a stride
    // past i64 saturates there (it is never multiplied by an index).
    let mut res = Vec::with_capacity(shape.len());
    let mut acc = 1i64;
    for (axis, &d) in shape.iter().enumerate().rev() {
        res.push(acc);
        // The product of every size is no stride: only the sizes after an axis count.
        if axis > 0 {
            acc = match acc.checked_mul(d.max(1)) {
                Some(x) => x,
                None if shape.contains(&0) => acc.saturating_mul(d.max(1)),
                None => return None,
            };
        }
    }
    res.reverse();
    Some(res)
}

/// Row-major digits of `linear` in `shape` (the caller guarantees `0 <= linear < numel`).
#[must_use]
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

/// Views with more valid elements than this are not enumerated by
/// [`ConcreteView::is_injective`].
pub const INJECTIVE_CHECK_LIMIT: i128 = 1 << 20;

/// Tables of offsets (and anything else built one entry per element of a view)
/// are refused beyond this many elements: 2^26 entries, 1 GiB of `Option<i64>`.
pub const MAX_OFFSETS: i64 = 1 << 26;

/// The most axes a view may have, NumPy's limit (`NPY_MAXDIMS`). Every constructor
/// refuses more, and every op refuses to produce more before doing any work
/// ([`Error::Limit`](crate::Error::Limit), naming the op and the limit). Below it each
/// op's cost is polynomial in the rank with a small degree: a symbolic row-major view of
/// this rank (one symbol per axis, whose strides are products of up to 63 symbols) is
/// copied, checked for contiguity or planned into C in well under a second.
pub const MAX_RANK: usize = 64;

/// Refuses a result of `rank` axes past [`MAX_RANK`] on behalf of `op`; `what` names
/// what would have that rank (formatted only for the message).
#[inline]
pub(crate) fn check_rank(
    op: &'static str,
    rank: usize,
    what: impl FnOnce() -> String,
) -> Result<()> {
    check_rank_of(|| op, rank, what)
}

/// [`check_rank`] with the op's name looked up only for the error.
#[inline]
pub(crate) fn check_rank_of(
    op: impl FnOnce() -> &'static str,
    rank: usize,
    what: impl FnOnce() -> String,
) -> Result<()> {
    if rank <= MAX_RANK {
        return Ok(());
    }
    Err(rank_limit(op(), rank, &what()))
}

/// The error of [`check_rank_of`], out of the checking path.
#[cold]
#[inline(never)]
fn rank_limit(op: &'static str, rank: usize, what: &str) -> crate::error::Error {
    crate::error::Error::Limit {
        op,
        detail: format!("{what} would have {rank} axes, more than the limit of {MAX_RANK}"),
    }
}

/// The length of a table with one entry per element of `shape`, within [`MAX_OFFSETS`].
pub(crate) fn offsets_len(op: &'static str, shape: &[i64]) -> Result<usize> {
    let n = check_shape(op, shape)?;
    if n > MAX_OFFSETS {
        return Err(crate::error::Error::Limit {
            op,
            detail: format!(
                "{n} offsets of shape {} exceed the limit of {MAX_OFFSETS}",
                fmt_list(shape)
            ),
        });
    }
    Ok(usize::try_from(n).unwrap_or(0))
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
        check_rank("create", shape.len(), || "the view".to_string())?;
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

    /// Refuses the result of `op` on this view when it would have `rank` axes, past
    /// [`MAX_RANK`]: what the named ops that add axes check first (as
    /// [`ConcreteView::apply`] does for every op).
    pub(crate) fn check_result_rank(&self, op: &'static str, rank: usize) -> Result<()> {
        check_rank(op, rank, || format!("the result on {}", self.ctx()))
    }

    /// A row-major view of `shape` at offset 0.
    ///
    /// # Errors
    /// As [`ConcreteView::create`].
    pub fn contiguous(shape: &[i64]) -> Result<Self> {
        Self::create(shape, None, 0, None)
    }

    /// Validates and normalises raw fields on behalf of `op`.
    /// An unmasked view from fields the caller has already validated: non-negative
    /// sizes of a nonzero count that fits, and offsets that fit (invariants 2 and 3).
    pub(crate) fn from_valid_parts(shape: Vec<i64>, strides: Vec<i64>, offset: i64) -> Self {
        debug_assert!(shape.len() == strides.len() && numel_of(&shape).is_some_and(|n| n > 0));
        Self {
            shape,
            strides,
            offset,
            mask: None,
        }
    }

    pub(crate) fn build(
        op: &'static str,
        shape: Vec<i64>,
        strides: Vec<i64>,
        offset: i64,
        mask: Option<Vec<(i64, i64)>>,
    ) -> Result<Self> {
        check_rank(op, shape.len(), || "the view".to_string())?;
        if strides.len() != shape.len() {
            let field = format!("strides {} have", fmt_list(&strides));
            return Err(field_rank(op, &field, strides.len(), &shape));
        }
        let numel = check_shape(op, &shape)?;
        if let Some(m) = &mask {
            if m.len() != shape.len() {
                let field = format!("mask {} has", fmt_pairs(m));
                return Err(field_rank(op, &field, m.len(), &shape));
            }
            require_mask(&mut Exact, op, &shape, m)?;
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
    #[must_use]
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// The stride of every axis, in elements (also for masked views).
    #[must_use]
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }

    /// The buffer offset of index `[0, ..., 0]` (extrapolated when that index is masked).
    #[must_use]
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The number of axes.
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements, valid or not (1 for a scalar).
    #[must_use]
    pub fn numel(&self) -> i64 {
        // Invariant 2: the count fits.
        numel_of(&self.shape).unwrap_or(0)
    }

    /// The size of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axis >= ndim`.
    pub fn dim(&self, axis: usize) -> Result<i64> {
        at_axis("dim", &self.shape, axis, || self.ctx())
    }

    /// The stride of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axis >= ndim`.
    pub fn stride(&self, axis: usize) -> Result<i64> {
        at_axis("stride", &self.strides, axis, || self.ctx())
    }

    /// The per-axis valid ranges `[b, e)`, or `None` when every element is valid.
    #[must_use]
    pub fn mask(&self) -> Option<&[(i64, i64)]> {
        self.mask.as_deref()
    }

    /// The per-axis valid ranges, `(0, dim)` on unmasked axes.
    #[must_use]
    pub fn valid_bounds(&self) -> Vec<(i64, i64)> {
        self.bounds().collect()
    }

    /// The valid range of every axis, without allocating.
    pub(crate) fn bounds(&self) -> impl Iterator<Item = (i64, i64)> + Clone + '_ {
        self.shape
            .iter()
            .enumerate()
            .map(|(axis, &d)| match &self.mask {
                Some(m) => m[axis],
                None => (0, d),
            })
    }

    /// Whether no element is valid (zero-size, or an empty mask range).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0) || self.bounds().any(|(b, e)| b >= e)
    }

    /// The lowest and highest buffer offset over the valid elements, or `None` when
    /// no element is valid. Both fit an `i64` (invariant 3).
    #[must_use]
    pub fn extent(&self) -> Option<(i64, i64)> {
        if self.is_empty() {
            return None;
        }
        let (lo, hi, _) = crate::fields::reach(self.offset, &self.strides, self.bounds());
        Some((lo, hi))
    }

    /// Whether no two valid elements share a buffer offset: `Some(true)` or
    /// `Some(false)` when decided, `None` when the view has more than
    /// [`INJECTIVE_CHECK_LIMIT`] valid elements and the stride test is
    /// inconclusive.
    ///
    /// The stride test: with the axes of more than one valid index sorted by
    /// `|stride|`, each stride exceeds the span of all smaller axes together.
    /// When it fails, the offsets are enumerated and compared.
    #[must_use]
    pub fn is_injective(&self) -> Option<bool> {
        let bounds = self.valid_bounds();
        // No valid element (an empty axis anywhere, also after a broadcast one): nothing
        // can be reached twice.
        if bounds.iter().any(|&(b, e)| e <= b) {
            return Some(true);
        }
        let mut axes: Vec<(u128, u128)> = Vec::new();
        let mut count: i128 = 1;
        for (&t, &(b, e)) in self.strides.iter().zip(&bounds) {
            let len = e - b;
            count = count.saturating_mul(i128::from(len));
            if len > 1 {
                if t == 0 {
                    return Some(false);
                }
                axes.push((u128::from(t.unsigned_abs()), (len - 1) as u128));
            }
        }
        axes.sort_unstable();
        let mut span: u128 = 0;
        let mut nested = true;
        for &(t, last) in &axes {
            if t <= span {
                nested = false;
                break;
            }
            span = span.saturating_add(t.saturating_mul(last));
        }
        if nested {
            return Some(true);
        }
        if count > INJECTIVE_CHECK_LIMIT {
            return None;
        }
        let mut offsets: Vec<i64> = self.offsets().ok()?.into_iter().flatten().collect();
        offsets.sort_unstable();
        Some(offsets.windows(2).all(|w| w[0] != w[1]))
    }

    /// Whether the view is row-major at offset 0 without a mask.
    ///
    /// The strides of size-1 axes are ignored, as NumPy and PyTorch do, and a
    /// zero-size view is always contiguous.
    #[must_use]
    pub fn is_c_contiguous(&self) -> bool {
        let numel = self.numel();
        numel == 0
            || (self.offset == 0
                && self.mask.is_none()
                && crate::layout::dense(&self.shape, &self.strides, numel, true))
    }

    /// The strides when the view is a plain strided layout (no partial mask).
    #[must_use]
    pub fn strides_opt(&self) -> Option<&[i64]> {
        match self.mask {
            None => Some(&self.strides),
            Some(_) => None,
        }
    }

    /// Whether [`ConcreteView::strides_opt`] is `Some`.
    #[must_use]
    pub fn can_get_strides(&self) -> bool {
        self.mask.is_none()
    }

    /// Whether the view can be materialised as a plain strided layout.
    #[must_use]
    pub fn is_materializable(&self) -> bool {
        self.can_get_strides()
    }

    /// `offset + sum(idx[i] * strides[i])`, without bounds or mask checks.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch,
    /// [`Error::Overflow`](crate::Error::Overflow) when the sum leaves `i64`.
    pub fn linear_index(&self, idx: &[i64]) -> Result<i64> {
        check_len("linear_index", "index", idx.len(), self.ndim(), || {
            self.ctx()
        })?;
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
    #[must_use]
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
        check_len("offset_of", "index", idx.len(), self.ndim(), || self.ctx())?;
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

    /// `table`, row-major positions in this view (`None`: no element), read through it:
    /// each position becomes its element's buffer offset, `None` where it is masked out.
    ///
    /// # Errors
    /// As [`ConcreteView::offset_of`], for a position outside the view.
    pub(crate) fn read_through(&self, table: &mut [Option<i64>]) -> Result<()> {
        for slot in table.iter_mut() {
            if let Some(l) = *slot {
                *slot = self.offset_of(&unravel(&self.shape, l))?;
            }
        }
        Ok(())
    }

    /// The offset of every element in row-major order, `None` for masked-out ones.
    ///
    /// # Errors
    /// [`Error::Limit`](crate::Error::Limit) when the view has more than
    /// [`MAX_OFFSETS`] elements.
    pub fn offsets(&self) -> Result<Vec<Option<i64>>> {
        let n = offsets_len("offsets", self.shape())?;
        let mut res = Vec::with_capacity(n);
        if n == 0 {
            return Ok(res);
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
        Ok(res)
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
    #[must_use]
    pub fn canonical(&self) -> Self {
        let mut f = crate::engine::fields_of(self);
        f.canonicalize(&crate::check::Exact, self.numel());
        Self::from_checked_fields(f)
    }

    /// Whether `self` and `other` map every index to the same offset or both mask it.
    #[must_use]
    pub fn same_mapping(&self, other: &Self) -> bool {
        self.canonical() == other.canonical()
    }

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

    /// The view of fields that a core field rule has kept valid and normalised.
    pub(crate) fn from_checked_fields(f: crate::view::Fields<i64>) -> Self {
        Self {
            shape: f.shape,
            strides: f.strides,
            offset: f.offset,
            mask: f.mask,
        }
    }

    /// The view of fields that a core field rule has kept valid (the same elements of
    /// the same buffer, or fewer), normalised as invariants 4 and 5 ask.
    #[inline]
    pub(crate) fn from_kept_fields(mut f: crate::view::Fields<i64>) -> Self {
        if f.shape.contains(&0) {
            (f.offset, f.mask) = (0, None);
        }
        let full = |m: &Vec<(i64, i64)>| m.iter().zip(&f.shape).all(|(&r, &d)| r == (0, d));
        if f.mask.as_ref().is_some_and(full) {
            f.mask = None;
        }
        Self::from_checked_fields(f)
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
        write_strided(f, "view", &self.shape, &self.strides, &self.offset)?;
        f.write_str(" mask=")?;
        match &self.mask {
            Some(m) => write!(f, "{}", fmt_pairs(m)),
            None => write!(f, "none"),
        }
    }
}

/// Formats offsets as the `offsets` statement prints them: `offsets [2, 2]: 0 1 _ 3`.
#[must_use]
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
    // `n` is a view's rank, at most `MAX_RANK`: the axes seen are bits of one word (and
    // no larger `n` is a rank with a permutation).
    const _: () = assert!(MAX_RANK <= u64::BITS as usize);
    let mut seen = 0u64;
    n <= MAX_RANK
        && axes.len() == n
        && axes.iter().all(|&a| {
            let fresh = a < n && seen >> a & 1 == 0;
            if fresh {
                seen |= 1 << a;
            }
            fresh
        })
}
