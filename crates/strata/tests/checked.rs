//! Checked mode (`+checked` device specs, `Device::checked`): out-of-bounds accesses found on
//! every present backend, reported with the kernel, memory, index, work-item and source line;
//! spec parsing; separate caching. (The planted-bug suite of `strata check` covers every defect
//! kind on every device; these are the library's own tests.)

use strata::prelude::*;
use strata::Error;

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
        let (m, e) = expect_oob(q.launch(&k, NdRange::new(16).local(4), args![&x]));
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
            assert_eq!(at.map(|l| l.line()), Some(line));
        }
        // The faulting store was skipped, the others ran.
        let got = q.read(&x).unwrap();
        assert_eq!(got, (0..16).collect::<Vec<u32>>(), "{}", dev.spec());
    }
}

#[test]
fn out_of_bounds_load_gives_zero_and_local_and_private_are_checked() {
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
        let (m, _) = expect_oob(q.launch(&k, NdRange::new(8).local(8), args![&out]));
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
        let (m, _) = expect_oob(q.launch(&k, NdRange::new(8).local(8), args![&out]));
        assert!(
            m.contains("index 4 is out of bounds for private array `p` of length 4"),
            "{}: {m}",
            dev.spec()
        );
    }
}

#[test]
fn launch_sized_local_arrays_are_checked() {
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
        let ok = q.launch(
            &k,
            NdRange::new(8).local(8),
            args![&out, LocalMem::<u32>::new(8)],
        );
        assert!(ok.is_ok(), "{}: {:?}", dev.spec(), ok.err());
        let (m, _) = expect_oob(q.launch(
            &k,
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
