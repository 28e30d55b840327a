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
//! 3-D buffer the coordinates from the flat index and the buffer's pitches),
//! [`Error::BarrierDivergence`] or [`Error::KernelFault`].
//!
//! **Devices that run kernels in the host's memory** (an OpenCL device of type CPU, see
//! [`DeviceInfo::bounds_checks_kernels`](super::DeviceInfo::bounds_checks_kernels)) launch the
//! kernel's bounds-checked form outside checked mode too, without waiting: the fault words are
//! read back after the launch (the queue is in order) and [`Run::wait`] (which
//! [`Kernel::launch`] calls) reports a recorded fault as [`Error::OutOfBounds`].

use super::queue::blocking;
use super::{Command, Event, Kernel, KernelArg, NdRange, Queue, Run};
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
        let checked = queue.device().instrumented(self)?.map(|(c, _)| c);
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
        let mut faults = None;
        if let (Some(c), Some(mem)) = (checked, prepared.fault) {
            let sizes = [local, range.global_size()];
            let words = FaultWords::read(queue, mem, c, self.name(), sizes, prepared.pitched);
            if queue.device().is_checked() {
                event.wait()?;
                words.check()?;
            } else {
                faults = Some(words);
            }
        }
        Ok(Run::new(
            event,
            prepared.gathers,
            queue.clone(),
            cancel,
            faults,
        ))
    }
}

/// The fault words of an instrumented launch, being read back after it (see the module
/// docs), with what decoding them needs.
pub(crate) struct FaultWords {
    read: Event,
    /// The words, as read ([`super::HostOut`] of `u32`).
    out: Arc<Mutex<super::HostOut>>,
    instrumented: Arc<super::kernel::CheckedKernel>,
    kernel: String,
    /// The launch's work-group size and global size.
    sizes: [[usize; 3]; 2],
    pitched: Vec<(crate::ir::ParamId, super::args::PitchedShape)>,
}

impl FaultWords {
    /// Submits the read of the fault words `mem` on `queue` (after the launch).
    fn read(
        queue: &Queue,
        mem: Arc<dyn super::Memory>,
        instrumented: Arc<super::kernel::CheckedKernel>,
        kernel: &str,
        sizes: [[usize; 3]; 2],
        pitched: Vec<(crate::ir::ParamId, super::args::PitchedShape)>,
    ) -> FaultWords {
        let out = super::HostOut::new::<u32>(crate::ir::checked::FAULT_WORDS);
        let read = queue.submit(
            Command::Read {
                mem,
                offset: 0,
                len: crate::ir::checked::FAULT_WORDS * 4,
                out: out.clone(),
            },
            &[],
        );
        FaultWords {
            read,
            out,
            instrumented,
            kernel: kernel.to_string(),
            sizes,
            pitched,
        }
    }

    /// Waits for the words and turns a recorded fault into its error.
    pub(crate) fn check(&self) -> Result<()> {
        self.read.wait()?;
        self.decode()
    }

    /// [`FaultWords::check`] for a future: pending until the words are read (woken by the
    /// read's completion), then the recorded fault's error, if any.
    pub(crate) fn poll_check(
        &self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<()>> {
        self.read
            .poll_wait(cx)
            .map(|r| r.and_then(|()| self.decode()))
    }

    /// The error of the fault the words read back record, if any.
    fn decode(&self) -> Result<()> {
        let bytes = self.out.lock().unwrap().bytes().to_vec();
        let w: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        decode_fault(&w, &self.instrumented.sites, &self.kernel, self.sizes)
            .map_err(|e| super::with_coords(e, self.instrumented.valid.function(), &self.pitched))
    }
}

/// Turns the fault words `w` of an instrumented launch into the fault they record, if any:
/// the interpreter's error ([`crate::ir::checked`] has the fault buffer's layout).
fn decode_fault(
    w: &[u32],
    sites: &[crate::ir::checked::CheckSite],
    kernel: &str,
    [local, global_size]: [[usize; 3]; 2],
) -> Result<()> {
    if w.len() < crate::ir::checked::FAULT_WORDS || w[0] == 0 {
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
    let item = crate::error::WorkItem {
        global,
        local: [0, 1, 2].map(|d| global[d] % local[d]),
        group,
    };
    match site.kind {
        crate::ir::checked::SiteKind::Uninit(why) => {
            return Err(Error::UninitializedRead {
                kernel: kernel.to_string(),
                memory: site.memory,
                index: wide(2) as i64,
                item,
                at: site.at,
                why,
            })
        }
        crate::ir::checked::SiteKind::Access { write, global } => {
            // Local memory: word 4 is the other access's shadow word (its local linear id +
            // 1 in the low 16 bits), word 5 its site; both work-items are in one work-group.
            // A buffer: word 4 is the other work-item's group linear id × group size + local
            // linear id + 1, word 5 its phase << 16 | site.
            let size = local[0] * local[1] * local[2];
            let (lane, other_group, other_site) = if global {
                let id = w[4].saturating_sub(1);
                let g = id / size;
                let groups = [0, 1, 2].map(|d| (global_size[d] as u32).div_ceil(local[d]).max(1));
                let gc = [
                    g % groups[0],
                    g / groups[0] % groups[1],
                    g / (groups[0] * groups[1]),
                ];
                (id % size, gc, w[5] & 0xFFFF)
            } else {
                ((w[4] & 0xFFFF).saturating_sub(1), group, w[5])
            };
            let group = other_group;
            let other_at = sites.get(other_site as usize);
            let other_lid = [
                lane % local[0],
                lane / local[0] % local[1],
                lane / (local[0] * local[1]),
            ];
            let other = crate::error::WorkItem {
                global: [0, 1, 2].map(|d| group[d] * local[d] + other_lid[d]),
                local: other_lid,
                group,
            };
            let name = |w: bool| if w { "write" } else { "read" };
            let other_write = matches!(
                other_at.map(|s| s.kind),
                Some(crate::ir::checked::SiteKind::Access { write: true, .. })
            );
            return Err(Error::DataRace {
                kernel: kernel.to_string(),
                memory: site.memory,
                index: wide(2) as i64,
                first: Box::new(crate::error::RaceAccess::new(
                    name(other_write),
                    other,
                    other_at.map_or(crate::ir::SourceLoc::NONE, |s| s.at),
                )),
                second: Box::new(crate::error::RaceAccess::new(name(write), item, site.at)),
                why: if group == item.group {
                    "with no barrier between them"
                } else {
                    "in different work-groups of one launch"
                },
            });
        }
        _ => {}
    }
    if site.kind == crate::ir::checked::SiteKind::Fault {
        return Err(Error::KernelFault {
            kernel: kernel.to_string(),
            message: site.memory,
            item,
        });
    }
    Err(Error::OutOfBounds {
        kernel: kernel.to_string(),
        memory: site.memory,
        index: wide(2) as i64,
        len: wide(4),
        item,
        at: site.at,
        coords: None,
    })
}
