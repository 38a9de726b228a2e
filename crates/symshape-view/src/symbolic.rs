//! Ops on symbolic views: every precondition is proven, refuted (an error at once)
//! or recorded as a [`Guard`](crate::Guard) that binding checks.
//!
//! The formulas are those of the concrete engine written over expressions, so that
//! binding a result gives the element mapping the concrete op gives on the bound
//! view. Normalisations that depend on values (a zero-size view's offset, a mask
//! that turns out full) are left to binding, which re-creates the view concretely.

use symshape::{CmpOp, Expr, Scope};

use crate::engine::require_shape;
use crate::error::{field_rank, fmt_list, invalid, Result};
use crate::fields::require_mask;
use crate::guard::{Checker, Describe, GuardOp};
use crate::view::{Fields, View};

fn lit(v: i64) -> Expr {
    Expr::from(v)
}

impl Fields {
    pub(crate) fn of(v: &View) -> Fields {
        v.fields().clone()
    }

    /// Simplifies every field, drops a mask proven full and attaches the guards.
    pub(crate) fn finish(self, ck: Checker<'_>) -> Result<View> {
        let s = |e: Expr| ck.simplify(e).check();
        let shape: Vec<Expr> = self.shape.into_iter().map(s).collect::<Result<_, _>>()?;
        let strides: Vec<Expr> = self.strides.into_iter().map(s).collect::<Result<_, _>>()?;
        let offset = s(self.offset)?;
        let mask = match self.mask {
            None => None,
            Some(m) => {
                let m: Vec<(Expr, Expr)> = m
                    .into_iter()
                    .map(|(b, e)| Ok((s(b)?, s(e)?)))
                    .collect::<Result<_, symshape::Error>>()?;
                let full = m
                    .iter()
                    .zip(&shape)
                    .all(|(&(b, e), &d)| ck.is(b, CmpOp::Eq, lit(0)) && ck.is(e, CmpOp::Eq, d));
                (!full).then_some(m)
            }
        };
        // As `create` does: a view proven to have no elements reads nothing, so
        // its offset and mask are normalised away.
        let empty = shape.iter().any(|&d| ck.is(d, CmpOp::Eq, lit(0)));
        let (offset, mask) = if empty {
            (lit(0), None)
        } else {
            (offset, mask)
        };
        Ok(View::from_fields(
            Fields {
                shape,
                strides,
                offset,
                mask,
            },
            ck.guards,
        ))
    }
}

/// Row-major strides of `shape` as expressions; zero-size axes count as size 1.
pub(crate) fn placeholder_strides(cx: &Scope, shape: &[Expr]) -> Vec<Expr> {
    let mut res = vec![lit(1); shape.len()];
    let mut acc = lit(1);
    for (axis, &d) in shape.iter().enumerate().rev() {
        res[axis] = acc;
        acc = cx.simplify(acc * d.max(1));
    }
    res
}

/// A shape, named `shape [..]` in messages; formatted only for a message.
struct ShapeCtx<'a>(&'a [Expr]);

impl Describe for ShapeCtx<'_> {
    fn describe(&self) -> String {
        format!("shape {}", fmt_list(self.0))
    }
}

/// [`View::create`] with symbolic fields.
pub(crate) fn create(
    cx: &Scope,
    shape: &[Expr],
    strides: Option<&[Expr]>,
    offset: Expr,
    mask: Option<&[(Expr, Expr)]>,
) -> Result<View> {
    crate::concrete::check_rank("create", shape.len(), || "the view".to_string())?;
    let ctx = ShapeCtx(shape);
    let mut ck = Checker::new(cx, GuardOp::CREATE, &[], &ctx);
    if let Some(s) = strides.filter(|s| s.len() != shape.len()) {
        let field = format!("strides {} have", fmt_list(s));
        return Err(field_rank("create", &field, s.len(), shape));
    }
    if let Some(m) = mask.filter(|m| m.len() != shape.len()) {
        return Err(field_rank("create", "mask has", m.len(), shape));
    }
    require_shape(&mut ck, "create", shape, None)?;
    if let Some(m) = mask {
        require_mask(&mut ck, "create", shape, m)?;
    }
    let strides = match strides {
        Some(s) => s.to_vec(),
        None => placeholder_strides(cx, shape),
    };
    Fields {
        shape: shape.to_vec(),
        strides,
        offset,
        mask: mask.map(<[_]>::to_vec),
    }
    .finish(ck)
}

pub(crate) fn checker<'a>(cx: &'a Scope, op: GuardOp, v: &'a View) -> Checker<'a> {
    Checker::new(cx, op, v.guards(), v)
}

/// Reshape on a symbolic view when the result is provably one view; `None` when
/// that depends on values.
///
/// Size-1 axes are set aside; the other axes are cut into groups whose sizes
/// multiply to provably equal place values; inside a group the source axes must
/// be provably glued (`t[k] == t[k+1] * s[k+1]`), and a masked axis must be a
/// group of its own on both sides.
pub(crate) fn reshape(cx: &Scope, v: &View, new: &[Expr]) -> Result<Option<View>> {
    let mut ck = checker(cx, GuardOp::RESHAPE, v);
    require_shape(&mut ck, "reshape", new, None)?;
    let old = v.shape();
    let (n_old, n_new): (Expr, Expr) =
        (old.iter().copied().product(), new.iter().copied().product());
    if cx.prove_eq(n_old, n_new) == symshape::Proof::False {
        return Err(invalid(
            "reshape",
            format!(
                "cannot reshape {} (numel {}) to {} (numel {})",
                v.ctx(),
                cx.simplify(n_old),
                fmt_list(new),
                cx.simplify(n_new)
            ),
        ));
    }
    let mut f = Fields::of(v);
    if old == new {
        return f.finish(ck).map(Some);
    }
    let one = |d: Expr| ck.is(d, CmpOp::Eq, lit(1));
    let full = |axis: usize| match v.mask() {
        None => true,
        Some(m) => ck.is(m[axis].0, CmpOp::Eq, lit(0)) && ck.is(m[axis].1, CmpOp::Eq, old[axis]),
    };
    let mut src = Vec::new();
    for (axis, &d) in old.iter().enumerate() {
        if one(d) {
            if !full(axis) {
                return Ok(None);
            }
            continue;
        }
        src.push(axis);
    }
    let tgt: Vec<usize> = (0..new.len()).filter(|&j| !one(new[j])).collect();
    let t = v.strides();
    let mut strides = vec![lit(0); new.len()];
    let mut mask: Vec<(Expr, Expr)> = new.iter().map(|&d| (lit(0), d)).collect();
    let (mut i, mut j) = (0, 0);
    while i < src.len() || j < tgt.len() {
        if i == src.len() || j == tgt.len() {
            return Ok(None);
        }
        let (i0, j0) = (i, j);
        let (mut ps, mut pt) = (old[src[i]], new[tgt[j]]);
        i += 1;
        j += 1;
        loop {
            if ps == pt || ck.is(ps, CmpOp::Eq, pt) {
                break;
            }
            if i < src.len() && (multiple_at_least(cx, ps, pt) || ck.is(ps, CmpOp::Le, pt)) {
                ps = cx.simplify(ps * old[src[i]]);
                i += 1;
            } else if j < tgt.len() && (multiple_at_least(cx, pt, ps) || ck.is(pt, CmpOp::Le, ps)) {
                pt = cx.simplify(pt * new[tgt[j]]);
                j += 1;
            } else {
                return Ok(None);
            }
        }
        let group = &src[i0..i];
        if group.iter().any(|&a| !full(a)) {
            match (group, v.mask()) {
                ([a], Some(m)) if j - j0 == 1 => mask[tgt[j0]] = m[*a],
                _ => return Ok(None),
            }
        }
        for w in group.windows(2) {
            if !ck.is(t[w[0]], CmpOp::Eq, t[w[1]] * old[w[1]]) {
                return Ok(None);
            }
        }
        let mut acc = t[src[i - 1]];
        for &jj in tgt[j0..j].iter().rev() {
            strides[jj] = acc;
            acc *= new[jj];
        }
    }
    f.shape = new.to_vec();
    f.strides = strides;
    f.mask = v.mask().map(|_| mask);
    f.finish(ck).map(Some)
}

/// Whether `x <= y` for a product of sizes `x` (so `x >= 0`) because `y` is `x` times a
/// factor `q` with `q >= 1` for every value of its symbols: `x * (q - 1) >= 0`. The
/// prover bounds the factors of a product one by one only up to 8 factors, so it leaves
/// `a <= a*b*...*i` unknown from 9 symbols on; this structural test decides the
/// comparisons of a row-major flatten of any number of sizes, each at least 1.
fn multiple_at_least(cx: &Scope, x: Expr, y: Expr) -> bool {
    if x.as_i64().is_some_and(|c| c <= 0) {
        return false;
    }
    let q = cx.simplify(y.floor_div(x));
    q.check().is_ok() && q * x == y && cx.prove(q, CmpOp::Ge, lit(1)).is_true()
}

/// The canonical form as far as proofs decide it: axes with provably one valid
/// index get stride 0 (the offset absorbs them); a provably zero-size view gets
/// strides 0 and offset 0; a provably empty mask gets the concrete empty form.
pub(crate) fn canonical(cx: &Scope, v: &View) -> Result<View> {
    let ck = checker(cx, GuardOp::CANONICAL, v);
    let mut f = Fields::of(v);
    f.canonicalize(&ck, v.numel());
    f.finish(ck)
}

/// Whether `v` reads its elements row-major from its offset: no mask, and every
/// axis not provably of size 1 has its placeholder stride (proofs under `ck`).
fn is_row_major(ck: &Checker<'_>, v: &View) -> bool {
    if v.mask().is_some() {
        return false;
    }
    let p = placeholder_strides(ck.cx, v.shape());
    v.shape()
        .iter()
        .zip(v.strides())
        .zip(&p)
        .all(|((&d, &t), &q)| t == q || ck.is(d, CmpOp::Eq, lit(1)) || ck.is(t, CmpOp::Eq, q))
}

/// `v` with its broadcast axes (stride 0, size proven at least 1, other than the literal 1)
/// of size 1; `None` when it has none, or a mask.
fn unbroadcast(cx: &Scope, v: &View) -> Option<View> {
    if v.mask().is_some() {
        return None;
    }
    let (zero, one) = (lit(0), lit(1));
    let mut f = Fields::of(v);
    let mut narrowed = false;
    for (d, &t) in f.shape.iter_mut().zip(v.strides()) {
        if t == zero && *d != one && cx.prove(*d, CmpOp::Ge, one).is_true() {
            *d = one;
            narrowed = true;
        }
    }
    narrowed.then(|| View::from_fields(f, v.guards().to_vec()))
}

/// The one view equal to `upper` read through `lower` (a stack pair), when that
/// is provable; `None` otherwise. Two provable cases: `lower` is row-major
/// (then the composition is `upper` shifted by `lower`'s offset), or `upper` is
/// row-major at offset 0 over all of `lower`'s elements (then it is `lower`
/// reshaped to `upper`'s shape, when that reshape is provably one view). Both
/// views' guards are kept.
pub(crate) fn merge(cx: &Scope, lower: &View, upper: &View) -> Result<Option<View>> {
    // A broadcast axis of `upper` reads the same elements below for each of its indices, so
    // the pair is one view exactly when the pair with that axis of size 1 is, and then it is
    // that view broadcast. The narrower pair is usually the one an expand started from,
    // whose questions the scope has answered already.
    if let Some(narrow) = unbroadcast(cx, upper) {
        return match merge(cx, lower, &narrow)? {
            Some(m) => crate::engine::expand(cx, &m, upper.shape()).map(Some),
            None => Ok(None),
        };
    }
    let mut guards = lower.guards().to_vec();
    crate::guard::add_guards(&mut guards, upper.guards().iter().cloned());
    let ck = Checker::new(cx, GuardOp::MERGE, &guards, upper);
    if is_row_major(&ck, lower) {
        let mut f = Fields::of(upper);
        f.offset += lower.offset();
        return f.finish(ck).map(Some);
    }
    // A row-major upper view may read only a prefix of the elements below; only
    // reading all of them is a reshape.
    if ck.is(upper.offset(), CmpOp::Eq, lit(0))
        && ck.is(upper.numel(), CmpOp::Eq, lower.numel())
        && is_row_major(&ck, upper)
    {
        let with = lower.clone().with_guards(upper.guards());
        // An error here only means the merge is not proven.
        return Ok(reshape(cx, &with, upper.shape()).ok().flatten());
    }
    Ok(None)
}
