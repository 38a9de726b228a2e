//! The trace runner on arbitrary bytes, after a few lines that give every statement a
//! scope and a current view: any output or error is fine, a panic or a hang is a bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

const SETUP: &str = "sym n 0..=8\nsym m 1..=4\nview [n, m, 3]\n";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = shapetrace::script_text(data.to_vec()) else {
        return;
    };
    let _ = shapetrace::run(&format!("{SETUP}{text}"));
});
