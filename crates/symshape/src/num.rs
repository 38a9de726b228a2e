//! Arbitrary-precision helpers: extended integers, intervals and congruences.

use std::cmp::Ordering;
use std::fmt;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// Bounds wider than this many bits are widened to infinity: sound, and it keeps the
/// size of range computations bounded for pathological inputs (high powers).
pub(crate) const MAX_BOUND_BITS: u64 = 4096;

/// An integer extended with the two infinities, used for interval ends.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Ext {
    NegInf,
    Fin(BigInt),
    PosInf,
}

impl Ext {
    pub(crate) fn neg(&self) -> Ext {
        match self {
            Ext::NegInf => Ext::PosInf,
            Ext::PosInf => Ext::NegInf,
            Ext::Fin(v) => Ext::Fin(-v),
        }
    }

    fn sign(&self) -> Ordering {
        match self {
            Ext::NegInf => Ordering::Less,
            Ext::PosInf => Ordering::Greater,
            Ext::Fin(v) => v.sign_ord(),
        }
    }

    /// Product with the convention `0 * inf = 0`, right for interval ends of finite values.
    pub(crate) fn mul(&self, o: &Ext) -> Ext {
        match (self, o) {
            (Ext::Fin(a), Ext::Fin(b)) => Ext::Fin(a * b),
            _ => match self.sign() as i8 * o.sign() as i8 {
                0 => Ext::Fin(BigInt::zero()),
                1 => Ext::PosInf,
                _ => Ext::NegInf,
            },
        }
    }

    /// Sum; `inf + -inf` cannot arise from adding two lower (or two upper) ends.
    pub(crate) fn add(&self, o: &Ext) -> Ext {
        match (self, o) {
            (Ext::Fin(a), Ext::Fin(b)) => Ext::Fin(a + b),
            (Ext::NegInf, _) | (_, Ext::NegInf) => Ext::NegInf,
            _ => Ext::PosInf,
        }
    }
}

trait SignOrd {
    fn sign_ord(&self) -> Ordering;
}

impl SignOrd for BigInt {
    fn sign_ord(&self) -> Ordering {
        self.cmp(&BigInt::zero())
    }
}

/// An inclusive range of integers `[lo, hi]`; `None` ends are unbounded.
///
/// Every admissible value of the expression it describes lies inside it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Lower end, `None` for minus infinity.
    pub lo: Option<BigInt>,
    /// Upper end, `None` for plus infinity.
    pub hi: Option<BigInt>,
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.lo {
            Some(v) => write!(f, "[{v}, ")?,
            None => write!(f, "[-inf, ")?,
        }
        match &self.hi {
            Some(v) => write!(f, "{v}]"),
            None => write!(f, "inf]"),
        }
    }
}

impl Interval {
    pub(crate) fn full() -> Interval {
        Interval { lo: None, hi: None }
    }

    pub(crate) fn point(v: BigInt) -> Interval {
        Interval {
            lo: Some(v.clone()),
            hi: Some(v),
        }
    }

    pub(crate) fn new(lo: Ext, hi: Ext) -> Interval {
        let clamp = |e: Ext| match e {
            Ext::Fin(v) if v.bits() <= MAX_BOUND_BITS => Some(v),
            _ => None,
        };
        Interval {
            lo: clamp(lo),
            hi: clamp(hi),
        }
    }

    pub(crate) fn lo_ext(&self) -> Ext {
        self.lo.clone().map_or(Ext::NegInf, Ext::Fin)
    }

    pub(crate) fn hi_ext(&self) -> Ext {
        self.hi.clone().map_or(Ext::PosInf, Ext::Fin)
    }

    /// The single value, if the interval has exactly one.
    #[must_use]
    pub fn as_point(&self) -> Option<&BigInt> {
        match (&self.lo, &self.hi) {
            (Some(a), Some(b)) if a == b => Some(a),
            _ => None,
        }
    }

    /// Whether `v` lies inside.
    #[must_use]
    pub fn contains(&self, v: &BigInt) -> bool {
        self.lo.as_ref().is_none_or(|lo| lo <= v) && self.hi.as_ref().is_none_or(|hi| v <= hi)
    }

    pub(crate) fn add(&self, o: &Interval) -> Interval {
        Interval::new(
            self.lo_ext().add(&o.lo_ext()),
            self.hi_ext().add(&o.hi_ext()),
        )
    }

    pub(crate) fn neg(&self) -> Interval {
        Interval::new(self.hi_ext().neg(), self.lo_ext().neg())
    }

    pub(crate) fn scale(&self, k: &BigInt) -> Interval {
        let k = Ext::Fin(k.clone());
        let a = self.lo_ext().mul(&k);
        let b = self.hi_ext().mul(&k);
        if a <= b {
            Interval::new(a, b)
        } else {
            Interval::new(b, a)
        }
    }

    pub(crate) fn mul(&self, o: &Interval) -> Interval {
        let (a, b, c, d) = (self.lo_ext(), self.hi_ext(), o.lo_ext(), o.hi_ext());
        let corners = [a.mul(&c), a.mul(&d), b.mul(&c), b.mul(&d)];
        let lo = corners.iter().min().cloned().unwrap_or(Ext::NegInf);
        let hi = corners.iter().max().cloned().unwrap_or(Ext::PosInf);
        Interval::new(lo, hi)
    }

    pub(crate) fn pow(&self, k: u32) -> Interval {
        if k == 0 {
            return Interval::point(BigInt::one());
        }
        let odd = Interval::pow_ext;
        if k % 2 == 1 {
            return Interval::new(odd(&self.lo_ext(), k), odd(&self.hi_ext(), k));
        }
        // Even power: the smallest value is at the point of the range closest to zero.
        let lo = self.lo_ext();
        let hi = self.hi_ext();
        let zero = Ext::Fin(BigInt::zero());
        let low = if lo <= zero && zero <= hi {
            zero
        } else if lo > zero {
            odd(&lo, k)
        } else {
            odd(&hi, k)
        };
        let high = std::cmp::max(odd(&lo, k), odd(&hi, k));
        Interval::new(low, high)
    }

    fn pow_ext(e: &Ext, k: u32) -> Ext {
        match e {
            Ext::Fin(v) => {
                if v.bits().saturating_mul(u64::from(k)) > MAX_BOUND_BITS {
                    if v.is_negative() && k % 2 == 1 {
                        Ext::NegInf
                    } else {
                        Ext::PosInf
                    }
                } else {
                    Ext::Fin(num_traits::pow(v.clone(), k as usize))
                }
            }
            Ext::PosInf => Ext::PosInf,
            Ext::NegInf if k % 2 == 0 => Ext::PosInf,
            Ext::NegInf => Ext::NegInf,
        }
    }

    /// Intersection; keeps `self` when the intersection would be empty (a sound fallback:
    /// an empty intersection means no admissible value exists).
    pub(crate) fn meet(&self, o: &Interval) -> Interval {
        let lo = std::cmp::max(self.lo_ext(), o.lo_ext());
        let hi = std::cmp::min(self.hi_ext(), o.hi_ext());
        if lo > hi {
            return self.clone();
        }
        Interval::new(lo, hi)
    }

    /// Elementwise minimum of two independent ranges.
    pub(crate) fn min(&self, o: &Interval) -> Interval {
        Interval::new(
            std::cmp::min(self.lo_ext(), o.lo_ext()),
            std::cmp::min(self.hi_ext(), o.hi_ext()),
        )
    }

    /// Elementwise maximum of two independent ranges.
    pub(crate) fn max(&self, o: &Interval) -> Interval {
        Interval::new(
            std::cmp::max(self.lo_ext(), o.lo_ext()),
            std::cmp::max(self.hi_ext(), o.hi_ext()),
        )
    }

    /// Range of `x // c` for a constant `c >= 1`.
    pub(crate) fn floor_div_const(&self, c: &BigInt) -> Interval {
        if !c.is_positive() {
            return Interval::full();
        }
        Interval {
            lo: self.lo.as_ref().map(|v| v.div_floor(c)),
            hi: self.hi.as_ref().map(|v| v.div_floor(c)),
        }
    }

    /// Range of `x // y` for a divisor range `y >= 1`.
    pub(crate) fn floor_div_pos(&self, y: &Interval) -> Interval {
        // For y >= 1, x / y is monotone in x and, for fixed x, moves toward 0 as y grows:
        // the extremes are at the corners (an infinite y acts as the limit 0 or -1).
        let q = |x: &Ext, y: &Ext| -> Ext {
            match (x, y) {
                (Ext::Fin(a), Ext::Fin(b)) => Ext::Fin(a.div_floor(b)),
                (Ext::Fin(a), _) => Ext::Fin(if a.is_negative() {
                    -BigInt::one()
                } else {
                    BigInt::zero()
                }),
                (inf, _) => inf.clone(),
            }
        };
        if !y.is_pos() {
            return Interval::full();
        }
        let (a, b, c, d) = (self.lo_ext(), self.hi_ext(), y.lo_ext(), y.hi_ext());
        let corners = [q(&a, &c), q(&a, &d), q(&b, &c), q(&b, &d)];
        let lo = corners.iter().min().cloned().unwrap_or(Ext::NegInf);
        let hi = corners.iter().max().cloned().unwrap_or(Ext::PosInf);
        Interval::new(lo, hi)
    }

    /// `max(|lo|, |hi|)`, or `None` when unbounded.
    pub(crate) fn abs_max(&self) -> Option<BigInt> {
        let lo = self.lo.as_ref()?.abs();
        let hi = self.hi.as_ref()?.abs();
        Some(std::cmp::max(lo, hi))
    }

    /// Rounds the ends inward to the residue class `cg`; keeps `self` if that empties it.
    pub(crate) fn tighten(&self, cg: &Cong) -> Interval {
        if cg.m.is_zero() {
            return Interval::point(cg.r.clone());
        }
        if cg.m.is_one() {
            return self.clone();
        }
        let lo = self
            .lo
            .as_ref()
            .map(|lo| lo + (&cg.r - lo).mod_floor(&cg.m));
        let hi = self
            .hi
            .as_ref()
            .map(|hi| hi - (hi - &cg.r).mod_floor(&cg.m));
        if let (Some(a), Some(b)) = (&lo, &hi) {
            if a > b {
                return self.clone();
            }
        }
        Interval { lo, hi }
    }

    pub(crate) fn is_nonneg(&self) -> bool {
        self.lo.as_ref().is_some_and(|v| !v.is_negative())
    }

    pub(crate) fn is_pos(&self) -> bool {
        self.lo.as_ref().is_some_and(|v| v.is_positive())
    }

    pub(crate) fn is_neg(&self) -> bool {
        self.hi.as_ref().is_some_and(|v| v.is_negative())
    }

    pub(crate) fn is_nonpos(&self) -> bool {
        self.hi.as_ref().is_some_and(|v| !v.is_positive())
    }
}

/// Known residue: every admissible value `v` satisfies `v ≡ r (mod m)`.
///
/// `m == 0` means the value is exactly `r`; `m == 1` means nothing is known.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cong {
    /// The modulus (0: exact value, 1: unknown).
    pub m: BigInt,
    /// The residue, in `[0, m)` when `m > 0`.
    pub r: BigInt,
}

impl fmt::Display for Cong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.m.is_zero() {
            write!(f, "= {}", self.r)
        } else {
            write!(f, "≡ {} (mod {})", self.r, self.m)
        }
    }
}

impl Cong {
    pub(crate) fn unknown() -> Cong {
        Cong {
            m: BigInt::one(),
            r: BigInt::zero(),
        }
    }

    pub(crate) fn exact(v: BigInt) -> Cong {
        Cong {
            m: BigInt::zero(),
            r: v,
        }
    }

    pub(crate) fn new(m: BigInt, r: BigInt) -> Cong {
        let m = m.abs();
        if m.bits() > MAX_BOUND_BITS {
            return Cong::unknown();
        }
        if m.is_zero() {
            return Cong::exact(r);
        }
        let r = r.mod_floor(&m);
        Cong { m, r }
    }

    pub(crate) fn add(&self, o: &Cong) -> Cong {
        Cong::new(self.m.gcd(&o.m), &self.r + &o.r)
    }

    pub(crate) fn scale(&self, k: &BigInt) -> Cong {
        Cong::new(&self.m * k, &self.r * k)
    }

    pub(crate) fn mul(&self, o: &Cong) -> Cong {
        let m = (&self.m * &o.m)
            .gcd(&(&self.m * &o.r))
            .gcd(&(&o.m * &self.r));
        Cong::new(m, &self.r * &o.r)
    }

    pub(crate) fn pow(&self, k: u32) -> Cong {
        let mut acc = Cong::exact(BigInt::one());
        for _ in 0..k.min(64) {
            acc = acc.mul(self);
        }
        if k > 64 {
            // Still sound: only the residue structure of low powers is tracked.
            return if self.m.is_zero() {
                acc
            } else {
                Cong::unknown()
            };
        }
        acc
    }

    /// The common residue class of two values either of which may occur.
    pub(crate) fn join(&self, o: &Cong) -> Cong {
        let m = self.m.gcd(&o.m).gcd(&(&self.r - &o.r));
        Cong::new(m, self.r.clone())
    }

    /// Combines two facts about the same value; keeps the stronger if they cannot merge
    /// cheaply (either is sound).
    pub(crate) fn meet(&self, o: &Cong) -> Cong {
        if self.m.is_zero() {
            return self.clone();
        }
        if o.m.is_zero() {
            return o.clone();
        }
        let l = self.m.lcm(&o.m);
        // Search the residues of the finer class modulo the lcm; cheap for small moduli.
        let (a, b) = if self.m >= o.m { (self, o) } else { (o, self) };
        let steps = &l / &a.m;
        if steps <= BigInt::from(4096) {
            let mut v = a.r.clone();
            let mut i = BigInt::zero();
            while i < steps {
                if (&v - &b.r).mod_floor(&b.m).is_zero() {
                    return Cong::new(l, v);
                }
                v += &a.m;
                i += 1;
            }
        }
        a.clone()
    }

    /// Whether every value in this class is divisible by `c` (`c > 0`).
    pub(crate) fn divisible_by(&self, c: &BigInt) -> bool {
        if self.m.is_zero() {
            return self.r.mod_floor(c).is_zero();
        }
        self.m.mod_floor(c).is_zero() && self.r.mod_floor(c).is_zero()
    }

    /// The residue modulo `c` when it is determined.
    pub(crate) fn residue_mod(&self, c: &BigInt) -> Option<BigInt> {
        if self.m.is_zero() || self.m.mod_floor(c).is_zero() {
            return Some(self.r.mod_floor(c));
        }
        None
    }
}
