//! OpenCL queues: one in-order OpenCL command queue (profiling enabled) per strata queue,
//! driven by a worker thread.
//!
//! The worker takes commands in submission order; for each it waits for the strata events of
//! its wait list (which may belong to any backend), enqueues the OpenCL command, waits for its
//! `cl_event`, and completes the strata event with the device's measured run time. The command,
//! and with it the host data a write or read uses, lives on the worker's stack until the
//! OpenCL command has completed.

use super::{cl_error, ClKernel, ClMem, OpenClDevice};
use crate::error::{Error, Result};
use crate::ir::ValidFunction;
use crate::ir::{ArrayLen, ParamId};
use crate::runtime::{
    check_range, ArgValue, Command, CompiledKernel, Memory, NdRange, RectSide, WorkerQueue,
};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::error_codes::{ClError, CL_INVALID_WORK_GROUP_SIZE};
use opencl3::event::Event as ClEvent;
use opencl3::types::{cl_event, cl_uint, CL_NON_BLOCKING};
use std::sync::Arc;
use std::time::Duration;

/// Creates the strata queue of an OpenCL device: a worker thread (shared with the other
/// backends) running commands on one OpenCL command queue.
pub(crate) fn new_queue(dev: &OpenClDevice) -> Result<WorkerQueue> {
    // SAFETY: the device is the one the context was created for.
    let queue = unsafe {
        CommandQueue::create(&dev.context, dev.id(), CL_QUEUE_PROFILING_ENABLE)
            .map_err(|e| cl_error("clCreateCommandQueue", e))?
    };
    spawn(dev, queue)
}

/// The worker of a strata queue on `queue`.
fn spawn(dev: &OpenClDevice, queue: CommandQueue) -> Result<WorkerQueue> {
    let native = queue.get();
    let worker = Worker {
        queue,
        _context: dev.context.clone(),
        label: dev.label.clone(),
    };
    Ok(WorkerQueue::spawn("opencl", move |cmd| worker.run(cmd))?.with_native(native.cast()))
}

/// A strata queue on the application's command queue `q`, which must be in-order, of this
/// device and of strata's context for it. strata retains it while it uses it.
///
/// # Safety
/// `q` must be a valid command queue.
pub(crate) unsafe fn wrap_queue(
    dev: &OpenClDevice,
    q: opencl3::types::cl_command_queue,
) -> Result<WorkerQueue> {
    use cl3::command_queue::{
        get_command_queue_info, retain_command_queue, CL_QUEUE_CONTEXT, CL_QUEUE_DEVICE,
        CL_QUEUE_PROPERTIES,
    };
    use cl3::info_type::InfoType;
    let info = |param, what| {
        get_command_queue_info(q, param)
            .map_err(|e| cl_error(what, opencl3::error_codes::ClError(e)))
    };
    let context = match info(CL_QUEUE_CONTEXT, "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)")? {
        InfoType::Ptr(p) => Some(p),
        _ => None,
    };
    dev.same_context("command queue", context)?;
    let device = match info(CL_QUEUE_DEVICE, "clGetCommandQueueInfo(CL_QUEUE_DEVICE)")? {
        InfoType::Ptr(p) => p,
        _ => 0,
    };
    if device != dev.id() as isize {
        return Err(Error::Backend {
            backend: "opencl",
            message: format!("the command queue is of another device than {}", dev.label),
        });
    }
    if let InfoType::Ulong(p) = info(
        CL_QUEUE_PROPERTIES,
        "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)",
    )? {
        if p & opencl3::command_queue::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0 {
            return Err(Error::Backend {
                backend: "opencl",
                message: "the command queue executes out of order; strata queues are in order"
                    .into(),
            });
        }
    }
    // SAFETY: `q` is valid (its info was just read); the reference is released with the queue.
    unsafe { retain_command_queue(q) }
        .map_err(|e| cl_error("clRetainCommandQueue", opencl3::error_codes::ClError(e)))?;
    spawn(dev, CommandQueue::new(q, 3))
}

struct Worker {
    queue: CommandQueue,
    /// Keeps the context alive as long as the queue.
    _context: Arc<opencl3::context::Context>,
    label: String,
}

fn cl_mem(m: &Arc<dyn Memory>) -> Result<&ClMem> {
    m.as_any().downcast_ref::<ClMem>().ok_or(Error::Backend {
        backend: "opencl",
        message: "strata bug: OpenCL command on memory of another backend".into(),
    })
}

fn fits(mem: &Arc<dyn Memory>, offset: usize, len: usize) -> Result<()> {
    check_range("opencl", mem, offset, len)
}

/// The pattern sizes `clEnqueueFillBuffer` accepts.
fn fill_pattern_ok(pattern: usize, offset: usize, len: usize) -> bool {
    pattern.is_power_of_two()
        && pattern <= 128
        && offset.is_multiple_of(pattern)
        && len.is_multiple_of(pattern)
}

impl Worker {
    /// Waits for OpenCL commands in order; returns their total device time, or an error naming
    /// the call and the OpenCL status.
    fn finish(&self, call: &str, events: &[cl_event]) -> Result<Option<Duration>> {
        let events: Vec<ClEvent> = events.iter().map(|&e| ClEvent::new(e)).collect();
        let mut total = Some(Duration::ZERO);
        for e in &events {
            let waited = e.wait();
            let status = e.command_execution_status().map(|s| s.0);
            match (waited, status) {
                (_, Ok(s)) if s < 0 => {
                    return Err(Error::Backend {
                        backend: "opencl",
                        message: format!(
                            "{call} on {} failed while running: {}",
                            self.label,
                            ClError(s)
                        ),
                    })
                }
                (Err(err), _) => {
                    return Err(Error::Backend {
                        backend: "opencl",
                        message: format!("{call} on {}: clWaitForEvents failed: {err}", self.label),
                    })
                }
                _ => {}
            }
            let time = match (e.profiling_command_start(), e.profiling_command_end()) {
                (Ok(s), Ok(t)) if t >= s => Some(Duration::from_nanos(t - s)),
                _ => None,
            };
            total = total.zip(time).map(|(a, b)| a + b);
        }
        Ok(total)
    }

    /// Runs one command to completion; `Some(time)` when the device measured it.
    fn run(&self, cmd: Command) -> Result<Option<Duration>> {
        if let Some(e) = cmd.cancelled() {
            return Err(e);
        }
        cmd.check_rects("opencl")?;
        let q = self.queue.get();
        let none = std::ptr::null::<cl_event>();
        match cmd {
            Command::Write { mem, offset, data } => {
                fits(&mem, offset, data.len())?;
                if data.is_empty() {
                    return Ok(None);
                }
                // SAFETY: the range fits the buffer (checked above); `data` lives until the
                // command has completed (`finish` waits for it before `data` is dropped).
                let e = unsafe {
                    cl3::command_queue::enqueue_write_buffer(
                        q,
                        cl_mem(&mem)?.handle(),
                        CL_NON_BLOCKING,
                        offset,
                        data.len(),
                        data.as_ptr().cast(),
                        0,
                        none,
                    )
                }
                .map_err(|e| cl_error("clEnqueueWriteBuffer", e))?;
                self.finish("clEnqueueWriteBuffer", &[e])
            }
            Command::Read {
                mem,
                offset,
                len,
                out,
            } => {
                fits(&mem, offset, len)?;
                if len == 0 {
                    return Ok(None);
                }
                // Straight into the reader's destination (`HostOut`: `len` bytes), held
                // locked until the command has completed.
                let mut dst = out.lock().unwrap();
                let v = dst.bytes();
                // SAFETY: the range fits the buffer; `v` has `len` bytes and is neither moved
                // nor dropped until the command has completed (`finish` waits for it).
                let e = unsafe {
                    cl3::command_queue::enqueue_read_buffer(
                        q,
                        cl_mem(&mem)?.handle(),
                        CL_NON_BLOCKING,
                        offset,
                        len,
                        v.as_mut_ptr().cast(),
                        0,
                        none,
                    )
                }
                .map_err(|e| cl_error("clEnqueueReadBuffer", e))?;
                self.finish("clEnqueueReadBuffer", &[e])
            }
            Command::Copy {
                src,
                src_offset,
                dst,
                dst_offset,
                len,
            } => {
                fits(&src, src_offset, len)?;
                fits(&dst, dst_offset, len)?;
                if len == 0 {
                    return Ok(None);
                }
                // SAFETY: both ranges fit their buffers; the queue checked that they do not
                // overlap when the buffers are the same.
                let e = unsafe {
                    cl3::command_queue::enqueue_copy_buffer(
                        q,
                        cl_mem(&src)?.handle(),
                        cl_mem(&dst)?.handle(),
                        src_offset,
                        dst_offset,
                        len,
                        0,
                        none,
                    )
                }
                .map_err(|e| cl_error("clEnqueueCopyBuffer", e))?;
                self.finish("clEnqueueCopyBuffer", &[e])
            }
            Command::Fill {
                mem,
                offset,
                len,
                pattern,
            } => {
                fits(&mem, offset, len)?;
                if len == 0 || pattern.is_empty() {
                    return Ok(None);
                }
                let handle = cl_mem(&mem)?.handle();
                if fill_pattern_ok(pattern.len(), offset, len) {
                    // SAFETY: the range fits the buffer, the pattern size is one OpenCL accepts
                    // and divides offset and size; the driver copies the pattern.
                    let e = unsafe {
                        cl3::command_queue::enqueue_fill_buffer(
                            q,
                            handle,
                            pattern.as_ptr().cast(),
                            pattern.len(),
                            offset,
                            len,
                            0,
                            none,
                        )
                    }
                    .map_err(|e| cl_error("clEnqueueFillBuffer", e))?;
                    return self.finish("clEnqueueFillBuffer", &[e]);
                }
                // A pattern OpenCL cannot fill with (e.g. a 3-vector of 12 bytes): write a
                // chunk of whole repetitions as many times as needed.
                let reps = ((1 << 20) / pattern.len()).max(1);
                let chunk: Vec<u8> = pattern
                    .iter()
                    .copied()
                    .cycle()
                    .take(reps * pattern.len())
                    .collect();
                let mut events = Vec::new();
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(chunk.len());
                    // SAFETY: the range fits the buffer; `chunk` lives until every write has
                    // completed (`finish` below waits for all of them).
                    let r = unsafe {
                        cl3::command_queue::enqueue_write_buffer(
                            q,
                            handle,
                            CL_NON_BLOCKING,
                            offset + done,
                            n,
                            chunk.as_ptr().cast(),
                            0,
                            none,
                        )
                    };
                    match r {
                        Ok(e) => events.push(e),
                        Err(err) => {
                            // Wait for what was enqueued before `chunk` is dropped.
                            let _ = self.finish("clEnqueueWriteBuffer", &events);
                            return Err(cl_error("clEnqueueWriteBuffer", err));
                        }
                    }
                    done += n;
                }
                self.finish("clEnqueueWriteBuffer", &events)
            }
            Command::WriteRect {
                mem,
                at,
                region,
                data,
            } => {
                if region.contains(&0) {
                    return Ok(None);
                }
                let host = RectSide::packed(region);
                // SAFETY: the box fits the buffer (checked above) and `data` holds the packed
                // box; it lives until the command has completed (`finish` waits for it).
                let e = unsafe {
                    cl3::command_queue::enqueue_write_buffer_rect(
                        q,
                        cl_mem(&mem)?.handle(),
                        CL_NON_BLOCKING,
                        at.origin.as_ptr(),
                        host.origin.as_ptr(),
                        region.as_ptr(),
                        at.pitch[0],
                        at.pitch[1],
                        host.pitch[0],
                        host.pitch[1],
                        data.as_ptr().cast(),
                        0,
                        none,
                    )
                }
                .map_err(|e| cl_error("clEnqueueWriteBufferRect", e))?;
                self.finish("clEnqueueWriteBufferRect", &[e])
            }
            Command::ReadRect {
                mem,
                at,
                region,
                out,
            } => {
                let mut v = vec![0u8; region.iter().product()];
                if v.is_empty() {
                    out.lock().unwrap().deliver(&v);
                    return Ok(None);
                }
                let host = RectSide::packed(region);
                // SAFETY: the box fits the buffer; `v` holds the packed box and is neither
                // moved nor dropped until the command has completed.
                let e = unsafe {
                    cl3::command_queue::enqueue_read_buffer_rect(
                        q,
                        cl_mem(&mem)?.handle(),
                        CL_NON_BLOCKING,
                        at.origin.as_ptr(),
                        host.origin.as_ptr(),
                        region.as_ptr(),
                        at.pitch[0],
                        at.pitch[1],
                        host.pitch[0],
                        host.pitch[1],
                        v.as_mut_ptr().cast(),
                        0,
                        none,
                    )
                }
                .map_err(|e| cl_error("clEnqueueReadBufferRect", e))?;
                let t = self.finish("clEnqueueReadBufferRect", &[e])?;
                out.lock().unwrap().deliver(&v);
                Ok(t)
            }
            Command::CopyRect {
                src,
                src_at,
                dst,
                dst_at,
                region,
            } => {
                if region.contains(&0) {
                    return Ok(None);
                }
                // SAFETY: both boxes fit their buffers; the runtime checked that they do not
                // overlap when the buffers are the same.
                let e = unsafe {
                    cl3::command_queue::enqueue_copy_buffer_rect(
                        q,
                        cl_mem(&src)?.handle(),
                        cl_mem(&dst)?.handle(),
                        src_at.origin.as_ptr(),
                        dst_at.origin.as_ptr(),
                        region.as_ptr(),
                        src_at.pitch[0],
                        src_at.pitch[1],
                        dst_at.pitch[0],
                        dst_at.pitch[1],
                        0,
                        none,
                    )
                }
                .map_err(|e| cl_error("clEnqueueCopyBufferRect", e))?;
                self.finish("clEnqueueCopyBufferRect", &[e])
            }
            Command::Launch {
                kernel,
                function,
                range,
                args,
                ..
            } => self.launch(&*kernel, &function, range, &args),
        }
    }

    fn launch(
        &self,
        kernel: &dyn CompiledKernel,
        function: &ValidFunction,
        range: NdRange,
        args: &[ArgValue],
    ) -> Result<Option<Duration>> {
        let k = kernel
            .as_any()
            .downcast_ref::<ClKernel>()
            .ok_or(Error::Backend {
                backend: "opencl",
                message: "strata bug: OpenCL launch of a kernel compiled elsewhere".into(),
            })?;
        if range.is_empty() {
            return Ok(None);
        }
        let f = function.function();
        let dims = range.dims() as usize;
        let global = range.global_size();
        let local = range.local_size().ok_or(Error::Backend {
            backend: "opencl",
            message: "strata bug: launch with an unresolved local size".into(),
        })?;
        let call = format!("clEnqueueNDRangeKernel(`{}`)", k.name);
        let event = {
            let guard = k.kernel.lock().unwrap();
            let cl_k = guard.get();
            let mut index: cl_uint = 0;
            let mut set = |size: usize, value: *const std::ffi::c_void| -> Result<()> {
                // SAFETY: `value` points to `size` readable bytes (or is null for a local
                // memory argument) and `index` counts the arguments of the kernel's signature,
                // which the code generator derives from the same parameter list.
                unsafe { cl3::kernel::set_kernel_arg(cl_k, index, size, value) }.map_err(|e| {
                    cl_error(
                        &format!("clSetKernelArg(`{}`, argument {index})", k.name),
                        e,
                    )
                })?;
                index += 1;
                Ok(())
            };
            for (p, arg) in args.iter().enumerate() {
                match arg {
                    ArgValue::Buffer { mem, len } => {
                        let handle = cl_mem(mem)?.handle();
                        set(std::mem::size_of_val(&handle), (&raw const handle).cast())?;
                        let n = cl_uint::try_from(*len).map_err(|_| Error::Backend {
                            backend: "opencl",
                            message: format!("buffer of {len} elements exceeds 2^32 - 1"),
                        })?;
                        set(std::mem::size_of_val(&n), (&raw const n).cast())?;
                    }
                    ArgValue::Scalar(lit) => {
                        // The literal's bits in the scalar's size; `bool` is one byte 0 or 1
                        // (the kernel declares it `uchar`).
                        let bytes = lit.bits.to_ne_bytes();
                        let size = lit.scalar.size();
                        let value = if cfg!(target_endian = "little") {
                            &bytes[..size]
                        } else {
                            &bytes[8 - size..]
                        };
                        set(size, value.as_ptr().cast())?;
                    }
                    ArgValue::LocalLen(n) => {
                        let elem = f
                            .locals
                            .iter()
                            .find(|l| l.len == ArrayLen::Param(ParamId::new(p)))
                            .map_or(1, |l| l.elem.size());
                        let bytes = (*n as usize * elem).max(1);
                        set(bytes, std::ptr::null())?;
                    }
                }
            }
            // SAFETY: every argument is set; the sizes are `dims` long arrays of the launch's
            // (resolved, non-zero) global and local sizes.
            unsafe {
                cl3::command_queue::enqueue_nd_range_kernel(
                    self.queue.get(),
                    cl_k,
                    dims as cl_uint,
                    std::ptr::null(),
                    global.as_ptr(),
                    local.as_ptr(),
                    0,
                    std::ptr::null(),
                )
            }
            .map_err(|e| {
                let mut err = cl_error(&call, e);
                if e == CL_INVALID_WORK_GROUP_SIZE {
                    if let (Error::Backend { message, .. }, Ok(max)) =
                        (&mut err, guard.get_work_group_size(k.device.id()))
                    {
                        message.push_str(&format!(
                            " (local size {:?}; this kernel allows work-groups of at most {max} \
                             work-items on {}; give a smaller local size)",
                            &local[..dims],
                            self.label
                        ));
                    }
                }
                err
            })?
        };
        self.finish(&call, &[event])
    }
}
