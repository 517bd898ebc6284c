//! The one adapter from domain errors to `geomap-error/v1` envelopes, one
//! short file per domain (`roots`, `media`, `registry`, `georef`, `maps`,
//! `detect`, `providers`; assets map their own in `geomap_assets::failure`,
//! which their command line shares).
//!
//! Invariants: every failure of a tool call passes through [`envelope_for`];
//! hints are computed here from the settings at the moment of failure;
//! `details` are scrubbed of server paths before they leave
//! (`geomap_model::errors::failure::envelope`).

mod detect;
mod georef;
mod maps;
mod media;
mod providers;
mod registry;
mod roots;

use serde_json::{Value, json};

use geomap_assets::AssetError;
use geomap_georef::GeorefError;
use geomap_model::errors::failure::{self, FailedCall, Parts, cancelled, parts};
use geomap_model::errors::{Cause, Envelope, ErrorCode};
use geomap_model::settings::Settings;
use geomap_model::trace::TraceId;
use geomap_providers::ProviderError;
use geomap_store::media::MediaError;
use geomap_store::registry::RegistryError;
use geomap_store::roots::RootsError;

use super::arguments::ArgumentError;

pub use maps::MapGone;

/// Every way a tool call can fail, as the MCP edge sees it.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema.
    #[error(transparent)]
    InvalidArguments(#[from] ArgumentError),
    /// The map path was refused or could not be opened.
    #[error("{error}")]
    MapPath { requested: String, error: RootsError },
    /// The file is not a map this server accepts.
    #[error(transparent)]
    Media(#[from] MediaError),
    /// The registry failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// An asset is unknown, the operator's own, or failed to install.
    #[error(transparent)]
    Asset(#[from] AssetError),
    /// Georeferencing failed.
    #[error(transparent)]
    Georef(#[from] GeorefError),
    /// A registered map is gone or unknown.
    #[error("map {map_id} is not available ({reason:?})")]
    MapNotFound { map_id: String, reason: MapGone, registered_as: Option<String> },
    /// A file the server stored could not be read or written (not its absence: that is `MapNotFound`).
    #[error("{stage}: {detail}")]
    Storage { stage: &'static str, detail: String },
    /// An artifact is too large to send as an MCP resource.
    #[error("artifact {name} has {bytes} bytes")]
    ArtifactTooLarge { name: String, bytes: u64, path: std::path::PathBuf },
    /// A provider could not answer (the most actionable failure when every provider of a call failed).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// Vision work (decoding, the pixel store, detection, reading text) could not be done.
    #[error(transparent)]
    Vision(#[from] geomap_vision::VisionError),
    /// The map's own labels gave no georeference: no neatline, too few labels, or no CRS to put them in.
    #[error("{}", .0.why)]
    TooFewLabels(Box<LabelsFailure>),
    /// A knowledge query named a map that has no georeference yet.
    #[error("map {map_id} has no georeference")]
    GeorefRequired { map_id: String },
    /// The tool panicked; the backtrace is in the log.
    #[error("the tool panicked")]
    Panic,
    /// The client cancelled the call before it had a heavy-call slot, or the server stopped before it finished.
    #[error("the call was cancelled")]
    Cancelled,
}

/// Why the map's own labels gave no georeference, and what was read.
#[derive(Debug)]
pub struct LabelsFailure {
    /// `details.reason`: `no_neatline` or `too_few_labels`.
    pub reason: &'static str,
    /// What is missing, in plain words.
    pub why: String,
    /// Every line read in the ring around the neatline.
    pub labels: Vec<geomap_vision::graticule::LabelReport>,
    /// The neatline's corners, when one was found.
    pub corners: Option<[[f64; 2]; 4]>,
}

impl From<geomap_vision::graticule::GraticuleError> for ToolError {
    /// Pixels and the reader fail as they do for every tool; what only labels can lack is `too_few_labels`.
    fn from(error: geomap_vision::graticule::GraticuleError) -> ToolError {
        use geomap_vision::graticule::GraticuleError;
        match error {
            GraticuleError::Vision(error) => ToolError::Vision(error),
            GraticuleError::NoNeatline(why) => {
                ToolError::TooFewLabels(Box::new(LabelsFailure { reason: "no_neatline", why, labels: Vec::new(), corners: None }))
            }
            GraticuleError::TooFewLabels { why, labels, corners } => {
                ToolError::TooFewLabels(Box::new(LabelsFailure { reason: "too_few_labels", why, labels, corners: Some(corners) }))
            }
        }
    }
}

impl ToolError {
    /// Whether the call stopped because the client cancelled it (logged as `outcome=cancelled`).
    pub fn is_cancellation(&self) -> bool {
        matches!(
            self,
            ToolError::Asset(AssetError::Install { reason: geomap_assets::FailureReason::Cancelled, .. })
                | ToolError::Vision(geomap_vision::VisionError::Cancelled)
                | ToolError::Cancelled
                | ToolError::Georef(GeorefError::Cancelled)
        )
    }
}

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

/// A provider's failure inside a call that still succeeded, as the result's `warnings` carry it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ProviderWarning {
    /// The provider that failed.
    pub provider: String,
    /// The code the call would have failed with for this provider alone.
    pub code: ErrorCode,
    /// `details.reason` of that failure, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened and what to do, in plain words.
    pub message: String,
}

/// The warning for `error` in a call to `tool` that succeeded through other providers.
pub fn provider_warning(error: &ProviderError, tool: &str, settings: &Settings) -> ProviderWarning {
    let Warning { about, code, reason, message } = warning(&ToolError::Provider(error.clone()), error.provider(), tool, settings);
    ProviderWarning { provider: about, code, reason, message }
}

/// Something a call did without, though it succeeded: a provider, a model.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Warning {
    /// What it did without: a provider's name, or an asset's id.
    pub about: String,
    /// The code a call needing it would have failed with.
    pub code: ErrorCode,
    /// `details.reason` of that failure, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened and what to do, in plain words (the failure's message and first hint).
    pub message: String,
}

/// The warning for `error`, about `about`, in a call to `tool` that succeeded without it.
pub fn warning(error: &ToolError, about: &str, tool: &str, settings: &Settings) -> Warning {
    let trace_id = geomap_model::trace::current_trace_id().unwrap_or_else(TraceId::random);
    let envelope = envelope_for(error, &FailedCall { tool, idempotent: false, trace_id: &trace_id, settings });
    let reason = envelope.details.as_ref().and_then(|details| details.get("reason")).and_then(Value::as_str).map(str::to_owned);
    Warning { about: about.to_owned(), code: envelope.code, reason, message: envelope.message }
}

/// Turns `error` into the envelope the agent receives.
pub fn envelope_for(error: &ToolError, call: &FailedCall<'_>) -> Envelope {
    failure::envelope(describe(error, call), call)
}

fn describe(error: &ToolError, call: &FailedCall<'_>) -> Parts {
    let settings = call.settings;
    match error {
        ToolError::InvalidArguments(argument) => parts(
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
        ToolError::MapPath { requested, error } => roots::describe_path(requested, error, settings),
        ToolError::Media(error) => media::describe_media(error, settings),
        ToolError::Registry(error) => registry::describe_registry(error),
        ToolError::Georef(error) => georef::describe_georef(error, call),
        ToolError::Asset(error) => geomap_assets::failure::describe(error, call),
        ToolError::MapNotFound { map_id, reason, registered_as } => maps::describe_map_gone(map_id, *reason, registered_as.as_deref()),
        ToolError::ArtifactTooLarge { name, bytes, path } => maps::describe_artifact_too_large(name, *bytes, path),
        ToolError::Storage { stage, detail } => maps::describe_storage(stage, detail, call),
        ToolError::Provider(error) => providers::describe_provider(error, call),
        ToolError::Vision(error) => detect::describe_detect(error, call),
        ToolError::GeorefRequired { map_id } => providers::describe_georef_required(map_id),
        ToolError::TooFewLabels(failure) => georef::describe_too_few_labels(failure),
        ToolError::Panic => {
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
        ToolError::Cancelled => cancelled(call),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_store::media::{Limit, MediaLimits};

    /// Settings with two map roots and a data root, for the adapter's tests.
    pub(super) fn settings() -> Settings {
        geomap_model::testing::settings_with_two_roots()
    }

    fn envelope(error: ToolError, idempotent: bool) -> Envelope {
        let trace_id = TraceId::random();
        let settings = settings();
        envelope_for(&error, &FailedCall { tool: "geomap_register_map", idempotent, trace_id: &trace_id, settings: &settings })
    }

    #[test]
    fn details_never_carry_a_server_path() {
        let error = ToolError::MapPath { requested: "/etc/passwd".into(), error: RootsError::OutsideRoots };
        let envelope = envelope(error, true);
        assert_eq!(envelope.code, ErrorCode::PathNotAllowed);
        let details = serde_json::to_string(&envelope.details).unwrap();
        assert!(!details.contains("/etc") && !details.contains("/data/maps"), "{details}");
        assert_eq!(envelope.details.unwrap()["requested"], "<path>");
    }

    #[test]
    fn the_argument_pointer_is_not_mistaken_for_a_path() {
        let error = ToolError::MapPath { requested: "/data/maps/missing.png".into(), error: RootsError::NotFound };
        let details = envelope(error, true).details.unwrap();
        assert_eq!(details["field"], "/path");
        assert_eq!(details["requested"], "<map_root_1>/missing.png");
    }

    #[test]
    fn hints_are_computed_from_the_settings_in_force() {
        let error = ToolError::MapPath { requested: "/tmp/x.png".into(), error: RootsError::OutsideRoots };
        let hints = envelope(error, true).recovery_hints;
        assert!(hints[0].contains("/data/maps, /mnt/scans"), "{hints:?}");
        assert!(hints[1].contains("GEOMAP_MAP_ROOTS"), "{hints:?}");
    }

    #[test]
    fn oversize_hints_give_a_concrete_outsize_that_fits() {
        let limits = MediaLimits { max_bytes: 1 << 30, max_pixels: 100_000_000 };
        let error = MediaError::Oversize { limit: Limit::Pixels, bytes: 10, width: Some(20_000), height: Some(20_000), limits };
        let envelope = envelope(ToolError::Media(error), true);
        assert_eq!(envelope.code, ErrorCode::OversizeImage);
        assert!(envelope.recovery_hints[0].contains("-outsize 50% 50%"), "{:?}", envelope.recovery_hints);
        assert!(envelope.recovery_hints[0].contains("10000×10000 = 100000000 pixels"), "{:?}", envelope.recovery_hints);
        assert!(envelope.recovery_hints[1].contains("GEOMAP_MAX_IMAGE_PIXELS (now 100000000) to at least 400000000"));
        assert!(envelope.message.contains("-outsize 50% 50%"), "the message repeats the remedy");
    }

    #[test]
    fn only_a_panic_in_an_idempotent_tool_is_retryable() {
        let panicked = envelope(ToolError::Panic, true);
        assert_eq!((panicked.code, panicked.cause, panicked.retryable), (ErrorCode::InternalError, Some(Cause::Panic), true));
        assert!(!envelope(ToolError::Panic, false).retryable);
        let unknown = ToolError::MapNotFound { map_id: "m".into(), reason: MapGone::UnknownId, registered_as: None };
        assert!(!envelope(unknown, true).retryable);
    }

    #[test]
    fn every_cancellation_is_one_outcome_and_never_retryable() {
        let cancellations = [
            ToolError::Cancelled,
            ToolError::Vision(geomap_vision::VisionError::Cancelled),
            ToolError::Georef(GeorefError::Cancelled),
            ToolError::Asset(AssetError::Install {
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
