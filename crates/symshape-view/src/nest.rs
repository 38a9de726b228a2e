//! The loop type and the loop-nest rules written once for bound and symbolic views: what a
//! loop is, which adjacent axes of a nest merge into one loop, which interval of an axis its
//! masks leave valid, and where masks cut an index space into boxes.
//!
//! Both loop planners plan with these rules: the kernels (`symshape-kernels`, over bound
//! views: `usize` extents and `isize` steps, decided at once by [`Exact`]) and the code
//! generator (`symshape-codegen`, over symbolic views: [`Expr`] extents and steps, proven
//! under a [`Scope`] by [`Proven`], where what is not proven is not done).
//!
//! [`Loop`] is the one loop type of both planners' nests: the indices a loop runs and what
//! one step of it moves each operand by. The kernels' nests are `Loop<usize, [isize; K]>`
//! (destination first, then each source) under a base offset per operand; codegen's are
//! `Loop<Expr, Expr>` (the output's step; its reads are offset expressions, not steps),
//! each with its index symbol, bounds and predicates beside it.
//!
//! - [`merge_contiguous`]: adjacent axes, outermost first, merge into one when the step of
//!   the outer is the step of the inner times the inner's extent for every operand.
//! - [`valid_interval`]: the interval of an axis of a given extent that every given lower and
//!   upper end leaves, clamped to the axis: the loop bounds of a mask.
//! - [`mask_bounds`]: those ends read off a symbolic validity condition (`±i + r OP 0`).
//! - [`cells`]: the boxes an exact index space is cut into at every end of the given boxes.
//!
//! This module is a leaf: it uses `symshape` and nothing else of this crate.

use symshape::{CmpOp, Cond, CondKind, Expr, Scope};

/// How a planner decides the comparisons of the rules: exactly for bound sizes, by proof for
/// symbolic ones (what is not proven is false, so the rule is not applied).
pub trait Decide {
    /// The extent of an axis.
    type Extent: Clone;
    /// What one step of an axis moves an operand by.
    type Step;
    /// Whether `outer == inner * extent`: the outer axis steps over exactly one run of the
    /// inner one.
    fn steps_over(&self, outer: &Self::Step, inner: &Self::Step, extent: &Self::Extent) -> bool;
    /// The extent of two merged axes, `outer * inner`; `None` leaves them apart.
    fn merged_extent(&self, outer: &Self::Extent, inner: &Self::Extent) -> Option<Self::Extent>;
    /// The first index of an axis.
    fn zero(&self) -> Self::Extent;
    /// The larger of two ends.
    fn max(&self, a: Self::Extent, b: Self::Extent) -> Self::Extent;
    /// The smaller of two ends.
    fn min(&self, a: Self::Extent, b: Self::Extent) -> Self::Extent;
    /// An end as the plan keeps it (simplified, for expressions).
    fn settle(&self, e: Self::Extent) -> Self::Extent;
}

/// One loop of a nest: the number of indices it runs and what one step of it moves each
/// operand by. Bound nests (the kernels') are `Loop<usize, [isize; K]>`, destination first;
/// symbolic ones (codegen's) are `Loop<Expr, Expr>`, the output's step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Loop<E, S> {
    /// The number of indices the loop runs.
    pub extent: E,
    /// What one step of the loop moves each operand by.
    pub steps: S,
}

/// The steps of a [`Loop`] as [`merge_contiguous`] reads them: one per operand, or `None`
/// when some operand does not move by a fixed step (a loop that merges with nothing).
pub trait Steps: Clone {
    /// What one step moves an operand by.
    type Step;
    /// The step of each operand.
    fn steps(&self) -> Option<&[Self::Step]>;
}

/// One step per operand, each fixed.
impl<T: Clone, const K: usize> Steps for [T; K] {
    type Step = T;

    #[inline]
    fn steps(&self) -> Option<&[T]> {
        Some(self)
    }
}

/// Decides on bound sizes at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Exact;

impl Decide for Exact {
    type Extent = usize;
    type Step = isize;

    #[inline]
    fn steps_over(&self, outer: &isize, inner: &isize, extent: &usize) -> bool {
        isize::try_from(*extent)
            .ok()
            .and_then(|n| inner.checked_mul(n))
            .is_some_and(|x| x == *outer)
    }

    #[inline]
    fn merged_extent(&self, outer: &usize, inner: &usize) -> Option<usize> {
        outer.checked_mul(*inner)
    }

    #[inline]
    fn zero(&self) -> usize {
        0
    }

    #[inline]
    fn max(&self, a: usize, b: usize) -> usize {
        a.max(b)
    }

    #[inline]
    fn min(&self, a: usize, b: usize) -> usize {
        a.min(b)
    }

    #[inline]
    fn settle(&self, e: usize) -> usize {
        e
    }
}

/// Decides on symbolic sizes by proof under a scope's ranges and assumptions.
#[derive(Debug, Clone, Copy)]
pub struct Proven<'a>(pub &'a Scope);

impl Decide for Proven<'_> {
    type Extent = Expr;
    type Step = Expr;

    fn steps_over(&self, outer: &Expr, inner: &Expr, extent: &Expr) -> bool {
        self.0.prove_eq(*outer, *inner * *extent).is_true()
    }

    /// The simplified product; `None` when it exceeds symshape's limits.
    fn merged_extent(&self, outer: &Expr, inner: &Expr) -> Option<Expr> {
        self.0.simplify(*outer * *inner).check().ok()
    }

    fn zero(&self) -> Expr {
        Expr::from(0)
    }

    fn max(&self, a: Expr, b: Expr) -> Expr {
        a.max(b)
    }

    fn min(&self, a: Expr, b: Expr) -> Expr {
        a.min(b)
    }

    /// Simplified under the scope (an expression over symshape's limits stays one, for the
    /// caller's `check`).
    fn settle(&self, e: Expr) -> Expr {
        self.0.simplify(e)
    }
}

/// Merges adjacent axes of `axes` (outermost first) where every operand is contiguous
/// across them: the step of the outer is the step of the inner times the inner's extent.
/// The merged axis runs the product of the extents and steps as the inner one did, so
/// index `a * n + b` of it is index `(a, b)` of the pair. Chains merge: the merged axis is
/// tried against the next.
#[inline]
pub fn merge_contiguous<E, S, K>(k: &K, axes: &mut Vec<Loop<E, S>>)
where
    S: Steps,
    K: Decide<Extent = E, Step = S::Step>,
{
    // In place: `w` is the last kept axis.
    let mut w = 0;
    for i in 1..axes.len() {
        let (kept, rest) = axes.split_at_mut(i);
        let (Some(outer), Some(inner)) = (kept.get_mut(w), rest.first()) else {
            continue;
        };
        if let Some(extent) = merged(k, outer, inner) {
            // The merged loop steps as the inner one did.
            outer.extent = extent;
            outer.steps.clone_from(&inner.steps);
        } else {
            w += 1;
            axes.swap(w, i);
        }
    }
    axes.truncate(w + 1);
}

/// The extent of `outer` and `inner` merged, when every operand is contiguous across them.
#[inline]
fn merged<E, S, K>(k: &K, outer: &Loop<E, S>, inner: &Loop<E, S>) -> Option<E>
where
    S: Steps,
    K: Decide<Extent = E, Step = S::Step>,
{
    let (so, si) = (outer.steps.steps()?, inner.steps.steps()?);
    let n = &inner.extent;
    let contiguous = so.len() == si.len() && so.iter().zip(si).all(|(o, i)| k.steps_over(o, i, n));
    if contiguous {
        k.merged_extent(&outer.extent, n)
    } else {
        None
    }
}

/// The interval `lo..hi` of an axis of `extent` indices where every lower end in `lows` and
/// every upper end (exclusive) in `highs` holds: `lo` the largest of 0 and `lows`, at most
/// `extent`; `hi` the smallest of `extent` and `highs`, at least `lo`. So
/// `0 <= lo <= hi <= extent` always, and the interval is empty when the ends cross.
pub fn valid_interval<K: Decide>(
    k: &K,
    extent: K::Extent,
    lows: impl IntoIterator<Item = K::Extent>,
    highs: impl IntoIterator<Item = K::Extent>,
) -> (K::Extent, K::Extent) {
    let lo = lows.into_iter().fold(k.zero(), |a, b| k.max(a, b));
    let lo = k.settle(k.min(lo, extent.clone()));
    let hi = highs.into_iter().fold(extent, |a, b| k.min(a, b));
    let hi = k.settle(k.max(hi, lo.clone()));
    (lo, hi)
}

/// The ends a validity condition puts on one index ([`mask_bounds`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ends {
    /// Lower ends: the index is at least each.
    pub lows: Vec<Expr>,
    /// Upper ends: the index is below each.
    pub highs: Vec<Expr>,
}

/// Reads the conjuncts of `valid` that bound one of `indices` alone (`±i + r` compared with
/// 0 by `<=` or `==`, `r` free of every index) as [`Ends`] of that index, one per index;
/// returns them and the other conjuncts, in order. The ends then give each loop its bounds
/// through [`valid_interval`].
#[must_use]
pub fn mask_bounds(valid: Cond, indices: &[Expr]) -> (Vec<Ends>, Vec<Cond>) {
    let mut ends = vec![Ends::default(); indices.len()];
    let mut rest = Vec::new();
    for atom in conjuncts(valid) {
        match index_bound(atom, indices) {
            Some((k, lo, hi)) if k < ends.len() => {
                ends[k].lows.extend(lo);
                ends[k].highs.extend(hi);
            }
            _ => rest.push(atom),
        }
    }
    (ends, rest)
}

/// `Some((k, lo, hi))` when `atom` bounds `indices[k]` alone: `±i + r` compared with 0, `r`
/// free of every index, giving a lower end, an upper end (exclusive) or both (`==`).
fn index_bound(atom: Cond, indices: &[Expr]) -> Option<(usize, Option<Expr>, Option<Expr>)> {
    let CondKind::Compare(d, op) = atom.kind() else {
        return None;
    };
    let used = d.symbols();
    let mut found = indices.iter().enumerate().filter(|(_, s)| used.contains(s));
    let (k, &s) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let c = d.coefficient_of(s);
    let sign: i64 = if c == 1.into() {
        1
    } else if c == (-1).into() {
        -1
    } else {
        return None;
    };
    let r = d - s * sign;
    if r.symbols().iter().any(|x| indices.contains(x)) {
        return None;
    }
    // `sign*i + r OP 0`.
    match (op, sign) {
        (CmpOp::Le, 1) => Some((k, None, Some(1 - r))),
        (CmpOp::Le, _) => Some((k, Some(r), None)),
        (CmpOp::Eq, 1) => Some((k, Some(-r), Some(-r + 1))),
        (CmpOp::Eq, _) => Some((k, Some(r), Some(r + 1))),
        _ => None,
    }
}

/// The conjuncts of `c` (itself when it is not an `and`; none when it is `true`).
fn conjuncts(c: Cond) -> Vec<Cond> {
    match c.kind() {
        CondKind::And(args) => args,
        CondKind::Const(true) => Vec::new(),
        _ => vec![c],
    }
}

/// Cuts the index space of `shape` at every end of every box in `boxes` (one interval per
/// axis each; a box may list fewer axes) into cells, in row-major order: no cell crosses
/// an end of a box, so each lies inside a box or outside it. `reserve` gives the list of
/// cells room for the count it is called with (the product of the pieces of every axis), or
/// refuses it.
///
/// # Errors
/// What `reserve` returns.
pub fn cells<E>(
    shape: &[usize],
    boxes: &[&[(usize, usize)]],
    mut reserve: impl FnMut(usize) -> Result<Vec<Vec<(usize, usize)>>, E>,
) -> Result<Vec<Vec<(usize, usize)>>, E> {
    let mut per_axis: Vec<Vec<(usize, usize)>> = Vec::with_capacity(shape.len());
    for (k, &n) in shape.iter().enumerate() {
        let mut cuts = vec![0, n];
        for b in boxes {
            if let Some(&(lo, hi)) = b.get(k) {
                cuts.push(lo);
                cuts.push(hi);
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        per_axis.push(
            cuts.windows(2)
                .map(|w| (w[0], w[1]))
                .filter(|(a, b)| a < b)
                .collect(),
        );
    }
    // Cartesian product in row-major order.
    let mut res: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
    for iv in per_axis {
        let mut next = reserve(res.len().saturating_mul(iv.len()))?;
        for r in &res {
            for &i in &iv {
                let mut c = r.clone();
                c.push(i);
                next.push(c);
            }
        }
        res = next;
    }
    Ok(res)
}
