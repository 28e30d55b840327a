//! What a `cpu` launch keeps between launches (issue 31, item 5): each thread's worker
//! buffers (records, local memory, masks, the fault it reports) are reused by its next
//! launch, of any kernel and work-group size. Launches that alternate work-group sizes, local
//! memory sizes, kernels and faults on one queue must each give what a fresh launch gives, and
//! a launch of 2 or 64 work-groups must run every one of them.

use strata::prelude::*;
use strata::Error;

fn queue() -> Queue {
    Queue::new(&Device::from_spec("cpu").unwrap()).unwrap()
}

/// Each work-item writes the sum over its work-group of the local ids (through a
/// launch-sized local array and a barrier) plus its own local id.
fn tile_kernel() -> Kernel {
    Kernel::build("tile_sum", |k| {
        let out = k.write::<u32>("out");
        let tile = k.local_array_dyn::<u32>("tile");
        let i = local_id(0);
        tile.set(i, i);
        barrier();
        let s = group_reduce_add(tile.at(i));
        out.set(global_id(0), s + i);
    })
    .unwrap()
}

/// A streaming kernel with no barrier (one region, the vector path for work-groups of a
/// multiple of 4).
fn scale_kernel() -> Kernel {
    Kernel::build("scale", |k| {
        let x = k.read::<u32>("x");
        let y = k.write::<u32>("y");
        let i = global_id(0);
        if_(i.lt(y.len()), || y.set(i, x.at(i) * 3u32));
    })
    .unwrap()
}

#[test]
fn launches_of_other_sizes_and_kernels_reuse_buffers_correctly() {
    let q = queue();
    let tile = tile_kernel();
    let scale = scale_kernel();
    let x: Vec<u32> = (0..1000).collect();
    let xb = Buffer::from_slice(&q, &x).unwrap();
    for round in 0..3 {
        for local in [16usize, 4, 64, 2, 7, 32] {
            let n = local * 5;
            let out = Buffer::<u32>::new(&q, n).unwrap();
            tile.launch(
                &q,
                NdRange::new(n).local(local),
                args![&out, LocalMem::<u32>::new(local)],
            )
            .unwrap();
            let sum = (local * (local - 1) / 2) as u32;
            let want: Vec<u32> = (0..n).map(|g| sum + (g % local) as u32).collect();
            assert_eq!(q.read(&out).unwrap(), want, "round {round}, local {local}");

            let y = Buffer::<u32>::new(&q, 1000).unwrap();
            scale
                .launch(&q, NdRange::covering(1000, local), args![&xb, &y])
                .unwrap();
            let want: Vec<u32> = x.iter().map(|v| v * 3).collect();
            assert_eq!(q.read(&y).unwrap(), want, "round {round}, local {local}");
        }
    }
}

/// A fault reported by one launch is not reported again by the next launch that reuses the
/// same buffers, and the next fault names its own work-item.
#[test]
fn a_fault_does_not_outlive_its_launch() {
    let q = queue();
    let k = Kernel::build("oob", |k| {
        let x = k.read_write::<u32>("x");
        let at = k.scalar::<u32>("at");
        let i = global_id(0);
        if_(i.eq(at), || x.set(i + 100u32, 1u32));
        if_(i.lt(x.len()), || x.set(i, x.at(i) + 1u32));
    })
    .unwrap();
    let x = Buffer::<u32>::new(&q, 64).unwrap();
    for at in [5u32, 1000, 17, 1000] {
        let r = k.launch(&q, NdRange::new(64).local(8), args![&x, at]);
        match (at, r) {
            (1000, r) => drop(r.unwrap()),
            (_, Err(Error::OutOfBounds { item, .. })) => assert_eq!(item.global[0], at),
            (_, r) => panic!("at {at}: {r:?}"),
        }
    }
}

/// Launches of 1, 2 and 64 work-groups, enqueued back to back and waited for together, each
/// run every work-group once (the launch rows of `strata bench --filter overhead_launch`).
#[test]
fn small_launches_run_every_work_group() {
    let q = queue();
    let k = Kernel::build("count", |k| {
        let y = k.read_write::<u32>("y");
        let i = global_id(0);
        if_(i.lt(y.len()), || y.set(i, y.at(i) + 1u32));
    })
    .unwrap();
    for groups in [1usize, 2, 3, 64] {
        let y = Buffer::<u32>::new(&q, groups).unwrap();
        let runs: Vec<strata::Run> = (0..50)
            .map(|_| {
                k.enqueue(&q, NdRange::new(groups).local(1), args![&y], &[])
                    .unwrap()
            })
            .collect();
        for r in &runs {
            r.wait().unwrap();
        }
        assert_eq!(q.read(&y).unwrap(), vec![50; groups], "{groups} groups");
    }
}
