//! [`ConcreteStack`]: bound views stacked bottom first, the input kernels run on,
//! and [`Levels`], what kernels accept (a view or a stack).
//!
//! Representation invariants:
//!
//! 1. There is at least one level.
//! 2. Every valid element of a level above lies within the elements of the level
//!    below (checked when the stack is built).
//! 3. A stack built by [`ConcreteStack::new`] is merged as far as
//!    [`merge`](super::merge) decides: no two adjacent levels compose into one view
//!    (nor, for tops of at most 2^16 elements, any run of levels).

use std::fmt;

use super::memo::{remembered_pair, Memo, Pair, MEMO_CAPACITY};
use super::merge::{check_stacked, collapse_run, merge, RUN_LIMIT};
use super::refute::refute;
use super::{format_offsets, unravel, ConcreteView};
use crate::error::{invalid, Result};

/// Constant views stacked bottom first: each reads the row-major elements of the
/// one below, and the bottom one reads the buffer.
///
/// What binding a [`ViewStack`](crate::ViewStack) gives, and what the kernels run
/// on (through [`Levels`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConcreteStack {
    levels: Vec<ConcreteView>,
}

/// A concrete view or stack of views, as kernels read them: levels bottom first,
/// each checked to lie within the one below.
///
/// Implemented by [`ConcreteView`] (one level) and [`ConcreteStack`] only, so a
/// kernel never sees levels whose fit was not checked.
pub trait Levels: sealed::Sealed + Sync {
    /// The levels, bottom first (at least one).
    fn levels(&self) -> &[ConcreteView];
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ConcreteView {}
    impl Sealed for super::ConcreteStack {}
}

impl Levels for ConcreteView {
    fn levels(&self) -> &[ConcreteView] {
        std::slice::from_ref(self)
    }
}

impl Levels for ConcreteStack {
    fn levels(&self) -> &[ConcreteView] {
        &self.levels
    }
}

impl From<ConcreteView> for ConcreteStack {
    fn from(v: ConcreteView) -> ConcreteStack {
        ConcreteStack { levels: vec![v] }
    }
}

impl ConcreteStack {
    /// The stack of `levels` (bottom first), merged wherever adjacent levels
    /// compose into one view (invariant 3).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `levels` is empty or a level
    /// reaches outside the elements of the one below.
    pub fn new(levels: Vec<ConcreteView>) -> Result<ConcreteStack> {
        ConcreteStack::unmerged(levels)?.simplify()
    }

    /// The stack of `levels` as given, without merging (invariants 1 and 2 only).
    ///
    /// # Errors
    /// As [`ConcreteStack::new`].
    pub fn unmerged(levels: Vec<ConcreteView>) -> Result<ConcreteStack> {
        if levels.is_empty() {
            return Err(invalid("stack", "a stack needs at least one view"));
        }
        for pair in levels.windows(2) {
            check_stacked(&pair[0], &pair[1])?;
        }
        Ok(ConcreteStack { levels })
    }

    /// [`ConcreteStack::new`] for levels that usually do not merge: when every
    /// decision [`ConcreteStack::simplify`] would take is refuted by a few
    /// evaluated points (see `refute.rs`), the levels are kept as given without
    /// running the deciders; otherwise this is [`ConcreteStack::new`]. Either way
    /// the result is exactly [`ConcreteStack::new`]'s.
    ///
    /// `hints` holds, per decision, the probe that refuted it last time (it grows
    /// as needed); a caller binding the same stack repeatedly keeps it.
    pub(crate) fn new_hinted(levels: Vec<ConcreteView>, hints: &mut Vec<u32>) -> Result<Self> {
        let stack = ConcreteStack::unmerged(levels)?;
        if stack.refuted(hints) {
            return Ok(stack);
        }
        stack.simplify()
    }

    /// Whether every merge [`ConcreteStack::simplify`] would try on these levels
    /// is refuted: each adjacent pair, and, where the level pushed has at most
    /// [`RUN_LIMIT`] elements, each run of three or more levels ending at it.
    fn refuted(&self, hints: &mut Vec<u32>) -> bool {
        let mut slot = 0usize;
        let mut next = |run: &[ConcreteView]| {
            if hints.len() <= slot {
                hints.resize(slot + 1, 0);
            }
            let ok = refute(run, &mut hints[slot]);
            slot += 1;
            ok
        };
        for i in 1..self.levels.len() {
            if !next(&self.levels[i - 1..=i]) {
                return false;
            }
            let top = &self.levels[i];
            let small = top.numel() > 0 && i128::from(top.numel()) <= RUN_LIMIT;
            if i >= 2 && small {
                for k in 0..=i - 2 {
                    if !next(&self.levels[k..=i]) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// A stack whose fit the caller has established.
    pub(crate) fn from_checked(levels: Vec<ConcreteView>) -> ConcreteStack {
        debug_assert!(!levels.is_empty());
        ConcreteStack { levels }
    }

    /// The levels, bottom first.
    #[must_use]
    pub fn levels(&self) -> &[ConcreteView] {
        &self.levels
    }

    /// The levels, bottom first, by value.
    #[must_use]
    pub fn into_levels(self) -> Vec<ConcreteView> {
        self.levels
    }

    /// The top level, whose shape is the stack's shape.
    #[must_use]
    pub fn top(&self) -> &ConcreteView {
        // Invariant 1.
        &self.levels[self.levels.len() - 1]
    }

    /// The shape of the stack.
    #[must_use]
    pub fn shape(&self) -> &[i64] {
        self.top().shape()
    }

    /// The number of elements (valid or not) of the top level.
    #[must_use]
    pub fn numel(&self) -> i64 {
        self.top().numel()
    }

    /// The single view equal to the whole stack, when there is one.
    #[must_use]
    pub fn to_view(&self) -> Option<&ConcreteView> {
        match self.levels.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// Merges adjacent levels wherever their composition is one view, and runs of
    /// three or more levels that are one view together when the top has at most
    /// 2^16 elements.
    ///
    /// # Errors
    /// [`Error::Overflow`](crate::Error::Overflow) when a merged field leaves `i64`.
    pub fn simplify(&self) -> Result<ConcreteStack> {
        let mut out: Vec<ConcreteView> = Vec::with_capacity(self.levels.len());
        for v in &self.levels {
            out.push(v.clone());
            merge_down(&mut out)?;
        }
        Ok(ConcreteStack { levels: out })
    }

    /// The buffer offset of element `idx`, `None` when it is invalid at any level.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) when `idx` is outside the shape.
    pub fn offset_of(&self, idx: &[i64]) -> Result<Option<i64>> {
        let mut cur = idx.to_vec();
        for (k, v) in self.levels.iter().enumerate().rev() {
            match v.offset_of(&cur)? {
                None => return Ok(None),
                Some(o) if k == 0 => return Ok(Some(o)),
                Some(o) => cur = unravel(self.levels[k - 1].shape(), o),
            }
        }
        Ok(None)
    }

    /// The offset of every element in row-major order, `None` for invalid ones.
    ///
    /// # Errors
    /// As [`ConcreteView::offsets`].
    pub fn offsets(&self) -> Result<Vec<Option<i64>>> {
        let (top, below) = self
            .levels
            .split_last()
            .ok_or_else(|| invalid("offsets", "a stack needs at least one view"))?;
        // Walk down per element: the levels below may be far larger than the top.
        let mut table = top.offsets()?;
        for v in below.iter().rev() {
            v.read_through(&mut table)?;
        }
        Ok(table)
    }

    /// The `offsets` line: `offsets [2, 2]: 0 1 _ 3`.
    ///
    /// # Errors
    /// As [`ConcreteStack::offsets`].
    pub fn offsets_line(&self) -> Result<String> {
        Ok(format_offsets(self.shape(), &self.offsets()?))
    }

    /// The stack with every level in canonical form (see
    /// [`ConcreteView::canonical`]); equal mappings of merged stacks of one view
    /// give equal results.
    #[must_use]
    pub fn canonical(&self) -> ConcreteStack {
        ConcreteStack {
            levels: self.levels.iter().map(ConcreteView::canonical).collect(),
        }
    }
}

impl fmt::Display for ConcreteStack {
    /// One line per level, bottom first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.levels.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

/// Merges the last two levels of `out` (above `floor`) into one with `merge` while it
/// finds one.
///
/// # Errors
/// `merge`'s.
pub(crate) fn merge_last_pairs<T>(
    out: &mut Vec<T>,
    floor: usize,
    mut merge: impl FnMut(&T, &T) -> Result<Option<T>>,
) -> Result<()> {
    while out.len() >= floor + 2 {
        let n = out.len();
        let Some(m) = merge(&out[n - 2], &out[n - 1])? else {
            break;
        };
        out.truncate(n - 2);
        out.push(m);
    }
    Ok(())
}

/// Merges the last level of `out` downwards as far as it goes, then collapses a
/// run of three or more levels that is one view (see [`collapse_run`]).
pub(crate) fn merge_down(out: &mut Vec<ConcreteView>) -> Result<()> {
    loop {
        merge_last_pairs(out, 0, merge_memo)?;
        if out.len() < 3 {
            return Ok(());
        }
        match collapse_memo(out)? {
            Some((level, one)) => {
                out.truncate(level);
                out.push(one);
            }
            None => return Ok(()),
        }
    }
}

/// A collapsed run: the level it starts at and the one view it is.
type Run = Option<(usize, ConcreteView)>;

thread_local! {
    // Merge and collapse are pure functions of their inputs; a chain of ops that
    // revisits the same pair (a reshape and its inverse, say) decides it once.
    static MERGES: Memo<Pair, Option<ConcreteView>> = Memo::new(MEMO_CAPACITY);
    static RUNS: Memo<Vec<ConcreteView>, Run> = Memo::new(MEMO_CAPACITY);
}

/// [`merge`], remembered per thread: a planner that meets the same pair of levels again
/// (a stack materialized many times) decides it once.
///
/// # Errors
/// As [`merge`].
pub fn merge_memo(lower: &ConcreteView, upper: &ConcreteView) -> Result<Option<ConcreteView>> {
    remembered_pair(&MERGES, lower, upper, merge)
}

/// [`collapse_run`], remembered per thread.
fn collapse_memo(views: &[ConcreteView]) -> Result<Run> {
    RUNS.with(|m| m.remembered(views, || views.to_vec(), || collapse_run(views)))
}

#[cfg(test)]
mod tests {
    use super::super::memo::PairRef;
    use super::*;

    /// A lookup by borrowed views hashes as the stored pair does, so a pair decided once
    /// is found again (were the hashes to differ, every lookup would miss and decide
    /// again, with the same results: only this test would see it).
    #[test]
    fn pair_memos_find_a_decided_pair_by_its_borrowed_views() {
        let lower = ConcreteView::create(&[12, 64], Some(&[1, 12]), 0, None).expect("lower");
        let upper = ConcreteView::create(&[4, 3, 64], None, 0, None).expect("upper");
        assert_eq!(
            merge_memo(&lower, &upper).expect("merge"),
            merge(&lower, &upper).expect("merge")
        );
        assert!(MERGES.with(|m| m.contains(&PairRef(&lower, &upper))));
        let views = [lower.clone(), upper.clone(), lower];
        collapse_memo(&views).expect("collapse");
        assert!(RUNS.with(|m| m.contains(&views[..])));
    }
}
