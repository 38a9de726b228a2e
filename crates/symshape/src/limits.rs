//! The budgets every expression stays within (see the crate docs on limits): past one,
//! an operator returns an invalid expression that carries the error.

/// Deepest allowed node nesting (non-polynomial operators: `//`, `%`, `min`, ...).
pub const MAX_DEPTH: u32 = 200;
/// Most terms in one polynomial.
pub const MAX_TERMS: usize = 4096;
/// Highest total degree of a monomial.
pub const MAX_DEGREE: u32 = 256;
/// Widest coefficient or constant, in bits.
pub const MAX_COEF_BITS: u64 = 4096;
/// Most monomial products one multiplication may perform before expansion.
pub const MAX_MUL_WORK: usize = 1 << 16;
