//! The interactive prompt: errors do not end the session, a failing statement changes
//! nothing, and the command reads statements from a pipe with `--interactive`.

use insta::assert_snapshot;
use shapetrace::{Prompt, Reply};

use crate::cli::shapetrace_with;

/// Feeds `lines` to a new prompt and renders every reply: printed lines as they are,
/// errors after `!`, and `quit` as `(quit)`.
fn session(lines: &[&str]) -> String {
    let mut prompt = Prompt::new();
    let mut out = String::new();
    for line in lines {
        out.push_str(&format!("> {line}\n"));
        match prompt.respond(line) {
            Reply::Print(printed) => printed.iter().for_each(|l| out.push_str(&format!("{l}\n"))),
            Reply::Error(message) => out.push_str(&format!("! {message}\n")),
            Reply::Quit => out.push_str("(quit)\n"),
        }
    }
    out
}

#[test]
fn an_error_leaves_the_session_going() {
    assert_snapshot!(session(&[
        "sym n 1..=8",
        "view [n, 4]",
        "permute [2, 0]",
        "permute [1, 0]",
        "show",
        "reshape [3, n]",
        "show",
        "quit",
    ]));
}

#[test]
fn a_refused_fact_or_binding_changes_nothing() {
    // The fact contradicts the binding: refused, and `n == 3` stays unprovable.
    let out = session(&[
        "sym n 1..=8",
        "bind n=5",
        "assume n == 3",
        "prove n == 3",
        "eval n",
        "bind n=9",
        "eval n",
    ]);
    assert_snapshot!(out);
    assert!(out.contains("> prove n == 3\nunknown\n"), "{out}");
    assert!(out.ends_with("> eval n\n5\n"), "{out}");
}

#[test]
fn help_and_reset() {
    let mut prompt = Prompt::new();
    let Reply::Print(help) = prompt.respond("help") else {
        panic!("help prints");
    };
    assert!(help.iter().any(|l| l.contains("quit")), "{help:?}");
    let Reply::Print(statements) = prompt.respond("help statements") else {
        panic!("help statements prints");
    };
    assert!(statements.iter().any(|l| l.contains("sym NAME")));
    assert_eq!(prompt.respond("sym n 1..=8"), Reply::Print(vec![]));
    assert_eq!(prompt.respond("reset"), Reply::Print(vec![]));
    // After a reset `n` is unknown again.
    assert!(matches!(prompt.respond("range n"), Reply::Error(_)));
    assert_eq!(prompt.respond("  exit "), Reply::Quit);
}

#[test]
fn the_command_reads_a_pipe_with_interactive() {
    let dir = std::env::temp_dir().join(format!("shapetrace-prompt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let history = dir.join("history");
    let (out, err, code) = shapetrace_with(
        &["--interactive"],
        "sym n 1..=8\nrange 2*n\nrange 2*m\nrange n + 1\nquit\nrange n\n",
        &[("SHAPETRACE_HISTORY", &history)],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[2, 16]\n[2, 9]\n");
    assert_snapshot!(err);
    let saved = std::fs::read_to_string(&history).expect("the history is saved");
    assert!(saved.contains("range 2*m"), "{saved}");
    let _ = std::fs::remove_dir_all(&dir);
}
