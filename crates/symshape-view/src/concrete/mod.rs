//! The exact engine: views whose fields are `i64` constants, every op on them,
//! reshape, merging of stacked views, and concrete stacks.
//!
//! [`ConcreteView`] is what the public [`View`](crate::View) stores when all of its
//! fields are constants; its invariants are listed in `view.rs`. The core ops run
//! through the one dispatcher of both engines (`engine.rs`; this engine's hooks are in
//! `apply.rs`), reshape's complete search is in `reshape.rs`; the derived ops are
//! lowered to them by `lower_op.rs`; the named ops are [`ViewOps`](crate::ViewOps)'s; the
//! memory models (element-size reinterpretation, complex views, byte strides,
//! NumPy's flags and `ravel`) in `memory.rs`, NumPy's `shares_memory` in
//! `overlap.rs`, and [`ConcreteView::apply`] runs any [`Op`](crate::Op) through them.

mod apply;
mod decide;
mod derived;
mod gather;
mod memo;
mod memory;
mod merge;
mod overlap;
mod refute;
mod reshape;
mod stack;
mod view;

pub(crate) use derived::repeated_squeeze_axis;
pub use derived::{broadcast_shapes, MAX_PIECES};
pub use gather::Selection;
pub(crate) use gather::{gather_copies, trues};
pub(crate) use memo::MEMO_CAPACITY;
pub use memo::{Equivalent, Memo};
pub(crate) use memory::{positive_itemsize, rename_op};
pub use memory::{ByteLayout, Flags, Raveled};
pub(crate) use merge::{check_stacked, slab, Slab};
pub use merge::{merge, merge_refined, Refined};
pub use overlap::{MemoryOverlap, SHARES_MEMORY_MAX_WORK};
pub use stack::merge_memo;
pub(crate) use stack::{merge_down, merge_last_pairs};
pub use stack::{ConcreteStack, Levels};
pub(crate) use view::{
    c_strides, ceil_div, check_rank, check_rank_of, check_shape, is_permutation, numel_of,
    write_strided,
};
pub use view::{
    format_offsets, unravel, ConcreteView, INJECTIVE_CHECK_LIMIT, MAX_OFFSETS, MAX_RANK,
};
