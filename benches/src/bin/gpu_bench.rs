//! `symshape-gpu-bench`: the CUDA kernels of `render_cuda` for the workloads of
//! `benches::gpu_workloads`, compiled at run time with NVRTC, checked element by element
//! against `symshape_kernels::materialize`, and timed against a device-to-device copy of
//! the same output bytes in the same run.
//!
//! ```text
//! symshape-gpu-bench [--cpu-check] [--runs N] [--only NAME,...] [--arch sm_XY]
//! ```
//!
//! With a CUDA driver (`libcuda`, and `libnvrtc` on the loader path) it prints one row per
//! workload: index and vector width, whether the kernel stages a tile in shared memory,
//! the median kernel time over `N` launches (default 50, after 5 warm-up launches), its
//! bandwidth (output bytes read plus written), the copy's median, their ratio and the
//! target. `--cpu-check` (the default when no CUDA driver can be loaded) needs no GPU: it
//! renders every workload in both dialects, checks the index widths, and runs the OpenCL
//! renderings at the workloads' small bindings on the machine's OpenCL platform (POCL),
//! element by element against the kernels. The exit status is 1 when a check fails (a
//! wrong element, a wrong index width, a build or launch error), not when a target is
//! missed.
//!
//! Dependencies: `cudarc` with dynamic loading, so that nothing of CUDA is needed to build
//! this binary; it is built on any machine and copied to a GPU machine.
//!
//! The launches through the CUDA driver API are `unsafe`: this binary is the one place
//! outside the kernels crate that holds `unsafe` code, each block with its `SAFETY` note.

#![deny(clippy::undocumented_unsafe_blocks)]

use std::process::ExitCode;
use std::sync::Arc;

use benches::gpu_workloads::{workloads, Workload};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use symshape::Bindings;
use symshape_codegen::{render_cuda, render_opencl, ElemType, GpuKernel, IndexWidth, Plan};
use symshape_kernels::{materialize, Element, Input};
use symshape_view::ConcreteStack;

#[path = "../opencl_host.rs"]
#[allow(dead_code)]
mod opencl_host;

type Res<T> = Result<T, String>;

/// Command-line options.
struct Args {
    cpu_check: bool,
    runs: usize,
    only: Option<Vec<String>>,
    arch: Option<String>,
}

fn parse_args() -> Res<Args> {
    let mut a = Args {
        cpu_check: false,
        runs: 50,
        only: None,
        arch: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--cpu-check" => a.cpu_check = true,
            "--runs" => {
                a.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?;
                if a.runs == 0 {
                    return Err("--runs: at least 1".into());
                }
            }
            "--only" => {
                a.only = Some(value("--only")?.split(',').map(str::to_string).collect());
            }
            "--arch" => a.arch = Some(value("--arch")?),
            "-h" | "--help" => {
                return Err(
                    "usage: symshape-gpu-bench [--cpu-check] [--runs N] [--only NAME,...] \
                     [--arch sm_XY]"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let res = parse_args().and_then(|args| {
        let mut ws = workloads()?;
        if let Some(only) = &args.only {
            ws.retain(|w| only.iter().any(|o| o == w.name));
        }
        // SAFETY: `is_culib_present` only tries to open the driver library by name.
        let driver = !args.cpu_check && unsafe { cudarc::driver::sys::is_culib_present() };
        if driver {
            gpu(&args, &ws)
        } else {
            cpu_check(&ws, args.cpu_check)
        }
    });
    match res {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("symshape-gpu-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The element type of a workload.
fn elem_of(w: &Workload) -> Res<ElemType> {
    ElemType::parse(w.elem).ok_or(format!("{}: unknown element type {}", w.name, w.elem))
}

fn width(i: IndexWidth) -> &'static str {
    match i {
        IndexWidth::I32 => "i32",
        IndexWidth::I64 => "i64",
    }
}

/// `values` bound to the workload's symbols.
fn bindings(w: &Workload, values: &[i64]) -> Res<Bindings> {
    let mut b = Bindings::new();
    for (&s, &v) in w.cx.symbols().iter().zip(values) {
        b.set(s, v).map_err(|e| format!("{}: {e}", w.name))?;
    }
    Ok(b)
}

/// The stack bound at `values` (which runs the plan's checks: `bind` succeeds exactly where
/// they hold).
fn bound(w: &Workload, values: &[i64]) -> Res<(Bindings, ConcreteStack)> {
    let b = bindings(w, values)?;
    let s = w
        .stack
        .bind(&w.cx, &b)
        .map_err(|e| format!("{}: {e}", w.name))?;
    Ok((b, s))
}

/// The kernel's launch at `b`: blocks per axis and threads per block.
fn launch_at(k: &GpuKernel, b: &Bindings) -> Res<([u64; 3], [u32; 3])> {
    let mut grid = [0u64; 3];
    for (g, e) in grid.iter_mut().zip(&k.launch.grid) {
        let v = e.eval(b).map_err(|e| e.to_string())?;
        *g = u64::try_from(v).map_err(|_| format!("a negative grid size {v}"))?;
    }
    Ok((grid, k.launch.block))
}

/// The element types the benchmark runs, with a value for each element index that
/// distinguishes most neighbours (so that a wrong index shows) and is exact in the type.
trait Elem: Element + DeviceRepr + ValidAsZeroBits {
    fn at(i: usize) -> Self;
    fn pad() -> Self;
    fn put(self, out: &mut Vec<u8>);
}

/// A 24-bit hash of `i`.
fn mix(i: usize) -> u32 {
    let x = u64::try_from(i).unwrap_or(u64::MAX);
    u32::try_from((x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) & 0xff_ffff).unwrap_or(0)
}

impl Elem for f32 {
    fn at(i: usize) -> f32 {
        // Exact: every integer below 2^24 is an f32.
        f32::from(u16::try_from(mix(i) >> 8).unwrap_or(0)) * 256.0
            + f32::from(u8::try_from(mix(i) & 255).unwrap_or(0))
    }
    fn pad() -> f32 {
        -1.0
    }
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Elem for u8 {
    fn at(i: usize) -> u8 {
        u8::try_from(mix(i) & 255).unwrap_or(0)
    }
    fn pad() -> u8 {
        255
    }
    fn put(self, out: &mut Vec<u8>) {
        out.push(self);
    }
}

fn bytes<T: Elem>(v: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for &x in v {
        x.put(&mut out);
    }
    out
}

/// The source buffer of a bound stack (its bottom level's extent) and the kernels' output.
fn source_and_expected<T: Elem>(s: &ConcreteStack) -> Res<(Vec<T>, Vec<T>)> {
    let len = match s.levels()[0].extent() {
        Some((lo, _)) if lo < 0 => return Err("a negative offset".into()),
        Some((_, hi)) => usize::try_from(hi + 1).map_err(|e| e.to_string())?,
        None => 0,
    };
    let src: Vec<T> = (0..len).map(T::at).collect();
    let want = materialize(Input::new(&src, s).pad(T::pad()))
        .map_err(|e| e.to_string())?
        .values;
    Ok((src, want))
}

/// The first element where `got` differs from `want`.
fn first_difference<T: Elem>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let k = got.iter().zip(want).position(|(a, b)| a != b)?;
    let n = got.iter().zip(want).filter(|(a, b)| a != b).count();
    Some(format!(
        "{n} elements differ; the first at {k}: {:?}, expected {:?}",
        got[k], want[k]
    ))
}

/// Renders both dialects of every workload, checks their index widths, runs the OpenCL
/// kernels at the small bindings on POCL against the kernels, and says that no GPU was
/// used. True when every check passed.
fn cpu_check(ws: &[Workload], asked: bool) -> Res<bool> {
    if !asked {
        println!("no CUDA driver could be loaded: checking on the CPU only (--cpu-check)");
    }
    let dir = std::env::temp_dir().join(format!("symshape-gpu-bench-{}", std::process::id()));
    let host = opencl_host::Host::new(&dir);
    let mut ok = true;
    println!(
        "{:<32} {:>5} {:>5} {:>6} {:>6} {:>8}  opencl at the small binding",
        "workload", "elem", "index", "vector", "tiled", "expected"
    );
    for w in ws {
        let elem = elem_of(w)?;
        let plan = Plan::materialize(&w.cx, &w.stack).map_err(|e| format!("{}: {e}", w.name))?;
        let cuda = render_cuda(&w.cx, &plan, elem).map_err(|e| format!("{}: {e}", w.name))?;
        let cl = render_opencl(&w.cx, &plan, elem).map_err(|e| format!("{}: {e}", w.name))?;
        let widths = [width(cuda.index), width(cl.index)];
        let index_ok = widths.iter().all(|&i| i == w.index);
        let run = match &host {
            Ok(h) => match elem {
                ElemType::F32 => opencl_at::<f32>(h, w, &cl),
                ElemType::U8 => opencl_at::<u8>(h, w, &cl),
                other => Err(format!("no host values for {}", other.name())),
            },
            Err(e) => Err(format!("skipped: {e}")),
        };
        let run_text = match &run {
            Ok(()) => "equal to the kernels".to_string(),
            Err(e) => e.lines().next().unwrap_or_default().to_string(),
        };
        println!(
            "{:<32} {:>5} {:>5} {:>6} {:>6} {:>8}  {run_text}",
            w.name,
            elem.name(),
            if widths[0] == widths[1] {
                widths[0].to_string()
            } else {
                format!("{}/{}", widths[0], widths[1])
            },
            format!("{}/{}", cuda.vector, cl.vector),
            yes(cuda.launch.shared_bytes > 0),
            w.index,
        );
        if !index_ok {
            println!("  index width {widths:?}, expected {}", w.index);
        }
        if let (Err(e), Ok(_)) = (&run, &host) {
            println!("  {e}");
        }
        ok &= index_ok && (run.is_ok() || host.is_err());
    }
    if let Err(e) = &host {
        println!("the OpenCL kernels were not run: {e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("no GPU was used: the CUDA kernels were rendered, not run");
    Ok(ok)
}

/// Runs the OpenCL kernel `k` of `w` at its small binding and compares with the kernels.
fn opencl_at<T: Elem>(host: &opencl_host::Host, w: &Workload, k: &GpuKernel) -> Res<()> {
    let (b, s) = bound(w, &w.small)?;
    let (src, want) = source_and_expected::<T>(&s)?;
    let (grid, block) = launch_at(k, &b)?;
    let mut global = [0u64; 3];
    for ((g, &n), &l) in global.iter_mut().zip(&grid).zip(&block) {
        *g = n * u64::from(l);
    }
    let size = std::mem::size_of::<T>();
    let program = opencl_host::Program {
        source: k.source.clone(),
        runs: vec![opencl_host::Run {
            elem_size: size,
            global,
            local: block,
            syms: w.small.clone(),
            pad: bytes(&[T::pad()]),
            src: bytes(&src),
            dst_bytes: want.len() * size,
        }],
    };
    let res = host.run(&[program])?;
    let runs = res
        .into_iter()
        .next()
        .ok_or("no result")?
        .map_err(|log| format!("the OpenCL build failed: {log}"))?;
    let got = runs.into_iter().next().ok_or("no result")??;
    if got == bytes(&want) {
        Ok(())
    } else {
        let n = got
            .chunks(size)
            .zip(bytes(&want).chunks(size))
            .filter(|(a, b)| a != b)
            .count();
        Err(format!(
            "{n} of {} elements differ from the kernels",
            want.len()
        ))
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Times and checks every workload on GPU 0. True when every check passed.
fn gpu(args: &Args, ws: &[Workload]) -> Res<bool> {
    let ctx = CudaContext::new(0).map_err(|e| format!("CUDA context: {e:?}"))?;
    let stream = ctx.default_stream();
    let arch: &'static str = match &args.arch {
        Some(a) => Box::leak(a.clone().into_boxed_str()),
        None => {
            let (major, minor) = ctx.compute_capability().map_err(|e| format!("{e:?}"))?;
            Box::leak(format!("sm_{major}{minor}").into_boxed_str())
        }
    };
    let name = ctx.name().unwrap_or_default();
    println!(
        "device: {name} ({arch}); medians of {} launches after 5 warm-up launches; \
         bandwidth = 2 x output bytes / time",
        args.runs
    );
    println!(
        "{:<32} {:>5} {:>6} {:>5} {:>10} {:>8} {:>10} {:>8} {:>6} {:>6} {:>4}",
        "workload",
        "index",
        "vector",
        "tiled",
        "time_us",
        "GB/s",
        "copy_us",
        "copy",
        "ratio",
        "target",
        "met"
    );
    let mut ok = true;
    for w in ws {
        let res = match elem_of(w)? {
            ElemType::F32 => one::<f32>(&ctx, &stream, arch, args.runs, w),
            ElemType::U8 => one::<u8>(&ctx, &stream, arch, args.runs, w),
            other => Err(format!("no host values for {}", other.name())),
        };
        match res {
            Ok(row) => {
                ok &= row.checked;
                println!("{}", row.text);
            }
            Err(e) => {
                ok = false;
                println!("{:<32} error: {e}", w.name);
            }
        }
    }
    Ok(ok)
}

/// One printed row and whether its checks passed.
struct Row {
    text: String,
    checked: bool,
}

/// Renders, compiles, checks and times one workload.
fn one<T: Elem>(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    arch: &'static str,
    runs: usize,
    w: &Workload,
) -> Res<Row> {
    let e = |e: &dyn std::fmt::Debug| format!("{e:?}");
    let elem = elem_of(w)?;
    let plan = Plan::materialize(&w.cx, &w.stack).map_err(|x| x.to_string())?;
    let k = render_cuda(&w.cx, &plan, elem).map_err(|x| x.to_string())?;
    let (b, s) = bound(w, &w.bench)?;
    let (src, want) = source_and_expected::<T>(&s)?;
    let (grid, block) = launch_at(&k, &b)?;
    let grid = grid.map(|g| u32::try_from(g).unwrap_or(u32::MAX));
    let opts = CompileOptions {
        arch: Some(arch),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(&k.source, opts)
        .map_err(|x| format!("NVRTC: {x:?}\n{}", k.source))?;
    let module = ctx.load_module(ptx).map_err(|x| e(&x))?;
    let f = module
        .load_function("shapetrace_materialize")
        .map_err(|x| e(&x))?;
    let d_src = stream.clone_htod(&src).map_err(|x| e(&x))?;
    let mut d_dst = stream
        .alloc_zeros::<T>(want.len().max(1))
        .map_err(|x| e(&x))?;
    let mut d_copy = stream
        .alloc_zeros::<T>(want.len().max(1))
        .map_err(|x| e(&x))?;
    let d_syms = stream.clone_htod(&w.bench).map_err(|x| e(&x))?;
    let pad = T::pad();
    // Static shared arrays need no launch parameter; `extern __shared__` ones do.
    let dynamic_shared = if k.source.contains("extern __shared__") {
        u32::try_from(k.launch.shared_bytes).map_err(|x| x.to_string())?
    } else {
        0
    };
    let cfg = LaunchConfig {
        grid_dim: (grid[0], grid[1], grid[2]),
        block_dim: (block[0], block[1], block[2]),
        shared_mem_bytes: dynamic_shared,
    };
    let launch = |dst: &mut cudarc::driver::CudaSlice<T>| -> Res<()> {
        let mut l = stream.launch_builder(&f);
        l.arg(&d_src).arg(dst).arg(&d_syms).arg(&pad);
        // SAFETY: the signature is the contract of `render_cuda` (src, dst, syms, pad of
        // the element type); `bind` accepted the binding, so every offset the kernel reads
        // lies in the source's extent, which `d_src` holds, and it writes the output's
        // `want.len()` elements, which `dst` holds.
        unsafe { l.launch(cfg) }
            .map(|_| ())
            .map_err(|x| format!("{x:?}"))
    };
    launch(&mut d_dst)?;
    let got = stream.clone_dtoh(&d_dst).map_err(|x| e(&x))?;
    let diff = first_difference(&got[..want.len()], &want);
    let index = width(k.index);
    let index_ok = index == w.index;
    let timed = |f: &mut dyn FnMut() -> Res<()>| -> Res<f64> {
        let start = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|x| e(&x))?;
        f()?;
        let end = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|x| e(&x))?;
        end.synchronize().map_err(|x| e(&x))?;
        Ok(f64::from(start.elapsed_ms(&end).map_err(|x| e(&x))?) * 1e3)
    };
    let mut kernel_us = Vec::with_capacity(runs);
    let mut copy_us = Vec::with_capacity(runs);
    let bytes_out = want.len() * std::mem::size_of::<T>();
    for run in 0..runs + 5 {
        let kt = timed(&mut || launch(&mut d_dst))?;
        let ct = timed(&mut || {
            stream
                .memcpy_dtod(&d_dst, &mut d_copy)
                .map_err(|x| format!("{x:?}"))
        })?;
        if run >= 5 {
            kernel_us.push(kt);
            copy_us.push(ct);
        }
    }
    let (kt, ct) = (median(&mut kernel_us), median(&mut copy_us));
    let gbs = |us: f64| 2.0 * bytes_out as f64 / us / 1e3;
    let ratio = kt / ct;
    let met = match w.target {
        Some(t) => yes(ratio <= t && index_ok && diff.is_none()),
        None => yes(index_ok && diff.is_none()),
    };
    let mut text = format!(
        "{:<32} {:>5} {:>6} {:>5} {:>10.1} {:>8.0} {:>10.1} {:>8.0} {:>6.2} {:>6} {:>4}",
        w.name,
        index,
        k.vector,
        yes(k.launch.shared_bytes > 0),
        kt,
        gbs(kt),
        ct,
        gbs(ct),
        ratio,
        w.target.map_or("-".to_string(), |t| format!("{t:.2}")),
        met
    );
    if !index_ok {
        text.push_str(&format!("\n  index width {index}, expected {}", w.index));
    }
    if let Some(d) = &diff {
        text.push_str(&format!("\n  wrong result: {d}"));
    }
    Ok(Row {
        text,
        checked: index_ok && diff.is_none(),
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}
