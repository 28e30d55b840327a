//! Stub functions: helpers whose body is target source, with a Rust body for the CPU backend.

use super::{case, e, expect_eq, inputs, Case};
use strata::prelude::*;

/// Cases of this area.
pub(super) fn cases() -> Vec<Case> {
    vec![case("stub/source_and_cpu_bodies", stub_bodies)]
}

/// Two stubs, one called twice and one with four arguments of mixed types; the OpenCL source
/// and the Rust body compute the same thing, so every backend must agree with the host.
fn stub_bodies(q: &Queue) -> Result<(), String> {
    let mix_bits = Stub::<(u32, u32), u32>::new("mix_bits")
        .source("opencl", "uint mix_bits(uint a, uint b) { return (a ^ (b << 7)) + (b >> 3); }")
        .source("cuda", "__device__ unsigned int mix_bits(unsigned int a, unsigned int b) { return (a ^ (b << 7)) + (b >> 3); }")
        .cpu(|a: u32, b: u32| (a ^ (b << 7)).wrapping_add(b >> 3));
    let scale = Stub::<(f32, f32, i32, u32), f32>::new("scale_add")
        .source("opencl", "float scale_add(float x, float y, int k, uint m) { return x * (float)k + y * (float)(m & 15u); }")
        .source("cuda", "__device__ float scale_add(float x, float y, int k, unsigned int m) { return x * (float)k + y * (float)(m & 15u); }")
        .cpu(|x: f32, y: f32, k: i32, m: u32| x * k as f32 + y * (m & 15) as f32);
    let xs = inputs::<u32>(601, 777, false);
    let k = Kernel::build("stubs", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let fout = k.write::<f32>("fout");
        let i = global_id(0);
        if_(i.lt(x.len()), || {
            let v = x.at(i);
            out.set(i, mix_bits.call((mix_bits.call((v, i)), lit(12345u32))));
            let f = (v & 1023u32).cast::<f32>();
            fout.set(
                i,
                scale.call((f, lit(0.25f32), (v % 7u32).cast::<i32>() - 3i32, v)),
            );
        });
    })
    .map_err(e)?;
    let xb = Buffer::from_slice(q, &xs).map_err(e)?;
    let ob = Buffer::<u32>::new(q.device(), xs.len()).map_err(e)?;
    let fb = Buffer::<f32>::new(q.device(), xs.len()).map_err(e)?;
    k.launch(q, NdRange::covering(xs.len(), 64), args![&xb, &ob, &fb])
        .map_err(e)?;
    let mb = |a: u32, b: u32| (a ^ (b << 7)).wrapping_add(b >> 3);
    let want: Vec<u32> = xs
        .iter()
        .enumerate()
        .map(|(i, &v)| mb(mb(v, i as u32), 12345))
        .collect();
    expect_eq("mix_bits", &q.read(&ob).map_err(e)?, &want)?;
    let fwant: Vec<f32> = xs
        .iter()
        .map(|&v| (v & 1023) as f32 * ((v % 7) as i32 - 3) as f32 + 0.25 * (v & 15) as f32)
        .collect();
    expect_eq("scale_add", &q.read(&fb).map_err(e)?, &fwant)
}
