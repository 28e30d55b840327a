//! Sum reductions three ways, each checked against a plain-Rust sum:
//!
//! 1. the classic (Concurnas-style) reduction: every work-item sums a grid-stride slice into a
//!    private variable, the work-group combines these in a local-memory tree with barriers,
//!    work-item 0 writes one partial per work-group, and a second launch of the same kernel
//!    (one work-group) sums the partials;
//! 2. the same with the `group_reduce_add` collective instead of the hand-written tree;
//! 3. the same with `k.gather_add` (Goopax), which returns the total through the `Run`.
//!
//! ```text
//! cargo run --release --example reduce
//! ```

#[cfg(test)]
#[path = "common/vulkan.rs"]
#[allow(clippy::duplicate_mod)] // tests/examples_checked.rs includes several examples
mod vulkan;

use strata::prelude::*;

/// Work-items per work-group.
const LOCAL: u32 = 256;
/// Work-groups of the first pass.
const GROUPS: u32 = 64;

/// One verified reduction.
struct Outcome {
    method: &'static str,
    sum: f32,
    kernel_time: std::time::Duration,
}

/// A kernel that sums `x` into one partial per work-group, written to `partials`.
fn tree_kernel() -> strata::Result<Kernel> {
    Kernel::build("reduce_tree", |k| {
        let x = k.read::<f32>("x");
        let partials = k.write::<f32>("partials");
        let tile = k.local_array::<f32>("tile", LOCAL);
        let l = local_id(0);
        // Grid-stride loop: work-item i sums x[i], x[i + global_size], ...
        let mut acc = var_named("acc", 0.0f32);
        for_step::<u32>(global_id(0), x.len(), global_size(0), |j| acc += x.at(j));
        tile.set(l, acc.get());
        barrier();
        // The tree, unrolled at build time: s = 128, 64, ..., 1.
        let mut s = LOCAL / 2;
        while s > 0 {
            if_(l.lt(s), || tile.set(l, tile.at(l) + tile.at(l + s)));
            barrier();
            s /= 2;
        }
        if_(l.eq(0u32), || partials.set(group_id(0), tile.at(0u32)));
    })
}

/// The same partial sums with the work-group collective.
fn collective_kernel() -> strata::Result<Kernel> {
    Kernel::build("reduce_collective", |k| {
        let x = k.read::<f32>("x");
        let partials = k.write::<f32>("partials");
        let mut acc = var_named("acc", 0.0f32);
        for_step::<u32>(global_id(0), x.len(), global_size(0), |j| acc += x.at(j));
        let total = group_reduce_add(acc.get());
        if_(local_id(0).eq(0u32), || partials.set(group_id(0), total));
    })
}

/// The total through a gather.
fn gather_kernel() -> strata::Result<Kernel> {
    Kernel::build("reduce_gather", |k| {
        let x = k.read::<f32>("x");
        let mut acc = var_named("acc", 0.0f32);
        for_step::<u32>(global_id(0), x.len(), global_size(0), |j| acc += x.at(j));
        k.gather_add(acc.get());
    })
}

// The same three kernels as plain Rust functions (`#[kernel]`): each records exactly the IR
// of its builder version above (checked by the test at the end). `let mut acc = 0.0f32` becomes
// a private variable because the device loop adds to it; `s` stays a Rust value, so the tree
// is unrolled as in the builder version.

/// [`tree_kernel`] as a plain Rust function.
#[kernel]
fn reduce_tree(x: &[f32], #[write] partials: &mut [f32]) {
    let tile = local_array::<f32>(LOCAL);
    let l = local_id(0);
    let mut acc = 0.0f32;
    for j in (global_id(0)..x.len()).step_by(global_size(0)) {
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

/// [`collective_kernel`] as a plain Rust function.
#[kernel]
fn reduce_collective(x: &[f32], #[write] partials: &mut [f32]) {
    let mut acc = 0.0f32;
    for j in (global_id(0)..x.len()).step_by(global_size(0)) {
        acc += x[j];
    }
    let total = group_reduce_add(acc);
    if local_id(0) == 0u32 {
        partials[group_id(0)] = total;
    }
}

/// [`gather_kernel`] as a plain Rust function.
#[kernel]
fn reduce_gather(x: &[f32]) {
    let mut acc = 0.0f32;
    for j in (global_id(0)..x.len()).step_by(global_size(0)) {
        acc += x[j];
    }
    gather_add(acc);
}

/// Runs a partial-sum kernel twice: `GROUPS` work-groups over `x`, then one work-group over
/// the partials.
fn two_pass(
    queue: &Queue,
    kernel: &Kernel,
    x: &Buffer<f32>,
) -> strata::Result<(f32, std::time::Duration)> {
    let partials = Buffer::<f32>::new(queue, GROUPS as usize)?;
    let total = Buffer::<f32>::new(queue, 1)?;
    let range = NdRange::new((LOCAL * GROUPS) as usize).local(LOCAL as usize);
    let first = kernel.launch(queue, range, args![x, &partials])?;
    let range = NdRange::new(LOCAL as usize).local(LOCAL as usize);
    let second = kernel.launch(queue, range, args![&partials, &total])?;
    let time = first.event().duration()? + second.event().duration()?;
    Ok((queue.read(&total)?[0], time))
}

/// Runs the three reductions over `n` values and checks each against the host sum.
fn reductions(device: &Device, n: usize) -> Result<Vec<Outcome>, Box<dyn std::error::Error>> {
    let queue = Queue::new(device)?;
    let xs: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1001) as f32 / 1000.0)
        .collect();
    let want: f64 = xs.iter().map(|&v| v as f64).sum();
    let x = Buffer::from_slice(&queue, &xs)?;

    let mut out = Vec::new();
    let (sum, time) = two_pass(&queue, &tree_kernel()?, &x)?;
    out.push(Outcome {
        method: "local-memory tree + barriers",
        sum,
        kernel_time: time,
    });
    let (sum, time) = two_pass(&queue, &collective_kernel()?, &x)?;
    out.push(Outcome {
        method: "group_reduce_add",
        sum,
        kernel_time: time,
    });
    let range = NdRange::new((LOCAL * GROUPS) as usize).local(LOCAL as usize);
    let run = gather_kernel()?.launch(&queue, range, args![&x])?;
    out.push(Outcome {
        method: "gather_add",
        sum: run.gather::<f32>(0)?.get()?,
        kernel_time: run.event().duration()?,
    });

    for o in &out {
        // f32 sums in another order differ from the f64 sum by rounding only.
        let tolerance = want.abs() * 1e-5 + 1e-3;
        if (o.sum as f64 - want).abs() > tolerance {
            return Err(format!("{}: sum is {}, expected {want}", o.method, o.sum).into());
        }
    }
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::from_spec("best")?;
    let n = 1 << 22;
    println!("device: {}", device.info().spec());
    for o in reductions(&device, n)? {
        println!(
            "sum of {n} values with {:<30} = {:>12.3} in {:8.3} ms: OK",
            o.method,
            o.sum,
            o.kernel_time.as_secs_f64() * 1e3
        );
    }
    Ok(())
}

#[test]
pub fn reductions_on_cpu() {
    reductions_on(&Device::from_spec("cpu").unwrap());
}

/// The same on `vulkan:0` (lavapipe here).
#[test]
pub fn reductions_on_vulkan() {
    if let Some(d) = vulkan::vulkan0() {
        reductions_on(&d);
    }
}

/// The example's check on `device` (the tests run it in checked mode too).
pub fn reductions_on(device: &Device) {
    // Not a multiple of the launch size, so the grid-stride loops run unevenly.
    let out = reductions(device, 100_003).unwrap();
    assert_eq!(out.len(), 3);
}

#[test]
pub fn macro_style_matches_builder() {
    let pairs = [
        (
            reduce_tree::build().unwrap().kernel().clone(),
            tree_kernel(),
        ),
        (
            reduce_collective::build().unwrap().kernel().clone(),
            collective_kernel(),
        ),
        (
            reduce_gather::build().unwrap().kernel().clone(),
            gather_kernel(),
        ),
    ];
    for (macro_style, builder) in pairs {
        assert_eq!(macro_style.ir_text(), builder.unwrap().ir_text());
    }
}
