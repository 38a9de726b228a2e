//! Lowering views of the `view` crate to layouts: every field must be a constant that fits
//! this machine's integers.

use crate::error::{KernelError, Result};
use crate::layout::{Layout, LayoutStack};
use symshape_view::concrete::ConcreteView;

const OP_VIEW: &str = "from_view";
const OP_STACK: &str = "from_view_stack";

impl Layout {
    /// The layout of a view of the `view` crate whose fields are all constants.
    ///
    /// # Errors
    /// [`KernelError::Lower`] when a field is symbolic, [`KernelError::ViewField`] when a
    /// constant does not fit `usize`/`isize`, [`KernelError::Overflow`] when its offsets do not.
    ///
    /// ```
    /// use symshape_kernels::{materialize, Layout};
    /// let v = symshape_view::View::contiguous(&[2i64, 3])?.flip(&[false, true])?;
    /// let l = Layout::from_view(&v)?;
    /// assert_eq!(materialize(&[0, 1, 2, 3, 4, 5], &l, 0)?, vec![2, 1, 0, 5, 4, 3]);
    /// # Ok::<(), symshape_kernels::KernelError>(())
    /// ```
    pub fn from_view(v: &symshape_view::View) -> Result<Layout> {
        lower_view(OP_VIEW, v, None)
    }

    /// The layout of a concrete view of the `view` crate.
    ///
    /// # Errors
    /// [`KernelError::ViewField`] when a field does not fit `usize`/`isize`,
    /// [`KernelError::Overflow`] when its offsets do not.
    pub fn from_concrete(v: &ConcreteView) -> Result<Layout> {
        from_concrete(OP_VIEW, v, || v.to_string())
    }
}

impl LayoutStack {
    /// The layout stack of a view stack of the `view` crate whose fields are all constants.
    ///
    /// ```
    /// use symshape_kernels::{materialize, LayoutStack};
    /// // The transpose of a 2 x 3 matrix, flattened: not one strided view.
    /// let s = symshape_view::ViewStack::new(symshape_view::View::contiguous(&[2i64, 3])?)
    ///     .permute(&[1, 0])?
    ///     .reshape(&[6i64])?;
    /// let l = LayoutStack::from_view_stack(&s)?;
    /// assert_eq!(materialize(&[0, 1, 2, 3, 4, 5], &l, 0)?, vec![0, 3, 1, 4, 2, 5]);
    /// # Ok::<(), symshape_kernels::KernelError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Layout::from_view`] for each view, naming its level (0 is the bottom).
    pub fn from_view_stack(s: &symshape_view::ViewStack) -> Result<LayoutStack> {
        let levels = s
            .views()
            .iter()
            .enumerate()
            .map(|(level, v)| lower_view(OP_STACK, v, Some(level)))
            .collect::<Result<Vec<_>>>()?;
        LayoutStack::new(levels)
    }
}

impl TryFrom<&symshape_view::View> for Layout {
    type Error = KernelError;

    fn try_from(v: &symshape_view::View) -> Result<Layout> {
        Layout::from_view(v)
    }
}

impl TryFrom<&ConcreteView> for Layout {
    type Error = KernelError;

    fn try_from(v: &ConcreteView) -> Result<Layout> {
        Layout::from_concrete(v)
    }
}

impl TryFrom<&symshape_view::ViewStack> for LayoutStack {
    type Error = KernelError;

    fn try_from(s: &symshape_view::ViewStack) -> Result<LayoutStack> {
        LayoutStack::from_view_stack(s)
    }
}

fn describe(v: &dyn std::fmt::Display, level: Option<usize>) -> String {
    match level {
        Some(k) => format!("level {k} ({v})"),
        None => v.to_string(),
    }
}

fn lower_view(op: &'static str, v: &symshape_view::View, level: Option<usize>) -> Result<Layout> {
    let c = v.to_concrete(op).map_err(|source| {
        let detail = match &source {
            symshape_view::Error::Symbolic { what, expr, .. } => {
                format!("{what} is symbolic ({expr}); bind its symbols first")
            }
            e => e.to_string(),
        };
        KernelError::Lower {
            op,
            view: describe(v, level),
            detail,
            source: Box::new(source),
        }
    })?;
    from_concrete(op, &c, || describe(v, level))
}

fn from_concrete(op: &'static str, c: &ConcreteView, name: impl Fn() -> String) -> Result<Layout> {
    let bad = |field: &'static str, value: i64| KernelError::ViewField {
        op,
        view: name(),
        field,
        value,
    };
    let shape = c
        .shape()
        .iter()
        .map(|&n| usize::try_from(n).map_err(|_| bad("shape", n)))
        .collect::<Result<Vec<_>>>()?;
    let strides = c
        .strides()
        .iter()
        .map(|&s| isize::try_from(s).map_err(|_| bad("stride", s)))
        .collect::<Result<Vec<_>>>()?;
    let offset = isize::try_from(c.offset()).map_err(|_| bad("offset", c.offset()))?;
    let overflow = |e: KernelError| match e {
        KernelError::Overflow {
            shape,
            strides,
            offset,
            ..
        } => KernelError::Overflow {
            op,
            shape,
            strides,
            offset,
        },
        e => e,
    };
    let layout = Layout::new(&shape, &strides, offset).map_err(overflow)?;
    let Some(mask) = c.mask() else {
        return Ok(layout);
    };
    let mask = mask
        .iter()
        .map(|&(b, e)| {
            let b = usize::try_from(b).map_err(|_| bad("mask", b))?;
            let e = usize::try_from(e).map_err(|_| bad("mask", e))?;
            Ok((b, e))
        })
        .collect::<Result<Vec<_>>>()?;
    layout.with_mask(&mask)
}
