//! The `emit c` statement: the current stack as a C99 materialize kernel.

use symshape::Scope;
use symshape_codegen::{render_c, CConfig, Plan};
use symshape_view::ViewStack;

/// `emit c`: the lines of one C99 translation unit whose entry points are
/// `shapetrace_guards` and `shapetrace_materialize`.
pub(crate) fn emit(cx: &Scope, stack: &ViewStack, rest: &str) -> Result<Vec<String>, String> {
    if rest != "c" {
        return Err(format!(
            "emit: expected the target language `c`, found `{rest}`"
        ));
    }
    let plan = Plan::materialize(cx, stack).map_err(|e| format!("emit c: {e}"))?;
    let unit =
        render_c(cx, &plan, &CConfig::new("shapetrace")).map_err(|e| format!("emit c: {e}"))?;
    Ok(unit.lines().map(str::to_owned).collect())
}
