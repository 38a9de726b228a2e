//! Proptest strategies shared by the property tests: comparison operators and random
//! naive trees (`crate::tree::T`).

use proptest::prelude::*;
use proptest::strategy::Union;
use symshape::CmpOp;

use crate::tree::{bx, split_index, T};

/// Any of the six comparison operators, equally likely.
pub fn cmp_op() -> impl Strategy<Value = CmpOp> {
    prop_oneof![
        Just(CmpOp::Lt),
        Just(CmpOp::Le),
        Just(CmpOp::Eq),
        Just(CmpOp::Ne),
        Just(CmpOp::Ge),
        Just(CmpOp::Gt)
    ]
}

/// A binary constructor of `T`, such as `T::Add`.
pub type BinaryOp = fn(Box<T>, Box<T>) -> T;

/// `f(x, y)` with both operands drawn from `inner`.
pub fn binary(inner: &BoxedStrategy<T>, f: BinaryOp) -> BoxedStrategy<T> {
    (inner.clone(), inner.clone())
        .prop_map(move |(x, y)| f(bx(x), bx(y)))
        .boxed()
}

/// The negation of a tree drawn from `inner`.
pub fn negated(inner: &BoxedStrategy<T>) -> BoxedStrategy<T> {
    inner.clone().prop_map(|x| T::Neg(bx(x))).boxed()
}

/// One arm per operator of `T` (the eight binary ones, then negation), over `inner`.
pub fn operator_arms(inner: &BoxedStrategy<T>) -> Vec<BoxedStrategy<T>> {
    let ops: [BinaryOp; 8] = [
        T::Add,
        T::Sub,
        T::Mul,
        T::Div,
        T::Mod,
        T::CDiv,
        T::Min,
        T::Max,
    ];
    let mut arms: Vec<_> = ops.into_iter().map(|f| binary(inner, f)).collect();
    arms.push(negated(inner));
    arms
}

/// Random trees over `leaf`, up to `depth` levels and about `size` nodes: each inner
/// node is one of `operator_arms` or of `extra_arms`, all equally likely.
pub fn random_tree(
    leaf: impl Strategy<Value = T> + 'static,
    depth: u32,
    size: u32,
    extra_arms: fn(&BoxedStrategy<T>) -> Vec<BoxedStrategy<T>>,
) -> BoxedStrategy<T> {
    leaf.prop_recursive(depth, size, 2, move |inner| {
        let mut arms = operator_arms(&inner);
        arms.extend(extra_arms(&inner));
        Union::new(arms)
    })
    .boxed()
}

/// `split_index(x, step, offset, divisor, div)` of a tree `x` drawn from `inner`.
pub fn split_index_of(
    inner: &BoxedStrategy<T>,
    step: T,
    offset: T,
    divisor: T,
    div: bool,
) -> BoxedStrategy<T> {
    inner
        .clone()
        .prop_map(move |x| split_index(x, step.clone(), offset.clone(), divisor.clone(), div))
        .boxed()
}
