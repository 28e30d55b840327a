//! A queue driven by a worker thread, shared by the backends: commands run one at a time in
//! submission order, each after the events of its wait list (of any backend) have completed. A
//! failed dependency fails the command without running it.
//!
//! A backend whose device runs commands asynchronously (CUDA streams) uses
//! [`WorkerQueue::spawn_pipelined`]: the worker only *issues* each command and hands a
//! [`Finish`] to a second thread, which waits for the device and completes the events in
//! submission order. Issuing the next command then does not wait for the previous one.

use super::{Command, Event, QueueBackend};
use crate::error::{Error, Result};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

type Job = (Command, Vec<Event>, Event);

/// What completes an issued command: waits for the device, then returns the run time it
/// measured (if any). It owns whatever the command needs alive until then (memory, host data).
pub(crate) type Finish = Box<dyn FnOnce() -> Result<Option<Duration>> + Send>;

/// An in-order queue whose commands a worker thread executes.
pub(crate) struct WorkerQueue {
    tx: Mutex<mpsc::Sender<Job>>,
    backend: &'static str,
}

impl WorkerQueue {
    /// Starts the worker. `run` executes one command and returns the run time the device
    /// measured, if it measures one (the event's own clock is used otherwise).
    pub(crate) fn spawn(
        backend: &'static str,
        mut run: impl FnMut(Command) -> Result<Option<Duration>> + Send + 'static,
    ) -> Result<WorkerQueue> {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(format!("strata-{backend}-queue"))
            .spawn(move || {
                for (cmd, wait, event) in rx {
                    if let Err(e) = Event::wait_dependencies(&wait) {
                        event.complete(Err(e));
                        continue;
                    }
                    event.set_running();
                    match run(cmd) {
                        Ok(Some(device_time)) => event.complete_measured(Ok(()), device_time),
                        Ok(None) => event.complete(Ok(())),
                        Err(e) => event.complete(Err(e)),
                    }
                }
            })
            .map_err(|e| Error::Backend {
                backend,
                message: format!("cannot start the queue thread: {e}"),
            })?;
        Ok(WorkerQueue {
            tx: Mutex::new(tx),
            backend,
        })
    }
}

impl WorkerQueue {
    /// Starts a pipelined queue: `issue` hands one command to the device without waiting for
    /// it and returns its [`Finish`]; a completion thread calls the finishes in order. Both
    /// threads first run `init` (to bind a device context, say).
    pub(crate) fn spawn_pipelined(
        backend: &'static str,
        init: impl Fn() -> Result<()> + Send + Sync + 'static,
        mut issue: impl FnMut(Command) -> Result<Finish> + Send + 'static,
    ) -> Result<WorkerQueue> {
        let start_failed = |e: std::io::Error| Error::Backend {
            backend,
            message: format!("cannot start the queue thread: {e}"),
        };
        let init = std::sync::Arc::new(init);
        let (done_tx, done_rx) = mpsc::channel::<(Event, Result<Finish>)>();
        let init_done = init.clone();
        std::thread::Builder::new()
            .name(format!("strata-{backend}-done"))
            .spawn(move || {
                let ready = init_done();
                for (event, issued) in done_rx {
                    let r = match &ready {
                        Err(e) => Err(e.clone()),
                        Ok(()) => issued.and_then(|finish| finish()),
                    };
                    match r {
                        Ok(Some(device_time)) => event.complete_measured(Ok(()), device_time),
                        Ok(None) => event.complete(Ok(())),
                        Err(e) => event.complete(Err(e)),
                    }
                }
            })
            .map_err(start_failed)?;
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(format!("strata-{backend}-queue"))
            .spawn(move || {
                let ready = init();
                for (cmd, wait, event) in rx {
                    let issued = ready
                        .clone()
                        .and_then(|()| Event::wait_dependencies(&wait))
                        .and_then(|()| {
                            event.set_running();
                            issue(cmd)
                        });
                    if done_tx.send((event.clone(), issued)).is_err() {
                        event.complete(Err(Error::Backend {
                            backend,
                            message: "the queue's completion thread has stopped".into(),
                        }));
                    }
                }
            })
            .map_err(start_failed)?;
        Ok(WorkerQueue {
            tx: Mutex::new(tx),
            backend,
        })
    }
}

impl QueueBackend for WorkerQueue {
    fn submit(&self, cmd: Command, wait: Vec<Event>) -> Event {
        let e = Event::new();
        if self
            .tx
            .lock()
            .unwrap()
            .send((cmd, wait, e.clone()))
            .is_err()
        {
            e.complete(Err(Error::Backend {
                backend: self.backend,
                message: "the queue thread has stopped".into(),
            }));
        }
        e
    }
}
