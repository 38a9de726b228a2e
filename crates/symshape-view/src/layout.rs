//! NumPy's memory-model rules written once over the size type for both engines: the
//! contiguity flags (a `Truth`: a `bool` on `i64`, a `Cond` the symbolic engine proves),
//! the layout in bytes and the element fields of byte strides (divisibility decided by a
//! [`Check`]: at once on `i64`, proven, refuted or kept as a guard on `Expr`).

use symshape::CmpOp;

use crate::check::Check;
use crate::concrete::{positive_itemsize, ByteLayout};
use crate::dim::{Size, Truth};
use crate::error::{fmt_list, invalid, overflow, refuse_mask, Result};

/// What the memory-model queries and `reinterpret` read a view as.
pub(crate) const BYTES: &str = "a strided array in bytes";

/// NumPy's rule for `C_CONTIGUOUS` (`c_order`) or `F_CONTIGUOUS` of an unmasked view of
/// `numel` elements: it is empty, or every axis not of size 1 has the stride of a dense
/// row-major (column-major) layout. The offset does not matter.
pub(crate) fn dense<D: Size>(shape: &[D], strides: &[D], numel: D, c_order: bool) -> D::Truth {
    let one = D::from(1);
    let mut expect = one;
    let n = shape.len();
    // Innermost axis first: the last for C order, the first for F order.
    let axes = (0..n).map(|k| if c_order { n - 1 - k } else { k });
    let axes = D::Truth::all(axes.map(|a| {
        let (d, t) = (shape[a], strides[a]);
        let ok = d.is(CmpOp::Eq, one).or(t.is(CmpOp::Eq, expect));
        // Past `i64` only after an axis of size 0 (invariant 2), where the view is
        // empty and the rule holds whatever follows.
        expect = expect.try_mul(d).unwrap_or(expect);
        ok
    }));
    numel.is(CmpOp::Eq, D::from(0)).or(axes)
}

/// The layout in bytes for elements of `itemsize` bytes: strides and offset times it.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) for an item size below 1 or a masked view;
/// [`Error::Overflow`](crate::Error::Overflow) when an `i64` byte value leaves `i64`;
/// [`Error::Symshape`](crate::Error::Symshape) when an expression exceeds the budgets.
pub(crate) fn byte_layout<D: Size>(
    (shape, strides, offset): (&[D], &[D], D),
    masked: bool,
    itemsize: i64,
    ctx: &dyn Fn() -> String,
) -> Result<ByteLayout<D>> {
    positive_itemsize("bytes", "item size", itemsize)?;
    if masked {
        return Err(refuse_mask("bytes", ctx(), BYTES));
    }
    let scale = |x: D, what: &str| -> Result<D> {
        let bytes = x.try_mul(D::from(itemsize)).ok_or_else(|| {
            overflow(
                "bytes",
                format!("{what} {x} times item size {itemsize} of {}", ctx()),
            )
        })?;
        Ok(bytes.checked()?)
    };
    let strides = strides
        .iter()
        .map(|&t| scale(t, "stride"))
        .collect::<Result<Vec<_>>>()?;
    Ok(ByteLayout {
        shape: shape.to_vec(),
        strides,
        offset: scale(offset, "offset")?,
        itemsize,
    })
}

/// The element strides and offset of byte ones for elements of `itemsize` bytes, each a
/// multiple of it as the checker `check` makes from the arguments' text decides.
///
/// # Errors
/// [`Error::Invalid`](crate::Error::Invalid) for an item size below 1, strides of another
/// rank than the shape, or an `i64` value that is not a multiple of the item size; a
/// refuted `Expr` one is the checker's error.
pub(crate) fn from_byte_strides<D: Size, C: Check<D>>(
    shape: &[D],
    byte_strides: &[D],
    byte_offset: D,
    itemsize: i64,
    check: impl FnOnce(String) -> C,
) -> Result<(Vec<D>, D, C)> {
    const OP: &str = "byte_strides";
    positive_itemsize(OP, "item size", itemsize)?;
    let fields = format!(
        "shape {}, byte strides {}, byte offset {byte_offset}",
        fmt_list(shape),
        fmt_list(byte_strides),
    );
    if shape.len() != byte_strides.len() {
        return Err(invalid(
            OP,
            format!(
                "{} byte strides for a shape of rank {} ({fields})",
                byte_strides.len(),
                shape.len()
            ),
        ));
    }
    let mut c = check(fields.clone());
    let (zero, size) = (D::from(0), itemsize);
    // `axis` is `None` for the byte offset.
    let mut whole = |x: D, axis: Option<usize>| -> Result<D> {
        let (q, r) = x.div_mod(size);
        c.require(
            r,
            CmpOp::Eq,
            zero,
            || match axis {
                Some(a) => {
                    format!("the byte stride of axis {a} is a multiple of the item size {size}")
                }
                None => format!("the byte offset is a multiple of the item size {size}"),
            },
            || {
                let what = match axis {
                    Some(a) => format!("byte stride {x} of axis {a}"),
                    None => format!("byte offset {x}"),
                };
                invalid(
                    OP,
                    format!("{what} is not a multiple of the item size {size} ({fields})"),
                )
            },
        )?;
        Ok(q)
    };
    let strides = byte_strides
        .iter()
        .enumerate()
        .map(|(a, &t)| whole(t, Some(a)))
        .collect::<Result<Vec<_>>>()?;
    let offset = whole(byte_offset, None)?;
    Ok((strides, offset, c))
}
