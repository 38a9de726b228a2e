//! Integration tests of the `shapetrace` runner: scripts in, printed text out.

mod cli;
mod emit;
mod examples;
mod hostile;
mod kernels;
mod symbolic;
mod viewlist;
mod views;
mod windows;

/// Runs `script` and renders what it printed (stdout lines, then the error line if any).
#[must_use]
pub fn trace(script: &str) -> String {
    shapetrace::run(script).to_string()
}

/// Runs every script of `cases` and lists the runs, one after another: each script on
/// one line (statements joined by `; `), then on the next line `result_prefix` and
/// what the script printed.
#[must_use]
pub fn trace_cases(cases: &[&str], result_prefix: &str) -> String {
    let runs: Vec<String> = cases
        .iter()
        .map(|c| format!("{}\n{result_prefix}{}", c.replace('\n', "; "), trace(c)))
        .collect();
    runs.join("\n")
}
