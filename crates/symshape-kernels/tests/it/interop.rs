//! View stacks of the view crate run through the kernels: named cases, errors, and random op
//! chains whose materialization must agree with `ConcreteStack::offset_of` element by element.

use crate::reference as r;
use proptest::prelude::*;
use symshape::Scope;
use symshape_kernels::{materialize, plan_materialize, ConcreteStack, Error, Input};
use symshape_view::{parse_index, IndexItem, View, ViewOps, ViewStack};

/// One past the highest offset the stack reads (0 when it reads nothing).
fn buffer_len(s: &ConcreteStack) -> usize {
    s.levels()[0].extent().map_or(0, |(_, hi)| hi as usize + 1)
}

/// The concrete stack and its values over `0, 1, 2, ...` (pad -1), or the error.
fn check(s: Result<ViewStack, symshape_view::Error>) -> String {
    let run = || -> Result<String, Error> {
        let s = s?.to_concrete("test")?;
        let buf: Vec<i64> = (0..buffer_len(&s) as i64).collect();
        let vals: Vec<String> = materialize(Input::new(&buf, &s).pad(-1))?
            .values
            .iter()
            .map(|v| v.to_string())
            .collect();
        Ok(format!(
            "{} => {}",
            s.to_string().replace('\n', " <- "),
            vals.join(" ")
        ))
    };
    run().unwrap_or_else(|e| e.to_string())
}

fn base(shape: &[i64]) -> ViewStack {
    ViewStack::new(View::contiguous(shape).unwrap())
}

#[test]
fn lowered_stacks() {
    let cx = Scope::new();
    insta::assert_snapshot!(check(Ok(base(&[2, 3]))), @"view shape=[2, 3] strides=[3, 1] offset=0 mask=none => 0 1 2 3 4 5");
    insta::assert_snapshot!(check(base(&[2, 3]).permute(&cx, &[1, 0])), @"view shape=[3, 2] strides=[1, 3] offset=0 mask=none => 0 3 1 4 2 5");
    insta::assert_snapshot!(check(base(&[2, 3]).permute(&cx, &[1, 0]).and_then(|s| s.reshape(&cx, &[6i64]))), @"view shape=[3, 2] strides=[1, 3] offset=0 mask=none <- view shape=[6] strides=[1] offset=0 mask=none => 0 3 1 4 2 5");
    insta::assert_snapshot!(check(base(&[2, 2]).pad(&cx, &[(1i64, 0i64), (0, 1)])), @"view shape=[3, 3] strides=[2, 1] offset=-2 mask=[(1, 3), (0, 2)] => -1 -1 -1 0 1 -1 2 3 -1");
    insta::assert_snapshot!(check(base(&[2, 3]).flip(&cx, &[0, 1])), @"view shape=[2, 3] strides=[-3, -1] offset=5 mask=none => 5 4 3 2 1 0");
    insta::assert_snapshot!(check(base(&[4, 4]).shrink(&cx, &[(1i64, 3i64), (2, 4)])), @"view shape=[2, 2] strides=[4, 1] offset=6 mask=none => 6 7 10 11");
    insta::assert_snapshot!(check(base(&[4, 5]).index(&cx, &parse_index("[1::2, ::-2]").unwrap())), @"view shape=[2, 3] strides=[10, -2] offset=9 mask=none => 9 7 5 19 17 15");
    insta::assert_snapshot!(check(base(&[3, 1]).expand(&cx, &[3i64, 4])), @"view shape=[3, 4] strides=[1, 0] offset=0 mask=none => 0 0 0 0 1 1 1 1 2 2 2 2");
    insta::assert_snapshot!(check(base(&[0, 3]).permute(&cx, &[1, 0])), @"view shape=[3, 0] strides=[1, 3] offset=0 mask=none =>");
    // A padded transpose flattened: the top view is masked too.
    insta::assert_snapshot!(check(base(&[2, 2]).permute(&cx, &[1, 0]).and_then(|s| s.pad(&cx, &[(0i64, 1i64), (0, 0)])).and_then(|s| s.reshape(&cx, &[6i64]))), @"view shape=[3, 2] strides=[1, 2] offset=0 mask=[(0, 2), (0, 2)] <- view shape=[6] strides=[1] offset=0 mask=none => 0 2 1 3 -1 -1");
}

#[test]
fn lowered_views_and_errors() {
    let cx = Scope::new();
    let v = View::contiguous(&[2, 3])
        .unwrap()
        .permute(&cx, &[1, 0])
        .unwrap();
    insta::assert_snapshot!(v.as_concrete().unwrap().to_string(), @"view shape=[3, 2] strides=[1, 3] offset=0 mask=none");
    let s = ViewStack::new(v);
    assert_eq!(s.to_concrete("test").unwrap().levels().len(), 1);
    // View errors pass through `?` unchanged.
    let bad = || -> Result<ConcreteStack, Error> {
        let v = View::contiguous(&[2, 3])?.reshape(&cx, &[4i64])?;
        Ok(ViewStack::new(v).to_concrete("materialize")?)
    };
    insta::assert_snapshot!(bad().unwrap_err().to_string(), @"reshape: cannot reshape [2, 3] with strides [3, 1] of 6 elements to [4] of 4 elements");
    let sym_stack = || -> Result<ConcreteStack, Error> {
        let mut scope = Scope::new();
        let n = scope
            .declare_str("n 1..=8")
            .map_err(symshape_view::Error::from)?;
        let s = ViewStack::new(View::row_major(&scope, &[n, symshape::Expr::from(2i64)])?);
        Ok(s.to_concrete("materialize")?)
    };
    insta::assert_snapshot!(sym_stack().unwrap_err().to_string(), @"materialize: shape is symbolic (n); bind the symbols first");
}

/// One view op with its random arguments (reduced modulo the current rank and extents).
#[derive(Debug, Clone)]
enum Op {
    Permute(u32),
    Reshape(u32),
    Pad(usize, i64, i64),
    Flip(u32),
    Shrink(usize, i64, i64),
    Index(usize, i64, i64, i64, bool),
    Expand(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<u32>().prop_map(Op::Permute),
        any::<u32>().prop_map(Op::Reshape),
        (0usize..3, 0i64..3, 0i64..3).prop_map(|(a, l, h)| Op::Pad(a, l, h)),
        any::<u32>().prop_map(Op::Flip),
        (0usize..3, 0i64..4, 0i64..4).prop_map(|(a, l, h)| Op::Shrink(a, l, h)),
        (0usize..3, -4i64..4, -4i64..4, -3i64..=3, any::<bool>())
            .prop_map(|(a, b, e, s, int)| Op::Index(a, b, e, s, int)),
        any::<u32>().prop_map(Op::Expand),
    ]
}

/// A random factorization of `numel` into up to 3 axes.
fn factor(numel: i64, seed: u32) -> Vec<i64> {
    let n_axes = 1 + (seed % 3) as usize;
    let mut shape = vec![1i64; n_axes];
    let (mut n, mut p, mut k) = (numel, 2i64, seed / 3);
    if numel == 0 {
        shape[0] = 0;
        return shape;
    }
    while n > 1 {
        if n % p == 0 {
            shape[(k as usize) % n_axes] *= p;
            k = k.wrapping_mul(7).wrapping_add(3) / 2;
            n /= p;
        } else {
            p += 1;
        }
    }
    shape
}

fn apply(s: &ViewStack, op: &Op) -> Result<ViewStack, symshape_view::Error> {
    let cx = Scope::new();
    let shape: Vec<i64> = s.shape().iter().map(|e| e.as_i64().unwrap()).collect();
    let n = shape.len();
    let axis = |a: usize| if n == 0 { 0 } else { a % n };
    match *op {
        Op::Permute(seed) => {
            let mut perm: Vec<usize> = (0..n).collect();
            let mut x = seed as usize;
            for k in (1..n).rev() {
                perm.swap(k, x % (k + 1));
                x /= k + 1;
            }
            s.permute(&cx, &perm)
        }
        Op::Reshape(seed) => s.reshape(&cx, &factor(shape.iter().product(), seed)),
        Op::Pad(a, lo, hi) => {
            let mut p = vec![(0i64, 0i64); n];
            if n > 0 {
                p[axis(a)] = (lo, hi);
            }
            s.pad(&cx, &p)
        }
        Op::Flip(bits) => s.flip(
            &cx,
            &(0..n).filter(|k| bits & (1 << k) != 0).collect::<Vec<_>>(),
        ),
        Op::Shrink(a, lo, len) => {
            let mut b: Vec<(i64, i64)> = shape.iter().map(|&d| (0, d)).collect();
            if n > 0 {
                let d = shape[axis(a)];
                let lo = lo.min(d);
                b[axis(a)] = (lo, (lo + len).min(d));
            }
            s.shrink(&cx, &b)
        }
        Op::Index(a, start, stop, step, int) => {
            let mut items = vec![IndexItem::FULL; n];
            if n > 0 {
                let d = shape[axis(a)].max(1);
                items[axis(a)] = if int {
                    IndexItem::Int(start.rem_euclid(d))
                } else {
                    IndexItem::Slice {
                        start: Some(start),
                        stop: (stop != 0).then_some(stop),
                        step: (step != 0).then_some(step),
                    }
                };
            }
            s.index(&cx, &items)
        }
        Op::Expand(bits) => {
            let to: Vec<i64> = shape
                .iter()
                .enumerate()
                .map(|(k, &d)| if d == 1 && bits & (1 << k) != 0 { 3 } else { d })
                .collect();
            s.expand(&cx, &to)
        }
    }
}

proptest! {
    #[test]
    fn lowered_stacks_match_view_offsets(
        shape in prop::collection::vec(1i64..5, 1..=3),
        ops in prop::collection::vec(op(), 0..7),
        pad in -5i64..0,
    ) {
        let numel: i64 = shape.iter().product();
        let mut s = base(&shape);
        for o in &ops {
            // Ops the view crate rejects (out-of-range arguments) are skipped.
            if let Ok(next) = apply(&s, o) {
                s = next;
            }
        }
        let lowered = s.to_concrete("test").unwrap();
        prop_assert!(buffer_len(&lowered) <= numel as usize);
        let buf: Vec<i64> = (0..numel).map(|i| i * 10 + 1).collect();
        let top: Vec<usize> = s.shape().iter().map(|e| e.as_i64().unwrap() as usize).collect();
        let want: Vec<i64> = r::indices(&top)
            .iter()
            .map(|idx| {
                let idx: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
                lowered.offset_of(&idx).unwrap().map_or(pad, |o| buf[o as usize])
            })
            .collect();
        prop_assert_eq!(&materialize(Input::new(&buf, &lowered).pad(pad)).map(|d| d.values).unwrap(), &want);
        let mut planned = vec![0; want.len()];
        plan_materialize::<i64>(&lowered).unwrap().run_materialize(&buf, &mut planned, pad).unwrap();
        prop_assert_eq!(&planned, &want);
        if let [v] = s.views() {
            let one = v.as_concrete().unwrap();
            prop_assert_eq!(&materialize(Input::new(&buf, one).pad(pad)).map(|d| d.values).unwrap(), &want);
        }
    }
}
