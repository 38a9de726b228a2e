//! Per-thread memos of pure deciders (merges of two levels, collapses of runs, and the
//! kernels' plans of masked rows): a planner or a chain of ops that meets the same levels
//! again decides them once.

use std::cell::RefCell;
use std::hash::{BuildHasher, Hash};

use hashbrown::{DefaultHashBuilder, HashTable};

/// The trait by which a [`Memo`] is searched with a borrowed form of its key (hashbrown's):
/// the borrowed form hashes as the key does and compares equal to it.
pub use hashbrown::Equivalent;

use super::ConcreteView;
use crate::error::Result;

/// Entries kept per thread in each memo of this crate before it is cleared.
pub(crate) const MEMO_CAPACITY: usize = 4096;

/// A memo of a pure function's results by argument, for one thread (declare it in
/// `thread_local!`): searched with a borrowed key (no copy of the argument per lookup),
/// cleared when it holds `capacity` entries and must take another, so its memory is
/// bounded. Errors are not remembered. It uses hashbrown's fast hasher, which is not
/// resistant to chosen collisions: keys are the caller's own views, and a collision costs
/// time, never a wrong result. Each entry keeps its key's hash, so a miss hashes the key
/// once (the lookup's hash serves the insert) and growing the table hashes no key again.
pub struct Memo<K, V> {
    table: RefCell<HashTable<(u64, K, V)>>,
    hasher: DefaultHashBuilder,
    capacity: usize,
}

impl<K: Hash + Eq, V: Clone> Memo<K, V> {
    /// An empty memo of at most `capacity` entries.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Memo {
            table: RefCell::new(HashTable::new()),
            hasher: DefaultHashBuilder::default(),
            capacity,
        }
    }

    /// The result remembered under `key`, or `compute()`'s, remembered under `own()` (the
    /// owned form of `key`) when it is `Ok`. `compute` may use this memo itself: nothing is
    /// borrowed while it runs.
    ///
    /// # Errors
    /// `compute`'s.
    pub fn remembered<Q, E>(
        &self,
        key: &Q,
        own: impl FnOnce() -> K,
        compute: impl FnOnce() -> std::result::Result<V, E>,
    ) -> std::result::Result<V, E>
    where
        Q: Hash + Equivalent<K> + ?Sized,
    {
        let (hash, hit) = self.find(key);
        if let Some(hit) = hit {
            return Ok(hit);
        }
        let res = compute()?;
        let mut table = self.table.borrow_mut();
        if table.len() >= self.capacity {
            table.clear();
        }
        table.insert_unique(hash, (hash, own(), res.clone()), |e| e.0);
        Ok(res)
    }

    /// Whether a result is remembered under `key`.
    #[must_use]
    pub fn contains<Q: Hash + Equivalent<K> + ?Sized>(&self, key: &Q) -> bool {
        self.find(key).1.is_some()
    }

    /// The hash of `key` and the result remembered under it.
    fn find<Q: Hash + Equivalent<K> + ?Sized>(&self, key: &Q) -> (u64, Option<V>) {
        let hash = self.hasher.hash_one(key);
        let found = |e: &(u64, K, V)| e.0 == hash && key.equivalent(&e.1);
        let hit = self.table.borrow().find(hash, found).map(|e| e.2.clone());
        (hash, hit)
    }
}

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

/// `compute(lower, upper)`, remembered in `memo` (a memo keyed by pairs of levels).
pub(super) fn remembered_pair<V: Clone>(
    memo: &'static std::thread::LocalKey<Memo<Pair, V>>,
    lower: &ConcreteView,
    upper: &ConcreteView,
    compute: impl FnOnce(&ConcreteView, &ConcreteView) -> Result<V>,
) -> Result<V> {
    memo.with(|m| {
        m.remembered(
            &PairRef(lower, upper),
            || Pair(lower.clone(), upper.clone()),
            || compute(lower, upper),
        )
    })
}
