//! Index lowering for code generators, and symbolic queries answered with proofs.

use std::fmt;

use symshape::{Bindings, CmpOp, Cond, Expr, Proof, Scope, SymbolSpec};

use crate::error::Result;
use crate::stack::ViewStack;
use crate::symbolic::placeholder_strides;
use crate::view::View;

/// `(offset, valid)` of a view or stack as expressions in loop indices.
///
/// `index[k]` is the symbol `ik` declared with range `0..dim_k` (its declaration
/// carries the range, so simplification knows `0 <= ik < dim_k`).
///
/// Loop indices never take the name of a symbol the scope declares or the stack
/// mentions: when one of `i0, i1, ...` is taken, every index name gets one more leading
/// `_` (`_i0, _i1, ...`, then `__i0, ...`) until none is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lowered {
    /// The loop-index symbols `i0, i1, ...` (see the naming rule above), one per axis.
    pub index: Vec<Expr>,
    /// The buffer offset of element `index`, meaningful where `valid` holds.
    pub offset: Expr,
    /// Whether element `index` is valid (`true` without masks).
    pub valid: Cond,
}

impl fmt::Display for Lowered {
    /// Two lines: `offset: EXPR` and `valid: COND`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset: {}\nvalid: {}", self.offset, self.valid)
    }
}

/// The loop-index symbols of `shape`; an axis that is provably empty gets the
/// range `0..1` (no index exists, and the lowering says so with `valid: false`).
fn index_symbols(cx: &Scope, shape: &[Expr], taken: &[Expr]) -> Result<Vec<Expr>> {
    let mut prefix = String::new();
    while (0..shape.len()).any(|k| is_taken(cx, taken, &format!("{prefix}i{k}"))) {
        prefix.push('_');
    }
    shape
        .iter()
        .enumerate()
        .map(|(k, &d)| {
            let d = if is_empty_dim(cx, d) {
                Expr::from(1)
            } else {
                d
            };
            Ok(SymbolSpec::new(&format!("{prefix}i{k}")).below(d).build()?)
        })
        .collect()
}

/// Whether `name` is a symbol of `cx` or of `taken`.
fn is_taken(cx: &Scope, taken: &[Expr], name: &str) -> bool {
    cx.symbol(name).is_some() || taken.iter().any(|t| t.symbol_name() == Some(name))
}

/// The symbol `jk` declared `0..dim - 1`: every index of axis `k` that has a
/// next one, its name free like the loop indices' (see [`index_symbols`]).
fn step_symbol(cx: &Scope, dim: Expr, k: usize, taken: &[Expr]) -> Result<Expr> {
    let mut name = format!("j{k}");
    while is_taken(cx, taken, &name) {
        name.insert(0, '_');
    }
    Ok(SymbolSpec::new(&name).below(dim - 1).build()?)
}

/// The stride a step difference `d` along `axis` shows: `d` itself when it
/// mentions none of the loop symbols `index`; otherwise its value at the first
/// step (`first` on `axis`, 0 elsewhere) when the prover shows `d` equal to it
/// (the canonical form keeps `m*(i // m) + i % m` apart from `i`; the prover may
/// relate them); `None` when neither holds.
fn affine_step(sx: &Scope, d: Expr, index: &[Expr], axis: usize, first: i64) -> Option<Expr> {
    let mentioned = d.symbols();
    if !mentioned.iter().any(|s| index.contains(s)) {
        return Some(d);
    }
    let mut at = Bindings::new();
    for (a, &i) in index.iter().enumerate() {
        if mentioned.contains(&i) {
            at.set(i, if a == axis { first } else { 0 }).ok()?;
        }
    }
    let c = sx.substitute(d, &at);
    if c.symbols().iter().any(|s| index.contains(s)) {
        return None;
    }
    sx.prove_eq(d, c).is_true().then_some(c)
}

/// The symbols the fields of `views` mention (with repeats).
fn mentioned_symbols(views: &[View]) -> Vec<Expr> {
    let mut out = Vec::new();
    for v in views {
        let masks = v.mask().unwrap_or(&[]).iter().flat_map(|&(b, e)| [b, e]);
        let fields = v
            .shape()
            .iter()
            .chain(v.strides())
            .copied()
            .chain([v.offset()]);
        for e in fields.chain(masks) {
            if !e.is_const() {
                out.extend(e.symbols());
            }
        }
    }
    out
}

fn is_empty_dim(cx: &Scope, d: Expr) -> bool {
    cx.prove(d, CmpOp::Le, Expr::from(0)).is_true()
}

/// Maps index expressions of the top view down the stack: `(offset, valid)`.
fn lower_at(cx: &Scope, views: &[View], idx: Vec<Expr>) -> Result<(Expr, Cond)> {
    let mut cur = idx;
    let mut conds: Vec<Cond> = Vec::new();
    for level in (0..views.len()).rev() {
        let v = &views[level];
        let mut off = v.offset();
        for (&i, &t) in cur.iter().zip(v.strides()) {
            off += i * t;
        }
        let off = cx.simplify(off).check()?;
        if let Some(m) = v.mask() {
            for (&i, &(b, e)) in cur.iter().zip(m) {
                for c in [b.le(i), i.lt(e)] {
                    let c = cx.simplify_cond(c);
                    if !cx.prove_cond(c).is_true() {
                        conds.push(c);
                    }
                }
            }
        }
        if level == 0 {
            let valid = cx.simplify_cond(Cond::all(&conds)).check()?;
            return Ok((off, valid));
        }
        let below = &views[level - 1];
        if v.offset() == Expr::from(0)
            && v.shape() == below.shape()
            && v.strides() == placeholder_strides(cx, v.shape()).as_slice()
        {
            // A row-major level over a level of the same shape (a copy, `contiguous`):
            // its offset `sum(i_k * p_k)` unravels to the same indices, which the
            // `//` and `%` below would only give back after a proof per axis whose
            // cost grows with the rank.
            continue;
        }
        let place = placeholder_strides(cx, below.shape());
        cur = place
            .iter()
            .zip(below.shape())
            .enumerate()
            .map(|(j, (&p, &d))| {
                let q = off.floor_div(p);
                // An axis of size 0 has no valid element, so its digit is never
                // used; `max(d, 1)` keeps evaluating the expression defined.
                let digit = if j == 0 { q } else { q.floor_mod(d.max(1)) };
                cx.simplify(digit).check()
            })
            .collect::<Result<_, _>>()?;
    }
    Ok((Expr::from(0), Cond::constant(false)))
}

impl ViewStack {
    /// Lowers the stack to `(offset, valid)` in loop indices `i0, i1, ...`, simplified
    /// under `cx`: a reshape below that divides and re-multiplies indices cancels, and
    /// only masked (padded, shrunk-into-padding) axes appear in `valid`.
    ///
    /// # Errors
    /// [`crate::Error::Symshape`] when an expression exceeds symshape's limits.
    pub fn lower(&self, cx: &Scope) -> Result<Lowered> {
        let index = index_symbols(cx, self.shape(), &mentioned_symbols(self.views()))?;
        let (offset, valid) = if self.is_provably_empty(cx) {
            (Expr::from(0), Cond::constant(false))
        } else {
            lower_at(cx, self.views(), index.clone())?
        };
        Ok(Lowered {
            index,
            offset,
            valid,
        })
    }

    /// The real stride of every axis: `Some(stride)` when the offset is affine
    /// along the axis (stepping the axis by one, from any index to the next one
    /// inside the shape, moves the offset by the same amount), `None` when it is
    /// not proven affine (a reshape below wraps it).
    ///
    /// The axis is affine when a difference `offset(next) - offset(here)` of
    /// one step, simplified under `cx` and the stack's guards (binding checks
    /// them, so the stack is only used where they hold), mentions no loop index, or is proven
    /// equal to its value at the first step. Three forms of the step are tried:
    /// `ik` to `ik + 1`; `ik - 1` to `ik` under the fact `ik >= 1`; and `j` to
    /// `j + 1` for a `j` declared `0..dim - 1`. In the last two both ends are
    /// inside the axis, so the `//` and `%` of a reshape below simplify alike at
    /// both (stepping `ik + 1` to `dim` can leave a `%` that no longer cancels).
    /// An axis provably of at most one index has no step; any value is its
    /// stride, and it gets 0.
    ///
    /// `None` is conservative: it means the difference did not simplify to an
    /// expression free of indices, which is always the case for an axis that is
    /// not affine for some value of the symbols, and can also happen for an
    /// affine one whose difference symshape cannot simplify (see
    /// `docs/semantics.md`).
    ///
    /// # Errors
    /// As [`ViewStack::lower`].
    pub fn axis_strides(&self, cx: &Scope) -> Result<Vec<Option<Expr>>> {
        let taken = mentioned_symbols(self.views());
        let index = index_symbols(cx, self.shape(), &taken)?;
        if self.is_provably_empty(cx) {
            return Ok(vec![Some(Expr::from(0)); index.len()]);
        }
        // The stack is only ever used under its guards: they are facts here.
        let mut gx = cx.clone();
        for g in self.guards() {
            // A guard that contradicts the others never holds; binding reports it.
            let _ = gx.assume(g.cond());
        }
        let (base, _) = lower_at(&gx, self.views(), index.clone())?;
        let mut res = Vec::with_capacity(index.len());
        for k in 0..index.len() {
            res.push(self.axis_stride(&gx, &index, base, k, &taken)?);
        }
        Ok(res)
    }

    /// The stride of axis `k` (see [`ViewStack::axis_strides`]): the forms of the
    /// step are tried in turn, as the simplifier may cancel the `//` and `%` of a
    /// reshape below in one and not in another; each answer is exact.
    fn axis_stride(
        &self,
        cx: &Scope,
        index: &[Expr],
        base: Expr,
        k: usize,
        taken: &[Expr],
    ) -> Result<Option<Expr>> {
        let d_k = self.shape()[k];
        if cx.prove(d_k, CmpOp::Le, Expr::from(1)).is_true() {
            return Ok(Some(Expr::from(0)));
        }
        let i = index[k];
        // From `ik` to `ik + 1`: exact for every `ik` in range, the last one included.
        let mut at = index.to_vec();
        at[k] = i + 1;
        let (moved, _) = lower_at(cx, self.views(), at)?;
        let d = cx.simplify(moved - base).check()?;
        if let Some(s) = affine_step(cx, d, index, k, 0) {
            return Ok(Some(s));
        }
        // From `ik - 1` to `ik` under the fact `ik >= 1`: both ends in range.
        let mut sx = cx.clone();
        if sx.assume(i.ge(1)).is_ok() {
            let mut at = index.to_vec();
            at[k] = i - 1;
            let (here, _) = lower_at(&sx, self.views(), at)?;
            let (next, _) = lower_at(&sx, self.views(), index.to_vec())?;
            let d = sx.simplify(next - here).check()?;
            if let Some(s) = affine_step(&sx, d, index, k, 1) {
                return Ok(Some(s));
            }
        }
        // From `j` to `j + 1` for a `j` declared `0..dim - 1`: both ends in range.
        let mut taken = taken.to_vec();
        taken.extend_from_slice(index);
        let j = step_symbol(cx, d_k, k, &taken)?;
        let mut at = index.to_vec();
        at[k] = j;
        let (here, _) = lower_at(cx, self.views(), at.clone())?;
        at[k] = j + 1;
        let (next, _) = lower_at(cx, self.views(), at)?;
        let d = cx.simplify(next - here).check()?;
        let mut with_j = index.to_vec();
        with_j[k] = j;
        Ok(affine_step(cx, d, &with_j, k, 0))
    }

    fn is_provably_empty(&self, cx: &Scope) -> bool {
        self.shape().iter().any(|&d| is_empty_dim(cx, d))
    }
}

impl View {
    /// [`ViewStack::lower`] of this one view.
    ///
    /// # Errors
    /// As [`ViewStack::lower`].
    pub fn lower(&self, cx: &Scope) -> Result<Lowered> {
        ViewStack::new(self.clone()).lower(cx)
    }

    /// Whether the view is row-major at offset 0 without a mask (strides of size-1
    /// axes ignored), for every value of the symbols (`True`), none (`False`), or
    /// depending on them (`Unknown`).
    pub fn is_c_contiguous_in(&self, cx: &Scope) -> Proof {
        let mut answers = vec![cx.prove_eq(self.offset(), Expr::from(0))];
        if self.mask().is_some() {
            // A mask survives creation only when not provably full.
            answers.push(Proof::Unknown("the view has a mask".to_string()));
        }
        let want = placeholder_strides(cx, self.shape());
        for ((&d, &t), &w) in self.shape().iter().zip(self.strides()).zip(&want) {
            if cx.prove_eq(d, Expr::from(1)).is_true() {
                continue;
            }
            answers.push(cx.prove_cond(d.le(1).or(t.equals(w))));
        }
        combine(answers)
    }

    /// Axes whose stride is provably 1.
    pub fn unit_stride_axes(&self, cx: &Scope) -> Vec<usize> {
        (0..self.ndim())
            .filter(|&a| {
                cx.prove(self.strides()[a], CmpOp::Eq, Expr::from(1))
                    .is_true()
            })
            .collect()
    }

    /// Axes whose mask is not provably the whole axis.
    pub fn masked_axes(&self, cx: &Scope) -> Vec<usize> {
        let Some(m) = self.mask() else {
            return Vec::new();
        };
        m.iter()
            .zip(self.shape())
            .enumerate()
            .filter(|(_, (&(b, e), &d))| {
                !(cx.prove_eq(b, Expr::from(0)).is_true() && cx.prove_eq(e, d).is_true())
            })
            .map(|(a, _)| a)
            .collect()
    }
}

/// All true: true; any false: false; else the first unknown.
fn combine(answers: Vec<Proof>) -> Proof {
    if answers.contains(&Proof::False) {
        return Proof::False;
    }
    answers
        .into_iter()
        .find(|p| !p.is_true())
        .unwrap_or(Proof::True)
}
