//! The scenario: a `LazyTensor` records view ops on a symbolic stack over an input `x` of
//! shape `[b, n, 8]` and prints traces and lowered index expressions; at run time `b` and `n`
//! come from the input's shape, each tensor is bound (plainly, then through a stack prepared
//! once), materialized, and checked element by element against a naive reference.

use std::error::Error;
use std::fmt::Write;

use symshape::{Bindings, Expr, Scope};
use symshape_kernels::{copy, materialize, ConcreteStack, ConcreteView, Output};
use symshape_view::{infer, BindCache, Lowered, Op, PreparedStack, Trace, View};

/// Attention heads, the width of one head, and the model width.
const HEADS: usize = 2;
const HEAD_DIM: usize = 4;
const WIDTH: usize = HEADS * HEAD_DIM;
/// What padded elements read: no input element is negative, so padding shows.
const PAD: f32 = -1.0;
/// The sliding-window length bound at run time.
const WINDOW: usize = 4;

type Res<T> = Result<T, Box<dyn Error>>;

/// A tensor that is a chain of view ops over the input buffer. Ops only record, into a
/// `symshape_view::Trace` whose stack is symbolic; no element is read until [`LazyTensor::realize`]
/// or [`Compiled::run`].
#[derive(Clone)]
pub struct LazyTensor {
    trace: Trace,
}

impl LazyTensor {
    /// The input: a row-major tensor of `shape`.
    pub fn input(cx: &Scope, shape: &[Expr]) -> Res<LazyTensor> {
        let trace = Trace::new(View::row_major(cx, shape)?);
        Ok(LazyTensor { trace })
    }

    /// The same input read through one more op; `self` is left as it was.
    fn record(&self, cx: &Scope, op: Op) -> Res<LazyTensor> {
        let mut trace = self.trace.clone();
        trace.apply(cx, &op)?;
        Ok(LazyTensor { trace })
    }

    /// Reads the elements row-major as `shape`.
    pub fn reshape(&self, cx: &Scope, shape: &[Expr]) -> Res<LazyTensor> {
        self.record(cx, Op::Reshape(shape.to_vec()))
    }

    /// Reorders the axes.
    pub fn permute(&self, cx: &Scope, axes: &[usize]) -> Res<LazyTensor> {
        self.record(cx, Op::Permute(axes.to_vec()))
    }

    /// Keeps `start..end` of every axis.
    pub fn shrink(&self, cx: &Scope, bounds: &[(Expr, Expr)]) -> Res<LazyTensor> {
        self.record(cx, Op::Shrink(bounds.to_vec()))
    }

    /// Adds `(before, after)` elements of padding to every axis.
    pub fn pad(&self, cx: &Scope, padding: &[(Expr, Expr)]) -> Res<LazyTensor> {
        self.record(cx, Op::Pad(padding.to_vec()))
    }

    /// Broadcasts size-1 axes to `shape`.
    pub fn expand(&self, cx: &Scope, shape: &[Expr]) -> Res<LazyTensor> {
        self.record(cx, Op::Expand(shape.to_vec()))
    }

    /// Reverses the listed axes.
    pub fn flip(&self, cx: &Scope, axes: &[usize]) -> Res<LazyTensor> {
        self.record(cx, Op::Flip(axes.to_vec()))
    }

    /// The symbolic shape.
    pub fn shape(&self) -> &[Expr] {
        self.trace.stack().shape()
    }

    /// `(offset, valid)` in loop indices `i0, i1, ...`: what a code generator emits.
    pub fn lower(&self, cx: &Scope) -> Res<Lowered> {
        Ok(self.trace.stack().lower(cx)?)
    }

    /// One-off run: binds the symbolic stack with `b` (every guard checked) and
    /// materializes it from `x`. Returns the bound stack and the values, row-major.
    pub fn realize(&self, cx: &Scope, b: &Bindings, x: &[f32]) -> Res<(ConcreteStack, Vec<f32>)> {
        let bound = self.trace.stack().bind(cx, b)?;
        let values = materialize(symshape_kernels::Input::new(x, &bound).pad(PAD))?.values;
        Ok((bound, values))
    }

    /// Compiles the stack once for [`Compiled::run`], the path for repeated runs.
    pub fn compile(&self, cx: &Scope) -> Res<Compiled> {
        let prepared = PreparedStack::new(cx, self.trace.stack())?;
        Ok(Compiled {
            cache: prepared.cache(),
            prepared,
            out: Vec::new(),
        })
    }
}

/// A lazy tensor prepared once and bound per run, reusing its scratch space and output
/// buffer.
pub struct Compiled {
    prepared: PreparedStack,
    cache: BindCache,
    out: Vec<f32>,
}

impl Compiled {
    /// Binds the symbols to their values in `b` and materializes from `x`.
    pub fn run(&mut self, b: &Bindings, x: &[f32]) -> Res<&[f32]> {
        let bound = self.prepared.bind_with(&mut self.cache, b)?;
        let numel = usize::try_from(bound.numel())?;
        self.out.resize(numel, PAD);
        let out_view = ConcreteView::contiguous(bound.shape())?;
        copy(
            symshape_kernels::Input::new(x, &bound).pad(PAD),
            Output::new(&mut self.out, &out_view),
        )?;
        Ok(&self.out)
    }
}

/// `[b, n, H*D]` to `[b, H, n, D]`: one head per slice of axis 1.
fn split_heads(cx: &Scope, x: &LazyTensor) -> Res<LazyTensor> {
    let [b, n, _] = dims(x)?;
    x.reshape(cx, &[b, n, Expr::constant(HEADS), Expr::constant(HEAD_DIM)])?
        .permute(cx, &[0, 2, 1, 3])
}

/// `[b, H, n, D]` back to `[b, n, H*D]`.
fn merge_heads(cx: &Scope, x: &LazyTensor) -> Res<LazyTensor> {
    let [b, _, n, _] = dims(x)?;
    x.permute(cx, &[0, 2, 1, 3])?
        .reshape(cx, &[b, n, Expr::constant(WIDTH)])
}

/// Token shift: position `t` reads position `t - 1`; position 0 reads padding.
fn shift(cx: &Scope, x: &LazyTensor) -> Res<LazyTensor> {
    let [b, n, w] = dims(x)?;
    let z = Expr::from(0);
    x.pad(cx, &[(z, z), (Expr::from(1), z), (z, z)])?
        .shrink(cx, &[(z, b), (z, n), (z, w)])
}

/// The last position, broadcast to every position: flip, keep the first, expand.
fn last_everywhere(cx: &Scope, x: &LazyTensor) -> Res<LazyTensor> {
    let [b, n, w] = dims(x)?;
    let z = Expr::from(0);
    x.flip(cx, &[1])?
        .shrink(cx, &[(z, b), (z, Expr::from(1)), (z, w)])?
        .expand(cx, &[b, n, w])
}

/// The last `len` positions, as sliding-window attention reads its keys.
fn window(cx: &Scope, x: &LazyTensor, len: Expr) -> Res<LazyTensor> {
    let [b, n, w] = dims(x)?;
    let z = Expr::from(0);
    x.shrink(cx, &[(z, b), (n - len, n), (z, w)])
}

fn dims<const N: usize>(x: &LazyTensor) -> Res<[Expr; N]> {
    let err = || format!("expected rank {N}, got rank {}", x.shape().len());
    Ok(x.shape().try_into().map_err(|_| err())?)
}

/// The run-time input `x[bi][t][c] = 100*bi + 10*t + c`, row-major `[b, n, WIDTH]`.
struct Input {
    b: usize,
    n: usize,
    data: Vec<f32>,
}

impl Input {
    fn new(b: usize, n: usize) -> Input {
        let data = table(&[b, n, WIDTH], |i| (100 * i[0] + 10 * i[1] + i[2]) as f32);
        Input { b, n, data }
    }

    fn at(&self, bi: usize, t: usize, c: usize) -> f32 {
        self.data[(bi * self.n + t) * WIDTH + c]
    }
}

/// The values of `shape`, row-major: `f` of every index, counted out one by one.
fn table(shape: &[usize], f: impl Fn(&[usize]) -> f32) -> Vec<f32> {
    let mut out = Vec::new();
    let mut idx = vec![0; shape.len()];
    while shape.iter().all(|&d| d > 0) {
        out.push(f(&idx));
        // The last axis moves fastest; carry into the axes before it.
        let Some(axis) = (0..shape.len()).rev().find(|&a| idx[a] + 1 < shape[a]) else {
            break;
        };
        idx[axis] += 1;
        idx[axis + 1..].fill(0);
    }
    out
}

/// A case's expected output shape for the input.
type Shape = fn(&Input) -> Vec<usize>;
/// A case's expected element at an index, read from the input the naive way.
type Elem = fn(&Input, &[usize]) -> f32;

/// Checks `got` against `want` element by element, naming the first difference.
fn compare(what: &str, got: &[f32], want: &[f32]) -> Res<()> {
    match (0..got.len().max(want.len())).find(|&k| got.get(k) != want.get(k)) {
        None => Ok(()),
        Some(k) => {
            let show = |v: Option<&f32>| v.map_or("missing".to_string(), f32::to_string);
            let (g, w) = (show(got.get(k)), show(want.get(k)));
            Err(format!("{what}: element {k} is {g}, reference says {w}").into())
        }
    }
}

/// Runs the scenario, writing its report to `out`; an error on any mismatch.
pub fn run(out: &mut impl Write) -> Res<()> {
    // Compile time: declare the symbols, record the ops once for every size.
    let mut cx = Scope::new();
    let b = cx.declare_str("b 1..=64")?;
    let n = cx.declare_str("n 1..=4096")?;
    let w = cx.declare_str("w 1..=256")?;
    let x = LazyTensor::input(&cx, &[b, n, Expr::constant(WIDTH)])?;
    let heads = split_heads(&cx, &x)?;
    let cases: [(&str, LazyTensor, Shape, Elem); 5] = [
        (
            "heads",
            heads.clone(),
            |x| vec![x.b, HEADS, x.n, HEAD_DIM],
            |x, i| x.at(i[0], i[2], i[1] * HEAD_DIM + i[3]),
        ),
        (
            "heads_flat",
            heads.reshape(
                &cx,
                &[b, Expr::constant(HEADS), n * Expr::constant(HEAD_DIM)],
            )?,
            |x| vec![x.b, HEADS, x.n * HEAD_DIM],
            |x, i| x.at(i[0], i[2] / HEAD_DIM, i[1] * HEAD_DIM + i[2] % HEAD_DIM),
        ),
        (
            "shifted",
            merge_heads(&cx, &split_heads(&cx, &shift(&cx, &x)?)?)?,
            |x| vec![x.b, x.n, WIDTH],
            |x, i| match i[1] {
                0 => PAD,
                t => x.at(i[0], t - 1, i[2]),
            },
        ),
        (
            "last",
            last_everywhere(&cx, &x)?,
            |x| vec![x.b, x.n, WIDTH],
            |x, i| x.at(i[0], x.n - 1, i[2]),
        ),
        (
            "window",
            window(&cx, &x, w)?,
            |x| vec![x.b, WINDOW, WIDTH],
            |x, i| x.at(i[0], x.n - WINDOW + i[1], i[2]),
        ),
    ];
    let mut compiled = Vec::new();
    for (name, t, ..) in &cases {
        writeln!(out, "== {name}\n{}", t.trace)?;
        writeln!(out, "-- lowered\n{}\n", t.lower(&cx)?)?;
        compiled.push(t.compile(&cx)?);
    }

    // Run time: the input's shape gives b and n; the window length is a setting.
    for seq in [5, 9, 3] {
        let input = Input::new(2, seq);
        let concrete = [2, seq as i64, WIDTH as i64];
        let mut bindings = Bindings::new();
        let found = infer(&cx, x.shape(), &concrete, &mut bindings)?;
        cx.bind(&mut bindings, "w", WINDOW as i64)?;
        writeln!(out, "== run: x is {concrete:?}, so {found}; w = {WINDOW}")?;
        for ((name, t, shape, elem), prepared) in cases.iter().zip(&mut compiled) {
            if seq < WINDOW && *name == "window" {
                // A window longer than the sequence breaks the guard the shrink recorded.
                let plain = t.realize(&cx, &bindings, &input.data).err();
                let again = prepared.run(&bindings, &input.data).err();
                let (Some(plain), Some(again)) = (plain, again) else {
                    return Err("window: a bind past the guard n - w >= 0 succeeded".into());
                };
                writeln!(out, "{name}: refused\n  bind: {plain}\n  prepared: {again}")?;
                continue;
            }
            let want = table(&shape(&input), |i| elem(&input, i));
            let (layout, got) = t.realize(&cx, &bindings, &input.data)?;
            let what = format!("{name} with {found}");
            let want_shape: Vec<i64> = shape(&input).iter().map(|&d| d as i64).collect();
            if layout.shape() != want_shape {
                return Err(format!("{what}: shape {:?}", layout.shape()).into());
            }
            compare(&format!("{what}, bound"), &got, &want)?;
            let again = prepared.run(&bindings, &input.data)?;
            compare(&format!("{what}, prepared"), again, &want)?;
            writeln!(out, "{name}: {}", layout.to_string().replace('\n', " <- "))?;
        }
    }
    writeln!(out, "all values match the reference, bound and prepared")?;
    Ok(())
}
