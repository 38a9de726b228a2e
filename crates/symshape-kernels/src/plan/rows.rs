//! Masked-row plans, a part of the planner private to it: a two-level stack whose top
//! reads each of its rows from one row of the level below (a causal mask built from pad,
//! reshape and shrink), planned as boxes of rows whose runs of source elements have ends
//! affine in the row indices, not as an offset table.
//!
//! Every row of the top is evaluated once, exactly (`i128`): its run of valid elements and
//! the source offset of its first element. A box is kept only where its affine runs and
//! offsets reproduce every row it covers, so the loops read exactly what a table would.
//! Plans are remembered per thread: a stack copied again is not evaluated again.

use std::cmp::Ordering;

use symshape_view::concrete::{Equivalent, Memo};
use symshape_view::ConcreteView;

use super::{pick_kernel, simplify, Kernel, Loop, Nest, PlanBox, RowRun, TableReason};
use crate::error::Result;
use crate::operand::Machine;

/// Most boxes a masked-row plan may have before the planner reads through a table.
pub(crate) const MAX_BOXES: usize = 64;

/// Fewest elements per row for which the planner tries masked rows (shorter rows are cheaper
/// through a table).
pub(crate) const MIN_ROW: usize = 8;

/// Rows evaluated per row of the top, at most, before the planner gives up (a box cut short
/// is evaluated again from its cut).
const EVALS_PER_ROW: usize = 8;

/// One row of the top read through the level below: `None` when no element of it is valid,
/// else the run `lo..hi` of valid elements and the source offset of element 0 (an affine
/// extrapolation when 0 is outside the run).
type Row = Option<[i128; 3]>;

/// A region of the outer axes: a half-open interval per axis.
type Region = Vec<(usize, usize)>;

/// Floor division (`b > 0`), in `i64` when both fit (an `i128` division is several times
/// slower, and the planner divides a few times per row).
fn div_floor(a: i128, b: i128) -> i128 {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(x), Ok(y)) => x.div_euclid(y) as i128,
        _ => a.div_euclid(b),
    }
}

/// Ceiling division (`b > 0`).
fn div_ceil(a: i128, b: i128) -> i128 {
    -div_floor(-a, b)
}

/// Rows of `upper` read through `lower`.
struct Rows<'a> {
    lower: &'a Machine,
    upper: &'a Machine,
    lower_numel: i128,
}

impl Rows<'_> {
    /// The row of outer index `o`; `None` when it reads more than one row of the level below
    /// (no masked-row plan then).
    fn row(&self, o: &[usize]) -> Option<Row> {
        let (u, l) = (self.upper, self.lower);
        let (&(ua, ub), outer_valid) = u.valid.split_last()?;
        if o.iter()
            .zip(outer_valid)
            .any(|(&i, &(b, e))| i < b || i >= e)
            || ua >= ub
        {
            return Some(None);
        }
        let &s = u.strides.last()?;
        let s = s as i128;
        let l0 = o
            .iter()
            .zip(&u.strides)
            .fold(u.offset as i128, |acc, (&i, &st)| {
                acc + i as i128 * st as i128
            });
        let (first, last) = (l0 + ua as i128 * s, l0 + (ub as i128 - 1) * s);
        if first.min(last) < 0 || first.max(last) >= self.lower_numel {
            return None;
        }
        let (&n, outer_shape) = l.shape.split_last()?;
        // Both ends are indices of the level below, so they fit `i64` (as does its shape):
        // the divisions are done there.
        let (first, last) = (i64::try_from(first).ok()?, i64::try_from(last).ok()?);
        let n = i64::try_from(n).ok()?;
        let q = first / n;
        if last / n != q {
            return None;
        }
        let c0 = l0 - q as i128 * n as i128;
        let mut rest = q;
        let mut row_off = l.offset as i128;
        for k in (0..outer_shape.len()).rev() {
            let nk = i64::try_from(outer_shape[k]).ok()?;
            let d = rest % nk;
            rest /= nk;
            let (b, e) = l.valid[k];
            if (d as usize) < b || d as usize >= e {
                return Some(None);
            }
            row_off += d as i128 * l.strides[k] as i128;
        }
        let (&(ma, mb), &ls) = (l.valid.last()?, l.strides.last()?);
        let (ma, mb) = (ma as i128, mb as i128);
        // The elements `j` of the row with `ma <= c0 + j s < mb`, within `ua..ub`.
        let (mut lo, mut hi) = (ua as i128, ub as i128);
        match s.cmp(&0) {
            Ordering::Greater => {
                lo = lo.max(div_ceil(ma - c0, s));
                hi = hi.min(div_floor(mb - 1 - c0, s) + 1);
            }
            Ordering::Less => {
                lo = lo.max(div_ceil(c0 - mb + 1, -s));
                hi = hi.min(div_floor(c0 - ma, -s) + 1);
            }
            Ordering::Equal if c0 < ma || c0 >= mb => return Some(None),
            Ordering::Equal => {}
        }
        if lo >= hi {
            return Some(None);
        }
        Some(Some([lo, hi, row_off + ls as i128 * c0]))
    }
}

/// An affine guess of the rows of a region: `[lo, hi, src]` at its first row and per axis.
struct Fit {
    base: [i128; 3],
    steps: Vec<[i128; 3]>,
}

impl Fit {
    /// The row this fit predicts at `o` (of region `region`): the run as the loops clamp it,
    /// and the offset of element 0; `None` when a value leaves `isize`.
    fn predict(&self, region: &[(usize, usize)], o: &[usize], n: i128) -> Option<[i128; 3]> {
        let mut v = self.base;
        for ((st, &(b, _)), &i) in self.steps.iter().zip(region).zip(o) {
            let d = (i - b) as i128;
            for (x, s) in v.iter_mut().zip(st) {
                *x += s * d;
            }
        }
        if v.iter().any(|&x| isize::try_from(x).is_err()) {
            return None;
        }
        let lo = v[0].clamp(0, n);
        let hi = v[1].clamp(lo, n);
        Some([lo, hi, v[2]])
    }
}

/// Whether `pred` (clamped) gives the row `truth`.
fn matches(pred: [i128; 3], truth: Row) -> bool {
    match truth {
        None => pred[0] == pred[1],
        Some(t) => pred == t,
    }
}

/// What the rows of a verified box have in common.
#[derive(Clone, Copy)]
struct Flags {
    all_empty: bool,
    all_full: bool,
}

/// The boxes of a masked-row plan and the lowest and highest source offset they read.
pub(crate) type RowPlan = (Vec<PlanBox>, Option<(i64, i64)>);

/// A masked-row plan, or why there is none.
type RowResult = std::result::Result<RowPlan, TableReason>;

/// What a masked-row plan depends on: the destination, the two levels, `unit_only`.
#[derive(PartialEq, Eq, Hash)]
struct RowKey(ConcreteView, ConcreteView, ConcreteView, bool);

/// A [`RowKey`] borrowed: looks a plan up without copying the three views (it hashes as the
/// key does).
#[derive(Hash)]
struct RowKeyRef<'a>(&'a ConcreteView, &'a ConcreteView, &'a ConcreteView, bool);

impl Equivalent<RowKey> for RowKeyRef<'_> {
    fn equivalent(&self, key: &RowKey) -> bool {
        *self.0 == key.0 && *self.1 == key.1 && *self.2 == key.2 && self.3 == key.3
    }
}

/// Masked-row plans kept per thread before the memo is cleared (a plan holds at most
/// [`MAX_BOXES`] boxes).
const MEMO_CAPACITY: usize = 256;

thread_local! {
    // A masked-row plan evaluates every row of the top; it is a pure function of its
    // inputs, so a stack copied again (a framework's mask at every step) is planned once.
    static ROW_PLANS: Memo<RowKey, RowResult> = Memo::new(MEMO_CAPACITY);
}

/// A masked-row plan of `upper` over `lower` into `dst` (of the top's shape), or why there is
/// none: the destination is masked, a row of the top reads more than one row of the level
/// below, rows are shorter than [`MIN_ROW`], or more than [`MAX_BOXES`] boxes would be
/// needed. With `unit_only`, rows that read the source at a stride other than -1, 0 or 1 are
/// refused too (as [`TableReason::Irregular`]: a split into merged boxes may tile them).
/// Remembered per thread: the same inputs are planned once.
pub(crate) fn masked_rows(
    op: &'static str,
    dst: &ConcreteView,
    lower: &ConcreteView,
    upper: &ConcreteView,
    unit_only: bool,
) -> Result<RowResult> {
    ROW_PLANS.with(|m| {
        m.remembered(
            &RowKeyRef(dst, lower, upper, unit_only),
            || RowKey(dst.clone(), lower.clone(), upper.clone(), unit_only),
            || plan_rows(op, &Machine::of(op, dst)?, lower, upper, unit_only),
        )
    })
}

/// [`masked_rows`], not remembered.
fn plan_rows(
    op: &'static str,
    dst: &Machine,
    lower: &ConcreteView,
    upper: &ConcreteView,
    unit_only: bool,
) -> Result<RowResult> {
    use TableReason::{Irregular, MaskedDestination, ShortRows};
    if dst.masked {
        return Ok(Err(MaskedDestination));
    }
    let l = Machine::of(op, lower)?;
    let u = Machine::of(op, upper)?;
    let (Some(&n), Some(&ls), Some(&s)) = (u.shape.last(), l.strides.last(), u.strides.last())
    else {
        return Ok(Err(ShortRows));
    };
    if n < MIN_ROW || u.numel() == 0 || l.numel() == 0 || dst.shape != u.shape {
        return Ok(Err(ShortRows));
    }
    let Some(ss) = ls.checked_mul(s) else {
        return Ok(Err(Irregular));
    };
    if unit_only && ss.unsigned_abs() > 1 {
        return Ok(Err(Irregular));
    }
    Ok(fit_rows(dst, &l, &u, (n, ss)))
}

/// The boxes of the rows of `u` over `l` (rows of `n` elements read at stride `ss`), as
/// [`masked_rows`].
fn fit_rows(
    dst: &Machine,
    l: &Machine,
    u: &Machine,
    (n, ss): (usize, isize),
) -> std::result::Result<RowPlan, TableReason> {
    use TableReason::{Irregular, RowsSpanRows};
    let rows = Rows {
        lower: l,
        upper: u,
        lower_numel: l.numel() as i128,
    };
    let outer_shape = &u.shape[..u.shape.len() - 1];
    let n_rows = u.numel() / n;
    let mut evals = n_rows.saturating_mul(EVALS_PER_ROW);
    let mut row = |o: &[usize]| -> std::result::Result<Row, TableReason> {
        evals = evals.checked_sub(1).ok_or(Irregular)?;
        rows.row(o).ok_or(RowsSpanRows)
    };
    let ni = n as i128;
    let mut read: Option<(i128, i128)> = None;
    let mut boxes: Vec<PlanBox> = Vec::new();
    let mut todo: Vec<Region> = vec![outer_shape.iter().map(|&e| (0, e)).collect()];
    while let Some(region) = todo.pop() {
        if boxes.len() + todo.len() >= MAX_BOXES {
            return Err(Irregular);
        }
        let start: Vec<usize> = region.iter().map(|r| r.0).collect();
        let t0 = row(&start)?;
        // The fit: the first row, and the step to its neighbour along each axis.
        let mut fit = Fit {
            base: t0.unwrap_or([0; 3]),
            steps: vec![[0; 3]; region.len()],
        };
        for k in 0..region.len() {
            if region[k].1 - region[k].0 < 2 {
                continue;
            }
            let mut o = start.clone();
            o[k] += 1;
            let tk = row(&o)?;
            if let (Some(a), Some(b)) = (t0, tk) {
                fit.steps[k] = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            }
        }
        // The outermost axis with more than one index: a failure cuts the region along it.
        let live = region.iter().position(|r| r.1 - r.0 > 1);
        let mut flags = Flags {
            all_empty: true,
            all_full: true,
        };
        let mut slice_flags = flags;
        let mut failed: Option<Vec<usize>> = None;
        let mut o = start.clone();
        'rows: loop {
            let truth = row(&o)?;
            if let Some(t) = truth {
                let (a, b) = if ss >= 0 {
                    (t[2] + t[0] * ss as i128, t[2] + (t[1] - 1) * ss as i128)
                } else {
                    (t[2] + (t[1] - 1) * ss as i128, t[2] + t[0] * ss as i128)
                };
                read = Some(read.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
            }
            match fit.predict(&region, &o, ni) {
                Some(p) if matches(p, truth) => {
                    flags.all_empty &= truth.is_none();
                    flags.all_full &= truth.is_some_and(|t| t[0] == 0 && t[1] == ni);
                }
                _ => {
                    failed = Some(o.clone());
                    break 'rows;
                }
            }
            // Row-major odometer over the region.
            let mut k = o.len();
            loop {
                if k == 0 {
                    break 'rows;
                }
                k -= 1;
                o[k] += 1;
                if o[k] < region[k].1 {
                    break;
                }
                o[k] = region[k].0;
            }
            if Some(k) == live {
                slice_flags = flags;
            }
        }
        let Some(at) = failed else {
            let Some(b) = row_box(dst, &region, &fit, flags, (n, ss)) else {
                return Err(Irregular);
            };
            boxes.push(b);
            continue;
        };
        // The failure is past the first row, so `live` exists.
        let Some(k) = live else {
            return Err(Irregular);
        };
        let mut rest = region.clone();
        if at[k] > region[k].0 {
            let mut done = region.clone();
            done[k].1 = at[k];
            let Some(b) = row_box(dst, &done, &fit, slice_flags, (n, ss)) else {
                return Err(Irregular);
            };
            boxes.push(b);
            rest[k].0 = at[k];
            todo.push(rest);
        } else {
            let mut first = region.clone();
            first[k].1 = region[k].0 + 1;
            rest[k].0 = region[k].0 + 1;
            todo.push(rest);
            todo.push(first);
        }
    }
    let read = match read {
        Some((a, b)) => match (i64::try_from(a), i64::try_from(b)) {
            (Ok(a), Ok(b)) => Some((a, b)),
            _ => return Err(Irregular),
        },
        None => None,
    };
    Ok((boxes, read))
}

/// The loop a row box's nest gets where [`simplify`] returns none.
const ONE: Loop<2> = Loop {
    extent: 1,
    steps: [0, 0],
};

/// The box of the rows of `region` (outer axes) as `fit` gives them, each row `n` elements
/// read at source stride `ss`: the pad when no row reads the source, a strided box when
/// every row reads all of it, else masked rows. `None` when a value of the fit does not fit
/// `isize`.
fn row_box(
    dst: &Machine,
    region: &[(usize, usize)],
    fit: &Fit,
    flags: Flags,
    (n, ss): (usize, isize),
) -> Option<PlanBox> {
    let mut full: Vec<(usize, usize)> = region.to_vec();
    full.push((0, n));
    let as_isize = |x: i128| isize::try_from(x).ok();
    let dst_base = dst
        .strides
        .iter()
        .zip(&full)
        .fold(dst.offset, |acc, (&s, &(b, _))| {
            acc.wrapping_add(s.wrapping_mul(b as isize))
        });
    let dst_last = dst.strides.last().copied().unwrap_or(1);
    let mut base = [dst_base, as_isize(fit.base[2])?];
    let mut axes: Vec<Loop<2>> = Vec::with_capacity(full.len());
    let mut steps = Vec::new();
    for ((&(b, e), &ds), st) in region.iter().zip(&dst.strides).zip(&fit.steps) {
        if e - b > 1 {
            axes.push(Loop {
                extent: e - b,
                steps: [ds, as_isize(st[2])?],
            });
            steps.push([as_isize(st[0])?, as_isize(st[1])?]);
        }
    }
    axes.push(Loop {
        extent: n,
        steps: [dst_last, ss],
    });
    let nest = if flags.all_empty {
        let axes: Vec<Loop<2>> = axes
            .iter()
            .map(|a| Loop {
                steps: [a.steps[0], 0],
                ..*a
            })
            .collect();
        base[1] = 0;
        let loops = simplify(axes, &mut base).unwrap_or_else(|| vec![ONE]);
        Nest {
            loops,
            base,
            kernel: Kernel::Pad,
            run: None,
        }
    } else if flags.all_full {
        let mut loops = simplify(axes, &mut base).unwrap_or_else(|| vec![ONE]);
        let kernel = pick_kernel(&mut loops, false);
        Nest {
            loops,
            base,
            kernel,
            run: None,
        }
    } else {
        Nest {
            loops: axes,
            base,
            kernel: Kernel::MaskedRows,
            run: Some(RowRun {
                base: [as_isize(fit.base[0])?, as_isize(fit.base[1])?],
                steps,
            }),
        }
    };
    Some(PlanBox { region: full, nest })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A causal mask of 8 new tokens after 2 cached ones, as its two levels.
    fn causal_mask() -> (ConcreteView, ConcreteView, ConcreteView) {
        let lower = ConcreteView::create(&[8, 18], Some(&[0, 1]), 0, Some(&[(0, 8), (0, 10)]));
        let upper = ConcreteView::create(&[8, 10], Some(&[-19, 1]), 133, None);
        let dst = ConcreteView::contiguous(&[8, 10]);
        (dst.unwrap(), lower.unwrap(), upper.unwrap())
    }

    #[test]
    fn masked_row_plans_are_remembered() {
        let (dst, lower, upper) = causal_mask();
        let first = masked_rows("copy", &dst, &lower, &upper, true).unwrap();
        let (boxes, read) = first.clone().unwrap();
        assert_eq!(boxes.len(), 1);
        assert_eq!(boxes[0].nest.kernel, Kernel::MaskedRows);
        assert_eq!(read, Some((0, 9)));
        assert!(ROW_PLANS.with(|m| m.contains(&RowKeyRef(&dst, &lower, &upper, true))));
        // What the memo returns is what planning again from scratch gives.
        let fresh = plan_rows(
            "copy",
            &Machine::of("copy", &dst).unwrap(),
            &lower,
            &upper,
            true,
        );
        assert_eq!(fresh.unwrap(), first);
        assert_eq!(
            masked_rows("copy", &dst, &lower, &upper, true).unwrap(),
            first
        );
    }
}
