//! Guards: preconditions of symbolic ops that could not be decided when the op ran.
//!
//! A guard is `lhs OP rhs` plus the op that recorded it and what it means. Proven
//! true it is dropped, proven false the op fails at once, otherwise it travels with
//! the view and is checked when the symbols are bound.

use std::fmt;

use symshape::{Bindings, CmpOp, Cond, Expr, Proof, Scope};

use crate::error::{Error, Result};

/// Declares [`GuardOp`] and its constants from one list, and [`GuardOp::ALL`] from the
/// same list, so that every name a guard can carry is one a loaded guard is looked up in.
macro_rules! guard_ops {
    ($($id:ident = $name:literal,)*) => {
        /// The name of the op or constructor that recorded a guard. Only the constants
        /// below exist (the field is private to this module), and a [`Checker`] takes one,
        /// so a new source of guards is a new line here and cannot be missing from
        /// [`GuardOp::ALL`], which loading a saved guard looks its op up in.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(crate) struct GuardOp(&'static str);

        impl GuardOp {
            $(pub(crate) const $id: GuardOp = GuardOp($name);)*

            /// Every op that records guards.
            #[cfg(feature = "serde")]
            pub(crate) const ALL: &'static [GuardOp] = &[$(GuardOp::$id),*];
        }
    };
}

guard_ops! {
    AS_STRIDED = "as_strided",
    BOOLEAN_MASK = "boolean_mask",
    BROADCAST_SHAPES = "broadcast_shapes",
    BYTE_STRIDES = "byte_strides",
    CANONICAL = "canonical",
    CHUNK = "chunk",
    COMPRESS = "compress",
    CONTIGUOUS = "contiguous",
    CREATE = "create",
    DIAGONAL = "diagonal",
    EXPAND = "expand",
    FLAGS = "flags",
    FLIP = "flip",
    INDEX = "index",
    MERGE = "merge",
    PAD = "pad",
    PERMUTE = "permute",
    RAVEL = "ravel",
    REINTERPRET = "reinterpret",
    RESHAPE = "reshape",
    SHRINK = "shrink",
    SPLIT = "split",
    SPLIT_SIZES = "split_sizes",
    SQUEEZE = "squeeze",
    STACK = "stack",
    TAKE = "take",
    TENSOR_SPLIT = "tensor_split",
    UNFOLD = "unfold",
    UNSQUEEZE = "unsqueeze",
    VIEW_AS_COMPLEX = "view_as_complex",
    VIEW_AS_REAL = "view_as_real",
}

impl GuardOp {
    /// The name, as guards and errors print it.
    pub(crate) const fn name(self) -> &'static str {
        self.0
    }

    /// The op named `name`, if it is one that records guards.
    #[cfg(feature = "serde")]
    pub(crate) fn parse(name: &str) -> Option<GuardOp> {
        GuardOp::ALL.iter().copied().find(|o| o.0 == name)
    }
}

/// A pending precondition `lhs OP rhs` of a symbolic op.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    op: GuardOp,
    lhs: Expr,
    cmp: CmpOp,
    rhs: Expr,
    what: String,
}

impl Guard {
    /// The op that recorded the guard.
    #[must_use]
    pub fn op(&self) -> &'static str {
        self.op.name()
    }

    /// The left side.
    #[must_use]
    pub fn lhs(&self) -> Expr {
        self.lhs
    }

    /// The comparison.
    #[must_use]
    pub fn cmp(&self) -> CmpOp {
        self.cmp
    }

    /// The right side.
    #[must_use]
    pub fn rhs(&self) -> Expr {
        self.rhs
    }

    /// What the guard means, e.g. `end of axis 0 within its size`.
    #[must_use]
    pub fn what(&self) -> &str {
        &self.what
    }

    /// The guard as a condition.
    #[must_use]
    pub fn cond(&self) -> Cond {
        self.lhs.compare(self.cmp, self.rhs)
    }

    /// `lhs OP rhs (what)`, the form error messages use.
    #[must_use]
    pub fn text(&self) -> String {
        format!(
            "{} {} {} ({})",
            self.lhs,
            self.cmp.as_str(),
            self.rhs,
            self.what
        )
    }

    /// Whether the guard holds for the values `l` and `r` of its sides.
    pub(crate) fn holds(&self, l: i64, r: i64) -> bool {
        crate::dim::Size::is(l, self.cmp, r)
    }

    /// Checks the guard under `b`.
    ///
    /// # Errors
    /// [`Error::Guard`] naming the op, the guard and the values when it fails;
    /// [`Error::Symshape`] when a side cannot be evaluated.
    pub fn check(&self, b: &Bindings) -> Result<()> {
        let l = self.lhs.eval(b)?;
        let r = self.rhs.eval(b)?;
        if self.holds(l, r) {
            return Ok(());
        }
        Err(self.failure(l, r, &values_of(&self.symbols(), |s| b.get(s))))
    }

    /// The symbols of both sides, sorted by name.
    pub(crate) fn symbols(&self) -> Vec<Expr> {
        let mut syms = self.lhs.symbols();
        syms.extend(self.rhs.symbols());
        by_name(syms)
    }

    pub(crate) fn failure(&self, l: i64, r: i64, values: &str) -> Error {
        Error::Guard {
            op: self.op.name(),
            guard: self.text(),
            detail: format!("{l} {} {r} is false with {values}", self.cmp.as_str()),
        }
    }
}

/// `n = 3, m = 5` for the bound symbols among `syms`.
pub(crate) fn values_of(syms: &[Expr], get: impl Fn(Expr) -> Option<i64>) -> String {
    let parts: Vec<String> = syms
        .iter()
        .filter_map(|&s| get(s).map(|v| format!("{s} = {v}")))
        .collect();
    if parts.is_empty() {
        return "no symbols bound".to_string();
    }
    parts.join(", ")
}

impl fmt::Display for Guard {
    /// `shrink: n - 1 <= n (end of axis 0 within its size)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.op.name(), self.text())
    }
}

/// Decides the preconditions of one op: proves them, fails on a false one and
/// collects the rest as guards (after those the input view already carried).
///
/// Proofs and simplification also use the pending guards as facts: a view is
/// only ever used under its guards (binding checks them before evaluating any
/// field), so `1:n - 1` under the guard `n - 1 >= 0` gets the shape `n - 2`
/// instead of a clamp that the guard makes redundant.
pub(crate) struct Checker<'a> {
    pub(crate) cx: &'a Scope,
    /// `cx` with the guards assumed, once there is a guard.
    facts: Option<Scope>,
    pub(crate) op: GuardOp,
    pub(crate) guards: Vec<Guard>,
    /// The view the op runs on, as error messages name it (formatted only for a message).
    ctx: Ctx<'a>,
}

/// Something messages can name (a view), described only when a message needs it.
pub(crate) trait Describe {
    /// `view [2, 3] with strides [3, 1]`.
    fn describe(&self) -> String;
}

/// What a [`Checker`]'s messages name: a described value, or a text.
pub(crate) enum Ctx<'a> {
    /// Described when a message needs it.
    Lazy(&'a dyn Describe),
    /// A description.
    Text(String),
}

impl Ctx<'_> {
    fn text(&self) -> String {
        match self {
            Ctx::Lazy(v) => v.describe(),
            Ctx::Text(t) => t.clone(),
        }
    }
}

impl From<String> for Ctx<'_> {
    fn from(t: String) -> Self {
        Ctx::Text(t)
    }
}

impl<'a, D: Describe> From<&'a D> for Ctx<'a> {
    fn from(v: &'a D) -> Self {
        Ctx::Lazy(v)
    }
}

impl<'a> Checker<'a> {
    pub(crate) fn new(
        cx: &'a Scope,
        op: GuardOp,
        guards: &[Guard],
        ctx: impl Into<Ctx<'a>>,
    ) -> Self {
        let ctx = ctx.into();
        let mut ck = Checker {
            cx,
            facts: None,
            op,
            guards: guards.to_vec(),
            ctx,
        };
        for g in guards {
            // Guards already accepted were consistent when they were stated.
            let _ = ck.assume(g.cond());
        }
        ck
    }

    /// The scope proofs run under: `cx` and the guards.
    fn scope(&self) -> &Scope {
        self.facts.as_ref().unwrap_or(self.cx)
    }

    /// Adds `c` to the facts; an error when it contradicts them (the scope's
    /// facts and the guards so far), which leaves the facts unchanged.
    fn assume(&mut self, c: Cond) -> std::result::Result<(), symshape::Error> {
        self.facts.get_or_insert_with(|| self.cx.clone()).assume(c)
    }

    /// Requires `lhs OP rhs`: nothing when proven, an error when proven false, a
    /// guard otherwise.
    pub(crate) fn require(
        &mut self,
        lhs: Expr,
        cmp: CmpOp,
        rhs: Expr,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        let lhs = self.scope().simplify(lhs);
        let rhs = self.scope().simplify(rhs);
        lhs.check()?;
        rhs.check()?;
        // The text is written only for a guard or an error.
        let guard = |what: String| Guard {
            op: self.op,
            lhs,
            cmp,
            rhs,
            what,
        };
        match self.scope().prove(lhs, cmp, rhs) {
            Proof::True => Ok(()),
            Proof::False => {
                // Refuted only with the pending guards as facts: say so, as
                // values the guards exclude may satisfy it.
                let under_guards =
                    self.facts.is_some() && !matches!(self.cx.prove(lhs, cmp, rhs), Proof::False);
                let how = under_guards.then_some("is false whenever the pending guards hold");
                Err(self.refusal(&guard(what()), how))
            }
            Proof::Unknown(_) => {
                let g = guard(what());
                // A guard no binding can meet together with the pending ones (the
                // proof above is local; the facts see them all) is refused here.
                let assumed = self.assume(g.cond());
                if let Err(e) = assumed {
                    if !matches!(e, symshape::Error::Contradiction { .. }) {
                        return Err(e.into());
                    }
                    let how = (!self.guards.is_empty()).then_some("contradicts the pending guards");
                    return Err(self.refusal(&g, how));
                }
                add_guards(&mut self.guards, [g]);
                Ok(())
            }
        }
    }

    /// The proof of `c` under `cx` and the guards.
    pub(crate) fn prove_cond(&self, c: Cond) -> Proof {
        self.scope().prove_cond(c)
    }

    /// The error for the refuted guard `g`: false for every value of the symbols, or
    /// (`how`) false together with the pending guards, which it names.
    fn refusal(&self, g: &Guard, how: Option<&str>) -> Error {
        let detail = match how {
            Some(how) => {
                format!(
                    "it {how} ({}), for {}",
                    texts(&self.guards),
                    self.ctx.text()
                )
            }
            None => format!(
                "it is false for every value of the symbols, for {}",
                self.ctx.text()
            ),
        };
        Error::Guard {
            op: self.op.name(),
            guard: g.text(),
            detail,
        }
    }

    /// Whether `lhs OP rhs` is proven.
    pub(crate) fn is(&self, lhs: Expr, cmp: CmpOp, rhs: Expr) -> bool {
        self.scope().prove(lhs, cmp, rhs).is_true()
    }

    pub(crate) fn simplify(&self, e: Expr) -> Expr {
        self.scope().simplify(e)
    }
}

/// The texts of `guards`, joined by `; `, as messages list them.
pub(crate) fn texts(guards: &[Guard]) -> String {
    let texts: Vec<String> = guards.iter().map(Guard::text).collect();
    texts.join("; ")
}

/// `syms` sorted by name, each symbol once. Distinct symbols may share a name, so equal
/// handles need not be adjacent.
pub(crate) fn by_name(mut syms: Vec<Expr>) -> Vec<Expr> {
    syms.sort_by_key(ToString::to_string);
    let mut seen = Vec::with_capacity(syms.len());
    syms.retain(|s| {
        let fresh = !seen.contains(s);
        seen.push(*s);
        fresh
    });
    syms
}

/// Appends each of `guards` unless an equal guard is already there.
pub(crate) fn add_guards(list: &mut Vec<Guard>, guards: impl IntoIterator<Item = Guard>) {
    for g in guards {
        let same = |o: &Guard| o.lhs == g.lhs && o.cmp == g.cmp && o.rhs == g.rhs;
        if !list.iter().any(same) {
            list.push(g);
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every name is listed once, so a loaded guard's op is found unambiguously.
    #[cfg(feature = "serde")]
    #[test]
    fn guard_op_names_are_distinct() {
        let mut names: Vec<&str> = super::GuardOp::ALL.iter().map(|o| o.name()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before);
        assert!(names.iter().all(|n| super::GuardOp::parse(n).is_some()));
    }

    use symshape::{CmpOp, Expr, Proof, Scope, SymbolSpec};

    use super::{Checker, Ctx, Guard, GuardOp};

    /// A guard the local proof leaves open but the facts with the pending guards
    /// refute (`n == 2*m` makes `n` even) is an error where it is stated, naming the
    /// guards it contradicts; one they allow is recorded.
    #[test]
    fn a_guard_contradicting_the_pending_ones_is_refused() {
        let mut cx = Scope::new();
        let n = cx.declare(&SymbolSpec::new("n").range(0, 8)).expect("n");
        let m = cx.declare(&SymbolSpec::new("m").range(0, 4)).expect("m");
        let pending = Guard {
            op: GuardOp::RESHAPE,
            lhs: n,
            cmp: CmpOp::Eq,
            rhs: m * 2,
            what: "sizes agree".into(),
        };
        let ctx = || Ctx::Text("view [n]".into());
        let ck = Checker::new(&cx, GuardOp::SHRINK, std::slice::from_ref(&pending), ctx());
        assert!(
            matches!(
                ck.prove_cond(n.compare(CmpOp::Eq, Expr::from(3))),
                Proof::Unknown(_)
            ),
            "the local proof must leave this open"
        );
        let mut ck = Checker::new(&cx, GuardOp::SHRINK, std::slice::from_ref(&pending), ctx());
        let e = ck
            .require(n, CmpOp::Eq, 3.into(), || "end of axis 0".into())
            .expect_err("contradiction");
        assert_eq!(
            e.to_string(),
            "shrink: guard n == 3 (end of axis 0) fails: it contradicts the pending guards \
             (n == 2*m (sizes agree)), for view [n]"
        );
        assert_eq!(ck.guards.len(), 1, "the refused guard is not recorded");
        ck.require(n, CmpOp::Eq, 4.into(), || "end of axis 0".into())
            .expect("consistent");
        assert_eq!(ck.guards.len(), 2);
    }
}
