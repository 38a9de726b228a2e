//! The naive reference model: an explicit table of offsets, ops applied element by element.

use symshape_view::IndexItem;

/// Offsets of every element in row-major order, `None` for invalid ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub shape: Vec<i64>,
    pub table: Vec<Option<i64>>,
}

pub fn numel(shape: &[i64]) -> i64 {
    shape.iter().product()
}

/// Every index of `shape` in row-major order.
pub fn indices(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut res = vec![vec![]];
    for &d in shape {
        let mut next = Vec::new();
        for prefix in &res {
            for i in 0..d {
                let mut p = prefix.clone();
                p.push(i);
                next.push(p);
            }
        }
        res = next;
    }
    res
}

pub fn ravel(shape: &[i64], idx: &[i64]) -> usize {
    let mut acc = 0i64;
    for (&d, &i) in shape.iter().zip(idx) {
        acc = acc * d + i;
    }
    acc as usize
}

impl Model {
    /// The table of a view given by raw fields, computed by the defining formula.
    pub fn of(shape: &[i64], strides: &[i64], offset: i64, mask: Option<&[(i64, i64)]>) -> Model {
        let table = indices(shape)
            .into_iter()
            .map(|idx| {
                let valid = match mask {
                    None => true,
                    Some(m) => idx.iter().zip(m).all(|(&i, &(b, e))| b <= i && i < e),
                };
                valid.then(|| offset + idx.iter().zip(strides).map(|(i, t)| i * t).sum::<i64>())
            })
            .collect();
        Model {
            shape: shape.to_vec(),
            table,
        }
    }

    pub fn get(&self, idx: &[i64]) -> Option<i64> {
        self.table[ravel(&self.shape, idx)]
    }

    pub fn map(&self, shape: Vec<i64>, f: impl Fn(&[i64]) -> Option<Vec<i64>>) -> Model {
        let table = indices(&shape)
            .into_iter()
            .map(|idx| f(&idx).and_then(|src| self.get(&src)))
            .collect();
        Model { shape, table }
    }

    /// The diagonal of axes `a` and `b` starting `offset` above the main one (below
    /// it when negative), as a last axis after the other axes in their order.
    pub fn diagonal(&self, offset: i64, a: usize, b: usize) -> Model {
        let rank = self.shape.len();
        let (r0, c0) = if offset >= 0 {
            (0, offset)
        } else {
            (-offset, 0)
        };
        let len = (self.shape[a] - r0).min(self.shape[b] - c0).max(0);
        let keep: Vec<usize> = (0..rank).filter(|&x| x != a && x != b).collect();
        let mut out: Vec<i64> = keep.iter().map(|&x| self.shape[x]).collect();
        out.push(len);
        self.map(out, |idx| {
            let mut src = vec![0; rank];
            for (k, &x) in keep.iter().enumerate() {
                src[x] = idx[k];
            }
            let t = idx[idx.len() - 1];
            src[a] = t + r0;
            src[b] = t + c0;
            Some(src)
        })
    }

    pub fn reshape(&self, shape: &[i64]) -> Model {
        Model {
            shape: shape.to_vec(),
            table: self.table.clone(),
        }
    }

    pub fn permute(&self, axes: &[usize]) -> Model {
        let shape = axes.iter().map(|&a| self.shape[a]).collect();
        self.map(shape, |idx| {
            let mut src = vec![0; idx.len()];
            for (i, &a) in axes.iter().enumerate() {
                src[a] = idx[i];
            }
            Some(src)
        })
    }

    pub fn expand(&self, shape: &[i64]) -> Model {
        let rank = self.shape.len();
        let old = self.shape.clone();
        self.map(shape.to_vec(), move |idx| {
            Some(if rank == 0 {
                vec![]
            } else {
                idx.iter()
                    .zip(&old)
                    .map(|(&i, &d)| if d == 1 { 0 } else { i })
                    .collect()
            })
        })
    }

    pub fn shrink(&self, bounds: &[(i64, i64)]) -> Model {
        let shape = bounds.iter().map(|&(s, e)| e - s).collect();
        self.map(shape, |idx| {
            Some(idx.iter().zip(bounds).map(|(&i, &(s, _))| i + s).collect())
        })
    }

    pub fn pad(&self, padding: &[(i64, i64)]) -> Model {
        let shape = self
            .shape
            .iter()
            .zip(padding)
            .map(|(&d, &(b, a))| d + b + a)
            .collect();
        let old = self.shape.clone();
        self.map(shape, move |idx| {
            let src: Vec<i64> = idx.iter().zip(padding).map(|(&i, &(b, _))| i - b).collect();
            src.iter()
                .zip(&old)
                .all(|(&i, &d)| 0 <= i && i < d)
                .then_some(src)
        })
    }

    pub fn flip(&self, flags: &[bool]) -> Model {
        let old = self.shape.clone();
        self.map(self.shape.clone(), move |idx| {
            Some(
                idx.iter()
                    .zip(&old)
                    .zip(flags)
                    .map(|((&i, &d), &f)| if f { d - 1 - i } else { i })
                    .collect(),
            )
        })
    }

    /// Per axis: `Some((first, step))` keeps the axis with the given size, `None` drops
    /// a selected index; `new_axes` lists output positions of inserted axes.
    pub fn select(&self, picks: &[Pick]) -> Model {
        let mut shape = Vec::new();
        for p in picks {
            match *p {
                Pick::Int(_) => {}
                Pick::Range { count, .. } => shape.push(count),
                Pick::New => shape.push(1),
            }
        }
        let picks = picks.to_vec();
        self.map(shape, move |idx| {
            let mut src = Vec::new();
            let mut k = 0;
            for p in &picks {
                match *p {
                    Pick::Int(i) => src.push(i),
                    Pick::Range { first, step, .. } => {
                        src.push(first + idx[k] * step);
                        k += 1;
                    }
                    Pick::New => k += 1,
                }
            }
            Some(src)
        })
    }

    /// The upper table read through this (lower) table's row-major element space.
    pub fn compose(&self, upper: &Model) -> Model {
        Model {
            shape: upper.shape.clone(),
            table: upper
                .table
                .iter()
                .map(|o| o.and_then(|l| self.table[l as usize]))
                .collect(),
        }
    }

    /// Brute-force representability: is the valid set a box (or empty, outside rank 0)
    /// and the offset affine on it? Returns the table of the unique such view, rebuilt
    /// from strides, to compare with.
    pub fn one_view(&self) -> Option<OneView> {
        let rank = self.shape.len();
        let all = indices(&self.shape);
        let valid: Vec<&Vec<i64>> = all.iter().filter(|i| self.get(i).is_some()).collect();
        if valid.is_empty() {
            return (rank > 0 || numel(&self.shape) == 0)
                .then(|| (vec![0; rank], 0, vec![(0, 0); rank]));
        }
        let lo: Vec<i64> = (0..rank)
            .map(|a| valid.iter().map(|i| i[a]).min().unwrap())
            .collect();
        let hi: Vec<i64> = (0..rank)
            .map(|a| valid.iter().map(|i| i[a]).max().unwrap() + 1)
            .collect();
        let volume: i64 = lo.iter().zip(&hi).map(|(l, h)| h - l).product();
        if volume != valid.len() as i64 {
            return None;
        }
        let base = self.get(&lo).unwrap();
        let strides: Vec<i64> = (0..rank)
            .map(|a| {
                if hi[a] - lo[a] < 2 {
                    return 0;
                }
                let mut j = lo.clone();
                j[a] += 1;
                self.get(&j).unwrap() - base
            })
            .collect();
        let offset = base - lo.iter().zip(&strides).map(|(l, s)| l * s).sum::<i64>();
        for i in valid {
            if self.get(i) != Some(offset + i.iter().zip(&strides).map(|(x, s)| x * s).sum::<i64>())
            {
                return None;
            }
        }
        Some((strides, offset, lo.into_iter().zip(hi).collect()))
    }
}

/// Strides, offset and valid box of the one view a table is equal to.
/// The indices NumPy's slice `start:stop:step` (`step` not 0) selects from an
/// axis of size `d`, found by walking the axis.
pub fn py_slice(d: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<i64> {
    let fix = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v + d } else { v };
        v.clamp(lo, hi)
    };
    let mut res = Vec::new();
    if step > 0 {
        let mut i = start.map_or(0, |v| fix(v, 0, d));
        let end = stop.map_or(d, |v| fix(v, 0, d));
        while i < end {
            res.push(i);
            i += step;
        }
    } else {
        let mut i = start.map_or(d - 1, |v| fix(v, -1, d - 1));
        let end = stop.map_or(-1, |v| fix(v, -1, d - 1));
        while i > end {
            res.push(i);
            i += step;
        }
    }
    res
}

pub type OneView = (Vec<i64>, i64, Vec<(i64, i64)>);

/// One axis of a model selection.
#[derive(Clone, Copy, Debug)]
pub enum Pick {
    Int(i64),
    Range { first: i64, count: i64, step: i64 },
    New,
}

/// Random NumPy index for `shape`, and the model's picks for it.
pub fn random_index(shape: &[i64], p: &[u32]) -> (Vec<IndexItem>, Vec<Pick>) {
    let mut items = Vec::new();
    let mut picks = Vec::new();
    let mut k = 0;
    let mut next = |m: u32| {
        k += 1;
        p[k % p.len()] % m
    };
    let use_ellipsis = next(3) == 0;
    let last = if use_ellipsis {
        next(shape.len() as u32 + 1) as usize
    } else {
        shape.len()
    };
    let mut axis = 0;
    while axis < last {
        if next(5) == 0 {
            items.push(IndexItem::NewAxis);
            picks.push(Pick::New);
        }
        let d = shape[axis];
        if d > 0 && next(3) == 0 {
            let i = next(d as u32) as i64;
            let i = if next(2) == 0 { i - d } else { i };
            items.push(IndexItem::Int(i));
            picks.push(Pick::Int(if i < 0 { i + d } else { i }));
        } else {
            let bound = |x: u32| (x as i64 % (2 * d + 3)) - d - 1;
            let start = (next(2) == 0).then(|| bound(next(1000)));
            let stop = (next(2) == 0).then(|| bound(next(1000)));
            let step = [1i64, 1, 2, 3, -1, -2][next(6) as usize];
            let sel = py_slice(d, start, stop, step);
            items.push(IndexItem::Slice {
                start,
                stop,
                step: Some(step),
            });
            picks.push(Pick::Range {
                first: sel.first().copied().unwrap_or(0),
                count: sel.len() as i64,
                step,
            });
        }
        axis += 1;
    }
    if use_ellipsis {
        items.push(IndexItem::Ellipsis);
        for &d in &shape[last..] {
            picks.push(Pick::Range {
                first: 0,
                count: d,
                step: 1,
            });
        }
        // Whatever follows the ellipsis: nothing, so the ellipsis covers the rest.
    } else {
        for &d in &shape[last..] {
            picks.push(Pick::Range {
                first: 0,
                count: d,
                step: 1,
            });
        }
    }
    (items, picks)
}
