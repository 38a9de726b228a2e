//! Binding symbols to integers: checked evaluation, partial substitution and solving.

use std::cmp::Ordering;
use std::fmt;

use hashbrown::HashMap;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};

use crate::build::Poly;
use crate::display::{short_text, write_term};
use crate::expr::{check_id, describe_range, spec_of, Cond, Expr};
use crate::node::{node, CmpKind, Id, Node};
use crate::rebuild::Rebuild;
use crate::scope::Scope;
use crate::Error;

/// Values of symbols. Setting a value checks it against the symbol's declared range
/// and divisor (bounds that mention unbound symbols are checked by their numeric range).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bindings {
    vals: HashMap<Expr, i64>,
}

impl Bindings {
    /// No values.
    #[must_use]
    pub fn new() -> Bindings {
        Bindings::default()
    }

    /// Binds `sym` to `value`, checked against its range.
    pub fn set(&mut self, sym: Expr, value: i64) -> Result<(), Error> {
        if sym.symbol_name().is_none() {
            return Err(Error::Kind {
                op: "bind",
                expected: "a symbol",
                found: sym.to_string(),
            });
        }
        let prev = self.vals.insert(sym, value);
        let res = check_symbol(self, sym.0, value);
        if res.is_err() {
            match prev {
                Some(p) => self.vals.insert(sym, p),
                None => self.vals.remove(&sym),
            };
        }
        res
    }

    /// The value of `sym`, if bound.
    #[must_use]
    pub fn get(&self, sym: Expr) -> Option<i64> {
        self.vals.get(&sym).copied()
    }

    /// Removes the value of `sym`.
    pub fn unset(&mut self, sym: Expr) -> Option<i64> {
        self.vals.remove(&sym)
    }

    /// The bound symbols and values, sorted by symbol name.
    #[must_use]
    pub fn to_vec(&self) -> Vec<(Expr, i64)> {
        let mut v: Vec<(Expr, i64)> = self.vals.iter().map(|(k, v)| (*k, *v)).collect();
        v.sort_by(|a, b| crate::order::cmp(a.0 .0, b.0 .0));
        v
    }

    /// Number of bound symbols.
    #[must_use]
    pub fn len(&self) -> usize {
        self.vals.len()
    }

    /// Whether nothing is bound.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
    }

    /// Bindings of `slots` to `values` as given, unchecked: for re-checking compiled
    /// inputs exactly as [`Scope::check`] does.
    pub(crate) fn from_unchecked(slots: &[Expr], values: &[i64]) -> Bindings {
        Bindings {
            vals: slots.iter().copied().zip(values.iter().copied()).collect(),
        }
    }
}

/// `n = 7, m = 3`, sorted by name.
impl fmt::Display for Bindings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.to_vec().iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{k} = {v}")?;
        }
        Ok(())
    }
}

/// Checks `value` against the declaration of `sym`.
/// The value `b` binds to the symbol `sym`, checked against its range.
fn bound_value(b: &Bindings, sym: Id) -> Result<i64, Error> {
    let v = b.get(Expr(sym)).ok_or_else(|| Error::Unbound {
        op: "eval",
        name: Expr(sym).symbol_name().unwrap_or_default().to_string(),
    })?;
    check_symbol(b, sym, v)?;
    Ok(v)
}

fn check_symbol(b: &Bindings, sym: Id, value: i64) -> Result<(), Error> {
    let Some(spec) = spec_of(sym) else {
        return Ok(());
    };
    let Node::Sym(s) = node(sym) else {
        return Ok(());
    };
    let v = BigInt::from(value);
    let bound_value = |bound: Id| -> Option<BigInt> {
        let e = Expr(bound);
        if e.symbols().iter().all(|s| b.get(*s).is_some()) {
            if let Ok(x) = e.eval(b) {
                return Some(BigInt::from(x));
            }
        }
        None
    };
    let lo_ok = s.lo.is_none_or(|l| match bound_value(l) {
        Some(x) => x <= v,
        None => Expr(l).range().lo.is_none_or(|lo| lo <= v),
    });
    let hi_ok = s.hi.is_none_or(|h| match bound_value(h) {
        Some(x) => v <= x,
        None => Expr(h).range().hi.is_none_or(|hi| v <= hi),
    });
    let mult_ok = v.mod_floor(&s.multiple_of).is_zero();
    if lo_ok && hi_ok && mult_ok {
        return Ok(());
    }
    Err(Error::OutOfRange {
        name: spec.name().to_string(),
        value,
        range: describe_range(&spec),
    })
}

impl Expr {
    /// The value under `b`: errors name an unbound symbol, a value outside its range, a
    /// division by zero or an i64 overflow (with the sub-expression).
    ///
    /// The value is exact: when an intermediate of the canonical form leaves i64 (a
    /// rewritten form can hold wider constants than the expression as written), the
    /// expression is evaluated again with unbounded integers, and only a final value
    /// outside i64 is an overflow error (naming the first sub-expression that overflowed).
    pub fn eval(self, b: &Bindings) -> Result<i64, Error> {
        check_id(self.0)?;
        let res = Eval {
            b,
            memo: HashMap::new(),
        }
        .int(self.0);
        match res {
            Err(err @ Error::Overflow { .. }) => match BigEval::new(b).int(self.0) {
                Ok(v) => v.to_i64().ok_or(err),
                Err(Error::Overflow { .. }) => Err(err),
                Err(other) => Err(other),
            },
            res => res,
        }
    }
}

impl Cond {
    /// The truth value under `b` (`and`/`or` stop at the first deciding argument).
    ///
    /// Like [`Expr::eval`], exact: a comparison of in-range values never overflows.
    pub fn eval(self, b: &Bindings) -> Result<bool, Error> {
        check_id(self.0)?;
        let mut small = Eval {
            b,
            memo: HashMap::new(),
        };
        match eval_cond(&mut small, self.0) {
            Err(err @ Error::Overflow { .. }) => match eval_cond(&mut BigEval::new(b), self.0) {
                Ok(v) => Ok(v),
                Err(Error::Overflow { .. }) => Err(err),
                Err(other) => Err(other),
            },
            res => res,
        }
    }
}

/// Widest intermediate the exact fallback computes before giving up (an overflow error).
const MAX_EVAL_BITS: u64 = 1 << 16;

/// Exact evaluation with unbounded integers: the fallback when i64 overflows.
struct BigEval<'a> {
    b: &'a Bindings,
    memo: HashMap<Id, BigInt>,
}

impl<'a> BigEval<'a> {
    fn new(b: &'a Bindings) -> BigEval<'a> {
        BigEval {
            b,
            memo: HashMap::new(),
        }
    }

    fn fit(id: Id, v: BigInt) -> Result<BigInt, Error> {
        if v.bits() > MAX_EVAL_BITS {
            return Err(overflow(id));
        }
        Ok(v)
    }

    fn int(&mut self, id: Id) -> Result<BigInt, Error> {
        if let Some(v) = self.memo.get(&id) {
            return Ok(v.clone());
        }
        let v = match node(id) {
            Node::Const(c) => c.clone(),
            Node::Sym(_) => BigInt::from(bound_value(self.b, id)?),
            Node::Prod(fs) => {
                let mut acc = BigInt::from(1);
                for (a, k) in fs.iter() {
                    let x = self.int(*a)?;
                    for _ in 0..*k {
                        acc = Self::fit(id, acc * &x)?;
                    }
                }
                acc
            }
            Node::Sum(ts, c) => {
                let mut acc = c.clone();
                for (m, k) in ts.iter() {
                    acc += self.int(*m)? * k;
                }
                Self::fit(id, acc)?
            }
            Node::FloorDiv(a, b) | Node::FloorMod(a, b) | Node::CeilDiv(a, b) => {
                let (x, y) = (self.int(*a)?, self.int(*b)?);
                if y.is_zero() {
                    return Err(Error::DivisionByZero {
                        op: "eval",
                        expr: short_text(id),
                    });
                }
                match node(id) {
                    Node::FloorDiv(..) => x.div_floor(&y),
                    Node::FloorMod(..) => x.mod_floor(&y),
                    _ => -((-x).div_floor(&y)),
                }
            }
            Node::Min(args) => extreme(args, Ord::min, |a| self.int(a))?,
            Node::Max(args) => extreme(args, Ord::max, |a| self.int(a))?,
            Node::Invalid(_) => {
                return Err(check_id(id).err().unwrap_or(Error::Limit(String::new())))
            }
            Node::Bool(_) | Node::Cmp(..) | Node::And(_) | Node::Or(_) => {
                BigInt::from(i64::from(eval_cond(self, id)?))
            }
        };
        self.memo.insert(id, v.clone());
        Ok(v)
    }
}

impl IntEval for BigEval<'_> {
    fn sign(&mut self, id: Id) -> Result<Ordering, Error> {
        Ok(self.int(id)?.cmp(&BigInt::zero()))
    }
}

struct Eval<'a> {
    b: &'a Bindings,
    memo: HashMap<Id, i64>,
}

fn overflow(id: Id) -> Error {
    Error::Overflow {
        op: "eval",
        expr: short_text(id),
    }
}

pub(crate) fn floor_div_i64(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        return q.checked_sub(1);
    }
    Some(q)
}

pub(crate) fn floor_mod_i64(a: i64, b: i64) -> Option<i64> {
    if b == -1 {
        return Some(0);
    }
    let r = a.checked_rem(b)?;
    if r != 0 && ((r < 0) != (b < 0)) {
        return r.checked_add(b);
    }
    Some(r)
}

pub(crate) fn ceil_div_i64(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) == (b < 0)) {
        return q.checked_add(1);
    }
    Some(q)
}

impl Eval<'_> {
    fn int(&mut self, id: Id) -> Result<i64, Error> {
        if let Some(&v) = self.memo.get(&id) {
            return Ok(v);
        }
        let v = match node(id) {
            Node::Const(c) => c.to_i64().ok_or_else(|| overflow(id))?,
            Node::Sym(_) => bound_value(self.b, id)?,
            Node::Prod(fs) => {
                let mut acc: i64 = 1;
                for (a, k) in fs.iter() {
                    let x = self.int(*a)?;
                    for _ in 0..*k {
                        acc = acc.checked_mul(x).ok_or_else(|| overflow(id))?;
                    }
                }
                acc
            }
            Node::Sum(ts, c) => {
                let mut acc = c.to_i64().ok_or_else(|| overflow(id))?;
                for (m, k) in ts.iter() {
                    let x = self.int(*m)?;
                    let term = k.to_i64().and_then(|k| k.checked_mul(x)).ok_or_else(|| {
                        let mut s = String::new();
                        if k.is_negative() {
                            // Printed like a leading term of a sum: `-y`, `-3*y`.
                            crate::display::write_poly(&mut s, &[(*m, k.clone())], &BigInt::zero());
                        } else {
                            write_term(&mut s, *m, k);
                        }
                        Error::Overflow {
                            op: "eval",
                            expr: s,
                        }
                    })?;
                    acc = acc.checked_add(term).ok_or_else(|| overflow(id))?;
                }
                acc
            }
            Node::FloorDiv(a, b) | Node::FloorMod(a, b) | Node::CeilDiv(a, b) => {
                let (x, y) = (self.int(*a)?, self.int(*b)?);
                if y == 0 {
                    return Err(Error::DivisionByZero {
                        op: "eval",
                        expr: short_text(id),
                    });
                }
                let r = match node(id) {
                    Node::FloorDiv(..) => floor_div_i64(x, y),
                    Node::FloorMod(..) => floor_mod_i64(x, y),
                    _ => ceil_div_i64(x, y),
                };
                r.ok_or_else(|| overflow(id))?
            }
            Node::Min(args) => extreme(args, Ord::min, |a| self.int(a))?,
            Node::Max(args) => extreme(args, Ord::max, |a| self.int(a))?,
            Node::Invalid(_) => {
                return Err(check_id(id).err().unwrap_or(Error::Limit(String::new())))
            }
            Node::Bool(_) | Node::Cmp(..) | Node::And(_) | Node::Or(_) => {
                i64::from(eval_cond(self, id)?)
            }
        };
        self.memo.insert(id, v);
        Ok(v)
    }
}

impl IntEval for Eval<'_> {
    fn sign(&mut self, id: Id) -> Result<Ordering, Error> {
        Ok(self.int(id)?.cmp(&0))
    }
}

/// The smallest (`pick` = `Ord::min`) or largest value of `args`, each evaluated by `value`;
/// min and max nodes always have arguments, so the default is never the answer.
fn extreme<T: Ord + Default>(
    args: &[Id],
    pick: fn(T, T) -> T,
    mut value: impl FnMut(Id) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut acc: Option<T> = None;
    for &a in args {
        let x = value(a)?;
        acc = Some(match acc {
            None => x,
            Some(y) => pick(y, x),
        });
    }
    Ok(acc.unwrap_or_default())
}

/// An evaluator of integer nodes; conditions are evaluated over it by [`eval_cond`].
trait IntEval {
    /// How the value of the integer node `id` compares with zero.
    fn sign(&mut self, id: Id) -> Result<Ordering, Error>;
}

/// The truth value of the condition node `id`; `and`/`or` stop at the first deciding argument.
fn eval_cond(ev: &mut impl IntEval, id: Id) -> Result<bool, Error> {
    match node(id) {
        Node::Bool(b) => Ok(*b),
        Node::Cmp(kind, d) => {
            let sign = ev.sign(*d)?;
            Ok(match kind {
                CmpKind::Le => sign.is_le(),
                CmpKind::Eq => sign.is_eq(),
                CmpKind::Ne => sign.is_ne(),
            })
        }
        Node::And(args) => {
            for a in args.iter() {
                if !eval_cond(ev, *a)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Node::Or(args) => {
            for a in args.iter() {
                if eval_cond(ev, *a)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        _ => Err(Error::Kind {
            op: "eval",
            expected: "a condition",
            found: short_text(id),
        }),
    }
}

/// [`Scope::check`] with the given assumptions: every bound value against its
/// declaration (in symbol order), then every assumption whose symbols are all bound.
pub(crate) fn check_with(b: &Bindings, assumptions: &[Cond]) -> Result<(), Error> {
    if b.is_empty() {
        // Nothing bound: every check below would be skipped.
        return Ok(());
    }
    for (sym, v) in b.to_vec() {
        check_symbol(b, sym.0, v)?;
    }
    for a in assumptions {
        let syms = a.symbols();
        if !syms.iter().all(|s| b.get(*s).is_some()) {
            continue;
        }
        if !a.eval(b)? {
            return Err(violated(*a, b));
        }
    }
    Ok(())
}

/// The error for an assumption `a` that is false under `b`, with its symbols' values.
pub(crate) fn violated(a: Cond, b: &Bindings) -> Error {
    let mut vals = Bindings::new();
    for s in a.symbols() {
        if let Some(v) = b.get(s) {
            vals.vals.insert(s, v);
        }
    }
    Error::Violated {
        assumption: a.to_string(),
        bindings: vals.to_string(),
    }
}

impl Scope {
    /// Binds the symbol declared as `name`, checked against its range and against
    /// every assumption that mentions it and whose symbols are then all bound
    /// (under `assume p + s <= 64`, binding `s = 40` after `p = 30` fails, naming
    /// the assumption and both values). On an error `b` is left as it was.
    ///
    /// Assumptions over symbols not yet bound are checked by the call that binds
    /// the last of them; [`Bindings::set`] checks the range only, and
    /// [`Scope::check`] checks everything bound so far. To change several bound
    /// values whose intermediate states may break an assumption (`m <= n` going
    /// from `n = 10, m = 8` to `n = 5, m = 4`), set them with [`Bindings::set`]
    /// and call [`Scope::check`] once.
    pub fn bind(&self, b: &mut Bindings, name: &str, value: i64) -> Result<(), Error> {
        let sym = self.symbol(name).ok_or_else(|| Error::UnknownSymbol {
            op: "bind",
            name: name.to_string(),
        })?;
        let prev = b.get(sym);
        b.set(sym, value)?;
        for a in self.assumptions() {
            let syms = a.symbols();
            if !syms.contains(&sym) || !syms.iter().all(|s| b.get(*s).is_some()) {
                continue;
            }
            let failure = match a.eval(b) {
                Ok(true) => continue,
                Ok(false) => violated(*a, b),
                Err(e) => e,
            };
            match prev {
                Some(p) => b.vals.insert(sym, p),
                None => b.vals.remove(&sym),
            };
            return Err(failure);
        }
        Ok(())
    }

    /// Checks every bound value against its range and every assumption whose symbols
    /// are all bound.
    pub fn check(&self, b: &Bindings) -> Result<(), Error> {
        check_with(b, self.assumptions())
    }

    /// The value of `e` under `b`, after checking `b` against the scope.
    pub fn eval(&self, e: Expr, b: &Bindings) -> Result<i64, Error> {
        self.check(b)?;
        e.eval(b)
    }

    /// The truth value of `c` under `b`, after checking `b` against the scope.
    pub fn eval_cond(&self, c: Cond, b: &Bindings) -> Result<bool, Error> {
        self.check(b)?;
        c.eval(b)
    }

    /// Partial binding: the bound symbols of `e` replaced by their values, the rest
    /// simplified with the scope's knowledge.
    #[must_use]
    pub fn substitute(&self, e: Expr, b: &Bindings) -> Expr {
        Expr(self.subst_id(e.0, b))
    }

    /// Partial binding of a condition.
    #[must_use]
    pub fn substitute_cond(&self, c: Cond, b: &Bindings) -> Cond {
        Cond(self.subst_id(c.0, b))
    }

    fn subst_id(&self, id: Id, b: &Bindings) -> Id {
        let fx = self.facts();
        let sub = |s: Id| {
            b.get(Expr(s))
                .map(|v| crate::build::constant(BigInt::from(v)))
        };
        Rebuild::new(&fx, &sub).run(id)
    }

    /// Parses and solves an equation; errors quote the text as written (parsing may
    /// already fold an equation without integral solution, like `2*n == 7`, to `false`).
    pub fn solve_str(&self, text: &str, b: &Bindings) -> Result<(Expr, i64), Error> {
        let eq = self.parse_cond(text)?;
        self.solve(eq, b).map_err(|e| match e {
            Error::Solve { message, .. } => Error::Solve {
                equation: text.trim().to_string(),
                message,
            },
            e => e,
        })
    }

    /// Solves a linear equation in one unbound symbol, e.g. `2*n + 1 == 9` gives
    /// `(n, 4)`; symbols bound in `b` are substituted first. The solution is checked
    /// against the symbol's range.
    pub fn solve(&self, eq: Cond, b: &Bindings) -> Result<(Expr, i64), Error> {
        check_id(eq.0)?;
        let err = |message: String| Error::Solve {
            equation: eq.to_string(),
            message,
        };
        let s = self.substitute_cond(eq, b);
        let d = match node(s.0) {
            Node::Cmp(CmpKind::Eq, d) => Poly::of(*d),
            Node::Bool(true) => return Err(err("it holds for every value".into())),
            Node::Bool(false) => return Err(err("it has no integral solution in range".into())),
            _ => return Err(err("expected an equation `a == b`".into())),
        };
        // Only symbols in the equation itself: a bound of the unknown (`i 0..n`) may
        // mention symbols that are not unknowns.
        let unknowns: Vec<Expr> = crate::visit::direct_symbols(s.0)
            .into_iter()
            .map(Expr)
            .collect();
        let [x] = unknowns.as_slice() else {
            let names: Vec<String> = unknowns.iter().map(|u| u.to_string()).collect();
            return Err(err(format!(
                "expected one unknown, found {}",
                names.join(", ")
            )));
        };
        let [(m, k)] = d.terms.as_slice() else {
            return Err(err(format!("not linear in `{x}`")));
        };
        if *m != x.0 {
            return Err(err(format!("not linear in `{x}`")));
        }
        let rhs = -&d.c;
        if !rhs.mod_floor(k).is_zero() {
            return Err(err(format!("no integral solution: {k}*{x} == {rhs}")));
        }
        let v = (rhs / k)
            .to_i64()
            .ok_or_else(|| err("the solution overflows i64".into()))?;
        let mut probe = b.clone();
        probe
            .set(*x, v)
            .map_err(|e| err(format!("the solution {x} = {v} is invalid: {e}")))?;
        Ok((*x, v))
    }
}
