//! Integration tests of the view crate, through its public API.

mod bindexact;
mod chains;
mod engine;
mod errors;
mod midsize;
mod model;
mod ops;
mod pinned;
mod robust;
mod scale;
mod serialize;
mod strategy;
mod symbolic;
mod symprop;
mod trace;
