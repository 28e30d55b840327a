//! The tensor-field benchmarks of `strata bench`: Rudin–Osher–Fatemi denoising by Chambolle's
//! algorithm (`denoise::rof`, the PACXX paper's FlexBox benchmark), with and
//! without operator fusion, beside a hand-written rayon version on the host, in the same run.
//!
//! | bench         | strata side                                   | baseline                                  |
//! |---------------|-----------------------------------------------|-------------------------------------------|
//! | `rof_fused`   | [`ITERS`] iterations + the output, fusion on: 2 kernels per iteration + 1 | rayon: 2 passes per iteration + 1 |
//! | `rof_unfused` | the same with fusion off ([`Fields::with_fusion`]): 12 kernels per iteration + 3 | `rof_fused`, timed in the same row: the ratio is the fusion gain |
//!
//! The image is `n x n` `f32` pixels with `n = sqrt(size / 4)` (2048 at the default `--size`
//! of 2^24; on the interpreter [`crate::bench::compute::INTERP_WORK_DIVISOR`] times fewer
//! pixels), a smooth pattern plus deterministic noise. The sides of a row run by turns (after
//! one warm-up run each), so a change in the machine's load falls on all of them; the times
//! are medians. `rof_fused`'s rayon baseline has two builds ([`builds`]: the default
//! target's and AVX2+FMA, its `avx2` columns; the same bits, checked). **strata time**: from the first
//! enqueue until the denoised image is complete on the device (the dual field's zero
//! allocation included; the upload of the noisy image before, and the read back after, are
//! not timed). **baseline time**: the same algorithm in `f32` on host slices, rows in parallel
//! (rayon), one pass computing `div p - f / λ` and one computing the gradient and the update,
//! then the output pass. **Bytes**: what the fused kernels must move, `(4 + 5) * 4` bytes a
//! pixel per iteration. The strata result is checked against the rayon result (largest
//! difference relative to the largest pixel, at most [`TOLERANCE`]).

/// Chambolle's ROF iteration on fields, shared with the `rof` example (an application of the
/// fields, not part of the library).
mod denoise;

use crate::bench::builds::{self, two_builds, Build};
use crate::bench::compute::INTERP_WORK_DIVISOR;
use crate::bench::{check_exact, BenchError, BenchResult, DEFAULT_SIZE};
use rayon::prelude::*;
use std::time::Instant;
use strata::fields::{Field, Fields, Shape};
use strata::prelude::*;
use strata::BackendKind;

/// The field benchmarks, in the order they run.
pub const BENCHES: [&str; 2] = ["rof_fused", "rof_unfused"];

/// Chambolle iterations per timed run.
pub const ITERS: usize = 10;

/// Weight of the data term.
pub const LAMBDA: f32 = 0.1;

/// Step of the iteration.
pub const TAU: f32 = 0.25;

/// Largest difference allowed between strata's and rayon's images, relative to the largest
/// pixel.
pub const TOLERANCE: f64 = 1e-4;

/// The image edge for a `--size` of `size` on a device of `backend`.
pub fn edge(backend: BackendKind, size: usize) -> usize {
    let mut pixels = size.min(DEFAULT_SIZE) / 4;
    if backend == BackendKind::Interp {
        pixels /= INTERP_WORK_DIVISOR;
    }
    ((pixels as f64).sqrt() as usize).max(4)
}

/// The noisy picture: a smooth pattern with steps, plus noise from a fixed hash.
pub fn picture(n: usize) -> Vec<f32> {
    (0..n * n)
        .into_par_iter()
        .map(|i| {
            let (x, y) = ((i % n) as f32 / n as f32, (i / n) as f32 / n as f32);
            let base = if (x - 0.5).abs() < 0.25 && (y - 0.5).abs() < 0.25 {
                0.8
            } else {
                0.2
            };
            let h = (i as u32).wrapping_mul(2654435761) >> 8;
            base + 0.1 * x + ((h % 1000) as f32 / 1000.0 - 0.5) * 0.3
        })
        .collect()
}

/// The divergence of the dual field `p` at pixel `i` of an `n`-wide image (backward
/// differences, zero past the image's top and left edges).
#[inline(always)]
fn div(p: &[[f32; 2]], i: usize, n: usize) -> f32 {
    let (x, y) = (i % n, i / n);
    let left = if x > 0 { p[i - 1][0] } else { 0.0 };
    let up = if y > 0 { p[i - n][1] } else { 0.0 };
    (p[i][0] - left) + (p[i][1] - up)
}

two_builds! {
    /// Row `y` of the first pass of an iteration: `v = div p - f / λ`, compiled for `build`.
    pub fn rof_row_v(y: usize, row: &mut [f32], p: &[[f32; 2]], f: &[f32], n: usize, lambda: f32) {
        for (x, v) in row.iter_mut().enumerate() {
            let i = y * n + x;
            *v = div(p, i, n) - f[i] / lambda;
        }
    }
}

two_builds! {
    /// Row `y` of the second pass: the gradient of `v` and the update of `p`, compiled for
    /// `build`.
    pub fn rof_row_p(y: usize, row: &mut [[f32; 2]], v: &[f32], n: usize, tau: f32) {
        for (x, pi) in row.iter_mut().enumerate() {
            let i = y * n + x;
            let c = v[i];
            let gx = if x + 1 < n { v[i + 1] - c } else { 0.0 };
            let gy = if y + 1 < n { v[i + n] - c } else { 0.0 };
            let d = (gx * gx + gy * gy).sqrt() * tau + 1.0;
            *pi = [(pi[0] + gx * tau) / d, (pi[1] + gy * tau) / d];
        }
    }
}

two_builds! {
    /// Row `y` of the output `u = f - λ div p`, compiled for `build`.
    pub fn rof_row_out(y: usize, row: &mut [f32], p: &[[f32; 2]], f: &[f32], n: usize, lambda: f32) {
        for (x, u) in row.iter_mut().enumerate() {
            let i = y * n + x;
            *u = f[i] - div(p, i, n) * lambda;
        }
    }
}

/// Chambolle's algorithm in `f32` on the host, rows in parallel: `iters` iterations and the
/// output `u = f - λ div p`, the rows' loops compiled for `build` ([`rof_row_v`],
/// [`rof_row_p`], [`rof_row_out`]).
pub fn rof_rayon(
    build: Build,
    f: &[f32],
    n: usize,
    lambda: f32,
    tau: f32,
    iters: usize,
) -> Vec<f32> {
    let mut p = vec![[0.0f32; 2]; n * n];
    let mut v = vec![0.0f32; n * n];
    for _ in 0..iters {
        v.par_chunks_mut(n)
            .enumerate()
            .for_each(|(y, row)| rof_row_v(build, y, row, &p, f, n, lambda));
        p.par_chunks_mut(n)
            .enumerate()
            .for_each(|(y, row)| rof_row_p(build, y, row, &v, n, tau));
    }
    let mut u = vec![0.0f32; n * n];
    u.par_chunks_mut(n)
        .enumerate()
        .for_each(|(y, row)| rof_row_out(build, y, row, &p, f, n, lambda));
    u
}

/// Runs `rof_fused` or `rof_unfused` on `q` for a `--size` of `size`.
pub(crate) fn run(
    name: &'static str,
    q: &Queue,
    size: usize,
    reps: usize,
) -> Result<BenchResult, BenchError> {
    let n = edge(q.device().info().backend, size);
    let f = picture(n);
    let fx = Fields::new(q);
    let field = fx.from_slice(Shape::d2(n, n), &f)?;
    // One timed denoising with fusion on or off; the result is kept for the check.
    let denoise_on = |fx: &Fields, last: &mut Option<Field<f32>>| -> strata::Result<f64> {
        let field = fx.from_buffer(field.shape(), field.buffer()?)?;
        *last = None;
        let t = Instant::now();
        let u = denoise::rof(&field, LAMBDA, TAU, ITERS)?.eval()?;
        u.buffer()?; // waits
        let s = t.elapsed().as_secs_f64();
        *last = Some(u);
        Ok(s)
    };
    let (mut fused, mut other) = (None, None);
    let mut avx2_s = None;
    let (strata_s, baseline, baseline_s, rel_error) = if name == "rof_fused" {
        let (fused_s, rayon_s, avx2, want) = builds::alternating(
            reps,
            || denoise_on(&fx, &mut fused).map_err(BenchError::from),
            |build, want: &mut Vec<f32>| {
                drop(std::mem::take(want));
                let t = Instant::now();
                *want = std::hint::black_box(rof_rayon(build, &f, n, LAMBDA, TAU, ITERS));
                Ok(t.elapsed().as_secs_f64())
            },
            // The same operations in the same order: the same bits.
            |fast, want| check_exact("rof_fused (the AVX2+FMA baseline)", fast, want),
        )?;
        avx2_s = avx2;
        let got = fused.expect("ran").to_vec()?;
        (fused_s, "rayon", rayon_s, check(name, &got, &want)?)
    } else {
        let unfused_fx = fx.with_fusion(false);
        let [unfused_s, fused_s] = crate::bench::alternate(
            reps,
            [&mut || denoise_on(&unfused_fx, &mut other), &mut || {
                denoise_on(&fx, &mut fused)
            }],
        )?;
        let (got, want) = (other.expect("ran").to_vec()?, fused.expect("ran").to_vec()?);
        (unfused_s, "rof_fused", fused_s, check(name, &got, &want)?)
    };
    Ok(BenchResult {
        bench: name,
        device: q.device().info().spec(),
        n,
        reps,
        local_size: 256,
        groups: n.div_ceil(32) * n.div_ceil(8),
        bytes: (9 * 4 * n * n * ITERS) as u64,
        flops: 0,
        strata_s,
        baseline,
        baseline_s,
        ratio: strata_s / baseline_s,
        avx2_s: None,
        ratio_avx2: None,
        rel_error,
        compile_s: None,
        compile_cached_s: None,
        tuned: None,
    }
    .with_avx2(avx2_s))
}

/// The largest difference relative to the largest pixel; fails past [`TOLERANCE`].
fn check(bench: &'static str, got: &[f32], want: &[f32]) -> Result<f64, BenchError> {
    let largest = want
        .iter()
        .fold(0.0f64, |a, &b| a.max((b as f64).abs()))
        .max(1e-30);
    let (i, diff) = got
        .iter()
        .zip(want)
        .map(|(a, b)| (*a as f64 - *b as f64).abs())
        .enumerate()
        .fold((0, 0.0f64), |m, (i, d)| if d > m.1 { (i, d) } else { m });
    let rel = diff / largest;
    if rel > TOLERANCE || got.len() != want.len() {
        return Err(BenchError::WrongResult {
            bench,
            detail: format!(
                "pixel {i}: {} against {} (relative difference {rel:.2e})",
                got.get(i).copied().unwrap_or(f32::NAN),
                want.get(i).copied().unwrap_or(f32::NAN)
            ),
        });
    }
    Ok(rel)
}
