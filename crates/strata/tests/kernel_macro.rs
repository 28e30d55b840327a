//! `#[kernel]`: kernels written as plain Rust functions, run on the CPU backend and compared
//! with the same kernels written with the builder.

use strata::builder::Float;
use strata::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[kernel]
fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id(0);
    if i < x.len() {
        y[i] += a * x[i];
    }
}

#[kernel]
fn sq(x: f32) -> f32 {
    x * x
}

#[kernel]
fn map_f32(x: &[f32], #[write] out: &mut [f32], f: impl Fn(f32) -> f32) {
    let i = global_id(0);
    if i < x.len() {
        out[i] = f(x[i]);
    }
}

#[kernel]
fn sum_rows(#[stage] n: u32, x: &[f32], #[write] out: &mut [f32]) {
    let i = global_id(0);
    let mut acc = 0.0f32;
    for k in 0..n {
        acc += x[i * n + k];
    }
    out[i] = acc;
}

fn cpu() -> (Device, Queue) {
    let d = Device::from_spec("cpu").unwrap();
    let q = Queue::new(&d).unwrap();
    (d, q)
}

#[test]
fn saxpy_runs_and_matches_builder_ir() {
    let (_d, q) = cpu();
    let k = saxpy::build().unwrap();
    let x = Buffer::from_slice(&q, &[1.0f32, 2.0, 3.0]).unwrap();
    let y = Buffer::from_slice(&q, &[10.0f32, 20.0, 30.0]).unwrap();
    k.launch(&q, NdRange::new(3), 2.0, &x, &y).unwrap();
    assert_eq!(q.read(&y).unwrap(), vec![12.0, 24.0, 36.0]);
    let b = Kernel::build("saxpy", |k| {
        let a = k.scalar::<f32>("a");
        let x = k.read::<f32>("x");
        let y = k.read_write::<f32>("y");
        let i = global_id(0);
        if_(i.lt(x.len()), || y.set(i, a * x.at(i) + y.at(i)));
    })
    .unwrap();
    assert_eq!(k.kernel().ir_text(), b.ir_text());
}

#[test]
fn generic_closure_stage() {
    let (_d, q) = cpu();
    let k32 = axpy::<f32>::build().unwrap();
    let k64 = axpy::<f64>::build().unwrap();
    let x = Buffer::from_slice(&q, &[1.0f64, 2.0]).unwrap();
    let y = Buffer::from_slice(&q, &[1.0f64, 1.0]).unwrap();
    k64.launch(&q, NdRange::new(2), 3.0, &x, &y).unwrap();
    assert_eq!(q.read(&y).unwrap(), vec![4.0, 7.0]);
    assert!(k32.kernel().ir_text().contains("f32"));
    let m = map_f32::build(sq).unwrap();
    let m2 = map_f32::build(|v| v * 2.0 + 1.0).unwrap();
    let x = Buffer::from_slice(&q, &[1.0f32, 2.0, 3.0]).unwrap();
    let o = Buffer::<f32>::new(q.device(), 3).unwrap();
    m.launch(&q, NdRange::new(3), &x, &o).unwrap();
    assert_eq!(q.read(&o).unwrap(), vec![1.0, 4.0, 9.0]);
    m2.launch(&q, NdRange::new(3), &x, &o).unwrap();
    assert_eq!(q.read(&o).unwrap(), vec![3.0, 5.0, 7.0]);
    let s = sum_rows::build(4).unwrap();
    println!("{}", s.kernel().ir_text());
}
