//! NumPy basic indexing: the index type, its bound type, parsers for its text form,
//! and its rule on a view's fields, written once over the size type for both engines.

use std::fmt;
use std::hash::Hash;

use symshape::{CmpOp, Expr, Scope};

use crate::check::Check;
use crate::dim::Dim;
use crate::dim::Size;
use crate::error::{invalid, overflow, Error, Result};
use crate::view::Fields;

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

/// Whether the index or bound `x` counts from the end (NumPy: it is negative).
///
/// A constant decides by its value, a symbolic value by a proof of its sign; when the
/// sign is not provable, `x` is taken as written (see [`Size::written_negative`]) and
/// that sign becomes a guard. `what` names `x` in the guard.
///
/// # Errors
/// When the sign as written is refuted.
pub(crate) fn counts_from_end<D: Size, C: Check<D>>(
    c: &mut C,
    x: D,
    what: &dyn Fn() -> String,
) -> Result<bool> {
    let zero = D::from(0);
    if let Some(v) = x.as_const() {
        return Ok(v < 0);
    }
    if c.holds(x, CmpOp::Ge, zero) {
        return Ok(false);
    }
    if c.holds(x, CmpOp::Lt, zero) {
        return Ok(true);
    }
    let (cmp, why) = if x.written_negative() {
        (CmpOp::Lt, "is written negative, so it counts from the end")
    } else {
        (CmpOp::Ge, "counts from the start, so it is non-negative")
    };
    // Only a symbolic sign gets here: an error is the checker's refutation.
    let undecided = || invalid("index", format!("the sign of {} is not decided", what()));
    c.require(x, cmp, zero, || format!("{} {why}", what()), undecided)?;
    Ok(cmp == CmpOp::Lt)
}

/// What the messages of one index name: the index and the view.
struct Names<'a, D> {
    items: &'a [IndexItem<D>],
    ctx: &'a dyn Fn() -> String,
}

impl<D: Dim> Names<'_, D> {
    /// The error `what` of the whole index.
    fn error(&self, what: impl fmt::Display) -> Error {
        let parts: Vec<String> = self.items.iter().map(ToString::to_string).collect();
        let ctx = (self.ctx)();
        invalid(
            "index",
            format!("{what} in [{}], for {ctx}", parts.join(", ")),
        )
    }
}

impl<D: Size> Fields<D> {
    /// NumPy basic indexing with every indexed axis kept: an integer-indexed axis as size
    /// 1, a `None` as a size-1 axis of stride 0. Returns the shape of the result without
    /// the integer-indexed axes. `ctx` names the view in errors; axes are numbered as
    /// the view's, as NumPy numbers them.
    ///
    /// An `i64` slice that keeps at most one index keeps the axis's stride, and a full
    /// `i64` slice changes nothing; a symbolic one keeps the forms every binding shares.
    ///
    /// # Errors
    /// Two ellipses, more integers and slices than axes, a zero step, a symbolic step
    /// of unprovable sign, an integer (provably) out of range, or an `i64` stride times
    /// step that leaves `i64`.
    pub(crate) fn index_keepdims<C: Check<D>>(
        &mut self,
        c: &mut C,
        items: &[IndexItem<D>],
        ctx: &dyn Fn() -> String,
    ) -> Result<Vec<D>> {
        let names = Names { items, ctx };
        let ndim = self.shape.len();
        let consumed = items.iter().filter(|i| i.consumes_axis()).count();
        let ellipses = items.iter().filter(|i| **i == IndexItem::Ellipsis).count();
        if ellipses > 1 {
            return Err(names.error("more than one ellipsis"));
        }
        if consumed > ndim {
            let what = format!("too many indices ({consumed} for rank {ndim})");
            return Err(names.error(what));
        }
        // The ellipsis, or the end of the index, stands for full slices of the axes
        // the other entries leave.
        let fill = ndim - consumed;
        let expanded = items
            .iter()
            .flat_map(|&it| match it {
                IndexItem::Ellipsis => std::iter::repeat_n(IndexItem::FULL, fill),
                _ => std::iter::repeat_n(it, 1),
            })
            .chain(std::iter::repeat_n(
                IndexItem::FULL,
                if ellipses == 0 { fill } else { 0 },
            ));
        // Per axis of the result: the axis of `self` it keeps, or `None` for a new axis.
        let mut kept: Vec<Option<usize>> = Vec::with_capacity(items.len() + fill);
        let mut out = Vec::with_capacity(kept.capacity());
        let mut axis = 0usize;
        for item in expanded {
            match item {
                IndexItem::Int(i) => self.int_axis(c, &names, axis, i)?,
                IndexItem::Slice { start, stop, step } => {
                    self.slice_axis(c, &names, axis, (start, stop, step))?;
                    out.push(self.shape[axis]);
                }
                IndexItem::NewAxis => {
                    kept.push(None);
                    out.push(D::from(1));
                    continue;
                }
                // Replaced by full slices above.
                IndexItem::Ellipsis => continue,
            }
            kept.push(Some(axis));
            axis += 1;
        }
        self.pick_axes(&kept);
        Ok(out)
    }

    /// Keeps, in order, axis `a` of the fields for `Some(a)` and a new size-1 axis of
    /// stride 0 for `None`.
    fn pick_axes(&mut self, kept: &[Option<usize>]) {
        let (zero, one) = (D::from(0), D::from(1));
        let pick = |x: &[D], new: D| {
            kept.iter()
                .map(|k| k.map_or(new, |a| x[a]))
                .collect::<Vec<_>>()
        };
        let (shape, strides) = (pick(&self.shape, one), pick(&self.strides, zero));
        self.mask = self.mask.as_ref().map(|m| {
            kept.iter()
                .map(|k| k.map_or((zero, one), |a| m[a]))
                .collect()
        });
        self.shape = shape;
        self.strides = strides;
    }

    /// Keeps index `i` of `axis` as an axis of size 1.
    fn int_axis<C: Check<D>>(
        &mut self,
        c: &mut C,
        names: &Names<'_, D>,
        axis: usize,
        i: D,
    ) -> Result<()> {
        let (zero, d) = (D::from(0), self.shape[axis]);
        let from_end = counts_from_end(c, i, &|| format!("index {i} of axis {axis}"))?;
        let idx = if from_end { d + i } else { i };
        let outside = || {
            invalid(
                "index",
                format!(
                    "index {i} is out of bounds for axis {axis} with size {d} of {}",
                    (names.ctx)()
                ),
            )
        };
        let within = || format!("index {i} is within axis {axis}");
        c.require(idx, CmpOp::Ge, zero, within, outside)?;
        c.require(idx, CmpOp::Lt, d, within, outside)?;
        self.keep_from(c, axis, idx, idx + D::from(1));
        Ok(())
    }

    /// Applies the slice `start:stop:step` to `axis`: NumPy's normalisation (a negative
    /// bound counts from the end, then bounds clamp to the axis, to `-1..=d - 1` for a
    /// negative step), a reversal for a negative step, then the step.
    fn slice_axis<C: Check<D>>(
        &mut self,
        c: &mut C,
        names: &Names<'_, D>,
        axis: usize,
        (start, stop, step): (Option<D>, Option<D>, Option<D>),
    ) -> Result<()> {
        let (zero, one) = (D::from(0), D::from(1));
        if C::EXACT && start.is_none() && stop.is_none() && step.is_none() {
            return Ok(());
        }
        let step = step.unwrap_or(one);
        let backward = step_is_negative(c, names, axis, step)?;
        let (d, t) = (self.shape[axis], self.strides[axis]);
        let norm = |c: &mut C, x: D, part: &str| -> Result<(D, bool)> {
            let from_end = counts_from_end(c, x, &|| format!("slice {part} {x} of axis {axis}"))?;
            let v = match (backward, from_end) {
                (false, true) => (d + x).max_of(zero),
                (false, false) => x.min_of(d),
                (true, true) => (d + x).max_of(-one),
                (true, false) => x.min_of(d - one),
            };
            Ok((v, from_end))
        };
        let too_big = || {
            overflow(
                "index",
                format!("stride {t} times step {step} of {}", (names.ctx)()),
            )
        };
        // NumPy's defaults: the whole axis in the direction of the step.
        let (first, last) = if backward { (d - one, -one) } else { (zero, d) };
        let (st, from_end) = start.map_or(Ok((first, false)), |x| norm(c, x, "start"))?;
        let sp = match stop {
            Some(x) => norm(c, x, "stop")?.0,
            None => last,
        };
        if !backward {
            self.keep_from(c, axis, st, sp.max_of(st));
            if let (Some(x), None) = (start, stop) {
                if let Some(n) = d.tail_count(x, from_end) {
                    self.shape[axis] = n;
                }
            }
            return self.step_axis(c, axis, step).ok_or_else(too_big);
        }
        if C::EXACT && c.holds(sp - st, CmpOp::Ge, step) {
            // At most index `st` (none when `st <= sp`): kept forward, so that its
            // stride stays the axis's own.
            let first = st.max_of(zero);
            let end = if c.holds(sp, CmpOp::Lt, st) {
                st + one
            } else {
                first
            };
            self.keep_from(c, axis, first, end);
            return Ok(());
        }
        let empty = C::EXACT && self.shape.iter().any(|&x| c.holds(x, CmpOp::Eq, zero));
        self.reverse_axis(axis, empty).ok_or_else(too_big)?;
        let (fst, fsp) = (d - one - st, d - one - sp);
        self.keep_from(c, axis, fst, fsp.max_of(fst));
        let step = step.try_neg().ok_or_else(too_big)?;
        self.step_axis(c, axis, step).ok_or_else(too_big)
    }

    /// Keeps every `step`-th index of `axis` (`step >= 1`); `None` when an `i64` stride
    /// times `step` leaves `i64`. A step no shorter than the axis keeps at most its
    /// first index, as a unit step would: its stride stays the axis's own (NumPy's
    /// `a[::10**20]` is `a[0:1]`), free of a product that need not fit.
    fn step_axis<C: Check<D>>(&mut self, c: &C, axis: usize, step: D) -> Option<()> {
        let (zero, one) = (D::from(0), D::from(1));
        let len = self.shape[axis];
        if c.holds(len, CmpOp::Le, step) {
            self.keep_range(axis, zero, len.min_of(one), true);
            return Some(());
        }
        if step == one {
            return Some(());
        }
        self.strides[axis] = self.strides[axis].try_mul(step)?;
        self.shape[axis] = len.ceil_div_by(step);
        if let Some(m) = &mut self.mask {
            let (b, e) = m[axis];
            m[axis] = (b.ceil_div_by(step), e.ceil_div_by(step));
        }
        Some(())
    }
}

/// Whether a slice step is negative; its sign must be known (it decides the slice's
/// direction, defaults and clamping), so an unprovable sign is an error.
fn step_is_negative<D: Size, C: Check<D>>(
    c: &C,
    names: &Names<'_, D>,
    axis: usize,
    step: D,
) -> Result<bool> {
    if let Some(s) = step.as_const() {
        if s == 0 {
            return Err(names.error("slice step cannot be zero"));
        }
        return Ok(s < 0);
    }
    if c.holds(step, CmpOp::Ge, D::from(1)) {
        return Ok(false);
    }
    if c.holds(step, CmpOp::Le, D::from(-1)) {
        return Ok(true);
    }
    Err(invalid(
        "index",
        format!(
            "the sign of slice step {step} on axis {axis} is not provable, and it decides the direction of the slice; declare a range or assume {step} >= 1 (or {step} <= -1), for {}",
            (names.ctx)()
        ),
    ))
}
