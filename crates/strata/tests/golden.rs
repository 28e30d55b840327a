//! Golden files of generated code: the OpenCL C of every conformance kernel and every example
//! kernel, compared with `tests/golden/opencl/*.cl`, and compiled by every OpenCL device
//! present. Set `STRATA_BLESS=1` to rewrite the files (and delete stale ones) after an
//! intended change of the generated code; review the diff like any other change.

#[path = "../examples/matmul.rs"]
#[allow(dead_code)]
mod matmul;
#[path = "../examples/reduce.rs"]
#[allow(dead_code)]
mod reduce;
#[path = "../examples/saxpy.rs"]
#[allow(dead_code)]
mod saxpy;
#[path = "../examples/showcase.rs"]
#[allow(dead_code)]
mod showcase;

use std::collections::BTreeMap;
use std::path::PathBuf;
use strata::{capture_kernels, codegen, conformance, BackendKind, Device, Kernel, Queue};

/// Every kernel of the conformance suite and the examples, named uniquely and stably.
fn all_kernels() -> BTreeMap<String, Kernel> {
    let cpu = Device::from_spec("cpu").expect("the CPU backend is always there");
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

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/opencl")
}

#[test]
fn opencl_golden_files() {
    let kernels = all_kernels();
    assert!(
        kernels.len() > 100,
        "expected the conformance suite's kernels, got {}",
        kernels.len()
    );
    let dir = golden_dir();
    let bless = std::env::var("STRATA_BLESS").is_ok_and(|v| v == "1");
    let mut mismatches = Vec::new();
    for (name, k) in &kernels {
        let src = codegen::opencl(k.valid_function())
            .expect("every golden kernel has OpenCL sources")
            .source;
        let path = dir.join(format!("{name}.cl"));
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
                    "{name}.cl differs from line {}:\n  golden:    {}\n  generated: {}",
                    line + 1,
                    old.lines().nth(line).unwrap_or("<end>"),
                    src.lines().nth(line).unwrap_or("<end>")
                ));
            }
            Err(_) => mismatches.push(format!("{name}.cl is missing")),
        }
    }
    let stale: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .trim_end_matches(".cl")
                        .to_string()
                })
                .filter(|n| !kernels.contains_key(n))
                .collect()
        })
        .unwrap_or_default();
    if bless {
        for n in &stale {
            std::fs::remove_file(dir.join(format!("{n}.cl"))).unwrap();
        }
        return;
    }
    for n in stale {
        mismatches.push(format!("{n}.cl has no kernel any more"));
    }
    assert!(
        mismatches.is_empty(),
        "{} golden file(s) out of date; if the change is intended, run `STRATA_BLESS=1 cargo test --test golden` and review the diff:\n{}",
        mismatches.len(),
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
            if let Err(e) = d.compile(k) {
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
