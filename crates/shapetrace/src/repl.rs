//! The interactive prompt: one statement a line, on one session that outlives its errors.
//!
//! [`Prompt`] is the part that does not need a terminal: it takes a line and says what
//! to print. The `shapetrace` command drives it with a line editor (history, line
//! editing) when standard input is a terminal.

use std::io::Read as _;
use std::path::Path;

use crate::Session;

/// The most entries the prompt's history keeps; older ones are dropped when it is saved.
pub const HISTORY_ENTRIES: usize = 10_000;

/// The largest history file the prompt reads, in bytes (16 MiB).
pub const HISTORY_MAX_BYTES: u64 = 16 << 20;

/// The entries of the history file at `path`, oldest first, at most the last
/// [`HISTORY_ENTRIES`]; none when there is no file. The file is the line editor's: one
/// entry a line, and after a first line `#V2`, `\n` and `\\` stand for a line feed and
/// a backslash.
///
/// # Errors
/// Why the file cannot be read as history: it cannot be opened, is not a regular file,
/// is larger than [`HISTORY_MAX_BYTES`], or is not text (not UTF-8, or holds NUL bytes).
/// The prompt then starts without a history and leaves the file as it is.
pub fn read_history(path: &Path) -> Result<Vec<String>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot open it: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".to_string());
    }
    let mut bytes = Vec::new();
    file.take(HISTORY_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > HISTORY_MAX_BYTES {
        return Err(format!("it is larger than {HISTORY_MAX_BYTES} bytes"));
    }
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
    if text.contains('\0') {
        return Err("it holds NUL bytes, so it is not text".to_string());
    }
    let mut lines = text.lines().peekable();
    let v2 = lines.next_if_eq(&"#V2").is_some();
    let mut entries: Vec<String> = lines
        .filter(|l| !l.is_empty())
        .map(|l| if v2 { unescape(l) } else { l.to_string() })
        .collect();
    let drop = entries.len().saturating_sub(HISTORY_ENTRIES);
    entries.drain(..drop);
    Ok(entries)
}

/// A `#V2` history line with `\n` and `\\` replaced; other escapes stay as they are.
fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// What the prompt does with one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Print these lines (to standard output) and ask for the next line.
    Print(Vec<String>),
    /// Print this message (to standard error) and ask for the next line: the session
    /// is as it was before the line.
    Error(String),
    /// End the session.
    Quit,
}

/// Help for the prompt's own commands; `help statements` prints the language.
pub const PROMPT_HELP: &str = "\
Type a statement of the trace language, one a line; its output is printed at once.
An error is printed and leaves the session as it was before that line.
  help statements   every statement of the language
  reset             forget every symbol, fact, binding and view
  quit, exit        end the session (so does end of input, Ctrl-D)";

/// An interactive session: a [`Session`] and the prompt's own commands.
#[derive(Default)]
pub struct Prompt {
    session: Session,
}

impl Prompt {
    /// A prompt over an empty session.
    #[must_use]
    pub fn new() -> Prompt {
        Prompt::default()
    }

    /// What to do with `line`. A statement that fails changes nothing: every statement
    /// either completes or leaves the session untouched.
    pub fn respond(&mut self, line: &str) -> Reply {
        match line.trim() {
            "quit" | "exit" => Reply::Quit,
            "help" => Reply::Print(lines(PROMPT_HELP)),
            "help statements" => Reply::Print(lines(crate::HELP)),
            "reset" => {
                self.session = Session::new();
                Reply::Print(Vec::new())
            }
            _ => match self.session.exec(line) {
                Ok(out) => Reply::Print(out),
                Err(message) => Reply::Error(format!("error: {message}")),
            },
        }
    }
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}
