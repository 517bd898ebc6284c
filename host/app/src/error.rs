//! How a use case fails: [`AppError`] wraps each domain's typed error and adds
//! the failures only a use case knows (a gone map, a missing layout, labels
//! that give no georeference); [`ArgumentError`] names a request's field by
//! JSON pointer.
//!
//! Invariant: nothing here words an envelope. The edges' one adapter turns an
//! [`AppError`] into `geomap-error/v1` (the server's `adapter`), and
//! [`AppError::is_cancellation`] is the one list of the ways a call ends
//! cancelled.

use serde::de::DeserializeOwned;

use geomap_assets::AssetError;
use geomap_georef::GeorefError;
use geomap_model::progress::Cancelled;
use geomap_providers::ProviderError;
use geomap_store::media::MediaError;
use geomap_store::registry::RegistryError;
use geomap_store::roots::RootsError;
use geomap_vision::VisionError;
use geomap_vision::graticule::{GraticuleError, LabelReport};

/// Every way a use case can fail.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The request does not fit: a field is missing, of the wrong kind, or conflicts with another.
    #[error(transparent)]
    InvalidArguments(#[from] ArgumentError),
    /// The map path was refused or could not be opened.
    #[error("{error}")]
    MapPath {
        /// The path as asked.
        requested: String,
        /// Why it was refused.
        error: RootsError,
    },
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
    /// A registered map, or one of its stored things, is gone or unknown.
    #[error("map {map_id} is not available ({reason:?})")]
    MapNotFound {
        /// The map (or, for a bundle, the bundle's ID).
        map_id: String,
        /// Which of the ways it is gone.
        reason: MapGone,
        /// The path it was registered from, when the agent can register it again.
        registered_as: Option<String>,
    },
    /// A file the server stored could not be read or written (not its absence: that is `MapNotFound`).
    #[error("{stage}: {detail}")]
    Storage {
        /// What the server was doing: `storing`, `reading`.
        stage: &'static str,
        /// The operating system's words, for the log.
        detail: String,
    },
    /// A stored file is too large to send as an MCP resource.
    #[error("artifact {name} has {bytes} bytes")]
    ArtifactTooLarge {
        /// Its name.
        name: String,
        /// Its size.
        bytes: u64,
        /// Where it is, to open it directly.
        path: std::path::PathBuf,
    },
    /// A provider could not answer (the most actionable failure when every provider of a call failed).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// Reading pixels, running a model or storing a reading failed.
    #[error(transparent)]
    Vision(#[from] VisionError),
    /// The map's own labels gave no georeference: no neatline, too few labels, or no CRS to put them in.
    #[error("{}", .0.why)]
    TooFewLabels(Box<LabelsFailure>),
    /// A call needs the map's georeference, and it has none yet.
    #[error("map {map_id} has no georeference")]
    GeorefRequired {
        /// The map.
        map_id: String,
    },
    /// The work panicked; the backtrace is in the log.
    #[error("the tool panicked")]
    Panic,
    /// The caller cancelled the call, or the server stopped before it finished.
    #[error("the call was cancelled")]
    Cancelled,
}

impl From<Cancelled> for AppError {
    fn from(_: Cancelled) -> AppError {
        AppError::Cancelled
    }
}

impl From<GraticuleError> for AppError {
    /// Pixels and the reader fail as they do for every use case; what only labels can lack is `too_few_labels`.
    fn from(error: GraticuleError) -> AppError {
        match error {
            GraticuleError::Vision(error) => error.into(),
            GraticuleError::NoNeatline(why) => {
                AppError::TooFewLabels(Box::new(LabelsFailure { reason: "no_neatline", why, labels: Vec::new(), corners: None }))
            }
            GraticuleError::TooFewLabels { why, labels, corners } => {
                AppError::TooFewLabels(Box::new(LabelsFailure { reason: "too_few_labels", why, labels, corners: Some(corners) }))
            }
        }
    }
}

impl AppError {
    /// Whether the call stopped because its caller cancelled it (logged as `outcome=cancelled`).
    pub fn is_cancellation(&self) -> bool {
        matches!(
            self,
            AppError::Asset(AssetError::Install { reason: geomap_assets::FailureReason::Cancelled, .. })
                | AppError::Vision(VisionError::Cancelled)
                | AppError::Cancelled
                | AppError::Georef(GeorefError::Cancelled)
        )
    }

    /// The error of a map whose registered ID no longer names anything (or never did).
    pub fn unknown_map(map_id: &str) -> AppError {
        AppError::MapNotFound { map_id: map_id.to_owned(), reason: MapGone::UnknownId, registered_as: None }
    }

    /// The error of a stored thing (`reason`) of map `map_id` that is not there.
    pub fn gone(map_id: &str, reason: MapGone) -> AppError {
        AppError::MapNotFound { map_id: map_id.to_owned(), reason, registered_as: None }
    }
}

/// Why a registered map, or something stored with it, cannot be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapGone {
    /// No map has this ID.
    UnknownId,
    /// The file is no longer at its registered place.
    FileMissing,
    /// The file's content changed since it was registered.
    FileChanged,
    /// Its map root is no longer allowed by the settings.
    RootNoLongerAllowed,
    /// No revision artifact, layout or reading has this map, ID and name.
    UnknownArtifact,
    /// No knowledge bundle has this ID (the ID is in `map_id`'s place).
    UnknownBundle,
    /// The map has no stored layout with legend colours yet.
    NoLayout,
}

impl MapGone {
    /// The `details.reason` of this case.
    pub fn reason(self) -> &'static str {
        match self {
            MapGone::UnknownId => "unknown_map_id",
            MapGone::FileMissing => "file_missing",
            MapGone::FileChanged => "file_changed",
            MapGone::RootNoLongerAllowed => "root_no_longer_allowed",
            MapGone::UnknownArtifact => "unknown_artifact",
            MapGone::UnknownBundle => "unknown_bundle",
            MapGone::NoLayout => "no_layout",
        }
    }
}

/// Why the map's own labels gave no georeference, and what was read.
#[derive(Debug)]
pub struct LabelsFailure {
    /// `details.reason`: `no_neatline` or `too_few_labels`.
    pub reason: &'static str,
    /// What is missing, in plain words.
    pub why: String,
    /// Every line read in the ring around the neatline.
    pub labels: Vec<LabelReport>,
    /// The neatline's corners, when one was found.
    pub corners: Option<[[f64; 2]; 4]>,
}

/// What is wrong with an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentProblem {
    /// A required field is absent.
    Missing,
    /// A field the request does not take.
    UnknownField,
    /// A value of the wrong JSON type or out of range.
    WrongValue,
    /// An argument that cannot go with another one.
    Conflict,
}

impl ArgumentProblem {
    /// The wire name in `details.problem`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArgumentProblem::Missing => "missing",
            ArgumentProblem::UnknownField => "unknown_field",
            ArgumentProblem::WrongValue => "wrong_value",
            ArgumentProblem::Conflict => "conflict",
        }
    }
}

/// One argument that does not fit the request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} at {field}: expected {expected}", problem.as_str())]
pub struct ArgumentError {
    /// JSON pointer into the arguments, e.g. `/path`.
    pub field: String,
    /// What is wrong.
    pub problem: ArgumentProblem,
    /// What would be accepted, in words.
    pub expected: String,
}

impl ArgumentError {
    /// `field` holds a value that is not accepted; `expected` says what is.
    pub fn wrong(field: &str, expected: impl Into<String>) -> ArgumentError {
        ArgumentError { field: field.to_owned(), problem: ArgumentProblem::WrongValue, expected: expected.into() }
    }

    /// `field` cannot go with another argument; `expected` says what can.
    pub fn conflict(field: &str, expected: impl Into<String>) -> ArgumentError {
        ArgumentError { field: field.to_owned(), problem: ArgumentProblem::Conflict, expected: expected.into() }
    }

    /// `field` is required and absent; `expected` says what it takes.
    pub fn missing(field: &str, expected: impl Into<String>) -> ArgumentError {
        ArgumentError { field: field.to_owned(), problem: ArgumentProblem::Missing, expected: expected.into() }
    }

    /// A short phrase for messages.
    pub fn problem_text(&self) -> &'static str {
        match self.problem {
            ArgumentProblem::Missing => "a required argument is missing",
            ArgumentProblem::UnknownField => "an argument this tool does not take",
            ArgumentProblem::WrongValue => "a value of the wrong type",
            ArgumentProblem::Conflict => "arguments that cannot go together",
        }
    }
}

/// A request read from JSON (absent counts as `{}`), or the field that does not fit, by JSON pointer.
pub fn from_json<T: DeserializeOwned>(value: Option<serde_json::Map<String, serde_json::Value>>) -> Result<T, ArgumentError> {
    let value = serde_json::Value::Object(value.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|error| {
        let mut field = geomap_model::json_pointer(&error);
        let message = error.inner().to_string();
        let quoted = |prefix: &str| message.strip_prefix(prefix).and_then(|rest| rest.split('`').next()).map(str::to_owned);
        let expected_text = message.split_once("expected ").map(|(_, e)| e.trim_end_matches('.').to_owned());
        let (problem, expected) = if quoted("missing field `").is_some() {
            (ArgumentProblem::Missing, "a value (this argument is required)".to_owned())
        } else if let Some(name) = quoted("unknown field `") {
            // The path already ends at the unknown field itself.
            if !field.ends_with(&format!("/{name}")) {
                field.push_str(&format!("/{name}"));
            }
            let allowed = expected_text.unwrap_or_else(|| "no fields".to_owned());
            (ArgumentProblem::UnknownField, format!("no such argument; allowed: {}", allowed.replace("one of ", "")))
        } else {
            (ArgumentProblem::WrongValue, expected_text.unwrap_or(message.clone()))
        };
        if field.is_empty() {
            field.push('/');
        }
        ArgumentError { field, problem, expected }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        path: String,
        points: Option<Vec<u32>>,
    }

    fn error_for(value: serde_json::Value) -> ArgumentError {
        let serde_json::Value::Object(map) = value else { unreachable!() };
        from_json::<Args>(Some(map)).unwrap_err()
    }

    #[test]
    fn a_missing_field_is_named_by_pointer() {
        let error = error_for(json!({}));
        assert_eq!((error.field.as_str(), error.problem), ("/path", ArgumentProblem::Missing));
    }

    #[test]
    fn a_wrong_type_names_the_field_and_the_expected_type() {
        let error = error_for(json!({"path": 5}));
        assert_eq!((error.field.as_str(), error.problem, error.expected.as_str()), ("/path", ArgumentProblem::WrongValue, "a string"));
        let nested = error_for(json!({"path": "a", "points": [1, "x"]}));
        assert_eq!(nested.field, "/points/1");
    }

    #[test]
    fn an_unknown_field_is_named_with_the_allowed_ones() {
        let error = error_for(json!({"path": "a", "pth": "b"}));
        assert_eq!((error.field.as_str(), error.problem), ("/pth", ArgumentProblem::UnknownField));
        assert!(error.expected.contains("`path`"), "{}", error.expected);
    }

    #[test]
    fn absent_arguments_count_as_an_empty_object() {
        #[derive(Deserialize)]
        struct Nothing {}
        assert!(from_json::<Nothing>(None).is_ok());
    }
}
