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

/// `count` copies of `item`, comma-separated.
fn list_of(item: &str, count: usize) -> String {
    vec![item; count].join(", ")
}

/// A script declaring `s0..s{rank-1}` in `1..=4` and a row-major view of them.
fn symbolic_view(rank: usize) -> String {
    let mut s: String = (0..rank).map(|k| format!("sym s{k} 1..=4\n")).collect();
    let shape: Vec<String> = (0..rank).map(|k| format!("s{k}")).collect();
    s.push_str(&format!("view [{}]\n", shape.join(", ")));
    s
}

#[test]
fn ranks_past_the_limit_are_refused_where_they_arise() {
    // Huge argument lists are refused before any work proportional to them is done.
    let cases = [
        format!("view [2]\nbroadcast_to [{}, 2]", list_of("1", 99_999)),
        format!("view [2]\nslice [{}]", list_of("None", 100_000)),
        format!("view [{}]", list_of("2", 40_000)),
        format!(
            "view [{}]\nsliding_window_view [{}]",
            list_of("2", 33),
            list_of("1", 33)
        ),
        format!("view [2]\n{}", "unsqueeze 0\n".repeat(60_000)),
        symbolic_view(65),
    ];
    let runs: Vec<String> = cases
        .iter()
        .map(|c| crate::trace(c).trim_end().to_owned())
        .collect();
    assert_snapshot!(runs.join("\n"), @r"
    error: line 2: broadcast_to: limit: the result on view [2] with strides [1] would have 100000 axes, more than the limit of 64
    error: line 2: index: limit: the result on view [2] with strides [1] would have 100001 axes, more than the limit of 64
    error: line 1: create: limit: the view would have 40000 axes, more than the limit of 64
    error: line 2: sliding_window_view: limit: the result on view [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2] with strides [4294967296, 2147483648, 1073741824, 536870912, 268435456, 134217728, 67108864, 33554432, 16777216, 8388608, 4194304, 2097152, 1048576, 524288, 262144, 131072, 65536, 32768, 16384, 8192, 4096, 2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1] would have 66 axes, more than the limit of 64
    error: line 65: unsqueeze: limit: the result on view [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2] with strides [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] would have 65 axes, more than the limit of 64
    error: line 66: create: limit: the view would have 65 axes, more than the limit of 64
    ");
}

#[test]
fn symbolic_views_at_the_rank_limit_complete() {
    let rank = 64;
    let view = symbolic_view(rank);
    let all: Vec<String> = (0..rank).map(|k| format!("s{k}")).collect();
    // The copy of a transpose, read through the transpose at the copy's own indices.
    let out = crate::trace(&format!("{view}T\ncopy\nlower\nemit c\n"));
    assert!(!out.contains("error"), "{out}");
    let offset = out.lines().next().unwrap_or_default();
    assert!(
        offset.starts_with("offset: ") && !offset.contains("//"),
        "{offset}"
    );
    let out = crate::trace(&format!(
        "{view}as_strided [{}] strides [{}] offset 0\nshow\n",
        all.join(", "),
        list_of("1", rank)
    ));
    assert!(out.starts_with("view shape=[s0, s1, "), "{out}");
    // A condition as long as the rank is quoted abbreviated.
    let out = crate::trace(&format!("{view}flags\n"));
    assert!(out.len() < 1000, "{out}");
    assert_snapshot!(out.trim_end(), @"error: line 66: flags: the flags of view shape=[s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11 ... 63, s63, 1] offset=0 mask=none (8434 characters) depend on the values of its symbols (it is F-contiguous exactly when (s0*s1*s10*s11*s12*s13*s14*s15*s16*s17*s18*s19*s2*s20*s21*s2 ... s4*s5*s6*s7*s8*s9 or s31 == 1) (16831 characters)); bind them, or assume facts that decide it");
}

#[test]
fn shares_memory_gives_up_past_its_default_work_bound() {
    // 16 axes of size 2 with unrelated large strides, read at offsets 0 and 1: a subset
    // sum that the exact search needs more than the default bound for.
    let strides = "21633630587957749, 30030548117318367, 3399564384451524, 5374366687441980, 28542460696515963, 18140328881150115, 14802981246389275, 8690319955183126, 18702787680874124, 33311036325087144, 15170244690883506, 23011161025401478, 28765666998012293, 26195920375383462, 10721468644386093, 30014742096959742";
    let shape = list_of("2", 16);
    let script = format!(
        "view [316507228393395943]\nsave base\nas_strided [{shape}] strides [{strides}] offset 0\nsave a\nload base\nas_strided [{shape}] strides [{strides}] offset 1\nshares_memory a\nshares_memory a max_work 524288\n"
    );
    assert_snapshot!(crate::trace(&script), @r"
    shares_memory: too hard
    shares_memory: no
    ");
}
