//! `geomap_georeference`: bounds, control points, or the map's own coordinate labels become a new revision.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::georeference::{GeoreferenceReport, GeoreferenceRequest, TOOL};
use geomap_app::status::Status;
use geomap_assets::Catalog;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, needs_gdal};
use crate::mcp::ServerState;
use crate::mcp::resources::artifact_resource;

/// `geomap_georeference`.
pub struct Georeference;

impl Tool for Georeference {
    const NAME: &'static str = TOOL;
    const TITLE: &'static str = "Georeference a map";
    const HINTS: Hints = Hints::WRITES_ANEW;
    const HEAVY: bool = true;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = GeoreferenceRequest;
    type Output = GeoreferenceReport;

    fn description(_: &Catalog) -> String {
        "Tie a registered map to the ground: give a CRS and either bounds (the CRS box of the whole scan, or of pixel_region) or control_points (pixel col/row → CRS x/y) with a transform (affine, polynomial2, polynomial3, thin_plate_spline). Or from: \"labels\" (crs optional): the server finds the map's neatline, reads the coordinate labels around it (degrees-minutes-seconds, minutes-only side labels, UTM), ties each to its tick or corner, rejects the ones that disagree and fits control points from them, deciding each axis's hemisphere from all the sheet's evidence (a label whose own sign or letter disagrees is rejected) and the datum from every word read of the sheet, the stored layout's and readings' too (with no datum printed, a U.S. base map before 1990 is taken as NAD27, a guess it says so); the revision is in degrees, or in the UTM zone on that datum when the graticule is straighter there; dry_run: true shows the points, rejected labels and fit without writing. Every call writes a new revision (the newest is the map's current georeference) with residuals, RMSE, the WGS84 box and GeoTIFF/VRT files for GIS tools; a revision outside the U.S. state the sheet names carries a warning. Not idempotent. Wrong bounds, CRS or points fail with invalid_bounds: read the message; labels that give no georeference fail with too_few_labels, listing every label read.".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        needs_gdal(status, "GDAL or PROJ lacks what georeferencing needs (see georeference.missing)")
    }

    async fn call(state: Arc<ServerState>, args: GeoreferenceRequest, call: Call) -> Result<Reply<GeoreferenceReport>, AppError> {
        Ok(Reply::Done(state.app.georeference(args, call.progress).await?))
    }

    fn links(report: &GeoreferenceReport) -> Vec<Resource> {
        report.revision.artifacts.iter().map(|artifact| artifact_resource(&report.map_id, &report.revision.revision_id, artifact)).collect()
    }
}
