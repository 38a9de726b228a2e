//! From a bound view stack to the kernels' layouts, for `plan`, `values` and `bench`.

use kernels::{Layout, LayoutStack};
use view::ViewStack;

/// The layouts of `stack`, bottom first; every field must be a constant.
pub fn layouts(stmt: &str, stack: &ViewStack) -> Result<LayoutStack, String> {
    let levels = stack
        .views()
        .iter()
        .map(|v| {
            let c = v.to_concrete(stmt_name(stmt)).map_err(|e| e.to_string())?;
            let shape = c
                .shape()
                .iter()
                .map(|&d| usize::try_from(d).map_err(|_| too_big(stmt, "size", d)))
                .collect::<Result<Vec<_>, _>>()?;
            let strides = c
                .strides()
                .iter()
                .map(|&s| isize::try_from(s).map_err(|_| too_big(stmt, "stride", s)))
                .collect::<Result<Vec<_>, _>>()?;
            let offset =
                isize::try_from(c.offset()).map_err(|_| too_big(stmt, "offset", c.offset()))?;
            let layout = Layout::new(&shape, &strides, offset).map_err(|e| e.to_string())?;
            match c.mask() {
                None => Ok(layout),
                Some(mask) => {
                    let mask = mask
                        .iter()
                        .map(|&(b, e)| {
                            let b =
                                usize::try_from(b).map_err(|_| too_big(stmt, "mask bound", b))?;
                            let e =
                                usize::try_from(e).map_err(|_| too_big(stmt, "mask bound", e))?;
                            Ok((b, e))
                        })
                        .collect::<Result<Vec<_>, String>>()?;
                    layout.with_mask(&mask).map_err(|e| e.to_string())
                }
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    LayoutStack::new(levels).map_err(|e| e.to_string())
}

fn too_big(stmt: &str, what: &str, v: i64) -> String {
    format!("{stmt}: {what} {v} does not fit this machine's index type")
}

/// `to_concrete` wants a `'static` op name; the runner's statements are a fixed set.
fn stmt_name(stmt: &str) -> &'static str {
    match stmt {
        "plan" => "plan",
        "values" => "values",
        _ => "bench",
    }
}
