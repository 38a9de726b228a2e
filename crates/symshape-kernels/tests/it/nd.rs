//! The ndarray feature: array views as sources and destinations, against ndarray's own
//! element iteration as the reference.

use ndarray::{s, Array, ArrayD, IxDyn, SliceInfoElem};
use proptest::prelude::*;
use std::borrow::Cow;
use symshape_kernels::{
    copy, materialize, nd, reduce, ConcreteView, Dense, Error, Input, Output, ReduceConfig,
    ReduceOp,
};

/// How `nd::source` read the view (`borrowed`/`gathered`), its layout, and whether the kernels
/// reproduce ndarray's logical element order.
fn check(a: ndarray::ArrayViewD<'_, i32>) -> String {
    let (buf, layout) = nd::source(&a).unwrap();
    let how = match buf {
        Cow::Borrowed(_) => "borrowed",
        Cow::Owned(_) => "gathered",
    };
    let got = materialize(Input::new(&buf, &layout).pad(-1))
        .map(|d| d.values)
        .unwrap();
    let want: Vec<i32> = a.iter().copied().collect();
    let same = if got == want { "same" } else { "DIFFERENT" };
    format!("{how} {} of {} => {same}", layout, buf.len())
}

fn grid(shape: &[usize]) -> ArrayD<i32> {
    let n: usize = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n as i32).collect()).unwrap()
}

#[test]
fn sources() {
    let a = grid(&[3, 4]);
    insta::assert_snapshot!(check(a.view()), @"borrowed view shape=[3, 4] strides=[4, 1] offset=0 mask=none of 12 => same");
    insta::assert_snapshot!(check(a.t().into_dyn()), @"borrowed view shape=[4, 3] strides=[1, 4] offset=0 mask=none of 12 => same");
    insta::assert_snapshot!(check(a.slice(s![..;-1, ..]).into_dyn()), @"borrowed view shape=[3, 4] strides=[-4, 1] offset=8 mask=none of 12 => same");
    insta::assert_snapshot!(check(a.slice(s![..;-1, ..;-1]).into_dyn()), @"borrowed view shape=[3, 4] strides=[-4, -1] offset=11 mask=none of 12 => same");
    insta::assert_snapshot!(check(a.slice(s![1..3, ..]).into_dyn()), @"borrowed view shape=[2, 4] strides=[4, 1] offset=0 mask=none of 8 => same");
    insta::assert_snapshot!(check(a.slice(s![.., ..;2]).into_dyn()), @"gathered view shape=[3, 2] strides=[2, 1] offset=0 mask=none of 6 => same");
    insta::assert_snapshot!(check(a.slice(s![..;-2, 1..;-3]).into_dyn()), @"gathered view shape=[2, 1] strides=[1, 0] offset=0 mask=none of 2 => same");
    insta::assert_snapshot!(check(a.slice(s![.., 1..3]).into_dyn()), @"gathered view shape=[3, 2] strides=[2, 1] offset=0 mask=none of 6 => same");
    insta::assert_snapshot!(check(a.slice(s![1, ..]).into_dyn()), @"borrowed view shape=[4] strides=[1] offset=0 mask=none of 4 => same");
    insta::assert_snapshot!(check(a.slice(s![1, 2]).into_dyn()), @"borrowed view shape=[] strides=[] offset=0 mask=none of 1 => same");
    insta::assert_snapshot!(check(a.slice(s![.., 2..2]).into_dyn()), @"borrowed view shape=[3, 0] strides=[0, 0] offset=0 mask=none of 0 => same");
    let row = grid(&[4]);
    insta::assert_snapshot!(check(row.broadcast(IxDyn(&[3, 4])).unwrap()), @"borrowed view shape=[3, 4] strides=[0, 1] offset=0 mask=none of 4 => same");
    let col = grid(&[3, 1]);
    insta::assert_snapshot!(check(col.broadcast(IxDyn(&[2, 3, 4])).unwrap()), @"borrowed view shape=[2, 3, 4] strides=[0, 1, 0] offset=0 mask=none of 3 => same");
    let cube = grid(&[2, 3, 4]);
    insta::assert_snapshot!(check(cube.view().permuted_axes(IxDyn(&[2, 0, 1]))), @"borrowed view shape=[4, 2, 3] strides=[1, 12, 4] offset=0 mask=none of 24 => same");
    insta::assert_snapshot!(check(cube.slice(s![.., ..;2, ..;-1]).into_dyn()), @"gathered view shape=[2, 2, 4] strides=[8, 4, 1] offset=0 mask=none of 16 => same");
}

#[test]
fn destinations() {
    // A transposed (dense) destination is written in place by the kernels.
    let src = grid(&[3, 4]);
    let (sbuf, sl) = nd::source(&src.view()).unwrap();
    let mut out = Array::<i32, _>::zeros((4, 3));
    let mut t = out.view_mut().reversed_axes();
    let (dbuf, dl) = nd::destination(&mut t).unwrap();
    insta::assert_snapshot!(dl.to_string(), @"view shape=[3, 4] strides=[1, 3] offset=0 mask=none");
    copy(Input::new(&sbuf, &sl).pad(0), Output::new(dbuf, &dl)).unwrap();
    assert_eq!(out.into_dyn(), src.t());
    // A stepped destination has gaps: `destination` refuses, `copy_into` goes through ndarray.
    let mut wide = Array::<i32, _>::from_elem((3, 8), -1);
    let mut even = wide.slice_mut(s![.., ..;2]);
    insta::assert_snapshot!(nd::destination(&mut even).map(|_| ()).unwrap_err().to_string(), @"destination: ndarray view [3, 4] with strides [8, 2] does not cover its memory range densely");
    nd::copy_into(Input::new(&sbuf, &sl), &mut even).unwrap();
    let want: Vec<i32> = (0..3)
        .flat_map(|r| (0..8).map(move |c| if c % 2 == 0 { r * 4 + c / 2 } else { -1 }))
        .collect();
    assert_eq!(wide.iter().copied().collect::<Vec<_>>(), want);
    // Interleaved mutable views: writing one leaves the other's elements alone.
    let mut both = Array::<i32, _>::zeros((2, 4));
    let (mut ev, od) = both.multi_slice_mut((s![.., ..;2], s![.., 1..;2]));
    let small = grid(&[2, 2]);
    let (b2, l2) = nd::source(&small.view()).unwrap();
    nd::copy_into(Input::new(&b2, &l2), &mut ev).unwrap();
    assert!(od.iter().all(|&x| x == 0));
    assert_eq!(
        both.iter().copied().collect::<Vec<_>>(),
        vec![0, 0, 1, 0, 2, 0, 3, 0]
    );
    // Shape mismatch.
    let mut out = Array::<i32, _>::zeros((2, 2));
    insta::assert_snapshot!(nd::copy_into(Input::new(&sbuf, &sl), &mut out.view_mut()).unwrap_err().to_string(), @"copy: destination shape [2, 2] differs from source shape [3, 4]");
}

#[test]
fn dense_to_ndarray() {
    let a = grid(&[2, 3]);
    let (buf, l) = nd::source(&a.view()).unwrap();
    let r = reduce(
        Input::new(&buf, &l),
        &[1],
        ReduceOp::Sum,
        ReduceConfig::default(),
    )
    .unwrap();
    insta::assert_snapshot!(format!("{:?}", r.clone().into_ndarray().unwrap().into_raw_vec_and_offset().0), @"[3, 12]");
    let bad = Dense {
        shape: vec![2, 2],
        values: vec![1, 2, 3],
    };
    insta::assert_snapshot!(bad.into_ndarray().unwrap_err().to_string(), @"into_ndarray: output holds 3 elements but shape [2, 2] needs 4");
    let t = ConcreteView::create(&[3, 2], Some(&[1, 3]), 0, None).unwrap();
    let d = Dense {
        shape: vec![3, 2],
        values: materialize(Input::new(&buf, &t).pad(0))
            .map(|d| d.values)
            .unwrap(),
    };
    assert_eq!(d.into_ndarray().unwrap(), a.t().into_dyn());
    let e: Result<ArrayD<i32>, Error> = Dense {
        shape: vec![0, 5],
        values: vec![],
    }
    .into_ndarray();
    assert_eq!(e.unwrap().shape(), &[0, 5]);
}

/// Grid shape, per-axis `(start, end, step)`, permutation, and an optional leading broadcast axis.
type Case = (Vec<usize>, Vec<(i32, i32, i32)>, Vec<usize>, Option<usize>);

/// A random sliced, permuted, possibly broadcast view of a grid.
fn sliced() -> impl Strategy<Value = Case> {
    prop::collection::vec(1usize..6, 1..=3).prop_flat_map(|shape| {
        let n = shape.len();
        (
            Just(shape),
            prop::collection::vec((-6i32..6, -6i32..7, prop_oneof![-3i32..=-1, 1i32..=3]), n),
            Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
            prop::option::of(1usize..4),
        )
    })
}

proptest! {
    #[test]
    fn sources_match_ndarray((shape, slices, perm, bcast) in sliced()) {
        let a = grid(&shape);
        let info: Vec<SliceInfoElem> = slices
            .iter()
            .zip(&shape)
            .map(|(&(start, end, step), &d)| {
                let d = d as i32;
                // Clamp into range so that ndarray accepts the slice.
                let (s, e) = (start.clamp(-d, d - 1).max(-d), end.clamp(-d, d));
                let s = if s < 0 { s + d } else { s };
                let e = if e < 0 { e + d } else { e };
                SliceInfoElem::Slice { start: s as isize, end: Some(e.max(s) as isize), step: step as isize }
            })
            .collect();
        let w = a.slice(info.as_slice()).permuted_axes(IxDyn(&perm));
        let (buf, l) = nd::source(&w).unwrap();
        prop_assert_eq!(materialize(Input::new(&buf, &l).pad(-1)).map(|d| d.values).unwrap(), w.iter().copied().collect::<Vec<_>>());
        if let Some(k) = bcast {
            let mut to = vec![k];
            to.extend_from_slice(w.shape());
            let b = w.broadcast(IxDyn(&to)).unwrap();
            let (buf, l) = nd::source(&b).unwrap();
            prop_assert_eq!(materialize(Input::new(&buf, &l).pad(-1)).map(|d| d.values).unwrap(), b.iter().copied().collect::<Vec<_>>());
        }
        // The same view as a destination: written through the kernels or ndarray, and the
        // elements outside it untouched.
        let mut target = Array::from_elem(IxDyn(&shape), -7);
        let mut dst = target.slice_mut(info.as_slice()).permuted_axes(IxDyn(&perm));
        let dims: Vec<i64> = dst.shape().iter().map(|&d| d as i64).collect();
        let src = ConcreteView::contiguous(&dims).unwrap();
        let vals: Vec<i32> = (0..src.numel() as i32).map(|x| x * 3 + 1).collect();
        nd::copy_into(Input::new(&vals, &src), &mut dst).unwrap();
        prop_assert_eq!(dst.iter().copied().collect::<Vec<_>>(), vals.clone());
        let untouched = target.iter().filter(|&&x| x == -7).count();
        prop_assert_eq!(untouched, target.len() - vals.len());
    }
}
