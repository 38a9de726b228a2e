//! `ViewStack` (symbolic views and their ops, immutable) and `BoundStack` (a stack bound to
//! values: offsets as NumPy arrays, and `materialize` through the kernels).

use numpy::{IntoPyArray, PyArrayDyn, PyArrayMethods, PyUntypedArray};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySlice, PyTuple};
use pyo3::Borrowed;
use symshape::{Expr, Scope};
use symshape_codegen::{render_c, CConfig, Plan};
use symshape_view::{
    ConcreteStack, DType, IndexItem, Op, SplitDirection, View, ViewOps, ViewStack,
};

use crate::error::err;
use crate::expr::{PyCond, PyExpr};
use crate::scope::PyScope;

/// A stack of symbolic strided views over one buffer, as the view ops build it.
///
/// Immutable: every op returns a new stack. Sizes, indices and offsets are ints, `Expr`s
/// or text parsed in the stack's scope. A composition of ops that is not one strided view
/// stacks a view (see `show()`); preconditions that depend on values become guards,
/// checked by `bind`.
#[pyclass(name = "ViewStack", module = "symshape", frozen)]
pub struct PyViewStack {
    scope: Py<PyScope>,
    stack: ViewStack,
}

/// `obj` as a sequence of items (a list or a tuple).
fn items<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if let Ok(t) = obj.cast::<PyTuple>() {
        return Ok(t.iter().collect());
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return Ok(l.iter().collect());
    }
    Err(PyTypeError::new_err(format!(
        "{what}: expected a list or a tuple, found {}",
        obj.get_type().name()?
    )))
}

/// The varargs of `reshape(2, 3)` or the one sequence of `reshape([2, 3])`.
fn varargs<'py>(args: &Bound<'py, PyTuple>) -> Vec<Bound<'py, PyAny>> {
    if args.len() == 1 {
        if let Ok(one) = args.get_item(0) {
            if let Ok(seq) = items(&one, "") {
                return seq;
            }
        }
    }
    args.iter().collect()
}

fn axes_of(args: &[Bound<'_, PyAny>]) -> PyResult<Vec<usize>> {
    args.iter().map(|a| a.extract::<usize>()).collect()
}

/// How a split cuts an axis: into a count of equal pieces, or at the given indices.
enum Pieces {
    Count(usize),
    At(Vec<Expr>),
}

/// `s` cut by `direction` into `pieces` (`hsplit`, `vsplit`, `dsplit`).
fn directional(
    cx: &Scope,
    s: &ViewStack,
    direction: SplitDirection,
    pieces: &Pieces,
) -> symshape_view::Result<Vec<ViewStack>> {
    match (direction, pieces) {
        (SplitDirection::Horizontal, Pieces::Count(n)) => s.hsplit(cx, *n),
        (SplitDirection::Vertical, Pieces::Count(n)) => s.vsplit(cx, *n),
        (SplitDirection::Depth, Pieces::Count(n)) => s.dsplit(cx, *n),
        (SplitDirection::Horizontal, Pieces::At(at)) => s.hsplit_at(cx, at),
        (SplitDirection::Vertical, Pieces::At(at)) => s.vsplit_at(cx, at),
        (SplitDirection::Depth, Pieces::At(at)) => s.dsplit_at(cx, at),
    }
}

/// An argument of a `ViewStack` method as the op wants it, converted in the stack's scope
/// (`what`, the method's name, in errors).
trait Arg {
    type Value;
    fn convert(self, stack: &PyViewStack, py: Python<'_>, what: &str) -> PyResult<Self::Value>;
}

/// An axis or a count, as it is.
impl Arg for usize {
    type Value = usize;
    fn convert(self, _: &PyViewStack, _: Python<'_>, _: &str) -> PyResult<usize> {
        Ok(self)
    }
}

/// Argument types that hold the object Python passed (any object, or the tuple of the
/// varargs) and convert it with a function of the stack, `py`, the object and `what`.
macro_rules! scoped_args {
    ($($(#[$doc:meta])* $name:ident: $obj:ty => $value:ty = $convert:expr;)*) => {$(
        $(#[$doc])*
        struct $name(Py<$obj>);

        impl<'a, 'py> FromPyObject<'a, 'py> for $name {
            type Error = PyErr;

            fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                Ok($name(obj.cast::<$obj>()?.to_owned().unbind()))
            }
        }

        impl Arg for $name {
            type Value = $value;

            fn convert(self, stack: &PyViewStack, py: Python<'_>, what: &str) -> PyResult<$value> {
                let convert: fn(&PyViewStack, Python<'_>, &Bound<'_, $obj>, &str)
                    -> PyResult<$value> = $convert;
                convert(stack, py, self.0.bind(py), what)
            }
        }
    )*};
}

scoped_args! {
    /// A size or an index: an int, an `Expr` or text.
    Dim: PyAny => Expr = |stack, py, obj, _| stack.dim(py, obj);
    /// A list or a tuple of sizes.
    Dims: PyAny => Vec<Expr> = |stack, py, obj, what| stack.dims(py, &items(obj, what)?);
    /// A list or a tuple of `(a, b)` pairs, one per axis.
    Pairs: PyAny => Vec<(Expr, Expr)> = |stack, py, obj, what| stack.pairs(py, obj, what);
    /// Sizes as varargs or one sequence: `reshape(2, 3)` or `reshape([2, 3])`.
    Shape: PyTuple => Vec<Expr> = |stack, py, args, _| stack.dims(py, &varargs(args));
    /// Axes as varargs or one sequence: `permute(1, 0)` or `permute([1, 0])`.
    Axes: PyTuple => Vec<usize> = |_, _, args, _| axes_of(&varargs(args));
    /// The sections of a split: a count of equal pieces (an int) or indices (a list).
    Sections: PyAny => Pieces = |stack, py, obj, what| stack.pieces(py, obj, what);
}

impl PyViewStack {
    fn scope(&self) -> &PyScope {
        self.scope.get()
    }

    fn dim(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
        self.scope().expr_of(py, obj)
    }

    fn dims(&self, py: Python<'_>, objs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Expr>> {
        objs.iter().map(|o| self.dim(py, o)).collect()
    }

    fn pairs(
        &self,
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        what: &str,
    ) -> PyResult<Vec<(Expr, Expr)>> {
        items(obj, what)?
            .iter()
            .map(|p| {
                let p = items(p, what)?;
                match p.as_slice() {
                    [a, b] => Ok((self.dim(py, a)?, self.dim(py, b)?)),
                    _ => Err(PyTypeError::new_err(format!(
                        "{what}: expected pairs (a, b) per axis"
                    ))),
                }
            })
            .collect()
    }

    fn wrap(&self, py: Python<'_>, stack: ViewStack) -> PyViewStack {
        PyViewStack {
            scope: self.scope.clone_ref(py),
            stack,
        }
    }

    /// `f` on the stack with the GIL released.
    fn run(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Scope, &ViewStack) -> symshape_view::Result<ViewStack> + Send,
    ) -> PyResult<PyViewStack> {
        let stack = &self.stack;
        let res = self.scope().with(py, |cx| f(cx, stack)).map_err(err)?;
        Ok(self.wrap(py, res))
    }

    fn run_many(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Scope, &ViewStack) -> symshape_view::Result<Vec<ViewStack>> + Send,
    ) -> PyResult<Vec<PyViewStack>> {
        let stack = &self.stack;
        let res = self.scope().with(py, |cx| f(cx, stack)).map_err(err)?;
        Ok(res.into_iter().map(|s| self.wrap(py, s)).collect())
    }

    /// The `sections` of a split: a count of equal pieces (an int) or the indices to cut
    /// at (a list).
    fn pieces(&self, py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Pieces> {
        if let Ok(n) = obj.extract::<usize>() {
            return Ok(Pieces::Count(n));
        }
        Ok(Pieces::At(self.dims(py, &items(obj, what)?)?))
    }

    fn op(&self, py: Python<'_>, op: Op) -> PyResult<PyViewStack> {
        self.run(py, move |cx, s| s.apply(cx, &op))
    }

    fn index_item(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<IndexItem<Expr>> {
        if obj.is_none() {
            return Ok(IndexItem::NewAxis);
        }
        if obj.is(py.Ellipsis()) {
            return Ok(IndexItem::Ellipsis);
        }
        if let Ok(s) = obj.cast::<PySlice>() {
            let part = |name: &str| -> PyResult<Option<Expr>> {
                let v = s.getattr(name)?;
                if v.is_none() {
                    Ok(None)
                } else {
                    self.dim(py, &v).map(Some)
                }
            };
            return Ok(IndexItem::Slice {
                start: part("start")?,
                stop: part("stop")?,
                step: part("step")?,
            });
        }
        if obj.is_instance_of::<pyo3::types::PyBool>() {
            return Err(PyTypeError::new_err(
                "index: boolean indices are not basic indexing",
            ));
        }
        self.dim(py, obj).map(IndexItem::Int)
    }
}

/// The `#[pymethods]` of `ViewStack`: one thin method per table entry, then the methods
/// written out after the tables. An entry names the method, its arguments with their
/// types (converted in the stack's scope by [`Arg`], errors naming the method) and what it
/// does:
///
/// - `ops`: `fn name(a: A, b: B) => op;` applies one `Op`.
/// - `splits`: `fn name(a: A) => |cx, s| pieces;` cuts the stack into pieces.
/// - `like_ops`: `fn name;` takes another `ViewStack` and applies the stack's method `name`.
macro_rules! view_stack_pymethods {
    (
        ops { $($(#[$op_attr:meta])* fn $op:ident($($arg:ident: $ty:ty),*) => $value:expr;)* }
        splits {
            $($(#[$split_attr:meta])* fn $split:ident($($split_arg:ident: $split_ty:ty),*)
                => |$cx:ident, $s:ident| $cut:expr;)*
        }
        like_ops { $($(#[$like_attr:meta])* fn $like:ident;)* }
        $($methods:tt)*
    ) => {
        #[pymethods]
        impl PyViewStack {
            $(
                $(#[$op_attr])*
                fn $op(&self, py: Python<'_>, $($arg: $ty),*) -> PyResult<PyViewStack> {
                    $(let $arg = $arg.convert(self, py, stringify!($op))?;)*
                    self.op(py, $value)
                }
            )*

            $(
                $(#[$split_attr])*
                fn $split(
                    &self,
                    py: Python<'_>,
                    $($split_arg: $split_ty),*
                ) -> PyResult<Vec<PyViewStack>> {
                    $(let $split_arg = $split_arg.convert(self, py, stringify!($split))?;)*
                    self.run_many(py, move |$cx, $s| $cut)
                }
            )*

            $(
                $(#[$like_attr])*
                fn $like(
                    &self,
                    py: Python<'_>,
                    other: PyRef<'_, PyViewStack>,
                ) -> PyResult<PyViewStack> {
                    let o = other.stack.clone();
                    self.run(py, move |cx, s| s.$like(cx, &o))
                }
            )*

            $($methods)*
        }
    };
}

view_stack_pymethods! {
    ops {
        /// Reinterprets the elements in row-major order (`reshape(2, 3)` or `reshape([2, 3])`);
        /// stacks a view when that is not one view.
        #[pyo3(signature = (*shape))]
        fn reshape(shape: Shape) => Op::Reshape(shape);
        /// PyTorch's `view(*shape)`: a reshape that must be one view of the top view.
        #[pyo3(signature = (*shape))]
        fn view_shape(shape: Shape) => Op::ViewShape(shape);
        /// Broadcasts size-1 axes to the given sizes (same rank).
        #[pyo3(signature = (*shape))]
        fn expand(shape: Shape) => Op::Expand(shape);
        /// NumPy's `broadcast_to`: prepends size-1 axes, then expands.
        #[pyo3(signature = (*shape))]
        fn broadcast_to(shape: Shape) => Op::BroadcastTo(shape);
        /// Reorders axes: axis `k` of the result is axis `axes[k]`.
        #[pyo3(signature = (*axes))]
        fn permute(axes: Axes) => Op::Permute(axes);
        /// Keeps `[start, end)` of every axis: `shrink([(0, n), (1, 3)])`.
        fn shrink(bounds: Pairs) => Op::Shrink(bounds);
        /// Adds masked-out `(before, after)` padding on every axis.
        fn pad(padding: Pairs) => Op::Pad(padding);
        /// Reverses the listed axes.
        #[pyo3(signature = (*axes))]
        fn flip(axes: Axes) => Op::Flip(axes);
        /// Removes the axes provably of size 1, adding no guard.
        fn squeeze_proven() => Op::SqueezeProven;
        /// Inserts a size-1 axis at `axis`.
        fn unsqueeze(axis: usize) => Op::Unsqueeze(axis);
        /// Windows of `size` indices every `step` along `axis`, the window axis appended.
        fn unfold(axis: usize, size: Dim, step: Dim) => Op::Unfold { axis, size, step };
        /// Swaps two axes.
        fn transpose(a: usize, b: usize) => Op::Transpose(a, b);
        /// Swaps two axes (NumPy's name).
        fn swapaxes(a: usize, b: usize) => Op::Transpose(a, b);
        /// Moves axis `src` to `dst`, keeping the order of the others.
        fn movedim(src: usize, dst: usize) => Op::Movedim { src, dst };
        /// Moves axis `src` to `dst` (NumPy's name).
        fn moveaxis(src: usize, dst: usize) => Op::Movedim { src, dst };
        /// PyTorch's `t()`: axes 0 and 1 swapped on rank 2; rank 0 and 1 unchanged.
        fn t() => Op::T;
        /// Every axis reversed.
        #[getter(T)]
        fn reverse_axes() => Op::ReverseAxes;
        /// The last two axes swapped.
        #[getter(mT)]
        fn matrix_transpose() => Op::MatrixTranspose;
        /// PyTorch's `H` of a view: axes 0 and 1 swapped (rank 2).
        #[getter(H)]
        fn conj_transpose() => Op::ConjTranspose;
        /// PyTorch's `mH` of a view: the last two axes swapped.
        #[getter(mH)]
        fn matrix_conj_transpose() => Op::MatrixConjTranspose;
        /// PyTorch's `adjoint()` of a view: the last two axes swapped.
        fn adjoint() => Op::Adjoint;
        /// Keeps `length` indices of `axis` from `start`.
        fn narrow(axis: usize, start: Dim, length: Dim) => Op::Narrow { axis, start, length };
        /// Index `index` of `axis`, the axis removed.
        fn select(axis: usize, index: Dim) => Op::Select { axis, index };
        /// Splits `axis` into `sizes`, whose product must be its size.
        fn unflatten(axis: usize, sizes: Dims) => Op::Unflatten { axis, sizes };
        /// NumPy's `ravel`: the view when C-contiguous, else a row-major copy stacked on top.
        fn ravel() => Op::Ravel;
        /// PyTorch's `contiguous`: the view when contiguous, else a row-major copy on top.
        fn contiguous() => Op::Contiguous;
        /// NumPy's `copy()`: always a row-major copy, stacked on top.
        fn copy() => Op::Copy;
        /// NumPy's `flatten()`: always a copy, as one axis.
        fn flatten_copy() => Op::FlattenCopy;
        /// PyTorch's `view(dtype)`: element size `from_size` bytes read as `to_size` bytes.
        fn reinterpret(from_size: usize, to_size: usize)
            => Op::Reinterpret { from: from_size, to: to_size };
        /// PyTorch's `view_as_real`.
        fn view_as_real() => Op::ViewAsReal;
        /// PyTorch's `view_as_complex`.
        fn view_as_complex() => Op::ViewAsComplex;
        /// PyTorch's `real` of a complex view.
        fn real() => Op::Real;
        /// PyTorch's `imag` of a complex view.
        fn imag() => Op::Imag;
        /// Swaps two axes (PyTorch's `swapdims`).
        fn swapdims(a: usize, b: usize) => Op::Transpose(a, b);
    }
    splits {
        /// `axis` cut into pieces of `size` indices (the last may be smaller).
        fn split(axis: usize, size: Dim) => |cx, s| s.split(cx, axis, size);
        /// `axis` cut into consecutive pieces of the given sizes.
        fn split_sizes(axis: usize, sizes: Dims) => |cx, s| s.split_sizes(cx, axis, &sizes);
        /// PyTorch's `chunk`: at most `chunks` pieces of `max(ceil(dim / chunks), 1)`.
        fn chunk(axis: usize, chunks: usize) => |cx, s| s.chunk(cx, axis, chunks);
        /// Every index of `axis`, the axis removed.
        fn unbind(axis: usize) => |cx, s| s.unbind(cx, axis);
        /// PyTorch's `tensor_split` of `axis` into `sections` pieces (an int) or at the given
        /// indices (a list).
        fn tensor_split(axis: usize, sections: Sections) => |cx, s| match &sections {
            Pieces::Count(n) => s.tensor_split(cx, axis, *n),
            Pieces::At(at) => s.tensor_split_at(cx, axis, at),
        };
        /// PyTorch's `hsplit` into `sections` equal pieces (an int) or at indices (a list).
        fn hsplit(sections: Sections)
            => |cx, s| directional(cx, s, SplitDirection::Horizontal, &sections);
        /// PyTorch's `vsplit` into `sections` equal pieces (an int) or at indices (a list).
        fn vsplit(sections: Sections)
            => |cx, s| directional(cx, s, SplitDirection::Vertical, &sections);
        /// PyTorch's `dsplit` into `sections` equal pieces (an int) or at indices (a list).
        fn dsplit(sections: Sections)
            => |cx, s| directional(cx, s, SplitDirection::Depth, &sections);
    }
    like_ops {
        /// PyTorch's `expand_as(other)`: `expand` to the other stack's shape.
        fn expand_as;
        /// PyTorch's `reshape_as(other)`: `reshape` to the other stack's shape.
        fn reshape_as;
        /// PyTorch's `view_as(other)`: `view_shape` to the other stack's shape.
        fn view_as;
    }

    /// A row-major view of `shape` at offset 0 (`[n, 768]` gets strides `[768, 1]`).
    #[staticmethod]
    fn row_major(
        py: Python<'_>,
        scope: Py<PyScope>,
        shape: &Bound<'_, PyAny>,
    ) -> PyResult<PyViewStack> {
        let shape = items(shape, "row_major")?;
        let shape = shape
            .iter()
            .map(|d| scope.get().expr_of(py, d))
            .collect::<PyResult<Vec<_>>>()?;
        let view = scope
            .get()
            .with(py, |cx| View::row_major(cx, &shape))
            .map_err(err)?;
        Ok(PyViewStack {
            scope,
            stack: ViewStack::new(view),
        })
    }

    /// A strided view: element `idx` at `offset + sum(idx[k] * strides[k])`.
    #[staticmethod]
    #[pyo3(signature = (scope, shape, strides, offset = None))]
    fn strided(
        py: Python<'_>,
        scope: Py<PyScope>,
        shape: &Bound<'_, PyAny>,
        strides: &Bound<'_, PyAny>,
        offset: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyViewStack> {
        let s = scope.get();
        let conv = |obj: &Bound<'_, PyAny>, what: &str| -> PyResult<Vec<Expr>> {
            items(obj, what)?.iter().map(|d| s.expr_of(py, d)).collect()
        };
        let shape = conv(shape, "strided")?;
        let strides = conv(strides, "strided")?;
        let offset = offset.map_or(Ok(Expr::from(0)), |o| s.expr_of(py, o))?;
        let view = s
            .with(py, |cx| {
                View::create(cx, &shape, Some(&strides), offset, None)
            })
            .map_err(err)?;
        Ok(PyViewStack {
            scope,
            stack: ViewStack::new(view),
        })
    }

    /// The shape of the top view.
    #[getter]
    fn shape(&self) -> Vec<PyExpr> {
        self.stack.shape().iter().map(|&d| PyExpr(d)).collect()
    }

    /// The number of axes.
    #[getter]
    fn ndim(&self) -> usize {
        self.stack.ndim()
    }

    /// The number of elements, as an expression.
    fn numel(&self) -> PyExpr {
        PyExpr(self.stack.numel())
    }

    /// The number of stacked views (1 when the stack is one strided view).
    fn depth(&self) -> usize {
        self.stack.views().len()
    }

    /// The views, bottom first, one per line, in the runner's `show` format.
    fn show(&self) -> String {
        let lines: Vec<String> = self.stack.views().iter().map(|v| v.to_string()).collect();
        lines.join("\n")
    }

    fn __repr__(&self) -> String {
        format!("ViewStack(\n  {}\n)", self.show().replace('\n', "\n  "))
    }

    /// `(offset, valid)`: the buffer offset of element `(i0, i1, ...)` and whether that
    /// element is valid (not padding), over loop-index symbols `i0, i1, ...`.
    fn lower(&self, py: Python<'_>) -> PyResult<(PyExpr, PyCond)> {
        let stack = &self.stack;
        let l = self.scope().with(py, |cx| stack.lower(cx)).map_err(err)?;
        Ok((PyExpr(l.offset), PyCond(l.valid)))
    }

    /// The guards: preconditions of the ops that depend on values, checked by `bind`.
    fn guards(&self) -> Vec<PyCond> {
        self.stack
            .guards()
            .iter()
            .map(|g| PyCond(g.cond()))
            .collect()
    }

    /// The guards as text, one per line, each naming the op that recorded it.
    fn guards_text(&self) -> String {
        self.stack.guards_text()
    }

    /// One C99 translation unit with a guard function and a materialize kernel for the
    /// stack (the runner's `emit c`), its entry points prefixed by `prefix`.
    #[pyo3(signature = (prefix = "symshape"))]
    fn emit_c(&self, py: Python<'_>, prefix: &str) -> PyResult<String> {
        let stack = &self.stack;
        self.scope()
            .with(py, |cx| {
                let plan = Plan::materialize(cx, stack)?;
                render_c(cx, &plan, &CConfig::new(prefix))
            })
            .map_err(|e| err(format!("emit c: {e}")))
    }

    /// The stack with its symbols bound (`{"n": 4}` or `{n: 4}`): ranges, assumptions and
    /// guards checked.
    fn bind(&self, py: Python<'_>, bindings: &Bound<'_, PyDict>) -> PyResult<PyBoundStack> {
        let b = self.scope().bindings(py, bindings)?;
        let stack = &self.stack;
        let bound = self
            .scope()
            .with(py, |cx| stack.bind(cx, &b))
            .map_err(err)?;
        Ok(PyBoundStack { stack: bound })
    }

    /// NumPy basic indexing: ints, slices, `None`, `...` (entries may be `Expr`s).
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyViewStack> {
        let keys: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        let items = keys
            .iter()
            .map(|k| self.index_item(py, k))
            .collect::<PyResult<Vec<_>>>()?;
        self.op(py, Op::Index(items))
    }

    /// Removes the listed size-1 axes, or with no argument every size-1 axis (on symbolic
    /// sizes not provably 1, under a guard `d != 1`).
    #[pyo3(signature = (*axes))]
    fn squeeze(&self, py: Python<'_>, axes: &Bound<'_, PyTuple>) -> PyResult<PyViewStack> {
        let axes = varargs(axes);
        let axes = if axes.is_empty() {
            None
        } else {
            Some(axes_of(&axes)?)
        };
        self.op(py, Op::Squeeze(axes))
    }

    /// The diagonal of axes `dim1` and `dim2`, shifted by `offset`, appended last.
    #[pyo3(signature = (offset = None, dim1 = 0, dim2 = 1))]
    fn diagonal(
        &self,
        py: Python<'_>,
        offset: Option<&Bound<'_, PyAny>>,
        dim1: usize,
        dim2: usize,
    ) -> PyResult<PyViewStack> {
        let offset = offset.map_or(Ok(Expr::from(0)), |o| self.dim(py, o))?;
        self.op(py, Op::Diagonal { offset, dim1, dim2 })
    }

    /// NumPy's `rot90(m, k, axes)`: `k` quarter turns in the plane of `axes`.
    #[pyo3(signature = (k = 1, axes = (0, 1)))]
    fn rot90(&self, py: Python<'_>, k: i64, axes: (usize, usize)) -> PyResult<PyViewStack> {
        self.op(
            py,
            Op::Rot90 {
                k,
                axes: [axes.0, axes.1],
            },
        )
    }

    /// Merges axes `start..=end` into one.
    #[pyo3(signature = (start = 0, end = None))]
    fn flatten(&self, py: Python<'_>, start: usize, end: Option<usize>) -> PyResult<PyViewStack> {
        let end = end.unwrap_or_else(|| self.stack.ndim().saturating_sub(1));
        self.op(py, Op::Flatten { start, end })
    }

    /// PyTorch's `as_strided(size, stride, storage_offset)` over the view's storage.
    #[pyo3(signature = (shape, strides, offset = None))]
    fn as_strided(
        &self,
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        strides: &Bound<'_, PyAny>,
        offset: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyViewStack> {
        let shape = self.dims(py, &items(shape, "as_strided")?)?;
        let strides = self.dims(py, &items(strides, "as_strided")?)?;
        let offset = match offset {
            Some(o) => self.dim(py, o)?,
            None => self.stack.top().offset(),
        };
        self.op(
            py,
            Op::AsStrided {
                shape,
                strides,
                offset,
            },
        )
    }

    /// NumPy's `sliding_window_view(x, window_shape, axis)`.
    #[pyo3(signature = (window, axes = None))]
    fn sliding_window_view(
        &self,
        py: Python<'_>,
        window: &Bound<'_, PyAny>,
        axes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyViewStack> {
        let window = self.dims(py, &items(window, "sliding_window_view")?)?;
        let axes = axes
            .map(|a| axes_of(&items(a, "sliding_window_view")?))
            .transpose()?;
        self.op(py, Op::SlidingWindowView { window, axes })
    }

    /// NumPy's `ascontiguousarray`: `contiguous` of at least one axis.
    fn ascontiguousarray(&self, py: Python<'_>) -> PyResult<PyViewStack> {
        self.run(py, |cx, s| s.ascontiguousarray(cx))
    }

    /// NumPy's `astype(to, copy)` of elements of type `from_type` (NumPy's names:
    /// `"int32"`, `"float64"`, ...): a row-major copy on top when the types differ or
    /// `copy` is set, else the stack itself.
    #[pyo3(signature = (from_type, to_type, copy = true))]
    fn astype(
        &self,
        py: Python<'_>,
        from_type: &str,
        to_type: &str,
        copy: bool,
    ) -> PyResult<PyViewStack> {
        let from: DType = from_type.parse().map_err(err)?;
        let to: DType = to_type.parse().map_err(err)?;
        self.op(py, Op::AsType { from, to, copy })
    }

    /// PyTorch's `detach()`: the same stack (autograd only).
    fn detach(&self, py: Python<'_>) -> PyViewStack {
        self.wrap(py, self.stack.clone())
    }

    /// PyTorch's `alias()`: the same stack.
    fn alias(&self, py: Python<'_>) -> PyViewStack {
        self.wrap(py, self.stack.clone())
    }

    /// `split_sizes` under PyTorch's name.
    fn split_with_sizes(
        &self,
        py: Python<'_>,
        axis: usize,
        sizes: Dims,
    ) -> PyResult<Vec<PyViewStack>> {
        self.split_sizes(py, axis, sizes)
    }
}

/// A `ViewStack` with every symbol bound: integer shapes, strides and offsets, and the
/// kernels that read a buffer through it.
#[pyclass(name = "BoundStack", module = "symshape", frozen)]
pub struct PyBoundStack {
    stack: ConcreteStack,
}

/// The materialize of `$arr` if its dtype is one of `$t`.
macro_rules! materialize_as {
    ($py:expr, $stack:expr, $arr:expr, $($t:ty),*) => {$(
        if let Ok(a) = $arr.cast::<PyArrayDyn<$t>>() {
            return materialize_typed::<$t>($py, $stack, a);
        }
    )*};
}

fn materialize_typed<'py, T>(
    py: Python<'py>,
    stack: &ConcreteStack,
    a: &Bound<'py, PyArrayDyn<T>>,
) -> PyResult<Bound<'py, PyAny>>
where
    T: numpy::Element + symshape_kernels::Element + Send + Sync,
{
    let dense = crate::input::materialize_array(py, stack, a)?;
    let out = dense.values.into_pyarray(py);
    Ok(out.reshape(dense.shape)?.into_any())
}

#[pymethods]
impl PyBoundStack {
    /// The shape.
    #[getter]
    fn shape(&self) -> Vec<i64> {
        self.stack.shape().to_vec()
    }

    /// The strides, when the stack is one view (an error otherwise).
    #[getter]
    fn strides(&self) -> PyResult<Vec<i64>> {
        Ok(self.one_view("strides")?.strides().to_vec())
    }

    /// The offset of element 0, when the stack is one view (an error otherwise).
    #[getter]
    fn offset(&self) -> PyResult<i64> {
        Ok(self.one_view("offset")?.offset())
    }

    /// The number of views (1 when the bound stack merged into one view).
    fn depth(&self) -> usize {
        self.stack.levels().len()
    }

    /// The buffer offset of every element, as an `int64` array of the shape; `pad` where
    /// an element is padding.
    #[pyo3(signature = (pad = -1), text_signature = "(self, pad=-1)")]
    fn offsets<'py>(&self, py: Python<'py>, pad: i64) -> PyResult<Bound<'py, PyAny>> {
        let stack = &self.stack;
        let table = py.detach(|| stack.offsets()).map_err(err)?;
        let flat: Vec<i64> = table.into_iter().map(|o| o.unwrap_or(pad)).collect();
        let shape: Vec<usize> = stack
            .shape()
            .iter()
            .map(|&d| usize::try_from(d).unwrap_or(0))
            .collect();
        Ok(flat.into_pyarray(py).reshape(shape)?.into_any())
    }

    /// The elements the stack reads from `array` (a NumPy array of a bool, integer or float
    /// dtype of any layout; the stack's bottom view addresses its elements in C order, read
    /// in place through the array's strides and offset), as a new array of the shape;
    /// padding reads 0. The GIL is released while the kernels run.
    fn materialize<'py>(
        &self,
        py: Python<'py>,
        array: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let stack = &self.stack;
        if let Ok(u) = array.cast::<PyUntypedArray>() {
            if let Some(msg) = crate::input::layout_error("materialize", u) {
                return Err(err(msg));
            }
        }
        materialize_as!(
            py,
            stack,
            array,
            f64,
            f32,
            symshape_kernels::f16,
            i64,
            i32,
            i16,
            i8,
            u64,
            u32,
            u16,
            u8,
            bool
        );
        Err(PyTypeError::new_err(format!(
            "materialize: expected a NumPy array of a bool, integer or float dtype, found {}",
            array.repr()?
        )))
    }

    /// The views, bottom first, one per line.
    fn show(&self) -> String {
        let lines: Vec<String> = self.stack.levels().iter().map(|v| v.to_string()).collect();
        lines.join("\n")
    }

    fn __repr__(&self) -> String {
        format!("BoundStack(\n  {}\n)", self.show().replace('\n', "\n  "))
    }
}

impl PyBoundStack {
    fn one_view(&self, what: &str) -> PyResult<&symshape_view::ConcreteView> {
        self.stack.to_view().ok_or_else(|| {
            err(format!(
                "{what}: the bound stack is {} views, not one; use offsets()",
                self.stack.levels().len()
            ))
        })
    }
}
