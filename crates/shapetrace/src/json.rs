//! `--json` output: one JSON object per statement, for tools that drive the runner.
//!
//! Each object is `{"line":N,"statement":"KEYWORD","output":["..."]}`, or, for the statement
//! that failed, `{"line":N,"statement":"KEYWORD","error":"MESSAGE"}`. Comment and blank lines
//! produce nothing. Hand-written to keep the runner free of a serialisation dependency for
//! two fixed object shapes.

use std::fmt::Write;

use crate::session::Session;
use crate::syntax::{split_keyword, strip_comment};

/// Runs `script`, handing one JSON object per statement to `out`; returns whether every
/// statement succeeded.
pub fn run_json(script: &str, out: &mut dyn FnMut(&str)) -> bool {
    let mut session = Session::new();
    for (k, line) in script.lines().enumerate() {
        let stmt = strip_comment(line);
        if stmt.is_empty() {
            continue;
        }
        let (kw, _) = split_keyword(stmt);
        let mut obj = format!("{{\"line\":{},\"statement\":", k + 1);
        push_str(&mut obj, kw);
        let res = session.exec(line);
        match &res {
            Ok(lines) => {
                obj.push_str(",\"output\":[");
                for (i, l) in lines.iter().enumerate() {
                    if i > 0 {
                        obj.push(',');
                    }
                    push_str(&mut obj, l);
                }
                obj.push_str("]}");
            }
            Err(msg) => {
                obj.push_str(",\"error\":");
                push_str(&mut obj, msg);
                obj.push('}');
            }
        }
        out(&obj);
        if res.is_err() {
            return false;
        }
    }
    true
}

/// Appends `s` as a JSON string literal.
fn push_str(buf: &mut String, s: &str) {
    buf.push('"');
    for c in s.chars() {
        match c {
            '"' => buf.push_str("\\\""),
            '\\' => buf.push_str("\\\\"),
            '\n' => buf.push_str("\\n"),
            '\r' => buf.push_str("\\r"),
            '\t' => buf.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(buf, "\\u{:04x}", c as u32);
            }
            c => buf.push(c),
        }
    }
    buf.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(script: &str) -> (Vec<String>, bool) {
        let mut lines = Vec::new();
        let ok = run_json(script, &mut |l| lines.push(l.to_owned()));
        (lines, ok)
    }

    #[test]
    fn one_object_per_statement_and_errors_stop() {
        let (lines, ok) = json("# c\nsym n 1..=4\n\nrange n\nbind n=\"9\"\nrange n\n");
        assert!(!ok);
        assert_eq!(
            lines,
            [
                r#"{"line":2,"statement":"sym","output":[]}"#,
                r#"{"line":4,"statement":"range","output":["[1, 4]"]}"#,
                r#"{"line":5,"statement":"bind","error":"bind: `\"9\"` is not an integer (in `n=\"9\"`)"}"#,
            ]
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        let mut s = String::new();
        push_str(&mut s, "a\tb\u{1}\\");
        assert_eq!(s, r#""a\tb\u0001\\""#);
    }
}
