//! The core ops of the exact engine: permute, expand, shrink, pad, flip,
//! unsqueeze and NumPy basic indexing (`apply.rs` runs the rules of unfold and diagonal).

use super::{ceil_div, check_shape, fmt_list, ConcreteView};
use crate::error::{invalid, overflow, unrepresentable, Error, Result};
use crate::index::{index_result_rank, IndexItem};
use crate::lower_op::Exact;

impl ConcreteView {
    /// Reorders axes: axis `i` of the result is axis `axes[i]` of `self`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `axes` is not a permutation of `0..ndim`.
    pub(crate) fn permute(&self, axes: &[usize]) -> Result<Self> {
        let (shape, strides, mask) = crate::axes::permuted(
            axes,
            &self.shape,
            &self.strides,
            self.mask.as_deref(),
            || self.ctx(),
        )?;
        Ok(Self {
            shape,
            strides,
            offset: self.offset,
            mask,
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
    pub(crate) fn expand(&self, new_shape: &[i64]) -> Result<Self> {
        self.check_result_rank("expand", new_shape.len())?;
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
        if new_shape == self.shape() {
            return Ok(self.clone());
        }
        let mut f = self.to_fields();
        f.expand(&mut Exact, new_shape, &|| self.ctx())?;
        Self::build("expand", f.shape, f.strides, f.offset, f.mask)
    }

    /// Restricts every axis to `[start, end)`, with `0 <= start <= end <= dim`.
    ///
    /// An empty range gives a zero-size view. Mask bounds are intersected with the
    /// range and shifted; an empty intersection becomes an empty mask range.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch or a malformed bound.
    pub(crate) fn shrink(&self, bounds: &[(i64, i64)]) -> Result<Self> {
        self.check_rank("shrink", "bounds", bounds.len())?;
        let mut f = self.to_fields();
        f.shrink(&mut Exact, bounds, &|| self.ctx())?;
        Self::build("shrink", f.shape, f.strides, f.offset, f.mask)
    }

    /// Adds `before` and `after` virtual elements on every axis; they are masked out.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) on a rank mismatch or negative padding,
    /// [`Error::Overflow`](crate::Error::Overflow) when sizes or offsets leave `i64`.
    pub(crate) fn pad(&self, padding: &[(i64, i64)]) -> Result<Self> {
        self.check_rank("pad", "padding", padding.len())?;
        if padding.iter().all(|&p| p == (0, 0)) {
            return Ok(self.clone());
        }
        let mut f = self.to_fields();
        f.pad(&mut Exact, padding, &|| self.ctx())?;
        Self::build("pad", f.shape, f.strides, f.offset, f.mask)
    }

    /// Reverses the axes whose flag is set.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `flags` has the wrong length.
    pub(crate) fn flip(&self, flags: &[bool]) -> Result<Self> {
        self.check_rank("flip", "flags", flags.len())?;
        let mut f = self.to_fields();
        f.flip(&Exact, flags, &|| self.ctx())?;
        Ok(Self::from_checked_fields(f))
    }

    /// Reverses the listed axes (each at most once).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when an axis is out of range or repeated.
    pub(crate) fn flip_axes(&self, axes: &[usize]) -> Result<Self> {
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
        // At most one index is kept: the step never moves, and a unit step keeps the
        // stride free of a product that need not fit in i64.
        let step = if count <= 1 { 1 } else { step };
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
    /// [`Error::Invalid`](crate::Error::Invalid) when `axis > ndim`;
    /// [`Error::Limit`](crate::Error::Limit) past [`MAX_RANK`](crate::MAX_RANK) axes.
    pub(crate) fn unsqueeze(&self, axis: usize) -> Result<Self> {
        self.check_result_rank("unsqueeze", self.ndim() + 1)?;
        self.insert_unit_axis(axis)
    }

    /// [`ConcreteView::unsqueeze`] without the rank limit, for the ops that insert axes
    /// on the way to a result within it (indexing keeps integer-indexed axes until it
    /// drops them; `broadcast_to` has checked its result's rank).
    pub(crate) fn insert_unit_axis(&self, axis: usize) -> Result<Self> {
        let mut res = self.clone();
        crate::axes::insert_unit_axis(
            axis,
            &mut res.shape,
            &mut res.strides,
            res.mask.as_mut(),
            || self.ctx(),
        )?;
        Ok(res)
    }

    /// NumPy basic indexing: integers select and drop an axis, slices keep it,
    /// `NewAxis` inserts a size-1 axis and `Ellipsis` stands for the remaining axes.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for too many indices, two ellipses, a zero step or an
    /// integer out of range; [`Error::NotRepresentable`](crate::Error::NotRepresentable) when integers select a
    /// masked-out element into a scalar.
    pub(crate) fn index(&self, items: &[IndexItem]) -> Result<Self> {
        self.check_result_rank("index", index_result_rank(items, self.ndim()))?;
        let (kept, shape) = self.index_keepdims(items)?;
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
                    cur = cur.insert_unit_axis(axis)?;
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
