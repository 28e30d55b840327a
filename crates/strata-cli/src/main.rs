//! The `strata` command: list devices, run the conformance suite, run differential tests, run
//! the benchmarks and draw them, tune the patterns' kernels, compile every conformance kernel
//! with NVRTC, print shell completions. The command line is parsed by `clap` (derive):
//! `devices`, `check`, `difftest`, `bench` (`--plot FILE.svg`), `tune`, `plot`, `ptx`,
//! `completions`.
//!
//! Exit codes: 0 success, 1 failure (a device error, a failed conformance case, a differential
//! mismatch, a wrong benchmark result), 2 bad command line (clap's usage errors, and device
//! specs that are no spec, checked while the command line is parsed). Every error is one line
//! `error: ...` on stderr, clap's and ours alike; `-q` leaves only results and errors.

use clap::{CommandFactory, Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use strata::{Device, Queue};
use strata_cli::bench::{self, BenchOptions, BenchResult};
use strata_cli::progress::Progress;
use strata_cli::report::{self, BenchLine, DeviceLine, DifftestLine, GpuLimitsLine, HostLine};
use strata_cli::{conformance, difftest};

const SPECS: &str = "\
A device SPEC is `cpu` (the compiled CPU backend), `interp` (the CPU interpreter), `opencl:N`, \
`cuda:N`, `vulkan:N` (the N-th device of that backend, from 0; see `strata devices`) or `best` \
(the first CUDA device, else the first OpenCL or Vulkan GPU, else `cpu`); the default is `best`. Any SPEC may end in `+checked` (`cpu+checked`, `opencl:0+checked`): the device in checked mode, where every access is bounds-checked and `interp+checked` also finds data races and uninitialized reads; `strata check` then also runs the planted-bug cases (`checked/`).

Exit codes: 0 success, 1 failure (a device error, a failed conformance case, a differential \
mismatch, a wrong benchmark result), 2 bad command line (an invalid SPEC included).";

/// Write GPU kernels once, in Rust: the strata tools.
#[derive(Parser)]
#[command(name = "strata", version, after_long_help = SPECS, after_help = SPECS)]
#[command(arg_required_else_help = true, disable_help_subcommand = false)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print what the devices compile on stderr: ir, opencl, cuda (comma-separated).
    ///
    /// `ir`: the optimized IR of each kernel; `opencl`: the OpenCL C generated for OpenCL
    /// devices; `cuda`: the CUDA C++ for CUDA devices. Added to what `STRATA_DUMP` asks for.
    #[arg(long, global = true, value_name = "WHAT[,WHAT...]", value_parser = parse_dump)]
    dump: Option<strata::settings::Dump>,
    /// Print only results and errors: no progress bar, no notes on standard error.
    #[arg(short, long, global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Print the property summary of every device.
    Devices {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        /// Also list the backends that have no device here, and why.
        #[arg(long)]
        why: bool,
    },
    /// Run the conformance suite on a device.
    ///
    /// One line per case, then `N passed, M failed`. Exit code 1 if a case failed; cases the
    /// device cannot run (f16 on PoCL) are counted as unsupported, not failed.
    #[command(after_help = SPECS)]
    Check {
        /// The device (see SPEC below).
        #[arg(short, long, default_value = "best", value_name = "SPEC", value_parser = parse_spec)]
        device: String,
        /// Only the cases whose name contains this text.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
    },
    /// Compare random programs on a device against the interpreter (`interp`).
    ///
    /// Runs random programs on the device and on the CPU interpreter (`interp`, the reference)
    /// and compares their results: progress after each kernel, every mismatch with its program,
    /// then `N passed, M failed`. Exit code 1 on a mismatch.
    #[command(after_help = SPECS)]
    Difftest {
        /// The device compared with the interpreter.
        #[arg(short, long, default_value = "best", value_name = "SPEC", value_parser = parse_spec)]
        device: String,
        /// The seed the programs are generated from (decimal or 0x hex).
        #[arg(long, default_value = "1", value_parser = parse_seed)]
        seed: u64,
        /// How many programs (a number or 2^K).
        #[arg(long, default_value = "1000", value_parser = parse_count)]
        programs: usize,
        /// Print the summary as one JSON object (after the progress lines).
        #[arg(long)]
        json: bool,
        /// Run only program N of the run (alone in its kernel, with the same inputs): to
        /// reproduce a reported mismatch.
        #[arg(long, value_name = "N", conflicts_with = "from")]
        only: Option<usize>,
        /// Start at program N of the run: programs N .. N + PROGRAMS, the same programs
        /// with the same inputs as in a run from 0 (to go on where an earlier run stopped;
        /// a multiple of 100 also gives the same kernels).
        #[arg(long, value_name = "N", default_value = "0")]
        from: usize,
    },
    /// Time strata kernels against a baseline (rayon, CUDA C, cuBLAS).
    ///
    /// Runs the benchmarks with strata kernels on a device and with a baseline (rayon on the
    /// host; on CUDA devices hand-written CUDA C, and cuBLAS for SGEMM), median of R runs.
    ///
    /// The benchmarks: vadd, saxpy, dot and sum; the patterns pat_vadd, pat_saxpy, pat_dot,
    /// pat_dot_unfused, pat_sum, pat_scan (and its variants pat_scan_lookback, _k4, _k8, _k12,
    /// _g512_k8, _g512_k16, pat_scan_multipass), pat_sort (and pat_sort_b4, _b6, _k8, _k12,
    /// _k20, _g128, _m4, _m16, _pairs, _u64); pat_vadd_tuned, pat_sum_tuned, pat_scan_tuned and
    /// pat_sort_tuned, each beside its default row, with the tuning record of the size in the
    /// records file (see `strata tune`) or else tuned in the run; SGEMM, sgemm and sgemm_TILING, on square
    /// matrices of 4096 (CUDA), 1024 (other GPUs) or 128 (CPU devices), whatever the size;
    /// and the compute kernels mandelbrot (2048 x 2048 pixels), nbody (16384 bodies) and
    /// matmul (1024 x 1024, local-memory tiles), with their compile times, scaled down by a
    /// size below 2^24 (and 16 times on interp); the host overhead of a pattern call and of a
    /// launch (overhead_map, overhead_reduce, overhead_launch1, 2, 64); and the transfers
    /// transfer_write, transfer_read and transfer_read_into (the vector size, against one host
    /// thread's copy of the same bytes). Without a filter (or with `--filter compile`,
    /// alone) also the compile time of every conformance kernel on the device: median, 90th
    /// percentile and max.
    #[command(after_help = SPECS)]
    Bench {
        /// One JSON object per benchmark (and per CUDA device, one of its limits; per CPU device,
        /// one of the host's core-to-core handover before and after the benchmarks).
        #[arg(long)]
        json: bool,
        /// Only the benchmarks whose name contains this text (`pat_sort` runs every sort).
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        /// The device, or several separated by commas, run one after the other.
        #[arg(short, long, default_value = "best", value_name = "SPEC[,SPEC...]", value_parser = parse_specs)]
        device: String,
        /// Elements per vector (a number or 2^K); below 2^24 it also scales down the work of
        /// mandelbrot, nbody and matmul by size / 2^24.
        #[arg(long, default_value = "2^24", value_parser = parse_count)]
        size: usize,
        /// Timed repetitions; the median is reported.
        #[arg(long, default_value = "10", value_parser = parse_count)]
        reps: usize,
        /// Also draw the ratios as a bar chart, one panel per device, into this SVG file.
        #[arg(long, value_name = "FILE.svg", value_parser = parse_svg)]
        plot: Option<PathBuf>,
    },
    /// Tune the built-in pattern kernels on a device and save the records.
    ///
    /// Tunes the built-in pattern kernels (map, reduce, scan, sort; of u32 and f32 unless
    /// `--types` says otherwise) on a device: times
    /// candidate stagings from the device's defaults, one parameter at a time, keep the fastest,
    /// print the gain, and save the records that later processes' patterns use (the records
    /// file: `$STRATA_TUNE_DIR/records.tsv`, else `~/.cache/strata/tune/records.tsv`).
    #[command(after_help = SPECS)]
    Tune {
        /// The device, or several separated by commas, tuned one after the other.
        #[arg(short, long, default_value = "best", value_name = "SPEC[,SPEC...]", value_parser = parse_specs)]
        device: String,
        /// Elements per operation (a number or 2^K); records apply to the nearest size class.
        #[arg(long, default_value = "2^22", value_parser = parse_count)]
        size: usize,
        /// Timed runs per configuration; the median counts.
        #[arg(long, default_value = "5", value_parser = parse_count)]
        reps: usize,
        /// The operations, separated by commas.
        #[arg(long, default_value = "map,reduce,scan,sort", value_parser = strata_cli::tune::parse_ops)]
        ops: std::vec::Vec<strata::patterns::tune::TunedOp>,
        /// The element types each operation is tuned for, separated by commas (u32, i32, f32,
        /// u64, i64); `map` is tuned once, whatever the type.
        #[arg(long, default_value = "u32,f32", value_parser = strata_cli::tune::parse_types)]
        types: std::vec::Vec<std::string::String>,
        /// The records file (instead of the default one).
        #[arg(long, value_name = "FILE")]
        records: Option<PathBuf>,
        /// Tune and print, but save nothing.
        #[arg(long)]
        no_save: bool,
        /// Tune nothing: print what the patterns run with on the device at this size, from the
        /// records file.
        #[arg(long)]
        show: bool,
        /// One JSON object per tuned operation.
        #[arg(long)]
        json: bool,
    },
    /// Draw saved `strata bench --json` output as a bar chart of ratios per device.
    Plot {
        /// Files of `strata bench --json` lines (`-` for stdin).
        #[arg(required = true, value_name = "RESULTS")]
        inputs: Vec<PathBuf>,
        /// The SVG file to write.
        #[arg(long, short, value_name = "FILE.svg", value_parser = parse_svg)]
        out: PathBuf,
    },
    /// Compile every conformance kernel to PTX with NVRTC (no GPU needed).
    ///
    /// Compiles through the PTX disk cache and prints how many kernels were compiled and how
    /// many came from the cache.
    Ptx {
        /// The compute capability, as 90 or sm_90.
        #[arg(long, default_value = "90", value_parser = parse_arch)]
        arch: u32,
        /// Only the kernels of the cases whose name contains this text.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
    },
    /// Print a completion script for a shell.
    ///
    /// For bash: `strata completions bash > ~/.local/share/bash-completion/completions/strata`;
    /// zsh: into a folder of `$fpath` as `_strata`; fish:
    /// `~/.config/fish/completions/strata.fish`; also elvish and powershell.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Internal: prints the seconds ten kernels take to be ready on SPEC in this process
    /// (run by `bench` in child processes, to measure the disk cache).
    #[command(name = "__start-ten-kernels", hide = true)]
    StartTenKernels { spec: String },
}

/// A `--dump` list: `ir`, `opencl`, `cuda`.
fn parse_dump(v: &str) -> Result<strata::settings::Dump, String> {
    strata::settings::Dump::parse(v)
}

/// The settings of this run: `STRATA_DUMP`, `STRATA_CPU_DISASM` and `STRATA_CUDA_LOAD`
/// ([`strata::Settings::from_env`]) and `--dump`, set on every device (other than the
/// default only; the device list is not opened for nothing).
fn apply_settings(dump: Option<strata::settings::Dump>) {
    let mut settings = strata::Settings::from_env();
    if let Some(d) = dump {
        settings.dump = settings.dump.union(d);
    }
    if settings != strata::Settings::default() {
        for d in strata::devices() {
            d.set_settings(settings.clone());
        }
    }
}

/// A device spec (`cpu`, `opencl:0`, `cuda:1+checked`, ...): one that is no spec is a bad
/// command line (exit code 2, clap's usage error). A well-formed spec of a device that is not
/// here (`cuda:9`) passes: the command fails later with exit code 1, naming the device.
fn parse_spec(v: &str) -> Result<String, String> {
    match Device::from_spec(v) {
        Err(e @ strata::Error::InvalidDeviceSpec(_)) => Err(e.to_string()),
        _ => Ok(v.to_string()),
    }
}

/// Device specs separated by commas, each checked by [`parse_spec`].
fn parse_specs(v: &str) -> Result<String, String> {
    for one in v.split(',') {
        parse_spec(one)?;
    }
    Ok(v.to_string())
}

/// A positive count: a decimal number or `2^K`.
fn parse_count(v: &str) -> Result<usize, String> {
    let bad = || format!("takes a positive whole number (e.g. 4096 or 2^24), not `{v}`");
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

/// A seed: decimal or `0x` hexadecimal.
fn parse_seed(v: &str) -> Result<u64, String> {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse(),
    }
    .map_err(|_| format!("takes a whole number (decimal or 0x hex), not `{v}`"))
}

/// A compute capability: `90` or `sm_90`.
fn parse_arch(v: &str) -> Result<u32, String> {
    v.trim_start_matches("sm_")
        .parse()
        .ok()
        .filter(|a| (30..=200).contains(a))
        .ok_or_else(|| format!("takes a compute capability such as 90 or sm_80, not `{v}`"))
}

/// A chart file: its name must end in `.svg`.
fn parse_svg(v: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(v);
    bench::plot::check_svg_path(&p)?;
    Ok(p)
}

/// Writes to stdout; a closed stdout (e.g. `strata devices | head -1`) ends the program quietly.
fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    if writeln!(o, "{s}").and_then(|_| o.flush()).is_err() {
        std::process::exit(0);
    }
}

/// Reports a failure: one line `error: MSG` on stderr (clap's style for usage errors too), and
/// exit code 1.
fn fail(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::FAILURE
}

/// Whether `-q` was given.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A note on stderr (what runs, where a file went), left out with `-q`.
macro_rules! note {
    ($($arg:tt)*) => {
        if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
            eprintln!($($arg)*);
        }
    };
}

fn devices(json: bool, why: bool) -> ExitCode {
    for (i, d) in strata::devices().iter().enumerate() {
        if json {
            out(&report::line(&DeviceLine(d.info())));
        } else {
            if i > 0 {
                out("");
            }
            out(&d.info().to_string());
        }
    }
    if !why {
        return ExitCode::SUCCESS;
    }
    let missing = strata::unavailable_backends();
    let problems = strata::device_problems();
    if json {
        for (b, reason) in missing {
            out(&report::line(&report::Unavailable {
                backend: b.name().into(),
                unavailable: reason,
            }));
        }
        for (b, problem) in problems {
            out(&report::line(&report::Problem {
                backend: b.name().into(),
                problem,
            }));
        }
        return ExitCode::SUCCESS;
    }
    if missing.is_empty() {
        out("\nevery backend has devices");
    } else {
        out("\nunavailable backends:");
        for (b, reason) in &missing {
            out(&format!("  {b}: {reason}"));
        }
    }
    if !problems.is_empty() {
        out("\ndevices that could not be opened:");
        for (b, problem) in &problems {
            out(&format!("  {b}: {problem}"));
        }
    }
    ExitCode::SUCCESS
}

fn open(spec: &str) -> Result<(Device, Queue), strata::Error> {
    let device = Device::from_spec(spec)?;
    let queue = Queue::new(&device)?;
    Ok((device, queue))
}

/// Queues on the interpreter (the reference) and on the device `spec`, for `difftest`.
fn interp_and(spec: &str) -> Result<(Queue, Queue), strata::Error> {
    Ok((open("interp")?.1, open(spec)?.1))
}

fn check(spec: &str, filter: Option<&str>) -> ExitCode {
    let (device, queue) = match open(spec) {
        Ok(dq) => dq,
        Err(e) => return fail(&e.to_string()),
    };
    note!("conformance on {} ({})", device.spec(), device.info().name);
    let progress = Progress::new("cases", conformance::matching(filter).len() as u64);
    let mut done = 0;
    let report = conformance::run_cases(&queue, filter, |name, r| {
        done += 1;
        progress.suspend(|| match r {
            conformance::Outcome::Passed => out(&format!("ok   {name}")),
            conformance::Outcome::Failed(m) => {
                out(&format!("FAIL {name}: {}", m.replace('\n', "\n    ")))
            }
            conformance::Outcome::Unsupported(what) => {
                out(&format!("unsupported {name}: the device lacks {what}"))
            }
        });
        progress.set(done, name);
    });
    progress.finish();
    out(&report.summary());
    if report.passed.is_empty() && report.failed.is_empty() && report.unsupported.is_empty() {
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

fn difftest(spec: &str, seed: u64, first: usize, programs: usize, json: bool) -> ExitCode {
    let (interp, other) = match interp_and(spec) {
        Ok(qs) => qs,
        Err(e) => return fail(&e.to_string()),
    };
    let info = other.device().info();
    let which = if first == 0 {
        format!("{programs} programs")
    } else {
        format!("{programs} programs from program {first}")
    };
    note!(
        "differential test of {} ({}) against interp (the reference), seed {seed}, {which}",
        other.device().spec(),
        info.name
    );
    let progress = Progress::new("programs", programs as u64);
    let mut shown = 0;
    let timeout = difftest::kernel_timeout;
    let report = difftest::run_from(
        &interp,
        &other,
        seed,
        first,
        programs,
        timeout,
        |done, r| {
            progress.suspend(|| {
                for m in &r.failed[shown..] {
                    out(&format!("FAIL {}", m.replace('\n', "\n    ")));
                }
                out(&format!(
                    "{done}/{programs} programs: {} passed, {} failed",
                    r.passed, r.failed_programs
                ));
            });
            shown = r.failed.len();
            progress.set(done as u64, format!("{} failed", r.failed_programs));
        },
    );
    progress.finish();
    match report {
        Ok(r) => {
            out(&r.summary());
            if json {
                out(&report::line(&DifftestLine {
                    device: other.device().spec(),
                    seed,
                    first,
                    programs,
                    passed: r.passed,
                    failed_programs: r.failed_programs,
                    kernels: r.kernels,
                    compared: r.compared,
                    failures: r.failed.clone(),
                }));
            }
            if r.failed_programs == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => fail(&e),
    }
}

/// `strata difftest --only N`: program `index` of the run with `seed`, alone.
fn difftest_one(spec: &str, seed: u64, index: usize) -> ExitCode {
    let (interp, other) = match interp_and(spec) {
        Ok(qs) => qs,
        Err(e) => return fail(&e.to_string()),
    };
    match difftest::run_one(&interp, &other, seed, index) {
        Ok(r) => {
            for m in &r.failed {
                out(&format!("FAIL {}", m.replace('\n', "\n    ")));
            }
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

fn bench_all(json: bool, spec: &str, opts: &BenchOptions, plot: Option<&Path>) -> ExitCode {
    // Several devices (`cpu,opencl:0`) run one after the other in the same process, each beside
    // the same rayon baseline, so their tables can be compared side by side.
    let mut devices = Vec::new();
    for one in spec.split(',') {
        match Device::from_spec(one) {
            Ok(d) => devices.push(d),
            Err(e) => return fail(&e.to_string()),
        }
    }
    let mut lines = Vec::new();
    for device in devices {
        match bench_one(json, &device, opts) {
            Ok(rs) => lines.extend(rs.iter().map(BenchLine::from)),
            Err(msg) => return fail(&msg),
        }
    }
    if let Some(path) = plot {
        if let Err(e) = bench::plot::write_svg(path, &lines) {
            return fail(&e);
        }
        note!("chart written to {}", path.display());
    }
    ExitCode::SUCCESS
}

/// `strata tune`: tunes (or with `show`, reports) each device of `spec`; saves into `file`.
fn tune(
    spec: &str,
    opts: &strata_cli::tune::TuneOptions,
    file: Option<&Path>,
    save: bool,
    show: bool,
    json: bool,
) -> ExitCode {
    use strata_cli::tune::{self as t, TuneLine};
    if (save || show) && file.is_none() {
        return fail(
            "no records file: STRATA_TUNE_DIR is off and --records is not given (use --no-save to tune without saving)",
        );
    }
    for one in spec.split(',') {
        let (device, queue) = match open(one) {
            Ok(dq) => dq,
            Err(e) => return fail(&e.to_string()),
        };
        if show {
            let path = file.expect("checked above");
            match strata::patterns::tune::Tuning::load(path) {
                Ok(tuning) => {
                    out(&format!("records: {}", path.display()));
                    out(t::show(&device, &tuning, opts.size, &opts.types).trim_end());
                }
                Err(e) => return fail(&e.to_string()),
            }
            continue;
        }
        let result = t::run(&queue, opts, |r| {
            if json {
                out(&report::line(&TuneLine::new(&device, r)));
            } else {
                note!(
                    "tuned {} on {}: {:.2}x ({} configurations)",
                    r.record.op,
                    device.spec(),
                    r.gain(),
                    r.trials.len()
                );
            }
        });
        let (tuner, reports) = match result {
            Ok(r) => r,
            Err(e) => return fail(&e.to_string()),
        };
        if !json {
            out(t::table(&device, &reports).trim_end());
        }
        if save {
            let path = file.expect("checked above");
            if let Err(e) = tuner.save(path) {
                return fail(&e.to_string());
            }
            note!("records saved to {}", path.display());
        }
    }
    ExitCode::SUCCESS
}

/// Says how many of the `what` the device cannot run, which, and why (the distinct reasons),
/// without failing the command: on stdout, on stderr with `--json`.
fn unsupported_note(json: bool, device: &Device, what: &str, unsupported: &[(String, String)]) {
    if unsupported.is_empty() {
        return;
    }
    let mut reasons: Vec<&str> = unsupported.iter().map(|(_, r)| r.as_str()).collect();
    reasons.sort_unstable();
    reasons.dedup();
    let names: Vec<&str> = unsupported.iter().map(|(n, _)| n.as_str()).collect();
    let line = format!(
        "unsupported on {}: {} {what} ({}): {}",
        device.spec(),
        unsupported.len(),
        names.join(", "),
        reasons.join("; ")
    );
    if json {
        eprintln!("{line}");
    } else {
        out(&line);
    }
}

/// Prints how long `device` takes to compile the conformance suite's kernels.
fn suite_compile(json: bool, device: &Device) -> Result<(), String> {
    let c = bench::compute::suite_compile_times(device).map_err(|e| e.to_string())?;
    if json {
        out(&report::line(&report::SuiteCompileLine {
            device: device.spec(),
            compile_kernels: c.kernels,
            compile_median_s: c.median_s,
            compile_p90_s: c.p90_s,
            compile_max_s: c.max_s,
            compile_unsupported: c.unsupported.len(),
        }));
    } else {
        out(&format!(
            "compile time of the {} conformance kernels on {} (first build each): median {:.3} ms, 90th percentile {:.3} ms, max {:.3} ms",
            c.kernels,
            device.spec(),
            c.median_s * 1e3,
            c.p90_s * 1e3,
            c.max_s * 1e3
        ));
    }
    unsupported_note(json, device, "conformance kernels", &c.unsupported);
    Ok(())
}

fn bench_one(json: bool, device: &Device, opts: &BenchOptions) -> Result<Vec<BenchResult>, String> {
    if opts.filter.as_deref() == Some("compile") {
        suite_compile(json, device)?;
        return Ok(Vec::new());
    }
    // On a CPU device, how fast the host's cores hand a cache line over, before and after the
    // rows: on a virtual machine it changes from one minute to the next, and with it the rows
    // whose work-groups hand data to each other (the look-back scans).
    let host = device.info().is_cpu().then(bench::core_round_trip_ns);
    let progress = Progress::new(
        "benchmarks",
        bench::selected(opts.filter.as_deref()).len() as u64,
    );
    let mut done = 0;
    let mut unsupported: Vec<(String, String)> = Vec::new();
    let results = bench::run_rows(
        device,
        opts,
        |r| {
            done += 1;
            progress.suspend(|| {
                if json {
                    out(&report::line(&BenchLine::from(r)));
                } else {
                    note!(
                        "{:<6} done: strata {:.3} ms, {} {:.3} ms",
                        r.bench,
                        r.strata_s * 1e3,
                        r.baseline,
                        r.baseline_s * 1e3
                    );
                }
            });
            progress.set(done, r.bench);
        },
        |name, why| unsupported.push((name.to_string(), why.to_string())),
    );
    progress.finish();
    let rs = results.map_err(|e| e.to_string())?;
    if !json {
        out(bench::table(device, &rs).trim_end());
    }
    if let Some(before) = host {
        let after = bench::core_round_trip_ns();
        if json {
            out(&report::line(&HostLine {
                device: device.spec(),
                round_trip_before_ns: before,
                round_trip_after_ns: after,
            }));
        } else {
            let ns = |x: Option<f64>| {
                x.map_or(
                    "not measured (two threads could not run side by side)".to_string(),
                    |x| format!("{x:.0} ns"),
                )
            };
            out(&format!(
                "host: a cache line from one thread to another and back took {} before the benchmarks, {} after (a handover between work-groups costs about that: the look-back scans pay one per tile)",
                ns(before),
                ns(after)
            ));
        }
    }
    unsupported_note(json, device, "benchmarks", &unsupported);
    if opts.filter.is_none() {
        suite_compile(json, device)?;
    }
    let Some(l) = bench::gpu_limits(device, opts).map_err(|e| e.to_string())? else {
        return Ok(rs);
    };
    let (cold, warm, wall) = warm_start(device)?;
    if json {
        let (cublas, cublas_missing) = match &l.cublas {
            Ok(path) => (Some(path.clone()), None),
            Err(why) => (None, Some(why.clone())),
        };
        out(&report::line(&GpuLimitsLine {
            device: device.spec(),
            copy_gbps: l.copy_gbps,
            strata_launch_s: l.launch.strata_launch_s,
            raw_launch_s: l.launch.raw_launch_s,
            raw_events_launch_s: l.launch.raw_events_launch_s,
            strata_blocking_s: l.launch.strata_blocking_s,
            raw_blocking_s: l.launch.raw_blocking_s,
            ten_kernels_cold_s: cold,
            ten_kernels_warm_s: warm,
            warm_process_s: wall,
            cublas,
            cublas_missing,
        }));
        return Ok(rs);
    }
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
    out(&format!(
        "ten kernels ready: {:.2} ms compiling, {:.2} ms from the disk cache (that process: {:.1} ms in all)",
        cold * 1e3,
        warm * 1e3,
        wall * 1e3
    ));
    Ok(rs)
}

fn plot(inputs: &[PathBuf], path: &Path) -> ExitCode {
    let mut lines = Vec::new();
    for input in inputs {
        let text = if input.as_os_str() == "-" {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map(|_| s)
        } else {
            std::fs::read_to_string(input)
        };
        let text = match text {
            Ok(t) => t,
            Err(e) => return fail(&format!("cannot read {}: {e}", input.display())),
        };
        match report::read_bench_lines(&text) {
            Ok(ls) => lines.extend(ls),
            Err(e) => return fail(&format!("{}: {e}", input.display())),
        }
    }
    match bench::plot::write_svg(path, &lines) {
        Ok(()) => {
            note!(
                "chart of {} results written to {}",
                lines.len(),
                path.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
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

/// `strata __start-ten-kernels SPEC`: prints the seconds [`bench::start_ten_kernels`] took in
/// this process.
fn start_ten_kernels(spec: &str) -> ExitCode {
    match Device::from_spec(spec)
        .map_err(bench::BenchError::from)
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
            .args(["__start-ten-kernels", &device.spec()])
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
    // clap prints usage errors with exit code 2, and help (`-h`, `--help`, `strata help`)
    // with 0.
    let cli = Cli::parse();
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    strata_cli::progress::set_quiet(cli.quiet);
    apply_settings(cli.dump);
    match cli.command {
        Command::Devices { json, why } => devices(json, why),
        Command::Check { device, filter } => check(&device, filter.as_deref()),
        Command::Difftest {
            device,
            seed,
            programs,
            json,
            only,
            from,
        } => match only {
            Some(index) => difftest_one(&device, seed, index),
            None => difftest(&device, seed, from, programs, json),
        },
        Command::Bench {
            json,
            filter,
            device,
            size,
            reps,
            plot: chart,
        } => {
            let opts = BenchOptions { size, reps, filter };
            bench_all(json, &device, &opts, chart.as_deref())
        }
        Command::Tune {
            device,
            size,
            reps,
            ops,
            types,
            records,
            no_save,
            show,
            json,
        } => {
            let opts = strata_cli::tune::TuneOptions {
                size,
                reps,
                ops,
                types,
            };
            let file = records.or_else(strata::patterns::tune::default_path);
            tune(&device, &opts, file.as_deref(), !no_save, show, json)
        }
        Command::Plot { inputs, out } => plot(&inputs, &out),
        Command::Ptx { arch, filter } => ptx(arch, filter.as_deref()),
        Command::Completions { shell } => {
            let mut out = std::io::stdout();
            clap_complete::generate(shell, &mut Cli::command(), "strata", &mut out);
            ExitCode::SUCCESS
        }
        Command::StartTenKernels { spec } => start_ten_kernels(&spec),
    }
}
