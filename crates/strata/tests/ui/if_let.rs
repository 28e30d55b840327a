use strata::prelude::*;

#[kernel]
fn opt(x: &mut [f32]) {
    let i = global_id(0);
    if let Some(v) = x.first() {
        x[i] = v;
    }
}

fn main() {}
