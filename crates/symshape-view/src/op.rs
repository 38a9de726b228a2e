//! [`Op`]: one view op with its (possibly symbolic) arguments, as traces record it.

use std::fmt;

use symshape::Expr;

use crate::index::IndexItem;

/// One view op with its arguments. [`View::apply`](crate::View::apply) and
/// [`ViewStack::apply`](crate::ViewStack::apply) run it under a scope.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op {
    /// Reinterprets the elements in row-major order.
    Reshape(Vec<Expr>),
    /// Broadcasts size-1 axes.
    Expand(Vec<Expr>),
    /// Reorders axes.
    Permute(Vec<usize>),
    /// Keeps `[start, end)` of every axis.
    Shrink(Vec<(Expr, Expr)>),
    /// Adds masked-out `(before, after)` padding on every axis.
    Pad(Vec<(Expr, Expr)>),
    /// Reverses the listed axes.
    Flip(Vec<usize>),
    /// NumPy basic indexing, with symbolic indices and slice bounds allowed.
    Index(Vec<IndexItem<Expr>>),
    /// Sliding windows of `size` indices every `step` along `axis`; the window
    /// axis is appended last (PyTorch's `unfold`).
    Unfold {
        /// The axis the windows slide along.
        axis: usize,
        /// Indices per window.
        size: Expr,
        /// Distance between window starts (at least 1).
        step: Expr,
    },
    /// The diagonal of axes `dim1` and `dim2`, shifted by `offset` (positive:
    /// above the main diagonal), appended last (PyTorch's `diagonal`).
    Diagonal {
        /// Shift of the diagonal; its sign must be known.
        offset: Expr,
        /// The row axis.
        dim1: usize,
        /// The column axis.
        dim2: usize,
    },
}

impl Op {
    /// The op's name, as error messages and traces print it.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Reshape(_) => "reshape",
            Op::Expand(_) => "expand",
            Op::Permute(_) => "permute",
            Op::Shrink(_) => "shrink",
            Op::Pad(_) => "pad",
            Op::Flip(_) => "flip",
            Op::Index(_) => "index",
            Op::Unfold { .. } => "unfold",
            Op::Diagonal { .. } => "diagonal",
        }
    }
}

fn join<T>(v: &[T], f: impl Fn(&T) -> String) -> String {
    let parts: Vec<String> = v.iter().map(f).collect();
    format!("[{}]", parts.join(", "))
}

impl fmt::Display for Op {
    /// `reshape [n, 12, 64]`, `shrink [(1, n - 1), (0, 64)]`, `index [1:, None]`,
    /// `unfold 0 size 3 step 1`, `diagonal [0, 1] offset k`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pairs = |v: &[(Expr, Expr)]| join(v, |(a, b)| format!("({a}, {b})"));
        let args = match self {
            Op::Reshape(s) | Op::Expand(s) => join(s, ToString::to_string),
            Op::Permute(a) | Op::Flip(a) => join(a, ToString::to_string),
            Op::Shrink(p) | Op::Pad(p) => pairs(p),
            Op::Index(items) => fmt_items(items),
            Op::Unfold { axis, size, step } => format!("{axis} size {size} step {step}"),
            Op::Diagonal { offset, dim1, dim2 } => format!("[{dim1}, {dim2}] offset {offset}"),
        };
        write!(f, "{} {args}", self.name())
    }
}

/// `[1, n - 1:, None]`.
pub(crate) fn fmt_items<B: fmt::Display>(items: &[IndexItem<B>]) -> String {
    join(items, ToString::to_string)
}
