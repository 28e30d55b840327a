//! The `strata` command: list devices, run the conformance suite, run differential tests, run
//! the benchmarks.
//!
//! Exit codes: 0 success, 1 failure (a device error, a failed conformance case, a differential
//! mismatch, a wrong benchmark result), 2 bad command line.

use std::io::Write;
use std::process::ExitCode;
use strata::bench::{self, BenchOptions};
use strata::{conformance, difftest, Device, Queue};

const USAGE: &str = "\
usage: strata <command> [options]

commands:
  devices [--json] [--why]
      Print the property summary of every device. --json: one JSON object per line.
      --why: also list the backends that have no device here, and why.
  check [--device SPEC] [--filter S]
      Run the conformance suite (the cases whose name contains S) on a device; one line per
      case, then `N passed, M failed`. Exit code 1 if a case failed.
  difftest [--device SPEC] [--seed N] [--programs N]
      Run N random programs (default 1000) generated from seed N (default 1) on a device and
      on the CPU backend, and compare their results; progress after each kernel, every
      mismatch with its program, then `N passed, M failed`. Exit code 1 on a mismatch.
  bench [--json] [--filter S] [--device SPEC[,SPEC...]] [--size N] [--reps R]
      Run the benchmarks vadd, saxpy, dot and sum, the pattern benchmarks pat_vadd,
      pat_saxpy, pat_dot, pat_dot_unfused, pat_sum, pat_scan, its variants
      pat_scan_lookback, _k4, _k8, _k12, _g512_k8, _g512_k16 and pat_scan_multipass, pat_sort
      and its variants pat_sort_b4, _b6, _k8, _k12, _k20, _g128, _m4, _m16, _pairs, _u64, and the
      SGEMM benchmarks sgemm and sgemm_<tiling> (those whose name contains S; --filter
      pat_sort runs every sort) with strata kernels on a device and with a baseline (rayon on
      the host; on CUDA devices hand-written CUDA C, and cuBLAS for SGEMM); N elements
      (default 2^24, written as a number or as 2^K), median of R repetitions (default 10).
      SGEMM multiplies square matrices of 4096 (CUDA), 1024 (other GPUs) or 128 (CPU
      devices), whatever N. --json: one JSON object per line.
  ptx [--arch N] [--filter S]
      Compile every conformance kernel (those whose name contains S) to PTX for sm_N (default
      90) with NVRTC, through the PTX disk cache; no GPU needed. Prints how many were compiled
      and how many came from the cache, and NVRTC's version. Exit code 1 if one fails.
  help
      Print this text (so do -h and --help).

A device SPEC is `cpu`, `opencl:N`, `cuda:N` (the N-th device of that backend, from 0; see
`strata devices`) or `best` (the first CUDA device, else the first OpenCL GPU, else the CPU);
the default is `best`.";

/// A command-line error: the message, printed with a usage hint; exit code 2.
struct UsageError(String);

fn usage_error(msg: impl Into<String>) -> UsageError {
    UsageError(msg.into())
}

/// Writes to stdout; a closed stdout (e.g. `strata devices | head -1`) ends the program quietly.
fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    if writeln!(o, "{s}").and_then(|_| o.flush()).is_err() {
        std::process::exit(0);
    }
}

/// The parsed command line.
enum Command {
    Help,
    Devices {
        json: bool,
        why: bool,
    },
    Check {
        device: String,
        filter: Option<String>,
    },
    Ptx {
        arch: u32,
        filter: Option<String>,
    },
    Difftest {
        device: String,
        seed: u64,
        programs: usize,
    },
    Bench {
        json: bool,
        device: String,
        opts: BenchOptions,
    },
}

/// Pulls the value of `flag` (`--flag VALUE` or `--flag=VALUE`).
fn value(
    flag: &str,
    inline: Option<&str>,
    rest: &mut impl Iterator<Item = String>,
) -> Result<String, UsageError> {
    match inline {
        Some(v) => Ok(v.to_string()),
        None => rest
            .next()
            .ok_or_else(|| usage_error(format!("`{flag}` needs a value"))),
    }
}

/// A positive count: a decimal number or `2^K`.
fn count(flag: &str, v: &str) -> Result<usize, UsageError> {
    let bad = || {
        usage_error(format!(
            "`{flag}` takes a positive whole number (e.g. 4096 or 2^24), not `{v}`"
        ))
    };
    let n = match v.split_once('^') {
        Some(("2", k)) => {
            let k: u32 = k.parse().map_err(|_| bad())?;
            1usize
                .checked_shl(k)
                .filter(|_| k < usize::BITS)
                .ok_or_else(bad)?
        }
        Some(_) => return Err(bad()),
        None => v.parse::<usize>().map_err(|_| bad())?,
    };
    if n == 0 {
        return Err(bad());
    }
    Ok(n)
}

fn parse(args: Vec<String>) -> Result<Command, UsageError> {
    let mut it = args.into_iter();
    let cmd = match it.next() {
        None => return Err(usage_error("no command given")),
        Some(c) => c,
    };
    if matches!(cmd.as_str(), "help" | "-h" | "--help") {
        return Ok(Command::Help);
    }
    if !matches!(
        cmd.as_str(),
        "devices" | "check" | "difftest" | "bench" | "ptx"
    ) {
        return Err(usage_error(format!(
            "unknown command `{cmd}` (the commands are devices, check, difftest, bench, ptx and help)"
        )));
    }
    let (mut json, mut why) = (false, false);
    let mut device = "best".to_string();
    let mut filter = None;
    let mut opts = BenchOptions::default();
    let (mut seed, mut programs) = (1u64, 1000usize);
    let mut arch = 90u32;
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v)),
            _ => (arg.clone(), None),
        };
        if inline.is_some() && matches!(flag.as_str(), "--json" | "--why" | "--help") {
            return Err(usage_error(format!("`{flag}` takes no value")));
        }
        let allowed: &[&str] = match cmd.as_str() {
            "devices" => &["--json", "--why"],
            "check" => &["--device", "--filter"],
            "difftest" => &["--device", "--seed", "--programs"],
            "ptx" => &["--arch", "--filter"],
            _ => &["--json", "--filter", "--device", "--size", "--reps"],
        };
        if flag == "-h" || flag == "--help" {
            return Ok(Command::Help);
        }
        if !allowed.contains(&flag.as_str()) {
            let what = if flag.starts_with('-') {
                "unknown flag"
            } else {
                "unexpected argument"
            };
            return Err(usage_error(format!(
                "{what} `{arg}` for `strata {cmd}` (it takes {})",
                allowed.join(", ")
            )));
        }
        match flag.as_str() {
            "--json" => json = true,
            "--why" => why = true,
            "--device" => device = value(&flag, inline, &mut it)?,
            "--filter" => filter = Some(value(&flag, inline, &mut it)?),
            "--size" => opts.size = count(&flag, &value(&flag, inline, &mut it)?)?,
            "--reps" => opts.reps = count(&flag, &value(&flag, inline, &mut it)?)?,
            "--programs" => programs = count(&flag, &value(&flag, inline, &mut it)?)?,
            "--arch" => {
                let v = value(&flag, inline, &mut it)?;
                arch = v
                    .trim_start_matches("sm_")
                    .parse()
                    .ok()
                    .filter(|a| (30..=200).contains(a))
                    .ok_or_else(|| {
                        usage_error(format!(
                            "`--arch` takes a compute capability such as 90 or sm_80, not `{v}`"
                        ))
                    })?;
            }
            "--seed" => {
                let v = value(&flag, inline, &mut it)?;
                let parsed = match v.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => v.parse(),
                };
                seed = parsed.map_err(|_| {
                    usage_error(format!(
                        "`--seed` takes a whole number (decimal or 0x hex), not `{v}`"
                    ))
                })?;
            }
            _ => unreachable!("every allowed flag is handled"),
        }
    }
    Ok(match cmd.as_str() {
        "devices" => Command::Devices { json, why },
        "check" => Command::Check { device, filter },
        "ptx" => Command::Ptx { arch, filter },
        "difftest" => Command::Difftest {
            device,
            seed,
            programs,
        },
        _ => {
            opts.filter = filter;
            Command::Bench { json, device, opts }
        }
    })
}

fn devices(json: bool, why: bool) -> ExitCode {
    for (i, d) in strata::devices().iter().enumerate() {
        if json {
            out(&d.info().to_json());
        } else {
            if i > 0 {
                out("");
            }
            out(&d.info().to_string());
        }
    }
    if why {
        let missing = strata::unavailable_backends();
        if json {
            for (b, reason) in &missing {
                out(&format!(
                    "{{\"backend\":{},\"unavailable\":{}}}",
                    strata::json_str(b.name()),
                    strata::json_str(reason)
                ));
            }
        } else if missing.is_empty() {
            out("\nevery backend has devices");
        } else {
            out("\nunavailable backends:");
            for (b, reason) in &missing {
                out(&format!("  {b}: {reason}"));
            }
        }
        let problems = strata::device_problems();
        if json {
            for (b, problem) in &problems {
                out(&format!(
                    "{{\"backend\":{},\"problem\":{}}}",
                    strata::json_str(b.name()),
                    strata::json_str(problem)
                ));
            }
        } else if !problems.is_empty() {
            out("\ndevices that could not be opened:");
            for (b, problem) in &problems {
                out(&format!("  {b}: {problem}"));
            }
        }
    }
    ExitCode::SUCCESS
}

fn open(spec: &str) -> Result<(Device, Queue), strata::Error> {
    let device = Device::from_spec(spec)?;
    let queue = Queue::new(&device)?;
    Ok((device, queue))
}

fn check(spec: &str, filter: Option<&str>) -> ExitCode {
    let (device, queue) = match open(spec) {
        Ok(dq) => dq,
        Err(e) => return fail(&e.to_string()),
    };
    eprintln!(
        "conformance on {} ({})",
        device.info().spec(),
        device.info().name
    );
    let report = conformance::run(&queue, filter, |name, r| match r {
        Ok(()) => out(&format!("ok   {name}")),
        Err(m) => out(&format!("FAIL {name}: {}", m.replace('\n', "\n    "))),
    });
    out(&report.summary());
    if report.passed.is_empty() && report.failed.is_empty() {
        return fail(&format!(
            "no conformance case name contains `{}`",
            filter.unwrap_or_default()
        ));
    }
    if report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn difftest(spec: &str, seed: u64, programs: usize) -> ExitCode {
    let (cpu, other) = match (open("cpu"), open(spec)) {
        (Ok((_, c)), Ok((_, o))) => (c, o),
        (Err(e), _) | (_, Err(e)) => return fail(&e.to_string()),
    };
    let info = other.device().info();
    eprintln!(
        "differential test of {} ({}) against cpu, seed {seed}, {programs} programs",
        info.spec(),
        info.name
    );
    let mut shown = 0;
    let report = difftest::run_with(&cpu, &other, seed, programs, |done, r| {
        for m in &r.failed[shown..] {
            out(&format!("FAIL {}", m.replace('\n', "\n    ")));
        }
        shown = r.failed.len();
        out(&format!(
            "{done}/{programs} programs: {} passed, {} failed",
            r.passed, r.failed_programs
        ));
    });
    match report {
        Ok(r) => {
            out(&r.summary());
            if r.failed_programs == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => fail(&e),
    }
}

fn bench(json: bool, spec: &str, opts: &BenchOptions) -> ExitCode {
    // Several devices (`cpu,opencl:0`) run one after the other in the same process, each beside
    // the same rayon baseline, so their tables can be compared side by side.
    let mut devices = Vec::new();
    for one in spec.split(',') {
        match Device::from_spec(one) {
            Ok(d) => devices.push(d),
            Err(e) => return fail(&e.to_string()),
        }
    }
    for device in devices {
        let code = bench_one(json, &device, opts);
        if code != ExitCode::SUCCESS {
            return code;
        }
    }
    ExitCode::SUCCESS
}

fn bench_one(json: bool, device: &Device, opts: &BenchOptions) -> ExitCode {
    let device = device.clone();
    let results = bench::run_with(&device, opts, |r| {
        if json {
            out(&r.to_json());
        } else {
            eprintln!(
                "{:<6} done: strata {:.3} ms, {} {:.3} ms",
                r.bench,
                r.strata_s * 1e3,
                r.baseline,
                r.baseline_s * 1e3
            );
        }
    });
    match results {
        Ok(rs) => {
            if !json {
                out(bench::table(&device, &rs).trim_end());
            }
            match bench::gpu_limits(&device, opts) {
                Ok(Some(l)) if json => {
                    let (cold, warm, wall) = match warm_start(&device) {
                        Ok(w) => w,
                        Err(e) => return fail(&e),
                    };
                    out(&format!(
                        "{{\"device\":{},\"copy_gbps\":{},\"strata_launch_s\":{},\"raw_launch_s\":{},\"raw_events_launch_s\":{},\"strata_blocking_s\":{},\"raw_blocking_s\":{},\"ten_kernels_cold_s\":{},\"ten_kernels_warm_s\":{},\"warm_process_s\":{},{}}}",
                        strata::json_str(&device.info().spec()),
                        l.copy_gbps,
                        l.launch.strata_launch_s,
                        l.launch.raw_launch_s,
                        l.launch.raw_events_launch_s,
                        l.launch.strata_blocking_s,
                        l.launch.raw_blocking_s,
                        cold,
                        warm,
                        wall,
                        match &l.cublas {
                            Ok(path) => format!("\"cublas\":{}", strata::json_str(path)),
                            Err(why) => format!("\"cublas_missing\":{}", strata::json_str(why)),
                        }
                    ))
                }
                Ok(Some(l)) => {
                    out(&format!(
                        "device-to-device copy: {:.1} GB/s; fraction of it reached by strata:",
                        l.copy_gbps
                    ));
                    for r in rs.iter().filter(|r| r.flops == 0) {
                        out(&format!(
                            "  {:<6} {:.2}",
                            r.bench,
                            r.strata_gbps() / l.copy_gbps
                        ));
                    }
                    match &l.cublas {
                        _ if rs.iter().all(|r| r.flops == 0) => {}
                        Ok(desc) => out(&format!("SGEMM baseline: {desc}; strata reaches:")),
                        Err(why) => out(&format!(
                            "cuBLAS baseline MISSING: {why}; the sgemm rows compare with hand-written CUDA C; strata reaches:"
                        )),
                    }
                    for r in rs.iter().filter(|r| r.flops > 0) {
                        out(&format!(
                            "  {:<22} {:.2} TFLOP/s, {:.2} x the {} baseline's speed",
                            r.bench,
                            r.strata_tflops(),
                            1.0 / r.ratio,
                            r.baseline
                        ));
                    }
                    let c = &l.launch;
                    out(&format!(
                        "launch of a cached kernel: strata {:.2} us, raw cuLaunchKernel {:.2} us (ratio {:.2}; raw with two event records {:.2} us)",
                        c.strata_launch_s * 1e6,
                        c.raw_launch_s * 1e6,
                        c.strata_launch_s / c.raw_launch_s,
                        c.raw_events_launch_s * 1e6
                    ));
                    out(&format!(
                        "launch and wait: strata {:.2} us, raw launch + cuStreamSynchronize {:.2} us (ratio {:.2})",
                        c.strata_blocking_s * 1e6,
                        c.raw_blocking_s * 1e6,
                        c.strata_blocking_s / c.raw_blocking_s
                    ));
                    match warm_start(&device) {
                        Ok((cold, warm, wall)) => out(&format!(
                            "ten kernels ready: {:.2} ms compiling, {:.2} ms from the disk cache (that process: {:.1} ms in all)",
                            cold * 1e3,
                            warm * 1e3,
                            wall * 1e3
                        )),
                        Err(e) => return fail(&e),
                    }
                }
                Ok(None) => {}
                Err(e) => return fail(&e.to_string()),
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e.to_string()),
    }
}

fn ptx(arch: u32, filter: Option<&str>) -> ExitCode {
    let version = match strata::cuda::nvrtc_version() {
        Ok(v) => v,
        Err(why) => return fail(&why),
    };
    let cpu = match open("cpu") {
        Ok((_, q)) => q,
        Err(e) => return fail(&e.to_string()),
    };
    // The kernels are those the suite builds, captured while it runs on the CPU backend.
    let (report, kernels) = strata::capture_kernels(|| conformance::run(&cpu, filter, |_, _| {}));
    if !report.failed.is_empty() {
        return fail(&format!(
            "the conformance suite failed on the CPU backend: {}",
            report.summary()
        ));
    }
    if kernels.is_empty() {
        return fail(&format!(
            "no conformance kernel matches the filter `{}`",
            filter.unwrap_or("")
        ));
    }
    let (mut compiled, mut cached, mut failed) = (0, 0, 0);
    for k in &kernels {
        let r = strata::codegen::cuda(k.valid_function())
            .and_then(|g| strata::cuda::compile_ptx(k.name(), &g, arch, &[]));
        match r {
            Ok(p) if p.from_cache => cached += 1,
            Ok(_) => compiled += 1,
            Err(e) => {
                failed += 1;
                eprintln!("{e}\n");
            }
        }
    }
    let cache =
        strata::cuda::ptx_cache_dir().map_or("disabled".to_string(), |d| d.display().to_string());
    out(&format!(
        "NVRTC {}.{}, sm_{arch}: {} kernels, {compiled} compiled, {cached} from the cache ({cache}), {failed} failed",
        version.0,
        version.1,
        kernels.len()
    ));
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("strata: error: {msg}");
    ExitCode::FAILURE
}

/// The hidden command `strata __start-ten-kernels SPEC`: prints the seconds
/// [`bench::start_ten_kernels`] took in this process (run by `bench` in child processes).
fn start_ten_kernels(spec: &str) -> ExitCode {
    match Device::from_spec(spec)
        .map_err(strata::bench::BenchError::from)
        .and_then(|d| bench::start_ten_kernels(&d))
    {
        Ok(s) => {
            out(&s.to_string());
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e.to_string()),
    }
}

/// The warm start of a program of ten kernels on `device`: two fresh processes share an
/// empty kernel cache; the first compiles, the second reads the cache. Returns (cold kernels
/// seconds, warm kernels seconds, warm process seconds).
fn warm_start(device: &Device) -> Result<(f64, f64, f64), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find strata itself: {e}"))?;
    let cache = std::env::temp_dir().join(format!("strata-warm-start-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let run = || -> Result<(f64, f64), String> {
        let t = std::time::Instant::now();
        let o = std::process::Command::new(&exe)
            .args(["__start-ten-kernels", &device.info().spec()])
            .env("STRATA_CUDA_CACHE", &cache)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        let wall = t.elapsed().as_secs_f64();
        let text = String::from_utf8_lossy(&o.stdout);
        let s: f64 = text.trim().parse().map_err(|_| {
            format!(
                "the warm-start probe failed: {}{}",
                text,
                String::from_utf8_lossy(&o.stderr)
            )
        })?;
        Ok((s, wall))
    };
    let cold = run();
    let warm = run();
    let _ = std::fs::remove_dir_all(&cache);
    let ((cold, _), (warm, wall)) = (cold?, warm?);
    Ok((cold, warm, wall))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [cmd, spec] = &args[..] {
        if cmd == "__start-ten-kernels" {
            return start_ten_kernels(spec);
        }
    }
    match parse(args) {
        Ok(Command::Help) => {
            out(USAGE);
            ExitCode::SUCCESS
        }
        Ok(Command::Devices { json, why }) => devices(json, why),
        Ok(Command::Check { device, filter }) => check(&device, filter.as_deref()),
        Ok(Command::Ptx { arch, filter }) => ptx(arch, filter.as_deref()),
        Ok(Command::Difftest {
            device,
            seed,
            programs,
        }) => difftest(&device, seed, programs),
        Ok(Command::Bench { json, device, opts }) => bench(json, &device, &opts),
        Err(UsageError(m)) => {
            eprintln!("strata: error: {m}\nrun `strata help` for usage");
            ExitCode::from(2)
        }
    }
}
