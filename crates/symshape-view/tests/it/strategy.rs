//! Random cases for the property tests.

use proptest::prelude::*;
use symshape_view::concrete::ConcreteView;

/// Raw fields of a random view: shape, strides, offset, optional mask.
#[derive(Clone, Debug)]
pub struct Raw {
    pub shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub offset: i64,
    pub mask: Option<Vec<(i64, i64)>>,
}

impl Raw {
    /// The concrete view of these fields, or `None` where `ConcreteView::create`
    /// refuses them.
    pub fn concrete_view(&self) -> Option<ConcreteView> {
        ConcreteView::create(
            &self.shape,
            Some(&self.strides),
            self.offset,
            self.mask.as_deref(),
        )
        .ok()
    }
}

pub fn arb_raw(max_rank: usize, min_size: i64, max_size: i64) -> impl Strategy<Value = Raw> {
    (0..=max_rank)
        .prop_flat_map(move |rank| {
            (
                prop::collection::vec(min_size..=max_size, rank),
                prop::collection::vec(-6i64..=6, rank),
                -12i64..=12,
                prop::collection::vec((0i64..=100, 0i64..=100), rank),
                0u8..4,
            )
        })
        .prop_map(|(shape, strides, offset, cuts, masked)| {
            let mask = (masked == 0).then(|| {
                shape
                    .iter()
                    .zip(&cuts)
                    .map(|(&d, &(x, y))| {
                        let (a, b) = (x % (d + 1), y % (d + 1));
                        (a.min(b), a.max(b))
                    })
                    .collect()
            });
            Raw {
                shape,
                strides,
                offset,
                mask,
            }
        })
}

/// A random shape with `numel` elements (a shuffled grouping of its prime
/// factors, with size-1 axes sprinkled in), driven by `seed`.
pub fn factor_shape(numel: i64, seed: &[u32]) -> Vec<i64> {
    let mut primes = Vec::new();
    let mut n = numel;
    let mut p = 2;
    while n > 1 {
        while n % p == 0 {
            primes.push(p);
            n /= p;
        }
        p += 1;
    }
    let mut s = seed.iter().copied().cycle();
    let mut next = move || s.next().unwrap_or(0) as usize;
    for i in (1..primes.len()).rev() {
        primes.swap(i, next() % (i + 1));
    }
    let mut shape = Vec::new();
    let mut cur = 1;
    for (i, &q) in primes.iter().enumerate() {
        cur *= q;
        if i + 1 == primes.len() || next() % 2 == 0 {
            shape.push(cur);
            cur = 1;
        }
    }
    if numel == 0 {
        shape.push(0);
        if next() % 2 == 0 {
            shape.push(1 + (next() % 3) as i64);
        }
    }
    for _ in 0..next() % 3 {
        let at = next() % (shape.len() + 1);
        shape.insert(at, 1);
    }
    if shape.len() > 6 {
        shape.retain(|&d| d != 1);
    }
    shape
}
