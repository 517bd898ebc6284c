//! Calls in flight and the slots heavy calls share.
//!
//! Invariants: every tool call holds an [`InFlight`] guard from its first step
//! to its log line, so a stopping server knows when the last one is done; a
//! heavy call (detection, reading, georeference, downloads) runs only while it
//! holds one of `GEOMAP_MAX_HEAVY_CALLS` slots, and waits for one — telling
//! the client so — rather than failing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::progress::ProgressSink;

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

/// The slots heavy calls share.
#[derive(Debug)]
pub struct HeavySlots {
    slots: Arc<Semaphore>,
    size: usize,
}

/// Why no slot was taken.
#[derive(Debug, PartialEq, Eq)]
pub struct SlotCancelled;

impl HeavySlots {
    /// `size` slots (`GEOMAP_MAX_HEAVY_CALLS`).
    pub fn new(size: usize) -> HeavySlots {
        HeavySlots { slots: Arc::new(Semaphore::new(size)), size }
    }

    /// A slot, at once or after waiting; while it waits the client hears "waiting for a free slot"
    /// (when it sent a progress token). Gives up when `cancel` fires first.
    pub async fn take(&self, progress: Option<&ProgressSink>, cancel: &CancellationToken) -> Result<OwnedSemaphorePermit, SlotCancelled> {
        if let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(slot);
        }
        if let Some(sink) = progress {
            let message = format!("waiting for a free slot: {} heavy calls run at once on this server (GEOMAP_MAX_HEAVY_CALLS)", self.size);
            let param = rmcp::model::ProgressNotificationParam::new(sink.token.clone(), 0.0).with_message(message);
            let _ = sink.peer.notify_progress(param).await; // a client that went away is no reason to stop
        }
        tokio::select! {
            slot = Arc::clone(&self.slots).acquire_owned() => Ok(slot.expect("the semaphore is never closed")),
            () = cancel.cancelled() => Err(SlotCancelled),
        }
    }

    /// Slots free now.
    pub fn free(&self) -> usize {
        self.slots.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_waits_for_a_slot_and_a_cancelled_wait_gives_up() {
        let slots = HeavySlots::new(1);
        let first = slots.take(None, &CancellationToken::new()).await.unwrap();
        assert_eq!(slots.free(), 0);
        let cancel = CancellationToken::new();
        let waiting = slots.take(None, &cancel);
        cancel.cancel();
        assert_eq!(waiting.await.unwrap_err(), SlotCancelled);
        let second = tokio::spawn({
            let slots = Arc::clone(&slots.slots);
            async move { slots.acquire_owned().await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "the second call waits while the first holds the slot");
        drop(first);
        second.await.unwrap().unwrap();
        assert_eq!(slots.free(), 1);
    }

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
