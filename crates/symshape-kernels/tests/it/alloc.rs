//! Allocation counts of prepared binding, measured by the counting global
//! allocator this test binary installs (see `main.rs`).
//!
//! Counters are per thread, so tests running in parallel do not disturb each
//! other, and only a thread inside [`count`] counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use symshape::{Expr, Scope};
use symshape_view::{Op, PreparedStack, PreparedView, View, ViewStack};

/// The system allocator, counting allocations of threads inside [`count`].
pub struct Counting;

thread_local! {
    // Const-initialised `Cell`s of `Copy` types: no lazy initialisation and no
    // destructor, so touching them never allocates (which would recurse).
    static ON: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: during thread teardown the slots may be gone; then nothing counts.
    let _ = ON.try_with(|on| {
        if on.get() {
            let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds
// the `GlobalAlloc` contract; counting only reads and writes thread-local `Cell`s.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's guarantees for `layout` are passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (every allocation goes there) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: `ptr` came from `System` with `layout`; the caller guarantees `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` and returns its result with the number of allocations (and
/// reallocations) it made on this thread. The result is dropped by the caller,
/// outside the count.
fn count<T>(f: impl FnOnce() -> T) -> (T, u64) {
    ALLOCS.with(|n| n.set(0));
    ON.with(|on| on.set(true));
    let res = f();
    ON.with(|on| on.set(false));
    (res, ALLOCS.with(Cell::get))
}

#[test]
fn counter_sees_allocations() {
    let (v, n) = count(|| vec![1u8; 3]);
    assert_eq!((v.len(), n), (3, 1));
    let ((), n) = count(|| ());
    assert_eq!(n, 0);
}

#[test]
fn prepared_view_bind_allocates_only_its_result() {
    let (cx, v) = crate::shared_views::rank4_pad();
    let p = PreparedView::new(&cx, &v).expect("prepare");
    let mut cache = p.cache();
    p.bind(&mut cache, &[8, 224, 224]).expect("warm-up bind");
    let (res, n) = count(|| p.bind(&mut cache, &[8, 224, 226]));
    let c = res.expect("bind");
    assert!(c.mask().is_some(), "the pad keeps a mask");
    // The result's shape, strides and mask vectors, nothing else.
    assert_eq!(n, 3, "allocations of one prepared bind of {c:?}");
    // A failed bind reports the value and the declared range.
    let msg = p
        .bind(&mut cache, &[8, 0, 224])
        .expect_err("h = 0 is out of range")
        .to_string();
    assert_eq!(msg, "bind: h = 0 is outside its range 1..=1024");
}

#[test]
fn exact_checks_allocate_nothing() {
    // Expression bounds and `or`/`!=` assumptions are checked inside the program.
    let mut cx = Scope::new();
    let n = cx.declare_str("n 1..=64").expect("n");
    let m = cx.declare_str("m 1..=n").expect("m");
    let i = cx.declare_str("i 0..m").expect("i");
    cx.assume_str("n % 2 == 0 or m == 1").expect("assume");
    cx.assume_str("i != 3").expect("assume");
    let v = View::create(&cx, &[n, m, Expr::from(4)], None, i, None).expect("view");
    let p = PreparedView::new(&cx, &v).expect("prepare");
    let mut cache = p.cache();
    let names: Vec<String> = p.symbols().iter().map(ToString::to_string).collect();
    assert_eq!(names, ["i", "m", "n"]);
    p.bind(&mut cache, &[1, 3, 8]).expect("warm-up bind");
    let (res, allocs) = count(|| p.bind(&mut cache, &[2, 5, 8]));
    let c = res.expect("bind");
    assert!(c.mask().is_none());
    // Shape and strides only: there is no mask.
    assert_eq!(allocs, 2, "allocations of one prepared bind of {c:?}");
    let msg = p
        .bind(&mut cache, &[3, 5, 8])
        .expect_err("i != 3")
        .to_string();
    assert_eq!(
        msg,
        "bind: assumption `i != 3` is violated by i = 3, m = 5, n = 8"
    );
}

#[test]
fn prepared_stack_bind_allocates_only_its_result() {
    let (cx, v) = crate::shared_views::rank4_pad();
    let p = PreparedStack::new(&cx, &ViewStack::new(v)).expect("prepare");
    let mut cache = p.cache();
    p.bind(&mut cache, &[8, 224, 226]).expect("warm-up bind");
    let (res, n) = count(|| p.bind(&mut cache, &[8, 224, 226]));
    let s = res.expect("bind");
    assert_eq!(s.levels().len(), 1);
    assert!(s.top().mask().is_some());
    // The result, kernel-ready: the stack's vector and the view's shape, strides and
    // mask.
    assert_eq!(n, 4, "allocations of one prepared stack bind of {s}");
}

#[test]
fn prepared_multi_view_stack_bind_is_counted() {
    // A transpose under a flattening reshape stays two views; binding checks and
    // merges them as `ViewStack::bind` does, which allocates while merging.
    let mut cx = Scope::new();
    let a = cx.declare_str("a 1..=64").expect("a");
    let b = cx.declare_str("b 1..=64").expect("b");
    let base = View::row_major(&cx, &[a, b]).expect("view");
    let st = ViewStack::new(base)
        .apply(&cx, &Op::Permute(vec![1, 0]))
        .and_then(|s| s.apply(&cx, &Op::Reshape(vec![a * b])))
        .expect("stack");
    let p = PreparedStack::new(&cx, &st).expect("prepare");
    let mut cache = p.cache();
    p.bind(&mut cache, &[3, 5]).expect("warm-up bind");
    let (res, n) = count(|| p.bind(&mut cache, &[3, 5]));
    let s = res.expect("bind");
    assert_eq!(s.levels().len(), 2, "{s}");
    // The result alone is 1 + 2 * 2 vectors; the merge analysis costs the rest.
    assert!(n >= 5, "{n} allocations for {s}");
}
