//! Snapshot tests of traces: op chains on a view stack, printed with `show` and `offsets`.

use symshape::Scope;
use symshape_view::{parse_index, View, ViewOps, ViewStack};

fn list(text: &str) -> Vec<i64> {
    let t = text.trim().trim_start_matches('[').trim_end_matches(']');
    t.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("integer"))
        .collect()
}

fn pairs(text: &str) -> Vec<(i64, i64)> {
    let nums: Vec<i64> = text
        .split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("integer"))
        .collect();
    nums.chunks(2).map(|c| (c[0], c[1])).collect()
}

/// Splits `view [4, 6] strides [6, 1] offset 3 mask [(0, 4)]` into its parts.
fn view_statement(rest: &str) -> Result<View, symshape_view::Error> {
    let mut shape = rest;
    let mut strides = None;
    let mut offset = 0;
    let mut mask = None;
    for key in ["mask", "offset", "strides"] {
        if let Some(at) = shape.find(key) {
            let value = &shape[at + key.len()..];
            match key {
                "mask" => mask = Some(pairs(value)),
                "offset" => offset = value.trim().parse().expect("offset"),
                _ => strides = Some(list(value)),
            }
            shape = &shape[..at];
        }
    }
    View::create(
        &Scope::new(),
        &list(shape),
        strides.as_deref(),
        offset,
        mask.as_deref(),
    )
}

/// Parses `[a, b, ...]` as a list of axes.
fn axes(text: &str) -> Vec<usize> {
    list(text).iter().map(|&a| a as usize).collect()
}

/// Runs a trace; each `show`/`offsets` prints its lines, an error prints `error: ...` and stops.
fn run(trace: &str) -> String {
    let mut out = Vec::new();
    let mut stack: Option<ViewStack> = None;
    let cx = Scope::new();
    for line in trace.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (cmd, rest) = line.split_once(' ').unwrap_or((line, ""));
        let res = (|| -> Result<(), symshape_view::Error> {
            if cmd == "view" {
                stack = Some(ViewStack::new(view_statement(rest)?));
                return Ok(());
            }
            let s = stack.as_ref().expect("a view statement first");
            let next = match cmd {
                "reshape" => s.reshape(&cx, &list(rest))?,
                "expand" => s.expand(&cx, &list(rest))?,
                "permute" => s.permute(&cx, &axes(rest))?,
                "shrink" => s.shrink(&cx, &pairs(rest))?,
                "pad" => s.pad(&cx, &pairs(rest))?,
                "flip" => s.flip(&cx, &axes(rest))?,
                "slice" => s.index(&cx, &parse_index(rest)?)?,
                "show" => {
                    out.push(s.to_string());
                    return Ok(());
                }
                "offsets" => {
                    out.push(s.to_concrete("offsets")?.offsets_line()?);
                    return Ok(());
                }
                other => panic!("unknown statement {other}"),
            };
            stack = Some(next);
            Ok(())
        })();
        if let Err(e) = res {
            out.push(format!("error: {e}"));
            break;
        }
    }
    out.join("\n")
}

fn check(name: &str, trace: &str) {
    insta::assert_snapshot!(name, run(trace), trace);
}

#[test]
fn contiguous_view() {
    check("contiguous", "view [2, 3, 4]\nshow\noffsets");
}

#[test]
fn issue_example_chain() {
    check(
        "example_chain",
        "view [4, 6] strides [6, 1] offset 3 mask [(0, 4), (1, 5)]
         show
         offsets
         reshape [6, 4]
         show
         offsets
         shrink [(1, 5), (0, 4)]
         show
         reshape [1, 4, 4]
         expand [2, 4, 4]
         permute [1, 0, 2]
         show
         shrink [(0, 2), (1, 2), (0, 4)]
         show
         pad [(0, 1), (2, 0), (0, 0)]
         flip [0, 2]
         show
         offsets",
    );
}

#[test]
fn transpose_then_flatten_stacks_a_view() {
    check(
        "transpose_flatten",
        "view [3, 2]
         permute [1, 0]
         reshape [6]
         show
         offsets
         shrink [(0, 3)]
         show
         offsets",
    );
}

#[test]
fn padded_reshape_stays_one_view() {
    check(
        "padded_reshape",
        "view [2, 3]
         pad [(0, 0), (0, 1)]
         reshape [8]
         show
         offsets
         shrink [(0, 3)]
         show
         reshape [3, 1]
         show
         offsets",
    );
}

#[test]
fn pad_reshape_shrink_merges_back() {
    // The middle state needs two views; shrinking the padding away makes it one again.
    check(
        "pad_reshape_shrink",
        "view [3]
         pad [(1, 0)]
         reshape [2, 2]
         show
         offsets
         shrink [(1, 2), (0, 2)]
         show
         offsets",
    );
}

#[test]
fn masked_reshape_that_needs_a_stack() {
    check(
        "masked_reshape_stack",
        "view [2, 2]
         pad [(0, 0), (1, 0)]
         reshape [6]
         show
         offsets
         reshape [3, 2]
         show
         offsets",
    );
}

#[test]
fn numpy_slicing() {
    check(
        "slicing",
        "view [3, 4, 5]
         slice [1, 2:, ::-2, None, ...]
         show
         offsets
         slice [..., 0]
         show
         offsets",
    );
}

#[test]
fn slicing_with_negative_indices_and_clamping() {
    check(
        "slicing_clamp",
        "view [10]
         slice [-3:100]
         offsets
         slice [::-1]
         offsets
         slice [5:-10:-1]
         offsets",
    );
}

#[test]
fn integer_index_into_padding_needs_a_stack() {
    check(
        "index_padding",
        "view [3]
         pad [(1, 0)]
         slice [0]
         show
         offsets",
    );
}

#[test]
fn expand_of_masked_singleton() {
    check(
        "expand_masked_singleton",
        "view [1, 2]
         pad [(1, 0), (0, 0)]
         shrink [(0, 1), (0, 2)]
         show
         expand [3, 2]
         show
         offsets",
    );
}

#[test]
fn empty_shrink_and_zero_size() {
    check(
        "empty_shrink",
        "view [3, 4] strides [4, 1] offset 5
         shrink [(1, 1), (0, 4)]
         show
         offsets
         reshape [0, 7]
         show
         pad [(1, 0), (0, 0)]
         show
         offsets",
    );
}

#[test]
fn negative_and_zero_strides() {
    check(
        "negative_zero_strides",
        "view [3, 4] strides [-4, 0] offset 8
         show
         offsets
         reshape [3, 2, 2]
         show
         flip [0]
         reshape [12]
         show
         offsets",
    );
}

#[test]
fn broadcast_merge() {
    check(
        "broadcast_merge",
        "view [1, 3]
         expand [2, 3]
         reshape [6]
         show
         offsets
         reshape [2, 3]
         show",
    );
}

#[test]
fn scalar_view() {
    check(
        "scalar",
        "view []
         show
         offsets
         expand [2, 2]
         show
         offsets
         reshape [4, 1]
         slice [2, 0]
         show
         offsets",
    );
}

#[test]
fn errors_stop_the_trace() {
    check(
        "error_reshape_count",
        "view [2, 3]
         reshape [5]
         show",
    );
}
