//! Per-thread memos of the pure deciders (merges of two levels, collapses of runs):
//! a planner or a chain of ops that meets the same levels again decides them once.

use std::cell::RefCell;

use hashbrown::{Equivalent, HashMap};

use super::ConcreteView;
use crate::error::Result;

/// Entries kept per thread in each memo before it is cleared.
const MEMO_CAPACITY: usize = 4096;

/// A pair of levels, lower first, owned: the key of the pair memos.
#[derive(PartialEq, Eq, Hash)]
pub(super) struct Pair(ConcreteView, ConcreteView);

/// A pair of levels, borrowed: looks a [`Pair`] up without copying the views (it hashes
/// as the `Pair` does).
#[derive(Hash)]
pub(super) struct PairRef<'a>(pub(super) &'a ConcreteView, pub(super) &'a ConcreteView);

impl Equivalent<Pair> for PairRef<'_> {
    fn equivalent(&self, key: &Pair) -> bool {
        *self.0 == key.0 && *self.1 == key.1
    }
}

/// A memo of one thread: a pure function's results by argument.
pub(super) type Memo<K, V> = std::thread::LocalKey<RefCell<HashMap<K, V>>>;

/// `compute()`'s result, remembered in `memo` under `key` (`own` makes the key to store);
/// a memo that holds [`MEMO_CAPACITY`] entries is cleared before it takes another. Errors
/// are not remembered.
pub(super) fn remembered<K, Q, V>(
    memo: &'static Memo<K, V>,
    key: &Q,
    own: impl FnOnce() -> K,
    compute: impl FnOnce() -> Result<V>,
) -> Result<V>
where
    K: std::hash::Hash + Eq,
    Q: std::hash::Hash + Equivalent<K> + ?Sized,
    V: Clone,
{
    if let Some(hit) = memo.with(|m| m.borrow().get(key).cloned()) {
        return Ok(hit);
    }
    let res = compute()?;
    memo.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MEMO_CAPACITY {
            m.clear();
        }
        m.insert(own(), res.clone());
    });
    Ok(res)
}

/// `compute(lower, upper)`, remembered in `memo` (a memo keyed by pairs of levels).
pub(super) fn remembered_pair<V: Clone>(
    memo: &'static Memo<Pair, V>,
    lower: &ConcreteView,
    upper: &ConcreteView,
    compute: impl FnOnce(&ConcreteView, &ConcreteView) -> Result<V>,
) -> Result<V> {
    remembered(
        memo,
        &PairRef(lower, upper),
        || Pair(lower.clone(), upper.clone()),
        || compute(lower, upper),
    )
}
