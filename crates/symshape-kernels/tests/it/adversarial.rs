//! Adversarial layouts for the unsafe paths: strides and offsets at the edge of `isize`,
//! zero-size views with wild strides, empty masks, views exactly touching a buffer's ends,
//! stacks whose offset table is longer than the buffer, tiled edges and thread splits.

use crate::gen::WithMask;
use crate::reference as r;
use symshape_kernels::{
    copy, fill, map, materialize, plan_materialize, reduce, zip, ConcreteStack, ConcreteView,
    Error, Input, Output, ReduceConfig, ReduceOp,
};

fn msg<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => e.to_string(),
    }
}

/// Every operation on `view` over a buffer of `len` elements (values 1, 2, 3, ...), one line
/// each: errors where the view leaves the buffer, exact values where it does not.
fn check(view: Result<ConcreteView, symshape_view::Error>, len: usize) -> String {
    let view = match view {
        Ok(v) => v,
        Err(e) => return format!("layout: {e}"),
    };
    let buf: Vec<i64> = (1..=len as i64).collect();
    let mut out = vec![view.to_string()];
    out.push(format!("extent: {:?}", view.extent()));
    out.push(format!(
        "plan: {}",
        msg(plan_materialize::<i64>(&view).map(|p| p.boxes().len()))
    ));
    out.push(format!(
        "materialize: {}",
        msg(materialize(Input::new(&buf, &view).pad(-1)).map(|d| d.values))
    ));
    out.push(format!(
        "map: {}",
        msg(map(Input::new(&buf, &view), |x| x * 2).map(|d| d.values))
    ));
    let axes: Vec<usize> = (0..view.ndim()).collect();
    out.push(format!(
        "reduce: {}",
        msg(reduce(
            Input::new(&buf, &view),
            &axes,
            ReduceOp::Sum,
            ReduceConfig::default()
        )
        .map(|d| d.values))
    ));
    out.push(format!(
        "zip: {}",
        msg(
            zip(Input::new(&buf, &view), Input::new(&buf, &view), |a, b| a
                * 100
                + b)
            .map(|d| d.values)
        )
    ));
    let mut dst = vec![0i64; len];
    out.push(format!(
        "fill: {}",
        msg(fill(Output::new(&mut dst, &view), 7).map(|()| dst.clone()))
    ));
    let src: Vec<i64> = (0..view.numel() as i64).map(|x| -x - 1).collect();
    let contiguous = ConcreteView::contiguous(view.shape()).unwrap();
    let mut dst = vec![0i64; len];
    out.push(format!(
        "copy into: {}",
        msg(copy(
            Input::new(&src, &contiguous).pad(0),
            Output::new(&mut dst, &view)
        )
        .map(|()| dst.clone()))
    ));
    // Whatever succeeded must agree with the element-by-element reference.
    // (The reference enumerates indices axis by axis: skipped for zero-size views.)
    if let (Ok(got), true) = (
        materialize(Input::new(&buf, &view).pad(-1)).map(|d| d.values),
        view.numel() > 0,
    ) {
        assert_eq!(got, r::materialize(&buf, std::slice::from_ref(&view), -1));
    }
    out.join("\n")
}

const BIG: isize = 3 << 61;
const HALF: isize = 1 << 62;

/// The view of `shape` with `strides` at `offset`, in machine integers (which may not fit
/// the view crate's `i64` fields).
fn lay(
    shape: &[usize],
    strides: &[isize],
    offset: isize,
) -> Result<ConcreteView, symshape_view::Error> {
    let big = |x: u128| symshape_view::Error::Invalid {
        op: "test",
        detail: format!("{x} does not fit i64"),
    };
    let shape: Vec<i64> = shape
        .iter()
        .map(|&d| i64::try_from(d).map_err(|_| big(d as u128)))
        .collect::<Result<_, _>>()?;
    let strides: Vec<i64> = strides.iter().map(|&t| t as i64).collect();
    ConcreteView::create(&shape, Some(&strides), offset as i64, None)
}

/// The same view with a mask.
fn masked(l: ConcreteView, mask: &[(usize, usize)]) -> Result<ConcreteView, symshape_view::Error> {
    Ok(l.with_mask(mask).expect("mask fits"))
}

#[test]
fn edge_layouts() {
    let cases = [
        ("stride isize::MAX", check(lay(&[2], &[isize::MAX], 0), 4)),
        (
            "full span beyond isize (strides -2^62, 3*2^61)",
            check(lay(&[2, 2], &[-HALF, BIG], 0), 4),
        ),
        (
            "offset isize::MAX, stride -3*2^61",
            check(lay(&[3], &[-BIG], isize::MAX), 4),
        ),
        (
            "offset isize::MAX plus one element",
            check(lay(&[2], &[1], isize::MAX), 4),
        ),
        (
            "offset isize::MAX, stride isize::MIN",
            check(lay(&[2], &[isize::MIN], isize::MAX), 4),
        ),
        (
            "zero-size with wild strides",
            check(lay(&[0, 3], &[isize::MAX, isize::MIN], isize::MIN), 0),
        ),
        (
            "zero extent beside usize::MAX",
            check(lay(&[usize::MAX, 0], &[1, 1], 0), 2),
        ),
        (
            "empty mask interval far outside the buffer",
            check(
                lay(&[3, 4], &[4, 1], 100).and_then(|l| masked(l, &[(1, 1), (0, 4)])),
                4,
            ),
        ),
        (
            "mask hiding the element at isize::MAX",
            check(
                lay(&[2], &[isize::MAX - 1], 0).and_then(|l| masked(l, &[(0, 1)])),
                4,
            ),
        ),
        ("exactly touching the end", check(lay(&[3], &[2], 5), 10)),
        ("one past the end", check(lay(&[3], &[2], 6), 10)),
        (
            "negative stride exactly touching the start",
            check(lay(&[2, 3], &[-3, -2], 7), 10),
        ),
        (
            "negative stride one before the start",
            check(lay(&[2, 3], &[-3, -2], 6), 10),
        ),
        (
            "broadcast of the last element",
            check(lay(&[2, 3], &[0, 0], 9), 10),
        ),
        ("0-d view at the last element", check(lay(&[], &[], 9), 10)),
        ("0-d view past the end", check(lay(&[], &[], 10), 10)),
    ];
    let text: Vec<String> = cases
        .iter()
        .map(|(name, out)| format!("== {name}\n{out}"))
        .collect();
    insta::assert_snapshot!("edge_layouts", text.join("\n\n"));
}

#[test]
fn offset_table_longer_than_the_buffer() {
    // A broadcast bottom ([4, 3] over 3 elements) under a flat top that does not merge: the
    // offset table has 12 entries over a 3-element buffer.
    let view = |shape: &[i64], strides: &[i64], offset: i64| {
        ConcreteView::create(shape, Some(strides), offset, None).unwrap()
    };
    let bottom = view(&[4, 3], &[0, 1], 0);
    let mut lines = Vec::new();
    for top in [
        view(&[12], &[1], 0),
        view(&[12], &[-1], 11),
        view(&[2, 6], &[1, 2], 0),
    ] {
        let s = ConcreteStack::unmerged(vec![bottom.clone(), top]).unwrap();
        let buf = [10i32, 20, 30];
        let got = materialize(Input::new(&buf, &s).pad(-1))
            .map(|d| d.values)
            .unwrap();
        assert_eq!(got, r::materialize(&buf, s.levels(), -1));
        let plan = plan_materialize::<i32>(&s).unwrap();
        let mut again = vec![0; got.len()];
        plan.run_materialize(&buf, &mut again, -1).unwrap();
        assert_eq!(again, got);
        let short = msg(plan.run_materialize(&buf[..2], &mut again, -1));
        lines.push(format!("{s}: {:?}; {short}", got));
    }
    insta::assert_snapshot!("offset_table_longer_than_the_buffer", lines.join("\n"));
}

#[test]
fn tiled_edges_and_thread_splits() {
    // Transposes with odd sizes (partial tiles on both axes), the source's unit axis
    // reversed, an outer axis, and element sizes 1, 2, 4 and 8 bytes.
    let (r_, c) = (517usize, 1031usize);
    let buf: Vec<u32> = (0..(r_ * c) as u32).collect();
    let want = |k: usize, flip: bool| {
        let (i, j) = (k / r_, k % r_);
        let col = if flip { c - 1 - i } else { i };
        (j * c + col) as u32
    };
    for flip in [false, true] {
        let (stride, offset) = if flip { (-1, c as isize - 1) } else { (1, 0) };
        let t = lay(&[c, r_], &[stride, c as isize], offset).unwrap();
        let plan = plan_materialize::<u32>(&t).unwrap();
        assert!(plan.is_parallel());
        let got = materialize(Input::new(&buf, &t).pad(0))
            .map(|d| d.values)
            .unwrap();
        let bad: Vec<usize> = (0..got.len())
            .filter(|&k| got[k] != want(k, flip))
            .take(3)
            .collect();
        assert!(bad.is_empty(), "flip {flip}: first wrong outputs {bad:?}");
    }
    // Small elements: 64 and 32 rows per tile.
    let b8: Vec<u8> = (0..(r_ * c)).map(|i| (i % 251) as u8).collect();
    let t = lay(&[c, r_], &[1, c as isize], 0).unwrap();
    let got = materialize(Input::new(&b8, &t).pad(0))
        .map(|d| d.values)
        .unwrap();
    assert!((0..got.len()).all(|k| got[k] == (want(k, false) % 251) as u8));
    let b16: Vec<u16> = (0..(r_ * c)).map(|i| (i % 65521) as u16).collect();
    let got = materialize(Input::new(&b16, &t).pad(0))
        .map(|d| d.values)
        .unwrap();
    assert!((0..got.len()).all(|k| got[k] == (want(k, false) % 65521) as u16));
    // An outer axis over three transposed slabs, 8-byte elements.
    let (n, m) = (37usize, 45usize);
    let b64: Vec<f64> = (0..3 * n * m).map(|i| i as f64).collect();
    let t3 = lay(&[3, m, n], &[(n * m) as isize, 1, m as isize], 0).unwrap();
    let got = materialize(Input::new(&b64, &t3).pad(0.0))
        .map(|d| d.values)
        .unwrap();
    for (k, &v) in got.iter().enumerate() {
        let (z, rest) = (k / (m * n), k % (m * n));
        let (i, j) = (rest / n, rest % n);
        assert_eq!(v, (z * n * m + j * m + i) as f64);
    }
}

#[test]
fn masked_inputs_read_their_pad_in_map_zip_and_reduce() {
    // Negative values padded by one on each side: the pad reads zero (the default), not the
    // fold's identity; an input's own pad value replaces it.
    let buf = [-5i32, -3, -4];
    let padded = lay(&[5], &[1], -1).unwrap().with_mask(&[(1, 4)]).unwrap();
    let all = |op| {
        msg(reduce(Input::new(&buf, &padded), &[0], op, ReduceConfig::default()).map(|d| d.values))
    };
    let text = [
        format!(
            "materialize pad 9: {}",
            msg(materialize(Input::new(&buf, &padded).pad(9)).map(|d| d.values))
        ),
        format!(
            "map x-1: {}",
            msg(map(Input::new(&buf, &padded), |x| x - 1).map(|d| d.values))
        ),
        format!(
            "zip a*10+b: {}",
            msg(zip(
                Input::new(&buf, &padded),
                Input::new(&buf, &padded),
                |a, b| a * 10 + b
            )
            .map(|d| d.values))
        ),
        format!("sum: {}", all(ReduceOp::Sum)),
        format!("max: {}", all(ReduceOp::Max)),
        format!("min: {}", all(ReduceOp::Min)),
        format!("prod: {}", all(ReduceOp::Prod)),
        format!(
            "max, pad i32::MIN: {}",
            msg(reduce(
                Input::new(&buf, &padded).pad(i32::MIN),
                &[0],
                ReduceOp::Max,
                ReduceConfig::default()
            )
            .map(|d| d.values))
        ),
        format!(
            "map x-1, pad 100: {}",
            msg(map(Input::new(&buf, &padded).pad(100), |x| x - 1).map(|d| d.values))
        ),
        format!(
            "zip a*10+b, pads 1 and 2: {}",
            msg(zip(
                Input::new(&buf, &padded).pad(1),
                Input::new(&buf, &padded).pad(2),
                |a, b| a * 10 + b
            )
            .map(|d| d.values))
        ),
    ];
    insta::assert_snapshot!(text.join("\n"), @r#"
materialize pad 9: [9, -5, -3, -4, 9]
map x-1: [-1, -6, -4, -5, -1]
zip a*10+b: [0, -55, -33, -44, 0]
sum: [-12]
max: [0]
min: [-5]
prod: [0]
max, pad i32::MIN: [-3]
map x-1, pad 100: [99, -6, -4, -5, 99]
zip a*10+b, pads 1 and 2: [12, -55, -33, -44, 12]
"#);
}
