//! The one adapter from domain errors to `geomap-error/v1` envelopes.
//!
//! Invariants: every failure of a tool call passes through [`envelope_for`];
//! hints are computed here from the settings at the moment of failure;
//! `details` are scrubbed of server paths before they leave.

use serde_json::{Map, Value, json};

use crate::errors::{Cause, Envelope, ErrorCode};
use crate::georef::GeorefError;
use crate::media::{Limit, MediaError, MediaType};
use crate::registry::{CorruptProblem, RegistryError};
use crate::roots::RootsError;
use crate::settings::Settings;
use crate::trace::TraceId;

use super::arguments::ArgumentError;

/// Why a registered map can no longer be described.
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
    /// No revision artifact has this map, revision and name.
    UnknownArtifact,
}

impl MapGone {
    fn reason(self) -> &'static str {
        match self {
            MapGone::UnknownId => "unknown_map_id",
            MapGone::FileMissing => "file_missing",
            MapGone::FileChanged => "file_changed",
            MapGone::RootNoLongerAllowed => "root_no_longer_allowed",
            MapGone::UnknownArtifact => "unknown_artifact",
        }
    }
}

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
    /// Georeferencing failed.
    #[error(transparent)]
    Georef(#[from] GeorefError),
    /// A registered map is gone or unknown.
    #[error("map {map_id} is not available ({reason:?})")]
    MapNotFound { map_id: String, reason: MapGone, registered_as: Option<String> },
    /// An artifact is too large to send as an MCP resource.
    #[error("artifact {name} has {bytes} bytes")]
    ArtifactTooLarge { name: String, bytes: u64, path: std::path::PathBuf },
    /// The tool panicked; the backtrace is in the log.
    #[error("the tool panicked")]
    Panic,
}

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

/// Turns `error` into the envelope the agent receives.
pub fn envelope_for(error: &ToolError, call: &FailedCall<'_>) -> Envelope {
    let parts = describe(error, call);
    let mut details = parts.details;
    scrub_details(&mut details, call.settings);
    let hints = parts.hints.into_iter().map(|hint| hint.replace('\n', " ")).collect();
    Envelope::new(parts.code, parts.message, call.trace_id.as_str())
        .with_details(details)
        .with_cause(parts.cause)
        .with_hints(hints)
        .with_retryable(parts.code == ErrorCode::InternalError && call.idempotent)
}

struct Parts {
    code: ErrorCode,
    message: String,
    details: Map<String, Value>,
    cause: Option<Cause>,
    hints: Vec<String>,
}

fn parts(code: ErrorCode, message: String, details: Value, hints: Vec<String>) -> Parts {
    let Value::Object(details) = details else { unreachable!("details are always built as objects") };
    Parts { code, message, details, cause: None, hints }
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
        ToolError::MapPath { requested, error } => describe_path(requested, error, settings),
        ToolError::Media(error) => describe_media(error, settings),
        ToolError::Registry(error) => describe_registry(error),
        ToolError::Georef(error) => describe_georef(error, call),
        ToolError::MapNotFound { map_id, reason, registered_as } => {
            let again = match registered_as {
                Some(path) => format!(
                    "Register the map again with geomap_register_map {{\"path\": \"{path}\"}} (its path relative to the first map root when that is where it was) and use the new map_id."
                ),
                None => "Register the map's file with geomap_register_map and use the map_id it returns.".to_owned(),
            };
            let what = match reason {
                MapGone::UnknownId => "No map is registered with this ID",
                MapGone::FileMissing => "The map's file is no longer where it was registered",
                MapGone::FileChanged => "The map's file changed on disk since it was registered",
                MapGone::RootNoLongerAllowed => "The map's folder is no longer an allowed map root",
                MapGone::UnknownArtifact => "No revision file has this map, revision and name (geomap_describe_map lists them)",
            };
            parts(
                ErrorCode::ArtifactNotFound,
                format!("{what} (map_id {map_id}). {again}"),
                json!({ "map_id": map_id, "reason": reason.reason() }),
                vec![again],
            )
        }
        ToolError::ArtifactTooLarge { name, bytes, path } => {
            let limit = super::tools::MAX_RESOURCE_BLOB_BYTES;
            let open = format!("Open the file directly instead, in QGIS or GDAL: {}", path.display());
            parts(
                ErrorCode::OversizeImage,
                format!("{name} has {bytes} bytes, more than the {limit} this server sends as an MCP resource. {open}"),
                json!({ "limit": "resource_blob_bytes", "limit_value": limit, "actual": bytes, "unit": "bytes" }),
                vec![open],
            )
        }
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
    }
}

fn roots_list(settings: &Settings) -> String {
    settings.map_roots.iter().map(|root| root.display().to_string()).collect::<Vec<_>>().join(", ")
}

fn describe_path(requested: &str, error: &RootsError, settings: &Settings) -> Parts {
    let first_root = settings.map_roots[0].display();
    let inside = format!("Register a file inside an allowed map root ({}); relative paths resolve against {first_root}.", roots_list(settings));
    let operator = format!(
        "If the file must stay where it is, ask the operator to add its folder to GEOMAP_MAP_ROOTS (now: {}) and restart the server.",
        roots_list(settings)
    );
    let detail = |reason: &str| json!({ "reason": reason, "requested": requested });
    let (code, reason, what, hints) = match error {
        RootsError::NulByte => (ErrorCode::PathNotAllowed, "nul_byte", "The path contains a NUL byte", vec![inside]),
        RootsError::OutsideRoots => (ErrorCode::PathNotAllowed, "outside_roots", "The path is outside every allowed map root", vec![inside, operator]),
        RootsError::EscapesRoot => (
            ErrorCode::PathNotAllowed,
            "escapes_root",
            "The path leads out of its map root through '..' or a symbolic link",
            vec![inside, "Copy the file itself into the map root instead of linking to it.".to_owned()],
        ),
        RootsError::NonUtf8Name => (
            ErrorCode::PathNotAllowed,
            "non_utf8_name",
            "The file's resolved name is not valid UTF-8 and cannot be recorded",
            vec!["Ask the user to rename the file (and its folders) to UTF-8 names, then register it again.".to_owned()],
        ),
        RootsError::Unreadable(_) => (
            ErrorCode::PathNotAllowed,
            "unreadable",
            "The server may not read this file",
            vec![format!("Ask the operator to make the file readable by the user the server runs as. {inside}")],
        ),
        RootsError::NotFound => {
            (ErrorCode::InvalidArguments, "file_not_found", "No file exists at this path", vec![format!("Check the path for typos. {inside}")])
        }
        RootsError::NotAFile => (
            ErrorCode::InvalidArguments,
            "not_a_file",
            "The path names a folder or another non-regular file",
            vec![format!("Give the path of the scan file itself. {inside}")],
        ),
    };
    let mut details = detail(reason);
    if code == ErrorCode::InvalidArguments {
        details["field"] = json!("/path");
    }
    let message = format!("{what}: {requested:?}. {}", hints[0]);
    let mut result = parts(code, message, details, hints);
    if let RootsError::Unreadable(_) = error {
        result.cause = Some(Cause::Io);
    }
    result
}

fn supported_list() -> String {
    MediaType::SUPPORTED.iter().map(|t| t.mime()).collect::<Vec<_>>().join(", ")
}

fn describe_media(error: &MediaError, settings: &Settings) -> Parts {
    let first_root = settings.map_roots[0].display();
    let supported: Vec<&str> = MediaType::SUPPORTED.iter().map(|t| t.mime()).collect();
    match error {
        MediaError::Unsupported { detected } => {
            let convert = format!(
                "Or convert it to GeoTIFF first, e.g. `gdal_translate -of GTiff -co COMPRESS=DEFLATE input output.tif`, save the result in {first_root} and register that."
            );
            parts(
                ErrorCode::UnsupportedMedia,
                format!("The file is {detected}; this server registers only {}. Register a PNG, JPEG or TIFF scan instead.", supported_list()),
                json!({ "detected": detected, "supported": supported }),
                vec![format!("Register another file of a supported type ({}).", supported_list()), convert],
            )
        }
        MediaError::UnreadableHeader { media_type } => parts(
            ErrorCode::UnsupportedMedia,
            format!("The file starts like {} but its header is damaged or truncated. Register an intact copy of the scan.", media_type.mime()),
            json!({ "detected": media_type.mime(), "reason": "unreadable_header", "supported": supported }),
            vec!["Register an intact copy of the scan (re-export or re-download it).".to_owned()],
        ),
        MediaError::Oversize { limit, bytes, width, height, limits } => {
            describe_oversize(*limit, *bytes, *width, *height, limits.max_bytes, limits.max_pixels, settings)
        }
        MediaError::Io(_) => Parts {
            cause: Some(Cause::Io),
            ..parts(
                ErrorCode::InternalError,
                "Reading the map file failed. Report the trace_id to the operator.".to_owned(),
                json!({}),
                vec!["Report the trace_id to the operator; the log line under it names the failure.".to_owned()],
            )
        },
    }
}

fn describe_oversize(limit: Limit, bytes: u64, width: Option<u64>, height: Option<u64>, max_bytes: u64, max_pixels: u64, settings: &Settings) -> Parts {
    let first_root = settings.map_roots[0].display();
    let (variable, actual, maximum, unit) = match (limit, width.zip(height)) {
        (Limit::Pixels, Some((w, h))) => ("GEOMAP_MAX_IMAGE_PIXELS", w * h, max_pixels, "pixels"),
        _ => ("GEOMAP_MAX_IMAGE_BYTES", bytes, max_bytes, "bytes"),
    };
    // Scaling both sides by p/100 scales pixels (and roughly bytes) by (p/100)^2.
    let percent = ((maximum as f64 / actual as f64).sqrt() * 100.0).floor().clamp(1.0, 99.0) as u64;
    let mut derived = format!(
        "Register a smaller derived file instead: e.g. `gdal_translate -outsize {percent}% {percent}% -co COMPRESS=DEFLATE scan.tif scan_small.tif`, saved in {first_root}"
    );
    if let Some((w, h)) = width.zip(height) {
        let (sw, sh) = (w * percent / 100, h * percent / 100);
        derived.push_str(&format!(" (about {sw}×{sh} = {} pixels)", sw * sh));
    }
    derived.push('.');
    let operator = format!("Or ask the operator to raise {variable} (now {maximum}) to at least {actual} and restart the server.");
    let size = match width.zip(height) {
        Some((w, h)) => format!("{w}×{h} = {} pixels", w * h),
        None => format!("{bytes} bytes"),
    };
    let mut details = json!({ "limit": variable, "limit_value": maximum, "actual": actual, "unit": unit, "bytes": bytes });
    if let Some((w, h)) = width.zip(height) {
        details["width"] = json!(w);
        details["height"] = json!(h);
    }
    parts(ErrorCode::OversizeImage, format!("The image is {size}, over this server's limit {variable}={maximum}. {derived}"), details, vec![derived, operator])
}

fn describe_registry(error: &RegistryError) -> Parts {
    match error {
        RegistryError::Corrupt { path, problem } => {
            let (reason, extra) = match problem {
                CorruptProblem::InvalidJson(_) => ("invalid_json", Cause::InvalidJson),
                CorruptProblem::UnknownSchema(_) => ("unknown_schema_version", Cause::UnknownSchemaVersion),
            };
            let fix = format!(
                "Operator: stop the server, move the registry aside (`mv {0} {0}.corrupt`) and start it again; maps registered before must then be registered again.",
                path.display()
            );
            Parts {
                cause: Some(extra),
                ..parts(
                    ErrorCode::RegistryCorrupt,
                    format!("The server's registry file cannot be read, so nothing can be registered or looked up. {fix}"),
                    json!({ "reason": reason }),
                    vec![fix, "Tell the operator the trace_id; the server never repairs the file by itself.".to_owned()],
                )
            }
        }
        RegistryError::Io { action, .. } => Parts {
            cause: Some(Cause::Io),
            ..parts(
                ErrorCode::InternalError,
                format!("The server could not {action} its registry. Report the trace_id to the operator."),
                json!({ "action": action }),
                vec!["Operator: check free space and write permission on GEOMAP_DATA_ROOT; the log line under the trace_id names the failure.".to_owned()],
            )
        },
    }
}

fn describe_georef(error: &GeorefError, call: &FailedCall<'_>) -> Parts {
    match error {
        // The agent reads the message: it names what is wrong and what is accepted.
        GeorefError::InvalidBounds(message) => parts(ErrorCode::InvalidBounds, message.clone(), json!({}), Vec::new()),
        GeorefError::MissingDependency { what, .. } => {
            let install = format!(
                "Operator: install GDAL with its {} drivers and PROJ's database (Debian/Ubuntu: sudo apt-get install gdal-bin proj-data), check that PROJ_DATA (or PROJ_LIB) is unset or points at the folder holding proj.db, then restart the server; `stratigraphic-amenity check` shows what it finds.",
                crate::georef::REQUIRED_DRIVERS.join(", ")
            );
            parts(
                ErrorCode::MissingSystemDependency,
                format!("{} cannot georeference: the server is missing {what}. {install}", call.tool),
                json!({ "missing": what }),
                vec![install, format!("Tell the operator the trace_id {}.", call.trace_id)],
            )
        }
        GeorefError::Gdal { action, .. } | GeorefError::Io { action, .. } => Parts {
            cause: Some(if matches!(error, GeorefError::Gdal { .. }) { Cause::Gdal } else { Cause::Io }),
            ..parts(
                ErrorCode::InternalError,
                format!("{} failed: the server could not {action}. Report the trace_id {} to the operator.", call.tool, call.trace_id),
                json!({ "action": action }),
                vec![format!("Report trace_id {} to the operator; the log line under it has GDAL's message.", call.trace_id)],
            )
        },
    }
}

/// Replaces every server path in string values of `details` with a placeholder:
/// map roots become `<map_root_N>`, the data root `<data_root>`, any other
/// absolute path `<path>`. `field` is exempt: it is a JSON pointer into the
/// call's arguments, never a filesystem path.
pub fn scrub_details(details: &mut Map<String, Value>, settings: &Settings) {
    for (key, value) in details.iter_mut() {
        if key != "field" {
            scrub_value(value, settings);
        }
    }
}

fn scrub_value(value: &mut Value, settings: &Settings) {
    match value {
        Value::String(text) => *text = scrub_text(text, settings),
        Value::Array(items) => items.iter_mut().for_each(|item| scrub_value(item, settings)),
        Value::Object(map) => map.values_mut().for_each(|item| scrub_value(item, settings)),
        _ => {}
    }
}

fn scrub_text(text: &str, settings: &Settings) -> String {
    let mut known: Vec<(String, String)> =
        settings.map_roots.iter().enumerate().map(|(i, root)| (root.display().to_string(), format!("<map_root_{}>", i + 1))).collect();
    known.push((settings.data_root.display().to_string(), "<data_root>".to_owned()));
    known.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let mut out = text.to_owned();
    for (path, placeholder) in &known {
        out = replace_path_prefix(&out, path, placeholder);
    }
    // Any absolute path left: from a '/' at the start or after a separator, to the next separator.
    let mut scrubbed = String::with_capacity(out.len());
    let mut chars = out.chars().peekable();
    let mut previous: Option<char> = None;
    while let Some(c) = chars.next() {
        let starts_path = c == '/' && previous.is_none_or(|p| p.is_whitespace() || "\"'(=:,[".contains(p));
        if starts_path {
            while chars.peek().is_some_and(|n| !n.is_whitespace() && !"\"')],".contains(*n)) {
                chars.next();
            }
            scrubbed.push_str("<path>");
            previous = Some('>');
        } else {
            scrubbed.push(c);
            previous = Some(c);
        }
    }
    scrubbed
}

/// Replaces `path` where it is followed by a path boundary, so `/maps` does not match `/maps_evil`.
fn replace_path_prefix(text: &str, path: &str, placeholder: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(path) {
        let after = &rest[at + path.len()..];
        out.push_str(&rest[..at]);
        if after.is_empty() || after.starts_with('/') || !after.starts_with(|c: char| c.is_alphanumeric() || "_-.".contains(c)) {
            out.push_str(placeholder);
        } else {
            out.push_str(path);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::MediaLimits;
    use std::path::PathBuf;

    fn settings() -> Settings {
        let mut settings = Settings::load(|name| (name == "GEOMAP_DATA_ROOT").then(|| "/srv/geomap".into())).unwrap();
        settings.map_roots = vec![PathBuf::from("/data/maps"), PathBuf::from("/mnt/scans")];
        settings
    }

    fn envelope(error: ToolError, idempotent: bool) -> Envelope {
        let trace_id = TraceId::random();
        let settings = settings();
        envelope_for(&error, &FailedCall { tool: "geomap_register_map", idempotent, trace_id: &trace_id, settings: &settings })
    }

    #[test]
    fn scrubbing_replaces_roots_with_placeholders_and_other_paths_entirely() {
        let s = settings();
        assert_eq!(scrub_text("/data/maps/sub/a.png", &s), "<map_root_1>/sub/a.png");
        assert_eq!(scrub_text("/data/maps_evil/a.png", &s), "<path>");
        assert_eq!(scrub_text("open /srv/geomap/registry.json: denied", &s), "open <data_root>/registry.json: denied");
        assert_eq!(scrub_text("at (/home/u/x.rs:3) and '/etc/passwd'", &s), "at (<path>) and '<path>'");
        assert_eq!(scrub_text("a/b relative stays", &s), "a/b relative stays");
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
}
