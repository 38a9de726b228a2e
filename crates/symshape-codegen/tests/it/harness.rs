//! Compiling emitted C with the system compiler and running it over many inputs.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The flags every emitted unit must compile with.
pub const CFLAGS: &[&str] = &["-std=c99", "-O2", "-Wall", "-Werror"];

/// A driver calling the two entry points of a materialize unit, one input record at a time
/// from stdin: `nsyms syms.. srclen src.. pad dstlen`; prints the guard result, then the
/// output values when it is 0.
const DRIVER: &str = r#"#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int shapetrace_guards(const int64_t *syms);
void shapetrace_materialize(const int64_t *src, int64_t *dst, const int64_t *syms, int64_t pad);

static int64_t next(void) {
    long long v;
    if (scanf("%lld", &v) != 1) exit(0);
    return (int64_t)v;
}

static int64_t *take(int64_t n) {
    int64_t k;
    int64_t *p = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!p) exit(2);
    for (k = 0; k < n; ++k) p[k] = next();
    return p;
}

int main(void) {
    for (;;) {
        int64_t k, ns, ls, ld, pad;
        int64_t *syms, *src, *dst;
        int g;
        ns = next();
        syms = take(ns);
        ls = next();
        src = take(ls);
        pad = next();
        ld = next();
        dst = malloc(sizeof(int64_t) * (size_t)(ld + 1));
        if (!dst) exit(2);
        for (k = 0; k < ld; ++k) dst[k] = INT64_MIN;
        g = shapetrace_guards(syms);
        printf("%d", g);
        if (g == 0) {
            shapetrace_materialize(src, dst, syms, pad);
            for (k = 0; k < ld; ++k) printf(" %lld", (long long)dst[k]);
        }
        printf("\n");
        free(syms);
        free(src);
        free(dst);
    }
}
"#;

/// Whether `cc` runs; the first call prints why tests skip when it does not.
pub fn have_cc() -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    *HAVE.get_or_init(|| {
        let ok = Command::new("cc")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("skipping compiled-C tests: no C compiler (`cc`) found on PATH");
        }
        ok
    })
}

/// A compiled unit plus driver in a temporary directory, removed on drop.
pub struct Compiled {
    dir: PathBuf,
    exe: PathBuf,
}

impl Drop for Compiled {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One run of the kernel.
pub struct Record {
    /// One value per declared symbol.
    pub syms: Vec<i64>,
    /// The source buffer.
    pub src: Vec<i64>,
    /// The pad value.
    pub pad: i64,
    /// Output length.
    pub dst_len: usize,
}

fn temp_dir() -> PathBuf {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let k = COUNT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("symshape-codegen-{}-{k}", std::process::id()))
}

/// Compiles `unit` (a materialize unit with prefix `shapetrace`) with the driver, or
/// returns the compiler's message.
pub fn compile(unit: &str) -> Result<Compiled, String> {
    compile_with(unit, DRIVER)
}

/// Compiles `unit` with `driver`, or returns the compiler's message.
pub fn compile_with(unit: &str, driver: &str) -> Result<Compiled, String> {
    let dir = temp_dir();
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let compiled = Compiled {
        exe: dir.join("run"),
        dir,
    };
    let kernel = compiled.dir.join("kernel.c");
    let main = compiled.dir.join("main.c");
    std::fs::write(&kernel, unit).map_err(|e| e.to_string())?;
    std::fs::write(&main, driver).map_err(|e| e.to_string())?;
    let out = Command::new("cc")
        .args(CFLAGS)
        .arg(&kernel)
        .arg(&main)
        .arg("-o")
        .arg(&compiled.exe)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "cc failed:\n{}\n--- unit ---\n{unit}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(compiled)
}

impl Compiled {
    /// Runs the program on `input` and returns what it prints.
    pub fn run_text(&self, input: &str) -> String {
        let mut child = Command::new(&self.exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the compiled driver starts");
        child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(input.as_bytes())
            .expect("the driver reads its input");
        let out = child.wait_with_output().expect("the driver finishes");
        assert!(out.status.success(), "the driver failed: {:?}", out.status);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs every record; for each, the guard result and (when 0) the output.
    pub fn run(&self, records: &[Record]) -> Vec<(i64, Vec<i64>)> {
        let mut input = String::new();
        for r in records {
            let nums = |v: &[i64]| {
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            input.push_str(&format!(
                "{} {}\n{} {}\n{} {}\n",
                r.syms.len(),
                nums(&r.syms),
                r.src.len(),
                nums(&r.src),
                r.pad,
                r.dst_len
            ));
        }
        self.run_text(&input)
            .lines()
            .map(|l| {
                let mut it = l
                    .split_whitespace()
                    .map(|t| t.parse::<i64>().expect("a number"));
                let g = it.next().expect("a guard result");
                (g, it.collect())
            })
            .collect()
    }
}
