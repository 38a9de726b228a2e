//! [`lower`]: every derived view op turned into core ones, written once for `i64`
//! and `Expr` sizes; both engines and the stack run what it gives.
//!
//! The derived ops are the ones that only rearrange axes or compute the arguments of
//! a core op: `transpose`, `movedim`, the axis reversals by rank (`T`, `mT`, `t`,
//! `H`, `mH`, `adjoint`), `select`, `narrow`, `flatten`, `unflatten`, `squeeze`,
//! `broadcast_to`, `sliding_window_view`, `tensor_split` at indices and the
//! directional splits. A [`Decide`] answers the questions they ask of sizes: at once
//! for `i64` ([`Exact`]), by proof under the caller's scope for `Expr` ([`Proving`]),
//! which records a guard where only a value decides. A precondition that the core op
//! checks again is checked here only where it is decided at once (`Decide::EXACT`),
//! to report it under the derived op's name; on symbolic sizes the core op proves it
//! or records its own guard.

use symshape::{CmpOp, Expr, Scope};

use crate::check::Exact;
use crate::concrete::{check_shape, repeated_squeeze_axis};
use crate::dim::{Dim, Size};
use crate::error::{at_axis, check_piece, fmt_list, invalid, overflow, Error, Result};
use crate::guard::{Checker, Ctx, Guard, GuardOp};
use crate::index::IndexItem;
use crate::op::{sliding_windows, Op};

/// The core ops a derived op stands for, run in order on the input.
pub(crate) struct Lowering<D> {
    /// The core (or further derived) ops; none for an op that keeps the view.
    pub(crate) ops: Vec<Op<D>>,
    /// The name errors of `ops` are reported under; `None` keeps their own.
    pub(crate) rename: Option<&'static str>,
    /// Guards of the derived op itself (a squeeze keeping an axis that may be 1).
    pub(crate) guards: Vec<Guard>,
}

impl<D> Lowering<D> {
    /// `ops` in turn, under their own names.
    fn of(ops: Vec<Op<D>>) -> Self {
        Lowering {
            ops,
            rename: None,
            guards: Vec::new(),
        }
    }

    fn one(op: Op<D>) -> Self {
        Self::of(vec![op])
    }

    fn renamed(mut self, name: &'static str) -> Self {
        self.rename = Some(name);
        self
    }

    /// `e`, an error of one of `ops`, under the derived op's name.
    pub(crate) fn error(&self, e: Error) -> Error {
        match self.rename {
            Some(name) => crate::concrete::rename_op(e, name),
            None => e,
        }
    }
}

/// The questions the derived ops ask of sizes.
pub(crate) trait Decide<D: Size> {
    /// Whether every comparison of sizes is decided at once (`i64`).
    const EXACT: bool;
    /// Whether `d` is (provably) 1.
    fn is_one(&self, d: D) -> bool;
    /// Whether `n` (provably) divides `d`.
    fn divides(&self, d: D, n: i64) -> bool;
    /// `d` as a message shows it.
    fn shown(&self, d: D) -> D;
    /// The product of `dims`; `None` when it leaves `i64`.
    fn product(&self, dims: &[D]) -> Option<D>;
    /// Keeps axis `axis` of size `d`, not provably 1, in a squeeze of every size-1 axis.
    ///
    /// # Errors
    /// When `d` is refuted to differ from 1 under the guards so far.
    fn keep_not_one(&mut self, axis: usize, d: D) -> Result<()>;
    /// The refusal to squeeze axis `axis` of size `d`, not (provably) 1.
    fn not_unit(&self, axis: usize, d: D, ctx: &str) -> Error;
    /// The guards recorded.
    fn take_guards(&mut self) -> Vec<Guard>;
}

impl Decide<i64> for Exact {
    const EXACT: bool = true;

    fn is_one(&self, d: i64) -> bool {
        d == 1
    }

    fn divides(&self, d: i64, n: i64) -> bool {
        d % n == 0
    }

    fn shown(&self, d: i64) -> i64 {
        d
    }

    fn product(&self, dims: &[i64]) -> Option<i64> {
        crate::concrete::numel_of(dims)
    }

    fn keep_not_one(&mut self, _: usize, _: i64) -> Result<()> {
        Ok(())
    }

    fn not_unit(&self, axis: usize, d: i64, ctx: &str) -> Error {
        invalid(
            "squeeze",
            format!("axis {axis} has size {d} in {ctx}; only size-1 axes can be squeezed"),
        )
    }

    fn take_guards(&mut self) -> Vec<Guard> {
        Vec::new()
    }
}

/// [`Decide`] for `Expr` sizes: proofs under `cx`; a squeeze's kept axes that may
/// be 1 become guards.
pub(crate) struct Proving<'a> {
    cx: &'a Scope,
    ctx: &'a dyn Fn() -> String,
    squeeze: Option<Checker<'a>>,
}

impl<'a> Proving<'a> {
    pub(crate) fn new(cx: &'a Scope, ctx: &'a dyn Fn() -> String) -> Self {
        Proving {
            cx,
            ctx,
            squeeze: None,
        }
    }
}

impl Decide<Expr> for Proving<'_> {
    const EXACT: bool = false;

    fn is_one(&self, d: Expr) -> bool {
        self.cx.prove_eq(d, Expr::from(1)).is_true()
    }

    fn divides(&self, d: Expr, n: i64) -> bool {
        self.cx.prove_eq(d.floor_mod(n), Expr::from(0)).is_true()
    }

    fn shown(&self, d: Expr) -> Expr {
        self.cx.simplify(d)
    }

    fn product(&self, dims: &[Expr]) -> Option<Expr> {
        Some(dims.iter().copied().product())
    }

    fn keep_not_one(&mut self, axis: usize, d: Expr) -> Result<()> {
        let (cx, ctx) = (self.cx, self.ctx);
        let ck = self
            .squeeze
            .get_or_insert_with(|| Checker::new(cx, GuardOp::SQUEEZE, &[], Ctx::Text(ctx())));
        ck.require(d, CmpOp::Ne, Expr::from(1), || {
            format!("axis {axis} is kept, so it is not of size 1")
        })
    }

    fn not_unit(&self, _: usize, d: Expr, _: &str) -> Error {
        Error::Symbolic {
            op: "squeeze",
            what: "size of a squeezed axis",
            expr: d.to_string(),
        }
    }

    fn take_guards(&mut self) -> Vec<Guard> {
        self.squeeze.take().map(|ck| ck.guards).unwrap_or_default()
    }
}

/// The constants of `v`, for the checks made only on exact sizes.
fn consts<D: Dim>(v: &[D]) -> Vec<i64> {
    v.iter().filter_map(|d| d.as_const()).collect()
}

/// The core ops `op` stands for on a view of `shape` (described by `ctx`), or `None`
/// when `op` is a core op (or one an engine runs itself: the pieces of `split`,
/// `split_sizes`, `chunk` and `tensor_split` into sections, the complex views, the
/// copies, `as_strided`, `view(shape)` and the gathers).
///
/// # Errors
/// The derived op's own argument errors, under its name.
#[inline]
pub(crate) fn lower<D: Size, K: Decide<D>>(
    ck: &mut K,
    shape: &[D],
    ctx: &dyn Fn() -> String,
    op: &Op<D>,
) -> Result<Option<Lowering<D>>> {
    let ndim = shape.len();
    let dim = |name: &'static str, axis: usize| at_axis(name, shape, axis, ctx);
    let zero = D::from(0);
    let low = match op {
        Op::Transpose(a, b) => {
            dim("transpose", *a)?;
            dim("transpose", *b)?;
            let mut axes: Vec<usize> = (0..ndim).collect();
            axes.swap(*a, *b);
            Lowering::one(Op::Permute(axes))
        }
        Op::Movedim { src, dst } => {
            dim("movedim", *src)?;
            dim("movedim", *dst)?;
            let mut axes: Vec<usize> = (0..ndim).filter(|a| a != src).collect();
            axes.insert(*dst, *src);
            Lowering::one(Op::Permute(axes))
        }
        Op::ReverseAxes
        | Op::MatrixTranspose
        | Op::T
        | Op::ConjTranspose
        | Op::MatrixConjTranspose
        | Op::Adjoint => match op.rank_permutation(ndim, ctx)? {
            Some(axes) => Lowering::one(Op::Permute(axes)),
            None => Lowering::of(Vec::new()),
        },
        Op::Rot90 { k, axes: [a, b] } => {
            dim("rot90", *a)?;
            dim("rot90", *b)?;
            if a == b {
                return Err(invalid(
                    "rot90",
                    format!("axes {a} and {b} are the same axis of {}; the plane of a rotation needs two", ctx()),
                ));
            }
            let mut swap: Vec<usize> = (0..ndim).collect();
            swap.swap(*a, *b);
            let ops = match k.rem_euclid(4) {
                0 => Vec::new(),
                1 => vec![Op::Flip(vec![*b]), Op::Permute(swap)],
                2 => vec![Op::Flip(vec![*a, *b])],
                _ => vec![Op::Permute(swap), Op::Flip(vec![*b])],
            };
            Lowering::of(ops).renamed("rot90")
        }
        Op::Select { axis, index } => {
            dim("select", *axis)?;
            let mut items = vec![IndexItem::FULL; *axis];
            items.push(IndexItem::Int(*index));
            Lowering::one(Op::Index(items))
        }
        Op::Narrow {
            axis,
            start,
            length,
        } => {
            let d = dim("narrow", *axis)?;
            let s = match start.as_const() {
                Some(c) if c < 0 => d + *start,
                _ => *start,
            };
            if K::EXACT {
                let [d, s, n] = [d, s, *length].map(|x| x.as_const().unwrap_or(0));
                if !(0 <= s && s <= d && 0 <= n && n <= d - s) {
                    return Err(invalid(
                        "narrow",
                        format!(
                            "start {start} and length {length} leave axis {axis} of size {d} of {}",
                            ctx()
                        ),
                    ));
                }
            }
            let mut bounds: Vec<(D, D)> = shape.iter().map(|&x| (zero, x)).collect();
            bounds[*axis] = (s, s + *length);
            Lowering::one(Op::Shrink(bounds))
        }
        Op::Flatten { start, end } => {
            let (start, end) = (*start, *end);
            if ndim == 0 && start == 0 && end == 0 {
                return Ok(Some(Lowering::one(Op::Reshape(vec![D::from(1)]))));
            }
            dim("flatten", start)?;
            dim("flatten", end)?;
            if start > end {
                return Err(invalid(
                    "flatten",
                    format!("start axis {start} is after end axis {end} for {}", ctx()),
                ));
            }
            let merged = ck.product(&shape[start..=end]).ok_or_else(|| {
                overflow(
                    "flatten",
                    format!("merged size of axes {start}..={end} of {}", ctx()),
                )
            })?;
            let mut to = shape[..start].to_vec();
            to.push(merged);
            to.extend_from_slice(&shape[end + 1..]);
            Lowering::one(Op::Reshape(to))
        }
        Op::Unflatten { axis, sizes } => {
            let d = dim("unflatten", *axis)?;
            if K::EXACT {
                let p = check_shape("unflatten", &consts(sizes))?;
                if Some(p) != d.as_const() {
                    return Err(invalid(
                        "unflatten",
                        format!(
                            "sizes {} do not multiply to size {d} of axis {axis} of {}",
                            fmt_list(sizes),
                            ctx()
                        ),
                    ));
                }
            }
            let mut to = shape[..*axis].to_vec();
            to.extend_from_slice(sizes);
            to.extend_from_slice(&shape[axis + 1..]);
            Lowering::one(Op::Reshape(to))
        }
        Op::Squeeze(axes) => Lowering {
            ops: vec![Op::Reshape(squeezed(
                ck,
                shape,
                ctx,
                axes.as_deref(),
                false,
            )?)],
            rename: None,
            guards: ck.take_guards(),
        },
        Op::SqueezeProven => Lowering::one(Op::Reshape(squeezed(ck, shape, ctx, None, true)?)),
        Op::BroadcastTo(to) => {
            if K::EXACT {
                let c = consts(to);
                check_shape("broadcast_to", &c)?;
                let fits = c.len() >= ndim
                    && shape
                        .iter()
                        .zip(&c[c.len() - ndim..])
                        .all(|(&d, &t)| d.as_const() == Some(t) || d.as_const() == Some(1));
                if !fits {
                    return Err(invalid(
                        "broadcast_to",
                        format!(
                            "cannot broadcast shape {} to {}",
                            fmt_list(shape),
                            fmt_list(to)
                        ),
                    ));
                }
            }
            let Some(lead) = to.len().checked_sub(ndim) else {
                return Err(invalid(
                    "broadcast_to",
                    format!(
                        "cannot broadcast {} to {}, which has fewer axes",
                        ctx(),
                        fmt_list(to)
                    ),
                ));
            };
            let mut ops = Vec::with_capacity(2);
            if lead > 0 {
                let mut ones = vec![D::from(1); lead];
                ones.extend_from_slice(shape);
                ops.push(Op::Reshape(ones));
            }
            ops.push(Op::Expand(to.clone()));
            Lowering::of(ops)
        }
        Op::SlidingWindowView { window, axes } => {
            let dims: Vec<Option<i64>> = shape.iter().map(|d| d.as_const()).collect();
            let ops = sliding_windows(window, axes.as_deref(), &dims, ctx)?
                .into_iter()
                .map(|(axis, size)| Op::Unfold {
                    axis,
                    size,
                    step: D::from(1),
                })
                .collect();
            Lowering::of(ops).renamed("sliding_window_view")
        }
        Op::TensorSplitAt {
            axis,
            indices,
            piece,
        } => Lowering::one(Op::Index(split_at_items(
            shape, ctx, *axis, indices, *piece,
        )?)),
        Op::DirectionalSplitAt {
            direction,
            indices,
            piece,
        } => {
            let axis = direction.axis(ndim, ctx)?;
            let items = split_at_items(shape, ctx, axis, indices, *piece)
                .map_err(|e| crate::concrete::rename_op(e, direction.name()))?;
            Lowering::one(Op::Index(items)).renamed(direction.name())
        }
        Op::DirectionalSplit {
            direction,
            sections,
            piece,
        } => {
            let axis = direction.axis(ndim, ctx)?;
            let d = shape[axis];
            let n = i64::try_from(*sections).unwrap_or(i64::MAX);
            if n > 0 && !ck.divides(d, n) {
                let constant = d.as_const().is_some();
                return Err(direction.indivisible(axis, ck.shown(d), constant, *sections, &ctx()));
            }
            Lowering::one(Op::TensorSplit {
                axis,
                sections: *sections,
                piece: *piece,
            })
            .renamed(direction.name())
        }
        _ => return Ok(None),
    };
    Ok(Some(low))
}

/// The piece size of `chunk(axis, chunks)` on a view of `shape` (described by `ctx`):
/// `max(cdiv(dim, chunks), 1)`.
///
/// # Errors
/// [`Error::Invalid`] when `axis` is out of range or `chunks` is 0.
pub(crate) fn chunk_size<D: Size, K: Decide<D>>(
    ck: &K,
    shape: &[D],
    ctx: &dyn Fn() -> String,
    axis: usize,
    chunks: usize,
) -> Result<D> {
    let d = at_axis("chunk", shape, axis, ctx)?;
    if chunks == 0 {
        return Err(invalid(
            "chunk",
            format!("chunk count {chunks} must be positive for {}", ctx()),
        ));
    }
    let n = D::from(i64::try_from(chunks).unwrap_or(i64::MAX));
    Ok(ck.shown(d.ceil_parts_of(n)))
}

/// The shape without the listed size-1 axes, or without every (provably, for
/// `proven`) size-1 one for `None`.
fn squeezed<D: Size, K: Decide<D>>(
    ck: &mut K,
    shape: &[D],
    ctx: &dyn Fn() -> String,
    axes: Option<&[usize]>,
    proven: bool,
) -> Result<Vec<D>> {
    let Some(list) = axes else {
        let mut res = Vec::with_capacity(shape.len());
        for (axis, &d) in shape.iter().enumerate() {
            if ck.is_one(d) {
                continue;
            }
            if !proven {
                ck.keep_not_one(axis, d)?;
            }
            res.push(d);
        }
        return Ok(res);
    };
    for (k, &a) in list.iter().enumerate() {
        let d = at_axis("squeeze", shape, a, ctx)?;
        if list[..k].contains(&a) {
            return Err(repeated_squeeze_axis(a, list, &ctx()));
        }
        if !ck.is_one(d) {
            return Err(ck.not_unit(a, d, &ctx()));
        }
    }
    Ok(shape
        .iter()
        .enumerate()
        .filter(|(a, _)| !list.contains(a))
        .map(|(_, &d)| d)
        .collect())
}

/// The index items of piece `piece` of `tensor_split` at `indices`: the slice
/// `indices[piece - 1]:indices[piece]` of `axis` (Python's slice rules: a negative
/// index counts from the end, bounds clamp to the axis, a stop before the start gives
/// an empty piece).
fn split_at_items<D: Size>(
    shape: &[D],
    ctx: &dyn Fn() -> String,
    axis: usize,
    indices: &[D],
    piece: usize,
) -> Result<Vec<IndexItem<D>>> {
    at_axis("tensor_split", shape, axis, ctx)?;
    check_piece("tensor_split", ctx, axis, piece, indices.len() + 1)?;
    let mut items = vec![IndexItem::FULL; axis];
    items.push(IndexItem::Slice {
        start: piece.checked_sub(1).map(|k| indices[k]),
        stop: indices.get(piece).copied(),
        step: None,
    });
    Ok(items)
}

#[cfg(test)]
mod tests {
    use symshape::{Expr, Scope};

    use crate::check::Exact;
    use crate::lower_op::{lower, Proving};
    use crate::op::{CopyOp, Op, SplitDirection};

    /// The derived ops with constant arguments, on a view of rank 3.
    fn derived() -> Vec<Op<i64>> {
        vec![
            Op::Transpose(0, 2),
            Op::Movedim { src: 2, dst: 0 },
            Op::ReverseAxes,
            Op::MatrixTranspose,
            Op::Adjoint,
            Op::Rot90 {
                k: -1,
                axes: [2, 0],
            },
            Op::Select { axis: 1, index: -1 },
            Op::Narrow {
                axis: 2,
                start: -3,
                length: 2,
            },
            Op::Flatten { start: 1, end: 2 },
            Op::Unflatten {
                axis: 2,
                sizes: vec![2, 2],
            },
            Op::Squeeze(Some(vec![0])),
            Op::Squeeze(None),
            Op::SqueezeProven,
            Op::BroadcastTo(vec![5, 1, 3, 4]),
            Op::SlidingWindowView {
                window: vec![2, 2],
                axes: Some(vec![1, 2]),
            },
            Op::TensorSplitAt {
                axis: 2,
                indices: vec![1, 3],
                piece: 1,
            },
            Op::DirectionalSplitAt {
                direction: SplitDirection::Vertical,
                indices: vec![1],
                piece: 0,
            },
            Op::DirectionalSplit {
                direction: SplitDirection::Horizontal,
                sections: 3,
                piece: 2,
            },
        ]
    }

    #[test]
    fn both_size_types_lower_to_the_same_core_ops() {
        let cx = Scope::new();
        let shape = [1i64, 3, 4];
        let exprs: Vec<Expr> = shape.iter().map(|&d| Expr::from(d)).collect();
        let ctx = || "view [1, 3, 4]".to_string();
        for op in derived() {
            let exact = lower(&mut Exact, &shape, &ctx, &op)
                .expect("valid")
                .expect("derived");
            let proving = lower(&mut Proving::new(&cx, &ctx), &exprs, &ctx, &op.to_expr())
                .expect("valid")
                .expect("derived");
            let exact_ops: Vec<Op> = exact.ops.iter().map(Op::to_expr).collect();
            assert_eq!(exact_ops, proving.ops, "{op}");
            assert_eq!(exact.rename, proving.rename, "{op}");
            assert!(proving.guards.is_empty(), "{op}");
        }
    }

    #[test]
    fn core_ops_are_not_lowered() {
        let ctx = || "view [2, 3]".to_string();
        let field_ops = [
            Op::Reshape(vec![6]),
            Op::Expand(vec![2, 3]),
            Op::Permute(vec![1, 0]),
            Op::Shrink(vec![(0, 1), (1, 3)]),
            Op::Pad(vec![(1, 0), (0, 2)]),
            Op::Flip(vec![0]),
            Op::Unsqueeze(0),
            Op::Unfold {
                axis: 1,
                size: 2,
                step: 1,
            },
            Op::Diagonal {
                offset: 0,
                dim1: 0,
                dim2: 1,
            },
        ];
        // What the dispatch skips for a field op: lowering, copies, gathers, the
        // element-size ops and `as_strided`.
        for op in field_ops {
            assert!(op.is_field_op(), "{op}");
            assert!(lower(&mut Exact, &[2, 3], &ctx, &op)
                .expect("valid")
                .is_none());
            assert!(CopyOp::of(&op).is_none(), "{op}");
            assert!(
                !op.is_gather() && !crate::fields::is_element_op(&op),
                "{op}"
            );
            assert!(!matches!(op, Op::AsStrided { .. }), "{op}");
        }
        for op in [
            Op::<i64>::Transpose(0, 1),
            Op::Contiguous,
            Op::SqueezeProven,
            Op::Real,
        ] {
            assert!(!op.is_field_op(), "{op}");
        }
    }

    #[test]
    fn a_symbolic_squeeze_guards_the_axes_it_keeps() {
        let mut cx = Scope::new();
        let n = cx.declare_str("n 0..=8").expect("n");
        let ctx = || "view [1, n]".to_string();
        let low = lower(
            &mut Proving::new(&cx, &ctx),
            &[Expr::from(1), n],
            &ctx,
            &Op::Squeeze(None),
        )
        .expect("valid")
        .expect("derived");
        assert_eq!(low.ops, vec![Op::Reshape(vec![n])]);
        let guards: Vec<String> = low.guards.iter().map(ToString::to_string).collect();
        insta::assert_snapshot!(guards.join("\n"), @"squeeze: n != 1 (axis 1 is kept, so it is not of size 1)");
    }
}
