//! Runs: a launched kernel ([`Run`]: its event, cancelling, waiting) and the results of its
//! gather reductions ([`Gathered`]), which combine the per-work-group partials after the launch.

use super::{Buffer, Command, Event, Kernel, Memory, NdRange, Queue, Wait};
use crate::builder::{self, Numeric};
use crate::error::{Error, Result};
use crate::ir::{self, GatherOp};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A gather's partials of one launch.
pub(crate) struct GatherOut {
    pub(super) gather: ir::Gather,
    pub(super) mem: Arc<dyn Memory>,
    pub(super) groups: usize,
    /// For a custom gather: the kernel that folds the partials.
    pub(super) combine: Option<Kernel>,
}

impl GatherOut {
    /// The command that sets every partial to the identity of the gather's operation, to run
    /// before the launch: a work-group whose work-items all return before the gather writes no
    /// partial, and must not change the result. (The memory is reused from earlier launches.)
    pub(crate) fn reset(&self) -> Command {
        let g = &self.gather;
        Command::Fill {
            mem: self.mem.clone(),
            offset: 0,
            len: self.groups.max(1) * g.ty.size(),
            pattern: g.identity_bytes().repeat(g.ty.width as usize),
        }
    }
}

/// A launched kernel: its event and its gather results. Wait for it with [`Run::wait`] (or
/// [`Wait`]), or `.await` it: it is a [`Future`].
pub struct Run {
    event: Event,
    gathers: Vec<GatherOut>,
    queue: Queue,
    cancel: Arc<std::sync::atomic::AtomicBool>,
    /// The fault words of a bounds-checked launch outside checked mode, checked by
    /// [`Run::wait`] (see `launch.rs`).
    faults: Option<super::launch::FaultWords>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("complete", &self.event.is_complete())
            .field("gathers", &self.gathers.len())
            .field("queue", &self.queue)
            .finish()
    }
}

impl Run {
    pub(crate) fn new(
        event: Event,
        gathers: Vec<GatherOut>,
        queue: Queue,
        cancel: Arc<std::sync::atomic::AtomicBool>,
        faults: Option<super::launch::FaultWords>,
    ) -> Run {
        Run {
            event,
            gathers,
            queue,
            cancel,
            faults,
        }
    }

    /// Asks the launch to stop. A launch not yet handed to its device (waiting behind other
    /// commands of its queue) never runs. On the CPU backend a running launch stops between
    /// work-groups: the work-groups that had started finish, the others never run, so the
    /// buffers it writes hold a mix of old and new values. On OpenCL and CUDA a launch the
    /// driver has been given runs to its end. A stopped launch fails with
    /// [`Error::Cancelled`], which, like any failure, fails the later commands of its queue
    /// until it is observed (see [`Queue`]'s "Failures"); cancelling a launch that completed
    /// changes nothing.
    pub fn cancel(&self) {
        self.cancel
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Like [`Run::wait`], giving up after `timeout` with [`Error::TimedOut`] (the kernel
    /// keeps running; [`Run::cancel`] stops it where the backend can).
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        self.event.wait_timeout(timeout)?;
        self.check_faults()
    }

    /// The error of an access out of bounds the launch recorded, where it was bounds-checked
    /// outside checked mode (on a device that runs kernels in the host's memory, see
    /// [`DeviceInfo::bounds_checks_kernels`](crate::DeviceInfo::bounds_checks_kernels)).
    fn check_faults(&self) -> Result<()> {
        match &self.faults {
            Some(f) => f.check(),
            None => Ok(()),
        }
    }

    /// The launch's event.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// Waits for the kernel; returns its error if it faulted (on a device that runs kernels
    /// in the host's memory, an index out of bounds: [`Error::OutOfBounds`]).
    pub fn wait(&self) -> Result<()> {
        self.event.wait()?;
        self.check_faults()
    }

    /// Whether the launch has completed (successfully or not).
    pub fn is_complete(&self) -> bool {
        self.event.is_complete()
    }

    /// The future value of gather reduction `index` (in declaration order); `T` must be its
    /// element type.
    pub fn gather<T: Numeric>(&self, index: usize) -> Result<Gathered<T>> {
        let g = self.gathers.get(index).ok_or_else(|| Error::BufferRange {
            op: "gather",
            detail: format!(
                "the kernel declares {} gather(s); index {index} does not exist",
                self.gathers.len()
            ),
        })?;
        if g.gather.ty != T::TYPE {
            return Err(Error::BufferRange {
                op: "gather",
                detail: format!("gather {index} holds {}, not {}", g.gather.ty, T::TYPE),
            });
        }
        let buf = Buffer::<T>::from_parts(g.mem.clone(), g.groups, self.queue.device().clone());
        Ok(Gathered {
            buf,
            queue: self.queue.clone(),
            launch: self.event.clone(),
            op: g.gather.op,
            combine: g.combine.clone(),
        })
    }

    /// The future value of the gather reduction `handle` names: the handle its declaration
    /// returned ([`KernelDef::gather_add`](crate::KernelDef::gather_add) and the others),
    /// which carries the element type. A handle of another kernel whose gather at that
    /// position has another type, or that has fewer gathers, gives the errors of
    /// [`Run::gather`].
    pub fn gathered<T: Numeric>(&self, handle: builder::GatherHandle<T>) -> Result<Gathered<T>> {
        self.gather(handle.index())
    }
}

impl Wait for &Run {
    type Output = ();
    fn wait(self) -> Result<()> {
        Run::wait(self)
    }
    fn wait_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        Run::wait_timeout(self, timeout)
    }
    fn is_complete(&self) -> bool {
        Run::is_complete(self)
    }
}

/// Completes when the launch has completed: `Ok(())`, or its error (a kernel's fault, a
/// failed dependency, a cancellation), as [`Run::wait`]. `(&run).await` keeps the run, to
/// read its gathers after.
impl Future for Run {
    type Output = Result<()>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_wait(cx)
    }
}

/// Completes when the launch has completed, as [`Run::wait`].
impl Future for &Run {
    type Output = Result<()>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_wait(cx)
    }
}

impl Run {
    /// [`Run::wait`] for a future: the launch's event, then the fault words of a launch
    /// bounds-checked outside checked mode (each woken by its command's completion).
    fn poll_wait(&self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        match (self.event.poll_wait(cx), &self.faults) {
            (Poll::Ready(Ok(())), Some(f)) => f.poll_check(cx),
            (done, _) => done,
        }
    }
}

/// The future result of a gather reduction (Goopax's `goopax_future`).
pub struct Gathered<T> {
    /// The per-work-group partials.
    buf: Buffer<T>,
    /// The launch's queue: in order, so a read on it follows the launch.
    queue: Queue,
    launch: Event,
    op: GatherOp,
    /// For a user-defined gather: the kernel that folds the partials.
    combine: Option<Kernel>,
}

impl<T: Numeric> Gathered<T> {
    /// Waits for the kernel and combines the per-work-group partial results (in work-group
    /// order, so the result is deterministic).
    pub fn get(self) -> Result<T> {
        let op = self.op;
        if let Some(combine) = &self.combine {
            // The user's function folds the partials on the launch's device, in work-group
            // order, after the launch (the queue is in order).
            let out = Buffer::<T>::new(&self.queue, 1)?;
            let folded =
                combine.launch(&self.queue, NdRange::new(1), crate::args![&self.buf, &out]);
            self.launch.wait()?;
            folded?;
            return Ok(self.queue.read(&out)?[0]);
        }
        // A blocking read, which follows the launch on its in-order queue (on CUDA it runs on
        // this thread when nothing else is waiting to be issued: no hand-over between threads).
        let parts = self.queue.read(&self.buf);
        // The launch's own outcome first: a launch that failed left the partials unwritten.
        self.launch.wait()?;
        let parts = parts?;
        let init = match op {
            GatherOp::Min => T::greatest(),
            GatherOp::Max => T::least(),
            _ => T::zero(),
        };
        Ok(parts.into_iter().fold(init, |a, b| match op {
            GatherOp::Min => a.min_(b),
            GatherOp::Max => a.max_(b),
            _ => a.add(b),
        }))
    }
}
