//! The two GPU dialects, OpenCL C 1.2 and CUDA C++: the element types and index widths
//! they name, and the names and statements in which they differ, nothing else. Both
//! render the same kernel description (`gpu.rs`).

use std::fmt;
use std::str::FromStr;

use crate::arith::{Arith, WideForm};
use crate::error::{Error, Result};

/// Element type of a GPU kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// `long` / `long long`.
    I64,
    /// `int`.
    I32,
    /// `ushort` / `unsigned short`.
    U16,
    /// `uchar` / `unsigned char`.
    U8,
    /// `float`.
    F32,
    /// `double` (OpenCL enables `cl_khr_fp64`).
    F64,
    /// `__half` (CUDA only).
    F16,
    /// `__nv_bfloat16` (CUDA only).
    Bf16,
}

impl ElemType {
    /// Every element type, in the order of their names in messages.
    pub const ALL: [ElemType; 8] = [
        ElemType::I64,
        ElemType::I32,
        ElemType::U16,
        ElemType::U8,
        ElemType::F32,
        ElemType::F64,
        ElemType::F16,
        ElemType::Bf16,
    ];

    /// The type named `s`: `i64`, `i32`, `u16`, `u8`, `f32`, `f64`, `f16` or `bf16`.
    #[must_use]
    pub fn parse(s: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|e| e.name() == s)
    }

    /// The type's name, as [`ElemType::parse`] reads it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ElemType::I64 => "i64",
            ElemType::I32 => "i32",
            ElemType::U16 => "u16",
            ElemType::U8 => "u8",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
            ElemType::F16 => "f16",
            ElemType::Bf16 => "bf16",
        }
    }

    /// Bytes per element.
    #[must_use]
    pub fn size(self) -> usize {
        match self {
            ElemType::I64 | ElemType::F64 => 8,
            ElemType::I32 | ElemType::F32 => 4,
            ElemType::U16 | ElemType::F16 | ElemType::Bf16 => 2,
            ElemType::U8 => 1,
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ElemType {
    type Err = Error;

    /// [`ElemType::parse`], with an error naming the accepted types.
    fn from_str(s: &str) -> Result<ElemType> {
        ElemType::parse(s).ok_or_else(|| {
            let names: Vec<&str> = ElemType::ALL.iter().map(|e| e.name()).collect();
            Error::Unsupported {
                op: "elem_type",
                message: format!(
                    "unknown element type `{s}`; expected one of {}",
                    names.join(", ")
                ),
            }
        })
    }
}

/// The width of a kernel's index arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    /// 32-bit: every index, offset and intermediate is proven to fit in `i32`.
    I32,
    /// 64-bit.
    I64,
}

impl IndexWidth {
    /// `i32` or `i64`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            IndexWidth::I32 => "i32",
            IndexWidth::I64 => "i64",
        }
    }
}

impl fmt::Display for IndexWidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A GPU source language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// OpenCL C 1.2.
    OpenCl,
    /// CUDA C++ (NVRTC or nvcc).
    Cuda,
}

impl Dialect {
    /// The operation named in errors.
    pub fn op(self) -> &'static str {
        match self {
            Dialect::OpenCl => "render_opencl",
            Dialect::Cuda => "render_cuda",
        }
    }

    /// The integer arithmetic of an index width: 32 bits only where proven (nothing
    /// wider to fall back on), 64 bits with wrapping unsigned arithmetic for
    /// intermediates not proven to fit.
    pub fn arith(self, index: IndexWidth) -> Arith {
        let op = self.op();
        let helper = match self {
            Dialect::OpenCl => "static inline",
            Dialect::Cuda => "static __device__ __forceinline__",
        };
        let (native, wide) = match (self, index) {
            (Dialect::OpenCl, IndexWidth::I64) => ("long", "ulong"),
            (Dialect::OpenCl, IndexWidth::I32) => ("int", "uint"),
            (Dialect::Cuda, IndexWidth::I64) => ("long long", "unsigned long long"),
            (Dialect::Cuda, IndexWidth::I32) => ("int", "unsigned int"),
        };
        let (bits, form) = match index {
            IndexWidth::I64 => (64, WideForm::Wrap),
            IndexWidth::I32 => (32, WideForm::Refuse),
        };
        Arith {
            op,
            bits,
            native,
            wide,
            form,
            helper,
        }
    }

    /// The element type's name, `None` where the dialect has none.
    pub fn elem(self, e: ElemType) -> Option<&'static str> {
        Some(match (self, e) {
            (Dialect::OpenCl, ElemType::I64) => "long",
            (Dialect::Cuda, ElemType::I64) => "long long",
            (_, ElemType::I32) => "int",
            (Dialect::OpenCl, ElemType::U16) => "ushort",
            (Dialect::Cuda, ElemType::U16) => "unsigned short",
            (Dialect::OpenCl, ElemType::U8) => "uchar",
            (Dialect::Cuda, ElemType::U8) => "unsigned char",
            (_, ElemType::F32) => "float",
            (_, ElemType::F64) => "double",
            (Dialect::Cuda, ElemType::F16) => "__half",
            (Dialect::Cuda, ElemType::Bf16) => "__nv_bfloat16",
            (Dialect::OpenCl, ElemType::F16 | ElemType::Bf16) => return None,
        })
    }

    /// Pragmas and includes the element type needs, one per line.
    pub fn prologue(self, e: ElemType) -> &'static str {
        match (self, e) {
            (Dialect::OpenCl, ElemType::F64) => "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
            (Dialect::Cuda, ElemType::F16) => "#include <cuda_fp16.h>\n",
            (Dialect::Cuda, ElemType::Bf16) => "#include <cuda_bf16.h>\n",
            _ => "",
        }
    }

    /// The kernel's signature, without the opening brace.
    pub fn signature(self, t: &str) -> String {
        match self {
            Dialect::OpenCl => format!(
                "__kernel void shapetrace_materialize(__global const {t} *src, __global {t} *dst, __global const long *syms, const {t} pad)"
            ),
            Dialect::Cuda => format!(
                "extern \"C\" __global__ void shapetrace_materialize(const {t} *__restrict__ src, {t} *__restrict__ dst, const long long *syms, {t} pad)"
            ),
        }
    }

    /// The index of the work-group (block) along `k`.
    pub fn group(self, k: usize) -> String {
        match self {
            Dialect::OpenCl => format!("get_group_id({k})"),
            Dialect::Cuda => format!("blockIdx.{}", xyz(k)),
        }
    }

    /// The number of work-groups (blocks) along `k`.
    pub fn groups(self, k: usize) -> String {
        match self {
            Dialect::OpenCl => format!("get_num_groups({k})"),
            Dialect::Cuda => format!("gridDim.{}", xyz(k)),
        }
    }

    /// The index of the work-item (thread) in its group along `k`.
    pub fn local(self, k: usize) -> String {
        match self {
            Dialect::OpenCl => format!("get_local_id({k})"),
            Dialect::Cuda => format!("threadIdx.{}", xyz(k)),
        }
    }

    /// Waits for every work-item of the group, making local memory writes visible.
    pub fn barrier(self) -> &'static str {
        match self {
            Dialect::OpenCl => "barrier(CLK_LOCAL_MEM_FENCE);",
            Dialect::Cuda => "__syncthreads();",
        }
    }

    /// Declares the local (shared) array `name[rows][cols]` of `t`.
    pub fn shared(self, t: &str, name: &str, rows: usize, cols: usize) -> String {
        match self {
            Dialect::OpenCl => format!("__local {t} {name}[{rows}][{cols}];"),
            Dialect::Cuda => format!("__shared__ {t} {name}[{rows}][{cols}];"),
        }
    }

    /// Declarations the vector statements of width `w` over `t` need at file scope.
    pub fn vector_decl(self, t: &str, w: u32, size: usize) -> String {
        match self {
            Dialect::OpenCl => String::new(),
            Dialect::Cuda => {
                let align = size * w as usize;
                format!("struct __align__({align}) sx_vec {{ {t} v[{w}]; }};\n")
            }
        }
    }

    /// Copies `w` elements from `src + from` to `dst + to` (both multiples of `w`).
    pub fn vector_copy(self, w: u32, to: &str, from: &str) -> String {
        match self {
            Dialect::OpenCl => format!("vstore{w}(vload{w}(0, src + {from}), 0, dst + {to});"),
            Dialect::Cuda => {
                format!("*(sx_vec *)(dst + {to}) = *(const sx_vec *)(src + {from});")
            }
        }
    }

    /// Copies the `w` elements from `src + from` (a multiple of `w`) to `dst + to` in
    /// reverse order: lane `t` of the output is lane `w - 1 - t` of the source.
    pub fn vector_reversed(self, w: u32, to: &str, from: &str) -> String {
        let rev: Vec<u32> = (0..w).rev().collect();
        match self {
            Dialect::OpenCl => {
                let lanes: String = rev.iter().map(u32::to_string).collect();
                format!("vstore{w}(vload{w}(0, src + {from}).s{lanes}, 0, dst + {to});")
            }
            Dialect::Cuda => {
                let lanes: Vec<String> = rev.iter().map(|t| format!("v.v[{t}]")).collect();
                format!(
                    "{{ const sx_vec v = *(const sx_vec *)(src + {from}); *(sx_vec *)(dst + {to}) = sx_vec{{{{{}}}}}; }}",
                    lanes.join(", ")
                )
            }
        }
    }

    /// Declares `v`, a vector of `w` elements of `t` whose lanes are set one by one.
    pub fn lanes_decl(self, t: &str, w: u32) -> String {
        match self {
            Dialect::OpenCl => format!("{t}{w} v;"),
            Dialect::Cuda => "sx_vec v;".to_string(),
        }
    }

    /// Lane `k` of the vector `v` of [`Dialect::lanes_decl`].
    pub fn lane(self, k: u32) -> String {
        match self {
            Dialect::OpenCl => format!("v.s{k}"),
            Dialect::Cuda => format!("v.v[{k}]"),
        }
    }

    /// Stores the vector `v` of [`Dialect::lanes_decl`] at `dst + to` (a multiple of `w`).
    pub fn lanes_store(self, w: u32, to: &str) -> String {
        match self {
            Dialect::OpenCl => format!("vstore{w}(v, 0, dst + {to});"),
            Dialect::Cuda => format!("*(sx_vec *)(dst + {to}) = v;"),
        }
    }

    /// Sets `w` elements from `dst + to` (a multiple of `w`) to `value`, a `t`.
    pub fn vector_fill(self, t: &str, w: u32, to: &str, value: &str) -> String {
        match self {
            Dialect::OpenCl => format!("vstore{w}(({t}{w})({value}), 0, dst + {to});"),
            Dialect::Cuda => {
                let v = if value == "pad" { "pad" } else { "x" };
                let lanes = vec![v; w as usize].join(", ");
                let set = format!("*(sx_vec *)(dst + {to}) = sx_vec{{{{{lanes}}}}};");
                if v == "pad" {
                    set
                } else {
                    format!("{{ const {t} x = {value}; {set} }}")
                }
            }
        }
    }
}

fn xyz(k: usize) -> char {
    ['x', 'y', 'z'][k.min(2)]
}
