//! Kernel statements: plan, values, bench.

use insta::assert_snapshot;

use crate::{trace, trace_cases};

#[test]
fn plans_and_values_of_bound_stacks() {
    assert_snapshot!(trace(
        "
        view [4, 6]
        permute [1, 0]
        plan
        values
        reshape [24]
        plan
        values
        view [3, 4]
        pad [(1, 1), (1, 1)]
        plan
        values -1
        view [2, 3]
        flip [1]
        expand [2, 3]
        slice [:, ::2]
        values
        view [0, 5]
        values
    "
    ));
}

#[test]
fn bench_prints_one_line_of_figures() {
    // f16 and bf16 write half the bytes of f32.
    for (ty, bytes) in [("f32", "16384"), ("f16", "8192"), ("bf16", "8192")] {
        bench_line(ty, bytes);
    }
}

fn bench_line(ty: &str, bytes: &str) {
    let out = shapetrace::run(&format!("view [64, 64]\npermute [1, 0]\nbench {ty}\n"));
    assert_eq!(out.error, None);
    let [line] = out.lines.as_slice() else {
        panic!("bench printed {:?}", out.lines)
    };
    let fields: Vec<(&str, &str)> = line
        .strip_prefix("bench: ")
        .expect("the line starts with `bench: `")
        .split(' ')
        .map(|kv| kv.split_once('=').expect("key=value"))
        .collect();
    let keys: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, ["median_ns", "bytes", "gbps", "memcpy_ratio"]);
    assert_eq!(fields[1].1, bytes);
    for (k, v) in &fields {
        let v: f64 = v
            .parse()
            .unwrap_or_else(|_| panic!("{k}={v} is not a number"));
        assert!(v > 0.0, "{k} is {v}");
    }
}

#[test]
fn kernel_statement_errors() {
    let cases = [
        "plan",
        "view [2, 3]\nbench f64",
        "view [2, 3]\nvalues x",
        "view [2, 3] offset -1\nvalues",
    ];
    assert_snapshot!(trace_cases(&cases, "=> "));
}

/// A causal mask from pad, reshape, expand, shrink and flip is planned as masked rows; a
/// stack whose rows cross the rows below says why it reads an offset table.
#[test]
fn plans_of_masks_and_tables() {
    assert_snapshot!(trace(
        "
        view [10]
        pad [(0, 8)]
        reshape [1, 18]
        expand [8, 18]
        reshape [144]
        pad [(0, 8)]
        reshape [8, 19]
        shrink [(0, 8), (0, 10)]
        flip [0]
        plan
        values -1
        view [6, 4]
        permute [1, 0]
        reshape [24]
        slice [::2]
        plan
    "
    ));
}
