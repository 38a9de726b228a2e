//! Digit-carrying compositions with more than 4096 upper elements: upper strides
//! that straddle the lower view's place values, where only evaluation decides.
//! Merge must agree with the brute-force oracle, as on small cases.

use proptest::prelude::*;
use symshape::Scope;
use symshape_view::concrete::{merge, ConcreteView};
use symshape_view::{ConcreteStack, View, ViewOps, ViewStack};

use crate::engine::model_of_view;

/// Lower `[r, c]` read column-major (or reversed); upper axes stepping by
/// `c + d` (straddles a row), `c` (next row) and 1 (next column).
#[derive(Clone, Debug)]
struct Case {
    r: i64,
    c: i64,
    lower_kind: u8,
    mask: Option<(i64, i64)>,
    d: i64,
    sizes: [i64; 3],
    order: [usize; 3],
    flip: [bool; 3],
    shift: i64,
    /// Start at a row boundary and keep the column digit from carrying.
    aligned: bool,
}

fn arb_case() -> impl Strategy<Value = Case> {
    (40i64..=300, 8i64..=24).prop_flat_map(|(r, c)| {
        (
            Just(r),
            Just(c),
            0u8..3,
            prop::option::of((0i64..=4, 0i64..=4)),
            (any::<u32>(), 2i64..=3, (r / 2)..=r - 4, 2i64..=c),
            Just([0usize, 1, 2]).prop_shuffle(),
            prop::array::uniform3(any::<bool>()),
            0i64..100_000,
            any::<bool>(),
        )
            .prop_map(
                |(r, c, lower_kind, mask, (d, a, b, e), order, flip, shift, aligned)| {
                    // Aligned cases keep `e + d * (a - 1) <= c`: no column carry.
                    let room = if aligned { (c - e) / (a - 1) + 1 } else { c };
                    Case {
                        r,
                        c,
                        lower_kind,
                        mask,
                        d: i64::from(d) % room,
                        sizes: [a, b, e],
                        order: [order[0], order[1], order[2]],
                        flip,
                        shift,
                        aligned,
                    }
                },
            )
    })
}

fn lower_of(case: &Case) -> ConcreteView {
    let cx = Scope::new();
    let (r, c) = (case.r, case.c);
    let base = match case.lower_kind {
        // Column-major: not mergeable with any reshape of its rows.
        0 => ConcreteView::create(&[r, c], Some(&[1, r]), 0, None),
        // Reversed columns.
        1 => ConcreteView::create(&[r, c], Some(&[1, -r]), r * (c - 1), None),
        // Broadcast rows over a strided column.
        _ => ConcreteView::create(&[r, c], Some(&[0, 3]), 0, None),
    }
    .expect("lower");
    match case.mask {
        Some((x, y)) => base
            .shrink(&cx, &[(x, r), (0, c - y)])
            .and_then(|v| v.pad(&cx, &[(x, 0), (0, y)]))
            .expect("masked lower"),
        None => base,
    }
}

/// How far a view of `shape` and `strides` at offset 0 reaches: its lowest
/// offset (0 or below) and the distance from it to its highest offset.
fn reach(shape: &[i64], strides: &[i64]) -> (i64, i64) {
    let (mut lo, mut hi) = (0i64, 0i64);
    for (&d, &t) in shape.iter().zip(strides) {
        let far = (d - 1) * t;
        lo += far.min(0);
        hi += far.max(0);
    }
    (lo, hi - lo)
}

/// The upper view, shifted so that its span fits in the lower elements.
fn upper_of(case: &Case) -> Option<ConcreteView> {
    let n = case.r * case.c;
    let steps = [case.c + case.d, case.c, 1];
    let mut shape = [0i64; 3];
    let mut strides = [0i64; 3];
    for (slot, &k) in case.order.iter().enumerate() {
        shape[slot] = case.sizes[k];
        strides[slot] = if case.flip[k] { -steps[k] } else { steps[k] };
    }
    let (lo, span) = reach(&shape, &strides);
    if span >= n {
        return None;
    }
    let mut start = case.shift % (n - span);
    if case.aligned {
        start -= start % case.c;
    }
    ConcreteView::create(&shape, Some(&strides), start - lo, None).ok()
}

fn check(lower: &ConcreteView, upper: &ConcreteView) -> Result<Option<String>, TestCaseError> {
    let want = model_of_view(lower).compose(&model_of_view(upper));
    let oracle = want.one_view();
    match merge(lower, upper) {
        Ok(Some(r)) => {
            prop_assert!(
                oracle.is_some(),
                "merge of {lower} under {upper} gave {r}, oracle says impossible"
            );
            prop_assert_eq!(
                model_of_view(&r),
                want,
                "merge of {} under {} gave {}",
                lower,
                upper,
                r
            );
            Ok(Some(r.to_string()))
        }
        Ok(None) => {
            prop_assert!(
                oracle.is_none(),
                "merge of {lower} under {upper} refused but oracle found {oracle:?}"
            );
            Ok(None)
        }
        Err(e) => Err(TestCaseError::fail(format!(
            "merge of {lower} under {upper} failed: {e}"
        ))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    #[test]
    fn straddling_merges_agree_with_the_oracle(case in arb_case()) {
        let lower = lower_of(&case);
        if let Some(upper) = upper_of(&case) {
            check(&lower, &upper)?;
        }
    }
}

#[test]
fn straddling_axis_without_carries_merges() {
    // L = 70a + 64c + b over a column-major [1000, 64]: the row digit is a + c and
    // the column digit 6a + b never carries, so the composition is one view even
    // though no stride lines up with the lower place values.
    let lower = ConcreteView::create(&[1000, 64], Some(&[1, 1000]), 0, None).unwrap();
    let upper = ConcreteView::create(&[2, 900, 6], Some(&[70, 64, 1]), 0, None).unwrap();
    assert_eq!(upper.numel(), 10800);
    let got = check(&lower, &upper).unwrap();
    insta::assert_snapshot!(got.unwrap(), @"view shape=[2, 900, 6] strides=[6001, 1, 1000] offset=0 mask=none");
    // One more column and the column digit carries at the last row start: two views.
    let upper = ConcreteView::create(&[2, 900, 59], Some(&[70, 64, 1]), 0, None).unwrap();
    assert_eq!(check(&lower, &upper).unwrap(), None);
}

#[test]
fn stacks_collapse_runs_beyond_4096_elements() {
    // A transpose, a reshape across it and the inverse reshape: each adjacent pair
    // stays two views, the run of three is the transpose again.
    let cx = symshape::Scope::new();
    let t = ViewStack::new(View::from(ConcreteView::contiguous(&[96, 80]).unwrap()))
        .permute(&cx, &[1, 0])
        .unwrap();
    let flat = t.reshape(&cx, &[80i64 * 96]).unwrap();
    assert_eq!(flat.views().len(), 2);
    let back = flat.reshape(&cx, &[80i64, 96]).unwrap();
    insta::assert_snapshot!(back.views().iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"), @"view shape=[80, 96] strides=[1, 80] offset=0 mask=none");
}

#[test]
fn straddling_axis_merges_beyond_the_evaluation_limit() {
    // 1.6 million points: only the no-carry split decides it. The column digit
    // 6a + b stays below 64, so rows and columns are read independently.
    let lower = ConcreteView::create(&[20000, 64], Some(&[1, 20000]), 0, None).unwrap();
    let upper = ConcreteView::create(&[2, 16000, 50], Some(&[70, 64, 1]), 0, None).unwrap();
    let merged = merge(&lower, &upper).unwrap().expect("one view");
    insta::assert_snapshot!(merged, @"view shape=[2, 16000, 50] strides=[120001, 1, 20000] offset=0 mask=none");
    let stack = ConcreteStack::unmerged(vec![lower.clone(), upper.clone()]).unwrap();
    for (a, c, b) in [(0, 0, 0), (1, 15999, 49), (1, 7, 3), (0, 12345, 48)] {
        let idx = [a, c, b];
        assert_eq!(
            merged.offset_of(&idx).unwrap(),
            stack.offset_of(&idx).unwrap()
        );
    }
}

/// A contiguous lower of 3 to 5 axes, permuted (so no reshape flattens it),
/// optionally flipped and with a padded border, under an upper view whose
/// strides are arbitrary element steps: the no-carry split and every other
/// decider must agree with the oracle on lowers of many axes.
#[derive(Clone, Debug)]
struct ManyAxes {
    shape: Vec<i64>,
    perm: Vec<usize>,
    flip: Vec<bool>,
    pad: Option<(usize, i64)>,
    upper_shape: Vec<i64>,
    upper_strides: Vec<i64>,
    shift: i64,
}

fn arb_many_axes() -> impl Strategy<Value = ManyAxes> {
    (3usize..=5, 1usize..=3).prop_flat_map(|(rank, urank)| {
        let shape = prop::collection::vec(2i64..=4, rank);
        (
            shape,
            Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
            prop::collection::vec(any::<bool>(), rank),
            prop::option::of((0..rank, 1i64..=2)),
            prop::collection::vec(2i64..=4, urank),
            prop::collection::vec(-40i64..=40, urank),
            0i64..10_000,
        )
            .prop_map(
                |(shape, perm, flip, pad, upper_shape, upper_strides, shift)| ManyAxes {
                    shape,
                    perm,
                    flip,
                    pad,
                    upper_shape,
                    upper_strides,
                    shift,
                },
            )
    })
}

/// The axes whose flag is set.
fn flagged(flags: &[bool]) -> Vec<usize> {
    (0..flags.len()).filter(|&a| flags[a]).collect()
}

fn many_axes_views(case: &ManyAxes) -> Option<(ConcreteView, ConcreteView)> {
    let cx = Scope::new();
    let base = ConcreteView::contiguous(&case.shape).ok()?;
    let mut lower = base
        .permute(&cx, &case.perm)
        .ok()?
        .flip(&cx, &flagged(&case.flip))
        .ok()?;
    if let Some((axis, width)) = case.pad {
        let d = lower.shape()[axis];
        let mut bounds: Vec<(i64, i64)> = lower.shape().iter().map(|&d| (0, d)).collect();
        bounds[axis] = (width.min(d - 1), d);
        let mut padding = vec![(0, 0); lower.ndim()];
        padding[axis] = (width.min(d - 1), 0);
        lower = lower.shrink(&cx, &bounds).ok()?.pad(&cx, &padding).ok()?;
    }
    let n = lower.numel();
    let (lo, span) = reach(&case.upper_shape, &case.upper_strides);
    if span >= n {
        return None;
    }
    let offset = case.shift % (n - span) - lo;
    let upper =
        ConcreteView::create(&case.upper_shape, Some(&case.upper_strides), offset, None).ok()?;
    Some((lower, upper))
}

proptest! {
    #[test]
    fn merges_over_permuted_lowers_agree_with_the_oracle(case in arb_many_axes()) {
        if let Some((lower, upper)) = many_axes_views(&case) {
            check(&lower, &upper)?;
        }
    }
}
