use strata::prelude::*;

#[kernel]
fn classify(x: &[i32], out: &mut [i32]) {
    let i = global_id(0);
    out[i] = match x[i] {
        0 => 1,
        _ => 2,
    };
}

fn main() {}
