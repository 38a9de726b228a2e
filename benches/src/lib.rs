//! Shared helpers for the criterion benchmarks in `benches/benches/`.

#![forbid(unsafe_code)]

/// The distinct kernels of a plan's boxes, in order, `+`-separated (`table` for an
/// offset-table gather).
#[must_use]
pub fn kernels_of(plan: &symshape_kernels::LoopPlan<'_>) -> String {
    let mut names: Vec<String> = Vec::new();
    for b in plan.boxes() {
        let name = match b.nest.kernel {
            symshape_kernels::Kernel::OffsetTable => "table".to_string(),
            k => k.to_string().replace(' ', "_"),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join("+")
}
