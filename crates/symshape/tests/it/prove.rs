//! Three-valued proofs and ranges under a scope, as text.

use symshape::{CmpOp, Error, Expr, Proof, Scope};

use crate::{scope_assuming, std_scope, table, TextTable};

text_tables_test!(TABLES);

/// Proves the goal `A OP B` in `cx`; prints the answer and, for unknown, the reason.
fn prove_goal(cx: &Scope, goal: &str) -> Result<String, Error> {
    let ops = ["<=", ">=", "==", "!=", "<", ">"];
    let Some((pos, op)) = ops
        .iter()
        .filter_map(|op| goal.find(op).map(|p| (p, *op)))
        .min_by_key(|x| x.0)
    else {
        return Ok("bad test input".into());
    };
    let a = cx.parse_expr(&goal[..pos])?;
    let b = cx.parse_expr(&goal[pos + op.len()..])?;
    let op: CmpOp = op.parse().expect("operator");
    let p = cx.prove(a, op, b);
    Ok(match p.reason() {
        Some(r) => format!("{p} ({r})"),
        None => p.to_string(),
    })
}

/// The range of the expression `input` in `cx`.
fn range_of(cx: &Scope, input: &str) -> Result<String, Error> {
    Ok(cx.range(cx.parse_expr(input)?).to_string())
}

#[test]
fn context_free_range_and_congruence() {
    let cx = std_scope();
    let e = cx.parse_expr("4*b + 6").unwrap();
    insta::assert_snapshot!(e.range().to_string(), @"[38, 4102]");
    insta::assert_snapshot!(e.congruence().to_string(), @"≡ 6 (mod 32)");
    let mut cx = cx;
    cx.assume_str("n % 8 == 4").unwrap();
    let n = cx.symbol("n").unwrap();
    insta::assert_snapshot!(cx.congruence(3 * n + 1).to_string(), @"≡ 13 (mod 24)");
    insta::assert_snapshot!(n.congruence().to_string(), @"≡ 0 (mod 1)");
}

#[test]
fn proofs_by_cases_and_exclusions() {
    let cx = scope_assuming(&[
        "k != 0",
        "z != 100",
        "z != 99",
        "x >= 5 or x <= -5",
        "m >= n + 1 or m <= n - 1",
        "y % 4 == 1 or y % 4 == 3",
    ]);
    let out = table(
        &[
            "k >= 1",
            "z <= 98",
            "z < 100",
            "x != 0",
            "x != 3",
            "x == -4",
            "x >= 5",
            "m != n",
            "m == n",
            "y % 2 == 1",
            "y != 8",
            "y % 4 == 1",
            "k // k == 1",
        ],
        |s| prove_goal(&cx, s),
    );
    insta::assert_snapshot!(out, @r"
    k >= 1 => true
    z <= 98 => true
    z < 100 => true
    x != 0 => true
    x != 3 => true
    x == -4 => false
    x >= 5 => unknown (neither `x >= 5` nor its negation follows from the ranges, congruences and 6 assumptions; `-x + 5` ranges over [-inf, inf] and `x` is unbounded on both sides)
    m != n => true
    m == n => false
    y % 2 == 1 => true
    y != 8 => true
    y % 4 == 1 => unknown (neither `y % 4 == 1` nor its negation follows from the ranges, congruences and 6 assumptions; `y % 4 - 1` ranges over [-1, 2])
    k // k == 1 => true
    ");
}

/// A minimum is one of its arguments: goals and assumptions that hold or fail only
/// through which argument it is are decided by splitting on it (the linear facts alone
/// say a minimum is at most each argument, and a maximum at least each).
#[test]
fn proofs_split_on_minima_and_maxima() {
    let (cx, _) = crate::scope_of(&["n 0..=4", "m 0..=4"]);
    let out = table(
        &[
            // min(2, n - 1) is 2 (n - 5 >= 1 is false) or n - 1 (-2 >= 1 is false).
            "n - min(2, n - 1) - 2 >= 1",
            "n - min(2, n - 1) >= 1",
            "max(n, m) - n - m <= 0",
            "max(n, 2) - min(n, 2) == n - 2",
            "min(n, m) + max(n, m) == n + m",
            "min(min(n, m), 3) <= 3",
        ],
        |s| prove_goal(&cx, s),
    );
    insta::assert_snapshot!(out, @"
    n - min(2, n - 1) - 2 >= 1 => false
    n - min(2, n - 1) >= 1 => true
    max(n, m) - n - m <= 0 => true
    max(n, 2) - min(n, 2) == n - 2 => unknown (neither `n + min(2, n) == max(2, n) + 2` nor its negation follows from the ranges and congruences (no assumptions); `n + min(2, n) - max(2, n) - 2` ranges over [-6, 2])
    min(n, m) + max(n, m) == n + m => true
    min(min(n, m), 3) <= 3 => true
    ");
    // A quotient of unknown sign times a symbol: split on the sign.
    let (wide, _) = crate::scope_of(&["n 0..=100000", "s 1..=3"]);
    let out = table(
        &["n + 1 <= (max(1, n - 1) - 2) // s", "(n - 50) // s <= n"],
        |g| prove_goal(&wide, g),
    );
    insta::assert_snapshot!(out, @"
    n + 1 <= (max(1, n - 1) - 2) // s => false
    (n - 50) // s <= n => true
    ");
    // The same split keeps an assumption from contradicting the ranges unseen.
    let mut cx = cx;
    let e = cx
        .assume_str("n - min(2, n - 1) - 2 >= 1")
        .expect_err("contradiction");
    insta::assert_snapshot!(e.to_string(), @"assume: `n - min(2, n - 1) - 2 >= 1` contradicts the ranges and the earlier assumptions");
    cx.assume_str("max(n, m) >= 3").expect("consistent");
    cx.assume_str("n <= 1").expect("consistent");
    insta::assert_snapshot!(prove_goal(&cx, "m >= 3").expect("proof"), @"true");
}

/// The snapshotted tables of proofs and ranges.
const TABLES: &[TextTable] = &[
    TextTable {
        name: "index_width_under_a_size_assumption",
        declare: &[
            "s0 1..=65536",
            "s1 1..=65536",
            "s2 1..=65536",
            "i0 0..s0",
            "i1 0..s1",
            "i2 0..s2",
        ],
        assume: &["s0*s1*s2 <= 1000000000"],
        render: prove_goal,
        inputs: &[
            "i0*s1*s2 + i1*s2 + i2 <= 999999999",
            "i2*s0*s1 + i1*s0 + i0 <= 999999999",
            "i1*s0 + i0 <= 999999999",
            "s0*s1 <= 1000000000",
            "s0*s2 <= 1000000000",
            "i0*s1*s2 + i1*s2 + i2 <= 999999998",
            "i1*s0 + i0 <= 999999998",
        ],
    },
    TextTable {
        name: "lowered_view_offsets_in_bounds",
        declare: &[
            "bb 1..=64",
            "ss 1..=4096",
            "tt 1..=8192",
            "pp 0..=tt - 1",
            "ww 1..=tt - pp",
            "hh 1..=512",
            "cc 1..=256",
            "h0 0..12*bb",
            "h1 0..64*ss",
            "g0 0..bb*ss",
            "g1 0..768",
            "k0 0..8*bb",
            "k1 0..128*ww",
            "c0 0..cc*bb",
            "c1 0..((hh + 1) // 2)*((hh + 1) // 2)",
        ],
        assume: &[],
        render: prove_goal,
        inputs: &[
            // Attention heads: `[bb, ss, 768]` split into 12 heads, permuted, flattened.
            "768*ss*((64*h0*ss + h1) // (768*ss)) + 768*(h1 // 64) + 64*(h0 % 12) + h1 % 64 < 768*bb*ss",
            "768*ss*((64*h0*ss + h1) // (768*ss)) + 768*(h1 // 64) + 64*(h0 % 12) + h1 % 64 == 768*ss*(h0 // 12) + 768*(h1 // 64) + 64*(h0 % 12) + h1 % 64",
            // Heads merged back: `[bb, 12, ss, 64]` permuted to `[bb*ss, 768]`.
            "64*ss*(g1 // 64) + 768*ss*((768*g0 + g1) // (768*ss)) + 64*(g0 % ss) + g1 % 64 < 768*bb*ss",
            // A window `pp..pp + ww` of a KV cache `[bb, tt, 8, 128]`, heads first.
            "1024*tt*((128*k0*ww + k1) // (1024*ww)) + 1024*pp + 1024*(k1 // 128) + 128*(k0 % 8) + k1 % 128 < 1024*bb*tt",
            "1024*tt*((128*k0*ww + k1) // (1024*ww)) + 1024*pp + 1024*(k1 // 128) + 128*(k0 % 8) + k1 % 128 < 1024*bb*tt - 1",
            // Every second row and column of `[bb, hh, hh, cc]`, channels first.
            "cc*hh*hh*(c0 // cc) + 2*cc*hh*((c1 // ((hh + 1) // 2)) % ((hh + 1) // 2)) + 2*cc*(c1 % ((hh + 1) // 2)) + c0 % cc < cc*hh*hh*bb",
        ],
    },
    TextTable {
        name: "proofs_from_ranges",
        declare: &[],
        assume: &[],
        render: prove_goal,
        inputs: &[
            "n >= 1",
            "n > 4096",
            "n <= 4096",
            "n == 0",
            "n != 0",
            "i < n",
            "i <= n - 2",
            "j >= 0",
            "i*m + j < n*m",
            "i*m + j <= n*m - 2",
            "x // 4 * 4 <= x",
            "x - 4*(x // 4) <= 3",
            "x % 4 < 4",
            "x % 4 >= 0",
            "x % 4 == 4",
            "x <= x + 1",
            "x < y",
            "x*x >= 0",
            "b % 8 == 0",
            "b != 12",
            "b == 13",
            "2*x == 2*y + 1",
            "min(x, y) <= x",
            "max(x, y) >= y",
            "z < 101",
            "z*z <= 10000",
            "x % w < w",
            "n // 2 <= n",
            "x*x >= 2*x - 1",
        ],
    },
    TextTable {
        name: "proofs_from_assumptions",
        declare: &[],
        assume: &["x <= y", "y <= z", "n % 8 == 0", "n*m == k", "n <= m"],
        render: prove_goal,
        inputs: &[
            "x <= z",
            "x < z + 1",
            "x > z",
            "x == z",
            "n % 8 == 0",
            "n % 4 == 0",
            "n % 16 == 0",
            "n != 12",
            "n >= 8",
            "n*m == k",
            "k >= 1",
            "k - n*m <= 0",
            "n <= m + 5",
            "m >= n",
            "m > n",
            "n // 8 * 8 == n",
        ],
    },
    TextTable {
        name: "ranges",
        declare: &[],
        assume: &["x >= -5 and x <= 10", "n % 8 == 0"],
        render: range_of,
        inputs: &[
            "n",
            "n + m",
            "n - m",
            "n * m",
            "i",
            "i*m + j",
            "x",
            "x*x",
            "x*y",
            "y",
            "k",
            "w - k",
            "x // 4",
            "x % 7",
            "y % 7",
            "y % w",
            "n // m",
            "z * 3 + 1",
            "min(n, z)",
            "max(x, z)",
            "b",
            "cdiv(z, 3)",
            "n*n*n*n*n*n*m*m*m*m*m*m",
        ],
    },
    TextTable {
        name: "ranges_with_relations",
        declare: &[],
        assume: &["n*m == k", "x <= y", "y <= z", "n <= m", "w <= n"],
        render: range_of,
        inputs: &[
            "n*m - k",
            "x - z",
            "z - x",
            "y",
            "x",
            "m - n",
            "n - m",
            "w",
            "w - m",
            "k - n*m + 5",
        ],
    },
];

/// The bounds of a row-major flat index are shown at every rank (each index at its
/// bound telescopes to `numel - 1`), and the divisions that recover an index simplify
/// to it.
#[test]
fn row_major_flat_index_at_every_rank() {
    for rank in 1..=24 {
        let mut cx = Scope::new();
        let s: Vec<_> = (0..rank)
            .map(|d| cx.declare_str(&format!("s{d} 1..=1024")).unwrap())
            .collect();
        let i: Vec<_> = (0..rank)
            .map(|d| cx.declare_str(&format!("i{d} 0..s{d}")).unwrap())
            .collect();
        let product = |r: std::ops::Range<usize>| s[r].iter().fold(Expr::from(1), |a, &b| a * b);
        let flat = (0..rank).fold(Expr::from(0), |a, d| a + i[d] * product(d + 1..rank));
        let numel = product(0..rank);
        let at = |what: &str| format!("rank {rank}: {what}");
        assert_eq!(
            cx.prove(flat, CmpOp::Lt, numel),
            Proof::True,
            "{}",
            at("flat < numel")
        );
        assert_eq!(
            cx.prove(flat, CmpOp::Ge, Expr::from(0)),
            Proof::True,
            "{}",
            at("flat >= 0")
        );
        assert_eq!(
            cx.prove(flat, CmpOp::Eq, numel),
            Proof::False,
            "{}",
            at("flat == numel")
        );
        // `numel - 2` is exceeded when every index is at its end.
        assert_ne!(
            cx.prove(flat, CmpOp::Le, numel - 2),
            Proof::True,
            "{}",
            at("flat <= numel - 2")
        );
        for d in 0..rank {
            let inner = product(d + 1..rank);
            let recovered = cx.simplify(flat.floor_div(inner).floor_mod(s[d]));
            assert_eq!(
                recovered,
                i[d],
                "{}",
                at(&format!("(flat // inner) % s{d}"))
            );
        }
        assert_eq!(
            flat.floor_div(product(1..rank)),
            i[0],
            "{}",
            at("flat // inner, unscoped")
        );
    }
}
