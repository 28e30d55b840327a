//! Several devices in one process, and (with the `mpi` feature) many processes through MPI.
//!
//! - [`DeviceSet`]: devices of any backends, one [`Queue`] and one [`Exec`] each, and a weight
//!   per device (equal, given, or measured with [`DeviceSet::with_throughput`]) that
//!   [`DeviceSet::partition`] turns into contiguous index ranges, one per device.
//! - [`enqueue_copy`] / [`copy`]: a copy between buffers of any two devices. On one device it is
//!   the queue's own copy; between devices it is staged through the host (a read on the source
//!   queue, then a write on a queue of its own on the destination device, after what the
//!   destination queue held) and returns an [`Event`] that commands on any queue can wait for,
//!   and that the destination queue's `finish` waits for. (No peer path is used: CUDA peer
//!   copies are not implemented.)
//! - [`SplitVec`]: a vector split over a set, one [`DeviceVec`](crate::patterns::DeviceVec) part per device; the patterns
//!   over a set ([`DeviceSet::collect`], [`DeviceSet::reduce`], [`DeviceSet::sum`],
//!   [`DeviceSet::inclusive_scan`], [`DeviceSet::exclusive_scan`], [`DeviceSet::sorted`]) run the
//!   single-device algorithm on every part at once (one host thread per device), then combine
//!   the parts' results on the first device with the same algorithm, so the operator is only
//!   ever applied on a device, in index order.
//! - `mpi` (feature `mpi`): strata buffers over MPI through the `mpi` crate.

#[cfg(feature = "mpi")]
pub mod mpi;
mod split;

pub use split::{HostKey, Part, SplitVec};

use crate::builder::Element;
use crate::error::{Error, Result};
use crate::patterns::Exec;
use crate::{Buffer, Device, Event, Queue};
use std::ops::{Range, RangeBounds};
use std::time::{Duration, Instant};

/// A device set or a split over it that cannot be made: no devices, weights that are not one
/// finite non-negative number per device with a positive sum, a view whose length is not its
/// part's. It converts into [`Error::Layer`]; `err.layer::<DeviceSetError>()` gives it back.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("device set: {op}: {detail}")]
pub struct DeviceSetError {
    /// The operation.
    pub op: &'static str,
    /// What is wrong and what to change.
    pub detail: String,
}

impl From<DeviceSetError> for Error {
    fn from(e: DeviceSetError) -> Error {
        Error::Layer(crate::error::LayerError::new(e))
    }
}

/// Devices used together: one queue and one pattern executor per device, and the weights that
/// split work between them. Cloning shares the queues.
#[derive(Clone)]
pub struct DeviceSet {
    members: Vec<Member>,
}

#[derive(Clone)]
struct Member {
    queue: Queue,
    exec: Exec,
    weight: f64,
}

impl std::fmt::Debug for DeviceSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("{} (weight {})", m.queue.device().info().spec(), m.weight))
            .collect();
        write!(f, "DeviceSet[{}]", list.join(", "))
    }
}

impl DeviceSet {
    /// A set of `devices` with equal weights, a new queue on each. The same device may appear
    /// more than once (two queues on it). Fails with [`DeviceSetError`] for no devices.
    pub fn new(devices: &[Device]) -> Result<DeviceSet> {
        if devices.is_empty() {
            return Err(DeviceSetError {
                op: "new",
                detail: "no devices given; a set needs at least one".into(),
            }
            .into());
        }
        let members = devices
            .iter()
            .map(|d| {
                let queue = Queue::new(d)?;
                Ok(Member {
                    exec: Exec::new(&queue),
                    queue,
                    weight: 1.0,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceSet { members })
    }

    /// A set of the devices named by `specs` ([`Device::from_spec`]: `cpu`, `interp`,
    /// `opencl:0`, `cuda:1`, ...), with equal weights.
    pub fn from_specs(specs: &[&str]) -> Result<DeviceSet> {
        let devices = specs
            .iter()
            .map(|s| Device::from_spec(s))
            .collect::<Result<Vec<_>>>()?;
        DeviceSet::new(&devices)
    }

    /// Every device strata finds ([`crate::devices`]), with equal weights.
    pub fn all() -> Result<DeviceSet> {
        DeviceSet::new(&crate::devices())
    }

    /// The same devices and queues with the given weights, one per device: device `i` gets
    /// about `weights[i] / sum` of every partition. Errors ([`DeviceSetError`]): another
    /// count than the set's devices, a negative or non-finite weight, or a sum that is not
    /// positive.
    pub fn with_weights(&self, weights: &[f64]) -> Result<DeviceSet> {
        if weights.len() != self.members.len() {
            return Err(DeviceSetError {
                op: "with_weights",
                detail: format!(
                    "{} weights for {} devices; give one per device",
                    weights.len(),
                    self.members.len()
                ),
            }
            .into());
        }
        if let Some((i, w)) = weights
            .iter()
            .enumerate()
            .find(|(_, w)| !w.is_finite() || **w < 0.0)
        {
            return Err(DeviceSetError {
                op: "with_weights",
                detail: format!("weight {i} is {w}; weights must be finite and not negative"),
            }
            .into());
        }
        if weights.iter().sum::<f64>() <= 0.0 {
            return Err(DeviceSetError {
                op: "with_weights",
                detail: "the weights sum to 0; at least one device must get work".into(),
            }
            .into());
        }
        let mut set = self.clone();
        for (m, w) in set.members.iter_mut().zip(weights) {
            m.weight = *w;
        }
        Ok(set)
    }

    /// The same devices with weights derived from their throughput: `work` runs on every device
    /// over the first `n` indices (once to compile and warm up, then timed), one device after
    /// another (devices that share the host's cores, such as the CPU backends and PoCL, would
    /// slow each other's measurement), and each device's weight is `n` divided by its time in
    /// seconds (items per second).
    pub fn with_throughput(
        &self,
        n: usize,
        work: impl Fn(&Exec, Range<usize>) -> Result<()>,
    ) -> Result<DeviceSet> {
        let times = self
            .members
            .iter()
            .map(|m| {
                work(&m.exec, 0..n)?;
                m.queue.finish()?;
                let t = Instant::now();
                work(&m.exec, 0..n)?;
                m.queue.finish()?;
                Ok(t.elapsed())
            })
            .collect::<Result<Vec<_>>>()?;
        let weights: Vec<f64> = times
            .iter()
            .map(|t| n as f64 / t.as_secs_f64().max(1e-9))
            .collect();
        self.with_weights(&weights)
    }

    /// Number of devices.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Always `false`: a set has at least one device.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Device `i`.
    pub fn device(&self, i: usize) -> &Device {
        self.members[i].queue.device()
    }

    /// The queue of device `i`.
    pub fn queue(&self, i: usize) -> &Queue {
        &self.members[i].queue
    }

    /// The pattern executor of device `i` (on [`DeviceSet::queue`]`(i)`).
    pub fn exec(&self, i: usize) -> &Exec {
        &self.members[i].exec
    }

    /// The weights, one per device.
    pub fn weights(&self) -> Vec<f64> {
        self.members.iter().map(|m| m.weight).collect()
    }

    /// `0..n` split into one contiguous range per device, in device order, of lengths
    /// proportional to the weights (rounded by largest remainder, so they sum to `n`; a device
    /// of weight 0 gets an empty range).
    pub fn partition(&self, n: usize) -> Vec<Range<usize>> {
        let total: f64 = self.members.iter().map(|m| m.weight).sum();
        let exact: Vec<f64> = self
            .members
            .iter()
            .map(|m| n as f64 * m.weight / total)
            .collect();
        let mut lens: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
        let mut left = n - lens.iter().sum::<usize>().min(n);
        let mut order: Vec<usize> = (0..lens.len()).collect();
        order.sort_by(|&a, &b| {
            (exact[b] - exact[b].floor())
                .total_cmp(&(exact[a] - exact[a].floor()))
                .then(a.cmp(&b))
        });
        for &i in order.iter().cycle() {
            if left == 0 {
                break;
            }
            if self.members[i].weight > 0.0 {
                lens[i] += 1;
                left -= 1;
            }
        }
        let mut start = 0;
        lens.iter()
            .map(|l| {
                let r = start..start + l;
                start += l;
                r
            })
            .collect()
    }

    /// Waits for every queue of the set; returns the first error.
    pub fn finish(&self) -> Result<()> {
        let mut first = Ok(());
        for m in &self.members {
            let r = m.queue.finish();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Runs `f(i, exec(i))` for every device at once, one host thread each, and returns the
    /// results in device order (the first error if any failed).
    pub fn each<R: Send>(&self, f: impl Fn(usize, &Exec) -> Result<R> + Sync) -> Result<Vec<R>> {
        let f = &f;
        let results: Vec<Result<R>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| s.spawn(move || f(i, &m.exec)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|p| {
                        Err(Error::Panicked {
                            backend: "device set",
                            message: crate::error::panic_message(&*p).to_string(),
                        })
                    })
                })
                .collect()
        });
        results.into_iter().collect()
    }

    /// Like [`DeviceSet::each`], with each device's wall time (from its thread's start to the
    /// end of `f`, which should finish what it enqueues).
    pub fn each_timed<R: Send>(
        &self,
        f: impl Fn(usize, &Exec) -> Result<R> + Sync,
    ) -> Result<Vec<(R, Duration)>> {
        self.each(|i, ex| {
            let t = Instant::now();
            let r = f(i, ex)?;
            Ok((r, t.elapsed()))
        })
    }
}

/// Copies elements `src_range` of `src` to elements `dst_range` of `dst` on any two devices,
/// without blocking; the copy runs after the events of `wait` (of any queues). The ranges
/// close as [`Queue::enqueue_copy`]'s do: an open end of `src_range` at the end of `src`, an
/// open end of `dst_range` at the source range's length.
///
/// The copy starts after the commands enqueued on `src_queue` and `dst_queue` before it (and
/// the events of `wait`); commands enqueued after it that use `dst` must wait for the
/// returned event (pass it in their wait list): between devices the copy is not one of
/// `dst_queue`'s in-order commands. [`Queue::finish`] of either queue waits for it.
///
/// - Same device: `src_queue`'s own copy ([`Queue::enqueue_copy`]).
/// - Different devices: staged through the host: a read of the source on `src_queue`, then,
///   issued by a helper thread once the read is done, a write on a new queue of the
///   destination device after the commands `dst_queue` held when the copy was enqueued (on
///   `dst_queue` itself the write would sit behind later commands that wait for the copy,
///   and never start).
///
/// Errors (at once): a buffer on another device than its queue ([`Error::WrongDevice`]), a
/// range outside a buffer ([`Error::BufferRange`]). A failure while copying fails the event.
pub fn enqueue_copy<T: Element + Send + Sync>(
    src_queue: &Queue,
    src: &Buffer<T>,
    src_range: impl RangeBounds<usize>,
    dst_queue: &Queue,
    dst: &Buffer<T>,
    dst_range: impl RangeBounds<usize>,
    wait: &[&Event],
) -> Result<Event> {
    src_queue.check_device("copy", src)?;
    dst_queue.check_device("copy", dst)?;
    let from = crate::runtime::bounded(src_range, src.len());
    let len = from.end.saturating_sub(from.start);
    let to = crate::runtime::sized("copy", dst_range, len, "the source range")?;
    let (src_offset, dst_offset) = (from.start, to.start);
    if src.device() == dst.device() {
        let mut after: Vec<Event> = wait.iter().map(|e| (*e).clone()).collect();
        after.extend(dst_queue.pending_events());
        let after: Vec<&Event> = after.iter().collect();
        let e = src_queue.enqueue_copy(src, from, dst, to, &after)?;
        dst_queue.track(&e);
        return Ok(e);
    }
    let fits = |off: usize, b_len: usize, side: &str| {
        if off.checked_add(len).is_none_or(|e| e > b_len) {
            return Err(Error::BufferRange {
                op: "copy",
                detail: format!(
                    "{side} range {off}..{} does not fit a buffer of {b_len} elements",
                    off.saturating_add(len)
                ),
            });
        }
        Ok(())
    };
    fits(src_offset, src.len(), "source")?;
    fits(dst_offset, dst.len(), "destination")?;
    let read = src_queue.enqueue_read(src, src_offset..src_offset + len, wait)?;
    // The write goes to a queue of its own on the destination device, after what
    // `dst_queue` holds now: on `dst_queue` itself it would wait behind later commands that
    // wait for this copy.
    let before = dst_queue.pending_events();
    let event = Event::new();
    dst_queue.track(&event);
    let (done, dst) = (event.clone(), dst.clone());
    std::thread::Builder::new()
        .name("strata-copy".into())
        .spawn(move || {
            let r = read.wait().and_then(|data| {
                done.set_running();
                let q = Queue::new(dst.device())?;
                let before: Vec<&Event> = before.iter().collect();
                q.enqueue_write(&dst, dst_offset.., &data, &before)?.wait()
            });
            done.complete(r);
        })
        .map_err(|e| Error::Backend {
            backend: "host",
            message: format!("cannot start the copy thread: {e}"),
        })?;
    Ok(event)
}

/// [`enqueue_copy`] and wait for it.
pub fn copy<T: Element + Send + Sync>(
    src_queue: &Queue,
    src: &Buffer<T>,
    src_range: impl RangeBounds<usize>,
    dst_queue: &Queue,
    dst: &Buffer<T>,
    dst_range: impl RangeBounds<usize>,
) -> Result<()> {
    enqueue_copy(src_queue, src, src_range, dst_queue, dst, dst_range, &[])?.wait()
}
