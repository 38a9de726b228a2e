//! The memory models of the references on the exact engine: NumPy's byte strides and
//! offsets, NumPy's contiguity flags and NumPy's `ravel` (the flags and byte rules
//! written once in `layout.rs`). PyTorch's `view(dtype)` and
//! the complex views are written once for both engines (`fields/elements.rs`).

use std::fmt;

use super::{write_strided, ConcreteStack, ConcreteView};
use crate::check::Exact;
use crate::engine;
use crate::error::{invalid, overflow, Result};
use crate::layout;

/// NumPy's `C_CONTIGUOUS` and `F_CONTIGUOUS` flags of a view
/// ([`ConcreteView::numpy_flags`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub struct Flags {
    /// Row-major: strides of the axes that are not of size 1 are row-major.
    pub c_contiguous: bool,
    /// Column-major: the same from the first axis.
    pub f_contiguous: bool,
}

impl fmt::Display for Flags {
    /// `flags: c_contiguous=true f_contiguous=false`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "flags: c_contiguous={} f_contiguous={}",
            self.c_contiguous, self.f_contiguous
        )
    }
}

/// A view's layout in bytes, as NumPy stores it: `i64` fields from
/// [`ConcreteView::byte_layout`], expressions from
/// [`View::byte_layout`](crate::View::byte_layout).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub struct ByteLayout<T = i64> {
    /// The sizes, unchanged.
    pub shape: Vec<T>,
    /// The strides in bytes.
    pub strides: Vec<T>,
    /// The offset of index `[0, ..., 0]` in bytes.
    pub offset: T,
    /// Bytes per element.
    pub itemsize: i64,
}

impl<T: fmt::Display> fmt::Display for ByteLayout<T> {
    /// `bytes shape=[2, 3] strides=[12, 4] offset=8`, or with expressions
    /// `bytes shape=[n, 4] strides=[16, 4] offset=0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_strided(f, "bytes", &self.shape, &self.strides, &self.offset)
    }
}

/// NumPy's `ravel` of a view ([`ConcreteView::ravel`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub enum Raveled {
    /// The view is C-contiguous: its elements flattened as one view of the same buffer.
    View(ConcreteView),
    /// A copy: the view with a row-major view of `[numel]` stacked on top, which the
    /// kernels materialize into a new buffer.
    Copy(ConcreteStack),
}

impl Raveled {
    /// The result as a stack: one level for a view, two for a copy.
    #[must_use]
    pub fn into_stack(self) -> ConcreteStack {
        match self {
            Raveled::View(v) => ConcreteStack::from(v),
            Raveled::Copy(s) => s,
        }
    }
}

pub(crate) fn positive_itemsize(op: &'static str, what: &str, itemsize: i64) -> Result<()> {
    if itemsize >= 1 {
        return Ok(());
    }
    Err(invalid(
        op,
        format!("{what} {itemsize} must be at least 1 byte"),
    ))
}

impl ConcreteView {
    /// NumPy's contiguity flags, with NumPy's exact rules: a view with an axis of
    /// size 0 is both C- and F-contiguous; otherwise the strides of the axes that
    /// are not of size 1 must be those of a dense row-major (C) or column-major (F)
    /// layout. The offset does not matter (NumPy's data pointer may point anywhere
    /// in its buffer), unlike [`ConcreteView::is_c_contiguous`]. Strides are in
    /// elements, so the item size does not change the answer.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for a masked view.
    pub fn numpy_flags(&self) -> Result<Flags> {
        let (c_contiguous, f_contiguous) = engine::numpy_flags(self)?;
        Ok(Flags {
            c_contiguous,
            f_contiguous,
        })
    }

    /// NumPy's `ravel` (order C): the elements in row-major order as one axis. A view
    /// when NumPy's `C_CONTIGUOUS` flag holds ([`ConcreteView::numpy_flags`]: an
    /// empty view, or row-major strides on the axes not of size 1), which makes it the
    /// reshape to `[numel]`; otherwise, masked views included, a copy: the view with a
    /// row-major `[numel]` view stacked on top. NumPy copies in exactly these cases,
    /// even where one strided view could express the result (`x[::2]`), which is
    /// what [`ViewOps::reshape`](crate::ViewOps::reshape) to `[numel]` gives.
    ///
    /// # Errors
    /// None in practice (both results are checked as any reshape or stack).
    pub fn ravel(&self) -> Result<Raveled> {
        let flat = [self.numel()];
        if self.mask().is_none() && self.numpy_flags()?.c_contiguous {
            return Ok(Raveled::View(self.reshape(&flat)?));
        }
        let top = ConcreteView::contiguous(&flat)?;
        Ok(Raveled::Copy(ConcreteStack::unmerged(vec![
            self.clone(),
            top,
        ])?))
    }

    /// The layout in bytes for elements of `itemsize` bytes: strides and offset
    /// multiplied by it (NumPy's `strides` and the data pointer's distance from
    /// the buffer's start).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for a masked view or an item
    /// size below 1; [`Error::Overflow`](crate::Error::Overflow) when a byte value
    /// leaves `i64`.
    pub fn byte_layout(&self, itemsize: i64) -> Result<ByteLayout> {
        engine::byte_layout(self, itemsize)
    }

    /// A view from NumPy's byte strides and a byte offset for elements of
    /// `itemsize` bytes: every stride and the offset must be a multiple of the item
    /// size (NumPy allows unaligned strides; element strides cannot express them).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for an item size below 1 or a value
    /// that is not a multiple of it; as [`ConcreteView::create`] otherwise.
    pub fn from_byte_strides(
        shape: &[i64],
        byte_strides: &[i64],
        byte_offset: i64,
        itemsize: i64,
    ) -> Result<Self> {
        let (strides, offset, _) =
            layout::from_byte_strides(shape, byte_strides, byte_offset, itemsize, |_| Exact)?;
        Self::create(shape, Some(&strides), offset, None)
    }
}

/// `e` reported under `op` (an op built on another names itself).
pub(crate) fn rename_op(e: crate::Error, op: &'static str) -> crate::Error {
    match e {
        crate::Error::Invalid { detail, .. } => invalid(op, detail),
        crate::Error::Overflow { detail, .. } => overflow(op, detail),
        other => other,
    }
}
