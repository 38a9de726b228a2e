//! Kernels on the caller's rayon pool, and the split of a plan's work the plan reports.

use std::collections::HashSet;
use std::sync::Mutex;

use symshape_kernels::{map_into, plan_materialize, ConcreteView, Input, Output};
use symshape_view::Op;

/// The pool threads an elementwise `map` of 4 MiB runs on inside `pool.install`, as
/// `(thread index, pool size)` pairs seen by the mapped function.
fn threads_seen(threads: usize) -> HashSet<(Option<usize>, usize)> {
    let n = 1usize << 20;
    let buf: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut out = vec![0f32; n];
    let v = ConcreteView::contiguous(&[n as i64]).unwrap();
    let seen = Mutex::new(HashSet::new());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        map_into(Input::new(&buf, &v), Output::new(&mut out, &v), |x| {
            let who = (rayon::current_thread_index(), rayon::current_num_threads());
            seen.lock().unwrap().insert(who);
            x + 1.0
        })
        .unwrap();
    });
    assert!(out.iter().enumerate().all(|(i, &x)| x == i as f32 + 1.0));
    seen.into_inner().unwrap()
}

#[test]
fn kernels_run_on_the_installed_pool() {
    // One thread: every row on thread 0 of that pool.
    assert_eq!(threads_seen(1), HashSet::from([(Some(0), 1)]));
    // Three threads: only that pool's threads, which see its size.
    let three = threads_seen(3);
    assert!(!three.is_empty());
    assert!(
        three
            .iter()
            .all(|&(i, n)| n == 3 && i.is_some_and(|i| i < 3)),
        "{three:?}"
    );
}

/// The split of a plan's work for pools of several sizes, as `LoopPlan::partition` prints
/// it: one task on one thread or under the parallel threshold, else about 64 tasks (four
/// per thread on larger pools), never more than the units of work; a box under the
/// threshold in a plan over it runs as one task.
#[test]
fn plans_report_their_partition() {
    let n = 4096;
    let square = ConcreteView::contiguous(&[n, n]).unwrap();
    let cases = [
        ("contiguous 4096x4096", square.clone()),
        (
            "transpose 4096x4096",
            square.apply(&Op::Permute(vec![1, 0])).unwrap(),
        ),
        (
            "8x8 transpose",
            ConcreteView::contiguous(&[8, 8])
                .unwrap()
                .apply(&Op::Permute(vec![1, 0]))
                .unwrap(),
        ),
    ];
    let mut text = String::new();
    for (name, v) in &cases {
        let plan = plan_materialize::<f32>(v).unwrap();
        for threads in [1, 2, 3, 32] {
            text.push_str(&format!("{name}: {}", plan.partition(threads)));
        }
    }
    let mask = crate::props::causal_mask(512, 128, true, 1);
    let plan = plan_materialize::<f32>(&mask).unwrap();
    // 1.3 MB: on 16 threads, shared between 8 (a share's floor).
    for threads in [1, 3, 16] {
        text.push_str(&format!("causal mask 512x640: {}", plan.partition(threads)));
    }
    // The pad and edge boxes of an im2col (a few KiB each) run on the calling thread; the
    // windows' box splits into tasks of equal bytes.
    let im2col = crate::plans::channels_last_im2col(8, 512, 768, 4, 1);
    let plan = plan_materialize::<f32>(&im2col).unwrap();
    for threads in [2, 16] {
        text.push_str(&format!("im2col 8x768x512x4: {}", plan.partition(threads)));
    }
    insta::assert_snapshot!(text, @r"
contiguous 4096x4096: partition on 1 thread: 1 task in 1 box
  box 0: 1024 units in 1 task of 67108864 bytes on 1 thread
contiguous 4096x4096: partition on 2 threads: 64 tasks in 1 box
  box 0: 1024 units in 64 tasks of 1048576 bytes on 2 threads
contiguous 4096x4096: partition on 3 threads: 64 tasks in 1 box
  box 0: 1024 units in 64 tasks of 1048576 bytes on 3 threads
contiguous 4096x4096: partition on 32 threads: 128 tasks in 1 box
  box 0: 1024 units in 128 tasks of 524288 bytes on 32 threads
transpose 4096x4096: partition on 1 thread: 1 task in 1 box
  box 0: 8 units in 1 task of 67108864 bytes on 1 thread
transpose 4096x4096: partition on 2 threads: 8 tasks in 1 box
  box 0: 8 units in 8 tasks of 8388608 bytes on 2 threads
transpose 4096x4096: partition on 3 threads: 64 tasks in 1 box
  box 0: 128 units in 64 tasks of 1048576 bytes on 3 threads
transpose 4096x4096: partition on 32 threads: 128 tasks in 1 box
  box 0: 128 units in 128 tasks of 524288 bytes on 32 threads
8x8 transpose: partition on 1 thread: 1 task in 1 box
  box 0: 1 unit in 1 task of 256 bytes on 1 thread
8x8 transpose: partition on 2 threads: 1 task in 1 box
  box 0: 1 unit in 1 task of 256 bytes on 1 thread
8x8 transpose: partition on 3 threads: 1 task in 1 box
  box 0: 1 unit in 1 task of 256 bytes on 1 thread
8x8 transpose: partition on 32 threads: 1 task in 1 box
  box 0: 1 unit in 1 task of 256 bytes on 1 thread
causal mask 512x640: partition on 1 thread: 1 task in 1 box
  box 0: 512 units in 1 task of 1310720 bytes on 1 thread
causal mask 512x640: partition on 3 threads: 64 tasks in 1 box
  box 0: 512 units in 64 tasks of 20480 bytes on 3 threads
causal mask 512x640: partition on 16 threads: 64 tasks in 1 box
  box 0: 512 units in 64 tasks of 20480 bytes on 8 threads
im2col 8x768x512x4: partition on 2 threads: 71 tasks in 8 boxes
  box 0: 6144 units in 1 task of 49152 bytes on 1 thread
  box 1: 6144 units in 1 task of 49152 bytes on 1 thread
  box 2: 1 unit in 1 task of 24576 bytes on 1 thread
  box 3: 8 units in 1 task of 24576 bytes on 1 thread
  box 4: 1 unit in 1 task of 24576 bytes on 1 thread
  box 5: 8 units in 1 task of 24576 bytes on 1 thread
  box 6: 12288 units in 1 task of 98304 bytes on 1 thread
  box 7: 768 units in 64 tasks of 781824 bytes on 2 threads
im2col 8x768x512x4: partition on 16 threads: 71 tasks in 8 boxes
  box 0: 6144 units in 1 task of 49152 bytes on 1 thread
  box 1: 6144 units in 1 task of 49152 bytes on 1 thread
  box 2: 1 unit in 1 task of 24576 bytes on 1 thread
  box 3: 8 units in 1 task of 24576 bytes on 1 thread
  box 4: 1 unit in 1 task of 24576 bytes on 1 thread
  box 5: 8 units in 1 task of 24576 bytes on 1 thread
  box 6: 12288 units in 1 task of 98304 bytes on 1 thread
  box 7: 768 units in 64 tasks of 781824 bytes on 16 threads
    ");
}

/// Merging attention heads visits the 12 heads inside each token on every pool (4,096 units
/// of one token's 12 rows), and the copy is the reference's, element for element, on pools
/// of 1, 2 and 16 threads, merging heads and writing them back head-major.
#[test]
fn merged_heads_go_token_by_token_on_any_pool() {
    let heads = ConcreteView::contiguous(&[8, 12, 512, 64]).unwrap();
    let merged = heads.apply(&Op::Permute(vec![0, 2, 1, 3])).unwrap();
    let buf: Vec<f32> = (0..8 * 12 * 512 * 64).map(|i| i as f32).collect();
    let plan = plan_materialize::<f32>(&merged).unwrap();
    let text = format!("{}{}", plan.partition(2), plan.partition(16));
    insta::assert_snapshot!(text, @r"
partition on 2 threads: 64 tasks in 1 box
  box 0: 4096 units in 64 tasks of 196608 bytes on 2 threads
partition on 16 threads: 64 tasks in 1 box
  box 0: 4096 units in 64 tasks of 196608 bytes on 16 threads
    ");
    let want = crate::reference::materialize(&buf, std::slice::from_ref(&merged), 0.0);
    // Written back: the merged values copied into the head-major layout give the source.
    let tokens = ConcreteView::contiguous(&[8, 512, 12, 64]).unwrap();
    for threads in [1, 2, 16] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (got, back) = pool.install(|| {
            let got = symshape_kernels::materialize(Input::new(&buf, &merged))
                .unwrap()
                .values;
            let mut back = vec![0f32; buf.len()];
            symshape_kernels::copy(Input::new(&got, &tokens), Output::new(&mut back, &merged))
                .unwrap();
            (got, back)
        });
        assert!(got == want, "{threads} threads: merged heads differ");
        assert!(back == buf, "{threads} threads: heads written back differ");
    }
}
