//! The public [`View`]: shape, strides, offset and mask as symshape expressions.
//!
//! Representation invariants:
//!
//! 1. `strides.len() == shape.len()`, and a mask has one `(b, e)` pair per axis.
//! 2. A view whose fields are all constants satisfies every invariant of
//!    [`ConcreteView`] (it was produced by one), so converting it back never fails.
//!
//! Ops on views whose fields are all constants run on the exact engine in
//! [`crate::concrete`]; an op that meets a symbolic field or argument returns
//! [`Error::Symbolic`] naming the op and the field.

use std::fmt;

use symshape::Expr;

use crate::concrete::{format_offsets, ConcreteView};
use crate::error::{Error, Result};
use crate::index::IndexItem;

/// A strided view with an optional per-axis validity mask.
///
/// Element `idx` is valid when `b[i] <= idx[i] < e[i]` on every axis (or there is no
/// mask), and then lives at buffer offset `offset + sum(idx[i] * strides[i])`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct View {
    shape: Vec<Expr>,
    strides: Vec<Expr>,
    offset: Expr,
    mask: Option<Vec<(Expr, Expr)>>,
}

fn lit(v: i64) -> Expr {
    Expr::from(v)
}

/// The constant values of `args`, or a [`Error::Symbolic`] naming `op` and `what`.
fn consts<E: Into<Expr> + Copy>(
    op: &'static str,
    what: &'static str,
    args: &[E],
) -> Result<Vec<i64>> {
    args.iter().map(|&e| constant(op, what, e.into())).collect()
}

fn const_pairs<E: Into<Expr> + Copy>(
    op: &'static str,
    what: &'static str,
    args: &[(E, E)],
) -> Result<Vec<(i64, i64)>> {
    args.iter()
        .map(|&(a, b)| Ok((constant(op, what, a.into())?, constant(op, what, b.into())?)))
        .collect()
}

fn constant(op: &'static str, what: &'static str, e: Expr) -> Result<i64> {
    e.as_i64().ok_or_else(|| Error::Symbolic {
        op,
        what,
        expr: e.to_string(),
    })
}

fn fmt_exprs(f: &mut fmt::Formatter<'_>, v: &[Expr]) -> fmt::Result {
    write!(f, "[")?;
    for (i, e) in v.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{e}")?;
    }
    write!(f, "]")
}

impl From<&ConcreteView> for View {
    fn from(v: &ConcreteView) -> View {
        View {
            shape: v.shape().iter().map(|&d| lit(d)).collect(),
            strides: v.strides().iter().map(|&d| lit(d)).collect(),
            offset: lit(v.offset()),
            mask: v
                .mask()
                .map(|m| m.iter().map(|&(b, e)| (lit(b), lit(e))).collect()),
        }
    }
}

impl From<ConcreteView> for View {
    fn from(v: ConcreteView) -> View {
        View::from(&v)
    }
}

impl View {
    /// Creates a view, validating every field (see [`ConcreteView::create`]).
    ///
    /// `strides` defaults to row-major strides; a zero-size view gets offset 0 and no
    /// mask; a mask covering everything is dropped.
    ///
    /// # Errors
    /// As [`ConcreteView::create`], and [`Error::Symbolic`] for a symbolic field.
    pub fn create<E: Into<Expr> + Copy>(
        shape: &[E],
        strides: Option<&[E]>,
        offset: E,
        mask: Option<&[(E, E)]>,
    ) -> Result<View> {
        const OP: &str = "create";
        let shape = consts(OP, "shape", shape)?;
        let strides = strides.map(|s| consts(OP, "strides", s)).transpose()?;
        let offset = constant(OP, "offset", offset.into())?;
        let mask = mask.map(|m| const_pairs(OP, "mask", m)).transpose()?;
        ConcreteView::create(&shape, strides.as_deref(), offset, mask.as_deref()).map(View::from)
    }

    /// A row-major view of `shape` at offset 0.
    ///
    /// # Errors
    /// As [`View::create`].
    pub fn contiguous<E: Into<Expr> + Copy>(shape: &[E]) -> Result<View> {
        let shape = consts("contiguous", "shape", shape)?;
        ConcreteView::contiguous(&shape).map(View::from)
    }

    /// The exact engine's form of this view, or [`Error::Symbolic`] naming `op`.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a field is symbolic.
    pub fn to_concrete(&self, op: &'static str) -> Result<ConcreteView> {
        let shape = consts(op, "shape", &self.shape)?;
        let strides = consts(op, "strides", &self.strides)?;
        let offset = constant(op, "offset", self.offset)?;
        let mask = self
            .mask
            .as_ref()
            .map(|m| const_pairs(op, "mask", m))
            .transpose()?;
        ConcreteView::create(&shape, Some(&strides), offset, mask.as_deref())
    }

    fn run(
        &self,
        op: &'static str,
        f: impl FnOnce(&ConcreteView) -> Result<ConcreteView>,
    ) -> Result<View> {
        f(&self.to_concrete(op)?).map(View::from)
    }

    /// The sizes of the axes.
    pub fn shape(&self) -> &[Expr] {
        &self.shape
    }

    /// The stride of every axis (also for masked views).
    pub fn strides(&self) -> &[Expr] {
        &self.strides
    }

    /// The buffer offset of index `[0, ..., 0]`, extrapolated when it is masked.
    pub fn offset(&self) -> Expr {
        self.offset
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements, valid or not, as an expression (1 for a scalar).
    pub fn numel(&self) -> Expr {
        self.shape.iter().copied().product()
    }

    /// The size of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis >= ndim`.
    pub fn dim(&self, axis: usize) -> Result<Expr> {
        self.shape
            .get(axis)
            .copied()
            .ok_or_else(|| self.bad_axis("dim", axis))
    }

    /// The stride of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis >= ndim`.
    pub fn stride(&self, axis: usize) -> Result<Expr> {
        self.strides
            .get(axis)
            .copied()
            .ok_or_else(|| self.bad_axis("stride", axis))
    }

    fn bad_axis(&self, op: &'static str, axis: usize) -> Error {
        crate::error::invalid(
            op,
            format!(
                "axis {axis} is out of range for {} of rank {}",
                self.ctx(),
                self.ndim()
            ),
        )
    }

    /// `view [2, 3] with strides [3, 1]`, as error messages name a view.
    fn ctx(&self) -> String {
        let list = |v: &[Expr]| {
            let parts: Vec<String> = v.iter().map(ToString::to_string).collect();
            format!("[{}]", parts.join(", "))
        };
        format!(
            "view {} with strides {}",
            list(&self.shape),
            list(&self.strides)
        )
    }

    /// The per-axis valid ranges `[b, e)`, or `None` when every element is valid.
    pub fn mask(&self) -> Option<&[(Expr, Expr)]> {
        self.mask.as_deref()
    }

    /// Whether the fields are all constants.
    pub fn is_concrete(&self) -> bool {
        self.to_concrete("is_concrete").is_ok()
    }

    /// Whether the view is row-major at offset 0 without a mask (strides of size-1
    /// axes ignored; zero-size views are contiguous). False when a field is symbolic.
    pub fn is_c_contiguous(&self) -> bool {
        self.to_concrete("is_c_contiguous")
            .is_ok_and(|v| v.is_c_contiguous())
    }

    /// The strides when the view has no mask.
    pub fn strides_opt(&self) -> Option<&[Expr]> {
        match self.mask {
            None => Some(&self.strides),
            Some(_) => None,
        }
    }

    /// Whether [`View::strides_opt`] is `Some`.
    pub fn can_get_strides(&self) -> bool {
        self.mask.is_none()
    }

    /// Whether the view is concrete and a plain strided layout.
    pub fn is_materializable(&self) -> bool {
        self.can_get_strides() && self.is_concrete()
    }

    /// `offset + sum(idx[i] * strides[i])`, without bounds or mask checks.
    ///
    /// # Errors
    /// As [`ConcreteView::linear_index`], and [`Error::Symbolic`].
    pub fn linear_index(&self, idx: &[i64]) -> Result<i64> {
        self.to_concrete("linear_index")?.linear_index(idx)
    }

    /// Whether `idx` lies inside the shape and the mask (false on a rank mismatch or
    /// when a field is symbolic).
    pub fn is_valid(&self, idx: &[i64]) -> bool {
        self.to_concrete("is_valid").is_ok_and(|v| v.is_valid(idx))
    }

    /// The buffer offset of element `idx`, `None` when it is masked out.
    ///
    /// # Errors
    /// As [`ConcreteView::offset_of`], and [`Error::Symbolic`].
    pub fn offset_of(&self, idx: &[i64]) -> Result<Option<i64>> {
        self.to_concrete("offset_of")?.offset_of(idx)
    }

    /// The offset of every element in row-major order, `None` for masked-out ones.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a field is symbolic.
    pub fn offsets(&self) -> Result<Vec<Option<i64>>> {
        Ok(self.to_concrete("offsets")?.offsets())
    }

    /// The `offsets` line: `offsets [2, 2]: 0 1 _ 3`.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a field is symbolic.
    pub fn offsets_line(&self) -> Result<String> {
        let v = self.to_concrete("offsets")?;
        Ok(format_offsets(v.shape(), &v.offsets()))
    }

    /// The canonical form: views with the same element mapping canonicalise to the
    /// same view (see [`ConcreteView::canonical`]).
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a field is symbolic.
    pub fn canonical(&self) -> Result<View> {
        self.run("canonical", |v| Ok(v.canonical()))
    }

    /// Reinterprets the elements in row-major order; succeeds iff the result is one view.
    ///
    /// # Errors
    /// As [`ConcreteView::reshape`], and [`Error::Symbolic`].
    pub fn reshape<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<View> {
        let s = consts("reshape", "shape", shape)?;
        self.run("reshape", |v| v.reshape(&s))
    }

    /// Broadcasts size-1 axes (see [`ConcreteView::expand`]).
    ///
    /// # Errors
    /// As [`ConcreteView::expand`], and [`Error::Symbolic`].
    pub fn expand<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<View> {
        let s = consts("expand", "shape", shape)?;
        self.run("expand", |v| v.expand(&s))
    }

    /// Reorders axes: axis `i` of the result is axis `axes[i]`.
    ///
    /// # Errors
    /// As [`ConcreteView::permute`], and [`Error::Symbolic`].
    pub fn permute(&self, axes: &[usize]) -> Result<View> {
        self.run("permute", |v| v.permute(axes))
    }

    /// Restricts every axis to `[start, end)` (see [`ConcreteView::shrink`]).
    ///
    /// # Errors
    /// As [`ConcreteView::shrink`], and [`Error::Symbolic`].
    pub fn shrink<E: Into<Expr> + Copy>(&self, bounds: &[(E, E)]) -> Result<View> {
        let b = const_pairs("shrink", "bounds", bounds)?;
        self.run("shrink", |v| v.shrink(&b))
    }

    /// Adds masked-out padding `(before, after)` on every axis.
    ///
    /// # Errors
    /// As [`ConcreteView::pad`], and [`Error::Symbolic`].
    pub fn pad<E: Into<Expr> + Copy>(&self, padding: &[(E, E)]) -> Result<View> {
        let p = const_pairs("pad", "padding", padding)?;
        self.run("pad", |v| v.pad(&p))
    }

    /// Reverses the axes whose flag is set.
    ///
    /// # Errors
    /// As [`ConcreteView::flip`], and [`Error::Symbolic`].
    pub fn flip(&self, flags: &[bool]) -> Result<View> {
        self.run("flip", |v| v.flip(flags))
    }

    /// Reverses the listed axes.
    ///
    /// # Errors
    /// As [`ConcreteView::flip_axes`], and [`Error::Symbolic`].
    pub fn flip_axes(&self, axes: &[usize]) -> Result<View> {
        self.run("flip", |v| v.flip_axes(axes))
    }

    /// NumPy basic indexing (see [`ConcreteView::index`]).
    ///
    /// # Errors
    /// As [`ConcreteView::index`], and [`Error::Symbolic`].
    pub fn index(&self, items: &[IndexItem]) -> Result<View> {
        self.run("index", |v| v.index(items))
    }

    /// Removes the listed size-1 axes, or all of them for `None`.
    ///
    /// # Errors
    /// As [`ConcreteView::squeeze`], and [`Error::Symbolic`].
    pub fn squeeze(&self, axes: Option<&[usize]>) -> Result<View> {
        self.run("squeeze", |v| v.squeeze(axes))
    }

    /// Inserts a size-1 axis at `axis`.
    ///
    /// # Errors
    /// As [`ConcreteView::unsqueeze`], and [`Error::Symbolic`].
    pub fn unsqueeze(&self, axis: usize) -> Result<View> {
        self.run("unsqueeze", |v| v.unsqueeze(axis))
    }

    /// Swaps two axes.
    ///
    /// # Errors
    /// As [`ConcreteView::swapaxes`], and [`Error::Symbolic`].
    pub fn swapaxes(&self, a: usize, b: usize) -> Result<View> {
        self.run("swapaxes", |v| v.swapaxes(a, b))
    }

    /// Same as [`View::swapaxes`].
    ///
    /// # Errors
    /// As [`View::swapaxes`].
    pub fn transpose(&self, a: usize, b: usize) -> Result<View> {
        self.run("transpose", |v| v.transpose(a, b))
    }

    /// Moves axis `src` to position `dst`.
    ///
    /// # Errors
    /// As [`ConcreteView::movedim`], and [`Error::Symbolic`].
    pub fn movedim(&self, src: usize, dst: usize) -> Result<View> {
        self.run("movedim", |v| v.movedim(src, dst))
    }

    /// NumPy's `broadcast_to`.
    ///
    /// # Errors
    /// As [`ConcreteView::broadcast_to`], and [`Error::Symbolic`].
    pub fn broadcast_to<E: Into<Expr> + Copy>(&self, shape: &[E]) -> Result<View> {
        let s = consts("broadcast_to", "shape", shape)?;
        self.run("broadcast_to", |v| v.broadcast_to(&s))
    }

    /// Restricts `axis` to `length` indices from `start`.
    ///
    /// # Errors
    /// As [`ConcreteView::narrow`], and [`Error::Symbolic`].
    pub fn narrow(
        &self,
        axis: usize,
        start: impl Into<Expr>,
        length: impl Into<Expr>,
    ) -> Result<View> {
        let s = constant("narrow", "start", start.into())?;
        let l = constant("narrow", "length", length.into())?;
        self.run("narrow", |v| v.narrow(axis, s, l))
    }

    fn run_many(
        &self,
        op: &'static str,
        f: impl FnOnce(&ConcreteView) -> Result<Vec<ConcreteView>>,
    ) -> Result<Vec<View>> {
        Ok(f(&self.to_concrete(op)?)?
            .into_iter()
            .map(View::from)
            .collect())
    }

    /// Splits `axis` into pieces of `size` indices (the last may be smaller).
    ///
    /// # Errors
    /// As [`ConcreteView::split`], and [`Error::Symbolic`].
    pub fn split(&self, axis: usize, size: impl Into<Expr>) -> Result<Vec<View>> {
        let s = constant("split", "size", size.into())?;
        self.run_many("split", |v| v.split(axis, s))
    }

    /// Splits `axis` into consecutive pieces of the given sizes.
    ///
    /// # Errors
    /// As [`ConcreteView::split_sizes`], and [`Error::Symbolic`].
    pub fn split_sizes<E: Into<Expr> + Copy>(&self, axis: usize, sizes: &[E]) -> Result<Vec<View>> {
        let s = consts("split_sizes", "sizes", sizes)?;
        self.run_many("split_sizes", |v| v.split_sizes(axis, &s))
    }

    /// At most `n` pieces of `ceil(dim / n)` indices.
    ///
    /// # Errors
    /// As [`ConcreteView::chunk`], and [`Error::Symbolic`].
    pub fn chunk(&self, axis: usize, n: i64) -> Result<Vec<View>> {
        self.run_many("chunk", |v| v.chunk(axis, n))
    }

    /// One view per index of `axis`, with the axis removed.
    ///
    /// # Errors
    /// As [`ConcreteView::unbind`], and [`Error::Symbolic`].
    pub fn unbind(&self, axis: usize) -> Result<Vec<View>> {
        self.run_many("unbind", |v| v.unbind(axis))
    }

    /// Sliding windows of `size` every `step` along `axis`, appended as the last axis.
    ///
    /// # Errors
    /// As [`ConcreteView::unfold`], and [`Error::Symbolic`].
    pub fn unfold(
        &self,
        axis: usize,
        size: impl Into<Expr>,
        step: impl Into<Expr>,
    ) -> Result<View> {
        let s = constant("unfold", "size", size.into())?;
        let t = constant("unfold", "step", step.into())?;
        self.run("unfold", |v| v.unfold(axis, s, t))
    }

    /// The diagonal of axes `a` and `b`, shifted by `offset`, appended last.
    ///
    /// # Errors
    /// As [`ConcreteView::diagonal`], and [`Error::Symbolic`].
    pub fn diagonal(&self, offset: i64, a: usize, b: usize) -> Result<View> {
        self.run("diagonal", |v| v.diagonal(offset, a, b))
    }

    /// Merges axes `start..=end` into one.
    ///
    /// # Errors
    /// As [`ConcreteView::flatten`], and [`Error::Symbolic`].
    pub fn flatten(&self, start: usize, end: usize) -> Result<View> {
        self.run("flatten", |v| v.flatten(start, end))
    }

    /// Splits `axis` into `sizes`.
    ///
    /// # Errors
    /// As [`ConcreteView::unflatten`], and [`Error::Symbolic`].
    pub fn unflatten<E: Into<Expr> + Copy>(&self, axis: usize, sizes: &[E]) -> Result<View> {
        let s = consts("unflatten", "sizes", sizes)?;
        self.run("unflatten", |v| v.unflatten(axis, &s))
    }

    /// NumPy's `as_strided`, checked against a buffer of `buffer_len` elements.
    ///
    /// # Errors
    /// As [`ConcreteView::as_strided`].
    pub fn as_strided(
        shape: &[i64],
        strides: &[i64],
        offset: i64,
        buffer_len: i64,
    ) -> Result<View> {
        ConcreteView::as_strided(shape, strides, offset, buffer_len).map(View::from)
    }
}

impl fmt::Display for View {
    /// `view shape=[2, 3] strides=[3, 1] offset=0 mask=none`, or `mask=[(0, 2), (1, 3)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "view shape=")?;
        fmt_exprs(f, &self.shape)?;
        write!(f, " strides=")?;
        fmt_exprs(f, &self.strides)?;
        write!(f, " offset={} mask=", self.offset)?;
        match &self.mask {
            None => write!(f, "none"),
            Some(m) => {
                write!(f, "[")?;
                for (i, (b, e)) in m.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "({b}, {e})")?;
                }
                write!(f, "]")
            }
        }
    }
}
