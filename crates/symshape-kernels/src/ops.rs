//! The public operations: materialize, copy, fill, map and zip.
//!
//! Every operation takes its sources as [`Input`]s (buffer, view, pad value) and its
//! destination as an [`Output`] (buffer, view), in that order; results allocated by the
//! operation are [`Dense`].

use std::borrow::Cow;

use symshape_view::{ConcreteStack, ConcreteView, Levels};

use crate::alloc;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::exec::{drive, run_boxes, share_threads, streams, tiled, write_row, Ptr};
use crate::operand::{
    check_extent, check_no_self_overlap, read_extent, shape_of, top, Input, Machine, Output,
};
use crate::plan::{
    innermost, plan_copy_into_levels, plan_materialize_levels, simplify, stack_offsets, Loop,
};
use crate::simd;
use std::mem::size_of;

/// A dense row-major result: its shape and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense<T> {
    /// The shape.
    pub shape: Vec<usize>,
    /// The values, row-major.
    pub values: Vec<T>,
}

/// Largest view materialized without building a [`LoopPlan`].
const SMALL_VIEW: usize = 1024;

/// Materializes `src` into a new row-major buffer; masked elements take the input's pad.
///
/// ```
/// use symshape_kernels::{materialize, Input};
/// use symshape_view::ConcreteView;
/// let buf: Vec<i64> = (0..6).collect();
/// // The transpose of a 2 x 3 matrix.
/// let t = ConcreteView::create(&[3, 2], Some(&[1, 3]), 0, None)?;
/// assert_eq!(materialize(Input::new(&buf, &t))?.values, vec![0, 3, 1, 4, 2, 5]);
/// # Ok::<(), symshape_kernels::Error>(())
/// ```
///
/// # Errors
/// [`Error::OutOfBuffer`] when the view reaches outside its buffer; [`Error::Alloc`] beyond
/// the allocation limit; [`Error::Machine`].
pub fn materialize<T: Element>(src: Input<'_, T>) -> Result<Dense<T>> {
    let shape = shape_of("materialize", src.levels)?;
    let n = alloc::count("materialize", &shape, std::mem::size_of::<T>())?;
    let mut values = alloc::filled_vec("materialize", n, src.pad)?;
    if !small_gather("materialize", src, None, &mut values)? {
        let plan = plan_materialize_levels::<T>(src.levels)?;
        plan.run_materialize(src.buf, &mut values, src.pad)?;
    }
    Ok(Dense { shape, values })
}

/// Axes a small gather handles without allocating.
const SMALL_RANK: usize = 8;

/// Gathers a small unmasked single view of at most [`SMALL_RANK`] axes into the row-major
/// elements of `buf` without a plan (a direct gather is faster than planning one): all of
/// `buf` when `dst` is `None` (a materialize), else the elements of `dst`, which must be the
/// row-major layout of the source's shape at offset 0. Returns whether it applied.
fn small_gather<T: Element>(
    op: &'static str,
    src: Input<'_, T>,
    dst: Option<&ConcreteView>,
    buf: &mut [T],
) -> Result<bool> {
    let [l] = src.levels else {
        return Ok(false);
    };
    let (shape, strides) = (l.shape(), l.strides());
    if l.mask().is_some() || shape.len() > SMALL_RANK {
        return Ok(false);
    }
    if let Some(d) = dst {
        // Compared element by element: for a few axes, faster than a call to `memcmp`.
        let same = d.ndim() == shape.len() && d.shape().iter().zip(shape).all(|(a, b)| a == b);
        if d.mask().is_some() || d.offset() != 0 || !same {
            return Ok(false);
        }
        // Row-major strides (axes of extent 1 may have any).
        let mut expect = 1i64;
        for (&n, &t) in shape.iter().zip(d.strides()).rev() {
            if n != 1 && t != expect {
                return Ok(false);
            }
            expect = expect.saturating_mul(n);
        }
    }
    // Axes of extent > 1 in machine integers, outermost first, and the lowest and highest
    // offset they reach; anything that does not fit goes to the planner, which reports it.
    let mut n = [0usize; SMALL_RANK];
    let mut st = [0isize; SMALL_RANK];
    let mut rank = 0;
    let mut numel = 1usize;
    let Ok(base) = isize::try_from(l.offset()) else {
        return Ok(false);
    };
    let (mut lo, mut hi) = (base, base);
    for (&d, &t) in shape.iter().zip(strides) {
        let (Ok(d), Ok(t)) = (usize::try_from(d), isize::try_from(t)) else {
            return Ok(false);
        };
        numel = numel.saturating_mul(d);
        if d > 1 {
            // In-shape offsets of a view fit `i64`, so do these partial sums (when no axis is
            // empty; then nothing is read).
            let last = t.wrapping_mul(d as isize - 1);
            lo = lo.wrapping_add(last.min(0));
            hi = hi.wrapping_add(last.max(0));
            n[rank] = d;
            st[rank] = t;
            rank += 1;
        }
    }
    if numel > SMALL_VIEW {
        return Ok(false);
    }
    let out = match dst {
        Some(_) => match buf.get_mut(..numel) {
            Some(out) => out,
            None => return Ok(false),
        },
        None if buf.len() == numel => buf,
        None => return Ok(false),
    };
    if numel == 0 {
        return Ok(true);
    }
    if lo < 0 || usize::try_from(hi).map_or(true, |h| h >= src.buf.len()) {
        return Err(Error::OutOfBuffer {
            op,
            role: "source",
            lo: lo as i64,
            hi: hi as i64,
            len: src.buf.len(),
        });
    }
    if rank == 0 {
        n[0] = 1;
        rank = 1;
    }
    let (n_in, s_in) = (n[rank - 1], st[rank - 1]);
    // A transpose of the last two axes (the source's unit stride on the second-to-last)
    // goes through the tiled kernel's register transposes, a block per outer index.
    let transpose = rank >= 2 && st[rank - 2] == 1 && s_in != 1;
    let inner = if transpose { rank - 2 } else { rank - 1 };
    let (outer_n, outer_s) = (&n[..inner], &st[..inner]);
    let block: usize = n[inner..rank].iter().product();
    let sp = src.buf.as_ptr();
    let level = simd::level();
    let mut idx = [0usize; SMALL_RANK];
    let mut off = base;
    for row in out.chunks_exact_mut(block) {
        // SAFETY: `off` is the offset of the first element of an in-shape block (the odometer
        // below keeps it so) and every in-shape offset lies in the extent checked above, so
        // every source offset read is inside `src.buf`; the destination block is `row`.
        unsafe {
            if transpose {
                let nb = n[rank - 2];
                tiled(
                    level,
                    row.as_mut_ptr(),
                    sp as *mut T,
                    [0, off],
                    (0, n_in),
                    (0, nb),
                    s_in,
                    n_in as isize,
                    1,
                    [0, 0],
                    false,
                );
            } else if s_in == 1 {
                row.copy_from_slice(std::slice::from_raw_parts(sp.offset(off), n_in));
            } else {
                for (k, x) in row.iter_mut().enumerate() {
                    *x = *sp.offset(off + k as isize * s_in);
                }
            }
        }
        // Wrapping: the step past the last block is never used.
        for ((i, &d), &s) in idx.iter_mut().zip(outer_n).zip(outer_s).rev() {
            *i += 1;
            off = off.wrapping_add(s);
            if *i < d {
                break;
            }
            *i = 0;
            off = off.wrapping_sub(s.wrapping_mul(d as isize));
        }
    }
    Ok(true)
}

/// Copies `src` into the elements of `dst`, as `a[...] = b` does: elements outside the
/// destination's mask are left alone, masked source elements write the input's pad. The
/// shapes must be equal; no level of the destination may reach an element twice (then the
/// whole destination reaches each element at most once; like PyTorch's refusal of a written
/// tensor with internal overlap, the rule does not look at which indices the levels above read).
///
/// # Errors
/// [`Error::ShapeMismatch`], [`Error::OverlappingDestination`], [`Error::UndecidedOverlap`],
/// [`Error::OutOfBuffer`], [`Error::Alloc`].
pub fn copy<T: Element>(src: Input<'_, T>, dst: Output<'_, T>) -> Result<()> {
    let levels = unflattened(dst.levels);
    if levels.len() < dst.levels.len() {
        check_same_shape("copy", src.levels, dst.levels)?;
        let src_levels = reshaped(src.levels, top(levels).shape())?;
        let src = Input {
            levels: src_levels.levels(),
            ..src
        };
        return copy(src, Output { levels, ..dst });
    }
    if let [d] = dst.levels {
        // A row-major destination at offset 0 is the output of a materialize.
        if small_gather("copy", src, Some(d), dst.buf)? {
            return Ok(());
        }
    }
    match dst.levels {
        [one] => plan_copy_into_levels::<T>(src.levels, one)?.run_copy(src.buf, dst.buf, src.pad),
        levels => {
            check_same_shape("copy", src.levels, levels)?;
            let values = materialize(src)?.values;
            scatter("copy", &values, dst)
        }
    }
}

fn check_same_shape(op: &'static str, src: &[ConcreteView], dst: &[ConcreteView]) -> Result<()> {
    if top(src).shape() != top(dst).shape() {
        return Err(Error::ShapeMismatch {
            op,
            dst: top(dst).shape().to_vec(),
            src: top(src).shape().to_vec(),
        });
    }
    Ok(())
}

/// The destination levels with every top that only flattens the level below removed: a
/// top that is row-major at offset 0, unmasked, with as many elements as the level below,
/// writes element `i` of its row-major order to element `i` of the level below, so writing
/// a source through it is writing the source, reshaped to the level below, into that level.
/// (A framework's writes through a reshape that is not one view, such as a token-major
/// `[b, s, h*d]` into a head-major cache, are of this kind.)
fn unflattened(levels: &[ConcreteView]) -> &[ConcreteView] {
    let mut levels = levels;
    while let [.., below, top] = levels {
        if !(top.is_c_contiguous() && top.mask().is_none() && top.numel() == below.numel()) {
            break;
        }
        levels = &levels[..levels.len() - 1];
    }
    levels
}

/// The source levels read as `shape` (of the same element count) in row-major order: a
/// row-major level pushed on top, merged where the stack allows.
fn reshaped(levels: &[ConcreteView], shape: &[i64]) -> Result<ConcreteStack> {
    let mut all = levels.to_vec();
    all.push(ConcreteView::contiguous(shape)?);
    Ok(ConcreteStack::new(all)?)
}

/// Writes row-major `values` (of the destination's shape) through a destination of several
/// levels: each valid element's offset comes from a table of the whole stack.
fn scatter<T: Element>(op: &'static str, values: &[T], dst: Output<'_, T>) -> Result<()> {
    check_no_self_overlap(op, dst.levels)?;
    // Per element of the top in row-major order, its buffer offset (-1 if invalid); with
    // every level injective no offset repeats.
    let (offsets, reached) = stack_offsets(op, dst.levels)?;
    check_extent(op, "destination", reached, dst.buf.len())?;
    for (&o, &v) in offsets.iter().zip(values) {
        if let Ok(o) = usize::try_from(o) {
            if let Some(slot) = dst.buf.get_mut(o) {
                *slot = v;
            }
        }
    }
    Ok(())
}

/// Copies view `src` of `buf` into view `dst` of the same buffer. The result is that of
/// copying the source through a temporary, whatever the overlap between the two.
///
/// # Errors
/// As [`copy`].
pub fn copy_within<T: Element>(
    buf: &mut [T],
    src: &impl Levels,
    dst: &impl Levels,
    pad: T,
) -> Result<()> {
    let (src, dst) = (src.levels(), dst.levels());
    if let [one] = dst {
        let plan = plan_copy_into_levels::<T>(src, one)?;
        check_extent("copy_within", "source", plan.read, buf.len())?;
        let dst_extent = one.extent();
        check_extent("copy_within", "destination", dst_extent, buf.len())?;
        let disjoint = match (plan.read, dst_extent) {
            (Some((slo, shi)), Some((dlo, dhi))) => shi < dlo || dhi < slo,
            _ => true,
        };
        if disjoint {
            let p = buf.as_mut_ptr();
            // SAFETY: extents checked above and disjoint, so no element is both read and
            // written; destination free of self-overlap (checked by `plan_copy_into`).
            unsafe { run_boxes(&plan, p, p, pad) };
            return Ok(());
        }
    }
    let tmp = materialize(Input {
        buf,
        levels: src,
        pad,
    })?;
    let tmp_view = ConcreteView::contiguous(top(src).shape())?;
    copy(
        Input::new(&tmp.values, &tmp_view),
        Output { buf, levels: dst },
    )
}

/// Writes `value` to every valid element of `dst`.
///
/// # Errors
/// [`Error::OverlappingDestination`], [`Error::UndecidedOverlap`], [`Error::OutOfBuffer`].
pub fn fill<T: Element>(dst: Output<'_, T>, value: T) -> Result<()> {
    let levels = unflattened(dst.levels);
    if levels.len() < dst.levels.len() {
        return fill(Output { levels, ..dst }, value);
    }
    let [one] = dst.levels else {
        let n = alloc::count(
            "fill",
            &shape_of("fill", dst.levels)?,
            std::mem::size_of::<T>(),
        )?;
        let values = alloc::filled_vec("fill", n, value)?;
        return scatter("fill", &values, dst);
    };
    check_no_self_overlap("fill", dst.levels)?;
    check_extent("fill", "destination", one.extent(), dst.buf.len())?;
    let m = Machine::of("fill", one)?;
    let mut base = [base_of(&m)];
    let axes: Vec<Loop<1>> = m
        .valid
        .iter()
        .zip(&m.strides)
        .map(|(&(b, e), &s)| Loop {
            extent: e.saturating_sub(b),
            steps: [s],
        })
        .collect();
    let numel: usize = axes.iter().map(|a| a.extent).product();
    let Some(axes) = simplify(axes, &mut base) else {
        return Ok(());
    };
    let threads = share_threads(
        numel.saturating_mul(std::mem::size_of::<T>()),
        rayon::current_num_threads,
    );
    let Some((n, [s], outer)) = innermost(&axes) else {
        return Ok(());
    };
    let d = Ptr(dst.buf.as_mut_ptr());
    let (level, stream) = (simd::level(), streams(numel.saturating_mul(size_of::<T>())));
    let row = move |off: [isize; 1], start: usize, len: usize| {
        // SAFETY: offsets of valid destination elements, inside the checked extent; each
        // written by one unit only; `level` is the detected one.
        unsafe {
            let dp = d.get().offset(off[0] + start as isize * s);
            write_row(level, stream, dp, s, len, |o, os, _, n| {
                for k in 0..n as isize {
                    *o.offset(k * os) = value;
                }
            });
        }
    };
    drive(outer, base, n, 1 << 14, threads, stream, false, &row);
    Ok(())
}

/// Offset of the first valid element of `m` (the offset of an in-shape index: it fits).
fn base_of(m: &Machine) -> isize {
    m.valid
        .iter()
        .zip(&m.strides)
        .fold(m.offset, |a, (&(b, _), &s)| a + s * b as isize)
}

/// An input as a plain unmasked layout over some buffer: itself when it is one, else a
/// row-major materialization (masked elements taking the input's pad).
pub(crate) fn plain<'a, T: Element>(
    op: &'static str,
    role: &'static str,
    src: Input<'a, T>,
) -> Result<(Cow<'a, [T]>, Machine)> {
    if let [l] = src.levels {
        if l.mask().is_none() {
            check_extent(op, role, l.extent(), src.buf.len())?;
            return Ok((Cow::Borrowed(src.buf), Machine::of(op, l)?));
        }
    }
    check_extent(op, role, read_extent(src.levels), src.buf.len())?;
    let dense = materialize(src)?;
    let m = Machine::row_major(op, &dense.shape)?;
    Ok((Cow::Owned(dense.values), m))
}

/// Applies `f` to every element of `src`, writing through `dst` (same shape). Masked source
/// elements read the input's pad.
///
/// # Errors
/// As [`copy`].
pub fn map_into<T: Element, U: Element>(
    src: Input<'_, T>,
    dst: Output<'_, U>,
    f: impl Fn(T) -> U + Sync,
) -> Result<()> {
    check_same_shape("map", src.levels, dst.levels)?;
    let shape = shape_of("map", src.levels)?;
    match plain_destination("map", dst.levels, dst.buf.len())? {
        Some(m) => map_rows(src, dst.buf, &m, &f),
        None => {
            let n = alloc::count("map", &shape, std::mem::size_of::<U>())?;
            let mut values = alloc::filled_vec("map", n, U::ZERO)?;
            let m = Machine::row_major("map", &shape)?;
            map_rows(src, &mut values, &m, &f)?;
            let rm = ConcreteView::contiguous(top(src.levels).shape())?;
            copy(Input::new(&values, &rm), dst)
        }
    }
}

/// A destination the row loops write directly; `None` when it must go through a temporary.
/// It is one unmasked level, in machine form, once it is known to fit in
/// `buf_len` elements and not to write an element twice; `None` for any other destination.
fn plain_destination(
    op: &'static str,
    levels: &[ConcreteView],
    buf_len: usize,
) -> Result<Option<Machine>> {
    match levels {
        [one] if one.mask().is_none() => {
            check_no_self_overlap(op, levels)?;
            check_extent(op, "destination", one.extent(), buf_len)?;
            Ok(Some(Machine::of(op, one)?))
        }
        _ => Ok(None),
    }
}

fn map_rows<T: Element, U: Element>(
    src: Input<'_, T>,
    out: &mut [U],
    dst: &Machine,
    f: &(impl Fn(T) -> U + Sync),
) -> Result<()> {
    let (buf, layout) = plain("map", "source", src)?;
    let axes: Vec<Loop<2>> = dst
        .shape
        .iter()
        .zip(&dst.strides)
        .zip(&layout.strides)
        .map(|((&n, &d), &s)| Loop {
            extent: n,
            steps: [d, s],
        })
        .collect();
    let mut base = [dst.offset, layout.offset];
    let Some(axes) = simplify(axes, &mut base) else {
        return Ok(());
    };
    let threads = share_threads(
        dst.numel().saturating_mul(std::mem::size_of::<U>()),
        rayon::current_num_threads,
    );
    let Some((n, [ds, ss], outer)) = innermost(&axes) else {
        return Ok(());
    };
    let (d, s) = (Ptr(out.as_mut_ptr()), Ptr(buf.as_ptr() as *mut T));
    let (level, stream) = (
        simd::level(),
        streams(dst.numel().saturating_mul(size_of::<U>())),
    );
    let row = move |off: [isize; 2], start: usize, len: usize| {
        // SAFETY: one segment of one row: offsets inside the destination's checked extent
        // and inside the source's checked extent; units write disjoint elements (the
        // destination is free of self-overlap); `level` is the detected one.
        unsafe {
            let dp = d.get().offset(off[0] + start as isize * ds);
            let sp = s.get().offset(off[1] + start as isize * ss) as *const T;
            write_row(level, stream, dp, ds, len, |o, os, at, n| {
                let sp = sp.offset(at as isize * ss);
                if os == 1 && ss == 1 {
                    let (o, i) = (
                        std::slice::from_raw_parts_mut(o, n),
                        std::slice::from_raw_parts(sp, n),
                    );
                    for (x, y) in o.iter_mut().zip(i) {
                        *x = f(*y);
                    }
                } else {
                    for k in 0..n as isize {
                        *o.offset(k * os) = f(*sp.offset(k * ss));
                    }
                }
            });
        }
    };
    drive(outer, base, n, 1 << 14, threads, stream, false, &row);
    Ok(())
}

/// Applies `f` to every element of `src` into a new row-major buffer.
///
/// # Errors
/// As [`materialize`].
pub fn map<T: Element, U: Element>(
    src: Input<'_, T>,
    f: impl Fn(T) -> U + Sync,
) -> Result<Dense<U>> {
    let shape = shape_of("map", src.levels)?;
    let n = alloc::count("map", &shape, std::mem::size_of::<U>())?;
    let mut values = alloc::filled_vec("map", n, U::ZERO)?;
    let m = Machine::row_major("map", &shape)?;
    map_rows(src, &mut values, &m, &f)?;
    Ok(Dense { shape, values })
}

/// Strides of `layout` stretched to `shape` (right-aligned; stretched axes get stride 0).
fn stretched(layout: &Machine, shape: &[usize]) -> Vec<isize> {
    let pad = shape.len() - layout.shape.len();
    let mut res = vec![0; shape.len()];
    for (k, r) in res.iter_mut().enumerate().skip(pad) {
        let j = k - pad;
        if layout.shape.get(j) == shape.get(k) {
            *r = layout.strides.get(j).copied().unwrap_or(0);
        }
    }
    res
}

/// The broadcast shape of two inputs (NumPy's rules), as the view crate computes it.
fn broadcast(op: &'static str, a: &[i64], b: &[i64]) -> Result<Vec<usize>> {
    let shape =
        symshape_view::concrete::broadcast_shapes(&[a, b]).map_err(|_| Error::Broadcast {
            op,
            lhs: a.to_vec(),
            rhs: b.to_vec(),
        })?;
    shape
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| Error::Overflow {
                op,
                shape: Vec::new(),
            })
        })
        .collect()
}

/// Combines `a` and `b` (broadcast to a common shape, NumPy's rules) element by element with
/// `f`, writing through `dst`, whose shape must be the common shape. Masked elements read
/// their input's pad.
///
/// # Errors
/// [`Error::Broadcast`], and as [`copy`].
pub fn zip_into<A: Element, B: Element, C: Element>(
    a: Input<'_, A>,
    b: Input<'_, B>,
    dst: Output<'_, C>,
    f: impl Fn(A, B) -> C + Sync,
) -> Result<()> {
    let shape = broadcast("zip", a.shape(), b.shape())?;
    let dst_shape = shape_of("zip", dst.levels)?;
    if dst_shape != shape {
        return Err(Error::ShapeMismatch {
            op: "zip",
            dst: top(dst.levels).shape().to_vec(),
            src: shape.iter().map(|&d| d as i64).collect(),
        });
    }
    match plain_destination("zip", dst.levels, dst.buf.len())? {
        Some(m) => zip_rows(a, b, dst.buf, &m, &f),
        None => {
            let n = alloc::count("zip", &shape, std::mem::size_of::<C>())?;
            let mut values = alloc::filled_vec("zip", n, C::ZERO)?;
            let m = Machine::row_major("zip", &shape)?;
            zip_rows(a, b, &mut values, &m, &f)?;
            let rm = ConcreteView::contiguous(top(dst.levels).shape())?;
            copy(Input::new(&values, &rm), dst)
        }
    }
}

fn zip_rows<A: Element, B: Element, C: Element>(
    a: Input<'_, A>,
    b: Input<'_, B>,
    out: &mut [C],
    dst: &Machine,
    f: &(impl Fn(A, B) -> C + Sync),
) -> Result<()> {
    let shape = &dst.shape;
    let (abuf, al) = plain("zip", "lhs", a)?;
    let (bbuf, bl) = plain("zip", "rhs", b)?;
    let (sa, sb) = (stretched(&al, shape), stretched(&bl, shape));
    let axes: Vec<Loop<3>> = (0..shape.len())
        .map(|k| Loop {
            extent: shape[k],
            steps: [dst.strides[k], sa[k], sb[k]],
        })
        .collect();
    let mut base = [dst.offset, al.offset, bl.offset];
    let Some(axes) = simplify(axes, &mut base) else {
        return Ok(());
    };
    let threads = share_threads(
        dst.numel().saturating_mul(std::mem::size_of::<C>()),
        rayon::current_num_threads,
    );
    let Some((n, [ds, xs, ys], outer)) = innermost(&axes) else {
        return Ok(());
    };
    let (d, x, y) = (
        Ptr(out.as_mut_ptr()),
        Ptr(abuf.as_ptr() as *mut A),
        Ptr(bbuf.as_ptr() as *mut B),
    );
    let (level, stream) = (
        simd::level(),
        streams(dst.numel().saturating_mul(size_of::<C>())),
    );
    let row = move |off: [isize; 3], start: usize, len: usize| {
        let st = start as isize;
        // SAFETY: one segment of one row: inside the destination's checked extent and inside
        // both inputs' checked extents; units write disjoint elements; `level` is the
        // detected one.
        unsafe {
            let dp = d.get().offset(off[0] + st * ds);
            let xp = x.get().offset(off[1] + st * xs) as *const A;
            let yp = y.get().offset(off[2] + st * ys) as *const B;
            write_row(level, stream, dp, ds, len, |o, os, at, n| {
                let at = at as isize;
                zip_row(o, os, xp.offset(at * xs), xs, yp.offset(at * ys), ys, n, f);
            });
        }
    };
    drive(outer, base, n, 1 << 14, threads, stream, false, &row);
    Ok(())
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
    // SAFETY: (all arms) the slices cover exactly the ranges of the function's contract.
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
///
/// # Errors
/// [`Error::Broadcast`], and as [`materialize`].
pub fn zip<A: Element, B: Element, C: Element>(
    a: Input<'_, A>,
    b: Input<'_, B>,
    f: impl Fn(A, B) -> C + Sync,
) -> Result<Dense<C>> {
    let shape = broadcast("zip", a.shape(), b.shape())?;
    let n = alloc::count("zip", &shape, std::mem::size_of::<C>())?;
    let mut values = alloc::filled_vec("zip", n, C::ZERO)?;
    let m = Machine::row_major("zip", &shape)?;
    zip_rows(a, b, &mut values, &m, &f)?;
    Ok(Dense { shape, values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use symshape_view::Op;

    /// The merged heads of a head-major cache `[2, 3, 4, 5]` as `[2, 4, 15]`: a permuted
    /// level under a row-major top that only flattens it.
    fn cache_as_tokens() -> ConcreteStack {
        let lower = ConcreteView::contiguous(&[2, 3, 4, 5])
            .unwrap()
            .apply(&Op::Permute(vec![0, 2, 1, 3]))
            .unwrap();
        let top = ConcreteView::contiguous(&[2, 4, 15]).unwrap();
        ConcreteStack::new(vec![lower, top]).unwrap()
    }

    #[test]
    fn a_flattening_top_is_written_through_the_level_below() {
        let dst = cache_as_tokens();
        assert_eq!(dst.levels().len(), 2);
        assert_eq!(unflattened(dst.levels()).len(), 1);
        // The source reshaped to the level below is one view, so the copy is one plan
        // (a tiled permute), not a table.
        let src = ConcreteView::contiguous(&[2, 4, 15]).unwrap();
        let below = unflattened(dst.levels());
        let read = reshaped(std::slice::from_ref(&src), top(below).shape()).unwrap();
        assert_eq!(read.levels().len(), 1);
        let plan = plan_copy_into_levels::<f32>(read.levels(), &below[0]).unwrap();
        assert!(!plan.to_string().contains("table"), "{plan}");
    }

    #[test]
    fn a_top_that_reorders_is_kept() {
        let dst = cache_as_tokens();
        let lower = dst.levels()[0].clone();
        let top = ConcreteView::contiguous(&[2, 4, 15])
            .unwrap()
            .apply(&Op::Flip(vec![2]))
            .unwrap();
        let levels = [lower.clone(), top];
        assert_eq!(unflattened(&levels).len(), 2);
        let masked = ConcreteView::contiguous(&[2, 4, 15])
            .unwrap()
            .apply(&Op::Pad(vec![(0, 0), (0, 0), (0, 1)]))
            .unwrap();
        let levels = [lower, masked];
        assert_eq!(unflattened(&levels).len(), 2);
    }
}
