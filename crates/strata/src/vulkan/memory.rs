//! Vulkan memory: one `VkBuffer` per allocation with its own `VkDeviceMemory`, mapped for the
//! life of the allocation where the memory type is host-visible and coherent. Sizes are
//! rounded up to a multiple of 4 bytes (at least 4): `vkCmdFillBuffer` and storage buffers
//! work in 4-byte words; [`Memory::size`] is the size asked for.

use super::{vk_error, Shared};
use crate::error::{Error, Result};
use crate::runtime::{Memory, NativeMemory};
use ash::vk;
use std::any::Any;
use std::sync::Arc;

/// A buffer of a Vulkan device.
pub(crate) struct VkMem {
    pub(crate) shared: Arc<Shared>,
    pub(crate) buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// The first byte, where the memory is mapped.
    ptr: Option<*mut u8>,
    bytes: usize,
    /// The size of the `VkBuffer` (`bytes` rounded up to 4, at least 4).
    capacity: usize,
}

// SAFETY: the handles are plain values Vulkan lets any thread use; the mapped pointer is only
// dereferenced by queue commands, which the runtime orders.
unsafe impl Send for VkMem {}
// SAFETY: as above.
unsafe impl Sync for VkMem {}

impl VkMem {
    /// A buffer of `bytes` bytes of the device's memory type (`staging`: false), or of its
    /// host-visible staging type (`staging`: true, always mapped); zeroed when `zero`.
    pub(crate) fn with_type(
        shared: &Arc<Shared>,
        bytes: usize,
        zero: bool,
        staging: bool,
    ) -> Result<VkMem> {
        let capacity = bytes.div_ceil(4).max(1) * 4;
        let oom = |call: &str, e: vk::Result| Error::OutOfMemory {
            device: shared.label.clone(),
            requested: bytes as u64,
            reason: format!("{call}: {e}"),
        };
        let d = &shared.device;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let info = vk::BufferCreateInfo::default()
            .size(capacity as u64)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: the device is valid and the create info lives across the call.
        let buffer =
            unsafe { d.create_buffer(&info, None) }.map_err(|e| oom("vkCreateBuffer", e))?;
        let mut mem = VkMem {
            shared: shared.clone(),
            buffer,
            memory: vk::DeviceMemory::null(),
            ptr: None,
            bytes,
            capacity,
        };
        debug_assert!(mem.capacity >= bytes);
        // SAFETY: the buffer was just created on this device.
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        let (ty, mapped) = if staging {
            (shared.staging_type, true)
        } else {
            (shared.memory_type, shared.mapped)
        };
        if req.memory_type_bits & (1 << ty) == 0 {
            return Err(Error::Backend {
                backend: "vulkan",
                message: format!(
                    "{}: buffers cannot use memory type {ty} (allowed: {:#b})",
                    shared.label, req.memory_type_bits
                ),
            });
        }
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(ty);
        // SAFETY: valid device and allocate info; `mem`'s drop frees what was made so far.
        mem.memory =
            unsafe { d.allocate_memory(&alloc, None) }.map_err(|e| oom("vkAllocateMemory", e))?;
        // SAFETY: buffer and memory are of this device, unbound, and the memory fits.
        unsafe { d.bind_buffer_memory(buffer, mem.memory, 0) }
            .map_err(|e| vk_error("vkBindBufferMemory", e))?;
        if mapped {
            // SAFETY: the memory is host-visible and not mapped yet.
            let p =
                unsafe { d.map_memory(mem.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
                    .map_err(|e| oom("vkMapMemory", e))?;
            mem.ptr = Some(p.cast());
        }
        if zero {
            match mem.ptr {
                // SAFETY: the mapping covers `capacity` bytes, and nothing else uses them yet.
                Some(p) => unsafe { std::ptr::write_bytes(p, 0, capacity) },
                None => super::queue::one_shot(shared, |cb| {
                    // SAFETY: the command buffer is recording; the buffer is of this device.
                    unsafe { d.cmd_fill_buffer(cb, buffer, 0, vk::WHOLE_SIZE, 0) }
                })
                .map_err(|e| Error::OutOfMemory {
                    device: shared.label.clone(),
                    requested: bytes as u64,
                    reason: format!("zeroing the buffer: {e}"),
                })?,
            }
        }
        Ok(mem)
    }

    /// A zeroed (`zero`) buffer of the device's memory.
    pub(crate) fn new(shared: &Arc<Shared>, bytes: usize, zero: bool) -> Result<VkMem> {
        Self::with_type(shared, bytes, zero, false)
    }

    /// The mapped bytes, where the memory is mapped.
    pub(crate) fn mapped(&self) -> Option<*mut u8> {
        self.ptr
    }
}

impl Drop for VkMem {
    fn drop(&mut self) {
        let d = &self.shared.device;
        // SAFETY: no command uses the buffer any more (commands hold their memory until they
        // have completed); the handles are this device's, or null.
        unsafe {
            if self.ptr.is_some() {
                d.unmap_memory(self.memory);
            }
            d.destroy_buffer(self.buffer, None);
            if self.memory != vk::DeviceMemory::null() {
                d.free_memory(self.memory, None);
            }
        }
    }
}

impl Memory for VkMem {
    fn size(&self) -> usize {
        self.bytes
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn native(&self) -> NativeMemory {
        use ash::vk::Handle;
        NativeMemory::Vulkan(self.buffer.as_raw())
    }
}

/// The Vulkan memory behind `m`, or a strata bug.
pub(crate) fn vk_mem(m: &Arc<dyn Memory>) -> Result<&VkMem> {
    m.as_any().downcast_ref::<VkMem>().ok_or(Error::Backend {
        backend: "vulkan",
        message: "strata bug: Vulkan command on memory of another backend".into(),
    })
}
