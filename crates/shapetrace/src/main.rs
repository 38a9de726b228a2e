//! The `shapetrace` command: runs a trace script from a file or standard input, or
//! opens an interactive prompt.

#![forbid(unsafe_code)]

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use rustyline::error::ReadlineError;
use shapetrace::{read_history, run_json, Prompt, Reply, Session, HELP, HISTORY_ENTRIES};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (json, echo, path) = match args.as_slice() {
        [flag] if flag == "--help" || flag == "-h" => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        [] if std::io::stdin().is_terminal() => return interactive(),
        [flag] if flag == "--interactive" || flag == "-i" => return interactive(),
        [flag, path] if flag == "--json" => (true, false, path.clone()),
        [flag, path] if flag == "--echo" => (false, true, path.clone()),
        [path] if !path.starts_with("--") => (false, false, path.clone()),
        _ => {
            eprint!("{HELP}");
            return ExitCode::from(2);
        }
    };
    let script = match read_script(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut write_failed = false;
    if json {
        let ok = run_json(&script, &mut |line| {
            write_failed |= writeln!(out, "{line}").is_err();
        });
        let _ = out.flush();
        return if ok && !write_failed {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let mut print = |line: &str| {
        write_failed |= writeln!(out, "{line}").is_err();
    };
    let mut session = Session::new();
    let res = if echo {
        session.run_echo(&script, &mut print)
    } else {
        session.run(&script, &mut print)
    };
    let _ = out.flush();
    match res {
        Ok(()) if !write_failed => ExitCode::SUCCESS,
        Ok(()) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// The script's text; bytes that are not UTF-8 are an error naming their line.
fn read_script(path: &str) -> Result<String, String> {
    let bytes = if path == "-" {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).map(|_| b)
    } else {
        std::fs::read(path)
    }
    .map_err(|e| format!("error: cannot read `{path}`: {e}"))?;
    shapetrace::script_text(bytes).map_err(|e| e.to_string())
}

/// The interactive prompt, with line editing and history; ends at `quit`, `exit` or the
/// end of input.
fn interactive() -> ExitCode {
    let config = rustyline::Config::builder()
        .max_history_size(HISTORY_ENTRIES)
        .map(rustyline::config::Builder::build);
    let mut editor = match config.and_then(rustyline::DefaultEditor::with_config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the prompt: {e}");
            return ExitCode::FAILURE;
        }
    };
    let history = std::env::var_os("SHAPETRACE_HISTORY")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".shapetrace_history"))
        });
    // A history that cannot be read as one is skipped and never rewritten.
    let history = history.filter(|h| match read_history(h) {
        Ok(entries) => {
            for e in entries {
                let _ = editor.add_history_entry(e);
            }
            true
        }
        Err(reason) => {
            eprintln!(
                "shapetrace: history `{}` skipped ({reason}); it is left as it is",
                h.display()
            );
            false
        }
    });
    let terminal = std::io::stdin().is_terminal();
    if terminal {
        println!("shapetrace: one statement a line; `help` for help, `quit` or Ctrl-D to end");
    }
    let mut prompt = Prompt::new();
    let mut status = ExitCode::SUCCESS;
    loop {
        let line = match editor.readline("> ") {
            Ok(line) => line,
            // Ctrl-C abandons the line being typed, as in a shell.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: cannot read a line: {e}");
                status = ExitCode::FAILURE;
                break;
            }
        };
        if !line.trim().is_empty() {
            let _ = editor.add_history_entry(line.as_str());
        }
        match prompt.respond(&line) {
            Reply::Print(lines) => {
                for l in lines {
                    println!("{l}");
                }
            }
            Reply::Error(message) => eprintln!("{message}"),
            Reply::Quit => break,
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    status
}
