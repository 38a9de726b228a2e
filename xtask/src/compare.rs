//! `cargo xtask compare`: symshape, NumPy and PyTorch copying the same views, side by side.
//!
//! Builds the release `symshape-compare` binary (benches/src/bin/compare.rs), makes a virtual
//! environment under the target directory with the pinned NumPy and PyTorch from PyPI (once;
//! a stamp file records the pins), and runs the driver benches/compare/compare.py with the
//! binary. `--python PATH` runs the driver with an interpreter that already has numpy and
//! torch instead. Every other option goes to the driver (`--threads`, `--runs`, `--only`,
//! `--gap-us`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{project_root, run_cargo};

/// The packages the virtual environment gets, pinned: the newest releases that install on
/// Python 3.11 (NumPy 2.5 needs 3.12). The PyPI `torch` wheel for Linux x86-64 brings its
/// CUDA libraries; only its CPU side is used.
pub(crate) const PINNED: &[&str] = &["numpy==2.4.6", "torch==2.15.0"];

/// The virtual environment, relative to the target directory.
const VENV: &str = "compare-venv";

/// The options of `cargo xtask compare`: an interpreter of the caller's, and what goes to the
/// driver unchanged.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Options {
    pub(crate) python: Option<PathBuf>,
    pub(crate) driver_args: Vec<String>,
}

/// Splits `--python PATH` (or `--python=PATH`) from the driver's options.
pub(crate) fn parse(args: &[String]) -> Result<Options, String> {
    let mut res = Options {
        python: None,
        driver_args: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--python" {
            let path = it.next().ok_or("compare: `--python` needs a path")?;
            res.python = Some(PathBuf::from(path));
        } else if let Some(path) = a.strip_prefix("--python=") {
            res.python = Some(PathBuf::from(path));
        } else {
            res.driver_args.push(a.clone());
        }
    }
    Ok(res)
}

pub(crate) fn compare(args: &[String]) -> Result<(), String> {
    let opts = parse(args)?;
    let root = project_root();
    run_cargo(
        &root,
        &[
            "build",
            "--release",
            "--locked",
            "--package",
            "benches",
            "--bin",
            "symshape-compare",
        ],
        &[],
    )?;
    let target = target_dir(&root);
    let bin = target.join("release").join("symshape-compare");
    let python = match opts.python {
        Some(p) => p,
        None => venv_python(&target.join(VENV))?,
    };
    eprintln!("xtask compare: {} with {}", bin.display(), python.display());
    let driver = root.join("benches").join("compare").join("compare.py");
    run(Command::new(&python)
        .arg(&driver)
        .arg("--bin")
        .arg(&bin)
        .args(&opts.driver_args)
        .current_dir(&root))
}

/// `$CARGO_TARGET_DIR`, or `target` under the workspace root.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

/// The interpreter of the virtual environment `dir`, made with `python3 -m venv` and given
/// [`PINNED`] unless its stamp file already lists exactly those.
fn venv_python(dir: &Path) -> Result<PathBuf, String> {
    let python = dir.join("bin").join("python");
    let stamp = dir.join("pinned.txt");
    let want = PINNED.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == want) && python.exists() {
        return Ok(python);
    }
    if !python.exists() {
        eprintln!("xtask compare: creating {}", dir.display());
        run(Command::new("python3").args(["-m", "venv"]).arg(dir))?;
    }
    eprintln!("xtask compare: installing {}", PINNED.join(" "));
    run(Command::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check"])
        .args(PINNED))?;
    std::fs::write(&stamp, want).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(python)
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed with {status}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &[&str], python: Option<&str>, driver: &[&str]) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let res = parse(&args).expect("parse");
        assert_eq!(res.python, python.map(PathBuf::from));
        assert_eq!(res.driver_args, driver);
    }

    #[test]
    fn python_is_taken_and_the_rest_forwarded() {
        check(&[], None, &[]);
        check(&["--threads", "2"], None, &["--threads", "2"]);
        check(
            &[
                "--threads",
                "2",
                "--python",
                "/usr/bin/python3",
                "--runs",
                "5",
            ],
            Some("/usr/bin/python3"),
            &["--threads", "2", "--runs", "5"],
        );
        check(
            &["--python=py", "--only", "a,b"],
            Some("py"),
            &["--only", "a,b"],
        );
    }

    #[test]
    fn python_without_a_path_is_an_error() {
        let err = parse(&["--python".to_string()]).expect_err("no path");
        assert_eq!(err, "compare: `--python` needs a path");
    }
}
