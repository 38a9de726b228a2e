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
