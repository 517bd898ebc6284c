//! What an edge knows about a failed call, and the parts of an envelope a
//! domain's mapping fills in before [`envelope`] assembles them.
//!
//! Invariants: every envelope is assembled by [`envelope`] (details scrubbed
//! of server paths, hints on one line each); every cancellation is worded by
//! [`cancelled`] and is never retryable.

use serde_json::{Map, Value, json};

use super::scrub::scrub_details;
use super::{Cause, Envelope, ErrorCode, NextCall};
use crate::settings::Settings;
use crate::trace::TraceId;

/// What the adapter knows about the failed call.
pub struct FailedCall<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// Whether the tool is safe to call again unchanged.
    pub idempotent: bool,
    /// The call's trace ID.
    pub trace_id: &'a TraceId,
    /// The settings in force.
    pub settings: &'a Settings,
}

/// An envelope before assembly: what one domain's mapping says about its error.
pub struct Parts {
    /// The stable code.
    pub code: ErrorCode,
    /// What happened and what to do, in plain words.
    pub message: String,
    /// Machine-readable details (scrubbed of server paths on assembly).
    pub details: Map<String, Value>,
    /// The internal failure's kind, for `internal_error`.
    pub cause: Option<Cause>,
    /// Recovery hints, most useful first.
    pub hints: Vec<String>,
    /// Whether the caller stopped the call (then it is never retryable).
    pub cancellation: bool,
    /// The exact call the first hint names, when it names one (`details.next_call`).
    pub next_call: Option<NextCall>,
}

/// Parts with no cause; `details` must be a JSON object.
pub fn parts(code: ErrorCode, message: String, details: Value, hints: Vec<String>) -> Parts {
    let Value::Object(details) = details else { unreachable!("details are always built as objects") };
    Parts { code, message, details, cause: None, hints, cancellation: false, next_call: None }
}

/// Every cancellation, whichever domain noticed it: one wording, never retryable (the caller chose to stop).
pub fn cancelled(call: &FailedCall<'_>) -> Parts {
    let again = format!("Call {} again when you want the result.", call.tool);
    Parts {
        cancellation: true,
        ..parts(
            ErrorCode::InternalError,
            format!("The call was cancelled before it finished; nothing of it was kept. {again}"),
            json!({ "reason": "cancelled" }),
            vec![again],
        )
    }
}

/// The envelope the caller receives: details scrubbed of server paths (then `next_call` added,
/// whose arguments are never a server path), each hint on one line, retryable only for an
/// internal error of an idempotent tool that was not cancelled.
pub fn envelope(parts: Parts, call: &FailedCall<'_>) -> Envelope {
    let mut details = parts.details;
    scrub_details(&mut details, call.settings);
    if let Some(next_call) = parts.next_call {
        details.insert("next_call".to_owned(), serde_json::to_value(next_call).expect("calls serialize"));
    }
    let hints = parts.hints.into_iter().map(|hint| hint.replace('\n', " ")).collect();
    Envelope::new(parts.code, parts.message, call.trace_id.as_str())
        .with_details(details)
        .with_cause(parts.cause)
        .with_hints(hints)
        .with_retryable(parts.code == ErrorCode::InternalError && call.idempotent && !parts.cancellation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_call_is_never_retryable_even_when_idempotent() {
        let settings = crate::testing::settings_with_two_roots();
        let trace_id = TraceId::random();
        let call = FailedCall { tool: "geomap_georeference", idempotent: true, trace_id: &trace_id, settings: &settings };
        let envelope = envelope(cancelled(&call), &call);
        assert_eq!((envelope.code, envelope.retryable), (ErrorCode::InternalError, false));
        assert_eq!(envelope.details.unwrap()["reason"], "cancelled");
    }
}
