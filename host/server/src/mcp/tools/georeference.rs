//! `geomap_georeference`: bounds or control points become a new revision.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_georef::{Bounds, ControlPoint, PixelRegion, Placement, Revision, TransformKind};
use geomap_model::trace;
use geomap_store::media::MediaError;

use super::{located, open_registered};
use crate::mcp::ServerState;
use crate::mcp::adapter::{MapGone, ToolError};
use crate::mcp::arguments::{ArgumentError, ArgumentProblem};
use crate::mcp::progress::{ProgressSink, ProgressUpdate};
use crate::mcp::uris::revision_dir;
use tokio_util::sync::CancellationToken;

/// Arguments of `geomap_georeference`: `bounds` (with an optional
/// `pixel_region`) or `control_points` (with an optional `transform`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeoreferenceArgs {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// Any CRS GDAL/PROJ accepts: EPSG:4326, EPSG:4267 (NAD27, common on USGS scans), EPSG:326xx (UTM), WKT, a PROJ string.
    pub crs: String,
    /// The CRS box that `pixel_region` covers (x = easting/longitude, y = northing/latitude).
    pub bounds: Option<Bounds>,
    /// The part of the scan the bounds cover, in whole pixels (default: the whole image).
    pub pixel_region: Option<PixelRegion>,
    /// Pixel → CRS points (col/row from the image's top-left corner; pixel centres at +0.5).
    pub control_points: Option<Vec<ControlPoint>>,
    /// How control points map pixels to the CRS (default affine).
    pub transform: Option<TransformKind>,
}

impl GeoreferenceArgs {
    /// The placement these arguments ask for, or the argument that does not fit.
    pub(crate) fn placement(&self) -> Result<Placement, ArgumentError> {
        let conflict =
            |field: &str, expected: &str| ArgumentError { field: field.to_owned(), problem: ArgumentProblem::Conflict, expected: expected.to_owned() };
        match (&self.bounds, &self.control_points) {
            (Some(_), Some(_)) => Err(conflict("/control_points", "either bounds or control_points, not both")),
            (None, None) => Err(ArgumentError {
                field: "/bounds".to_owned(),
                problem: ArgumentProblem::Missing,
                expected: "bounds (with an optional pixel_region) or control_points (with an optional transform)".to_owned(),
            }),
            (Some(bounds), None) => match self.transform {
                Some(kind) if kind != TransformKind::Affine => {
                    Err(conflict("/transform", "no transform with bounds (bounds always give an affine transform); use control_points for other transforms"))
                }
                _ => Ok(Placement::Bounds { bounds: *bounds, region: self.pixel_region }),
            },
            (None, Some(points)) => match self.pixel_region {
                Some(_) => Err(conflict("/pixel_region", "no pixel_region with control_points (their pixels say where they are)")),
                None => Ok(Placement::ControlPoints { points: points.clone(), transform: self.transform.unwrap_or_default() }),
            },
        }
    }
}

/// The result of `geomap_georeference`: the new revision, now the map's current one.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GeoreferenceReport {
    /// The map.
    pub map_id: String,
    /// The revision written.
    #[serde(flatten)]
    pub revision: Revision,
}

/// `geomap_georeference`: fit and write the artifacts, then record the revision in one registry transaction.
/// A cancelled call (`cancel`) stops at GDAL's next progress report and keeps nothing.
pub async fn georeference(
    state: Arc<ServerState>,
    args: GeoreferenceArgs,
    progress: Option<ProgressSink>,
    cancel: CancellationToken,
) -> Result<GeoreferenceReport, ToolError> {
    let placement = args.placement()?;
    let (updates, received) = tokio::sync::mpsc::unbounded_channel();
    let forwarding = progress.map(|sink| tokio::spawn(sink.forward(received)));
    let outcome = trace::spawn_blocking(move || {
        let map = open_registered(&state, &args.map_id)?;
        if !map.record.media_type.has_pixels() {
            return Err(MediaError::NoPixels { action: "georeference" }.into());
        }
        let revision_id = format!("rev_{}", geomap_model::random_hex(10));
        let output_dir = revision_dir(&state, &map.record.map_id, &revision_id);
        let scan_path = map.record.root.join(&map.record.relative_path);
        let scan = geomap_georef::Scan { file: &map.file, path: &scan_path, width: map.record.width, height: map.record.height };
        let request = geomap_georef::Request { crs: args.crs, placement };
        let mut report_progress = |fraction: f64, message: &'static str| {
            let percent = (fraction.clamp(0.0, 1.0) * 100.0).floor() as u64;
            let _ = updates.send(ProgressUpdate { done: percent, total: 100, message: message.to_owned() }); // no receiver when nobody asked
            !cancel.is_cancelled()
        };
        geomap_store::sweep::mark_writing(&output_dir).map_err(|source| geomap_georef::GeorefError::Io { action: "create the revision folder", source })?;
        let writing = state.settings.georef_writing();
        let revision = geomap_georef::georeference(&scan, &request, &revision_id, &output_dir, &writing, &mut report_progress).inspect_err(|_| {
            // Best effort: a failed revision leaves no half-written files behind.
            let _ = std::fs::remove_dir_all(&output_dir);
        })?;
        let recorded = state.registry.add_revision(&map.record.map_id, &revision)?;
        if !recorded {
            let _ = std::fs::remove_dir_all(&output_dir);
            return Err(ToolError::MapNotFound { map_id: map.record.map_id.clone(), reason: MapGone::UnknownId, registered_as: None });
        }
        geomap_store::sweep::unmark(&output_dir);
        Ok(GeoreferenceReport { map_id: map.record.map_id.clone(), revision: located(&state, &map.record.map_id, revision) })
    })
    .await;
    if let Some(forwarding) = forwarding {
        let _ = forwarding.await; // every progress notification goes out before the result
    }
    outcome
}
