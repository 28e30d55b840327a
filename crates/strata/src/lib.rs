//! # strata
//!
//! Write GPU kernels once, in Rust, and run them on every device you have. Five backends run
//! the same kernels with the same results:
//!
//! - `cpu`: strata's own CPU backend, kernels compiled to native SIMD code by Cranelift and
//!   work-groups run on a thread pool (always present);
//! - `interp`: strata's reference interpreter, the semantics every other backend is tested
//!   against, which in checked mode also finds data races and uninitialized reads (always
//!   present);
//! - `opencl:N`: any OpenCL device, kernels generated as OpenCL C (cargo feature `opencl`);
//! - `cuda:N`: NVIDIA GPUs through the CUDA driver, kernels generated as CUDA C++ and compiled
//!   by NVRTC (cargo feature `cuda`);
//! - `vulkan:N`: any Vulkan 1.2 device (AMD, Intel, NVIDIA, Android, Apple through MoltenVK,
//!   Mesa's lavapipe on a CPU), kernels generated as SPIR-V (cargo feature `vulkan`).
//!
//! [`devices`] lists what this machine has, [`Device::from_spec`] picks one (`best`, `cpu`,
//! `opencl:0`, ...), and any of them runs in checked mode (`cpu+checked`: every memory access
//! bounds-checked, see [`Device::checked`]).
//!
//! ## A first kernel
//!
//! A kernel is a plain Rust function; [`#[kernel]`](macro@kernel) records it into strata's IR
//! and generates a typed launch:
//!
//! ```
//! use strata::prelude::*;
//!
//! #[kernel]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     let i = global_id(0);
//!     if i < x.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! # fn main() -> strata::Result<()> {
//! let device = Device::from_spec("best")?;
//! let queue = Queue::new(&device)?;
//! let x = Buffer::from_slice(&queue, &[1.0f32, 2.0, 3.0])?;
//! let y = Buffer::from_slice(&queue, &[10.0f32, 20.0, 30.0])?;
//! saxpy::build()?.launch(&queue, NdRange::new(3), 2.0, &x, &y)?;
//! assert_eq!(queue.read(&y)?, vec![12.0, 24.0, 36.0]);
//! # Ok(())
//! # }
//! ```
//!
//! The same kernel with the builder ([`Kernel::build`], what `#[kernel]` expands into: both
//! record the same IR), launched with untyped arguments in the same order
//! ([`Kernel::launch`]`(&queue, range, args)`):
//!
//! ```
//! use strata::prelude::*;
//!
//! # fn main() -> strata::Result<()> {
//! let queue = Queue::new(&Device::from_spec("cpu")?)?;
//! let saxpy = Kernel::build("saxpy", |k| {
//!     let a = k.scalar::<f32>("a");
//!     let x = k.read::<f32>("x");
//!     let y = k.read_write::<f32>("y");
//!     let i = global_id(0);
//!     if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
//! })?;
//! let x = Buffer::from_slice(&queue, &[1.0f32, 2.0, 3.0])?;
//! let y = Buffer::from_slice(&queue, &[10.0f32, 20.0, 30.0])?;
//! saxpy.launch(&queue, NdRange::new(3), args![2.0f32, &x, &y])?;
//! assert_eq!(queue.read(&y)?, vec![12.0, 24.0, 36.0]);
//! # Ok(())
//! # }
//! ```
//!
//! The rules of `#[kernel]` (parameters, host and device values, what is generated) are on
//! [its page](macro@kernel).
//!
//! Every blocking operation has an `enqueue` form that returns at once with a handle to wait
//! on ([`Event`], [`Run`], [`PendingRead`], [`patterns::AsyncVec`]: all [`Wait`]) and takes a
//! wait list last; sub-ranges of buffers are Rust ranges (`queue.read_range(&y, 1..)`). Each
//! handle is also a [`Future`](std::future::Future), woken by the completion of its command,
//! so async code `.await`s it under any executor. A kernel compiles for a device at its first
//! launch there, or before it with [`Kernel::compile_on`]. Errors ([`Error`]) print their
//! message also in their `Debug` form, so `fn main() -> strata::Result<()>` reports them
//! readably.
//!
//! ## Layers
//!
//! Bottom up; each layer uses only the ones below it:
//!
//! - [`ir`]: the typed kernel IR (an expression arena and a statement tree), its validator,
//!   its passes, the evaluator shared by constant folding and the CPU backends, and the launch
//!   ABI ([`ir::abi`]: the hidden parameters a launch fills in).
//! - [`codegen`]: one C-family writer for OpenCL C and CUDA C++, the differences between them
//!   data ([`codegen::Dialect`]).
//! - [`builder`] (kernels as Rust closures) and the `#[kernel]` attribute (kernels as Rust
//!   functions), which record IR.
//! - The runtime: [`Device`], [`Queue`], [`Buffer`], [`Kernel`], [`Event`], over the backends,
//!   which it knows only through one trait and a registry with one entry per backend;
//!   [`Settings`] say what a device's compilations print ([`settings`], which also lists every
//!   environment variable strata reads).
//! - Libraries on the builder and the runtime: [`patterns`] (map, reduce, scan, sort, ... with
//!   tuning records), [`blas`], [`fields`] (tensor fields with operator fusion), [`random`]
//!   (counter-based random numbers), and [`multi`] (several devices, and MPI ranks).
//!
//! Each layer above the runtime has its own error type, which converts into [`Error`]. The
//! tools behind the `strata` command (the conformance suite, the differential tests, the
//! benchmarks) live in the `strata-cli` crate.
//!
//! ## Cargo features
//!
//! - `opencl` (default): the OpenCL backend, through the system's OpenCL library, loaded at
//!   run time.
//! - `cuda` (default): the CUDA backend (the driver API and NVRTC, both loaded at run time) and
//!   `strata::cuda`'s compiler entry points.
//! - `vulkan` (default): the Vulkan backend, through the system's Vulkan loader, opened at run
//!   time (`ash`'s `loaded` feature): nothing is needed to build.
//! - `mpi` (off by default): `multi::mpi`, strata buffers over MPI through the `mpi` crate
//!   (needs an MPI library and `libclang` to build: `apt-get install libopenmpi-dev
//!   libclang-dev`).
//!
//! Without `opencl` and `cuda`, strata has the two CPU backends alone
//! (`cargo build --no-default-features`); the code generators ([`codegen`]) are always there,
//! and a spec naming a backend that was left out fails with [`Error::DeviceNotFound`] saying
//! which feature to turn on.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __macro_support;
pub mod blas;
pub mod builder;
pub mod codegen;
mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(any(feature = "cuda", feature = "vulkan"))]
mod disk_cache;
pub mod error;
pub mod fields;
#[cfg(any(feature = "ndarray", feature = "image"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ndarray", feature = "image"))))]
pub mod host_interop;
pub mod ir;
pub mod multi;
#[cfg(feature = "opencl")]
mod opencl;
pub mod patterns;
pub mod random;
mod registry;
mod runtime;
pub mod settings;
#[cfg(feature = "vulkan")]
mod vulkan;

pub use builder::KernelDef;
pub use error::{Coords, Error, LayerError, RaceAccess, Result, WorkItem};
/// IEEE half precision, the Rust type of the kernel type `f16` (from the `half` crate).
pub use half::f16;
pub use registry::{device_problems, devices, unavailable_backends};
pub use runtime::{
    capture_kernels, pitch_elements, BackendKind, Buffer, Buffer2, Buffer3, CudaHandles, Device,
    DeviceInfo, Dims, Event, Gathered, Kernel, KernelArg, LocalMem, NativeMemory, NdRange,
    OpenClHandles, Ownership, PendingRead, PitchedBuffer, Profile, Queue, Run, VulkanHandles, Wait,
    KERNEL_CACHE_CAPACITY,
};
pub use settings::Settings;

// The rules of `#[kernel]`, with examples (docs/kernel.md, doc-tested here, where they can use
// strata).
#[doc = include_str!("../docs/kernel.md")]
pub use strata_macros::kernel;

/// `#[derive(Element)]`: a `#[repr(C)]` struct as a buffer element; see
/// [`builder::Element`] and the README's "Structs" section.
pub use strata_macros::Element;

/// The `bytemuck` crate, whose `Pod` and `Zeroable` `#[derive(Element)]` implements.
pub use bytemuck;

/// The README's code blocks, compiled and run as doc tests so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// Everything a kernel author needs, in one import.
pub mod prelude {
    pub use crate::args;
    pub use crate::builder::{
        barrier, barrier_global, barrier_local, break_, continue_, current_loop, fence, for_range,
        for_step, global_id, global_id2, global_id3, global_size, group_all, group_any,
        group_broadcast, group_id, group_linear_id, group_reduce_add, group_reduce_max,
        group_reduce_min, group_reduce_with, group_scan_exclusive_add, group_scan_exclusive_max,
        group_scan_exclusive_min, group_scan_inclusive_add, group_scan_inclusive_max,
        group_scan_inclusive_min, if_, in_bounds, lit, local_id, local_linear_id, local_size,
        loop_, max_sub_group_size, mem_fence, num_groups, num_sub_groups, private_array, return_,
        select, select_each, splat, sub_group_all, sub_group_any, sub_group_ballot,
        sub_group_broadcast, sub_group_id, sub_group_local_id, sub_group_reduce_add,
        sub_group_reduce_max, sub_group_reduce_min, sub_group_scan_exclusive_add,
        sub_group_scan_exclusive_max, sub_group_scan_exclusive_min, sub_group_scan_inclusive_add,
        sub_group_scan_inclusive_max, sub_group_scan_inclusive_min, sub_group_shuffle,
        sub_group_shuffle_down, sub_group_shuffle_up, sub_group_shuffle_xor, sub_group_size, var,
        var_named, vec2, vec3, vec4, while_, BufferParam, BufferParam2, BufferParam3, Expr,
        KernelDef, LocalArray, LoopLabel, MemOrder, MemScope, Ordered, PrivateArray, Rounding,
        Stub, Var,
    };
    pub use crate::ir::Access;
    pub use crate::{
        kernel, Buffer, Buffer2, Buffer3, Device, Event, Kernel, LocalMem, NdRange, Queue, Wait,
    };
}
