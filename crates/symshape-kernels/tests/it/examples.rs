//! The examples' scenarios, run and snapshotted: the examples' own code, so CI runs the
//! scenarios rather than only compiling them.

use std::fmt::Write;

#[path = "../../examples/lazy_tensor/scenario.rs"]
mod scenario;

#[path = "../../examples/attention/scenario.rs"]
mod attention;

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

#[test]
fn attention_scenario() {
    let mut out = String::new();
    // As above: a mismatch with the reference lands in the snapshot.
    if let Err(e) = attention::run(&mut out) {
        let _ = writeln!(out, "error: {e}");
    }
    insta::assert_snapshot!("attention", out);
}
