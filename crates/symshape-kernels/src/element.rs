//! The sealed trait of plain element types the kernels run on.

use std::fmt::Debug;

mod sealed {
    pub trait Sealed {}
}

/// A plain element type: `f32`, `f64`, the integer types and `bool`.
///
/// Sealed: the kernels copy elements bitwise and rely on the arithmetic below never panicking
/// (integers wrap, floats follow IEEE 754; for `bool`, sum and max are `|`, product and min are `&`).
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
}

/// `impl Element for $t` from its identities and its four operations, each a function of
/// `(Self, Self) -> Self`.
macro_rules! element {
    ($t:ty, zero $zero:expr, one $one:expr, lowest $lo:expr, highest $hi:expr,
     add $add:expr, mul $mul:expr, min $min:expr, max $max:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
            const NAME: &'static str = stringify!($t);
            binary!(add $add, mul $mul, min_of $min, max_of $max);
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
