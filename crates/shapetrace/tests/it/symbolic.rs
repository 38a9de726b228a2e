//! Statements of the symbolic engine: sym, assume, simplify, prove, range, bind, solve, eval.

use insta::assert_snapshot;

use crate::{trace, trace_cases};

/// Scripts of the symbolic statements, each named after its snapshot.
const SCRIPTS: &[(&str, &str)] = &[
    (
        "simplification_cancels_index_arithmetic",
        "
        sym n 1..=4096
        sym m 1..=4096
        simplify (n + 1) * (n - 1)
        simplify 2*(n + m) - n
        simplify (4*n + 3) // 4
        simplify (8*n) % 4
        simplify max(n, 1)
        simplify (n // 2) // 4
        sym i 0..m
        sym j 0..m
        simplify (i*m + j) // m
        simplify (i*m + j) % m
        simplify cdiv(4*n, 4)
        ",
    ),
    (
        "proofs_use_ranges_congruences_and_assumptions",
        "
        sym n 1..=4096
        sym m 1..=4096
        sym x -100..=100
        assume n % 8 == 0
        prove n % 8 == 0
        prove n % 4 == 0
        prove n == 12
        prove n <= m
        assume n <= m
        prove n <= m
        prove n < m + 1
        prove m >= 8
        prove (x // 4) * 4 <= x
        prove x % 4 < 4
        prove x > 100
        ",
    ),
    (
        "ranges_print_infinite_ends",
        "
        sym n 1..=4096
        sym k -inf..=inf
        sym b 0..=9223372036854775807
        range 2*n + 1
        range n * n
        range k + n
        range b * b
        range n // 3
        range n % 5
        ",
    ),
    (
        "binding_and_solving",
        "
        sym n 1..=4096
        sym m 1..=4096
        bind n=7
        eval 2*n + 1
        solve 3*m - 1 == 2*n + 6
        eval m * n
        eval n < m
        ",
    ),
];

#[test]
fn symbolic_statements_print_their_results() {
    for (name, script) in SCRIPTS {
        assert_snapshot!(*name, trace(script));
    }
}

#[test]
fn errors_name_the_line_and_the_cause() {
    let cases = [
        "frobnicate 3",
        "sym n 1..=4\nbind n=9",
        "sym n 1..=4096\nassume n % 8 == 0\nbind n=12",
        "sym n 1..=4096\neval n + 1",
        "sym n 1..=4\nbind n=2\neval n // (n - 2)",
        "sym n\nbind n=4611686018427387904\neval 2*n",
        "sym n 0..=10\nsolve 2*n == 7",
        "simplify 2 *",
        "simplify q + 1",
        "sym n 1..=4\nsym n 1..=8",
        "sym n 1..=4\nassume n > 4",
        "bind n",
        "prove",
    ];
    assert_snapshot!(trace_cases(&cases, "=> "));
}
