//! The gathers (NumPy's fancy and boolean indexing) against an element-by-element
//! reference: every output element read from the input through its index, masked-out
//! elements reading the pad.

use proptest::prelude::*;
use symshape_kernels::{boolean_mask, compress, gather, take, ConcreteStack, ConcreteView, Input};
use symshape_view::concrete::unravel;
use symshape_view::Op;

use crate::gen::random_layout;

/// The buffer every case reads.
fn buffer() -> Vec<i64> {
    (0..40).map(|i| 100 + i).collect()
}

/// The value at index `idx` of `v` over `buf`, or `pad` where it is masked out.
fn value(v: &ConcreteView, buf: &[i64], idx: &[i64], pad: i64) -> i64 {
    match v.offset_of(idx).expect("index in shape") {
        Some(o) => buf[usize::try_from(o).expect("offset in buffer")],
        None => pad,
    }
}

/// The reference result of reading, for each output index (row-major over `out`), the
/// input index `src(out index)`.
fn reference(
    out: &[i64],
    src: impl Fn(&[i64]) -> Vec<i64>,
    read: impl Fn(&[i64]) -> i64,
) -> Vec<i64> {
    let n: i64 = out.iter().product();
    (0..n).map(|k| read(&src(&unravel(out, k)))).collect()
}

proptest! {
    #[test]
    fn gathers_match_the_element_reference(
        v in random_layout(40),
        pick in 0usize..3,
        indices in prop::collection::vec(-5i64..5, 0..5),
        bits in prop::collection::vec(any::<bool>(), 64),
        pad in -9i64..0,
    ) {
        let buf = buffer();
        let shape = v.shape().to_vec();
        let read = |idx: &[i64]| value(&v, &buf, idx, pad);
        let input = || Input::new(&buf, &v).pad(pad);
        // Boolean mask of the whole shape: the true elements in row-major order.
        let numel: i64 = shape.iter().product();
        let mask: Vec<bool> = bits[..usize::try_from(numel).expect("numel")].to_vec();
        let kept: Vec<i64> = (0..numel).filter(|&k| mask[k as usize]).collect();
        let want = reference(&[kept.len() as i64], |i| unravel(&shape, kept[i[0] as usize]), read);
        let got = boolean_mask(input(), &mask).expect("boolean_mask");
        prop_assert_eq!(&got.values, &want);
        prop_assert_eq!(got.shape, vec![kept.len()]);
        if shape.is_empty() {
            return Ok(());
        }
        let axis = pick % shape.len();
        let d = shape[axis];
        // take: an index outside -d..d is NumPy's IndexError.
        let norm: Option<Vec<i64>> = indices
            .iter()
            .map(|&i| {
                let j = if i < 0 { i + d } else { i };
                (0..d).contains(&j).then_some(j)
            })
            .collect();
        let got = take(input(), axis, &indices);
        match norm {
            Some(norm) => {
                let mut out = shape.clone();
                out[axis] = norm.len() as i64;
                let src = |i: &[i64]| {
                    let mut s = i.to_vec();
                    s[axis] = norm[i[axis] as usize];
                    s
                };
                let got = got.map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(got.values, reference(&out, src, read));
            }
            None => prop_assert!(got.is_err()),
        }
        // compress: the true indices of the axis.
        let axis_mask: Vec<bool> = bits[..d as usize].to_vec();
        let kept: Vec<i64> = (0..d).filter(|&k| axis_mask[k as usize]).collect();
        let mut out = shape.clone();
        out[axis] = kept.len() as i64;
        let src = |i: &[i64]| {
            let mut s = i.to_vec();
            s[axis] = kept[i[axis] as usize];
            s
        };
        let got = compress(input(), axis, &axis_mask).expect("compress");
        prop_assert_eq!(got.values, reference(&out, src, read));
        prop_assert!(compress(input(), axis, &bits[..d as usize + 1]).is_err());
    }
}

/// A gather reads a stack of views as the views read it: the top through the levels below.
#[test]
fn gathers_read_through_a_stack() {
    let buf: Vec<i64> = (0..6).collect();
    let lower = ConcreteView::create(&[3, 2], Some(&[1, 3]), 0, None).expect("transpose");
    let upper = ConcreteView::contiguous(&[2, 3]).expect("row-major");
    let stack = ConcreteStack::new(vec![lower, upper]).expect("stack");
    // The stack reads 0 3 1 4 2 5 as [2, 3]; NumPy's a[[1, 0]] swaps its rows.
    let got = gather(
        Input::new(&buf, &stack),
        &Op::Take {
            axis: 0,
            indices: vec![1, 0],
        },
    )
    .expect("take");
    assert_eq!(got.values, vec![4, 2, 5, 0, 3, 1]);
    assert_eq!(got.shape, vec![2, 3]);
}

#[test]
fn gather_errors() {
    let buf: Vec<i64> = (0..6).collect();
    let v = ConcreteView::contiguous(&[2, 3]).expect("view");
    let msg = |r: Result<symshape_kernels::Dense<i64>, symshape_kernels::Error>| match r {
        Ok(d) => format!("ok {:?}", d.values),
        Err(e) => e.to_string(),
    };
    let lines = [
        msg(take(Input::new(&buf, &v), 1, &[3])),
        msg(take(Input::new(&buf, &v), 2, &[0])),
        msg(compress(Input::new(&buf, &v), 0, &[true])),
        msg(boolean_mask(Input::new(&buf, &v), &[true; 7])),
        msg(gather(Input::new(&buf, &v), &Op::Ravel)),
        msg(take(Input::new(&buf[..4], &v), 0, &[0])),
    ];
    insta::assert_snapshot!(lines.join("\n"), @r"
    take: index 3 is out of bounds for axis 1 with size 3, for an input of shape [2, 3]
    take: axis 2 is out of range for an input of shape [2, 3] of rank 2
    compress: boolean index did not match indexed array along axis 0; size of axis is 2 but size of corresponding boolean axis is 1, for an input of shape [2, 3]
    boolean_mask: boolean index did not match indexed array: the mask has 7 entries but an input of shape [2, 3] has 6 elements (one entry per element, row-major)
    ravel: ravel is not a gather (take, compress or boolean_mask)
    materialize: source view reaches offsets 0..=5 but its buffer holds 4 elements
    ");
}
