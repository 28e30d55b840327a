//! The PACXX paper's listings with strata's patterns layer: dot product and saxpy in a few
//! lines each, on every device present, checked against plain Rust. Views (`zip`, `map`) are
//! lazy: each algorithm below traces its whole chain into one kernel per pass, which the
//! queue's launch counter shows.
//!
//! ```text
//! cargo run --release --example patterns
//! ```

use strata::patterns::*;
use strata::prelude::*;

/// `dot(x, y)`: zip, multiply, reduce — one fused kernel per reduction pass.
fn dot(ex: &Exec, x: &DeviceVec<f32>, y: &DeviceVec<f32>) -> strata::Result<f32> {
    zip(x, y).map(|(a, b)| a * b).sum(ex)
}

/// `y = a * x + y` with views only: one kernel, written in place.
fn saxpy(ex: &Exec, a: f32, x: &DeviceVec<f32>, y: &DeviceVec<f32>) -> strata::Result<()> {
    zip(x, y).map(move |(x, y)| x * a + y).collect_into(ex, y)
}

/// Runs both on `queue` and checks them; returns the launches they took.
fn on(queue: &Queue) -> strata::Result<u64> {
    let ex = Exec::new(queue);
    let n = 100_000;
    let xs: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    let x = DeviceVec::from_slice(&ex, &xs)?;
    let y = DeviceVec::from_slice(&ex, &ys)?;
    let before = queue.launch_count();
    let d = dot(&ex, &x, &y)?;
    let want: f32 = xs.iter().zip(&ys).map(|(a, b)| a * b).sum();
    assert_eq!(d, want, "dot");
    saxpy(&ex, 2.0, &x, &y)?;
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| 2.0 * x + y).collect();
    assert_eq!(y.to_vec()?, want, "saxpy");
    // Eager actions chain: sort, then a scan in place.
    y.sort()?.inclusive_scan_in_place(|a, b| a.max(b))?;
    let top = y.to_vec()?[n - 1];
    assert_eq!(Some(top), want.iter().copied().reduce(f32::max));
    Ok(queue.launch_count() - before)
}

/// Runs the example on the CPU backend (for tests).
pub fn patterns_on_cpu() -> u64 {
    patterns_on(&Device::from_spec("cpu").unwrap())
}

/// The example on `device` (the tests run it in checked mode too); its launch count.
pub fn patterns_on(device: &Device) -> u64 {
    on(&Queue::new(device).unwrap()).unwrap()
}

fn main() -> strata::Result<()> {
    for device in strata::devices() {
        let queue = Queue::new(&device)?;
        let launches = on(&queue)?;
        println!(
            "{}: dot, saxpy, sort and scan verified in {launches} kernel launches",
            device.info().spec()
        );
    }
    Ok(())
}

#[cfg(test)]
#[path = "common/vulkan.rs"]
#[allow(clippy::duplicate_mod)] // tests/examples_checked.rs includes several examples
mod vulkan;

#[cfg(test)]
mod tests {
    #[test]
    fn runs_on_the_cpu_backend() {
        assert!(super::patterns_on_cpu() > 2);
    }

    #[test]
    fn runs_on_vulkan() {
        if let Some(d) = super::vulkan::vulkan0() {
            assert!(super::patterns_on(&d) > 2);
        }
    }
}
