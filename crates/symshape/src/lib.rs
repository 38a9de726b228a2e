//! Symbolic integer expressions.
