//! Tuning (`strata::patterns::tune`): the records file, the lookup by size class, the patterns
//! running with the tuned staging (the same kernels as with that staging set by hand, and the same exact
//! results as untuned), the tuner on every present device, and a user kernel's local size.
//! No timing assertions: which configuration wins is the machine's business.
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use strata::patterns::tune::{
    device_key, size_class, Choice, TuneRecord, TunedOp, Tuner, Tuning, TuningError, MARGIN,
};
use strata::patterns::*;
use strata::prelude::*;
use strata::{capture_kernels, BackendKind};

fn devices() -> Vec<Device> {
    let all = strata::devices();
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"));
    assert!(
        !required || all.iter().any(|d| d.info().backend == BackendKind::OpenCl),
        "STRATA_REQUIRE names opencl, but no OpenCL device is listed"
    );
    all
}

fn temp_file(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-tune-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("records.tsv")
}

fn data(n: usize, seed: u32) -> Vec<u32> {
    let mut s = seed.wrapping_mul(2654435761) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        })
        .collect()
}

/// A staging unlike any device's default (`items_per_thread` 3 is never a default).
fn planted(ex: &Exec) -> Staging {
    Staging {
        group_size: ex.staging().group_size.min(64),
        items_per_thread: 3,
        max_groups: 5,
        layout: Layout::Contiguous,
        reduce_layout: Layout::Strided,
        scan_items_per_thread: 2,
    }
}

fn record(device: &Device, op: &str, class: u32, choice: Choice) -> TuneRecord {
    TuneRecord {
        device: device_key(device.info()),
        op: op.into(),
        class,
        choice,
        default_s: 2e-3,
        tuned_s: 1e-3,
    }
}

#[test]
fn records_round_trip_through_the_file_and_merge() {
    let cpu = Device::from_spec("cpu").unwrap();
    let ex = Exec::new(&Queue::new(&cpu).unwrap());
    let path = temp_file("round-trip");
    let _ = std::fs::remove_file(&path);
    let mut t = Tuning::new();
    t.insert(record(
        &cpu,
        "reduce/u32",
        20,
        Choice::Staging {
            staging: planted(&ex),
            scan: None,
        },
    ));
    t.insert(record(
        &cpu,
        "scan/u64",
        12,
        Choice::Staging {
            staging: planted(&ex),
            scan: Some(ScanAlgorithm::LookBack),
        },
    ));
    t.insert(record(
        &cpu,
        "sort/u32",
        22,
        Choice::Sort(SortStaging {
            method: SortMethod::Tiles,
            digit_bits: 6,
            keys_per_thread: 12,
            group_size: 128,
            max_groups: 9,
        }),
    ));
    t.insert(record(&cpu, "kernel/my_kernel", 16, Choice::LocalSize(96)));
    t.save(&path).unwrap();
    assert_eq!(Tuning::load(&path).unwrap(), t);

    // Saving again merges: the same device, op and class is replaced, others are kept.
    let mut more = Tuning::new();
    more.insert(record(&cpu, "kernel/my_kernel", 16, Choice::LocalSize(128)));
    more.insert(record(&cpu, "kernel/my_kernel", 17, Choice::LocalSize(32)));
    more.save(&path).unwrap();
    let back = Tuning::load(&path).unwrap();
    assert_eq!(back.records().len(), 5, "{back:?}");
    let local = |class| {
        back.records()
            .iter()
            .find(|r| r.op == "kernel/my_kernel" && r.class == class)
            .map(|r| r.choice)
    };
    assert_eq!(local(16), Some(Choice::LocalSize(128)));
    assert_eq!(local(17), Some(Choice::LocalSize(32)));
    // A missing file is no records, not an error.
    assert_eq!(
        Tuning::load(&path.with_file_name("absent.tsv")).unwrap(),
        Tuning::new()
    );
}

#[test]
fn a_bad_line_drops_that_line_only_naming_it() {
    let path = temp_file("malformed");
    let good = "cpu-key\tmap\t20\tlocal=64\t1e-3\t5e-4";
    let after = "cpu-key\tmap\t22\tlocal=32\t1e-3\t5e-4";
    let cases = [
        ("cpu-key\tmap\t20\tlocal=64", "4 tab-separated fields, not 6"),
        (
            "cpu-key\tmap\t20\tgroup=64 items=2 max_groups=4 layout=diagonal reduce_layout=strided scan_items=4\t1e-3\t5e-4",
            "`layout=diagonal`: the layout is contiguous or strided",
        ),
        (
            "cpu-key\tmap\t20\tgroup=64 items=2\t1e-3\t5e-4",
            "`max_groups` is missing",
        ),
        ("cpu-key\tmap\tbig\tlocal=64\t1e-3\t5e-4", "`big` is not a size class"),
        ("cpu-key\tmap\t20\tlocal=64\t-1\t5e-4", "`-1` is not a time in seconds"),
        ("cpu-key\tmap\t20\tlocal=64 scan\t1e-3\t5e-4", "`scan` is not key=value"),
        // Values out of the range the staging allows.
        (
            "cpu-key\tkernel/k\t20\tlocal=0\t1e-3\t5e-4",
            "`local=0` is out of range: allowed are 1 to 65536",
        ),
        (
            "cpu-key\tmap\t20\tgroup=64 items=65 max_groups=4 layout=strided reduce_layout=strided scan_items=4\t1e-3\t5e-4",
            "`items=65` is out of range: allowed are 1 to 64",
        ),
        (
            "cpu-key\tsort/u32\t20\tmethod=tiles digit_bits=9 group=64 keys=4 max_groups=4\t1e-3\t5e-4",
            "`digit_bits=9` is out of range: allowed are 1 to 8",
        ),
        (
            "cpu-key\tmap\t20\tgroup=0 items=2 max_groups=4 layout=strided reduce_layout=strided scan_items=4\t1e-3\t5e-4",
            "`group=0` is out of range: allowed are 1 to 65536",
        ),
    ];
    for (bad, reason) in cases {
        std::fs::write(&path, format!("# header\n{good}\n{bad}\n{after}\n")).unwrap();
        let (t, errors) = Tuning::read(&path).unwrap();
        // The other lines are records.
        assert_eq!(t.records().len(), 2, "{bad}: {t:?}");
        assert_eq!(errors.len(), 1, "{errors:?}");
        let e: &TuningError = &errors[0];
        let msg = strata::Error::from(e.clone()).to_string();
        assert!(
            msg.contains(&path.display().to_string())
                && msg.contains("line 3: ")
                && msg.contains(reason),
            "`{msg}` should name the file, line 3 and `{reason}`"
        );
        // `load` keeps the good records too (and warns on stderr).
        assert_eq!(Tuning::load(&path).unwrap(), t);
    }
    // Saving over a file with a bad line works, and drops the line.
    std::fs::write(&path, format!("{good}\nnot a record\n")).unwrap();
    let mut more = Tuning::new();
    more.insert(Tuning::read(&path).unwrap().0.records()[0].clone());
    more.save(&path).unwrap();
    let (back, errors) = Tuning::read(&path).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(back.records().len(), 1);
    // `local=0` is no local size.
    assert!("local=0".parse::<Choice>().is_err());
    assert_eq!("local=1".parse::<Choice>(), Ok(Choice::LocalSize(1)));
}

#[test]
fn the_nearest_size_class_is_used_and_explicit_staging_wins() {
    let cpu = Device::from_spec("cpu").unwrap();
    let ex = Exec::new(&Queue::new(&cpu).unwrap()).untuned();
    let default = ex.staging();
    let small = Staging {
        items_per_thread: 3,
        ..default
    };
    let large = Staging {
        items_per_thread: 5,
        ..default
    };
    let mut t = Tuning::new();
    for (class, st) in [(10, small), (20, large)] {
        t.insert(record(
            &cpu,
            "reduce/u32",
            class,
            Choice::Staging {
                staging: st,
                scan: None,
            },
        ));
    }
    // A record the device cannot run is ignored.
    t.insert(record(
        &cpu,
        "map",
        10,
        Choice::Staging {
            staging: Staging {
                group_size: 1 << 30,
                ..default
            },
            scan: None,
        },
    ));
    // Another device's records are not this one's.
    t.insert(TuneRecord {
        device: "OpenCl|elsewhere|1.0|8 units".into(),
        ..record(
            &cpu,
            "sort/u32",
            10,
            Choice::Sort(SortStaging {
                digit_bits: 4,
                ..ex.sort_staging()
            }),
        )
    });
    let tuned = ex.with_tuning(&t);
    let staged = |n| tuned.tuned_for(TunedOp::Reduce, "u32", n).staging();
    assert_eq!(size_class(1 << 14), 14);
    assert_eq!(size_class((1 << 14) + 1), 15);
    assert_eq!(staged(1000), small);
    assert_eq!(staged(1 << 14), small, "class 14 is nearer 10 than 20");
    assert_eq!(
        staged(1 << 15),
        large,
        "class 15 is as near both: the larger wins"
    );
    assert_eq!(staged(1 << 26), large);
    // Another element size, another operation, a record it cannot run, another device: defaults.
    assert_eq!(
        tuned.tuned_for(TunedOp::Reduce, "f32", 1000).staging(),
        default
    );
    assert_eq!(
        tuned.tuned_for(TunedOp::Scan, "u32", 1000).staging(),
        default
    );
    assert_eq!(
        tuned.tuned_for(TunedOp::Map, "u32", 1000).staging(),
        default
    );
    assert_eq!(
        tuned.tuned_for(TunedOp::Sort, "u32", 1000).sort_staging(),
        ex.sort_staging()
    );
    // An explicit staging drops the records.
    let explicit = tuned.with_items_per_thread(2).unwrap();
    assert!(explicit.tuning().is_none());
    assert_eq!(
        explicit
            .tuned_for(TunedOp::Reduce, "u32", 1000)
            .staging()
            .items_per_thread,
        2
    );
    assert!(tuned.untuned().tuning().is_none());
    assert!(tuned.tuning().is_some());
}

/// The IR of every kernel `f` builds.
fn kernels<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let (r, ks) = capture_kernels(f);
    (r, ks.iter().map(|k| k.ir_text().to_string()).collect())
}

#[test]
fn patterns_run_the_kernels_of_the_tuned_staging() {
    for device in devices() {
        let q = Queue::new(&device).unwrap();
        let ex = Exec::new(&q).untuned();
        let st = planted(&ex);
        let sort = SortStaging {
            digit_bits: 6,
            group_size: 64,
            ..ex.sort_staging()
        };
        let mut t = Tuning::new();
        for op in ["map", "reduce/u32", "scan/u32"] {
            t.insert(record(
                &device,
                op,
                13,
                Choice::Staging {
                    staging: st,
                    scan: Some(ScanAlgorithm::MultiPass).filter(|_| op == "scan/u32"),
                },
            ));
        }
        t.insert(record(&device, "sort/u32", 13, Choice::Sort(sort)));
        let tuned = ex.with_tuning(&t);
        let by_hand = ex
            .with_staging(st)
            .unwrap()
            .with_scan_algorithm(ScanAlgorithm::MultiPass)
            .unwrap()
            .with_sort_staging(sort)
            .unwrap();
        let n = 5000;
        let x = data(n, 7);
        let run = |ex: &Exec| {
            kernels(|| {
                let dx = DeviceVec::from_slice(ex, &x).unwrap();
                let out = DeviceVec::<u32>::zeroed(ex, n).unwrap();
                (&dx).map(|v| v ^ 5u32).collect_into(ex, &out).unwrap();
                let mapped = out.to_vec().unwrap();
                let sum: u32 = dx.sum(ex).unwrap();
                dx.inclusive_scan_into(ex, &out, |a, b| a + b).unwrap();
                let scanned = out.to_vec().unwrap();
                let keys = dx.with_exec(ex).unwrap();
                keys.sort().unwrap();
                (mapped, sum, scanned, keys.to_vec().unwrap())
            })
        };
        let (want, untuned_ir) = run(&ex);
        let (got, tuned_ir) = run(&tuned);
        let (hand, hand_ir) = run(&by_hand);
        let spec = device.info().spec();
        assert_eq!(
            got, want,
            "{spec}: tuned results differ from the untuned ones"
        );
        assert_eq!(hand, want, "{spec}");
        assert_eq!(
            tuned_ir, hand_ir,
            "{spec}: the tuned patterns must build the kernels of the recorded staging"
        );
        assert_ne!(tuned_ir, untuned_ir, "{spec}: the records changed nothing");
        // And the results are right.
        let mut sorted = x.clone();
        sorted.sort();
        assert_eq!(got.3, sorted, "{spec}");
        assert_eq!(
            got.1,
            x.iter().fold(0u32, |a, &b| a.wrapping_add(b)),
            "{spec}"
        );
    }
}

#[test]
fn the_tuner_keeps_exact_results_on_every_device() {
    for device in devices() {
        let q = Queue::new(&device).unwrap();
        let spec = device.info().spec();
        let n = if device.info().backend == BackendKind::Interp {
            1500
        } else {
            8_000
        };
        let mut tuner = Tuner::new(&q).reps(1);
        for op in TunedOp::ALL {
            let r = tuner
                .tune::<u32>(op, n)
                .unwrap_or_else(|e| panic!("{spec}: tuning {op:?}: {e}"));
            assert_eq!(r.record.op, op.key("u32"));
            assert_eq!(r.record.class, size_class(n));
            assert_eq!(r.record.device, device_key(device.info()));
            assert!(
                r.trials.len() >= 3,
                "{spec} {op:?}: {} trials",
                r.trials.len()
            );
            assert!(
                r.trials.iter().any(|t| t.0 == r.default),
                "{spec}: default timed"
            );
            assert!(r.trials.iter().any(|t| t.0 == r.record.choice));
            assert!(r.record.default_s > 0.0 && r.record.tuned_s > 0.0);
            // The default is kept unless another configuration is clearly faster (in the
            // final side-by-side timing); kept, it is recorded with its own time.
            if r.record.choice != r.default {
                assert!(
                    r.record.tuned_s * (1.0 + MARGIN) < r.record.default_s,
                    "{spec}: {r:?}"
                );
            } else {
                assert_eq!(r.record.tuned_s, r.record.default_s, "{spec}: {r:?}");
            }
        }
        // Floats: reductions and scans of 0s and 1s, exact in any order.
        for op in [TunedOp::Reduce, TunedOp::Scan, TunedOp::Sort] {
            let r = tuner
                .tune::<f32>(op, n)
                .unwrap_or_else(|e| panic!("{spec}: tuning {op:?} of f32: {e}"));
            assert_eq!(r.record.op, op.key("f32"));
        }
        assert_eq!(tuner.records().records().len(), 7);
        // The tuned exec gives the untuned results on other data (exact operations).
        let ex = Exec::new(&q).untuned();
        let tuned = ex.with_tuning(tuner.records());
        let x = data(n - 17, 3);
        let go = |ex: &Exec| {
            let dx = DeviceVec::from_slice(ex, &x).unwrap();
            let s: u32 = dx.sum(ex).unwrap();
            let scan = dx
                .exclusive_scan(ex, 0u32, |a, b| a + b)
                .unwrap()
                .to_vec()
                .unwrap();
            let sorted = dx.sorted::<u32>(ex).unwrap().to_vec().unwrap();
            (s, scan, sorted)
        };
        assert!(
            go(&tuned) == go(&ex),
            "{spec}: tuned and untuned results differ"
        );
    }
}

#[test]
fn a_user_kernels_local_size_is_tuned_and_recorded() {
    #[strata::kernel]
    fn scale(x: &[f32], #[write] y: &mut [f32]) {
        let i = global_id(0);
        if i < x.len() {
            y[i] = x[i] * 2.0;
        }
    }
    let k = scale::build().unwrap();
    for device in devices() {
        let q = Queue::new(&device).unwrap();
        let n = 3000usize;
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let xb = Buffer::from_slice(&q, &x).unwrap();
        let yb = Buffer::<f32>::new(&device, n).unwrap();
        let mut tuner = Tuner::new(&q).reps(2);
        let mut seen = Vec::new();
        let r = tuner
            .tune_local_size("scale", n, &[64, 16, 128], |local| {
                seen.push(local);
                k.launch(&q, NdRange::covering(n, local), &xb, &yb)?.wait()
            })
            .unwrap();
        // Each candidate: one untimed run, then two timed; then, if another than the first
        // was fastest, three more of the first and that one, alternately.
        assert_eq!(seen[..9], [64, 64, 64, 16, 16, 16, 128, 128, 128]);
        let best = match r.record.choice {
            Choice::LocalSize(l) => l,
            other => panic!("{other:?}"),
        };
        let rest: Vec<usize> = match seen[9..].iter().find(|&&l| l != 64) {
            Some(&b) => [64, b].repeat(3),
            None => Vec::new(),
        };
        assert_eq!(seen[9..], rest[..], "{seen:?}");
        assert!(
            rest.is_empty() || rest[1] == best || best == 64,
            "{seen:?} {r:?}"
        );
        assert_eq!(r.default, Choice::LocalSize(64));
        assert!(matches!(r.record.choice, Choice::LocalSize(64 | 16 | 128)));
        assert_eq!(r.record.op, "kernel/scale");
        let y = q.read(&yb).unwrap();
        assert!(y.iter().enumerate().all(|(i, v)| *v == 2.0 * i as f32));
        let err = tuner
            .tune_local_size("scale", n, &[], |_| Ok(()))
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("no candidate local sizes for kernel `scale`"),
            "{err}"
        );
    }
}
