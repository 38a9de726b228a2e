//! CUDA kernels run on the CPU: units compiled by `g++ -std=c++17` after `cuda_emu.h`
//! (one OS thread per CUDA thread of a block, `__syncthreads` a barrier, `__shared__`
//! arrays function statics, blocks in order), many units in one program, each in a
//! namespace of its own.

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::harness::{runs, ubsan_flags};
use crate::opencl_host::{hex, unhex};

/// The emulation header.
const HEADER: &str = include_str!("cuda_emu.h");

/// One launch of a unit.
pub struct EmuRun {
    /// Blocks along each axis.
    pub grid: [u64; 3],
    /// Threads per block along each axis.
    pub block: [u32; 3],
    /// The symbols' values in declaration order.
    pub syms: Vec<i64>,
    /// The pad value's bytes.
    pub pad: Vec<u8>,
    /// The source buffer's bytes.
    pub src: Vec<u8>,
    /// The destination's length in bytes.
    pub dst_bytes: usize,
}

/// A CUDA unit of `render_cuda` and its launches.
pub struct EmuUnit {
    /// The source.
    pub source: String,
    /// The launches.
    pub runs: Vec<EmuRun>,
}

/// Whether `g++` runs; the first call prints why tests skip when it does not.
pub fn have_gxx() -> bool {
    static HAVE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAVE.get_or_init(|| runs("g++", "skipping the emulated CUDA tests: no `g++` on PATH"))
}

/// The element type `T` of `shapetrace_materialize(const T *__restrict__ src, ...)`.
fn elem_type(source: &str) -> Result<&str, String> {
    let at = source
        .find("shapetrace_materialize(const ")
        .ok_or("no shapetrace_materialize(const T *__restrict__ src, ...)")?;
    let rest = &source[at + "shapetrace_materialize(const ".len()..];
    let end = rest
        .find("*__restrict__ src")
        .ok_or("no `*__restrict__ src` parameter")?;
    Ok(rest[..end].trim())
}

/// Unit `k` in the program: the source (its `#include` lines dropped: the header stands
/// for them) in a namespace of its own with the kernel renamed, and a launcher with
/// untyped pointers.
fn unit_text(k: usize, source: &str) -> Result<String, String> {
    let t = elem_type(source)?;
    let body: String = source
        .lines()
        .filter(|l| !l.trim_start().starts_with("#include"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace("shapetrace_materialize", &format!("k{k}_materialize"));
    Ok(format!(
        "namespace u{k} {{\n{body}}}\n\
         static void k{k}_launch(const void *src, void *dst, const long long *syms,\n\
         const void *pad, dim3 grid, dim3 block) {{\n\
         emu_launch(grid, block, [=] {{ u{k}::k{k}_materialize((const {t} *)src, ({t} *)dst, \
         syms, *(const {t} *)pad); }});\n}}\n"
    ))
}

/// The end of the program, after the units: reads `run CASE GX GY GZ BX BY BZ NSYMS SYM.. PADHEX SRCBYTES
/// SRCHEX DSTBYTES` lines and prints `ok DSTHEX` for each (the destination starting as
/// `0xff` bytes).
fn main_text(n: usize) -> String {
    let mut s = String::from(
        "typedef void (*launch_fn)(const void *, void *, const long long *, const void *, dim3, dim3);\n",
    );
    let list: Vec<String> = (0..n).map(|k| format!("k{k}_launch")).collect();
    s.push_str(&format!(
        "static const launch_fn launches[] = {{{}}};\n",
        list.join(", ")
    ));
    s.push_str(
        r#"
static std::vector<unsigned char> bytes(size_t n) {
    std::string t;
    std::cin >> t;
    std::vector<unsigned char> v(n ? n : 1);
    for (size_t k = 0; k < n; ++k) v[k] = (unsigned char)std::stoi(t.substr(2 * k, 2), nullptr, 16);
    return v;
}

int main() {
    std::string cmd;
    while (std::cin >> cmd) {
        size_t c, n, lsrc, ldst, esize;
        dim3 g, b;
        std::cin >> c >> esize >> g.x >> g.y >> g.z >> b.x >> b.y >> b.z >> n;
        std::vector<long long> syms(n + 1);
        for (size_t k = 0; k < n; ++k) std::cin >> syms[k];
        std::vector<unsigned char> pad = bytes(esize);
        std::cin >> lsrc;
        std::vector<unsigned char> src = bytes(lsrc);
        std::cin >> ldst;
        std::vector<unsigned char> dst(ldst ? ldst : 1, 0xff);
        launches[c](src.data(), dst.data(), syms.data(), pad.data(), g, b);
        std::printf("ok ");
        if (ldst == 0) std::printf("-");
        for (size_t k = 0; k < ldst; ++k) std::printf("%02x", dst[k]);
        std::printf("\n");
        std::fflush(stdout);
    }
}
"#,
    );
    s
}

/// Compiles every unit into one program, one translation unit, with `g++ -std=c++17 -O0
/// -Wall` (and the undefined-behaviour sanitizer where `cc` links it) and runs every
/// launch: per unit, one destination per launch.
pub fn run_emulated(units: &[EmuUnit], elem_sizes: &[usize]) -> Result<Vec<Vec<Vec<u8>>>, String> {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let tag = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("symshape-cuda-emu-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let res = build_and_run(&dir, units, elem_sizes);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

fn build_and_run(
    dir: &std::path::Path,
    units: &[EmuUnit],
    elem_sizes: &[usize],
) -> Result<Vec<Vec<Vec<u8>>>, String> {
    std::fs::write(dir.join("cuda_emu.h"), HEADER).map_err(|e| e.to_string())?;
    let exe = dir.join("run");
    let mut program = String::from(
        "#include \"cuda_emu.h\"\n#include <cstdio>\n#include <iostream>\n#include <string>\n",
    );
    for (k, u) in units.iter().enumerate() {
        program.push_str(&unit_text(k, &u.source)?);
    }
    program.push_str(&main_text(units.len()));
    let main = dir.join("main.cpp");
    std::fs::write(&main, &program).map_err(|e| e.to_string())?;
    let out = Command::new("g++")
        .args([
            "-std=c++17",
            "-O0",
            "-Wall",
            "-Werror",
            "-Wno-unused-variable",
            "-pthread",
        ])
        .args(ubsan_flags())
        .arg("-I")
        .arg(dir)
        .arg(main)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "g++ failed:\n{}\n--- program ---\n{program}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut input = String::new();
    for (k, u) in units.iter().enumerate() {
        for r in &u.runs {
            let [gx, gy, gz] = r.grid;
            let [bx, by, bz] = r.block;
            input.push_str(&format!(
                "run {k} {} {gx} {gy} {gz} {bx} {by} {bz} {}",
                elem_sizes[k],
                r.syms.len()
            ));
            for v in &r.syms {
                input.push_str(&format!(" {v}"));
            }
            input.push_str(&format!(
                " {} {} {} {}\n",
                hex(&r.pad),
                r.src.len(),
                hex(&r.src),
                r.dst_bytes
            ));
        }
    }
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(format!(
            "the emulated CUDA program failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let mut res = Vec::new();
    for u in units {
        let mut runs = Vec::new();
        for r in &u.runs {
            let line = lines
                .next()
                .ok_or("the emulated CUDA program stopped early")?;
            let hexed = line.strip_prefix("ok ").ok_or(format!("bad line {line}"))?;
            runs.push(unhex(hexed, r.dst_bytes)?);
        }
        res.push(runs);
    }
    Ok(res)
}

/// A tiled transpose written by hand with `render_cuda`'s signature: the emulation's own
/// check (blocks of 8x8 threads, a shared tile, `__syncthreads`, a 64-bit `syms`).
const TRANSPOSE_CU: &str = r#"// index: i32
#include <cuda_fp16.h>
extern "C" __global__ void shapetrace_materialize(const float *__restrict__ src, float *__restrict__ dst, const long long *syms, float pad) {
    __shared__ float tile[8][9];
    long long n = syms[0], m = syms[1];
    long long c = blockIdx.x * 8, r = blockIdx.y * 8;
    int x = threadIdx.x, y = threadIdx.y;
    (void)pad;
    if (r + y < n && c + x < m) tile[y][x] = src[(r + y) * m + c + x];
    __syncthreads();
    if (c + y < m && r + x < n) dst[(c + y) * n + r + x] = tile[x][y];
}
"#;

#[test]
fn the_emulation_runs_a_tiled_kernel() {
    if !have_gxx() {
        return;
    }
    let sizes = [(1i64, 1i64), (8, 8), (9, 21), (0, 3)];
    let mut runs = Vec::new();
    let mut want = Vec::new();
    for &(n, m) in &sizes {
        let src: Vec<f32> = (0..n * m).map(|v| v as f32).collect();
        let mut t = vec![0f32; src.len()];
        for i in 0..n {
            for j in 0..m {
                t[usize::try_from(j * n + i).expect("small")] =
                    src[usize::try_from(i * m + j).expect("small")];
            }
        }
        let blocks = |e: i64| u64::try_from(e).expect("non-negative").div_ceil(8);
        runs.push(EmuRun {
            grid: [blocks(m), blocks(n), 1],
            block: [8, 8, 1],
            syms: vec![n, m],
            pad: (-1f32).to_le_bytes().to_vec(),
            src: src.iter().flat_map(|v| v.to_le_bytes()).collect(),
            dst_bytes: 4 * t.len(),
        });
        want.push(t.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
    }
    let unit = EmuUnit {
        source: TRANSPOSE_CU.to_string(),
        runs,
    };
    let got = run_emulated(&[unit], &[4]).unwrap_or_else(|e| panic!("{e}"));
    for ((g, w), size) in got[0].iter().zip(&want).zip(sizes) {
        assert_eq!(g, w, "size {size:?}");
    }
}
