//! What the constructors may assume about atoms ([`Facts`]), and the cheap bounds they
//! derive from it: ranges and congruences of polynomials, and `p <= 0` by substituting
//! the bounds of atoms.

use std::borrow::Cow;

use hashbrown::HashMap;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};

use crate::node::{const_of, info, node, Id, Node};
use crate::num::{Cong, Interval};
use crate::poly::{from_poly, mul, product_without, Poly};

/// What the constructors may assume about atoms beyond their own ranges.
pub(crate) trait Facts {
    /// A sound range of `id` (defaults to the context-free range stored in the node,
    /// borrowed: this is the hot path of every constructor).
    fn range(&self, id: Id) -> Cow<'static, Interval> {
        Cow::Borrowed(&info(id).range)
    }
    /// A sound congruence of `id`.
    fn cong(&self, id: Id) -> Cow<'static, Cong> {
        Cow::Borrowed(&info(id).cong)
    }
    /// Extra, possibly expensive, proof that `p <= 0` (false when not shown).
    fn le0_deep(&self, _p: &Poly) -> bool {
        false
    }
    /// Whether `p > 0` at some admissible binding this knows of (then `p <= 0` cannot be
    /// shown, and no proof is attempted).
    fn exceeds_somewhere(&self, _p: &Poly) -> bool {
        false
    }
    /// `show()`, the answer to whether `p <= 0` is shown, or the answer given before for
    /// `p` under the same facts.
    fn remember_le0(&self, _p: &Poly, show: &mut dyn FnMut() -> bool) -> bool {
        show()
    }
}

/// Only the ranges and congruences built into the nodes: used by the operators.
pub(crate) struct NoFacts;

impl Facts for NoFacts {}

/// Range of a polynomial from its monomials' ranges (exact for independent atoms).
pub(crate) fn poly_range(cx: &dyn Facts, p: &Poly) -> Interval {
    poly_interval(cx, p).tighten(&poly_cong(cx, p))
}

/// Like `poly_range` without the congruence rounding (cheaper).
fn poly_interval(cx: &dyn Facts, p: &Poly) -> Interval {
    let mut r = Interval::point(p.c.clone());
    for (m, k) in &p.terms {
        r = r.add(&cx.range(*m).scale(k));
    }
    r
}

pub(crate) fn poly_cong(cx: &dyn Facts, p: &Poly) -> Cong {
    let mut c = Cong::exact(p.c.clone());
    for (m, k) in &p.terms {
        c = c.add(&cx.cong(*m).scale(k));
    }
    c
}

/// Whether `p <= 0` for every admissible binding (false when not shown).
pub(crate) fn le0(cx: &dyn Facts, p: &Poly) -> bool {
    let r = poly_interval(cx, p);
    if r.lo.as_ref().is_some_and(|lo| lo.is_positive()) {
        // Positive everywhere: nothing to show.
        return false;
    }
    if le0_by_range(cx, p, &r) {
        return true;
    }
    cx.remember_le0(p, &mut || {
        if cx.exceeds_somewhere(p) {
            return false;
        }
        let mut budget = MAX_SUBSTITUTIONS;
        let bounded = match le0_by_every_bound(cx, p) {
            Ok(()) => return true,
            Err(last) => last,
        };
        // The elimination on `p`, then on the bound the rounds reached: its fewer atoms
        // may meet the scope's facts (`i*s + j <= 2^31 - 2` for `i` in `0..n`, `j` in
        // `0..s`, from `n*s*m <= 2^31 - 1`: the rounds leave `n*s - 2^31 + 1`).
        le0_rec(cx, p, 3, &mut budget) || cx.le0_deep(p) || bounded.is_some_and(|b| cx.le0_deep(&b))
    })
}

/// Most rounds of [`le0_by_every_bound`].
const MAX_BOUND_ROUNDS: u32 = 16;

/// Whether `p <= 0` is shown by replacing atoms by their bounds, many at once, round after
/// round.
///
/// Each replacement can only increase `p` (`every_bound_upper`), so their sum does too:
/// the rounds bound `p` from above. A round replaces the atoms deepest in the chains of
/// symbol bounds (`bound_depth`) and leaves the others for later: a symbol's bound may
/// bring back one of them (in `1024*p + 1024*(i // 128)` with `i` in `0..128*s` and `s`
/// in `1..=t - p`, `i // 128` goes to `s - 1`, then `s` to `t - p`, which cancels `p`;
/// replacing `p` first would lose that). This is what a row-major flat index needs,
/// whatever its rank: every index at its bound, in one round, makes
/// `i0*s1*s2*s3 + i1*s2*s3 + i2*s3 + i3 - s0*s1*s2*s3` telescope to `-1`, where
/// replacing one atom at a time (`le0_rec`) would need a search as deep as the rank. The
/// search stays for what needs some atoms replaced and not others. A round is linear in
/// the terms of `p` (at most `MAX_BOUND_TERMS`).
///
/// `Err` holds the last bound of the first pass when the rounds did not show `p <= 0`
/// (`None` when no atom of `p` had a bound).
fn le0_by_every_bound(cx: &dyn Facts, p: &Poly) -> Result<(), Option<Poly>> {
    let mut quotient_met = false;
    let last = le0_by_bounds_preferring(cx, p, Prefer::RangeEnd, &mut quotient_met);
    if last.is_ok() || !quotient_met {
        return last;
    }
    le0_by_bounds_preferring(cx, p, Prefer::Dividend, &mut false).or(last)
}

/// Which bound of a quotient factor `x // c` of a product `le0_by_every_bound` prefers:
/// the end of the quotient's range keeps the product tight where `x` is bounded by
/// constants (`64*s*(i // 64) <= 704*s` for `i` in `0..768`, against `s*i <= 767*s`), the
/// dividend keeps its relation to the other terms (`2*c*((h + 1) // 2) <= c*h + c`
/// cancels a `-c*h`). One pass with each, the second only when the first met such a
/// factor.
#[derive(Clone, Copy)]
enum Prefer {
    RangeEnd,
    Dividend,
}

/// `le0_by_every_bound` with one preference; sets `quotient_met` when a product had a
/// quotient factor bounded by its dividend. `Err` holds the last bound reached.
fn le0_by_bounds_preferring(
    cx: &dyn Facts,
    p: &Poly,
    prefer: Prefer,
    quotient_met: &mut bool,
) -> Result<(), Option<Poly>> {
    let mut last: Option<Poly> = None;
    for _ in 0..MAX_BOUND_ROUNDS {
        let current = last.as_ref().unwrap_or(p);
        let bounds: Vec<Option<(Poly, u32)>> = current
            .terms
            .iter()
            .map(|(m, k)| every_bound_upper(*m, k, prefer, quotient_met))
            .collect();
        let Some(deepest) = bounds.iter().flatten().map(|b| b.1).max() else {
            break;
        };
        let mut next = Poly::constant(current.c.clone());
        for ((m, k), bound) in current.terms.iter().zip(bounds) {
            match bound {
                Some((u, depth)) if depth == deepest => {
                    next.terms.extend(u.terms);
                    next.c += u.c;
                }
                _ => next.terms.push((*m, k.clone())),
            }
        }
        next.normalize();
        if next.terms.len() > MAX_BOUND_TERMS {
            break;
        }
        if le0_by_range(cx, &next, &poly_interval(cx, &next)) {
            return Ok(());
        }
        last = Some(next);
    }
    Err(last)
}

/// How deep `id` reaches into chains of symbol bounds: 0 for a constant, one more than
/// its bounds' depth for a symbol (`s` in `1..=64` is 1, `i` in `0..s` is 2), the deepest
/// of its children otherwise. A symbol's bounds mention only symbols declared before it,
/// so replacing the deepest atoms first never brings back one already replaced.
fn bound_depth(id: Id) -> u32 {
    // Memoized: shared sub-expressions are visited once.
    fn depth(id: Id, memo: &mut HashMap<Id, u32>) -> u32 {
        if let Some(d) = memo.get(&id) {
            return *d;
        }
        let children = crate::visit::children(id);
        let below = children
            .into_iter()
            .map(|c| depth(c, memo))
            .max()
            .unwrap_or(0);
        let d = below + u32::from(matches!(node(id), Node::Sym(_)));
        memo.insert(id, d);
        d
    }
    depth(id, &mut HashMap::new())
}

/// Most terms a round of [`le0_by_every_bound`] may leave (bounds that are sums multiply
/// the terms of the products they replace a factor of).
const MAX_BOUND_TERMS: usize = 64;

/// Whether the range `r` of `p` (rounded by the congruence of `p`) shows `p <= 0`.
fn le0_by_range(cx: &dyn Facts, p: &Poly, r: &Interval) -> bool {
    if r.is_nonpos() {
        return true;
    }
    // Rounding moves the upper end down by less than the modulus, so it can only help a
    // finite upper end of a range that reaches 0 or below.
    let reaches_nonpos = r.lo.as_ref().is_none_or(|lo| !lo.is_positive());
    r.hi.is_some() && reaches_nonpos && r.tighten(&poly_cong(cx, p)).is_nonpos()
}

/// Most bound substitutions one `le0` question may try (keeps wide sums fast).
const MAX_SUBSTITUTIONS: u32 = 64;

fn le0_rec(cx: &dyn Facts, p: &Poly, fuel: u32, budget: &mut u32) -> bool {
    // Every range check counts against the budget, the last level's too: each costs the
    // length of `p`, and a level tries a substitution per term.
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    if le0_by_range(cx, p, &poly_interval(cx, p)) {
        return true;
    }
    if fuel == 0 {
        return false;
    }
    // Replace one linear atom by a bound in the direction that can only increase `p`.
    for (i, (m, k)) in p.terms.iter().enumerate() {
        for bound in atom_upper(*m, k) {
            if *budget == 0 {
                return false;
            }
            let mut rest = p.clone();
            rest.terms.remove(i);
            if le0_rec(cx, &rest.add(&bound), fuel - 1, budget) {
                return true;
            }
        }
    }
    false
}

/// A symbolic bound of the atom `f`: an expression `b` with `f <= b` (`upper`) or `f >= b`
/// for every admissible binding. A symbol's declared bound; for `x // d` (`d >= 1`, `x` a
/// symbol) the bound of `x` divided by `d` when that is a polynomial (floor division is
/// monotone: `i // 64 <= (64*s - 1) // 64 == s - 1` for `i` in `0..64*s`,
/// `i // s <= (n*s - 1) // s == n - 1` for `i` in `0..n*s`); `w - 1` above `x % w` for a
/// positive `w` that is not a constant. `None` for a constant bound (the range has it
/// already) or any other atom.
fn symbolic_bound(f: Id, upper: bool) -> Option<Id> {
    match node(f) {
        Node::Sym(_) => declared_bound(f, upper),
        Node::FloorDiv(x, d) if info(*d).range.is_pos() => {
            // `b // d` is `q` for `b == d*q`, and `q - 1` for `b == d*q - 1` (upper only).
            let b = Poly::of(declared_bound(*x, upper)?);
            let below = |b: Poly| Some(from_poly(b.plus_const(1).divide_exact(*d)?.plus_const(-1)));
            let q = b.divide_exact(*d).map(from_poly);
            if upper {
                q.or_else(|| below(b))
            } else {
                q
            }
        }
        // `x % w <= w - 1` for a positive `w` that is not a constant.
        Node::FloorMod(_, w) if upper && const_of(*w).is_none() && info(*w).range.is_pos() => {
            Some(from_poly(Poly::of(*w).plus_const(-1)))
        }
        _ => None,
    }
}

/// The declared upper (or lower) bound of the symbol `x` when it is not a constant.
fn declared_bound(x: Id, upper: bool) -> Option<Id> {
    match node(x) {
        Node::Sym(sd) => if upper { sd.hi } else { sd.lo }.filter(|b| const_of(*b).is_none()),
        _ => None,
    }
}

/// Whether `symbolic_bound(f, _)` may give a bound in some direction (cheap: no division
/// is built).
fn has_symbolic_bound(f: Id) -> bool {
    let symbolic = |x: Id| declared_bound(x, true).is_some() || declared_bound(x, false).is_some();
    match node(f) {
        Node::Sym(_) => symbolic(f),
        Node::FloorDiv(x, _) => symbolic(*x),
        Node::FloorMod(_, w) => const_of(*w).is_none(),
        _ => false,
    }
}

/// The sign of `k * rest` for the cofactor `rest` of a factor in a product with
/// coefficient `k`: `Some(true)` when the product grows with the factor (replace it by an
/// upper bound to bound the product from above), `Some(false)` when it shrinks, `None`
/// when the ranges leave it open.
fn grows_with_factor(k: &BigInt, rest: Id) -> Option<bool> {
    let rr = &info(rest).range;
    match (k.is_positive(), rr.is_nonneg(), rr.is_nonpos()) {
        (true, true, _) | (false, _, true) => Some(true),
        (true, _, true) | (false, true, _) => Some(false),
        _ => None,
    }
}

/// Polynomials `u` with `k * m <= u` for a monomial `m` with two or more factors: one
/// symbol factor replaced by its symbolic bound, valid when the other factors have a known
/// sign. The candidates of the one-at-a-time search (`le0_rec`).
fn product_upper(m: Id, k: &BigInt) -> Vec<Poly> {
    let Node::Prod(fs) = node(m) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (idx, (f, e)) in fs.iter().enumerate() {
        if *e != 1 || !matches!(node(*f), Node::Sym(_)) || !has_symbolic_bound(*f) {
            continue;
        }
        let rest = product_without(fs, idx);
        let Some(upper) = grows_with_factor(k, rest) else {
            continue;
        };
        if let Some(b) = symbolic_bound(*f, upper) {
            out.push(Poly::of(mul(b, rest)).scale(k));
        }
    }
    out
}

/// A polynomial `u` with `k * m <= u` for every admissible binding, from the atom's own
/// structure (symbolic bounds, floor division), or `None`.
fn atom_upper(m: Id, k: &BigInt) -> Vec<Poly> {
    match node(m) {
        Node::Prod(_) => product_upper(m, k),
        Node::Sym(_) => symbolic_bound(m, k.is_positive())
            .map(|b| Poly::of(b).scale(k))
            .into_iter()
            .collect(),
        _ => atom_upper1(m, k).into_iter().collect(),
    }
}

/// The bound `le0_by_every_bound` puts in place of `k * m`, with the `bound_depth` of the
/// atom it replaces: for an atom, its symbolic bound or `atom_upper1`'s; for a product,
/// one factor replaced, chosen in this order: a factor with a symbolic bound
/// (`symbolic_bound`); then, in the order `prefer` says, a factor that is not a symbol by
/// the end of its range (`s * (i // 64)` is at most `11*s` for `i` in `0..768`: the range
/// of the product would lose its relation to `s`), or a quotient `x // c` with `c`
/// dividing `k` by its dividend (`2*w*((h + 1) // 2) <= w*(h + 1)`).
fn every_bound_upper(
    m: Id,
    k: &BigInt,
    prefer: Prefer,
    quotient_met: &mut bool,
) -> Option<(Poly, u32)> {
    let Node::Prod(fs) = node(m) else {
        let bound = symbolic_bound(m, k.is_positive()).map(|b| Poly::of(b).scale(k));
        return Some((bound.or_else(|| atom_upper1(m, k))?, bound_depth(m)));
    };
    let candidates = fs.iter().enumerate().filter(|(_, (f, e))| {
        *e == 1 && (!matches!(node(*f), Node::Sym(_)) || has_symbolic_bound(*f))
    });
    let with_rest: Vec<(Id, Id, bool)> = candidates
        .filter_map(|(idx, (f, _))| {
            let rest = product_without(fs, idx);
            Some((*f, rest, grows_with_factor(k, rest)?))
        })
        .collect();
    let bounded = |b: Id, rest: Id| Poly::of(mul(b, rest)).scale(k);
    let symbolic = with_rest
        .iter()
        .find_map(|&(f, rest, upper)| Some((bounded(symbolic_bound(f, upper)?, rest), f)));
    let at_end = || {
        with_rest.iter().find_map(|&(f, rest, upper)| {
            if matches!(node(f), Node::Sym(_)) {
                return None;
            }
            let r = &info(f).range;
            let end = if upper { r.hi.as_ref() } else { r.lo.as_ref() }?;
            Some((Poly::of(rest).scale(&(k * end)), f))
        })
    };
    let by_dividend = || {
        with_rest.iter().find_map(|&(f, rest, grows)| {
            let Node::FloorDiv(x, c) = node(f) else {
                return None;
            };
            let (x, q) = quotient_by_dividend(*x, *c, k, grows)?;
            Some((Poly::of(mul(from_poly(x), rest)).scale(&q), f))
        })
    };
    let (bound, f) = match symbolic {
        Some(b) => b,
        None => {
            let dividend = by_dividend();
            *quotient_met |= dividend.is_some();
            match prefer {
                Prefer::RangeEnd => at_end().or(dividend)?,
                Prefer::Dividend => dividend.or_else(at_end)?,
            }
        }
    };
    Some((bound, bound_depth(f)))
}

/// A term `k * (x // c)` (times other factors) bounded through the dividend, for a
/// constant `c >= 1` dividing `k`: `c*(x//c)` is at most `x`, which bounds the term from
/// above where it `grows` with the quotient, and at least `x - (c - 1)`, which does where
/// it shrinks. Returns that bound of `c*(x//c)` and `k / c`.
fn quotient_by_dividend(x: Id, c: Id, k: &BigInt, grows: bool) -> Option<(Poly, BigInt)> {
    let c = const_of(c)?;
    if !c.is_positive() || !k.mod_floor(c).is_zero() {
        return None;
    }
    let mut x = Poly::of(x);
    if !grows {
        x.c += 1 - c;
    }
    Some((x, k / c))
}

/// `atom_upper` beyond `symbolic_bound`: floor division by a constant through its
/// dividend, and a minimum or maximum through its first argument.
fn atom_upper1(m: Id, k: &BigInt) -> Option<Poly> {
    match node(m) {
        Node::FloorDiv(x, c) => {
            let (x, q) = quotient_by_dividend(*x, *c, k, k.is_positive())?;
            Some(x.scale(&q))
        }
        Node::Min(args) if k.is_positive() => Some(Poly::of(*args.first()?).scale(k)),
        Node::Max(args) if k.is_negative() => Some(Poly::of(*args.first()?).scale(k)),
        _ => None,
    }
}
