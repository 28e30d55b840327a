//! Progress of long commands (`strata check`, `difftest`, `bench`): a bar with position, rate
//! and ETA on stderr when stderr is a terminal; nothing extra otherwise, so logs keep only the
//! commands' plain result lines (one per case, per batch of programs, per benchmark), and
//! nothing either with `strata -q` ([`set_quiet`]).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether bars are left out even on a terminal (`strata -q`).
static QUIET: AtomicBool = AtomicBool::new(false);

/// Leaves out every progress bar made after this call (`quiet`), or draws them again.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// A progress bar, or nothing when stderr is not a terminal (or with `-q`).
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Progress over `total` steps of `what` (`cases`, `programs`, `benchmarks`).
    pub fn new(what: &str, total: u64) -> Progress {
        if QUIET.load(Ordering::Relaxed) || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let template =
            format!("{{bar:40}} {{pos}}/{{len}} {what} [{{elapsed}}, ETA {{eta}}] {{msg}}");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress { bar: Some(bar) }
    }

    /// Whether a bar is drawn.
    pub fn is_drawn(&self) -> bool {
        self.bar.is_some()
    }

    /// Sets the position to `done` steps, with a short message after the bar.
    pub fn set(&self, done: u64, msg: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_message(msg.into());
        }
    }

    /// Runs `f` (which prints) with the bar cleared, then draws the bar again below.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
