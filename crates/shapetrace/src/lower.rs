//! From a bound view stack to the kernels' layouts, for `plan`, `values` and `bench`.

use symshape_kernels::LayoutStack;
use symshape_view::ViewStack;

/// The layouts of `stack`, bottom first; every field must be a constant.
pub fn layouts(stack: &ViewStack) -> Result<LayoutStack, String> {
    LayoutStack::from_view_stack(stack).map_err(|e| e.to_string())
}
