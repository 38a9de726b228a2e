//! The OpenCL platform the codegen tests run their OpenCL kernels on: POCL, a CPU
//! implementation, installed from Debian's packages where missing when `ci` may install
//! system packages (as root, or under `CI=true` with `sudo`).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The Debian packages: POCL's ICD (the platform) and the ICD loader's headers and
/// `libOpenCL.so` (what the test's host program compiles and links against).
pub const PACKAGES: &[&str] = &["pocl-opencl-icd", "ocl-icd-opencl-dev"];

/// Whether an ICD is registered and the headers and library are present.
fn present() -> bool {
    let icd = std::fs::read_dir("/etc/OpenCL/vendors").is_ok_and(|d| {
        d.flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "icd"))
    });
    let header = Path::new("/usr/include/CL/cl.h").exists();
    let lib = Command::new("ldconfig")
        .arg("-p")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("libOpenCL.so "))
        || dpkg_installed(PACKAGES[1]);
    icd && header && lib
}

fn dpkg_installed(package: &str) -> bool {
    Command::new("dpkg")
        .args(["-s", package])
        .output()
        .is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout).contains("install ok installed")
        })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Makes sure the OpenCL tests can run: nothing when the platform is present; else, as
/// root or under `CI=true`, `apt-get install -y --no-install-recommends` of [`PACKAGES`]
/// (after `apt-get update` when the first try fails), timed; else a note that the OpenCL
/// tests will be skipped. Fails only under `CI=true`, where the tests need the platform.
pub fn ensure() -> Result<(), String> {
    if present() {
        eprintln!("xtask ci: OpenCL platform present");
        return Ok(());
    }
    let root = is_root();
    if !root && !crate::in_ci() {
        eprintln!(
            "xtask ci: no OpenCL platform; the OpenCL tests will be skipped \
             (install with `sudo apt-get install --no-install-recommends {}`)",
            PACKAGES.join(" ")
        );
        return Ok(());
    }
    let t = Instant::now();
    eprintln!("xtask ci: installing {}", PACKAGES.join(" "));
    let ok = apt(root, &["install", "-y", "--no-install-recommends"])
        || (apt(root, &["update"]) && apt(root, &["install", "-y", "--no-install-recommends"]));
    if ok && present() {
        eprintln!("xtask ci: OpenCL platform installed in {:.1?}", t.elapsed());
        return Ok(());
    }
    let msg = format!(
        "cannot install the OpenCL platform ({}) with apt-get",
        PACKAGES.join(" ")
    );
    if crate::in_ci() {
        return Err(msg);
    }
    eprintln!("xtask ci: {msg}; the OpenCL tests will be skipped");
    Ok(())
}

/// `apt-get ARGS` (with [`PACKAGES`] after `install`), through `sudo -n` unless root.
fn apt(root: bool, args: &[&str]) -> bool {
    let mut cmd = if root {
        Command::new("apt-get")
    } else {
        let mut c = Command::new("sudo");
        c.args(["-n", "apt-get"]);
        c
    };
    cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    if args.first() == Some(&"install") {
        cmd.args(PACKAGES);
    }
    cmd.status().is_ok_and(|s| s.success())
}
