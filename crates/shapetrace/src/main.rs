//! The `shapetrace` command: runs a trace script from a file or standard input.

#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::process::ExitCode;

use shapetrace::{run_json, Session, HELP};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (json, echo, path) = match args.as_slice() {
        [flag] if flag == "--help" || flag == "-h" => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
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
