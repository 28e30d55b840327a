use strata::prelude::*;

#[kernel]
fn counts(x: &[u32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    let n = var(x[i]);
    out[i] = n + var(1u32);
}

fn main() {}
