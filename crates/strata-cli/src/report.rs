//! The JSON lines `strata` prints with `--json`, one object per line, written (and read back)
//! through serde. The field names are the interface: scripts and `scripts/gpu-run.sh` read
//! them, so they change only by adding fields.
//!
//! - `strata devices --json`: a [`DeviceLine`] per device; with `--why`, an [`Unavailable`] per
//!   backend without devices and a [`Problem`] per device that could not be opened.
//! - `strata bench --json`: a [`BenchLine`] per benchmark, then on CUDA devices one
//!   [`GpuLimitsLine`], on CPU devices one [`HostLine`].
//! - `strata difftest --json`: one [`DifftestLine`] at the end.

use crate::bench::BenchResult;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use strata::DeviceInfo;

/// A device's property summary (`strata devices --json`): the fields of [`DeviceInfo`]
/// (`backend` by name, `spec` added, `max_constant_*` `null` where the device has no constant
/// address space), then each of its backend-specific facts ([`DeviceInfo::extra`]) as a field
/// of its own, its name in snake_case (`platform_version`, `compute_capability`) and its value
/// typed: a whole number as a number (`threads`, `warp_size`), `A x B x C` as an array of
/// numbers (`max_grid_size`), `extensions` as an array of strings, anything else (versions,
/// names) as a string. Every key is snake_case; the README lists them.
pub struct DeviceLine<'a>(pub &'a DeviceInfo);

/// A backend's name for a fact (`"platform version"`) in snake_case (`platform_version`).
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// A backend-specific fact's value as typed JSON (see [`DeviceLine`]).
pub fn typed_value(name: &str, value: &str) -> serde_json::Value {
    use serde_json::Value;
    let v = value.trim();
    if snake_case(name) == "extensions" {
        return Value::from(v.split_whitespace().collect::<Vec<_>>());
    }
    if let Ok(n) = v.parse::<u64>() {
        return Value::from(n);
    }
    let parts: Vec<&str> = v.split(" x ").map(str::trim).collect();
    if parts.len() > 1 {
        if let Ok(ns) = parts
            .iter()
            .map(|p| p.parse::<u64>())
            .collect::<Result<Vec<_>, _>>()
        {
            return Value::from(ns);
        }
    }
    Value::from(v)
}

impl Serialize for DeviceLine<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("spec", &d.spec())?;
        m.serialize_entry("backend", d.backend.name())?;
        m.serialize_entry("index", &d.index)?;
        m.serialize_entry("name", &d.name)?;
        m.serialize_entry("vendor", &d.vendor)?;
        m.serialize_entry("compute_units", &d.compute_units)?;
        m.serialize_entry("max_work_group_size", &d.max_work_group_size)?;
        m.serialize_entry("max_work_item_sizes", &d.max_work_item_sizes)?;
        m.serialize_entry("preferred_group_size", &d.preferred_group_size)?;
        m.serialize_entry("sub_group_size", &d.sub_group_size)?;
        m.serialize_entry("local_mem_size", &d.local_mem_size)?;
        m.serialize_entry("global_mem_size", &d.global_mem_size)?;
        m.serialize_entry("max_alloc_size", &d.max_alloc_size)?;
        m.serialize_entry("pitch_alignment", &d.pitch_alignment)?;
        m.serialize_entry("max_constant_buffer_size", &d.max_constant_buffer_size)?;
        m.serialize_entry("max_constant_args", &d.max_constant_args)?;
        m.serialize_entry("supports_f64", &d.supports_f64)?;
        m.serialize_entry("supports_f16", &d.supports_f16)?;
        m.serialize_entry("supports_int64_atomics", &d.supports_int64_atomics)?;
        for (k, v) in &d.extra {
            m.serialize_entry(&snake_case(k), &typed_value(k, v))?;
        }
        m.end()
    }
}

/// A backend with no devices here, and why (`strata devices --why --json`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Unavailable {
    /// `opencl` or `cuda`.
    pub backend: String,
    /// Why it has no devices.
    pub unavailable: String,
}

/// A device that could not be opened (`strata devices --why --json`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Problem {
    /// The backend whose device it is.
    pub backend: String,
    /// What went wrong.
    pub problem: String,
}

/// One benchmark's measurements: a [`BenchResult`] with its derived throughputs. Non-finite
/// numbers (the TFLOP/s of memory-bound benchmarks) are `null`, and so are the compile times
/// of the benchmarks that do not measure them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct BenchLine {
    /// Benchmark name.
    pub bench: String,
    /// Spec of the device the strata kernels ran on.
    pub device: String,
    /// Elements per vector (for `sgemm*`, the benchmark size asked for).
    pub n: usize,
    /// Timed repetitions.
    pub reps: usize,
    /// Work-group size of the strata launch.
    pub local_size: usize,
    /// Work-groups of the strata launch.
    pub groups: usize,
    /// Bytes the computation must move.
    pub bytes: u64,
    /// Floating-point operations (0 for memory-bound benchmarks).
    pub flops: u64,
    /// Median strata time, in seconds.
    pub strata_s: f64,
    /// strata's effective bandwidth, GB/s.
    pub strata_gbps: Option<f64>,
    /// strata's arithmetic throughput, TFLOP/s (`null` when `flops` is 0).
    pub strata_tflops: Option<f64>,
    /// The baseline's name (`rayon`, `cuda`, `cublas`).
    pub baseline: String,
    /// Median baseline time, in seconds.
    pub baseline_s: f64,
    /// The baseline's effective bandwidth, GB/s.
    pub baseline_gbps: Option<f64>,
    /// The baseline's arithmetic throughput, TFLOP/s.
    pub baseline_tflops: Option<f64>,
    /// `strata_s / baseline_s` (below 1: strata is faster).
    pub ratio: f64,
    /// Median time of the rayon baseline's AVX2+FMA build, seconds (`baseline_s` is its
    /// default build); `null` where the CPU lacks AVX2 or FMA, the baseline is not rayon or
    /// the benchmark has no such build; absent in older output.
    #[serde(default)]
    pub avx2_s: Option<f64>,
    /// `strata_s / avx2_s`.
    #[serde(default)]
    pub ratio_avx2: Option<f64>,
    /// Relative difference between the two results.
    pub rel_error: f64,
    /// Building and compiling the kernel when the device's kernel cache misses, seconds
    /// (the compute benchmarks; `null` for the others, absent in older output).
    #[serde(default)]
    pub compile_s: Option<f64>,
    /// Building it again and compiling it from the device's kernel cache, seconds.
    #[serde(default)]
    pub compile_cached_s: Option<f64>,
    /// For the `_tuned` pattern benchmarks, the tuned configuration and where it came from;
    /// absent for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuned: Option<String>,
}

/// `Some(x)` for a finite `x`: JSON has no infinity or NaN.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl From<&BenchResult> for BenchLine {
    fn from(r: &BenchResult) -> BenchLine {
        BenchLine {
            bench: r.bench.to_string(),
            device: r.device.clone(),
            n: r.n,
            reps: r.reps,
            local_size: r.local_size,
            groups: r.groups,
            bytes: r.bytes,
            flops: r.flops,
            strata_s: r.strata_s,
            strata_gbps: finite(r.strata_gbps()),
            strata_tflops: finite(r.strata_tflops()),
            baseline: r.baseline.to_string(),
            baseline_s: r.baseline_s,
            baseline_gbps: finite(r.baseline_gbps()),
            baseline_tflops: finite(r.baseline_tflops()),
            ratio: r.ratio,
            avx2_s: r.avx2_s.and_then(finite),
            ratio_avx2: r.ratio_avx2.and_then(finite),
            rel_error: r.rel_error,
            compile_s: r.compile_s.and_then(finite),
            compile_cached_s: r.compile_cached_s.and_then(finite),
            tuned: r.tuned.clone(),
        }
    }
}

/// How long a device takes to compile the conformance suite's kernels
/// ([`crate::bench::compute::suite_compile_times`]), as `strata bench --json` prints it after
/// the benchmarks when no filter is given or the filter is `compile`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SuiteCompileLine {
    /// Spec of the device.
    pub device: String,
    /// Distinct kernels compiled.
    pub compile_kernels: usize,
    /// Median seconds per kernel.
    pub compile_median_s: f64,
    /// 90th percentile, seconds.
    pub compile_p90_s: f64,
    /// Slowest kernel, seconds.
    pub compile_max_s: f64,
    /// Kernels the device cannot run (f16 on PoCL), not compiled.
    #[serde(default)]
    pub compile_unsupported: usize,
}

/// What bounds the benchmarks on a CUDA device ([`crate::bench::gpu_limits`]), and the warm
/// start of a ten-kernel program, as `strata bench --json` prints it after the benchmarks.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct GpuLimitsLine {
    /// The device's spec.
    pub device: String,
    /// Device-to-device copy bandwidth, GB/s.
    pub copy_gbps: f64,
    /// A launch of a cached kernel through strata, seconds.
    pub strata_launch_s: f64,
    /// A raw `cuLaunchKernel` of the same code, seconds.
    pub raw_launch_s: f64,
    /// A raw launch between two event records, seconds.
    pub raw_events_launch_s: f64,
    /// A blocking strata launch (launch and wait), seconds.
    pub strata_blocking_s: f64,
    /// A raw launch and `cuStreamSynchronize`, seconds.
    pub raw_blocking_s: f64,
    /// Ten kernels made ready in a fresh process with an empty disk cache, seconds.
    pub ten_kernels_cold_s: f64,
    /// The same from the disk cache, seconds.
    pub ten_kernels_warm_s: f64,
    /// That warm process from start to exit, seconds.
    pub warm_process_s: f64,
    /// cuBLAS's version and path, when it was loaded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cublas: Option<String>,
    /// Why cuBLAS could not be loaded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cublas_missing: Option<String>,
}

/// The host's core-to-core handover around a CPU device's benchmarks
/// ([`crate::bench::core_round_trip_ns`]), as `strata bench --json` prints it after them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct HostLine {
    /// The device's spec.
    pub device: String,
    /// A cache line from one thread to another and back before the benchmarks, nanoseconds
    /// (`null` where two threads could not run side by side).
    pub round_trip_before_ns: Option<f64>,
    /// The same after the benchmarks.
    pub round_trip_after_ns: Option<f64>,
}

/// The outcome of `strata difftest --json`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct DifftestLine {
    /// The device compared with the interpreter (the reference).
    pub device: String,
    /// The seed the programs were generated from.
    pub seed: u64,
    /// The index of the first program run (`--from`; 0 when absent in older output).
    #[serde(default)]
    pub first: usize,
    /// Programs run.
    pub programs: usize,
    /// Programs whose every output agreed.
    pub passed: usize,
    /// Programs with at least one differing output.
    pub failed_programs: usize,
    /// Kernels compiled (programs are batched into kernels).
    pub kernels: usize,
    /// Output values compared.
    pub compared: usize,
    /// Each mismatch, with its program.
    pub failures: Vec<String>,
}

/// `value` as one line of JSON.
pub fn line(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("the report types serialize to JSON")
}

/// Reads the [`BenchLine`]s of `strata bench --json` output (other lines, such as the
/// [`GpuLimitsLine`], are skipped); fails on a line that is not JSON, naming it.
pub fn read_bench_lines(text: &str) -> Result<Vec<BenchLine>, String> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(l).map_err(|e| format!("line {}: not JSON: {e}", i + 1))?;
        if v.get("bench").is_some() {
            out.push(
                serde_json::from_value(v)
                    .map_err(|e| format!("line {}: not a benchmark line: {e}", i + 1))?,
            );
        }
    }
    Ok(out)
}

/// `rows` as aligned text, one line each: the first column left-aligned, the others
/// right-aligned, columns two spaces apart (the tables of `strata bench` and `strata tune`).
pub fn aligned<R: AsRef<[String]>>(rows: &[R]) -> String {
    let mut width: Vec<usize> = Vec::new();
    for row in rows {
        for (i, c) in row.as_ref().iter().enumerate() {
            if width.len() <= i {
                width.push(0);
            }
            width[i] = width[i].max(c.len());
        }
    }
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .as_ref()
            .iter()
            .zip(&width)
            .enumerate()
            .map(|(i, (c, &w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
