//! Sample bindings of a scope: a few admissible points (every symbol in its declared range,
//! every assumption true), found by trying the ends and the middle of each range.
//!
//! A sample where `p > 0` shows that `p <= 0` is not provable, so a proof attempt that would
//! end unknown is cut short without running the linear refutation. Samples only ever rule
//! a proof out: a scope without samples (none found, or too large to search) proves exactly
//! what it proved before.

use hashbrown::HashMap;
use num_bigint::BigInt;
use num_integer::Integer;

use crate::expr::{Cond, Expr};
use crate::node::{node, CmpKind, Id, Node, SymData};
use crate::num::Interval;
use crate::poly::Poly;

/// Most symbols a scope may declare for samples to be searched (each candidate binds all).
pub(crate) const MAX_SAMPLE_SYMBOLS: usize = 64;
/// Most assumptions a scope may hold for samples to be searched (each candidate checks all).
pub(crate) const MAX_SAMPLE_ASSUMPTIONS: usize = 64;
/// How far past its finite end an unbounded range is sampled.
const UNBOUNDED_SPAN: i128 = 1 << 12;

/// Where in its range each symbol of a candidate is put.
#[derive(Clone, Copy)]
enum Pick {
    Lo,
    Hi,
    Mid,
    Quarter,
    AboveLo,
    /// Even-numbered symbols (in declaration order) low and odd ones high, or the reverse.
    Alternate(bool),
}

const PICKS: [Pick; 7] = [
    Pick::Lo,
    Pick::Mid,
    Pick::Hi,
    Pick::AboveLo,
    Pick::Quarter,
    Pick::Alternate(false),
    Pick::Alternate(true),
];

/// Admissible bindings of a scope's symbols, by symbol id.
#[derive(Debug, Default)]
pub(crate) struct Samples(pub(crate) Vec<HashMap<Id, i64>>);

/// What a candidate needs of one symbol: its id, declared bounds, multiple, and the numeric
/// range the scope knows without proofs (a proof may consult the samples).
struct Slot<'a> {
    id: Id,
    sym: &'a SymData,
    multiple_of: i128,
    lo: Option<i128>,
    hi: Option<i128>,
}

impl Samples {
    /// The distinct admissible candidates for the symbols `symbols` (in declaration order)
    /// under `assumptions`, in `PICKS` order (at most 7); `range` gives a sound numeric range
    /// of a symbol.
    pub(crate) fn of(
        symbols: &[Expr],
        assumptions: &[Cond],
        range: &dyn Fn(Id) -> Interval,
    ) -> Samples {
        if symbols.len() > MAX_SAMPLE_SYMBOLS || assumptions.len() > MAX_SAMPLE_ASSUMPTIONS {
            return Samples::default();
        }
        let mut slots = Vec::with_capacity(symbols.len());
        for &e in symbols {
            let Node::Sym(sym) = node(e.0) else {
                return Samples::default();
            };
            let r = range(e.0);
            let Ok(multiple_of) = i128::try_from(&sym.multiple_of) else {
                return Samples::default();
            };
            slots.push(Slot {
                id: e.0,
                sym,
                multiple_of,
                lo: r.lo.as_ref().map(saturate),
                hi: r.hi.as_ref().map(saturate),
            });
        }
        let mut out: Vec<HashMap<Id, i64>> = Vec::new();
        for pick in PICKS {
            if let Some(vals) = candidate(assumptions, &slots, pick) {
                if !out.contains(&vals) {
                    out.push(vals);
                }
            }
        }
        Samples(out)
    }

    /// Whether `p > 0` under one of the samples (then `p <= 0` is not provable).
    pub(crate) fn exceed(&self, p: &Poly) -> bool {
        self.0
            .iter()
            .any(|vals| poly_value(vals, p).is_some_and(|v| v > 0))
    }
}

/// Most bindings (and partial bindings) [`admissible_exists`] visits before it gives up.
pub(crate) const MAX_VISITED_BINDINGS: usize = 1 << 12;

/// Whether some binding of `symbols` (in declaration order, each in its range, a multiple
/// of its divisor, a symbolic bound evaluated at the values already chosen) meets every
/// assumption, decided by visiting them all: `Some(false)` only when every one was visited
/// and each makes some assumption false. `None` when a range is unbounded or more than
/// `MAX_VISITED_BINDINGS` would be visited. A binding where an assumption does not evaluate
/// (a division by zero) counts as meeting it.
pub(crate) fn admissible_exists(
    symbols: &[Expr],
    assumptions: &[Cond],
    range: &dyn Fn(Id) -> Interval,
) -> Option<bool> {
    if symbols.len() > MAX_SAMPLE_SYMBOLS || assumptions.len() > MAX_SAMPLE_ASSUMPTIONS {
        return None;
    }
    let mut slots = Vec::with_capacity(symbols.len());
    for &e in symbols {
        let Node::Sym(sym) = node(e.0) else {
            return None;
        };
        let r = range(e.0);
        slots.push(Slot {
            id: e.0,
            sym,
            multiple_of: i128::try_from(&sym.multiple_of).ok()?,
            lo: Some(i128::try_from(r.lo.as_ref()?).ok()?),
            hi: Some(i128::try_from(r.hi.as_ref()?).ok()?),
        });
    }
    // The numeric ranges bound the count of bindings: a large domain is not entered.
    let mut points: usize = 1;
    for slot in &slots {
        let span = slot.hi? - slot.lo?;
        let count = if span < 0 {
            0
        } else {
            span / slot.multiple_of.max(1) + 1
        };
        points = points.saturating_mul(usize::try_from(count).ok()?);
        if points > MAX_VISITED_BINDINGS {
            return None;
        }
    }
    let mut vals = HashMap::with_capacity(slots.len());
    let mut budget = MAX_VISITED_BINDINGS;
    visit(assumptions, &slots, &mut vals, &mut budget)
}

/// Whether a binding extending `vals` over `slots` meets the assumptions (as
/// [`admissible_exists`]); `budget` counts the visits left.
fn visit(
    assumptions: &[Cond],
    slots: &[Slot<'_>],
    vals: &mut HashMap<Id, i64>,
    budget: &mut usize,
) -> Option<bool> {
    let Some((slot, rest)) = slots.split_first() else {
        return Some(assumptions.iter().all(|a| truth(vals, a.0) != Some(false)));
    };
    let at = |bound: Option<Id>, vals: &HashMap<Id, i64>| match bound {
        None => Some(None),
        Some(e) => value(vals, e).map(Some),
    };
    // A symbolic bound that does not evaluate leaves the numeric range.
    let lo = max_of(slot.lo, at(slot.sym.lo, vals).flatten());
    let hi = min_of(slot.hi, at(slot.sym.hi, vals).flatten());
    let (lo, hi) = (lo?, hi?);
    let m = slot.multiple_of.max(1);
    let mut v = Integer::div_ceil(&lo, &m).checked_mul(m)?;
    while v <= hi {
        *budget = budget.checked_sub(1)?;
        vals.insert(slot.id, i64::try_from(v).ok()?);
        if visit(assumptions, rest, vals, budget)? {
            return Some(true);
        }
        v = v.checked_add(m)?;
    }
    vals.remove(&slot.id);
    Some(false)
}

/// One candidate: symbols bound in declaration order (a symbolic bound is evaluated at the
/// values already chosen), kept only when every assumption holds at it.
fn candidate(assumptions: &[Cond], slots: &[Slot<'_>], pick: Pick) -> Option<HashMap<Id, i64>> {
    let mut vals: HashMap<Id, i64> = HashMap::with_capacity(slots.len());
    for (i, slot) in slots.iter().enumerate() {
        let at = |bound: Option<Id>| -> Option<Option<i128>> {
            match bound {
                None => Some(None),
                Some(e) => Some(Some(value(&vals, e)?)),
            }
        };
        let lo = max_of(slot.lo, at(slot.sym.lo)?);
        let hi = min_of(slot.hi, at(slot.sym.hi)?);
        let (lo, hi) = match (lo, hi) {
            (Some(l), Some(h)) => (l, h),
            (Some(l), None) => (l, l.saturating_add(UNBOUNDED_SPAN)),
            (None, Some(h)) => (h.saturating_sub(UNBOUNDED_SPAN), h),
            (None, None) => (-UNBOUNDED_SPAN, UNBOUNDED_SPAN),
        };
        if lo > hi {
            return None;
        }
        // Both ends are within `SATURATE` of 0, so the span and the picks do not overflow.
        let span = hi - lo;
        let v = match pick {
            Pick::Lo => lo,
            Pick::Hi => hi,
            Pick::Mid => lo + span / 2,
            Pick::Quarter => lo + span / 4,
            Pick::AboveLo => (lo + 1).min(hi),
            Pick::Alternate(low_first) => {
                if (i % 2 == 0) == low_first {
                    lo
                } else {
                    hi
                }
            }
        };
        let v = round_to_multiple(v, slot.multiple_of, lo, hi)?;
        vals.insert(slot.id, i64::try_from(v).ok()?);
    }
    assumptions
        .iter()
        .all(|a| truth(&vals, a.0) == Some(true))
        .then_some(vals)
}

/// Values past this (in either direction) are taken as this: no sample is that large.
const SATURATE: i128 = 1 << 100;

fn saturate(v: &BigInt) -> i128 {
    i128::try_from(v).map_or(
        if v.sign() == num_bigint::Sign::Minus {
            -SATURATE
        } else {
            SATURATE
        },
        |v| v.clamp(-SATURATE, SATURATE),
    )
}

/// `v` moved to a multiple of `m >= 1` inside `lo..=hi` (up first, then down), if there is
/// one.
fn round_to_multiple(v: i128, m: i128, lo: i128, hi: i128) -> Option<i128> {
    if m == 1 {
        return Some(v);
    }
    let up = Integer::div_ceil(&v, &m).checked_mul(m)?;
    if up <= hi {
        return Some(up);
    }
    let down = Integer::div_floor(&v, &m).checked_mul(m)?;
    (down >= lo).then_some(down)
}

fn max_of(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn min_of(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The value of `p` under `vals`, when every monomial evaluates.
fn poly_value(vals: &HashMap<Id, i64>, p: &Poly) -> Option<i128> {
    let mut acc = i128::try_from(&p.c).ok()?;
    for (m, k) in &p.terms {
        acc = acc.checked_add(i128::try_from(k).ok()?.checked_mul(value(vals, *m)?)?)?;
    }
    Some(acc)
}

/// The truth of the condition `id` under `vals`, when it evaluates.
fn truth(vals: &HashMap<Id, i64>, id: Id) -> Option<bool> {
    match node(id) {
        Node::Bool(b) => Some(*b),
        Node::Cmp(kind, d) => {
            let d = value(vals, *d)?;
            Some(match kind {
                CmpKind::Le => d <= 0,
                CmpKind::Eq => d == 0,
                CmpKind::Ne => d != 0,
            })
        }
        Node::And(args) => args
            .iter()
            .try_fold(true, |acc, a| Some(acc & truth(vals, *a)?)),
        Node::Or(args) => args
            .iter()
            .try_fold(false, |acc, a| Some(acc | truth(vals, *a)?)),
        _ => None,
    }
}

/// The value of the integer expression `id` under `vals`; `None` for a symbol not in
/// `vals`, a division by zero or an `i128` overflow.
fn value(vals: &HashMap<Id, i64>, id: Id) -> Option<i128> {
    let v = match node(id) {
        Node::Const(c) => i128::try_from(c).ok()?,
        Node::Sym(_) => i128::from(*vals.get(&id)?),
        Node::Prod(fs) => {
            let mut acc: i128 = 1;
            for (f, k) in fs.iter() {
                let x = value(vals, *f)?;
                for _ in 0..*k {
                    acc = acc.checked_mul(x)?;
                }
            }
            acc
        }
        Node::Sum(ts, c) => {
            let mut acc = i128::try_from(c).ok()?;
            for (m, k) in ts.iter() {
                acc = acc.checked_add(i128::try_from(k).ok()?.checked_mul(value(vals, *m)?)?)?;
            }
            acc
        }
        Node::FloorDiv(a, b) | Node::FloorMod(a, b) | Node::CeilDiv(a, b) => {
            let (x, y) = (value(vals, *a)?, value(vals, *b)?);
            if y == 0 || (x == i128::MIN && y == -1) {
                return None;
            }
            match node(id) {
                Node::FloorDiv(..) => Integer::div_floor(&x, &y),
                Node::FloorMod(..) => Integer::mod_floor(&x, &y),
                _ => Integer::div_ceil(&x, &y),
            }
        }
        Node::Min(args) | Node::Max(args) => {
            let vs = args
                .iter()
                .map(|a| value(vals, *a))
                .collect::<Option<Vec<_>>>()?;
            let extreme = if matches!(node(id), Node::Min(_)) {
                vs.into_iter().min()
            } else {
                vs.into_iter().max()
            };
            extreme?
        }
        _ => return None,
    };
    Some(v)
}
