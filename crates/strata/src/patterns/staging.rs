//! Multi-staging: the host-time values that specialize pattern kernels, and [`Exec`], the
//! queue plus those values that every pattern runs with.
//!
//! A [`Staging`] is embedded in the kernels as constants (the work-group size sizes local
//! arrays and unrolls the work-group scan; `items_per_thread` unrolls the per-work-item loops;
//! the layout picks the index arithmetic), so it is part of the optimized IR that keys the
//! device's kernel cache: a kernel is compiled again only when a staged value changes.

use super::lookback::LookBackScratch;
use crate::error::{Error, Result};
use crate::{BackendKind, Device, Queue};
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
    /// Element-to-work-item assignment of element-wise kernels, and of reductions whose
    /// operator is known to be commutative (`sum`, `min`, `max`, `count`, `argmin`, ...);
    /// reductions and scans with a user operator always give each work-item a contiguous part,
    /// to keep the order.
    pub layout: Layout,
    /// Elements per work-item of a look-back scan's tile ([`ScanAlgorithm::LookBack`]), 1 to
    /// 64: a tile is `group_size * scan_items_per_thread` elements, loaded coalesced into
    /// local memory and scanned by each work-item over consecutive elements.
    pub scan_items_per_thread: u32,
}

impl Staging {
    /// The defaults for `device`: its preferred work-group size (at most 1024), 4 elements per
    /// work-item, 16 work-groups per compute unit, the contiguous layout on OpenCL CPU
    /// devices, strided elsewhere (GPUs, and the CPU backend, which runs work-groups in
    /// lockstep), and look-back scan tiles of 16 elements per work-item on GPUs (4 on CPUs,
    /// whose work-groups are large).
    pub fn for_device(device: &Device) -> Staging {
        let info = device.info();
        let gs = info
            .preferred_group_size
            .min(info.max_work_group_size)
            .min(info.max_work_item_sizes[0])
            .clamp(1, 1024);
        Staging {
            group_size: gs as u32,
            items_per_thread: 4,
            max_groups: (info.compute_units.max(1) * 16).min(1024),
            // PoCL and other OpenCL CPU devices run a work-item's loop to its end before the
            // next work-item: contiguous runs are cache friendly. GPUs and the CPU backend (which
            // runs a work-group in lockstep, one operation over all work-items at a time) want
            // neighbouring work-items on neighbouring elements.
            layout: if info.backend == BackendKind::OpenCl && info.is_cpu() {
                Layout::Contiguous
            } else {
                Layout::Strided
            },
            scan_items_per_thread: if info.is_cpu() { 4 } else { 16 },
        }
    }

    fn check(&self, device: &Device) -> Result<()> {
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
    /// [`LookBack`](Self::LookBack) on CUDA devices for elements of 4 bytes (`i32`, `u32`,
    /// `f32`) when the tile fits the device's local memory, [`MultiPass`](Self::MultiPass)
    /// otherwise (OpenCL devices, the CPU backend, other element types).
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

/// Where and how patterns run: a queue and the [`Staging`] of its kernels. Cheap to clone
/// (clones share the scratch memory of look-back scans).
#[derive(Clone, Debug)]
pub struct Exec {
    queue: Queue,
    staging: Staging,
    scan: ScanAlgorithm,
    pub(crate) lookback: Arc<Mutex<Option<LookBackScratch>>>,
}

impl Exec {
    /// Patterns on `queue` with the device's default staging.
    pub fn new(queue: &Queue) -> Exec {
        Exec {
            queue: queue.clone(),
            staging: Staging::for_device(queue.device()),
            scan: ScanAlgorithm::Auto,
            lookback: Arc::new(Mutex::new(None)),
        }
    }

    /// The same queue with other staged values; fails with [`Error::InvalidWorkSize`] when the
    /// device cannot run them.
    pub fn with_staging(&self, staging: Staging) -> Result<Exec> {
        staging.check(self.queue.device())?;
        Ok(Exec {
            staging,
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
                reason: "the look-back scan needs work-groups that make progress while others wait for them, which OpenCL does not promise; use ScanAlgorithm::MultiPass or Auto".into(),
            });
        }
        Ok(Exec {
            scan,
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
            ScanAlgorithm::Auto if info.backend == BackendKind::Cuda => ScanAlgorithm::LookBack,
            ScanAlgorithm::LookBack => ScanAlgorithm::LookBack,
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

    /// The staged values.
    pub fn staging(&self) -> Staging {
        self.staging
    }
}
