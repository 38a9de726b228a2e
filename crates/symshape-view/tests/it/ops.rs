//! The ops beyond the core ones, each checked against the model on random views.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope, SymbolSpec};
use symshape_view::{ConcreteView, Error, IndexItem, Op, View, ViewOps, ViewStack};

use crate::engine::model_of_view;
use crate::model::Model;
use crate::strategy::{arb_raw, factor_shape};

/// The pieces of `split(axis, size)`, one piece op each.
fn split_pieces(v: &ConcreteView, axis: usize, size: i64) -> Result<Vec<ConcreteView>, Error> {
    let cx = Scope::new();
    (0..v.split_count(axis, size)?)
        .map(|i| v.split_piece(&cx, axis, size, i))
        .collect()
}

/// The pieces of `chunk(axis, n)`, one piece op each.
fn chunk_pieces(v: &ConcreteView, axis: usize, n: usize) -> Result<Vec<ConcreteView>, Error> {
    (0..v.chunk_count(axis, n)?)
        .map(|i| {
            v.apply(&Op::Chunk {
                axis,
                chunks: n,
                piece: i as usize,
            })
        })
        .collect()
}

/// The op's result matches the model, or it refused because the model is not one view.
fn agree(got: Result<ConcreteView, Error>, want: &Model) -> Result<(), TestCaseError> {
    match got {
        Ok(v) => prop_assert_eq!(&model_of_view(&v), want, "{}", v),
        Err(Error::NotRepresentable { .. }) => {
            prop_assert!(want.one_view().is_none(), "refused {:?}", want)
        }
        Err(e) => prop_assert!(false, "unexpected error {}", e),
    }
    Ok(())
}

proptest! {
    #[test]
    fn other_ops_match_the_model(raw in arb_raw(4, 0, 4), p in prop::collection::vec(0i64..1000, 8)) {
        let cx = Scope::new();
        let Some(v) = raw.concrete_view() else { return Ok(()) };
        let m = Model::of(&raw.shape, &raw.strides, raw.offset, raw.mask.as_deref());
        let rank = raw.shape.len();
        let shape = raw.shape.clone();
        let no_ones: Vec<i64> = shape.iter().copied().filter(|&d| d != 1).collect();
        agree(v.squeeze(&cx, None), &m.reshape(&no_ones))?;
        let at = (p[0] as usize) % (rank + 1);
        let mut with_one = shape.clone();
        with_one.insert(at, 1);
        agree(v.unsqueeze(&cx, at), &m.reshape(&with_one))?;
        if rank == 0 {
            let t = vec![p[1] % 3, p[2] % 3];
            agree(v.broadcast_to(&cx, &t), &m.expand(&t))?;
            return Ok(());
        }
        let (a, b) = ((p[1] as usize) % rank, (p[2] as usize) % rank);
        let mut axes: Vec<usize> = (0..rank).collect();
        axes.swap(a, b);
        agree(v.transpose(&cx, a, b), &m.permute(&axes))?;
        let mut axes: Vec<usize> = (0..rank).filter(|&x| x != a).collect();
        axes.insert(b, a);
        agree(v.movedim(&cx, a, b), &m.permute(&axes))?;
        // broadcast_to: one new leading axis, size-1 axes grow.
        let lead = p[3] % 3;
        let target: Vec<i64> = std::iter::once(lead)
            .chain(shape.iter().enumerate().map(|(i, &d)| if d == 1 { p[(i + 4) % 8] % 4 } else { d }))
            .collect();
        let mut ones = vec![1];
        ones.extend_from_slice(&shape);
        agree(v.broadcast_to(&cx, &target), &m.reshape(&ones).expand(&target))?;
        // narrow, split, chunk, unbind along axis a.
        let d = shape[a];
        let start = p[4] % (d + 1);
        let len = p[5] % (d - start + 1);
        let mut bounds: Vec<(i64, i64)> = shape.iter().map(|&x| (0, x)).collect();
        bounds[a] = (start, start + len);
        agree(v.narrow(&cx, a, start, len), &m.shrink(&bounds))?;
        let size = 1 + p[6] % 3;
        let pieces = split_pieces(&v, a, size).expect("split");
        let mut lo = 0;
        for piece in &pieces {
            let hi = (lo + size).min(d);
            bounds[a] = (lo, hi);
            prop_assert_eq!(&model_of_view(piece), &m.shrink(&bounds));
            lo = hi;
        }
        prop_assert_eq!(lo, d);
        let n = 1 + p[7] % 4;
        let chunks = chunk_pieces(&v, a, n as usize).expect("chunk");
        let want = (d + n - 1) / n;
        prop_assert!(chunks.len() as i64 <= n.max(1));
        prop_assert!(chunks.iter().all(|c| c.shape()[a] <= want.max(1)));
        prop_assert_eq!(chunks.iter().map(|c| c.shape()[a]).sum::<i64>(), d);
        match (0..d).map(|i| v.select(&cx, a, i)).collect::<Result<Vec<_>, _>>() {
            Ok(parts) => {
                prop_assert_eq!(parts.len() as i64, d);
                for (i, part) in parts.iter().enumerate() {
                    let sel = m.map(
                        shape.iter().enumerate().filter(|&(x, _)| x != a).map(|(_, &s)| s).collect(),
                        |idx| {
                            let mut src = idx.to_vec();
                            src.insert(a, i as i64);
                            Some(src)
                        },
                    );
                    prop_assert_eq!(&model_of_view(part), &sel);
                }
            }
            Err(e) => prop_assert!(matches!(e, Error::NotRepresentable { .. }) && rank == 1, "{}", e),
        }
        // unfold along a.
        let win = p[1] % (d + 1);
        let step = 1 + p[2] % 3;
        let nwin = (d - win) / step + 1;
        let mut ushape = shape.clone();
        ushape[a] = nwin;
        ushape.push(win);
        let want = m.map(ushape, |idx| {
            let mut src = idx[..rank].to_vec();
            src[a] = idx[a] * step + idx[rank];
            Some(src)
        });
        agree(v.unfold(&cx, a, win, step), &want)?;
        // diagonal of a and another axis.
        if rank >= 2 {
            let b2 = (a + 1 + (p[3] as usize) % (rank - 1)) % rank;
            let off = p[4] % 7 - 3;
            agree(v.diagonal(&cx, off, a, b2), &m.diagonal(off, a, b2))?;
        }
        // flatten and unflatten.
        let (s, e) = (a.min(b), a.max(b));
        let mut fshape = shape[..s].to_vec();
        fshape.push(shape[s..=e].iter().product());
        fshape.extend_from_slice(&shape[e + 1..]);
        agree(v.flatten(&cx, s, e), &m.reshape(&fshape))?;
        let parts = factor_shape(d, &[p[0] as u32, p[1] as u32, p[2] as u32]);
        let mut ushape = shape[..a].to_vec();
        ushape.extend_from_slice(&parts);
        ushape.extend_from_slice(&shape[a + 1..]);
        agree(v.unflatten(&cx, a, &parts), &m.reshape(&ushape))?;
    }

    #[test]
    fn as_strided_checks_the_buffer(raw in arb_raw(3, 0, 4), len in -3i64..40) {
        let m = Model::of(&raw.shape, &raw.strides, raw.offset, None);
        let inside = m.table.iter().flatten().all(|&o| 0 <= o && o < len);
        match ConcreteView::as_strided(&raw.shape, &raw.strides, raw.offset, len) {
            Ok(v) => {
                prop_assert!(inside);
                prop_assert_eq!(model_of_view(&v), m);
            }
            Err(e) => prop_assert!(!inside, "{}", e),
        }
    }

    /// The symbolic formulas of index, unfold, diagonal and split pieces agree
    /// with the concrete ops on every argument: each argument is written as
    /// `value + z` with a symbol `z` whose range is `0..=0` (so signs are
    /// provable and the symbolic path runs), then bound to `z = 0`.
    #[test]
    fn symbolic_arguments_agree_with_concrete_ops(
        raw in arb_raw(3, 0, 4),
        items in prop::collection::vec((0u8..4, -6i64..=6, -6i64..=6, prop::sample::select(vec![1i64, 2, 3, -1, -2, -3])), 0..4),
        p in prop::collection::vec(0i64..1000, 6),
    ) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let mut cx = Scope::new();
        let z = cx.declare(&SymbolSpec::new("z").range(0, 0)).expect("z");
        let mut b = Bindings::new();
        b.set(z, 0).expect("bind z");
        let rank = c.ndim();
        // Index: every kind of entry, consuming at most `rank` axes.
        let mut index: Vec<IndexItem> = Vec::new();
        let mut real = 0;
        for &(kind, x, y, step) in &items {
            let it = match kind {
                0 => IndexItem::Int(x),
                1 => IndexItem::NewAxis,
                2 => IndexItem::Slice { start: Some(x), stop: Some(y), step: Some(step) },
                _ => IndexItem::Slice { start: (x > 0).then_some(x), stop: (y < 0).then_some(y), step: Some(step) },
            };
            if it.consumes_axis() && real == rank {
                continue;
            }
            real += usize::from(it.consumes_axis());
            index.push(it);
        }
        let mut ops: Vec<(Op, Op)> = vec![(
            Op::Index(index.iter().map(|it| it.to_expr()).collect()),
            Op::Index(index.iter().map(|it| it.map(|v| Expr::from(v) + z)).collect()),
        )];
        if rank > 0 {
            let axis = (p[0] as usize) % rank;
            let (size, step) = (p[1] % 6 - 1, p[2] % 4);
            ops.push((
                Op::Unfold { axis, size: size.into(), step: step.into() },
                Op::Unfold { axis, size: Expr::from(size) + z, step: Expr::from(step) + z },
            ));
        }
        if rank > 1 {
            let dim1 = (p[3] as usize) % rank;
            let dim2 = (dim1 + 1 + (p[4] as usize) % (rank - 1)) % rank;
            let off = p[5] % 11 - 5;
            ops.push((
                Op::Diagonal { offset: off.into(), dim1, dim2 },
                Op::Diagonal { offset: Expr::from(off) + z, dim1, dim2 },
            ));
        }
        let st = ViewStack::new(View::from(&c));
        for (plain, sym) in &ops {
            let want = st
                .apply(&Scope::new(), plain)
                .and_then(|s| s.to_concrete("offsets"))
                .and_then(|s| s.offsets());
            let got = st.apply(&cx, sym).and_then(|s| s.bind(&cx, &b)).and_then(|s| s.offsets());
            match (&got, &want) {
                (Ok(g), Ok(w)) => prop_assert_eq!(g, w, "{} on {}", sym, c),
                (Err(_), Err(_)) => {}
                _ => prop_assert!(false, "{}: symbolic {:?} vs concrete {:?} on {}", sym, got, want, c),
            }
        }
        // Split pieces at every piece index.
        if rank > 0 {
            let axis = (p[0] as usize) % rank;
            let size = p[1] % 4;
            let pieces = st.split(&Scope::new(), axis, size);
            for i in -1..6i64 {
                let want = pieces
                    .as_ref()
                    .ok()
                    .and_then(|v| v.get(usize::try_from(i).ok()?))
                    .map(|s| s.to_concrete("offsets").and_then(|c| c.offsets()));
                let got = st
                    .split_piece(&cx, axis, Expr::from(size) + z, Expr::from(i) + z)
                    .and_then(|s| s.bind(&cx, &b))
                    .and_then(|s| s.offsets());
                match (got, want) {
                    (Ok(g), Some(Ok(w))) => prop_assert_eq!(g, w, "piece {} of size {} on {}", i, size, c),
                    (Err(_), None) => {}
                    (g, w) => prop_assert!(false, "piece {} of size {}: {:?} vs {:?} on {}", i, size, g, w, c),
                }
            }
        }
    }

    /// `unfold` and `diagonal`, with arguments up to the ends of `i64`, on the exact
    /// engine (`ConcreteView` through `ViewOps`) and by the symbolic rules on the same
    /// view (every argument plus a symbol `z` whose range is `0..=0`), bound to `z = 0`
    /// afterwards: both give the model's mapping, or both refuse bad arguments, or only
    /// the symbolic rule refuses windows over a masked axis (whether they cut its mask
    /// evenly is left to values).
    #[test]
    fn unfold_and_diagonal_agree_across_engines(
        raw in arb_raw(3, 0, 4),
        picks in prop::collection::vec(0usize..64, 6),
        wide in prop::collection::vec(any::<i64>(), 3),
    ) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let rank = c.ndim();
        if rank == 0 {
            return Ok(());
        }
        let mut cx = Scope::new();
        let z = cx.declare(&SymbolSpec::new("z").range(0, 0)).expect("z");
        let mut b = Bindings::new();
        b.set(z, 0).expect("bind z");
        let v = View::from(&c);
        let m = model_of_view(&c);
        let sym = |x: i64| Expr::from(x) + z;
        // Small values, the ends of `i64` and any value.
        let value = |k: usize, w: i64| [0, 1, 2, 3, -1, -2, 5, i64::MAX, i64::MIN, w][k % 10];
        // unfold along every axis: a window of 0, 1, 2, the axis or any size.
        for axis in 0..rank {
            let d = c.shape()[axis];
            let size = [0, 1, 2, d, d - 1, value(picks[1] + axis, wide[0])][(picks[0] + axis) % 6];
            let step = [1, 2, value(picks[2] + axis, wide[1])][(picks[3] + axis) % 3];
            let want = (0 <= size && size <= d && step >= 1).then(|| {
                let mut out = c.shape().to_vec();
                out[axis] = (d - size) / step + 1;
                out.push(size);
                m.map(out, |idx| {
                    let mut src = idx[..rank].to_vec();
                    // idx[axis] > 0 only with two windows or more, where step <= d.
                    src[axis] = idx[axis] * step + idx[rank];
                    Some(src)
                })
            });
            let exact = c.unfold(&cx, axis, size, step);
            let bound = v.unfold(&cx, axis, sym(size), sym(step)).and_then(|u| u.bind(&cx, &b));
            let what = format!("unfold {axis} size {size} step {step} on {c}");
            match (&exact, &bound, &want) {
                (Ok(e), Ok(s), Some(w)) => {
                    prop_assert_eq!(&model_of_view(e), w, "{}", what);
                    prop_assert_eq!(&model_of_view(s), w, "{}", what);
                }
                (Ok(e), Err(Error::NotRepresentable { .. }), Some(w)) => {
                    prop_assert_eq!(&model_of_view(e), w, "{}", what);
                    prop_assert!(c.mask().is_some(), "{}: symbolic refused an unmasked axis", what);
                }
                (Err(Error::NotRepresentable { .. }), Err(Error::NotRepresentable { .. }), Some(w)) => {
                    prop_assert!(w.one_view().is_none(), "{}: refused one view", what);
                }
                // The symbolic rule refutes a precondition.
                (Err(Error::Invalid { .. }), Err(Error::Guard { .. }), None) => {}
                _ => prop_assert!(false, "{}: exact {:?}, symbolic {:?}", what, exact, bound),
            }
        }
        // diagonal
        if rank >= 2 {
            let dim1 = picks[4] % rank;
            let dim2 = (dim1 + 1 + picks[5] % (rank - 1)) % rank;
            let offset = value(picks[1] + picks[2], wide[2]);
            // `i64::MIN` and `-i64::MAX` are both beyond every axis.
            let want = m.diagonal(offset.max(-i64::MAX), dim1, dim2);
            let exact = c.diagonal(&cx, offset, dim1, dim2);
            let bound = v.diagonal(&cx, sym(offset), dim1, dim2).and_then(|u| u.bind(&cx, &b));
            let what = format!("diagonal {dim1} {dim2} offset {offset} on {c}");
            match (&exact, &bound) {
                (Ok(e), Ok(s)) => {
                    prop_assert_eq!(&model_of_view(e), &want, "{}", what);
                    prop_assert_eq!(&model_of_view(s), &want, "{}", what);
                }
                _ => prop_assert!(false, "{}: exact {:?}, symbolic {:?}", what, exact, bound),
            }
        }
    }
}

/// The model restricted to indices `lo..hi` of `axis`.
fn along(m: &Model, axis: usize, lo: i64, hi: i64) -> Model {
    let mut bounds: Vec<(i64, i64)> = m.shape.iter().map(|&d| (0, d)).collect();
    bounds[axis] = (lo, hi);
    m.shrink(&bounds)
}

/// PyTorch's `chunk(n)` of an axis of size `d`, written from its documentation: chunks
/// of `ceil(d / n)` indices (the last may be smaller, and fewer than `n` may come back);
/// an empty axis gives one empty chunk.
fn chunk_ranges(d: i64, n: i64) -> Vec<(i64, i64)> {
    let size = ((d + n - 1) / n).max(1);
    let mut out = Vec::new();
    let mut lo = 0;
    while lo < d {
        out.push((lo, (lo + size).min(d)));
        lo += size;
    }
    if out.is_empty() {
        out.push((0, 0));
    }
    out
}

proptest! {
    /// `split_sizes` (PyTorch's `split_with_sizes`) cuts consecutive pieces of the given
    /// sizes, which must be non-negative and add up to the axis; each piece reads the
    /// model's indices of its range, on views, stacks and with symbolic sizes.
    #[test]
    fn split_sizes_match_the_index_model(
        raw in arb_raw(3, 0, 5),
        pick in 0usize..3,
        cuts in prop::collection::vec(0i64..6, 0..4),
        bump in -1i64..2,
    ) {
        let Some(v) = raw.concrete_view() else { return Ok(()) };
        if v.ndim() == 0 {
            return Ok(());
        }
        let m = model_of_view(&v);
        let axis = pick % v.ndim();
        let d = v.shape()[axis];
        let mut points: Vec<i64> = cuts.iter().map(|&c| c.min(d)).collect();
        points.sort_unstable();
        let mut sizes = Vec::new();
        let mut prev = 0;
        for &p in points.iter().chain(std::iter::once(&d)) {
            sizes.push(p - prev);
            prev = p;
        }
        // Sometimes the sizes do not add up to the axis.
        if let Some(last) = sizes.last_mut() {
            *last += bump;
        }
        let ok = sizes.iter().all(|&s| s >= 0) && sizes.iter().sum::<i64>() == d;
        let cx = Scope::new();
        let st = ViewStack::new(View::from(&v));
        let pieces = st.split_sizes(&cx, axis, &sizes);
        if !ok {
            prop_assert!(pieces.is_err());
            let first = v.apply(&Op::SplitSizes { axis, sizes: sizes.clone(), piece: 0 });
            prop_assert!(first.is_err());
            return Ok(());
        }
        let pieces = pieces.map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(pieces.len(), sizes.len());
        let (scx, [z]) = crate::scope_with(["z 0..=0"]);
        let mut b = Bindings::new();
        b.set(z, 0).expect("z");
        let sym: Vec<Expr> = sizes.iter().map(|&s| Expr::from(s) + z).collect();
        let mut lo = 0;
        for (k, piece) in pieces.iter().enumerate() {
            let want = along(&m, axis, lo, lo + sizes[k]);
            let got = piece.to_concrete("test").and_then(|c| c.offsets()).expect("offsets");
            prop_assert_eq!(&got, &want.table);
            agree(v.apply(&Op::SplitSizes { axis, sizes: sizes.clone(), piece: k }), &want)?;
            let op = Op::SplitSizes { axis, sizes: sym.clone(), piece: k };
            let bound = st.apply(&scx, &op).and_then(|s| s.bind(&scx, &b)).and_then(|c| c.offsets());
            prop_assert_eq!(bound.ok(), Some(want.table), "{}", op);
            lo += sizes[k];
        }
    }

    /// `chunk` gives PyTorch's chunks, each reading the model's indices of its range.
    #[test]
    fn chunk_pieces_match_the_index_model(raw in arb_raw(3, 0, 7), pick in 0usize..3, n in 1usize..6) {
        let Some(v) = raw.concrete_view() else { return Ok(()) };
        if v.ndim() == 0 {
            return Ok(());
        }
        let m = model_of_view(&v);
        let axis = pick % v.ndim();
        let ranges = chunk_ranges(v.shape()[axis], n as i64);
        let cx = Scope::new();
        let pieces = ViewStack::new(View::from(&v)).chunk(&cx, axis, n).expect("chunk");
        prop_assert_eq!(pieces.len(), ranges.len());
        for (k, (piece, &(lo, hi))) in pieces.iter().zip(&ranges).enumerate() {
            let want = along(&m, axis, lo, hi);
            let got = piece.to_concrete("test").and_then(|c| c.offsets()).expect("offsets");
            prop_assert_eq!(&got, &want.table, "chunk {} of {:?}", k, ranges);
            agree(v.apply(&Op::Chunk { axis, chunks: n, piece: k }), &want)?;
        }
    }

    /// `squeeze` of a list of axes removes exactly those axes, each of size 1 (NumPy's
    /// rule); an axis of another size, out of range or listed twice is an error.
    #[test]
    fn squeeze_of_listed_axes_matches_the_model(
        raw in arb_raw(4, 0, 2),
        list in prop::collection::vec(0usize..5, 0..4),
    ) {
        let Some(v) = raw.concrete_view() else { return Ok(()) };
        let m = model_of_view(&v);
        let rank = v.ndim();
        let mut seen = Vec::new();
        let ok = list.iter().all(|&a| {
            let fresh = !seen.contains(&a);
            seen.push(a);
            fresh && a < rank && v.shape()[a] == 1
        });
        let cx = Scope::new();
        let st = ViewStack::new(View::from(&v));
        let got = st.squeeze(&cx, Some(&list));
        if !ok {
            prop_assert!(got.is_err() && v.squeeze(&cx, Some(&list)).is_err(), "{:?} of {:?}", list, v.shape());
            return Ok(());
        }
        let shape: Vec<i64> = (0..rank).filter(|a| !list.contains(a)).map(|a| v.shape()[a]).collect();
        let want = m.reshape(&shape);
        let got = got.map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(got.to_concrete("test").and_then(|c| c.offsets()).expect("offsets"), want.table.clone());
        agree(v.squeeze(&cx, Some(&list)), &want)?;
        // A symbolic view whose listed axes are provably 1 squeezes them alike.
        let (scx, [one]) = crate::scope_with(["one 1..=1"]);
        let sym: Vec<Expr> = v.shape().iter().map(|&d| if d == 1 { one } else { Expr::from(d) }).collect();
        let sv = View::create(&scx, &sym, Some(&v.strides().iter().map(|&t| Expr::from(t)).collect::<Vec<_>>()), Expr::from(v.offset()), None);
        if let (Ok(sv), None) = (sv, v.mask()) {
            let mut b = Bindings::new();
            b.set(one, 1).expect("one");
            let bound = sv.squeeze(&scx, Some(&list)).and_then(|s| s.bind(&scx, &b)).and_then(|c| c.offsets());
            prop_assert_eq!(bound.ok(), Some(want.table));
        }
    }
}
