//! GPU kernels from a materialize plan: the kernel form (32x32 tiles staged through
//! local memory, or a per-element gather, 2- or 4-wide where proven), the proven index
//! width and the launch, rendered in either dialect of `dialect.rs`.
//!
//! Rules:
//!
//! 1. The description is a transformation of the plan's loops and access, never a
//!    plan of its own: the loop indices keep their names `i0, i1, ...` and the offset
//!    is the plan's, evaluated only where every bound and predicate holds.
//! 2. Tiles: when the innermost loop reads with a step other than 0 or ±1, another loop
//!    `a` reads with step ±1, and no predicate mentions either loop, loop `a` and the
//!    innermost loop `b` are walked in 32x32 tiles over their whole axes: a group of
//!    32x8 work-items reads a tile along `a` (coalesced source) into local memory and
//!    writes it along `b` (coalesced output), testing the bounds of both loops per
//!    element. The other loops are flattened into one counter over the third grid
//!    dimension, their bounds and predicates decided once per counter value. The output
//!    offset is written over symbols that run each loop's whole axis, since masked
//!    elements are written too.
//! 3. Otherwise one work-item writes `w` consecutive output elements, in a grid-stride
//!    loop; `w` is 4 or 2 where the innermost loop is whole without predicates, its
//!    extent a proven multiple of `w`, and the offset of `w*q + t` proven to be the
//!    offset of `w*q` (a proven multiple of `w`) plus `t` for every `t < w`; else 1.
//! 4. The index width is 32 bits exactly when every expression the kernel evaluates
//!    (counts, extents, bounds, indices, offsets, predicates, each intermediate) is
//!    proven to fit in `i32` under the symbols' ranges; else 64 bits, native where
//!    proven, otherwise in wrapping unsigned 64-bit arithmetic that is exact wherever
//!    the value fits (division, `min`, `max` and comparisons take operands whose
//!    values are proven to fit in `i64`, or the renderer refuses).
//! 5. Counters never overflow: a grid-stride step is taken only while it stays below
//!    the count, and tile corners are compared as `lx < ea - a0`.
//! 6. Every grid dimension is between 1 and 65535 for every binding.

use std::fmt::Write as _;

use symshape::{BigInt, CmpOp, Expr, ExprKind, Scope, SymbolSpec};

use crate::arith::{bare, paren, Emitter, Name};
use crate::dialect::{Dialect, ElemType, IndexWidth};
use crate::error::{Error, Result};
use crate::plan::{CheckKind, Plan, PlanKind};

/// Side of a square tile.
const TILE: u32 = 32;
/// Rows of a tile each work-item of a tiled group handles: the group is `TILE x ROWS`.
const ROWS: u32 = 8;
/// Work-items per group of the per-element kernel.
const BLOCK: u32 = 256;
/// The most groups along one grid dimension (CUDA's limit for y and z).
const MAX_GROUPS: i64 = 65535;

/// How a kernel is launched.
///
/// `grid[k]` is the number of work-groups (OpenCL) or blocks (CUDA) along `k`, an
/// expression over the declared symbols, between 1 and 65535 for every binding that
/// passes the plan's checks; `block[k]` is the number of work-items (threads) per group
/// along `k`. OpenCL's global size along `k` is `grid[k] * block[k]`. `shared_bytes` is
/// the local (shared) memory the kernel declares statically: nothing needs to be
/// passed for it at launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Groups (blocks) along x, y, z.
    pub grid: [Expr; 3],
    /// Work-items (threads) per group along x, y, z.
    pub block: [u32; 3],
    /// Bytes of local (shared) memory the kernel declares.
    pub shared_bytes: u64,
}

/// A rendered GPU kernel and how to launch it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuKernel {
    /// The program (OpenCL) or translation unit (CUDA), starting with the comment lines
    /// `// index: ...` and `// launch: ...`, then one `// check: ...` line per check.
    pub source: String,
    /// The element type.
    pub elem: ElemType,
    /// The width of the index arithmetic.
    pub index: IndexWidth,
    /// Elements each load and store moves: 1, 2 or 4.
    pub vector: u32,
    /// The launch.
    pub launch: Launch,
}

/// Renders a materialize plan as one OpenCL C 1.2 program whose kernel is
///
/// ```c
/// __kernel void shapetrace_materialize(__global const T *src, __global T *dst,
///                                      __global const long *syms, const T pad)
/// ```
///
/// `syms` holds one value per symbol of `cx`, in declaration order; masked-out elements
/// get `pad`. Launch it only for bindings that pass [`Plan::checks`] (the guard function
/// of [`crate::render_c`] runs them on the host), with the global and local sizes of
/// [`GpuKernel::launch`]. `src` and `dst` must be aligned to 16 bytes when
/// [`GpuKernel::vector`] is above 1 (as allocations are).
///
/// # Errors
/// [`Error::Unsupported`] for an elementwise plan, for `f16` and `bf16` (OpenCL C 1.2
/// has no such storage type without extensions), for a symbol not declared in `cx`, and
/// for a division, `min`, `max` or comparison whose operands are not proven to fit in
/// 64 bits.
pub fn render_opencl(cx: &Scope, plan: &Plan, elem: ElemType) -> Result<GpuKernel> {
    render(cx, plan, elem, Dialect::OpenCl)
}

/// Renders a materialize plan as one CUDA C++ translation unit whose kernel is
///
/// ```c
/// extern "C" __global__ void shapetrace_materialize(const T *__restrict__ src,
///     T *__restrict__ dst, const long long *syms, T pad)
/// ```
///
/// with the same contract as [`render_opencl`]; the grid and block of
/// [`GpuKernel::launch`] are CUDA's. `cuda_fp16.h` and `cuda_bf16.h` are included only
/// for `f16` and `bf16`.
///
/// # Errors
/// As [`render_opencl`], except that every element type is supported.
pub fn render_cuda(cx: &Scope, plan: &Plan, elem: ElemType) -> Result<GpuKernel> {
    render(cx, plan, elem, Dialect::Cuda)
}

fn render(cx: &Scope, plan: &Plan, elem: ElemType, dialect: Dialect) -> Result<GpuKernel> {
    let unsupported = |message: String| Error::Unsupported {
        op: dialect.op(),
        message,
    };
    if plan.kind() != PlanKind::Materialize {
        return Err(unsupported(
            "only materialize plans have a GPU kernel form".to_string(),
        ));
    }
    let Some(t) = dialect.elem(elem) else {
        return Err(unsupported(format!(
            "element type {elem} is not supported by the OpenCL dialect; use i64, i32, u16, u8, f32 or f64"
        )));
    };
    let desc = Desc::of(cx, plan, elem)?;
    let (index, body) = match desc.body(cx, plan, dialect, IndexWidth::I32, t) {
        Ok(b) => (IndexWidth::I32, b),
        Err(_) => (
            IndexWidth::I64,
            desc.body(cx, plan, dialect, IndexWidth::I64, t)?,
        ),
    };
    let mut out = String::new();
    let _ = writeln!(out, "// index: {index}");
    let list = |xs: Vec<String>| xs.join(", ");
    let b = desc.launch.block;
    match dialect {
        Dialect::OpenCl => {
            let global: Vec<String> = (0..3)
                .map(|k| {
                    cx.simplify(desc.launch.grid[k] * i64::from(b[k]))
                        .to_string()
                })
                .collect();
            let _ = writeln!(
                out,
                "// launch: global=[{}] local=[{}, {}, {}]",
                list(global),
                b[0],
                b[1],
                b[2]
            );
        }
        Dialect::Cuda => {
            let grid: Vec<String> = desc.launch.grid.iter().map(ToString::to_string).collect();
            let _ = writeln!(
                out,
                "// launch: grid=[{}] block=[{}, {}, {}] shared={}",
                list(grid),
                b[0],
                b[1],
                b[2],
                desc.launch.shared_bytes
            );
        }
    }
    for c in plan.checks() {
        let _ = writeln!(out, "// check: {}", c.text.replace('\n', " "));
    }
    let shape: Vec<String> = plan.shape().iter().map(ToString::to_string).collect();
    let params: Vec<String> = plan.params().iter().map(ToString::to_string).collect();
    let _ = writeln!(
        out,
        "// Generated by symshape-codegen: materialize [{}] of {elem}, {}.",
        shape.join(", "),
        desc.form_text()
    );
    let _ = writeln!(out, "// syms: [{}]", params.join(", "));
    out.push_str(dialect.prologue(elem));
    out.push_str(&body);
    Ok(GpuKernel {
        source: out,
        elem,
        index,
        vector: desc.vector(),
        launch: desc.launch,
    })
}

/// The shape of the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Form {
    /// One work-item per `vector` consecutive output elements, in a grid-stride loop
    /// over `counter`.
    Gather { vector: u32, lanes: Lanes },
    /// Loops `a` (unit source step) and `b` (innermost) in tiles; `rest` the other loops,
    /// in order, indexed by `counter`.
    Tiled {
        a: usize,
        b: usize,
        rest: Vec<usize>,
    },
}

/// What the lanes of a vector read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lanes {
    /// Consecutive source elements, the first a multiple of the width.
    Consecutive,
    /// One source element, broadcast.
    Broadcast,
}

/// The kernel description: the form, the launch, and each loop index as an
/// expression of the counter a work-item runs over.
struct Desc {
    form: Form,
    launch: Launch,
    /// The counter: the vector (gather) or rest (tiled) index, `0..count`.
    counter: Expr,
    /// How many values the counter takes.
    count: Expr,
    /// `(k, index of loop k)` for every loop the counter decides.
    indices: Vec<(usize, Expr)>,
    /// The output offset: of the first element (gather) or of one element (tiled).
    dst: Expr,
    /// Symbols over each loop's whole axis, named as the loop's index: a tiled kernel
    /// writes masked elements too, so its output offset is in these.
    whole: Vec<Expr>,
}

impl Desc {
    fn of(cx: &Scope, plan: &Plan, elem: ElemType) -> Result<Desc> {
        if let Some((a, b, rest)) = tile_axes(cx, plan) {
            return Desc::tiled(cx, plan, elem, a, b, rest);
        }
        let (w, lanes) = vector_width(cx, plan, elem);
        Desc::gather(cx, plan, w, lanes)
    }

    fn gather(cx: &Scope, plan: &Plan, w: u32, lanes: Lanes) -> Result<Desc> {
        let count = cx.simplify(plan.numel().floor_div(i64::from(w))).check()?;
        let g = counter("__g", count)?;
        let first = g * i64::from(w);
        let mut indices = Vec::new();
        for (k, l) in plan.loops().iter().enumerate() {
            let q = first.floor_div(l.dst_stride);
            let i = if k == 0 { q } else { q.floor_mod(l.extent) };
            indices.push((k, cx.simplify(i).check()?));
        }
        let groups = cx.simplify(count.ceil_div(i64::from(BLOCK)).min(MAX_GROUPS).max(1));
        Ok(Desc {
            form: Form::Gather { vector: w, lanes },
            launch: Launch {
                grid: [groups, Expr::from(1), Expr::from(1)],
                block: [BLOCK, 1, 1],
                shared_bytes: 0,
            },
            counter: g,
            count,
            indices,
            dst: cx.simplify(first).check()?,
            whole: Vec::new(),
        })
    }

    fn tiled(
        cx: &Scope,
        plan: &Plan,
        elem: ElemType,
        a: usize,
        b: usize,
        rest: Vec<usize>,
    ) -> Result<Desc> {
        let loops = plan.loops();
        let count: Expr = rest.iter().map(|&k| loops[k].extent).product();
        let count = cx.simplify(count).check()?;
        let z = counter("__z", count)?;
        let mut indices = Vec::new();
        let mut stride = Expr::from(1);
        for &k in rest.iter().rev() {
            let q = z.floor_div(stride);
            let i = if k == rest[0] {
                q
            } else {
                q.floor_mod(loops[k].extent)
            };
            indices.push((k, cx.simplify(i).check()?));
            stride *= loops[k].extent;
        }
        indices.reverse();
        let whole = loops
            .iter()
            .enumerate()
            .map(|(k, l)| counter(&format!("__w{k}"), l.extent))
            .collect::<Result<Vec<_>>>()?;
        let dst: Expr = loops
            .iter()
            .zip(&whole)
            .map(|(l, &w)| w * l.dst_stride)
            .sum();
        let tiles = |e: Expr| cx.simplify(e.ceil_div(i64::from(TILE)).min(MAX_GROUPS).max(1));
        let grid = [
            tiles(loops[b].extent),
            tiles(loops[a].extent),
            cx.simplify(count.min(MAX_GROUPS).max(1)),
        ];
        let cols = u64::from(TILE) + 1;
        Ok(Desc {
            form: Form::Tiled { a, b, rest },
            launch: Launch {
                grid,
                block: [TILE, ROWS, 1],
                shared_bytes: u64::from(TILE) * cols * elem.size() as u64,
            },
            counter: z,
            count,
            indices,
            dst: cx.simplify(dst).check()?,
            whole,
        })
    }

    fn vector(&self) -> u32 {
        match self.form {
            Form::Gather { vector, .. } => vector,
            Form::Tiled { .. } => 1,
        }
    }

    fn form_text(&self) -> String {
        match &self.form {
            Form::Gather { vector: 1, .. } => "one work-item per element".to_string(),
            Form::Gather {
                vector,
                lanes: Lanes::Consecutive,
            } => format!("one work-item per {vector} elements"),
            Form::Gather {
                vector,
                lanes: Lanes::Broadcast,
            } => format!("one work-item per {vector} elements of one source element"),
            Form::Tiled { a, b, .. } => {
                format!("loops {a} and {b} in {TILE}x{TILE} tiles through local memory")
            }
        }
    }

    /// The kernel (helpers, then the function) in `dialect` with `index` arithmetic over
    /// elements of type `t`.
    fn body(
        &self,
        cx: &Scope,
        plan: &Plan,
        dialect: Dialect,
        index: IndexWidth,
        t: &str,
    ) -> Result<String> {
        let mut em = Emitter::new(cx, plan, dialect.arith(index));
        // A binding that passes the checks makes the output a view: its sizes and
        // element count fit in `i64`, and so does every product of adjacent sizes
        // (the loop extents and output strides) while the output is not empty.
        em.known.extend(plan.shape().iter().copied());
        em.known.insert(plan.numel());
        for l in plan.loops() {
            em.known.extend([l.extent, l.dst_stride]);
        }
        // An output offset and the counter are below the element count.
        em.known.extend([self.dst, self.counter]);
        // So are the fields of every level the checks validate.
        for c in plan.checks() {
            match &c.kind {
                CheckKind::View { fields, .. } => em.known.extend(fields.flat()),
                CheckKind::Within { lower, upper, .. } => {
                    em.known.extend(lower.flat());
                    em.known.extend(upper.flat());
                }
                _ => {}
            }
        }
        let it = em.ar.native;
        em.names.insert(
            self.counter,
            Name::Local(counter_name(&self.form).to_string()),
        );
        for (k, &w) in self.whole.iter().enumerate() {
            em.names.insert(w, Name::Local(format!("i{k}")));
        }
        let mut body = String::new();
        match &self.form {
            Form::Gather { vector, lanes } => {
                self.gather_body(&mut em, plan, dialect, (*vector, *lanes), t, &mut body)?
            }
            Form::Tiled { a, b, rest } => {
                self.tiled_body(&mut em, plan, dialect, (*a, *b, rest), t, &mut body)?;
            }
        }
        let mut out = String::new();
        if let Form::Gather { vector, .. } = self.form {
            if vector > 1 {
                let size = elem_size(t);
                out.push_str(&dialect.vector_decl(t, vector, size));
            }
        }
        let helpers = em.helper_sources();
        if !helpers.is_empty() {
            out.push('\n');
            out.push_str(&helpers);
        }
        out.push('\n');
        let _ = writeln!(out, "{} {{", dialect.signature(t));
        for &k in &em.used {
            let p = plan.params()[k];
            let _ = writeln!(out, "    const {it} s_{p} = ({it})syms[{k}];");
        }
        out.push_str(&body);
        out.push_str("}\n");
        Ok(out)
    }

    /// The validity of element `(i0, i1, ...)` as `&&`-joined tests, bounds of each loop
    /// before its predicates, so that each test is evaluated only within the ranges the
    /// plan simplified it with; `skip` loops are known whole and free of predicates.
    fn valid(em: &mut Emitter<'_>, plan: &Plan, skip: &[usize]) -> Result<Vec<String>> {
        let mut tests = Vec::new();
        for &c in plan.prelude() {
            tests.push(paren(&em.cond(c)?));
        }
        for (k, l) in plan.loops().iter().enumerate() {
            if skip.contains(&k) {
                continue;
            }
            if l.lo != Expr::from(0) {
                tests.push(format!("i{k} >= {}", paren(&em.value(l.lo)?)));
            }
            if l.hi != l.extent {
                tests.push(format!("i{k} < {}", paren(&em.value(l.hi)?)));
            }
            for &c in &l.predicates {
                tests.push(paren(&em.cond(c)?));
            }
        }
        Ok(tests)
    }

    fn gather_body(
        &self,
        em: &mut Emitter<'_>,
        plan: &Plan,
        dialect: Dialect,
        (w, lanes): (u32, Lanes),
        t: &str,
        out: &mut String,
    ) -> Result<()> {
        let it = em.ar.native;
        let count = bare(&em.value(self.count)?);
        let _ = writeln!(out, "    const {it} count = {count};");
        let (start, step) = match dialect {
            Dialect::OpenCl => (
                format!("({it})get_global_id(0)"),
                format!("({it})get_global_size(0)"),
            ),
            Dialect::Cuda => (
                format!("({it})blockIdx.x * {BLOCK} + ({it})threadIdx.x"),
                format!("({it})gridDim.x * {BLOCK}"),
            ),
        };
        let _ = writeln!(out, "    const {it} step = {step};");
        let _ = writeln!(
            out,
            "    for ({it} g = {start}; g < count; g = count - g > step ? g + step : count) {{"
        );
        for (k, e) in &self.indices {
            let v = bare(&em.value(*e)?);
            let _ = writeln!(out, "        const {it} i{k} = {v};");
        }
        let tests = Desc::valid(em, plan, &[])?;
        let offset = bare(&em.value(plan.accesses()[0].offset)?);
        let dst = bare(&em.value(self.dst)?);
        if w == 1 {
            if tests.is_empty() {
                let _ = writeln!(out, "        dst[{dst}] = src[{offset}];");
            } else {
                let _ = writeln!(
                    out,
                    "        dst[{dst}] = ({}) ? src[{offset}] : pad;",
                    tests.join(" && ")
                );
            }
        } else {
            let _ = writeln!(out, "        const {it} o = {dst};");
            let copy = match lanes {
                Lanes::Consecutive => dialect.vector_copy(w, "o", &paren(&offset)),
                Lanes::Broadcast => dialect.vector_fill(t, w, "o", &format!("src[{offset}]")),
            };
            if tests.is_empty() {
                let _ = writeln!(out, "        {copy}");
            } else {
                let _ = writeln!(out, "        if ({}) {copy}", tests.join(" && "));
                let _ = writeln!(
                    out,
                    "        else {}",
                    dialect.vector_fill(t, w, "o", "pad")
                );
            }
        }
        let _ = writeln!(out, "    }}");
        Ok(())
    }

    fn tiled_body(
        &self,
        em: &mut Emitter<'_>,
        plan: &Plan,
        dialect: Dialect,
        (a, b, rest): (usize, usize, &[usize]),
        t: &str,
        out: &mut String,
    ) -> Result<()> {
        let it = em.ar.native;
        let loops = plan.loops();
        if plan
            .numel()
            .range()
            .lo
            .is_none_or(|lo| lo < BigInt::from(1))
        {
            // The extents are only known to fit while the output is not empty.
            let numel = bare(&em.value(plan.numel())?);
            let _ = writeln!(out, "    if ({numel} == 0) return;");
        }
        let _ = writeln!(
            out,
            "    {}",
            dialect.shared(t, "tile", TILE as usize, TILE as usize + 1)
        );
        let _ = writeln!(
            out,
            "    const {it} lx = ({it}){}, ly = ({it}){};",
            dialect.local(0),
            dialect.local(1)
        );
        let ea = bare(&em.value(loops[a].extent)?);
        let eb = bare(&em.value(loops[b].extent)?);
        let _ = writeln!(out, "    const {it} ea = {ea}, eb = {eb};");
        let _ = writeln!(
            out,
            "    const {it} na = ea / {TILE} + (ea % {TILE} != 0), nb = eb / {TILE} + (eb % {TILE} != 0);"
        );
        // A grid-stride loop over `0..n` along grid dimension `k`.
        let stride = |v: &str, n: &str, k: usize| {
            format!(
                "for ({it} {v} = ({it}){}; {v} < {n}; {v} = {n} - {v} > ({it}){} ? {v} + ({it}){} : {n})",
                dialect.group(k),
                dialect.groups(k),
                dialect.groups(k)
            )
        };
        let mut depth = 1;
        let ind = |d: usize| "    ".repeat(d);
        if !rest.is_empty() {
            let count = bare(&em.value(self.count)?);
            let _ = writeln!(out, "    const {it} count = {count};");
            let _ = writeln!(out, "    {} {{", stride("z", "count", 2));
            depth += 1;
            for (k, e) in &self.indices {
                let v = bare(&em.value(*e)?);
                let _ = writeln!(out, "{}const {it} i{k} = {v};", ind(depth));
            }
        }
        let tests = Desc::valid(em, plan, &[a, b])?;
        let ok = if tests.is_empty() {
            None
        } else {
            let _ = writeln!(out, "{}const int ok = {};", ind(depth), tests.join(" && "));
            Some("ok")
        };
        let _ = writeln!(out, "{}{} {{", ind(depth), stride("ta", "na", 1));
        let _ = writeln!(out, "{}{} {{", ind(depth + 1), stride("tb", "nb", 0));
        let d = depth + 2;
        let _ = writeln!(
            out,
            "{}const {it} a0 = ta * {TILE}, b0 = tb * {TILE};",
            ind(d)
        );
        // The masks of the tile loops, tested per element before the offset is read.
        let mut bounds = Vec::new();
        for k in [a, b] {
            let l = &loops[k];
            if l.lo != Expr::from(0) {
                bounds.push(format!("i{k} >= {}", paren(&em.value(l.lo)?)));
            }
            if l.hi != l.extent {
                bounds.push(format!("i{k} < {}", paren(&em.value(l.hi)?)));
            }
        }
        let inside = (!bounds.is_empty()).then(|| bounds.join(" && "));
        let offset = bare(&em.value(plan.accesses()[0].offset)?);
        let dst = bare(&em.value(self.dst)?);
        // Read: x along `a` (the source's unit step).
        let _ = writeln!(
            out,
            "{}for ({it} r = ly; r < {TILE}; r += {ROWS}) {{",
            ind(d)
        );
        let guard = match ok {
            Some(ok) => format!("{ok} && lx < ea - a0 && r < eb - b0"),
            None => "lx < ea - a0 && r < eb - b0".to_string(),
        };
        let _ = writeln!(out, "{}if ({guard}) {{", ind(d + 1));
        let _ = writeln!(
            out,
            "{}const {it} i{a} = a0 + lx, i{b} = b0 + r;",
            ind(d + 2)
        );
        match &inside {
            None => {
                let _ = writeln!(out, "{}tile[r][lx] = src[{offset}];", ind(d + 2));
            }
            Some(t) => {
                let _ = writeln!(out, "{}if ({t}) tile[r][lx] = src[{offset}];", ind(d + 2));
            }
        }
        let _ = writeln!(out, "{}}}", ind(d + 1));
        let _ = writeln!(out, "{}}}", ind(d));
        let _ = writeln!(out, "{}{}", ind(d), dialect.barrier());
        // Write: x along `b` (the output's unit step).
        let _ = writeln!(
            out,
            "{}for ({it} r = ly; r < {TILE}; r += {ROWS}) {{",
            ind(d)
        );
        let _ = writeln!(out, "{}if (r < ea - a0 && lx < eb - b0) {{", ind(d + 1));
        let _ = writeln!(
            out,
            "{}const {it} i{a} = a0 + r, i{b} = b0 + lx;",
            ind(d + 2)
        );
        let value = match (ok, &inside) {
            (None, None) => "tile[lx][r]".to_string(),
            (Some(ok), None) => format!("{ok} ? tile[lx][r] : pad"),
            (None, Some(t)) => format!("({t}) ? tile[lx][r] : pad"),
            (Some(ok), Some(t)) => format!("({ok} && {t}) ? tile[lx][r] : pad"),
        };
        let _ = writeln!(out, "{}dst[{dst}] = {value};", ind(d + 2));
        let _ = writeln!(out, "{}}}", ind(d + 1));
        let _ = writeln!(out, "{}}}", ind(d));
        let _ = writeln!(out, "{}{}", ind(d), dialect.barrier());
        let _ = writeln!(out, "{}}}", ind(depth + 1));
        let _ = writeln!(out, "{}}}", ind(depth));
        if !rest.is_empty() {
            let _ = writeln!(out, "    }}");
        }
        Ok(())
    }
}

fn counter_name(form: &Form) -> &'static str {
    match form {
        Form::Gather { .. } => "g",
        Form::Tiled { .. } => "z",
    }
}

fn elem_size(t: &str) -> usize {
    match t {
        "long" | "long long" | "double" => 8,
        "int" | "float" => 4,
        "uchar" | "unsigned char" => 1,
        _ => 2,
    }
}

/// A counter symbol over `0..count` (over `0..=i64::MAX - 1` when that range cannot be
/// declared; the kernel still never runs it past `count`).
fn counter(name: &str, count: Expr) -> Result<Expr> {
    match SymbolSpec::new(name).below(count).build() {
        Ok(s) => Ok(s),
        Err(_) => Ok(SymbolSpec::new(name).below(i64::MAX).build()?),
    }
}

/// The step of `offset` along the loop index `s`.
fn step(cx: &Scope, offset: Expr, s: Expr) -> Expr {
    let moved = offset.substitute(|x| (x == s).then_some(s + 1));
    cx.simplify(moved - offset)
}

/// The tile loops `(a, b, rest)` of rule 2, if the plan has them.
fn tile_axes(cx: &Scope, plan: &Plan) -> Option<(usize, usize, Vec<usize>)> {
    let loops = plan.loops();
    let n = loops.len();
    if n < 2 {
        return None;
    }
    let off = plan.accesses()[0].offset;
    let is = |e: Expr, v: i64| cx.prove_eq(e, Expr::from(v)).is_true();
    let b = n - 1;
    let sb = step(cx, off, loops[b].index);
    if is(sb, 0) || is(sb, 1) || is(sb, -1) {
        return None;
    }
    let a = (0..b).rev().find(|&k| {
        let sa = step(cx, off, loops[k].index);
        is(sa, 1) || is(sa, -1)
    })?;
    let (ia, ib) = (loops[a].index, loops[b].index);
    let free = loops.iter().flat_map(|l| &l.predicates).all(|c| {
        let syms = c.symbols();
        !syms.contains(&ia) && !syms.contains(&ib)
    });
    if !free {
        return None;
    }
    let rest = (0..n).filter(|&k| k != a && k != b).collect();
    Some((a, b, rest))
}

/// The vector width of rule 3 for `elem` and what its lanes read: 4 or 2 where proven
/// (at most 16 bytes), else 1.
fn vector_width(cx: &Scope, plan: &Plan, elem: ElemType) -> (u32, Lanes) {
    let scalar = (1, Lanes::Consecutive);
    let Some(last) = plan.loops().last() else {
        return scalar;
    };
    if !last.is_full() || !last.predicates.is_empty() {
        return scalar;
    }
    let math = |w: i64| LaneMath {
        cx,
        i: last.index,
        w: BigInt::from(w),
    };
    let off = plan.accesses()[0].offset;
    for w in [4i64, 2] {
        if w as usize * elem.size() > 16 || !math(w).divides(last.extent) {
            continue;
        }
        let m = math(w);
        let zero = BigInt::from(0);
        match m.slope(off) {
            Some(k) if k == BigInt::from(1) && m.residue(off) == Some(zero.clone()) => {
                return (w as u32, Lanes::Consecutive);
            }
            Some(k) if k == zero => return (w as u32, Lanes::Broadcast),
            _ => {}
        }
    }
    scalar
}

/// The lanes of a vector along loop index `i`: `i = w*q + t` with `t < w`.
struct LaneMath<'a> {
    cx: &'a Scope,
    i: Expr,
    w: BigInt,
}

impl LaneMath<'_> {
    /// Whether `w` is proven to divide `e`.
    fn divides(&self, e: Expr) -> bool {
        self.residue(e) == Some(BigInt::from(0))
            || self
                .cx
                .prove_eq(self.cx.simplify(e.floor_mod(self.w.clone())), Expr::from(0))
                .is_true()
    }

    /// `Some(k)` when `e(w*q + t) = e(w*q) + k*t` for every `q` and `t < w`.
    fn slope(&self, e: Expr) -> Option<BigInt> {
        let zero = BigInt::from(0);
        if !e.symbols().contains(&self.i) {
            return Some(zero);
        }
        match e.kind() {
            ExprKind::Symbol(_) => Some(BigInt::from(1)),
            ExprKind::Sum { terms, .. } => terms
                .iter()
                .try_fold(zero, |acc, (m, k)| Some(acc + k * self.slope(*m)?)),
            // Constant across the lanes when every factor is.
            ExprKind::Product(factors) => {
                for (f, _) in factors {
                    if self.slope(f)? != zero {
                        return None;
                    }
                }
                Some(zero)
            }
            // With `a(w*q) = 0 (mod w)`, `a` rising by `t < w` and `w | d`, `a // d`
            // stays and `a % d` rises by `t`: `a(w*q) % d <= d - w`.
            ExprKind::FloorDiv(a, d) | ExprKind::FloorMod(a, d) => {
                let (sa, sd) = (self.slope(a)?, self.slope(d)?);
                if sd != zero {
                    return None;
                }
                if sa == zero {
                    return Some(zero);
                }
                let positive = self.cx.prove(d, CmpOp::Ge, Expr::from(1)).is_true();
                if sa != BigInt::from(1)
                    || !positive
                    || self.residue(d) != Some(zero.clone())
                    || self.residue(a) != Some(zero.clone())
                {
                    return None;
                }
                Some(if matches!(e.kind(), ExprKind::FloorDiv(..)) {
                    zero
                } else {
                    BigInt::from(1)
                })
            }
            _ => None,
        }
    }

    /// The residue of `e` modulo `w` at the start of a vector (`i` a multiple of `w`),
    /// `None` when unknown.
    fn residue(&self, e: Expr) -> Option<BigInt> {
        let w = &self.w;
        let norm = |x: BigInt| ((x % w) + w) % w;
        let zero = BigInt::from(0);
        if e == self.i {
            return Some(zero);
        }
        let known = match e.kind() {
            ExprKind::Const(c) => Some(norm(c)),
            ExprKind::Sum { terms, constant } => {
                let mut acc = norm(constant);
                let mut all = true;
                for (m, k) in &terms {
                    if norm(k.clone()) == zero {
                        continue;
                    }
                    match self.residue(*m) {
                        Some(r) => acc = norm(acc + k * r),
                        None => all = false,
                    }
                }
                all.then_some(acc)
            }
            ExprKind::Product(factors) => {
                let mut acc = Some(BigInt::from(1));
                for (f, p) in factors {
                    match self.residue(f) {
                        Some(r) if r == zero => return Some(zero),
                        Some(r) => acc = acc.map(|a| norm(a * r.pow(p))),
                        None => acc = None,
                    }
                }
                acc
            }
            // `a - d*(a // d)`: the residue of `a` when `w | d`.
            ExprKind::FloorMod(a, d) if self.residue(d) == Some(zero.clone()) => self.residue(a),
            _ => None,
        };
        known.or_else(|| {
            let c = self.cx.congruence(e);
            (c.m.clone() % w == zero).then(|| norm(c.r))
        })
    }
}
