//! Stable error codes, the `geomap-error/v1` envelope, and the pieces every
//! edge assembles one from ([`failure`], [`scrub`]).
//!
//! Domain crates never build envelopes: they return their own typed errors.
//! The server's `mcp::adapter` is the one place that turns those into an
//! [`Envelope`]; the assets crate keeps the mapping of its own errors
//! (`geomap_assets::failure`) because its command line is an edge too.

pub mod failure;
pub mod scrub;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Every stable error code an agent can branch on. The doc comment of each
/// variant says who can act on it; README.md carries the same table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Agent: fix the argument named by the JSON pointer in `details.field`.
    InvalidArguments,
    /// Agent: fix bounds, CRS or control points as the message says (no hints).
    InvalidBounds,
    /// Agent: georeference the map, then ask again.
    GeorefRequired,
    /// Agent: the map's own labels gave no georeference; pass `bounds` or `control_points`, read the margins, or ask the user.
    TooFewLabels,
    /// Agent: the map ID is unknown or its file changed or vanished; register the map again.
    ArtifactNotFound,
    /// Agent (refresh the tool list), or the operator when the tool is withheld by settings.
    UnknownTool,
    /// Agent (provider name, capability, options) or operator (runtime failure): `details.reason` tells which.
    UnknownProvider,
    /// User consent (then the prepare tool), or the operator's command.
    MissingExtra,
    /// User consent, then `geomap_prepare_knowledge`; or the operator.
    MissingKnowledgeAsset,
    /// Agent or user: another file of a supported type; else the operator.
    UnsupportedMedia,
    /// Agent or user: a smaller derived file; else the operator raises the named limit.
    OversizeImage,
    /// Operator: the path is outside every allowed map root, or escapes one.
    PathNotAllowed,
    /// Operator: the registry file cannot be read; move it aside as the hint says.
    RegistryCorrupt,
    /// Operator: an asset path the installer does not manage.
    AssetPathUnmanaged,
    /// Operator: installing an asset failed.
    InstallFailed,
    /// Operator: a system library or database the server needs is missing.
    MissingSystemDependency,
    /// Operator, with the trace ID; the agent may retry once when the call is safe to repeat.
    InternalError,
    /// Never over MCP (a withheld tool is `unknown_tool`): CLI and library only.
    PreparationDisabled,
}

impl ErrorCode {
    /// Every code, in the order README.md documents them.
    pub const ALL: [ErrorCode; 18] = [
        ErrorCode::InvalidArguments,
        ErrorCode::InvalidBounds,
        ErrorCode::GeorefRequired,
        ErrorCode::TooFewLabels,
        ErrorCode::ArtifactNotFound,
        ErrorCode::UnknownTool,
        ErrorCode::UnknownProvider,
        ErrorCode::MissingExtra,
        ErrorCode::MissingKnowledgeAsset,
        ErrorCode::UnsupportedMedia,
        ErrorCode::OversizeImage,
        ErrorCode::PathNotAllowed,
        ErrorCode::RegistryCorrupt,
        ErrorCode::AssetPathUnmanaged,
        ErrorCode::InstallFailed,
        ErrorCode::MissingSystemDependency,
        ErrorCode::InternalError,
        ErrorCode::PreparationDisabled,
    ];

    /// The wire name, as it appears in envelopes and the log line.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::InvalidBounds => "invalid_bounds",
            ErrorCode::GeorefRequired => "georef_required",
            ErrorCode::TooFewLabels => "too_few_labels",
            ErrorCode::ArtifactNotFound => "artifact_not_found",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::UnknownProvider => "unknown_provider",
            ErrorCode::MissingExtra => "missing_extra",
            ErrorCode::MissingKnowledgeAsset => "missing_knowledge_asset",
            ErrorCode::UnsupportedMedia => "unsupported_media",
            ErrorCode::OversizeImage => "oversize_image",
            ErrorCode::PathNotAllowed => "path_not_allowed",
            ErrorCode::RegistryCorrupt => "registry_corrupt",
            ErrorCode::AssetPathUnmanaged => "asset_path_unmanaged",
            ErrorCode::InstallFailed => "install_failed",
            ErrorCode::MissingSystemDependency => "missing_system_dependency",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::PreparationDisabled => "preparation_disabled",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The documented allowlist for the envelope's `cause`: the underlying failure
/// behind a code, never free text. `details.reason` names the sub-case of a
/// code; `cause` names what went wrong underneath.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// A tool panicked; the backtrace is in the server log under the trace ID.
    Panic,
    /// An operating-system I/O call failed.
    Io,
    /// A file the server owns is not valid JSON.
    InvalidJson,
    /// A file the server owns has a schema version this server does not know.
    UnknownSchemaVersion,
    /// GDAL failed reading a scan or writing an output.
    Gdal,
    /// The registry database (SQLite) failed or reports damage.
    Database,
    /// A knowledge asset a provider needs is not installed.
    AssetNotInstalled,
}

/// A tool call a recovery hint names, exactly (`details.next_call`): an agent may make it
/// instead of parsing the hint, asking the user first when `ask_user` says so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NextCall {
    /// The tool to call.
    pub tool: String,
    /// Its exact arguments.
    pub arguments: Map<String, Value>,
    /// Whether the user must agree first (the call downloads, or writes to the server's disk).
    pub ask_user: bool,
}

impl NextCall {
    /// A call of `tool` with `arguments` (a JSON object).
    pub fn new(tool: &str, arguments: Value, ask_user: bool) -> NextCall {
        let Value::Object(arguments) = arguments else { unreachable!("arguments are always built as objects") };
        NextCall { tool: tool.to_owned(), arguments, ask_user }
    }
}

/// The envelope's fixed schema tag: `V1` is `geomap-error/v1` (inlined in JSON
/// schemas as a constant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub enum EnvelopeSchema {
    #[allow(missing_docs)]
    #[serde(rename = "geomap-error/v1")]
    V1,
}

/// A failed tool call, as the agent receives it (`geomap-error/v1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "geomap-error/v1")]
pub struct Envelope {
    /// Always `geomap-error/v1`.
    pub schema: EnvelopeSchema,
    /// The stable code to branch on.
    pub code: ErrorCode,
    /// Complete on its own: says what failed and repeats the remedy.
    pub message: String,
    /// 32 lowercase hex characters; the same ID is on the server's log line.
    #[schemars(regex(pattern = r"^[0-9a-f]{32}$"))]
    pub trace_id: String,
    /// Whether repeating the same call unchanged may succeed.
    pub retryable: bool,
    /// Machine-readable facts (never a server path, secret or stack trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Map<String, Value>>,
    /// The underlying failure, from the documented allowlist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// Next steps computed from this server's settings at the moment of failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovery_hints: Vec<String>,
}

impl Envelope {
    /// An envelope with the required fields; add the rest with the `with_*` methods.
    pub fn new(code: ErrorCode, message: impl Into<String>, trace_id: impl Into<String>) -> Self {
        Envelope {
            schema: EnvelopeSchema::V1,
            code,
            message: message.into(),
            trace_id: trace_id.into(),
            retryable: false,
            details: None,
            cause: None,
            recovery_hints: Vec::new(),
        }
    }

    /// Sets `details` (an empty object is left out).
    pub fn with_details(mut self, details: Map<String, Value>) -> Self {
        self.details = (!details.is_empty()).then_some(details);
        self
    }

    /// Sets `cause`.
    pub fn with_cause(mut self, cause: Option<Cause>) -> Self {
        self.cause = cause;
        self
    }

    /// Sets the recovery hints.
    pub fn with_hints(mut self, hints: Vec<String>) -> Self {
        self.recovery_hints = hints;
        self
    }

    /// Sets `retryable`.
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_serializes_to_its_wire_name() {
        for code in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), Value::String(code.as_str().into()));
        }
    }

    #[test]
    fn every_code_is_in_the_readme_table() {
        let readme = include_str!("../../../../README.md");
        for code in ErrorCode::ALL {
            assert!(readme.contains(&format!("| `{code}` |")), "README.md has no table row for {code}");
        }
    }

    #[test]
    fn optional_fields_are_left_out_when_empty() {
        let envelope = Envelope::new(ErrorCode::InternalError, "m", "0".repeat(32)).with_details(Map::new());
        let json = serde_json::to_value(&envelope).unwrap();
        let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["schema", "code", "message", "trace_id", "retryable"]);
        assert_eq!(json["schema"], "geomap-error/v1");
    }
}
