//! Compiled evaluation: a list of expressions lowered to a flat instruction vector over
//! i64 registers, with symbols in input slots and shared sub-expressions computed once.

use hashbrown::HashMap;
use num_bigint::BigInt;
use num_traits::ToPrimitive;

use crate::display::id_text;
use crate::eval::{ceil_div_i64, floor_div_i64, floor_mod_i64};
use crate::expr::{check_id, Cond, Expr};
use crate::node::{node, CmpKind, Id, Node};
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
/// Running it does no hashing and no allocation; arithmetic is checked. It does not
/// check symbol ranges or assumptions: check the bindings once with
/// [`Scope::check`](crate::Scope::check) when they come from outside.
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
    /// Identifies the program a state was made for (clones share it: same layout).
    key: u64,
}

static NEXT_KEY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Registers and outputs of one [`Program`]: create once with [`Program::state`], reuse
/// for every run.
#[derive(Clone, Debug)]
pub struct ProgramState {
    regs: Vec<i64>,
    out: Vec<i64>,
    key: u64,
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
            expr: id_text(id),
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
            key,
        })
    }

    /// The input symbols, in slot order.
    pub fn slots(&self) -> &[Expr] {
        &self.slots
    }

    /// Number of instructions executed per run (inputs and constants excluded).
    pub fn len(&self) -> usize {
        self.body.len()
    }

    /// Whether a run executes no instruction.
    pub fn is_empty(&self) -> bool {
        self.body.is_empty()
    }

    /// Fresh registers for running this program.
    pub fn state(&self) -> ProgramState {
        let mut regs = vec![0; self.src.len()];
        for &(r, v) in &self.consts {
            regs[r as usize] = v;
        }
        ProgramState {
            regs,
            out: vec![0; self.outputs.len()],
            key: self.key,
        }
    }

    /// Runs with `inputs` in slot order; returns the outputs in `compile` order.
    /// Errors name the sub-expression that overflowed or divided by zero.
    pub fn run<'s>(&self, st: &'s mut ProgramState, inputs: &[i64]) -> Result<&'s [i64], Error> {
        if inputs.len() != self.slots.len() {
            return Err(Error::Kind {
                op: "run",
                expected: "one input per slot",
                found: format!("{} inputs for {} slots", inputs.len(), self.slots.len()),
            });
        }
        // A state made for another program is rebuilt once rather than trusted.
        if st.key != self.key {
            *st = self.state();
        }
        let regs = &mut st.regs;
        for (&r, &v) in self.slot_regs.iter().zip(inputs) {
            regs[r as usize] = v;
        }
        for &(op, dst) in &self.body {
            let r = |k: u32| regs[k as usize];
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
                Some(v) => regs[dst as usize] = v,
                None => {
                    return Err(Error::Overflow {
                        op: "run",
                        expr: self.src_text(dst),
                    })
                }
            }
        }
        for (o, &reg) in st.out.iter_mut().zip(&self.outputs) {
            *o = st.regs[reg as usize];
        }
        Ok(&st.out)
    }

    fn src_text(&self, reg: u32) -> String {
        self.src
            .get(reg as usize)
            .map_or_else(String::new, |&id| id_text(id))
    }
}
