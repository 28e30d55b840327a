//! The pattern benchmarks of `strata bench`, each beside a hand-written rayon baseline in the
//! same run (see [`crate::bench`] for timing, verification and the table):
//!
//! | bench             | computation with patterns                                   | bytes moved |
//! |-------------------|-------------------------------------------------------------|-------------|
//! | `pat_vadd`        | `zip(&x, &y).map(a + b).collect_into(&z)`                   | `12 n`      |
//! | `pat_saxpy`       | `zip(&x, &y).map(a * x + y).collect_into(&y)` (views only)  | `12 n`      |
//! | `pat_dot`         | `zip(&x, &y).map(a * b).sum()` (one fused kernel per pass)  | `8 n`       |
//! | `pat_dot_unfused` | `zip(&x, &y).map(a * b).collect_into(&t)`, then `t.sum()`   | `8 n`       |
//! | `pat_sum`         | `x.sum()`                                                   | `4 n`       |
//! | `pat_scan`        | inclusive `+` scan of `u32`                                  | `8 n`       |
//! | `pat_scan_*`      | the same with another staging or algorithm (below)          | `8 n`       |
//! | `pat_sort`        | radix sort of `u32` keys                                     | `8 n`       |
//! | `pat_sort_*`      | the same sort with one staged value changed (below)         | `8 n`       |
//! | `pat_sort_pairs`  | `sort_by_key` of `u32` keys with `u32` values (stability checked) | `16 n` |
//! | `pat_sort_u64`    | radix sort of `u64` keys                                     | `16 n`      |
//! | `pat_*_tuned`     | `pat_vadd`, `pat_sum`, `pat_scan`, `pat_sort`, tuned (below) | as theirs   |
//!
//! **Tuned against default.** Every other pattern row runs with the device's default staging
//! (untuned, whatever tuning records exist). `pat_vadd_tuned`, `pat_sum_tuned`,
//! `pat_scan_tuned` and `pat_sort_tuned`, each listed right after its default row, run the
//! same computation with the tuned staging ([`strata::patterns::tune`]): the record of the
//! benchmark's size class in the default records file when there is one (what `strata tune` wrote), else a
//! [`Tuner`] run on the device at the benchmark's size first (untimed, not saved). The table
//! names the configuration and where it came from below the rows.
//!
//! The sort variants change one value of the device's default [`SortStaging`], so that one
//! `strata bench --filter pat_sort` run compares them (and `pat_sort_pairs`, `pat_sort_u64`):
//! `pat_sort_onesweep` and `pat_sort_tiles` force the method ([`SortMethod::Onesweep`], where
//! [`onesweep_safe`](strata::patterns::onesweep_safe) holds, else the default sort;
//! [`SortMethod::Tiles`]), so that the default row (the tile sort on GPUs, the parts sort on CPU
//! devices) stands beside both; `pat_sort_b4` and `pat_sort_b6` sort 4- and 6-bit digits (8 and 6 passes for
//! `u32`, instead of 4 passes of 8 bits); `pat_sort_k8`, `pat_sort_k12` and `pat_sort_k20`
//! rank 8, 12 and 20 keys per work-item (the default is 16 on GPUs); `pat_sort_g128` runs
//! work-groups of 128 work-items; `pat_sort_m4` and `pat_sort_m16` allow 4 and 16
//! work-groups per compute unit (the default is 8 on GPUs). Their `local` and `groups`
//! columns are the sort's own (work-items per work-group, work-groups per pass). The host
//! baseline of the sorts is measured once per run and size and shared by all of them.
//!
//! **Scan variants**, to compare stagings in one run (`strata bench --filter pat_scan` runs
//! them all): `pat_scan` is the default ([`ScanAlgorithm::Auto`](strata::patterns::ScanAlgorithm::Auto): the look-back scan on CUDA,
//! the multi-pass scan elsewhere);
//! `pat_scan_lookback` forces the single-pass look-back scan ([`ScanAlgorithm::LookBack`](strata::patterns::ScanAlgorithm::LookBack)),
//! `pat_scan_kK` does too with [`Staging::scan_items_per_thread`](strata::patterns::Staging::scan_items_per_thread) set to `K`
//! (elements per work-item of a look-back tile), `pat_scan_gG_kK` also with the work-group size
//! `G`; `pat_scan_multipass` forces the portable three-pass scan
//! ([`ScanAlgorithm::MultiPass`](strata::patterns::ScanAlgorithm::MultiPass)). Where the look-back scan cannot run (OpenCL) the look-back
//! variants run the multi-pass scan like `pat_scan`. The `local`
//! and `groups` columns of a scan row are the work-group size and the number of work-groups
//! (tiles) of the look-back pass, or of the first multi-pass pass.
//!
//! The first four are the PACXX paper's benchmarks; `pat_dot_unfused` is the same dot product
//! written with a temporary (two kernels and `8 n` more bytes of traffic), to show what fusion
//! saves. Inputs are uploaded beforehand and, where the computation overwrites them (`saxpy`,
//! `sort`), rewritten before each repetition, untimed. Times run from the call until the result
//! is complete (on the host for the reductions). Results are checked against the baseline:
//! exactly for `vadd`, `saxpy`, `scan` and `sort`, within
//! [`REDUCTION_TOLERANCE`](crate::bench::REDUCTION_TOLERANCE) for the reductions.
//!
//! Baselines: rayon over host slices: chunked element-wise loops (`vadd`'s and `saxpy`'s,
//! [`rayon_vadd`], [`rayon_saxpy`]); chunked reductions ([`rayon_dot`], [`rayon_sum`]); a
//! two-pass chunked scan ([`rayon_scan`]: chunk totals in parallel, their prefix, then the
//! chunks in parallel); `par_sort_unstable`. The loops of all but the sort have two builds
//! ([`builds`]: the default target's and AVX2+FMA, its `avx2` columns), timed by turns with
//! strata's run (one repetition of each per round); the sort is rayon's library code, which
//! no target feature of ours reaches: one build, timed once per run and size for every sort
//! row (its `avx2` columns are empty).

use crate::bench::builds::{self, two_builds, Build};
use crate::bench::cuda::CudaBaseline;
use crate::bench::{
    avx2_close, check_close, check_exact, rayon_dot, rayon_saxpy, rayon_sum, rayon_vadd,
    BenchError, BenchResult, SAXPY_A,
};
use rayon::prelude::*;
use std::time::Instant;
use strata::patterns::tune::{size_class, TunedOp, Tuner};
use strata::patterns::{zip, DeviceVec, Exec, LaunchShape, SortMethod, SortStaging, View};
use strata::prelude::*;

/// The pattern benchmarks, in the order they run.
pub const BENCHES: [&str; 30] = [
    "pat_vadd",
    "pat_vadd_tuned",
    "pat_saxpy",
    "pat_dot",
    "pat_dot_unfused",
    "pat_sum",
    "pat_sum_tuned",
    "pat_scan",
    "pat_scan_tuned",
    "pat_scan_lookback",
    "pat_scan_k4",
    "pat_scan_k8",
    "pat_scan_k12",
    "pat_scan_g512_k8",
    "pat_scan_g512_k16",
    "pat_scan_multipass",
    "pat_sort",
    "pat_sort_tuned",
    "pat_sort_onesweep",
    "pat_sort_tiles",
    "pat_sort_b4",
    "pat_sort_b6",
    "pat_sort_k8",
    "pat_sort_k12",
    "pat_sort_k20",
    "pat_sort_g128",
    "pat_sort_m4",
    "pat_sort_m16",
    "pat_sort_pairs",
    "pat_sort_u64",
];

/// The exec of a `_tuned` benchmark over `n` elements, the operation its base benchmark
/// runs, and where its configuration comes from: the record of that size class in the default
/// records file if there is one, else a [`Tuner`] run now on this device at `n` (not saved).
fn tuned_exec(
    queue: &Queue,
    base: &str,
    n: usize,
    reps: usize,
) -> Result<(Exec, String), BenchError> {
    // The operation and element type each base benchmark runs.
    let (op, ty) = match base {
        "pat_vadd" => (TunedOp::Map, "f32"),
        "pat_sum" => (TunedOp::Reduce, "f32"),
        "pat_scan" => (TunedOp::Scan, "u32"),
        "pat_sort" => (TunedOp::Sort, "u32"),
        other => {
            return Err(BenchError::InvalidOptions(format!(
                "`{other}_tuned` is not a pattern benchmark"
            )))
        }
    };
    let ex = Exec::new(queue);
    let recorded = ex
        .tuning()
        .and_then(|t| t.lookup(queue.device(), &op.key(ty), n))
        .filter(|r| r.class == size_class(n))
        .map(|r| r.choice);
    let (ex, source) = match recorded {
        Some(c) => (ex, format!("{c} (from the records file)")),
        None => {
            let mut tuner = Tuner::new(queue).reps(reps.min(5));
            let report = tuner
                .tune_named(op, ty, n)
                .expect("a type the tuner takes")?;
            (
                ex.with_tuning(tuner.records()),
                format!("{} (tuned in this run)", report.record.choice),
            )
        }
    };
    Ok((ex.tuned_for(op, ty, n), source))
}

/// The exec a scan benchmark runs with: `pat_scan` the default, `pat_scan_lookback` the
/// look-back scan, `pat_scan_kK` the look-back scan with `K` items per work-item in its tiles,
/// `pat_scan_gG_kK` also work-groups of `G` (capped by the device), `pat_scan_multipass` the
/// multi-pass scan. The look-back variants stay on the default where the device cannot run the
/// look-back scan. `None` for other names.
fn scan_exec(ex: &Exec, name: &str) -> Option<Result<Exec, BenchError>> {
    let variant = name.strip_prefix("pat_scan")?;
    if variant.is_empty() {
        return Some(Ok(ex.clone()));
    }
    if variant == "_multipass" {
        return Some(
            ex.with_scan_algorithm(strata::patterns::ScanAlgorithm::MultiPass)
                .map_err(BenchError::from),
        );
    }
    let ex = if ex.device().info().group_forward_progress() {
        match ex.with_scan_algorithm(strata::patterns::ScanAlgorithm::LookBack) {
            Ok(ex) => ex,
            Err(e) => return Some(Err(e.into())),
        }
    } else {
        ex.clone()
    };
    if variant == "_lookback" {
        return Some(Ok(ex));
    }
    let mut st = ex.staging();
    for part in variant.split('_').skip(1) {
        let (key, v) = part.split_at(1);
        let v: u32 = v.parse().ok()?;
        match key {
            "g" => {
                let info = ex.device().info();
                st.group_size =
                    v.min(info.max_work_group_size.min(info.max_work_item_sizes[0]) as u32);
            }
            "k" => st.scan_items_per_thread = v,
            _ => return None,
        }
    }
    Some(ex.with_staging(st).map_err(BenchError::from))
}

/// The sort staging of sort benchmark `name`, from `ex`'s (the device's default, or the tuned
/// one of `pat_sort_tuned`).
fn sort_staging(name: &str, ex: &Exec) -> Option<SortStaging> {
    let device = ex.device();
    let d = ex.sort_staging();
    let units = device.info().compute_units.max(1);
    Some(match name {
        "pat_sort" | "pat_sort_pairs" | "pat_sort_u64" => d,
        "pat_sort_b4" => SortStaging { digit_bits: 4, ..d },
        "pat_sort_b6" => SortStaging { digit_bits: 6, ..d },
        "pat_sort_k8" => SortStaging {
            keys_per_thread: 8,
            ..d
        },
        "pat_sort_k12" => SortStaging {
            keys_per_thread: 12,
            ..d
        },
        "pat_sort_k20" => SortStaging {
            keys_per_thread: 20,
            ..d
        },
        "pat_sort_g128" => SortStaging {
            group_size: d.group_size.min(128),
            ..d
        },
        "pat_sort_m4" => SortStaging {
            max_groups: (units * 4).min(65536),
            ..d
        },
        "pat_sort_m16" => SortStaging {
            max_groups: (units * 16).min(65536),
            ..d
        },
        // Onesweep where the device may run it, else the default sort (as `pat_sort`).
        "pat_sort_onesweep" if strata::patterns::onesweep_safe(device.info()) => SortStaging {
            method: SortMethod::Onesweep,
            ..d
        },
        "pat_sort_onesweep" => d,
        "pat_sort_tiles" => SortStaging {
            method: SortMethod::Tiles,
            ..d
        },
        _ => return None,
    })
}

/// The host baseline of the sort benchmarks (the keys sorted, the median seconds), measured
/// once per run of [`crate::bench::run`] and size, keyed by the keys' length and a hash.
type SortBaseline = (usize, u64, Vec<u32>, f64);
static SORT_BASELINE: std::sync::Mutex<Option<SortBaseline>> = std::sync::Mutex::new(None);

fn hash_keys(keys: &[u32]) -> u64 {
    keys.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &k| {
        (h ^ k as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `par_sort_unstable` of `keys`: the sorted keys and the median time of `reps` runs.
fn sort_baseline(keys: &[u32], reps: usize) -> Result<(Vec<u32>, f64), BenchError> {
    let h = hash_keys(keys);
    let mut cache = SORT_BASELINE.lock().unwrap();
    if let Some((n, hh, want, s)) = cache.as_ref() {
        if *n == keys.len() && *hh == h {
            return Ok((want.clone(), *s));
        }
    }
    let mut want = keys.to_vec();
    let b = timed(reps, || {
        want.copy_from_slice(keys);
        let t = Instant::now();
        want.par_sort_unstable();
        Ok(secs(t))
    })?;
    *cache = Some((keys.len(), h, want.clone(), b));
    Ok((want, b))
}

const CHUNK: usize = 1 << 14;

/// Runs `f` once to warm up, then `reps` times; the median of the seconds `f` measured.
fn timed(reps: usize, f: impl FnMut() -> Result<f64, BenchError>) -> Result<f64, BenchError> {
    crate::bench::timed(reps, f)
}

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

fn exact_u32(bench: &'static str, got: &[u32], want: &[u32]) -> Result<(), BenchError> {
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None if got.len() == want.len() => Ok(()),
        None => Err(BenchError::WrongResult {
            bench,
            detail: format!("{} elements, expected {}", got.len(), want.len()),
        }),
        Some(i) => Err(BenchError::WrongResult {
            bench,
            detail: format!(
                "element {i} is {}, the baseline computed {}",
                got[i], want[i]
            ),
        }),
    }
}

two_builds! {
    /// The wrapping sum of one chunk of `u32`s, compiled for `build`.
    pub fn chunk_total(x: &[u32]) -> u32 {
        x.iter().fold(0u32, |a, b| a.wrapping_add(*b))
    }
}

two_builds! {
    /// The inclusive `+` scan of one chunk of `u32`s into `out`, starting from `carry`,
    /// compiled for `build`.
    pub fn chunk_scan(out: &mut [u32], x: &[u32], carry: u32) {
        let mut acc = carry;
        for (o, v) in out.iter_mut().zip(x) {
            acc = acc.wrapping_add(*v);
            *o = acc;
        }
    }
}

/// The scans' baseline: the inclusive `+` scan of `x` into `out` with rayon in two passes
/// over chunks (the chunks' totals in parallel, their prefix, then the chunks in parallel),
/// the loops compiled for `build` ([`chunk_total`], [`chunk_scan`]).
pub fn rayon_scan(build: Build, x: &[u32], out: &mut [u32]) {
    let totals: Vec<u32> = x.par_chunks(CHUNK).map(|c| chunk_total(build, c)).collect();
    let mut carry = Vec::with_capacity(totals.len());
    let mut acc = 0u32;
    for t in totals {
        carry.push(acc);
        acc = acc.wrapping_add(t);
    }
    out.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .zip(carry)
        .for_each(|((o, c), carry)| chunk_scan(build, o, c, carry));
}

/// Runs pattern benchmark `name` on `queue` with the inputs `x`, `y` (values in [0, 1)).
pub fn run(
    name: &'static str,
    queue: &Queue,
    x: &[f32],
    y: &[f32],
    reps: usize,
) -> Result<BenchResult, BenchError> {
    match name.strip_suffix("_tuned") {
        Some(base) => {
            let (ex, source) = tuned_exec(queue, base, x.len(), reps)?;
            let r = run_with(base, &ex, x, y, reps)?;
            Ok(BenchResult {
                bench: name,
                tuned: Some(source),
                ..r
            })
        }
        None => run_with(name, &Exec::new(queue).untuned(), x, y, reps),
    }
}

/// Runs benchmark `name` with the exec `ex` (its staging as it is).
fn run_with(
    name: &'static str,
    ex: &Exec,
    x: &[f32],
    y: &[f32],
    reps: usize,
) -> Result<BenchResult, BenchError> {
    let queue = ex.queue();
    let ex = ex.clone();
    let n = x.len();
    let dx = DeviceVec::from_slice(&ex, x)?;
    let dy = DeviceVec::from_slice(&ex, y)?;
    // On a CUDA device the element-wise and reduction benchmarks are compared with the
    // hand-written CUDA C kernels (checked against rayon's results too); scan and sort with
    // rayon, and with the copy bandwidth `strata bench` prints.
    let cuda = match queue.device().info().backend {
        strata::BackendKind::Cuda => Some(CudaBaseline::new(queue.device())?),
        _ => None,
    };
    let mut baseline = "rayon";
    let mut on_gpu =
        |rayon_s: f64, run: &dyn Fn(&CudaBaseline) -> Result<f64, BenchError>| match &cuda {
            Some(c) => {
                baseline = "cuda";
                run(c)
            }
            None => Ok(rayon_s),
        };
    // The exec of a scan benchmark (`None` for the others).
    let scan_ex = scan_exec(&ex, name).transpose()?;
    // The sorts' own work-group size and work-groups per pass.
    let mut sort_shape: Option<LaunchShape> = None;
    // The AVX2+FMA build's median, where the row's rayon baseline has one (the loops of
    // `vadd`, `saxpy`, the reductions and the scans; not the sorts').
    let mut avx2_s: Option<f64> = None;
    let (strata_s, baseline_s, rel_error, bytes) = match name {
        "pat_vadd" => {
            let z = DeviceVec::<f32>::zeroed(&ex, n)?;
            let (s, b, avx2, want) = builds::alternating(
                reps,
                || {
                    let t = Instant::now();
                    zip(&dx, &dy).map(|(a, b)| a + b).collect_into(&ex, &z)?;
                    Ok(secs(t))
                },
                |build, want: &mut Vec<f32>| {
                    want.resize(n, 0.0);
                    let t = Instant::now();
                    rayon_vadd(build, want, x, y);
                    Ok(secs(t))
                },
                |got, want| check_exact("pat_vadd (the AVX2+FMA baseline)", got, want),
            )?;
            avx2_s = avx2;
            check_exact(name, &z.to_vec()?, &want)?;
            let b = on_gpu(b, &|c| {
                let (s, v) = c.vadd(x, y, reps)?;
                check_exact("pat_vadd (the CUDA baseline)", &v, &want)?;
                Ok(s)
            })?;
            (s, b, 0.0, 12 * n as u64)
        }
        "pat_saxpy" => {
            let (s, b, avx2, want) = builds::alternating(
                reps,
                || {
                    dy.copy_from_slice(y)?;
                    let t = Instant::now();
                    zip(&dx, &dy)
                        .map(|(x, y)| x * SAXPY_A + y)
                        .collect_into(&ex, &dy)?;
                    Ok(secs(t))
                },
                |build, want: &mut Vec<f32>| {
                    want.resize(n, 0.0);
                    want.copy_from_slice(y);
                    let t = Instant::now();
                    rayon_saxpy(build, want, x);
                    Ok(secs(t))
                },
                |got, want| check_exact("pat_saxpy (the AVX2+FMA baseline)", got, want),
            )?;
            avx2_s = avx2;
            check_exact(name, &dy.to_vec()?, &want)?;
            let b = on_gpu(b, &|c| {
                let (s, v) = c.saxpy(SAXPY_A, x, y, reps)?;
                check_exact("pat_saxpy (the CUDA baseline)", &v, &want)?;
                Ok(s)
            })?;
            (s, b, 0.0, 12 * n as u64)
        }
        "pat_dot" | "pat_dot_unfused" => {
            let tmp = DeviceVec::<f32>::zeroed(&ex, n)?;
            let mut got = 0.0f32;
            let (s, b, avx2, want) = builds::alternating(
                reps,
                || {
                    let t = Instant::now();
                    got = if name == "pat_dot" {
                        zip(&dx, &dy).map(|(a, b)| a * b).sum(&ex)?
                    } else {
                        zip(&dx, &dy).map(|(a, b)| a * b).collect_into(&ex, &tmp)?;
                        tmp.sum(&ex)?
                    };
                    Ok(secs(t))
                },
                |build, want: &mut f32| {
                    let t = Instant::now();
                    *want = std::hint::black_box(rayon_dot(build, x, y));
                    Ok(secs(t))
                },
                |&fast, &want| avx2_close(name, fast, want),
            )?;
            avx2_s = avx2;
            let b = on_gpu(b, &|c| {
                let (s, v) = c.reduce(x, Some(y), reps)?;
                check_close(name, v, want)?;
                Ok(s)
            })?;
            (s, b, check_close(name, got, want)?, 8 * n as u64)
        }
        "pat_sum" => {
            let mut got = 0.0f32;
            let (s, b, avx2, want) = builds::alternating(
                reps,
                || {
                    let t = Instant::now();
                    got = dx.sum(&ex)?;
                    Ok(secs(t))
                },
                |build, want: &mut f32| {
                    let t = Instant::now();
                    *want = std::hint::black_box(rayon_sum(build, x));
                    Ok(secs(t))
                },
                |&fast, &want| avx2_close(name, fast, want),
            )?;
            avx2_s = avx2;
            let b = on_gpu(b, &|c| {
                let (s, v) = c.reduce(x, None, reps)?;
                check_close(name, v, want)?;
                Ok(s)
            })?;
            (s, b, check_close(name, got, want)?, 4 * n as u64)
        }
        _ if scan_ex.is_some() => {
            let sex = scan_ex.clone().expect("a scan benchmark");
            let xu: Vec<u32> = x.iter().map(|v| (v * 1000.0) as u32).collect();
            let du = DeviceVec::from_slice(&sex, &xu)?;
            let out = DeviceVec::<u32>::zeroed(&sex, n)?;
            let (s, b, avx2, want) = builds::alternating(
                reps,
                || {
                    let t = Instant::now();
                    du.inclusive_scan_into(&sex, &out, |a, b| a + b)?;
                    Ok(secs(t))
                },
                |build, want: &mut Vec<u32>| {
                    want.resize(n, 0);
                    let t = Instant::now();
                    rayon_scan(build, &xu, want);
                    Ok(secs(t))
                },
                |got, want| exact_u32("pat_scan (the AVX2+FMA baseline)", got, want),
            )?;
            avx2_s = avx2;
            exact_u32(name, &out.to_vec()?, &want)?;
            (s, b, 0.0, 8 * n as u64)
        }
        "pat_sort_pairs" => {
            let keys: Vec<u32> = x.iter().map(|v| (v * 4294967296.0) as u32).collect();
            let ex = ex.with_sort_staging(sort_staging(name, &ex).unwrap_or(ex.sort_staging()))?;
            let d = DeviceVec::<u32>::zeroed(&ex, n)?;
            let v = DeviceVec::<u32>::zeroed(&ex, n)?;
            let idx: Vec<u32> = (0..n as u32).collect();
            let s = timed(reps, || {
                d.copy_from_slice(&keys)?;
                v.copy_from_slice(&idx)?;
                let t = Instant::now();
                strata::patterns::sort_by_key(&ex, &d, &v)?;
                Ok(secs(t))
            })?;
            let (want, b) = sort_baseline(&keys, reps)?;
            let got = d.to_vec()?;
            exact_u32(name, &got, &want)?;
            // The values are the keys' original positions: stable means they carry those keys
            // and rise within equal keys.
            let vals = v.to_vec()?;
            if let Some(i) = (0..n).find(|&i| {
                keys[vals[i] as usize] != got[i]
                    || (i > 0 && got[i] == got[i - 1] && vals[i] < vals[i - 1])
            }) {
                return Err(BenchError::WrongResult {
                    bench: name,
                    detail: format!(
                        "value {i} is {}, not the stable position of key {}",
                        vals[i], got[i]
                    ),
                });
            }
            sort_shape = Some(ex.sort_shape(n, 8)?);
            (s, b, 0.0, 16 * n as u64)
        }
        "pat_sort_u64" => {
            let keys: Vec<u64> = x
                .iter()
                .zip(y)
                .map(|(a, b)| {
                    ((*a as f64 * 4294967296.0) as u64) << 32 | (*b as f64 * 4294967296.0) as u64
                })
                .collect();
            let ex = ex.with_sort_staging(sort_staging(name, &ex).unwrap_or(ex.sort_staging()))?;
            let d = DeviceVec::<u64>::zeroed(&ex, n)?;
            let s = timed(reps, || {
                d.copy_from_slice(&keys)?;
                let t = Instant::now();
                d.sort()?;
                Ok(secs(t))
            })?;
            let mut want = keys.clone();
            let b = timed(reps, || {
                want.copy_from_slice(&keys);
                let t = Instant::now();
                want.par_sort_unstable();
                Ok(secs(t))
            })?;
            let got = d.to_vec()?;
            if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                return Err(BenchError::WrongResult {
                    bench: name,
                    detail: format!(
                        "element {i} is {}, the baseline computed {}",
                        got[i], want[i]
                    ),
                });
            }
            sort_shape = Some(ex.sort_shape(n, 8)?);
            (s, b, 0.0, 16 * n as u64)
        }
        sort if sort_staging(sort, &ex).is_some() => {
            let keys: Vec<u32> = x.iter().map(|v| (v * 4294967296.0) as u32).collect();
            let ex = ex.with_sort_staging(sort_staging(name, &ex).unwrap_or(ex.sort_staging()))?;
            let d = DeviceVec::<u32>::zeroed(&ex, n)?;
            let s = timed(reps, || {
                d.copy_from_slice(&keys)?;
                let t = Instant::now();
                d.sort()?;
                Ok(secs(t))
            })?;
            let (want, b) = sort_baseline(&keys, reps)?;
            exact_u32(name, &d.to_vec()?, &want)?;
            sort_shape = Some(ex.sort_shape(n, 4)?);
            (s, b, 0.0, 8 * n as u64)
        }
        other => {
            return Err(BenchError::InvalidOptions(format!(
                "`{other}` is not a pattern benchmark"
            )))
        }
    };
    let shape = match sort_shape {
        Some(shape) => shape,
        None => {
            let ex = scan_ex.unwrap_or(ex);
            match name {
                "pat_vadd" | "pat_saxpy" => {
                    let st = ex.staging();
                    LaunchShape {
                        local_size: st.group_size as usize,
                        groups: n.div_ceil((st.group_size * st.items_per_thread) as usize),
                    }
                }
                _ => ex.scan_shape(n, 4),
            }
        }
    };
    let (local_size, groups) = (shape.local_size, shape.groups);
    // A CUDA device's rows are compared with CUDA C, which has no second build.
    let avx2_s = avx2_s.filter(|_| baseline == "rayon");
    Ok(BenchResult {
        bench: name,
        device: queue.device().spec(),
        n,
        reps,
        local_size,
        groups,
        bytes,
        flops: 0,
        strata_s,
        baseline,
        baseline_s,
        ratio: strata_s / baseline_s,
        avx2_s: None,
        ratio_avx2: None,
        rel_error,
        compile_s: None,
        compile_cached_s: None,
        tuned: None,
    }
    .with_avx2(avx2_s))
}
