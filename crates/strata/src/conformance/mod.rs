//! The conformance suite: one list of cases, written once, run on every backend present (from
//! `cargo test` and from `strata check --device SPEC`).
//!
//! Each case builds its kernels, runs them on the given queue's device and compares the results
//! with values computed on the host in plain Rust. Integer results must match exactly; float
//! results within the tolerance the case states (the CPU backend is exact for `+ - * /` and
//! `sqrt`, GPU math libraries are allowed a few ULP on transcendental functions).

use crate::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One conformance case.
pub struct Case {
    /// Unique name, `area/feature` (e.g. `control/nested_break`).
    pub name: &'static str,
    /// Runs the case on a queue; `Err` explains the first mismatch.
    pub run: fn(&Queue) -> Result<(), String>,
}

/// The outcome of running the suite.
#[derive(Debug, Default)]
pub struct Report {
    /// Names of the cases that passed.
    pub passed: Vec<&'static str>,
    /// Names and messages of the cases that failed.
    pub failed: Vec<(&'static str, String)>,
}

impl Report {
    /// `N passed, M failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed.len(), self.failed.len())
    }
}

/// Every case, in a stable order.
pub fn cases() -> Vec<Case> {
    let mut v = vec![Case {
        name: "memory/saxpy",
        run: saxpy,
    }];
    v.sort_by_key(|c| c.name);
    v
}

/// Runs every case whose name contains `filter` on `queue`, calling `progress` after each.
/// A case that panics counts as failed.
pub fn run(
    queue: &Queue,
    filter: Option<&str>,
    mut progress: impl FnMut(&str, &Result<(), String>),
) -> Report {
    let mut report = Report::default();
    for case in cases()
        .into_iter()
        .filter(|c| filter.is_none_or(|f| c.name.contains(f)))
    {
        let r = match catch_unwind(AssertUnwindSafe(|| (case.run)(queue))) {
            Ok(r) => r,
            Err(p) => Err(format!(
                "panicked: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        };
        progress(case.name, &r);
        match r {
            Ok(()) => report.passed.push(case.name),
            Err(m) => report.failed.push((case.name, m)),
        }
    }
    report
}

/// Turns any displayable error into the case's error string.
pub fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// Compares two slices exactly, reporting the first difference.
pub fn expect_eq<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    want: &[T],
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: got {} elements, expected {}",
            got.len(),
            want.len()
        ));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}[{i}]: got {:?}, expected {:?}",
            got[i], want[i]
        )),
    }
}

fn saxpy(q: &Queue) -> Result<(), String> {
    let k = Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })
    .map_err(e)?;
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let ys: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let x = Buffer::from_slice(q, &xs).map_err(e)?;
    let y = Buffer::from_slice(q, &ys).map_err(e)?;
    q.launch(&k, NdRange::covering(n, 64), args![3.0f32, &x, &y])
        .map_err(e)?;
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| 3.0 * x + y).collect();
    expect_eq("y", &q.read(&y).map_err(e)?, &want)
}
