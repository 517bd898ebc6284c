//! Progress notifications for long tool calls: where the one progress type's
//! updates (`geomap_model::progress`) go when a client asked for them.

use geomap_model::progress::ProgressUpdate;

/// Where a call's progress goes: the client that asked for it with a progress token.
pub struct ProgressSink {
    /// The client.
    pub peer: rmcp::Peer<rmcp::RoleServer>,
    /// The token from the request's `_meta`.
    pub token: rmcp::model::ProgressToken,
}

impl ProgressSink {
    /// Forwards updates as `notifications/progress` until the sender is dropped:
    /// `progress` strictly increasing, as MCP requires, and at most one per
    /// whole percent of `total` (a large download does not flood the client).
    pub async fn forward(self, mut updates: tokio::sync::mpsc::UnboundedReceiver<ProgressUpdate>) {
        let mut last: Option<(u64, u64)> = None; // (done, percent)
        while let Some(update) = updates.recv().await {
            let percent = update.done.min(update.total) * 100 / update.total.max(1);
            if last.is_some_and(|(done, previous)| done >= update.done || (previous >= percent && update.done < update.total)) {
                continue;
            }
            last = Some((update.done, percent));
            let param = rmcp::model::ProgressNotificationParam::new(self.token.clone(), update.done as f64)
                .with_total(update.total as f64)
                .with_message(update.message);
            if self.peer.notify_progress(param).await.is_err() {
                break; // the client went away; the work finishes anyway
            }
        }
    }
}
