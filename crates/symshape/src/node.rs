//! Hash-consed nodes: the process-wide interner behind the `Expr` and `Cond` handles.
//!
//! Representation invariants (every constructor in `build` upholds them; equality of
//! handles relies on them):
//! 1. A node is interned after its children, so ids only point to older ids and no cycle exists.
//! 2. `Const` holds every integer constant; no other integer node is constant-valued by structure.
//! 3. `Prod` has factors sorted by `order::cmp`, distinct atoms, exponents >= 1, total degree >= 2.
//! 4. `Sum` has >= 1 term, terms sorted by `order::cmp_mono`, distinct monomials (atoms or
//!    `Prod`s), nonzero coefficients, and is never a lone monomial with coefficient 1 and
//!    constant 0.
//! 5. `FloorDiv`/`FloorMod` with a constant divisor have a divisor >= 2; `Min`/`Max`/`And`/`Or`
//!    have >= 2 sorted, distinct, non-nested arguments; `Not` never exists (negation is pushed
//!    into comparisons).
//! 6. `Cmp` holds a difference `d` compared with zero, reduced by the gcd of its coefficients;
//!    for `Eq`/`Ne` the first term has a positive coefficient.

use std::cell::RefCell;
use std::sync::{LazyLock, RwLock};

use hashbrown::HashMap;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

use crate::num::{Cong, Interval};

/// Interned id of a node. Only the interner creates ids, so every id is in bounds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub(crate) struct Id(pub(crate) u32);

/// Comparison of a difference `d` with zero.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub(crate) enum CmpKind {
    /// `d <= 0`
    Le,
    /// `d == 0`
    Eq,
    /// `d != 0`
    Ne,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct SymData {
    pub name: Box<str>,
    /// Lower bound expression, `None` for unbounded.
    pub lo: Option<Id>,
    /// Upper bound expression, `None` for unbounded.
    pub hi: Option<Id>,
    /// The value is a multiple of this (>= 1).
    pub multiple_of: BigInt,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Node {
    Const(BigInt),
    Sym(SymData),
    Prod(Box<[(Id, u32)]>),
    Sum(Box<[(Id, BigInt)]>, BigInt),
    FloorDiv(Id, Id),
    FloorMod(Id, Id),
    CeilDiv(Id, Id),
    Min(Box<[Id]>),
    Max(Box<[Id]>),
    Bool(bool),
    Cmp(CmpKind, Id),
    And(Box<[Id]>),
    Or(Box<[Id]>),
    /// A budget error, propagated by every operation (see the crate docs on limits).
    Invalid(Box<str>),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Sort {
    Int,
    Bool,
    Invalid,
}

#[derive(Debug)]
pub(crate) struct Info {
    pub range: Interval,
    pub cong: Cong,
    pub depth: u32,
    pub sort: Sort,
    pub degree: u32,
}

#[derive(Debug)]
pub(crate) struct Entry {
    pub node: Node,
    pub info: Info,
}

struct Tables {
    entries: Vec<&'static Entry>,
    dedup: HashMap<&'static Node, Id>,
    bytes: usize,
}

static TABLES: LazyLock<RwLock<Tables>> = LazyLock::new(|| {
    let full: &'static Entry = Box::leak(Box::new(Entry {
        node: Node::Invalid("limit: the expression interner is full".into()),
        info: Info {
            range: Interval::full(),
            cong: Cong::unknown(),
            depth: 1,
            sort: Sort::Invalid,
            degree: 1,
        },
    }));
    let mut dedup = HashMap::new();
    dedup.insert(&full.node, Id(0));
    RwLock::new(Tables {
        entries: vec![full],
        dedup,
        bytes: 0,
    })
});

thread_local! {
    // Per-thread copy of the (append-only) entry table: reads need no lock or atomic.
    static LOCAL: RefCell<Vec<&'static Entry>> = const { RefCell::new(Vec::new()) };
}

fn read_tables() -> std::sync::RwLockReadGuard<'static, Tables> {
    TABLES.read().unwrap_or_else(|e| e.into_inner())
}

fn global_entry(id: Id) -> &'static Entry {
    let t = read_tables();
    let i = id.0 as usize;
    t.entries.get(i).copied().unwrap_or(t.entries[0])
}

/// The entry behind an id.
pub(crate) fn entry(id: Id) -> &'static Entry {
    let i = id.0 as usize;
    LOCAL
        .try_with(|l| {
            if let Some(e) = l.borrow().get(i) {
                return *e;
            }
            let t = read_tables();
            let mut l = l.borrow_mut();
            let have = l.len();
            l.extend_from_slice(t.entries.get(have..).unwrap_or(&[]));
            l.get(i).copied().unwrap_or(t.entries[0])
        })
        .unwrap_or_else(|_| global_entry(id))
}

pub(crate) fn node(id: Id) -> &'static Node {
    &entry(id).node
}

pub(crate) fn info(id: Id) -> &'static Info {
    &entry(id).info
}

/// Interns `node`, returning the one id for its structure.
pub(crate) fn intern(node: Node) -> Id {
    if let Some(&id) = read_tables().dedup.get(&node) {
        return id;
    }
    let info = compute_info(&node);
    let bytes = approx_bytes(&node);
    let mut t = TABLES.write().unwrap_or_else(|e| e.into_inner());
    if let Some(&id) = t.dedup.get(&node) {
        return id;
    }
    let Ok(raw) = u32::try_from(t.entries.len()) else {
        return Id(0);
    };
    let e: &'static Entry = Box::leak(Box::new(Entry { node, info }));
    let id = Id(raw);
    t.dedup.insert(&e.node, id);
    t.entries.push(e);
    t.bytes += bytes;
    id
}

fn approx_bytes(node: &Node) -> usize {
    let big = |b: &BigInt| b.bits().div_ceil(8) as usize;
    let base = std::mem::size_of::<Entry>() + 2 * std::mem::size_of::<usize>();
    base + match node {
        Node::Const(v) => big(v),
        Node::Sym(s) => s.name.len() + big(&s.multiple_of),
        Node::Prod(f) => f.len() * 8,
        Node::Sum(t, c) => t.iter().map(|(_, k)| 8 + big(k)).sum::<usize>() + big(c),
        Node::Min(a) | Node::Max(a) | Node::And(a) | Node::Or(a) => a.len() * 4,
        Node::Invalid(m) => m.len(),
        _ => 0,
    }
}

/// Observed size of the process-wide interner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InternerStats {
    /// Number of distinct nodes ever interned.
    pub nodes: usize,
    /// Approximate heap bytes held by those nodes and the dedup table.
    pub approx_bytes: usize,
}

/// Size of the process-wide interner: nodes are never freed, so this only grows, by one
/// node per distinct (sub)expression ever built.
#[must_use]
pub fn stats() -> InternerStats {
    let t = read_tables();
    InternerStats {
        nodes: t.entries.len(),
        approx_bytes: t.bytes,
    }
}

pub(crate) fn const_of(id: Id) -> Option<&'static BigInt> {
    match node(id) {
        Node::Const(v) => Some(v),
        _ => None,
    }
}

fn compute_info(node: &Node) -> Info {
    let child_depth =
        |ids: &mut dyn Iterator<Item = Id>| ids.map(|c| info(c).depth).max().unwrap_or(0);
    let (range, cong, depth, sort, degree) = match node {
        Node::Const(v) => (
            Interval::point(v.clone()),
            Cong::exact(v.clone()),
            1,
            Sort::Int,
            0,
        ),
        Node::Sym(s) => {
            let lo = s.lo.map_or(Interval::full(), |b| info(b).range.clone());
            let hi = s.hi.map_or(Interval::full(), |b| info(b).range.clone());
            let cong = Cong::new(s.multiple_of.clone(), BigInt::zero());
            let range = Interval {
                lo: lo.lo,
                hi: hi.hi,
            }
            .tighten(&cong);
            let d = child_depth(&mut s.lo.iter().chain(s.hi.iter()).copied());
            (range, cong, d + 1, Sort::Int, 1)
        }
        Node::Prod(fs) => {
            let mut r = Interval::point(BigInt::one());
            let mut c = Cong::exact(BigInt::one());
            for &(a, k) in fs.iter() {
                r = r.mul(&info(a).range.pow(k));
                c = c.mul(&info(a).cong.pow(k));
            }
            let deg = fs.iter().map(|f| f.1).fold(0u32, u32::saturating_add);
            (
                r.tighten(&c),
                c,
                child_depth(&mut fs.iter().map(|f| f.0)) + 1,
                Sort::Int,
                deg,
            )
        }
        Node::Sum(ts, k) => {
            let mut r = Interval::point(k.clone());
            let mut c = Cong::exact(k.clone());
            for (m, coef) in ts.iter() {
                r = r.add(&info(*m).range.scale(coef));
                c = c.add(&info(*m).cong.scale(coef));
            }
            let deg = ts.iter().map(|t| info(t.0).degree).max().unwrap_or(0);
            (
                r.tighten(&c),
                c,
                child_depth(&mut ts.iter().map(|t| t.0)) + 1,
                Sort::Int,
                deg,
            )
        }
        Node::FloorDiv(a, b) => {
            let (r, c) = floor_div_info(*a, *b);
            (
                r.tighten(&c),
                c,
                child_depth(&mut [*a, *b].into_iter()) + 1,
                Sort::Int,
                1,
            )
        }
        Node::FloorMod(a, b) => {
            let (r, c) = floor_mod_info(*a, *b);
            (
                r.tighten(&c),
                c,
                child_depth(&mut [*a, *b].into_iter()) + 1,
                Sort::Int,
                1,
            )
        }
        Node::CeilDiv(a, b) => {
            let (r, _) = floor_div_info(*a, *b);
            // ceil(a / b) lies within one of floor(a / b).
            let r = Interval::new(
                r.lo_ext(),
                r.hi_ext().add(&crate::num::Ext::Fin(BigInt::one())),
            );
            (
                r,
                Cong::unknown(),
                child_depth(&mut [*a, *b].into_iter()) + 1,
                Sort::Int,
                1,
            )
        }
        Node::Min(args) | Node::Max(args) => {
            let is_min = matches!(node, Node::Min(_));
            let mut it = args.iter();
            let first = it
                .next()
                .map(|&a| (info(a).range.clone(), info(a).cong.clone()));
            let (mut r, mut c) = first.unwrap_or((Interval::full(), Cong::unknown()));
            for &a in it {
                r = if is_min {
                    r.min(&info(a).range)
                } else {
                    r.max(&info(a).range)
                };
                c = c.join(&info(a).cong);
            }
            (
                r.tighten(&c),
                c,
                child_depth(&mut args.iter().copied()) + 1,
                Sort::Int,
                1,
            )
        }
        Node::Bool(_) => (Interval::full(), Cong::unknown(), 1, Sort::Bool, 0),
        Node::Cmp(_, d) => (
            Interval::full(),
            Cong::unknown(),
            info(*d).depth + 1,
            Sort::Bool,
            0,
        ),
        Node::And(args) | Node::Or(args) => (
            Interval::full(),
            Cong::unknown(),
            child_depth(&mut args.iter().copied()) + 1,
            Sort::Bool,
            0,
        ),
        Node::Invalid(_) => (Interval::full(), Cong::unknown(), 1, Sort::Invalid, 1),
    };
    Info {
        range,
        cong,
        depth,
        sort,
        degree,
    }
}

/// The ranges of `a` and `b`, the congruence of `a`, and `b` when it is a positive
/// constant: what the range and congruence of `a // b` and `a % b` start from.
fn division_operands(
    a: Id,
    b: Id,
) -> (
    &'static Interval,
    &'static Interval,
    &'static Cong,
    Option<&'static BigInt>,
) {
    let c = const_of(b).filter(|c| c.is_positive());
    (&info(a).range, &info(b).range, &info(a).cong, c)
}

fn floor_div_info(a: Id, b: Id) -> (Interval, Cong) {
    let (ra, rb, ca, divisor) = division_operands(a, b);
    if let Some(c) = divisor {
        let cong = if ca.m.is_zero() {
            Cong::exact(ca.r.div_floor(c))
        } else if ca.m.mod_floor(c).is_zero() {
            Cong::new(&ca.m / c, ca.r.div_floor(c))
        } else {
            Cong::unknown()
        };
        return (ra.floor_div_const(c), cong);
    }
    if rb.is_pos() {
        return (ra.floor_div_pos(rb), Cong::unknown());
    }
    if rb.is_neg() {
        return (ra.neg().floor_div_pos(&rb.neg()), Cong::unknown());
    }
    // Any nonzero divisor: |a // b| <= |a|.
    let r = match ra.abs_max() {
        Some(m) => Interval {
            lo: Some(-m.clone()),
            hi: Some(m),
        },
        None => Interval::full(),
    };
    (r, Cong::unknown())
}

fn floor_mod_info(a: Id, b: Id) -> (Interval, Cong) {
    let (ra, rb, ca, divisor) = division_operands(a, b);
    if let Some(c) = divisor {
        let g = ca.m.gcd(c);
        let cong = if g.is_zero() {
            Cong::unknown()
        } else {
            Cong::new(g, ca.r.clone())
        };
        return (mod_range(ra, Some(c - 1)), cong);
    }
    if rb.is_pos() {
        return (
            mod_range(ra, rb.hi.as_ref().map(|h| h - 1)),
            Cong::unknown(),
        );
    }
    if rb.is_neg() {
        let lo = rb.lo.as_ref().map(|l| l + 1);
        return (
            Interval {
                lo,
                hi: Some(BigInt::zero()),
            },
            Cong::unknown(),
        );
    }
    // |a % b| < |b|; a divisor that is always zero leaves no admissible value.
    let r = match rb.abs_max() {
        Some(m) if m.is_positive() => Interval {
            lo: Some(1 - m.clone()),
            hi: Some(m - 1),
        },
        _ => Interval::full(),
    };
    (r, Cong::unknown())
}

/// Range of `a % b` for `b >= 1` with `b - 1 <= hi`: `[0, hi]`, and at most `a` when
/// `a >= 0`.
pub(crate) fn mod_range(ra: &Interval, hi: Option<BigInt>) -> Interval {
    let mut hi = hi;
    if ra.is_nonneg() {
        hi = match (hi, &ra.hi) {
            (Some(h), Some(a)) => Some(h.min(a.clone())),
            (None, a) => a.clone(),
            (h, None) => h,
        };
    }
    Interval {
        lo: Some(BigInt::zero()),
        hi,
    }
}
