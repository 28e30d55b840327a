//! The tools behind the `strata` command, as a library so that their tests (and other tools)
//! can call them: the conformance suite ([`conformance`]), the differential generator
//! ([`difftest`]), the benchmarks with their baselines and charts ([`bench`](mod@bench)), the tuner's command ([`tune`])
//! and the JSON lines the command prints ([`report`]).
//!
//! None of this is part of the `strata` library a user adds to a program: it depends on
//! `strata` like any user would, through its public API (plus the documented hooks the tools
//! need: [`strata::capture_kernels`], [`strata::Device::cuda_handles`],
//! [`strata::patterns::Exec::scan_shape`], ...). See `docs/ARCHITECTURE.md` for the cut.

#![warn(missing_docs)]

pub mod bench;
pub mod conformance;
pub mod difftest;
pub mod progress;
pub mod report;
pub mod tune;
