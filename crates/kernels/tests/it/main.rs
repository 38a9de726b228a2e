//! Integration tests of the kernels crate, through its public API only.

mod errors;
mod gen;
mod plans;
mod props;
mod reference;
mod units;
