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

macro_rules! int_element {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            const NAME: &'static str = stringify!($t);
            #[inline(always)]
            fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline(always)]
            fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
            #[inline(always)]
            fn min_of(self, other: Self) -> Self { Ord::min(self, other) }
            #[inline(always)]
            fn max_of(self, other: Self) -> Self { Ord::max(self, other) }
        }
    )*};
}
int_element!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! float_element {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            const NAME: &'static str = stringify!($t);
            #[inline(always)]
            fn add(self, other: Self) -> Self { self + other }
            #[inline(always)]
            fn mul(self, other: Self) -> Self { self * other }
            #[inline(always)]
            fn min_of(self, other: Self) -> Self { self.min(other) }
            #[inline(always)]
            fn max_of(self, other: Self) -> Self { self.max(other) }
        }
    )*};
}
float_element!(f32, f64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const ZERO: Self = false;
    const ONE: Self = true;
    const LOWEST: Self = false;
    const HIGHEST: Self = true;
    const NAME: &'static str = "bool";
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self | other
    }
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        self & other
    }
    #[inline(always)]
    fn min_of(self, other: Self) -> Self {
        self & other
    }
    #[inline(always)]
    fn max_of(self, other: Self) -> Self {
        self | other
    }
}
