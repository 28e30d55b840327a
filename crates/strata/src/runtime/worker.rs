//! A queue driven by a worker thread, shared by the backends: commands run one at a time in
//! submission order, each after the events of its wait list (of any backend) have completed. A
//! failed dependency fails the command without running it.

use super::{Command, Event, QueueBackend};
use crate::error::{Error, Result};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

type Job = (Command, Vec<Event>, Event);

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
