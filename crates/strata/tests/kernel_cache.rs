//! The device kernel cache's capacity and eviction (its own test binary: it changes the
//! capacity of the process-wide CPU device).

use strata::prelude::*;

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
