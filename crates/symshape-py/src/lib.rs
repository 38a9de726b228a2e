//! The Python extension module `symshape._symshape`, re-exported by the `symshape` package.
//!
//! # Main types
//!
//! - `Scope` (`scope.rs`): declarations and assumptions; parse, simplify, prove, range, eval.
//! - `Expr`, `Cond` (`expr.rs`): the interned handles with Python's operators.
//! - `from_sympy`, `to_sympy` (`sympy.rs`): the bridge to sympy and Inductor's functions.
//! - `ViewStack`, `BoundStack` (`view.rs`): the view ops, lowering, guards, C code, binding,
//!   offsets and `materialize` over NumPy arrays.
//!
//! Every call that can take long (proofs, simplification, view ops, binding, the kernels)
//! releases the GIL; a `Scope` is shared by threads behind a lock.
//!
//! # Dependencies
//!
//! - `pyo3` (feature `abi3-py39`): the bindings; one wheel for CPython 3.9 and later
//!   through the stable ABI. Built by maturin, which links no libpython.
//! - `numpy`: NumPy's C API through PyO3: `offsets` returns an `int64` array, and
//!   `materialize` reads the input array's memory in place (no copy) for every element
//!   type the kernels support.

#![forbid(unsafe_code)]

mod error;
mod expr;
mod scope;
mod sympy;
mod view;

use pyo3::prelude::*;

/// The module: its classes, functions and exception.
#[pymodule]
fn _symshape(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<scope::PyScope>()?;
    m.add_class::<expr::PyExpr>()?;
    m.add_class::<expr::PyCond>()?;
    m.add_class::<view::PyViewStack>()?;
    m.add_class::<view::PyBoundStack>()?;
    m.add("Error", m.py().get_type::<error::Error>())?;
    m.add_function(wrap_pyfunction!(expr::min, m)?)?;
    m.add_function(wrap_pyfunction!(expr::max, m)?)?;
    m.add_function(wrap_pyfunction!(expr::cdiv, m)?)?;
    m.add_function(wrap_pyfunction!(expr::_expr_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(expr::_cond_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(sympy::from_sympy, m)?)?;
    m.add_function(wrap_pyfunction!(sympy::to_sympy, m)?)?;
    Ok(())
}
