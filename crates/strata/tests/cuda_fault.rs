//! A kernel that faults on a CUDA device (an illegal address) fails its launch's event, naming
//! the kernel, and every later command of the queue with the driver's error; nothing reports
//! success or returns stale data. Then the device's next queue resets the context (see
//! `cuda::CtxCell`). Where the driver allows it, the device is usable again: a kernel compiled
//! before the fault is compiled again, and a buffer made before the fault is a typed error,
//! not a crash. Where it does not (CUDA documents that an illegal address leaves the process
//! unable to do further CUDA work; an H200 with driver 580 refused the new context on
//! 2026-11-27), every later use of the device is a typed error that names the fault and says
//! to restart the process: never a panic, a hang or data. Its own test binary: the fault and
//! the reset touch the process's CUDA context. Without a CUDA device there is nothing to check.

use strata::prelude::*;
use strata::BackendKind;

#[test]
fn a_kernel_fault_is_an_error_and_the_device_is_usable_or_says_to_restart() {
    let Some(dev) = strata::devices()
        .into_iter()
        .find(|d| d.info().backend == BackendKind::Cuda)
    else {
        eprintln!("no CUDA device, nothing checked");
        return;
    };
    let q = Queue::new(&dev).unwrap();
    let y = Buffer::from_slice(&q, &[7u32; 4]).unwrap();
    let double = Kernel::build("double_it", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        x.set(i, x.at(i) * 2u32);
    })
    .unwrap();
    // Compiled and run on the device before the fault.
    double
        .launch(&q, NdRange::new(4), args![&y])
        .expect("a good kernel runs");
    assert_eq!(q.read(&y).unwrap(), vec![14u32; 4]);

    // Generated CUDA code does not check bounds: this store is 15 GiB past the buffer.
    let wild = Kernel::build("wild_store", |k| {
        let y = k.write::<u32>("y");
        y.set(global_id(0) + 0xF000_0000u32, 1u32);
    })
    .unwrap();
    let run = wild.enqueue(&q, NdRange::new(1), args![&y], &[]).unwrap();
    let e = run.event().wait().unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("wild_store"),
        "the error names the kernel: {msg}"
    );
    assert!(
        q.read(&y).is_err(),
        "a read after the fault must fail, not return data"
    );
    assert!(q.finish().is_err() || q.read(&y).is_err());

    // A new queue resets the context. Where the driver refuses, every later use of the
    // device says so, naming the fault.
    let q2 = match Queue::new(&dev) {
        Ok(q2) => q2,
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("wild_store") && msg.contains("restart"),
                "a device the driver cannot reset: {msg}"
            );
            let again = Queue::new(&dev).map(|_| ()).unwrap_err().to_string();
            assert!(again.contains("restart"), "a second new queue: {again}");
            let launch = double
                .launch(&q, NdRange::new(4), args![&y])
                .unwrap_err()
                .to_string();
            assert!(!launch.is_empty(), "a launch on the old queue");
            assert!(q.read(&y).is_err(), "a read on the old queue");
            eprintln!("the driver keeps the fault for the life of the process: {msg}");
            return;
        }
    };
    // The device is usable again: new memory, the kernel compiled before the fault (compiled
    // again) and a new one.
    let z = Buffer::from_slice(&q2, &[1u32, 2, 3, 4]).unwrap();
    double
        .launch(&q2, NdRange::new(4), args![&z])
        .expect("the kernel compiled before the fault runs again");
    assert_eq!(q2.read(&z).unwrap(), vec![2, 4, 6, 8]);
    let add_one = Kernel::build("add_one", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        x.set(i, x.at(i) + 1u32);
    })
    .unwrap();
    add_one.launch(&q2, NdRange::new(4), args![&z]).unwrap();
    assert_eq!(q2.read(&z).unwrap(), vec![3, 5, 7, 9]);

    // Memory made before the fault was destroyed by the reset: a typed error, never data.
    let lost = q2.read(&y).unwrap_err().to_string();
    assert!(
        lost.contains("lost") && lost.contains("device fault"),
        "a buffer from before the reset: {lost}"
    );
}
