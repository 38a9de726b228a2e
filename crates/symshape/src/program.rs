//! Compiled evaluation: a list of expressions lowered to a flat instruction vector over
//! i64 registers, with symbols in input slots and shared sub-expressions computed once.

use hashbrown::HashMap;
use num_bigint::BigInt;
use num_traits::ToPrimitive;

use crate::display::{id_text, short_text};
use crate::eval::{ceil_div_i64, check_with, floor_div_i64, floor_mod_i64, violated, Bindings};
use crate::expr::{check_id, describe_range, spec_of, Cond, Expr, SymbolSpec};
use crate::node::{info, node, CmpKind, Id, Node};
use crate::scope::Scope;
use crate::Error;

/// One instruction; operands are earlier register indices. Each instruction writes the
/// register with its own index.
#[derive(Clone, Copy, Debug)]
enum Op {
    Const(i64),
    Slot(u32),
    Add(u32, u32),
    Sub(u32, u32),
    Mul(u32, u32),
    AddConst(u32, i64),
    MulConst(u32, i64),
    /// `a + b * k`: one instruction per scaled term of a sum.
    AddMulConst(u32, u32, i64),
    /// Floor division by `2^k` is an arithmetic shift.
    ShrConst(u32, u32),
    /// Floor modulo by `2^k` is a mask (two's complement).
    MaskConst(u32, i64),
    /// Division by a constant >= 2 (never zero, never overflows).
    FloorDivConst(u32, i64),
    FloorModConst(u32, i64),
    FloorDiv(u32, u32),
    FloorMod(u32, u32),
    CeilDiv(u32, u32),
    Min(u32, u32),
    Max(u32, u32),
    Le0(u32),
    Eq0(u32),
    Ne0(u32),
    And(u32, u32),
    Or(u32, u32),
}

/// A compiled list of expressions (and conditions, as 0/1) over fixed symbol slots.
///
/// Running it does no hashing and no allocation; arithmetic is checked. A program from
/// [`Program::compile`] does not check symbol ranges or assumptions (check the bindings
/// once with [`Scope::check`] when they come from outside); one from
/// [`Program::compile_checked`] checks them exactly in the same run
/// ([`Program::run_checked`]).
///
/// ```
/// use symshape::{Expr, Program};
/// let n = Expr::symbol("n")?;
/// let m = Expr::symbol("m")?;
/// let prog = Program::compile(&[n, m], &[n * m + 1, (n + m).floor_div(2)])?;
/// let mut st = prog.state();
/// assert_eq!(prog.run(&mut st, &[3, 5])?, &[16, 4]);
/// # Ok::<(), symshape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Program {
    /// Non-leaf instructions in dependency order, with their destination registers.
    body: Vec<(Op, u32)>,
    /// The register of each input slot.
    slot_regs: Vec<u32>,
    /// Constant registers, written once when a state is made.
    consts: Vec<(u32, i64)>,
    /// The expression each register computes, for error messages only.
    src: Vec<Id>,
    slots: Vec<Expr>,
    outputs: Vec<u32>,
    /// The expression of each output, for the exact re-evaluation of a failed run.
    output_ids: Vec<Id>,
    /// The checks of [`Program::compile_checked`].
    checks: Option<Box<Checks>>,
    /// Identifies the program a state was made for (clones share it: same layout).
    key: u64,
}

/// Exact checks of the inputs against a scope, as [`Scope::check`] makes them.
#[derive(Clone, Debug)]
struct Checks {
    /// One per slot.
    slots: Vec<SlotCheck>,
    /// Slot indices in the order `Scope::check` visits bound symbols.
    order: Vec<usize>,
    /// Slot indices, every symbol after the symbols of its bounds.
    topo: Vec<usize>,
    /// The assumptions over the slots, with the register of their 0/1 value.
    assumptions: Vec<(Cond, u32)>,
    /// Only the assumptions, for the exact re-check.
    conds: Vec<Cond>,
    /// Whether some slot has a bound over other slots.
    any_exact: bool,
    /// A check could not be compiled (a constant beyond i64): every run re-checks
    /// exactly with the tree evaluator.
    cold: bool,
}

/// The declaration of one slot, lowered.
#[derive(Clone, Debug)]
struct SlotCheck {
    spec: SymbolSpec,
    /// The bounds' numeric ranges (exact for constant bounds): no binding can hold a
    /// value outside them.
    lo: i128,
    hi: i128,
    divisor: i128,
    /// Bounds over other slots, compared exactly in the run.
    exact_lo: Option<BoundCheck>,
    exact_hi: Option<BoundCheck>,
}

/// A bound computed in register `reg`; its value counts only when the slots `deps`
/// (the symbols it mentions) pass their own checks, as evaluation requires.
#[derive(Clone, Debug)]
struct BoundCheck {
    reg: u32,
    deps: Vec<usize>,
}

static NEXT_KEY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Registers and outputs of one [`Program`]: create once with [`Program::state`], reuse
/// for every run.
#[derive(Clone, Debug)]
pub struct ProgramState {
    regs: Vec<i64>,
    out: Vec<i64>,
    /// Per slot, whether it passed its range check (checked programs only).
    ok: Vec<bool>,
    key: u64,
}

/// Registers in a state's file: every program's file has at least this many, and a
/// program with at most this many runs on them as a fixed-size array.
const SMALL_FILE: usize = 256;

/// The register file [`Program::exec`] runs on: indexed by the program's register indices,
/// each below the file's length (the compiler numbers them so).
trait Registers {
    fn get(&self, k: u32) -> i64;
    fn set(&mut self, k: u32, v: i64);
}

/// The file of a program of at most [`SMALL_FILE`] registers: indexed by the low byte of a
/// register index (the whole index there), which needs no bounds check. About 15% off a
/// run of 30 instructions on an AMD EPYC family 25 (`compiled_eval/16x3`).
impl Registers for [i64; SMALL_FILE] {
    #[inline(always)]
    fn get(&self, k: u32) -> i64 {
        self[usize::from(k as u8)]
    }
    #[inline(always)]
    fn set(&mut self, k: u32, v: i64) {
        self[usize::from(k as u8)] = v;
    }
}

/// The file of a larger program.
impl Registers for [i64] {
    #[inline(always)]
    fn get(&self, k: u32) -> i64 {
        self[k as usize]
    }
    #[inline(always)]
    fn set(&mut self, k: u32, v: i64) {
        self[k as usize] = v;
    }
}

struct Compiler {
    ops: Vec<Op>,
    src: Vec<Id>,
    memo: HashMap<Id, u32>,
    slot_of: HashMap<Id, u32>,
    consts: HashMap<i64, u32>,
}

impl Compiler {
    fn push(&mut self, op: Op, src: Id) -> Result<u32, Error> {
        let r = u32::try_from(self.ops.len()).map_err(|_| {
            Error::Limit("limit: program with more than u32::MAX instructions".into())
        })?;
        self.ops.push(op);
        self.src.push(src);
        Ok(r)
    }

    fn konst(&mut self, v: i64, src: Id) -> Result<u32, Error> {
        if let Some(&r) = self.consts.get(&v) {
            return Ok(r);
        }
        let r = self.push(Op::Const(v), src)?;
        self.consts.insert(v, r);
        Ok(r)
    }

    fn big(&self, v: &BigInt, id: Id) -> Result<i64, Error> {
        v.to_i64().ok_or_else(|| Error::Overflow {
            op: "compile",
            expr: short_text(id),
        })
    }

    fn reg(&mut self, id: Id) -> Result<u32, Error> {
        if let Some(&r) = self.memo.get(&id) {
            return Ok(r);
        }
        let r = match node(id) {
            Node::Const(v) => {
                let v = self.big(v, id)?;
                self.konst(v, id)?
            }
            Node::Bool(b) => self.konst(i64::from(*b), id)?,
            Node::Sym(s) => {
                let slot = *self.slot_of.get(&id).ok_or_else(|| Error::Unbound {
                    op: "compile",
                    name: s.name.to_string(),
                })?;
                self.push(Op::Slot(slot), id)?
            }
            Node::Prod(fs) => {
                // Prefix products are interned so that `k*m*n` reuses a computed `k*m`.
                let mut acc: Option<(Id, u32)> = None;
                for (a, k) in fs.iter() {
                    let x = self.reg(*a)?;
                    for _ in 0..*k {
                        acc = Some(match acc {
                            None => (*a, x),
                            Some((pid, y)) => {
                                let prefix = crate::build::mul(pid, *a);
                                match self.memo.get(&prefix) {
                                    Some(&r) => (prefix, r),
                                    None => {
                                        let r = self.push(Op::Mul(y, x), prefix)?;
                                        self.memo.insert(prefix, r);
                                        (prefix, r)
                                    }
                                }
                            }
                        });
                    }
                }
                match acc {
                    Some((_, r)) => r,
                    None => self.konst(1, id)?,
                }
            }
            Node::Sum(ts, c) => {
                let mut acc: Option<u32> = None;
                for (m, k) in ts.iter() {
                    let x = self.reg(*m)?;
                    let k64 = self.big(k, id)?;
                    acc = Some(match (acc, k64) {
                        (None, 1) => x,
                        (None, k) => self.push(Op::MulConst(x, k), id)?,
                        (Some(y), 1) => self.push(Op::Add(y, x), id)?,
                        (Some(y), -1) => self.push(Op::Sub(y, x), id)?,
                        (Some(y), k) => self.push(Op::AddMulConst(y, x, k), id)?,
                    });
                }
                let c = self.big(c, id)?;
                match acc {
                    Some(y) if c != 0 => self.push(Op::AddConst(y, c), id)?,
                    Some(y) => y,
                    None => self.konst(c, id)?,
                }
            }
            Node::FloorDiv(a, b) | Node::FloorMod(a, b) => {
                let is_div = matches!(node(id), Node::FloorDiv(..));
                let x = self.reg(*a)?;
                let cst = crate::node::const_of(*b)
                    .and_then(|v| v.to_i64())
                    .filter(|v| *v >= 2);
                match cst {
                    Some(c) if (c & (c - 1)) == 0 && is_div => {
                        self.push(Op::ShrConst(x, c.trailing_zeros()), id)?
                    }
                    Some(c) if (c & (c - 1)) == 0 => self.push(Op::MaskConst(x, c - 1), id)?,
                    Some(c) if is_div => self.push(Op::FloorDivConst(x, c), id)?,
                    Some(c) => self.push(Op::FloorModConst(x, c), id)?,
                    None => {
                        let y = self.reg(*b)?;
                        self.push(
                            if is_div {
                                Op::FloorDiv(x, y)
                            } else {
                                Op::FloorMod(x, y)
                            },
                            id,
                        )?
                    }
                }
            }
            Node::CeilDiv(a, b) => {
                let (x, y) = (self.reg(*a)?, self.reg(*b)?);
                self.push(Op::CeilDiv(x, y), id)?
            }
            Node::Min(args) | Node::Max(args) | Node::And(args) | Node::Or(args) => {
                let mut acc: Option<u32> = None;
                for a in args.iter() {
                    let x = self.reg(*a)?;
                    acc = Some(match acc {
                        None => x,
                        Some(y) => {
                            let op = match node(id) {
                                Node::Min(_) => Op::Min(y, x),
                                Node::Max(_) => Op::Max(y, x),
                                Node::And(_) => Op::And(y, x),
                                _ => Op::Or(y, x),
                            };
                            self.push(op, id)?
                        }
                    });
                }
                match acc {
                    Some(r) => r,
                    None => self.konst(0, id)?,
                }
            }
            Node::Cmp(kind, d) => {
                let x = self.reg(*d)?;
                let op = match kind {
                    CmpKind::Le => Op::Le0(x),
                    CmpKind::Eq => Op::Eq0(x),
                    CmpKind::Ne => Op::Ne0(x),
                };
                self.push(op, id)?
            }
            Node::Invalid(_) => {
                return Err(check_id(id).err().unwrap_or(Error::Limit(String::new())))
            }
        };
        self.memo.insert(id, r);
        Ok(r)
    }
}

impl Program {
    /// Compiles `outputs` over the symbols `slots` (the order of the run's inputs).
    /// Fails on a symbol missing from `slots`, a constant beyond i64, or an invalid
    /// expression.
    pub fn compile(slots: &[Expr], outputs: &[Expr]) -> Result<Program, Error> {
        let ids: Vec<Id> = outputs.iter().map(|e| e.0).collect();
        Program::compile_ids(slots, &ids)
    }

    /// Like [`Program::compile`], for conditions (each output is 1 or 0).
    pub fn compile_conds(slots: &[Expr], outputs: &[Cond]) -> Result<Program, Error> {
        let ids: Vec<Id> = outputs.iter().map(|e| e.0).collect();
        Program::compile_ids(slots, &ids)
    }

    /// Like [`Program::compile`], plus exact checks of the inputs under `cx`: each
    /// slot's declared range and divisor (bounds that are expressions over other slots
    /// are computed in the program) and every assumption of `cx` whose symbols are all
    /// slots, `or` and `!=` included (as 0/1 registers). Run it with
    /// [`Program::run_checked`].
    ///
    /// ```
    /// use symshape::{Program, Scope};
    /// let mut cx = Scope::new();
    /// let n = cx.declare_str("n 1..=64")?;
    /// let i = cx.declare_str("i 0..n")?;
    /// cx.assume_str("n == 8 or i != 3")?;
    /// let prog = Program::compile_checked(&cx, &[i, n], &[i * 2])?;
    /// let mut st = prog.state();
    /// assert_eq!(prog.run_checked(&mut st, &[3, 8])?, &[6]);
    /// assert_eq!(prog.run_checked(&mut st, &[2, 4])?, &[4]);
    /// let err = prog.run_checked(&mut st, &[5, 4]).unwrap_err();
    /// assert_eq!(err.to_string(), "bind: i = 5 is outside its range 0..=n - 1");
    /// let err = prog.run_checked(&mut st, &[3, 4]).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "bind: assumption `i != 3 or n == 8` is violated by i = 3, n = 4"
    /// );
    /// # Ok::<(), symshape::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Program::compile`], and [`Error::Kind`] when a symbol is given twice.
    pub fn compile_checked(cx: &Scope, slots: &[Expr], outputs: &[Expr]) -> Result<Program, Error> {
        for (k, s) in slots.iter().enumerate() {
            if slots[..k].contains(s) {
                return Err(Error::Kind {
                    op: "compile",
                    expected: "distinct slots",
                    found: s.to_string(),
                });
            }
        }
        let ids: Vec<Id> = outputs.iter().map(|e| e.0).collect();
        let mut prog = Program::compile_ids(slots, &ids)?;
        let slot_of = |s: Expr| slots.iter().position(|&x| x == s);
        let covered = |e: Expr| e.symbols().into_iter().all(|s| slot_of(s).is_some());
        let mut extra: Vec<Id> = ids.clone();
        let mut pending: Vec<(usize, bool, Vec<usize>)> = Vec::new();
        let mut specs = Vec::with_capacity(slots.len());
        for (k, &s) in slots.iter().enumerate() {
            // `compile_ids` accepted only symbols.
            let spec = spec_of(s.0).ok_or_else(|| Error::Kind {
                op: "compile",
                expected: "a symbol",
                found: s.to_string(),
            })?;
            for (is_lo, b) in [(true, spec.lo), (false, spec.hi)] {
                let Some(b) = b.filter(|b| !b.is_const() && covered(*b)) else {
                    continue;
                };
                let deps = crate::visit::direct_symbols(b.0)
                    .into_iter()
                    .filter_map(|d| slot_of(Expr(d)))
                    .collect();
                extra.push(b.0);
                pending.push((k, is_lo, deps));
            }
            specs.push(spec);
        }
        let assumptions: Vec<Cond> = cx
            .assumptions()
            .iter()
            .copied()
            .filter(|a| a.symbols().into_iter().all(|s| slot_of(s).is_some()))
            .collect();
        extra.extend(assumptions.iter().map(|a| a.0));
        // A check beyond i64 (a huge constant) leaves the run to the exact re-check.
        let full = Program::compile_ids(slots, &extra).ok();
        let mut checks = Checks {
            slots: specs
                .into_iter()
                .map(|spec| {
                    let lo = spec
                        .lo
                        .and_then(|b| b.range().lo)
                        .map_or(i128::MIN, |v| clamp(&v));
                    let hi = spec
                        .hi
                        .and_then(|b| b.range().hi)
                        .map_or(i128::MAX, |v| clamp(&v));
                    SlotCheck {
                        lo,
                        hi,
                        divisor: i128::from(spec.multiple_of),
                        spec,
                        exact_lo: None,
                        exact_hi: None,
                    }
                })
                .collect(),
            order: (0..slots.len()).collect(),
            topo: (0..slots.len()).collect(),
            assumptions: Vec::new(),
            conds: assumptions.clone(),
            any_exact: false,
            cold: full.is_none(),
        };
        checks
            .order
            .sort_by(|&a, &b| crate::order::cmp(slots[a].0, slots[b].0));
        // The symbols of a bound nest inside the symbol, so they are shallower.
        checks.topo.sort_by_key(|&k| info(slots[k].0).depth);
        if let Some(full) = full {
            let regs = &full.outputs[ids.len()..];
            let (bound_regs, cond_regs) = regs.split_at(pending.len().min(regs.len()));
            checks.any_exact = !bound_regs.is_empty();
            for ((k, is_lo, deps), &reg) in pending.into_iter().zip(bound_regs) {
                let bc = Some(BoundCheck { reg, deps });
                if let Some(c) = checks.slots.get_mut(k) {
                    if is_lo {
                        c.exact_lo = bc;
                    } else {
                        c.exact_hi = bc;
                    }
                }
            }
            checks.assumptions = assumptions
                .into_iter()
                .zip(cond_regs.iter().copied())
                .collect();
            let n_out = ids.len();
            prog = full;
            prog.outputs.truncate(n_out);
            prog.output_ids.truncate(n_out);
        }
        prog.checks = Some(Box::new(checks));
        Ok(prog)
    }

    fn compile_ids(slots: &[Expr], outputs: &[Id]) -> Result<Program, Error> {
        let mut c = Compiler {
            ops: Vec::new(),
            src: Vec::new(),
            memo: HashMap::new(),
            slot_of: HashMap::new(),
            consts: HashMap::new(),
        };
        for (i, s) in slots.iter().enumerate() {
            if s.symbol_name().is_none() {
                return Err(Error::Kind {
                    op: "compile",
                    expected: "a symbol",
                    found: s.to_string(),
                });
            }
            let i = u32::try_from(i).map_err(|_| Error::Limit("limit: too many slots".into()))?;
            c.slot_of.entry(s.0).or_insert(i);
        }
        let mut outs = Vec::with_capacity(outputs.len());
        for &o in outputs {
            check_id(o)?;
            outs.push(c.reg(o)?);
        }
        // Leaves leave the instruction stream: slots are copied in, constants preloaded.
        let mut slot_regs = vec![None; slots.len()];
        let mut consts = Vec::new();
        let mut body = Vec::new();
        for (i, op) in c.ops.iter().enumerate() {
            let r = u32::try_from(i).map_err(|_| Error::Limit("limit: program too long".into()))?;
            match *op {
                Op::Slot(s) => {
                    if let Some(x) = slot_regs.get_mut(s as usize) {
                        *x = Some(r);
                    }
                }
                Op::Const(v) => consts.push((r, v)),
                op => body.push((op, r)),
            }
        }
        // Slots no output uses still get a scratch register so `run` can copy blindly.
        let mut n_regs = c.ops.len();
        let slot_regs = slot_regs
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    n_regs += 1;
                    (n_regs - 1) as u32
                })
            })
            .collect();
        let mut src = c.src;
        src.resize(n_regs, Id(0));
        let key = NEXT_KEY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Program {
            body,
            slot_regs,
            consts,
            src,
            slots: slots.to_vec(),
            outputs: outs,
            output_ids: outputs.to_vec(),
            checks: None,
            key,
        })
    }

    /// The input symbols, in slot order.
    #[must_use]
    pub fn slots(&self) -> &[Expr] {
        &self.slots
    }

    /// Number of instructions executed per run (inputs and constants excluded).
    #[must_use]
    pub fn len(&self) -> usize {
        self.body.len()
    }

    /// Whether a run executes no instruction.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.body.is_empty()
    }

    /// Fresh registers for running this program (at least 256 of them).
    #[must_use]
    pub fn state(&self) -> ProgramState {
        let mut regs = vec![0; self.src.len().max(SMALL_FILE)];
        for &(r, v) in &self.consts {
            regs[r as usize] = v;
        }
        ProgramState {
            regs,
            out: vec![0; self.outputs.len()],
            ok: vec![true; self.checks.as_ref().map_or(0, |c| c.slots.len())],
            key: self.key,
        }
    }

    /// Runs with `inputs` in slot order; returns the outputs in `compile` order.
    /// Errors name the sub-expression that overflowed or divided by zero.
    pub fn run<'s>(&self, st: &'s mut ProgramState, inputs: &[i64]) -> Result<&'s [i64], Error> {
        self.arity(inputs)?;
        self.exec(st, inputs)?;
        Ok(&st.out)
    }

    /// Runs a program from [`Program::compile_checked`], checking the inputs exactly:
    /// the result is what binding the slots to `inputs` and evaluating gives, i.e.
    /// [`Scope::check`] on bindings holding exactly these values, then
    /// [`Expr::eval`] of each output in order.
    ///
    /// A value outside the numeric range of its declaration (which no [`Bindings`]
    /// can hold) is reported first, in slot order, as [`Bindings::set`] reports it.
    /// When a run overflows i64 or divides by zero, the inputs and outputs are
    /// evaluated again exactly (unbounded intermediates, `Scope::check`'s order of
    /// errors), so the answer is the same; only that rare path allocates. On a
    /// program from [`Program::compile`] this is [`Program::run`].
    ///
    /// # Errors
    /// [`Error::OutOfRange`] naming the symbol, its value and its declared range;
    /// [`Error::Violated`] naming the assumption and its symbols' values; the
    /// evaluation errors of [`Expr::eval`].
    pub fn run_checked<'s>(
        &self,
        st: &'s mut ProgramState,
        inputs: &[i64],
    ) -> Result<&'s [i64], Error> {
        self.arity(inputs)?;
        // The exact path writes the outputs directly: give it this program's layout.
        if st.key != self.key {
            *st = self.state();
        }
        let Some(ck) = self.checks.as_deref() else {
            self.exec(st, inputs)?;
            return Ok(&st.out);
        };
        for (c, &v) in ck.slots.iter().zip(inputs) {
            let w = i128::from(v);
            if w < c.lo || w > c.hi || (c.divisor > 1 && w.rem_euclid(c.divisor) != 0) {
                return Err(out_of_range(&c.spec, v));
            }
        }
        if ck.cold || self.exec(st, inputs).is_err() {
            return self.exact(ck, st, inputs);
        }
        let regs = &st.regs;
        let ok = &mut st.ok;
        // Without bounds over other slots, the numeric checks above were exact.
        let topo: &[usize] = if ck.any_exact { &ck.topo } else { &[] };
        for &k in topo {
            let (Some(c), Some(&v)) = (ck.slots.get(k), inputs.get(k)) else {
                continue;
            };
            // A bound whose symbols fail their own checks cannot be evaluated, and
            // `Scope::check` then falls back to its numeric range (checked above).
            let pass = |b: &Option<BoundCheck>, below: bool| match b {
                Some(b) if b.deps.iter().all(|&d| ok.get(d).copied().unwrap_or(false)) => {
                    let x = regs.get(b.reg as usize).copied().unwrap_or(0);
                    if below {
                        x <= v
                    } else {
                        v <= x
                    }
                }
                _ => true,
            };
            let res = pass(&c.exact_lo, true) && pass(&c.exact_hi, false);
            if let Some(o) = ok.get_mut(k) {
                *o = res;
            }
        }
        let order: &[usize] = if ck.any_exact { &ck.order } else { &[] };
        if let Some(&k) = order.iter().find(|&&k| !ok.get(k).copied().unwrap_or(true)) {
            if let (Some(c), Some(&v)) = (ck.slots.get(k), inputs.get(k)) {
                return Err(out_of_range(&c.spec, v));
            }
        }
        for &(a, reg) in &ck.assumptions {
            if regs.get(reg as usize).copied() == Some(0) {
                return Err(violated(a, &Bindings::from_unchecked(&self.slots, inputs)));
            }
        }
        Ok(&st.out)
    }

    /// The exact answer of [`Program::run_checked`] by tree evaluation.
    fn exact<'s>(
        &self,
        ck: &Checks,
        st: &'s mut ProgramState,
        inputs: &[i64],
    ) -> Result<&'s [i64], Error> {
        let b = Bindings::from_unchecked(&self.slots, inputs);
        check_with(&b, &ck.conds)?;
        for (o, &id) in st.out.iter_mut().zip(&self.output_ids) {
            *o = Expr(id).eval(&b)?;
        }
        Ok(&st.out)
    }

    fn arity(&self, inputs: &[i64]) -> Result<(), Error> {
        if inputs.len() != self.slots.len() {
            return Err(Error::Kind {
                op: "run",
                expected: "one input per slot",
                found: format!("{} inputs for {} slots", inputs.len(), self.slots.len()),
            });
        }
        Ok(())
    }

    /// Runs the instructions and copies the outputs out.
    fn exec(&self, st: &mut ProgramState, inputs: &[i64]) -> Result<(), Error> {
        // A state made for another program is rebuilt once rather than trusted.
        if st.key != self.key {
            *st = self.state();
        }
        // Every register index of a program of at most `SMALL_FILE` registers is below it.
        match <&mut [i64; SMALL_FILE]>::try_from(st.regs.as_mut_slice()) {
            Ok(file) if self.src.len() <= SMALL_FILE => self.exec_in(file, &mut st.out, inputs),
            _ => self.exec_in(st.regs.as_mut_slice(), &mut st.out, inputs),
        }
    }

    /// [`Program::exec`] on the register file `regs`.
    fn exec_in<R: Registers + ?Sized>(
        &self,
        regs: &mut R,
        out: &mut [i64],
        inputs: &[i64],
    ) -> Result<(), Error> {
        for (&r, &v) in self.slot_regs.iter().zip(inputs) {
            regs.set(r, v);
        }
        for &(op, dst) in &self.body {
            let r = |k: u32| regs.get(k);
            let v = match op {
                Op::Add(a, b) => r(a).checked_add(r(b)),
                Op::Sub(a, b) => r(a).checked_sub(r(b)),
                Op::Mul(a, b) => r(a).checked_mul(r(b)),
                Op::AddConst(a, c) => r(a).checked_add(c),
                Op::MulConst(a, c) => r(a).checked_mul(c),
                Op::AddMulConst(a, b, c) => r(b).checked_mul(c).and_then(|t| r(a).checked_add(t)),
                Op::ShrConst(a, k) => Some(r(a) >> k),
                Op::MaskConst(a, m) => Some(r(a) & m),
                Op::FloorDivConst(a, c) => Some(r(a).div_euclid(c)),
                Op::FloorModConst(a, c) => Some(r(a).rem_euclid(c)),
                Op::FloorDiv(a, b) | Op::FloorMod(a, b) | Op::CeilDiv(a, b) => {
                    let (x, y) = (r(a), r(b));
                    if y == 0 {
                        return Err(Error::DivisionByZero {
                            op: "run",
                            expr: self.src_text(dst),
                        });
                    }
                    match op {
                        Op::FloorDiv(..) => floor_div_i64(x, y),
                        Op::FloorMod(..) => floor_mod_i64(x, y),
                        _ => ceil_div_i64(x, y),
                    }
                }
                Op::Min(a, b) => Some(r(a).min(r(b))),
                Op::Max(a, b) => Some(r(a).max(r(b))),
                Op::Le0(a) => Some(i64::from(r(a) <= 0)),
                Op::Eq0(a) => Some(i64::from(r(a) == 0)),
                Op::Ne0(a) => Some(i64::from(r(a) != 0)),
                Op::And(a, b) => Some(r(a) & r(b)),
                Op::Or(a, b) => Some(r(a) | r(b)),
                // Leaves never reach the body.
                Op::Const(v) => Some(v),
                Op::Slot(_) => Some(0),
            };
            match v {
                Some(v) => regs.set(dst, v),
                None => {
                    return Err(Error::Overflow {
                        op: "run",
                        expr: self.src_text(dst),
                    })
                }
            }
        }
        for (o, &reg) in out.iter_mut().zip(&self.outputs) {
            *o = regs.get(reg);
        }
        Ok(())
    }

    fn src_text(&self, reg: u32) -> String {
        self.src
            .get(reg as usize)
            .map_or_else(String::new, |&id| id_text(id))
    }
}

/// A range bound as i128, saturated past i64 (so every i64 compares as the bound does).
fn clamp(v: &BigInt) -> i128 {
    let lim = BigInt::from(i64::MAX) + 1;
    if v > &lim {
        i128::from(i64::MAX) + 1
    } else if v < &-lim {
        i128::from(i64::MIN) - 1
    } else {
        v.to_i128().unwrap_or(0)
    }
}

/// The error [`Bindings::set`] gives for `v`.
fn out_of_range(spec: &SymbolSpec, value: i64) -> Error {
    Error::OutOfRange {
        name: spec.name.clone(),
        value,
        range: describe_range(spec),
    }
}
