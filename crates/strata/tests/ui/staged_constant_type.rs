use strata::prelude::*;

const SCALE: f64 = 0.5;

// A typed host value converts to the device value's type only where that cannot lose it:
// `f64` beside `f32` is a compile error that says to write `as`.
#[kernel]
fn scale(x: &mut [f32]) {
    let i = global_id(0);
    x[i] = x[i] * SCALE;
}

fn main() {}
