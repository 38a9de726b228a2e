//! Shrunk property-test failures and hand-picked corner cases, pinned by name.

use symshape::Scope;
use symshape_view::concrete::{format_offsets, merge};
use symshape_view::{parse_index, ConcreteStack, ConcreteView, View, ViewOps, ViewStack};

use crate::engine::model_of_view;
use crate::scope_with;

/// The concrete view with these fields and a mask; panics if they are invalid.
fn masked(shape: &[i64], strides: &[i64], offset: i64, mask: &[(i64, i64)]) -> ConcreteView {
    ConcreteView::create(shape, Some(strides), offset, Some(mask)).unwrap()
}

#[test]
fn unfold_of_a_view_without_valid_elements() {
    let cx = Scope::new();
    // Shrunk from ops::other_ops_match_the_model: a partial mask on the unfolded
    // axis is irrelevant when another axis masks everything out.
    let v = masked(&[3, 1, 1], &[0, 0, 0], 0, &[(0, 2), (0, 0), (0, 0)]);
    insta::assert_snapshot!(v.unfold(&cx, 0, 2, 1).unwrap(), @"view shape=[2, 1, 1, 2] strides=[0, 0, 0, 0] offset=0 mask=[(0, 0), (0, 0), (0, 0), (0, 0)]");
}

#[test]
fn canonical_forms_of_equal_mappings_match() {
    let a = ConcreteView::create(&[1, 3], Some(&[7, 1]), 2, None).unwrap();
    let b = ConcreteView::create(&[1, 3], Some(&[0, 1]), 2, None).unwrap();
    assert_eq!(a.canonical(), b.canonical());
    let c = masked(&[2, 3], &[5, 1], 0, &[(1, 2), (0, 3)]);
    let d = masked(&[2, 3], &[-9, 1], 14, &[(1, 2), (0, 3)]);
    assert!(c.same_mapping(&d));
    insta::assert_snapshot!(c.canonical(), @"view shape=[2, 3] strides=[0, 1] offset=5 mask=[(1, 2), (0, 3)]");
    let e = masked(&[2, 3], &[5, 1], 0, &[(1, 1), (0, 3)]);
    insta::assert_snapshot!(e.canonical(), @"view shape=[2, 3] strides=[0, 0] offset=0 mask=[(0, 0), (0, 0)]");
}

#[test]
fn seed_queries() {
    let cx = Scope::new();
    let v = ConcreteView::create(&[2, 3], Some(&[3, 1]), 5, None).unwrap();
    assert_eq!(v.linear_index(&[1, 2]).unwrap(), 10);
    assert!(v.is_valid(&[1, 2]));
    assert!(!v.is_valid(&[1]));
    assert!(!v.is_valid(&[2, 0]));
    assert!(!v.is_c_contiguous());
    let w = ConcreteView::create(&[1, 3], Some(&[99, 1]), 0, None).unwrap();
    assert!(w.is_c_contiguous(), "strides of size-1 axes are ignored");
    let z = View::create(
        &Scope::new(),
        &[0i64, 3],
        Some(&[-4i64, 7]),
        9,
        Some(&[(0i64, 0i64), (0, 3)]),
    )
    .unwrap();
    insta::assert_snapshot!(z, @"view shape=[0, 3] strides=[-4, 7] offset=0 mask=none");
    let full = ConcreteView::create(&[2, 3], None, 0, Some(&[(0, 2), (0, 3)])).unwrap();
    assert!(full.mask().is_none() && full.is_c_contiguous() && full.is_materializable());
    let p = full.pad(&cx, &[(1, 0), (0, 0)]).unwrap();
    assert!(p.strides_opt().is_none() && !p.can_get_strides());
    let pv = View::from(&p);
    assert_eq!(pv.numel().as_i64(), Some(9));
    assert_eq!(pv.dim(0).unwrap().as_i64(), Some(3));
    assert_eq!(pv.stride(1).unwrap().as_i64(), Some(1));
    assert_eq!(p.offset_of(&[0, 0]).unwrap(), None);
    assert_eq!(p.offset_of(&[2, 2]).unwrap(), Some(5));
}

#[test]
fn index_text_round_trips() {
    let items = parse_index("[1, 2:, ::-1, None, ...]").unwrap();
    let shown: Vec<String> = items.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!(shown.join(", "), @"1, 2:, ::-1, None, ...");
    assert_eq!(parse_index("[]").unwrap(), vec![]);
    assert_eq!(parse_index("-1:").unwrap().len(), 1);
}

#[test]
fn stack_merges_back_after_shrink() {
    let cx = Scope::new();
    let s = ViewStack::new(View::contiguous(&[3]).unwrap())
        .pad(&cx, &[(1i64, 0i64)])
        .unwrap()
        .reshape(&cx, &[2i64, 2])
        .unwrap();
    assert_eq!(s.views().len(), 2);
    assert!(s.to_view(&cx).unwrap().is_none());
    let t = s.shrink(&cx, &[(1i64, 2i64), (0, 2)]).unwrap();
    insta::assert_snapshot!(t, @"view shape=[1, 2] strides=[0, 1] offset=1 mask=none");
    let u = ViewStack::from_views(&cx, s.views().to_vec()).unwrap();
    let offsets = |x: &ViewStack| x.to_concrete("offsets").unwrap().offsets().unwrap();
    assert_eq!(offsets(&u), offsets(&s));
    insta::assert_snapshot!(u.canonical(&cx).unwrap(), @r"
    view shape=[4] strides=[1] offset=-1 mask=[(1, 4)]
    view shape=[2, 2] strides=[2, 1] offset=0 mask=none
    ");
}

#[test]
fn broadcast_shapes_follow_numpy() {
    let r = symshape_view::concrete::broadcast_shapes(&[&[3], &[2, 4, 1], &[1, 1]]).unwrap();
    assert_eq!(r, vec![2, 4, 3]);
    assert_eq!(
        symshape_view::concrete::broadcast_shapes(&[]).unwrap(),
        Vec::<i64>::new()
    );
    assert_eq!(
        symshape_view::concrete::broadcast_shapes(&[&[0], &[1]]).unwrap(),
        vec![0]
    );
}

#[test]
fn zero_size_views_with_huge_strides() {
    let cx = Scope::new();
    // Zero-size views accept any strides; ops on them must not compute offsets.
    let z = ConcreteView::create(&[0, 3], Some(&[1, i64::MAX]), 0, None).unwrap();
    let items = parse_index("[:, 2]").unwrap();
    insta::assert_snapshot!(z.index(&cx, &items).unwrap(), @"view shape=[0] strides=[1] offset=0 mask=none");
    insta::assert_snapshot!(z.shrink(&cx, &[(0, 0), (2, 3)]).unwrap(), @"view shape=[0, 1] strides=[1, 9223372036854775807] offset=0 mask=none");
    insta::assert_snapshot!(z.flip(&cx, &[0, 1]).unwrap(), @"view shape=[0, 3] strides=[1, -9223372036854775807] offset=0 mask=none");
    insta::assert_snapshot!(z.diagonal(&cx, 1, 0, 1).unwrap_err(), @"diagonal: overflow: strides 1 + 9223372036854775807 of view [0, 3] with strides [1, 9223372036854775807]");
}

#[test]
fn extreme_values_give_errors_not_panics() {
    let cx = Scope::new();
    // Each case was a panic found by robust::ops_never_panic.
    let singleton = ConcreteView::create(&[1], Some(&[i64::MIN]), 0, None).unwrap();
    insta::assert_snapshot!(singleton.flip(&cx, &[0]).unwrap(), @"view shape=[1] strides=[-9223372036854775808] offset=0 mask=none");
    let wide =
        ConcreteView::create(&[2, 2], Some(&[i64::MAX / 2, -(i64::MAX / 2)]), 0, None).unwrap();
    assert_eq!(
        wide.offsets().unwrap().len(),
        4,
        "partial sums stay in range"
    );
    let zero = ConcreteView::create(&[i64::MAX, i64::MAX, 0], Some(&[0, 0, 0]), 0, None).unwrap();
    assert_eq!(zero.numel(), 0);
    insta::assert_snapshot!(zero.flatten(&cx, 0, 1).unwrap_err(), @"flatten: overflow: merged size of axes 0..=1 of view [9223372036854775807, 9223372036854775807, 0] with strides [0, 0, 0]");
    let long = ConcreteView::create(&[i64::MAX], Some(&[0]), 0, None).unwrap();
    let cx = Scope::new();
    insta::assert_snapshot!(View::from(&long).split(&cx, 0, 1i64).unwrap_err(), @"split: 9223372036854775807 pieces along axis 0 of view [9223372036854775807] with strides [0] exceed the limit of 65536; take one piece at a time with split_piece(0, 1, i) for i below split_count");
    insta::assert_snapshot!(long.unfold(&cx, 0, 0, 1).unwrap_err(), @"unfold: overflow: window count along axis 0 of view [9223372036854775807] with strides [0]");
    insta::assert_snapshot!(long.unfold(&cx, 0, i64::MAX / 2, 1).unwrap_err(), @"unfold: overflow: element count of shape [4611686018427387905, 4611686018427387903] exceeds i64");
}

#[test]
fn stack_forms_of_view_ops() {
    let cx = Scope::new();
    let s = ViewStack::new(View::contiguous(&[4, 6]).unwrap())
        .transpose(&cx, 0, 1)
        .unwrap()
        .unflatten(&cx, 0, &[2i64, 3])
        .unwrap();
    insta::assert_snapshot!(s, @"view shape=[2, 3, 4] strides=[3, 1, 6] offset=0 mask=none");
    let t = s.flatten(&cx, 1, 2).unwrap();
    assert_eq!(t.views().len(), 2);
    let n = t.narrow(&cx, 1, 4, 4i64).unwrap();
    insta::assert_snapshot!(n.to_concrete("offsets").unwrap().offsets_line().unwrap(), @"offsets [2, 4]: 1 7 13 19 4 10 16 22");
}

#[test]
fn merge_with_an_empty_axis_is_empty_even_if_another_is_not_a_box() {
    // Shrunk from chains::view_stack_and_model_agree: lower axis 0 rules out every
    // element, so the slab on axis 2 that is not a box does not matter.
    let lower = masked(&[4, 4, 4], &[0, 0, 0], 0, &[(0, 2), (1, 3), (0, 3)]);
    let upper =
        ConcreteView::create(&[1, 2, 2, 1, 1, 2], Some(&[0, 4, 2, 0, 0, 1]), 48, None).unwrap();
    insta::assert_snapshot!(symshape_view::concrete::merge(&lower, &upper).unwrap().unwrap(), @"view shape=[1, 2, 2, 1, 1, 2] strides=[0, 0, 0, 0, 0, 0] offset=0 mask=[(0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0)]");
}

/// Lower `[2; rank]` with its bits reversed (no two axes merge), read by an
/// upper `[2, 2]` with strides `[1, 3]`: every place from 8 up splits without
/// carry, and deciding each half recursively took time exponential in the rank
/// (half a second at rank 18). Deciding each run of axes once keeps rank 40 fast.
#[test]
fn merge_no_carry_split_is_polynomial_in_the_rank() {
    let bit_reversed = |rank: usize| {
        let strides: Vec<i64> = (0..rank).map(|a| 1i64 << a).collect();
        ConcreteView::create(&vec![2; rank], Some(&strides), 0, None).unwrap()
    };
    let upper = ConcreteView::create(&[2, 2], Some(&[1, 3]), 0, None).unwrap();
    let small = bit_reversed(8);
    let want = model_of_view(&small).compose(&model_of_view(&upper));
    assert_eq!(want.one_view(), None);
    assert_eq!(merge(&small, &upper).unwrap(), None);
    // At rank 40 the exponential version would not finish; this returns at once.
    assert_eq!(merge(&bit_reversed(40), &upper).unwrap(), None);
    // Stride 3 fits no radix chain; the runs split at 4 add up to one view.
    let upper = ConcreteView::create(&[2, 2], Some(&[3, 8]), 0, None).unwrap();
    let merged = merge(&bit_reversed(40), &upper).unwrap().unwrap();
    insta::assert_snapshot!(merged, @"view shape=[2, 2] strides=[824633720832, 68719476736] offset=0 mask=none");
}

/// Shrunk from symprop::bind_after_ops_equals_ops_after_bind: `[None, -k::m]`
/// takes `-k` as written (guard `k >= 1`), which then refutes the later index
/// `k` into the size-1 axis at once. NumPy accepts `k = 0`, the documented
/// restriction of the sign rule; for every `k` the guard admits, the concrete
/// ops fail too.
#[test]
fn sign_guard_as_a_fact_refutes_a_later_index() {
    use symshape::{Bindings, Expr};
    use symshape_view::{IndexItem, Op};
    let (cx, [n, m, k]) = scope_with(["n 0..=4", "m 1..=3", "k 0..=2"]);
    let v = View::create(&cx, &[m * 2, n], None, Expr::from(0), None).unwrap();
    let slice = IndexItem::Slice {
        start: Some(-k),
        stop: None,
        step: Some(m),
    };
    let st = ViewStack::new(v.clone())
        .apply(&cx, &Op::Index(vec![IndexItem::NewAxis, slice]))
        .unwrap();
    insta::assert_snapshot!(st.guards_text(), @"index: -k < 0 (slice start -k of axis 0 is written negative, so it counts from the end)");
    let err = st
        .apply(&cx, &Op::Index(vec![IndexItem::Int(k)]))
        .unwrap_err();
    insta::assert_snapshot!(err, @"index: guard k < 1 (index k is within axis 0) fails: it is false whenever the pending guards hold (-k < 0 (slice start -k of axis 0 is written negative, so it counts from the end)), for view [1, (k - 1) // m + 1, n] with strides [0, m*max(1, n), 1]");
    for kv in 0..=2 {
        let mut b = Bindings::new();
        b.set(n, 2).unwrap();
        b.set(m, 2).unwrap();
        b.set(k, kv).unwrap();
        let c = v.bind(&cx, &b).unwrap();
        let concrete = c
            .index(
                &cx,
                &[
                    IndexItem::NewAxis,
                    IndexItem::Slice {
                        start: Some(-kv),
                        stop: None,
                        step: Some(2),
                    },
                ],
            )
            .and_then(|x| x.index(&cx, &[IndexItem::Int(kv)]));
        assert_eq!(concrete.is_ok(), kv == 0, "k = {kv}");
    }
}

/// A diagonal offset far beyond the axes, or an unfold step far beyond the
/// axis, leaves an empty diagonal or a single window that binds concretely,
/// but the symbolic fields `offset * stride` and `stride * step` did not
/// evaluate in `i64`, so bind failed where the concrete op succeeds.
#[test]
fn far_diagonal_offsets_and_unfold_steps_bind() {
    use symshape::{Bindings, Expr};
    let (cx, [n]) = scope_with(["n 1..=8"]);
    let v = View::create(&cx, &[n, Expr::from(4)], None, Expr::from(0), None).unwrap();
    let mut b = Bindings::new();
    b.set(n, 3).unwrap();
    let c = v.bind(&cx, &b).unwrap();
    let bound = |r: symshape_view::Result<View>| {
        r.and_then(|x| x.bind(&cx, &b))
            .and_then(|x| x.offsets())
            .map(|o| format_offsets(&[o.len() as i64], &o))
    };
    let mut lines = Vec::new();
    for off in [i64::MIN, i64::MIN + 1, -(1 << 62), i64::MAX, 2] {
        let want = c.diagonal(&cx, off, 0, 1).unwrap();
        let got = bound(v.diagonal(&cx, off, 0, 1)).unwrap();
        assert_eq!(
            got,
            format_offsets(&[want.numel()], &want.offsets().unwrap()),
            "offset {off}"
        );
        lines.push(format!("diagonal {off}: {got}"));
    }
    for (axis, step) in [(0usize, i64::MAX), (1, i64::MAX), (0, 1 << 62), (0, 2)] {
        let want = c.unfold(&cx, axis, 1, step).unwrap();
        let got = v
            .unfold(&cx, axis, 1i64, step)
            .unwrap()
            .bind(&cx, &b)
            .unwrap();
        assert!(
            got.same_mapping(&want),
            "unfold {axis} {step}: {got} vs {want}"
        );
        lines.push(format!(
            "unfold axis {axis} step {step}: {}",
            got.canonical()
        ));
    }
    insta::assert_snapshot!(lines.join("\n"), @"
diagonal -9223372036854775808: offsets [0]:
diagonal -9223372036854775807: offsets [0]:
diagonal -4611686018427387904: offsets [0]:
diagonal 9223372036854775807: offsets [0]:
diagonal 2: offsets [2]: 2 7
unfold axis 0 step 9223372036854775807: view shape=[1, 4, 1] strides=[0, 1, 0] offset=0 mask=none
unfold axis 1 step 9223372036854775807: view shape=[3, 1, 1] strides=[4, 0, 0] offset=0 mask=none
unfold axis 0 step 4611686018427387904: view shape=[1, 4, 1] strides=[0, 1, 0] offset=0 mask=none
unfold axis 0 step 2: view shape=[2, 4, 1] strides=[8, 1, 0] offset=0 mask=none
");
}

/// Shrunk from symprop::bind_after_ops_equals_ops_after_bind: `[-k - 1, k]`
/// leaves a concrete scalar on a guarded symbolic view; `[None, None]` on it
/// kept the `[1, 1]` view, which merged into the symbolic view below, and then
/// reshaped the now symbolic top as if it were concrete: "bind the symbols first".
#[test]
fn constant_index_on_a_concrete_top_over_a_symbolic_view() {
    use symshape::{Bindings, Expr};
    use symshape_view::{IndexItem, Op};
    let (cx, [m, k]) = scope_with(["m 1..=3", "k 0..=2"]);
    let c = Expr::from;
    let v = View::create(
        &cx,
        &[c(3), m],
        Some(&[m, c(-1)]),
        m,
        Some(&[(k, c(3)), (c(0), m)]),
    )
    .unwrap();
    let picks = [IndexItem::Int(-k - 1), IndexItem::Int(k)];
    let st = ViewStack::new(v.clone())
        .apply(&cx, &Op::Index(picks.to_vec()))
        .unwrap();
    let new_axes = [IndexItem::<i64>::NewAxis, IndexItem::NewAxis];
    let res = st.index(&cx, &new_axes).unwrap();
    insta::assert_snapshot!(res.to_string(), @"view shape=[1, 1] strides=[m, -1] offset=-k*m - k + 3*m mask=[(k + min(max(k, -k + 2), -k + 3) - 2, 1), (0, 1)]");
    for (mv, kv) in [(1, 0), (2, 1), (3, 2)] {
        let mut b = Bindings::new();
        b.set(m, mv).unwrap();
        b.set(k, kv).unwrap();
        // The concrete ops on the bound view (a stack: the scalar may be masked out).
        let want = v
            .bind(&cx, &b)
            .map(ViewStack::from)
            .and_then(|x| x.index(&cx, &[IndexItem::Int(-kv - 1), IndexItem::Int(kv)]))
            .and_then(|x| x.index(&cx, &new_axes))
            .and_then(|x| x.to_concrete("offsets"))
            .and_then(|x| x.offsets());
        assert!(want.is_ok(), "m = {mv}, k = {kv}: {want:?}");
        let got = res.bind(&cx, &b).and_then(|x| x.offsets());
        assert_eq!(
            got.as_ref().ok(),
            want.as_ref().ok(),
            "m = {mv}, k = {kv}: {want:?} {got:?}"
        );
    }
}

/// Shrunk from symprop::bind_after_ops_equals_ops_after_bind: as
/// `sign_guard_as_a_fact_refutes_a_later_index`, with the sign guard and the
/// index it refutes in one op, `[-k::m, k]` on a `[n, 1]` piece. The error says
/// the guard is refuted under the pending guards, not for every value.
#[test]
fn sign_guard_as_a_fact_within_one_index() {
    use symshape::Expr;
    use symshape_view::{IndexItem, Op};
    let (cx, [n, m, k]) = scope_with(["n 0..=4", "m 1..=3", "k 0..=2"]);
    let v = View::create(&cx, &[n, Expr::from(3)], None, Expr::from(0), None).unwrap();
    let st = ViewStack::new(v).split_piece(&cx, 1, 2i64, 1i64).unwrap();
    let slice = IndexItem::Slice {
        start: Some(-k),
        stop: None,
        step: Some(m),
    };
    let err = st
        .apply(&cx, &Op::Index(vec![slice, IndexItem::Int(k)]))
        .unwrap_err();
    insta::assert_snapshot!(err, @"index: guard k < 1 (index k is within axis 1) fails: it is false whenever the pending guards hold (-k < 0 (slice start -k of axis 0 is written negative, so it counts from the end)), for view [n, 1] with strides [3, 1]");
    // NumPy's `k = 0` is the excluded case; every `k >= 1` fails concretely.
    let c = ConcreteView::contiguous(&[2, 1]).unwrap();
    for kv in 0..=2i64 {
        let items = [
            IndexItem::Slice {
                start: Some(-kv),
                stop: None,
                step: Some(2),
            },
            IndexItem::Int(kv),
        ];
        assert_eq!(c.index(&cx, &items).is_ok(), kv == 0, "k = {kv}");
    }
}

/// Symbolic stacks of several views used to be accepted without any check of
/// invariant 2, and an op that merged the pair then dropped the misfit: `[4]`
/// over `[n]` permuted by `[0]` bound at `n = 3` to one view reading element 3
/// of 3. Now a pair proven not to fit is refused and an unproven one carries a
/// `stack` guard that binding checks and merges keep.
#[test]
fn symbolic_stacks_that_may_not_fit_carry_a_guard() {
    use symshape::{Bindings, Expr};
    use symshape_view::{Op, PreparedStack};
    let (cx, [n]) = scope_with(["n 1..=10"]);
    let z = Expr::from(0);
    let lower = View::create(&cx, &[n], None, z, None).expect("lower");
    let stack = |upper: View| {
        ViewStack::from_views(&cx, vec![lower.clone(), upper])
            .map(|s| s.to_string())
            .unwrap_or_else(|e| format!("error: {e}"))
    };
    let upper = |shape: &[Expr], strides: Option<&[Expr]>| {
        View::create(&cx, shape, strides, z, None).expect("upper")
    };
    insta::assert_snapshot!(stack(upper(&[n + 1], None)), @"error: stack: guard n + 1 <= n (last element reached is within view [n] with strides [1]) fails: it is false for every value of the symbols, for view [n + 1] with strides [1]");
    insta::assert_snapshot!(stack(upper(&[Expr::from(3)], Some(&[n]))), @"error: stack: guard 2*n + 1 <= n (last element reached is within view [n] with strides [1]) fails: it is false for every value of the symbols, for view [3] with strides [n]");
    // A row-major reshape of all of it fits by proof: no guard.
    insta::assert_snapshot!(stack(upper(&[n, Expr::from(1)], None)), @r"
    view shape=[n] strides=[1] offset=0 mask=none
    view shape=[n, 1] strides=[1, 1] offset=0 mask=none
    ");
    let st = ViewStack::from_views(&cx, vec![lower.clone(), upper(&[Expr::from(4)], None)])
        .expect("stack");
    let guards: Vec<String> = st.views()[1]
        .guards()
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(guards.join("\n"), @"stack: 4 <= n (last element reached is within view [n] with strides [1])");
    let bind = |s: &ViewStack, v: i64| {
        let mut b = Bindings::new();
        b.set(n, v).expect("n");
        let plain = s
            .bind(&cx, &b)
            .map(|s| s.to_string())
            .map_err(|e| e.to_string());
        let prepared = PreparedStack::new(&cx, s)
            .and_then(|p| p.bind(&mut p.cache(), &[v]))
            .map(|s| s.to_string())
            .map_err(|e| e.to_string());
        assert_eq!(plain, prepared);
        plain.unwrap_or_else(|e| format!("error: {e}"))
    };
    insta::assert_snapshot!(bind(&st, 3), @"error: stack: guard 4 <= n (last element reached is within view [n] with strides [1]) fails: 4 <= 3 is false with n = 3");
    insta::assert_snapshot!(bind(&st, 5), @"view shape=[4] strides=[1] offset=0 mask=none");
    let permuted = st.apply(&cx, &Op::Permute(vec![0])).expect("permute");
    insta::assert_snapshot!(bind(&permuted, 3), @"error: stack: guard 4 <= n (last element reached is within view [n] with strides [1]) fails: 4 <= 3 is false with n = 3");
}

/// Shrunk from serialize::random_views_and_stacks_round_trip: two symbolic
/// shrinks that together leave no element kept the offset they had reached
/// (72), while `create` (and so loading) gives a zero-size view offset 0.
#[test]
fn symbolic_ops_that_leave_no_element_normalise_like_create() {
    use symshape::Expr;
    use symshape_view::Op;
    let (cx, [_, p]) = scope_with(["n 1..=4096", "p 0..n"]);
    let z = Expr::from(0);
    let mut st = ViewStack::new(View::contiguous(&[4i64, 6, 3]).unwrap());
    for items in ["[1:]", "[1:]"] {
        st = st.index(&cx, &parse_index(items).unwrap()).unwrap();
    }
    for k in [p, Expr::from(2)] {
        let d = st.shape()[0];
        let op = Op::Shrink(vec![(k.min(d), d), (z, st.shape()[1]), (z, st.shape()[2])]);
        st = st.apply(&cx, &op).unwrap();
    }
    let want = View::create(&cx, &[0i64, 6, 3], Some(&[18i64, 3, 1]), 0, None).unwrap();
    assert_eq!(st.views(), &[want]);
}

#[test]
fn to_view_of_a_symbolic_stack_answers_without_binding() {
    // `to_view` needs no constants: a symbolic stack that merges gives its view,
    // one that does not gives `None`; only `to_concrete` asks for bound symbols.
    let (cx, [b, s]) = scope_with(["b 1..=8", "s 1..=64"]);
    let x = ViewStack::new(View::row_major(&cx, &[b, s, 8.into()]).unwrap());
    let split = x
        .reshape(&cx, &[b, s, 2.into(), 4.into()])
        .unwrap()
        .permute(&cx, &[0, 2, 1, 3])
        .unwrap();
    insta::assert_snapshot!(split.to_view(&cx).unwrap().unwrap(), @"view shape=[b, 2, s, 4] strides=[8*s, 4, 8, 1] offset=0 mask=none");
    let merged = split
        .permute(&cx, &[0, 2, 1, 3])
        .unwrap()
        .reshape(&cx, &[b, s, 8.into()])
        .unwrap();
    assert_eq!(
        merged.to_view(&cx).unwrap().map(|v| v.to_string()),
        Some(x.top().to_string())
    );
    let flat = ViewStack::new(View::row_major(&cx, &[3.into(), s]).unwrap())
        .permute(&cx, &[1, 0])
        .unwrap()
        .reshape(&cx, &[s * 3])
        .unwrap();
    assert!(flat.to_view(&cx).unwrap().is_none());
    insta::assert_snapshot!(flat.to_concrete("offsets").unwrap_err(), @"offsets: shape is symbolic (s); bind the symbols first");
}

/// The strides of a stack as `axis_strides` gives them, `-` for not affine.
fn strides_text(cx: &Scope, s: &ViewStack) -> String {
    let parts: Vec<String> = s
        .axis_strides(cx)
        .unwrap()
        .iter()
        .map(|x| x.map_or("-".to_string(), |e| e.to_string()))
        .collect();
    parts.join(", ")
}

#[test]
fn axis_strides_of_unit_and_guarded_axes() {
    // Shrunk from symprop::axis_strides_match_evaluated_steps: an axis of constant
    // size 1 has no step (stride 0, and no step index is declared for it), and an
    // axis whose size is 2 or more only under a guard steps inside the guard.
    let (cx, [s, m]) = scope_with(["s 1..=64", "m 1..=3"]);
    let flat = ViewStack::new(View::row_major(&cx, &[3.into(), s]).unwrap())
        .permute(&cx, &[1, 0])
        .unwrap()
        .reshape(&cx, &[s * 3, 1.into()])
        .unwrap();
    insta::assert_snapshot!(strides_text(&cx, &flat), @"-, 0");
    let windows = ViewStack::new(View::row_major(&cx, &[1.into(), m]).unwrap())
        .flip(&cx, &[1])
        .unwrap()
        .reshape(&cx, &[m])
        .unwrap()
        .unfold(&cx, 0, 2i64, 1i64)
        .unwrap();
    insta::assert_snapshot!(format!("{}\n{}\n{}", windows, windows.guards_text(), strides_text(&cx, &windows)), @"
    view shape=[m - 1, 2] strides=[-1, -1] offset=m - 1 mask=none
    unfold: 2 <= m (window size is at most the size of axis 0)
    -1, -1
    ");
}

#[test]
fn a_broadcast_top_merges_as_its_one_index_slice_does() {
    // The top reads every element of the reversed view below once for each of its `n`
    // rows: with the broadcast axis of size 1 it is a row-major reshape of the view below,
    // so the pair is that reshape broadcast to `n` rows.
    let (cx, [m, n]) = scope_with(["m 1..=64", "n 1..=8"]);
    let lower = View::create(&cx, &[m], Some(&[(-1).into()]), m - 1, None).unwrap();
    let upper = View::create(&cx, &[n, m], Some(&[0.into(), 1.into()]), 0.into(), None).unwrap();
    let stack = ViewStack::from_views(&cx, vec![lower, upper]).unwrap();
    let merged = stack.to_view(&cx).unwrap().expect("one view");
    insta::assert_snapshot!(merged, @"view shape=[n, m] strides=[0, -1] offset=m - 1 mask=none");
    // Element by element at a binding, against the two-level stack.
    let mut b = symshape::Bindings::new();
    cx.bind(&mut b, "m", 5).unwrap();
    cx.bind(&mut b, "n", 3).unwrap();
    let two = stack.bind(&cx, &b).unwrap().offsets().unwrap();
    let one = merged.bind(&cx, &b).unwrap().offsets().unwrap();
    assert_eq!(one, two);
    assert_eq!(one.len(), 15);
    // A masked top keeps both levels: its broadcast axis may be partly valid.
    let masked_top = View::create(
        &cx,
        &[n, m],
        Some(&[0.into(), 1.into()]),
        0.into(),
        Some(&[(0.into(), n - 1), (0.into(), m)]),
    )
    .unwrap();
    let kept = ViewStack::from_views(&cx, vec![stack.views()[0].clone(), masked_top]).unwrap();
    assert!(kept.to_view(&cx).unwrap().is_none());
}

#[test]
fn a_tall_stack_changes_in_place_as_apply_changes_it() {
    // Each (permute, flatten, unflatten as [n, m]) round moves elements for n != m, so the
    // stack gains a view per round.
    let (cx, [n, m]) = scope_with(["n 1..=100", "m 1..=100"]);
    let mut kept = ViewStack::new(View::row_major(&cx, &[n, m]).unwrap());
    let mut in_place = kept.clone();
    let ops = [
        symshape_view::Op::Permute(vec![1, 0]),
        symshape_view::Op::Reshape(vec![n * m]),
        symshape_view::Op::Reshape(vec![n, m]),
    ];
    for _ in 0..30 {
        for op in &ops {
            kept = kept.apply(&cx, op).unwrap();
            in_place.apply_in_place(&cx, op).unwrap();
            assert_eq!(in_place, kept);
        }
    }
    assert_eq!(kept.views().len(), 31);
    // A refused op leaves the tall stack unchanged.
    let before = in_place.clone();
    assert!(in_place
        .apply_in_place(&cx, &symshape_view::Op::Permute(vec![0]))
        .is_err());
    assert_eq!(in_place, before);
}

#[test]
fn mt_of_a_rank_0_view_is_the_view() {
    let cx = Scope::new();
    // Shrunk from viewlist::axis_reversals_match_the_model: PyTorch returns a tensor of
    // rank 0 from `mT` as it is (a masked rank-0 view normalises to no mask).
    let v = ConcreteView::create(&[], Some(&[]), 0, Some(&[])).unwrap();
    assert_eq!(v.matrix_transpose(&cx).unwrap(), v);
    assert_eq!(v.matrix_conj_transpose(&cx).unwrap(), v);
    assert_eq!(v.conj_transpose(&cx).unwrap(), v);
}

#[test]
fn split_piece_beyond_an_empty_axis_is_refused_at_once() {
    // Shrunk from serialize::random_views_and_stacks_round_trip: piece 1 of an axis
    // emptied by a shrink, cut into pieces of a symbolic size `p + 1`, used to become a
    // guard the prover could not refute, with a size `-p - 1` that loading refused.
    let (cx, [_, p]) = scope_with(["n 1..=4096", "p 0..n"]);
    let v = View::contiguous(&[4, 6, 3])
        .and_then(|v| v.tensor_split(&cx, 0, 2))
        .map(|pieces| pieces[0].clone())
        .and_then(|v| v.shrink(&cx, &[(2i64, 2i64), (0, 6), (0, 3)]))
        .unwrap();
    let e = v.split_piece(&cx, 0, p + 1, 1.into()).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"split: guard p + 1 <= 0 (piece 1 starts within axis 0) fails: it is false for every value of the symbols, for view [0, 6, 3] with strides [18, 3, 1]");
}

#[test]
fn tensor_split_at_of_a_masked_symbolic_view_stacks() {
    // Shrunk from symprop::bind_after_ops_equals_ops_after_bind: a slice of a masked
    // symbolic view that is one view only for some values goes through the stack, as
    // `index` does, instead of failing at once.
    let (cx, [n, m, k]) = scope_with(["n 0..=4", "m 1..=3", "k 0..=2"]);
    let v = View::create(
        &cx,
        &[n, m],
        Some(&[1.into(), n + 1]),
        k + 1,
        Some(&[(1.into(), n), (0.into(), m)]),
    )
    .unwrap();
    let op = symshape_view::Op::TensorSplitAt {
        axis: 0,
        indices: vec![1.into()],
        piece: 0,
    };
    let st = ViewStack::new(v).apply(&cx, &op).unwrap();
    insta::assert_snapshot!(st, @r"
    view shape=[1, m] strides=[1, n + 1] offset=k + 1 mask=[(1, 1), (0, m)]
    view shape=[min(1, n), m] strides=[m, 1] offset=0 mask=none
    ");
}

#[test]
fn a_composition_beyond_i64_keeps_both_levels() {
    // Found binding generated C's extreme cases: the valid elements 2 and 3 of the upper
    // level reach lower elements 0 and 3, but the merged view's extrapolated offset at
    // index 0 leaves i64. `merge` reported an overflow, so `bind` refused the stack.
    let q = -9_223_372_036_854_775_800;
    let lower = ConcreteView::create(&[3, 2], Some(&[-1, q]), 2, None).unwrap();
    let upper = masked(&[5], &[3], -6, &[(2, 4)]);
    assert_eq!(merge(&lower, &upper).unwrap(), None);
    let stack = ConcreteStack::new(vec![lower, upper]).unwrap();
    assert_eq!(stack.levels().len(), 2);
    assert_eq!(
        stack.offsets().unwrap(),
        [None, None, Some(2), Some(1 + q), None]
    );
}

/// An integer out of range is named by the axis of the indexed view, as NumPy names it,
/// also after a `None`, and in the same words on both engines.
#[test]
fn an_index_out_of_range_names_the_axis_of_the_view() {
    let cx = Scope::new();
    let v = ConcreteView::contiguous(&[2, 3]).unwrap();
    let err = v
        .index(&cx, &parse_index("[None, 5]").unwrap())
        .unwrap_err();
    insta::assert_snapshot!(err, @"index: index 5 is out of bounds for axis 0 with size 2 of view [2, 3] with strides [3, 1]");
    let err = v
        .index(&cx, &parse_index("[None, :, None, -4]").unwrap())
        .unwrap_err();
    insta::assert_snapshot!(err, @"index: index -4 is out of bounds for axis 1 with size 3 of view [2, 3] with strides [3, 1]");
}

/// Axes a `None` inserts before an integer are counted against the limit on the result
/// only: the integer-indexed axes kept on the way do not count, in whatever order.
#[test]
fn new_axes_before_an_integer_reach_the_rank_limit() {
    let cx = Scope::new();
    let v = ConcreteView::contiguous(&[3]).unwrap();
    let mut items = vec![symshape_view::IndexItem::NewAxis; symshape_view::MAX_RANK];
    items.push(symshape_view::IndexItem::Int(2));
    let r = v.index(&cx, &items).unwrap();
    assert_eq!(r.shape(), &[1; symshape_view::MAX_RANK][..]);
    assert_eq!(r.offset(), 2);
    items.rotate_right(1);
    assert_eq!(v.index(&cx, &items).unwrap(), r);
    items.push(symshape_view::IndexItem::NewAxis);
    let err = v.index(&cx, &items).unwrap_err();
    assert!(matches!(err, symshape_view::Error::Limit { .. }), "{err}");
}

/// A reversed slice of at most one index reverses nothing, so a stride that cannot be
/// negated (on a view with no elements) is no obstacle; two indices need it negated.
#[test]
fn a_reversed_slice_of_one_index_leaves_its_stride_alone() {
    let cx = Scope::new();
    let empty = ConcreteView::create(&[2, 0], Some(&[i64::MIN, 1]), 0, None).unwrap();
    insta::assert_snapshot!(empty.index(&cx, &parse_index("[1::-2]").unwrap()).unwrap(), @"view shape=[1, 0] strides=[1, 1] offset=0 mask=none");
    insta::assert_snapshot!(empty.index(&cx, &parse_index("[::-1]").unwrap()).unwrap_err(), @"index: overflow: stride -9223372036854775808 times step -1 of view [2, 0] with strides [-9223372036854775808, 1]");
}

#[test]
fn as_strided_over_a_negative_buffer() {
    // A negative length holds no element: only a view without one fits.
    assert!(ConcreteView::as_strided(&[0, 3], &[3, 1], 5, -1).is_ok());
    let e = ConcreteView::as_strided(&[1, 2], &[0, 1], 0, -1).unwrap_err();
    insta::assert_snapshot!(e, @"as_strided: view [1, 2] with strides [0, 1] reaches offsets 0..=1 outside a buffer of -1 elements");
}

#[test]
fn broadcast_checks_each_shape_in_order_on_both_engines() {
    // Shapes are checked (rank, sizes) and merged one after the other: the mismatch of
    // the first two is found before the rank of the third, with constant sizes through
    // either entry point.
    let long = [1i64; 65];
    let shapes: [&[i64]; 3] = [&[2], &[3], &long];
    let e = symshape_view::concrete::broadcast_shapes(&shapes).unwrap_err();
    let f = symshape_view::broadcast_shapes(&Scope::new(), &shapes).unwrap_err();
    assert_eq!(e.to_string(), f.to_string());
    insta::assert_snapshot!(e, @"broadcast_shapes: shapes [2] and [3] do not broadcast: axis -1 has sizes 2 and 3");
}
