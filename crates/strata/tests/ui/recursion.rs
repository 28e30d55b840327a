use strata::prelude::*;

#[kernel]
fn fact(n: u32) -> u32 {
    if n < 2 {
        1
    } else {
        n * fact(n - 1)
    }
}

fn main() {}
