//! The workloads of the GPU benchmark (`symshape-gpu-bench`), as symbolic stacks with the
//! binding the benchmark times and a small one for checks on the CPU. The codegen tests
//! include this file too, and run the small bindings' OpenCL renderings on POCL.

use symshape::{Expr, Scope};
use symshape_view::{IndexItem, Op, View, ViewStack};

/// One workload: a symbolic stack, materialized into a row-major output.
pub struct Workload {
    /// The name the table prints.
    pub name: &'static str,
    /// The element type, as `ElemType` parses it.
    pub elem: &'static str,
    /// The symbols' declarations.
    pub cx: Scope,
    /// What is materialized.
    pub stack: ViewStack,
    /// The symbols' values (declaration order) the benchmark times.
    pub bench: Vec<i64>,
    /// Small values of the symbols, for checks without a GPU.
    pub small: Vec<i64>,
    /// The index width the ranges must prove: `i32` or `i64`.
    pub index: &'static str,
    /// The target: at most this many times a device-to-device copy of the output's bytes
    /// (none for the 64-bit workload, which only has to be correct).
    pub target: Option<f64>,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A scope declaring `decls` (`"n 1..=8192"`, ...) and their symbols.
fn scope(decls: &[&str]) -> Result<(Scope, Vec<Expr>), String> {
    let mut cx = Scope::new();
    let syms = decls
        .iter()
        .map(|d| cx.declare_str(d).map_err(err))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((cx, syms))
}

/// `ops` applied in turn to a row-major view of `shape`.
fn traced(cx: &Scope, shape: &[Expr], ops: &[Op]) -> Result<ViewStack, String> {
    let mut s = ViewStack::new(View::row_major(cx, shape).map_err(err)?);
    for op in ops {
        s = s.apply(cx, op).map_err(err)?;
    }
    Ok(s)
}

/// The workloads, in the table's order. Every symbol's range reaches well beyond the
/// benchmark's size; the index width is proven from the ranges, not from the binding.
pub fn workloads() -> Result<Vec<Workload>, String> {
    let c = Expr::from;
    let mut out = Vec::new();
    let mut add = |name,
                   elem,
                   (cx, stack): (Scope, ViewStack),
                   bench: &[i64],
                   small: &[i64],
                   index,
                   target| {
        out.push(Workload {
            name,
            elem,
            cx,
            stack,
            bench: bench.to_vec(),
            small: small.to_vec(),
            index,
            target,
        });
    };
    let two =
        |ops: &dyn Fn(Expr, Expr) -> Vec<Op>, hi: i64| -> Result<(Scope, ViewStack), String> {
            let (cx, s) = scope(&[&format!("n 1..={hi}"), &format!("m 1..={hi}")])?;
            let stack = traced(&cx, &[s[0], s[1]], &ops(s[0], s[1]))?;
            Ok((cx, stack))
        };
    // [n, m] -> [m, n].
    add(
        "transpose_4096x4096",
        "f32",
        two(&|_, _| vec![Op::Permute(vec![1, 0])], 16384)?,
        &[4096, 4096],
        &[37, 70],
        "i32",
        Some(1.25),
    );
    for (name, perm) in [
        ("permute_256^3_021", [0, 2, 1]),
        ("permute_256^3_102", [1, 0, 2]),
        ("permute_256^3_210", [2, 1, 0]),
    ] {
        let (cx, s) = scope(&["a 1..=1024", "b 1..=1024", "c 1..=1024"])?;
        let stack = traced(&cx, &s, &[Op::Permute(perm.to_vec())])?;
        add(
            name,
            "f32",
            (cx, stack),
            &[256, 256, 256],
            &[5, 33, 40],
            "i32",
            Some(1.25),
        );
    }
    // [b, 12, s, 64] -> [b, s, 12, 64] -> [b, s, 768].
    {
        let (cx, s) = scope(&["b 1..=256", "s 1..=4096"])?;
        let stack = traced(
            &cx,
            &[s[0], c(12), s[1], c(64)],
            &[
                Op::Permute(vec![0, 2, 1, 3]),
                Op::Reshape(vec![s[0], s[1], c(768)]),
            ],
        )?;
        add(
            "merge_heads_64x12x512x64",
            "f32",
            (cx, stack),
            &[64, 512],
            &[2, 5],
            "i32",
            Some(1.05),
        );
    }
    // Both axes reversed.
    add(
        "flip_4096x4096",
        "f32",
        two(&|_, _| vec![Op::Flip(vec![0, 1])], 16384)?,
        &[4096, 4096],
        &[37, 70],
        "i32",
        Some(1.1),
    );
    // One element of pad on each side of both axes: [n, m] -> [n + 2, m + 2].
    add(
        "pad_4094_to_4096",
        "f32",
        two(
            &|_, _| vec![Op::Pad(vec![(c(1), c(1)), (c(1), c(1))])],
            16384,
        )?,
        &[4094, 4094],
        &[35, 68],
        "i32",
        Some(1.1),
    );
    // [n, 2m] -> [n, m], every second column.
    {
        let (cx, s) = scope(&["n 1..=16384", "m 1..=8192"])?;
        let every2nd = IndexItem::Slice {
            start: None,
            stop: None,
            step: Some(c(2)),
        };
        let stack = traced(
            &cx,
            &[s[0], c(2) * s[1]],
            &[Op::Index(vec![IndexItem::FULL, every2nd])],
        )?;
        add(
            "every_2nd_column_4096x8192",
            "f32",
            (cx, stack),
            &[4096, 4096],
            &[37, 35],
            "i32",
            Some(1.1),
        );
    }
    // [n, 1] -> [n, m].
    add(
        "broadcast_4096x1_to_4096x4096",
        "f32",
        {
            let (cx, s) = scope(&["n 1..=16384", "m 1..=16384"])?;
            let stack = traced(&cx, &[s[0], c(1)], &[Op::BroadcastTo(vec![s[0], s[1]])])?;
            (cx, stack)
        },
        &[4096, 4096],
        &[37, 70],
        "i32",
        Some(1.1),
    );
    // More than 2^31 elements at the benchmark's binding (2^31 + 2^28): the 64-bit path.
    add(
        "transpose_u8_49152x49152",
        "u8",
        two(&|_, _| vec![Op::Permute(vec![1, 0])], 65536)?,
        &[49152, 49152],
        &[37, 70],
        "i64",
        None,
    );
    Ok(out)
}
