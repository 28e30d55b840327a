//! Launch parameters tuned by measurement, remembered on disk.
//!
//! A [`Tuner`] times a small set of candidate configurations of one operation on the actual
//! device and keeps the fastest as a [`TuneRecord`], keyed by the device
//! ([`device_key`]), the operation ([`TunedOp`], or a user kernel's name) and the size class of
//! the problem (`ceil(log2 n)`). [`Tuning`] is a table of records, stored as a small
//! tab-separated text file; [`Tuner::save`] merges a tuner's records into it.
//!
//! **Who uses the records.** [`Exec::new`](super::Exec::new) reads the records of
//! its device from the default file (see [`default_path`]; `STRATA_TUNE_DIR=off` turns that
//! off), and every pattern call then runs with the record of its operation and the nearest size
//! class, if there is one ([`Exec::tuned_for`](super::Exec::tuned_for)). An exec
//! whose staging was set explicitly (`with_staging`, `with_sort_staging`,
//! `with_scan_algorithm`, [`untuned`](super::Exec::untuned)) ignores the records.
//! User kernels look their tuned local size up with [`local_size`].
//!
//! **What is tuned.** Element-wise kernels (`map`: `collect`, `for_each`, ...): work-group
//! size, elements per work-item and layout. Reductions: the same with the reduction layout and
//! the number of work-groups. Scans: the same, the scan algorithm where the device can run
//! the look-back scan, and the look-back tile. The radix sort: its ranking method, digit width,
//! work-group size, keys per work-item and work-groups. The search starts from the device's
//! defaults and changes one parameter at a time, keeping each change that is faster (a
//! coordinate descent: a few dozen runs, not the product of all values). Each configuration
//! runs once untimed (which also gives its result), then is timed; the fastest is timed
//! against the default once more, the two alternating, and becomes a record only if it is
//! more than [`MARGIN`] faster there, so that timing noise alone makes no record.
//! [`Tuner::tune_local_size`] does the same for a user's kernel over the local sizes given.
//!
//! **Results do not depend on tuning** where the operation is exact: the tuner runs every
//! candidate on the same data and fails with [`TuningError`] if one gives a different result
//! from the default's (sums, scans and sorts of integers do not depend on the order of the
//! work; floats are tuned on data whose sums are exact in any order, see [`Tunable`]).
//! Floating-point reductions may round differently with another staging, as they would with
//! another device.
//!
//! **The file** holds one record per line, tab-separated, the choice as `key=value` pairs;
//! [`Tuning::save`] merges into what is there and replaces the file by renaming a temporary
//! one, so concurrent processes never read half a file. A line that is not a record (malformed,
//! or a value out of the range the staging allows, such as `local=0`) is dropped with one
//! warning naming the file and the line, and the other records are used; the next save writes
//! the file without it. [`Tuning::read`] returns such lines as [`TuningError`]s.

use super::{
    zip, DeviceVec, Exec, Layout, ScanAlgorithm, SortKey, SortMethod, SortStaging, Staging, View,
};
use crate::error::{Error, Result};
use crate::{Device, DeviceInfo, Queue};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Tuning records that cannot be read or written, or a tuning run that went wrong (a
/// configuration that changed an exact result, none that ran). It converts into
/// [`Error::Layer`]; `err.layer::<TuningError>()` gives it back.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("tuning records {path}: {reason}")]
pub struct TuningError {
    /// The records file (`(memory)` for a tuning run).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

impl From<TuningError> for Error {
    fn from(e: TuningError) -> Error {
        Error::Layer(crate::error::LayerError::new(e))
    }
}

/// The pattern operations the tuner knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TunedOp {
    /// Element-wise kernels (`collect`, `collect_into`, `for_each`, `fill`, ...).
    Map,
    /// Reductions (`reduce`, `sum`, `min`, `max`, `count`, `argmin`, ...).
    Reduce,
    /// Scans (`inclusive_scan`, `exclusive_scan` and their in-place forms).
    Scan,
    /// The radix sort (`sort`, `sort_by_key`, `sorted`).
    Sort,
}

impl TunedOp {
    /// Every operation, in the order `strata tune` runs them.
    pub const ALL: [TunedOp; 4] = [TunedOp::Map, TunedOp::Reduce, TunedOp::Scan, TunedOp::Sort];

    /// `map`, `reduce`, `scan` or `sort`.
    pub fn name(self) -> &'static str {
        match self {
            TunedOp::Map => "map",
            TunedOp::Reduce => "reduce",
            TunedOp::Scan => "scan",
            TunedOp::Sort => "sort",
        }
    }

    /// The operation called `name` (as [`TunedOp::name`] writes it).
    pub fn from_name(name: &str) -> Option<TunedOp> {
        TunedOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The record key of this operation on elements of type `elem` (`u32`, `f32`, ...; for
    /// the sort the key's type): `map` (element-wise kernels are tuned whatever their
    /// elements: they move data), `reduce/f32`, `scan/u32`, `sort/u64`, ...
    pub fn key(self, elem: impl fmt::Display) -> String {
        match self {
            TunedOp::Map => "map".into(),
            _ => format!("{}/{elem}", self.name()),
        }
    }
}

/// An element type the tuner can tune the patterns on: the sort's key types (`u32`, `i32`,
/// `f32`, `u64`, `i64`). Reductions and scans of floats are tuned on the values 0 and 1, whose
/// sums are exact in any order, so that every configuration must give the same result.
pub trait Tunable: SortKey {
    /// A value of the data `op` is tuned on, made from the random bits `bits`.
    fn sample(op: TunedOp, bits: u64) -> Self;
}

macro_rules! tunable_int {
    ($($t:ty),*) => {$(
        impl Tunable for $t {
            fn sample(_: TunedOp, bits: u64) -> $t {
                bits as $t
            }
        }
    )*};
}
tunable_int!(u32, i32, u64, i64);

impl Tunable for f32 {
    fn sample(op: TunedOp, bits: u64) -> f32 {
        match op {
            TunedOp::Reduce | TunedOp::Scan => (bits & 1) as f32,
            // Finite values in [-512, 512) on a 1/1024 grid.
            _ => ((bits >> 44) as f32) / 1024.0 - 512.0,
        }
    }
}

/// The names of the [`Tunable`] types, as [`Tuner::tune_named`] takes them.
pub const TYPES: [&str; 5] = ["u32", "i32", "f32", "u64", "i64"];

/// A tuned configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The staging of element-wise kernels, reductions and scans; for scans also the scan
    /// algorithm (never [`ScanAlgorithm::Auto`]).
    Staging {
        /// The staged values.
        staging: Staging,
        /// The scan algorithm, for scans.
        scan: Option<ScanAlgorithm>,
    },
    /// The staging of the radix sort.
    Sort(SortStaging),
    /// The local size of a user kernel.
    LocalSize(usize),
}

fn layout_name(l: Layout) -> &'static str {
    match l {
        Layout::Contiguous => "contiguous",
        Layout::Strided => "strided",
    }
}

impl fmt::Display for Choice {
    /// `key=value` pairs separated by spaces, as stored in the records file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Choice::Staging { staging: s, scan } => {
                write!(
                    f,
                    "group={} items={} max_groups={} layout={} reduce_layout={} scan_items={}",
                    s.group_size,
                    s.items_per_thread,
                    s.max_groups,
                    layout_name(s.layout),
                    layout_name(s.reduce_layout),
                    s.scan_items_per_thread
                )?;
                match scan {
                    Some(ScanAlgorithm::LookBack) => write!(f, " scan=lookback"),
                    Some(_) => write!(f, " scan=multipass"),
                    None => Ok(()),
                }
            }
            Choice::Sort(s) => write!(
                f,
                "method={} digit_bits={} group={} keys={} max_groups={}",
                match s.method {
                    SortMethod::Tiles => "tiles",
                    SortMethod::Parts => "parts",
                    SortMethod::Onesweep => "onesweep",
                },
                s.digit_bits,
                s.group_size,
                s.keys_per_thread,
                s.max_groups
            ),
            Choice::LocalSize(l) => write!(f, "local={l}"),
        }
    }
}

/// The largest work-group size a record may hold (no device allows more).
const MAX_GROUP: u32 = 65536;

impl std::str::FromStr for Choice {
    type Err = String;

    /// Reads what [`Display`](fmt::Display) writes. Values out of the range the staging allows
    /// (`local=0`, `items=65`, `digit_bits=9`) are refused, naming the pair and the range.
    fn from_str(text: &str) -> std::result::Result<Choice, String> {
        let mut pairs = Vec::new();
        for part in text.split_whitespace() {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not key=value"))?;
            pairs.push((k, v));
        }
        let get = |key: &str| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        // A whole number in `lo..=hi` (the ranges `Staging` and `SortStaging` allow).
        let num = |key: &str, lo: u32, hi: u32| -> std::result::Result<u32, String> {
            let v = get(key).ok_or_else(|| format!("`{key}` is missing"))?;
            let n: u32 = v
                .parse()
                .map_err(|_| format!("`{key}={v}` is not a whole number"))?;
            if !(lo..=hi).contains(&n) {
                return Err(format!(
                    "`{key}={v}` is out of range: allowed are {lo} to {hi}"
                ));
            }
            Ok(n)
        };
        let layout = |key: &str| match get(key) {
            Some("contiguous") => Ok(Layout::Contiguous),
            Some("strided") => Ok(Layout::Strided),
            Some(v) => Err(format!("`{key}={v}`: the layout is contiguous or strided")),
            None => Err(format!("`{key}` is missing")),
        };
        if get("local").is_some() {
            return Ok(Choice::LocalSize(num("local", 1, MAX_GROUP)? as usize));
        }
        if let Some(m) = get("method") {
            let method = match m {
                "tiles" => SortMethod::Tiles,
                "parts" => SortMethod::Parts,
                "onesweep" => SortMethod::Onesweep,
                _ => {
                    return Err(format!(
                        "`method={m}`: the method is tiles, parts or onesweep"
                    ))
                }
            };
            return Ok(Choice::Sort(SortStaging {
                method,
                digit_bits: num("digit_bits", 1, 8)?,
                group_size: num("group", 1, MAX_GROUP)?,
                keys_per_thread: num("keys", 1, 32)?,
                max_groups: num("max_groups", 1, 65536)?,
            }));
        }
        let scan = match get("scan") {
            None => None,
            Some("lookback") => Some(ScanAlgorithm::LookBack),
            Some("multipass") => Some(ScanAlgorithm::MultiPass),
            Some(v) => return Err(format!("`scan={v}`: the scan is lookback or multipass")),
        };
        Ok(Choice::Staging {
            staging: Staging {
                group_size: num("group", 1, MAX_GROUP)?,
                items_per_thread: num("items", 1, 64)?,
                max_groups: num("max_groups", 1, 65536)?,
                layout: layout("layout")?,
                reduce_layout: layout("reduce_layout")?,
                scan_items_per_thread: num("scan_items", 1, 64)?,
            },
            scan,
        })
    }
}

/// One tuned configuration: for this device, operation and size class, this choice, and what
/// it and the default measured.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneRecord {
    /// The device ([`device_key`]).
    pub device: String,
    /// The operation: [`TunedOp::key`] for patterns, `kernel/NAME` for user kernels.
    pub op: String,
    /// `ceil(log2 n)` of the problem size it was tuned at.
    pub class: u32,
    /// The fastest configuration.
    pub choice: Choice,
    /// Median seconds of the default configuration.
    pub default_s: f64,
    /// Median seconds of the chosen configuration.
    pub tuned_s: f64,
}

/// The size class of a problem of `n` elements: `ceil(log2 n)` (0 for 0 and 1).
pub fn size_class(n: usize) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

/// The key of a device in the records: backend, name, driver version and compute units, so
/// that records follow the hardware and driver rather than the device's index.
pub fn device_key(info: &DeviceInfo) -> String {
    let driver = info
        .extra
        .iter()
        .find(|(k, _)| k == "driver version")
        .map_or("", |(_, v)| v.as_str());
    format!(
        "{:?}|{}|{}|{} units",
        info.backend, info.name, driver, info.compute_units
    )
    .replace(['\t', '\n'], " ")
}

/// The records file: `$STRATA_TUNE_DIR/records.tsv` if set (`off`, `0` or empty: no file),
/// else `$XDG_CACHE_HOME/strata/tune/records.tsv`, else `~/.cache/strata/tune/records.tsv`.
pub fn default_path() -> Option<PathBuf> {
    crate::settings::user_cache_dir("STRATA_TUNE_DIR", "tune").map(|d| d.join("records.tsv"))
}

const HEADER: &str =
    "# strata tuning records: device\top\tsize class\tchoice\tdefault seconds\ttuned seconds";

/// A table of [`TuneRecord`]s, read from and written to a text file (one record per line,
/// tab-separated; `#` starts a comment line).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tuning {
    records: Vec<TuneRecord>,
}

impl Tuning {
    /// No records.
    pub fn new() -> Tuning {
        Tuning::default()
    }

    /// The records of the file at `path`; no records if it does not exist. Fails with
    /// [`TuningError`] naming the path when it cannot be read. A line that is not a record is
    /// dropped, with one warning on stderr naming the file and the line (once per process);
    /// [`Tuning::read`] returns those lines instead.
    pub fn load(path: &Path) -> Result<Tuning> {
        let (t, bad) = Tuning::read(path)?;
        let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
        for e in bad {
            let message = e.to_string();
            if !warned.contains(&message) {
                eprintln!("strata: warning: {message}; the line is ignored");
                warned.push(message);
            }
        }
        Ok(t)
    }

    /// The records of the file at `path` (no records if it does not exist) and, for each line
    /// that is not a record (malformed, or a value out of range), a [`TuningError`] naming the
    /// file and the line. Fails only when the file cannot be read.
    pub fn read(path: &Path) -> Result<(Tuning, Vec<TuningError>)> {
        let text = match std::fs::read(path) {
            Ok(t) => String::from_utf8_lossy(&t).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Tuning::new(), Vec::new()))
            }
            Err(e) => {
                return Err(TuningError {
                    path: path.display().to_string(),
                    reason: format!("cannot read it: {e}"),
                }
                .into())
            }
        };
        let mut t = Tuning::new();
        let mut bad = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line) {
                Ok(rec) => t.insert(rec),
                Err(reason) => bad.push(TuningError {
                    path: path.display().to_string(),
                    reason: format!("line {}: {reason}: `{line}`", i + 1),
                }),
            }
        }
        Ok((t, bad))
    }

    /// The records of the default file ([`default_path`]), read once per process (and again
    /// after [`Tuning::save`] writes that file). An unreadable file gives no records and one
    /// warning on stderr; a line that is not a record is dropped (see [`Tuning::load`]).
    pub fn default_records() -> Arc<Tuning> {
        let mut cached = DEFAULT.lock().unwrap_or_else(|p| p.into_inner());
        cached
            .get_or_insert_with(|| {
                let t = match default_path() {
                    Some(p) => Tuning::load(&p).unwrap_or_else(|e| {
                        eprintln!("strata: ignoring the tuning records: {e}");
                        Tuning::new()
                    }),
                    None => Tuning::new(),
                };
                Arc::new(t)
            })
            .clone()
    }

    /// All records.
    pub fn records(&self) -> &[TuneRecord] {
        &self.records
    }

    /// Adds `rec`, replacing the record of the same device, operation and size class.
    pub fn insert(&mut self, rec: TuneRecord) {
        match self
            .records
            .iter_mut()
            .find(|r| r.device == rec.device && r.op == rec.op && r.class == rec.class)
        {
            Some(r) => *r = rec,
            None => self.records.push(rec),
        }
    }

    /// The records of `device` only.
    pub fn for_device(&self, device: &Device) -> Tuning {
        let key = device_key(device.info());
        Tuning {
            records: self
                .records
                .iter()
                .filter(|r| r.device == key)
                .cloned()
                .collect(),
        }
    }

    /// The record of `op` on `device` whose size class is nearest to that of `n` (the larger
    /// one on a tie), if any.
    pub fn lookup(&self, device: &Device, op: &str, n: usize) -> Option<&TuneRecord> {
        let key = device_key(device.info());
        nearest(self.records.iter().filter(|r| r.device == key), op, n)
    }

    /// [`Tuning::lookup`] among all records, whatever their device (for a table that holds
    /// one device's records, as [`Tuning::for_device`] makes).
    pub(crate) fn lookup_any_device(&self, op: &str, n: usize) -> Option<&TuneRecord> {
        nearest(self.records.iter(), op, n)
    }

    /// Writes these records into the file at `path`, merged with the records already there
    /// (these replace those of the same device, operation and size class), through a
    /// temporary file renamed over it. Lines of the existing file that are not records are
    /// dropped (with a warning, see [`Tuning::load`]). Fails with [`TuningError`] when the
    /// file cannot be read or written.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut all = Tuning::load(path)?;
        for r in &self.records {
            all.insert(r.clone());
        }
        let err = |e: std::io::Error| TuningError {
            path: path.display().to_string(),
            reason: format!("cannot write it: {e}"),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut text = String::from(HEADER);
        text.push('\n');
        for r in &all.records {
            text.push_str(&format!(
                "{}\t{}\t{}\t{}\t{:e}\t{:e}\n",
                r.device, r.op, r.class, r.choice, r.default_s, r.tuned_s
            ));
        }
        let tmp = path.with_extension(format!("tsv.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)?;
        if default_path().as_deref() == Some(path) {
            *DEFAULT.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(all));
        }
        Ok(())
    }
}

static DEFAULT: Mutex<Option<Arc<Tuning>>> = Mutex::new(None);

/// The warnings [`Tuning::load`] printed, so that each is printed once per process.
static WARNED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The record of `op` among `records` whose size class is nearest to that of `n` (the larger
/// one on a tie).
fn nearest<'a>(
    records: impl Iterator<Item = &'a TuneRecord>,
    op: &str,
    n: usize,
) -> Option<&'a TuneRecord> {
    let class = size_class(n) as i64;
    records
        .filter(|r| r.op == op)
        .min_by_key(|r| ((r.class as i64 - class).abs(), -(r.class as i64)))
}

fn parse_line(line: &str) -> std::result::Result<TuneRecord, String> {
    let f: Vec<&str> = line.split('\t').collect();
    if f.len() != 6 {
        return Err(format!("{} tab-separated fields, not 6", f.len()));
    }
    let secs = |s: &str| -> std::result::Result<f64, String> {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("`{s}` is not a time in seconds"))
    };
    Ok(TuneRecord {
        device: f[0].to_string(),
        op: f[1].to_string(),
        class: f[2]
            .parse()
            .ok()
            .filter(|c| *c <= 64)
            .ok_or_else(|| format!("`{}` is not a size class (0 to 64)", f[2]))?,
        choice: f[3].parse()?,
        default_s: secs(f[4])?,
        tuned_s: secs(f[5])?,
    })
}

/// The tuned local size of the user kernel `kernel` on `device` for `n` work-items (the
/// record of the nearest size class in the default records file), if it was tuned with
/// [`Tuner::tune_local_size`].
pub fn local_size(device: &Device, kernel: &str, n: usize) -> Option<usize> {
    match Tuning::default_records()
        .lookup(device, &format!("kernel/{kernel}"), n)?
        .choice
    {
        Choice::LocalSize(l) => Some(l),
        _ => None,
    }
}

/// What one tuning run measured.
#[derive(Clone, Debug)]
pub struct TuneReport {
    /// The record it made.
    pub record: TuneRecord,
    /// The default configuration.
    pub default: Choice,
    /// The problem size it was tuned at.
    pub n: usize,
    /// Every configuration timed, with its median seconds, in the order tried.
    pub trials: Vec<(Choice, f64)>,
    /// Configurations the device could not run, with the reason.
    pub skipped: Vec<(Choice, String)>,
}

impl TuneReport {
    /// `default_s / tuned_s`: how many times faster the tuned configuration is.
    pub fn gain(&self) -> f64 {
        self.record.default_s / self.record.tuned_s
    }
}

/// Times candidate configurations on a device and keeps the fastest of each tuned operation
/// (see the module docs). The records stay in the tuner until [`Tuner::save`].
#[derive(Debug)]
pub struct Tuner {
    queue: Queue,
    reps: usize,
    tuning: Tuning,
}

impl Tuner {
    /// A tuner on `queue`, timing each configuration 5 times after one untimed run.
    pub fn new(queue: &Queue) -> Tuner {
        Tuner {
            queue: queue.clone(),
            reps: 5,
            tuning: Tuning::new(),
        }
    }

    /// Times each configuration `reps` times (at least 1); the median counts.
    pub fn reps(self, reps: usize) -> Tuner {
        Tuner {
            reps: reps.max(1),
            ..self
        }
    }

    /// The records made so far.
    pub fn records(&self) -> &Tuning {
        &self.tuning
    }

    /// Merges the records made so far into the file at `path` (see [`Tuning::save`]).
    pub fn save(&self, path: &Path) -> Result<()> {
        self.tuning.save(path)
    }

    /// Tunes the pattern operation `op` at `n` elements of `T` (`map`: the element-wise sum of
    /// two vectors; `reduce`: a sum; `scan`: an inclusive `+` scan; `sort`: a sort of keys
    /// alone), starting from the device's defaults; records and returns the fastest
    /// configuration (for `map` under the key `map`, whatever `T`). Fails with
    /// [`TuningError`] if a configuration gives another result than the default's, and
    /// with the device's errors; configurations the device cannot run are skipped (listed in
    /// the report). Floats are tuned on exact data (see [`Tunable`]).
    pub fn tune<T: Tunable>(&mut self, op: TunedOp, n: usize) -> Result<TuneReport> {
        super::check_u32("tune", n)?;
        let ex = Exec::new(&self.queue).untuned();
        let work = Workload::<T>::new(&ex, op, n.max(1))?;
        let default = match op {
            TunedOp::Sort => Choice::Sort(ex.sort_staging()),
            TunedOp::Scan => Choice::Staging {
                staging: ex.staging(),
                scan: Some(ex.scan_algorithm_for(std::mem::size_of::<T>())),
            },
            _ => Choice::Staging {
                staging: ex.staging(),
                scan: None,
            },
        };
        let mut search = Search::new(self.reps, work.effective(&ex, default).0);
        search.run(
            op,
            |c| work.effective(&ex, c),
            |c, read| work.run(&ex, c, read),
        )?;
        self.finish(op.key(T::TYPE), n, search)
    }

    /// [`Tuner::tune`] with the element type named `elem` (one of [`TYPES`]); `None` for
    /// another name.
    pub fn tune_named(&mut self, op: TunedOp, elem: &str, n: usize) -> Option<Result<TuneReport>> {
        Some(match elem {
            "u32" => self.tune::<u32>(op, n),
            "i32" => self.tune::<i32>(op, n),
            "f32" => self.tune::<f32>(op, n),
            "u64" => self.tune::<u64>(op, n),
            "i64" => self.tune::<i64>(op, n),
            _ => return None,
        })
    }

    /// Tunes the local size of a user kernel `kernel` over `n` work-items: `run(local)` must
    /// launch it with that local size and wait for it. Each of `candidates` is timed (the
    /// first counts as the default); returns and records the fastest. Later processes find it
    /// with [`local_size`] once saved to the default file.
    pub fn tune_local_size(
        &mut self,
        kernel: &str,
        n: usize,
        candidates: &[usize],
        mut run: impl FnMut(usize) -> Result<()>,
    ) -> Result<TuneReport> {
        let Some(&first) = candidates.first() else {
            return Err(TuningError {
                path: "(memory)".into(),
                reason: format!("no candidate local sizes for kernel `{kernel}`"),
            }
            .into());
        };
        let mut search = Search::new(self.reps, Choice::LocalSize(first));
        let mut timed = |c, _| match c {
            Choice::LocalSize(l) => {
                let t = Instant::now();
                run(l)?;
                Ok((t.elapsed().as_secs_f64(), Vec::new()))
            }
            _ => unreachable!("local sizes only"),
        };
        for &l in candidates {
            search.measure(Choice::LocalSize(l), &mut timed)?;
        }
        search.confirm(&mut timed)?;
        self.finish(format!("kernel/{kernel}"), n, search)
    }

    fn finish(&mut self, op: String, n: usize, search: Search) -> Result<TuneReport> {
        let (best, best_s) = search.best().ok_or_else(|| TuningError {
            path: "(memory)".into(),
            reason: format!(
                "no configuration of `{op}` ran on {}: {}",
                self.queue.device().info().spec(),
                search
                    .skipped
                    .iter()
                    .map(|(c, e)| format!("{c}: {e}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        })?;
        let default_s = search
            .trials
            .iter()
            .find(|(c, _)| *c == search.default)
            .map_or(best_s, |t| t.1);
        // The winner of the search stays only if it wins the side-by-side comparison.
        let (choice, default_s, tuned_s) = match search.confirmed {
            Some((c, d, t)) if t * (1.0 + MARGIN) < d => (c, d, t),
            Some((_, d, _)) => (search.default, d, d),
            None => (best, default_s, best_s),
        };
        let record = TuneRecord {
            device: device_key(self.queue.device().info()),
            op,
            class: size_class(n),
            choice,
            default_s,
            tuned_s,
        };
        self.tuning.insert(record.clone());
        Ok(TuneReport {
            record,
            default: search.default,
            n,
            trials: search.trials,
            skipped: search.skipped,
        })
    }
}

/// How much faster than the default (a fraction) a configuration must be to be chosen.
pub const MARGIN: f64 = 0.03;

/// Runs one configuration: the seconds it took and, when asked (`true`), its result, read
/// back after the timing.
type RunFn<'a> = dyn FnMut(Choice, bool) -> Result<(f64, Vec<u8>)> + 'a;

/// The coordinate descent: measured configurations, the first result as the reference.
struct Search {
    reps: usize,
    default: Choice,
    trials: Vec<(Choice, f64)>,
    skipped: Vec<(Choice, String)>,
    /// The first configuration's result, as bytes (floats compare bit for bit).
    reference: Option<(Choice, Vec<u8>)>,
    /// The fastest configuration and the medians of the default and of it, timed alternately
    /// at the end ([`Search::confirm`]).
    confirmed: Option<(Choice, f64, f64)>,
}

impl Search {
    fn new(reps: usize, default: Choice) -> Search {
        Search {
            reps,
            default,
            trials: Vec::new(),
            skipped: Vec::new(),
            reference: None,
            confirmed: None,
        }
    }

    /// The fastest configuration so far; the default unless another is more than
    /// [`MARGIN`] faster (so that timing noise alone does not make a record that differs from
    /// the default).
    fn best(&self) -> Option<(Choice, f64)> {
        let fastest =
            self.trials
                .iter()
                .fold(None, |b: Option<(Choice, f64)>, &(c, s)| match b {
                    Some((_, bs)) if bs <= s => b,
                    _ => Some((c, s)),
                })?;
        match self.trials.iter().find(|t| t.0 == self.default) {
            Some(&d) if d.1 <= fastest.1 * (1.0 + MARGIN) => Some(d),
            _ => Some(fastest),
        }
    }

    /// Times `c` unless it was timed or skipped already. The device's refusals
    /// (unsupported or invalid sizes, resources) skip it; a result unlike the reference's is
    /// an error.
    fn measure(&mut self, c: Choice, run: &mut RunFn<'_>) -> Result<()> {
        if self.trials.iter().any(|t| t.0 == c) || self.skipped.iter().any(|t| t.0 == c) {
            return Ok(());
        }
        let first = match run(c, true) {
            Ok((_, r)) => r,
            Err(
                e @ (Error::InvalidWorkSize { .. }
                | Error::Unsupported { .. }
                | Error::OutOfMemory { .. }),
            ) => {
                self.skipped.push((c, e.to_string()));
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        match &self.reference {
            None => self.reference = Some((c, first)),
            Some((rc, want)) => {
                if let Some(i) =
                    (0..want.len().max(first.len())).find(|&i| want.get(i) != first.get(i))
                {
                    return Err(TuningError {
                        path: "(memory)".into(),
                        reason: format!(
                            "configuration `{c}` gave another result than `{rc}` (from byte {i} of {} on)",
                            want.len()
                        ),
                    }.into());
                }
            }
        }
        let mut times = Vec::with_capacity(self.reps);
        for _ in 0..self.reps {
            times.push(run(c, false)?.0);
        }
        self.trials.push((c, median(times)));
        Ok(())
    }

    /// Coordinate descent from the default over the parameters of `op`.
    /// `effective` gives, for a candidate, the configuration to time (what the device will
    /// really run where it differs) and what it runs as; a candidate that runs as one timed
    /// (or skipped) already is not timed again.
    fn run(
        &mut self,
        op: TunedOp,
        effective: impl Fn(Choice) -> (Choice, Choice),
        mut run: impl FnMut(Choice, bool) -> Result<(f64, Vec<u8>)>,
    ) -> Result<()> {
        self.measure(effective(self.default).0, &mut run)?;
        for &axis in axes(op) {
            let current = self.best().map_or(self.default, |b| b.0);
            for c in axis_values(&current, axis) {
                let (c, runs_as) = effective(c);
                let seen = self.trials.iter().map(|t| t.0);
                if seen
                    .chain(self.skipped.iter().map(|t| t.0))
                    .any(|t| effective(t).1 == runs_as)
                {
                    continue;
                }
                self.measure(c, &mut run)?;
            }
        }
        self.confirm(&mut run)
    }

    /// Times the default and the fastest configuration again, alternately (`reps` each, at
    /// least 3), so that both see the same machine: on a shared or throttling machine the
    /// first timings of a search can be minutes apart. [`Tuner`] keeps the winner only if it
    /// is still more than [`MARGIN`] faster in this comparison.
    fn confirm(&mut self, run: &mut RunFn<'_>) -> Result<()> {
        let Some((best, _)) = self.best() else {
            return Ok(());
        };
        if best == self.default {
            return Ok(());
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..self.reps.max(3) {
            a.push(run(self.default, false)?.0);
            b.push(run(best, false)?.0);
        }
        self.confirmed = Some((best, median(a), median(b)));
        Ok(())
    }
}

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

const GROUPS: [u32; 6] = [32, 64, 128, 256, 512, 1024];

/// One tuned parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis {
    Group,
    Items,
    Layout,
    ReduceLayout,
    MaxGroups,
    ScanAlgorithm,
    ScanItems,
    SortMethod,
    DigitBits,
    Keys,
}

/// The parameters `op` depends on, in the order they are tuned.
fn axes(op: TunedOp) -> &'static [Axis] {
    use Axis::*;
    match op {
        TunedOp::Map => &[Group, Items, Layout],
        TunedOp::Reduce => &[Group, Items, ReduceLayout, MaxGroups],
        TunedOp::Scan => &[ScanAlgorithm, Group, Items, MaxGroups, ScanItems],
        TunedOp::Sort => &[SortMethod, DigitBits, Group, Keys, MaxGroups],
    }
}

/// Group counts around `m`: a quarter to four times it, within 1 to 65536.
fn around(m: u32) -> impl Iterator<Item = u32> {
    [m / 4, m / 2, m, m * 2, m * 4]
        .into_iter()
        .filter(|m| (1..=65536).contains(m))
}

/// The configurations that differ from `c` in `axis` only (the device check comes when they
/// run); none where the axis does not apply to `c` (the look-back tile of a multi-pass scan,
/// the keys per work-item of a sort by parts).
fn axis_values(c: &Choice, axis: Axis) -> Vec<Choice> {
    match *c {
        Choice::Staging { staging: s, scan } => {
            let with = |s: Staging| Choice::Staging { staging: s, scan };
            let layouts = [Layout::Contiguous, Layout::Strided];
            match axis {
                Axis::Group => GROUPS
                    .iter()
                    .map(|&g| with(Staging { group_size: g, ..s }))
                    .collect(),
                Axis::Items => [1, 2, 4, 8, 16]
                    .iter()
                    .map(|&k| {
                        with(Staging {
                            items_per_thread: k,
                            ..s
                        })
                    })
                    .collect(),
                Axis::Layout => layouts
                    .iter()
                    .map(|&l| with(Staging { layout: l, ..s }))
                    .collect(),
                Axis::ReduceLayout => layouts
                    .iter()
                    .map(|&l| {
                        with(Staging {
                            reduce_layout: l,
                            ..s
                        })
                    })
                    .collect(),
                Axis::MaxGroups => around(s.max_groups)
                    .map(|m| with(Staging { max_groups: m, ..s }))
                    .collect(),
                Axis::ScanAlgorithm => [ScanAlgorithm::MultiPass, ScanAlgorithm::LookBack]
                    .iter()
                    .map(|&a| Choice::Staging {
                        staging: s,
                        scan: Some(a),
                    })
                    .collect(),
                Axis::ScanItems if scan == Some(ScanAlgorithm::LookBack) => [2, 4, 8, 16, 32]
                    .iter()
                    .map(|&k| {
                        with(Staging {
                            scan_items_per_thread: k,
                            ..s
                        })
                    })
                    .collect(),
                _ => Vec::new(),
            }
        }
        Choice::Sort(s) => {
            let with = |s: SortStaging| Choice::Sort(s);
            match axis {
                Axis::SortMethod => [SortMethod::Parts, SortMethod::Tiles]
                    .iter()
                    .map(|&m| with(SortStaging { method: m, ..s }))
                    .collect(),
                Axis::DigitBits => [4, 6, 8]
                    .iter()
                    .map(|&b| with(SortStaging { digit_bits: b, ..s }))
                    .collect(),
                Axis::Group => GROUPS
                    .iter()
                    .map(|&g| with(SortStaging { group_size: g, ..s }))
                    .collect(),
                Axis::Keys if s.method == SortMethod::Tiles => [8, 12, 16, 20]
                    .iter()
                    .map(|&k| {
                        with(SortStaging {
                            keys_per_thread: k,
                            ..s
                        })
                    })
                    .collect(),
                Axis::MaxGroups => around(s.max_groups)
                    .map(|m| with(SortStaging { max_groups: m, ..s }))
                    .collect(),
                _ => Vec::new(),
            }
        }
        Choice::LocalSize(_) => Vec::new(),
    }
}

/// The data one operation is tuned on (pseudo-random, the same for every configuration).
struct Workload<T: Tunable> {
    op: TunedOp,
    host: Vec<T>,
    x: DeviceVec<T>,
    y: DeviceVec<T>,
    out: DeviceVec<T>,
}

impl<T: Tunable> Workload<T> {
    fn new(ex: &Exec, op: TunedOp, n: usize) -> Result<Workload<T>> {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s
        };
        let host: Vec<T> = (0..n).map(|_| T::sample(op, next())).collect();
        let y: Vec<T> = (0..n).map(|_| T::sample(op, next())).collect();
        Ok(Workload {
            op,
            x: DeviceVec::from_slice(ex, &host)?,
            y: DeviceVec::from_slice(ex, &y)?,
            out: DeviceVec::zeroed(ex, n)?,
            host,
        })
    }

    /// The configuration to time for `c`, and what it runs as. The sort lowers its
    /// work-group size to what its local arrays allow, so a sort staging is timed (and
    /// recorded) with the size it runs with. A reduction or multi-pass scan never runs more
    /// work-groups than `ceil(m / (group * items))` for the largest size `m` of the size class,
    /// so a larger `max_groups` runs as that (timed as given: the value matters again when
    /// the work-group size or items per work-item change).
    fn effective(&self, base: &Exec, c: Choice) -> (Choice, Choice) {
        let s = match c {
            Choice::Sort(s) => s,
            Choice::Staging { staging: st, scan }
                if matches!(self.op, TunedOp::Reduce | TunedOp::Scan)
                    && scan != Some(ScanAlgorithm::LookBack) =>
            {
                let largest = 1u64 << size_class(self.host.len());
                let needed = largest.div_ceil(st.group_size as u64 * st.items_per_thread as u64);
                let runs_as = Choice::Staging {
                    staging: Staging {
                        max_groups: st.max_groups.min(needed.max(1) as u32),
                        ..st
                    },
                    scan,
                };
                return (c, runs_as);
            }
            _ => return (c, c),
        };
        let shape = base
            .with_sort_staging(s)
            .and_then(|ex| ex.sort_shape(self.host.len(), std::mem::size_of::<T>() as u64));
        let c = match shape {
            Ok(shape) => Choice::Sort(SortStaging {
                group_size: shape.local_size as u32,
                ..s
            }),
            Err(_) => c,
        };
        (c, c)
    }

    /// Runs the operation with configuration `c` (on `base`'s queue): the seconds from the
    /// call until the result is complete and, if `read`, the result's bytes.
    fn run(&self, base: &Exec, c: Choice, read: bool) -> Result<(f64, Vec<u8>)> {
        let ex = match c {
            Choice::Staging { staging, scan } => {
                let ex = base.with_staging(staging)?;
                match scan {
                    Some(a) => ex.with_scan_algorithm(a)?,
                    None => ex,
                }
            }
            Choice::Sort(s) => base.with_sort_staging(s)?,
            Choice::LocalSize(_) => unreachable!("patterns have no local-size choice"),
        };
        if self.op == TunedOp::Sort {
            // Every run sorts the same unsorted keys.
            self.out.copy_from_slice(&self.host)?;
        }
        let t = Instant::now();
        let total = match self.op {
            TunedOp::Map => {
                zip(&self.x, &self.y)
                    .map(|(a, b)| a + b)
                    .collect_into(&ex, &self.out)?;
                None
            }
            TunedOp::Reduce => Some(self.x.sum::<T>(&ex)?),
            TunedOp::Scan => {
                self.x.inclusive_scan_into(&ex, &self.out, |a, b| a + b)?;
                None
            }
            TunedOp::Sort => {
                super::sort_keys(&ex, &self.out, None::<&DeviceVec<u32>>)?;
                None
            }
        };
        let secs = t.elapsed().as_secs_f64();
        let result = match (read, total) {
            (false, _) => Vec::new(),
            (true, Some(v)) => bytemuck::bytes_of(&v).to_vec(),
            (true, None) => bytemuck::cast_slice(&self.out.to_vec()?).to_vec(),
        };
        Ok((secs, result))
    }
}
