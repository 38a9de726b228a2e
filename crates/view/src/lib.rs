//! Strided views.
