//! The handles of work that completes later (`Event`, `Run`, `PendingRead`, `AsyncVec`) as
//! `std::future::Future`s, run by a minimal executor written here (no async runtime): each
//! gives what its blocking `wait` gives, its errors included, on `cpu`, `interp` and every
//! OpenCL device; a future that is not ready is woken by the completion of its command (the
//! executor polls again only after a wake, and fails if none comes).
//!
//! When `STRATA_REQUIRE` contains `opencl`, having no OpenCL device is a failure.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use strata::patterns::{AsyncVec, DeviceVec, Exec, View};
use strata::prelude::*;
use strata::{Error, PendingRead, Run};

/// A waker that counts its wakes and lets the executor sleep until the next one.
#[derive(Default)]
struct Signal {
    wakes: Mutex<u32>,
    cv: Condvar,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        *self.wakes.lock().unwrap() += 1;
        self.cv.notify_all();
    }
}

/// What [`block_on`] saw: how often it polled, and whether the first poll was pending.
#[derive(Debug)]
struct Polls {
    count: u32,
    first_pending: bool,
}

/// Runs `f` to completion on this thread. It polls again only after the waker was woken
/// (never on a timer), and panics if no wake comes within a minute: a future that the
/// completion of its command does not wake fails here rather than hanging or being rescued
/// by polling.
fn block_on<F: Future>(f: F) -> (F::Output, Polls) {
    let signal = Arc::new(Signal::default());
    let waker = Waker::from(signal.clone());
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    let mut polls = Polls {
        count: 0,
        first_pending: false,
    };
    let mut seen = 0;
    loop {
        polls.count += 1;
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return (v, polls);
        }
        if polls.count == 1 {
            polls.first_pending = true;
        }
        let wakes = signal.wakes.lock().unwrap();
        let (wakes, timeout) = signal
            .cv
            .wait_timeout_while(wakes, Duration::from_secs(60), |w| *w == seen)
            .unwrap();
        assert!(
            !timeout.timed_out(),
            "the future returned Pending and was not woken within a minute"
        );
        seen = *wakes;
    }
}

#[path = "common/queued.rs"]
mod queued;

use queued::{devices, spin};

/// Iterations that keep `device` busy for a while (the interpreter is slower), under the
/// driver's loop limit where it has one.
fn busy(device: &Device) -> u32 {
    queued::busy(device, 4_000, 2_000_000)
}

#[test]
fn handles_are_send() {
    fn send<T: Send + 'static>() {}
    send::<Event>();
    send::<Run>();
    send::<PendingRead<u32>>();
    send::<AsyncVec<u32>>();
}

#[test]
fn each_handle_awaits_on_every_device() {
    let spin = spin("futures_spin");
    for device in devices("futures") {
        let name = device.spec();
        let q = Queue::new(&device).unwrap();
        let n = 256;
        let x = Buffer::<u32>::new(&q, n).unwrap();
        let expected: Vec<u32> = (1..=n as u32).collect();

        // A launch that is still running when first polled: woken by its completion.
        let run = spin
            .enqueue(&q, NdRange::new(n), args![busy(&device), &x], &[])
            .unwrap();
        let (r, polls) = block_on(&run);
        r.unwrap();
        assert!(run.is_complete(), "{name}");
        assert!(polls.first_pending, "{name}: the launch was done at once");
        assert!(polls.count >= 2, "{name}: {polls:?}");

        // A read, and a launch by value, chained in one async block; then an event.
        let (data, _) = block_on(async {
            let run = spin.enqueue(&q, NdRange::new(n), args![busy(&device), &x], &[])?;
            let event = run.event().clone();
            run.await?;
            let read = q.enqueue_read(&x, .., &[&event])?;
            let data = read.await?;
            let fill = q.enqueue_fill(&x, 7u32, n - 1.., &[])?;
            (&fill).await?;
            fill.await?;
            Ok::<_, Error>(data)
        });
        assert_eq!(data.unwrap(), expected, "{name}");
        assert_eq!(
            q.read_range(&x, n - 2..).unwrap(),
            vec![n as u32 - 1, 7],
            "{name}"
        );

        // A pattern's vector.
        let ex = Exec::new(&q);
        let v = DeviceVec::from_slice(&ex, &[1i32, 2, 3]).unwrap();
        let doubled = (&v).map(|e| e * 2i32).collect_async(&ex).unwrap();
        let (doubled, _) = block_on(doubled);
        assert_eq!(doubled.unwrap().to_vec().unwrap(), vec![2, 4, 6], "{name}");
    }
}

#[test]
fn a_failed_command_fails_its_future_and_those_after() {
    let spin = spin("futures_spin");
    for device in devices("futures") {
        let name = device.spec();
        let q = Queue::new(&device).unwrap();
        let x = Buffer::<u32>::new(&q, 256).unwrap();
        let busy = args![busy(&device), &x];
        let first = spin.enqueue(&q, NdRange::new(256), busy, &[]).unwrap();
        // Behind a running launch, cancelled before it starts: it never runs.
        let second = spin.enqueue(&q, NdRange::new(256), busy, &[]).unwrap();
        second.cancel();
        let read = q.enqueue_read(&x, .., &[second.event()]).unwrap();
        let (r, _) = block_on(&first);
        r.unwrap();
        let (r, _) = block_on(&second);
        assert!(matches!(r, Err(Error::Cancelled { .. })), "{name}: {r:?}");
        let (r, _) = block_on(read);
        assert!(
            r.is_err(),
            "{name}: the read after a failed launch succeeded"
        );
    }
}

#[test]
fn a_completed_handle_is_ready_at_the_first_poll() {
    let (r, polls) = block_on(Event::completed());
    r.unwrap();
    assert_eq!(polls.count, 1);
    let q = Queue::new(&Device::from_spec("cpu").unwrap()).unwrap();
    let x = Buffer::from_slice(&q, &[5u32, 6]).unwrap();
    let read = q.enqueue_read(&x, .., &[]).unwrap();
    read.event().wait().unwrap();
    let (data, polls) = block_on(read);
    assert_eq!(data.unwrap(), vec![5, 6]);
    assert_eq!(polls.count, 1);
}

/// An awaited launch reports what its `wait` reports: on a device that runs kernels in the
/// host's memory (PoCL), a read out of bounds outside checked mode is `OutOfBounds` from the
/// future too, read back from the launch's fault words.
#[test]
fn an_awaited_launch_reports_an_access_out_of_bounds() {
    let k = Kernel::build("futures_far_read", |k| {
        let x = k.read::<u32>("x");
        let out = k.write::<u32>("out");
        let i = global_id(0);
        let j = select::<u32>(i.eq(3u32), lit(1u32 << 30), i);
        out.set(i, x.at(j) + 1u32);
    })
    .unwrap();
    for device in devices("futures") {
        let q = Queue::new(&device).unwrap();
        let x = Buffer::from_slice(&q, &[7u32; 16]).unwrap();
        let out = Buffer::<u32>::new(&q, 16).unwrap();
        let run = k
            .enqueue(&q, NdRange::new(16).local(4), args![&x, &out], &[])
            .unwrap();
        match block_on(run).0 {
            Err(e @ Error::OutOfBounds { .. }) => assert!(
                e.to_string()
                    .contains("index 1073741824 is out of bounds for buffer `x` of length 16"),
                "{}: {e}",
                device.spec()
            ),
            r => panic!("{}: expected OutOfBounds, got {r:?}", device.spec()),
        }
    }
}
