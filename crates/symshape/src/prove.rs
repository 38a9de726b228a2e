//! Linear reasoning across atoms: a bounded Fourier-Motzkin refutation over the facts a
//! scope knows (ranges, symbolic bounds, floor-division identities, assumptions).

use hashbrown::{HashMap, HashSet};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed};

use crate::build::{self, Facts, NoFacts, Poly};
use crate::node::{const_of, node, Id, Node};

/// Most distinct monomials pulled into one refutation.
const MAX_VARS: usize = 24;
/// Most distinct factors of a product that the refutation bounds factor by factor.
const MAX_BOUNDED_FACTORS: usize = 8;
/// Most constraints alive during elimination before giving up (unknown, never wrong).
const MAX_CONSTRAINTS: usize = 400;

/// Whether `goal <= 0` follows from the ranges `fx` knows and the linear `facts`
/// (`p <= 0` each), by refuting `goal >= 1`.
pub(crate) fn le0(fx: &dyn Facts, facts: &[Poly], goal: &Poly) -> bool {
    let negated = goal.clone().scale(&-BigInt::one()).plus_const(1);
    refute_around(fx, facts, vec![negated], goal)
}

/// Whether the ranges `fx` knows and the linear `facts` contradict each other around the
/// monomials of `seed` (the facts that mention them, and transitively the facts those
/// mention): no integer binding satisfies them all.
pub(crate) fn inconsistent(fx: &dyn Facts, facts: &[Poly], seed: &Poly) -> bool {
    refute_around(fx, facts, Vec::new(), seed)
}

/// Refutes `cons` together with the facts reachable from the monomials of `seed`.
fn refute_around(fx: &dyn Facts, facts: &[Poly], mut cons: Vec<Poly>, seed: &Poly) -> bool {
    let mut used = vec![false; facts.len()];
    let mut seen: HashSet<Id> = HashSet::new();
    // Terms are visited in structural order (not interning order), so which monomials
    // fit under `MAX_VARS` is the same in every run.
    let by_structure = |p: &Poly| {
        let mut ids: Vec<Id> = p.terms.iter().map(|t| t.0).collect();
        ids.sort_by(|a, b| crate::order::cmp(*b, *a));
        ids
    };
    let mut work: Vec<Id> = by_structure(seed);
    while let Some(m) = work.pop() {
        if seen.len() >= MAX_VARS {
            break;
        }
        if !seen.insert(m) {
            continue;
        }
        let add = |p: Poly, work: &mut Vec<Id>, cons: &mut Vec<Poly>| {
            work.extend(by_structure(&p));
            cons.push(p);
        };
        cons.extend(range_facts(fx, m));
        for f in atom_facts(fx, m) {
            add(f, &mut work, &mut cons);
        }
        // A fact on a product `m*r` of more factors enters with that product's range and
        // its link to `m` only (`lo_r*m <= m*r <= hi_r*m` for `m >= 0`): the product's own
        // facts would bring in every other sub-product of it, too many variables for the
        // elimination.
        let divides = (!facts.is_empty()
            && matches!(node(m), Node::Prod(_) | Node::Sym(_))
            && fx.range(m).is_nonneg())
        .then(|| build::factors(m));
        for (i, f) in facts.iter().enumerate() {
            if used[i] {
                continue;
            }
            if f.terms.iter().any(|t| t.0 == m || extreme_of(t.0, m)) {
                used[i] = true;
                add(f.clone(), &mut work, &mut cons);
                continue;
            }
            let Some(fm) = &divides else { continue };
            let multiples: Vec<Id> = f
                .terms
                .iter()
                .map(|t| t.0)
                .filter(|a| multiple_of(*a, fm))
                .collect();
            if multiples.is_empty() {
                continue;
            }
            used[i] = true;
            for a in multiples {
                if seen.insert(a) {
                    cons.extend(range_facts(fx, a));
                    cons.extend(link_facts(fx, a, m));
                }
            }
            add(f.clone(), &mut work, &mut cons);
        }
    }
    // A monomial with one possible value is that value everywhere: substituting it keeps
    // the integer content of the others (`2*n + 3*m == 12` with `n == 1` is `3*m == 10`,
    // refuted by rounding), which eliminating it first would lose.
    let points: HashMap<Id, BigInt> = seen
        .iter()
        .filter_map(|&m| fx.range(m).as_point().map(|v| (m, v.clone())))
        .collect();
    let substitute = |p: &mut Poly| {
        if p.terms.iter().any(|(m, _)| points.contains_key(m)) {
            let mut q = Poly::constant(p.c.clone());
            for (m, k) in &p.terms {
                match points.get(m) {
                    Some(v) => q.c += k * v,
                    None => q.terms.push((*m, k.clone())),
                }
            }
            *p = q;
        }
    };
    cons.iter_mut().for_each(substitute);
    if refute_memo(cons.clone()) {
        return true;
    }
    let mut seen: Vec<Id> = seen.into_iter().collect();
    seen.sort_by(|a, b| crate::order::cmp(*a, *b));
    let mut cases = split_cases(fx, &seen);
    cases.iter_mut().flatten().for_each(substitute);
    !cases.is_empty()
        && cases.into_iter().all(|case| {
            let mut all = cons.clone();
            all.extend(case);
            refute_memo(all)
        })
}

/// The two cases of the sign of the other factors `r` of a product `m = s * r` whose
/// sign the ranges leave open, for the first symbol factor `s` with such an `r`: `r >= 0`
/// with `m` between `lo_s * r` and `hi_s * r`, and `r <= -1` with the bounds flipped.
/// None when every such `r` has a known sign (its bounds are facts already).
fn sign_cases(fx: &dyn Facts, m: Id, fs: &[(Id, u32)]) -> Vec<Vec<Poly>> {
    for (idx, (s, _)) in fs.iter().enumerate() {
        let Node::Sym(_) = node(*s) else { continue };
        let r = build::product_without(fs, idx);
        let rr = fx.range(r);
        if rr.is_nonneg() || rr.is_nonpos() {
            continue;
        }
        let pr = Poly::of(r);
        let mut nonneg = factor_bounds(m, *s, r, true);
        nonneg.push(pr.clone().scale(&-BigInt::one()));
        let mut neg = factor_bounds(m, *s, r, false);
        neg.push(pr.plus_const(1));
        return vec![nonneg, neg];
    }
    Vec::new()
}

/// Whether `a` is a minimum or maximum with an argument that mentions the monomial `m`:
/// a fact on `max(n, m)` says something about `m` once the maximum is split.
fn extreme_of(a: Id, m: Id) -> bool {
    match node(a) {
        Node::Min(args) | Node::Max(args) => args
            .iter()
            .any(|x| *x == m || Poly::of(*x).terms.iter().any(|t| t.0 == m)),
        _ => false,
    }
}

/// `lo <= a <= hi` for the range of `a`, as constraints.
fn range_facts(fx: &dyn Facts, a: Id) -> Vec<Poly> {
    let r = fx.range(a);
    let pa = Poly::of(a);
    let mut out = Vec::new();
    if let Some(lo) = &r.lo {
        out.push(Poly::constant(lo.clone()).sub(&pa));
    }
    if let Some(hi) = &r.hi {
        out.push(pa.sub(&Poly::constant(hi.clone())));
    }
    out
}

/// `lo_r*m <= a <= hi_r*m` for a product `a == m*r` (`multiple_of`) and `m >= 0`, with the
/// ends of the range of `r` that are finite.
fn link_facts(fx: &dyn Facts, a: Id, m: Id) -> Vec<Poly> {
    let Some(rest) = build::divide_mono(&build::factors(a), &build::factors(m)) else {
        return Vec::new();
    };
    let rr = fx.range(build::mono_from_factors(rest));
    let (pa, pm) = (Poly::of(a), Poly::of(m));
    let mut out = Vec::new();
    if let Some(lo) = &rr.lo {
        out.push(pm.clone().scale(lo).sub(&pa));
    }
    if let Some(hi) = &rr.hi {
        out.push(pa.sub(&pm.scale(hi)));
    }
    out
}

/// Whether `a` is a product of more factors than the factors `fm` of a monomial, with
/// every one of them among its own: a fact on `n*s*m` says something about `n*s` and `n`
/// through the bounds of the other factors (`n*s*m >= n*s` for `m >= 1`, from
/// `link_facts`).
fn multiple_of(a: Id, fm: &[(Id, u32)]) -> bool {
    let Node::Prod(fa) = node(a) else {
        return false;
    };
    fa.len() > fm.len() && fa.len() <= MAX_BOUNDED_FACTORS && build::divide_mono(fa, fm).is_some()
}

/// Most cases one refutation splits into (the product of the case counts of the atoms it
/// splits on).
const MAX_CASES: usize = 16;

/// The cases a refutation splits into over the minima, maxima and products among
/// `atoms`. A minimum is one of its arguments (the linear facts only say it is at most
/// each), so the facts are refuted when they are refuted with `min(a, b) == a` and again
/// with `min(a, b) == b`; a product `s * r` whose other factors `r` have no known sign is
/// bounded through `s` once the sign of `r` is fixed (`sign_cases`). Each case is the
/// constraints (`p <= 0`) it adds; none when no atom splits. Atoms are taken in the given
/// order while the product of their case counts stays within `MAX_CASES`.
fn split_cases(fx: &dyn Facts, atoms: &[Id]) -> Vec<Vec<Poly>> {
    let mut cases: Vec<Vec<Poly>> = vec![Vec::new()];
    for &m in atoms {
        let pins = match node(m) {
            Node::Min(args) | Node::Max(args) => {
                let is_min = matches!(node(m), Node::Min(_));
                let pm = Poly::of(m);
                // `m <= a` (`m >= a` for a maximum) is already a fact; `m == a` adds
                // the other side.
                args.iter()
                    .map(|a| {
                        let pa = Poly::of(*a);
                        vec![if is_min {
                            pa.sub(&pm)
                        } else {
                            pm.clone().sub(&pa)
                        }]
                    })
                    .collect()
            }
            Node::Prod(fs) if fs.len() <= MAX_BOUNDED_FACTORS => sign_cases(fx, m, fs),
            _ => continue,
        };
        if pins.is_empty() || cases.len() * pins.len() > MAX_CASES {
            continue;
        }
        cases = cases
            .into_iter()
            .flat_map(|case| {
                pins.iter().map(move |pin| {
                    let mut next = case.clone();
                    next.extend(pin.iter().cloned());
                    next
                })
            })
            .collect();
    }
    if cases.len() == 1 {
        cases.clear();
    }
    cases
}

/// Most refutations remembered per thread.
const MAX_REMEMBERED: usize = 1 << 14;
/// Longest constraint list whose refutation is remembered.
const MAX_REMEMBERED_CONSTRAINTS: usize = 64;

thread_local! {
    /// `refute` is a function of its constraint list alone (ids are hash-consed), so its
    /// answers are kept per thread; the same questions recur in every scope that traces
    /// the same model.
    static REFUTED: std::cell::RefCell<HashMap<Vec<Poly>, bool>> =
        std::cell::RefCell::new(HashMap::new());
}

fn refute_memo(cons: Vec<Poly>) -> bool {
    let run = |cons: &[Poly]| {
        let cons = eliminate_unit_equalities(cons);
        small::refute(&cons).unwrap_or_else(|| refute(cons))
    };
    if cons.len() > MAX_REMEMBERED_CONSTRAINTS {
        // A long list costs memory to keep and is seldom asked twice.
        return run(&cons);
    }
    crate::memo::per_thread(&REFUTED, &cons, MAX_REMEMBERED, || run(&cons))
}

/// The constraints with every equality that has a monomial of coefficient 1 or -1 solved
/// for that monomial and substituted into the others (at most `MAX_VARS` of them).
///
/// `p <= 0` and `-p <= 0` together say `p == 0`. When `p = k*x + r` with `k = ±1`, every
/// integer solution has `x = -k*r` exactly, so substituting it is an equivalence, and the
/// rounding of the elimination then sees the integer content of what remains: `3*n + m ==
/// 8` with `n - m <= 2` and `n + 3*m <= 6` becomes `4*n <= 10` and `8*n >= 18`, which
/// round to `n <= 2` and `n >= 3`. Eliminating `m` by combining inequalities instead keeps
/// only the rational content (`n` between 2.25 and 2.5) and misses the contradiction.
fn eliminate_unit_equalities(cons: &[Poly]) -> Vec<Poly> {
    let mut cons: Vec<Poly> = cons
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p.normalize();
            p
        })
        .collect();
    for _ in 0..MAX_VARS {
        let found = {
            let present: HashSet<&Poly> = cons.iter().collect();
            cons.iter().find_map(|p| {
                let (x, k) = p.terms.iter().find(|t| t.1.abs().is_one())?;
                present
                    .contains(&p.clone().scale(&-BigInt::one()))
                    .then(|| (p.clone(), *x, k.clone()))
            })
        };
        let Some((p, x, k)) = found else {
            break;
        };
        // x == -k * (p - k*x), as k*k == 1.
        let value = p.clone().sub(&Poly::of(x).scale(&k)).scale(&-&k);
        let neg = p.clone().scale(&-BigInt::one());
        cons = cons
            .into_iter()
            .filter(|q| *q != p && *q != neg)
            .map(|q| match q.terms.iter().find(|t| t.0 == x) {
                Some((_, c)) => {
                    let c = c.clone();
                    q.sub(&Poly::of(x).scale(&c)).add(&value.clone().scale(&c))
                }
                None => q,
            })
            .collect();
    }
    cons
}

/// Linear facts (`p <= 0`) that hold by the structure of the atom `m`.
fn atom_facts(fx: &dyn Facts, m: Id) -> Vec<Poly> {
    let pm = Poly::of(m);
    let mut out = Vec::new();
    match node(m) {
        Node::Sym(s) => {
            if let Some(lo) = s.lo.filter(|b| const_of(*b).is_none()) {
                out.push(Poly::of(lo).sub(&pm));
            }
            if let Some(hi) = s.hi.filter(|b| const_of(*b).is_none()) {
                out.push(pm.clone().sub(&Poly::of(hi)));
            }
        }
        // b*m <= x <= b*m + b - 1 for b >= 1.
        Node::FloorDiv(x, b) if fx.range(*b).is_pos() => {
            let bm = Poly::of(build::mul(*b, m));
            let px = Poly::of(*x);
            out.push(bm.clone().sub(&px));
            out.push(px.sub(&bm).sub(&Poly::of(*b)).plus_const(1));
        }
        Node::FloorMod(x, b) if fx.range(*b).is_pos() => {
            {
                out.push(pm.clone().sub(&Poly::of(*b)).plus_const(1));
                out.push(pm.clone().scale(&-BigInt::one()));
                // m == x - b*(x // b).
                let q = build::floor_div(&NoFacts, *x, *b);
                let e = pm
                    .clone()
                    .sub(&Poly::of(*x))
                    .add(&Poly::of(build::mul(*b, q)));
                out.push(e.clone().scale(&-BigInt::one()));
                out.push(e);
            }
        }
        // Products of more factors get no bounds: each bound costs a product of all the
        // other factors' ranges, so K factors would cost K^2 wide multiplications.
        Node::Prod(fs) if fs.len() <= MAX_BOUNDED_FACTORS => {
            // s * r between lo_s * r and hi_s * r when r has a known sign (for a power,
            // r holds the other copies: n*n >= 1*n for n >= 1).
            for (idx, (s, _)) in fs.iter().enumerate() {
                let Node::Sym(_) = node(*s) else { continue };
                let r = build::product_without(fs, idx);
                let rr = fx.range(r);
                if rr.is_nonneg() || rr.is_nonpos() {
                    out.extend(factor_bounds(m, *s, r, rr.is_nonneg()));
                }
            }
        }
        Node::Min(args) => {
            for a in args.iter() {
                out.push(pm.clone().sub(&Poly::of(*a)));
            }
        }
        Node::Max(args) => {
            for a in args.iter() {
                out.push(Poly::of(*a).sub(&pm));
            }
        }
        _ => {}
    }
    out
}

/// The bounds of the product `m = s * r` from the declared bounds of the symbol `s`,
/// for `r >= 0` (`nonneg`) or `r <= 0`: `lo_s * r <= m <= hi_s * r`, flipped for `r <= 0`.
fn factor_bounds(m: Id, s: Id, r: Id, nonneg: bool) -> Vec<Poly> {
    let Node::Sym(sd) = node(s) else {
        return Vec::new();
    };
    let pm = Poly::of(m);
    let mut out = Vec::new();
    for (b, is_hi) in [(sd.lo, false), (sd.hi, true)] {
        let Some(b) = b else { continue };
        let br = Poly::of(build::mul(b, r));
        let upper = is_hi == nonneg;
        out.push(if upper {
            pm.clone().sub(&br)
        } else {
            br.sub(&pm)
        });
    }
    out
}

enum Norm {
    Keep(Poly),
    Trivial,
    Contradiction,
}

/// Gcd tightening over the integers: `g*x + c <= 0` becomes `x + ceil(c/g) <= 0`.
fn normalize(mut p: Poly) -> Norm {
    p.normalize();
    if p.terms.is_empty() {
        return if p.c.is_positive() {
            Norm::Contradiction
        } else {
            Norm::Trivial
        };
    }
    let g = p.content();
    if g > BigInt::one() {
        for t in &mut p.terms {
            t.1 /= &g;
        }
        p.c = Integer::div_ceil(&p.c, &g);
    }
    Norm::Keep(p)
}

/// Whether the constraints (each `p <= 0`) have no rational solution.
fn refute(cons: Vec<Poly>) -> bool {
    let mut cur: HashMap<Vec<(Id, BigInt)>, BigInt> = HashMap::new();
    for p in cons {
        match normalize(p) {
            Norm::Contradiction => return true,
            Norm::Trivial => {}
            Norm::Keep(p) => insert(&mut cur, p),
        }
    }
    loop {
        let Some(v) = pick_variable(cur.keys().map(Vec::as_slice), BigInt::is_positive) else {
            return false;
        };
        let (mut pos, mut neg, mut rest) = (Vec::new(), Vec::new(), Vec::new());
        for (terms, c) in cur.drain() {
            let p = Poly { terms, c };
            match p.terms.iter().find(|t| t.0 == v).map(|t| t.1.clone()) {
                Some(k) if k.is_positive() => pos.push((p, k)),
                Some(k) => neg.push((p, -k)),
                None => rest.push(p),
            }
        }
        if rest.len() + pos.len() * neg.len() > MAX_CONSTRAINTS {
            return false;
        }
        let mut next: HashMap<Vec<(Id, BigInt)>, BigInt> = HashMap::new();
        for p in rest {
            insert(&mut next, p);
        }
        for (p, a) in &pos {
            for (n, b) in &neg {
                match normalize(p.clone().scale(b).add(&n.clone().scale(a))) {
                    Norm::Contradiction => return true,
                    Norm::Trivial => {}
                    Norm::Keep(q) => insert(&mut next, q),
                }
            }
        }
        cur = next;
    }
}

/// The monomial to eliminate next from the constraints with these left-hand sides: the one
/// whose elimination makes the fewest new constraints (positive times negative
/// occurrences). Ties go by structure, not by interning order, so the answer is the same in
/// every run even when the constraint budget cuts the elimination short.
fn pick_variable<'a, K: 'a>(
    lhs: impl Iterator<Item = &'a [(Id, K)]>,
    positive: impl Fn(&K) -> bool,
) -> Option<Id> {
    let mut counts: HashMap<Id, (usize, usize)> = HashMap::new();
    for terms in lhs {
        for (m, k) in terms {
            let e = counts.entry(*m).or_insert((0, 0));
            if positive(k) {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
    }
    counts
        .iter()
        .min_by(|(a, (pa, na)), (b, (pb, nb))| {
            (pa * na)
                .cmp(&(pb * nb))
                .then_with(|| crate::order::cmp(**a, **b))
        })
        .map(|(&v, _)| v)
}

/// Keeps the strongest constant for each left-hand side (`p <= 0` with larger `c` is stronger).
fn insert(map: &mut HashMap<Vec<(Id, BigInt)>, BigInt>, p: Poly) {
    let e = map.entry(p.terms).or_insert_with(|| p.c.clone());
    if p.c > *e {
        *e = p.c;
    }
}

/// `refute` over `i64` coefficients, with every product and sum checked: the same steps in
/// the same order, so the same answer, or `None` as soon as a number leaves `i64` (the
/// caller then runs the `BigInt` version from the start).
mod small {
    use hashbrown::HashMap;
    use num_traits::ToPrimitive;

    use super::MAX_CONSTRAINTS;
    use crate::build::Poly;
    use crate::node::{const_of, Id};

    type Terms = Vec<(Id, i64)>;

    enum Norm {
        Keep(Terms, i64),
        Trivial,
        Contradiction,
    }

    fn gcd(a: u64, b: u64) -> u64 {
        let (mut a, mut b) = (a, b);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }

    /// As `super::normalize`: merge equal monomials, drop zeros, divide by the content
    /// (rounding the constant up).
    fn normalize(mut terms: Vec<(Id, i128)>, c: i128) -> Option<Norm> {
        terms.sort_by_key(|t| t.0);
        let mut out: Vec<(Id, i128)> = Vec::with_capacity(terms.len());
        for (m, k) in terms {
            match out.last_mut() {
                Some(last) if last.0 == m => last.1 += k,
                _ => out.push((m, k)),
            }
        }
        out.retain(|t| t.1 != 0);
        if out.is_empty() {
            return Some(if c > 0 {
                Norm::Contradiction
            } else {
                Norm::Trivial
            });
        }
        let mut g: u64 = 0;
        for t in &out {
            g = gcd(g, u64::try_from(t.1.unsigned_abs()).ok()?);
        }
        let g = i128::from(g);
        let (terms, c) = if g > 1 {
            let terms = out.into_iter().map(|(m, k)| (m, k / g)).collect();
            // ceil(c / g) for g > 0.
            (terms, -((-c).div_euclid(g)))
        } else {
            (out, c)
        };
        let terms = terms
            .into_iter()
            .map(|(m, k)| Some((m, i64::try_from(k).ok()?)))
            .collect::<Option<Terms>>()?;
        Some(Norm::Keep(terms, i64::try_from(c).ok()?))
    }

    fn insert(map: &mut HashMap<Terms, i64>, terms: Terms, c: i64) {
        let e = map.entry(terms).or_insert(c);
        if c > *e {
            *e = c;
        }
    }

    pub(super) fn refute(cons: &[Poly]) -> Option<bool> {
        let mut cur: HashMap<Terms, i64> = HashMap::new();
        for p in cons {
            let mut terms = Vec::with_capacity(p.terms.len());
            for (m, k) in &p.terms {
                // A constant monomial folds into the constant: left to the BigInt path.
                if const_of(*m).is_some() {
                    return None;
                }
                terms.push((*m, i128::from(k.to_i64()?)));
            }
            match normalize(terms, i128::from(p.c.to_i64()?))? {
                Norm::Contradiction => return Some(true),
                Norm::Trivial => {}
                Norm::Keep(t, c) => insert(&mut cur, t, c),
            }
        }
        loop {
            let Some(v) = super::pick_variable(cur.keys().map(Vec::as_slice), |k: &i64| *k > 0)
            else {
                return Some(false);
            };
            let (mut pos, mut neg, mut rest) = (Vec::new(), Vec::new(), Vec::new());
            for (terms, c) in cur.drain() {
                match terms.iter().find(|t| t.0 == v).map(|t| t.1) {
                    Some(k) if k > 0 => pos.push((terms, c, i128::from(k))),
                    Some(k) => neg.push((terms, c, -i128::from(k))),
                    None => rest.push((terms, c)),
                }
            }
            if rest.len() + pos.len() * neg.len() > MAX_CONSTRAINTS {
                return Some(false);
            }
            let mut next: HashMap<Terms, i64> = HashMap::new();
            for (t, c) in rest {
                insert(&mut next, t, c);
            }
            for (p, pc, a) in &pos {
                for (n, nc, b) in &neg {
                    // p*b + n*a: i64 times i64 fits i128, and so does the sum of two.
                    let mut terms: Vec<(Id, i128)> = Vec::with_capacity(p.len() + n.len());
                    terms.extend(p.iter().map(|(m, k)| (*m, i128::from(*k) * b)));
                    terms.extend(n.iter().map(|(m, k)| (*m, i128::from(*k) * a)));
                    let c = i128::from(*pc) * b + i128::from(*nc) * a;
                    match normalize(terms, c)? {
                        Norm::Contradiction => return Some(true),
                        Norm::Trivial => {}
                        Norm::Keep(t, c) => insert(&mut next, t, c),
                    }
                }
            }
            cur = next;
        }
    }
}

#[cfg(test)]
mod tests {
    //! The `i64` refutation against the `BigInt` one, on constraint sets whose numbers
    //! range from small to near the ends of `i64` (where the `i64` path must give up).
    use num_bigint::BigInt;
    use proptest::prelude::*;

    use super::{refute, small, Poly};
    use crate::expr::SymbolSpec;
    use crate::node::Id;

    fn atoms() -> Vec<Id> {
        ["fm_a", "fm_b", "fm_c", "fm_d"]
            .iter()
            .map(|n| SymbolSpec::new(n).build().expect("symbol").0)
            .collect()
    }

    fn coef() -> impl Strategy<Value = i64> {
        prop_oneof![
            4 => -6i64..=6,
            1 => -1000i64..=1000,
            1 => prop_oneof![Just(i64::MAX), Just(i64::MIN), Just(i64::MAX / 3), Just(-(1i64 << 40))],
        ]
    }

    fn poly() -> impl Strategy<Value = (Vec<(usize, i64)>, i64)> {
        (proptest::collection::vec((0usize..4, coef()), 0..4), coef())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn small_refutation_agrees_with_bigint(cons in proptest::collection::vec(poly(), 1..8)) {
            let ids = atoms();
            let cons: Vec<Poly> = cons
                .into_iter()
                .map(|(terms, c)| Poly {
                    terms: terms.into_iter().map(|(i, k)| (ids[i], BigInt::from(k))).collect(),
                    c: BigInt::from(c),
                })
                .collect();
            if let Some(got) = small::refute(&cons) {
                prop_assert_eq!(got, refute(cons));
            }
        }
    }

    /// A contradiction the `i64` path finds: `a >= 1`, `b >= 1`, `a + b <= 1`.
    #[test]
    fn small_refutation_finds_a_contradiction() {
        let ids = atoms();
        let p = |terms: &[(usize, i64)], c: i64| Poly {
            terms: terms
                .iter()
                .map(|&(i, k)| (ids[i], BigInt::from(k)))
                .collect(),
            c: BigInt::from(c),
        };
        let cons = vec![p(&[(0, -1)], 1), p(&[(1, -1)], 1), p(&[(0, 1), (1, 1)], -1)];
        assert_eq!(small::refute(&cons), Some(true));
        assert!(refute(cons));
    }
}
