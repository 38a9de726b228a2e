//! Basic indexing, one rule for both engines: a random constant view indexed by the
//! exact engine, and the same view with symbolic sizes indexed by the symbolic engine
//! and bound afterwards, both against the naive model of NumPy's rule.

use proptest::option;
use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope, SymbolSpec};
use symshape_view::{Error, IndexItem, View, ViewOps, ViewStack};

use crate::model::Model;
use crate::strategy::{arb_raw, Raw};
use crate::symprop::model_index;

/// Small values of both signs, and a few far past any axis.
fn arb_value() -> impl Strategy<Value = i64> {
    prop_oneof![
        12 => -6i64..=6,
        1 => Just(1i64 << 40),
        1 => Just(-(1i64 << 40)),
    ]
}

fn arb_item() -> impl Strategy<Value = IndexItem> {
    prop_oneof![
        3 => arb_value().prop_map(IndexItem::Int),
        6 => (option::of(arb_value()), option::of(arb_value()), option::of(arb_value()))
            .prop_map(|(start, stop, step)| IndexItem::Slice { start, stop, step }),
        1 => Just(IndexItem::NewAxis),
        1 => Just(IndexItem::Ellipsis),
    ]
}

/// The view of `raw` with one symbol per size (each `0..=4`), and the binding that
/// gives back `raw`'s sizes.
pub fn symbolic_view(raw: &Raw) -> Option<(Scope, View, Bindings)> {
    let mut cx = Scope::new();
    let mut b = Bindings::new();
    let mut shape = Vec::new();
    for (axis, &d) in raw.shape.iter().enumerate() {
        let spec = SymbolSpec::new(&format!("d{axis}")).range(0, 4);
        let s = cx.declare(&spec).expect("symbol");
        b.set(s, d).expect("value");
        shape.push(s);
    }
    let strides: Vec<Expr> = raw.strides.iter().map(|&t| Expr::from(t)).collect();
    let mask: Option<Vec<(Expr, Expr)>> = raw.mask.as_ref().map(|m| {
        m.iter()
            .map(|&(x, y)| (Expr::from(x), Expr::from(y)))
            .collect()
    });
    let v = View::create(
        &cx,
        &shape,
        Some(&strides),
        Expr::from(raw.offset),
        mask.as_deref(),
    )
    .ok()?;
    Some((cx, v, b))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn both_engines_index_as_numpy_does(
        raw in arb_raw(3, 0, 4),
        items in prop::collection::vec(arb_item(), 0..5),
    ) {
        let Some(cv) = raw.concrete_view() else {
            return Ok(());
        };
        let cx = Scope::new();
        let want = model_index(&Model::of(&raw.shape, &raw.strides, raw.offset, raw.mask.as_deref()), &items)
            .map(|m| m.table);
        // The exact engine: one view, or a refusal of a masked-out scalar.
        match cv.index(&cx, &items) {
            Ok(v) => prop_assert_eq!(Some(v.offsets().expect("offsets")), want.clone(), "exact {}", cv),
            Err(Error::NotRepresentable { .. }) => prop_assert!(want.is_some()),
            Err(_) => prop_assert!(want.is_none(), "exact refuses {:?} on {}", items, cv),
        }
        // The exact engine in a stack, which keeps what one view cannot hold.
        let st = ViewStack::new(View::from(cv.clone())).index(&cx, &items);
        let got = st.and_then(|s| s.bind(&cx, &Bindings::new())).and_then(|s| s.offsets());
        prop_assert_eq!(got.ok(), want.clone(), "exact stack on {}", cv);
        // The symbolic engine, bound afterwards.
        let Some((scx, sv, b)) = symbolic_view(&raw) else {
            return Ok(());
        };
        let sitems: Vec<IndexItem<Expr>> = items.iter().map(|i| i.to_expr()).collect();
        let st = ViewStack::new(sv.clone()).index(&scx, &sitems);
        let got = st.and_then(|s| s.bind(&scx, &b)).and_then(|s| s.offsets());
        prop_assert_eq!(got.ok(), want, "symbolic {} bound to {:?}", sv, raw.shape);
    }
}
