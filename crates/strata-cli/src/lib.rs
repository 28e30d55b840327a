//! The tools behind the `strata` command, as a library so that their tests (and other tools)
//! can call them: the conformance suite ([`conformance`]), the differential generator
//! ([`difftest`]), the benchmarks with their baselines and charts ([`bench`](mod@bench)), the tuner's command ([`tune`])
//! and the JSON lines the command prints ([`report`]).
//!
//! None of this is part of the `strata` library a user adds to a program: it depends on
//! `strata` like any user would, through its public API (plus the documented hooks the tools
//! need: [`strata::capture_kernels`], [`strata::Device::cuda_handles`],
//! [`strata::patterns::Exec::scan_shape`], ...). See `docs/ARCHITECTURE.md` for the cut.
//!
//! **Why the cut is here.** A user's build should compile what the user calls, and the
//! library's public API should hold what users call. The tools are clients of the library
//! like a user's program, so they are a crate that depends on it, as `cranelift-codegen` has
//! `cranelift-tools` and naga has `naga-cli`. The conformance suite and the difftest
//! generator live here rather than in crates of their own: they are one tool's data, and
//! their only other clients are this crate's tests, which moved with them (conformance,
//! differential, `#[kernel]` twins, the golden files, the CLI, the PTX cache, the benchmark
//! tilings); the library's own tests stay in `crates/strata/tests/`.
//!
//! **The hooks** the tools need are small library API, each useful to users too:
//! [`strata::capture_kernels`] (the kernels built while a closure runs: the golden files and
//! `strata ptx`), [`strata::Kernel::valid_function`] and [`strata::codegen`] (generated
//! source), `strata::cuda::compile_ptx` and `ptx_cache_dir`, [`strata::Device::cuda_handles`]
//! (driver-API code beside strata: the CUDA baselines), `strata::cuda::library_candidates`
//! (finding a CUDA library the way strata finds NVRTC: cuBLAS; hidden from the docs),
//! [`strata::patterns::Exec::scan_shape`] and `sort_shape` (the launch shapes the benchmarks
//! report), [`strata::error::panic_message`], [`strata::unavailable_backends`] and
//! [`strata::device_problems`].

#![warn(missing_docs)]

pub mod bench;
pub mod conformance;
pub mod difftest;
pub mod progress;
pub mod report;
pub mod tune;
