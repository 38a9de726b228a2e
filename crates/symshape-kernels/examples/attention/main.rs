//! A causal attention block with a KV cache and a depthwise conv, traced once with symbolic
//! batch, sequence and cache position, then bound and run on `f32` buffers at several sizes.
//!
//! Run with `cargo run -p symshape-kernels --example attention`. The scenario lives in
//! `scenario.rs` so that the kernels integration tests run it too and snapshot its output.

mod scenario;

use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let mut out = String::new();
    let res = scenario::run(&mut out);
    // Print what ran before a failure too, so a mismatch is seen in context.
    print!("{out}");
    res
}
