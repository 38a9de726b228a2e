//! Random chains of ops: View, ViewStack and the naive model agree element for element.

use proptest::prelude::*;
use symshape::Scope;
use symshape_view::concrete::merge;
use symshape_view::{View, ViewOps, ViewStack};

use crate::engine::model_of_view;
use crate::model::{random_index, Model};
use crate::strategy::{arb_raw, factor_shape};

/// One random op; its parameters are read modulo the current shape.
#[derive(Clone, Debug)]
struct Step {
    kind: u8,
    params: Vec<u32>,
}

fn arb_step() -> impl Strategy<Value = Step> {
    (0u8..8, prop::collection::vec(any::<u32>(), 16))
        .prop_map(|(kind, params)| Step { kind, params })
}

/// Applies `step` to the model and returns it with the view and stack versions.
enum Applied {
    Both {
        model: Model,
        view: Result<View, symshape_view::Error>,
        stack: ViewStack,
    },
    Skip,
}

impl Applied {
    /// The results of one op on the model, the view and the stack; the stack op
    /// must succeed.
    fn both(
        model: Model,
        view: Result<View, symshape_view::Error>,
        stack: Result<ViewStack, symshape_view::Error>,
    ) -> Applied {
        Applied::Both {
            model,
            view,
            stack: stack.expect("stack op"),
        }
    }
}

fn apply(model: &Model, v: &View, s: &ViewStack, step: &Step) -> Applied {
    let shape = model.shape.clone();
    let rank = shape.len();
    let numel: i64 = shape.iter().product();
    let p = &step.params;
    let q = |i: usize, m: i64| (p[i % p.len()] as i64) % m.max(1);
    let cx = Scope::new();
    match step.kind {
        0 => {
            let t = factor_shape(numel, p);
            Applied::both(model.reshape(&t), v.reshape(&cx, &t), s.reshape(&cx, &t))
        }
        1 => {
            let mut axes: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                axes.swap(i, q(i, i as i64 + 1) as usize);
            }
            Applied::both(
                model.permute(&axes),
                v.permute(&cx, &axes),
                s.permute(&cx, &axes),
            )
        }
        2 => {
            if numel > 300 {
                return Applied::Skip;
            }
            let t: Vec<i64> = if rank == 0 {
                (0..q(0, 3)).map(|i| q(i as usize + 1, 4)).collect()
            } else {
                shape
                    .iter()
                    .enumerate()
                    .map(|(i, &d)| if d == 1 { q(i, 4) } else { d })
                    .collect()
            };
            Applied::both(model.expand(&t), v.expand(&cx, &t), s.expand(&cx, &t))
        }
        3 => {
            let b = shrink_bounds(&shape, p);
            Applied::both(model.shrink(&b), v.shrink(&cx, &b), s.shrink(&cx, &b))
        }
        4 => {
            if numel > 300 {
                return Applied::Skip;
            }
            let b: Vec<(i64, i64)> = (0..rank).map(|i| (q(2 * i, 3), q(2 * i + 1, 3))).collect();
            Applied::both(model.pad(&b), v.pad(&cx, &b), s.pad(&cx, &b))
        }
        5 => {
            let f: Vec<bool> = (0..rank).map(|i| q(i, 2) == 0).collect();
            let axes: Vec<usize> = (0..rank).filter(|&i| f[i]).collect();
            Applied::both(model.flip(&f), v.flip(&cx, &axes), s.flip(&cx, &axes))
        }
        _ => {
            let (items, picks) = random_index(&shape, p);
            Applied::both(
                model.select(&picks),
                v.index(&cx, &items),
                s.index(&cx, &items),
            )
        }
    }
}

/// Random bounds of a shrink of `shape` from the draws `p`: two draws per axis, each modulo
/// the axis' size plus one, in order.
pub fn shrink_bounds(shape: &[i64], p: &[u32]) -> Vec<(i64, i64)> {
    let q = |i: usize, m: i64| (p[i % p.len()] as i64) % m.max(1);
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let (x, y) = (q(2 * i, d + 1), q(2 * i + 1, d + 1));
            (x.min(y), x.max(y))
        })
        .collect()
}

/// The bound offsets of a concrete stack, row-major.
pub fn stack_table(s: &ViewStack) -> Vec<Option<i64>> {
    s.to_concrete("offsets")
        .and_then(|c| c.offsets())
        .expect("concrete stack")
}

proptest! {

    #[test]
    fn view_stack_and_model_agree(raw in arb_raw(5, 0, 4), steps in prop::collection::vec(arb_step(), 1..7)) {
        let Ok(v0) = View::create(&Scope::new(), &raw.shape, Some(&raw.strides), raw.offset, raw.mask.as_deref()) else {
            return Ok(());
        };
        let mut model = Model::of(&raw.shape, &raw.strides, raw.offset, raw.mask.as_deref());
        let mut v = Some(v0.clone());
        let mut s = ViewStack::new(v0);
        for step in &steps {
            let cur = v.clone().unwrap_or_else(|| s.top().clone());
            match apply(&model, &cur, &s, step) {
                Applied::Skip => continue,
                Applied::Both { model: m, view, stack } => {
                    let oracle = m.one_view();
                    if v.is_some() {
                        match &view {
                            Ok(nv) => {
                                prop_assert_eq!(model_of_view(&nv.to_concrete("test").unwrap()), m.clone(), "view after {:?}", step);
                            }
                            Err(e) => {
                                // Only representability may fail, and only when the model says so.
                                prop_assert!(matches!(e, symshape_view::Error::NotRepresentable { .. }), "{e}");
                                prop_assert!(oracle.is_none(), "view refused {:?} ({}) but oracle found {:?}", step, e, oracle);
                            }
                        }
                    }
                    v = if v.is_some() { view.ok() } else { None };
                    prop_assert_eq!(&stack_table(&stack), &m.table, "stack {} after {:?}", stack, step);
                    prop_assert_eq!(&stack.top().shape().iter().map(|e| e.as_i64().unwrap()).collect::<Vec<_>>(), &m.shape);
                    // A small stack whose whole mapping is one view is one view.
                    if m.table.len() <= 4096 && oracle.is_some() {
                        prop_assert_eq!(stack.views().len(), 1, "stack {} is one view", stack);
                    }
                    // Adjacent views left unmerged are never one view together.
                    let views: Vec<_> = stack.views().iter().map(|x| x.to_concrete("test").unwrap()).collect();
                    for pair in views.windows(2) {
                        let comp = model_of_view(&pair[0]).compose(&model_of_view(&pair[1]));
                        prop_assert!(comp.one_view().is_none(), "unmerged pair in {}", stack);
                        prop_assert_eq!(merge(&pair[0], &pair[1]).unwrap(), None);
                    }
                    model = m;
                    s = stack;
                }
            }
        }
    }
}
