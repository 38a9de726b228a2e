//! The `emit c` statement: snapshots of the unit, its errors, and every stack of the
//! example scripts compiled with `cc -std=c99 -O2 -Wall -Werror` (and
//! `-fsanitize=undefined -fno-sanitize-recover=all` where `cc` links it).

use std::path::Path;
use std::process::Command;

use insta::assert_snapshot;

use crate::trace;

#[test]
fn emit_c_prints_a_materialize_unit() {
    assert_snapshot!(trace(
        "
        sym h 3..=1024
        sym w 3..=1024
        view [h, w]
        pad [(1, 1), (1, 1)]
        emit c
    "
    ));
}

#[test]
fn emit_c_numbers_guards_as_guards_prints_them() {
    assert_snapshot!(trace(
        "
        sym s 1..=4096
        sym p 0..=4096
        view [s, 64]
        shrink [(0, p), (0, 64)]
        guards
        emit c
    "
    ));
}

#[test]
fn emit_c_near_the_i64_limits_widens_what_the_ranges_do_not_bound() {
    // `i0 + n` overflowed at n = 2^63 - 1; the range check of `n` declared `s_n` unused.
    assert_snapshot!(trace(
        "
        sym n -inf..=inf
        view [2] offset n - 9223372036854775807
        emit c
    "
    ));
}

#[test]
fn emit_errors_name_the_statement() {
    assert_snapshot!(trace("emit c"), @"error: line 1: emit: no current view; start with `view [SHAPE]`");
    assert_snapshot!(trace("view [2, 3]\nemit rust"), @"error: line 2: emit: expected `c`, `opencl TYPE` or `cuda TYPE`, found `rust`");
    assert_snapshot!(trace("view [2, 3]\nemit opencl f16"), @"error: line 2: emit opencl: render_opencl: element type f16 is not supported by the OpenCL dialect; use i64, i32, u16, u8, f32 or f64");
    assert_snapshot!(trace("view [2, 3]\nemit opencl bf16"), @"error: line 2: emit opencl: render_opencl: element type bf16 is not supported by the OpenCL dialect; use i64, i32, u16, u8, f32 or f64");
    assert_snapshot!(trace("view [2, 3]\nemit cuda x"), @"error: line 2: emit cuda: elem_type: unknown element type `x`; expected one of i64, i32, u16, u8, f32, f64, f16, bf16");
    assert_snapshot!(trace("view [2, 3]\nemit cuda"), @"error: line 2: emit cuda: expected an element type (i64, i32, u16, u8, f32, f64, f16, bf16) after `cuda`");
    assert_snapshot!(trace("view [2, 3]\nemit opencl f32 f32"), @"error: line 2: emit: expected `c`, `opencl TYPE` or `cuda TYPE`, found `opencl f32 f32`");
    assert_snapshot!(trace("view [2, 3]\nemit c f32"), @"error: line 2: emit: expected `c`, `opencl TYPE` or `cuda TYPE`, found `c f32`");
}

/// A transpose of symbolic extents: 32x32 tiles through local memory, 32-bit indices.
const TRANSPOSE: &str = "
    sym n 1..=4096
    sym m 1..=4096
    view [n, m]
    permute [1, 0]
";

/// A 3-D permute that reverses the axes: tiles over the outer axes, the middle axis's
/// counter along grid x.
const REVERSE3: &str = "
    sym a 1..=1024
    sym b 1..=1024
    sym c 1..=1024
    view [a, b, c]
    permute [2, 1, 0]
";

/// A masked pad: one work-item per element, the bounds tested before the read.
const PAD: &str = "
    sym h 3..=4094
    sym w 3..=4094
    view [h, w]
    pad [(1, 1), (1, 1)]
";

/// The merge of attention heads, a stack of two views: 4-wide loads and stores.
const MERGE_HEADS: &str = "
    sym b 1..=64
    sym s 1..=512
    view [b, 12, s, 64]
    permute [0, 2, 1, 3]
    reshape [b, s, 768]
";

/// One test per kernel script and `emit` target: the trace of the script, then
/// `emit TARGET`, snapshotted under the test's name.
macro_rules! emit_kernel_tests {
    ($($name:ident: $script:ident, $target:literal;)*) => {$(
        #[test]
        fn $name() {
            assert_snapshot!(trace(&format!("{}emit {}", $script, $target)));
        }
    )*};
}

emit_kernel_tests! {
    emit_opencl_f32_tiles_a_transpose: TRANSPOSE, "opencl f32";
    emit_cuda_f32_tiles_a_transpose: TRANSPOSE, "cuda f32";
    emit_opencl_f32_tiles_a_reversing_permute: REVERSE3, "opencl f32";
    emit_cuda_f32_tiles_a_reversing_permute: REVERSE3, "cuda f32";
    emit_opencl_f32_masks_a_pad: PAD, "opencl f32";
    emit_cuda_f16_masks_a_pad: PAD, "cuda f16";
    emit_opencl_f32_vectorises_the_merge_of_heads: MERGE_HEADS, "opencl f32";
    emit_cuda_f32_vectorises_the_merge_of_heads: MERGE_HEADS, "cuda f32";
    emit_cuda_f16_vectorises_the_merge_of_heads: MERGE_HEADS, "cuda f16";
}

/// Statements that replace or change the current stack.
const STACK_STATEMENTS: &[&str] = &[
    "view", "reshape", "expand", "permute", "shrink", "pad", "flip", "slice", "unfold", "diagonal",
];

/// The flags that make undefined behaviour abort, where `cc` builds and links a program
/// with them (in `dir`); otherwise none, saying so.
fn ubsan_flags(dir: &Path) -> &'static [&'static str] {
    const UBSAN: &[&str] = &["-fsanitize=undefined", "-fno-sanitize-recover=all"];
    let main = dir.join("ubsan.c");
    let linked = std::fs::write(&main, "int main(void) { return 0; }\n").is_ok()
        && Command::new("cc")
            .args(UBSAN)
            .arg(&main)
            .arg("-o")
            .arg(dir.join("ubsan"))
            .output()
            .is_ok_and(|o| o.status.success());
    if linked {
        UBSAN
    } else {
        eprintln!("compiling without -fsanitize=undefined: `cc` cannot link it");
        &[]
    }
}

#[test]
fn every_stack_of_the_example_scripts_compiles_without_warnings() {
    if Command::new("cc").arg("--version").output().is_err() {
        eprintln!("skipping: no C compiler (`cc`) found on PATH");
        return;
    }
    let paths = crate::example_scripts();
    let tmp = std::env::temp_dir().join(format!("shapetrace-emit-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("a temporary folder");
    let ubsan = ubsan_flags(&tmp);
    let mut compiled = 0;
    for path in paths {
        let script = std::fs::read_to_string(&path).expect("a readable script");
        let mut session = shapetrace::Session::new();
        for (k, line) in script.lines().enumerate() {
            session.exec(line).expect("the example runs");
            let kw = line.split_whitespace().next().unwrap_or("");
            if !STACK_STATEMENTS.contains(&kw) {
                continue;
            }
            let unit = session.exec("emit c").expect("emit c succeeds").join("\n");
            let file = tmp.join(format!("unit{compiled}.c"));
            std::fs::write(&file, &unit).expect("a writable file");
            let out = Command::new("cc")
                .args(["-std=c99", "-O2", "-Wall", "-Werror", "-c"])
                .args(ubsan)
                .arg(&file)
                .arg("-o")
                .arg(tmp.join(format!("unit{compiled}.o")))
                .output()
                .expect("cc runs");
            assert!(
                out.status.success(),
                "{} line {}: cc fails:\n{}\n{unit}",
                path.display(),
                k + 1,
                String::from_utf8_lossy(&out.stderr)
            );
            compiled += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(compiled > 20, "only {compiled} stacks compiled");
}
