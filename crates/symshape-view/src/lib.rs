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
//! - [`Op`]: every view op as a value, with `i64` or [`symshape::Expr`] arguments
//!   ([`Dim`]). It is the one op surface: [`View::apply`], [`ViewStack::apply`] and
//!   [`ConcreteView::apply`] run it, [`Trace`] records and replays it, the `serde`
//!   feature stores it, and the `shapetrace` runner parses its statements into it.
//! - [`ViewOps`]: the ops by name (`reshape`, `permute`, `split`, ...), written once
//!   as sugar over `apply` for [`View`] and [`ViewStack`]. Every op takes the
//!   caller's [`symshape::Scope`], whose declarations and assumptions decide what a
//!   symbolic op proves.
//! - [`View`]: one view whose fields are expressions. A view whose fields are all
//!   constants is stored as a [`ConcreteView`], so ops with constant arguments run on
//!   the exact engine without touching the expression interner. On symbolic views
//!   each precondition is proven, refuted (an error at once) or recorded as a
//!   [`Guard`] checked by binding.
//! - [`ViewStack`]: a list of views, bottom first, each reading the row-major
//!   elements of the one below. It applies every op without ever failing for lack of
//!   representability, and merges adjacent views whenever their composition is one
//!   view. Use it when a chain of ops must stay exact.
//! - [`ConcreteView`] and [`ConcreteStack`] (in [`concrete`]): the exact `i64`
//!   engine, and what binding gives: the kernels crate runs on them through
//!   [`Levels`].
//! - [`IndexItem`] and [`parse_index`]: NumPy basic indexing and its text form.
//! - [`broadcast_shapes`]: NumPy's broadcast of shapes whose sizes are expressions,
//!   giving a [`Broadcast`] (the shape and the guards it holds under).
//! - [`DType`], [`promote_types`] and [`result_type`]: NumPy's plain element types, their
//!   promotion table and NEP 50's weak Python scalars ([`Operand`]); `Op::AsType`
//!   copies when the type changes.
//! - [`Selection`]: what a gather (NumPy's fancy or boolean indexing, `Op::Take`,
//!   `Op::Compress`, `Op::BooleanMask`) reads, for the kernels to copy into a new buffer.
//! - Inputs: [`View::row_major`] is the one-call constructor of a row-major input
//!   at offset 0 (`View::row_major(&cx, &[b, s, 768.into()])`), symbolic or not;
//!   [`View::create`] takes strides, offset and mask too.
//! - Binding: [`View::bind`] / [`ViewStack::bind`] give concrete views and stacks and
//!   check every guard; [`PreparedView`] and [`PreparedStack`] compile a view or stack
//!   once into a `symshape::Program` and bind it many times with caller-owned scratch
//!   space ([`BindCache`]); [`infer`] finds symbol values from a concrete shape.
//! - [`Lowered`] ([`ViewStack::lower`]): `(offset, valid)` as expressions in loop
//!   indices, for code generators.
//! - [`nest`]: the loop-nest rules both loop planners use (the kernels' over bound
//!   views, the code generator's over symbolic ones): axis merging, mask intervals,
//!   cells.
//! - [`Trace`]: each op with its resulting stack and new guards, printed stably
//!   for snapshot tests.
//!
//! A reshape succeeds on one view if and only if the result is one view, and
//! [`concrete::merge`] composes two stacked views into one exactly when the
//! composition is one view (see `docs/semantics.md` for the algorithms and every
//! decision).
//!
//! ```
//! use symshape::Scope;
//! use symshape_view::{parse_index, View, ViewOps, ViewStack};
//!
//! let cx = Scope::new();
//! let v = View::contiguous(&[3, 2])?;
//! let t = v.permute(&cx, &[1, 0])?;
//! assert!(t.reshape(&cx, &[6i64]).is_err()); // a transpose is not one flat view
//! let s = ViewStack::new(t).reshape(&cx, &[6i64])?; // a stack keeps it exact
//! assert_eq!(s.views().len(), 2);
//! assert_eq!(s.to_concrete("offsets")?.offsets_line()?, "offsets [6]: 0 2 4 1 3 5");
//!
//! let p = View::contiguous(&[4])?.pad(&cx, &[(1i64, 0i64)])?;
//! assert_eq!(p.to_string(), "view shape=[5] strides=[1] offset=-1 mask=[(1, 5)]");
//! let r = p.index(&cx, &parse_index("[::-2]")?)?;
//! assert_eq!(r.to_concrete("offsets")?.offsets()?, [Some(3), Some(1), None]);
//! # Ok::<(), symshape_view::Error>(())
//! ```
//!
//! Symbolic views, guards, lowering and binding:
//!
//! ```
//! use symshape::{Bindings, Expr, Scope};
//! use symshape_view::{Op, View, ViewOps, ViewStack};
//!
//! let mut cx = Scope::new();
//! let n = cx.declare_str("n 1..=4096")?;
//! let v = View::row_major(&cx, &[n, Expr::from(768)])?;
//! let heads = ViewStack::new(v)
//!     .reshape(&cx, &[n, 12.into(), 64.into()])?
//!     .permute(&cx, &[1, 0, 2])?;
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
//! assert_eq!(s.bind(&cx, &b)?.shape(), &[12, 1, 64]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Dependencies: `symshape` for the expression fields, `thiserror` for [`Error`],
//! `hashbrown` for the per-thread memos ([`concrete::Memo`], of merges here and of the
//! kernels' row plans: its fast default hasher, and lookups by borrowed levels, which the
//! standard map cannot do without copying them; its `Equivalent` trait is re-exported).
//! Optional `serde` (feature `serde`): `Serialize`/`Deserialize` for [`View`],
//! [`ViewStack`], [`Guard`], [`Op`] and [`IndexItem`], loaded through the validating
//! constructors.

#![forbid(unsafe_code)]

/// The example of the crate's README, compiled and run as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod axes;
mod bind;
mod broadcast;
mod check;
pub mod concrete;
mod dim;
mod dispatch;
mod dtype;
mod engine;
mod error;
mod fields;
mod gather;
mod guard;
mod index;
mod layout;
mod lower;
mod lower_op;
mod memory;
pub mod nest;
mod op;
#[cfg(feature = "serde")]
mod serde_impl;
mod stack;
mod symbolic;
mod trace;
mod view;
mod view_ops;

pub use bind::{infer, BindCache, Inferred, PreparedStack, PreparedView};
pub use broadcast::{broadcast_shapes, Broadcast};
pub use concrete::{
    ByteLayout, ConcreteStack, ConcreteView, Flags, Levels, MemoryOverlap, Raveled, Selection,
    INJECTIVE_CHECK_LIMIT, MAX_OFFSETS, MAX_PIECES, MAX_RANK, SHARES_MEMORY_MAX_WORK,
};
pub use dim::Dim;
pub use dtype::{promote_types, result_type, DType, Operand};
pub use error::{Error, Result};
pub use guard::Guard;
pub use index::{parse_index, parse_index_in, IndexItem};
pub use lower::Lowered;
pub use memory::FlagProofs;
pub use op::{Op, SplitDirection};
pub use stack::ViewStack;
pub use trace::{Step, Trace};
pub use view::View;
pub use view_ops::ViewOps;
