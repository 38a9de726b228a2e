//! The examples' scenarios, run and snapshotted: the examples' own code, so CI runs the
//! scenarios rather than only compiling them.

use std::fmt::Write;

#[path = "../../examples/lazy_tensor/scenario.rs"]
mod scenario;

#[path = "../../examples/attention/scenario.rs"]
mod attention;

/// What a scenario prints. A mismatch against the scenario's reference ends the run with an
/// error; it lands in the output, so the snapshot then no longer matches.
fn transcript<E: std::fmt::Display>(run: impl FnOnce(&mut String) -> Result<(), E>) -> String {
    let mut out = String::new();
    if let Err(e) = run(&mut out) {
        let _ = writeln!(out, "error: {e}");
    }
    out
}

#[test]
fn lazy_tensor_scenario() {
    insta::assert_snapshot!("lazy_tensor", transcript(scenario::run));
}

#[test]
fn attention_scenario() {
    insta::assert_snapshot!("attention", transcript(attention::run));
}
