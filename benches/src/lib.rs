//! Shared helpers for the criterion benchmarks in `benches/benches/`.

#![forbid(unsafe_code)]
