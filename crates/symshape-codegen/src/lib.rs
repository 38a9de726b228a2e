//! Code generation for view stacks: a symbolic loop plan, built once and valid for every
//! binding, and renderers for it: C99, OpenCL C and CUDA C++.
//!
//! - [`Plan`]: the loop nest of a kernel over symbolic extents, its loops the
//!   [`symshape_view::nest::Loop`]s the kernels' nests are made of too. [`Plan::materialize`]
//!   copies one [`symshape_view::ViewStack`] into a contiguous output;
//!   [`Plan::elementwise`] reads several stacks broadcast to one shape. Adjacent axes
//!   are merged where the merge is proven, masks that are boxes become loop bounds (both
//!   by the rules of [`symshape_view::nest`], which the kernels' planner shares) and
//!   the other masks predicates, index expressions are simplified with the loop
//!   ranges, and every condition a binding must meet is collected in [`Plan::checks`].
//! - [`render_c`]: one self-contained C99 translation unit with a guard function and the
//!   kernel, configured by [`CConfig`]. Floor division is native only where both operands
//!   are proven non-negative.
//! - [`render_opencl`] and [`render_cuda`]: the same materialize plan as a GPU kernel
//!   ([`GpuKernel`]) for an [`ElemType`]: 32x32 tiles through local memory for transposes,
//!   else a grid-stride gather, 2- or 4-wide where proven; [`IndexWidth::I32`] exactly
//!   where every index expression is proven to fit; the [`Launch`] as expressions over
//!   the symbols. Run the checks on the host (the guard function of [`render_c`]) first.
//!
//! ```
//! use symshape::Scope;
//! use symshape_codegen::{render_c, CConfig, Plan};
//! use symshape_view::{View, ViewOps, ViewStack};
//!
//! let mut cx = Scope::new();
//! let n = cx.declare_str("n 1..=4096")?;
//! let m = cx.declare_str("m 1..=4096")?;
//! let t = ViewStack::new(View::row_major(&cx, &[n, m])?).permute(&cx, &[1, 0])?;
//! let plan = Plan::materialize(&cx, &t)?;
//! assert_eq!(plan.loops().len(), 2);
//! let c = render_c(&cx, &plan, &CConfig::new("transpose"))?;
//! assert!(c.contains("dst[o1] = src[i1*s_m + i0];"));
//! let cuda = symshape_codegen::render_cuda(&cx, &plan, symshape_codegen::ElemType::F32)?;
//! assert_eq!(cuda.index, symshape_codegen::IndexWidth::I32);
//! assert_eq!(cuda.launch.block, [32, 8, 1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Dependencies: `symshape` and `symshape-view` for the expressions and views,
//! `thiserror` for [`Error`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// The example of the crate's README, compiled and run as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The example of `docs/codegen.md`, compiled and run as a doc test.
#[doc = include_str!("../../../docs/codegen.md")]
#[cfg(doctest)]
pub struct CodegenDocDoctests;

mod arith;
mod c;
mod dialect;
mod error;
mod gpu;
mod plan;

pub use c::{render_c, CConfig};
pub use dialect::{ElemType, IndexWidth};
pub use error::{Error, Result};
pub use gpu::{render_cuda, render_opencl, GpuKernel, Launch};
pub use plan::{Access, Check, CheckKind, Fields, Loop, Plan, PlanKind};
