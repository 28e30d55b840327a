use strata::prelude::*;

#[kernel]
fn checked(x: &mut [u32]) {
    let i = global_id(0);
    if i >= x.len() {
        panic!("out of range");
    }
    let v = x.get(i).unwrap();
    assert!(v > 0);
}

fn main() {}
