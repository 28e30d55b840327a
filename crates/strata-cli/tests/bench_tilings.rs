//! The SGEMM tilings `strata bench` runs ([`strata_cli::bench::blas::BENCHES`]): compiled by
//! NVRTC to the PTX their speed depends on, and run right on every device present.
//!
//! NVRTC missing is a failure when `STRATA_REQUIRE` names `nvrtc`; an OpenCL device missing is
//! one when it names `opencl`.

use strata::blas::sgemm_kernel;
use strata::BackendKind;
use strata_cli::bench::{self, BenchOptions};

/// Every tiling `strata bench` runs, compiled by NVRTC for the H100 (sm_90), with the PTX
/// facts the speed depends on: the multiply-adds of a tile unrolled as fused `fma.rn.f32`
/// (strata compiles CUDA with `--fmad=false`, so nothing else would fuse), every local-memory
/// read and write a 16-byte vector access (`ld.shared.v4.f32`, `st.shared.v4.f32`: the vector
/// tiles are declared 16-byte aligned), and no local (stack) memory.
#[test]
fn bench_tilings_compile_with_nvrtc_to_vector_loads_and_fmas() {
    let version = match strata::cuda::nvrtc_version() {
        Ok(v) => v,
        Err(why) => {
            let required = std::env::var("STRATA_REQUIRE")
                .is_ok_and(|v| v.split(',').any(|b| b.trim() == "nvrtc"));
            assert!(!required, "STRATA_REQUIRE names nvrtc, but: {why}");
            eprintln!("skipped: NVRTC cannot be loaded: {why}");
            return;
        }
    };
    for name in strata_cli::bench::blas::BENCHES {
        let c = strata_cli::bench::blas::config(name).unwrap();
        let k = sgemm_kernel(&c).unwrap();
        let generated = strata::codegen::cuda(k.valid_function()).unwrap();
        let ptx = strata::cuda::compile_ptx(k.name(), &generated, 90, &[])
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .text;
        let count = |s: &str| ptx.matches(s).count() as u32;
        let (bk, tm, tn, t) = (c.block_k, c.thread_m, c.thread_n, c.threads());
        let stores = 2 * (c.block_m / 4 * bk + bk * c.block_n / 4) / t;
        let facts = [
            ("fma.rn.f32", bk * tm * tn),
            ("ld.shared.v4.f32", bk * (tm + tn) / 4),
            ("st.shared.v4.f32", stores),
            ("ld.shared.f32", 0),
            ("st.shared.f32", 0),
            (".local", 0),
        ];
        for (what, want) in facts {
            assert_eq!(
                count(what),
                want,
                "{name} (NVRTC {}.{}): {what} in\n{ptx}",
                version.0,
                version.1
            );
        }
    }
}

/// Every tiling `strata bench` runs compiles and computes the right product (checked by the
/// benchmark against its baseline and an `f64` reference) on every OpenCL and CUDA device.
#[test]
fn bench_tilings_run_on_every_device() {
    let required = |kind: BackendKind| {
        std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == kind.name()))
    };
    let devices: Vec<_> = strata::devices()
        .into_iter()
        .filter(|d| d.info().backend != BackendKind::Cpu)
        .collect();
    assert!(
        !required(BackendKind::OpenCl)
            || devices
                .iter()
                .any(|d| d.info().backend == BackendKind::OpenCl),
        "STRATA_REQUIRE names opencl, but there is no OpenCL device: {:?}",
        strata::unavailable_backends()
    );
    // (`strata bench` runs them all on the CPU backend in tests/cli.rs.)
    for d in devices {
        let opts = BenchOptions {
            size: 1024,
            reps: 1,
            filter: Some("sgemm".into()),
        };
        // Every tiling runs unless its tiles exceed the device's local memory (lavapipe's
        // 32 KiB), which is reported as unsupported.
        let mut skipped = Vec::new();
        let results = bench::run_rows(&d, &opts, |_| {}, |name, _| skipped.push(name))
            .unwrap_or_else(|e| panic!("{}: {e}", d.info().spec()));
        let names: Vec<&str> = results.iter().map(|r| r.bench).collect();
        let fits: Vec<&str> = bench::blas::BENCHES
            .iter()
            .copied()
            .filter(|b| {
                let c = bench::blas::config(b).unwrap();
                c.local_mem_bytes() <= d.info().local_mem_size
            })
            .collect();
        assert_eq!(names, fits, "{}", d.info().spec());
        assert_eq!(names.len() + skipped.len(), bench::blas::BENCHES.len());
    }
}
