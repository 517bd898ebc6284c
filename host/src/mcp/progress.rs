//! Progress notifications for long tool calls.

/// Where a call's progress goes: the client that asked for it with a progress token.
pub struct ProgressSink {
    /// The client.
    pub peer: rmcp::Peer<rmcp::RoleServer>,
    /// The token from the request's `_meta`.
    pub token: rmcp::model::ProgressToken,
}

impl ProgressSink {
    /// Forwards `(fraction, message)` pairs as `notifications/progress` (0..100)
    /// until the sender is dropped: one per whole percent, strictly increasing, as MCP requires.
    pub async fn forward(self, mut updates: tokio::sync::mpsc::UnboundedReceiver<(f64, &'static str)>) {
        let mut last: Option<u32> = None;
        while let Some((fraction, message)) = updates.recv().await {
            let percent = (fraction.clamp(0.0, 1.0) * 100.0).floor() as u32;
            if last.is_some_and(|previous| previous >= percent) {
                continue;
            }
            last = Some(percent);
            let param = rmcp::model::ProgressNotificationParam::new(self.token.clone(), f64::from(percent)).with_total(100.0).with_message(message);
            if self.peer.notify_progress(param).await.is_err() {
                break; // the client went away; the work finishes anyway
            }
        }
    }
}
