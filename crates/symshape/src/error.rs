//! The crate's error type.

/// Everything that can fail in symshape. Messages are lowercase, name the operation and
/// carry the offending values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The text is not a well-formed expression.
    #[error("parse: column {column}: {message}")]
    Parse {
        /// 1-based column (in characters) where the problem was found.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// A name that no symbol in the scope carries.
    #[error("{op}: unknown symbol `{name}`")]
    UnknownSymbol {
        /// The operation that looked the name up.
        op: &'static str,
        /// The name.
        name: String,
    },
    /// A symbol declaration that cannot be honoured.
    #[error("declare: symbol `{name}`: {message}")]
    Declare {
        /// The symbol's name.
        name: String,
        /// Why it was refused.
        message: String,
    },
    /// A size, depth, degree or width budget was exceeded (see the crate docs on limits).
    #[error("{0}")]
    Limit(String),
    /// An assumption that cannot hold for any admissible binding.
    #[error("assume: `{assumption}` contradicts the ranges and the earlier assumptions")]
    Contradiction {
        /// The assumption, as written canonically.
        assumption: String,
    },
    /// A symbol used without a value.
    #[error("{op}: symbol `{name}` is unbound")]
    Unbound {
        /// The operation.
        op: &'static str,
        /// The symbol's name.
        name: String,
    },
    /// A bound value outside its symbol's range or divisor.
    #[error("bind: {name} = {value} is outside its range {range}")]
    OutOfRange {
        /// The symbol's name.
        name: String,
        /// The value.
        value: i64,
        /// The declared range, e.g. `1..=4096` or `1..=4096, multiple of 8`.
        range: String,
    },
    /// Bindings that break an assumption of the scope.
    #[error("bind: assumption `{assumption}` is violated by {bindings}")]
    Violated {
        /// The assumption.
        assumption: String,
        /// The values of its symbols, e.g. `n = 7, m = 3`.
        bindings: String,
    },
    /// A value that does not fit an i64.
    #[error("{op}: `{expr}` overflows i64")]
    Overflow {
        /// The operation.
        op: &'static str,
        /// The sub-expression whose value overflowed.
        expr: String,
    },
    /// Division or modulo by zero.
    #[error("{op}: division by zero in `{expr}`")]
    DivisionByZero {
        /// The operation.
        op: &'static str,
        /// The division whose divisor was zero.
        expr: String,
    },
    /// An equation without a unique integral solution.
    #[error("solve: `{equation}`: {message}")]
    Solve {
        /// The equation.
        equation: String,
        /// Why it could not be solved.
        message: String,
    },
    /// A value of the wrong kind: an integer where a condition is needed or the reverse,
    /// or a non-symbol where a symbol is needed.
    #[error("{op}: expected {expected}, found `{found}`")]
    Kind {
        /// The operation.
        op: &'static str,
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: String,
    },
}
