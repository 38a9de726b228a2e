//! `nest::Loop`, the one loop type of both planners' nests: a nest of loops merges exactly
//! as the pair form of the same axes (bound and proven), a loop without fixed steps merges
//! with nothing, and a merged loop carries the inner loop's steps.

use proptest::prelude::*;
use symshape::{Expr, Scope, SymbolSpec};
use symshape_view::nest::{self, Exact, Loop, Proven, Steps};

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

/// Nests of up to four axes whose steps are often contiguous (row-major strides of the
/// extents, some replaced by 5 or negated), as pairs.
fn arb_pairs() -> impl Strategy<Value = Vec<(usize, [isize; 2])>> {
    prop::collection::vec((1usize..5, [0isize..4, 0isize..4]), 1..5).prop_map(|axes| {
        let mut acc = [1isize, 1];
        let mut res = Vec::with_capacity(axes.len());
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
            res.push((n, s));
        }
        res.reverse();
        res
    })
}

/// The offsets of every index of a nest of loops in row-major order, per operand.
fn offsets(loops: &[Loop<usize, [isize; 2]>]) -> Vec<[isize; 2]> {
    let mut res = vec![[0, 0]];
    for l in loops {
        let mut next = Vec::with_capacity(res.len() * l.extent);
        for o in &res {
            for i in 0..l.extent as isize {
                next.push([o[0] + i * l.steps[0], o[1] + i * l.steps[1]]);
            }
        }
        res = next;
    }
    res
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Loops merge as the pairs do and read the same offsets; the symbolic loops of the same
    /// nest, steps scaled by a symbol, merge the same way under a proof.
    #[test]
    fn loops_merge_as_their_pairs(pairs in arb_pairs()) {
        let loops: Vec<Loop<usize, [isize; 2]>> = pairs
            .iter()
            .map(|&(extent, steps)| Loop { extent, steps })
            .collect();
        let mut merged_pairs = pairs.clone();
        nest::merge_contiguous(&Exact, &mut merged_pairs);
        let mut merged = loops.clone();
        nest::merge_contiguous(&Exact, &mut merged);
        let as_pairs: Vec<(usize, [isize; 2])> =
            merged.iter().map(|l| (l.extent, l.steps)).collect();
        prop_assert_eq!(as_pairs, merged_pairs);
        prop_assert_eq!(offsets(&merged), offsets(&loops));

        let mut cx = Scope::new();
        let s = cx.declare(&SymbolSpec::new("s").range(1, 1000)).expect("s");
        let symbolic = |ls: &[Loop<usize, [isize; 2]>]| -> Vec<Loop<Expr, [Expr; 2]>> {
            ls.iter()
                .map(|l| Loop {
                    extent: Expr::from(l.extent as i64),
                    steps: l.steps.map(|x| cx.simplify(Expr::from(x as i64) * s)),
                })
                .collect()
        };
        let mut sym = symbolic(&loops);
        nest::merge_contiguous(&Proven(&cx), &mut sym);
        let sym: Vec<Loop<Expr, [Expr; 2]>> = sym
            .into_iter()
            .map(|l| Loop { extent: cx.simplify(l.extent), ..l })
            .collect();
        prop_assert_eq!(sym, symbolic(&merged));
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
