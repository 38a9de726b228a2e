//! How the work of hostile-but-valid scripts grows with their length, counted in interned
//! expression nodes (deterministic, unlike wall time). One test per binary run, so that no
//! other test adds nodes meanwhile.

/// Interned nodes the script adds (the interner is process-wide and only grows).
fn nodes_added(script: &str) -> usize {
    let before = symshape::stats().nodes;
    let out = shapetrace::run(script);
    assert!(out.error.is_none(), "{script}\n=> {out}");
    symshape::stats().nodes - before
}

/// `sym n`, `sym k`, `view [n]`, then `reps` times `slice [k:]`.
fn repeated_slices(reps: usize, tag: &str) -> String {
    format!(
        "sym n{tag} 0..=1000\nsym k{tag} 0..=1000\nview [n{tag}]\n{}show\n",
        format!("slice [k{tag}:]\n").repeat(reps)
    )
}

/// `reps` rounds of (`permute [1, 0]`, `reshape [n*m]`, `reshape [n, m]`).
fn chain(reps: usize, tag: &str) -> String {
    format!(
        "sym n{tag} 1..=64\nsym m{tag} 1..=64\nview [n{tag}, m{tag}]\n{}",
        format!("permute [1, 0]\nreshape [n{tag}*m{tag}]\nreshape [n{tag}, m{tag}]\n").repeat(reps)
    )
}

/// Declares `k` sizes and reshapes the view of them to their product.
fn reshape_to_product(k: usize, tag: &str) -> String {
    let names: Vec<String> = (0..k).map(|i| format!("d{tag}_{i}")).collect();
    let decls: String = names.iter().map(|n| format!("sym {n} 1..=64\n")).collect();
    format!(
        "{decls}view [{}]\nreshape [{}]\n",
        names.join(", "),
        names.join("*")
    )
}

#[test]
fn hostile_scripts_grow_polynomially() {
    // Repeated symbolic slicing: each slice adds a bounded number of nodes (the size stays
    // one flat `max`), where the naive form doubled at every slice.
    let s12 = nodes_added(&repeated_slices(12, "a"));
    let s24 = nodes_added(&repeated_slices(24, "b"));
    eprintln!("slices: 12 -> {s12} nodes, 24 -> {s24} nodes");
    assert!(
        s24 <= 3 * s12,
        "24 slices added {s24} nodes, 12 added {s12}"
    );
    let shown = shapetrace::run(&repeated_slices(24, "c")).lines.concat();
    assert!(
        shown.starts_with("view shape=[max(0, -24*kc + nc)]"),
        "{shown}"
    );

    // Symbolic chains: linear in their length.
    let c100 = nodes_added(&chain(100, "a"));
    let c400 = nodes_added(&chain(400, "b"));
    eprintln!("chain: 100 -> {c100} nodes, 400 -> {c400} nodes");
    assert!(
        c400 <= 6 * c100,
        "400 rounds added {c400} nodes, 100 added {c100}"
    );

    // Reshape of K symbolic sizes to their product: polynomial (here at most cubic).
    let r30 = nodes_added(&reshape_to_product(30, "a"));
    let r120 = nodes_added(&reshape_to_product(120, "b"));
    eprintln!("reshape: 30 -> {r30} nodes, 120 -> {r120} nodes");
    assert!(
        r120 <= 64 * r30,
        "K=120 added {r120} nodes, K=30 added {r30}"
    );

    // Identical assumptions are kept once.
    let once = nodes_added("sym p 0..=100\nsym q 0..=100\nassume p <= q + 1\n");
    let many = nodes_added(&format!(
        "sym p 0..=100\nsym q 0..=100\n{}",
        "assume p <= q + 1\n".repeat(10_000)
    ));
    assert!(
        many <= once + 8,
        "10000 identical assumptions added {many} nodes, one added {once}"
    );
}
