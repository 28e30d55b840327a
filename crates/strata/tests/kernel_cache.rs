//! The device kernel cache: compiling once under concurrent requests, capacity and eviction.
//! Its own test binary, and its tests one at a time: they count the compilations of the
//! process-wide devices, and one changes the CPU device's capacity.

use std::sync::{Mutex, MutexGuard};
use strata::prelude::*;

/// Held by each test: no other test compiles meanwhile.
fn alone() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A kernel unique to `n`; `twin` records other IR (`n * 1`) that optimizes to the same
/// kernel, so it is a new kernel object that meets the first one's compiled code in the
/// device's cache (a kernel object keeps the code it was compiled to itself).
fn kernel(n: u32, twin: bool) -> Kernel {
    Kernel::build("cached", |k| {
        let x = k.read_write::<u32>("x");
        let v = if twin { lit(n) * 1u32 } else { lit(n) };
        x.set(0u32, x.at(0u32) + v);
    })
    .unwrap()
}

#[test]
fn the_least_recently_used_kernels_are_evicted_beyond_the_capacity() {
    let _alone = alone();
    let d = Device::from_spec("cpu").unwrap();
    assert_eq!(strata::KERNEL_CACHE_CAPACITY, 1024);
    d.set_kernel_cache_capacity(3);
    let before = d.compile_count();
    for n in 1..=5 {
        d.compile(&kernel(n, false)).unwrap();
    }
    assert_eq!(d.compile_count(), before + 5);
    assert_eq!(d.cached_kernels(), 3);
    // The cache holds 3, 4 and 5; kernel 3's twin uses 3 (a hit), so the next new kernel
    // evicts 4, the least recently used.
    d.compile(&kernel(3, true)).unwrap();
    assert_eq!(d.compile_count(), before + 5, "kernel 3 was kept");
    d.compile(&kernel(6, false)).unwrap();
    d.compile(&kernel(4, true)).unwrap();
    assert_eq!(d.compile_count(), before + 7, "kernel 4 was evicted");
    d.compile(&kernel(1, true)).unwrap();
    assert_eq!(
        d.compile_count(),
        before + 8,
        "kernel 1 was evicted long ago"
    );
    assert_eq!(d.cached_kernels(), 3);

    d.clear_kernel_cache();
    assert_eq!(d.cached_kernels(), 0);
    d.set_kernel_cache_capacity(strata::KERNEL_CACHE_CAPACITY);
}

/// Eight threads asking for the same new kernel at once compile it once per device (the others
/// wait for that compilation).
#[test]
fn concurrent_builds_compile_once() {
    let _alone = alone();
    for d in strata::devices() {
        let before = d.compile_count();
        // A kernel no other test builds, new for this device.
        let salt = d.info().spec().len() as u32 * 7919 + 17;
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let k = Kernel::build("compiled_once", |k| {
                        let x = k.read_write::<u32>("x");
                        let i = global_id(0);
                        x.set(i, x.at(i) * salt + 1u32);
                    })
                    .unwrap();
                    barrier.wait();
                    d.compile(&k).unwrap();
                });
            }
        });
        assert_eq!(d.compile_count() - before, 1, "{}", d.info().spec());
    }
}
