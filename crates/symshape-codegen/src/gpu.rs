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
//!    dimension (the first where rule 6 puts it there), their bounds and predicates
//!    decided once per counter value. The output
//!    offset is written over symbols that run each loop's whole axis, since masked
//!    elements are written too.
//! 3. Otherwise one work-item writes `w` consecutive output elements, in a grid-stride
//!    loop; `w` is 4 or 2 where the innermost loop's extent is a proven multiple of
//!    `w` (the lanes then share every other index). The lanes load one vector where
//!    the loop is whole without predicates and the offset of `w*q + t` is proven to be
//!    the offset of `w*q` plus `t` (a multiple of `w`), minus `t` (the lowest lane a
//!    multiple of `w`), or constant; otherwise each lane reads its own element (with
//!    its own bounds and predicates) and only the store is a vector. Where these
//!    facts hold only for some bindings, the vector loop runs under a guard of
//!    launch-invariant conditions (`e % w == 0` of the row's extent or of symbols,
//!    the fewest the proof needs), tested once; elsewhere the per-element loop runs.
//!    The proofs are made in the scope with the guard assumed, so each loop is exact
//!    wherever it runs.
//! 4. The index width is 32 bits exactly when every expression the kernel evaluates
//!    (counts, extents, bounds, indices, offsets, predicates, each intermediate) is
//!    proven to fit in `i32` under the symbols' ranges; else 64 bits, native where
//!    proven, otherwise in wrapping unsigned 64-bit arithmetic that is exact wherever
//!    the value fits (division, `min`, `max` and comparisons take operands whose
//!    values are proven to fit in `i64`, or the renderer refuses).
//! 5. Counters never overflow: a grid-stride step is taken only while it stays below
//!    the count, and tile corners are compared as `lx < ea - a0`.
//! 6. Every grid dimension is at least 1 and at most 65535 for every binding, except
//!    a tiled kernel's rest counter where it runs along x, first (up to `2^31 - 1`
//!    groups, the tiles along `b` and `a` on y and z): where its unit step is proven
//!    to step no further than `b` in the source and `a` in the output. Where the output
//!    is empty every grid dimension is 1 (one group that writes nothing).

use std::fmt::Write as _;

use symshape::{BigInt, CmpOp, Cond, Expr, ExprKind, Scope, SymbolSpec};

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
/// The most groups along grid dimension x (CUDA's limit for x, `2^31 - 1`).
const MAX_GROUPS_X: i64 = 2_147_483_647;

/// How a kernel is launched.
///
/// `grid[k]` is the number of work-groups (OpenCL) or blocks (CUDA) along `k`, an
/// expression over the declared symbols, at least 1 for every binding that passes the
/// plan's checks, and at most 65535 along y and z and `2^31 - 1` along x (CUDA's
/// limits); `block[k]` is the number of work-items (threads) per group
/// along `k`. OpenCL's global size along `k` is `grid[k] * block[k]`. `shared_bytes` is
/// the local (shared) memory the kernel declares statically: nothing needs to be
/// passed for it at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    let bodies = |desc: &Desc| match desc.body(cx, plan, dialect, IndexWidth::I32, t) {
        Ok(b) => Ok((IndexWidth::I32, b)),
        Err(_) => desc
            .body(cx, plan, dialect, IndexWidth::I64, t)
            .map(|b| (IndexWidth::I64, b)),
    };
    let mut desc = Desc::of(cx, plan, elem)?;
    let (index, body) = match bodies(&desc) {
        // The guard never widens the index: where only its conditions need 64 bits,
        // the per-element gather is kept in 32.
        Ok((IndexWidth::I64, b)) if desc.fallback.is_some() => {
            let plain = Desc::gather(cx, plan, 1, Lanes::Consecutive, Vec::new())?;
            match plain.body(cx, plan, dialect, IndexWidth::I32, t) {
                Ok(narrow) => {
                    desc = plain;
                    (IndexWidth::I32, narrow)
                }
                Err(_) => (IndexWidth::I64, b),
            }
        }
        Ok(b) => b,
        // A guard whose operands are not proven to fit: no guarded vector path.
        Err(_) if desc.fallback.is_some() => {
            desc = Desc::gather(cx, plan, 1, Lanes::Consecutive, Vec::new())?;
            bodies(&desc)?
        }
        Err(e) => return Err(e),
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
    /// over `counter`, where every condition of `guard` holds at the binding (tested
    /// once, before the loop); elsewhere the per-element loop of `fallback`.
    Gather {
        vector: u32,
        lanes: Lanes,
        guard: Vec<Cond>,
    },
    /// Loops `a` (unit source step) and `b` (innermost) in tiles; `rest` the other loops,
    /// in order, indexed by `counter`, which runs along grid x where `rest_first`.
    Tiled {
        a: usize,
        b: usize,
        rest: Vec<usize>,
        rest_first: bool,
    },
}

/// What the lanes of a vector read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lanes {
    /// Consecutive source elements, the first a multiple of the width.
    Consecutive,
    /// One source element, broadcast.
    Broadcast,
    /// Consecutive source elements in reverse order, the last a multiple of the width.
    Reversed,
    /// Each lane its own element, read one at a time (masked, strided or any other
    /// row): only the store is a vector.
    Gathered,
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
    /// The per-element gather a guarded vector gather runs where its guard fails.
    fallback: Option<Box<Desc>>,
}

impl Desc {
    fn of(cx: &Scope, plan: &Plan, elem: ElemType) -> Result<Desc> {
        if let Some((a, b, rest)) = tile_axes(cx, plan) {
            return Desc::tiled(cx, plan, elem, a, b, rest);
        }
        let (w, lanes, guard) = vector_width(cx, plan, elem);
        let fallback = if guard.is_empty() {
            None
        } else {
            Some(Box::new(Desc::gather(
                cx,
                plan,
                1,
                Lanes::Consecutive,
                Vec::new(),
            )?))
        };
        let mut desc = Desc::gather(cx, plan, w, lanes, guard)?;
        desc.fallback = fallback;
        Ok(desc)
    }

    fn gather(cx: &Scope, plan: &Plan, w: u32, lanes: Lanes, guard: Vec<Cond>) -> Result<Desc> {
        let count = cx.simplify(plan.numel().floor_div(i64::from(w))).check()?;
        let g = counter("__g", count)?;
        let first = g * i64::from(w);
        let mut indices = Vec::new();
        for (k, l) in plan.loops().iter().enumerate() {
            let q = first.floor_div(l.axis.steps);
            let i = if k == 0 {
                q
            } else {
                q.floor_mod(l.axis.extent)
            };
            indices.push((k, cx.simplify(i).check()?));
        }
        let groups = cx.simplify(count.ceil_div(i64::from(BLOCK)).min(MAX_GROUPS).max(1));
        Ok(Desc {
            form: Form::Gather {
                vector: w,
                lanes,
                guard,
            },
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
            fallback: None,
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
        let count: Expr = rest.iter().map(|&k| loops[k].axis.extent).product();
        let count = cx.simplify(count).check()?;
        let z = counter("__z", count)?;
        let mut indices = Vec::new();
        let mut stride = Expr::from(1);
        for &k in rest.iter().rev() {
            let q = z.floor_div(stride);
            let i = if k == rest[0] {
                q
            } else {
                q.floor_mod(loops[k].axis.extent)
            };
            indices.push((k, cx.simplify(i).check()?));
            stride *= loops[k].axis.extent;
        }
        indices.reverse();
        let whole = loops
            .iter()
            .enumerate()
            .map(|(k, l)| counter(&format!("__w{k}"), l.axis.extent))
            .collect::<Result<Vec<_>>>()?;
        let dst: Expr = loops
            .iter()
            .zip(&whole)
            .map(|(l, &w)| w * l.axis.steps)
            .sum();
        // Every grid entry is 1 where the output is empty: an empty tile axis or an empty
        // counter empties the others, which may still be large.
        let (ea, eb) = (loops[a].axis.extent, loops[b].axis.extent);
        let tiles = |e: Expr| cx.simplify(e.ceil_div(i64::from(TILE)).min(MAX_GROUPS).max(1));
        let (tb, ta) = (
            tiles(eb * ea.min(1) * count.min(1)),
            tiles(ea * eb.min(1) * count.min(1)),
        );
        let full = count * ea.min(1) * eb.min(1);
        let rest_first = rest_first(cx, plan, a, b, &rest);
        let grid = if rest.is_empty() {
            [tb, ta, Expr::from(1)]
        } else if rest_first {
            [cx.simplify(full.min(MAX_GROUPS_X).max(1)), tb, ta]
        } else {
            [tb, ta, cx.simplify(full.min(MAX_GROUPS).max(1))]
        };
        let cols = u64::from(TILE) + 1;
        Ok(Desc {
            form: Form::Tiled {
                a,
                b,
                rest,
                rest_first,
            },
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
            fallback: None,
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
                lanes,
                guard,
            } => {
                let what = match lanes {
                    Lanes::Consecutive => "",
                    Lanes::Broadcast => " of one source element",
                    Lanes::Reversed => " of consecutive source elements reversed",
                    Lanes::Gathered => " read one by one",
                };
                let mut text = format!("one work-item per {vector} elements{what}");
                if !guard.is_empty() {
                    let conds: Vec<String> = guard.iter().map(ToString::to_string).collect();
                    let _ = write!(
                        text,
                        " where {}, else one work-item per element",
                        conds.join(" and ")
                    );
                }
                text
            }
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
            em.known.extend([l.axis.extent, l.axis.steps]);
        }
        // An output offset and the counter are below the element count.
        em.known.extend([self.dst, self.counter]);
        if let Some(f) = &self.fallback {
            em.known.extend([f.dst, f.counter]);
            em.names.insert(f.counter, Name::Local("g".to_string()));
        }
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
            Form::Gather {
                vector,
                lanes,
                guard,
            } => match &self.fallback {
                None => {
                    self.gather_body(&mut em, plan, dialect, (*vector, *lanes), t, &mut body)?
                }
                Some(f) => {
                    // The guard is launch-invariant: every work-item takes the same path.
                    let conds = guard
                        .iter()
                        .map(|c| em.cond(*c).map(|x| paren(&x)))
                        .collect::<Result<Vec<_>>>()?;
                    let mut vector_loop = String::new();
                    self.gather_body(
                        &mut em,
                        plan,
                        dialect,
                        (*vector, *lanes),
                        t,
                        &mut vector_loop,
                    )?;
                    let mut scalar_loop = String::new();
                    f.gather_body(
                        &mut em,
                        plan,
                        dialect,
                        (1, Lanes::Consecutive),
                        t,
                        &mut scalar_loop,
                    )?;
                    let _ = writeln!(body, "    if ({}) {{", conds.join(" && "));
                    body.push_str(&indent(&vector_loop));
                    body.push_str("    } else {\n");
                    body.push_str(&indent(&scalar_loop));
                    body.push_str("    }\n");
                }
            },
            Form::Tiled {
                a,
                b,
                rest,
                rest_first,
            } => {
                let dims = tile_dims(*rest_first);
                self.tiled_body(&mut em, plan, dialect, (*a, *b, rest, dims), t, &mut body)?;
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
    ///
    /// `fixed` gives the loops whose indices are compile-time constants: their tests
    /// are decided here, or reduced to tests of the parameters, so that no test is a
    /// constant operand of `&&` (which OpenCL compilers warn of). A test that always
    /// holds is left out; one that never does makes the tests a single `0`.
    fn valid(
        em: &mut Emitter<'_>,
        plan: &Plan,
        skip: &[usize],
        fixed: &[(usize, Expr)],
    ) -> Result<Vec<String>> {
        let cx = em.cx;
        let loops = plan.loops();
        let value_of = |i: Expr| {
            fixed
                .iter()
                .find(|&&(k, _)| loops[k].index == i)
                .map(|&(_, v)| v)
        };
        let at = |c: Cond| cx.simplify_cond(c.substitute(value_of)).check();
        // Each test as `(k, op, bound)`, `i{k} op bound`, or as a condition still to be
        // decided; rendered in this order afterwards.
        let mut conds: Vec<std::result::Result<(usize, &str, Expr), Cond>> = Vec::new();
        for &c in plan.prelude() {
            conds.push(Err(c));
        }
        for (k, l) in plan.loops().iter().enumerate() {
            if skip.contains(&k) {
                continue;
            }
            let known = value_of(l.index);
            if l.lo != Expr::from(0) {
                conds.push(match known {
                    Some(v) => Err(at(v.ge(l.lo))?),
                    None => Ok((k, ">=", l.lo)),
                });
            }
            if l.hi != l.axis.extent {
                conds.push(match known {
                    Some(v) => Err(at(v.lt(l.hi))?),
                    None => Ok((k, "<", l.hi)),
                });
            }
            for &c in &l.predicates {
                conds.push(Err(if fixed.is_empty() { c } else { at(c)? }));
            }
        }
        let mut tests = Vec::new();
        for c in conds {
            match c {
                Ok((k, op, e)) => tests.push(format!("i{k} {op} {}", paren(&em.value(e)?))),
                Err(c) => match c.as_bool() {
                    Some(true) => {}
                    Some(false) => return Ok(vec!["0".to_string()]),
                    None => tests.push(paren(&em.cond(c)?)),
                },
            }
        }
        Ok(tests)
    }

    /// The loops whose indices the counter sets to compile-time constants, with their
    /// values.
    fn fixed(&self, plan: &Plan) -> Vec<(usize, Expr)> {
        self.indices
            .iter()
            .filter(|(k, e)| e.is_const() && *k < plan.loops().len())
            .copied()
            .collect()
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
        // Lanes read one by one share every index but the innermost, `b{last} + t`.
        let last = plan.loops().len().saturating_sub(1);
        let one_by_one = w > 1 && lanes == Lanes::Gathered;
        for (k, e) in &self.indices {
            let v = bare(&em.value(*e)?);
            let name = if one_by_one && *k == last { 'b' } else { 'i' };
            let _ = writeln!(out, "        const {it} {name}{k} = {v};");
        }
        let fixed = self.fixed(plan);
        // Lanes read one by one test their own innermost index where it is constant.
        let lane_tests = match fixed.iter().find(|(k, _)| one_by_one && *k == last) {
            Some(&(_, b)) => (0..i64::from(w))
                .map(|lane| {
                    let mut at = fixed.clone();
                    at.retain(|(k, _)| *k != last);
                    at.push((last, em.cx.simplify(b + lane).check()?));
                    Desc::valid(em, plan, &[], &at)
                })
                .collect::<Result<Vec<_>>>()?,
            None => vec![Desc::valid(em, plan, &[], &fixed)?; w as usize],
        };
        let tests = lane_tests[0].clone();
        let offset = bare(&em.value(plan.accesses()[0].offset)?);
        let dst = bare(&em.value(self.dst)?);
        if one_by_one {
            let _ = writeln!(out, "        const {it} o = {dst};");
            let _ = writeln!(out, "        {}", dialect.lanes_decl(t, w));
            for (lane, tests) in (0..w).zip(&lane_tests) {
                let value = masked(tests, &format!("src[{offset}]"));
                let _ = writeln!(
                    out,
                    "        {{ const {it} i{last} = b{last} + {lane}; {} = {value}; }}",
                    dialect.lane(lane)
                );
            }
            let _ = writeln!(out, "        {}", dialect.lanes_store(w, "o"));
            let _ = writeln!(out, "    }}");
            return Ok(());
        }
        if w == 1 {
            let value = masked(&tests, &format!("src[{offset}]"));
            let _ = writeln!(out, "        dst[{dst}] = {value};");
        } else {
            let _ = writeln!(out, "        const {it} o = {dst};");
            let copy = match lanes {
                Lanes::Consecutive | Lanes::Gathered => {
                    dialect.vector_copy(w, "o", &paren(&offset))
                }
                Lanes::Broadcast => dialect.vector_fill(t, w, "o", &format!("src[{offset}]")),
                // Lane `t` reads `offset - t`: the vector starts `w - 1` below the
                // offset of lane 0, which is in the row, so the subtraction stays
                // within the index type and at or above 0.
                Lanes::Reversed => {
                    dialect.vector_reversed(w, "o", &format!("({} - {})", paren(&offset), w - 1))
                }
            };
            if tests.is_empty() {
                let _ = writeln!(out, "        {copy}");
            } else if never(&tests) {
                let _ = writeln!(out, "        {}", dialect.vector_fill(t, w, "o", "pad"));
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
        (a, b, rest, [gz, gb, ga]): (usize, usize, &[usize], [usize; 3]),
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
        let ea = bare(&em.value(loops[a].axis.extent)?);
        let eb = bare(&em.value(loops[b].axis.extent)?);
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
            let _ = writeln!(out, "    {} {{", stride("z", "count", gz));
            depth += 1;
            for (k, e) in &self.indices {
                let v = bare(&em.value(*e)?);
                let _ = writeln!(out, "{}const {it} i{k} = {v};", ind(depth));
            }
        }
        let tests = Desc::valid(em, plan, &[a, b], &self.fixed(plan))?;
        let ok = if tests.is_empty() {
            None
        } else {
            let _ = writeln!(out, "{}const int ok = {};", ind(depth), tests.join(" && "));
            Some("ok")
        };
        let _ = writeln!(out, "{}{} {{", ind(depth), stride("ta", "na", ga));
        let _ = writeln!(out, "{}{} {{", ind(depth + 1), stride("tb", "nb", gb));
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
            if l.hi != l.axis.extent {
                bounds.push(format!("i{k} < {}", paren(&em.value(l.hi)?)));
            }
        }
        let inside = (!bounds.is_empty()).then(|| bounds.join(" && "));
        let offset = bare(&em.value(plan.accesses()[0].offset)?);
        let dst = bare(&em.value(self.dst)?);
        // The rows of a tile each work-item moves, in a loop of constant trip count
        // (`ly < ROWS`), which compilers unroll so that its loads are in flight together.
        let rows = |out: &mut String, d: usize| {
            let _ = writeln!(
                out,
                "{}for ({it} rk = 0; rk < {}; rk++) {{",
                ind(d),
                TILE / ROWS
            );
            let _ = writeln!(out, "{}const {it} r = ly + {ROWS}*rk;", ind(d + 1));
        };
        // Read: x along `a` (the source's unit step).
        rows(out, d);
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
        rows(out, d);
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

/// The grid dimensions of a tiled kernel's rest counter, tiles along `b` and tiles
/// along `a`: `[0, 1, 2]` where the counter runs first, else `[2, 0, 1]`.
fn tile_dims(rest_first: bool) -> [usize; 3] {
    if rest_first {
        [0, 1, 2]
    } else {
        [2, 0, 1]
    }
}

/// Whether the rest counter of a tiled kernel runs along grid x, before the tiles: where
/// the innermost rest loop (the counter's unit step) is proven to step no further than
/// loop `b` in the source and loop `a` in the output, as the middle loop of a
/// `(2, 1, 0)` permute does. Groups of consecutive counter values, resident together,
/// then read and write neighbouring pieces of the same rows, where groups of consecutive
/// tiles would touch rows a whole plane apart; elsewhere (the outer loop of a
/// `(0, 2, 1)` permute) consecutive tiles are the nearer ones and the tiles stay first.
/// The counter may then need more groups than the tiles: dimension x allows `2^31 - 1`.
fn rest_first(cx: &Scope, plan: &Plan, a: usize, b: usize, rest: &[usize]) -> bool {
    let Some(&r) = rest.last() else {
        return false;
    };
    let loops = plan.loops();
    let off = plan.accesses()[0].offset;
    let zero = Expr::from(0);
    // The magnitude of `e`, where its sign is proven.
    let magnitude = |e: Expr| {
        if cx.prove(e, CmpOp::Ge, zero).is_true() {
            Some(e)
        } else if cx.prove(e, CmpOp::Le, zero).is_true() {
            Some(cx.simplify(-e))
        } else {
            None
        }
    };
    let le = |x: Expr, y: Expr| match (magnitude(x), magnitude(y)) {
        (Some(x), Some(y)) => cx.prove(x, CmpOp::Le, y).is_true(),
        _ => false,
    };
    le(step(cx, off, loops[r].index), step(cx, off, loops[b].index))
        && le(loops[r].axis.steps, loops[a].axis.steps)
}

/// `text` indented by one more level (four spaces a non-empty line).
fn indent(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("    {l}\n")
            }
        })
        .collect()
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

/// Most symbols a guarded vector path may ask to be multiples of the width; each
/// condition costs a few proofs, so the cost stays linear in them.
const MAX_GUARD_CANDIDATES: usize = 9;

/// `value` where every test holds, else `pad`: the tests decided (none left, or the
/// single `0` of a test that never holds) need no condition.
fn masked(tests: &[String], value: &str) -> String {
    if tests.is_empty() {
        value.to_string()
    } else if never(tests) {
        "pad".to_string()
    } else {
        format!("({}) ? {value} : pad", tests.join(" && "))
    }
}

/// Whether the tests of [`Desc::valid`] are the single `0` of a test that never holds.
fn never(tests: &[String]) -> bool {
    matches!(tests, [t] if t == "0")
}

/// The vector width of rule 3 for `elem`, what its lanes read, and the conditions it is
/// proven under: 4 or 2 where proven (at most 16 bytes), else 1. Lanes that load
/// vectors (consecutive, broadcast, reversed) come before lanes read one by one, and
/// a proof for every binding before one under conditions; conditions are
/// launch-invariant (`e % w == 0` of the row's extent or of a symbol), and as few as
/// the proof allows.
fn vector_width(cx: &Scope, plan: &Plan, elem: ElemType) -> (u32, Lanes, Vec<Cond>) {
    let scalar = (1, Lanes::Consecutive, Vec::new());
    let Some(last) = plan.loops().last() else {
        return scalar;
    };
    let widths: Vec<i64> = [4i64, 2]
        .into_iter()
        .filter(|&w| w as usize * elem.size() <= 16)
        .collect();
    let free: Vec<Option<Lanes>> = widths.iter().map(|&w| lanes_at(cx, plan, w)).collect();
    let loads = |l: Lanes| l != Lanes::Gathered;
    for (k, &w) in widths.iter().enumerate() {
        if let Some(l) = free[k].filter(|&l| loads(l)) {
            return (w as u32, l, Vec::new());
        }
    }
    let guarded: Vec<Option<(Lanes, Vec<Cond>)>> = widths
        .iter()
        .map(|&w| guarded_lanes(cx, plan, w, last.axis.extent))
        .collect();
    let ranked = [
        (true, true), // vector loads under a guard
        (false, false),
        (false, true),
    ];
    for (want_loads, with_guard) in ranked {
        for (k, &w) in widths.iter().enumerate() {
            let found = if with_guard {
                guarded[k].clone()
            } else {
                free[k].map(|l| (l, Vec::new()))
            };
            if let Some((l, g)) = found {
                if loads(l) == want_loads {
                    return (w as u32, l, g);
                }
            }
        }
    }
    scalar
}

/// The best lanes of width `w` under the conditions of a guard, and the fewest of
/// them that keep the proof. The row's extent a multiple of `w` comes first (lanes
/// read one by one need no more); lanes that load vectors may need the plan's symbols
/// to be multiples of `w` too. A condition that is already decided, contradicts the
/// scope or the conditions before it is left out.
fn guarded_lanes(cx: &Scope, plan: &Plan, w: i64, extent: Expr) -> Option<(Lanes, Vec<Cond>)> {
    let under = |conds: &[Cond]| -> Option<Scope> {
        let mut g = cx.clone();
        for &c in conds {
            if g.prove_cond(c).as_bool() == Some(false) {
                return None;
            }
            g.assume(c).ok()?;
        }
        Some(g)
    };
    let lanes = |conds: &[Cond]| under(conds).and_then(|g| lanes_at(&g, plan, w));
    let loads = |l: Option<Lanes>| l.is_some_and(|l| l != Lanes::Gathered);
    let open = |c: Cond| {
        let c = cx.simplify_cond(c);
        (c.as_bool().is_none()).then_some(c)
    };
    // The extent as the plan writes it, which the kernel knows to fit.
    let row: Vec<Cond> = open(extent.floor_mod(w).equals(0))
        .map(|_| extent.floor_mod(w).equals(0))
        .into_iter()
        .collect();
    let mut conds = row.clone();
    for &p in plan.params().iter().take(MAX_GUARD_CANDIDATES) {
        if loads(lanes(&conds)) {
            break;
        }
        if let Some(c) = open(p.floor_mod(w).equals(0)) {
            conds.push(c);
            if under(&conds).is_none() {
                conds.pop();
            }
        }
    }
    let best = lanes(&conds);
    if !loads(best) {
        let l = lanes(&row)?;
        return (!row.is_empty()).then_some((l, row));
    }
    // The fewest conditions: drop the latest first, so that the row's own condition
    // (the weakest) is the one kept.
    for k in (0..conds.len()).rev() {
        let mut fewer = conds.clone();
        fewer.remove(k);
        if lanes(&fewer) == best {
            conds = fewer;
        }
    }
    let best = best?;
    (!conds.is_empty()).then_some((best, conds))
}

/// What the lanes of a vector of width `w` read under `cx`, `None` where the row's
/// extent is not a proven multiple of `w` (the lanes of a vector then share every
/// index but the innermost). Masked rows and rows with predicates are read one by one.
fn lanes_at(cx: &Scope, plan: &Plan, w: i64) -> Option<Lanes> {
    let last = plan.loops().last()?;
    let m = LaneMath {
        cx,
        i: last.index,
        w: BigInt::from(w),
    };
    if !m.divides(last.axis.extent) {
        return None;
    }
    if !last.is_full() || !last.predicates.is_empty() {
        return Some(Lanes::Gathered);
    }
    let off = plan.accesses()[0].offset;
    let zero = BigInt::from(0);
    Some(match m.slope(off) {
        Some(k) if k == BigInt::from(1) && m.residue(off) == Some(zero.clone()) => {
            Lanes::Consecutive
        }
        Some(k) if k == zero => Lanes::Broadcast,
        Some(k) if k == BigInt::from(-1) && m.residue(off) == Some(BigInt::from(w - 1)) => {
            Lanes::Reversed
        }
        _ => Lanes::Gathered,
    })
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
