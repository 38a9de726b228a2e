//! `cargo xtask ci`'s layering check: no crate's modules depend on each other in a cycle.
//!
//! A module depends on another when its code names it by path (`crate::a::b`,
//! `crate::{a, b}`, `super::x`). A facade (a file of only `mod` and `use` items, such as
//! a crate root or a `mod.rs` that re-exports its children) adds no edges: re-exporting
//! a child is not depending on it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Fails when the modules of a crate under `crates/` depend on each other in a cycle.
pub fn check(root: &Path) -> Result<(), String> {
    let cycles = cycles(root)?;
    if cycles.is_empty() {
        eprintln!("xtask ci: layering ok (no module cycles)");
        return Ok(());
    }
    Err(format!(
        "module cycles (a module on a cycle cannot be read or tested without the others):\n  {}",
        cycles.join("\n  ")
    ))
}

/// Every module cycle of the crates under `crates/`, as lines of text.
pub fn cycles(root: &Path) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    let dir = root.join("crates");
    let mut crates: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path().join("src")))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    for src in crates {
        let modules = read_modules(&src)?;
        for comp in strongly_connected(&graph(&modules)) {
            found.push(format!("{}: {}", src.display(), comp.join(" <-> ")));
        }
    }
    Ok(found)
}

/// Module path (`a::b`, `crate` for the root) to source text, comments removed.
fn read_modules(src: &Path) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).map_err(|e| e.to_string())?;
            let mut parts: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            let name = if parts.is_empty() {
                "crate".to_owned()
            } else {
                parts.join("::")
            };
            let text = fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            out.insert(name, strip_comments(&text));
        }
    }
    Ok(out)
}

fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a file holds only `mod` and `use` items (and attributes).
fn is_facade(text: &str) -> bool {
    text.lines().map(str::trim).all(|l| {
        l.is_empty()
            || l.starts_with("#")
            || [
                "mod ",
                "pub mod ",
                "use ",
                "pub use ",
                "pub(crate) use ",
                "pub(crate) mod ",
            ]
            .iter()
            .any(|p| l.starts_with(p))
            || l.starts_with('}')
            || !l.contains(|c: char| c.is_alphanumeric())
            || l.ends_with(',')
            || l.ends_with("};")
    })
}

fn graph(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for (name, text) in modules {
        let mut deps = BTreeSet::new();
        if !is_facade(text) {
            let parent = match name.rsplit_once("::") {
                Some((p, _)) => p.to_owned(),
                None => "crate".to_owned(),
            };
            for path in paths_after(text, "crate::") {
                if let Some(m) = longest_module(modules, "", &path) {
                    deps.insert(m);
                }
            }
            for path in paths_after(text, "super::") {
                let base = if parent == "crate" {
                    String::new()
                } else {
                    format!("{parent}::")
                };
                let m = longest_module(modules, &base, &path).unwrap_or_else(|| parent.clone());
                deps.insert(m);
            }
        }
        deps.remove(name);
        g.insert(name.clone(), deps);
    }
    g
}

/// The paths named after `prefix`: `a::b` in `prefix a::b::C`, and each of `a`, `b::c`
/// in `prefix {a, b::c}`.
fn paths_after(text: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                out.push(segments(item.trim()));
            }
        } else {
            out.push(segments(rest));
        }
    }
    out
}

fn segments(s: &str) -> Vec<String> {
    let mut res = Vec::new();
    let mut rest = s;
    loop {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        res.push(rest[..end].to_owned());
        match rest[end..].strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    res
}

fn longest_module(
    modules: &BTreeMap<String, String>,
    base: &str,
    path: &[String],
) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|k| format!("{base}{}", path[..k].join("::")))
        .find(|cand| modules.contains_key(cand))
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn strongly_connected(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(st: &mut State<'a>, v: &'a str) {
        st.index.insert(v, st.next);
        st.low.insert(v, st.next);
        st.next += 1;
        st.stack.push(v);
        st.on.insert(v);
        let g = st.g;
        for w in g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !g.contains_key(w) {
                continue;
            }
            if !st.index.contains_key(w) {
                visit(st, w);
                let lw = st.low[w];
                let lv = st.low[v];
                st.low.insert(v, lv.min(lw));
            } else if st.on.contains(w) {
                let iw = st.index[w];
                let lv = st.low[v];
                st.low.insert(v, lv.min(iw));
            }
        }
        if st.low[v] == st.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = st.stack.pop() {
                st.on.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                st.out.push(comp);
            }
        }
    }
    let mut st = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in g.keys() {
        if !st.index.contains_key(v.as_str()) {
            visit(&mut st, v);
        }
    }
    st.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(files: &[(&str, &str)]) -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(n, t)| ((*n).to_owned(), strip_comments(t)))
            .collect()
    }

    #[test]
    fn finds_a_cycle_through_crate_and_super_paths() {
        let m = modules(&[
            ("crate", "mod a;\nmod b;\npub use a::A;"),
            ("a", "use crate::b::helper;\npub struct A;"),
            ("b", "pub fn helper() { let _ = super::a::A; }"),
        ]);
        let g = graph(&m);
        assert_eq!(
            strongly_connected(&g),
            vec![vec!["a".to_owned(), "b".to_owned()]]
        );
    }

    #[test]
    fn a_facade_and_a_comment_add_no_edge() {
        let m = modules(&[
            ("crate", "mod a;\nmod b;\npub use a::{A, B};"),
            (
                "a",
                "pub struct A; // crate::b::x is only mentioned\npub use crate::b::B;",
            ),
            ("b", "pub struct B;"),
        ]);
        let g = graph(&m);
        assert_eq!(g["crate"], BTreeSet::new());
        assert_eq!(g["a"], BTreeSet::from(["b".to_owned()]));
        assert!(strongly_connected(&g).is_empty());
    }

    #[test]
    fn grouped_paths_name_each_module() {
        let paths = paths_after("use crate::{a::X, b, c::d::Y};", "crate::");
        assert_eq!(
            paths,
            vec![
                vec!["a".to_owned(), "X".to_owned()],
                vec!["b".to_owned()],
                vec!["c".to_owned(), "d".to_owned(), "Y".to_owned()],
            ]
        );
    }

    #[test]
    fn the_workspace_has_no_cycles() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert_eq!(cycles(&root), Ok(Vec::new()));
    }
}
