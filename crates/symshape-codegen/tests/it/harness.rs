//! Compiling emitted C with the system compiler and running it over many inputs.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The flags every emitted unit must compile with.
pub const CFLAGS: &[&str] = &["-std=c99", "-O2", "-Wall", "-Werror"];

/// The driver programs' readers of stdin: `next` reads one integer (exits at the end of
/// the input), `take` reads `n` of them into a new array.
macro_rules! c_readers {
    () => {
        r#"static int64_t next(void) {
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
"#
    };
}

/// The drivers' reading of one record after its prefix: `nsyms syms.. srclen src.. pad
/// dstlen` into `syms`, `src`, `pad` and a new `dst` of `ld` elements, each `INT64_MIN`.
macro_rules! c_read_record {
    () => {
        r#"        ns = next();
        syms = take(ns);
        ls = next();
        src = take(ls);
        pad = next();
        ld = next();
        dst = malloc(sizeof(int64_t) * (size_t)(ld + 1));
        if (!dst) exit(2);
        for (k = 0; k < ld; ++k) dst[k] = INT64_MIN;
"#
    };
}

/// A driver calling the two entry points of a materialize unit, one input record at a time
/// from stdin: `nsyms syms.. srclen src.. pad dstlen`; prints the guard result, then the
/// output values when it is 0.
const DRIVER: &str = concat!(
    r#"#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int shapetrace_guards(const int64_t *syms);
void shapetrace_materialize(const int64_t *src, int64_t *dst, const int64_t *syms, int64_t pad);

"#,
    c_readers!(),
    r#"
int main(void) {
    for (;;) {
        int64_t k, ns, ls, ld, pad;
        int64_t *syms, *src, *dst;
        int g;
"#,
    c_read_record!(),
    r#"        g = shapetrace_guards(syms);
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
"#
);

/// The flags that make undefined behaviour abort the program, where `cc` supports them.
pub const UBSAN: &[&str] = &["-fsanitize=undefined", "-fno-sanitize-recover=all"];

/// [`UBSAN`] when `cc` builds and links a program with it; otherwise nothing, and the
/// first call says so.
pub fn ubsan_flags() -> &'static [&'static str] {
    static OK: OnceLock<bool> = OnceLock::new();
    let ok = *OK.get_or_init(|| {
        let dir = temp_dir();
        let built = std::fs::create_dir_all(&dir).is_ok()
            && std::fs::write(dir.join("t.c"), "int main(void) { return 0; }\n").is_ok()
            && Command::new("cc")
                .args(UBSAN)
                .arg(dir.join("t.c"))
                .arg("-o")
                .arg(dir.join("t"))
                .output()
                .is_ok_and(|o| o.status.success());
        let _ = std::fs::remove_dir_all(&dir);
        if !built {
            eprintln!("compiled-C tests run without -fsanitize=undefined: `cc` cannot link it");
        }
        built
    });
    if ok {
        UBSAN
    } else {
        &[]
    }
}

/// Whether `cc` runs; the first call prints why tests skip when it does not.
pub fn have_cc() -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    *HAVE.get_or_init(|| {
        runs(
            "cc",
            "skipping compiled-C tests: no C compiler (`cc`) found on PATH",
        )
    })
}

/// Whether `tool --version` runs; prints `skipping` when it does not.
pub fn runs(tool: &str, skipping: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("{skipping}");
    }
    ok
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

/// Compiles `unit` with `driver` ([`CFLAGS`] and [`ubsan_flags`]), or returns the
/// compiler's message.
pub fn compile_with(unit: &str, driver: &str) -> Result<Compiled, String> {
    compile_units(&[unit.to_string()], driver, ubsan_flags())
}

/// Materialize units with the prefixes `k0`, `k1`, ... (one per unit, in order) and a
/// driver that runs the records of [`Compiled::run_cases`], compiled by one `cc` call
/// with [`CFLAGS`] and [`ubsan_flags`].
pub fn compile_cases(units: &[String]) -> Result<Compiled, String> {
    let mut driver = String::from(CASES_DRIVER_HEAD);
    for k in 0..units.len() {
        driver.push_str(&format!(
            "int k{k}_guards(const int64_t *syms);\n\
             void k{k}_materialize(const int64_t *src, int64_t *dst, const int64_t *syms, int64_t pad);\n"
        ));
    }
    let list = |f: &str| {
        (0..units.len())
            .map(|k| format!("k{k}_{f}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    driver.push_str(&format!(
        "static int (*const guards[])(const int64_t *) = {{{}}};\n\
         static void (*const kernels[])(const int64_t *, int64_t *, const int64_t *, int64_t) = {{{}}};\n",
        list("guards"),
        list("materialize")
    ));
    driver.push_str(CASES_DRIVER_MAIN);
    compile_units(units, &driver, ubsan_flags())
}

/// The start of the driver of [`compile_cases`].
const CASES_DRIVER_HEAD: &str = concat!(
    r#"#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

"#,
    c_readers!(),
    r#"
"#
);

/// The main function of the driver of [`compile_cases`]: each record is
/// `case run nsyms syms.. srclen src.. pad dstlen`; it prints the guard result, then
/// (when it is 0 and `run` is 1) the output values.
const CASES_DRIVER_MAIN: &str = concat!(
    r#"
int main(void) {
    for (;;) {
        int64_t k, c, run, ns, ls, ld, pad;
        int64_t *syms, *src, *dst;
        int g;
        c = next();
        run = next();
"#,
    c_read_record!(),
    r#"        g = guards[c](syms);
        printf("%d", g);
        if (g == 0 && run) {
            kernels[c](src, dst, syms, pad);
            for (k = 0; k < ld; ++k) printf(" %lld", (long long)dst[k]);
        }
        printf("\n");
        fflush(stdout);
        free(syms);
        free(src);
        free(dst);
    }
}
"#
);

/// Compiles `units` (one file each) with `driver` by one `cc` call with [`CFLAGS`] and
/// `extra`, or returns the compiler's message.
fn compile_units(units: &[String], driver: &str, extra: &[&str]) -> Result<Compiled, String> {
    let dir = temp_dir();
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let compiled = Compiled {
        exe: dir.join("run"),
        dir,
    };
    let mut cmd = Command::new("cc");
    cmd.args(CFLAGS).args(extra);
    for (k, unit) in units.iter().enumerate() {
        let kernel = compiled.dir.join(format!("kernel{k}.c"));
        std::fs::write(&kernel, unit).map_err(|e| e.to_string())?;
        cmd.arg(kernel);
    }
    let main = compiled.dir.join("main.c");
    std::fs::write(&main, driver).map_err(|e| e.to_string())?;
    let out = cmd
        .arg(&main)
        .arg("-o")
        .arg(&compiled.exe)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "cc failed:\n{}\n--- units ---\n{}",
            String::from_utf8_lossy(&out.stderr),
            units.join("\n")
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
        assert!(
            out.status.success(),
            "the driver failed: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs the records of [`compile_cases`]: `(case, run the kernel, record)`; for each,
    /// the guard result and (when 0 and run) the output.
    pub fn run_cases(&self, records: &[(usize, bool, Record)]) -> Vec<(i64, Vec<i64>)> {
        let mut input = String::new();
        for (case, run, r) in records {
            input.push_str(&format!("{case} {} ", i32::from(*run)));
            input.push_str(&record_text(r));
        }
        parse_results(&self.run_text(&input))
    }

    /// Runs every record; for each, the guard result and (when 0) the output.
    pub fn run(&self, records: &[Record]) -> Vec<(i64, Vec<i64>)> {
        let input: String = records.iter().map(record_text).collect();
        parse_results(&self.run_text(&input))
    }
}

/// A record as the drivers read it.
fn record_text(r: &Record) -> String {
    let nums = |v: &[i64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "{} {}\n{} {}\n{} {}\n",
        r.syms.len(),
        nums(&r.syms),
        r.src.len(),
        nums(&r.src),
        r.pad,
        r.dst_len
    )
}

/// One `(guard result, output)` per line the driver printed.
fn parse_results(text: &str) -> Vec<(i64, Vec<i64>)> {
    text.lines()
        .map(|l| {
            let mut it = l
                .split_whitespace()
                .map(|t| t.parse::<i64>().expect("a number"));
            let g = it.next().expect("a guard result");
            (g, it.collect())
        })
        .collect()
}
