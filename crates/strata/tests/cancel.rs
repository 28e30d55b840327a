//! Bounding long kernels: waits with a time limit (`Event::wait_timeout`, `Run::wait_timeout`,
//! `Queue::finish_timeout`) fail with `Error::TimedOut` and leave the commands running, and
//! `Run::cancel` stops a launch: before it starts on every backend, between work-groups on
//! the CPU backend. No timing is asserted: a cancelled launch is recognized by the
//! work-groups that never ran.

use std::time::Duration;
use strata::prelude::*;
use strata::{Error, Run};

const GROUPS: usize = 1 << 14;

/// A kernel that would take minutes on the CPU backend: each work-group spins, then marks its
/// slot of `done`.
fn spin() -> Kernel {
    Kernel::build("spin", |k| {
        let done = k.write::<u32>("done");
        let acc = var(0u32);
        for_range(0u32, 20_000u32, |j| acc.set(acc.get() * 1_664_525u32 + j));
        if_(local_id(0).eq(0u32), || {
            done.set(group_id(0), acc.get().min(0u32) + 1u32)
        });
    })
    .unwrap()
}

/// [`spin`] launched on `q` over `GROUPS` work-groups, and the buffer it marks.
fn start_spin(q: &Queue) -> (Buffer<u32>, Run) {
    let done = Buffer::<u32>::new(q.device(), GROUPS).unwrap();
    let run = spin()
        .enqueue(q, NdRange::new(GROUPS * 64).local(64), args![&done], &[])
        .unwrap();
    (done, run)
}

fn cpu() -> Queue {
    Queue::new(&Device::from_spec("cpu").unwrap()).unwrap()
}

#[test]
fn a_running_cpu_launch_times_out_then_stops_between_work_groups() {
    let q = cpu();
    let (done, run) = start_spin(&q);
    let err = run.wait_timeout(Duration::from_millis(20)).unwrap_err();
    assert!(matches!(err, Error::TimedOut { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the command did not complete within 20ms; it keeps running (wait again, or cancel it)"
    );
    run.cancel();
    // Bounded, not a hang, should cancelling not work.
    let err = run.wait_timeout(Duration::from_secs(120)).unwrap_err();
    assert!(
        matches!(&err, Error::Cancelled { kernel } if kernel == "spin"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "kernel `spin` was cancelled");
    let ran = q.read(&done).unwrap().iter().filter(|&&d| d == 1).count();
    assert!(
        ran < GROUPS,
        "every work-group ran: the launch was not stopped"
    );
    // The failure was observed by the wait: the queue runs normally again.
    q.finish().unwrap();
    q.fill(&done, 5u32, 0..4).unwrap();
    assert_eq!(q.read(&done).unwrap()[..4], [5, 5, 5, 5]);
}

#[test]
fn a_queued_launch_cancelled_before_it_starts_never_runs() {
    let q = cpu();
    let marks = Buffer::<u32>::new(q.device(), 64).unwrap();
    let mark = Kernel::build("mark", |k| {
        let m = k.write::<u32>("m");
        m.set(global_id(0), 9u32);
    })
    .unwrap();
    let (_done, long) = start_spin(&q);
    let queued = mark
        .enqueue(&q, NdRange::new(64), args![&marks], &[])
        .unwrap();
    queued.cancel();
    long.cancel();
    let err = long.wait_timeout(Duration::from_secs(120)).unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }), "{err:?}");
    // The queued launch fails too: cancelled, or failed by the cancelled launch before it.
    let err = queued.wait_timeout(Duration::from_secs(120)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Cancelled { .. } | Error::DependencyFailed { .. }
        ),
        "{err:?}"
    );
    assert_eq!(
        q.read(&marks).unwrap(),
        vec![0; 64],
        "the cancelled launch ran"
    );
}

#[test]
fn finish_timeout_leaves_the_commands_running() {
    let q = cpu();
    let (_done, run) = start_spin(&q);
    let err = q.finish_timeout(Duration::from_millis(10)).unwrap_err();
    assert!(matches!(err, Error::TimedOut { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with(
            "the queue on cpu (1 command(s) still running or queued) did not complete within 10ms"
        ),
        "{err}"
    );
    run.cancel();
    // The launch is still the queue's: `finish` waits for it and reports its failure.
    let err = q.finish().unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }), "{err:?}");
    q.finish().unwrap();
}

/// A launch whose work-items never leave a loop (a `while` on a word nothing changes) is
/// stopped inside the loop by `cancel` (the compiled code polls the flag there): on the
/// eight-lane variant (work-groups of 8), the four-lane one (4) and the scalar code (3).
#[test]
fn a_cpu_launch_spinning_in_a_loop_stops_when_cancelled() {
    let k = Kernel::build("forever", |k| {
        let x = k.read_write::<u32>("x");
        let i = global_id(0);
        let n = var(0u32);
        while_(|| x.at(0u32).eq(0u32), || n.set(n.get() + i + 1u32));
        x.set(i, n.get());
    })
    .unwrap();
    assert_eq!(k.cpu_eight_lane_variant(), Ok(()));
    for local in [8, 4, 3] {
        let q = cpu();
        let x = Buffer::from_slice(&q, &vec![0u32; 2 * local]).unwrap();
        let run = k
            .enqueue(&q, NdRange::new(2 * local).local(local), args![&x], &[])
            .unwrap();
        let err = run.wait_timeout(Duration::from_millis(20)).unwrap_err();
        assert!(
            matches!(err, Error::TimedOut { .. }),
            "local {local}: {err:?}"
        );
        run.cancel();
        // Bounded, not a hang, should the loop not poll.
        let err = run.wait_timeout(Duration::from_secs(60)).unwrap_err();
        assert!(
            matches!(&err, Error::Cancelled { kernel } if kernel == "forever"),
            "local {local}: {err:?}"
        );
    }
}

/// On every device, a wait with a time limit returns a completed launch's result, and
/// cancelling a completed launch changes nothing.
#[test]
fn timeouts_and_cancel_of_completed_launches_on_every_device() {
    let k = Kernel::build("twice", |k| {
        let x = k.read_write::<f32>("x");
        let i = global_id(0);
        if_(i.lt(x.len()), || x.set(i, x.at(i) * 2.0f32));
    })
    .unwrap();
    for d in strata::devices() {
        let q = Queue::new(&d).unwrap();
        let x = Buffer::from_slice(&q, &[1.0f32, 2.0, 3.0]).unwrap();
        let run = k.enqueue(&q, NdRange::new(3), args![&x], &[]).unwrap();
        run.wait_timeout(Duration::from_secs(60)).unwrap();
        run.cancel();
        run.wait().unwrap();
        q.finish_timeout(Duration::from_secs(60)).unwrap();
        assert_eq!(
            q.read(&x).unwrap(),
            vec![2.0, 4.0, 6.0],
            "{}",
            d.info().spec()
        );
    }
}
