//! The sealed trait of plain element types the kernels run on.

use half::{bf16, f16};
use std::fmt::Debug;

mod sealed {
    pub trait Sealed {}
}

/// A plain element type: `f32`, `f64`, [`struct@f16`] and [`bf16`] (the `half` crate's), the integer
/// types and `bool`.
///
/// Sealed: the kernels copy elements bitwise and rely on the arithmetic below never panicking
/// (integers wrap, floats follow IEEE 754; for `bool`, sum and max are `|`, product and min are `&`).
///
/// The kernels that only move elements (materialize, copy, fill, the gathers) see an element
/// as its bytes: `f16` and `bf16` run the 2-byte paths of `u16`, SIMD tiles included. The
/// builtin reductions fold in [`Element::Acc`]: `f32` for `f16` and `bf16` (each element
/// widened exactly, the result rounded to nearest once at the end), the type itself otherwise.
pub trait Element: Copy + Send + Sync + PartialEq + Debug + 'static + sealed::Sealed {
    /// Additive identity, the default pad value.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// Identity of `max_of` (the lowest value).
    const LOWEST: Self;
    /// Identity of `min_of` (the highest value).
    const HIGHEST: Self;
    /// Name of the type as written in Rust, used in plans.
    const NAME: &'static str;
    /// Sum (wrapping for integers).
    #[must_use]
    fn add(self, other: Self) -> Self;
    /// Product (wrapping for integers).
    #[must_use]
    fn mul(self, other: Self) -> Self;
    /// Minimum (floats: a NaN operand is ignored, as `f32::min` does).
    #[must_use]
    fn min_of(self, other: Self) -> Self;
    /// Maximum (floats: a NaN operand is ignored, as `f32::max` does).
    #[must_use]
    fn max_of(self, other: Self) -> Self;
    /// The type the builtin reductions accumulate in: `f32` for `f16` and `bf16`, `Self`
    /// for every other type.
    type Acc: Element;
    /// `self` in the accumulator type, exactly (every `f16` and `bf16` is an `f32`).
    #[must_use]
    fn to_acc(self) -> Self::Acc;
    /// An accumulator rounded to `Self` (to nearest, ties to even, for `f16` and `bf16`;
    /// the identity otherwise).
    #[must_use]
    fn from_acc(acc: Self::Acc) -> Self;
    /// [`to_acc`](Element::to_acc) of each of `src` into `dst`, as far as the shorter of the
    /// two goes (whole registers at a time: F16C or AVX-512F for `f16`, integer shifts for `bf16`).
    fn to_acc_slice(src: &[Self], dst: &mut [Self::Acc]);
}

/// `impl Element for $t` from its identities and its four operations, each a function of
/// `(Self, Self) -> Self`. Without an `acc` clause the type accumulates in itself; without a
/// `slice` clause its slices widen element by element.
macro_rules! element {
    ($t:ty, zero $zero:expr, one $one:expr, lowest $lo:expr, highest $hi:expr,
     add $add:expr, mul $mul:expr, min $min:expr, max $max:expr) => {
        element!($t, zero $zero, one $one, lowest $lo, highest $hi,
            add $add, mul $mul, min $min, max $max,
            acc $t, to |x| x, from |a| a);
    };
    ($t:ty, zero $zero:expr, one $one:expr, lowest $lo:expr, highest $hi:expr,
     add $add:expr, mul $mul:expr, min $min:expr, max $max:expr,
     acc $acc:ty, to $to:expr, from $from:expr) => {
        element!($t, zero $zero, one $one, lowest $lo, highest $hi,
            add $add, mul $mul, min $min, max $max,
            acc $acc, to $to, from $from, slice |src: &[$t], dst: &mut [$acc]| {
                for (d, &x) in dst.iter_mut().zip(src) {
                    *d = $to(x);
                }
            });
    };
    ($t:ty, zero $zero:expr, one $one:expr, lowest $lo:expr, highest $hi:expr,
     add $add:expr, mul $mul:expr, min $min:expr, max $max:expr,
     acc $acc:ty, to $to:expr, from $from:expr, slice $slice:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
            const NAME: &'static str = stringify!($t);
            binary!(add $add, mul $mul, min_of $min, max_of $max);
            type Acc = $acc;
            #[inline(always)]
            fn to_acc(self) -> $acc {
                $to(self)
            }
            #[inline(always)]
            fn from_acc(acc: $acc) -> Self {
                $from(acc)
            }
            #[inline]
            fn to_acc_slice(src: &[Self], dst: &mut [$acc]) {
                $slice(src, dst)
            }
        }
    };
}

/// The binary operations of an `Element` impl, each from a function `(Self, Self) -> Self`.
macro_rules! binary {
    ($($name:ident $f:expr),*) => {$(
        #[inline(always)]
        fn $name(self, other: Self) -> Self {
            $f(self, other)
        }
    )*};
}

macro_rules! int_elements {
    ($($t:ty),*) => {$(
        element!($t, zero 0, one 1, lowest <$t>::MIN, highest <$t>::MAX,
            add <$t>::wrapping_add, mul <$t>::wrapping_mul, min Ord::min, max Ord::max);
    )*};
}
int_elements!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

element!(f32, zero 0.0, one 1.0, lowest f32::NEG_INFINITY, highest f32::INFINITY,
    add |a: f32, b| a + b, mul |a: f32, b| a * b, min f32::min, max f32::max);
element!(f64, zero 0.0, one 1.0, lowest f64::NEG_INFINITY, highest f64::INFINITY,
    add |a: f64, b| a + b, mul |a: f64, b| a * b, min f64::min, max f64::max);
element!(bool, zero false, one true, lowest false, highest true,
    add |a, b| a | b, mul |a, b| a & b, min |a, b| a & b, max |a, b| a | b);
// Single operations through `f32` and one rounding (the `half` crate's operators), which is
// the correctly rounded result: `f32` carries more than twice the significand bits plus two.
element!(f16, zero f16::ZERO, one f16::ONE, lowest f16::NEG_INFINITY, highest f16::INFINITY,
    add |a: f16, b| a + b, mul |a: f16, b| a * b, min f16::min, max f16::max,
    acc f32, to f16::to_f32, from f16::from_f32, slice crate::simd::widen::f16_to_f32);
element!(bf16, zero bf16::ZERO, one bf16::ONE, lowest bf16::NEG_INFINITY,
    highest bf16::INFINITY, add |a: bf16, b| a + b, mul |a: bf16, b| a * b, min bf16::min,
    max bf16::max, acc f32, to crate::simd::widen::bf16_bits_to_f32, from bf16::from_f32,
    slice crate::simd::widen::bf16_to_f32);
