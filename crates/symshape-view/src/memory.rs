//! NumPy's memory model on views whose fields may be symbolic: the contiguity flags as
//! conditions on the symbols with their proofs, layouts in bytes as expressions, views
//! from byte strides whose divisibility is proven or kept as a guard. A concrete view
//! goes to the exact engine (`concrete/memory.rs`); both run the rules of `layout.rs`, here as conditions, so
//! binding the symbols gives the exact engine's answer.

use symshape::{Cond, Expr, Proof, Scope};

use crate::concrete::{ByteLayout, ConcreteView, Flags};
use crate::dim::{consts, exprs, Dim};
use crate::engine;
use crate::error::{Error, Result};
use crate::guard::{Checker, GuardOp};
use crate::layout;
use crate::op::Op;
use crate::symbolic::checker;
use crate::view::View;

/// NumPy's contiguity flags of a view whose fields may be symbolic
/// ([`View::numpy_flags`]): for each flag, the condition on the symbols under which it
/// holds, and its proof under the scope and the view's guards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagProofs {
    /// Whether `C_CONTIGUOUS` holds for every admissible binding, for none, or neither
    /// was shown.
    pub c_contiguous: Proof,
    /// The same for `F_CONTIGUOUS`.
    pub f_contiguous: Proof,
    /// When `C_CONTIGUOUS` holds: the view is empty, or every axis not of size 1 has the
    /// stride of a dense row-major layout (simplified under the scope).
    pub c_condition: Cond,
    /// When `F_CONTIGUOUS` holds: the same for a column-major layout.
    pub f_condition: Cond,
}

impl FlagProofs {
    /// The flags, when both are decided.
    #[must_use]
    pub fn decided(&self) -> Option<Flags> {
        Some(Flags {
            c_contiguous: self.c_contiguous.as_bool()?,
            f_contiguous: self.f_contiguous.as_bool()?,
        })
    }
}

impl View {
    /// NumPy's `C_CONTIGUOUS` and `F_CONTIGUOUS` flags, with NumPy's exact rules (see
    /// [`ConcreteView::numpy_flags`]): on a concrete view the exact answers; on a symbolic
    /// one each rule as a condition on the symbols, proven, refuted or left unknown under
    /// `cx` and the view's guards. `[n, 4]` with strides `[4, 1]` is C-contiguous for
    /// every `n`; its transpose is C-contiguous exactly when `n == 1`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a masked view; [`Error::Symshape`] when a condition exceeds
    /// the budgets.
    pub fn numpy_flags(&self, cx: &Scope) -> Result<FlagProofs> {
        if let Some(c) = self.as_concrete() {
            let f = c.numpy_flags()?;
            let proof = |b: bool| if b { Proof::True } else { Proof::False };
            return Ok(FlagProofs {
                c_contiguous: proof(f.c_contiguous),
                f_contiguous: proof(f.f_contiguous),
                c_condition: Cond::constant(f.c_contiguous),
                f_condition: Cond::constant(f.f_contiguous),
            });
        }
        let (c, f) = engine::numpy_flags(self)?;
        let (c, f) = (c.check()?, f.check()?);
        let ck = checker(cx, GuardOp::FLAGS, self);
        Ok(FlagProofs {
            c_contiguous: ck.prove_cond(c),
            f_contiguous: ck.prove_cond(f),
            c_condition: cx.simplify_cond(c),
            f_condition: cx.simplify_cond(f),
        })
    }

    /// Whether `op` on a stack whose top view is this one, where it succeeds, returns a
    /// copy ([`ViewStack::copies`](crate::ViewStack::copies) without running the op on the
    /// stack): it always copies, or this view cannot express its result as one view. It
    /// reads this view only, so a caller that keeps the top view of a tall stack asks it
    /// at a cost that does not grow with the stack.
    #[must_use]
    pub fn copied_by<D: Dim>(&self, cx: &Scope, op: &Op<D>) -> bool {
        op.always_copies() || matches!(self.apply_dim(cx, op), Err(Error::NotRepresentable { .. }))
    }

    /// The layout in bytes for elements of `itemsize` bytes: strides and offset times the
    /// item size, as expressions (see [`ConcreteView::byte_layout`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] for a masked view or an item size below 1;
    /// [`Error::Overflow`] when a byte value of a concrete view leaves `i64`;
    /// [`Error::Symshape`] when an expression exceeds the budgets.
    pub fn byte_layout(&self, itemsize: i64) -> Result<ByteLayout<Expr>> {
        if let Some(c) = self.as_concrete() {
            let b = c.byte_layout(itemsize)?;
            let lit = |v: &[i64]| v.iter().map(|&x| Expr::from(x)).collect();
            return Ok(ByteLayout {
                shape: lit(&b.shape),
                strides: lit(&b.strides),
                offset: Expr::from(b.offset),
                itemsize,
            });
        }
        engine::byte_layout(self, itemsize)
    }

    /// A view from NumPy's byte strides and byte offset for elements of `itemsize` bytes
    /// (see [`ConcreteView::from_byte_strides`]). Every byte stride and the byte offset
    /// must be a multiple of the item size: with constant arguments this is checked
    /// exactly; a symbolic one is proven under `cx`, refuted (an error), or kept as a
    /// guard of the view, which binding checks.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an item size below 1 or a constant value that is not a
    /// multiple of it; [`Error::Guard`] for a symbolic one proven not to be; as
    /// [`View::create`] otherwise.
    pub fn from_byte_strides<D: Dim>(
        cx: &Scope,
        shape: &[D],
        byte_strides: &[D],
        byte_offset: D,
        itemsize: i64,
    ) -> Result<View> {
        if let (Some(sh), Some(st), Some(o)) =
            (consts(shape), consts(byte_strides), byte_offset.as_const())
        {
            return ConcreteView::from_byte_strides(&sh, &st, o, itemsize).map(View::from);
        }
        let shape = exprs(shape);
        let (strides, offset, ck) = layout::from_byte_strides(
            &shape,
            &exprs(byte_strides),
            byte_offset.into(),
            itemsize,
            |fields| Checker::new(cx, GuardOp::BYTE_STRIDES, &[], fields),
        )?;
        Ok(View::create(cx, &shape, Some(&strides), offset, None)?.with_guards(&ck.guards))
    }
}
