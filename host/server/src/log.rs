//! The server's log: one line per event on stderr, and the `event=tool_call`
//! line every tool call ends with.

use std::fmt;
use std::time::Duration;

use geomap_model::trace::TraceId;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Sends the log to stderr, one event per line: `<RFC 3339 time> <LEVEL> <fields>`.
/// rmcp's own chatter is limited to errors unless `filter` names `rmcp`.
pub fn init_logging(filter: &str) {
    let filter = if filter.contains("rmcp") { filter.to_owned() } else { format!("{filter},rmcp=error") };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .event_format(LineFormat)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .init();
}

/// Time, level and the event's fields; no span context, so lines stay greppable.
struct LineFormat;

impl<S, N> FormatEvent<S, N> for LineFormat
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, context: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &tracing::Event<'_>) -> fmt::Result {
        let now = humantime::format_rfc3339_micros(std::time::SystemTime::now());
        let level = if client_gone(event) { tracing::Level::WARN } else { *event.metadata().level() };
        write!(writer, "{now} {level:>5} ",)?;
        context.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// rmcp's messages, logged as errors, that only say the client had already gone: a response or
/// notification still queued when a client cancelled by closing its connection (the 2026-07-28
/// era over HTTP) cannot be sent. Nothing failed that an operator could act on: they are warnings.
const CLIENT_GONE: [&str; 1] = ["failed to send pending response during drain"];

/// Whether `event` is one of rmcp's [`CLIENT_GONE`] messages.
fn client_gone(event: &tracing::Event<'_>) -> bool {
    /// Finds the event's `message` field.
    struct Message(bool);
    impl tracing::field::Visit for Message {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
            if field.name() == "message" {
                self.0 = CLIENT_GONE.contains(&format!("{value:?}").as_str());
            }
        }
    }
    if !event.metadata().target().starts_with("rmcp") || *event.metadata().level() != tracing::Level::ERROR {
        return false;
    }
    let mut message = Message(false);
    event.record(&mut message);
    message.0
}

/// Writes the one INFO line every tool call ends with. `detail` (a panic's
/// backtrace, or an operator-facing failure) is logged just above it; the line
/// itself carries no message; over HTTP it ends with `session=`. The tool name is sanitized: it may come from the client.
pub fn log_tool_call(tool: &str, outcome: &str, duration: Duration, trace_id: &TraceId, session: Option<&str>, detail: Option<&str>) {
    let tool: String = tool.chars().take(64).map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '?' }).collect();
    let tool = if tool.is_empty() { "-".to_owned() } else { tool };
    if let Some(detail) = detail {
        tracing::error!("trace_id={trace_id} tool={tool} failed: {detail}");
    }
    let duration_ms = duration.as_millis() as u64;
    match session {
        None => tracing::info!(event = %"tool_call", tool = %tool, outcome = %outcome, duration_ms, trace_id = %trace_id),
        Some(session) => tracing::info!(event = %"tool_call", tool = %tool, outcome = %outcome, duration_ms, trace_id = %trace_id, session = %session),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    /// The lines `emit` logs through [`super::LineFormat`].
    fn lines(emit: impl FnOnce()) -> String {
        let written = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = Arc::clone(&written);
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .event_format(super::LineFormat)
            .with_writer(move || Writer(Arc::clone(&sink)))
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .finish();
        tracing::subscriber::with_default(subscriber, emit);
        String::from_utf8(written.lock().unwrap().clone()).unwrap()
    }

    struct Writer(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Writer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_response_to_a_client_that_had_gone_is_a_warning_and_other_errors_stay_errors() {
        let gone = lines(|| tracing::error!(target: "rmcp::service", error = "channel closed", "failed to send pending response during drain"));
        assert!(gone.contains("  WARN ") && gone.contains("failed to send pending response during drain"), "{gone}");
        let other = lines(|| tracing::error!(target: "rmcp::service", "failed to serialize a response"));
        assert!(other.contains(" ERROR "), "{other}");
        let ours = lines(|| tracing::error!("failed to send pending response during drain"));
        assert!(ours.contains(" ERROR "), "only rmcp's own message is reclassified: {ours}");
    }
}
