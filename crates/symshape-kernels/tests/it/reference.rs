//! The naive, obviously right reference: one element at a time, with its own index
//! arithmetic on the views' fields, stacks unflattened by explicit division.

use symshape_kernels::{ConcreteView, Element};

/// Offset of `idx` in `l` (no mask check).
pub fn linear_index(l: &ConcreteView, idx: &[usize]) -> isize {
    let mut off = l.offset() as isize;
    for (&i, &s) in idx.iter().zip(l.strides()) {
        off += i as isize * s as isize;
    }
    off
}

/// Whether `idx` is inside the mask of `l`.
pub fn is_valid(l: &ConcreteView, idx: &[usize]) -> bool {
    match l.mask() {
        None => true,
        Some(m) => idx
            .iter()
            .zip(m)
            .all(|(&i, &(b, e))| b as usize <= i && i < e as usize),
    }
}

/// The shape of `l` as `usize`s.
pub fn dims(l: &ConcreteView) -> Vec<usize> {
    l.shape().iter().map(|&d| d as usize).collect()
}

/// Every index of `shape`, row-major.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut res = vec![vec![]];
    for &n in shape {
        let mut next = Vec::new();
        for r in &res {
            for i in 0..n {
                let mut v = r.clone();
                v.push(i);
                next.push(v);
            }
        }
        res = next;
    }
    res
}

/// Row-major unflattening of `l` into `shape`.
pub fn unravel(mut l: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for k in (0..shape.len()).rev() {
        idx[k] = l % shape[k];
        l /= shape[k];
    }
    idx
}

/// Buffer offset of `idx` of the top of `levels` (bottom first), or `None` if invalid anywhere.
pub fn stack_offset(levels: &[ConcreteView], idx: &[usize]) -> Option<usize> {
    let mut idx = idx.to_vec();
    for k in (0..levels.len()).rev() {
        let l = &levels[k];
        if !is_valid(l, &idx) {
            return None;
        }
        let off = linear_index(l, &idx);
        if k == 0 {
            return Some(usize::try_from(off).expect("reference: negative offset"));
        }
        idx = unravel(
            usize::try_from(off).expect("reference: negative linear index"),
            &dims(&levels[k - 1]),
        );
    }
    unreachable!()
}

/// Materialize, element by element.
pub fn materialize<T: Element>(buf: &[T], levels: &[ConcreteView], pad: T) -> Vec<T> {
    let shape = dims(levels.last().unwrap());
    indices(&shape)
        .iter()
        .map(|idx| stack_offset(levels, idx).map_or(pad, |o| buf[o]))
        .collect()
}

/// Copy into `dst` of `out`, element by element, from already materialized source values.
pub fn copy_values<T: Element>(out: &mut [T], dst: &ConcreteView, values: &[T]) {
    for (idx, &v) in indices(&dims(dst)).iter().zip(values) {
        if is_valid(dst, idx) {
            out[linear_index(dst, idx) as usize] = v;
        }
    }
}

/// Whether two valid indices of `l` share an offset, by enumeration.
pub fn overlaps(l: &ConcreteView) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    indices(&dims(l))
        .iter()
        .filter(|i| is_valid(l, i))
        .any(|i| !seen.insert(linear_index(l, i)))
}
