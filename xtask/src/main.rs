//! Project automation: `cargo xtask ci` runs every check CI runs, `cargo xtask bench` prints the
//! kernel performance table, `cargo xtask compare` times the same copies in NumPy and PyTorch,
//! `cargo xtask gpu-bench` builds and runs the CUDA benchmark.
//!
//! Written in Rust so that a fresh clone with only the Rust toolchain can run it; it shells out to
//! `cargo` and nothing else, but for the Python package's tests, which run `python3` in a
//! virtual environment under `target/` (see [`python`]), `compare`, which installs NumPy
//! and PyTorch into another, and `ci`'s `apt-get` of the OpenCL platform where it is missing
//! (see [`opencl`]).

#![forbid(unsafe_code)]

mod compare;
mod layering;
mod opencl;
mod python;

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

const HELP: &str = "\
usage: cargo xtask <task>

tasks:
  ci      module layering (no cycles), the OpenCL platform the codegen tests run
          on (POCL: apt-get installs pocl-opencl-icd and ocl-icd-opencl-dev
          where missing, as root or under CI=true; without it the OpenCL
          tests are skipped, but fail under CI=true), format check, clippy (-D warnings)
          and the whole test suite, both with every optional feature on (serde of
          symshape and symshape-view, ndarray and dlpack of symshape-kernels; the
          examples are linted, not built), the docs (-D warnings), a compile of every
          benchmark, `cargo package` of the published crates, clippy of the kernels and the
          two libraries below them with their features off for
          aarch64-unknown-linux-gnu (the portable paths; on the host when rustup
          cannot add that target), then the Python package: a virtual environment in
          target/py-venv with pinned maturin, pytest, numpy and sympy, the wheel of
          crates/symshape-py built and installed, and its pytest suite
  python  the Python step of ci alone
  bench   run the kernel benchmarks and print the ratio table
          (extra arguments are passed to the benchmark binary)
  gpu-bench [--cpu-check] [--runs N] [--only NAME,...] [--arch sm_XY]
          build the release symshape-gpu-bench binary (no CUDA needed to build:
          cudarc loads the driver and NVRTC at run time) and run it: on a machine
          with a CUDA driver, every workload's CUDA kernel compiled with NVRTC,
          checked against the CPU kernels and timed against a device-to-device
          copy; without one (or with --cpu-check), both dialects rendered, index
          widths checked and the OpenCL kernels run on POCL. To run on another
          machine, copy target/release/symshape-gpu-bench there. Not part of ci
  compare [--threads N] [--runs R] [--only NAME,...] [--gap-us G] [--python PATH]
          build the release symshape-compare binary and time each workload copied
          by it, by NumPy (np.copyto) and by PyTorch (out.copy_) with N threads
          (default: every CPU), printing ours / NumPy / PyTorch (medians of R runs,
          default 11) after checking every result against NumPy's; --gap-us G
          sleeps G µs before each timed run (the thread pools asleep, as between
          a framework's ops). Makes
          target/compare-venv with the pinned numpy and torch from PyPI, unless
          --python names an interpreter that has them. Not part of ci; needs an
          idle machine for figures worth quoting
  fuzz [TARGET] [SECONDS]
          run the cargo-fuzz targets in fuzz/ (all, or TARGET) for SECONDS each
          (default 60) with the nightly toolchain; needs `cargo install cargo-fuzz`.
          Not part of ci.
";

/// The cargo-fuzz targets in `fuzz/fuzz_targets`.
const FUZZ_TARGETS: &[&str] = &["parse", "runner", "chain"];

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let res = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench(&args[1..]),
        Some("gpu-bench") => gpu_bench(&args[1..]),
        Some("compare") => compare::compare(&args[1..]),
        Some("python") => python::check(&project_root()),
        Some("fuzz") => fuzz(&args[1..]),
        Some("-h" | "--help" | "help") | None => {
            print!("{HELP}");
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`\n\n{HELP}")),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("xtask: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// One step of a task: a cargo invocation with optional extra environment.
struct Step {
    name: String,
    args: Vec<&'static str>,
    env: &'static [(&'static str, &'static str)],
}

impl Step {
    /// The step `name` running `cargo` with the arguments `parts` joined, and no extra
    /// environment.
    fn new(name: &str, parts: &[&[&'static str]]) -> Step {
        Step {
            name: name.to_string(),
            args: parts.concat(),
            env: &[],
        }
    }
}

/// What follows clippy's own arguments: every warning an error.
const DENY_WARNINGS: &[&str] = &["--", "-D", "warnings"];

/// The optional features every build of the workspace in `ci` turns on: they are
/// independent and additive, so one build of the workspace lints and tests them all (a
/// build per feature would compile the crates above it again, several minutes on two
/// cores).
const FEATURES: &str =
    "symshape/serde,symshape-view/serde,symshape-kernels/ndarray,symshape-kernels/dlpack";

/// The steps of `cargo xtask ci`, in order.
fn ci_steps() -> Vec<Step> {
    let features = ["--features", FEATURES, "--locked"];
    let mut steps = vec![
        Step::new("format", &[&["fmt", "--all", "--", "--check"]]),
        Step::new(
            "clippy",
            &[
                &["clippy", "--workspace", "--all-targets"],
                &features,
                DENY_WARNINGS,
            ],
        ),
        // Unit and integration tests; the examples are linted above and not built here (the
        // scenarios of the kernels' examples run in its tests), and the doc tests follow.
        Step::new(
            "tests",
            &[
                &["test", "--workspace", "--lib", "--bins", "--tests"],
                &features,
            ],
        ),
        Step::new("doc tests", &[&["test", "--workspace", "--doc"], &features]),
    ];
    steps.push(Step {
        env: &[("RUSTDOCFLAGS", "-D warnings")],
        ..Step::new("docs", &[&["doc", "--workspace", "--no-deps", "--locked"]])
    });
    steps.push(Step::new(
        "benches compile",
        // The features of the test build, so that its libraries are reused.
        &[&["test", "--workspace", "--benches", "--no-run"], &features],
    ));
    steps.push(Step {
        // A target directory of its own, emptied first: cargo takes a packaged crate of an
        // unchanged version for unchanged, and would reuse a stale build of it.
        env: &[("CARGO_TARGET_DIR", PACKAGE_TARGET)],
        ..Step::new(
            "package",
            &[
                &["package", "--workspace", "--locked"],
                &["--exclude", UNPUBLISHED[0], "--exclude", UNPUBLISHED[1]],
            ],
        )
    });
    steps
}

/// The workspace members with `publish = false`, which `cargo package --workspace` would
/// package and verify too (the benchmarks' verification alone builds criterion again).
const UNPUBLISHED: [&str; 2] = ["benches", "xtask"];

/// The target directory of the package step, relative to the workspace root.
const PACKAGE_TARGET: &str = "target/package-check";

/// Whether this run is CI's (`CI=true`): the OpenCL tests fail without a platform, and
/// the builds take [`CI_BUILD_ENV`].
fn in_ci() -> bool {
    env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The build settings of a run under CI (`CI=true`), which builds everything once from a
/// fresh clone: no incremental state to save (nothing reuses it), and line tables only in
/// the debug information of the dev and test builds (file and line in a panic's backtrace
/// are kept). Together they take about a third off the test build on two cores. Not set
/// elsewhere: a developer's builds keep their own settings, and with them their artifacts.
const CI_BUILD_ENV: &[(&str, &str)] = &[
    ("CARGO_INCREMENTAL", "0"),
    ("CARGO_PROFILE_DEV_DEBUG", "line-tables-only"),
    ("CARGO_PROFILE_TEST_DEBUG", "line-tables-only"),
];

fn ci() -> Result<(), String> {
    let root = project_root();
    let started = Instant::now();
    if in_ci() {
        for &(key, value) in CI_BUILD_ENV {
            // Before any child process; every cargo and maturin run below inherits them.
            env::set_var(key, value);
        }
    }
    layering::check(&root)?;
    opencl::ensure()?;
    for step in ci_steps() {
        if step
            .env
            .iter()
            .any(|&(k, v)| k == "CARGO_TARGET_DIR" && v == PACKAGE_TARGET)
        {
            let dir = root.join(PACKAGE_TARGET);
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .map_err(|e| format!("cannot empty {}: {e}", dir.display()))?;
            }
            forget_unpacked_members(&root)?;
        }
        let t = Instant::now();
        eprintln!("xtask ci: {} (cargo {})", step.name, step.args.join(" "));
        run_cargo(&root, &step.args, step.env)?;
        eprintln!("xtask ci: {} ok in {:.1?}", step.name, t.elapsed());
    }
    cross_check(&root)?;
    python::check(&root)?;
    eprintln!("xtask ci: all checks passed in {:.1?}", started.elapsed());
    Ok(())
}

/// A target without the x86 kernels: the portable paths must build there.
const PORTABLE_TARGET: &str = "aarch64-unknown-linux-gnu";

/// `cargo clippy` of the kernels with all their targets for [`PORTABLE_TARGET`], which
/// compiles only the portable paths. No optional feature is on, and clippy lints the
/// workspace crates the kernels build on (`symshape`, `symshape-view`) as well, so this is
/// also the lint of the three libraries as a crate that depends on them without features
/// builds them (the workspace's own builds turn every feature on).
fn portable_clippy() -> Vec<&'static str> {
    let args: &[&[&'static str]] = &[
        &[
            "clippy",
            "--package",
            "symshape-kernels",
            "--all-targets",
            "--target",
            PORTABLE_TARGET,
            "--locked",
        ],
        DENY_WARNINGS,
    ];
    args.concat()
}

/// The featureless lint of the three libraries on the host, where the portable target
/// cannot be added.
fn featureless_clippy() -> Vec<&'static str> {
    let args: &[&[&'static str]] = &[
        &[
            "clippy",
            "--package",
            "symshape",
            "--package",
            "symshape-view",
            "--package",
            "symshape-kernels",
            "--locked",
        ],
        DENY_WARNINGS,
    ];
    args.concat()
}

/// [`portable_clippy`], after adding the target's standard library with `rustup` when
/// missing. Where it cannot be added (no `rustup`, no network) the step says so and runs
/// [`featureless_clippy`] on the host instead, since nothing of the project is at fault.
fn cross_check(root: &Path) -> Result<(), String> {
    let t = Instant::now();
    eprintln!("xtask ci: portable target ({PORTABLE_TARGET}), no optional features");
    let added = Command::new("rustup")
        .args(["target", "add", PORTABLE_TARGET])
        .current_dir(root)
        .status();
    if added.is_ok_and(|s| s.success()) {
        run_cargo(root, &portable_clippy(), &[])?;
        eprintln!("xtask ci: portable target ok in {:.1?}", t.elapsed());
    } else {
        eprintln!(
            "xtask ci: portable target skipped: `rustup target add {PORTABLE_TARGET}` failed; \
             the libraries without optional features are linted on the host"
        );
        run_cargo(root, &featureless_clippy(), &[])?;
        eprintln!("xtask ci: no optional features ok in {:.1?}", t.elapsed());
    }
    Ok(())
}

/// Removes the sources cargo unpacked from the local registries of earlier `cargo package`
/// runs, for this workspace's packages only.
///
/// `cargo package --workspace` verifies each crate against the packaged crates of the others,
/// served from a local registry under the target directory. Cargo unpacks them into
/// `$CARGO_HOME/registry/src/-<hash>/NAME-VERSION`, where the hash depends only on that
/// registry's path, and reuses an unpacked directory it finds there. A run from the same path
/// at the same version would therefore compile an earlier run's sources. Registries with a
/// host (crates.io and others) unpack into directories named after the host, which are left
/// alone.
fn forget_unpacked_members(root: &Path) -> Result<(), String> {
    let Some(src) = cargo_home().map(|h| h.join("registry").join("src")) else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(&src) else {
        return Ok(());
    };
    let names = member_names(root)?;
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        let Ok(unpacked) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for dir in unpacked.flatten() {
            let file_name = dir.file_name();
            let file_name = file_name.to_string_lossy();
            let ours = names.iter().any(|n| {
                file_name
                    .strip_prefix(n.as_str())
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            });
            if ours {
                std::fs::remove_dir_all(dir.path())
                    .map_err(|e| format!("cannot remove {}: {e}", dir.path().display()))?;
            }
        }
    }
    Ok(())
}

/// `$CARGO_HOME`, or `~/.cargo` when it is unset.
fn cargo_home() -> Option<PathBuf> {
    env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
}

/// The package names of the workspace members: `crates/*`, `xtask` and `benches`.
fn member_names(root: &Path) -> Result<Vec<String>, String> {
    Ok(member_manifests(root)?
        .into_iter()
        .map(|(name, _)| name)
        .collect())
}

/// The package name and manifest text of every workspace member.
fn member_manifests(root: &Path) -> Result<Vec<(String, String)>, String> {
    let crates = root.join("crates");
    let entries =
        std::fs::read_dir(&crates).map_err(|e| format!("cannot list {}: {e}", crates.display()))?;
    let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    dirs.push(root.join("xtask"));
    dirs.push(root.join("benches"));
    let mut members = Vec::new();
    for dir in dirs {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let name = manifest.lines().find_map(|l| {
            let value = l.trim().strip_prefix("name")?.trim().strip_prefix('=')?;
            Some(value.trim().trim_matches('"').to_owned())
        });
        members.extend(name.map(|n| (n, manifest)));
    }
    Ok(members)
}

fn bench(extra: &[String]) -> Result<(), String> {
    let root = project_root();
    let mut args: Vec<&str> = vec!["bench", "--package", "benches", "--bench", "kernels"];
    if !extra.is_empty() {
        args.push("--");
        args.extend(extra.iter().map(String::as_str));
    }
    run_cargo(&root, &args, &[])
}

/// Builds `symshape-gpu-bench` in release and runs it with `extra`.
fn gpu_bench(extra: &[String]) -> Result<(), String> {
    let root = project_root();
    run_cargo(
        &root,
        &[
            "build",
            "--release",
            "--package",
            "benches",
            "--bin",
            "symshape-gpu-bench",
        ],
        &[],
    )?;
    let exe = root.join("target/release/symshape-gpu-bench");
    eprintln!("xtask gpu-bench: {}", exe.display());
    let status = Command::new(&exe)
        .args(extra)
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("symshape-gpu-bench failed with {status}"))
    }
}

fn fuzz(args: &[String]) -> Result<(), String> {
    let (targets, seconds): (Vec<&str>, &str) = match args {
        [] => (FUZZ_TARGETS.to_vec(), "60"),
        [t] if FUZZ_TARGETS.contains(&t.as_str()) => (vec![t.as_str()], "60"),
        [t, s] if FUZZ_TARGETS.contains(&t.as_str()) && s.parse::<u64>().is_ok() => {
            (vec![t.as_str()], s.as_str())
        }
        _ => {
            return Err(format!(
                "fuzz: expected [TARGET] [SECONDS] with TARGET one of {FUZZ_TARGETS:?}"
            ))
        }
    };
    let dir = project_root().join("fuzz");
    let max_time = format!("-max_total_time={seconds}");
    for t in targets {
        eprintln!("xtask fuzz: {t} for {seconds} s");
        // A target's dictionary (its statement keywords, for the runner) lies beside it.
        let dict = format!("{t}.dict");
        let mut flags = vec![max_time.clone()];
        if dir.join(&dict).exists() {
            flags.push(format!("-dict={dict}"));
        }
        let status = Command::new("cargo")
            .args(["+nightly", "fuzz", "run", t, "--"])
            .args(&flags)
            .current_dir(&dir)
            .status()
            .map_err(|e| format!("cannot run `cargo +nightly fuzz`: {e}"))?;
        if !status.success() {
            return Err(format!(
                "fuzz target `{t}` failed with {status}; see fuzz/artifacts/{t}/"
            ));
        }
    }
    Ok(())
}

fn run_cargo(root: &Path, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(&cargo)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run `{cargo}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed with {status}", args.join(" ")))
    }
}

fn project_root() -> PathBuf {
    // xtask lives one level below the workspace root.
    let manifest = env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    Path::new(&manifest)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `--features` of a step, if it names any.
    fn features(step: &Step) -> Option<&str> {
        let at = step.args.iter().position(|&a| a == "--features")?;
        step.args.get(at + 1).copied()
    }

    /// The steps that build the workspace in the test profile turn on the same features, so
    /// that the benchmarks' compile reuses the test build's libraries instead of building
    /// them again with other features; clippy lints that same feature set.
    #[test]
    fn workspace_builds_share_one_feature_set() {
        let steps = ci_steps();
        let named = |name: &str| {
            steps
                .iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("no step `{name}`"))
        };
        for name in ["clippy", "tests", "doc tests", "benches compile"] {
            let step = named(name);
            assert_eq!(features(step), Some(FEATURES), "step `{name}`");
            assert!(step.args.contains(&"--workspace"), "step `{name}`");
        }
    }

    /// The portable lint and its host fallback both lint the three libraries with every
    /// optional feature off: the kernels and the crates below them, no `--features`.
    #[test]
    fn the_featureless_lints_turn_no_feature_on() {
        for args in [portable_clippy(), featureless_clippy()] {
            assert!(!args.contains(&"--features"), "{args:?}");
            assert!(!args.contains(&"--workspace"), "{args:?}");
            assert!(args.contains(&"symshape-kernels"), "{args:?}");
            assert!(args.ends_with(DENY_WARNINGS), "{args:?}");
        }
        assert!(portable_clippy().contains(&PORTABLE_TARGET));
    }

    /// The package step leaves out exactly the members that are not published.
    #[test]
    fn the_package_step_leaves_out_the_unpublished_members() {
        let mut unpublished: Vec<String> = member_manifests(&project_root())
            .expect("the members")
            .into_iter()
            .filter(|(_, text)| text.lines().any(|l| l.replace(' ', "") == "publish=false"))
            .map(|(name, _)| name)
            .collect();
        unpublished.sort();
        assert_eq!(unpublished, UNPUBLISHED);
        let package = ci_steps()
            .into_iter()
            .find(|s| s.name == "package")
            .expect("a package step");
        for name in UNPUBLISHED {
            assert!(
                package.args.windows(2).any(|w| w == ["--exclude", name]),
                "{name}"
            );
        }
    }

    /// Every feature in [`FEATURES`] is declared by its package.
    #[test]
    fn the_features_exist() {
        let root = project_root();
        for feature in FEATURES.split(',') {
            let (package, name) = feature.split_once('/').expect("package/feature");
            let manifest = root.join("crates").join(package).join("Cargo.toml");
            let text = std::fs::read_to_string(&manifest)
                .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
            let features = text
                .split("[features]")
                .nth(1)
                .unwrap_or_else(|| panic!("{package} declares no features"));
            let section = features.split("\n[").next().unwrap_or("");
            assert!(
                section
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{name} ="))),
                "{package} does not declare `{name}`"
            );
        }
    }
}
