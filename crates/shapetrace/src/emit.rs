//! The `emit` statements: the current stack as a C99 materialize kernel (`emit c`), an
//! OpenCL C program (`emit opencl TYPE`) or a CUDA C++ unit (`emit cuda TYPE`).

use symshape::Scope;
use symshape_codegen::{render_c, render_cuda, render_opencl, CConfig, ElemType, Plan};
use symshape_view::ViewStack;

/// `emit c`: the lines of one C99 translation unit whose entry points are
/// `shapetrace_guards` and `shapetrace_materialize`; `emit opencl TYPE` and
/// `emit cuda TYPE`: the lines of one GPU program whose kernel is
/// `shapetrace_materialize`, led by its `// index:`, `// launch:` and `// check:` lines.
pub(crate) fn emit(cx: &Scope, stack: &ViewStack, rest: &str) -> Result<Vec<String>, String> {
    let mut words = rest.split_whitespace();
    let (lang, ty, extra) = (words.next(), words.next(), words.next());
    let source = match (lang, ty, extra) {
        (Some("c"), None, _) => {
            let plan = Plan::materialize(cx, stack).map_err(|e| format!("emit c: {e}"))?;
            render_c(cx, &plan, &CConfig::new("shapetrace")).map_err(|e| format!("emit c: {e}"))?
        }
        (Some(lang @ ("opencl" | "cuda")), Some(ty), None) => {
            let elem: ElemType = ty.parse().map_err(|e| format!("emit {lang}: {e}"))?;
            let plan = Plan::materialize(cx, stack).map_err(|e| format!("emit {lang}: {e}"))?;
            let kernel = if lang == "opencl" {
                render_opencl(cx, &plan, elem)
            } else {
                render_cuda(cx, &plan, elem)
            };
            kernel.map_err(|e| format!("emit {lang}: {e}"))?.source
        }
        (Some(lang @ ("opencl" | "cuda")), None, _) => {
            return Err(format!(
            "emit {lang}: expected an element type (i64, i32, u16, u8, f32, f64{}) after `{lang}`",
            if lang == "cuda" { ", f16, bf16" } else { "" }
        ))
        }
        _ => {
            return Err(format!(
                "emit: expected `c`, `opencl TYPE` or `cuda TYPE`, found `{rest}`"
            ))
        }
    };
    Ok(source.lines().map(str::to_owned).collect())
}
