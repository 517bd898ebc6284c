//! Progress notifications for long tool calls.

/// How far a call has come: `done` of `total` units (percent, bytes), and what it is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressUpdate {
    /// Units done.
    pub done: u64,
    /// Units in all.
    pub total: u64,
    /// What the call is doing now.
    pub message: String,
}

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
