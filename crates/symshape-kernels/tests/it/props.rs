//! Property tests: every operation against the element-by-element reference.

use crate::gen::{any_layout, buffer, stack, structured_layout, view};
use crate::reference as r;
use proptest::prelude::*;
use symshape_kernels::{
    copy, copy_within, fill, map, map_into, materialize, plan_materialize, reduce, reduce_with,
    zip, zip_into, ConcreteStack, ConcreteView, Error, Input, Kernel, Levels, Output, ReduceConfig,
    ReduceOp,
};
use symshape_view::Op;

const LEN: usize = 40;

proptest! {
    /// Stacks built by real op chains (merged where the algebra merges, with copies, pads
    /// and windows in their levels), against the index table of the same chain; the `chain`
    /// fuzz target runs the same check on arbitrary bytes.
    #[test]
    fn op_chains_read_and_write_where_their_index_table_says(
        data in prop::collection::vec(any::<u8>(), 0..96),
    ) {
        crate::chains::check(&data).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    #[test]
    fn materialize_matches_reference(s in stack(LEN), pad in -5i64..5) {
        let buf = buffer(LEN);
        let want = r::materialize(&buf, s.levels(), pad);
        let got = materialize(Input::new(&buf, &s).pad(pad)).unwrap().values;
        prop_assert_eq!(&got, &want);
        // Small views may skip the planner in `materialize`: run the plan explicitly too.
        let mut planned = vec![0; want.len()];
        plan_materialize::<i64>(&s).unwrap().run_materialize(&buf, &mut planned, pad).unwrap();
        prop_assert_eq!(planned, want);
    }

    #[test]
    fn plans_of_one_view_need_exactly_the_buffer_it_reads(v in any_layout(LEN), pad in -5i64..5) {
        // The highest buffer offset a valid element reads, element by element.
        let levels = std::slice::from_ref(&v);
        let last = r::indices(&r::dims(&v))
            .iter()
            .filter_map(|idx| r::stack_offset(levels, idx))
            .max();
        let fits = &buffer(LEN)[..last.map_or(0, |l| l + 1)];
        let want = r::materialize(fits, levels, pad);
        let plan = plan_materialize::<i64>(&v).unwrap();
        let mut out = vec![0; want.len()];
        plan.run_materialize(fits, &mut out, pad).unwrap();
        prop_assert_eq!(&out, &want);
        let direct = materialize(Input::new(fits, &v).pad(pad)).unwrap().values;
        prop_assert_eq!(&direct, &want);
        if let Some(l) = last {
            // One element shorter: the plan and the small-view gather both refuse it.
            let short = &fits[..l];
            let planned = plan.run_materialize(short, &mut out, pad);
            prop_assert!(matches!(planned, Err(Error::OutOfBuffer { .. })), "{:?}", planned);
            let direct = materialize(Input::new(short, &v).pad(pad)).map(|m| m.values);
            prop_assert!(matches!(direct, Err(Error::OutOfBuffer { .. })), "{:?}", direct);
        }
    }

    #[test]
    fn map_matches_reference(s in stack(LEN), pad in -5i64..5, dst in structured_layout(LEN)) {
        // Masked elements read the input's pad before `f` sees them.
        let buf = buffer(LEN);
        let f = |x: i64| x * 2 + 1;
        let got = map(Input::new(&buf, &s).pad(pad), f).unwrap().values;
        let want: Vec<i64> = r::materialize(&buf, s.levels(), pad).iter().map(|&x| f(x)).collect();
        prop_assert_eq!(&got, &want);
        // Into a destination of the same shape (a random layout, maybe masked), when its
        // shape fits: the reference writes the valid destination elements only.
        if dst.shape() == s.shape() && !r::overlaps(&dst) {
            let mut got = buffer(LEN);
            map_into(Input::new(&buf, &s).pad(pad), Output::new(&mut got, &dst), f).unwrap();
            let mut expect = buffer(LEN);
            r::copy_values(&mut expect, &dst, &want);
            prop_assert_eq!(got, expect);
        }
    }

    #[test]
    fn map_into_a_row_major_destination_matches_reference(s in stack(LEN), pad in -5i64..5) {
        let buf = buffer(LEN);
        let want: Vec<i64> = r::materialize(&buf, s.levels(), pad).iter().map(|&x| x - 3).collect();
        let dst = ConcreteView::contiguous(s.shape()).unwrap();
        let mut got = vec![99; want.len()];
        map_into(Input::new(&buf, &s).pad(pad), Output::new(&mut got, &dst), |x| x - 3).unwrap();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn copy_matches_reference(
        (dst, src) in destination_and_source(),
        pad in -5i64..5,
    ) {
        let (got, want) = copied_and_reference(&src, &dst, pad, LEN);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn copy_from_a_stack_into_a_reversed_permutation(s in stack(LEN), flip in any::<bool>(), pad in -5i64..5) {
        // Destination: the row-major layout of the shape with its axes reversed in memory
        // order (and optionally every stride negated), over a buffer of exactly that size.
        let shape: Vec<usize> = s.shape().iter().map(|&d| d as usize).collect();
        let n: usize = shape.iter().product();
        let dst = dense(&shape, false, flip);
        let (got, want) = copied_and_reference(&s, &dst, pad, n);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn copy_within_is_copy_through_a_temporary(
        (dst, src) in destination_and_source(),
    ) {
        let mut got = buffer(LEN);
        copy_within(&mut got, &src, &dst, 0).unwrap();
        let mut want = buffer(LEN);
        let tmp = r::materialize(&want, src.levels(), 0);
        r::copy_values(&mut want, &dst, &tmp);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn fill_matches_reference(dst in structured_layout(LEN), v in -5i64..5) {
        let mut got = buffer(LEN);
        fill(Output::new(&mut got, &dst), v).unwrap();
        let mut want = buffer(LEN);
        r::copy_values(&mut want, &dst, &vec![v; dst.numel() as usize]);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn zip_broadcasts_like_reference(
        (shape, a_keep, b_keep, a_rank) in (prop::collection::vec(1usize..4, 0..=3), prop::collection::vec(any::<bool>(), 3), prop::collection::vec(any::<bool>(), 3), 0usize..=3),
        picks in prop::collection::vec(any::<u32>(), 2),
        masks in prop::collection::vec(any::<bool>(), 2),
        pads in prop::collection::vec(-5i64..5, 2),
        into in any::<bool>(),
    ) {
        // Each side keeps some axes (others broadcast from 1), the left may drop leading axes;
        // either side may be masked, and its masked elements read its own pad.
        let a_shape: Vec<usize> = shape.iter().zip(&a_keep).map(|(&n, &k)| if k { n } else { 1 }).collect();
        let a_shape = a_shape[a_rank.min(a_shape.len())..].to_vec();
        let b_shape: Vec<usize> = shape.iter().zip(&b_keep).map(|(&n, &k)| if k { n } else { 1 }).collect();
        let masked = |l: ConcreteView, on: bool| {
            if !on || l.ndim() == 0 {
                return l;
            }
            let m: Vec<(usize, usize)> = l.shape().iter().map(|&n| ((n as usize) / 2, n as usize)).collect();
            let strides: Vec<isize> = l.strides().iter().map(|&t| t as isize).collect();
            let shape = r::dims(&l);
            view(&shape, &strides, l.offset() as isize, Some(&m)).unwrap()
        };
        let a = masked(layout_with_shape(&a_shape, picks[0], LEN), masks[0]);
        let b = masked(layout_with_shape(&b_shape, picks[1], LEN), masks[1]);
        let (abuf, bbuf) = (buffer(LEN), buffer(LEN).iter().map(|x| x * 7).collect::<Vec<_>>());
        let (ia, ib) = (Input::new(&abuf, &a).pad(pads[0]), Input::new(&bbuf, &b).pad(pads[1]));
        let f = |x: i64, y: i64| x * 1000 + y;
        let out_shape: Vec<usize> = (0..shape.len()).map(|k| {
            let ka = (k + a_shape.len()).checked_sub(shape.len()).map_or(1, |i| a_shape[i]);
            ka.max(b_shape[k])
        }).collect();
        let got = if into {
            let dst = ConcreteView::contiguous(&out_shape.iter().map(|&d| d as i64).collect::<Vec<_>>()).unwrap();
            let mut values = vec![0; out_shape.iter().product()];
            zip_into(ia, ib, Output::new(&mut values, &dst), f).unwrap();
            values
        } else {
            let got = zip(ia, ib, f).unwrap();
            prop_assert_eq!(&got.shape, &out_shape);
            got.values
        };
        let want: Vec<i64> = r::indices(&out_shape).iter().map(|idx| {
            let pick = |l: &ConcreteView| {
                let lead = idx.len() - l.ndim();
                let i: Vec<usize> = l.shape().iter().enumerate().map(|(k, &n)| if n == 1 { 0 } else { idx[k + lead] }).collect();
                if r::is_valid(l, &i) { Some(r::linear_index(l, &i) as usize) } else { None }
            };
            let x = pick(&a).map_or(pads[0], |o| abuf[o]);
            let y = pick(&b).map_or(pads[1], |o| bbuf[o]);
            f(x, y)
        }).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn reduce_matches_reference(s in stack(LEN), axes_bits in 0u8..8, keep in any::<bool>(), op in 0usize..5, pad in -5i64..5) {
        // Masked elements (of any level of the stack) read the input's pad, not the fold's
        // identity.
        let buf = buffer(LEN);
        let l = s.top().clone();
        let axes: Vec<usize> = (0..l.ndim()).filter(|k| axes_bits & (1 << k) != 0).collect();
        let cfg = ReduceConfig { keep_dims: keep };
        // Non-associative user fold: checks the row-major fold order too.
        let user = |a: i64, x: i64| a.wrapping_mul(31).wrapping_add(x);
        let got = match op {
            0 => reduce(Input::new(&buf, &s).pad(pad), &axes, ReduceOp::Sum, cfg),
            1 => reduce(Input::new(&buf, &s).pad(pad), &axes, ReduceOp::Prod, cfg),
            2 => reduce(Input::new(&buf, &s).pad(pad), &axes, ReduceOp::Min, cfg),
            3 => reduce(Input::new(&buf, &s).pad(pad), &axes, ReduceOp::Max, cfg),
            _ => reduce_with(Input::new(&buf, &s).pad(pad), &axes, cfg, 7, user),
        }.unwrap();
        let (id, f): (i64, Box<dyn Fn(i64, i64) -> i64>) = match op {
            0 => (0, Box::new(|a: i64, x: i64| a.wrapping_add(x))),
            1 => (1, Box::new(|a: i64, x: i64| a.wrapping_mul(x))),
            2 => (i64::MAX, Box::new(|a: i64, x: i64| a.min(x))),
            3 => (i64::MIN, Box::new(|a: i64, x: i64| a.max(x))),
            _ => (7, Box::new(user)),
        };
        let vals = r::materialize(&buf, s.levels(), pad);
        let shape = &r::dims(&l);
        let kept: Vec<usize> = (0..shape.len()).filter(|k| !axes.contains(k)).collect();
        let kept_shape: Vec<usize> = kept.iter().map(|&k| shape[k]).collect();
        let mut want = Vec::new();
        for out in r::indices(&kept_shape) {
            let mut acc = id;
            for (idx, &v) in r::indices(shape).iter().zip(&vals) {
                if kept.iter().zip(&out).all(|(&k, &o)| idx[k] == o) {
                    acc = f(acc, v);
                }
            }
            want.push(acc);
        }
        let want_shape: Vec<usize> = (0..shape.len()).filter_map(|k| if axes.contains(&k) { keep.then_some(1) } else { Some(shape[k]) }).collect();
        prop_assert_eq!(got.shape, want_shape);
        prop_assert_eq!(got.values, want);
    }

    #[test]
    fn overlap_check_is_exact_on_small_layouts(
        axes in prop::collection::vec((1usize..5, -4isize..=4), 1..=3),
        masked in any::<bool>(),
    ) {
        let shape: Vec<usize> = axes.iter().map(|a| a.0).collect();
        let strides: Vec<isize> = axes.iter().map(|a| a.1).collect();
        let offset: isize = strides.iter().zip(&shape).map(|(&s, &n)| (-s * (n as isize - 1)).max(0)).sum();
        let m: Vec<(usize, usize)> = shape.iter().map(|&n| (n / 3, n)).collect();
        let l = view(&shape, &strides, offset, masked.then_some(&m[..])).unwrap();
        let mut buf = vec![0i64; 64];
        let res = fill(Output::new(&mut buf, &l), 1);
        prop_assert_eq!(res.is_err(), r::overlaps(&l), "{:?}", res);
    }
}

/// A random destination layout over `0..LEN` and a random source layout of its shape.
fn destination_and_source() -> impl Strategy<Value = (ConcreteView, ConcreteView)> {
    structured_layout(LEN).prop_flat_map(|d| {
        let shape = r::dims(&d);
        (Just(d), with_shape(shape, LEN))
    })
}

/// Copies `src` (over `buffer(LEN)`, padded with `pad`) into `dst` over `len`
/// elements set to -1, and returns that buffer with what the reference copy gives.
fn copied_and_reference(
    src: &impl Levels,
    dst: &ConcreteView,
    pad: i64,
    len: usize,
) -> (Vec<i64>, Vec<i64>) {
    let src_buf = buffer(LEN);
    let mut got = vec![-1i64; len];
    copy(
        Input::new(&src_buf, src).pad(pad),
        Output::new(&mut got, dst),
    )
    .unwrap();
    let mut want = vec![-1i64; len];
    r::copy_values(&mut want, dst, &r::materialize(&src_buf, src.levels(), pad));
    (got, want)
}

/// A random layout of exactly `shape` over `0..space` (strides -3..=3, maybe masked).
fn with_shape(shape: Vec<usize>, space: usize) -> impl Strategy<Value = ConcreteView> {
    (any::<u32>(), any::<bool>()).prop_map(move |(pick, masked)| {
        let l = layout_with_shape(&shape, pick, space);
        if masked && !shape.is_empty() {
            let m: Vec<(usize, usize)> = shape.iter().map(|&n| (n / 2, n)).collect();
            let strides: Vec<isize> = l.strides().iter().map(|&t| t as isize).collect();
            return view(&shape, &strides, l.offset() as isize, Some(&m)).unwrap();
        }
        l
    })
}

/// A layout of `shape` whose strides come from the bits of `pick`, shrunk until it fits `space`.
fn layout_with_shape(shape: &[usize], pick: u32, space: usize) -> ConcreteView {
    let mut strides: Vec<isize> = (0..shape.len())
        .map(|k| ((pick >> (3 * k)) & 7) as isize - 3)
        .collect();
    loop {
        let (mut lo, mut hi) = (0isize, 0isize);
        for (&n, &s) in shape.iter().zip(&strides) {
            let span = s * (n as isize - 1);
            lo += span.min(0);
            hi += span.max(0);
        }
        if hi - lo < space as isize {
            let room = space as isize - 1 - (hi - lo);
            return view(
                shape,
                &strides,
                -lo + (pick as isize >> 20) % (room + 1),
                None,
            )
            .unwrap();
        }
        strides.iter_mut().for_each(|s| *s /= 2);
    }
}

#[test]
fn stack_of_one_equals_its_layout() {
    let l = view(&[3, 4], &[-4, 1], 8, None).unwrap();
    let s = ConcreteStack::unmerged(vec![l.clone()]).unwrap();
    let buf = buffer(12);
    assert_eq!(
        materialize(Input::new(&buf, &s)).unwrap(),
        materialize(Input::new(&buf, &l)).unwrap()
    );
}

#[test]
fn large_results_do_not_depend_on_thread_count() {
    // Above every parallel threshold: transposed materialize, a zip, and float sums whose
    // rounding would show any change of grouping.
    let n: usize = 1 << 10;
    let buf: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7919) % 1000) as f32 * 0.001 + 1e-3)
        .collect();
    let full = ConcreteView::contiguous(&[n as i64, n as i64]).unwrap();
    let t = full.apply(&Op::Permute(vec![1, 0])).unwrap();
    let flat = ConcreteView::contiguous(&[(n * n) as i64]).unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let m = materialize(Input::new(&buf, &t)).unwrap().values;
            let z = zip(Input::new(&buf, &t), Input::new(&buf, &full), |a, b| {
                a * 0.5 + b
            })
            .unwrap()
            .values;
            let sum = |v: &ConcreteView, axes: &[usize]| {
                reduce(
                    Input::new(&buf, v),
                    axes,
                    ReduceOp::Sum,
                    ReduceConfig::default(),
                )
                .unwrap()
                .values
            };
            let rows = sum(&t, &[1]);
            let cols = sum(&full, &[0]);
            let all = sum(&full, &[0, 1]);
            let flat_sum = sum(&flat, &[0]);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            (
                bits(&m),
                bits(&z),
                bits(&rows),
                bits(&cols),
                bits(&all),
                bits(&flat_sum),
            )
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

#[test]
fn im2col_matches_reference_without_a_table() {
    let s = crate::plans::im2col();
    let buf = buffer(60);
    let want = r::materialize(&buf, s.levels(), -7);
    let got = materialize(Input::new(&buf, &s).pad(-7)).unwrap().values;
    assert_eq!(got, want);
    let plan = plan_materialize::<i64>(&s).unwrap();
    let kernels: Vec<Kernel> = plan.boxes().iter().map(|b| b.nest.kernel).collect();
    assert!(!kernels.contains(&Kernel::OffsetTable), "{plan}");
    let mut planned = vec![0; want.len()];
    plan.run_materialize(&buf, &mut planned, -7).unwrap();
    assert_eq!(planned, want);
}

/// `materialize` of `src` over `buf` and its explicit plan, run into a buffer of `unset`,
/// against the reference; `case` names the failing input. Returns the reference.
fn both_paths_match<T: symshape_kernels::Element + std::fmt::Debug>(
    src: &impl Levels,
    buf: &[T],
    (pad, unset): (T, T),
    case: &dyn std::fmt::Debug,
) -> Result<Vec<T>, TestCaseError> {
    let want = r::materialize(buf, src.levels(), pad);
    let got = materialize(Input::new(buf, src).pad(pad)).unwrap().values;
    prop_assert!(got == want, "materialize {:?}", case);
    let plan = plan_materialize::<T>(src).unwrap();
    let mut planned = vec![unset; want.len()];
    plan.run_materialize(buf, &mut planned, pad).unwrap();
    prop_assert!(planned == want, "{:?}\n{plan}", case);
    Ok(want)
}

/// A channels-last im2col (`crate::plans::channels_last_im2col`) of `T` elements against the
/// reference (the caller has checked that its plan holds a `tiled rows` box).
fn channels_last_im2col_matches<T: symshape_kernels::Element + std::fmt::Debug>(
    (b, s, c, k, step): (usize, usize, usize, usize, usize),
    f: impl Fn(usize) -> T,
) -> Result<(), TestCaseError> {
    let st = crate::plans::channels_last_im2col(b, s, c, k, step);
    let buf: Vec<T> = (0..b * s * c).map(&f).collect();
    both_paths_match(&st, &buf, (f(7), f(7)), &(b, s, c, k, step)).map(drop)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// The windows of a channels-last im2col (`tiled rows`), staged through register
    /// transposes when they lie end to end: tokens across the 64-window chunks and the
    /// 256-token units, channels across source lines, every window length the kernel
    /// specializes, steps of 1 and 2, elements of 1, 2, 4 and 8 bytes.
    #[test]
    fn channels_last_im2col_windows_match_reference(
        b in 1usize..=2,
        s in 20usize..=300,
        c in 8usize..=70,
        k in 2usize..=7,
        step in 1usize..=2,
    ) {
        let shape = (b, s, c, k, step);
        // Windows longer than the split's edge cuts reach may be read through a table.
        let st = crate::plans::channels_last_im2col(b, s, c, k, step);
        let plan = plan_materialize::<u8>(&st).unwrap();
        prop_assume!(plan.boxes().iter().any(|b| b.nest.kernel == Kernel::TiledRows));
        channels_last_im2col_matches::<u8>(shape, |i| (i * 13 % 251) as u8)?;
        channels_last_im2col_matches::<u16>(shape, |i| (i * 7 % 65521) as u16)?;
        channels_last_im2col_matches::<f32>(shape, |i| i as f32 * 0.5)?;
        channels_last_im2col_matches::<f64>(shape, |i| i as f64 - 3.0)?;
    }
}

/// The im2col of a conv1d with "same" padding: `x [n, c, w]` padded by `k / 2` on its last
/// axis, windows of `k` unfolded, permuted to `[n, w', c, k]` and read as a matrix.
fn im2col_of(n: i64, c: i64, w: i64, k: i64) -> ConcreteStack {
    use symshape_view::{View, ViewOps, ViewStack};
    let cx = symshape::Scope::new();
    let p = k / 2;
    let s = ViewStack::new(View::contiguous(&[n, c, w]).unwrap())
        .pad(&cx, &[(0, 0), (0, 0), (p, p)])
        .and_then(|s| s.unfold(&cx, 2, k, 1))
        .and_then(|s| s.permute(&cx, &[0, 2, 1, 3]))
        .unwrap();
    let rows = s.shape()[0].as_i64().unwrap() * s.shape()[1].as_i64().unwrap();
    s.reshape(&cx, &[rows, c * k])
        .and_then(|s| s.to_concrete("im2col"))
        .unwrap()
}

/// im2col at sizes that reach the blocked short-row kernel on several threads (windows of
/// 1 to 5 elements, channels whose rows are more than a line apart), for 1-, 4- and 8-byte
/// elements, against the element-by-element reference.
#[test]
fn im2col_on_threads_matches_reference() {
    fn check<T: symshape_kernels::Element + std::fmt::Debug>(
        s: &ConcreteStack,
        f: impl Fn(usize) -> T,
    ) {
        let n = s.levels()[0].shape().iter().product::<i64>() as usize;
        let buf: Vec<T> = (0..n).map(&f).collect();
        let pad = f(7);
        let want = r::materialize(&buf, s.levels(), pad);
        let got = materialize(Input::new(&buf, s).pad(pad)).unwrap().values;
        assert!(got == want, "{s:?}");
    }
    for (n, c, w, k) in [
        (4, 64, 1024, 3),
        (2, 33, 700, 1),
        (2, 40, 515, 5),
        (1, 17, 2000, 4),
    ] {
        let s = im2col_of(n, c, w, k);
        check::<f32>(&s, |i| i as f32 * 0.5);
        check::<u8>(&s, |i| (i * 13 % 251) as u8);
        check::<f64>(&s, |i| i as f64 - 3.0);
    }
}

/// A destination of two levels: `lower` read through a row-major top of another shape with
/// the same element count (`[numel / a, a]` for a divisor `a`, or `[numel]`), or through that
/// top reversed (which no longer only flattens, and goes through the offset table).
fn two_level_destination() -> impl Strategy<Value = ConcreteStack> {
    (structured_layout(LEN), 1usize..=6, any::<bool>()).prop_map(|(lower, a, reversed)| {
        let n = lower.numel() as usize;
        let shape = if n > 0 && n.is_multiple_of(a) && a > 1 {
            vec![n / a, a]
        } else {
            vec![n]
        };
        let top = dense(&shape, true, reversed);
        ConcreteStack::unmerged(vec![lower, top]).unwrap()
    })
}

proptest! {
    #[test]
    fn copy_and_fill_through_two_level_destinations_match_the_offset_table(
        (dst, src) in two_level_destination().prop_flat_map(|d| {
            let shape: Vec<usize> = d.shape().iter().map(|&x| x as usize).collect();
            (Just(d), with_shape(shape, LEN))
        }),
        pad in -5i64..5,
        v in -5i64..5,
    ) {
        let offsets = dst.offsets().unwrap();
        let src_buf = buffer(LEN);
        let mut got = vec![-1i64; LEN];
        copy(Input::new(&src_buf, &src).pad(pad), Output::new(&mut got, &dst)).unwrap();
        let mut want = vec![-1i64; LEN];
        let values = r::materialize(&src_buf, src.levels(), pad);
        for (o, &x) in offsets.iter().zip(&values) {
            if let Some(o) = o {
                want[*o as usize] = x;
            }
        }
        prop_assert_eq!(got, want);

        let mut got = vec![-1i64; LEN];
        fill(Output::new(&mut got, &dst), v).unwrap();
        let mut want = vec![-1i64; LEN];
        for o in offsets.iter().flatten() {
            want[*o as usize] = v;
        }
        prop_assert_eq!(got, want);
    }
}

/// The dense layout of `shape`: row-major, or with its axes in reversed memory order, and
/// with every stride negated when `flipped` (the offset then the last element's).
fn dense(shape: &[usize], row_major: bool, flipped: bool) -> ConcreteView {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    let mut order: Vec<usize> = (0..shape.len()).collect();
    if row_major {
        order.reverse();
    }
    for k in order {
        strides[k] = acc;
        acc *= shape[k] as isize;
    }
    let mut offset = 0;
    if flipped && shape.iter().all(|&d| d > 0) {
        for (st, &d) in strides.iter_mut().zip(shape) {
            offset += *st * (d as isize - 1);
            *st = -*st;
        }
    }
    view(shape, &strides, offset, None).unwrap()
}

/// The causal mask of `s` new tokens after `p` cached ones, as the attention example builds
/// it (pad, reshape, expand, reshape, pad, reshape, shrink, then flip when `flip`), over a
/// buffer of `p + s` elements; the top `[s, p + s]` reads element `(i, j)` from row `i` of
/// the skewed reshape. With `batch`, the mask is expanded to `[batch, s, p + s]` first.
pub fn causal_mask(s: i64, p: i64, flip: bool, batch: i64) -> ConcreteStack {
    use symshape_view::{Op, View, ViewStack};
    let cx = symshape::Scope::new();
    let len = p + s;
    let mut ops = crate::shared_views::causal_mask_ops(s, p);
    if !flip {
        ops.pop();
    }
    if batch > 1 {
        ops.push(Op::Reshape(vec![1, s, len]));
        ops.push(Op::Expand(vec![batch, s, len]));
    }
    let mut st = ViewStack::new(View::contiguous(&[len]).unwrap());
    for op in &ops {
        st = st.apply_dim(&cx, op).unwrap();
    }
    st.to_concrete("causal mask").unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Causal masks are planned as rows with a computed run (or boxes of strided rows), never
    /// an offset table once rows are long enough, and read what the reference reads, on one
    /// thread and on several.
    #[test]
    fn causal_masks_match_reference_without_a_table(
        s in 1i64..40,
        p in 0i64..20,
        flip in any::<bool>(),
        batch in 1i64..4,
        pad in -5i64..5,
    ) {
        let m = causal_mask(s, p, flip, batch);
        let len = (p + s) as usize;
        let buf = buffer(len);
        let want = r::materialize(&buf, m.levels(), pad);
        let plan = plan_materialize::<i64>(&m).unwrap();
        if len >= 8 {
            let kernels: Vec<Kernel> = plan.boxes().iter().map(|b| b.nest.kernel).collect();
            prop_assert!(!kernels.contains(&Kernel::OffsetTable), "{}", plan);
        }
        let mut planned = vec![0; want.len()];
        plan.run_materialize(&buf, &mut planned, pad).unwrap();
        prop_assert_eq!(&planned, &want);
        let got = materialize(Input::new(&buf, &m).pad(pad)).unwrap().values;
        prop_assert_eq!(got, want);
    }
}

/// A causal mask large enough to run on rayon's threads matches the reference.
#[test]
fn a_large_causal_mask_on_threads_matches_reference() {
    let m = causal_mask(300, 200, true, 2);
    let buf: Vec<f32> = (0..500).map(|i| i as f32).collect();
    let plan = plan_materialize::<f32>(&m).unwrap();
    assert!(plan.is_parallel(), "{plan}");
    let want = r::materialize(&buf, m.levels(), f32::NEG_INFINITY);
    let mut got = vec![0f32; want.len()];
    plan.run_materialize(&buf, &mut got, f32::NEG_INFINITY)
        .unwrap();
    assert!(got == want);
}

/// A two-level stack whose top has rows of at least 8 elements: a masked `[r, c]` level over
/// the buffer (any sign of strides) read by a top `[a, b]` with `b >= 8` at strides
/// `[s0, s1]` (skewed, stepped, reversed), so that rows inside one row below (masked rows),
/// rows crossing rows below (the table) and everything between are planned.
fn long_row_stack() -> impl Strategy<Value = ConcreteStack> {
    (
        (2usize..7, 8usize..20, any::<bool>()),
        (0usize..4, 0usize..4, 0usize..4, 0usize..4),
        (
            1usize..6,
            8usize..14,
            -25isize..=25,
            -2isize..=2,
            any::<u32>(),
        ),
        any::<bool>(),
    )
        .prop_filter_map(
            "not a stack",
            |((r, c, flip), (m0, m1, m2, m3), (a, b, s0, s1, pick), skew)| {
                // Skewed rows (a row below and a few elements on, as a causal mask's
                // reshape reads them) half of the time.
                let s0 = if skew {
                    c as isize * s0.signum() + s0 % 3
                } else {
                    s0
                };
                let (lo, st) = if flip {
                    ((r * c - 1) as isize, [-(c as isize), -1])
                } else {
                    (0, [c as isize, 1])
                };
                let mask = [(m0.min(r), r - m1.min(r)), (m2.min(c), c - m3.min(c))];
                let mask = mask.map(|(x, y)| (x.min(y), x.max(y)));
                let lower = view(&[r, c], &st, lo, Some(&mask))?;
                let numel = (r * c) as isize;
                let span = |n: usize, s: isize| s * (n as isize - 1);
                let (sa, sb) = (span(a, s0), span(b, s1));
                let min = sa.min(0) + sb.min(0);
                let max = sa.max(0) + sb.max(0);
                let room = numel - 1 - (max - min);
                if room < 0 {
                    return None;
                }
                let offset = -min + (pick as isize % (room + 1));
                let upper = view(&[a, b], &[s0, s1], offset, None)?;
                ConcreteStack::unmerged(vec![lower, upper]).ok()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Stacks with long rows match the reference whichever way they are planned.
    #[test]
    fn long_row_stacks_match_reference(s in long_row_stack(), pad in -5i64..5) {
        let buf = buffer(200);
        let want = r::materialize(&buf, s.levels(), pad);
        let mut planned = vec![0; want.len()];
        let plan = plan_materialize::<i64>(&s).unwrap();
        plan.run_materialize(&buf, &mut planned, pad).unwrap();
        prop_assert_eq!(&planned, &want, "{}", plan);
    }
}

/// A transposed `rows` x `cols` slab of `T` elements (source rows `pitch` apart, from
/// `offset`), planned and run, materialized and copied, against the reference.
fn small_transpose_matches<T: symshape_kernels::Element + std::fmt::Debug>(
    (rows, cols, pitch, offset, flip): (usize, usize, usize, usize, bool),
    f: impl Fn(usize) -> T,
) -> Result<(), TestCaseError> {
    let len = offset + rows * pitch;
    let buf: Vec<T> = (0..len).map(&f).collect();
    // Destination row `i` is source column `i` (read backwards when `flip`).
    let (stride, start) = if flip {
        (-1, (offset + cols - 1) as isize)
    } else {
        (1, offset as isize)
    };
    let t = crate::gen::lay(&[cols, rows], &[stride, pitch as isize], start);
    let case = (rows, cols, pitch, offset, flip);
    let want = both_paths_match(&t, &buf, (f(0), f(1)), &case)?;
    // Small views skip the planner in `copy` too.
    let dst = ConcreteView::contiguous(t.shape()).unwrap();
    let mut got = vec![f(1); want.len()];
    copy(Input::new(&buf, &t), Output::new(&mut got, &dst)).unwrap();
    prop_assert!(got == want, "copy {:?}", case);
    Ok(())
}

proptest! {
    /// Transposes of at most a cache line each way (the tiled kernel's boxes of one tile),
    /// at every element size, at any offset, with the source's unit axis forwards or
    /// reversed.
    #[test]
    fn small_transposes_of_every_element_size_match_reference(
        (rows, cols) in (1usize..=64, 1usize..=64),
        (gap, offset, flip) in (0usize..=9, 0usize..=17, any::<bool>()),
    ) {
        let shape = |k: usize| (rows.min(k), cols.min(k), cols.min(k) + gap, offset, flip);
        small_transpose_matches::<u8>(shape(64), |i| (i * 13 % 251) as u8)?;
        small_transpose_matches::<u16>(shape(32), |i| (i * 7 % 65521) as u16)?;
        small_transpose_matches::<f32>(shape(16), |i| i as f32 * 0.5)?;
        small_transpose_matches::<f64>(shape(8), |i| i as f64 - 3.0)?;
    }
}
