//! Blocking writes and reads between host slices and buffers, on every device present
//! (`cpu`, `interp`, PoCL, lavapipe, CUDA): `Queue::write` takes the caller's slice as it is
//! and `Queue::read_into` fills the caller's slice, both without a copy of their own, and
//! `Queue::read` hands back the vector the read filled. Checked here: each comes after what
//! the queue had to do before it (a kernel still running when it was called), the caller's
//! data may change at once after the call, every element type arrives whole, and after a
//! failed command they still run in the queue's order (their error naming the failure).

use strata::prelude::*;

#[path = "common/queued.rs"]
mod queued;

use queued::{devices, spin};

/// Iterations that keep `device` busy for a while, under a driver's loop limit.
fn busy(device: &Device) -> u32 {
    queued::busy(device, 2_000, 200_000)
}

#[test]
fn blocking_transfers_come_after_the_queued_kernel_and_copy_the_callers_data() {
    let k = spin("transfers_spin");
    for d in devices("transfers") {
        let q = Queue::new(&d).unwrap();
        let n = 4096usize;
        let x = Buffer::<u32>::new(&d, n).unwrap();
        // Still running (or queued) when the write is called: the write waits for it.
        let run = k
            .enqueue(&q, NdRange::new(n).local(64), args![busy(&d), &x], &[])
            .unwrap();
        let mut data: Vec<u32> = (0..100).map(|i| 1_000_000 + i).collect();
        q.write(&x, 100..200, &data).unwrap();
        assert!(run.event().is_complete(), "{}", d.spec());
        // The buffer holds what the slice held at the call.
        data.fill(7);
        let mut want: Vec<u32> = (1..=n as u32).collect();
        for (i, w) in want[100..200].iter_mut().enumerate() {
            *w = 1_000_000 + i as u32;
        }
        let mut got = vec![0u32; n];
        q.read_into(&x, &mut got).unwrap();
        assert_eq!(got, want, "{}: read_into", d.spec());
        assert_eq!(q.read(&x).unwrap(), want, "{}: read", d.spec());
        assert_eq!(
            q.read_range(&x, 98..102).unwrap(),
            want[98..102].to_vec(),
            "{}: read_range",
            d.spec()
        );
        // A read called while a kernel runs delivers that kernel's results.
        k.enqueue(&q, NdRange::new(n).local(64), args![busy(&d), &x], &[])
            .unwrap();
        q.read_into(&x, &mut got).unwrap();
        assert_eq!(got, (1..=n as u32).collect::<Vec<_>>(), "{}", d.spec());
    }
}

/// One element type through every form of write and read.
fn round_trip<T: strata::builder::Element + PartialEq + std::fmt::Debug>(q: &Queue, data: &[T]) {
    let spec = q.device().spec();
    let what = std::any::type_name::<T>();
    let b = Buffer::<T>::new(q.device(), data.len()).unwrap();
    q.write(&b, .., data).unwrap();
    assert_eq!(q.read(&b).unwrap(), data, "{spec}: {what} read");
    let mut into = vec![T::zeroed(); data.len()];
    q.read_into(&b, &mut into).unwrap();
    assert_eq!(into, data, "{spec}: {what} read_into");
    let tail = data.len() / 3;
    assert_eq!(
        q.read_range(&b, tail..).unwrap(),
        data[tail..].to_vec(),
        "{spec}: {what} read_range"
    );
    let pending = q.enqueue_read(&b, 1..tail, &[]).unwrap();
    assert_eq!(
        pending.wait().unwrap(),
        data[1..tail].to_vec(),
        "{spec}: {what} enqueue_read"
    );
    q.write(&b, 2..4, &data[..2]).unwrap();
    let mut want = data.to_vec();
    want[2..4].clone_from_slice(&data[..2]);
    assert_eq!(q.read(&b).unwrap(), want, "{spec}: {what} partial write");
}

#[test]
fn every_element_type_arrives_whole() {
    for d in devices("transfers") {
        let q = Queue::new(&d).unwrap();
        // Odd lengths, so that no byte count is a multiple of eight.
        let bytes: Vec<u8> = (0..1001u32).map(|i| (i * 37 % 251) as u8).collect();
        round_trip(&q, &bytes);
        let shorts: Vec<i16> = (0..777i32).map(|i| (i * 91 - 30_000) as i16).collect();
        round_trip(&q, &shorts);
        let longs: Vec<u64> = (0..333u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        round_trip(&q, &longs);
        let doubles: Vec<f64> = (0..257).map(|i| (i as f64).sqrt() - 3.5).collect();
        round_trip(&q, &doubles);
    }
}

#[test]
fn after_a_failed_kernel_blocking_transfers_still_run_in_order() {
    // Only `cpu` and `interp` report an out-of-bounds store as the launch's error.
    let k = Kernel::build("transfers_oob", |k| {
        let x = k.write::<u32>("x");
        x.set(global_id(0) + 1u32, 5u32);
    })
    .unwrap();
    for spec in ["cpu", "interp"] {
        let d = Device::from_spec(spec).unwrap();
        let q = Queue::new(&d).unwrap();
        let x = Buffer::<u32>::from_slice(&q, &[1, 2, 3, 4]).unwrap();
        let run = k
            .enqueue(&q, NdRange::new(4).local(1), args![&x], &[])
            .unwrap();
        // The queue's unobserved failure fails the write, which still runs after the kernel
        // (an in-order queue does not recall commands): its error names the kernel's fault.
        let mut data = [9u32, 8, 7, 6];
        let err = q
            .write(&x, .., &data)
            .expect_err("a write after a failed command fails");
        assert!(err.to_string().contains("out of bounds"), "{spec}: {err}");
        data.fill(0);
        assert!(run.wait().is_err());
        // Observed now: the queue runs normally again; the write's data, as it was at the call.
        let mut got = [0u32; 4];
        q.read_into(&x, &mut got).unwrap();
        assert_eq!(got, [9, 8, 7, 6], "{spec}");
    }
}
