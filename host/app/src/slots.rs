//! The slots heavy calls share: decoding a whole scan, running models,
//! warping, downloading.
//!
//! Invariant: a heavy call runs only while it holds one of
//! `GEOMAP_MAX_HEAVY_CALLS` slots, and waits for one — saying so through its
//! progress — rather than failing; a wait its caller cancels gives up.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use geomap_model::progress::{Cancelled, Progress};

/// The slots heavy calls share.
#[derive(Debug)]
pub struct HeavySlots {
    slots: Arc<Semaphore>,
    size: usize,
}

impl HeavySlots {
    /// `size` slots (`GEOMAP_MAX_HEAVY_CALLS`).
    pub fn new(size: usize) -> HeavySlots {
        HeavySlots { slots: Arc::new(Semaphore::new(size)), size }
    }

    /// A slot, at once or after waiting; while it waits, `progress` hears "waiting for a free slot".
    /// Gives up when the progress is cancelled first.
    pub async fn take(&self, progress: &Progress) -> Result<OwnedSemaphorePermit, Cancelled> {
        if let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(slot);
        }
        let message = format!("waiting for a free slot: {} heavy calls run at once on this server (GEOMAP_MAX_HEAVY_CALLS)", self.size);
        progress.fraction(0.0, message)?;
        tokio::select! {
            slot = Arc::clone(&self.slots).acquire_owned() => Ok(slot.expect("the semaphore is never closed")),
            () = progress.cancellation().cancelled() => Err(Cancelled),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio_util::sync::CancellationToken;

    use super::*;

    #[tokio::test]
    async fn a_call_waits_for_a_slot_and_a_cancelled_wait_gives_up() {
        let slots = HeavySlots::new(1);
        let first = slots.take(&Progress::none()).await.unwrap();
        assert_eq!(slots.slots.available_permits(), 0);
        let cancel = CancellationToken::new();
        let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = Arc::clone(&heard);
        let waiting = Progress::new(move |update| into.lock().unwrap().push(update.message), cancel.clone());
        let wait = slots.take(&waiting);
        cancel.cancel();
        assert_eq!(wait.await.unwrap_err(), Cancelled);
        assert!(heard.lock().unwrap().iter().any(|message| message.starts_with("waiting for a free slot")));
        let second = tokio::spawn({
            let slots = Arc::clone(&slots.slots);
            async move { slots.acquire_owned().await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "the second call waits while the first holds the slot");
        drop(first);
        second.await.unwrap().unwrap();
        assert_eq!(slots.slots.available_permits(), 1);
    }
}
