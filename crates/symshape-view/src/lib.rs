//! Strided views with masks over symbolic dimensions, every view op, exact
//! composition of views, binding, index lowering and shape traces.
//!
//! A view says how a linear buffer is read as an n-dimensional tensor: a shape,
//! strides, an offset and an optional per-axis validity mask. Ops on views
//! (reshape, expand, permute, shrink, pad, flip, NumPy basic indexing, ...) touch
//! only this metadata, never element data.
//!
//! Main types:
//!
//! - [`View`]: one view whose fields are [`symshape::Expr`] expressions. On views
//!   whose fields are all constants every op is exact and eager. On symbolic views
//!   ops run symbolically: each precondition is proven, refuted (an error at once)
//!   or recorded as a [`Guard`] checked by [`View::bind`]. [`View::apply`] runs an
//!   [`Op`] under a [`symshape::Scope`] (whose assumptions the proofs use).
//! - [`ViewStack`]: a list of views, bottom first, each reading the row-major
//!   elements of the one below. It applies every op without ever failing for lack
//!   of representability, and merges adjacent views whenever their composition is
//!   one view. Use it when a chain of ops must stay exact.
//! - [`ConcreteView`] (in [`concrete`]): the exact `i64` engine behind both; use it
//!   directly for purely concrete work without expression interning.
//! - [`IndexItem`] and [`parse_index`]: NumPy basic indexing and its text form.
//! - Binding: [`View::bind`] / [`ViewStack::bind`] give concrete views and check
//!   every guard; [`PreparedView`] and [`PreparedStack`] compile a view or stack
//!   once into a `symshape::Program` and bind it many times; [`infer`] finds symbol values from a concrete shape.
//! - [`Lowered`] ([`ViewStack::lower`]): `(offset, valid)` as expressions in loop
//!   indices `i0, i1, ...`, for code generators.
//! - [`Trace`]: each op with its resulting stack and new guards, printed stably
//!   for snapshot tests.
//!
//! [`View::reshape`] succeeds if and only if the result is one view, and
//! [`concrete::merge`] composes two stacked views into one exactly when the
//! composition is one view (see `docs/semantics.md` for the algorithms and every
//! decision).
//!
//! ```
//! use symshape_view::{parse_index, View, ViewStack};
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
//! # Ok::<(), symshape_view::Error>(())
//! ```
//!
//! Symbolic views, guards, lowering and binding:
//!
//! ```
//! use symshape::{Bindings, Expr, Scope};
//! use symshape_view::{Op, View, ViewStack};
//!
//! let mut cx = Scope::new();
//! let n = cx.declare_str("n 1..=4096")?;
//! let v = View::create_in(&cx, &[n, Expr::from(768)], None, Expr::from(0), None)?;
//! let heads = ViewStack::new(v)
//!     .apply(&cx, &Op::Reshape(vec![n, 12.into(), 64.into()]))?
//!     .apply(&cx, &Op::Permute(vec![1, 0, 2]))?;
//! assert_eq!(heads.top().to_string(), "view shape=[12, n, 64] strides=[64, 768, 1] offset=0 mask=none");
//! assert_eq!(heads.lower(&cx)?.to_string(), "offset: 64*i0 + 768*i1 + i2\nvalid: true");
//!
//! // `n - 1 <= n` is proven; `1 <= n - 1` is not: it becomes a guard.
//! let z = Expr::from(0);
//! let s = heads.apply(&cx, &Op::Shrink(vec![(z, 12.into()), (1.into(), n - 1), (z, 64.into())]))?;
//! assert_eq!(s.guards_text(), "shrink: 1 <= n - 1 (start of axis 1 is at most its end)");
//! let mut b = Bindings::new();
//! cx.bind(&mut b, "n", 1)?;
//! assert!(s.bind(&cx, &b).is_err()); // the concrete shrink would fail too
//! cx.bind(&mut b, "n", 3)?;
//! assert_eq!(s.bind(&cx, &b)?.top().shape(), &[Expr::from(12), 1.into(), 64.into()]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Dependencies: `symshape` for the expression fields, `thiserror` for [`Error`].
//! Optional `serde` (feature `serde`): `Serialize`/`Deserialize` for [`View`], [`ViewStack`], [`Guard`], [`Op`] and [`IndexItem`], loaded through the validating constructors.

mod bind;
pub mod concrete;
mod error;
mod guard;
mod index;
mod lower;
mod op;
#[cfg(feature = "serde")]
mod serde_impl;
mod stack;
mod symbolic;
mod trace;
mod view;

pub use bind::{infer, Inferred, PreparedStack, PreparedView};
pub use concrete::ConcreteView;
pub use error::{Error, Result};
pub use guard::Guard;
pub use index::{parse_index, parse_index_in, IndexBound, IndexItem};
pub use lower::Lowered;
pub use op::Op;
pub use stack::ViewStack;
pub use trace::{Step, Trace};
pub use view::View;
