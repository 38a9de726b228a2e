//! The kernels of `render_opencl`, run on the OpenCL platform (POCL in CI), and of
//! `render_cuda`, emulated on the CPU (`cuda_emu.rs`), against
//! `symshape_kernels::materialize`, byte for byte, for random symbolic stacks at several
//! bindings and element types, and for the GPU benchmark's workloads at small sizes.
//!
//! Every binding is first decided by the plan's checks, compiled as `emit c`'s guard
//! function: where `ViewStack::bind` refuses, the checks must fail and nothing is launched;
//! where it binds, they must pass and the kernel runs. Where a kernel claims 32-bit
//! indices, every offset of every level and the output's element count must fit in `i32`
//! at every binding the tests bind.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope};
use symshape_codegen::{
    render_c, render_cuda, render_opencl, CConfig, ElemType, GpuKernel, IndexWidth, Plan,
};
use symshape_kernels::{materialize, Input};
use symshape_view::{ConcreteStack, ViewStack};

use crate::compiled::{
    batches, bindings_at, build, build_extreme, compare, extreme_bindings, extreme_scope,
    extreme_stack, numel, refusal, scope, source_len, symbol_ranges, Expected, Lcg, Outcome,
};
use crate::cuda_emu::{have_gxx, run_emulated, EmuRun, EmuUnit};
use crate::harness::{compile_cases, have_cc, Record};
use crate::opencl::{cl_host, to_bytes, Bytes};
use crate::opencl_host::{Program, Run};

#[path = "../../../../benches/src/gpu_workloads.rs"]
#[allow(dead_code)] // the benchmark reads its `bench` and `target` fields
mod gpu_workloads;

/// The element types: those of both dialects, then CUDA's `f16` and `bf16`, whose OpenCL
/// runs use the `u16` kernel (a copy moves the same two bytes).
const ELEMS: [ElemType; 8] = [
    ElemType::I64,
    ElemType::F32,
    ElemType::U8,
    ElemType::I32,
    ElemType::U16,
    ElemType::F64,
    ElemType::F16,
    ElemType::Bf16,
];

/// The element type of the OpenCL kernel of a case in `elem`.
fn opencl_elem(elem: ElemType) -> ElemType {
    match elem {
        ElemType::F16 | ElemType::Bf16 => ElemType::U16,
        e => e,
    }
}

/// The comma-separated items of `text` at bracket depth 0.
fn split_top(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (k, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text[start..k].trim());
                start = k + 1;
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out
}

/// The bracketed list after `key=` in `line`.
fn list_after<'a>(line: &'a str, key: &str) -> Vec<&'a str> {
    let at = line
        .find(&format!("{key}=["))
        .unwrap_or_else(|| panic!("`{key}=[` in `{line}`"));
    let rest = &line[at + key.len() + 2..];
    let mut depth = 1;
    let end = rest
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '[' | '(' => depth += 1,
                ']' | ')' => depth -= 1,
                _ => {}
            }
            depth == 0
        })
        .map(|(k, _)| k)
        .unwrap_or_else(|| panic!("a closing bracket in `{line}`"));
    split_top(&rest[..end])
}

fn width(i: IndexWidth) -> &'static str {
    match i {
        IndexWidth::I32 => "i32",
        IndexWidth::I64 => "i64",
    }
}

/// The launch line of a kernel, its second: the first must give the index width as
/// `k.index` says, and the launch line must start with `start`.
fn launch_line<'a>(k: &'a GpuKernel, start: &str) -> &'a str {
    let mut lines = k.source.lines();
    assert_eq!(
        lines.next(),
        Some(format!("// index: {}", width(k.index)).as_str()),
        "{}",
        k.source
    );
    let launch = lines.next().expect("a launch line");
    assert!(launch.starts_with(start), "{}", k.source);
    launch
}

/// `t`, an item of the launch line `launch`, as an expression over `cx`'s symbols.
fn launch_expr(cx: &Scope, t: &str, launch: &str) -> Expr {
    cx.parse_expr(t)
        .unwrap_or_else(|e| panic!("`{t}` in `{launch}`: {e}"))
}

/// The first two lines of an OpenCL kernel: the index width as `kernel.index` says, and
/// the global and local sizes, parsed as expressions over `cx`'s symbols. Returns the
/// global size's expressions.
fn opencl_header(cx: &Scope, k: &GpuKernel) -> [Expr; 3] {
    let launch = launch_line(k, "// launch: global=[");
    let global = list_after(launch, "global");
    let local = list_after(launch, "local");
    let want_local: Vec<String> = k.launch.block.iter().map(u32::to_string).collect();
    assert_eq!(local, want_local, "{}", k.source);
    assert_eq!(global.len(), 3, "{launch}");
    let parse = |t: &str| launch_expr(cx, t, launch);
    [parse(global[0]), parse(global[1]), parse(global[2])]
}

/// The first two lines of a CUDA kernel: the index width and the launch, with the block
/// and shared bytes of `k.launch` and a grid of as many expressions as it has.
fn cuda_header(cx: &Scope, k: &GpuKernel) {
    let launch = launch_line(k, "// launch: grid=[");
    let block: Vec<String> = k.launch.block.iter().map(u32::to_string).collect();
    assert_eq!(list_after(launch, "block"), block, "{launch}");
    assert!(
        launch.ends_with(&format!(" shared={}", k.launch.shared_bytes)),
        "{launch}"
    );
    for t in list_after(launch, "grid") {
        launch_expr(cx, t, launch);
    }
    assert!(
        k.source
            .contains("extern \"C\" __global__ void shapetrace_materialize("),
        "{}",
        k.source
    );
}

/// Where `k` claims 32-bit indices, every level's offsets and the element count at this
/// binding fit in `i32`.
fn check_width(k: &GpuKernel, bound: &ConcreteStack, syms: &[i64]) {
    if k.index != IndexWidth::I32 {
        return;
    }
    let small = |v: i64| i32::try_from(v).is_ok();
    let numel = numel(bound);
    assert!(
        numel.is_some_and(small),
        "syms {syms:?}: 32-bit indices, {numel:?} elements\n{}",
        k.source
    );
    for (l, level) in bound.levels().iter().enumerate() {
        if let Some((lo, hi)) = level.extent() {
            assert!(
                small(lo) && small(hi),
                "syms {syms:?}: 32-bit indices, level {l} reaches {lo}..={hi}\n{}",
                k.source
            );
        }
    }
}

/// The source, pad and expected output bytes of a bound stack in element type `T`.
fn typed<T: Bytes>(bound: &ConcreteStack, len: usize, rng: &mut Lcg, max: i64) -> [Vec<u8>; 3] {
    let src: Vec<T> = (0..len).map(|_| T::of(rng.range(0, max))).collect();
    let pad = T::of(rng.range(max + 1, max + 50));
    let want = materialize(Input::new(&src, bound).pad(pad))
        .expect("the kernels materialize")
        .values;
    [to_bytes(&src), to_bytes(&[pad]), to_bytes(&want)]
}

/// [`typed`] for `elem` (the bits of `f16` and `bf16` as `u16`).
fn buffers(elem: ElemType, bound: &ConcreteStack, len: usize, rng: &mut Lcg) -> [Vec<u8>; 3] {
    match elem {
        ElemType::I64 => typed::<i64>(bound, len, rng, 29_999),
        ElemType::I32 => typed::<i32>(bound, len, rng, 29_999),
        // Bit patterns of finite halves: a copy moves them unchanged.
        ElemType::U16 | ElemType::F16 | ElemType::Bf16 => typed::<u16>(bound, len, rng, 29_999),
        ElemType::U8 => typed::<u8>(bound, len, rng, 199),
        ElemType::F32 => typed::<f32>(bound, len, rng, 29_999),
        ElemType::F64 => typed::<f64>(bound, len, rng, 29_999),
    }
}

/// The largest source or output launched; larger bound stacks are only checked for their
/// guard result.
const LAUNCH_ELEMS: i64 = 1 << 16;

/// One stack in one element type, and the bindings it runs at (one value per symbol of
/// its scope).
pub struct Case<'a> {
    cx: &'a Scope,
    stack: ViewStack,
    elem: ElemType,
    bindings: Vec<Vec<i64>>,
    /// Whether the renderers may refuse the plan for arithmetic beyond 64 bits.
    may_refuse: bool,
}

/// Whether `e` is the GPU renderers' refusal of arithmetic that is not proven to fit in
/// 64 bits (a constant, an operand of a division, min, max or comparison): the GPU dialects
/// have no wider integers, unlike C.
fn beyond_64_bits(e: &symshape_codegen::Error) -> bool {
    let text = e.to_string();
    matches!(e, symshape_codegen::Error::Unsupported { op, .. }
        if *op == "render_opencl" || *op == "render_cuda")
        && (text.contains("fit in 64-bit arithmetic") || text.contains("does not fit in long"))
}

/// What a launch must produce.
struct Want {
    case: usize,
    /// The place of the case among the rendered ones.
    slot: usize,
    syms: Vec<i64>,
    bytes: Vec<u8>,
}

/// The launch sizes of `k` at `b`: blocks (work-groups) per axis, and work-items per axis
/// (blocks times the block's size).
fn sizes_at(k: &GpuKernel, b: &Bindings) -> ([u64; 3], [u64; 3]) {
    let mut grid = [0u64; 3];
    let mut items = [0u64; 3];
    for d in 0..3 {
        let v = k.launch.grid[d].eval(b).expect("the grid evaluates");
        grid[d] = u64::try_from(v).expect("a non-negative grid");
        items[d] = grid[d] * u64::from(k.launch.block[d]);
    }
    (grid, items)
}

/// Checks every case at each of its bindings: the guard
/// function of each plan (one `cc` call for all) decides as `bind` does; where the stack
/// binds to at most [`LAUNCH_ELEMS`] elements (source and output), the OpenCL kernel (one host process for
/// all) and the CUDA kernel (emulated, one `g++` program for all) equal the kernels byte
/// for byte.
pub fn check_cases(cases: &[Case], seed: u64) -> usize {
    let host = cl_host();
    let gxx = have_gxx();
    if host.is_none() && !gxx {
        return 0;
    }
    let plans: Vec<Plan> = cases
        .iter()
        .map(|c| Plan::materialize(c.cx, &c.stack).expect("a plan"))
        .collect();
    let render = |f: fn(&Scope, &Plan, ElemType) -> symshape_codegen::Result<GpuKernel>| {
        cases
            .iter()
            .zip(&plans)
            .map(|(c, p)| match f(c.cx, p, c.elem) {
                Ok(k) => Some(k),
                Err(e) if c.may_refuse && beyond_64_bits(&e) => None,
                Err(e) => panic!("{e}\n{p}"),
            })
            .collect::<Vec<Option<GpuKernel>>>()
    };
    let cl = render(|cx, p, e| render_opencl(cx, p, opencl_elem(e)));
    let cuda = render(render_cuda);
    for ((k, c), p) in cuda.iter().zip(&cl).zip(&plans) {
        assert_eq!(k.is_some(), c.is_some(), "both dialects refuse alike\n{p}");
        if let (Some(k), Some(c)) = (k, c) {
            assert_eq!(
                k.index, c.index,
                "both dialects' index widths\n{}\n{}",
                k.source, c.source
            );
        }
    }
    // The cases both dialects rendered, and each case's place among them.
    let rendered: Vec<usize> = (0..cases.len()).filter(|&i| cl[i].is_some()).collect();
    let mut slot = vec![None; cases.len()];
    for (k, &i) in rendered.iter().enumerate() {
        slot[i] = Some(k);
    }
    let mut globals = Vec::new();
    let mut programs = Vec::new();
    let mut emulated = Vec::new();
    for &i in &rendered {
        let (k, cu) = (
            cl[i].as_ref().expect("rendered"),
            cuda[i].as_ref().expect("rendered"),
        );
        cuda_header(cases[i].cx, cu);
        globals.push(opencl_header(cases[i].cx, k));
        programs.push(Program {
            source: k.source.clone(),
            runs: Vec::new(),
        });
        emulated.push(EmuUnit {
            source: cu.source.clone(),
            runs: Vec::new(),
        });
    }
    let units: Vec<String> = plans
        .iter()
        .enumerate()
        .zip(cases)
        .map(|((k, p), c)| render_c(c.cx, p, &CConfig::new(&format!("k{k}"))).expect("C source"))
        .collect();
    let mut rng = Lcg(seed);
    let mut guard_records = Vec::new();
    let mut outcomes = Vec::new();
    let mut wants = Vec::new();
    for (case, c) in cases.iter().enumerate() {
        for syms in &c.bindings {
            let b = bindings_at(c.cx, syms);
            let rec = Record {
                syms: syms.clone(),
                src: Vec::new(),
                pad: 0,
                dst_len: 0,
            };
            guard_records.push((case, false, rec));
            let bound = match c.stack.bind(c.cx, &b) {
                Ok(bound) => bound,
                Err(e) => {
                    outcomes.push(refusal(e));
                    continue;
                }
            };
            outcomes.push(Outcome::Bound);
            let (Some(slot), Some(clk), Some(cuk)) = (slot[case], &cl[case], &cuda[case]) else {
                continue;
            };
            check_width(clk, &bound, syms);
            // Never more groups than output elements: an empty output is one group.
            if let Some(n) = numel(&bound) {
                for k in [clk, cuk] {
                    let blocks: u128 = sizes_at(k, &b).0.iter().map(|&g| u128::from(g)).product();
                    assert!(
                        blocks <= u128::from(n.max(1).unsigned_abs()),
                        "syms {syms:?}: {blocks} groups for {n} elements\n{}",
                        k.source
                    );
                }
            }
            let Some(len) = source_len(&bound, LAUNCH_ELEMS) else {
                continue;
            };
            let (_, items) = sizes_at(clk, &b);
            for (d, e) in globals[slot].iter().enumerate() {
                let v = e.eval(&b).expect("the launch line's global size evaluates");
                assert_eq!(
                    u64::try_from(v).ok(),
                    Some(items[d]),
                    "syms {syms:?}: the launch line's global size is not grid x local\n{}",
                    clk.source
                );
            }
            let (grid, _) = sizes_at(cuk, &b);
            let [src, pad, want] = buffers(c.elem, &bound, len, &mut rng);
            programs[slot].runs.push(Run {
                elem_size: c.elem.size(),
                global: items,
                local: clk.launch.block,
                syms: syms.clone(),
                pad: pad.clone(),
                src: src.clone(),
                dst_bytes: want.len(),
            });
            emulated[slot].runs.push(EmuRun {
                grid,
                block: cuk.launch.block,
                syms: syms.clone(),
                pad,
                src,
                dst_bytes: want.len(),
            });
            wants.push(Want {
                case,
                slot,
                syms: syms.clone(),
                bytes: want,
            });
        }
    }
    let stats = std::env::var("CODEGEN_STATS").is_ok();
    let t = std::time::Instant::now();
    if have_cc() {
        let compiled = compile_cases(&units).unwrap_or_else(|e| panic!("{e}"));
        let got = compiled.run_cases(&guard_records);
        assert_eq!(got.len(), guard_records.len(), "one result per record");
        for (((case, _, rec), outcome), (g, values)) in guard_records.iter().zip(outcomes).zip(&got)
        {
            let exp = Expected {
                outcome,
                values: Vec::new(),
            };
            compare(&plans[*case], &units[*case], rec, &exp, *g, values);
        }
    }
    let check = |dialect: &str, k: &GpuKernel, w: &Want, got: &[u8]| {
        let elem = cases[w.case].elem;
        assert!(
            got == w.bytes,
            "syms {:?}, {}: {dialect} differs from the kernels\n got {}\nwant {}\n{}\n{}",
            w.syms,
            elem.name(),
            show(got, elem),
            show(&w.bytes, elem),
            plans[w.case],
            k.source
        );
    };
    if stats {
        eprintln!("guards of {} units: {:.1?}", units.len(), t.elapsed());
    }
    let t = std::time::Instant::now();
    if let Some(host) = host {
        let results = host.run(&programs).expect("the OpenCL host program runs");
        let mut next = vec![0usize; rendered.len()];
        for w in &wants {
            let k = cl[w.case].as_ref().expect("rendered");
            let runs = results[w.slot]
                .as_ref()
                .unwrap_or_else(|log| panic!("the OpenCL build failed:\n{log}\n{}", k.source));
            let got = runs[next[w.slot]].as_ref().unwrap_or_else(|e| {
                panic!("syms {:?}: the launch failed: {e}\n{}", w.syms, k.source)
            });
            next[w.slot] += 1;
            check("OpenCL", k, w, got);
        }
    }
    if stats {
        eprintln!(
            "OpenCL, {} programs, {} launches: {:.1?}",
            programs.len(),
            wants.len(),
            t.elapsed()
        );
    }
    let t = std::time::Instant::now();
    if gxx {
        let sizes: Vec<usize> = rendered.iter().map(|&i| cases[i].elem.size()).collect();
        let results = run_emulated(&emulated, &sizes).unwrap_or_else(|e| panic!("{e}"));
        let mut next = vec![0usize; rendered.len()];
        for w in &wants {
            let k = cuda[w.case].as_ref().expect("rendered");
            check("emulated CUDA", k, w, &results[w.slot][next[w.slot]]);
            next[w.slot] += 1;
        }
    }
    if stats {
        eprintln!(
            "refused by the GPU renderers: {}",
            cases.len() - rendered.len()
        );
        eprintln!(
            "emulated CUDA, {} units: {:.1?}",
            emulated.len(),
            t.elapsed()
        );
    }
    wants.len()
}

/// Bytes of `elem` elements as numbers, for messages.
fn show(bytes: &[u8], elem: ElemType) -> String {
    let size = elem.size();
    let vals: Vec<String> = bytes
        .chunks(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            match elem {
                ElemType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string(),
                ElemType::F64 => f64::from_le_bytes(b).to_string(),
                ElemType::I64 => i64::from_le_bytes(b).to_string(),
                ElemType::I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string(),
                _ => u64::from_le_bytes(b).to_string(),
            }
        })
        .collect();
    format!("[{}]", vals.join(", "))
}

/// Bindings of the small scope: both ends of every range, then random ones.
fn small_bindings(cx: &Scope, rng: &mut Lcg, n: usize) -> Vec<Vec<i64>> {
    let ranges = symbol_ranges(cx);
    let mut out = vec![
        ranges.iter().map(|r| r.0).collect(),
        ranges.iter().map(|r| r.1).collect(),
    ];
    while out.len() < n {
        out.push(ranges.iter().map(|&(lo, hi)| rng.range(lo, hi)).collect());
    }
    out
}

/// A generated op: its kind and two arguments, as [`build`] reads them.
type GenOp = (u8, u8, u8);

/// Eight generated stacks: bases below `bases`, fewer than `ops` ops, an index into
/// `ELEMS`.
fn generated(bases: u8, ops: usize) -> impl Strategy<Value = Vec<(u8, Vec<GenOp>, usize)>> {
    prop::collection::vec(
        (
            0..bases,
            prop::collection::vec((0u8..10, any::<u8>(), any::<u8>()), 0..ops),
            0usize..8,
        ),
        8,
    )
}

/// The generated stacks of a proptest batch, each `(base, ops, element)` built by `build`
/// in `cx` and checked in `ELEMS[element]` at every one of `bindings`.
fn batch<'a>(
    cx: &'a Scope,
    generated: &[(u8, Vec<GenOp>, usize)],
    build: fn(&Scope, u8, &[GenOp]) -> ViewStack,
    bindings: &[Vec<i64>],
    may_refuse: bool,
) -> Vec<Case<'a>> {
    generated
        .iter()
        .map(|(base, ops, e)| Case {
            cx,
            stack: build(cx, *base, ops),
            elem: ELEMS[*e],
            bindings: bindings.to_vec(),
            may_refuse,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(batches(8, 3)))]

    /// Eight stacks per batch, each in one of the eight element types, at eight bindings.
    #[test]
    fn gpu_kernels_equal_the_kernels(cases in generated(5, 6), seed in any::<u64>()) {
        let cx = scope();
        let chosen = small_bindings(&cx, &mut Lcg(seed), 8);
        check_cases(&batch(&cx, &cases, build, &chosen, false), seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(batches(16, 2)))]

    /// Eight extreme stacks per batch (fields near the `i64` limits: 64-bit indices), at
    /// 16 bindings from the ends of the ranges. The GPU renderers may refuse a plan whose
    /// arithmetic is not proven to fit in 64 bits (they have no wider integers); both
    /// must refuse alike, and its checks are still compared with `bind`.
    #[test]
    fn gpu_kernels_at_the_ends_of_the_ranges(cases in generated(15, 4), seed in any::<u64>()) {
        let cx = extreme_scope();
        let chosen = extreme_bindings(&cx, seed, 16);
        check_cases(&batch(&cx, &cases, build_extreme, &chosen, true), seed);
    }
}

/// The benchmark's workloads at two small bindings, in the workload's element type and in
/// `i64`: both dialects equal the kernels and use the index width the workload's ranges
/// prove (`i32`, `i64` for the one of more than 2^31 elements).
#[test]
fn benchmark_workloads_at_small_sizes() {
    let ws = gpu_workloads::workloads().expect("the workloads build");
    let mut cases = Vec::new();
    for w in &ws {
        let plan = Plan::materialize(&w.cx, &w.stack).expect("a plan");
        let elem = ElemType::parse(w.elem).expect("an element type");
        let cuda = render_cuda(&w.cx, &plan, elem).expect("CUDA source");
        cuda_header(&w.cx, &cuda);
        assert_eq!(
            width(cuda.index),
            w.index,
            "{}: the CUDA index width",
            w.name
        );
        let mid: Vec<i64> = w.small.iter().map(|v| v / 2 + 1).collect();
        for e in [elem, ElemType::I64] {
            let cl = render_opencl(&w.cx, &plan, e).expect("OpenCL source");
            assert_eq!(
                width(cl.index),
                w.index,
                "{}: the OpenCL index width",
                w.name
            );
            cases.push(Case {
                cx: &w.cx,
                stack: w.stack.clone(),
                elem: e,
                bindings: vec![w.small.clone(), mid.clone()],
                may_refuse: false,
            });
        }
    }
    let launched = check_cases(&cases, 3);
    if cl_host().is_some() || have_gxx() {
        assert_eq!(launched, 2 * cases.len(), "every binding is launched");
    }
}

/// The guard of a guarded vector path, from the kernel's form line (`... where COND and
/// COND, else one work-item per element.`), `None` for a kernel without one.
fn guard_of(cx: &Scope, k: &GpuKernel) -> Option<Vec<symshape::Cond>> {
    let line = k
        .source
        .lines()
        .find(|l| l.starts_with("// Generated by"))?;
    let (_, rest) = line.split_once(" where ")?;
    let (conds, _) = rest.split_once(", else one work-item per element")?;
    Some(
        conds
            .split(" and ")
            .map(|c| cx.parse_cond(c).expect("a condition"))
            .collect(),
    )
}

/// The workloads whose vector path is guarded (broadcast, the permute that keeps the
/// contiguous axis, flip, pad, every second column), at the lower ends of their ranges
/// and at values around their small sizes where the guard holds and where it fails:
/// both paths of each kernel equal the kernels, in the workload's element type and in
/// `i64` (whose vectors are 2 wide).
#[test]
fn guarded_vector_paths_run_both_ways() {
    let ws = gpu_workloads::workloads().expect("the workloads build");
    let mut cases = Vec::new();
    let mut guarded = Vec::new();
    for w in &ws {
        let plan = Plan::materialize(&w.cx, &w.stack).expect("a plan");
        let elem = ElemType::parse(w.elem).expect("an element type");
        for e in [elem, ElemType::I64] {
            let cu = render_cuda(&w.cx, &plan, e).expect("CUDA source");
            let cl = render_opencl(&w.cx, &plan, opencl_elem(e)).expect("OpenCL source");
            let Some(guard) = guard_of(&w.cx, &cu) else {
                continue;
            };
            assert_eq!(guard_of(&w.cx, &cl), Some(guard.clone()), "{}", w.name);
            assert!(cu.vector > 1, "{}: a guarded path is a vector path", w.name);
            let n = w.small.len();
            let near =
                |k: i64| -> Vec<i64> { w.small.iter().map(|v| (v + 3) / 4 * 4 + k).collect() };
            let bindings = vec![
                vec![1; n],
                vec![2; n],
                vec![4; n],
                near(0),
                near(1),
                near(2),
                w.small.clone(),
            ];
            let holds = |syms: &Vec<i64>| {
                let b = bindings_at(&w.cx, syms);
                guard
                    .iter()
                    .all(|c| c.eval(&b).expect("the guard evaluates"))
            };
            let held = bindings.iter().filter(|b| holds(b)).count();
            assert!(
                held >= 1 && held < bindings.len(),
                "{}: the guard holds at {held} of {} bindings",
                w.name,
                bindings.len()
            );
            guarded.push(w.name);
            cases.push(Case {
                cx: &w.cx,
                stack: w.stack.clone(),
                elem: e,
                bindings,
                may_refuse: false,
            });
        }
    }
    guarded.dedup();
    assert_eq!(
        guarded,
        [
            "permute_256^3_102",
            "flip_4096x4096",
            "pad_4094_to_4096",
            "every_2nd_column_4096x8192",
            "broadcast_4096x1_to_4096x4096"
        ]
    );
    let launched = check_cases(&cases, 5);
    if cl_host().is_some() || have_gxx() {
        assert_eq!(launched, 7 * cases.len(), "every binding is launched");
    }
}

/// Offsets and sizes that are differences of symbols and constants near the `i64` limits,
/// small at the ends of the ranges: both dialects render them with 64-bit indices and
/// equal the kernels there. An offset `q + 2^63` is refused: the constant has no 64-bit
/// form (the C renderer has wider arithmetic).
#[test]
fn gpu_kernels_at_offsets_near_the_i64_limits() {
    let cx = extreme_scope();
    let stacks = [
        extreme_stack(&cx, "2", None, "n - 9223372036854775807"),
        extreme_stack(&cx, "n - m + 1", None, "0"),
        extreme_stack(&cx, "3, 2", Some("2, 1"), "9223372036854775806 - n"),
    ];
    let (max, min) = (i64::MAX, i64::MIN);
    // Values of [n, m, q, p].
    let bindings = vec![
        vec![max, max, min, 0],
        vec![max - 1, max - 3, min + 1, 3],
        vec![max - 5, max - 8, min + 8, 1],
        vec![0, 0, min, 0],
    ];
    let mut cases = Vec::new();
    for (k, s) in stacks.iter().enumerate() {
        for elem in [ElemType::I64, ElemType::F32, ElemType::U8] {
            cases.push(Case {
                cx: &cx,
                stack: s.clone(),
                elem,
                bindings: bindings.clone(),
                may_refuse: false,
            });
        }
        let plan = Plan::materialize(&cx, s).expect("a plan");
        let k64 = render_opencl(&cx, &plan, ElemType::I64).expect("an OpenCL kernel");
        assert_eq!(k64.index, IndexWidth::I64, "stack {k}");
    }
    let launched = check_cases(&cases, 17);
    if cl_host().is_some() || have_gxx() {
        assert!(launched >= 2 * cases.len(), "{launched} launches");
    }
    let s = extreme_stack(&cx, "2, 3", Some("3, 1"), "q + 9223372036854775807 + 1");
    let plan = Plan::materialize(&cx, &s).expect("a plan");
    let err = |r: symshape_codegen::Result<GpuKernel>| r.err().map(|e| e.to_string());
    insta::assert_snapshot!(err(render_opencl(&cx, &plan, ElemType::I64)).unwrap_or_default(), @"render_opencl: constant 9223372036854775808 does not fit in long");
    insta::assert_snapshot!(err(render_cuda(&cx, &plan, ElemType::I64)).unwrap_or_default(), @"render_cuda: constant 9223372036854775808 does not fit in long long");
}
