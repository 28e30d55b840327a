//! Multi-staging: the host-time values that specialize pattern kernels, and [`Exec`], the
//! queue plus those values that every pattern runs with.
//!
//! A [`Staging`] is embedded in the kernels as constants (the work-group size sizes local
//! arrays and unrolls the work-group scan; `items_per_thread` unrolls the per-work-item loops;
//! the layout picks the index arithmetic), so it is part of the optimized IR that keys the
//! device's kernel cache: a kernel is compiled again only when a staged value changes.

use crate::error::{Error, Result};
use crate::{BackendKind, Device, Queue};

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
}

impl Staging {
    /// The defaults for `device`: its preferred work-group size (at most 1024), 4 elements per
    /// work-item, 16 work-groups per compute unit, and the contiguous layout on OpenCL CPU
    /// devices, strided elsewhere (GPUs, and the CPU backend, which runs work-groups in
    /// lockstep).
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
        if !(1..=65536).contains(&self.max_groups) {
            return Err(bad(format!(
                "staged maximum of work-groups {}; allowed are 1 to 65536",
                self.max_groups
            )));
        }
        Ok(())
    }
}

/// Where and how patterns run: a queue and the [`Staging`] of its kernels. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Exec {
    queue: Queue,
    staging: Staging,
}

impl Exec {
    /// Patterns on `queue` with the device's default staging.
    pub fn new(queue: &Queue) -> Exec {
        Exec {
            queue: queue.clone(),
            staging: Staging::for_device(queue.device()),
        }
    }

    /// The same queue with other staged values; fails with [`Error::InvalidWorkSize`] when the
    /// device cannot run them.
    pub fn with_staging(&self, staging: Staging) -> Result<Exec> {
        staging.check(self.queue.device())?;
        Ok(Exec {
            queue: self.queue.clone(),
            staging,
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
