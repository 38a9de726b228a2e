//! [`DType`]: NumPy's plain element types, their promotion table and NEP 50's rule for
//! Python scalars ([`promote_types`], [`result_type`]). Views know no element values;
//! the element type matters to them only through [`Op::AsType`](crate::Op::AsType),
//! which copies when it changes, and through the byte sizes `reinterpret` takes.

use std::fmt;
use std::str::FromStr;

use crate::error::{invalid, Error, Result};

/// One of NumPy's plain element types: `bool`, the signed and unsigned integers of 8 to
/// 64 bits and the 32- and 64-bit floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum DType {
    /// `bool`, one byte.
    Bool,
    /// `int8`.
    Int8,
    /// `int16`.
    Int16,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `uint8`.
    #[cfg_attr(feature = "serde", serde(rename = "uint8"))]
    UInt8,
    /// `uint16`.
    #[cfg_attr(feature = "serde", serde(rename = "uint16"))]
    UInt16,
    /// `uint32`.
    #[cfg_attr(feature = "serde", serde(rename = "uint32"))]
    UInt32,
    /// `uint64`.
    #[cfg_attr(feature = "serde", serde(rename = "uint64"))]
    UInt64,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
}

/// The kind of a [`DType`] and its width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bool,
    Signed(u32),
    Unsigned(u32),
    Float(u32),
}

impl DType {
    /// Every type, in NumPy's order of kinds and sizes.
    pub const ALL: [DType; 11] = [
        DType::Bool,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::UInt8,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
        DType::Float32,
        DType::Float64,
    ];

    /// NumPy's name: `bool`, `int8`, ..., `uint64`, `float32`, `float64`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::UInt8 => "uint8",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
        }
    }

    /// Bytes per element.
    #[must_use]
    pub fn itemsize(self) -> usize {
        match self.kind() {
            Kind::Bool => 1,
            Kind::Signed(b) | Kind::Unsigned(b) | Kind::Float(b) => b as usize / 8,
        }
    }

    fn kind(self) -> Kind {
        match self {
            DType::Bool => Kind::Bool,
            DType::Int8 => Kind::Signed(8),
            DType::Int16 => Kind::Signed(16),
            DType::Int32 => Kind::Signed(32),
            DType::Int64 => Kind::Signed(64),
            DType::UInt8 => Kind::Unsigned(8),
            DType::UInt16 => Kind::Unsigned(16),
            DType::UInt32 => Kind::Unsigned(32),
            DType::UInt64 => Kind::Unsigned(64),
            DType::Float32 => Kind::Float(32),
            DType::Float64 => Kind::Float(64),
        }
    }

    fn of(kind: Kind) -> DType {
        match kind {
            Kind::Bool => DType::Bool,
            Kind::Signed(8) => DType::Int8,
            Kind::Signed(16) => DType::Int16,
            Kind::Signed(32) => DType::Int32,
            Kind::Unsigned(8) => DType::UInt8,
            Kind::Unsigned(16) => DType::UInt16,
            Kind::Unsigned(32) => DType::UInt32,
            Kind::Unsigned(_) => DType::UInt64,
            Kind::Float(32) => DType::Float32,
            Kind::Float(_) => DType::Float64,
            Kind::Signed(_) => DType::Int64,
        }
    }

    /// The range of an integer type, `None` for `bool` and the floats.
    fn int_range(self) -> Option<(i128, i128)> {
        match self.kind() {
            Kind::Signed(b) => Some((-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)),
            Kind::Unsigned(b) => Some((0, (1i128 << b) - 1)),
            Kind::Bool | Kind::Float(_) => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = Error;

    /// NumPy's names (`int32`, `uint8`, `float64`, `bool`).
    fn from_str(s: &str) -> Result<DType> {
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
                Error::Parse {
                    detail: format!(
                        "`{s}` is not an element type; expected one of {}",
                        names.join(", ")
                    ),
                }
            })
    }
}

/// NumPy's `promote_types(a, b)`: the smallest type both convert to safely. `bool` gives
/// way to any type; integers of one signedness take the wider; a signed and an unsigned
/// integer take a signed type wider than the unsigned one (`float64` past `uint64`); an
/// integer and a float take the float when it holds every value of the integer
/// (`float32` holds 16-bit integers), else `float64`. So `int32 + float32` is `float64`
/// and `int8 + bool` is `int8`.
#[must_use]
pub fn promote_types(a: DType, b: DType) -> DType {
    use Kind::{Bool, Float, Signed, Unsigned};
    let kind = match (a.kind(), b.kind()) {
        (Bool, k) | (k, Bool) => k,
        (Signed(p), Signed(q)) => Signed(p.max(q)),
        (Unsigned(p), Unsigned(q)) => Unsigned(p.max(q)),
        (Signed(s), Unsigned(u)) | (Unsigned(u), Signed(s)) => {
            if s > u {
                Signed(s)
            } else if u < 64 {
                Signed(2 * u)
            } else {
                Float(64)
            }
        }
        (Float(f), Float(g)) => Float(f.max(g)),
        (Float(f), Signed(i) | Unsigned(i)) | (Signed(i) | Unsigned(i), Float(f)) => {
            // A float holds every integer of at most its mantissa's bits.
            if f == 32 && i <= 16 {
                Float(32)
            } else {
                Float(64)
            }
        }
    };
    DType::of(kind)
}

/// An operand of [`result_type`]: an array (or NumPy scalar) of a type, or a Python scalar,
/// which NEP 50 calls weak: it does not decide the result's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// An array or a NumPy scalar of this type.
    Array(DType),
    /// A Python `bool`.
    PyBool,
    /// A Python `int` of this value.
    PyInt(i128),
    /// A Python `float`.
    PyFloat,
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Array(d) => write!(f, "{d}"),
            Operand::PyBool => f.write_str("a python bool"),
            Operand::PyInt(v) => write!(f, "python integer {v}"),
            Operand::PyFloat => f.write_str("a python float"),
        }
    }
}

impl FromStr for Operand {
    type Err = Error;

    /// A type name (`int8`), or a Python literal: `True`/`False`, an integer (`300`,
    /// `-1`), a float (`1.0`, `2e3`, `inf`, `nan`).
    fn from_str(s: &str) -> Result<Operand> {
        if let Ok(d) = s.parse::<DType>() {
            return Ok(Operand::Array(d));
        }
        match s {
            "True" | "False" => return Ok(Operand::PyBool),
            "inf" | "-inf" | "nan" => return Ok(Operand::PyFloat),
            _ => {}
        }
        if let Ok(v) = s.parse::<i128>() {
            return Ok(Operand::PyInt(v));
        }
        let numeric = s.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.');
        if numeric && s.parse::<f64>().is_ok() {
            return Ok(Operand::PyFloat);
        }
        Err(Error::Parse {
            detail: format!(
                "`{s}` is neither an element type nor a python scalar (True, False, an integer or a float)"
            ),
        })
    }
}

/// The type NumPy 2 gives the result of an arithmetic op on `operands` (NEP 50): the
/// arrays' types are promoted with [`promote_types`]; Python scalars are weak and only
/// decide the kind: a Python `float` makes an integer or `bool` result `float64` and keeps
/// a float result's size (`float32 + 1.0` is `float32`); a Python `int` makes a `bool`
/// result `int64`, keeps an integer or float result, and must fit an integer result (NumPy
/// raises `OverflowError` for `uint8 + 300`); a Python `bool` changes nothing. Without
/// arrays, the scalars' highest kind gives the default type (`bool`, `int64`, `float64`).
///
/// # Errors
/// [`Error::Invalid`] for no operands, or a Python integer outside an integer result's
/// range.
pub fn result_type(operands: &[Operand]) -> Result<DType> {
    const OP: &str = "result_type";
    let mut strong: Option<DType> = None;
    let (mut int, mut float, mut boolean) = (false, false, false);
    for op in operands {
        match *op {
            Operand::Array(d) => strong = Some(strong.map_or(d, |s| promote_types(s, d))),
            Operand::PyBool => boolean = true,
            Operand::PyInt(_) => int = true,
            Operand::PyFloat => float = true,
        }
    }
    let res = match (strong, float, int) {
        (None, false, false) if !boolean => {
            return Err(invalid(OP, "at least one operand is needed"));
        }
        (None, true, _) => DType::Float64,
        (None, false, true) => DType::Int64,
        (None, false, false) => DType::Bool,
        (Some(s), true, _) if !matches!(s.kind(), Kind::Float(_)) => DType::Float64,
        (Some(DType::Bool), false, true) => DType::Int64,
        (Some(s), _, _) => s,
    };
    if let Some((lo, hi)) = res.int_range() {
        for op in operands {
            if let Operand::PyInt(v) = *op {
                if v < lo || v > hi {
                    return Err(invalid(
                        OP,
                        format!(
                            "python integer {v} out of bounds for {res} (the result type of {})",
                            list(operands)
                        ),
                    ));
                }
            }
        }
    }
    Ok(res)
}

fn list(operands: &[Operand]) -> String {
    let parts: Vec<String> = operands.iter().map(ToString::to_string).collect();
    parts.join(", ")
}
