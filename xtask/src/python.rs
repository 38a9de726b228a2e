//! `cargo xtask ci`'s Python step: the wheel of `crates/symshape-py` built with maturin into a
//! virtual environment under `target/`, and its pytest suite run there.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The virtual environment, relative to the workspace root.
const VENV: &str = "target/py-venv";
/// Where the wheel is built (emptied first, so that exactly one wheel is installed).
const WHEELS: &str = "target/py-wheels";
/// The tools and test dependencies, pinned.
const PINNED: &[&str] = &[
    "maturin==1.16.0",
    "pytest==9.2.0",
    "numpy==2.4.6",
    "sympy==1.14.0",
];
/// The cargo profile of the CI wheel (`[profile.python-ci]`: unoptimised, no debug info, so
/// that it builds fast and the tests run at a useful speed).
const PROFILE: &str = "python-ci";

/// Creates the environment when missing, installs the pinned packages, builds and installs
/// the wheel, and runs pytest; any failing command (pytest's non-zero exit included) fails
/// the step.
pub fn check(root: &Path) -> Result<(), String> {
    let t = Instant::now();
    eprintln!("xtask ci: python package (crates/symshape-py)");
    let venv = root.join(VENV);
    let python = venv.join("bin").join("python");
    let py = python.to_string_lossy().into_owned();
    // An environment without pip (a `venv` that failed half-way) is made again.
    if !(python.exists() && run(root, &py, &["-m", "pip", "--version"], &[]).is_ok()) {
        if venv.exists() {
            std::fs::remove_dir_all(&venv)
                .map_err(|e| format!("cannot remove {}: {e}", venv.display()))?;
        }
        create_venv(root)?;
    }
    let mut pip = vec!["-m", "pip", "install", "--disable-pip-version-check", "-q"];
    pip.extend_from_slice(PINNED);
    run(root, &py, &pip, &[])?;
    let wheels = root.join(WHEELS);
    if wheels.exists() {
        std::fs::remove_dir_all(&wheels)
            .map_err(|e| format!("cannot empty {}: {e}", wheels.display()))?;
    }
    let maturin = venv.join("bin").join("maturin");
    run(
        root,
        &maturin.to_string_lossy(),
        &[
            "build",
            "--manifest-path",
            "crates/symshape-py/Cargo.toml",
            "--profile",
            PROFILE,
            "--locked",
            "--interpreter",
            &py,
            "--out",
            WHEELS,
        ],
        &[],
    )?;
    let wheel = single_wheel(&wheels)?;
    run(
        root,
        &py,
        &[
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-q",
            "--force-reinstall",
            "--no-deps",
            &wheel.to_string_lossy(),
        ],
        &[],
    )?;
    // pytest exits 0 only when every test ran and passed (5: none collected).
    run(
        root,
        &py,
        &[
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "crates/symshape-py/tests",
        ],
        &[],
    )?;
    eprintln!("xtask ci: python package ok in {:.1?}", t.elapsed());
    Ok(())
}

/// `python3 -m venv`; where that fails for want of Debian's `python3-venv` and this runs as
/// root, the package is installed with apt-get and the creation retried.
fn create_venv(root: &Path) -> Result<(), String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    if run(root, &python, &["-m", "venv", VENV], &[]).is_ok() {
        return Ok(());
    }
    let root_user = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root_user {
        return Err(format!(
            "cannot create {VENV} with `{python} -m venv`; install python3-venv"
        ));
    }
    let env = [("DEBIAN_FRONTEND", "noninteractive")];
    run(root, "apt-get", &["update", "-q"], &env)?;
    run(
        root,
        "apt-get",
        &["install", "-y", "-q", "python3-venv"],
        &env,
    )?;
    // A half-made environment from the failed try would be taken for a whole one.
    let _ = std::fs::remove_dir_all(root.join(VENV));
    run(root, &python, &["-m", "venv", VENV], &[])
}

fn single_wheel(dir: &Path) -> Result<PathBuf, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let wheels: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "expected one wheel in {}, found {}",
            dir.display(),
            wheels.len()
        )),
    }
}

fn run(root: &Path, program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run `{program}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}` failed with {status}",
            args.join(" ")
        ))
    }
}
