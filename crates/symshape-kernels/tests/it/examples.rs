//! The `lazy_tensor` example's scenario, run and snapshotted: the example's own code, so CI
//! runs the scenario rather than only compiling it.

use std::fmt::Write;

#[path = "../../examples/lazy_tensor/scenario.rs"]
mod scenario;

#[test]
fn lazy_tensor_scenario() {
    let mut out = String::new();
    // A mismatch against the scenario's reference ends the run with an error; it lands
    // in the snapshot, which then no longer matches.
    if let Err(e) = scenario::run(&mut out) {
        let _ = writeln!(out, "error: {e}");
    }
    insta::assert_snapshot!("lazy_tensor", out);
}
