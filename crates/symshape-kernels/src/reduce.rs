//! Reductions over chosen axes, deterministic whatever the number of threads.
//!
//! Every output element is folded by one task, in an order fixed by the layout, never by the
//! thread count. Where the innermost kept axis lies inside the reduced ones in memory, each
//! output takes the reduced indices in row-major order. Otherwise builtin operations keep 16
//! running lanes over the innermost reduced axis, whatever its stride (element `i` goes to lane
//! `i % 16`), combined pairwise at the end, so a strided run folds exactly as its contiguous
//! copy; other folds go in row-major order of the reduced axes. When
//! there are few outputs and many inputs, the outer reduced positions (or, failing that, the
//! innermost reduced axis) are cut into blocks whose bounds depend only on the shape; blocks are
//! folded from the identity and combined left to right.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::exec::Ptr;
use crate::operand::{shape_of, Input};
use crate::ops::{plain, Dense};
use rayon::prelude::*;

/// A builtin reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReduceOp {
    /// Sum (wrapping for integers, `|` for bool).
    Sum,
    /// Product (wrapping for integers, `&` for bool).
    Prod,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

/// Options of a reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReduceConfig {
    /// Keep the reduced axes with extent 1 instead of dropping them.
    pub keep_dims: bool,
}

/// A fold of elements `T` into an accumulator `Acc`: builtin folds accumulate in
/// [`Element::Acc`] (`f32` for `f16` and `bf16`), user folds in `T` itself.
trait Fold<T>: Sync {
    type Acc: Element;
    /// Whether the fold may be regrouped into lanes (builtin, associative up to rounding).
    const LANES: bool;
    fn identity(&self) -> Self::Acc;
    /// `a` folded with the element `x`.
    fn step(&self, a: Self::Acc, x: T) -> Self::Acc;
    /// Two partial folds combined.
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The result of an accumulator.
    fn finish(&self, a: Self::Acc) -> T;
    /// Each of `src` as an accumulator into `dst` (as far as the shorter goes): `step` is
    /// `combine` with the element widened, for every fold.
    fn widen(&self, src: &[T], dst: &mut [Self::Acc]);
}

macro_rules! builtin {
    ($name:ident, $id:expr, $f:ident) => {
        struct $name;
        impl<T: Element> Fold<T> for $name {
            type Acc = T::Acc;
            const LANES: bool = true;
            #[inline(always)]
            fn identity(&self) -> T::Acc {
                $id
            }
            #[inline(always)]
            fn step(&self, a: T::Acc, x: T) -> T::Acc {
                a.$f(x.to_acc())
            }
            #[inline(always)]
            fn combine(&self, a: T::Acc, b: T::Acc) -> T::Acc {
                a.$f(b)
            }
            #[inline(always)]
            fn finish(&self, a: T::Acc) -> T {
                T::from_acc(a)
            }
            #[inline(always)]
            fn widen(&self, src: &[T], dst: &mut [T::Acc]) {
                T::to_acc_slice(src, dst)
            }
        }
    };
}
builtin!(SumFold, <T::Acc as Element>::ZERO, add);
builtin!(ProdFold, <T::Acc as Element>::ONE, mul);
builtin!(MinFold, <T::Acc as Element>::HIGHEST, min_of);
builtin!(MaxFold, <T::Acc as Element>::LOWEST, max_of);

struct UserFold<T, F> {
    identity: T,
    f: F,
}

impl<T: Element, F: Fn(T, T) -> T + Sync> Fold<T> for UserFold<T, F> {
    type Acc = T;
    const LANES: bool = false;
    fn identity(&self) -> T {
        self.identity
    }
    #[inline(always)]
    fn step(&self, a: T, b: T) -> T {
        (self.f)(a, b)
    }
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        (self.f)(a, b)
    }
    #[inline(always)]
    fn finish(&self, a: T) -> T {
        a
    }
    fn widen(&self, src: &[T], dst: &mut [T]) {
        for (d, &x) in dst.iter_mut().zip(src) {
            *d = x;
        }
    }
}

const LANES: usize = 16;

/// Elements widened at once before they are folded into the lanes (a multiple of `LANES`).
const WIDE_BLOCK: usize = 16 * LANES;

/// Elements of the innermost reduced axis per block when few outputs are split across threads.
const INNER_BLOCK: usize = 1 << 15;

/// Input elements above which a reduction runs on the rayon thread pool.
const PARALLEL_ELEMS: usize = 1 << 18;

/// Room for a block of gathered elements and a block of widened ones, made once per task
/// rather than once per output (short rows would spend their time clearing it).
struct Scratch<T, A> {
    gathered: [T; WIDE_BLOCK],
    wide: [A; WIDE_BLOCK],
}

impl<T: Element, A: Element> Scratch<T, A> {
    fn new() -> Self {
        Scratch {
            gathered: [T::ZERO; WIDE_BLOCK],
            wide: [A::ZERO; WIDE_BLOCK],
        }
    }
}

/// Folds the `n` elements `stride` apart from `p` into `acc`. A builtin fold of at least
/// `2 * LANES` elements keeps `LANES` running lanes whatever the stride (element `i` goes to
/// lane `i % LANES`, the lanes combined pairwise at the end), so a strided run folds exactly
/// as its contiguous copy would; other folds go in order. Strided runs are gathered a block
/// at a time into `scratch`; elements that widen (`f16`, `bf16`) are widened a block at a
/// time.
///
/// # Safety
/// The elements `p + i * stride` for `i < n` are readable.
#[inline(always)]
unsafe fn fold_run<T: Element, F: Fold<T>>(
    fold: &F,
    acc: F::Acc,
    (p, stride, n): (*const T, isize, usize),
    scratch: &mut Scratch<T, F::Acc>,
) -> F::Acc {
    if !F::LANES || n < 2 * LANES {
        let mut acc = acc;
        for i in 0..n as isize {
            // SAFETY: element `i < n`, readable by the contract.
            acc = fold.step(acc, unsafe { *p.offset(i * stride) });
        }
        return acc;
    }
    let mut lanes = [fold.identity(); LANES];
    let mut i = 0;
    while i < n {
        let len = WIDE_BLOCK.min(n - i);
        // SAFETY: elements `i..i + len`, with `i + len <= n`, readable by the contract.
        unsafe {
            let q = p.offset(i as isize * stride);
            if widens::<T, F>() {
                let block = gather_wide(fold, (q, stride, len), scratch);
                combine_lanes(fold, &mut lanes, block);
            } else {
                fold_lanes(
                    fold,
                    &mut lanes,
                    block(q, stride, len, &mut scratch.gathered),
                );
            }
        }
        i += len;
    }
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            lanes[i] = fold.combine(lanes[i], lanes[i + width]);
        }
    }
    fold.combine(acc, lanes[0])
}

/// Folds `block` (its first element going to lane 0) into `lanes`, element `j` into lane
/// `j % LANES`.
#[inline(always)]
fn fold_lanes<T: Element, F: Fold<T>>(fold: &F, lanes: &mut [F::Acc; LANES], block: &[T]) {
    let mut chunks = block.chunks_exact(LANES);
    for c in &mut chunks {
        for (l, &x) in lanes.iter_mut().zip(c) {
            *l = fold.step(*l, x);
        }
    }
    for (l, &x) in lanes.iter_mut().zip(chunks.remainder()) {
        *l = fold.step(*l, x);
    }
}

/// Combines the widened `block` into `lanes` as [`fold_lanes`] folds the elements (`combine`
/// of a widened element is `step` of the element).
#[inline(always)]
fn combine_lanes<F: Fold<T>, T>(fold: &F, lanes: &mut [F::Acc; LANES], block: &[F::Acc]) {
    let mut chunks = block.chunks_exact(LANES);
    for c in &mut chunks {
        for (l, &x) in lanes.iter_mut().zip(c) {
            *l = fold.combine(*l, x);
        }
    }
    for (l, &x) in lanes.iter_mut().zip(chunks.remainder()) {
        *l = fold.combine(*l, x);
    }
}

/// Copies the `out.len()` elements `stride` apart from `p` into `out`. At stride -1 (a flip)
/// and 2 (every second element: a real or imaginary part, an `a[:, ::2]`) the span they lie
/// in is read as a slice, which vectorizes where a gather does not.
///
/// # Safety
/// The elements `p + j * stride` for `j < out.len()` are readable.
#[inline(always)]
unsafe fn gather<T: Element>(p: *const T, stride: isize, out: &mut [T]) {
    if stride == -1 && !out.is_empty() {
        // SAFETY: the span from the last element to the first, readable by the contract.
        let span =
            unsafe { std::slice::from_raw_parts(p.offset(1 - out.len() as isize), out.len()) };
        for (o, &x) in out.iter_mut().zip(span.iter().rev()) {
            *o = x;
        }
        return;
    }
    if let (2, Some((last, body))) = (stride, out.split_last_mut()) {
        // SAFETY: the span from the first element to the last, readable by the contract.
        let span = unsafe { std::slice::from_raw_parts(p, 2 * body.len() + 1) };
        for (o, pair) in body.iter_mut().zip(span.chunks_exact(2)) {
            *o = pair[0];
        }
        *last = span[2 * body.len()];
        return;
    }
    for (j, o) in out.iter_mut().enumerate() {
        // SAFETY: element `j < out.len()`, readable by the contract.
        *o = unsafe { *p.offset(j as isize * stride) };
    }
}

/// Reduces `src` over `axes` with a builtin operation.
///
/// The fold runs in [`Element::Acc`]: `f16` and `bf16` elements are widened to `f32`
/// exactly, folded in `f32` and each result rounded once to the element type (to nearest,
/// ties to even), as PyTorch does on the CPU; `Min` and `Max` are exact. NaN behaves as for
/// `f32`: sums and products propagate it, `Min` and `Max` ignore it.
///
/// The order of the fold is fixed by the layout, never by the thread count: along the
/// innermost reduced axis (runs of 32 elements or more), 16 lanes whatever its stride, so the
/// sum of every second element of a row equals, bit for bit, the sum of their contiguous
/// copy; where the kept axis is the innermost in memory, each output takes the reduced
/// indices in row-major order.
///
/// Masked elements read the input's pad (zero unless set with
/// [`Input::pad`](crate::Input::pad)), not the fold's identity: the max of a view padded
/// with zeros is at least zero; pad with `f32::NEG_INFINITY` to ignore the padding.
///
/// ```
/// use symshape_kernels::{reduce, Input, ReduceConfig, ReduceOp};
/// use symshape_view::ConcreteView;
/// let buf: Vec<i32> = (0..6).collect();
/// let v = ConcreteView::contiguous(&[2, 3])?;
/// let r = reduce(Input::new(&buf, &v), &[1], ReduceOp::Sum, ReduceConfig::default())?;
/// assert_eq!((r.shape, r.values), (vec![2], vec![3, 12]));
/// # Ok::<(), symshape_kernels::Error>(())
/// ```
///
/// # Errors
/// [`Error::BadAxis`] for an axis out of range or repeated; the errors of
/// [`materialize`](crate::materialize) for a masked or stacked input.
pub fn reduce<T: Element>(
    src: Input<'_, T>,
    axes: &[usize],
    op: ReduceOp,
    config: ReduceConfig,
) -> Result<Dense<T>> {
    match op {
        ReduceOp::Sum => reduce_impl(src, axes, config, &SumFold),
        ReduceOp::Prod => reduce_impl(src, axes, config, &ProdFold),
        ReduceOp::Min => reduce_impl(src, axes, config, &MinFold),
        ReduceOp::Max => reduce_impl(src, axes, config, &MaxFold),
    }
}

/// Reduces `src` over `axes` with a user fold `f` starting from `identity`.
///
/// `f` runs in the element type itself: over `f16` or `bf16` it rounds at every step (fold
/// `map`ped `f32` values to accumulate wider).
///
/// Masked elements read the input's pad, as in [`reduce`].
///
/// Each output is `f(...f(f(identity, x0), x1)..., xn)` over the reduced elements in row-major
/// order, except that very large reductions into few outputs fold fixed blocks separately and
/// combine them left to right with `f` (exact when `f` is associative).
///
/// # Errors
/// As [`reduce`].
pub fn reduce_with<T: Element>(
    src: Input<'_, T>,
    axes: &[usize],
    config: ReduceConfig,
    identity: T,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Dense<T>> {
    reduce_impl(src, axes, config, &UserFold { identity, f })
}

fn reduce_impl<T: Element, F: Fold<T>>(
    src: Input<'_, T>,
    axes: &[usize],
    config: ReduceConfig,
    fold: &F,
) -> Result<Dense<T>> {
    let shape = shape_of("reduce", src.levels)?;
    let n_dims = shape.len();
    let mut reduced = vec![false; n_dims];
    for &a in axes {
        match reduced.get_mut(a) {
            Some(r) if !*r => *r = true,
            _ => {
                return Err(Error::BadAxis {
                    op: "reduce",
                    axis: a,
                    n_dims,
                })
            }
        }
    }
    let (src, layout) = plain("reduce", "source", src)?;
    let out_shape: Vec<usize> = shape
        .iter()
        .zip(&reduced)
        .filter_map(|(&n, &r)| {
            if r {
                config.keep_dims.then_some(1)
            } else {
                Some(n)
            }
        })
        .collect();
    // Kept and reduced axes in their original order, unit axes dropped, contiguous runs merged.
    let mut kept: Vec<(usize, isize)> = Vec::new();
    let mut red: Vec<(usize, isize)> = Vec::new();
    for ((&n, &s), &r) in shape.iter().zip(&layout.strides).zip(&reduced) {
        if n == 0 {
            let numel = if r { out_shape.iter().product() } else { 0 };
            return Ok(Dense {
                shape: out_shape,
                values: crate::alloc::filled_vec("reduce", numel, fold.finish(fold.identity()))?,
            });
        }
        let list = if r { &mut red } else { &mut kept };
        if n == 1 {
            continue;
        }
        match list.last_mut() {
            Some(last) if last.1 == s * n as isize => *last = (last.0 * n, s),
            _ => list.push((n, s)),
        }
    }
    let n_out: usize = kept.iter().map(|a| a.0).product();
    let n_red: usize = red.iter().map(|a| a.0).product();
    // Accumulators, rounded to `T` once at the end.
    let mut acc = crate::alloc::filled_vec("reduce", n_out, fold.identity())?;
    let parallel = n_out.saturating_mul(n_red) >= PARALLEL_ELEMS;
    let sp = Ptr(src.as_ptr() as *mut T);
    let job = Job {
        fold,
        sp,
        base: layout.offset,
        kept: &kept,
        red: &red,
    };
    // Rows of outputs at a time when the kept axis is the innermost in memory: at unit stride
    // whatever the reduced axes (unless one is unit-stride too), at other strides where the
    // per-output fold would not cut the reduction into blocks (the same order either way).
    let by_columns = match (kept.last(), red.last()) {
        (Some(k), Some(r)) => {
            let (k, r) = (k.1.unsigned_abs(), r.1.unsigned_abs());
            (k == 1 && r != 1) || (k < r && (n_out >= 16 || !parallel))
        }
        (Some(k), None) => k.1.unsigned_abs() == 1,
        (None, _) => false,
    };
    if by_columns {
        columns(job, &mut acc, parallel)?;
    } else {
        per_output(job, &mut acc, parallel)?;
    }
    // Accumulators of type `T` are their own results (`finish` is the identity then): the
    // buffer is kept; others (`f32` for `f16` and `bf16`) are rounded into a new one.
    let values = match (&mut acc as &mut dyn std::any::Any).downcast_mut::<Vec<T>>() {
        Some(same) => std::mem::take(same),
        None => {
            let mut values = crate::alloc::reserve("reduce", n_out)?;
            values.extend(acc.into_iter().map(|a| fold.finish(a)));
            values
        }
    };
    Ok(Dense {
        shape: out_shape,
        values,
    })
}

/// What a reduction loop reads: the fold, the source, its base offset, and the kept and
/// reduced axes as `(size, stride)`.
struct Job<'a, T, F> {
    fold: &'a F,
    sp: Ptr<T>,
    base: isize,
    kept: &'a [(usize, isize)],
    red: &'a [(usize, isize)],
}

/// Offsets of all indices of `axes` (row-major), relative to 0, in a table within the
/// allocation limit.
fn offsets_of(axes: &[(usize, isize)]) -> Result<Vec<isize>> {
    let mut res = vec![0isize];
    for &(n, s) in axes {
        let mut next = crate::alloc::reserve("reduce", res.len().saturating_mul(n))?;
        for &o in &res {
            for i in 0..n as isize {
                next.push(o + i * s);
            }
        }
        res = next;
    }
    Ok(res)
}

/// Kept unit-stride axis: whole rows of outputs accumulate one reduced index at a time.
fn columns<T: Element, F: Fold<T>>(
    job: Job<'_, T, F>,
    out: &mut [F::Acc],
    parallel: bool,
) -> Result<()> {
    let Job {
        fold,
        sp,
        base,
        kept,
        red,
    } = job;
    let Some((&(n_col, col_stride), outer)) = kept.split_last() else {
        return Ok(());
    };
    let outer_offs = offsets_of(outer)?;
    let (red_outer, red_inner) = match red.split_last() {
        Some((&inner, rest)) => (offsets_of(rest)?, Some(inner)),
        None => (vec![0], None),
    };
    // Runs of columns as long as the threads allow, from 1024 to 4096 elements: each run is
    // read as one stream per reduced row, and longer streams are faster (the f32 sum over the
    // first axis of 4096 x 4096 on a Zen 4: runs of 256 or 512 columns 0.9-1.2 times a
    // memcpy, 1024 0.67-0.74, 2048 0.65-0.71).
    let threads = if parallel {
        rayon::current_num_threads()
    } else {
        1
    };
    let seg = n_col.div_ceil(threads.max(1)).clamp(1024, 4096);
    let body = |(k, chunk): (usize, &mut [F::Acc])| {
        let row = k / n_col.div_ceil(seg);
        let col0 = (k % n_col.div_ceil(seg)) * seg;
        let Some(&row_off) = outer_offs.get(row) else {
            return;
        };
        for &ro in &red_outer {
            let (n_in, s_in) = red_inner.unwrap_or((1, 0));
            let mut i0 = 0isize;
            // Unit-stride rows of elements that do not widen are read in place; rows of
            // elements that widen are gathered and widened a block at a time; other rows are
            // read one element at a time, in place.
            let direct = col_stride == 1 && !widens::<T, F>();
            // Four reduced indices per pass over the chunk: each output still folds them one
            // after the other (the same order, so the same rounding), with one load and store
            // of the output per four input rows.
            let n = chunk.len();
            while (direct || widens::<T, F>()) && i0 + 4 <= n_in as isize {
                let start = base + row_off + ro + i0 * s_in + col0 as isize * col_stride;
                let p = |k: isize| sp.get().wrapping_offset(start + k * s_in) as *const T;
                let rows = [p(0), p(1), p(2), p(3)];
                // SAFETY: offsets of in-range indices of a plain layout whose extent was
                // checked against the source; `n` columns from `col0` of four rows.
                unsafe {
                    if direct {
                        let [r0, r1, r2, r3] = rows.map(|r| std::slice::from_raw_parts(r, n));
                        for (j, o) in chunk.iter_mut().enumerate() {
                            let mut a = fold.step(*o, r0[j]);
                            a = fold.step(a, r1[j]);
                            a = fold.step(a, r2[j]);
                            *o = fold.step(a, r3[j]);
                        }
                    } else {
                        fold_rows(fold, chunk, rows, col_stride);
                    }
                }
                i0 += 4;
            }
            for i in i0..n_in as isize {
                let start = base + row_off + ro + i * s_in + col0 as isize * col_stride;
                // SAFETY: offsets of in-range indices of a plain layout whose extent was
                // checked against the source; `chunk.len()` columns from `col0`.
                unsafe {
                    let p = sp.get().offset(start) as *const T;
                    if direct {
                        let s = std::slice::from_raw_parts(p, n);
                        for (o, &x) in chunk.iter_mut().zip(s) {
                            *o = fold.step(*o, x);
                        }
                    } else if widens::<T, F>() {
                        fold_rows(fold, chunk, [p], col_stride);
                    } else if col_stride == -1 {
                        let s = std::slice::from_raw_parts(p.offset(1 - n as isize), n);
                        for (o, &x) in chunk.iter_mut().zip(s.iter().rev()) {
                            *o = fold.step(*o, x);
                        }
                    } else {
                        for (j, o) in chunk.iter_mut().enumerate() {
                            *o = fold.step(*o, *p.offset(j as isize * col_stride));
                        }
                    }
                }
            }
        }
    };
    // Chunks never straddle two output rows, so each is one contiguous run of columns.
    let n_chunks = (out.len() / n_col.max(1)).saturating_mul(n_col.div_ceil(seg));
    let mut chunks: Vec<(usize, &mut [F::Acc])> = crate::alloc::reserve("reduce", n_chunks)?;
    chunks.extend(
        out.chunks_mut(n_col)
            .flat_map(|r| r.chunks_mut(seg))
            .enumerate(),
    );
    if parallel {
        chunks.into_par_iter().for_each(body);
    } else {
        chunks.into_iter().for_each(body);
    }
    Ok(())
}

/// Whether the fold's accumulator is wider than the element (`f16`, `bf16` in `f32`).
#[inline(always)]
fn widens<T: Element, F: Fold<T>>() -> bool {
    std::mem::size_of::<T>() != std::mem::size_of::<F::Acc>()
}

/// Folds `R` rows of `out.len()` elements `stride` apart, from `rows`, into `out`, each
/// output taking them in order, for a fold that widens: blocks of each row are gathered and
/// widened at once ([`gather_wide`]), then combined, with the rounding of `step`.
///
/// # Safety
/// The elements `rows[k] + j * stride` for `j < out.len()` are readable.
#[inline(always)]
unsafe fn fold_rows<T: Element, F: Fold<T>, const R: usize>(
    fold: &F,
    out: &mut [F::Acc],
    rows: [*const T; R],
    stride: isize,
) {
    let mut scratch: [Scratch<T, F::Acc>; R] = std::array::from_fn(|_| Scratch::new());
    for (b, out) in out.chunks_mut(WIDE_BLOCK).enumerate() {
        let lo = (b * WIDE_BLOCK) as isize * stride;
        let mut blocks = [&[][..]; R];
        for ((s, row), block) in scratch.iter_mut().zip(rows).zip(&mut blocks) {
            // SAFETY: elements `b * WIDE_BLOCK..` of the row up to `out.len()` in all,
            // readable by the contract.
            *block = unsafe { gather_wide(fold, (row.offset(lo), stride, out.len()), s) };
        }
        match &blocks[..] {
            // Four rows in one pass: one load and store of each output per four rows.
            [w0, w1, w2, w3] => {
                for ((((o, &a), &b), &c), &d) in out.iter_mut().zip(*w0).zip(*w1).zip(*w2).zip(*w3)
                {
                    *o = fold.combine(fold.combine(fold.combine(fold.combine(*o, a), b), c), d);
                }
            }
            // Row after row over the block: each output still takes the rows in order.
            _ => {
                for w in blocks {
                    for (o, &x) in out.iter_mut().zip(w) {
                        *o = fold.combine(*o, x);
                    }
                }
            }
        }
    }
}

/// The `len` (at most `WIDE_BLOCK`) elements `stride` apart from `p` ([`block`]), widened
/// into the start of `scratch.wide`, which is returned.
///
/// # Safety
/// The elements `p + j * stride` for `j < len` are readable.
#[inline(always)]
unsafe fn gather_wide<'w, T: Element, F: Fold<T>>(
    fold: &F,
    (p, stride, len): (*const T, isize, usize),
    scratch: &'w mut Scratch<T, F::Acc>,
) -> &'w [F::Acc] {
    let Scratch { gathered, wide } = scratch;
    // SAFETY: elements `j < len`, readable by the contract.
    let block = unsafe { block(p, stride, len, gathered) };
    fold.widen(block, wide);
    wide.get(..block.len()).unwrap_or(&[])
}

/// The `len` (at most `WIDE_BLOCK`) elements `stride` apart from `p`: read in place at unit
/// stride, else gathered into `gathered`.
///
/// # Safety
/// The elements `p + j * stride` for `j < len` are readable, and stay so while the block is
/// used.
#[inline(always)]
unsafe fn block<T: Element>(
    p: *const T,
    stride: isize,
    len: usize,
    gathered: &mut [T; WIDE_BLOCK],
) -> &[T] {
    let len = len.min(WIDE_BLOCK);
    if stride == 1 {
        // SAFETY: elements `j < len`, readable by the contract.
        return unsafe { std::slice::from_raw_parts(p, len) };
    }
    let gathered = gathered.get_mut(..len).unwrap_or(&mut []);
    // SAFETY: elements `j < len`, readable by the contract.
    unsafe { gather(p, stride, gathered) };
    gathered
}

/// One fold per output over all reduced indices.
fn per_output<T: Element, F: Fold<T>>(
    job: Job<'_, T, F>,
    out: &mut [F::Acc],
    parallel: bool,
) -> Result<()> {
    let (fold, sp, base, kept, red) = (job.fold, job.sp, job.base, job.kept, job.red);
    let kept_offs = offsets_of(kept)?;
    let (n_in, s_in) = red.last().copied().unwrap_or((1, 0));
    let mid = red.len().saturating_sub(1);
    let mid_offs = offsets_of(red.get(..mid).unwrap_or(&[]))?;
    // Fold of reduced indices whose outer-reduced positions are in `range`.
    let fold_range = |scratch: &mut Scratch<T, F::Acc>,
                      o: isize,
                      range: std::ops::Range<usize>,
                      acc: F::Acc|
     -> F::Acc {
        let mut acc = acc;
        for &m in mid_offs.get(range).unwrap_or(&[]) {
            let p = sp.get().wrapping_offset(base + o + m) as *const T;
            // SAFETY: in-range indices of a plain layout whose extent was checked.
            acc = unsafe { fold_run(fold, acc, (p, s_in, n_in), scratch) };
        }
        acc
    };
    let n_mid = mid_offs.len();
    if parallel && out.len() < 16 && n_mid >= 64 {
        // Few outputs: fixed blocks of the outer reduced positions, combined left to right.
        let block = n_mid.div_ceil(64);
        for (o, &ko) in out.iter_mut().zip(&kept_offs) {
            let parts: Vec<F::Acc> = (0..n_mid.div_ceil(block))
                .into_par_iter()
                .map_init(Scratch::new, |s, b| {
                    let range = b * block..((b + 1) * block).min(n_mid);
                    fold_range(s, ko, range, fold.identity())
                })
                .collect();
            *o = parts.into_iter().fold(*o, |a, p| fold.combine(a, p));
        }
        return Ok(());
    }
    if parallel && out.len() < 16 && n_in >= 2 * INNER_BLOCK {
        // Few outputs and long rows: fixed blocks of the innermost reduced axis.
        let n_blk = n_in.div_ceil(INNER_BLOCK);
        // One partial fold per block, in a table within the allocation limit.
        let mut parts: Vec<F::Acc> = crate::alloc::reserve("reduce", n_mid.saturating_mul(n_blk))?;
        for (o, &ko) in out.iter_mut().zip(&kept_offs) {
            (0..n_mid * n_blk)
                .into_par_iter()
                .map_init(Scratch::new, |s, w| {
                    let (m, blk) = (w / n_blk, w % n_blk);
                    let lo = blk * INNER_BLOCK;
                    let len = INNER_BLOCK.min(n_in - lo);
                    let start =
                        base + ko + mid_offs.get(m).copied().unwrap_or(0) + lo as isize * s_in;
                    let p = sp.get().wrapping_offset(start) as *const T;
                    // SAFETY: `len` in-range indices of the innermost reduced axis of a plain
                    // layout whose extent was checked.
                    unsafe { fold_run(fold, fold.identity(), (p, s_in, len), s) }
                })
                .collect_into_vec(&mut parts);
            *o = parts.iter().fold(*o, |a, &p| fold.combine(a, p));
        }
        return Ok(());
    }
    let body = |s: &mut Scratch<T, F::Acc>, (o, &ko): (&mut F::Acc, &isize)| {
        *o = fold_range(s, ko, 0..n_mid, *o);
    };
    if parallel {
        out.par_iter_mut()
            .zip(&kept_offs)
            .with_min_len(16)
            .for_each_init(Scratch::new, body);
    } else {
        let mut s = Scratch::new();
        out.iter_mut()
            .zip(&kept_offs)
            .for_each(|item| body(&mut s, item));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{reduce, ReduceConfig, ReduceOp};
    use crate::Input;
    use symshape_view::ConcreteView;

    /// The bits of each value.
    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// The bits of the sums over `axis` of `buf` read through `v`.
    fn sum_bits(buf: &[f32], v: &ConcreteView, axis: usize) -> Vec<u32> {
        let got = reduce(
            Input::new(buf, v),
            &[axis],
            ReduceOp::Sum,
            ReduceConfig::default(),
        )
        .expect("reduce");
        bits(&got.values)
    }

    #[test]
    fn float_sums_of_strided_runs_use_the_lanes_of_their_contiguous_copy() {
        // Magnitudes far apart, so that every grouping rounds differently; strides around the
        // gathered and span-read paths, lengths around the lanes and the gathered blocks.
        let lanes_sum = |xs: &[f32]| {
            if xs.len() < 32 {
                return xs.iter().fold(0.0f32, |a, &x| a + x);
            }
            let mut l = [0.0f32; 16];
            for (i, &x) in xs.iter().enumerate() {
                l[i % 16] += x;
            }
            for width in [8, 4, 2, 1] {
                for i in 0..width {
                    l[i] += l[i + width];
                }
            }
            0.0 + l[0]
        };
        for step in [1i64, -1, 2, -2, 3] {
            for n in [5usize, 31, 32, 33, 255, 256, 257, 600] {
                let rows = 3;
                let span = n * step.unsigned_abs() as usize;
                let buf: Vec<f32> = (0..rows * span)
                    .map(|i| ((i * 7919) % 1000) as f32 * 1.37e-3 + (i % 5) as f32 * 1e5)
                    .collect();
                let first = if step < 0 { span as i64 - 1 } else { 0 };
                let v = ConcreteView::as_strided(
                    &[rows as i64, n as i64],
                    &[span as i64, step],
                    first,
                    buf.len() as i64,
                )
                .expect("view");
                let want: Vec<f32> = (0..rows)
                    .map(|r| {
                        let xs: Vec<f32> = (0..n as i64)
                            .map(|j| buf[(r as i64 * span as i64 + first + j * step) as usize])
                            .collect();
                        lanes_sum(&xs)
                    })
                    .collect();
                assert_eq!(
                    sum_bits(&buf, &v, 1),
                    bits(&want),
                    "step {step}, {n} elements"
                );
            }
        }
    }

    #[test]
    fn leading_axis_float_sums_fold_rows_in_order() {
        // Row counts around the four-row passes, columns around the chunk width; floats whose
        // sum depends on the order, compared bit for bit with a fold in row order.
        for (r, c) in [(1, 5), (3, 7), (4, 1030), (7, 2049), (9, 33), (130, 600)] {
            let buf: Vec<f32> = (0..r * c)
                .map(|i| ((i * 7919) % 1000) as f32 * 1.37e-3 + (i % 3) as f32 * 1e4)
                .collect();
            let v = ConcreteView::contiguous(&[r as i64, c as i64]).expect("view");
            let want: Vec<f32> = (0..c)
                .map(|j| (0..r).fold(0.0f32, |a, i| a + buf[i * c + j]))
                .collect();
            assert_eq!(sum_bits(&buf, &v, 0), bits(&want), "{r} x {c}");
        }
    }
}
