//! Strategies for random views, stacks and buffers.

use proptest::prelude::*;
use symshape_kernels::{ConcreteStack, ConcreteView};

/// The view of `shape` with `strides` at `offset`, masked by `mask` when given.
pub fn view(
    shape: &[usize],
    strides: &[isize],
    offset: isize,
    mask: Option<&[(usize, usize)]>,
) -> Option<ConcreteView> {
    let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let strides: Vec<i64> = strides.iter().map(|&t| t as i64).collect();
    let mask: Option<Vec<(i64, i64)>> =
        mask.map(|m| m.iter().map(|&(b, e)| (b as i64, e as i64)).collect());
    ConcreteView::create(&shape, Some(&strides), offset as i64, mask.as_deref()).ok()
}

/// A random strided layout (strides in -3..=3, zero included) of up to 3 axes whose valid
/// elements fit `0..space`, with an optional mask. `None` when it cannot fit.
pub fn random_layout(space: usize) -> impl Strategy<Value = ConcreteView> {
    (
        prop::collection::vec((1usize..5, -3isize..=3), 0..=3),
        any::<u32>(),
        any::<bool>(),
        prop::collection::vec((0usize..5, 0usize..5), 3),
    )
        .prop_filter_map("does not fit", move |(axes, pick, masked, m)| {
            let shape: Vec<usize> = axes.iter().map(|a| a.0).collect();
            let strides: Vec<isize> = axes.iter().map(|a| a.1).collect();
            let (mut lo, mut hi) = (0isize, 0isize);
            for (&n, &s) in shape.iter().zip(&strides) {
                let span = s * (n as isize - 1);
                lo += span.min(0);
                hi += span.max(0);
            }
            let room = space as isize - 1 - (hi - lo);
            if room < 0 {
                return None;
            }
            let offset = -lo + (pick as isize % (room + 1));
            if !masked {
                return view(&shape, &strides, offset, None);
            }
            let mask: Vec<(usize, usize)> = shape
                .iter()
                .zip(&m)
                .map(|(&n, &(a, b))| {
                    let (a, b) = (a.min(n), b.min(n));
                    (a.min(b), a.max(b))
                })
                .collect();
            view(&shape, &strides, offset, Some(&mask))
        })
}

/// A reshape / permute / flip / slice of the row-major element space `0..numel`: the kind of
/// layout views produce, often mergeable with the layout below.
pub fn structured_layout(numel: usize) -> impl Strategy<Value = ConcreteView> {
    (
        prop::collection::vec(0usize..3, 8),
        prop::collection::vec(any::<u8>(), 3),
        prop::collection::vec((any::<bool>(), 0usize..3, 1usize..3), 3),
        any::<bool>(),
        prop::collection::vec((0usize..4, 0usize..4), 3),
    )
        .prop_map(move |(dims, keys, edits, masked, m)| {
            // Split the prime factors of numel among up to 3 axes.
            let mut shape = [1usize; 3];
            let (mut n, mut p, mut k) = (numel, 2, 0);
            while n > 1 {
                if n % p == 0 {
                    shape[dims[k % dims.len()]] *= p;
                    n /= p;
                    k += 1;
                } else {
                    p += 1;
                }
            }
            if numel == 0 {
                shape[0] = 0;
            }
            let mut strides = [0isize; 3];
            let mut acc = 1isize;
            for j in (0..3).rev() {
                strides[j] = acc;
                acc *= shape[j] as isize;
            }
            let mut perm: Vec<usize> = (0..3).collect();
            perm.sort_by_key(|&j| keys[j]);
            let mut shape: Vec<usize> = perm.iter().map(|&j| shape[j]).collect();
            let mut strides: Vec<isize> = perm.iter().map(|&j| strides[j]).collect();
            let mut offset = 0isize;
            for j in 0..3 {
                let (flip, start, step) = edits[j];
                if shape[j] == 0 {
                    continue;
                }
                if flip {
                    offset += strides[j] * (shape[j] as isize - 1);
                    strides[j] = -strides[j];
                }
                let start = start.min(shape[j] - 1);
                offset += strides[j] * start as isize;
                shape[j] = (shape[j] - start).div_ceil(step);
                strides[j] *= step as isize;
            }
            if !masked {
                return view(&shape, &strides, offset, None).unwrap();
            }
            let mask: Vec<(usize, usize)> = shape
                .iter()
                .zip(&m)
                .map(|(&n, &(a, b))| (a.min(n), (a + b).min(n)))
                .collect();
            view(&shape, &strides, offset, Some(&mask)).unwrap()
        })
}

/// Either kind of layout over `0..space`.
pub fn any_layout(space: usize) -> BoxedStrategy<ConcreteView> {
    prop_oneof![random_layout(space), structured_layout(space)].boxed()
}

/// A random stack of 1 to 3 levels over a buffer of `len` elements, kept unmerged so the
/// kernels see stacks of several levels.
pub fn stack(len: usize) -> BoxedStrategy<ConcreteStack> {
    any_layout(len)
        .prop_flat_map(|bottom| {
            let n = bottom.numel() as usize;
            (Just(bottom), any_layout(n.max(1)))
        })
        .prop_flat_map(|(bottom, mid)| {
            let n = mid.numel() as usize;
            (Just(bottom), Just(mid), any_layout(n.max(1)), 1usize..=3)
        })
        .prop_filter_map("invalid stack", |(bottom, mid, top, levels)| {
            let mut ls = vec![bottom, mid, top];
            ls.truncate(levels);
            ConcreteStack::unmerged(ls).ok()
        })
        .boxed()
}

/// A buffer of `len` distinct values.
pub fn buffer(len: usize) -> Vec<i64> {
    (0..len as i64).map(|i| i * 10 + 1).collect()
}

/// The view of `shape` with `strides` at `offset` (panics on an invalid view: tests only).
pub fn lay(shape: &[usize], strides: &[isize], offset: isize) -> ConcreteView {
    view(shape, strides, offset, None).expect("valid view")
}

/// The same view with a mask of valid intervals, one per axis.
pub trait WithMask {
    /// `None` when the mask does not fit the shape.
    fn with_mask(&self, mask: &[(usize, usize)]) -> Option<ConcreteView>;
}

impl WithMask for ConcreteView {
    fn with_mask(&self, mask: &[(usize, usize)]) -> Option<ConcreteView> {
        let shape: Vec<usize> = self.shape().iter().map(|&d| d as usize).collect();
        let strides: Vec<isize> = self.strides().iter().map(|&t| t as isize).collect();
        view(&shape, &strides, self.offset() as isize, Some(mask))
    }
}
