//! Integration tests of the kernels crate, through its public API only.

mod adversarial;
mod errors;
mod gen;
mod interop;
#[cfg(feature = "ndarray")]
mod nd;
mod plans;
mod props;
mod reference;
mod units;
