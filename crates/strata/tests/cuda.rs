//! The CUDA backend's compiler side, which needs NVRTC but no GPU: compile errors carry NVRTC's
//! log and the numbered source, stubs without CUDA source are refused, and CUBINs go through the
//! disk cache. (The PTX cache across processes and a missing NVRTC are tested through
//! `strata ptx`, in the strata-cli crate.) (The runtime on a GPU is covered by `gpu_backends.rs`, the
//! conformance suite and the differential tests, which run on every CUDA device present.)
//!
//! NVRTC missing is a failure when `STRATA_REQUIRE` names `nvrtc` (scripts/test.sh sets it);
//! otherwise the tests that need it are skipped.

use strata::prelude::*;
use strata::{codegen, cuda, Error};

/// Whether NVRTC can be used; fails when it is required and cannot.
fn nvrtc_present() -> bool {
    match cuda::nvrtc_version() {
        Ok(_) => true,
        Err(why) => {
            let required = std::env::var("STRATA_REQUIRE")
                .is_ok_and(|v| v.split(',').any(|b| b.trim() == "nvrtc"));
            assert!(!required, "STRATA_REQUIRE names nvrtc, but: {why}");
            eprintln!("skipped: NVRTC cannot be loaded: {why}");
            false
        }
    }
}

#[test]
fn nvrtc_errors_carry_the_log_and_the_numbered_source() {
    if !nvrtc_present() {
        return;
    }
    let broken = Stub::<(f32,), f32>::new("broken")
        .source("cuda", "__device__ float broken(float x) { return x +* ; }")
        .cpu(|x: f32| x);
    let k = Kernel::build("uses_broken", |k| {
        let x = k.read_write::<f32>("x");
        let i = global_id(0);
        x.set(i, broken.call((x.at(i),)));
    })
    .unwrap();
    let generated = codegen::cuda(k.valid_function()).unwrap();
    let err = cuda::compile_ptx("uses_broken", &generated, 90, &[]).unwrap_err();
    assert!(matches!(err, Error::CompileFailed { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.starts_with("kernel `uses_broken` failed to compile for CUDA (NVRTC "),
        "{msg}"
    );
    assert!(msg.contains("nvrtcCompileProgram failed"), "{msg}");
    assert!(msg.contains("error: expected an expression"), "{msg}");
    assert!(msg.contains("--- generated source ---"), "{msg}");
    // The log names the line; the listing shows that line with its number.
    let line = generated
        .source
        .lines()
        .position(|l| l.contains("return x +* ;"))
        .unwrap()
        + 1;
    assert!(
        msg.contains(&format!("uses_broken.cu({line}): error")),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("{line} | __device__ float broken")),
        "{msg}"
    );
}

#[test]
fn stub_without_a_cuda_source_is_unsupported_with_the_fix() {
    let twice = Stub::<(f32,), f32>::new("twice")
        .source("opencl", "float twice(float x) { return 2.0f * x; }")
        .cpu(|x: f32| 2.0 * x);
    let k = Kernel::build("opencl_only", |k| {
        let x = k.read_write::<f32>("x");
        x.set(global_id(0), twice.call((x.at(global_id(0)),)));
    })
    .unwrap();
    let msg = codegen::cuda(k.valid_function()).unwrap_err().to_string();
    assert!(
        msg.contains("stub function `twice` has no CUDA C++ source; give it one with `Stub::source(\"cuda\", ...)`"),
        "{msg}"
    );
}

/// Kernels reach a CUDA device as CUBINs (machine code: no JIT by the driver when loaded),
/// compiled by NVRTC for the device's architecture and cached on disk like PTX.
#[test]
fn nvrtc_compiles_cubins_through_the_cache() {
    if !nvrtc_present() {
        return;
    }
    let k = Kernel::build("cubin_probe", |k| {
        let x = k.read_write::<f32>("x");
        let i = global_id(0);
        if_(i.lt(x.len()), || x.set(i, x.at(i) * 3.0f32));
    })
    .unwrap();
    let generated = codegen::cuda(k.valid_function()).unwrap();
    let (cubin, _) =
        cuda::compile("cubin_probe", &generated, cuda::Output::Cubin(90), &[]).unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF", "a CUBIN is an ELF image");
    if cuda::ptx_cache_dir().is_some() {
        let (again, from_cache) =
            cuda::compile("cubin_probe", &generated, cuda::Output::Cubin(90), &[]).unwrap();
        assert!(from_cache, "the second compile reads the cache");
        assert_eq!(again, cubin, "the cache returns the same image");
    }
}
