//! The expression parser: text to interned expressions and conditions.
//!
//! Recursive descent with an explicit nesting budget, so deep input is an error, never a
//! stack overflow.

use num_bigint::BigInt;

use crate::build::{self, NoFacts, Poly};
use crate::expr::{Cond, Expr, KEYWORDS};
use crate::limits::MAX_TERMS;
use crate::node::{info, CmpKind, Id, Sort};
use crate::Error;

/// Deepest nesting of parentheses, unary operators and calls the parser accepts.
pub const MAX_PARSE_DEPTH: usize = 100;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(BigInt),
    Ident(String),
    Op(&'static str),
    End,
}

const OPS: &[&str] = &[
    "//", "<=", ">=", "==", "!=", "+", "-", "*", "%", "<", ">", "(", ")", ",",
];

fn describe(t: &Tok) -> String {
    match t {
        Tok::Int(v) => format!("`{v}`"),
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Op(s) => format!("`{s}`"),
        Tok::End => "end of input".to_string(),
    }
}

/// A position in the text: byte offset and 1-based column in characters.
#[derive(Clone, Copy)]
struct Pos {
    at: usize,
    col: usize,
}

/// The token at `pos` (skipping whitespace), its column, and the position after it; `End`
/// at the end of `text`. Tokens are made one at a time, so the parser's memory does not
/// grow with the length of the text.
fn lex_one(text: &str, mut pos: Pos) -> Result<(Tok, usize, Pos), Error> {
    let rest = &text[pos.at..];
    let Some(c) = rest.chars().next() else {
        return Ok((Tok::End, pos.col, pos));
    };
    if c.is_whitespace() {
        let n = rest
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map_or(rest.len(), |(i, _)| i);
        pos.col += rest[..n].chars().count();
        pos.at += n;
        return lex_one(text, pos);
    }
    let col = pos.col;
    // Tokens other than whitespace are ASCII, so their byte length is their width.
    let run = |ok: fn(char) -> bool| rest.find(|c: char| !ok(c)).unwrap_or(rest.len());
    let (tok, len) = if c.is_ascii_digit() {
        let len = run(|c| c.is_ascii_digit() || c == '_');
        // Most integers are short: read them without the general decimal conversion.
        if len <= 18 && !rest[..len].contains('_') {
            let v: u64 = rest[..len]
                .parse()
                .map_err(|_| perr(col, format!("bad integer `{}`", &rest[..len])))?;
            let next = Pos {
                at: pos.at + len,
                col: col + len,
            };
            return Ok((Tok::Int(BigInt::from(v)), col, next));
        }
        let s: String = rest[..len].chars().filter(|c| *c != '_').collect();
        // Reject by length first: parsing a huge decimal is quadratic.
        let max_digits = crate::limits::MAX_COEF_BITS as usize * 30_103 / 100_000 + 2;
        let too_wide = || {
            perr(
                col,
                format!("integer wider than {} bits", crate::limits::MAX_COEF_BITS),
            )
        };
        if s.trim_start_matches('0').len() > max_digits {
            return Err(too_wide());
        }
        let v = s
            .parse::<BigInt>()
            .map_err(|_| perr(col, format!("bad integer `{s}`")))?;
        if v.bits() > crate::limits::MAX_COEF_BITS {
            return Err(too_wide());
        }
        (Tok::Int(v), len)
    } else if c.is_ascii_alphabetic() || c == '_' {
        let len = run(|c| c.is_ascii_alphanumeric() || c == '_');
        (Tok::Ident(rest[..len].to_owned()), len)
    } else {
        let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
            return Err(perr(col, format!("unexpected character `{c}`")));
        };
        (Tok::Op(op), op.len())
    };
    Ok((
        tok,
        col,
        Pos {
            at: pos.at + len,
            col: col + len,
        },
    ))
}

/// Checks that all of `text` lexes, so that a lexical error is reported before any
/// syntax error, as a whole-text lexer would; linear time, constant memory.
fn check_lexes(text: &str) -> Result<(), Error> {
    let mut pos = Pos { at: 0, col: 1 };
    loop {
        let (tok, _, next) = lex_one(text, pos)?;
        if tok == Tok::End {
            return Ok(());
        }
        pos = next;
    }
}

/// An operator as error messages quote it, without formatting one per operand.
fn quoted(op: &str) -> &'static str {
    match op {
        "+" => "`+`",
        "-" => "`-`",
        "*" => "`*`",
        "//" => "`//`",
        "%" => "`%`",
        "<=" => "`<=`",
        ">=" => "`>=`",
        "==" => "`==`",
        "!=" => "`!=`",
        "<" => "`<`",
        ">" => "`>`",
        _ => "an operator",
    }
}

fn perr(column: usize, message: String) -> Error {
    Error::Parse { column, message }
}

/// Splits `text` at every `sep` that is not nested in `()` or `[]`, trimming each part: the
/// lexical step before parsing a list of expressions, such as `[n, (a, b), 2*n]`.
///
/// A blank `text` gives no parts; otherwise there is one part more than top-level
/// separators, so empty parts are kept (`::2` split at `:` gives `["", "", "2"]`).
///
/// # Errors
/// [`Error::Parse`] at the first bracket closed without being opened, or at the end of
/// `text` when a bracket is left open. Time and memory are linear in `text`.
///
/// ```
/// assert_eq!(symshape::split_top_level("n, (a, b), [2*n]", ',')?, ["n", "(a, b)", "[2*n]"]);
/// assert!(symshape::split_top_level("(a, b", ',').is_err());
/// # Ok::<(), symshape::Error>(())
/// ```
pub fn split_top_level(text: &str, sep: char) -> Result<Vec<&str>, Error> {
    let mut parts = Vec::new();
    // The brackets still open, with their 1-based columns.
    let mut open: Vec<(char, usize)> = Vec::new();
    let mut start = 0;
    for (column, (at, c)) in (1..).zip(text.char_indices()) {
        match c {
            '(' | '[' => open.push((c, column)),
            ')' | ']' => match open.pop() {
                Some((o, _)) if (o == '(') == (c == ')') => {}
                Some((o, col)) => {
                    return Err(perr(
                        column,
                        format!("`{c}` closes the `{o}` of column {col}"),
                    ))
                }
                None => return Err(perr(column, format!("`{c}` closes nothing"))),
            },
            c if c == sep && open.is_empty() => {
                parts.push(text[start..at].trim());
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    if let Some(&(o, col)) = open.last() {
        return Err(perr(col, format!("`{o}` is never closed")));
    }
    let last = text[start..].trim();
    if !(parts.is_empty() && last.is_empty()) {
        parts.push(last);
    }
    Ok(parts)
}

/// A parsed value: integer or condition.
#[derive(Clone, Copy)]
enum Val {
    Int(Id),
    Bool(Id),
}

impl Val {
    /// The integer expression, or what was found instead.
    fn int(self) -> Result<Id, &'static str> {
        match self {
            Val::Int(id) => Ok(id),
            Val::Bool(_) => Err("a condition"),
        }
    }

    /// The condition, or what was found instead.
    fn boolean(self) -> Result<Id, &'static str> {
        match self {
            Val::Bool(id) => Ok(id),
            Val::Int(_) => Err("an integer expression"),
        }
    }
}

pub(crate) type Resolve<'a> = &'a dyn Fn(&str) -> Option<Expr>;

struct Parser<'a> {
    text: &'a str,
    /// The current token and its column.
    cur: (Tok, usize),
    /// Where the token after the current one starts.
    next: Pos,
    depth: usize,
    resolve: Resolve<'a>,
}

pub(crate) fn parse_expr(resolve: Resolve<'_>, text: &str) -> Result<Expr, Error> {
    parse_as(resolve, text, "an integer expression", |v| {
        v.int().map(Expr)
    })
}

pub(crate) fn parse_cond(resolve: Resolve<'_>, text: &str) -> Result<Cond, Error> {
    parse_as(resolve, text, "a condition", |v| v.boolean().map(Cond))
}

/// Parses `text` whole and takes its value with `take`, which names what it found
/// instead of `want`.
fn parse_as<T>(
    resolve: Resolve<'_>,
    text: &str,
    want: &str,
    take: impl FnOnce(Val) -> Result<T, &'static str>,
) -> Result<T, Error> {
    let (v, col) = parse_all(resolve, text)?;
    take(v).map_err(|found| perr(col, format!("expected {want}, found {found}")))
}

fn parse_all(resolve: Resolve<'_>, text: &str) -> Result<(Val, usize), Error> {
    check_lexes(text)?;
    let (tok, col, next) = lex_one(text, Pos { at: 0, col: 1 })?;
    let mut p = Parser {
        text,
        cur: (tok, col),
        next,
        depth: 0,
        resolve,
    };
    let col = p.col();
    let v = p.or()?;
    if p.peek() != &Tok::End {
        return Err(perr(
            p.col(),
            format!("unexpected {} after the expression", describe(p.peek())),
        ));
    }
    Ok((v, col))
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.cur.0
    }

    fn col(&self) -> usize {
        self.cur.1
    }

    /// The current token, moving to the next one (the whole text lexed once already, so
    /// lexing cannot fail here; if it did, the input would simply end).
    fn bump(&mut self) -> Tok {
        let (tok, col, next) =
            lex_one(self.text, self.next).unwrap_or((Tok::End, self.next.col, self.next));
        self.next = next;
        std::mem::replace(&mut self.cur, (tok, col)).0
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Tok::Op(o) if *o == op) {
            self.bump();
            return true;
        }
        false
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if matches!(self.peek(), Tok::Ident(s) if s == w) {
            self.bump();
            return true;
        }
        false
    }

    /// Enters one nesting level opened by the token at `col`.
    fn enter(&mut self, col: usize) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return Err(perr(
                col,
                format!("expression nests deeper than {MAX_PARSE_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn int(&self, v: Val, col: usize, what: &str) -> Result<Id, Error> {
        v.int()
            .map_err(|found| perr(col, format!("{what} needs an integer, found {found}")))
    }

    fn boolean(&self, v: Val, col: usize, what: &str) -> Result<Id, Error> {
        v.boolean()
            .map_err(|found| perr(col, format!("{what} needs a condition, found {found}")))
    }

    fn checked(&self, id: Id, col: usize) -> Result<Id, Error> {
        if info(id).sort == Sort::Invalid {
            let msg = crate::expr::check_id(id)
                .err()
                .map_or_else(String::new, |e| e.to_string());
            return Err(perr(col, msg));
        }
        Ok(id)
    }

    fn or(&mut self) -> Result<Val, Error> {
        self.chain("or", Self::and)
    }

    fn and(&mut self) -> Result<Val, Error> {
        self.chain("and", Self::not)
    }

    /// `operand (word operand)*` for the connective `word` (`and` or `or`), whose operands
    /// bind tighter and are parsed by `operand`.
    fn chain(
        &mut self,
        word: &str,
        operand: fn(&mut Self) -> Result<Val, Error>,
    ) -> Result<Val, Error> {
        let col = self.col();
        let first = operand(self)?;
        if !matches!(self.peek(), Tok::Ident(s) if s == word) {
            return Ok(first);
        }
        let what = format!("`{word}`");
        let mut args = vec![self.boolean(first, col, &what)?];
        while self.eat_word(word) {
            let col = self.col();
            let v = operand(self)?;
            args.push(self.boolean(v, col, &what)?);
        }
        Ok(Val::Bool(
            self.checked(build::and_or(word == "and", &args), col)?,
        ))
    }

    fn not(&mut self) -> Result<Val, Error> {
        let col = self.col();
        if self.eat_word("not") {
            self.enter(col)?;
            let col = self.col();
            let v = self.not()?;
            self.depth -= 1;
            let id = self.boolean(v, col, "`not`")?;
            return Ok(Val::Bool(build::not(&NoFacts, id)));
        }
        self.comparison()
    }

    /// `a OP b OP c ...` is the conjunction of the adjacent comparisons.
    fn comparison(&mut self) -> Result<Val, Error> {
        let col = self.col();
        let first = self.sum()?;
        let mut conj = Vec::new();
        let mut left = first;
        let mut left_col = col;
        while let Tok::Op(op @ ("<" | "<=" | "==" | "!=" | ">=" | ">")) = self.peek() {
            let op = *op;
            self.bump();
            let rcol = self.col();
            let right = self.sum()?;
            let a = self.int(left, left_col, quoted(op))?;
            let b = self.int(right, rcol, quoted(op))?;
            let (pa, pb) = (Poly::of(a), Poly::of(b));
            let c = match op {
                "<" => build::compare(&NoFacts, CmpKind::Le, pa.sub(&pb).plus_const(1)),
                "<=" => build::compare(&NoFacts, CmpKind::Le, pa.sub(&pb)),
                ">" => build::compare(&NoFacts, CmpKind::Le, pb.sub(&pa).plus_const(1)),
                ">=" => build::compare(&NoFacts, CmpKind::Le, pb.sub(&pa)),
                "==" => build::compare(&NoFacts, CmpKind::Eq, pa.sub(&pb)),
                _ => build::compare(&NoFacts, CmpKind::Ne, pa.sub(&pb)),
            };
            conj.push(self.checked(c, col)?);
            left = right;
            left_col = rcol;
        }
        if conj.is_empty() {
            return Ok(first);
        }
        Ok(Val::Bool(self.checked(build::and_or(true, &conj), col)?))
    }

    /// `term ((+ | -) term)*`, summed as one polynomial: the partial sums of a long sum
    /// are never interned, so time is `O(n log n)` and memory linear in its terms.
    fn sum(&mut self) -> Result<Val, Error> {
        let col = self.col();
        let first = self.term()?;
        let Some(&first_op) = ["+", "-"].iter().find(|op| self.peek() == &Tok::Op(op)) else {
            return Ok(first);
        };
        let mut sum = Poly::of(self.int(first, col, quoted(first_op))?);
        while let Some(op) = ["+", "-"].into_iter().find(|op| self.eat_op(op)) {
            let rcol = self.col();
            let rhs = self.term()?;
            let mut p = Poly::of(self.int(rhs, rcol, quoted(op))?);
            if op == "-" {
                p = p.scale(&-BigInt::from(1));
            }
            sum.terms.extend(p.terms);
            sum.c += p.c;
            if sum.terms.len() > 4 * MAX_TERMS {
                sum.normalize();
                if sum.terms.len() > MAX_TERMS {
                    return Err(perr(
                        col,
                        format!("limit: polynomial with more than {MAX_TERMS} terms"),
                    ));
                }
            }
        }
        Ok(Val::Int(self.checked(build::from_poly(sum), col)?))
    }

    fn term(&mut self) -> Result<Val, Error> {
        self.left_assoc(&["*", "//", "%"], Self::unary)
    }

    /// `operand (op operand)*` for the left-associative integer operators `ops`, whose
    /// operands bind tighter and are parsed by `operand`.
    fn left_assoc(
        &mut self,
        ops: &[&'static str],
        operand: fn(&mut Self) -> Result<Val, Error>,
    ) -> Result<Val, Error> {
        let col = self.col();
        let mut acc = operand(self)?;
        loop {
            let Some(op) = ops.iter().copied().find(|op| self.eat_op(op)) else {
                return Ok(acc);
            };
            let rcol = self.col();
            let rhs = operand(self)?;
            let a = self.int(acc, col, quoted(op))?;
            let b = self.int(rhs, rcol, quoted(op))?;
            let r = match op {
                "+" => build::add(a, b),
                "-" => build::sub(a, b),
                "*" => build::mul(a, b),
                "//" => build::floor_div(&NoFacts, a, b),
                _ => build::floor_mod(&NoFacts, a, b),
            };
            acc = Val::Int(self.checked(r, col)?);
        }
    }

    fn unary(&mut self) -> Result<Val, Error> {
        let col = self.col();
        if self.eat_op("-") {
            self.enter(col)?;
            let v = self.unary()?;
            self.depth -= 1;
            let a = self.int(v, col + 1, "unary `-`")?;
            return Ok(Val::Int(self.checked(build::neg(a), col)?));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Val, Error> {
        let col = self.col();
        match self.bump() {
            Tok::Int(v) => Ok(Val::Int(build::constant(v))),
            Tok::Op("(") => {
                self.enter(col)?;
                let v = self.or()?;
                self.depth -= 1;
                self.expect(")")?;
                Ok(v)
            }
            Tok::Ident(name) => match name.as_str() {
                "true" => Ok(Val::Bool(build::boolean(true))),
                "false" => Ok(Val::Bool(build::boolean(false))),
                "min" | "max" | "cdiv" => self.call(&name, col),
                w if KEYWORDS.contains(&w) => {
                    Err(perr(col, format!("expected an expression, found `{w}`")))
                }
                _ => {
                    if self.peek() == &Tok::Op("(") {
                        return Err(perr(col, format!("unknown function `{name}`")));
                    }
                    match (self.resolve)(&name) {
                        Some(e) => Ok(Val::Int(e.0)),
                        None => Err(perr(col, format!("unknown symbol `{name}`"))),
                    }
                }
            },
            t => Err(perr(
                col,
                format!("expected an expression, found {}", describe(&t)),
            )),
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), Error> {
        if self.eat_op(op) {
            return Ok(());
        }
        Err(perr(
            self.col(),
            format!("expected `{op}`, found {}", describe(self.peek())),
        ))
    }

    fn call(&mut self, name: &str, col: usize) -> Result<Val, Error> {
        self.expect("(")?;
        self.enter(col)?;
        let mut args = Vec::new();
        loop {
            let acol = self.col();
            let v = self.or()?;
            args.push(self.int(v, acol, &format!("`{name}`"))?);
            if !self.eat_op(",") {
                break;
            }
        }
        self.depth -= 1;
        self.expect(")")?;
        let r = match (name, args.as_slice()) {
            ("cdiv", [a, b]) => build::ceil_div(&NoFacts, *a, *b),
            ("cdiv", _) => {
                return Err(perr(
                    col,
                    format!("`cdiv` takes 2 arguments, found {}", args.len()),
                ))
            }
            ("min", _) => build::min_max(&NoFacts, true, &args),
            _ => build::min_max(&NoFacts, false, &args),
        };
        Ok(Val::Int(self.checked(r, col)?))
    }
}

/// Parses with symbols of the default range `0..=i64::MAX`, created by name; use
/// [`Scope::parse_expr`](crate::Scope::parse_expr) to resolve declared symbols.
impl std::str::FromStr for Expr {
    type Err = Error;
    fn from_str(s: &str) -> Result<Expr, Error> {
        parse_expr(&|n| Expr::symbol(n).ok(), s)
    }
}

/// Parses with symbols of the default range `0..=i64::MAX`, created by name; use
/// [`Scope::parse_cond`](crate::Scope::parse_cond) to resolve declared symbols.
impl std::str::FromStr for Cond {
    type Err = Error;
    fn from_str(s: &str) -> Result<Cond, Error> {
        parse_cond(&|n| Expr::symbol(n).ok(), s)
    }
}
