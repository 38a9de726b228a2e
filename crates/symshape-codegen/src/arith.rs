//! The expression emitter shared by every dialect: integer expressions and conditions
//! written natively where the ranges prove they fit, in a wider form elsewhere.

use std::collections::{BTreeSet, HashMap, HashSet};

use symshape::{BigInt, CmpOp, Cond, CondKind, Expr, ExprKind, Scope};

use crate::error::{Error, Result};
use crate::plan::Plan;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Helper {
    Wide,
    WideSigned,
    WideNarrow,
    FDiv,
    FMod,
    CDiv,
    Min,
    Max,
    WideFDiv,
    WideFMod,
    WideCDiv,
    WideMin,
    WideMax,
    AddCk,
    SubCk,
    MulCk,
    FDivCk,
    FModCk,
    CDivCk,
    MinCk,
    MaxCk,
    FitCk,
    ViewOk,
    Within,
    Fill,
}

impl Helper {
    /// The helpers this one calls or whose types it uses.
    pub fn needs(self) -> &'static [Helper] {
        match self {
            Helper::WideSigned | Helper::WideNarrow => &[Helper::Wide],
            Helper::WideFDiv
            | Helper::WideFMod
            | Helper::WideCDiv
            | Helper::WideMin
            | Helper::WideMax => &[Helper::Wide, Helper::WideSigned],
            Helper::AddCk
            | Helper::SubCk
            | Helper::MulCk
            | Helper::FDivCk
            | Helper::FModCk
            | Helper::CDivCk
            | Helper::MinCk
            | Helper::MaxCk
            | Helper::FitCk
            | Helper::ViewOk
            | Helper::Within => &[Helper::Wide],
            _ => &[],
        }
    }

    /// The helper's source in the arithmetic `ar`: the C text, with the native type,
    /// its least value and the helper qualifiers of `ar` for another dialect; the
    /// narrowing of a wrapped value reads the native width's sign bit.
    pub fn source(self, ar: &Arith) -> String {
        if ar.form == WideForm::Int128 {
            return self.c_source().to_string();
        }
        if self == Helper::WideNarrow {
            let (t, w, q) = (ar.native, ar.wide, ar.helper);
            let top = ar.bits - 1;
            return format!(
                "/* The {t} equal to a modulo 2^{bits}: the exact value whenever it fits. */
{q} {t} sx_narrow({w} a) {{
    return (a >> {top}) ? -({t})(~a) - 1 : ({t})a;
}}
",
                bits = ar.bits
            );
        }
        let least = if ar.bits >= 64 {
            "(-9223372036854775807 - 1)"
        } else {
            "(-2147483647 - 1)"
        };
        self.c_source()
            .replace("static inline", ar.helper)
            .replace("INT64_MIN", least)
            .replace("int64_t", ar.native)
    }

    fn c_source(self) -> &'static str {
        match self {
            Helper::Wide => {
                "/* 128-bit integers: sx_w wraps modulo 2^128, sx_s is its signed reading. */
__extension__ typedef unsigned __int128 sx_w;
__extension__ typedef __int128 sx_s;
"
            }
            Helper::WideSigned => {
                "/* The signed reading of a, without an out-of-range conversion. */
static inline sx_s sx_ws(sx_w a) {
    return (a >> 127) ? -(sx_s)(~a) - 1 : (sx_s)a;
}
"
            }
            Helper::WideNarrow => {
                "/* The int64_t equal to a modulo 2^64: the exact value whenever it fits. */
static inline int64_t sx_narrow(sx_w a) {
    const uint64_t u = (uint64_t)a;
    return (u >> 63) ? -(int64_t)(~u) - 1 : (int64_t)u;
}
"
            }
            Helper::FDiv => {
                "/* Floor division (a divisor of 0 gives 0; the guards exclude it). */
static inline int64_t sx_fdiv(int64_t a, int64_t b) {
    int64_t q;
    if (b == 0) return 0;
    if (b == -1) return a == INT64_MIN ? a : -a;
    q = a / b;
    if (a % b != 0 && (a < 0) != (b < 0)) q -= 1;
    return q;
}
"
            }
            Helper::FMod => {
                "/* Floor modulo: the sign of the divisor. */
static inline int64_t sx_fmod(int64_t a, int64_t b) {
    int64_t r;
    if (b == 0 || b == -1) return 0;
    r = a % b;
    if (r != 0 && (r < 0) != (b < 0)) r += b;
    return r;
}
"
            }
            Helper::CDiv => {
                "/* Ceiling division. */
static inline int64_t sx_cdiv(int64_t a, int64_t b) {
    int64_t q;
    if (b == 0) return 0;
    if (b == -1) return a == INT64_MIN ? a : -a;
    q = a / b;
    if (a % b != 0 && (a < 0) == (b < 0)) q += 1;
    return q;
}
"
            }
            Helper::Min => {
                "static inline int64_t sx_min(int64_t a, int64_t b) { return a < b ? a : b; }\n"
            }
            Helper::Max => {
                "static inline int64_t sx_max(int64_t a, int64_t b) { return a > b ? a : b; }\n"
            }
            Helper::WideFDiv => {
                "/* Floor division of the signed readings (a divisor of 0 gives 0). */
static inline sx_w sx_wfdiv(sx_w a, sx_w b) {
    const sx_s x = sx_ws(a), y = sx_ws(b);
    sx_s q;
    if (y == 0) return 0;
    if (y == -1) return -a;
    q = x / y;
    if (x % y != 0 && (x < 0) != (y < 0)) q -= 1;
    return (sx_w)q;
}
"
            }
            Helper::WideFMod => {
                "/* Floor modulo of the signed readings: the sign of the divisor. */
static inline sx_w sx_wfmod(sx_w a, sx_w b) {
    const sx_s x = sx_ws(a), y = sx_ws(b);
    sx_s r;
    if (y == 0 || y == -1) return 0;
    r = x % y;
    if (r != 0 && (r < 0) != (y < 0)) r += y;
    return (sx_w)r;
}
"
            }
            Helper::WideCDiv => {
                "/* Ceiling division of the signed readings. */
static inline sx_w sx_wcdiv(sx_w a, sx_w b) {
    const sx_s x = sx_ws(a), y = sx_ws(b);
    sx_s q;
    if (y == 0) return 0;
    if (y == -1) return -a;
    q = x / y;
    if (x % y != 0 && (x < 0) == (y < 0)) q += 1;
    return (sx_w)q;
}
"
            }
            Helper::WideMin => {
                "static inline sx_w sx_wmin(sx_w a, sx_w b) { return sx_ws(a) < sx_ws(b) ? a : b; }\n"
            }
            Helper::WideMax => {
                "static inline sx_w sx_wmax(sx_w a, sx_w b) { return sx_ws(a) > sx_ws(b) ? a : b; }\n"
            }
            Helper::AddCk => {
                "/* a + b, clearing *ok when it leaves 128 bits. */
static inline sx_s sx_add_ck(sx_s a, sx_s b, int *ok) {
    const sx_s max = (sx_s)(~(sx_w)0 >> 1), min = -max - 1;
    if ((b > 0 && a > max - b) || (b < 0 && a < min - b)) { *ok = 0; return 0; }
    return a + b;
}
"
            }
            Helper::SubCk => {
                "/* a - b, clearing *ok when it leaves 128 bits. */
static inline sx_s sx_sub_ck(sx_s a, sx_s b, int *ok) {
    const sx_s max = (sx_s)(~(sx_w)0 >> 1), min = -max - 1;
    if ((b < 0 && a > max + b) || (b > 0 && a < min + b)) { *ok = 0; return 0; }
    return a - b;
}
"
            }
            Helper::MulCk => {
                "/* a * b, clearing *ok when it leaves 128 bits. */
static inline sx_s sx_mul_ck(sx_s a, sx_s b, int *ok) {
    const sx_s max = (sx_s)(~(sx_w)0 >> 1), min = -max - 1;
    if (a > 0 ? (b > 0 ? a > max / b : b < min / a)
              : (b > 0 ? a < min / b : (a != 0 && b < max / a))) { *ok = 0; return 0; }
    return a * b;
}
"
            }
            Helper::FDivCk => {
                "/* Floor division, clearing *ok for a divisor of 0 or a quotient beyond 128 bits. */
static inline sx_s sx_fdiv_ck(sx_s a, sx_s b, int *ok) {
    const sx_s min = -(sx_s)(~(sx_w)0 >> 1) - 1;
    sx_s q;
    if (b == 0 || (a == min && b == -1)) { *ok = 0; return 0; }
    q = a / b;
    if (a % b != 0 && (a < 0) != (b < 0)) q -= 1;
    return q;
}
"
            }
            Helper::FModCk => {
                "/* Floor modulo, clearing *ok for a divisor of 0. */
static inline sx_s sx_fmod_ck(sx_s a, sx_s b, int *ok) {
    sx_s r;
    if (b == 0) { *ok = 0; return 0; }
    if (b == -1) return 0;
    r = a % b;
    if (r != 0 && (r < 0) != (b < 0)) r += b;
    return r;
}
"
            }
            Helper::CDivCk => {
                "/* Ceiling division, clearing *ok for a divisor of 0 or a quotient beyond 128 bits. */
static inline sx_s sx_cdiv_ck(sx_s a, sx_s b, int *ok) {
    const sx_s min = -(sx_s)(~(sx_w)0 >> 1) - 1;
    sx_s q;
    if (b == 0 || (a == min && b == -1)) { *ok = 0; return 0; }
    q = a / b;
    if (a % b != 0 && (a < 0) == (b < 0)) q += 1;
    return q;
}
"
            }
            Helper::MinCk => {
                "static inline sx_s sx_min_ck(sx_s a, sx_s b) { return a < b ? a : b; }\n"
            }
            Helper::MaxCk => {
                "static inline sx_s sx_max_ck(sx_s a, sx_s b) { return a > b ? a : b; }\n"
            }
            Helper::FitCk => {
                "/* a, clearing *ok when it does not fit in int64_t. */
static inline sx_s sx_fit_ck(sx_s a, int *ok) {
    if (a < INT64_MIN || a > INT64_MAX) { *ok = 0; return 0; }
    return a;
}
"
            }
            Helper::ViewOk => {
                "/* Whether the fields f of a level of rank r (sizes, strides, offset, then the
   mask pairs when masked) make a view as binding does: every field in int64_t,
   sizes >= 0, the element count in int64_t, each mask pair within
   0 <= b <= e <= size, and, unless a size is 0, the offset of every index
   strictly between INT64_MIN and INT64_MAX. */
static int sx_view_ok(int r, const sx_s *f, int masked) {
    const sx_s *d = f, *t = f + r, *m = f + 2 * r + 1;
    const int nf = 2 * r + 1 + (masked ? 2 * r : 0);
    sx_s n = 1, lo = f[2 * r], hi = f[2 * r];
    int k, empty = 0;
    for (k = 0; k < nf; ++k)
        if (f[k] < INT64_MIN || f[k] > INT64_MAX) return 0;
    for (k = 0; k < r; ++k) {
        if (d[k] < 0) return 0;
        if (d[k] == 0) empty = 1;
    }
    for (k = 0; masked && k < r; ++k)
        if (m[2 * k] < 0 || m[2 * k] > m[2 * k + 1] || m[2 * k + 1] > d[k]) return 0;
    if (empty) return 1;
    for (k = 0; k < r; ++k) {
        /* Every factor is at most 2^63 in magnitude: no product leaves 128 bits. */
        const sx_s s = (d[k] - 1) * t[k];
        n *= d[k];
        if (n > INT64_MAX || s < INT64_MIN || s > INT64_MAX) return 0;
        if (s < 0) lo += s; else hi += s;
        if (lo <= INT64_MIN || hi >= INT64_MAX) return 0;
    }
    return 1;
}
"
            }
            Helper::Within => {
                "/* Whether the valid elements of the upper level (fields fu of rank ru, as
   sx_view_ok takes them, both levels making views) lie within the elements of
   the lower level (fields fl of rank rl); an upper level without valid elements
   does. */
static int sx_within(int rl, const sx_s *fl, int ru, const sx_s *fu, int masked) {
    const sx_s *d = fu, *t = fu + ru, *m = fu + 2 * ru + 1;
    sx_s n = 1, first = fu[2 * ru], last = fu[2 * ru];
    int k;
    for (k = 0; k < ru; ++k)
        if (d[k] == 0 || (masked && m[2 * k] >= m[2 * k + 1])) return 1;
    for (k = 0; k < rl; ++k)
        if (fl[k] == 0) return 0;
    for (k = 0; k < rl; ++k) n *= fl[k];
    for (k = 0; k < ru; ++k) {
        const sx_s b = masked ? m[2 * k] : 0, e = masked ? m[2 * k + 1] : d[k];
        const sx_s x = b * t[k], y = (e - 1) * t[k];
        first += x < y ? x : y;
        last += x < y ? y : x;
    }
    return first >= 0 && last < n;
}
"
            }
            Helper::Fill => {
                "/* Sets n elements from p to v. */
static void sx_fill(int64_t *p, int64_t n, int64_t v) {
    int64_t k;
    for (k = 0; k < n; ++k) p[k] = v;
}
"
            }
        }
    }
}

/// The integer arithmetic the expressions of a unit are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arith {
    /// The operation named in errors (`render_c`, `render_opencl`, `render_cuda`).
    pub op: &'static str,
    /// Bits of the native signed type: 64 or 32.
    pub bits: u32,
    /// The native signed type: `int64_t`, `long`, `long long`, `int`.
    pub native: &'static str,
    /// The unsigned type of the wide form.
    pub wide: &'static str,
    /// What the wide form is.
    pub form: WideForm,
    /// The qualifiers of a helper function.
    pub helper: &'static str,
}

impl Arith {
    /// C99: `int64_t`, widened to `unsigned __int128`.
    pub const C: Arith = Arith {
        op: "render_c",
        bits: 64,
        native: "int64_t",
        wide: "sx_w",
        form: WideForm::Int128,
        helper: "static inline",
    };
}

/// What an expression not proven to fit natively is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WideForm {
    /// `unsigned __int128`: exact within 128 bits, the signed reading for division,
    /// `min`, `max` and comparisons.
    Int128,
    /// The native width's unsigned type, wrapping: exact for sums and products whose
    /// value fits; division, `min`, `max` and comparisons take operands whose values
    /// are proven to fit, each narrowed to the native type first.
    Wrap,
    /// Nothing: every expression must be proven to fit natively.
    Refuse,
}

/// How an expression is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Native arithmetic, only where the ranges prove that every intermediate fits.
    Native,
    /// The wide form of [`Arith::form`]: exact wherever the value fits, whatever the
    /// intermediates do (within 128 bits around division and comparisons).
    Wide,
    /// Overflow-checked `sx_s` arithmetic (the guard function): exact, or `ok` cleared.
    Checked,
}

/// The C name of a symbol.
#[derive(Clone, Debug)]
pub(crate) enum Name {
    /// Parameter `k` of the plan, loaded as `s_NAME`.
    Param(usize),
    /// A local (a loop index).
    Local(String),
}

/// Writes expressions and conditions of one unit, collecting the helpers they call.
pub(crate) struct Emitter<'a> {
    pub cx: &'a Scope,
    pub names: HashMap<Expr, Name>,
    pub helpers: BTreeSet<Helper>,
    /// Parameters the function being rendered reads.
    pub used: BTreeSet<usize>,
    /// How the expression being rendered is evaluated.
    pub mode: Mode,
    /// The arithmetic of the unit.
    pub ar: Arith,
    /// Expressions whose values the caller knows to fit the native type wherever they
    /// are evaluated (the bound output's sizes, for example), though their ranges do not
    /// show it: operands a wrapped division, `min` or `max` may narrow.
    pub known: HashSet<Expr>,
}

impl<'a> Emitter<'a> {
    /// An emitter naming the plan's parameters `s_NAME` and its loop indices `i0, i1, ...`.
    pub fn new(cx: &'a Scope, plan: &Plan, ar: Arith) -> Emitter<'a> {
        let mut names = HashMap::new();
        for (k, &p) in plan.params().iter().enumerate() {
            names.insert(p, Name::Param(k));
        }
        for (k, l) in plan.loops().iter().enumerate() {
            names.insert(l.index, Name::Local(format!("i{k}")));
        }
        Emitter {
            cx,
            names,
            helpers: BTreeSet::new(),
            used: BTreeSet::new(),
            mode: Mode::Native,
            ar,
            known: HashSet::new(),
        }
    }

    pub fn need(&mut self, h: Helper) {
        self.helpers.insert(h);
        if self.ar.form == WideForm::Int128 {
            self.helpers.extend(h.needs());
        }
    }

    /// The helpers used so far, in a fixed order, as source text.
    pub fn helper_sources(&self) -> String {
        self.helpers
            .iter()
            .map(|h| h.source(&self.ar))
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn unsupported(&self, message: String) -> Error {
        Error::Unsupported {
            op: self.ar.op,
            message,
        }
    }

    /// Refuses unless the arithmetic has a wide form, naming `e`.
    fn widen(&self, e: &dyn std::fmt::Display) -> Result<()> {
        if self.ar.form == WideForm::Refuse {
            return Err(self.unsupported(format!(
                "`{e}` is not proven to fit in {}-bit arithmetic",
                self.ar.bits
            )));
        }
        Ok(())
    }

    /// Whether the value of `e` is known to fit the native type: its ranges show it,
    /// the caller knows it, or it is a floor quotient of such a value, a remainder
    /// modulo such a value, or a `min` or `max` of such values.
    fn value_fits(&self, e: Expr) -> bool {
        if fits(self.cx, e, self.ar.bits)
            || in_bits(&ends(self.cx, e), self.ar.bits)
            || self.known.contains(&e)
        {
            return true;
        }
        match e.kind() {
            // `sx_fdiv` gives 0 for a divisor of 0: never more than the dividend.
            ExprKind::FloorDiv(a, _) => self.value_fits(a),
            ExprKind::FloorMod(_, b) => self.value_fits(b),
            ExprKind::Min(args) | ExprKind::Max(args) => args.iter().all(|&a| self.value_fits(a)),
            _ => false,
        }
    }

    /// The value of `e` in the native type, where that value is proven to fit
    /// (intermediates may not): for the operands of wrapped division, `min`, `max`.
    fn narrowed(&mut self, e: Expr) -> Result<String> {
        if !self.value_fits(e) {
            return Err(self.unsupported(format!(
                "`{e}` is an operand of a division, min, max or comparison not proven to fit in {}-bit arithmetic",
                self.ar.bits
            )));
        }
        let mode = self.mode;
        self.mode = Mode::Native;
        let v = self.value(e);
        self.mode = mode;
        v
    }

    pub fn name(&mut self, e: Expr) -> Result<String> {
        let name = match self.names.get(&e) {
            Some(Name::Param(k)) => {
                self.used.insert(*k);
                format!("s_{e}")
            }
            Some(Name::Local(n)) => n.clone(),
            None => {
                return Err(self.unsupported(format!(
                    "symbol `{e}` is not declared in the scope; declare every symbol the stack uses"
                )))
            }
        };
        Ok(match self.mode {
            Mode::Wide => format!("({}){name}", self.ar.wide),
            Mode::Native | Mode::Checked => name,
        })
    }

    /// `e` in the native type: native arithmetic where the ranges prove that no
    /// intermediate leaves it, else evaluated in the wide form and narrowed (exact
    /// wherever the value fits).
    pub fn value(&mut self, e: Expr) -> Result<String> {
        if fits(self.cx, e, self.ar.bits) {
            return self.expr(e);
        }
        self.widen(&e)?;
        let mode = self.mode;
        self.mode = Mode::Wide;
        let w = self.expr(e);
        self.mode = mode;
        self.need(Helper::WideNarrow);
        Ok(format!("sx_narrow({})", bare(&w?)))
    }

    /// A constant in the current mode.
    fn constant(&mut self, v: &BigInt) -> Result<String> {
        let native = self.mode == Mode::Native;
        if let Some(c) = constant(v) {
            if native && !in_bits(&point(v), self.ar.bits) {
                return Err(
                    self.unsupported(format!("constant {v} does not fit in {}", self.ar.native))
                );
            }
            return Ok(match self.mode {
                Mode::Wide => format!("({}){c}", self.ar.wide),
                Mode::Native | Mode::Checked => c,
            });
        }
        let Ok(x) = i128::try_from(v) else {
            return Err(self.unsupported(format!("constant {v} does not fit in 128 bits")));
        };
        if native || self.ar.form != WideForm::Int128 {
            return Err(
                self.unsupported(format!("constant {v} does not fit in {}", self.ar.native))
            );
        }
        // Two's complement halves, joined modulo 2^128.
        let bits = u128::from_ne_bytes(x.to_ne_bytes());
        let (hi, lo) = ((bits >> 64) as u64, bits as u64);
        let w = format!("(((sx_w)UINT64_C({hi}) << 64) | (sx_w)UINT64_C({lo}))");
        Ok(match self.mode {
            Mode::Checked => {
                self.need(Helper::WideSigned);
                format!("sx_ws{w}")
            }
            _ => w,
        })
    }

    /// An integer expression, parenthesised unless it is atomic.
    pub fn expr(&mut self, e: Expr) -> Result<String> {
        match e.kind() {
            ExprKind::Const(v) => self.constant(&v),
            ExprKind::Symbol(_) => self.name(e),
            ExprKind::Sum { terms, constant: c } => self.sum(&terms, &c),
            ExprKind::Product(factors) => {
                let mut acc: Option<String> = None;
                for (a, k) in factors {
                    let a = self.expr(a)?;
                    for _ in 0..k {
                        acc = Some(match acc {
                            None => a.clone(),
                            Some(x) => self.mul(&x, &a),
                        });
                    }
                }
                Ok(acc.unwrap_or_else(|| "1".to_string()))
            }
            ExprKind::FloorDiv(a, b) => self.division(a, b, "/", Division::Floor),
            ExprKind::FloorMod(a, b) => self.division(a, b, "%", Division::Mod),
            ExprKind::CeilDiv(a, b) => self.division(a, b, "", Division::Ceil),
            ExprKind::Min(args) => self.extreme(e, &args, false),
            ExprKind::Max(args) => self.extreme(e, &args, true),
            ExprKind::Invalid(m) => Err(self.unsupported(format!("invalid expression: {m}"))),
            _ => Err(self.unsupported(format!("expression `{e}` has an unknown form"))),
        }
    }

    fn mul(&mut self, a: &str, b: &str) -> String {
        if self.mode == Mode::Checked {
            self.need(Helper::MulCk);
            format!("sx_mul_ck({}, {}, &ok)", bare(a), bare(b))
        } else {
            format!("{}*{}", paren_sum(a), paren_sum(b))
        }
    }

    fn add(&mut self, a: &str, b: &str, negate: bool) -> String {
        match (self.mode == Mode::Checked, negate) {
            (false, false) => format!("{a} + {b}"),
            (false, true) => format!("{a} - {}", paren_sum(b)),
            (true, false) => {
                self.need(Helper::AddCk);
                format!("sx_add_ck({}, {}, &ok)", bare(a), bare(b))
            }
            (true, true) => {
                self.need(Helper::SubCk);
                format!("sx_sub_ck({}, {}, &ok)", bare(a), bare(b))
            }
        }
    }

    /// `sum(coef * term) + c`, subtracting the terms with negative coefficients.
    fn sum(&mut self, terms: &[(Expr, BigInt)], c: &BigInt) -> Result<String> {
        let mut acc: Option<String> = None;
        let zero = BigInt::from(0);
        for (m, coef) in terms {
            let neg = *coef < zero;
            let mag = if neg { -coef.clone() } else { coef.clone() };
            let m = self.expr(*m)?;
            let t = if mag == BigInt::from(1) {
                m
            } else {
                let k = self.constant(&mag)?;
                self.mul(&k, &m)
            };
            acc = Some(match acc {
                None if neg && self.mode != Mode::Checked => format!("-{}", paren_sum(&t)),
                None if neg => self.add("0", &t, true),
                None => t,
                Some(a) => self.add(&a, &t, neg),
            });
        }
        if *c != zero {
            let neg = *c < zero;
            let mag = self.constant(&if neg { -c.clone() } else { c.clone() })?;
            acc = Some(match acc {
                None => self.constant(c)?,
                Some(a) => self.add(&a, &mag, neg),
            });
        }
        Ok(paren(&acc.unwrap_or_else(|| "0".to_string())))
    }

    fn division(&mut self, a: Expr, b: Expr, native: &str, kind: Division) -> Result<String> {
        let wrap = self.mode == Mode::Wide && self.ar.form == WideForm::Wrap;
        let (sa, sb) = if wrap {
            // The narrowed operands divide natively; the quotient is widened again.
            (self.narrowed(a)?, self.narrowed(b)?)
        } else {
            (self.expr(a)?, self.expr(b)?)
        };
        let mode = if wrap { Mode::Native } else { self.mode };
        let (name, h) = match (mode, kind) {
            (Mode::Checked, Division::Floor) => ("sx_fdiv_ck", Helper::FDivCk),
            (Mode::Checked, Division::Mod) => ("sx_fmod_ck", Helper::FModCk),
            (Mode::Checked, Division::Ceil) => ("sx_cdiv_ck", Helper::CDivCk),
            (Mode::Wide, Division::Floor) => ("sx_wfdiv", Helper::WideFDiv),
            (Mode::Wide, Division::Mod) => ("sx_wfmod", Helper::WideFMod),
            (Mode::Wide, Division::Ceil) => ("sx_wcdiv", Helper::WideCDiv),
            (Mode::Native, Division::Floor) => ("sx_fdiv", Helper::FDiv),
            (Mode::Native, Division::Mod) => ("sx_fmod", Helper::FMod),
            (Mode::Native, Division::Ceil) => ("sx_cdiv", Helper::CDiv),
        };
        if mode == Mode::Checked {
            self.need(h);
            return Ok(format!("{name}({}, {}, &ok)", bare(&sa), bare(&sb)));
        }
        let proven = mode == Mode::Native
            && !native.is_empty()
            && self.cx.prove(a, CmpOp::Ge, Expr::from(0)).is_true()
            && self.cx.prove(b, CmpOp::Ge, Expr::from(1)).is_true();
        let res = if proven {
            format!("({} {native} {})", paren(&sa), paren(&sb))
        } else {
            self.need(h);
            format!("{name}({}, {})", bare(&sa), bare(&sb))
        };
        Ok(if wrap {
            format!("({}){res}", self.ar.wide)
        } else {
            res
        })
    }

    fn extreme(&mut self, e: Expr, args: &[Expr], max: bool) -> Result<String> {
        let wrap = self.mode == Mode::Wide && self.ar.form == WideForm::Wrap;
        let mode = if wrap { Mode::Native } else { self.mode };
        let (name, h) = match (mode, max) {
            (Mode::Native, false) => ("sx_min", Helper::Min),
            (Mode::Native, true) => ("sx_max", Helper::Max),
            (Mode::Wide, false) => ("sx_wmin", Helper::WideMin),
            (Mode::Wide, true) => ("sx_wmax", Helper::WideMax),
            (Mode::Checked, false) => ("sx_min_ck", Helper::MinCk),
            (Mode::Checked, true) => ("sx_max_ck", Helper::MaxCk),
        };
        self.need(h);
        // When the value of `max(...)` fits, every argument fits from above, and only
        // its lower end needs its range (the other way round for `min`).
        let known = wrap && self.value_fits(e);
        let (lo, hi) = (BigInt::from(i64::MIN), BigInt::from(i64::MAX));
        let mut acc: Option<String> = None;
        for &a in args {
            let (alo, ahi) = ends(self.cx, a);
            let bounded = if max {
                alo.is_some_and(|v| v >= lo)
            } else {
                ahi.is_some_and(|v| v <= hi)
            };
            let s = if wrap && known && self.ar.bits == 64 && bounded {
                self.known.insert(a);
                bare(&self.narrowed(a)?)
            } else if wrap {
                bare(&self.narrowed(a)?)
            } else {
                bare(&self.expr(a)?)
            };
            acc = Some(match acc {
                None => s,
                Some(x) => format!("{name}({x}, {s})"),
            });
        }
        let res = acc.unwrap_or_else(|| "0".to_string());
        Ok(if wrap {
            format!("({}){res}", self.ar.wide)
        } else {
            res
        })
    }

    /// A condition; `d OP 0` prints as `positive terms OP negative terms`. In the
    /// kernel, a comparison whose sides are not proven to fit compares their exact
    /// values through `sx_w`.
    pub fn cond(&mut self, c: Cond) -> Result<String> {
        match c.kind() {
            CondKind::Const(b) => Ok(if b { "1" } else { "0" }.to_string()),
            CondKind::Compare(d, op) => {
                let bits = self.ar.bits;
                let wide = self.mode == Mode::Native && !fits_sides(self.cx, d, bits);
                if wide {
                    self.widen(&c)?;
                    if self.ar.form == WideForm::Wrap && !sides_fit(self.cx, d, bits) {
                        return Err(self.unsupported(format!(
                            "the sides of `{c}` are not proven to fit in {bits}-bit arithmetic"
                        )));
                    }
                    self.mode = Mode::Wide;
                }
                let sides = self.sides(d);
                if wide {
                    self.mode = Mode::Native;
                }
                let (lhs, rhs) = sides?;
                if wide {
                    let read = if self.ar.form == WideForm::Int128 {
                        self.need(Helper::WideSigned);
                        "sx_ws"
                    } else {
                        self.need(Helper::WideNarrow);
                        "sx_narrow"
                    };
                    return Ok(format!(
                        "{read}({}) {} {read}({})",
                        bare(&lhs),
                        op.as_str(),
                        bare(&rhs)
                    ));
                }
                Ok(format!("{} {} {}", bare(&lhs), op.as_str(), bare(&rhs)))
            }
            CondKind::And(args) => self.junction(&args, " && "),
            CondKind::Or(args) => self.junction(&args, " || "),
            CondKind::Invalid(m) => Err(self.unsupported(format!("invalid condition: {m}"))),
            _ => Err(self.unsupported(format!("condition `{c}` has an unknown form"))),
        }
    }

    fn junction(&mut self, args: &[Cond], sep: &str) -> Result<String> {
        let parts: Vec<String> = args
            .iter()
            .map(|&a| Ok(paren(&self.cond(a)?)))
            .collect::<Result<_>>()?;
        Ok(format!("({})", parts.join(sep)))
    }

    /// `d` split as `lhs - rhs` with every coefficient of both sides positive.
    fn sides(&mut self, d: Expr) -> Result<(String, String)> {
        let Some((pos, cp, neg, cn)) = split(d) else {
            let zero = self.constant(&BigInt::from(0))?;
            return Ok((self.expr(d)?, zero));
        };
        Ok((self.sum(&pos, &cp)?, self.sum(&neg, &cn)?))
    }
}

/// Which division a node is.
#[derive(Clone, Copy)]
enum Division {
    Floor,
    Mod,
    Ceil,
}

type Terms = Vec<(Expr, BigInt)>;

/// A sum `d` as its positive terms and constant, and its negated negative terms and
/// constant; `None` when `d` is not a sum.
fn split(d: Expr) -> Option<(Terms, BigInt, Terms, BigInt)> {
    let ExprKind::Sum { terms, constant: c } = d.kind() else {
        return None;
    };
    let zero = BigInt::from(0);
    let (pos, neg): (Terms, Terms) = terms.into_iter().partition(|t| t.1 > zero);
    let neg: Terms = neg.into_iter().map(|(m, k)| (m, -k)).collect();
    let (cp, cn) = if c < zero {
        (zero.clone(), -c)
    } else {
        (c, zero)
    };
    Some((pos, cp, neg, cn))
}

/// A range as its two ends, `None` for an infinite one.
pub(crate) type Ends = (Option<BigInt>, Option<BigInt>);

/// The range of `e`: its symbols' declared ranges, narrowed by the scope's facts (its
/// assumptions, which the checks test before a kernel runs).
pub(crate) fn ends(cx: &Scope, e: Expr) -> Ends {
    let (r, f) = (e.range(), cx.range(e));
    let lo = match (r.lo, f.lo) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let hi = match (r.hi, f.hi) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    (lo, hi)
}

/// Whether the range lies within the signed integers of `bits` bits.
pub(crate) fn in_bits(r: &Ends, bits: u32) -> bool {
    let hi: BigInt = (BigInt::from(1) << (bits - 1)) - 1;
    let lo = -hi.clone() - 1;
    r.0.as_ref().is_some_and(|v| *v >= lo) && r.1.as_ref().is_some_and(|v| *v <= hi)
}

fn add_ends(a: &Ends, b: &Ends) -> Ends {
    let both = |x: &Option<BigInt>, y: &Option<BigInt>| match (x, y) {
        (Some(x), Some(y)) => Some(x + y),
        _ => None,
    };
    (both(&a.0, &b.0), both(&a.1, &b.1))
}

/// A sound range of the product (infinite unless both are finite or one is `{0}`).
fn mul_ends(a: &Ends, b: &Ends) -> Ends {
    let zero = BigInt::from(0);
    let is_zero = |r: &Ends| r.0.as_ref() == Some(&zero) && r.1.as_ref() == Some(&zero);
    if is_zero(a) || is_zero(b) {
        return (Some(zero.clone()), Some(zero));
    }
    let (Some(al), Some(ah), Some(bl), Some(bh)) = (&a.0, &a.1, &b.0, &b.1) else {
        return (None, None);
    };
    let ps = [al * bl, al * bh, ah * bl, ah * bh];
    let lo = ps.iter().min().cloned();
    let hi = ps.iter().max().cloned();
    (lo, hi)
}

fn point(v: &BigInt) -> Ends {
    (Some(v.clone()), Some(v.clone()))
}

/// Whether native evaluation of `e` in `bits`-bit integers, in the order the renderer
/// writes it, keeps every intermediate in range for every value the symbols' ranges and
/// the scope's facts allow. A symbol is read into the native type, so it must fit too (every symbol
/// fits 64 bits: parameters are `int64_t` values).
pub(crate) fn fits(cx: &Scope, e: Expr, bits: u32) -> bool {
    let ok = |r: &Ends| in_bits(r, bits);
    match e.kind() {
        ExprKind::Const(v) => ok(&point(&v)),
        ExprKind::Symbol(_) => bits >= 64 || ok(&ends(cx, e)),
        ExprKind::Sum { terms, constant: c } => fits_sum(cx, &terms, &c, bits),
        ExprKind::Product(factors) => {
            // Each partial product in the order written; the last is the product, whose
            // range the scope's facts may narrow.
            let steps: u32 = factors.iter().map(|f| f.1).sum();
            let mut acc: Option<Ends> = None;
            let mut done = 0;
            for (a, k) in factors {
                if !fits(cx, a, bits) {
                    return false;
                }
                let r = ends(cx, a);
                for _ in 0..k {
                    done += 1;
                    let next = match &acc {
                        None => r.clone(),
                        Some(x) => mul_ends(x, &r),
                    };
                    let last_fits = done == steps && ok(&ends(cx, e));
                    if !(ok(&next) || last_fits) {
                        return false;
                    }
                    acc = Some(next);
                }
            }
            true
        }
        ExprKind::FloorDiv(a, b) | ExprKind::FloorMod(a, b) | ExprKind::CeilDiv(a, b) => {
            fits(cx, a, bits) && fits(cx, b, bits) && ok(&ends(cx, e))
        }
        ExprKind::Min(args) | ExprKind::Max(args) => args.iter().all(|&a| fits(cx, a, bits)),
        _ => false,
    }
}

/// [`fits`] for the sum the renderer writes for `terms` and `c`: each term (its
/// magnitude times the monomial, then its sign) and each partial sum, in order.
fn fits_sum(cx: &Scope, terms: &[(Expr, BigInt)], c: &BigInt, bits: u32) -> bool {
    let ok = |r: &Ends| in_bits(r, bits);
    let mut acc: Option<Ends> = None;
    for (m, coef) in terms {
        if !fits(cx, *m, bits) {
            return false;
        }
        let r = ends(cx, *m);
        let mag = point(&if *coef < BigInt::from(0) {
            -coef.clone()
        } else {
            coef.clone()
        });
        let term = mul_ends(&r, &point(coef));
        if !ok(&mag) || !ok(&mul_ends(&r, &mag)) || !ok(&term) {
            return false;
        }
        let next = match &acc {
            None => term,
            Some(a) => add_ends(a, &term),
        };
        if !ok(&next) {
            return false;
        }
        acc = Some(next);
    }
    let last = match &acc {
        None => point(c),
        Some(a) => add_ends(a, &point(c)),
    };
    ok(&point(c)) && ok(&last)
}

/// Whether both sides of `d OP 0`, as [`Emitter::cond`] writes them, fit natively.
fn fits_sides(cx: &Scope, d: Expr, bits: u32) -> bool {
    match split(d) {
        Some((pos, cp, neg, cn)) => fits_sum(cx, &pos, &cp, bits) && fits_sum(cx, &neg, &cn, bits),
        None => fits(cx, d, bits),
    }
}

/// Whether the values of both sides of `d OP 0` (not their intermediates) fit.
fn sides_fit(cx: &Scope, d: Expr, bits: u32) -> bool {
    let value = |terms: &Terms, c: &BigInt| {
        terms.iter().fold(point(c), |acc, (m, k)| {
            add_ends(&acc, &mul_ends(&ends(cx, *m), &point(k)))
        })
    };
    match split(d) {
        Some((pos, cp, neg, cn)) => {
            in_bits(&value(&pos, &cp), bits) && in_bits(&value(&neg, &cn), bits)
        }
        None => in_bits(&ends(cx, d), bits),
    }
}

/// A constant that fits in 64 bits; negative ones in parentheses.
fn constant(v: &BigInt) -> Option<String> {
    let x = i64::try_from(v).ok()?;
    Some(if x == i64::MIN {
        "(-9223372036854775807 - 1)".to_string()
    } else if x < 0 {
        format!("({x})")
    } else {
        x.to_string()
    })
}

/// `text` safe inside a C comment.
pub(crate) fn comment(text: &str) -> String {
    text.replace("*/", "* /")
}

/// `s` in parentheses unless it is atomic or already wrapped.
pub(crate) fn paren(s: &str) -> String {
    if is_atomic(s) || wrapped(s) {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// `s` without one pair of parentheses around the whole of it.
pub(crate) fn bare(s: &str) -> String {
    if wrapped(s) {
        s[1..s.len() - 1].to_string()
    } else {
        s.to_string()
    }
}

fn is_atomic(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || (s.ends_with(')') && s.starts_with("sx_") && wrapped(&s[s.find('(').unwrap_or(0)..]))
}

/// Whether the first `(` of `s` closes at its last character.
fn wrapped(s: &str) -> bool {
    if !s.starts_with('(') || !s.ends_with(')') {
        return false;
    }
    let mut depth = 0usize;
    for (k, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k == s.len() - 1;
                }
            }
            _ => {}
        }
    }
    false
}

/// `a*b`, leaving out a factor 1.
pub(crate) fn times(a: &str, b: &str) -> String {
    match (a, b) {
        (_, "1") => a.to_string(),
        ("1", _) => b.to_string(),
        _ => format!("{}*{}", paren(a), paren(b)),
    }
}

/// `s` in parentheses when it is a sum or difference at top level.
pub(crate) fn paren_sum(s: &str) -> String {
    let mut depth = 0usize;
    for ch in s.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '+' | '-' if depth == 0 && s.len() > 1 => return format!("({s})"),
            _ => {}
        }
    }
    s.to_string()
}

pub(crate) fn plus(a: &str, b: &str) -> String {
    if a == "0" {
        b.to_string()
    } else if b == "0" {
        a.to_string()
    } else {
        format!("{a} + {b}")
    }
}
