//! Benchmarks: five memory-bound kernels run on a device with strata and beside a hand-written
//! Rust baseline (rayon) on the same host, in the same run. This is what `strata bench` runs.
//!
//! | bench          | computation                                          | bytes moved |
//! |----------------|------------------------------------------------------|-------------|
//! | `vadd`         | `c[i] = a[i] + b[i]`                                 | `3 * 4 * n` |
//! | `saxpy`        | `y[i] = a * x[i] + y[i]`                             | `3 * 4 * n` |
//! | `dot`          | `sum of x[i] * y[i]`                                 | `2 * 4 * n` |
//! | `sum`          | `sum of x[i]`                                        | `4 * n`     |
//! | `sum_unrolled` | `sum of x[i]`, written as CPU code is (below)        | `4 * n`     |
//!
//! All data is `f32` (2^24 elements by default). Each benchmark runs once to warm up (which also
//! compiles the kernel), then [`BenchOptions::reps`] times; the reported times are medians.
//! Where strata runs beside a rayon baseline (`vadd`, `saxpy`, `dot`, `sum`, `sum_unrolled`,
//! `mandelbrot`, `nbody`, `matmul`, `rof_*`, the pattern rows), the sides take turns: one
//! repetition of strata, then one of each baseline build, round after round
//! (`builds::alternating`), so that a change in the machine's state during the run falls on
//! both sides of the ratio.
//!
//! `strata bench` also runs the pattern benchmarks (`pat_*`, [`crate::bench::patterns`]) and
//! the compute-bound SGEMM benchmarks (`sgemm*`, [`crate::bench::blas`]: square matrices whose
//! size the device decides, against cuBLAS on CUDA devices, with [`BenchResult::flops`] and
//! TFLOP/s), then the compute-bound kernels `mandelbrot`, `nbody` and `matmul`
//! ([`crate::bench::compute`]: fixed problem sizes that a `--size` below the default scales
//! down, rayon baselines, TFLOP/s, and each kernel's compile time with and without the
//! device's kernel cache: [`BenchResult::compile_s`], [`BenchResult::compile_cached_s`]),
//! and the tensor-field benchmarks `rof_fused` and `rof_unfused` ([`crate::bench::fields`]:
//! ROF denoising with and without operator fusion; the `rof_unfused` row's baseline is
//! `rof_fused`, so its ratio is what fusion gains), the host overhead of a pattern call and
//! of a launch (`overhead_*`, [`crate::bench::overhead`]) and the transfers between host
//! slices and buffers (`transfer_*`, [`crate::bench::transfer`], against one host thread's
//! copy of the same bytes).
//!
//! - **strata time**: from the launch call until the result is complete. For `vadd` and `saxpy`
//!   that is until the kernel has finished; for `dot` and `sum` until the scalar is on the host.
//!   Inputs are uploaded beforehand and not timed; neither is the reset of the output between
//!   repetitions (the output is filled with NaN, or for `saxpy` `y` is rewritten, before each
//!   repetition, so every repetition computes its result from scratch).
//! - **baseline time**: on the CPU backend and OpenCL devices, the same computation in plain
//!   Rust over host slices with rayon (chunked loops the compiler vectorizes; reductions with
//!   eight accumulators per chunk), on the rayon thread pool the CPU backend also uses. On a
//!   CUDA device, hand-written CUDA C kernels compiled by NVRTC and launched through the raw
//!   driver API on the same GPU ([`crate::bench::cuda`]), timed the same way as strata;
//!   their results are checked against rayon's too. [`gpu_limits`] adds the device-to-device
//!   copy bandwidth and the launch cost, strata against a raw `cuLaunchKernel`.
//! - **GB/s**: bytes the computation must move (table above) divided by the median time.
//! - **ratio**: strata median / baseline median (below 1: strata is faster).
//!
//! Every strata result is checked against the baseline result: exactly (bit for bit) for `vadd`
//! and `saxpy`, within a relative error of 10^-3 for `dot` and `sum`. A mismatch fails the
//! benchmark with [`BenchError::WrongResult`]: a benchmark that computes the wrong thing
//! measures nothing.
//!
//! **Launch configuration.** Every kernel uses work-groups of the device's
//! [`preferred_group_size`](strata::DeviceInfo::preferred_group_size) (capped by its maximum
//! work-group size). On the CPU backend that is 1024: the interpreter runs a work-group's
//! work-items in lockstep, one operation over a column of 1024 values at a time, so large groups
//! amortize the cost of interpreting each statement, and 2^24 / 1024 = 16384 groups still keep
//! every rayon thread busy. `vadd` and `saxpy` use one work-item per element
//! ([`NdRange::covering`] with a bounds guard). `dot` and `sum` reduce the way a GPU programmer
//! would: each work-item accumulates its elements with a grid-stride loop, the work-group adds
//! the work-items' values ([`KernelDef::gather_add`](strata::KernelDef::gather_add), a work-group
//! reduction that writes one partial per group), and the partials are combined on the host
//! when the result is read ([`Gathered::get`](strata::Gathered::get)). The grid has at most
//! [`REDUCE_GROUPS_PER_UNIT`] groups per compute unit, so each work-item adds several elements
//! and the partials stay few. On CPU devices the layout follows how the device runs a
//! work-group ([`ReduceLayout`]): OpenCL and Vulkan CPU drivers, which run a work-item's loop
//! to its end before the next, give each work-item one contiguous chunk, in work-groups of
//! at most [`CPU_REDUCE_GROUP`] work-items so that the chunks are long streams; the compiled
//! backend, which runs eight work-items side by side in SIMD lanes, gives each work-group of
//! [`CPU_STRIPED_GROUP`] one contiguous stretch that its work-items read side by side, and
//! adds the work-items' partials on the host.
//!
//! `sum_unrolled` is the same sum in one kernel on every device, written the way OpenCL code
//! for CPUs often is: each work-item adds its own contiguous chunk in a loop unrolled by hand
//! by 16 (sixteen loads of `x[i + j]` a step, the chunk's last elements one at a time), the
//! work-group adds its work-items' sums with [`group_reduce_add`], and the host the groups'
//! partials; work-groups of at most [`CPU_REDUCE_GROUP`], at most [`REDUCE_GROUPS_PER_UNIT`]
//! per compute unit (as [`ReduceLayout::Chunk`]). It measures what such a kernel gets, not a
//! layout chosen for the device (on a GPU a chunk per work-item is not coalesced).

pub mod blas;
pub mod builds;
pub mod compute;
pub mod cublas;
pub mod cuda;
pub mod fields;
pub mod overhead;
pub mod patterns;
pub mod plot;
pub mod transfer;

use crate::bench::builds::{two_builds, Build};
use crate::bench::cuda::CudaBaseline;
use rayon::prelude::*;
use std::fmt;
use std::time::Instant;
use strata::prelude::*;
use strata::{BackendKind, Error, Gathered};

/// The benchmarks, in the order they run.
pub const BENCHES: [&str; 5] = ["vadd", "saxpy", "dot", "sum", "sum_unrolled"];

/// The default problem size: 2^24 elements.
pub const DEFAULT_SIZE: usize = 1 << 24;

/// The default number of timed repetitions.
pub const DEFAULT_REPS: usize = 10;

/// Largest number of work-groups per compute unit in the reduction kernels (`dot`, `sum`).
pub const REDUCE_GROUPS_PER_UNIT: usize = 16;

/// Largest work-group of the reduction kernels (`dot`, `sum`) on OpenCL and Vulkan CPU
/// devices, where each work-item adds one contiguous chunk ([`ReduceLayout::Chunk`]): with
/// [`REDUCE_GROUPS_PER_UNIT`] groups per compute unit, 2^24 elements on 2 cores are chunks
/// of 8,192 (32 KiB). A CPU runs four or eight
/// work-items side by side in SIMD lanes (the compiled backend's vector variant, PoCL's
/// work-group vectorizer), each lane reading its own chunk: with the preferred work-group
/// of 1,024 the chunks were 512 elements, four to eight streams of 2 KiB at once, which the
/// hardware prefetchers follow badly. Measured on `cpu` (2-core AMD EPYC VM, 2026-11-28,
/// idle, `--reps 10`, two rounds): `sum` 3.9-4.6 ms with groups of 1,024, 2.6 with 256,
/// 2.4-2.5 with 64 (rayon 1.7-2.3 ms); a hand-written SSE loop of the same four-chunk access
/// pattern ran as fast as `cpu` at each length. (`cpu` now reads striped stretches,
/// [`CPU_STRIPED_GROUP`].)
pub const CPU_REDUCE_GROUP: usize = 64;

/// The work-group of the reduction kernels (`dot`, `sum`) on the compiled CPU backend: its
/// SIMD block. `cpu` runs a block of work-items side by side in SIMD lanes through the whole
/// kernel before the next block: eight in a kernel of one region and 32-bit values (the
/// eight-lane variant, two vectors per step: two independent chains of additions), four in
/// a kernel with a collective. The striped kernel writes one partial per work-item (added on
/// the host), so it has one region, and a group of eight reading its stretch striped (work-item
/// `l` reads elements `l`, `l + 8`, ...) loads eight consecutive elements per step and each
/// thread reads one stream per array. A group larger than the block reads its stretch once per
/// block, each block every few vectors. Measured on `cpu` (2-core AMD EPYC VM, 2026-11-29,
/// idle, `--reps 10`): `dot` 2.1-2.9 ms with groups of 4 (a collective, four lanes), 4.2 with
/// 8, 8.5 with 16 and 13.6 with 64 (rayon 1.9-3.0 ms), against 3.6 for a chunk per work-item
/// (groups of 64, [`CPU_REDUCE_GROUP`]: eight streams a thread); then groups of 8 in eight
/// lanes (partials, one region): `sum` 1.16-1.42 ms against 1.31-1.39 in four lanes, `dot`
/// 2.4-2.6 against 2.3-2.6.
pub const CPU_STRIPED_GROUP: usize = 8;

/// How the reduction kernels (`dot`, `sum`) read their input on a device: as the device
/// runs a work-group's work-items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceLayout {
    /// Each work-item adds elements `g`, `g + G`, ... (`G` the global size): consecutive
    /// work-items read consecutive elements at once. GPUs (coalesced loads) and the
    /// interpreter (one column per work-group).
    GridStride,
    /// Each work-item adds one contiguous chunk: OpenCL and Vulkan CPU drivers (PoCL,
    /// lavapipe), which run a work-item's loop to its end before the next work-item. Groups
    /// of at most [`CPU_REDUCE_GROUP`].
    Chunk,
    /// Each work-group adds one contiguous stretch, its work-items side by side in it (work-item
    /// `l` reads elements `l`, `l + L`, ... of the stretch, `L` the group's size), and each
    /// work-item writes its partial, which the host adds: the compiled CPU backend, which runs
    /// a group's work-items eight at a time in SIMD lanes. Groups of [`CPU_STRIPED_GROUP`].
    Striped,
}

impl ReduceLayout {
    /// The layout for `device`. On PoCL the striped layout ran slower than the chunks
    /// (2-core AMD EPYC VM, 2026-11-29: `dot` 6.2 against 4.5 ms, `sum` 4.9 against 4.5).
    pub fn of(device: &strata::DeviceInfo) -> ReduceLayout {
        match device.backend {
            BackendKind::Cpu => ReduceLayout::Striped,
            BackendKind::Interp => ReduceLayout::GridStride,
            _ if device.is_cpu() => ReduceLayout::Chunk,
            _ => ReduceLayout::GridStride,
        }
    }
}

/// Relative error allowed between the strata and baseline results of `dot` and `sum`.
pub const REDUCTION_TOLERANCE: f64 = 1e-3;

/// The `a` of `saxpy`.
pub const SAXPY_A: f32 = 2.5;

/// Elements per rayon task in the baselines (64 KiB of `f32`).
const CHUNK: usize = 1 << 14;

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchOptions {
    /// Elements per vector (at least 1).
    pub size: usize,
    /// Timed repetitions after the warm-up (at least 1); times are their median.
    pub reps: usize,
    /// Keep only the benchmarks whose name contains this.
    pub filter: Option<String>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            size: DEFAULT_SIZE,
            reps: DEFAULT_REPS,
            filter: None,
        }
    }
}

/// The measurements of one benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    /// Benchmark name (`vadd`, `saxpy`, `dot`, `sum`).
    pub bench: &'static str,
    /// Spec of the device the strata kernels ran on.
    pub device: String,
    /// Elements per vector.
    pub n: usize,
    /// Timed repetitions.
    pub reps: usize,
    /// Work-group size of the strata launch.
    pub local_size: usize,
    /// Work-groups of the strata launch.
    pub groups: usize,
    /// Bytes the computation must move.
    pub bytes: u64,
    /// Floating-point operations of the computation, for the compute-bound benchmarks (`sgemm*`
    /// and `matmul`: `2 n^3`; `nbody` and `mandelbrot`: see [`crate::bench::compute`]); 0 for
    /// the memory-bound ones.
    pub flops: u64,
    /// Median strata time, in seconds.
    pub strata_s: f64,
    /// The baseline's name: `rayon`, or `cuda` (hand-written CUDA C) on a CUDA device.
    pub baseline: &'static str,
    /// Median baseline time, in seconds.
    pub baseline_s: f64,
    /// `strata_s / baseline_s`.
    pub ratio: f64,
    /// Median time of the rayon baseline's AVX2+FMA build ([`Build::Avx2Fma`]), in seconds;
    /// the rayon baseline itself ([`BenchResult::baseline_s`]) is the default build
    /// ([`Build::Default`], SSE2 on x86-64). `None` where the CPU lacks AVX2 or FMA, where the
    /// baseline is not rayon's, or where the benchmark has no such build (the pattern and
    /// field benchmarks).
    pub avx2_s: Option<f64>,
    /// `strata_s / avx2_s`.
    pub ratio_avx2: Option<f64>,
    /// Relative difference between the strata and baseline results (0 for `vadd` and `saxpy`,
    /// which must match exactly; at most [`REDUCTION_TOLERANCE`] for `dot` and `sum`).
    pub rel_error: f64,
    /// Seconds to build the benchmark's kernel and compile it for the device when the device's
    /// kernel cache does not hold it (the compute benchmarks, [`crate::bench::compute`];
    /// `None` for the others).
    pub compile_s: Option<f64>,
    /// Seconds to build the same kernel again and get it compiled from the device's kernel
    /// cache (median); `None` where [`BenchResult::compile_s`] is.
    pub compile_cached_s: Option<f64>,
    /// For the `_tuned` pattern benchmarks, the tuned configuration and where it came from
    /// (the records file, or a tuning run in this benchmark run); `None` for the others.
    pub tuned: Option<String>,
}

impl BenchResult {
    /// `self` with the median of the baseline's AVX2+FMA build and strata's ratio to it.
    pub(crate) fn with_avx2(self, avx2_s: Option<f64>) -> BenchResult {
        BenchResult {
            avx2_s,
            ratio_avx2: avx2_s.map(|s| self.strata_s / s),
            ..self
        }
    }

    /// Effective bandwidth of the strata kernels, in GB/s (10^9 bytes per second).
    pub fn strata_gbps(&self) -> f64 {
        gbps(self.bytes, self.strata_s)
    }

    /// Effective bandwidth of the baseline, in GB/s.
    pub fn baseline_gbps(&self) -> f64 {
        gbps(self.bytes, self.baseline_s)
    }

    /// Arithmetic throughput of the strata kernels, in TFLOP/s (10^12 operations per second);
    /// NaN for the memory-bound benchmarks (`flops` 0).
    pub fn strata_tflops(&self) -> f64 {
        tflops(self.flops, self.strata_s)
    }

    /// Arithmetic throughput of the baseline, in TFLOP/s; NaN where `flops` is 0.
    pub fn baseline_tflops(&self) -> f64 {
        tflops(self.flops, self.baseline_s)
    }
}

fn gbps(bytes: u64, s: f64) -> f64 {
    if s > 0.0 {
        bytes as f64 / s / 1e9
    } else {
        f64::INFINITY
    }
}

fn tflops(flops: u64, s: f64) -> f64 {
    if flops == 0 {
        f64::NAN
    } else if s > 0.0 {
        flops as f64 / s / 1e12
    } else {
        f64::INFINITY
    }
}

/// Why a benchmark run failed.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchError {
    /// A strata call failed.
    Strata(Error),
    /// The strata result differs from the baseline result.
    WrongResult {
        /// The benchmark.
        bench: &'static str,
        /// The first difference.
        detail: String,
    },
    /// The options are unusable (size or repetitions of 0, a filter matching nothing).
    InvalidOptions(String),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Strata(e) => write!(f, "{e}"),
            BenchError::WrongResult { bench, detail } => {
                write!(f, "benchmark `{bench}` computed a wrong result: {detail}")
            }
            BenchError::InvalidOptions(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<Error> for BenchError {
    fn from(e: Error) -> Self {
        BenchError::Strata(e)
    }
}

/// The names of the benchmarks [`run`] would run with `filter`.
pub fn selected(filter: Option<&str>) -> Vec<&'static str> {
    BENCHES
        .iter()
        .chain(crate::bench::patterns::BENCHES.iter())
        .chain(crate::bench::blas::BENCHES.iter())
        .chain(crate::bench::compute::BENCHES.iter())
        .chain(crate::bench::fields::BENCHES.iter())
        .chain(crate::bench::overhead::BENCHES.iter())
        .chain(crate::bench::transfer::BENCHES.iter())
        .copied()
        .filter(|b| filter.is_none_or(|f| b.contains(f)))
        .collect()
}

/// Runs the selected benchmarks on `device` (see the module docs) and returns their results.
pub fn run(device: &Device, opts: &BenchOptions) -> Result<Vec<BenchResult>, BenchError> {
    run_with(device, opts, |_| {})
}

/// Like [`run`], calling `done` with each result as soon as its benchmark has finished. A
/// benchmark the device cannot run ([`Error::Unsupported`]) fails the run; [`run_rows`]
/// skips it instead.
pub fn run_with(
    device: &Device,
    opts: &BenchOptions,
    done: impl FnMut(&BenchResult),
) -> Result<Vec<BenchResult>, BenchError> {
    let mut first = None;
    let results = run_rows(device, opts, done, |name, reason| {
        first.get_or_insert_with(|| (name, reason.to_string()));
    })?;
    match first {
        Some((name, reason)) => Err(BenchError::Strata(Error::Unsupported {
            kernel: name.to_string(),
            device: device.spec(),
            reason,
        })),
        None => Ok(results),
    }
}

/// Like [`run_with`], but a benchmark the device cannot run ([`Error::Unsupported`]: a
/// feature it lacks) is skipped: `unsupported` gets its name and the reason, and the other
/// benchmarks run. Any other error ends the run.
pub fn run_rows(
    device: &Device,
    opts: &BenchOptions,
    mut done: impl FnMut(&BenchResult),
    mut unsupported: impl FnMut(&'static str, &str),
) -> Result<Vec<BenchResult>, BenchError> {
    if opts.size == 0 {
        return Err(BenchError::InvalidOptions(
            "the benchmark size must be at least 1 element".into(),
        ));
    }
    if opts.reps == 0 {
        return Err(BenchError::InvalidOptions(
            "the number of repetitions must be at least 1".into(),
        ));
    }
    let names = selected(opts.filter.as_deref());
    if names.is_empty() {
        return Err(BenchError::InvalidOptions(format!(
            "no benchmark name contains `{}` (the benchmarks are {})",
            opts.filter.as_deref().unwrap_or_default(),
            selected(None).join(", ")
        )));
    }
    let n = opts.size;
    check_size(device, n)?;
    let queue = Queue::new(device)?;
    let x = host_data(n, 1)?;
    let y = host_data(n, 2)?;
    let cuda = match device.info().backend {
        BackendKind::Cuda => Some(CudaBaseline::new(device)?),
        _ => None,
    };
    let cuda = cuda.as_ref();
    // The SGEMM inputs and baselines, made by the first SGEMM benchmark of each size.
    let mut gemm = crate::bench::blas::Runs::default();
    let mut results = Vec::new();
    for name in names {
        let mut row = || -> Result<BenchResult, BenchError> {
            Ok(match name {
                "vadd" => bench_vadd(&queue, &x, &y, opts.reps, cuda)?,
                "saxpy" => bench_saxpy(&queue, &x, &y, opts.reps, cuda)?,
                "dot" => bench_reduce(&queue, Reduction::Dot, &x, &y, opts.reps, cuda)?,
                "sum" => bench_reduce(&queue, Reduction::Sum, &x, &y, opts.reps, cuda)?,
                "sum_unrolled" => {
                    bench_reduce(&queue, Reduction::SumUnrolled, &x, &y, opts.reps, cuda)?
                }
                // The SGEMM benchmarks (`sgemm*`): src/blas/bench.rs.
                sgemm if crate::bench::blas::config(sgemm).is_some() => {
                    gemm.run(&queue, sgemm, cuda, opts.reps)?
                }
                // The compute benchmarks (`mandelbrot`, `nbody`, `matmul`): compute.rs.
                compute if crate::bench::compute::BENCHES.contains(&compute) => {
                    crate::bench::compute::run(compute, &queue, n, opts.reps)?
                }
                // The tensor-field benchmarks (`rof_fused`, `rof_unfused`): fields.rs.
                rof if crate::bench::fields::BENCHES.contains(&rof) => {
                    crate::bench::fields::run(rof, &queue, n, opts.reps)?
                }
                // The host overhead of a pattern call (`overhead_*`): overhead.rs.
                o if crate::bench::overhead::BENCHES.contains(&o) => {
                    crate::bench::overhead::run(o, &queue, opts.reps)?
                }
                // Host to buffer and back (`transfer_*`): transfer.rs.
                t if crate::bench::transfer::BENCHES.contains(&t) => {
                    crate::bench::transfer::run(t, &queue, &x, opts.reps)?
                }
                // The pattern benchmarks (`pat_*`): patterns.rs.
                other => crate::bench::patterns::run(other, &queue, &x, &y, opts.reps)?,
            })
        };
        match row() {
            Ok(r) => {
                done(&r);
                results.push(r);
            }
            Err(BenchError::Strata(Error::Unsupported { reason, .. })) => {
                unsupported(name, &reason)
            }
            Err(e) => return Err(e),
        }
    }
    Ok(results)
}

/// What bounds the benchmarks on a CUDA device, measured beside them.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuLimits {
    /// Device-to-device copy bandwidth over a vector of the benchmark size, counting bytes
    /// read and written, in GB/s: the roof for the memory-bound benchmarks.
    pub copy_gbps: f64,
    /// The cost of a launch, strata against raw `cuLaunchKernel` (1000 launches).
    pub launch: crate::bench::cuda::LaunchCost,
    /// cuBLAS, the SGEMM baseline: its version and where it was loaded from; or why it could
    /// not be loaded (the `sgemm*` rows then compare with a hand-written CUDA C kernel, whose
    /// baseline name is `cuda`).
    pub cublas: Result<String, String>,
}

/// Builds and compiles ten distinct kernels on `device` (the same ten in every process) and
/// returns the seconds that took: in a process whose compiled kernels are all in the disk
/// cache (CUDA's, see [`strata::cuda::ptx_cache_dir`]), the warm start of a program of ten
/// kernels. `strata bench` runs it in two fresh processes over an empty cache: the first
/// compiles, the second starts warm.
pub fn start_ten_kernels(device: &Device) -> Result<f64, BenchError> {
    let t = Instant::now();
    for k in 0..10u32 {
        let kernel = Kernel::build(&format!("warm_start_{k}"), |kd| {
            let x = kd.read_write::<f32>("x");
            let i = global_id(0);
            // A different constant per kernel: ten kernels, each compiled once.
            if_(i.lt(x.len()), || {
                x.set(i, x.at(i) * (k as f32 + 1.5) + (k as f32))
            });
        })?;
        device.compile(&kernel)?;
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Copy bandwidth, launch cost and the cuBLAS library on a CUDA device (`None` on other
/// devices).
pub fn gpu_limits(device: &Device, opts: &BenchOptions) -> Result<Option<GpuLimits>, BenchError> {
    if device.info().backend != BackendKind::Cuda {
        return Ok(None);
    }
    let b = CudaBaseline::new(device)?;
    let copy_gbps = b.copy_gbps(4 * opts.size.max(1), opts.reps.max(1))?;
    let launch = b.launch_overhead(1000)?;
    Ok(Some(GpuLimits {
        copy_gbps,
        launch,
        cublas: cublas::cublas_path().and_then(|p| {
            let (major, minor, patch) = cublas::cublas_version()?;
            Ok(format!("cuBLAS {major}.{minor}.{patch} ({})", p.display()))
        }),
    }))
}

/// How long a cache line takes to go from one thread to another and back (nanoseconds, the
/// median of ten batches of 2,000 round trips), measured on two threads of this process; `None`
/// where the two could not run side by side (one CPU, or the round trips took over a second:
/// other processes hold the cores). A wait spins, and yields its core now and then, so that on
/// a busy machine the other thread gets to run; its turns then count in the figure.
///
/// A kernel that hands data from one work-group to another while both run (the look-back
/// scans, Onesweep: a status word per tile, read on the other thread) pays about one such
/// handover per tile, and on a virtual machine it is not a constant: on the 2-core VM of
/// docs/BENCHMARKS.md this figure moved between about 55 ns and about 430 ns from one minute
/// to the next, and `pat_scan_k4` between 36 and 70 ms with it (issue 31). `strata bench`
/// measures it before and after a CPU device's rows and prints both.
pub fn core_round_trip_ns() -> Option<f64> {
    use std::sync::atomic::{AtomicU64, Ordering};
    const ROUNDS: u64 = 2_000;
    const BATCHES: usize = 10;
    /// The line the two threads hand over, alone in its cache line.
    #[repr(align(128))]
    struct Line(AtomicU64);
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    let line = Line(AtomicU64::new(0));
    let deadline = Instant::now() + std::time::Duration::from_secs(1);
    // Waits until the line holds `want` (false past the deadline: the other thread gave up or
    // cannot run).
    let wait = |want: u64| {
        let mut spins = 0u32;
        while line.0.load(Ordering::Acquire) != want {
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(1024) {
                if Instant::now() > deadline {
                    return false;
                }
                std::thread::yield_now();
            }
        }
        true
    };
    let total = ROUNDS * BATCHES as u64;
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..total {
                if !wait(2 * i + 1) {
                    return;
                }
                line.0.store(2 * i + 2, Ordering::Release);
            }
        });
        let mut batches = Vec::with_capacity(BATCHES);
        for b in 0..BATCHES as u64 {
            let t = Instant::now();
            for i in b * ROUNDS..(b + 1) * ROUNDS {
                line.0.store(2 * i + 1, Ordering::Release);
                if !wait(2 * i + 2) {
                    // Lets the helper's wait end too.
                    line.0.store(u64::MAX, Ordering::Release);
                    return None;
                }
            }
            batches.push(t.elapsed().as_secs_f64() * 1e9 / ROUNDS as f64);
        }
        Some(median(batches))
    })
}

/// What a baseline name stands for, in the table's header.
fn baseline_text(name: &str) -> String {
    match name {
        "cuda" => "hand-written CUDA C through NVRTC on the same GPU".into(),
        "cublas" => "cuBLAS (cublasSgemm, fp32) on the same GPU".into(),
        "launch" => "a raw launch of the pattern's own cached kernel with the same arguments, waited for (`overhead_*`)".into(),
        "memcpy" => "one host thread copying the same bytes between host vectors (`transfer_*`)".into(),
        "rayon" => format!(
            "rayon on {} thread(s), built for the default target{}; avx2: {}",
            rayon::current_num_threads(),
            if cfg!(target_arch = "x86_64") {
                " (x86-64: SSE2)"
            } else {
                ""
            },
            if builds::avx2_fma_detected() {
                "the same loops built with target features avx2 and fma"
            } else {
                "unavailable (this CPU has no AVX2 and FMA)"
            }
        ),
        other => other.into(),
    }
}

/// The results as an aligned text table, with a header naming the device. Throughput columns
/// in TFLOP/s are added when a compute-bound benchmark (`sgemm*`, `mandelbrot`, `nbody`,
/// `matmul`) is among the results, the AVX2+FMA build of the rayon baseline (`avx2 ms`,
/// `ratio avx2`: [`BenchResult::avx2_s`]) when a row is against rayon, and compile-time columns (`compile ms`: a miss of the
/// device's kernel cache, `cached ms`: a hit) when a row has them (`-` in the other rows).
pub fn table(device: &Device, results: &[BenchResult]) -> String {
    let info = device.info();
    let first = results.first().map_or("rayon", |r| r.baseline);
    // Rows against different baselines (on CUDA: hand-written CUDA C, cuBLAS, or rayon where
    // there is no CUDA baseline) name theirs.
    let mixed = results.iter().any(|r| r.baseline != first);
    let baseline = if mixed { "baseline" } else { first };
    let flops = results.iter().any(|r| r.flops > 0);
    let compile = results.iter().any(|r| r.compile_s.is_some());
    // The AVX2+FMA build of the rayon baselines: columns wherever a row is against rayon
    // (`-` where the build is unavailable or the benchmark has none).
    let avx2 = results.iter().any(|r| r.baseline == "rayon");
    let mut head = vec![
        "bench".to_string(),
        "n".to_string(),
        "local".to_string(),
        "groups".to_string(),
        "strata ms".to_string(),
        "strata GB/s".to_string(),
    ];
    if flops {
        head.push("strata TFLOP/s".to_string());
    }
    head.extend([format!("{baseline} ms"), format!("{baseline} GB/s")]);
    if flops {
        head.push(format!("{baseline} TFLOP/s"));
    }
    head.push("ratio".to_string());
    if avx2 {
        head.extend(["avx2 ms".to_string(), "ratio avx2".to_string()]);
    }
    head.push("rel err".to_string());
    if compile {
        head.extend(["compile ms".to_string(), "cached ms".to_string()]);
    }
    let tf = |x: f64| {
        if x.is_nan() {
            "-".to_string()
        } else if x >= 0.1 {
            format!("{x:.2}")
        } else {
            format!("{x:.1e}")
        }
    };
    let mut rows = vec![head];
    for r in results {
        let mut row = vec![
            if mixed {
                format!("{} vs {}", r.bench, r.baseline)
            } else {
                r.bench.to_string()
            },
            r.n.to_string(),
            r.local_size.to_string(),
            r.groups.to_string(),
            format!("{:.3}", r.strata_s * 1e3),
            format!("{:.2}", r.strata_gbps()),
        ];
        if flops {
            row.push(tf(r.strata_tflops()));
        }
        row.extend([
            format!("{:.3}", r.baseline_s * 1e3),
            format!("{:.2}", r.baseline_gbps()),
        ]);
        if flops {
            row.push(tf(r.baseline_tflops()));
        }
        row.push(format!("{:.2}", r.ratio));
        if avx2 {
            let dash = || "-".to_string();
            row.extend([
                r.avx2_s.map_or_else(dash, |s| format!("{:.3}", s * 1e3)),
                r.ratio_avx2.map_or_else(dash, |x| format!("{x:.2}")),
            ]);
        }
        row.push(format!("{:.1e}", r.rel_error));
        if compile {
            let ms = |s: Option<f64>| s.map_or("-".to_string(), |s| format!("{:.3}", s * 1e3));
            row.extend([ms(r.compile_s), ms(r.compile_cached_s)]);
        }
        rows.push(row);
    }
    let reps = results.first().map_or(0, |r| r.reps);
    let mut names: Vec<&str> = Vec::new();
    for r in results {
        if !names.contains(&r.baseline) {
            names.push(r.baseline);
        }
    }
    let against = if mixed {
        let parts: Vec<String> = names
            .iter()
            .map(|n| format!("{} (`vs {n}`)", baseline_text(n)))
            .collect();
        format!("baselines: {}", parts.join(", "))
    } else {
        format!("baseline: {}", baseline_text(first))
    };
    let mut out = format!(
        "device {} ({}), median of {reps} repetition(s), {against}\n",
        device.spec(),
        info.name,
    );
    out.push_str(&crate::report::aligned(&rows));
    for r in results {
        if let Some(t) = &r.tuned {
            out.push_str(&format!("{}: {t}\n", r.bench));
        }
        if r.baseline == "launch" || r.bench.starts_with("overhead_launch") {
            out.push_str(&crate::bench::overhead::summary(r));
        }
    }
    out
}

/// Checks a reduction's AVX2+FMA baseline `fast` against its default build's `want`, within
/// [`REDUCTION_TOLERANCE`] (rayon adds the chunks' partials in an order that depends on the
/// scheduling).
pub(crate) fn avx2_close(bench: &'static str, fast: f32, want: f32) -> Result<(), BenchError> {
    check_close(bench, fast, want)
        .map(|_| ())
        .map_err(|e| BenchError::WrongResult {
            bench,
            detail: format!("the AVX2+FMA baseline differs: {e}"),
        })
}

/// Checks that `got` equals `want` bit for bit, naming the first difference.
pub fn check_exact(bench: &'static str, got: &[f32], want: &[f32]) -> Result<(), BenchError> {
    if got.len() != want.len() {
        return Err(BenchError::WrongResult {
            bench,
            detail: format!("{} elements, expected {}", got.len(), want.len()),
        });
    }
    match got
        .iter()
        .zip(want)
        .position(|(g, w)| g.to_bits() != w.to_bits())
    {
        None => Ok(()),
        Some(i) => Err(BenchError::WrongResult {
            bench,
            detail: format!(
                "element {i} is {:e}, the baseline computed {:e}",
                got[i], want[i]
            ),
        }),
    }
}

/// Checks that `got` is within [`REDUCTION_TOLERANCE`] of `want` (relative); returns the
/// relative error.
pub fn check_close(bench: &'static str, got: f32, want: f32) -> Result<f64, BenchError> {
    let (g, w) = (got as f64, want as f64);
    let err = if g == w {
        0.0
    } else {
        (g - w).abs() / w.abs().max(f64::MIN_POSITIVE)
    };
    // A NaN error is not `<=` anything: it fails too.
    let within = err <= REDUCTION_TOLERANCE;
    if !within {
        return Err(BenchError::WrongResult {
            bench,
            detail: format!(
                "got {got:e}, the baseline computed {want:e} (relative error {err:.2e}, allowed {REDUCTION_TOLERANCE:e})"
            ),
        });
    }
    Ok(err)
}

/// Refuses sizes strata cannot index (more than 2^32 - 1 elements) or the device cannot hold:
/// a benchmark needs three vectors on the device and three on the host (the same memory, for
/// the CPU backend).
fn check_size(device: &Device, n: usize) -> Result<(), BenchError> {
    let info = device.info();
    if n > u32::MAX as usize {
        return Err(BenchError::InvalidOptions(format!(
            "the benchmark size {n} exceeds 2^32 - 1 elements (strata indices are u32)"
        )));
    }
    let vector = 4 * n as u64;
    let needed = if info.backend.is_builtin_cpu() {
        6 * vector
    } else {
        3 * vector
    };
    if vector > info.max_alloc_size || needed > info.global_mem_size {
        return Err(BenchError::InvalidOptions(format!(
            "the benchmark size {n} needs vectors of {vector} bytes, {needed} bytes in all; {} allows allocations of {} bytes and has {} bytes of memory",
            info.spec(),
            info.max_alloc_size,
            info.global_mem_size
        )));
    }
    Ok(())
}

/// Deterministic pseudo-random values in [0, 1), 24 significant bits (exact in `f32`).
pub(crate) fn host_data(n: usize, seed: u64) -> Result<Vec<f32>, BenchError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| {
        BenchError::InvalidOptions(format!("cannot allocate {n} host elements: {e}"))
    })?;
    (0..n)
        .into_par_iter()
        .map(|i| {
            // splitmix64
            let mut z = (i as u64)
                .wrapping_add(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect_into_vec(&mut v);
    Ok(v)
}

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    let m = t.len() / 2;
    if t.len() % 2 == 1 {
        t[m]
    } else {
        (t[m - 1] + t[m]) / 2.0
    }
}

fn group_size(device: &Device) -> usize {
    let info = device.info();
    info.preferred_group_size
        .min(info.max_work_group_size)
        .min(info.max_work_item_sizes[0])
        .max(1)
}

/// Times `f` once to warm up, then `reps` times; returns the median, in seconds.
pub(crate) fn timed<E>(reps: usize, mut f: impl FnMut() -> Result<f64, E>) -> Result<f64, E> {
    let [s] = alternate(reps, [&mut f])?;
    Ok(s)
}

/// Times each of `runs` (each returns the seconds of one run) once to warm up, then `reps`
/// rounds of all of them in turn; returns each one's median, in seconds. Taking turns keeps a
/// change in the machine's state between the first repetitions and the last (its load, the
/// other core's clock, a neighbour's traffic) from falling on one side of a comparison.
pub(crate) fn alternate<E, const N: usize>(
    reps: usize,
    mut runs: [&mut dyn FnMut() -> Result<f64, E>; N],
) -> Result<[f64; N], E> {
    for run in &mut runs {
        run()?;
    }
    let mut t: [Vec<f64>; N] = std::array::from_fn(|_| Vec::with_capacity(reps));
    for _ in 0..reps {
        for (run, t) in runs.iter_mut().zip(&mut t) {
            t.push(run()?);
        }
    }
    Ok(t.map(median))
}

#[allow(clippy::too_many_arguments)]
fn result(
    queue: &Queue,
    bench: &'static str,
    n: usize,
    reps: usize,
    range: NdRange,
    bytes: u64,
    strata_s: f64,
    baseline: (&'static str, f64),
    rel_error: f64,
) -> BenchResult {
    BenchResult {
        local_size: range.local_size().map_or(0, |l| l[0]),
        groups: range.group_count(),
        ..row(queue, bench, n, reps, bytes, strata_s, baseline, rel_error)
    }
}

/// A row's result without a launch to describe (`local_size` and `groups` 0: a transfer; the
/// overhead rows set their own), no FLOPs, no AVX2 build, no compile times.
#[allow(clippy::too_many_arguments)]
fn row(
    queue: &Queue,
    bench: &'static str,
    n: usize,
    reps: usize,
    bytes: u64,
    strata_s: f64,
    (baseline, baseline_s): (&'static str, f64),
    rel_error: f64,
) -> BenchResult {
    BenchResult {
        bench,
        device: queue.device().spec(),
        n,
        reps,
        local_size: 0,
        groups: 0,
        bytes,
        flops: 0,
        strata_s,
        baseline,
        baseline_s,
        ratio: strata_s / baseline_s,
        avx2_s: None,
        ratio_avx2: None,
        rel_error,
        compile_s: None,
        compile_cached_s: None,
        tuned: None,
    }
}

fn bench_vadd(
    q: &Queue,
    x: &[f32],
    y: &[f32],
    reps: usize,
    cuda: Option<&CudaBaseline>,
) -> Result<BenchResult, BenchError> {
    let n = x.len();
    let k = Kernel::build("bench_vadd", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let i = global_id(0);
        if_(i.lt(c.len()), || c.set(i, a.at(i) + b.at(i)));
    })?;
    let range = NdRange::covering(n, group_size(q.device()));
    let a = Buffer::from_slice(q, x)?;
    let b = Buffer::from_slice(q, y)?;
    let c = Buffer::<f32>::new(q.device(), n)?;
    let (strata_s, baseline_s, avx2_s, want) = builds::alternating(
        reps,
        || -> Result<f64, BenchError> {
            q.fill(&c, f32::NAN, 0..n)?;
            let t = Instant::now();
            k.launch(q, range, args![&a, &b, &c])?;
            Ok(t.elapsed().as_secs_f64())
        },
        |build, want: &mut Vec<f32>| -> Result<f64, BenchError> {
            want.resize(n, 0.0);
            want.fill(f32::NAN);
            let t = Instant::now();
            rayon_vadd(build, want, x, y);
            Ok(t.elapsed().as_secs_f64())
        },
        |got, want| check_exact("vadd (the AVX2+FMA baseline)", got, want),
    )?;
    check_exact("vadd", &q.read(&c)?, &want)?;
    let (baseline, avx2_s) = match cuda {
        Some(b) => {
            let (s, base) = b.vadd(x, y, reps)?;
            check_exact("vadd (the CUDA baseline)", &base, &want)?;
            (("cuda", s), None)
        }
        None => (("rayon", baseline_s), avx2_s),
    };
    Ok(result(
        q,
        "vadd",
        n,
        reps,
        range,
        3 * 4 * n as u64,
        strata_s,
        baseline,
        0.0,
    )
    .with_avx2(avx2_s))
}

fn bench_saxpy(
    q: &Queue,
    x: &[f32],
    y0: &[f32],
    reps: usize,
    cuda: Option<&CudaBaseline>,
) -> Result<BenchResult, BenchError> {
    let n = x.len();
    let k = Kernel::build("bench_saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(y.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })?;
    let range = NdRange::covering(n, group_size(q.device()));
    let xb = Buffer::from_slice(q, x)?;
    let yb = Buffer::<f32>::new(q.device(), n)?;
    let (strata_s, baseline_s, avx2_s, want) = builds::alternating(
        reps,
        || -> Result<f64, BenchError> {
            q.write(&yb, 0.., y0)?;
            let t = Instant::now();
            k.launch(q, range, args![SAXPY_A, &xb, &yb])?;
            Ok(t.elapsed().as_secs_f64())
        },
        |build, want: &mut Vec<f32>| -> Result<f64, BenchError> {
            want.resize(n, 0.0);
            want.copy_from_slice(y0);
            let t = Instant::now();
            rayon_saxpy(build, want, x);
            Ok(t.elapsed().as_secs_f64())
        },
        |got, want| check_exact("saxpy (the AVX2+FMA baseline)", got, want),
    )?;
    check_exact("saxpy", &q.read(&yb)?, &want)?;
    let (baseline, avx2_s) = match cuda {
        Some(b) => {
            let (s, base) = b.saxpy(SAXPY_A, x, y0, reps)?;
            check_exact("saxpy (the CUDA baseline)", &base, &want)?;
            (("cuda", s), None)
        }
        None => (("rayon", baseline_s), avx2_s),
    };
    Ok(result(
        q,
        "saxpy",
        n,
        reps,
        range,
        3 * 4 * n as u64,
        strata_s,
        baseline,
        0.0,
    )
    .with_avx2(avx2_s))
}

#[derive(Clone, Copy, PartialEq)]
enum Reduction {
    Dot,
    Sum,
    /// `sum` as a chunk per work-item unrolled by hand, a group reduction, partials per group.
    SumUnrolled,
}

impl Reduction {
    fn name(self) -> &'static str {
        match self {
            Reduction::Dot => "dot",
            Reduction::Sum => "sum",
            Reduction::SumUnrolled => "sum_unrolled",
        }
    }
}

two_builds! {
    /// Sum of one chunk with eight independent accumulators (vectorizable), compiled for
    /// `build`.
    pub fn chunk_sum(x: &[f32]) -> f32 {
        let mut acc = [0.0f32; 8];
        let mut it = x.chunks_exact(8);
        for c in &mut it {
            for l in 0..8 {
                acc[l] += c[l];
            }
        }
        let mut s = acc.iter().sum::<f32>();
        for v in it.remainder() {
            s += v;
        }
        s
    }
}

two_builds! {
    /// Dot product of one chunk with eight independent accumulators (vectorizable), compiled
    /// for `build`.
    pub fn chunk_dot(x: &[f32], y: &[f32]) -> f32 {
        let mut acc = [0.0f32; 8];
        let mut xi = x.chunks_exact(8);
        let mut yi = y.chunks_exact(8);
        for (a, b) in (&mut xi).zip(&mut yi) {
            for l in 0..8 {
                acc[l] += a[l] * b[l];
            }
        }
        let mut s = acc.iter().sum::<f32>();
        for (a, b) in xi.remainder().iter().zip(yi.remainder()) {
            s += a * b;
        }
        s
    }
}

two_builds! {
    /// `c[i] = a[i] + b[i]` over one chunk, compiled for `build`.
    pub fn chunk_vadd(c: &mut [f32], a: &[f32], b: &[f32]) {
        for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
            *c = a + b;
        }
    }
}

two_builds! {
    /// `y[i] += SAXPY_A * x[i]` over one chunk, compiled for `build`.
    pub fn chunk_saxpy(y: &mut [f32], x: &[f32]) {
        for (y, x) in y.iter_mut().zip(x) {
            *y += SAXPY_A * x;
        }
    }
}

/// `vadd`'s baseline: `c[i] = a[i] + b[i]` with rayon over chunks of 64 KiB, the loops
/// compiled for `build` ([`chunk_vadd`]).
pub fn rayon_vadd(build: Build, c: &mut [f32], a: &[f32], b: &[f32]) {
    c.par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK))
        .zip(b.par_chunks(CHUNK))
        .for_each(|((c, a), b)| chunk_vadd(build, c, a, b));
}

/// `saxpy`'s baseline: `y[i] += SAXPY_A * x[i]` with rayon, compiled for `build`
/// ([`chunk_saxpy`]).
pub fn rayon_saxpy(build: Build, y: &mut [f32], x: &[f32]) {
    y.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .for_each(|(y, x)| chunk_saxpy(build, y, x));
}

/// `dot`'s baseline: [`chunk_dot`] per chunk with rayon, the partials added by rayon's sum
/// (whose order depends on the scheduling: compare two results within a tolerance).
pub fn rayon_dot(build: Build, x: &[f32], y: &[f32]) -> f32 {
    x.par_chunks(CHUNK)
        .zip(y.par_chunks(CHUNK))
        .map(|(x, y)| chunk_dot(build, x, y))
        .sum::<f32>()
}

/// `sum`'s baseline: [`chunk_sum`] per chunk with rayon (see [`rayon_dot`] for the order).
pub fn rayon_sum(build: Build, x: &[f32]) -> f32 {
    x.par_chunks(CHUNK)
        .map(|x| chunk_sum(build, x))
        .sum::<f32>()
}

fn bench_reduce(
    q: &Queue,
    which: Reduction,
    x: &[f32],
    y: &[f32],
    reps: usize,
    cuda: Option<&CudaBaseline>,
) -> Result<BenchResult, BenchError> {
    let n = x.len();
    let name = which.name();
    let unrolled = which == Reduction::SumUnrolled;
    let layout = match unrolled {
        true => ReduceLayout::Chunk,
        false => ReduceLayout::of(q.device().info()),
    };
    let k = Kernel::build(&format!("bench_{name}"), |k| {
        let x = k.read::<f32>("x");
        let y = (which == Reduction::Dot).then(|| k.read::<f32>("y"));
        // Striped: one partial per work-item, added on the host (a kernel of one region);
        // unrolled: one per work-group.
        let partials =
            (layout == ReduceLayout::Striped || unrolled).then(|| k.write::<f32>("partials"));
        let acc = var(0.0f32);
        let add = |i: Expr<u32>| match y {
            Some(y) => acc.set(acc.get() + x.at(i) * y.at(i)),
            None => acc.set(acc.get() + x.at(i)),
        };
        match layout {
            ReduceLayout::Chunk if unrolled => {
                let chunk = (x.len() + global_size(0) - 1u32) / global_size(0);
                let start = (global_id(0) * chunk).min(x.len());
                let end = (start + chunk).min(x.len());
                let main_end = start + (end - start) / 16u32 * 16u32;
                for_step(start, main_end, 16u32, |i: Expr<u32>| {
                    for j in 0..16u32 {
                        add(i + j);
                    }
                });
                for_range(main_end, end, add);
            }
            ReduceLayout::Chunk => {
                let chunk = (x.len() + global_size(0) - 1u32) / global_size(0);
                let start = global_id(0) * chunk;
                for_range(start.min(x.len()), (start + chunk).min(x.len()), add);
            }
            ReduceLayout::Striped => {
                // The group's stretch, its work-items side by side in each step.
                let chunk = (x.len() + num_groups(0) - 1u32) / num_groups(0);
                let chunk = (chunk + local_size(0) - 1u32) / local_size(0) * local_size(0);
                let start = group_id(0) * chunk;
                let end = (start + chunk).min(x.len());
                for_step(start + local_id(0), end, local_size(0), add);
            }
            ReduceLayout::GridStride => {
                // Work-item g adds elements g, g + G, g + 2G, ... (G = global size), so
                // consecutive work-items read consecutive elements.
                for_step(global_id(0), x.len(), global_size(0), add);
            }
        }
        match partials {
            Some(p) if unrolled => {
                let total = group_reduce_add(acc.get());
                if_(local_id(0).eq(0u32), || p.set(group_id(0), total));
            }
            Some(p) => p.set(global_id(0), acc.get()),
            None => {
                k.gather_add(acc.get());
            }
        }
    })?;
    let local = match layout {
        ReduceLayout::Chunk => group_size(q.device()).min(CPU_REDUCE_GROUP),
        ReduceLayout::Striped => CPU_STRIPED_GROUP,
        ReduceLayout::GridStride => group_size(q.device()),
    };
    let units = (q.device().info().compute_units as usize).max(1);
    let groups = n.div_ceil(local).min(units * REDUCE_GROUPS_PER_UNIT).max(1);
    let range = NdRange::new(groups * local).local(local);
    let xb = Buffer::from_slice(q, x)?;
    let yb = Buffer::from_slice(q, y)?;
    let pb = match layout {
        _ if unrolled => Some(Buffer::<f32>::new(q, groups)?),
        ReduceLayout::Striped => Some(Buffer::<f32>::new(q, range.global_size()[0])?),
        _ => None,
    };

    let baseline = |build| -> f32 {
        match which {
            Reduction::Dot => rayon_dot(build, x, y),
            Reduction::Sum | Reduction::SumUnrolled => rayon_sum(build, x),
        }
    };
    // strata's sums, checked against the baseline's after the runs.
    let mut sums = Vec::with_capacity(reps + 1);
    let (strata_s, baseline_s, avx2_s, want) = builds::alternating(
        reps,
        || -> Result<f64, BenchError> {
            let t = Instant::now();
            let got = match &pb {
                Some(pb) => {
                    match which {
                        Reduction::Dot => k.launch(q, range, args![&xb, &yb, pb])?,
                        Reduction::Sum | Reduction::SumUnrolled => {
                            k.launch(q, range, args![&xb, pb])?
                        }
                    };
                    q.read(pb)?.iter().sum::<f32>()
                }
                None => {
                    let run = match which {
                        Reduction::Dot => k.enqueue(q, range, args![&xb, &yb], &[])?,
                        Reduction::Sum | Reduction::SumUnrolled => {
                            k.enqueue(q, range, args![&xb], &[])?
                        }
                    };
                    let total: Gathered<f32> = run.gather::<f32>(0)?;
                    total.get()?
                }
            };
            let dt = t.elapsed().as_secs_f64();
            sums.push(got);
            Ok(dt)
        },
        |build, want: &mut f32| -> Result<f64, BenchError> {
            let t = Instant::now();
            *want = std::hint::black_box(baseline(build));
            Ok(t.elapsed().as_secs_f64())
        },
        |&fast, &want| avx2_close(name, fast, want),
    )?;
    let mut worst = 0.0f64;
    for got in sums {
        worst = worst.max(check_close(name, got, want)?);
    }
    let (baseline, avx2_s) = match cuda {
        Some(b) => {
            let ys = (which == Reduction::Dot).then_some(y);
            let (s, base) = b.reduce(x, ys, reps)?;
            check_close(name, base, want).map_err(|e| BenchError::WrongResult {
                bench: name,
                detail: format!("the CUDA baseline is wrong: {e}"),
            })?;
            (("cuda", s), None)
        }
        None => (("rayon", baseline_s), avx2_s),
    };
    Ok(result(
        q,
        name,
        n,
        reps,
        range,
        if which == Reduction::Dot { 8 } else { 4 } * n as u64,
        strata_s,
        baseline,
        worst,
    )
    .with_avx2(avx2_s))
}

#[cfg(test)]
mod tests {
    use super::alternate;
    use std::cell::RefCell;

    /// The runs take turns (each warmed up once, then one of each per round) and each gets
    /// the median of its own times, not of the warm-up.
    #[test]
    fn alternate_takes_turns_and_returns_each_median() {
        let order = RefCell::new(Vec::new());
        let run = |side: usize, times: Vec<f64>| {
            let order = &order;
            let mut times = times.into_iter();
            move || -> Result<f64, ()> {
                order.borrow_mut().push(side);
                Ok(times.next().expect("a time for every run"))
            }
        };
        let mut a = run(0, vec![100.0, 3.0, 1.0, 2.0]);
        let mut b = run(1, vec![100.0, 10.0, 30.0, 20.0]);
        let mut c = run(2, vec![100.0, 5.0, 6.0, 7.0]);
        let [sa, sb, sc] = alternate(3, [&mut a, &mut b, &mut c]).unwrap();
        assert_eq!((sa, sb, sc), (2.0, 20.0, 6.0));
        assert_eq!(*order.borrow(), [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
        // A failed run fails the whole measurement.
        let mut ok = || -> Result<f64, &str> { Ok(1.0) };
        let mut fails = || -> Result<f64, &str> { Err("no") };
        assert_eq!(alternate(2, [&mut ok, &mut fails]), Err("no"));
    }
}
