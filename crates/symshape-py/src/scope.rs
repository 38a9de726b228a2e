//! `Scope`: declarations and assumptions, shared by threads behind a lock that is taken
//! only while the GIL is released.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::pyclass::PyClass;
use pyo3::types::{PyDict, PyString};
use pyo3::IntoPyObjectExt;
use symshape::{Bindings, Cond, Expr, Scope};

use crate::error::err;
use crate::expr::{bigint_to_py, int_expr, PyCond, PyExpr};

/// Declared symbols plus assumptions; parses, simplifies, proves and evaluates.
///
/// `declare("n 1..=4096 multiple of 8")` uses the runner's syntax (`i 0..n` is a loop
/// index below `n`); `assume("n % 8 == 0")` adds a fact. Proofs answer `True`, `False`
/// or `None` (unknown), never wrongly. A scope may be shared by threads: queries run with
/// the GIL released, and declarations and assumptions are serialised by a lock.
#[pyclass(name = "Scope", module = "symshape", frozen)]
pub struct PyScope {
    inner: RwLock<Scope>,
}

impl PyScope {
    /// The scope for reading (a poisoned lock still holds a consistent scope: every
    /// writer replaces it only on success).
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Scope> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Scope> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// `f` over the scope, with the GIL released.
    pub(crate) fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&Scope) -> R + Send) -> R {
        py.detach(|| f(&self.read()))
    }

    /// The value of a handle `H` (a `PyExpr`, a `PyCond`), or a string parsed in this scope
    /// by `parse`; `None` for anything else.
    fn handle_or_text<H, T: Send>(
        &self,
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        value: fn(&H) -> T,
        parse: fn(&Scope, &str) -> Result<T, symshape::Error>,
    ) -> PyResult<Option<T>>
    where
        H: PyClass<Frozen = True> + Sync,
    {
        if let Ok(h) = obj.cast::<H>() {
            return Ok(Some(value(h.get())));
        }
        let Ok(s) = obj.cast::<PyString>() else {
            return Ok(None);
        };
        let text: String = s.extract()?;
        self.with(py, |cx| parse(cx, &text)).map(Some).map_err(err)
    }

    /// An `Expr`, an `int` or a string parsed in this scope.
    pub(crate) fn expr_of(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
        if let Some(e) = self.handle_or_text(py, obj, |e: &PyExpr| e.0, Scope::parse_expr)? {
            return Ok(e);
        }
        int_expr(obj)
    }

    /// A `Cond` or a string parsed in this scope.
    pub(crate) fn cond_of(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Cond> {
        if let Some(c) = self.handle_or_text(py, obj, |c: &PyCond| c.0, Scope::parse_cond)? {
            return Ok(c);
        }
        if let Ok(b) = obj.extract::<bool>() {
            return Ok(Cond::from(b));
        }
        Err(PyTypeError::new_err(format!(
            "expected a symshape.Cond or a condition as text, found {}",
            obj.get_type().name()?
        )))
    }

    /// Values of symbols from a dict whose keys are names or symbol `Expr`s, checked
    /// against the declared ranges (`Scope.bind`'s rules).
    pub(crate) fn bindings(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyDict>,
    ) -> PyResult<Bindings> {
        let mut pairs: Vec<(String, i64)> = Vec::with_capacity(values.len());
        for (k, v) in values.iter() {
            let name = if let Ok(e) = k.cast::<PyExpr>() {
                let e = e.get().0;
                e.symbol_name()
                    .ok_or_else(|| err(format!("bind: the key `{e}` is not a symbol")))?
                    .to_owned()
            } else {
                k.extract::<String>().map_err(|_| {
                    PyTypeError::new_err("bind: keys are symbol names or symbol Exprs")
                })?
            };
            let value: i64 = v.extract().map_err(|_| {
                err(format!(
                    "bind: the value of `{name}` is not an integer in the i64 range"
                ))
            })?;
            pairs.push((name, value));
        }
        self.with(py, |cx| {
            let mut b = Bindings::new();
            for (name, value) in &pairs {
                cx.bind(&mut b, name, *value)?;
            }
            Ok::<_, symshape::Error>(b)
        })
        .map_err(err)
    }
}

/// The ends of a range as Python ints, `None` where unbounded.
type Ends<'py> = (Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>);

#[pymethods]
impl PyScope {
    #[new]
    fn new() -> PyScope {
        PyScope {
            inner: RwLock::new(Scope::new()),
        }
    }

    /// Declares a symbol in the runner's syntax and returns it: `"n 1..=4096"`,
    /// `"n 1..=4096 multiple of 8"`, `"i 0..n"` (a loop index below `n`), `"x"`.
    fn declare(&self, py: Python<'_>, spec: &str) -> PyResult<PyExpr> {
        py.detach(|| self.write().declare_str(spec))
            .map(PyExpr)
            .map_err(err)
    }

    /// Adds an assumption (a `Cond` or text such as `"n % 8 == 0"`, `"n <= m"`).
    fn assume(&self, py: Python<'_>, cond: &Bound<'_, PyAny>) -> PyResult<()> {
        let c = self.cond_of(py, cond)?;
        py.detach(|| self.write().assume(c)).map_err(err)
    }

    /// Parses an integer expression over the declared symbols.
    fn parse(&self, py: Python<'_>, text: &str) -> PyResult<PyExpr> {
        self.with(py, |cx| cx.parse_expr(text))
            .map(PyExpr)
            .map_err(err)
    }

    /// Parses a condition over the declared symbols (`"i < n and n % 8 == 0"`).
    fn parse_cond(&self, py: Python<'_>, text: &str) -> PyResult<PyCond> {
        self.with(py, |cx| cx.parse_cond(text))
            .map(PyCond)
            .map_err(err)
    }

    /// The expression (or condition) rebuilt with the scope's assumptions.
    fn simplify(&self, py: Python<'_>, e: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(c) = e.cast::<PyCond>() {
            let c = c.get().0;
            return PyCond(self.with(py, |cx| cx.simplify_cond(c))).into_py_any(py);
        }
        let e = self.expr_of(py, e)?;
        PyExpr(self.with(py, |cx| cx.simplify(e))).into_py_any(py)
    }

    /// `True` when the condition holds for every admissible value, `False` when it holds
    /// for none, `None` when unknown. Never wrong.
    fn prove(&self, py: Python<'_>, cond: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        let c = self.cond_of(py, cond)?;
        Ok(self.with(py, |cx| cx.prove_cond(c).as_bool()))
    }

    /// `(lo, hi)`, a range containing every value of the expression; `None` for an
    /// unbounded end.
    fn range<'py>(&self, py: Python<'py>, e: &Bound<'py, PyAny>) -> PyResult<Ends<'py>> {
        let e = self.expr_of(py, e)?;
        let r = self.with(py, |cx| cx.range(e));
        let lo = r.lo.as_ref().map(|v| bigint_to_py(py, v)).transpose()?;
        let hi = r.hi.as_ref().map(|v| bigint_to_py(py, v)).transpose()?;
        Ok((lo, hi))
    }

    /// The value of an expression (or the truth of a condition) with the symbols bound by
    /// `bindings` (`{"n": 16}` or `{n: 16}`), each checked against its range and the
    /// assumptions checked too. Exact: an error when the result does not fit in an i64.
    fn eval(
        &self,
        py: Python<'_>,
        e: &Bound<'_, PyAny>,
        bindings: &Bound<'_, PyDict>,
    ) -> PyResult<Py<PyAny>> {
        let b = self.bindings(py, bindings)?;
        if let Ok(c) = e.cast::<PyCond>() {
            let c = c.get().0;
            let v = self
                .with(py, |cx| cx.check(&b).and_then(|()| c.eval(&b)))
                .map_err(err)?;
            return v.into_py_any(py);
        }
        let e = self.expr_of(py, e)?;
        let v = self.with(py, |cx| cx.eval(e, &b)).map_err(err)?;
        v.into_py_any(py)
    }

    /// The declared symbol named `name`, or `None`.
    fn symbol(&self, py: Python<'_>, name: &str) -> Option<PyExpr> {
        self.with(py, |cx| cx.symbol(name)).map(PyExpr)
    }

    /// The declared symbols, in declaration order.
    fn symbols(&self, py: Python<'_>) -> Vec<PyExpr> {
        self.with(py, |cx| cx.symbols().to_vec())
            .into_iter()
            .map(PyExpr)
            .collect()
    }

    /// The assumptions, in the order they were added.
    fn assumptions(&self, py: Python<'_>) -> Vec<PyCond> {
        self.with(py, |cx| cx.assumptions().to_vec())
            .into_iter()
            .map(PyCond)
            .collect()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let (syms, n_assumed) = self.with(py, |cx| {
            let syms: Vec<String> = cx
                .symbols()
                .iter()
                .map(|s| {
                    s.symbol_spec().map_or_else(
                        || s.to_string(),
                        |d| format!("{} {}", d.name(), d.range_text()),
                    )
                })
                .collect();
            (syms, cx.assumptions().len())
        });
        format!("Scope([{}], {n_assumed} assumptions)", syms.join(", "))
    }
}
