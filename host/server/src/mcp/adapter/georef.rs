//! Georeferencing failures: `invalid_bounds`, `missing_system_dependency`, `internal_error`.

use serde_json::json;

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
