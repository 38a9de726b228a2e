//! Property tests of the exact engine against the naive model and the brute-force oracle.

use proptest::prelude::*;
use symshape::Scope;
use symshape_view::concrete::{merge, ConcreteView};
use symshape_view::ViewOps;

use crate::model::Model;
use crate::strategy::{arb_raw, factor_shape, Raw};

fn model_of(raw: &Raw) -> Model {
    Model::of(&raw.shape, &raw.strides, raw.offset, raw.mask.as_deref())
}

pub fn model_of_view(v: &ConcreteView) -> Model {
    Model::of(v.shape(), v.strides(), v.offset(), v.mask())
}

/// Reshape succeeds iff the oracle finds one view, and then agrees with the model.
fn check_reshape(raw: &Raw, target: &[i64]) -> Result<(), TestCaseError> {
    let cx = Scope::new();
    let v = raw.concrete_view().expect("valid raw view");
    let want = model_of(raw).reshape(target);
    let oracle = want.one_view();
    match v.reshape(&cx, target) {
        Ok(r) => {
            prop_assert!(
                oracle.is_some(),
                "reshape of {v} to {target:?} gave {r}, oracle says impossible"
            );
            prop_assert_eq!(
                model_of_view(&r),
                want.clone(),
                "reshape of {} to {:?} gave {}",
                v,
                target,
                r
            );
            same_canonical(&r, &want)?;
        }
        Err(e) => prop_assert!(
            oracle.is_none(),
            "reshape of {v} to {target:?} failed ({e}) but oracle found {oracle:?}"
        ),
    }
    Ok(())
}

/// Merge succeeds iff the oracle finds one view, and then agrees with the model.
fn check_merge(lower: &Raw, upper: &Raw) -> Result<(), TestCaseError> {
    let (lv, uv) = (
        lower.concrete_view().expect("lower"),
        upper.concrete_view().expect("upper"),
    );
    let want = model_of(lower).compose(&model_of(upper));
    let oracle = want.one_view();
    match merge(&lv, &uv) {
        Ok(Some(r)) => {
            prop_assert!(
                oracle.is_some(),
                "merge of {lv} under {uv} gave {r}, oracle says impossible"
            );
            prop_assert_eq!(
                model_of_view(&r),
                want.clone(),
                "merge of {} under {} gave {}",
                lv,
                uv,
                r
            );
            same_canonical(&r, &want)?;
        }
        Ok(None) => prop_assert!(
            oracle.is_none(),
            "merge of {lv} under {uv} refused but oracle found {oracle:?}"
        ),
        Err(e) => prop_assert!(false, "merge of {lv} under {uv} failed: {e}"),
    }
    Ok(())
}

/// `got` and the view the oracle builds from `want` have the same canonical form,
/// and the canonical form keeps the mapping.
fn same_canonical(got: &ConcreteView, want: &Model) -> Result<(), TestCaseError> {
    let Some((strides, offset, mask)) = want.one_view() else {
        return Ok(());
    };
    let built = ConcreteView::create(&want.shape, Some(&strides), offset, Some(&mask))
        .expect("oracle view");
    prop_assert_eq!(got.canonical(), built.canonical(), "{} vs {}", got, built);
    prop_assert_eq!(&model_of_view(&got.canonical()), want);
    Ok(())
}

/// An upper view whose valid elements index `0..n` (shifted into range).
pub fn fit_upper(mut upper: Raw, n: i64, shift: i64) -> Option<Raw> {
    let numel: i64 = upper.shape.iter().product();
    if numel == 0 {
        return Some(upper);
    }
    let bounds: Vec<(i64, i64)> = match &upper.mask {
        Some(m) => m.clone(),
        None => upper.shape.iter().map(|&d| (0, d)).collect(),
    };
    if bounds.iter().any(|&(b, e)| b >= e) {
        return Some(upper);
    }
    let (mut lo, mut hi) = (0i64, 0i64);
    for (&(b, e), &t) in bounds.iter().zip(&upper.strides) {
        let (x, y) = (b * t, (e - 1) * t);
        lo += x.min(y);
        hi += x.max(y);
    }
    let span = hi - lo;
    if span >= n {
        return None;
    }
    upper.offset = -lo + shift % (n - span);
    Some(upper)
}

proptest! {
    #[test]
    fn reshape_is_complete(raw in arb_raw(5, 1, 4), seed in prop::collection::vec(any::<u32>(), 8)) {
        let n: i64 = raw.shape.iter().product();
        check_reshape(&raw, &factor_shape(n, &seed))?;
    }

    #[test]
    fn reshape_with_zero_sizes(raw in arb_raw(3, 0, 3), seed in prop::collection::vec(any::<u32>(), 8)) {
        let n: i64 = raw.shape.iter().product();
        check_reshape(&raw, &factor_shape(n, &seed))?;
    }

    #[test]
    fn merge_is_complete(
        lower in arb_raw(4, 1, 4),
        upper in arb_raw(4, 1, 4),
        shift in 0i64..1000,
    ) {
        let n: i64 = lower.shape.iter().product();
        if let Some(upper) = fit_upper(upper, n, shift) {
            check_merge(&lower, &upper)?;
        }
    }

    #[test]
    fn merge_of_reshaped_contiguous(lower in arb_raw(4, 1, 4), seed in prop::collection::vec(any::<u32>(), 8)) {
        // The upper view a stack pushes for a reshape: row-major over the lower elements.
        let n: i64 = lower.shape.iter().product();
        let shape = factor_shape(n, &seed);
        let c = ConcreteView::contiguous(&shape).expect("contiguous");
        let upper = Raw { shape, strides: c.strides().to_vec(), offset: 0, mask: None };
        check_merge(&lower, &upper)?;
    }
}
