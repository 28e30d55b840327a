//! Vulkan queues: each strata queue is a worker (`runtime/worker.rs`) with its own command
//! pool, command buffer, fence, descriptor pool and timestamp query pool, submitting to the
//! device's one compute queue.
//!
//! Every command is one submission, waited for before the next command starts, so the
//! queue's order needs no semaphores; each command buffer begins with a barrier from all
//! earlier commands' writes (of any strata queue of the device) and ends with one that makes
//! its writes visible to the host. Writes and reads of mapped memory are plain copies on the
//! host (the previous commands have completed); of unmapped memory they go through a staging
//! buffer. Launches bind the kernel's buffers as storage buffers of descriptor set 0 and its
//! scalars as push constants (the writer's [`super::pipeline::Layout`]).

use super::memory::vk_mem;
use super::pipeline::{Arg, VkKernel};
use super::{vk_error, Shared, VkMem};
use crate::error::{Error, Result};
use crate::runtime::{check_range, ArgValue, Command, Memory, RectSide, WorkerQueue};
use ash::vk;
use std::sync::Arc;
use std::time::Duration;

/// Creates a strata queue of the device.
pub(crate) fn new_queue(shared: &Arc<Shared>) -> Result<WorkerQueue> {
    let mut worker = Worker::new(shared)?;
    use ash::vk::Handle;
    let native = shared.queue.lock().unwrap().as_raw();
    Ok(WorkerQueue::spawn("vulkan", move |cmd| worker.run(cmd))?
        .with_native(native as *mut std::ffi::c_void))
}

/// Records `record` into a command buffer of a pool made for it, submits it and waits: the
/// rare commands outside a queue (zeroing unmapped memory).
pub(crate) fn one_shot(shared: &Arc<Shared>, record: impl FnOnce(vk::CommandBuffer)) -> Result<()> {
    let mut w = Worker::new(shared)?;
    w.submit(|_, cb| {
        record(cb);
        Ok(())
    })
    .map(|_| ())
}

/// A queue's Vulkan objects, used by its worker thread (one command at a time).
struct Worker {
    shared: Arc<Shared>,
    pool: vk::CommandPool,
    cb: vk::CommandBuffer,
    fence: vk::Fence,
    /// Two timestamps per command, where the queue has them.
    queries: Option<vk::QueryPool>,
    /// The descriptor pool of launches, and how many storage buffers it holds.
    descriptors: Option<(vk::DescriptorPool, u32)>,
}

// SAFETY: the handles are plain values; the worker uses them from one thread at a time.
unsafe impl Send for Worker {}

impl Drop for Worker {
    fn drop(&mut self) {
        let d = &self.shared.device;
        // SAFETY: the worker's last submission was waited for; the objects are this device's.
        unsafe {
            if let Some((p, _)) = self.descriptors {
                d.destroy_descriptor_pool(p, None);
            }
            if let Some(q) = self.queries {
                d.destroy_query_pool(q, None);
            }
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}

fn fits(mem: &Arc<dyn Memory>, offset: usize, len: usize) -> Result<()> {
    check_range("vulkan", mem, offset, len)
}

/// The rows of a box: (offset on the device side, offset in the packed host side, length).
fn rows(at: &RectSide, region: [usize; 3]) -> Vec<(usize, usize, usize)> {
    let host = RectSide::packed(region);
    let mut v = Vec::with_capacity(region[1] * region[2]);
    for s in 0..region[2] {
        for r in 0..region[1] {
            v.push((at.row_offset(r, s), host.row_offset(r, s), region[0]));
        }
    }
    v
}

impl Worker {
    fn new(shared: &Arc<Shared>) -> Result<Worker> {
        let d = &shared.device;
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(shared.queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY (all calls): valid device, create infos living across the calls.
        let pool = unsafe { d.create_command_pool(&pool_info, None) }
            .map_err(|e| vk_error("vkCreateCommandPool", e))?;
        let mut w = Worker {
            shared: shared.clone(),
            pool,
            cb: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            queries: None,
            descriptors: None,
        };
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        w.cb = unsafe { d.allocate_command_buffers(&alloc) }
            .map_err(|e| vk_error("vkAllocateCommandBuffers", e))?[0];
        w.fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(|e| vk_error("vkCreateFence", e))?;
        if shared.timestamp_period.is_some() {
            let q = vk::QueryPoolCreateInfo::default()
                .query_type(vk::QueryType::TIMESTAMP)
                .query_count(2);
            w.queries = unsafe { d.create_query_pool(&q, None) }.ok();
        }
        Ok(w)
    }

    /// Records a command buffer (`record` between the barriers and timestamps), submits it,
    /// waits for it, and returns its device time where timestamps measured it.
    fn submit(
        &mut self,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer) -> Result<()>,
    ) -> Result<Option<Duration>> {
        let s = self.shared.clone();
        let d = &s.device;
        let cb = self.cb;
        let all = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
        let to_host = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ | vk::AccessFlags::HOST_WRITE);
        // SAFETY: the command buffer is this worker's and not in use (the last submission was
        // waited for); everything recorded refers to live objects of this device, which the
        // command holds until this function returns.
        unsafe {
            d.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                .map_err(|e| vk_error("vkResetCommandBuffer", e))?;
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            d.begin_command_buffer(cb, &begin)
                .map_err(|e| vk_error("vkBeginCommandBuffer", e))?;
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[all],
                &[],
                &[],
            );
            if let Some(q) = self.queries {
                d.cmd_reset_query_pool(cb, q, 0, 2);
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, q, 0);
            }
            let recorded = record(d, cb);
            if let Some(q) = self.queries {
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, q, 1);
            }
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[to_host],
                &[],
                &[],
            );
            d.end_command_buffer(cb)
                .map_err(|e| vk_error("vkEndCommandBuffer", e))?;
            recorded?;
            let cbs = [cb];
            let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
            {
                let queue = s.queue.lock().unwrap();
                d.queue_submit(*queue, &submit, self.fence)
                    .map_err(|e| vk_error("vkQueueSubmit", e))?;
            }
            let waited = d.wait_for_fences(&[self.fence], true, u64::MAX);
            let _ = d.reset_fences(&[self.fence]);
            waited.map_err(|e| Error::Backend {
                backend: "vulkan",
                message: format!("{}: the command failed while running: {e}", s.label),
            })?;
            let (Some(q), Some(period)) = (self.queries, s.timestamp_period) else {
                return Ok(None);
            };
            let mut t = [0u64; 2];
            if d.get_query_pool_results(q, 0, &mut t, vk::QueryResultFlags::TYPE_64)
                .is_ok()
                && t[1] >= t[0]
            {
                return Ok(Some(Duration::from_nanos(
                    ((t[1] - t[0]) as f64 * period) as u64,
                )));
            }
            Ok(None)
        }
    }

    /// Host bytes into `mem` at the device offsets of `regions` (device offset, offset in
    /// `data`, length).
    fn write(
        &mut self,
        mem: &Arc<dyn Memory>,
        data: &[u8],
        regions: &[(usize, usize, usize)],
    ) -> Result<Option<Duration>> {
        let m = vk_mem(mem)?;
        if let Some(p) = m.mapped() {
            for &(dev, host, len) in regions {
                // SAFETY: the runtime checked the ranges against the allocation; the earlier
                // commands of the queue have completed.
                unsafe { std::ptr::copy_nonoverlapping(data[host..].as_ptr(), p.add(dev), len) };
            }
            return Ok(None);
        }
        let staging = VkMem::with_type(&self.shared, data.len(), false, true)?;
        let sp = staging.mapped().expect("staging memory is mapped");
        // SAFETY: the staging mapping holds `data.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), sp, data.len()) };
        let copies: Vec<vk::BufferCopy> = regions
            .iter()
            .map(|&(dev, host, len)| vk::BufferCopy {
                src_offset: host as u64,
                dst_offset: dev as u64,
                size: len as u64,
            })
            .collect();
        let (src, dst) = (staging.buffer, m.buffer);
        // SAFETY: both buffers live across the submission and the regions fit them.
        self.submit(|d, cb| {
            unsafe { d.cmd_copy_buffer(cb, src, dst, &copies) };
            Ok(())
        })
    }

    /// The device bytes of `regions` (device offset, offset in `out`, length) into `out`.
    fn read(
        &mut self,
        mem: &Arc<dyn Memory>,
        out: &mut [u8],
        regions: &[(usize, usize, usize)],
    ) -> Result<Option<Duration>> {
        let m = vk_mem(mem)?;
        if let Some(p) = m.mapped() {
            for &(dev, host, len) in regions {
                // SAFETY: as in `write`.
                unsafe { std::ptr::copy_nonoverlapping(p.add(dev), out[host..].as_mut_ptr(), len) };
            }
            return Ok(None);
        }
        let staging = VkMem::with_type(&self.shared, out.len(), false, true)?;
        let copies: Vec<vk::BufferCopy> = regions
            .iter()
            .map(|&(dev, host, len)| vk::BufferCopy {
                src_offset: dev as u64,
                dst_offset: host as u64,
                size: len as u64,
            })
            .collect();
        let (src, dst) = (m.buffer, staging.buffer);
        // SAFETY: both buffers live across the submission and the regions fit them.
        let t = self.submit(|d, cb| {
            unsafe { d.cmd_copy_buffer(cb, src, dst, &copies) };
            Ok(())
        })?;
        let sp = staging.mapped().expect("staging memory is mapped");
        // SAFETY: the staging mapping holds `out.len()` bytes, written by the completed copy.
        unsafe { std::ptr::copy_nonoverlapping(sp, out.as_mut_ptr(), out.len()) };
        Ok(t)
    }

    /// A copy on the device of `regions` (source offset, destination offset, length).
    fn copy(
        &mut self,
        src: &Arc<dyn Memory>,
        dst: &Arc<dyn Memory>,
        regions: &[(usize, usize, usize)],
    ) -> Result<Option<Duration>> {
        let (s, t) = (vk_mem(src)?.buffer, vk_mem(dst)?.buffer);
        let copies: Vec<vk::BufferCopy> = regions
            .iter()
            .filter(|r| r.2 > 0)
            .map(|&(a, b, len)| vk::BufferCopy {
                src_offset: a as u64,
                dst_offset: b as u64,
                size: len as u64,
            })
            .collect();
        if copies.is_empty() {
            return Ok(None);
        }
        // SAFETY: both buffers live across the submission; the runtime checked the regions
        // and that they do not overlap.
        self.submit(|d, cb| {
            unsafe { d.cmd_copy_buffer(cb, s, t, &copies) };
            Ok(())
        })
    }

    /// Runs one command to completion; `Some(time)` when the device measured it.
    fn run(&mut self, cmd: Command) -> Result<Option<Duration>> {
        if let Some(e) = cmd.cancelled() {
            return Err(e);
        }
        cmd.check_rects("vulkan")?;
        match cmd {
            Command::Write { mem, offset, data } => {
                fits(&mem, offset, data.len())?;
                if data.is_empty() {
                    return Ok(None);
                }
                self.write(&mem, &data, &[(offset, 0, data.len())])
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
                // Straight into the reader's destination (`HostOut`: `len` bytes).
                self.read(&mem, out.lock().unwrap().bytes(), &[(offset, 0, len)])
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
                self.copy(&src, &dst, &[(src_offset, dst_offset, len)])
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
                let m = vk_mem(&mem)?;
                let word = matches!(pattern.len(), 1 | 2 | 4)
                    && offset.is_multiple_of(4)
                    && len.is_multiple_of(4);
                if word && m.mapped().is_none() {
                    let mut w = [0u8; 4];
                    for (i, b) in w.iter_mut().enumerate() {
                        *b = pattern[i % pattern.len()];
                    }
                    let data = u32::from_ne_bytes(w);
                    let buffer = m.buffer;
                    // SAFETY: the range fits the buffer and is 4-byte aligned.
                    return self.submit(|d, cb| {
                        unsafe { d.cmd_fill_buffer(cb, buffer, offset as u64, len as u64, data) };
                        Ok(())
                    });
                }
                // Any other pattern (or mapped memory): whole repetitions written.
                let data: Vec<u8> = pattern.iter().copied().cycle().take(len).collect();
                self.write(&mem, &data, &[(offset, 0, len)])
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
                self.write(&mem, &data, &rows(&at, region))
            }
            Command::ReadRect {
                mem,
                at,
                region,
                out,
            } => {
                let mut v = vec![0u8; region.iter().product()];
                let t = if v.is_empty() {
                    None
                } else {
                    self.read(&mem, &mut v, &rows(&at, region))?
                };
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
                let a = rows(&src_at, region);
                let b = rows(&dst_at, region);
                let regions: Vec<_> = a.iter().zip(&b).map(|(x, y)| (x.0, y.0, x.2)).collect();
                self.copy(&src, &dst, &regions)
            }
            Command::Launch {
                kernel,
                range,
                args,
                ..
            } => {
                let k = kernel
                    .as_any()
                    .downcast_ref::<VkKernel>()
                    .ok_or(Error::Backend {
                        backend: "vulkan",
                        message: "strata bug: Vulkan launch of a kernel compiled elsewhere".into(),
                    })?;
                if range.is_empty() {
                    return Ok(None);
                }
                let local = range.local_size().ok_or(Error::Backend {
                    backend: "vulkan",
                    message: "strata bug: launch with an unresolved local size".into(),
                })?;
                self.launch(k, range.groups(), local, &args)
            }
        }
    }

    /// A descriptor set of `n` storage buffers from the worker's pool (made larger when
    /// needed; reset before each launch).
    fn descriptor_set(
        &mut self,
        layout: vk::DescriptorSetLayout,
        n: u32,
    ) -> Result<vk::DescriptorSet> {
        let d = &self.shared.device;
        // SAFETY: the pool is this worker's; the sets of the last launch are no longer in use.
        unsafe {
            match self.descriptors {
                Some((p, cap)) if cap >= n => {
                    d.reset_descriptor_pool(p, vk::DescriptorPoolResetFlags::empty())
                        .map_err(|e| vk_error("vkResetDescriptorPool", e))?;
                }
                old => {
                    if let Some((p, _)) = old {
                        d.destroy_descriptor_pool(p, None);
                        self.descriptors = None;
                    }
                    let cap = n.max(16).next_power_of_two();
                    let sizes = [vk::DescriptorPoolSize {
                        ty: vk::DescriptorType::STORAGE_BUFFER,
                        descriptor_count: cap,
                    }];
                    let info = vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes);
                    let p = d
                        .create_descriptor_pool(&info, None)
                        .map_err(|e| vk_error("vkCreateDescriptorPool", e))?;
                    self.descriptors = Some((p, cap));
                }
            }
            let layouts = [layout];
            let info = vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(self.descriptors.unwrap().0)
                .set_layouts(&layouts);
            Ok(d.allocate_descriptor_sets(&info)
                .map_err(|e| vk_error("vkAllocateDescriptorSets", e))?[0])
        }
    }

    fn launch(
        &mut self,
        k: &VkKernel,
        groups: [usize; 3],
        local: [usize; 3],
        args: &[ArgValue],
    ) -> Result<Option<Duration>> {
        let layout = &k.layout;
        if args.len() != layout.args.len() {
            return Err(Error::Backend {
                backend: "vulkan",
                message: format!(
                    "strata bug: kernel `{}` takes {} arguments, the launch gave {}",
                    k.name,
                    layout.args.len(),
                    args.len()
                ),
            });
        }
        let items: usize = local.iter().product();
        let shared_bytes =
            layout.shared_bytes.0 as u64 + layout.shared_bytes.1 as u64 * (items as u64 + 1);
        if shared_bytes > self.shared.caps.max_shared_memory as u64 {
            return Err(Error::Unsupported {
                kernel: k.name.clone(),
                device: self.shared.label.clone(),
                reason: format!(
                    "work-groups of {items} work-items need {shared_bytes} bytes of shared \
                     memory; the device has {} (give a smaller local size)",
                    self.shared.caps.max_shared_memory
                ),
            });
        }
        // Specialization constants: the local size, then launch-sized local arrays.
        let mut spec: Vec<(u32, u32)> = layout
            .local_size_ids
            .iter()
            .zip(local)
            .map(|(&id, l)| (id, l as u32))
            .collect();
        let mut push = vec![0u8; layout.push_size as usize];
        let mut buffers: Vec<(u32, vk::Buffer)> = Vec::new();
        for (a, v) in layout.args.iter().zip(args) {
            match (a, v) {
                (Arg::Buffer { binding, len_at }, ArgValue::Buffer { mem, len }) => {
                    buffers.push((*binding, vk_mem(mem)?.buffer));
                    if let Some(at) = len_at {
                        let n = u32::try_from(*len).map_err(|_| Error::Backend {
                            backend: "vulkan",
                            message: format!("buffer of {len} elements exceeds 2^32 - 1"),
                        })?;
                        let at = *at as usize;
                        push[at..at + 4].copy_from_slice(&n.to_ne_bytes());
                    }
                }
                (Arg::Scalar { at, size }, ArgValue::Scalar(lit)) => {
                    let (at, size) = (*at as usize, *size as usize);
                    let bytes = lit.bits.to_le_bytes();
                    push[at..at + size].copy_from_slice(&bytes[..size]);
                }
                (Arg::LocalLen { spec_id }, ArgValue::LocalLen(n)) => spec.push((*spec_id, *n)),
                _ => {
                    return Err(Error::Backend {
                        backend: "vulkan",
                        message: format!(
                            "strata bug: kernel `{}`: an argument does not match its layout",
                            k.name
                        ),
                    })
                }
            }
        }
        if let Some(at) = layout.groups_at {
            let at = at as usize;
            for (i, g) in groups.iter().enumerate() {
                let g = *g as u32;
                push[at + 4 * i..at + 4 * i + 4].copy_from_slice(&g.to_ne_bytes());
            }
        }
        let pipeline = k.pipeline(&spec)?;
        // An argument block too large for push constants travels in a buffer of its own,
        // alive until the launch has completed (the end of this function).
        let args_mem = match layout.args_binding {
            Some(binding) => {
                let m = VkMem::with_type(&self.shared, push.len(), false, true)?;
                let p = m.mapped().expect("staging memory is mapped");
                // SAFETY: the mapping holds `push.len()` bytes; no command uses it yet.
                unsafe { std::ptr::copy_nonoverlapping(push.as_ptr(), p, push.len()) };
                buffers.push((binding, m.buffer));
                push.clear();
                Some(m)
            }
            None => None,
        };
        let set = if buffers.is_empty() {
            None
        } else {
            let n = buffers.iter().map(|b| b.0 + 1).max().unwrap_or(0);
            let set = self.descriptor_set(k.set_layout, n)?;
            let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
                .iter()
                .map(|&(_, b)| {
                    [vk::DescriptorBufferInfo {
                        buffer: b,
                        offset: 0,
                        range: vk::WHOLE_SIZE,
                    }]
                })
                .collect();
            let writes: Vec<vk::WriteDescriptorSet> = buffers
                .iter()
                .zip(&infos)
                .map(|(&(binding, _), info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(binding)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            // SAFETY: the set is not in use; the buffers are alive (the command holds them).
            unsafe { self.shared.device.update_descriptor_sets(&writes, &[]) };
            Some(set)
        };
        let pl = k.pipeline_layout;
        let max = self.shared.caps.max_group_count;
        let pieces = pieces(groups, max);
        if pieces.len() > 1 && layout.groups_at.is_none() && layout.reads_num_groups {
            // The kernel reads `NumWorkgroups`, which a split dispatch would get wrong.
            return Err(Error::Unsupported {
                kernel: k.name.clone(),
                device: self.shared.label.clone(),
                reason: format!(
                    "a grid of {groups:?} work-groups; the device dispatches at most {max:?} at \
                     once (give a larger local size)"
                ),
            });
        }
        let r = self.submit(|d, cb| {
            // SAFETY: pipeline, layout and set are this kernel's and live across the submission.
            unsafe {
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
                if let Some(set) = set {
                    d.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        pl,
                        0,
                        &[set],
                        &[],
                    );
                }
                if !push.is_empty() {
                    d.cmd_push_constants(cb, pl, vk::ShaderStageFlags::COMPUTE, 0, &push);
                }
                for (base, count) in &pieces {
                    let [bx, by, bz] = *base;
                    let [x, y, z] = *count;
                    d.cmd_dispatch_base(cb, bx, by, bz, x, y, z);
                }
            }
            Ok(())
        });
        drop(args_mem);
        r
    }
}

/// A grid of `groups` work-groups as dispatches of at most `max` groups per dimension: each
/// (base group, group count).
fn pieces(groups: [usize; 3], max: [u32; 3]) -> Vec<([u32; 3], [u32; 3])> {
    let split = |d: usize| -> Vec<(u32, u32)> {
        let (n, m) = (groups[d] as u64, max[d].max(1) as u64);
        (0..n.div_ceil(m))
            .map(|i| ((i * m) as u32, (n - i * m).min(m) as u32))
            .collect()
    };
    let mut v = Vec::new();
    for &(bz, z) in &split(2) {
        for &(by, y) in &split(1) {
            for &(bx, x) in &split(0) {
                v.push(([bx, by, bz], [x, y, z]));
            }
        }
    }
    v
}

#[cfg(test)]
mod piece_tests {
    #[test]
    fn large_grids_are_split() {
        let p = super::pieces([70000, 1, 1], [65535, 65535, 65535]);
        assert_eq!(
            p,
            vec![([0, 0, 0], [65535, 1, 1]), ([65535, 0, 0], [4465, 1, 1])]
        );
        assert_eq!(super::pieces([3, 2, 1], [65535; 3]).len(), 1);
    }
}
