//! Chains of view ops decoded from arbitrary bytes, applied to a stack and to a naive index
//! table side by side, then read and written by the kernels: a difference, a refused valid
//! op or a panic is a bug. The check is the kernels' property test
//! `op_chains_read_and_write_where_their_index_table_says`, whose files this includes.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../crates/symshape-view/tests/it/model.rs"]
mod model;

#[path = "../../crates/symshape-kernels/tests/it/chains.rs"]
mod chains;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = chains::check(data) {
        panic!("{e}");
    }
});
