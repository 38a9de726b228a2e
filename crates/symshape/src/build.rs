//! Smart constructors: every node is built here, in canonical form, simplified with the
//! ranges and congruences a `Facts` source knows.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

pub(crate) use crate::facts::{le0, poly_cong, poly_range, Facts, NoFacts};
use crate::node::{const_of, info, node, CmpKind, Id, Node, Sort};
use crate::num::Interval;
use crate::order;
pub(crate) use crate::poly::{
    add, boolean, constant, divide_mono, exact_multiple_with, factors, first_invalid, from_poly,
    mk, mono_from_factors, mul, neg, product_without, scale, sub, Poly,
};

/// Longest `min`/`max` argument list pruned pairwise by dominance.
const MAX_MIN_MAX_PRUNE: usize = 32;

fn nonzero(cx: &dyn Facts, b: Id) -> bool {
    let r = cx.range(b);
    r.is_pos() || r.is_neg()
}

/// Whether `b`'s leading term has a negative coefficient (so the divisor gets negated).
fn leading_negative(b: Id) -> bool {
    match node(b) {
        Node::Sum(ts, _) => ts.first().is_some_and(|t| t.1.is_negative()),
        Node::Const(v) => v.is_negative(),
        _ => false,
    }
}

pub(crate) fn floor_div(cx: &dyn Facts, a: Id, b: Id) -> Id {
    if let Some(i) = first_invalid(&[a, b]) {
        return i;
    }
    match const_of(b) {
        Some(c) if c.is_zero() => mk(Node::FloorDiv(a, b)),
        Some(c) if c.is_negative() => floor_div(cx, neg(a), constant(-c)),
        Some(c) if c.is_one() => a,
        Some(c) => div_const(cx, a, c),
        None => div_sym(cx, a, b),
    }
}

fn div_const(cx: &dyn Facts, a: Id, c: &BigInt) -> Id {
    if let Some(v) = const_of(a) {
        return constant(v.div_floor(c));
    }
    // a = c*q + r with |coefficients of r| < c and its constant in [0, c):
    // a // c = q + r // c.
    let (q, r) = split_const(&Poly::of(a), c, true);
    let lead = r.terms.iter().min_by(|x, y| order::cmp_mono(x.0, y.0));
    if lead.is_some_and(|t| t.1.is_negative()) {
        // A negative leading term reads better through floor(-y / c) == -ceil(y / c):
        // r // c == -((-r + c - 1) // c).
        let flipped = from_poly(r.scale(&-BigInt::one()).add(&Poly::constant(c - 1)));
        return add(from_poly(q), neg(div_const(cx, flipped, c)));
    }
    add(from_poly(q), div_rest(cx, r, c))
}

/// Splits `p = c*q + r`; coefficients of `r` are reduced toward zero when `trunc`, else
/// into `[0, c)`; the constant always into `[0, c)`.
fn split_const(p: &Poly, c: &BigInt, trunc: bool) -> (Poly, Poly) {
    let mut q = Poly::zero();
    let mut r = Poly::zero();
    for (m, k) in &p.terms {
        let (qk, rk) = if trunc {
            (k / c, k % c)
        } else {
            k.div_mod_floor(c)
        };
        q.terms.push((*m, qk));
        r.terms.push((*m, rk));
    }
    let (qc, rc) = p.c.div_mod_floor(c);
    q.c = qc;
    r.c = rc;
    q.normalize();
    r.normalize();
    (q, r)
}

/// `r // c` for `c >= 2` and `r` with coefficients in `(-c, c)` and constant in `[0, c)`.
fn div_rest(cx: &dyn Facts, r: Poly, c: &BigInt) -> Id {
    if r.terms.is_empty() {
        return constant(r.c.div_floor(c));
    }
    if let Some(k) = same_quotient(&poly_range(cx, &r), c) {
        return constant(k);
    }
    // Terms that are multiples of c by congruence divide exactly; if the rest then has a
    // fixed quotient, the result is their quotient plus that constant.
    let (exact, rest): (Vec<_>, Vec<_>) = r
        .terms
        .iter()
        .cloned()
        .partition(|(m, k)| cx.cong(*m).scale(k).divisible_by(c));
    let rest = Poly {
        terms: rest,
        c: r.c.clone(),
    };
    if !exact.is_empty() && !rest.is_zero() {
        if let Some(k) = same_quotient(&poly_range(cx, &rest), c) {
            let e = from_poly(Poly {
                terms: exact,
                c: BigInt::zero(),
            });
            return add(floor_div(cx, e, constant(c.clone())), constant(k));
        }
    }
    let g = r.content().gcd(&r.c).gcd(c);
    if g > BigInt::one() {
        let r2 = Poly {
            terms: r.terms.iter().map(|(m, k)| (*m, k / &g)).collect(),
            c: &r.c / &g,
        };
        return floor_div(cx, from_poly(r2), constant(c / &g));
    }
    // (x // c1 + k) // c == (x + k*c1) // (c1*c) for positive constants.
    if let [(m, k1)] = r.terms.as_slice() {
        if k1.is_one() {
            if let Node::FloorDiv(x, c1) = node(*m) {
                if let Some(c1) = const_of(*c1).filter(|v| v.is_positive()) {
                    let inner = add(*x, constant(&r.c * c1));
                    return floor_div(cx, inner, constant(c1 * c));
                }
            }
        }
    }
    mk(Node::FloorDiv(from_poly(r), constant(c.clone())))
}

fn same_quotient(r: &Interval, c: &BigInt) -> Option<BigInt> {
    let (lo, hi) = (r.lo.as_ref()?, r.hi.as_ref()?);
    let (a, b) = (lo.div_floor(c), hi.div_floor(c));
    (a == b).then_some(a)
}

/// Splits off the terms of `a` that are multiples of the monomial divisor `b`.
fn split_sym(a: Id, b: Id) -> Option<(Poly, Poly)> {
    let pb = Poly::of(b);
    let [(w, kw)] = pb.terms.as_slice() else {
        return None;
    };
    if !pb.c.is_zero() {
        return None;
    }
    let wf = factors(*w);
    let mut q = Poly::zero();
    let mut r = Poly::zero();
    let pa = Poly::of(a);
    r.c = pa.c.clone();
    for (m, k) in &pa.terms {
        match (divide_mono(&factors(*m), &wf), k.mod_floor(kw).is_zero()) {
            (Some(rest), true) => q.terms.push((mono_from_factors(rest), k / kw)),
            _ => r.terms.push((*m, k.clone())),
        }
    }
    if q.terms.iter().any(|t| info(t.0).sort == Sort::Invalid) {
        return None;
    }
    q.normalize();
    r.normalize();
    Some((q, r))
}

/// One step of polynomial division by a divisor of several terms: `a == q*b + r`
/// exactly, with `q` the terms of `a` that are multiples of `b`'s leading monomial (the
/// one of highest degree), divided by it. `(i*(n + 1) + j) // (n + 1)` has `q = i`,
/// `r = j`. `None` when no term divides or past a budget.
fn split_poly(a: Id, b: Id) -> Option<(Poly, Poly)> {
    let pb = Poly::of(b);
    let (lm, lk) = pb
        .terms
        .iter()
        .rev()
        .max_by_key(|t| info(t.0).degree)
        .cloned()?;
    let lf = factors(lm);
    let pa = Poly::of(a);
    let mut q = Poly::zero();
    for (m, k) in &pa.terms {
        if let (Some(rest), true) = (divide_mono(&factors(*m), &lf), k.mod_floor(&lk).is_zero()) {
            q.terms.push((mono_from_factors(rest), k / &lk));
        }
    }
    if q.terms.iter().any(|t| info(t.0).sort == Sort::Invalid) {
        return None;
    }
    q.normalize();
    if q.is_zero() {
        return None;
    }
    let qb = mul(from_poly(q.clone()), b);
    if info(qb).sort == Sort::Invalid {
        return None;
    }
    Some((q, pa.sub(&Poly::of(qb))))
}

/// `a // b` and `a % b` for a divisor of several terms, when `a == q*b + r` with
/// `0 <= r <= b - 1` is shown: `(q, r)`.
fn split_poly_exact(cx: &dyn Facts, a: Id, b: Id) -> Option<(Id, Id)> {
    if !cx.range(b).is_pos() {
        return None;
    }
    let (q, r) = split_poly(a, b)?;
    in_mod_range(cx, &r, b).then(|| (from_poly(q), from_poly(r)))
}

fn div_sym(cx: &dyn Facts, a: Id, b: Id) -> Id {
    if !nonzero(cx, b) {
        return mk(Node::FloorDiv(a, b));
    }
    if const_of(a).is_some_and(|v| v.is_zero()) {
        return a;
    }
    if leading_negative(b) {
        return floor_div(cx, neg(a), neg(b));
    }
    let Some((q, r)) = split_sym(a, b) else {
        if let Some((q, _)) = split_poly_exact(cx, a, b) {
            return q;
        }
        return mk(Node::FloorDiv(a, b));
    };
    let qn = from_poly(q);
    if r.is_zero() || (cx.range(b).is_pos() && in_mod_range(cx, &r, b)) {
        return qn;
    }
    if one_below(cx, &r, b).is_some() {
        return add(qn, constant(-BigInt::one()));
    }
    let rest = match split_divisor(cx, &r, b) {
        Some(p) => floor_div(cx, from_poly(p.quotient), p.outer),
        None => mk(Node::FloorDiv(from_poly(r), b)),
    };
    add(qn, rest)
}

/// `a == inner*quotient + remainder` with `0 <= remainder <= inner - 1`, for a monomial
/// divisor `b == inner*outer` (both at least 1), found by `split_divisor`.
struct DivisorSplit {
    quotient: Poly,
    remainder: Poly,
    inner: Id,
    outer: Id,
}

/// Splits the monomial divisor `b` at the factor its dividend `r` has in common with it
/// beyond a remainder (`r` holds no multiple of `b`: `split_sym` took those). Then
/// `r // b == quotient // outer` and `r % b == inner*(quotient % outer) + remainder`, as
/// dividing by `inner` and then by `outer` is dividing by `b`: `(64*i*s + j) // (768*s)`
/// is `i // 12` for `j` in `0..64*s`, the head index of a reshaped row-major view.
///
/// The common factor is the greatest common divisor of `b` with the terms that share a
/// factor with it, first all of them, then those sharing a symbol (a term such as `2*j`
/// may belong to the remainder). `None` when no such factor leaves a remainder shown in
/// `0..inner`.
fn split_divisor(cx: &dyn Facts, r: &Poly, b: Id) -> Option<DivisorSplit> {
    let pb = Poly::of(b);
    let [(w, kw)] = pb.terms.as_slice() else {
        return None;
    };
    if !pb.c.is_zero() || !kw.is_positive() {
        return None;
    }
    let wf = factors(*w);
    // Each term's common factor with `b`: its coefficient's gcd with `kw`, and the
    // factors of `w` it has (at the lower power).
    let common: Vec<(BigInt, Vec<(Id, u32)>)> = r
        .terms
        .iter()
        .map(|(m, k)| {
            let mf = factors(*m);
            let shared = wf
                .iter()
                .filter_map(|(f, e)| {
                    let em = mf.iter().find(|x| x.0 == *f)?.1;
                    Some((*f, em.min(*e)))
                })
                .collect();
            (k.gcd(kw), shared)
        })
        .collect();
    let all: Vec<bool> = common
        .iter()
        .map(|(g, f)| !f.is_empty() || !g.is_one())
        .collect();
    let symbolic: Vec<bool> = common.iter().map(|(_, f)| !f.is_empty()).collect();
    split_at(cx, r, kw, &wf, &common, &all)
        .or_else(|| (symbolic != all).then(|| split_at(cx, r, kw, &wf, &common, &symbolic))?)
}

/// `split_divisor` with the terms of `r` marked in `picked` in the quotient (`None` when
/// none is).
fn split_at(
    cx: &dyn Facts,
    r: &Poly,
    kw: &BigInt,
    wf: &[(Id, u32)],
    common: &[(BigInt, Vec<(Id, u32)>)],
    picked: &[bool],
) -> Option<DivisorSplit> {
    if !picked.contains(&true) {
        return None;
    }
    // The common factor of the picked terms: gcd of the coefficients, the lowest power of
    // each factor of `w`.
    let mut g = kw.clone();
    let mut gf: Vec<(Id, u32)> = wf.to_vec();
    for ((cg, cf), _) in common.iter().zip(picked).filter(|(_, p)| **p) {
        g = g.gcd(cg);
        for (f, e) in &mut gf {
            *e = cf.iter().find(|x| x.0 == *f).map_or(0, |x| x.1.min(*e));
        }
    }
    gf.retain(|x| x.1 > 0);
    if g.is_one() && gf.is_empty() {
        return None;
    }
    let outer_f: Vec<(Id, u32)> = wf
        .iter()
        .filter_map(|(f, e)| {
            let used = gf.iter().find(|x| x.0 == *f).map_or(0, |x| x.1);
            (*e > used).then_some((*f, e - used))
        })
        .collect();
    let inner_mono = mono_from_factors(gf.clone());
    let inner = scale(inner_mono, &g);
    let outer = scale(mono_from_factors(outer_f), &(kw / &g));
    if first_invalid(&[inner, outer]).is_some()
        || !cx.range(inner).is_pos()
        || !cx.range(outer).is_pos()
    {
        return None;
    }
    let mut quotient = Poly::zero();
    let mut remainder = Poly::constant(r.c.clone());
    for ((m, k), p) in r.terms.iter().zip(picked) {
        if *p {
            let rest = divide_mono(&factors(*m), &gf)?;
            quotient.terms.push((mono_from_factors(rest), k / &g));
        } else {
            remainder.terms.push((*m, k.clone()));
        }
    }
    quotient.normalize();
    remainder.normalize();
    in_mod_range(cx, &remainder, inner).then_some(DivisorSplit {
        quotient,
        remainder,
        inner,
        outer,
    })
}

/// `r + b` when `-b <= r <= -1` for a positive `b`: then `r // b == -1` and
/// `r % b == r + b` (`(n*s - 1) // s == n - 1`).
fn one_below(cx: &dyn Facts, r: &Poly, b: Id) -> Option<Poly> {
    let above = r.clone().add(&Poly::of(b));
    (cx.range(b).is_pos() && in_mod_range(cx, &above, b)).then_some(above)
}

/// `0 <= r <= b - 1`.
fn in_mod_range(cx: &dyn Facts, r: &Poly, b: Id) -> bool {
    le0(cx, &r.clone().scale(&-BigInt::one()))
        && le0(cx, &r.clone().sub(&Poly::of(b)).plus_const(1))
}

pub(crate) fn floor_mod(cx: &dyn Facts, a: Id, b: Id) -> Id {
    if let Some(i) = first_invalid(&[a, b]) {
        return i;
    }
    match const_of(b) {
        Some(c) if c.is_zero() => mk(Node::FloorMod(a, b)),
        // Python: a % -c == -((-a) % c).
        Some(c) if c.is_negative() => neg(floor_mod(cx, neg(a), constant(-c))),
        Some(c) if c.is_one() => constant(BigInt::zero()),
        Some(c) => mod_const(cx, a, c),
        None => mod_sym(cx, a, b),
    }
}

fn mod_const(cx: &dyn Facts, a: Id, c: &BigInt) -> Id {
    if let Some(v) = const_of(a) {
        return constant(v.mod_floor(c));
    }
    let (_, mut r) = split_const(&Poly::of(a), c, false);
    // Terms known to be multiples of c vanish; `x % c1` with c | c1 is `x` modulo c.
    let mut changed = false;
    let mut out = Poly::constant(r.c.clone());
    for (m, k) in std::mem::take(&mut r.terms) {
        if cx.cong(m).scale(&k).divisible_by(c) {
            changed = true;
            continue;
        }
        if let Node::FloorMod(x, c1) = node(m) {
            if const_of(*c1).is_some_and(|c1| c1.is_positive() && c1.mod_floor(c).is_zero()) {
                out = out.add(&Poly::of(*x).scale(&k));
                changed = true;
                continue;
            }
        }
        out.terms.push((m, k));
    }
    out.normalize();
    if changed {
        return floor_mod(cx, from_poly(out), constant(c.clone()));
    }
    let r = out;
    if r.terms.is_empty() {
        return constant(r.c.mod_floor(c));
    }
    if let Some(res) = poly_cong(cx, &r).residue_mod(c) {
        return constant(res);
    }
    if let Some(k) = same_quotient(&poly_range(cx, &r), c) {
        return from_poly(r.plus_const(0).add(&Poly::constant(-(k * c))));
    }
    let g = r.content().gcd(&r.c).gcd(c);
    if g > BigInt::one() {
        let r2 = Poly {
            terms: r.terms.iter().map(|(m, k)| (*m, k / &g)).collect(),
            c: &r.c / &g,
        };
        let inner = floor_mod(cx, from_poly(r2), constant(c / &g));
        return scale(inner, &g);
    }
    mk(Node::FloorMod(from_poly(r), constant(c.clone())))
}

fn mod_sym(cx: &dyn Facts, a: Id, b: Id) -> Id {
    if !nonzero(cx, b) {
        return mk(Node::FloorMod(a, b));
    }
    if leading_negative(b) {
        return neg(floor_mod(cx, neg(a), neg(b)));
    }
    let Some((_, r)) = split_sym(a, b) else {
        if let Some((_, r)) = split_poly_exact(cx, a, b) {
            return r;
        }
        return mk(Node::FloorMod(a, b));
    };
    if r.is_zero() {
        return constant(BigInt::zero());
    }
    if cx.range(b).is_pos() && in_mod_range(cx, &r, b) {
        return from_poly(r);
    }
    if let Some(above) = one_below(cx, &r, b) {
        return from_poly(above);
    }
    if let Some(p) = split_divisor(cx, &r, b) {
        let high = floor_mod(cx, from_poly(p.quotient), p.outer);
        return add(mul(p.inner, high), from_poly(p.remainder));
    }
    mk(Node::FloorMod(from_poly(r), b))
}

pub(crate) fn ceil_div(cx: &dyn Facts, a: Id, b: Id) -> Id {
    if let Some(i) = first_invalid(&[a, b]) {
        return i;
    }
    let rb = cx.range(b);
    if rb.is_pos() {
        // ceil(a / b) == (a + b - 1) // b for b >= 1.
        let num = from_poly(Poly::of(a).add(&Poly::of(b)).plus_const(-1));
        return floor_div(cx, num, b);
    }
    if rb.is_neg() {
        return ceil_div(cx, neg(a), neg(b));
    }
    mk(Node::CeilDiv(a, b))
}

/// `args` with each argument `nested` opens (a min inside a min, an and inside an and)
/// replaced by its own arguments; the first invalid argument instead, if there is one.
fn flatten(
    args: &[Id],
    nested: impl Fn(&'static Node) -> Option<&'static [Id]>,
) -> Result<Vec<Id>, Id> {
    if let Some(i) = first_invalid(args) {
        return Err(i);
    }
    let mut flat: Vec<Id> = Vec::with_capacity(args.len());
    for &a in args {
        match nested(node(a)) {
            Some(inner) => flat.extend_from_slice(inner),
            None => flat.push(a),
        }
    }
    Ok(flat)
}

pub(crate) fn min_max(cx: &dyn Facts, is_min: bool, args: &[Id]) -> Id {
    let same = |n: &'static Node| match (n, is_min) {
        (Node::Min(inner), true) | (Node::Max(inner), false) => Some(&inner[..]),
        _ => None,
    };
    flatten(args, same).map_or_else(|bad| bad, |flat| min_max_flat(cx, is_min, flat))
}

/// `min_max` of arguments none of which is itself a min (for `is_min`) or a max.
fn min_max_flat(cx: &dyn Facts, is_min: bool, mut flat: Vec<Id>) -> Id {
    flat.sort();
    flat.dedup();
    // Drop every argument that another live argument dominates (pairwise, so only for
    // argument lists of a bounded length; a longer list is kept as it is, still correct).
    let mut alive = vec![true; flat.len()];
    let n_pairs = if flat.len() <= MAX_MIN_MAX_PRUNE {
        flat.len()
    } else {
        0
    };
    for i in 0..n_pairs {
        for j in 0..n_pairs {
            if i == j || !alive[j] || !alive[i] {
                continue;
            }
            let (x, y) = (Poly::of(flat[j]), Poly::of(flat[i]));
            let d = if is_min { x.sub(&y) } else { y.sub(&x) };
            if le0(cx, &d) {
                alive[i] = false;
            }
        }
    }
    let kept: Vec<Id> = flat
        .iter()
        .zip(&alive)
        .filter(|x| *x.1)
        .map(|x| *x.0)
        .collect();
    if kept.len() == 1 {
        return kept[0];
    }
    mk_sorted(kept, if is_min { Node::Min } else { Node::Max })
}

/// The node `variant` makes of `args` in canonical (structural) order.
fn mk_sorted(mut args: Vec<Id>, variant: fn(Box<[Id]>) -> Node) -> Id {
    args.sort_by(|a, b| order::cmp(*a, *b));
    mk(variant(args.into_boxed_slice()))
}

/// `d OP 0` in canonical form, decided when the facts allow.
pub(crate) fn compare(cx: &dyn Facts, kind: CmpKind, mut d: Poly) -> Id {
    d.normalize();
    if let Some(bad) = d
        .terms
        .iter()
        .map(|t| t.0)
        .find(|&m| info(m).sort == Sort::Invalid)
    {
        return bad;
    }
    let g = d.content();
    if g > BigInt::one() {
        match kind {
            // g*x + c <= 0  <=>  x + ceil(c / g) <= 0 over the integers.
            CmpKind::Le => d.c = num_integer::Integer::div_ceil(&d.c, &g),
            _ if !d.c.mod_floor(&g).is_zero() => return boolean(kind == CmpKind::Ne),
            _ => d.c /= &g,
        }
        for t in &mut d.terms {
            t.1 /= &g;
        }
    }
    if kind != CmpKind::Le {
        let lead = d.terms.iter().min_by(|a, b| order::cmp_mono(a.0, b.0));
        if lead.is_some_and(|t| t.1.is_negative()) {
            d = d.scale(&-BigInt::one());
        }
    }
    if let Some(b) = decide(cx, kind, &d) {
        return boolean(b);
    }
    let di = from_poly(d);
    if info(di).sort == Sort::Invalid {
        return di;
    }
    mk(Node::Cmp(kind, di))
}

/// Decides `d OP 0` from the facts, `None` when neither answer was shown.
pub(crate) fn decide(cx: &dyn Facts, kind: CmpKind, d: &Poly) -> Option<bool> {
    let neg = d.clone().scale(&-BigInt::one());
    match kind {
        CmpKind::Le => {
            if le0(cx, d) {
                Some(true)
            } else if le0(cx, &neg.plus_const(1)) {
                Some(false)
            } else {
                None
            }
        }
        CmpKind::Eq | CmpKind::Ne => {
            let eq = if le0(cx, d) && le0(cx, &neg) {
                Some(true)
            } else if le0(cx, &d.clone().plus_const(1)) || le0(cx, &neg.plus_const(1)) {
                Some(false)
            } else {
                let cg = poly_cong(cx, d);
                (!cg.m.is_zero() && !cg.r.is_zero()).then_some(false)
            };
            eq.map(|b| b == (kind == CmpKind::Eq))
        }
    }
}

pub(crate) fn and_or(is_and: bool, args: &[Id]) -> Id {
    let same = |n: &'static Node| match (n, is_and) {
        (Node::And(inner), true) | (Node::Or(inner), false) => Some(&inner[..]),
        _ => None,
    };
    flatten(args, same).map_or_else(|bad| bad, |flat| and_or_flat(is_and, flat))
}

/// `and_or` of arguments none of which is itself an and (for `is_and`) or an or.
fn and_or_flat(is_and: bool, mut flat: Vec<Id>) -> Id {
    // The absorbing value decides; the neutral one disappears.
    if flat
        .iter()
        .any(|&a| matches!(node(a), Node::Bool(b) if *b != is_and))
    {
        return boolean(!is_and);
    }
    flat.retain(|&a| !matches!(node(a), Node::Bool(_)));
    flat.sort();
    flat.dedup();
    match flat.len() {
        0 => return boolean(is_and),
        1 => return flat[0],
        _ => {}
    }
    mk_sorted(flat, if is_and { Node::And } else { Node::Or })
}

pub(crate) fn not(cx: &dyn Facts, c: Id) -> Id {
    match node(c) {
        Node::Bool(b) => boolean(!b),
        Node::Cmp(CmpKind::Le, d) => compare(
            cx,
            CmpKind::Le,
            Poly::of(*d).scale(&-BigInt::one()).plus_const(1),
        ),
        Node::Cmp(CmpKind::Eq, d) => compare(cx, CmpKind::Ne, Poly::of(*d)),
        Node::Cmp(CmpKind::Ne, d) => compare(cx, CmpKind::Eq, Poly::of(*d)),
        Node::And(args) => {
            let n: Vec<Id> = args.iter().map(|&a| not(cx, a)).collect();
            and_or(false, &n)
        }
        Node::Or(args) => {
            let n: Vec<Id> = args.iter().map(|&a| not(cx, a)).collect();
            and_or(true, &n)
        }
        _ => c,
    }
}

/// `k*(x // c)` with `c | k` is `(k/c)*(x - r)` when `x % c` is known to be `r`.
pub(crate) fn exact_multiple(fx: &dyn Facts, m: Id, k: &BigInt) -> Option<Poly> {
    exact_multiple_with(&|x| fx.cong(x).into_owned(), m, k)
}
