//! Binding symbolic views to values: plain, prepared (compiled once, run many
//! times), and inference of symbol values from a concrete shape.

use symshape::{Bindings, Expr, Program, ProgramState, Scope};

use crate::concrete::{ConcreteStack, ConcreteView};
use crate::error::{fmt_list, invalid, Error, Result};
use crate::guard::{by_name, values_of, Guard};
use crate::stack::ViewStack;
use crate::view::View;

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
    pub fn bind(&self, cx: &Scope, b: &Bindings) -> Result<ConcreteView> {
        cx.check(b)
            .map_err(Error::from)
            .and_then(|()| self.bind_checked(b))
            .map_err(|e| unbound_first(std::slice::from_ref(self), b, e))
    }

    pub(crate) fn bind_checked(&self, b: &Bindings) -> Result<ConcreteView> {
        if let Some(c) = self.as_concrete() {
            return Ok(c.clone());
        }
        for g in self.guards() {
            g.check(b)?;
        }
        // A field whose value leaves i64 is named, with the values that made it so.
        let ev = |what: &dyn Fn() -> String, e: Expr| {
            e.eval(b).map_err(|err| match err {
                symshape::Error::Overflow { expr, .. } => crate::error::overflow(
                    "bind",
                    format!(
                        "the {} (`{expr}`) exceeds i64 with the values bound; bind smaller values",
                        what()
                    ),
                ),
                err => Error::from(err),
            })
        };
        let shape: Vec<i64> = (self.shape().iter().enumerate())
            .map(|(k, &e)| ev(&|| format!("size of axis {k}"), e))
            .collect::<Result<_>>()?;
        let strides: Vec<i64> = (self.strides().iter().enumerate())
            .map(|(k, &e)| ev(&|| format!("stride of axis {k}"), e))
            .collect::<Result<_>>()?;
        let offset = ev(&|| "offset".to_owned(), self.offset())?;
        let mask = match self.mask() {
            None => None,
            Some(m) => Some(
                (m.iter().enumerate())
                    .map(|(k, &(lo, hi))| {
                        let end = |side: &'static str| move || format!("mask {side} of axis {k}");
                        Ok((ev(&end("start"), lo)?, ev(&end("end"), hi)?))
                    })
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
    pub fn bind(&self, cx: &Scope, b: &Bindings) -> Result<ConcreteStack> {
        let bound = cx.check(b).map_err(Error::from).and_then(|()| {
            self.views()
                .iter()
                .map(|v| v.bind_checked(b))
                .collect::<Result<Vec<_>>>()
        });
        ConcreteStack::new(bound.map_err(|e| unbound_first(self.views(), b, e))?)
    }
}

/// Every symbol the fields and guards of `views` mention, sorted by name: the
/// inputs of a prepared view or stack, in order.
fn symbols_of(views: &[View]) -> Vec<Expr> {
    by_name(
        outputs_of(views)
            .0
            .iter()
            .flat_map(|e| e.symbols())
            .collect(),
    )
}

/// Per view its shape, strides, offset and mask bounds, then both sides of every
/// distinct guard; with, per view, its rank and whether it has a mask, and the
/// guards in first-seen order with the view that first carries each.
type Outputs = (Vec<Expr>, Vec<(usize, bool)>, Vec<(usize, Guard)>);

fn outputs_of(views: &[View]) -> Outputs {
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
    let mut guards: Vec<(usize, Guard)> = Vec::new();
    for (k, view) in views.iter().enumerate() {
        for g in view.guards() {
            // A repeated guard passed when it was first checked.
            if guards.iter().any(|(_, o)| o == g) {
                continue;
            }
            outputs.push(g.lhs());
            outputs.push(g.rhs());
            guards.push((k, g.clone()));
        }
    }
    (outputs, layouts, guards)
}

/// The error plain binding reports for `err`: when `b` leaves a symbol of `views`
/// unbound, the first such symbol by name, as prepared binding reports it
/// (`bind: symbol `s` is unbound`), whatever check failed first.
fn unbound_first(views: &[View], b: &Bindings, err: Error) -> Error {
    match symbols_of(views).into_iter().find(|&s| b.get(s).is_none()) {
        Some(s) => Error::Symshape(symshape::Error::Unbound {
            op: "bind",
            name: s.to_string(),
        }),
        None => err,
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
            if let [unknown] = s.symbols().as_slice() {
                let (sym, v) = cx.solve(s.equals(c), b).map_err(|_| {
                    invalid(
                        OP,
                        format!(
                            "axis {axis} has size {e}, which is never {c} for {unknown} in {}: shape {} cannot take the sizes {concrete:?}",
                            cx.range(*unknown),
                            fmt_list(shape)
                        ),
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

/// The compiled program shared by [`PreparedView`] and [`PreparedStack`]:
/// outputs are, per view, shape, strides, offset and mask bounds, then both
/// sides of every guard; the scope's checks are part of the program
/// ([`Program::compile_checked`]).
#[derive(Debug)]
struct Prepared {
    slots: Vec<Expr>,
    /// `None` when a field, guard or check holds a constant beyond i64: every
    /// bind then takes the plain path (whose evaluation is exact).
    program: Option<Program>,
    /// Rank and whether a mask is present, per view.
    layouts: Vec<(usize, bool)>,
    /// Guards in first-seen order, with the view that first carries each.
    guards: Vec<(usize, Guard)>,
    /// For the exact re-evaluation of a run that overflowed i64 or divided by zero.
    cold: Cold,
}

/// What the plain binding path needs.
#[derive(Debug)]
struct Cold {
    cx: Scope,
    views: Vec<View>,
    /// Slot indices in an order where every symbol is set before the symbols of
    /// its bounds, so `Bindings::set` checks only declared numeric ranges.
    set_order: Vec<usize>,
}

impl Prepared {
    fn new(cx: &Scope, views: &[View]) -> Result<Prepared> {
        let (outputs, layouts, guards) = outputs_of(views);
        let slots = symbols_of(views);
        let program = match Program::compile_checked(cx, &slots, &outputs) {
            Ok(p) => Some(p),
            // A constant beyond i64 (`min(n, 2^70)`) can still evaluate to an i64.
            Err(symshape::Error::Overflow { op: "compile", .. }) => None,
            Err(e) => return Err(e.into()),
        };
        let mut set_order: Vec<usize> = (0..slots.len()).collect();
        // A symbol is deeper than the symbols of its bounds.
        set_order.sort_by_key(|&k| std::cmp::Reverse(slots[k].depth()));
        Ok(Prepared {
            slots,
            program,
            layouts,
            guards,
            cold: Cold {
                cx: cx.clone(),
                views: views.to_vec(),
                set_order,
            },
        })
    }

    /// Runs the program with its checks, then every guard and builds each view,
    /// in the order [`ViewStack::bind`] checks them.
    fn cache(&self) -> BindCache {
        BindCache {
            state: self.program.as_ref().map(Program::state),
            hints: Vec::new(),
        }
    }

    fn bind(
        &self,
        cache: &mut BindCache,
        values: &[i64],
        mut each: impl FnMut(ConcreteView),
    ) -> Result<()> {
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
        let Some(program) = self.program.as_ref() else {
            // As a run reports them: a value no `Bindings` can hold first, in slot order.
            for (&s, &v) in self.slots.iter().zip(values) {
                Bindings::new().set(s, v)?;
            }
            return self.cold.bind(&self.slots, values, each);
        };
        let state = cache.state.get_or_insert_with(|| program.state());
        let out = match program.run_checked(state, values) {
            Ok(out) => out,
            Err(e @ (symshape::Error::OutOfRange { .. } | symshape::Error::Violated { .. })) => {
                return Err(e.into())
            }
            // Rare: an evaluation error, which plain binding may report after a guard
            // or a build error of an earlier view.
            Err(_) => return self.cold.bind(&self.slots, values, each),
        };
        let fields: usize = self
            .layouts
            .iter()
            .map(|&(r, masked)| 2 * r + 1 + if masked { 2 * r } else { 0 })
            .sum();
        let mut rest = out;
        let mut guards = self.guards.iter().enumerate().peekable();
        for (k, &(r, masked)) in self.layouts.iter().enumerate() {
            while let Some((i, (_, g))) = guards.next_if(|(_, (at, _))| *at == k) {
                let side = |j: usize| out.get(fields + 2 * i + j).copied().unwrap_or(0);
                let (lhs, rhs) = (side(0), side(1));
                if !g.holds(lhs, rhs) {
                    let slots = &self.slots;
                    let vals = values_of(&g.symbols(), |s| {
                        slots
                            .iter()
                            .position(|&x| x == s)
                            .and_then(|i| values.get(i).copied())
                    });
                    return Err(g.failure(lhs, rhs, &vals));
                }
            }
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

impl Cold {
    /// Plain binding: `Scope::check`, then per view its guards and fields.
    fn bind(
        &self,
        slots: &[Expr],
        values: &[i64],
        mut each: impl FnMut(ConcreteView),
    ) -> Result<()> {
        let mut b = Bindings::new();
        for &k in &self.set_order {
            if let (Some(&s), Some(&v)) = (slots.get(k), values.get(k)) {
                b.set(s, v)?;
            }
        }
        self.cx.check(&b)?;
        for v in &self.views {
            each(v.bind_checked(&b)?);
        }
        Ok(())
    }
}

/// A view compiled for binding many times: every shape, stride, offset and mask
/// bound, every guard and every assumption of the scope over its symbols is one
/// output of one [`symshape::Program`].
///
/// The prepared view is read-only and can be shared between threads; each caller
/// owns its scratch space, a [`BindCache`] ([`PreparedView::cache`]).
/// [`PreparedView::bind`] runs it without hashing and without allocating beyond
/// the result's own vectors.
#[derive(Debug)]
pub struct PreparedView {
    core: Prepared,
}

/// Scratch space for binding a [`PreparedView`] or [`PreparedStack`]: the
/// registers of its compiled program, and for a stack the probe that last
/// showed each merge not to be one view. Make one per thread with `cache()` and
/// reuse it for every bind (a cache made for another prepared object is reset on
/// first use, never misread: a remembered probe is only an order in which to try
/// them).
#[derive(Clone, Debug)]
pub struct BindCache {
    state: Option<ProgramState>,
    /// Per merge decision of a [`PreparedStack`], the probe that last refuted it.
    hints: Vec<u32>,
}

impl PreparedView {
    /// Compiles `view` under `cx`. Its symbols, sorted by name, are the inputs of
    /// [`PreparedView::bind`] ([`PreparedView::symbols`]).
    ///
    /// Ranges (bounds that are expressions included), divisors and every
    /// assumption of `cx` over these symbols (`or` and `!=` included) are checked
    /// exactly in the same program: binding gives what [`View::bind`] gives with
    /// bindings holding exactly these values.
    ///
    /// A field, guard side or check holding a constant beyond i64 (which may
    /// still evaluate to an i64, as in `min(n, 2^70)`) is not compiled: every
    /// bind then takes the plain path, with the same answers.
    ///
    /// # Errors
    /// [`Error::Symshape`] when an expression is invalid (a budget error).
    pub fn new(cx: &Scope, view: &View) -> Result<PreparedView> {
        Ok(PreparedView {
            core: Prepared::new(cx, std::slice::from_ref(view))?,
        })
    }

    /// The concrete view for `values` (one per symbol, in [`PreparedView::symbols`] order).
    ///
    /// The result is exactly [`View::bind`]'s with bindings holding these values
    /// (a value outside its declared numeric range, which no [`Bindings`] can hold,
    /// is reported first, as [`Bindings::set`] reports it). A run that overflows
    /// i64 or divides by zero is redone by the plain path, so even then the answer
    /// is the same; otherwise nothing is hashed and only the result is allocated.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a wrong number of values; [`Error::Symshape`] for a
    /// value out of range, a violated assumption or an overflow; [`Error::Guard`]
    /// for a failed guard; the errors of [`ConcreteView::create`].
    pub fn bind(&self, cache: &mut BindCache, values: &[i64]) -> Result<ConcreteView> {
        let mut res = None;
        self.core.bind(cache, values, |v| res = Some(v))?;
        res.ok_or_else(|| invalid("bind", "a prepared view has one view"))
    }
}

/// The inputs of a prepared view or stack: its symbols, binding from [`Bindings`], and the
/// scratch space.
macro_rules! prepared_inputs {
    ($t:ident, $out:ty) => {
        impl $t {
            #[doc = concat!("The symbols, in the order [`", stringify!($t), "::bind`] takes their values.")]
            #[must_use]
            pub fn symbols(&self) -> &[Expr] {
                &self.core.slots
            }

            #[doc = concat!("[`", stringify!($t), "::bind`] with the values of [`", stringify!($t), "::symbols`] taken")]
            /// from `b` (a framework's run-time bindings).
            ///
            /// Only these symbols are read: when `b` binds other symbols too,
            /// [`View::bind`] would also check those and the assumptions that mention
            /// them (`n <= p` with `p` not in the view), which this does not. Check such
            /// bindings once with [`Scope::check`] where they are made.
            ///
            /// # Errors
            /// [`Error::Symshape`] naming the first symbol `b` does not bind; otherwise as
            #[doc = concat!("[`", stringify!($t), "::bind`].")]
            pub fn bind_with(&self, cache: &mut BindCache, b: &Bindings) -> Result<$out> {
                let values = slot_values(&self.core.slots, b)?;
                self.bind(cache, &values)
            }

            #[doc = concat!("Fresh scratch space for [`", stringify!($t), "::bind`].")]
            #[must_use]
            pub fn cache(&self) -> BindCache {
                self.core.cache()
            }
        }
    };
}
prepared_inputs!(PreparedView, ConcreteView);
prepared_inputs!(PreparedStack, ConcreteStack);

/// The values `b` holds for `slots`, in order.
fn slot_values(slots: &[Expr], b: &Bindings) -> Result<Vec<i64>> {
    slots
        .iter()
        .map(|&s| {
            b.get(s).ok_or_else(|| {
                Error::Symshape(symshape::Error::Unbound {
                    op: "bind",
                    name: s.to_string(),
                })
            })
        })
        .collect()
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

    /// The concrete, merged stack for `values`: exactly what [`ViewStack::bind`]
    /// returns with bindings holding these values, as the [`ConcreteStack`]
    /// kernels take.
    ///
    /// Before merging, each merge [`ConcreteStack::new`] would try is looked at
    /// through a few evaluated points that may show it is not one view (an
    /// invalid point between two valid ones, or two steps along one axis that
    /// move the offset differently). When all are shown so, the bound levels are
    /// returned as they are, without running the deciders; otherwise they are
    /// merged as [`ConcreteStack::new`] merges them. The probe that worked for
    /// each merge is kept in `cache` and tried first on the next bind, so the
    /// decision is taken again only when it no longer holds at the new values
    /// (typically at sizes 0 and 1).
    ///
    /// # Errors
    /// As [`PreparedView::bind`], and [`ViewStack::from_views`].
    pub fn bind(&self, cache: &mut BindCache, values: &[i64]) -> Result<ConcreteStack> {
        if let [_] = self.core.layouts.as_slice() {
            // One bound view: no pair to check or merge.
            let mut res = None;
            self.core.bind(cache, values, |v| res = Some(v))?;
            return res
                .map(ConcreteStack::from)
                .ok_or_else(|| invalid("bind", "a prepared stack has one view"));
        }
        let mut views = Vec::with_capacity(self.core.layouts.len());
        self.core.bind(cache, values, |v| views.push(v))?;
        ConcreteStack::new_hinted(views, &mut cache.hints)
    }
}
