use strata::prelude::*;

struct Point {
    x: f32,
}

#[kernel]
fn misc(x: &mut [f32]) {
    let i = global_id(0);
    let p = Point { x: 1.0 };
    let y = unsafe { x[i] };
    while let Some(v) = x.first() {}
    fn helper() {}
}

fn main() {}
