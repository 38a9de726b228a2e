//! The public operations: materialize, copy, fill, map and zip.

use crate::element::Element;
use crate::error::{KernelError, Result};
use crate::exec::{drive, run_copy, Ptr};
use crate::layout::{check_no_self_overlap, row_major_strides, Layout, View};
use crate::plan::{check_extent, plan_copy, simplify, view_extent, Axis, LoopPlan, PARALLEL_BYTES};
use std::borrow::Cow;

/// A dense row-major result: its shape and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense<T> {
    /// The shape.
    pub shape: Vec<usize>,
    /// The values, row-major.
    pub values: Vec<T>,
}

/// Plans materializing `view` into a fresh row-major buffer of elements of type `T`.
pub fn plan_materialize<T: Element>(view: &impl View) -> Result<LoopPlan<'_>> {
    let dst = Layout::contiguous(view.shape())?;
    plan_copy("materialize", T::NAME, std::mem::size_of::<T>(), dst, view)
}

/// Plans copying `src` into the elements of `dst` (same shape), for elements of type `T`.
pub fn plan_copy_into<'a, T: Element>(dst: &Layout, src: &'a impl View) -> Result<LoopPlan<'a>> {
    check_no_self_overlap("copy", dst)?;
    plan_copy("copy", T::NAME, std::mem::size_of::<T>(), dst.clone(), src)
}

fn check_src(op: &'static str, plan: &LoopPlan<'_>, len: usize) -> Result<()> {
    check_extent(op, "source", plan.read_extent(), len)?;
    if plan.merged.len() > 1 {
        // Table entries are offsets of valid bottom elements, inside the checked extent.
        debug_assert!(plan.table.iter().all(|&o| o < 0 || (o as usize) < len));
    }
    Ok(())
}

impl LoopPlan<'_> {
    fn check_elem<T: Element>(&self) -> Result<()> {
        if std::mem::size_of::<T>() != self.elem_size || T::NAME != self.elem {
            return Err(KernelError::ElementMismatch {
                op: self.op,
                planned: self.elem,
                got: T::NAME,
            });
        }
        Ok(())
    }

    /// Runs a materialize plan: reads `buf` through the planned view and writes every element of
    /// `out` (row-major), masked elements taking `pad`.
    pub fn run_materialize<T: Element>(&self, buf: &[T], out: &mut [T], pad: T) -> Result<()> {
        let op = self.op;
        self.check_elem::<T>()?;
        check_src(op, self, buf.len())?;
        let expected = self.dst.numel();
        if out.len() != expected {
            return Err(KernelError::OutputLength {
                op,
                shape: self.dst.shape().to_vec(),
                expected,
                got: out.len(),
            });
        }
        check_extent(op, "destination", self.dst.extent(), out.len())?;
        // SAFETY: both extents were checked against the buffer lengths just above; `out` and
        // `buf` are distinct borrows; the planned destination has no self-overlap (row-major,
        // or checked when a copy plan was made).
        unsafe { run_copy(self, out.as_mut_ptr(), buf.as_ptr(), pad) };
        Ok(())
    }

    /// Runs a copy plan (or a materialize plan into a buffer of the planned layout): reads
    /// `src_buf` through the planned source view and writes the planned destination elements of
    /// `dst_buf`, masked source elements taking `pad`.
    pub fn run_copy<T: Element>(&self, dst_buf: &mut [T], src_buf: &[T], pad: T) -> Result<()> {
        self.check_elem::<T>()?;
        check_src(self.op, self, src_buf.len())?;
        check_extent(self.op, "destination", self.dst.extent(), dst_buf.len())?;
        // SAFETY: extents checked above; distinct borrows; destination free of self-overlap.
        unsafe { run_copy(self, dst_buf.as_mut_ptr(), src_buf.as_ptr(), pad) };
        Ok(())
    }
}

/// Materializes `view` of `buf` into `out` (row-major, `out.len()` must be the view's element
/// count); masked elements take `pad`.
///
/// Views of at most [`SMALL_VIEW`] elements made of one unmasked layout skip the planner: a
/// direct gather is faster than building a plan for them.
pub fn materialize_into<T: Element>(
    buf: &[T],
    view: &impl View,
    pad: T,
    out: &mut [T],
) -> Result<()> {
    if let [l] = view.levels() {
        let numel = l.numel();
        if l.mask().is_none() && numel <= SMALL_VIEW && l.n_dims() <= 8 {
            if out.len() != numel {
                let shape = l.shape().to_vec();
                return Err(KernelError::OutputLength {
                    op: "materialize",
                    shape,
                    expected: numel,
                    got: out.len(),
                });
            }
            check_extent("materialize", "source", l.extent(), buf.len())?;
            small_gather(buf, l, out, pad);
            return Ok(());
        }
    }
    plan_materialize::<T>(view)?.run_materialize(buf, out, pad)
}

/// Largest view materialized without building a [`LoopPlan`].
pub const SMALL_VIEW: usize = 1024;

/// Row-major gather of a small unmasked layout of at most 8 axes (extent already checked; the
/// `get` fallback is never taken).
fn small_gather<T: Element>(buf: &[T], l: &Layout, out: &mut [T], pad: T) {
    let (shape, strides) = (l.shape(), l.strides());
    let Some((&n_in, outer)) = shape.split_last() else {
        if let Some(o) = out.first_mut() {
            *o = usize::try_from(l.offset())
                .ok()
                .and_then(|i| buf.get(i))
                .copied()
                .unwrap_or(pad);
        }
        return;
    };
    if n_in == 0 {
        return;
    }
    let s_in = strides.last().copied().unwrap_or(0);
    let mut idx = [0usize; 8];
    let mut off = l.offset();
    for row in out.chunks_exact_mut(n_in) {
        let mut o = off;
        for x in row.iter_mut() {
            *x = usize::try_from(o)
                .ok()
                .and_then(|i| buf.get(i))
                .copied()
                .unwrap_or(pad);
            o = o.wrapping_add(s_in);
        }
        for ((i, &n), &s) in idx.iter_mut().zip(outer).zip(strides).rev() {
            *i += 1;
            off = off.wrapping_add(s);
            if *i < n {
                break;
            }
            *i = 0;
            off = off.wrapping_sub(s.wrapping_mul(n as isize));
        }
    }
}

/// Materializes `view` of `buf` into a new row-major buffer; masked elements take `pad`.
///
/// ```
/// use symshape_kernels::{materialize, Layout};
/// let buf: Vec<i64> = (0..6).collect();
/// // The transpose of a 2 x 3 matrix.
/// let t = Layout::new(&[3, 2], &[1, 3], 0)?;
/// assert_eq!(materialize(&buf, &t, 0)?, vec![0, 3, 1, 4, 2, 5]);
/// # Ok::<(), symshape_kernels::KernelError>(())
/// ```
pub fn materialize<T: Element>(buf: &[T], view: &impl View, pad: T) -> Result<Vec<T>> {
    let plan = plan_materialize::<T>(view)?;
    let mut out = vec![pad; plan.dst.numel()];
    plan.run_materialize(buf, &mut out, pad)?;
    Ok(out)
}

/// Copies `src` (a view of `src_buf`) into the elements of `dst` in `dst_buf`, as `a[...] = b`
/// does: elements outside the destination's mask are left alone, masked source elements write
/// `pad`. The shapes must be equal; the destination must reach each element at most once.
pub fn copy<T: Element>(
    dst_buf: &mut [T],
    dst: &Layout,
    src_buf: &[T],
    src: &impl View,
    pad: T,
) -> Result<()> {
    plan_copy_into::<T>(dst, src)?.run_copy(dst_buf, src_buf, pad)
}

/// Copies view `src` of `buf` into view `dst` of the same buffer. The result is that of copying
/// the source through a temporary, whatever the overlap between the two.
pub fn copy_within<T: Element>(buf: &mut [T], dst: &Layout, src: &impl View, pad: T) -> Result<()> {
    let plan = plan_copy_into::<T>(dst, src)?;
    let src_extent = plan.read_extent();
    check_extent("copy_within", "source", src_extent, buf.len())?;
    let dst_extent = dst.extent();
    check_extent("copy_within", "destination", dst_extent, buf.len())?;
    let disjoint = match (src_extent, dst_extent) {
        (Some((slo, shi)), Some((dlo, dhi))) => shi < dlo || dhi < slo,
        _ => true,
    };
    if disjoint {
        let p = buf.as_mut_ptr();
        // SAFETY: extents checked above and disjoint, so no element is both read and written;
        // destination free of self-overlap.
        unsafe { run_copy(&plan, p, p, pad) };
        return Ok(());
    }
    let tmp = materialize(buf, src, pad)?;
    let tmp_view = Layout::contiguous(src.shape())?;
    copy(buf, dst, &tmp, &tmp_view, pad)
}

/// Writes `value` to every valid element of `dst` in `buf`.
pub fn fill<T: Element>(buf: &mut [T], dst: &Layout, value: T) -> Result<()> {
    check_no_self_overlap("fill", dst)?;
    check_extent("fill", "destination", dst.extent(), buf.len())?;
    let region = dst.valid_box();
    let mut base = [region
        .iter()
        .zip(dst.strides())
        .fold(dst.offset(), |a, (&(b, _), &s)| a + s * b as isize)];
    let axes: Vec<Axis<1>> = region
        .iter()
        .zip(dst.strides())
        .map(|(&(b, e), &s)| (e - b, [s]))
        .collect();
    let numel: usize = axes.iter().map(|a| a.0).product();
    let Some(axes) = simplify(axes, &mut base) else {
        return Ok(());
    };
    let parallel = numel.saturating_mul(std::mem::size_of::<T>()) >= PARALLEL_BYTES;
    let Some((&(n, [s]), outer)) = axes.split_last() else {
        return Ok(());
    };
    let d = Ptr(buf.as_mut_ptr());
    let row = move |off: [isize; 1], start: usize, len: usize| {
        for i in start..start + len {
            // SAFETY: offsets of valid destination elements, inside the checked extent; each
            // written by one unit only.
            unsafe { *d.get().offset(off[0] + i as isize * s) = value };
        }
    };
    drive(outer, base, n, 1 << 14, parallel, &row);
    Ok(())
}

/// A view as a plain unmasked layout over some buffer: itself when it is one, else a row-major
/// materialization (masked elements zero).
pub(crate) fn plain<'a, T: Element>(
    op: &'static str,
    role: &'static str,
    buf: &'a [T],
    view: &impl View,
) -> Result<(Cow<'a, [T]>, Layout)> {
    if let [l] = view.levels() {
        if l.mask().is_none() {
            check_extent(op, role, l.extent(), buf.len())?;
            return Ok((Cow::Borrowed(buf), l.clone()));
        }
    }
    let plan = plan_materialize::<T>(view)?;
    check_extent(op, role, view_extent(view.levels()), buf.len())?;
    let mut out = vec![T::ZERO; plan.dst.numel()];
    plan.run_materialize(buf, &mut out, T::ZERO)?;
    Ok((Cow::Owned(out), Layout::contiguous(view.shape())?))
}

fn contiguous_strides(op: &'static str, shape: &[usize]) -> Result<Vec<isize>> {
    row_major_strides(shape).ok_or_else(|| KernelError::Overflow {
        op,
        shape: shape.to_vec(),
        strides: Vec::new(),
        offset: 0,
    })
}

fn check_out_len(op: &'static str, shape: &[usize], got: usize) -> Result<()> {
    let expected: usize = shape.iter().product();
    if got != expected {
        return Err(KernelError::OutputLength {
            op,
            shape: shape.to_vec(),
            expected,
            got,
        });
    }
    Ok(())
}

/// Applies `f` to every element of `view` of `buf`, writing row-major into `out`. Masked
/// elements are `f(zero)`.
pub fn map_into<T: Element, U: Element>(
    buf: &[T],
    view: &impl View,
    out: &mut [U],
    f: impl Fn(T) -> U + Sync,
) -> Result<()> {
    let (src, layout) = plain("map", "source", buf, view)?;
    let shape = layout.shape();
    check_out_len("map", shape, out.len())?;
    let dst = contiguous_strides("map", shape)?;
    let axes: Vec<Axis<2>> = shape
        .iter()
        .zip(&dst)
        .zip(layout.strides())
        .map(|((&n, &d), &s)| (n, [d, s]))
        .collect();
    let mut base = [0, layout.offset()];
    let Some(axes) = simplify(axes, &mut base) else {
        return Ok(());
    };
    let parallel = out.len().saturating_mul(std::mem::size_of::<U>()) >= PARALLEL_BYTES;
    let Some((&(n, [ds, ss]), outer)) = axes.split_last() else {
        return Ok(());
    };
    let (d, s) = (Ptr(out.as_mut_ptr()), Ptr(src.as_ptr() as *mut T));
    let f = &f;
    let row = move |off: [isize; 2], start: usize, len: usize| {
        // SAFETY: one segment of one row: offsets inside `out` (row-major, checked length) and
        // inside the source's checked extent; units write disjoint elements.
        unsafe {
            let dp = d.get().offset(off[0] + start as isize * ds);
            let sp = s.get().offset(off[1] + start as isize * ss) as *const T;
            if ds == 1 && ss == 1 {
                let (o, i) = (
                    std::slice::from_raw_parts_mut(dp, len),
                    std::slice::from_raw_parts(sp, len),
                );
                for (x, y) in o.iter_mut().zip(i) {
                    *x = f(*y);
                }
            } else {
                for k in 0..len as isize {
                    *dp.offset(k * ds) = f(*sp.offset(k * ss));
                }
            }
        }
    };
    drive(outer, base, n, 1 << 14, parallel, &row);
    Ok(())
}

/// Applies `f` to every element of `view` of `buf` into a new row-major buffer.
pub fn map<T: Element, U: Element>(
    buf: &[T],
    view: &impl View,
    f: impl Fn(T) -> U + Sync,
) -> Result<Vec<U>> {
    let mut out = vec![U::ZERO; view.shape().iter().product()];
    map_into(buf, view, &mut out, f)?;
    Ok(out)
}

/// The broadcast of two shapes (NumPy rules: aligned on the right, extent 1 stretches).
pub fn broadcast_shapes(op: &'static str, lhs: &[usize], rhs: &[usize]) -> Result<Vec<usize>> {
    let n = lhs.len().max(rhs.len());
    let mut out = vec![0; n];
    for (k, o) in out.iter_mut().enumerate() {
        let a = (k + lhs.len())
            .checked_sub(n)
            .and_then(|i| lhs.get(i))
            .copied()
            .unwrap_or(1);
        let b = (k + rhs.len())
            .checked_sub(n)
            .and_then(|i| rhs.get(i))
            .copied()
            .unwrap_or(1);
        *o = match (a, b) {
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => {
                return Err(KernelError::Broadcast {
                    op,
                    lhs: lhs.to_vec(),
                    rhs: rhs.to_vec(),
                })
            }
        };
    }
    Ok(out)
}

/// Strides of `layout` stretched to `shape` (right-aligned; stretched axes get stride 0).
fn stretched(layout: &Layout, shape: &[usize]) -> Vec<isize> {
    let pad = shape.len() - layout.n_dims();
    let mut res = vec![0; shape.len()];
    for (k, r) in res.iter_mut().enumerate().skip(pad) {
        let j = k - pad;
        if layout.shape().get(j) == shape.get(k) {
            *r = layout.strides().get(j).copied().unwrap_or(0);
        }
    }
    res
}

/// Combines `a` and `b` (views of `a_buf`, `b_buf`, broadcast to a common shape) element by
/// element with `f`, writing row-major into `out`; returns the common shape. Masked elements
/// read `T::ZERO` (materialize with another pad value first to choose it).
pub fn zip_into<A: Element, B: Element, C: Element>(
    a_buf: &[A],
    a: &impl View,
    b_buf: &[B],
    b: &impl View,
    out: &mut [C],
    f: impl Fn(A, B) -> C + Sync,
) -> Result<Vec<usize>> {
    let shape = broadcast_shapes("zip", a.shape(), b.shape())?;
    check_out_len("zip", &shape, out.len())?;
    let (abuf, al) = plain("zip", "lhs", a_buf, a)?;
    let (bbuf, bl) = plain("zip", "rhs", b_buf, b)?;
    let dst = contiguous_strides("zip", &shape)?;
    let (sa, sb) = (stretched(&al, &shape), stretched(&bl, &shape));
    let axes: Vec<Axis<3>> = (0..shape.len())
        .map(|k| (shape[k], [dst[k], sa[k], sb[k]]))
        .collect();
    let mut base = [0, al.offset(), bl.offset()];
    let Some(axes) = simplify(axes, &mut base) else {
        return Ok(shape);
    };
    let parallel = out.len().saturating_mul(std::mem::size_of::<C>()) >= PARALLEL_BYTES;
    let Some((&(n, [ds, xs, ys]), outer)) = axes.split_last() else {
        return Ok(shape);
    };
    let (d, x, y) = (
        Ptr(out.as_mut_ptr()),
        Ptr(abuf.as_ptr() as *mut A),
        Ptr(bbuf.as_ptr() as *mut B),
    );
    let f = &f;
    let row = move |off: [isize; 3], start: usize, len: usize| {
        let st = start as isize;
        // SAFETY: one segment of one row: inside `out` (checked length) and inside both
        // inputs' checked extents; units write disjoint elements.
        unsafe {
            let dp = d.get().offset(off[0] + st * ds);
            let xp = x.get().offset(off[1] + st * xs) as *const A;
            let yp = y.get().offset(off[2] + st * ys) as *const B;
            zip_row(dp, ds, xp, xs, yp, ys, len, f);
        }
    };
    drive(outer, base, n, 1 << 14, parallel, &row);
    Ok(shape)
}

/// One row of a zip, with the common stride patterns spelled out so they vectorise.
///
/// # Safety
/// For `k < len`: `dp + k*ds` writable, `xp + k*xs` and `yp + k*ys` readable.
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn zip_row<A: Element, B: Element, C: Element>(
    dp: *mut C,
    ds: isize,
    xp: *const A,
    xs: isize,
    yp: *const B,
    ys: isize,
    len: usize,
    f: &impl Fn(A, B) -> C,
) {
    // SAFETY (all arms): the slices cover exactly the ranges of the function's contract.
    unsafe {
        if ds == 1 {
            let o = std::slice::from_raw_parts_mut(dp, len);
            match (xs, ys) {
                (1, 1) => {
                    let (p, q) = (
                        std::slice::from_raw_parts(xp, len),
                        std::slice::from_raw_parts(yp, len),
                    );
                    for ((r, &u), &v) in o.iter_mut().zip(p).zip(q) {
                        *r = f(u, v);
                    }
                    return;
                }
                (0, 1) => {
                    let (u, q) = (*xp, std::slice::from_raw_parts(yp, len));
                    for (r, &v) in o.iter_mut().zip(q) {
                        *r = f(u, v);
                    }
                    return;
                }
                (1, 0) => {
                    let (p, v) = (std::slice::from_raw_parts(xp, len), *yp);
                    for (r, &u) in o.iter_mut().zip(p) {
                        *r = f(u, v);
                    }
                    return;
                }
                _ => {}
            }
        }
        for k in 0..len as isize {
            *dp.offset(k * ds) = f(*xp.offset(k * xs), *yp.offset(k * ys));
        }
    }
}

/// Combines `a` and `b` broadcast to a common shape with `f` into a new row-major buffer.
pub fn zip<A: Element, B: Element, C: Element>(
    a_buf: &[A],
    a: &impl View,
    b_buf: &[B],
    b: &impl View,
    f: impl Fn(A, B) -> C + Sync,
) -> Result<Dense<C>> {
    let shape = broadcast_shapes("zip", a.shape(), b.shape())?;
    let numel = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| KernelError::Overflow {
            op: "zip",
            shape: shape.clone(),
            strides: Vec::new(),
            offset: 0,
        })?;
    let mut values = vec![C::ZERO; numel];
    zip_into(a_buf, a, b_buf, b, &mut values, f)?;
    Ok(Dense { shape, values })
}
