//! The command-line behaviour: files, standard input, exit status and stderr.

use std::io::Write;

use insta::assert_snapshot;
use std::process::{Command, Stdio};

fn shapetrace(args: &[&str], stdin: &str) -> (String, String, i32) {
    shapetrace_with(args, stdin, &[])
}

/// Runs the command with `args` and environment variables `env` on `stdin`: its
/// standard output, standard error and exit status.
pub(crate) fn shapetrace_with(
    args: &[&str],
    stdin: &str,
    env: &[(&str, &std::path::Path)],
) -> (String, String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shapetrace"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the shapetrace binary starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin accepts the script");
    let out = child.wait_with_output().expect("shapetrace finishes");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn stdin_script_prints_lines_and_exits_zero() {
    let (out, err, code) = shapetrace(&["-"], "sym n 1..=8 # a size\n\nsimplify n*2 - n\n");
    assert_eq!((out.as_str(), err.as_str(), code), ("n\n", "", 0));
}

#[test]
fn failing_statement_stops_with_status_one() {
    let (out, err, code) = shapetrace(&["-"], "sym n 1..=8\nrange n\nbind n=9\nrange n\n");
    assert_eq!(out, "[1, 8]\n");
    assert_eq!(
        err,
        "error: line 3: bind: n = 9 is outside its range 1..=8\n"
    );
    assert_eq!(code, 1);
}

#[test]
fn missing_file_is_an_error_not_a_panic() {
    let (_, err, code) = shapetrace(&["/nonexistent/script.shapes"], "");
    assert!(
        err.starts_with("error: cannot read `/nonexistent/script.shapes`"),
        "{err}"
    );
    assert_eq!(code, 1);
}

#[test]
fn help_lists_every_statement() {
    let (out, _, code) = shapetrace(&["--help"], "");
    assert_eq!(code, 0);
    for stmt in shapetrace::STATEMENTS {
        assert!(
            out.contains(&format!("\n  {stmt} ")),
            "--help misses `{stmt}`"
        );
    }
}

#[test]
fn json_mode_prints_one_object_per_statement() {
    let (out, err, code) = shapetrace(&["--json", "-"], "sym n 1..=8\nrange n + 1\neval n\n");
    assert_eq!(
        out,
        "{\"line\":1,\"statement\":\"sym\",\"output\":[]}\n\
         {\"line\":2,\"statement\":\"range\",\"output\":[\"[2, 9]\"]}\n\
         {\"line\":3,\"statement\":\"eval\",\"error\":\"eval: symbol `n` is unbound\"}\n"
    );
    assert_eq!((err.as_str(), code), ("", 1));
}

#[test]
fn echo_prints_each_statement_before_its_output() {
    let script = "# a tour\nsym n 1..=8\n\nrange n + 1\nview [2, 3]\nT\nshow\nbind n=9\nrange n\n";
    let (out, err, code) = shapetrace(&["--echo", "-"], script);
    assert_snapshot!(out, @"
    # a tour
    > sym n 1..=8

    > range n + 1
    [2, 9]
    > view [2, 3]
    > T
    > show
    view shape=[3, 2] strides=[1, 3] offset=0 mask=none
    > bind n=9
    ");
    assert_eq!(
        err,
        "error: line 8: bind: n = 9 is outside its range 1..=8\n"
    );
    assert_eq!(code, 1);
}
