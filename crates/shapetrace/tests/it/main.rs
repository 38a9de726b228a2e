//! Integration tests of the `shapetrace` runner: scripts in, printed text out.

mod cli;
mod copies;
mod emit;
mod examples;
mod hostile;
mod kernels;
mod named;
mod prompt;
mod symbolic;
mod torchlist;
mod viewlist;
mod views;
mod windows;

/// The example scripts (`examples/*.shapes`), sorted by name.
#[must_use]
pub fn example_scripts() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("the examples folder exists")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "shapes"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no example scripts in {}", dir.display());
    paths
}

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

/// Runs every script of `cases` and lists the runs, one after another: each script as
/// written, then on the next line `=> ` and what the script printed.
#[must_use]
pub fn trace_scripts(cases: &[&str]) -> String {
    let runs: Vec<String> = cases
        .iter()
        .map(|script| format!("{script}\n=> {}", trace(script)))
        .collect();
    runs.join("\n")
}
