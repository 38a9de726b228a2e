//! The public [`View`]: shape, strides, offset and mask as symshape expressions,
//! stored as a [`ConcreteView`] whenever they are all constants.
//!
//! Representation invariants:
//!
//! 1. `strides.len() == shape.len()`, and a mask has one `(b, e)` pair per axis.
//! 2. A view whose fields are all constants and that has no pending guard is stored
//!    as a [`ConcreteView`] (it satisfies that type's invariants), so ops with
//!    constant arguments run on the exact engine without touching the interner; its
//!    fields as expressions are built once, on first request.
//! 3. A symbolic view (a field is symbolic, or a guard is pending) satisfies, for
//!    every binding that satisfies its guards, the invariants of [`ConcreteView`]
//!    up to its normalisations (zero-size views, full masks), which binding applies.
//!
//! Ops with constant arguments on a concrete view run in [`crate::concrete`]; the
//! others run in `symbolic`, which proves, refutes or records each precondition as
//! a guard. [`View::apply`] (in `dispatch`) is the one place that chooses.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use symshape::Expr;

use crate::concrete::ConcreteView;
use crate::error::{at_axis, fmt_list, fmt_pairs, Error, Result};
use crate::guard::{add_guards, Guard};

/// A strided view with an optional per-axis validity mask.
///
/// Element `idx` is valid when `b[i] <= idx[i] < e[i]` on every axis (or there is no
/// mask), and then lives at buffer offset `offset + sum(idx[i] * strides[i])`.
///
/// Ops come from [`View::apply`] and the named methods of [`ViewOps`](crate::ViewOps).
/// Equality and hashing are structural: two views are equal when their fields and
/// guards are (a concrete and a symbolic view never are).
#[derive(Clone, Debug)]
pub struct View {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    /// Invariant 2: the exact engine's form, with its fields as expressions once asked for.
    Concrete(ConcreteView, OnceLock<Box<Fields>>),
    /// A symbolic field or a pending guard; shared, so that a stack of many views is
    /// cloned (by every op, which returns a new stack) for the price of its length.
    Symbolic(Arc<Fields>, Arc<[Guard]>),
}

/// The fields of a view: as expressions in a symbolic view; as `i64` while the core
/// field rules ([`crate::fields`]) run for the exact engine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Fields<D = Expr> {
    pub(crate) shape: Vec<D>,
    pub(crate) strides: Vec<D>,
    pub(crate) offset: D,
    pub(crate) mask: Option<Vec<(D, D)>>,
}

impl Fields {
    fn of_concrete(c: &ConcreteView) -> Fields {
        let lit = |v: &[i64]| v.iter().map(|&d| Expr::from(d)).collect();
        Fields {
            shape: lit(c.shape()),
            strides: lit(c.strides()),
            offset: Expr::from(c.offset()),
            mask: c.mask().map(|m| {
                m.iter()
                    .map(|&(b, e)| (Expr::from(b), Expr::from(e)))
                    .collect()
            }),
        }
    }

    /// The exact engine's form when every field is a constant.
    fn to_concrete(&self) -> Option<ConcreteView> {
        let shape = all_const(&self.shape)?;
        let strides = all_const(&self.strides)?;
        let offset = self.offset.as_i64()?;
        let mask = match &self.mask {
            None => None,
            Some(m) => Some(
                m.iter()
                    .map(|(b, e)| Some((b.as_i64()?, e.as_i64()?)))
                    .collect::<Option<Vec<_>>>()?,
            ),
        };
        ConcreteView::create(&shape, Some(&strides), offset, mask.as_deref()).ok()
    }
}

fn all_const(v: &[Expr]) -> Option<Vec<i64>> {
    v.iter().map(|e| e.as_i64()).collect()
}

/// A list of expressions as messages quote it: each longer than 100 characters is
/// abbreviated ([`symshape::abbreviate`]).
pub(crate) fn short_list(v: &[Expr]) -> String {
    let parts: Vec<String> = v
        .iter()
        .map(|e| symshape::abbreviate(&e.to_string()))
        .collect();
    format!("[{}]", parts.join(", "))
}

impl From<ConcreteView> for View {
    fn from(v: ConcreteView) -> View {
        View {
            repr: Repr::Concrete(v, OnceLock::new()),
        }
    }
}

impl From<&ConcreteView> for View {
    fn from(v: &ConcreteView) -> View {
        View::from(v.clone())
    }
}

impl PartialEq for View {
    fn eq(&self, other: &View) -> bool {
        match (&self.repr, &other.repr) {
            (Repr::Concrete(a, _), Repr::Concrete(b, _)) => a == b,
            (Repr::Symbolic(a, ga), Repr::Symbolic(b, gb)) => a == b && ga == gb,
            _ => false,
        }
    }
}

impl Eq for View {}

impl Hash for View {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match &self.repr {
            Repr::Concrete(c, _) => {
                0u8.hash(h);
                c.hash(h);
            }
            Repr::Symbolic(f, g) => {
                1u8.hash(h);
                f.hash(h);
                g.hash(h);
            }
        }
    }
}

impl View {
    /// A row-major view of a constant `shape` at offset 0.
    ///
    /// # Errors
    /// As [`ConcreteView::create`].
    pub fn contiguous(shape: &[i64]) -> Result<View> {
        ConcreteView::contiguous(shape).map(View::from)
    }

    /// NumPy's `as_strided`, checked against a buffer of `buffer_len` elements.
    ///
    /// # Errors
    /// As [`ConcreteView::as_strided`].
    pub fn as_strided(
        shape: &[i64],
        strides: &[i64],
        offset: i64,
        buffer_len: i64,
    ) -> Result<View> {
        ConcreteView::as_strided(shape, strides, offset, buffer_len).map(View::from)
    }

    /// A view from expression fields and guards, stored concretely when it can be
    /// (invariant 2).
    pub(crate) fn from_fields(f: Fields, guards: Vec<Guard>) -> View {
        if guards.is_empty() {
            if let Some(c) = f.to_concrete() {
                return View {
                    repr: Repr::Concrete(c, OnceLock::from(Box::new(f))),
                };
            }
        }
        View {
            repr: Repr::Symbolic(Arc::new(f), guards.into()),
        }
    }

    pub(crate) fn with_guards(self, extra: &[Guard]) -> View {
        if extra.is_empty() {
            return self;
        }
        let (f, mut guards) = self.into_parts();
        add_guards(&mut guards, extra.iter().cloned());
        View::from_fields(f, guards)
    }

    fn into_parts(self) -> (Fields, Vec<Guard>) {
        match self.repr {
            Repr::Concrete(c, cache) => (
                cache
                    .into_inner()
                    .map_or_else(|| Fields::of_concrete(&c), |b| *b),
                Vec::new(),
            ),
            Repr::Symbolic(f, g) => (Arc::unwrap_or_clone(f), g.to_vec()),
        }
    }

    /// The fields as expressions.
    pub(crate) fn fields(&self) -> &Fields {
        match &self.repr {
            Repr::Concrete(c, cache) => cache.get_or_init(|| Box::new(Fields::of_concrete(c))),
            Repr::Symbolic(f, _) => f,
        }
    }

    /// The guards the ops that built this view recorded: preconditions that
    /// depend on the values of symbols, checked by [`View::bind`].
    pub fn guards(&self) -> &[Guard] {
        match &self.repr {
            Repr::Concrete(..) => &[],
            Repr::Symbolic(_, g) => g,
        }
    }

    /// The exact engine's form, when every field is a constant and no guard is
    /// pending.
    pub fn as_concrete(&self) -> Option<&ConcreteView> {
        match &self.repr {
            Repr::Concrete(c, _) => Some(c),
            Repr::Symbolic(..) => None,
        }
    }

    /// The exact engine's form of this view, or [`Error::Symbolic`] naming `op`.
    ///
    /// # Errors
    /// [`Error::Symbolic`] when a field is symbolic or a guard is pending.
    pub fn to_concrete(&self, op: &'static str) -> Result<ConcreteView> {
        match &self.repr {
            Repr::Concrete(c, _) => Ok(c.clone()),
            Repr::Symbolic(f, guards) => {
                let symbolic = |what, e: Expr| Error::Symbolic {
                    op,
                    what,
                    expr: e.to_string(),
                };
                if let Some(g) = guards.first() {
                    return Err(Error::Symbolic {
                        op,
                        what: "guard",
                        expr: g.text(),
                    });
                }
                let first = |v: &[Expr]| v.iter().copied().find(|e| !e.is_const());
                if let Some(e) = first(&f.shape) {
                    return Err(symbolic("shape", e));
                }
                if let Some(e) = first(&f.strides) {
                    return Err(symbolic("strides", e));
                }
                if !f.offset.is_const() {
                    return Err(symbolic("offset", f.offset));
                }
                let bounds = f.mask.iter().flatten().flat_map(|&(b, e)| [b, e]);
                match bounds.into_iter().find(|e| !e.is_const()) {
                    Some(e) => Err(symbolic("mask", e)),
                    // Constant fields that `create` rejects (an overflow).
                    None => Err(Error::Symbolic {
                        op,
                        what: "view",
                        expr: self.to_string(),
                    }),
                }
            }
        }
    }

    /// Whether the view is concrete: constant fields and no pending guard.
    pub fn is_concrete(&self) -> bool {
        self.as_concrete().is_some()
    }

    /// The sizes of the axes.
    pub fn shape(&self) -> &[Expr] {
        &self.fields().shape
    }

    /// The stride of every axis (also for masked views).
    pub fn strides(&self) -> &[Expr] {
        &self.fields().strides
    }

    /// The buffer offset of index `[0, ..., 0]`, extrapolated when it is masked.
    pub fn offset(&self) -> Expr {
        self.fields().offset
    }

    /// The per-axis valid ranges `[b, e)`, or `None` when every element is valid.
    pub fn mask(&self) -> Option<&[(Expr, Expr)]> {
        self.fields().mask.as_deref()
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        match &self.repr {
            Repr::Concrete(c, _) => c.ndim(),
            Repr::Symbolic(f, _) => f.shape.len(),
        }
    }

    /// The number of elements, valid or not, as an expression (1 for a scalar).
    pub fn numel(&self) -> Expr {
        match &self.repr {
            Repr::Concrete(c, _) => Expr::from(c.numel()),
            Repr::Symbolic(f, _) => f.shape.iter().copied().product(),
        }
    }

    /// The size of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis >= ndim`.
    pub fn dim(&self, axis: usize) -> Result<Expr> {
        at_axis("dim", self.shape(), axis, || self.ctx())
    }

    /// The stride of `axis`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `axis >= ndim`.
    pub fn stride(&self, axis: usize) -> Result<Expr> {
        at_axis("stride", self.strides(), axis, || self.ctx())
    }

    /// `view [2, 3] with strides [3, 1]`, as error messages name a view.
    pub(crate) fn ctx(&self) -> String {
        format!(
            "view {} with strides {}",
            short_list(self.shape()),
            short_list(self.strides())
        )
    }

    /// The view as messages name it, with offset and mask when present.
    pub(crate) fn ctx_full(&self) -> String {
        let mut s = self.ctx();
        if self.offset() != Expr::from(0) {
            s.push_str(&format!(
                " offset {}",
                symshape::abbreviate(&self.offset().to_string())
            ));
        }
        if let Some(m) = self.mask() {
            s.push_str(&format!(" mask {}", fmt_pairs(m)));
        }
        s
    }
}

impl crate::guard::Describe for View {
    fn describe(&self) -> String {
        self.ctx()
    }
}

impl fmt::Display for View {
    /// `view shape=[2, 3] strides=[3, 1] offset=0 mask=none`, or `mask=[(0, 2), (1, 3)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(c) = self.as_concrete() {
            return write!(f, "{c}");
        }
        write!(
            f,
            "view shape={} strides={} offset={} mask=",
            fmt_list(self.shape()),
            fmt_list(self.strides()),
            self.offset()
        )?;
        match self.mask() {
            None => write!(f, "none"),
            Some(m) => write!(f, "{}", fmt_pairs(m)),
        }
    }
}
