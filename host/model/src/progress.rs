//! The one progress type every long operation reports through: how far it has
//! come, what it is doing, and whether it should go on.
//!
//! Invariants: reporting never blocks (the sink is a plain function the edge
//! gives, usually a channel's send); a stage's reports stay inside the share of
//! the whole it was given, so percents from nested stages only ever grow; every
//! report and [`Progress::check`] answer [`Cancelled`] once the operation's
//! token is cancelled, which is how work stops at its next step.

use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

/// How far an operation has come: `done` of `total` units (percent, tiles, bytes), and what it is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressUpdate {
    /// Units done.
    pub done: u64,
    /// Units in all.
    pub total: u64,
    /// What the operation is doing now.
    pub message: String,
}

/// The operation was cancelled: whoever started it no longer wants it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

/// Where a long operation reports, and how it learns it was cancelled. Cheap to clone; a clone
/// shares the sink and the cancellation.
#[derive(Clone)]
pub struct Progress {
    sink: Option<Arc<dyn Fn(ProgressUpdate) + Send + Sync>>,
    cancel: CancellationToken,
    /// This stage's share of the whole, in percent.
    from: f64,
    to: f64,
    /// For a part of a count: where it starts in the whole and the whole's units (see [`Progress::counted`]).
    count: Option<(u64, u64)>,
}

impl fmt::Debug for Progress {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("Progress").field("heard", &self.sink.is_some()).field("from", &self.from).field("to", &self.to).finish()
    }
}

impl Progress {
    /// Reports go to `sink`; the operation stops at its next step once `cancel` is cancelled.
    pub fn new(sink: impl Fn(ProgressUpdate) + Send + Sync + 'static, cancel: CancellationToken) -> Progress {
        Progress { sink: Some(Arc::new(sink)), cancel, from: 0.0, to: 100.0, count: None }
    }

    /// Nobody listens, but the operation stops once `cancel` is cancelled.
    pub fn unheard(cancel: CancellationToken) -> Progress {
        Progress { sink: None, cancel, from: 0.0, to: 100.0, count: None }
    }

    /// Nobody listens and nothing cancels: for work whose caller only wants the result.
    pub fn none() -> Progress {
        Progress::unheard(CancellationToken::new())
    }

    /// Whether the operation was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// `Err(Cancelled)` once the operation was cancelled: the check between two steps.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() { Err(Cancelled) } else { Ok(()) }
    }

    /// The token that cancels the operation (for work that awaits it, such as a download).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Reports `fraction` (0 to 1) of this stage done, as a percent of the whole; then [`Progress::check`].
    pub fn fraction(&self, fraction: f64, message: impl Into<String>) -> Result<(), Cancelled> {
        let percent = self.from + fraction.clamp(0.0, 1.0) * (self.to - self.from);
        self.send(percent.floor() as u64, 100, message);
        self.check()
    }

    /// Reports `done` of `total` units as they are (tiles read, bytes downloaded), for an operation
    /// that counts in its own units rather than in percent; then [`Progress::check`]. In a part of a
    /// count ([`Progress::counted`]) they are that part's units, reported as the whole's; in a stage
    /// of a percent ([`Progress::stage`]) they are its fraction, so the whole's percents still grow.
    pub fn units(&self, done: u64, total: u64, message: impl Into<String>) -> Result<(), Cancelled> {
        match self.count {
            Some((start, whole)) => self.send(start + done.min(total), whole, message),
            None if (self.from, self.to) != (0.0, 100.0) => return self.fraction(done as f64 / total.max(1) as f64, message),
            None => self.send(done, total, message),
        }
        self.check()
    }

    /// A part of a count that starts at `start` of `whole` units (one download of several): its own
    /// units are reported as `start + done` of `whole`.
    pub fn counted(&self, start: u64, whole: u64) -> Progress {
        Progress { count: Some((start, whole)), ..self.clone() }
    }

    /// The part of this stage from fraction `from` to fraction `to` of it, as a progress of its own
    /// (its fraction 0 is this stage's `from`, its 1 this stage's `to`).
    pub fn stage(&self, from: f64, to: f64) -> Progress {
        let span = self.to - self.from;
        let (from, to) = (from.clamp(0.0, 1.0), to.clamp(0.0, 1.0));
        Progress { sink: self.sink.clone(), cancel: self.cancel.clone(), from: self.from + from * span, to: self.from + to * span, count: None }
    }

    fn send(&self, done: u64, total: u64, message: impl Into<String>) {
        if let Some(sink) = &self.sink {
            sink(ProgressUpdate { done, total, message: message.into() });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn heard() -> (Progress, Arc<Mutex<Vec<ProgressUpdate>>>, CancellationToken) {
        let updates = Arc::new(Mutex::new(Vec::new()));
        let cancel = CancellationToken::new();
        let into = Arc::clone(&updates);
        (Progress::new(move |update| into.lock().unwrap().push(update), cancel.clone()), updates, cancel)
    }

    #[test]
    fn a_stage_reports_inside_its_share_of_the_whole() {
        let (progress, updates, _) = heard();
        let second_half = progress.stage(0.5, 1.0);
        second_half.fraction(0.0, "start").unwrap();
        second_half.stage(0.5, 1.0).fraction(0.5, "three quarters of the second half").unwrap();
        second_half.fraction(2.0, "past the end is the end").unwrap();
        let done: Vec<(u64, u64)> = updates.lock().unwrap().iter().map(|update| (update.done, update.total)).collect();
        assert_eq!(done, [(50, 100), (87, 100), (100, 100)]);
    }

    #[test]
    fn units_pass_through_and_cancellation_answers_every_report() {
        let (progress, updates, cancel) = heard();
        progress.units(3, 7, "tile 4 of 7").unwrap();
        assert_eq!(updates.lock().unwrap()[0], ProgressUpdate { done: 3, total: 7, message: "tile 4 of 7".into() });
        progress.counted(100, 250).units(40, 150, "the second download").unwrap();
        progress.stage(0.5, 1.0).units(1, 4, "a stage counts in its share of the percent").unwrap();
        assert_eq!(updates.lock().unwrap()[2], ProgressUpdate { done: 62, total: 100, message: "a stage counts in its share of the percent".into() });
        assert_eq!(updates.lock().unwrap()[1], ProgressUpdate { done: 140, total: 250, message: "the second download".into() });
        cancel.cancel();
        assert_eq!(progress.check(), Err(Cancelled));
        assert_eq!(progress.stage(0.0, 0.5).fraction(0.1, "after the cancel"), Err(Cancelled));
        assert!(Progress::none().check().is_ok() && Progress::none().fraction(1.0, "unheard").is_ok());
    }
}
