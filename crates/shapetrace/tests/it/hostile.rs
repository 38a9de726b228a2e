//! Hostile input through the runner: no statement panics on any argument, bytes that are
//! not a script are a line error, and every known bad input gets a clear error or the right
//! answer (snapshotted).

use insta::assert_snapshot;
use proptest::prelude::*;

use crate::trace_cases;

/// A session with symbols, facts and a current view, so that every statement has
/// something to act on.
const SETUP: &str = "sym n 0..=8\nsym m 1..=4\nassume n <= 2*m\nview [n, m, 3]\n";

/// The characters statements are made of, to reach past the first syntax check.
const SYNTAX: &str = "[](),:=+-*/%<>!. 0123456789nmqi_abcdefxyz\u{e9}\u{feff}\0\t";

fn syntax_text() -> impl Strategy<Value = String> {
    let chars: Vec<char> = SYNTAX.chars().collect();
    prop::collection::vec(prop::sample::select(chars), 0..40)
        .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #[test]
    fn every_statement_survives_any_arguments(
        kw in prop::sample::select(shapetrace::STATEMENTS),
        arg in prop_oneof![any::<String>(), syntax_text()],
    ) {
        // A panic fails the test; any answer or error is fine.
        let _ = shapetrace::run(&format!("{SETUP}{kw} {arg}\n{kw} {arg}\n"));
    }

    #[test]
    fn arbitrary_lines_never_panic(lines in prop::collection::vec(syntax_text(), 1..6)) {
        let _ = shapetrace::run(&format!("{SETUP}{}", lines.join("\n")));
    }

    #[test]
    fn arbitrary_bytes_are_a_script_or_a_line_error(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        match shapetrace::script_text(bytes) {
            Ok(text) => {
                let _ = shapetrace::run(&text);
            }
            Err(e) => prop_assert!(e.line >= 1 && e.message.contains("UTF-8"), "{e}"),
        }
    }
}

#[test]
fn known_bad_inputs_get_clear_answers() {
    let cases = [
        // Non-ASCII where a keyword is searched for.
        "view é",
        "view [2] unfold é",
        "view [3, 3]\ndiagonal é",
        // Huge views through the statements that allocate: errors, not aborts.
        "view [1099511627776] strides [0]\nvalues",
        "view [1099511627776] strides [0]\nbench f32",
        "view [1099511627776] strides [0]\noffsets",
        "view [2] strides [1000000000000]\nvalues",
        // A plan's memory follows the top's elements, not the level below.
        "view [3, 1099511627776] strides [1, 0]\nreshape [3298534883328]\nshrink [(1099511627774, 1099511627778)]\nvalues",
        // Contradictory facts and empty ranges are refused where they are stated.
        "sym n 0..=100\nsym m 0..=100\nassume n + m == 7\nassume n - m == 2",
        "sym n 0..=100\nsym m 0..=100\nassume n <= m\nassume m + 1 <= n",
        "sym n 0..=3\nassume n % 8 == 5",
        "sym m 0..=10\nsym n m+1..=m",
        "sym n 0..=100\nsym m 0..=100\nassume n + m == 7\nassume n - m == 1\nrange n\nprove n == 4",
        // NumPy's huge steps: one element, no overflow.
        "view [2, 3, 4]\nslice [::100000000000000000000]\noffsets",
        "view [2, 3, 4]\nslice [:, ::-9223372036854775807]\noffsets",
        // Loop indices never take a declared name.
        "sym i0 0..=3\nsym i1 0..=3\nview [4, 4] offset 3*i0 + i1\nlower",
        // A guard broken by values bound earlier fails on the line of its op.
        "sym n 1..=10\nbind n=3\nview [n]\nshrink [(0, 5)]\nshow",
        // Messages that say what the user did.
        "view [2] offset -1\nvalues",
        "sym n 1..=100\nview [2*n]\ninfer [7]",
        "sym n 1..=8\nview [n, n +]",
    ];
    assert_snapshot!(trace_cases(&cases, "=> "));
}

#[test]
fn invisible_characters_are_skipped_or_escaped() {
    assert_eq!(
        crate::trace("\u{feff}sym n 1..=8\nrange n").trim_end(),
        "[1, 8]"
    );
    assert_eq!(
        crate::trace("sym n 1..=8\nvi\0ew [2]").trim_end(),
        "error: line 2: unknown statement `vi\\u{0}ew`; run `shapetrace --help` for the list"
    );
}

#[test]
fn bytes_that_are_not_utf8_name_their_line() {
    let err = shapetrace::script_text(b"sym n 1..=8\nview [\xff]\n".to_vec()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "error: line 2: byte 7 of the line is not valid UTF-8; save the script as UTF-8"
    );
    assert_eq!(
        shapetrace::script_text(b"\xef\xbb\xbfrange 1".to_vec()).unwrap(),
        "range 1"
    );
}
