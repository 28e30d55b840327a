//! Helpers of the tests that queue work behind a running kernel (`futures`, `transfers`),
//! included with `#[path]` (a file in a subfolder of `tests/` is no test of its own).

use strata::prelude::*;
use strata::BackendKind;

/// Whether `STRATA_REQUIRE` (comma-separated) names backend `what`.
pub fn required(what: &str) -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == what))
}

/// `cpu`, `interp` and every OpenCL and Vulkan device: all but CUDA's, which `gpu_backends`
/// covers where there is one. No OpenCL device fails where `STRATA_REQUIRE` names `opencl`;
/// elsewhere it is said (`what`: what the test checks).
pub fn devices(what: &str) -> Vec<Device> {
    let all: Vec<Device> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend != BackendKind::Cuda)
        .collect();
    if !all.iter().any(|d| d.info().backend == BackendKind::OpenCl) {
        assert!(
            !required("opencl"),
            "STRATA_REQUIRE names opencl, but no OpenCL device is listed"
        );
        eprintln!("no OpenCL device: {what} checked on the others only");
    }
    all
}

/// A kernel (named `name`) that keeps each work-item busy for `n` iterations, then writes
/// `x[i] = i + 1`.
pub fn spin(name: &str) -> Kernel {
    Kernel::build(name, |k| {
        let n = k.scalar::<u32>("n");
        let x = k.write::<u32>("x");
        let i = global_id(0);
        let acc = var::<u32>(i);
        for_range(0u32, n, |j| acc.set(acc.get() * 1_664_525u32 + j));
        if_(i.lt(x.len()), || {
            x.set(i, select(acc.get().eq(0xffff_ffffu32), acc.get(), i + 1u32))
        });
    })
    .unwrap()
}

/// Iterations of [`spin`] that keep `device` busy for a while: `interp` on the interpreter
/// (it is slower), half the driver's loop limit where it has one (lavapipe ends loops after
/// 65,535 iterations, and strata reports that as a fault), else `other`.
pub fn busy(device: &Device, interp: u32, other: u32) -> u32 {
    if device.spec().starts_with("interp") {
        interp
    } else if let Some(limit) = device.info().loop_iteration_limit {
        (limit / 2) as u32
    } else {
        other
    }
}
