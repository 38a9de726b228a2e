//! The public handles `Expr` (integer) and `Cond` (boolean), symbols and operators.

use std::fmt;
use std::ops::{Add, AddAssign, BitAnd, BitOr, Mul, MulAssign, Neg, Not, Sub, SubAssign};

use num_bigint::BigInt;
use num_traits::{One, ToPrimitive, Zero};

use crate::build::{self, NoFacts, Poly};
use crate::memo::{self, OpKey};
use crate::node::{const_of, info, node, CmpKind, Id, Node, Sort, SymData};
use crate::num::{Cong, Interval};
use crate::Error;

/// An interned integer expression: a `Copy` handle, equal exactly when the canonical
/// forms are equal (so algebraically equal polynomials are the same handle).
///
/// `PartialEq`/`Hash` are structural; semantic questions go through
/// [`Scope::prove`](crate::Scope::prove).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Expr(pub(crate) Id);

/// An interned boolean condition (comparisons joined by `and`, `or`, `not`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cond(pub(crate) Id);

impl Expr {
    /// The integer constant `v`, from any primitive integer type or a `BigInt`:
    /// `Expr::constant(heads)` for a `heads: usize`, `Expr::constant(1u64 << 40)`.
    ///
    /// `Expr::from` takes an `i64` (so that `Expr::from(6)` has one meaning); the
    /// other integer types convert through this constructor or through
    /// `Expr::try_from`, which never fails.
    ///
    /// ```
    /// use symshape::Expr;
    ///
    /// let heads: usize = 12;
    /// assert_eq!(Expr::constant(heads), Expr::from(12));
    /// assert_eq!(Expr::try_from(u64::MAX)?.to_string(), "18446744073709551615");
    /// assert_eq!(Expr::constant(-3i8) * 2, Expr::from(-6));
    /// # Ok::<(), std::convert::Infallible>(())
    /// ```
    pub fn constant(v: impl Into<BigInt>) -> Expr {
        Expr(build::constant(v.into()))
    }

    /// A symbol with the default range `0..=i64::MAX` (see [`SymbolSpec`] for others).
    pub fn symbol(name: &str) -> Result<Expr, Error> {
        SymbolSpec::new(name).build()
    }

    /// The value, if this is a constant that fits an i64.
    #[must_use]
    pub fn as_i64(self) -> Option<i64> {
        const_of(self.0).and_then(|v| v.to_i64())
    }

    /// The value, if this is a constant.
    #[must_use]
    pub fn as_bigint(self) -> Option<BigInt> {
        const_of(self.0).cloned()
    }

    /// Whether this is a constant.
    #[must_use]
    pub fn is_const(self) -> bool {
        const_of(self.0).is_some()
    }

    /// The name, if this is a symbol.
    #[must_use]
    pub fn symbol_name(self) -> Option<&'static str> {
        match node(self.0) {
            Node::Sym(s) => Some(&s.name),
            _ => None,
        }
    }

    /// `self // rhs`, rounding toward minus infinity (as in Python).
    #[must_use]
    pub fn floor_div(self, rhs: impl Into<Expr>) -> Expr {
        Expr(build::floor_div(&NoFacts, self.0, rhs.into().0))
    }

    /// `self % rhs`, the remainder of [`Expr::floor_div`]: it has the sign of `rhs`.
    #[must_use]
    pub fn floor_mod(self, rhs: impl Into<Expr>) -> Expr {
        Expr(build::floor_mod(&NoFacts, self.0, rhs.into().0))
    }

    /// `ceil(self / rhs)`.
    #[must_use]
    pub fn ceil_div(self, rhs: impl Into<Expr>) -> Expr {
        Expr(build::ceil_div(&NoFacts, self.0, rhs.into().0))
    }

    /// The smaller of the two.
    #[must_use]
    pub fn min(self, rhs: impl Into<Expr>) -> Expr {
        let (a, b) = (self.0, rhs.into().0);
        Expr(memo::op(OpKey::MinMax(true, a, b), || {
            build::min_max(&NoFacts, true, &[a, b])
        }))
    }

    /// The larger of the two.
    #[must_use]
    pub fn max(self, rhs: impl Into<Expr>) -> Expr {
        let (a, b) = (self.0, rhs.into().0);
        Expr(memo::op(OpKey::MinMax(false, a, b), || {
            build::min_max(&NoFacts, false, &[a, b])
        }))
    }

    /// The smallest of several expressions (`None` when `args` is empty).
    #[must_use]
    pub fn min_of(args: &[Expr]) -> Option<Expr> {
        let ids: Vec<Id> = args.iter().map(|e| e.0).collect();
        (!ids.is_empty()).then(|| Expr(build::min_max(&NoFacts, true, &ids)))
    }

    /// The largest of several expressions (`None` when `args` is empty).
    #[must_use]
    pub fn max_of(args: &[Expr]) -> Option<Expr> {
        let ids: Vec<Id> = args.iter().map(|e| e.0).collect();
        (!ids.is_empty()).then(|| Expr(build::min_max(&NoFacts, false, &ids)))
    }

    fn cmp(self, kind: CmpKind, rhs: Expr, shift: i64) -> Cond {
        let d = Poly::of(self.0).sub(&Poly::of(rhs.0)).plus_const(shift);
        let inv = [self.0, rhs.0]
            .into_iter()
            .find(|&i| info(i).sort == Sort::Invalid);
        Cond(inv.unwrap_or_else(|| build::compare(&NoFacts, kind, d)))
    }

    /// `self < rhs`.
    pub fn lt(self, rhs: impl Into<Expr>) -> Cond {
        self.cmp(CmpKind::Le, rhs.into(), 1)
    }

    /// `self <= rhs`.
    pub fn le(self, rhs: impl Into<Expr>) -> Cond {
        self.cmp(CmpKind::Le, rhs.into(), 0)
    }

    /// `self > rhs`.
    pub fn gt(self, rhs: impl Into<Expr>) -> Cond {
        rhs.into().lt(self)
    }

    /// `self >= rhs`.
    pub fn ge(self, rhs: impl Into<Expr>) -> Cond {
        rhs.into().le(self)
    }

    /// `self == rhs` as a condition (handle equality is `==` on `Expr`).
    pub fn equals(self, rhs: impl Into<Expr>) -> Cond {
        self.cmp(CmpKind::Eq, rhs.into(), 0)
    }

    /// `self != rhs` as a condition.
    pub fn not_equals(self, rhs: impl Into<Expr>) -> Cond {
        self.cmp(CmpKind::Ne, rhs.into(), 0)
    }

    /// The comparison `self OP rhs`.
    pub fn compare(self, op: CmpOp, rhs: impl Into<Expr>) -> Cond {
        let rhs = rhs.into();
        match op {
            CmpOp::Lt => self.lt(rhs),
            CmpOp::Le => self.le(rhs),
            CmpOp::Eq => self.equals(rhs),
            CmpOp::Ne => self.not_equals(rhs),
            CmpOp::Ge => self.ge(rhs),
            CmpOp::Gt => self.gt(rhs),
        }
    }

    /// Sound range of every value this expression can take, from the symbols' own
    /// ranges (use [`Scope::range`](crate::Scope::range) to include assumptions).
    #[must_use]
    pub fn range(self) -> Interval {
        info(self.0).range.clone()
    }

    /// Known residue of every value this expression can take.
    #[must_use]
    pub fn congruence(self) -> Cong {
        info(self.0).cong.clone()
    }

    /// The expression with every symbol `s` for which `map(s)` is `Some(r)` replaced by
    /// `r`, rebuilt through the canonicalising constructors (no scope's facts: use
    /// [`Scope::substitute`](crate::Scope::substitute) to bind values under a scope).
    ///
    /// ```
    /// use symshape::{Expr, Scope};
    /// let mut cx = Scope::new();
    /// let (n, m) = (cx.declare_str("n")?, cx.declare_str("m")?);
    /// let e = (n + 1) * 4;
    /// assert_eq!(e.substitute(|s| (s == n).then(|| m * 2)), m * 8 + 4);
    /// # Ok::<(), symshape::Error>(())
    /// ```
    #[must_use]
    pub fn substitute(self, map: impl Fn(Expr) -> Option<Expr>) -> Expr {
        Expr(substitute_id(self.0, &map))
    }

    /// The symbols this expression mentions (including those in symbol bounds), sorted by
    /// name.
    #[must_use]
    pub fn symbols(self) -> Vec<Expr> {
        symbols_of(self.0)
    }

    /// `Ok(self)`, or the budget error this expression carries (operators never fail:
    /// past a budget they return an invalid expression, reported here and by every
    /// fallible call that receives it).
    pub fn check(self) -> Result<Expr, Error> {
        check_id(self.0).map(|_| self)
    }

    /// Nesting depth of the expression tree.
    #[must_use]
    pub fn depth(self) -> u32 {
        info(self.0).depth
    }
}

pub(crate) fn check_id(id: Id) -> Result<Id, Error> {
    match node(id) {
        Node::Invalid(m) => Err(Error::Limit(m.to_string())),
        _ => Ok(id),
    }
}

impl Cond {
    /// The constant condition `b`.
    #[must_use]
    pub fn constant(b: bool) -> Cond {
        Cond(build::boolean(b))
    }

    /// The value, if this condition is constant.
    #[must_use]
    pub fn as_bool(self) -> Option<bool> {
        match node(self.0) {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// `self and rhs`.
    #[must_use]
    pub fn and(self, rhs: Cond) -> Cond {
        Cond(build::and_or(true, &[self.0, rhs.0]))
    }

    /// `self or rhs`.
    #[must_use]
    pub fn or(self, rhs: Cond) -> Cond {
        Cond(build::and_or(false, &[self.0, rhs.0]))
    }

    /// The conjunction of all (`true` for none).
    #[must_use]
    pub fn all(args: &[Cond]) -> Cond {
        let ids: Vec<Id> = args.iter().map(|c| c.0).collect();
        Cond(build::and_or(true, &ids))
    }

    /// The disjunction of all (`false` for none).
    #[must_use]
    pub fn any(args: &[Cond]) -> Cond {
        let ids: Vec<Id> = args.iter().map(|c| c.0).collect();
        Cond(build::and_or(false, &ids))
    }

    /// `Ok(self)`, or the budget error this condition carries.
    pub fn check(self) -> Result<Cond, Error> {
        check_id(self.0).map(|_| self)
    }

    /// [`Expr::substitute`] on every expression of the condition.
    #[must_use]
    pub fn substitute(self, map: impl Fn(Expr) -> Option<Expr>) -> Cond {
        Cond(substitute_id(self.0, &map))
    }

    /// The symbols this condition mentions, sorted by name.
    #[must_use]
    pub fn symbols(self) -> Vec<Expr> {
        symbols_of(self.0)
    }
}

/// A comparison operator.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>=`
    Ge,
    /// `>`
    Gt,
}

impl CmpOp {
    /// Whether `a OP b` holds when `a` compares to `b` as `ord`.
    ///
    /// ```
    /// use symshape::CmpOp;
    ///
    /// assert!(CmpOp::Le.holds(3.cmp(&3)));
    /// assert!(!CmpOp::Gt.holds(2.cmp(&5)));
    /// ```
    #[inline]
    #[must_use]
    pub fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            CmpOp::Lt => ord == Less,
            CmpOp::Le => ord != Greater,
            CmpOp::Eq => ord == Equal,
            CmpOp::Ne => ord != Equal,
            CmpOp::Ge => ord != Less,
            CmpOp::Gt => ord == Greater,
        }
    }

    /// The operator's text, e.g. `<=`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Ge => ">=",
            CmpOp::Gt => ">",
        }
    }
}

impl std::str::FromStr for CmpOp {
    type Err = Error;

    /// Parses `<`, `<=`, `==`, `!=`, `>=` or `>`.
    fn from_str(s: &str) -> Result<CmpOp, Error> {
        Ok(match s {
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Le,
            "==" => CmpOp::Eq,
            "!=" => CmpOp::Ne,
            ">=" => CmpOp::Ge,
            ">" => CmpOp::Gt,
            _ => {
                return Err(Error::Parse {
                    column: 1,
                    message: format!(
                        "`{s}` is not a comparison; expected one of <, <=, ==, !=, >=, >"
                    ),
                })
            }
        })
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Words the parser reserves; no symbol may be named like them.
pub(crate) const KEYWORDS: &[&str] = &[
    "and", "or", "not", "min", "max", "cdiv", "true", "false", "inf",
];

/// Declaration of a symbol: name, inclusive range and divisor.
///
/// A symbol's identity is the whole declaration, so range-based simplification needs no
/// context. Bounds are expressions: a loop index over `0..dim` with a symbolic `dim` is
/// `SymbolSpec::new("i").below(dim)`, i.e. `0..=dim - 1`; simplification and proofs use
/// that bound (`(i*dim + j) // dim` is `i` when `j` is declared `below(dim)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolSpec {
    pub(crate) name: String,
    pub(crate) lo: Option<Expr>,
    pub(crate) hi: Option<Expr>,
    pub(crate) multiple_of: u64,
}

impl SymbolSpec {
    /// A symbol named `name` with the default range `0..=i64::MAX`.
    #[must_use]
    pub fn new(name: &str) -> SymbolSpec {
        SymbolSpec {
            name: name.to_string(),
            lo: Some(Expr::from(0)),
            hi: Some(Expr::from(i64::MAX)),
            multiple_of: 1,
        }
    }

    /// Sets the inclusive range `lo..=hi`.
    #[must_use]
    pub fn range(mut self, lo: impl Into<Expr>, hi: impl Into<Expr>) -> SymbolSpec {
        self.lo = Some(lo.into());
        self.hi = Some(hi.into());
        self
    }

    /// Sets the lower bound; `None` is minus infinity.
    #[must_use]
    pub fn lo(mut self, lo: Option<Expr>) -> SymbolSpec {
        self.lo = lo;
        self
    }

    /// Sets the upper bound; `None` is plus infinity.
    #[must_use]
    pub fn hi(mut self, hi: Option<Expr>) -> SymbolSpec {
        self.hi = hi;
        self
    }

    /// The range `0..=dim - 1` of an index into a dimension of extent `dim`.
    #[must_use]
    pub fn below(self, dim: impl Into<Expr>) -> SymbolSpec {
        self.range(0, dim.into() - 1)
    }

    /// Requires every value to be a multiple of `d` (`d >= 1`).
    #[must_use]
    pub fn multiple_of(mut self, d: u64) -> SymbolSpec {
        self.multiple_of = d;
        self
    }

    /// The symbol's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The inclusive lower bound (`None` is minus infinity): a constant, or an
    /// expression over earlier symbols such as the `0` of `i 0..n`.
    #[must_use]
    pub fn lower(&self) -> Option<Expr> {
        self.lo
    }

    /// The inclusive upper bound (`None` is plus infinity): `n - 1` for `i 0..n`.
    #[must_use]
    pub fn upper(&self) -> Option<Expr> {
        self.hi
    }

    /// Every value is a multiple of this (1 when unconstrained).
    #[must_use]
    pub fn divisor(&self) -> u64 {
        self.multiple_of
    }

    /// The range as error messages print it: `0..=n - 1`, `8..=1024, multiple of 8`.
    #[must_use]
    pub fn range_text(&self) -> String {
        describe_range(self)
    }

    /// Interns the symbol.
    pub fn build(&self) -> Result<Expr, Error> {
        let err = |message: String| Error::Declare {
            name: self.name.clone(),
            message,
        };
        if !is_identifier(&self.name) {
            return Err(err(
                "a name is a letter or `_` followed by letters, digits or `_`".into(),
            ));
        }
        if KEYWORDS.contains(&self.name.as_str()) {
            return Err(err("the name is a reserved word".into()));
        }
        if self.multiple_of == 0 {
            return Err(err("multiple_of must be at least 1".into()));
        }
        for b in [self.lo, self.hi].into_iter().flatten() {
            b.check()?;
            // Bounds nest inside the symbol; keep chains of bounded symbols within budget.
            if b.depth() >= crate::limits::MAX_DEPTH {
                return Err(Error::Limit(format!(
                    "limit: the bounds of `{}` nest deeper than {} levels",
                    self.name,
                    crate::limits::MAX_DEPTH
                )));
            }
        }
        let lo_r = self.lo.map(|b| b.range().lo).unwrap_or(None);
        let hi_r = self.hi.map(|b| b.range().hi).unwrap_or(None);
        let data = SymData {
            name: self.name.clone().into_boxed_str(),
            lo: self.lo.map(|e| e.0),
            hi: self.hi.map(|e| e.0),
            multiple_of: BigInt::from(self.multiple_of),
        };
        let cong = Cong {
            m: data.multiple_of.clone(),
            r: BigInt::zero(),
        };
        if let (Some(l), Some(h)) = (&lo_r, &hi_r) {
            if l > h || !is_multiple_inside(l, h, &cong.m) {
                return Err(err(format!(
                    "the range {} has no admissible value",
                    describe_range(self)
                )));
            }
        }
        let id = crate::node::intern(Node::Sym(data));
        Ok(Expr(id))
    }
}

fn is_multiple_inside(l: &BigInt, h: &BigInt, m: &BigInt) -> bool {
    use num_integer::Integer;
    let first = l + (-l).mod_floor(m);
    &first <= h
}

/// Every symbol reachable from `root` (including through symbol bounds), sorted by name.
fn symbols_of(root: Id) -> Vec<Expr> {
    let mut out = Vec::new();
    crate::visit::symbols(root, &mut out);
    out.into_iter().map(Expr).collect()
}

/// Whether `s` is an identifier: an ASCII letter or `_`, then ASCII letters, digits or
/// `_`. Symbol names are identifiers, so each is also a C identifier.
///
/// ```
/// assert!(symshape::is_identifier("seq_len2"));
/// assert!(!symshape::is_identifier("2n") && !symshape::is_identifier("") && !symshape::is_identifier("a-b"));
/// ```
#[must_use]
pub fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `lo..=hi` (with `-inf`/`inf`), plus `, multiple of d` when set.
pub(crate) fn describe_range(s: &SymbolSpec) -> String {
    let b = |e: Option<Expr>, inf: &str| e.map_or(inf.to_string(), |e| e.to_string());
    let mut out = format!("{}..={}", b(s.lo, "-inf"), b(s.hi, "inf"));
    if s.multiple_of > 1 {
        out += &format!(", multiple of {}", s.multiple_of);
    }
    out
}

/// The declaration of a symbol handle, if it is one.
pub(crate) fn spec_of(e: Id) -> Option<SymbolSpec> {
    match node(e) {
        Node::Sym(s) => Some(SymbolSpec {
            name: s.name.to_string(),
            lo: s.lo.map(Expr),
            hi: s.hi.map(Expr),
            multiple_of: s.multiple_of.to_u64().unwrap_or(1),
        }),
        _ => None,
    }
}

impl Expr {
    /// The declaration of this symbol (`None` if it is not a symbol).
    #[must_use]
    pub fn symbol_spec(self) -> Option<SymbolSpec> {
        spec_of(self.0)
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        let make = || build::constant(BigInt::from(v));
        Expr(memo::small_const(v, make).unwrap_or_else(|| memo::op(OpKey::Const(v), make)))
    }
}

/// Conversions from the integer types other than `i64`. They never fail; they are
/// `TryFrom` rather than `From` so that `Expr::from(6)` keeps naming the `i64`
/// conversion (more `From` impls would leave the literal's type open).
macro_rules! try_from_int {
    ($($t:ty),*) => {$(
        // `From` would leave the type of a literal in `Expr::from(6)` open.
        #[allow(clippy::infallible_try_from)]
        impl TryFrom<$t> for Expr {
            type Error = std::convert::Infallible;
            fn try_from(v: $t) -> Result<Expr, Self::Error> {
                Ok(Expr::constant(v))
            }
        }
    )*};
}

try_from_int!(i8, i16, i32, i128, isize, u8, u16, u32, u64, u128, usize);

impl From<BigInt> for Expr {
    fn from(v: BigInt) -> Expr {
        Expr::constant(v)
    }
}

impl From<bool> for Cond {
    fn from(b: bool) -> Cond {
        Cond::constant(b)
    }
}

macro_rules! arith {
    ($tr:ident, $m:ident, $atr:ident, $am:ident, $f:path) => {
        impl $tr<Expr> for Expr {
            type Output = Expr;
            fn $m(self, rhs: Expr) -> Expr {
                Expr($f(self.0, rhs.0))
            }
        }
        impl $tr<i64> for Expr {
            type Output = Expr;
            fn $m(self, rhs: i64) -> Expr {
                Expr($f(self.0, Expr::from(rhs).0))
            }
        }
        impl $tr<Expr> for i64 {
            type Output = Expr;
            fn $m(self, rhs: Expr) -> Expr {
                Expr($f(Expr::from(self).0, rhs.0))
            }
        }
        impl $atr<Expr> for Expr {
            fn $am(&mut self, rhs: Expr) {
                *self = $tr::$m(*self, rhs);
            }
        }
        impl $atr<i64> for Expr {
            fn $am(&mut self, rhs: i64) {
                *self = $tr::$m(*self, rhs);
            }
        }
    };
}

arith!(Add, add, AddAssign, add_assign, build::add);
arith!(Sub, sub, SubAssign, sub_assign, build::sub);
arith!(Mul, mul, MulAssign, mul_assign, build::mul);

impl Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr(build::neg(self.0))
    }
}

impl BitAnd for Cond {
    type Output = Cond;
    fn bitand(self, rhs: Cond) -> Cond {
        self.and(rhs)
    }
}

impl BitOr for Cond {
    type Output = Cond;
    fn bitor(self, rhs: Cond) -> Cond {
        self.or(rhs)
    }
}

impl Not for Cond {
    type Output = Cond;
    fn not(self) -> Cond {
        Cond(build::not(&NoFacts, self.0))
    }
}

impl std::iter::Sum for Expr {
    fn sum<I: Iterator<Item = Expr>>(iter: I) -> Expr {
        iter.fold(Expr::from(0), |a, b| a + b)
    }
}

impl std::iter::Product for Expr {
    fn product<I: Iterator<Item = Expr>>(iter: I) -> Expr {
        iter.fold(Expr::constant(BigInt::one()), |a, b| a * b)
    }
}

/// The node `id` with its symbols replaced where `map` says, rebuilt without facts.
fn substitute_id(id: Id, map: &dyn Fn(Expr) -> Option<Expr>) -> Id {
    let sub = |s: Id| map(Expr(s)).map(|r| r.0);
    crate::rebuild::Rebuild::new(&NoFacts, &sub).run(id)
}
