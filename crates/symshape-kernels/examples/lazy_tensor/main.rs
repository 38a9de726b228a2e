//! A lazy tensor with symbolic shapes: view ops recorded once, bound and run at two sizes.
//!
//! Run with `cargo run -p symshape-kernels --example lazy_tensor`. The scenario lives in `scenario.rs`
//! so that the kernels integration tests run it too and snapshot its output.

mod scenario;

use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let mut out = String::new();
    let res = scenario::run(&mut out);
    // Print what ran before a failure too, so a mismatch is seen in context.
    print!("{out}");
    res
}
