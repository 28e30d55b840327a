use strata::prelude::*;

#[kernel]
fn scale(factor: &f32, x: &mut [f32]) {
    let i = global_id(0);
    x[i] = x[i] * factor;
}

#[kernel]
fn pass_ref(x: &mut [f32]) {
    let i = global_id(0);
    let r = &x;
    r[i] = 0.0;
}

fn main() {}
