//! The SGEMM benchmarks of `strata bench`: `C = A B` for square `f32` matrices with the kernel
//! of [`strata::blas`], one row per tiling, beside a baseline in the same run (see
//! [`crate::bench`] for the timing rule and the table).
//!
//! | bench                    | tiling ([`SgemmConfig`])                                  |
//! |--------------------------|-----------------------------------------------------------|
//! | `sgemm`                  | [`SgemmConfig::for_size`] of the device and size: [`SgemmConfig::DEFAULT`] (128 x 128 x 8, 8 x 8 per work-item, bands of 8 block rows) on GPUs; on CPU-type devices the largest of 128 x 128, 128 x 64, 64 x 64 that gives every core a block (at 128^2 on 2 cores: 128 x 64) |
//! | `sgemm_128x128x8_8x8`    | [`SgemmConfig::DEFAULT`] everywhere                       |
//! | `sgemm_128x128x8_8x8_g1` | the same, blocks in plain row order                       |
//! | `sgemm_128x128x16_8x8`   | `k` steps of 16 (half the barriers, twice the local memory) |
//! | `sgemm_128x64x8_8x8`     | 128 x 64 blocks (128 work-items)                          |
//! | `sgemm_64x64x8_8x8`      | 64 x 64 blocks (64 work-items)                            |
//! | `sgemm_128x128x8_8x16`   | 8 x 16 per work-item (128 accumulators, 128 work-items)   |
//!
//! **Size.** The matrices are `e x e` with the edge `e` given by the device, not by
//! `--size` (which is the vector length of the other benchmarks): [`edge`] is 4096 on CUDA
//! devices (the size the cuBLAS comparison is quoted at), 1024 on other GPUs and accelerators,
//! and on CPU-type devices (the CPU interpreter and PoCL, where the interpreter must finish in
//! a fraction of a second even in a debug build) the least multiple of 128 that the tiling's
//! block divides: 128 for every tiling above. A row's `n` is `e`, its `bytes` `3 * 4 * e^2`
//! (each matrix moved once: the least any SGEMM moves) and its `flops` `2 * e^3`.
//!
//! **Baseline.** On CUDA devices cuBLAS (`cublasSgemm`, fp32, TF32 off), loaded at run time
//! ([`crate::bench::cublas`]); where it cannot be loaded, a hand-written CUDA C kernel, and the
//! row's baseline is `cuda` instead of `cublas` ([`crate::bench::gpu_limits`] reports why). On
//! other devices a rayon matmul on the host: rows of `C` in parallel, each accumulated as
//! `c[i][..] += a[i][p] * b[p][..]` over `p` in blocks of 64 (vectorized inner loop). The
//! baseline runs once per `strata bench` run and size, and every SGEMM row of that size is
//! compared with it.
//!
//! **Verification.** Inputs are pseudo-random in [-1, 1), never 0 (signs mix, so the sums
//! cancel and rounding shows). Before a row is reported, strata's `C` must be within
//! [`TOLERANCE`] of the baseline's in relative Frobenius norm (`||C - C_base|| / ||C_base||`,
//! reported as `rel_error`), and both must be within [`TOLERANCE`] of an `f64` reference
//! computed on the host for 1024 sampled elements (so a wrong baseline, or one using TF32, which
//! is off by about 10^-3, fails too). Each repetition starts from a `C` filled with NaN.

use crate::bench::builds::{self, Build};
use crate::bench::cuda::CudaBaseline;
use crate::bench::{host_data, BenchError, BenchResult};
use rayon::prelude::*;
use std::time::Instant;
use strata::blas::{Sgemm, SgemmConfig};
use strata::prelude::*;
use strata::{BackendKind, DeviceInfo, Error};

/// The SGEMM benchmarks, in the order they run.
pub const BENCHES: [&str; 7] = [
    "sgemm",
    "sgemm_128x128x8_8x8",
    "sgemm_128x128x8_8x8_g1",
    "sgemm_128x128x16_8x8",
    "sgemm_128x64x8_8x8",
    "sgemm_64x64x8_8x8",
    "sgemm_128x128x8_8x16",
];

/// Largest relative error (Frobenius norm) allowed between strata's product, the baseline's
/// and the `f64` reference.
pub const TOLERANCE: f64 = 1e-4;

/// Elements of `C` checked against the `f64` reference.
const SAMPLES: usize = 1024;

/// The tiling of a benchmark of [`BENCHES`].
pub fn config(bench: &str) -> Option<SgemmConfig> {
    let c = SgemmConfig::DEFAULT;
    Some(match bench {
        "sgemm" | "sgemm_128x128x8_8x8" => c,
        "sgemm_128x128x8_8x8_g1" => c.with_group_m(1),
        "sgemm_128x128x16_8x8" => SgemmConfig::new(128, 128, 16, 8, 8),
        "sgemm_128x64x8_8x8" => SgemmConfig::new(128, 64, 8, 8, 8),
        "sgemm_64x64x8_8x8" => SgemmConfig::new(64, 64, 8, 8, 8),
        "sgemm_128x128x8_8x16" => SgemmConfig::new(128, 128, 8, 8, 16),
        _ => return None,
    })
}

/// The matrix edge of an SGEMM benchmark with tiling `c` on a device: 4096 on CUDA devices,
/// 1024 on other GPUs and accelerators, and on CPU-type devices the least multiple of 128 that
/// the block divides (see the module docs).
pub fn edge(info: &DeviceInfo, c: &SgemmConfig) -> usize {
    if info.backend == BackendKind::Cuda {
        4096
    } else if info.is_cpu() {
        let mut e = 128;
        while e % c.block_m as usize != 0 || e % c.block_n as usize != 0 {
            e += 128;
        }
        e
    } else {
        1024
    }
}

/// The SGEMM benchmarks of one `strata bench` run on one device: the inputs, baseline and
/// reference of each matrix size, made by the first benchmark of that size.
#[derive(Default)]
pub(crate) struct Runs {
    sizes: Vec<Context>,
}

impl Runs {
    /// Runs the benchmark `name` (one of [`BENCHES`]) on `q`.
    pub(crate) fn run(
        &mut self,
        q: &Queue,
        name: &'static str,
        cuda: Option<&CudaBaseline>,
        reps: usize,
    ) -> Result<BenchResult, BenchError> {
        let named = config(name).ok_or_else(|| {
            BenchError::InvalidOptions(format!("`{name}` is not an SGEMM benchmark"))
        })?;
        let info = q.device().info();
        // `sgemm` runs the tiling strata picks for the size on the device.
        let config = if name == "sgemm" {
            let e = edge(info, &named);
            SgemmConfig::for_size(info, e, e)
        } else {
            named
        };
        // A tiling whose tiles exceed the device's local memory cannot run there (lavapipe
        // has 32 KiB; 128x128x16 needs 33,280 bytes): a row the device does not support.
        if config.local_mem_bytes() > info.local_mem_size {
            return Err(BenchError::Strata(Error::Unsupported {
                kernel: name.to_string(),
                device: info.spec(),
                reason: format!(
                    "the tiles need {} bytes of local memory, the device has {} per work-group",
                    config.local_mem_bytes(),
                    info.local_mem_size
                ),
            }));
        }
        let e = edge(info, &config);
        let i = match self.sizes.iter().position(|c| c.e == e) {
            Some(i) => i,
            None => {
                self.sizes.push(Context::new(q, e, cuda, reps)?);
                self.sizes.len() - 1
            }
        };
        self.sizes[i].run(q, name, config, reps)
    }
}

/// Inputs, baseline result and reference shared by the SGEMM rows of one size.
struct Context {
    e: usize,
    a: Buffer<f32>,
    b: Buffer<f32>,
    baseline: &'static str,
    baseline_s: f64,
    /// The rayon baseline's AVX2+FMA build, seconds (`None` on CUDA or without AVX2 and FMA).
    avx2_s: Option<f64>,
    want: Vec<f32>,
    /// `(row, column, f64 value)` of the sampled reference elements.
    reference: Vec<(usize, usize, f64)>,
}

/// Values in [-1, 1) with 24-bit resolution, 0 replaced by 0.5.
pub(crate) fn signed_data(n: usize, seed: u64) -> Result<Vec<f32>, BenchError> {
    let mut v = host_data(n, seed)?;
    v.par_iter_mut().for_each(|x| {
        *x = 2.0 * *x - 1.0;
        if *x == 0.0 {
            *x = 0.5;
        }
    });
    Ok(v)
}

/// Rows of `c` per rayon task in [`rayon_sgemm`].
const SGEMM_ROWS: usize = 8;

crate::bench::builds::two_builds! {
    /// Rows `chunk * SGEMM_ROWS ..` of `c = a * b` (`e x e`, row-major) into `rows`, `k` in
    /// blocks of 64, compiled for `build`.
    fn sgemm_rows(rows: &mut [f32], chunk: usize, a: &[f32], b: &[f32], e: usize) {
        const KB: usize = 64;
        for p0 in (0..e).step_by(KB) {
            for (r, row) in rows.chunks_mut(e).enumerate() {
                let i = chunk * SGEMM_ROWS + r;
                for p in p0..(p0 + KB).min(e) {
                    let x = a[i * e + p];
                    for (cj, bj) in row.iter_mut().zip(&b[p * e..(p + 1) * e]) {
                        *cj += x * bj;
                    }
                }
            }
        }
    }
}

/// `c = a * b` (`e x e`, row-major) with rayon: rows of `c` in parallel, `k` in blocks of 64,
/// the loops compiled for `build`.
pub fn rayon_sgemm(build: Build, a: &[f32], b: &[f32], e: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; e * e];
    c.par_chunks_mut(SGEMM_ROWS * e)
        .enumerate()
        .for_each(|(chunk, rows)| sgemm_rows(build, rows, chunk, a, b, e));
    c
}

/// `sqrt(sum (x - y)^2 / sum y^2)` over `pairs`.
fn rel_frobenius(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (num, den) = pairs.fold((0.0, 0.0), |(n, d), (x, y)| {
        (n + (x - y) * (x - y), d + y * y)
    });
    if num == 0.0 {
        0.0
    } else {
        (num / den.max(f64::MIN_POSITIVE)).sqrt()
    }
}

/// [`rel_frobenius`] of two whole matrices, in parallel.
pub(crate) fn rel_frobenius_par(got: &[f32], want: &[f32]) -> f64 {
    let (num, den) = got
        .par_iter()
        .zip(want)
        .map(|(&g, &w)| {
            let (g, w) = (g as f64, w as f64);
            ((g - w) * (g - w), w * w)
        })
        .reduce(|| (0.0, 0.0), |x, y| (x.0 + y.0, x.1 + y.1));
    if num == 0.0 {
        0.0
    } else {
        (num / den.max(f64::MIN_POSITIVE)).sqrt()
    }
}

impl Context {
    /// Makes the inputs, runs the baseline (cuBLAS on a CUDA device, rayon elsewhere) and the
    /// sampled `f64` reference, and checks the baseline against the reference.
    fn new(
        q: &Queue,
        e: usize,
        cuda: Option<&CudaBaseline>,
        reps: usize,
    ) -> Result<Context, BenchError> {
        let a = signed_data(e * e, 11)?;
        let b = signed_data(e * e, 12)?;
        let reference: Vec<(usize, usize, f64)> = (0..SAMPLES)
            .into_par_iter()
            .map(|s| {
                let (i, j) = ((s * 7919 + s / 3) % e, (s * 104_729 + 17) % e);
                let v = (0..e)
                    .map(|p| a[i * e + p] as f64 * b[p * e + j] as f64)
                    .sum();
                (i, j, v)
            })
            .collect();
        let (baseline, baseline_s, avx2_s, want) = match cuda {
            Some(cb) => {
                let r = cb.sgemm(&a, &b, (e, e, e), reps)?;
                (r.name, r.seconds, None, r.c)
            }
            None => {
                let (s, avx2_s, want) = builds::both(
                    |build| -> Result<(f64, Vec<f32>), BenchError> {
                        let mut want = Vec::new();
                        let s = crate::bench::timed(reps, || -> Result<f64, BenchError> {
                            let t = Instant::now();
                            want = rayon_sgemm(build, &a, &b, e);
                            Ok(t.elapsed().as_secs_f64())
                        })?;
                        Ok((s, want))
                    },
                    |got, want| {
                        crate::bench::check_exact("sgemm (the AVX2+FMA baseline)", got, want)
                    },
                )?;
                ("rayon", s, avx2_s, want)
            }
        };
        let ctx = Context {
            e,
            a: Buffer::from_slice(q, &a)?,
            b: Buffer::from_slice(q, &b)?,
            baseline,
            baseline_s,
            avx2_s,
            want,
            reference,
        };
        let err = ctx.reference_error(&ctx.want);
        if err.is_nan() || err > TOLERANCE {
            return Err(BenchError::WrongResult {
                bench: "sgemm",
                detail: format!(
                    "the {baseline} baseline is off the f64 reference by {err:.2e} (relative, allowed {TOLERANCE:e})"
                ),
            });
        }
        Ok(ctx)
    }

    /// Relative error of `c` against the sampled `f64` reference.
    fn reference_error(&self, c: &[f32]) -> f64 {
        rel_frobenius(
            self.reference
                .iter()
                .map(|&(i, j, v)| (c[i * self.e + j] as f64, v)),
        )
    }

    /// Runs the benchmark `name` with tiling `config` on `q`.
    fn run(
        &self,
        q: &Queue,
        name: &'static str,
        config: SgemmConfig,
        reps: usize,
    ) -> Result<BenchResult, BenchError> {
        let e = self.e;
        let sgemm = Sgemm::new(config)?;
        let range = config.range(e, e, e)?;
        let (da, db) = (&self.a, &self.b);
        let dc = Buffer::<f32>::new(q.device(), e * e)?;
        let strata_s = crate::bench::timed(reps, || -> Result<f64, Error> {
            q.fill(&dc, f32::NAN, 0..e * e)?;
            let t = Instant::now();
            sgemm.launch(q, da, db, &dc, e, e, e)?;
            Ok(t.elapsed().as_secs_f64())
        })?;
        let got = q.read(&dc)?;
        let rel_error = rel_frobenius_par(&got, &self.want);
        let reference = self.reference_error(&got);
        if rel_error.is_nan()
            || rel_error > TOLERANCE
            || reference.is_nan()
            || reference > TOLERANCE
        {
            let first = got
                .iter()
                .zip(&self.want)
                .position(|(g, w)| {
                    g.is_nan() || (g - w).abs() as f64 > TOLERANCE * w.abs().max(1.0) as f64
                })
                .map_or(String::new(), |i| {
                    format!(
                        "; first difference at c[{}][{}]: {:e}, the {} baseline computed {:e}",
                        i / e,
                        i % e,
                        got[i],
                        self.baseline,
                        self.want[i]
                    )
                });
            return Err(BenchError::WrongResult {
                bench: name,
                detail: format!(
                    "relative error {rel_error:.2e} against the {} baseline and {reference:.2e} against the f64 reference (allowed {TOLERANCE:e}){first}",
                    self.baseline
                ),
            });
        }
        let (e64, local) = (e as u64, config.threads() as usize);
        Ok(BenchResult {
            bench: name,
            device: q.device().spec(),
            n: e,
            reps,
            local_size: local,
            groups: range.group_count(),
            bytes: 3 * 4 * e64 * e64,
            flops: 2 * e64 * e64 * e64,
            strata_s,
            baseline: self.baseline,
            baseline_s: self.baseline_s,
            ratio: strata_s / self.baseline_s,
            avx2_s: self.avx2_s,
            ratio_avx2: self.avx2_s.map(|s| strata_s / s),
            rel_error,
            compile_s: None,
            compile_cached_s: None,
            tuned: None,
        })
    }
}
