//! What a device cannot run is reported, not failed: `strata check` and `strata bench` on a
//! device without `f16` (PoCL here) count the cases and kernels that need it as unsupported
//! and exit 0; a real failure still fails the command.
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure; without an
//! OpenCL device lacking `f16` the PoCL parts are skipped.

use std::process::{Command, Output};
use strata::BackendKind;
use strata_cli::conformance::{self, Outcome};

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .expect("run the strata binary")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The spec of an OpenCL device without `f16`, if there is one (an OpenCL device is required
/// when `STRATA_REQUIRE` says so).
fn device_without_f16() -> Option<String> {
    let all = strata::devices();
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"));
    assert!(
        !required || all.iter().any(|d| d.info().backend == BackendKind::OpenCl),
        "STRATA_REQUIRE names opencl, but there is no OpenCL device"
    );
    let d = all
        .iter()
        .find(|d| d.info().backend == BackendKind::OpenCl && !d.info().supports_f16);
    if d.is_none() {
        eprintln!("skipped: no OpenCL device without f16");
    }
    d.map(|d| d.spec())
}

#[test]
fn check_counts_what_the_device_cannot_run_and_passes() {
    let Some(spec) = device_without_f16() else {
        return;
    };
    let o = strata(&["check", "--device", &spec, "--filter", "half/"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let cases = conformance::matching(Some("half/")).len();
    assert!(cases >= 5, "{cases}");
    assert_eq!(
        t.matches("unsupported half/").count(),
        cases,
        "one line per case:\n{t}"
    );
    assert!(
        t.contains("unsupported half/arith: the device lacks f16"),
        "{t}"
    );
    assert!(
        t.contains(&format!(
            "0 passed, 0 failed, {cases} unsupported by the device (f16: {cases})"
        )),
        "{t}"
    );
    // The suite's own run tells an unsupported case from a passed one.
    let device = strata::Device::from_spec(&spec).unwrap();
    let queue = strata::Queue::new(&device).unwrap();
    let mut seen = Vec::new();
    let report = conformance::run_cases(&queue, Some("half/arith"), |name, o| {
        seen.push((name.to_string(), o.clone()))
    });
    assert_eq!(
        seen,
        vec![("half/arith".to_string(), Outcome::Unsupported("f16".into()))]
    );
    assert!(report.passed.is_empty() && report.failed.is_empty());
}

#[test]
fn check_on_the_cpu_has_nothing_unsupported() {
    let device = strata::Device::from_spec("cpu").unwrap();
    let queue = strata::Queue::new(&device).unwrap();
    let report = conformance::run(&queue, Some("half/"), |_, r| assert!(r.is_ok(), "{r:?}"));
    assert!(report.unsupported.is_empty(), "{report:?}");
    assert_eq!(
        report.passed.len(),
        conformance::matching(Some("half/")).len()
    );
    assert!(!report.summary().contains("unsupported"));
}

/// `strata bench` compiles the conformance kernels (the `compile` row, also run after the
/// benchmarks without a filter); the f16 kernels are reported unsupported with their count,
/// and the command succeeds.
#[test]
fn bench_compile_counts_unsupported_kernels_and_passes() {
    let Some(spec) = device_without_f16() else {
        return;
    };
    // With --json the count is in the line, the note on stderr.
    let o = strata(&["bench", "--device", &spec, "--filter", "compile", "--json"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with(&format!("unsupported on {spec}: ")))
        .unwrap_or_else(|| panic!("no unsupported line in:\n{t}"));
    assert!(
        line.contains(" conformance kernels (") && line.contains("half_arith"),
        "{line}"
    );
    assert!(
        line.contains("the kernel uses f16, which the device does not support"),
        "{line}"
    );
    let count: usize = line
        .split(": ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {line}"));
    assert!(count >= 5, "{line}");
    let out = String::from_utf8_lossy(&o.stdout);
    let json = out
        .lines()
        .find(|l| l.contains("\"compile_kernels\":"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        json.contains(&format!("\"compile_unsupported\":{count}")),
        "{json}"
    );
}
