//! Hand-written CUDA baselines for `strata bench` on CUDA devices: the "low-level CUDA" of the
//! PACXX paper. The kernels below are CUDA C written by hand, compiled by NVRTC directly and
//! launched through the raw driver API (cudarc's `result` layer), with none of strata's layers
//! in between. Each is timed like its strata counterpart: host wall time from the launch call
//! until the result is complete (for reductions, until the scalar is on the host).
//!
//! SGEMM is compared with cuBLAS ([`super::cublas`]) where it can be loaded, else with a
//! hand-written kernel (`base_sgemm`), and the result says which.
//!
//! Also measured here: the device-to-device copy bandwidth (the roof for memory-bound kernels)
//! and the cost of launching a kernel, strata's cached launch against a raw `cuLaunchKernel`
//! of the same PTX.

use super::cublas::{cublas_path, cublas_version, CublasHandle};
use cudarc::driver::{result as cu, sys};
use std::ffi::{c_void, CString};
use std::time::Instant;
use strata::codegen::Generated;
use strata::cuda::compile_ptx;
use strata::error::{Error, Result};
use strata::CudaHandles;
use strata::Device;

const SOURCE: &str = r#"
extern "C" __global__ void base_vadd(const float* a, const float* b, float* c, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void base_saxpy(float a, const float* x, float* y, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
__device__ float block_sum(float acc) {
    __shared__ float warps[32];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (lane == 0) warps[warp] = acc;
    __syncthreads();
    acc = 0.0f;
    if (warp == 0) {
        if (lane < (blockDim.x >> 5)) acc = warps[lane];
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    }
    return acc;
}
extern "C" __global__ void base_dot(const float* x, const float* y, float* out, unsigned n) {
    float acc = 0.0f;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += x[i] * y[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) atomicAdd(out, acc);
}
extern "C" __global__ void base_sum(const float* x, float* out, unsigned n) {
    float acc = 0.0f;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += x[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) atomicAdd(out, acc);
}
// The SGEMM fallback when cuBLAS cannot be loaded: 16 x 16 local-memory tiles, one element of C
// per thread, m, n and k multiples of 16; blocks of 256 threads in one dimension.
extern "C" __global__ void base_sgemm(const float* a, const float* b, float* c, unsigned m,
                                      unsigned n, unsigned k) {
    __shared__ float at[16][16], bt[16][16];
    const unsigned tx = threadIdx.x % 16u, ty = threadIdx.x / 16u, blocks_n = n / 16u;
    const unsigned row = blockIdx.x / blocks_n * 16u + ty, col = blockIdx.x % blocks_n * 16u + tx;
    float acc = 0.0f;
    for (unsigned t = 0; t < k; t += 16u) {
        at[ty][tx] = a[row * k + t + tx];
        bt[ty][tx] = b[(t + ty) * n + col];
        __syncthreads();
        for (int p = 0; p < 16; p++) acc = fmaf(at[ty][p], bt[p][tx], acc);
        __syncthreads();
    }
    c[row * n + col] = acc;
}
"#;

/// The SGEMM baseline's run: which baseline, its median time and its result.
#[derive(Clone, Debug)]
pub struct SgemmBaseline {
    /// `cublas`, or `cuda` for the hand-written kernel where cuBLAS could not be loaded.
    pub name: &'static str,
    /// What ran: cuBLAS's version and path, or why cuBLAS is missing.
    pub detail: String,
    /// Median seconds of one multiplication (launch to completion).
    pub seconds: f64,
    /// The product, row-major.
    pub c: Vec<f32>,
}

/// Threads per block of the baselines (a multiple of 32, as `block_sum` requires).
const BLOCK: u32 = 256;
/// Blocks per multiprocessor of the reductions.
const REDUCE_BLOCKS_PER_SM: u32 = 16;

/// The cost of launching a cached kernel (seconds), measured by
/// [`CudaBaseline::launch_overhead`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaunchCost {
    /// Per launch, with `count` launches on a strata queue issued back to back, then one wait.
    pub strata_launch_s: f64,
    /// The same with raw `cuLaunchKernel` calls on one stream.
    pub raw_launch_s: f64,
    /// Raw launches, each between two `cuEventRecord`s (what strata's queue issues per
    /// command for its timing): how much of the difference the events are.
    pub raw_events_launch_s: f64,
    /// One blocking launch (`Kernel::launch`: launch and wait), median.
    pub strata_blocking_s: f64,
    /// One raw launch followed by `cuStreamSynchronize`, median.
    pub raw_blocking_s: f64,
}

/// Device memory of the baselines.
struct Mem(sys::CUdeviceptr);

impl Drop for Mem {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc; every use has completed (each run synchronizes).
        let _ = unsafe { cu::free_sync(self.0) };
    }
}

/// The hand-written kernels, loaded on one CUDA device.
pub struct CudaBaseline {
    device: Device,
    stream: sys::CUstream,
    module: sys::CUmodule,
    sms: u32,
}

impl Drop for CudaBaseline {
    fn drop(&mut self) {
        // SAFETY: created by this baseline, destroyed once, after every run synchronized.
        unsafe {
            let _ = cu::stream::destroy(self.stream);
            let _ = cu::module::unload(self.module);
        }
    }
}

/// The CUDA device behind a strata device.
/// A failed driver call as strata's error.
fn cu_error(call: &str, e: cu::DriverError) -> Error {
    Error::Backend {
        backend: "cuda",
        message: format!("{call} failed: {e}"),
    }
}

/// The native handles of a CUDA device.
fn cuda_device(device: &Device) -> Result<CudaHandles> {
    device.cuda_handles().ok_or_else(|| Error::Backend {
        backend: "cuda",
        message: format!("{} is not a CUDA device", device.spec()),
    })
}

/// Binds the device's context (strata's own, its primary context) to the calling thread.
fn bind(h: CudaHandles) -> Result<()> {
    // SAFETY: strata retains the primary context for the life of the process.
    unsafe { cu::ctx::set_current(h.context.cast()) }.map_err(|e| cu_error("cuCtxSetCurrent", e))
}

/// Loads PTX text into the current context and looks up `entry`.
fn load_ptx(ptx: &str, entry: &str) -> Result<(sys::CUmodule, sys::CUfunction)> {
    let image = CString::new(ptx).expect("PTX has no NUL");
    // SAFETY: `image` is a whole NUL-terminated PTX text, alive for the call.
    let module = unsafe { cu::module::load_data(image.as_ptr().cast()) }
        .map_err(|e| cu_error(&format!("cuModuleLoadData({entry})"), e))?;
    let name = CString::new(entry).expect("no NUL");
    // SAFETY: `module` was just loaded.
    match unsafe { cu::module::get_function(module, name) } {
        Ok(f) => Ok((module, f)),
        Err(e) => {
            // SAFETY: the module was just loaded and is used nowhere else.
            let _ = unsafe { cu::module::unload(module) };
            Err(cu_error(&format!("cuModuleGetFunction({entry})"), e))
        }
    }
}

impl CudaBaseline {
    /// Compiles and loads the baselines on `device` (a CUDA device).
    pub fn new(device: &Device) -> Result<CudaBaseline> {
        let dev = cuda_device(device)?;
        let generated = Generated {
            source: SOURCE.to_string(),
            entry: "strata_baselines".into(),
            options: vec!["--std=c++17".into(), "--fmad=false".into()],
        };
        let ptx = compile_ptx("baselines", &generated, dev.arch, &[])?;
        bind(dev)?;
        let image = CString::new(ptx.text).expect("PTX has no NUL");
        // SAFETY: NUL-terminated PTX, alive for the call.
        let module = unsafe { cu::module::load_data(image.as_ptr().cast()) }
            .map_err(|e| cu_error("cuModuleLoadData(baselines)", e))?;
        let stream = cu::stream::create(cu::stream::StreamKind::NonBlocking)
            .map_err(|e| cu_error("cuStreamCreate", e))?;
        Ok(CudaBaseline {
            device: device.clone(),
            stream,
            module,
            sms: device.info().compute_units,
        })
    }

    fn function(&self, name: &str) -> Result<sys::CUfunction> {
        let n = CString::new(name).expect("no NUL");
        // SAFETY: the module is loaded.
        unsafe { cu::module::get_function(self.module, n) }
            .map_err(|e| cu_error(&format!("cuModuleGetFunction({name})"), e))
    }

    fn upload(&self, data: &[f32]) -> Result<Mem> {
        bind(cuda_device(&self.device)?)?;
        let bytes = std::mem::size_of_val(data).max(4);
        // SAFETY: a fresh allocation of `bytes`, written with at most `bytes` bytes.
        unsafe {
            let m = Mem(cu::malloc_sync(bytes).map_err(|e| cu_error("cuMemAlloc", e))?);
            cu::memcpy_htod_sync(m.0, data).map_err(|e| cu_error("cuMemcpyHtoD", e))?;
            Ok(m)
        }
    }

    fn sync(&self) -> Result<()> {
        // SAFETY: the stream is live.
        unsafe { cu::stream::synchronize(self.stream) }
            .map_err(|e| cu_error("cuStreamSynchronize", e))
    }

    /// Launches `f` with the given argument values (each pointed to by one entry).
    fn launch(&self, f: sys::CUfunction, grid: u32, args: &mut [*mut c_void]) -> Result<()> {
        // SAFETY: `args` matches the kernel's signature (the callers pass the hand-written
        // kernels' parameters in order); the memory stays alive until `sync`.
        unsafe { cu::launch_kernel(f, (grid, 1, 1), (BLOCK, 1, 1), 0, self.stream, args) }
            .map_err(|e| cu_error("cuLaunchKernel(baseline)", e))
    }

    fn read(&self, m: &Mem, n: usize) -> Result<Vec<f32>> {
        let mut v = vec![0.0f32; n];
        self.sync()?;
        // SAFETY: `m` holds at least `n` floats.
        unsafe { cu::memcpy_dtoh_sync(&mut v, m.0) }.map_err(|e| cu_error("cuMemcpyDtoH", e))?;
        Ok(v)
    }

    /// Median of `reps` timed runs after one warm-up (the benchmarks' own timing rule).
    fn timed(reps: usize, run: impl FnMut() -> Result<f64>) -> Result<f64> {
        crate::bench::timed(reps, run)
    }

    /// `c = a + b`: median seconds and the result.
    pub fn vadd(&self, a: &[f32], b: &[f32], reps: usize) -> Result<(f64, Vec<f32>)> {
        let n = a.len() as u32;
        let f = self.function("base_vadd")?;
        let (da, db, dc) = (self.upload(a)?, self.upload(b)?, self.upload(a)?);
        let (mut pa, mut pb, mut pc, mut pn) = (da.0, db.0, dc.0, n);
        let s = Self::timed(reps, || {
            let t = Instant::now();
            let mut args = [
                (&raw mut pa).cast(),
                (&raw mut pb).cast(),
                (&raw mut pc).cast(),
                (&raw mut pn).cast(),
            ];
            self.launch(f, n.div_ceil(BLOCK), &mut args)?;
            self.sync()?;
            Ok(t.elapsed().as_secs_f64())
        })?;
        Ok((s, self.read(&dc, a.len())?))
    }

    /// `y = a * x + y`, from `y0` each time: median seconds and the result.
    pub fn saxpy(&self, a: f32, x: &[f32], y0: &[f32], reps: usize) -> Result<(f64, Vec<f32>)> {
        let n = x.len() as u32;
        let f = self.function("base_saxpy")?;
        let (dx, dy) = (self.upload(x)?, self.upload(y0)?);
        let (mut pa, mut px, mut py, mut pn) = (a, dx.0, dy.0, n);
        let s = Self::timed(reps, || {
            // SAFETY: `dy` holds `n` floats; synchronous, so untimed.
            unsafe { cu::memcpy_htod_sync(dy.0, y0) }.map_err(|e| cu_error("cuMemcpyHtoD", e))?;
            let t = Instant::now();
            let mut args = [
                (&raw mut pa).cast(),
                (&raw mut px).cast(),
                (&raw mut py).cast(),
                (&raw mut pn).cast(),
            ];
            self.launch(f, n.div_ceil(BLOCK), &mut args)?;
            self.sync()?;
            Ok(t.elapsed().as_secs_f64())
        })?;
        Ok((s, self.read(&dy, x.len())?))
    }

    /// `sum of x[i] * y[i]` (`y` given) or `sum of x[i]`: median seconds and the result.
    pub fn reduce(&self, x: &[f32], y: Option<&[f32]>, reps: usize) -> Result<(f64, f32)> {
        let n = x.len() as u32;
        let f = self.function(if y.is_some() { "base_dot" } else { "base_sum" })?;
        let dx = self.upload(x)?;
        let dy = y.map(|y| self.upload(y)).transpose()?;
        let out = self.upload(&[0.0])?;
        let grid = n
            .div_ceil(BLOCK)
            .clamp(1, self.sms.max(1) * REDUCE_BLOCKS_PER_SM);
        let (mut px, mut py, mut po, mut pn) = (dx.0, dy.as_ref().map_or(0, |m| m.0), out.0, n);
        let mut result = 0.0f32;
        let s = Self::timed(reps, || {
            let t = Instant::now();
            // SAFETY: `out` holds one float.
            unsafe { sys::cuMemsetD32Async(out.0, 0, 1, self.stream).result() }
                .map_err(|e| cu_error("cuMemsetD32Async", e))?;
            let mut with_y = [
                (&raw mut px).cast(),
                (&raw mut py).cast(),
                (&raw mut po).cast(),
                (&raw mut pn).cast(),
            ];
            let mut without_y = [
                (&raw mut px).cast(),
                (&raw mut po).cast(),
                (&raw mut pn).cast(),
            ];
            let args: &mut [*mut c_void] = if y.is_some() {
                &mut with_y
            } else {
                &mut without_y
            };
            self.launch(f, grid, args)?;
            let mut v = [0.0f32];
            // SAFETY: `out` holds one float; the copy is ordered after the launch.
            unsafe { cu::memcpy_dtoh_async(&mut v, out.0, self.stream) }
                .map_err(|e| cu_error("cuMemcpyDtoHAsync", e))?;
            self.sync()?;
            result = v[0];
            Ok(t.elapsed().as_secs_f64())
        })?;
        Ok((s, result))
    }

    /// `c = a * b` for row-major `a` (`m x k`) and `b` (`k x n`), with cuBLAS (`cublasSgemm` in
    /// the default math mode: fp32, no TF32) on this baseline's stream; where cuBLAS cannot be
    /// loaded, with the hand-written `base_sgemm` kernel instead (m, n and k multiples of 16),
    /// and [`SgemmBaseline::name`] and [`SgemmBaseline::detail`] say so. A cuBLAS that loads
    /// but fails is an error.
    pub fn sgemm(
        &self,
        a: &[f32],
        b: &[f32],
        (m, n, k): (usize, usize, usize),
        reps: usize,
    ) -> Result<SgemmBaseline> {
        if a.len() != m * k || b.len() != k * n {
            return Err(Error::Backend {
                backend: "cuda",
                message: format!(
                    "baseline SGEMM {m} x {n} x {k}: A has {} elements, B {}",
                    a.len(),
                    b.len()
                ),
            });
        }
        let (da, db) = (self.upload(a)?, self.upload(b)?);
        // SAFETY: a fresh allocation, written only by the SGEMM below.
        let dc = Mem(unsafe { cu::malloc_sync(4 * (m * n).max(1)) }
            .map_err(|e| cu_error("cuMemAlloc", e))?);
        let timed_run = |run: &mut dyn FnMut() -> Result<()>| {
            Self::timed(reps, || {
                let t = Instant::now();
                run()?;
                self.sync()?;
                Ok(t.elapsed().as_secs_f64())
            })
        };
        // cuBLAS missing means the fallback; cuBLAS failing once loaded is an error.
        let (name, detail, seconds) = match cublas_path() {
            Ok(path) => {
                let h = CublasHandle::new(self.stream.cast())?;
                let s = timed_run(&mut || {
                    // SAFETY: the three allocations hold m * k, k * n and m * n floats and live
                    // until after the synchronization that ends each run.
                    unsafe { h.sgemm_row_major((m, n, k), da.0, db.0, dc.0) }
                })?;
                let (major, minor, patch) = cublas_version().unwrap_or_default();
                let detail = format!(
                    "cuBLAS {major}.{minor}.{patch} ({}), cublasSgemm, default math mode (fp32, no TF32)",
                    path.display()
                );
                ("cublas", detail, s)
            }
            Err(why) => {
                if m % 16 != 0 || n % 16 != 0 || k % 16 != 0 || m * n / 256 > u32::MAX as usize {
                    return Err(Error::Backend {
                        backend: "cuda",
                        message: format!("cuBLAS is missing ({why}), and the hand-written SGEMM baseline takes multiples of 16, not {m} x {n} x {k}"),
                    });
                }
                let f = self.function("base_sgemm")?;
                let (mut pa, mut pb, mut pc) = (da.0, db.0, dc.0);
                let (mut pm, mut pn, mut pk) = (m as u32, n as u32, k as u32);
                let grid = (m * n / 256) as u32;
                let s = timed_run(&mut || {
                    let mut args = [
                        (&raw mut pa).cast(),
                        (&raw mut pb).cast(),
                        (&raw mut pc).cast(),
                        (&raw mut pm).cast(),
                        (&raw mut pn).cast(),
                        (&raw mut pk).cast(),
                    ];
                    self.launch(f, grid, &mut args)
                })?;
                let detail = format!(
                    "cuBLAS baseline MISSING ({why}); hand-written CUDA C SGEMM (16 x 16 local tiles) instead"
                );
                ("cuda", detail, s)
            }
        };
        Ok(SgemmBaseline {
            name,
            detail,
            seconds,
            c: self.read(&dc, m * n)?,
        })
    }

    /// Device-to-device copy bandwidth over `bytes` bytes, in GB/s counting the bytes read and
    /// written (`2 * bytes` per copy), the way the benchmarks count their bytes.
    pub fn copy_gbps(&self, bytes: usize, reps: usize) -> Result<f64> {
        bind(cuda_device(&self.device)?)?;
        // SAFETY: two fresh allocations of `bytes`; the copy stays inside both.
        let (src, dst) = unsafe {
            (
                Mem(cu::malloc_sync(bytes).map_err(|e| cu_error("cuMemAlloc", e))?),
                Mem(cu::malloc_sync(bytes).map_err(|e| cu_error("cuMemAlloc", e))?),
            )
        };
        let s = Self::timed(reps, || {
            let t = Instant::now();
            // SAFETY: as above.
            unsafe { cu::memcpy_dtod_async(dst.0, src.0, bytes, self.stream) }
                .map_err(|e| cu_error("cuMemcpyDtoDAsync", e))?;
            self.sync()?;
            Ok(t.elapsed().as_secs_f64())
        })?;
        Ok(2.0 * bytes as f64 / s / 1e9)
    }

    /// The cost of a launch of a cached one-work-group kernel, strata against raw
    /// `cuLaunchKernel` of the same PTX on one stream (see [`LaunchCost`]).
    pub fn launch_overhead(&self, count: usize) -> Result<LaunchCost> {
        use strata::prelude::*;
        let k = Kernel::build("launch_probe", |k| {
            let y = k.read_write::<u32>("y");
            let i = global_id(0);
            if_(i.lt(y.len()), || y.set(i, y.at(i) + 1u32));
        })?;
        let q = Queue::new(&self.device)?;
        let y = Buffer::<u32>::new(&self.device, 32)?;
        let range = NdRange::new(32).local(32);
        k.launch(&q, range, args![&y])?;
        let strata_launch_s = Self::timed(3, || {
            let t = Instant::now();
            for _ in 0..count {
                k.enqueue(&q, range, args![&y], &[])?;
            }
            q.finish()?;
            Ok(t.elapsed().as_secs_f64() / count as f64)
        })?;
        let strata_blocking_s = Self::timed(count, || {
            let t = Instant::now();
            k.launch(&q, range, args![&y])?;
            Ok(t.elapsed().as_secs_f64())
        })?;
        let dev = cuda_device(&self.device)?;
        let generated = strata::codegen::cuda(k.valid_function())?;
        let extra = [format!(
            "-DSTRATA_MAX_GROUP={}",
            self.device.info().max_work_group_size
        )];
        let ptx = compile_ptx("launch_probe", &generated, dev.arch, &extra)?;
        bind(dev)?;
        let (probe_module, probe) = load_ptx(&ptx.text, &generated.entry)?;
        struct Unload(sys::CUmodule);
        impl Drop for Unload {
            fn drop(&mut self) {
                // SAFETY: the module is not used after this.
                let _ = unsafe { cu::module::unload(self.0) };
            }
        }
        let _unload = Unload(probe_module);
        let m = self.upload(&[0.0; 32])?;
        let (mut py, mut plen) = (m.0, 32u64);
        let launch = |py: &mut u64, plen: &mut u64| -> Result<()> {
            let mut args = [(py as *mut u64).cast(), (plen as *mut u64).cast()];
            // SAFETY: the probe takes a pointer and its `uint` length (the low 4 bytes of
            // `plen`); `m` outlives the launches.
            unsafe { cu::launch_kernel(probe, (1, 1, 1), (32, 1, 1), 0, self.stream, &mut args) }
                .map_err(|e| cu_error("cuLaunchKernel(launch_probe)", e))
        };
        let raw_launch_s = Self::timed(3, || {
            let t = Instant::now();
            for _ in 0..count {
                launch(&mut py, &mut plen)?;
            }
            self.sync()?;
            Ok(t.elapsed().as_secs_f64() / count as f64)
        })?;
        let raw_blocking_s = Self::timed(count, || {
            let t = Instant::now();
            launch(&mut py, &mut plen)?;
            self.sync()?;
            Ok(t.elapsed().as_secs_f64())
        })?;
        // What strata's queue adds to each command on the stream: two timing events.
        let events = [(); 2].map(|()| {
            cu::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
                .map_err(|e| cu_error("cuEventCreate", e))
        });
        let [e0, e1] = events;
        let (e0, e1) = (e0?, e1?);
        let raw_events_launch_s = Self::timed(3, || {
            let t = Instant::now();
            for _ in 0..count {
                // SAFETY: both events belong to the bound context; the stream is live.
                unsafe { cu::event::record(e0, self.stream) }
                    .map_err(|e| cu_error("cuEventRecord", e))?;
                launch(&mut py, &mut plen)?;
                // SAFETY: as above.
                unsafe { cu::event::record(e1, self.stream) }
                    .map_err(|e| cu_error("cuEventRecord", e))?;
            }
            self.sync()?;
            Ok(t.elapsed().as_secs_f64() / count as f64)
        });
        // SAFETY: created above; every use has completed (the stream was synchronized).
        unsafe {
            let _ = cu::event::destroy(e0);
            let _ = cu::event::destroy(e1);
        }
        Ok(LaunchCost {
            strata_launch_s,
            raw_launch_s,
            raw_events_launch_s: raw_events_launch_s?,
            strata_blocking_s,
            raw_blocking_s,
        })
    }
}
