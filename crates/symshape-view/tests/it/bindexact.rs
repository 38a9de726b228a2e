//! Prepared binding against plain binding: random scopes whose bounds are
//! expressions over other symbols, random assumptions (`or`, `!=`, `%`), random
//! values in and out of range; `PreparedView`/`PreparedStack` must give exactly
//! what `View::bind`/`ViewStack::bind` give (same value, or the same error).

use proptest::prelude::*;
use symshape::{BigInt, Bindings, Expr, Scope};
use symshape_view::{ConcreteStack, Op, PreparedStack, PreparedView, View, ViewStack};

use crate::scope_with;

/// Declarations per symbol; each may use the symbols declared before it.
const N_DECLS: [&str; 3] = ["n 1..=12", "n 0..=9 multiple of 3", "n -4..=8"];
const M_DECLS: [&str; 4] = ["m 1..=n", "m n..=n + 4", "m 0..=12", "m 2..=2*n + 1"];
const I_DECLS: [&str; 4] = ["i 0..m", "i 0..=n", "i -inf..=inf", "i m - 2..=m + n"];
const K_DECLS: [&str; 3] = ["k 0..=i + m", "k 1..=8", "k n // 2..=n + 1"];

/// Assumptions a scope may take (one that contradicts the earlier ones is skipped).
const ASSUMPTIONS: [&str; 9] = [
    "n != 5",
    "m <= n or i == 0",
    "n % 2 == 0 or m == 1",
    "i + m != 6",
    "n*m <= 40 or i < 2",
    "k <= n or k >= m",
    "i*i*i*i <= 100000 or n == 1",
    "m == n or m != 3",
    "not (i == 2 and k == 1)",
];

/// A random scope: one declaration per symbol and some assumptions.
#[derive(Clone, Debug)]
struct Case {
    decls: [usize; 4],
    assumptions: Vec<usize>,
    view: usize,
    picks: Vec<Pick>,
}

/// A value for one symbol: mostly a pick inside its range (given the values of
/// the symbols its bounds mention), sometimes anything.
#[derive(Clone, Debug)]
enum Pick {
    Inside(u64),
    Wild(i64),
}

fn arb_pick() -> impl Strategy<Value = Pick> {
    prop_oneof![
        12 => any::<u64>().prop_map(Pick::Inside),
        2 => (-3i64..=14).prop_map(Pick::Wild),
        1 => Just(Pick::Wild(i64::MAX)),
        1 => Just(Pick::Wild(i64::MIN)),
        1 => ((-1i64 << 40)..=(1i64 << 40)).prop_map(Pick::Wild),
    ]
}

fn arb_case() -> impl Strategy<Value = Case> {
    (
        (
            0..N_DECLS.len(),
            0..M_DECLS.len(),
            0..I_DECLS.len(),
            0..K_DECLS.len(),
        ),
        prop::collection::vec(0..ASSUMPTIONS.len(), 0..4),
        0..VIEWS,
        prop::collection::vec(arb_pick(), 4),
    )
        .prop_map(|((a, b, c, d), assumptions, view, picks)| Case {
            decls: [a, b, c, d],
            assumptions,
            view,
            picks,
        })
}

/// Number of views `make_view` knows.
const VIEWS: usize = 5;

struct Fixture {
    cx: Scope,
    n: Expr,
    m: Expr,
    i: Expr,
    k: Expr,
}

fn fixture(decls: [&str; 4], assumptions: &[&str]) -> Fixture {
    let mut cx = Scope::new();
    let mut syms = decls.iter().map(|d| cx.declare_str(d).expect(d));
    let (n, m, i, k) = (
        syms.next().expect("n"),
        syms.next().expect("m"),
        syms.next().expect("i"),
        syms.next().expect("k"),
    );
    drop(syms);
    for a in assumptions {
        // A contradiction is refused; the scope then simply lacks it.
        let _ = cx.assume_str(a);
    }
    Fixture { cx, n, m, i, k }
}

/// A view (or stack) over the fixture's symbols; `None` when an op refutes it.
fn make_view(f: &Fixture, which: usize) -> Option<ViewStack> {
    let (cx, n, m, i, k) = (&f.cx, f.n, f.m, f.i, f.k);
    let z = Expr::from(0);
    let one = Expr::from(1);
    let res = match which {
        // Padding by a symbol, sizes over three symbols.
        0 => View::create(cx, &[n, m + 1, Expr::from(3)], None, z, None)
            .and_then(|v| v.apply(cx, &Op::Pad(vec![(z, z), (k, one), (one, one)])))
            .map(ViewStack::new),
        // A shrink whose bounds become guards.
        1 => View::create(cx, &[n, m], None, z, None)
            .and_then(|v| v.apply(cx, &Op::Shrink(vec![(i, n), (z, m)])))
            .map(ViewStack::new),
        // Explicit strides and an offset that multiplies symbols.
        2 => View::create(cx, &[m, k], Some(&[k, one]), i * k, None).map(ViewStack::new),
        // A transpose under a reshape: two views.
        3 => View::create(cx, &[n, m], None, z, None).and_then(|v| {
            ViewStack::new(v)
                .apply(cx, &Op::Permute(vec![1, 0]))
                .and_then(|s| s.apply(cx, &Op::Reshape(vec![n * m])))
        }),
        // A mask with symbolic bounds over a symbolic shape.
        _ => View::create(cx, &[n + 2, k], None, z, Some(&[(one, n + 1), (z, k)]))
            .map(ViewStack::new),
    };
    res.ok()
}

/// The values as bindings, as a caller of `View::bind` would make them: a value
/// outside its declared range fails alone (no bindings can hold it); then every
/// symbol is set before the symbols of its bounds (reverse declaration order), so
/// only declared ranges are checked on the way and `bind` sees every value.
fn bindings(cx: &Scope, syms: &[Expr], values: &[i64]) -> Result<Bindings, String> {
    for (&s, &v) in syms.iter().zip(values) {
        Bindings::new().set(s, v).map_err(|e| e.to_string())?;
    }
    let mut b = Bindings::new();
    for s in cx.symbols().iter().rev() {
        if let Some(k) = syms.iter().position(|x| x == s) {
            b.set(*s, values[k]).map_err(|e| e.to_string())?;
        }
    }
    Ok(b)
}

/// The symbols a prepared stack takes, in its order.
fn stack_symbols(cx: &Scope, stack: &ViewStack) -> Vec<Expr> {
    PreparedStack::new(cx, stack).map_or_else(|_| Vec::new(), |p| p.symbols().to_vec())
}

/// Values for `syms` in their order, picked in declaration order so that an
/// `Inside` pick lands within the bounds evaluated at the values picked so far
/// (clamped to `-20..=20` where a bound is infinite or cannot be evaluated).
fn pick_values(f: &Fixture, syms: Vec<Expr>, case: &Case) -> Vec<i64> {
    let decl = [f.n, f.m, f.i, f.k];
    let mut chosen = Bindings::new();
    let mut out = vec![0; syms.len()];
    for (d, pick) in decl.iter().zip(&case.picks) {
        let spec = d.symbol_spec().expect("a symbol");
        let bound = |b: Option<Expr>, inf: i64| {
            b.map_or(inf, |e| e.eval(&chosen).unwrap_or(inf).clamp(-20, 20))
        };
        let v = match *pick {
            Pick::Wild(v) => v,
            Pick::Inside(r) => {
                let (lo, hi) = (bound(spec.lower(), -20), bound(spec.upper(), 20));
                let width = u64::try_from(hi - lo + 1).unwrap_or(1).max(1);
                let v = lo + i64::try_from(r % width).unwrap_or(0);
                let k = i64::try_from(spec.divisor()).unwrap_or(1);
                v - v.rem_euclid(k)
            }
        };
        let _ = chosen.set(*d, v);
        if let Some(k) = syms.iter().position(|s| s == d) {
            out[k] = v;
        }
    }
    out
}

/// Binds `stack` both ways (and its only view, as a `PreparedView`, when it has
/// one), asserts they agree exactly, and returns the text of the result.
fn bind_both(cx: &Scope, stack: &ViewStack, values: &[i64]) -> Result<String, TestCaseError> {
    let ps = PreparedStack::new(cx, stack).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut cache = ps.cache();
    let syms = ps.symbols().to_vec();
    let values = &values[..syms.len().min(values.len())];
    let show = |r: Result<ConcreteStack, String>| match r {
        Ok(s) => s.to_string(),
        Err(e) => format!("error: {e}"),
    };
    let plain = show(
        bindings(cx, &syms, values).and_then(|b| stack.bind(cx, &b).map_err(|e| e.to_string())),
    );
    let prepared = show(ps.bind(&mut cache, values).map_err(|e| e.to_string()));
    prop_assert_eq!(&prepared, &plain, "stack\n{}\nvalues {:?}", stack, values);
    if let Ok(b) = bindings(cx, &syms, values) {
        let with = show(ps.bind_with(&mut cache, &b).map_err(|e| e.to_string()));
        prop_assert_eq!(
            &with,
            &plain,
            "bind_with, stack\n{}\nvalues {:?}",
            stack,
            values
        );
    }
    if let [one] = stack.views() {
        let pv = PreparedView::new(cx, one).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(pv.symbols(), &syms[..]);
        let plain = show(
            bindings(cx, &syms, values)
                .and_then(|b| one.bind(cx, &b).map_err(|e| e.to_string()))
                .map(ConcreteStack::from),
        );
        let prepared = show(
            pv.bind(&mut pv.cache(), values)
                .map(ConcreteStack::from)
                .map_err(|e| e.to_string()),
        );
        prop_assert_eq!(&prepared, &plain, "view {}\nvalues {:?}", one, values);
    }
    Ok(plain)
}

/// Table helper: the fixture, view `which`, and a value for each of its symbols
/// by name (every symbol of the view, and only those).
fn check(decls: [&str; 4], assumptions: &[&str], which: usize, values: &[(&str, i64)]) -> String {
    let f = fixture(decls, assumptions);
    let stack = make_view(&f, which).expect("view");
    bind_named(&f.cx, &stack, values)
}

fn bind_named(cx: &Scope, stack: &ViewStack, values: &[(&str, i64)]) -> String {
    let ps = PreparedStack::new(cx, stack).expect("prepare");
    let names: Vec<String> = ps.symbols().iter().map(ToString::to_string).collect();
    let mut given: Vec<&str> = values.iter().map(|p| p.0).collect();
    given.sort_unstable();
    assert_eq!(given, names, "a value for each symbol of the view");
    let ordered: Vec<i64> = names
        .iter()
        .map(|n| values.iter().find(|p| p.0 == n).map_or(0, |p| p.1))
        .collect();
    bind_both(cx, stack, &ordered).expect("prepared and plain agree")
}

const BASE: [&str; 4] = ["n 1..=12", "m 1..=n", "i 0..m", "k 0..=i + m"];

#[test]
fn in_range_values_bind() {
    insta::assert_snapshot!(check(BASE, &[], 2, &[("i", 1), ("k", 2), ("m", 3), ("n", 4)]), @"view shape=[3, 2] strides=[2, 1] offset=2 mask=none");
}

#[test]
fn expression_bound_is_exact() {
    // i = 4 is inside the numeric range of `m - 1` but not below m = 3.
    insta::assert_snapshot!(check(BASE, &[], 2, &[("i", 4), ("k", 5), ("m", 3), ("n", 5)]), @"error: bind: i = 4 is outside its range 0..=m - 1");
    // k = 9 > i + m = 7: an upper bound over two symbols.
    insta::assert_snapshot!(check(BASE, &[], 2, &[("i", 2), ("k", 9), ("m", 5), ("n", 6)]), @"error: bind: k = 9 is outside its range 0..=i + m");
}

#[test]
fn numeric_range_is_reported_first() {
    // m = 13 fits `1..=n` for no n <= 12, and n = 20 is out of range too: both
    // fail before any exact check, in symbol order.
    insta::assert_snapshot!(check(BASE, &[], 2, &[("i", 2), ("k", 9), ("m", 13), ("n", 20)]), @"error: bind: m = 13 is outside its range 1..=n");
    let d = ["n 0..=9 multiple of 3", "m 1..=n", "i 0..m", "k 1..=8"];
    let v = [("i", 1), ("k", 2), ("m", 3), ("n", 4)];
    insta::assert_snapshot!(check(d, &[], 2, &v), @"error: bind: n = 4 is outside its range 0..=9, multiple of 3");
}

/// When a symbol mentioned by a bound fails its own check, the bound cannot be
/// evaluated and `Scope::check` falls back to the bound's numeric range; the
/// first failing symbol in name order is reported.
#[test]
fn failed_bound_symbol_falls_back_to_numeric() {
    let (cx, [n, b, a]) = scope_with(["n 1..=16", "b 0..=n", "a 0..=b"]);
    let v = View::create(&cx, &[a + 1, b + 1, n], None, Expr::from(0), None).expect("view");
    let stack = ViewStack::new(v);
    // a = 12 > b = 9, but b = 9 > n = 4: a's bound cannot be evaluated, so a
    // passes on its numeric range 0..=16 and the error names b.
    let v = [("a", 12), ("b", 9), ("n", 4)];
    insta::assert_snapshot!(bind_named(&cx, &stack, &v), @"error: bind: b = 9 is outside its range 0..=n");
    let v = [("a", 12), ("b", 9), ("n", 10)];
    insta::assert_snapshot!(bind_named(&cx, &stack, &v), @"error: bind: a = 12 is outside its range 0..=b");
}

#[test]
fn disjunctive_and_not_equal_assumptions() {
    let d = ["n 1..=12", "m 0..=12", "i 0..m", "k 0..=n"];
    let a = ["m <= n or i == 0", "i + m != 6", "n % 2 == 0 or m == 1"];
    let v = [("i", 0), ("k", 2), ("m", 5), ("n", 4)];
    insta::assert_snapshot!(check(d, &a, 2, &v), @"view shape=[5, 2] strides=[2, 1] offset=0 mask=none");
    let v = [("i", 1), ("k", 2), ("m", 5), ("n", 4)];
    insta::assert_snapshot!(check(d, &a, 2, &v), @"error: bind: assumption `i == 0 or m <= n` is violated by i = 1, m = 5, n = 4");
    let v = [("i", 2), ("k", 2), ("m", 4), ("n", 4)];
    insta::assert_snapshot!(check(d, &a, 2, &v), @"error: bind: assumption `i + m != 6` is violated by i = 2, m = 4");
    let v = [("i", 0), ("k", 2), ("m", 3), ("n", 5)];
    insta::assert_snapshot!(check(d, &a, 2, &v), @"error: bind: assumption `n % 2 == 0 or m == 1` is violated by m = 3, n = 5");
}

#[test]
fn guards_report_both_sides() {
    // Shrinking `[i, n)` needs `i <= n`.
    let d = ["n 1..=12", "m 0..=12", "i 0..=m", "k 1..=8"];
    let v = [("i", 5), ("m", 6), ("n", 4)];
    insta::assert_snapshot!(check(d, &[], 1, &v), @"error: shrink: guard i <= n (start of axis 0 is at most its end) fails: 5 <= 4 is false with i = 5, m = 6, n = 4");
    let v = [("i", 1), ("m", 6), ("n", 4)];
    insta::assert_snapshot!(check(d, &[], 1, &v), @"view shape=[3, 6] strides=[6, 1] offset=6 mask=none");
}

#[test]
fn overflow_is_redone_exactly() {
    // i*k overflows i64 in the offset: the program's run fails and the plain
    // path reports the overflow.
    let d = ["n 1..=12", "m 1..=n", "i -inf..=inf", "k 1..=8"];
    let v = [("i", i64::MAX), ("k", 8), ("m", 2), ("n", 3)];
    insta::assert_snapshot!(check(d, &[], 2, &v), @"error: bind: overflow: the offset (`i*k`) exceeds i64 with the values bound; bind smaller values");
    // The assumption overflows i64 but is decided exactly.
    let a = ["i*i*i*i <= 100000 or m == 1"];
    let v = [("i", 1 << 20), ("k", 8), ("m", 2), ("n", 3)];
    insta::assert_snapshot!(check(d, &a, 2, &v), @"error: bind: assumption `i*i*i*i <= 100000 or m == 1` is violated by i = 1048576, m = 2, n = 3");
    let v = [("i", 1 << 20), ("k", 8), ("m", 1), ("n", 3)];
    insta::assert_snapshot!(check(d, &a, 2, &v), @"view shape=[1, 8] strides=[8, 1] offset=8388608 mask=none");
}

#[test]
fn stacks_bind_like_plain() {
    let v = [("m", 2), ("n", 3)];
    insta::assert_snapshot!(check(BASE, &[], 3, &v), @"
        view shape=[2, 3] strides=[1, 2] offset=0 mask=none
        view shape=[6] strides=[1] offset=0 mask=none
    ");
    let v = [("m", 4), ("n", 3)];
    insta::assert_snapshot!(check(BASE, &[], 3, &v), @"error: bind: m = 4 is outside its range 1..=n");
}

#[test]
fn prepared_values_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<PreparedView>();
    send_sync::<PreparedStack>();
}

proptest! {
    #[test]
    fn prepared_bind_equals_plain_bind(case in arb_case()) {
        let decls = [
            N_DECLS[case.decls[0]],
            M_DECLS[case.decls[1]],
            I_DECLS[case.decls[2]],
            K_DECLS[case.decls[3]],
        ];
        let assumptions: Vec<&str> = case.assumptions.iter().map(|&a| ASSUMPTIONS[a]).collect();
        let f = fixture(decls, &assumptions);
        let Some(stack) = make_view(&f, case.view) else {
            return Ok(());
        };
        let values = pick_values(&f, stack_symbols(&f.cx, &stack), &case);
        bind_both(&f.cx, &stack, &values)?;
    }
}

#[test]
fn bind_with_takes_values_from_bindings_and_names_an_unbound_symbol() {
    let f = fixture(BASE, &[]);
    let stack = make_view(&f, 0).expect("view");
    let ps = PreparedStack::new(&f.cx, &stack).expect("prepare");
    let mut cache = ps.cache();
    let mut b = Bindings::new();
    let err = ps.bind_with(&mut cache, &b).expect_err("nothing bound");
    insta::assert_snapshot!(err, @"bind: symbol `i` is unbound");
    for (k, &s) in ps.symbols().to_vec().iter().enumerate() {
        b.set(s, 1 + k as i64 % 2).expect("in range");
    }
    let values: Vec<i64> = ps
        .symbols()
        .iter()
        .map(|&s| b.get(s).expect("bound"))
        .collect();
    let by_values = ps
        .bind(&mut cache, &values)
        .map(|v| v.to_string())
        .map_err(|e| e.to_string());
    let by_bindings = ps
        .bind_with(&mut cache, &b)
        .map(|v| v.to_string())
        .map_err(|e| e.to_string());
    assert_eq!(by_values, by_bindings);
}

/// A field holding a constant beyond i64 can still evaluate to an i64: the
/// prepared view is built (it used to fail to compile) and binds as the plain
/// path does, a value no `Bindings` can hold reported first.
#[test]
fn field_with_a_constant_beyond_i64_binds_like_plain() {
    let (cx, [n, k]) = scope_with(["n -inf..=inf", "k 1..=4"]);
    let stride = n.min(Expr::constant(BigInt::from(1u8) << 70));
    let v = View::create(&cx, &[k], Some(&[stride]), Expr::from(0), None).expect("view");
    insta::assert_snapshot!(v, @"view shape=[k] strides=[min(1180591620717411303424, n)] offset=0 mask=none");
    let stack = ViewStack::new(v);
    let show = |values: &[(&str, i64)]| bind_named(&cx, &stack, values);
    insta::assert_snapshot!(show(&[("k", 2), ("n", 3)]), @"view shape=[2] strides=[3] offset=0 mask=none");
    insta::assert_snapshot!(show(&[("k", 2), ("n", i64::MAX)]), @"error: bind: overflow: offsets of shape [2] with strides [9223372036854775807] and offset 0 exceed i64");
    insta::assert_snapshot!(show(&[("k", 5), ("n", 3)]), @"error: bind: k = 5 is outside its range 1..=4");
}

/// `bind_with` reads only the view's symbols: an assumption that also mentions
/// a symbol outside the view is `View::bind`'s to check (documented), and
/// `Scope::check` catches it where the bindings are made.
#[test]
fn bind_with_checks_only_the_views_symbols() {
    let (mut cx, [n, p]) = scope_with(["n 1..=10", "p 1..=10"]);
    cx.assume_str("n <= p").expect("assume");
    let v = View::create(&cx, &[n], None, Expr::from(0), None).expect("view");
    let mut b = Bindings::new();
    b.set(n, 5).expect("n");
    b.set(p, 3).expect("p");
    let plain = v
        .bind(&cx, &b)
        .map(|v| v.to_string())
        .map_err(|e| e.to_string());
    insta::assert_snapshot!(format!("{plain:?}"), @r#"Err("bind: assumption `n <= p` is violated by n = 5, p = 3")"#);
    let pv = PreparedView::new(&cx, &v).expect("prepare");
    let with = pv
        .bind_with(&mut pv.cache(), &b)
        .map(|v| View::from(v).to_string())
        .map_err(|e| e.to_string());
    insta::assert_snapshot!(format!("{with:?}"), @r#"Ok("view shape=[5] strides=[1] offset=0 mask=none")"#);
    insta::assert_snapshot!(cx.check(&b).unwrap_err(), @"bind: assumption `n <= p` is violated by n = 5, p = 3");
}

/// Declarations at the edges: i64 extremes, a bound beyond i64, divisors, bounds
/// that multiply, divide or take `min`/`max` of other symbols.
const EDGE_DECLS: [[&str; 4]; 4] = [
    [
        "n 1..=12",
        "n -9223372036854775808..=9223372036854775807",
        "n -5..=5 multiple of 5",
        "n 0..=100000000000000000000",
    ],
    [
        "m -inf..=n",
        "m n - 3..=n multiple of 2",
        "m 1..=n*n",
        "m -9223372036854775807..=9223372036854775807",
    ],
    ["i 0..m", "i -inf..=inf", "i m // 3..=n", "i -n..=n*m"],
    [
        "k -3..=3",
        "k 0..=i*i*i*i*i*i*i*i",
        "k min(n, m)..=max(n, m)",
        "k i // 2..=i",
    ],
];

const EDGE_ASSUMPTIONS: [&str; 5] = [
    "n // k <= m or k == 0",
    "i*m*n != 7",
    "k != 0",
    "m % 3 == 1 or i <= 0",
    "n*n*n*n*n >= 0",
];

fn edge_view(f: &Fixture, which: usize) -> Option<ViewStack> {
    let (cx, n, m, i, k) = (&f.cx, f.n, f.m, f.i, f.k);
    let z = Expr::from(0);
    let two = Expr::from(2);
    let res = match which {
        0 => View::create(cx, &[two], Some(&[k]), i.floor_div(k), None),
        1 => View::create(cx, &[two, two], Some(&[i * m, k]), n.floor_mod(k) - m, None),
        2 => View::create(cx, &[two], Some(&[n.ceil_div(i)]), m * k, None),
        _ => View::create(cx, &[two], None, z, Some(&[(i.min(Expr::from(1)), two)]))
            .and_then(|v| v.apply(cx, &Op::Pad(vec![(z, k.max(z).min(Expr::from(3)))]))),
    };
    res.ok().map(ViewStack::new)
}

fn arb_edge_value() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -6i64..=6,
        1 => Just(i64::MIN),
        1 => Just(i64::MAX),
        1 => Just(i64::MIN + 1),
        1 => Just(i64::MAX - 1),
        1 => Just(1i64 << 32),
        1 => any::<i64>(),
    ]
}

proptest! {
    #[test]
    fn prepared_bind_equals_plain_bind_at_the_edges(
        decls in (0..4usize, 0..4usize, 0..4usize, 0..4usize),
        assumptions in prop::collection::vec(0..EDGE_ASSUMPTIONS.len(), 0..3),
        view in 0..4usize,
        values in prop::collection::vec(arb_edge_value(), 4),
    ) {
        let d = [
            EDGE_DECLS[0][decls.0],
            EDGE_DECLS[1][decls.1],
            EDGE_DECLS[2][decls.2],
            EDGE_DECLS[3][decls.3],
        ];
        let a: Vec<&str> = assumptions.iter().map(|&k| EDGE_ASSUMPTIONS[k]).collect();
        let f = fixture(d, &a);
        let Some(stack) = edge_view(&f, view) else {
            return Ok(());
        };
        bind_both(&f.cx, &stack, &values)?;
    }
}
