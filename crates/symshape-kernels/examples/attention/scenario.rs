//! The scenario: one causal attention block with a KV cache, as a framework front end traces
//! it. Symbols: batch `b`, new tokens `s`, cache position `p` (keys and values hold `p + s`
//! positions). Every view is recorded once on a symbolic `Trace` (head split, broadcasts for
//! the score and value products, a causal mask built from pad, expand, reshape, shrink and
//! flip, a causal depthwise conv1d from pad and unfold, the head merge) and lowered. At run
//! time the symbols come from the input shapes; each view is bound plainly and through a
//! `PreparedStack`, the two bindings are compared, and the block runs on real `f32` buffers
//! with symshape-kernels. The result is checked against a naive reference written with loops.

use std::error::Error;
use std::fmt::Write;

use symshape::{Bindings, Expr, Scope};
use symshape_kernels::{
    materialize, reduce, zip, ConcreteStack, Dense, Input, ReduceConfig, ReduceOp,
};
use symshape_view::{infer, ConcreteView, Op, PreparedStack, Trace, View};

/// Heads, the width of one head, the model width and the conv kernel length.
const HEADS: usize = 2;
const HEAD_DIM: usize = 4;
const WIDTH: usize = HEADS * HEAD_DIM;
const KERNEL: usize = 3;

type Res<T> = Result<T, Box<dyn Error>>;

/// A traced view: a name, the trace of ops over a row-major input, and the stack
/// prepared once from it.
struct Traced {
    name: &'static str,
    /// The shape of the input the ops read.
    input: Vec<Expr>,
    trace: Trace,
    prepared: PreparedStack,
}

impl Traced {
    /// Records `ops` over a row-major input of `shape`.
    fn new(cx: &Scope, name: &'static str, shape: &[Expr], ops: &[Op]) -> Res<Traced> {
        let mut trace = Trace::new(View::row_major(cx, shape)?);
        for op in ops {
            trace.apply(cx, op)?;
        }
        let prepared = PreparedStack::new(cx, trace.stack())?;
        Ok(Traced {
            name,
            input: shape.to_vec(),
            trace,
            prepared,
        })
    }

    /// Binds plainly and through the prepared stack; both must give the same offsets.
    fn bind(&self, cx: &Scope, b: &Bindings) -> Res<ConcreteStack> {
        let plain = self.trace.stack().bind(cx, b)?;
        let prepared = self.prepared.bind_with(&mut self.prepared.cache(), b)?;
        if plain.offsets()? != prepared.offsets()? {
            return Err(format!("{}: plain and prepared bindings differ", self.name).into());
        }
        Ok(plain)
    }

    /// Binds and materializes from `buf`; masked elements read `pad`.
    fn run(&self, cx: &Scope, b: &Bindings, buf: &[f32], pad: f32) -> Res<Dense<f32>> {
        let bound = self.bind(cx, b)?;
        Ok(materialize(Input::new(buf, &bound).pad(pad))?)
    }
}

fn c(v: usize) -> Expr {
    Expr::constant(v)
}

/// Every view of the block, traced once for all sizes.
struct Block {
    q: Traced,
    k: Traced,
    mask: Traced,
    probs: Traced,
    v: Traced,
    merge: Traced,
    conv: Traced,
}

fn trace_block(cx: &Scope, b: Expr, s: Expr, p: Expr) -> Res<Block> {
    let len = p + s;
    let z = Expr::from(0);
    let heads = |n: Expr| {
        vec![
            Op::Reshape(vec![b, n, c(HEADS), c(HEAD_DIM)]),
            Op::Permute(vec![0, 2, 1, 3]),
        ]
    };
    let prod = vec![b, c(HEADS), s, len, c(HEAD_DIM)];
    // Queries [b, H, s, 1, D] and keys [b, H, 1, p + s, D], both broadcast to the product.
    let mut q = heads(s);
    q.extend([
        Op::Reshape(vec![b, c(HEADS), s, c(1), c(HEAD_DIM)]),
        Op::Expand(prod.clone()),
    ]);
    let mut k = heads(len);
    k.extend([
        Op::Reshape(vec![b, c(HEADS), c(1), len, c(HEAD_DIM)]),
        Op::Expand(prod.clone()),
    ]);
    // The causal mask over a buffer of `p + s` zeros: row i of the skewed reshape reads
    // position i + j of the zeros padded by s, flipping the rows makes that s - 1 - i + j,
    // which is valid (a zero) exactly when j <= p + i.
    let mask = [
        Op::Pad(vec![(z, s)]),
        Op::Reshape(vec![c(1), len + s]),
        Op::Expand(vec![s, len + s]),
        Op::Reshape(vec![s * (len + s)]),
        Op::Pad(vec![(z, s)]),
        Op::Reshape(vec![s, len + s + 1]),
        Op::Shrink(vec![(z, s), (z, len)]),
        Op::Flip(vec![0]),
    ];
    let probs = [
        Op::Reshape(vec![b, c(HEADS), s, len, c(1)]),
        Op::Expand(prod.clone()),
    ];
    let mut v = heads(len);
    v.extend([
        Op::Reshape(vec![b, c(HEADS), c(1), len, c(HEAD_DIM)]),
        Op::Expand(prod),
    ]);
    let merge = [
        Op::Permute(vec![0, 2, 1, 3]),
        Op::Reshape(vec![b, s, c(WIDTH)]),
    ];
    // Causal depthwise conv1d: channels first, K - 1 zeros before the first token, windows.
    let conv = [
        Op::Permute(vec![0, 2, 1]),
        Op::Pad(vec![(z, z), (z, z), (c(KERNEL - 1), z)]),
        Op::Unfold {
            axis: 2,
            size: c(KERNEL),
            step: c(1),
        },
    ];
    let x = [b, s, c(WIDTH)];
    let cache = [b, len, c(WIDTH)];
    Ok(Block {
        q: Traced::new(cx, "q", &x, &q)?,
        k: Traced::new(cx, "k", &cache, &k)?,
        mask: Traced::new(cx, "mask", &[len], &mask)?,
        probs: Traced::new(cx, "probs", &[b, c(HEADS), s, len], &probs)?,
        v: Traced::new(cx, "v", &cache, &v)?,
        merge: Traced::new(cx, "merge", &[b, c(HEADS), s, c(HEAD_DIM)], &merge)?,
        conv: Traced::new(cx, "conv", &x, &conv)?,
    })
}

impl Block {
    fn all(&self) -> [&Traced; 7] {
        [
            &self.q,
            &self.k,
            &self.mask,
            &self.probs,
            &self.v,
            &self.merge,
            &self.conv,
        ]
    }
}

/// The run-time inputs, row-major: `x` is `[b, s, W]`, the caches `[b, p + s, W]`,
/// the conv weights `[W, K]`.
struct Inputs {
    b: usize,
    s: usize,
    p: usize,
    x: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    w: Vec<f32>,
}

/// A small deterministic value in [-0.5, 0.5].
fn value(seed: usize, i: usize) -> f32 {
    ((i * 7919 + seed * 104_729) % 101) as f32 / 100.0 - 0.5
}

impl Inputs {
    fn new(b: usize, s: usize, p: usize) -> Inputs {
        let len = p + s;
        let gen = |seed, n| (0..n).map(|i| value(seed, i)).collect();
        Inputs {
            b,
            s,
            p,
            x: gen(1, b * s * WIDTH),
            k: gen(2, b * len * WIDTH),
            v: gen(3, b * len * WIDTH),
            w: gen(4, WIDTH * KERNEL),
        }
    }
}

/// The block computed with plain loops: attention output `[b, s, W]` (heads merged) and
/// conv output `[b, W, s]`.
fn reference(x: &Inputs) -> (Vec<f32>, Vec<f32>) {
    let (b, s, p) = (x.b, x.s, x.p);
    let len = p + s;
    let scale = 1.0 / (HEAD_DIM as f32).sqrt();
    let mut out = vec![0.0; b * s * WIDTH];
    for bi in 0..b {
        for h in 0..HEADS {
            for i in 0..s {
                let q = |d: usize| x.x[(bi * s + i) * WIDTH + h * HEAD_DIM + d];
                let kv = |buf: &[f32], j: usize, d: usize| {
                    buf[(bi * len + j) * WIDTH + h * HEAD_DIM + d]
                };
                let scores: Vec<f32> = (0..len)
                    .map(|j| {
                        if j > p + i {
                            return f32::NEG_INFINITY;
                        }
                        (0..HEAD_DIM)
                            .map(|d| q(d) * kv(&x.k, j, d) * scale)
                            .sum::<f32>()
                    })
                    .collect();
                let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e: Vec<f32> = scores.iter().map(|&t| (t - max).exp()).collect();
                let total: f32 = e.iter().sum();
                for d in 0..HEAD_DIM {
                    let o: f32 = (0..len).map(|j| e[j] / total * kv(&x.v, j, d)).sum();
                    out[(bi * s + i) * WIDTH + h * HEAD_DIM + d] = o;
                }
            }
        }
    }
    let mut conv = vec![0.0; b * WIDTH * s];
    for bi in 0..b {
        for ch in 0..WIDTH {
            for t in 0..s {
                let mut acc = 0.0;
                for kk in 0..KERNEL {
                    // Tap kk reads token t + kk - (K - 1); before the first token it reads 0.
                    if let Some(src) = (t + kk).checked_sub(KERNEL - 1) {
                        acc += x.x[(bi * s + src) * WIDTH + ch] * x.w[ch * KERNEL + kk];
                    }
                }
                conv[(bi * WIDTH + ch) * s + t] = acc;
            }
        }
    }
    (out, conv)
}

/// A row-major view of `shape` for a dense intermediate result.
fn dense_view(shape: &[usize]) -> Res<ConcreteView> {
    let shape: Vec<i64> = shape
        .iter()
        .map(|&d| i64::try_from(d))
        .collect::<Result<_, _>>()?;
    Ok(ConcreteView::contiguous(&shape)?)
}

/// `d` with a size-1 axis appended, for broadcasting a reduction's result back.
fn keep_last(mut d: Dense<f32>) -> Dense<f32> {
    d.shape.push(1);
    d
}

/// `f` over two dense results, broadcast against each other.
fn zip_dense(
    a: &Dense<f32>,
    b: &Dense<f32>,
    f: impl Fn(f32, f32) -> f32 + Sync,
) -> Res<Dense<f32>> {
    let (av, bv) = (dense_view(&a.shape)?, dense_view(&b.shape)?);
    Ok(zip(
        Input::new(&a.values, &av),
        Input::new(&b.values, &bv),
        f,
    )?)
}

/// `op` over `axes` of a dense result.
fn reduce_dense(d: &Dense<f32>, axes: &[usize], op: ReduceOp) -> Res<Dense<f32>> {
    let v = dense_view(&d.shape)?;
    Ok(reduce(
        Input::new(&d.values, &v),
        axes,
        op,
        ReduceConfig::default(),
    )?)
}

/// The block through the kernels: attention output `[b, s, W]` and conv output `[b, W, s]`.
fn run_block(cx: &Scope, blk: &Block, bind: &Bindings, x: &Inputs) -> Res<(Vec<f32>, Vec<f32>)> {
    let scale = 1.0 / (HEAD_DIM as f32).sqrt();
    let q = blk.q.run(cx, bind, &x.x, 0.0)?;
    let k = blk.k.run(cx, bind, &x.k, 0.0)?;
    let prod = zip_dense(&q, &k, |a, b| a * b * scale)?;
    let scores = reduce_dense(&prod, &[4], ReduceOp::Sum)?;
    // The mask reads zeros where a key may be attended and minus infinity elsewhere.
    let zeros = vec![0.0f32; x.p + x.s];
    let mask = blk.mask.run(cx, bind, &zeros, f32::NEG_INFINITY)?;
    let masked = zip_dense(&scores, &mask, |a, m| a + m)?;
    let last = [masked.shape.len() - 1];
    let max = keep_last(reduce_dense(&masked, &last, ReduceOp::Max)?);
    let e = zip_dense(&masked, &max, |a, m| (a - m).exp())?;
    let total = keep_last(reduce_dense(&e, &last, ReduceOp::Sum)?);
    let probs = zip_dense(&e, &total, |a, t| a / t)?;
    let pb = blk.probs.run(cx, bind, &probs.values, 0.0)?;
    let vb = blk.v.run(cx, bind, &x.v, 0.0)?;
    let weighted = zip_dense(&pb, &vb, |a, b| a * b)?;
    let heads = reduce_dense(&weighted, &[3], ReduceOp::Sum)?;
    let merged = blk.merge.run(cx, bind, &heads.values, 0.0)?;
    // Conv: windows [b, W, s, K] times the weights [W, 1, K], summed over K.
    let win = blk.conv.run(cx, bind, &x.x, 0.0)?;
    let weights = Dense {
        shape: vec![WIDTH, 1, KERNEL],
        values: x.w.clone(),
    };
    let taps = zip_dense(&win, &weights, |a, w| a * w)?;
    let conv = reduce_dense(&taps, &[3], ReduceOp::Sum)?;
    Ok((merged.values, conv.values))
}

/// Checks `got` against `want` within a float tolerance, naming the first difference.
fn compare(what: &str, got: &[f32], want: &[f32]) -> Res<()> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} values, reference has {}", got.len(), want.len()).into());
    }
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        if (g - w).abs() > 1e-5 * (1.0 + w.abs()) {
            return Err(format!("{what}: element {k} is {g}, reference says {w}").into());
        }
    }
    Ok(())
}

/// Runs the scenario, writing its report to `out`; an error on any mismatch.
pub fn run(out: &mut impl Write) -> Res<()> {
    let mut cx = Scope::new();
    let b = cx.declare_str("b 1..=16")?;
    let s = cx.declare_str("s 1..=512")?;
    let p = cx.declare_str("p 0..=4096")?;
    let blk = trace_block(&cx, b, s, p)?;
    for t in blk.all() {
        writeln!(out, "== {}\n{}", t.name, t.trace)?;
        writeln!(out, "-- lowered\n{}\n", t.trace.stack().lower(&cx)?)?;
    }
    // Prefill (no cache), decoding one token (s = 1, batch 1), and a chunk after a cache.
    for (bn, sn, pn) in [(2, 5, 0), (1, 1, 6), (3, 4, 3)] {
        let x = Inputs::new(bn, sn, pn);
        let mut bind = Bindings::new();
        let xs = [bn as i64, sn as i64, WIDTH as i64];
        let from_x = infer(&cx, &blk.q.input, &xs, &mut bind)?;
        let cs = [bn as i64, (pn + sn) as i64, WIDTH as i64];
        let from_cache = infer(&cx, &blk.k.input, &cs, &mut bind)?;
        let (got, got_conv) = run_block(&cx, &blk, &bind, &x)?;
        let (want, want_conv) = reference(&x);
        let what = format!("b = {bn}, s = {sn}, p = {pn}");
        compare(&format!("attention with {what}"), &got, &want)?;
        compare(&format!("conv with {what}"), &got_conv, &want_conv)?;
        writeln!(
            out,
            "run: x {xs:?} gives {from_x}; the cache {cs:?} gives {from_cache}: attention and conv match the reference"
        )?;
    }
    Ok(())
}
