//! Deciding by evaluation whether a mapping over an index box is one view.
//!
//! A mapping is one view when its valid points form a box and its offsets are
//! affine on that box. [`decide`] streams the points of the index space once in
//! row-major order, compares each valid point against the candidate view built
//! from the first valid point and its axis neighbours, and stops at the first
//! point that contradicts it. The box is checked as the walk goes: a masked
//! point inside the bounding box of the valid points seen so far, or a valid
//! point beyond an extent that is already final (the first row fixes the
//! innermost extent, and so on outwards), refutes it. So mappings that are not
//! one view, masked ones included (a causal mask, a padded window), are
//! refuted within the first rows. Nothing is stored per point.
//!
//! Walks over a composition of two views step the lower view's digits with
//! additions and carries (no division per point), which keeps a full pass over
//! [`EXACT_LIMIT`](super::merge::EXACT_LIMIT) points in the low milliseconds.

use super::{unravel, ConcreteView};
use crate::error::{invalid, Result};

/// A mapping that is one view, in reduced coordinates.
#[derive(Clone)]
pub(super) enum Solved {
    /// No point is valid.
    Empty,
    /// Valid exactly on `ranges`, with `origin + sum(strides * j)` there.
    View {
        /// Stride of every axis.
        strides: Vec<i128>,
        /// Valid range of every axis.
        ranges: Vec<(i128, i128)>,
        /// Offset at the origin (possibly outside the valid box).
        origin: i128,
    },
}

/// A row-major walk over an index box, yielding an offset or `None` (masked)
/// at each point.
pub(super) trait Walk {
    /// The current point's offset.
    fn value(&self) -> Option<i128>;
    /// Moves to the next point in row-major order; the caller knows the shape
    /// and never advances past the last point.
    fn advance(&mut self, axis: usize) -> Result<()>;
    /// The offset at any point.
    fn at(&self, j: &[i128]) -> Result<Option<i128>>;
}

/// The product of `shape`, or `None` above `limit`.
pub(super) fn volume_within(shape: &[i128], limit: i128) -> Option<i128> {
    if shape.contains(&0) {
        return Some(0);
    }
    let mut total = 1i128;
    for &d in shape {
        total = total.checked_mul(d).filter(|&t| t <= limit)?;
    }
    Some(total)
}

/// The next index after `j` in row-major order over `shape`: the axis that was
/// incremented (deeper axes reset to 0), or `None` after the last point.
fn step(j: &mut [i128], shape: &[i128]) -> Option<usize> {
    for axis in (0..j.len()).rev() {
        j[axis] += 1;
        if j[axis] < shape[axis] {
            return Some(axis);
        }
        j[axis] = 0;
    }
    None
}

/// Whether the mapping walked by `w` over `shape` (every size at least 1) is
/// one view. The caller bounds the number of points.
pub(super) fn decide(shape: &[i128], w: &mut impl Walk) -> Result<Option<Solved>> {
    let rank = shape.len();
    if shape.contains(&0) {
        return Ok(Some(Solved::Empty));
    }
    let mut j = vec![0i128; rank];
    // The first valid point in row-major order is the box's lower corner.
    let first = loop {
        if let Some(v) = w.value() {
            break v;
        }
        match step(&mut j, shape) {
            Some(axis) => w.advance(axis)?,
            None => return Ok(Some(Solved::Empty)),
        }
    };
    let corner = j.clone();
    let mut strides = vec![0i128; rank];
    // Axes whose neighbour of the corner is masked or absent: the box is one thick there.
    let mut thin = vec![false; rank];
    for a in 0..rank {
        let mut next = corner.clone();
        next[a] += 1;
        match (next[a] < shape[a])
            .then(|| w.at(&next))
            .transpose()?
            .flatten()
        {
            Some(v) => strides[a] = v - first,
            None => thin[a] = true,
        }
    }
    let origin = first
        - corner
            .iter()
            .zip(&strides)
            .map(|(c, s)| c * s)
            .sum::<i128>();
    // `want[k]` is the candidate's offset at the current point with the axes
    // after `k` at 0; the last entry is the current point's.
    let mut want = vec![origin; rank + 1];
    for a in 0..rank {
        let v = want[a] + strides[a] * j[a];
        want[a..].fill(v);
    }
    let mut hi: Vec<i128> = corner.iter().map(|&c| c + 1).collect();
    let mut count = 1i128;
    // Outer axes only change between rows: check them once per row that has a
    // valid point, and the innermost axis at every valid point.
    let inner = rank.saturating_sub(1);
    let mut row_checked = true;
    // Axes from `fixed` on have their final extent in `hi`: once an axis before
    // them has moved past the corner, the block of points sharing the corner's
    // earlier axes has been walked, and in a box it spans the box's whole extent
    // on each later axis.
    let mut fixed = rank;
    let inside = |a: usize, j: i128, hi: &mut [i128], fixed: usize| {
        let d = j - corner[a];
        if a >= fixed && j >= hi[a] {
            return false;
        }
        hi[a] = hi[a].max(j + 1);
        d >= 0 && (d == 0 || !thin[a])
    };
    // Whether the current row's outer axes lie in `corner..hi`, recomputed when
    // the row or `hi` changes.
    let (mut row_in, mut row_stale) = (false, true);
    while let Some(axis) = step(&mut j, shape) {
        w.advance(axis)?;
        row_checked &= axis == inner;
        if axis != inner {
            row_stale = true;
        }
        fixed = fixed.min(axis + 1);
        let v = want[axis] + strides[axis];
        want[axis..].fill(v);
        let Some(got) = w.value() else {
            // A box holds the bounding box of its points: a masked point inside
            // `corner..hi` refutes it at once.
            let x = j[inner];
            if rank > 0 && corner[inner] <= x && x < hi[inner] {
                if row_stale {
                    row_in = (0..inner).all(|a| corner[a] <= j[a] && j[a] < hi[a]);
                    row_stale = false;
                }
                if row_in {
                    return Ok(None);
                }
            }
            continue;
        };
        if got != v || !inside(inner, j[inner], &mut hi, fixed) {
            return Ok(None);
        }
        if !row_checked {
            if (0..inner).any(|a| !inside(a, j[a], &mut hi, fixed)) {
                return Ok(None);
            }
            row_checked = true;
            row_stale = true;
        }
        count += 1;
    }
    let volume: i128 = corner.iter().zip(&hi).map(|(c, h)| h - c).product();
    if volume != count {
        return Ok(None);
    }
    Ok(Some(Solved::View {
        strides,
        ranges: corner.into_iter().zip(hi).collect(),
        origin,
    }))
}

/// Walk over `base + sum(m[k] * j[k])` read through a lower view. The lower
/// digits at the start of the current row of every axis are kept, so moving to
/// the next point is one mixed-radix addition of a precomputed digit vector.
pub(super) struct PairWalk<'a> {
    lower: &'a ConcreteView,
    bounds: Vec<(i64, i64)>,
    base: i128,
    m: Vec<i128>,
    /// `m[k]` written in the lower view's radix (outermost digit unbounded).
    add: Vec<Vec<i64>>,
    /// Row `k` (of `m.len() + 1`) holds the digits at the current point with
    /// every axis after `k` set to 0; the last row is the current point.
    digits: Vec<i64>,
    offset: Vec<i128>,
    valid: Vec<bool>,
}

impl<'a> PairWalk<'a> {
    /// A walk of `base + sum(m[k] * j[k])` over a box of `m.len()` axes; every
    /// element it reaches lies inside `lower`, which has at least one element.
    pub(super) fn new(lower: &'a ConcreteView, base: i128, m: &[i128]) -> Result<Self> {
        let shape = lower.shape();
        let inner: i64 = shape.iter().skip(1).product::<i64>().max(1);
        let radix = |x: i128| -> Result<Vec<i64>> {
            let x = i64::try_from(x)
                .map_err(|_| invalid("merge", format!("element {x} out of range")))?;
            let mut ds = unravel(shape, x);
            // `unravel` wraps the outermost digit; a step may exceed its size.
            if let Some(d) = ds.first_mut() {
                *d = x / inner;
            }
            Ok(ds)
        };
        let add = m.iter().map(|&x| radix(x)).collect::<Result<Vec<_>>>()?;
        let start = radix(base)?;
        let rows = m.len() + 1;
        let mut walk = PairWalk {
            lower,
            bounds: lower.valid_bounds(),
            base,
            m: m.to_vec(),
            add,
            digits: start.repeat(rows),
            offset: vec![0; rows],
            valid: vec![false; rows],
        };
        let (offset, valid) = walk.read(&start);
        walk.offset.fill(offset);
        walk.valid.fill(valid);
        Ok(walk)
    }

    /// The lower offset and validity of `digit`.
    fn read(&self, digit: &[i64]) -> (i128, bool) {
        let mut offset = i128::from(self.lower.offset());
        let mut valid = true;
        for ((&d, &t), &(b, e)) in digit.iter().zip(self.lower.strides()).zip(&self.bounds) {
            offset += i128::from(t) * i128::from(d);
            valid &= b <= d && d < e;
        }
        (offset, valid)
    }
}

impl Walk for PairWalk<'_> {
    fn value(&self) -> Option<i128> {
        let last = self.valid.len() - 1;
        self.valid[last].then_some(self.offset[last])
    }

    fn advance(&mut self, axis: usize) -> Result<()> {
        let shape = self.lower.shape();
        let lr = shape.len();
        let (head, tail) = self.digits.split_at_mut((axis + 1) * lr);
        let row = &mut head[axis * lr..];
        let mut carry = 0i64;
        for a in (0..lr).rev() {
            row[a] += self.add[axis][a] + carry;
            carry = 0;
            if a > 0 && row[a] >= shape[a] {
                row[a] -= shape[a];
                carry = 1;
            }
        }
        for deeper in tail.chunks_exact_mut(lr.max(1)) {
            deeper.copy_from_slice(row);
        }
        let (offset, valid) = self.read(&self.digits[axis * lr..(axis + 1) * lr]);
        self.offset[axis..].fill(offset);
        self.valid[axis..].fill(valid);
        Ok(())
    }

    fn at(&self, j: &[i128]) -> Result<Option<i128>> {
        let l = self.base + j.iter().zip(&self.m).map(|(x, m)| x * m).sum::<i128>();
        let l =
            i64::try_from(l).map_err(|_| invalid("merge", format!("element {l} out of range")))?;
        let idx = unravel(self.lower.shape(), l);
        Ok(self.lower.offset_of(&idx)?.map(i128::from))
    }
}

/// Walk marking the points of `{ j : lo <= c + sum(m * j) < hi }` (offset 0).
pub(super) struct SlabWalk<'a> {
    m: &'a [i128],
    c: i128,
    lo: i128,
    hi: i128,
    /// Value of `c + sum(m * j)` at the start of each axis's row, then the point.
    rows: Vec<i128>,
}

impl<'a> SlabWalk<'a> {
    pub(super) fn new(m: &'a [i128], c: i128, lo: i128, hi: i128) -> Self {
        SlabWalk {
            m,
            c,
            lo,
            hi,
            rows: vec![c; m.len() + 1],
        }
    }
}

impl Walk for SlabWalk<'_> {
    fn value(&self) -> Option<i128> {
        let s = *self.rows.last()?;
        (self.lo <= s && s < self.hi).then_some(0)
    }

    fn advance(&mut self, axis: usize) -> Result<()> {
        let s = self.rows[axis] + self.m[axis];
        self.rows[axis..].fill(s);
        Ok(())
    }

    fn at(&self, j: &[i128]) -> Result<Option<i128>> {
        let s = self.c + j.iter().zip(self.m).map(|(x, m)| x * m).sum::<i128>();
        Ok((self.lo <= s && s < self.hi).then_some(0))
    }
}

/// Walk over a table of offsets in row-major order (the top of a run of views
/// read down to some level).
pub(super) struct TableWalk<'a> {
    table: &'a [Option<i64>],
    shape: &'a [i128],
    pos: usize,
}

impl<'a> TableWalk<'a> {
    /// A walk over `table`, which holds one entry per point of `shape`.
    pub(super) fn new(table: &'a [Option<i64>], shape: &'a [i128]) -> Self {
        TableWalk {
            table,
            shape,
            pos: 0,
        }
    }
}

impl Walk for TableWalk<'_> {
    fn value(&self) -> Option<i128> {
        self.table.get(self.pos).copied().flatten().map(i128::from)
    }

    fn advance(&mut self, _axis: usize) -> Result<()> {
        // `decide` advances in row-major order, which is the table's order.
        self.pos += 1;
        Ok(())
    }

    fn at(&self, j: &[i128]) -> Result<Option<i128>> {
        let mut pos = 0i128;
        for (&x, &d) in j.iter().zip(self.shape) {
            pos = pos * d + x;
        }
        let pos = usize::try_from(pos)
            .map_err(|_| invalid("merge", format!("index {pos} out of range")))?;
        Ok(self.table.get(pos).copied().flatten().map(i128::from))
    }
}
