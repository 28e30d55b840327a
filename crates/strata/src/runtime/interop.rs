//! Meeting other GPU code: the native handles behind strata's devices, queues and buffers, and
//! strata buffers and queues made from the application's own handles (OpenCL objects, CUDA
//! device pointers and streams). Vulkan devices give their handles (`VkDevice`, `VkBuffer`)
//! and take no foreign memory or queues yet.
//!
//! Handles are raw pointers and integers of the backend's C API (`cl_mem` is `*mut c_void`,
//! `CUdeviceptr` is `u64`), so that any binding (cl3, opencl3, cudarc, a hand-written FFI)
//! can take them.
//!
//! Each backend's memory gives its handle (`Memory::native`); the backend's
//! `DeviceBackend::wrap_memory` and `wrap_queue` take the application's and check them:
//! OpenCL checks `CL_MEM_SIZE`, the context, and a queue's device and in-order property, and
//! retains borrowed objects; CUDA checks a pointer's allocation range
//! (`cuMemGetAddressRange`) and frees only memory it was given to own; the CPU backend
//! refuses foreign memory and queues. Wrapped memory is not charged to the device's budget.

use std::ffi::c_void;

/// The native handle of a buffer's memory ([`crate::Buffer::native`],
/// [`crate::Buffer::from_native`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NativeMemory {
    /// Host memory of the CPU backend: its first byte and its length in bytes.
    Host {
        /// The first byte.
        ptr: *mut u8,
        /// Bytes.
        len: usize,
    },
    /// An OpenCL buffer (`cl_mem`).
    OpenCl(*mut c_void),
    /// A CUDA device pointer (`CUdeviceptr`).
    Cuda(u64),
    /// A Vulkan buffer (`VkBuffer`, as its 64-bit handle), bound to memory of strata's
    /// `VkDevice` ([`VulkanHandles`]); strata's buffers use it whole, from offset 0.
    Vulkan(u64),
}

/// Who frees memory made into a strata buffer by [`crate::Buffer::from_native`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// The application keeps it: strata never frees it (an OpenCL buffer is retained while
    /// strata uses it and released after, so the application's own reference stays valid; a
    /// CUDA allocation is left alone). The application must keep it alive while strata's
    /// buffer, its clones and the commands using them live.
    Borrowed,
    /// strata frees it when the buffer, its clones and the commands using them are done
    /// (`clReleaseMemObject`, `cuMemFree`): the application gives up its reference.
    Owned,
}

/// The native handles of an OpenCL device ([`crate::Device::opencl_handles`]). strata keeps
/// them (and its reference to the context) for the life of the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenClHandles {
    /// The platform (`cl_platform_id`).
    pub platform: *mut c_void,
    /// The device (`cl_device_id`).
    pub device: *mut c_void,
    /// The context strata created for the device (`cl_context`): memory and queues used with
    /// strata's buffers and kernels must belong to it.
    pub context: *mut c_void,
}

// SAFETY: the handles are process-wide values that OpenCL lets every thread use.
unsafe impl Send for OpenClHandles {}
// SAFETY: as above.
unsafe impl Sync for OpenClHandles {}

/// The native handles of a CUDA device, for code that calls the CUDA driver API beside strata
/// ([`Device::cuda_handles`](crate::Device::cuda_handles)): hand-written kernels, other CUDA
/// libraries, the baselines of `strata bench`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CudaHandles {
    /// The device's ordinal (`CUdevice`).
    pub device: i32,
    /// The device's primary context (`CUcontext`), the one strata uses. strata retains it for
    /// the life of the process: it stays valid, and must not be released or destroyed.
    /// Memory allocated and modules loaded in it can be used with strata's queues.
    pub context: *mut c_void,
    /// The compute capability as `10 * major + minor` (90 for an H100): the architecture
    /// strata compiles the device's kernels for.
    pub arch: u32,
}

// SAFETY: the handles are process-wide values the driver lets every thread use.
unsafe impl Send for CudaHandles {}
// SAFETY: as above.
unsafe impl Sync for CudaHandles {}

/// The native handles of a Vulkan device ([`Device::vulkan_handles`](crate::Device::vulkan_handles)),
/// as the integers and pointers of the Vulkan C API (dispatchable handles are pointers,
/// non-dispatchable ones 64-bit integers). strata keeps them alive for the life of the process;
/// they must not be destroyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct VulkanHandles {
    /// The instance strata created (`VkInstance`).
    pub instance: *mut c_void,
    /// The physical device (`VkPhysicalDevice`).
    pub physical_device: *mut c_void,
    /// The logical device strata created (`VkDevice`): buffers of strata's are its memory.
    pub device: *mut c_void,
    /// The compute queue strata submits to (`VkQueue`). Vulkan requires external
    /// synchronization of queue submissions: do not submit to it while strata may.
    pub queue: *mut c_void,
    /// The queue family of `queue`.
    pub queue_family: u32,
}

// SAFETY: the handles are process-wide values that Vulkan lets every thread use (with the
// external synchronization the API documents).
unsafe impl Send for VulkanHandles {}
// SAFETY: as above.
unsafe impl Sync for VulkanHandles {}
