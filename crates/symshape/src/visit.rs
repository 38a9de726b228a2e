//! Traversals over interned nodes: children and the symbols an expression mentions.

use hashbrown::HashSet;

use crate::node::{node, Id, Node};
use crate::order;

/// The direct children of a node, in a fixed order.
pub(crate) fn children(id: Id) -> Vec<Id> {
    match node(id) {
        Node::Const(_) | Node::Bool(_) | Node::Invalid(_) => Vec::new(),
        Node::Sym(s) => s.lo.iter().chain(s.hi.iter()).copied().collect(),
        Node::Prod(f) => f.iter().map(|x| x.0).collect(),
        Node::Sum(t, _) => t.iter().map(|x| x.0).collect(),
        Node::FloorDiv(a, b) | Node::FloorMod(a, b) | Node::CeilDiv(a, b) => vec![*a, *b],
        Node::Min(a) | Node::Max(a) | Node::And(a) | Node::Or(a) => a.to_vec(),
        Node::Cmp(_, d) => vec![*d],
    }
}

/// Every symbol reachable from `root` (including through symbol bounds), sorted by name.
pub(crate) fn symbols(root: Id, out: &mut Vec<Id>) {
    collect_symbols(root, true, out);
}

/// The symbols `root` mentions directly (not through the bounds of its symbols), sorted
/// by name: the unknowns of an equation.
pub(crate) fn direct_symbols(root: Id) -> Vec<Id> {
    let mut out = Vec::new();
    collect_symbols(root, false, &mut out);
    out
}

/// Appends the symbols reachable from `root` to `out`, descending into the bounds of
/// symbols when `through_bounds`, then sorts `out` by name.
fn collect_symbols(root: Id, through_bounds: bool, out: &mut Vec<Id>) {
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        if matches!(node(id), Node::Sym(_)) {
            out.push(id);
            if !through_bounds {
                continue;
            }
        }
        stack.extend(children(id));
    }
    out.sort_by(|a, b| order::cmp(*a, *b));
}
