//! `f16` and `bf16` elements against a reference computed in `f32`.
//!
//! Data movement (materialize, copy, fill, map, zip) must give the reference's values bit for
//! bit: the reference moves the elements' exact `f32` values and rounds them back, which is
//! the identity. Builtin reductions accumulate in `f32` and round once at the end; the
//! buffers hold multiples of 1/16 of magnitude at most 64 (sums) or signed powers of two from
//! 2^-3 to 2^3 (products), so every partial sum or product of the at most 64 elements a
//! stack of the small strategy reads (600 for sums in the large one: below 2^16 in steps of
//! 1/16, 20 bits) is an `f32` exactly, whatever the order of the fold. The reference's exact result
//! rounded once to the element type is then the only right answer, and an accumulation in
//! the element type itself (which rounds partial sums above 2^7 to 1/16, products above
//! 65504 to infinity) would differ from it.

use crate::gen::{stack, structured_layout};
use crate::reference as r;
use proptest::prelude::*;
use symshape_kernels::{
    bf16, copy, f16, fill, map, materialize, plan_materialize, reduce, reduce_with, zip,
    ConcreteStack, ConcreteView, Element, Input, Output, ReduceConfig, ReduceOp,
};
use symshape_view::Op;

const LEN: usize = 40;

/// The conversions of a half-precision element type to and from `f32`.
trait Half: Element {
    /// The exponent field's bits.
    const EXPONENT: u16;
    fn of(x: f32) -> Self;
    fn from_bits(b: u16) -> Self;
    fn f32(self) -> f32;
    fn bits(self) -> u16;
}

/// `Half` for a type of the `half` crate, whose conversions have the same names in both.
macro_rules! half {
    ($t:ty, $exponent:expr) => {
        impl Half for $t {
            const EXPONENT: u16 = $exponent;
            fn of(x: f32) -> Self {
                <$t>::from_f32(x)
            }
            fn from_bits(b: u16) -> Self {
                <$t>::from_bits(b)
            }
            fn f32(self) -> f32 {
                self.to_f32()
            }
            fn bits(self) -> u16 {
                self.to_bits()
            }
        }
    };
}
half!(f16, 0x7C00);
half!(bf16, 0x7F80);

fn bits<T: Half>(v: &[T]) -> Vec<u16> {
    v.iter().map(|x| x.bits()).collect()
}

/// `LEN` values `k / 16` for `k` in -1024..=1024 from `seed`, rounded to `T`, and their exact
/// `f32` values.
fn sixteenths<T: Half>(seed: &[i16]) -> (Vec<T>, Vec<f32>) {
    let v: Vec<T> = seed
        .iter()
        .map(|&k| T::of(f32::from(k % 1025) / 16.0))
        .collect();
    let w = v.iter().map(|x| x.f32()).collect();
    (v, w)
}

/// The f32 reference of a view's elements, rounded back to `T`.
fn moved<T: Half>(wide: &[f32], levels: &[ConcreteView], pad: T) -> Vec<T> {
    r::materialize(wide, levels, pad.f32())
        .into_iter()
        .map(T::of)
        .collect()
}

fn check_movement<T: Half>(
    s: &ConcreteStack,
    dst: &ConcreteView,
    seed: &[i16],
    pad: i16,
) -> Result<(), TestCaseError> {
    let (buf, wide) = sixteenths::<T>(seed);
    let pad = T::of(f32::from(pad) / 4.0);
    let want = moved(&wide, s.levels(), pad);
    let got = materialize(Input::new(&buf, s).pad(pad)).unwrap().values;
    prop_assert_eq!(bits(&got), bits(&want));
    let mut planned = vec![T::ZERO; want.len()];
    plan_materialize::<T>(s)
        .unwrap()
        .run_materialize(&buf, &mut planned, pad)
        .unwrap();
    prop_assert_eq!(bits(&planned), bits(&want));

    // map to f32 and back, and zip with a bf16 operand into f32: exact conversions.
    let up = map(Input::new(&buf, s).pad(pad), |x: T| x.f32())
        .unwrap()
        .values;
    let want_up = r::materialize(&wide, s.levels(), pad.f32());
    prop_assert_eq!(&up, &want_up);
    let flat = ConcreteView::contiguous(s.shape()).unwrap();
    let down = map(Input::new(&up, &flat), T::of).unwrap().values;
    prop_assert_eq!(bits(&down), bits(&want));
    let other: Vec<bf16> = wide.iter().map(|&x| bf16::from_f32(-x)).collect();
    let z = zip(
        Input::new(&buf, s).pad(pad),
        Input::new(&other, s),
        |a: T, b: bf16| a.f32() + b.to_f32(),
    )
    .unwrap()
    .values;
    let neg: Vec<f32> = other.iter().map(|x| x.to_f32()).collect();
    let want_z: Vec<f32> = want_up
        .iter()
        .zip(r::materialize(&neg, s.levels(), 0.0))
        .map(|(a, b)| a + b)
        .collect();
    prop_assert_eq!(z, want_z);

    // copy into a random destination layout of the same shape, and fill it.
    if dst.shape() == s.shape() && !r::overlaps(dst) {
        let mut got = vec![T::of(-1.0); LEN];
        copy(Input::new(&buf, s).pad(pad), Output::new(&mut got, dst)).unwrap();
        let mut expect = vec![-1.0f32; LEN];
        r::copy_values(
            &mut expect,
            dst,
            &r::materialize(&wide, s.levels(), pad.f32()),
        );
        let expect: Vec<T> = expect.into_iter().map(T::of).collect();
        prop_assert_eq!(bits(&got), bits(&expect));
        fill(Output::new(&mut got, dst), pad).unwrap();
        let mut want_fill = expect;
        r::copy_values(&mut want_fill, dst, &vec![pad; dst.numel() as usize]);
        prop_assert_eq!(bits(&got), bits(&want_fill));
    }
    Ok(())
}

/// The builtin reduction `op` of the f32 values of `s` over `axes` by the reference (exact for
/// the buffers of the module docs), rounded once to `T`.
fn reduced<T: Half>(
    wide: &[f32],
    s: &ConcreteStack,
    pad: T,
    axes: &[usize],
    op: ReduceOp,
) -> Vec<T> {
    let (id, f): (f32, fn(f32, f32) -> f32) = match op {
        ReduceOp::Sum => (0.0, |a, x| a + x),
        ReduceOp::Prod => (1.0, |a, x| a * x),
        ReduceOp::Min => (f32::INFINITY, f32::min),
        _ => (f32::NEG_INFINITY, f32::max),
    };
    let vals = r::materialize(wide, s.levels(), pad.f32());
    let shape = r::dims(s.top());
    let kept: Vec<usize> = (0..shape.len()).filter(|k| !axes.contains(k)).collect();
    let kept_shape: Vec<usize> = kept.iter().map(|&k| shape[k]).collect();
    r::indices(&kept_shape)
        .iter()
        .map(|out| {
            let mut acc = id;
            for (idx, &v) in r::indices(&shape).iter().zip(&vals) {
                if kept.iter().zip(out).all(|(&k, &o)| idx[k] == o) {
                    acc = f(acc, v);
                }
            }
            T::of(acc)
        })
        .collect()
}

fn check_reduce<T: Half>(
    s: &ConcreteStack,
    seed: &[i16],
    axes_bits: u8,
    op: usize,
    pad: i16,
) -> Result<(), TestCaseError> {
    let axes: Vec<usize> = (0..s.top().ndim())
        .filter(|k| axes_bits & (1 << k) != 0)
        .collect();
    let op = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max][op];
    let (buf, wide, pad) = if op == ReduceOp::Prod {
        // Signed powers of two, 2^-3 to 2^3, and zero.
        let v: Vec<T> = seed
            .iter()
            .map(|&k| match k % 8 {
                0 => T::ZERO,
                e => T::of(f32::from(k.signum()) * 2f32.powi(i32::from(e.abs()) - 4)),
            })
            .collect();
        let w = v.iter().map(|x| x.f32()).collect();
        (v, w, T::of(f32::from(pad % 3).exp2()))
    } else {
        let (v, w) = sixteenths::<T>(seed);
        (v, w, T::of(f32::from(pad) / 4.0))
    };
    let want = reduced(&wide, s, pad, &axes, op);
    let got = reduce(
        Input::new(&buf, s).pad(pad),
        &axes,
        op,
        ReduceConfig::default(),
    )
    .unwrap();
    prop_assert_eq!(bits(&got.values), bits(&want), "{:?} over {:?}", op, axes);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn f16_and_bf16_move_like_the_f32_reference(
        s in stack(LEN),
        dst in structured_layout(LEN),
        seed in prop::collection::vec(-1024i16..=1024, LEN),
        pad in -8i16..8,
    ) {
        check_movement::<f16>(&s, &dst, &seed, pad)?;
        check_movement::<bf16>(&s, &dst, &seed, pad)?;
    }

    #[test]
    fn f16_and_bf16_reductions_round_the_f32_reference_once(
        s in stack(LEN),
        seed in prop::collection::vec(-1024i16..=1024, LEN),
        axes_bits in 0u8..8,
        op in 0usize..4,
        pad in -8i16..8,
    ) {
        check_reduce::<f16>(&s, &seed, axes_bits, op, pad)?;
        check_reduce::<bf16>(&s, &seed, axes_bits, op, pad)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// One structured view (reshape, permute, flip, stepped slice, mask) of 64 to 600
    /// elements: reductions over hundreds of elements, where partial sums need more bits than
    /// `f16` (11) or `bf16` (8) hold; an accumulation in the element type fails here. Products
    /// of hundreds of powers of two would overflow `f32` itself, so only sums, min and max.
    #[test]
    fn large_f16_and_bf16_reductions_round_the_f32_reference_once(
        (l, seed) in (64usize..=600).prop_flat_map(|n| (
            structured_layout(n),
            prop::collection::vec(-1024i16..=1024, n),
        )),
        axes_bits in 1u8..8,
        op in prop::sample::select(vec![0usize, 2, 3]),
        pad in -8i16..8,
    ) {
        let s = ConcreteStack::from(l);
        check_reduce::<f16>(&s, &seed, axes_bits, op, pad)?;
        check_reduce::<bf16>(&s, &seed, axes_bits, op, pad)?;
    }
}

/// Finite `T`s from 16-bit patterns (an all-ones exponent loses its top bit): values of every
/// magnitude, whose sums round differently in every order.
fn finite<T: Half>(patterns: &[u16]) -> Vec<T> {
    patterns
        .iter()
        .map(|&b| {
            T::from_bits(if b & T::EXPONENT == T::EXPONENT {
                b ^ 0x4000
            } else {
                b
            })
        })
        .collect()
}

/// The sum of `xs` as the kernels fold a run of them from the accumulator 0: in order, or,
/// for a run of 32 or more at any stride, in 16 lanes (element `i` in lane `i % 16`) combined
/// pairwise.
fn f32_sum(xs: &[f32]) -> f32 {
    if xs.len() < 32 {
        return xs.iter().fold(0.0, |a, &x| a + x);
    }
    let mut l = [0.0f32; 16];
    for (i, &x) in xs.iter().enumerate() {
        l[i % 16] += x;
    }
    let mut width = 16;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            l[i] += l[i + width];
        }
    }
    0.0 + l[0]
}

/// Sums over either axis of a `rows` x `cols` view whose columns are `step` apart (negative:
/// read backwards), rows `cols * |step| + gap` apart, from `off` elements into the buffer,
/// against the f32 fold of the elements' exact values in the kernels' order, rounded once.
fn check_strided_sum<T: Half>(
    patterns: &[u16],
    (rows, cols, step, gap, off): (usize, usize, i64, usize, usize),
) -> Result<(), TestCaseError> {
    let a = step.unsigned_abs() as usize;
    let row_stride = cols * a + gap;
    let buf: Vec<T> = finite(&patterns[..off + rows * row_stride]);
    let at = |r: usize, c: usize| {
        let c = if step < 0 { cols - 1 - c } else { c };
        buf[off + r * row_stride + c * a].f32()
    };
    let first = off + if step < 0 { (cols - 1) * a } else { 0 };
    let v = ConcreteView::as_strided(
        &[rows as i64, cols as i64],
        &[row_stride as i64, step],
        first as i64,
        buf.len() as i64,
    )
    .unwrap();
    let cfg = ReduceConfig::default();
    let by_col: Vec<T> = (0..cols)
        .map(|c| T::of((0..rows).fold(0.0, |acc, r| acc + at(r, c))))
        .collect();
    let got = reduce(Input::new(&buf, &v), &[0], ReduceOp::Sum, cfg).unwrap();
    prop_assert_eq!(bits(&got.values), bits(&by_col), "first axis");
    let by_row: Vec<T> = (0..rows)
        .map(|r| {
            let xs: Vec<f32> = (0..cols).map(|c| at(r, c)).collect();
            T::of(f32_sum(&xs))
        })
        .collect();
    let got = reduce(Input::new(&buf, &v), &[1], ReduceOp::Sum, cfg).unwrap();
    prop_assert_eq!(bits(&got.values), bits(&by_row), "last axis");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Sums of values of every magnitude (so that each order rounds differently) over either
    /// axis of contiguous and strided views, at lengths around the register widths (8 and
    /// 16 lanes) and the widened blocks (256), from odd offsets: the widening (F16C, AVX-512,
    /// integer shifts) must give each element's exact value, in the fold's order.
    #[test]
    fn f16_and_bf16_sums_equal_the_f32_fold_bit_for_bit(
        patterns in prop::collection::vec(any::<u16>(), 12 * (270 * 3 + 3) + 8),
        rows in 1usize..=12,
        cols in prop_oneof![1usize..=40, 250usize..=270],
        step in prop::sample::select(vec![1i64, 1, -1, 2, -2, 3]),
        gap in 0usize..=3,
        off in 0usize..8,
    ) {
        check_strided_sum::<f16>(&patterns, (rows, cols, step, gap, off))?;
        check_strided_sum::<bf16>(&patterns, (rows, cols, step, gap, off))?;
    }
}

#[test]
fn sums_accumulate_in_f32_and_round_once() {
    // 2048 + 1 + 1 + 1 + 1: in f16 each + 1 rounds back to 2048 (ties to even), in f32 the
    // sum is 2052, an f16. A user fold runs in f16 itself.
    let buf: Vec<f16> = [2048.0, 1.0, 1.0, 1.0, 1.0]
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let v = ConcreteView::contiguous(&[5]).unwrap();
    let cfg = ReduceConfig::default();
    let sum = reduce(Input::new(&buf, &v), &[0], ReduceOp::Sum, cfg).unwrap();
    assert_eq!(sum.values, [f16::from_f32(2052.0)]);
    let in_f16 = reduce_with(Input::new(&buf, &v), &[0], cfg, f16::ZERO, |a, x| a + x).unwrap();
    assert_eq!(in_f16.values, [f16::from_f32(2048.0)]);
    // Partial sums beyond f16's largest finite value (65504) do not overflow.
    let big: Vec<f16> = [60000.0, 60000.0, -60000.0]
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let v = ConcreteView::contiguous(&[3]).unwrap();
    let sum = reduce(Input::new(&big, &v), &[0], ReduceOp::Sum, cfg).unwrap();
    assert_eq!(sum.values, [f16::from_f32(60000.0)]);
    // bf16 has 8 significant bits: 256 + 1 + 1 is 258 only when accumulated in f32.
    let buf: Vec<bf16> = [256.0, 1.0, 1.0].into_iter().map(bf16::from_f32).collect();
    let sum = reduce(Input::new(&buf, &v), &[0], ReduceOp::Sum, cfg).unwrap();
    assert_eq!(sum.values, [bf16::from_f32(258.0)]);
}

#[test]
fn nans_behave_as_in_f32() {
    // Sums and products propagate a NaN; min and max ignore it (as `f32::min`/`max` do).
    let cfg = ReduceConfig::default();
    let v = ConcreteView::contiguous(&[3]).unwrap();
    let buf = [f16::from_f32(1.0), f16::NAN, f16::from_f32(-2.0)];
    let run = |op| reduce(Input::new(&buf, &v), &[0], op, cfg).unwrap().values[0];
    assert!(run(ReduceOp::Sum).is_nan());
    assert!(run(ReduceOp::Prod).is_nan());
    assert_eq!(run(ReduceOp::Min), f16::from_f32(-2.0));
    assert_eq!(run(ReduceOp::Max), f16::from_f32(1.0));
    let buf = [bf16::NAN, bf16::from_f32(3.0), bf16::from_f32(0.5)];
    let run = |op| reduce(Input::new(&buf, &v), &[0], op, cfg).unwrap().values[0];
    assert!(run(ReduceOp::Sum).is_nan());
    assert_eq!(run(ReduceOp::Min), bf16::from_f32(0.5));
    assert_eq!(run(ReduceOp::Max), bf16::from_f32(3.0));
    // All NaN: the identities, as for f32.
    let buf = [f16::NAN; 3];
    let max = reduce(Input::new(&buf, &v), &[0], ReduceOp::Max, cfg).unwrap();
    assert_eq!(max.values, [f16::NEG_INFINITY]);
}

#[test]
fn large_reductions_round_once_on_every_path() {
    // Integers 0..=8 over about 2^20 elements: every partial sum is an integer below 2^24,
    // exact in f32 in any order, so the lanes, the widened blocks, the column passes (four
    // rows and single rows, blocks of 256 columns and their ends) and the parallel blocks all
    // give the exact sum rounded once. Row and column sums reach thousands, beyond the
    // integers f16 (2048) and bf16 (256) hold: an accumulation in the element type differs.
    fn check<T: Half>(rows: usize, cols: usize) {
        let buf: Vec<T> = (0..rows * cols)
            .map(|i| T::of(((i * 7919 + i / 1000) % 9) as f32))
            .collect();
        let wide: Vec<f64> = buf.iter().map(|x| f64::from(x.f32())).collect();
        let round = |x: f64| T::of(x as f32);
        let full = ConcreteView::contiguous(&[rows as i64, cols as i64]).unwrap();
        let sum = |axes: &[usize]| {
            let r = reduce(
                Input::new(&buf, &full),
                axes,
                ReduceOp::Sum,
                ReduceConfig::default(),
            );
            bits(&r.unwrap().values)
        };
        let total: f64 = wide.iter().sum();
        assert_eq!(sum(&[0, 1]), bits(&[round(total)]), "{rows} x {cols}");
        let by_row: Vec<T> = (0..rows)
            .map(|i| round(wide[i * cols..(i + 1) * cols].iter().sum()))
            .collect();
        assert_eq!(sum(&[1]), bits(&by_row), "{rows} x {cols}");
        let by_col: Vec<T> = (0..cols)
            .map(|j| round((0..rows).map(|i| wide[i * cols + j]).sum()))
            .collect();
        assert_eq!(sum(&[0]), bits(&by_col), "{rows} x {cols}");
    }
    for (rows, cols) in [(1024, 1024), (1027, 1000), (7, 4099)] {
        check::<f16>(rows, cols);
        check::<bf16>(rows, cols);
    }
}

#[test]
fn half_elements_take_the_two_byte_kernels() {
    // A transpose large enough for the tiled kernel: the same plan as for u16, and the same
    // bytes moved.
    let n = 256i64;
    let t = ConcreteView::contiguous(&[n, n])
        .unwrap()
        .apply(&Op::Permute(vec![1, 0]))
        .unwrap();
    let p16 = plan_materialize::<f16>(&t).unwrap();
    let pu = plan_materialize::<u16>(&t).unwrap();
    let k16: Vec<_> = p16.boxes().iter().map(|b| b.nest.kernel).collect();
    let ku: Vec<_> = pu.boxes().iter().map(|b| b.nest.kernel).collect();
    assert_eq!(k16, ku);
    let raw: Vec<u16> = (0..=u16::MAX).collect();
    let halves: Vec<bf16> = raw.iter().map(|&b| bf16::from_bits(b)).collect();
    let got = materialize(Input::new(&halves, &t)).unwrap().values;
    let want = materialize(Input::new(&raw, &t)).unwrap().values;
    assert_eq!(bits(&got), want);
}
