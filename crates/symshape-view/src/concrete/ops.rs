//! The view ops users expect beyond the core ones, expressed through them.

use super::merge::{slab, Slab};
use super::{ceil_div, check_shape, fmt_list, numel_of, ConcreteView};
use crate::error::{invalid, overflow, unrepresentable, Error, Result};
use crate::index::{const_items, IndexBound, IndexItem};

/// Ops that return one view per piece refuse to build more pieces than this.
pub const MAX_PIECES: i64 = 1 << 24;

impl ConcreteView {
    /// NumPy basic indexing: integers select and drop an axis, slices keep it,
    /// `NewAxis` inserts a size-1 axis and `Ellipsis` stands for the remaining axes.
    ///
    /// # Errors
    /// [`Error::Invalid`] for too many indices, two ellipses, a zero step or an
    /// integer out of range; [`Error::NotRepresentable`] when integers select a
    /// masked-out element into a scalar; [`Error::Symbolic`] when an entry is a
    /// symbolic expression (use [`View::apply`](crate::View::apply)).
    pub fn index<B: IndexBound>(&self, items: &[IndexItem<B>]) -> Result<Self> {
        let items = const_items(items).ok_or_else(|| Error::Symbolic {
            op: "index",
            what: "an index entry",
            expr: crate::op::fmt_items(items),
        })?;
        let (kept, shape) = self.index_keepdims(&items)?;
        kept.drop_unit_axes("index", &shape)
    }

    /// Applies `items` keeping integer-indexed axes as size 1; returns that view and
    /// the final shape (without those axes).
    pub(crate) fn index_keepdims(&self, items: &[IndexItem]) -> Result<(Self, Vec<i64>)> {
        let consumed = items
            .iter()
            .filter(|i| matches!(i, IndexItem::Int(_) | IndexItem::Slice { .. }))
            .count();
        let ellipses = items.iter().filter(|i| **i == IndexItem::Ellipsis).count();
        let shown = || {
            let parts: Vec<String> = items.iter().map(ToString::to_string).collect();
            format!("[{}]", parts.join(", "))
        };
        if ellipses > 1 {
            return Err(invalid(
                "index",
                format!("index {} has more than one ellipsis", shown()),
            ));
        }
        if consumed > self.ndim() {
            return Err(invalid(
                "index",
                format!(
                    "too many indices in {} for {} of rank {}",
                    shown(),
                    self.ctx(),
                    self.ndim()
                ),
            ));
        }
        let mut cur = self.clone();
        let mut axis = 0usize;
        let mut shape = Vec::new();
        for item in items {
            match *item {
                IndexItem::Int(i) => {
                    let d = cur.shape()[axis];
                    let ii = if i < 0 { i + d } else { i };
                    if !(0 <= ii && ii < d) {
                        return Err(invalid(
                            "index",
                            format!(
                                "index {i} is out of bounds for axis {axis} with size {d} of {}",
                                self.ctx()
                            ),
                        ));
                    }
                    cur = cur.step_axis("index", axis, ii, 1, 1)?;
                    axis += 1;
                }
                IndexItem::Slice { start, stop, step } => {
                    let d = cur.shape()[axis];
                    let (first, count, step) =
                        slice_indices(d, start, stop, step).ok_or_else(|| {
                            invalid("index", format!("slice step cannot be zero in {}", shown()))
                        })?;
                    cur = cur.step_axis("index", axis, first, count, step)?;
                    shape.push(count);
                    axis += 1;
                }
                IndexItem::NewAxis => {
                    cur = cur.unsqueeze(axis)?;
                    shape.push(1);
                    axis += 1;
                }
                IndexItem::Ellipsis => {
                    for _ in 0..self.ndim() - consumed {
                        shape.push(cur.shape()[axis]);
                        axis += 1;
                    }
                }
            }
        }
        shape.extend_from_slice(&cur.shape()[axis..]);
        Ok((cur, shape))
    }

    /// Removes size-1 axes by a reshape to `shape`, reporting failure under `op`.
    pub(crate) fn drop_unit_axes(&self, op: &'static str, shape: &[i64]) -> Result<Self> {
        self.reshape(shape).map_err(|e| match e {
            Error::NotRepresentable { .. } => unrepresentable(
                op,
                format!(
                    "{} has no valid element, and a scalar view cannot be masked out; use a ViewStack",
                    self.ctx()
                ),
            ),
            other => other,
        })
    }

    /// Removes the listed size-1 axes, or every size-1 axis when `axes` is `None`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when an axis is out of range or not of size 1.
    pub fn squeeze(&self, axes: Option<&[usize]>) -> Result<Self> {
        let mut drop = vec![false; self.ndim()];
        match axes {
            None => {
                for (a, &d) in self.shape().iter().enumerate() {
                    drop[a] = d == 1;
                }
            }
            Some(list) => {
                for &a in list {
                    self.check_axis("squeeze", a)?;
                    if self.shape()[a] != 1 {
                        return Err(invalid(
                            "squeeze",
                            format!(
                                "axis {a} has size {} in {}; only size-1 axes can be squeezed",
                                self.shape()[a],
                                self.ctx()
                            ),
                        ));
                    }
                    drop[a] = true;
                }
            }
        }
        let shape: Vec<i64> = self
            .shape()
            .iter()
            .zip(&drop)
            .filter(|(_, &x)| !x)
            .map(|(&d, _)| d)
            .collect();
        self.drop_unit_axes("squeeze", &shape)
    }

    /// Swaps two axes (`transpose` and `swapaxes` in NumPy and PyTorch).
    ///
    /// # Errors
    /// [`Error::Invalid`] when an axis is out of range.
    pub fn swapaxes(&self, a: usize, b: usize) -> Result<Self> {
        self.check_axis("swapaxes", a)?;
        self.check_axis("swapaxes", b)?;
        let mut axes: Vec<usize> = (0..self.ndim()).collect();
        axes.swap(a, b);
        self.permute(&axes)
    }

    /// Same as [`ConcreteView::swapaxes`].
    ///
    /// # Errors
    /// As [`ConcreteView::swapaxes`].
    pub fn transpose(&self, a: usize, b: usize) -> Result<Self> {
        self.swapaxes(a, b)
    }

    /// Moves axis `src` to position `dst`, keeping the order of the others.
    ///
    /// # Errors
    /// [`Error::Invalid`] when an axis is out of range.
    pub fn movedim(&self, src: usize, dst: usize) -> Result<Self> {
        self.check_axis("movedim", src)?;
        self.check_axis("movedim", dst)?;
        let mut axes: Vec<usize> = (0..self.ndim()).filter(|&a| a != src).collect();
        axes.insert(dst, src);
        self.permute(&axes)
    }

    /// NumPy's `broadcast_to`: prepends size-1 axes, then expands size-1 axes.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the shapes do not broadcast to exactly `shape`.
    pub fn broadcast_to(&self, shape: &[i64]) -> Result<Self> {
        check_shape("broadcast_to", shape)?;
        let n = self.ndim();
        let ok = shape.len() >= n
            && self
                .shape()
                .iter()
                .zip(&shape[shape.len() - n..])
                .all(|(&d, &t)| d == t || d == 1);
        if !ok {
            return Err(invalid(
                "broadcast_to",
                format!(
                    "cannot broadcast shape {} to {}",
                    fmt_list(self.shape()),
                    fmt_list(shape)
                ),
            ));
        }
        let mut cur = self.clone();
        for _ in n..shape.len() {
            cur = cur.unsqueeze(0)?;
        }
        cur.expand(shape)
    }

    /// Restricts `axis` to `length` indices from `start` (negative counts from the end).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the range leaves the axis.
    pub fn narrow(&self, axis: usize, start: i64, length: i64) -> Result<Self> {
        self.check_axis("narrow", axis)?;
        let d = self.shape()[axis];
        let s = if start < 0 { start + d } else { start };
        if !(0 <= s && s <= d && 0 <= length && length <= d - s) {
            return Err(invalid(
                "narrow",
                format!(
                    "start {start} and length {length} leave axis {axis} of size {d} of {}",
                    self.ctx()
                ),
            ));
        }
        let mut bounds: Vec<(i64, i64)> = self.shape().iter().map(|&x| (0, x)).collect();
        bounds[axis] = (s, s + length);
        self.shrink(&bounds)
    }

    /// Splits `axis` into pieces of `size` indices (the last may be smaller).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `size <= 0` or the axis is out of range.
    pub fn split(&self, axis: usize, size: i64) -> Result<Vec<Self>> {
        self.check_axis("split", axis)?;
        if size <= 0 {
            return Err(invalid(
                "split",
                format!("piece size {size} must be positive for {}", self.ctx()),
            ));
        }
        let d = self.shape()[axis];
        let pieces = ceil_div(d, size);
        if pieces > MAX_PIECES {
            return Err(invalid(
                "split",
                format!(
                    "{pieces} pieces of size {size} along axis {axis} of {} exceed the limit of {MAX_PIECES}",
                    self.ctx()
                ),
            ));
        }
        let mut sizes = Vec::new();
        let mut at = 0;
        while at < d {
            sizes.push(size.min(d - at));
            at = at.saturating_add(size);
        }
        if sizes.is_empty() {
            sizes.push(0);
        }
        self.split_sizes(axis, &sizes)
    }

    /// Splits `axis` into consecutive pieces of the given sizes, which must add up to its size.
    ///
    /// # Errors
    /// [`Error::Invalid`] when a size is negative or the sizes do not add up.
    pub fn split_sizes(&self, axis: usize, sizes: &[i64]) -> Result<Vec<Self>> {
        self.check_axis("split_sizes", axis)?;
        let d = self.shape()[axis];
        let total = sizes.iter().try_fold(
            0i64,
            |acc, &s| {
                if s < 0 {
                    None
                } else {
                    acc.checked_add(s)
                }
            },
        );
        if total != Some(d) {
            return Err(invalid(
                "split_sizes",
                format!(
                    "sizes {} do not add up to size {d} of axis {axis} of {}",
                    fmt_list(sizes),
                    self.ctx()
                ),
            ));
        }
        let mut at = 0;
        sizes
            .iter()
            .map(|&s| {
                let v = self.narrow(axis, at, s);
                at += s;
                v
            })
            .collect()
    }

    /// PyTorch's `chunk`: at most `n` pieces of `ceil(dim / n)` indices.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `n <= 0` or the axis is out of range.
    pub fn chunk(&self, axis: usize, n: i64) -> Result<Vec<Self>> {
        self.check_axis("chunk", axis)?;
        if n <= 0 {
            return Err(invalid(
                "chunk",
                format!("chunk count {n} must be positive for {}", self.ctx()),
            ));
        }
        let d = self.shape()[axis];
        self.split(axis, ceil_div(d, n).max(1))
    }

    /// One view per index of `axis`, with that axis removed.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the axis is out of range;
    /// [`Error::NotRepresentable`] as for [`ConcreteView::index`].
    pub fn unbind(&self, axis: usize) -> Result<Vec<Self>> {
        self.check_axis("unbind", axis)?;
        let d = self.shape()[axis];
        if d > MAX_PIECES {
            return Err(invalid(
                "unbind",
                format!(
                    "{d} pieces along axis {axis} of {} exceed the limit of {MAX_PIECES}",
                    self.ctx()
                ),
            ));
        }
        let mut items = vec![IndexItem::FULL; axis];
        items.push(IndexItem::Int(0));
        (0..self.shape()[axis])
            .map(|i| {
                if let Some(last) = items.last_mut() {
                    *last = IndexItem::Int(i);
                }
                self.index(&items)
            })
            .collect()
    }

    /// PyTorch's `unfold`: windows of `size` indices every `step` along `axis`;
    /// the window axis is appended last.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `size` exceeds the axis or `step <= 0`;
    /// [`Error::NotRepresentable`] when a mask on `axis` cuts windows unevenly.
    pub fn unfold(&self, axis: usize, size: i64, step: i64) -> Result<Self> {
        self.check_axis("unfold", axis)?;
        let d = self.shape()[axis];
        if !(0 <= size && size <= d) || step <= 0 {
            return Err(invalid(
                "unfold",
                format!(
                    "window size {size} and step {step} do not fit axis {axis} of size {d} of {}",
                    self.ctx()
                ),
            ));
        }
        let n = ((d - size) / step).checked_add(1).ok_or_else(|| {
            overflow(
                "unfold",
                format!("window count along axis {axis} of {}", self.ctx()),
            )
        })?;
        let t = self.strides()[axis];
        let mut shape = self.shape().to_vec();
        let mut strides = self.strides().to_vec();
        shape[axis] = n;
        strides[axis] = if n > 1 {
            t.checked_mul(step).ok_or_else(|| {
                overflow(
                    "unfold",
                    format!("stride {t} times step {step} of {}", self.ctx()),
                )
            })?
        } else {
            t
        };
        shape.push(size);
        strides.push(t);
        if self.is_empty() && n > 0 && size > 0 && self.numel() > 0 {
            return Self::all_masked("unfold", &shape);
        }
        let mut mask = self.valid_bounds();
        let (b, e) = mask[axis];
        let ranges = if (b, e) == (0, d) || n == 0 || size == 0 {
            vec![(0, n), (0, size)]
        } else {
            let m = [i128::from(step), 1];
            let ns = [i128::from(n), i128::from(size)];
            match slab(&m, &ns, 0, i128::from(b), i128::from(e)) {
                Slab::Box(r) => r
                    .iter()
                    .map(|&(x, y)| (x as i64, y as i64))
                    .collect(),
                Slab::Empty => vec![(0, 0), (0, 0)],
                Slab::NotBox | Slab::Unknown => {
                    return Err(unrepresentable(
                        "unfold",
                        format!(
                            "windows of size {size} every {step} along axis {axis} of {} cut its mask unevenly; call contiguous() first",
                            self.ctx()
                        ),
                    ))
                }
            }
        };
        mask[axis] = ranges[0];
        mask.push(ranges[1]);
        Self::build("unfold", shape, strides, self.offset(), Some(mask))
    }

    /// PyTorch's `diagonal`: removes axes `a` and `b` and appends their diagonal,
    /// shifted by `offset` (positive: above the main diagonal).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the axes are equal or out of range.
    pub fn diagonal(&self, offset: i64, a: usize, b: usize) -> Result<Self> {
        self.check_axis("diagonal", a)?;
        self.check_axis("diagonal", b)?;
        if a == b {
            return Err(invalid(
                "diagonal",
                format!("axes {a} and {b} must differ for {}", self.ctx()),
            ));
        }
        let (da, db) = (self.shape()[a], self.shape()[b]);
        let (r0, c0) = if offset >= 0 {
            (0, offset)
        } else {
            (offset.saturating_neg(), 0)
        };
        let len = (da - r0).min(db.saturating_sub(c0)).max(0);
        let (ta, tb) = (self.strides()[a], self.strides()[b]);
        let stride = ta.checked_add(tb).ok_or_else(|| {
            overflow("diagonal", format!("strides {ta} + {tb} of {}", self.ctx()))
        })?;
        let keep: Vec<usize> = (0..self.ndim()).filter(|&x| x != a && x != b).collect();
        let mut shape: Vec<i64> = keep.iter().map(|&x| self.shape()[x]).collect();
        let mut strides: Vec<i64> = keep.iter().map(|&x| self.strides()[x]).collect();
        shape.push(len);
        strides.push(stride);
        let bounds = self.valid_bounds();
        let mut mask: Vec<(i64, i64)> = keep.iter().map(|&x| bounds[x]).collect();
        let mut off = self.offset();
        if len > 0 && shape.iter().all(|&d| d > 0) {
            off += r0 * ta + c0 * tb;
            let (ba, ea) = bounds[a];
            let (bb, eb) = bounds[b];
            let lo = (ba - r0).max(bb - c0).clamp(0, len);
            let hi = (ea - r0).min(eb - c0).clamp(lo, len);
            mask.push((lo, hi));
        } else {
            mask.push((0, len));
        }
        Self::build("diagonal", shape, strides, off, Some(mask))
    }

    /// Merges axes `start..=end` into one (PyTorch's `flatten`).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `start > end` or an axis is out of range;
    /// [`Error::NotRepresentable`] as for [`ConcreteView::reshape`].
    pub fn flatten(&self, start: usize, end: usize) -> Result<Self> {
        if self.ndim() == 0 && start == 0 && end == 0 {
            return self.reshape(&[1]);
        }
        self.check_axis("flatten", start)?;
        self.check_axis("flatten", end)?;
        if start > end {
            return Err(invalid(
                "flatten",
                format!(
                    "start axis {start} is after end axis {end} for {}",
                    self.ctx()
                ),
            ));
        }
        let mut shape = self.shape()[..start].to_vec();
        shape.push(numel_of(&self.shape()[start..=end]).ok_or_else(|| {
            overflow(
                "flatten",
                format!("merged size of axes {start}..={end} of {}", self.ctx()),
            )
        })?);
        shape.extend_from_slice(&self.shape()[end + 1..]);
        self.reshape(&shape)
    }

    /// Splits `axis` into `sizes`, whose product must be its size.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the product differs or the axis is out of range;
    /// [`Error::NotRepresentable`] as for [`ConcreteView::reshape`].
    pub fn unflatten(&self, axis: usize, sizes: &[i64]) -> Result<Self> {
        self.check_axis("unflatten", axis)?;
        let p = check_shape("unflatten", sizes)?;
        if p != self.shape()[axis] {
            return Err(invalid(
                "unflatten",
                format!(
                    "sizes {} do not multiply to size {} of axis {axis} of {}",
                    fmt_list(sizes),
                    self.shape()[axis],
                    self.ctx()
                ),
            ));
        }
        let mut shape = self.shape()[..axis].to_vec();
        shape.extend_from_slice(sizes);
        shape.extend_from_slice(&self.shape()[axis + 1..]);
        self.reshape(&shape)
    }

    /// NumPy's `as_strided`, checked: every element must lie in a buffer of `buffer_len` elements.
    ///
    /// # Errors
    /// As [`ConcreteView::create`], and [`Error::Invalid`] when an offset leaves the buffer.
    pub fn as_strided(
        shape: &[i64],
        strides: &[i64],
        offset: i64,
        buffer_len: i64,
    ) -> Result<Self> {
        let v = Self::create(shape, Some(strides), offset, None)?;
        if v.numel() == 0 {
            return Ok(v);
        }
        let (mut lo, mut hi) = (offset, offset);
        for (&d, &t) in shape.iter().zip(strides) {
            // create checked these sums.
            let r = (d - 1) * t;
            if r < 0 {
                lo += r;
            } else {
                hi += r;
            }
        }
        if lo < 0 || hi >= buffer_len {
            return Err(invalid(
                "as_strided",
                format!(
                    "{} reaches offsets {lo}..={hi} outside a buffer of {buffer_len} elements",
                    v.ctx()
                ),
            ));
        }
        Ok(v)
    }
}

/// NumPy's broadcast of several shapes (right-aligned; equal sizes or 1).
///
/// # Errors
/// [`Error::Invalid`] showing both shapes when two sizes differ and neither is 1.
pub fn broadcast_shapes(shapes: &[&[i64]]) -> Result<Vec<i64>> {
    let mut res: Vec<i64> = Vec::new();
    for s in shapes {
        check_shape("broadcast_shapes", s)?;
        let n = res.len().max(s.len());
        let mut out = vec![1i64; n];
        for (k, o) in out.iter_mut().enumerate() {
            let pick = |v: &[i64]| (k + v.len()).checked_sub(n).map_or(1, |i| v[i]);
            let (x, y) = (pick(&res), pick(s));
            *o = if x == y || y == 1 {
                x
            } else if x == 1 {
                y
            } else {
                return Err(invalid(
                    "broadcast_shapes",
                    format!(
                        "shapes {} and {} do not broadcast: axis {} has sizes {x} and {y}",
                        fmt_list(&res),
                        fmt_list(s),
                        k as i64 - n as i64
                    ),
                ));
            };
        }
        res = out;
    }
    Ok(res)
}

/// `(first, count, step)` of a NumPy slice over an axis of size `d`; `None` for step 0.
fn slice_indices(
    d: i64,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Option<(i64, i64, i64)> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let (d, st) = (i128::from(d), i128::from(step));
    let norm = |v: i64, lo: i128, hi: i128| {
        let v = i128::from(v);
        let v = if v < 0 { v + d } else { v };
        v.clamp(lo, hi)
    };
    let (first, count) = if st > 0 {
        let a = start.map_or(0, |v| norm(v, 0, d));
        let b = stop.map_or(d, |v| norm(v, 0, d));
        (a, if b > a { (b - a + st - 1) / st } else { 0 })
    } else {
        let a = start.map_or(d - 1, |v| norm(v, -1, d - 1));
        let b = stop.map_or(-1, |v| norm(v, -1, d - 1));
        (a, if a > b { (a - b - st - 1) / -st } else { 0 })
    };
    // A single element does not need the step; keeping it could overflow the stride.
    let step = if count <= 1 { 1 } else { step };
    Some((first.max(0) as i64, count as i64, step))
}
