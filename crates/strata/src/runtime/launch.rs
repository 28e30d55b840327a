//! Launching a kernel: [`Kernel::launch`] and [`Kernel::enqueue`], the one form of a launch
//! (the kernel first, then the queue, the range and the arguments, as the typed kernels of
//! `#[kernel]` take them). A launch prepares its arguments (`args.rs`), compiles the kernel for
//! the queue's device if it has not been, resets the gathers' partials, submits the launch and,
//! in checked mode, turns the fault the launch recorded into an error.
//!
//! **Checked mode.** On a checked device the launch runs the kernel's instrumented form
//! ([`ir::checked`](crate::ir::checked)), whose fault words `prepare` allocates zeroed like
//! any hidden parameter. The launch then waits for the kernel, reads the words back and turns
//! a recorded fault into [`Error::OutOfBounds`] with the access's line (the host derives the
//! work-item's local and group ids from its global id and the work-group size; on a 2-D or
//! 3-D buffer the coordinates from the flat index and the buffer's pitches) or
//! [`Error::BarrierDivergence`].

use super::queue::blocking;
use super::{Command, Event, Kernel, KernelArg, NdRange, PendingRead, Queue, Run};
use crate::error::{Error, Result};
use std::sync::{Arc, Mutex};

impl Kernel {
    /// Launches this kernel on `queue` over `range` and waits for it; returns the [`Run`],
    /// whose gathers can then be read. The arguments are checked first (count, kinds, element
    /// types, stated lengths, read-only aliasing, work sizes, local memory), and the kernel is
    /// compiled for the queue's device if it has not been.
    ///
    /// ```
    /// use strata::prelude::*;
    /// # fn main() -> strata::Result<()> {
    /// let queue = Queue::new(&Device::from_spec("cpu")?)?;
    /// let double = Kernel::build("double", |k| {
    ///     let x = k.read_write::<u32>("x");
    ///     let i = global_id(0);
    ///     if_(i.lt(x.len()), || x.set(i, x.at(i) * 2u32));
    /// })?;
    /// let x = Buffer::from_slice(&queue, &[1u32, 2, 3])?;
    /// double.launch(&queue, NdRange::new(3), args![&x])?;
    /// assert_eq!(queue.read(&x)?, vec![2, 4, 6]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn launch(&self, queue: &Queue, range: NdRange, args: &[KernelArg<'_>]) -> Result<Run> {
        let run = blocking(|| self.enqueue(queue, range, args, &[]))?;
        run.wait()?;
        Ok(run)
    }

    /// Like [`Kernel::launch`], without blocking: the launch runs on `queue` after the events
    /// of `wait` (and, the queue being in order, after the commands enqueued before it), and
    /// the returned [`Run`] is its handle. The arguments are checked, and the kernel compiled,
    /// before it returns. In checked mode ([`Device::checked`](crate::Device::checked)) it
    /// waits for the launch, to read the fault back.
    pub fn enqueue(
        &self,
        queue: &Queue,
        range: NdRange,
        args: &[KernelArg<'_>],
        wait: &[&Event],
    ) -> Result<Run> {
        // On a checked device the kernel launched is its instrumentation, with more hidden
        // parameters (the fault words): `prepare` fills in every hidden parameter.
        let checked = if queue.device().is_checked() {
            Some(self.checked()?)
        } else {
            None
        };
        let launched = match &checked {
            Some(c) => c.valid.clone(),
            None => self.valid_arc(),
        };
        let prepared = self.prepare(launched.function(), queue, range, args)?;
        let compiled = queue.device().compiled(self)?;
        // The gathers' partials (reused memory) start at their operation's identity; the queue
        // is in order, so the launch runs after these.
        for g in &prepared.gathers {
            queue.submit(g.reset(), &[]);
        }
        queue.count_launch();
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let range = prepared.range;
        let local = range.local_size().unwrap_or([1; 3]);
        let event = queue.submit(
            Command::Launch {
                kernel: compiled,
                function: launched,
                range,
                args: prepared.values,
                cancel: cancel.clone(),
                pitched: prepared.pitched.clone(),
            },
            wait,
        );
        if let (Some(c), Some(mem)) = (&checked, prepared.fault) {
            check_faults(queue, &c.sites, self.name(), (&event, local), mem)
                .map_err(|e| super::with_coords(e, c.valid.function(), &prepared.pitched))?;
        }
        Ok(Run::new(event, prepared.gathers, queue.clone(), cancel))
    }
}

/// Checked mode: waits for a launch and turns the fault it recorded, if any, into the
/// interpreter's error ([`crate::ir::checked`] has the fault buffer's layout).
fn check_faults(
    queue: &Queue,
    sites: &[crate::ir::checked::CheckSite],
    kernel: &str,
    (launch, local): (&Event, [usize; 3]),
    mem: Arc<dyn super::Memory>,
) -> Result<()> {
    launch.wait()?;
    let words = crate::ir::checked::FAULT_WORDS;
    let out = Arc::new(Mutex::new(Vec::new()));
    let read = queue.submit(
        Command::Read {
            mem,
            offset: 0,
            len: words * 4,
            out: out.clone(),
        },
        &[],
    );
    let w = PendingRead::<u32>::new(read, out, words).wait()?;
    if w[0] == 0 {
        return Ok(());
    }
    let wide = |k: usize| u64::from(w[k]) | (u64::from(w[k + 1]) << 32);
    let site = sites
        .get(w[1] as usize)
        .cloned()
        .unwrap_or_else(|| crate::ir::checked::CheckSite {
            memory: "memory".into(),
            at: crate::ir::SourceLoc::NONE,
            kind: crate::ir::checked::SiteKind::Bounds,
        });
    let global = [w[6], w[7], w[8]];
    let local = local.map(|l| l.max(1) as u32);
    let group = [0, 1, 2].map(|d| global[d] / local[d]);
    if site.kind == crate::ir::checked::SiteKind::Divergence {
        return Err(Error::BarrierDivergence {
            kernel: kernel.to_string(),
            what: site.memory,
            reached: wide(2) as usize,
            size: wide(4) as usize,
            group,
        });
    }
    Err(Error::OutOfBounds {
        kernel: kernel.to_string(),
        memory: site.memory,
        index: wide(2) as i64,
        len: wide(4),
        item: crate::error::WorkItem {
            global,
            local: [0, 1, 2].map(|d| global[d] % local[d]),
            group,
        },
        at: site.at,
        coords: None,
    })
}
