//! Concrete strided layouts, stacks of layouts, and the facts the kernels need about them.
//!
//! Representation invariants of [`Layout`] (established by its constructors):
//! 1. `shape`, `strides` and (if present) `mask` have the same length.
//! 2. Every mask interval `(b, e)` satisfies `b <= e <= extent`; a mask covering every axis
//!    fully is stored as no mask.
//! 3. The element count fits `usize`, and the lowest and highest offsets of the full index box
//!    fit `isize`, so no offset computed from an in-range index overflows.
//!
//! Invariants of [`LayoutStack`]:
//! 1. It holds at least one layout.
//! 2. Every layout above the bottom reaches, over its mask box, only linear indices inside the
//!    element space of the layout below it.

use crate::error::{KernelError, Result};
use std::fmt;

/// A strided layout over a flat buffer: element `idx` lives at `offset + sum(idx[k] * strides[k])`.
///
/// Strides may be negative or zero. An optional mask keeps, per axis, a half-open interval
/// `(b, e)` of valid indices; elements outside read the pad value and are never written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: isize,
    mask: Option<Vec<(usize, usize)>>,
}

/// Lowest and highest offset (inclusive) reached by a set of elements.
pub type Extent = (isize, isize);

impl Layout {
    /// A layout with the given shape, strides (in elements) and offset, without mask.
    pub fn new(shape: &[usize], strides: &[isize], offset: isize) -> Result<Layout> {
        if shape.len() != strides.len() {
            return Err(KernelError::RankMismatch {
                op: "layout",
                shape: shape.to_vec(),
                what: "strides",
                got: strides.len(),
            });
        }
        let res = Layout {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
            mask: None,
        };
        res.check_ranges()?;
        Ok(res)
    }

    /// The row-major (C-contiguous) layout of `shape` at offset 0.
    pub fn contiguous(shape: &[usize]) -> Result<Layout> {
        let strides = row_major_strides(shape).ok_or_else(|| KernelError::Overflow {
            op: "layout",
            shape: shape.to_vec(),
            strides: Vec::new(),
            offset: 0,
        })?;
        let res = Layout {
            shape: shape.to_vec(),
            strides,
            offset: 0,
            mask: None,
        };
        res.check_ranges()?;
        Ok(res)
    }

    /// The same layout with a mask of half-open valid intervals, one per axis.
    pub fn with_mask(mut self, mask: &[(usize, usize)]) -> Result<Layout> {
        if mask.len() != self.shape.len() {
            return Err(KernelError::RankMismatch {
                op: "layout",
                shape: self.shape.clone(),
                what: "mask",
                got: mask.len(),
            });
        }
        for (axis, (&(begin, end), &extent)) in mask.iter().zip(&self.shape).enumerate() {
            if begin > end || end > extent {
                return Err(KernelError::BadMask {
                    op: "layout",
                    axis,
                    begin,
                    end,
                    extent,
                });
            }
        }
        let full = mask
            .iter()
            .zip(&self.shape)
            .all(|(&(b, e), &n)| b == 0 && e == n);
        self.mask = if full { None } else { Some(mask.to_vec()) };
        Ok(self)
    }

    /// The same layout with its axes reordered: axis `k` of the result is axis `perm[k]` of `self`.
    pub fn permuted(&self, perm: &[usize]) -> Result<Layout> {
        let n = self.shape.len();
        let mut seen = vec![false; n];
        let ok = perm.len() == n
            && perm.iter().all(|&p| match seen.get_mut(p) {
                Some(s) if !*s => {
                    *s = true;
                    true
                }
                _ => false,
            });
        if !ok {
            return Err(KernelError::BadPermutation {
                op: "permute",
                perm: perm.to_vec(),
                n_dims: n,
            });
        }
        // Indexing is in range: `perm` was just checked to be a permutation of 0..n.
        let shape: Vec<usize> = perm.iter().map(|&p| self.shape[p]).collect();
        let strides: Vec<isize> = perm.iter().map(|&p| self.strides[p]).collect();
        let mask = self
            .mask
            .as_ref()
            .map(|m| perm.iter().map(|&p| m[p]).collect::<Vec<_>>());
        Ok(Layout {
            shape,
            strides,
            offset: self.offset,
            mask,
        })
    }

    /// Axes and their extents.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Strides in elements, one per axis.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Offset of the element at index zero.
    pub fn offset(&self) -> isize {
        self.offset
    }

    /// The mask, if some element is masked out.
    pub fn mask(&self) -> Option<&[(usize, usize)]> {
        self.mask.as_deref()
    }

    /// Number of axes.
    pub fn n_dims(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements (invariant 3: fits `usize`).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Interval of valid indices of `axis` (the whole axis when unmasked).
    pub(crate) fn valid_range(&self, axis: usize) -> (usize, usize) {
        match &self.mask {
            Some(m) => m.get(axis).copied().unwrap_or((0, 0)),
            None => (0, self.shape.get(axis).copied().unwrap_or(0)),
        }
    }

    /// The box of valid indices, one interval per axis.
    pub(crate) fn valid_box(&self) -> Vec<(usize, usize)> {
        (0..self.n_dims()).map(|k| self.valid_range(k)).collect()
    }

    /// Lowest and highest offset over the valid elements, or `None` when no element is valid.
    pub fn extent(&self) -> Option<Extent> {
        let (mut lo, mut hi) = (self.offset as i128, self.offset as i128);
        for (k, &s) in self.strides.iter().enumerate() {
            let (b, e) = self.valid_range(k);
            if b >= e {
                return None;
            }
            let (first, last) = (s as i128 * b as i128, s as i128 * (e - 1) as i128);
            lo += first.min(last);
            hi += first.max(last);
        }
        // Inside the full box, which fits `isize` (invariant 3).
        Some((isize::try_from(lo).ok()?, isize::try_from(hi).ok()?))
    }

    fn overflow(&self, op: &'static str) -> KernelError {
        KernelError::Overflow {
            op,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: self.offset,
        }
    }

    fn check_ranges(&self) -> Result<()> {
        let mut numel: usize = 1;
        for &n in &self.shape {
            numel = numel
                .checked_mul(n)
                .ok_or_else(|| self.overflow("layout"))?;
        }
        // Offsets of the full box (not only the masked one) must fit, so that any in-range
        // index has a representable offset.
        if numel > 0 {
            let (mut lo, mut hi) = (self.offset as i128, self.offset as i128);
            for (&n, &s) in self.shape.iter().zip(&self.strides) {
                let span = (s as i128)
                    .checked_mul(n as i128 - 1)
                    .ok_or_else(|| self.overflow("layout"))?;
                lo += span.min(0);
                hi += span.max(0);
            }
            if isize::try_from(lo).is_err() || isize::try_from(hi).is_err() {
                return Err(self.overflow("layout"));
            }
        }
        Ok(())
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} strides {:?} offset {}",
            self.shape, self.strides, self.offset
        )?;
        if let Some(m) = &self.mask {
            write!(f, " mask [")?;
            for (k, (b, e)) in m.iter().enumerate() {
                if k > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{b}..{e}")?;
            }
            write!(f, "]")?;
        }
        Ok(())
    }
}

/// Row-major strides of `shape`, or `None` on overflow.
pub(crate) fn row_major_strides(shape: &[usize]) -> Option<Vec<isize>> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc: isize = 1;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        match isize::try_from(n).ok().and_then(|n| acc.checked_mul(n)) {
            Some(next) => acc = next,
            // A zero-size shape reaches nothing: its strides may be anything, even when its
            // other extents are too large for any stride.
            None if shape.contains(&0) => return Some(vec![0; shape.len()]),
            None => return None,
        }
    }
    Some(strides)
}

/// A stack of layouts, bottom first.
///
/// The bottom layout maps an index to a buffer offset. Each layout above maps its index to a
/// linear index into the element space of the layout below it, which is unflattened row-major
/// into that layout's shape and mapped through it, down to the buffer. An element invalid
/// (masked out) at any level reads the pad value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LayoutStack {
    levels: Vec<Layout>,
}

impl LayoutStack {
    /// A stack of `levels`, bottom first.
    pub fn new(levels: Vec<Layout>) -> Result<LayoutStack> {
        if levels.is_empty() {
            return Err(KernelError::EmptyStack);
        }
        for (level, pair) in levels.windows(2).enumerate() {
            let [below, above] = pair else { continue };
            if let Some((lo, hi)) = above.extent() {
                let numel = below.numel();
                if lo < 0 || usize::try_from(hi).map_or(true, |h| h >= numel) {
                    return Err(KernelError::LevelOutOfRange {
                        level: level + 1,
                        below: level,
                        lo,
                        hi,
                        numel,
                    });
                }
            }
        }
        Ok(LayoutStack { levels })
    }

    /// The layouts, bottom first.
    pub fn levels(&self) -> &[Layout] {
        &self.levels
    }

    /// The top layout, whose shape is the stack's.
    pub fn top(&self) -> &Layout {
        // `new` refuses an empty stack.
        &self.levels[self.levels.len() - 1]
    }

    /// The stack's shape (its top layout's).
    pub fn shape(&self) -> &[usize] {
        self.top().shape()
    }

    /// The number of elements the stack reads (valid or masked).
    pub fn numel(&self) -> usize {
        self.top().numel()
    }
}

impl fmt::Display for LayoutStack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, l) in self.levels.iter().enumerate() {
            if k > 0 {
                write!(f, " <- ")?;
            }
            write!(f, "{l}")?;
        }
        Ok(())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Layout {}
    impl Sealed for super::LayoutStack {}
}

/// A source view: a single [`Layout`] or a [`LayoutStack`].
pub trait View: sealed::Sealed + Sync {
    /// The layouts, bottom first (one for a plain layout).
    fn levels(&self) -> &[Layout];

    /// Shape of the view (that of its top layout).
    fn shape(&self) -> &[usize] {
        self.levels().last().map_or(&[], |l| l.shape())
    }
}

impl View for Layout {
    fn levels(&self) -> &[Layout] {
        std::slice::from_ref(self)
    }
}

impl View for LayoutStack {
    fn levels(&self) -> &[Layout] {
        &self.levels
    }
}

/// Largest destination checked exhaustively for self-overlap when the stride test is inconclusive.
pub const OVERLAP_CHECK_LIMIT: usize = 1 << 20;

/// Checks that no two valid indices of `dst` reach the same offset.
///
/// First a sufficient test: with the axes of extent > 1 sorted by `|stride|`, each stride
/// exceeds the span of all smaller axes together. If it fails and the destination has at most
/// [`OVERLAP_CHECK_LIMIT`] elements, the offsets are enumerated and compared exactly; larger
/// inconclusive destinations are rejected (conservative).
pub(crate) fn check_no_self_overlap(op: &'static str, dst: &Layout) -> Result<()> {
    let region = dst.valid_box();
    let mut axes: Vec<(u128, u128)> = Vec::new();
    let mut numel: usize = 1;
    for (&s, &(b, e)) in dst.strides.iter().zip(&region) {
        let len = e.saturating_sub(b);
        if len == 0 {
            return Ok(());
        }
        numel = numel.saturating_mul(len);
        if len > 1 {
            axes.push((s.unsigned_abs() as u128, (len - 1) as u128));
        }
    }
    let err = || KernelError::OverlappingDestination {
        op,
        shape: dst.shape.clone(),
        strides: dst.strides.clone(),
    };
    if axes.iter().any(|&(s, _)| s == 0) {
        return Err(err());
    }
    axes.sort_unstable();
    let mut span: u128 = 0;
    let mut nested = true;
    for &(s, last) in &axes {
        if s <= span {
            nested = false;
            break;
        }
        span = span.saturating_add(s.saturating_mul(last));
    }
    if nested {
        return Ok(());
    }
    if numel > OVERLAP_CHECK_LIMIT {
        return Err(KernelError::UndecidedOverlap {
            op,
            shape: dst.shape.clone(),
            strides: dst.strides.clone(),
            numel,
            limit: OVERLAP_CHECK_LIMIT,
        });
    }
    let mut offsets = Vec::with_capacity(numel);
    for_each_offset(&dst.strides, dst.offset, &region, |o| offsets.push(o));
    offsets.sort_unstable();
    if offsets.windows(2).any(|w| w[0] == w[1]) {
        return Err(err());
    }
    Ok(())
}

/// Calls `f` with the offset of every index of `region` in row-major order (odometer, no division).
pub(crate) fn for_each_offset(
    strides: &[isize],
    offset: isize,
    region: &[(usize, usize)],
    mut f: impl FnMut(isize),
) {
    if region.iter().any(|&(b, e)| b >= e) {
        return;
    }
    let n = region.len();
    let mut idx: Vec<usize> = region.iter().map(|&(b, _)| b).collect();
    // Wrapping arithmetic: a step one past the end of an axis may leave the representable
    // range, and is undone before the offset is used.
    let mut off = offset;
    for (&s, &(b, _)) in strides.iter().zip(region) {
        off = off.wrapping_add(s.wrapping_mul(b as isize));
    }
    loop {
        f(off);
        let mut k = n;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            let (Some(&(b, e)), Some(i), Some(&s)) =
                (region.get(k), idx.get_mut(k), strides.get(k))
            else {
                return;
            };
            *i += 1;
            off = off.wrapping_add(s);
            if *i < e {
                break;
            }
            off = off.wrapping_sub(s.wrapping_mul((e - b) as isize));
            *i = b;
        }
    }
}

fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    -floor_div(-a, b)
}

/// One run of adjacent axes of a layout that behave as a single strided axis.
struct Group {
    extent: i128,
    stride: i128,
    mask: Option<(i128, i128)>,
}

/// Composes `upper` (indexing the element space of `lower`) with `lower` into one layout over
/// the buffer, when the composition is exactly strided over the valid box of `upper`.
///
/// The test is exact but not complete: each axis of `upper` must move a single digit of the
/// (merged) row-major index of `lower` without ever carrying into the next digit. `None`
/// means the stack is kept and lowered through offset tables instead.
pub(crate) fn merge_two(lower: &Layout, upper: &Layout) -> Option<Layout> {
    let n = upper.n_dims();
    let ubox = upper.valid_box();
    let all_invalid = || {
        (n > 0).then(|| Layout {
            shape: upper.shape.clone(),
            strides: vec![0; n],
            offset: 0,
            mask: Some(vec![(0, 0); n]),
        })
    };
    if ubox.iter().any(|&(b, e)| b >= e) || lower.valid_box().iter().any(|&(b, e)| b >= e) {
        return all_invalid();
    }
    let mut groups: Vec<Group> = Vec::new();
    for k in 0..lower.n_dims() {
        let extent = *lower.shape.get(k)? as i128;
        let stride = *lower.strides.get(k)? as i128;
        let (b, e) = lower.valid_range(k);
        if extent == 1 {
            continue;
        }
        let full = b == 0 && e as i128 == extent;
        if let Some(g) = groups.last_mut() {
            if full && g.mask.is_none() && g.stride == stride * extent {
                g.extent *= extent;
                g.stride = stride;
                continue;
            }
        }
        groups.push(Group {
            extent,
            stride,
            mask: (!full).then_some((b as i128, e as i128)),
        });
    }
    // Row-major radices of the groups.
    let mut radix = vec![0i128; groups.len()];
    let mut acc: i128 = 1;
    for (r, g) in radix.iter_mut().zip(&groups).rev() {
        *r = acc;
        acc = acc.checked_mul(g.extent)?;
    }
    // Linear index of the box origin, and its digits.
    let mut base = upper.offset as i128;
    for (&s, &(b, _)) in upper.strides.iter().zip(&ubox) {
        base += s as i128 * b as i128;
    }
    let mut digit = vec![0i128; groups.len()];
    let mut rest = base;
    for (d, &r) in digit.iter_mut().zip(&radix) {
        *d = rest / r;
        rest %= r;
    }
    // Assign each moving axis of `upper` to one digit.
    let mut assign: Vec<Option<(usize, i128)>> = vec![None; n];
    let mut lo = vec![0i128; groups.len()];
    let mut hi = vec![0i128; groups.len()];
    let mut count = vec![0usize; groups.len()];
    for k in 0..n {
        let s = *upper.strides.get(k)? as i128;
        let (b, e) = *ubox.get(k)?;
        if s == 0 || e - b <= 1 {
            continue;
        }
        let j = radix.iter().position(|&r| s % r == 0)?;
        let q = s / *radix.get(j)?;
        let span = q * (e - b - 1) as i128;
        *lo.get_mut(j)? += span.min(0);
        *hi.get_mut(j)? += span.max(0);
        *count.get_mut(j)? += 1;
        *assign.get_mut(k)? = Some((j, q));
    }
    let mut mask = ubox.clone();
    let mut offset = lower.offset as i128;
    // No digit may carry (checked for all digits before any mask conclusion).
    for (j, g) in groups.iter().enumerate() {
        let c = *digit.get(j)?;
        if c + *lo.get(j)? < 0 || c + *hi.get(j)? >= g.extent {
            return None;
        }
    }
    for (j, g) in groups.iter().enumerate() {
        let c = *digit.get(j)?;
        let (l, h) = (c + *lo.get(j)?, c + *hi.get(j)?);
        offset += c * g.stride;
        let Some((mb, me)) = g.mask else { continue };
        if l >= mb && h < me {
            continue;
        }
        match *count.get(j)? {
            0 => return all_invalid(),
            1 => {
                let k = assign
                    .iter()
                    .position(|a| matches!(a, Some((jj, _)) if *jj == j))?;
                let (_, q) = (*assign.get(k)?)?;
                let (b, e) = *ubox.get(k)?;
                let (t_lo, t_hi) = if q > 0 {
                    (ceil_div(mb - c, q), floor_div(me - 1 - c, q))
                } else {
                    (ceil_div(me - 1 - c, q), floor_div(mb - c, q))
                };
                let t_lo = t_lo.max(0);
                let t_hi = t_hi.min((e - b - 1) as i128);
                let m = mask.get_mut(k)?;
                let (nb, ne) = if t_lo > t_hi {
                    (b, b)
                } else {
                    (b + t_lo as usize, b + t_hi as usize + 1)
                };
                let nb = nb.max(m.0);
                *m = (nb, ne.min(m.1).max(nb));
            }
            _ => return None,
        }
    }
    let mut strides = vec![0isize; n];
    for (k, a) in assign.iter().enumerate() {
        if let Some((j, q)) = *a {
            let s = q.checked_mul(groups.get(j)?.stride)?;
            *strides.get_mut(k)? = isize::try_from(s).ok()?;
        }
    }
    for (&s, &(b, _)) in strides.iter().zip(&ubox) {
        offset -= s as i128 * b as i128;
    }
    let res = Layout::new(&upper.shape, &strides, isize::try_from(offset).ok()?).ok()?;
    res.with_mask(&mask).ok()
}

/// Merges a stack bottom-up as far as [`merge_two`] allows; the result has at least one level.
pub(crate) fn merge_levels(levels: &[Layout]) -> Vec<Layout> {
    let mut out: Vec<Layout> = Vec::with_capacity(levels.len());
    for l in levels {
        let merged = out.last().and_then(|below| merge_two(below, l));
        match merged {
            Some(m) => {
                out.pop();
                out.push(m);
            }
            None => out.push(l.clone()),
        }
    }
    out
}
