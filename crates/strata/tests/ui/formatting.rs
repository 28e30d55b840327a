use strata::prelude::*;

#[kernel]
fn debug(x: &[f32]) {
    let i = global_id(0);
    println!("x[{}] = {}", i, x[i]);
    let s = format!("{}", i);
}

fn main() {}
