//! NumPy's `may_share_memory` and `shares_memory` for two views of one buffer:
//! the extent test and the exact test within a work bound.
//!
//! The exact test is NumPy's formulation: two views share an element when
//! `off_a + sum(a_i x_i) == off_b + sum(b_j y_j)` has a solution with every index
//! inside its view's valid box. Negative strides are flipped and the second view's
//! terms are moved to the left with `y_j -> u_j - y_j`, which leaves one equation
//! `sum(c_k z_k) == rhs` with positive coefficients and `0 <= z_k <= u_k`. Terms of
//! equal coefficient merge into one (their sum takes every value in between), and a
//! depth-first search over the terms, largest coefficient first, prunes on the
//! range the remaining terms can reach and on the gcd of their coefficients.

use std::fmt;

use super::ConcreteView;

/// The work bound for callers of [`ConcreteView::shares_memory`] without one of their
/// own (the `shapetrace` runner's default): 2^18 candidate index values, a few tenths
/// of a second at most. The exact search is exponential in the number of axes (a
/// subset-sum instance of 36 axes of size 2 with large strides does not finish in
/// minutes without a bound); past the bound the answer is [`MemoryOverlap::TooHard`], as NumPy's
/// `TooHardError` past its `max_work`.
pub const SHARES_MEMORY_MAX_WORK: u64 = 1 << 18;

/// The answer of [`ConcreteView::shares_memory`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub enum MemoryOverlap {
    /// Some valid element of one view has the offset of a valid element of the other.
    Yes,
    /// No offset is reached by both views.
    No,
    /// The search needed more than the work bound (NumPy raises `TooHardError`).
    TooHard,
}

impl fmt::Display for MemoryOverlap {
    /// `yes`, `no` or `too hard`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryOverlap::Yes => "yes",
            MemoryOverlap::No => "no",
            MemoryOverlap::TooHard => "too hard",
        })
    }
}

/// One term `c * z` with `0 <= z <= u`.
#[derive(Clone, Copy, Debug)]
struct Term {
    c: i128,
    u: i128,
}

impl ConcreteView {
    /// The valid box: per axis, the first valid index and the number of valid ones;
    /// `None` when the view has no valid element.
    fn valid_box(&self) -> Option<Vec<(i64, i64)>> {
        let boxes: Vec<(i64, i64)> = match self.mask() {
            Some(m) => m.iter().map(|&(b, e)| (b, e - b)).collect(),
            None => self.shape().iter().map(|&d| (0, d)).collect(),
        };
        boxes.iter().all(|&(_, n)| n > 0).then_some(boxes)
    }

    /// NumPy's `may_share_memory`: whether the [extents](ConcreteView::extent) of the
    /// valid elements of the two views, views of one buffer of equal-sized
    /// elements, overlap. `false` is certain; `true` may be a false alarm (see
    /// [`ConcreteView::shares_memory`]).
    #[must_use]
    pub fn may_share_memory(&self, other: &ConcreteView) -> bool {
        match (self.extent(), other.extent()) {
            (Some((a0, a1)), Some((b0, b1))) => a0 <= b1 && b0 <= a1,
            _ => false,
        }
    }

    /// NumPy's `shares_memory`: whether some valid element of `self` and some valid
    /// element of `other` (two views of one buffer of equal-sized elements) have the
    /// same offset. The answer is exact unless the search visits more than
    /// `max_work` candidate values of an index, when it is
    /// [`MemoryOverlap::TooHard`]. Pass [`SHARES_MEMORY_MAX_WORK`] unless the caller has
    /// a bound of its own: the search is exponential in the number of axes, and
    /// `u64::MAX` (never give up) may not finish in minutes on 36 axes. With
    /// `max_work == 0` only answers that need no search are given (disjoint
    /// extents, a gcd or range that rules every solution out, one term left).
    pub fn shares_memory(&self, other: &ConcreteView, max_work: u64) -> MemoryOverlap {
        if !self.may_share_memory(other) {
            return MemoryOverlap::No;
        }
        let (Some(ba), Some(bb)) = (self.valid_box(), other.valid_box()) else {
            return MemoryOverlap::No;
        };
        // off_a + sum(a x) == off_b + sum(b y), each side's base moved to its smallest
        // offset so that every term is c * z with c > 0 and 0 <= z <= u.
        let mut terms = Vec::new();
        let mut rhs = 0i128;
        let mut side = |v: &ConcreteView, boxes: &[(i64, i64)], sign: i128| {
            let mut base = i128::from(v.offset());
            for (&(b, n), &t) in boxes.iter().zip(v.strides()) {
                let (t, u) = (i128::from(t), i128::from(n - 1));
                base += i128::from(b) * t;
                if t < 0 {
                    base += t * u;
                }
                if t != 0 && u > 0 {
                    terms.push((t.abs(), u, sign));
                }
            }
            rhs -= sign * base;
        };
        side(self, &ba, 1);
        side(other, &bb, -1);
        // sum_a c z - sum_b c w == rhs; w -> u - w moves the second side's terms to
        // the left with positive sign.
        for &(c, u, sign) in &terms {
            if sign < 0 {
                rhs += c * u;
            }
        }
        let mut merged: Vec<Term> = Vec::new();
        terms.sort_by_key(|t| std::cmp::Reverse(t.0));
        for (c, u, _) in terms {
            match merged.last_mut() {
                Some(last) if last.c == c => last.u += u,
                _ => merged.push(Term { c, u }),
            }
        }
        Search::new(merged, max_work).run(rhs)
    }
}

/// The bounded depth-first search for `sum(c_k z_k) == rhs`.
struct Search {
    terms: Vec<Term>,
    /// `reach[k]`: the largest sum of the terms from `k` on.
    reach: Vec<i128>,
    /// `gcds[k]`: the gcd of the coefficients from `k` on (0 past the end).
    gcds: Vec<i128>,
    work: u64,
    max_work: u64,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

/// The inverse of `a` modulo `m` (`a` and `m` coprime, `m >= 1`).
fn mod_inverse(a: i128, m: i128) -> i128 {
    let (mut r0, mut r1) = (a.rem_euclid(m), m);
    let (mut s0, mut s1) = (1i128, 0i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (s0, s1) = (s1, s0 - q * s1);
    }
    s0.rem_euclid(m)
}

impl Search {
    fn new(terms: Vec<Term>, max_work: u64) -> Search {
        let n = terms.len();
        let mut reach = vec![0i128; n + 1];
        let mut gcds = vec![0i128; n + 1];
        for k in (0..n).rev() {
            // Offsets fit in i64, so c * u and their sums stay far inside i128.
            reach[k] = reach[k + 1] + terms[k].c * terms[k].u;
            gcds[k] = gcd(gcds[k + 1], terms[k].c);
        }
        Search {
            terms,
            reach,
            gcds,
            work: 0,
            max_work,
        }
    }

    fn run(mut self, rhs: i128) -> MemoryOverlap {
        match self.solve(0, rhs) {
            Some(true) => MemoryOverlap::Yes,
            Some(false) => MemoryOverlap::No,
            None => MemoryOverlap::TooHard,
        }
    }

    /// Whether terms `k..` can sum to `rhs`; `None` past the work bound.
    fn solve(&mut self, k: usize, rhs: i128) -> Option<bool> {
        if rhs < 0 || rhs > self.reach[k] {
            return Some(false);
        }
        let g = self.gcds[k];
        if g == 0 {
            return Some(rhs == 0);
        }
        if rhs % g != 0 {
            return Some(false);
        }
        let Term { c, u } = self.terms[k];
        if k + 1 == self.terms.len() {
            return Some(rhs / c <= u);
        }
        // c * z must leave a rest the later terms reach: rhs - reach[k + 1] <= c z <= rhs.
        let hi = u.min(rhs / c);
        let lo = (rhs - self.reach[k + 1]).max(0).div_euclid(c)
            + i128::from((rhs - self.reach[k + 1]).max(0).rem_euclid(c) != 0);
        // Only z with c z == rhs modulo the next gcd leave a rest the later terms
        // can sum to: z == z0 modulo `step`.
        let next = self.gcds[k + 1];
        let h = gcd(c, next);
        let step = next / h;
        let z0 = (rhs / h).rem_euclid(step) * mod_inverse(c / h, step) % step;
        let mut z = hi - (hi - z0).rem_euclid(step);
        while z >= lo {
            self.work += 1;
            if self.work > self.max_work {
                return None;
            }
            if self.solve(k + 1, rhs - c * z)? {
                return Some(true);
            }
            z -= step;
        }
        Some(false)
    }
}
