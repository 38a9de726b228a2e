//! The memory models of the references: PyTorch's `view(dtype)` (element-size
//! reinterpretation) and complex views (`view_as_real`, `view_as_complex`, `real`,
//! `imag`), NumPy's byte strides and offsets, NumPy's contiguity flags and NumPy's
//! `ravel` (the flags and byte rules written once in `layout.rs`).

use std::fmt;

use super::{write_strided, ConcreteStack, ConcreteView};
use crate::error::{invalid, overflow, refuse_mask, Result};
use crate::layout;
use crate::lower_op::Exact;

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

/// What the complex views read a view as.
const COMPLEX: &str = "a strided complex tensor";

impl ConcreteView {
    /// The mask refusal of the ops that read the view as `what` (a strided array in
    /// bytes, a strided complex tensor), which has no mask.
    fn unmasked(&self, op: &'static str, what: &str) -> Result<()> {
        refuse_mask(op, self.mask().is_some(), self.ctx(), what)
    }

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
        let (c_contiguous, f_contiguous) = layout::flags(
            self.shape(),
            self.strides(),
            self.numel(),
            self.mask().is_some(),
            &|| self.ctx(),
        )?;
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
        let fields = (self.shape(), self.strides(), self.offset());
        layout::byte_layout(fields, self.mask().is_some(), itemsize, &|| self.ctx())
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

    /// PyTorch's `view_as_real`: a view of complex elements (two reals each) read as
    /// reals: an axis of size 2 and stride 1 is appended (real part, then imaginary
    /// part), the other strides and the offset are doubled, so offsets are then
    /// counted in reals. A view of rank 0 gives shape `[2]`.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for a masked view;
    /// [`Error::Overflow`](crate::Error::Overflow) when a doubled field leaves `i64`.
    pub(crate) fn view_as_real(&self) -> Result<Self> {
        const OP: &str = "view_as_real";
        let (mut strides, offset) = self.in_reals(OP)?;
        strides.push(1);
        let mut shape = self.shape().to_vec();
        shape.push(2);
        Self::build(OP, shape, strides, offset, None)
    }

    /// The strides and offset of the complex view in reals (doubled), for `op`, which
    /// reads a complex view as reals: no mask, nothing past `i64`.
    fn in_reals(&self, op: &'static str) -> Result<(Vec<i64>, i64)> {
        self.unmasked(op, COMPLEX)?;
        let double = |x: i64, what: &str| {
            x.checked_mul(2)
                .ok_or_else(|| overflow(op, format!("{what} {x} doubled, of {}", self.ctx())))
        };
        let strides = self
            .strides()
            .iter()
            .map(|&t| double(t, "stride"))
            .collect::<Result<Vec<_>>>()?;
        Ok((strides, double(self.offset(), "offset")?))
    }

    /// PyTorch's `view_as_complex`, the inverse of [`ConcreteView::view_as_real`]:
    /// pairs of reals read as complex elements. PyTorch's rules: rank at least 1,
    /// the last axis of size 2 and stride 1, every other stride and the offset even;
    /// the last axis is removed and the rest halved. An axis of size 1 is exempt
    /// from the even-stride rule (its stride is never used; an odd one becomes 0),
    /// as in [`ConcreteView::reinterpret`].
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) with PyTorch's reason, or for a
    /// masked view.
    pub(crate) fn view_as_complex(&self) -> Result<Self> {
        const OP: &str = "view_as_complex";
        self.unmasked(OP, COMPLEX)?;
        let fail = |why: String| Err(invalid(OP, format!("{why}, in {}", self.ctx())));
        let Some(last) = self.ndim().checked_sub(1) else {
            return fail("Input tensor must have one or more dimensions".to_string());
        };
        let (d, t) = (self.shape()[last], self.strides()[last]);
        if d != 2 {
            return fail(format!(
                "Tensor must have a last dimension of size 2, not {d}"
            ));
        }
        if t != 1 {
            return fail(format!(
                "Tensor must have a last dimension with stride 1, not {t}"
            ));
        }
        let mut strides = Vec::with_capacity(last);
        for (a, (&d, &t)) in self.shape()[..last].iter().zip(self.strides()).enumerate() {
            if t % 2 == 0 {
                strides.push(t / 2);
            } else if d == 1 {
                strides.push(0);
            } else {
                return fail(format!(
                    "Tensor must have a stride divisible by 2 for all but last dimension; axis {a} has stride {t}"
                ));
            }
        }
        if self.offset() % 2 != 0 {
            return fail(format!(
                "Tensor must have a storage_offset divisible by 2, not {}",
                self.offset()
            ));
        }
        let shape = self.shape()[..last].to_vec();
        Self::build(OP, shape, strides, self.offset() / 2, None)
    }

    /// PyTorch's `real` of a complex view: [`ConcreteView::view_as_real`], then index
    /// 0 of the pair axis (a view of the real parts, in reals).
    ///
    /// # Errors
    /// As [`ConcreteView::view_as_real`].
    pub(crate) fn real(&self) -> Result<Self> {
        self.complex_part(0)
    }

    /// PyTorch's `imag` of a complex view: [`ConcreteView::view_as_real`], then index
    /// 1 of the pair axis (a view of the imaginary parts, in reals).
    ///
    /// # Errors
    /// As [`ConcreteView::view_as_real`].
    pub(crate) fn imag(&self) -> Result<Self> {
        self.complex_part(1)
    }

    /// `view_as_real` then index `index` of the pair axis, built at once: the pair axis
    /// would be one axis past [`MAX_RANK`](crate::MAX_RANK) on a view at the limit.
    fn complex_part(&self, index: i64) -> Result<Self> {
        let op = if index == 0 { "real" } else { "imag" };
        let (strides, offset) = self.in_reals(op)?;
        let offset = offset
            .checked_add(index)
            .ok_or_else(|| overflow(op, format!("offset {offset} + {index} of {}", self.ctx())))?;
        Self::build(op, self.shape().to_vec(), strides, offset, None)
    }

    /// PyTorch's `view(dtype)`: reinterprets elements of `from` bytes as elements
    /// of `to` bytes. With equal sizes nothing changes. Otherwise the view must have
    /// at least one axis and no mask, the larger size must be a multiple of the
    /// smaller, and the last axis must have stride 1; with the ratio `r`:
    ///
    /// - smaller elements (`from = r * to`): the last axis grows `r` times, the
    ///   other strides and the offset are multiplied by `r`;
    /// - larger elements (`to = r * from`): the last axis's size, the other strides
    ///   and the offset must be multiples of `r`, and are divided by it.
    ///
    /// An axis of size 1 is exempt from the stride conditions (its stride is never
    /// used; this crate gives such axes stride 0 where PyTorch gives them a
    /// product of sizes); a non-multiple stride there becomes 0.
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) naming the broken rule;
    /// [`Error::Overflow`](crate::Error::Overflow) when a field leaves `i64`.
    pub(crate) fn reinterpret(&self, from: usize, to: usize) -> Result<Self> {
        const OP: &str = "reinterpret";
        let ctx = || self.ctx();
        if from == 0 || to == 0 {
            return Err(invalid(
                OP,
                format!(
                    "element sizes {from} and {to} bytes must be positive, for {}",
                    ctx()
                ),
            ));
        }
        if from == to {
            return Ok(self.clone());
        }
        let what = format!("{from}-byte elements as {to}-byte elements");
        self.unmasked(OP, layout::BYTES)?;
        let Some(last) = self.ndim().checked_sub(1) else {
            return Err(invalid(
                OP,
                format!("cannot view {what}: a view of rank 0 cannot be reinterpreted when the element sizes differ ({})", ctx()),
            ));
        };
        if from % to != 0 && to % from != 0 {
            return Err(invalid(
                OP,
                format!(
                    "cannot view {what}: neither element size divides the other, for {}",
                    ctx()
                ),
            ));
        }
        let (d, t) = (self.shape()[last], self.strides()[last]);
        if d != 1 && t != 1 {
            return Err(invalid(
                OP,
                format!(
                    "cannot view {what}: the last axis must have stride 1 when the element sizes differ, but it has stride {t} in {}",
                    ctx()
                ),
            ));
        }
        let mut shape = self.shape().to_vec();
        let mut strides = self.strides().to_vec();
        let offset;
        // The real ratio, which may exceed i64 (not the product or quotient, which fit).
        let ratio = |x: usize| i128::try_from(x).unwrap_or(i128::MAX);
        if from > to {
            let r = ratio(from / to);
            let mul = |x: i64, what: &str| {
                let p = i128::from(x).checked_mul(r);
                p.and_then(|p| i64::try_from(p).ok()).ok_or_else(|| {
                    overflow(OP, format!("{what} {x} times the ratio {r} of {}", ctx()))
                })
            };
            shape[last] = mul(d, "size of the last axis")?;
            for x in &mut strides[..last] {
                *x = mul(*x, "stride")?;
            }
            offset = mul(self.offset(), "offset")?;
        } else {
            let r = ratio(to / from);
            let div = |x: i64, what: String| {
                exact_div(x, r).ok_or_else(|| {
                    invalid(
                        OP,
                        format!(
                            "cannot view {what_all}: the {what} {x} is not divisible by the ratio {r} of the element sizes, in {}",
                            ctx(),
                            what_all = what_pair(from, to)
                        ),
                    )
                })
            };
            shape[last] = div(d, "size of the last axis".to_string())?;
            for (a, x) in strides[..last].iter_mut().enumerate() {
                *x = if self.shape()[a] == 1 && exact_div(*x, r).is_none() {
                    0
                } else {
                    div(*x, format!("stride of axis {a}"))?
                };
            }
            offset = div(self.offset(), "offset".to_string())?;
        }
        strides[last] = 1;
        Self::create(&shape, Some(&strides), offset, None).map_err(|e| match e {
            crate::Error::Overflow { detail, .. } => overflow(OP, detail),
            crate::Error::Invalid { detail, .. } => invalid(OP, detail),
            other => other,
        })
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

fn what_pair(from: usize, to: usize) -> String {
    format!("{from}-byte elements as {to}-byte elements")
}

/// `x / d` when `d` divides `x` (`d >= 1`).
fn exact_div(x: i64, d: i128) -> Option<i64> {
    let x = i128::from(x);
    (x % d == 0).then(|| i64::try_from(x / d).ok()).flatten()
}
