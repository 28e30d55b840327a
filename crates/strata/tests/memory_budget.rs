//! Memory budgets: allocations beyond a device's budget fail with a typed error before the
//! driver is asked (drivers of host memory over-commit: PoCL went on past 8 GiB and the
//! process was killed), and memory is given back to the budget when its last user drops it.
//! One test, alone in its binary: the budget is per device, and devices are process-wide.

use strata::prelude::*;
use strata::{BackendKind, Error};

const MIB: u64 = 1 << 20;

#[test]
fn allocations_stop_at_the_budget_and_memory_comes_back() {
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"));
    let devices: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend != BackendKind::Cuda || d.info().global_mem_size > 256 * MIB)
        .collect();
    assert!(
        !required
            || devices
                .iter()
                .any(|d| d.info().backend == BackendKind::OpenCl),
        "STRATA_REQUIRE names opencl, but there is no OpenCL device"
    );
    for d in devices {
        let spec = d.info().spec();
        assert_eq!(d.memory_budget(), d.info().global_mem_size, "{spec}");
        let base = d.memory_in_use();
        d.set_memory_budget(Some(base + 64 * MIB));
        let mut kept = Vec::new();
        let err = loop {
            match Buffer::<u8>::new(&d, 16 * MIB as usize) {
                Ok(b) => kept.push(b),
                Err(e) => break e,
            }
            assert!(
                kept.len() <= 4,
                "{spec}: the budget did not stop allocation"
            );
        };
        assert_eq!(kept.len(), 4, "{spec}");
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "out of memory on {spec}: cannot allocate {} bytes (strata's allocations on it \
                 hold {} bytes of its {}-byte budget (set by Device::set_memory_budget))",
                16 * MIB,
                base + 64 * MIB,
                base + 64 * MIB
            )
        );
        assert_eq!(d.memory_in_use(), base + 64 * MIB, "{spec}");
        // A clone shares the memory: dropping one handle gives nothing back.
        let clone = kept[0].clone();
        kept.remove(0);
        assert!(Buffer::<u8>::new(&d, 16 * MIB as usize).is_err(), "{spec}");
        // The last handle does; and memory a command still uses comes back once it is done.
        let q = Queue::new(&d).unwrap();
        q.enqueue_fill(&clone, 7u8, 0..clone.len(), &[]).unwrap();
        drop(clone);
        q.finish().unwrap();
        assert_eq!(d.memory_in_use(), base + 48 * MIB, "{spec}");
        let again = Buffer::<u8>::new(&d, 16 * MIB as usize).unwrap();
        assert_eq!(q.read(&again).unwrap()[..4], [0, 0, 0, 0], "{spec}: zeroed");
        drop((again, kept));
        assert_eq!(d.memory_in_use(), base, "{spec}");
        d.set_memory_budget(None);
        assert_eq!(d.memory_budget(), d.info().global_mem_size, "{spec}");
    }
    host_memory_devices_stop_at_what_the_host_has_left();
}

/// On the devices whose memory is the host's, an allocation larger than what the host has left
/// fails at once, naming the limit, instead of being over-committed.
fn host_memory_devices_stop_at_what_the_host_has_left() {
    for d in strata::devices().into_iter().filter(|d| d.info().is_cpu()) {
        let spec = d.info().spec();
        // Only where the largest allocation exceeds what the host has left can one allocation
        // show it (elsewhere it would succeed, and really take that memory).
        let available = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("MemAvailable:"))
                    .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            })
            .map(|kib| kib * 1024);
        let largest = d.info().max_alloc_size;
        if available.is_none_or(|a| largest <= a) {
            eprintln!("{spec}: its largest allocation ({largest} bytes) fits MemAvailable ({available:?}): nothing to show");
            continue;
        }
        d.set_memory_budget(Some(u64::MAX));
        let e = Buffer::<u8>::new(&d, largest as usize).unwrap_err();
        d.set_memory_budget(None);
        let msg = e.to_string();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
        assert!(
            msg.contains("the device's memory is the host's, which has"),
            "{spec}: {msg}"
        );
    }
}
