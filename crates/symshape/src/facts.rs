//! What the constructors may assume about atoms ([`Facts`]), and the cheap bounds they
//! derive from it: ranges and congruences of polynomials, and `p <= 0` by substituting
//! the bounds of atoms.

use std::borrow::Cow;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};

use crate::node::{const_of, info, node, Id, Node};
use crate::num::{Cong, Interval};
use crate::poly::{mono_from_factors, mul, Poly};

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
        le0_rec(cx, p, 3, &mut budget) || cx.le0_deep(p)
    })
}

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

/// Polynomials `u` with `k * m <= u` for a monomial `m` with two or more factors: one
/// factor replaced by its symbolic bound, valid when the other factors have a known sign.
fn product_upper(m: Id, k: &BigInt) -> Vec<Poly> {
    let Node::Prod(fs) = node(m) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (idx, (s, e)) in fs.iter().enumerate() {
        let Node::Sym(sd) = node(*s) else { continue };
        if *e != 1 {
            continue;
        }
        let mut rest_f = fs.to_vec();
        rest_f.remove(idx);
        let rest = mono_from_factors(rest_f);
        let rr = &info(rest).range;
        // k * s * rest: its sign of dependence on s is sign(k) * sign(rest).
        let up = match (k.is_positive(), rr.is_nonneg(), rr.is_nonpos()) {
            (true, true, _) | (false, _, true) => sd.hi,
            (true, _, true) | (false, true, _) => sd.lo,
            _ => None,
        };
        if let Some(b) = up.filter(|b| const_of(*b).is_none()) {
            out.push(Poly::of(mul(b, rest)).scale(k));
        }
    }
    out
}

/// A polynomial `u` with `k * m <= u` for every admissible binding, from the atom's own
/// structure (symbolic bounds, floor division), or `None`.
fn atom_upper(m: Id, k: &BigInt) -> Vec<Poly> {
    if matches!(node(m), Node::Prod(_)) {
        return product_upper(m, k);
    }
    atom_upper1(m, k).into_iter().collect()
}

fn atom_upper1(m: Id, k: &BigInt) -> Option<Poly> {
    match node(m) {
        Node::Sym(s) => {
            let b = if k.is_positive() { s.hi } else { s.lo }?;
            if const_of(b).is_some() {
                return None;
            }
            Some(Poly::of(b).scale(k))
        }
        Node::FloorDiv(x, c) => {
            let c = const_of(*c)?;
            if !c.is_positive() || !k.mod_floor(c).is_zero() {
                return None;
            }
            let q = k / c;
            // c*(x//c) <= x and c*(x//c) >= x - (c - 1).
            let px = Poly::of(*x);
            if k.is_positive() {
                Some(px.scale(&q))
            } else {
                Some(
                    Poly {
                        c: px.c.clone() - (c - 1),
                        terms: px.terms,
                    }
                    .scale(&q),
                )
            }
        }
        Node::Min(args) if k.is_positive() => Some(Poly::of(*args.first()?).scale(k)),
        Node::Max(args) if k.is_negative() => Some(Poly::of(*args.first()?).scale(k)),
        _ => None,
    }
}
