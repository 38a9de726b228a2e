//! Extreme values never panic: every op returns a view or an error value.

use proptest::prelude::*;
use symshape::Scope;
use symshape_view::concrete::merge;
use symshape_view::{ConcreteView, IndexItem, Op, View, ViewOps, ViewStack};

fn extreme() -> impl Strategy<Value = i64> {
    prop_oneof![
        -3i64..=3,
        Just(i64::MAX),
        Just(i64::MIN),
        Just(i64::MAX / 2),
        Just(i64::MIN / 2),
        Just(1 << 32),
        any::<i64>(),
    ]
}

fn small_or_huge() -> impl Strategy<Value = i64> {
    prop_oneof![0i64..=4, Just(1 << 31), Just(i64::MAX)]
}

proptest! {
    #[test]
    fn ops_never_panic(
        shape in prop::collection::vec(small_or_huge(), 0..4),
        strides in prop::collection::vec(extreme(), 0..4),
        offset in extreme(),
        args in prop::collection::vec(extreme(), 12),
    ) {
        let cx = Scope::new();
        let strides: Vec<i64> = strides.into_iter().chain(std::iter::repeat(1)).take(shape.len()).collect();
        let Ok(v) = ConcreteView::create(&shape, Some(&strides), offset, None) else { return Ok(()) };
        let n = v.ndim();
        let a = |i: usize| args[i % args.len()];
        let axis = |i: usize| (a(i).unsigned_abs() % (n as u64 + 2)) as usize;
        let pairs: Vec<(i64, i64)> = (0..n).map(|i| (a(2 * i), a(2 * i + 1))).collect();
        let _ = v.reshape(&cx, &[a(0), a(1)]);
        let _ = v.reshape(&cx, &[v.numel()]);
        let _ = v.expand(&cx, &pairs.iter().map(|p| p.0).collect::<Vec<_>>());
        let _ = v.shrink(&cx, &pairs);
        let _ = v.pad(&cx, &pairs);
        let _ = v.pad(&cx, &pairs.iter().map(|&(x, y)| (x.rem_euclid(3), y.rem_euclid(3))).collect::<Vec<_>>());
        let _ = v.flip(&cx, &(0..n).collect::<Vec<_>>());
        let _ = v.permute(&cx, &(0..n).rev().collect::<Vec<_>>());
        let items = [
            IndexItem::Int(a(3)),
            IndexItem::Slice { start: Some(a(4)), stop: Some(a(5)), step: Some(a(6)) },
            IndexItem::NewAxis,
            IndexItem::Ellipsis,
        ];
        let _ = v.index(&cx, &items);
        let _ = v.index(&cx, &items[1..2]);
        let _ = v.linear_index(&vec![a(7); n]);
        let _ = v.offset_of(&vec![0; n]);
        let _ = v.narrow(&cx, axis(0), a(1), a(2));
        let _ = v.split_count(axis(3), a(4));
        let _ = v.split_piece(&cx, axis(3), a(4), a(5));
        let _ = v.apply(&Op::Chunk { axis: axis(5), chunks: a(6).unsigned_abs() as usize, piece: a(7).unsigned_abs() as usize });
        let _ = v.select(&cx, axis(6), a(7));
        let _ = v.unfold(&cx, axis(7), a(8), a(9));
        let _ = v.diagonal(&cx, a(10), axis(11), axis(0));
        let _ = v.unsqueeze(&cx, axis(1));
        let _ = v.squeeze(&cx, None);
        let _ = v.movedim(&cx, axis(2), axis(3));
        let _ = v.broadcast_to(&cx, &[a(4), a(5)]);
        let _ = v.flatten(&cx, axis(6), axis(7));
        let _ = v.unflatten(&cx, axis(8), &[a(9), a(10)]);
        let _ = ConcreteView::as_strided(&shape, &strides, offset, a(11));
        let _ = v.canonical();
        if let Ok(p) = v.pad(&cx, &vec![(1, 1); n]) {
            let _ = p.reshape(&cx, &[p.numel()]);
            let _ = p.unfold(&cx, axis(0), 2, 1);
        }
        if v.numel() < 1000 {
            let _ = v.offsets();
        }
        let cx = Scope::new();
        let s = ViewStack::new(View::from(&v));
        let _ = s.reshape(&cx, &[v.numel()]);
        let _ = s.pad(&cx, &pairs);
        let _ = s.index(&cx, &items);
        let _ = s.squeeze(&cx, None);
        let _ = s.flatten(&cx, axis(6), axis(7));
        let _ = s.expand(&cx, &pairs.iter().map(|p| p.1).collect::<Vec<_>>());
        let _ = s.split(&cx, axis(3), a(4));
        let _ = s.chunk(&cx, axis(5), a(6).unsigned_abs() as usize);
        let _ = s.unbind(&cx, axis(1));
        if v.numel() < 1000 {
            let _ = s.to_concrete("offsets").and_then(|c| c.offsets());
        }
        if let Ok(c) = ConcreteView::contiguous(&[v.numel().min(64)]) {
            let _ = merge(&v, &c);
            let _ = merge(&c, &v);
        }
    }
}

/// A zero-size view is valid whatever its other sizes: its row-major strides are the
/// products of the sizes after each axis (the product of all of them is no stride), and
/// a stride past i64 saturates, since an empty view reads nothing.
#[test]
fn zero_size_views_of_huge_sizes_are_valid() {
    let v = ConcreteView::contiguous(&[1 << 62, 2, 0]).expect("view");
    assert_eq!(v.strides(), &[2, 1, 1]);
    let v = ConcreteView::contiguous(&[1 << 40, 1 << 40, 1 << 40, 0]).expect("view");
    assert_eq!(v.strides(), &[i64::MAX, 1 << 40, 1, 1]);
    assert_eq!(v.offsets().expect("offsets"), Vec::<Option<i64>>::new());
    // The same as the symbolic view bound to those values.
    let mut cx = Scope::new();
    let n = cx.declare_str("n").expect("n");
    let s =
        View::row_major(&cx, &[n, symshape::Expr::from(2), symshape::Expr::from(0)]).expect("view");
    let mut b = symshape::Bindings::new();
    b.set(n, 1 << 62).expect("set");
    assert_eq!(
        s.bind(&cx, &b).expect("bind"),
        ConcreteView::contiguous(&[1 << 62, 2, 0]).expect("view")
    );
    // A non-empty view whose strides fit but whose element count does not is refused.
    assert!(ConcreteView::contiguous(&[1 << 62, 4]).is_err());
    // An empty reshape keeps the same rule.
    let empty = ConcreteView::contiguous(&[0]).expect("view");
    assert_eq!(
        empty
            .reshape(&cx, &[1 << 62, 2, 0])
            .expect("reshape")
            .strides(),
        &[2, 1, 1]
    );
}
