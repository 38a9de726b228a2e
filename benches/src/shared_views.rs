//! Views that the benchmarks time and the kernels' tests check, written once: the benches
//! crate exports them, and the kernels' integration tests include this file.

use symshape::{Expr, Scope, SymbolSpec};
use symshape_view::{Op, View, ViewOps};

/// The ops that build the causal mask of `s` new tokens after `p` cached ones, `[s, p + s]`,
/// from a row of `p + s` elements (true for the positions a token may attend to): pad,
/// reshape, expand, shrink and flip, as the attention example builds it. The kernel
/// table's cliff row and the comparison with NumPy and PyTorch run the same stack.
#[must_use]
pub fn causal_mask_ops(s: i64, p: i64) -> Vec<Op<i64>> {
    let len = p + s;
    vec![
        Op::Pad(vec![(0, s)]),
        Op::Reshape(vec![1, len + s]),
        Op::Expand(vec![s, len + s]),
        Op::Reshape(vec![s * (len + s)]),
        Op::Pad(vec![(0, s)]),
        Op::Reshape(vec![s, len + s + 1]),
        Op::Shrink(vec![(0, s), (0, len)]),
        Op::Flip(vec![0]),
    ]
}

/// The row-major `[b, h, w, 3]` padded by 1 on `h` and 2 on `w`.
///
/// # Panics
/// If the symbols are not of `cx`.
#[must_use]
pub fn padded_rank4(cx: &Scope, b: Expr, h: Expr, w: Expr) -> View {
    let z = Expr::from(0);
    View::row_major(cx, &[b, h, w, Expr::from(3)])
        .and_then(|v| {
            v.pad(
                cx,
                &[(z, z), (1.into(), 1.into()), (2.into(), 2.into()), (z, z)],
            )
        })
        .expect("padded view")
}

/// The view of `view/bind/prepared_rank4_pad`: [`padded_rank4`] over `b` in `1..=64`, `h`
/// and `w` in `1..=1024`, with its scope.
///
/// # Panics
/// Never (constant symbol declarations).
#[must_use]
pub fn rank4_pad() -> (Scope, View) {
    let mut cx = Scope::new();
    let b = cx.declare(&SymbolSpec::new("b").range(1, 64)).expect("b");
    let h = cx.declare(&SymbolSpec::new("h").range(1, 1024)).expect("h");
    let w = cx.declare(&SymbolSpec::new("w").range(1, 1024)).expect("w");
    let v = padded_rank4(&cx, b, h, w);
    (cx, v)
}
