//! The `strata` command, run as a separate process, and the benchmark library behind it.
//! No timing assertions: speed is measured by `strata bench`, never by tests.

use std::process::{Command, Output};
use strata::Device;
use strata_cli::bench::{self, BenchError, BenchOptions};

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .expect("run the strata binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

#[test]
fn devices_lists_the_cpu() {
    let o = strata(&["devices"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.lines().any(|l| l.starts_with("cpu: ")),
        "no `cpu:` line in:\n{text}"
    );
    assert!(text.contains("compute units"), "{text}");
}

#[test]
fn devices_json_is_one_object_per_line() {
    let o = strata(&["devices", "--json"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(!lines.is_empty());
    for l in &lines {
        assert!(l.starts_with('{') && l.ends_with('}'), "not an object: {l}");
    }
    assert!(
        lines.iter().any(|l| l.contains("\"backend\":\"cpu\"")),
        "no cpu device in:\n{text}"
    );
}

#[test]
fn devices_why_names_the_missing_backends() {
    let o = strata(&["devices", "--why"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("cpu: "), "{text}");
    for (backend, reason) in strata::unavailable_backends() {
        assert!(
            text.contains(&format!("{backend}: {reason}")),
            "`{backend}` and its reason missing from:\n{text}"
        );
    }
}

#[test]
fn check_on_cpu_passes() {
    let o = strata(&["check", "--device", "cpu"]);
    let text = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{text}\nstderr:\n{}",
        stderr(&o)
    );
    let last = text.lines().last().expect("some output");
    let (passed, failed) = last
        .split_once(" passed, ")
        .unwrap_or_else(|| panic!("last line is not `N passed, M failed`: {last}"));
    assert!(passed.parse::<usize>().unwrap() > 0, "{last}");
    assert_eq!(failed, "0 failed");
    assert_eq!(
        text.lines().filter(|l| l.contains(" passed, ")).count(),
        1,
        "exactly one summary line:\n{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("ok   ")), "{text}");
}

/// `--dump` (and `STRATA_DUMP`, which it adds to) prints what the devices compile, on stderr;
/// an unknown word is a usage error.
#[test]
fn dump_prints_what_devices_compile() {
    let o = strata(&[
        "check", "--device", "cpu", "--filter", "ids/", "--dump", "ir",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("// IR of ") && err.contains(" for cpu\nkernel "),
        "{err}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["check", "--device", "cpu", "--filter", "ids/"])
        .env("STRATA_DUMP", "ir")
        .output()
        .unwrap();
    assert!(stderr(&o).contains("// IR of "), "{}", stderr(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["check", "--device", "cpu", "--filter", "ids/"])
        .env_remove("STRATA_DUMP")
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("// IR of "), "{}", stderr(&o));
    let o = strata(&["check", "--dump", "ir,ptx"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`ptx` is not something to dump; the choices are ir, opencl, cuda"),
        "{}",
        stderr(&o)
    );
}

/// A device spec that is no spec is a bad command line (exit code 2) in every command that
/// takes one, reported in clap's style with the usage hint; `-d` is `--device`.
#[test]
fn an_invalid_device_spec_is_a_bad_command_line() {
    for args in [
        &["check", "--device", "nope:1"][..],
        &["check", "-d", "nope:1"],
        &["difftest", "-d", "nope:1"],
        &["bench", "-d", "cpu,nope:1"],
        &["tune", "-d", "nope:1", "--no-save"],
    ] {
        let o = strata(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains("invalid device `nope:1`"), "{args:?}: {err}");
        assert!(err.contains("'--help'"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `-d SPEC` is `--device SPEC`; `-q` leaves out the notes on stderr, not the results.
#[test]
fn short_device_and_quiet() {
    let o = strata(&["check", "-d", "cpu", "--filter", "int/i16"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("conformance on cpu"), "{}", stderr(&o));
    let loud = stdout(&o);
    let o = strata(&["-q", "check", "-d", "cpu", "--filter", "int/i16"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(stdout(&o), loud);
    // Global: after the subcommand too, and for difftest.
    let o = strata(&["difftest", "-d", "cpu", "--programs", "2", "--quiet"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(stdout(&o).lines().last(), Some("2 passed, 0 failed"));
    // Errors are still printed.
    let o = strata(&["-q", "bench", "-d", "cuda:99", "--size", "16"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: no device `cuda:99`"),
        "{}",
        stderr(&o)
    );
}

/// `strata completions SHELL` prints a completion script that knows the subcommands and the
/// options; an unknown shell is a bad command line.
#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef strata"),
        ("fish", "complete -c strata"),
        ("elvish", "edit:completion"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = strata(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains(marker), "{shell}: {text}");
        for word in ["difftest", "completions", "device", "quiet"] {
            assert!(text.contains(word), "{shell} lacks {word}");
        }
    }
    let o = strata(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
}

/// The subcommand list has one short line per command; the long text is in each command's
/// `--help`.
#[test]
fn subcommand_list_is_one_short_line_each() {
    let o = strata(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    let commands = text
        .split("Commands:\n")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .unwrap_or_else(|| panic!("no command list in:\n{text}"));
    let names = [
        "devices",
        "check",
        "difftest",
        "bench",
        "tune",
        "plot",
        "ptx",
        "completions",
        "help",
    ];
    let lines: Vec<&str> = commands.lines().collect();
    assert_eq!(lines.len(), names.len(), "{commands}");
    for (line, name) in lines.iter().zip(names) {
        assert!(line.trim_start().starts_with(name), "{line}");
        assert!(line.len() <= 100, "too long: {line}");
    }
    assert!(
        commands.contains("against the interpreter (`interp`)"),
        "{commands}"
    );
    // The long text is in the command's own help.
    let o = strata(&["bench", "--help"]);
    assert!(stdout(&o).contains("pat_sort_tuned"), "{}", stdout(&o));
}

/// Every error line has one style, `error: ...`: clap's usage errors and the command's own.
#[test]
fn one_error_line_style() {
    for (args, code) in [
        (&["bench", "--size", "lots"][..], 2),
        (&["plot", "/no/such/file.jsonl", "--out", "x.svg"], 1),
        (&["check", "-d", "cpu", "--filter", "no-such-case"], 1),
    ] {
        let o = strata(args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        let err = stderr(&o);
        let first = err
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or_default();
        assert!(first.starts_with("error: "), "{args:?}: {err}");
        assert!(!err.contains("strata: error"), "{args:?}: {err}");
    }
}

#[test]
fn missing_device_fails_without_panicking() {
    // No machine has 100 CUDA devices: with or without a GPU this names a missing device.
    let o = strata(&["bench", "--device", "cuda:99", "--size", "16"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("no device `cuda:99`"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bench_json_has_one_line_per_benchmark() {
    let o = strata(&[
        "bench", "--size", "4096", "--reps", "2", "--json", "--device", "cpu",
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    let mut lines: Vec<&str> = text.lines().collect();
    // Without a filter, one line of the conformance kernels' compile times follows.
    let compile = lines.pop().unwrap_or_default();
    assert!(
        compile.contains("\"device\":\"cpu\"") && compile.contains("\"compile_median_s\":"),
        "{compile}"
    );
    // Before it, the host's core-to-core handover around the rows (a CPU device): numbers
    // where two threads can run side by side.
    let host = lines.pop().unwrap_or_default();
    let two = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    for key in ["round_trip_before_ns", "round_trip_after_ns"] {
        let null = host.contains(&format!("\"{key}\":null"));
        assert!(
            host.contains(&format!("\"{key}\":")) && null != two,
            "{host}"
        );
    }
    let host: strata_cli::report::HostLine = serde_json::from_str(host).unwrap();
    assert_eq!(host.device, "cpu");
    for ns in [host.round_trip_before_ns, host.round_trip_after_ns] {
        // A handover takes tens to hundreds of nanoseconds: not 0, not milliseconds.
        assert!(ns.is_none_or(|ns| ns > 1.0 && ns < 100_000.0), "{host:?}");
    }
    let names = bench::selected(None);
    assert_eq!(lines.len(), names.len(), "{text}");
    let cpu = Device::from_spec("cpu").unwrap();
    for (l, name) in lines.iter().zip(names) {
        assert!(l.starts_with('{') && l.ends_with('}'), "{l}");
        assert!(l.contains(&format!("\"bench\":\"{name}\"")), "{l}");
        assert!(l.contains("\"device\":\"cpu\""), "{l}");
        let compute = bench::compute::problem_size(name, cpu.info(), 4096);
        // Only the compute benchmarks measure their kernel's compile time.
        assert_eq!(l.contains("\"compile_s\":null"), compute.is_none(), "{l}");
        assert_eq!(
            l.contains("\"compile_cached_s\":null"),
            compute.is_none(),
            "{l}"
        );
        if let Some(n) = compute {
            // Scaled down with the size: 4096 / 2^24 of the work.
            assert!(l.contains(&format!("\"n\":{n},")), "{l}");
            // The histogram counts: no flops.
            let flops = name != "histogram";
            assert_eq!(!l.contains("\"flops\":0,"), flops, "{l}");
            assert_eq!(!l.contains("\"strata_tflops\":null"), flops, "{l}");
        } else if name.starts_with("sgemm") {
            // 128 x 128 matrices on CPU devices, whatever --size says; 2 e^3 operations.
            let e = 128;
            assert!(l.contains(&format!("\"n\":{e},")), "{l}");
            assert!(l.contains(&format!("\"flops\":{},", 2 * e * e * e)), "{l}");
            assert!(!l.contains("\"strata_tflops\":null"), "{l}");
        } else if name.starts_with("rof_") {
            // The image edge: sqrt(4096 / 4) pixels.
            let e = bench::fields::edge(cpu.info().backend, 4096);
            assert!(l.contains(&format!("\"n\":{e},")), "{l}");
        } else if bench::overhead::BENCHES.contains(&name) {
            // One element, whatever --size says: what a call costs beyond its kernel.
            assert!(l.contains("\"n\":1,"), "{l}");
        } else {
            assert!(l.contains("\"n\":4096"), "{l}");
            assert!(l.contains("\"flops\":0,"), "{l}");
            assert!(l.contains("\"strata_tflops\":null"), "{l}");
        }
        // `rof_unfused` compares with `rof_fused`: its ratio is what fusion gains.
        let baseline = if name == "rof_unfused" {
            "rof_fused"
        } else if bench::overhead::BENCHES.contains(&name) && !name.starts_with("overhead_launch") {
            "launch"
        } else if bench::transfer::BENCHES.contains(&name) {
            // A transfer against one host thread's copy of the same bytes.
            "memcpy"
        } else {
            "rayon"
        };
        assert!(l.contains(&format!("\"baseline\":\"{baseline}\"")), "{l}");
        for key in [
            "strata_s",
            "baseline_s",
            "ratio",
            "strata_gbps",
            "baseline_gbps",
            "strata_tflops",
            "baseline_tflops",
            "compile_s",
            "compile_cached_s",
        ] {
            assert!(l.contains(&format!("\"{key}\":")), "no `{key}` in {l}");
        }
    }
}

#[test]
fn bench_table_and_filter() {
    let o = strata(&["bench", "--size=1000", "--reps=1", "--filter", "sum"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("sum ")).collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(!text.contains("vadd"), "{text}");
    assert!(text.contains("ratio"), "{text}");

    let o = strata(&["bench", "--size", "64", "--filter", "nothing"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no benchmark"), "{}", stderr(&o));
    assert!(stderr(&o).contains("sgemm_64x64x8_8x8"), "{}", stderr(&o));

    // A compute-bound row adds throughput columns; the matrices are 128 x 128 on the CPU.
    let o = strata(&["bench", "--reps=1", "--device=cpu", "--filter", "sgemm_64x"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("strata TFLOP/s") && text.contains("rayon TFLOP/s"),
        "{text}"
    );
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("sgemm_64x64x8_8x8 "))
        .collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].split_whitespace().nth(1) == Some("128"), "{text}");
}

#[test]
fn bad_command_lines_exit_2_with_a_usage_hint() {
    for args in [
        &["devices", "--frobnicate"][..],
        &["bench", "--size", "lots"],
        &["bench", "--reps", "0"],
        &["bench", "--size"],
        &["check", "--json"],
        &["launch"],
        &[],
    ] {
        let o = strata(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains("'--help'"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // The message names the value and what was expected.
    let err = stderr(&strata(&["bench", "--size", "lots"]));
    assert!(
        err.contains("invalid value 'lots' for '--size <SIZE>': takes a positive whole number (e.g. 4096 or 2^24), not `lots`"),
        "{err}"
    );
    let err = stderr(&strata(&["bench", "--plot", "chart.png"]));
    assert!(
        err.contains("charts are written as SVG: name a file ending in .svg, not `chart.png`"),
        "{err}"
    );
}

#[test]
fn help_prints_usage() {
    for (args, usage) in [
        (&["help"][..], "Usage: strata [OPTIONS] <COMMAND>"),
        (&["--help"], "Usage: strata [OPTIONS] <COMMAND>"),
        (&["bench", "-h"], "Usage: strata bench [OPTIONS]"),
        (&["help", "difftest"], "Usage: strata difftest [OPTIONS]"),
    ] {
        let o = strata(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let text = stdout(&o);
        assert!(text.contains(usage), "{args:?}: {text}");
        assert!(text.contains("opencl:N"), "{text}");
    }
}

#[test]
fn bench_run_verifies_results() {
    let dev = Device::from_spec("cpu").unwrap();
    // A size that is not a multiple of the work-group size exercises the bounds guards.
    let opts = BenchOptions {
        size: 5000,
        reps: 2,
        filter: None,
    };
    let results = bench::run(&dev, &opts).unwrap();
    let names: Vec<&str> = results.iter().map(|r| r.bench).collect();
    assert_eq!(names, bench::selected(None));
    for r in &results {
        let sgemm = r.bench.starts_with("sgemm");
        let compute = bench::compute::problem_size(r.bench, dev.info(), 5000);
        let rof = r.bench.starts_with("rof_");
        let e = match (strata_cli::bench::blas::config(r.bench), compute) {
            (Some(c), _) => strata_cli::bench::blas::edge(dev.info(), &c),
            (None, Some(n)) => n,
            (None, None) if rof => bench::fields::edge(dev.info().backend, 5000),
            (None, None) if bench::overhead::BENCHES.contains(&r.bench) => 1,
            (None, None) => 5000,
        };
        assert_eq!(r.n, e, "{r:?}");
        assert!(!sgemm || e == 128, "{r:?}");
        assert_eq!(r.device, "cpu");
        let transfer = bench::transfer::BENCHES.contains(&r.bench);
        let baseline = if r.bench == "rof_unfused" {
            "rof_fused"
        } else if bench::overhead::BENCHES.contains(&r.bench)
            && !r.bench.starts_with("overhead_launch")
        {
            "launch"
        } else if transfer {
            "memcpy"
        } else {
            "rayon"
        };
        assert_eq!(r.baseline, baseline);
        assert!(r.strata_s > 0.0 && r.baseline_s > 0.0, "{r:?}");
        // A transfer launches nothing: no work-groups.
        assert_eq!(r.local_size >= 1 && r.groups >= 1, !transfer, "{r:?}");
        if transfer {
            // `n` f32 moved once.
            assert_eq!(r.bytes, 4 * r.n as u64, "{r:?}");
        }
        assert_eq!(r.compile_s.is_some(), compute.is_some(), "{r:?}");
        assert_eq!(r.compile_cached_s.is_some(), compute.is_some(), "{r:?}");
        match r.bench {
            "vadd" | "saxpy" | "mandelbrot" | "blur" => assert_eq!(r.rel_error, 0.0, "{r:?}"),
            // Counts, exactly; no flops.
            "histogram" => assert_eq!((r.rel_error, r.flops), (0.0, 0), "{r:?}"),
            _ if rof => assert!(r.rel_error <= bench::fields::TOLERANCE, "{r:?}"),
            _ if compute.is_some() => {
                assert!(r.rel_error <= bench::compute::TOLERANCE, "{r:?}");
                assert!(r.flops > 0 && r.strata_tflops() > 0.0, "{r:?}");
            }
            // Rounding differs from rayon's (fma against multiply-then-add), but only a little.
            _ if sgemm => {
                assert!(r.rel_error > 0.0, "{r:?}");
                assert!(r.rel_error <= strata_cli::bench::blas::TOLERANCE, "{r:?}");
                assert_eq!(r.flops, 2 * (e * e * e) as u64, "{r:?}");
                assert!(r.strata_tflops() > 0.0, "{r:?}");
            }
            _ => assert!(r.rel_error <= bench::REDUCTION_TOLERANCE, "{r:?}"),
        }
    }

    let one = bench::run(
        &dev,
        &BenchOptions {
            size: 1,
            reps: 1,
            filter: Some("a".into()),
        },
    )
    .unwrap();
    let names: Vec<&str> = one.iter().map(|r| r.bench).collect();
    let mut want = vec!["vadd", "saxpy"];
    want.extend(bench::selected(Some("pat_")));
    want.extend(["mandelbrot", "matmul", "histogram"]);
    want.extend(bench::overhead::BENCHES);
    want.extend(bench::transfer::BENCHES);
    assert_eq!(
        names, want,
        "every pattern benchmark name contains `a`, three compute ones, the overhead and transfer rows"
    );
}

/// The compute benchmarks (`mandelbrot`, `nbody`, `matmul`, `blur`, `histogram`) run on the compiled
/// CPU backend and on the interpreter at a small size, each checked against its rayon baseline
/// by the run itself (a mismatch fails it), with flops (none for the histogram) and both
/// compile times; the table shows the compile times.
#[test]
fn bench_compute_kernels_run_and_are_checked() {
    use bench::compute::{problem_size, BENCHES};
    let size = 1 << 16;
    for spec in ["cpu", "interp"] {
        let dev = Device::from_spec(spec).unwrap();
        let info = dev.info();
        // The full sizes at the default size and above; 2^-8 of the work at 2^16 (a further
        // 16th on the interpreter).
        for big in [bench::DEFAULT_SIZE, usize::MAX] {
            let full: Vec<_> = BENCHES.iter().map(|b| problem_size(b, info, big)).collect();
            let want = match spec {
                "cpu" => [2048, 16384, 1024, 4096, 1 << 24],
                _ => [512, 4096, 406, 1024, 1 << 20],
            };
            assert_eq!(full, want.map(Some), "{spec}");
        }
        for name in BENCHES {
            let opts = BenchOptions {
                size,
                reps: 1,
                filter: Some(name.into()),
            };
            let rs = bench::run(&dev, &opts).unwrap_or_else(|e| panic!("{spec} {name}: {e}"));
            assert_eq!(rs.len(), 1, "{rs:?}");
            let r = &rs[0];
            assert_eq!((r.bench, r.device.as_str()), (name, spec), "{r:?}");
            assert_eq!(Some(r.n), problem_size(name, info, size), "{r:?}");
            assert!(r.n > 1 && r.n < problem_size(name, info, usize::MAX).unwrap());
            assert_eq!(r.baseline, "rayon", "{r:?}");
            assert!(
                (r.flops > 0 && r.strata_tflops() > 0.0) || name == "histogram",
                "{r:?}"
            );
            assert!(r.strata_s > 0.0 && r.baseline_s > 0.0, "{r:?}");
            assert!(r.compile_s.is_some_and(|s| s > 0.0), "{r:?}");
            assert!(r.compile_cached_s.is_some_and(|s| s > 0.0), "{r:?}");
            match name {
                "mandelbrot" | "histogram" | "blur" => assert_eq!(r.rel_error, 0.0, "{r:?}"),
                _ => assert!(r.rel_error <= bench::compute::TOLERANCE, "{r:?}"),
            }
            match name {
                "nbody" => assert_eq!(r.flops, 20 * (r.n * r.n) as u64, "{r:?}"),
                "matmul" => assert_eq!(r.flops, 2 * (r.n * r.n * r.n) as u64, "{r:?}"),
                "histogram" => assert_eq!((r.flops, r.bytes), (0, 4 * r.n as u64), "{r:?}"),
                "blur" => assert_eq!(
                    (r.flops, r.bytes),
                    (9 * ((r.n - 2) * (r.n - 2)) as u64, 8 * (r.n * r.n) as u64),
                    "{r:?}"
                ),
                // 8 per iteration: at least one iteration per pixel, at most the limit.
                _ => assert!(
                    r.flops >= 8 * (r.n * r.n) as u64 && r.flops <= 8 * 256 * (r.n * r.n) as u64,
                    "{r:?}"
                ),
            }
        }
    }

    let o = strata(&[
        "bench", "--device", "cpu", "--filter", "nbody", "--size", "2^12", "--reps", "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("compile ms") && text.contains("cached ms"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("nbody "))
        .unwrap_or_else(|| panic!("no nbody row in:\n{text}"));
    assert!(!row.ends_with('-'), "{text}");
}

/// The checks of the compute benchmarks fail on a wrong result.
#[test]
fn bench_compute_checks_reject_wrong_results() {
    use bench::compute::{check_counts, check_vectors};
    assert_eq!(
        check_counts("mandelbrot", &[1, 2, 3], &[1, 2, 3]).unwrap(),
        0.0
    );
    let e = check_counts("mandelbrot", &[1, 5, 3], &[1, 2, 3]).unwrap_err();
    assert!(
        matches!(&e, BenchError::WrongResult { bench: "mandelbrot", detail } if detail.contains("element 1")),
        "{e}"
    );
    assert!(check_counts("mandelbrot", &[1], &[1, 2]).is_err());
    let want: [&[f32]; 3] = [&[1.0, 0.0], &[0.0, 2.0], &[0.0, 0.0]];
    assert_eq!(check_vectors("nbody", want, want).unwrap(), 0.0);
    // Within 10^-3 of the largest vector (2): fine; beyond: wrong, naming the body.
    let err = check_vectors("nbody", [&[1.001, 0.0], want[1], want[2]], want).unwrap();
    assert!(err > 0.0 && err <= bench::compute::TOLERANCE, "{err}");
    let e = check_vectors("nbody", [want[0], &[0.0, 2.01], want[2]], want).unwrap_err();
    assert!(
        matches!(&e, BenchError::WrongResult { bench: "nbody", detail } if detail.contains("element 1")),
        "{e}"
    );
    assert!(check_vectors("nbody", [want[0], want[1], &[0.0, f32::NAN]], want).is_err());
    assert!(check_vectors("nbody", [&[1.0], want[1], want[2]], want).is_err());
}

#[test]
fn bench_checks_reject_wrong_results() {
    assert!(bench::check_exact("vadd", &[1.0, 2.0], &[1.0, 2.0]).is_ok());
    let e = bench::check_exact("vadd", &[1.0, 2.5], &[1.0, 2.0]).unwrap_err();
    assert!(
        matches!(&e, BenchError::WrongResult { bench: "vadd", detail } if detail.contains("element 1")),
        "{e}"
    );
    assert!(bench::check_exact("vadd", &[f32::NAN], &[1.0]).is_err());
    assert!(bench::check_exact("vadd", &[1.0], &[1.0, 2.0]).is_err());
    assert!(bench::check_close("sum", 1000.5, 1000.0).is_ok());
    assert!(bench::check_close("sum", 1002.0, 1000.0).is_err());
    assert!(bench::check_close("dot", f32::NAN, 1.0).is_err());
    let bad = bench::run(
        &Device::from_spec("cpu").unwrap(),
        &BenchOptions {
            size: 0,
            ..BenchOptions::default()
        },
    );
    assert!(matches!(bad, Err(BenchError::InvalidOptions(_))));
}

#[test]
fn difftest_on_cpu_passes_and_reports_counts() {
    let o = strata(&[
        "difftest",
        "--device",
        "cpu",
        "--seed",
        "0x2a",
        "--programs",
        "40",
    ]);
    let text = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{text}\nstderr:\n{}",
        stderr(&o)
    );
    assert!(
        text.contains("40/40 programs"),
        "no progress line in:\n{text}"
    );
    assert_eq!(text.lines().last(), Some("40 passed, 0 failed"), "{text}");
    assert!(stderr(&o).contains("seed 42"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("of cpu (") && stderr(&o).contains("against interp (the reference)"),
        "{}",
        stderr(&o)
    );

    // --only runs one program of the run alone.
    let o = strata(&[
        "difftest", "--device", "cpu", "--seed", "0x2a", "--only", "17",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().last(), Some("1 passed, 0 failed"));

    // --from starts at a program of the run (its JSON line says where).
    let o = strata(&[
        "difftest",
        "--device",
        "cpu",
        "--seed",
        "0x2a",
        "--from",
        "17",
        "--programs",
        "3",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("3 programs from program 17"),
        "{}",
        stderr(&o)
    );
    let r: strata_cli::report::DifftestLine =
        serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    assert_eq!((r.first, r.programs, r.passed), (17, 3, 3));

    // With --json, the summary is also one JSON object, last.
    let o = strata(&["difftest", "--device", "cpu", "--programs", "8", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let last = text.lines().last().unwrap();
    let r: strata_cli::report::DifftestLine = serde_json::from_str(last).unwrap();
    assert_eq!(
        (r.device.as_str(), r.seed, r.programs),
        ("cpu", 1, 8),
        "{last}"
    );
    assert_eq!((r.passed, r.failed_programs), (8, 0), "{last}");
    assert!(
        r.kernels >= 1 && r.compared > 0 && r.failures.is_empty(),
        "{last}"
    );
}

#[test]
fn difftest_rejects_bad_arguments() {
    for args in [
        &["difftest", "--seed", "x"][..],
        &["difftest", "--programs", "0"][..],
        &["difftest", "--filter", "a"][..],
        &["difftest", "--only", "3", "--from", "2"][..],
        &["difftest", "--from", "-1"][..],
    ] {
        let o = strata(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn bench_runs_several_devices_in_one_run() {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "bench", "--device", "cpu,best", "--size", "2048", "--reps", "1", "--json",
        ])
        .output()
        .expect("run strata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // One line per benchmark and device; a CUDA device adds one line of device figures (copy
    // bandwidth, launch cost) after its benchmarks, a CPU device one of the host's
    // core-to-core handover.
    let (lines, device_lines): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|l| l.contains("\"bench\":"));
    // And, without a filter, one line of compile times per device.
    assert!(
        device_lines.iter().all(|l| l.contains("\"copy_gbps\":")
            || l.contains("\"compile_kernels\":")
            || l.contains("\"round_trip_before_ns\":")),
        "{text}"
    );
    assert!(
        device_lines
            .iter()
            .any(|l| l.contains("\"device\":\"cpu\"") && l.contains("\"round_trip_after_ns\":")),
        "{text}"
    );
    assert_eq!(
        device_lines
            .iter()
            .filter(|l| l.contains("\"compile_kernels\":"))
            .count(),
        2,
        "{text}"
    );
    let per = bench::selected(None).len();
    assert_eq!(lines.len(), 2 * per, "{per} benchmarks per device:\n{text}");
    assert!(
        lines[..per]
            .iter()
            .all(|l| l.contains("\"device\":\"cpu\"")),
        "{text}"
    );
}

/// Long commands draw a progress bar (position and ETA) when stderr is a terminal, and only
/// their plain lines otherwise. The terminal is a pseudo-terminal from `script` (util-linux).
#[test]
fn progress_bar_on_a_terminal_plain_lines_otherwise() {
    let exe = env!("CARGO_BIN_EXE_strata");
    let cmd = format!("{exe} check --device cpu --filter int/i16");
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("`script` (util-linux) runs a command on a pseudo-terminal");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let cases = strata_cli::conformance::matching(Some("int/i16")).len();
    assert!(cases > 0);
    assert!(
        text.contains(&format!("/{cases} cases [")) && text.contains("ETA"),
        "no progress bar in:\n{text}"
    );
    // Without a terminal: no bar, no escape codes, no carriage returns.
    let o = strata(&["check", "--device", "cpu", "--filter", "int/i16"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(!err.contains("ETA") && !out.contains("ETA"), "{err}");
    assert!(
        !format!("{out}{err}").contains(['\r', '\x1b']),
        "{out}{err}"
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("ok   ")).count(),
        cases
    );
}

#[test]
fn checked_specs_are_accepted_everywhere() {
    // `check`: the planted bugs pass on the checked interpreter.
    let o = strata(&[
        "check",
        "--device",
        "interp+checked",
        "--filter",
        "checked/",
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}\n{}", stderr(&o));
    assert_eq!(text.lines().last(), Some("19 passed, 0 failed"), "{text}");
    assert!(stderr(&o).contains("interp+checked"), "{}", stderr(&o));
    // `difftest`: the checked compiled backend against the interpreter.
    let o = strata(&[
        "difftest",
        "--device",
        "cpu+checked",
        "--programs",
        "4",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let last = stdout(&o).lines().last().unwrap().to_string();
    let r: strata_cli::report::DifftestLine = serde_json::from_str(&last).unwrap();
    assert_eq!(
        (r.device.as_str(), r.passed, r.failed_programs),
        ("cpu+checked", 4, 0)
    );
    // `bench`: rows name the checked device.
    let o = strata(&[
        "bench",
        "--device",
        "cpu,cpu+checked",
        "--filter",
        "saxpy",
        "--size",
        "4096",
        "--reps",
        "1",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let devices: Vec<String> = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str::<strata_cli::report::BenchLine>(l).ok())
        .map(|b| b.device)
        .collect();
    assert!(
        devices.iter().any(|d| d == "cpu") && devices.iter().any(|d| d == "cpu+checked"),
        "{devices:?}"
    );
    // A malformed suffix is a usage error naming the spec.
    let o = strata(&["check", "--device", "cpu+fast"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid device `cpu+fast`"),
        "{}",
        stderr(&o)
    );
}

/// `strata bench --filter rof`: ROF denoising with fusion (against rayon) and without (against
/// the fused run, so the ratio is what fusion gains) on the CPU backend and each OpenCL
/// device, each checked against the other side by the run itself.
#[test]
fn bench_rof_rows_report_the_fusion_ratio() {
    for dev in strata::devices()
        .into_iter()
        .filter(|d| d.info().backend != strata::BackendKind::Cuda)
    {
        let opts = BenchOptions {
            size: 1 << 12,
            reps: 1,
            filter: Some("rof".into()),
        };
        let results = bench::run(&dev, &opts).unwrap();
        let names: Vec<&str> = results.iter().map(|r| r.bench).collect();
        assert_eq!(names, ["rof_fused", "rof_unfused"]);
        let baselines: Vec<&str> = results.iter().map(|r| r.baseline).collect();
        assert_eq!(baselines, ["rayon", "rof_fused"]);
        for r in &results {
            assert_eq!(
                r.n,
                bench::fields::edge(dev.info().backend, 1 << 12),
                "{r:?}"
            );
            assert!(r.strata_s > 0.0 && r.baseline_s > 0.0, "{r:?}");
            assert_eq!(r.ratio, r.strata_s / r.baseline_s);
            assert!(r.rel_error <= bench::fields::TOLERANCE, "{r:?}");
        }
    }
}
