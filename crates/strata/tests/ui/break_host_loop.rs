use strata::prelude::*;

#[kernel]
fn first_negative(x: &[f32], #[write] out: &mut [u32]) {
    let i = global_id(0);
    for k in 0..8 {
        if x[i * 8 + k] < 0.0 {
            break;
        }
    }
    out[i] = 0;
}

fn main() {}
