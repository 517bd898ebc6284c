//! The one adapter from failures to `geomap-error/v1` envelopes: every edge
//! (the MCP tools, `batch`, resources) and the application's warnings go
//! through [`envelope_for`]; one short file per domain (`roots`, `media`,
//! `registry`, `georef`, `maps`, `detect`, `providers`; assets map their own in
//! `geomap_assets::failure`, which their command line shares).
//!
//! Invariants: hints are computed here from the settings at the moment of
//! failure; `details` are scrubbed of server paths before they leave
//! (`geomap_model::errors::failure::envelope`).

mod detect;
mod georef;
mod maps;
mod media;
mod providers;
mod registry;
mod roots;

use serde_json::{Value, json};

use geomap_app::AppError;
use geomap_model::errors::failure::{self, FailedCall, Parts, cancelled, parts};
use geomap_model::errors::{Cause, Envelope, ErrorCode};
use geomap_model::settings::Settings;
use geomap_model::trace::TraceId;

/// The envelope of a call to a tool this server does not offer: the agent
/// refreshes its tool list, unless the operator withheld the tool (`withheld`
/// names the setting), which only the operator can change.
pub fn unknown_tool(name: &str, offered: &[&str], withheld: Option<&str>, trace_id: &TraceId, settings: &Settings) -> Envelope {
    let (message, hints) = match withheld {
        Some(variable) => {
            let operator = format!(
                "The operator can install what it would have installed with `stratigraphic-amenity-assets --all --root {}`, or offer the tool by setting {variable}=true and restarting the server.",
                settings.data_root.display()
            );
            (format!("The operator withheld {name} on this server ({variable}=false); calling it again will not help. {operator}"), vec![operator])
        }
        None => {
            let refresh = format!("Refresh the tool list with tools/list and call one of: {}.", offered.join(", "));
            (format!("This server offers no tool named {name:?}. {refresh}"), vec![refresh])
        }
    };
    let mut details = json!({ "tool": name, "offered": offered });
    if let Some(variable) = withheld {
        details["reason"] = json!("withheld_by_operator");
        details["setting"] = json!(variable);
    }
    let Value::Object(details) = details else { unreachable!("built as an object") };
    Envelope::new(ErrorCode::UnknownTool, message, trace_id.as_str()).with_details(details).with_hints(hints)
}

/// Turns `error` into the envelope the agent receives.
pub fn envelope_for(error: &AppError, call: &FailedCall<'_>) -> Envelope {
    failure::envelope(describe(error, call), call)
}

fn describe(error: &AppError, call: &FailedCall<'_>) -> Parts {
    let settings = call.settings;
    match error {
        AppError::InvalidArguments(argument) => parts(
            ErrorCode::InvalidArguments,
            format!(
                "Invalid arguments for {}: {} at {}. Call it again with {} as {}.",
                call.tool,
                argument.problem_text(),
                argument.field,
                argument.field,
                argument.expected
            ),
            json!({ "field": argument.field, "problem": argument.problem.as_str(), "expected": argument.expected }),
            vec![format!("Fix {} ({}) and call {} again; tools/list shows the tool's input schema.", argument.field, argument.expected, call.tool)],
        ),
        AppError::MapPath { requested, error } => roots::describe_path(requested, error, settings),
        AppError::Media(error) => media::describe_media(error, settings),
        AppError::Registry(error) => registry::describe_registry(error),
        AppError::Georef(error) => georef::describe_georef(error, call),
        AppError::Asset(error) => geomap_assets::failure::describe(error, call),
        AppError::MapNotFound { map_id, reason, registered_as } => maps::describe_map_gone(map_id, *reason, registered_as.as_deref()),
        AppError::ArtifactTooLarge { name, bytes, path } => maps::describe_artifact_too_large(name, *bytes, path),
        AppError::Storage { stage, detail } => maps::describe_storage(stage, detail, call),
        AppError::Provider(error) => providers::describe_provider(error, call),
        AppError::Vision(error) => detect::describe_detect(error, call),
        AppError::GeorefRequired { map_id } => providers::describe_georef_required(map_id),
        AppError::TooFewLabels(failure) => georef::describe_too_few_labels(failure),
        AppError::Panic => {
            let mut hints = vec![format!("Report trace_id {} to the operator: the server logged the failure and its backtrace under that ID.", call.trace_id)];
            if call.idempotent {
                hints.push(format!("{} is safe to repeat: you may retry it once.", call.tool));
            }
            Parts {
                cause: Some(Cause::Panic),
                ..parts(
                    ErrorCode::InternalError,
                    format!("{} failed with an internal error. Report trace_id {} to the operator.", call.tool, call.trace_id),
                    json!({ "tool": call.tool }),
                    hints,
                )
            }
        }
        AppError::Cancelled => cancelled(call),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_app::MapGone;
    use geomap_assets::AssetError;
    use geomap_georef::GeorefError;
    use geomap_store::media::{Limit, MediaError, MediaLimits};
    use geomap_store::roots::RootsError;

    /// Settings with two map roots and a data root, for the adapter's tests.
    pub(super) fn settings() -> Settings {
        geomap_model::testing::settings_with_two_roots()
    }

    fn envelope(error: AppError, idempotent: bool) -> Envelope {
        let trace_id = TraceId::random();
        let settings = settings();
        envelope_for(&error, &FailedCall { tool: "geomap_register_map", idempotent, trace_id: &trace_id, settings: &settings })
    }

    #[test]
    fn details_never_carry_a_server_path() {
        let error = AppError::MapPath { requested: "/etc/passwd".into(), error: RootsError::OutsideRoots };
        let envelope = envelope(error, true);
        assert_eq!(envelope.code, ErrorCode::PathNotAllowed);
        let details = serde_json::to_string(&envelope.details).unwrap();
        assert!(!details.contains("/etc") && !details.contains("/data/maps"), "{details}");
        assert_eq!(envelope.details.unwrap()["requested"], "<path>");
    }

    #[test]
    fn the_argument_pointer_is_not_mistaken_for_a_path() {
        let error = AppError::MapPath { requested: "/data/maps/missing.png".into(), error: RootsError::NotFound };
        let details = envelope(error, true).details.unwrap();
        assert_eq!(details["field"], "/path");
        assert_eq!(details["requested"], "<map_root_1>/missing.png");
    }

    #[test]
    fn hints_are_computed_from_the_settings_in_force() {
        let error = AppError::MapPath { requested: "/tmp/x.png".into(), error: RootsError::OutsideRoots };
        let hints = envelope(error, true).recovery_hints;
        assert!(hints[0].contains("/data/maps, /mnt/scans"), "{hints:?}");
        assert!(hints[1].contains("GEOMAP_MAP_ROOTS"), "{hints:?}");
    }

    #[test]
    fn oversize_hints_give_a_concrete_outsize_that_fits() {
        let limits = MediaLimits { max_bytes: 1 << 30, max_pixels: 100_000_000 };
        let error = MediaError::Oversize { limit: Limit::Pixels, bytes: 10, width: Some(20_000), height: Some(20_000), limits };
        let envelope = envelope(AppError::Media(error), true);
        assert_eq!(envelope.code, ErrorCode::OversizeImage);
        assert!(envelope.recovery_hints[0].contains("-outsize 50% 50%"), "{:?}", envelope.recovery_hints);
        assert!(envelope.recovery_hints[0].contains("10000×10000 = 100000000 pixels"), "{:?}", envelope.recovery_hints);
        assert!(envelope.recovery_hints[1].contains("GEOMAP_MAX_IMAGE_PIXELS (now 100000000) to at least 400000000"));
        assert!(envelope.message.contains("-outsize 50% 50%"), "the message repeats the remedy");
    }

    #[test]
    fn only_a_panic_in_an_idempotent_tool_is_retryable() {
        let panicked = envelope(AppError::Panic, true);
        assert_eq!((panicked.code, panicked.cause, panicked.retryable), (ErrorCode::InternalError, Some(Cause::Panic), true));
        assert!(!envelope(AppError::Panic, false).retryable);
        let unknown = AppError::MapNotFound { map_id: "m".into(), reason: MapGone::UnknownId, registered_as: None };
        assert!(!envelope(unknown, true).retryable);
    }

    #[test]
    fn every_cancellation_is_one_outcome_and_never_retryable() {
        let cancellations = [
            AppError::Cancelled,
            AppError::Vision(geomap_vision::VisionError::Cancelled),
            AppError::Georef(GeorefError::Cancelled),
            AppError::Asset(AssetError::Install {
                id: "ics-chart".into(),
                file: None,
                url: None,
                reason: geomap_assets::FailureReason::Cancelled,
                detail: String::new(),
            }),
        ];
        let envelopes: Vec<Envelope> = cancellations.into_iter().map(|error| envelope(error, true)).collect();
        for envelope in &envelopes {
            assert_eq!((envelope.code, envelope.retryable), (ErrorCode::InternalError, false));
            assert_eq!((&envelope.message, &envelope.details), (&envelopes[0].message, &envelopes[0].details));
        }
    }
}
