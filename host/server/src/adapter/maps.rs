//! Registered maps and artifacts that are gone or too large to send: `artifact_not_found`, `oversize_image`.

use std::path::Path;

use serde_json::json;

use geomap_app::MapGone;
use geomap_app::layout::TOOL as LAYOUT_TOOL;
use geomap_app::maps::REGISTER_TOOL;
use geomap_app::uris::MAX_RESOURCE_BLOB_BYTES;
use geomap_model::errors::{Cause, ErrorCode, NextCall};

use geomap_model::errors::failure::{FailedCall, Parts, parts};

pub(super) fn describe_map_gone(map_id: &str, reason: MapGone, registered_as: Option<&str>) -> Parts {
    if reason == MapGone::UnknownBundle {
        let again = "Call geomap_query_knowledge again: every call writes a new bundle and returns its bundle_id.".to_owned();
        return parts(
            ErrorCode::ArtifactNotFound,
            format!("No knowledge bundle has the ID {map_id}. {again}"),
            json!({ "bundle_id": map_id, "reason": reason.reason() }),
            vec![again],
        );
    }
    if reason == MapGone::NoLayout {
        let first = format!("Call {LAYOUT_TOOL} {{\"map_id\": \"{map_id}\"}} first, then ask again.");
        return Parts {
            next_call: Some(NextCall::new(LAYOUT_TOOL, json!({ "map_id": map_id }), false)),
            ..parts(
                ErrorCode::ArtifactNotFound,
                format!("No layout of map {map_id} has legend swatches with colours to compare with. {first}"),
                json!({ "map_id": map_id, "reason": reason.reason() }),
                vec![first],
            )
        };
    }
    let again = match registered_as {
        Some(path) => format!(
            "Register the map again with {REGISTER_TOOL} {{\"path\": \"{path}\"}} (its path relative to the first map root when that is where it was) and use the new map_id."
        ),
        None => format!("Register the map's file with {REGISTER_TOOL} and use the map_id it returns."),
    };
    let what = match reason {
        MapGone::UnknownId => "No map is registered with this ID",
        MapGone::FileMissing => "The map's file is no longer where it was registered",
        MapGone::FileChanged => "The map's file changed on disk since it was registered",
        MapGone::RootNoLongerAllowed => "The map's folder is no longer an allowed map root",
        MapGone::UnknownArtifact | MapGone::UnknownBundle | MapGone::NoLayout => {
            "No revision file has this map, revision and name (geomap_describe_map lists them)"
        }
    };
    // The path is the one it was registered with, relative to its map root: never a server path.
    let next_call = registered_as.map(|path| NextCall::new(REGISTER_TOOL, json!({ "path": path }), false));
    let message = format!("{what} (map_id {map_id}). {again}");
    Parts { next_call, ..parts(ErrorCode::ArtifactNotFound, message, json!({ "map_id": map_id, "reason": reason.reason() }), vec![again]) }
}

/// An artifact over the size `resources/read` sends.
pub(super) fn describe_artifact_too_large(name: &str, bytes: u64, path: &Path) -> Parts {
    let limit = MAX_RESOURCE_BLOB_BYTES;
    let open = format!("Open the file directly instead, in QGIS or GDAL: {}", path.display());
    parts(
        ErrorCode::OversizeImage,
        format!("{name} has {bytes} bytes, more than the {limit} this server sends as an MCP resource. {open}"),
        json!({ "limit": "resource_blob_bytes", "limit_value": limit, "actual": bytes, "unit": "bytes" }),
        vec![open],
    )
}

/// The data root failed under a call while `stage` (`storing`, `reading`): the operator's to fix
/// (full, not writable, damaged), cause `io`; `detail` goes to the log only.
pub(super) fn describe_storage(stage: &str, detail: &str, call: &FailedCall<'_>) -> Parts {
    tracing::error!("trace_id={} the data root failed while {stage}: {detail}", call.trace_id);
    let report = format!(
        "Report trace_id {} to the operator: the server could not write or read its files in its data root (full or not writable); the log says which.",
        call.trace_id
    );
    Parts {
        cause: Some(Cause::Io),
        ..parts(ErrorCode::InternalError, format!("The server's disk failed while it worked on the call. {report}"), json!({ "stage": stage }), vec![report])
    }
}
