use strata::prelude::*;

#[kernel]
fn apply(x: &mut [f32], f: &dyn Fn(f32) -> f32) {
    let i = global_id(0);
    x[i] = f(x[i]);
}

fn main() {}
