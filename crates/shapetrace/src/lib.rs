//! The `shapetrace` trace-script runner as a library: [`Session`] executes statements one line
//! at a time, [`run`] executes a whole script and collects what it prints.
//!
//! The language is described in `docs/trace-language.md`; `shapetrace --help` lists every
//! statement. [`Prompt`] is the interactive session behind `shapetrace` on a terminal.
//!
//! Dependencies beyond the workspace's own crates: `rustyline` (default features off, file
//! history on) gives the prompt line editing and history; nothing else in the library uses
//! it.
//!
//! ```
//! let out = shapetrace::run("sym n 1..=64\nsimplify (4*n + 3) // 4\nrange 2*n + 1\n");
//! assert_eq!(out.lines, ["n", "[3, 129]"]);
//! assert_eq!(out.error, None);
//! ```

#![forbid(unsafe_code)]

/// The code in README.md, compiled and run as a doc test.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod bench;
mod emit;
mod json;
mod repl;
mod session;
mod syntax;

pub use json::run_json;
pub use repl::{read_history, Prompt, Reply, HISTORY_ENTRIES, HISTORY_MAX_BYTES, PROMPT_HELP};
pub use session::{ScriptError, Session};

/// What a script printed, and the error that stopped it, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The printed lines, in order.
    pub lines: Vec<String>,
    /// The failing statement, if the script stopped early.
    pub error: Option<ScriptError>,
}

impl std::fmt::Display for Output {
    /// Printed lines, then the error line as it appears on stderr.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for l in &self.lines {
            writeln!(f, "{l}")?;
        }
        if let Some(e) = &self.error {
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

/// The text of a script read as bytes: UTF-8, with a leading byte-order mark removed.
///
/// # Errors
/// A [`ScriptError`] naming the first line that is not valid UTF-8 and the byte where it
/// stops being so.
pub fn script_text(bytes: Vec<u8>) -> Result<String, ScriptError> {
    match String::from_utf8(bytes) {
        Ok(mut s) => {
            if s.starts_with('\u{feff}') {
                s.drain(..'\u{feff}'.len_utf8());
            }
            Ok(s)
        }
        Err(e) => {
            let good = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = 1 + bytes[..good].iter().filter(|&&b| b == b'\n').count();
            let line_start = bytes[..good]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            Err(ScriptError {
                line,
                message: format!(
                    "byte {} of the line is not valid UTF-8; save the script as UTF-8",
                    good - line_start + 1
                ),
            })
        }
    }
}

/// Runs `script` in a new session.
#[must_use]
pub fn run(script: &str) -> Output {
    collect(|out| Session::new().run(script, out))
}

/// Runs `script` in a new session as a transcript ([`Session::run_echo`], `--echo`):
/// each statement as `> STATEMENT` before what it prints.
#[must_use]
pub fn run_echo(script: &str) -> Output {
    collect(|out| Session::new().run_echo(script, out))
}

/// The lines `run` hands to its printer, and its error.
fn collect(run: impl FnOnce(&mut dyn FnMut(&str)) -> Result<(), ScriptError>) -> Output {
    let mut lines = Vec::new();
    let error = run(&mut |l| lines.push(l.to_owned())).err();
    Output { lines, error }
}

/// Every statement keyword the runner knows, in the order `--help` lists them.
pub const STATEMENTS: &[&str] = &[
    "sym",
    "assume",
    "simplify",
    "prove",
    "range",
    "bind",
    "solve",
    "eval",
    "view",
    "reshape",
    "expand",
    "permute",
    "shrink",
    "pad",
    "flip",
    "slice",
    "unfold",
    "diagonal",
    "tensor_split",
    "squeeze",
    "squeeze_proven",
    "as_strided",
    "detach",
    "alias",
    "transpose",
    "swapaxes",
    "swapdims",
    "t",
    "movedim",
    "moveaxis",
    "unsqueeze",
    "flatten",
    "unflatten",
    "broadcast_to",
    "narrow",
    "select",
    "split",
    "split_sizes",
    "split_with_sizes",
    "chunk",
    "unbind",
    "H",
    "mH",
    "T",
    "mT",
    "adjoint",
    "rot90",
    "hsplit",
    "vsplit",
    "dsplit",
    "reinterpret",
    "view_as_real",
    "view_as_complex",
    "real",
    "imag",
    "ravel",
    "contiguous",
    "ascontiguousarray",
    "view_shape",
    "sliding_window_view",
    "copy",
    "flatten_copy",
    "astype",
    "asarray",
    "take",
    "compress",
    "boolean_mask",
    "owndata",
    "base",
    "promote_types",
    "result_type",
    "broadcast_shapes",
    "save",
    "load",
    "expand_as",
    "reshape_as",
    "view_as",
    "shares_memory",
    "may_share_memory",
    "lower",
    "guards",
    "infer",
    "show",
    "offsets",
    "flags",
    "bytes",
    "plan",
    "values",
    "bench",
    "emit",
];

/// The text printed by `shapetrace --help`.
pub const HELP: &str = r##"usage: shapetrace [--json | --echo] FILE
       shapetrace [--json | --echo] -     (read the script from standard input)
       shapetrace                         (on a terminal: an interactive prompt)
       shapetrace --interactive           (the prompt, also on input that is not a terminal)
       shapetrace --help

The prompt takes one statement a line, with line editing and a history kept in
$SHAPETRACE_HISTORY (default ~/.shapetrace_history); an error is printed and the
session goes on. `help` lists the prompt's commands, `quit` or Ctrl-D ends it.

--echo prints each statement as `> STATEMENT` before its output (comment lines as
  they are, blank lines blank), so a script reads as a transcript

--json prints one JSON object per statement instead of plain lines:
  {"line":N,"statement":"KEYWORD","output":["..."]}  or, for the failing one,
  {"line":N,"statement":"KEYWORD","error":"MESSAGE"}   (exit status 1)

Runs a trace script, one statement a line; `#` starts a comment. Each printing
statement prints one line to stdout. The first failing statement prints
`error: line N: MESSAGE` to stderr and the exit status is 1.

symbols and facts
  sym NAME LO..=HI [multiple of D]   declare a symbol; bounds are expressions over
                                     earlier symbols, or -inf / inf; LO..HI excludes HI
  assume COND                        add a fact, e.g. `assume n % 8 == 0`, `assume n <= m`
  simplify EXPR                      print the canonical form of EXPR
  prove EXPR OP EXPR                 print true, false or unknown (OP: < <= == != >= >)
  range EXPR                         print [lo, hi]; unbounded ends print -inf / inf
  bind NAME=INT, ...                 bind symbols, checked against ranges and facts
  solve EXPR == EXPR                 solve a linear equation for its one unbound symbol,
                                     bind it and print `NAME = VALUE`
  eval EXPR                          print the value of EXPR under the bindings

views (statements act on the current view stack)
  view [SHAPE] [strides [S..]] [offset E] [mask [(b, e), ..]]
                                     start a new stack with one view; strides default
                                     to row-major, offset to 0
  view [SHAPE] byte_strides [B..] byte_offset N itemsize K
                                     start a new stack from NumPy's byte strides and
                                     byte offset (expressions); each must be a multiple
                                     of K: proven, refused, or kept as a guard
  reshape [SHAPE]                    reshape; stacks a view when one view cannot express it
  expand [SHAPE]                     broadcast size-1 axes (stride 0)
  permute [AXES]                     reorder axes: new axis i is old axis AXES[i]
  shrink [(b, e), ..]                keep b <= index < e on each axis
  pad [(before, after), ..]          add masked-out elements on each axis
  flip [AXES]                        reverse the listed axes
  slice [ITEMS]                      NumPy basic indexing: 1, 2:, ::-1, None, ...;
                                     indices and bounds are expressions (n - 1, :p + 1);
                                     a symbolic step needs a provable sign
  unfold AXIS size SIZE [step STEP]  sliding windows along AXIS (step defaults to 1);
                                     the window axis is appended last
  diagonal [A, B] [offset K]         the diagonal of axes A and B shifted by K (above
                                     the main diagonal when K > 0), appended last
  tensor_split AXIS sections N PIECE keep piece PIECE of PyTorch's tensor_split of AXIS
                                     into N pieces (the first dim % N one longer)
  tensor_split AXIS at [I, ..] PIECE keep piece PIECE of tensor_split at the indices
                                     (piece k is the slice I[k-1]:I[k])
  squeeze [[AXES]]                   remove the listed size-1 axes; without a list,
                                     every size-1 axis (a symbolic axis not provably 1
                                     is kept under a guard that it is not 1)
  squeeze_proven                     remove the axes provably of size 1, keep the
                                     others without a guard
  T                                  reverse all axes
  mT                                 swap the last two axes (rank 0 unchanged, rank 1 an
                                     error)
  mH                                 PyTorch's mH: the view of mT (views carry no values
                                     to conjugate); errors name mH
  adjoint                            PyTorch's adjoint(): the view of mH; errors name it
  rot90 K [AXIS AXIS]                NumPy's rot90: K quarter turns in the plane of two
                                     axes (0 and 1 when left out)
  H                                  PyTorch's H: swap axes 0 and 1 of a matrix (rank 2);
                                     rank 0 unchanged; any other rank an error
  hsplit sections N PIECE            keep piece PIECE of PyTorch's hsplit into N equal
                                     pieces: axis 1, or 0 for rank 1; the size must be
                                     (provably) divisible by N
  hsplit at [I, ..] PIECE            keep piece PIECE of hsplit at the indices, as
                                     tensor_split ... at
  vsplit sections N PIECE            the same along axis 0 (rank at least 2); also
                                     `vsplit at [I, ..] PIECE`
  dsplit sections N PIECE            the same along axis 2 (rank at least 3); also
                                     `dsplit at [I, ..] PIECE`
  reinterpret FROM TO                PyTorch's view(dtype): FROM-byte elements read as
                                     TO-byte ones; offsets are then in TO-byte elements
                                     (a one-view stack without a mask)
  view_as_real                       PyTorch's view_as_real: complex elements read as
                                     pairs of reals (an axis [2] with stride 1 appended,
                                     other strides and the offset doubled)
  view_as_complex                    the inverse: the last axis must have size 2 and
                                     stride 1, the other strides and the offset be even
  real                               view_as_real, then index 0 of the pair axis
  imag                               view_as_real, then index 1 of the pair axis
                                     (these four: a one-view stack without a mask)
  ravel                              NumPy's ravel: the top view flattened when it is
                                     proven C-contiguous, else a copy (a row-major
                                     [numel] view pushed on top)
  contiguous                         PyTorch's contiguous: the stack unchanged when its
                                     top view is proven C-contiguous, else a copy (a
                                     row-major view of the same shape pushed on top)
  ascontiguousarray                  NumPy's ascontiguousarray: contiguous, a stack of
                                     rank 0 first reshaped to [1] (ndim >= 1)
  view_shape [SHAPE]                 PyTorch's view(*shape): reshape when the top view
                                     can express it, else an error (never pushes a view)
  as_strided [SHAPE] strides [S..] [offset E]
                                     PyTorch's as_strided: the top view's storage (the
                                     view below it, or for one view up to its last
                                     element) read with new sizes, strides (at least 0)
                                     and offset (default: the top view's), every element
                                     inside the storage
  sliding_window_view [W..] [axis [A..]]
                                     NumPy's sliding_window_view: unfold with step 1 per
                                     window size and axis (all axes in order by default)
  copy                               NumPy's copy: always a copy (a row-major view of the
                                     same shape pushed on top)
  flatten_copy                       NumPy's flatten: always a copy, as one axis
  astype FROM TO [copy true|false]   NumPy's astype on FROM elements: a copy when the
                                     types differ or copy is true (the default), else
                                     the stack unchanged
  asarray FROM TO                    NumPy's asarray(a, dtype=TO): astype without copy
  take A [I..]                       NumPy's fancy indexing along A (np.take): a copy into
                                     a new buffer, a new stack over it (indices in
                                     -dim..dim)
  compress A [BOOLS]                 NumPy's boolean indexing along A (a[:, mask]): a copy
                                     of the indices whose entry is true
  boolean_mask [BOOLS]               NumPy's a[mask] with a mask of the whole shape (one
                                     entry per element, row-major): a copy as one axis
  owndata                            print `owndata: B`: whether the stack is a copy an op
                                     made (NumPy's OWNDATA) rather than a view of one
  base                               print `base: none` (it owns its data), `base: input`
                                     (a view of the script's buffer) or `base: line N`
                                     (a view of the copy made on line N)
  promote_types A B                  print NumPy's promote_types of two element types
  result_type X..                    print NumPy 2's result type of element types and
                                     python scalars (True, 3, 1.0; NEP 50: weak)
  broadcast_shapes [S..] [S..]..     print NumPy's broadcast shape and its guards
  detach                             the identity on views (autograd only)
  alias                              the identity on views
  transpose A B                      swap axes A and B
  swapaxes A B                       transpose A B
  swapdims A B                       transpose A B
  t                                  transpose 0 1 on rank 2; nothing below; an error above
  movedim SRC DST                    move axis SRC to position DST
  moveaxis SRC DST                   movedim SRC DST
  unsqueeze A                        insert a size-1 axis at position A
  flatten START END                  merge axes START..=END into one
  unflatten A [SIZES]                split axis A into SIZES
  broadcast_to [SHAPE]               NumPy's broadcast_to (new leading axes allowed)
  narrow A start E length E          indices E.. of axis A, E of them
  select A index E                   index E of axis A, the axis removed
  unbind A PIECE                     piece PIECE of unbind: select A index PIECE
  split A size E piece E             piece of PyTorch's split into pieces of size E
  split_sizes A [SIZES] piece P      piece P of PyTorch's split_with_sizes
  split_with_sizes A [SIZES] piece P the same
  chunk A chunks N piece P           piece P of chunk into N chunks
  save NAME                          keep a copy of the current stack as NAME
  load NAME                          make the stack saved as NAME current
  expand_as NAME                     expand (reshape_as: reshape) to NAME's shape
  reshape_as NAME
  view_as NAME                       view_shape to NAME's shape (an error where PyTorch's
                                     view would need a copy)
  shares_memory NAME [max_work N]    print `shares_memory: yes|no|too hard`: whether the
                                     bound current view and NAME (one-view stacks of one
                                     buffer) reach a common offset; exact unless the
                                     search needs more than N steps (NumPy's max_work);
                                     views of different arrays (a copy and another) `no`
  may_share_memory NAME              print `may_share_memory: yes|no`: whether their
                                     offset ranges overlap (NumPy's bounds check)
  show                               print each view of the stack, bottom first:
                                     view shape=[..] strides=[..] offset=E mask=..
  offsets                            print `offsets [SHAPE]:` and the buffer offset of
                                     every element in row-major order (`_` if masked);
                                     every symbol of the stack must be bound
  lower                              print `offset: EXPR` and `valid: COND`, the index
                                     expressions in loop indices i0, i1, ...
  guards                             print the pending guards, one a line, or
                                     `guards: none`
  flags                              print NumPy's `flags: c_contiguous=B f_contiguous=B`
  bytes ITEMSIZE                     print `bytes shape=[..] strides=[..] offset=N` in
                                     bytes (flags and bytes: a one-view stack without a
                                     mask, every symbol bound)
  infer [INTS]                       solve the current shape against a concrete one,
                                     bind the symbols and print them (`n = 7, m = 5`)

Shapes and arguments of view statements may be symbolic expressions. A precondition
that cannot be proven yet becomes a guard, checked when the symbols are bound; one
proven false is an error at once. `bind` also binds the current stack, so a failing
guard is reported there.

kernels (the stack must be bound: every field a constant)
  plan                               print the loop plan of materializing the stack
  values [PAD]                       materialize over a buffer holding 0, 1, 2, ... (i64)
                                     and print `values [SHAPE]: v v ...`; masked-out
                                     elements take PAD (default 0)
  bench f32|f16|bf16                 time materializing over a buffer of that type and
                                     print `bench: median_ns=N bytes=B gbps=G memcpy_ratio=R`

code generation (symbolic or bound; symbols need not be bound)
  emit c                             print a C99 unit that materializes the stack into a
                                     contiguous int64_t output, with exactly two entry points:
                                     int shapetrace_guards(const int64_t *syms);
                                     void shapetrace_materialize(const int64_t *src,
                                         int64_t *dst, const int64_t *syms, int64_t pad);
                                     syms: every declared symbol in `sym` order; guards
                                     returns 0 or the number of the first failing guard
                                     (the order `guards` prints them; then ranges, assumptions)

expressions
  integers, symbols, + - *, // (floor division), % (floor modulo), cdiv(a, b),
  min(a, b), max(a, b), parentheses; conditions: < <= == != >= >, and, or, not
"##;
