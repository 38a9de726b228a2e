//! The crate's one error type, and the list formats of its messages (and of traces).

use std::fmt::{self, Write as _};

/// Everything that can go wrong in a view op.
///
/// Every message names the op, carries the offending arguments and the
/// view's shape and strides, and has no trailing period.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is malformed for the op (wrong rank, out of range, negative size, ...).
    #[error("{op}: {detail}")]
    Invalid {
        /// The op that rejected its arguments.
        op: &'static str,
        /// What was wrong, with the values involved.
        detail: String,
    },
    /// The arguments are valid but the result is not expressible as one view.
    #[error("{op}: {detail}")]
    NotRepresentable {
        /// The op whose result cannot be one view.
        op: &'static str,
        /// The shapes and strides involved, and what to do instead.
        detail: String,
    },
    /// The work or memory an op would need exceeds a documented limit.
    #[error("{op}: limit: {detail}")]
    Limit {
        /// The op that refused.
        op: &'static str,
        /// The limit and what exceeded it.
        detail: String,
    },
    /// A size, stride or offset does not fit in an `i64`.
    #[error("{op}: overflow: {detail}")]
    Overflow {
        /// The op whose arithmetic overflowed.
        op: &'static str,
        /// The quantity that overflowed.
        detail: String,
    },
    /// A field or argument is symbolic (or a guard is pending) where the op needs
    /// constants: bind the view first.
    #[error("{op}: {what} is symbolic ({expr}); bind the symbols first")]
    Symbolic {
        /// The op that needs constants.
        op: &'static str,
        /// Which field or argument is symbolic.
        what: &'static str,
        /// The symbolic expression, printed.
        expr: String,
    },
    /// A precondition of a symbolic op fails: proven false when the op ran, or
    /// false for the values given at bind time.
    #[error("{op}: guard {guard} fails: {detail}")]
    Guard {
        /// The op that recorded the guard.
        op: &'static str,
        /// The guard, as `lhs OP rhs (what it means)`.
        guard: String,
        /// The values of its symbols, or why it fails for every value, and the view.
        detail: String,
    },
    /// Evaluating, compiling or solving an expression failed (unbound symbol,
    /// value out of range, overflow, ...).
    #[error(transparent)]
    Symshape(#[from] symshape::Error),
    /// Text given to a parser is malformed.
    #[error("parse: {detail}")]
    Parse {
        /// What was expected and what was found.
        detail: String,
    },
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn invalid(op: &'static str, detail: impl Into<String>) -> Error {
    Error::Invalid {
        op,
        detail: detail.into(),
    }
}

/// The refusal of an op whose result `form` (a strided array in bytes, a complex
/// tensor) has no mask, when the view `ctx` has one.
pub(crate) fn refuse_mask(op: &'static str, ctx: impl std::fmt::Display, form: &str) -> Error {
    invalid(
        op,
        format!("{ctx} has a mask, which {form} cannot express; materialize it first"),
    )
}

/// PyTorch's refusal of `view(*shape)` when the reshape of the view `ctx` to `shape` is not
/// one view (for a symbolic view: not provably one view for every value of its symbols).
pub(crate) fn view_shape_refusal(shape: &str, ctx: &str, symbolic: bool) -> Error {
    let every = if symbolic {
        " for every value of the symbols"
    } else {
        ""
    };
    unrepresentable(
        "view_shape",
        format!(
            "view size {shape} is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces){every}, for {ctx}; use .reshape(...) instead"
        ),
    )
}

/// `axis` is not an axis of the view described by `ctx`, of rank `ndim`.
pub(crate) fn bad_axis(op: &'static str, ctx: &str, axis: usize, ndim: usize) -> Error {
    invalid(
        op,
        format!("axis {axis} is out of range for {ctx} of rank {ndim}"),
    )
}

/// The entry of `axis` in `per_axis` (one entry per axis of the view described by `ctx`,
/// such as its shape); [`bad_axis`] of `op` when there is none.
pub(crate) fn at_axis<T: Copy>(
    op: &'static str,
    per_axis: &[T],
    axis: usize,
    ctx: impl FnOnce() -> String,
) -> Result<T> {
    let ndim = per_axis.len();
    per_axis
        .get(axis)
        .copied()
        .ok_or_else(|| bad_axis(op, &ctx(), axis, ndim))
}

/// Checks that the argument `what` of `op`, of length `len`, has one entry per axis of the
/// view described by `ctx`, of rank `ndim`.
#[inline]
pub(crate) fn check_len(
    op: &'static str,
    what: &str,
    len: usize,
    ndim: usize,
    ctx: impl FnOnce() -> String,
) -> Result<()> {
    if len == ndim {
        return Ok(());
    }
    Err(len_mismatch(op, what, len, ndim, &ctx()))
}

/// The error of [`check_len`], out of the checking path.
#[cold]
#[inline(never)]
fn len_mismatch(op: &'static str, what: &str, len: usize, ndim: usize, ctx: &str) -> Error {
    invalid(
        op,
        format!("{what} has length {len} but {ctx} has rank {ndim}"),
    )
}

/// The error of a field of another rank than the shape; `field` names it as the
/// message does, with its verb (`strides [1, 2] have`, `mask has`).
#[cold]
pub(crate) fn field_rank<D: fmt::Display>(
    op: &'static str,
    field: &str,
    len: usize,
    shape: &[D],
) -> Error {
    let (s, n) = (fmt_list(shape), shape.len());
    invalid(op, format!("{field} rank {len} but shape {s} has rank {n}"))
}

/// Checks that `axis` is a place where `op` can insert an axis into the view
/// described by `ctx`, of rank `ndim`: `0..=ndim`.
pub(crate) fn check_new_axis(
    op: &'static str,
    ctx: impl FnOnce() -> String,
    axis: usize,
    ndim: usize,
) -> Result<()> {
    if axis <= ndim {
        return Ok(());
    }
    Err(invalid(
        op,
        format!("axis {axis} is out of range 0..={ndim} for {}", ctx()),
    ))
}

/// Checks that `piece` is one of the `count` pieces an op cuts `axis` of the view
/// described by `ctx` into.
pub(crate) fn check_piece(
    op: &'static str,
    ctx: impl FnOnce() -> String,
    axis: usize,
    piece: usize,
    count: usize,
) -> Result<()> {
    if piece < count {
        return Ok(());
    }
    Err(invalid(
        op,
        format!(
            "piece {piece} is not one of the {count} pieces of axis {axis} of {}",
            ctx()
        ),
    ))
}

pub(crate) fn overflow(op: &'static str, detail: impl Into<String>) -> Error {
    Error::Overflow {
        op,
        detail: detail.into(),
    }
}

pub(crate) fn unrepresentable(op: &'static str, detail: impl Into<String>) -> Error {
    Error::NotRepresentable {
        op,
        detail: detail.into(),
    }
}

/// `[2, n, 4]`, as messages and traces print a list of sizes.
pub(crate) fn fmt_list<D: fmt::Display>(v: &[D]) -> String {
    join(v, |s, x| write!(s, "{x}"))
}

/// `[(0, n), (1, 4)]`, as messages and traces print a list of ranges.
pub(crate) fn fmt_pairs<D: fmt::Display>(v: &[(D, D)]) -> String {
    join(v, |s, (a, b)| write!(s, "({a}, {b})"))
}

/// `[a, b]`, each item written by `item`, into one string.
fn join<T>(v: &[T], item: impl Fn(&mut String, &T) -> fmt::Result) -> String {
    let mut s = String::from("[");
    for (k, x) in v.iter().enumerate() {
        if k > 0 {
            s.push_str(", ");
        }
        // Writing to a `String` cannot fail.
        let _ = item(&mut s, x);
    }
    s.push(']');
    s
}
