//! Queues: in-order command streams on one device. Every operation exists in a blocking form
//! (returns when done) and an `enqueue_` form (returns an [`Event`] at once, runs after the
//! events in its wait list).
//!
//! The operations: write, read (into a `Vec`, a slice, or a sub-range), copy and fill, on
//! whole buffers or sub-ranges given as Rust ranges, and their 2-D and 3-D region forms
//! (`pitched.rs`); launches are [`Kernel::launch`](super::Kernel::launch) and
//! [`Kernel::enqueue`](super::Kernel::enqueue). A non-blocking read returns a [`PendingRead`]
//! that owns its destination, so no borrowed host memory outlives the call.

use super::{ArgValue, Buffer, Command, Device, Event, HostData, HostOut, QueueBackend, Wait};
use crate::builder::Element;
use crate::error::{Error, Result};
use std::ops::{Range, RangeBounds};
use std::sync::{Arc, Mutex};

/// An in-order queue on a device (a CUDA stream, an OpenCL command queue).
///
/// **Failures.** Every command depends on the commands enqueued before it on the same queue.
/// When one fails (a kernel's out-of-bounds access on the CPU backend, a driver error), every
/// later command on the queue fails too, with [`Error::DependencyFailed`]
/// naming the first failure, until the failure is observed: a wait that returns one of these
/// errors (on the failed [`Run`](crate::Run), [`Event`] or a later read), or [`Queue::finish`], which
/// reports it. A command that was already running when the failure became known is not
/// recalled: its effects happen, its result is an error. After the failure is observed the
/// queue runs normally again.
#[derive(Clone)]
pub struct Queue {
    device: Device,
    backend: Arc<dyn QueueBackend>,
    pending: Arc<Mutex<Vec<Event>>>,
    launches: Arc<std::sync::atomic::AtomicU64>,
}

/// The result of a non-blocking read: the data once the event completes. Wait for it with
/// [`PendingRead::wait`] (or [`Wait`]), or `.await` it: it is a
/// [`Future`](std::future::Future) whose output is the data.
pub struct PendingRead<T> {
    event: Event,
    /// The vector the read fills ([`HostOut::new`] with `T`), handed out as it is.
    out: Arc<Mutex<HostOut>>,
    _t: std::marker::PhantomData<T>,
}

impl<T: Element> PendingRead<T> {
    /// The read that `event` delivers into `out` (a [`HostOut::new`] of `T`).
    pub(crate) fn new(event: Event, out: Arc<Mutex<HostOut>>) -> Self {
        PendingRead {
            event,
            out,
            _t: std::marker::PhantomData,
        }
    }

    /// The read's event.
    pub fn event(&self) -> &Event {
        &self.event
    }
    /// Waits for the read and returns the data.
    pub fn wait(self) -> Result<Vec<T>> {
        self.event.wait()?;
        Ok(self.take())
    }

    /// The data of the completed read: the vector it was read into.
    fn take(&self) -> Vec<T> {
        self.out
            .lock()
            .unwrap()
            .take()
            .expect("a PendingRead was polled after it completed")
    }

    /// Waits for the read at most `timeout` (see [`Wait::wait_timeout`]); the data is then
    /// [`PendingRead::wait`]'s.
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        self.event.wait_timeout(timeout)
    }

    /// Whether the read has completed (successfully or not).
    pub fn is_complete(&self) -> bool {
        self.event.is_complete()
    }
}

/// Completes when the read has: the data, or the read's error, as [`PendingRead::wait`].
impl<T: Element> std::future::Future for PendingRead<T> {
    type Output = Result<Vec<T>>;
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<Vec<T>>> {
        self.event.poll_wait(cx).map(|r| r.map(|()| self.take()))
    }
}

/// Nothing in a pending read is pinned (the data arrives in a shared host buffer).
impl<T> Unpin for PendingRead<T> {}

impl<T: Element> Wait for PendingRead<T> {
    type Output = Vec<T>;
    fn wait(self) -> Result<Vec<T>> {
        PendingRead::wait(self)
    }
    fn wait_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        PendingRead::wait_timeout(self, timeout)
    }
    fn is_complete(&self) -> bool {
        PendingRead::is_complete(self)
    }
}

/// `range` with its open ends closed at 0 and `len` (not checked against `len`).
pub(crate) fn bounded(range: impl RangeBounds<usize>, len: usize) -> Range<usize> {
    use std::ops::Bound;
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    start..end
}

/// `range` with an open start at 0 and an open end at `len` elements after its start; a
/// closed range must have `len` elements (`what` has them: "the data", "the source range").
pub(crate) fn sized(
    op: &'static str,
    range: impl RangeBounds<usize>,
    len: usize,
    what: &str,
) -> Result<Range<usize>> {
    let r = bounded(range, usize::MAX);
    if r.end == usize::MAX {
        return Ok(r.start..r.start.saturating_add(len));
    }
    if r.end.checked_sub(r.start) != Some(len) {
        return Err(Error::BufferRange {
            op,
            detail: format!(
                "range {}..{} is not the {len} elements of {what}",
                r.start, r.end
            ),
        });
    }
    Ok(r)
}

fn range_check(op: &'static str, range: &Range<usize>, len: usize) -> Result<()> {
    if range.start > range.end || range.end > len {
        return Err(Error::BufferRange {
            op,
            detail: format!(
                "range {}..{} does not fit a buffer of {len} elements",
                range.start, range.end
            ),
        });
    }
    Ok(())
}

impl Queue {
    /// A new queue on `device`.
    pub fn new(device: &Device) -> Result<Queue> {
        Self::create(device, false)
    }

    /// A new in-order queue whose commands' [`Event::profile`] durations are measured by the
    /// device where the backend measures them at a cost per command (CUDA: two timing events
    /// per command, about 2.5 us more per launch on an H100). Queues from [`Queue::new`] time
    /// commands on the host on those backends (from issue to observed completion); the CPU
    /// backend and OpenCL time commands the same way in both.
    pub fn with_profiling(device: &Device) -> Result<Queue> {
        Self::create(device, true)
    }

    /// The backend's own handle of this queue: the `cl_command_queue` on an OpenCL device, the
    /// `CUstream` on a CUDA device; `None` on the CPU backend.
    ///
    /// # Safety
    /// The handle is valid while this queue or a clone of it lives (strata then releases or
    /// destroys it, unless it came from [`Queue::from_native`]). Commands the application
    /// enqueues on it run in order with strata's only once strata has issued its own: wait
    /// for strata's commands (their events, or [`Queue::finish`]) before enqueueing work that
    /// depends on them, and finish the application's work before strata commands that depend
    /// on it.
    pub unsafe fn native(&self) -> Option<*mut std::ffi::c_void> {
        Some(self.backend.native()).filter(|p| !p.is_null())
    }

    /// A strata queue on the application's own queue of `device`: an in-order
    /// `cl_command_queue` of the device in strata's context ([`Device::opencl_handles`]; it is
    /// retained while strata uses it), or a `CUstream` of the device's primary context
    /// ([`Device::cuda_handles`]; strata never destroys it). Errors: [`Error::Backend`] for a
    /// queue of another context or device, an out-of-order OpenCL queue, or a CPU device.
    ///
    /// # Safety
    /// `queue` must be a valid handle of the device's backend, and a CUDA stream must outlive
    /// the strata queue and its clones.
    pub unsafe fn from_native(device: &Device, queue: *mut std::ffi::c_void) -> Result<Queue> {
        // SAFETY: as this function's contract.
        let backend = unsafe { device.inner.backend.wrap_queue(queue) }?;
        Ok(Queue {
            device: device.clone(),
            backend,
            pending: Arc::new(Mutex::new(Vec::new())),
            launches: Arc::new(std::sync::atomic::AtomicU64::new(0)),
        })
    }

    fn create(device: &Device, profiling: bool) -> Result<Queue> {
        Ok(Queue {
            device: device.clone(),
            backend: device.inner.backend.new_queue_with(profiling)?,
            pending: Arc::new(Mutex::new(Vec::new())),
            launches: Arc::new(std::sync::atomic::AtomicU64::new(0)),
        })
    }

    /// The queue's device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    pub(crate) fn submit(&self, cmd: Command, wait: &[&Event]) -> Event {
        let wait = wait.iter().map(|e| (*e).clone()).collect();
        let e = if BLOCKING.with(|b| b.replace(false)) {
            self.backend.run_now(cmd, wait)
        } else {
            self.backend.submit(cmd, wait)
        };
        let mut p = self.pending.lock().unwrap();
        p.retain(|e| !e.is_complete());
        p.push(e.clone());
        e
    }

    /// Counts `e`, a command run outside the queue (a copy from another device, staged
    /// through the host), as pending: [`Queue::finish`] waits for it too.
    pub(crate) fn track(&self, e: &Event) {
        let mut p = self.pending.lock().unwrap();
        p.retain(|e| !e.is_complete());
        p.push(e.clone());
    }

    /// The events of the commands enqueued so far that have not completed.
    pub(crate) fn pending_events(&self) -> Vec<Event> {
        let mut p = self.pending.lock().unwrap();
        p.retain(|e| !e.is_complete());
        p.clone()
    }

    pub(crate) fn check_device<T>(&self, op: &'static str, buf: &Buffer<T>) -> Result<()> {
        if buf.device != self.device {
            return Err(Error::WrongDevice {
                op,
                buffer_device: buf.device.info().spec(),
                queue_device: self.device.info().spec(),
            });
        }
        Ok(())
    }

    /// Number of kernel launches submitted through this queue (and its clones, which share the
    /// count) so far. Launches of zero work-items are submitted too and counted. The count shows
    /// how many kernels a computation took: a fused chain of pattern views runs as one launch.
    pub fn launch_count(&self) -> u64 {
        self.launches.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits for every command enqueued so far; returns the first error among those not yet
    /// observed through their events, and the queue's unobserved failure (see "Failures"
    /// above), which it observes.
    pub fn finish(&self) -> Result<()> {
        let events = std::mem::take(&mut *self.pending.lock().unwrap());
        let waited = Event::wait_all(&events);
        // A failure of a command nobody waited for (completed, so no longer pending) is
        // reported here once; `finish` observes it (see "Failures" in the type's docs).
        let failure = self.backend.take_failure();
        waited.and(failure.map_or(Ok(()), Err))
    }

    /// Like [`Queue::finish`], giving up after `timeout`: then it fails with
    /// [`Error::TimedOut`], the commands keep running, and a later `finish` still waits for
    /// them.
    pub fn finish_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        let deadline = std::time::Instant::now() + timeout;
        let events = std::mem::take(&mut *self.pending.lock().unwrap());
        let mut first = Ok(());
        for (i, e) in events.iter().enumerate() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match e.wait_timeout(left) {
                Err(Error::TimedOut { .. }) => {
                    // Put back what is not done, before anything enqueued meanwhile.
                    let mut p = self.pending.lock().unwrap();
                    let rest: Vec<Event> = events[i..].to_vec();
                    p.splice(0..0, rest);
                    return Err(Error::TimedOut {
                        what: format!(
                            "the queue on {} ({} command(s) still running or queued)",
                            self.device.info().spec(),
                            events.len() - i
                        ),
                        waited: timeout,
                    });
                }
                r => first = first.and(r),
            }
        }
        let failure = self.backend.take_failure();
        first.and(failure.map_or(Ok(()), Err))
    }

    /// Writes `data` into elements `range` of `buf`, without blocking: the data is copied
    /// first, so `data` may be dropped at once. An open end closes at the data's length
    /// (`q.enqueue_write(&b, 10.., &data, &[])` writes `data.len()` elements from element 10;
    /// `..` from element 0); a closed range must have the data's length.
    pub fn enqueue_write<T: Element>(
        &self,
        buf: &Buffer<T>,
        range: impl RangeBounds<usize>,
        data: &[T],
        wait: &[&Event],
    ) -> Result<Event> {
        let cmd = self.write_command(buf, range, data.len(), || {
            HostData::Owned(bytemuck::cast_slice(data).to_vec())
        })?;
        Ok(self.submit(cmd, wait))
    }

    /// The command writing `len` elements, the bytes `data` gives once the range is checked,
    /// into elements `range` of `buf`.
    fn write_command<T: Element>(
        &self,
        buf: &Buffer<T>,
        range: impl RangeBounds<usize>,
        len: usize,
        data: impl FnOnce() -> HostData,
    ) -> Result<Command> {
        self.check_device("write", buf)?;
        let range = sized("write", range, len, "the data")?;
        range_check("write", &range, buf.len())?;
        Ok(Command::Write {
            mem: buf.mem.clone(),
            offset: range.start * std::mem::size_of::<T>(),
            data: data(),
        })
    }

    /// Writes `data` into elements `range` of `buf` (see [`Queue::enqueue_write`]):
    /// `q.write(&b, .., &data)` from the start, `q.write(&b, 10.., &data)` from element 10.
    pub fn write<T: Element>(
        &self,
        buf: &Buffer<T>,
        range: impl RangeBounds<usize>,
        data: &[T],
    ) -> Result<()> {
        // SAFETY: a blocking command: `run_now` returns only once it has completed, and the
        // event's wait below comes before `data`'s borrow ends.
        let cmd = self.write_command(buf, range, data.len(), || unsafe {
            HostData::borrowed(bytemuck::cast_slice(data))
        })?;
        blocking(|| self.submit(cmd, &[])).wait()
    }

    /// Reads elements `range` of `buf` without blocking: any range, `..` for the whole
    /// buffer, `10..` to its end.
    pub fn enqueue_read<T: Element>(
        &self,
        buf: &Buffer<T>,
        range: impl RangeBounds<usize>,
        wait: &[&Event],
    ) -> Result<PendingRead<T>> {
        self.check_device("read", buf)?;
        let range = bounded(range, buf.len());
        range_check("read", &range, buf.len())?;
        let sz = std::mem::size_of::<T>();
        let len = range.end - range.start;
        let out = HostOut::new::<T>(len);
        let event = self.submit(
            Command::Read {
                mem: buf.mem.clone(),
                offset: range.start * sz,
                len: len * sz,
                out: out.clone(),
            },
            wait,
        );
        Ok(PendingRead::new(event, out))
    }

    /// Reads elements `range` of `buf`: any range, `10..` to its end.
    pub fn read_range<T: Element>(
        &self,
        buf: &Buffer<T>,
        range: impl RangeBounds<usize>,
    ) -> Result<Vec<T>> {
        blocking(|| self.enqueue_read(buf, range, &[]))?.wait()
    }

    /// Reads the whole buffer into a new `Vec`.
    pub fn read<T: Element>(&self, buf: &Buffer<T>) -> Result<Vec<T>> {
        self.read_range(buf, ..)
    }

    /// Reads the whole buffer into `out`, which must have the buffer's length.
    pub fn read_into<T: Element>(&self, buf: &Buffer<T>, out: &mut [T]) -> Result<()> {
        if out.len() != buf.len() {
            return Err(Error::BufferRange {
                op: "read",
                detail: format!("the destination slice has {} elements but the buffer has {}; use read_range for part of a buffer", out.len(), buf.len()),
            });
        }
        self.check_device("read", buf)?;
        let sz = std::mem::size_of::<T>();
        // SAFETY: a blocking command: `run_now` returns only once it has completed, and the
        // event's wait below comes before `out`'s borrow ends.
        let dst = unsafe { HostOut::borrowed(bytemuck::cast_slice_mut(out)) };
        blocking(|| {
            self.submit(
                Command::Read {
                    mem: buf.mem.clone(),
                    offset: 0,
                    len: buf.len() * sz,
                    out: dst,
                },
                &[],
            )
        })
        .wait()
    }

    /// Copies elements `src_range` of `src` to elements `dst_range` of `dst`, without
    /// blocking. An open end of `src_range` closes at the end of `src`, an open end of
    /// `dst_range` at the source range's length (`q.enqueue_copy(&a, 10..20, &b, 5.., &[])`
    /// copies 10 elements to `b[5..15]`); a closed `dst_range` must have the source range's
    /// length. The ranges may be of the same buffer only if they do not intersect.
    pub fn enqueue_copy<T: Element>(
        &self,
        src: &Buffer<T>,
        src_range: impl RangeBounds<usize>,
        dst: &Buffer<T>,
        dst_range: impl RangeBounds<usize>,
        wait: &[&Event],
    ) -> Result<Event> {
        self.check_device("copy", src)?;
        self.check_device("copy", dst)?;
        let from = bounded(src_range, src.len());
        let len = from.end.saturating_sub(from.start);
        let to = sized("copy", dst_range, len, "the source range")?;
        range_check("copy", &from, src.len())?;
        range_check("copy", &to, dst.len())?;
        let (src_offset, dst_offset) = (from.start, to.start);
        if Arc::ptr_eq(&src.mem, &dst.mem)
            && src_offset < dst_offset + len
            && dst_offset < src_offset + len
            && len > 0
        {
            return Err(Error::BufferRange {
                op: "copy",
                detail: format!(
                    "source {}..{} and destination {}..{} overlap in the same buffer",
                    src_offset,
                    src_offset + len,
                    dst_offset,
                    dst_offset + len
                ),
            });
        }
        let sz = std::mem::size_of::<T>();
        Ok(self.submit(
            Command::Copy {
                src: src.mem.clone(),
                src_offset: src_offset * sz,
                dst: dst.mem.clone(),
                dst_offset: dst_offset * sz,
                len: len * sz,
            },
            wait,
        ))
    }

    /// Copies elements `src_range` of `src` to elements `dst_range` of `dst` (see
    /// [`Queue::enqueue_copy`]): `q.copy(&a, .., &b, ..)` copies all of `a` to the start of
    /// `b`.
    pub fn copy<T: Element>(
        &self,
        src: &Buffer<T>,
        src_range: impl RangeBounds<usize>,
        dst: &Buffer<T>,
        dst_range: impl RangeBounds<usize>,
    ) -> Result<()> {
        blocking(|| self.enqueue_copy(src, src_range, dst, dst_range, &[]))?.wait()
    }

    /// Sets elements `range` of `buf` to `value`, without blocking.
    pub fn enqueue_fill<T: Element>(
        &self,
        buf: &Buffer<T>,
        value: T,
        range: impl RangeBounds<usize>,
        wait: &[&Event],
    ) -> Result<Event> {
        self.check_device("fill", buf)?;
        let range = bounded(range, buf.len());
        range_check("fill", &range, buf.len())?;
        let sz = std::mem::size_of::<T>();
        Ok(self.submit(
            Command::Fill {
                mem: buf.mem.clone(),
                offset: range.start * sz,
                len: (range.end - range.start) * sz,
                pattern: bytemuck::bytes_of(&value).to_vec(),
            },
            wait,
        ))
    }

    /// Sets elements `range` of `buf` to `value`: any range, `..` for the whole buffer
    /// (`q.fill(&b, 0.0, ..)`), `10..`, `..=7`.
    pub fn fill<T: Element>(
        &self,
        buf: &Buffer<T>,
        value: T,
        range: impl RangeBounds<usize>,
    ) -> Result<()> {
        blocking(|| self.enqueue_fill(buf, value, range, &[]))?.wait()
    }

    /// Counts a launch submitted through this queue ([`Queue::launch_count`]).
    pub(crate) fn count_launch(&self) {
        self.launches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A queue names its device: `Buffer::new(&queue, n)` (and `Buffer2::new(&queue, ..)`)
/// allocates on the queue's device, like `Buffer::new(queue.device(), n)`.
impl AsRef<Device> for Queue {
    fn as_ref(&self) -> &Device {
        &self.device
    }
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Queue({})", self.device.info().spec())
    }
}

thread_local! {
    /// Set by [`blocking`] for the one submission it wraps.
    static BLOCKING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, whose one submission (its first) is a blocking operation: the backend may run it
/// at once on this thread ([`super::backend::QueueBackend::run_now`]). The mark is cleared
/// when `f` returns, whether it submitted or failed before.
pub(crate) fn blocking<R>(f: impl FnOnce() -> R) -> R {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            BLOCKING.with(|b| b.set(false));
        }
    }
    BLOCKING.with(|b| b.set(true));
    let _clear = Clear;
    f()
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Queue>();
    is::<ArgValue>();
}
