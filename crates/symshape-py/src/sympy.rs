//! The sympy bridge: `from_sympy` reads sympy's tree (Inductor's functions recognised by
//! class name, so PyTorch need not be installed) and `to_sympy` builds one.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use symshape::{BigInt, Expr, ExprKind};

use crate::error::err;
use crate::expr::{bigint_to_py, ExprArg, PyExpr};
use crate::scope::PyScope;

/// Inductor's integer functions (`torch/utils/_sympy/functions.py`) and sympy's own, by
/// class name, with their argument counts.
fn function(name: &str, args: &[Expr]) -> Option<Expr> {
    Some(match (name, args) {
        ("FloorDiv" | "CleanDiv", &[a, b]) => a.floor_div(b),
        ("CeilDiv", &[a, b]) => a.ceil_div(b),
        ("Mod" | "PythonMod", &[a, b]) => a.floor_mod(b),
        ("ModularIndexing", &[x, div, m]) => x.floor_div(div).floor_mod(m),
        ("Min", _) => Expr::min_of(args)?,
        ("Max", _) => Expr::max_of(args)?,
        _ => return None,
    })
}

/// Converts a sympy expression to an `Expr`.
///
/// Covers `Integer`, `Symbol` (declared in `scope`, looked up by name), `Add`, `Mul`
/// (integer coefficients), `Pow` with a non-negative integer exponent, `floor` and
/// `ceiling` of a quotient of integer expressions, `Mod`, `Min`, `Max`, and Inductor's
/// `FloorDiv`, `ModularIndexing`, `CleanDiv`, `CeilDiv` and `PythonMod`. Anything else
/// (a rational, an unknown function, an undeclared symbol) raises `symshape.Error`
/// naming it.
#[pyfunction]
pub(crate) fn from_sympy(expr: &Bound<'_, PyAny>, scope: &PyScope) -> PyResult<PyExpr> {
    convert(expr, scope, 0).map(PyExpr)
}

/// Nesting beyond this is an error, not a stack overflow.
const MAX_NESTING: u32 = 200;

fn flag(obj: &Bound<'_, PyAny>, name: &str) -> bool {
    obj.getattr(name)
        .and_then(|v| v.is_truthy())
        .unwrap_or(false)
}

fn integer(obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(Expr::from(v));
    }
    let text: String = obj.str()?.extract()?;
    text.parse::<BigInt>().map(Expr::constant).map_err(err)
}

fn convert(obj: &Bound<'_, PyAny>, scope: &PyScope, depth: u32) -> PyResult<Expr> {
    if depth > MAX_NESTING {
        return Err(err(format!(
            "from_sympy: the expression nests deeper than {MAX_NESTING} levels"
        )));
    }
    if flag(obj, "is_Integer") {
        return integer(obj);
    }
    if flag(obj, "is_Symbol") {
        let name: String = obj.getattr("name")?.extract()?;
        return scope.read().symbol(&name).ok_or_else(|| {
            err(format!(
                "from_sympy: the symbol `{name}` is not declared in the scope; declare it first"
            ))
        });
    }
    if flag(obj, "is_Rational") || flag(obj, "is_Float") {
        return Err(err(format!(
            "from_sympy: `{}` is not an integer",
            obj.str()?
        )));
    }
    let cls: String = obj.get_type().name()?.extract()?;
    let args: Bound<'_, PyTuple> = obj.getattr("args")?.cast_into()?;
    let sub = |a: Bound<'_, PyAny>| convert(&a, scope, depth + 1);
    match cls.as_str() {
        "Add" => return args.iter().map(sub).sum(),
        "Mul" => return args.iter().map(sub).product(),
        "Pow" => {
            let (base, exp) = (args.get_item(0)?, args.get_item(1)?);
            let k = exp.extract::<i64>().ok().filter(|k| (0..=64).contains(k));
            let Some(k) = k else {
                return Err(err(format!(
                    "from_sympy: `{}` is not a power with an integer exponent in 0..=64",
                    obj.str()?
                )));
            };
            let b = sub(base)?;
            return Ok((0..k).fold(Expr::from(1), |acc, _| acc * b));
        }
        "floor" | "ceiling" => {
            let inner = args.get_item(0)?;
            let nd: Bound<'_, PyTuple> = inner.call_method0("as_numer_denom")?.cast_into()?;
            let n = sub(nd.get_item(0)?)?;
            let d = sub(nd.get_item(1)?)?;
            return Ok(if cls == "floor" {
                n.floor_div(d)
            } else {
                n.ceil_div(d)
            });
        }
        _ => {}
    }
    let parts = args.iter().map(sub).collect::<PyResult<Vec<Expr>>>()?;
    function(&cls, &parts).ok_or_else(|| {
        err(format!(
            "from_sympy: unsupported function `{cls}` with {} arguments in `{}`",
            parts.len(),
            obj.str().map(|s| s.to_string()).unwrap_or_default()
        ))
    })
}

/// Converts an `Expr` to sympy: symbols become `Symbol(name, integer=True)` (with
/// `positive=True` when declared at least 1, `nonnegative=True` when at least 0), floor
/// division `floor(a/b)`, modulo `Mod`, ceiling division `ceiling(a/b)`, `Min`, `Max`.
#[pyfunction]
pub(crate) fn to_sympy<'py>(py: Python<'py>, e: ExprArg) -> PyResult<Bound<'py, PyAny>> {
    let sympy = py.import("sympy")?;
    build(py, &sympy, e.0)
}

fn build<'py>(py: Python<'py>, sp: &Bound<'py, PyModule>, e: Expr) -> PyResult<Bound<'py, PyAny>> {
    let int = |v: &BigInt| -> PyResult<Bound<'py, PyAny>> {
        sp.getattr("Integer")?.call1((bigint_to_py(py, v)?,))
    };
    let quotient = |a: Expr, b: Expr| -> PyResult<Bound<'py, PyAny>> {
        build(py, sp, a)?.div(build(py, sp, b)?)
    };
    match e.kind() {
        ExprKind::Const(v) => int(&v),
        ExprKind::Symbol(name) => {
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item("integer", true)?;
            let lo = e.symbol_spec().and_then(|s| s.lower()).map(|l| l.range());
            let lo = lo.and_then(|r| r.lo);
            if lo.as_ref().is_some_and(|l| *l >= BigInt::from(1)) {
                kw.set_item("positive", true)?;
            } else if lo.as_ref().is_some_and(|l| *l >= BigInt::from(0)) {
                kw.set_item("nonnegative", true)?;
            }
            sp.getattr("Symbol")?.call((name,), Some(&kw))
        }
        ExprKind::Sum { terms, constant } => {
            let mut parts = Vec::with_capacity(terms.len() + 1);
            for (m, k) in &terms {
                parts.push(int(k)?.mul(build(py, sp, *m)?)?);
            }
            parts.push(int(&constant)?);
            sp.getattr("Add")?.call1(PyTuple::new(py, parts)?)
        }
        ExprKind::Product(factors) => {
            let mut parts = Vec::with_capacity(factors.len());
            for (a, k) in &factors {
                parts.push(build(py, sp, *a)?.pow(*k, py.None())?);
            }
            sp.getattr("Mul")?.call1(PyTuple::new(py, parts)?)
        }
        ExprKind::FloorDiv(a, b) => sp.getattr("floor")?.call1((quotient(a, b)?,)),
        ExprKind::CeilDiv(a, b) => sp.getattr("ceiling")?.call1((quotient(a, b)?,)),
        ExprKind::FloorMod(a, b) => sp
            .getattr("Mod")?
            .call1((build(py, sp, a)?, build(py, sp, b)?)),
        ExprKind::Min(args) | ExprKind::Max(args) => {
            let name = if matches!(e.kind(), ExprKind::Min(_)) {
                "Min"
            } else {
                "Max"
            };
            let parts = args
                .iter()
                .map(|&a| build(py, sp, a))
                .collect::<PyResult<Vec<_>>>()?;
            sp.getattr(name)?.call1(PyTuple::new(py, parts)?)
        }
        ExprKind::Invalid(m) => Err(err(m)),
        _ => Err(err(format!("to_sympy: unsupported expression `{e}`"))),
    }
}
