//! Rudin–Osher–Fatemi total-variation denoising by Chambolle's projection algorithm (the
//! PACXX paper's FlexBox benchmark), written once with tensor fields (`denoise.rs` of
//! strata-cli's bench, which this example includes): a noisy picture in, a denoised one out,
//! both written as PNGs.
//! Each iteration is two fused kernels (twelve with fusion off); the result is checked against
//! the same algorithm on the host in `f64`.
//!
//! ```sh
//! cargo run --release --example rof -- --device cpu --size 512x384 --iters 100 --out target/rof
//! cargo run --release --example rof -- --input photo.png     # your own picture (made grey)
//! ```

// Shared with `strata bench` (its rof rows), in the published strata-cli crate.
#[path = "../../strata-cli/src/bench/fields/denoise.rs"]
mod denoise;
#[path = "common/pictures.rs"]
mod pictures;

use pictures::{byte, parse_args, read_png_rgba, test_picture, write_png, BoxResult};
use std::time::Instant;
use strata::fields::{Fields, Shape};
use strata::prelude::*;

/// Weight of the data term and step of the iteration.
const LAMBDA: f32 = 0.1;
const TAU: f32 = 0.25;

/// A grey picture with Gaussian noise of standard deviation `sigma` (deterministic).
fn noisy(clean: &[f32], sigma: f32) -> Vec<f32> {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut unit = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    clean
        .iter()
        .map(|&c| {
            let (u1, u2) = (unit(), unit());
            let n = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            c + sigma * n as f32
        })
        .collect()
}

/// Chambolle's algorithm on the host in `f64` (the reference; see strata-cli's `bench/fields/denoise.rs`).
fn rof_host(f: &[f32], (w, h): (usize, usize), lambda: f64, tau: f64, iters: usize) -> Vec<f64> {
    let n = w * h;
    let mut p = vec![[0.0f64; 2]; n];
    let div = |p: &[[f64; 2]], x: usize, y: usize| {
        let i = y * w + x;
        let left = if x > 0 { p[i - 1][0] } else { 0.0 };
        let up = if y > 0 { p[i - w][1] } else { 0.0 };
        (p[i][0] - left) + (p[i][1] - up)
    };
    for _ in 0..iters {
        let v: Vec<f64> = (0..n)
            .map(|i| div(&p, i % w, i / w) - f[i] as f64 / lambda)
            .collect();
        for i in 0..n {
            let (x, y) = (i % w, i / w);
            let gx = if x + 1 < w { v[i + 1] - v[i] } else { 0.0 };
            let gy = if y + 1 < h { v[i + w] - v[i] } else { 0.0 };
            let d = 1.0 + tau * (gx * gx + gy * gy).sqrt();
            p[i] = [(p[i][0] + tau * gx) / d, (p[i][1] + tau * gy) / d];
        }
    }
    (0..n)
        .map(|i| f[i] as f64 - lambda * div(&p, i % w, i / w))
        .collect()
}

/// Denoises on `fx`'s device; returns the denoised picture.
fn denoise_on(
    fx: &Fields,
    f: &[f32],
    (w, h): (usize, usize),
    iters: usize,
) -> strata::Result<Vec<f32>> {
    let field = fx.from_slice(Shape::d2(h, w), f)?;
    denoise::rof(&field, LAMBDA, TAU, iters)?.to_vec()
}

fn grey(px: &[[f32; 4]]) -> Vec<f32> {
    px.iter()
        .map(|c| 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])
        .collect()
}

fn main() {
    let run = || -> BoxResult<()> {
        let o = parse_args("rof", (512, 384))?;
        let (size, clean) = match &o.input {
            Some(path) => {
                let (size, px) = read_png_rgba(path)?;
                (size, grey(&px))
            }
            None => (o.size, grey(&test_picture(o.size))),
        };
        let f = noisy(&clean, 0.1);
        let device: Device = o.device.parse()?;
        let fx = Fields::new(&Queue::new(&device)?);
        let t = Instant::now();
        let u = denoise_on(&fx, &f, size, o.iters)?;
        let secs = t.elapsed().as_secs_f64();
        // The same algorithm on the host in f64.
        let want = rof_host(&f, size, LAMBDA as f64, TAU as f64, o.iters);
        let diff = u
            .iter()
            .zip(&want)
            .map(|(a, b)| (*a as f64 - b).abs())
            .fold(0.0, f64::max);
        if diff > 1e-3 {
            return Err(format!("the result differs from the host's by {diff}").into());
        }
        let to_bytes = |v: &[f32]| v.iter().map(|&x| byte(x)).collect::<Vec<u8>>();
        write_png(&o.out.join("noisy.png"), size, 1, &to_bytes(&f))?;
        write_png(&o.out.join("denoised.png"), size, 1, &to_bytes(&u))?;
        let rms = |a: &[f32]| {
            (a.iter()
                .zip(&clean)
                .map(|(x, c)| ((x - c) as f64).powi(2))
                .sum::<f64>()
                / a.len() as f64)
                .sqrt()
        };
        println!(
            "rof: {}x{}, {} iterations on {} in {:.3} s ({} kernel launches); rms error to the clean picture {:.4} -> {:.4}; largest difference to the host (f64) {:.1e}; wrote {}/noisy.png and denoised.png",
            size.0,
            size.1,
            o.iters,
            device.info().spec(),
            secs,
            fx.queue().launch_count(),
            rms(&f),
            rms(&u),
            diff,
            o.out.display()
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("rof: {e}");
        std::process::exit(1);
    }
}

#[test]
fn matches_the_host_algorithm_and_removes_noise_on_every_device() {
    let size = (40, 28);
    let clean = grey(&test_picture(size));
    let f = noisy(&clean, 0.1);
    let iters = 30;
    let want = rof_host(&f, size, LAMBDA as f64, TAU as f64, iters);
    let rms = |a: &[f32]| {
        (a.iter()
            .zip(&clean)
            .map(|(x, c)| ((x - c) as f64).powi(2))
            .sum::<f64>()
            / a.len() as f64)
            .sqrt()
    };
    // Every device, and each again in checked mode: no fault, race or uninitialized read.
    for device in strata::devices()
        .iter()
        .flat_map(|d| [d.clone(), d.checked()])
    {
        if device.info().backend == strata::BackendKind::Cuda
            && std::env::var("STRATA_REQUIRE").is_err()
        {
            continue;
        }
        for fuse in [true, false] {
            let fx = Fields::new(&Queue::new(&device).unwrap()).with_fusion(fuse);
            let before = fx.queue().launch_count();
            let u = denoise_on(&fx, &f, size, iters).unwrap();
            // Per iteration 2 kernels fused, 12 unfused; the output: 1 fused, 3 unfused.
            let launches = fx.queue().launch_count() - before;
            assert_eq!(
                launches,
                if fuse {
                    2 * iters as u64 + 1
                } else {
                    12 * iters as u64 + 3
                }
            );
            let err = u
                .iter()
                .zip(&want)
                .map(|(a, b)| (*a as f64 - b).abs())
                .fold(0.0, f64::max);
            assert!(
                err < 1e-4,
                "{} fuse={fuse}: max difference to the host {err}",
                device.info().spec()
            );
            assert!(
                rms(&u) < 0.6 * rms(&f),
                "denoising removes noise: {} -> {}",
                rms(&f),
                rms(&u)
            );
        }
    }
    // The PNGs: written into a temporary folder, decoded back.
    let dir = pictures::temp_dir("rof");
    let u = denoise_on(
        &Fields::new(&Queue::new(&Device::from_spec("cpu").unwrap()).unwrap()),
        &f,
        size,
        iters,
    )
    .unwrap();
    let path = dir.join("denoised.png");
    write_png(
        &path,
        size,
        1,
        &u.iter().map(|&x| byte(x)).collect::<Vec<u8>>(),
    )
    .unwrap();
    let (got_size, px) = read_png_rgba(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(got_size, size);
    assert!(px
        .iter()
        .zip(&u)
        .all(|(p, &x)| (p[0] - x.clamp(0.0, 1.0)).abs() <= 0.5 / 255.0 + 1e-6));
}
