//! Cheap certificates that a run of stacked views is not one view, so that a
//! bound stack whose levels never merge is built without running the deciders.
//!
//! A run of levels (bottom first) maps every index of the top to a buffer offset
//! or to nothing (masked at some level). When the run is one view, its valid
//! points form a box and its offsets are affine on that box. So a few points
//! refute it:
//!
//! - two valid points and an invalid point inside their bounding box (a box
//!   contains the bounding box of any two of its points);
//! - two steps along the same axis, all four points valid, that move the offset
//!   by different amounts (an affine map moves it by the stride at every step).
//!
//! Every refutation is checked by evaluation at the points it names, so it is
//! exact; a run this module cannot refute is left to the deciders of
//! [`super::merge`], which decide it completely. The points are chosen where
//! compositions usually break: the corners of the top's valid box, and, along
//! each axis, the first step at which the element read in the level below
//! carries into one of that level's digits (for example the step from one head
//! to the next when merged heads read a permuted view).
//!
//! The probes are numbered; [`refute`] tries a remembered probe first, so a
//! caller that binds the same stack again at other sizes usually pays for one
//! probe.

use super::ConcreteView;

/// The offset of top index `idx` through `run` (bottom first), `None` when it is
/// masked at some level. `idx` must lie inside the top's shape, and every level
/// within the one below (a stack's invariant), which keeps every value in i64.
fn eval(run: &[ConcreteView], idx: &[i64]) -> Option<i64> {
    let (top, below) = run.split_last()?;
    let mut off = top.offset;
    for (axis, (&j, &t)) in idx.iter().zip(&top.strides).enumerate() {
        if let Some(m) = &top.mask {
            let (b, e) = m[axis];
            if j < b || j >= e {
                return None;
            }
        }
        off += j * t;
    }
    for v in below.iter().rev() {
        let mut rem = off;
        off = v.offset;
        for axis in (0..v.shape.len()).rev() {
            let d = v.shape[axis];
            if d == 0 {
                return None;
            }
            let digit = rem % d;
            rem /= d;
            if let Some(m) = &v.mask {
                let (b, e) = m[axis];
                if digit < b || digit >= e {
                    return None;
                }
            }
            off += digit * v.strides[axis];
        }
    }
    Some(off)
}

/// Corners of the valid box evaluated by the corner probe: all of them up to
/// this rank, beyond it the lower corner, the upper corner and the lower corner
/// moved to the top of each axis.
const ALL_CORNERS_RANK: usize = 5;

/// The corner probe: an invalid corner inside the bounding box of the valid
/// ones, or two parallel edges of the box whose ends differ by different amounts.
fn corners(run: &[ConcreteView], lo: &[i64], hi: &[i64], scratch: &mut Vec<i64>) -> bool {
    let rank = lo.len();
    let pick = |mask: u64, k: usize| if mask >> k & 1 == 1 { hi[k] - 1 } else { lo[k] };
    let masks: Vec<u64> = if rank <= ALL_CORNERS_RANK {
        (0..1u64 << rank).collect()
    } else {
        let full = (1u64 << rank.min(63)) - 1;
        let mut m = vec![0, full];
        m.extend((0..rank.min(63)).map(|k| 1u64 << k));
        m
    };
    let mut vals: Vec<(u64, Option<i64>)> = Vec::with_capacity(masks.len());
    for &m in &masks {
        scratch.clear();
        scratch.extend((0..rank).map(|k| pick(m, k)));
        vals.push((m, eval(run, scratch)));
    }
    // Bounding box of the valid corners, as bits that are always 0 / always 1.
    let (mut any_hi, mut any_lo, mut some) = (0u64, 0u64, false);
    for &(m, v) in &vals {
        if v.is_some() {
            some = true;
            any_hi |= m;
            any_lo |= !m;
        }
    }
    if !some {
        return false;
    }
    // A corner is inside the bounding box when it sits at `lo` on every axis where
    // no valid corner sits at the top, and at the top where none sits at `lo`.
    for &(m, v) in &vals {
        if v.is_none() && m & !any_hi == 0 && !m & !any_lo & low_bits(rank) == 0 {
            return true;
        }
    }
    // Parallel edges along axis k: corners differing only in bit k.
    for k in 0..rank.min(63) {
        if hi[k] - lo[k] < 2 {
            continue;
        }
        let mut seen: Option<i128> = None;
        for &(m, v) in &vals {
            if m >> k & 1 == 1 {
                continue;
            }
            let Some(a) = v else { continue };
            let Some(&(_, Some(b))) = vals.iter().find(|&&(x, _)| x == m | 1 << k) else {
                continue;
            };
            let d = i128::from(b) - i128::from(a);
            match seen {
                Some(s) if s != d => return true,
                _ => seen = Some(d),
            }
        }
    }
    false
}

/// The low `rank` bits set.
fn low_bits(rank: usize) -> u64 {
    if rank >= 64 {
        u64::MAX
    } else {
        (1u64 << rank) - 1
    }
}

/// The carry probe along `axis` at place value `place` of the level below the top:
/// the step from the lower corner compared with the first step that carries
/// across `place`.
fn carry(run: &[ConcreteView], lo: &[i64], hi: &[i64], axis: usize, place: i64) -> bool {
    let Some(top) = run.last() else {
        return false;
    };
    let n = hi[axis] - lo[axis];
    let t = top.strides[axis];
    if n < 3 || t == 0 || place <= 1 {
        return false;
    }
    let g0 = top.offset + lo.iter().zip(&top.strides).map(|(j, s)| j * s).sum::<i64>();
    // The first k with g0 + k*t and g0 + (k+1)*t in different multiples of `place`.
    let k = if t > 0 {
        let next = (g0.div_euclid(place) + 1) * place;
        (next - g0 + t - 1) / t - 1
    } else {
        let below = g0.div_euclid(place) * place;
        (g0 - below) / -t
    };
    // Compared with the first step, or with the second when the first carries.
    let plain = i64::from(k == 0);
    if k < 0 || k + 1 >= n || plain + 1 >= n {
        return false;
    }
    let mut at = lo.to_vec();
    let mut step = |k: i64| -> Option<i128> {
        at[axis] = lo[axis] + k;
        let a = eval(run, &at)?;
        at[axis] += 1;
        let b = eval(run, &at)?;
        Some(i128::from(b) - i128::from(a))
    };
    matches!((step(plain), step(k)), (Some(x), Some(y)) if x != y)
}

/// Whether `run` (at least two levels, each within the one below) is shown not
/// to be one view. `hint` is the probe to try first; it is set to the probe that
/// refuted.
pub(crate) fn refute(run: &[ConcreteView], hint: &mut u32) -> bool {
    let (Some(top), Some(below)) = (run.last(), run.len().checked_sub(2).map(|k| &run[k])) else {
        return false;
    };
    let rank = top.shape.len();
    let (mut lo, mut hi) = (Vec::with_capacity(rank), Vec::with_capacity(rank));
    for (b, e) in top.bounds() {
        if b >= e {
            return false;
        }
        lo.push(b);
        hi.push(e);
    }
    // Place values of the level below, inner to outer, without the last (its whole size).
    let mut places: Vec<i64> = Vec::with_capacity(below.shape.len());
    let mut acc = 1i64;
    for &d in below.shape.iter().rev() {
        acc = match acc.checked_mul(d) {
            Some(v) => v,
            None => break,
        };
        places.push(acc);
    }
    places.pop();
    places.retain(|&p| p > 1);
    places.dedup();
    let probes = 1 + rank * places.len();
    let mut scratch = Vec::with_capacity(rank);
    let mut run_probe = |id: usize| -> bool {
        if id == 0 {
            return corners(run, &lo, &hi, &mut scratch);
        }
        let (axis, p) = ((id - 1) / places.len(), (id - 1) % places.len());
        carry(run, &lo, &hi, axis, places[p])
    };
    let first = usize::try_from(*hint).unwrap_or(0);
    if first < probes && run_probe(first) {
        return true;
    }
    for id in (0..probes).filter(|&id| id != first) {
        if run_probe(id) {
            *hint = u32::try_from(id).unwrap_or(0);
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::refute;
    use crate::concrete::{check_stacked, merge, unravel, ConcreteView};

    /// The composition's offsets, row-major over the upper shape, by definition.
    fn table(lower: &ConcreteView, upper: &ConcreteView) -> Vec<Option<i64>> {
        let n = upper.numel();
        (0..n)
            .map(|q| {
                let l = upper.offset_of(&unravel(upper.shape(), q)).ok()??;
                lower.offset_of(&unravel(lower.shape(), l)).ok()?
            })
            .collect()
    }

    /// Whether `t` over `shape` is one view, by brute force: the valid points fill
    /// their bounding box and the offsets are affine on it.
    fn one_view(shape: &[i64], t: &[Option<i64>]) -> bool {
        let pts: Vec<(Vec<i64>, i64)> = (0..t.len())
            .filter_map(|q| Some((unravel(shape, q as i64), t[q]?)))
            .collect();
        let Some((first, f0)) = pts.first().cloned() else {
            return true;
        };
        let rank = shape.len();
        let lo: Vec<i64> = (0..rank)
            .map(|a| pts.iter().map(|p| p.0[a]).min().unwrap_or(0))
            .collect();
        let hi: Vec<i64> = (0..rank)
            .map(|a| pts.iter().map(|p| p.0[a]).max().unwrap_or(0))
            .collect();
        let volume: i64 = lo.iter().zip(&hi).map(|(l, h)| h - l + 1).product();
        if volume != pts.len() as i64 {
            return false;
        }
        let mut strides = vec![0i64; rank];
        for a in 0..rank {
            let mut next = first.clone();
            next[a] += 1;
            if let Some((_, v)) = pts.iter().find(|p| p.0 == next) {
                strides[a] = v - f0;
            }
        }
        pts.iter().all(|(p, v)| {
            *v == f0
                + (0..rank)
                    .map(|a| (p[a] - first[a]) * strides[a])
                    .sum::<i64>()
        })
    }

    fn arb_view() -> impl Strategy<Value = Option<ConcreteView>> {
        (1usize..=3)
            .prop_flat_map(|rank| {
                (
                    prop::collection::vec(1i64..=5, rank),
                    prop::collection::vec(-7i64..=7, rank),
                    -20i64..=40,
                    prop::collection::vec((0i64..=5, 0i64..=5), rank),
                    any::<bool>(),
                )
            })
            .prop_map(|(shape, strides, offset, cuts, masked)| {
                let mask: Vec<(i64, i64)> = shape
                    .iter()
                    .zip(&cuts)
                    .map(|(&d, &(x, y))| {
                        let (a, b) = (x % (d + 1), y % (d + 1));
                        (a.min(b), a.max(b))
                    })
                    .collect();
                ConcreteView::create(&shape, Some(&strides), offset, masked.then_some(&mask[..]))
                    .ok()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A refutation is never wrong: the composition is then not one view (by
        /// brute force) and `merge` refuses it.
        #[test]
        fn a_refuted_pair_is_not_one_view(lower in arb_view(), upper in arb_view(), shift in 0i64..1000) {
            let (Some(lower), Some(upper)) = (lower, upper) else { return Ok(()) };
            let Some(upper) = fitted(&upper, lower.numel(), shift) else { return Ok(()) };
            check_refuted(&lower, &upper)?;
        }
    }

    /// `upper` moved to read within `n` elements, when its valid span fits.
    fn fitted(upper: &ConcreteView, n: i64, shift: i64) -> Option<ConcreteView> {
        let (lo, hi) = upper.extent().unwrap_or_default();
        let span = hi - lo;
        if span >= n {
            return None;
        }
        let offset = upper.offset() - lo + shift % (n - span);
        ConcreteView::create(upper.shape(), Some(upper.strides()), offset, upper.mask()).ok()
    }

    /// When `refute` refutes the pair, the composition is not one view and `merge`
    /// refuses it; returns whether it refuted.
    fn check_refuted(lower: &ConcreteView, upper: &ConcreteView) -> Result<bool, TestCaseError> {
        check_stacked(lower, upper).map_err(|e| TestCaseError::fail(e.to_string()))?;
        {
            let (lower, upper) = (lower.clone(), upper.clone());
            let pair = [lower.clone(), upper.clone()];
            let mut hint = 0;
            if refute(&pair, &mut hint) {
                prop_assert!(
                    !one_view(upper.shape(), &table(&lower, &upper)),
                    "{} over {}",
                    upper,
                    lower
                );
                prop_assert_eq!(merge(&lower, &upper).ok(), Some(None));
                // The remembered probe refutes it again on its own.
                let mut again = hint;
                prop_assert!(refute(&pair, &mut again));
                prop_assert_eq!(again, hint);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every pair of a small family: refutations are sound, and most of the
    /// pairs that are not one view are refuted.
    #[test]
    fn refutations_of_a_family_are_sound_and_frequent() {
        let lowers = [
            ConcreteView::create(&[4, 5], None, 0, None),
            ConcreteView::create(&[4, 5], Some(&[1, 4]), 0, None),
            ConcreteView::create(&[4, 5], Some(&[5, 1]), 0, Some(&[(1, 4), (0, 5)])),
            ConcreteView::create(
                &[2, 3, 4],
                Some(&[1, 2, 6]),
                0,
                Some(&[(0, 2), (1, 3), (0, 3)]),
            ),
        ];
        let (mut refuted, mut not_one) = (0, 0);
        for lower in lowers {
            let lower = lower.expect("lower");
            for t0 in -4i64..=4 {
                for t1 in -4i64..=4 {
                    for mask in [None, Some([(0, 2), (1, 3)])] {
                        let upper = ConcreteView::create(
                            &[3, 3],
                            Some(&[t0, t1]),
                            0,
                            mask.as_ref().map(|m| &m[..]),
                        )
                        .expect("upper");
                        let Some(upper) = fitted(&upper, lower.numel(), 0) else {
                            continue;
                        };
                        if !one_view(upper.shape(), &table(&lower, &upper)) {
                            not_one += 1;
                        }
                        if check_refuted(&lower, &upper).expect("sound") {
                            refuted += 1;
                        }
                    }
                }
            }
        }
        assert!(not_one > 100, "{not_one} pairs are not one view");
        assert!(2 * refuted > not_one, "{refuted} of {not_one} refuted");
    }

    /// The stacks a traced attention block keeps apart are refuted at every size
    /// where they are not one view (merged heads, padded windows, a causal mask).
    #[test]
    fn attention_stacks_are_refuted() {
        let view = |shape: &[i64], strides: &[i64], offset: i64, mask: Option<&[(i64, i64)]>| {
            ConcreteView::create(shape, Some(strides), offset, mask).expect("view")
        };
        for s in 2..=9i64 {
            for p in 0..=3i64 {
                let heads = [
                    view(&[2, s, 12, 64], &[768 * s, 64, 64 * s, 1], 0, None),
                    view(&[2, s, 768], &[768 * s, 768, 1], 0, None),
                ];
                let conv = [
                    view(
                        &[2, 4, s + 2],
                        &[4 * s, s, 1],
                        -1,
                        Some(&[(0, 2), (0, 4), (1, s + 1)]),
                    ),
                    view(&[2, 4, s, 3], &[4 * s + 8, s + 2, 1, 1], 0, None),
                ];
                let w = p + s;
                let causal = [
                    view(&[s, w + s], &[w, 1], 0, Some(&[(0, s), (0, w)])),
                    view(&[s, w], &[w + s - 1, 1], s - 1, None),
                ];
                for (name, pair) in [("heads", &heads), ("conv", &conv), ("causal", &causal)] {
                    let mut hint = 0;
                    assert!(refute(pair, &mut hint), "{name} at s = {s}, p = {p}");
                    assert_eq!(merge(&pair[0], &pair[1]).ok(), Some(None), "{name}");
                }
            }
        }
    }
}
