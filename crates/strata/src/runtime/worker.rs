//! A queue driven by a worker thread, shared by the backends: commands run one at a time in
//! submission order, each after the events of its wait list (of any backend) have completed. A
//! failed dependency fails the command without running it.
//!
//! A backend whose device runs commands asynchronously (CUDA streams) uses
//! [`WorkerQueue::spawn_pipelined`]: the worker only *issues* each command and hands a
//! [`Finish`] to a second thread, which waits for the device and completes the events in
//! submission order. Issuing the next command then does not wait for the previous one. A
//! synchronous backend ([`WorkerQueue::spawn`], the CPU's) has no completion thread: its
//! worker completes each command's event as soon as it has run it, one thread hand-over less
//! per command.
//!
//! Rules every backend gets from here: a blocking command on an idle queue runs on the
//! caller's thread (see [`WorkerQueue`]); an event timed by the host starts no earlier than
//! the end of the command before it; a failed command fails the later commands of its queue
//! until the failure is observed ([`Failure`]); a panic while issuing or finishing a command
//! (a stub's CPU body, say) fails that command with [`Error::Panicked`] and the queue's
//! threads live on.

use super::{Command, Event, QueueBackend};
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

type Job = (Command, Vec<Event>, Event);

/// An issued command (or the error of issuing it) on its way to the completion thread.
type Issued = (Event, Result<Finish>);

/// What completes an issued command: waits for the device, then returns the run time it
/// measured (if any). It owns whatever the command needs alive until then (memory, host data).
pub(crate) type Finish = Box<dyn FnOnce() -> Result<Option<Duration>> + Send>;

/// Issues one command (see [`WorkerQueue::spawn_pipelined`]); shared by the worker thread and
/// callers that run a command inline.
type Issue = Arc<Mutex<Box<dyn FnMut(Command) -> Result<Finish> + Send>>>;

/// An in-order queue whose commands a worker thread executes.
///
/// **Inline fast path.** A blocking command ([`QueueBackend::run_now`]) submitted while the
/// queue is idle (nothing submitted is still incomplete, its wait list is complete) runs on the
/// caller's thread instead: no hand-over to the worker and back, so a blocking launch costs
/// what the driver call costs (on CUDA, three thread wake-ups less). The submission lock is
/// held meanwhile, so the queue stays in order.
///
/// **Inline issue** (pipelined queues whose issuing does not wait for the device, CUDA's): a
/// launch, copy or fill submitted when the worker has nothing left to issue and the command's
/// wait list is complete is issued on the caller's thread, and only its [`Finish`] goes to the
/// completion thread. The submission lock orders it after everything issued before; a
/// non-blocking launch then costs the driver call and no hand-over to the worker. A blocking
/// command in the same situation is also finished on the caller's thread.
pub(crate) struct WorkerQueue {
    tx: Mutex<mpsc::Sender<Job>>,
    backend: &'static str,
    /// Commands submitted and not yet completed.
    in_flight: Arc<AtomicUsize>,
    /// Commands handed to the worker that it has not issued yet (and sent on to the
    /// completion thread).
    queued: Arc<AtomicUsize>,
    /// The completion thread's channel, for commands issued inline; `None` where commands are
    /// not issued inline.
    done: Option<Mutex<mpsc::Sender<Issued>>>,
    issue: Issue,
    /// Prepares a thread to issue commands (binds a device context).
    init: Arc<dyn Fn() -> Result<()> + Send + Sync>,
    /// The backend's own queue handle (`cl_command_queue`, `CUstream`), as an address; 0 where
    /// there is none (the CPU backend).
    native: usize,
    /// The unobserved failure of a command, which fails the commands after it.
    failure: Arc<Failure>,
}

/// A queue's unobserved failure: the first failed command's error, and the events of that
/// command and of the commands failed because of it. In an in-order queue every command
/// depends on those before it, so while a failure is unobserved every later command fails
/// with [`Error::DependencyFailed`] (after running: a command already on the device is not
/// recalled). A wait that returns one of these errors to the user, or
/// [`crate::Queue::finish`], observes it and the queue runs normally again.
#[derive(Default)]
pub(crate) struct Failure(Mutex<Option<(Error, Vec<Event>)>>);

impl Failure {
    /// The unobserved failure, if any (an observed one is dropped here).
    fn current(slot: &mut Option<(Error, Vec<Event>)>) -> Option<&mut (Error, Vec<Event>)> {
        if slot
            .as_ref()
            .is_some_and(|(_, events)| events.iter().any(Event::observed))
        {
            *slot = None;
        }
        slot.as_mut()
    }

    /// The outcome `r` of `event`'s command, failed if an earlier failure is unobserved; a
    /// failure with none before becomes the queue's failure.
    fn apply<T>(&self, event: &Event, r: Result<T>) -> Result<T> {
        let mut slot = self.0.lock().unwrap();
        match (Self::current(&mut slot), r) {
            (Some((first, events)), r) => {
                events.push(event.clone());
                let why = format!("an earlier command on this queue failed: {first}");
                r.and(Err(Error::DependencyFailed(why)))
            }
            (None, Err(e)) => {
                *slot = Some((e.clone(), vec![event.clone()]));
                Err(e)
            }
            (None, Ok(v)) => Ok(v),
        }
    }

    /// Takes the unobserved failure, which counts as observing it.
    pub(crate) fn take(&self) -> Option<Error> {
        let mut slot = self.0.lock().unwrap();
        Self::current(&mut slot)?;
        slot.take().map(|(e, _)| e)
    }
}

/// Runs `f`, a command's issue or finish, turning a panic into [`Error::Panicked`]: a panic
/// must neither kill a queue's thread (its later commands would never complete) nor unwind
/// into the caller of a blocking operation.
fn caught<T>(backend: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(Error::Panicked {
            backend,
            message: crate::error::panic_message(&*p).to_string(),
        })
    })
}

/// Issues `cmd` with `issue` (see [`caught`]). A panic while the lock was held leaves the
/// issuing state as the command left it; later commands use it anyway.
fn issue_caught(backend: &'static str, issue: &Issue, cmd: Command) -> Result<Finish> {
    let mut issue = issue.lock().unwrap_or_else(|e| e.into_inner());
    caught(backend, || issue(cmd))
}

/// Completes `event` with the outcome of a finished command that started no earlier than
/// `not_before` (the previous command's end), after the queue's `failure` has had its say;
/// returns its end.
fn complete(
    failure: &Failure,
    event: &Event,
    r: Result<Option<Duration>>,
    not_before: Option<Instant>,
) -> Instant {
    match failure.apply(event, r) {
        Ok(Some(device_time)) => {
            event.complete_measured(Ok(()), device_time);
            Instant::now()
        }
        Ok(None) => event.complete_after(Ok(()), not_before),
        Err(e) => event.complete_after(Err(e), not_before),
    }
}

impl WorkerQueue {
    /// The same queue, recording the backend's own handle of it ([`QueueBackend::native`]).
    #[cfg(any(feature = "opencl", feature = "cuda", feature = "vulkan"))]
    pub(crate) fn with_native(mut self, handle: *mut std::ffi::c_void) -> WorkerQueue {
        self.native = handle as usize;
        self
    }

    /// Starts the worker. `run` executes one command and returns the run time the device
    /// measured, if it measures one (the event's own clock is used otherwise).
    pub(crate) fn spawn(
        backend: &'static str,
        mut run: impl FnMut(Command) -> Result<Option<Duration>> + Send + 'static,
    ) -> Result<WorkerQueue> {
        // A synchronous backend is a pipelined one whose finish has nothing left to wait for
        // (and whose commands are not issued inline: issuing is running them).
        Self::start(
            backend,
            || Ok(()),
            move |cmd| {
                Ok(match run(cmd) {
                    // Nothing to keep: a closure of no size, which boxing does not allocate.
                    Ok(None) => Box::new(|| Ok(None)) as Finish,
                    r => Box::new(move || r) as Finish,
                })
            },
            false,
        )
    }

    /// Starts a pipelined queue: `issue` hands one command to the device without waiting for
    /// it and returns its [`Finish`]; a completion thread calls the finishes in order. Both
    /// threads first run `init` (to bind a device context, say), as does a caller that runs a
    /// command inline.
    /// Launches, copies and fills are issued inline when the worker is idle (see the type's
    /// docs): `issue` must not wait for the device.
    #[cfg(feature = "cuda")]
    pub(crate) fn spawn_pipelined(
        backend: &'static str,
        init: impl Fn() -> Result<()> + Send + Sync + 'static,
        issue: impl FnMut(Command) -> Result<Finish> + Send + 'static,
    ) -> Result<WorkerQueue> {
        Self::start(backend, init, issue, true)
    }

    fn start(
        backend: &'static str,
        init: impl Fn() -> Result<()> + Send + Sync + 'static,
        issue: impl FnMut(Command) -> Result<Finish> + Send + 'static,
        inline: bool,
    ) -> Result<WorkerQueue> {
        let start_failed = |e: std::io::Error| Error::Backend {
            backend,
            message: format!("cannot start the queue thread: {e}"),
        };
        let init: Arc<dyn Fn() -> Result<()> + Send + Sync> = Arc::new(init);
        let issue: Issue = Arc::new(Mutex::new(Box::new(issue)));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let queued = Arc::new(AtomicUsize::new(0));
        let (done_tx, done_rx) = mpsc::channel::<Issued>();
        let done = inline.then(|| Mutex::new(done_tx.clone()));
        let failure = Arc::new(Failure::default());
        let failure_done = failure.clone();
        let (init_done, in_flight_done) = (init.clone(), in_flight.clone());
        // The completion loop: the second thread of a pipelined queue; on a synchronous one
        // the worker itself completes each command as it runs it (its finish has nothing left
        // to wait for), a hand-over less per command.
        let mut finish_one = {
            let mut last_end = None;
            move |ready: &Result<()>, event: Event, issued: Result<Finish>| {
                let r = match ready {
                    Err(e) => Err(e.clone()),
                    Ok(()) => issued.and_then(|finish| caught(backend, finish)),
                };
                last_end = Some(complete(&failure_done, &event, r, last_end));
                in_flight_done.fetch_sub(1, Ordering::AcqRel);
            }
        };
        let mut finish_here = None;
        if inline {
            std::thread::Builder::new()
                .name(format!("strata-{backend}-done"))
                .spawn(move || {
                    let ready = init_done();
                    for (event, issued) in done_rx {
                        finish_one(&ready, event, issued);
                    }
                })
                .map_err(start_failed)?;
        } else {
            drop(done_rx);
            finish_here = Some(finish_one);
        }
        let (tx, rx) = mpsc::channel::<Job>();
        let (init_worker, issue_worker, queued_worker) =
            (init.clone(), issue.clone(), queued.clone());
        std::thread::Builder::new()
            .name(format!("strata-{backend}-queue"))
            .spawn(move || {
                let ready = init_worker();
                for (cmd, wait, event) in rx {
                    let issued = ready
                        .clone()
                        .and_then(|()| Event::wait_dependencies(&wait))
                        .and_then(|()| {
                            event.set_running();
                            issue_caught(backend, &issue_worker, cmd)
                        });
                    if let Some(finish) = &mut finish_here {
                        finish(&ready, event, issued);
                    } else if let Err(mpsc::SendError((event, _))) = done_tx.send((event, issued)) {
                        event.complete(Err(Error::Backend {
                            backend,
                            message: "the queue's completion thread has stopped".into(),
                        }));
                    }
                    // Only now: a caller that sees no queued job may issue after this one.
                    queued_worker.fetch_sub(1, Ordering::AcqRel);
                }
            })
            .map_err(start_failed)?;
        Ok(WorkerQueue {
            tx: Mutex::new(tx),
            backend,
            in_flight,
            queued,
            done,
            issue,
            init,
            native: 0,
            failure,
        })
    }

    /// Hands `cmd` to the worker; the caller holds the submission lock `tx`.
    fn send(&self, tx: &mpsc::Sender<Job>, cmd: Command, wait: Vec<Event>, e: &Event) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.queued.fetch_add(1, Ordering::AcqRel);
        if tx.send((cmd, wait, e.clone())).is_err() {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            self.queued.fetch_sub(1, Ordering::AcqRel);
            e.complete(Err(Error::Backend {
                backend: self.backend,
                message: "the queue thread has stopped".into(),
            }));
        }
    }

    /// Whether `cmd`, with wait list `wait`, may be issued on the caller's thread now; the
    /// caller holds the submission lock. Reads and writes only when `blocking`: a copy from or
    /// to pageable host memory can wait for the device.
    fn can_issue_inline(&self, cmd: &Command, wait: &[Event], blocking: bool) -> bool {
        self.done.is_some()
            && (blocking
                || matches!(
                    cmd,
                    Command::Launch { .. } | Command::Fill { .. } | Command::Copy { .. }
                ))
            && self.queued.load(Ordering::Acquire) == 0
            && wait.iter().all(Event::is_complete)
    }

    /// Issues `cmd` on the caller's thread (see [`WorkerQueue::can_issue_inline`]).
    fn issue_inline(&self, cmd: Command, wait: &[Event], e: &Event) -> Result<Finish> {
        (self.init)()
            .and_then(|()| Event::wait_dependencies(wait))
            .and_then(|()| {
                e.set_running();
                issue_caught(self.backend, &self.issue, cmd)
            })
    }
}

impl QueueBackend for WorkerQueue {
    fn native(&self) -> *mut std::ffi::c_void {
        self.native as *mut std::ffi::c_void
    }
    fn take_failure(&self) -> Option<Error> {
        self.failure.take()
    }

    fn submit(&self, cmd: Command, wait: Vec<Event>) -> Event {
        let e = Event::new();
        let tx = self.tx.lock().unwrap();
        if let (true, Some(done)) = (self.can_issue_inline(&cmd, &wait, false), &self.done) {
            let issued = self.issue_inline(cmd, &wait, &e);
            self.in_flight.fetch_add(1, Ordering::AcqRel);
            if let Err(mpsc::SendError((event, _))) = done.lock().unwrap().send((e.clone(), issued))
            {
                self.in_flight.fetch_sub(1, Ordering::AcqRel);
                event.complete(Err(Error::Backend {
                    backend: self.backend,
                    message: "the queue's completion thread has stopped".into(),
                }));
            }
            return e;
        }
        self.send(&tx, cmd, wait, &e);
        e
    }

    fn run_now(&self, cmd: Command, wait: Vec<Event>) -> Event {
        let e = Event::new();
        let tx = self.tx.lock().unwrap();
        let idle =
            self.in_flight.load(Ordering::Acquire) == 0 && wait.iter().all(Event::is_complete);
        if !(idle || self.can_issue_inline(&cmd, &wait, true)) {
            self.send(&tx, cmd, wait, &e);
            drop(tx);
            let _ = e.wait_unobserved();
            return e;
        }
        // Idle (nothing of this queue on the device), or every earlier command issued: this one
        // is issued and finished here, `tx` keeping the queue in order meanwhile; its finish
        // waits for the earlier commands on the device too.
        let r = self
            .issue_inline(cmd, &wait, &e)
            .and_then(|finish| caught(self.backend, finish));
        // The completion thread has the earlier commands' outcomes (a failure among them fails
        // this one): the device is done with them, so it is about to complete them.
        while self.in_flight.load(Ordering::Acquire) != 0 {
            std::thread::yield_now();
        }
        complete(&self.failure, &e, r, None);
        drop(tx);
        e
    }
}
