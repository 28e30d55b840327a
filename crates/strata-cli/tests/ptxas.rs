//! `ptxas`, NVIDIA's PTX assembler, on the kernels whose speed matters: every kernel `strata
//! bench` builds, every pattern kernel with the staging GPUs get (scans, reductions, sorts,
//! selections, element-wise maps), and every conformance kernel with inline PTX (the `f16`
//! conversions of `cuda_f16.cuh`, which NVRTC passes through unassembled). Each is compiled
//! by NVRTC to PTX for sm_90 and sm_80 and assembled with `ptxas -v`; the test asserts what
//! can regress without failing any other test: no spill stores or loads, no stack frame (local
//! memory) where none is expected, and registers within the budget of [`BUDGETS`]. No GPU is
//! needed.
//!
//! `ptxas` is found as `STRATA_PTXAS`, on `PATH`, or in `/usr/local/cuda/bin`
//! (scripts/test.sh installs the `nvidia-cuda-nvcc-cu12` wheel, which ships it). Missing, it
//! is a failure when `STRATA_REQUIRE` names `ptxas` (scripts/test.sh sets it), and the test
//! is skipped otherwise; so is NVRTC, with `nvrtc`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use strata::patterns::*;
use strata::prelude::*;
use strata::Kernel;
use strata_cli::bench::{self, BenchOptions};

/// Register budgets, the most registers a kernel may use on sm_90 and on sm_80, per
/// `group/kernel` (groups: `bench` for `strata bench`'s kernels, the pattern calls of
/// [`pattern_calls`] by their names). A budget is the measured count rounded up to a multiple
/// of 8, the unit in which an SM allocates a work-item's registers: within it, occupancy is
/// the same. The third column is the stack frame (local memory) a kernel may have, in bytes.
///
/// **Updating**: when a change adds or renames kernels or changes their registers on purpose,
/// the failure message prints the whole measured table in this form: paste it here, and update
/// the register/spill table in docs/BENCHMARKS.md ("ptxas: registers and spills") in the same
/// commit. A budget raised only to make the test pass is a regression: say why in the commit.
#[rustfmt::skip]
const BUDGETS: &[(&str, u32, u32)] = &[
    ("argmin_f32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("bench/bench_blur", 32, 0), // sm_90 28, sm_80 26
    ("bench/bench_dot", 32, 0), // sm_90 32, sm_80 32
    ("bench/bench_histogram", 16, 0), // sm_90 10, sm_80 10
    ("bench/bench_mandelbrot", 16, 0), // sm_90 14, sm_80 14
    ("bench/bench_matmul", 32, 0), // sm_90 32, sm_80 32
    ("bench/bench_nbody", 40, 0), // sm_90 40, sm_80 32
    ("bench/bench_saxpy", 16, 0), // sm_90 10, sm_80 10
    ("bench/bench_sum", 32, 0), // sm_90 32, sm_80 32
    ("bench/bench_sum_unrolled", 32, 0), // sm_90 32, sm_80 32
    ("bench/bench_vadd", 16, 0), // sm_90 12, sm_80 12
    ("bench/empty", 16, 0), // sm_90 10, sm_80 8
    ("bench/field_add", 16, 0), // sm_90 12, sm_80 12
    ("bench/field_divergence", 24, 0), // sm_90 18, sm_80 17
    ("bench/field_gradient_x", 16, 0), // sm_90 12, sm_80 12
    ("bench/field_gradient_y", 16, 0), // sm_90 12, sm_80 12
    ("bench/field_map", 16, 0), // sm_90 13, sm_80 13
    ("bench/field_rof_update", 24, 0), // sm_90 19, sm_80 19
    ("bench/field_sub", 24, 0), // sm_90 21, sm_80 20
    ("bench/field_zip_map", 16, 0), // sm_90 11, sm_80 11
    ("bench/sgemm_128x128x16_8x8", 136, 0), // sm_90 132, sm_80 128
    ("bench/sgemm_128x128x8_8x16", 240, 0), // sm_90 233, sm_80 226
    ("bench/sgemm_128x128x8_8x8", 128, 0), // sm_90 125, sm_80 128
    ("bench/sgemm_128x128x8_8x8_g1", 128, 0), // sm_90 128, sm_80 128
    ("bench/sgemm_128x64x8_8x8", 136, 0), // sm_90 130, sm_80 128
    ("bench/sgemm_64x64x8_8x8", 136, 0), // sm_90 132, sm_80 128
    ("dot_f32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("filter_u32/pattern_filter", 16, 0), // sm_90 12, sm_80 12
    ("filter_u32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("filter_u32/pattern_scan", 32, 0), // sm_90 32, sm_80 32
    ("histogram_u32/pattern_histogram", 24, 0), // sm_90 21, sm_80 19
    ("max_i32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("partition_f32/pattern_partition", 24, 0), // sm_90 18, sm_80 14
    ("partition_f32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("partition_f32/pattern_scan", 32, 0), // sm_90 32, sm_80 32
    ("reduce_by_key_u32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("reduce_by_key_u32/pattern_reduce_runs", 32, 0), // sm_90 32, sm_80 32
    ("reduce_by_key_u32/pattern_run_starts", 32, 0), // sm_90 28, sm_80 20
    ("reduce_by_key_u32/pattern_scan", 32, 0), // sm_90 32, sm_80 32
    ("reduce_op_u32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("saxpy_f32/pattern_for_each", 16, 0), // sm_90 13, sm_80 13
    ("scan_lookback_add_f32/pattern_scan_lookback", 40, 0), // sm_90 40, sm_80 40
    ("scan_lookback_add_u32/pattern_scan_lookback", 48, 0), // sm_90 40, sm_80 48
    ("scan_lookback_excl_add_u32/pattern_scan_lookback", 40, 0), // sm_90 40, sm_80 40
    ("scan_lookback_max_i32/pattern_scan_lookback", 48, 0), // sm_90 40, sm_80 48
    ("scan_lookback_op_u32/pattern_scan_lookback", 40, 0), // sm_90 40, sm_80 40
    ("scan_multipass_add_u32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("scan_multipass_add_u32/pattern_scan", 32, 0), // sm_90 32, sm_80 32
    ("sort_f32/pattern_sort_downsweep", 80, 0), // sm_90 64, sm_80 80
    ("sort_f32/pattern_sort_scan", 32, 0), // sm_90 32, sm_80 32
    ("sort_f32/pattern_sort_upsweep", 48, 0), // sm_90 47, sm_80 48
    ("sort_f32/pattern_transform", 16, 0), // sm_90 16, sm_80 14
    ("sort_pairs_u32/pattern_sort_downsweep", 64, 0), // sm_90 54, sm_80 64
    ("sort_pairs_u32/pattern_sort_scan", 32, 0), // sm_90 32, sm_80 32
    ("sort_pairs_u32/pattern_sort_upsweep", 48, 0), // sm_90 48, sm_80 48
    ("sort_u32/pattern_sort_downsweep", 80, 0), // sm_90 62, sm_80 80
    ("sort_u32/pattern_sort_scan", 32, 0), // sm_90 32, sm_80 32
    ("sort_u32/pattern_sort_upsweep", 48, 0), // sm_90 48, sm_80 48
    ("sort_u32/pattern_transform", 16, 0), // sm_90 16, sm_80 14
    ("sort_u64/pattern_sort_downsweep", 64, 0), // sm_90 54, sm_80 64
    ("sort_u64/pattern_sort_scan", 32, 0), // sm_90 32, sm_80 32
    ("sort_u64/pattern_sort_upsweep", 48, 0), // sm_90 47, sm_80 48
    ("sort_u64/pattern_transform", 16, 0), // sm_90 15, sm_80 13
    ("sum_f32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("sum_u32/pattern_reduce", 32, 0), // sm_90 32, sm_80 32
    ("vadd_f32/pattern_transform", 16, 0), // sm_90 14, sm_80 14
];

/// The staging a CUDA device gets by default (`Staging::for_device` of an H100: 256
/// work-items, 132 SMs), built on the interpreter, whose limits allow it.
fn gpu_staging() -> Staging {
    Staging {
        group_size: 256,
        items_per_thread: 4,
        max_groups: 1024,
        layout: Layout::Strided,
        reduce_layout: Layout::Strided,
        scan_items_per_thread: 16,
    }
}

/// The sort staging of GPUs (`SortStaging` of a GPU device).
fn gpu_sort_staging() -> SortStaging {
    SortStaging {
        method: SortMethod::Tiles,
        digit_bits: 8,
        keys_per_thread: 16,
        group_size: 256,
        max_groups: 1024,
    }
}

/// Whether `STRATA_REQUIRE` names `what`.
fn required(what: &str) -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == what))
}

/// The `ptxas` to run, or `None` (skip) where it is missing and not required.
fn ptxas() -> Option<PathBuf> {
    let candidates = std::env::var_os("STRATA_PTXAS")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::var_os("PATH").into_iter().flat_map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("ptxas"))
                .collect::<Vec<_>>()
        }))
        .chain([PathBuf::from("/usr/local/cuda/bin/ptxas")]);
    let mut tried = Vec::new();
    for c in candidates {
        if Command::new(&c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(c);
        }
        tried.push(c.display().to_string());
    }
    assert!(
        !required("ptxas"),
        "STRATA_REQUIRE names ptxas, but none runs (set STRATA_PTXAS, or `pip install \
         nvidia-cuda-nvcc-cu12` as scripts/test.sh does); tried: {}",
        tried.join(", ")
    );
    eprintln!("skipped: no ptxas (set STRATA_PTXAS or install nvidia-cuda-nvcc-cu12)");
    None
}

/// Whether NVRTC loads; fails when it is required and does not.
fn nvrtc() -> bool {
    match strata::cuda::nvrtc_version() {
        Ok(_) => true,
        Err(why) => {
            assert!(!required("nvrtc"), "STRATA_REQUIRE names nvrtc, but: {why}");
            eprintln!("skipped: NVRTC cannot be loaded: {why}");
            false
        }
    }
}

/// What `ptxas -v` says about one kernel on one architecture.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Usage {
    registers: u32,
    stack: u32,
    spill_stores: u32,
    spill_loads: u32,
    shared: u32,
}

/// Where the PTX and cubins of the test `test` go: under `STRATA_PTXAS_KEEP` (kept, for
/// reading the PTX), or a temporary folder of this process.
fn work_dir(test: &str) -> PathBuf {
    std::env::var_os("STRATA_PTXAS_KEEP")
        .map_or_else(
            || std::env::temp_dir().join(format!("strata-ptxas-{}", std::process::id())),
            PathBuf::from,
        )
        .join(test)
}

/// The PTX of `k` for `sm_{arch}`, assembled by `ptxas -v`: the kernel's usage, and the PTX.
/// The files are named `{prefix}{kernel}-{arch}`, in the folder `prefix` of [`work_dir`].
fn assemble(ptxas: &PathBuf, prefix: &str, k: &Kernel, arch: u32) -> (Usage, String) {
    let generated = strata::codegen::cuda(k.valid_function()).expect("CUDA source");
    let ptx = strata::cuda::compile_ptx(k.name(), &generated, arch, &[])
        .unwrap_or_else(|e| panic!("NVRTC, {} for sm_{arch}: {e}", k.name()))
        .text;
    let dir = work_dir(prefix);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{prefix}{}-{arch}.ptx", k.name()));
    std::fs::write(&file, &ptx).unwrap();
    let out = Command::new(ptxas)
        .arg(format!("-arch=sm_{arch}"))
        .arg("-v")
        .arg("-o")
        .arg(dir.join(format!("{prefix}{}-{arch}.cubin", k.name())))
        .arg(&file)
        .output()
        .expect("run ptxas");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ptxas -arch=sm_{arch} rejects the PTX of {}:\n{text}\n{ptx}",
        k.name()
    );
    (parse(&text), ptx)
}

/// The number before `unit` in `line` (`"0 bytes stack frame"` gives 0 for `"bytes stack"`).
fn number_before(line: &str, unit: &str) -> Option<u32> {
    let at = line.find(unit)?;
    line[..at].split_whitespace().last()?.parse().ok()
}

/// Parses `ptxas -v` for a PTX file of one entry function.
fn parse(text: &str) -> Usage {
    let mut u = Usage::default();
    let mut seen = false;
    for line in text.lines() {
        if let Some(n) = number_before(line, "bytes stack frame") {
            u.stack = n;
            u.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
            u.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
        }
        if let Some(n) = number_before(line, "registers") {
            u.registers = n;
            seen = true;
            u.shared = number_before(line, "bytes smem").unwrap_or(0);
            // Local memory not in the stack frame (`N bytes lmem`) counts as stack.
            u.stack = u.stack.max(number_before(line, "bytes lmem").unwrap_or(0));
        }
    }
    assert!(seen, "no register count in the ptxas output:\n{text}");
    u
}

/// The pattern calls whose kernels are checked, by group name, each run on a small input with
/// the GPU staging (the kernels' shape does not depend on the input's length).
fn pattern_calls(ex: &Exec) -> Vec<(&'static str, Vec<Kernel>)> {
    let n = 5000usize;
    let u: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let f: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25 - 7.0).collect();
    let i: Vec<i32> = u.iter().map(|&x| x as i32).collect();
    let w: Vec<u64> = u.iter().map(|&x| (x as u64) << 17 ^ x as u64).collect();
    let du = DeviceVec::from_slice(ex, &u).unwrap();
    let df = DeviceVec::from_slice(ex, &f).unwrap();
    let di = DeviceVec::from_slice(ex, &i).unwrap();
    let look = ex.with_scan_algorithm(ScanAlgorithm::LookBack).unwrap();
    let multi = ex.with_scan_algorithm(ScanAlgorithm::MultiPass).unwrap();
    type Call<'a> = Box<dyn Fn() + 'a>;
    let calls: Vec<(&'static str, Call)> = vec![
        (
            "vadd_f32",
            Box::new(|| {
                zip(&df, &df)
                    .map(|(a, b)| a + b)
                    .collect::<f32>(ex)
                    .unwrap();
            }),
        ),
        (
            "saxpy_f32",
            Box::new(|| {
                zip(&df, df.slots())
                    .for_each(ex, |(x, y)| y.set(y.get() + x * 2.5f32))
                    .unwrap();
            }),
        ),
        (
            "sum_f32",
            Box::new(|| {
                df.sum::<f32>(ex).unwrap();
            }),
        ),
        (
            "dot_f32",
            Box::new(|| {
                zip(&df, &df).map(|(a, b)| a * b).sum::<f32>(ex).unwrap();
            }),
        ),
        (
            "sum_u32",
            Box::new(|| {
                du.sum::<u32>(ex).unwrap();
            }),
        ),
        (
            "max_i32",
            Box::new(|| {
                di.max::<i32>(ex).unwrap();
            }),
        ),
        (
            "argmin_f32",
            Box::new(|| {
                df.argmin::<f32>(ex).unwrap();
            }),
        ),
        (
            "reduce_op_u32",
            Box::new(|| {
                du.reduce(ex, 0u32, |a, b| (a ^ b) + 1u32).unwrap();
            }),
        ),
        (
            "scan_lookback_add_u32",
            Box::new(|| {
                du.inclusive_scan(&look, |a, b| a + b).unwrap();
            }),
        ),
        (
            "scan_lookback_excl_add_u32",
            Box::new(|| {
                du.exclusive_scan(&look, 0u32, |a, b| a + b).unwrap();
            }),
        ),
        (
            "scan_lookback_add_f32",
            Box::new(|| {
                df.inclusive_scan(&look, |a, b| a + b).unwrap();
            }),
        ),
        (
            "scan_lookback_max_i32",
            Box::new(|| {
                di.inclusive_scan(&look, |a, b| a.max(b)).unwrap();
            }),
        ),
        (
            "scan_lookback_op_u32",
            Box::new(|| {
                du.inclusive_scan(&look, |a, b| (a ^ b) + 1u32).unwrap();
            }),
        ),
        (
            "scan_multipass_add_u32",
            Box::new(|| {
                du.inclusive_scan(&multi, |a, b| a + b).unwrap();
            }),
        ),
        (
            "filter_u32",
            Box::new(|| {
                du.filter(ex, |x| (x & 1u32).eq(0u32)).unwrap();
            }),
        ),
        (
            "partition_f32",
            Box::new(|| {
                df.partition(ex, |x| x.lt(0.0f32)).unwrap();
            }),
        ),
        (
            "histogram_u32",
            Box::new(|| {
                (&du).map(|x| x & 255u32).histogram(ex, 256).unwrap();
            }),
        ),
        (
            "reduce_by_key_u32",
            Box::new(|| {
                reduce_by_key(ex, (&du).map(|x| x >> 28u32), &du, |a, b| a + b).unwrap();
            }),
        ),
        (
            "sort_u32",
            Box::new(|| {
                du.sorted::<u32>(ex).unwrap();
            }),
        ),
        (
            "sort_f32",
            Box::new(|| {
                df.sorted::<f32>(ex).unwrap();
            }),
        ),
        (
            "sort_u64",
            Box::new(|| {
                DeviceVec::from_slice(ex, &w)
                    .unwrap()
                    .sorted::<u64>(ex)
                    .unwrap();
            }),
        ),
        (
            "sort_pairs_u32",
            Box::new(|| {
                let k = du.to_owned_vec().unwrap();
                let v = du.to_owned_vec().unwrap();
                sort_by_key(ex, &k, &v).unwrap();
            }),
        ),
    ];
    calls
        .into_iter()
        .map(|(name, call)| (name, strata::capture_kernels(call).1))
        .collect()
}

/// Every kernel `strata bench` builds, captured while it runs at a small size on the CPU
/// backend: the benchmarks' own kernels, which do not depend on the device.
fn bench_kernels() -> Vec<Kernel> {
    let cpu = Device::from_spec("cpu").unwrap();
    let opts = BenchOptions {
        size: 4096,
        reps: 1,
        filter: None,
    };
    let (r, kernels) = strata::capture_kernels(|| bench::run(&cpu, &opts));
    r.unwrap_or_else(|e| panic!("strata bench on the CPU backend: {e}"));
    // The pattern rows' kernels, built here with the CPU backend's staging (tiles too large for
    // a GPU's shared memory), are checked with the GPU staging in [`pattern_calls`].
    kernels
        .into_iter()
        .filter(|k| !k.name().starts_with("pattern_"))
        .collect()
}

/// Assembles every kernel of the benchmarks and the patterns for sm_90 and sm_80 and holds
/// them to [`BUDGETS`]: no spills, no unexpected stack frame, registers within budget.
#[test]
fn bench_and_pattern_kernels_fit_their_register_budgets() {
    let Some(ptxas) = ptxas() else { return };
    if !nvrtc() {
        return;
    }
    let q = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    let ex = Exec::new(&q)
        .with_staging(gpu_staging())
        .unwrap()
        .with_sort_staging(gpu_sort_staging())
        .unwrap();
    let mut groups: Vec<(String, Vec<Kernel>)> = vec![("bench".into(), bench_kernels())];
    groups.extend(
        pattern_calls(&ex)
            .into_iter()
            .map(|(g, ks)| (g.to_string(), ks)),
    );

    // group/kernel -> (registers sm_90, sm_80, stack, spills, shared), the largest of the
    // kernels of that name (a group may build one kernel name for several element types).
    let mut measured: BTreeMap<String, [u32; 5]> = BTreeMap::new();
    let mut seen_sources = BTreeSet::new();
    for (group, kernels) in &groups {
        assert!(!kernels.is_empty(), "{group} built no kernel");
        for k in kernels {
            let source = strata::codegen::cuda(k.valid_function()).unwrap().source;
            if !seen_sources.insert((group.clone(), source)) {
                continue;
            }
            let prefix = format!("{group}-");
            let (u90, _) = assemble(&ptxas, &prefix, k, 90);
            let (u80, _) = assemble(&ptxas, &prefix, k, 80);
            let m = measured
                .entry(format!("{group}/{}", k.name()))
                .or_insert([0; 5]);
            m[0] = m[0].max(u90.registers);
            m[1] = m[1].max(u80.registers);
            m[2] = m[2].max(u90.stack).max(u80.stack);
            m[3] =
                m[3].max(u90.spill_stores + u90.spill_loads + u80.spill_stores + u80.spill_loads);
            m[4] = m[4].max(u90.shared);
        }
    }

    let table: String = measured
        .iter()
        .map(|(key, m)| {
            let budget = m[0].max(m[1]).div_ceil(8) * 8;
            format!(
                "    ({key:?}, {budget}, {}), // sm_90 {}, sm_80 {}\n",
                m[2], m[0], m[1]
            )
        })
        .collect();
    eprintln!("measured (group/kernel, register budget, stack bytes):\n{table}");
    if std::env::var_os("STRATA_PTXAS_KEEP").is_none() {
        for group in groups.iter().map(|(g, _)| format!("{g}-")) {
            let _ = std::fs::remove_dir_all(work_dir(&group));
        }
        let _ = std::fs::remove_dir(work_dir(""));
    }
    let budgets: BTreeMap<&str, (u32, u32)> =
        BUDGETS.iter().map(|&(k, r, s)| (k, (r, s))).collect();
    let mut wrong = Vec::new();
    for (key, m) in &measured {
        if m[3] > 0 {
            wrong.push(format!("{key}: {} bytes of spill stores and loads", m[3]));
        }
        match budgets.get(key.as_str()) {
            None => wrong.push(format!("{key}: not in BUDGETS")),
            Some(&(regs, stack)) => {
                if m[0] > regs || m[1] > regs {
                    wrong.push(format!(
                        "{key}: {} registers on sm_90, {} on sm_80; the budget is {regs}",
                        m[0], m[1]
                    ));
                }
                if m[2] > stack {
                    wrong.push(format!(
                        "{key}: a {} byte stack frame (local memory); {stack} expected",
                        m[2]
                    ));
                }
            }
        }
    }
    for key in budgets.keys() {
        if !measured.contains_key(*key) {
            wrong.push(format!("{key}: in BUDGETS but no longer built"));
        }
    }
    assert!(
        wrong.is_empty(),
        "ptxas:\n  {}\n\nIf the change is on purpose, replace BUDGETS in {} with the measured \
         table below and update docs/BENCHMARKS.md's ptxas table:\n{table}",
        wrong.join("\n  "),
        file!()
    );
}

/// The conformance kernels with inline PTX (the `f16` conversions NVRTC leaves to ptxas)
/// assemble for sm_90 and sm_80, and between them use every conversion `cuda_f16.cuh`
/// defines.
#[test]
fn inline_ptx_assembles() {
    let Some(ptxas) = ptxas() else { return };
    if !nvrtc() {
        return;
    }
    let cpu = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let (report, kernels) =
        strata::capture_kernels(|| strata_cli::conformance::run(&cpu, None, |_, _| {}));
    assert!(report.failed.is_empty(), "{}", report.summary());
    let forms = [
        "cvt.f32.f16",
        "cvt.rn.f16.f32",
        "cvt.f64.f16",
        "cvt.rn.f16.f64",
    ];
    let mut found: BTreeSet<&str> = BTreeSet::new();
    let mut assembled = 0;
    for k in &kernels {
        let source = strata::codegen::cuda(k.valid_function()).unwrap().source;
        if !source.contains("asm(\"cvt") {
            continue;
        }
        for arch in [90, 80] {
            let (u, ptx) = assemble(&ptxas, "f16-", k, arch);
            assert_eq!(u.spill_stores + u.spill_loads, 0, "{} spills", k.name());
            found.extend(forms.iter().copied().filter(|f| ptx.contains(f)));
        }
        assembled += 1;
    }
    eprintln!("{assembled} kernels with inline PTX assembled for sm_90 and sm_80");
    if std::env::var_os("STRATA_PTXAS_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(work_dir("f16-"));
        // The process's folder, once the other test has emptied it too.
        let _ = std::fs::remove_dir(work_dir(""));
    }
    assert!(assembled > 0, "no conformance kernel has inline PTX");
    for f in forms {
        assert!(found.contains(&f), "no kernel's PTX has `{f}`");
    }
}
