//! Matrix multiplication `C = A * B` (`A` is `m x k`, `B` is `k x n`, row-major), three ways,
//! each compared with a host matmul:
//!
//! - naive: one work-item per element of `C`, a 2-D launch;
//! - tiled: `TILE x TILE` work-groups copy tiles of `A` and `B` into local memory, wait at a
//!   barrier, and accumulate from the tiles (Concurnas `matMultLocal`, the Goopax matmul);
//! - register-tiled: the library's SGEMM ([`strata::blas::Sgemm`]), where each work-item
//!   computes an 8 x 8 sub-tile in registers from double-buffered local tiles, with the tiling
//!   staged as Rust values. It is the fast one on GPUs (`strata bench --filter sgemm`).
//!
//! For the first two, sizes need not be multiples of the tile: the launch covers the matrix
//! with whole work-groups and the kernels guard every access. The register-tiled kernel takes
//! whole tiles only and says so with a typed error otherwise; the example shows both cases.
//!
//! ```text
//! cargo run --release --example matmul
//! ```

#[cfg(test)]
#[path = "common/vulkan.rs"]
#[allow(clippy::duplicate_mod)] // tests/examples_checked.rs includes several examples
mod vulkan;

use strata::blas::{Sgemm, SgemmConfig};
use strata::prelude::*;

/// The tile edge (work-groups are `TILE x TILE`).
const TILE: u32 = 16;

/// One work-item per element of `C`; dimension 0 is the column, dimension 1 the row.
fn naive_kernel() -> strata::Result<Kernel> {
    Kernel::build("matmul_naive", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let (m, n, kk) = (
            k.scalar::<u32>("m"),
            k.scalar::<u32>("n"),
            k.scalar::<u32>("k"),
        );
        let col = global_id(0);
        let row = global_id(1);
        if_(row.lt(m).and(col.lt(n)), || {
            let mut acc = var_named("acc", 0.0f32);
            for_range(0u32, kk, |p| acc += a.at(row * kk + p) * b.at(p * n + col));
            c.set(row * n + col, acc.get());
        });
    })
}

/// Local-memory tiles; every work-item of a work-group takes part in the loads and barriers,
/// also those outside `C`.
fn tiled_kernel() -> strata::Result<Kernel> {
    Kernel::build("matmul_tiled", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let (m, n, kk) = (
            k.scalar::<u32>("m"),
            k.scalar::<u32>("n"),
            k.scalar::<u32>("k"),
        );
        let a_tile = k.local_array::<f32>("a_tile", TILE * TILE);
        let b_tile = k.local_array::<f32>("b_tile", TILE * TILE);
        let (tx, ty) = (local_id(0), local_id(1));
        let col = group_id(0) * TILE + tx;
        let row = group_id(1) * TILE + ty;
        let mut acc = var_named("acc", 0.0f32);
        let tiles = (kk + (TILE - 1)) / TILE;
        for_range(0u32, tiles, |t| {
            let a_col = t * TILE + tx;
            let b_row = t * TILE + ty;
            if_(row.lt(m).and(a_col.lt(kk)), || {
                a_tile.set(ty * TILE + tx, a.at(row * kk + a_col))
            })
            .else_(|| a_tile.set(ty * TILE + tx, 0.0f32));
            if_(b_row.lt(kk).and(col.lt(n)), || {
                b_tile.set(ty * TILE + tx, b.at(b_row * n + col))
            })
            .else_(|| b_tile.set(ty * TILE + tx, 0.0f32));
            barrier_local();
            // Unrolled at build time: TILE multiply-adds from local memory.
            for p in 0..TILE {
                acc += a_tile.at(ty * TILE + p) * b_tile.at(p * TILE + tx);
            }
            barrier_local();
        });
        if_(row.lt(m).and(col.lt(n)), || c.set(row * n + col, acc.get()));
    })
}

// The same two kernels as plain Rust functions (`#[kernel]`): each records exactly the IR of
// its builder version above (checked by the test at the end). `acc` becomes a private
// variable; `for p in 0..TILE` runs over Rust values, so it is unrolled as above.

/// [`naive_kernel`] as a plain Rust function.
#[kernel]
fn matmul_naive(a: &[f32], b: &[f32], #[write] c: &mut [f32], m: u32, n: u32, k: u32) {
    let col = global_id(0);
    let row = global_id(1);
    if row < m && col < n {
        let mut acc = 0.0f32;
        for p in 0u32..k {
            acc += a[row * k + p] * b[p * n + col];
        }
        c[row * n + col] = acc;
    }
}

/// [`tiled_kernel`] as a plain Rust function.
#[kernel]
fn matmul_tiled(a: &[f32], b: &[f32], #[write] c: &mut [f32], m: u32, n: u32, k: u32) {
    let a_tile = local_array::<f32>(TILE * TILE);
    let b_tile = local_array::<f32>(TILE * TILE);
    let (tx, ty) = (local_id(0), local_id(1));
    let col = group_id(0) * TILE + tx;
    let row = group_id(1) * TILE + ty;
    let mut acc = 0.0f32;
    let tiles = (k + (TILE - 1)) / TILE;
    for t in 0u32..tiles {
        let a_col = t * TILE + tx;
        let b_row = t * TILE + ty;
        if row < m && a_col < k {
            a_tile[ty * TILE + tx] = a[row * k + a_col];
        } else {
            a_tile[ty * TILE + tx] = 0.0f32;
        }
        if b_row < k && col < n {
            b_tile[ty * TILE + tx] = b[b_row * n + col];
        } else {
            b_tile[ty * TILE + tx] = 0.0f32;
        }
        barrier_local();
        for p in 0..TILE {
            acc += a_tile[ty * TILE + p] * b_tile[p * TILE + tx];
        }
        barrier_local();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}

/// `m x k` times `k x n` on the host, accumulating in `f64`.
fn host_matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0f64;
            for p in 0..k {
                s += a[i * k + p] as f64 * b[p * n + j] as f64;
            }
            c[i * n + j] = s as f32;
        }
    }
    c
}

/// The result of one verified multiplication, or why the method cannot take the size.
struct Outcome {
    method: &'static str,
    kernel_time: std::time::Duration,
    max_error: f32,
    skipped: Option<strata::Error>,
}

/// Multiplies random-looking `m x k` and `k x n` matrices the three ways (the register-tiled
/// one with `sgemm`, where its tiling divides the sizes) and checks them.
fn matmuls(
    device: &Device,
    m: usize,
    n: usize,
    k: usize,
    sgemm: &Sgemm,
) -> Result<Vec<Outcome>, Box<dyn std::error::Error>> {
    let queue = Queue::new(device)?;
    let av: Vec<f32> = (0..m * k)
        .map(|i| ((i * 37) % 17) as f32 / 8.0 - 1.0)
        .collect();
    let bv: Vec<f32> = (0..k * n)
        .map(|i| ((i * 11) % 13) as f32 / 6.0 - 1.0)
        .collect();
    let want = host_matmul(&av, &bv, m, n, k);
    let a = Buffer::from_slice(&queue, &av)?;
    let b = Buffer::from_slice(&queue, &bv)?;
    let (mu, nu, ku) = (m as u32, n as u32, k as u32);
    let t = TILE as usize;
    let covering = NdRange::new([n.div_ceil(t) * t, m.div_ceil(t) * t]).local([t, t]);

    let mut out = Vec::new();
    for (method, kernel, range) in [
        ("naive", naive_kernel()?, Ok(NdRange::new([n, m]))),
        ("tiled (local memory)", tiled_kernel()?, Ok(covering)),
        (
            "register-tiled (blas)",
            sgemm.kernel().clone(),
            sgemm.config().range(m, n, k),
        ),
    ] {
        let range = match range {
            Ok(r) => r,
            Err(e) => {
                out.push(Outcome {
                    method,
                    kernel_time: std::time::Duration::ZERO,
                    max_error: 0.0,
                    skipped: Some(e),
                });
                continue;
            }
        };
        let c = Buffer::<f32>::new(device, m * n)?;
        queue.fill(&c, f32::NAN, ..)?;
        let run = kernel.launch(&queue, range, args![&a, &b, &c, mu, nu, ku])?;
        let got = queue.read(&c)?;
        let mut max_error = 0.0f32;
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            let err = (g - w).abs();
            // NaN fails this test too: the fill marks elements the kernel did not write.
            if err.is_nan() || err > 1e-4 * (k as f32) * w.abs().max(1.0) {
                return Err(
                    format!("{method}: c[{}][{}] is {g}, expected {w}", i / n, i % n).into(),
                );
            }
            max_error = max_error.max(err);
        }
        out.push(Outcome {
            method,
            kernel_time: run.event().duration()?,
            max_error,
            skipped: None,
        });
    }
    Ok(out)
}

fn report(m: usize, n: usize, k: usize, outcomes: &[Outcome]) {
    for o in outcomes {
        if let Some(why) = &o.skipped {
            println!("{m}x{k} * {k}x{n}, {:<21} not run: {why}", o.method);
            continue;
        }
        let gflops = 2.0 * (m * n * k) as f64 / o.kernel_time.as_secs_f64() / 1e9;
        println!(
            "{m}x{k} * {k}x{n}, {:<21} {:9.3} ms ({gflops:.2} GFLOP/s), max |error| {:e}: OK",
            o.method,
            o.kernel_time.as_secs_f64() * 1e3,
            o.max_error
        );
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::from_spec("best")?;
    println!("device: {}", device.info().spec());
    // The GPU tiling: 128 x 128 blocks, 8 x 8 per work-item.
    let sgemm = Sgemm::new(SgemmConfig::DEFAULT)?;
    // Not multiples of the tile: the guards matter, and the register-tiled kernel refuses.
    let (m, n, k) = (300, 200, 250);
    report(m, n, k, &matmuls(&device, m, n, k, &sgemm)?);
    // Whole tiles: all three (larger on GPUs, where the difference shows).
    let e = if device.info().is_cpu() { 256 } else { 1024 };
    report(e, e, e, &matmuls(&device, e, e, e, &sgemm)?);
    Ok(())
}

#[test]
pub fn matmuls_on_cpu() {
    matmuls_on(&Device::from_spec("cpu").unwrap());
}

/// The same on `vulkan:0` (lavapipe here).
#[test]
pub fn matmuls_on_vulkan() {
    if let Some(d) = vulkan::vulkan0() {
        matmuls_on(&d);
    }
}

/// The example's check on `device` (the tests run it in checked mode too).
pub fn matmuls_on(device: &Device) {
    // A small tiling (16 x 16 blocks, 4 x 4 per work-item) for small matrices.
    let sgemm = Sgemm::new(SgemmConfig::new(16, 16, 4, 4, 4)).unwrap();
    let out = matmuls(device, 37, 21, 45, &sgemm).unwrap();
    assert_eq!(out.len(), 3);
    assert!(out[..2].iter().all(|o| o.skipped.is_none()));
    assert!(
        matches!(&out[2].skipped, Some(strata::Error::InvalidWorkSize { reason, .. }) if reason.contains("m = 37")),
        "the register-tiled kernel takes whole tiles only"
    );
    // A square size that is a multiple of the tiles as well: all three run and agree.
    let out = matmuls(device, 32, 32, 32, &sgemm).unwrap();
    assert!(out.iter().all(|o| o.skipped.is_none()));
}

#[test]
pub fn macro_style_matches_builder() {
    let naive = matmul_naive::build().unwrap();
    assert_eq!(naive.kernel().ir_text(), naive_kernel().unwrap().ir_text());
    let tiled = matmul_tiled::build().unwrap();
    assert_eq!(tiled.kernel().ir_text(), tiled_kernel().unwrap().ir_text());
}
