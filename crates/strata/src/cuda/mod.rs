//! The CUDA backend: NVIDIA GPUs through the CUDA driver API (`cudarc`), kernels generated as
//! CUDA C++ ([`crate::codegen::cuda`]) and compiled at run time by NVRTC ([`nvrtc`]).
//!
//! Nothing CUDA is needed to build strata: the driver (`libcuda.so.1`) and NVRTC are loaded at
//! run time. Before cudarc touches either library, strata opens it itself and checks every
//! symbol it will call, because cudarc panics on a missing library or symbol. Without the
//! driver, without a GPU, or without NVRTC, CUDA devices are simply not listed and
//! [`crate::unavailable_backends`] (`strata devices --why`) says which and why.
//!
//! Each device uses its primary context. Kernels are compiled by NVRTC, with `--fmad=false`
//! and `-DSTRATA_MAX_GROUP=<the device's largest work-group size>`, to a CUBIN for the
//! device's own architecture (`sm_XY`: machine code, no JIT in the driver) through the disk
//! cache, and loaded with `cuModuleLoadData`. When the driver refuses the CUBIN (an NVRTC
//! newer than the driver) or the device's settings ask for it
//! ([`CudaLoad::Ptx`](crate::settings::CudaLoad::Ptx)), the kernel is loaded as PTX for
//! `compute_XY`, which the driver compiles. A [`Kernel`](crate::Kernel) remembers its module
//! per device, so a launch does not hash the IR. Each strata queue is a CUDA stream driven by
//! a pipelined worker (see `queue.rs`); a launch-sized local array is a slice of the launch's
//! dynamic shared memory; launch arguments are 8-byte slots in the generated signature's
//! order.
//!
//! **Allocations** are `cuMemAlloc` and a zeroing memset, which the allocation waits for: the
//! memset is issued to the context's legacy stream, which strata's non-blocking streams do
//! not wait for, so unwaited it could run after a queue's first command on the memory and
//! overwrite its result.
//!
//! [`Device::cuda_handles`](crate::Device::cuda_handles) gives the device's ordinal, primary
//! context and architecture to driver-API code beside strata (the hand-written baselines of
//! `strata bench`).

pub mod nvrtc;
mod queue;

use crate::error::{Error, Result};
use crate::ir::ValidFunction;
use crate::runtime::{
    BackendEntry, BackendKind, CompiledKernel, CudaHandles, DeviceBackend, DeviceInfo, Devices,
    Found, Memory, QueueBackend,
};
use cudarc::driver::{result as cu, sys};
use std::any::Any;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

pub use nvrtc::{compile, compile_ptx, nvrtc_path, nvrtc_version, ptx_cache_dir, Output, Ptx};

/// The driver functions strata (through cudarc) calls.
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxReset_v2",
    "cuCtxSetCurrent",
    "cuCtxGetCurrent",
    "cuMemAlloc_v2",
    "cuMemGetAddressRange_v2",
    "cuMemFree_v2",
    "cuMemsetD8Async",
    "cuMemsetD16Async",
    "cuMemsetD32Async",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemcpy3DAsync_v2",
    "cuStreamCreate",
    "cuStreamSynchronize",
    "cuStreamDestroy_v2",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime",
    "cuEventDestroy_v2",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuFuncGetAttribute",
    "cuLaunchKernel",
    "cuGetErrorString",
    "cuGetErrorName",
];

/// A failed driver call as strata's error. A device fault (an illegal address, a kernel
/// that traps...) spoils the context of the calling thread: its cell is marked, so the
/// device's next allocation, compilation or queue resets it ([`CtxCell::current`]).
pub(crate) fn cu_error(call: &str, e: cu::DriverError) -> Error {
    let message = format!("{call} failed: {e}");
    if spoils_context(e.0) {
        if let Ok(Some(ctx)) = cu::ctx::get_current() {
            let cells = CELLS.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(cell) = cells.iter().find(|c| c.ctx().0 == ctx) {
                cell.mark_fault(&message);
            }
        }
    }
    Error::Backend {
        backend: "cuda",
        message,
    }
}

/// Whether a driver error leaves the context unusable: the faults of a running kernel, after
/// which every later call in the context returns the same error.
fn spoils_context(r: sys::CUresult) -> bool {
    use sys::CUresult::*;
    matches!(
        r,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_ECC_UNCORRECTABLE
    )
}

/// Opens the driver library and checks its symbols; keeps it loaded.
fn driver_library() -> std::result::Result<(), String> {
    static LIB: OnceLock<std::result::Result<libloading::Library, String>> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: opening the driver library runs no initialization with preconditions.
        let lib = unsafe { libloading::Library::new("libcuda.so.1") }.map_err(|e| {
            format!(
                "the CUDA driver library (libcuda.so.1) could not be loaded ({e}): no NVIDIA \
                 driver is installed"
            )
        })?;
        let missing = missing_symbols(&lib, DRIVER_SYMBOLS);
        if !missing.is_empty() {
            return Err(format!(
                "the CUDA driver library lacks {} (strata needs a driver for CUDA 12 or later)",
                missing.join(", ")
            ));
        }
        // SAFETY: only tries to open the library (by the names cudarc uses).
        if !unsafe { sys::is_culib_present() } {
            return Err("cudarc cannot open the CUDA driver library".into());
        }
        Ok(lib)
    })
    .as_ref()
    .map(|_| ())
    .map_err(|e| e.clone())
}

/// The names in `symbols` that `lib` does not export: check them before calling through a
/// library that panics on a missing symbol (cudarc does).
pub(crate) fn missing_symbols(
    lib: &libloading::Library,
    symbols: &[&'static str],
) -> Vec<&'static str> {
    symbols
        .iter()
        .copied()
        // SAFETY: only the symbol's address is looked up; nothing is called.
        .filter(|s| unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_err())
        .collect()
}

/// Where a CUDA library may be, in the order to try: the file or folder named by the
/// environment variable `var` (and nothing else when it is set); the bare `names` (the system's
/// library search path); `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64` and `/usr/local/cuda/lib64`;
/// and the folders of Python wheels, given as `(module, subfolder)` and found by asking
/// `python3` where each module is. Fails only when `var` names a path that does not exist.
///
/// strata finds NVRTC this way (`STRATA_NVRTC`, `libnvrtc.so*`, the `nvidia.cuda_nvrtc`
/// wheel); other CUDA libraries used beside strata (cuBLAS for `strata bench`) can be found the
/// same way. For strata's tools: hidden from the docs, not part of the API.
#[doc(hidden)]
pub fn library_candidates(
    var: &str,
    names: &[&str],
    wheels: &[(&str, &str)],
) -> std::result::Result<Vec<PathBuf>, String> {
    let in_dir = |d: &Path| names.iter().map(|n| d.join(n)).collect::<Vec<_>>();
    if let Some(p) = crate::settings::location(var) {
        return if p.is_dir() {
            Ok(in_dir(&p))
        } else if p.exists() {
            Ok(vec![p])
        } else {
            Err(format!(
                "{var} is set to `{}`, which does not exist",
                p.display()
            ))
        };
    }
    let mut c: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
    for env in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(d) = crate::settings::location(env) {
            c.extend(in_dir(&d.join("lib64")));
        }
    }
    c.extend(in_dir(Path::new("/usr/local/cuda/lib64")));
    if !wheels.is_empty() {
        let mut script = String::from("import importlib, os\n");
        for (module, sub) in wheels {
            script.push_str(&format!(
                "try: print(os.path.join(list(importlib.import_module('{module}').__path__)[0], '{sub}'))\nexcept Exception: pass\n"
            ));
        }
        if let Ok(out) = std::process::Command::new("python3")
            .args(["-c", &script])
            .stderr(std::process::Stdio::null())
            .output()
        {
            for dir in String::from_utf8_lossy(&out.stdout).lines() {
                if !dir.trim().is_empty() {
                    c.extend(in_dir(Path::new(dir.trim())));
                }
            }
        }
    }
    Ok(c)
}

/// A CUDA context handle; the driver allows using it from any thread.
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct Ctx(sys::CUcontext);
// SAFETY: CUDA contexts are process-wide handles that every thread may bind.
unsafe impl Send for Ctx {}
// SAFETY: as above.
unsafe impl Sync for Ctx {}

/// The cells of every CUDA device, to find the one whose context a failed call spoiled.
static CELLS: std::sync::Mutex<Vec<Arc<CtxCell>>> = std::sync::Mutex::new(Vec::new());

/// A device's primary context across resets.
///
/// **Device faults.** A kernel that faults (an illegal address, say) leaves the context
/// unusable: every later call in it fails with the same error. [`cu_error`] marks the cell;
/// the device's next allocation, compilation or new queue ([`CtxCell::current`]) then resets
/// the primary context (`cuDevicePrimaryCtxReset`), retains it again, checks it with a small
/// allocation, and moves to a new *generation*. Everything made in an older generation
/// (buffers, queues, loaded modules) was destroyed by the reset: it holds a [`CtxRef`] of its
/// generation, so using it is a typed error naming the fault, dropping it calls no driver
/// function, and the runtime compiles a kernel whose module was lost again
/// ([`CompiledKernel::stale`]). The reset spoils memory other code made in the same primary
/// context (the handles of [`crate::Device::cuda_handles`]). Where the driver cannot reset
/// the context, every later use of the device is an error that says so. CUDA documents an
/// illegal address as leaving the process unable to do further CUDA work, and so it was on
/// an H200 with driver 580 (2026-11-27): after the fault, the reset succeeded but every new
/// context (the primary one retained again, after releasing it to zero, or one made with
/// `cuCtxCreate`) was refused with the fault's own error.
pub(crate) struct CtxCell {
    dev: sys::CUdevice,
    label: String,
    ctx: std::sync::Mutex<Ctx>,
    generation: std::sync::atomic::AtomicU64,
    /// The message of the fault that spoiled the current generation, if one did.
    fault: std::sync::Mutex<Option<String>>,
}

impl CtxCell {
    fn new(dev: sys::CUdevice, label: String, ctx: Ctx) -> Arc<CtxCell> {
        let cell = Arc::new(CtxCell {
            dev,
            label,
            ctx: std::sync::Mutex::new(ctx),
            generation: std::sync::atomic::AtomicU64::new(0),
            fault: std::sync::Mutex::new(None),
        });
        CELLS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(cell.clone());
        cell
    }

    fn ctx(&self) -> Ctx {
        *self.ctx.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    fn mark_fault(&self, message: &str) {
        let mut fault = self.fault.lock().unwrap_or_else(|p| p.into_inner());
        if fault.is_none() {
            *fault = Some(message.to_string());
        }
    }

    /// The current generation's context, bound to the calling thread; after a device fault,
    /// a new one (see the type's docs).
    pub(crate) fn current(self: &Arc<CtxCell>) -> Result<CtxRef> {
        self.recover()?;
        let r = CtxRef {
            cell: self.clone(),
            generation: self.generation(),
        };
        r.bind()?;
        Ok(r)
    }

    /// Resets the context if a fault spoiled it (see the type's docs).
    fn recover(&self) -> Result<()> {
        let mut fault = self.fault.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = fault.clone() {
            self.reset().map_err(|e| Error::Backend {
                backend: "cuda",
                message: format!(
                    "{} is unusable after a device fault ({why}), and resetting its context \
                     failed: {e}; the driver may keep this fault for the life of the \
                     process: restart it",
                    self.label
                ),
            })?;
            eprintln!(
                "strata: {}: the context was reset after a device fault ({why}); the buffers, \
                 queues and events made on it before are lost",
                self.label
            );
            *fault = None;
        }
        Ok(())
    }

    /// Resets the primary context, retains it again and checks it with an allocation.
    fn reset(&self) -> std::result::Result<(), String> {
        // SAFETY: `dev` is a valid device; what the reset destroys is marked stale by the
        // generation below before anything else can use it (callers hold the fault lock).
        unsafe { sys::cuDevicePrimaryCtxReset_v2(self.dev).result() }
            .map_err(|e| format!("cuDevicePrimaryCtxReset: {e}"))?;
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        // SAFETY: `dev` is valid; the context is retained for the life of the process.
        let ctx = Ctx(unsafe { cu::primary_ctx::retain(self.dev) }
            .map_err(|e| format!("cuDevicePrimaryCtxRetain: {e}"))?);
        *self.ctx.lock().unwrap_or_else(|p| p.into_inner()) = ctx;
        // SAFETY: the context was just retained.
        unsafe { cu::ctx::set_current(ctx.0) }.map_err(|e| format!("cuCtxSetCurrent: {e}"))?;
        // SAFETY: the context is bound; the size is non-zero; the memory is freed once.
        unsafe {
            let p = cu::malloc_sync(256).map_err(|e| format!("cuMemAlloc: {e}"))?;
            let set = cu::memset_d8_async(p, 0, 256, std::ptr::null_mut())
                .and_then(|()| cu::stream::synchronize(std::ptr::null_mut()));
            let _ = cu::free_sync(p);
            set.map_err(|e| format!("a memset after the reset: {e}"))?;
        }
        Ok(())
    }
}

/// The context of one generation of a device's [`CtxCell`]: what buffers, modules, queues
/// and events keep, so that nothing uses or frees a handle a reset destroyed.
#[derive(Clone)]
pub(crate) struct CtxRef {
    cell: Arc<CtxCell>,
    generation: u64,
}

impl CtxRef {
    /// Whether this generation is the device's current one.
    pub(crate) fn live(&self) -> bool {
        self.cell.generation() == self.generation
    }

    /// The error for a handle of an older generation.
    pub(crate) fn lost(&self, what: &str) -> Error {
        Error::Backend {
            backend: "cuda",
            message: format!(
                "{what} was lost: {}'s context was reset after a device fault; make it again",
                self.cell.label
            ),
        }
    }

    /// Binds the context to the calling thread, if it is the current generation's.
    pub(crate) fn bind(&self) -> Result<()> {
        if !self.live() {
            return Err(self.lost("this object of the device"));
        }
        let ctx = self.cell.ctx();
        // SAFETY: the primary context is retained for the life of the process.
        unsafe { cu::ctx::set_current(ctx.0) }.map_err(|e| cu_error("cuCtxSetCurrent", e))
    }
}

/// The CUDA backend in the device registry: every device [`discover`] opens; `best` takes the
/// first before any other. A driver that crashes while being probed must not take the process
/// down: a panic in discovery (cudarc panics on missing symbols) is reported as the reason.
pub(crate) const BACKEND: BackendEntry = BackendEntry {
    kind: BackendKind::Cuda,
    bare_spec: false,
    devices: Devices::Discover(|| {
        let found = std::panic::catch_unwind(discover).unwrap_or_else(|p| {
            Err(format!(
                "probing the CUDA driver panicked: {}",
                crate::error::panic_message(&*p)
            ))
        })?;
        Ok(Found {
            devices: found
                .into_iter()
                .map(|d| Box::new(d) as Box<dyn DeviceBackend>)
                .collect(),
            problems: Vec::new(),
        })
    }),
    best_rank: |_| Some(0),
};

/// Every CUDA device present, numbered by the driver's ordinals; or why there is none.
pub(crate) fn discover() -> std::result::Result<Vec<CudaDevice>, String> {
    // Without a driver, say whether NVRTC is there: kernels still compile (`strata ptx`).
    let with_nvrtc = |why: String| match nvrtc::nvrtc_version() {
        Ok((major, minor)) => format!(
            "{why}; NVRTC {major}.{minor} is present, so CUDA kernels still compile (`strata ptx`)"
        ),
        Err(_) => why,
    };
    driver_library().map_err(with_nvrtc)?;
    cu::init().map_err(|e| {
        with_nvrtc(format!(
            "cuInit failed: {e} (no NVIDIA GPU, or the driver is not working)"
        ))
    })?;
    let count = cu::device::get_count().map_err(|e| format!("cuDeviceGetCount failed: {e}"))?;
    if count == 0 {
        return Err("the CUDA driver lists no device".into());
    }
    if let Err(why) = nvrtc::nvrtc_version() {
        return Err(format!(
            "the CUDA driver lists {count} device(s), but kernels cannot be compiled: {why}"
        ));
    }
    let mut devices = Vec::new();
    let mut problems = Vec::new();
    for ordinal in 0..count {
        match CudaDevice::new(ordinal, devices.len()) {
            Ok(d) => devices.push(d),
            Err(e) => problems.push(format!("device {ordinal}: {e}")),
        }
    }
    if devices.is_empty() {
        return Err(problems.join("; "));
    }
    Ok(devices)
}

/// One CUDA device (strata's backend object behind a [`crate::Device`] of `cuda:N`).
pub(crate) struct CudaDevice {
    pub(crate) label: String,
    info: DeviceInfo,
    /// The primary context, across resets after device faults.
    cell: Arc<CtxCell>,
    /// The driver's ordinal.
    ordinal: i32,
    /// Compute capability as `10 * major + minor`.
    arch: u32,
}

impl CudaDevice {
    fn new(ordinal: i32, index: usize) -> Result<CudaDevice> {
        let dev = cu::device::get(ordinal).map_err(|e| cu_error("cuDeviceGet", e))?;
        let attr = |a: sys::CUdevice_attribute| -> Result<i32> {
            // SAFETY: `dev` is a valid device handle.
            unsafe { cu::device::get_attribute(dev, a) }
                .map_err(|e| cu_error(&format!("cuDeviceGetAttribute({a:?})"), e))
        };
        use sys::CUdevice_attribute::*;
        let major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let name = cu::device::get_name(dev).map_err(|e| cu_error("cuDeviceGetName", e))?;
        // SAFETY: `dev` is a valid device handle.
        let total = unsafe { cu::device::total_mem(dev) }
            .map_err(|e| cu_error("cuDeviceTotalMem", e))? as u64;
        // SAFETY: `dev` is valid; the primary context is never released (devices live as long
        // as the process).
        let ctx = Ctx(unsafe { cu::primary_ctx::retain(dev) }
            .map_err(|e| cu_error("cuDevicePrimaryCtxRetain", e))?);
        let mut driver = 0;
        // SAFETY: the pointer is valid for a write.
        unsafe { sys::cuDriverGetVersion(&mut driver) };
        let max_threads = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as usize;
        let sm = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let (nv_major, nv_minor) = nvrtc::nvrtc_version().unwrap_or((0, 0));
        let info = DeviceInfo {
            backend: BackendKind::Cuda,
            index,
            name: name.clone(),
            vendor: "NVIDIA".into(),
            compute_units: sm,
            max_work_group_size: max_threads,
            max_work_item_sizes: [
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)? as usize,
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)? as usize,
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)? as usize,
            ],
            local_mem_size: attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)? as u64,
            global_mem_size: total,
            max_alloc_size: total,
            preferred_group_size: 256.min(max_threads),
            supports_f64: true,
            supports_f16: true,
            supports_int64_atomics: true,
            sub_group_size: crate::codegen::CUDA.sub_group_size,
            // Constant buffers are `const __restrict__` pointers into global memory.
            max_constant_buffer_size: None,
            max_constant_args: None,
            // The row pitch cuMemAllocPitch gives on recent GPUs.
            pitch_alignment: 512,
            loop_iteration_limit: None,
            extra: vec![
                ("compute capability".into(), format!("{major}.{minor}")),
                (
                    "driver version".into(),
                    format!("{}.{}", driver / 1000, (driver % 1000) / 10),
                ),
                ("nvrtc version".into(), format!("{nv_major}.{nv_minor}")),
                (
                    "max grid size".into(),
                    format!(
                        "{} x {} x {}",
                        attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                        attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                        attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?
                    ),
                ),
                (
                    "warp size".into(),
                    attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE)?.to_string(),
                ),
                ("device type".into(), "GPU".into()),
            ],
        };
        let label = format!("cuda:{index} ({name})");
        Ok(CudaDevice {
            cell: CtxCell::new(dev, label.clone(), ctx),
            label,
            info,
            ordinal,
            arch: (10 * major + minor) as u32,
        })
    }
}

/// Global memory of the CUDA backend. Zero-sized buffers get one byte (CUDA has no empty
/// allocations).
pub(crate) struct CuMem {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    ctx: CtxRef,
    /// Whether strata frees it (memory from `Buffer::from_native` with `Ownership::Borrowed`
    /// is the application's).
    owned: bool,
}

impl CuMem {
    /// The device pointer; an error when a reset of the context destroyed the memory.
    pub(crate) fn ptr(&self) -> Result<sys::CUdeviceptr> {
        if self.ctx.live() {
            Ok(self.ptr)
        } else {
            Err(self.ctx.lost("the buffer's memory"))
        }
    }
}

impl Drop for CuMem {
    fn drop(&mut self) {
        // Commands keep their memory alive until they complete, so nothing uses it now. (Memory
        // of an older generation of the context was freed by its reset.)
        if self.owned && self.ctx.bind().is_ok() {
            // SAFETY: `ptr` came from cuMemAlloc in this context and is freed once.
            let _ = unsafe { cu::free_sync(self.ptr) };
        }
    }
}

impl Memory for CuMem {
    fn size(&self) -> usize {
        self.bytes
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn native(&self) -> crate::runtime::NativeMemory {
        crate::runtime::NativeMemory::Cuda(self.ptr)
    }
}

/// A module loaded on one device, and its kernel function.
pub(crate) struct CuKernel {
    pub(crate) name: String,
    module: sys::CUmodule,
    pub(crate) function: sys::CUfunction,
    pub(crate) ctx: CtxRef,
}

// SAFETY: module and function handles may be used from any thread that binds the context.
unsafe impl Send for CuKernel {}
// SAFETY: as above; launching is thread-safe in the driver.
unsafe impl Sync for CuKernel {}

impl Drop for CuKernel {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: the module was loaded in this context; launches hold the kernel alive.
            let _ = unsafe { cu::module::unload(self.module) };
        }
    }
}

impl CompiledKernel for CuKernel {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn stale(&self) -> bool {
        !self.ctx.live()
    }
}

impl CudaDevice {
    /// Loads PTX and looks up `entry`.
    fn load(&self, kernel: &str, ptx: &str, entry: &str) -> Result<CuKernel> {
        let image = CString::new(ptx).map_err(|_| Error::Backend {
            backend: "cuda",
            message: format!("strata bug: the PTX of `{kernel}` contains NUL"),
        })?;
        self.load_image(kernel, image.as_bytes_with_nul(), entry)
    }

    /// Loads a module image (NUL-terminated PTX, or a CUBIN) and looks up `entry`.
    fn load_image(&self, kernel: &str, image: &[u8], entry: &str) -> Result<CuKernel> {
        let ctx = self.cell.current()?;
        // SAFETY: `image` is a whole PTX text with its NUL or a whole CUBIN (the driver reads
        // its size from its header), alive for the call.
        let module = unsafe { cu::module::load_data(image.as_ptr().cast()) }.map_err(|e| {
            let mut err = cu_error(
                &format!("cuModuleLoadData(`{kernel}`) on {}", self.label),
                e,
            );
            if let Error::Backend { message, .. } = &mut err {
                if e.0 == sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION {
                    message.push_str(
                        " (NVRTC is newer than the driver: use an NVRTC of the driver's CUDA \
                         version, through STRATA_NVRTC)",
                    );
                }
            }
            err
        })?;
        let name = CString::new(entry).map_err(|_| Error::Backend {
            backend: "cuda",
            message: format!("strata bug: the entry of `{kernel}` contains NUL"),
        })?;
        // SAFETY: `module` was just loaded; `name` is NUL-terminated.
        let function = match unsafe { cu::module::get_function(module, name) } {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: the module was just loaded and is not used elsewhere.
                let _ = unsafe { cu::module::unload(module) };
                return Err(cu_error(&format!("cuModuleGetFunction(`{entry}`)"), e));
            }
        };
        Ok(CuKernel {
            name: kernel.to_string(),
            module,
            function,
            ctx,
        })
    }
}

impl DeviceBackend for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Arc<dyn Memory>> {
        let ctx = self.cell.current()?;
        let n = bytes.max(1);
        let oom = |call: &str, e: cu::DriverError| {
            if spoils_context(e.0) {
                // A device fault reported here, not running out of memory.
                return cu_error(call, e);
            }
            Error::OutOfMemory {
                device: self.info.spec(),
                requested: bytes as u64,
                reason: format!("{call}: {e}"),
            }
        };
        // SAFETY: the context is bound; the size is non-zero.
        let ptr = unsafe { cu::malloc_sync(n) }.map_err(|e| oom("cuMemAlloc", e))?;
        let mem = CuMem {
            ptr,
            bytes,
            ctx,
            owned: true,
        };
        // Zero it, and wait for the zeroing. A memset without a stream is only *issued* to the
        // legacy default stream, and strata's queues are non-blocking streams, which the legacy
        // stream does not order: without the wait, a queue's first write or kernel on the new
        // memory can run before the memset, which then overwrites its result with zeros.
        // SAFETY: `ptr` holds `n` bytes; the null stream is the context's legacy stream.
        unsafe { cu::memset_d8_async(ptr, 0, n, std::ptr::null_mut()) }
            .map_err(|e| oom("cuMemsetD8Async", e))?;
        // SAFETY: the null stream is the bound context's legacy stream.
        unsafe { cu::stream::synchronize(std::ptr::null_mut()) }
            .map_err(|e| cu_error("cuStreamSynchronize (zeroing a new allocation)", e))?;
        Ok(Arc::new(mem))
    }

    fn compile(
        &self,
        f: &ValidFunction,
        settings: &crate::Settings,
    ) -> Result<Arc<dyn CompiledKernel>> {
        let generated =
            crate::codegen::for_device(f, &crate::codegen::CUDA, &self.label, settings)?;
        let name = &f.function().name;
        let extra = [format!(
            "-DSTRATA_MAX_GROUP={}",
            self.info.max_work_group_size
        )];
        // Machine code for this device (no JIT by the driver when loaded, and cached on disk);
        // PTX, compiled by the driver, when the driver cannot load NVRTC's CUBIN (an NVRTC
        // newer than the driver, say), or when the settings ask for it (`CudaLoad::Ptx`).
        let cubin = match settings.cuda_load {
            crate::settings::CudaLoad::Ptx => Err(Error::Backend {
                backend: "cuda",
                message: "the settings ask for PTX (`CudaLoad::Ptx`, `STRATA_CUDA_LOAD=ptx`)"
                    .into(),
            }),
            crate::settings::CudaLoad::Cubin => {
                nvrtc::compile(name, &generated, Output::Cubin(self.arch), &extra)
                    .and_then(|(cubin, _)| self.load_image(name, &cubin, &generated.entry))
            }
        };
        match cubin {
            Ok(k) => Ok(Arc::new(k)),
            Err(Error::CompileFailed { .. }) => {
                cubin.map(|k| Arc::new(k) as Arc<dyn CompiledKernel>)
            }
            Err(cubin_error) => {
                let ptx = nvrtc::compile_ptx(name, &generated, self.arch, &extra)?;
                match self.load(name, &ptx.text, &generated.entry) {
                    Ok(k) => Ok(Arc::new(k)),
                    Err(ptx_error) => Err(Error::Backend {
                        backend: "cuda",
                        message: format!("{ptx_error} (and the CUBIN before it: {cubin_error})"),
                    }),
                }
            }
        }
    }

    fn new_queue_with(&self, profiling: bool) -> Result<Arc<dyn QueueBackend>> {
        Ok(Arc::new(queue::new_queue(self, profiling)?))
    }

    unsafe fn wrap_memory(
        &self,
        mem: crate::runtime::NativeMemory,
        bytes: usize,
        ownership: crate::runtime::Ownership,
    ) -> Result<Arc<dyn Memory>> {
        let crate::runtime::NativeMemory::Cuda(ptr) = mem else {
            return Err(Error::Backend {
                backend: "cuda",
                message: format!("{} takes a CUDA device pointer, not {mem:?}", self.label),
            });
        };
        let ctx = self.cell.current()?;
        let (mut base, mut size) = (0u64, 0usize);
        // SAFETY: the out-pointers are valid; the driver checks `ptr`.
        unsafe { sys::cuMemGetAddressRange_v2(&mut base, &mut size, ptr).result() }.map_err(
            |e| {
                cu_error(
                    "cuMemGetAddressRange (the pointer is not memory of this context?)",
                    e,
                )
            },
        )?;
        let left = (base + size as u64).saturating_sub(ptr);
        if left < bytes as u64 {
            return Err(Error::BufferRange {
                op: "from_native",
                detail: format!(
                    "the allocation holds {left} bytes from the pointer; the buffer needs {bytes}"
                ),
            });
        }
        Ok(Arc::new(CuMem {
            ptr,
            bytes,
            ctx,
            owned: ownership == crate::runtime::Ownership::Owned,
        }))
    }

    unsafe fn wrap_queue(&self, stream: *mut std::ffi::c_void) -> Result<Arc<dyn QueueBackend>> {
        Ok(Arc::new(queue::wrap_stream(self, stream.cast())?))
    }

    fn cuda_handles(&self) -> Option<CudaHandles> {
        Some(CudaHandles {
            device: self.ordinal,
            context: self.cell.ctx().0.cast(),
            arch: self.arch,
        })
    }
}
