//! Binding symbolic views to values: plain, prepared (compiled once, run many
//! times), and inference of symbol values from a concrete shape.

use symshape::{Bindings, Cond, CondKind, Expr, Program, ProgramState, Scope};

use crate::concrete::ConcreteView;
use crate::error::{invalid, Error, Result};
use crate::guard::{values_of, Guard};
use crate::stack::ViewStack;
use crate::view::{fmt_list, View};

impl View {
    /// The concrete view for the values in `b`.
    ///
    /// Checks `b` against the symbols' ranges and the scope's assumptions, then
    /// every guard, then evaluates the fields and validates them as
    /// [`ConcreteView::create`] does (so a zero-size result gets offset 0 and a
    /// full mask is dropped). Binding the result of symbolic ops gives the same
    /// element mapping as running the ops on the bound view.
    ///
    /// # Errors
    /// [`Error::Guard`] naming the op, the guard and the values;
    /// [`Error::Symshape`] for an unbound symbol, a value out of range, a failed
    /// assumption or an overflow; the errors of [`ConcreteView::create`].
    pub fn bind(&self, cx: &Scope, b: &Bindings) -> Result<View> {
        cx.check(b)?;
        self.bind_checked(b).map(View::from)
    }

    pub(crate) fn bind_checked(&self, b: &Bindings) -> Result<ConcreteView> {
        for g in self.guards() {
            g.check(b)?;
        }
        let ev = |e: Expr| e.eval(b).map_err(Error::from);
        let shape: Vec<i64> = self.shape().iter().map(|&e| ev(e)).collect::<Result<_>>()?;
        let strides: Vec<i64> = self
            .strides()
            .iter()
            .map(|&e| ev(e))
            .collect::<Result<_>>()?;
        let offset = ev(self.offset())?;
        let mask = match self.mask() {
            None => None,
            Some(m) => Some(
                m.iter()
                    .map(|&(lo, hi)| Ok((ev(lo)?, ev(hi)?)))
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        ConcreteView::build("bind", shape, strides, offset, mask)
    }
}

impl ViewStack {
    /// The concrete stack for the values in `b`: every view bound (see
    /// [`View::bind`]), every guard checked, then merged as concrete stacks are.
    ///
    /// # Errors
    /// As [`View::bind`].
    pub fn bind(&self, cx: &Scope, b: &Bindings) -> Result<ViewStack> {
        cx.check(b)?;
        let views = self
            .views()
            .iter()
            .map(|v| v.bind_checked(b).map(View::from))
            .collect::<Result<Vec<_>>>()?;
        ViewStack::from_views(views)?.simplify()
    }
}

/// The symbols [`infer`] bound, in the order it found them; prints `n = 7, m = 5`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inferred(pub Vec<(Expr, i64)>);

impl std::fmt::Display for Inferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return write!(f, "nothing to infer");
        }
        for (k, (s, v)) in self.0.iter().enumerate() {
            if k > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{s} = {v}")?;
        }
        Ok(())
    }
}

/// Infers the values of the symbols of `shape` from a concrete shape of the same
/// rank (`[n, 2*m]` against `[7, 10]` gives `n = 7, m = 5`), adding them to `b`.
///
/// Axes with one unknown symbol are solved (linear equations) until nothing
/// changes; every axis must then match. Returns the symbols bound, in the order
/// they were found.
///
/// # Errors
/// [`Error::Invalid`] naming the axis when the ranks differ, an axis disagrees
/// or symbols remain that no axis determines; [`Error::Symshape`] when an
/// equation has no integral solution in range or is not linear.
pub fn infer(cx: &Scope, shape: &[Expr], concrete: &[i64], b: &mut Bindings) -> Result<Inferred> {
    const OP: &str = "infer";
    if shape.len() != concrete.len() {
        return Err(invalid(
            OP,
            format!(
                "shape {} has rank {} but {concrete:?} has rank {}",
                fmt_list(shape),
                shape.len(),
                concrete.len()
            ),
        ));
    }
    let mut found = Vec::new();
    loop {
        let mut progress = false;
        for (axis, (&e, &c)) in shape.iter().zip(concrete).enumerate() {
            let s = cx.substitute(e, b);
            if let [_] = s.symbols().as_slice() {
                let (sym, v) = cx.solve(s.equals(c), b).map_err(|err| {
                    invalid(
                        OP,
                        format!("axis {axis}: {e} == {c} has no solution: {err} (shape {} against {concrete:?})", fmt_list(shape)),
                    )
                })?;
                b.set(sym, v)?;
                found.push((sym, v));
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    for (axis, (&e, &c)) in shape.iter().zip(concrete).enumerate() {
        let s = cx.substitute(e, b);
        match s.as_i64() {
            Some(v) if v == c => {}
            Some(v) => {
                return Err(invalid(
                    OP,
                    format!(
                        "axis {axis}: size {} does not match {c} (shape {} against {concrete:?})",
                        if e.is_const() {
                            e.to_string()
                        } else {
                            format!("{e} = {v}")
                        },
                        fmt_list(shape)
                    ),
                ))
            }
            None => {
                let names: Vec<String> = s.symbols().iter().map(ToString::to_string).collect();
                return Err(invalid(
                    OP,
                    format!(
                        "axis {axis}: cannot infer {} from {e} == {c}; bind some of them first",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(Inferred(found))
}

/// A check on one output of a prepared program: `out OP 0`.
#[derive(Clone, Debug)]
enum Check {
    /// A guard of a view; the output is `lhs - rhs`.
    Guard(Guard),
    /// An assumption of the scope `d OP 0`.
    Assumption(Cond, symshape::CmpOp),
}

/// The compiled program shared by [`PreparedView`] and [`PreparedStack`]:
/// outputs are, per view, shape, strides, offset and mask bounds, then every
/// check.
#[derive(Debug)]
struct Prepared {
    slots: Vec<Expr>,
    ranges: Vec<(i64, i64)>,
    program: Program,
    state: ProgramState,
    /// Rank and whether a mask is present, per view.
    layouts: Vec<(usize, bool)>,
    checks: Vec<Check>,
}

fn i64_or(v: Option<&symshape::BigInt>, default: i64) -> i64 {
    v.and_then(|x| i64::try_from(x).ok()).unwrap_or(default)
}

/// The `d OP 0` comparisons of an assumption; `None` when it has a disjunction.
fn comparisons(c: Cond, out: &mut Vec<(Expr, symshape::CmpOp)>) -> Option<()> {
    match c.kind() {
        CondKind::Const(true) => Some(()),
        CondKind::Compare(d, op) => {
            out.push((d, op));
            Some(())
        }
        CondKind::And(parts) => parts.into_iter().try_for_each(|p| comparisons(p, out)),
        _ => None,
    }
}

impl Prepared {
    fn new(cx: &Scope, views: &[View]) -> Result<Prepared> {
        let mut outputs: Vec<Expr> = Vec::new();
        let mut layouts = Vec::with_capacity(views.len());
        for view in views {
            outputs.extend_from_slice(view.shape());
            outputs.extend_from_slice(view.strides());
            outputs.push(view.offset());
            if let Some(m) = view.mask() {
                for &(lo, hi) in m {
                    outputs.push(lo);
                    outputs.push(hi);
                }
            }
            layouts.push((view.ndim(), view.mask().is_some()));
        }
        let mut checks = Vec::new();
        for view in views {
            for g in view.guards() {
                if checks
                    .iter()
                    .any(|c| matches!(c, Check::Guard(o) if o == g))
                {
                    continue;
                }
                outputs.push(g.lhs() - g.rhs());
                checks.push(Check::Guard(g.clone()));
            }
        }
        let mut slots: Vec<Expr> = Vec::new();
        for e in &outputs {
            slots.extend(e.symbols());
        }
        slots.sort_by_key(|s| s.to_string());
        slots.dedup();
        for &a in cx.assumptions() {
            if !a.symbols().iter().all(|s| slots.contains(s)) {
                continue;
            }
            let mut parts = Vec::new();
            if comparisons(a, &mut parts).is_none() {
                return Err(invalid(
                    "prepare",
                    format!("assumption {a} is a disjunction; bind with View::bind instead"),
                ));
            }
            for (d, op) in parts {
                outputs.push(d);
                checks.push(Check::Assumption(a, op));
            }
        }
        let ranges = slots
            .iter()
            .map(|s| {
                let r = s.range();
                (
                    i64_or(r.lo.as_ref(), i64::MIN),
                    i64_or(r.hi.as_ref(), i64::MAX),
                )
            })
            .collect();
        let program = Program::compile(&slots, &outputs)?;
        let state = program.state();
        Ok(Prepared {
            slots,
            ranges,
            program,
            state,
            layouts,
            checks,
        })
    }

    /// Checks `values`, runs the program and every check; then builds each view.
    fn bind(&mut self, values: &[i64], mut each: impl FnMut(ConcreteView)) -> Result<()> {
        const OP: &str = "bind";
        if values.len() != self.slots.len() {
            return Err(invalid(
                OP,
                format!(
                    "{} values for the {} symbols {}",
                    values.len(),
                    self.slots.len(),
                    fmt_list(&self.slots)
                ),
            ));
        }
        for ((&v, &(lo, hi)), s) in values.iter().zip(&self.ranges).zip(&self.slots) {
            if v < lo || v > hi {
                return Err(invalid(
                    OP,
                    format!("{s} = {v} is outside its range [{lo}, {hi}]"),
                ));
            }
        }
        let out = self.program.run(&mut self.state, values)?;
        let fields: usize = self
            .layouts
            .iter()
            .map(|&(r, masked)| 2 * r + 1 + if masked { 2 * r } else { 0 })
            .sum();
        for (k, check) in self.checks.iter().enumerate() {
            let d = out.get(fields + k).copied().unwrap_or(0);
            let ok = match check {
                Check::Guard(g) => g.holds(d, 0),
                Check::Assumption(_, op) => op_holds(*op, d),
            };
            if !ok {
                let slots = &self.slots;
                let vals = values_of(slots, |s| {
                    slots
                        .iter()
                        .position(|&x| x == s)
                        .and_then(|i| values.get(i).copied())
                });
                return Err(match check {
                    Check::Guard(g) => Error::Guard {
                        op: g.op(),
                        guard: g.text(),
                        detail: format!("it is false with {vals}"),
                    },
                    Check::Assumption(a, _) => Error::Guard {
                        op: OP,
                        guard: format!("{a} (an assumption of the scope)"),
                        detail: format!("it is false with {vals}"),
                    },
                });
            }
        }
        let mut rest = out;
        for &(r, masked) in &self.layouts {
            let (shape, tail) = rest.split_at(r.min(rest.len()));
            let (strides, tail) = tail.split_at(r.min(tail.len()));
            let offset = tail.first().copied().unwrap_or(0);
            let n_mask = if masked { 2 * r } else { 0 };
            let mask = masked.then(|| {
                tail.get(1..1 + n_mask)
                    .unwrap_or(&[])
                    .chunks_exact(2)
                    .map(|p| (p[0], p[1]))
                    .collect::<Vec<_>>()
            });
            each(ConcreteView::build(
                OP,
                shape.to_vec(),
                strides.to_vec(),
                offset,
                mask,
            )?);
            rest = tail.get(1 + n_mask..).unwrap_or(&[]);
        }
        Ok(())
    }
}

/// A view compiled for binding many times: every shape, stride, offset and mask
/// bound, every guard and every assumption of the scope over its symbols is one
/// output of one [`symshape::Program`].
///
/// [`PreparedView::bind`] runs it without hashing and without allocating beyond
/// the result's own vectors.
#[derive(Debug)]
pub struct PreparedView {
    core: Prepared,
}

impl PreparedView {
    /// Compiles `view` under `cx`. Its symbols, sorted by name, are the inputs of
    /// [`PreparedView::bind`] ([`PreparedView::symbols`]).
    ///
    /// Ranges are checked numerically (a bound that is an expression over other
    /// symbols is checked by its numeric range; [`View::bind`] checks it exactly).
    ///
    /// # Errors
    /// [`Error::Invalid`] for an assumption over the view's symbols that is a
    /// disjunction (use [`View::bind`]); [`Error::Symshape`] when compiling fails.
    pub fn new(cx: &Scope, view: &View) -> Result<PreparedView> {
        Ok(PreparedView {
            core: Prepared::new(cx, std::slice::from_ref(view))?,
        })
    }

    /// The symbols, in the order [`PreparedView::bind`] takes their values.
    pub fn symbols(&self) -> &[Expr] {
        &self.core.slots
    }

    /// The concrete view for `values` (one per symbol, in [`PreparedView::symbols`] order).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a wrong number of values or a value out of range;
    /// [`Error::Guard`] for a failed guard or assumption; [`Error::Symshape`] for an
    /// overflow; the errors of [`ConcreteView::create`].
    pub fn bind(&mut self, values: &[i64]) -> Result<ConcreteView> {
        let mut res = None;
        self.core.bind(values, |v| res = Some(v))?;
        res.ok_or_else(|| invalid("bind", "a prepared view has one view"))
    }
}

/// A stack compiled for binding many times (see [`PreparedView`]); binding also
/// merges the concrete views as [`ViewStack::bind`] does.
#[derive(Debug)]
pub struct PreparedStack {
    core: Prepared,
}

impl PreparedStack {
    /// Compiles every view of `stack` and every guard under `cx`.
    ///
    /// # Errors
    /// As [`PreparedView::new`].
    pub fn new(cx: &Scope, stack: &ViewStack) -> Result<PreparedStack> {
        Ok(PreparedStack {
            core: Prepared::new(cx, stack.views())?,
        })
    }

    /// The symbols, in the order [`PreparedStack::bind`] takes their values.
    pub fn symbols(&self) -> &[Expr] {
        &self.core.slots
    }

    /// The concrete, merged stack for `values`.
    ///
    /// # Errors
    /// As [`PreparedView::bind`], and [`ViewStack::from_views`].
    pub fn bind(&mut self, values: &[i64]) -> Result<ViewStack> {
        let mut views = Vec::with_capacity(self.core.layouts.len());
        self.core.bind(values, |v| views.push(View::from(v)))?;
        ViewStack::from_views(views)?.simplify()
    }
}

fn op_holds(op: symshape::CmpOp, d: i64) -> bool {
    use symshape::CmpOp::*;
    match op {
        Lt => d < 0,
        Le => d <= 0,
        Eq => d == 0,
        Ne => d != 0,
        Ge => d >= 0,
        Gt => d > 0,
    }
}
