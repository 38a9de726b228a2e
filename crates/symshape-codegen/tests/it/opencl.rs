//! OpenCL kernels run on the machine's OpenCL platform (POCL in CI) through the host
//! program of `opencl_host.rs`, compared with `symshape_kernels::materialize`.
//!
//! Without an OpenCL platform the tests print that they were skipped, except under
//! `CI=true`, where a missing platform, compiler, header or library fails them.

use std::sync::OnceLock;

use symshape::{Bindings, Scope};
use symshape_kernels::{materialize, Element, Input};
use symshape_view::{View, ViewOps, ViewStack};

use crate::opencl_host::{Host, Program, Run};

/// Whether this run is CI's (`CI=true`), where every test must run.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The host program, compiled once per test process; `None` (after saying so once) when
/// there is no OpenCL platform outside CI. Panics in CI when there is none.
pub fn cl_host() -> Option<&'static Host> {
    static HOST: OnceLock<Result<Host, String>> = OnceLock::new();
    let host = HOST.get_or_init(|| {
        let res = Host::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
        match &res {
            Ok(h) => eprintln!("OpenCL tests run on {}", h.probe().unwrap_or_else(|e| e)),
            Err(e) if !in_ci() => eprintln!("skipping OpenCL tests: {e}"),
            Err(_) => {}
        }
        res
    });
    match host {
        Ok(h) => Some(h),
        Err(e) => {
            assert!(
                !in_ci(),
                "CI=true but the OpenCL tests cannot run: {e}\n\
                 (install pocl-opencl-icd and ocl-icd-opencl-dev; `cargo xtask ci` does)"
            );
            None
        }
    }
}

/// Little-endian bytes of a slice of elements.
pub trait Bytes: Element {
    /// Appends the element's little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// The element for a small non-negative test value.
    fn of(v: i64) -> Self;
}

macro_rules! bytes_int {
    ($($t:ty),*) => {$(
        impl Bytes for $t {
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn of(v: i64) -> Self {
                <$t>::try_from(v).expect("a test value fits the type")
            }
        }
    )*};
}
bytes_int!(i64, i32, u16, u8);

impl Bytes for f32 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn of(v: i64) -> Self {
        i16::try_from(v).map(f32::from).expect("a small test value")
    }
}

impl Bytes for f64 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn of(v: i64) -> Self {
        i32::try_from(v).map(f64::from).expect("a small test value")
    }
}

/// The bytes of `values`.
pub fn to_bytes<T: Bytes>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(values));
    for &v in values {
        v.put(&mut out);
    }
    out
}

/// A tiled transpose written by hand, with the signature `render_opencl` emits: the host
/// program's own check (work-groups of 16x16, a local tile and a barrier).
const TRANSPOSE_CL: &str = r#"
__kernel void shapetrace_materialize(__global const int *src, __global int *dst,
                                     __global const long *syms, const int pad) {
    __local int tile[16][17];
    long n = syms[0], m = syms[1];
    long c = get_group_id(0) * 16, r = get_group_id(1) * 16;
    int x = get_local_id(0), y = get_local_id(1);
    (void)pad;
    if (r + x < n && c + y < m) tile[y][x] = src[(r + x) * m + c + y];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (c + y < m && r + x < n) dst[(c + y) * n + r + x] = tile[y][x];
}
"#;

/// The host program runs a hand-written tiled transpose at several sizes, including an
/// empty one, equal to the kernels' transpose element by element.
#[test]
fn the_host_program_runs_a_tiled_kernel() {
    let Some(host) = cl_host() else { return };
    let mut cx = Scope::new();
    let n = cx.declare_str("n 0..=100").expect("declared");
    let m = cx.declare_str("m 0..=100").expect("declared");
    let t = ViewStack::new(View::row_major(&cx, &[n, m]).expect("a view"))
        .permute(&cx, &[1, 0])
        .expect("a transpose");
    let sizes = [(1, 1), (16, 16), (17, 40), (33, 5), (0, 7)];
    let mut runs = Vec::new();
    let mut expected = Vec::new();
    for (k, &(nv, mv)) in sizes.iter().enumerate() {
        let mut b = Bindings::new();
        b.set(n, nv).expect("in range");
        b.set(m, mv).expect("in range");
        let bound = t.bind(&cx, &b).expect("binds");
        let src: Vec<i32> = (0..nv * mv)
            .map(|v| i32::try_from(v).expect("small") * 3 + i32::try_from(k).expect("small"))
            .collect();
        let want = materialize(Input::new(&src, &bound))
            .expect("materializes")
            .values;
        let groups = |e: i64| u64::try_from(e).expect("non-negative").div_ceil(16) * 16;
        runs.push(Run {
            elem_size: 4,
            global: [groups(mv), groups(nv), 1],
            local: [16, 16, 1],
            syms: vec![nv, mv],
            pad: to_bytes(&[-1i32]),
            src: to_bytes(&src),
            dst_bytes: 4 * want.len(),
        });
        expected.push(to_bytes(&want));
    }
    let program = Program {
        source: TRANSPOSE_CL.to_string(),
        runs,
    };
    let res = host.run(&[program]).expect("the host program runs");
    let runs = res[0].as_ref().expect("the program builds");
    for ((got, want), size) in runs.iter().zip(&expected).zip(sizes) {
        assert_eq!(
            got.as_ref().expect("the launch succeeds"),
            want,
            "size {size:?}"
        );
    }
}

/// An `int` kernel with the parameters `render_opencl` emits and `body`.
fn int_kernel(body: &str) -> String {
    format!(
        "__kernel void shapetrace_materialize(__global const int *src, \
         __global int *dst, __global const long *syms, const int pad) {{ {body} }}"
    )
}

/// A launch of an `int` kernel on two work-items, with the one symbol at `sym` and the
/// pad 7.
fn int_run(sym: i64) -> Run {
    Run {
        elem_size: 4,
        global: [2, 1, 1],
        local: [1, 1, 1],
        syms: vec![sym],
        pad: to_bytes(&[7i32]),
        src: Vec::new(),
        dst_bytes: 8,
    }
}

/// A program that builds: one launch writing `pad + syms[0]`, 12, at both work-items.
fn good_program() -> Program {
    Program {
        source: int_kernel("dst[get_global_id(0)] = pad + (int)syms[0];"),
        runs: vec![int_run(5)],
    }
}

/// Runs `failing`, whose build fails, then [`good_program`]: the build log of `failing`,
/// once the good program has built and run.
fn log_before_a_good_program(host: &Host, failing: Program) -> String {
    let res = host
        .run(&[failing, good_program()])
        .expect("the host program answers every program");
    let runs = res[1].as_ref().expect("the second program builds");
    assert_eq!(runs[0].as_ref().expect("it runs"), &to_bytes(&[12i32, 12]));
    res[0]
        .as_ref()
        .expect_err("the first program's build fails")
        .clone()
}

/// A build error comes back with its log, and a later program still runs.
#[test]
fn a_build_error_returns_the_log() {
    let Some(host) = cl_host() else { return };
    let bad = Program {
        source: "__kernel void shapetrace_materialize(__global int *d) { d[0] = x; }".into(),
        runs: Vec::new(),
    };
    let log = log_before_a_good_program(host, bad);
    assert!(
        log.contains('x'),
        "the log names the undeclared identifier: {log}"
    );
}

/// A program that fails to build only for a warning (the host builds with `-Werror`)
/// still has its launches answered: the log comes back, and the next program's results
/// are its own.
#[test]
fn a_warning_fails_the_build_and_its_runs_are_skipped() {
    let Some(host) = cl_host() else { return };
    let warned = Program {
        source: int_kernel("const long i = syms[0]; dst[get_global_id(0)] = (i >= 0) && 2;"),
        runs: vec![int_run(1), int_run(2)],
    };
    let log = log_before_a_good_program(host, warned);
    assert!(
        log.contains("constant operand"),
        "the log shows the warning: {log}"
    );
}
