//! The runner: builds the kernels of a run ([`PROGRAMS_PER_KERNEL`] programs each), gives both
//! queues the same random inputs, runs them and hands the outputs to the comparator.
//!
//! Every kernel runs under a time limit ([`kernel_timeout`]): it runs on a thread of its own,
//! and a kernel that has not finished in time (a miscompiled loop that never ends, as PoCL's
//! `rootn(x, 0)` made one) is a reported failure of its programs, not a stuck run. The queue
//! it hangs on is left to it; the run goes on with a new queue on the same device.
//!
//! "In time" means that the kernel had its time ([`wait_bounded`]): the limit counts as
//! reached once that much wall time has passed *and* the process has had as much on a CPU
//! meanwhile (where the process's CPU time can be read: Linux's `/proc/self/stat`). Half of
//! it was not enough: a batch of 100 programs that takes PoCL 168 s alone timed out at 320 s
//! beside two low-priority sweeps (724 s waited), its process's CPU time inflated by the
//! contention.
//! A run starved by a loaded machine (a low-priority sweep beside builds) waits longer, up to
//! [`STARVED_FACTOR`] times the limit, instead of reporting a compile that was never
//! scheduled as a hang; a kernel that spins forever gets its CPU time and fails at the limit.

use super::compare::compare;
use super::gen::build;
use super::{
    lit, program, program_seed, random_literal, Layout, Options, Outputs, GLOBAL_SIZE, INPUT_LEN,
    INTS,
};
use crate::conformance::Rng;
use std::time::Duration;
use strata::builder::Value;
use strata::ir::eval::Num;
use strata::ir::{Function, Literal, Scalar};
use strata::{Buffer, DeviceInfo, Kernel, KernelArg, NdRange, Queue};

/// The result of a differential run.
#[derive(Debug, Default)]
pub struct Report {
    /// Programs whose every result agreed.
    pub passed: usize,
    /// Programs with a mismatch or a device error (a kernel that fails on the device fails all
    /// its programs).
    pub failed_programs: usize,
    /// The mismatches: a description with the seed, the program's IR and the values (one per
    /// mismatching program, one per kernel that failed on the device).
    pub failed: Vec<String>,
    /// Kernels launched on each device.
    pub kernels: usize,
    /// Values compared.
    pub compared: usize,
}

impl Report {
    /// `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed_programs)
    }
}

/// Programs per kernel: PoCL compiles one kernel in 0.1 to 1 s, so many programs share one.
pub const PROGRAMS_PER_KERNEL: usize = 100;

/// Programs per kernel on a device whose driver ends loops after a number of iterations in
/// all (`DeviceInfo::loop_iteration_limit`: llvmpipe's 65,535 per sub-group): the loops of
/// [`PROGRAMS_PER_KERNEL`] programs add up in one kernel, and a cut loop fails the whole
/// kernel (or, with a barrier in it, could hang it).
pub const PROGRAMS_PER_KERNEL_LOOP_LIMIT: usize = 10;

/// The programs per kernel for a run comparing `a` and `b`.
pub fn programs_per_kernel(a: &DeviceInfo, b: &DeviceInfo) -> usize {
    if a.loop_iteration_limit.is_some() || b.loop_iteration_limit.is_some() {
        PROGRAMS_PER_KERNEL_LOOP_LIMIT
    } else {
        PROGRAMS_PER_KERNEL
    }
}

/// The time limit of one kernel of `programs` programs (compiling it included): two minutes,
/// and two seconds per program (a kernel of 100 programs takes seconds; a loaded machine
/// compiling with a debug build of strata took over 160 s once).
pub fn kernel_timeout(programs: usize) -> Duration {
    Duration::from_secs(120 + 2 * programs as u64)
}

/// Runs `programs` random programs from `seed` on `reference` and `other` and compares their
/// results (see the module docs); `Err` describes the first mismatch (with the seed, the
/// program's IR and the values) or a device error.
pub fn run(reference: &Queue, other: &Queue, seed: u64, programs: usize) -> Result<Report, String> {
    let report = run_with(reference, other, seed, programs, |_, _| {})?;
    match report.failed.first() {
        Some(m) => Err(format!(
            "{} of {} programs disagree; the first:\n{m}",
            report.failed_programs, programs
        )),
        None => Ok(report),
    }
}

/// Like [`run`], but keeps going after mismatches (they are collected in the report) and calls
/// `progress(programs_done, report_so_far)` after each kernel. `Err` is a device error (an
/// error on one device only is a mismatch).
pub fn run_with(
    reference: &Queue,
    other: &Queue,
    seed: u64,
    programs: usize,
    progress: impl FnMut(usize, &Report),
) -> Result<Report, String> {
    let all: Vec<usize> = (0..programs).collect();
    run_programs(reference, other, seed, &all, kernel_timeout, progress)
}

/// Like [`run_with`], with `timeout(programs)` the time limit of a kernel of `programs`
/// programs on `other` instead of [`kernel_timeout`]'s (the reference keeps that one).
pub fn run_with_timeout(
    reference: &Queue,
    other: &Queue,
    seed: u64,
    programs: usize,
    timeout: impl Fn(usize) -> Duration,
    progress: impl FnMut(usize, &Report),
) -> Result<Report, String> {
    let all: Vec<usize> = (0..programs).collect();
    run_programs(reference, other, seed, &all, timeout, progress)
}

/// Like [`run_with`], for programs `first .. first + programs` of the run with `seed`: the
/// programs a longer run has at those indices, with the same inputs, so that a sweep can go on
/// where an earlier run stopped. With `first` a multiple of [`programs_per_kernel`], the
/// kernels are the longer run's too (each holds the same programs). `timeout` is as for
/// [`run_with_timeout`] (the CLI passes [`kernel_timeout`]).
pub fn run_from(
    reference: &Queue,
    other: &Queue,
    seed: u64,
    first: usize,
    programs: usize,
    timeout: impl Fn(usize) -> Duration,
    progress: impl FnMut(usize, &Report),
) -> Result<Report, String> {
    let end = first
        .checked_add(programs)
        .ok_or_else(|| format!("programs {first} + {programs}: past the last program index"))?;
    let indices: Vec<usize> = (first..end).collect();
    run_programs(reference, other, seed, &indices, timeout, progress)
}

/// Runs only program `index` of the run with seed `seed`, alone in its kernel (with the same
/// inputs), to reproduce a reported mismatch.
pub fn run_one(
    reference: &Queue,
    other: &Queue,
    seed: u64,
    index: usize,
) -> Result<Report, String> {
    run_programs(reference, other, seed, &[index], kernel_timeout, |_, _| {})
}

fn run_programs(
    reference: &Queue,
    other: &Queue,
    seed: u64,
    indices: &[usize],
    timeout: impl Fn(usize) -> Duration,
    mut progress: impl FnMut(usize, &Report),
) -> Result<Report, String> {
    let (ri, oi) = (reference.device().info(), other.device().info());
    let mut r = Rng::new(seed);
    let opts = Options {
        programs: 0,
        f64: ri.supports_f64 && oi.supports_f64,
        int64_atomics: ri.supports_int64_atomics && oi.supports_int64_atomics,
        local_size: 1 << r.int(3, 6),
        sub_group_size: (ri.sub_group_size == oi.sub_group_size).then_some(ri.sub_group_size),
    };
    let inputs = Inputs::new(&mut r, &opts);
    let per_kernel = programs_per_kernel(ri, oi);
    // Compile every batch's kernel for a compiling device first, on all cores: compiling
    // (NVRTC, an OpenCL driver) is most of a run's time, and launches then find the kernels in
    // the device's cache. A kernel that fails to compile fails again, and is reported, below.
    if !oi.backend.is_builtin_cpu() {
        use rayon::prelude::*;
        let batches: Vec<&[usize]> = indices.chunks(per_kernel).collect();
        batches.par_iter().enumerate().for_each(|(b, batch)| {
            let seeds: Vec<u64> = batch.iter().map(|&i| program_seed(seed, i)).collect();
            let (f, _) = build(&seeds, &opts, &format!("difftest_{b}"));
            if let Ok(k) = Kernel::from_ir(f) {
                let _ = other.device().compile(&k);
            }
        });
    }
    let mut report = Report::default();
    // Replaced by a new queue on the same device after a kernel that did not finish in time.
    let mut other_q = other.clone();
    let mut done = 0;
    let mut batch = 0;
    while done < indices.len() {
        let n = per_kernel.min(indices.len() - done);
        let batch_indices = &indices[done..done + n];
        let seeds: Vec<u64> = batch_indices
            .iter()
            .map(|&i| program_seed(seed, i))
            .collect();
        let (f, layout) = build(&seeds, &opts, &format!("difftest_{batch}"));
        let limit = timeout(n);
        let want = bounded(
            reference,
            f.clone(),
            &layout,
            &inputs,
            opts.local_size,
            kernel_timeout(n),
        )
        .map_err(|e| format!("seed {seed}: the reference device failed: {e}"))?;
        let got = bounded(&other_q, f, &layout, &inputs, opts.local_size, limit);
        if got.as_ref().is_err_and(|e| e.starts_with(TIMED_OUT)) {
            other_q = Queue::new(other.device()).map_err(|e| {
                format!("seed {seed}: no new queue after a kernel that did not end: {e}")
            })?;
        }
        report.kernels += 1;
        let mut bad: Vec<(usize, String)> = Vec::new();
        let failed = match got {
            Err(e) => {
                bad.push((0, format!("the device failed on the whole kernel of {n} programs (programs {}..={}): {e}", batch_indices[0], batch_indices[n - 1])));
                n
            }
            Ok(got) => {
                compare(&layout, &want, &got, &mut bad, &mut report.compared);
                bad.sort_by_key(|b| b.0);
                bad.dedup_by_key(|b| b.0);
                bad.len()
            }
        };
        for (p, what) in &bad {
            let index = batch_indices[*p];
            let ps = program_seed(seed, index);
            let one = program(ps, &opts);
            report.failed.push(format!(
                "seed {seed}, program {index} (program seed {ps:#x}, local size {}) on {} vs {}: {what}\n--- program ---\n{one}",
                opts.local_size,
                oi.spec(),
                ri.spec()
            ));
        }
        report.passed += n - failed;
        report.failed_programs += failed;
        done += n;
        batch += 1;
        progress(done, &report);
    }
    Ok(report)
}

/// How [`bounded`]'s error of a kernel that did not finish in time starts.
const TIMED_OUT: &str = "timed out";

/// [`execute`] on a thread of its own, waited for at most `limit`: its error as text, which
/// starts with [`TIMED_OUT`] when the kernel did not finish (the thread is left blocked on
/// `q`, which must not be used again).
fn bounded(
    q: &Queue,
    f: Function,
    layout: &Layout,
    inputs: &Inputs,
    local: u32,
    limit: Duration,
) -> Result<Outputs, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (q2, layout2, inputs2) = (q.clone(), layout.clone(), inputs.clone());
    std::thread::Builder::new()
        .name("difftest-kernel".into())
        .spawn(move || {
            let r = execute(&q2, f, &layout2, &inputs2, local).map_err(|e| e.to_string());
            let _ = tx.send(r);
        })
        .map_err(|e| format!("no thread for the kernel: {e}"))?;
    match wait_bounded(&rx, limit, process_cpu_time) {
        Waited::Done(r) => r,
        Waited::Lost => Err("the kernel's thread ended without a result (a panic)".into()),
        Waited::TimedOut(waited) => Err(format!(
            "{TIMED_OUT}: the kernel did not finish within {limit:?} ({:.0?} waited; a miscompiled loop that never ends?)",
            waited
        )),
    }
}

/// How much longer than its limit [`wait_bounded`] waits for a kernel whose process was
/// starved of CPU time.
pub const STARVED_FACTOR: u32 = 4;

/// What [`wait_bounded`] saw.
#[derive(Debug, PartialEq)]
pub enum Waited<T> {
    /// The result came in time.
    Done(T),
    /// The sender was dropped without sending.
    Lost,
    /// No result after the wall time given: the limit, with as much time on a CPU (or with
    /// no CPU time to read), or [`STARVED_FACTOR`] times the limit.
    TimedOut(Duration),
}

/// Waits for `rx`'s result for `limit`, counted as the module docs say: past `limit` of wall
/// time, it goes on waiting while `cpu` (the process's CPU time, `None` where unknown) has
/// advanced by less than `limit` since the start, up to [`STARVED_FACTOR`] times `limit`.
pub fn wait_bounded<T>(
    rx: &std::sync::mpsc::Receiver<T>,
    limit: Duration,
    cpu: impl Fn() -> Option<Duration>,
) -> Waited<T> {
    use std::sync::mpsc::RecvTimeoutError;
    let (start, cpu0) = (std::time::Instant::now(), cpu());
    let most = limit * STARVED_FACTOR;
    // Past the limit, the CPU time is read again every slice.
    let slice = (limit / 16).max(Duration::from_millis(10));
    let mut next = limit;
    loop {
        match rx.recv_timeout(next.saturating_sub(start.elapsed())) {
            Ok(r) => return Waited::Done(r),
            Err(RecvTimeoutError::Disconnected) => return Waited::Lost,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let waited = start.elapsed();
        if waited < next {
            continue;
        }
        let had = match (cpu0, cpu()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => Duration::MAX,
        };
        if waited >= most || had >= limit {
            return Waited::TimedOut(waited);
        }
        next = (waited + slice).min(most);
    }
}

/// This process's CPU time (user and system, all threads), from Linux's `/proc/self/stat`
/// (in clock ticks of 1/100 s, the fixed `USER_HZ` that file reports in); `None` elsewhere.
pub fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which may contain spaces, but ends at the last ')'):
    // state is field 3, utime 14 and stime 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace().skip(11);
    let (utime, stime): (u64, u64) = (f.next()?.parse().ok()?, f.next()?.parse().ok()?);
    Some(Duration::from_millis((utime + stime) * 10))
}

/// A generated kernel's inputs: buffer contents and scalar arguments per type.
#[derive(Clone)]
struct Inputs {
    buffers: Vec<Vec<Literal>>,
    scalars: Vec<Literal>,
    /// Initial contents of the atomic counters.
    atoms: Vec<Literal>,
}

impl Inputs {
    fn new(r: &mut Rng, opts: &Options) -> Inputs {
        let mut types = vec![
            Scalar::I32,
            Scalar::U32,
            Scalar::I64,
            Scalar::U64,
            Scalar::F32,
        ];
        if opts.f64 {
            types.push(Scalar::F64);
        }
        let buffers = types
            .iter()
            .map(|&t| {
                (0..INPUT_LEN)
                    .map(|_| random_literal(r, t))
                    .collect::<Vec<_>>()
            })
            .collect();
        let scalars = types.iter().map(|&t| random_literal(r, t)).collect();
        let atoms = INTS.iter().map(|&t| random_literal(r, t)).collect();
        Inputs {
            buffers,
            scalars,
            atoms,
        }
    }
}

/// A buffer of any element type.
enum AnyBuffer {
    I32(Buffer<i32>),
    U32(Buffer<u32>),
    I64(Buffer<i64>),
    U64(Buffer<u64>),
    F32(Buffer<f32>),
    F64(Buffer<f64>),
}

macro_rules! any_buffer {
    ($s:expr, $T:ident, $V:ident => $body:expr) => {
        match $s {
            Scalar::I32 => {
                type $T = i32;
                let $V = AnyBuffer::I32;
                $body
            }
            Scalar::U32 => {
                type $T = u32;
                let $V = AnyBuffer::U32;
                $body
            }
            Scalar::I64 => {
                type $T = i64;
                let $V = AnyBuffer::I64;
                $body
            }
            Scalar::U64 => {
                type $T = u64;
                let $V = AnyBuffer::U64;
                $body
            }
            Scalar::F32 => {
                type $T = f32;
                let $V = AnyBuffer::F32;
                $body
            }
            Scalar::F64 => {
                type $T = f64;
                let $V = AnyBuffer::F64;
                $body
            }
            other => unreachable!("no buffers of {other}"),
        }
    };
}

fn upload<T: Value + Num>(q: &Queue, data: &[Literal]) -> strata::Result<Buffer<T>> {
    let v: Vec<T> = data.iter().map(|&l| T::from_lit(l)).collect();
    Buffer::from_slice(q, &v)
}

fn bits<T: Value + Num>(q: &Queue, b: &Buffer<T>) -> strata::Result<Vec<u64>> {
    Ok(q.read(b)?.into_iter().map(|x| x.to_lit().bits).collect())
}

impl AnyBuffer {
    fn new(q: &Queue, s: Scalar, data: &[Literal]) -> strata::Result<AnyBuffer> {
        any_buffer!(s, T, ctor => Ok(ctor(upload::<T>(q, data)?)))
    }
    fn arg(&self) -> KernelArg<'_> {
        match self {
            AnyBuffer::I32(b) => b.into(),
            AnyBuffer::U32(b) => b.into(),
            AnyBuffer::I64(b) => b.into(),
            AnyBuffer::U64(b) => b.into(),
            AnyBuffer::F32(b) => b.into(),
            AnyBuffer::F64(b) => b.into(),
        }
    }
    fn read(&self, q: &Queue) -> strata::Result<Vec<u64>> {
        match self {
            AnyBuffer::I32(b) => bits(q, b),
            AnyBuffer::U32(b) => bits(q, b),
            AnyBuffer::I64(b) => bits(q, b),
            AnyBuffer::U64(b) => bits(q, b),
            AnyBuffer::F32(b) => bits(q, b),
            AnyBuffer::F64(b) => bits(q, b),
        }
    }
}

fn scalar_arg(l: Literal) -> KernelArg<'static> {
    any_buffer!(l.scalar, T, _ctor => KernelArg::from(T::from_lit(l)))
}

/// Runs `f` once on `q`.
fn execute(
    q: &Queue,
    f: Function,
    layout: &Layout,
    inputs: &Inputs,
    local: u32,
) -> strata::Result<Outputs> {
    let k = Kernel::from_ir(f)?;
    let g = GLOBAL_SIZE as usize;
    let mut ins = Vec::new();
    for (i, &t) in layout.types.iter().enumerate() {
        ins.push(AnyBuffer::new(q, t, &inputs.buffers[i])?);
    }
    let mut outs = Vec::new();
    for (i, &t) in layout.types.iter().enumerate() {
        let n = layout.outs[i].len().max(1) * g;
        outs.push(AnyBuffer::new(q, t, &vec![lit(t, 0); n])?);
    }
    let mut atoms = Vec::new();
    for (i, &t) in layout.atom_types.iter().enumerate() {
        let n = layout.atoms[i].len().max(1) * g;
        let init = inputs.atoms[INTS.iter().position(|&x| x == t).unwrap()];
        atoms.push(AnyBuffer::new(q, t, &vec![init; n])?);
    }
    let mut args: Vec<KernelArg<'_>> = Vec::new();
    for (i, b) in ins.iter().enumerate() {
        args.push(b.arg());
        args.push(scalar_arg(inputs.scalars[i]));
    }
    args.extend(outs.iter().map(AnyBuffer::arg));
    args.extend(atoms.iter().map(AnyBuffer::arg));
    k.launch(q, NdRange::new(g).local(local as usize), &args)?;
    Ok(Outputs {
        outs: outs
            .iter()
            .map(|b| b.read(q))
            .collect::<strata::Result<_>>()?,
        atoms: atoms
            .iter()
            .map(|b| b.read(q))
            .collect::<strata::Result<_>>()?,
    })
}
