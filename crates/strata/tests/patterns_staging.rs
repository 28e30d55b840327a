//! Multi-staging of pattern kernels: host values known at run time (elements per work-item, a
//! value captured by a `map` closure) specialize the kernels, and a kernel is compiled again
//! only when such a staged value changes, never for other data, sizes or offsets. Its own test
//! binary, so that no other test compiles kernels on the devices while it counts.
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use strata::patterns::*;
use strata::prelude::*;
use strata::BackendKind;

#[test]
fn kernels_recompile_only_when_a_staged_value_changes() {
    let devs = strata::devices();
    let required =
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == "opencl"));
    assert!(
        !required || devs.iter().any(|d| d.info().backend == BackendKind::OpenCl),
        "STRATA_REQUIRE names opencl, but no OpenCL device is listed"
    );
    for d in devs {
        let spec = d.info().spec();
        let q = Queue::new(&d).unwrap();
        let ex = Exec::new(&q).with_items_per_thread(3).unwrap();
        let x = DeviceVec::from_slice(&ex, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let y = DeviceVec::from_slice(&ex, &vec![1.0f32; 100_000]).unwrap();
        let dot = |ex: &Exec, a: &DeviceVec<f32>, scale: f32| {
            zip(a, a)
                .map(move |(p, q)| p * q * scale)
                .sum::<f32>(ex)
                .unwrap()
        };
        let both = |ex: &Exec, scale: f32| {
            assert_eq!(dot(ex, &x, scale), 30.0 * scale);
            assert_eq!(dot(ex, &y, scale), 100_000.0 * scale);
        };
        both(&ex, 1.0);
        let c0 = d.compile_count();
        // Other data, sizes and offsets are launch parameters: nothing is compiled.
        both(&ex, 1.0);
        assert_eq!(dot(&ex, &x.slice(1..3).unwrap(), 1.0), 13.0);
        assert_eq!(dot(&ex, &y.slice(7..90_007).unwrap(), 1.0), 90_000.0);
        assert_eq!(d.compile_count(), c0, "{spec}: same staging, other data");
        // constant() values are launch parameters too.
        let c = |k: f32| {
            zip(&x, constant(k, 4))
                .map(|(a, b)| a * b)
                .sum::<f32>(&ex)
                .unwrap()
        };
        assert_eq!(c(2.0), 20.0);
        let c1 = d.compile_count();
        assert_eq!(c(5.0), 50.0);
        assert_eq!(d.compile_count(), c1, "{spec}: constant() is not staged");
        // A value captured by the map closure is staged: the first pass (which traces the
        // closure) compiles once for the new value, then both values are cached.
        both(&ex, 2.0);
        assert_eq!(d.compile_count(), c1 + 1, "{spec}: a new staged scale");
        both(&ex, 2.0);
        both(&ex, 1.0);
        assert_eq!(d.compile_count(), c1 + 1, "{spec}: both scales cached");
        // Elements per work-item are staged (every pass unrolls by it).
        let ex5 = ex.with_items_per_thread(5).unwrap();
        both(&ex5, 1.0);
        let c2 = d.compile_count();
        assert!(c2 > c1 + 1, "{spec}: a new items-per-thread compiles");
        both(&ex5, 1.0);
        both(&ex, 1.0);
        assert_eq!(d.compile_count(), c2, "{spec}: both stagings cached");
    }
}
