//! [`Wait`]: the four handles of work that completes later (an event, a launch, a read, a
//! pattern's vector) waited on through one generic function, each giving its typed result.

use std::time::Duration;
use strata::patterns::{DeviceVec, Exec, View};
use strata::prelude::*;

/// Waits for `w` the three ways the trait offers.
fn finish<W: Wait>(w: W) -> W::Output {
    w.wait_timeout(Duration::from_secs(60)).unwrap();
    assert!(w.is_complete());
    w.wait().unwrap()
}

#[test]
fn four_handles_one_trait() {
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let x = Buffer::from_slice(&q, &[1u32, 2, 3, 4]).unwrap();
    let inc = Kernel::build("wait_inc", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        if_(i.lt(x.len()), || x.set(i, x.at(i) + 1u32));
    })
    .unwrap();
    let run = inc.enqueue(&q, NdRange::new(4), args![&x], &[]).unwrap();
    let () = finish(&run);
    let event = q.enqueue_fill(&x, 7u32, 3.., &[run.event()]).unwrap();
    let () = finish(&event);
    let read = q.enqueue_read(&x, 1.., &[]).unwrap();
    assert_eq!(finish(read), vec![3, 4, 7]);

    let ex = Exec::new(&q);
    let v = DeviceVec::from_slice(&ex, &[1i32, 2, 3]).unwrap();
    let doubled = (&v).map(|e| e * 2i32).collect_async(&ex).unwrap();
    assert_eq!(finish(doubled).to_vec().unwrap(), vec![2, 4, 6]);
}
