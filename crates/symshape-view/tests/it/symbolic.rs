//! Symbolic views through short scripts: ops, guards, binding, lowering, traces.

use symshape::{Bindings, Expr, Scope};
use symshape_view::{infer, parse_index_in, Op, PreparedView, Trace, View, ViewOps};

use crate::scope_with;

/// Splits `[a, (b, c), d]` at top-level commas.
fn items(text: &str) -> Vec<String> {
    let t = text.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(t);
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0);
    for ch in inner.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn exprs(cx: &Scope, text: &str) -> Vec<Expr> {
    items(text)
        .iter()
        .map(|t| cx.parse_expr(t).expect("test script expression"))
        .collect()
}

fn pairs(cx: &Scope, text: &str) -> Vec<(Expr, Expr)> {
    items(text)
        .iter()
        .map(|p| {
            let e = exprs(cx, p.trim_start_matches('(').trim_end_matches(')'));
            (e[0], e[1])
        })
        .collect()
}

fn axes(text: &str) -> Vec<usize> {
    items(text)
        .iter()
        .map(|t| t.parse().expect("axis"))
        .collect()
}

/// Runs a script: `sym`, `assume`, `view`, ops (also `unfold AXIS, SIZE, STEP`
/// and `diagonal OFFSET, A, B`), `bind n=5, m=3`, `lower`, `guards`,
/// `infer [7, 10]`, `contiguous`, `canonical`, `split AXIS, SIZE` and
/// `piece AXIS, SIZE, I`. Returns the traces (one per `view`) and, after `---`,
/// the output of the queries and every error.
fn run(script: &str) -> String {
    let mut cx = Scope::new();
    let mut trace: Option<Trace> = None;
    let mut done: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for line in script.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (cmd, rest) = line.split_once(' ').unwrap_or((line, ""));
        let op = match cmd {
            "sym" => {
                cx.declare_str(rest).expect("declare");
                continue;
            }
            "assume" => {
                cx.assume_str(rest).expect("assume");
                continue;
            }
            "view" => {
                // A new view starts a new trace; the finished one is printed first.
                done.extend(trace.take().map(|t| t.to_string()));
                match View::create(&cx, &exprs(&cx, rest), None, Expr::from(0), None) {
                    Ok(v) => trace = Some(Trace::new(v)),
                    Err(e) => notes.push(format!("{line}: error: {e}")),
                }
                continue;
            }
            "reshape" => Op::Reshape(exprs(&cx, rest)),
            "expand" => Op::Expand(exprs(&cx, rest)),
            "permute" => Op::Permute(axes(rest)),
            "flip" => Op::Flip(axes(rest)),
            "shrink" => Op::Shrink(pairs(&cx, rest)),
            "pad" => Op::Pad(pairs(&cx, rest)),
            "index" => match parse_index_in(&cx, rest) {
                Ok(items) => Op::Index(items),
                Err(e) => {
                    notes.push(format!("{line}: error: {e}"));
                    continue;
                }
            },
            "unfold" => {
                let a = items(rest);
                Op::Unfold {
                    axis: a[0].parse().expect("axis"),
                    size: cx.parse_expr(&a[1]).expect("size"),
                    step: cx.parse_expr(&a[2]).expect("step"),
                }
            }
            "diagonal" => {
                let a = items(rest);
                Op::Diagonal {
                    offset: cx.parse_expr(&a[0]).expect("offset"),
                    dim1: a[1].parse().expect("axis"),
                    dim2: a[2].parse().expect("axis"),
                }
            }
            _ => {
                let t = trace.as_mut().expect("a view first");
                match cmd {
                    "bind" => {
                        let mut b = Bindings::new();
                        for kv in rest.split(',') {
                            let (k, v) = kv.split_once('=').expect("name=value");
                            cx.bind(&mut b, k.trim(), v.trim().parse().expect("value"))
                                .expect("bind");
                        }
                        match t.bind(&cx, &b) {
                            Ok(s) if s.offsets().map_or(0, |o| o.len()) <= 64 => {
                                notes.push(format!(
                                    "{line}: {}",
                                    s.offsets_line().unwrap_or_else(|e| e.to_string())
                                ))
                            }
                            Ok(_) => {}
                            Err(e) => notes.push(format!("{line}: error: {e}")),
                        }
                    }
                    "lower" => match t.stack().lower(&cx) {
                        Ok(l) => notes.push(format!("lower:\n{l}")),
                        Err(e) => notes.push(format!("lower: error: {e}")),
                    },
                    "guards" => notes.push(t.stack().guards_text()),
                    "canonical" => match t.stack().canonical(&cx) {
                        Ok(c) => {
                            notes.push(format!("canonical: {}", c.to_string().replace('\n', " | ")))
                        }
                        Err(e) => notes.push(format!("canonical: error: {e}")),
                    },
                    // `split AXIS, SIZE`: the piece count and every piece, or the error.
                    "split" => {
                        let a = items(rest);
                        let axis: usize = a[0].parse().expect("axis");
                        let size = cx.parse_expr(&a[1]).expect("size");
                        let top = t.stack().top();
                        match top.split_count(&cx, axis, size) {
                            Ok(n) => notes.push(format!("{line}: count {n}")),
                            Err(e) => notes.push(format!("{line}: error: {e}")),
                        }
                        match top.split(&cx, axis, size) {
                            Ok(ps) => notes.extend(ps.iter().map(|p| format!("  piece {p}"))),
                            Err(e) => notes.push(format!("  error: {e}")),
                        }
                    }
                    // `piece AXIS, SIZE, I`: piece I of the split, its guards and bindings.
                    "piece" => {
                        let a = items(rest);
                        let axis: usize = a[0].parse().expect("axis");
                        let size = cx.parse_expr(&a[1]).expect("size");
                        let i = cx.parse_expr(&a[2]).expect("piece");
                        match t.stack().split_piece(&cx, axis, size, i) {
                            Ok(p) => {
                                notes.push(format!(
                                    "{line}: {}",
                                    p.to_string().replace('\n', " | ")
                                ));
                                notes.push(p.guards_text());
                            }
                            Err(e) => notes.push(format!("{line}: error: {e}")),
                        }
                    }
                    "strides" => match t.stack().axis_strides(&cx) {
                        Ok(v) => {
                            let parts: Vec<String> = v
                                .iter()
                                .map(|s| s.map_or("not affine".to_string(), |e| e.to_string()))
                                .collect();
                            notes.push(format!("strides: {}", parts.join(", ")));
                        }
                        Err(e) => notes.push(format!("strides: error: {e}")),
                    },
                    "unit" => {
                        let top = t.stack().top();
                        notes.push(format!(
                            "unit-stride axes: {:?}, masked axes: {:?}",
                            top.unit_stride_axes(&cx),
                            top.masked_axes(&cx)
                        ));
                    }
                    "contiguous" => notes.push(format!(
                        "contiguous: {}",
                        t.stack().top().is_c_contiguous_in(&cx)
                    )),
                    "infer" => {
                        let want: Vec<i64> = items(rest)
                            .iter()
                            .map(|x| x.parse().expect("size"))
                            .collect();
                        let mut b = Bindings::new();
                        match infer(&cx, t.stack().shape(), &want, &mut b) {
                            Ok(found) => notes.push(format!("infer: {found}")),
                            Err(e) => notes.push(format!("infer: error: {e}")),
                        }
                    }
                    _ => panic!("unknown statement {line}"),
                }
                continue;
            }
        };
        let t = trace.as_mut().expect("a view first");
        if let Err(e) = t.apply(&cx, &op) {
            notes.push(format!("{line}: error: {e}"));
        }
    }
    done.extend(trace.map(|t| t.to_string()));
    let mut out = done.join("\n");
    if !notes.is_empty() {
        out.push_str("\n---\n");
        out.push_str(&notes.join("\n"));
    }
    out
}

/// Scripts for [`run`], each named after the snapshot of its output.
const SCRIPTS: &[(&str, &str)] = &[
    // The stride of an axis is taken between two indices inside the axis, where
    // the `//` and `%` of a reshape below simplify: axis 1 steps by 4, axis 2 wraps.
    (
        "axis_strides_of_merged_heads",
        "
        sym b 1..=8
        sym s 1..=64
        view [b, 2, s, 4]
        permute [0, 2, 1, 3]
        reshape [b, s, 8]
        lower
        strides
        reshape [b, s, 2, 4]
        strides
        ",
    ),
    // A transpose flattened wraps every axis but none in its own range.
    (
        "axis_strides_of_a_flattened_transpose",
        "
        sym s 1..=64
        view [3, s]
        permute [1, 0]
        reshape [3*s]
        lower
        strides
        reshape [s, 3]
        strides
        ",
    ),
    (
        "attention_heads_split_and_merge_with_symbolic_sequence",
        "
        sym b 1..=8
        sym s 1..=2048
        view [b, s, 768]
        reshape [b, s, 12, 64]
        permute [0, 2, 1, 3]
        contiguous
        lower
        strides
        permute [0, 2, 1, 3]
        reshape [b, s, 768]
        contiguous
        lower
        guards
        infer [2, 5, 768]
        ",
    ),
    // Windows of 3 along a padded row: expand, flatten, pad by one row, re-split
    // with one more column (each row shifts by one), keep the valid starts.
    (
        "conv_padding_and_sliding_windows_with_symbolic_width",
        "
        sym w 1..=64
        view [w]
        pad [(1, 1)]
        reshape [1, w + 2]
        expand [3, w + 2]
        reshape [3*w + 6]
        pad [(0, 3)]
        reshape [3, w + 3]
        shrink [(0, 3), (0, w)]
        permute [1, 0]
        guards
        lower
        bind w=2
        bind w=3
        ",
    ),
    (
        "conv_padding_with_symbolic_height_and_width",
        "
        sym h 1..=512
        sym w 1..=512
        view [h, w, 3]
        pad [(1, 1), (1, 1), (0, 0)]
        lower
        shrink [(0, h), (1, w + 1), (0, 3)]
        lower
        unit
        index [::2, 1:, 0]
        lower
        strides
        bind h=3, w=2
        ",
    ),
    (
        "kv_cache_sliced_at_symbolic_position",
        "
        sym p 0..=2047
        view [2048, 8, 64]
        shrink [(0, p + 1), (0, 8), (0, 64)]
        permute [1, 0, 2]
        lower
        strides
        index [:, -1]
        lower
        guards
        bind p=0
        ",
    ),
    (
        "kv_cache_write_slot_guarded",
        "
        sym p 0..=4096
        view [2048, 64]
        shrink [(p, p + 1), (0, 64)]
        guards
        lower
        bind p=2047
        bind p=2048
        ",
    ),
    (
        "bias_broadcast_over_symbolic_batch",
        "
        sym b 0..=64
        view [768]
        reshape [1, 768]
        expand [b, 768]
        lower
        strides
        contiguous
        bind b=0
        ",
    ),
    (
        "deferred_reshape_merges_at_bind",
        "
        sym n 1..=16
        sym m 1..=16
        view [n, m]
        permute [1, 0]
        reshape [n*m]
        guards
        lower
        strides
        reshape [m, n]
        lower
        bind n=2, m=3
        ",
    ),
    (
        "reshape_with_unknown_element_counts_is_guarded",
        "
        sym n 1..=4096
        sym m 1..=4096
        view [n, 768]
        reshape [m, 64]
        guards
        bind n=2, m=24
        bind n=2, m=25
        ",
    ),
    (
        "placeholder_strides_and_queries",
        "
        sym n 1..=64
        sym m 0..=64
        view [n, m, 4]
        contiguous
        lower
        flip [0]
        contiguous
        lower
        strides
        unit
        infer [3, 5, 4]
        infer [3, 5, 5]
        ",
    ),
    (
        "proven_false_preconditions_fail_at_once",
        "
        sym n 1..=64
        view [n, 4]
        shrink [(0, n + 1), (0, 4)]
        pad [(0 - 1, 0), (0, 0)]
        expand [n, 8]
        reshape [n, 5]
        index [:, 4]
        permute [0, 0]
        lower
        ",
    ),
    // Pinned from `symprop`: a reversed slice that keeps nothing gives a provably
    // empty axis, which lowers to `valid: false` instead of an empty index range.
    (
        "empty_reversed_slice_lowers_to_invalid",
        "
        sym n 0..=4
        view [n, 3]
        index [:-1:-1]
        lower
        bind n=2
        ",
    ),
    // `cache[:, :pos]` then the newest row `[:, pos - 1]`, with `pos >= 1` proven.
    (
        "kv_cache_prefix_and_last_row_at_symbolic_position",
        "
        sym pos 1..=2048
        view [8, 2048, 64]
        index [:, :pos]
        lower
        index [:, pos - 1]
        lower
        guards
        bind pos=1
        bind pos=2048
        ",
    ),
    // `pos - 1` may be -1: taken as written (from the start), under a guard.
    (
        "kv_cache_position_that_may_be_zero_is_guarded",
        "
        sym pos 0..=2048
        view [2048, 64]
        index [pos - 1]
        guards
        bind pos=5
        bind pos=0
        ",
    ),
    (
        "symbolic_indices_bounds_and_steps_follow_numpy",
        "
        sym n 0..=8
        sym k 0..=3
        sym s 1..=3
        view [n, n + 2, 4]
        index [1:n - 1, ::s, -k - 1]
        guards
        lower
        bind n=4, k=1, s=2
        bind n=4, k=3, s=1
        index [::-s, -k:]
        guards
        bind n=5, k=1, s=2
        bind n=5, k=0, s=2
        index [::k - 1]
        index [::s - s]
        index [k, k, k, k]
        index [n + 1]
        index [min(k, n), ..., None]
        index [:(n + 1) // 2]
        ",
    ),
    // 3x3 windows with stride 2 over an unpadded image: one view. Padded rows
    // cut the windows' mask unevenly, so the stack reads the padded view through
    // a row-major one.
    (
        "conv_windows_by_unfold_with_symbolic_height",
        "
        sym h 3..=512
        sym w 3..=512
        view [h, w, 16]
        unfold 0, 3, 2
        unfold 1, 3, 2
        lower
        guards
        bind h=5, w=3
        view [h, w]
        pad [(1, 1), (1, 1)]
        unfold 0, 3, 1
        lower
        bind h=3, w=3
        ",
    ),
    (
        "unfold_preconditions_become_guards_or_errors",
        "
        sym n 0..=64
        sym k 0..=8
        view [n, 4]
        unfold 0, k, k
        guards
        bind n=5, k=2
        bind n=5, k=0
        bind n=1, k=2
        unfold 1, 5, 1
        unfold 1, 2, 0
        unfold 3, 1, 1
        ",
    ),
    (
        "diagonal_with_symbolic_sizes_and_offsets",
        "
        sym n 1..=64
        sym k 0..=64
        view [n, n, 3]
        diagonal 1, 0, 1
        lower
        view [n, n, 3]
        diagonal -k - 1, 1, 0
        lower
        guards
        bind n=3, k=0
        view [n, n]
        pad [(1, 0), (0, 0)]
        diagonal -1, 0, 1
        lower
        view [n, n]
        diagonal n - k, 0, 1
        guards
        diagonal 0, 0, 0
        ",
    ),
    (
        "split_pieces_with_symbolic_counts",
        "
        sym n 1..=64
        sym m 1..=16
        view [4*m, n]
        split 0, m
        split 1, 4
        piece 1, 4, 2
        piece 0, m, 4
        piece 1, n, 0
        view [n, 3]
        split 1, 1
        piece 0, 0, 0
        ",
    ),
    (
        "canonical_forms_of_symbolic_views",
        "
        sym n 1..=64
        sym m 0..=64
        view [n, 1, m]
        canonical
        shrink [(0, 1), (0, 1), (0, m)]
        canonical
        pad [(0, 0), (1, 0), (0, 0)]
        canonical
        reshape [0 * m, n]
        canonical
        ",
    ),
];

/// Every script of [`SCRIPTS`] prints its traces and query results as pinned.
#[test]
fn scripts_print_their_traces_and_queries() {
    for (name, script) in SCRIPTS {
        insta::assert_snapshot!(*name, run(script));
    }
}

#[test]
fn inference() {
    let (cx, [n, m]) = scope_with(["n 1..=100", "m 1..=100"]);
    let shape = [n, m * 2];
    let mut b = Bindings::new();
    let found = infer(&cx, &shape, &[7, 10], &mut b).expect("infer");
    insta::assert_snapshot!(found.to_string(), @"n = 7, m = 5");
    let mut b = Bindings::new();
    let err = infer(&cx, &shape, &[7, 9], &mut b).expect_err("odd");
    insta::assert_snapshot!(err.to_string(), @"infer: axis 1 has size 2*m, which is never 9 for m in [1, 100]: shape [n, 2*m] cannot take the sizes [7, 9]");
    let mut b = Bindings::new();
    let err = infer(&cx, &[n * m], &[12], &mut b).expect_err("two unknowns");
    insta::assert_snapshot!(err.to_string(), @"infer: axis 0: cannot infer m, n from m*n == 12; bind some of them first");
}

#[test]
fn prepared_binding() {
    let (mut cx, [b, h, w]) = scope_with(["b 1..=64", "h 1..=1024", "w 1..=1024"]);
    cx.assume_str("h <= w").expect("assume");
    let z = Expr::from(0);
    let v = View::create(&cx, &[b, h, w, Expr::from(3)], None, z, None)
        .and_then(|v| {
            v.apply(
                &cx,
                &Op::Pad(vec![
                    (z, z),
                    (1.into(), 1.into()),
                    (2.into(), 2.into()),
                    (z, z),
                ]),
            )
        })
        .and_then(|v| {
            v.apply(
                &cx,
                &Op::Shrink(vec![(z, b), (z, h), (z, w), (z, 3.into())]),
            )
        })
        .expect("view");
    let p = PreparedView::new(&cx, &v).expect("prepare");
    let mut cache = p.cache();
    let names: Vec<String> = p.symbols().iter().map(ToString::to_string).collect();
    let mut lines = vec![format!("symbols: {}", names.join(", "))];
    let cases: [&[i64]; 5] = [&[2, 3, 4], &[1, 1, 1], &[2, 5, 4], &[0, 3, 4], &[2, 3]];
    for vals in cases {
        let res = p.bind(&mut cache, vals).map(|c| View::from(&c).to_string());
        let mut bs = Bindings::new();
        let plain = p
            .symbols()
            .iter()
            .zip(vals)
            .try_for_each(|(&s, &x)| bs.set(s, x).map_err(symshape_view::Error::from))
            .and_then(|()| v.bind(&cx, &bs))
            .map(|x| x.to_string());
        if let (Ok(a), Ok(c)) = (&res, &plain) {
            assert_eq!(a, c, "prepared and plain binding agree");
        }
        match res {
            Ok(t) => lines.push(format!("{vals:?}: {t}")),
            Err(e) => lines.push(format!("{vals:?}: error: {e}")),
        }
    }
    insta::assert_snapshot!(lines.join("\n"));
}

/// The axis helpers work on symbolic views and agree with the concrete ops after binding.
#[test]
fn axis_helpers_on_symbolic_views() {
    let (cx, [n, m]) = scope_with(["n 0..=3", "m 1..=2"]);
    let z = Expr::from(0);
    let v = View::create(&cx, &[n, m * 2], None, z, None)
        .and_then(|v| v.pad(&cx, &[(Expr::from(1), z), (z, m)]))
        .expect("view");
    let ops = |v: &View| {
        v.unsqueeze(&cx, 1)
            .and_then(|v| v.swapaxes(&cx, 0, 2))
            .and_then(|v| v.movedim(&cx, 0, 1))
            .and_then(|v| v.transpose(&cx, 1, 2))
    };
    let sym = ops(&v).expect("symbolic");
    for nv in 0..=3 {
        for mv in 1..=2 {
            let mut b = Bindings::new();
            b.set(n, nv).expect("n");
            b.set(m, mv).expect("m");
            let after = sym
                .bind(&cx, &b)
                .and_then(|x| x.offsets())
                .expect("bind after");
            let before = v
                .bind(&cx, &b)
                .and_then(|x| ops(&View::from(x)))
                .and_then(|x| x.to_concrete("offsets"))
                .and_then(|x| x.offsets())
                .expect("ops after bind");
            assert_eq!(after, before, "n = {nv}, m = {mv}");
        }
    }
    insta::assert_snapshot!(sym.to_string(), @"view shape=[1, n + 1, 3*m] strides=[0, 2*m, 1] offset=-2*m mask=[(0, 1), (1, n + 1), (0, 2*m)]");
    insta::assert_snapshot!(
        v.swapaxes(&cx, 0, 2).expect_err("axis 2").to_string(),
        @"transpose: axis 2 is out of range for view [n + 1, 3*m] with strides [2*m, 1] of rank 2"
    );
}

/// flatten, unflatten, narrow, broadcast_to and squeeze on symbolic views and
/// stacks agree with the concrete ops after binding.
#[test]
fn reshaping_helpers_on_symbolic_views_and_stacks() {
    let (cx, [n, m]) = scope_with(["n 0..=3", "m 1..=2"]);
    let (z, one) = (Expr::from(0), Expr::from(1));
    let v = View::create(&cx, &[n, one, m * 2], None, z, None).expect("view");
    type Chain = fn(
        &Scope,
        &symshape_view::ViewStack,
        Expr,
        Expr,
    ) -> symshape_view::Result<symshape_view::ViewStack>;
    let chains: [(&str, Chain); 4] = [
        ("flatten", |cx, s, n, m| {
            s.permute(cx, &[2, 1, 0])?
                .flatten(cx, 0, 2)?
                .unflatten(cx, 0, &[m * 2, n])
        }),
        ("narrow", |cx, s, n, _| {
            s.narrow(cx, 0, Expr::from(-1), Expr::from(1))?
                .narrow(cx, 2, Expr::from(1), n - n + 1)
        }),
        ("broadcast", |cx, s, n, _| {
            s.squeeze(cx, Some(&[1]))?
                .broadcast_to(cx, &[Expr::from(2), n, s.shape()[2]])
        }),
        ("squeeze", |cx, s, _, _| {
            s.squeeze(cx, None)?.flatten(cx, 0, 1)
        }),
    ];
    let mut lines = Vec::new();
    for (name, f) in chains {
        let sym = f(&cx, &symshape_view::ViewStack::new(v.clone()), n, m);
        lines.push(match &sym {
            Ok(s) => format!("{name}: {}", s.to_string().replace('\n', " | ")),
            Err(e) => format!("{name}: error: {e}"),
        });
        for nv in 0..=3 {
            for mv in 1..=2 {
                let mut b = Bindings::new();
                b.set(n, nv).expect("n");
                b.set(m, mv).expect("m");
                let (nc, mc) = (Expr::from(nv), Expr::from(mv));
                let before = v
                    .bind(&cx, &b)
                    .and_then(|x| f(&cx, &symshape_view::ViewStack::from(x), nc, mc))
                    .and_then(|x| x.to_concrete("offsets"))
                    .and_then(|x| x.offsets());
                let after = sym
                    .clone()
                    .and_then(|s| s.bind(&cx, &b))
                    .and_then(|x| x.offsets());
                match (after, before) {
                    (Ok(a), Ok(c)) => assert_eq!(a, c, "{name}: n = {nv}, m = {mv}"),
                    (Err(_), Err(_)) => {}
                    // Documented restriction: squeezing all size-1 axes keeps an
                    // axis that might be 1 under a guard `d != 1`.
                    (Err(symshape_view::Error::Guard { op: "squeeze", .. }), Ok(_)) => {}
                    (a, c) => panic!("{name}: n = {nv}, m = {mv}: {a:?} vs {c:?}"),
                }
            }
        }
    }
    insta::assert_snapshot!(lines.join("\n"));
}

/// `flatten` is one rule for both engines: a scalar view with a symbolic offset
/// flattens to `[1]` as a concrete one does, and a bad range gets the same message.
#[test]
fn flatten_agrees_between_engines() {
    let (cx, [n]) = scope_with(["n 0..=3"]);
    let z = Expr::from(0);
    let scalar = View::create(&cx, &[], None, n, None).expect("scalar");
    let flat = scalar.flatten(&cx, 0, 0).expect("flatten");
    assert_eq!(flat.shape(), &[Expr::from(1)]);
    let mut lines = Vec::new();
    for shape in [vec![n, Expr::from(3)], vec![Expr::from(2), Expr::from(3)]] {
        let v = View::create(&cx, &shape, None, z, None).expect("view");
        for (start, end) in [(1, 0), (0, 2)] {
            let e = v.flatten(&cx, start, end).expect_err("bad range");
            lines.push(e.to_string());
        }
    }
    insta::assert_snapshot!(lines.join("\n"), @r"
    flatten: start axis 1 is after end axis 0 for view [n, 3] with strides [3, 1]
    flatten: axis 2 is out of range for view [n, 3] with strides [3, 1] of rank 2
    flatten: start axis 1 is after end axis 0 for view [2, 3] with strides [3, 1]
    flatten: axis 2 is out of range for view [2, 3] with strides [3, 1] of rank 2
    ");
}

/// chunk and unbind on symbolic views: constant piece counts only, and the
/// pieces agree with the concrete ops after binding.
#[test]
fn chunk_unbind_and_split_sizes_on_symbolic_views() {
    let (cx, [m, n]) = scope_with(["m 1..=3", "n 0..=3"]);
    let z = Expr::from(0);
    let v = View::create(&cx, &[m * 4, Expr::from(2), n], None, z, None).expect("view");
    let mut lines = Vec::new();
    let mut show = |name: &str, r: &symshape_view::Result<Vec<View>>| match r {
        Ok(ps) => {
            lines.push(format!("{name}: {} pieces", ps.len()));
            lines.extend(ps.iter().map(|p| format!("  {p}")));
        }
        Err(e) => lines.push(format!("{name}: error: {e}")),
    };
    let chunk = v.chunk(&cx, 0, 4);
    show("chunk(0, 4)", &chunk);
    show("chunk(2, 2)", &v.chunk(&cx, 2, 2));
    let unbind = v.unbind(&cx, 1);
    show("unbind(1)", &unbind);
    show("unbind(0)", &v.unbind(&cx, 0));
    let sizes = v.split_sizes(&cx, 0, &[m, m * 3]);
    show("split_sizes(0, [m, 3*m])", &sizes);
    show(
        "split_sizes(2, [1, n - 1])",
        &v.split_sizes(&cx, 2, &[Expr::from(1), n - 1]),
    );
    show("split_sizes(0, [m, m])", &v.split_sizes(&cx, 0, &[m, m]));
    type Cut = fn(&Scope, &View) -> symshape_view::Result<Vec<View>>;
    let cuts: [(&symshape_view::Result<Vec<View>>, Cut); 3] = [
        (&chunk, |cx, x| x.chunk(cx, 0, 4)),
        (&unbind, |cx, x| x.unbind(cx, 1)),
        (&sizes, |cx, x| {
            let m = x.shape()[0].as_i64().expect("bound") / 4;
            x.split_sizes(cx, 0, &[m, 3 * m])
        }),
    ];
    for (sym, cut) in cuts {
        let sym = sym.as_ref().expect("symbolic pieces");
        for mv in 1..=3 {
            for nv in 0..=3 {
                let mut b = Bindings::new();
                b.set(m, mv).expect("m");
                b.set(n, nv).expect("n");
                let want: Vec<_> = cut(&cx, &View::from(v.bind(&cx, &b).expect("bind")))
                    .expect("concrete pieces")
                    .iter()
                    .map(|p| {
                        p.to_concrete("offsets")
                            .and_then(|c| c.offsets())
                            .expect("offsets")
                    })
                    .collect();
                let got: Vec<_> = sym
                    .iter()
                    .map(|p| {
                        p.bind(&cx, &b)
                            .and_then(|x| x.offsets())
                            .expect("bound piece")
                    })
                    .collect();
                assert_eq!(got, want, "m = {mv}, n = {nv}");
            }
        }
    }
    insta::assert_snapshot!(lines.join("\n"));
}

/// The symbols and start view of `symprop`'s transposed, offset and masked case.
fn masked_start() -> (Scope, [Expr; 3], View) {
    let (cx, [n, m, k]) = scope_with(["n 0..=4", "m 1..=3", "k 0..=2"]);
    let (zero, one) = (Expr::from(0), Expr::from(1));
    let v = View::create(
        &cx,
        &[n, m],
        Some(&[one, n + 1]),
        k + 1,
        Some(&[(one, n), (zero, m)]),
    )
    .expect("start");
    (cx, [n, m, k], v)
}

/// Offsets of `st` bound to `vals`, from binding and from its lowering.
fn bound_and_lowered(
    cx: &Scope,
    syms: &[Expr],
    st: &symshape_view::ViewStack,
    vals: &[i64],
) -> (Vec<Option<i64>>, Vec<Option<i64>>) {
    let mut b = Bindings::new();
    for (&s, &x) in syms.iter().zip(vals) {
        b.set(s, x).expect("bind");
    }
    let bound = st.bind(cx, &b).and_then(|x| x.offsets()).expect("binds");
    let low = st.lower(cx).expect("lowers");
    let shape: Vec<i64> = st
        .shape()
        .iter()
        .map(|d| d.eval(&b).expect("shape"))
        .collect();
    let mut lowered = Vec::new();
    for lin in 0..shape.iter().product::<i64>() {
        let mut bi = b.clone();
        let mut rest = lin;
        for (a, &d) in shape.iter().enumerate().rev() {
            bi.set(low.index[a], rest % d).expect("index");
            rest /= d;
        }
        let valid = low.valid.eval(&bi).expect("valid evaluates");
        lowered.push(valid.then(|| low.offset.eval(&bi).expect("offset evaluates")));
    }
    (bound, lowered)
}

/// Pinned from `symprop`: windows reading a prefix of a pushed row-major view
/// are not a reshape of the view below, so the two views must not merge as one.
#[test]
fn windows_over_a_prefix_do_not_merge_as_a_reshape() {
    let (cx, [n, m, k], v) = masked_start();
    let st = symshape_view::ViewStack::new(v)
        .apply(&cx, &Op::Reshape(vec![m * n]))
        .and_then(|s| {
            s.apply(
                &cx,
                &Op::Unfold {
                    axis: 0,
                    size: m * n - 1,
                    step: Expr::from(2),
                },
            )
        })
        .expect("symbolic");
    for vals in [[2, 2, 1], [4, 3, 0], [1, 1, 2]] {
        let (bound, lowered) = bound_and_lowered(&cx, &[n, m, k], &st, &vals);
        assert_eq!(bound, lowered, "{vals:?}");
    }
    insta::assert_snapshot!(st.to_string(), @r"
    view shape=[n, m] strides=[1, n + 1] offset=k + 1 mask=[(1, n), (0, m)]
    view shape=[1, m*n - 1] strides=[2, 1] offset=0 mask=none
    ");
}

/// Windows of no index have no valid element, whatever cuts the mask of their axis:
/// one view on a symbolic mask too, as on the exact engine.
#[test]
fn empty_windows_over_a_symbolic_mask_are_one_view() {
    let (cx, [n, m, k], v) = masked_start();
    let w = v
        .unfold(&cx, 0, Expr::from(0), Expr::from(1))
        .expect("one view");
    insta::assert_snapshot!(w.to_string(), @"view shape=[n + 1, m, 0] strides=[1, n + 1, 1] offset=0 mask=none");
    let mut b = Bindings::new();
    for (s, x) in [(n, 3), (m, 2), (k, 1)] {
        b.set(s, x).expect("bind");
    }
    let exact = v.bind(&cx, &b).and_then(|c| c.unfold(&cx, 0, 0, 1));
    assert_eq!(w.bind(&cx, &b).expect("binds"), exact.expect("exact"));
}

/// Pinned from `symprop`: a lowered digit of an axis that may have size 0 is
/// taken modulo `max(d, 1)`, so evaluating the lowering never divides by zero.
#[test]
fn lowering_over_an_empty_window_axis_evaluates() {
    let (cx, [n, m, k], v) = masked_start();
    let z = Expr::from(0);
    let st = symshape_view::ViewStack::new(v)
        .apply(
            &cx,
            &Op::Unfold {
                axis: 0,
                size: k,
                step: m,
            },
        )
        .and_then(|s| {
            let rev: Vec<Expr> = s.shape().iter().rev().copied().collect();
            s.apply(&cx, &Op::Reshape(rev))
        })
        .and_then(|s| s.apply(&cx, &Op::Pad(vec![(k, Expr::from(1)), (z, z), (z, z)])))
        .expect("symbolic");
    let (bound, lowered) = bound_and_lowered(&cx, &[n, m, k], &st, &[2, 2, 0]);
    assert_eq!(bound, lowered);
    insta::assert_snapshot!(st.lower(&cx).expect("lower").to_string());
}

#[test]
fn traces_replay_their_ops_on_another_input() {
    // Record attention-head ops once on a row-major [n, 8] input, replay them on
    // a strided [n, 8] input (every other column of rows of 16, at offset 3):
    // element (r, c) of the first input is element (r, c) of the second.
    let (cx, [n]) = scope_with(["n 1..=64"]);
    let eight = Expr::from(8);
    let x = View::create(&cx, &[n, eight], None, Expr::from(0), None).unwrap();
    let mut t = Trace::new(x);
    for op in [
        Op::Reshape(vec![n, Expr::from(2), Expr::from(4)]),
        Op::Permute(vec![1, 0, 2]),
        Op::Shrink(vec![
            (Expr::from(0), Expr::from(2)),
            (Expr::from(1), n),
            (Expr::from(0), Expr::from(4)),
        ]),
    ] {
        t.apply(&cx, &op).unwrap();
    }
    let mut b = Bindings::new();
    cx.bind(&mut b, "n", 5).unwrap();
    t.bind(&cx, &b).unwrap();
    assert_eq!(t.ops().count(), 3);
    let strided = View::create(
        &cx,
        &[n, eight],
        Some(&[Expr::from(16), Expr::from(2)]),
        Expr::from(3),
        None,
    )
    .unwrap();
    let replayed = t.replay(&cx, strided).unwrap();
    let want: Vec<Option<i64>> = t
        .stack()
        .bind(&cx, &b)
        .unwrap()
        .offsets()
        .unwrap()
        .into_iter()
        .map(|o| o.map(|o| 3 + 16 * (o / 8) + 2 * (o % 8)))
        .collect();
    assert_eq!(
        replayed.stack().bind(&cx, &b).unwrap().offsets().unwrap(),
        want
    );
    insta::assert_snapshot!(replayed, @r"
    view [n, 8]
      view shape=[n, 8] strides=[16, 2] offset=3 mask=none
    reshape [n, 2, 4]
      view shape=[n, 2, 4] strides=[16, 8, 2] offset=3 mask=none
    permute [1, 0, 2]
      view shape=[2, n, 4] strides=[8, 16, 2] offset=3 mask=none
    shrink [(0, 2), (1, n), (0, 4)]
      view shape=[2, n - 1, 4] strides=[8, 16, 2] offset=19 mask=none
    ");
    // A replay on an input the ops do not fit fails at the op that breaks.
    let wide = View::create(&cx, &[n, Expr::from(6)], None, Expr::from(0), None).unwrap();
    let err = t.replay(&cx, wide).unwrap_err();
    insta::assert_snapshot!(err, @"reshape: cannot reshape view [n, 6] with strides [6, 1] (numel 6*n) to [n, 2, 4] (numel 8*n)");
}
