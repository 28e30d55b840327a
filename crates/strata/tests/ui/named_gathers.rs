use strata::prelude::*;

#[kernel]
fn untyped(x: &[u32]) {
    let total = gather_add(x[global_id(0)]);
}

#[kernel]
fn nested(x: &[u32], #[stage] twice: bool) {
    if twice {
        let total = gather_add::<u32>(x[global_id(0)]);
    }
}

#[kernel]
fn named_twice(x: &[u32]) {
    let total = gather_add::<u32>(x[global_id(0)]);
    let total = gather_max::<u32>(x[global_id(0)]);
}

#[kernel]
fn sum(x: &[u32]) {
    let total = gather_add::<u32>(x[global_id(0)]);
}

fn main() -> strata::Result<()> {
    let queue = Queue::new(&Device::from_spec("cpu")?)?;
    let x = Buffer::from_slice(&queue, &[1u32, 2])?;
    let run = sum::build()?.launch(&queue, NdRange::new(2), &x)?;
    // The gather's type is the kernel's: reading it as another is a compile error.
    let total: f32 = run.total.get()?;
    Ok(())
}
