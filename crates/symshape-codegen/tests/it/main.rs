//! Integration tests of symshape-codegen: emitted C compiled and run against the kernels,
//! and snapshots of plans and sources.

mod compiled;
mod copies;
mod elementwise;
mod gpu;
mod harness;
mod snapshots;
