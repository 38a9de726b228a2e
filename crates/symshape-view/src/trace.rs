//! [`Trace`]: a record of view ops on a symbolic stack, printed for snapshot tests.

use std::fmt;

use symshape::{Bindings, Scope};

use crate::concrete::ConcreteStack;
use crate::error::{fmt_list, Result};
use crate::guard::values_of;
use crate::guard::Guard;
use crate::op::Op;
use crate::stack::ViewStack;
use crate::view::View;

/// One recorded step: what ran, the stack it produced and the guards it added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// `view [n, 768]`, `reshape [n, 12, 64]` or `bind n = 5`.
    pub label: String,
    /// The op that ran (`None` for the starting view and for binds), so a
    /// recorded chain can be replayed on another input ([`Trace::replay`]).
    pub op: Option<Op>,
    /// The stack after the step (concrete after a bind).
    pub stack: ViewStack,
    /// Guards this step added to the pending ones.
    pub added: Vec<Guard>,
}

/// Records each op with its resulting stack and the guards it added, and
/// optionally bound results. `Display` is stable: one header line per step, then
/// its views (and a line `copy` below the views that read a copy, as
/// [`ViewStack`]'s `Display`) and new guards indented. A copy an op records stays in
/// the stack ([`ViewStack::storage_level`]), so a replay keeps it too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    steps: Vec<Step>,
    /// The symbolic stack the ops act on (bind steps do not replace it).
    stack: ViewStack,
}

impl Trace {
    /// Starts a trace at `view`.
    pub fn new(view: View) -> Trace {
        let stack = ViewStack::new(view);
        let shape = fmt_list(stack.shape());
        Trace {
            steps: vec![Step {
                label: format!("view {shape}"),
                op: None,
                added: stack.guards(),
                stack: stack.clone(),
            }],
            stack,
        }
    }

    /// Runs `op` under `cx` and records it; a failing op records nothing.
    ///
    /// # Errors
    /// As [`ViewStack::apply`].
    pub fn apply(&mut self, cx: &Scope, op: &Op) -> Result<&ViewStack> {
        let op = op.clone();
        let next = self.stack.apply(cx, &op)?;
        let before = self.stack.guards();
        let added = next
            .guards()
            .into_iter()
            .filter(|g| !before.contains(g))
            .collect();
        self.steps.push(Step {
            label: op.to_string(),
            op: Some(op),
            stack: next.clone(),
            added,
        });
        self.stack = next;
        Ok(&self.stack)
    }

    /// Binds the current stack and records the concrete result; the symbolic
    /// stack stays current, so several bindings can be recorded.
    ///
    /// # Errors
    /// As [`ViewStack::bind`].
    pub fn bind(&mut self, cx: &Scope, b: &Bindings) -> Result<ConcreteStack> {
        let bound = self.stack.bind(cx, b)?;
        let mut syms: Vec<_> = b.to_vec().into_iter().map(|(s, _)| s).collect();
        syms.sort_by_key(|s| s.to_string());
        self.steps.push(Step {
            label: format!("bind {}", values_of(&syms, |s| b.get(s))),
            op: None,
            stack: ViewStack::from(bound.clone()),
            added: Vec::new(),
        });
        Ok(bound)
    }

    /// The current symbolic stack.
    #[must_use]
    pub fn stack(&self) -> &ViewStack {
        &self.stack
    }

    /// The recorded steps, in order.
    #[must_use]
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The recorded ops, in order (binds are not ops).
    pub fn ops(&self) -> impl Iterator<Item = &Op> {
        self.steps.iter().filter_map(|s| s.op.as_ref())
    }

    /// A new trace that runs the recorded ops, in order, on `view` (another
    /// input of the same rank, symbolic or concrete).
    ///
    /// # Errors
    /// The first op that fails on the new input, as [`Trace::apply`].
    pub fn replay(&self, cx: &Scope, view: View) -> Result<Trace> {
        let mut t = Trace::new(view);
        for op in self.ops() {
            t.apply(cx, op)?;
        }
        Ok(t)
    }
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, step) in self.steps.iter().enumerate() {
            if k > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", step.label)?;
            for line in step.stack.to_string().lines() {
                write!(f, "\n  {line}")?;
            }
            for g in &step.added {
                write!(f, "\n  guard {g}")?;
            }
        }
        Ok(())
    }
}
