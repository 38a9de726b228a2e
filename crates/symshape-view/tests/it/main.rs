//! Integration tests of the view crate, through its public API.

mod bindexact;
mod chains;
mod copies;
mod copychains;
mod coreprop;
mod engine;
mod errors;
mod indexprop;
mod memory;
mod midsize;
mod model;
mod nest;
mod onerule;
mod ops;
mod overlap;
mod pinned;
mod prepmerge;
mod rank;
mod robust;
mod scale;
mod serialize;
mod strategy;
mod symbolic;
mod symprop;
mod torchops;
mod trace;
mod viewlist;

use symshape::{Expr, Scope};

/// A new scope with the symbols of `specs` declared in order (each written as
/// `Scope::declare_str` reads it, e.g. `"n 1..=64"`), and those symbols.
#[must_use]
pub fn scope_with<const N: usize>(specs: [&str; N]) -> (Scope, [Expr; N]) {
    let mut cx = Scope::new();
    let symbols = specs.map(|spec| cx.declare_str(spec).expect(spec));
    (cx, symbols)
}
