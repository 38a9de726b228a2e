//! The memory models: `reinterpret` (PyTorch's `view(dtype)`), byte layouts and
//! NumPy's contiguity flags, each against a model over explicit offset tables.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope};
use symshape_view::{ConcreteView, Error, Op, Raveled, View, ViewOps, ViewStack};

use crate::engine::model_of_view;
use crate::model::{indices, Model};
use crate::scope_with;
use crate::strategy::arb_raw;

/// The table of `from`-byte elements read as `to`-byte ones, built from bytes: each
/// new element must cover whole old elements (or one old element covers whole new
/// ones) at consecutive, aligned places; `None` when some element does not.
pub fn reinterpret_model(m: &Model, from: i64, to: i64) -> Option<Model> {
    let rank = m.shape.len();
    let last = rank - 1;
    let mut shape = m.shape.clone();
    if from > to {
        let r = from / to;
        shape[last] *= r;
        return Some(m.map(shape, |idx| {
            let mut src = idx.to_vec();
            src[last] = idx[last] / r;
            Some(src)
        }))
        .map(|mut res| {
            for (k, idx) in indices(&res.shape).iter().enumerate() {
                let mut src = idx.clone();
                src[last] = idx[last] / r;
                res.table[k] = m.get(&src).map(|o| o * r + idx[last] % r);
            }
            res
        });
    }
    let r = to / from;
    if shape[last] % r != 0 {
        return None;
    }
    shape[last] /= r;
    let mut table = Vec::new();
    for idx in indices(&shape) {
        let first: Vec<Option<i64>> = (0..r)
            .map(|j| {
                let mut src = idx.clone();
                src[last] = idx[last] * r + j;
                m.get(&src)
            })
            .collect();
        let o = first[0]?;
        let consecutive = first
            .iter()
            .enumerate()
            .all(|(j, x)| *x == Some(o + j as i64));
        if !consecutive || o % r != 0 {
            return None;
        }
        table.push(Some(o / r));
    }
    Some(Model { shape, table })
}

proptest! {
    /// On a non-empty unmasked view of rank at least 1, `reinterpret` succeeds exactly
    /// when the byte-level model is one view, and then equals it.
    #[test]
    fn reinterpret_matches_the_byte_model(
        raw in arb_raw(3, 0, 6),
        (from, to) in prop::sample::select(vec![(4i64, 2i64), (2, 4), (8, 2), (2, 8), (4, 4), (3, 2)]),
    ) {
        let cx = Scope::new();
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let got = c.reinterpret(&cx, from as usize, to as usize);
        if from == to {
            prop_assert_eq!(got.ok(), Some(c));
            return Ok(());
        }
        if c.mask().is_some() || c.ndim() == 0 || from % to != 0 && to % from != 0 {
            prop_assert!(matches!(got, Err(Error::Invalid { .. })), "{:?}", got);
            return Ok(());
        }
        let m = model_of_view(&c);
        if c.numel() == 0 {
            // No element to read: whatever the strides, the op succeeds exactly when the
            // model's shape exists, with that shape.
            let want = reinterpret_model(&m, from, to).map(|w| w.shape);
            prop_assert_eq!(got.ok().map(|v| v.shape().to_vec()), want, "{}", c);
            return Ok(());
        }
        let want = reinterpret_model(&m, from, to).filter(|w| w.one_view().is_some());
        match (got, want) {
            (Ok(v), Some(w)) => prop_assert_eq!(model_of_view(&v), w),
            (Err(_), None) => {}
            (g, w) => prop_assert!(false, "{:?} vs model {:?} for {}", g, w, c),
        }
    }

    /// NumPy's flags: C-contiguous iff the offsets in row-major order are consecutive,
    /// F-contiguous iff they are in column-major order; empty views are both.
    #[test]
    fn flags_match_consecutive_offsets(raw in arb_raw(4, 0, 4)) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let flags = c.numpy_flags();
        if c.mask().is_some() {
            prop_assert!(flags.is_err());
            return Ok(());
        }
        let flags = flags.expect("flags");
        let m = model_of_view(&c);
        let consecutive = |t: &[Option<i64>]| {
            t.windows(2).all(|w| w[1] == w[0].map(|x| x + 1))
        };
        let rev: Vec<usize> = (0..c.ndim()).rev().collect();
        prop_assert_eq!(flags.c_contiguous, consecutive(&m.table), "{}", c);
        prop_assert_eq!(flags.f_contiguous, consecutive(&m.permute(&rev).table), "{}", c);
    }

    /// Byte layouts scale every offset by the item size and load back to the view;
    /// byte strides load iff every one and the offset are multiples of the item size.
    #[test]
    fn byte_layouts_round_trip(raw in arb_raw(3, 0, 4), itemsize in 1i64..9, bump in 0i64..3) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let Ok(layout) = c.byte_layout(itemsize) else {
            prop_assert!(c.mask().is_some());
            return Ok(());
        };
        let bytes = Model::of(&layout.shape, &layout.strides, layout.offset, None);
        let m = model_of_view(&c);
        let scaled: Vec<Option<i64>> = m.table.iter().map(|o| o.map(|x| x * itemsize)).collect();
        prop_assert_eq!(&bytes.table, &scaled);
        let back = ConcreteView::from_byte_strides(&layout.shape, &layout.strides, layout.offset, itemsize);
        prop_assert_eq!(back.ok(), Some(c.clone()));
        // Moving one value off the multiples is refused.
        let mut strides = layout.strides.clone();
        let mut offset = layout.offset;
        match strides.first_mut() {
            Some(s) => *s += bump,
            None => offset += bump,
        }
        let loaded = ConcreteView::from_byte_strides(&layout.shape, &strides, offset, itemsize);
        let whole = bump % itemsize == 0;
        prop_assert_eq!(loaded.is_ok(), whole, "{:?}", loaded);
    }
}

/// Symbolic `reinterpret` binds to the concrete op's result at every size, with
/// the divisibility it needs kept as a guard.
#[test]
fn symbolic_reinterpret_agrees_with_concrete() {
    let (cx, [n]) = scope_with(["n 1..=8"]);
    let sym = View::row_major(&cx, &[Expr::from(3), n]).expect("view");
    let half = sym.reinterpret(&cx, 4, 2).expect("smaller");
    assert_eq!(
        half.to_string(),
        "view shape=[3, 2*n] strides=[2*n, 1] offset=0 mask=none"
    );
    assert!(half.guards().is_empty());
    let double = sym.reinterpret(&cx, 2, 4).expect("larger");
    assert_eq!(
        double.guards().iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["reinterpret: n % 2 == 0 (the size of the last axis is divisible by the ratio 2 of the element sizes)"]
    );
    for value in 1..=8 {
        let mut b = Bindings::new();
        b.set(n, value).expect("n");
        let c = ConcreteView::contiguous(&[3, value]).expect("c");
        assert_eq!(
            half.bind(&cx, &b).ok(),
            c.reinterpret(&cx, 4, 2).ok(),
            "n={value}"
        );
        let got = double.bind(&cx, &b);
        match c.reinterpret(&cx, 2, 4) {
            Ok(want) => assert_eq!(got.ok(), Some(want), "n={value}"),
            Err(_) => assert!(got.is_err(), "n={value}"),
        }
    }
}

/// A ratio of element sizes beyond i64 is named as it is (it was clamped to
/// 9223372036854775807), in both engines.
#[test]
fn reinterpret_names_ratios_beyond_i64() {
    let (cx, [n]) = scope_with(["n 1..=8"]);
    let big = usize::MAX;
    let concrete = ConcreteView::contiguous(&[2, 3]).expect("c");
    let sym = View::row_major(&cx, &[Expr::from(3), n]).expect("view");
    let lines = [
        concrete
            .reinterpret(&cx, 1, big)
            .map_or_else(|e| e.to_string(), |v| v.to_string()),
        concrete
            .reinterpret(&cx, big, 1)
            .map_or_else(|e| e.to_string(), |v| v.to_string()),
        sym.reinterpret(&cx, 1, big)
            .map_or_else(|e| e.to_string(), |v| v.guards()[0].to_string()),
    ];
    insta::assert_snapshot!(lines.join("\n"), @"
    reinterpret: cannot view 1-byte elements as 18446744073709551615-byte elements: the size of the last axis 3 is not divisible by the ratio 18446744073709551615 of the element sizes, in view [2, 3] with strides [3, 1]
    reinterpret: overflow: size of the last axis 3 times the ratio 18446744073709551615 of view [2, 3] with strides [3, 1]
    reinterpret: guard n == 0 (the size of the last axis is divisible by the ratio 18446744073709551615 of the element sizes) fails: it is false for every value of the symbols, for view [3, n] with strides [n, 1]
    ");
}

#[test]
fn memory_model_errors() {
    let cx = Scope::new();
    let v = |s: &[i64]| View::contiguous(s).expect("v");
    let t = v(&[2, 3]).transpose(&cx, 0, 1).expect("t");
    let msg = |r: Result<View, Error>| r.map_or_else(|e| e.to_string(), |v| v.to_string());
    let c = |s: &[i64]| ConcreteView::contiguous(s).expect("c");
    let lines = [
        msg(v(&[]).reinterpret(&cx, 4, 2)),
        msg(t.reinterpret(&cx, 4, 2)),
        msg(v(&[2, 3]).reinterpret(&cx, 2, 4)),
        msg(v(&[2, 3])
            .shrink(&cx, &[(1i64, 2i64), (0, 2)])
            .and_then(|s| s.reinterpret(&cx, 2, 4))),
        msg(v(&[3, 2]).reinterpret(&cx, 3, 2)),
        msg(v(&[3, 2]).reinterpret(&cx, 0, 2)),
        msg(v(&[3, 2])
            .pad(&cx, &[(1i64, 0i64), (0, 0)])
            .and_then(|p| p.reinterpret(&cx, 4, 2))),
        ViewStack::new(v(&[2, 3]))
            .transpose(&cx, 0, 1)
            .and_then(|s| s.reshape(&cx, &[6i64]))
            .and_then(|s| s.reinterpret(&cx, 4, 2))
            .map_or_else(|e| e.to_string(), |s| s.to_string()),
        c(&[2, 3])
            .byte_layout(0)
            .map_or_else(|e| e.to_string(), |l| l.to_string()),
        ConcreteView::from_byte_strides(&[2, 3], &[12, 6], 0, 4)
            .map_or_else(|e| e.to_string(), |v| v.to_string()),
        ConcreteView::from_byte_strides(&[2, 3], &[12, 4], 2, 4)
            .map_or_else(|e| e.to_string(), |v| v.to_string()),
        c(&[2, 3])
            .pad(&cx, &[(0, 1), (0, 0)])
            .and_then(|p| p.numpy_flags())
            .map_or_else(|e| e.to_string(), |f| f.to_string()),
    ];
    insta::assert_snapshot!(lines.join("\n"), @"
    reinterpret: cannot view 4-byte elements as 2-byte elements: a view of rank 0 cannot be reinterpreted when the element sizes differ (view [] with strides [])
    reinterpret: cannot view 4-byte elements as 2-byte elements: the last axis must have stride 1 when the element sizes differ, but it has stride 3 in view [3, 2] with strides [1, 3]
    reinterpret: cannot view 2-byte elements as 4-byte elements: the size of the last axis 3 is not divisible by the ratio 2 of the element sizes, in view [2, 3] with strides [3, 1]
    reinterpret: cannot view 2-byte elements as 4-byte elements: the offset 3 is not divisible by the ratio 2 of the element sizes, in view [1, 2] with strides [3, 1], offset 3
    reinterpret: cannot view 3-byte elements as 2-byte elements: neither element size divides the other, for view [3, 2] with strides [2, 1]
    reinterpret: element sizes 0 and 2 bytes must be positive, for view [3, 2] with strides [2, 1]
    reinterpret: view [4, 2] with strides [2, 1], offset -2 and mask [(1, 4), (0, 2)] has a mask, which a strided array in bytes cannot express; materialize it first
    reinterpret: a stack of 2 views cannot be reinterpreted from 4-byte to 2-byte elements: only a one-view stack has element strides to rescale; materialize it first
    bytes: item size 0 must be at least 1 byte
    byte_strides: byte stride 6 of axis 1 is not a multiple of the item size 4 (shape [2, 3], byte strides [12, 6], byte offset 0)
    byte_strides: byte offset 2 is not a multiple of the item size 4 (shape [2, 3], byte strides [12, 4], byte offset 2)
    flags: view [3, 3] with strides [3, 1] and mask [(0, 2), (0, 3)] has a mask, which a strided array in bytes cannot express; materialize it first
    ");
}

#[test]
fn numpy_flags_table() {
    let row = |shape: &[i64], strides: &[i64]| {
        let c = ConcreteView::create(shape, Some(strides), 0, None).expect("view");
        format!("{shape:?} {strides:?} {}", c.numpy_flags().expect("flags"))
    };
    let lines = [
        row(&[2, 3], &[3, 1]),
        row(&[2, 3], &[1, 2]),
        row(&[1, 3], &[7, 1]),
        row(&[3, 1], &[1, 9]),
        row(&[1, 1], &[5, 7]),
        row(&[], &[]),
        row(&[0, 3], &[5, 9]),
        row(&[3], &[1]),
        row(&[3], &[-1]),
        row(&[2, 3], &[0, 1]),
        row(&[2, 3], &[4, 1]),
    ];
    insta::assert_snapshot!(lines.join("\n"), @"
    [2, 3] [3, 1] flags: c_contiguous=true f_contiguous=false
    [2, 3] [1, 2] flags: c_contiguous=false f_contiguous=true
    [1, 3] [7, 1] flags: c_contiguous=true f_contiguous=true
    [3, 1] [1, 9] flags: c_contiguous=true f_contiguous=true
    [1, 1] [5, 7] flags: c_contiguous=true f_contiguous=true
    [] [] flags: c_contiguous=true f_contiguous=true
    [0, 3] [5, 9] flags: c_contiguous=true f_contiguous=true
    [3] [1] flags: c_contiguous=true f_contiguous=true
    [3] [-1] flags: c_contiguous=false f_contiguous=false
    [2, 3] [0, 1] flags: c_contiguous=false f_contiguous=false
    [2, 3] [4, 1] flags: c_contiguous=false f_contiguous=false
    ");
}

proptest! {
    /// `ravel` reads the elements in row-major order, and is a view exactly when the
    /// valid offsets in row-major order are consecutive and there is no mask (NumPy's
    /// `C_CONTIGUOUS`), a copy otherwise.
    #[test]
    fn ravel_matches_the_row_major_table(raw in arb_raw(3, 0, 5)) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let table = model_of_view(&c).table;
        let consecutive = table
            .iter()
            .enumerate()
            .all(|(k, o)| *o == table.first().copied().flatten().map(|o0| o0 + k as i64));
        let want_view = c.mask().is_none() && consecutive;
        let got = c.ravel().expect("ravel");
        prop_assert_eq!(matches!(got, Raveled::View(_)), want_view, "{}", c);
        let stack = got.into_stack();
        prop_assert_eq!(stack.shape(), &[c.numel()][..]);
        prop_assert_eq!(stack.offsets().expect("offsets"), table.clone());
        let cx = Scope::new();
        let via_stack = ViewStack::new(View::from(c.clone())).ravel(&cx).expect("stack ravel");
        prop_assert_eq!(via_stack.to_concrete("ravel").expect("concrete"), stack);
        // `contiguous`: the same elements in the same shape, the view itself exactly when
        // `ravel` is a view.
        let kept = ViewStack::new(View::from(c.clone())).contiguous(&cx).expect("contiguous");
        let kept = kept.to_concrete("contiguous").expect("concrete");
        prop_assert_eq!(kept.shape(), c.shape());
        prop_assert_eq!(kept.offsets().expect("offsets"), table);
        prop_assert_eq!(kept.levels().len() == 1, want_view, "{}", c);
        if want_view {
            prop_assert_eq!(&kept.levels()[0], &c);
        }
        let one = View::from(c.clone()).contiguous(&cx);
        prop_assert_eq!(one.is_ok(), want_view, "{}", c);
    }
}

#[test]
fn ravel_of_symbolic_and_stacked_views() {
    let (cx, [n]) = scope_with(["n 1..=8"]);
    // Row-major for every n: the flattened view.
    let v = View::row_major(&cx, &[n, Expr::from(3)]).expect("view");
    let r = ViewStack::new(v.clone()).ravel(&cx).expect("ravel");
    assert_eq!(r.views().len(), 1);
    // Its transpose is C-contiguous only for n = 1: a copy.
    let r = ViewStack::new(v)
        .transpose(&cx, 0, 1)
        .expect("t")
        .ravel(&cx)
        .expect("ravel");
    assert_eq!(r.views().len(), 2);
    let mut b = Bindings::new();
    cx.bind(&mut b, "n", 2).expect("bind");
    let bound = r.bind(&cx, &b).expect("bound");
    assert_eq!(bound.shape(), &[6]);
    assert_eq!(
        bound.offsets().expect("offsets"),
        [0, 3, 1, 4, 2, 5].map(Some).to_vec()
    );
    // A transposed stack flattens through a pushed row-major view.
    let t = ViewStack::new(View::contiguous(&[2, 3]).expect("view"))
        .transpose(&cx, 0, 1)
        .expect("transpose");
    let r = t.ravel(&cx).expect("ravel");
    let offsets = r
        .to_concrete("ravel")
        .expect("concrete")
        .offsets()
        .expect("offsets");
    assert_eq!(offsets, [0, 3, 1, 4, 2, 5].map(Some).to_vec());
    assert_eq!(r.views().len(), 2);
    // The copy is contiguous: `contiguous` keeps it, and `ravel` flattens its top in place.
    assert_eq!(r.contiguous(&cx).expect("contiguous"), r);
    let again = r.ravel(&cx).expect("ravel");
    assert_eq!(again.views().len(), 2);
    // Read backwards the copy is no longer C-contiguous, so `ravel` copies again.
    let flipped = r.flip(&cx, &[0]).expect("flip");
    assert_eq!(flipped.views().len(), 2);
    assert_eq!(flipped.ravel(&cx).expect("ravel").views().len(), 3);
    // NumPy copies x[::2] although one strided view could express it.
    let every_other = ConcreteView::create(&[4], Some(&[2]), 0, None).expect("view");
    assert!(matches!(every_other.ravel(), Ok(Raveled::Copy(_))));
    let c = ConcreteView::create(&[2, 1, 3], Some(&[3, 7, 1]), 5, None).expect("view");
    assert_eq!(
        c.ravel().expect("ravel"),
        Raveled::View(ConcreteView::create(&[6], Some(&[1]), 5, None).expect("view"))
    );
}

/// The table of a complex view read as reals: element `idx` at complex offset `o`
/// has its real part at real offset `2 o` and its imaginary part at `2 o + 1`.
pub fn as_real_model(m: &Model) -> Model {
    let mut shape = m.shape.clone();
    shape.push(2);
    m.map(shape, |idx| Some(idx[..idx.len() - 1].to_vec()))
        .table
        .iter()
        .zip(indices(&[m.shape.clone(), vec![2]].concat()))
        .map(|(o, idx)| o.map(|o| 2 * o + idx[idx.len() - 1]))
        .collect::<Vec<_>>()
        .pipe(|table| Model {
            shape: [m.shape.clone(), vec![2]].concat(),
            table,
        })
}

trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}
impl<T> Pipe for T {}

proptest! {
    /// `view_as_real`, `real` and `imag` equal the pair model; `view_as_complex`
    /// undoes `view_as_real` exactly (up to the canonical form of a view of no elements).
    #[test]
    fn complex_views_match_the_pair_model(raw in arb_raw(3, 0, 5)) {
        let cx = Scope::new();
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let got = c.view_as_real(&cx);
        if c.mask().is_some() {
            prop_assert!(matches!(got, Err(Error::Invalid { .. })), "{:?}", got);
            return Ok(());
        }
        let pairs = got.expect("view_as_real");
        let want = as_real_model(&model_of_view(&c));
        prop_assert_eq!(model_of_view(&pairs), want.clone(), "{}", c);
        for (part, got) in [(0, c.real(&cx)), (1, c.imag(&cx))] {
            let got = got.expect("part");
            let m = model_of_view(&got);
            prop_assert_eq!(&m.shape[..], c.shape());
            let want_part: Vec<Option<i64>> = want.table.iter().skip(part).step_by(2).copied().collect();
            prop_assert_eq!(m.table, want_part, "{} part {}", c, part);
        }
        let back = pairs.view_as_complex(&cx).expect("back");
        if c.numel() == 0 {
            // No element: it comes back in the canonical zero-size form.
            prop_assert_eq!(back.shape(), c.shape());
            prop_assert!(back.strides().iter().all(|&t| t == 0) && back.offset() == 0, "{}", back);
        } else {
            prop_assert_eq!(back, c);
        }
    }

    /// On an unmasked view, `view_as_complex` succeeds exactly when the last axis has
    /// size 2 and every pair is two consecutive reals starting at an even offset (on an
    /// empty view: when the last axis has size 2), and then equals that table.
    #[test]
    fn view_as_complex_matches_the_pair_model(raw in arb_raw(3, 0, 3), two in any::<bool>()) {
        let cx = Scope::new();
        let mut raw = raw;
        if two && !raw.shape.is_empty() {
            let last = raw.shape.len() - 1;
            raw.shape[last] = 2;
            if let Some(m) = &mut raw.mask { m[last] = (0, 2); }
        }
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let got = c.view_as_complex(&cx);
        if c.mask().is_some() || c.ndim() == 0 {
            prop_assert!(matches!(got, Err(Error::Invalid { .. })), "{:?}", got);
            return Ok(());
        }
        let m = model_of_view(&c);
        let want = (c.shape()[c.ndim() - 1] == 2)
            .then(|| reinterpret_model(&m, 1, 2))
            .flatten();
        match (got, want) {
            (Ok(v), Some(w)) => {
                let mut w = w;
                w.shape.pop();
                prop_assert_eq!(model_of_view(&v), w, "{}", c);
            }
            (Err(Error::Invalid { .. }), None) => {}
            (got, want) => prop_assert!(false, "{}: got {:?}, model {:?}", c, got, want),
        }
    }
}

/// Symbolic complex views bind to the concrete op's result at every size, with the
/// conditions they need kept as guards.
#[test]
fn symbolic_complex_views_agree_with_concrete() {
    let (cx, [n]) = scope_with(["n 1..=4"]);
    let sym = View::row_major(&cx, &[Expr::from(3), n]).expect("view");
    let pairs = sym.view_as_real(&cx).expect("view_as_real");
    assert_eq!(
        pairs.to_string(),
        "view shape=[3, n, 2] strides=[2*n, 2, 1] offset=0 mask=none"
    );
    let back = sym.view_as_complex(&cx).expect("view_as_complex");
    assert_eq!(
        back.guards()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["view_as_complex: n == 2 (Tensor must have a last dimension of size 2)"]
    );
    let (re, im) = (sym.real(&cx).expect("real"), sym.imag(&cx).expect("imag"));
    for value in 1..=4 {
        let mut b = Bindings::new();
        b.set(n, value).expect("n");
        let c = ConcreteView::contiguous(&[3, value]).expect("c");
        // Compared as offset tables: a size-1 axis may keep a different stride.
        let table = |r: Result<ConcreteView, Error>| r.ok().map(|v| model_of_view(&v));
        assert_eq!(
            table(pairs.bind(&cx, &b)),
            table(c.view_as_real(&cx)),
            "n={value}"
        );
        assert_eq!(table(re.bind(&cx, &b)), table(c.real(&cx)), "n={value}");
        assert_eq!(table(im.bind(&cx, &b)), table(c.imag(&cx)), "n={value}");
        match c.view_as_complex(&cx) {
            Ok(want) => assert_eq!(back.bind(&cx, &b).ok(), Some(want), "n={value}"),
            Err(_) => assert!(back.bind(&cx, &b).is_err(), "n={value}"),
        }
    }
    // A stack of several views is refused.
    let t = ViewStack::new(View::contiguous(&[2, 3]).expect("v"))
        .transpose(&cx, 0, 1)
        .and_then(|s| s.reshape(&cx, &[6i64]))
        .expect("stack");
    let e = t.view_as_real(&cx).expect_err("stack");
    assert_eq!(e.to_string(), "view_as_real: a stack of 2 views cannot be read as pairs of reals: only a one-view stack has element strides to rescale; materialize it first");
}

#[test]
fn complex_view_errors() {
    let cx = Scope::new();
    let msg = |r: Result<ConcreteView, Error>| r.map_or_else(|e| e.to_string(), |v| v.to_string());
    let v = |shape: &[i64], strides: &[i64], offset: i64| {
        ConcreteView::create(shape, Some(strides), offset, None).expect("v")
    };
    let masked = ConcreteView::create(&[2, 2], None, 0, Some(&[(0, 1), (0, 2)])).expect("m");
    insta::assert_snapshot!([
        msg(v(&[], &[], 3).view_as_real(&cx)),
        msg(v(&[], &[], 4).view_as_complex(&cx)),
        msg(v(&[3, 3], &[3, 1], 0).view_as_complex(&cx)),
        msg(v(&[3, 2], &[1, 3], 0).view_as_complex(&cx)),
        msg(v(&[3, 2], &[3, 1], 0).view_as_complex(&cx)),
        msg(v(&[3, 2], &[4, 1], 1).view_as_complex(&cx)),
        msg(v(&[1, 2], &[3, 1], 2).view_as_complex(&cx)),
        msg(masked.view_as_real(&cx)),
        msg(masked.view_as_complex(&cx)),
        msg(v(&[2], &[1], 3).imag(&cx)),
    ].join("\n"), @"
    view shape=[2] strides=[1] offset=6 mask=none
    view_as_complex: Input tensor must have one or more dimensions, in view [] with strides [], offset 4
    view_as_complex: Tensor must have a last dimension of size 2, not 3, in view [3, 3] with strides [3, 1]
    view_as_complex: Tensor must have a last dimension with stride 1, not 3, in view [3, 2] with strides [1, 3]
    view_as_complex: Tensor must have a stride divisible by 2 for all but last dimension; axis 0 has stride 3, in view [3, 2] with strides [3, 1]
    view_as_complex: Tensor must have a storage_offset divisible by 2, not 1, in view [3, 2] with strides [4, 1], offset 1
    view shape=[1] strides=[0] offset=1 mask=none
    view_as_real: view [2, 2] with strides [2, 1] and mask [(0, 1), (0, 2)] has a mask, which a strided complex tensor cannot express; materialize it first
    view_as_complex: view [2, 2] with strides [2, 1] and mask [(0, 1), (0, 2)] has a mask, which a strided complex tensor cannot express; materialize it first
    view shape=[2] strides=[2] offset=7 mask=none
    ");
}

/// A trace of the complex ops records and replays them like any op.
#[test]
fn complex_ops_record_and_replay() {
    let (cx, [n]) = scope_with(["n 1..=8"]);
    let mut t = symshape_view::Trace::new(View::row_major(&cx, &[n, Expr::from(2)]).expect("v"));
    for op in [Op::ViewAsComplex, Op::ViewAsReal, Op::Imag] {
        t.apply(&cx, &op).expect("op");
    }
    let labels: Vec<String> = t.steps().iter().map(|s| s.label.clone()).collect();
    assert_eq!(
        labels,
        ["view [n, 2]", "view_as_complex", "view_as_real", "imag"]
    );
    let again = t
        .replay(&cx, View::contiguous(&[3, 2]).expect("c"))
        .expect("replay");
    let top = again
        .stack()
        .top()
        .as_concrete()
        .cloned()
        .expect("concrete");
    // imag of [3, 2] complex elements: the odd reals 2o + 1 of offsets 0..6.
    assert_eq!(
        model_of_view(&top).table,
        [1, 3, 5, 7, 9, 11].map(Some).to_vec()
    );
}

/// The element-size ops by number: `reinterpret` between a few sizes, then the
/// complex views.
fn element_op(k: usize) -> Op<i64> {
    match k {
        0..=5 => {
            let (from, to) = [(4, 2), (2, 4), (8, 2), (2, 8), (4, 4), (3, 2)][k];
            Op::Reinterpret { from, to }
        }
        6 => Op::ViewAsReal,
        7 => Op::ViewAsComplex,
        8 => Op::Real,
        _ => Op::Imag,
    }
}

/// `op` through [`ViewOps`], on either engine's view type.
fn run_element_op<V: ViewOps>(v: &V, cx: &Scope, op: &Op<i64>) -> Result<V, Error> {
    match *op {
        Op::Reinterpret { from, to } => v.reinterpret(cx, from, to),
        Op::ViewAsReal => v.view_as_real(cx),
        Op::ViewAsComplex => v.view_as_complex(cx),
        Op::Real => v.real(cx),
        _ => v.imag(cx),
    }
}

proptest! {
    /// One rule, two engines: an element-size op on a constant view (the exact engine)
    /// agrees with the same op on the view whose strides and offset are symbols (the
    /// symbolic rules, with their guards), bound to the constants afterwards. Both
    /// fail, or both give the same offset table.
    #[test]
    fn element_ops_agree_across_engines(
        raw in arb_raw(3, 0, 4),
        k in 0usize..10,
        (two, unit) in (any::<bool>(), any::<bool>()),
    ) {
        let mut raw = raw;
        if let Some(last) = raw.shape.len().checked_sub(1) {
            // Reach the paths past the size and stride checks often.
            if two {
                raw.shape[last] = 2;
                if let Some(m) = &mut raw.mask { m[last] = (0, 2); }
            }
            if unit {
                raw.strides[last] = 1;
            }
        }
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let (cx, [t0, t1, t2, o]) =
            scope_with(["t0 -6..=6", "t1 -6..=6", "t2 -6..=6", "o -12..=12"]);
        let syms = [t0, t1, t2];
        let mut b = Bindings::new();
        for (&t, &value) in syms.iter().zip(c.strides()) {
            b.set(t, value).expect("stride");
        }
        b.set(o, c.offset()).expect("offset");
        let shape: Vec<Expr> = c.shape().iter().map(|&d| Expr::from(d)).collect();
        let mask: Option<Vec<(Expr, Expr)>> = c
            .mask()
            .map(|m| m.iter().map(|&(lo, hi)| (Expr::from(lo), Expr::from(hi))).collect());
        let sym = View::create(&cx, &shape, Some(&syms[..c.ndim()]), o, mask.as_deref())
            .expect("symbolic view");
        prop_assert!(!sym.is_concrete());
        let op = element_op(k);
        let exact = run_element_op(&c, &cx, &op);
        let bound = run_element_op(&sym, &cx, &op).and_then(|v| v.bind(&cx, &b));
        match (exact, bound) {
            (Ok(x), Ok(y)) => prop_assert_eq!(model_of_view(&x), model_of_view(&y), "{} on {}", op, c),
            (Err(_), Err(_)) => {}
            (x, y) => prop_assert!(false, "{} on {}: exact {:?}, symbolic then bound {:?}", op, c, x, y),
        }
    }
}

/// On symbolic views the element-size ops do what the exact engine does where sizes
/// are decided: a provably size-1 axis whose stride may be odd gets stride 0, the
/// guards of `reinterpret` come in the exact engine's order (strides, then offset), and
/// `view_as_complex` of a rank-0 view is refused in the exact engine's words.
#[test]
fn symbolic_element_ops_follow_the_exact_engine() {
    let (cx, [s, o]) = scope_with(["s -8..=8", "o 0..=8"]);
    let two = Expr::from(2);
    let pairs = View::create(
        &cx,
        &[Expr::from(1), two],
        Some(&[s, Expr::from(1)]),
        two * o,
        None,
    )
    .expect("pairs");
    let rows = View::create(
        &cx,
        &[Expr::from(3), Expr::from(4)],
        Some(&[s, Expr::from(1)]),
        o,
        None,
    )
    .expect("rows");
    let scalar = View::create(&cx, &[] as &[Expr], None, o, None).expect("scalar");
    let guards = |v: View| {
        let g: Vec<String> = v.guards().iter().map(ToString::to_string).collect();
        g.join("; ")
    };
    let lines = [
        pairs
            .view_as_complex(&cx)
            .map_or_else(|e| e.to_string(), |v| v.to_string()),
        rows.reinterpret(&cx, 2, 4)
            .map_or_else(|e| e.to_string(), guards),
        scalar
            .view_as_complex(&cx)
            .map_or_else(|e| e.to_string(), |v| v.to_string()),
    ];
    insta::assert_snapshot!(lines.join("\n"), @"
    view shape=[1] strides=[0] offset=o mask=none
    reinterpret: s % 2 == 0 (the stride of axis 0 is divisible by the ratio 2 of the element sizes); reinterpret: o % 2 == 0 (the offset is divisible by the ratio 2 of the element sizes)
    view_as_complex: Input tensor must have one or more dimensions, in view [] with strides []
    ");
}

/// A field that would leave `i64` is named, with how it grew.
#[test]
fn element_op_overflows_name_the_field() {
    let cx = Scope::new();
    let big = 1i64 << 62;
    let wide = ConcreteView::create(&[2, 1], Some(&[big, 1]), 0, None).expect("wide");
    let far = ConcreteView::create(&[1], Some(&[1]), big, None).expect("far");
    let msg = |r: Result<ConcreteView, Error>| r.map_or_else(|e| e.to_string(), |v| v.to_string());
    insta::assert_snapshot!([
        msg(wide.view_as_real(&cx)),
        msg(far.imag(&cx)),
        msg(wide.reinterpret(&cx, 4, 2)),
    ].join("\n"), @"
    view_as_real: overflow: stride 4611686018427387904 doubled, of view [2, 1] with strides [4611686018427387904, 1]
    imag: overflow: offset 4611686018427387904 doubled, of view [1] with strides [1], offset 4611686018427387904
    reinterpret: overflow: stride 4611686018427387904 times the ratio 2 of view [2, 1] with strides [4611686018427387904, 1]
    ");
}
