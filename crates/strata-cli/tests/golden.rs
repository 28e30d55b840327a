//! Golden files of generated code: the OpenCL C and the CUDA C++ of every conformance kernel
//! and every example kernel, compared with `tests/golden/opencl/*.cl` and
//! `tests/golden/cuda/*.cu`. Every kernel is also compiled by every OpenCL device present, and
//! by NVRTC to PTX for sm_90 and sm_80 (no GPU needed). Set `STRATA_BLESS=1` to rewrite the
//! files (and delete stale ones) after an intended change of the generated code; review the
//! diff like any other change.
//!
//! The kernels are collected with `strata::capture_kernels` while the conformance suite and the
//! examples run; the patterns' kernels come from running every algorithm once on the
//! interpreter (`every_pattern_on_cpu`), SGEMM's from its default tiling. The checked variants of
//! the planted-bug and matmul kernels (as checked mode instruments them) are in
//! `tests/golden/opencl-checked/` and `cuda-checked/`. `sort_kernels_ptx_for_gpus` checks the
//! PTX of the sort kernels staged for GPUs: no local memory, atomics in shared memory.
//!
//! NVRTC missing is a failure when `STRATA_REQUIRE` names `nvrtc` (the README's test command
//! installs NVRTC and sets it), and skips the NVRTC test otherwise.

#[path = "../../strata-examples/examples/matmul.rs"]
#[allow(dead_code)]
mod matmul;
#[path = "../../strata-examples/examples/patterns.rs"]
#[allow(dead_code)]
mod patterns;
#[path = "../../strata-examples/examples/reduce.rs"]
#[allow(dead_code)]
mod reduce;
#[path = "../../strata-examples/examples/saxpy.rs"]
#[allow(dead_code)]
mod saxpy;
#[path = "../../strata-examples/examples/showcase.rs"]
#[allow(dead_code)]
mod showcase;

mod golden_spirv;

use std::collections::BTreeMap;
use std::path::PathBuf;
use strata::{capture_kernels, codegen, BackendKind, Device, Kernel, Queue};
use strata_cli::conformance;

/// Every kernel of the conformance suite and the examples, named uniquely and stably.
fn all_kernels() -> BTreeMap<String, Kernel> {
    let cpu = Device::from_spec("interp").expect("the interpreter is always there");
    let queue = Queue::new(&cpu).expect("queue");
    let ((), kernels) = capture_kernels(|| {
        let report = conformance::run(&queue, None, |_, _| {});
        assert!(
            report.failed.is_empty(),
            "conformance failed on cpu: {:?}",
            report.failed
        );
        saxpy::saxpy_on_cpu();
        reduce::reductions_on_cpu();
        matmul::matmuls_on_cpu();
        showcase::showcase_on_cpu();
        patterns::patterns_on_cpu();
        every_pattern_on_cpu();
        // The GPU tiling of the library's SGEMM (the example runs a small one); the benchmark's
        // other tilings are compiled by strata/tests/blas.rs.
        strata::blas::Sgemm::new(strata::blas::SgemmConfig::DEFAULT).unwrap();
    });
    let mut named = BTreeMap::new();
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for k in kernels {
        let texts = seen.entry(k.name().to_string()).or_default();
        if texts.iter().any(|t| t == k.ir_text()) {
            continue;
        }
        texts.push(k.ir_text().to_string());
        let name = if texts.len() == 1 {
            k.name().to_string()
        } else {
            format!("{}.{}", k.name(), texts.len())
        };
        named.insert(name, k);
    }
    named
}

/// Every algorithm of the patterns layer once, on the interpreter, so that their kernels are
/// golden files and compiled by every OpenCL device and by NVRTC like all others.
fn every_pattern_on_cpu() {
    use strata::patterns::*;
    use strata::prelude::*;
    let q = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    // Staged values that the CPU backend derives from the host (work-groups per core) are
    // fixed here, so that the golden files do not depend on the machine that writes them.
    let ex = Exec::new(&q);
    let ex = ex
        .with_staging(Staging {
            max_groups: 64,
            layout: Layout::Strided,
            reduce_layout: Layout::Strided,
            ..ex.staging()
        })
        .unwrap();
    let ex = ex
        .with_sort_staging(SortStaging {
            max_groups: 64,
            ..ex.sort_staging()
        })
        .unwrap();
    let n = 300u32;
    let u: Vec<u32> = (0..n)
        .map(|i| i.wrapping_mul(2_654_435_761) % 1000)
        .collect();
    let du = DeviceVec::from_slice(&ex, &u).unwrap();
    let di =
        DeviceVec::from_slice(&ex, &u.iter().map(|&v| v as i32 - 500).collect::<Vec<_>>()).unwrap();
    let df =
        DeviceVec::from_slice(&ex, &u.iter().map(|&v| v as f32 * 0.5).collect::<Vec<_>>()).unwrap();
    let dl =
        DeviceVec::from_slice(&ex, &u.iter().map(|&v| v as u64 * 977).collect::<Vec<_>>()).unwrap();
    let idx = DeviceVec::from_slice(&ex, &(0..n).rev().collect::<Vec<_>>()).unwrap();
    zip(counting(0, n as usize), constant(3u32, n as usize))
        .enumerate()
        .map(|(i, (a, b))| i + a * b)
        .collect(&ex)
        .unwrap();
    zip3(&du, &di, &df)
        .map(|(a, b, c)| a.cast::<f32>() + b.cast::<f32>() * c)
        .rev()
        .strided(3)
        .collect(&ex)
        .unwrap();
    (&du).gather(&idx).skip(5).take(100).collect(&ex).unwrap();
    let out = DeviceVec::<u32>::zeroed(&ex, n as usize).unwrap();
    zip(&du, out.slots())
        .for_each(&ex, |(v, slot)| slot.set(v + 1u32))
        .unwrap();
    zip(&du, &du)
        .map(|(a, b)| a * b)
        .collect_async(&ex)
        .unwrap();
    du.sum(&ex).unwrap();
    df.min(&ex).unwrap();
    di.max(&ex).unwrap();
    du.argmin(&ex).unwrap();
    df.argmax(&ex).unwrap();
    du.count(&ex, |v| v.lt(500u32)).unwrap();
    du.any(&ex, |v| v.eq(999u32)).unwrap();
    di.all(&ex, |v| v.ge(0i32)).unwrap();
    di.reduce(&ex, 17, |a, b| a.max(b)).unwrap();
    di.inclusive_scan(&ex, |a, b| a + b).unwrap();
    di.exclusive_scan(&ex, 5, |a, b| a + b).unwrap();
    du.filter(&ex, |v| v.lt(30u32)).unwrap();
    du.partition(&ex, |v| (v % 3u32).eq(0u32)).unwrap();
    (&du).map(|v| v % 64u32).histogram(&ex, 64).unwrap();
    let keys = DeviceVec::from_slice(&ex, &u.iter().map(|v| v / 100).collect::<Vec<_>>()).unwrap();
    reduce_by_key(&ex, &keys, &di, |a, b| a + b).unwrap();
    du.sorted(&ex).unwrap();
    di.sorted(&ex).unwrap();
    df.sorted(&ex).unwrap();
    dl.sorted(&ex).unwrap();
    sort_by_key(&ex, &du, &df).unwrap();
    du.sort()
        .unwrap()
        .transform(|v| v * 2u32)
        .unwrap()
        .fill(7)
        .unwrap();
    di.exclusive_scan_in_place(0, |a, b| a + b).unwrap();
    // The look-back scan (the default on CUDA), forced here: with a built-in operator (the
    // work-group scan collective) and a user one (the scan in local memory), exclusive.
    let lb = ex
        .with_scan_algorithm(ScanAlgorithm::LookBack)
        .unwrap()
        .with_staging(Staging {
            group_size: 256,
            scan_items_per_thread: 16,
            ..ex.staging()
        })
        .unwrap();
    let big = DeviceVec::from_slice(&lb, &u.repeat(20)).unwrap();
    big.inclusive_scan(&lb, |a, b| a + b).unwrap();
    (&big)
        .map(|v| v.cast::<f32>())
        .exclusive_scan(&lb, 1.5, |a, b| a.max(b))
        .unwrap();
    // The sort as GPUs stage it: 256 work-items ranking 16 keys each (fewer with values or
    // 64-bit keys, to fit 48 KiB of local memory), 8-bit digits.
    let gpu = ex
        .with_sort_staging(SortStaging {
            method: SortMethod::Tiles,
            digit_bits: 8,
            keys_per_thread: 16,
            group_size: 256,
            max_groups: 1024,
        })
        .unwrap();
    du.sorted(&gpu).unwrap();
    dl.sorted(&gpu).unwrap();
    sort_by_key(&gpu, &du, &df).unwrap();
    // Onesweep as CUDA runs it when asked (forced here): the histogram of every digit, the
    // digit starts, one look-back pass per digit; keys alone, pairs, 64-bit keys, and a
    // descending sort (the inverted encoding).
    let onesweep = ex
        .with_sort_staging(SortStaging {
            method: SortMethod::Onesweep,
            digit_bits: 8,
            keys_per_thread: 16,
            group_size: 256,
            max_groups: 1024,
        })
        .unwrap();
    du.sorted(&onesweep).unwrap();
    dl.sorted(&onesweep).unwrap();
    sort_by_key(&onesweep, &du, &df).unwrap();
    sort_by_key_desc(&onesweep, &du, &df).unwrap();
}

fn golden_dir(dialect: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(dialect)
}

#[test]
fn opencl_golden_files() {
    golden_files(&codegen::OPENCL, "cl");
}

#[test]
fn cuda_golden_files() {
    golden_files(&codegen::CUDA, "cu");
}

/// The kernels whose checked-mode variants (`Kernel::checked_function`) have golden files
/// too, in `tests/golden/opencl-checked/` and `.../cuda-checked/`: the planted bugs of the
/// `checked/` conformance cases (every kind of instrumented access and the barrier-divergence
/// count) and the tiled matrix products (barriers in loops).
fn checked_kernels() -> BTreeMap<String, Kernel> {
    all_kernels()
        .into_iter()
        .filter(|(n, _)| {
            ["planted_", "checked_", "matmul_"]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .collect()
}

#[test]
fn opencl_checked_golden_files() {
    checked_golden_files(&codegen::OPENCL, "cl");
}

#[test]
fn cuda_checked_golden_files() {
    checked_golden_files(&codegen::CUDA, "cu");
}

fn checked_golden_files(dialect: &'static codegen::Dialect, ext: &str) {
    let kernels = checked_kernels();
    assert!(
        kernels.len() >= 12,
        "expected the planted bugs, got {}",
        kernels.len()
    );
    let checked: BTreeMap<String, std::sync::Arc<strata::ir::ValidFunction>> = kernels
        .iter()
        .map(|(n, k)| (n.clone(), k.checked_function().expect("checked variant")))
        .collect();
    compare_golden(
        checked.iter().map(|(n, f)| (n, &**f)).collect(),
        &format!("{}-checked", dialect.key),
        dialect,
        ext,
    );
    // Compiled by every OpenCL device / by NVRTC, like the plain kernels.
    let mut failures = Vec::new();
    if dialect.key == codegen::OPENCL.key {
        for d in strata::devices()
            .into_iter()
            .filter(|d| d.info().backend == BackendKind::OpenCl)
        {
            let d = d.checked();
            for (name, k) in &kernels {
                if let Err(e) = d.compile(k) {
                    failures.push(format!("{name} on {}: {e}", d.spec()));
                }
            }
        }
    } else if strata::cuda::nvrtc_version().is_ok() {
        for (name, f) in &checked {
            let generated = codegen::cuda(f).expect("CUDA source");
            for arch in NVRTC_ARCHS {
                if let Err(e) = strata::cuda::compile_ptx(name, &generated, arch, &[]) {
                    failures.push(format!("{name} for sm_{arch}: {e}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} checked kernel(s) failed to compile:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn golden_files(dialect: &'static codegen::Dialect, ext: &str) {
    let kernels = all_kernels();
    assert!(
        kernels.len() > 100,
        "expected the conformance suite's kernels, got {}",
        kernels.len()
    );
    compare_golden(
        kernels
            .iter()
            .map(|(n, k)| (n, k.valid_function()))
            .collect(),
        dialect.key,
        dialect,
        ext,
    );
}

/// Compares (or with `STRATA_BLESS=1` writes) the generated source of `kernels` with the
/// files of `tests/golden/<dir>/`.
fn compare_golden(
    kernels: BTreeMap<&String, &strata::ir::ValidFunction>,
    dir_name: &str,
    dialect: &'static codegen::Dialect,
    ext: &str,
) {
    let dir = golden_dir(dir_name);
    let bless = std::env::var("STRATA_BLESS").is_ok_and(|v| v == "1");
    let mut mismatches = Vec::new();
    for (name, f) in &kernels {
        let src = codegen::write(f, dialect)
            .unwrap_or_else(|e| panic!("{name} has no {} source: {e}", dialect.name))
            .source;
        let path = dir.join(format!("{name}.{ext}"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &src).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(old) if old == src => {}
            Ok(old) => {
                let line = old
                    .lines()
                    .zip(src.lines())
                    .position(|(a, b)| a != b)
                    .map_or(old.lines().count().min(src.lines().count()), |i| i);
                mismatches.push(format!(
                    "{name}.{ext} differs from line {}:\n  golden:    {}\n  generated: {}",
                    line + 1,
                    old.lines().nth(line).unwrap_or("<end>"),
                    src.lines().nth(line).unwrap_or("<end>")
                ));
            }
            Err(_) => mismatches.push(format!("{name}.{ext} is missing")),
        }
    }
    let stale: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .trim_end_matches(&format!(".{ext}"))
                        .to_string()
                })
                .filter(|n| !kernels.contains_key(n))
                .collect()
        })
        .unwrap_or_default();
    if bless {
        for n in &stale {
            std::fs::remove_file(dir.join(format!("{n}.{ext}"))).unwrap();
        }
        return;
    }
    for n in stale {
        mismatches.push(format!("{n}.{ext} has no kernel any more"));
    }
    assert!(
        mismatches.is_empty(),
        "{} golden file(s) out of date; if the change is intended, run `STRATA_BLESS=1 cargo test --test golden` and review the diff of tests/golden/{}:\n{}",
        mismatches.len(),
        dir_name,
        mismatches.join("\n")
    );
}

#[test]
fn every_kernel_compiles_on_every_opencl_device() {
    let kernels = all_kernels();
    let devices: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == BackendKind::OpenCl)
        .collect();
    let mut failures = Vec::new();
    for d in &devices {
        for (name, k) in &kernels {
            let r = d.compile(k);
            // A kernel using f16 on a device without it: the typed error, before compiling.
            if k.valid_function().info().uses_f16 && !d.info().supports_f16 {
                match r {
                    Err(strata::Error::Unsupported { reason, .. }) if reason.contains("f16") => {}
                    r => failures.push(format!(
                        "{name} on {}: expected the f16 error, got {r:?}",
                        d.info().spec()
                    )),
                }
            } else if let Err(e) = r {
                failures.push(format!("{name} on {}: {e}", d.info().spec()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} kernel(s) failed to compile:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Kernels whose PTX has an integer `abs` from NVIDIA's math library rather than from strata:
/// the double `tgamma` (CUDA 12.9) takes `abs.s32` of an exponent it then compares with 1023,
/// a value that is never the most negative integer, so the H100's `abs` hazard (below) cannot
/// reach it.
const LIBRARY_ABS: [&str; 1] = ["tgamma_f64"];

/// The architectures CI compiles for: the H100's, and the A100's as an older one.
const NVRTC_ARCHS: [u32; 2] = [90, 80];

#[test]
fn every_kernel_compiles_with_nvrtc() {
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "nvrtc"));
    let version = match strata::cuda::nvrtc_version() {
        Ok(v) => v,
        Err(why) => {
            assert!(!required, "STRATA_REQUIRE names nvrtc, but: {why}");
            eprintln!("skipped: NVRTC cannot be loaded: {why}");
            return;
        }
    };
    let kernels = all_kernels();
    let mut failures = Vec::new();
    let mut compiled = 0;
    for arch in NVRTC_ARCHS {
        for (name, k) in &kernels {
            let generated = codegen::cuda(k.valid_function()).expect("CUDA source");
            match strata::cuda::compile_ptx(name, &generated, arch, &[]) {
                Ok(ptx) => {
                    assert!(
                        ptx.text.contains(&format!(".target sm_{arch}"))
                            && ptx.text.contains(&format!(".entry {}", generated.entry)),
                        "{name}: the PTX for sm_{arch} lacks its target or entry point"
                    );
                    // On the H100 (2026-11-22), code consuming PTX `abs.s32`/`abs.s64` of the
                    // most negative value went wrong (ptxas treats the result as never
                    // negative); strata's `abs(MIN)` is `MIN`, so no integer `abs` may reach it.
                    if ptx.text.contains("abs.s") && !LIBRARY_ABS.contains(&name.as_str()) {
                        failures.push(format!(
                            "{name}: the PTX for sm_{arch} has an integer `abs` instruction"
                        ));
                    }
                    compiled += 1;
                }
                Err(e) => failures.push(format!("{name} for sm_{arch}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} kernel(s) failed to compile with NVRTC {}.{}:\n{}",
        failures.len(),
        version.0,
        version.1,
        failures.join("\n\n")
    );
    eprintln!(
        "NVRTC {}.{} ({}) compiled {compiled} kernels",
        version.0,
        version.1,
        strata::cuda::nvrtc_path().unwrap().display()
    );
}

/// The PTX of the sort's GPU kernels (the staging GPUs get by default) keeps what their speed
/// rests on: no local-memory stack frame (the keys a work-item ranks, indexed by unrolled
/// constants, stay in registers; a dynamically indexed private array would appear as a
/// `__local_depot`), the histograms counted with shared-memory atomics, and the ranking's
/// loads and stores in shared memory. Register counts and spills are decided later, by
/// `ptxas`; see docs/BENCHMARKS.md for those.
#[test]
fn sort_kernels_ptx_for_gpus() {
    use strata::patterns::*;
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "nvrtc"));
    if let Err(why) = strata::cuda::nvrtc_version() {
        assert!(!required, "STRATA_REQUIRE names nvrtc, but: {why}");
        eprintln!("skipped: NVRTC cannot be loaded: {why}");
        return;
    }
    let q = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    let gpu = SortStaging {
        method: SortMethod::Tiles,
        digit_bits: 8,
        keys_per_thread: 16,
        group_size: 256,
        max_groups: 1024,
    };
    let ex = Exec::new(&q).with_sort_staging(gpu).unwrap();
    let keys: Vec<u32> = (0..5000u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let ((), kernels) = capture_kernels(|| {
        let d = DeviceVec::from_slice(&ex, &keys).unwrap();
        d.sort().unwrap();
        let v = DeviceVec::from_slice(&ex, &keys).unwrap();
        sort_by_key(&ex, &d, &v).unwrap();
    });
    let mut checked = BTreeMap::new();
    for k in &kernels {
        let generated = codegen::cuda(k.valid_function()).expect("CUDA source");
        let ptx = strata::cuda::compile_ptx(k.name(), &generated, 90, &[])
            .unwrap_or_else(|e| panic!("{}: {e}", k.name()))
            .text;
        let name = k.name();
        assert!(
            !ptx.contains("__local_depot") && !ptx.contains(".local"),
            "{name} uses local memory (a private array not in registers)"
        );
        if name == "pattern_sort_upsweep" || name == "pattern_sort_downsweep" {
            assert!(
                ptx.contains("atom.shared.add.u32") || ptx.contains("red.shared.add.u32"),
                "{name} counts digits without shared-memory atomics"
            );
        }
        if name == "pattern_sort_downsweep" {
            for op in [
                "ld.shared",
                "st.shared",
                "bar.sync",
                "ld.global",
                "st.global",
            ] {
                assert!(ptx.contains(op), "{name} lacks {op}");
            }
        }
        *checked.entry(name.to_string()).or_insert(0) += 1;
    }
    for name in [
        "pattern_sort_upsweep",
        "pattern_sort_scan",
        "pattern_sort_downsweep",
    ] {
        assert!(checked.contains_key(name), "{name} was not captured");
    }
}

/// A kernel whose names the C writer must keep apart: buffer `a`, private array `a` (which
/// the writer renames `a_1`) and value `a` of id 1 (whose name is `a_1` too, unless the
/// writer claims every name in one place).
fn clashing_names() -> Kernel {
    use strata::builder::{global_id, private_array};
    Kernel::build("names_clash", |k| {
        let a = k.read::<f32>("a");
        let out = k.write::<f32>("out");
        let p = private_array::<f32>("a", 2);
        let i = global_id(0);
        let x = (a.at(i) * 2.0f32).named("a");
        p.set(0u32, x);
        p.set(1u32, x + 1.0f32);
        out.set(i, p.at(0u32) + p.at(1u32) * x);
    })
    .unwrap()
}

#[test]
fn generated_names_never_clash() {
    let k = clashing_names();
    let xs: Vec<f32> = (0..16).map(|i| i as f32 * 0.5).collect();
    let want: Vec<f32> = xs
        .iter()
        .map(|x| 2.0 * x + (2.0 * x + 1.0) * 2.0 * x)
        .collect();
    let opencl = codegen::opencl(k.valid_function()).expect("OpenCL source");
    let devices: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == BackendKind::OpenCl)
        .collect();
    for d in &devices {
        let q = Queue::new(d).unwrap();
        let a = strata::Buffer::from_slice(&q, &xs).unwrap();
        let out = strata::Buffer::<f32>::new(d, xs.len()).unwrap();
        let run = k.launch(&q, strata::NdRange::new(xs.len()), strata::args![&a, &out]);
        if let Err(e) = run {
            panic!("on {}: {e}\n{}", d.info().spec(), opencl.source);
        }
        assert_eq!(out.to_vec(&q).unwrap(), want, "on {}", d.info().spec());
    }
    if strata::cuda::nvrtc_version().is_ok() {
        let cuda = codegen::cuda(k.valid_function()).expect("CUDA source");
        if let Err(e) = strata::cuda::compile_ptx(k.name(), &cuda, 90, &[]) {
            panic!("NVRTC: {e}\n{}", cuda.source);
        }
    }
}
