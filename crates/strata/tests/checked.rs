//! Checked mode (`+checked` device specs, `Device::checked`): out-of-bounds accesses found on
//! every present backend, reported with the kernel, memory, index, work-item and source line;
//! spec parsing; separate caching. (The planted-bug suite of `strata check` covers every defect
//! kind on every device; these are the library's own tests.)

use std::sync::Mutex;
use strata::prelude::*;
use strata::Error;

/// The tests run one at a time: `checked_kernels_are_cached_apart` counts compilations, which
/// the devices count for all their users.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every present device that can run the tests here, in checked mode.
fn checked_devices() -> Vec<Device> {
    strata::devices()
        .into_iter()
        .filter(|d| d.info().backend != strata::BackendKind::Cuda || cfg!(feature = "cuda"))
        .map(|d| d.checked())
        .collect()
}

fn expect_oob(r: strata::Result<strata::Run>) -> (String, Error) {
    match r {
        Err(e @ Error::OutOfBounds { .. }) => (e.to_string(), e),
        Err(e) => panic!("expected OutOfBounds, got {e}"),
        Ok(_) => panic!("expected OutOfBounds, the launch succeeded"),
    }
}

#[test]
fn specs_parse_with_checked() {
    let _one = serial();
    for spec in ["cpu+checked", "interp+checked", " cpu+checked "] {
        let d = Device::from_spec(spec).unwrap();
        assert!(d.is_checked(), "{spec}");
        assert_eq!(d.spec(), spec.trim());
    }
    let plain = Device::from_spec("cpu").unwrap();
    assert!(!plain.is_checked());
    assert_eq!(plain.checked().unchecked().spec(), "cpu");
    // Same memory: equal.
    assert_eq!(plain, plain.checked());
    for bad in ["cpu+checked+checked", "cpu+fast", "+checked"] {
        let e = Device::from_spec(bad).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidDeviceSpec(s) if s == bad.trim()),
            "{bad}: {e}"
        );
        assert!(e.to_string().contains("+checked"), "{e}");
    }
}

#[test]
fn out_of_bounds_global_store_names_line_and_work_item() {
    let _one = serial();
    for dev in checked_devices() {
        let q = Queue::new(&dev).unwrap();
        let mut line = 0;
        let k = Kernel::build("oob_store", |k| {
            let x = k.write::<u32>("x");
            let i = global_id(0);
            if_(i.eq(6u32), || {
                line = line!() + 1;
                x.set(i + 100u32, 1u32);
            });
            if_(i.lt(16u32), || x.set(i, i));
        })
        .unwrap();
        let x = Buffer::<u32>::new(&q, 16).unwrap();
        let (m, e) = expect_oob(k.launch(&q, NdRange::new(16).local(4), args![&x]));
        let at = format!("tests/checked.rs:{line}:");
        for part in [
            "kernel `oob_store`",
            "index 106 is out of bounds for buffer `x` of length 16",
            "global (6, 0, 0), local (2, 0, 0) in work-group (1, 0, 0)",
            at.as_str(),
        ] {
            assert!(m.contains(part), "{}: `{m}` lacks `{part}`", dev.spec());
        }
        if let Error::OutOfBounds { at, .. } = e {
            assert_eq!(at.line(), Some(line));
        }
        // The faulting store was skipped, the others ran.
        let got = q.read(&x).unwrap();
        assert_eq!(got, (0..16).collect::<Vec<u32>>(), "{}", dev.spec());
    }
}

#[test]
fn out_of_bounds_load_gives_zero_and_local_and_private_are_checked() {
    let _one = serial();
    for dev in checked_devices() {
        let q = Queue::new(&dev).unwrap();
        let k = Kernel::build("oob_local", |k| {
            let out = k.write::<u32>("out");
            let tile = k.local_array::<u32>("tile", 8);
            let i = local_id(0);
            tile.set(i, i + 1u32);
            barrier();
            // Work-item 3 reads tile[9].
            let j = select::<u32>(i.eq(3u32), 9u32, i);
            out.set(global_id(0), tile.at(j));
        })
        .unwrap();
        let out = Buffer::<u32>::new(&q, 8).unwrap();
        let (m, _) = expect_oob(k.launch(&q, NdRange::new(8).local(8), args![&out]));
        assert!(
            m.contains("index 9 is out of bounds for local array `tile` of length 8")
                && m.contains("local (3, 0, 0)"),
            "{}: {m}",
            dev.spec()
        );
        assert_eq!(
            q.read(&out).unwrap(),
            [1, 2, 3, 0, 5, 6, 7, 8],
            "{}",
            dev.spec()
        );

        let k = Kernel::build("oob_private", |k| {
            let out = k.write::<u32>("out");
            let p = private_array::<u32>("p", 4);
            for c in 0..4u32 {
                p.set(c, c);
            }
            let i = global_id(0);
            out.set(i, p.at(i));
        })
        .unwrap();
        let (m, _) = expect_oob(k.launch(&q, NdRange::new(8).local(8), args![&out]));
        assert!(
            m.contains("index 4 is out of bounds for private array `p` of length 4"),
            "{}: {m}",
            dev.spec()
        );
    }
}

#[test]
fn launch_sized_local_arrays_are_checked() {
    let _one = serial();
    for dev in checked_devices() {
        let q = Queue::new(&dev).unwrap();
        let k = Kernel::build("oob_dyn", |k| {
            let out = k.write::<u32>("out");
            let tile = k.local_array_dyn::<u32>("tile");
            let i = local_id(0);
            tile.set(i, i);
            barrier();
            out.set(global_id(0), tile.at(i));
        })
        .unwrap();
        let out = Buffer::<u32>::new(&q, 8).unwrap();
        let ok = k.launch(
            &q,
            NdRange::new(8).local(8),
            args![&out, LocalMem::<u32>::new(8)],
        );
        assert!(ok.is_ok(), "{}: {:?}", dev.spec(), ok.err());
        let (m, _) = expect_oob(k.launch(
            &q,
            NdRange::new(8).local(8),
            args![&out, LocalMem::<u32>::new(6)],
        ));
        assert!(
            m.contains("index 6 is out of bounds for local array `tile` of length 6"),
            "{}: {m}",
            dev.spec()
        );
    }
}

#[test]
fn checked_kernels_are_cached_apart() {
    let _one = serial();
    let plain = Device::from_spec("cpu").unwrap();
    let checked = plain.checked();
    let k = Kernel::build("cache_apart", |k| {
        let x = k.write::<u32>("x");
        x.set(global_id(0), 7u32);
    })
    .unwrap();
    let before = plain.compile_count();
    plain.compile(&k).unwrap();
    checked.compile(&k).unwrap();
    checked.compile(&k).unwrap();
    plain.compile(&k).unwrap();
    assert_eq!(plain.compile_count() - before, 2, "one plain, one checked");
}

/// The line `oob_macro`'s store is on.
const MACRO_STORE_LINE: u32 = line!() + 6;

#[kernel]
fn oob_macro(x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let v = x[i];
    out[i + 1u32] = v;
}

#[test]
fn kernel_macro_errors_point_at_the_functions_line() {
    let _one = serial();
    for dev in checked_devices() {
        let q = Queue::new(&dev).unwrap();
        let k = oob_macro::build().unwrap();
        let x = Buffer::from_slice(&q, &[1u32, 2, 3, 4]).unwrap();
        let out = Buffer::<u32>::new(&q, 4).unwrap();
        let r = k.launch(&q, NdRange::new(4), &x, &out);
        let (m, e) = expect_oob(r);
        assert!(
            m.contains("index 4 is out of bounds for buffer `out` of length 4")
                && m.contains("global (3, 0, 0)"),
            "{}: {m}",
            dev.spec()
        );
        match e {
            Error::OutOfBounds { at, .. } => {
                assert!(
                    at.file().is_some_and(|f| f.ends_with("tests/checked.rs")),
                    "{at}"
                );
                assert_eq!(at.line(), Some(MACRO_STORE_LINE), "{m}");
            }
            e => panic!("no source location: {e:?}"),
        }
    }
}

#[test]
fn races_and_uninitialized_reads_on_the_interpreter() {
    let _one = serial();
    let dev = Device::from_spec("interp+checked").unwrap();
    assert!(dev.finds_races() && dev.finds_uninit_buffer_reads());
    assert!(Device::from_spec("cpu+checked").unwrap().finds_races());
    assert!(!Device::from_spec("cpu+checked")
        .unwrap()
        .finds_uninit_buffer_reads());
    assert!(!Device::from_spec("interp").unwrap().finds_races());
    let q = Queue::new(&dev).unwrap();
    // Work-item i writes x[i] and reads x[i + 1] in the same phase: a race; with a barrier
    // between the read and the write (the classic fix), none.
    for fixed in [false, true] {
        let k = Kernel::build("shift", |k| {
            let x = k.read_write::<u32>("x");
            let i = local_id(0);
            let v = x.at((i + 1u32) % 8u32);
            if fixed {
                barrier();
            }
            x.set(i, v);
        })
        .unwrap();
        let x = Buffer::from_slice(&q, &[0u32, 1, 2, 3, 4, 5, 6, 7]).unwrap();
        let r = k.launch(&q, NdRange::new(8).local(8), args![&x]);
        if fixed {
            r.unwrap();
            assert_eq!(q.read(&x).unwrap(), [1, 2, 3, 4, 5, 6, 7, 0]);
        } else {
            let m = match r {
                Err(e @ Error::DataRace { .. }) => e.to_string(),
                r => panic!("expected a data race, got {r:?}"),
            };
            assert!(
                m.contains(
                    "data race on element 0 of buffer `x`: write by work-item global (0, 0, 0)"
                ) && m.contains("read by work-item global (7, 0, 0)")
                    && m.contains("with no barrier between them"),
                "{m}"
            );
        }
    }
    // Atomics never race.
    let k = Kernel::build("count", |k| {
        let c = k.read_write::<u32>("c");
        c.atomic_add(0u32, 1u32);
    })
    .unwrap();
    let c = Buffer::<u32>::new(&q, 1).unwrap();
    k.launch(&q, NdRange::new(64).local(16), args![&c]).unwrap();
    assert_eq!(q.read(&c).unwrap(), [64]);
    // A buffer made by Buffer::uninit and written by a launch that is not checked (whose
    // writes are not followed) counts as written: no false report.
    let cpu_q = Queue::new(&dev.unchecked()).unwrap();
    let x = Buffer::<u32>::uninit(&cpu_q, 8).unwrap();
    let fill = Kernel::build("fill_x", |k| {
        let x = k.write::<u32>("x");
        x.set(global_id(0), 5u32);
    })
    .unwrap();
    fill.launch(&cpu_q, NdRange::new(8), args![&x]).unwrap();
    let read = Kernel::build("read_x", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        out.set(global_id(0), x.at(global_id(0)));
    })
    .unwrap();
    let out = Buffer::<u32>::new(&q, 8).unwrap();
    read.launch(&q, NdRange::new(8), args![&x, &out]).unwrap();
    assert_eq!(q.read(&out).unwrap(), [5; 8]);
    // Unwritten, it is reported.
    let y = Buffer::<u32>::uninit(&q, 8).unwrap();
    match read.launch(&q, NdRange::new(8), args![&y, &out]) {
        Err(Error::UninitializedRead { index: 0, .. }) => {}
        r => panic!("expected an uninitialized read, got {r:?}"),
    }
}

#[test]
fn the_same_kernel_recorded_twice_compiles_once_and_names_its_own_lines() {
    let _one = serial();
    let dev = Device::from_spec("interp").unwrap();
    let q = Queue::new(&dev).unwrap();
    let line_a = line!() + 3;
    let a = Kernel::build("recorded_twice", |k| {
        let x = k.write::<u32>("x");
        x.set(global_id(0) + 1u32, 1u32);
    })
    .unwrap();
    let line_b = line!() + 3;
    let b = Kernel::build("recorded_twice", |k| {
        let x = k.write::<u32>("x");
        x.set(global_id(0) + 1u32, 1u32);
    })
    .unwrap();
    assert_eq!(a.ir_text(), b.ir_text());
    let before = dev.compile_count();
    dev.compile(&a).unwrap();
    dev.compile(&b).unwrap();
    assert_eq!(dev.compile_count() - before, 1, "one compilation for both");
    let x = Buffer::<u32>::new(&q, 4).unwrap();
    // Checked mode names each kernel's own line; the plain CPU backends' own check names the
    // line compiled into the shared code (the first recording's).
    let checked = Queue::new(&dev.checked()).unwrap();
    for (k, line) in [(&a, line_a), (&b, line_b)] {
        for (q, want) in [(&checked, [line, line]), (&q, [line_a, line_b])] {
            match k.launch(q, NdRange::new(4), args![&x]) {
                Err(Error::OutOfBounds { at, .. }) => assert!(
                    want.iter().any(|&l| at.line() == Some(l)),
                    "{}: {at}",
                    q.device().spec()
                ),
                r => panic!("expected OutOfBounds, got {r:?}"),
            }
        }
    }
}

/// No kernel takes the process down: outside checked mode, on every device that runs kernels
/// in the host's memory (the CPU backends, PoCL and any OpenCL device of type CPU), a read at
/// index 2^30 fails the launch with `OutOfBounds` (PoCL died of SIGSEGV before: its kernels
/// read the host's memory), and the queue stays usable.
#[test]
fn a_far_read_outside_checked_mode_is_out_of_bounds_on_host_memory_devices() {
    let _one = serial();
    let k = Kernel::build("far_read", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let j = select::<u32>(i.eq(3u32), lit(1u32 << 30), i);
        out.set(i, x.at(j) + 1u32);
    })
    .unwrap();
    let devices: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().is_cpu())
        .collect();
    let specs: Vec<String> = devices.iter().map(|d| d.spec()).collect();
    assert!(specs.iter().any(|s| s == "cpu"), "{specs:?}");
    if std::env::var("STRATA_REQUIRE").is_ok_and(|r| r.contains("opencl")) {
        assert!(specs.iter().any(|s| s.starts_with("opencl:")), "{specs:?}");
    }
    for dev in devices {
        let q = Queue::new(&dev).unwrap();
        let x = Buffer::from_slice(&q, &[7u32; 16]).unwrap();
        let out = Buffer::<u32>::new(&q, 16).unwrap();
        let (m, _) = expect_oob(k.launch(&q, NdRange::new(16).local(4), args![&x, &out]));
        for part in [
            "kernel `far_read`",
            "index 1073741824 is out of bounds for buffer `x` of length 16",
            "global (3, 0, 0)",
        ] {
            assert!(m.contains(part), "{}: `{m}` lacks `{part}`", dev.spec());
        }
        // The queue runs the next launch.
        let ok = Kernel::build("near_read", |k| {
            let x = k.read::<u32>("x");
            let out = k.write::<u32>("out");
            let i = global_id(0);
            out.set(i, x.at(i) + 1u32);
        })
        .unwrap();
        ok.launch(&q, NdRange::new(16).local(4), args![&x, &out])
            .unwrap();
        assert_eq!(q.read(&out).unwrap(), vec![8u32; 16], "{}", dev.spec());
    }
}

/// A kernel indexing a buffer by its own global id (`c[i] = a[i] + b[i]`) needs no race
/// shadow for it where the launch keeps the work-items apart (a 1-D range: the launch passes
/// a one-word shadow and the checks are skipped), but keeps it in a 2-D range, where
/// work-items `(x, 0)` and `(x, 1)` write one element; a neighbour's read (`x[i + 1]`) keeps
/// the shadow in every range.
#[test]
fn own_index_buffers_skip_the_race_shadow_where_the_range_keeps_work_items_apart() {
    let _one = serial();
    let vadd = Kernel::build("own_vadd", |k| {
        let a = k.read::<u32>("a");
        let b = k.read::<u32>("b");
        let c = k.write::<u32>("c");
        let i = global_id(0);
        if_(i.lt(c.len()), || c.set(i, a.at(i) + b.at(i)));
    })
    .unwrap();
    let shift = Kernel::build("own_shift", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        if_((i + 1u32).lt(x.len()), || {
            let v = x.at(i + 1u32);
            x.set(i, v);
        });
    })
    .unwrap();
    let own = |k: &Kernel| -> Vec<Option<strata::ir::checked::OwnIndex>> {
        let f = k.checked_function().unwrap();
        f.function()
            .hidden
            .iter()
            .filter_map(|h| match h.role {
                strata::ir::HiddenRole::Shadow { own, .. } => Some(own),
                _ => None,
            })
            .collect()
    };
    let vadd_own = own(&vadd);
    assert_eq!(vadd_own.len(), 1, "one shadow, of `c`");
    let o = vadd_own[0].expect("c is indexed by the global id");
    assert!(o.keeps_apart([64, 1, 1], [16, 1, 1]));
    assert!(!o.keeps_apart([32, 2, 1], [16, 1, 1]));
    // x[i + 1] beside x[i]: neighbours reach one element in every range of more than one
    // work-item, so the shadow stays.
    let shift_own = own(&shift);
    assert_eq!(shift_own.len(), 1);
    assert!(shift_own[0].is_none_or(
        |o| !o.keeps_apart([8, 1, 1], [8, 1, 1]) && !o.keeps_apart([64, 1, 1], [1, 1, 1])
    ));
    for dev in checked_devices() {
        let q = Queue::new(&dev).unwrap();
        let a = Buffer::from_slice(&q, &[1u32; 64]).unwrap();
        let b = Buffer::from_slice(&q, &[2u32; 64]).unwrap();
        let c = Buffer::<u32>::new(&q, 64).unwrap();
        let r = vadd.launch(&q, NdRange::new(64).local(16), args![&a, &b, &c]);
        assert!(r.is_ok(), "{}: {:?}", dev.spec(), r.err());
        assert_eq!(q.read(&c).unwrap(), [3u32; 64], "{}", dev.spec());
        let race = |r: strata::Result<strata::Run>, what: &str| match r {
            Err(e @ Error::DataRace { .. }) => e.to_string(),
            r => panic!("{}: {what}: expected a data race, got {r:?}", dev.spec()),
        };
        let m = race(
            vadd.launch(&q, NdRange::new([32, 2]).local([16, 1]), args![&a, &b, &c]),
            "a 2-D launch of own_vadd",
        );
        assert!(m.contains("buffer `c`"), "{}: {m}", dev.spec());
        let x = Buffer::from_slice(&q, &[0u32, 1, 2, 3, 4, 5, 6, 7]).unwrap();
        let m = race(
            shift.launch(&q, NdRange::new(8).local(8), args![&x]),
            "own_shift",
        );
        assert!(m.contains("buffer `x`"), "{}: {m}", dev.spec());
    }
}

/// A local tile every work-item reads (no race among the readers) and then writes at another
/// work-item's index: with no barrier between, a write-after-read race (the reader the
/// write finds recorded is another work-item's); with a barrier, none (the recorded reader
/// is of an earlier phase). A read of the neighbour's element right after the own write
/// (both written before a barrier first) is a read-after-write race naming both lines. A buffer only written (`out`, every element once) is clean in a 2-D range where
/// it keeps its shadow.
#[test]
fn local_tiles_read_by_everybody_then_written_at_others_indices() {
    let _one = serial();
    let build = |name: &str, barrier_before_write: bool| {
        Kernel::build(name, move |k| {
            let out = k.write::<u32>("out");
            let tile = k.local_array::<u32>("tile", 8);
            let i = local_id(0);
            tile.set(i, i + 1u32);
            barrier();
            let s = var(0u32);
            for_range(0u32, 8u32, |j| s.set(s.get() + tile.at(j)));
            if barrier_before_write {
                barrier();
            }
            tile.set((i + 1u32) % 8u32, s.get());
            barrier();
            out.set(global_id(0) + global_id(1) * 8u32, tile.at(i));
        })
        .unwrap()
    };
    let racy = build("tile_war", false);
    let fixed = build("tile_war_fixed", true);
    let raw = Kernel::build("tile_raw", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array::<u32>("tile", 8);
        let i = local_id(0);
        tile.set(i, i + 1u32);
        barrier();
        tile.set(i, i + 2u32);
        out.set(global_id(0), tile.at((i + 7u32) % 8u32));
    })
    .unwrap();
    for dev in checked_devices().into_iter().filter(|d| d.finds_races()) {
        let q = Queue::new(&dev).unwrap();
        let out = Buffer::<u32>::new(&q, 16).unwrap();
        let r = fixed.launch(&q, NdRange::new([8, 2]).local([8, 1]), args![&out]);
        assert!(r.is_ok(), "{}: {:?}", dev.spec(), r.err());
        assert_eq!(q.read(&out).unwrap(), [36u32; 16], "{}", dev.spec());
        for (k, what) in [(&racy, "write at 1 after the others read"), (&raw, "read")] {
            let m = match k.launch(&q, NdRange::new(8).local(8), args![&out]) {
                Err(e @ Error::DataRace { .. }) => e.to_string(),
                r => panic!("{}: {what}: expected a data race, got {r:?}", dev.spec()),
            };
            assert!(
                m.contains("local array `tile`") && m.matches("checked.rs:").count() >= 2,
                "{}: {m}",
                dev.spec()
            );
        }
    }
}
