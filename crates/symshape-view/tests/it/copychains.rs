//! Copies at random places in random chains of view ops, against a NumPy-style model: a
//! copy is a new buffer holding the elements in row-major order, and the ops after it
//! read that buffer through its row-major layout. The stack's storage
//! (`ViewStack::on_storage`) must give the model's offsets into the copy, its flags and
//! strides, and its sharing answers; the whole stack must read the model's elements.

use proptest::prelude::*;
use symshape::Scope;
use symshape_view::{ConcreteView, DType, MemoryOverlap, Op, View, ViewOps, ViewStack};

use crate::chains::{shrink_bounds, stack_table};
use crate::model::{indices, random_index, Model, Pick};
use crate::strategy::{arb_raw, factor_shape};

/// The model of a tensor: offsets into the buffer `storage` (row-major table), and the
/// buffers: buffer 0 is the input, whose element at offset `o` is `o`; each later one
/// is a copy, the elements of the tensor it copied in row-major order (`None` where
/// that tensor read padding).
#[derive(Clone, Debug)]
struct Tensor {
    storage: usize,
    model: Model,
}

struct Buffers(Vec<Vec<Option<i64>>>);

impl Buffers {
    /// The element each entry of `t` reads.
    fn values(&self, t: &Tensor) -> Vec<Option<i64>> {
        t.model
            .table
            .iter()
            .map(|o| {
                o.and_then(|o| match t.storage {
                    0 => Some(o),
                    k => self.0[k - 1][o as usize],
                })
            })
            .collect()
    }

    /// A copy of `t` into a new buffer, read row-major as `shape`.
    fn copy(&mut self, t: &Tensor, shape: Vec<i64>) -> Tensor {
        let values = self.values(t);
        let n = values.len() as i64;
        self.0.push(values);
        Tensor {
            storage: self.0.len(),
            model: Model {
                shape,
                table: (0..n).map(Some).collect(),
            },
        }
    }
}

/// NumPy's `C_CONTIGUOUS` (`c`) or `F_CONTIGUOUS` of a table, from its definition: empty,
/// or unmasked with consecutive offsets in row-major (column-major) order.
fn naive_flag(m: &Model, c: bool) -> bool {
    let all = indices(&m.shape);
    let Some(first) = all.first() else {
        return true;
    };
    let Some(base) = m.get(first) else {
        return false;
    };
    all.iter().all(|idx| {
        let mut k = 0;
        let axes: Vec<usize> = if c {
            (0..idx.len()).collect()
        } else {
            (0..idx.len()).rev().collect()
        };
        for a in axes {
            k = k * m.shape[a] + idx[a];
        }
        m.get(idx) == Some(base + k)
    })
}

/// The one view the stack's storage is read through, bound, when it is one view.
fn storage_view(s: &ViewStack) -> Option<ConcreteView> {
    let on = s.on_storage().to_concrete("test").expect("concrete");
    match on.levels() {
        [v] => Some(v.clone()),
        _ => None,
    }
}

/// Which copying op a step inserts.
fn copy_op(kind: u8) -> Op<i64> {
    match kind % 5 {
        0 => Op::Copy,
        1 => Op::FlattenCopy,
        2 => Op::AsType {
            from: DType::Float32,
            to: DType::Int64,
            copy: false,
        },
        3 => Op::Contiguous,
        _ => Op::Ravel,
    }
}

/// One random view op on `t`, as the model and as an `Op`, or `None` to skip.
fn view_op(t: &Tensor, kind: u8, p: &[u32]) -> Option<(Model, Op<i64>)> {
    let m = &t.model;
    let shape = m.shape.clone();
    let rank = shape.len();
    let numel: i64 = shape.iter().product();
    let q = |i: usize, k: i64| (p[i % p.len()] as i64) % k.max(1);
    Some(match kind % 7 {
        0 => {
            let s = factor_shape(numel, p);
            (m.reshape(&s), Op::Reshape(s))
        }
        1 => {
            let mut axes: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                axes.swap(i, q(i, i as i64 + 1) as usize);
            }
            (m.permute(&axes), Op::Permute(axes))
        }
        2 if numel <= 200 => {
            let s: Vec<i64> = shape
                .iter()
                .enumerate()
                .map(|(i, &d)| if d == 1 { q(i, 4) } else { d })
                .collect();
            (m.expand(&s), Op::Expand(s))
        }
        3 => {
            let b = shrink_bounds(&shape, p);
            (m.shrink(&b), Op::Shrink(b))
        }
        4 if numel <= 200 => {
            let b: Vec<(i64, i64)> = (0..rank).map(|i| (q(2 * i, 2), q(2 * i + 1, 2))).collect();
            (m.pad(&b), Op::Pad(b))
        }
        5 => {
            let f: Vec<bool> = (0..rank).map(|i| q(i, 2) == 0).collect();
            let axes: Vec<usize> = (0..rank).filter(|&i| f[i]).collect();
            (m.flip(&f), Op::Flip(axes))
        }
        6 => {
            let (items, picks) = random_index(&shape, p);
            (m.select(&picks), Op::Index(items))
        }
        _ => return None,
    })
}

/// `copies` of `op` on `s` (NumPy's `OWNDATA` of the result): the model copies first,
/// as NumPy's `reshape` does (`copy` then the view).
fn copy_op_on_model(bufs: &mut Buffers, t: &Tensor, op: &Op<i64>) -> Tensor {
    let numel = t.model.table.len() as i64;
    let flat = matches!(op, Op::FlattenCopy | Op::Ravel);
    let shape = if flat {
        vec![numel]
    } else {
        t.model.shape.clone()
    };
    let always = matches!(op, Op::Copy | Op::FlattenCopy | Op::AsType { .. });
    if always || !naive_flag(&t.model, true) {
        return bufs.copy(t, shape);
    }
    Tensor {
        storage: t.storage,
        model: t.model.reshape(&shape),
    }
}

#[derive(Clone, Debug)]
struct Step {
    copy: bool,
    kind: u8,
    params: Vec<u32>,
}

fn arb_step() -> impl Strategy<Value = Step> {
    (
        prop::bool::weighted(0.3),
        any::<u8>(),
        prop::collection::vec(any::<u32>(), 12),
    )
        .prop_map(|(copy, kind, params)| Step { copy, kind, params })
}

/// The model's and the stack's answers agree on `s` read as `t`.
fn check(bufs: &Buffers, t: &Tensor, s: &ViewStack) -> Result<(), TestCaseError> {
    let values: Vec<Option<i64>> = bufs.values(t);
    prop_assert_eq!(stack_table(s), values, "elements of {}", s);
    prop_assert_eq!(
        stack_table(&s.on_storage()),
        t.model.table.clone(),
        "offsets into the storage of {}",
        s
    );
    if t.storage > 0 {
        prop_assert!(s.storage_level() > 0, "{} records its copy", s);
    }
    let Some(v) = storage_view(s) else {
        // Only a view that reads padding into rank 0 (which no single view can mark
        // invalid) stays a stack without a copy.
        prop_assert!(
            t.model.table.contains(&None),
            "storage of {} is one view",
            s
        );
        return Ok(());
    };
    if v.mask().is_some() {
        return Ok(());
    }
    let flags = v.numpy_flags().expect("flags");
    prop_assert_eq!(flags.c_contiguous, naive_flag(&t.model, true), "C of {}", s);
    prop_assert_eq!(
        flags.f_contiguous,
        naive_flag(&t.model, false),
        "F of {}",
        s
    );
    // The strides of the axes that step (NumPy's `strides`, in elements).
    if !t.model.table.is_empty() {
        let origin = vec![0; t.model.shape.len()];
        for (a, &d) in t.model.shape.iter().enumerate() {
            if d < 2 {
                continue;
            }
            let mut next = origin.clone();
            next[a] = 1;
            let step = t
                .model
                .get(&next)
                .zip(t.model.get(&origin))
                .map(|(x, y)| x - y);
            prop_assert_eq!(Some(v.strides()[a]), step, "stride {} of {}", a, s);
        }
    }
    Ok(())
}

/// `t` and `s` copied first where `op` copies them (`ViewStack::copies`, NumPy's
/// `OWNDATA`): NumPy's `reshape` that cannot view copies, then views the copy.
fn copy_for(
    cx: &Scope,
    bufs: &mut Buffers,
    (t, s): (&Tensor, &ViewStack),
    op: &Op<i64>,
) -> (Tensor, ViewStack) {
    if !s.copies(cx, op).expect("op") {
        return (t.clone(), s.clone());
    }
    let t = bufs.copy(t, t.model.shape.clone());
    (t, s.apply_dim(cx, &Op::<i64>::Copy).expect("copy"))
}

/// Two rows of `s` (`t`): `shares_memory` of their views of the storage is the model's
/// answer (a common offset into the same buffer).
fn check_rows(bufs: &mut Buffers, t: &Tensor, s: &ViewStack) -> Result<(), TestCaseError> {
    let cx = Scope::new();
    if t.model.shape.first().is_none_or(|&d| d < 2) {
        return Ok(());
    }
    // Rows of one array: a copy the selection makes is made once, before both.
    let (t, s) = copy_for(&cx, bufs, (t, s), &Op::Select { axis: 0, index: 0 });
    let row = |i: i64| {
        let picks: Vec<Pick> = std::iter::once(Pick::Int(i))
            .chain(t.model.shape[1..].iter().map(|&d| Pick::Range {
                first: 0,
                count: d,
                step: 1,
            }))
            .collect();
        let model = t.model.select(&picks);
        let stack = s.select(&cx, 0, i).expect("select");
        (
            Tensor {
                storage: t.storage,
                model,
            },
            stack,
        )
    };
    let ((ta, sa), (tb, sb)) = (row(0), row(1));
    check(bufs, &ta, &sa)?;
    check(bufs, &tb, &sb)?;
    let (Some(va), Some(vb)) = (storage_view(&sa), storage_view(&sb)) else {
        return Ok(());
    };
    if va.mask().is_some() || vb.mask().is_some() {
        return Ok(());
    }
    let shared = ta
        .model
        .table
        .iter()
        .flatten()
        .any(|o| tb.model.table.contains(&Some(*o)));
    let got = va.shares_memory(&vb, u64::MAX);
    prop_assert_eq!(
        got == MemoryOverlap::Yes,
        shared,
        "rows of {}: {:?}",
        s,
        got
    );
    prop_assert!(shared || got == MemoryOverlap::No);
    if shared {
        prop_assert!(va.may_share_memory(&vb));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A copy anywhere in a chain: NumPy's copy semantics (reshape copies where it cannot
    /// view, as `copy` then the view), against the model of buffers.
    #[test]
    fn copies_at_random_places_start_a_new_buffer(raw in arb_raw(3, 0, 4), steps in prop::collection::vec(arb_step(), 1..7)) {
        let cx = Scope::new();
        let Ok(v0) = View::create(&cx, &raw.shape, Some(&raw.strides), raw.offset, raw.mask.as_deref()) else {
            return Ok(());
        };
        let mut bufs = Buffers(Vec::new());
        let mut t = Tensor { storage: 0, model: Model::of(&raw.shape, &raw.strides, raw.offset, raw.mask.as_deref()) };
        let mut s = ViewStack::new(v0);
        // The same ops in place.
        let mut in_place = s.clone();
        check(&bufs, &t, &s)?;
        for step in &steps {
            if step.copy {
                let op = copy_op(step.kind);
                t = copy_op_on_model(&mut bufs, &t, &op);
                s = s.apply_dim(&cx, &op).expect("copy op");
                in_place.apply_in_place(&cx, &op.to_expr()).expect("copy op");
            } else {
                if view_op(&t, step.kind, &step.params).is_none() {
                    continue;
                }
                let op = view_op(&t, step.kind, &step.params).expect("op").1;
                let copies = s.copies(&cx, &op).expect("op");
                (t, s) = copy_for(&cx, &mut bufs, (&t, &s), &op);
                t.model = view_op(&t, step.kind, &step.params).expect("the same op").0;
                s = s.apply_dim(&cx, &op).expect("view op");
                if copies {
                    in_place.apply_in_place(&cx, &Op::Copy).expect("copy");
                }
                in_place.apply_in_place(&cx, &op.to_expr()).expect("view op");
            }
            check(&bufs, &t, &s)?;
            prop_assert_eq!(&in_place, &s);
        }
        check_rows(&mut bufs, &t, &s)?;
    }
}

/// Pinned from the property test: the element of a rank-0 view that reads padding is
/// invalid, which no single view can say, so the stack keeps two levels and records no
/// copy; its storage is the input's and reads nothing valid.
#[test]
fn a_rank_0_read_of_padding_stays_a_stack_without_a_copy() {
    let cx = Scope::new();
    let v = View::create(&cx, &[1i64], Some(&[0i64]), 0, None).expect("view");
    let padded = ViewStack::new(v).pad(&cx, &[(0i64, 1i64)]).expect("pad");
    let row = padded.select(&cx, 0, 1i64).expect("select");
    assert_eq!(row.views().len(), 2);
    assert_eq!(row.storage_level(), 0);
    assert_eq!(stack_table(&row.on_storage()), vec![None]);
    assert_eq!(stack_table(&row), vec![None]);
}
