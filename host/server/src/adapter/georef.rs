//! Georeferencing failures: `invalid_bounds`, `too_few_labels`, `missing_system_dependency`, `internal_error`.

use serde_json::json;

use geomap_app::error::LabelsFailure;
use geomap_georef::GeorefError;
use geomap_model::errors::{Cause, ErrorCode};

use geomap_model::errors::failure::{FailedCall, Parts, parts};

pub(super) fn describe_georef(error: &GeorefError, call: &FailedCall<'_>) -> Parts {
    match error {
        // The agent reads the message: it names what is wrong and what is accepted.
        GeorefError::InvalidBounds(message) => parts(ErrorCode::InvalidBounds, message.clone(), json!({}), Vec::new()),
        GeorefError::MissingDependency { what, .. } => {
            let install = format!(
                "Operator: install GDAL with its {} drivers and PROJ's database (Debian/Ubuntu: sudo apt-get install gdal-bin proj-data), check that PROJ_DATA (or PROJ_LIB) is unset or points at the folder holding proj.db, then restart the server; `stratigraphic-amenity check` shows what it finds.",
                geomap_georef::REQUIRED_DRIVERS.join(", ")
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
        GeorefError::Cancelled => geomap_model::errors::failure::cancelled(call),
    }
}

/// The map's labels gave no georeference: every line read in the ring with why it could not be
/// used, and the three ways on (the agent's own placement, reading the margins, the user).
pub(super) fn describe_too_few_labels(failure: &LabelsFailure) -> Parts {
    let LabelsFailure { reason, why, labels, corners } = failure;
    let read: Vec<serde_json::Value> = labels
        .iter()
        .map(|label| {
            let mut entry = json!({ "text": label.text, "bbox": label.bbox, "score": label.score });
            if let Some(edge) = label.edge {
                entry["edge"] = json!(edge);
            }
            if let Some(value) = label.value {
                entry["value"] = json!(value);
            }
            entry["reason"] = json!(label.reason.as_deref().unwrap_or("usable, but the labels of the other axis are not"));
            entry
        })
        .collect();
    let mut details = json!({ "reason": reason, "labels": read });
    if let Some(corners) = corners {
        details["neatline_corners"] = json!(corners); // where the ring was read: [col, row], clockwise from the top left
    }
    parts(
        ErrorCode::TooFewLabels,
        format!(
            "geomap_georeference could not read a georeference from the map's own labels: {why}. Give the placement yourself, read the margins, or ask the user."
        ),
        details,
        vec![
            "Call geomap_georeference again with crs and bounds (west, south, east, north of the map area) or control_points (col, row, x, y), if you know where the map is.".to_owned(),
            "Read the margins around the map's frame with geomap_read_text {map_id, region} to see the coordinate labels yourself, then pass them as control_points.".to_owned(),
            "Ask the user for the coordinates of the map's corners and its datum (for example NAD27, EPSG:4267).".to_owned(),
        ],
    )
}
