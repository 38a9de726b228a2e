//! `symshape.Error`, the one exception the module raises for the library's errors.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

create_exception!(
    symshape,
    Error,
    PyValueError,
    "An error of the library: an op's arguments rejected (the message names the op, its \
     arguments and the shapes), a parse error, an unbound or out-of-range symbol, a budget \
     exceeded. A subclass of `ValueError`."
);

/// `symshape.Error` with the message of `e`.
pub(crate) fn err(e: impl std::fmt::Display) -> PyErr {
    Error::new_err(e.to_string())
}
