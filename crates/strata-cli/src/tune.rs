//! `strata tune`: tunes the built-in pattern kernels on a device with
//! [`strata::patterns::tune::Tuner`], prints what each configuration gained, and saves the
//! records that later processes use.

use serde::{Deserialize, Serialize};
use strata::patterns::tune::{size_class, TuneReport, TunedOp, Tuner, Tuning, TYPES};
use strata::{Device, Queue};

/// What `strata tune` tunes.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// Elements (`u32`) of every operation.
    pub size: usize,
    /// Timed runs per configuration (the median counts).
    pub reps: usize,
    /// The operations, in order.
    pub ops: Vec<TunedOp>,
    /// The element types each operation is tuned for (`map` once, whatever they are).
    pub types: Vec<String>,
}

/// The element types named in `list` (`u32,f32`); an error names an unknown one.
pub fn parse_types(list: &str) -> Result<Vec<String>, String> {
    list.split(',')
        .map(|s| {
            let s = s.trim();
            if TYPES.contains(&s) {
                Ok(s.to_string())
            } else {
                Err(format!(
                    "`{s}` is not a type the tuner takes ({})",
                    TYPES.join(", ")
                ))
            }
        })
        .collect()
}

/// The operations named in `list` (`map,reduce,scan,sort`); an error names an unknown one.
pub fn parse_ops(list: &str) -> Result<Vec<TunedOp>, String> {
    list.split(',')
        .map(|s| {
            TunedOp::from_name(s.trim()).ok_or_else(|| {
                format!("`{s}` is not a tuned operation (map, reduce, scan or sort)")
            })
        })
        .collect()
}

/// Tunes each of `opts.ops` on `queue`, calling `progress` with each report as it comes; the
/// records are in the returned tuner, unsaved.
pub fn run(
    queue: &Queue,
    opts: &TuneOptions,
    mut progress: impl FnMut(&TuneReport),
) -> Result<(Tuner, Vec<TuneReport>), strata::Error> {
    let mut tuner = Tuner::new(queue).reps(opts.reps);
    let mut reports = Vec::new();
    for &op in &opts.ops {
        let types = match op {
            TunedOp::Map => &opts.types[..opts.types.len().min(1)],
            _ => &opts.types[..],
        };
        for ty in types {
            let r = tuner
                .tune_named(op, ty, opts.size)
                .expect("types are checked by parse_types")?;
            progress(&r);
            reports.push(r);
        }
    }
    Ok((tuner, reports))
}

/// One tuned operation as a JSON line (`strata tune --json`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct TuneLine {
    /// Spec of the device.
    pub device: String,
    /// The record key of the operation (`map`, `reduce/4`, ...).
    pub op: String,
    /// Elements it was tuned at.
    pub n: usize,
    /// `ceil(log2 n)`.
    pub class: u32,
    /// The default configuration.
    pub default: String,
    /// Its median seconds.
    pub default_s: f64,
    /// The fastest configuration.
    pub tuned: String,
    /// Its median seconds.
    pub tuned_s: f64,
    /// `default_s / tuned_s`.
    pub gain: f64,
    /// Configurations timed.
    pub trials: usize,
    /// Configurations the device could not run.
    pub skipped: usize,
}

impl TuneLine {
    /// The line of `r` on `device`.
    pub fn new(device: &Device, r: &TuneReport) -> TuneLine {
        TuneLine {
            device: device.info().spec(),
            op: r.record.op.clone(),
            n: r.n,
            class: r.record.class,
            default: r.default.to_string(),
            default_s: r.record.default_s,
            tuned: r.record.choice.to_string(),
            tuned_s: r.record.tuned_s,
            gain: r.gain(),
            trials: r.trials.len(),
            skipped: r.skipped.len(),
        }
    }
}

/// The reports as an aligned table: operation, default and tuned times, gain, configurations
/// timed, then each tuned configuration against the default.
pub fn table(device: &Device, reports: &[TuneReport]) -> String {
    let info = device.info();
    let mut rows = vec![[
        "op".to_string(),
        "n".to_string(),
        "default ms".to_string(),
        "tuned ms".to_string(),
        "gain".to_string(),
        "tried".to_string(),
    ]];
    for r in reports {
        rows.push([
            r.record.op.clone(),
            r.n.to_string(),
            format!("{:.3}", r.record.default_s * 1e3),
            format!("{:.3}", r.record.tuned_s * 1e3),
            format!("{:.2}x", r.gain()),
            format!("{} (+{} skipped)", r.trials.len(), r.skipped.len()),
        ]);
    }
    let mut out = format!("device {} ({})\n", info.spec(), info.name);
    out.push_str(&crate::report::aligned(&rows));
    for r in reports {
        out.push_str(&format!(
            "{}: default {}\n{}  tuned   {}\n",
            r.record.op,
            r.default,
            " ".repeat(r.record.op.len()),
            r.record.choice
        ));
    }
    out
}

/// What the patterns on `device` run with for `n` elements of each of `types` under `tuning`:
/// one line per operation and type, the record used (its size class) or `defaults`.
pub fn show(device: &Device, tuning: &Tuning, n: usize, types: &[String]) -> String {
    let mut out = format!(
        "device {} ({}), n = {n} (size class {})\n",
        device.info().spec(),
        device.info().name,
        size_class(n)
    );
    let mut keys: Vec<String> = Vec::new();
    for op in TunedOp::ALL {
        for ty in types {
            let key = op.key(ty);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    for key in keys {
        match tuning.lookup(device, &key, n) {
            Some(r) => out.push_str(&format!(
                "{key}: {} (record of size class {}, {:.2}x over the default)\n",
                r.choice,
                r.class,
                r.default_s / r.tuned_s
            )),
            None => out.push_str(&format!("{key}: defaults (no record)\n")),
        }
    }
    out
}
