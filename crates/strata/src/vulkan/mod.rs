//! The Vulkan backend: every Vulkan 1.2 device with a compute queue, kernels written as SPIR-V
//! by [`crate::codegen::spirv`], through the `ash` crate.
//!
//! The Vulkan loader is opened at run time (`ash`'s `loaded` feature), so strata builds and
//! runs without Vulkan; with no loader, no instance or no device, Vulkan devices are simply
//! not listed and [`discover`] says why (shown by `strata devices --why`). Devices are numbered
//! `vulkan:0`, `vulkan:1`, ... in the loader's order; a device older than Vulkan 1.2 or
//! without a compute queue is reported as a problem and left out.
//!
//! **Devices.** Each device gets its own `VkDevice` with every feature it supports that
//! kernels may use turned on (f64, i64, i16, i8, f16, 8/16-bit storage, 64-bit and float
//! atomics, the Vulkan memory model, sub-group size control, `robustBufferAccess`: an access
//! out of a buffer's bounds then cannot touch other memory, which matters on lavapipe, whose
//! buffers are the host's memory), and one queue of the first family with compute. Queue
//! submissions are serialized by a lock (Vulkan requires it); strata queues wait for their
//! own fences without it, so several strata queues run at once. What the device supports is
//! [`Caps`], shown in `strata devices` and given to the SPIR-V writer as its target.
//!
//! **Memory** (`memory.rs`) is one `VkBuffer` per allocation, bound to its own memory of the
//! first device-local memory type: where that type is also host-visible and host-coherent
//! (lavapipe, integrated GPUs, resizable-BAR GPUs), it stays mapped and the host reads and
//! writes it directly; else reads and writes go through a host-visible staging buffer and a
//! copy on the device.
//!
//! **Queues** (`queue.rs`) run on the shared worker queue: one command at a time, each its
//! own command buffer submitted with a fence and waited for, timed by timestamp queries where
//! the queue family has them; a launch cancelled before it is issued does not run, a failure
//! fails the later commands until it is observed (the rules of `runtime/worker.rs`).
//!
//! **Kernels** (`pipeline.rs`): the SPIR-V module of a kernel becomes a compute pipeline per
//! work-group size (a specialization constant), created through one `VkPipelineCache` per
//! device that is kept on disk beside strata's other caches.

mod memory;
mod pipeline;
mod queue;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::ir::ValidFunction;
use crate::runtime::{
    BackendEntry, BackendKind, CompiledKernel, DeviceBackend, DeviceInfo, Devices, Found, Memory,
    QueueBackend, VulkanHandles,
};
use ash::vk;
use std::ffi::CStr;
use std::sync::{Arc, Mutex};

pub(crate) use memory::VkMem;

/// The local size automatic work division aims for (as OpenCL's): capped by the device.
const PREFERRED_GROUP_SIZE: usize = 256;

/// The loop iterations Mesa's llvmpipe runs per sub-group in all before it ends every loop
/// early (`LP_MAX_TGSI_LOOP_ITERATIONS` in Mesa's gallivm; measured on Mesa 22.3: a loop of
/// 70,000 iterations runs 65,535): see [`DeviceInfo::loop_iteration_limit`].
const LLVMPIPE_LOOP_LIMIT: u64 = 65_535;

/// A failed Vulkan call as strata's error: the call and Vulkan's result code.
pub(crate) fn vk_error(call: &str, e: vk::Result) -> Error {
    Error::Backend {
        backend: "vulkan",
        message: format!("{call} failed: {e}"),
    }
}

/// What a Vulkan device supports that kernels may use: the SPIR-V writer's target is made from
/// it, and `strata devices` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Caps {
    /// The device's Vulkan version (`vk::make_api_version`).
    pub api_version: u32,
    /// The sub-group size.
    pub subgroup_size: u32,
    /// The smallest and largest sub-group sizes a pipeline may ask for (sub-group size
    /// control), equal to `subgroup_size` without it.
    pub subgroup_size_range: (u32, u32),
    /// Whether a compute pipeline may ask for a sub-group size in `subgroup_size_range`
    /// (`subgroupSizeControl` with compute among `requiredSubgroupSizeStages`).
    pub subgroup_size_control: bool,
    /// Whether a compute pipeline may ask for full sub-groups (`computeFullSubgroups`).
    pub full_subgroups: bool,
    /// `VkSubgroupFeatureFlags` of compute shaders (basic, vote, arithmetic, ballot, shuffle,
    /// shuffle relative, clustered, quad), as bits.
    pub subgroup_ops: u32,
    pub float64: bool,
    pub int64: bool,
    pub int16: bool,
    pub int8: bool,
    pub float16: bool,
    pub storage_8bit: bool,
    pub storage_16bit: bool,
    pub buffer_int64_atomics: bool,
    pub shared_int64_atomics: bool,
    pub buffer_float32_atomic_add: bool,
    pub shared_float32_atomic_add: bool,
    pub buffer_float64_atomic_add: bool,
    pub buffer_float32_atomic_min_max: bool,
    pub buffer_float64_atomic_min_max: bool,
    pub shared_float64_atomic_add: bool,
    pub shared_float64_atomic_min_max: bool,
    pub shared_float32_atomic_min_max: bool,
    pub vulkan_memory_model: bool,
    pub robust_buffer_access: bool,
    /// Shared memory per work-group, in bytes.
    pub max_shared_memory: u32,
    /// Push-constant bytes.
    pub max_push_constants: u32,
    /// Storage buffers one pipeline may bind.
    pub max_storage_buffers: u32,
    /// The most work-groups of one dispatch, per dimension (larger launches are split).
    pub max_group_count: [u32; 3],
    /// Whether the device is lavapipe (Mesa's CPU driver), whose atomics the writer writes
    /// relaxed ([`SpirvTarget::relaxed_atomic_semantics`](crate::codegen::spirv::SpirvTarget)).
    pub llvmpipe: bool,
    /// `shaderSignedZeroInfNanPreserveFloat16/32/64` (float controls).
    pub signed_zero_inf_nan_preserve: [bool; 3],
    /// `shaderDenormPreserveFloat16/32/64` (float controls).
    pub denorm_preserve: [bool; 3],
    /// NVIDIA's driver (vendor id 0x10de): its `f32` division, square root and sine are
    /// computed in `f64` ([`crate::codegen::spirv::SpirvTarget::f32_core_in_f64`]).
    pub nvidia: bool,
}

impl Caps {
    /// The sub-group size kernels are launched with (the IR's sub-groups, at most 32): the
    /// device's, or, where it is larger, the size in the range sub-group size control allows
    /// that is nearest 32 from below.
    pub(crate) fn launch_subgroup_size(&self) -> u32 {
        if self.subgroup_size <= 32 || !self.subgroup_size_control {
            return self.subgroup_size.min(32);
        }
        let (lo, hi) = self.subgroup_size_range;
        if lo <= 32 {
            hi.min(32)
        } else {
            self.subgroup_size.min(32)
        }
    }

    /// The sub-group operations as names, for `strata devices`.
    fn subgroup_op_names(&self) -> String {
        let names = [
            (vk::SubgroupFeatureFlags::BASIC, "basic"),
            (vk::SubgroupFeatureFlags::VOTE, "vote"),
            (vk::SubgroupFeatureFlags::ARITHMETIC, "arithmetic"),
            (vk::SubgroupFeatureFlags::BALLOT, "ballot"),
            (vk::SubgroupFeatureFlags::SHUFFLE, "shuffle"),
            (
                vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE,
                "shuffle-relative",
            ),
            (vk::SubgroupFeatureFlags::CLUSTERED, "clustered"),
            (vk::SubgroupFeatureFlags::QUAD, "quad"),
        ];
        let ops = vk::SubgroupFeatureFlags::from_raw(self.subgroup_ops);
        let v: Vec<&str> = names
            .iter()
            .filter(|(f, _)| ops.contains(*f))
            .map(|(_, n)| *n)
            .collect();
        if v.is_empty() {
            "none".into()
        } else {
            v.join(" ")
        }
    }

    /// Which of the 8/16/64-bit types and atomics the device has, as one line.
    fn types_line(&self) -> String {
        let yes = |b: bool, s: &'static str| b.then_some(s);
        [
            yes(self.float64, "f64"),
            yes(self.int64, "i64"),
            yes(self.float16, "f16"),
            yes(self.int16, "i16"),
            yes(self.int8, "i8"),
            yes(self.storage_16bit, "16-bit storage"),
            yes(self.storage_8bit, "8-bit storage"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
    }

    /// The float controls the writer asks for, per width: `f32: inf/nan, denormals` means
    /// that `SignedZeroInfNanPreserve` and `DenormPreserve` are offered for `f32`.
    fn float_controls_line(&self) -> String {
        let line: Vec<String> = ["f16", "f32", "f64"]
            .iter()
            .enumerate()
            .filter_map(|(i, w)| {
                let v: Vec<&str> = [
                    self.signed_zero_inf_nan_preserve[i].then_some("inf/nan"),
                    self.denorm_preserve[i].then_some("denormals"),
                ]
                .into_iter()
                .flatten()
                .collect();
                (!v.is_empty()).then(|| format!("{w}: {}", v.join(", ")))
            })
            .collect();
        if line.is_empty() {
            "none".into()
        } else {
            line.join("; ")
        }
    }

    fn atomics_line(&self) -> String {
        let yes = |b: bool, s: &'static str| b.then_some(s);
        let v: Vec<&str> = [
            Some("32-bit int"),
            yes(self.buffer_int64_atomics, "64-bit int (buffers)"),
            yes(self.shared_int64_atomics, "64-bit int (shared)"),
            yes(self.buffer_float32_atomic_add, "f32 add"),
            yes(self.buffer_float32_atomic_min_max, "f32 min/max"),
            yes(self.buffer_float64_atomic_add, "f64 add"),
        ]
        .into_iter()
        .flatten()
        .collect();
        v.join(", ")
    }
}

/// The process's Vulkan instance, created once; `Err`: why Vulkan has no devices here.
struct Instance {
    /// Keeps the loader open.
    _entry: ash::Entry,
    instance: ash::Instance,
}

fn instance() -> std::result::Result<&'static Instance, String> {
    static INSTANCE: std::sync::OnceLock<std::result::Result<Instance, String>> =
        std::sync::OnceLock::new();
    INSTANCE
        .get_or_init(|| {
            // SAFETY: loading the Vulkan loader runs its initialization, as any Vulkan
            // application does.
            let entry = unsafe { ash::Entry::load() }.map_err(|e| {
                format!(
                    "the Vulkan loader could not be opened ({e}); install it and a driver, \
                     e.g. `apt-get install libvulkan1 mesa-vulkan-drivers` (lavapipe runs \
                     Vulkan on the CPU)"
                )
            })?;
            // SAFETY: the entry is valid; the call only lists names.
            let exts =
                unsafe { entry.enumerate_instance_extension_properties(None) }.unwrap_or_default();
            let has = |name: &CStr| {
                exts.iter()
                    .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
            };
            // MoltenVK (macOS) lists its devices only to instances that enumerate portability
            // drivers.
            let portability = has(ash::khr::portability_enumeration::NAME);
            let mut names = Vec::new();
            if portability {
                names.push(ash::khr::portability_enumeration::NAME.as_ptr());
            }
            let app = vk::ApplicationInfo::default()
                .application_name(c"strata")
                .engine_name(c"strata")
                .api_version(vk::API_VERSION_1_3);
            let info = vk::InstanceCreateInfo::default()
                .application_info(&app)
                .enabled_extension_names(&names)
                .flags(if portability {
                    vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR
                } else {
                    vk::InstanceCreateFlags::empty()
                });
            // SAFETY: the create info and what it points to live across the call.
            let instance = unsafe { entry.create_instance(&info, None) }.map_err(|e| {
                format!(
                    "the Vulkan loader opened, but vkCreateInstance failed ({e}): no Vulkan \
                     driver (ICD) is installed; install one, e.g. `apt-get install \
                     mesa-vulkan-drivers`"
                )
            })?;
            Ok(Instance {
                _entry: entry,
                instance,
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Every Vulkan device that could be opened, and the problems met with the others.
pub(crate) fn discover() -> std::result::Result<(Vec<VulkanDevice>, Vec<String>), String> {
    let inst = instance()?;
    // SAFETY: the instance is valid for the life of the process.
    let physical = unsafe { inst.instance.enumerate_physical_devices() }
        .map_err(|e| format!("vkEnumeratePhysicalDevices failed: {e}"))?;
    if physical.is_empty() {
        return Err(
            "the Vulkan loader lists no device: no Vulkan driver (ICD) is installed; \
                    install one, e.g. `apt-get install mesa-vulkan-drivers`"
                .into(),
        );
    }
    let mut devices = Vec::new();
    let mut problems = Vec::new();
    for pd in physical {
        match VulkanDevice::open(inst, pd, devices.len()) {
            Ok(d) => devices.push(d),
            Err(e) => problems.push(e),
        }
    }
    if devices.is_empty() {
        Err(format!("no usable Vulkan device: {}", problems.join("; ")))
    } else {
        Ok((devices, problems))
    }
}

/// The Vulkan backend in the device registry: every device [`discover`] opens; `best` takes a
/// Vulkan GPU only when there is neither a CUDA device nor an OpenCL GPU.
pub(crate) const BACKEND: BackendEntry = BackendEntry {
    kind: BackendKind::Vulkan,
    bare_spec: false,
    devices: Devices::Discover(|| {
        discover().map(|(devices, problems)| Found {
            devices: devices
                .into_iter()
                .map(|d| Box::new(d) as Box<dyn DeviceBackend>)
                .collect(),
            problems,
        })
    }),
    best_rank: |info| (!info.is_cpu()).then_some(1),
};

/// What a device's memory, queues and kernels share: the logical device and its queue.
pub(crate) struct Shared {
    pub(crate) instance: ash::Instance,
    pub(crate) physical: vk::PhysicalDevice,
    pub(crate) device: ash::Device,
    /// The compute queue; submissions take the lock.
    pub(crate) queue: Mutex<vk::Queue>,
    pub(crate) queue_family: u32,
    /// The memory type of allocations, and whether it is mapped (host-visible and coherent).
    pub(crate) memory_type: u32,
    pub(crate) mapped: bool,
    /// A host-visible, host-coherent memory type for staging buffers.
    pub(crate) staging_type: u32,
    /// Nanoseconds per timestamp tick; `None` where the queue has no timestamps.
    pub(crate) timestamp_period: Option<f64>,
    /// `vulkan:N (name)`, for messages.
    pub(crate) label: String,
    pub(crate) caps: Caps,
    /// The driver's identity in the pipeline cache's keys (`pipeline.rs`).
    pub(crate) driver_key: String,
}

/// One Vulkan device.
pub(crate) struct VulkanDevice {
    info: DeviceInfo,
    pub(crate) shared: Arc<Shared>,
}

/// The device's name, from its properties.
fn device_name(p: &vk::PhysicalDeviceProperties) -> String {
    p.device_name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "(unnamed Vulkan device)".into())
}

fn vendor_name(id: u32) -> String {
    match id {
        0x1002 => "AMD".into(),
        0x10de => "NVIDIA".into(),
        0x8086 => "Intel".into(),
        0x13b5 => "ARM".into(),
        0x5143 => "Qualcomm".into(),
        0x106b => "Apple".into(),
        0x10005 => "Mesa".into(),
        v => format!("vendor {v:#x}"),
    }
}

fn type_name(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => "GPU (discrete)",
        vk::PhysicalDeviceType::INTEGRATED_GPU => "GPU (integrated)",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "GPU (virtual)",
        vk::PhysicalDeviceType::CPU => "CPU",
        _ => "other",
    }
}

impl VulkanDevice {
    /// Opens physical device `pd` as `vulkan:index`; `Err`: why it is unusable.
    fn open(
        inst: &Instance,
        pd: vk::PhysicalDevice,
        index: usize,
    ) -> std::result::Result<Self, String> {
        let instance = &inst.instance;
        // SAFETY (all calls below): `pd` is a physical device of the valid instance, and every
        // structure passed lives across its call.
        let props = unsafe { instance.get_physical_device_properties(pd) };
        let name = device_name(&props);
        let why = |s: String| format!("device `{name}`: {s}");
        if props.api_version < vk::API_VERSION_1_2 {
            return Err(why(format!(
                "Vulkan {}.{} (strata needs 1.2)",
                vk::api_version_major(props.api_version),
                vk::api_version_minor(props.api_version)
            )));
        }
        let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
        let Some(family) = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        else {
            return Err(why("no queue family with compute".into()));
        };
        let family_props = families[family];
        let exts = unsafe { instance.enumerate_device_extension_properties(pd) }
            .map_err(|e| why(format!("vkEnumerateDeviceExtensionProperties: {e}")))?;
        let has = |n: &CStr| {
            exts.iter()
                .any(|e| e.extension_name_as_c_str().is_ok_and(|x| x == n))
        };
        let api13 = props.api_version >= vk::API_VERSION_1_3;
        let atomic_float = has(ash::ext::shader_atomic_float::NAME);
        let atomic_float2 = has(ash::ext::shader_atomic_float2::NAME);
        let budget_ext = has(ash::ext::memory_budget::NAME);
        // Features: query every structure, then enable what was found.
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut fa = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let mut fa2 = vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f11)
            .push_next(&mut f12);
        if api13 {
            f2 = f2.push_next(&mut f13);
        }
        if atomic_float {
            f2 = f2.push_next(&mut fa);
        }
        if atomic_float2 {
            f2 = f2.push_next(&mut fa2);
        }
        unsafe { instance.get_physical_device_features2(pd, &mut f2) };
        let base = f2.features;
        // Properties: sub-groups, sub-group size control.
        let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
        let mut p13 = vk::PhysicalDeviceVulkan13Properties::default();
        let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut sub)
            .push_next(&mut p12);
        if api13 {
            p2 = p2.push_next(&mut p13);
        }
        unsafe { instance.get_physical_device_properties2(pd, &mut p2) };
        let compute_ops = if sub.supported_stages.contains(vk::ShaderStageFlags::COMPUTE) {
            sub.supported_operations.as_raw()
        } else {
            0
        };
        let on = |b: vk::Bool32| b == vk::TRUE;
        let size_control = api13
            && on(f13.subgroup_size_control)
            && p13
                .required_subgroup_size_stages
                .contains(vk::ShaderStageFlags::COMPUTE);
        let caps = Caps {
            api_version: props.api_version,
            subgroup_size: sub.subgroup_size,
            subgroup_size_range: if size_control {
                (p13.min_subgroup_size, p13.max_subgroup_size)
            } else {
                (sub.subgroup_size, sub.subgroup_size)
            },
            subgroup_size_control: size_control,
            full_subgroups: size_control && on(f13.compute_full_subgroups),
            subgroup_ops: compute_ops,
            float64: on(base.shader_float64),
            int64: on(base.shader_int64),
            int16: on(base.shader_int16),
            int8: on(f12.shader_int8),
            float16: on(f12.shader_float16),
            storage_8bit: on(f12.storage_buffer8_bit_access),
            storage_16bit: on(f11.storage_buffer16_bit_access),
            buffer_int64_atomics: on(f12.shader_buffer_int64_atomics),
            shared_int64_atomics: on(f12.shader_shared_int64_atomics),
            buffer_float32_atomic_add: atomic_float && on(fa.shader_buffer_float32_atomic_add),
            shared_float32_atomic_add: atomic_float && on(fa.shader_shared_float32_atomic_add),
            buffer_float64_atomic_add: atomic_float && on(fa.shader_buffer_float64_atomic_add),
            buffer_float32_atomic_min_max: atomic_float2
                && on(fa2.shader_buffer_float32_atomic_min_max),
            buffer_float64_atomic_min_max: atomic_float2
                && on(fa2.shader_buffer_float64_atomic_min_max),
            shared_float64_atomic_add: atomic_float && on(fa.shader_shared_float64_atomic_add),
            shared_float64_atomic_min_max: atomic_float2
                && on(fa2.shader_shared_float64_atomic_min_max),
            shared_float32_atomic_min_max: atomic_float2
                && on(fa2.shader_shared_float32_atomic_min_max),
            vulkan_memory_model: on(f12.vulkan_memory_model),
            robust_buffer_access: on(base.robust_buffer_access),
            max_shared_memory: props.limits.max_compute_shared_memory_size,
            max_push_constants: props.limits.max_push_constants_size,
            max_storage_buffers: props.limits.max_per_stage_descriptor_storage_buffers,
            max_group_count: props.limits.max_compute_work_group_count,
            llvmpipe: props.vendor_id == 0x10005
                && props.device_type == vk::PhysicalDeviceType::CPU
                && name.contains("llvmpipe"),
            signed_zero_inf_nan_preserve: [
                on(p12.shader_signed_zero_inf_nan_preserve_float16),
                on(p12.shader_signed_zero_inf_nan_preserve_float32),
                on(p12.shader_signed_zero_inf_nan_preserve_float64),
            ],
            denorm_preserve: [
                on(p12.shader_denorm_preserve_float16),
                on(p12.shader_denorm_preserve_float32),
                on(p12.shader_denorm_preserve_float64),
            ],
            nvidia: props.vendor_id == 0x10de,
        };
        // Extensions to enable: those the features above need, the memory budget, and the
        // portability subset where the driver has it (it must then be enabled).
        let mut ext_names: Vec<*const std::ffi::c_char> = Vec::new();
        for (present, n) in [
            (atomic_float, ash::ext::shader_atomic_float::NAME),
            (atomic_float2, ash::ext::shader_atomic_float2::NAME),
            (budget_ext, ash::ext::memory_budget::NAME),
            (
                has(c"VK_KHR_portability_subset"),
                c"VK_KHR_portability_subset",
            ),
        ] {
            if present {
                ext_names.push(n.as_ptr());
            }
        }
        let priorities = [1.0f32];
        let queue_info = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family as u32)
            .queue_priorities(&priorities)];
        // Every feature found is enabled (the structures as queried, chained again).
        let mut e11 = f11;
        e11.p_next = std::ptr::null_mut();
        let mut e12 = f12;
        e12.p_next = std::ptr::null_mut();
        let mut e13 = f13;
        e13.p_next = std::ptr::null_mut();
        let mut ea = fa;
        ea.p_next = std::ptr::null_mut();
        let mut ea2 = fa2;
        ea2.p_next = std::ptr::null_mut();
        let mut e2 = vk::PhysicalDeviceFeatures2::default()
            .features(base)
            .push_next(&mut e11)
            .push_next(&mut e12);
        if api13 {
            e2 = e2.push_next(&mut e13);
        }
        if atomic_float {
            e2 = e2.push_next(&mut ea);
        }
        if atomic_float2 {
            e2 = e2.push_next(&mut ea2);
        }
        let create = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_extension_names(&ext_names)
            .push_next(&mut e2);
        let device = unsafe { instance.create_device(pd, &create, None) }
            .map_err(|e| why(format!("vkCreateDevice: {e}")))?;
        let queue = unsafe { device.get_device_queue(family as u32, 0) };
        // Memory: the first device-local type for allocations, a host-visible coherent one for
        // staging.
        let mut budget = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
        let mut mp2 = vk::PhysicalDeviceMemoryProperties2::default();
        if budget_ext {
            mp2 = mp2.push_next(&mut budget);
        }
        unsafe { instance.get_physical_device_memory_properties2(pd, &mut mp2) };
        let mem = mp2.memory_properties;
        let types = &mem.memory_types[..mem.memory_type_count as usize];
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(memory_type) = types
            .iter()
            .position(|t| {
                t.property_flags
                    .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .or_else(|| types.iter().position(|t| t.property_flags.contains(host)))
        else {
            return Err(why("no device-local memory type".into()));
        };
        let Some(staging_type) = types.iter().position(|t| t.property_flags.contains(host)) else {
            return Err(why("no host-visible coherent memory type".into()));
        };
        let mapped = types[memory_type].property_flags.contains(host);
        let heap = types[memory_type].heap_index as usize;
        let heap_size = mem.memory_heaps[heap].size;
        let heap_budget = budget_ext
            .then(|| budget.heap_budget[heap])
            .filter(|b| *b > 0);
        let label = format!("vulkan:{index} ({name})");
        let max_group = props.limits.max_compute_work_group_invocations as usize;
        let sizes = props.limits.max_compute_work_group_size.map(|s| s as usize);
        let version = |v: u32| {
            format!(
                "{}.{}.{}",
                vk::api_version_major(v),
                vk::api_version_minor(v),
                vk::api_version_patch(v)
            )
        };
        let mut extra = vec![
            (
                "device type".to_string(),
                type_name(props.device_type).to_string(),
            ),
            ("vulkan version".into(), version(props.api_version)),
            (
                "driver version".into(),
                format!("{:#x}", props.driver_version),
            ),
            (
                "subgroups".into(),
                format!(
                    "{} lanes (sizes {}..={}), {}",
                    caps.subgroup_size,
                    caps.subgroup_size_range.0,
                    caps.subgroup_size_range.1,
                    caps.subgroup_op_names()
                ),
            ),
            ("types".into(), caps.types_line()),
            ("atomics".into(), caps.atomics_line()),
            ("float controls".into(), caps.float_controls_line()),
            (
                "memory".into(),
                if mapped {
                    "device-local, host-visible (mapped)".into()
                } else {
                    "device-local (host access through staging)".into()
                },
            ),
        ];
        if let Some(b) = heap_budget {
            extra.push((
                "memory budget".into(),
                format!(
                    "{:.0} MiB (VK_EXT_memory_budget)",
                    b as f64 / (1 << 20) as f64
                ),
            ));
        }
        let timestamp_period = (family_props.timestamp_valid_bits > 0
            && props.limits.timestamp_period > 0.0)
            .then_some(props.limits.timestamp_period as f64);
        let info = DeviceInfo {
            backend: BackendKind::Vulkan,
            index,
            name: name.clone(),
            vendor: vendor_name(props.vendor_id),
            // Vulkan does not say; lavapipe's CPU threads and GPUs' units are not listed.
            compute_units: 1,
            max_work_group_size: max_group,
            max_work_item_sizes: sizes,
            local_mem_size: caps.max_shared_memory as u64,
            global_mem_size: heap_budget.map_or(heap_size, |b| b.min(heap_size)),
            max_alloc_size: {
                let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
                let mut p = vk::PhysicalDeviceProperties2::default().push_next(&mut p11);
                unsafe { instance.get_physical_device_properties2(pd, &mut p) };
                p11.max_memory_allocation_size.min(heap_size)
            },
            preferred_group_size: PREFERRED_GROUP_SIZE.min(max_group).min(sizes[0]).max(1),
            supports_f64: caps.float64,
            supports_f16: caps.float16 && caps.storage_16bit,
            supports_int64_atomics: caps.buffer_int64_atomics,
            sub_group_size: caps.launch_subgroup_size(),
            max_constant_buffer_size: None,
            max_constant_args: None,
            pitch_alignment: (props.limits.min_storage_buffer_offset_alignment as usize).max(64),
            loop_iteration_limit: caps.llvmpipe.then_some(LLVMPIPE_LOOP_LIMIT),
            extra: std::mem::take(&mut extra),
        };
        Ok(VulkanDevice {
            info,
            shared: Arc::new(Shared {
                instance: instance.clone(),
                physical: pd,
                device,
                queue: Mutex::new(queue),
                queue_family: family as u32,
                memory_type: memory_type as u32,
                mapped,
                staging_type: staging_type as u32,
                timestamp_period,
                label,
                caps,
                driver_key: pipeline::driver_key(&props),
            }),
        })
    }
}

impl DeviceBackend for VulkanDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Arc<dyn Memory>> {
        Ok(Arc::new(VkMem::new(&self.shared, bytes, true)?))
    }

    fn compile(
        &self,
        f: &ValidFunction,
        settings: &crate::Settings,
    ) -> Result<Arc<dyn CompiledKernel>> {
        Ok(Arc::new(pipeline::compile(&self.shared, f, settings)?))
    }

    fn new_queue_with(&self, _profiling: bool) -> Result<Arc<dyn QueueBackend>> {
        Ok(Arc::new(queue::new_queue(&self.shared)?))
    }

    fn vulkan_handles(&self) -> Option<VulkanHandles> {
        use ash::vk::Handle;
        let s = &self.shared;
        Some(VulkanHandles {
            instance: s.instance.handle().as_raw() as *mut _,
            physical_device: s.physical.as_raw() as *mut _,
            device: s.device.handle().as_raw() as *mut _,
            queue: s.queue.lock().unwrap().as_raw() as *mut _,
            queue_family: s.queue_family,
        })
    }
}
