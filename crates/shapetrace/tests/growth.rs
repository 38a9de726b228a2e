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

/// `sym n`, `sym k`, `view [n]`, then `reps` rounds of `slice [-k:]` and `slice [1:]`.
fn tail_slices(reps: usize, tag: &str) -> String {
    format!(
        "sym n{tag} 0..=100000\nsym k{tag} 1..=1000\nview [n{tag}]\n{}show\n",
        format!("slice [-k{tag}:]\nslice [1:]\n").repeat(reps)
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

/// Asserts that the larger of two sizes adds at most `factor` times the nodes of the
/// smaller, and returns the two counts.
fn grows_at_most(what: &str, factor: usize, small: &str, large: &str) -> (usize, usize) {
    let (a, b) = (nodes_added(small), nodes_added(large));
    eprintln!("{what}: {a} nodes, then {b} nodes");
    assert!(
        b <= factor * a.max(1),
        "{what}: {b} nodes against {a}, more than {factor}x"
    );
    (a, b)
}

#[test]
fn hostile_scripts_grow_polynomially() {
    // Repeated symbolic slicing: each slice adds a bounded number of nodes (the size stays
    // one flat `max`), where the naive form doubled at every slice.
    grows_at_most(
        "12 then 24 slices",
        3,
        &repeated_slices(12, "a"),
        &repeated_slices(24, "b"),
    );
    let shown = shapetrace::run(&repeated_slices(24, "c")).lines.concat();
    assert!(
        shown.starts_with("view shape=[max(0, -24*kc + nc)]"),
        "{shown}"
    );
    // Slices from the end write the size `min(k, d)` with `d` once (`d - max(d - k, 0)`
    // doubled it at every slice): the nodes grow with the square of the rounds at most
    // (each offset term holds the size before it).
    grows_at_most(
        "3 then 6 tail-slice rounds",
        4,
        &tail_slices(3, "a"),
        &tail_slices(6, "b"),
    );
    // Symbolic chains: linear in their length.
    grows_at_most(
        "100 then 400 chain rounds",
        6,
        &chain(100, "a"),
        &chain(400, "b"),
    );
    // Reshape of K symbolic sizes to their product: polynomial (here at most cubic), up
    // to the rank limit.
    let (k16, k64) = (reshape_to_product(16, "a"), reshape_to_product(64, "b"));
    grows_at_most("reshape of 16 then 64 sizes", 64, &k16, &k64);
    // Identical assumptions are kept once.
    let many = format!(
        "sym p 0..=100\nsym q 0..=100\n{}",
        "assume p <= q + 1\n".repeat(10_000)
    );
    let (_, added) = grows_at_most(
        "one then 10000 identical assumptions",
        2,
        "sym p 0..=100\nsym q 0..=100\nassume p <= q + 1\n",
        &many,
    );
    assert!(added <= 64, "{added}");
}
