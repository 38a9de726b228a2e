//! `Expr` and `Cond`: the library's interned handles as immutable, hashable, picklable
//! Python objects, with Python's operators and floor semantics.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use pyo3::exceptions::{PyTypeError, PyZeroDivisionError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyTuple};
use pyo3::Borrowed;
use symshape::{BigInt, Cond, Expr, Scope, SymbolSpec};

use crate::error::err;

/// An integer expression over declared symbols, in canonical form.
///
/// Immutable and hashable: `==` is canonical identity, so algebraically equal polynomials
/// (`(n + 1) * (n - 1)` and `n*n - 1`) are equal and hash alike, and an `Expr` works as a
/// dict or cache key. Semantic questions go through `Scope.prove`. `str(e)` parses back
/// to `e` with `Scope.parse` in a scope that declares its symbols. Arithmetic with ints
/// and other `Expr`s: `+ - * // % **` and unary `-`, with Python's floor semantics
/// (`-7 // 2 == -4`, `-7 % 2 == 1`).
#[pyclass(name = "Expr", module = "symshape", frozen)]
#[derive(Clone, Copy)]
pub struct PyExpr(pub(crate) Expr);

/// A boolean condition over expressions (a comparison, `&`, `|`, `~`).
///
/// Built with `Expr.le/lt/eq/ne/ge/gt` or `Scope.parse_cond`; decided with `Scope.prove`.
/// Immutable and hashable with canonical identity, like `Expr`. It has no truth value:
/// `bool(c)` raises `TypeError` (ask `Scope.prove(c)`).
#[pyclass(name = "Cond", module = "symshape", frozen)]
#[derive(Clone, Copy)]
pub struct PyCond(pub(crate) Cond);

/// An argument that converts to an `Expr`: a Python `int` or an `Expr`. A binary operator
/// whose other operand is anything else returns `NotImplemented`.
pub(crate) struct ExprArg(pub(crate) Expr);

impl<'a, 'py> FromPyObject<'a, 'py> for ExprArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(e) = obj.cast::<PyExpr>() {
            return Ok(ExprArg(e.get().0));
        }
        int_expr(&obj).map(ExprArg)
    }
}

/// A Python `int` (of any size) as a constant.
pub(crate) fn int_expr(obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "expected an int or a symshape.Expr, found {}",
            obj.get_type().name()?
        )));
    }
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(Expr::from(v));
    }
    let text: String = obj.str()?.extract()?;
    let v: BigInt = text.parse().map_err(err)?;
    Ok(Expr::constant(v))
}

/// A `BigInt` as a Python `int`.
pub(crate) fn bigint_to_py<'py>(py: Python<'py>, v: &BigInt) -> PyResult<Bound<'py, PyAny>> {
    match i64::try_from(v) {
        Ok(small) => Ok(small.into_pyobject(py)?.into_any()),
        Err(_) => py
            .get_type::<PyInt>()
            .call1((v.to_string(),))
            .map(Bound::into_any),
    }
}

fn structural_hash<T: Hash>(v: &T) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

fn nonzero(d: Expr) -> PyResult<Expr> {
    if d.as_i64() == Some(0) {
        return Err(PyZeroDivisionError::new_err(
            "integer division or modulo by zero",
        ));
    }
    Ok(d)
}

/// The `#[pymethods]` of a handle class `$ty` (`Expr`, `Cond`): the methods given, then the
/// protocol both share. `==` is canonical identity and the hash structural; `str()` is the
/// text that parses back and `repr()` is `$class("text")`; a pickle calls the module's
/// function `$from_state` with the text and the symbols' declarations.
///
/// `Expr`'s methods start with two tables. `arithmetic`: `__op__, __rop__ => f;` defines
/// `self op other` as `f(self, other)` and its reflection as `f(other, self)`, where other
/// is an int or an `Expr`. `comparisons`: `fn name => f;` gives `f(self, other)` as a `Cond`.
macro_rules! handle_pymethods {
    (
        $ty:ident, $class:literal, $from_state:literal;
        arithmetic { $($op:ident, $rop:ident => $f:expr;)* }
        comparisons { $($(#[$cmp_attr:meta])* fn $cmp:ident => $cmp_f:path;)* }
        $($methods:tt)*
    ) => {
        handle_pymethods! {
            $ty, $class, $from_state;

            $(
                fn $op(&self, o: ExprArg) -> PyResult<PyExpr> {
                    let f: fn(Expr, Expr) -> PyResult<Expr> = $f;
                    f(self.0, o.0).map(PyExpr)
                }
                fn $rop(&self, o: ExprArg) -> PyResult<PyExpr> {
                    let f: fn(Expr, Expr) -> PyResult<Expr> = $f;
                    f(o.0, self.0).map(PyExpr)
                }
            )*
            $(
                $(#[$cmp_attr])*
                fn $cmp(&self, other: ExprArg) -> PyCond {
                    PyCond($cmp_f(self.0, other.0))
                }
            )*
            $($methods)*
        }
    };
    ($ty:ident, $class:literal, $from_state:literal; $($methods:tt)*) => {
        #[pymethods]
        impl $ty {
            $($methods)*

            fn __eq__(&self, o: &Bound<'_, PyAny>) -> bool {
                o.cast::<$ty>().is_ok_and(|o| o.get().0 == self.0)
            }
            fn __ne__(&self, o: &Bound<'_, PyAny>) -> bool {
                !self.__eq__(o)
            }
            fn __hash__(&self) -> u64 {
                structural_hash(&self.0)
            }
            fn __str__(&self) -> String {
                self.0.to_string()
            }
            fn __repr__(&self) -> String {
                format!(concat!($class, "({:?})"), self.0.to_string())
            }
            fn __reduce__<'py>(
                &self,
                py: Python<'py>,
            ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
                reduce_with(py, $from_state, self.0.to_string(), self.0.symbols())
            }
        }
    };
}

handle_pymethods! {
    PyExpr, "Expr", "_expr_from_state";

    arithmetic {
        __add__, __radd__ => |a, b| Ok(a + b);
        __sub__, __rsub__ => |a, b| Ok(a - b);
        __mul__, __rmul__ => |a, b| Ok(a * b);
        __floordiv__, __rfloordiv__ => |a, b| Ok(a.floor_div(nonzero(b)?));
        __mod__, __rmod__ => |a, b| Ok(a.floor_mod(nonzero(b)?));
    }
    comparisons {
        /// `self <= other`, as a `Cond`.
        #[pyo3(name = "le")]
        fn cmp_le => Expr::le;
        /// `self < other`, as a `Cond`.
        #[pyo3(name = "lt")]
        fn cmp_lt => Expr::lt;
        /// `self == other`, as a `Cond` (`==` itself is canonical identity).
        #[pyo3(name = "eq")]
        fn cmp_eq => Expr::equals;
        /// `self != other`, as a `Cond`.
        #[pyo3(name = "ne")]
        fn cmp_ne => Expr::not_equals;
        /// `self >= other`, as a `Cond`.
        #[pyo3(name = "ge")]
        fn cmp_ge => Expr::ge;
        /// `self > other`, as a `Cond`.
        #[pyo3(name = "gt")]
        fn cmp_gt => Expr::gt;
    }

    /// `e ** k` for an int `0 <= k <= 64`: the product of `k` copies.
    fn __pow__(&self, k: &Bound<'_, PyAny>, modulo: Option<&Bound<'_, PyAny>>) -> PyResult<PyExpr> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(PyTypeError::new_err(
                "pow() with a modulus is not supported",
            ));
        }
        let k: i64 = k.extract()?;
        if !(0..=64).contains(&k) {
            return Err(err(format!(
                "pow: the exponent {k} is not an int in 0..=64"
            )));
        }
        Ok(PyExpr((0..k).fold(Expr::from(1), |acc, _| acc * self.0)))
    }
    fn __neg__(&self) -> PyExpr {
        PyExpr(-self.0)
    }
    fn __pos__(&self) -> PyExpr {
        *self
    }
    fn __abs__(&self) -> PyExpr {
        PyExpr(self.0.max(-self.0))
    }
    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.0.as_bigint() {
            Some(v) => bigint_to_py(py, &v),
            None => Err(PyTypeError::new_err(format!(
                "int(): `{}` is not a constant",
                self.0
            ))),
        }
    }

    /// Whether the expression is an integer constant.
    fn is_constant(&self) -> bool {
        self.0.is_const()
    }
    /// The symbols the expression mentions (those in symbol bounds included), by name.
    fn symbols(&self) -> Vec<PyExpr> {
        self.0.symbols().into_iter().map(PyExpr).collect()
    }
    /// The symbol's name, or `None` when the expression is not a symbol.
    fn symbol_name(&self) -> Option<&'static str> {
        self.0.symbol_name()
    }
}

handle_pymethods! {
    PyCond, "Cond", "_cond_from_state";

    fn __and__(&self, o: PyRef<'_, PyCond>) -> PyCond {
        PyCond(self.0 & o.0)
    }
    fn __or__(&self, o: PyRef<'_, PyCond>) -> PyCond {
        PyCond(self.0 | o.0)
    }
    fn __invert__(&self) -> PyCond {
        PyCond(!self.0)
    }
    fn __bool__(&self) -> PyResult<bool> {
        Err(PyTypeError::new_err(format!(
            "a Cond has no truth value (`{}`); ask Scope.prove",
            self.0
        )))
    }
    /// `True` or `False` for a constant condition, else `None`.
    fn as_bool(&self) -> Option<bool> {
        self.0.as_bool()
    }
    /// The symbols the condition mentions, by name.
    fn symbols(&self) -> Vec<PyExpr> {
        self.0.symbols().into_iter().map(PyExpr).collect()
    }
}

/// What `__reduce__` returns for a value written as `text` over the symbols `syms`: the
/// module's function `from_state`, and its arguments (the text and the symbols'
/// declarations).
fn reduce_with<'py>(
    py: Python<'py>,
    from_state: &str,
    text: String,
    syms: Vec<Expr>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
    let f = py.import("symshape._symshape")?.getattr(from_state)?;
    let args = (text, specs_state(syms)).into_pyobject(py)?;
    Ok((f, args))
}

/// One symbol's declaration as pickled: name, bounds as text (`None`: unbounded), divisor.
type SpecState = (String, Option<String>, Option<String>, u64);

/// The declarations of `syms`, each after the symbols its bounds mention.
fn specs_state(mut syms: Vec<Expr>) -> Vec<SpecState> {
    let mut done: Vec<Expr> = Vec::new();
    let mut out = Vec::new();
    while !syms.is_empty() {
        let before = syms.len();
        syms.retain(|&s| {
            let Some(spec) = s.symbol_spec() else {
                return false;
            };
            let ready = [spec.lower(), spec.upper()]
                .into_iter()
                .flatten()
                .flat_map(Expr::symbols)
                .all(|d| done.contains(&d));
            if ready {
                done.push(s);
                out.push((
                    spec.name().to_owned(),
                    spec.lower().map(|e| e.to_string()),
                    spec.upper().map(|e| e.to_string()),
                    spec.divisor(),
                ));
            }
            !ready
        });
        if syms.len() == before {
            break;
        }
    }
    out
}

/// A scope declaring the pickled symbols, in order.
fn scope_of(specs: &[SpecState]) -> Result<Scope, symshape::Error> {
    let mut cx = Scope::new();
    for (name, lo, hi, d) in specs {
        let bound = |t: &Option<String>| t.as_deref().map(|t| cx.parse_expr(t)).transpose();
        let spec = SymbolSpec::new(name)
            .lo(bound(lo)?)
            .hi(bound(hi)?)
            .multiple_of(*d);
        cx.declare(&spec)?;
    }
    Ok(cx)
}

/// Unpickles an `Expr`.
#[pyfunction]
pub(crate) fn _expr_from_state(text: &str, specs: Vec<SpecState>) -> PyResult<PyExpr> {
    let cx = scope_of(&specs).map_err(err)?;
    cx.parse_expr(text).map(PyExpr).map_err(err)
}

/// Unpickles a `Cond`.
#[pyfunction]
pub(crate) fn _cond_from_state(text: &str, specs: Vec<SpecState>) -> PyResult<PyCond> {
    let cx = scope_of(&specs).map_err(err)?;
    cx.parse_cond(text).map(PyCond).map_err(err)
}

/// `min(a, b)`.
#[pyfunction]
pub(crate) fn min(a: ExprArg, b: ExprArg) -> PyExpr {
    PyExpr(a.0.min(b.0))
}

/// `max(a, b)`.
#[pyfunction]
pub(crate) fn max(a: ExprArg, b: ExprArg) -> PyExpr {
    PyExpr(a.0.max(b.0))
}

/// `ceil(a / b)`, exact (`cdiv(7, 2) == 4`, `cdiv(-7, 2) == -3`).
#[pyfunction]
pub(crate) fn cdiv(a: ExprArg, b: ExprArg) -> PyResult<PyExpr> {
    Ok(PyExpr(a.0.ceil_div(nonzero(b.0)?)))
}
