//! Monte-Carlo estimate of pi with random numbers made inside the kernel (`strata::random`'s
//! Philox4x32-10): each work-item draws points of the unit square from its own stream and
//! counts those inside the quarter circle; the work-groups' counts are added by a gather.
//!
//! ```text
//! cargo run --release --example pi                      # 2^28 samples on the best device
//! cargo run --release --example pi -- --samples 2^20 --device cpu --seed 7
//! ```
//!
//! The count is an exact function of the seed: every backend gives the same count, and so does
//! the host running the same generator (the test checks both at a small size).

use strata::prelude::*;
use strata::random::Philox;

/// Points each work-item draws: two per Philox block (four words: x and y twice).
const PER_ITEM: u32 = 256;
/// Work-items per work-group.
const LOCAL: usize = 256;

/// The kernel: work-item `i` uses stream `i` of `seed` and counts its points inside the circle.
fn pi_kernel() -> strata::Result<Kernel> {
    Kernel::build("monte_carlo_pi", |k| {
        let seed = k.scalar::<u64>("seed");
        let items = k.scalar::<u32>("items");
        let i = global_id(0);
        let inside = var(0u32);
        if_(i.lt(items), || {
            let rng = Philox::new(seed, i.cast::<u64>());
            for_range(0u32, PER_ITEM / 2, |b| {
                let [a, c, d, e] = rng.block(b);
                for (u, v) in [(a, c), (d, e)] {
                    let (x, y) = (Philox::unit_f32(u), Philox::unit_f32(v));
                    if_((x * x + y * y).lt(1.0f32), || {
                        inside.set(inside.get() + 1u32)
                    });
                }
            });
        });
        k.gather_add(inside.get());
    })
}

/// The number of points inside the circle among `items * PER_ITEM` drawn on `queue`'s device.
fn count_inside(queue: &Queue, seed: u64, items: u32) -> strata::Result<u64> {
    let run = pi_kernel()?.launch(
        queue,
        NdRange::covering(items as usize, LOCAL),
        args![seed, items],
    )?;
    Ok(u64::from(run.gather::<u32>(0)?.get()?))
}

/// The same count on the host, with the same generator.
#[cfg(test)]
fn count_inside_on_host(seed: u64, items: u32) -> u64 {
    let mut inside = 0;
    for i in 0..items {
        for b in 0..PER_ITEM / 2 {
            let [a, c, d, e] = Philox::host_block(seed, u64::from(i), b);
            for (u, v) in [(a, c), (d, e)] {
                let (x, y) = (strata::random::unit_f32(u), strata::random::unit_f32(v));
                inside += u64::from(x * x + y * y < 1.0);
            }
        }
    }
    inside
}

/// `--samples N` (a number or 2^K, rounded up to a multiple of 256), `--device SPEC`,
/// `--seed N`.
fn parse_args() -> Result<(u64, String, u64), String> {
    let (mut samples, mut device, mut seed) = (1u64 << 28, "best".to_string(), 2026u64);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("`{flag}` needs a value"))?;
        match flag.as_str() {
            "--samples" => {
                samples = match value.split_once('^') {
                    Some(("2", k)) => k.parse::<u32>().ok().and_then(|k| 1u64.checked_shl(k)),
                    _ => value.parse().ok(),
                }
                .filter(|&n| n > 0 && n <= u64::from(u32::MAX) * u64::from(PER_ITEM))
                .ok_or(format!(
                    "`--samples` takes a positive count such as 2^24, not `{value}`"
                ))?
            }
            "--device" => device = value,
            "--seed" => seed = value.parse().map_err(|_| format!("bad seed `{value}`"))?,
            _ => {
                return Err(format!(
                    "unknown flag `{flag}` (--samples, --device, --seed)"
                ))
            }
        }
    }
    Ok((samples, device, seed))
}

fn main() {
    let run = || -> Result<(), Box<dyn std::error::Error>> {
        let (samples, spec, seed) = parse_args()?;
        let device: Device = spec.parse()?;
        let queue = Queue::new(&device)?;
        let items = samples.div_ceil(u64::from(PER_ITEM)) as u32;
        let drawn = u64::from(items) * u64::from(PER_ITEM);
        let t = std::time::Instant::now();
        let inside = count_inside(&queue, seed, items)?;
        let seconds = t.elapsed().as_secs_f64();
        let pi = 4.0 * inside as f64 / drawn as f64;
        // The count is binomial: its standard error, times 4 / drawn.
        let p = std::f64::consts::FRAC_PI_4;
        let sigma = 4.0 * (p * (1.0 - p) / drawn as f64).sqrt();
        println!(
            "pi ~ {pi:.8} from {drawn} samples on {} (seed {seed}, {seconds:.3} s): error {:+.2e}, {:.1} standard errors",
            device.info().spec(),
            pi - std::f64::consts::PI,
            (pi - std::f64::consts::PI) / sigma
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("pi: {e}");
        std::process::exit(1);
    }
}

/// At a small size, every device present counts exactly what the host counts, and the
/// estimate is within five standard errors of pi.
#[test]
fn every_device_counts_what_the_host_counts() {
    let (seed, items) = (7u64, 1000u32);
    let want = count_inside_on_host(seed, items);
    let drawn = f64::from(items) * f64::from(PER_ITEM);
    let pi = 4.0 * want as f64 / drawn;
    let p = std::f64::consts::FRAC_PI_4;
    assert!(
        (pi - std::f64::consts::PI).abs() < 5.0 * 4.0 * (p * (1.0 - p) / drawn).sqrt(),
        "{pi}"
    );
    // Every device, and each again in checked mode: no fault, race or uninitialized read.
    for d in strata::devices()
        .iter()
        .flat_map(|d| [d.clone(), d.checked()])
    {
        let q = Queue::new(&d).unwrap();
        assert_eq!(
            count_inside(&q, seed, items).unwrap(),
            want,
            "{}",
            d.info().spec()
        );
    }
}
