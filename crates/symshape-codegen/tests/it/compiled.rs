//! The emitted C, compiled with `cc -std=c99 -O2 -Wall -Werror` (and
//! `-fsanitize=undefined -fno-sanitize-recover=all` where `cc` links it), against
//! `symshape_kernels::materialize` element by element, for random stacks and bindings:
//! small ranges, and symbols at the ends of ranges that reach the `i64` limits.

use proptest::prelude::*;
use symshape::{Bindings, Expr, Scope};
use symshape_codegen::{render_c, CConfig, Plan};
use symshape_kernels::{materialize, Input};
use symshape_view::{ConcreteStack, IndexItem, Op, View, ViewStack};

use crate::harness::{compile, compile_cases, have_cc, Record};

/// The symbols every case declares, in order, with their ranges.
const SYMS: &[(&str, i64, i64)] = &[("n", 1, 5), ("m", 1, 4), ("p", 0, 3)];

pub fn scope() -> Scope {
    let mut cx = Scope::new();
    for (name, lo, hi) in SYMS {
        cx.declare_str(&format!("{name} {lo}..={hi}"))
            .expect("a valid declaration");
    }
    cx
}

fn sym(cx: &Scope, name: &str) -> Expr {
    cx.symbol(name).expect("declared")
}

/// The bottom view of case `base`: symbolic, concrete, and concrete with negative strides.
fn base_view(cx: &Scope, base: u8) -> View {
    let (n, m) = (sym(cx, "n"), sym(cx, "m"));
    let v = match base % 5 {
        0 => View::row_major(cx, &[n, m]),
        1 => View::contiguous(&[4, 6]),
        2 => View::row_major(cx, &[n, Expr::from(3), m]),
        3 => View::create(
            cx,
            &[3.into(), 4.into()],
            Some(&[Expr::from(-4), Expr::from(1)]),
            Expr::from(8),
            None,
        ),
        _ => View::row_major(cx, &[Expr::from(2), n]),
    };
    v.expect("a valid base view")
}

/// Op `kind` with arguments `a`, `b` for a stack of shape `shape`.
fn op(cx: &Scope, shape: &[Expr], kind: u8, a: u8, b: u8) -> Op {
    let r = shape.len().max(1);
    let ax = usize::from(a) % r;
    let (zero, p) = (Expr::from(0), sym(cx, "p"));
    let full = |f: &dyn Fn(usize, Expr) -> (Expr, Expr)| -> Vec<(Expr, Expr)> {
        shape
            .iter()
            .enumerate()
            .map(|(k, &d)| if k == ax { f(k, d) } else { (zero, d) })
            .collect()
    };
    match kind % 10 {
        0 => Op::Transpose(ax, usize::from(b) % r),
        1 => Op::Flip(vec![ax]),
        2 => {
            let pads = shape
                .iter()
                .enumerate()
                .map(|(k, _)| {
                    if k != ax {
                        (zero, zero)
                    } else if b % 5 == 4 {
                        (p, Expr::from(1))
                    } else {
                        (
                            Expr::from(i64::from(b % 3)),
                            Expr::from(i64::from(b / 3 % 3)),
                        )
                    }
                })
                .collect();
            Op::Pad(pads)
        }
        3 => Op::Shrink(full(&|_, d| {
            if b % 2 == 0 {
                (Expr::from(1), d)
            } else {
                (zero, d - 1)
            }
        })),
        4 => Op::Reshape(vec![shape.iter().copied().product()]),
        5 => Op::Flatten {
            start: 0,
            end: usize::from(b) % r,
        },
        6 => {
            let mut to = vec![Expr::from(2)];
            to.extend_from_slice(shape);
            Op::BroadcastTo(to)
        }
        7 => {
            let step = [2, -1, -2, 3][usize::from(b) % 4];
            let mut items = vec![IndexItem::FULL; ax];
            items.push(IndexItem::Slice {
                start: None,
                stop: None,
                step: Some(Expr::from(step)),
            });
            Op::Index(items)
        }
        8 => Op::Unfold {
            axis: ax,
            size: Expr::from(2),
            step: Expr::from(1 + i64::from(b % 2)),
        },
        _ => Op::Shrink(full(&|_, _| (zero, p + 1))),
    }
}

/// The stack of a case; ops that fail on the current stack are skipped.
pub fn build(cx: &Scope, base: u8, ops: &[(u8, u8, u8)]) -> ViewStack {
    build_on(cx, ViewStack::new(base_view(cx, base)), ops)
}

/// `s` after the ops of a case; ops that fail on the current stack are skipped.
pub fn build_on(cx: &Scope, mut s: ViewStack, ops: &[(u8, u8, u8)]) -> ViewStack {
    for &(kind, a, b) in ops {
        let o = op(cx, s.shape(), kind, a, b);
        if let Ok(next) = s.apply(cx, &o) {
            if next.ndim() <= 5 {
                s = next;
            }
        }
    }
    s
}

/// A small deterministic generator for bindings and buffers.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = u64::try_from(hi - lo + 1).expect("a non-empty range");
        lo + i64::try_from(self.next() % span).expect("small")
    }
}

/// What `ViewStack::bind` did with one binding.
pub enum Outcome {
    /// It bound the stack: the guard function must return 0.
    Bound,
    /// This guard failed: the guard function must return its number.
    Guard(String),
    /// It refused for another reason (a field or a level's reach beyond `i64`, a level
    /// outside the one below): the guard function must return some check's number.
    Refused(String),
}

/// What the Rust side expects for one binding: bind's outcome and, where it bound the
/// stack and the kernel runs, the materialized values.
pub struct Expected {
    pub outcome: Outcome,
    pub values: Vec<i64>,
}

/// The constant range `(lo, hi)` of every symbol of `cx`, in declaration order.
pub fn symbol_ranges(cx: &Scope) -> Vec<(i64, i64)> {
    cx.symbols()
        .iter()
        .map(|s| {
            let spec = s.symbol_spec().expect("a symbol");
            let bound = |b: Option<Expr>| b.and_then(Expr::as_i64).expect("a constant bound");
            (bound(spec.lower()), bound(spec.upper()))
        })
        .collect()
}

/// The bindings of `cx`'s symbols to `syms`, in declaration order.
pub fn bindings_at(cx: &Scope, syms: &[i64]) -> Bindings {
    let mut b = Bindings::new();
    for (&s, &v) in cx.symbols().iter().zip(syms) {
        b.set(s, v).expect("in range");
    }
    b
}

/// The number of elements of `bound`, `None` beyond `i64`.
pub fn numel(bound: &ConcreteStack) -> Option<i64> {
    bound
        .shape()
        .iter()
        .try_fold(1i64, |a, &d| a.checked_mul(d))
}

/// The length of the source `bound` reads, where both it and the output have at most
/// `max` elements; `None` where either is larger (or the source starts below 0).
pub fn source_len(bound: &ConcreteStack, max: i64) -> Option<usize> {
    let numel = numel(bound);
    let len = match bound.levels()[0].extent() {
        _ if numel == Some(0) => 0,
        Some((lo, hi)) if lo >= 0 && hi < max => hi + 1,
        Some(_) => return None,
        None => 0,
    };
    if numel.is_none_or(|n| n > max) {
        return None;
    }
    Some(usize::try_from(len).expect("small"))
}

/// Checks the emitted C of `stack` against the kernels for `bindings` random bindings.
pub fn check_stack(cx: &Scope, stack: &ViewStack, seed: u64, bindings: usize) {
    if !have_cc() {
        return;
    }
    let plan = Plan::materialize(cx, stack).expect("a plan");
    let unit = render_c(cx, &plan, &CConfig::new("shapetrace")).expect("C source");
    let compiled = compile(&unit).unwrap_or_else(|e| panic!("{e}\n{plan}"));
    let mut rng = Lcg(seed);
    let mut records = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..bindings {
        let syms: Vec<i64> = symbol_ranges(cx)
            .into_iter()
            .map(|(lo, hi)| rng.range(lo, hi.min(lo + 5)))
            .collect();
        let b = bindings_at(cx, &syms);
        let pad = rng.range(-1000, -1);
        let (src, exp, dst_len) = match stack.bind(cx, &b) {
            Ok(bound) => {
                let len = match bound.levels()[0].extent() {
                    Some((lo, _)) if lo < 0 => continue,
                    Some((_, hi)) => usize::try_from(hi + 1).expect("small"),
                    None => 0,
                };
                let src: Vec<i64> = (0..len).map(|_| rng.range(0, 999)).collect();
                let values = materialize(Input::new(&src, &bound).pad(pad))
                    .expect("the kernels materialize")
                    .values;
                let n = values.len();
                let e = Expected {
                    outcome: Outcome::Bound,
                    values,
                };
                (src, e, n)
            }
            Err(e) => {
                let e = Expected {
                    outcome: refusal(e),
                    values: Vec::new(),
                };
                (Vec::new(), e, 0)
            }
        };
        records.push(Record {
            syms,
            src,
            pad,
            dst_len,
        });
        expected.push(exp);
    }
    let got = compiled.run(&records);
    if std::env::var("CODEGEN_STATS").is_ok() {
        let fails = expected
            .iter()
            .filter(|e| !matches!(e.outcome, Outcome::Bound))
            .count();
        eprintln!(
            "views {} guards {} loops {} records {} guard-fails {fails} numel {}",
            stack.views().len(),
            stack.guards().len(),
            plan.loops().len(),
            records.len(),
            plan.numel()
        );
    }
    assert_eq!(got.len(), records.len(), "one result per record");
    for ((rec, exp), (g, values)) in records.iter().zip(&expected).zip(&got) {
        compare(&plan, &unit, rec, exp, *g, values);
    }
}

/// The outcome of a binding `bind` refused with `e`.
pub fn refusal(e: symshape_view::Error) -> Outcome {
    match e {
        symshape_view::Error::Guard { guard, .. } => Outcome::Guard(guard),
        e => Outcome::Refused(e.to_string()),
    }
}

/// The proptest cases of a test that checks `per` cases of `PROPTEST_CASES` in one case:
/// `default` unless that variable is set.
pub fn batches(per: u32, default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(default, |n: u32| n.div_ceil(per))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(batches(1, 32)))]

    #[test]
    fn emitted_c_equals_the_kernels(
        base in 0u8..5,
        ops in prop::collection::vec((0u8..10, any::<u8>(), any::<u8>()), 0..6),
        seed in any::<u64>(),
    ) {
        let cx = scope();
        let stack = build(&cx, base, &ops);
        check_stack(&cx, &stack, seed, 12);
    }
}

/// The symbols of the extreme cases: one unbounded, one `0..=i64::MAX`, one near
/// `i64::MIN`, and `p` (which [`op`] reads).
const EXTREME_SYMS: &[&str] = &[
    "n -inf..=inf",
    "m 0..=inf",
    "q -9223372036854775808..=-9223372036854775800",
    "p 0..=3",
];

pub fn extreme_scope() -> Scope {
    let mut cx = Scope::new();
    for d in EXTREME_SYMS {
        cx.declare_str(d).expect("a valid declaration");
    }
    cx
}

/// The bottom of an extreme case: an [`extreme_view`], or (bases 13 and 14) two levels
/// the second of which reaches symbolic offsets of the first.
fn extreme_base(cx: &Scope, base: u8) -> ViewStack {
    let (n, m) = (sym(cx, "n"), sym(cx, "m"));
    let c = |v: i64| Expr::from(v);
    let upper = match base % 15 {
        13 => View::create(cx, &[c(4)], None, n - c(i64::MAX) + c(3), None),
        14 => View::create(cx, &[c(2), c(2)], Some(&[m, c(1)]), c(0), None),
        _ => return ViewStack::new(extreme_view(cx, base)),
    };
    let lower = View::row_major(cx, &[m, c(2)]).expect("a valid view");
    ViewStack::from_views(cx, vec![lower, upper.expect("a valid view")]).expect("a stack")
}

/// A bottom view whose fields are differences of symbols and constants near the
/// `i64` limits, so that bindings at the ends of the ranges give small views; bases 8
/// to 12 have fields or reaches beyond `i64` at some of them, which `bind` refuses.
fn extreme_view(cx: &Scope, base: u8) -> View {
    let (n, m, q, p) = (sym(cx, "n"), sym(cx, "m"), sym(cx, "q"), sym(cx, "p"));
    let max = Expr::from(i64::MAX);
    let min = Expr::from(i64::MIN);
    let c = |v: i64| Expr::from(v);
    let v = match base % 13 {
        // The offsets are 0 and 1 at n = i64::MAX.
        0 => View::create(cx, &[c(2)], None, n - max, None),
        // One element at n = m = i64::MAX.
        1 => View::create(cx, &[n - m + 1], None, c(0), None),
        // Empty at p = 0, whatever m.
        2 => View::create(cx, &[m, m, p], None, c(0), None),
        // Offsets that cancel near i64::MIN.
        3 => View::create(cx, &[c(2), c(3)], Some(&[c(3), c(1)]), q - min, None),
        4 => View::create(
            cx,
            &[c(3), p + 1],
            Some(&[m - max + 1, c(1)]),
            max - m,
            None,
        ),
        5 => View::create(cx, &[n - q + min + 1, c(2)], None, c(0), None),
        6 => View::create(cx, &[c(2), c(2)], Some(&[n - m, c(1)]), m - n + 1, None),
        7 => View::create(cx, &[m - max + 3, c(2)], Some(&[c(-2), c(1)]), c(4), None),
        // 2^64 elements at m = 2^32; the stride m*m leaves i64 at m = 2^62.
        8 => View::row_major(cx, &[m, m, c(2)]),
        // A large stride times a large extent: the last offset is n + m - 1.
        9 => View::create(cx, &[c(2), m], Some(&[n, c(1)]), c(0), None),
        // Offsets n..=n + 2 and q..=q - 2.
        10 => View::create(cx, &[c(3)], None, n, None),
        11 => View::create(cx, &[c(3), c(2)], Some(&[c(-1), q]), c(0), None),
        // A mask with symbolic ends, on a shape with a large size.
        _ => View::create(
            cx,
            &[c(4), m],
            None,
            c(0),
            Some(&[(c(1), c(3)), (c(0), m - max + 2)]),
        ),
    };
    v.expect("a valid extreme view")
}

/// Values of `s` worth binding: both ends of its range (`i64::MIN`/`MAX` for infinite
/// ones), their neighbours, small values, `2^31`, `2^32` and `2^62`, those in range.
pub fn extreme_values(s: Expr) -> Vec<i64> {
    let spec = s.symbol_spec().expect("a symbol");
    let lo = spec.lower().and_then(Expr::as_i64).unwrap_or(i64::MIN);
    let hi = spec.upper().and_then(Expr::as_i64).unwrap_or(i64::MAX);
    let mut vals = vec![
        lo,
        lo.saturating_add(1),
        hi.saturating_sub(1),
        hi,
        -1,
        0,
        1,
        2,
        1 << 31,
        1 << 32,
        1 << 62,
    ];
    vals.retain(|v| (lo..=hi).contains(v));
    vals.sort_unstable();
    vals.dedup();
    vals
}

/// The largest source or output the extreme cases materialize; larger bound views are
/// only checked for their guard result.
pub const EXTREME_ELEMS: i64 = 1 << 12;

/// Checks a batch of stacks, compiled by one `cc` call: at each of `bindings` random
/// extreme bindings per stack, the guard result is that of `ViewStack::bind`, and where
/// the bound stack is small enough to materialize, the output is the kernels' element by
/// element. Where `bind` refuses for a reason other than a guard (a field beyond `i64`),
/// the guard function must refuse too.
pub fn check_extreme(cx: &Scope, stacks: &[ViewStack], seed: u64, bindings: usize) {
    check_extreme_at(cx, stacks, &extreme_bindings(cx, seed, bindings), seed);
}

/// `count` bindings of `cx`'s symbols, each value drawn (with `Lcg(seed)`) from the
/// symbol's [`extreme_values`].
pub fn extreme_bindings(cx: &Scope, seed: u64, count: usize) -> Vec<Vec<i64>> {
    let values: Vec<Vec<i64>> = cx.symbols().iter().map(|&s| extreme_values(s)).collect();
    let mut rng = Lcg(seed);
    (0..count)
        .map(|_| {
            values
                .iter()
                .map(|vs| vs[usize::try_from(rng.next()).expect("small") % vs.len()])
                .collect()
        })
        .collect()
}

/// [`check_extreme`] at the given bindings (one value per symbol of `cx`), each
/// checked for every stack.
fn check_extreme_at(cx: &Scope, stacks: &[ViewStack], chosen: &[Vec<i64>], seed: u64) {
    if !have_cc() {
        return;
    }
    let plans: Vec<Plan> = stacks
        .iter()
        .map(|s| Plan::materialize(cx, s).expect("a plan"))
        .collect();
    let units: Vec<String> = plans
        .iter()
        .enumerate()
        .map(|(k, p)| render_c(cx, p, &CConfig::new(&format!("k{k}"))).expect("C source"))
        .collect();
    let compiled = compile_cases(&units).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = Lcg(seed);
    let mut records = Vec::new();
    let mut expected = Vec::new();
    for (case, stack) in stacks.iter().enumerate() {
        for syms in chosen {
            let (run, rec, exp) = expect_at(cx, stack, syms.clone(), &mut rng);
            records.push((case, run, rec));
            expected.push(exp);
        }
    }
    let got = compiled.run_cases(&records);
    if std::env::var("CODEGEN_STATS").is_ok() {
        let run = records.iter().filter(|r| r.1).count();
        let empty = records.iter().filter(|r| r.1 && r.2.dst_len == 0).count();
        let count = |f: fn(&Outcome) -> bool| expected.iter().filter(|e| f(&e.outcome)).count();
        let guards = count(|o| matches!(o, Outcome::Guard(_)));
        let refused = count(|o| matches!(o, Outcome::Refused(_)));
        eprintln!(
            "stacks {} records {} run {run} (empty {empty}) guard-fails {guards} other refusals {refused}",
            stacks.len(),
            records.len()
        );
    }
    assert_eq!(got.len(), records.len(), "one result per record");
    for (((case, _, rec), exp), (g, values)) in records.iter().zip(&expected).zip(&got) {
        let (plan, unit) = (&plans[*case], &units[*case]);
        compare(plan, unit, rec, exp, *g, values);
    }
}

/// The record and expectation of `stack` at `syms`; `run` is false where `bind` refuses
/// or the bound stack is too large to materialize (only the guard result is compared).
fn expect_at(
    cx: &Scope,
    stack: &ViewStack,
    syms: Vec<i64>,
    rng: &mut Lcg,
) -> (bool, Record, Expected) {
    let b = bindings_at(cx, &syms);
    let pad = rng.range(-1000, -1);
    let guard_only = |outcome: Outcome| {
        let rec = Record {
            syms: syms.clone(),
            src: Vec::new(),
            pad,
            dst_len: 0,
        };
        let exp = Expected {
            outcome,
            values: Vec::new(),
        };
        (false, rec, exp)
    };
    let bound = match stack.bind(cx, &b) {
        Ok(bound) => bound,
        Err(e) => return guard_only(refusal(e)),
    };
    let Some(len) = source_len(&bound, EXTREME_ELEMS) else {
        return guard_only(Outcome::Bound);
    };
    let src: Vec<i64> = (0..len).map(|_| rng.range(0, 999)).collect();
    let values = materialize(Input::new(&src, &bound).pad(pad))
        .expect("the kernels materialize")
        .values;
    let rec = Record {
        syms,
        src,
        pad,
        dst_len: values.len(),
    };
    let exp = Expected {
        outcome: Outcome::Bound,
        values,
    };
    (true, rec, exp)
}

/// Compares one C result with the Rust side's expectation.
pub fn compare(plan: &Plan, unit: &str, rec: &Record, exp: &Expected, g: i64, values: &[i64]) {
    match &exp.outcome {
        Outcome::Bound => {
            assert_eq!(
                g, 0,
                "syms {:?}: bind accepts, C check {g} fails\n{plan}\n{unit}",
                rec.syms
            );
            assert_eq!(
                values, exp.values,
                "syms {:?} pad {}: C differs from the kernels\n{plan}\n{unit}",
                rec.syms, rec.pad
            );
        }
        Outcome::Guard(text) => {
            assert!(
                g > 0,
                "syms {:?}: guard `{text}` fails in Rust, not in C\n{plan}\n{unit}",
                rec.syms
            );
            let check = &plan.checks()[usize::try_from(g - 1).expect("positive")];
            assert!(
                check.text.contains(text.as_str()),
                "syms {:?}: Rust fails `{text}`, C check {g} `{}`",
                rec.syms,
                check.text
            );
        }
        Outcome::Refused(why) => assert!(
            g > 0,
            "syms {:?}: bind refuses ({why}), the C guard function accepts\n{plan}\n{unit}",
            rec.syms
        ),
    }
}

/// The stack of an extreme case: an extreme bottom view, then ops as in [`build`].
pub fn build_extreme(cx: &Scope, base: u8, ops: &[(u8, u8, u8)]) -> ViewStack {
    build_on(cx, extreme_base(cx, base), ops)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(batches(8, 4)))]

    /// Twelve stacks per `cc` call, 24 bindings each at the ends of the ranges.
    #[test]
    fn emitted_c_at_the_ends_of_the_ranges(
        cases in prop::collection::vec(
            (0u8..15, prop::collection::vec((0u8..10, any::<u8>(), any::<u8>()), 0..4)),
            12,
        ),
        seed in any::<u64>(),
    ) {
        let cx = extreme_scope();
        let stacks: Vec<ViewStack> =
            cases.iter().map(|(base, ops)| build_extreme(&cx, *base, ops)).collect();
        check_extreme(&cx, &stacks, seed, 24);
    }
}

/// The stack of `views` (shape, strides, offset as text over the extreme symbols).
pub fn extreme_stack(cx: &Scope, shape: &str, strides: Option<&str>, offset: &str) -> ViewStack {
    let list = |t: &str| -> Vec<Expr> {
        t.split(',')
            .map(|x| cx.parse_expr(x.trim()).expect("an expression"))
            .collect()
    };
    let strides = strides.map(list);
    let v = View::create(
        cx,
        &list(shape),
        strides.as_deref(),
        cx.parse_expr(offset).expect("an expression"),
        None,
    )
    .expect("a valid view");
    ViewStack::new(v)
}

#[test]
fn sums_near_the_i64_limits_do_not_overflow_in_c() {
    let cx = extreme_scope();
    // `i0 + n - (2^63 - 1)` overflowed at `i0 + n`; `n - m + 1` in the guard at `n + 1`.
    let stacks = [
        extreme_stack(&cx, "2", None, "n - 9223372036854775807"),
        extreme_stack(&cx, "n - m + 1", None, "0"),
        extreme_stack(&cx, "2, 3", Some("3, 1"), "q + 9223372036854775807 + 1"),
    ];
    check_extreme(&cx, &stacks, 7, 40);
}

#[test]
fn an_empty_output_returns_at_once() {
    // [2^31, 2^31, 0] looped 2^62 times writing nothing.
    let cx = extreme_scope();
    let stacks = [
        extreme_stack(&cx, "m, m, p", None, "0"),
        extreme_stack(&cx, "m, m, p", Some("1, m, 1"), "0"),
    ];
    check_extreme(&cx, &stacks, 11, 40);
}

#[test]
fn fields_and_reaches_beyond_i64_fail_in_c_as_in_bind() {
    // The guard function accepted these, and the kernel ran with overflowing fields.
    let cx = extreme_scope();
    let stacks = [
        // [m, m]: 2^64 elements at m = 2^32, strides beyond i64 at m = 2^63 - 1.
        extreme_stack(&cx, "m, m", None, "0"),
        // A large stride times a large extent, and offsets near both limits.
        extreme_stack(&cx, "2, m", Some("n, 1"), "0"),
        extreme_stack(&cx, "3", None, "n"),
        extreme_stack(&cx, "3, 2", Some("-1, q"), "0"),
    ];
    let (max, min) = (i64::MAX, i64::MIN);
    // Values of [n, m, q, p].
    let chosen = [
        vec![0, 1 << 31, min, 0],
        vec![0, 1 << 32, min, 0],
        vec![0, 1 << 62, min, 1],
        vec![0, max, min, 1],
        vec![1 << 62, 1 << 62, min, 0],
        vec![-(1 << 62), 1 << 62, min, 0],
        vec![max - 2, 1, min + 3, 0],
        vec![max - 3, 2, min + 2, 0],
        vec![min, 0, min + 4, 0],
        vec![min + 1, 3, min + 5, 0],
    ];
    check_extreme_at(&cx, &stacks, &chosen, 5);
}

#[test]
fn levels_and_masks_beyond_their_bounds_fail_in_c_as_in_bind() {
    let cx = extreme_scope();
    let stacks = [
        extreme_base(&cx, 12),
        extreme_base(&cx, 13),
        extreme_base(&cx, 14),
    ];
    let max = i64::MAX;
    let chosen = [
        vec![max, max - 2, -max, 0],
        vec![max, max - 1, -max, 0],
        vec![max, max, -max, 0],
        vec![max - 3, 1, -max, 0],
        vec![max - 1, 4, -max, 0],
        vec![0, 0, -max, 0],
        vec![0, 1 << 62, -max, 0],
    ];
    check_extreme_at(&cx, &stacks, &chosen, 9);
}

#[test]
fn out_of_range_symbols_fail_their_range_check() {
    if !have_cc() {
        return;
    }
    let cx = scope();
    let stack = build(&cx, 0, &[(9, 0, 0)]);
    let plan = Plan::materialize(&cx, &stack).expect("a plan");
    let unit = render_c(&cx, &plan, &CConfig::new("shapetrace")).expect("C source");
    let compiled = compile(&unit).expect("compiles");
    let guards = stack.guards().len();
    let rec = |syms: Vec<i64>| Record {
        syms,
        src: Vec::new(),
        pad: 0,
        dst_len: 0,
    };
    let got = compiled.run(&[rec(vec![6, 1, 0]), rec(vec![5, 9, 0]), rec(vec![5, 1, 4])]);
    let numbers: Vec<i64> = got.iter().map(|r| r.0).collect();
    let first = i64::try_from(guards).expect("small") + 1;
    assert_eq!(numbers, [first, first + 1, first + 2]);
}
