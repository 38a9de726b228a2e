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

/// A fresh temporary folder for one test.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("shapetrace-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

#[test]
fn a_history_that_is_not_history_is_skipped_and_left_as_it_is() {
    let dir = temp_dir("bad-history");
    let binary = dir.join("binary");
    std::fs::write(&binary, b"range 2\n\0\xff\n").expect("written");
    let folder = dir.join("folder");
    std::fs::create_dir_all(&folder).expect("a folder");
    let mut paths = vec![binary.clone(), folder];
    // A device reads as an endless file: it aborted the prompt on an allocation.
    if std::path::Path::new("/dev/zero").exists() {
        paths.push("/dev/zero".into());
    }
    for path in &paths {
        let (out, err, code) = shapetrace_with(
            &["--interactive"],
            "range 1 + 1\nquit\n",
            &[("SHAPETRACE_HISTORY", path.as_path())],
        );
        assert_eq!((code, out.as_str()), (0, "[2, 2]\n"), "{path:?}: {err}");
        let err = err.replace(&path.display().to_string(), "PATH");
        assert!(
            err.starts_with("shapetrace: history `PATH` skipped (")
                && err.ends_with("); it is left as it is\n"),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read(&binary).expect("still there"),
        b"range 2\n\0\xff\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_long_history_is_kept_whole() {
    // 5,000 entries were cut to the line editor's default of 100 on exit.
    let dir = temp_dir("long-history");
    let history = dir.join("history");
    let old: String = (0..5000).map(|k| format!("range {k}\n")).collect();
    std::fs::write(&history, &old).expect("written");
    let (_, err, code) = shapetrace_with(
        &["--interactive"],
        "range 5000\nquit\n",
        &[("SHAPETRACE_HISTORY", &history)],
    );
    assert_eq!(code, 0, "{err}");
    let saved = shapetrace::read_history(&history).expect("history");
    assert_eq!(saved.len(), 5002);
    assert_eq!(saved[0], "range 0");
    assert_eq!(saved[4999..], ["range 4999", "range 5000", "quit"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn history_files_are_read_with_a_bound() {
    let dir = temp_dir("read-history");
    let path = dir.join("history");
    assert_eq!(shapetrace::read_history(&path), Ok(Vec::new()));
    std::fs::write(&path, "#V2\nview [2]\\nshow\nrange \\\\\n\nx\\q\n").expect("written");
    assert_eq!(
        shapetrace::read_history(&path),
        Ok(vec![
            "view [2]\nshow".to_string(),
            "range \\".to_string(),
            "x\\q".to_string()
        ])
    );
    let many: String = (0..shapetrace::HISTORY_ENTRIES + 5)
        .map(|k| format!("{k}\n"))
        .collect();
    std::fs::write(&path, many).expect("written");
    let kept = shapetrace::read_history(&path).expect("history");
    assert_eq!(kept.len(), shapetrace::HISTORY_ENTRIES);
    assert_eq!(kept[0], "5");
    let big = usize::try_from(shapetrace::HISTORY_MAX_BYTES).expect("small") + 1;
    std::fs::write(&path, vec![b'a'; big]).expect("written");
    assert_snapshot!(shapetrace::read_history(&path).expect_err("too large"), @"it is larger than 16777216 bytes");
    std::fs::write(&path, b"\xff\n").expect("written");
    assert_snapshot!(shapetrace::read_history(&path).expect_err("not text"), @"it is not UTF-8 text");
    let _ = std::fs::remove_dir_all(&dir);
}
