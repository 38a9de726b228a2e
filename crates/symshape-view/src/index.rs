//! NumPy basic indexing: the index type, its bound type, and parsers for its text form.

use std::fmt;
use std::hash::Hash;

use symshape::{Expr, Scope};

use crate::dim::Dim;
use crate::error::{Error, Result};

/// One entry of a basic index such as `[1, 2:, ::-1, None, ...]`.
///
/// `B` is `i64` (the default) for concrete indices or [`symshape::Expr`] for
/// symbolic ones (`[n - 1, 1:n - 1, ::-1]`, see [`parse_index_in`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
pub enum IndexItem<B = i64> {
    /// Selects one index of the axis and drops the axis; negative counts from the end.
    Int(B),
    /// `start:stop:step`; omitted parts take NumPy's defaults and bounds clamp.
    Slice {
        /// First index (default 0, or the last index when `step < 0`).
        start: Option<B>,
        /// One past the last index (default: the end in the direction of `step`).
        stop: Option<B>,
        /// Step, never 0 (default 1).
        step: Option<B>,
    },
    /// `None`: inserts a size-1 axis.
    NewAxis,
    /// `...`: as many full slices as needed to index every axis.
    Ellipsis,
}

/// The rank of the result of indexing a view of rank `ndim` with `items` when they are
/// valid for it: each integer drops an axis, each `None` adds one.
pub(crate) fn index_result_rank<B>(items: &[IndexItem<B>], ndim: usize) -> usize {
    let mut ints = 0usize;
    let mut new = 0usize;
    for item in items {
        match item {
            IndexItem::Int(_) => ints += 1,
            IndexItem::NewAxis => new += 1,
            _ => {}
        }
    }
    ndim.saturating_add(new).saturating_sub(ints)
}

impl<B> IndexItem<B> {
    /// The full slice `:`.
    pub const FULL: IndexItem<B> = IndexItem::Slice {
        start: None,
        stop: None,
        step: None,
    };

    /// Whether the entry consumes an axis of the indexed view (an integer or a slice).
    pub fn consumes_axis(&self) -> bool {
        matches!(self, IndexItem::Int(_) | IndexItem::Slice { .. })
    }

    /// The same entry with every value passed through `f`.
    pub fn map<C>(self, mut f: impl FnMut(B) -> C) -> IndexItem<C> {
        match self {
            IndexItem::Int(i) => IndexItem::Int(f(i)),
            IndexItem::Slice { start, stop, step } => IndexItem::Slice {
                start: start.map(&mut f),
                stop: stop.map(&mut f),
                step: step.map(&mut f),
            },
            IndexItem::NewAxis => IndexItem::NewAxis,
            IndexItem::Ellipsis => IndexItem::Ellipsis,
        }
    }
}

impl<B: Dim> IndexItem<B> {
    /// The entry with symbolic values.
    pub fn to_expr(self) -> IndexItem<Expr> {
        self.map(Into::into)
    }

    /// The entry with `i64` values, or `None` when a value is symbolic.
    pub fn to_const(self) -> Option<IndexItem<i64>> {
        Some(match self {
            IndexItem::Int(i) => IndexItem::Int(i.as_const()?),
            IndexItem::Slice { start, stop, step } => {
                let c = |v: Option<B>| match v {
                    None => Some(None),
                    Some(x) => x.as_const().map(Some),
                };
                IndexItem::Slice {
                    start: c(start)?,
                    stop: c(stop)?,
                    step: c(step)?,
                }
            }
            IndexItem::NewAxis => IndexItem::NewAxis,
            IndexItem::Ellipsis => IndexItem::Ellipsis,
        })
    }
}

impl From<IndexItem<i64>> for IndexItem<Expr> {
    fn from(item: IndexItem<i64>) -> IndexItem<Expr> {
        item.to_expr()
    }
}

impl<B: fmt::Display> fmt::Display for IndexItem<B> {
    /// `1`, `n - 1`, `2:`, `:n - 1:-1`, `None`, `...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |v: &Option<B>| v.as_ref().map(|x| x.to_string()).unwrap_or_default();
        match self {
            IndexItem::Int(i) => write!(f, "{i}"),
            IndexItem::Slice { start, stop, step } => {
                write!(f, "{}:{}", opt(start), opt(stop))?;
                match step {
                    Some(s) => write!(f, ":{s}"),
                    None => Ok(()),
                }
            }
            IndexItem::NewAxis => write!(f, "None"),
            IndexItem::Ellipsis => write!(f, "..."),
        }
    }
}

/// Parses NumPy basic-index text with integer entries, such as `[1, 2:, ::-1, None, ...]`.
///
/// The surrounding brackets are optional; entries are separated by commas.
///
/// # Errors
/// [`Error::Parse`] naming the entry that is not an integer, a slice, `None` or `...`.
pub fn parse_index(text: &str) -> Result<Vec<IndexItem>> {
    parse_with(text, |p| p.parse::<i64>().map_err(|_| String::new()))
}

/// Parses NumPy basic-index text whose integers and slice bounds are expressions
/// over the symbols of `cx`, such as `[n - 1, 1:n - 1, ::-1, None, ...]` or
/// `[:, :min(p, 16)]`.
///
/// Entries are separated by commas and slice parts by colons outside
/// parentheses, so `min(a, b)`, `//` and `%` can appear inside an entry.
///
/// ```
/// use symshape::Scope;
/// use symshape_view::{parse_index_in, Op, View};
///
/// let mut cx = Scope::new();
/// let n = cx.declare_str("n 2..=64")?;
/// let v = View::row_major(&cx, &[n, n])?;
/// let items = parse_index_in(&cx, "[n - 1, 1:n - 1]")?;
/// let row = v.apply(&cx, &Op::Index(items))?;
/// assert_eq!(row.to_string(), "view shape=[n - 2] strides=[1] offset=n*n - n + 1 mask=none");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error::Parse`] naming the entry that is not an expression, a slice, `None` or `...`.
pub fn parse_index_in(cx: &Scope, text: &str) -> Result<Vec<IndexItem<Expr>>> {
    parse_with(text, |p| cx.parse_expr(p).map_err(|e| e.to_string()))
}

/// A parser of one value: the value, or why the text is not one.
type ValueParser<'a, B> = &'a dyn Fn(&str) -> std::result::Result<B, String>;

fn parse_with<B>(
    text: &str,
    value: impl Fn(&str) -> std::result::Result<B, String>,
) -> Result<Vec<IndexItem<B>>> {
    let t = text.trim();
    let inner = match (t.strip_prefix('['), t.strip_suffix(']')) {
        (Some(_), Some(_)) if t.len() >= 2 => &t[1..t.len() - 1],
        (None, None) => t,
        _ => {
            return Err(Error::Parse {
                detail: format!("unbalanced brackets in index {t:?}"),
            })
        }
    };
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    split_top(inner, ',', t)?
        .into_iter()
        .map(|p| parse_item(p, t, &value))
        .collect()
}

/// Splits at `sep` outside parentheses and brackets, naming the whole index on error.
fn split_top<'a>(s: &'a str, sep: char, whole: &str) -> Result<Vec<&'a str>> {
    symshape::split_top_level(s, sep).map_err(|e| Error::Parse {
        detail: match e {
            symshape::Error::Parse { message, .. } => format!("{message} in index {whole:?}"),
            other => other.to_string(),
        },
    })
}

fn parse_item<B>(p: &str, whole: &str, value: ValueParser<'_, B>) -> Result<IndexItem<B>> {
    let bad_because = |why: String| {
        let why = if why.is_empty() {
            why
        } else {
            format!(" ({why})")
        };
        Error::Parse {
            detail: format!(
                "cannot read {p:?} in index {whole:?}{why}; expected an integer, a slice, None or ..."
            ),
        }
    };
    let bad = || bad_because(String::new());
    match p {
        "None" => return Ok(IndexItem::NewAxis),
        "..." => return Ok(IndexItem::Ellipsis),
        "" => return Err(bad()),
        _ => {}
    }
    let parts = split_top(p, ':', whole)?;
    if let [one] = parts.as_slice() {
        return value(one).map(IndexItem::Int).map_err(bad_because);
    }
    if parts.len() > 3 {
        return Err(bad());
    }
    let part = |s: Option<&&str>| -> Result<Option<B>> {
        match s {
            None | Some(&"") => Ok(None),
            Some(s) => value(s).map(Some).map_err(bad_because),
        }
    };
    Ok(IndexItem::Slice {
        start: part(parts.first())?,
        stop: part(parts.get(1))?,
        step: part(parts.get(2))?,
    })
}
