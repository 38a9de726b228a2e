//! Strided views with masks, every view op, and exact composition of views.
//!
//! A view says how a linear buffer is read as an n-dimensional tensor: a shape,
//! strides, an offset and an optional per-axis validity mask. Ops on views
//! (reshape, expand, permute, shrink, pad, flip, NumPy basic indexing, ...) touch
//! only this metadata, never element data.
//!
//! Main types:
//!
//! - [`View`]: one view whose fields are [`symshape::Expr`] expressions. On views
//!   whose fields are all constants every op is exact; a symbolic field or argument
//!   gives [`Error::Symbolic`] for now.
//! - [`ViewStack`]: a list of views, bottom first, each reading the row-major
//!   elements of the one below. It applies every op without ever failing for lack
//!   of representability, and merges adjacent views whenever their composition is
//!   one view. Use it when a chain of ops must stay exact.
//! - [`ConcreteView`] (in [`concrete`]): the exact `i64` engine behind both; use it
//!   directly for purely concrete work without expression interning.
//! - [`IndexItem`] and [`parse_index`]: NumPy basic indexing and its text form.
//!
//! [`View::reshape`] succeeds if and only if the result is one view, and
//! [`concrete::merge`] composes two stacked views into one exactly when the
//! composition is one view (see `docs/semantics.md` for the algorithms and every
//! decision).
//!
//! ```
//! use view::{parse_index, View, ViewStack};
//!
//! let v = View::contiguous(&[3i64, 2])?;
//! let t = v.permute(&[1, 0])?;
//! assert!(t.reshape(&[6i64]).is_err()); // a transpose is not one flat view
//! let s = ViewStack::new(t).reshape(&[6i64])?; // a stack keeps it exact
//! assert_eq!(s.views().len(), 2);
//! assert_eq!(s.offsets_line()?, "offsets [6]: 0 2 4 1 3 5");
//!
//! let p = View::contiguous(&[4i64])?.pad(&[(1i64, 0i64)])?;
//! assert_eq!(p.to_string(), "view shape=[5] strides=[1] offset=-1 mask=[(1, 5)]");
//! let r = p.index(&parse_index("[::-2]")?)?;
//! assert_eq!(r.offsets_line()?, "offsets [3]: 3 1 _");
//! # Ok::<(), view::Error>(())
//! ```
//!
//! Dependencies: `symshape` for the expression fields, `thiserror` for [`Error`].

pub mod concrete;
mod error;
mod index;
mod stack;
mod view;

pub use concrete::ConcreteView;
pub use error::{Error, Result};
pub use index::{parse_index, IndexItem};
pub use stack::ViewStack;
pub use view::View;
