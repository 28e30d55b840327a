//! What moving data between host slices and a device's buffers costs, beside the host copy
//! that moves the same bytes, timed by turns (one repetition of each per round) in the same run.
//!
//! | bench                | strata side                                      | baseline (`memcpy`)                  |
//! |----------------------|--------------------------------------------------|--------------------------------------|
//! | `transfer_write`     | `queue.write(&buf, .., &host)`                   | `dst.copy_from_slice(&host)` (a `Vec` of the same length, its pages touched before) |
//! | `transfer_read`      | `queue.read(&buf)`: a new `Vec`                  | `host.to_vec()`: a new `Vec`         |
//! | `transfer_read_into` | `queue.read_into(&buf, &mut dst)`                | `dst.copy_from_slice(&host)`         |
//!
//! `n` `f32` (the `--size`, 2^24 by default: 64 MiB), bytes `4 n`. The baselines are one
//! thread's copy, what the bytes cost on the host; on the CPU devices a transfer is that copy
//! at best, on a GPU it crosses the bus (PCIe or the like: the ratio says by how much the
//! bus is slower than the host's memory). Results are checked: the buffer after a write, the
//! vector or slice after a read, bit for bit.

use crate::bench::{alternate, check_exact, BenchError, BenchResult};
use std::time::Instant;
use strata::{Buffer, Queue};

/// The transfer benchmarks.
pub const BENCHES: [&str; 3] = ["transfer_write", "transfer_read", "transfer_read_into"];

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

/// The baseline of a write or a read into a slice: one thread's copy of `host` into `dst`.
fn host_copy(dst: &mut [f32], host: &[f32]) -> Result<f64, BenchError> {
    let t = Instant::now();
    dst.copy_from_slice(host);
    std::hint::black_box(&dst);
    Ok(secs(t))
}

/// Runs transfer benchmark `name` on `queue` over `host` (its data).
pub fn run(
    name: &'static str,
    queue: &Queue,
    host: &[f32],
    reps: usize,
) -> Result<BenchResult, BenchError> {
    let n = host.len();
    let buf = Buffer::from_slice(queue, host)?;
    // A destination of the host's length, its pages touched (as a buffer's are).
    let mut dst = host.to_vec();
    let (strata_s, baseline_s) = match name {
        "transfer_write" => {
            let [s, b] = alternate(
                reps,
                [
                    &mut || -> Result<f64, BenchError> {
                        let t = Instant::now();
                        queue.write(&buf, .., host)?;
                        Ok(secs(t))
                    },
                    &mut || host_copy(&mut dst, host),
                ],
            )?;
            check_exact(name, &queue.read(&buf)?, host)?;
            (s, b)
        }
        "transfer_read" => {
            let mut got = Vec::new();
            let mut copy = Vec::new();
            let [s, b] = alternate(
                reps,
                [
                    &mut || -> Result<f64, BenchError> {
                        drop(std::mem::take(&mut got));
                        let t = Instant::now();
                        got = queue.read(&buf)?;
                        Ok(secs(t))
                    },
                    &mut || {
                        drop(std::mem::take(&mut copy));
                        let t = Instant::now();
                        copy = std::hint::black_box(host.to_vec());
                        Ok(secs(t))
                    },
                ],
            )?;
            check_exact(name, &got, host)?;
            (s, b)
        }
        "transfer_read_into" => {
            let mut into = vec![0.0f32; n];
            let [s, b] = alternate(
                reps,
                [
                    &mut || -> Result<f64, BenchError> {
                        let t = Instant::now();
                        queue.read_into(&buf, &mut into)?;
                        Ok(secs(t))
                    },
                    &mut || host_copy(&mut dst, host),
                ],
            )?;
            check_exact(name, &into, host)?;
            (s, b)
        }
        other => {
            return Err(BenchError::InvalidOptions(format!(
                "`{other}` is not a transfer benchmark"
            )))
        }
    };
    Ok(super::row(
        queue,
        name,
        n,
        reps,
        4 * n as u64,
        strata_s,
        ("memcpy", baseline_s),
        0.0,
    ))
}
