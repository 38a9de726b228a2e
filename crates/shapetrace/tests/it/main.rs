//! Integration tests of the `shapetrace` runner: scripts in, printed text out.

mod cli;
mod emit;
mod examples;
mod kernels;
mod symbolic;
mod views;
mod windows;

/// Runs `script` and renders what it printed (stdout lines, then the error line if any).
#[must_use]
pub fn trace(script: &str) -> String {
    shapetrace::run(script).to_string()
}
