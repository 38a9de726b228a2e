//! The crate's error type.

use thiserror::Error;

/// Everything that can go wrong when describing a layout or running a kernel.
///
/// Messages are lowercase, carry the offending values and start with the operation.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum KernelError {
    /// Shape and strides (or mask) have different lengths.
    #[error("{op}: shape {shape:?} has {} axes but {what} has {got}", shape.len())]
    RankMismatch {
        /// The operation.
        op: &'static str,
        /// The shape given.
        shape: Vec<usize>,
        /// What had the wrong length (`strides`, `mask`, `axes`).
        what: &'static str,
        /// Its length.
        got: usize,
    },
    /// A mask interval is not inside its axis.
    #[error("{op}: mask ({begin}, {end}) of axis {axis} is not inside 0..{extent}")]
    BadMask {
        /// The operation.
        op: &'static str,
        /// The axis.
        axis: usize,
        /// Interval start.
        begin: usize,
        /// Interval end (exclusive).
        end: usize,
        /// Extent of the axis.
        extent: usize,
    },
    /// An element count or an offset does not fit the machine's integers.
    #[error("{op}: shape {shape:?} with strides {strides:?} and offset {offset} overflows the address range")]
    Overflow {
        /// The operation.
        op: &'static str,
        /// The shape.
        shape: Vec<usize>,
        /// The strides.
        strides: Vec<isize>,
        /// The offset.
        offset: isize,
    },
    /// A stack has no layouts.
    #[error("stack: a layout stack needs at least one layout")]
    EmptyStack,
    /// A layout of a stack reaches outside the element space of the layout below it.
    #[error("stack: layout {level} reaches linear indices {lo}..={hi} but layout {below} below it has {numel} elements")]
    LevelOutOfRange {
        /// Position of the offending layout (0 is the bottom).
        level: usize,
        /// Position of the layout below.
        below: usize,
        /// Lowest linear index reached.
        lo: isize,
        /// Highest linear index reached.
        hi: isize,
        /// Element count of the layout below.
        numel: usize,
    },
    /// A view reaches outside its buffer.
    #[error("{op}: {role} view reaches offsets {lo}..={hi} but the buffer holds {len} elements")]
    OutOfBuffer {
        /// The operation.
        op: &'static str,
        /// `source`, `destination`, `lhs` or `rhs`.
        role: &'static str,
        /// Lowest offset reached.
        lo: isize,
        /// Highest offset reached.
        hi: isize,
        /// Buffer length.
        len: usize,
    },
    /// A destination view reaches one element through two indices.
    #[error("{op}: destination view {shape:?} with strides {strides:?} reaches some element through two indices")]
    OverlappingDestination {
        /// The operation.
        op: &'static str,
        /// Shape of the destination.
        shape: Vec<usize>,
        /// Strides of the destination.
        strides: Vec<isize>,
    },
    /// A destination view could not be proven free of self-overlap and is too large to check exhaustively.
    #[error("{op}: cannot prove destination view {shape:?} with strides {strides:?} is free of self-overlap (axes sorted by stride do not nest and {numel} elements exceed the exhaustive-check limit {limit})")]
    UndecidedOverlap {
        /// The operation.
        op: &'static str,
        /// Shape of the destination.
        shape: Vec<usize>,
        /// Strides of the destination.
        strides: Vec<isize>,
        /// Elements in the destination.
        numel: usize,
        /// The exhaustive-check limit.
        limit: usize,
    },
    /// Source and destination shapes differ.
    #[error("{op}: destination shape {dst:?} differs from source shape {src:?}")]
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// Destination shape.
        dst: Vec<usize>,
        /// Source shape.
        src: Vec<usize>,
    },
    /// Two shapes cannot be broadcast together.
    #[error("{op}: shapes {lhs:?} and {rhs:?} do not broadcast")]
    Broadcast {
        /// The operation.
        op: &'static str,
        /// Left shape.
        lhs: Vec<usize>,
        /// Right shape.
        rhs: Vec<usize>,
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
    /// An error of the `view` crate (from a view op run on the way to a kernel).
    #[error(transparent)]
    View(Box<symshape_view::Error>),
    /// A view of the `view` crate is not concrete (a field is symbolic).
    #[error("{op}: cannot lower {view}: {detail}")]
    Lower {
        /// The operation.
        op: &'static str,
        /// The view (and its level in a stack), printed.
        view: String,
        /// Which field is not a constant.
        detail: String,
        /// The error of the `view` crate.
        #[source]
        source: Box<symshape_view::Error>,
    },
    /// A constant field of a view of the `view` crate does not fit this machine's integers.
    #[error("{op}: {field} {value} of {view} does not fit this machine's integers")]
    ViewField {
        /// The operation.
        op: &'static str,
        /// The view (and its level in a stack), printed.
        view: String,
        /// `shape`, `stride`, `offset` or `mask`.
        field: &'static str,
        /// The value that does not fit.
        value: i64,
    },
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
    /// A permutation is not a permutation of the axes.
    #[error("{op}: {perm:?} is not a permutation of {n_dims} axes")]
    BadPermutation {
        /// The operation.
        op: &'static str,
        /// The permutation.
        perm: Vec<usize>,
        /// Axes of the view.
        n_dims: usize,
    },
}

impl From<symshape_view::Error> for KernelError {
    fn from(e: symshape_view::Error) -> KernelError {
        // Boxed: view errors are large and rare, kernel results are returned in hot paths.
        KernelError::View(Box::new(e))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = KernelError> = std::result::Result<T, E>;
