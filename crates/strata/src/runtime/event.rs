//! Events: the completion of one queued command, with its status and profiling times; and
//! [`Wait`], what every handle of work that completes later (an event, a launch, a read, a
//! pattern's vector) has in common.
//!
//! Each handle is also a [`Future`]: an event keeps the [`Waker`]s of the tasks awaiting it
//! and wakes them where it completes (the backend's thread that completes the command, or
//! the caller of a blocking command), so awaiting costs no thread and no polling, and works
//! under any executor.

use crate::error::{Error, Result};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

#[derive(Debug)]
enum Status {
    Queued,
    Running,
    Done(Result<()>),
}

#[derive(Debug)]
struct State {
    status: Status,
    start: Option<Instant>,
    end: Option<Instant>,
    /// The tasks awaiting the event (its futures' wakers), woken when it completes.
    wakers: Vec<Waker>,
    /// Threads asleep on the condition variable: the completion wakes them only if there
    /// are any (a wake-up is a system call).
    sleepers: u32,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<State>,
    cv: Condvar,
    queued: Instant,
    /// Set when a wait has returned this event's error to the user (see
    /// [`Event::observed`]).
    observed: std::sync::atomic::AtomicBool,
}

/// Work that completes later: a command's [`Event`], a kernel launch ([`Run`](crate::Run)), a
/// read ([`PendingRead`](crate::PendingRead)), a vector a pattern computes
/// ([`AsyncVec`](crate::patterns::AsyncVec)). Each keeps its typed result ([`Wait::Output`]);
/// the trait gives them the same three ways to wait, for code that takes any of them. (Each
/// type also has these as its own methods, so calling them needs no import.)
///
/// Implemented for `&Event` and `&Run` (waiting does not use them up, and a launch's gathers
/// are read after its wait), `PendingRead<T>` and `AsyncVec<T>` (waiting gives their data).
///
/// The same handles are [`Future`]s, for async code: `.await` gives what [`Wait::wait`] gives
/// (`Result<Self::Output>`, the same errors), without blocking a thread. `Event` and `Run`
/// are futures themselves and by reference (`(&run).await`, then read its gathers);
/// `PendingRead` and `AsyncVec` by value. The completion of the command wakes the task;
/// nothing in strata depends on a particular async runtime.
///
/// ```
/// use strata::prelude::*;
/// # fn main() -> strata::Result<()> {
/// let queue = Queue::new(&Device::from_spec("cpu")?)?;
/// let x = Buffer::from_slice(&queue, &[1u32, 2, 3])?;
/// let read = queue.enqueue_read(&x, .., &[])?;
/// // Any executor runs it; this one blocks the thread until the read completes.
/// let data = block_on(read)?;
/// assert_eq!(data, vec![1, 2, 3]);
/// # Ok(())
/// # }
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     struct Unpark(std::thread::Thread);
/// #     impl std::task::Wake for Unpark {
/// #         fn wake(self: std::sync::Arc<Self>) { self.0.unpark() }
/// #     }
/// #     let waker = std::sync::Arc::new(Unpark(std::thread::current())).into();
/// #     let mut cx = std::task::Context::from_waker(&waker);
/// #     let mut f = std::pin::pin!(f);
/// #     loop {
/// #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
/// #         std::thread::park();
/// #     }
/// # }
/// ```
pub trait Wait {
    /// What the finished work gives: `()` for a command or a launch, the data for a read or
    /// a pattern's vector.
    type Output;

    /// Blocks until the work has completed; its result, or its error (a failed command, a
    /// kernel's fault, the failure of a command it depended on).
    fn wait(self) -> Result<Self::Output>;

    /// Blocks until the work has completed, at most `timeout`: `Ok(())` when it completed
    /// successfully (then [`Wait::wait`] returns at once), its error when it failed, and
    /// [`Error::TimedOut`] when it is still running (it keeps running).
    fn wait_timeout(&self, timeout: Duration) -> Result<()>;

    /// Whether the work has completed (successfully or not), without blocking.
    fn is_complete(&self) -> bool;
}

impl Wait for &Event {
    type Output = ();
    fn wait(self) -> Result<()> {
        Event::wait(self)
    }
    fn wait_timeout(&self, timeout: Duration) -> Result<()> {
        Event::wait_timeout(self, timeout)
    }
    fn is_complete(&self) -> bool {
        Event::is_complete(self)
    }
}

/// The completion of one command. Cheap to clone; every clone observes the same command.
#[derive(Clone, Debug)]
pub struct Event {
    inner: Arc<Inner>,
}

/// Profiling times of a completed command. `submitted`, `start` and `end` are measured from one
/// process-wide epoch (the first event created), like OpenCL's `CL_PROFILING_COMMAND_*`
/// timestamps, so times of different events can be compared.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Profile {
    /// When the command was enqueued.
    pub submitted: Duration,
    /// When it started running.
    pub start: Duration,
    /// When it ended.
    pub end: Duration,
    /// From enqueue to start.
    pub queued: Duration,
    /// From start to end: the command's own run time.
    pub duration: Duration,
}

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl Event {
    pub(crate) fn new() -> Event {
        epoch();
        Event {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    status: Status::Queued,
                    start: None,
                    end: None,
                    wakers: Vec::new(),
                    sleepers: 0,
                }),
                cv: Condvar::new(),
                queued: Instant::now(),
                observed: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// An event that is already complete.
    pub fn completed() -> Event {
        let e = Event::new();
        e.set_running();
        e.complete(Ok(()));
        e
    }

    pub(crate) fn set_running(&self) {
        let mut s = self.inner.state.lock().unwrap();
        s.status = Status::Running;
        s.start = Some(Instant::now());
    }

    pub(crate) fn complete(&self, r: Result<()>) {
        self.complete_after(r, None);
    }

    /// Completes the event as observed now by the host, starting no earlier than
    /// `not_before` (the end of the previous command of an in-order queue whose commands are
    /// issued before their predecessors end); returns its end.
    pub(crate) fn complete_after(&self, r: Result<()>, not_before: Option<Instant>) -> Instant {
        let mut s = self.inner.state.lock().unwrap();
        let end = Instant::now();
        let start = s.start.unwrap_or(end);
        s.start = Some(not_before.map_or(start, |t| start.max(t).min(end)));
        s.end = Some(end);
        s.status = Status::Done(r);
        self.finished(s);
        end
    }

    /// Wakes the threads and tasks waiting for the event, which `s` has just completed.
    fn finished(&self, mut s: MutexGuard<'_, State>) {
        let wakers = std::mem::take(&mut s.wakers);
        let sleepers = s.sleepers;
        drop(s);
        if sleepers > 0 {
            self.inner.cv.notify_all();
        }
        for w in wakers {
            w.wake();
        }
    }

    /// The event's outcome if it has completed (as [`Event::wait`] returns it); otherwise
    /// keeps `cx`'s waker, to wake it when the event completes.
    pub(crate) fn poll_wait(&self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let mut s = self.inner.state.lock().unwrap();
        if let Status::Done(r) = &s.status {
            let r = r.clone();
            drop(s);
            if r.is_err() {
                self.inner
                    .observed
                    .store(true, std::sync::atomic::Ordering::Release);
            }
            return Poll::Ready(r);
        }
        if !s.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            s.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Completes the event with the command's run time as the device measured it (a GPU
    /// backend's profiling counters): the end is now and the start `device_time` earlier (but
    /// not before [`Event::set_running`]), so [`Profile::duration`] is the device's time rather
    /// than the host's view of it, on the same clock as every other event.
    pub(crate) fn complete_measured(&self, r: Result<()>, device_time: Duration) {
        let mut s = self.inner.state.lock().unwrap();
        let end = Instant::now();
        let measured = end.checked_sub(device_time).unwrap_or(end);
        s.start = Some(match s.start {
            Some(running) if running > measured => running,
            _ => measured.max(self.inner.queued),
        });
        s.end = Some(end);
        s.status = Status::Done(r);
        self.finished(s);
    }

    /// Blocks until the command has completed; returns its error if it failed.
    pub fn wait(&self) -> Result<()> {
        let r = self.wait_unobserved();
        if r.is_err() {
            self.inner
                .observed
                .store(true, std::sync::atomic::Ordering::Release);
        }
        r
    }

    /// Like [`Event::wait`], giving up after `timeout`: then it fails with
    /// [`Error::TimedOut`] and the command keeps running.
    pub fn wait_timeout(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut s = self.inner.state.lock().unwrap();
        loop {
            if let Status::Done(r) = &s.status {
                let r = r.clone();
                if r.is_err() {
                    self.inner
                        .observed
                        .store(true, std::sync::atomic::Ordering::Release);
                }
                return r;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::TimedOut {
                    what: "the command".into(),
                    waited: timeout,
                });
            }
            s.sleepers += 1;
            s = self.inner.cv.wait_timeout(s, left).unwrap().0;
            s.sleepers -= 1;
        }
    }

    /// Waits like [`Event::wait`] without counting as the user's observation of a failure
    /// (for strata's own waits).
    ///
    /// It sleeps at once: spinning first (a few, or a few tens of, microseconds) made an
    /// empty launch on `cpu` two to three times slower on a loaded 2-core machine, the spinning
    /// caller taking the core the queue's thread needed (docs/BENCHMARKS.md).
    pub(crate) fn wait_unobserved(&self) -> Result<()> {
        let mut s = self.inner.state.lock().unwrap();
        loop {
            if let Status::Done(r) = &s.status {
                return r.clone();
            }
            s.sleepers += 1;
            s = self.inner.cv.wait(s).unwrap();
            s.sleepers -= 1;
        }
    }

    /// Whether a wait ([`Event::wait`] and what calls it) has returned this event's error to
    /// the user: a queue stops failing later commands for a failure once it is observed.
    pub(crate) fn observed(&self) -> bool {
        self.inner
            .observed
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Waits for every event; returns the first error.
    pub fn wait_all(events: &[Event]) -> Result<()> {
        let mut first = Ok(());
        for e in events {
            let r = e.wait();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Whether the command has completed (successfully or not).
    pub fn is_complete(&self) -> bool {
        matches!(self.inner.state.lock().unwrap().status, Status::Done(_))
    }

    /// Profiling times, once the command has completed (`None` before).
    pub fn profile(&self) -> Option<Profile> {
        let s = self.inner.state.lock().unwrap();
        match (&s.status, s.start, s.end) {
            (Status::Done(_), Some(start), Some(end)) => Some(Profile {
                submitted: self.inner.queued.saturating_duration_since(epoch()),
                start: start.saturating_duration_since(epoch()),
                end: end.saturating_duration_since(epoch()),
                queued: start.saturating_duration_since(self.inner.queued),
                duration: end.saturating_duration_since(start),
            }),
            _ => None,
        }
    }

    /// The command's run time (start to end), waiting for it to complete.
    pub fn duration(&self) -> Result<Duration> {
        self.wait()?;
        Ok(self.profile().map_or(Duration::ZERO, |p| p.duration))
    }

    /// Waits for the events a command depends on; a failed dependency fails the command.
    pub(crate) fn wait_dependencies(wait: &[Event]) -> Result<()> {
        let mut first = Ok(());
        for e in wait {
            let r = e.wait_unobserved();
            if first.is_ok() {
                first = r;
            }
        }
        first.map_err(|e| match e {
            Error::DependencyFailed(m) => Error::DependencyFailed(m),
            other => Error::DependencyFailed(other.to_string()),
        })
    }
}

/// Completes when the command has completed: `Ok(())`, or its error, as [`Event::wait`].
impl Future for Event {
    type Output = Result<()>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.poll_wait(cx)
    }
}

/// Completes when the command has completed, as [`Event::wait`] (the event stays usable).
impl Future for &Event {
    type Output = Result<()>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.poll_wait(cx)
    }
}
