//! DLPack interop (feature `dlpack`): CPU tensors as kernel sources, results as DLPack tensors.
//!
//! A DLPack tensor is a data pointer, a byte offset, a shape and strides in elements (a null
//! strides pointer means row-major) and a data type, on some device. [`source`] reads one on
//! the CPU as a slice and a [`ConcreteView`]: the slice covers exactly the elements the view
//! reaches, from the lowest offset to the highest (negative strides reach below the element
//! at index zero), and the view's offset is where index zero lies in it. [`materialize`]
//! runs the kernels on it; [`Dense::into_dlpack`] hands a result back as a managed tensor
//! that owns its values.
//!
//! What a tensor claims is checked before any element is read, and each refusal is an
//! [`Error::Dlpack`] naming the tensor's shape and strides:
//!
//! 1. the device is the CPU, and the data type is the one of `T`, one lane;
//! 2. `ndim` is not negative, the shape pointer is not null when `ndim > 0`, no size is
//!    negative, the element count and the offsets the strides reach fit `i64`;
//! 3. a tensor with elements has a data pointer, a byte offset that is a multiple of the
//!    element size, and an aligned first element;
//! 4. no element lies before the data pointer (the start of the tensor's allocation), and the
//!    last byte reached does not wrap the address space or exceed `isize::MAX` bytes;
//! 5. for `bool`, every byte of the slice is 0 or 1.
//!
//! What cannot be checked is whether the memory behind the pointer is really there: DLPack
//! does not carry the size of the allocation, so [`source`] and [`materialize`] are `unsafe`
//! and their callers vouch for it, as the producer of the tensor promised.
//!
//! ```
//! use symshape_kernels::dlpack::{self, dlpark::ffi::{DLDataType, DLDevice, DLTensor}};
//! use symshape_kernels::Dense;
//! // A 2 x 3 tensor read upside down (row stride -3) from the last row of a Rust buffer.
//! let buf = [0i32, 1, 2, 3, 4, 5];
//! let (mut shape, mut strides) = ([2i64, 3], [-3i64, 1]);
//! let t = DLTensor {
//!     data: buf.as_ptr().cast_mut().cast(),
//!     device: DLDevice::CPU,
//!     ndim: 2,
//!     dtype: DLDataType::I32,
//!     shape: shape.as_mut_ptr(),
//!     strides: strides.as_mut_ptr(),
//!     byte_offset: 3 * 4,
//! };
//! // SAFETY: the rows the tensor reaches lie in `buf`, which is not written meanwhile.
//! let (slice, view) = unsafe { dlpack::source::<i32>(&t) }?;
//! assert_eq!((slice.len(), view.offset()), (6, 3));
//! // SAFETY: as above.
//! let flipped = unsafe { dlpack::materialize::<i32>(&t) }?;
//! assert_eq!(flipped.values, [3, 4, 5, 0, 1, 2]);
//! // Back out as a managed tensor that owns the values, and in again.
//! let tensor = flipped.clone().into_dlpack()?;
//! // SAFETY: the tensor owns its values, which stay alive and unwritten while it is read.
//! let back: Dense<i32> = unsafe { dlpack::materialize_managed(&tensor) }?;
//! assert_eq!(back, flipped);
//! # Ok::<(), symshape_kernels::Error>(())
//! ```

use std::ffi::c_void;

/// The DLPack crate this module builds on, re-exported so that callers name the same types.
pub use dlpark;
use dlpark::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLTensor};
use dlpark::metadata::Dynamic;
use dlpark::{legacy, versioned, DlpackFlags, Managed, ManagedTensorBase};
use half::{bf16, f16};
use symshape_view::ConcreteView;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::operand::Input;
use crate::ops::{self, Dense};

mod sealed {
    pub trait Sealed {}
}

/// An [`Element`] with a DLPack data type: every element type of the kernels (`f16` is
/// `float16`, `bf16` is `bfloat16`).
///
/// `isize` and `usize` are the signed and unsigned integers of the pointer width; `bool` is
/// DLPack's one-byte boolean, and a tensor of it is read only when every byte is 0 or 1.
pub trait DlpackType: Element + sealed::Sealed {
    /// The scalar (one-lane) DLPack data type of `Self`.
    const DTYPE: DLDataType;
}

macro_rules! dlpack_type {
    ($($t:ty => $code:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl DlpackType for $t {
            const DTYPE: DLDataType =
                DLDataType::scalar(DLDataTypeCode::$code, (std::mem::size_of::<$t>() * 8) as u8);
        }
    )*};
}

dlpack_type!(
    i8 => INT, i16 => INT, i32 => INT, i64 => INT, isize => INT,
    u8 => UINT, u16 => UINT, u32 => UINT, u64 => UINT, usize => UINT,
    f32 => FLOAT, f64 => FLOAT, f16 => FLOAT, bf16 => BFLOAT, bool => BOOL,
);

/// The op name of every import error.
const IMPORT: &str = "from_dlpack";
/// The op name of every export error.
const EXPORT: &str = "into_dlpack";

/// A device as DLPack's header names it, with its index.
fn device_name(d: DLDevice) -> String {
    let name = match d.device_type {
        DLDeviceType::CPU => "CPU",
        DLDeviceType::CUDA => "CUDA",
        DLDeviceType::CUDAHOST => "CUDAHost",
        DLDeviceType::OPENCL => "OpenCL",
        DLDeviceType::VULKAN => "Vulkan",
        DLDeviceType::METAL => "Metal",
        DLDeviceType::VPI => "VPI",
        DLDeviceType::ROCM => "ROCM",
        DLDeviceType::ROCMHOST => "ROCMHost",
        DLDeviceType::EXTDEV => "ExtDev",
        DLDeviceType::CUDAMANAGED => "CUDAManaged",
        DLDeviceType::ONEAPI => "OneAPI",
        DLDeviceType::WEBGPU => "WebGPU",
        DLDeviceType::HEXAGON => "Hexagon",
        DLDeviceType::MAIA => "MAIA",
        DLDeviceType::TRN => "Trn",
        DLDeviceType(other) => return format!("type {other}:{}", d.device_id),
    };
    format!("{name}:{}", d.device_id)
}

/// A data type as code name, bits and lanes: `float32`, `int8x4`, `code 8 bits 8`.
fn dtype_name(d: DLDataType) -> String {
    let code = match d.code {
        DLDataTypeCode::INT => "int",
        DLDataTypeCode::UINT => "uint",
        DLDataTypeCode::FLOAT => "float",
        DLDataTypeCode::OPAQUEHANDLE => "opaque",
        DLDataTypeCode::BFLOAT => "bfloat",
        DLDataTypeCode::COMPLEX => "complex",
        DLDataTypeCode::BOOL => "bool",
        DLDataTypeCode(c) => return format!("code {c} bits {}", d.bits) + &lanes(d.lanes),
    };
    format!("{code}{}{}", d.bits, lanes(d.lanes))
}

fn lanes(n: u16) -> String {
    if n == 1 {
        String::new()
    } else {
        format!("x{n}")
    }
}

/// `[a, b, ..]`, or `null`.
fn fmt_opt(v: Option<&[i64]>) -> String {
    v.map_or_else(|| "null".to_owned(), |v| format!("{v:?}"))
}

/// The error of [`source`], carrying the tensor's shape and strides as far as they were read.
struct Refusal {
    shape: String,
    strides: String,
}

impl Refusal {
    fn err(&self, reason: impl Into<String>) -> Error {
        Error::Dlpack {
            op: IMPORT,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            reason: reason.into(),
        }
    }
}

/// Row-major strides of `shape` (zero-size axes count as one, as the view crate does).
fn row_major(shape: &[i64]) -> Option<Vec<i64>> {
    let mut res = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for (s, &n) in res.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.checked_mul(n.max(1))?;
    }
    Some(res)
}

/// Lowest and highest element offset that the indices of a non-empty `shape` reach from index
/// zero with `strides`, or `None` when a partial sum leaves `i128` (it cannot once the element
/// count fits `i64`: the sizes minus one then sum below 2^63, each stride is at most 2^63).
fn reach(shape: &[i64], strides: &[i64]) -> Option<(i128, i128)> {
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&n, &s) in shape.iter().zip(strides) {
        // |s * (n - 1)| < 2^127.
        let step = i128::from(s) * (i128::from(n) - 1);
        if step < 0 {
            lo = lo.checked_add(step)?;
        } else {
            hi = hi.checked_add(step)?;
        }
    }
    Some((lo, hi))
}

/// The elements of the CPU tensor `t` as a slice covering exactly what its shape and strides
/// reach, and the view that reads the tensor from that slice.
///
/// Null strides mean row-major ones; a tensor without elements gives an empty slice (its data
/// pointer may be null). The checks are listed in the module docs.
///
/// # Errors
/// [`Error::Dlpack`] for every tensor refused by those checks, naming its shape and strides.
///
/// # Safety
/// `t.shape`, and `t.strides` when it is not null, must point to `t.ndim` readable `i64`s.
/// The data is read only when the tensor has elements and none of them lies before `t.data`
/// (others are refused); then the bytes from its lowest reached element to its highest,
/// counted from `t.data` plus `t.byte_offset`, must lie in the allocation `t.data` points
/// into, be initialized, and not be written while the returned slice lives.
pub unsafe fn source<T: DlpackType>(t: &DLTensor) -> Result<(&[T], ConcreteView)> {
    let mut refusal = Refusal {
        shape: "?".to_owned(),
        strides: "?".to_owned(),
    };
    if t.ndim < 0 {
        return Err(refusal.err(format!("has negative ndim {}", t.ndim)));
    }
    if t.ndim > 0 && t.shape.is_null() {
        return Err(refusal.err(format!("has a null shape pointer but ndim {}", t.ndim)));
    }
    // SAFETY: `ndim` is non-negative and the shape pointer non-null when `ndim > 0`; the
    // caller guarantees `ndim` readable values behind it (and behind non-null strides).
    let shape = unsafe { t.shape() }.map_err(|e| refusal.err(format!("has {e}")))?;
    refusal.shape = format!("{shape:?}");
    // SAFETY: as above.
    let strides = unsafe { t.strides() }.map_err(|e| refusal.err(format!("has {e}")))?;
    refusal.strides = fmt_opt(strides);
    if t.device.device_type != DLDeviceType::CPU {
        return Err(refusal.err(format!(
            "is on device {}; only CPU tensors can be read",
            device_name(t.device)
        )));
    }
    if t.dtype != T::DTYPE {
        return Err(refusal.err(format!(
            "has dtype {} but {} ({}) was asked for",
            dtype_name(t.dtype),
            T::NAME,
            dtype_name(T::DTYPE)
        )));
    }
    if let Some((axis, &n)) = shape.iter().enumerate().find(|(_, &n)| n < 0) {
        return Err(refusal.err(format!("has negative size {n} on axis {axis}")));
    }
    let strides: Vec<i64> = match strides {
        Some(s) => s.to_vec(),
        None => row_major(shape).ok_or_else(|| refusal.err("has row-major strides past i64"))?,
    };
    let numel = shape
        .iter()
        .try_fold(1i64, |acc, &n| acc.checked_mul(n))
        .or_else(|| shape.contains(&0).then_some(0));
    let Some(numel) = numel else {
        return Err(refusal.err("has more elements than fit i64"));
    };
    if numel == 0 {
        return Ok((&[], ConcreteView::create(shape, Some(&strides), 0, None)?));
    }
    if t.data.is_null() {
        return Err(refusal.err(format!("has null data but {numel} elements")));
    }
    let size = std::mem::size_of::<T>();
    let (lo, hi) = reach(shape, &strides)
        .filter(|&(lo, hi)| hi - lo < i128::from(i64::MAX))
        .ok_or_else(|| refusal.err("reaches offsets whose span exceeds i64"))?;
    if !t.byte_offset.is_multiple_of(size as u64) {
        return Err(refusal.err(format!(
            "has byte_offset {} that is not a multiple of the element size {size}",
            t.byte_offset
        )));
    }
    // Element offset of index zero from the data pointer, and of the lowest element reached.
    let zero = i128::from(t.byte_offset / size as u64);
    let first = zero + lo;
    if first < 0 {
        return Err(refusal.err(format!(
            "reaches element {first} before its data pointer (byte_offset {}, lowest offset {lo} from index zero)",
            t.byte_offset
        )));
    }
    let len = hi - lo + 1;
    let addr = t.data as usize;
    // Byte offsets of the slice from `data`, and the slice's length in bytes.
    let start = usize::try_from(first * size as i128).ok();
    let bytes = usize::try_from(len * size as i128)
        .ok()
        .filter(|&b| isize::try_from(b).is_ok());
    let (Some(start), Some(bytes)) = (start, bytes) else {
        return Err(refusal.err(format!(
            "spans {len} elements from element {first}, past the address range"
        )));
    };
    if start
        .checked_add(bytes)
        .and_then(|end| addr.checked_add(end))
        .is_none()
    {
        return Err(refusal.err(format!(
            "spans {len} elements from element {first}, past the address range"
        )));
    }
    if !addr.is_multiple_of(std::mem::align_of::<T>()) {
        return Err(refusal.err(format!(
            "has data not aligned to the {}-byte alignment of {}",
            std::mem::align_of::<T>(),
            T::NAME
        )));
    }
    let len = bytes / size;
    // SAFETY: `start + bytes` does not wrap the address space, and the caller guarantees that
    // bytes `start..start + bytes` from `data` (the lowest to the highest element the view
    // reaches) lie in the allocation `data` points into.
    let ptr = unsafe { t.data.cast::<u8>().add(start) };
    if T::DTYPE.code == DLDataTypeCode::BOOL {
        // SAFETY: the range is initialized and unwritten (caller), non-null, and a byte
        // slice needs no alignment; `bytes <= isize::MAX`.
        let raw = unsafe { std::slice::from_raw_parts(ptr.cast_const(), bytes) };
        if let Some((at, b)) = raw.iter().enumerate().find(|(_, &b)| b > 1) {
            return Err(refusal.err(format!(
                "holds byte {b} at element {at} of its extent, which is not a bool"
            )));
        }
    }
    // SAFETY: `ptr` is non-null (data is, and the sum does not wrap) and aligned for `T`
    // (`addr` is, and `start` is a multiple of `size_of::<T>()`, itself a multiple of the
    // alignment); the `len` elements are initialized and unwritten while the slice lives (caller); every
    // bit pattern is a valid `T` (bool: checked just above); `bytes <= isize::MAX`.
    let buf = unsafe { std::slice::from_raw_parts(ptr.cast_const().cast::<T>(), len) };
    // `-lo <= hi - lo < i64::MAX`, so every offset of the view fits i64.
    let offset = i64::try_from(-lo).map_err(|_| refusal.err("reaches offsets past i64"))?;
    Ok((
        buf,
        ConcreteView::create(shape, Some(&strides), offset, None)?,
    ))
}

/// [`source`] of the tensor a managed (legacy or versioned) DLPack tensor holds.
///
/// # Errors
/// As [`source`].
///
/// # Safety
/// The data requirements of [`source`] (the shape and strides are the managed tensor's own,
/// which [`Managed`] keeps readable).
pub unsafe fn source_managed<T: DlpackType, M: ManagedTensorBase>(
    t: &Managed<M>,
) -> Result<(&[T], ConcreteView)> {
    // SAFETY: `Managed` owns a readable descriptor that is only mutated through `&mut`.
    let raw = unsafe { t.tensor() };
    // SAFETY: `Managed` keeps shape and strides readable; the caller vouches for the data.
    unsafe { source(raw) }
}

/// The values of the CPU tensor `t` in row-major order, read through [`source`] and
/// [`crate::materialize`].
///
/// # Errors
/// As [`source`], and as [`crate::materialize`].
///
/// # Safety
/// As [`source`].
pub unsafe fn materialize<T: DlpackType>(t: &DLTensor) -> Result<Dense<T>> {
    // SAFETY: forwarded to the caller.
    let (buf, view) = unsafe { source::<T>(t) }?;
    ops::materialize(Input::new(buf, &view))
}

/// [`materialize`] of the tensor a managed DLPack tensor holds.
///
/// # Errors
/// As [`materialize`].
///
/// # Safety
/// As [`source_managed`].
pub unsafe fn materialize_managed<T: DlpackType, M: ManagedTensorBase>(
    t: &Managed<M>,
) -> Result<Dense<T>> {
    // SAFETY: forwarded to the caller.
    let (buf, view) = unsafe { source_managed::<T, M>(t) }?;
    ops::materialize(Input::new(buf, &view))
}

/// A managed tensor of ABI `M` owning `dense`'s values, with explicit row-major strides.
fn export<T: DlpackType, M: ManagedTensorBase>(dense: Dense<T>) -> Result<Managed<M>> {
    let Dense { shape, values } = dense;
    let overflow = || Error::Overflow {
        op: EXPORT,
        shape: shape.clone(),
    };
    let expected = shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
    if expected != Some(values.len()) {
        return Err(Error::OutputLength {
            op: EXPORT,
            shape,
            expected: expected.unwrap_or(usize::MAX),
            got: values.len(),
        });
    }
    let dims: Vec<i64> = shape
        .iter()
        .map(|&n| i64::try_from(n).map_err(|_| overflow()))
        .collect::<Result<_>>()?;
    let mut values = Box::new(values);
    // An empty tensor has a null data pointer, as DLPack asks.
    let data: *mut c_void = if values.is_empty() {
        std::ptr::null_mut()
    } else {
        values.as_mut_ptr().cast()
    };
    // The shape and its strides are copied into the managed allocation; the box owning the
    // values is its context, dropped by the deleter. Moving the box keeps the heap buffer.
    let mut init = Dynamic::compact(dims)
        .initialize_as::<M>(values)
        .map_err(|_| overflow())?;
    init.set_data(data)
        .set_device(DLDevice::CPU)
        .set_dtype(T::DTYPE)
        .set_byte_offset(0);
    // SAFETY: the values are a fresh copy that the tensor alone owns until its deleter runs,
    // which is what `IS_COPIED` states; they are writable, so `READ_ONLY` stays clear.
    unsafe { init.set_flags_unchecked(DlpackFlags::IS_COPIED) };
    // SAFETY: data points to `shape`'s element count of initialized `T` owned by the context
    // (or is null for none), the metadata lives in the managed allocation, strides are
    // explicit, and the dtype, device and flags describe the values.
    Ok(unsafe { init.finish() })
}

impl<T: DlpackType> Dense<T> {
    /// The values as a versioned DLPack managed tensor on the CPU that owns them (no copy):
    /// row-major strides written out, byte offset 0, flagged `IS_COPIED`; dropping the
    /// tensor (or its consumer calling the deleter) frees them.
    ///
    /// # Errors
    /// [`Error::OutputLength`] when the values do not fill the shape; [`Error::Overflow`]
    /// when a size or a stride does not fit `i64`.
    pub fn into_dlpack(self) -> Result<versioned::Dlpack> {
        export(self)
    }

    /// [`Dense::into_dlpack`] for consumers of the legacy (unversioned) ABI.
    ///
    /// # Errors
    /// As [`Dense::into_dlpack`].
    pub fn into_dlpack_legacy(self) -> Result<legacy::Dlpack> {
        export(self)
    }
}
