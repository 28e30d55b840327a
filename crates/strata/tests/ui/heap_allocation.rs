use strata::prelude::*;

#[kernel]
fn collect(x: &mut [f32]) {
    let v = Vec::new();
    let w = vec![1.0f32, 2.0];
    x[0] = v[0] + w[0];
}

fn main() {}
