//! Composition of two stacked views into one, when the composition is one view.
//!
//! The upper view's offsets index the lower view's elements in row-major order.
//! The problem is first reduced: the upper view is restricted to its valid box,
//! axes that are constant (one valid index or stride 0) are set aside, and
//! negative strides are flipped, leaving an affine map `L(j) = base + sum(m[k] * j[k])`
//! with every `m[k] > 0` and `j[k]` in `[0, n[k])`. Three deciders follow:
//!
//! 1. When the lower view flattens to one axis, the composition is affine in `L`
//!    and valid on a slab `lo <= L < hi`; it is one view iff that slab is a box.
//! 2. When every `m[k]` is a place value of a common refinement of the lower
//!    view's radix and no digit carries, each lower axis sees an affine function of
//!    its own upper axes; the composition is one view iff each per-axis slab is a box.
//!    This is tried on the lower view and on its coarsest reshape, then again
//!    after splitting upper axes that span whole digits.
//!    Then splits of the lower view at place values across which nothing
//!    carries, deciding each run of axes between them once (only ever says yes).
//! 3. Otherwise, when the reduced index space has at most [`EXACT_LIMIT`]
//!    points, the composition is evaluated point by point (see [`super::decide`])
//!    and tested for a box-shaped valid set with affine offsets.
//!
//! Beyond that limit a composition the deciders cannot settle is left as two
//! views: the stack stays exact, only unmerged. No procedure can be both
//! complete and efficient here in general: whether a composition is even empty
//! is a bounded subset-sum question (see docs/semantics.md, "Completeness scope").

use super::decide::{decide, volume_within, PairWalk, SlabWalk, Solved, TableWalk};
use super::memo::{remembered_pair, Memo, Pair, MEMO_CAPACITY};
use super::ConcreteView;
use crate::check::Exact;
use crate::error::{invalid, Result};
use crate::fields::fit_within;

/// Reduced index spaces up to this many points are decided by evaluation.
pub(crate) const EXACT_LIMIT: i128 = 1 << 20;

/// Runs of three or more views are decided by evaluation up to this many points.
pub(crate) const RUN_LIMIT: i128 = 1 << 16;

/// One upper axis that survives the reduction.
#[derive(Clone, Copy, Debug)]
struct Red {
    axis: usize,
    n: i128,
    m: i128,
    flipped: bool,
}

/// Outcome of testing a slab `{ j : lo <= c + sum(m * j) < hi }` for being a box.
pub(crate) enum Slab {
    Box(Vec<(i128, i128)>),
    Empty,
    NotBox,
    Unknown,
}

/// Composes `upper` on top of `lower` into one view, or `None` when the
/// composition is not one view (also when its fields or the offsets of its masked
/// indices would leave `i64`).
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) when a valid element of `upper` maps
/// outside the elements of `lower`.
pub fn merge(lower: &ConcreteView, upper: &ConcreteView) -> Result<Option<ConcreteView>> {
    let rank = upper.ndim();
    if upper.numel() == 0 {
        return ConcreteView::build("merge", upper.shape().to_vec(), vec![0; rank], 0, None)
            .map(Some);
    }
    if upper.is_empty() {
        return ConcreteView::all_masked("merge", upper.shape()).map(Some);
    }
    let bounds = upper.valid_bounds();
    let base = check_stacked(lower, upper)?;
    let mut red = Vec::new();
    for (axis, (&(b, e), &t)) in bounds.iter().zip(upper.strides()).enumerate() {
        let (b, e, t) = (i128::from(b), i128::from(e), i128::from(t));
        if e - b >= 2 && t != 0 {
            red.push(Red {
                axis,
                n: e - b,
                m: t.abs(),
                flipped: t < 0,
            });
        }
    }
    if lower.is_empty() {
        if rank == 0 {
            return Ok(None);
        }
        return ConcreteView::all_masked("merge", upper.shape()).map(Some);
    }
    let solved = solve(lower, &red, base)?;
    let Some(solved) = solved else {
        return Ok(None);
    };
    let (strides, ranges, origin) = match solved {
        Solved::Empty if rank == 0 => return Ok(None),
        Solved::Empty => return ConcreteView::all_masked("merge", upper.shape()).map(Some),
        Solved::View {
            strides,
            ranges,
            origin,
        } => (strides, ranges, origin),
    };
    let mut res_strides = vec![0i128; rank];
    let mut res_mask: Vec<(i128, i128)> = bounds
        .iter()
        .map(|&(b, e)| (i128::from(b), i128::from(e)))
        .collect();
    let mut offset = origin;
    for (k, r) in red.iter().enumerate() {
        let (b, e) = res_mask[r.axis];
        let (lo, hi) = ranges[k];
        let at = if r.flipped { e - 1 } else { b };
        let stride = if r.flipped { -strides[k] } else { strides[k] };
        res_strides[r.axis] = stride;
        res_mask[r.axis] = if r.flipped {
            (e - hi, e - lo)
        } else {
            (b + lo, b + hi)
        };
        offset -= at * stride;
    }
    // A composition whose fields or extrapolated offsets leave i64 is not one view:
    // the levels stay as they are (their valid elements fit, as `check_stacked` holds).
    let Some((strides, mask, offset)) = fields_in_i64(&res_strides, &res_mask, offset) else {
        return Ok(None);
    };
    match ConcreteView::build("merge", upper.shape().to_vec(), strides, offset, Some(mask)) {
        Err(crate::Error::Overflow { .. }) => Ok(None),
        res => res.map(Some),
    }
}

/// Checks that every valid element of `upper` lies within the elements of
/// `lower` (a stack's invariant), without deciding whether they merge; the first lower
/// element `upper` reaches (0 when it has no valid element).
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) naming both views when one does not.
pub(crate) fn check_stacked(lower: &ConcreteView, upper: &ConcreteView) -> Result<i128> {
    let n1 = lower.numel();
    let outside = || {
        let (base, lmax) = upper.extent().unwrap_or_default();
        invalid(
            "merge",
            format!(
                "upper {} reaches elements {base}..={lmax} outside the {n1} elements of lower {}",
                upper.ctx(),
                lower.ctx()
            ),
        )
    };
    let at = (upper.offset(), upper.strides());
    let below = || lower.ctx();
    fit_within(&mut Exact, at, upper.bounds(), n1, &below, outside).map(i128::from)
}

/// Decides the reduced composition; `Ok(None)` when it is not one view.
fn solve(lower: &ConcreteView, red: &[Red], base: i128) -> Result<Option<Solved>> {
    solve_with(lower, red, base, true)
}

/// [`solve`] without the no-carry split, for the runs that split decides.
fn solve_direct(lower: &ConcreteView, red: &[Red], base: i128) -> Result<Option<Solved>> {
    solve_with(lower, red, base, false)
}

fn solve_with(
    lower: &ConcreteView,
    red: &[Red],
    base: i128,
    split: bool,
) -> Result<Option<Solved>> {
    let m: Vec<i128> = red.iter().map(|r| r.m).collect();
    let n: Vec<i128> = red.iter().map(|r| r.n).collect();
    if let Ok(Some(flat)) = lower.reshaped(&[lower.numel()]) {
        let tau = i128::from(flat.strides()[0]);
        let omega = i128::from(flat.offset());
        let (lo, hi) = flat.valid_bounds()[0];
        let origin = omega + tau * base;
        let strides = m.iter().map(|&x| tau * x).collect();
        return Ok(match slab(&m, &n, base, i128::from(lo), i128::from(hi)) {
            Slab::Box(ranges) => Some(Solved::View {
                strides,
                ranges,
                origin,
            }),
            Slab::Empty => Some(Solved::Empty),
            Slab::NotBox => None,
            Slab::Unknown => exact(lower, red, base)?,
        });
    }
    let coarse = coarsen(lower);
    for cand in [lower, &coarse] {
        match chain(cand, red, base) {
            Some(Some(s)) => return Ok(Some(s)),
            Some(None) => return Ok(None),
            None => {}
        }
    }
    for cand in [lower, &coarse] {
        if let Some(res) = split_chain(cand, red, base) {
            return Ok(res);
        }
    }
    if split {
        if let Some(res) = no_carry(&coarse, red, base)? {
            return Ok(Some(res));
        }
    }
    exact(lower, red, base)
}

/// Decider 2b, which only ever says yes: splits the lower view at place values
/// `p` across which no carry happens. When the low parts `base % p` and
/// `m[k] % p` of every reachable element sum below `p`, each element is
/// `p * q(j) + r(j)` with `q` and `r` affine in the upper index, so the
/// composition is the outer axes read at `q` plus the inner axes read at `r`,
/// valid where both are. When both parts are one view, so is their sum (strides
/// add, valid boxes intersect). An upper stride may feed both parts, which is
/// how a stride straddling a place value merges at any size.
///
/// Splits at several such places hold at once, so the lower axes fall into
/// segments between consecutive no-carry places. Every run of consecutive
/// segments is decided at most once by the other deciders, and a run is one
/// view when it is decided so or when it splits into two runs that are: at most
/// quadratically many decisions in the number of places, where deciding each
/// half recursively from scratch would take time exponential in the rank.
fn no_carry(lower: &ConcreteView, red: &[Red], base: i128) -> Result<Option<Solved>> {
    let shape = lower.shape();
    // Axis indices at which the lower view splits without carry, then the ends.
    let mut cuts = vec![shape.len()];
    let mut place = 1i128;
    for split in (1..shape.len()).rev() {
        place *= i128::from(shape[split]);
        let r0 = base.rem_euclid(place);
        let reach = r0 + red.iter().map(|r| (r.m % place) * (r.n - 1)).sum::<i128>();
        if reach < place {
            cuts.push(split);
        }
    }
    cuts.push(0);
    cuts.reverse();
    if cuts.len() < 3 {
        return Ok(None);
    }
    let mut runs = Runs {
        lower,
        red,
        base,
        cuts: &cuts,
        memo: std::collections::HashMap::new(),
    };
    let last = cuts.len() - 1;
    // The whole run was already decided directly by the caller.
    for mid in 1..last {
        if let Some(part) = runs.split(0, mid, last)? {
            return Ok(Some(part));
        }
    }
    Ok(None)
}

/// A decided run of lower axes, in the reduced coordinates of every upper axis.
type Part = Solved;

/// The sum of two parts read at the same upper index.
fn add_parts(red: &[Red], a: &Part, b: &Part) -> Part {
    let (
        Part::View {
            strides: sa,
            ranges: ra,
            origin: oa,
        },
        Part::View {
            strides: sb,
            ranges: rb,
            origin: ob,
        },
    ) = (a, b)
    else {
        return Part::Empty;
    };
    let mut strides = vec![0i128; red.len()];
    let mut ranges: Vec<(i128, i128)> = red.iter().map(|r| (0, r.n)).collect();
    for k in 0..red.len() {
        strides[k] = sa[k] + sb[k];
        ranges[k] = (ra[k].0.max(rb[k].0), ra[k].1.min(rb[k].1));
    }
    if ranges.iter().any(|&(b, e)| b >= e) {
        return Part::Empty;
    }
    Part::View {
        strides,
        ranges,
        origin: oa + ob,
    }
}

/// Runs of lower axes between no-carry places, decided once each.
struct Runs<'a> {
    lower: &'a ConcreteView,
    red: &'a [Red],
    base: i128,
    /// Axis indices of the no-carry places, `0` first and the rank last.
    cuts: &'a [usize],
    memo: std::collections::HashMap<(usize, usize), Option<Part>>,
}

impl Runs<'_> {
    /// The run of axes `cuts[a]..cuts[b]` as one view, `None` when not decided so.
    fn run(&mut self, a: usize, b: usize) -> Result<Option<Part>> {
        if let Some(res) = self.memo.get(&(a, b)) {
            return Ok(res.clone());
        }
        let mut res = self.direct(a, b)?;
        for mid in a + 1..b {
            if res.is_some() {
                break;
            }
            res = self.split(a, mid, b)?;
        }
        self.memo.insert((a, b), res.clone());
        Ok(res)
    }

    /// The runs `a..mid` and `mid..b` added, when both are decided (or either
    /// is empty, which empties their sum).
    fn split(&mut self, a: usize, mid: usize, b: usize) -> Result<Option<Part>> {
        let high = self.run(a, mid)?;
        if let Some(Part::Empty) = high {
            return Ok(Some(Part::Empty));
        }
        let low = self.run(mid, b)?;
        Ok(match (high, low) {
            (_, Some(Part::Empty)) => Some(Part::Empty),
            (Some(high), Some(low)) => Some(add_parts(self.red, &high, &low)),
            _ => None,
        })
    }

    /// Decides the run `cuts[a]..cuts[b]` by the deciders other than this split.
    fn direct(&self, a: usize, b: usize) -> Result<Option<Part>> {
        let (Some(&x), Some(&y)) = (self.cuts.get(a), self.cuts.get(b)) else {
            return Ok(None);
        };
        let shape = self.lower.shape();
        let place =
            |axis: usize| -> i128 { shape[axis..].iter().map(|&d| i128::from(d)).product() };
        let (hi_place, lo_place) = (place(x), place(y));
        let bounds = self.lower.valid_bounds();
        let offset = if x == 0 { self.lower.offset() } else { 0 };
        let Ok(view) = ConcreteView::build(
            "merge",
            shape[x..y].to_vec(),
            self.lower.strides()[x..y].to_vec(),
            offset,
            Some(bounds[x..y].to_vec()),
        ) else {
            return Ok(None);
        };
        let digit = |v: i128| v.rem_euclid(hi_place) / lo_place;
        // Upper axes that do not move this run are constant in it.
        let keep: Vec<usize> = (0..self.red.len())
            .filter(|&k| digit(self.red[k].m) != 0)
            .collect();
        let sub: Vec<Red> = keep
            .iter()
            .map(|&k| Red {
                axis: k,
                n: self.red[k].n,
                m: digit(self.red[k].m),
                flipped: false,
            })
            .collect();
        Ok(match solve_direct(&view, &sub, digit(self.base))? {
            None => None,
            Some(Solved::Empty) => Some(Part::Empty),
            Some(Solved::View {
                strides: s,
                ranges: rs,
                origin,
            }) => {
                let mut strides = vec![0i128; self.red.len()];
                let mut ranges: Vec<(i128, i128)> = self.red.iter().map(|r| (0, r.n)).collect();
                for (i, &k) in keep.iter().enumerate() {
                    strides[k] = s[i];
                    ranges[k] = rs[i];
                }
                Some(Part::View {
                    strides,
                    ranges,
                    origin,
                })
            }
        })
    }
}

/// The place values of the lower view's axes and of `ms`, when they form a
/// divisibility chain, sorted.
fn boundaries(lower: &ConcreteView, ms: impl Iterator<Item = i128>) -> Option<Vec<i128>> {
    let mut p = vec![i128::from(lower.numel())];
    let mut acc = 1i128;
    for &d in lower.shape().iter().rev() {
        if d > 1 {
            p.push(acc);
        }
        acc *= i128::from(d);
    }
    p.extend(ms);
    p.sort_unstable();
    p.dedup();
    if p.windows(2).any(|w| w[1] % w[0] != 0) {
        return None;
    }
    Some(p)
}

/// Strides, mask and offset.
type I64Fields = (Vec<i64>, Vec<(i64, i64)>, i64);

/// Strides, ranges and an origin solved in `i128`, as `i64` fields; `None` when one
/// leaves `i64` (the composition is then not one view).
fn fields_in_i64(strides: &[i128], ranges: &[(i128, i128)], origin: i128) -> Option<I64Fields> {
    let to64 = |v: i128| i64::try_from(v).ok();
    Some((
        strides.iter().map(|&s| to64(s)).collect::<Option<_>>()?,
        ranges
            .iter()
            .map(|&(b, e)| Some((to64(b)?, to64(e)?)))
            .collect::<Option<_>>()?,
        to64(origin)?,
    ))
}

/// Decider 2 after splitting upper axes that span several digits.
///
/// An axis starting at digit 0 whose length is a multiple of its digit's size is
/// split row-major into that digit and an outer axis (an exact reshape of the
/// reduced upper view). When decider 2 then finds one view, reshaping it back
/// (complete) decides the original composition exactly. `None` when this does
/// not apply or cannot conclude.
fn split_chain(lower: &ConcreteView, red: &[Red], base: i128) -> Option<Option<Solved>> {
    let p = boundaries(lower, red.iter().map(|r| r.m))?;
    // (original axis, multiplier, length), outer before inner for each axis.
    let mut subs: Vec<(usize, i128, i128)> =
        red.iter().enumerate().map(|(k, r)| (k, r.m, r.n)).collect();
    let mut split_any = false;
    let mut i = 0;
    while i < subs.len() {
        let (k, m, n) = subs[i];
        let pos = p.iter().position(|&x| x == m)?;
        let digit = *p.get(pos + 1)? / m;
        if (base / m) % digit + n <= digit {
            i += 1;
            continue;
        }
        if (base / m) % digit != 0 || n % digit != 0 {
            return None;
        }
        subs[i] = (k, m * digit, n / digit);
        subs.insert(i + 1, (k, m, digit));
        split_any = true;
    }
    if !split_any {
        return None;
    }
    let split: Vec<Red> = subs
        .iter()
        .map(|&(k, m, n)| Red {
            axis: k,
            n,
            m,
            flipped: false,
        })
        .collect();
    let (strides, ranges, origin) = match chain(lower, &split, base)? {
        Some(Solved::View {
            strides,
            ranges,
            origin,
        }) => (strides, ranges, origin),
        Some(Solved::Empty) => return Some(Some(Solved::Empty)),
        None => return None,
    };
    let to64 = |v: i128| i64::try_from(v).ok();
    let shape: Vec<i64> = split.iter().map(|r| to64(r.n)).collect::<Option<_>>()?;
    let (strides, mask, origin) = fields_in_i64(&strides, &ranges, origin)?;
    let view = ConcreteView::create(&shape, Some(&strides), origin, Some(&mask)).ok()?;
    let target: Vec<i64> = red.iter().map(|r| to64(r.n)).collect::<Option<_>>()?;
    match view.reshaped(&target) {
        Ok(Some(v)) => Some(Some(Solved::View {
            strides: v.strides().iter().map(|&x| i128::from(x)).collect(),
            ranges: v
                .valid_bounds()
                .into_iter()
                .map(|(b, e)| (i128::from(b), i128::from(e)))
                .collect(),
            origin: i128::from(v.offset()),
        })),
        Ok(None) => Some(None),
        Err(_) => None,
    }
}

/// The lower view with adjacent axes merged wherever a reshape allows it.
fn coarsen(lower: &ConcreteView) -> ConcreteView {
    let shape: Vec<i64> = lower.shape().iter().copied().filter(|&d| d != 1).collect();
    let mut cur = match lower.reshaped(&shape) {
        Ok(Some(v)) => v,
        _ => lower.clone(),
    };
    let mut axis = 0;
    while axis + 1 < cur.ndim() {
        let mut s = cur.shape().to_vec();
        s[axis] *= s[axis + 1];
        s.remove(axis + 1);
        match cur.reshaped(&s) {
            Ok(Some(v)) => cur = v,
            _ => axis += 1,
        }
    }
    cur
}

/// Decider 2. `None` when it does not apply; `Some(None)` when it proves the
/// composition is not one view.
fn chain(lower: &ConcreteView, red: &[Red], base: i128) -> Option<Option<Solved>> {
    let mut places = vec![0i128; lower.ndim()];
    let mut acc = 1i128;
    for axis in (0..lower.ndim()).rev() {
        places[axis] = acc;
        acc *= i128::from(lower.shape()[axis]);
    }
    let dims: Vec<usize> = (0..lower.ndim())
        .filter(|&a| lower.shape()[a] > 1)
        .collect();
    let p = boundaries(lower, red.iter().map(|r| r.m))?;
    let mut seen = std::collections::BTreeSet::new();
    let mut owner = Vec::with_capacity(red.len());
    for r in red {
        if !seen.insert(r.m) {
            return None;
        }
        let pos = p.iter().position(|&x| x == r.m)?;
        let digit = *p.get(pos + 1)? / r.m;
        if (base / r.m) % digit + r.n > digit {
            return None;
        }
        let a = *dims
            .iter()
            .find(|&&a| places[a] <= r.m && r.m < places[a] * i128::from(lower.shape()[a]))?;
        owner.push(a);
    }
    let bounds = lower.valid_bounds();
    let mut strides = vec![0i128; red.len()];
    let mut ranges = vec![(0i128, 0i128); red.len()];
    let mut origin = i128::from(lower.offset());
    let (mut empty, mut not_box, mut unknown) = (false, false, false);
    for &a in &dims {
        let size = i128::from(lower.shape()[a]);
        let tau = i128::from(lower.strides()[a]);
        let digit = (base / places[a]) % size;
        origin += tau * digit;
        let ks: Vec<usize> = (0..red.len()).filter(|&k| owner[k] == a).collect();
        let mult: Vec<i128> = ks.iter().map(|&k| red[k].m / places[a]).collect();
        let ns: Vec<i128> = ks.iter().map(|&k| red[k].n).collect();
        let (b, e) = bounds[a];
        match slab(&mult, &ns, digit, i128::from(b), i128::from(e)) {
            Slab::Box(rs) => {
                for (i, &k) in ks.iter().enumerate() {
                    strides[k] = tau * mult[i];
                    ranges[k] = rs[i];
                }
            }
            Slab::Empty => empty = true,
            // Not a box unless another axis turns out empty.
            Slab::NotBox => not_box = true,
            Slab::Unknown => unknown = true,
        }
    }
    if empty {
        return Some(Some(Solved::Empty));
    }
    if unknown {
        return None;
    }
    if not_box {
        return Some(None);
    }
    Some(Some(Solved::View {
        strides,
        ranges,
        origin,
    }))
}

/// Decider 3: evaluate every reduced index when there are few enough.
fn exact(lower: &ConcreteView, red: &[Red], base: i128) -> Result<Option<Solved>> {
    let shape: Vec<i128> = red.iter().map(|r| r.n).collect();
    if volume_within(&shape, EXACT_LIMIT).is_none() {
        return Ok(None);
    }
    let m: Vec<i128> = red.iter().map(|r| r.m).collect();
    decide(&shape, &mut PairWalk::new(lower, base, &m)?)
}

/// The longest run of at least three views ending at the top (bottom first)
/// whose composition is one view, as its first level and that view, when the
/// top has at most [`RUN_LIMIT`] elements; `None` otherwise.
///
/// The top's offsets are read down one level at a time into one table, and
/// each level's table is decided by evaluation: `O(levels * points)` in all,
/// where composing every run from scratch costs `O(levels^2 * points)`.
pub(crate) fn collapse_run(views: &[ConcreteView]) -> Result<Option<(usize, ConcreteView)>> {
    let n = views.len();
    let Some(top) = views.last() else {
        return Ok(None);
    };
    if n < 3 {
        return Ok(None);
    }
    if top.numel() == 0 {
        let v = ConcreteView::build("merge", top.shape().to_vec(), vec![0; top.ndim()], 0, None)?;
        return Ok(Some((0, v)));
    }
    let shape: Vec<i128> = top.shape().iter().map(|&d| i128::from(d)).collect();
    if volume_within(&shape, RUN_LIMIT).is_none() {
        return Ok(None);
    }
    let mut table = top.offsets()?;
    let mut best = None;
    for level in (0..n - 1).rev() {
        views[level].read_through(&mut table)?;
        if level + 2 < n {
            // Lower levels overwrite: the longest run replaces the most views.
            if let Some(one) = one_view_of(top.shape(), &shape, &table)? {
                best = Some((level, one));
            }
        }
    }
    Ok(best)
}

/// The one view whose offsets over `shape` are `table`, if there is one
/// (not for rank 0 without a valid point).
fn one_view_of(
    dims: &[i64],
    shape: &[i128],
    table: &[Option<i64>],
) -> Result<Option<ConcreteView>> {
    Ok(match decide(shape, &mut TableWalk::new(table, shape))? {
        None => None,
        Some(Solved::Empty) if shape.is_empty() => None,
        Some(Solved::Empty) => Some(ConcreteView::all_masked("merge", dims)?),
        Some(Solved::View {
            strides,
            ranges,
            origin,
        }) => fields_in_i64(&strides, &ranges, origin).and_then(|(strides, mask, origin)| {
            ConcreteView::create(dims, Some(&strides), origin, Some(&mask)).ok()
        }),
    })
}

/// Tests `{ j in [0, n) : lo <= c + sum(m[k] * j[k]) < hi }` (every `m[k] > 0`) for
/// being a box, by tightening per-axis ranges to a fixpoint and checking corners.
pub(crate) fn slab(m: &[i128], n: &[i128], c: i128, lo: i128, hi: i128) -> Slab {
    let k = m.len();
    let mut a = vec![0i128; k];
    let mut z: Vec<i128> = n.to_vec();
    for _ in 0..(4 * k + 4) {
        let mut changed = false;
        for x in 0..k {
            let min_sum = c + (0..k).map(|y| m[y] * a[y]).sum::<i128>();
            let max_sum = c + (0..k).map(|y| m[y] * (z[y] - 1)).sum::<i128>();
            let rest_min = min_sum - m[x] * a[x];
            let rest_max = max_sum - m[x] * (z[x] - 1);
            let need_lo = -((rest_max - lo).div_euclid(m[x]));
            let need_hi = (hi - 1 - rest_min).div_euclid(m[x]) + 1;
            let (na, nz) = (a[x].max(need_lo), z[x].min(need_hi));
            if na >= nz {
                return Slab::Empty;
            }
            if (na, nz) != (a[x], z[x]) {
                changed = true;
                a[x] = na;
                z[x] = nz;
            }
        }
        if !changed {
            break;
        }
    }
    if k == 0 {
        return if lo <= c && c < hi {
            Slab::Box(Vec::new())
        } else {
            Slab::Empty
        };
    }
    let min_sum = c + (0..k).map(|y| m[y] * a[y]).sum::<i128>();
    let max_sum = c + (0..k).map(|y| m[y] * (z[y] - 1)).sum::<i128>();
    if lo <= min_sum && max_sum < hi {
        return Slab::Box(a.into_iter().zip(z).collect());
    }
    if volume_within(n, EXACT_LIMIT).is_none() {
        return Slab::Unknown;
    }
    match decide(n, &mut SlabWalk::new(m, c, lo, hi)) {
        Ok(Some(Solved::View { ranges, .. })) => Slab::Box(ranges),
        Ok(Some(Solved::Empty)) => Slab::Empty,
        Ok(None) => Slab::NotBox,
        Err(_) => Slab::Unknown,
    }
}

/// A composition made one view by first cutting axes of the upper view along the
/// digits of the lower one (see [`merge_refined`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refined {
    /// Per axis of the upper view, the sizes it was cut into (one size: not cut).
    pub sizes: Vec<Vec<i64>>,
    /// The one view equal to the cut upper view read through the lower one.
    pub view: ConcreteView,
}

impl Refined {
    /// The refined shape: every axis of the upper view replaced by its sizes.
    #[must_use]
    pub fn shape(&self) -> Vec<i64> {
        self.sizes.iter().flatten().copied().collect()
    }
}

/// Composes `upper` on top of `lower` into one view after cutting unmasked axes of
/// `upper` along the row-major digits of `lower`, when that makes it one view.
///
/// A copy of a stack whose top reads whole rows of the level below (merged attention
/// heads `[8, 512, 12 * 64]` over a permuted `[8, 512, 12, 64]`, an im2col matrix over
/// unfold windows) is not one view in the top's shape, but it is in a finer one: cut
/// the top's `768` axis into `[12, 64]` and it reads the level below row by row. A
/// loop nest over the finer shape writes the same row-major elements, so planners
/// use this where [`merge`] says no. An axis of extent `n` and stride `t` is cut when
/// `|t|` is a place value of `lower` whose digit has fewer than `n` values dividing `n`.
///
/// `Ok(None)` when no cut applies or the cut view does not merge either. Remembered per
/// thread, as [`merge_memo`](super::merge_memo) is.
///
/// # Errors
/// As [`merge`].
pub fn merge_refined(lower: &ConcreteView, upper: &ConcreteView) -> Result<Option<Refined>> {
    thread_local! {
        static REFINED: Memo<Pair, Option<Refined>> = Memo::new(MEMO_CAPACITY);
    }
    remembered_pair(&REFINED, lower, upper, refine)
}

/// [`merge_refined`], decided.
fn refine(lower: &ConcreteView, upper: &ConcreteView) -> Result<Option<Refined>> {
    let lower_shape = lower.shape();
    let mut place = vec![1i128; lower_shape.len()];
    for k in (0..lower_shape.len().saturating_sub(1)).rev() {
        place[k] = place[k + 1] * i128::from(lower_shape[k + 1].max(1));
    }
    let bounds = upper.valid_bounds();
    let mut sizes: Vec<Vec<i64>> = Vec::with_capacity(upper.ndim());
    let mut cut = false;
    for (axis, (&n, &t)) in upper.shape().iter().zip(upper.strides()).enumerate() {
        let full = bounds[axis] == (0, n);
        let mut parts = vec![n];
        if full && t != 0 {
            // Peel inner digits off the axis while its stride sits on a place value.
            let mut stride = i128::from(t).abs();
            while let Some(&outer) = parts.first() {
                let Some(j) = place.iter().position(|&p| p == stride) else {
                    break;
                };
                let digit = lower_shape[j];
                if digit <= 1 || outer <= digit || outer % digit != 0 {
                    break;
                }
                parts[0] = outer / digit;
                parts.insert(1, digit);
                stride *= i128::from(digit);
            }
        }
        cut |= parts.len() > 1;
        sizes.push(parts);
    }
    if !cut {
        return Ok(None);
    }
    let shape: Vec<i64> = sizes.iter().flatten().copied().collect();
    let Some(finer) = upper.reshaped(&shape)? else {
        return Ok(None);
    };
    Ok(merge(lower, &finer)?.map(|view| Refined { sizes, view }))
}
