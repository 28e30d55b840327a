//! Tests of the Vulkan backend below the public API: the pipeline cache's file format, and a
//! kernel assembled by `spirv-as` (a fixture, so the runtime is tested without the writer).

use super::pipeline::roundtrip;
use crate::disk_cache::Lookup;

#[test]
fn cache_files_are_checked() {
    let dir = std::env::temp_dir().join(format!("strata-vkpc-{}", std::process::id()));
    let (hit, other, damaged) = roundtrip(&dir);
    assert_eq!(hit, Lookup::Hit(b"data".to_vec()));
    assert!(matches!(other, Lookup::Damaged(w) if w.contains("key")));
    assert!(matches!(damaged, Lookup::Damaged(w) if w.contains("checksum")));
    let _ = std::fs::remove_dir_all(dir);
}

use super::pipeline::{Arg, Layout, VkKernel};
use super::{discover, VulkanDevice};
use crate::error::Error;
use crate::ir::{Literal, Scalar};
use crate::runtime::{ArgValue, Command, DeviceBackend, Memory, NdRange, QueueBackend, RectSide};
use crate::Kernel;
use std::sync::{Arc, OnceLock};

/// The first Vulkan device, opened once for all tests; `None` (skipped) without one unless
/// `STRATA_REQUIRE` names `vulkan`.
fn device() -> Option<&'static VulkanDevice> {
    static DEVICE: OnceLock<std::result::Result<VulkanDevice, String>> = OnceLock::new();
    match DEVICE.get_or_init(|| discover().map(|(mut d, _)| d.remove(0))) {
        Ok(d) => Some(d),
        Err(why) => {
            let required = std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.contains("vulkan"));
            assert!(!required, "STRATA_REQUIRE names vulkan, but: {why}");
            eprintln!("skipped: no Vulkan device ({why})");
            None
        }
    }
}

/// A second opening of the first device whose memory is not mapped: reads and writes through
/// staging buffers and copies on the device, as on GPUs whose device-local memory the host
/// cannot see (lavapipe's can).
fn staged_device() -> Option<&'static VulkanDevice> {
    static DEVICE: OnceLock<Option<VulkanDevice>> = OnceLock::new();
    DEVICE
        .get_or_init(|| {
            device()?;
            let mut d = discover().ok()?.0.remove(0);
            Arc::get_mut(&mut d.shared)?.mapped = false;
            Some(d)
        })
        .as_ref()
}

/// The fixture `name.spvasm` assembled by `spirv-as` (spirv-tools), as words.
fn assemble(name: &str) -> Vec<u32> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/vulkan/fixtures")
        .join(format!("{name}.spvasm"));
    // One file per call: tests of this binary run in parallel in one process and may assemble
    // the same fixture at the same time (one removing the file another is about to read).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("strata-{name}-{}-{call}.spv", std::process::id()));
    let status = std::process::Command::new("spirv-as")
        .args(["--target-env", "vulkan1.2", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("spirv-as (spirv-tools) runs");
    assert!(status.success(), "spirv-as failed on {}", src.display());
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

fn write(q: &dyn QueueBackend, mem: &Arc<dyn Memory>, offset: usize, data: &[u8]) {
    q.submit(
        Command::Write {
            mem: mem.clone(),
            offset,
            data: crate::runtime::HostData::Owned(data.to_vec()),
        },
        vec![],
    )
    .wait()
    .unwrap();
}

fn read(q: &dyn QueueBackend, mem: &Arc<dyn Memory>) -> Vec<u8> {
    let out = crate::runtime::HostOut::new::<u8>(mem.size());
    q.submit(
        Command::Read {
            mem: mem.clone(),
            offset: 0,
            len: mem.size(),
            out: out.clone(),
        },
        vec![],
    )
    .wait()
    .unwrap();
    let v = out.lock().unwrap().take::<u8>().unwrap();
    v
}

/// Buffers, push constants, the work-group size as specialization constants, and a grid
/// larger than one dispatch may be (split into several with base groups), with the kernel of
/// the `vadd` fixture.
#[test]
fn a_fixture_kernel_runs() {
    let Some(dev) = device() else { return };
    fixture_kernel_runs(dev);
    fixture_kernel_runs(staged_device().unwrap());
}

fn fixture_kernel_runs(dev: &VulkanDevice) {
    let words = assemble("vadd");
    let layout = Layout {
        args: vec![
            Arg::Buffer {
                binding: 0,
                len_at: None,
            },
            Arg::Buffer {
                binding: 1,
                len_at: None,
            },
            Arg::Buffer {
                binding: 2,
                len_at: Some(0),
            },
            Arg::Scalar { at: 4, size: 4 },
        ],
        push_size: 8,
        args_binding: None,
        local_size_ids: [0, 1, 2],
        groups_at: None,
        reads_num_groups: false,
        shared_bytes: (0, 0),
        entry: c"main".into(),
        subgroup_size: None,
    };
    let k: Arc<dyn crate::runtime::CompiledKernel> =
        Arc::new(VkKernel::new(&dev.shared, "vadd", words, layout).unwrap());
    // A kernel of the same parameters, for the launch's function (its body does not matter).
    let kernel = Kernel::build("vadd", |k| {
        let _a = k.read::<f32>("a");
        let _b = k.read::<f32>("b");
        let _c = k.write::<f32>("c");
        let _s = k.scalar::<f32>("s");
    })
    .unwrap();
    let function = kernel.valid_arc();
    let q = dev.new_queue_with(true).unwrap();
    for (n, local) in [(1000usize, 64usize), (70_001, 1)] {
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
        let (ma, mb, mc) = (
            dev.alloc(4 * n).unwrap(),
            dev.alloc(4 * n).unwrap(),
            dev.alloc(4 * n).unwrap(),
        );
        write(&*q, &ma, 0, bytemuck::cast_slice(&a));
        write(&*q, &mb, 0, bytemuck::cast_slice(&b));
        let range = NdRange::covering(n, local)
            .resolve("vadd", &dev.info, function.function())
            .unwrap();
        let buf = |m: &Arc<dyn Memory>| ArgValue::Buffer {
            mem: m.clone(),
            len: n as u64,
        };
        let e = q.submit(
            Command::Launch {
                kernel: k.clone(),
                function: function.clone(),
                range,
                args: vec![
                    buf(&ma),
                    buf(&mb),
                    buf(&mc),
                    ArgValue::Scalar(Literal::from_bits(Scalar::F32, 0.5f32.to_bits() as u64)),
                ],
                cancel: Default::default(),
                pitched: Vec::new(),
            },
            vec![],
        );
        e.wait().unwrap();
        let c: Vec<f32> = bytemuck::cast_slice(&read(&*q, &mc)).to_vec();
        for (i, c) in c.iter().enumerate() {
            assert_eq!(*c, (3 * i) as f32 + 0.5, "c[{i}] of {n}");
        }
    }
}

/// Copies, fills of every pattern size, rectangles: the transfer commands.
#[test]
fn transfers_run() {
    let Some(dev) = device() else { return };
    transfers(dev);
    transfers(staged_device().unwrap());
}

fn transfers(dev: &VulkanDevice) {
    let q = dev.new_queue_with(false).unwrap();
    let m = dev.alloc(37).unwrap();
    assert_eq!(read(&*q, &m), vec![0u8; 37], "new memory is zeroed");
    let data: Vec<u8> = (0..37).collect();
    write(&*q, &m, 0, &data);
    let n = dev.alloc(37).unwrap();
    q.submit(
        Command::Copy {
            src: m.clone(),
            src_offset: 3,
            dst: n.clone(),
            dst_offset: 1,
            len: 30,
        },
        vec![],
    )
    .wait()
    .unwrap();
    let got = read(&*q, &n);
    assert_eq!(&got[1..31], &data[3..33]);
    for pattern in [
        vec![7u8],
        vec![1, 2],
        vec![1, 2, 3],
        vec![9, 8, 7, 6],
        vec![5; 12],
    ] {
        q.submit(
            Command::Fill {
                mem: n.clone(),
                offset: 0,
                len: 36,
                pattern: pattern.clone(),
            },
            vec![],
        )
        .wait()
        .unwrap();
        let got = read(&*q, &n);
        let want: Vec<u8> = pattern.iter().copied().cycle().take(36).collect();
        assert_eq!(&got[..36], &want[..], "pattern {pattern:?}");
    }
    // A box of 3 bytes x 2 rows x 2 slices at (1, 1, 0) of rows of 5 bytes, slices of 3 rows.
    let at = RectSide {
        origin: [1, 1, 0],
        pitch: [5, 15],
    };
    let r = dev.alloc(30).unwrap();
    let boxed: Vec<u8> = (1..=12).collect();
    q.submit(
        Command::WriteRect {
            mem: r.clone(),
            at,
            region: [3, 2, 2],
            data: boxed.clone(),
        },
        vec![],
    )
    .wait()
    .unwrap();
    let all = read(&*q, &r);
    assert_eq!(&all[6..9], &[1, 2, 3]);
    assert_eq!(&all[11..14], &[4, 5, 6]);
    assert_eq!(&all[21..24], &[7, 8, 9]);
    let out = crate::runtime::HostOut::new::<u8>(3 * 2 * 2);
    q.submit(
        Command::ReadRect {
            mem: r.clone(),
            at,
            region: [3, 2, 2],
            out: out.clone(),
        },
        vec![],
    )
    .wait()
    .unwrap();
    assert_eq!(out.lock().unwrap().take::<u8>().unwrap(), boxed);
}

/// A launch cancelled before it is issued does not run, and fails with `Cancelled`.
#[test]
fn a_cancelled_launch_does_not_run() {
    let Some(dev) = device() else { return };
    let kernel = Kernel::build("nothing", |_| {}).unwrap();
    let function = kernel.valid_arc();
    let k: Arc<dyn crate::runtime::CompiledKernel> = Arc::new(
        VkKernel::new(
            &dev.shared,
            "vadd",
            assemble("vadd"),
            Layout {
                args: vec![],
                push_size: 0,
                args_binding: None,
                local_size_ids: [0, 1, 2],
                groups_at: None,
                reads_num_groups: false,
                shared_bytes: (0, 0),
                entry: c"main".into(),
                subgroup_size: None,
            },
        )
        .unwrap(),
    );
    let q = dev.new_queue_with(false).unwrap();
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let e = q.submit(
        Command::Launch {
            kernel: k,
            function: function.clone(),
            range: NdRange::new(1)
                .resolve("nothing", &dev.info, function.function())
                .unwrap(),
            args: vec![],
            cancel,
            pitched: Vec::new(),
        },
        vec![],
    );
    assert!(matches!(e.wait(), Err(Error::Cancelled { .. })));
}
