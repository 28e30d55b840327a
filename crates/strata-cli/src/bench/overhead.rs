//! The host overhead of a pattern call (issue 33, item 4): what one call costs beyond its
//! kernel, beside a raw launch of the same cached kernel.
//!
//! | bench             | pattern call (strata time)                       | baseline (`launch`)                          |
//! |-------------------|--------------------------------------------------|----------------------------------------------|
//! | `overhead_map`    | `zip(&x, &y).map(a + b).collect_into(&ex, &z)` over 1 element | the same kernel and arguments: `Kernel::enqueue`, wait |
//! | `overhead_reduce` | `x.sum(&ex)` over 1 element (one kernel, then a 1-element read) | the same kernel and arguments: `Kernel::enqueue`, wait, a 1-element read |
//!
//! Both sides run [`CALLS`] times per repetition, after a warm-up call that compiles the kernel;
//! the times reported are the median over the repetitions of one call's time (seconds, as
//! every row; `strata bench` prints them as µs per call under the table, with the
//! difference). The raw launch is captured from the pattern call itself
//! ([`strata::patterns::capture_launches`]): the same kernel object, range and argument
//! buffers, so the difference is the pattern's own host work (the checks of the view and
//! the output, walking the views for the launch arguments and finding the kernel by their
//! types, scratch buffers; the first call records the kernel, later ones do not: see
//! `strata::patterns::Walk`).
//!
//! The launch rows (issue 31, item 5) time what one launch of a cached, empty kernel costs
//! (`Kernel::enqueue`, then wait), beside rayon scheduling as much empty work from the same
//! thread. The kernel is empty in effect (its one store is guarded by `i < n`, launched with
//! n = 0).
//!
//! | bench                | launch (strata time)                  | baseline (`rayon`)                         |
//! |----------------------|---------------------------------------|--------------------------------------------|
//! | `overhead_launch1`   | an empty kernel, 1 work-group of 1    | `rayon::join` of two empty closures        |
//! | `overhead_launch2`   | an empty kernel, 2 work-groups of 1   | `par_iter` over 2 items, empty body        |
//! | `overhead_launch64`  | an empty kernel, 64 work-groups of 1  | `par_iter` over 64 items, empty body       |
//!
//! The size option is ignored: the point is the cost at 1 element (or of an empty launch).

use crate::bench::{BenchError, BenchResult};
use std::time::Instant;
use strata::patterns::{capture_launches, zip, CapturedLaunch, DeviceVec, Exec, View};
use strata::Queue;

/// The overhead benchmarks.
pub const BENCHES: [&str; 5] = [
    "overhead_map",
    "overhead_reduce",
    "overhead_launch1",
    "overhead_launch2",
    "overhead_launch64",
];

/// Calls timed per repetition.
pub const CALLS: usize = 2000;

/// Median over `reps` repetitions of the time of one of [`CALLS`] calls of `f`.
fn per_call(reps: usize, mut f: impl FnMut() -> Result<(), BenchError>) -> Result<f64, BenchError> {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..CALLS {
            f()?;
        }
        times.push(t.elapsed().as_secs_f64() / CALLS as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// The one launch `call` makes (an error if it makes another number).
fn one_launch(
    name: &'static str,
    call: impl FnOnce() -> Result<(), BenchError>,
) -> Result<CapturedLaunch, BenchError> {
    let (r, mut launches) = capture_launches(call);
    r?;
    if launches.len() != 1 {
        return Err(BenchError::WrongResult {
            bench: name,
            detail: format!("the pattern call made {} launches, not 1", launches.len()),
        });
    }
    Ok(launches.pop().unwrap())
}

/// The work-groups of launch row `name` (`overhead_launch<N>`), `None` for the other rows.
fn launch_groups(name: &str) -> Option<usize> {
    name.strip_prefix("overhead_launch")?.parse().ok()
}

/// Runs launch row `name` over `groups` work-groups (see the module docs).
fn run_launch(
    name: &'static str,
    groups: usize,
    queue: &Queue,
    reps: usize,
) -> Result<BenchResult, BenchError> {
    use rayon::prelude::*;
    use strata::prelude::*;
    // Empty in effect: its one statement is guarded by `i < n` and the launch passes n = 0.
    let empty = Kernel::build("empty", |k| {
        let y = k.read_write::<u32>("y");
        let n = k.scalar::<u32>("n");
        let i = global_id(0);
        if_(i.lt(n), || y.set(i, 1u32));
    })?;
    let y = Buffer::<u32>::new(queue.device(), 1)?;
    let range = NdRange::new(groups).local(1);
    empty.enqueue(queue, range, args![&y, 0u32], &[])?.wait()?;
    let strata_s = per_call(reps, || {
        empty.enqueue(queue, range, args![&y, 0u32], &[])?.wait()?;
        Ok(())
    })?;
    let baseline_s = per_call(reps, || {
        if groups == 1 {
            rayon::join(|| std::hint::black_box(0), || std::hint::black_box(1));
        } else {
            (0..groups).into_par_iter().for_each(|i| {
                std::hint::black_box(i);
            });
        }
        Ok(())
    })?;
    // Like every overhead row: the size option is ignored, n is 1 (the work-groups are in
    // `groups`).
    Ok(BenchResult {
        local_size: 1,
        groups,
        ..super::row(
            queue,
            name,
            1,
            reps,
            0,
            strata_s,
            ("rayon", baseline_s),
            0.0,
        )
    })
}

/// Runs overhead benchmark `name` on `queue`.
pub fn run(name: &'static str, queue: &Queue, reps: usize) -> Result<BenchResult, BenchError> {
    if let Some(groups) = launch_groups(name) {
        return run_launch(name, groups, queue, reps);
    }
    let ex = Exec::new(queue).untuned();
    let x = DeviceVec::from_slice(&ex, &[1.5f32])?;
    let y = DeviceVec::from_slice(&ex, &[2.25f32])?;
    let z = DeviceVec::<f32>::zeroed(&ex, 1)?;
    let (strata_s, baseline_s) = match name {
        "overhead_map" => {
            let call = || -> Result<(), BenchError> {
                zip(&x, &y).map(|(a, b)| a + b).collect_into(&ex, &z)?;
                Ok(())
            };
            let raw = one_launch(name, call)?;
            if z.to_vec()? != [3.75] {
                return Err(BenchError::WrongResult {
                    bench: name,
                    detail: format!("1.5 + 2.25 gave {:?}", z.to_vec()?),
                });
            }
            let s = per_call(reps, call)?;
            let b = per_call(reps, || {
                raw.enqueue(queue)?.wait()?;
                Ok(())
            })?;
            (s, b)
        }
        "overhead_reduce" => {
            let call = || -> Result<(), BenchError> {
                let s: f32 = x.sum(&ex)?;
                if s != 1.5 {
                    return Err(BenchError::WrongResult {
                        bench: name,
                        detail: format!("the sum of [1.5] gave {s}"),
                    });
                }
                Ok(())
            };
            let raw = one_launch(name, call)?;
            let s = per_call(reps, call)?;
            let b = per_call(reps, || {
                raw.enqueue(queue)?.wait()?;
                // The pattern reads its one result back; so does the raw side (a buffer of
                // the same size, 4 bytes).
                queue.read_range(z.buffer(), 0..1)?;
                Ok(())
            })?;
            (s, b)
        }
        other => {
            return Err(BenchError::InvalidOptions(format!(
                "`{other}` is not an overhead benchmark"
            )))
        }
    };
    let st = ex.staging();
    Ok(BenchResult {
        local_size: st.group_size as usize,
        groups: 1,
        ..super::row(
            queue,
            name,
            1,
            reps,
            0,
            strata_s,
            ("launch", baseline_s),
            0.0,
        )
    })
}

/// The line `strata bench` prints under its table for an overhead row.
pub fn summary(r: &BenchResult) -> String {
    if launch_groups(r.bench).is_some() {
        let what = if r.groups == 1 {
            "rayon::join of two empty closures".to_string()
        } else {
            format!("rayon par_iter over {} items", r.groups)
        };
        return format!(
            "{}: {:.2} µs per launch of an empty kernel over {} work-group(s), enqueue and wait; {:.2} µs per {what}\n",
            r.bench,
            r.strata_s * 1e6,
            r.groups,
            r.baseline_s * 1e6,
        );
    }
    format!(
        "{}: {:.2} µs per pattern call, {:.2} µs per raw launch of the same kernel: {:.2} µs of host overhead per call\n",
        r.bench,
        r.strata_s * 1e6,
        r.baseline_s * 1e6,
        (r.strata_s - r.baseline_s) * 1e6
    )
}
