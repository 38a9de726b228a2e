//! Polynomials over interned monomials, and the canonical nodes of sums and products:
//! the polynomial normal form every expression is built in.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

use crate::limits::{MAX_COEF_BITS, MAX_DEGREE, MAX_DEPTH, MAX_MUL_WORK, MAX_TERMS};
use crate::memo::{self, OpKey};
use crate::node::{const_of, info, intern, node, Id, Node, Sort};
use crate::num::Cong;
use crate::order;

/// A polynomial over monomials, not interned: `sum(coef * mono) + c`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Poly {
    pub terms: Vec<(Id, BigInt)>,
    pub c: BigInt,
}

impl Poly {
    pub(crate) fn zero() -> Poly {
        Poly {
            terms: Vec::new(),
            c: BigInt::zero(),
        }
    }

    pub(crate) fn constant(c: BigInt) -> Poly {
        Poly {
            terms: Vec::new(),
            c,
        }
    }

    /// The polynomial view of an integer node.
    pub(crate) fn of(id: Id) -> Poly {
        match node(id) {
            Node::Const(v) => Poly::constant(v.clone()),
            Node::Sum(ts, c) => Poly {
                terms: ts.to_vec(),
                c: c.clone(),
            },
            _ => Poly {
                terms: vec![(id, BigInt::one())],
                c: BigInt::zero(),
            },
        }
    }

    /// Merges equal monomials and drops zero coefficients (order by id: internal only).
    pub(crate) fn normalize(&mut self) {
        self.terms.sort_by_key(|t| t.0);
        let mut out: Vec<(Id, BigInt)> = Vec::with_capacity(self.terms.len());
        for (m, k) in self.terms.drain(..) {
            // A constant "monomial" (e.g. a quotient `w / w`) belongs to the constant.
            if let Some(v) = const_of(m) {
                self.c += k * v;
                continue;
            }
            match out.last_mut() {
                Some(last) if last.0 == m => last.1 += k,
                _ => out.push((m, k)),
            }
        }
        out.retain(|t| !t.1.is_zero());
        self.terms = out;
    }

    pub(crate) fn add(mut self, o: &Poly) -> Poly {
        self.terms.extend(o.terms.iter().cloned());
        self.c += &o.c;
        self.normalize();
        self
    }

    pub(crate) fn scale(mut self, k: &BigInt) -> Poly {
        if k.is_zero() {
            return Poly::zero();
        }
        for t in &mut self.terms {
            t.1 *= k;
        }
        self.c *= k;
        self
    }

    pub(crate) fn sub(self, o: &Poly) -> Poly {
        self.add(&o.clone().scale(&-BigInt::one()))
    }

    pub(crate) fn plus_const(mut self, k: i64) -> Poly {
        self.c += k;
        self
    }

    /// `self / d` when it is a polynomial: `d` a nonzero constant or monomial (times a
    /// constant) dividing every term, and the constant, exactly. `None` otherwise.
    pub(crate) fn divide_exact(&self, d: Id) -> Option<Poly> {
        let pd = Poly::of(d);
        let (w, kd) = match (pd.terms.as_slice(), pd.c.is_zero()) {
            ([], false) => (None, pd.c.clone()),
            ([(w, kd)], true) => (Some(factors(*w)), kd.clone()),
            _ => return None,
        };
        if kd.is_zero() || !self.c.mod_floor(&kd).is_zero() || (w.is_some() && !self.c.is_zero()) {
            return None;
        }
        let mut out = Poly::constant(&self.c / &kd);
        for (m, k) in &self.terms {
            if !k.mod_floor(&kd).is_zero() {
                return None;
            }
            let q = match &w {
                Some(w) => mono_from_factors(divide_mono(&factors(*m), w)?),
                None => *m,
            };
            out.terms.push((q, k / &kd));
        }
        out.normalize();
        Some(out)
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.terms.is_empty() && self.c.is_zero()
    }

    /// Gcd of the term coefficients (0 when there are none).
    pub(crate) fn content(&self) -> BigInt {
        self.terms.iter().fold(BigInt::zero(), |g, t| g.gcd(&t.1))
    }
}

pub(crate) fn invalid(msg: impl Into<String>) -> Id {
    intern(Node::Invalid(msg.into().into_boxed_str()))
}

pub(crate) fn first_invalid(ids: &[Id]) -> Option<Id> {
    ids.iter().copied().find(|&i| info(i).sort == Sort::Invalid)
}

/// Interns and enforces the depth budget.
pub(crate) fn mk(n: Node) -> Id {
    let id = intern(n);
    if info(id).depth > MAX_DEPTH {
        return invalid(format!(
            "limit: expression nests deeper than {MAX_DEPTH} levels, counting the bounds of its symbols (a symbol bounded by another holds that one's bounds too)"
        ));
    }
    id
}

pub(crate) fn constant(v: BigInt) -> Id {
    if v.bits() > MAX_COEF_BITS {
        return invalid(format!("limit: constant wider than {MAX_COEF_BITS} bits"));
    }
    intern(Node::Const(v))
}

pub(crate) fn boolean(b: bool) -> Id {
    intern(Node::Bool(b))
}

/// The canonical node of a polynomial.
pub(crate) fn from_poly(mut p: Poly) -> Id {
    p.normalize();
    if p.terms
        .iter()
        .any(|t| matches!(node(t.0), Node::FloorDiv(..)))
    {
        let mut out = Poly::constant(p.c.clone());
        for (m, k) in &p.terms {
            match exact_multiple_with(&|x| info(x).cong.clone(), *m, k) {
                Some(e) => out = out.add(&e),
                None => out.terms.push((*m, k.clone())),
            }
        }
        p = out;
        p.normalize();
    }
    if p.terms.len() > MAX_TERMS {
        return invalid(format!(
            "limit: polynomial with more than {MAX_TERMS} terms"
        ));
    }
    if p.c.bits() > MAX_COEF_BITS || p.terms.iter().any(|t| t.1.bits() > MAX_COEF_BITS) {
        return invalid(format!(
            "limit: coefficient wider than {MAX_COEF_BITS} bits"
        ));
    }
    if p.terms.is_empty() {
        return constant(p.c);
    }
    if p.terms.len() == 1 && p.c.is_zero() && p.terms[0].1.is_one() {
        return p.terms[0].0;
    }
    p.terms.sort_by(|a, b| order::cmp_mono(a.0, b.0));
    mk(Node::Sum(p.terms.into_boxed_slice(), p.c))
}

pub(crate) fn add(a: Id, b: Id) -> Id {
    memo::op(OpKey::Add(a, b), || {
        if let Some(i) = first_invalid(&[a, b]) {
            return i;
        }
        from_poly(Poly::of(a).add(&Poly::of(b)))
    })
}

pub(crate) fn sub(a: Id, b: Id) -> Id {
    memo::op(OpKey::Sub(a, b), || {
        if let Some(i) = first_invalid(&[a, b]) {
            return i;
        }
        from_poly(Poly::of(a).sub(&Poly::of(b)))
    })
}

pub(crate) fn scale(a: Id, k: &BigInt) -> Id {
    if let Some(i) = first_invalid(&[a]) {
        return i;
    }
    from_poly(Poly::of(a).scale(k))
}

pub(crate) fn neg(a: Id) -> Id {
    scale(a, &-BigInt::one())
}

/// The factors of the monomial `m` divided by those of `w`, or `None` when `w` does not
/// divide `m`.
pub(crate) fn divide_mono(m: &[(Id, u32)], w: &[(Id, u32)]) -> Option<Vec<(Id, u32)>> {
    let mut out = m.to_vec();
    for (a, k) in w {
        let f = out.iter_mut().find(|f| f.0 == *a)?;
        f.1 = f.1.checked_sub(*k)?;
    }
    Some(out)
}

pub(crate) fn factors(m: Id) -> Vec<(Id, u32)> {
    match node(m) {
        Node::Prod(f) => f.to_vec(),
        _ => vec![(m, 1)],
    }
}

/// Product of two monomials, or an invalid node past the degree budget.
fn mono_mul(a: Id, b: Id) -> Id {
    let mut f = factors(a);
    f.extend(factors(b));
    mono_from_factors(f)
}

pub(crate) fn mono_from_factors(mut f: Vec<(Id, u32)>) -> Id {
    f.sort_by_key(|x| x.0);
    let mut out: Vec<(Id, u32)> = Vec::with_capacity(f.len());
    for (a, k) in f {
        match out.last_mut() {
            Some(last) if last.0 == a => last.1 = last.1.saturating_add(k),
            _ => out.push((a, k)),
        }
    }
    out.retain(|x| x.1 > 0);
    let degree = out.iter().map(|x| x.1).fold(0u32, u32::saturating_add);
    if degree > MAX_DEGREE {
        return invalid(format!(
            "limit: monomial of degree higher than {MAX_DEGREE}"
        ));
    }
    if degree == 0 {
        return constant(BigInt::one());
    }
    if out.len() == 1 && out[0].1 == 1 {
        return out[0].0;
    }
    out.sort_by(|x, y| order::cmp(x.0, y.0));
    mk(Node::Prod(out.into_boxed_slice()))
}

/// The product of the canonical factors `fs` (of a product node) with one copy of
/// factor `idx` taken out. The factors stay in order, so this costs no sort.
pub(crate) fn product_without(fs: &[(Id, u32)], idx: usize) -> Id {
    let mut out: Vec<(Id, u32)> = fs.to_vec();
    if let Some(f) = out.get_mut(idx) {
        f.1 = f.1.saturating_sub(1);
    }
    out.retain(|f| f.1 > 0);
    match out.as_slice() {
        [] => constant(BigInt::one()),
        [(a, 1)] => *a,
        _ => mk(Node::Prod(out.into_boxed_slice())),
    }
}

pub(crate) fn mul(a: Id, b: Id) -> Id {
    memo::op(OpKey::Mul(a, b), || mul_uncached(a, b))
}

fn mul_uncached(a: Id, b: Id) -> Id {
    if let Some(i) = first_invalid(&[a, b]) {
        return i;
    }
    let (pa, pb) = (Poly::of(a), Poly::of(b));
    let work = (pa.terms.len() + 1).saturating_mul(pb.terms.len() + 1);
    if work > MAX_MUL_WORK {
        return invalid(format!(
            "limit: product would expand to more than {MAX_MUL_WORK} terms"
        ));
    }
    let mut out = Poly::constant(&pa.c * &pb.c);
    for (m, k) in &pa.terms {
        if !pb.c.is_zero() {
            out.terms.push((*m, k * &pb.c));
        }
    }
    for (m, k) in &pb.terms {
        if !pa.c.is_zero() {
            out.terms.push((*m, k * &pa.c));
        }
    }
    for (ma, ka) in &pa.terms {
        for (mb, kb) in &pb.terms {
            let m = mono_mul(*ma, *mb);
            if info(m).sort == Sort::Invalid {
                return m;
            }
            out.terms.push((m, ka * kb));
        }
    }
    from_poly(out)
}

/// `k * (x // c)` as the polynomial `(k / c) * (x - r)` when `c` divides `k` and `x` is
/// known (by `cong`) to be `r` modulo `c`.
pub(crate) fn exact_multiple_with(cong: &dyn Fn(Id) -> Cong, m: Id, k: &BigInt) -> Option<Poly> {
    let Node::FloorDiv(x, c) = node(m) else {
        return None;
    };
    let c = const_of(*c).filter(|c| c.is_positive())?;
    if !k.mod_floor(c).is_zero() {
        return None;
    }
    let r = cong(*x).residue_mod(c)?;
    Some(Poly::of(*x).add(&Poly::constant(-r)).scale(&(k / c)))
}
