//! The crate's error type.

/// Everything planning or rendering can refuse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the view crate (lowering, broadcasting).
    #[error(transparent)]
    View(#[from] symshape_view::Error),
    /// An error of the expression crate (an expression beyond its limits).
    #[error(transparent)]
    Symshape(#[from] symshape::Error),
    /// An input the plan or the renderer cannot express, naming the op and the argument.
    #[error("{op}: {message}")]
    Unsupported {
        /// The operation that refused (`plan_materialize`, `render_c`, ...).
        op: &'static str,
        /// What was refused, with the values involved.
        message: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
