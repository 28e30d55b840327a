//! CUDA queues: one CUDA stream per strata queue, driven by a pipelined worker
//! ([`WorkerQueue::spawn_pipelined`]).
//!
//! The worker waits for the command's strata dependencies (of any backend), then *issues* the
//! command on the stream and returns at once; the completion thread waits for the command's
//! end and completes the strata event. So launches, copies and fills are asynchronous: the
//! worker issues the next command while the GPU runs the previous one. The memory and host
//! data a command uses are owned by its completion, so they live until the GPU is done with
//! them.
//!
//! **Events only where someone waits.** Issuing records no CUDA event: a launch costs the
//! caller one `cuLaunchKernel` (and no `cuEventRecord`). The completion thread, when it comes
//! to a command whose end no event has shown yet, records one event on the stream *then*
//! ([`Coverage`]): the stream being in order, that event ends after every command issued
//! before it was recorded, so one wait completes the whole run of commands issued meanwhile,
//! and the finishes of the others cost nothing. Commands issued one at a time with waits
//! between still get one event each (recorded by the completion thread, off the caller's
//! path); a burst of launches nobody waits for in between gets one event per batch the
//! completion thread takes. Events still complete in order and never before their command. A
//! queue made with profiling (`Queue::with_profiling`) records two timing events around every
//! command at issue, as before, to measure each one's device time.
//!
//! A read copies into host memory the completion hands over once the copy has finished. A
//! write hands the driver pageable host memory, which the driver stages before the call
//! returns. A fill is `cuMemsetD8/16/32Async` where the pattern allows, else a write of the
//! pattern repeated on the host.

use super::{cu_error, CtxRef, CuKernel, CuMem, CudaDevice};
use crate::error::{Error, Result};
use crate::ir::{ArrayLen, ParamId, ValidFunction};
use crate::runtime::{
    check_range, ArgValue, Command, CompiledKernel, Finish, Memory, NdRange, RectSide, WorkerQueue,
};
use cudarc::driver::{result as cu, sys};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Creates the strata queue of a CUDA device.
pub(crate) fn new_queue(dev: &CudaDevice, profiling: bool) -> Result<WorkerQueue> {
    let ctx = dev.cell.current()?;
    let stream = Stream(
        cu::stream::create(cu::stream::StreamKind::NonBlocking)
            .map_err(|e| cu_error("cuStreamCreate", e))?,
        true,
        ctx,
    );
    spawn(stream, profiling)
}

/// A strata queue on the application's stream, which strata never destroys. The stream must
/// belong to the device's primary context (the one in `Device::cuda_handles`).
pub(crate) fn wrap_stream(dev: &CudaDevice, stream: sys::CUstream) -> Result<WorkerQueue> {
    let ctx = dev.cell.current()?;
    spawn(Stream(stream, false, ctx), false)
}

fn spawn(stream: Stream, profiling: bool) -> Result<WorkerQueue> {
    let ctx = stream.2.clone();
    let native = stream.0;
    let worker = Worker {
        stream: Arc::new(stream),
        events: Arc::default(),
        coverage: Arc::default(),
        max_grid: [i32::MAX as usize, 65535, 65535],
        profiling,
    };
    Ok(
        WorkerQueue::spawn_pipelined("cuda", move || ctx.bind(), move |cmd| worker.issue(cmd))?
            .with_native(native.cast()),
    )
}

/// A stream, destroyed with the queue when strata created it (the flag), in its generation
/// of the device's context.
struct Stream(sys::CUstream, bool, CtxRef);
// SAFETY: streams may be used from any thread that binds their context, also from several
// at once (the driver's stream calls are thread-safe): the worker issues on it while the
// completion thread records events on it.
unsafe impl Send for Stream {}
// SAFETY: as for `Send`.
unsafe impl Sync for Stream {}

impl Drop for Stream {
    fn drop(&mut self) {
        // A reset of the context destroyed the streams of older generations.
        if self.1 && self.2.live() {
            // SAFETY: the stream was created by cuStreamCreate and is destroyed once; pending
            // work completes before the driver releases it.
            let _ = unsafe { cu::stream::destroy(self.0) };
        }
    }
}

/// A CUDA event, destroyed when dropped (unless a reset of its context destroyed it).
struct CuEvent(sys::CUevent, CtxRef);
// SAFETY: events may be used from any thread that binds their context.
unsafe impl Send for CuEvent {}

impl Drop for CuEvent {
    fn drop(&mut self) {
        if self.1.live() {
            // SAFETY: created by cuEventCreate, destroyed once.
            let _ = unsafe { cu::event::destroy(self.0) };
        }
    }
}

struct Worker {
    /// Shared with the finishes, which record their events on it.
    stream: Arc<Stream>,
    /// Events whose commands have completed, for reuse: creating two events per command would
    /// add two driver calls to every launch.
    events: Arc<Mutex<Vec<CuEvent>>>,
    /// Which issued commands an event has shown complete (unless profiling).
    coverage: Arc<Coverage>,
    max_grid: [usize; 3],
    /// Whether commands are timed by the device (a start and an end timing event each);
    /// otherwise each gets one end event without timing, which is cheaper to record and wait.
    profiling: bool,
}

fn mem(m: &Arc<dyn Memory>) -> Result<&CuMem> {
    m.as_any().downcast_ref::<CuMem>().ok_or(Error::Backend {
        backend: "cuda",
        message: "strata bug: CUDA command on memory of another backend".into(),
    })
}

fn fits(m: &Arc<dyn Memory>, offset: usize, len: usize) -> Result<sys::CUdeviceptr> {
    check_range("cuda", m, offset, len)?;
    Ok(mem(m)?.ptr()? + offset as u64)
}

/// One side of a `cuMemcpy3D`: host or device memory, and where the box lies in it.
enum Place {
    Host(*const u8),
    HostMut(*mut u8),
    Device(sys::CUdeviceptr),
}

/// Copies a box of `region` (bytes per row, rows, slices) between two places with
/// `cuMemcpy3DAsync` on `stream`; nothing for an empty box.
///
/// # Safety
/// Both boxes must lie inside their memory (checked by the caller with [`RectSide::check`]),
/// host memory must live until the copy has completed, and device boxes must not overlap.
unsafe fn memcpy_3d(
    stream: sys::CUstream,
    (src, src_at): (Place, RectSide),
    (dst, dst_at): (Place, RectSide),
    region: [usize; 3],
) -> Result<()> {
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
    if region.contains(&0) {
        return Ok(());
    }
    let null = std::ptr::null_mut();
    let (src_type, src_host, src_device) = match src {
        Place::Host(p) => (CU_MEMORYTYPE_HOST, p.cast(), 0),
        Place::HostMut(p) => (CU_MEMORYTYPE_HOST, p.cast_const().cast(), 0),
        Place::Device(d) => (CU_MEMORYTYPE_DEVICE, std::ptr::null(), d),
    };
    let (dst_type, dst_host, dst_device) = match dst {
        Place::HostMut(p) => (CU_MEMORYTYPE_HOST, p.cast(), 0),
        Place::Host(p) => (CU_MEMORYTYPE_HOST, p.cast_mut().cast(), 0),
        Place::Device(d) => (CU_MEMORYTYPE_DEVICE, null, d),
    };
    let copy = sys::CUDA_MEMCPY3D {
        srcXInBytes: src_at.origin[0],
        srcY: src_at.origin[1],
        srcZ: src_at.origin[2],
        srcLOD: 0,
        srcMemoryType: src_type,
        srcHost: src_host,
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        reserved0: null,
        srcPitch: src_at.pitch[0],
        // Rows per slice.
        srcHeight: src_at.pitch[1] / src_at.pitch[0].max(1),
        dstXInBytes: dst_at.origin[0],
        dstY: dst_at.origin[1],
        dstZ: dst_at.origin[2],
        dstLOD: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        reserved1: null,
        dstPitch: dst_at.pitch[0],
        dstHeight: dst_at.pitch[1] / dst_at.pitch[0].max(1),
        WidthInBytes: region[0],
        Height: region[1],
        Depth: region[2],
    };
    // SAFETY: as this function's contract; `copy` describes both boxes.
    unsafe { sys::cuMemcpy3DAsync_v2(&copy, stream) }
        .result()
        .map_err(|e| cu_error("cuMemcpy3DAsync", e))
}

/// Which of a queue's issued commands have completed as far as the events waited for show
/// (see the module docs). Commands are numbered as they are issued (after their driver call has
/// returned, so a command with a number is on the stream); an event recorded after reading the
/// latest number ends after every command up to that number.
#[derive(Default)]
struct Coverage {
    issued: AtomicU64,
    covered: AtomicU64,
}

impl Coverage {
    /// Numbers a command just issued on the stream (from 1).
    fn issue(&self) -> u64 {
        self.issued.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Whether command `seq` is known to have completed (an event recorded after it was
    /// waited for).
    fn is_covered(&self, seq: u64) -> bool {
        self.covered.load(Ordering::Acquire) >= seq
    }

    /// The number up to which an event recorded from now on ends after the commands: read it
    /// *before* recording.
    fn latest(&self) -> u64 {
        self.issued.load(Ordering::Acquire)
    }

    /// An event recorded after [`Coverage::latest`] gave `upto` has completed.
    fn completed(&self, upto: u64) {
        self.covered.fetch_max(upto, Ordering::AcqRel);
    }
}

/// An event of `pool` (or a new one, with timing when `timing`), recorded on `stream`.
fn record(pool: &Mutex<Vec<CuEvent>>, stream: &Stream, timing: bool) -> Result<CuEvent> {
    let reused = pool.lock().unwrap().pop();
    let e = match reused {
        Some(e) => e,
        None => CuEvent(
            cu::event::create(if timing {
                sys::CUevent_flags::CU_EVENT_DEFAULT
            } else {
                sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
            })
            .map_err(|e| cu_error("cuEventCreate", e))?,
            stream.2.clone(),
        ),
    };
    // SAFETY: the event and the stream belong to the bound context.
    unsafe { cu::event::record(e.0, stream.0) }.map_err(|e| cu_error("cuEventRecord", e))?;
    Ok(e)
}

impl Worker {
    fn record(&self) -> Result<CuEvent> {
        record(&self.events, &self.stream, self.profiling)
    }

    /// Issues `cmd` (between two timing events when profiling, else alone); the finish waits
    /// for the end event, or when not profiling for one it records then (see the module docs).
    fn issue(&self, cmd: Command) -> Result<Finish> {
        if let Some(e) = cmd.cancelled() {
            return Err(e);
        }
        if !self.stream.2.live() {
            return Err(self.stream.2.lost("the queue"));
        }
        cmd.check_rects("cuda")?;
        let start = if self.profiling {
            Some(self.record()?)
        } else {
            None
        };
        let call: &'static str;
        // What the command needs alive until it completes, and what to do after.
        let mut after: Option<Box<dyn FnOnce() + Send>> = None;
        // The kernel a launch runs, to name it when waiting reports a fault.
        let mut launched: Option<Arc<dyn CompiledKernel>> = None;
        let keep: Box<dyn Send> = match cmd {
            Command::Write { mem, offset, data } => {
                call = "cuMemcpyHtoDAsync";
                let dst = fits(&mem, offset, data.len())?;
                if !data.is_empty() {
                    // SAFETY: `dst` holds `data.len()` bytes (checked); pageable host memory is
                    // staged by the driver before the call returns.
                    unsafe { cu::memcpy_htod_async(dst, &data, self.stream.0) }
                        .map_err(|e| cu_error(call, e))?;
                }
                Box::new((mem, data))
            }
            Command::Read {
                mem,
                offset,
                len,
                out,
            } => {
                call = "cuMemcpyDtoHAsync";
                let src = fits(&mem, offset, len)?;
                let mut host = vec![0u8; len];
                if len > 0 {
                    // SAFETY: `src` holds `len` bytes (checked); `host` is `len` bytes and is
                    // moved into the finish, which runs after the copy has completed.
                    unsafe { cu::memcpy_dtoh_async(&mut host, src, self.stream.0) }
                        .map_err(|e| cu_error(call, e))?;
                }
                after = Some(Box::new(move || out.lock().unwrap().deliver(&host)));
                Box::new(mem)
            }
            Command::Copy {
                src,
                src_offset,
                dst,
                dst_offset,
                len,
            } => {
                call = "cuMemcpyDtoDAsync";
                let s = fits(&src, src_offset, len)?;
                let d = fits(&dst, dst_offset, len)?;
                if len > 0 {
                    // SAFETY: both ranges are inside their allocations (checked).
                    unsafe { cu::memcpy_dtod_async(d, s, len, self.stream.0) }
                        .map_err(|e| cu_error(call, e))?;
                }
                Box::new((src, dst))
            }
            Command::Fill {
                mem,
                offset,
                len,
                pattern,
            } => {
                call = "cuMemsetAsync";
                let dst = fits(&mem, offset, len)?;
                let host = self.fill(dst, len, &pattern)?;
                Box::new((mem, host))
            }
            Command::WriteRect {
                mem: m,
                at,
                region,
                data,
            } => {
                call = "cuMemcpy3DAsync";
                let host = (Place::Host(data.as_ptr()), RectSide::packed(region));
                let dev = (Place::Device(mem(&m)?.ptr()?), at);
                // SAFETY: the box fits the allocation (checked); `data` is moved into the
                // finish, which runs after the copy has completed.
                unsafe { memcpy_3d(self.stream.0, host, dev, region) }?;
                Box::new((m, data))
            }
            Command::ReadRect {
                mem: m,
                at,
                region,
                out,
            } => {
                call = "cuMemcpy3DAsync";
                let mut host = vec![0u8; region.iter().product()];
                let dev = (Place::Device(mem(&m)?.ptr()?), at);
                let to = (Place::HostMut(host.as_mut_ptr()), RectSide::packed(region));
                // SAFETY: the box fits the allocation (checked); `host` holds the packed box
                // and is moved (its heap memory stays put) into the finish, which runs after
                // the copy has completed.
                unsafe { memcpy_3d(self.stream.0, dev, to, region) }?;
                after = Some(Box::new(move || out.lock().unwrap().deliver(&host)));
                Box::new(m)
            }
            Command::CopyRect {
                src,
                src_at,
                dst,
                dst_at,
                region,
            } => {
                call = "cuMemcpy3DAsync";
                let from = (Place::Device(mem(&src)?.ptr()?), src_at);
                let to = (Place::Device(mem(&dst)?.ptr()?), dst_at);
                // SAFETY: both boxes fit their allocations (checked) and do not overlap
                // (checked by the runtime).
                unsafe { memcpy_3d(self.stream.0, from, to, region) }?;
                Box::new((src, dst))
            }
            Command::Launch {
                kernel,
                function,
                range,
                args,
                ..
            } => {
                call = "cuLaunchKernel";
                self.launch(&*kernel, &function, range, &args)?;
                launched = Some(kernel.clone());
                Box::new((kernel, args))
            }
        };
        let pool = self.events.clone();
        if !self.profiling {
            let seq = self.coverage.issue();
            let (coverage, stream) = (self.coverage.clone(), self.stream.clone());
            return Ok(Box::new(move || {
                if !coverage.is_covered(seq) {
                    let upto = coverage.latest();
                    let end = record(&pool, &stream, false)?;
                    // SAFETY: the event was recorded on this queue's stream.
                    unsafe { cu::event::synchronize(end.0) }
                        .map_err(|e| waited(call, &launched, e))?;
                    pool.lock().unwrap().push(end);
                    coverage.completed(upto);
                }
                drop(keep);
                if let Some(f) = after {
                    f();
                }
                Ok(None)
            }));
        }
        let end = self.record()?;
        Ok(Box::new(move || {
            // Whole values, not their raw-pointer fields, move into the closure.
            let (start, end) = (start, end);
            // SAFETY: the event was recorded on this queue's stream.
            unsafe { cu::event::synchronize(end.0) }.map_err(|e| waited(call, &launched, e))?;
            let measured = match &start {
                // SAFETY: both events were recorded with timing and have completed.
                Some(start) => Some(
                    unsafe { cu::event::elapsed(start.0, end.0) }
                        .map_err(|e| cu_error("cuEventElapsedTime", e))?,
                ),
                None => None,
            };
            pool.lock().unwrap().extend(start.into_iter().chain([end]));
            drop(keep);
            if let Some(f) = after {
                f();
            }
            Ok(measured.map(|ms| Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3)))
        }))
    }

    /// Fills `len` bytes at `dst` with `pattern` repeated: with a memset when the pattern is
    /// one byte, or 2 or 4 bytes at an aligned place; otherwise by writing the repeated
    /// pattern from the host (returned, to be kept alive until the copy completes).
    fn fill(&self, dst: sys::CUdeviceptr, len: usize, pattern: &[u8]) -> Result<Vec<u8>> {
        let s = self.stream.0;
        let p = pattern.len();
        if len == 0 || p == 0 {
            return Ok(Vec::new());
        }
        let aligned = |k: usize| p == k && dst.is_multiple_of(k as u64) && len.is_multiple_of(k);
        // SAFETY (all three): `dst` holds `len` bytes (checked by the caller) and is aligned
        // to the element size of the memset used.
        let r = if pattern.iter().all(|&b| b == pattern[0]) {
            unsafe { cu::memset_d8_async(dst, pattern[0], len, s) }
        } else if aligned(2) {
            let v = u16::from_ne_bytes([pattern[0], pattern[1]]);
            unsafe { sys::cuMemsetD16Async(dst, v, len / 2, s).result() }
        } else if aligned(4) {
            let v = u32::from_ne_bytes([pattern[0], pattern[1], pattern[2], pattern[3]]);
            unsafe { sys::cuMemsetD32Async(dst, v, len / 4, s).result() }
        } else {
            let host: Vec<u8> = pattern.iter().copied().cycle().take(len).collect();
            // SAFETY: `dst` holds `len` bytes; the driver stages pageable memory.
            unsafe { cu::memcpy_htod_async(dst, &host, s) }
                .map_err(|e| cu_error("cuMemcpyHtoDAsync", e))?;
            return Ok(host);
        };
        r.map_err(|e| cu_error("cuMemsetAsync", e))?;
        Ok(Vec::new())
    }

    fn launch(
        &self,
        kernel: &dyn CompiledKernel,
        function: &ValidFunction,
        range: NdRange,
        args: &[ArgValue],
    ) -> Result<()> {
        let k = kernel
            .as_any()
            .downcast_ref::<CuKernel>()
            .ok_or(Error::Backend {
                backend: "cuda",
                message: "strata bug: CUDA launch of a kernel compiled elsewhere".into(),
            })?;
        if !k.ctx.live() {
            return Err(k.ctx.lost(&format!("the module of `{}`", k.name)));
        }
        if range.is_empty() {
            return Ok(());
        }
        let f = function.function();
        let global = range.global_size();
        let local = range.local_size().ok_or(Error::Backend {
            backend: "cuda",
            message: "strata bug: launch with an unresolved local size".into(),
        })?;
        let mut grid = [1u32; 3];
        for d in 0..3 {
            let g = global[d] / local[d].max(1);
            if g > self.max_grid[d] {
                return Err(Error::InvalidWorkSize {
                    kernel: k.name.clone(),
                    reason: format!(
                        "{g} work-groups in dimension {d} exceed CUDA's limit of {}",
                        self.max_grid[d]
                    ),
                });
            }
            grid[d] = g as u32;
        }
        // One 8-byte slot per kernel argument, in the generated signature's order: a buffer
        // is its pointer and its `uint` length, a scalar its value, a launch-sized local array
        // its byte offset into the dynamic shared memory.
        let mut slots: Vec<u64> = Vec::with_capacity(2 * args.len());
        let mut shared: usize = 0;
        for (p, arg) in args.iter().enumerate() {
            match arg {
                ArgValue::Buffer { mem: m, len } => {
                    slots.push(mem(m)?.ptr()?);
                    let n = u32::try_from(*len).map_err(|_| Error::Backend {
                        backend: "cuda",
                        message: format!("buffer of {len} elements exceeds 2^32 - 1"),
                    })?;
                    slots.push(slot(u64::from(n), 4));
                }
                // A scalar of `size` bytes; `bool` is one byte 0 or 1, as the kernel declares it.
                ArgValue::Scalar(lit) => slots.push(slot(lit.bits, lit.scalar.size())),
                ArgValue::LocalLen(n) => {
                    let elem = f
                        .locals
                        .iter()
                        .find(|l| l.len == ArrayLen::Param(ParamId::new(p)))
                        .map_or(1, |l| l.elem.size());
                    shared = shared.next_multiple_of(16);
                    slots.push(slot(shared as u64, 4));
                    shared += *n as usize * elem;
                }
            }
        }
        let mut params: Vec<*mut std::ffi::c_void> =
            slots.iter_mut().map(|s| (s as *mut u64).cast()).collect();
        let shared = u32::try_from(shared).map_err(|_| Error::InvalidWorkSize {
            kernel: k.name.clone(),
            reason: format!("{shared} bytes of launch-sized local memory"),
        })?;
        // SAFETY: the function belongs to the bound context; `params` has one pointer per
        // parameter of the generated signature, each to 8 readable bytes whose first bytes
        // hold the value (see `slot`); the memory the buffers point to
        // stays alive until the launch completes (the finish owns it).
        unsafe {
            cu::launch_kernel(
                k.function,
                (grid[0], grid[1], grid[2]),
                (local[0] as u32, local[1] as u32, local[2] as u32),
                shared,
                self.stream.0,
                &mut params,
            )
        }
        .map_err(|e| {
            cu_error(
                &format!(
                    "cuLaunchKernel(`{}`, grid {grid:?}, block {:?}, {shared} bytes of dynamic shared memory)",
                    k.name,
                    &local
                ),
                e,
            )
        })?;
        Ok(())
    }
}

/// The error of a command whose end was waited for; a launch's names its kernel. (The driver
/// reports a device fault to whatever waits next in the context, so a fault of a kernel
/// running beside it is reported here too: the message says so.)
fn waited(call: &str, launched: &Option<Arc<dyn CompiledKernel>>, e: cu::DriverError) -> Error {
    match launched
        .as_ref()
        .and_then(|k| k.as_any().downcast_ref::<CuKernel>())
    {
        Some(k) => cu_error(
            &format!(
                "kernel `{}` ({call}, reported when waiting for it; a device fault is reported \
                 to the next wait, so it may be of a command running beside it)",
                k.name
            ),
            e,
        ),
        None => cu_error(&format!("{call} (reported when waiting for it)"), e),
    }
}

/// An argument slot: 8 bytes whose first `size` bytes in memory are `value` of that size (the
/// driver reads `size` bytes from the slot's address).
fn slot(value: u64, size: usize) -> u64 {
    if cfg!(target_endian = "big") {
        value << (64 - 8 * size as u32)
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::Coverage;

    /// The bookkeeping that lets one event complete many commands: what an event covers is
    /// what was issued before it was recorded, never more.
    #[test]
    fn coverage_of_events() {
        let c = Coverage::default();
        let (a, b) = (c.issue(), c.issue());
        assert_eq!((a, b), (1, 2));
        assert!(!c.is_covered(a) && !c.is_covered(b));
        // The completion thread comes to `a`: an event recorded now covers `a` and `b`.
        let upto = c.latest();
        let late = c.issue(); // issued after the event was recorded
        c.completed(upto);
        assert!(c.is_covered(a) && c.is_covered(b));
        assert!(
            !c.is_covered(late),
            "an event covers only what was issued before it"
        );
        // A finish on another thread completing an older event does not lower the mark.
        c.completed(1);
        assert!(c.is_covered(b));
        let upto = c.latest();
        c.completed(upto);
        assert!(c.is_covered(late));
    }
}
