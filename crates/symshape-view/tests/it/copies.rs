//! Reference 002's copies: NumPy's `copy`, `flatten`, `astype`/`asarray`, fancy and
//! boolean indexing, whether an op's result owns its data (`OWNDATA`), and the dtype
//! promotion table with NEP 50's weak Python scalars, each against an independent model.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope};
use symshape_view::{
    promote_types, result_type, ConcreteView, DType, Error, Op, Operand, Selection, View, ViewOps,
    ViewStack,
};

use crate::chains::stack_table as table;
use crate::engine::model_of_view;
use crate::errors::line;
use crate::scope_with;
use crate::strategy::{arb_raw, factor_shape};

fn arb_dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

proptest! {
    /// `copy`, `flatten_copy` and `astype` on a stack read the input's elements in
    /// row-major order through a row-major view stacked on top (the copy), which the
    /// kernels materialize; `astype` to the same type without a copy is the stack itself.
    #[test]
    fn copy_ops_read_the_row_major_elements(raw in arb_raw(3, 0, 4), from in arb_dtype(), to in arb_dtype(), copy in any::<bool>()) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let m = model_of_view(&c);
        let st = ViewStack::new(View::from(&c));
        let n = st.views().len();
        let copied = st.copy(&cx).expect("copy");
        prop_assert_eq!(copied.views().len(), n + 1);
        prop_assert_eq!(copied.shape(), st.shape());
        prop_assert_eq!(table(&copied), m.table.clone());
        let flat = st.flatten_copy(&cx).expect("flatten");
        prop_assert_eq!(flat.views().len(), n + 1);
        prop_assert_eq!(flat.shape(), &[Expr::from(c.numel())]);
        prop_assert_eq!(table(&flat), m.table.clone());
        let cast = st.astype(&cx, from, to, copy).expect("astype");
        let copies = copy || from != to;
        prop_assert_eq!(cast.views().len(), if copies { n + 1 } else { n });
        prop_assert_eq!(table(&cast), m.table.clone());
        prop_assert_eq!(st.asarray(&cx, from, to).expect("asarray"), st.astype(&cx, from, to, false).expect("astype"));
        // One view: a copy is no view of the same buffer.
        let v = View::from(&c);
        let refused = |r: Result<View, Error>, name: &str| {
            matches!(r, Err(Error::NotRepresentable { op, .. }) if op == name)
        };
        prop_assert!(refused(v.copy(&cx), "copy"));
        prop_assert!(refused(c.apply(&Op::FlattenCopy).map(View::from), "flatten_copy"));
        match v.astype(&cx, from, to, copy) {
            Ok(same) => prop_assert!(!copies && same == v),
            Err(e) => prop_assert!(copies && matches!(e, Error::NotRepresentable { op: "astype", .. }), "{}", e),
        }
        // ascontiguousarray: contiguous, of at least one axis.
        let asc = st.ascontiguousarray(&cx).expect("ascontiguousarray");
        prop_assert_eq!(table(&asc), m.table.clone());
        if c.ndim() == 0 {
            prop_assert_eq!(asc.shape(), &[Expr::from(1)]);
        } else {
            prop_assert_eq!(asc, st.contiguous(&cx).expect("contiguous"));
        }
        // NumPy's OWNDATA of each result.
        prop_assert!(st.copies(&cx, &Op::<i64>::Copy).expect("copy"));
        prop_assert!(st.copies(&cx, &Op::<i64>::FlattenCopy).expect("flatten"));
        prop_assert_eq!(st.copies(&cx, &Op::<i64>::AsType { from, to, copy }).expect("astype"), copies);
    }

    /// `reshape`, `ravel` and `contiguous` copy exactly when the top view cannot express
    /// the result as one view (the model's one-view oracle); view ops never copy.
    #[test]
    fn owndata_follows_the_one_view_oracle(raw in arb_raw(3, 0, 4), seed in prop::collection::vec(any::<u32>(), 4)) {
        let Some(c) = raw.concrete_view() else { return Ok(()) };
        let cx = Scope::new();
        let m = model_of_view(&c);
        let st = ViewStack::new(View::from(&c));
        let target = factor_shape(c.numel(), &seed);
        let reshaped = m.reshape(&target).one_view().is_none();
        prop_assert_eq!(st.copies(&cx, &Op::Reshape(target)).expect("reshape"), reshaped);
        // NumPy's C_CONTIGUOUS: consecutive row-major offsets, no mask.
        let valid: Vec<i64> = m.table.iter().flatten().copied().collect();
        let contiguous = c.mask().is_none()
            && valid.len() == m.table.len()
            && valid.windows(2).all(|w| w[1] == w[0] + 1);
        prop_assert_eq!(st.copies(&cx, &Op::<i64>::Ravel).expect("ravel"), !contiguous);
        prop_assert_eq!(st.copies(&cx, &Op::<i64>::Contiguous).expect("contiguous"), !contiguous);
        prop_assert!(!st.copies(&cx, &Op::<i64>::ReverseAxes).expect("T"));
        prop_assert!(!st.copies(&cx, &Op::<i64>::Flip(vec![])).expect("flip"));
    }

    /// Fancy and boolean indexing select what NumPy selects: written from NumPy's rules
    /// (`IndexError` for an index outside `-d..d`, a boolean index of the axis's length),
    /// the result a new stack of one row-major view of the result's shape.
    #[test]
    fn gathers_select_what_numpy_selects(
        shape in prop::collection::vec(0i64..4, 1..4),
        pick in 0usize..3,
        picks in prop::collection::vec(-5i64..5, 0..5),
        bits in prop::collection::vec(any::<bool>(), 0..30),
        short in any::<bool>(),
    ) {
        let cx = Scope::new();
        let c = ConcreteView::contiguous(&shape).expect("view");
        let st = ViewStack::new(View::from(&c)).flip(&cx, &[0]).expect("flip");
        let axis = pick % shape.len();
        let d = shape[axis];
        // take
        let want: Option<Vec<i64>> = picks
            .iter()
            .map(|&i| if (-d..0).contains(&i) { Some(i + d) } else { (0..d).contains(&i).then_some(i) })
            .collect();
        let op = Op::Take { axis, indices: picks.clone() };
        check_gather(&st, &shape, &op, axis, want)?;
        // compress, with a mask one entry too short when `short`
        let len = usize::try_from(d).expect("size") - usize::from(short && d > 0);
        let mask: Vec<bool> = (0..len).map(|k| bits.get(k).copied().unwrap_or(true)).collect();
        let want = (mask.len() as i64 == d)
            .then(|| (0..d).filter(|&k| mask[k as usize]).collect());
        check_gather(&st, &shape, &Op::Compress { axis, mask }, axis, want)?;
        // boolean mask of the whole shape
        let numel: i64 = shape.iter().product();
        let len = usize::try_from(numel).expect("numel") - usize::from(short && numel > 0);
        let mask: Vec<bool> = (0..len).map(|k| bits.get(k % 30).copied().unwrap_or(false)).collect();
        let want = (mask.len() as i64 == numel)
            .then(|| (0..numel).filter(|&k| mask[k as usize]).collect());
        check_gather(&st, &[numel], &Op::BooleanMask(mask), 0, want)?;
    }

    /// NEP 50: a Python scalar never decides the size of the result.
    #[test]
    fn python_scalars_are_weak(d in arb_dtype(), v in -300i128..300) {
        let int = |d: DType| !matches!(d, DType::Bool | DType::Float32 | DType::Float64);
        let fits = match d {
            DType::Int8 => (-128..=127).contains(&v),
            DType::UInt8 => (0..=255).contains(&v),
            DType::Int16 | DType::Int32 | DType::Int64 => true,
            _ => v >= 0,
        };
        let got = result_type(&[Operand::Array(d), Operand::PyInt(v)]);
        match d {
            DType::Bool => prop_assert_eq!(got.ok(), Some(DType::Int64)),
            _ if !int(d) => prop_assert_eq!(got.ok(), Some(d)),
            _ if fits => prop_assert_eq!(got.ok(), Some(d)),
            _ => prop_assert!(matches!(got, Err(Error::Invalid { op: "result_type", .. })), "{:?}", got),
        }
        let float = result_type(&[Operand::PyFloat, Operand::Array(d)]).expect("float");
        prop_assert_eq!(float, if int(d) || d == DType::Bool { DType::Float64 } else { d });
        prop_assert_eq!(result_type(&[Operand::Array(d), Operand::PyBool]).ok(), Some(d));
    }
}

/// Checks a gather on `st` against the indices NumPy selects along `axis` of `shape`
/// (`None` where NumPy raises).
fn check_gather(
    st: &ViewStack,
    shape: &[i64],
    op: &Op<i64>,
    axis: usize,
    want: Option<Vec<i64>>,
) -> Result<(), TestCaseError> {
    let cx = Scope::new();
    let top = st.top().as_concrete().expect("concrete");
    let sel = Selection::of(top.shape(), op, "the view");
    let res = st.apply_dim(&cx, op);
    let Some(want) = want else {
        prop_assert!(sel.is_err() && res.is_err(), "{} should fail", op);
        let e = res.expect_err("error");
        prop_assert!(matches!(&e, Error::Invalid { .. }), "{}", e);
        return Ok(());
    };
    let sel = sel.map_err(|e| TestCaseError::fail(format!("{op}: {e}")))?;
    prop_assert_eq!(&sel.shape, &shape.to_vec());
    prop_assert_eq!(sel.axis, axis);
    prop_assert_eq!(&sel.indices, &want);
    let mut out = shape.to_vec();
    out[axis] = want.len() as i64;
    let res = res.map_err(|e| TestCaseError::fail(format!("{op}: {e}")))?;
    let fresh = ConcreteView::contiguous(&out).expect("row-major");
    prop_assert_eq!(res.views(), &[View::from(fresh)][..], "{}", op);
    prop_assert!(st.copies(&cx, op).expect("copies"));
    let one = st.top().apply_dim(&cx, op).expect_err("one view");
    prop_assert!(matches!(one, Error::NotRepresentable { .. }), "{}", one);
    Ok(())
}

/// NumPy's safe casts, written out: `bool` to anything; an integer to an integer that
/// holds its range; an integer of at most 16 bits to `float32`, every integer to
/// `float64` (NumPy counts `int64` to `float64` as safe); a float to one at least as wide.
fn can_cast(a: DType, b: DType) -> bool {
    use DType::*;
    let range = |d: DType| -> Option<(i128, i128)> {
        match d {
            Int8 => Some((-128, 127)),
            Int16 => Some((-32768, 32767)),
            Int32 => Some((i32::MIN.into(), i32::MAX.into())),
            Int64 => Some((i64::MIN.into(), i64::MAX.into())),
            UInt8 => Some((0, 255)),
            UInt16 => Some((0, 65535)),
            UInt32 => Some((0, u32::MAX.into())),
            UInt64 => Some((0, u64::MAX.into())),
            _ => None,
        }
    };
    let bits = |d: DType| d.itemsize() * 8;
    match (a, b) {
        (Bool, _) => true,
        (_, Bool) => false,
        (Float32 | Float64, Float32 | Float64) => bits(a) <= bits(b),
        (Float32 | Float64, _) => false,
        (_, Float32) => bits(a) <= 16,
        (_, Float64) => true,
        _ => {
            let ((lo, hi), (x, y)) = (range(a).expect("int"), range(b).expect("int"));
            x <= lo && hi <= y
        }
    }
}

/// `promote_types` is the smallest type both cast to safely, for all 121 pairs; the table
/// itself is snapshotted for reading.
#[test]
fn promotion_is_the_smallest_safe_cast() {
    let mut lines = Vec::new();
    for a in DType::ALL {
        let mut row = Vec::new();
        for b in DType::ALL {
            let want = DType::ALL
                .iter()
                .copied()
                .filter(|&t| can_cast(a, t) && can_cast(b, t))
                .min_by_key(|t| t.itemsize())
                .expect("float64 takes everything but none");
            let got = promote_types(a, b);
            assert_eq!(got, want, "{a} + {b}");
            assert_eq!(promote_types(b, a), got, "symmetric");
            row.push(format!("{:>7}", got.name()));
        }
        lines.push(format!("{:>7}: {}", a.name(), row.join(" ")));
    }
    insta::assert_snapshot!(lines.join("\n"));
}

/// The examples of reference 002 and NEP 50, and the errors of the dtype statements.
#[test]
fn result_types_of_the_references() {
    let cases = [
        "int32 int64",
        "int32 float32",
        "float32 float64",
        "int8 bool",
        "uint64 int8",
        "float32 1.0",
        "int32 1.0",
        "uint8 300",
        "uint8 -1",
        "int8 1",
        "bool 1",
        "True False",
        "1 2.5",
        "int16 float32 uint32",
        "float16 1",
        "x",
    ];
    let lines: Vec<String> = cases
        .iter()
        .map(|case| {
            let ops: Result<Vec<Operand>, Error> = case.split(' ').map(str::parse).collect();
            let got = ops.and_then(|o| result_type(&o));
            match got {
                Ok(d) => format!("{case}: {d}"),
                Err(e) => format!("{case}: {e}"),
            }
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

/// Gathers on symbolic views: the indices' bounds and the mask's length are guards,
/// checked at bind time against the concrete rule.
#[test]
fn symbolic_gathers_guard_their_bounds() {
    let (cx, [n, k]) = scope_with(["n 0..=4", "k -6..=6"]);
    let st = ViewStack::new(View::row_major(&cx, &[n, Expr::from(3)]).expect("view"));
    let take = st.take(&cx, 0, &[k, Expr::from(0)]).expect("take");
    let compress = st.compress(&cx, 0, &[true, false, true]).expect("compress");
    let mask = st.boolean_mask(&cx, &[true; 6]).expect("mask");
    insta::assert_snapshot!(
        format!("{take}\n{}\n{compress}\n{}\n{mask}\n{}", take.guards_text(), compress.guards_text(), mask.guards_text()),
        @r"
    view shape=[2, 3] strides=[3, 1] offset=0 mask=none
    take: k + n >= 0 (index k is at least -n, the negated size of axis 0)
    take: k < n (index k is below the size of axis 0)
    view shape=[2, 3] strides=[3, 1] offset=0 mask=none
    compress: n == 3 (axis 0 has one index per mask entry)
    view shape=[6] strides=[1] offset=0 mask=none
    boolean_mask: 3*n == 6 (the shape [n, 3] has one element per mask entry)
    "
    );
    for nv in 0..=4 {
        for kv in -6..=6 {
            let mut b = Bindings::new();
            b.set(n, nv).expect("n");
            b.set(k, kv).expect("k");
            let shape = [nv, 3];
            let concrete = |op: Op<i64>| Selection::of(&shape, &op, "v").is_ok();
            let cases = [
                (
                    &take,
                    concrete(Op::Take {
                        axis: 0,
                        indices: vec![kv, 0],
                    }),
                ),
                (
                    &compress,
                    concrete(Op::Compress {
                        axis: 0,
                        mask: vec![true, false, true],
                    }),
                ),
                (&mask, concrete(Op::BooleanMask(vec![true; 6]))),
            ];
            for (sym, ok) in cases {
                assert_eq!(sym.bind(&cx, &b).is_ok(), ok, "n = {nv}, k = {kv}\n{sym}");
            }
        }
    }
    // Proven out of bounds: an error at once.
    let e = st
        .take(&cx, 1, &[Expr::from(3)])
        .expect_err("3 is outside axis 1");
    insta::assert_snapshot!(e.to_string(), @"take: guard 3 < 3 (index 3 is below the size of axis 1) fails: it is false for every value of the symbols, for view [n, 3] with strides [3, 1]");
}

#[test]
fn copy_and_gather_errors() {
    let cx = Scope::new();
    let v = View::contiguous(&[2, 3]).expect("view");
    let st = ViewStack::new(v.clone());
    let lines = [
        line("copy of one view", v.copy(&cx).map(ViewStack::new)),
        line(
            "flatten of one view",
            v.flatten_copy(&cx).map(ViewStack::new),
        ),
        line(
            "astype of one view",
            v.astype(&cx, DType::Int32, DType::Float32, false)
                .map(ViewStack::new),
        ),
        line(
            "astype copy of one view",
            v.astype(&cx, DType::Int32, DType::Int32, true)
                .map(ViewStack::new),
        ),
        line(
            "take of one view",
            v.take(&cx, 0, &[1i64]).map(ViewStack::new),
        ),
        line("take out of bounds", st.take(&cx, 1, &[1i64, -4])),
        line("take axis", st.take(&cx, 2, &[0i64])),
        line("compress length", st.compress(&cx, 1, &[true, false])),
        line("boolean_mask length", st.boolean_mask(&cx, &[true; 5])),
        line(
            "boolean_mask of one view",
            v.boolean_mask(&cx, &[true; 6]).map(ViewStack::new),
        ),
    ];
    insta::assert_snapshot!(lines.join("\n"));
}

/// Binding a gather's result gives one row-major view of the shape the concrete rule
/// gives, at every size.
#[test]
fn model_shapes_of_symbolic_gathers() {
    let (cx, [n]) = scope_with(["n 1..=3"]);
    let st = ViewStack::new(View::row_major(&cx, &[n, n + 1]).expect("view"));
    let got = st.take(&cx, 1, &[Expr::from(-1), n]).expect("take");
    for nv in 1..=3 {
        let mut b = Bindings::new();
        b.set(n, nv).expect("n");
        let bound = got.bind(&cx, &b).expect("bind");
        let shape = [nv, nv + 1];
        let sel = Selection::of(
            &shape,
            &Op::Take {
                axis: 1,
                indices: vec![-1, nv],
            },
            "v",
        )
        .expect("in bounds");
        assert_eq!(bound.shape(), sel.result_shape().as_slice());
        assert_eq!(sel.indices, vec![nv, nv]);
    }
}

/// The row-major flatten of 9 or more symbolic sizes is one view (the prover bounds
/// products of at most 8 factors one by one; the reshape decides by division), so it
/// is no copy and `view_shape` accepts it.
#[test]
fn a_row_major_flatten_of_many_symbols_is_one_view() {
    let mut cx = Scope::new();
    let sizes: Vec<Expr> = (0..12)
        .map(|k| cx.declare_str(&format!("s{k} 1..=64")).expect("declare"))
        .collect();
    let v = View::row_major(&cx, &sizes).expect("view");
    for n in [2, 8, 9, 12] {
        let product: Expr = sizes[..n].iter().copied().product();
        let mut shape = vec![product];
        shape.extend_from_slice(&sizes[n..]);
        let flat = v.reshape(&cx, &shape).expect("one view");
        assert_eq!(flat.shape(), shape.as_slice());
        assert_eq!(
            flat.strides()[0],
            sizes[n..].iter().copied().product::<Expr>()
        );
        assert!(!v.copied_by(&cx, &Op::Reshape(shape.clone())), "{n} sizes");
        assert_eq!(v.view_shape(&cx, &shape).expect("view_shape"), flat);
        let st = ViewStack::new(v.clone());
        assert!(!st
            .copies(&cx, &Op::Reshape(shape.clone()))
            .expect("reshape"));
    }
}

/// A trace records a copy as a boundary of its stack: ops after it compose with the
/// copy's layout, the trace prints it, a replay keeps it, and serde stores it.
#[test]
fn traces_keep_the_copy_boundary() {
    let (cx, [n]) = scope_with(["n 1..=8"]);
    let x = View::create(
        &cx,
        &[n, Expr::from(4)],
        Some(&[Expr::from(1), n]),
        Expr::from(0),
        None,
    )
    .expect("view");
    let mut t = symshape_view::Trace::new(x);
    t.apply(&cx, &Op::Copy).expect("copy");
    let items = symshape_view::parse_index_in(&cx, "[1:]").expect("index");
    t.apply(&cx, &Op::Index(items)).expect("slice");
    assert_eq!(t.stack().storage_level(), 1);
    let on = t.stack().on_storage();
    assert_eq!(on.views().len(), 1);
    assert_eq!(
        on.top().to_string(),
        "view shape=[n - 1, 4] strides=[4, 1] offset=4 mask=none"
    );
    insta::assert_snapshot!(t.to_string(), @r"
    view [n, 4]
      view shape=[n, 4] strides=[1, n] offset=0 mask=none
    copy
      view shape=[n, 4] strides=[1, n] offset=0 mask=none
      copy
      view shape=[n, 4] strides=[4, 1] offset=0 mask=none
    index [1:]
      view shape=[n, 4] strides=[1, n] offset=0 mask=none
      copy
      view shape=[n - 1, 4] strides=[4, 1] offset=4 mask=none
    ");
    // Binding reads the same elements through the copy or without it: prepared and
    // plain binds agree, and read the model's offsets (x[i][j] = i + n*j, rows 1..n).
    let prepared = symshape_view::PreparedStack::new(&cx, t.stack()).expect("prepare");
    let mut cache = prepared.cache();
    let mut b = Bindings::new();
    b.set(n, 3).expect("set");
    let plain = t.stack().bind(&cx, &b).expect("bind");
    assert_eq!(prepared.bind(&mut cache, &[3]).expect("bind"), plain);
    let want: Vec<Option<i64>> = (1..3)
        .flat_map(|i| (0..4).map(move |j| Some(i + 3 * j)))
        .collect();
    assert_eq!(plain.offsets().expect("offsets"), want);
    let again = t
        .replay(
            &cx,
            View::row_major(&cx, &[Expr::from(3), Expr::from(4)]).expect("view"),
        )
        .expect("replay");
    assert_eq!(again.stack().storage_level(), 1);
    // A copy recorded by hand must be one of the stack's levels, at or above the last.
    let st = t.stack().clone();
    insta::assert_snapshot!(line("with_copy_at", st.clone().with_copy_at(2)), @"with_copy_at: stack: a copy at level 2 is not a level of a stack of 2 views (levels 0 to 1)");
    let two = st.copy(&cx).expect("copy");
    insta::assert_snapshot!(line("with_copy_at", two.with_copy_at(1)), @"with_copy_at: stack: a copy at level 1 is below the copy already at level 2");
    assert_eq!(st.clone().with_copy_at(1).expect("same"), st);
    assert_eq!(
        ViewStack::new(View::row_major(&cx, &[n]).expect("v"))
            .with_copy_at(0)
            .expect("none")
            .storage_level(),
        0
    );
}

/// Only the last copy's storage is observed, so a chain of copies keeps a concrete stack as
/// short as one copy: the levels a new copy reads merge again across the earlier copy.
/// Before, every round of transpose-then-copy added a level and a long trace was quadratic.
/// (Symbolic levels merge across it where `symbolic::merge` proves it: a row-major level
/// below; two permuted levels still stack.)
#[test]
fn a_chain_of_copies_keeps_the_stack_short() {
    let cx = Scope::new();
    let start = ViewStack::new(View::contiguous(&[64, 32]).expect("view"));
    let mut st = start.clone();
    let transposed_copy = |st: &ViewStack| {
        st.permute(&cx, &[1, 0])
            .expect("permute")
            .copy(&cx)
            .expect("copy")
    };
    for round in 0..50 {
        st = transposed_copy(&st);
        assert_eq!(st.views().len(), 2, "round {round}:\n{st}");
        assert_eq!(st.storage_level(), 1);
        // Two transposes read the input itself: the level below the copy merged.
        st = transposed_copy(&st);
        assert_eq!(st.views().len(), 2, "round {round}:\n{st}");
        assert_eq!(st.views()[0], start.views()[0], "round {round}:\n{st}");
    }
}
