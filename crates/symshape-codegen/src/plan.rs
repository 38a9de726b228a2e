//! The symbolic loop plan: one loop nest, built once from a view stack (or several
//! broadcast stacks) and valid for every binding that passes its checks.
//!
//! Invariants of a [`Plan`]:
//!
//! 1. Loop `k` runs its index `i{k}` over `lo..hi` with `0 <= lo <= hi <= extent`;
//!    the output axis of the loop is `0..extent`, and the indices outside `lo..hi`
//!    are masked out (they take the pad value). Only a materialize plan narrows loops.
//! 2. The loop symbols are declared with the range `lo..=hi - 1`, so every
//!    expression of the plan is simplified with the range its loop actually runs.
//! 3. A predicate of loop `k` mentions no loop index deeper than `k`; when it is false
//!    the whole sub-nest of that iteration is masked out.
//! 4. The output is row-major over the loops: element `(i0, i1, ...)` of the nest is
//!    `dst[sum(i_k * s_k)]`, where `s_k`, the step of loop `k` (`axis.steps`), is the
//!    product of the extents of the loops inside `k`.
//! 5. `checks` starts with the stack's guards in the order `ViewStack::guards` gives
//!    them, then the checks `ViewStack::bind` makes of the bound fields (each level
//!    makes a view, each level lies within the one below) where they are not proven,
//!    then one range check per declared symbol, then the scope's assumptions.

use std::fmt;

use symshape::{BigInt, CmpOp, Cond, Expr, ExprKind, Scope, SymbolSpec};
use symshape_view::{nest, View, ViewOps, ViewStack};

use crate::error::{Error, Result};

/// One loop of the nest: the nest's loop (the output axis it walks) with what only a
/// symbolic nest has, an index symbol, bounds inside the axis and predicates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    /// The loop index, a symbol declared `lo..=hi - 1`.
    pub index: Expr,
    /// The output axis this loop walks: its extent (several merged axes give their
    /// product) and, as its step, the output elements per step of this loop.
    pub axis: nest::Loop<Expr, Expr>,
    /// First index that runs.
    pub lo: Expr,
    /// One past the last index that runs.
    pub hi: Expr,
    /// Conditions tested once the index is set; a false one masks the iteration out.
    pub predicates: Vec<Cond>,
}

impl Loop {
    /// Whether the loop runs its whole axis (no mask became its bounds).
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.lo == Expr::from(0) && self.hi == self.axis.extent
    }
}

/// How one input is read inside the innermost loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The buffer offset read, in loop indices and symbols; only evaluated where valid.
    pub offset: Expr,
    /// Per-element validity left after bounds and hoisted predicates (`true` if none).
    pub valid: Cond,
}

/// What a check is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckKind {
    /// A pending guard of the stack, `lhs OP rhs`. It holds, as for
    /// `ViewStack::bind`, when each side's exact value fits in `i64` and the
    /// comparison of the two holds.
    Guard {
        /// The left side.
        lhs: Expr,
        /// The comparison.
        cmp: CmpOp,
        /// The right side.
        rhs: Expr,
    },
    /// A declared symbol within its range (and a multiple of its divisor).
    Range {
        /// The symbol.
        symbol: Expr,
        /// Inclusive lower bound, `None` for minus infinity.
        lo: Option<Expr>,
        /// Inclusive upper bound, `None` for plus infinity.
        hi: Option<Expr>,
        /// Every value is a multiple of this.
        divisor: u64,
    },
    /// Level `level` of the stack (0 is the bottom) makes a view with its bound
    /// fields, as `ViewStack::bind` requires: every field's exact value fits in
    /// `i64`, sizes are `>= 0`, the element count fits in `i64`, each mask pair is
    /// within `0 <= b <= e <= size`, and unless a size is 0, the offset of every
    /// index (masked or not) lies strictly between `i64::MIN` and `i64::MAX`.
    View {
        /// The level, counted from the bottom.
        level: usize,
        /// Its fields.
        fields: Fields,
    },
    /// The valid elements of level `level` (when it has any) lie within the
    /// elements of level `level - 1`, as `ViewStack::bind` requires of a stack.
    Within {
        /// The upper level, counted from the bottom (at least 1).
        level: usize,
        /// The fields of the level below.
        lower: Fields,
        /// The fields of the level.
        upper: Fields,
    },
    /// An assumption of the scope.
    Assumption {
        /// The assumed condition.
        cond: Cond,
    },
}

/// The fields of one level of a stack, the expressions `ViewStack::bind` evaluates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fields {
    /// The sizes of the axes.
    pub shape: Vec<Expr>,
    /// The stride of every axis.
    pub strides: Vec<Expr>,
    /// The offset of index `[0, ..., 0]`.
    pub offset: Expr,
    /// The valid range `[b, e)` of every axis, when the level is masked.
    pub mask: Option<Vec<(Expr, Expr)>>,
}

impl Fields {
    fn of(v: &View) -> Fields {
        Fields {
            shape: v.shape().to_vec(),
            strides: v.strides().to_vec(),
            offset: v.offset(),
            mask: v.mask().map(<[_]>::to_vec),
        }
    }

    /// Every field in the order the rendered checks read them: sizes, strides,
    /// offset, then both ends of each mask pair.
    #[must_use]
    pub fn flat(&self) -> Vec<Expr> {
        let mut out = self.shape.clone();
        out.extend_from_slice(&self.strides);
        out.push(self.offset);
        for &(b, e) in self.mask.iter().flatten() {
            out.push(b);
            out.push(e);
        }
        out
    }
}

impl fmt::Display for Fields {
    /// `shape [n, m] strides [m, 1] offset 0`, then ` mask [(0, n), (1, m)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shape {} strides {} offset {}",
            list(&self.shape),
            list(&self.strides),
            self.offset
        )?;
        if let Some(m) = &self.mask {
            let parts: Vec<String> = m.iter().map(|(b, e)| format!("({b}, {e})")).collect();
            write!(f, " mask [{}]", parts.join(", "))?;
        }
        Ok(())
    }
}

/// One condition on the symbols that must hold before the kernel runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// The condition.
    pub kind: CheckKind,
    /// How it prints: the guard's text, `n in 1..=4096`, or the assumption.
    pub text: String,
}

/// What the kernel computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanKind {
    /// Copy one view stack into a contiguous output, masked elements taking the pad.
    Materialize,
    /// Combine several broadcast inputs element by element.
    Elementwise,
}

/// A loop nest over symbolic extents, valid for every binding that passes `checks`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    kind: PlanKind,
    params: Vec<Expr>,
    shape: Vec<Expr>,
    numel: Expr,
    prelude: Vec<Cond>,
    loops: Vec<Loop>,
    accesses: Vec<Access>,
    checks: Vec<Check>,
}

impl Plan {
    /// The plan that copies `stack` into a row-major output of its shape, masked-out
    /// elements taking the pad value.
    ///
    /// Adjacent axes are merged where the merge is proven under `cx`, mask bounds that
    /// form a box become loop bounds, the other validity conditions become predicates
    /// at the outermost loop that decides them, and every index expression is simplified
    /// with the range its loop runs.
    ///
    /// # Errors
    /// [`Error::View`] when the stack cannot be lowered; [`Error::Symshape`] when an
    /// expression exceeds symshape's limits.
    pub fn materialize(cx: &Scope, stack: &ViewStack) -> Result<Plan> {
        let shape = stack.shape().to_vec();
        let lowered = stack.lower(cx)?;
        let mut checks = guard_checks(stack);
        checks.extend(level_checks(cx, stack, ""));
        checks.extend(scope_checks(cx));
        Plan::build(
            cx,
            PlanKind::Materialize,
            &shape,
            &lowered.index,
            &[(lowered.offset, lowered.valid)],
            checks,
        )
    }

    /// The plan of an elementwise kernel over `inputs`, each broadcast to `shape`
    /// (NumPy's rules). Each input is read at its own offset where its own validity
    /// holds and takes its pad value elsewhere; loops always run whole axes.
    ///
    /// # Errors
    /// [`Error::Unsupported`] without inputs; [`Error::View`] when an input does not
    /// broadcast to `shape` or cannot be lowered; [`Error::Symshape`] as for
    /// [`Plan::materialize`].
    pub fn elementwise(cx: &Scope, inputs: &[ViewStack], shape: &[Expr]) -> Result<Plan> {
        if inputs.is_empty() {
            return Err(Error::Unsupported {
                op: "plan_elementwise",
                message: format!("no inputs to broadcast to {}", list(shape)),
            });
        }
        let mut index = Vec::new();
        let mut reads = Vec::new();
        let mut checks = Vec::new();
        let mut levels = Vec::with_capacity(inputs.len());
        for input in inputs {
            let b = input.broadcast_to(cx, shape)?;
            let lowered = b.lower(cx)?;
            index = lowered.index;
            reads.push((lowered.offset, lowered.valid));
            for c in guard_checks(&b) {
                if !checks.contains(&c) {
                    checks.push(c);
                }
            }
            levels.push(b);
        }
        for (k, b) in levels.iter().enumerate() {
            for c in level_checks(cx, b, &format!("input {k} ")) {
                if !checks.contains(&c) {
                    checks.push(c);
                }
            }
        }
        checks.extend(scope_checks(cx));
        Plan::build(cx, PlanKind::Elementwise, shape, &index, &reads, checks)
    }

    fn build(
        cx: &Scope,
        kind: PlanKind,
        shape: &[Expr],
        index: &[Expr],
        reads: &[(Expr, Cond)],
        checks: Vec<Check>,
    ) -> Result<Plan> {
        let mut offsets: Vec<Expr> = reads.iter().map(|r| r.0).collect();
        let mut valids: Vec<Cond> = reads.iter().map(|r| r.1).collect();
        let groups = merge_axes(cx, index, shape, &mut offsets, &valids)?;
        let group_syms: Vec<Expr> = groups.iter().map(|g| g.0).collect();

        // Bounds: only a single input's mask can narrow the loops.
        let n = groups.len();
        let (ends, rest) = if kind == PlanKind::Materialize {
            let bounds = nest::mask_bounds(valids[0], &group_syms);
            valids[0] = Cond::constant(true);
            bounds
        } else {
            (vec![nest::Ends::default(); n], Vec::new())
        };

        let mut loops = Vec::with_capacity(n);
        let mut renamed = Vec::with_capacity(n);
        for (&(_, extent), ends) in groups.iter().zip(&ends) {
            let k = loops.len();
            let (lo, hi) = nest::valid_interval(
                &nest::Proven(cx),
                extent,
                ends.lows.iter().copied(),
                ends.highs.iter().copied(),
            );
            let (lo, hi) = (lo.check()?, hi.check()?);
            let index = loop_symbol(k, lo, hi)?;
            renamed.push(index);
            loops.push(Loop {
                index,
                axis: nest::Loop {
                    extent,
                    steps: Expr::from(1),
                },
                lo,
                hi,
                predicates: Vec::new(),
            });
        }
        for k in 0..n {
            let inner: Expr = groups[k + 1..].iter().map(|g| g.1).product();
            loops[k].axis.steps = cx.simplify(inner).check()?;
        }

        let map = |s: Expr| group_syms.iter().position(|&g| g == s).map(|k| renamed[k]);
        let mut accesses = Vec::with_capacity(offsets.len());
        for (&off, &valid) in offsets.iter().zip(&valids) {
            accesses.push(Access {
                offset: cx.simplify(off.substitute(map)).check()?,
                valid: cx.simplify_cond(valid.substitute(map)).check()?,
            });
        }
        let mut prelude = Vec::new();
        for atom in rest {
            let c = cx.simplify_cond(atom.substitute(map)).check()?;
            if c.as_bool() == Some(true) {
                continue;
            }
            let syms = c.symbols();
            match renamed.iter().rposition(|r| syms.contains(r)) {
                Some(k) => loops[k].predicates.push(c),
                None => prelude.push(c),
            }
        }
        Ok(Plan {
            kind,
            params: cx.symbols().to_vec(),
            shape: shape.to_vec(),
            numel: cx.simplify(shape.iter().copied().product()).check()?,
            prelude,
            loops,
            accesses,
            checks,
        })
    }

    /// What the kernel computes.
    #[must_use]
    pub fn kind(&self) -> PlanKind {
        self.kind
    }

    /// The kernel's symbol parameters: every symbol declared in the scope, in
    /// declaration order.
    #[must_use]
    pub fn params(&self) -> &[Expr] {
        &self.params
    }

    /// The output shape.
    #[must_use]
    pub fn shape(&self) -> &[Expr] {
        &self.shape
    }

    /// The number of output elements.
    #[must_use]
    pub fn numel(&self) -> Expr {
        self.numel
    }

    /// Conditions free of loop indices: when one is false, every element is masked out.
    #[must_use]
    pub fn prelude(&self) -> &[Cond] {
        &self.prelude
    }

    /// The loops, outermost first.
    #[must_use]
    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    /// One access per input, read in the innermost loop.
    #[must_use]
    pub fn accesses(&self) -> &[Access] {
        &self.accesses
    }

    /// Every check, numbered from 1 in this order by the rendered guard function.
    #[must_use]
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }
}

impl fmt::Display for Plan {
    /// One line per check, loop and access, indented by nesting.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            PlanKind::Materialize => "materialize",
            PlanKind::Elementwise => "elementwise",
        };
        writeln!(f, "plan {kind} {}", list(&self.shape))?;
        for (k, c) in self.checks.iter().enumerate() {
            writeln!(f, "check {}: {}", k + 1, c.text)?;
        }
        for c in &self.prelude {
            writeln!(f, "if {c}")?;
        }
        let mut indent = String::new();
        for l in &self.loops {
            write!(f, "{indent}for {} in {}..{}", l.index, l.lo, l.hi)?;
            if !l.is_full() {
                write!(f, " of 0..{}", l.axis.extent)?;
            }
            writeln!(f, " (dst stride {})", l.axis.steps)?;
            indent.push_str("  ");
            for c in &l.predicates {
                writeln!(f, "{indent}if {c}")?;
            }
        }
        for (k, a) in self.accesses.iter().enumerate() {
            write!(f, "{indent}read {k} at {}", a.offset)?;
            if a.valid.as_bool() != Some(true) {
                write!(f, " if {}", a.valid)?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

fn list(xs: &[Expr]) -> String {
    let parts: Vec<String> = xs.iter().map(ToString::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// The guards of `stack` as checks, in the order `ViewStack::guards` gives them.
fn guard_checks(stack: &ViewStack) -> Vec<Check> {
    stack
        .guards()
        .iter()
        .map(|g| Check {
            kind: CheckKind::Guard {
                lhs: g.lhs(),
                cmp: g.cmp(),
                rhs: g.rhs(),
            },
            text: g.to_string(),
        })
        .collect()
}

/// The checks `ViewStack::bind` makes of the bound levels of `stack` beyond its
/// guards, bottom first: each symbolic level makes a view (a concrete one was
/// validated when it was made), then each level lies within the one below. A check
/// that the ranges and assumptions of `cx` prove (which the guard function checks
/// too) is left out. Each text starts with `label` (`input 1 ` in an elementwise plan).
fn level_checks(cx: &Scope, stack: &ViewStack, label: &str) -> Vec<Check> {
    let views = stack.views();
    let mut res = Vec::new();
    for (level, v) in views.iter().enumerate() {
        if v.as_concrete().is_some() || always_binds(cx, v) {
            continue;
        }
        let fields = Fields::of(v);
        res.push(Check {
            text: format!("{label}view {level} binds: {fields}"),
            kind: CheckKind::View { level, fields },
        });
    }
    for level in 1..views.len() {
        let (lower, upper) = (&views[level - 1], &views[level]);
        if lower.as_concrete().is_some() && upper.as_concrete().is_some()
            || always_within(cx, lower, upper)
        {
            continue;
        }
        res.push(Check {
            kind: CheckKind::Within {
                level,
                lower: Fields::of(lower),
                upper: Fields::of(upper),
            },
            text: format!("{label}view {level} lies within view {}", level - 1),
        });
    }
    res
}

/// The range of `e` under `cx`, as its ends (`None` for infinite).
fn ends_of(cx: &Scope, e: Expr) -> (Option<BigInt>, Option<BigInt>) {
    let r = cx.range(e);
    (r.lo, r.hi)
}

/// Whether every binding within the ranges and assumptions of `cx` makes `v` a view
/// (the conditions of [`CheckKind::View`]), shown with the ranges of its fields.
fn always_binds(cx: &Scope, v: &View) -> bool {
    let (min, max) = (BigInt::from(i64::MIN), BigInt::from(i64::MAX));
    let zero = BigInt::from(0);
    let fits = |r: &(Option<BigInt>, Option<BigInt>)| {
        r.0.as_ref().is_some_and(|lo| *lo >= min) && r.1.as_ref().is_some_and(|hi| *hi <= max)
    };
    if !Fields::of(v)
        .flat()
        .into_iter()
        .all(|e| divides_safely(cx, e))
    {
        return false;
    }
    let shape: Vec<_> = v.shape().iter().map(|&d| ends_of(cx, d)).collect();
    let strides: Vec<_> = v.strides().iter().map(|&t| ends_of(cx, t)).collect();
    let offset = ends_of(cx, v.offset());
    if !shape.iter().chain(&strides).chain([&offset]).all(fits)
        || !shape
            .iter()
            .all(|r| r.0.as_ref().is_some_and(|lo| *lo >= zero))
    {
        return false;
    }
    if let Some(m) = v.mask() {
        let holds = |a: Expr, op: CmpOp, b: Expr| cx.prove(a, op, b).is_true();
        let ok = m.iter().zip(v.shape()).all(|(&(b, e), &d)| {
            fits(&ends_of(cx, b))
                && fits(&ends_of(cx, e))
                && holds(b, CmpOp::Ge, Expr::from(0))
                && holds(b, CmpOp::Le, e)
                && holds(e, CmpOp::Le, d)
        });
        if !ok {
            return false;
        }
    }
    // Sizes, strides and offset are finite here.
    let hi = |r: &(Option<BigInt>, Option<BigInt>)| r.1.clone().unwrap_or_default();
    let lo = |r: &(Option<BigInt>, Option<BigInt>)| r.0.clone().unwrap_or_default();
    let numel = shape.iter().fold(BigInt::from(1), |a, r| a * hi(r));
    let (mut below, mut above) = (lo(&offset), hi(&offset));
    for (d, t) in shape.iter().zip(&strides) {
        let (d0, d1) = (lo(d) - 1, hi(d) - 1);
        let ps = [&d0 * lo(t), &d0 * hi(t), &d1 * lo(t), &d1 * hi(t)];
        let (pmin, pmax) = (ps.iter().min().cloned(), ps.iter().max().cloned());
        let (pmin, pmax) = (pmin.unwrap_or_default(), pmax.unwrap_or_default());
        if pmin < min || pmax > max {
            return false;
        }
        if pmin < zero {
            below += pmin;
        }
        if pmax > zero {
            above += pmax;
        }
    }
    numel <= max && below > min && above < max
}

/// Whether every divisor in `e` is proven nonzero under `cx` (evaluation never
/// divides by zero, which `bind` refuses).
fn divides_safely(cx: &Scope, e: Expr) -> bool {
    let nonzero = |b: Expr| {
        cx.prove(b, CmpOp::Ge, Expr::from(1)).is_true()
            || cx.prove(b, CmpOp::Le, Expr::from(-1)).is_true()
    };
    match e.kind() {
        ExprKind::Const(_) | ExprKind::Symbol(_) => true,
        ExprKind::Sum { terms, .. } => terms.iter().all(|&(t, _)| divides_safely(cx, t)),
        ExprKind::Product(factors) => factors.iter().all(|&(f, _)| divides_safely(cx, f)),
        ExprKind::FloorDiv(a, b) | ExprKind::FloorMod(a, b) | ExprKind::CeilDiv(a, b) => {
            nonzero(b) && divides_safely(cx, a) && divides_safely(cx, b)
        }
        ExprKind::Min(args) | ExprKind::Max(args) => args.iter().all(|&a| divides_safely(cx, a)),
        _ => false,
    }
}

/// Whether the valid elements of `upper` lie within the elements of `lower` for every
/// binding within the ranges and assumptions of `cx` where both make views: the
/// first and last element `upper` reaches over its valid ranges (its reach when it
/// has a valid element), proven at least 0 and below the element count of `lower`.
fn always_within(cx: &Scope, lower: &View, upper: &View) -> bool {
    let zero = Expr::from(0);
    let (mut first, mut last) = (upper.offset(), upper.offset());
    for (k, (&d, &t)) in upper.shape().iter().zip(upper.strides()).enumerate() {
        let (b, e) = upper.mask().map_or((zero, d), |m| m[k]);
        let (x, y) = (b * t, (e - 1) * t);
        first += x.min(y);
        last += x.max(y);
    }
    let numel: Expr = lower.shape().iter().copied().product();
    cx.prove(first, CmpOp::Ge, zero).is_true() && cx.prove(last, CmpOp::Lt, numel).is_true()
}

/// One range check per declared symbol, then one check per assumption.
fn scope_checks(cx: &Scope) -> Vec<Check> {
    let mut res = Vec::new();
    for &s in cx.symbols() {
        let Some(spec) = s.symbol_spec() else {
            continue;
        };
        res.push(Check {
            kind: CheckKind::Range {
                symbol: s,
                lo: spec.lower(),
                hi: spec.upper(),
                divisor: spec.divisor(),
            },
            text: format!("{s} in {}", spec.range_text()),
        });
    }
    for &a in cx.assumptions() {
        res.push(Check {
            kind: CheckKind::Assumption { cond: a },
            text: format!("assume {a}"),
        });
    }
    res
}

/// The steps of a loop over lowered axes as [`nest::merge_contiguous`] merges them: the
/// step of every read's offset along its last axis (`None` when some read does not move by
/// a step free of every index, or a validity condition mentions the axis), and which axis
/// that is. A merged loop steps as its inner one, so `last` follows the merges; the loop
/// spans the axes after the previous loop's `last` up to its own.
#[derive(Clone)]
struct Reads {
    last: usize,
    steps: Option<Vec<Expr>>,
}

impl nest::Steps for Reads {
    type Step = Expr;

    fn steps(&self) -> Option<&[Expr]> {
        self.steps.as_deref()
    }
}

/// Merges adjacent axes where [`nest::merge_contiguous`] proves every read contiguous
/// across them, for every binding: an axis steps a read by `offset(i + 1) - offset(i)`
/// when that is free of every index, and an axis that a validity condition mentions is
/// left alone. A merged run of axes becomes one index `j` over the product of their
/// extents; `offset(a, b) = offset(0, a*d_b + b)`, so `j` replaces the run's last index and
/// the others become 0. Returns each loop's index symbol and extent; `offsets` are
/// rewritten in them.
fn merge_axes(
    cx: &Scope,
    index: &[Expr],
    shape: &[Expr],
    offsets: &mut [Expr],
    valids: &[Cond],
) -> Result<Vec<(Expr, Expr)>> {
    let in_valid = |s: &Expr| valids.iter().any(|v| v.symbols().contains(s));
    let step = |o: Expr, s: Expr| {
        let moved = o.substitute(|x| (x == s).then_some(s + 1));
        let d = cx.simplify(moved - o);
        let free = !d.symbols().iter().any(|x| index.contains(x));
        (free && d.check().is_ok()).then_some(d)
    };
    let mut runs: Vec<nest::Loop<Expr, Reads>> = index
        .iter()
        .zip(shape)
        .enumerate()
        .map(|(k, (&i, &extent))| nest::Loop {
            extent,
            steps: Reads {
                last: k,
                steps: if in_valid(&i) {
                    None
                } else {
                    offsets.iter().map(|&o| step(o, i)).collect()
                },
            },
        })
        .collect();
    nest::merge_contiguous(&nest::Proven(cx), &mut runs);
    let mut groups = Vec::with_capacity(runs.len());
    let mut first = 0;
    for (k, r) in runs.iter().enumerate() {
        let last = r.steps.last;
        if first == last {
            groups.push((index[last], r.extent));
            first = last + 1;
            continue;
        }
        let j = merge_symbol(k, r.extent)?;
        let span = &index[first..=last];
        let map = |s: Expr| {
            if s == index[last] {
                Some(j)
            } else {
                span.contains(&s).then(|| Expr::from(0))
            }
        };
        for o in offsets.iter_mut() {
            *o = cx.simplify(o.substitute(map)).check()?;
        }
        groups.push((j, r.extent));
        first = last + 1;
    }
    Ok(groups)
}

/// The symbol of a merged axis: `__m{k}` over `0..extent`.
fn merge_symbol(k: usize, extent: Expr) -> Result<Expr> {
    let spec = SymbolSpec::new(&format!("__m{k}")).below(extent);
    Ok(spec
        .build()
        .or_else(|_| SymbolSpec::new(&format!("__m{k}")).below(1).build())?)
}

/// The index of loop `k`, declared `lo..=hi - 1` (or `lo..=lo` when that range is
/// provably empty, so the symbol can still be built; the loop never runs then).
fn loop_symbol(k: usize, lo: Expr, hi: Expr) -> Result<Expr> {
    let name = format!("i{k}");
    match SymbolSpec::new(&name).range(lo, hi - 1).build() {
        Ok(s) => Ok(s),
        Err(_) => Ok(SymbolSpec::new(&name).range(lo, lo).build()?),
    }
}
