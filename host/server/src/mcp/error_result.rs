//! The one place an envelope becomes what the client receives.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock};

use geomap_model::errors::{Envelope, ErrorCode};

/// Renders `envelope` as a tool result: `isError: true`, the envelope as
/// structured content, and a text block ending with the Evidence digest.
pub fn error_result(envelope: &Envelope) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(error_text(envelope))]);
    result.structured_content = Some(serde_json::to_value(envelope).expect("envelopes always serialize"));
    result
}

/// Renders `envelope` as a JSON-RPC error (-32602) for a call that names no
/// offered tool: the envelope is the error's `data`.
pub fn protocol_error(envelope: &Envelope) -> ErrorData {
    let data = serde_json::to_value(envelope).expect("envelopes always serialize");
    ErrorData::invalid_params(format!("{}: {} (trace_id {})", envelope.code, envelope.message, envelope.trace_id), Some(data))
}

/// Renders `envelope` as the JSON-RPC error of a resource request: -32002
/// (resource not found) for `artifact_not_found`, -32603 for server-side
/// failures, -32602 otherwise; the envelope is the error's `data`, with the
/// `uri` asked for beside its fields on -32002 (as SEP-2164 asks).
pub fn resource_error(envelope: &Envelope, uri: Option<&str>) -> ErrorData {
    let mut data = serde_json::to_value(envelope).expect("envelopes always serialize");
    let message = format!("{}: {} (trace_id {})", envelope.code, envelope.message, envelope.trace_id);
    match envelope.code {
        ErrorCode::ArtifactNotFound => {
            if let Some(uri) = uri {
                data["uri"] = uri.into();
            }
            ErrorData::resource_not_found(message, Some(data))
        }
        ErrorCode::InternalError | ErrorCode::RegistryCorrupt => ErrorData::internal_error(message, Some(data)),
        _ => ErrorData::invalid_params(message, Some(data)),
    }
}

/// The text block: the message, then the Evidence digest.
pub fn error_text(envelope: &Envelope) -> String {
    let details = serde_json::to_string(&envelope.details.clone().unwrap_or_default()).expect("details always serialize");
    let mut text = format!("{}\n\nEvidence digest\nerror.code: {}\ntrace_id: {}\ndetails: {details}", envelope.message, envelope.code, envelope.trace_id);
    for hint in &envelope.recovery_hints {
        text.push_str("\nrecovery_hint: ");
        text.push_str(hint);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Envelope {
        let serde_json::Value::Object(details) = json!({"field": "/path", "expected": "a string"}) else { unreachable!() };
        Envelope::new(ErrorCode::InvalidArguments, "Bad path. Fix it.", "ab".repeat(16))
            .with_details(details)
            .with_hints(vec!["first hint".into(), "second hint".into()])
    }

    #[test]
    fn the_text_ends_with_the_evidence_digest_lines_exactly() {
        let text = error_text(&sample());
        let tail: Vec<&str> = text.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        assert_eq!(
            tail,
            [
                "error.code: invalid_arguments",
                &format!("trace_id: {}", "ab".repeat(16)),
                r#"details: {"field":"/path","expected":"a string"}"#,
                "recovery_hint: first hint",
                "recovery_hint: second hint",
            ]
        );
        assert!(text.starts_with("Bad path. Fix it.\n\nEvidence digest\n"));
    }

    #[test]
    fn the_result_is_an_error_with_the_envelope_as_structured_content() {
        let result = error_result(&sample());
        assert_eq!(result.is_error, Some(true));
        let structured = result.structured_content.unwrap();
        assert_eq!(structured["schema"], "geomap-error/v1");
        assert_eq!(structured["code"], "invalid_arguments");
    }

    #[test]
    fn an_envelope_without_details_or_hints_still_has_the_digest() {
        let envelope = Envelope::new(ErrorCode::InternalError, "m", "0".repeat(32));
        assert!(error_text(&envelope).ends_with(&format!("trace_id: {}\ndetails: {{}}", "0".repeat(32))));
    }

    #[test]
    fn an_unknown_tool_is_invalid_params_carrying_the_envelope() {
        let envelope = Envelope::new(ErrorCode::UnknownTool, "No tool x.", "c".repeat(32));
        let error = protocol_error(&envelope);
        assert_eq!(error.code.0, -32602);
        assert!(error.message.contains("unknown_tool") && error.message.contains(&"c".repeat(32)));
        assert_eq!(error.data.unwrap()["code"], "unknown_tool");
    }

    #[test]
    fn resource_errors_pick_the_json_rpc_code_by_who_acts() {
        let code_for = |code| resource_error(&Envelope::new(code, "m", "d".repeat(32)), None).code.0;
        assert_eq!(code_for(ErrorCode::ArtifactNotFound), -32002);
        assert_eq!(code_for(ErrorCode::RegistryCorrupt), -32603);
        assert_eq!(code_for(ErrorCode::OversizeImage), -32602);
        let error = resource_error(&Envelope::new(ErrorCode::InternalError, "Failed.", "e".repeat(32)), None);
        assert!(error.message.contains("internal_error") && error.message.contains(&"e".repeat(32)));
        assert_eq!(error.data.unwrap()["code"], "internal_error");
        let missing = resource_error(&Envelope::new(ErrorCode::ArtifactNotFound, "m", "d".repeat(32)), Some("geomap://maps/map_x"));
        assert_eq!(missing.data.unwrap()["uri"], "geomap://maps/map_x", "the URI asked for, beside the envelope");
    }
}
