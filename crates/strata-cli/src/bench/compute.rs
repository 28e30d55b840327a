//! The compute-bound benchmarks of `strata bench`: three classic kernels written with the
//! builder ([`Kernel::build`]), a 3 x 3 blur, and a histogram bound by its atomics, each
//! beside a hand-written rayon baseline on the host in the same run (see [`crate::bench`] for the timing rule and the table). The baseline is rayon on
//! every device, CUDA ones included.
//!
//! | bench        | computation                                                    | `n`     | flops                       |
//! |--------------|----------------------------------------------------------------|---------|-----------------------------|
//! | `mandelbrot` | iteration counts (`u32`) of an `n x n` view of the Mandelbrot set, at most [`MANDELBROT_ITERS`] | 2048 | 8 per iteration |
//! | `nbody`      | one all-pairs step of softened gravity: the acceleration of each of `n` bodies | 16384 | [`NBODY_FLOPS`] (20) per interaction, `n^2` interactions |
//! | `matmul`     | `C = A B`, `n x n` `f32` matrices, [`TILE`] x [`TILE`] local-memory tiles | 1024 | `2 n^3` |
//! | `histogram`  | counts of the top 8 bits of `n` `u32` keys ([`HISTOGRAM_BINS`] bins) | 2^24 | none (`4 n` bytes read) |
//! | `blur`       | 3 x 3 box blur of an `n x n` `f32` image (the border copied) | 4096 | 9 per interior pixel (`8 n^2` bytes moved) |
//!
//! **Kernels.**
//! - `mandelbrot`: one work-item per pixel (a 1-D range over the `n^2` pixels, work-groups of
//!   the device's preferred size); pixel `(px, py)` is `c = (x0 + px d, y0 + py d)` over the
//!   square `[-2.2, 0.8] x [-1.5, 1.5]` (`d = 3 / n`). The loop runs while
//!   `it < max_iter && x*x + y*y <= 4`, its body is `x' = x*x - y*y + cx`,
//!   `y' = 2*x*y + cy`, `it += 1`. Flops: 8 per iteration (`x*x`, `y*y`, two for `x'`, three
//!   for `y'`, one for `x*x + y*y`; the comparisons are not counted), summed over the counts
//!   the baseline computed.
//! - `nbody`: one work-item per body, a plain loop over all bodies (structure of arrays `x`,
//!   `y`, `z`, `m`; no local memory). Per interaction: `d = p_j - p_i`,
//!   `r2 = d.x^2 + d.y^2 + d.z^2 + eps^2` ([`NBODY_EPS2`] = 0.01), `inv = 1 / sqrt(r2)`,
//!   `s = m_j * (inv * inv * inv)`, `a_i += d * s`: 3 subtractions, 6 for `r2`, a square root
//!   and a division, 3 multiplications for `s` and 6 for the accumulation, counted as 20
//!   flops. A body's interaction with itself is included (`d = 0` adds nothing): `n^2`
//!   interactions. The output is the acceleration per body, as three arrays.
//! - `matmul`: work-groups of 16 x 16 work-items, one per element of `C`; each copies its
//!   element of the current tiles of `A` and `B` into local memory, waits at a barrier,
//!   accumulates the 16 products (unrolled at build time) and waits again before the next
//!   tiles. Sizes that are not multiples of 16 are covered with whole work-groups and guarded.
//! - `blur`: one work-item per pixel in work-groups of [`BLUR_GROUP`] x [`BLUR_GROUP`], the
//!   image pitched by its edge `w` (a scalar argument): an interior pixel (`1 <= i, j` and
//!   `i + 1, j + 1 < w`) is the sum of its 3 x 3 neighbourhood, read at `(j + dj - 1) * w + i +
//!   di - 1` row by row, times `1 / 9`; a border pixel is copied. As an image filter is first
//!   written for a GPU: guarded, pitched, no local memory.
//! - `histogram`: one work-item per key, `bins.atomic_add(key >> 24, 1)` on the buffer of
//!   counts, as a GPU histogram is first written (no local-memory copy per work-group: the
//!   kernel as users write it, not [`strata::patterns`]' histogram). The keys are a hash of
//!   their index (uniform over the bins, no runs of one bin); every repetition starts from
//!   zeroed counts.
//!
//! **Baselines** (rayon, written for the compiler to vectorize, on the rayon pool the CPU
//! backend also uses):
//! - `mandelbrot`: rows in parallel; each row 8 pixels at a time, with arrays of 8 lanes and
//!   an escape mask (dead lanes keep iterating; their counts stop), until every lane has
//!   escaped or the iteration limit is reached.
//! - `nbody`: blocks of 8 bodies in parallel; for each body `j`, the 8 lanes' interactions
//!   with it (the inner loop over lanes vectorizes). Each lane adds its interactions in the
//!   same order and with the same operations as a strata work-item.
//! - `matmul`: the SGEMM baseline of [`crate::bench::blas`] (rows of `C` in parallel, `k` in
//!   blocks of 64, the inner loop over a row of `B` vectorized).
//! - `blur`: rows in parallel, each pixel's nine loads added in the kernel's order (the
//!   inner loop over a row's pixels vectorized).
//! - `histogram`: chunks of [`HISTOGRAM_CHUNK`] keys in parallel, each counted into a
//!   histogram of its own with plain adds, the chunks' histograms added (rayon's `fold` and
//!   `reduce`): what a Rust programmer writes instead of atomics.
//!
//! **Verification.** `mandelbrot`: the counts must equal the baseline's exactly. Both sides
//! perform the same `f32` operations in the same order, and no backend contracts `a * b + c`
//! into a fused multiply-add (OpenCL kernels say `FP_CONTRACT OFF`, CUDA compiles with
//! `--fmad=false`), so even orbits that pass within rounding distance of the escape radius
//! agree; `rel_error` is the fraction of differing pixels (0). `nbody`: the largest difference
//! of a body's acceleration vector (Euclidean norm), relative to the largest acceleration,
//! at most [`TOLERANCE`]. `matmul`: the relative Frobenius norm of `C - C_baseline`, at most
//! [`TOLERANCE`]. Every repetition starts from an output filled with NaN (`u32::MAX` for the
//! counts). `histogram`: the counts must equal the baseline's exactly. `blur`: the pixels must
//! equal the baseline's bit for bit (the same additions in the same order, no contraction).
//!
//! **Size.** At the default `--size` (2^24) and above, the sizes in the table. A smaller
//! `--size` scales each problem's work down by `size / 2^24`: pixels (`n^2`) for
//! `mandelbrot`, interactions (`n^2`) for `nbody`, multiply-adds (`n^3`) for `matmul`, keys
//! for `histogram`, pixels for `blur` ([`problem_size`]). On the interpreter (`interp`, several times slower than the compiled
//! `cpu` backend on these kernels, and 10 to 100 times slower than the baselines) the work is a
//! further [`INTERP_WORK_DIVISOR`] times smaller: 512 x 512 pixels, 4096 bodies, 406 x 406
//! matrices at the default size. The `n` column says the size used.
//!
//! **Compile time.** Each row also reports what it costs to make its kernel ready:
//! [`BenchResult::compile_s`] is building the kernel ([`Kernel::build`]: trace, validate,
//! optimize) and compiling it for the device ([`Device::compile`]) when the device's kernel
//! cache does not hold it (a kernel cached by an earlier run in the same process is dropped
//! from the cache first, [`Device::clear_kernel_cache`]); [`BenchResult::compile_cached_s`] is
//! the median of building it again and compiling it when it is cached. Caches outside the
//! process still apply to the first: CUDA's PTX disk cache ([`strata::cuda::ptx_cache_dir`]),
//! PoCL's kernel cache.

use crate::bench::blas::{rayon_sgemm, rel_frobenius_par, signed_data};
use crate::bench::builds::{self, two_builds, Build};
use crate::bench::{group_size, host_data, timed, BenchError, BenchResult, DEFAULT_SIZE};
use rayon::prelude::*;
use std::time::Instant;
use strata::prelude::*;
use strata::{BackendKind, DeviceInfo};

/// The compute-bound benchmarks, in the order they run.
pub const BENCHES: [&str; 5] = ["mandelbrot", "nbody", "matmul", "blur", "histogram"];

/// The image edge of `blur` at the default size: 4096 x 4096 pixels.
pub const BLUR_EDGE: usize = 4096;

/// The work-groups of `blur`: `BLUR_GROUP x BLUR_GROUP` work-items.
pub const BLUR_GROUP: usize = 16;

/// The bins of `histogram`: the top 8 bits of each key.
pub const HISTOGRAM_BINS: usize = 256;

/// Keys per chunk of `histogram`'s rayon baseline.
pub const HISTOGRAM_CHUNK: usize = 1 << 16;

/// The image edge of `mandelbrot` (2048 x 2048 pixels).
pub const MANDELBROT_EDGE: usize = 2048;

/// The iteration limit of `mandelbrot`.
pub const MANDELBROT_ITERS: u32 = 256;

/// Flops counted per `mandelbrot` iteration.
pub const MANDELBROT_FLOPS: u64 = 8;

/// The number of bodies of `nbody`.
pub const NBODY_BODIES: usize = 16384;

/// The softening of `nbody`: `eps^2`, added to every squared distance.
pub const NBODY_EPS2: f32 = 0.01;

/// Flops counted per `nbody` interaction.
pub const NBODY_FLOPS: u64 = 20;

/// The matrix edge of `matmul`.
pub const MATMUL_EDGE: usize = 1024;

/// The edge of `matmul`'s local-memory tiles (work-groups are `TILE x TILE`).
pub const TILE: usize = 16;

/// Relative error allowed between strata's and the baseline's results of `nbody` and
/// `matmul` (see the module docs for the norms).
pub const TOLERANCE: f64 = 1e-3;

/// How many times less work the benchmarks do on the interpreter (`interp`).
pub const INTERP_WORK_DIVISOR: usize = 16;

/// `n` of benchmark `bench` (one of [`BENCHES`]) on a device for a `--size` of `size`: the
/// image edge, the number of bodies or the matrix edge (see the module docs); `None` for
/// another name.
pub fn problem_size(bench: &str, info: &DeviceInfo, size: usize) -> Option<usize> {
    let mut work = (size as f64 / DEFAULT_SIZE as f64).min(1.0);
    if info.backend == BackendKind::Interp {
        work /= INTERP_WORK_DIVISOR as f64;
    }
    let scaled = |full: usize, root: f64| ((full as f64 * work.powf(root)).round() as usize).max(1);
    match bench {
        "mandelbrot" => Some(scaled(MANDELBROT_EDGE, 1.0 / 2.0)),
        "nbody" => Some(scaled(NBODY_BODIES, 1.0 / 2.0)),
        "matmul" => Some(scaled(MATMUL_EDGE, 1.0 / 3.0)),
        "histogram" => Some(scaled(DEFAULT_SIZE, 1.0)),
        "blur" => Some(scaled(BLUR_EDGE, 1.0 / 2.0).max(3)),
        _ => None,
    }
}

/// Runs the benchmark `name` (one of [`BENCHES`]) on `q` for a `--size` of `size`.
pub(crate) fn run(
    name: &'static str,
    q: &Queue,
    size: usize,
    reps: usize,
) -> Result<BenchResult, BenchError> {
    let n = problem_size(name, q.device().info(), size).ok_or_else(|| {
        BenchError::InvalidOptions(format!("`{name}` is not a compute benchmark"))
    })?;
    match name {
        "mandelbrot" => bench_mandelbrot(q, n, reps),
        "nbody" => bench_nbody(q, n, reps),
        "histogram" => bench_histogram(q, n, reps),
        "blur" => bench_blur(q, n, reps),
        _ => bench_matmul(q, n, reps),
    }
}

/// How long `device` takes to compile the kernels of the conformance suite.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteCompileTimes {
    /// Distinct kernels compiled.
    pub kernels: usize,
    /// Median seconds per kernel.
    pub median_s: f64,
    /// 90th percentile, seconds.
    pub p90_s: f64,
    /// Slowest kernel, seconds.
    pub max_s: f64,
    /// Kernels the device cannot run (it lacks `f16`, say), with why: not compiled, not
    /// counted in `kernels`.
    pub unsupported: Vec<(String, String)>,
}

/// Compiles every kernel the conformance suite builds (recorded while the suite runs on the
/// `interp` device) on `device`, each with the device's kernel cache cleared first, so every
/// compile is a first build in this process (caches outside it, such as PoCL's and CUDA's
/// disk caches, still apply). Only the device compile is timed, not tracing and optimizing.
/// Kernels the device cannot run ([`strata::Error::Unsupported`]) are listed apart.
pub fn suite_compile_times(device: &Device) -> Result<SuiteCompileTimes, BenchError> {
    let interp = Queue::new(&Device::from_spec("interp")?)?;
    let (report, kernels) =
        strata::capture_kernels(|| crate::conformance::run(&interp, None, |_, _| {}));
    if !report.failed.is_empty() {
        return Err(BenchError::WrongResult {
            bench: "compile",
            detail: format!(
                "the conformance suite failed on the interpreter: {}",
                report.summary()
            ),
        });
    }
    let mut times = Vec::with_capacity(kernels.len());
    let mut unsupported = Vec::new();
    for k in &kernels {
        device.clear_kernel_cache();
        let t = Instant::now();
        match device.compile(k) {
            Ok(_) => times.push(t.elapsed().as_secs_f64()),
            Err(strata::Error::Unsupported { kernel, reason, .. }) => {
                unsupported.push((kernel, reason))
            }
            Err(e) => return Err(e.into()),
        }
    }
    if times.is_empty() {
        return Err(BenchError::WrongResult {
            bench: "compile",
            detail: "the conformance suite built no kernel".into(),
        });
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    Ok(SuiteCompileTimes {
        kernels: times.len(),
        median_s: at(0.5),
        p90_s: at(0.9),
        max_s: *times.last().expect("not empty"),
        unsupported,
    })
}

/// Builds a kernel and compiles it on `device` twice: first missing the device's kernel cache,
/// then (median of `reps`, after one warm-up) finding it there. Returns the kernel and the two
/// times in seconds.
fn compile_times(
    device: &Device,
    reps: usize,
    build: impl Fn() -> strata::Result<Kernel>,
) -> Result<(Kernel, f64, f64), BenchError> {
    let first = || -> Result<(Kernel, f64, bool), BenchError> {
        let before = device.compile_count();
        let t = Instant::now();
        let k = build()?;
        device.compile(&k)?;
        let s = t.elapsed().as_secs_f64();
        Ok((k, s, device.compile_count() > before))
    };
    let (mut kernel, mut cold, missed) = first()?;
    if !missed {
        // An earlier run in this process compiled the same kernel: measure a real miss.
        device.clear_kernel_cache();
        (kernel, cold, _) = first()?;
    }
    let warm = timed(reps, || -> Result<f64, BenchError> {
        let t = Instant::now();
        let k = build()?;
        device.compile(&k)?;
        Ok(t.elapsed().as_secs_f64())
    })?;
    Ok((kernel, cold, warm))
}

/// The kernel of `mandelbrot` (see the module docs). Arguments: `iters` (`u32`, written, one
/// per pixel), `width` (`u32`), `x0`, `y0`, `d` (`f32`), `max_iter` (`u32`).
pub fn mandelbrot_kernel() -> strata::Result<Kernel> {
    Kernel::build("bench_mandelbrot", |k| {
        let iters = k.write::<u32>("iters");
        let width = k.scalar::<u32>("width");
        let x0 = k.scalar::<f32>("x0");
        let y0 = k.scalar::<f32>("y0");
        let d = k.scalar::<f32>("d");
        let max_iter = k.scalar::<u32>("max_iter");
        let i = global_id(0);
        if_(i.lt(iters.len()), || {
            let cx = x0 + (i % width).cast::<f32>() * d;
            let cy = y0 + (i / width).cast::<f32>() * d;
            let x = var_named("x", 0.0f32);
            let y = var_named("y", 0.0f32);
            let it = var_named("it", 0u32);
            while_(
                || {
                    let (zx, zy) = (x.get(), y.get());
                    it.get().lt(max_iter).and((zx * zx + zy * zy).le(4.0f32))
                },
                || {
                    let (zx, zy) = (x.get(), y.get());
                    x.set(zx * zx - zy * zy + cx);
                    y.set(2.0f32 * zx * zy + cy);
                    it.set(it.get() + 1u32);
                },
            );
            iters.set(i, it.get());
        });
    })
}

/// The view of `mandelbrot`: `(x0, y0, d)` for an `edge x edge` image of
/// `[-2.2, 0.8] x [-1.5, 1.5]`.
fn mandelbrot_view(edge: usize) -> (f32, f32, f32) {
    (-2.2, -1.5, 3.0 / edge as f32)
}

/// The iteration counts of 8 pixels of a row, lanes in lockstep under an escape mask: the
/// same `f32` operations, in the same order, as the strata kernel.
#[inline(always)]
fn mandelbrot8(cx: &[f32; 8], cy: f32, max_iter: u32) -> [u32; 8] {
    let mut x = [0.0f32; 8];
    let mut y = [0.0f32; 8];
    let mut alive = [1u32; 8];
    let mut count = [0u32; 8];
    for _ in 0..max_iter {
        for l in 0..8 {
            let (xx, yy) = (x[l] * x[l], y[l] * y[l]);
            alive[l] &= (xx + yy <= 4.0) as u32;
            count[l] += alive[l];
            y[l] = 2.0 * x[l] * y[l] + cy;
            x[l] = xx - yy + cx[l];
        }
        if alive.iter().fold(0, |a, &b| a | b) == 0 {
            break;
        }
    }
    count
}

two_builds! {
    /// The counts of one row of `mandelbrot` (row `py` of an `edge x edge` image, `edge` the
    /// length of `row`), 8 pixels at a time, compiled for `build`.
    fn mandelbrot_row(row: &mut [u32], py: usize, max_iter: u32) {
        let (x0, y0, d) = mandelbrot_view(row.len());
        let cy = y0 + py as u32 as f32 * d;
        for (c, px) in row.chunks_mut(8).enumerate() {
            let mut cx = [0.0f32; 8];
            for (l, v) in cx.iter_mut().enumerate() {
                *v = x0 + (c * 8 + l) as u32 as f32 * d;
            }
            let counts = mandelbrot8(&cx, cy, max_iter);
            px.copy_from_slice(&counts[..px.len()]);
        }
    }
}

/// `mandelbrot`'s counts for an `edge x edge` image, with rayon over rows, the loops compiled
/// for `build`.
pub fn mandelbrot_rayon(build: Build, edge: usize, max_iter: u32) -> Vec<u32> {
    let mut out = vec![0u32; edge * edge];
    out.par_chunks_mut(edge)
        .enumerate()
        .for_each(|(py, row)| mandelbrot_row(build, row, py, max_iter));
    out
}

/// Checks `mandelbrot`'s counts: `got` must equal `want` exactly. Returns the fraction of
/// differing pixels (0); fails naming the first difference and that fraction.
pub fn check_counts(bench: &'static str, got: &[u32], want: &[u32]) -> Result<f64, BenchError> {
    if got.len() != want.len() {
        return Err(BenchError::WrongResult {
            bench,
            detail: format!("{} counts, expected {}", got.len(), want.len()),
        });
    }
    let differ = got.par_iter().zip(want).filter(|(g, w)| g != w).count();
    if differ == 0 {
        return Ok(0.0);
    }
    let i = got.iter().zip(want).position(|(g, w)| g != w).unwrap_or(0);
    Err(BenchError::WrongResult {
        bench,
        detail: format!(
            "{differ} of {} counts differ ({:.4}% identical); the first, element {i}, is {}, the baseline computed {}",
            got.len(),
            100.0 * (got.len() - differ) as f64 / got.len() as f64,
            got[i],
            want[i]
        ),
    })
}

fn bench_mandelbrot(q: &Queue, edge: usize, reps: usize) -> Result<BenchResult, BenchError> {
    let pixels = edge * edge;
    let max_iter = MANDELBROT_ITERS;
    let (k, compile_s, compile_cached_s) = compile_times(q.device(), reps, mandelbrot_kernel)?;
    let (x0, y0, d) = mandelbrot_view(edge);
    let range = NdRange::covering(pixels, group_size(q.device()));
    let out = Buffer::<u32>::new(q.device(), pixels)?;
    let (strata_s, baseline_s, avx2_s, want) = builds::alternating(
        reps,
        || -> Result<f64, BenchError> {
            q.fill(&out, u32::MAX, 0..pixels)?;
            let t = Instant::now();
            k.launch(q, range, args![&out, edge as u32, x0, y0, d, max_iter])?;
            Ok(t.elapsed().as_secs_f64())
        },
        |build, want: &mut Vec<u32>| -> Result<f64, BenchError> {
            // The previous result is freed before the clock starts.
            drop(std::mem::take(want));
            let t = Instant::now();
            *want = std::hint::black_box(mandelbrot_rayon(build, edge, max_iter));
            Ok(t.elapsed().as_secs_f64())
        },
        |got, want| check_counts("mandelbrot (the AVX2+FMA baseline)", got, want).map(|_| ()),
    )?;
    let rel_error = check_counts("mandelbrot", &q.read(&out)?, &want)?;
    let iterations: u64 = want.par_iter().map(|&c| c as u64).sum();
    Ok(BenchResult {
        flops: MANDELBROT_FLOPS * iterations,
        compile_s: Some(compile_s),
        compile_cached_s: Some(compile_cached_s),
        ..result(q, "mandelbrot", edge, reps, range, 4 * pixels as u64)
            .times(strata_s, baseline_s, rel_error)
            .with_avx2(avx2_s)
    })
}

/// The kernel of `blur` (see the module docs). Arguments: `x` (`f32`, read, `w * w` pixels),
/// `y` (`f32`, written), `w` (`u32`, the edge).
pub fn blur_kernel() -> strata::Result<Kernel> {
    Kernel::build("bench_blur", |k| {
        let x = k.read::<f32>("x");
        let y = k.write::<f32>("y");
        let w = k.scalar::<u32>("w");
        let (i, j) = (global_id(0), global_id(1));
        if_(i.lt(w).and(j.lt(w)), || {
            let at = j * w + i;
            let inner = i
                .ge(1u32)
                .and(j.ge(1u32))
                .and((i + 1u32).lt(w))
                .and((j + 1u32).lt(w));
            if_(inner, || {
                let mut s: Option<Expr<f32>> = None;
                for dj in 0..3u32 {
                    for di in 0..3u32 {
                        let v = x.at((j + dj - 1u32) * w + i + di - 1u32);
                        s = Some(s.map_or(v, |s| s + v));
                    }
                }
                y.set(at, s.expect("nine loads") * (1.0f32 / 9.0));
            })
            .else_(|| y.set(at, x.at(at)));
        });
    })
}

two_builds! {
    /// Row `j` of `blur` of the `w x w` image `x` (`w` the length of `out`), compiled for
    /// `build`.
    fn blur_row(x: &[f32], j: usize, out: &mut [f32]) {
        let w = out.len();
        if j == 0 || j + 1 == w {
            out.copy_from_slice(&x[j * w..(j + 1) * w]);
            return;
        }
        let (up, mid, down) = (
            &x[(j - 1) * w..j * w],
            &x[j * w..(j + 1) * w],
            &x[(j + 1) * w..(j + 2) * w],
        );
        out[0] = mid[0];
        out[w - 1] = mid[w - 1];
        // Nine slices of the inner pixels' length, so that the loop has no bounds tests
        // and vectorizes.
        let o = &mut out[1..w - 1];
        let n = o.len();
        let [u0, u1, u2, m0, m1, m2, d0, d1, d2] = [
            &up[..n],
            &up[1..n + 1],
            &up[2..n + 2],
            &mid[..n],
            &mid[1..n + 1],
            &mid[2..n + 2],
            &down[..n],
            &down[1..n + 1],
            &down[2..n + 2],
        ];
        for i in 0..n {
            let s = u0[i] + u1[i] + u2[i] + m0[i] + m1[i] + m2[i] + d0[i] + d1[i] + d2[i];
            o[i] = s * (1.0f32 / 9.0);
        }
    }
}

/// `blur` of the `w x w` image `x` into `out` (as many pixels), with rayon over rows, the
/// loops compiled for `build`.
pub fn blur_rayon(build: Build, x: &[f32], w: usize, out: &mut [f32]) {
    out.par_chunks_mut(w)
        .enumerate()
        .for_each(|(j, row)| blur_row(build, x, j, row));
}

/// Checks `blur`'s pixels: `got` must equal `want` bit for bit. Returns the fraction of
/// differing pixels (0); fails naming the first difference.
fn check_pixels(bench: &'static str, got: &[f32], want: &[f32]) -> Result<f64, BenchError> {
    let bits = |v: &[f32]| v.par_iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    check_counts(bench, &bits(got), &bits(want))
}

fn bench_blur(q: &Queue, w: usize, reps: usize) -> Result<BenchResult, BenchError> {
    let (k, compile_s, compile_cached_s) = compile_times(q.device(), reps, blur_kernel)?;
    let pixels = w * w;
    let x = host_data(pixels, 31)?;
    let xb = Buffer::from_slice(q, &x)?;
    let yb = Buffer::<f32>::new(q.device(), pixels)?;
    let range = NdRange::covering([w, w], [BLUR_GROUP, BLUR_GROUP]);
    let (strata_s, baseline_s, avx2_s, want) = builds::alternating(
        reps,
        || -> Result<f64, BenchError> {
            q.fill(&yb, f32::NAN, 0..pixels)?;
            let t = Instant::now();
            k.launch(q, range, args![&xb, &yb, w as u32])?;
            Ok(t.elapsed().as_secs_f64())
        },
        |build, want: &mut Vec<f32>| -> Result<f64, BenchError> {
            // Written in place, as strata's output is: allocated (and its pages touched) by
            // the warm-up run, not timed.
            if want.len() != pixels {
                *want = vec![f32::NAN; pixels];
            }
            let t = Instant::now();
            blur_rayon(build, &x, w, want);
            std::hint::black_box(&want);
            Ok(t.elapsed().as_secs_f64())
        },
        |got, want| check_pixels("blur (the AVX2+FMA baseline)", got, want).map(|_| ()),
    )?;
    let rel_error = check_pixels("blur", &q.read(&yb)?, &want)?;
    let inner = (w.saturating_sub(2) * w.saturating_sub(2)) as u64;
    Ok(BenchResult {
        flops: 9 * inner,
        compile_s: Some(compile_s),
        compile_cached_s: Some(compile_cached_s),
        ..result(q, "blur", w, reps, range, 8 * pixels as u64)
            .times(strata_s, baseline_s, rel_error)
            .with_avx2(avx2_s)
    })
}

/// The kernel of `histogram` (see the module docs). Arguments: `keys` (`u32`, read), `bins`
/// (`u32`, [`HISTOGRAM_BINS`] counts, updated atomically).
pub fn histogram_kernel() -> strata::Result<Kernel> {
    Kernel::build("bench_histogram", |k| {
        let keys = k.read::<u32>("keys");
        let bins = k.read_write::<u32>("bins");
        let i = global_id(0);
        if_(i.lt(keys.len()), || {
            bins.atomic_add(keys.at(i) >> 24u32, 1u32);
        });
    })
}

/// `n` keys of `histogram`: a hash of each index (a multiply, shift and multiply), uniform
/// over the bins.
pub fn histogram_keys(n: usize) -> Vec<u32> {
    (0..n as u32)
        .into_par_iter()
        .map(|i| {
            let x = i.wrapping_mul(0x9e37_79b1);
            (x ^ (x >> 15)).wrapping_mul(0x85eb_ca77)
        })
        .collect()
}

two_builds! {
    /// Adds the counts of `keys`' top 8 bits to `counts`, compiled for `build`.
    fn histogram_chunk(keys: &[u32], counts: &mut [u32; HISTOGRAM_BINS]) {
        for &k in keys {
            counts[(k >> 24) as usize] += 1;
        }
    }
}

/// `histogram`'s counts of `keys`, with rayon over chunks of [`HISTOGRAM_CHUNK`] keys, the
/// loops compiled for `build`.
pub fn histogram_rayon(build: Build, keys: &[u32]) -> Vec<u32> {
    keys.par_chunks(HISTOGRAM_CHUNK)
        .fold(
            || [0u32; HISTOGRAM_BINS],
            |mut counts, chunk| {
                histogram_chunk(build, chunk, &mut counts);
                counts
            },
        )
        .reduce(
            || [0u32; HISTOGRAM_BINS],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        )
        .to_vec()
}

fn bench_histogram(q: &Queue, n: usize, reps: usize) -> Result<BenchResult, BenchError> {
    let (k, compile_s, compile_cached_s) = compile_times(q.device(), reps, histogram_kernel)?;
    let keys = histogram_keys(n);
    let kb = Buffer::from_slice(q, &keys)?;
    let bins = Buffer::<u32>::new(q.device(), HISTOGRAM_BINS)?;
    let range = NdRange::covering(n, group_size(q.device()));
    let (strata_s, baseline_s, avx2_s, want) = builds::alternating(
        reps,
        || -> Result<f64, BenchError> {
            q.fill(&bins, 0, 0..HISTOGRAM_BINS)?;
            let t = Instant::now();
            k.launch(q, range, args![&kb, &bins])?;
            Ok(t.elapsed().as_secs_f64())
        },
        |build, want: &mut Vec<u32>| -> Result<f64, BenchError> {
            let t = Instant::now();
            *want = std::hint::black_box(histogram_rayon(build, &keys));
            Ok(t.elapsed().as_secs_f64())
        },
        |got, want| check_counts("histogram (the AVX2+FMA baseline)", got, want).map(|_| ()),
    )?;
    let rel_error = check_counts("histogram", &q.read(&bins)?, &want)?;
    Ok(BenchResult {
        compile_s: Some(compile_s),
        compile_cached_s: Some(compile_cached_s),
        ..result(q, "histogram", n, reps, range, 4 * n as u64)
            .times(strata_s, baseline_s, rel_error)
            .with_avx2(avx2_s)
    })
}

/// The kernel of `nbody` (see the module docs). Arguments: `x`, `y`, `z`, `m` (`f32`, read,
/// one per body), `ax`, `ay`, `az` (`f32`, written), `eps2` (`f32`).
pub fn nbody_kernel() -> strata::Result<Kernel> {
    Kernel::build("bench_nbody", |k| {
        let x = k.read::<f32>("x");
        let y = k.read::<f32>("y");
        let z = k.read::<f32>("z");
        let m = k.read::<f32>("m");
        let ax = k.write::<f32>("ax");
        let ay = k.write::<f32>("ay");
        let az = k.write::<f32>("az");
        let eps2 = k.scalar::<f32>("eps2");
        let i = global_id(0);
        if_(i.lt(ax.len()), || {
            let (xi, yi, zi) = (x.at(i), y.at(i), z.at(i));
            let mut sx = var_named("sx", 0.0f32);
            let mut sy = var_named("sy", 0.0f32);
            let mut sz = var_named("sz", 0.0f32);
            for_range(0u32, x.len(), |j| {
                let dx = x.at(j) - xi;
                let dy = y.at(j) - yi;
                let dz = z.at(j) - zi;
                let r2 = dx * dx + dy * dy + dz * dz + eps2;
                let inv = 1.0f32 / r2.sqrt();
                let s = m.at(j) * (inv * inv * inv);
                sx += dx * s;
                sy += dy * s;
                sz += dz * s;
            });
            ax.set(i, sx.get());
            ay.set(i, sy.get());
            az.set(i, sz.get());
        });
    })
}

/// Bodies of `nbody`: positions in the unit cube, masses in [0.5, 1.5).
struct Bodies {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    m: Vec<f32>,
}

impl Bodies {
    fn new(n: usize) -> Result<Bodies, BenchError> {
        let mut m = host_data(n, 24)?;
        m.par_iter_mut().for_each(|v| *v += 0.5);
        Ok(Bodies {
            x: host_data(n, 21)?,
            y: host_data(n, 22)?,
            z: host_data(n, 23)?,
            m,
        })
    }
}

two_builds! {
    /// The accelerations of the (up to) 8 bodies from `base` on (as many as `ox` holds) from
    /// all bodies `x`, `y`, `z`, `m`, compiled for `build`: for each body `j` the 8 lanes'
    /// interactions with it, each lane in the order of a strata work-item.
    #[allow(clippy::too_many_arguments)]
    fn nbody_block(
        x: &[f32],
        y: &[f32],
        z: &[f32],
        m: &[f32],
        eps2: f32,
        base: usize,
        ox: &mut [f32],
        oy: &mut [f32],
        oz: &mut [f32],
    ) {
        let (mut xi, mut yi, mut zi) = ([0.0f32; 8], [0.0f32; 8], [0.0f32; 8]);
        for l in 0..ox.len() {
            (xi[l], yi[l], zi[l]) = (x[base + l], y[base + l], z[base + l]);
        }
        let (mut sx, mut sy, mut sz) = ([0.0f32; 8], [0.0f32; 8], [0.0f32; 8]);
        for (((&xj, &yj), &zj), &mj) in x.iter().zip(y).zip(z).zip(m) {
            for l in 0..8 {
                let dx = xj - xi[l];
                let dy = yj - yi[l];
                let dz = zj - zi[l];
                let r2 = dx * dx + dy * dy + dz * dz + eps2;
                let inv = 1.0 / r2.sqrt();
                let s = mj * (inv * inv * inv);
                sx[l] += dx * s;
                sy[l] += dy * s;
                sz[l] += dz * s;
            }
        }
        let len = ox.len();
        ox.copy_from_slice(&sx[..len]);
        oy.copy_from_slice(&sy[..len]);
        oz.copy_from_slice(&sz[..len]);
    }
}

/// `nbody`'s accelerations `(ax, ay, az)` of the bodies at `x`, `y`, `z` of masses `m` with
/// rayon, 8 bodies per inner loop, the loops compiled for `build`.
pub fn nbody_rayon(build: Build, [x, y, z, m]: [&[f32]; 4], eps2: f32) -> [Vec<f32>; 3] {
    let n = x.len();
    let mut a = [vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]];
    let [ax, ay, az] = &mut a;
    ax.par_chunks_mut(8)
        .zip(ay.par_chunks_mut(8))
        .zip(az.par_chunks_mut(8))
        .enumerate()
        .for_each(|(c, ((ox, oy), oz))| nbody_block(build, x, y, z, m, eps2, c * 8, ox, oy, oz));
    a
}

/// Checks `nbody`'s accelerations: the largest difference of a body's vector (Euclidean norm)
/// relative to the largest vector of `want` must be at most [`TOLERANCE`]; returns it.
pub fn check_vectors(
    bench: &'static str,
    got: [&[f32]; 3],
    want: [&[f32]; 3],
) -> Result<f64, BenchError> {
    let n = want[0].len();
    if got.iter().chain(&want).any(|v| v.len() != n) {
        return Err(BenchError::WrongResult {
            bench,
            detail: format!(
                "{} x {} x {} components, expected {n} each",
                got[0].len(),
                got[1].len(),
                got[2].len()
            ),
        });
    }
    let norm = |v: [&[f32]; 3], w: Option<[&[f32]; 3]>, i: usize| -> f64 {
        (0..3)
            .map(|c| {
                let d = v[c][i] as f64 - w.map_or(0.0, |w| w[c][i] as f64);
                d * d
            })
            .sum::<f64>()
            .sqrt()
    };
    let scale = (0..n)
        .into_par_iter()
        .map(|i| norm(want, None, i))
        .reduce(|| 0.0, f64::max);
    // A NaN difference must win the maximum (f64::max would drop it).
    let (worst, at) = (0..n)
        .into_par_iter()
        .map(|i| (norm(got, Some(want), i), i))
        .reduce(
            || (0.0, 0),
            |a, b| if b.0 > a.0 || b.0.is_nan() { b } else { a },
        );
    let err = if worst == 0.0 {
        0.0
    } else {
        worst / scale.max(f64::MIN_POSITIVE)
    };
    if err.is_nan() || err > TOLERANCE {
        return Err(BenchError::WrongResult {
            bench,
            detail: format!(
                "element {at} is ({:e}, {:e}, {:e}), the baseline computed ({:e}, {:e}, {:e}): relative error {err:.2e}, allowed {TOLERANCE:e}",
                got[0][at], got[1][at], got[2][at], want[0][at], want[1][at], want[2][at]
            ),
        });
    }
    Ok(err)
}

fn bench_nbody(q: &Queue, n: usize, reps: usize) -> Result<BenchResult, BenchError> {
    let (k, compile_s, compile_cached_s) = compile_times(q.device(), reps, nbody_kernel)?;
    let bodies = Bodies::new(n)?;
    let range = NdRange::covering(n, group_size(q.device()));
    let upload = |v: &[f32]| Buffer::from_slice(q, v);
    let (x, y, z, m) = (
        upload(&bodies.x)?,
        upload(&bodies.y)?,
        upload(&bodies.z)?,
        upload(&bodies.m)?,
    );
    let out = [
        Buffer::<f32>::new(q.device(), n)?,
        Buffer::<f32>::new(q.device(), n)?,
        Buffer::<f32>::new(q.device(), n)?,
    ];
    let [ax, ay, az] = &out;
    let b = [&bodies.x[..], &bodies.y, &bodies.z, &bodies.m];
    let (strata_s, baseline_s, avx2_s, want) = builds::alternating(
        reps,
        || -> Result<f64, BenchError> {
            for o in &out {
                q.fill(o, f32::NAN, 0..n)?;
            }
            let t = Instant::now();
            k.launch(q, range, args![&x, &y, &z, &m, ax, ay, az, NBODY_EPS2])?;
            Ok(t.elapsed().as_secs_f64())
        },
        |build, want: &mut [Vec<f32>; 3]| -> Result<f64, BenchError> {
            // The previous result is freed before the clock starts.
            drop(std::mem::take(want));
            let t = Instant::now();
            *want = std::hint::black_box(nbody_rayon(build, b, NBODY_EPS2));
            Ok(t.elapsed().as_secs_f64())
        },
        |got, want| {
            check_vectors(
                "nbody (the AVX2+FMA baseline)",
                [&got[0], &got[1], &got[2]],
                [&want[0], &want[1], &want[2]],
            )
            .map(|_| ())
        },
    )?;
    let got = [q.read(ax)?, q.read(ay)?, q.read(az)?];
    let rel_error = check_vectors(
        "nbody",
        [&got[0], &got[1], &got[2]],
        [&want[0], &want[1], &want[2]],
    )?;
    let n64 = n as u64;
    Ok(BenchResult {
        flops: NBODY_FLOPS * n64 * n64,
        compile_s: Some(compile_s),
        compile_cached_s: Some(compile_cached_s),
        // Each body's position and mass read, its acceleration written.
        ..result(q, "nbody", n, reps, range, (16 + 12) * n64)
            .times(strata_s, baseline_s, rel_error)
            .with_avx2(avx2_s)
    })
}

/// The kernel of `matmul` (see the module docs). Arguments: `a`, `b` (`f32`, read, `n x n`
/// row-major), `c` (`f32`, written), `n` (`u32`). Launch it over
/// [`matmul_range`]`(n)`.
pub fn matmul_kernel() -> strata::Result<Kernel> {
    let tile = TILE as u32;
    Kernel::build("bench_matmul", |k| {
        let a = k.read::<f32>("a");
        let b = k.read::<f32>("b");
        let c = k.write::<f32>("c");
        let n = k.scalar::<u32>("n");
        let a_tile = k.local_array::<f32>("a_tile", tile * tile);
        let b_tile = k.local_array::<f32>("b_tile", tile * tile);
        let (tx, ty) = (local_id(0), local_id(1));
        let col = group_id(0) * tile + tx;
        let row = group_id(1) * tile + ty;
        let mut acc = var_named("acc", 0.0f32);
        for_range(0u32, (n + (tile - 1)) / tile, |t| {
            let a_col = t * tile + tx;
            let b_row = t * tile + ty;
            // Every work-item loads (zeros outside the matrices) and reaches the barriers.
            if_(row.lt(n).and(a_col.lt(n)), || {
                a_tile.set(ty * tile + tx, a.at(row * n + a_col))
            })
            .else_(|| a_tile.set(ty * tile + tx, 0.0f32));
            if_(b_row.lt(n).and(col.lt(n)), || {
                b_tile.set(ty * tile + tx, b.at(b_row * n + col))
            })
            .else_(|| b_tile.set(ty * tile + tx, 0.0f32));
            barrier_local();
            for p in 0..tile {
                acc += a_tile.at(ty * tile + p) * b_tile.at(p * tile + tx);
            }
            barrier_local();
        });
        if_(row.lt(n).and(col.lt(n)), || c.set(row * n + col, acc.get()));
    })
}

/// The launch of [`matmul_kernel`] for `n x n` matrices: `TILE x TILE` work-groups covering
/// `C` (dimension 0 the column, 1 the row).
pub fn matmul_range(n: usize) -> NdRange {
    let g = n.div_ceil(TILE) * TILE;
    NdRange::new([g, g]).local([TILE, TILE])
}

fn bench_matmul(q: &Queue, n: usize, reps: usize) -> Result<BenchResult, BenchError> {
    let (k, compile_s, compile_cached_s) = compile_times(q.device(), reps, matmul_kernel)?;
    let a = signed_data(n * n, 31)?;
    let b = signed_data(n * n, 32)?;
    let range = matmul_range(n);
    let (da, db) = (Buffer::from_slice(q, &a)?, Buffer::from_slice(q, &b)?);
    let dc = Buffer::<f32>::new(q.device(), n * n)?;
    let (strata_s, baseline_s, avx2_s, want) = builds::alternating(
        reps,
        || -> Result<f64, BenchError> {
            q.fill(&dc, f32::NAN, 0..n * n)?;
            let t = Instant::now();
            k.launch(q, range, args![&da, &db, &dc, n as u32])?;
            Ok(t.elapsed().as_secs_f64())
        },
        |build, want: &mut Vec<f32>| -> Result<f64, BenchError> {
            // The previous result is freed before the clock starts.
            drop(std::mem::take(want));
            let t = Instant::now();
            *want = std::hint::black_box(rayon_sgemm(build, &a, &b, n));
            Ok(t.elapsed().as_secs_f64())
        },
        |got, want| crate::bench::check_exact("matmul (the AVX2+FMA baseline)", got, want),
    )?;
    let got = q.read(&dc)?;
    let rel_error = rel_frobenius_par(&got, &want);
    if rel_error.is_nan() || rel_error > TOLERANCE {
        let i = got
            .iter()
            .zip(&want)
            .position(|(g, w)| g.is_nan() || (g - w).abs() as f64 > TOLERANCE * w.abs() as f64)
            .unwrap_or(0);
        return Err(BenchError::WrongResult {
            bench: "matmul",
            detail: format!(
                "relative error {rel_error:.2e} (allowed {TOLERANCE:e}); c[{}][{}] is {:e}, the baseline computed {:e}",
                i / n,
                i % n,
                got[i],
                want[i]
            ),
        });
    }
    let n64 = n as u64;
    Ok(BenchResult {
        flops: 2 * n64 * n64 * n64,
        compile_s: Some(compile_s),
        compile_cached_s: Some(compile_cached_s),
        ..result(q, "matmul", n, reps, range, 3 * 4 * n64 * n64)
            .times(strata_s, baseline_s, rel_error)
            .with_avx2(avx2_s)
    })
}

/// A row without times yet.
fn result(
    q: &Queue,
    bench: &'static str,
    n: usize,
    reps: usize,
    range: NdRange,
    bytes: u64,
) -> BenchResult {
    BenchResult {
        bench,
        device: q.device().spec(),
        n,
        reps,
        local_size: range
            .local_size()
            .map_or(0, |l| l.iter().take(range.dims() as usize).product()),
        groups: range.group_count(),
        bytes,
        flops: 0,
        strata_s: 0.0,
        baseline: "rayon",
        baseline_s: 0.0,
        ratio: f64::NAN,
        avx2_s: None,
        ratio_avx2: None,
        rel_error: 0.0,
        compile_s: None,
        compile_cached_s: None,
        tuned: None,
    }
}

impl BenchResult {
    /// `self` with the strata and baseline medians, their ratio and the relative error.
    fn times(self, strata_s: f64, baseline_s: f64, rel_error: f64) -> BenchResult {
        BenchResult {
            strata_s,
            baseline_s,
            ratio: strata_s / baseline_s,
            rel_error,
            ..self
        }
    }
}
