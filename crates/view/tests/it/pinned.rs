//! Shrunk property-test failures and hand-picked corner cases, pinned by name.

use view::{parse_index, ConcreteView, View, ViewStack};

#[test]
fn unfold_of_a_view_without_valid_elements() {
    // Shrunk from ops::other_ops_match_the_model: a partial mask on the unfolded
    // axis is irrelevant when another axis masks everything out.
    let v = ConcreteView::create(
        &[3, 1, 1],
        Some(&[0, 0, 0]),
        0,
        Some(&[(0, 2), (0, 0), (0, 0)]),
    )
    .unwrap();
    insta::assert_snapshot!(v.unfold(0, 2, 1).unwrap(), @"view shape=[2, 1, 1, 2] strides=[0, 0, 0, 0] offset=0 mask=[(0, 0), (0, 0), (0, 0), (0, 0)]");
}

#[test]
fn canonical_forms_of_equal_mappings_match() {
    let a = ConcreteView::create(&[1, 3], Some(&[7, 1]), 2, None).unwrap();
    let b = ConcreteView::create(&[1, 3], Some(&[0, 1]), 2, None).unwrap();
    assert_eq!(a.canonical(), b.canonical());
    let c = ConcreteView::create(&[2, 3], Some(&[5, 1]), 0, Some(&[(1, 2), (0, 3)])).unwrap();
    let d = ConcreteView::create(&[2, 3], Some(&[-9, 1]), 14, Some(&[(1, 2), (0, 3)])).unwrap();
    assert!(c.same_mapping(&d));
    insta::assert_snapshot!(c.canonical(), @"view shape=[2, 3] strides=[0, 1] offset=5 mask=[(1, 2), (0, 3)]");
    let e = ConcreteView::create(&[2, 3], Some(&[5, 1]), 0, Some(&[(1, 1), (0, 3)])).unwrap();
    insta::assert_snapshot!(e.canonical(), @"view shape=[2, 3] strides=[0, 0] offset=0 mask=[(0, 0), (0, 0)]");
}

#[test]
fn seed_queries() {
    let v = View::create(&[2i64, 3], Some(&[3i64, 1]), 5, None).unwrap();
    assert_eq!(v.linear_index(&[1, 2]).unwrap(), 10);
    assert!(v.is_valid(&[1, 2]));
    assert!(!v.is_valid(&[1]));
    assert!(!v.is_valid(&[2, 0]));
    assert!(!v.is_c_contiguous());
    let w = View::create(&[1i64, 3], Some(&[99i64, 1]), 0, None).unwrap();
    assert!(w.is_c_contiguous(), "strides of size-1 axes are ignored");
    let z = View::create(
        &[0i64, 3],
        Some(&[-4i64, 7]),
        9,
        Some(&[(0i64, 0i64), (0, 3)]),
    )
    .unwrap();
    insta::assert_snapshot!(z, @"view shape=[0, 3] strides=[-4, 7] offset=0 mask=none");
    let full = View::create(&[2i64, 3], None, 0, Some(&[(0i64, 2i64), (0, 3)])).unwrap();
    assert!(full.mask().is_none() && full.is_c_contiguous() && full.is_materializable());
    let p = full.pad(&[(1i64, 0i64), (0, 0)]).unwrap();
    assert!(p.strides_opt().is_none() && !p.can_get_strides());
    assert_eq!(p.numel().as_i64(), Some(9));
    assert_eq!(p.dim(0).unwrap().as_i64(), Some(3));
    assert_eq!(p.stride(1).unwrap().as_i64(), Some(1));
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
    let s = ViewStack::new(View::contiguous(&[3i64]).unwrap())
        .pad(&[(1i64, 0i64)])
        .unwrap()
        .reshape(&[2i64, 2])
        .unwrap();
    assert_eq!(s.views().len(), 2);
    assert!(s.to_view().unwrap().is_none());
    let t = s.shrink(&[(1i64, 2i64), (0, 2)]).unwrap();
    insta::assert_snapshot!(t, @"view shape=[1, 2] strides=[0, 1] offset=1 mask=none");
    let u = ViewStack::from_views(s.views().to_vec()).unwrap();
    assert_eq!(u.offsets().unwrap(), s.offsets().unwrap());
    insta::assert_snapshot!(u.canonical().unwrap(), @r"
    view shape=[4] strides=[1] offset=-1 mask=[(1, 4)]
    view shape=[2, 2] strides=[2, 1] offset=0 mask=none
    ");
}

#[test]
fn broadcast_shapes_follow_numpy() {
    let r = view::concrete::broadcast_shapes(&[&[3], &[2, 4, 1], &[1, 1]]).unwrap();
    assert_eq!(r, vec![2, 4, 3]);
    assert_eq!(
        view::concrete::broadcast_shapes(&[]).unwrap(),
        Vec::<i64>::new()
    );
    assert_eq!(
        view::concrete::broadcast_shapes(&[&[0], &[1]]).unwrap(),
        vec![0]
    );
}

#[test]
fn zero_size_views_with_huge_strides() {
    // Zero-size views accept any strides; ops on them must not compute offsets.
    let z = ConcreteView::create(&[0, 3], Some(&[1, i64::MAX]), 0, None).unwrap();
    let items = parse_index("[:, 2]").unwrap();
    insta::assert_snapshot!(z.index(&items).unwrap(), @"view shape=[0] strides=[1] offset=0 mask=none");
    insta::assert_snapshot!(z.shrink(&[(0, 0), (2, 3)]).unwrap(), @"view shape=[0, 1] strides=[1, 9223372036854775807] offset=0 mask=none");
    insta::assert_snapshot!(z.flip(&[true, true]).unwrap(), @"view shape=[0, 3] strides=[1, -9223372036854775807] offset=0 mask=none");
    insta::assert_snapshot!(z.diagonal(1, 0, 1).unwrap_err(), @"diagonal: overflow: strides 1 + 9223372036854775807 of view [0, 3] with strides [1, 9223372036854775807]");
}

#[test]
fn extreme_values_give_errors_not_panics() {
    // Each case was a panic found by robust::ops_never_panic.
    let singleton = ConcreteView::create(&[1], Some(&[i64::MIN]), 0, None).unwrap();
    insta::assert_snapshot!(singleton.flip(&[true]).unwrap(), @"view shape=[1] strides=[-9223372036854775808] offset=0 mask=none");
    let wide =
        ConcreteView::create(&[2, 2], Some(&[i64::MAX / 2, -(i64::MAX / 2)]), 0, None).unwrap();
    assert_eq!(wide.offsets().len(), 4, "partial sums stay in range");
    let zero = ConcreteView::create(&[i64::MAX, i64::MAX, 0], Some(&[0, 0, 0]), 0, None).unwrap();
    assert_eq!(zero.numel(), 0);
    insta::assert_snapshot!(zero.flatten(0, 1).unwrap_err(), @"flatten: overflow: merged size of axes 0..=1 of view [9223372036854775807, 9223372036854775807, 0] with strides [0, 0, 0]");
    let long = ConcreteView::create(&[i64::MAX], Some(&[0]), 0, None).unwrap();
    insta::assert_snapshot!(long.split(0, 1).unwrap_err(), @"split: 9223372036854775807 pieces of size 1 along axis 0 of view [9223372036854775807] with strides [0] exceed the limit of 16777216");
    insta::assert_snapshot!(long.unfold(0, 0, 1).unwrap_err(), @"unfold: overflow: window count along axis 0 of view [9223372036854775807] with strides [0]");
    insta::assert_snapshot!(long.unfold(0, i64::MAX / 2, 1).unwrap_err(), @"unfold: overflow: element count of shape [4611686018427387905, 4611686018427387903] exceeds i64");
}

#[test]
fn stack_forms_of_view_ops() {
    let s = ViewStack::new(View::contiguous(&[4i64, 6]).unwrap())
        .transpose(0, 1)
        .unwrap()
        .unflatten(0, &[2i64, 3])
        .unwrap();
    insta::assert_snapshot!(s, @"view shape=[2, 3, 4] strides=[3, 1, 6] offset=0 mask=none");
    let t = s.flatten(1, 2).unwrap();
    assert_eq!(t.views().len(), 2);
    let n = t.narrow(1, 4, 4i64).unwrap();
    insta::assert_snapshot!(n.offsets_line().unwrap(), @"offsets [2, 4]: 1 7 13 19 4 10 16 22");
}

#[test]
fn merge_with_an_empty_axis_is_empty_even_if_another_is_not_a_box() {
    // Shrunk from chains::view_stack_and_model_agree: lower axis 0 rules out every
    // element, so the slab on axis 2 that is not a box does not matter.
    let lower = ConcreteView::create(
        &[4, 4, 4],
        Some(&[0, 0, 0]),
        0,
        Some(&[(0, 2), (1, 3), (0, 3)]),
    )
    .unwrap();
    let upper =
        ConcreteView::create(&[1, 2, 2, 1, 1, 2], Some(&[0, 4, 2, 0, 0, 1]), 48, None).unwrap();
    insta::assert_snapshot!(view::concrete::merge(&lower, &upper).unwrap().unwrap(), @"view shape=[1, 2, 2, 1, 1, 2] strides=[0, 0, 0, 0, 0, 0] offset=0 mask=[(0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0)]");
}
