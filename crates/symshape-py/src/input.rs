//! Reading a NumPy array in place: the array's own layout (strides and offset, in elements)
//! becomes the bottom view under a bound stack, whose bottom view addresses the array's
//! elements in C order.

use numpy::ndarray::{ArrayViewD, Axis};
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};
use symshape_kernels::{materialize, nd, Dense, Input};
use symshape_view::{ConcreteStack, ConcreteView, Levels};

use crate::error::err;

/// How many `base` links are followed looking for the array that owns the memory.
const BASE_DEPTH: usize = 64;

/// The refusal of an array whose dtype is a supported one but whose layout or byte order
/// cannot be read as elements of that type; `None` when it can.
pub(crate) fn layout_error(op: &str, a: &Bound<'_, PyUntypedArray>) -> Option<String> {
    let dtype = a.dtype();
    if dtype.is_native_byteorder() == Some(false) {
        return Some(format!(
            "{op}: the array's byte order is not native (dtype {}); convert it with \
             a.astype(a.dtype.newbyteorder('='))",
            dtype
                .str()
                .map_or_else(|_| "?".to_string(), |s| s.to_string())
        ));
    }
    if a.len() == 0 {
        return None;
    }
    let item = dtype.itemsize();
    let bad: Vec<String> = a
        .shape()
        .iter()
        .zip(a.strides())
        .enumerate()
        .filter(|&(_, (&n, &s))| n > 1 && item > 0 && s % item as isize != 0)
        .map(|(k, _)| format!("axis {k}"))
        .collect();
    if !bad.is_empty() {
        return Some(format!(
            "{op}: the array's byte strides {:?} are not multiples of its item size {item} ({})",
            a.strides(),
            bad.join(", ")
        ));
    }
    if !a.is_aligned() {
        return Some(format!(
            "{op}: the array's data is not aligned for its dtype {}",
            dtype
                .str()
                .map_or_else(|_| "?".to_string(), |s| s.to_string())
        ));
    }
    None
}

/// The stack that reads `stack` from the elements of an array laid out by `bottom`.
fn compose(op: &str, bottom: ConcreteView, stack: &ConcreteStack) -> PyResult<ConcreteStack> {
    let mut levels = Vec::with_capacity(stack.levels().len() + 1);
    levels.push(bottom);
    levels.extend(stack.levels().iter().cloned());
    ConcreteStack::new(levels)
        .map_err(|e| err(format!("{op}: the stack does not fit the array: {e}")))
}

/// The element strides of `a` (its byte strides, checked by [`layout_error`], over its item size).
fn element_strides<T>(a: &Bound<'_, PyArrayDyn<T>>) -> Vec<i64>
where
    T: numpy::Element,
{
    let item = std::mem::size_of::<T>().max(1) as isize;
    a.strides()
        .iter()
        .zip(a.shape())
        .map(|(&s, &n)| if n > 1 { (s / item) as i64 } else { 0 })
        .collect()
}

/// An array of `T` among `a`'s bases whose memory is one block (C- or Fortran-contiguous:
/// only the memory is used) holding every element `a` reads, with the view of `a` in that
/// memory's elements; `None` when there is none.
fn owner_of<'py, T>(
    a: &Bound<'py, PyArrayDyn<T>>,
) -> PyResult<Option<(Bound<'py, PyArrayDyn<T>>, ConcreteView)>>
where
    T: numpy::Element,
{
    let item = std::mem::size_of::<T>();
    if item == 0 || a.len() == 0 {
        return Ok(None);
    }
    let shape: Vec<i64> = a.shape().iter().map(|&n| n as i64).collect();
    let strides = element_strides(a);
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&n, &s) in shape.iter().zip(&strides) {
        let reach = i128::from(n - 1) * i128::from(s);
        lo += reach.min(0);
        hi += reach.max(0);
    }
    let data = a.data() as usize as i128;
    let mut base = a.getattr("base")?;
    for _ in 0..BASE_DEPTH {
        let Ok(b) = base.cast::<PyArrayDyn<T>>() else {
            return Ok(None);
        };
        if b.is_contiguous() && b.is_aligned() && b.len() > 0 {
            let diff = data - b.data() as usize as i128;
            let len = b.len() as i128;
            if diff % item as i128 == 0 {
                let offset = diff / item as i128;
                if offset + lo >= 0 && offset + hi < len {
                    let offset = i64::try_from(offset).map_err(err)?;
                    let view =
                        ConcreteView::create(&shape, Some(&strides), offset, None).map_err(err)?;
                    return Ok(Some((b.clone(), view)));
                }
            }
        }
        base = b.getattr("base")?;
    }
    Ok(None)
}

/// The kernels' materialize of `stack` over `buf`, without the GIL.
fn run<T, L>(py: Python<'_>, buf: &[T], stack: &L) -> PyResult<Dense<T>>
where
    T: symshape_kernels::Element + Send + Sync,
    L: Levels,
{
    py.detach(|| materialize(Input::new(buf, stack)))
        .map_err(err)
}

/// The elements `stack` reads from the elements of `a` in C order, read in place: a
/// C-contiguous array as the flat buffer; any other through its strides and offset, over the
/// memory of the contiguous array it views, or over its own memory when its elements
/// fill their range (transposes, flips, broadcasts); an array over foreign memory with gaps
/// has its distinct elements copied by NumPy into a row-major buffer first.
pub(crate) fn materialize_array<T>(
    py: Python<'_>,
    stack: &ConcreteStack,
    a: &Bound<'_, PyArrayDyn<T>>,
) -> PyResult<Dense<T>>
where
    T: numpy::Element + symshape_kernels::Element + Send + Sync,
{
    const OP: &str = "materialize";
    if let Some(msg) = layout_error(OP, a.as_untyped()) {
        return Err(err(msg));
    }
    let ro = a.try_readonly().map_err(err)?;
    if a.is_c_contiguous() {
        if let Ok(buf) = ro.as_slice() {
            return run(py, buf, stack);
        }
    }
    if let Some((owner, view)) = owner_of(a)? {
        if let Ok(owner_ro) = owner.try_readonly() {
            if let Ok(buf) = owner_ro.as_slice() {
                let composed = compose(OP, view, stack)?;
                return run(py, buf, &composed);
            }
        }
    }
    // numpy's ndarray views take at most 32 axes (NumPy 2 allows 64).
    if a.ndim() > 32 {
        return Err(err(format!(
            "{OP}: the array is not C-contiguous and has {} axes, more than the 32 a strided read takes; \
             pass np.ascontiguousarray(a)",
            a.ndim()
        )));
    }
    let arr = ro.as_array();
    if fills_memory(&arr) {
        let (buf, view) = nd::source(&arr).map_err(err)?;
        let composed = compose(OP, view, stack)?;
        return run(py, &buf, &composed);
    }
    let (dense, view) = gather_distinct(py, a)?;
    let dense_ro = dense.try_readonly().map_err(err)?;
    let buf = dense_ro.as_slice().map_err(err)?;
    let composed = compose(OP, view, stack)?;
    run(py, buf, &composed)
}

/// Whether the elements of `a`, its broadcast and extent-1 axes dropped, fill their memory
/// range (so that [`nd::source`] borrows them rather than gathering).
fn fills_memory<T>(a: &ArrayViewD<'_, T>) -> bool {
    if a.is_empty() {
        return true;
    }
    let mut moving = a.clone();
    for k in (0..a.ndim()).rev() {
        let moves =
            a.shape().get(k).is_some_and(|&n| n > 1) && a.strides().get(k).is_some_and(|&s| s != 0);
        if !moves {
            moving = moving.index_axis_move(Axis(k), 0);
        }
    }
    moving.to_slice_memory_order().is_some()
}

/// The distinct elements of a non-empty `a` (its broadcast and extent-1 axes dropped) copied
/// by NumPy into a C-contiguous array, and the view that reads `a` from them (stride 0 on the
/// dropped axes): for an array with gaps over memory no NumPy array holds.
fn gather_distinct<'py, T>(
    py: Python<'py>,
    a: &Bound<'py, PyArrayDyn<T>>,
) -> PyResult<(Bound<'py, PyArrayDyn<T>>, ConcreteView)>
where
    T: numpy::Element,
{
    let moves: Vec<bool> = a
        .shape()
        .iter()
        .zip(a.strides())
        .map(|(&n, &s)| n > 1 && s != 0)
        .collect();
    let index: Vec<Bound<'py, PyAny>> = moves
        .iter()
        .map(|&m| {
            if m {
                Ok(PySlice::full(py).into_any())
            } else {
                Ok(0i64.into_pyobject(py)?.into_any())
            }
        })
        .collect::<PyResult<_>>()?;
    let moving = a.get_item(PyTuple::new(py, index)?)?;
    let dense = py
        .import("numpy")?
        .call_method1("ascontiguousarray", (moving,))?
        .cast_into::<PyArrayDyn<T>>()?;
    let shape: Vec<i64> = a.shape().iter().map(|&n| n as i64).collect();
    let mut strides = vec![0i64; shape.len()];
    let mut step = 1i64;
    for k in (0..shape.len()).rev() {
        if moves[k] {
            strides[k] = step;
            step = step.saturating_mul(shape[k]);
        }
    }
    let view = ConcreteView::create(&shape, Some(&strides), 0, None).map_err(err)?;
    Ok((dense, view))
}
