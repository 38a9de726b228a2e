//! Running OpenCL programs through the host program `opencl_host.c`, compiled with `cc` and
//! linked with `-lOpenCL`: one process builds many programs and launches each at many
//! bindings. Standard library only, so that the benchmark binary includes the same file.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The host program's source.
pub const HOST_C: &str = include_str!("opencl_host.c");

/// One launch of the last program built.
#[derive(Clone, Debug)]
pub struct Run {
    /// Bytes per element.
    pub elem_size: usize,
    /// Work-items along each axis (`clEnqueueNDRangeKernel`'s global size).
    pub global: [u64; 3],
    /// Work-items per work-group along each axis.
    pub local: [u32; 3],
    /// The symbols' values in declaration order.
    pub syms: Vec<i64>,
    /// The pad value's bytes.
    pub pad: Vec<u8>,
    /// The source buffer's bytes.
    pub src: Vec<u8>,
    /// The destination's length in bytes.
    pub dst_bytes: usize,
}

/// An OpenCL C program and its launches.
#[derive(Clone, Debug)]
pub struct Program {
    /// The source.
    pub source: String,
    /// The launches, in order.
    pub runs: Vec<Run>,
}

/// The result of one program: its build log where the build failed, else one result per
/// launch (the destination's bytes, or the failing call and its error code).
pub type ProgramResult = Result<Vec<Result<Vec<u8>, String>>, String>;

/// The compiled host program.
pub struct Host {
    exe: PathBuf,
}

impl Host {
    /// Compiles the host program into `dir` (once per content: a later call finds it
    /// there) and checks that it finds an OpenCL platform with a device. The error says
    /// what is missing: a C compiler, the OpenCL headers or library, or a platform.
    pub fn new(dir: &Path) -> Result<Host, String> {
        let mut h = DefaultHasher::new();
        HOST_C.hash(&mut h);
        let exe = dir.join(format!("opencl-host-{:016x}", h.finish()));
        if !exe.exists() {
            compile(dir, &exe)?;
        }
        let host = Host { exe };
        host.probe()?;
        Ok(host)
    }

    /// The platform and device the host program runs on.
    pub fn probe(&self) -> Result<String, String> {
        let out = self.talk(b"probe\n".to_vec())?;
        let line = out.lines().next().unwrap_or_default();
        match line.strip_prefix("platform ") {
            Some(rest) => Ok(rest.to_string()),
            None => Err(format!("the OpenCL host program found no device: {line}")),
        }
    }

    /// Builds and runs every program, in one process.
    pub fn run(&self, programs: &[Program]) -> Result<Vec<ProgramResult>, String> {
        let out = self.talk(input(programs))?;
        let mut lines = out.lines();
        let mut res = Vec::with_capacity(programs.len());
        for p in programs {
            let head = lines
                .next()
                .ok_or("the OpenCL host program stopped early")?;
            if head != "built" {
                let mut log = vec![head.to_string()];
                for l in lines.by_ref() {
                    if l == "." {
                        break;
                    }
                    log.push(l.to_string());
                }
                // The host program still answers each run (`err 0 no-program`): those
                // lines belong to this program, not to the next.
                for _ in &p.runs {
                    lines.next().ok_or_else(|| {
                        format!(
                            "the OpenCL host program stopped early after a failed build:\n{}",
                            log.join("\n")
                        )
                    })?;
                }
                res.push(Err(log.join("\n")));
                continue;
            }
            let mut runs = Vec::with_capacity(p.runs.len());
            for r in &p.runs {
                let line = lines
                    .next()
                    .ok_or("the OpenCL host program stopped early")?;
                runs.push(match line.strip_prefix("ok ") {
                    Some(hex) => unhex(hex, r.dst_bytes),
                    None => Err(line.to_string()),
                });
            }
            res.push(Ok(runs));
        }
        Ok(res)
    }

    /// Writes `input` to the host program (from a thread, so that neither side blocks on
    /// a full pipe) and returns what it printed.
    fn talk(&self, input: Vec<u8>) -> Result<String, String> {
        let mut child = Command::new(&self.exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.exe.display()))?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let mut out = String::new();
        BufReader::new(child.stdout.take().ok_or("no stdout")?)
            .read_to_string(&mut out)
            .map_err(|e| e.to_string())?;
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let status = child.wait().map_err(|e| e.to_string())?;
        let _ = writer.join();
        if !status.success() {
            let first = BufReader::new(out.as_bytes())
                .lines()
                .next()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(format!(
                "the OpenCL host program failed ({status}): {first}{}{err}",
                if err.is_empty() { "" } else { "\n" }
            ));
        }
        Ok(out)
    }
}

/// `cc -O2 -Wall -Werror opencl_host.c -lOpenCL`, into `exe` by way of a temporary name.
fn compile(dir: &Path, exe: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tag = format!("{}-{k}", std::process::id());
    let src = dir.join(format!("opencl-host-{tag}.c"));
    let tmp = dir.join(format!("opencl-host-{tag}.tmp"));
    std::fs::write(&src, HOST_C).map_err(|e| e.to_string())?;
    let out = Command::new("cc")
        .args(["-std=c99", "-O2", "-Wall", "-Werror"])
        .arg(&src)
        .arg("-o")
        .arg(&tmp)
        .arg("-lOpenCL")
        .output()
        .map_err(|e| format!("cannot run `cc` for the OpenCL host program: {e}"))?;
    let _ = std::fs::remove_file(&src);
    if !out.status.success() {
        return Err(format!(
            "cannot compile the OpenCL host program (are the OpenCL headers and \
             libOpenCL installed? Debian: ocl-icd-opencl-dev):\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::rename(&tmp, exe).map_err(|e| e.to_string())
}

/// The host program's input for `programs`.
fn input(programs: &[Program]) -> Vec<u8> {
    let mut s = Vec::new();
    for p in programs {
        s.extend_from_slice(format!("program {}\n", p.source.len()).as_bytes());
        s.extend_from_slice(p.source.as_bytes());
        s.push(b'\n');
        for r in &p.runs {
            let [g0, g1, g2] = r.global;
            let [l0, l1, l2] = r.local;
            let mut line = format!(
                "run {} {g0} {g1} {g2} {l0} {l1} {l2} {}",
                r.elem_size,
                r.syms.len()
            );
            for v in &r.syms {
                line.push_str(&format!(" {v}"));
            }
            line.push_str(&format!(
                " {} {} {} {}\n",
                hex(&r.pad),
                r.src.len(),
                hex(&r.src),
                r.dst_bytes
            ));
            s.extend_from_slice(line.as_bytes());
        }
    }
    s
}

pub fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".to_string();
    }
    let digits = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(char::from(digits[usize::from(b >> 4)]));
        s.push(char::from(digits[usize::from(b & 15)]));
    }
    s
}

pub fn unhex(text: &str, len: usize) -> Result<Vec<u8>, String> {
    if text == "-" {
        return Ok(Vec::new());
    }
    let t = text.as_bytes();
    if t.len() != 2 * len {
        return Err(format!("{} hex digits for {len} bytes", t.len()));
    }
    let val = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        _ => Err(format!("bad hex digit {c}")),
    };
    t.chunks(2)
        .map(|p| Ok(val(p[0])? * 16 + val(p[1])?))
        .collect()
}
