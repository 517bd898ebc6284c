//! Calls in flight (the heavy-call slots are the application's: `geomap_app::slots`).
//!
//! Invariant: every tool call holds an [`InFlight`] guard from its first step
//! to its log line, so a stopping server knows when the last one is done.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// Calls running now.
#[derive(Debug, Default)]
pub struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

/// Held by a running call; dropping it ends the call's count.
pub struct InFlightGuard<'a>(&'a InFlight);

/// [`InFlightGuard`] for work that outlives a borrow (an HTTP response body still streaming).
pub struct OwnedInFlightGuard(Arc<InFlight>);

impl InFlight {
    /// Counts a call until the guard is dropped.
    pub fn enter(&self) -> InFlightGuard<'_> {
        self.count.fetch_add(1, Ordering::SeqCst);
        InFlightGuard(self)
    }

    /// Counts work until the guard is dropped, wherever the guard goes.
    pub fn enter_owned(self: &Arc<Self>) -> OwnedInFlightGuard {
        self.count.fetch_add(1, Ordering::SeqCst);
        OwnedInFlightGuard(Arc::clone(self))
    }

    /// Calls running now.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Returns once no call is running.
    pub async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.count() == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl InFlight {
    fn leave(&self) {
        if self.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.idle.notify_waiters();
        }
    }
}

impl Drop for InFlightGuard<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

impl Drop for OwnedInFlightGuard {
    fn drop(&mut self) {
        self.0.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_returns_when_the_last_call_ends() {
        let calls = Arc::new(InFlight::default());
        let guard = calls.enter();
        let waiting = tokio::spawn({
            let calls = Arc::clone(&calls);
            async move { calls.idle().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(guard);
        waiting.await.unwrap();
        assert_eq!(calls.count(), 0);
    }
}
