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
//! releases the GIL; a `Scope` is shared by threads behind a lock. The bindings hold no
//! logic of their own: each call converts its arguments and calls the crates' public API.
//! `docs/python.md` describes the API; the pytest suite is in `tests/`.
//!
//! ```python
//! import numpy as np, symshape
//! cx = symshape.Scope()
//! n = cx.declare("n 1..=4096")
//! x = symshape.ViewStack.row_major(cx, [n, 6]).T.reshape(6 * n)
//! assert list(x.bind({"n": 2}).materialize(np.arange(12.0))) == [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]
//! ```
//!
//! # Dependencies
//!
//! - `pyo3` 0.30, the newest (Rust 1.85 or later), feature `abi3-py39`: the bindings; one
//!   wheel for CPython 3.9 and later through the stable ABI. The crate's default feature
//!   `extension-module` keeps every build from linking libpython, so `cargo build` needs no
//!   Python development files (nor an interpreter, with `PYO3_NO_PYTHON=1`).
//! - `numpy` 0.30 (the release that goes with PyO3 0.30): NumPy's C API, through which
//!   `offsets` returns an `int64` array and `materialize` reads the input array's memory in
//!   place (no copy), for every element type the kernels support, through its strides and
//!   offset (the `ndarray` feature of `symshape-kernels` borrows the views whose elements
//!   fill their memory; numpy 0.30's ndarray is the workspace's 0.17). PyO3's own buffer
//!   protocol wrapper needs the limited API of CPython 3.11, which a 3.9 wheel cannot use.

#![forbid(unsafe_code)]

mod error;
mod expr;
mod input;
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
