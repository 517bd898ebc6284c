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
        write!(writer, "{now} {:>5} ", event.metadata().level())?;
        context.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
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
