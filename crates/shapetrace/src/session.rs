//! The state of a running script and the execution of one statement.

use std::sync::Arc;

use symshape::{Bindings, Cond, Expr, Scope};
use symshape_kernels::{bf16, f16, gather, materialize, plan_materialize, ConcreteStack, Input};
use symshape_view::{
    broadcast_shapes, infer, parse_index_in, promote_types, result_type, ConcreteView, DType, Op,
    Operand, SplitDirection, View, ViewOps, ViewStack, MAX_OFFSETS, SHARES_MEMORY_MAX_WORK,
};

use crate::bench::{bench_materialize, bench_materialize_f32, counting_buffer};
use crate::syntax::{clauses, list, pair_list, split_keyword, split_top, strip_comment};

/// A statement that failed: the 1-based line and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// 1-based line number of the failing statement.
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error: line {}: {}", self.line, self.message)
    }
}

/// Everything a script has declared and bound so far.
#[derive(Default)]
pub struct Session {
    scope: Scope,
    bindings: Bindings,
    stack: Option<ViewStack>,
    /// Whose elements the current stack reads and which buffer its bottom view indexes.
    origin: Origin,
    /// Stacks saved by `save NAME`, for `load` and the statements that take another
    /// tensor (`expand_as NAME`, `shares_memory NAME`, ...), with their origins.
    saved: std::collections::BTreeMap<String, (ViewStack, Origin)>,
    /// The line being executed, and the address of its first byte: statement parts are
    /// slices of it, so an error inside one can name its column in the line.
    line: String,
    line_at: usize,
    /// Lines executed so far, so the number of the current one in a script: a copy is
    /// named by the line that made it.
    executed: usize,
}

/// NumPy's `OWNDATA` and `base` of a stack, and the buffer its bottom view indexes.
#[derive(Clone, Default)]
struct Origin {
    /// The array whose elements the stack reads (NumPy's `base`, or the stack itself).
    owner: Owner,
    /// Whether the stack is that array itself, a copy made by an op (NumPy's `OWNDATA`).
    owndata: bool,
    /// The buffer the bottom view indexes.
    buffer: Buffer,
}

/// An array whose elements stacks read: the script's buffer, which every `view` reads, or
/// the copy a statement made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Owner {
    /// The script's buffer.
    #[default]
    Input,
    /// The copy made on this line.
    Line(usize),
}

/// The buffer a stack's bottom view indexes.
#[derive(Clone, Default)]
enum Buffer {
    /// The script's buffer (`0, 1, 2, ...` for `values`).
    #[default]
    Input,
    /// The buffer a gather filled from another stack.
    Gathered(Arc<Gathered>),
}

/// A gather's source: the stack it read, that stack's buffer, and the op.
struct Gathered {
    stack: ViewStack,
    buffer: Buffer,
    op: Op,
}

/// Timed runs of a `bench` statement; the median is reported.
const BENCH_RUNS: usize = 11;

type StmtResult = Result<Vec<String>, String>;

impl Session {
    /// A session with nothing declared.
    #[must_use]
    pub fn new() -> Session {
        Session::default()
    }

    /// Runs every line of `script`, handing each printed line to `out` as soon as it is
    /// produced, and stops at the first failing statement.
    pub fn run(&mut self, script: &str, out: &mut dyn FnMut(&str)) -> Result<(), ScriptError> {
        self.run_lines(script, out, false)
    }

    /// [`Session::run`] as a transcript: each non-blank line of the script is handed to
    /// `out` before what it prints, a statement as `> STATEMENT` and a comment line as it
    /// is; blank lines stay blank.
    pub fn run_echo(&mut self, script: &str, out: &mut dyn FnMut(&str)) -> Result<(), ScriptError> {
        self.run_lines(script, out, true)
    }

    fn run_lines(
        &mut self,
        script: &str,
        out: &mut dyn FnMut(&str),
        echo: bool,
    ) -> Result<(), ScriptError> {
        let script = script.strip_prefix('\u{feff}').unwrap_or(script);
        for (k, line) in script.lines().enumerate() {
            if echo {
                let text = line.trim();
                if text.is_empty() || text.starts_with('#') {
                    out(text);
                } else {
                    out(&format!("> {text}"));
                }
            }
            let lines = self.exec(line).map_err(|message| ScriptError {
                line: k + 1,
                message,
            })?;
            for l in &lines {
                out(l);
            }
        }
        Ok(())
    }

    /// Executes one line and returns what it prints. Control characters in an error
    /// message are escaped (`\u{0}`), so that a message prints as one visible line.
    pub fn exec(&mut self, line: &str) -> StmtResult {
        self.executed += 1;
        self.line.clear();
        self.line.push_str(line);
        self.line_at = line.as_ptr() as usize;
        self.exec_line(line).map_err(|m| escape_controls(&m))
    }

    fn exec_line(&mut self, line: &str) -> StmtResult {
        let stmt = strip_comment(line);
        if stmt.is_empty() {
            return Ok(Vec::new());
        }
        let (kw, rest) = split_keyword(stmt);
        match kw {
            "sym" => self.sym(rest),
            "assume" => self.assume(rest),
            "simplify" => self.simplify(rest),
            "prove" => self.prove(rest),
            "range" => self.range(rest),
            "bind" => self.bind(rest),
            "solve" => self.solve(rest),
            "eval" => self.eval(rest),
            "view" => self.view(rest),
            // PyTorch's `as_strided` reads the storage of the current view with new sizes,
            // strides and offset (by default the view's own offset).
            "as_strided" => {
                need(rest, "as_strided", "`[SHAPE] strides [S, ...] [offset E]`")?;
                self.apply(rest, "as_strided", Session::as_strided_op)
            }
            // Autograd only: as views, `detach` and `alias` are the identity.
            "detach" | "alias" => {
                no_args(rest, kw)?;
                let cur = self.current(kw)?;
                let same = if kw == "detach" {
                    cur.detach()
                } else {
                    cur.alias()
                };
                self.stack = Some(same);
                self.origin.owndata = false;
                Ok(Vec::new())
            }
            "reshape" => self.apply(rest, "reshape", |cx, a| Ok(Op::Reshape(cx.exprs(a)?))),
            "expand" => self.apply(rest, "expand", |cx, a| Ok(Op::Expand(cx.exprs(a)?))),
            "permute" => self.apply(rest, "permute", |_, a| Ok(Op::Permute(axes("permute", a)?))),
            "shrink" => self.apply(rest, "shrink", |cx, a| Ok(Op::Shrink(cx.pairs(a)?))),
            "pad" => self.apply(rest, "pad", |cx, a| Ok(Op::Pad(cx.pairs(a)?))),
            "flip" => self.apply(rest, "flip", |_, a| Ok(Op::Flip(axes("flip", a)?))),
            "slice" => self.apply(rest, "slice", |cx, a| {
                Ok(Op::Index(parse_index_in(&cx.scope, a).map_err(err)?))
            }),
            "unfold" => self.apply(rest, "unfold", Session::unfold_op),
            "diagonal" => self.apply(rest, "diagonal", Session::diagonal_op),
            "tensor_split" => self.apply(rest, "tensor_split", Session::tensor_split_op),
            "squeeze" if rest.is_empty() => self.apply_bare(rest, "squeeze", &Op::Squeeze(None)),
            "squeeze" => self.apply(rest, "squeeze", |_, a| {
                Ok(Op::Squeeze(Some(axes("squeeze", a)?)))
            }),
            "squeeze_proven" => self.apply_bare(rest, "squeeze_proven", &Op::SqueezeProven),
            "transpose" | "swapaxes" | "swapdims" => self.apply(rest, kw, |_, a| {
                let [x, y] = numbers(kw, a, "`AXIS AXIS`")?;
                Ok(Op::Transpose(x, y))
            }),
            "t" => self.apply_bare(rest, "t", &Op::T),
            "movedim" | "moveaxis" => self.apply(rest, kw, |_, a| {
                let [src, dst] = numbers(kw, a, "`SOURCE DESTINATION`")?;
                Ok(Op::Movedim { src, dst })
            }),
            "unsqueeze" => self.apply(rest, kw, |_, a| {
                let [axis] = numbers(kw, a, "`AXIS`")?;
                Ok(Op::Unsqueeze(axis))
            }),
            "flatten" => self.apply(rest, kw, |_, a| {
                let [start, end] = numbers(kw, a, "`START END` (axes, both included)")?;
                Ok(Op::Flatten { start, end })
            }),
            "unflatten" => self.apply(rest, kw, |cx, a| {
                let (axis, sizes) = axis_and(kw, a, "`AXIS [SIZES]`")?;
                Ok(Op::Unflatten {
                    axis,
                    sizes: cx.exprs(sizes)?,
                })
            }),
            "broadcast_to" => self.apply(rest, kw, |cx, a| Ok(Op::BroadcastTo(cx.exprs(a)?))),
            "narrow" | "select" | "split" | "split_sizes" | "split_with_sizes" | "chunk"
            | "unbind" => self.apply(rest, kw, |cx, a| cx.piece_op(kw, a)),
            "H" => self.apply_bare(rest, "H", &Op::ConjTranspose),
            "mH" => self.apply_bare(rest, "mH", &Op::MatrixConjTranspose),
            "T" => self.apply_bare(rest, "T", &Op::ReverseAxes),
            "mT" => self.apply_bare(rest, "mT", &Op::MatrixTranspose),
            "adjoint" => self.apply_bare(rest, "adjoint", &Op::Adjoint),
            "rot90" => self.apply(rest, kw, |_, a| rot90_op(a)),
            "view_shape" => self.apply(rest, kw, |cx, a| Ok(Op::ViewShape(cx.exprs(a)?))),
            "sliding_window_view" => self.apply(rest, kw, Session::sliding_window_op),
            "copy" => self.apply_bare(rest, "copy", &Op::Copy),
            "flatten_copy" => self.apply_bare(rest, "flatten_copy", &Op::FlattenCopy),
            "astype" | "asarray" => self.apply(rest, kw, |_, a| astype_op(kw, a)),
            "take" => self.apply(rest, kw, |cx, a| {
                let (axis, indices) = axis_and(kw, a, "`AXIS [I, ...]`")?;
                Ok(Op::Take {
                    axis,
                    indices: cx.exprs(indices)?,
                })
            }),
            "compress" => self.apply(rest, kw, |_, a| {
                let (axis, mask) = axis_and(kw, a, "`AXIS [true, false, ...]`")?;
                Ok(Op::Compress {
                    axis,
                    mask: bools(kw, mask)?,
                })
            }),
            "boolean_mask" => self.apply(rest, kw, |_, a| Ok(Op::BooleanMask(bools(kw, a)?))),
            "owndata" => {
                no_args(rest, kw)?;
                self.current(kw)?;
                Ok(vec![format!("owndata: {}", self.origin.owndata)])
            }
            "base" => {
                no_args(rest, kw)?;
                self.current(kw)?;
                let base = match (self.origin.owndata, self.origin.owner) {
                    (true, _) => "none".to_owned(),
                    (false, Owner::Input) => "input".to_owned(),
                    (false, Owner::Line(n)) => format!("line {n}"),
                };
                Ok(vec![format!("base: {base}")])
            }
            "promote_types" | "result_type" => dtype_statement(kw, rest),
            "broadcast_shapes" => self.broadcast_shapes(rest),
            "hsplit" | "vsplit" | "dsplit" => {
                need(rest, kw, "`sections N PIECE` or `at [I, ...] PIECE`")?;
                self.apply(rest, kw, |cx, a| cx.directional_split_op(kw, a))
            }
            "reinterpret" => self.apply(rest, "reinterpret", |_, a| reinterpret_op(a)),
            "view_as_real" => self.apply_bare(rest, "view_as_real", &Op::ViewAsReal),
            "view_as_complex" => self.apply_bare(rest, "view_as_complex", &Op::ViewAsComplex),
            "real" => self.apply_bare(rest, "real", &Op::Real),
            "imag" => self.apply_bare(rest, "imag", &Op::Imag),
            "ravel" => self.apply_bare(rest, "ravel", &Op::Ravel),
            "contiguous" => self.apply_bare(rest, "contiguous", &Op::Contiguous),
            // NumPy's `ascontiguousarray`: `contiguous` of at least one axis.
            "ascontiguousarray" => {
                no_args(rest, kw)?;
                if self.current(kw)?.ndim() == 0 {
                    self.run_op(kw, &Op::Reshape(vec![Expr::from(1)]))?;
                }
                self.run_op(kw, &Op::Contiguous)
            }
            "save" => self.save(rest),
            "load" => {
                let (next, origin) = self.saved_stack("load", rest)?.clone();
                self.replace_with("load", |_, _| Ok(next))?;
                self.origin = origin;
                Ok(Vec::new())
            }
            "expand_as" | "reshape_as" | "view_as" => {
                let other = self.saved_stack(kw, rest)?.0.clone();
                // What each records: `expand_as` and `view_as` never copy.
                let shape = other.shape().to_vec();
                let op = match kw {
                    "reshape_as" => Op::Reshape(shape),
                    "view_as" => Op::ViewShape(shape),
                    _ => Op::Expand(shape),
                };
                if kw == "reshape_as" {
                    return self.run_op(kw, &op);
                }
                let copies = self.current(kw)?.top().copied_by(&self.scope, &op);
                self.replace_with(kw, |cx, cur| match kw {
                    "expand_as" => cur.expand_as(cx, &other),
                    _ => cur.view_as(cx, &other),
                })?;
                self.note_op(copies, &op, None);
                Ok(Vec::new())
            }
            "shares_memory" | "may_share_memory" => self.overlap(kw, rest),
            "flags" => self.flags(rest),
            "bytes" => self.bytes(rest),
            "lower" => self.lower(rest),
            "guards" => self.guards(rest),
            "infer" => self.infer(rest),
            "show" => self.show(rest),
            "plan" => self.plan(rest),
            "values" => self.values(rest),
            "bench" => self.bench(rest),
            "offsets" => self.offsets(rest),
            "emit" => crate::emit::emit(&self.scope, self.current("emit")?, rest),
            _ => Err(format!(
                "unknown statement `{kw}`; run `shapetrace --help` for the list"
            )),
        }
    }

    fn sym(&mut self, rest: &str) -> StmtResult {
        need(rest, "sym", "a name and a range, e.g. `sym n 1..=4096`")?;
        self.scope
            .declare_str(rest)
            .map_err(|e| self.located(rest, e))?;
        Ok(Vec::new())
    }

    fn assume(&mut self, rest: &str) -> StmtResult {
        need(rest, "assume", "a condition, e.g. `assume n % 8 == 0`")?;
        // A fact added after values were bound must hold for them too; a refused fact
        // leaves the scope as it was.
        let mut next = self.scope.clone();
        next.assume_str(rest).map_err(|e| self.located(rest, e))?;
        next.check(&self.bindings).map_err(err)?;
        self.scope = next;
        Ok(Vec::new())
    }

    fn simplify(&mut self, rest: &str) -> StmtResult {
        need(rest, "simplify", "an expression")?;
        let text = match self.expr_or_cond(rest)? {
            Ok(e) => self.scope.simplify(e).to_string(),
            Err(c) => self.scope.simplify_cond(c).to_string(),
        };
        Ok(vec![text])
    }

    /// `text` as an integer expression, or else as a condition; the error is the
    /// expression's when it is neither.
    fn expr_or_cond(&self, text: &str) -> Result<Result<Expr, symshape::Cond>, String> {
        match self.scope.parse_expr(text) {
            Ok(e) => Ok(Ok(e)),
            Err(expr_err) => match self.scope.parse_cond(text) {
                Ok(c) => Ok(Err(c)),
                Err(_) => Err(self.located(text, expr_err)),
            },
        }
    }

    fn prove(&mut self, rest: &str) -> StmtResult {
        need(rest, "prove", "a comparison, e.g. `prove n <= m`")?;
        let proof = self.scope.prove_cond(self.cond(rest)?);
        let word = match proof.as_bool() {
            Some(true) => "true",
            Some(false) => "false",
            None => "unknown",
        };
        Ok(vec![word.to_owned()])
    }

    fn range(&mut self, rest: &str) -> StmtResult {
        need(rest, "range", "an expression")?;
        Ok(vec![self.scope.range(self.expr(rest)?).to_string()])
    }

    fn bind(&mut self, rest: &str) -> StmtResult {
        need(rest, "bind", "assignments, e.g. `bind n=7, m=3`")?;
        let mut next = self.bindings.clone();
        for item in split_top(rest, ',')? {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| format!("bind: expected `name=value`, found `{item}`"))?;
            let (name, value) = (name.trim(), value.trim());
            let value: i64 = value
                .parse()
                .map_err(|_| format!("bind: `{value}` is not an integer (in `{item}`)"))?;
            // Set one by one (ranges checked) and checked together below: a statement
            // that rebinds several symbols may pass through a state that breaks an
            // assumption its final values keep, which `Scope::bind` would refuse.
            let sym = self.scope.symbol(name).ok_or_else(|| {
                err(symshape::Error::UnknownSymbol {
                    op: "bind",
                    name: name.to_string(),
                })
            })?;
            next.set(sym, value).map_err(err)?;
        }
        self.scope.check(&next).map_err(err)?;
        self.bind_stack(&next)?;
        self.bindings = next;
        Ok(Vec::new())
    }

    fn solve(&mut self, rest: &str) -> StmtResult {
        need(rest, "solve", "an equation, e.g. `solve 2*n + 1 == 9`")?;
        let (sym, value) = self
            .scope
            .solve_str(rest, &self.bindings)
            .map_err(|e| self.located(rest, e))?;
        let mut next = self.bindings.clone();
        next.set(sym, value).map_err(err)?;
        self.scope.check(&next).map_err(err)?;
        self.bind_stack(&next)?;
        self.bindings = next;
        Ok(vec![format!("{sym} = {value}")])
    }

    fn eval(&mut self, rest: &str) -> StmtResult {
        need(rest, "eval", "an expression")?;
        let text = match self.expr_or_cond(rest)? {
            Ok(e) => self.scope.eval(e, &self.bindings).map_err(err)?.to_string(),
            Err(c) => self
                .scope
                .eval_cond(c, &self.bindings)
                .map_err(err)?
                .to_string(),
        };
        Ok(vec![text])
    }
}

/// Binds `stack` under `b` when every symbol it uses is bound, so that a guard that fails
/// is reported by the statement that made it fail.
fn check_bound(stack: &ViewStack, scope: &Scope, b: &Bindings) -> Result<(), String> {
    match stack.bind(scope, b) {
        Ok(_) | Err(symshape_view::Error::Symshape(symshape::Error::Unbound { .. })) => Ok(()),
        Err(e) => Err(err(e)),
    }
}

impl Session {
    fn view(&mut self, rest: &str) -> StmtResult {
        need(rest, "view", "a shape, e.g. `view [2, 3, 4]`")?;
        let (lead, opts) = clauses(
            rest,
            &[
                "strides",
                "offset",
                "mask",
                "byte_strides",
                "byte_offset",
                "itemsize",
            ],
        )?;
        if opts
            .iter()
            .any(|(kw, _)| kw.starts_with("byte") || *kw == "itemsize")
        {
            return self.view_from_bytes(lead, &opts);
        }
        let shape = self.exprs(lead)?;
        let mut strides = None;
        let mut offset = Expr::from(0);
        let mut mask = None;
        for (kw, value) in opts {
            match kw {
                "strides" => strides = Some(self.exprs(value)?),
                "offset" => offset = self.expr(value)?,
                "mask" => mask = Some(self.pairs(value)?),
                _ => {}
            }
        }
        let v = View::create(
            &self.scope,
            &shape,
            strides.as_deref(),
            offset,
            mask.as_deref(),
        )
        .map_err(err)?;
        let stack = ViewStack::new(v);
        if !self.bindings.is_empty() && !stack.guards().is_empty() {
            check_bound(&stack, &self.scope, &self.bindings)?;
        }
        self.stack = Some(stack);
        self.origin = Origin::default();
        Ok(Vec::new())
    }

    /// Applies the op that `parse` reads from `rest` to the current stack, with proofs under
    /// the scope's facts.
    fn apply(
        &mut self,
        rest: &str,
        stmt: &str,
        parse: impl FnOnce(&Session, &str) -> Result<Op, String>,
    ) -> StmtResult {
        need(rest, stmt, "arguments")?;
        let op = parse(self, rest)?;
        self.run_op(stmt, &op)
    }

    /// Applies `op`, a statement without arguments.
    fn apply_bare(&mut self, rest: &str, stmt: &str, op: &Op) -> StmtResult {
        no_args(rest, stmt)?;
        self.run_op(stmt, op)
    }

    fn run_op(&mut self, stmt: &str, op: &Op) -> StmtResult {
        let copies = self.current(stmt)?.top().copied_by(&self.scope, op);
        if copies && !op.always_copies() && !matches!(op, Op::Ravel | Op::Contiguous) {
            // NumPy's `reshape` (and any op whose view the layout cannot give, where the
            // stack pushes one) copies, then views the copy: the copy is a new storage that
            // later ops never merge across. An op the stack refuses (`view_shape`) stays
            // refused; where the op is not one view of the copy for every value of the
            // symbols, the stack decides at bind time, and no copy is recorded.
            let cur = self.current(stmt)?;
            let pushes = ViewStack::new(cur.top().clone())
                .apply(&self.scope, op)
                .is_ok();
            let copy = View::row_major(&self.scope, cur.shape()).map_err(err)?;
            if pushes && copy.apply(&self.scope, op).is_ok() {
                self.step(stmt, &Op::Copy)?;
            }
        }
        // A gather's buffer is filled from the stack it reads.
        let source = op.is_gather().then(|| self.stack.clone()).flatten();
        self.step(stmt, op)?;
        self.note_op(copies, op, source);
        Ok(Vec::new())
    }

    /// Applies `op` to the current stack.
    fn step(&mut self, stmt: &str, op: &Op) -> Result<(), String> {
        if self.bindings.is_empty() {
            // Nothing bound to check new guards against: the stack is changed in place, at
            // a cost that does not grow with its height.
            if let Some(stack) = self.stack.as_mut() {
                stack.apply_in_place(&self.scope, op).map_err(err)?;
            }
        } else {
            self.replace_with(stmt, |cx, cur| cur.apply(cx, op))?;
        }
        Ok(())
    }

    /// Records what the op just applied made of the stack's origin (`copies`: whether it
    /// copied the stack's top view, asked before the op): a copy (NumPy's `OWNDATA`) owns a
    /// new array named by this line, and a gather's new stack reads the buffer filled from
    /// `source`; a view reads the same array.
    fn note_op(&mut self, copies: bool, op: &Op, source: Option<ViewStack>) {
        if !copies {
            self.origin.owndata = false;
            return;
        }
        let buffer = match source {
            Some(stack) => Buffer::Gathered(Arc::new(Gathered {
                stack,
                buffer: self.origin.buffer.clone(),
                op: op.clone(),
            })),
            None => self.origin.buffer.clone(),
        };
        self.origin = Origin {
            owner: Owner::Line(self.executed),
            owndata: true,
            buffer,
        };
    }

    /// Replaces the current stack with what `f` makes of it, as [`Session::run_op`] does.
    fn replace_with(
        &mut self,
        stmt: &str,
        f: impl FnOnce(&Scope, &ViewStack) -> symshape_view::Result<ViewStack>,
    ) -> StmtResult {
        let cur = self.current(stmt)?;
        let next = f(&self.scope, cur).map_err(err)?;
        // A guard the op adds that the values already bound break is this line's error.
        if !self.bindings.is_empty() && next.guards() != cur.guards() {
            check_bound(&next, &self.scope, &self.bindings)?;
        }
        self.stack = Some(next);
        Ok(Vec::new())
    }

    /// `hsplit sections N PIECE` or `hsplit at [I, ...] PIECE` (and `vsplit`, `dsplit`):
    /// piece `PIECE` of PyTorch's split along its fixed axis.
    fn directional_split_op(&self, stmt: &str, rest: &str) -> Result<Op, String> {
        let usage = format!("expected `{stmt} sections N PIECE` or `{stmt} at [I, ...] PIECE`");
        let (lead, opts) = clauses(rest, &["sections", "at"])?;
        let ([(kw, value)], "") = (&opts[..], lead) else {
            return Err(format!("{stmt}: {usage}, found `{rest}`"));
        };
        let direction = match stmt {
            "hsplit" => SplitDirection::Horizontal,
            "vsplit" => SplitDirection::Vertical,
            _ => SplitDirection::Depth,
        };
        self.sections_op(
            (stmt, kw, value, &usage),
            |sections, piece| Op::DirectionalSplit {
                direction,
                sections,
                piece,
            },
            |indices, piece| Op::DirectionalSplitAt {
                direction,
                indices,
                piece,
            },
        )
    }

    /// `unfold AXIS size SIZE [step STEP]` (step defaults to 1).
    fn unfold_op(&self, rest: &str) -> Result<Op, String> {
        const USAGE: &str = "expected `unfold AXIS size SIZE [step STEP]`";
        let (lead, opts) = clauses(rest, &["size", "step"])?;
        let axis = lead
            .parse::<usize>()
            .map_err(|_| format!("unfold: `{lead}` is not an axis number; {USAGE}"))?;
        let mut size = None;
        let mut step = Expr::from(1);
        for (kw, value) in opts {
            match kw {
                "size" => size = Some(self.expr(value)?),
                _ => step = self.expr(value)?,
            }
        }
        let size = size.ok_or_else(|| format!("unfold: the window size is missing; {USAGE}"))?;
        Ok(Op::Unfold { axis, size, step })
    }

    /// `diagonal [DIM1, DIM2] [offset OFFSET]` (offset defaults to 0).
    fn diagonal_op(&self, rest: &str) -> Result<Op, String> {
        let (lead, opts) = clauses(rest, &["offset"])?;
        let dims = axes("diagonal", lead)?;
        let [dim1, dim2] = dims[..] else {
            return Err(format!(
                "diagonal: expected two axes `[DIM1, DIM2]`, found `{lead}`"
            ));
        };
        let offset = match opts.first() {
            Some((_, value)) => self.expr(value)?,
            None => Expr::from(0),
        };
        Ok(Op::Diagonal { offset, dim1, dim2 })
    }

    /// The ops that keep one piece or index of an axis: `narrow AXIS start E length E`,
    /// `select AXIS index E`, `split AXIS size E piece E`, `split_sizes AXIS [SIZES] piece
    /// P` (also `split_with_sizes`), `chunk AXIS chunks N piece P` and `unbind AXIS PIECE`.
    fn piece_op(&self, stmt: &str, rest: &str) -> Result<Op, String> {
        let (keywords, usage): (&[&'static str], &str) = match stmt {
            "narrow" => (&["start", "length"], "`narrow AXIS start E length E`"),
            "select" => (&["index"], "`select AXIS index E`"),
            "split" => (&["size", "piece"], "`split AXIS size E piece E`"),
            "chunk" => (&["chunks", "piece"], "`chunk AXIS chunks N piece P`"),
            "unbind" => (&[], "`unbind AXIS PIECE`"),
            _ => (&["piece"], "`split_sizes AXIS [SIZES] piece P`"),
        };
        let (lead, opts) = clauses(rest, keywords)?;
        let found = || format!("{stmt}: expected {usage}, found `{rest}`");
        let values: Vec<&str> = opts.iter().map(|(_, v)| *v).collect();
        let got: Vec<&str> = opts.iter().map(|(k, _)| *k).collect();
        if got != keywords {
            return Err(found());
        }
        let count = |v: &str, what: &str| {
            v.parse::<usize>()
                .map_err(|_| format!("{stmt}: `{v}` is not {what}; expected {usage}"))
        };
        Ok(match stmt {
            "narrow" | "select" | "split" | "chunk" => {
                let axis = count(lead, "an axis number")?;
                match stmt {
                    "narrow" => Op::Narrow {
                        axis,
                        start: self.expr(values[0])?,
                        length: self.expr(values[1])?,
                    },
                    "select" => Op::Select {
                        axis,
                        index: self.expr(values[0])?,
                    },
                    "split" => Op::Split {
                        axis,
                        size: self.expr(values[0])?,
                        piece: self.expr(values[1])?,
                    },
                    _ => Op::Chunk {
                        axis,
                        chunks: count(values[0], "a number of chunks")?,
                        piece: count(values[1], "a piece number")?,
                    },
                }
            }
            "unbind" => {
                let [axis, piece] = numbers(stmt, lead, usage)?;
                let index = Expr::from(i64::try_from(piece).unwrap_or(i64::MAX));
                Op::Select { axis, index }
            }
            _ => {
                let (axis, sizes) = axis_and(stmt, lead, usage)?;
                Op::SplitSizes {
                    axis,
                    sizes: self.exprs(sizes)?,
                    piece: count(values[0], "a piece number")?,
                }
            }
        })
    }

    /// `tensor_split AXIS sections N PIECE` or `tensor_split AXIS at [I, ...] PIECE`.
    fn tensor_split_op(&self, rest: &str) -> Result<Op, String> {
        const USAGE: &str =
            "expected `tensor_split AXIS sections N PIECE` or `tensor_split AXIS at [I, ...] PIECE`";
        let (lead, opts) = clauses(rest, &["sections", "at"])?;
        let axis = lead
            .parse::<usize>()
            .map_err(|_| format!("tensor_split: `{lead}` is not an axis number; {USAGE}"))?;
        let [(kw, value)] = opts[..] else {
            return Err(format!("tensor_split: {USAGE}, found `{rest}`"));
        };
        self.sections_op(
            ("tensor_split", kw, value, USAGE),
            |sections, piece| Op::TensorSplit {
                axis,
                sections,
                piece,
            },
            |indices, piece| Op::TensorSplitAt {
                axis,
                indices,
                piece,
            },
        )
    }

    /// The op of a `sections N PIECE` or `at [I, ...] PIECE` clause (keyword `kw`, text
    /// `value`) of `stmt`: `count(N, PIECE)` or `at(indices, PIECE)`; the piece is the
    /// last word.
    fn sections_op(
        &self,
        (stmt, kw, value, usage): (&str, &str, &str, &str),
        count: impl FnOnce(usize, usize) -> Op,
        at: impl FnOnce(Vec<Expr>, usize) -> Op,
    ) -> Result<Op, String> {
        let (arg, piece) = value
            .rsplit_once(char::is_whitespace)
            .ok_or_else(|| format!("{stmt}: the piece is missing; {usage}"))?;
        let piece = piece
            .parse::<usize>()
            .map_err(|_| format!("{stmt}: `{piece}` is not a piece number; {usage}"))?;
        let arg = arg.trim();
        if kw == "sections" {
            let sections = arg
                .parse::<usize>()
                .map_err(|_| format!("{stmt}: `{arg}` is not a number of sections; {usage}"))?;
            return Ok(count(sections, piece));
        }
        Ok(at(self.exprs(arg)?, piece))
    }

    /// The bound current stack as one unmasked view of its storage (the copy made last,
    /// or the input), for `flags` and `bytes`.
    fn one_view(&self, stmt: &str) -> Result<ConcreteView, String> {
        let bound = self.bound_stack(stmt, &self.current(stmt)?.on_storage())?;
        let v = unmasked_only_view(stmt, bound.levels(), |v| v.mask().is_some(), "")?;
        Ok(v.clone())
    }

    /// `save NAME`: keeps a copy of the current stack under `NAME`.
    fn save(&mut self, rest: &str) -> StmtResult {
        need(rest, "save", "a name, e.g. `save x`")?;
        if !symshape::is_identifier(rest) {
            return Err(format!(
                "save: `{rest}` is not a name (a letter or `_`, then letters, digits or `_`)"
            ));
        }
        let stack = self.current("save")?.clone();
        self.saved
            .insert(rest.to_owned(), (stack, self.origin.clone()));
        Ok(Vec::new())
    }

    /// The stack saved as `rest` (one name), with its origin, for `stmt`.
    fn saved_stack(&self, stmt: &str, rest: &str) -> Result<&(ViewStack, Origin), String> {
        need(
            rest,
            stmt,
            "the name of a saved stack, e.g. `save x` earlier",
        )?;
        self.saved.get(rest).ok_or_else(|| {
            let names: Vec<&str> = self.saved.keys().map(String::as_str).collect();
            match names.as_slice() {
                [] => format!("{stmt}: no stack is saved as `{rest}`; save one with `save {rest}`"),
                _ => format!(
                    "{stmt}: no stack is saved as `{rest}`; saved: {}",
                    names.join(", ")
                ),
            }
        })
    }

    /// `shares_memory NAME [max_work N]` and `may_share_memory NAME`: NumPy's overlap
    /// tests between the current bound view and the saved one, as views of one buffer.
    fn overlap(&mut self, stmt: &str, rest: &str) -> StmtResult {
        let (name, max_work) = match rest.split_once(" max_work ") {
            Some((name, n)) if stmt == "shares_memory" => {
                let n = n.trim();
                let n = n
                    .parse::<u64>()
                    .map_err(|_| format!("{stmt}: max_work `{n}` is not a non-negative integer"))?;
                (name.trim(), n)
            }
            _ => (rest, SHARES_MEMORY_MAX_WORK),
        };
        let (other, other_origin) = self.saved_stack(stmt, name)?;
        if other_origin.owner != self.origin.owner {
            // Views of different arrays (a copy and what it copied, two copies): NumPy's
            // answer without looking at offsets.
            return Ok(vec![format!("{stmt}: no")]);
        }
        // Both read the same array: their views of its storage are compared.
        let a = one_level(
            stmt,
            "current stack",
            self.bound_stack(stmt, &self.current(stmt)?.on_storage())?,
        )?;
        let b = one_level(
            stmt,
            &format!("stack `{name}`"),
            self.bound_stack(stmt, &other.on_storage())?,
        )?;
        let answer = if stmt == "shares_memory" {
            a.shares_memory(&b, max_work).to_string()
        } else {
            (if a.may_share_memory(&b) { "yes" } else { "no" }).to_owned()
        };
        Ok(vec![format!("{stmt}: {answer}")])
    }

    /// The current stack's view when it is one symbolic view with a symbol the session
    /// has no value for: `flags` and `bytes` then answer for every value of the symbols.
    fn unbound_view(&self, stmt: &str) -> Result<Option<View>, String> {
        let stack = &self.current(stmt)?.on_storage();
        let unbound = matches!(
            stack.bind(&self.scope, &self.bindings),
            Err(symshape_view::Error::Symshape(
                symshape::Error::Unbound { .. }
            ))
        );
        if !unbound {
            return Ok(None);
        }
        // Several views with a symbol unbound: the answer is about one view, whatever the
        // values (binding may merge views, but only the bound stack can say).
        let v = unmasked_only_view(
            stmt,
            stack.views(),
            |v| v.mask().is_some(),
            " (bind its symbols, and views that merge become one)",
        )?;
        Ok(Some(v.clone()))
    }

    /// `flags`: NumPy's flags of the bound view, or of a symbolic view when they hold or
    /// fail for every value of its symbols.
    fn flags(&mut self, rest: &str) -> StmtResult {
        no_args(rest, "flags")?;
        let Some(v) = self.unbound_view("flags")? else {
            let flags = self.one_view("flags")?.numpy_flags().map_err(err)?;
            return Ok(vec![flags.to_string()]);
        };
        let proofs = v.numpy_flags(&self.scope).map_err(err)?;
        if let Some(flags) = proofs.decided() {
            return Ok(vec![flags.to_string()]);
        }
        let mut open = Vec::new();
        for (name, proof, cond) in [
            ("C", &proofs.c_contiguous, proofs.c_condition),
            ("F", &proofs.f_contiguous, proofs.f_condition),
        ] {
            if proof.as_bool().is_none() {
                let cond = symshape::abbreviate(&cond.to_string());
                open.push(format!("{name}-contiguous exactly when {cond}"));
            }
        }
        Err(format!(
            "flags: the flags of {} depend on the values of its symbols (it is {}); bind them, or assume facts that decide it",
            symshape::abbreviate(&v.to_string()),
            open.join(", and ")
        ))
    }

    /// `bytes ITEMSIZE`: the layout in bytes of the bound view, or as expressions of a
    /// symbolic one.
    fn bytes(&mut self, rest: &str) -> StmtResult {
        need(rest, "bytes", "an item size in bytes, e.g. `bytes 4`")?;
        let itemsize = rest
            .parse::<i64>()
            .map_err(|_| format!("bytes: the item size `{rest}` is not an integer"))?;
        let layout = match self.unbound_view("bytes")? {
            Some(v) => v.byte_layout(itemsize).map_err(err)?.to_string(),
            None => self
                .one_view("bytes")?
                .byte_layout(itemsize)
                .map_err(err)?
                .to_string(),
        };
        Ok(vec![layout])
    }

    /// `view [SHAPE] byte_strides [..] byte_offset N itemsize K`.
    fn view_from_bytes(&mut self, lead: &str, opts: &[(&str, &str)]) -> StmtResult {
        const USAGE: &str = "expected `view [SHAPE] byte_strides [..] byte_offset N itemsize K`";
        let (mut strides, mut offset, mut itemsize) = (None, None, None);
        for &(kw, value) in opts {
            match kw {
                "byte_strides" => strides = Some(self.exprs(value)?),
                "byte_offset" => offset = Some(self.expr(value)?),
                "itemsize" => itemsize = Some(self.const_int(value)?),
                _ => {
                    return Err(format!(
                        "view: `{kw}` cannot be combined with byte strides; {USAGE}"
                    ))
                }
            }
        }
        let (Some(strides), Some(offset), Some(itemsize)) = (strides, offset, itemsize) else {
            return Err(format!(
                "view: a byte layout needs all three clauses; {USAGE}"
            ));
        };
        let shape = self.exprs(lead)?;
        let v = View::from_byte_strides(&self.scope, &shape, &strides, offset, itemsize)
            .map_err(err)?;
        self.stack = Some(ViewStack::new(v));
        Ok(Vec::new())
    }

    /// An integer: an expression that evaluates under the bindings.
    fn const_int(&self, text: &str) -> Result<i64, String> {
        let e = self.expr(text)?;
        self.scope
            .eval(e, &self.bindings)
            .map_err(|e| format!("in `{text}`: {e}"))
    }

    fn lower(&mut self, rest: &str) -> StmtResult {
        no_args(rest, "lower")?;
        let lowered = self.current("lower")?.lower(&self.scope).map_err(err)?;
        Ok(lowered.to_string().lines().map(str::to_owned).collect())
    }

    fn guards(&mut self, rest: &str) -> StmtResult {
        no_args(rest, "guards")?;
        let text = self.current("guards")?.guards_text();
        Ok(text.lines().map(str::to_owned).collect())
    }

    fn infer(&mut self, rest: &str) -> StmtResult {
        need(rest, "infer", "a concrete shape, e.g. `infer [7, 10]`")?;
        let concrete = list(rest)?
            .into_iter()
            .map(|t| {
                t.parse::<i64>()
                    .map_err(|_| format!("infer: `{t}` is not an integer (in `{rest}`)"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let shape = self.current("infer")?.shape().to_vec();
        let mut next = self.bindings.clone();
        let inferred = infer(&self.scope, &shape, &concrete, &mut next).map_err(err)?;
        self.scope.check(&next).map_err(err)?;
        self.bind_stack(&next)?;
        self.bindings = next;
        Ok(vec![inferred.to_string()])
    }

    /// The current stack with every symbol replaced by its bound value, its guards checked.
    fn bound(&self, stmt: &str) -> Result<ConcreteStack, String> {
        self.bound_stack(stmt, self.current(stmt)?)
    }

    /// `stack` bound to the session's values, for `stmt`.
    fn bound_stack(&self, stmt: &str, stack: &ViewStack) -> Result<ConcreteStack, String> {
        stack
            .bind(&self.scope, &self.bindings)
            .map_err(|e| match e {
                symshape_view::Error::Symshape(symshape::Error::Unbound { name, .. }) => {
                    format!("{stmt}: symbol `{name}` of the current view is unbound; bind it first")
                }
                e => e.to_string(),
            })
    }

    /// Binds the current stack under `b` when every symbol it uses is bound, so that a
    /// guard that fails is reported by the statement that bound the last value.
    fn bind_stack(&self, b: &Bindings) -> Result<(), String> {
        match &self.stack {
            Some(stack) => check_bound(stack, &self.scope, b),
            None => Ok(()),
        }
    }

    fn show(&mut self, rest: &str) -> StmtResult {
        no_args(rest, "show")?;
        let stack = self.current("show")?;
        Ok(stack.to_string().lines().map(str::to_owned).collect())
    }

    fn offsets(&mut self, rest: &str) -> StmtResult {
        no_args(rest, "offsets")?;
        Ok(vec![self.bound("offsets")?.offsets_line().map_err(err)?])
    }

    fn plan(&mut self, rest: &str) -> StmtResult {
        no_args(rest, "plan")?;
        let bound = self.bound("plan")?;
        let plan = plan_materialize::<i64>(&bound).map_err(err)?;
        Ok(plan.to_string().lines().map(str::to_owned).collect())
    }

    fn values(&mut self, rest: &str) -> StmtResult {
        let pad = if rest.is_empty() {
            0
        } else {
            rest.parse::<i64>()
                .map_err(|_| format!("values: the pad value `{rest}` is not an integer"))?
        };
        let bound = self.bound("values")?;
        if bound.numel() > MAX_OFFSETS {
            return Err(format!(
                "values: the view has {} elements, more than the {MAX_OFFSETS} a `values` line prints; shrink it first",
                bound.numel()
            ));
        }
        let buf = self.buffer_values("values", &self.origin.buffer, &bound, pad)?;
        let vals = materialize(Input::new(&buf, &bound).pad(pad)).map_err(err)?;
        let mut line = format!("values {:?}:", bound.shape());
        for v in vals.values {
            line.push(' ');
            line.push_str(&v.to_string());
        }
        Ok(vec![line])
    }

    /// The elements of `buffer`, as long as `bound` (bound over it) needs: the script's
    /// buffer holds `0, 1, 2, ...`; a gathered one is filled by the kernels from its source,
    /// itself bound and read from its own buffer, with `pad` for the elements the source
    /// reads from padding (as `copy` writes them).
    fn buffer_values(
        &self,
        stmt: &'static str,
        buffer: &Buffer,
        bound: &ConcreteStack,
        pad: i64,
    ) -> Result<Vec<i64>, String> {
        match buffer {
            // Offsets are i64, so every index of the buffer fits in one.
            Buffer::Input => counting_buffer(stmt, bound, |i| i as i64),
            Buffer::Gathered(g) => {
                let source = self.bound_stack(stmt, &g.stack)?;
                let values = self.buffer_values(stmt, &g.buffer, &source, pad)?;
                let mut failed = None;
                let op = g.op.map(|e| {
                    self.scope.eval(e, &self.bindings).unwrap_or_else(|e| {
                        failed.get_or_insert(e);
                        0
                    })
                });
                if let Some(e) = failed {
                    return Err(format!(
                        "{stmt}: the {} this stack was gathered by: {e}",
                        g.op
                    ));
                }
                let got = gather(Input::new(&values, &source).pad(pad), &op).map_err(err)?;
                Ok(got.values)
            }
        }
    }

    /// `broadcast_shapes [..] [..] ...`: NumPy's broadcast of the shapes, with the guards it
    /// holds under; a guard whose symbols are all bound is checked.
    fn broadcast_shapes(&mut self, rest: &str) -> StmtResult {
        need(
            rest,
            "broadcast_shapes",
            "shapes, e.g. `broadcast_shapes [n, 1] [3]`",
        )?;
        let shapes = split_top(rest, ' ')?
            .into_iter()
            .filter(|part| !part.is_empty())
            .map(|part| self.exprs(part))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&[Expr]> = shapes.iter().map(Vec::as_slice).collect();
        let res = broadcast_shapes(&self.scope, &refs).map_err(err)?;
        let mut out = vec![format!(
            "broadcast_shapes: [{}]",
            res.shape
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )];
        for g in &res.guards {
            match g.check(&self.bindings) {
                Err(symshape_view::Error::Symshape(symshape::Error::Unbound { .. })) | Ok(()) => {}
                Err(e) => return Err(err(e)),
            }
            out.push(g.to_string());
        }
        Ok(out)
    }

    /// `as_strided [SHAPE] strides [S, ...] [offset E]`; the offset defaults to the current
    /// top view's (PyTorch's default storage offset is the tensor's own).
    fn as_strided_op(&self, rest: &str) -> Result<Op, String> {
        const USAGE: &str = "expected `as_strided [SHAPE] strides [S, ...] [offset E]`";
        let (lead, opts) = clauses(rest, &["strides", "offset"])?;
        let mut strides = None;
        let mut offset = None;
        for (kw, value) in opts {
            match kw {
                "strides" => strides = Some(self.exprs(value)?),
                _ => offset = Some(self.expr(value)?),
            }
        }
        let strides =
            strides.ok_or_else(|| format!("as_strided: the strides are missing; {USAGE}"))?;
        let offset = match offset {
            Some(o) => o,
            None => self.current("as_strided")?.top().offset(),
        };
        Ok(Op::AsStrided {
            shape: self.exprs(lead)?,
            strides,
            offset,
        })
    }

    /// `sliding_window_view [W, ...] [axis [A, ...]]`.
    fn sliding_window_op(&self, rest: &str) -> Result<Op, String> {
        let (lead, opts) = clauses(rest, &["axis"])?;
        let axes = match opts.first() {
            Some((_, value)) => Some(axes("sliding_window_view", value)?),
            None => None,
        };
        Ok(Op::SlidingWindowView {
            window: self.exprs(lead)?,
            axes,
        })
    }

    fn bench(&mut self, rest: &str) -> StmtResult {
        let bound = match rest {
            "f32" | "f16" | "bf16" => self.bound("bench")?,
            _ => {
                return Err(format!(
                    "bench: expected the element type `f32`, `f16` or `bf16`, found `{rest}`"
                ))
            }
        };
        // f16 and bf16 run the 2-byte kernels (those of u16) on half the bytes of f32.
        let figures = match rest {
            "f16" => bench_materialize(&bound, BENCH_RUNS, |i| f16::from_f32(i as f32))?,
            "bf16" => bench_materialize(&bound, BENCH_RUNS, |i| bf16::from_f32(i as f32))?,
            _ => bench_materialize_f32(&bound, BENCH_RUNS)?,
        };
        Ok(vec![figures.to_string()])
    }

    fn current(&self, stmt: &str) -> Result<&ViewStack, String> {
        self.stack
            .as_ref()
            .ok_or_else(|| format!("{stmt}: no current view; start with `view [SHAPE]`"))
    }

    fn expr(&self, text: &str) -> Result<Expr, String> {
        self.scope
            .parse_expr(text)
            .map_err(|e| self.located(text, e))
    }

    fn cond(&self, text: &str) -> Result<Cond, String> {
        self.scope
            .parse_cond(text)
            .map_err(|e| self.located(text, e))
    }

    /// `e` as a message; a parse error names its column in the line (not in `text`, the
    /// part of the line that was parsed) and quotes `text`.
    fn located(&self, text: &str, e: symshape::Error) -> String {
        match e {
            symshape::Error::Parse { column, message } => {
                let before = (text.as_ptr() as usize)
                    .checked_sub(self.line_at)
                    .and_then(|at| self.line.get(..at))
                    .map_or(0, |s| s.chars().count());
                format!("parse: column {}: {message} (in `{text}`)", before + column)
            }
            e => e.to_string(),
        }
    }

    fn exprs(&self, text: &str) -> Result<Vec<Expr>, String> {
        list(text)?.into_iter().map(|t| self.expr(t)).collect()
    }

    fn pairs(&self, text: &str) -> Result<Vec<(Expr, Expr)>, String> {
        pair_list(text)?
            .into_iter()
            .map(|(a, b)| Ok((self.expr(a)?, self.expr(b)?)))
            .collect()
    }
}

/// `astype FROM TO [copy BOOL]` (NumPy's default copies) or `asarray FROM TO` (no copy when
/// the types agree).
fn astype_op(stmt: &str, rest: &str) -> Result<Op, String> {
    let usage = if stmt == "asarray" {
        "expected `asarray FROM TO`, two element types such as `int32 float64`"
    } else {
        "expected `astype FROM TO [copy true|false]`, two element types such as `int32 float64`"
    };
    let keywords: &[&'static str] = if stmt == "asarray" { &[] } else { &["copy"] };
    let (lead, opts) = clauses(rest, keywords)?;
    let [from, to] = two_words(lead).ok_or_else(|| format!("{stmt}: {usage}, found `{rest}`"))?;
    let dtype = |w: &str| {
        w.parse::<DType>()
            .map_err(|e| format!("{stmt}: {e}; {usage}"))
    };
    let copy = match opts.first() {
        None => stmt == "astype",
        Some((_, v)) => bool_word(stmt, v)?,
    };
    Ok(Op::AsType {
        from: dtype(from)?,
        to: dtype(to)?,
        copy,
    })
}

/// Exactly two whitespace-separated words.
fn two_words(text: &str) -> Option<[&str; 2]> {
    let words: Vec<&str> = text.split_whitespace().collect();
    <[&str; 2]>::try_from(words).ok()
}

/// `true` or `false` (Python's `True` and `False` too).
fn bool_word(stmt: &str, w: &str) -> Result<bool, String> {
    match w {
        "true" | "True" => Ok(true),
        "false" | "False" => Ok(false),
        _ => Err(format!("{stmt}: `{w}` is not `true` or `false`")),
    }
}

/// A list of booleans, `[true, false, ...]`.
fn bools(stmt: &str, text: &str) -> Result<Vec<bool>, String> {
    list(text)?
        .into_iter()
        .map(|w| bool_word(stmt, w))
        .collect()
}

/// `promote_types A B` (two element types) and `result_type X ...` (element types and
/// Python scalars: `True`, `3`, `1.0`).
fn dtype_statement(stmt: &str, rest: &str) -> StmtResult {
    let usage = if stmt == "promote_types" {
        "two element types, e.g. `promote_types int32 float32`"
    } else {
        "element types or python scalars, e.g. `result_type float32 1.0`"
    };
    need(rest, stmt, usage)?;
    let operands = rest
        .split_whitespace()
        .map(|w| w.parse::<Operand>().map_err(|e| format!("{stmt}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let res = if stmt == "promote_types" {
        let [Operand::Array(a), Operand::Array(b)] = operands[..] else {
            return Err(format!("{stmt}: expected {usage}, found `{rest}`"));
        };
        promote_types(a, b)
    } else {
        result_type(&operands).map_err(err)?
    };
    Ok(vec![format!("{stmt}: {res}")])
}

/// `reinterpret FROM_BYTES TO_BYTES`.
fn reinterpret_op(rest: &str) -> Result<Op, String> {
    const USAGE: &str = "expected `reinterpret FROM_BYTES TO_BYTES`";
    let [from, to] =
        two_words(rest).ok_or_else(|| format!("reinterpret: {USAGE}, found `{rest}`"))?;
    let size = |w: &str| {
        w.parse::<usize>()
            .map_err(|_| format!("reinterpret: `{w}` is not a number of bytes; {USAGE}"))
    };
    Ok(Op::Reinterpret {
        from: size(from)?,
        to: size(to)?,
    })
}

/// Exactly `N` whitespace-separated non-negative integers (axes, pieces) of `stmt`.
fn numbers<const N: usize>(stmt: &str, text: &str, usage: &str) -> Result<[usize; N], String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let parsed = words
        .iter()
        .map(|w| w.parse::<usize>().ok())
        .collect::<Option<Vec<usize>>>();
    parsed
        .and_then(|v| <[usize; N]>::try_from(v).ok())
        .ok_or_else(|| format!("{stmt}: expected {usage}, found `{text}`"))
}

/// `rot90 K [A B]`: `K` quarter turns (any integer) in the plane of axes `A` and `B`
/// (0 and 1 when left out).
fn rot90_op(text: &str) -> Result<Op, String> {
    let usage = || format!("rot90: expected `K` or `K AXIS AXIS`, found `{text}`");
    let (k, plane) = text
        .trim()
        .split_once(char::is_whitespace)
        .unwrap_or((text.trim(), ""));
    let k = k.parse::<i64>().map_err(|_| usage())?;
    let axes = match plane.trim() {
        "" => [0, 1],
        plane => numbers("rot90", plane, "`K AXIS AXIS`").map_err(|_| usage())?,
    };
    Ok(Op::Rot90 { k, axes })
}

/// An axis number, then the rest of `text` (a list).
fn axis_and<'a>(stmt: &str, text: &'a str, usage: &str) -> Result<(usize, &'a str), String> {
    text.trim()
        .split_once(char::is_whitespace)
        .and_then(|(a, rest)| Some((a.parse::<usize>().ok()?, rest.trim())))
        .ok_or_else(|| format!("{stmt}: expected {usage}, found `{text}`"))
}

/// Parses a list of axis numbers.
fn axes(stmt: &str, text: &str) -> Result<Vec<usize>, String> {
    list(text)?
        .into_iter()
        .map(|t| {
            t.parse::<usize>()
                .map_err(|_| format!("{stmt}: `{t}` is not an axis number (in `{text}`)"))
        })
        .collect()
}

fn no_args(rest: &str, stmt: &str) -> Result<(), String> {
    if rest.is_empty() {
        Ok(())
    } else {
        Err(format!("{stmt}: takes no arguments, found `{rest}`"))
    }
}

fn need(rest: &str, stmt: &str, what: &str) -> Result<(), String> {
    if rest.is_empty() {
        Err(format!("{stmt}: expected {what}"))
    } else {
        Ok(())
    }
}

/// `message` with every control character but the tab written as an escape (`\u{0}`).
fn escape_controls(message: &str) -> String {
    if !message.contains(|c: char| c.is_control() && c != '\t') {
        return message.to_owned();
    }
    message
        .chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The one view of a bound stack, for statements that compare views of one buffer.
fn one_level(stmt: &str, what: &str, stack: ConcreteStack) -> Result<ConcreteView, String> {
    match stack.into_levels().as_slice() {
        [v] => Ok(v.clone()),
        levels => Err(format!(
            "{stmt}: the {what} has {} views; {stmt} compares one-view stacks (materialize the other first)",
            levels.len()
        )),
    }
}

/// The one view of `views` when it has no mask (`masked` says whether a view has one), for
/// statements that answer for one view of storage; else `stmt`'s error, the one for several
/// views followed by `hint`.
fn unmasked_only_view<'a, V: std::fmt::Display>(
    stmt: &str,
    views: &'a [V],
    masked: fn(&V) -> bool,
    hint: &str,
) -> Result<&'a V, String> {
    let [v] = views else {
        return Err(format!(
            "{stmt}: the current stack has {} views; {stmt} works on a one-view stack without a mask{hint}",
            views.len()
        ));
    };
    if masked(v) {
        return Err(format!(
            "{stmt}: the current view has a mask ({v}); {stmt} works on a one-view stack without a mask"
        ));
    }
    Ok(v)
}
