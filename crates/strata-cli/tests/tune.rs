//! `strata tune` writes tuning records that other processes use: this test process (the
//! patterns run with the recorded staging, exact results unchanged), `strata tune --show` and
//! `strata bench`'s `_tuned` rows, each finding the records through `STRATA_TUNE_DIR`.
//! No timing assertions.
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use std::path::Path;
use std::process::{Command, Output};
use strata::patterns::tune::{Choice, TunedOp, Tuning};
use strata::patterns::{DeviceVec, Exec, View};
use strata::{BackendKind, Device, Queue};
use strata_cli::report::BenchLine;

fn strata(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .env("STRATA_TUNE_DIR", dir)
        .output()
        .expect("run the strata binary")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8")
}

/// `cpu`, and `opencl:0` when there is an OpenCL device (required when `STRATA_REQUIRE` says).
fn specs() -> Vec<&'static str> {
    let opencl = strata::devices()
        .iter()
        .any(|d| d.info().backend == BackendKind::OpenCl);
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"));
    assert!(
        !required || opencl,
        "STRATA_REQUIRE names opencl, but there is no OpenCL device"
    );
    if opencl {
        vec!["cpu", "opencl:0"]
    } else {
        vec!["cpu"]
    }
}

#[test]
fn records_written_by_strata_tune_are_used_by_later_processes() {
    let dir = std::env::temp_dir().join(format!("strata-cli-tune-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let specs = specs();
    let n = 3000usize;
    let size = n.to_string();
    let devices_arg = specs.join(",");

    // Process 1: tune and save into $STRATA_TUNE_DIR/records.tsv.
    let o = strata(
        &dir,
        &[
            "tune",
            "--device",
            &devices_arg,
            "--size",
            &size,
            "--reps",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    let out = text(&o.stdout);
    for op in [
        "map",
        "reduce/u32",
        "scan/u32",
        "sort/u32",
        "reduce/f32",
        "scan/f32",
        "sort/f32",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(op) && l.contains(&size)),
            "no `{op}` row in:\n{out}"
        );
    }
    let file = dir.join("records.tsv");
    let tuning = Tuning::load(&file).expect("the records strata tune wrote");
    assert_eq!(tuning.records().len(), 7 * specs.len(), "{tuning:?}");

    for spec in &specs {
        let device = Device::from_spec(spec).unwrap();
        let q = Queue::new(&device).unwrap();
        // This process: the patterns run with the recorded staging.
        let ex = Exec::new(&q).with_tuning(&tuning);
        for op in TunedOp::ALL {
            let rec = tuning
                .lookup(&device, &op.key("u32"), n)
                .unwrap_or_else(|| panic!("{spec}: no record of {op:?}"));
            let used = ex.tuned_for(op, "u32", n);
            match rec.choice {
                Choice::Staging { staging, scan } => {
                    assert_eq!(used.staging(), staging, "{spec} {op:?}");
                    if let Some(a) = scan {
                        assert_eq!(used.scan_algorithm(), a, "{spec} {op:?}");
                    }
                }
                Choice::Sort(s) => assert_eq!(used.sort_staging(), s, "{spec}"),
                Choice::LocalSize(_) => panic!("{spec}: a pattern record holds a local size"),
            }
        }
        let x: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) >> 7)
            .collect();
        let go = |ex: &Exec| {
            let d = DeviceVec::from_slice(ex, &x).unwrap();
            let s: u32 = d.sum(ex).unwrap();
            let scan = d
                .inclusive_scan(ex, |a, b| a + b)
                .unwrap()
                .to_vec()
                .unwrap();
            let sorted = d.sorted::<u32>(ex).unwrap().to_vec().unwrap();
            (s, scan, sorted)
        };
        assert!(go(&ex) == go(&ex.untuned()), "{spec}: tuned results differ");

        // Another process: `strata tune --show` reads the default records file.
        let o = strata(&dir, &["tune", "--show", "--device", spec, "--size", &size]);
        assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
        let shown = text(&o.stdout);
        assert!(shown.contains(&file.display().to_string()), "{shown}");
        for op in TunedOp::ALL {
            let rec = tuning.lookup(&device, &op.key("u32"), n).unwrap();
            let line = format!(
                "{}: {} (record of size class 12,",
                op.key("u32"),
                rec.choice
            );
            assert!(shown.contains(&line), "no `{line}` in:\n{shown}");
        }

        // And `strata bench`: its `_tuned` rows run with the records of the file.
        let o = strata(
            &dir,
            &[
                "bench", "--device", spec, "--filter", "_tuned", "--size", &size, "--reps", "1",
                "--json",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
        let lines: Vec<BenchLine> = text(&o.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let names: Vec<&str> = lines.iter().map(|l| l.bench.as_str()).collect();
        assert_eq!(
            names,
            [
                "pat_vadd_tuned",
                "pat_sum_tuned",
                "pat_scan_tuned",
                "pat_sort_tuned"
            ],
            "{spec}"
        );
        for l in &lines {
            let tuned = l.tuned.as_deref().unwrap_or("");
            assert!(tuned.ends_with("(from the records file)"), "{spec}: {l:?}");
        }
    }

    // No records file at all: tuning without saving works, saving is refused with the remedy.
    let off = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["tune", "--device", "cpu", "--size", "64", "--ops", "reduce"])
        .env("STRATA_TUNE_DIR", "off")
        .output()
        .unwrap();
    assert_eq!(off.status.code(), Some(1));
    assert!(
        text(&off.stderr).contains("STRATA_TUNE_DIR is off and --records is not given"),
        "{}",
        text(&off.stderr)
    );
    let o = strata(&dir, &["tune", "--device", "cpu", "--ops", "reduce,fft"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("`fft` is not a tuned operation (map, reduce, scan or sort)"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A records file with a bad line (here a local size of 0) still works: `strata tune` saves,
/// dropping that line, and names its line number once on stderr.
#[test]
fn strata_tune_saves_over_a_records_file_with_a_bad_line() {
    let dir = std::env::temp_dir().join(format!("strata-cli-tune-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("records.tsv");
    let good = "other-device\tkernel/k\t12\tlocal=64\t1e-3\t5e-4";
    std::fs::write(
        &file,
        format!("{good}\nother-device\tkernel/k\t13\tlocal=0\t1e-3\t5e-4\n"),
    )
    .unwrap();
    let o = strata(
        &dir,
        &[
            "tune", "--device", "cpu", "--size", "3000", "--reps", "1", "--ops", "map",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "stderr: {err}");
    assert_eq!(err.matches("line 2: ").count(), 1, "{err}");
    assert!(
        err.contains("`local=0` is out of range: allowed are 1 to 65536"),
        "{err}"
    );
    let (tuning, bad) = Tuning::read(&file).unwrap();
    assert!(bad.is_empty(), "{bad:?}");
    let ops: Vec<&str> = tuning.records().iter().map(|r| r.op.as_str()).collect();
    assert!(ops.contains(&"kernel/k"), "{ops:?}");
    assert!(err.contains("records saved to"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
