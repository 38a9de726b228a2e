//! The loop-nest rules of `symshape_view::nest` on its `Loop`s: a merged nest visits the
//! same offsets as the nest it came from (index tables), exact and proven decisions agree on
//! constants and on steps scaled by a symbol, a loop without fixed steps merges with
//! nothing, and intervals and cells match brute force.

use proptest::prelude::*;
use symshape::{Expr, Scope, SymbolSpec};
use symshape_view::nest::{self, Exact, Loop, Proven, Steps};

/// A bound loop of two operands.
type Bound = Loop<usize, [isize; 2]>;

/// A symbolic loop of `K` operands.
type SymAxis<const K: usize> = Loop<Expr, [Expr; K]>;

/// The offsets of every index of a nest in row-major order, per operand: the index table.
fn offsets(axes: &[Bound]) -> Vec<[isize; 2]> {
    let mut res = vec![[0, 0]];
    for &Loop {
        extent: n,
        steps: s,
    } in axes
    {
        let mut next = Vec::with_capacity(res.len() * n);
        for o in &res {
            for i in 0..n as isize {
                next.push([o[0] + i * s[0], o[1] + i * s[1]]);
            }
        }
        res = next;
    }
    res
}

/// Nests of up to four axes whose steps are often contiguous: each operand's steps are the
/// row-major strides of a random shape at the same extents, some scaled or replaced.
fn arb_nest() -> impl Strategy<Value = Vec<Bound>> {
    prop::collection::vec((1usize..5, [0isize..4, 0isize..4]), 1..5).prop_map(|axes| {
        let mut acc = [1isize, 1];
        let mut res: Vec<Bound> = Vec::with_capacity(axes.len());
        for &(n, tweak) in axes.iter().rev() {
            let mut s = [0; 2];
            for op in 0..2 {
                s[op] = match tweak[op] {
                    0 => 5,
                    3 => -acc[op],
                    _ => acc[op],
                };
                acc[op] *= n as isize;
            }
            res.push(Loop {
                extent: n,
                steps: s,
            });
        }
        res.reverse();
        res
    })
}

/// `axes` as symbolic axes, every step multiplied by `scale`.
fn symbolic(axes: &[Bound], scale: Expr) -> Vec<SymAxis<2>> {
    axes.iter()
        .map(|l| Loop {
            extent: Expr::from(l.extent as i64),
            steps: l.steps.map(|x| Expr::from(x as i64) * scale),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Merging keeps the offsets every index reads, in order; the proven rule merges the same
    /// axes as the exact one, on constants and on steps scaled by a symbol `s >= 1`.
    #[test]
    fn merged_nests_read_the_same_offsets(axes in arb_nest()) {
        let mut merged = axes.clone();
        nest::merge_contiguous(&Exact, &mut merged);
        prop_assert_eq!(offsets(&merged), offsets(&axes));
        for w in merged.windows(2) {
            let contiguous = (0..2).all(|op| w[1].steps[op] * w[1].extent as isize == w[0].steps[op]);
            prop_assert!(!contiguous, "left unmerged: {:?}", merged);
        }

        let mut cx = Scope::new();
        let s = cx.declare(&SymbolSpec::new("s").range(1, 1000)).expect("s");
        let settled = |axes: Vec<SymAxis<2>>| -> Vec<SymAxis<2>> {
            axes.into_iter()
                .map(|a| Loop {
                    extent: cx.simplify(a.extent),
                    steps: a.steps.map(|x| cx.simplify(x)),
                })
                .collect()
        };
        for scale in [Expr::from(1), s] {
            let mut sym = symbolic(&axes, scale);
            nest::merge_contiguous(&Proven(&cx), &mut sym);
            prop_assert_eq!(settled(sym), settled(symbolic(&merged, scale)));
        }
    }

    /// The interval is exactly the indices `0..n` within every end (or an empty one at
    /// `lo`), and the proven rule gives the same constants.
    #[test]
    fn valid_intervals_hold_exactly_the_indices_within_every_end(
        n in 0usize..12,
        lows in prop::collection::vec(0usize..14, 0..3),
        highs in prop::collection::vec(0usize..14, 0..3),
    ) {
        let (lo, hi) = nest::valid_interval(&Exact, n, lows.iter().copied(), highs.iter().copied());
        let inside: Vec<usize> = (0..n)
            .filter(|&i| lows.iter().all(|&l| i >= l) && highs.iter().all(|&h| i < h))
            .collect();
        prop_assert!(lo <= hi && hi <= n);
        prop_assert_eq!((lo..hi).collect::<Vec<_>>(), inside);

        let cx = Scope::new();
        let e = |x: usize| Expr::from(x as i64);
        let (slo, shi) = nest::valid_interval(
            &Proven(&cx),
            e(n),
            lows.iter().map(|&x| e(x)),
            highs.iter().map(|&x| e(x)),
        );
        prop_assert_eq!((slo, shi), (e(lo), e(hi)));
    }

    /// Cells tile the index space in row-major order, and each lies inside every box or
    /// outside it.
    #[test]
    fn cells_tile_the_space_without_crossing_a_box(
        shape in prop::collection::vec(1usize..6, 0..4),
        cuts in prop::collection::vec(prop::collection::vec((0usize..7, 0usize..7), 4), 0..3),
    ) {
        let boxes: Vec<Vec<(usize, usize)>> = cuts
            .iter()
            .map(|b| {
                b.iter()
                    .zip(&shape)
                    .map(|(&(x, y), &n)| (x.min(y).min(n), x.max(y).min(n)))
                    .collect()
            })
            .collect();
        let refs: Vec<&[(usize, usize)]> = boxes.iter().map(Vec::as_slice).collect();
        let cells = nest::cells(&shape, &refs, |n| Ok::<_, ()>(Vec::with_capacity(n)))
            .expect("cells");
        let mut seen = Vec::new();
        for c in &cells {
            for b in &boxes {
                let inside = c.iter().zip(b).all(|(&(x, y), &(p, q))| p <= x && y <= q);
                let apart = c.iter().zip(b).any(|(&(x, y), &(p, q))| y <= p || q <= x);
                prop_assert!(inside || apart, "cell {:?} crosses box {:?}", c, b);
            }
            let mut points: Vec<Vec<usize>> = vec![Vec::new()];
            for &(x, y) in c {
                points = points
                    .into_iter()
                    .flat_map(|p| (x..y).map(move |i| [p.clone(), vec![i]].concat()))
                    .collect();
            }
            seen.extend(points);
        }
        seen.sort();
        let mut all: Vec<Vec<usize>> = vec![Vec::new()];
        for &n in &shape {
            all = all
                .into_iter()
                .flat_map(|p| (0..n).map(move |i| [p.clone(), vec![i]].concat()))
                .collect();
        }
        prop_assert_eq!(seen, all);
        let mut sorted = cells.clone();
        sorted.sort();
        prop_assert_eq!(sorted, cells);
    }
}

#[test]
fn a_symbolic_merge_needs_a_proof() {
    let (cx, [n, m]) = crate::scope_with(["n 1..=64", "m 1..=64"]);
    let merges = |steps: [Expr; 2]| {
        let mut axes: Vec<SymAxis<1>> = vec![
            Loop {
                extent: n,
                steps: [steps[0]],
            },
            Loop {
                extent: m,
                steps: [steps[1]],
            },
        ];
        nest::merge_contiguous(&Proven(&cx), &mut axes);
        axes.len() == 1
    };
    assert!(merges([m, Expr::from(1)]));
    // Equal only where `n == m`: not proven, so not merged.
    assert!(!merges([n, Expr::from(1)]));
    assert!(!merges([m, Expr::from(2)]));
}

#[test]
fn mask_bounds_read_the_ends_of_each_index() {
    let (cx, [n, i0, i1]) = crate::scope_with(["n 1..=64", "i0 0..=63", "i1 0..=63"]);
    let valid = i0
        .ge(1)
        .and(i0.lt(n))
        .and(i1.equals(3))
        .and((i0 + i1).lt(5));
    let (ends, rest) = nest::mask_bounds(cx.simplify_cond(valid), &[i0, i1]);
    let text = |v: &[Expr]| {
        v.iter()
            .map(|e| cx.simplify(*e).to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(text(&ends[0].lows), ["1"]);
    assert_eq!(text(&ends[0].highs), ["n"]);
    assert_eq!(text(&ends[1].lows), ["3"]);
    assert_eq!(text(&ends[1].highs), ["4"]);
    // `i0 + i1 < 5` bounds two indices: left to the caller.
    assert_eq!(rest.len(), 1);
}

#[test]
fn a_row_major_nest_is_one_loop() {
    let nest = |axes: &[(usize, [isize; 2])]| -> Vec<Bound> {
        axes.iter()
            .map(|&(extent, steps)| Loop { extent, steps })
            .collect()
    };
    let mut axes = nest(&[(3, [8, 4]), (2, [4, 2]), (4, [1, -1])]);
    nest::merge_contiguous(&Exact, &mut axes);
    assert_eq!(axes, nest(&[(6, [4, 2]), (4, [1, -1])]));
    let mut axes = nest(&[(3, [8, 8]), (2, [4, 4]), (4, [1, 1])]);
    nest::merge_contiguous(&Exact, &mut axes);
    assert_eq!(axes, nest(&[(24, [1, 1])]));
}

/// Steps that may be unknown, with the number of the axis they were read on (the form
/// codegen merges: the loop's last axis follows the merges).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tagged {
    axis: usize,
    steps: Option<Vec<Expr>>,
}

impl Steps for Tagged {
    type Step = Expr;

    fn steps(&self) -> Option<&[Expr]> {
        self.steps.as_deref()
    }
}

#[test]
fn a_loop_without_fixed_steps_merges_with_nothing() {
    let (cx, [n, m]) = crate::scope_with(["n 1..=64", "m 1..=64"]);
    let tagged = |axis: usize, steps: Option<Vec<Expr>>| Tagged { axis, steps };
    let row_major = |unknown: Option<usize>| {
        let mut loops = vec![
            Loop {
                extent: Expr::from(2),
                steps: tagged(0, Some(vec![n * m])),
            },
            Loop {
                extent: n,
                steps: tagged(1, Some(vec![m])),
            },
            Loop {
                extent: m,
                steps: tagged(2, Some(vec![Expr::from(1)])),
            },
        ];
        if let Some(k) = unknown {
            loops[k].steps.steps = None;
        }
        nest::merge_contiguous(&Proven(&cx), &mut loops);
        loops
            .iter()
            .map(|l| (cx.simplify(l.extent).to_string(), l.steps.axis))
            .collect::<Vec<_>>()
    };
    // Whole: one loop over every index, ending at the last axis.
    assert_eq!(row_major(None), [(cx.simplify(n * m * 2).to_string(), 2)]);
    // The middle loop's steps unknown: nothing merges across it.
    assert_eq!(
        row_major(Some(1)),
        [("2".to_string(), 0), (n.to_string(), 1), (m.to_string(), 2)]
    );
    // The inner loop's steps unknown: the outer two merge, ending at axis 1.
    assert_eq!(
        row_major(Some(2)),
        [(cx.simplify(n * 2).to_string(), 1), (m.to_string(), 2)]
    );
}
