//! Reductions over chosen axes, deterministic whatever the number of threads.
//!
//! Every output element is folded by one task, in an order fixed by the shapes alone: builtin
//! operations over a unit-stride axis keep 16 running lanes (element `i` goes to lane `i % 16`)
//! combined pairwise at the end; other folds go in row-major order of the reduced axes. When
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
    /// Each of `src` as an accumulator into `dst` (as far as the shorter goes), for folds
    /// whose `step` is `combine` with the element widened.
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

/// Folds a contiguous run into `acc`.
#[inline(always)]
fn fold_slice<T: Element, F: Fold<T>>(fold: &F, acc: F::Acc, s: &[T]) -> F::Acc {
    if !F::LANES || s.len() < 2 * LANES {
        return s.iter().fold(acc, |a, &x| fold.step(a, x));
    }
    let mut lanes = [fold.identity(); LANES];
    let mut chunks = s.chunks_exact(LANES);
    if widens::<T, F>() {
        // Elements that widen (`f16`, `bf16`): blocks converted at once into `wide`, then the
        // same lanes fed the same values in the same order.
        let mut wide = [fold.identity(); WIDE_BLOCK];
        let (whole, _) = s.split_at(s.len() / LANES * LANES);
        for block in whole.chunks(WIDE_BLOCK) {
            fold.widen(block, &mut wide);
            for c in wide.get(..block.len()).unwrap_or(&[]).chunks_exact(LANES) {
                for (l, &x) in lanes.iter_mut().zip(c) {
                    *l = fold.combine(*l, x);
                }
            }
        }
    } else {
        for c in &mut chunks {
            for (l, &x) in lanes.iter_mut().zip(c) {
                *l = fold.step(*l, x);
            }
        }
    }
    for (l, &x) in lanes.iter_mut().zip(chunks.remainder()) {
        *l = fold.step(*l, x);
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

/// Reduces `src` over `axes` with a builtin operation.
///
/// The fold runs in [`Element::Acc`]: `f16` and `bf16` elements are widened to `f32`
/// exactly, folded in `f32` and each result rounded once to the element type (to nearest,
/// ties to even), as PyTorch does on the CPU; `Min` and `Max` are exact. NaN behaves as for
/// `f32`: sums and products propagate it, `Min` and `Max` ignore it.
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
            if col_stride == 1 {
                // Four reduced indices per pass over the chunk: each output still folds them
                // one after the other (the same order, so the same rounding), with one load
                // and store of the output per four input rows.
                let n = chunk.len();
                while i0 + 4 <= n_in as isize {
                    let start = base + row_off + ro + i0 * s_in + col0 as isize;
                    // SAFETY: offsets of in-range indices of a plain layout whose extent was
                    // checked against the source; `n` columns from `col0` of four rows.
                    let rows = unsafe {
                        let p = |k: isize| {
                            std::slice::from_raw_parts(
                                sp.get().offset(start + k * s_in) as *const T,
                                n,
                            )
                        };
                        [p(0), p(1), p(2), p(3)]
                    };
                    if widens::<T, F>() {
                        fold_wide_rows(fold, chunk, rows);
                    } else {
                        for (j, o) in chunk.iter_mut().enumerate() {
                            let mut a = fold.step(*o, rows[0][j]);
                            a = fold.step(a, rows[1][j]);
                            a = fold.step(a, rows[2][j]);
                            *o = fold.step(a, rows[3][j]);
                        }
                    }
                    i0 += 4;
                }
            }
            for i in i0..n_in as isize {
                let start = base + row_off + ro + i * s_in + col0 as isize * col_stride;
                // SAFETY: offsets of in-range indices of a plain layout whose extent was
                // checked against the source; `chunk.len()` columns from `col0`.
                unsafe {
                    if col_stride == 1 {
                        let s = std::slice::from_raw_parts(
                            sp.get().offset(start) as *const T,
                            chunk.len(),
                        );
                        if widens::<T, F>() {
                            fold_wide_rows(fold, chunk, [s]);
                        } else {
                            for (o, &x) in chunk.iter_mut().zip(s) {
                                *o = fold.step(*o, x);
                            }
                        }
                    } else if col_stride == -1 && !widens::<T, F>() {
                        let s = std::slice::from_raw_parts(
                            sp.get().offset(start - chunk.len() as isize + 1) as *const T,
                            chunk.len(),
                        );
                        for (o, &x) in chunk.iter_mut().zip(s.iter().rev()) {
                            *o = fold.step(*o, x);
                        }
                    } else {
                        fold_strided_row(fold, chunk, sp.get().offset(start), col_stride);
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

/// Folds `R` rows of elements (each at least as long as `out`) into `out`, each output taking
/// them in order, for a fold that widens: blocks of each row are widened at once (one
/// vectorized conversion for `f16`), then combined, with the rounding of `step`.
#[inline(always)]
fn fold_wide_rows<T: Element, F: Fold<T>, const R: usize>(
    fold: &F,
    out: &mut [F::Acc],
    rows: [&[T]; R],
) {
    let mut wide = [[fold.identity(); WIDE_BLOCK]; R];
    for (b, out) in out.chunks_mut(WIDE_BLOCK).enumerate() {
        let lo = b * WIDE_BLOCK;
        for (w, row) in wide.iter_mut().zip(rows) {
            fold.widen(row.get(lo..).unwrap_or(&[]), w);
        }
        match &wide[..] {
            // Four rows in one pass: one load and store of each output per four rows.
            [w0, w1, w2, w3] => {
                for ((((o, &a), &b), &c), &d) in out.iter_mut().zip(w0).zip(w1).zip(w2).zip(w3) {
                    *o = fold.combine(fold.combine(fold.combine(fold.combine(*o, a), b), c), d);
                }
            }
            // Row after row over the block: each output still takes the rows in order.
            _ => {
                for w in &wide {
                    for (o, &x) in out.iter_mut().zip(w) {
                        *o = fold.combine(*o, x);
                    }
                }
            }
        }
    }
}

/// Folds the `out.len()` elements `stride` apart from `p` into `out`, one each. A fold that
/// widens gathers blocks of them and widens each block at once (whole registers for `f16`
/// and `bf16`), with the rounding of `step`.
///
/// # Safety
/// The elements `p + j * stride` for `j < out.len()` are readable.
#[inline(always)]
unsafe fn fold_strided_row<T: Element, F: Fold<T>>(
    fold: &F,
    out: &mut [F::Acc],
    p: *const T,
    stride: isize,
) {
    if widens::<T, F>() {
        let mut wide = [fold.identity(); WIDE_BLOCK];
        for (b, out) in out.chunks_mut(WIDE_BLOCK).enumerate() {
            let lo = (b * WIDE_BLOCK) as isize;
            // SAFETY: elements `lo..lo + out.len()` of the row, readable by the contract.
            let block =
                unsafe { gather_wide(fold, p.offset(lo * stride), stride, out.len(), &mut wide) };
            for (o, &x) in out.iter_mut().zip(block) {
                *o = fold.combine(*o, x);
            }
        }
    } else {
        for (j, o) in out.iter_mut().enumerate() {
            // SAFETY: element `j < out.len()`, readable by the contract.
            *o = fold.step(*o, unsafe { *p.offset(j as isize * stride) });
        }
    }
}

/// Folds the `n` elements `stride` apart from `p` into `acc`, in order; a fold that widens
/// widens them by blocks, as [`fold_strided_row`].
///
/// # Safety
/// The elements `p + i * stride` for `i < n` are readable.
#[inline(always)]
unsafe fn fold_strided<T: Element, F: Fold<T>>(
    fold: &F,
    acc: F::Acc,
    p: *const T,
    stride: isize,
    n: usize,
) -> F::Acc {
    let mut acc = acc;
    if widens::<T, F>() {
        let mut wide = [fold.identity(); WIDE_BLOCK];
        let mut i = 0;
        while i < n {
            let len = WIDE_BLOCK.min(n - i);
            // SAFETY: elements `i..i + len`, with `i + len <= n`, readable by the contract.
            let block =
                unsafe { gather_wide(fold, p.offset(i as isize * stride), stride, len, &mut wide) };
            acc = block.iter().fold(acc, |a, &x| fold.combine(a, x));
            i += len;
        }
    } else {
        for i in 0..n as isize {
            // SAFETY: element `i < n`, readable by the contract.
            acc = fold.step(acc, unsafe { *p.offset(i * stride) });
        }
    }
    acc
}

/// The `len` (at most `WIDE_BLOCK`) elements `stride` apart from `p`, gathered and widened
/// into the start of `wide`, which is returned.
///
/// # Safety
/// The elements `p + j * stride` for `j < len` are readable.
#[inline(always)]
unsafe fn gather_wide<'w, T: Element, F: Fold<T>>(
    fold: &F,
    p: *const T,
    stride: isize,
    len: usize,
    wide: &'w mut [F::Acc; WIDE_BLOCK],
) -> &'w [F::Acc] {
    let mut gathered = [T::ZERO; WIDE_BLOCK];
    let gathered = gathered.get_mut(..len).unwrap_or(&mut []);
    for (j, g) in gathered.iter_mut().enumerate() {
        // SAFETY: element `j < len`, readable by the contract.
        *g = unsafe { *p.offset(j as isize * stride) };
    }
    fold.widen(gathered, wide);
    wide.get(..gathered.len()).unwrap_or(&[])
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
    let fold_range = |o: isize, range: std::ops::Range<usize>, acc: F::Acc| -> F::Acc {
        let mut acc = acc;
        for &m in mid_offs.get(range).unwrap_or(&[]) {
            let start = base + o + m;
            // SAFETY: in-range indices of a plain layout whose extent was checked.
            unsafe {
                acc = if s_in == 1 {
                    fold_slice(
                        fold,
                        acc,
                        std::slice::from_raw_parts(sp.get().offset(start) as *const T, n_in),
                    )
                } else {
                    fold_strided(fold, acc, sp.get().offset(start), s_in, n_in)
                };
            }
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
                .map(|b| fold_range(ko, b * block..((b + 1) * block).min(n_mid), fold.identity()))
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
                .map(|w| {
                    let (m, blk) = (w / n_blk, w % n_blk);
                    let lo = blk * INNER_BLOCK;
                    let len = INNER_BLOCK.min(n_in - lo);
                    let start =
                        base + ko + mid_offs.get(m).copied().unwrap_or(0) + lo as isize * s_in;
                    let mut acc = fold.identity();
                    // SAFETY: `len` in-range indices of the innermost reduced axis of a plain
                    // layout whose extent was checked.
                    unsafe {
                        if s_in == 1 {
                            acc = fold_slice(
                                fold,
                                acc,
                                std::slice::from_raw_parts(sp.get().offset(start) as *const T, len),
                            );
                        } else {
                            acc = fold_strided(fold, acc, sp.get().offset(start), s_in, len);
                        }
                    }
                    acc
                })
                .collect_into_vec(&mut parts);
            *o = parts.iter().fold(*o, |a, &p| fold.combine(a, p));
        }
        return Ok(());
    }
    let body = |(o, &ko): (&mut F::Acc, &isize)| *o = fold_range(ko, 0..n_mid, *o);
    if parallel {
        out.par_iter_mut()
            .zip(&kept_offs)
            .with_min_len(16)
            .for_each(body);
    } else {
        out.iter_mut().zip(&kept_offs).for_each(body);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{reduce, ReduceConfig, ReduceOp};
    use crate::Input;
    use symshape_view::ConcreteView;

    #[test]
    fn leading_axis_float_sums_fold_rows_in_order() {
        // Row counts around the four-row passes, columns around the chunk width; floats whose
        // sum depends on the order, compared bit for bit with a fold in row order.
        for (r, c) in [(1, 5), (3, 7), (4, 1030), (7, 2049), (9, 33), (130, 600)] {
            let buf: Vec<f32> = (0..r * c)
                .map(|i| ((i * 7919) % 1000) as f32 * 1.37e-3 + (i % 3) as f32 * 1e4)
                .collect();
            let v = ConcreteView::contiguous(&[r as i64, c as i64]).expect("view");
            let got = reduce(
                Input::new(&buf, &v),
                &[0],
                ReduceOp::Sum,
                ReduceConfig::default(),
            )
            .expect("reduce");
            let want: Vec<f32> = (0..c)
                .map(|j| (0..r).fold(0.0f32, |a, i| a + buf[i * c + j]))
                .collect();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got.values), bits(&want), "{r} x {c}");
        }
    }
}
