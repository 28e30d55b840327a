use strata::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn main() -> strata::Result<()> {
    let device = Device::from_spec("cpu")?;
    let queue = Queue::new(&device)?;
    let x = Buffer::from_slice(&queue, &[1.0f32, 2.0])?;
    saxpy::build()?.launch(&queue, NdRange::new(2), &x, &x)?;
    Ok(())
}
