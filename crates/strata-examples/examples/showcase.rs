//! The showcase: what strata does, in one run on the best device available (or the one named).
//!
//! ```text
//! cargo run --release --example showcase
//! cargo run --release --example showcase -- --device cpu --out mandelbrot.png
//! cargo run --release --example showcase -- --help
//! ```
//!
//! Prints the device's summary, then runs saxpy, a sum reduction (each work-group adds its
//! stretch of the input, its work-items side by side, then a local-memory tree with
//! barriers), a tiled matrix multiplication (local-memory tiles) and a Mandelbrot set (a
//! divergent `while` loop per pixel), verifies each against plain Rust, and times each kernel
//! (from its launch events, the best of three launches) beside the same computation written
//! with rayon on the host (best of three runs), printing the ratio. It writes the Mandelbrot set as a PNG (by default
//! `target/showcase/mandelbrot.png`), says where, and ends with a one-line verdict.

#[cfg(test)]
#[path = "common/vulkan.rs"]
#[allow(clippy::duplicate_mod)] // tests/examples_checked.rs includes several examples
mod vulkan;

use rayon::prelude::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use strata::prelude::*;

#[path = "common/pictures.rs"]
mod pictures;

// The `#[kernel]` twin of `mandelbrot` below, shared with the `mandelbrot` example.
#[cfg(test)]
#[path = "common/mandelbrot_kernel.rs"]
mod mandelbrot_kernel;
#[cfg(test)]
use mandelbrot_kernel::mandelbrot_fn;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Problem sizes.
#[derive(Clone, Copy)]
struct Sizes {
    saxpy: usize,
    reduce: usize,
    matmul: usize,
    mandel: (usize, usize),
    max_iter: u32,
}

/// The full-size run of `main`.
const FULL: Sizes = Sizes {
    saxpy: 1 << 22,
    reduce: 1 << 22,
    matmul: 512,
    mandel: (512, 384),
    max_iter: 256,
};

/// One verified step.
struct Step {
    name: String,
    /// The kernel's run time: the best of three launches ([`kernel_best_of_three`]).
    kernel_time: Duration,
    /// The same computation with rayon on the host (best of three runs).
    rayon_time: Duration,
    /// Work done, for the throughput column: (amount, unit).
    work: (f64, &'static str),
    check: String,
    /// The step's picture as RGB bytes (the Mandelbrot set), if it draws one.
    picture: Option<Vec<u8>>,
}

/// The best time of three runs of `f` (the first also pays for rayon's thread pool).
fn best_of_three(mut f: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// The best run time of three launches, as rayon's [`best_of_three`]: the verified first
/// launch (`first`, which may also pay for one-time work in the launch, such as the `cpu`
/// backend compiling its 4-lane variant) and two more by `again`. Each launch is timed by its
/// event (start to end on the device).
fn kernel_best_of_three(
    first: &strata::Run,
    mut again: impl FnMut() -> strata::Result<strata::Run>,
) -> BoxResult<Duration> {
    first.wait()?;
    let mut best = first.event().duration()?;
    for _ in 0..2 {
        let run = again()?;
        run.wait()?;
        best = best.min(run.event().duration()?);
    }
    Ok(best)
}

fn saxpy(q: &Queue, n: usize) -> BoxResult<Step> {
    let k = Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })?;
    let xs: Vec<f32> = (0..n).map(|i| (i % 1024) as f32 * 0.5).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (x, y) = (Buffer::from_slice(q, &xs)?, Buffer::from_slice(q, &ys)?);
    let run = k.launch(q, NdRange::covering(n, 256), args![3.0f32, &x, &y])?;
    let got = q.read(&y)?;
    let bad = (0..n)
        .filter(|&i| {
            let want = 3.0 * xs[i] + ys[i];
            (got[i] - want).abs() > want.abs() * 1e-6
        })
        .count();
    if bad > 0 {
        return Err(format!("saxpy: {bad} of {n} elements are wrong").into());
    }
    let mut out = vec![0.0f32; n];
    let rayon_time = best_of_three(|| {
        out.par_iter_mut()
            .zip(xs.par_iter().zip(&ys))
            .for_each(|(o, (x, y))| *o = 3.0 * x + y)
    });
    Ok(Step {
        name: format!("saxpy, {n} elements"),
        kernel_time: kernel_best_of_three(&run, || {
            k.launch(q, NdRange::covering(n, 256), args![3.0f32, &x, &y])
        })?,
        rayon_time,
        work: (3.0 * 4.0 * n as f64 / 1e9, "GB/s"),
        check: "every element equals the host's".into(),
        picture: None,
    })
}

fn reduce(q: &Queue, n: usize) -> BoxResult<Step> {
    const LOCAL: u32 = 256;
    const GROUPS: usize = 128;
    let k = Kernel::build("reduce", |k| {
        let x = k.read::<u32>("x");
        let partials = k.write::<u32>("partials");
        let tile = k.local_array::<u32>("tile", LOCAL);
        let l = local_id(0);
        let mut acc = var(0u32);
        // The group's stretch of `x`, its work-items side by side in each step: consecutive
        // work-items read consecutive elements (coalesced on a GPU, one vector on the CPU
        // backend) and each group streams through memory of its own.
        let chunk = (x.len() + num_groups(0) - 1u32) / num_groups(0);
        let chunk = (chunk + (LOCAL - 1)) / LOCAL * LOCAL;
        let start = group_id(0) * chunk;
        let end = (start + chunk).min(x.len());
        for_step::<u32>(start + l, end, LOCAL, |j| acc += x.at(j));
        tile.set(l, acc.get());
        barrier();
        let mut s = LOCAL / 2;
        while s > 0 {
            if_(l.lt(s), || tile.set(l, tile.at(l) + tile.at(l + s)));
            barrier();
            s /= 2;
        }
        if_(l.eq(0u32), || partials.set(group_id(0), tile.at(0u32)));
    })?;
    let xs: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 22)
        .collect();
    let x = Buffer::from_slice(q, &xs)?;
    let partials = Buffer::<u32>::new(q, GROUPS)?;
    let range = NdRange::new(GROUPS * LOCAL as usize).local(LOCAL as usize);
    let run = k.launch(q, range, args![&x, &partials])?;
    let got = q
        .read(&partials)?
        .iter()
        .fold(0u32, |a, &b| a.wrapping_add(b));
    let want = xs.iter().fold(0u32, |a, &b| a.wrapping_add(b));
    if got != want {
        return Err(format!("reduce: sum is {got}, expected {want}").into());
    }
    let mut sum = 0;
    let rayon_time = best_of_three(|| {
        sum = xs.par_iter().copied().reduce(|| 0u32, u32::wrapping_add);
    });
    assert_eq!(sum, want);
    Ok(Step {
        name: format!("sum reduction, {n} u32 (local tree)"),
        kernel_time: kernel_best_of_three(&run, || k.launch(q, range, args![&x, &partials]))?,
        rayon_time,
        work: (4.0 * n as f64 / 1e9, "GB/s"),
        check: format!("sum {got} equals the host's"),
        picture: None,
    })
}

fn matmul(q: &Queue, n: usize) -> BoxResult<Step> {
    const TILE: u32 = 16;
    let k = Kernel::build("matmul_tiled", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let n = k.scalar::<u32>("n");
        let a_tile = k.local_array::<f32>("a_tile", TILE * TILE);
        let b_tile = k.local_array::<f32>("b_tile", TILE * TILE);
        let (tx, ty) = (local_id(0), local_id(1));
        let col = group_id(0) * TILE + tx;
        let row = group_id(1) * TILE + ty;
        let mut acc = var(0.0f32);
        for_range(0u32, (n + (TILE - 1)) / TILE, |t| {
            let (a_col, b_row) = (t * TILE + tx, t * TILE + ty);
            if_(row.lt(n).and(a_col.lt(n)), || {
                a_tile.set(ty * TILE + tx, a.at(row * n + a_col))
            })
            .else_(|| a_tile.set(ty * TILE + tx, 0.0f32));
            if_(b_row.lt(n).and(col.lt(n)), || {
                b_tile.set(ty * TILE + tx, b.at(b_row * n + col))
            })
            .else_(|| b_tile.set(ty * TILE + tx, 0.0f32));
            barrier_local();
            for p in 0..TILE {
                acc += a_tile.at(ty * TILE + p) * b_tile.at(p * TILE + tx);
            }
            barrier_local();
        });
        if_(row.lt(n).and(col.lt(n)), || c.set(row * n + col, acc.get()));
    })?;
    let av: Vec<f32> = (0..n * n)
        .map(|i| ((i * 37) % 17) as f32 / 8.0 - 1.0)
        .collect();
    let bv: Vec<f32> = (0..n * n)
        .map(|i| ((i * 11) % 13) as f32 / 6.0 - 1.0)
        .collect();
    let (a, b) = (Buffer::from_slice(q, &av)?, Buffer::from_slice(q, &bv)?);
    let c = Buffer::<f32>::new(q, n * n)?;
    let t = TILE as usize;
    let range = NdRange::new([n.div_ceil(t) * t; 2]).local([t, t]);
    let run = k.launch(q, range, args![&a, &b, &c, n as u32])?;
    let got = q.read(&c)?;
    // Host matmul, i-p-j order for speed, in f64.
    let mut want = vec![0.0f64; n * n];
    for i in 0..n {
        for p in 0..n {
            let aip = av[i * n + p] as f64;
            for j in 0..n {
                want[i * n + j] += aip * bv[p * n + j] as f64;
            }
        }
    }
    let max_err = got
        .iter()
        .zip(&want)
        .map(|(&g, &w)| (g as f64 - w).abs())
        .fold(
            0.0f64,
            |m, e| if e.is_nan() { f64::INFINITY } else { m.max(e) },
        );
    if max_err > 1e-3 * n as f64 {
        return Err(format!("matmul: max error {max_err}").into());
    }
    // rayon: a row of C per task, i-p-j order, in f32 like the kernel.
    let mut cv = vec![0.0f32; n * n];
    let rayon_time = best_of_three(|| {
        cv.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
            row.fill(0.0);
            for p in 0..n {
                let aip = av[i * n + p];
                for (cj, bpj) in row.iter_mut().zip(&bv[p * n..(p + 1) * n]) {
                    *cj += aip * bpj;
                }
            }
        })
    });
    Ok(Step {
        name: format!("tiled matmul, {n}x{n} (16x16 local tiles)"),
        kernel_time: kernel_best_of_three(&run, || {
            k.launch(q, range, args![&a, &b, &c, n as u32])
        })?,
        rayon_time,
        work: (2.0 * (n * n * n) as f64 / 1e9, "GFLOP/s"),
        check: format!("max |error| vs host {max_err:.1e}"),
        picture: None,
    })
}

fn mandelbrot(q: &Queue, (w, h): (usize, usize), max_iter: u32) -> BoxResult<Step> {
    let k = Kernel::build("mandelbrot", |k| {
        let out = k.write::<u32>("iters");
        let (width, height) = (k.scalar::<u32>("width"), k.scalar::<u32>("height"));
        let (x0, y0, d) = (
            k.scalar::<f32>("x0"),
            k.scalar::<f32>("y0"),
            k.scalar::<f32>("d"),
        );
        let max_iter = k.scalar::<u32>("max_iter");
        let (px, py) = (global_id(0), global_id(1));
        if_(px.lt(width).and(py.lt(height)), || {
            let cx = x0 + px.cast::<f32>() * d;
            let cy = y0 + py.cast::<f32>() * d;
            let (zx, zy, it) = (var(0.0f32), var(0.0f32), var(0u32));
            while_(
                || {
                    let (x, y) = (zx.get(), zy.get());
                    it.get().lt(max_iter).and((x * x + y * y).le(4.0f32))
                },
                || {
                    let (x, y) = (zx.get(), zy.get());
                    zx.set(x * x - y * y + cx);
                    zy.set(2.0f32 * x * y + cy);
                    it.set(it.get() + 1u32);
                },
            );
            out.set(py * width + px, it.get());
        });
    })?;
    let (x0, y0) = (-2.2f32, -1.2f32);
    let d = 2.4 / h as f32;
    let iters = Buffer::<u32>::new(q, w * h)?;
    let range = NdRange::new([w, h]);
    let run = k.launch(
        q,
        range,
        args![&iters, w as u32, h as u32, x0, y0, d, max_iter],
    )?;
    let got = q.read(&iters)?;
    let host = |px: usize, py: usize| {
        let (cx, cy) = (x0 + px as f32 * d, y0 + py as f32 * d);
        let (mut x, mut y, mut it) = (0.0f32, 0.0f32, 0u32);
        while it < max_iter && x * x + y * y <= 4.0 {
            let nx = x * x - y * y + cx;
            y = 2.0 * x * y + cy;
            x = nx;
            it += 1;
        }
        it
    };
    let differ = (0..w * h).filter(|&i| got[i] != host(i % w, i / w)).count();
    // A GPU may contract x * x + c into a fused multiply-add and leave the set at another
    // iteration near its boundary; the CPU backend matches Rust exactly.
    let allowed = if q.device().info().backend == strata::BackendKind::Cpu {
        0
    } else {
        w * h / 100
    };
    if differ > allowed {
        return Err(format!("mandelbrot: {differ} of {} pixels differ", w * h).into());
    }
    let inside = got.iter().filter(|&&i| i == max_iter).count();
    let total: u64 = got.iter().map(|&i| i as u64).sum();
    let mut counts = vec![0u32; w * h];
    let rayon_time = best_of_three(|| {
        counts
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, c)| *c = host(i % w, i / w))
    });
    Ok(Step {
        name: format!("mandelbrot, {w}x{h}, up to {max_iter} iterations"),
        kernel_time: kernel_best_of_three(&run, || {
            k.launch(
                q,
                range,
                args![&iters, w as u32, h as u32, x0, y0, d, max_iter],
            )
        })?,
        rayon_time,
        work: (total as f64 / 1e9, "G iterations/s"),
        check: format!(
            "{differ} pixels differ from the host, {:.1}% inside the set",
            100.0 * inside as f64 / (w * h) as f64
        ),
        picture: Some(pictures::iteration_colours(&got, max_iter)),
    })
}

// The four kernels as plain Rust functions (`#[kernel]`), each recording exactly the IR of
// the builder kernel of its step above (checked by the test at the end). `var(init)` declares
// a private variable named `v`, like the builder's `var`.

/// The kernel of [`saxpy`].
#[kernel(name = "saxpy")]
fn saxpy_fn(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// The kernel of [`reduce`].
#[kernel(name = "reduce")]
fn reduce_fn(x: &[u32], #[write] partials: &mut [u32]) {
    const LOCAL: u32 = 256;
    let tile = local_array::<u32>(LOCAL);
    let l = local_id(0);
    let mut acc = var(0u32);
    let chunk = (x.len() + num_groups(0) - 1u32) / num_groups(0);
    let chunk = (chunk + (LOCAL - 1)) / LOCAL * LOCAL;
    let start = group_id(0) * chunk;
    let end = (start + chunk).min(x.len());
    for j in (start + l..end).step_by(LOCAL) {
        acc += x[j];
    }
    tile[l] = acc;
    barrier();
    let mut s = LOCAL / 2;
    while s > 0 {
        if l < s {
            tile[l] = tile[l] + tile[l + s];
        }
        barrier();
        s /= 2;
    }
    if l == 0u32 {
        partials[group_id(0)] = tile[0u32];
    }
}

/// The kernel of [`matmul`].
#[kernel(name = "matmul_tiled")]
fn matmul_fn(a: &[f32], b: &[f32], #[write] c: &mut [f32], n: u32) {
    const TILE: u32 = 16;
    let a_tile = local_array::<f32>(TILE * TILE);
    let b_tile = local_array::<f32>(TILE * TILE);
    let (tx, ty) = (local_id(0), local_id(1));
    let col = group_id(0) * TILE + tx;
    let row = group_id(1) * TILE + ty;
    let mut acc = var(0.0f32);
    for t in 0u32..(n + (TILE - 1)) / TILE {
        let (a_col, b_row) = (t * TILE + tx, t * TILE + ty);
        if row < n && a_col < n {
            a_tile[ty * TILE + tx] = a[row * n + a_col];
        } else {
            a_tile[ty * TILE + tx] = 0.0f32;
        }
        if b_row < n && col < n {
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
    if row < n && col < n {
        c[row * n + col] = acc;
    }
}

/// Runs every step on `device`; stops at the first failure.
fn showcase(device: &Device, sizes: Sizes, print: bool) -> BoxResult<Vec<Step>> {
    let q = Queue::new(device)?;
    let mut steps = Vec::new();
    let runs: [&dyn Fn() -> BoxResult<Step>; 4] = [
        &|| saxpy(&q, sizes.saxpy),
        &|| reduce(&q, sizes.reduce),
        &|| matmul(&q, sizes.matmul),
        &|| mandelbrot(&q, sizes.mandel, sizes.max_iter),
    ];
    if print {
        println!(
            "  {:<46} {:>12} {:>12} {:>9}  {:<23} check",
            "kernel", "strata", "rayon", "speed-up", "strata's throughput"
        );
    }
    for run in runs {
        let step = run()?;
        if print {
            let secs = step.kernel_time.as_secs_f64();
            println!(
                "  {:<46} {:>9.3} ms {:>9.3} ms {:>8.2}x  {:>8.2} {:<14} ok: {}",
                step.name,
                secs * 1e3,
                step.rayon_time.as_secs_f64() * 1e3,
                step.rayon_time.as_secs_f64() / secs.max(1e-9),
                step.work.0 / secs.max(1e-9),
                step.work.1,
                step.check
            );
        }
        steps.push(step);
    }
    Ok(steps)
}

const USAGE: &str = "\
usage: cargo run --release --example showcase -- [--device SPEC] [--out FILE.png]

  -d, --device SPEC   the device: cpu, interp, opencl:N, cuda:N or best (the default), any of
                      them with +checked
      --out FILE.png  where the Mandelbrot picture goes (default target/showcase/mandelbrot.png)
  -h, --help          this text

Runs saxpy, a reduction, a tiled matmul and the Mandelbrot set on the device, checks each
against plain Rust, and prints each kernel's time beside the same computation with rayon on
the host (speed-up: rayon's time / strata's; kernel times come from the launch events).";

/// The command line: the device spec and the picture's path; `Err` holds a usage error.
fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<(String, PathBuf)>, String> {
    let mut device = "best".to_string();
    let mut out = PathBuf::from("target/showcase/mandelbrot.png");
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "-d" | "--device" => device = value()?,
            "--out" => out = PathBuf::from(value()?),
            _ => return Err(format!("unknown argument `{a}`")),
        }
    }
    Ok(Some((device, out)))
}

fn main() {
    let start = Instant::now();
    let (spec, out) = match parse_args(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    let device = match Device::from_spec(&spec) {
        Ok(d) => d,
        Err(e @ strata::Error::InvalidDeviceSpec(_)) => {
            eprintln!("error: {e}\n\n{USAGE}");
            std::process::exit(2);
        }
        Err(e) => {
            eprintln!("verdict: FAILED, no device: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", device.info());
    println!();
    match showcase(&device, FULL, true) {
        Ok(steps) => {
            let kernels: Duration = steps.iter().map(|s| s.kernel_time).sum();
            println!();
            if let Some(rgb) = steps.iter().find_map(|s| s.picture.as_ref()) {
                let written = out
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .map_err(|e| e.to_string())
                    .and_then(|_| {
                        pictures::write_png(&out, FULL.mandel, 3, rgb).map_err(|e| e.to_string())
                    });
                match written {
                    Ok(()) => println!(
                        "picture: the Mandelbrot set, {}x{}, written to {}",
                        FULL.mandel.0,
                        FULL.mandel.1,
                        std::fs::canonicalize(&out).unwrap_or(out).display()
                    ),
                    Err(e) => {
                        println!("verdict: FAILED, cannot write {}: {e}", out.display());
                        std::process::exit(1);
                    }
                }
            }
            println!(
                "verdict: OK, {} kernels verified on {} (kernels {:.3} s, total {:.2} s)",
                steps.len(),
                device.info().spec(),
                kernels.as_secs_f64(),
                start.elapsed().as_secs_f64()
            );
        }
        Err(e) => {
            println!();
            println!("verdict: FAILED on {}: {e}", device.info().spec());
            std::process::exit(1);
        }
    }
}

#[test]
pub fn showcase_on_cpu() {
    showcase_on(&Device::from_spec("cpu").unwrap());
}

/// The same on `vulkan:0` (lavapipe here).
#[test]
pub fn showcase_on_vulkan() {
    if let Some(d) = vulkan::vulkan0() {
        showcase_on(&d);
    }
}

/// The example's check on `device` (the tests run it in checked mode too).
pub fn showcase_on(device: &Device) {
    let small = Sizes {
        saxpy: 10_000,
        reduce: 100_000,
        matmul: 45,
        mandel: (61, 37),
        max_iter: 64,
    };
    let steps = showcase(device, small, false).unwrap();
    assert_eq!(steps.len(), 4);
    assert!(steps.iter().all(|s| s.rayon_time > Duration::ZERO));
    let picture = steps[3]
        .picture
        .as_ref()
        .expect("the Mandelbrot step draws");
    assert_eq!(picture.len(), 61 * 37 * 3);
}

#[test]
pub fn arguments() {
    let parse = |args: &[&str]| parse_args(args.iter().map(|a| a.to_string()));
    assert_eq!(
        parse(&[]),
        Ok(Some((
            "best".into(),
            PathBuf::from("target/showcase/mandelbrot.png")
        )))
    );
    assert_eq!(
        parse(&["-d", "cpu", "--out", "m.png"]),
        Ok(Some(("cpu".into(), PathBuf::from("m.png"))))
    );
    assert_eq!(
        parse(&["--device", "interp+checked"]).unwrap().unwrap().0,
        "interp+checked"
    );
    assert_eq!(parse(&["--help"]), Ok(None));
    assert_eq!(parse(&["-h"]), Ok(None));
    assert!(parse(&["--frobnicate"])
        .unwrap_err()
        .contains("`--frobnicate`"));
    assert!(parse(&["--device"]).unwrap_err().contains("needs a value"));
}

#[test]
pub fn macro_style_matches_builder() {
    let device = Device::from_spec("cpu").unwrap();
    let tiny = Sizes {
        saxpy: 100,
        reduce: 1000,
        matmul: 16,
        mandel: (8, 8),
        max_iter: 8,
    };
    // The builder kernels, as the steps build them.
    let (steps, built) = strata::capture_kernels(|| showcase(&device, tiny, false));
    steps.unwrap();
    let twins = [
        saxpy_fn::build().unwrap().kernel().clone(),
        reduce_fn::build().unwrap().kernel().clone(),
        matmul_fn::build().unwrap().kernel().clone(),
        mandelbrot_fn::build().unwrap().kernel().clone(),
    ];
    assert_eq!(built.len(), twins.len());
    for (b, t) in built.iter().zip(&twins) {
        assert_eq!(t.name(), b.name());
        assert_eq!(t.ir_text(), b.ir_text(), "{}", b.name());
    }
}
