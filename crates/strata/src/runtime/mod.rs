//! The runtime: devices of every backend behind one API.
//!
//! - [`devices`](crate::devices) lists every device of every backend compiled in and present;
//!   [`Device::from_spec`] picks one by a spec string (`cpu`, `interp`, `opencl:N`, `cuda:N`,
//!   `best`). Both live in `crate::registry`, the list of backends: the runtime knows a backend
//!   only through the [`DeviceBackend`] trait of `backend.rs`, and names none of them.
//! - A [`Queue`] runs commands in order; every command has a blocking form and an `enqueue_`
//!   form that returns an [`Event`] and takes a wait list. A kernel is launched on a queue by
//!   [`Kernel::launch`] (blocking) or [`Kernel::enqueue`] (`launch.rs`).
//! - A [`Buffer<T>`] is typed device memory; a [`Kernel`] is built once and launched many times,
//!   compiled once per device and per distinct IR (staged values included).
//!
//! There is no hidden current device and no default queue (alpaka's rule).
//!
//! **A device** holds its backend, its settings, its memory budget and its kernel cache, all
//! shared by its clones. The cache is keyed by the optimized IR's fingerprint; when several
//! threads ask for one kernel at once, the first compiles it and the others wait for that
//! result (a slot per key), and beyond [`KERNEL_CACHE_CAPACITY`] kernels the least recently
//! used are dropped. Every allocation goes through the device, which charges it to the
//! budget ([`Device::memory_budget`]) and wraps the backend's memory so that the bytes come
//! back when the last user, a command in flight included, drops it; memory the application
//! wraps ([`Buffer::from_native`]) is not charged.

mod args;
mod backend;
mod buffer;
mod event;
mod host;
mod interop;
mod kernel;
mod launch;
mod ndrange;
mod pitched;
mod queue;
mod run;
mod worker;

pub use args::KernelArg;
#[cfg(any(feature = "opencl", feature = "cuda", feature = "vulkan"))]
pub(crate) use backend::check_range;
pub(crate) use backend::{
    ArgValue, BackendEntry, Command, CompiledKernel, DeviceBackend, Devices, Found, HostData,
    HostOut, Memory, QueueBackend, RectSide,
};
pub use buffer::{Buffer, LocalMem};
pub use event::{Event, Profile, Wait};
pub use interop::{CudaHandles, NativeMemory, OpenClHandles, Ownership, VulkanHandles};
pub(crate) use kernel::note_built;
pub use kernel::{capture_kernels, Kernel};
pub use ndrange::{Dims, NdRange};
pub(crate) use pitched::with_coords;
pub use pitched::{pitch_elements, Buffer2, Buffer3, PitchedBuffer};
pub(crate) use queue::{bounded, sized};
pub use queue::{PendingRead, Queue};
pub use run::{Gathered, Run};
#[cfg(feature = "cuda")]
pub(crate) use worker::Finish;
pub(crate) use worker::WorkerQueue;

use crate::error::{Error, Result};
use crate::settings::Settings;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A backend: the way strata runs kernels on a kind of device.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BackendKind {
    /// The built-in CPU backend, kernels compiled to native code (always present).
    Cpu,
    /// The built-in CPU interpreter: the reference semantics and the debug backend (always
    /// present).
    Interp,
    /// OpenCL, through the system's OpenCL library.
    OpenCl,
    /// CUDA, through the driver API and NVRTC.
    Cuda,
    /// Vulkan compute, through the system's Vulkan loader (kernels as SPIR-V).
    Vulkan,
}

impl BackendKind {
    /// `cpu`, `interp`, `opencl`, `cuda` or `vulkan`: the prefix of device specs.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Interp => "interp",
            BackendKind::OpenCl => "opencl",
            BackendKind::Cuda => "cuda",
            BackendKind::Vulkan => "vulkan",
        }
    }
}

impl BackendKind {
    /// `true` for strata's own CPU backends (`cpu` and `interp`), which need nothing installed.
    pub fn is_builtin_cpu(self) -> bool {
        matches!(self, BackendKind::Cpu | BackendKind::Interp)
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A device's property summary. New properties may be added: it is `#[non_exhaustive]`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DeviceInfo {
    /// The backend.
    pub backend: BackendKind,
    /// Index among the devices of its backend (the `N` of `opencl:N`).
    pub index: usize,
    /// Device name.
    pub name: String,
    /// Vendor.
    pub vendor: String,
    /// Compute units (CPU: hardware threads used).
    pub compute_units: u32,
    /// Largest work-group (product of the local sizes).
    pub max_work_group_size: usize,
    /// Largest local size per dimension.
    pub max_work_item_sizes: [usize; 3],
    /// Local memory per work-group, in bytes.
    pub local_mem_size: u64,
    /// Global memory, in bytes.
    pub global_mem_size: u64,
    /// Largest single allocation, in bytes.
    pub max_alloc_size: u64,
    /// The local size automatic work division aims for in dimension 0.
    pub preferred_group_size: usize,
    /// Supports `f64`.
    pub supports_f64: bool,
    /// Supports `f16` (OpenCL: the `cl_khr_fp16` extension; CUDA and the CPU backends: always,
    /// computing in `f32` between conversions). A kernel that uses `f16` on a device without
    /// it fails at launch with `Error::Unsupported`, before any source is compiled.
    pub supports_f16: bool,
    /// Supports 64-bit integer atomics.
    pub supports_int64_atomics: bool,
    /// The sub-group size kernels see (`max_sub_group_size()`, at most 32): 32 on CUDA (a
    /// warp), 32 on OpenCL (sub-groups computed in local memory) and on the CPU backends (runs
    /// of consecutive work-items). See [`crate::ir::GroupScope`].
    pub sub_group_size: u32,
    /// The largest constant buffer (`Access::Constant`) in bytes, where the device has a
    /// constant address space (OpenCL's `CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE`); `None` where
    /// constant buffers are ordinary read-only memory (CUDA, the CPU backends).
    pub max_constant_buffer_size: Option<u64>,
    /// The most constant buffers one kernel may take (OpenCL's `CL_DEVICE_MAX_CONSTANT_ARGS`).
    pub max_constant_args: Option<u32>,
    /// The alignment in bytes of the rows (and slices) of 2-D and 3-D buffers
    /// ([`Buffer2`], [`Buffer3`]; see [`pitch_elements`]): 64 on the CPU backends (a cache
    /// line, so SIMD rows start aligned), OpenCL's `CL_DEVICE_MEM_BASE_ADDR_ALIGN` (in bytes,
    /// at least 64), 512 on CUDA (the pitch `cuMemAllocPitch` gives on recent GPUs).
    pub pitch_alignment: usize,
    /// The most loop iterations one work-item may run in all, where the driver has such a
    /// limit: Mesa's llvmpipe (lavapipe, `vulkan:N`) counts every iteration of every loop of a
    /// sub-group in one counter and ends each loop early once it reaches 65,535, silently.
    /// On such a device every kernel is launched with a test after each loop that it ended by
    /// itself, so a kernel cut short fails with [`crate::Error::KernelFault`]
    /// ([`crate::ir::checked::LOOP_CUT`]) instead of giving wrong results; the patterns
    /// stage their work so that each work-item stays under it. `None` elsewhere.
    pub loop_iteration_limit: Option<u64>,
    /// Backend-specific facts (driver version, extensions, ...), as name and value.
    pub extra: Vec<(String, String)>,
}

impl DeviceInfo {
    /// The spec that selects this device, e.g. `cpu` or `opencl:1`.
    pub fn spec(&self) -> String {
        match self.backend {
            BackendKind::Cpu => "cpu".into(),
            BackendKind::Interp => "interp".into(),
            b => format!("{}:{}", b.name(), self.index),
        }
    }

    /// Whether the device is a CPU: the strata CPU backend, or an OpenCL or Vulkan device of
    /// type CPU (such as PoCL or lavapipe). Kernels may be staged differently for CPUs (contiguous chunks per
    /// work-item rather than GPU-style strided access).
    pub fn is_cpu(&self) -> bool {
        self.backend.is_builtin_cpu()
            || self
                .extra
                .iter()
                .any(|(k, v)| k == "device type" && v.split(" + ").any(|t| t == "CPU"))
    }

    /// Whether kernels on this device are bounds-checked outside checked mode: an OpenCL or
    /// Vulkan device of type CPU (such as PoCL or lavapipe) runs kernels in the host's memory, where an index
    /// out of bounds would write into the process's memory or kill it, so every launch there
    /// runs the kernel with its accesses tested ([`crate::ir::checked::instrument_bounds`]) and
    /// an index out of bounds fails the launch with [`crate::Error::OutOfBounds`]. The
    /// strata CPU backends test every access themselves; GPUs have memory of their own.
    pub fn bounds_checks_kernels(&self) -> bool {
        matches!(self.backend, BackendKind::OpenCl | BackendKind::Vulkan) && self.is_cpu()
    }

    /// Whether a work-group that has started running keeps making progress while other
    /// work-groups of the same launch spin, waiting for memory it will write: what a
    /// single-pass scan with decoupled look-back needs (each work-group takes a tile number
    /// from an atomic counter and may wait for the tiles numbered before it).
    ///
    /// - **CUDA**: yes. A work-group (block) that has executed an instruction is resident on
    ///   a multiprocessor until it exits, and the warp schedulers keep issuing from every
    ///   resident warp that is not waiting at a barrier of its own block, so a block spinning
    ///   on a flag never starves another resident block; compute preemption suspends and
    ///   resumes whole launches, which keeps this true. A tile taken from the counter was
    ///   taken by a block already running, so every tile a block waits for belongs to a
    ///   running (or finished) block, and that block waits only for lower tiles: by induction
    ///   from tile 0, which waits for nothing, every block finishes. (Tile numbers from
    ///   `blockIdx` would not do: blocks need not start in index order, and resident blocks
    ///   could all wait for ones that cannot start.)
    /// - **The strata CPU backend**: yes. Each work-group runs from start to end on one rayon
    ///   thread, without yielding to another work-group, and threads are preempted fairly by
    ///   the operating system; a tile taken from the counter belongs to a work-group that is
    ///   running on another thread or has finished. (With one thread, work-groups run one
    ///   after the other, and the tiles before a work-group's are all finished.)
    /// - **OpenCL**: no. OpenCL 1.2 promises nothing about the progress of one work-group
    ///   while another waits, and drivers differ (some run work-groups one at a time on a CPU
    ///   thread, some time-slice them); strata does not rely on any of them.
    /// - **Vulkan**: no. Vulkan promises no progress between the work-groups of a dispatch
    ///   (lavapipe runs a few at a time on CPU threads).
    pub fn group_forward_progress(&self) -> bool {
        matches!(
            self.backend,
            BackendKind::Cuda | BackendKind::Cpu | BackendKind::Interp
        )
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        writeln!(f, "{}: {} ({})", self.spec(), self.name, self.vendor)?;
        writeln!(f, "  backend               {}", self.backend)?;
        writeln!(f, "  compute units         {}", self.compute_units)?;
        writeln!(f, "  max work-group size   {}", self.max_work_group_size)?;
        let [x, y, z] = self.max_work_item_sizes;
        writeln!(f, "  max local sizes       {x} x {y} x {z}")?;
        writeln!(
            f,
            "  local memory          {:.1} KiB",
            self.local_mem_size as f64 / 1024.0
        )?;
        writeln!(
            f,
            "  global memory         {:.0} MiB",
            mib(self.global_mem_size)
        )?;
        writeln!(
            f,
            "  max allocation        {:.0} MiB",
            mib(self.max_alloc_size)
        )?;
        writeln!(f, "  sub-group size        {}", self.sub_group_size)?;
        writeln!(f, "  pitch alignment       {} bytes", self.pitch_alignment)?;
        if let Some(n) = self.loop_iteration_limit {
            writeln!(
                f,
                "  loop iterations       at most {n} per work-item in all (the driver's limit; checked)"
            )?;
        }
        if let (Some(b), Some(n)) = (self.max_constant_buffer_size, self.max_constant_args) {
            writeln!(
                f,
                "  constant buffers      {n} of at most {:.1} KiB",
                b as f64 / 1024.0
            )?;
        }
        writeln!(
            f,
            "  f64                   {}",
            if self.supports_f64 { "yes" } else { "no" }
        )?;
        writeln!(
            f,
            "  f16                   {}",
            if self.supports_f16 { "yes" } else { "no" }
        )?;
        write!(
            f,
            "  64-bit atomics        {}",
            if self.supports_int64_atomics {
                "yes"
            } else {
                "no"
            }
        )?;
        for (k, v) in &self.extra {
            write!(f, "\n  {k:<21} {v}")?;
        }
        Ok(())
    }
}

/// A kernel's compilation for one device, done once.
type CompileSlot = Arc<OnceLock<Result<Arc<dyn CompiledKernel>>>>;

/// How many compiled kernels a device keeps by default ([`Device::set_kernel_cache_capacity`]).
pub const KERNEL_CACHE_CAPACITY: usize = 1024;

/// A device's compiled kernels, the least recently used evicted beyond `capacity`.
struct KernelCache {
    /// Each key's slot and the tick of its last use.
    slots: HashMap<u128, (CompileSlot, u64)>,
    tick: u64,
    capacity: usize,
}

impl KernelCache {
    /// The slot of `key` (new and empty if absent), marked as used now.
    fn slot(&mut self, key: u128) -> CompileSlot {
        self.tick += 1;
        let tick = self.tick;
        let slot = self.slots.entry(key).or_insert_with(|| (Arc::default(), 0));
        slot.1 = tick;
        let slot = slot.0.clone();
        self.evict();
        slot
    }

    /// Drops the least recently used slots beyond the capacity. (A kernel object that was
    /// compiled keeps its own reference to the code; an evicted kernel built again compiles
    /// again.)
    fn evict(&mut self) {
        while self.slots.len() > self.capacity {
            let oldest = self
                .slots
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(k, _)| *k);
            match oldest {
                Some(k) => self.slots.remove(&k),
                None => break,
            };
        }
    }
}

/// What a new allocation's bytes are ([`Device::alloc_as`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Contents {
    /// Zero ([`Buffer::new`]).
    Zeroed,
    /// Zero, but counted as unwritten until something writes them ([`Buffer::uninit`]).
    Uninit,
    /// Whatever they are: a command writes every byte before anything reads them
    /// ([`Buffer::overwritten`]).
    Overwritten,
}

/// Memory charged to its device's budget while it lives: the backend's memory, which backends
/// still downcast to their own type through [`backend::Memory::as_any`].
struct Charged {
    inner: Arc<dyn backend::Memory>,
    bytes: u64,
    in_use: Arc<AtomicU64>,
}

impl backend::Memory for Charged {
    fn size(&self) -> usize {
        self.inner.size()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self.inner.as_any()
    }
    fn native(&self) -> NativeMemory {
        self.inner.native()
    }
}

impl Drop for Charged {
    fn drop(&mut self) {
        self.in_use.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Most gather partial buffers a device keeps for reuse ([`Device::gather_partials`]).
const KEPT_PARTIALS: usize = 16;

pub(crate) struct DeviceInner {
    /// Gather partial buffers kept for the next launches (declared first: dropped before the
    /// backend whose memory they are).
    partials: Mutex<Vec<Arc<dyn backend::Memory>>>,
    pub(crate) backend: Box<dyn DeviceBackend>,
    pub(crate) uid: u64,
    /// Compiled kernels by [`Kernel::cache_key`]; a slot is filled by the first thread that
    /// asks, the others wait on it.
    cache: Mutex<KernelCache>,
    compiles: AtomicU64,
    /// Bytes of this device's memory that strata's live allocations hold (buffers and kept
    /// gather partials; released when the last user, a command in flight included, drops it).
    in_use: Arc<AtomicU64>,
    /// The budget set by [`Device::set_memory_budget`]; 0: the default.
    budget: AtomicU64,
    /// What compilations print and how they load code ([`Device::set_settings`]).
    settings: Mutex<Settings>,
}

/// A device of some backend. Cheap to clone; clones share the kernel cache.
///
/// **Checked mode.** [`Device::checked`] (or a spec ending in `+checked`: `cpu+checked`,
/// `interp+checked`, `opencl:0+checked`, `cuda:0+checked`) is the same device with every
/// launch checked: each access to a buffer, local array or private array is tested against
/// its length in the code generated for the device (OpenCL C, CUDA C++, the compiled CPU code,
/// the interpreter alike), an access out of bounds is skipped (a load gives 0) and the first
/// one is reported after the launch as [`Error::OutOfBounds`], naming the kernel, the memory,
/// the index, the work-item and the kernel's source line. Every backend also reports a
/// barrier or collective reached by part of a work-group (under a condition, in a loop whose
/// trip count differs between work-items, after some work-items returned:
/// [`Error::BarrierDivergence`]), a zero `for` step and an integer division by zero
/// ([`Error::KernelFault`]). On `interp+checked` the interpreter
/// also finds data races and reads of memory nobody wrote ([`Error::DataRace`],
/// [`Error::UninitializedRead`]). A checked launch waits for its end (the fault is read back
/// before [`Kernel::enqueue`] returns). Kernels compiled in checked mode are cached apart from
/// the others; a checked device and its plain form share memory (they compare equal), so
/// buffers pass between them.
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
    checked: bool,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({})", self.spec())
    }
}

/// Devices are equal when they are the same device (checked mode or not: the memory is the
/// same).
impl PartialEq for Device {
    fn eq(&self, o: &Device) -> bool {
        self.inner.uid == o.inner.uid
    }
}

/// Salt of the kernel cache keys of checked kernels (their IR differs from the plain one's
/// anyway; the salt keeps even a kernel without accesses apart).
const CHECKED_KEY: u128 = 0x6368_6563_6b65_6400_0000_0000_0000_0001;

/// Salt of the kernel cache keys of bounds-checked kernels (see
/// [`DeviceInfo::bounds_checks_kernels`]).
const BOUNDED_KEY: u128 = 0x626f_756e_6465_6400_0000_0000_0000_0002;

/// Salt added to the others for kernels instrumented against loops the driver cuts (see
/// [`DeviceInfo::loop_iteration_limit`]).
const CUTS_KEY: u128 = 0x6375_7473_0000_0000_0000_0000_0000_0004;

static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// A device names itself: allocation functions take `impl AsRef<Device>`, so they accept a
/// [`Device`] or a [`Queue`] (whose device is meant) alike.
impl AsRef<Device> for Device {
    fn as_ref(&self) -> &Device {
        self
    }
}

impl Device {
    pub(crate) fn from_backend(backend: Box<dyn DeviceBackend>) -> Device {
        Device {
            inner: Arc::new(DeviceInner {
                partials: Mutex::new(Vec::new()),
                backend,
                uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
                cache: Mutex::new(KernelCache {
                    slots: HashMap::new(),
                    tick: 0,
                    capacity: KERNEL_CACHE_CAPACITY,
                }),
                compiles: AtomicU64::new(0),
                in_use: Arc::new(AtomicU64::new(0)),
                budget: AtomicU64::new(0),
                settings: Mutex::new(Settings::default()),
            }),
            checked: false,
        }
    }

    /// This device in checked mode (see the type's docs): the spec `SPEC+checked`.
    pub fn checked(&self) -> Device {
        Device {
            inner: self.inner.clone(),
            checked: true,
        }
    }

    /// This device without checked mode.
    pub fn unchecked(&self) -> Device {
        Device {
            inner: self.inner.clone(),
            checked: false,
        }
    }

    /// Whether launches on this device are checked ([`Device::checked`]).
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// Whether checked launches on this device also find data races (on buffers and fixed-size
    /// local arrays) and reads of local memory or private arrays that nothing wrote: every
    /// device in checked mode (the instrumentation, [`crate::ir::checked`]).
    pub fn finds_races(&self) -> bool {
        self.checked
    }

    /// Whether checked launches on this device also find reads of elements of a buffer made by
    /// [`Buffer::uninit`] that nothing wrote (and races on launch-sized local arrays and field
    /// views): `interp+checked`, whose shadow memory follows every access.
    pub fn finds_uninit_buffer_reads(&self) -> bool {
        self.checked && self.info().backend == BackendKind::Interp
    }

    /// The spec that selects this device: [`DeviceInfo::spec`], with `+checked` in checked
    /// mode.
    pub fn spec(&self) -> String {
        let s = self.info().spec();
        if self.checked {
            format!("{s}+checked")
        } else {
            s
        }
    }

    /// The device's name ([`DeviceInfo::name`]): the driver's for OpenCL and CUDA devices
    /// (`NVIDIA H100 80GB HBM3`), `strata CPU (compiled with Cranelift) on <the host CPU>`
    /// for `cpu` and `strata CPU interpreter on <the host CPU>` for `interp`. [`Device::spec`]
    /// is the short name that selects it (`cuda:0`).
    pub fn name(&self) -> &str {
        &self.info().name
    }

    /// The property summary.
    pub fn info(&self) -> &DeviceInfo {
        self.inner.backend.info()
    }

    /// The native handles of an OpenCL device (`opencl:N`); `None` for devices of other
    /// backends.
    pub fn opencl_handles(&self) -> Option<OpenClHandles> {
        self.inner.backend.opencl_handles()
    }

    /// The native CUDA handles of a `cuda:N` device; `None` for devices of other backends.
    pub fn cuda_handles(&self) -> Option<CudaHandles> {
        self.inner.backend.cuda_handles()
    }

    /// The native Vulkan handles of a `vulkan:N` device; `None` for devices of other
    /// backends.
    pub fn vulkan_handles(&self) -> Option<VulkanHandles> {
        self.inner.backend.vulkan_handles()
    }

    /// Number of kernels compiled for this device so far (cache misses); the kernel cache is
    /// keyed by the optimized IR, so rebuilding a kernel with the same staged values does not
    /// recompile it.
    pub fn compile_count(&self) -> u64 {
        self.inner.compiles.load(Ordering::Relaxed)
    }

    /// Number of compiled kernels the device's cache holds now.
    pub fn cached_kernels(&self) -> usize {
        self.inner.cache.lock().unwrap().slots.len()
    }

    /// Sets how many compiled kernels the device's cache keeps (at least 1; the default is
    /// [`KERNEL_CACHE_CAPACITY`]); beyond it the least recently used are dropped. Clones of the
    /// device share the cache.
    pub fn set_kernel_cache_capacity(&self, kernels: usize) {
        let mut cache = self.inner.cache.lock().unwrap();
        cache.capacity = kernels.max(1);
        cache.evict();
    }

    /// Drops every compiled kernel from the device's cache (kernels still alive keep the code
    /// they were compiled to; others compile again when next launched).
    pub fn clear_kernel_cache(&self) {
        self.inner.cache.lock().unwrap().slots.clear();
    }

    /// The settings of this device's compilations ([`Device::set_settings`]).
    pub fn settings(&self) -> Settings {
        self.inner.settings.lock().unwrap().clone()
    }

    /// Sets what this device's kernel compilations print and how they load code (see
    /// [`Settings`]; the default prints nothing). Clones of the device share the settings,
    /// checked or not. They apply to the kernels compiled from now on: a kernel already in
    /// the device's cache is not compiled again ([`Device::clear_kernel_cache`] empties it).
    pub fn set_settings(&self, settings: Settings) {
        *self.inner.settings.lock().unwrap() = settings;
    }

    /// Compiles `kernel` for this device now (launches compile on first use otherwise); the
    /// same as [`Kernel::compile_on`]. A kernel that fails to compile returns the backend's
    /// error, with the generated source.
    pub fn compile(&self, kernel: &Kernel) -> Result<()> {
        self.compiled(kernel).map(|_| ())
    }

    /// Memory of at least `bytes` bytes for a launch's gather partials, contents unspecified:
    /// the smallest kept buffer that is large enough and that nothing else holds (no launch,
    /// read or [`Gathered`] still uses it), or a new one, kept for later
    /// launches while fewer than [`KEPT_PARTIALS`] are. A reduction launched in a loop thus
    /// allocates nothing after its first launch (on CUDA an allocation costs a
    /// `cuMemAlloc`, a waited memset and a synchronizing `cuMemFree`).
    pub(crate) fn gather_partials(&self, bytes: usize) -> Result<Arc<dyn backend::Memory>> {
        let mut kept = self.inner.partials.lock().unwrap();
        // Under the lock, a buffer only the pool holds cannot be taken by anyone else.
        let idle = |m: &&Arc<dyn backend::Memory>| Arc::strong_count(m) == 1;
        if let Some(m) = kept
            .iter()
            .filter(idle)
            .filter(|m| m.size() >= bytes)
            .min_by_key(|m| m.size())
        {
            return Ok(m.clone());
        }
        let m = self.alloc(bytes)?;
        if kept.len() < KEPT_PARTIALS {
            kept.push(m.clone());
        } else if let Some(i) = (0..kept.len())
            .filter(|&i| idle(&&kept[i]))
            .min_by_key(|&i| kept[i].size())
        {
            // Full: the new buffer replaces the smallest idle one.
            kept[i] = m.clone();
        }
        Ok(m)
    }

    /// How many bytes strata may allocate on this device: what [`Device::set_memory_budget`]
    /// set, else the device's global memory. On devices whose memory is the host's (the CPU
    /// backend, OpenCL CPU devices such as PoCL), each allocation of 1 MiB or more must also
    /// fit what the host has left now: `MemAvailable`, and the limit of the process's cgroup
    /// (`memory.max` less `memory.current`, v2; `memory.limit_in_bytes` less usage, v1).
    /// Beyond either, allocations fail with [`Error::OutOfMemory`] before the driver is asked:
    /// drivers of host memory over-commit, and the process would be killed by the
    /// out-of-memory killer, or hang, when the memory is touched.
    pub fn memory_budget(&self) -> u64 {
        match self.inner.budget.load(Ordering::Relaxed) {
            0 => self.info().global_mem_size,
            b => b,
        }
    }

    /// Sets the budget of [`Device::memory_budget`] (`None`: back to the default). Clones of
    /// the device share it. Lowering it below what is in use frees nothing: later allocations
    /// fail until enough memory is released.
    pub fn set_memory_budget(&self, bytes: Option<u64>) {
        self.inner
            .budget
            .store(bytes.map_or(0, |b| b.max(1)), Ordering::Relaxed);
    }

    /// Bytes of the device's memory held by strata's live allocations now.
    pub fn memory_in_use(&self) -> u64 {
        self.inner.in_use.load(Ordering::Relaxed)
    }

    /// Allocates `bytes` of device memory, zeroed, charged to the device's budget while it
    /// lives ([`Device::memory_budget`]).
    pub(crate) fn alloc(&self, bytes: usize) -> Result<Arc<dyn backend::Memory>> {
        self.alloc_as(bytes, Contents::Zeroed)
    }

    /// [`Device::alloc`] with the contents `contents` promises or needs.
    pub(crate) fn alloc_as(
        &self,
        bytes: usize,
        contents: Contents,
    ) -> Result<Arc<dyn backend::Memory>> {
        let want = bytes as u64;
        let info = self.info();
        let oom = |reason: String| Error::OutOfMemory {
            device: info.spec(),
            requested: want,
            reason,
        };
        let in_use = &self.inner.in_use;
        let budget = self.memory_budget();
        let before = in_use.fetch_add(want, Ordering::Relaxed);
        let release = || in_use.fetch_sub(want, Ordering::Relaxed);
        if before.saturating_add(want) > budget {
            release();
            return Err(oom(format!(
                "strata's allocations on it hold {before} bytes of its {budget}-byte budget{}",
                if self.inner.budget.load(Ordering::Relaxed) == 0 {
                    " (its global memory; see Device::set_memory_budget)"
                } else {
                    " (set by Device::set_memory_budget)"
                }
            )));
        }
        if info.is_cpu() && want >= 1 << 20 {
            if let Some((left, what)) = host::headroom() {
                if want > left {
                    release();
                    return Err(oom(format!(
                        "the device's memory is the host's, which has {left} bytes left ({what})"
                    )));
                }
            }
        }
        let mem = match contents {
            Contents::Zeroed => self.inner.backend.alloc(bytes),
            Contents::Uninit => self.inner.backend.alloc_uninit(bytes),
            Contents::Overwritten => self.inner.backend.alloc_overwritten(bytes),
        };
        match mem {
            Ok(inner) => Ok(Arc::new(Charged {
                inner,
                bytes: want,
                in_use: in_use.clone(),
            })),
            Err(e) => {
                release();
                Err(e)
            }
        }
    }

    /// The instrumented form of `kernel` this device launches, with the salt of its cache key:
    /// checked mode's ([`Device::checked`]), or the bounds-checked form on a device that runs
    /// kernels in the host's memory ([`DeviceInfo::bounds_checks_kernels`]); `None`: the
    /// kernel itself.
    pub(crate) fn instrumented(
        &self,
        kernel: &Kernel,
    ) -> Result<Option<(Arc<kernel::CheckedKernel>, u128)>> {
        let cuts = self.info().loop_iteration_limit.is_some();
        let (full, salt) = if self.checked {
            (true, CHECKED_KEY)
        } else if self.info().bounds_checks_kernels() || cuts {
            (false, BOUNDED_KEY)
        } else {
            return Ok(None);
        };
        let salt = if cuts { salt ^ CUTS_KEY } else { salt };
        Ok(Some((kernel.twin(kernel::Twin { full, cuts })?, salt)))
    }

    pub(crate) fn compiled(&self, kernel: &Kernel) -> Result<Arc<dyn CompiledKernel>> {
        kernel.check_features(self.info())?;
        // Devices live as long as the process, so the address of their state identifies them
        // (aligned: the low bit is free for checked mode).
        let id = Arc::as_ptr(&self.inner) as usize | self.checked as usize;
        if let Some(k) = kernel.compiled_for(id) {
            return Ok(k);
        }
        let checked = self.instrumented(kernel)?;
        let key = match &checked {
            Some((c, salt)) => c.key ^ salt,
            None => kernel.cache_key(),
        };
        // One compilation per kernel and device, also when several threads ask at once: the
        // first to ask compiles, the others wait for its result (a failure is not kept: the
        // next request tries again).
        let slot = {
            let mut cache = self.inner.cache.lock().unwrap();
            let slot = cache.slot(key);
            // Code lost with the device's context (CUDA, after a device fault) is compiled
            // again.
            if slot
                .get()
                .is_some_and(|r| r.as_ref().is_ok_and(|k| k.stale()))
            {
                cache.slots.remove(&key);
                cache.slot(key)
            } else {
                slot
            }
        };
        let k = slot
            .get_or_init(|| {
                let settings = self.settings();
                let valid = match &checked {
                    Some((c, _)) => &*c.valid,
                    None => kernel.valid(),
                };
                if settings.dump.ir {
                    eprintln!(
                        "// IR of {} for {}\n{}",
                        kernel.name(),
                        self.spec(),
                        valid.function()
                    );
                }
                let r = self.inner.backend.compile(valid, &settings);
                if r.is_ok() {
                    self.inner.compiles.fetch_add(1, Ordering::Relaxed);
                }
                r
            })
            .clone();
        if k.is_err() {
            let mut cache = self.inner.cache.lock().unwrap();
            if cache
                .slots
                .get(&key)
                .is_some_and(|(s, _)| Arc::ptr_eq(s, &slot))
            {
                cache.slots.remove(&key);
            }
        }
        let k = k?;
        kernel.remember_compiled(id, k.clone());
        Ok(k)
    }
}
