//! The examples of strata, as a crate of their own (`publish = false`).
//!
//! The examples are in `examples/` (run them from the workspace root:
//! `cargo run --release --example showcase`); the code several of them share is in
//! `examples/common/`, included with `#[path]`. They live outside the `strata` crate so that
//! building an example builds the library and what the examples use (`png`, `rayon`), never the
//! library's test-only dependencies (the 320-bit float reference, `trybuild`, the raw OpenCL and
//! CUDA bindings its tests use). This library target is empty: cargo needs one target besides
//! examples.
