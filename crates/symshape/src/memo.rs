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

use crate::build::Poly;
use crate::expr::CmpOp;
use crate::node::Id;
use crate::scope::{Proof, Scope};

/// Most entries one table keeps; past it the table starts over (a memo only saves work).
const MAX_ENTRIES: usize = 1 << 16;

#[derive(Default)]
pub(crate) struct Tables {
    /// `simplify` and `simplify_cond` results.
    pub simplify: HashMap<Id, Id>,
    /// `prove_cond` results.
    pub prove: HashMap<Id, Proof>,
    /// `prove` results, by the handles compared.
    pub compare: HashMap<(Id, CmpOp, Id), Proof>,
    /// Whether the linear refutation shows `p <= 0`.
    pub le0: HashMap<Poly, bool>,
    /// The scope `assume(c)` leads to (`None`: refused as a contradiction).
    pub assume: HashMap<Id, Option<Scope>>,
}

/// A memo shared by the clones of one scope, with an id no other memo of the process has.
#[derive(Clone)]
pub(crate) struct Memo(Arc<(u64, Mutex<Tables>)>);

/// The id of the next memo; ids are never reused.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Default for Memo {
    fn default() -> Memo {
        Memo::fresh()
    }
}

impl Memo {
    /// A new, empty memo (for a scope whose knowledge just changed).
    pub(crate) fn fresh() -> Memo {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Memo(Arc::new((id, Mutex::new(Tables::default()))))
    }

    /// The memo's id: equal ids, equal scopes (invariant 1).
    pub(crate) fn id(&self) -> u64 {
        self.0 .0
    }

    fn lock(&self) -> MutexGuard<'_, Tables> {
        // A panic while the lock was held cannot leave a wrong entry: entries are inserted
        // whole, after they are computed.
        self.0 .1.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn get<K, V: Clone>(
        &self,
        table: impl FnOnce(&Tables) -> &HashMap<K, V>,
        key: &K,
    ) -> Option<V>
    where
        K: std::hash::Hash + Eq,
    {
        table(&self.lock()).get(key).cloned()
    }

    pub(crate) fn put<K, V>(
        &self,
        table: impl FnOnce(&mut Tables) -> &mut HashMap<K, V>,
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

impl fmt::Debug for Memo {
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
    let hit = OPS
        .try_with(|m| m.borrow().get(&key).copied())
        .ok()
        .flatten();
    if let Some(id) = hit {
        return id;
    }
    let id = f();
    // During thread teardown the memo may be gone; the answer stands without it.
    let _ = OPS.try_with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MAX_ENTRIES {
            m.clear();
        }
        m.insert(key, id);
    });
    id
}

/// Constants `SMALL_MIN..SMALL_MIN + SMALL_LEN` (the sizes, strides and bounds views use
/// most) are looked up by value.
const SMALL_MIN: i64 = -64;
const SMALL_LEN: usize = 1024 + 64;

thread_local! {
    static SMALL: std::cell::RefCell<Vec<Option<Id>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The interned constant `v` when it is small, `None` otherwise.
pub(crate) fn small_const(v: i64) -> Option<Id> {
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
            *t[i].get_or_insert_with(|| crate::build::constant(num_bigint::BigInt::from(v)))
        })
        .ok()
}
