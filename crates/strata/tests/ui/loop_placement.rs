use strata::prelude::*;

#[kernel]
fn host_claim(n: u32, x: &mut [u32]) {
    let i = global_id(0);
    #[host]
    for k in 0..n {
        x[i] += k;
    }
}

#[kernel]
fn device_claim(x: &mut [u32]) {
    let i = global_id(0);
    #[device]
    for k in 0..4u32 {
        x[i] += k;
    }
}

#[kernel]
fn while_claim(x: &mut [u32]) {
    let i = global_id(0);
    let mut step = 1u32;
    if x[i] > 3 {
        step = 2u32;
    }
    #[host]
    while step < 8 {
        step *= 2;
    }
}

#[kernel]
fn loop_claim(x: &mut [u32]) {
    #[host]
    loop {
        break;
    }
}

fn main() {}
