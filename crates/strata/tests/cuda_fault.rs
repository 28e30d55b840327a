//! A kernel that faults on a CUDA device (an illegal address) fails its launch's event and
//! every later command of the queue with the driver's error; nothing reports success or
//! returns stale data. Its own test binary: a fault spoils the process's CUDA context.
//! Without a CUDA device there is nothing to check.

use strata::prelude::*;
use strata::BackendKind;

#[test]
fn a_kernel_fault_is_an_error_of_its_event_and_of_later_commands() {
    let Some(dev) = strata::devices()
        .into_iter()
        .find(|d| d.info().backend == BackendKind::Cuda)
    else {
        eprintln!("no CUDA device, nothing checked");
        return;
    };
    let q = Queue::new(&dev).unwrap();
    let y = Buffer::from_slice(&q, &[7u32; 4]).unwrap();
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
        msg.contains("wild_store") || msg.contains("cuLaunchKernel"),
        "the error names the launch: {msg}"
    );
    assert!(
        q.read(&y).is_err(),
        "a read after the fault must fail, not return data"
    );
    assert!(q.finish().is_err() || q.read(&y).is_err());
}
