//! Typed device memory: [`Buffer<T>`] (typed, sized, on one device) and [`LocalMem<T>`] (the
//! element count of a launch-sized local array, as a launch argument).
//!
//! Allocation takes anything that names a device (`impl AsRef<Device>`: a [`Device`], a
//! [`Queue`], a pattern's `Exec`) and charges the device's memory budget; constructors that
//! upload data take a [`Queue`] ([`Buffer::from_slice`]), which orders the upload.

use super::{Contents, Device, Memory, Queue};
use crate::builder::Element;
use crate::error::{Error, Result};
use std::marker::PhantomData;
use std::sync::Arc;

/// A typed buffer of `len` elements in a device's global memory. Cloning shares the memory.
pub struct Buffer<T> {
    pub(crate) mem: Arc<dyn Memory>,
    len: usize,
    pub(crate) device: Device,
    _t: PhantomData<T>,
}

impl<T> Clone for Buffer<T> {
    fn clone(&self) -> Self {
        Buffer {
            mem: self.mem.clone(),
            len: self.len,
            device: self.device.clone(),
            _t: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Buffer<{}>[{}] on {}",
            std::any::type_name::<T>(),
            self.len,
            self.device.info().spec()
        )
    }
}

impl<T: Element> Buffer<T> {
    /// A zeroed buffer of `len` elements on `device` (every element 0, on every backend;
    /// [`Buffer::uninit`] for one whose contents count as unwritten): anything that names a device, a
    /// [`Device`] or a [`Queue`] (its device), so `Buffer::new(&queue, n)` and
    /// `Buffer::new(&device, n)` both work. Fails with [`Error::OutOfMemory`] when the size
    /// exceeds the device's largest allocation, its memory, or its memory budget
    /// ([`Device::memory_budget`]: on host-memory devices, also what the host has left).
    ///
    /// Allocation takes anything that names a device; constructors that upload data
    /// ([`Buffer::from_slice`]) take a [`Queue`], which they need to copy.
    pub fn new(device: impl AsRef<Device>, len: usize) -> Result<Buffer<T>> {
        Buffer::allocate(device.as_ref(), len, Contents::Zeroed)
    }

    /// A buffer of `len` elements whose contents are unspecified until written: a kernel must
    /// not read an element before something (the host, a copy, a fill, a kernel) wrote it.
    /// `interp+checked` reports such a read ([`Error::UninitializedRead`]); the memory is in
    /// fact zeroed on every backend today, so the cost is that of [`Buffer::new`].
    pub fn uninit(device: impl AsRef<Device>, len: usize) -> Result<Buffer<T>> {
        Buffer::allocate(device.as_ref(), len, Contents::Uninit)
    }

    /// A buffer of `len` elements that the next command using it (a kernel that stores
    /// every element) writes in full before anything reads it, so its contents need not be
    /// zeroed: on the CPU backends, memory reused from a dropped buffer keeps its old bytes
    /// (no pass over it on the allocating thread); elsewhere as [`Buffer::new`]. The fields
    /// layer allocates its outputs so where the kernel is known to write every point.
    pub(crate) fn overwritten(device: impl AsRef<Device>, len: usize) -> Result<Buffer<T>> {
        Buffer::allocate(device.as_ref(), len, Contents::Overwritten)
    }

    fn allocate(device: &Device, len: usize, contents: Contents) -> Result<Buffer<T>> {
        let info = device.info();
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| Error::OutOfMemory {
                    device: info.spec(),
                    requested: u64::MAX,
                    reason: format!(
                        "{len} elements of {} bytes overflow the address space",
                        std::mem::size_of::<T>()
                    ),
                })?;
        if bytes as u64 > info.max_alloc_size {
            return Err(Error::OutOfMemory {
                device: info.spec(),
                requested: bytes as u64,
                reason: format!(
                    "the device's largest allocation is {} bytes",
                    info.max_alloc_size
                ),
            });
        }
        let mem = device.alloc_as(bytes, contents)?;
        Ok(Buffer {
            mem,
            len,
            device: device.clone(),
            _t: PhantomData,
        })
    }

    /// A buffer on the queue's device holding a copy of `data`, written through `queue`.
    pub fn from_slice(queue: &Queue, data: &[T]) -> Result<Buffer<T>> {
        let b = Buffer::new(queue, data.len())?;
        queue.write(&b, 0.., data)?;
        Ok(b)
    }

    /// Reads the whole buffer (shorthand for [`Queue::read`]).
    pub fn to_vec(&self, queue: &Queue) -> Result<Vec<T>> {
        queue.read(self)
    }
}

impl<T> Buffer<T> {
    /// The native handle of the buffer's memory: a `cl_mem` on OpenCL devices, a
    /// `CUdeviceptr` on CUDA devices, the host address and length on the CPU backend. The
    /// whole memory: a buffer is never a view of part of another.
    ///
    /// # Safety
    /// The handle is valid while this buffer, a clone of it, or a command using it lives;
    /// strata frees the memory after that (unless it came from [`Buffer::from_native`] with
    /// [`Ownership::Borrowed`](crate::Ownership::Borrowed)). Reading or writing through it
    /// while a strata command uses the memory is a data race: order it with the queue (finish
    /// or wait for the commands first; with a native queue handle of the same queue, enqueue
    /// after them). On the CPU backend the memory is read and written by kernels as atomic
    /// 64-bit words, so plain accesses must not overlap a running kernel.
    pub unsafe fn native(&self) -> crate::NativeMemory {
        self.mem.native()
    }

    /// A buffer of `len` elements in memory the application allocated through the backend's
    /// API: a `cl_mem` of the device's OpenCL context ([`Device::opencl_handles`]), or a
    /// `CUdeviceptr` in the device's primary context ([`Device::cuda_handles`]). No copy is
    /// made. The memory must hold `len` elements (checked: `CL_MEM_SIZE`, or the CUDA
    /// allocation's range from the pointer) and is not charged to the device's memory budget.
    /// The CPU backend takes no foreign memory. Errors: [`Error::Backend`] for a handle of
    /// another backend or context, [`Error::BufferRange`] for memory that is too small.
    ///
    /// # Safety
    /// `mem` must be a valid handle of the device's backend, its bytes laid out as `len`
    /// values of `T`, and, with [`Ownership::Borrowed`](crate::Ownership::Borrowed), kept
    /// alive by the application while the buffer, its clones and their commands live; with
    /// [`Ownership::Owned`](crate::Ownership::Owned) the application gives its reference to
    /// strata and must not free it. Nothing else may write it while strata commands use it.
    pub unsafe fn from_native(
        device: &Device,
        mem: crate::NativeMemory,
        len: usize,
        ownership: crate::Ownership,
    ) -> Result<Buffer<T>> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| Error::BufferRange {
                    op: "from_native",
                    detail: format!("{len} elements overflow the address space"),
                })?;
        // SAFETY: as this function's contract.
        let mem = unsafe { device.inner.backend.wrap_memory(mem, bytes, ownership) }?;
        Ok(Buffer::from_parts(mem, len, device.clone()))
    }

    pub(crate) fn from_parts(mem: Arc<dyn Memory>, len: usize, device: Device) -> Buffer<T> {
        Buffer {
            mem,
            len,
            device,
            _t: PhantomData,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` for a buffer of no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Whether two handles share the same memory.
    pub fn same_memory<U>(&self, o: &Buffer<U>) -> bool {
        Arc::ptr_eq(&self.mem, &o.mem)
    }
}

/// A launch argument giving the element count of a local array declared with
/// [`KernelDef::local_array_dyn`](crate::builder::KernelDef::local_array_dyn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalMem<T> {
    pub(crate) len: usize,
    _t: PhantomData<T>,
}

impl<T: crate::builder::Value> LocalMem<T> {
    /// `len` elements of local memory (checked at launch against the device's local memory).
    pub fn new(len: usize) -> Self {
        LocalMem {
            len,
            _t: PhantomData,
        }
    }
}
