//! PyTorch's ops that reorder axes by the rank (`t`, `H`, `mH`, `adjoint`, `mT`, `T`),
//! `view(*shape)`, `as_strided`, NumPy's `sliding_window_view` and `rot90`, each against
//! the model on random views, with their errors and their symbolic forms.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope};
use symshape_view::{ConcreteView, Error, Op, Trace, View, ViewOps, ViewStack};

use crate::chains::stack_table as table;
use crate::engine::model_of_view;
use crate::errors::line;
use crate::model::Model;
use crate::scope_with;
use crate::strategy::{arb_raw, factor_shape, Raw};

/// The axes PyTorch's rule gives for `name` on rank `rank`, or `None` where PyTorch
/// raises; written from PyTorch's `TensorShape.cpp` (`numpy_T`, `t`, `matrix_H`,
/// `_adjoint`), independently of the library.
fn torch_axes(name: &str, rank: usize) -> Option<Vec<usize>> {
    let mut axes: Vec<usize> = (0..rank).collect();
    match (name, rank) {
        ("T", _) => axes.reverse(),
        ("mT" | "mH" | "adjoint", 1) | ("H", 1) => return None,
        ("mT" | "mH" | "adjoint", 0) | ("H" | "t", 0) | ("t", 1) => {}
        ("mT" | "mH" | "adjoint", _) | ("H" | "t", 2) => axes.swap(rank - 2, rank - 1),
        _ => return None,
    }
    Some(axes)
}

/// The named method of PyTorch's op `name` (as [`torch_axes`] names it) on `x`.
fn by_torch_name<V: ViewOps>(x: &V, cx: &Scope, name: &str) -> symshape_view::Result<V> {
    match name {
        "T" => x.reverse_axes(cx),
        "mT" => x.matrix_transpose(cx),
        "t" => x.t(cx),
        "H" => x.conj_transpose(cx),
        "mH" => x.matrix_conj_transpose(cx),
        _ => x.adjoint(cx),
    }
}

/// A random view and `as_strided` arguments for it: a shape of rank below 3, a stride for
/// each of its axes and an offset, the strides and the offset sometimes negative.
fn arb_as_strided() -> impl Strategy<Value = (Raw, Vec<i64>, Vec<i64>, i64)> {
    (
        arb_raw(3, 0, 4),
        prop::collection::vec(0i64..4, 0..3),
        prop::collection::vec(-1i64..5, 3),
        -1i64..8,
    )
        .prop_map(|(raw, shape, mut strides, offset)| {
            strides.truncate(shape.len());
            (raw, shape, strides, offset)
        })
}

proptest! {
    #[test]
    fn rank_transposes_match_pytorch(raw in arb_raw(4, 0, 4)) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let m = model_of_view(&c);
        let rank = c.ndim();
        let v = View::from(&c);
        let st = ViewStack::new(v.clone());
        let ops: [(&str, Op<i64>); 6] = [
            ("T", Op::ReverseAxes),
            ("mT", Op::MatrixTranspose),
            ("t", Op::T),
            ("H", Op::ConjTranspose),
            ("mH", Op::MatrixConjTranspose),
            ("adjoint", Op::Adjoint),
        ];
        for (name, op) in ops {
            let named = by_torch_name(&v, &cx, name);
            let concrete = by_torch_name(&c, &cx, name);
            prop_assert_eq!(c.apply(&op).ok(), concrete.as_ref().ok().cloned(), "{}", name);
            match torch_axes(name, rank) {
                Some(axes) => {
                    let want = m.permute(&axes);
                    let got = named.map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
                    prop_assert_eq!(&model_of_view(got.as_concrete().expect("c")), &want, "{}", name);
                    prop_assert_eq!(&model_of_view(&concrete.expect("concrete")), &want, "{}", name);
                    prop_assert_eq!(table(&st.apply_dim(&cx, &op).expect("stack")), want.table, "{}", name);
                }
                None => {
                    for e in [named.err(), concrete.err(), st.apply_dim(&cx, &op).err()] {
                        let e = e.expect("PyTorch raises");
                        prop_assert!(matches!(&e, Error::Invalid { op, .. } if *op == name), "{}: {}", name, e);
                    }
                }
            }
        }
        // The aliases are their ops.
        if rank >= 2 {
            prop_assert_eq!(v.swapdims(&cx, 0, 1).ok(), v.transpose(&cx, 0, 1).ok());
            prop_assert_eq!(v.moveaxis(&cx, 0, rank - 1).ok(), v.movedim(&cx, 0, rank - 1).ok());
        }
        prop_assert_eq!(&st.detach(), &st);
        prop_assert_eq!(&v.alias(), &v);
    }

    /// `view(*shape)` succeeds exactly when the model's reshape is one view of the top
    /// view, and then reads the model's elements; on a stack it never adds a view.
    #[test]
    fn view_shape_never_copies(raw in arb_raw(4, 0, 4), seed in prop::collection::vec(any::<u32>(), 4)) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let m = model_of_view(&c);
        let target = factor_shape(c.numel(), &seed);
        let want = m.reshape(&target);
        let st = ViewStack::new(View::from(&c));
        match (st.view_shape(&cx, &target), want.one_view()) {
            (Ok(r), Some(_)) => {
                prop_assert_eq!(r.views().len(), 1);
                prop_assert_eq!(table(&r), want.table.clone());
                prop_assert_eq!(&model_of_view(&c.view_shape(&cx, &target).expect("concrete")), &want);
            }
            (Err(Error::NotRepresentable { op, .. }), None) => {
                prop_assert_eq!(op, "view_shape");
                prop_assert!(c.view_shape(&cx, &target).is_err());
                // `reshape` pushes a view instead.
                let pushed = st.reshape(&cx, &target).expect("reshape");
                prop_assert_eq!(table(&pushed), want.table);
            }
            (got, oracle) => prop_assert!(false, "view_shape {:?} vs one view {:?}", got, oracle),
        }
        // On a stack of two views, only the top view decides.
        let two = ViewStack::new(View::from(&c)).reshape(&cx, &[c.numel()]).expect("flat");
        let before = two.views().len();
        if let Ok(r) = two.view_shape(&cx, &target) {
            prop_assert!(r.views().len() <= before);
            prop_assert_eq!(table(&r), Model { shape: target.clone(), table: m.table.clone() }.table);
        }
    }

    /// `as_strided` reads the storage of the view with the new fields: PyTorch refuses a
    /// negative stride or offset and an element outside the storage, which for one view
    /// ends after the last element it reaches and for a stack is the view below the top.
    #[test]
    fn as_strided_reads_the_storage((raw, shape, strides, offset) in arb_as_strided()) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let m = model_of_view(&c);
        let storage = m.table.iter().flatten().max().map_or(0, |&hi| hi + 1);
        let fields = Model::of(&shape, &strides, offset, None);
        let need = if fields.table.is_empty() {
            0
        } else {
            fields.table.iter().flatten().max().map_or(0, |&hi| hi + 1)
        };
        let legal = strides.iter().all(|&t| t >= 0) && offset >= 0;
        let got = View::from(&c).torch_as_strided(&cx, &shape, &strides, offset);
        match got {
            Ok(v) => {
                prop_assert!(legal && need <= storage, "accepted need {} of storage {}", need, storage);
                prop_assert_eq!(model_of_view(v.as_concrete().expect("c")), fields.clone());
            }
            Err(e) => prop_assert!(!legal || need > storage, "{}", e),
        }
        // On a stack, the storage is the view below the top: all of its elements.
        let st = ViewStack::new(View::from(&c)).reshape(&cx, &[c.numel()]).expect("flat");
        let st = st.unsqueeze(&cx, 0).expect("unsqueeze");
        if let [.., lower, _] = st.views() {
            let lower_n = lower.as_concrete().expect("c").numel();
            let below = model_of_view(lower.as_concrete().expect("c"));
            match st.torch_as_strided(&cx, &shape, &strides, offset) {
                Ok(r) => {
                    prop_assert!(legal && need <= lower_n);
                    prop_assert_eq!(table(&r), below.compose(&fields).table);
                }
                Err(e) => prop_assert!(!legal || need > lower_n, "{}", e),
            }
        }
    }

    /// One `as_strided` rule for both engines: on a symbolic view (offset shifted by `z`,
    /// bound to 0) with one argument replaced by the symbol `m`, the result bound at `m`
    /// is the exact engine's result on the constant view and arguments, and the op or its
    /// binding is refused exactly where the exact engine refuses it.
    #[test]
    fn symbolic_as_strided_binds_to_the_exact_op(
        (raw, shape, strides, offset) in arb_as_strided(),
        which in 0usize..3,
    ) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let want = c.torch_as_strided(&Scope::new(), &shape, &strides, offset);
        let (cx, [z, m]) = scope_with(["z 0..=1", "m -1..=8"]);
        let lits = |v: &[i64]| v.iter().map(|&x| Expr::from(x)).collect::<Vec<_>>();
        let mask: Option<Vec<(Expr, Expr)>> =
            c.mask().map(|m| m.iter().map(|&(b, e)| (Expr::from(b), Expr::from(e))).collect());
        let sym = View::create(&cx, &lits(c.shape()), Some(&lits(c.strides())), Expr::from(c.offset()) + z, mask.as_deref())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (mut sh, mut st, mut off) = (lits(&shape), lits(&strides), Expr::from(offset));
        let value = match which {
            0 => { off = m; offset }
            1 if !shape.is_empty() => { st[0] = m; strides[0] }
            2 if !shape.is_empty() => { sh[0] = m; shape[0] }
            _ => return Ok(()),
        };
        let mut b = Bindings::new();
        b.set(z, 0).expect("z");
        b.set(m, value).expect("m");
        let got = sym.torch_as_strided(&cx, &sh, &st, off).and_then(|v| v.bind(&cx, &b));
        match (got, want) {
            (Ok(g), Ok(w)) => prop_assert_eq!(model_of_view(&g), model_of_view(&w)),
            (Err(_), Err(_)) => {}
            (g, w) => prop_assert!(false, "symbolic, bound: {:?}; exact: {:?}", g, w),
        }
    }

    /// NumPy's `sliding_window_view`, written from its definition: the output index
    /// `(i..., w...)` reads `x[i + w]` on the windowed axes, the windowed axes keep
    /// `dim - w + 1` indices (repeatedly, for an axis listed twice).
    #[test]
    fn sliding_window_view_matches_numpy(
        raw in arb_raw(3, 0, 5),
        window in prop::collection::vec(-1i64..4, 0..4),
        axes in prop::option::of(prop::collection::vec(0usize..4, 0..4)),
    ) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let m = model_of_view(&c);
        let rank = c.ndim();
        let listed: Vec<usize> = axes.clone().unwrap_or_else(|| (0..rank).collect());
        let mut trimmed = c.shape().to_vec();
        let mut ok = listed.len() == window.len() && window.iter().all(|&w| w >= 0);
        if ok {
            for (&a, &w) in listed.iter().zip(&window) {
                if a >= rank || trimmed[a] < w {
                    ok = false;
                    break;
                }
                trimmed[a] -= w - 1;
            }
        }
        let st = ViewStack::new(View::from(&c));
        let got = st.sliding_window_view(&cx, &window, axes.as_deref());
        if !ok {
            let e = got.expect_err("NumPy raises");
            prop_assert!(matches!(&e, Error::Invalid { op: "sliding_window_view", .. }), "{}", e);
            return Ok(());
        }
        let mut shape = trimmed.clone();
        shape.extend_from_slice(&window);
        let want = m.map(shape, |idx| {
            let mut src = idx[..rank].to_vec();
            for (k, &a) in listed.iter().enumerate() {
                src[a] += idx[rank + k];
            }
            Some(src)
        });
        let got = got.map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(table(&got), want.table.clone());
        match c.sliding_window_view(&cx, &window, axes.as_deref()) {
            Ok(v) => prop_assert_eq!(model_of_view(&v), want),
            Err(e) => prop_assert!(matches!(e, Error::NotRepresentable { .. }) && c.mask().is_some(), "{}", e),
        }
    }
}

/// Symbolic `view_shape`, `as_strided`, `t` and `sliding_window_view` bind to the
/// concrete ops on the bound views, for every value of the symbol.
#[test]
fn symbolic_torch_ops_agree_with_concrete() {
    let (cx, [n]) = scope_with(["n 0..=5"]);
    let sym = View::row_major(&cx, &[n, Expr::from(4)]).expect("view");
    let st = ViewStack::new(sym.clone());
    let ops: Vec<Op> = vec![
        Op::ViewShape(vec![n * 2, Expr::from(2)]),
        Op::T,
        Op::ConjTranspose,
        Op::AsStrided {
            shape: vec![n, Expr::from(2)],
            strides: vec![Expr::from(3), Expr::from(1)],
            offset: Expr::from(1),
        },
        Op::SlidingWindowView {
            window: vec![Expr::from(2)],
            axes: Some(vec![1]),
        },
        Op::SlidingWindowView {
            window: vec![n - 1, Expr::from(4)],
            axes: None,
        },
    ];
    for op in &ops {
        let got = st.apply(&cx, op).expect("symbolic op");
        for value in 0..=5 {
            let mut b = Bindings::new();
            b.set(n, value).expect("n");
            let c = ConcreteView::contiguous(&[value, 4]).expect("c");
            let k = op.map(|x| x.eval(&b).expect("bound"));
            let want = ViewStack::new(View::from(&c)).apply_dim(&Scope::new(), &k);
            let bound = got.bind(&cx, &b);
            match (bound, want) {
                (Ok(g), Ok(w)) => {
                    let w = w.to_concrete("test").expect("c");
                    assert_eq!(g.offsets().ok(), w.offsets().ok(), "{op} at n = {value}");
                }
                (Err(_), Err(_)) => {}
                (g, w) => panic!("{op} at n = {value}: bound {g:?}, concrete {w:?}"),
            }
        }
    }
    // The symbolic `view_shape` of a transpose is refused: one view only for n <= 1.
    let t = sym.permute(&cx, &[1, 0]).expect("transpose");
    insta::assert_snapshot!(t.view_shape(&cx, &[n * 4]).expect_err("not one view").to_string(), @"view_shape: view size [4*n] is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces) for every value of the symbols, for view [4, n] with strides [1, 4]; use .reshape(...) instead");
    // `as_strided` beyond a symbolic storage keeps the bound as a guard.
    let far = st
        .torch_as_strided(&cx, &[Expr::from(4)], &[n], Expr::from(0))
        .expect("guarded");
    insta::assert_snapshot!(far.guards_text(), @"as_strided: 3*n + 1 <= min(1, 4*n)*max(0, 4*n - 4) + 4*min(1, 4*n) (the last element reached is within the storage of view [n, 4] with strides [4, 1], up to the last element it reaches)");
}

/// A replayed `view_as` records `view_shape`, so it keeps refusing copies on a view that
/// needs one, where a replayed `reshape_as` pushes a view.
#[test]
fn view_as_replays_as_view_shape() {
    let cx = Scope::new();
    let a = View::contiguous(&[2, 6]).expect("a");
    let other = View::contiguous(&[3, 4]).expect("other");
    let mut trace = Trace::new(a.clone());
    let viewed = ViewStack::new(a.clone())
        .view_as(&cx, &other)
        .expect("contiguous input");
    trace
        .apply(&cx, &Op::ViewShape(other.shape().to_vec()))
        .expect("record");
    assert_eq!(trace.stack(), &viewed);
    let transposed = a.permute(&cx, &[1, 0]).expect("t");
    let replay = trace
        .replay(&cx, transposed.clone())
        .expect_err("a transpose needs a copy");
    insta::assert_snapshot!(replay.to_string(), @"view_shape: view size [3, 4] is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces), for view [6, 2] with strides [1, 6]; use .reshape(...) instead");
    let e = ViewStack::new(transposed)
        .view_as(&cx, &other)
        .expect_err("view_as");
    assert!(
        matches!(e, Error::NotRepresentable { op: "view_as", .. }),
        "{e}"
    );
}

#[test]
fn torch_op_errors() {
    let cx = Scope::new();
    let v = |shape: &[i64]| View::contiguous(shape).expect("view");
    let lines = [
        line("t rank 3", v(&[2, 3, 4]).t(&cx)),
        line("H rank 1", v(&[3]).conj_transpose(&cx)),
        line("H rank 3", v(&[2, 3, 4]).conj_transpose(&cx)),
        line("mT rank 1", v(&[3]).matrix_transpose(&cx)),
        line("mH rank 1", v(&[3]).matrix_conj_transpose(&cx)),
        line("adjoint rank 1", v(&[3]).adjoint(&cx)),
        line(
            "view_shape transposed",
            v(&[3, 2])
                .permute(&cx, &[1, 0])
                .and_then(|t| t.view_shape(&cx, &[6i64])),
        ),
        line("view_shape count", v(&[2, 3]).view_shape(&cx, &[5i64])),
        line(
            "as_strided negative stride",
            v(&[6]).torch_as_strided(&cx, &[3i64], &[-1i64], 2),
        ),
        line(
            "as_strided negative offset",
            v(&[6]).torch_as_strided(&cx, &[3i64], &[1i64], -1),
        ),
        line(
            "as_strided out of storage",
            v(&[6]).torch_as_strided(&cx, &[4i64], &[2i64], 0),
        ),
        line(
            "as_strided rank",
            v(&[6]).torch_as_strided(&cx, &[2i64, 3], &[3i64], 0),
        ),
        line(
            "sliding_window_view all axes",
            v(&[4, 5]).sliding_window_view(&cx, &[2i64], None),
        ),
        line(
            "sliding_window_view axes",
            v(&[4, 5]).sliding_window_view(&cx, &[2i64, 2], Some(&[1])),
        ),
        line(
            "sliding_window_view negative",
            v(&[4, 5]).sliding_window_view(&cx, &[-1i64], Some(&[0])),
        ),
        line(
            "sliding_window_view too large",
            v(&[4, 5]).sliding_window_view(&cx, &[3i64, 3], Some(&[0, 0])),
        ),
        line(
            "sliding_window_view axis",
            v(&[4, 5]).sliding_window_view(&cx, &[2i64], Some(&[2])),
        ),
    ];
    insta::assert_snapshot!(lines.join("\n"));
}

/// NumPy's `rot90(m, k, axes)` written as its index rule, independently of the library's
/// lowering: a quarter turn from axis `a` towards `b` reads `m[.., j_b, .., n_b - 1 - j_a, ..]`
/// at `[.., j_a, .., j_b, ..]` (so `rot90(m)[i][j] = m[j][n1 - 1 - i]` for a matrix).
fn rot90_model(m: &Model, k: i64, a: usize, b: usize) -> Model {
    let n = m.shape.clone();
    let turns = k.rem_euclid(4);
    let mut shape = n.clone();
    if turns % 2 == 1 {
        shape.swap(a, b);
    }
    m.map(shape, |j| {
        let mut i = j.to_vec();
        match turns {
            0 => {}
            1 => (i[a], i[b]) = (j[b], n[b] - 1 - j[a]),
            2 => (i[a], i[b]) = (n[a] - 1 - j[a], n[b] - 1 - j[b]),
            _ => (i[a], i[b]) = (n[a] - 1 - j[b], j[a]),
        }
        Some(i)
    })
}

proptest! {
    /// `rot90` on random views (masked ones included), any number of turns, any plane:
    /// the concrete view, the symbolic view and the stack read the model's elements, and
    /// an axis out of range or a repeated axis is an error naming `rot90` in all three.
    #[test]
    fn rot90_turns_the_plane(raw in arb_raw(4, 0, 4), k in -6i64..7, a in 0usize..5, b in 0usize..5) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let v = View::from(&c);
        let st = ViewStack::new(v.clone());
        let got = [
            c.rot90(&cx, k, [a, b]).map(|r| model_of_view(&r)),
            v.rot90(&cx, k, [a, b]).map(|r| model_of_view(r.as_concrete().expect("constant"))),
            st.rot90(&cx, k, [a, b]).map(|r| Model { shape: r.shape().iter().map(|d| d.as_i64().expect("constant")).collect(), table: table(&r) }),
        ];
        if a >= c.ndim() || b >= c.ndim() || a == b {
            for r in got {
                let e = r.expect_err("NumPy raises");
                prop_assert!(matches!(&e, Error::Invalid { op: "rot90", .. }), "{}", e);
            }
            return Ok(());
        }
        let want = rot90_model(&model_of_view(&c), k, a, b);
        for r in got {
            prop_assert_eq!(&r.expect("a view"), &want);
        }
    }
}

#[test]
fn rot90_errors_and_symbolic_form() {
    let (cx, [n, m]) = scope_with(["n 1..=64", "m 0..=8"]);
    let v = View::row_major(&cx, &[n, m, Expr::from(3)]).expect("view");
    let turned = v.rot90(&cx, 1, [0, 2]).expect("rot90");
    insta::assert_snapshot!(turned.to_string(), @"view shape=[3, m, n] strides=[-1, 3, 3*max(1, m)] offset=2 mask=none");
    // Four turns, and one back after one forward, give the view back.
    assert_eq!(v.rot90(&cx, 4, [0, 1]).expect("four"), v);
    assert_eq!(turned.rot90(&cx, -1, [0, 2]).expect("back"), v);
    // Bound, the symbolic turn is the turn of the bound view.
    let mut b = Bindings::new();
    b.set(n, 5).expect("n");
    b.set(m, 2).expect("m");
    let bound = ConcreteView::contiguous(&[5, 2, 3]).expect("bound");
    assert_eq!(
        turned.bind(&cx, &b).expect("binds"),
        bound.rot90(&cx, 1, [0, 2]).expect("rot90")
    );
    let c = ConcreteView::contiguous(&[2, 3]).expect("view");
    let lines = [
        line("rot90 same axes", c.rot90(&cx, 1, [1, 1])),
        line("rot90 axis range", c.rot90(&cx, 1, [0, 2])),
        line(
            "rot90 rank 1",
            ConcreteView::contiguous(&[4])
                .expect("v")
                .rot90(&cx, 1, [0, 1]),
        ),
        line("rot90 symbolic same axes", v.rot90(&cx, 3, [2, 2])),
    ];
    insta::assert_snapshot!(lines.join("\n"), @r"
    rot90 same axes: rot90: axes 1 and 1 are the same axis of view [2, 3] with strides [3, 1]; the plane of a rotation needs two
    rot90 axis range: rot90: axis 2 is out of range for view [2, 3] with strides [3, 1] of rank 2
    rot90 rank 1: rot90: axis 1 is out of range for view [4] with strides [1] of rank 1
    rot90 symbolic same axes: rot90: axes 2 and 2 are the same axis of view [n, m, 3] with strides [3*max(1, m), 3, 1]; the plane of a rotation needs two
    ");
}
