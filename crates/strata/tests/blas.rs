//! The SGEMM kernels of `strata::blas` on every device present (the CPU backend, each OpenCL
//! device, each CUDA device), against a host computation of the same arithmetic: every element
//! of `C` is `fma(a[i][p], b[p][j], acc)` over `p` in order, which the kernel also does, so the
//! results must agree bit for bit on every backend. Small tilings (shrunk by staging) cover the
//! work-item layouts, block orders with partial bands and non-square sizes; the GPU tiling
//! (`SgemmConfig::DEFAULT`, 128 x 128 x 8) runs at 256^3. Sizes and tilings the kernel cannot
//! take fail with typed errors.
//!
//! When `STRATA_REQUIRE` names `opencl` or `cuda`, having no device of it is a failure.

use strata::blas::{sgemm_kernel, Sgemm, SgemmConfig};
use strata::prelude::*;
use strata::{BackendKind, Error};

fn required(kind: BackendKind) -> bool {
    std::env::var("STRATA_REQUIRE").is_ok_and(|v| v.split(',').any(|b| b.trim() == kind.name()))
}

/// The CPU backend and every OpenCL and CUDA device (required ones must be there).
fn devices() -> Vec<Device> {
    let all = strata::devices();
    for kind in [BackendKind::OpenCl, BackendKind::Cuda] {
        if !all.iter().any(|d| d.info().backend == kind) {
            assert!(
                !required(kind),
                "STRATA_REQUIRE names {kind}, but no {kind} device is listed"
            );
            eprintln!("no {kind} device: SGEMM checked on the others");
        }
    }
    all
}

/// Deterministic values in [-1, 1) with 12 significant bits, never 0.
fn matrix(len: usize, seed: u32) -> Vec<f32> {
    (0..len as u32)
        .map(|i| {
            let h = (i ^ seed.wrapping_mul(0x9E37_79B9))
                .wrapping_mul(0x85EB_CA6B)
                .rotate_left(13)
                .wrapping_mul(0xC2B2_AE35);
            let v = ((h >> 20) as i32 - 2048) as f32 / 2048.0;
            if v == 0.0 {
                0.5
            } else {
                v
            }
        })
        .collect()
}

/// `C = A B` on the host with the kernel's arithmetic: one `fma` per step of `k`, in order.
fn host_sgemm(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc = a[i * k + p].mul_add(b[p * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
    c
}

/// Runs `sgemm` for `m x n x k` on `queue` and compares with the host bit for bit.
fn check(queue: &Queue, sgemm: &Sgemm, m: usize, n: usize, k: usize) {
    let a = matrix(m * k, 1);
    let b = matrix(k * n, 2);
    let want = host_sgemm(&a, &b, m, n, k);
    let da = Buffer::from_slice(queue, &a).unwrap();
    let db = Buffer::from_slice(queue, &b).unwrap();
    let dc = Buffer::<f32>::new(queue.device(), m * n).unwrap();
    // NaN marks elements the kernel did not write.
    queue.fill(&dc, f32::NAN, 0..m * n).unwrap();
    sgemm.launch(queue, &da, &db, &dc, m, n, k).unwrap();
    let got = queue.read(&dc).unwrap();
    let name = sgemm.config().name();
    let spec = queue.device().info().spec();
    if let Some(i) = got
        .iter()
        .zip(&want)
        .position(|(g, w)| g.to_bits() != w.to_bits())
    {
        panic!(
            "{name} on {spec}, {m} x {n} x {k}: c[{}][{}] is {:e}, expected {:e}",
            i / n,
            i % n,
            got[i],
            want[i]
        );
    }
}

/// Small tilings that cover both work-item layouts (row-major: 4 x 4 register tiles; warps of
/// 4 x 8: 8 x 8 tiles), several loads per work-item, unequal register tiles, and block orders
/// with full and partial bands.
const SMALL: [SgemmConfig; 5] = [
    SgemmConfig::new(16, 16, 4, 4, 4),
    SgemmConfig::new(32, 16, 8, 8, 4).with_group_m(2),
    SgemmConfig::new(32, 32, 8, 4, 4).with_group_m(1),
    SgemmConfig::new(16, 32, 4, 4, 8).with_group_m(3),
    SgemmConfig::new(32, 64, 8, 4, 8),
];

#[test]
fn small_tilings_match_the_host_on_every_device() {
    for d in devices() {
        let q = Queue::new(&d).unwrap();
        for c in SMALL {
            let s = Sgemm::new(c).unwrap();
            let (bm, bn, bk) = (c.block_m as usize, c.block_n as usize, c.block_k as usize);
            // One block; then 3 x 2 blocks (a partial band for group_m 2) and several tiles of k;
            // then 5 x 3 blocks with a long k.
            check(&q, &s, bm, bn, bk);
            check(&q, &s, 3 * bm, 2 * bn, 5 * bk);
            check(&q, &s, 5 * bm, 3 * bn, 16 * bk);
        }
    }
}

#[test]
fn gpu_tiling_at_256_cubed_matches_the_host_on_every_device() {
    let s = Sgemm::new(SgemmConfig::DEFAULT).unwrap();
    assert_eq!(s.config().threads(), 256);
    assert_eq!(s.kernel().name(), "sgemm_128x128x8_8x8");
    for d in devices() {
        let q = Queue::new(&d).unwrap();
        check(&q, &s, 256, 256, 256);
        if d.info().backend != BackendKind::Cpu {
            // Not square, several bands of block rows.
            check(&q, &s, 384, 256, 64);
        }
    }
}

#[test]
fn sizes_the_tiling_does_not_divide_are_typed_errors() {
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let c = SgemmConfig::new(16, 16, 4, 4, 4);
    let s = Sgemm::new(c).unwrap();
    let buf = |n: usize| Buffer::<f32>::new(q.device(), n).unwrap();
    let (a, b, out) = (buf(30 * 8), buf(8 * 16), buf(30 * 16));
    let e = s.launch(&q, &a, &b, &out, 30, 16, 8).unwrap_err();
    match &e {
        Error::InvalidWorkSize { kernel, reason } => {
            assert_eq!(kernel, "sgemm_16x16x4_4x4");
            assert!(
                reason.contains("m = 30 is not a positive multiple of 16"),
                "{reason}"
            );
            assert!(reason.contains("pad the matrices"), "{reason}");
            assert!(!reason.contains("n = 16"), "{reason}");
        }
        other => panic!("expected InvalidWorkSize, got {other:?}"),
    }
    // Every size that does not fit is named; zero sizes too.
    let e = c.check_dims(16, 20, 6).unwrap_err().to_string();
    assert!(
        e.contains("n = 20 is not a positive multiple of 16")
            && e.contains("k = 6 is not a positive multiple of 4"),
        "{e}"
    );
    assert!(c.check_dims(0, 16, 4).is_err());
    // Sizes whose products overflow are refused, not wrapped.
    let e = c
        .check_dims(usize::MAX - 15, 16, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("2^32 - 1 elements"), "{e}");
    let e = c
        .with_group_m(u32::MAX)
        .check_dims(16, 1 << 20, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("smaller group_m"), "{e}");
    assert!(c.range(16, 16, 0).is_err());
    // Buffers of the wrong length.
    let e = s
        .launch(&q, &buf(16 * 4), &buf(4 * 16), &buf(16 * 15), 16, 16, 4)
        .unwrap_err();
    assert!(
        matches!(&e, Error::ArgumentLength { name, expected: 256, got: 240, .. } if name == "c"),
        "{e:?}"
    );
    assert!(c.range(16, 32, 8).is_ok());
}

#[test]
fn tilings_that_cannot_be_built_are_typed_errors() {
    for (c, says) in [
        (SgemmConfig::new(16, 16, 4, 4, 6), "multiples of 4"),
        (
            SgemmConfig::new(16, 20, 4, 4, 8),
            "multiple of the register tile",
        ),
        (SgemmConfig::new(0, 16, 4, 4, 4), "at least 1"),
        (SgemmConfig::new(64, 64, 4, 4, 4), "divide the tile of A"),
        (SgemmConfig::new(256, 256, 8, 4, 4), "at most 1024"),
        (
            SgemmConfig::new(16, 16, 4, 4, 4).with_group_m(0),
            "at least 1",
        ),
        (
            SgemmConfig::new(1 << 30, 1 << 30, 8, 1 << 28, 1 << 28),
            "local memory",
        ),
        (SgemmConfig::new(1 << 31, 1 << 31, 4, 4, 4), "at most 1024"),
    ] {
        match sgemm_kernel(&c) {
            Err(Error::InvalidKernel(m)) => {
                assert!(m.contains(says), "{c:?}: {m}");
                assert!(m.contains(&c.name()), "{m}");
            }
            other => panic!("{c:?}: expected InvalidKernel, got {other:?}"),
        }
    }
}

#[test]
fn the_tiling_is_staged_into_the_kernel() {
    let a = sgemm_kernel(&SgemmConfig::DEFAULT).unwrap();
    let b = sgemm_kernel(&SgemmConfig::DEFAULT.with_group_m(1)).unwrap();
    assert_ne!(a.ir_text(), b.ir_text());
    assert_eq!(
        a.ir_text(),
        sgemm_kernel(&SgemmConfig::DEFAULT).unwrap().ir_text()
    );
    // 8 x 8 accumulators, and 64 fused multiply-adds per step of k, 8 steps per tile, unrolled.
    let text = a.ir_text();
    assert_eq!(text.matches("fma(").count(), 512, "{text}");
    assert_eq!(SgemmConfig::DEFAULT.local_mem_bytes(), 16640);
    // The generated code declares the vector tiles aligned to 16 bytes (vector loads on GPUs).
    let cuda = strata::codegen::cuda(a.valid_function()).unwrap().source;
    assert!(
        cuda.contains("__shared__ float a_tile[2112] __attribute__((aligned(16)));"),
        "{cuda}"
    );
}

/// On the compiled CPU backend every SGEMM tiling runs four work-items per instruction: the
/// kernel's `[f32; 4]` tiles and vectors are split into components for its vector variant
/// (issue 31), so [`Kernel::cpu_vector_variant`] is `Ok` (it named "the local array `a_tile`
/// of f32x4" before); and `cpu` (work-groups of `threads()`, multiples of four: the vector
/// variant) agrees with the interpreter bit for bit.
#[test]
fn sgemm_takes_the_cpu_vector_variant_and_agrees_with_the_interpreter() {
    let configs = [
        SgemmConfig::DEFAULT,
        SgemmConfig::DEFAULT.with_group_m(1),
        SgemmConfig::new(128, 128, 16, 8, 8),
        SgemmConfig::new(64, 64, 8, 8, 8),
        SgemmConfig::new(128, 128, 8, 8, 16),
    ];
    for c in configs.iter().chain(&SMALL) {
        let s = Sgemm::new(*c).unwrap();
        assert_eq!(s.kernel().cpu_vector_variant(), Ok(()), "{}", c.name());
    }
    let q = |spec: &str| Queue::new(&Device::from_spec(spec).unwrap()).unwrap();
    let (cpu, interp) = (q("cpu"), q("interp"));
    for c in [
        SMALL[0],
        SMALL[1],
        SMALL[4],
        SgemmConfig::new(64, 64, 8, 8, 8),
    ] {
        let s = Sgemm::new(c).unwrap();
        let (m, n, k) = (
            2 * c.block_m as usize,
            c.block_n as usize,
            3 * c.block_k as usize,
        );
        let (a, b) = (matrix(m * k, 3), matrix(k * n, 4));
        let run = |q: &Queue| {
            let da = Buffer::from_slice(q, &a).unwrap();
            let db = Buffer::from_slice(q, &b).unwrap();
            let dc = Buffer::<f32>::new(q.device(), m * n).unwrap();
            s.launch(q, &da, &db, &dc, m, n, k).unwrap();
            let c: Vec<u32> = q.read(&dc).unwrap().iter().map(|v| v.to_bits()).collect();
            c
        };
        assert_eq!(run(&cpu), run(&interp), "{}", c.name());
    }
}

/// The tiling picked for a size: the largest candidate whose blocks divide the sizes and, on
/// CPU-type devices, give every compute unit a block; the default where none divides (its
/// launch then refuses the sizes); and every pick computes the host's product.
#[test]
fn the_tiling_picked_for_a_size_divides_it_and_keeps_the_cores_busy() {
    let big = SgemmConfig::DEFAULT;
    let mid = SgemmConfig::new(128, 64, 8, 8, 8);
    let small = SgemmConfig::new(64, 64, 8, 8, 8);
    for d in devices() {
        let info = d.info();
        let units = info.compute_units.max(1) as usize;
        let blocks = |c: &SgemmConfig, m: usize, n: usize| {
            (m / c.block_m as usize) * (n / c.block_n as usize)
        };
        for (m, n) in [
            (128, 128),
            (128, 64),
            (64, 192),
            (256, 256),
            (1024, 1024),
            (640, 128),
        ] {
            let c = SgemmConfig::for_size(info, m, n);
            let at = format!("{m} x {n} on {}", info.spec());
            assert_eq!(m % c.block_m as usize, 0, "{at}: {}", c.name());
            assert_eq!(n % c.block_n as usize, 0, "{at}: {}", c.name());
            // The first candidate (largest first) that divides and, on CPUs, fills the units.
            let fits = |t: &SgemmConfig| {
                m.is_multiple_of(t.block_m as usize) && n.is_multiple_of(t.block_n as usize)
            };
            let dividing: Vec<SgemmConfig> = [big, mid, small].into_iter().filter(fits).collect();
            let want = if !info.is_cpu() {
                dividing[0]
            } else {
                dividing
                    .iter()
                    .copied()
                    .find(|t| blocks(t, m, n) >= units)
                    .unwrap_or_else(|| {
                        dividing.iter().copied().fold(dividing[0], |b, t| {
                            if blocks(&t, m, n) > blocks(&b, m, n) {
                                t
                            } else {
                                b
                            }
                        })
                    })
            };
            assert_eq!(c, want, "{at}");
            if info.is_cpu() && units >= 2 && (m, n) == (128, 128) {
                assert_ne!(c, big, "{at}: one 128 x 128 block leaves a core idle");
            }
            if m * n <= 256 * 256 {
                check(&Queue::new(&d).unwrap(), &Sgemm::new(c).unwrap(), m, n, 16);
            }
        }
        // Nothing divides 100 x 100: the default, whose launch refuses the size.
        let c = SgemmConfig::for_size(info, 100, 100);
        assert_eq!(c, big, "{}", info.spec());
        let q = Queue::new(&d).unwrap();
        let buf = |len| Buffer::<f32>::new(&q, len).unwrap();
        let e = Sgemm::new(c)
            .unwrap()
            .launch(
                &q,
                &buf(100 * 8),
                &buf(8 * 100),
                &buf(100 * 100),
                100,
                100,
                8,
            )
            .unwrap_err();
        assert!(matches!(e, Error::InvalidWorkSize { .. }), "{e}");
        assert!(e.to_string().contains("100"), "{e}");
    }
}
