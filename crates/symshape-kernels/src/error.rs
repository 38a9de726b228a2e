//! The crate's error type.

use thiserror::Error as ThisError;

/// Everything that can go wrong when planning or running a kernel.
///
/// Messages are lowercase, carry the offending values and start with the operation.
#[derive(Debug, Clone, PartialEq, Eq, ThisError)]
#[non_exhaustive]
pub enum Error {
    /// An element count or an offset does not fit the machine's address range.
    #[error("{op}: shape {shape:?} overflows the address range")]
    Overflow {
        /// The operation.
        op: &'static str,
        /// The shape.
        shape: Vec<usize>,
    },
    /// A field of a view does not fit this machine's integers.
    #[error("{op}: {what} {value} of {view} does not fit this machine's integers")]
    Machine {
        /// The operation.
        op: &'static str,
        /// `size`, `stride`, `offset`, `mask` or `element count`.
        what: &'static str,
        /// The value that does not fit.
        value: i64,
        /// The view, printed.
        view: String,
    },
    /// A view reaches outside its buffer.
    #[error("{op}: {role} view reaches offsets {lo}..={hi} but its buffer holds {len} elements")]
    OutOfBuffer {
        /// The operation.
        op: &'static str,
        /// `source`, `destination`, `lhs` or `rhs`.
        role: &'static str,
        /// Lowest offset reached.
        lo: i64,
        /// Highest offset reached.
        hi: i64,
        /// Buffer length.
        len: usize,
    },
    /// A destination view reaches one element through two indices.
    #[error("{op}: destination {view} reaches some element through two indices")]
    OverlappingDestination {
        /// The operation.
        op: &'static str,
        /// The destination view (or the level of a stack that does), printed.
        view: String,
    },
    /// A destination view could not be proven free of self-overlap and is too large to check
    /// exhaustively.
    #[error("{op}: cannot prove destination {view} free of self-overlap (its axes sorted by stride do not nest, and it has more than {limit} valid elements to compare)")]
    UndecidedOverlap {
        /// The operation.
        op: &'static str,
        /// The destination view, printed.
        view: String,
        /// The exhaustive-check limit.
        limit: i128,
    },
    /// Source and destination shapes differ.
    #[error("{op}: destination shape {dst:?} differs from source shape {src:?}")]
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// Destination shape.
        dst: Vec<i64>,
        /// Source shape.
        src: Vec<i64>,
    },
    /// Two shapes cannot be broadcast together.
    #[error("{op}: shapes {lhs:?} and {rhs:?} do not broadcast")]
    Broadcast {
        /// The operation.
        op: &'static str,
        /// Left shape.
        lhs: Vec<i64>,
        /// Right shape.
        rhs: Vec<i64>,
    },
    /// An output slice has the wrong length.
    #[error("{op}: output holds {got} elements but shape {shape:?} needs {expected}")]
    OutputLength {
        /// The operation.
        op: &'static str,
        /// Output shape.
        shape: Vec<usize>,
        /// Elements needed.
        expected: usize,
        /// Elements given.
        got: usize,
    },
    /// A reduction axis is out of range or repeated.
    #[error("{op}: axis {axis} is out of range or repeated for a view with {n_dims} axes")]
    BadAxis {
        /// The operation.
        op: &'static str,
        /// The axis.
        axis: usize,
        /// Axes of the view.
        n_dims: usize,
    },
    /// A plan is run with another element type than it was made for.
    #[error("{op}: plan was made for {planned} elements but run on {got}")]
    ElementMismatch {
        /// The operation.
        op: &'static str,
        /// Element type of the plan.
        planned: &'static str,
        /// Element type of the buffers.
        got: &'static str,
    },
    /// A buffer the operation would allocate exceeds the allocation limit, or the
    /// allocator refused it.
    #[error("{op}: {elements} elements of {elem_bytes} bytes exceed {detail}")]
    Alloc {
        /// The operation.
        op: &'static str,
        /// Elements asked for.
        elements: u128,
        /// Bytes per element.
        elem_bytes: usize,
        /// The limit (see [`set_alloc_limit`](crate::set_alloc_limit)) or the allocator's refusal.
        detail: String,
    },
    /// An error of the view crate (from a view op run on the way to a kernel).
    #[error(transparent)]
    View(Box<symshape_view::Error>),
    /// An ndarray view leaves gaps in its memory range, so no slice may cover it.
    #[error("{op}: ndarray view {shape:?} with strides {strides:?} does not cover its memory range densely")]
    NotDense {
        /// The operation.
        op: &'static str,
        /// Shape of the array view.
        shape: Vec<usize>,
        /// Strides of the array view.
        strides: Vec<isize>,
    },
    /// A DLPack tensor cannot be read as a view of the requested element type.
    #[error("{op}: dlpack tensor of shape {shape} with strides {strides} {reason}")]
    Dlpack {
        /// The operation.
        op: &'static str,
        /// The shape, printed (`?` when it cannot be read).
        shape: String,
        /// The strides, printed (`null` when the tensor gives none).
        strides: String,
        /// What is wrong with the tensor.
        reason: String,
    },
}

impl From<symshape_view::Error> for Error {
    fn from(e: symshape_view::Error) -> Error {
        // Boxed: view errors are large and rare, kernel results are returned in hot paths.
        Error::View(Box::new(e))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
