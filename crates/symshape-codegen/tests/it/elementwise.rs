//! Elementwise plans: several stacks broadcast to one shape, compiled and run.

use symshape::{Bindings, Scope};
use symshape_codegen::{render_c, CConfig, Plan};
use symshape_kernels::{materialize, Input};
use symshape_view::{View, ViewOps, ViewStack};

use crate::harness::{compile_with, have_cc};

/// Reads `n m`, runs `sum_elementwise` on fixed inputs and prints the guard result and
/// the output.
const DRIVER: &str = r#"#include <stdint.h>
#include <stdio.h>

int sum_guards(const int64_t *syms);
void sum_elementwise(const int64_t *const *src, int64_t *dst, const int64_t *syms, const int64_t *pads);

int main(void) {
    long long n, m;
    int64_t col[16], row[16], dst[256], syms[2], pads[2] = {-7, -9};
    const int64_t *src[2];
    int64_t k;
    int g;
    for (k = 0; k < 16; ++k) { col[k] = 100 * k; row[k] = k; }
    src[0] = col;
    src[1] = row;
    while (scanf("%lld %lld", &n, &m) == 2) {
        syms[0] = n;
        syms[1] = m;
        g = sum_guards(syms);
        printf("%d", g);
        if (g == 0) {
            sum_elementwise(src, dst, syms, pads);
            for (k = 0; k < n * (m + 1); ++k) printf(" %lld", (long long)dst[k]);
        }
        printf("\n");
    }
    return 0;
}
"#;

#[test]
fn a_column_plus_a_padded_row() {
    let mut cx = Scope::new();
    let n = cx.declare_str("n 1..=8").expect("n");
    let m = cx.declare_str("m 1..=8").expect("m");
    let col = ViewStack::new(View::row_major(&cx, &[n, 1.into()]).expect("a view"));
    let row = ViewStack::new(View::row_major(&cx, &[m]).expect("a view"))
        .pad(&cx, &[(1i64, 0i64)])
        .expect("pad");
    let shape = [n, m + 1];
    let plan = Plan::elementwise(&cx, &[col.clone(), row.clone()], &shape).expect("a plan");
    let unit = render_c(&cx, &plan, &CConfig::new("sum").combine("x0 + x1")).expect("C");
    insta::assert_snapshot!(format!("{plan}\n{unit}"));
    if !have_cc() {
        return;
    }
    let compiled = compile_with(&unit, DRIVER).unwrap_or_else(|e| panic!("{e}"));
    let bindings = [(1, 1), (3, 2), (8, 8), (5, 1)];
    let mut input = String::new();
    for (vn, vm) in bindings {
        input.push_str(&format!("{vn} {vm}\n"));
    }
    let got = compiled.run_text(&input);
    for ((vn, vm), line) in bindings.iter().zip(got.lines()) {
        let mut b = Bindings::new();
        b.set(n, *vn).expect("in range");
        b.set(m, *vm).expect("in range");
        let bcol = col
            .broadcast_to(&cx, &shape)
            .expect("broadcast")
            .bind(&cx, &b)
            .expect("binds");
        let brow = row
            .broadcast_to(&cx, &shape)
            .expect("broadcast")
            .bind(&cx, &b)
            .expect("binds");
        let colbuf: Vec<i64> = (0..16).map(|k| 100 * k).collect();
        let rowbuf: Vec<i64> = (0..16).collect();
        let a = materialize(Input::new(&colbuf, &bcol).pad(-7))
            .expect("materialize")
            .values;
        let r = materialize(Input::new(&rowbuf, &brow).pad(-9))
            .expect("materialize")
            .values;
        let want: Vec<String> = std::iter::once("0".to_string())
            .chain(a.iter().zip(&r).map(|(x, y)| (x + y).to_string()))
            .collect();
        assert_eq!(line, want.join(" "), "n = {vn}, m = {vm}");
    }
}

#[test]
fn each_input_checks_its_levels_where_the_ranges_do_not_prove_them() {
    // Both inputs broadcast to `[m, m]`, whose element count leaves i64 at m = 2^32.
    let mut cx = Scope::new();
    let m = cx.declare_str("m 0..=inf").expect("m");
    let square = ViewStack::new(View::row_major(&cx, &[m, m]).expect("a view"));
    let row = ViewStack::new(View::row_major(&cx, &[m]).expect("a view"));
    let plan = Plan::elementwise(&cx, &[row, square], &[m, m]).expect("a plan");
    let checks: Vec<&str> = plan.checks().iter().map(|c| c.text.as_str()).collect();
    insta::assert_debug_snapshot!(checks, @r#"
    [
        "input 0 view 0 binds: shape [m, m] strides [0, 1] offset 0",
        "input 1 view 0 binds: shape [m, m] strides [max(1, m), 1] offset 0",
        "m in 0..=inf",
    ]
    "#);
}
