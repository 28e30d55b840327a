//! Multi-staging: the host-time values that specialize pattern kernels, and [`Exec`], the
//! queue plus those values that every pattern runs with.
//!
//! A [`Staging`] is embedded in the kernels as constants (the work-group size sizes local
//! arrays and unrolls the work-group scan; `items_per_thread` unrolls the per-work-item loops;
//! the layout picks the index arithmetic), so it is part of the optimized IR that keys the
//! device's kernel cache: a kernel is compiled again only when a staged value changes.

use super::tune::{Choice, TunedOp, Tuning};
use crate::builder::Value;
use crate::error::{Error, Result};
use crate::{BackendKind, Buffer, Device, Queue};
use std::any::Any;
use std::sync::{Arc, Mutex};

/// How element-wise kernels assign elements to work-items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Work-item `g` handles elements `g * k .. g * k + k` (k = items per thread): each
    /// work-item streams a contiguous run. Best on CPUs (PoCL, the CPU backend).
    Contiguous,
    /// A work-group handles a tile of `group_size * k` elements and work-item `l` handles
    /// `l, l + group_size, ...` in it: neighbouring work-items touch neighbouring elements
    /// (coalesced on GPUs).
    Strided,
}

/// The staged launch parameters of pattern kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Staging {
    /// Work-items per work-group.
    pub group_size: u32,
    /// Elements each work-item handles per step (unroll factor), 1 to 64.
    pub items_per_thread: u32,
    /// Largest number of work-groups of reductions, scans and sorts (each work-group owns one
    /// contiguous block of the input; the work-group's results are combined by a second pass).
    pub max_groups: u32,
    /// Element-to-work-item assignment of element-wise kernels (`collect`, `for_each`).
    pub layout: Layout,
    /// Element-to-work-item assignment of reductions whose operator is known to be
    /// commutative (`sum`, `min`, `max`, `count`, `argmin`, ...); reductions and scans with a
    /// user operator always give each work-item a contiguous part, to keep the order.
    pub reduce_layout: Layout,
    /// Elements per work-item of a look-back scan's tile ([`ScanAlgorithm::LookBack`]), 1 to
    /// 64: a tile is `group_size * scan_items_per_thread` elements, loaded coalesced into
    /// local memory and scanned by each work-item over consecutive elements.
    pub scan_items_per_thread: u32,
}

impl Staging {
    /// The defaults for `device`: its preferred work-group size (at most 1024; 32 on the
    /// compiled CPU backend, below), 4 elements per work-item, 16 work-groups per compute
    /// unit, the contiguous layout on OpenCL CPU devices, strided elsewhere (GPUs, the
    /// interpreter, which runs work-groups in lockstep, and the compiled CPU backend, whose
    /// SIMD lanes are neighbouring work-items), except for reductions on the compiled CPU
    /// backend, contiguous (a reduction ends in a collective, so it runs one work-item at a
    /// time there), and look-back scan tiles of 16 elements per work-item on GPUs, 4 on
    /// OpenCL CPU devices (whose work-groups are large) and 32 on the compiled CPU backend.
    ///
    /// **The compiled CPU backend** (`cpu`) runs a work-group's work-items on one thread,
    /// and what crosses a barrier or collective lives in per-work-item records: at 1024
    /// work-items a group's records (about 200 bytes each) leave the L1 cache, at 32 they
    /// stay in it. Measured there (`strata bench --device cpu`, 2^24 elements, 2 cores,
    /// 2026-11-28, loaded: ratios to rayon, 1024 against 32 work-items): `pat_scan` 1.9–2.2
    /// against 1.25–1.6, `pat_sum` 1.4–1.9 against 1.15, `pat_vadd` 1.8–2.1 against 1.4,
    /// `pat_saxpy` 1.7–2.9 against 1.3, `pat_dot` 2.2–3.2 against 1.8–1.9; the look-back
    /// scan's tile of 32 x 32 elements took 165 M instructions in compiled code against 273 M
    /// for 1024 x 4 (callgrind, 2^20 elements), 32 x 64 about as many as 32 x 32 but longer
    /// to compile.
    pub fn for_device(device: &Device) -> Staging {
        let info = device.info();
        let gs = info
            .preferred_group_size
            .min(info.max_work_group_size)
            .min(info.max_work_item_sizes[0])
            .clamp(1, 1024);
        let opencl_cpu = info.backend == BackendKind::OpenCl && info.is_cpu();
        let compiled_cpu = info.backend == BackendKind::Cpu;
        let gs = if compiled_cpu { gs.min(32) } else { gs };
        Staging {
            group_size: gs as u32,
            items_per_thread: 4,
            max_groups: (info.compute_units.max(1) * 16).min(1024),
            // PoCL and other OpenCL CPU devices run a work-item's loop to its end before the
            // next work-item: contiguous runs are cache friendly. GPUs and the CPU backend (which
            // runs a work-group in lockstep, one operation over all work-items at a time) want
            // neighbouring work-items on neighbouring elements.
            layout: if opencl_cpu {
                Layout::Contiguous
            } else {
                Layout::Strided
            },
            reduce_layout: if opencl_cpu || info.backend == BackendKind::Cpu {
                Layout::Contiguous
            } else {
                Layout::Strided
            },
            scan_items_per_thread: if compiled_cpu {
                32
            } else if info.is_cpu() {
                4
            } else {
                16
            },
        }
    }

    pub(crate) fn check(&self, device: &Device) -> Result<()> {
        let info = device.info();
        let bad = |reason: String| Error::InvalidWorkSize {
            kernel: "patterns".into(),
            reason,
        };
        if self.group_size == 0
            || self.group_size as usize > info.max_work_group_size
            || self.group_size as usize > info.max_work_item_sizes[0]
        {
            return Err(bad(format!(
                "staged work-group size {}; {} allows 1 to {}",
                self.group_size,
                info.spec(),
                info.max_work_group_size.min(info.max_work_item_sizes[0])
            )));
        }
        if !(1..=64).contains(&self.items_per_thread) {
            return Err(bad(format!(
                "staged items per thread {}; allowed are 1 to 64",
                self.items_per_thread
            )));
        }
        if !(1..=64).contains(&self.scan_items_per_thread) {
            return Err(bad(format!(
                "staged scan items per thread {}; allowed are 1 to 64",
                self.scan_items_per_thread
            )));
        }
        if !(1..=65536).contains(&self.max_groups) {
            return Err(bad(format!(
                "staged maximum of work-groups {}; allowed are 1 to 65536",
                self.max_groups
            )));
        }
        Ok(())
    }
}

/// How scans ([`View::inclusive_scan`](super::View::inclusive_scan) and the others) run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanAlgorithm {
    /// [`LookBack`](Self::LookBack) on CUDA devices, [`MultiPass`](Self::MultiPass) elsewhere
    /// (and for elements the look-back scan does not take). Measured with `strata bench
    /// --filter pat_scan` at 2^26 `u32` on an H100 (2026-11-23): look-back 1.16 ms, multi-pass
    /// 5.65 ms; on the CPU backend (2^22, 2 cores) multi-pass 48 ms, look-back 111-296 ms.
    Auto,
    /// Reduce-then-scan: a pass writing each block's total, a scan of the totals by one
    /// work-group, and a pass scanning each block from its carry (three launches, the input
    /// read twice). Portable: no work-group ever waits for another.
    MultiPass,
    /// One pass with decoupled look-back (Merrill & Garland, 2016): each work-group takes a
    /// tile number from an atomic counter, publishes its tile's total, then combines the
    /// published values of the tiles before it, waiting for those not yet published; the
    /// input is read once. Needs [`DeviceInfo::group_forward_progress`](crate::DeviceInfo::group_forward_progress).
    /// Elements of other sizes than 4 bytes use [`MultiPass`](Self::MultiPass).
    LookBack,
}

/// How the radix sort ranks the keys of a pass (see the `sort` module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SortMethod {
    /// Tiles of `group_size * keys_per_thread` keys are loaded coalesced into local memory and
    /// ranked there by the whole work-group; the keys of a digit leave a tile as one run.
    /// For GPUs.
    Tiles,
    /// Each work-item owns a contiguous part of its work-group's block, counts its digits
    /// privately and moves its keys in order. For CPU devices, whose work-items run their
    /// loops to the end one after another (few barriers, streaming access per work-item).
    Parts,
    /// Onesweep (Adinets & Merrill, 2022; the `onesweep` module docs): one histogram pass
    /// over all digits, then one launch per digit whose work-groups rank a tile as
    /// [`Tiles`](Self::Tiles) does and find its output offsets by decoupled look-back on the
    /// tiles before it: the keys are read once per digit instead of twice. Its work-groups
    /// wait for one another, so it runs only where [`onesweep_safe`](super::onesweep_safe)
    /// holds (CUDA, the CPU backend, the interpreter; not OpenCL);
    /// [`Exec::with_sort_staging`] refuses it elsewhere. Opt-in (through [`Exec::with_sort_staging`]) until a GPU run has checked and measured it.
    Onesweep,
}

/// The staged choices of the radix sort ([`DeviceVec::sort`](super::DeviceVec::sort),
/// [`sort_by_key`](super::sort_by_key), [`View::sorted`](super::View::sorted)); see the
/// `sort` module docs for the algorithm they parameterize.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SortStaging {
    /// The ranking method.
    pub method: SortMethod,
    /// Bits of the key sorted per pass, 1 to 8: `ceil(key bits / digit_bits)` passes over the
    /// data (4 for `u32` keys with 8 bits).
    pub digit_bits: u32,
    /// [`SortMethod::Tiles`] and [`SortMethod::Onesweep`]: keys each work-item ranks per
    /// tile, 1 to 32; a tile is
    /// `group_size * keys_per_thread` keys. Lowered (per key and value type, to a power of
    /// two) to what fits the local memory: with the GPU defaults 8 for `u32` keys with values
    /// and for 64-bit keys. Unused by [`SortMethod::Parts`].
    pub keys_per_thread: u32,
    /// Work-items per work-group of the sort's kernels (at most the device's limit; lowered
    /// when the kernels' local arrays would not fit).
    pub group_size: u32,
    /// Largest number of work-groups per pass.
    pub max_groups: u32,
}

impl SortStaging {
    /// The defaults for `device`: on GPUs 8-bit digits, 16 keys per work-item, 256 work-items
    /// and 8 work-groups per compute unit, with [`SortMethod::Tiles`] (the proven method:
    /// [`SortMethod::Onesweep`] is opt-in until a GPU run has measured and checked it); on CPU
    /// devices (the
    /// CPU backend and OpenCL CPU devices) [`SortMethod::Parts`] with 8-bit digits, 32
    /// work-items and 8 work-groups per compute unit.
    pub fn for_device(device: &Device) -> SortStaging {
        let info = device.info();
        let max = info
            .max_work_group_size
            .min(info.max_work_item_sizes[0])
            .max(1) as u32;
        let cpu = info.is_cpu();
        let (method, group_size) = if cpu {
            (SortMethod::Parts, 32)
        } else {
            (SortMethod::Tiles, 256)
        };
        SortStaging {
            method,
            digit_bits: 8,
            keys_per_thread: 16,
            group_size: group_size.min(max),
            max_groups: (info.compute_units.max(1) * 8).clamp(1, 65536),
        }
    }

    pub(crate) fn check(&self, device: &Device) -> Result<()> {
        let info = device.info();
        let bad = |reason: String| Error::InvalidWorkSize {
            kernel: "pattern_sort".into(),
            reason,
        };
        let max = info.max_work_group_size.min(info.max_work_item_sizes[0]);
        if self.group_size == 0 || self.group_size as usize > max {
            return Err(bad(format!(
                "staged sort work-group size {}; {} allows 1 to {max}",
                self.group_size,
                info.spec(),
            )));
        }
        if !(1..=8).contains(&self.digit_bits) {
            return Err(bad(format!(
                "staged sort digit of {} bits; allowed are 1 to 8",
                self.digit_bits
            )));
        }
        if !(1..=32).contains(&self.keys_per_thread) {
            return Err(bad(format!(
                "staged sort keys per work-item {}; allowed are 1 to 32",
                self.keys_per_thread
            )));
        }
        if !(1..=65536).contains(&self.max_groups) {
            return Err(bad(format!(
                "staged sort maximum of work-groups {}; allowed are 1 to 65536",
                self.max_groups
            )));
        }
        if self.method == SortMethod::Onesweep && !super::onesweep_safe(info) {
            return Err(Error::Unsupported {
                kernel: "pattern_sort_onesweep".into(),
                device: info.spec(),
                reason: "the Onesweep sort needs work-groups that make progress while others wait for them, which this device does not promise; use SortMethod::Tiles or Parts".into(),
            });
        }
        Ok(())
    }
}

/// Device buffers an algorithm keeps between calls (the sort's temporaries), shared by an
/// [`Exec`] and its clones: allocating and zeroing them is a large part of a fast sort's time.
/// A buffer is handed out to one call at a time and kept again only once that call's commands
/// have completed.
#[derive(Clone, Default)]
pub(crate) struct Scratch(Arc<Mutex<Vec<Kept>>>);

/// A kept buffer and its size in bytes.
type Kept = (usize, Box<dyn Any + Send>);

/// Most buffers a [`Scratch`] keeps (the smallest go first).
const SCRATCH_KEPT: usize = 12;

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scratch({} buffers)", self.0.lock().unwrap().len())
    }
}

impl Scratch {
    /// A buffer of at least `len` elements: the smallest kept one that is large enough, or a
    /// new (zeroed) one. Its contents are unspecified.
    pub(crate) fn take<T: Value>(&self, device: &Device, len: usize) -> Result<Buffer<T>> {
        match self.take_kept::<Buffer<T>>(|b| (b.len() >= len).then_some(b.len())) {
            Some(b) => Ok(b),
            None => Buffer::new(device, len.max(1)),
        }
    }

    /// Takes the kept `T` for which `rank` gives the smallest value; those it gives `None`
    /// stay.
    pub(crate) fn take_kept<T: Any + Send>(&self, rank: impl Fn(&T) -> Option<usize>) -> Option<T> {
        let mut kept = self.0.lock().unwrap();
        let best = kept
            .iter()
            .enumerate()
            .filter_map(|(i, (_, v))| v.downcast_ref::<T>().and_then(&rank).map(|r| (i, r)))
            .min_by_key(|&(_, r)| r)
            .map(|(i, _)| i)?;
        kept.swap_remove(best).1.downcast::<T>().ok().map(|v| *v)
    }

    /// Keeps `b` for a later [`Scratch::take`]; call it only when nothing uses `b` any more.
    pub(crate) fn keep<T: Value>(&self, b: Buffer<T>) {
        self.keep_sized(b.len() * std::mem::size_of::<T>(), b);
    }

    /// Keeps `v`, which holds `bytes` bytes of device memory, for a later
    /// [`Scratch::take_kept`]; call it only when nothing uses `v`'s memory any more.
    pub(crate) fn keep_sized<T: Any + Send>(&self, bytes: usize, v: T) {
        let mut kept = self.0.lock().unwrap();
        kept.push((bytes, Box::new(v)));
        if kept.len() > SCRATCH_KEPT {
            // Drop the smallest: the large ones are the expensive ones to allocate.
            if let Some(i) = (0..kept.len()).min_by_key(|&i| kept[i].0) {
                kept.swap_remove(i);
            }
        }
    }

    fn clear(&self) {
        self.0.lock().unwrap().clear();
    }
}

/// The launch shape of a pattern's kernel: work-items per work-group and work-groups
/// ([`Exec::scan_shape`], [`Exec::sort_shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Work-items per work-group.
    pub local_size: usize,
    /// Work-groups.
    pub groups: usize,
}

/// Where and how patterns run: a queue, the [`Staging`] of its kernels, the scan algorithm
/// and the [`SortStaging`] of the radix sort. Cheap to clone (clones share the memory that
/// look-back scans and the sort keep between calls).
///
/// The radix sort keeps its temporaries (a copy's worth of keys and values, and its digit
/// counts) in the exec for the next sort, as a memory pool would: they stay allocated while the
/// exec or a clone of it (every [`DeviceVec`](super::DeviceVec) holds one) lives, or until
/// [`Exec::release_scratch`]. The look-back scan keeps its status words and tile counter the
/// same way, and reductions and multi-pass scans their per-work-group partials.
///
/// **Tuning.** An exec made by [`Exec::new`] carries the tuning records of its device
/// ([`tune`](super::tune)): each pattern call runs with the record of its operation and nearest
/// size class where there is one ([`Exec::tuned_for`]), else with the defaults. Setting a
/// staging explicitly (`with_staging`, `with_items_per_thread`, `with_sort_staging`,
/// `with_scan_algorithm`, `with_scan_items_per_thread`) or [`Exec::untuned`] drops the records:
/// an explicit choice always wins.
#[derive(Clone, Debug)]
pub struct Exec {
    queue: Queue,
    staging: Staging,
    scan: ScanAlgorithm,
    sort: SortStaging,
    scratch: Scratch,
    /// The tuning records of this exec's device, if it has any.
    tuning: Option<Arc<Tuning>>,
}

/// An exec names its queue's device: `Buffer::new(&ex, n)` allocates there.
impl AsRef<Device> for Exec {
    fn as_ref(&self) -> &Device {
        self.queue.device()
    }
}

impl Exec {
    /// Patterns on `queue` with the device's default staging and its tuning records from the
    /// default records file ([`Tuning::default_records`]), if any.
    pub fn new(queue: &Queue) -> Exec {
        let ex = Exec {
            queue: queue.clone(),
            staging: Staging::for_device(queue.device()),
            scan: ScanAlgorithm::Auto,
            sort: SortStaging::for_device(queue.device()),
            scratch: Scratch::default(),
            tuning: None,
        };
        ex.with_tuning(&Tuning::default_records())
    }

    /// The same exec using the records of `tuning` for its device (only those) instead of its
    /// own.
    pub fn with_tuning(&self, tuning: &Tuning) -> Exec {
        let mine = tuning.for_device(self.device());
        Exec {
            tuning: (!mine.records().is_empty()).then(|| Arc::new(mine)),
            ..self.clone()
        }
    }

    /// The same exec without tuning records: every pattern call runs with this exec's staging.
    pub fn untuned(&self) -> Exec {
        Exec {
            tuning: None,
            ..self.clone()
        }
    }

    /// The tuning records this exec applies (those of its device), if any.
    pub fn tuning(&self) -> Option<&Tuning> {
        self.tuning.as_deref()
    }

    /// The exec a pattern call of `op` over `n` elements of type `elem` (`u32`, `f32`, ...;
    /// for the sort the key's type; ignored for [`TunedOp::Map`]) runs with: this one with the
    /// staging of the tuning record of that operation and the nearest size class, if there is
    /// one and the device can run it; this one untuned otherwise. The patterns call it on
    /// entry; it is public to show what they will run with.
    pub fn tuned_for(&self, op: TunedOp, elem: impl std::fmt::Display, n: usize) -> Exec {
        let untuned = self.untuned();
        // The key is made only when there are records: most execs have none.
        let Some(t) = &self.tuning else {
            return untuned;
        };
        let Some(rec) = t.lookup_any_device(&op.key(elem), n) else {
            return untuned;
        };
        let tuned = match rec.choice {
            Choice::Staging { staging, scan } => {
                let ex = untuned.with_staging(staging);
                match scan {
                    Some(a) => ex.and_then(|ex| ex.with_scan_algorithm(a)),
                    None => ex,
                }
            }
            Choice::Sort(s) => untuned.with_sort_staging(s),
            Choice::LocalSize(_) => return untuned,
        };
        tuned.unwrap_or(untuned)
    }

    /// The same queue with other staged values; fails with [`Error::InvalidWorkSize`] when the
    /// device cannot run them.
    pub fn with_staging(&self, staging: Staging) -> Result<Exec> {
        staging.check(self.queue.device())?;
        Ok(Exec {
            staging,
            tuning: None,
            ..self.clone()
        })
    }

    /// The same queue with another scan algorithm. [`ScanAlgorithm::LookBack`] fails with
    /// [`Error::Unsupported`] on a device without
    /// [`group_forward_progress`](crate::DeviceInfo::group_forward_progress) (OpenCL), where
    /// a work-group waiting for another might wait forever; on the CPU backend it runs (for
    /// tests: the interpreter spins a whole thread per waiting work-group).
    pub fn with_scan_algorithm(&self, scan: ScanAlgorithm) -> Result<Exec> {
        let info = self.device().info();
        if scan == ScanAlgorithm::LookBack && !info.group_forward_progress() {
            return Err(Error::Unsupported {
                kernel: "pattern_scan_lookback".into(),
                device: info.spec(),
                reason: "the look-back scan needs work-groups that make progress while others wait for them, which OpenCL and Vulkan do not promise; use ScanAlgorithm::MultiPass or Auto".into(),
            });
        }
        Ok(Exec {
            scan,
            tuning: None,
            ..self.clone()
        })
    }

    /// The scan algorithm asked for ([`ScanAlgorithm::Auto`] unless set).
    pub fn scan_algorithm(&self) -> ScanAlgorithm {
        self.scan
    }

    /// The algorithm a scan of `elem_size`-byte elements runs with: [`ScanAlgorithm::MultiPass`]
    /// or [`ScanAlgorithm::LookBack`], never `Auto`. The look-back scan needs elements of 4
    /// bytes and a tile that fits the device's local memory (asked for or not).
    pub fn scan_algorithm_for(&self, elem_size: usize) -> ScanAlgorithm {
        let info = self.device().info();
        let fits = super::lookback::local_bytes(self.staging) <= info.local_mem_size;
        match self.scan {
            _ if elem_size != 4 || !fits => ScanAlgorithm::MultiPass,
            ScanAlgorithm::LookBack => ScanAlgorithm::LookBack,
            ScanAlgorithm::Auto if info.backend == crate::BackendKind::Cuda => {
                ScanAlgorithm::LookBack
            }
            _ => ScanAlgorithm::MultiPass,
        }
    }

    /// The same queue with another number of elements per work-item in look-back scan tiles.
    pub fn with_scan_items_per_thread(&self, k: u32) -> Result<Exec> {
        self.with_staging(Staging {
            scan_items_per_thread: k,
            ..self.staging
        })
    }

    /// The same queue and staging with another [`SortStaging`]; fails with
    /// [`Error::InvalidWorkSize`] when the device cannot run it.
    pub fn with_sort_staging(&self, sort: SortStaging) -> Result<Exec> {
        sort.check(self.queue.device())?;
        Ok(Exec {
            sort,
            tuning: None,
            ..self.clone()
        })
    }

    /// The same queue with another number of elements per work-item.
    pub fn with_items_per_thread(&self, k: u32) -> Result<Exec> {
        self.with_staging(Staging {
            items_per_thread: k,
            ..self.staging
        })
    }

    /// The queue.
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// The device.
    pub fn device(&self) -> &Device {
        self.queue.device()
    }

    /// The fewest work-groups a pattern kernel needs where the device's driver ends loops
    /// after a number of iterations in all ([`crate::DeviceInfo::loop_iteration_limit`],
    /// llvmpipe's 65,535), for work that gives each work-item of a single work-group `units`
    /// units of `iters` loop iterations each (its share shrinks with more groups): its main
    /// loops get half the limit, the rest is left to the kernels' short loops. A kernel that
    /// still runs past the limit fails with the driver's fault rather than giving a wrong
    /// result. 1 where there is no limit.
    pub(crate) fn groups_for_loops(&self, units: usize, iters: usize) -> usize {
        match self.device().info().loop_iteration_limit {
            Some(limit) => {
                let budget = (limit / 2).max(1) as usize;
                units.div_ceil((budget / iters.max(1)).max(1))
            }
            None => 1,
        }
    }

    /// The staged values.
    pub fn staging(&self) -> Staging {
        self.staging
    }

    /// The staged values of the radix sort.
    pub fn sort_staging(&self) -> SortStaging {
        self.sort
    }

    /// How a scan of `n` elements of `elem_size` bytes is launched with this exec's staging:
    /// the work-items per work-group and the work-groups of its widest pass (the one launch of
    /// the look-back scan; the first pass of the multi-pass scan). For reports, such as
    /// `strata bench`'s `local_size` and `groups` columns.
    pub fn scan_shape(&self, n: usize, elem_size: usize) -> LaunchShape {
        let st = self.staging;
        let groups = match self.scan_algorithm_for(elem_size) {
            ScanAlgorithm::LookBack => {
                n.div_ceil((st.group_size * st.scan_items_per_thread) as usize)
            }
            _ => super::scan::plan(self, n.max(1)).groups,
        };
        LaunchShape {
            local_size: st.group_size as usize,
            groups,
        }
    }

    /// How a sort of `n` keys is launched with this exec's sort staging, `pair_bytes` being
    /// the bytes of a key and its value together (4 for `u32` keys alone, 8 for `u32` keys
    /// with `u32` values or `u64` keys): the work-items per work-group and the work-groups of
    /// each pass. Fails as the sort itself would for a staging the device cannot run.
    pub fn sort_shape(&self, n: usize, pair_bytes: u64) -> Result<LaunchShape> {
        let (local_size, groups) = super::sort::shape(self, n, pair_bytes)?;
        Ok(LaunchShape { local_size, groups })
    }

    /// Frees the memory the sort and the look-back scan keep for their next call (shared with
    /// this exec's clones); the next call allocates it again.
    pub fn release_scratch(&self) {
        self.scratch.clear();
    }

    pub(crate) fn scratch(&self) -> &Scratch {
        &self.scratch
    }
}
