//! Operands: a buffer with the view that reads it ([`Input`]) or that is written
//! through ([`Output`]), and the machine-integer facts the planner takes from a view.
//!
//! Views come from the view crate ([`ConcreteView`], [`ConcreteStack`] through
//! [`Levels`]), whose fields are `i64` and whose offsets fit `i64`. Every field is
//! converted to `usize`/`isize` once, when an operand is planned; a value that does
//! not fit this machine's integers is an error there, so the loops never convert.
//!
//! [`ConcreteStack`]: symshape_view::ConcreteStack

use symshape_view::{ConcreteView, Levels};

use crate::element::Element;
use crate::error::{Error, Result};

/// A source: a buffer, the view (a [`ConcreteView`] or a
/// [`ConcreteStack`](symshape_view::ConcreteStack)) that reads it, and the value that
/// masked-out elements read (zero unless set with [`Input::pad`]).
#[derive(Debug)]
pub struct Input<'a, T> {
    pub(crate) buf: &'a [T],
    pub(crate) levels: &'a [ConcreteView],
    pub(crate) pad: T,
}

impl<T: Copy> Clone for Input<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Copy> Copy for Input<'_, T> {}

impl<'a, T: Element> Input<'a, T> {
    /// `view` reading `buf`; masked-out elements read `T::ZERO`.
    pub fn new(buf: &'a [T], view: &'a impl Levels) -> Input<'a, T> {
        Input {
            buf,
            levels: view.levels(),
            pad: T::ZERO,
        }
    }

    /// The same input with masked-out elements reading `pad`.
    #[must_use]
    pub fn pad(self, pad: T) -> Input<'a, T> {
        Input { pad, ..self }
    }

    /// The shape of the view.
    pub fn shape(&self) -> &'a [i64] {
        top(self.levels).shape()
    }
}

/// A destination: a buffer and the view (a [`ConcreteView`] or a
/// [`ConcreteStack`](symshape_view::ConcreteStack)) its elements are written
/// through. Masked-out elements are left alone; a view that reaches one element
/// through two valid indices is refused.
#[derive(Debug)]
pub struct Output<'a, T> {
    pub(crate) buf: &'a mut [T],
    pub(crate) levels: &'a [ConcreteView],
}

impl<'a, T: Element> Output<'a, T> {
    /// `view` writing into `buf`.
    pub fn new(buf: &'a mut [T], view: &'a impl Levels) -> Output<'a, T> {
        Output {
            buf,
            levels: view.levels(),
        }
    }

    /// The shape of the view.
    #[must_use]
    pub fn shape(&self) -> &'a [i64] {
        top(self.levels).shape()
    }
}

/// The top level (`Levels` guarantees at least one).
pub(crate) fn top(levels: &[ConcreteView]) -> &ConcreteView {
    &levels[levels.len() - 1]
}

/// A view's fields as this machine's integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Machine {
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<isize>,
    pub(crate) offset: isize,
    /// Valid indices per axis (the whole axis when unmasked).
    pub(crate) valid: Vec<(usize, usize)>,
    pub(crate) masked: bool,
}

impl Machine {
    pub(crate) fn of(op: &'static str, v: &ConcreteView) -> Result<Machine> {
        let bad = |what: &'static str, value: i64| Error::Machine {
            op,
            what,
            value,
            view: v.to_string(),
        };
        let to_usize = |what, x: i64| usize::try_from(x).map_err(|_| bad(what, x));
        let to_isize = |what, x: i64| isize::try_from(x).map_err(|_| bad(what, x));
        // The element count and every in-shape offset fit i64; they must fit here too.
        to_usize("element count", v.numel())?;
        if let Some((lo, hi)) = v.extent() {
            to_isize("offset", lo)?;
            to_isize("offset", hi)?;
        }
        Ok(Machine {
            shape: v
                .shape()
                .iter()
                .map(|&d| to_usize("size", d))
                .collect::<Result<_>>()?,
            strides: v
                .strides()
                .iter()
                .map(|&t| to_isize("stride", t))
                .collect::<Result<_>>()?,
            offset: to_isize("offset", v.offset())?,
            valid: v
                .valid_bounds()
                .into_iter()
                .map(|(b, e)| Ok((to_usize("mask", b)?, to_usize("mask", e)?)))
                .collect::<Result<_>>()?,
            masked: v.mask().is_some(),
        })
    }

    /// The row-major layout of `shape` at offset 0.
    pub(crate) fn row_major(op: &'static str, shape: &[usize]) -> Result<Machine> {
        let mut strides = vec![0isize; shape.len()];
        let mut acc: isize = 1;
        for (s, &n) in strides.iter_mut().zip(shape).rev() {
            *s = acc;
            // Zero-size axes count as one, as the view crate does.
            acc = isize::try_from(n.max(1))
                .ok()
                .and_then(|n| acc.checked_mul(n))
                .ok_or_else(|| Error::Overflow {
                    op,
                    shape: shape.to_vec(),
                })?;
        }
        Ok(Machine {
            shape: shape.to_vec(),
            strides,
            offset: 0,
            valid: shape.iter().map(|&n| (0, n)).collect(),
            masked: false,
        })
    }

    pub(crate) fn numel(&self) -> usize {
        // `of` checked that the count fits.
        self.shape.iter().product()
    }
}

/// The shape of `levels` as `usize`s.
pub(crate) fn shape_of(op: &'static str, levels: &[ConcreteView]) -> Result<Vec<usize>> {
    top(levels)
        .shape()
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| Error::Machine {
                op,
                what: "size",
                value: d,
                view: top(levels).to_string(),
            })
        })
        .collect()
}

/// Lowest and highest buffer offset a source reaches: the extent of its bottom
/// level (every level above reads only valid elements of the one below it).
pub(crate) fn read_extent(levels: &[ConcreteView]) -> Option<(i64, i64)> {
    levels.first()?.extent()
}

/// Checks an extent against a buffer length.
pub(crate) fn check_extent(
    op: &'static str,
    role: &'static str,
    extent: Option<(i64, i64)>,
    len: usize,
) -> Result<()> {
    let Some((lo, hi)) = extent else {
        return Ok(());
    };
    if lo < 0 || usize::try_from(hi).map_or(true, |h| h >= len) {
        return Err(Error::OutOfBuffer {
            op,
            role,
            lo,
            hi,
            len,
        });
    }
    Ok(())
}

/// Checks that no two valid indices of any level of a destination reach the
/// same element (then none of the whole stack does).
pub(crate) fn check_no_self_overlap(op: &'static str, levels: &[ConcreteView]) -> Result<()> {
    for v in levels {
        match v.is_injective() {
            Some(true) => {}
            Some(false) => {
                return Err(Error::OverlappingDestination {
                    op,
                    view: v.to_string(),
                })
            }
            None => {
                return Err(Error::UndecidedOverlap {
                    op,
                    view: v.to_string(),
                    limit: symshape_view::concrete::INJECTIVE_CHECK_LIMIT,
                })
            }
        }
    }
    Ok(())
}
