//! NumPy basic indexing: the index type and a parser for its text form.

use std::fmt;

use crate::error::{Error, Result};

/// One entry of a basic index such as `[1, 2:, ::-1, None, ...]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexItem {
    /// Selects one index of the axis and drops the axis; negative counts from the end.
    Int(i64),
    /// `start:stop:step`; omitted parts take NumPy's defaults and bounds clamp.
    Slice {
        /// First index (default 0, or the last index when `step < 0`).
        start: Option<i64>,
        /// One past the last index (default: the end in the direction of `step`).
        stop: Option<i64>,
        /// Step, never 0 (default 1).
        step: Option<i64>,
    },
    /// `None`: inserts a size-1 axis.
    NewAxis,
    /// `...`: as many full slices as needed to index every axis.
    Ellipsis,
}

impl IndexItem {
    /// The full slice `:`.
    pub const FULL: IndexItem = IndexItem::Slice {
        start: None,
        stop: None,
        step: None,
    };
}

impl fmt::Display for IndexItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
        match *self {
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

/// Parses NumPy basic-index text such as `[1, 2:, ::-1, None, ...]`.
///
/// The surrounding brackets are optional; entries are separated by commas.
///
/// # Errors
/// [`Error::Parse`] naming the entry that is not an integer, a slice, `None` or `...`.
pub fn parse_index(text: &str) -> Result<Vec<IndexItem>> {
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
    inner.split(',').map(|p| parse_item(p.trim(), t)).collect()
}

fn parse_item(p: &str, whole: &str) -> Result<IndexItem> {
    let bad = || Error::Parse {
        detail: format!(
            "cannot read {p:?} in index {whole:?}; expected an integer, a slice, None or ..."
        ),
    };
    match p {
        "None" => return Ok(IndexItem::NewAxis),
        "..." => return Ok(IndexItem::Ellipsis),
        "" => return Err(bad()),
        _ => {}
    }
    if !p.contains(':') {
        return p.parse().map(IndexItem::Int).map_err(|_| bad());
    }
    let parts: Vec<&str> = p.split(':').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(bad());
    }
    let num = |s: Option<&&str>| -> Result<Option<i64>> {
        match s {
            None | Some(&"") => Ok(None),
            Some(s) => s.parse().map(Some).map_err(|_| bad()),
        }
    };
    Ok(IndexItem::Slice {
        start: num(parts.first())?,
        stop: num(parts.get(1))?,
        step: num(parts.get(2))?,
    })
}
