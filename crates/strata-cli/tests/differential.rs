//! Differential tests: random well-typed kernels from `strata_cli::difftest` must give the same
//! results on the compiled CPU backend (`cpu`) and every OpenCL, CUDA and Vulkan device as on the CPU
//! interpreter (`interp`, the reference; integers exactly, floats within the bounds stated in
//! `strata_cli::difftest`).
//!
//! Every run checks at least 1,000 programs. `STRATA_DIFF_SEED` picks the seed (default fixed),
//! `STRATA_DIFF_PROGRAMS` runs more programs. When `STRATA_REQUIRE` contains `opencl` (or `cuda`), having
//! no OpenCL (CUDA) device is a failure.

use strata::ir::{self, Stmt};
use strata::prelude::*;
use strata::BackendKind;
use strata_cli::difftest;

const DEFAULT_SEED: u64 = 0x5EED_2024;
const MIN_PROGRAMS: usize = 1000;

fn required() -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"))
}

fn seed() -> u64 {
    match std::env::var("STRATA_DIFF_SEED") {
        Ok(s) => {
            let s = s.trim();
            let parsed = match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => s.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("STRATA_DIFF_SEED is not a number: `{s}`"))
        }
        Err(_) => DEFAULT_SEED,
    }
}

fn programs() -> usize {
    std::env::var("STRATA_DIFF_PROGRAMS")
        .ok()
        .map(|s| {
            s.trim()
                .parse::<usize>()
                .unwrap_or_else(|_| panic!("STRATA_DIFF_PROGRAMS is not a number: `{s}`"))
        })
        .unwrap_or(MIN_PROGRAMS)
        .max(MIN_PROGRAMS)
}

fn opencl_devices() -> Vec<Device> {
    let devs: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == BackendKind::OpenCl)
        .collect();
    if devs.is_empty() {
        let why = strata::unavailable_backends()
            .into_iter()
            .find(|(b, _)| *b == BackendKind::OpenCl)
            .map_or("(no reason given)".into(), |(_, why)| why);
        assert!(
            !required(),
            "STRATA_REQUIRE names opencl, but no OpenCL device is listed: {why}"
        );
        eprintln!("no OpenCL device, nothing compared: {why}");
    }
    devs
}

/// Every CUDA device; with none, fails when `STRATA_REQUIRE` names `cuda`.
fn cuda_devices() -> Vec<Device> {
    let devs: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == BackendKind::Cuda)
        .collect();
    if devs.is_empty() {
        let why = strata::unavailable_backends()
            .into_iter()
            .find(|(b, _)| *b == BackendKind::Cuda)
            .map_or("(no reason given)".into(), |(_, why)| why);
        let required =
            std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "cuda"));
        assert!(
            !required,
            "STRATA_REQUIRE names cuda, but no CUDA device is listed: {why}"
        );
        eprintln!("no CUDA device, nothing compared: {why}");
    }
    devs
}

#[test]
fn cuda_agrees_with_interp() {
    agree_with_interp(cuda_devices());
}

#[test]
fn opencl_agrees_with_interp() {
    agree_with_interp(opencl_devices());
}

/// Every Vulkan device; with none, fails when `STRATA_REQUIRE` names `vulkan`.
fn vulkan_devices() -> Vec<Device> {
    let devs: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == BackendKind::Vulkan)
        .collect();
    if devs.is_empty() {
        let why = strata::unavailable_backends()
            .into_iter()
            .find(|(b, _)| *b == BackendKind::Vulkan)
            .map_or("(no reason given)".into(), |(_, why)| why);
        let required = std::env::var("STRATA_REQUIRE")
            .is_ok_and(|v| v.split(',').any(|b| b.trim() == "vulkan"));
        assert!(
            !required,
            "STRATA_REQUIRE names vulkan, but no Vulkan device is listed: {why}"
        );
        eprintln!("no Vulkan device, nothing compared: {why}");
    }
    devs
}

/// At least 1,000 programs on every Vulkan device (lavapipe here). On lavapipe this needed the
/// SPIR-V writer's workarounds for llvmpipe (`SpirvTarget::llvmpipe_float_fixes`, fences as
/// atomics, `SignedZeroInfNanPreserve`, f32 trig reduced in f64, `copysign` without bit
/// operations on its magnitude; see CHANGELOG.md).
#[test]
fn vulkan_agrees_with_interp() {
    agree_with_interp(vulkan_devices());
}

/// Programs that once failed on an OpenCL driver, as `(run seed, program index)`: each is run
/// alone against the interpreter. They are tied to the generator: a change to it that changes
/// these programs must re-pin them (`strata difftest --seed S --only N` prints the program,
/// whose text below says what to look for).
const OPENCL_PINNED: &[(u64, usize, &str)] = &[
    // PoCL 3.1: `rint` of a constant DBL_MAX in a store made the whole kernel store nothing
    // (strata now guards `rint` so that only |x| < 2^52 reaches it).
    (
        1,
        201,
        "out_f64 = 6.6e17 / (DBL_MAX - rint(DBL_MAX)), beside other stores",
    ),
    // The same with `rint(-inf)` in f32 (and the whole batch of programs 200..299 crashed the
    // driver's compiler).
    (1, 230, "out_f32 = hypot(..., rint(1.1754944e-38 * -inf))"),
    // PoCL 3.1: the program that never ended (`strata difftest --seed 1` hung at programs
    // 2500..2599; strata now tests `rootn`'s `n == 0` before PoCL's `rootn` sees it).
    (1, 2501, "the hang of seed 1, fixed by the rootn guard"),
];

#[test]
fn opencl_pinned_programs() {
    let interp = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    for d in opencl_devices() {
        let q = Queue::new(&d).unwrap();
        for &(seed, index, what) in OPENCL_PINNED {
            let r = difftest::run_one(&interp, &q, seed, index).unwrap_or_else(|m| {
                panic!("{}: seed {seed}, program {index}: {m}", d.info().spec())
            });
            assert!(
                r.failed.is_empty(),
                "{}: seed {seed}, program {index} ({what}):\n{}",
                d.info().spec(),
                r.failed.join("\n")
            );
        }
    }
}

/// A kernel that does not finish within the time limit is a reported failure of its programs,
/// and the run goes on (with a new queue): here every kernel gets no time at all.
#[test]
fn a_kernel_over_the_time_limit_is_a_failure_not_a_stuck_run() {
    let interp = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    let cpu = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let report = difftest::run_with_timeout(
        &interp,
        &cpu,
        3,
        150,
        |_| std::time::Duration::ZERO,
        |_, _| {},
    )
    .unwrap();
    assert_eq!((report.passed, report.failed_programs), (0, 150));
    assert_eq!(report.failed.len(), 2, "one failure per kernel");
    for f in &report.failed {
        assert!(f.contains("timed out"), "{f}");
    }
}

/// The time limit counts time the kernel could run: past the limit, a process that had less
/// of it on a CPU (a starved run) waits on, up to `STARVED_FACTOR` times the limit; one that
/// had its CPU time, or whose CPU time is unknown, times out at the limit.
#[test]
fn a_starved_kernel_gets_longer_than_its_limit_a_running_one_does_not() {
    use difftest::{wait_bounded, Waited, STARVED_FACTOR};
    use std::time::{Duration, Instant};
    let limit = Duration::from_millis(40);
    let (_tx, rx) = std::sync::mpsc::channel::<u32>();
    // No CPU time at all: starved until the factor.
    let t = Instant::now();
    let w = wait_bounded(&rx, limit, || Some(Duration::ZERO));
    assert!(
        matches!(w, Waited::TimedOut(d) if d >= limit * STARVED_FACTOR),
        "{w:?}"
    );
    assert!(t.elapsed() >= limit * STARVED_FACTOR);
    // CPU time as fast as the wall clock: the limit.
    let start = Instant::now();
    let w = wait_bounded(&rx, limit, || Some(start.elapsed()));
    assert!(
        matches!(w, Waited::TimedOut(d) if d >= limit && d < limit * STARVED_FACTOR),
        "{w:?}"
    );
    // Half a CPU (a loaded machine): until the CPU time reaches the limit, twice as long.
    let start = Instant::now();
    let w = wait_bounded(&rx, limit, || Some(start.elapsed() / 2));
    assert!(
        matches!(w, Waited::TimedOut(d) if d >= limit * 2 && d < limit * STARVED_FACTOR),
        "{w:?}"
    );
    // Unknown CPU time: the limit.
    let w = wait_bounded(&rx, limit, || None);
    assert!(
        matches!(w, Waited::TimedOut(d) if d < limit * STARVED_FACTOR),
        "{w:?}"
    );
    // A result that comes, and a sender that leaves.
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    std::thread::spawn(move || tx.send(7).unwrap());
    assert_eq!(wait_bounded(&rx, limit * 100, || None), Waited::Done(7));
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    drop(tx);
    assert_eq!(wait_bounded(&rx, limit, || None), Waited::Lost);
    // This process's CPU time can be read here (Linux) and grows while it computes.
    let a = difftest::process_cpu_time().expect("/proc/self/stat");
    let mut x = 1u64;
    let t = Instant::now();
    while difftest::process_cpu_time().unwrap() == a && t.elapsed() < Duration::from_secs(20) {
        for _ in 0..100_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    assert!(difftest::process_cpu_time().unwrap() > a, "{x}");
}

/// The compiled CPU backend against the interpreter: always present, so always run.
#[test]
fn compiled_cpu_agrees_with_interp() {
    agree_with_interp(vec![Device::from_spec("cpu").unwrap()]);
}

fn agree_with_interp(devices: Vec<Device>) {
    let cpu = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    let (seed, n) = (seed(), programs());
    for d in devices {
        let q = Queue::new(&d).unwrap();
        let t = std::time::Instant::now();
        let report = difftest::run(&cpu, &q, seed, n).unwrap_or_else(|m| panic!("{m}"));
        eprintln!(
            "{}: seed {seed}: {} ({} kernels, {} values) in {:.1} s",
            d.info().spec(),
            report.summary(),
            report.kernels,
            report.compared,
            t.elapsed().as_secs_f64()
        );
        assert_eq!(report.passed, n);
    }
}

/// The generator is deterministic, produces valid IR, and covers what it promises.
#[test]
fn generator_is_deterministic_and_covers_the_features() {
    let opts = difftest::Options {
        programs: 200,
        ..Default::default()
    };
    let a = difftest::generate(7, &opts);
    let b = difftest::generate(7, &opts);
    assert_eq!(a.to_string(), b.to_string());
    assert_ne!(a.to_string(), difftest::generate(8, &opts).to_string());
    let text = a.to_string();
    ir::validate(a.clone()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let (mut barrier, mut group, mut atomic, mut load, mut brk, mut cont, mut for_, mut loop_) =
        (0, 0, 0, 0, 0, 0, 0, 0);
    ir::walk_block(&a.body, &mut |s| match s {
        Stmt::Barrier(_) => barrier += 1,
        Stmt::Group { .. } => group += 1,
        Stmt::Atomic { .. } => atomic += 1,
        Stmt::AtomicLoad { .. } => load += 1,
        Stmt::Break(_) => brk += 1,
        Stmt::Continue(_) => cont += 1,
        Stmt::For { .. } => for_ += 1,
        Stmt::Loop { .. } => loop_ += 1,
        _ => {}
    });
    for (what, n) in [
        ("barriers", barrier),
        ("collectives", group),
        ("atomics", atomic),
        ("atomic loads", load),
        ("breaks", brk),
        ("continues", cont),
        ("for loops", for_),
        ("loops", loop_),
    ] {
        assert!(n > 0, "no {what} in 200 programs");
    }
    for needle in [
        "sin(",
        "pow(",
        "fma(",
        "sqrt(",
        "cast<f32>",
        "cast<i64>",
        "bitcast<",
        "mul_hi(",
        "<<",
        "select(",
        "group_scan",
        "sub_group_reduce",
        "sub_group_shuffle",
    ] {
        assert!(text.contains(needle), "no `{needle}` in 200 programs");
    }
    // Without f64, no f64 anywhere.
    let no64 = difftest::generate(
        7,
        &difftest::Options {
            programs: 50,
            f64: false,
            int64_atomics: false,
            ..Default::default()
        },
    );
    let v = ir::validate(no64).unwrap();
    assert!(!v.info().uses_f64 && !v.info().uses_int64_atomics);
}

/// The interpreter agrees with itself (two queues): the reference is deterministic.
#[test]
fn interp_agrees_with_itself() {
    let cpu = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    let cpu2 = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    let report = difftest::run(&cpu, &cpu2, 11, 150).unwrap_or_else(|m| panic!("{m}"));
    assert_eq!(report.passed, 150);
    assert!(report.compared > 150 * 64);
}

/// `run_from` runs the programs a run from 0 has at those indices: its programs pass alone,
/// and the failures of a run whose kernels all time out name those indices and their
/// program seeds.
#[test]
fn a_run_from_an_index_runs_that_part_of_the_whole_run() {
    let interp = Queue::new(&Device::from_spec("interp").unwrap()).unwrap();
    let cpu = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let seed = 0x2a;
    let limit = difftest::kernel_timeout;
    let r = difftest::run_from(&interp, &cpu, seed, 117, 13, limit, |_, _| {}).unwrap();
    assert_eq!((r.passed, r.failed_programs), (13, 0), "{:?}", r.failed);
    // Kernels that all time out fail whole, each named by its first program.
    let zero = |_| std::time::Duration::ZERO;
    let r = difftest::run_from(&interp, &cpu, seed, 117, 113, zero, |_, _| {}).unwrap();
    assert_eq!((r.passed, r.failed_programs), (0, 113));
    for (f, (a, b)) in r.failed.iter().zip([(117, 216), (217, 229)]) {
        let ps = difftest::program_seed(seed, a);
        assert!(
            f.contains(&format!("programs {a}..={b}"))
                && f.contains(&format!("program {a} (program seed {ps:#x}")),
            "{f}"
        );
    }
    assert_eq!(r.failed.len(), 2, "one failure per kernel");
    // A range past the last index is an error, not a wrapped index.
    let e = difftest::run_from(&interp, &cpu, seed, usize::MAX, 2, limit, |_, _| {}).unwrap_err();
    assert!(e.contains("past the last program index"), "{e}");
}
