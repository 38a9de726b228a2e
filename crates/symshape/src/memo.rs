//! The answers a [`Scope`](crate::Scope) has computed, kept for the next time the same
//! question is asked under the same knowledge.
//!
//! Every entry is a pure function of the scope's knowledge (its assumptions, in the order
//! they were absorbed) and the question, so a memo is shared by the clones of a scope and
//! replaced by an empty one whenever the scope changes. Keys are interned ids, so a
//! structurally equal question is the same key.
//!
//! Invariants:
//! 1. A memo is reachable only from scopes equal to the one it was filled under:
//!    `Scope::absorb` gives a scope a fresh memo before changing its knowledge, and
//!    `Scope::declare` before adding a name (the `assume` entries hold whole scopes).
//! 2. A stored answer is the one the computation gives under that scope; nothing else is
//!    stored (the `assume` entry is the scope `assume` built, or its refusal).
//!
//! Constructor calls that use no facts (`add`, `sub`, `mul`, two-argument `min`/`max`,
//! small constants) are remembered per thread instead: their result depends on the handles
//! alone.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use hashbrown::HashMap;

use crate::node::Id;

/// Most entries one table keeps; past it the table starts over (a memo only saves work).
const MAX_ENTRIES: usize = 1 << 16;

/// A memo of tables `T` shared by the clones of one scope, with an id no other memo of the
/// process has.
pub(crate) struct Memo<T>(Arc<(u64, Mutex<T>)>);

/// The id of the next memo; ids are never reused.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl<T> Clone for Memo<T> {
    fn clone(&self) -> Memo<T> {
        Memo(Arc::clone(&self.0))
    }
}

impl<T: Default> Default for Memo<T> {
    fn default() -> Memo<T> {
        Memo::fresh()
    }
}

impl<T: Default> Memo<T> {
    /// A new, empty memo (for a scope whose knowledge just changed).
    pub(crate) fn fresh() -> Memo<T> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Memo(Arc::new((id, Mutex::new(T::default()))))
    }
}

impl<T> Memo<T> {
    /// The memo's id: equal ids, equal scopes (invariant 1).
    pub(crate) fn id(&self) -> u64 {
        self.0 .0
    }

    fn lock(&self) -> MutexGuard<'_, T> {
        // A panic while the lock was held cannot leave a wrong entry: entries are inserted
        // whole, after they are computed.
        self.0 .1.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The entry for `key` in the table `table` picks.
    pub(crate) fn get<K, V: Clone>(
        &self,
        table: impl FnOnce(&T) -> &HashMap<K, V>,
        key: &K,
    ) -> Option<V>
    where
        K: std::hash::Hash + Eq,
    {
        table(&self.lock()).get(key).cloned()
    }

    /// The value in the slot `slot` picks, filled by `fill` when empty. `fill` runs without
    /// the lock held, so it may ask the memo other questions.
    pub(crate) fn get_or_fill<V: Clone>(
        &self,
        slot: impl Fn(&mut T) -> &mut Option<V>,
        fill: impl FnOnce() -> V,
    ) -> V {
        if let Some(v) = slot(&mut self.lock()).clone() {
            return v;
        }
        let v = fill();
        *slot(&mut self.lock()) = Some(v.clone());
        v
    }

    /// Stores `value` for `key` in the table `table` picks.
    pub(crate) fn put<K, V>(
        &self,
        table: impl FnOnce(&mut T) -> &mut HashMap<K, V>,
        key: K,
        value: V,
    ) where
        K: std::hash::Hash + Eq,
    {
        let mut t = self.lock();
        let map = table(&mut t);
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        map.insert(key, value);
    }
}

impl<T> fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Memo")
    }
}

/// A context-free constructor call: its result depends on its arguments only (handles
/// are hash-consed and never change), so it is remembered per thread.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum OpKey {
    Add(Id, Id),
    Sub(Id, Id),
    Mul(Id, Id),
    /// `min` (true) or `max` of two expressions, without facts.
    MinMax(bool, Id, Id),
    Const(i64),
}

thread_local! {
    static OPS: std::cell::RefCell<HashMap<OpKey, Id>> =
        std::cell::RefCell::new(HashMap::new());
}

/// `f()`, or what it returned before for `key` on this thread.
pub(crate) fn op(key: OpKey, f: impl FnOnce() -> Id) -> Id {
    per_thread(&OPS, &key, MAX_ENTRIES, f)
}

/// `f()`, or what it returned before for `key` in the per-thread `table`, for answers
/// that depend on their key alone; past `limit` entries the table starts over.
pub(crate) fn per_thread<K: std::hash::Hash + Eq + Clone, V: Clone>(
    table: &'static std::thread::LocalKey<std::cell::RefCell<HashMap<K, V>>>,
    key: &K,
    limit: usize,
    f: impl FnOnce() -> V,
) -> V {
    let hit = table
        .try_with(|m| m.borrow().get(key).cloned())
        .ok()
        .flatten();
    if let Some(v) = hit {
        return v;
    }
    let v = f();
    // During thread teardown the memo may be gone; the answer stands without it.
    let _ = table.try_with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= limit {
            m.clear();
        }
        m.insert(key.clone(), v.clone());
    });
    v
}

/// Constants `SMALL_MIN..SMALL_MIN + SMALL_LEN` (the sizes, strides and bounds views use
/// most) are looked up by value.
const SMALL_MIN: i64 = -64;
const SMALL_LEN: usize = 1024 + 64;

thread_local! {
    static SMALL: std::cell::RefCell<Vec<Option<Id>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The interned constant `v` (built by `make` the first time) when it is small, `None`
/// otherwise.
pub(crate) fn small_const(v: i64, make: impl FnOnce() -> Id) -> Option<Id> {
    let i = usize::try_from(v.checked_sub(SMALL_MIN)?).ok()?;
    if i >= SMALL_LEN {
        return None;
    }
    SMALL
        .try_with(|t| {
            let mut t = t.borrow_mut();
            if t.is_empty() {
                t.resize(SMALL_LEN, None);
            }
            *t[i].get_or_insert_with(make)
        })
        .ok()
}
