//! Chains of view ops end to end: each op is applied to a [`ViewStack`] over a contiguous
//! buffer and to the naive index table of `model.rs` side by side; the bound stack (merged
//! wherever the view algebra merges) must then give the table's offsets
//! (`ConcreteStack::offsets`), have a plan, and be read by `materialize` and written by
//! `copy` and `fill` exactly where the table says, element by element.
//!
//! `check` decodes the chain from bytes, so that the property test in `props.rs` and the `chain`
//! fuzz target (`fuzz/fuzz_targets/chain.rs`, which includes this file) share it: every
//! byte string is a valid chain (parameters are read modulo what the current shape allows,
//! zeros once the bytes run out), and a failure prints the chain.

use symshape::Scope;
use symshape_kernels::{
    copy, fill, materialize, plan_materialize, ConcreteStack, ConcreteView, Element, Error, Input,
    Output,
};
use symshape_view::{View, ViewOps, ViewStack};

use crate::model::{numel, random_index, Model};

/// The most elements a table of the chain may have (the model is quadratic in it at worst).
const MAX_ELEMENTS: i64 = 4096;
/// The most axes a view of the chain may have.
const MAX_AXES: usize = 6;
/// The most ops in one chain.
const MAX_OPS: usize = 12;

/// The parameters of a chain, read one byte at a time.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    /// The next byte modulo `m` (0 when `m` is 0 or the bytes ran out).
    fn below(&mut self, m: usize) -> usize {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        if m == 0 {
            0
        } else {
            usize::from(b) % m
        }
    }

    /// The next byte modulo `m`, as an `i64`.
    fn size(&mut self, m: i64) -> i64 {
        self.below(usize::try_from(m).unwrap_or(0)) as i64
    }
}

/// Decodes a chain from `data`, applies it and checks the kernels against the table: `Err`
/// names the chain and the first difference. A panic anywhere is a failure too.
///
/// # Errors
/// A description of the first disagreement.
pub fn check(data: &[u8]) -> Result<(), String> {
    let mut b = Bytes(data);
    let rank = 1 + b.below(4);
    let mut shape: Vec<i64> = (0..rank)
        .map(|_| [2, 3, 4, 5, 6, 1, 0, 8, 16, 12][b.below(10)])
        .collect();
    if numel(&shape) > MAX_ELEMENTS {
        shape.iter_mut().for_each(|d| *d = (*d).min(4));
    }
    let cx = Scope::new();
    let mut stack = ViewStack::new(View::contiguous(&shape).map_err(|e| e.to_string())?);
    let strides = ConcreteView::contiguous(&shape)
        .map_err(|e| e.to_string())?
        .strides()
        .to_vec();
    let mut model = Model::of(&shape, &strides, 0, None);
    let mut chain = format!("contiguous {shape:?}");
    for _ in 0..MAX_OPS {
        if b.0.is_empty() {
            break;
        }
        let Some((what, next, table)) = step(&mut b, &cx, &stack, &model) else {
            continue;
        };
        chain.push_str(&format!(" | {what}"));
        stack = next.map_err(|e| format!("{chain}: the op failed: {e}"))?;
        model = table;
    }
    let bound = stack
        .to_concrete("chain")
        .map_err(|e| format!("{chain}: {e}"))?;
    let fail = |what: String| format!("{chain}\n  bound: {:?}\n  {what}", bound.levels());
    if bound.shape() != model.shape {
        return Err(fail(format!(
            "shape {:?}, table {:?}",
            bound.shape(),
            model.shape
        )));
    }
    // The view crate's own element-by-element offsets, and the plan's description.
    match bound.offsets() {
        Ok(table) if table == model.table => {}
        other => return Err(fail(format!("offsets {other:?}"))),
    }
    let plan = plan_materialize::<i64>(&bound).map_err(|e| fail(format!("plan: {e}")))?;
    if plan.to_string().is_empty() {
        return Err(fail("an empty plan description".to_string()));
    }
    let len = usize::try_from(numel(&shape)).map_err(|e| e.to_string())?;
    let pad = -7 - b.size(3);
    read(&bound, &model, len, pad, |x| x).map_err(&fail)?;
    match b.below(4) {
        0 => read(&bound, &model, len, pad as u8, |x| x as u8),
        1 => read(&bound, &model, len, pad as u16, |x| x as u16),
        2 => read(&bound, &model, len, pad as i32, |x| x as i32),
        _ => read(&bound, &model, len, pad as f32, |x| x as f32),
    }
    .map_err(&fail)?;
    write(&bound, &model, len).map_err(&fail)
}

/// `Some` when a table of `shape` stays within [`MAX_ELEMENTS`]: an op whose result would
/// not is skipped.
fn fits(shape: &[i64]) -> Option<()> {
    (numel(shape) <= MAX_ELEMENTS).then_some(())
}

/// One op of the chain, decoded from `b`: its text, its result on `stack` and on `model`;
/// `None` when the decoded op would leave the limits.
fn step(
    b: &mut Bytes<'_>,
    cx: &Scope,
    stack: &ViewStack,
    model: &Model,
) -> Option<(String, Result<ViewStack, symshape_view::Error>, Model)> {
    let shape = model.shape.clone();
    let rank = shape.len();
    let n = numel(&shape);
    // The op applied to the stack and to the model alike, with its text.
    macro_rules! both {
        ($op:ident, $arg:expr) => {
            (
                format!("{} {:?}", stringify!($op), $arg),
                stack.$op(cx, $arg),
                model.$op($arg),
            )
        };
    }
    Some(match b.below(11) {
        0 => {
            let to = factor(b, n);
            both!(reshape, &to)
        }
        1 => {
            let mut axes: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                axes.swap(i, b.below(i + 1));
            }
            both!(permute, &axes)
        }
        2 => {
            let to: Vec<i64> = shape
                .iter()
                .map(|&d| if d == 1 { [2, 3, 1, 0][b.below(4)] } else { d })
                .collect();
            fits(&to)?;
            both!(expand, &to)
        }
        3 => {
            let bounds: Vec<(i64, i64)> = shape
                .iter()
                .map(|&d| {
                    if b.below(2) == 0 {
                        return (0, d);
                    }
                    let (x, y) = (b.size(d + 1), b.size(d + 1));
                    (x.min(y), x.max(y))
                })
                .collect();
            both!(shrink, &bounds)
        }
        4 => {
            let pads: Vec<(i64, i64)> = (0..rank).map(|_| (b.size(4), b.size(4))).collect();
            let to: Vec<i64> = shape
                .iter()
                .zip(&pads)
                .map(|(d, (x, y))| d + x + y)
                .collect();
            fits(&to)?;
            both!(pad, &pads)
        }
        5 => {
            let flags: Vec<bool> = (0..rank).map(|_| b.below(2) == 0).collect();
            let axes: Vec<usize> = (0..rank).filter(|&a| flags[a]).collect();
            (
                format!("flip {axes:?}"),
                stack.flip(cx, &axes),
                model.flip(&flags),
            )
        }
        6 => {
            let draws: Vec<u32> = (0..16).map(|_| b.below(256) as u32).collect();
            let (items, picks) = random_index(&shape, &draws);
            if picks.len() > MAX_AXES {
                return None;
            }
            (
                format!("index {items:?}"),
                stack.index(cx, &items),
                model.select(&picks),
            )
        }
        7 => {
            if rank == 0 || rank >= MAX_AXES {
                return None;
            }
            let axis = b.below(rank);
            let d = shape[axis];
            let size = if d == 0 { 0 } else { 1 + b.size(d) };
            let step = 1 + b.size(3);
            let mut to = shape.clone();
            to[axis] = (d - size) / step + 1;
            to.push(size);
            fits(&to)?;
            let table = model.map(to, |idx| {
                let mut src = idx[..rank].to_vec();
                src[axis] = idx[axis] * step + idx[rank];
                Some(src)
            });
            (
                format!("unfold {axis} size {size} step {step}"),
                stack.unfold(cx, axis, size, step),
                table,
            )
        }
        8 => {
            if rank < 2 {
                return None;
            }
            let first = b.below(rank);
            let second = (first + 1 + b.below(rank - 1)) % rank;
            let offset = b.size(5) - 2;
            (
                format!("diagonal [{first}, {second}] offset {offset}"),
                stack.diagonal(cx, offset, first, second),
                model.diagonal(offset, first, second),
            )
        }
        9 => {
            let (what, next) = if b.below(2) == 0 {
                ("contiguous", stack.contiguous(cx))
            } else {
                ("copy", stack.copy(cx))
            };
            (what.to_string(), next, model.clone())
        }
        _ => {
            if b.below(2) == 0 && rank < MAX_AXES {
                let at = b.below(rank + 1);
                let mut to = shape.clone();
                to.insert(at, 1);
                (
                    format!("unsqueeze {at}"),
                    stack.unsqueeze(cx, at),
                    model.reshape(&to),
                )
            } else {
                let to: Vec<i64> = shape.iter().copied().filter(|&d| d != 1).collect();
                (
                    "squeeze".to_string(),
                    stack.squeeze(cx, None),
                    model.reshape(&to),
                )
            }
        }
    })
}

/// A shape of `n` elements from `b`: the prime factors of `n` shuffled and grouped, with a
/// unit axis now and then; one empty axis among small ones when `n` is 0.
fn factor(b: &mut Bytes<'_>, n: i64) -> Vec<i64> {
    if n == 0 {
        let rank = 1 + b.below(3);
        let empty = b.below(rank);
        return (0..rank)
            .map(|a| if a == empty { 0 } else { b.size(4) })
            .collect();
    }
    let mut primes = Vec::new();
    let (mut rest, mut p) = (n, 2);
    while rest > 1 {
        while rest % p == 0 {
            primes.push(p);
            rest /= p;
        }
        p += 1;
    }
    for i in (1..primes.len()).rev() {
        primes.swap(i, b.below(i + 1));
    }
    let mut to = Vec::new();
    let mut cur = 1;
    for (i, &q) in primes.iter().enumerate() {
        cur *= q;
        if i + 1 == primes.len() || b.below(2) == 0 {
            to.push(cur);
            cur = 1;
        }
    }
    if to.len() < MAX_AXES && b.below(3) == 0 {
        to.insert(b.below(to.len() + 1), 1);
    }
    while to.len() > MAX_AXES {
        let last = to.pop().unwrap_or(1);
        if let Some(x) = to.last_mut() {
            *x *= last;
        }
    }
    to
}

/// `materialize` of `bound` over a buffer of `len` distinct values (as `T`) against the
/// table.
fn read<T: Element>(
    bound: &ConcreteStack,
    model: &Model,
    len: usize,
    pad: T,
    of: impl Fn(i64) -> T,
) -> Result<(), String> {
    let buf: Vec<T> = (0..len as i64).map(|i| of(i * 10 + 1)).collect();
    let got = materialize(Input::new(&buf, bound).pad(pad))
        .map_err(|e| format!("materialize as {} failed: {e}", T::NAME))?
        .values;
    let want: Vec<T> = model
        .table
        .iter()
        .map(|o| o.map_or(pad, |o| buf[o as usize]))
        .collect();
    if got == want {
        Ok(())
    } else {
        let at = got.iter().zip(&want).position(|(g, w)| g != w);
        Err(format!(
            "materialize as {}: {} elements, {} expected; first difference at {at:?}\n  got  {got:?}\n  want {want:?}",
            T::NAME,
            got.len(),
            want.len()
        ))
    }
}

/// `copy` of distinct values and `fill` of one value into `bound` over a buffer of `len`
/// sentinels: every valid element of the table written once, nothing else touched; refused
/// as overlapping only when two valid elements share an offset or a level of the stack
/// reaches an element twice.
fn write(bound: &ConcreteStack, model: &Model, len: usize) -> Result<(), String> {
    let shape = bound.shape().to_vec();
    let rows = ConcreteView::contiguous(&shape).map_err(|e| e.to_string())?;
    let src: Vec<i64> = (0..numel(&shape)).map(|e| 1_000_000 + e).collect();
    let (mut copied, mut filled) = (vec![-1i64; len], vec![-1i64; len]);
    let mut injective = true;
    for (e, o) in model.table.iter().enumerate() {
        if let Some(o) = o {
            injective &= copied[*o as usize] == -1;
            copied[*o as usize] = src[e];
            filled[*o as usize] = 5;
        }
    }
    let level_overlaps = bound
        .levels()
        .iter()
        .any(|v| v.is_injective() == Some(false));
    let judge = |op: &str, res: Result<(), Error>, got: Vec<i64>, want: Vec<i64>| match res {
        Ok(()) if !injective => Err(format!("{op} wrote an element twice without refusing")),
        Ok(()) if got != want => Err(format!("{op}: got {got:?}\n  want {want:?}")),
        Ok(()) | Err(Error::UndecidedOverlap { .. }) => Ok(()),
        // The documented rule is per level: a level that reaches an element twice is
        // refused even where the levels above it read each element once.
        Err(Error::OverlappingDestination { .. }) if !injective || level_overlaps => Ok(()),
        Err(e) => Err(format!("{op} failed: {e}")),
    };
    let mut got = vec![-1i64; len];
    let res = copy(Input::new(&src, &rows), Output::new(&mut got, bound));
    judge("copy", res, got, copied)?;
    let mut got = vec![-1i64; len];
    let res = fill(Output::new(&mut got, bound), 5);
    judge("fill", res, got, filled)
}
