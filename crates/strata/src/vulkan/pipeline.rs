//! Vulkan kernels: a SPIR-V module with its descriptor set layout (one storage buffer per
//! buffer parameter), pipeline layout (the scalars as push constants) and a compute pipeline
//! per set of specialization constants (the work-group size, the lengths of launch-sized
//! local arrays), created on first use.
//!
//! **The disk cache.** Each pipeline is created through a `VkPipelineCache` of its own, loaded
//! from and stored to a file under `$STRATA_VULKAN_CACHE` (else `~/.cache/strata/vulkan`;
//! `off` disables it), named by a hash of the driver (`pipelineCacheUUID`, vendor, device,
//! driver version), the SPIR-V and the constants. The file is written the way the CUDA
//! backend's PTX cache is: a header naming the key, a line with the body's length and
//! checksum, the body; a file that does not match is reported, removed and rebuilt, and a file
//! is written whole or not at all (a temporary file renamed).

use super::Shared;
use crate::codegen::spirv::{self, ArgSlot, SpirvTarget};
use crate::disk_cache::{hash128, EntryFormat, Lookup};
use crate::error::{Error, Result};
use crate::ir::ValidFunction;
use crate::runtime::CompiledKernel;
use ash::vk;
use std::any::Any;
use std::collections::HashMap;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// How one launch argument reaches the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    /// A buffer: its storage-buffer binding in set 0, and where its element count goes in the
    /// push constants (a `u32`), if the kernel reads it.
    Buffer { binding: u32, len_at: Option<u32> },
    /// A scalar: its bytes at `at` in the push constants (`size` bytes, little-endian).
    Scalar { at: u32, size: u32 },
    /// The length of a launch-sized local array: a specialization constant (`u32`).
    LocalLen { spec_id: u32 },
}

/// How a kernel takes its arguments: the contract between the SPIR-V writer and the launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// One entry per parameter, in order.
    pub args: Vec<Arg>,
    /// Bytes of the argument block (scalars, buffer lengths, the number of work-groups).
    pub push_size: u32,
    /// Where the argument block goes when it does not fit the device's push constants: the
    /// binding of a read-only storage buffer holding it. `None`: it is the push constants.
    pub args_binding: Option<u32>,
    /// The specialization constants of the work-group size (x, y, z).
    pub local_size_ids: [u32; 3],
    /// Where the number of work-groups (three `u32`) goes in the push constants, if the
    /// kernel reads it (a dispatch may be split, so the `NumWorkgroups` built-in is not it).
    pub groups_at: Option<u32>,
    /// Whether the kernel reads the `NumWorkgroups` built-in (then a grid larger than one
    /// dispatch may be cannot be split, and is refused).
    pub reads_num_groups: bool,
    /// The entry point's name.
    pub entry: CString,
    /// Workgroup memory the kernel uses: fixed bytes, and bytes per work-item of the
    /// work-group plus one (the collectives' scratch); a launch whose total exceeds the device's
    /// shared memory fails before it runs.
    pub shared_bytes: (u32, u32),
    /// The sub-group size the kernel needs, asked of the pipeline where the device lets it
    /// (sub-group size control; full sub-groups where the work-group's x size is a multiple).
    pub subgroup_size: Option<u32>,
}

/// A kernel compiled for one Vulkan device.
pub(crate) struct VkKernel {
    shared: Arc<Shared>,
    pub(crate) name: String,
    words: Vec<u32>,
    module: vk::ShaderModule,
    pub(crate) set_layout: vk::DescriptorSetLayout,
    pub(crate) pipeline_layout: vk::PipelineLayout,
    pub(crate) layout: Layout,
    /// Pipelines by their specialization constants.
    pipelines: Mutex<HashMap<Vec<(u32, u32)>, vk::Pipeline>>,
}

// SAFETY: the handles are plain values that Vulkan lets any thread use; the pipeline map is
// behind a lock.
unsafe impl Send for VkKernel {}
// SAFETY: as above.
unsafe impl Sync for VkKernel {}

impl CompiledKernel for VkKernel {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for VkKernel {
    fn drop(&mut self) {
        let d = &self.shared.device;
        // SAFETY: no command uses the kernel any more (commands hold it until they completed).
        unsafe {
            for (_, p) in self.pipelines.get_mut().unwrap().drain() {
                d.destroy_pipeline(p, None);
            }
            d.destroy_pipeline_layout(self.pipeline_layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_shader_module(self.module, None);
        }
    }
}

/// The writer's target for a device: what its features allow.
pub(crate) fn target(caps: &super::Caps) -> SpirvTarget {
    let ops = vk::SubgroupFeatureFlags::from_raw(caps.subgroup_ops);
    SpirvTarget {
        spirv_version: if caps.api_version >= vk::API_VERSION_1_3 {
            (1, 6)
        } else {
            (1, 5)
        },
        float64: caps.float64,
        int64: caps.int64,
        int16: caps.int16,
        int8: caps.int8,
        float16: caps.float16,
        storage_buffer_8bit: caps.storage_8bit,
        storage_buffer_16bit: caps.storage_16bit,
        subgroup_size: caps.launch_subgroup_size(),
        subgroup_basic: ops.contains(vk::SubgroupFeatureFlags::BASIC),
        subgroup_vote: ops.contains(vk::SubgroupFeatureFlags::VOTE),
        subgroup_arithmetic: ops.contains(vk::SubgroupFeatureFlags::ARITHMETIC),
        subgroup_ballot: ops.contains(vk::SubgroupFeatureFlags::BALLOT),
        subgroup_shuffle: ops.contains(vk::SubgroupFeatureFlags::SHUFFLE),
        subgroup_shuffle_relative: ops.contains(vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE),
        subgroup_quad: ops.contains(vk::SubgroupFeatureFlags::QUAD),
        float32_atomic_add: caps.buffer_float32_atomic_add && caps.shared_float32_atomic_add,
        float32_atomic_min_max: caps.buffer_float32_atomic_min_max
            && caps.shared_float32_atomic_min_max,
        float64_atomic_add: caps.buffer_float64_atomic_add && caps.shared_float64_atomic_add,
        float64_atomic_min_max: caps.buffer_float64_atomic_min_max
            && caps.shared_float64_atomic_min_max,
        int64_atomics: caps.buffer_int64_atomics && caps.shared_int64_atomics,
        max_shared_memory: caps.max_shared_memory,
        max_push_constants: caps.max_push_constants,
        relaxed_atomic_semantics: caps.llvmpipe,
        signed_zero_inf_nan_preserve: caps.signed_zero_inf_nan_preserve,
        denorm_preserve: caps.denorm_preserve,
        f32_core_in_f64: caps.nvidia && caps.float64,
        llvmpipe_float_fixes: caps.llvmpipe,
    }
}

/// Compiles a validated kernel for the device: SPIR-V from the writer for the device's
/// target ([`target`]), then a kernel object. What the writer cannot lower for the device is
/// its [`Error::Unsupported`], naming the device.
pub(crate) fn compile(
    shared: &Arc<Shared>,
    f: &ValidFunction,
    settings: &crate::Settings,
) -> Result<VkKernel> {
    let _ = settings;
    let name = &f.function().name;
    let m = spirv::write(f, &target(&shared.caps)).map_err(|e| match e {
        Error::Unsupported { kernel, reason, .. } => Error::Unsupported {
            kernel,
            device: shared.label.clone(),
            reason,
        },
        e => e,
    })?;
    let args = m
        .layout
        .params
        .iter()
        .map(|slot| match *slot {
            ArgSlot::Buffer {
                binding,
                len_offset,
            } => Arg::Buffer {
                binding,
                len_at: len_offset,
            },
            ArgSlot::Scalar { offset, size } => Arg::Scalar { at: offset, size },
            ArgSlot::LocalLen { spec_id } => Arg::LocalLen { spec_id },
        })
        .collect();
    let entry = CString::new(m.entry_point.clone()).map_err(|_| Error::Backend {
        backend: "vulkan",
        message: format!("strata bug: the entry point of `{name}` contains NUL"),
    })?;
    let (push_size, args_binding) = match m.layout.args_buffer {
        Some((binding, size)) => (size, Some(binding)),
        None => (m.layout.push_constant_size, None),
    };
    let layout = Layout {
        args,
        push_size,
        args_binding,
        local_size_ids: m.workgroup_size_spec_ids,
        groups_at: m.layout.num_groups_offset,
        reads_num_groups: false,
        shared_bytes: (m.fixed_shared_bytes, m.scratch_bytes_per_item),
        entry,
        subgroup_size: Some(shared.caps.launch_subgroup_size()),
    };
    VkKernel::new(shared, name, m.words, layout)
}

impl VkKernel {
    /// A kernel of SPIR-V `words` taking its arguments as `layout` says.
    pub(crate) fn new(
        shared: &Arc<Shared>,
        name: &str,
        words: Vec<u32>,
        layout: Layout,
    ) -> Result<VkKernel> {
        let d = &shared.device;
        let fail = |call: &str, e: vk::Result| Error::CompileFailed {
            kernel: name.to_string(),
            backend: shared.label.clone(),
            log: format!("{call} failed: {e}"),
            source_listing: String::new(),
        };
        // SAFETY (all calls): valid device; create infos live across the calls; a failure
        // part-way leaves handles that `Drop` destroys (null ones are ignored by Vulkan).
        let module = unsafe {
            d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
        }
        .map_err(|e| fail("vkCreateShaderModule", e))?;
        let mut k = VkKernel {
            shared: shared.clone(),
            name: name.to_string(),
            words,
            module,
            set_layout: vk::DescriptorSetLayout::null(),
            pipeline_layout: vk::PipelineLayout::null(),
            layout,
            pipelines: Mutex::new(HashMap::new()),
        };
        let bindings: Vec<vk::DescriptorSetLayoutBinding> = k
            .layout
            .args
            .iter()
            .filter_map(|a| match a {
                Arg::Buffer { binding, .. } => Some(*binding),
                _ => None,
            })
            .chain(k.layout.args_binding)
            .map(|binding| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(binding)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        k.set_layout = unsafe {
            d.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
        }
        .map_err(|e| fail("vkCreateDescriptorSetLayout", e))?;
        let ranges = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: k.layout.push_size,
        }];
        let set_layouts = [k.set_layout];
        let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if k.layout.push_size > 0 && k.layout.args_binding.is_none() {
            info = info.push_constant_ranges(&ranges);
        }
        k.pipeline_layout = unsafe { d.create_pipeline_layout(&info, None) }
            .map_err(|e| fail("vkCreatePipelineLayout", e))?;
        Ok(k)
    }

    /// The pipeline of the specialization constants `spec` (id, value), created on first use
    /// through the disk cache.
    pub(crate) fn pipeline(&self, spec: &[(u32, u32)]) -> Result<vk::Pipeline> {
        let mut pipelines = self.pipelines.lock().unwrap();
        if let Some(p) = pipelines.get(spec) {
            return Ok(*p);
        }
        let d = &self.shared.device;
        let entries: Vec<vk::SpecializationMapEntry> = spec
            .iter()
            .enumerate()
            .map(|(i, &(id, _))| vk::SpecializationMapEntry {
                constant_id: id,
                offset: 4 * i as u32,
                size: 4,
            })
            .collect();
        let data: Vec<u8> = spec.iter().flat_map(|&(_, v)| v.to_ne_bytes()).collect();
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(self.module)
            .name(&self.layout.entry)
            .specialization_info(&spec_info);
        let caps = &self.shared.caps;
        let mut required = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default();
        if let Some(n) = self.layout.subgroup_size.filter(|n| {
            caps.subgroup_size_control
                && (caps.subgroup_size_range.0..=caps.subgroup_size_range.1).contains(n)
        }) {
            required = required.required_subgroup_size(n);
            stage = stage.push_next(&mut required);
            let x = spec
                .iter()
                .find(|(id, _)| *id == self.layout.local_size_ids[0])
                .map_or(1, |s| s.1);
            if caps.full_subgroups && x.is_multiple_of(n) {
                stage = stage.flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS);
            }
        }
        let info = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(self.pipeline_layout)
            .flags(vk::PipelineCreateFlags::DISPATCH_BASE)];
        let cache = DiskEntry::open(&self.shared, &self.words, spec);
        // SAFETY: valid device, module, layout and cache; the create info lives across the call.
        let r = unsafe { d.create_compute_pipelines(cache.cache, &info, None) };
        cache.close(&self.shared);
        let p = match r {
            Ok(p) => p[0],
            Err((_, e)) => {
                return Err(Error::CompileFailed {
                    kernel: self.name.clone(),
                    backend: self.shared.label.clone(),
                    log: format!("vkCreateComputePipelines failed: {e}"),
                    source_listing: String::new(),
                })
            }
        };
        pipelines.insert(spec.to_vec(), p);
        Ok(p)
    }
}

/// The pipeline cache folder, or `None` when `STRATA_VULKAN_CACHE=off`.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    crate::settings::user_cache_dir("STRATA_VULKAN_CACHE", "vulkan")
}

/// The pipeline cache's entries (the format is `disk_cache`'s).
const CACHE: EntryFormat = EntryFormat {
    item: "pipeline",
    body: "data",
};

/// The driver's identity, for cache keys: what makes pipeline cache data reusable.
pub(crate) fn driver_key(props: &vk::PhysicalDeviceProperties) -> String {
    let uuid: String = props
        .pipeline_cache_uuid
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "vendor {:#x}, device {:#x}, driver {:#x}, cache uuid {uuid}",
        props.vendor_id, props.device_id, props.driver_version
    )
}

/// The pipeline cache of one pipeline while it is created.
struct DiskEntry {
    cache: vk::PipelineCache,
    /// The file and its header, and whether it held the pipeline already.
    file: Option<(PathBuf, String, bool)>,
}

impl DiskEntry {
    fn open(shared: &Shared, words: &[u32], spec: &[(u32, u32)]) -> DiskEntry {
        let d = &shared.device;
        let words: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let header = format!(
            "// strata Vulkan pipeline cache v1: strata {}, {}, constants {spec:?}, spir-v {:032x}",
            env!("CARGO_PKG_VERSION"),
            shared.driver_key,
            hash128(&[&words])
        );
        let file =
            cache_dir().map(|dir| dir.join(format!("{:032x}.vkpc", hash128(&[header.as_bytes()]))));
        let mut initial = Vec::new();
        if let Some(f) = &file {
            match CACHE.lookup(f, &header) {
                Lookup::Hit(body) => initial = body,
                Lookup::Miss => {}
                Lookup::Damaged(why) => {
                    eprintln!(
                        "strata: warning: the Vulkan pipeline cache entry {} is damaged ({why}); \
                         creating the pipeline again",
                        f.display()
                    );
                    let _ = std::fs::remove_file(f);
                }
            }
        }
        let hit = !initial.is_empty();
        let create = |data: &[u8]| {
            // SAFETY: valid device; the data lives across the call (the driver checks its own
            // header and ignores data of another driver).
            unsafe {
                d.create_pipeline_cache(
                    &vk::PipelineCacheCreateInfo::default().initial_data(data),
                    None,
                )
            }
        };
        let cache = create(&initial)
            .or_else(|_| create(&[]))
            .unwrap_or(vk::PipelineCache::null());
        DiskEntry {
            cache,
            file: file.map(|f| (f, header, hit)),
        }
    }

    /// Stores the cache's data (when the file did not hold it) and destroys the cache.
    fn close(self, shared: &Shared) {
        let d = &shared.device;
        if self.cache == vk::PipelineCache::null() {
            return;
        }
        if let Some((file, header, false)) = &self.file {
            // SAFETY: the cache is valid and no longer in use.
            if let Ok(data) = unsafe { d.get_pipeline_cache_data(self.cache) } {
                if !data.is_empty() {
                    CACHE.store(file, &CACHE.entry(header, &data));
                }
            }
        }
        // SAFETY: as above.
        unsafe { d.destroy_pipeline_cache(self.cache, None) };
    }
}

/// Checks a cache file's format without a device (the tests' use).
#[cfg(test)]
pub(crate) fn roundtrip(dir: &std::path::Path) -> (Lookup, Lookup, Lookup) {
    let f = dir.join("x.vkpc");
    CACHE.store(&f, &CACHE.entry("// key", b"data"));
    let hit = CACHE.lookup(&f, "// key");
    let other = CACHE.lookup(&f, "// other key");
    let mut bytes = std::fs::read(&f).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&f, bytes).unwrap();
    (hit, other, CACHE.lookup(&f, "// key"))
}
