//! The interactive prompt: one statement a line, on one session that outlives its errors.
//!
//! [`Prompt`] is the part that does not need a terminal: it takes a line and says what
//! to print. The `shapetrace` command drives it with a line editor (history, line
//! editing) when standard input is a terminal.

use crate::Session;

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
