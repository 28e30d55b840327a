//! The runtimes of the device backends on every OpenCL device (PoCL in CI) and every CUDA
//! device present: device summaries, buffers, sub-ranges, fills, events across backends,
//! profiling, allocation errors and launch arguments (the `strata devices` output is tested in
//! the strata-cli crate). Kernels
//! themselves are covered by the conformance suite, which runs on every device.
//!
//! When `STRATA_REQUIRE` names a backend (`opencl`, `cuda`; scripts/test.sh names `opencl`),
//! having no device of it is a failure, with the reason strata gives; otherwise these tests
//! only check the devices there are.

use strata::prelude::*;
use strata::{BackendKind, Error};

fn required(kind: BackendKind) -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == kind.name()))
}

fn why_not(kind: BackendKind) -> String {
    strata::unavailable_backends()
        .into_iter()
        .find(|(b, _)| *b == kind)
        .map_or("(no reason given)".into(), |(_, why)| why)
}

/// Every device of `kind`; with none, fails when that backend is required.
fn devices_of(kind: BackendKind) -> Vec<Device> {
    let devs: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend == kind)
        .collect();
    if devs.is_empty() {
        assert!(
            !required(kind),
            "STRATA_REQUIRE names {kind}, but no {kind} device is listed: {}",
            why_not(kind)
        );
        eprintln!("no {kind} device, nothing checked: {}", why_not(kind));
    }
    devs
}

fn opencl_devices() -> Vec<Device> {
    devices_of(BackendKind::OpenCl)
}

/// Every OpenCL and CUDA device.
fn device_backends() -> Vec<Device> {
    let mut all = devices_of(BackendKind::OpenCl);
    all.extend(devices_of(BackendKind::Cuda));
    all
}

fn queues() -> Vec<Queue> {
    device_backends()
        .iter()
        .map(|d| Queue::new(d).expect("queue"))
        .collect()
}

#[test]
fn cuda_is_listed_or_explained() {
    let devs = devices_of(BackendKind::Cuda);
    let reason = strata::unavailable_backends()
        .into_iter()
        .find(|(b, _)| *b == BackendKind::Cuda);
    if devs.is_empty() {
        let (_, why) = reason.expect("no CUDA device and no reason in unavailable_backends()");
        assert!(why.contains("CUDA") || why.contains("NVRTC"), "{why}");
    } else {
        assert!(reason.is_none(), "{reason:?}");
        for (i, d) in devs.iter().enumerate() {
            let info = d.info();
            assert_eq!(info.spec(), format!("cuda:{i}"));
            assert_eq!(&Device::from_spec(&info.spec()).unwrap(), d);
            assert!(
                info.max_work_group_size >= 256 && info.compute_units > 0,
                "{info}"
            );
            assert!(info.local_mem_size >= 16 * 1024, "{info}");
            assert!(
                info.extra.iter().any(|(k, _)| k == "compute capability"),
                "{info}"
            );
        }
    }
}

#[test]
fn opencl_is_listed_or_explained() {
    let devs = opencl_devices();
    let reason = strata::unavailable_backends()
        .into_iter()
        .find(|(b, _)| *b == BackendKind::OpenCl);
    if devs.is_empty() {
        let (_, why) = reason.expect("no OpenCL device and no reason in unavailable_backends()");
        assert!(why.contains("OpenCL"), "{why}");
    } else {
        assert!(
            reason.is_none(),
            "OpenCL devices are listed, yet OpenCL is reported unavailable: {reason:?}"
        );
    }
}

#[test]
fn device_summaries() {
    for (i, d) in opencl_devices().iter().enumerate() {
        let info = d.info();
        let spec = format!("opencl:{i}");
        assert_eq!(info.index, i);
        assert_eq!(info.spec(), spec);
        assert_eq!(&Device::from_spec(&spec).unwrap(), d);
        assert!(!info.name.is_empty() && !info.vendor.is_empty(), "{info}");
        assert!(info.compute_units > 0, "{info}");
        assert!(info.max_work_group_size > 0, "{info}");
        assert!(info.max_work_item_sizes.iter().all(|&s| s > 0), "{info}");
        assert!(
            info.preferred_group_size >= 1
                && info.preferred_group_size <= 256
                && info.preferred_group_size <= info.max_work_group_size
                && info.preferred_group_size <= info.max_work_item_sizes[0],
            "{info}"
        );
        assert!(info.local_mem_size > 0, "{info}");
        assert!(info.global_mem_size > 0, "{info}");
        assert!(
            info.max_alloc_size > 0 && info.max_alloc_size <= info.global_mem_size,
            "{info}"
        );
        let extra = |k: &str| {
            info.extra
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no `{k}` in the summary of {spec}:\n{info}"))
        };
        assert!(!extra("platform").is_empty(), "{info}");
        assert!(extra("opencl version").starts_with("OpenCL "), "{info}");
        assert!(!extra("driver version").is_empty(), "{info}");
        let ty = extra("device type");
        assert!(
            ["GPU", "CPU", "accelerator", "custom"]
                .iter()
                .any(|t| ty.contains(t)),
            "{ty}"
        );
        let ext = extra("extensions");
        let has = |e: &str| ext.split(' ').any(|x| x == e);
        if has("cl_khr_fp64") {
            assert!(info.supports_f64, "{info}");
        }
        assert_eq!(
            info.supports_int64_atomics,
            has("cl_khr_int64_base_atomics") && has("cl_khr_int64_extended_atomics"),
            "{info}"
        );
    }
}

#[test]
fn buffers_round_trip_and_start_zeroed() {
    for q in queues() {
        let d = q.device().clone();
        for n in [0usize, 1, 3, 1000, 1 << 20] {
            let z = Buffer::<f32>::new(&d, n).unwrap();
            assert!(q.read(&z).unwrap().iter().all(|&v| v == 0.0), "n = {n}");
            let data: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect();
            let b = Buffer::from_slice(&q, &data).unwrap();
            assert_eq!(b.len(), n);
            assert_eq!(q.read(&b).unwrap(), data, "n = {n}");
        }
        let bytes: Vec<u8> = (0..=255).collect();
        let b = Buffer::from_slice(&q, &bytes).unwrap();
        assert_eq!(b.to_vec(&q).unwrap(), bytes);
        let wide = vec![-0.0f64, f64::NAN, f64::INFINITY, 1e-310, -1.5];
        let b = Buffer::from_slice(&q, &wide).unwrap();
        let back = q.read(&b).unwrap();
        assert!(wide
            .iter()
            .zip(&back)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        let v4 = vec![[1i16, -2, 3, -4], [5, 6, 7, 8]];
        let b = Buffer::from_slice(&q, &v4).unwrap();
        assert_eq!(q.read(&b).unwrap(), v4);
        // Memory freed and reused reads as zero again.
        for _ in 0..3 {
            let b = Buffer::<u64>::new(&d, 4096).unwrap();
            assert!(q.read(&b).unwrap().iter().all(|&v| v == 0));
            q.fill(&b, u64::MAX, 0..4096).unwrap();
        }
    }
}

/// A new allocation's zeroing is complete before the queue's first command on it runs: the
/// fill, write or kernel right after the allocation is never overwritten with zeros. (On
/// CUDA the zeroing was a memset issued to the legacy default stream, which the queues'
/// non-blocking streams do not wait for; a u64 sort on an H100 came back all zeros.) Large
/// buffers, so that a zeroing still running would overlap the next command.
#[test]
fn first_commands_on_new_memory_are_not_undone_by_its_zeroing() {
    let k = Kernel::build("fill_index", |kd| {
        let out = kd.write::<u32>("out");
        let i = global_id(0);
        out.set(i, i ^ 0x5A5A_5A5Au32);
    })
    .unwrap();
    for q in queues() {
        let d = q.device().clone();
        let n = 1usize << 24;
        let bad = |v: &[u32], want: &dyn Fn(usize) -> u32| {
            v.iter().enumerate().position(|(i, &x)| x != want(i))
        };
        for round in 0..4 {
            let b = Buffer::<u32>::new(&d, n).unwrap();
            q.fill(&b, 0xA5A5_A5A5, 0..n).unwrap();
            let v = q.read(&b).unwrap();
            assert_eq!(
                bad(&v, &|_| 0xA5A5_A5A5),
                None,
                "{}: fill, round {round}",
                d.info().spec()
            );
            let data: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect();
            let b = Buffer::from_slice(&q, &data).unwrap();
            let v = q.read(&b).unwrap();
            assert_eq!(
                bad(&v, &|i| data[i]),
                None,
                "{}: write, round {round}",
                d.info().spec()
            );
            let b = Buffer::<u32>::new(&d, n).unwrap();
            k.launch(&q, NdRange::new(n), args![&b]).unwrap();
            let v = q.read(&b).unwrap();
            assert_eq!(
                bad(&v, &|i| i as u32 ^ 0x5A5A_5A5A),
                None,
                "{}: kernel, round {round}",
                d.info().spec()
            );
        }
    }
}

#[test]
fn sub_range_write_read_copy() {
    for q in queues() {
        let a = Buffer::<i32>::from_slice(&q, &(0..100).collect::<Vec<_>>()).unwrap();
        q.write(&a, 10.., &[-1, -2, -3]).unwrap();
        assert_eq!(q.read_range(&a, 9..14).unwrap(), vec![9, -1, -2, -3, 13]);
        assert_eq!(q.read_range(&a, 99..100).unwrap(), vec![99]);
        assert_eq!(q.read_range(&a, 50..50).unwrap(), Vec::<i32>::new());

        let b = Buffer::<i32>::new(q.device(), 20).unwrap();
        q.copy(&a, 10..14, &b, 5..).unwrap();
        let mut want = vec![0; 20];
        want[5..9].copy_from_slice(&[-1, -2, -3, 13]);
        assert_eq!(q.read(&b).unwrap(), want);

        // Within one buffer, disjoint ranges.
        q.copy(&a, 0..10, &a, 90..).unwrap();
        assert_eq!(
            q.read_range(&a, 88..100).unwrap(),
            vec![88, 89, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
        let mut into = vec![0; 20];
        q.read_into(&b, &mut into).unwrap();
        assert_eq!(into, want);

        // Non-blocking forms, ordered by the in-order queue.
        let w = q.enqueue_write(&b, 0.., &[7, 7], &[]).unwrap();
        let r = q.enqueue_read(&b, 0..6, &[&w]).unwrap();
        assert_eq!(r.wait().unwrap(), vec![7, 7, 0, 0, 0, -1]);

        // Ranges outside the buffer are refused before reaching OpenCL.
        assert!(matches!(
            q.write(&b, 19.., &[1, 2]),
            Err(Error::BufferRange { op: "write", .. })
        ));
        assert!(matches!(
            q.copy(&a, 95..105, &b, 0..),
            Err(Error::BufferRange { op: "copy", .. })
        ));
    }
}

#[test]
fn fill_whole_elements() {
    for q in queues() {
        let b = Buffer::<f32>::new(q.device(), 1001).unwrap();
        q.fill(&b, 2.5, 1..1000).unwrap();
        let v = q.read(&b).unwrap();
        assert_eq!((v[0], v[1], v[999], v[1000]), (0.0, 2.5, 2.5, 0.0));
        assert!(v[1..1000].iter().all(|&x| x == 2.5));

        let bytes = Buffer::<u8>::new(q.device(), 7).unwrap();
        q.fill(&bytes, 0xab, 3..6).unwrap();
        assert_eq!(q.read(&bytes).unwrap(), vec![0, 0, 0, 0xab, 0xab, 0xab, 0]);

        let wide = Buffer::<[f64; 4]>::new(q.device(), 5).unwrap();
        q.fill(&wide, [1.0, -2.0, 3.0, -4.0], 2..5).unwrap();
        let v = q.read(&wide).unwrap();
        assert_eq!(v[1], [0.0; 4]);
        assert_eq!(v[4], [1.0, -2.0, 3.0, -4.0]);

        q.fill(&b, 9.0, 5..5).unwrap();
        assert_eq!(q.read_range(&b, 4..6).unwrap(), vec![2.5, 2.5]);
    }
}

/// A CPU-backend kernel that takes a while: one work-item counting to `n` in memory.
fn slow_cpu_kernel() -> Kernel {
    Kernel::build("count_slowly", |k| {
        let n = k.scalar::<u32>("n");
        let y = k.read_write::<u32>("y");
        for_range(0u32, n, |_| y.set(0u32, y.at(0u32) + 1u32));
    })
    .unwrap()
}

#[test]
fn wait_lists_across_the_cpu_and_device_backends() {
    let cpu = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let slow = slow_cpu_kernel();
    for q in queues() {
        // OpenCL after CPU.
        let counter = Buffer::<u32>::new(cpu.device(), 1).unwrap();
        let run = slow
            .enqueue(&cpu, NdRange::new(1), args![200_000u32, &counter], &[])
            .unwrap();
        let b = Buffer::<u32>::new(q.device(), 4).unwrap();
        let w = q
            .enqueue_write(&b, 0.., &[1, 2, 3, 4], &[run.event()])
            .unwrap();
        w.wait().unwrap();
        assert!(run.event().is_complete());
        let (first, then) = (run.event().profile().unwrap(), w.profile().unwrap());
        assert!(
            then.start >= first.end,
            "the OpenCL write started at {:?}, before the CPU kernel it waits for ended at {:?}",
            then.start,
            first.end
        );
        assert_eq!(cpu.read(&counter).unwrap(), vec![200_000]);

        // CPU after OpenCL, through two OpenCL queues.
        let q2 = Queue::new(q.device()).unwrap();
        let big = Buffer::<u32>::new(q.device(), 1 << 20).unwrap();
        let data: Vec<u32> = (0..1 << 20).collect();
        let w1 = q.enqueue_write(&big, 0.., &data, &[]).unwrap();
        let c = q2.enqueue_copy(&big, 1000..1004, &b, 0.., &[&w1]).unwrap();
        let on_cpu = Buffer::<u32>::new(cpu.device(), 4).unwrap();
        let f = cpu.enqueue_fill(&on_cpu, 5, 0..4, &[&c]).unwrap();
        let r = q.enqueue_read(&b, 0..4, &[&f]).unwrap();
        assert_eq!(r.wait().unwrap(), vec![1000, 1001, 1002, 1003]);
        assert!(c.is_complete() && w1.is_complete() && f.is_complete());
        assert!(c.profile().unwrap().start >= w1.profile().unwrap().end);
        assert!(f.profile().unwrap().start >= c.profile().unwrap().end);

        // A failed CPU command fails the OpenCL commands that wait for it; they do not run.
        let faulty = Kernel::build("faulty", |k| {
            let y = k.write::<u32>("y");
            y.set(global_id(0) + 10u32, 1u32);
        })
        .unwrap();
        let one = Buffer::<u32>::new(cpu.device(), 1).unwrap();
        let bad = faulty
            .enqueue(&cpu, NdRange::new(1), args![&one], &[])
            .unwrap();
        let skipped = q
            .enqueue_write(&b, 0.., &[9, 9, 9, 9], &[bad.event()])
            .unwrap();
        assert!(matches!(
            skipped.wait(),
            Err(Error::DependencyFailed(m)) if m.contains("out of bounds")
        ));
        assert_eq!(q.read(&b).unwrap(), vec![1000, 1001, 1002, 1003]);
        q.finish().unwrap();
        // The fault itself, observed here: until then it fails every later command of the CPU
        // queue (the next device's round uses that queue again).
        assert!(bad.wait().is_err());
    }
}

#[test]
fn profiling_times_are_ordered_and_plausible() {
    // Plain queues (host-observed times on CUDA) and profiling queues (device-measured).
    let profiling: Vec<Queue> = queues()
        .iter()
        .map(|q| Queue::with_profiling(q.device()).unwrap())
        .collect();
    for q in queues().into_iter().chain(profiling) {
        let n = 4 << 20;
        let b = Buffer::<u8>::new(q.device(), n).unwrap();
        let data = vec![1u8; n];
        let before = std::time::Instant::now();
        let e = q.enqueue_write(&b, 0.., &data, &[]).unwrap();
        let e2 = q.enqueue_fill(&b, 7, 0..n, &[&e]).unwrap();
        e2.wait().unwrap();
        let wall = before.elapsed();
        for ev in [&e, &e2] {
            let p = ev.profile().expect("profile of a completed command");
            assert!(p.submitted <= p.start && p.start <= p.end, "{p:?}");
            assert_eq!(p.duration, p.end - p.start);
            assert!(p.duration > std::time::Duration::ZERO, "{p:?}");
            assert!(
                p.duration <= wall,
                "{p:?} longer than the {wall:?} it all took"
            );
        }
        assert!(e2.profile().unwrap().start >= e.profile().unwrap().end);
        assert!(e2.duration().unwrap() > std::time::Duration::ZERO);
    }
}

#[test]
fn allocation_failures_name_the_device_and_size() {
    for d in device_backends() {
        let info = d.info();
        let too_big = info.max_alloc_size as usize + 1;
        match Buffer::<u8>::new(&d, too_big) {
            Err(Error::OutOfMemory {
                device, requested, ..
            }) => {
                assert_eq!(device, info.spec());
                assert_eq!(requested, too_big as u64);
            }
            other => panic!("expected OutOfMemory, got {other:?}"),
        }
        let msg = Buffer::<u64>::new(&d, usize::MAX).unwrap_err().to_string();
        assert!(
            msg.contains(&format!("out of memory on {}", info.spec())),
            "{msg}"
        );
    }
}

#[test]
fn a_kernel_with_bool_and_local_memory_arguments() {
    let k = Kernel::build("flagged", |k| {
        let flag = k.scalar::<bool>("flag");
        let a = k.scalar::<i8>("a");
        let x = k.read::<i32>("x");
        let y = k.write::<i32>("y");
        let tmp = k.local_array_dyn::<i32>("tmp");
        let (i, l) = (global_id(0), local_id(0));
        tmp.set(l, x.at(i));
        barrier();
        let v = tmp.at(local_size(0) - 1u32 - l);
        y.set(i, select::<i32>(flag, v + a.cast::<i32>(), v));
    })
    .unwrap();
    for q in queues() {
        let x = Buffer::from_slice(&q, &(0..64).collect::<Vec<i32>>()).unwrap();
        let y = Buffer::<i32>::new(q.device(), 64).unwrap();
        for (flag, add) in [(true, -100i32), (false, 0)] {
            k.launch(
                &q,
                NdRange::new(64).local(16),
                args![flag, -100i8, &x, &y, LocalMem::<i32>::new(16)],
            )
            .unwrap();
            let want: Vec<i32> = (0..64).map(|i| (i / 16 * 16 + 15 - i % 16) + add).collect();
            assert_eq!(q.read(&y).unwrap(), want, "flag = {flag}");
        }
        // An empty launch does nothing and succeeds.
        k.launch(
            &q,
            NdRange::new(0),
            args![true, 0i8, &x, &y, LocalMem::<i32>::new(1)],
        )
        .unwrap();
    }
}

#[test]
fn stub_without_a_source_for_the_device_is_rejected_before_the_driver() {
    let twice = Stub::<(f32,), f32>::new("twice").cpu(|x: f32| 2.0 * x);
    let k = Kernel::build("cpu_only_stub", |k| {
        let x = k.read_write::<f32>("x");
        let i = global_id(0);
        x.set(i, twice.call((x.at(i),)));
    })
    .unwrap();
    for q in queues() {
        let x = Buffer::from_slice(&q, &[1.0f32; 4]).unwrap();
        let msg = k
            .launch(&q, NdRange::new(4), args![&x])
            .unwrap_err()
            .to_string();
        let spec = q.device().info().spec();
        assert!(
            msg.contains(&format!("kernel `cpu_only_stub` cannot run on {spec}")),
            "{msg}"
        );
        let (language, key) = match q.device().info().backend {
            BackendKind::Cuda => ("CUDA C++", "cuda"),
            _ => ("OpenCL C", "opencl"),
        };
        assert!(
            msg.contains(&format!("stub function `twice` has no {language} source")),
            "{msg}"
        );
        assert!(msg.contains(&format!("Stub::source(\"{key}\"")), "{msg}");
    }
}
