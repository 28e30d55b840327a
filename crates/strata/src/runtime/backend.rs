//! The interface every backend implements. The user-facing types ([`Device`](super::Device),
//! [`Queue`](super::Queue), [`Buffer`](super::Buffer), [`Kernel`](super::Kernel)) are the same
//! for all backends and hold these trait objects.
//!
//! - [`DeviceBackend`]: the device's properties, allocation, compiling a validated kernel,
//!   new queues; and, with defaults that refuse, what only some backends can do: wrap the
//!   application's memory and queues, give OpenCL or CUDA handles.
//! - [`QueueBackend`]: submit a [`Command`] (write, read, copy, fill, their rectangular forms,
//!   launch) after a wait list, returning its [`Event`]; every backend builds its queues on
//!   the shared worker queue (`worker.rs`).
//! - [`Memory`] and [`CompiledKernel`]: a backend's memory and code, which it gets back
//!   through `as_any` as its own types.
//! - [`BackendEntry`]: what a backend gives the device registry (`crate::registry`): its
//!   kind, whether its bare name is a spec, how it finds its devices or why it has none, and
//!   its rank for `best`.
//!
//! The runtime names no backend type: a backend is a module with an entry in the registry.

use super::{BackendKind, DeviceInfo, Event, NdRange};
use crate::error::{Error, Result};
use crate::ir::{Literal, ValidFunction};
use std::any::Any;
use std::sync::Arc;

/// Device memory owned by a backend.
pub(crate) trait Memory: Send + Sync + Any {
    /// Size in bytes.
    fn size(&self) -> usize;
    /// For downcasting to the backend's own type.
    fn as_any(&self) -> &dyn Any;
    /// The backend's own handle of the memory.
    fn native(&self) -> super::NativeMemory;
}

/// A kernel compiled for one device.
pub(crate) trait CompiledKernel: Send + Sync + Any {
    /// For downcasting to the backend's own type.
    fn as_any(&self) -> &dyn Any;
    /// Whether the code was lost with its device's context (CUDA resets a context after a
    /// device fault): the runtime then compiles the kernel again instead of serving it.
    fn stale(&self) -> bool {
        false
    }
}

/// A launch argument after checking.
#[derive(Clone)]
pub(crate) enum ArgValue {
    /// A buffer: its memory and length in elements.
    Buffer { mem: Arc<dyn Memory>, len: u64 },
    /// A scalar.
    Scalar(Literal),
    /// The length of a launch-sized local array, in elements.
    LocalLen(u32),
}

/// The host bytes of a write ([`Command::Write`]): a copy the command owns (a non-blocking
/// write, whose caller may drop its data at once), or the caller's own slice, borrowed for a
/// blocking write ([`crate::Queue::write`]), which returns only once the command has completed:
/// no copy of the data on the way (on the CPU backend a write was a fresh allocation, its page
/// faults and a copy more than the write itself).
pub(crate) enum HostData {
    Owned(Vec<u8>),
    /// `len` bytes at `ptr`, valid until the command's event has completed: only
    /// [`HostData::borrowed`] makes one, for a caller that waits for that.
    Borrowed {
        ptr: *const u8,
        len: usize,
    },
}

// SAFETY: the bytes are only read, and a borrowed slice outlives every use (see `Borrowed`).
unsafe impl Send for HostData {}

impl HostData {
    /// The caller's `data`, for a command whose completion the caller waits for before
    /// `data`'s borrow ends.
    ///
    /// # Safety
    /// The command made with it must complete (its event) before `data` is dropped or
    /// changed; no backend reads the bytes after the command's event has completed.
    pub(crate) unsafe fn borrowed(data: &[u8]) -> HostData {
        HostData::Borrowed {
            ptr: data.as_ptr(),
            len: data.len(),
        }
    }
}

impl std::ops::Deref for HostData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            HostData::Owned(v) => v,
            // SAFETY: valid while the command runs (`HostData::borrowed`).
            HostData::Borrowed { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
}

/// The destination of a read ([`Command::Read`], [`Command::ReadRect`]): the very vector
/// the reader gets back ([`crate::PendingRead`]), allocated (zeroed, untouched) with the
/// read's length before the command runs, or the caller's own slice for a blocking read into
/// it ([`crate::Queue::read_into`]), so that a backend writes the bytes in place and nothing
/// copies them again after the read.
pub(crate) enum HostOut {
    /// The vector the reader gets back.
    Owned(Box<dyn OutBuf>),
    /// The caller's slice (see [`HostOut::borrowed`]).
    Borrowed { ptr: *mut u8, len: usize },
    /// The vector, once taken out ([`HostOut::take`]).
    Taken,
}

// SAFETY: the borrowed slice is written only while the command runs (`HostOut::borrowed`).
unsafe impl Send for HostOut {}

/// A typed vector that a read fills as bytes.
pub(crate) trait OutBuf: Send {
    fn bytes(&mut self) -> &mut [u8];
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

impl<T: crate::builder::Element> OutBuf for Vec<T> {
    fn bytes(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(self)
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

impl HostOut {
    /// The destination of a read of `len` elements of `T`, shared with its command.
    pub(crate) fn new<T: crate::builder::Element>(len: usize) -> Arc<std::sync::Mutex<HostOut>> {
        // Zeroed by the allocator (fresh pages), not written here: the read writes it.
        let v: Vec<T> = bytemuck::zeroed_vec(len);
        Arc::new(std::sync::Mutex::new(HostOut::Owned(Box::new(v))))
    }

    /// The caller's `out` as the destination of a read of `out.len()` bytes.
    ///
    /// # Safety
    /// The command made with it must complete (its event) before `out`'s borrow ends; no
    /// backend writes the bytes after the command's event has completed.
    pub(crate) unsafe fn borrowed(out: &mut [u8]) -> Arc<std::sync::Mutex<HostOut>> {
        Arc::new(std::sync::Mutex::new(HostOut::Borrowed {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        }))
    }

    /// The bytes the read fills: all of the destination (the read's length in bytes).
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        match self {
            HostOut::Owned(b) => b.bytes(),
            // SAFETY: valid while the command runs (`HostOut::borrowed`).
            HostOut::Borrowed { ptr, len } => unsafe { std::slice::from_raw_parts_mut(*ptr, *len) },
            HostOut::Taken => &mut [],
        }
    }

    /// Fills the destination with `data`, the read's bytes from a buffer of the backend's own
    /// (the GPU backends' rectangular reads, CUDA's reads).
    #[cfg(any(feature = "opencl", feature = "vulkan", feature = "cuda"))]
    pub(crate) fn deliver(&mut self, data: &[u8]) {
        self.bytes().copy_from_slice(data);
    }

    /// The filled vector, taken out (once; `None` after).
    pub(crate) fn take<T: crate::builder::Element>(&mut self) -> Option<Vec<T>> {
        match std::mem::replace(self, HostOut::Taken) {
            HostOut::Owned(b) => Some(
                *b.into_any()
                    .downcast::<Vec<T>>()
                    .expect("the read's own type"),
            ),
            other => {
                *self = other;
                None
            }
        }
    }
}

/// One command of a queue.
pub(crate) enum Command {
    /// Host data to device memory at a byte offset.
    Write {
        mem: Arc<dyn Memory>,
        offset: usize,
        data: HostData,
    },
    /// Device memory to host: `len` bytes at a byte offset, delivered into `out` (whose
    /// [`HostOut::bytes`] are `len` bytes).
    Read {
        mem: Arc<dyn Memory>,
        offset: usize,
        len: usize,
        out: Arc<std::sync::Mutex<HostOut>>,
    },
    /// Device to device copy of `len` bytes.
    Copy {
        src: Arc<dyn Memory>,
        src_offset: usize,
        dst: Arc<dyn Memory>,
        dst_offset: usize,
        len: usize,
    },
    /// Repeats `pattern` over `len` bytes at a byte offset.
    Fill {
        mem: Arc<dyn Memory>,
        offset: usize,
        len: usize,
        pattern: Vec<u8>,
    },
    /// Host data (a box of `region` packed tightly: rows of `region[0]` bytes, `region[1]`
    /// rows per slice, `region[2]` slices) into the box of memory at `at`.
    WriteRect {
        mem: Arc<dyn Memory>,
        at: RectSide,
        region: [usize; 3],
        data: Vec<u8>,
    },
    /// The box of memory at `at` to host, delivered into `out` packed tightly.
    ReadRect {
        mem: Arc<dyn Memory>,
        at: RectSide,
        region: [usize; 3],
        out: Arc<std::sync::Mutex<HostOut>>,
    },
    /// A box of memory to another (device to device); the boxes do not overlap.
    CopyRect {
        src: Arc<dyn Memory>,
        src_at: RectSide,
        dst: Arc<dyn Memory>,
        dst_at: RectSide,
        region: [usize; 3],
    },
    /// Runs a kernel.
    Launch {
        kernel: Arc<dyn CompiledKernel>,
        function: Arc<ValidFunction>,
        range: NdRange,
        args: Vec<ArgValue>,
        /// Set by [`crate::Run::cancel`]: a launch not yet handed to the device does not run;
        /// the CPU backend also checks it between work-groups.
        cancel: Arc<std::sync::atomic::AtomicBool>,
        /// The shapes of the 2-D and 3-D buffers passed, for the coordinates of an
        /// out-of-bounds error ([`super::pitched::with_coords`]).
        pitched: Vec<(crate::ir::ParamId, super::args::PitchedShape)>,
    },
}

/// Where a box of bytes lies in memory laid out in rows and slices (OpenCL's `*BufferRect`
/// and CUDA's `cuMemcpy3D` describe one side of a copy the same way): `origin` is the box's
/// first byte as (byte in the row, row, slice), `pitch` the bytes from one row to the next and
/// from one slice to the next. A box's size (`region`) is (bytes per row, rows, slices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RectSide {
    pub origin: [usize; 3],
    pub pitch: [usize; 2],
}

impl RectSide {
    /// Host memory holding a box of `region` packed tightly, from its first byte.
    pub(crate) fn packed(region: [usize; 3]) -> RectSide {
        RectSide {
            origin: [0; 3],
            pitch: [region[0], region[0] * region[1]],
        }
    }

    /// The byte offset of the row `row` of slice `slice` of the box.
    pub(crate) fn row_offset(&self, row: usize, slice: usize) -> usize {
        (self.origin[2] + slice) * self.pitch[1]
            + (self.origin[1] + row) * self.pitch[0]
            + self.origin[0]
    }

    /// Checks that the box `region` at this side lies inside `size` bytes and that its rows
    /// and slices do not overlap each other (the runtime checked the user's region already,
    /// so a failure here is a strata bug, reported rather than risked).
    pub(crate) fn check(
        &self,
        backend: &'static str,
        size: usize,
        region: [usize; 3],
    ) -> Result<()> {
        if region.contains(&0) {
            return Ok(());
        }
        let end = (|| {
            let last = (self.origin[2] + region[2] - 1)
                .checked_mul(self.pitch[1])?
                .checked_add((self.origin[1] + region[1] - 1).checked_mul(self.pitch[0])?)?
                .checked_add(self.origin[0])?;
            last.checked_add(region[0])
        })();
        let rows_fit = self.origin[0] + region[0] <= self.pitch[0]
            && (region[2] == 1 || (self.origin[1] + region[1]) * self.pitch[0] <= self.pitch[1]);
        if end.is_none_or(|e| e > size) || !rows_fit {
            return Err(Error::Backend {
                backend,
                message: format!(
                    "strata bug: a box of {region:?} bytes/rows/slices at {:?} with pitches {:?} does not fit an allocation of {size} bytes",
                    self.origin, self.pitch
                ),
            });
        }
        Ok(())
    }
}

impl Command {
    /// The error of a launch cancelled before it was handed to the device, if this is one.
    pub(crate) fn cancelled(&self) -> Option<Error> {
        match self {
            Command::Launch {
                function, cancel, ..
            } if cancel.load(std::sync::atomic::Ordering::Acquire) => Some(Error::Cancelled {
                kernel: function.function().name.clone(),
            }),
            _ => None,
        }
    }

    /// Checks a rectangular command's boxes against their allocations
    /// ([`RectSide::check`]); every other command passes. Each backend calls it before it
    /// runs a command.
    pub(crate) fn check_rects(&self, backend: &'static str) -> Result<()> {
        match self {
            Command::WriteRect {
                mem, at, region, ..
            }
            | Command::ReadRect {
                mem, at, region, ..
            } => at.check(backend, mem.size(), *region),
            Command::CopyRect {
                src,
                src_at,
                dst,
                dst_at,
                region,
            } => {
                src_at.check(backend, src.size(), *region)?;
                dst_at.check(backend, dst.size(), *region)
            }
            _ => Ok(()),
        }
    }
}

/// An in-order queue of a backend.
pub(crate) trait QueueBackend: Send + Sync {
    /// Enqueues `cmd` to run after every event in `wait` has completed; returns its event.
    fn submit(&self, cmd: Command, wait: Vec<Event>) -> Event;
    /// Runs `cmd` after `wait` and returns its event once it has completed: what the blocking
    /// operations of [`crate::Queue`] use. A backend may run it on the calling thread when
    /// that keeps the queue's order (see `WorkerQueue`).
    fn run_now(&self, cmd: Command, wait: Vec<Event>) -> Event {
        let e = self.submit(cmd, wait);
        let _ = e.wait();
        e
    }
    /// Takes the queue's unobserved failure (see [`super::worker::Failure`]), if any; taking it
    /// counts as observing it.
    fn take_failure(&self) -> Option<crate::Error> {
        None
    }
    /// The backend's own queue handle (`cl_command_queue`, `CUstream`); null where there is
    /// none.
    fn native(&self) -> *mut std::ffi::c_void {
        std::ptr::null_mut()
    }
}

/// One device of a backend.
pub(crate) trait DeviceBackend: Send + Sync {
    /// The property summary.
    fn info(&self) -> &DeviceInfo;
    /// Allocates `bytes` bytes, zeroed.
    fn alloc(&self, bytes: usize) -> Result<Arc<dyn Memory>>;
    /// Allocates `bytes` bytes whose contents count as unwritten ([`crate::Buffer::uninit`]):
    /// zeroed all the same; the CPU backend remembers which bytes get written, for
    /// `interp+checked`.
    fn alloc_uninit(&self, bytes: usize) -> Result<Arc<dyn Memory>> {
        self.alloc(bytes)
    }
    /// Allocates `bytes` bytes that a command will write in full before anything reads them
    /// ([`crate::Buffer::overwritten`]): zeroed ([`DeviceBackend::alloc`]) where that costs
    /// little; the CPU backends' memory reused from a dropped buffer keeps its old bytes.
    fn alloc_overwritten(&self, bytes: usize) -> Result<Arc<dyn Memory>> {
        self.alloc(bytes)
    }
    /// Compiles a validated kernel, printing what `settings` asks for.
    fn compile(
        &self,
        f: &ValidFunction,
        settings: &crate::Settings,
    ) -> Result<Arc<dyn CompiledKernel>>;
    /// Creates an in-order queue; `profiling` asks for device-measured run times of its
    /// commands where the backend measures them at a cost (CUDA: two timing events per
    /// command instead of one event without timing).
    fn new_queue_with(&self, profiling: bool) -> Result<Arc<dyn QueueBackend>>;
    /// Memory the application allocated through the backend's API, as strata memory of
    /// `bytes` bytes (see [`crate::Buffer::from_native`]).
    ///
    /// # Safety
    /// As [`crate::Buffer::from_native`].
    unsafe fn wrap_memory(
        &self,
        mem: super::NativeMemory,
        bytes: usize,
        ownership: super::Ownership,
    ) -> Result<Arc<dyn Memory>> {
        let _ = (mem, bytes, ownership);
        Err(Error::Backend {
            backend: self.info().backend.name(),
            message: format!(
                "{} cannot use memory allocated outside strata (Buffer::from_native takes \
                 OpenCL buffers and CUDA device pointers)",
                self.info().spec()
            ),
        })
    }
    /// A strata queue on the application's own queue handle (see
    /// [`crate::Queue::from_native`]).
    ///
    /// # Safety
    /// As [`crate::Queue::from_native`].
    unsafe fn wrap_queue(&self, queue: *mut std::ffi::c_void) -> Result<Arc<dyn QueueBackend>> {
        let _ = queue;
        Err(Error::Backend {
            backend: self.info().backend.name(),
            message: format!(
                "{} has no native queues to wrap (Queue::from_native takes OpenCL command \
                 queues and CUDA streams)",
                self.info().spec()
            ),
        })
    }
    /// The native handles of an OpenCL device ([`crate::Device::opencl_handles`]); `None`
    /// for devices of other backends.
    fn opencl_handles(&self) -> Option<super::OpenClHandles> {
        None
    }
    /// The native handles of a CUDA device ([`crate::Device::cuda_handles`]); `None` for
    /// devices of other backends.
    fn cuda_handles(&self) -> Option<super::CudaHandles> {
        None
    }
    /// The native handles of a Vulkan device ([`crate::Device::vulkan_handles`]); `None` for
    /// devices of other backends.
    fn vulkan_handles(&self) -> Option<super::VulkanHandles> {
        None
    }
}

/// What a backend found when asked for its devices ([`BackendEntry::discover`]).
pub(crate) struct Found {
    /// The devices that could be opened, numbered from 0 in this order.
    pub devices: Vec<Box<dyn DeviceBackend>>,
    /// Problems met opening the others (a platform that cannot list its devices, a device
    /// that cannot be opened), for [`crate::device_problems`].
    pub problems: Vec<String>,
}

/// One backend as the device registry (`crate::registry`) knows it: every backend module
/// gives one, and the registry lists one per backend, whether its cargo feature is on or off.
/// The runtime reaches a backend's devices only through this and the [`DeviceBackend`]s it
/// finds.
pub(crate) struct BackendEntry {
    /// The backend: its name is the prefix of its device specs (`opencl` of `opencl:1`).
    pub kind: BackendKind,
    /// Whether the backend's name alone is a spec, of its device 0 (`cpu`, `interp`); else a
    /// spec must say `NAME:N`.
    pub bare_spec: bool,
    /// How to find its devices.
    pub devices: Devices,
    /// How much the spec `best` prefers a device of this backend: the lowest rank wins (the
    /// first device of that rank); `None`: `best` never picks it.
    pub best_rank: fn(&DeviceInfo) -> Option<u8>,
}

/// How a backend finds its devices ([`BackendEntry::devices`]).
pub(crate) enum Devices {
    /// The backend is built in: its devices, or why it has none (no driver, say); called once.
    Discover(fn() -> std::result::Result<Found, String>),
    /// The backend was left out at build time: its cargo feature `feature` is off.
    #[cfg_attr(
        all(feature = "opencl", feature = "cuda", feature = "vulkan"),
        allow(dead_code)
    )]
    LeftOut {
        /// The feature that turns it on.
        feature: &'static str,
    },
}

impl BackendEntry {
    /// The entry of a backend left out at build time: no devices, and a reason that names the
    /// cargo feature to turn on.
    #[cfg_attr(
        all(feature = "opencl", feature = "cuda", feature = "vulkan"),
        allow(dead_code)
    )]
    pub(crate) const fn left_out(kind: BackendKind, feature: &'static str) -> BackendEntry {
        BackendEntry {
            kind,
            bare_spec: false,
            devices: Devices::LeftOut { feature },
            best_rank: |_| None,
        }
    }

    /// The backend's devices, with the problems met finding them, or why it has none.
    pub(crate) fn discover(&self) -> std::result::Result<Found, String> {
        match self.devices {
            Devices::Discover(discover) => discover(),
            Devices::LeftOut { feature } => Err(format!(
                "strata was built without its `{feature}` feature (enable it in Cargo.toml: \
                 strata = {{ features = [\"{feature}\"] }})"
            )),
        }
    }
}

/// Checks that `len` bytes at `offset` lie inside `mem` (the queue checked the user's range
/// already, so a failure here is a strata bug, reported rather than risked).
#[cfg(any(feature = "opencl", feature = "cuda", feature = "vulkan"))]
pub(crate) fn check_range(
    backend: &'static str,
    mem: &Arc<dyn Memory>,
    offset: usize,
    len: usize,
) -> Result<()> {
    if offset.checked_add(len).is_none_or(|end| end > mem.size()) {
        return Err(crate::Error::Backend {
            backend,
            message: format!(
                "strata bug: access of {len} bytes at {offset} in an allocation of {}",
                mem.size()
            ),
        });
    }
    Ok(())
}
