//! `y = a * x + y` on the best device, checked against the same computation in plain Rust.
//!
//! ```text
//! cargo run --release --example saxpy
//! ```

#[cfg(test)]
#[path = "common/vulkan.rs"]
#[allow(clippy::duplicate_mod)] // tests/examples_checked.rs includes several examples
mod vulkan;

use strata::prelude::*;

/// The result of one verified saxpy run.
struct Report {
    n: usize,
    kernel_time: std::time::Duration,
    max_error: f32,
}

/// The kernel, written with the builder: parameters are declared on `k`, device values are
/// `Expr`s, and control flow is `if_`.
fn saxpy_kernel() -> strata::Result<Kernel> {
    Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })
}

/// The same kernel as a plain Rust function: `saxpy_fn::build()` records exactly the IR of
/// [`saxpy_kernel`] (checked by the test below), and its `launch` takes `a: f32, x: &Buffer<f32>,
/// y: &Buffer<f32>`.
#[kernel(name = "saxpy")]
fn saxpy_fn(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Runs saxpy on `n` elements on `device` and checks every element against the host.
fn saxpy(device: &Device, n: usize) -> Result<Report, Box<dyn std::error::Error>> {
    let queue = Queue::new(device)?;
    let kernel = saxpy_kernel()?;

    let a = 2.5f32;
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.25).collect();
    let ys: Vec<f32> = (0..n).map(|i| 1.0 - (i % 37) as f32).collect();
    let x = Buffer::from_slice(&queue, &xs)?;
    let y = Buffer::from_slice(&queue, &ys)?;
    let run = kernel.launch(&queue, NdRange::covering(n, 256), args![a, &x, &y])?;
    let got = queue.read(&y)?;

    let mut max_error = 0.0f32;
    for i in 0..n {
        let want = a * xs[i] + ys[i];
        let err = (got[i] - want).abs();
        // A GPU may fuse the multiply and add; allow one rounding of difference.
        if err > want.abs() * 1e-6 + 1e-6 {
            return Err(format!("saxpy: y[{i}] is {}, expected {want}", got[i]).into());
        }
        max_error = max_error.max(err);
    }
    Ok(Report {
        n,
        kernel_time: run.event().duration()?,
        max_error,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::from_spec("best")?;
    println!("device: {}", device.info().spec());
    let r = saxpy(&device, 1 << 20)?;
    println!(
        "saxpy of {} elements: kernel {:.3} ms, max |error| {:e}: OK",
        r.n,
        r.kernel_time.as_secs_f64() * 1e3,
        r.max_error
    );
    Ok(())
}

#[test]
pub fn saxpy_on_cpu() {
    saxpy_on(&Device::from_spec("cpu").unwrap());
}

/// The same on `vulkan:0` (lavapipe here).
#[test]
pub fn saxpy_on_vulkan() {
    if let Some(d) = vulkan::vulkan0() {
        saxpy_on(&d);
    }
}

/// The example's check on `device` (the tests run it in checked mode too).
pub fn saxpy_on(device: &Device) {
    let r = saxpy(device, 10_000).unwrap();
    assert_eq!(r.n, 10_000);
}

#[test]
pub fn macro_style_matches_builder() {
    let builder = saxpy_kernel().unwrap();
    let macro_style = saxpy_fn::build().unwrap();
    assert_eq!(macro_style.kernel().ir_text(), builder.ir_text());
}
