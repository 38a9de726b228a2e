//! `Scope`: declared symbols, assumptions, and the questions asked under them
//! (simplify, range, prove).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use hashbrown::HashMap;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};

use crate::build::{self, Facts, Poly};
use crate::display::id_text;
use crate::expr::{check_id, CmpOp, Cond, Expr, SymbolSpec};
use crate::memo::Memo;
use crate::node::{const_of, info, node, CmpKind, Id, Node};
use crate::num::{Cong, Interval};
use crate::rebuild::Rebuild;
use crate::sample::Samples;
use crate::{parse, prove, Error};

/// Answer of a proof: holds for every admissible binding, fails for every one, or
/// neither was shown (with what was missing). Never wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// Holds for every admissible binding.
    True,
    /// Fails for every admissible binding.
    False,
    /// Neither was shown; the text says what the analysis knew.
    Unknown(String),
}

impl Proof {
    /// `Some(answer)` when decided.
    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Proof::True => Some(true),
            Proof::False => Some(false),
            Proof::Unknown(_) => None,
        }
    }

    /// Whether it was shown to hold.
    #[must_use]
    pub fn is_true(&self) -> bool {
        *self == Proof::True
    }

    /// Why it is unknown (`None` when decided).
    #[must_use]
    pub fn reason(&self) -> Option<&str> {
        match self {
            Proof::Unknown(r) => Some(r),
            _ => None,
        }
    }
}

/// Prints `true`, `false` or `unknown`; the reason is in [`Proof::reason`].
impl fmt::Display for Proof {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Proof::True => "true",
            Proof::False => "false",
            Proof::Unknown(_) => "unknown",
        })
    }
}

/// `Scope::prove(a, CmpOp::OP, b)` under a name of its own, for each `name => OP`.
macro_rules! prove_shortcuts {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        #[must_use]
        pub fn $name(&self, a: Expr, b: Expr) -> Proof {
            self.prove(a, CmpOp::$op, b)
        }
    )*};
}

/// Declared symbols (resolving names for parsing) and assumptions about them.
///
/// Handles do not depend on a scope: a scope only adds knowledge. Cloning is cheap
/// enough to fork a scope for a sub-problem.
///
/// A scope remembers what it has simplified and proven, in a memo its clones share until
/// one of them changes; the same question is answered once per [`Scope::generation`].
#[derive(Clone, Debug, Default)]
pub struct Scope {
    names: HashMap<String, Expr>,
    order: Vec<Expr>,
    assumptions: Vec<Cond>,
    /// Linear facts `p <= 0` from the assumptions, at most one per direction (the tightest;
    /// a fact a tighter one replaced is left as the trivial `0 <= 0`).
    facts: Vec<Poly>,
    /// Where the fact of each direction (its monomials and coefficients) is in `facts`.
    fact_slots: HashMap<Vec<(Id, BigInt)>, usize>,
    /// Ranges of atoms implied by single-atom assumptions.
    bounds: HashMap<Id, Interval>,
    /// Congruences of atoms implied by `x % c == r` assumptions.
    congs: HashMap<Id, Cong>,
    /// `k*m + c != 0` facts over one atom: `(m, excluded value)`, applied to the bounds
    /// of `m` whenever the excluded value is an end of its range.
    excluded: Vec<(Id, BigInt)>,
    /// `or` assumptions, which proofs split into cases.
    disjunctions: Vec<Id>,
    /// Answers computed under this knowledge, shared with clones (see `memo`).
    memo: Memo<Answers>,
}

/// What a scope remembers (`crate::memo` has the invariants).
#[derive(Default)]
struct Answers {
    /// `simplify` and `simplify_cond` results.
    simplify: HashMap<Id, Id>,
    /// `prove_cond` results.
    prove: HashMap<Id, Proof>,
    /// `prove` results, by the handles compared.
    compare: HashMap<(Id, CmpOp, Id), Proof>,
    /// Whether `p <= 0` is shown (by ranges, substitution or linear refutation).
    le0: HashMap<Poly, bool>,
    /// The scope `assume(c)` leads to (`None`: refused as a contradiction).
    assume: HashMap<Id, Option<Scope>>,
    /// The assumed conjuncts (true) and their negations (false), found on first use.
    conjuncts: Option<Arc<HashMap<Id, bool>>>,
    /// Admissible sample bindings, found on first use.
    samples: Option<Arc<Samples>>,
}

/// Most `or` assumptions one proof splits into cases (each split multiplies the work).
const MAX_SPLITS: usize = 3;
/// Most disjuncts of one `or` assumption a proof splits into.
const MAX_SPLIT_ARGS: usize = 4;

impl Scope {
    /// An empty scope.
    #[must_use]
    pub fn new() -> Scope {
        Scope::default()
    }

    /// Declares a symbol; declaring the same name again must repeat the same declaration.
    ///
    /// # Errors
    /// [`Error::Declare`] for a name declared before with another range, a bound over
    /// symbols this scope does not declare, or a range proven empty (`m + 1..=m`).
    pub fn declare(&mut self, spec: &SymbolSpec) -> Result<Expr, Error> {
        let e = spec.build()?;
        if let Some(&old) = self.names.get(spec.name()) {
            if old == e {
                return Ok(e);
            }
            let range = old
                .symbol_spec()
                .map_or_else(String::new, |s| crate::expr::describe_range(&s));
            return Err(Error::Declare {
                name: spec.name().to_string(),
                message: format!("already declared with range {range}"),
            });
        }
        for b in e.symbols() {
            if b != e && self.names.get(b.symbol_name().unwrap_or("")) != Some(&b) {
                return Err(Error::Declare {
                    name: spec.name().to_string(),
                    message: format!("bound uses `{}`, which this scope does not declare", b),
                });
            }
        }
        if let (Some(lo), Some(hi)) = (spec.lo, spec.hi) {
            if self.prove(lo, CmpOp::Le, hi) == Proof::False {
                return Err(Error::Declare {
                    name: spec.name().to_string(),
                    message: format!(
                        "the range {lo}..={hi} is empty for every value of the symbols it uses"
                    ),
                });
            }
        }
        // The memo's `assume` entries hold whole scopes, names included.
        self.memo = Memo::fresh();
        self.names.insert(spec.name().to_string(), e);
        self.order.push(e);
        Ok(e)
    }

    /// Declares a symbol from text: `NAME [LO..=HI | LO..HI] [multiple of D]`, where the
    /// bounds are expressions over earlier symbols or `-inf`/`inf`, e.g. `n 1..=4096`,
    /// `i 0..n`, `k -inf..=inf`, `b 8..=1024 multiple of 8`.
    pub fn declare_str(&mut self, text: &str) -> Result<Expr, Error> {
        let spec = self.parse_spec(text)?;
        self.declare(&spec)
    }

    fn parse_spec(&self, text: &str) -> Result<SymbolSpec, Error> {
        let text = text.trim();
        let name_len = text.find(|c: char| c.is_whitespace()).unwrap_or(text.len());
        let (name, rest) = text.split_at(name_len);
        let mut spec = SymbolSpec::new(name);
        let mut rest = rest.trim();
        let col = |s: &str| text.len() - s.len() + 1;
        if let Some(pos) = rest.find("multiple of") {
            let d = rest[pos + "multiple of".len()..].trim();
            let d: u64 = d.parse().map_err(|_| Error::Parse {
                column: col(d),
                message: format!("expected a positive integer after `multiple of`, found `{d}`"),
            })?;
            spec = spec.multiple_of(d);
            rest = rest[..pos].trim();
        }
        if rest.is_empty() {
            return Ok(spec);
        }
        let (lo, hi, inclusive) = if let Some((a, b)) = rest.split_once("..=") {
            (a, b, true)
        } else if let Some((a, b)) = rest.split_once("..") {
            (a, b, false)
        } else {
            return Err(Error::Parse {
                column: col(rest),
                message: format!("expected a range `LO..=HI`, found `{rest}`"),
            });
        };
        let bound = |s: &str, inf: &str| -> Result<Option<Expr>, Error> {
            let t = s.trim();
            if t == inf {
                return Ok(None);
            }
            self.parse_expr(t).map(Some).map_err(|e| match e {
                Error::Parse { column, message } => Error::Parse {
                    column: column + col(s) - 1,
                    message,
                },
                e => e,
            })
        };
        let lo = bound(lo, "-inf")?;
        let mut hi = bound(hi, "inf")?;
        if !inclusive {
            hi = hi.map(|h| h - 1);
        }
        Ok(spec.lo(lo).hi(hi))
    }

    /// The symbol declared as `name`.
    #[must_use]
    pub fn symbol(&self, name: &str) -> Option<Expr> {
        self.names.get(name).copied()
    }

    /// The declared symbols, in declaration order.
    #[must_use]
    pub fn symbols(&self) -> &[Expr] {
        &self.order
    }

    /// The assumptions, as given.
    #[must_use]
    pub fn assumptions(&self) -> &[Cond] {
        &self.assumptions
    }

    /// An id of this scope's state: clones share it, and a `declare` or `assume` that
    /// changes the scope gives it a new one, never used before in the process. Anything
    /// computed from a scope holds for every scope of the same generation, so callers may
    /// key their own memos by it (scopes built apart with the same declarations have
    /// different generations).
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.memo.id()
    }

    /// Parses an integer expression over the declared symbols.
    pub fn parse_expr(&self, text: &str) -> Result<Expr, Error> {
        parse::parse_expr(&|n| self.symbol(n), text)
    }

    /// Parses a condition over the declared symbols.
    pub fn parse_cond(&self, text: &str) -> Result<Cond, Error> {
        parse::parse_cond(&|n| self.symbol(n), text)
    }

    /// Adds an assumption; refused when it contradicts what is already known.
    ///
    /// A contradiction is found when the assumption simplifies to `false`, when it
    /// leaves a symbol's range empty, or when a linear combination of it with the
    /// earlier facts and the ranges is impossible over the integers (the refutation the
    /// prover runs, with its budgets): `n + m == 7` after `n - m == 2` is refused.
    /// Repeating an assumption already made changes nothing.
    ///
    /// # Errors
    /// [`Error::Contradiction`] naming the assumption; the scope is then unchanged.
    pub fn assume(&mut self, c: Cond) -> Result<(), Error> {
        check_id(c.0)?;
        if self.assumptions.contains(&c) {
            return Ok(());
        }
        let contradiction = || Error::Contradiction {
            assumption: c.to_string(),
        };
        // The same assumption on the same knowledge leads to the same scope.
        let next = match self.memo.get(|t| &t.assume, &c.0) {
            Some(next) => next,
            None => {
                let next = self.assume_uncached(c);
                self.memo.put(|t| &mut t.assume, c.0, next.clone());
                next
            }
        };
        *self = next.ok_or_else(contradiction)?;
        Ok(())
    }

    /// The scope `assume(c)` gives, `None` for a contradiction.
    fn assume_uncached(&self, c: Cond) -> Option<Scope> {
        if self.simplify_cond(c).as_bool() == Some(false) {
            return None;
        }
        let mut next = self.clone();
        next.assumptions.push(c);
        next.compact_facts();
        let facts_before = next.facts.len();
        next.absorb(c.0);
        (next.consistent(facts_before) && next.admissible_exists() != Some(false)).then_some(next)
    }

    /// Whether some binding meets every assumption, when the symbols' ranges are small
    /// enough to visit every binding (`None` otherwise): the linear refutation misses
    /// contradictions that need the integers' products (`k*k` is 4 when `k` is 2).
    fn admissible_exists(&self) -> Option<bool> {
        let fx = self.facts();
        crate::sample::admissible_exists(&self.order, &self.assumptions, &|id| {
            fx.range(id).into_owned()
        })
    }

    /// Whether no contradiction shows among the bounds, and among the linear facts from
    /// index `new_from` on together with the earlier facts they reach.
    fn consistent(&self, new_from: usize) -> bool {
        let empty = |r: &Interval| matches!((&r.lo, &r.hi), (Some(lo), Some(hi)) if lo > hi);
        if self.bounds.values().any(empty) {
            return false;
        }
        let fx = self.facts();
        self.facts[new_from..]
            .iter()
            .all(|seed| !prove::inconsistent(&fx, &self.facts, seed))
    }

    /// Parses and adds an assumption, e.g. `n % 8 == 0`.
    pub fn assume_str(&mut self, text: &str) -> Result<(), Error> {
        let c = self.parse_cond(text)?;
        // Report the text as written: parsing may already have folded it to `false`.
        self.assume(c).map_err(|e| match e {
            Error::Contradiction { .. } => Error::Contradiction {
                assumption: text.trim().to_string(),
            },
            e => e,
        })
    }

    /// Adds what `c` says to the facts; the memo starts over, as the knowledge changes.
    fn absorb(&mut self, c: Id) {
        self.memo = Memo::fresh();
        self.absorb_facts(c);
    }

    fn absorb_facts(&mut self, c: Id) {
        match node(c) {
            Node::And(args) => {
                for a in args.iter() {
                    self.absorb_facts(*a);
                }
            }
            Node::Cmp(CmpKind::Le, d) => self.add_le(Poly::of(*d)),
            Node::Cmp(CmpKind::Eq, d) => {
                let p = Poly::of(*d);
                self.add_le(p.clone());
                self.add_le(p.clone().scale(&-BigInt::from(1)));
                self.add_residue(&p);
            }
            Node::Cmp(CmpKind::Ne, d) => {
                let p = Poly::of(*d);
                if let [(m, k)] = p.terms.as_slice() {
                    if (-&p.c).mod_floor(k).is_zero() {
                        self.excluded.push((*m, -&p.c / k));
                    }
                }
            }
            Node::Or(_) => self.disjunctions.push(c),
            _ => {}
        }
        self.apply_excluded();
    }

    /// `m != v` moves an end of `m`'s range that equals `v` inward (repeated, since one
    /// move can expose another excluded end).
    fn apply_excluded(&mut self) {
        for _ in 0..=self.excluded.len() {
            let mut changed = false;
            for (m, v) in self.excluded.clone() {
                let cur = self
                    .bounds
                    .get(&m)
                    .cloned()
                    .unwrap_or_else(|| info(m).range.clone());
                let next = if cur.lo.as_ref() == Some(&v) {
                    Interval {
                        lo: Some(&v + 1),
                        hi: cur.hi.clone(),
                    }
                } else if cur.hi.as_ref() == Some(&v) {
                    Interval {
                        lo: cur.lo.clone(),
                        hi: Some(&v - 1),
                    }
                } else {
                    continue;
                };
                // Keep the facts list in step with the bounds, for linear reasoning.
                let pm = Poly::of(m);
                if let Some(lo) = &next.lo {
                    self.push_fact(Poly::constant(lo.clone()).sub(&pm));
                }
                if let Some(hi) = &next.hi {
                    self.push_fact(pm.sub(&Poly::constant(hi.clone())));
                }
                self.bounds.insert(m, next);
                changed = true;
            }
            if !changed {
                break;
            }
        }
    }

    fn add_le(&mut self, p: Poly) {
        if let [(m, k)] = p.terms.as_slice() {
            // k*m + c <= 0.
            let rhs = -&p.c;
            let b = if k.is_positive() {
                Interval {
                    lo: None,
                    hi: Some(rhs.div_floor(k)),
                }
            } else {
                Interval {
                    lo: Some(Integer::div_ceil(&rhs, k)),
                    hi: None,
                }
            };
            let cur = self
                .bounds
                .get(m)
                .cloned()
                .unwrap_or_else(|| info(*m).range.clone());
            self.bounds.insert(*m, cur.meet(&b));
        }
        self.push_fact(p);
    }

    /// Adds the linear fact `p <= 0`, in the integer form the refutation uses (`g*x + c <=
    /// 0` as `x + ceil(c/g) <= 0`), unless a fact of the same direction implies it; one it
    /// implies is replaced. So `n <= m + i` for ten thousand values of `i` is one fact, and
    /// a refutation's work does not grow with repeats of a direction.
    fn push_fact(&mut self, mut p: Poly) {
        p.normalize();
        let g = p.content();
        if g > BigInt::from(1) {
            for t in &mut p.terms {
                t.1 /= &g;
            }
            p.c = Integer::div_ceil(&p.c, &g);
        }
        if !p.terms.is_empty() {
            match self.fact_slots.get(&p.terms) {
                Some(&i) if self.facts[i].c >= p.c => return,
                Some(&i) => self.facts[i] = Poly::zero(),
                None => {}
            }
            self.fact_slots.insert(p.terms.clone(), self.facts.len());
        }
        self.facts.push(p);
    }

    /// Drops the facts tighter ones replaced, once they are half of the list.
    fn compact_facts(&mut self) {
        let replaced = self.facts.iter().filter(|p| p.is_zero()).count();
        if replaced * 2 <= self.facts.len() {
            return;
        }
        self.facts.retain(|p| !p.is_zero());
        self.fact_slots = self
            .facts
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.terms.is_empty())
            .map(|(i, p)| (p.terms.clone(), i))
            .collect();
    }

    /// `k*(x % c) + r == 0` fixes the residue of `x` modulo `c`.
    fn add_residue(&mut self, p: &Poly) {
        let [(m, k)] = p.terms.as_slice() else { return };
        let Node::FloorMod(x, c) = node(*m) else {
            return;
        };
        let Some(c) = const_of(*c).filter(|c| c.is_positive()) else {
            return;
        };
        if !(-&p.c).mod_floor(k).is_zero() {
            return;
        }
        let r = -&p.c / k;
        let cur = self
            .congs
            .get(x)
            .cloned()
            .unwrap_or_else(|| info(*x).cong.clone());
        self.congs.insert(*x, cur.meet(&Cong::new(c.clone(), r)));
    }

    pub(crate) fn linear_facts(&self) -> &[Poly] {
        &self.facts
    }

    /// A few admissible bindings (see `crate::sample`), found on first use.
    pub(crate) fn samples(&self) -> Arc<Samples> {
        self.memo.get_or_fill(
            |t| &mut t.samples,
            || {
                // The ranges known without proofs: a proof may consult the samples.
                let fx = self.facts();
                Arc::new(Samples::of(&self.order, &self.assumptions, &|id| {
                    fx.range(id).into_owned()
                }))
            },
        )
    }

    pub(crate) fn facts(&self) -> ScopeFacts<'_> {
        ScopeFacts {
            scope: self,
            cache: RefCell::new(HashMap::new()),
            congs: RefCell::new(HashMap::new()),
        }
    }

    /// `e` simplified with the ranges, congruences and assumptions of this scope.
    #[must_use]
    pub fn simplify(&self, e: Expr) -> Expr {
        Expr(self.simplify_id(e.0))
    }

    /// `simplify` and `simplify_cond` on ids, through the memo.
    fn simplify_id(&self, id: Id) -> Id {
        if matches!(node(id), Node::Const(_) | Node::Bool(_) | Node::Invalid(_)) {
            return id;
        }
        if let Some(r) = self.memo.get(|t| &t.simplify, &id) {
            return r;
        }
        let fx = self.facts();
        let r = Rebuild::new(&fx, &|_| None).run(id);
        self.memo.put(|t| &mut t.simplify, id, r);
        r
    }

    /// `c` simplified with this scope's knowledge: `true`/`false` when decided.
    #[must_use]
    pub fn simplify_cond(&self, c: Cond) -> Cond {
        Cond(self.simplify_id(c.0))
    }

    /// A sound range of `e` under this scope's assumptions.
    ///
    /// Exact for sums of independent symbols; with relational assumptions (`n <= m`,
    /// `n*m == k`) the ends are narrowed further by proofs (a binary search over
    /// `e <= v`).
    #[must_use]
    pub fn range(&self, e: Expr) -> Interval {
        let fx = self.facts();
        let s = Rebuild::new(&fx, &|_| None).run(e.0);
        let r = fx.range(s).into_owned();
        if self.facts.is_empty() || info(s).sort != crate::node::Sort::Int || r.as_point().is_some()
        {
            return r;
        }
        let p = Poly::of(s);
        let hi = narrow(&fx, &p, r.lo.as_ref(), r.hi.clone());
        let neg = p.clone().scale(&-BigInt::from(1));
        let lo = narrow(
            &fx,
            &neg,
            r.hi.as_ref().map(|h| -h).as_ref(),
            r.lo.as_ref().map(|l| -l),
        );
        let narrowed = Interval {
            lo: lo.map(|l| -l),
            hi,
        };
        match (&narrowed.lo, &narrowed.hi) {
            // Ends that cross mean facts that contradict each other in a way `assume` could
            // not show; no binding is admissible, and the range without them is still sound.
            (Some(lo), Some(hi)) if lo > hi => r,
            _ => narrowed,
        }
    }

    /// The known residue of `e` under this scope (e.g. `n ≡ 0 (mod 8)` after
    /// `assume n % 8 == 0`).
    #[must_use]
    pub fn congruence(&self, e: Expr) -> Cong {
        let fx = self.facts();
        let s = Rebuild::new(&fx, &|_| None).run(e.0);
        fx.cong(s).into_owned()
    }

    /// Whether `a OP b` holds for every admissible binding.
    #[must_use]
    pub fn prove(&self, a: Expr, op: CmpOp, b: Expr) -> Proof {
        let decided = |ord| {
            if op.holds(ord) {
                Proof::True
            } else {
                Proof::False
            }
        };
        // Equal handles and constants are decided without building the condition.
        if a == b && check_id(a.0).is_ok() {
            return decided(std::cmp::Ordering::Equal);
        }
        if let Some((x, y)) = const_of(a.0).zip(const_of(b.0)) {
            return decided(x.cmp(y));
        }
        // An expression never equals a constant outside its own range (from its symbols'
        // ranges), which assumptions only narrow: refuted without building the condition.
        if matches!(op, CmpOp::Eq | CmpOp::Ne) {
            for (x, c) in [(a, b), (b, a)] {
                if let Some(c) = const_of(c.0) {
                    if check_id(x.0).is_ok() && !info(x.0).range.contains(c) {
                        return if op == CmpOp::Eq {
                            Proof::False
                        } else {
                            Proof::True
                        };
                    }
                }
            }
        }
        let key = (a.0, op, b.0);
        if let Some(p) = self.memo.get(|t| &t.compare, &key) {
            return p;
        }
        let p = self.prove_cond(a.compare(op, b));
        self.memo.put(|t| &mut t.compare, key, p.clone());
        p
    }

    prove_shortcuts! {
        /// `a <= b`.
        prove_le => Le;
        /// `a < b`.
        prove_lt => Lt;
        /// `a == b` (semantically; handle equality is `==`).
        prove_eq => Eq;
        /// `a != b`.
        prove_ne => Ne;
    }

    /// Whether the condition holds for every admissible binding.
    #[must_use]
    pub fn prove_cond(&self, c: Cond) -> Proof {
        if let Err(e) = check_id(c.0) {
            return Proof::Unknown(e.to_string());
        }
        if let Some(p) = self.memo.get(|t| &t.prove, &c.0) {
            return p;
        }
        let p = self.prove_uncached(c);
        self.memo.put(|t| &mut t.prove, c.0, p.clone());
        p
    }

    fn prove_uncached(&self, c: Cond) -> Proof {
        let fx = self.facts();
        let s = Rebuild::new(&fx, &|_| None).run(c.0);
        match self
            .decide(&fx, s)
            .or_else(|| self.decide_by_cases(c, MAX_SPLITS))
        {
            Some(true) => Proof::True,
            Some(false) => Proof::False,
            None => Proof::Unknown(self.unknown_reason(&fx, c, s)),
        }
    }

    /// Splits on an `or` assumption: the answer holds when every disjunct gives it (a
    /// disjunct that contradicts the scope has no binding and gives any answer).
    fn decide_by_cases(&self, c: Cond, splits: usize) -> Option<bool> {
        if splits == 0 {
            return None;
        }
        let (&first, rest) = self.disjunctions.split_first()?;
        let Node::Or(args) = node(first) else {
            return None;
        };
        if args.len() > MAX_SPLIT_ARGS {
            return None;
        }
        let mut answer: Option<bool> = None;
        for &arg in args.iter() {
            if self.simplify_cond(Cond(arg)).as_bool() == Some(false) {
                continue;
            }
            let mut case = self.clone();
            case.disjunctions = rest.to_vec();
            case.absorb(arg);
            let fx = case.facts();
            let s = Rebuild::new(&fx, &|_| None).run(c.0);
            let got = case
                .decide(&fx, s)
                .or_else(|| case.decide_by_cases(c, splits - 1))?;
            if answer.is_some_and(|a| a != got) {
                return None;
            }
            answer = Some(got);
        }
        answer
    }

    /// Whether `c` (or its negation) is literally one of the assumed conjuncts: the only
    /// way a `!=` between several atoms is used, since linear reasoning cannot.
    fn known(&self, c: Id) -> Option<bool> {
        if self.assumptions.is_empty() {
            return None;
        }
        let conjuncts = self.memo.get_or_fill(
            |t| &mut t.conjuncts,
            || {
                let mut stack: Vec<Id> = self.assumptions.iter().map(|a| a.0).collect();
                let mut out = HashMap::new();
                while let Some(a) = stack.pop() {
                    match node(a) {
                        Node::And(args) => stack.extend(args.iter().copied()),
                        _ => {
                            out.insert(a, true);
                            out.entry(build::not(&build::NoFacts, a)).or_insert(false);
                        }
                    }
                }
                Arc::new(out)
            },
        );
        conjuncts.get(&c).copied()
    }

    fn decide(&self, fx: &ScopeFacts<'_>, c: Id) -> Option<bool> {
        // An assumed conjunct is asked after the linear reasoning, which decides most
        // questions without it (both answer alike in a consistent scope).
        self.decide_linear(fx, c).or_else(|| self.known(c))
    }

    fn decide_linear(&self, fx: &ScopeFacts<'_>, c: Id) -> Option<bool> {
        match node(c) {
            Node::Bool(b) => Some(*b),
            Node::Cmp(kind, d) => build::decide(fx, *kind, &Poly::of(*d)),
            Node::And(args) | Node::Or(args) => {
                // One part with the absorbing value decides; all with the neutral one too.
                let neutral = matches!(node(c), Node::And(_));
                let rs: Vec<Option<bool>> = args.iter().map(|a| self.decide(fx, *a)).collect();
                if rs.contains(&Some(!neutral)) {
                    Some(!neutral)
                } else if rs.iter().all(|r| *r == Some(neutral)) {
                    Some(neutral)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn unknown_reason(&self, fx: &ScopeFacts<'_>, c: Cond, s: Id) -> String {
        let known = match self.assumptions.len() {
            0 => "from the ranges and congruences (no assumptions)".to_string(),
            1 => "from the ranges, congruences and 1 assumption".to_string(),
            n => format!("from the ranges, congruences and {n} assumptions"),
        };
        match node(s) {
            Node::Cmp(_, d) => {
                let r = fx.range(*d);
                let missing: Vec<String> = Poly::of(*d)
                    .terms
                    .iter()
                    .filter(|t| {
                        let r = fx.range(t.0);
                        r.lo.is_none() || r.hi.is_none()
                    })
                    .map(|t| format!("`{}` is unbounded {}", id_text(t.0), side(&fx.range(t.0))))
                    .collect();
                let mut out = format!(
                    "neither `{c}` nor its negation follows {known}; `{}` ranges over {r}",
                    id_text(*d)
                );
                if !missing.is_empty() {
                    out += &format!(" and {}", missing.join(", "));
                }
                out
            }
            _ => format!("neither `{c}` nor its negation follows {known}"),
        }
    }
}

fn side(r: &Interval) -> &'static str {
    match (&r.lo, &r.hi) {
        (None, None) => "on both sides",
        (None, _) => "below",
        _ => "above",
    }
}

/// The facts of a scope, with a per-call cache of refined ranges.
pub(crate) struct ScopeFacts<'a> {
    pub scope: &'a Scope,
    cache: RefCell<HashMap<Id, Interval>>,
    /// Congruences computed so far, by atom.
    congs: RefCell<HashMap<Id, Cong>>,
}

impl Facts for ScopeFacts<'_> {
    fn range(&self, id: Id) -> Cow<'static, Interval> {
        Cow::Owned(self.range_owned(id))
    }

    fn cong(&self, id: Id) -> Cow<'static, Cong> {
        Cow::Owned(self.cong_owned(id))
    }

    fn exceeds_somewhere(&self, p: &Poly) -> bool {
        self.scope.samples().exceed(p)
    }

    fn remember_le0(&self, p: &Poly, show: &mut dyn FnMut() -> bool) -> bool {
        let memo = &self.scope.memo;
        if let Some(b) = memo.get(|t| &t.le0, p) {
            return b;
        }
        let b = show();
        memo.put(|t| &mut t.le0, p.clone(), b);
        b
    }

    fn le0_deep(&self, p: &Poly) -> bool {
        let facts = self.scope.linear_facts();
        // A refutation that used facts contradicting each other (in a way `assume` could not
        // show) would be vacuous. A sample binding shows the facts are consistent; without
        // one, the facts around `p` are refuted alone first, and a contradiction among them
        // leaves `p <= 0` unshown.
        prove::le0(self, facts, p)
            && (!self.scope.samples().0.is_empty() || !prove::inconsistent(self, facts, p))
    }
}

impl ScopeFacts<'_> {
    fn range_owned(&self, id: Id) -> Interval {
        if let Some(r) = self.cache.borrow().get(&id) {
            return r.clone();
        }
        let base = &info(id).range;
        let refined = match node(id) {
            Node::Prod(fs) => fs
                .iter()
                .fold(Interval::point(BigInt::from(1)), |acc, (a, k)| {
                    acc.mul(&self.range(*a).pow(*k))
                }),
            Node::Sum(ts, c) => ts.iter().fold(Interval::point(c.clone()), |acc, (m, k)| {
                acc.add(&self.range(*m).scale(k))
            }),
            Node::FloorDiv(a, c) => match const_of(*c) {
                Some(c) if c.is_positive() => self.range(*a).floor_div_const(c),
                _ => base.clone(),
            },
            Node::FloorMod(a, c) => {
                let ra = self.range(*a);
                match const_of(*c) {
                    Some(c) if c.is_positive() => {
                        base.meet(&crate::node::mod_range(&ra, Some(c - 1)))
                    }
                    _ => base.clone(),
                }
            }
            Node::Min(args) => args
                .iter()
                .map(|a| self.range_owned(*a))
                .reduce(|acc, r| acc.min(&r))
                .unwrap_or_else(|| base.clone()),
            Node::Max(args) => args
                .iter()
                .map(|a| self.range_owned(*a))
                .reduce(|acc, r| acc.max(&r))
                .unwrap_or_else(|| base.clone()),
            _ => base.clone(),
        };
        let mut r = refined.meet(base);
        if let Some(b) = self.scope.bounds.get(&id) {
            r = r.meet(b);
        }
        let r = r.tighten(&self.cong(id));
        self.cache.borrow_mut().insert(id, r.clone());
        r
    }

    fn cong_owned(&self, id: Id) -> Cong {
        if let Some(c) = self.congs.borrow().get(&id) {
            return c.clone();
        }
        let c = match node(id) {
            Node::Sum(ts, c) => ts.iter().fold(Cong::exact(c.clone()), |acc, (m, k)| {
                acc.add(&self.cong(*m).scale(k))
            }),
            Node::Prod(fs) => fs.iter().fold(Cong::exact(BigInt::from(1)), |acc, (a, k)| {
                acc.mul(&self.cong(*a).pow(*k))
            }),
            _ => info(id).cong.clone(),
        };
        let c = match self.scope.congs.get(&id) {
            Some(s) => c.meet(s),
            None => c,
        };
        self.congs.borrow_mut().insert(id, c.clone());
        c
    }
}

/// The smallest `v` in `[lo, hi]` with `p <= v` shown by linear reasoning, starting from
/// the known bound `hi` (an unbounded end is first probed at doubling distances).
fn narrow(
    fx: &ScopeFacts<'_>,
    p: &Poly,
    lo: Option<&BigInt>,
    hi: Option<BigInt>,
) -> Option<BigInt> {
    let facts = fx.scope.linear_facts();
    let shown = |v: &BigInt| prove::le0(fx, facts, &p.clone().add(&Poly::constant(-v)));
    let base = lo.cloned().unwrap_or_else(BigInt::zero);
    let mut hi = match hi {
        Some(h) => h,
        None => {
            let mut step = BigInt::from(1);
            let mut found = None;
            for _ in 0..64 {
                let v = &base + &step - 1;
                if shown(&v) {
                    found = Some(v);
                    break;
                }
                step *= 2;
            }
            found?
        }
    };
    let mut lo = match lo {
        Some(l) => l.clone(),
        None => {
            // Find some value that is not an upper bound, below `hi`.
            let mut step = BigInt::from(1);
            let mut v = &hi - &step;
            let mut steps = 0;
            while shown(&v) && steps < 64 {
                hi = v.clone();
                step *= 2;
                v = &hi - &step;
                steps += 1;
            }
            v
        }
    };
    // Invariant: `p <= hi` is shown; below `lo` nothing needs checking.
    for _ in 0..128 {
        if lo >= hi {
            break;
        }
        let mid = (&lo + &hi).div_floor(&BigInt::from(2));
        if shown(&mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::Scope;

    #[test]
    fn facts_of_one_direction_are_kept_once() {
        let mut cx = Scope::new();
        for spec in ["n 0..=100000", "m 0..=100000"] {
            cx.declare_str(spec).expect(spec);
        }
        // Looser facts after the first are implied by it.
        for i in 0..1000 {
            cx.assume_str(&format!("n <= m + {i}")).expect("fact");
        }
        assert_eq!(cx.facts.len(), 1);
        assert_eq!(cx.assumptions().len(), 1000);
        // Tighter ones replace it (`2*n <= 2*m - 7` is `n <= m - 4` over the integers).
        for i in 0..1000 {
            cx.assume_str(&format!("2*n <= 2*m - {}", 7 + 2 * i))
                .expect("fact");
        }
        let live: Vec<_> = cx.facts.iter().filter(|p| !p.is_zero()).collect();
        assert_eq!(live.len(), 1, "{live:?}");
        assert!(
            cx.facts.len() <= 3,
            "replaced facts are compacted: {}",
            cx.facts.len()
        );
        let d = cx.parse_expr("n - m").expect("d");
        assert_eq!(cx.range(d).hi, Some((-4 - 999).into()));
    }

    #[test]
    fn contradictory_facts_prove_nothing() {
        // Facts that contradict each other, put in place past `assume`'s check (which
        // refuses these): no binding is admissible, so there is no sample either, and a
        // proof that leans on the contradiction must not say `true`.
        let mut cx = Scope::new();
        for spec in ["n 0..=100", "m 0..=100"] {
            cx.declare_str(spec).expect(spec);
        }
        for text in ["n <= m - 1", "m <= n - 1"] {
            let c = cx.parse_cond(text).expect(text);
            cx.assumptions.push(c);
            cx.absorb(c.0);
        }
        assert!(cx.samples().0.is_empty());
        let n = cx.parse_expr("n").expect("n");
        let proof = cx.prove(n, crate::CmpOp::Le, crate::Expr::from(50));
        assert!(proof.as_bool().is_none(), "{proof:?}");
    }
}
