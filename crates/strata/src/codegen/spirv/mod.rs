//! The SPIR-V writer: a validated kernel as a Vulkan compute shader module.
//!
//! [`write()`] lowers a [`ValidFunction`] to SPIR-V words for a [`SpirvTarget`] (what the
//! Vulkan device reports) and says, in a [`SpirvModule`], how a launch passes the kernel's
//! arguments ([`ArgLayout`]). The contract with the runtime that launches the module:
//!
//! - The entry point is `main` (GLCompute), memory model GLSL450, logical addressing.
//! - The work-group size is the `WorkgroupSize` built-in, a specialization-constant
//!   composite of three `u32`s with specialization ids [`SpirvModule::workgroup_size_spec_ids`]
//!   (0, 1, 2; default 1), which the runtime sets per launch. A launch's global size is a
//!   multiple of its work-group size (the runtime's rule for every backend), so the kernel's
//!   global size is the number of work-groups times `WorkgroupSize`; the number of
//!   work-groups, where the kernel needs it, is in the push constants
//!   ([`ArgLayout::num_groups_offset`]), never the `NumWorkgroups` built-in (so the runtime
//!   may split a launch into dispatches with a base).
//! - Every buffer parameter is a storage buffer in descriptor set 0 at the binding
//!   [`ArgSlot::Buffer`] names: a `Block` struct holding one runtime array of the buffer's
//!   scalar type (a buffer of vectors is indexed by component, as in the C writers; `bool` is
//!   one byte) or of its struct type (laid out at Rust's offsets, which std430 accepts: vector
//!   fields are arrays of their components). Its element count, when the kernel reads it, is
//!   a `u32` in the push constants at `len_offset`.
//! - Every scalar parameter is a member of the push-constant block at `offset`, in a slot of
//!   `size` bytes (4 or 8): 8-, 16-bit and `bool` scalars are passed zero-extended in a `u32`
//!   slot (`bool` as 0 or 1), 64-bit ones in an 8-byte slot at an 8-aligned offset.
//! - A launch-sized local array ([`ParamKind::LocalLen`](crate::ir::ParamKind::LocalLen))
//!   is a specialization constant (`u32` elements, default 1) with the id
//!   [`ArgSlot::LocalLen`] names (3 and up).
//! - Sub-groups: the IR's sub-groups are runs of [`SpirvTarget::subgroup_size`] consecutive
//!   work-items in local linear order; the runtime launches with that sub-group size and full
//!   sub-groups (`VK_EXT_subgroup_size_control`), which makes Vulkan's sub-groups the IR's.
//!
//! The rooms: `op` (the numbers of the instructions and enumerants used), `module` (the
//! binary encoding and the interning of types and constants), `lower` (the walk over the IR).

mod lower;
mod module;
mod op;

use crate::error::{Error, Result};
use crate::ir::ValidFunction;

/// What a Vulkan device offers the writer: the optional features a kernel may need. The
/// runtime fills every field from the device's features and properties;
/// [`SpirvTarget::vulkan_1_2_baseline`] is a fixed target for golden files and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpirvTarget {
    /// The SPIR-V version of the module, `(major, minor)`: 1.3 for Vulkan 1.1, 1.5 for 1.2,
    /// 1.6 for 1.3.
    pub spirv_version: (u8, u8),
    /// `shaderFloat64`.
    pub float64: bool,
    /// `shaderInt64`.
    pub int64: bool,
    /// `shaderInt16`.
    pub int16: bool,
    /// `shaderInt8`.
    pub int8: bool,
    /// `shaderFloat16`.
    pub float16: bool,
    /// `storageBuffer8BitAccess`.
    pub storage_buffer_8bit: bool,
    /// `storageBuffer16BitAccess`.
    pub storage_buffer_16bit: bool,
    /// The sub-group size the runtime launches with (at most 32: a ballot is a `u32`).
    pub subgroup_size: u32,
    /// Sub-group operations in compute shaders: basic.
    pub subgroup_basic: bool,
    /// ... vote (`any`, `all`).
    pub subgroup_vote: bool,
    /// ... arithmetic (reductions and scans).
    pub subgroup_arithmetic: bool,
    /// ... ballot.
    pub subgroup_ballot: bool,
    /// ... shuffle (every shuffle and the sub-group broadcast are written with it).
    pub subgroup_shuffle: bool,
    /// ... relative shuffles (not needed by the writer; reported for completeness).
    pub subgroup_shuffle_relative: bool,
    /// ... quad operations (not needed by the writer).
    pub subgroup_quad: bool,
    /// `shaderBufferFloat32AtomicAdd` (and `shaderSharedFloat32AtomicAdd`).
    pub float32_atomic_add: bool,
    /// `shaderBufferFloat32AtomicMinMax` (and shared).
    pub float32_atomic_min_max: bool,
    /// `shaderBufferFloat64AtomicAdd` (and shared).
    pub float64_atomic_add: bool,
    /// `shaderBufferFloat64AtomicMinMax` (and shared).
    pub float64_atomic_min_max: bool,
    /// `shaderBufferInt64Atomics` and `shaderSharedInt64Atomics`.
    pub int64_atomics: bool,
    /// `maxComputeSharedMemorySize`, bytes.
    pub max_shared_memory: u32,
    /// `maxPushConstantsSize`, bytes.
    pub max_push_constants: u32,
    /// Write every atomic with relaxed memory semantics (its scope kept; fences unchanged).
    /// For lavapipe only, whose atomics are sequentially consistent whatever they ask for, and
    /// which stops a work-group's other sub-groups when an atomic with acquire or release
    /// semantics runs in a loop (a compare-exchange loop of 64 work-items then landed 8 to 10
    /// increments; relaxed, all 64).
    pub relaxed_atomic_semantics: bool,
    /// `shaderSignedZeroInfNanPreserveFloat16/32/64` (float controls, Vulkan 1.2): the
    /// module asks for the `SignedZeroInfNanPreserve` execution mode for each float width it
    /// uses where the device offers it. Without it a driver may assume that no value is NaN
    /// or infinite: lavapipe then folds `x - x` and `0 * x` to 0.
    pub signed_zero_inf_nan_preserve: [bool; 3],
    /// `shaderDenormPreserveFloat16/32/64` (float controls, Vulkan 1.2): the module asks for
    /// the `DenormPreserve` execution mode for each float width it uses where the device
    /// offers it. Without it a driver may flush subnormals to zero (NVIDIA's `ldexp` of a
    /// subnormal result was `-0.0`, its `f64` to `f32` conversion rounded a subnormal wrong),
    /// and the IR's floats keep them.
    pub denorm_preserve: [bool; 3],
    /// Compute `f32` `/`, `sqrt`, `sin`, `cos` and `tan` in `f64` and round once, where the
    /// target has `f64`. For NVIDIA (set by the runtime from the vendor id), whose `f32`
    /// `OpFDiv` and `Sqrt` are 1 ulp off (Vulkan allows 2.5 ulp; the IR's are correctly
    /// rounded) and whose `Sin` is up to 229 ulp off (0 for `sin(1.2e-7)`). `f64` has more
    /// than twice `f32`'s precision plus two bits, so a correctly rounded `f64` quotient or
    /// root rounded again to `f32` is the correctly rounded `f32` one.
    pub f32_core_in_f64: bool,
    /// Follow every float `+ - * /` by the IEEE result in the cases where lavapipe's code
    /// generator takes shortcuts for constant zeros and equal operands (`x * 0.0` is 0 there,
    /// even for an infinite `x`; `x / 0.0` is 0; `x - x` is 0 for a NaN `x`). For lavapipe only
    /// (set by the runtime for llvmpipe). Also: `f32` `sin`, `cos` and `tan` reduced in `f64`
    /// first (lavapipe's lack a full argument reduction), and `copysign` without bit
    /// operations on its magnitude.
    pub llvmpipe_float_fixes: bool,
}

impl SpirvTarget {
    /// A Vulkan 1.2 device with every feature the writer can use (lavapipe's): SPIR-V 1.5,
    /// 8/16/64-bit types, `f16`, `f64`, sub-groups of 8 with every operation, float and
    /// 64-bit atomics, 32 KiB of shared memory, 128 bytes of push constants.
    pub fn vulkan_1_2_baseline() -> SpirvTarget {
        SpirvTarget {
            spirv_version: (1, 5),
            float64: true,
            int64: true,
            int16: true,
            int8: true,
            float16: true,
            storage_buffer_8bit: true,
            storage_buffer_16bit: true,
            subgroup_size: 8,
            subgroup_basic: true,
            subgroup_vote: true,
            subgroup_arithmetic: true,
            subgroup_ballot: true,
            subgroup_shuffle: true,
            subgroup_shuffle_relative: true,
            subgroup_quad: true,
            float32_atomic_add: true,
            float32_atomic_min_max: true,
            float64_atomic_add: false,
            float64_atomic_min_max: false,
            int64_atomics: true,
            max_shared_memory: 32768,
            max_push_constants: 128,
            relaxed_atomic_semantics: false,
            signed_zero_inf_nan_preserve: [true; 3],
            denorm_preserve: [false; 3],
            f32_core_in_f64: false,
            llvmpipe_float_fixes: false,
        }
    }

    /// The `spirv-val --target-env` of this target's SPIR-V version.
    pub fn target_env(&self) -> &'static str {
        match self.spirv_version {
            (1, 6..) => "vulkan1.3",
            (1, 4) | (1, 5) => "vulkan1.2",
            _ => "vulkan1.1",
        }
    }
}

/// Where a launch puts one kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgSlot {
    /// A storage buffer in descriptor set 0.
    Buffer {
        /// Its binding.
        binding: u32,
        /// The byte offset of its element count (`u32`) in the push constants, if the kernel
        /// reads the count.
        len_offset: Option<u32>,
    },
    /// A scalar in the push constants.
    Scalar {
        /// Byte offset.
        offset: u32,
        /// The slot's size: 4 (a `u32` holding every scalar of 32 bits or fewer, zero-
        /// extended) or 8.
        size: u32,
    },
    /// A launch-sized local array's length: a specialization constant (`u32` elements).
    LocalLen {
        /// Its specialization id.
        spec_id: u32,
    },
}

/// How a launch passes a kernel's arguments: one [`ArgSlot`] per parameter of
/// [`Function::params`](crate::ir::Function::params), in order (the user's parameters and
/// the hidden ones alike, as the launch's argument values come).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ArgLayout {
    /// One slot per parameter.
    pub params: Vec<ArgSlot>,
    /// The size of the push-constant block in bytes (0 when the kernel has none, or when
    /// the block is in [`ArgLayout::args_buffer`]).
    pub push_constant_size: u32,
    /// Where the argument block goes when it is larger than the device's push constants:
    /// `(binding, size in bytes)` of a read-only storage buffer in descriptor set 0 holding
    /// the same bytes at the same offsets ([`ArgSlot::Scalar`], `len_offset`,
    /// [`ArgLayout::num_groups_offset`]) that would have been the push constants. `None`:
    /// they are push constants.
    pub args_buffer: Option<(u32, u32)>,
    /// The number of storage-buffer bindings (0 to `bindings - 1`).
    pub bindings: u32,
    /// Where the launch's number of work-groups goes, if the kernel reads it (directly or
    /// through the global size or the linear group id): three `u32`s (x, y, z) from this
    /// byte offset of the push constants. The kernel never reads the `NumWorkgroups`
    /// built-in, so a launch may be split into dispatches with a base.
    pub num_groups_offset: Option<u32>,
}

/// A kernel as a SPIR-V module, with what the runtime needs to launch it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpirvModule {
    /// The module's words.
    pub words: Vec<u32>,
    /// The entry point's name (`main`).
    pub entry_point: String,
    /// Where the arguments go.
    pub layout: ArgLayout,
    /// The specialization ids of the work-group size in x, y, z.
    pub workgroup_size_spec_ids: [u32; 3],
    /// Bytes of fixed-size workgroup memory (local arrays of fixed length and the
    /// collectives' scratch, which grows with the work-group size: see
    /// [`SpirvModule::scratch_bytes_per_item`]).
    pub fixed_shared_bytes: u32,
    /// Bytes of workgroup scratch per work-item of the work-group (work-group collectives).
    pub scratch_bytes_per_item: u32,
}

impl SpirvModule {
    /// The module as bytes (little-endian words), as `vkCreateShaderModule` and `spirv-val`
    /// take it.
    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// The SPIR-V module of `vf` for `target`. A construct the target cannot run, or that the
/// writer does not lower yet, is [`Error::Unsupported`] naming it (device `SPIR-V`).
pub fn write(vf: &ValidFunction, target: &SpirvTarget) -> Result<SpirvModule> {
    lower::write(vf, target).map_err(|reason| Error::Unsupported {
        kernel: vf.function().name.clone(),
        device: "SPIR-V".into(),
        reason,
    })
}
