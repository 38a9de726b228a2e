//! Named cases of every operation (including the benchmark workloads in small) and pinned
//! regressions.

use crate::gen::{lay, WithMask};
use crate::reference::dims;
use symshape_kernels::{
    copy_within, fill, map, materialize, reduce, reduce_with, zip, ConcreteStack, ConcreteView,
    Element, Input, Output, ReduceConfig, ReduceOp,
};
use symshape_view::Op;

/// Formats values as `[shape]: v v v`, the way `shapetrace values` prints.
fn show<T: std::fmt::Display>(shape: &[usize], v: &[T]) -> String {
    let vals: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("{shape:?}: {}", vals.join(" "))
}

/// The values `materialize` gives for `src`, in row-major order.
fn materialized<T: Element>(src: Input<'_, T>) -> Vec<T> {
    materialize(src).map(|d| d.values).unwrap()
}

/// Reduces `src` over `axes` with `op` and formats the result with [`show`].
fn reduced<T: Element + std::fmt::Display>(
    src: Input<'_, T>,
    axes: &[usize],
    op: ReduceOp,
    config: ReduceConfig,
) -> String {
    let r = reduce(src, axes, op, config).unwrap();
    show(&r.shape, &r.values)
}

fn check(view: &ConcreteView, buf_len: usize) -> String {
    let buf: Vec<i64> = (0..buf_len as i64).collect();
    show(&dims(view), &materialized(Input::new(&buf, view).pad(-1)))
}

#[test]
fn materialize_cases() {
    insta::assert_snapshot!(check(&lay(&[2, 3], &[1, 2], 0), 6), @"[2, 3]: 0 2 4 1 3 5");
    insta::assert_snapshot!(check(&lay(&[2, 3], &[-3, -1], 5), 6), @"[2, 3]: 5 4 3 2 1 0");
    insta::assert_snapshot!(check(&lay(&[4, 4], &[2, 1], -3).with_mask(&[(1, 3), (1, 3)]).unwrap(), 4), @"[4, 4]: -1 -1 -1 -1 -1 0 1 -1 -1 2 3 -1 -1 -1 -1 -1");
    insta::assert_snapshot!(check(&lay(&[2, 2], &[4, 2], 0), 8), @"[2, 2]: 0 2 4 6");
    insta::assert_snapshot!(check(&lay(&[2, 3], &[0, 1], 1), 4), @"[2, 3]: 1 2 3 1 2 3");
    insta::assert_snapshot!(check(&lay(&[], &[], 3), 4), @"[]: 3");
    insta::assert_snapshot!(check(&lay(&[2, 0], &[0, 1], 0), 0), @"[2, 0]: ");
    // Permutations of a 2 x 3 x 4 block, read back through the tiled kernel's cousins.
    insta::assert_snapshot!(check(&lay(&[4, 3, 2], &[1, 4, 12], 0), 24), @"[4, 3, 2]: 0 12 4 16 8 20 1 13 5 17 9 21 2 14 6 18 10 22 3 15 7 19 11 23");
}

#[test]
fn large_tiled_and_reversed_paths() {
    // Big enough for the tiled kernel with partial tiles and threads.
    let (r, c) = (1000, 700);
    // Element `k` of the transpose `t` is element `transposed(k)` of the buffer.
    let transposed = |k: usize| (k % r) * c + k / r;
    let buf: Vec<u32> = (0..(r * c) as u32).collect();
    let t = lay(&[c, r], &[1, c as isize], 0);
    let got = materialized(Input::new(&buf, &t).pad(0));
    assert!(got
        .iter()
        .enumerate()
        .all(|(k, &v)| v as usize == transposed(k)));
    let flip = lay(&[r, c], &[-(c as isize), -1], (r * c - 1) as isize);
    let got = materialized(Input::new(&buf, &flip).pad(0));
    assert!(got
        .iter()
        .enumerate()
        .all(|(k, &v)| v as usize == r * c - 1 - k));
    // f64 and u8 tiles have other widths.
    let b64: Vec<f64> = (0..(r * c)).map(|i| i as f64).collect();
    let got = materialized(Input::new(&b64, &t).pad(0.0));
    assert!(got
        .iter()
        .enumerate()
        .all(|(k, &v)| v as usize == transposed(k)));
    let b8: Vec<u8> = (0..(r * c)).map(|i| (i % 251) as u8).collect();
    let got = materialized(Input::new(&b8, &t).pad(0));
    assert!(got
        .iter()
        .enumerate()
        .all(|(k, &v)| v as usize == transposed(k) % 251));
}

#[test]
fn other_operations() {
    let buf: Vec<i32> = (0..6).collect();
    let m = lay(&[2, 3], &[3, 1], 0);
    insta::assert_snapshot!(show(&[2, 3], &map(Input::new(&buf, &m.apply(&Op::Permute(vec![1, 0])).unwrap()), |x| x * 10).map(|d| d.values).unwrap()), @"[2, 3]: 0 30 10 40 20 50");
    let z = zip(
        Input::new(&buf, &lay(&[2, 1], &[3, 0], 0)),
        Input::new(&buf, &lay(&[3], &[1], 0)),
        |a, b| a * 10 + b,
    )
    .unwrap();
    insta::assert_snapshot!(show(&z.shape, &z.values), @"[2, 3]: 0 1 2 30 31 32");
    let bools = vec![true, false, true, true];
    let z = zip(
        Input::new(&bools, &lay(&[4], &[1], 0)),
        Input::new(&buf, &lay(&[4], &[1], 0)),
        |a, b| if a { b } else { -b },
    )
    .unwrap();
    insta::assert_snapshot!(show(&z.shape, &z.values), @"[4]: 0 -1 2 3");
    let keep_dims = ReduceConfig { keep_dims: true };
    let drop_dims = ReduceConfig::default();
    insta::assert_snapshot!(reduced(Input::new(&buf, &m), &[0], ReduceOp::Max, keep_dims), @"[1, 3]: 3 4 5");
    let bools_2x2 = lay(&[2, 2], &[2, 1], 0);
    insta::assert_snapshot!(reduced(Input::new(&bools, &bools_2x2), &[1], ReduceOp::Prod, drop_dims), @"[2]: false true");
    let r = reduce_with(Input::new(&buf, &m), &[0, 1], drop_dims, 0, |a, b| {
        a * 2 + b
    })
    .unwrap();
    insta::assert_snapshot!(show(&r.shape, &r.values), @"[]: 57");
    let empty_rows = lay(&[2, 0], &[3, 1], 0);
    insta::assert_snapshot!(reduced(Input::new(&buf, &empty_rows), &[1], ReduceOp::Min, drop_dims), @"[2]: 2147483647 2147483647");
    let f: Vec<f32> = vec![1.0, f32::NAN, -2.0];
    insta::assert_snapshot!(reduced(Input::new(&f, &lay(&[3], &[1], 0)), &[0], ReduceOp::Min, drop_dims), @"[]: -2");
    insta::assert_snapshot!(format!("{:?}", symshape_view::concrete::broadcast_shapes(&[&[4, 1], &[1, 4]]).unwrap()), @"[4, 4]");
}

#[test]
fn aliasing_in_one_buffer() {
    // Shift right by one within a row: overlapping source and destination.
    let mut buf: Vec<i64> = (0..8).collect();
    copy_within(&mut buf, &lay(&[7], &[1], 0), &lay(&[7], &[1], 1), 0).unwrap();
    insta::assert_snapshot!(show(&[8], &buf), @"[8]: 0 0 1 2 3 4 5 6");
    // In-place transpose of a square matrix.
    let mut buf: Vec<i64> = (0..9).collect();
    copy_within(
        &mut buf,
        &lay(&[3, 3], &[1, 3], 0),
        &lay(&[3, 3], &[3, 1], 0),
        0,
    )
    .unwrap();
    insta::assert_snapshot!(show(&[3, 3], &buf), @"[3, 3]: 0 3 6 1 4 7 2 5 8");
    // Disjoint halves: copied directly.
    let mut buf: Vec<i64> = (0..8).collect();
    copy_within(&mut buf, &lay(&[4], &[-1], 3), &lay(&[4], &[1], 4), 0).unwrap();
    insta::assert_snapshot!(show(&[8], &buf), @"[8]: 0 1 2 3 3 2 1 0");
    // Fill of every other element.
    let mut buf = vec![0u16; 6];
    fill(Output::new(&mut buf, &lay(&[3], &[2], 1)), 9).unwrap();
    insta::assert_snapshot!(show(&[6], &buf), @"[6]: 0 9 0 9 0 9");
}

#[test]
fn stacks() {
    let buf: Vec<i64> = (0..24).collect();
    // Transpose then reshape (does not merge): the table path.
    let s =
        ConcreteStack::unmerged(vec![lay(&[6, 4], &[1, 6], 0), lay(&[3, 8], &[8, 1], 0)]).unwrap();
    insta::assert_snapshot!(show(&[3, 8], &materialized(Input::new(&buf, &s).pad(-1))), @"[3, 8]: 0 6 12 18 1 7 13 19 2 8 14 20 3 9 15 21 4 10 16 22 5 11 17 23");
    // A masked level in the middle of three.
    let s = ConcreteStack::unmerged(vec![
        lay(&[24], &[1], 0),
        lay(&[4, 6], &[6, 1], 0)
            .with_mask(&[(0, 4), (1, 5)])
            .unwrap(),
        lay(&[6, 4], &[1, 6], 0),
    ])
    .unwrap();
    insta::assert_snapshot!(show(&[6, 4], &materialized(Input::new(&buf, &s).pad(-1))), @"[6, 4]: -1 -1 -1 -1 1 7 13 19 2 8 14 20 3 9 15 21 4 10 16 22 -1 -1 -1 -1");
}

#[test]
fn regression_carry_found_after_a_masked_constant_digit() {
    // Merging the top level must fail (its index carries across digits of the level below)
    // before a constant digit outside a mask can declare everything padding.
    let s = ConcreteStack::unmerged(vec![
        lay(&[3, 3], &[1, -3], 36)
            .with_mask(&[(0, 2), (2, 3)])
            .unwrap(),
        lay(&[3, 2, 1], &[3, -2, 18], 2),
        lay(&[1, 1, 6], &[6, 6, -1], 5),
    ])
    .unwrap();
    let buf: Vec<i64> = (0..40).map(|i| i * 10 + 1).collect();
    insta::assert_snapshot!(show(&[1, 1, 6], &materialized(Input::new(&buf, &s).pad(1))), @"[1, 1, 6]: 1 1 1 311 1 301");
}

#[test]
fn large_parallel_paths_match_reference() {
    // Above the parallel threshold: masks, an unmerged stack, and a copy into a reversed,
    // strided destination.
    let (r, c) = (600usize, 500usize);
    let buf: Vec<i64> = (0..(r * c) as i64).collect();
    let pad = lay(&[r + 2, c + 2], &[c as isize, 1], -(c as isize) - 1)
        .with_mask(&[(1, r + 1), (1, c + 1)])
        .unwrap();
    assert_eq!(
        materialized(Input::new(&buf, &pad).pad(-1)),
        crate::reference::materialize(&buf, std::slice::from_ref(&pad), -1)
    );
    let stack = ConcreteStack::unmerged(vec![
        lay(&[r, c], &[1, r as isize], 0),
        lay(&[c * r / 4, 4], &[4, 1], 0),
    ])
    .unwrap();
    assert_eq!(
        materialized(Input::new(&buf, &stack).pad(-1)),
        crate::reference::materialize(&buf, stack.levels(), -1)
    );
    let dst = lay(&[r, c], &[-(2 * c as isize), -1], (2 * r * c - 1) as isize);
    let src = lay(&[r, c], &[1, r as isize], 0);
    let mut got = vec![0i64; 2 * r * c];
    symshape_kernels::copy(Input::new(&buf, &src).pad(0), Output::new(&mut got, &dst)).unwrap();
    let mut want = vec![0i64; 2 * r * c];
    crate::reference::copy_values(
        &mut want,
        &dst,
        &crate::reference::materialize(&buf, std::slice::from_ref(&src), 0),
    );
    assert_eq!(got, want);
}

#[test]
fn large_reductions_split_into_blocks_are_exact_for_integers() {
    let n = 1usize << 20;
    let buf: Vec<i64> = (0..n as i64).collect();
    let cfg = ReduceConfig::default();
    let all = reduce(
        Input::new(&buf, &lay(&[n], &[1], 0)),
        &[0],
        ReduceOp::Sum,
        cfg,
    )
    .unwrap();
    assert_eq!(all.values, vec![(n as i64) * (n as i64 - 1) / 2]);
    // Reversed, and as a 2-D matrix reduced over both axes.
    let rev = reduce(
        Input::new(&buf, &lay(&[n], &[-1], n as isize - 1)),
        &[0],
        ReduceOp::Max,
        cfg,
    )
    .unwrap();
    assert_eq!(rev.values, vec![n as i64 - 1]);
    let m = lay(&[1024, 1024], &[1, 1024], 0);
    let both = reduce_with(Input::new(&buf, &m), &[0, 1], cfg, 0, |a, b| {
        a.wrapping_add(b)
    })
    .unwrap();
    assert_eq!(both.values, all.values);
    let cols = reduce(Input::new(&buf, &m), &[1], ReduceOp::Min, cfg).unwrap();
    assert_eq!(cols.values, (0..1024).collect::<Vec<i64>>());
}
