//! `geomap_register_map`: a scan (or a map bundle) from an allowed root becomes a registered map.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::maps::{MapReport, REGISTER_TOOL, RegisterRequest};
use geomap_app::status::Status;
use geomap_app::AppError;
use geomap_assets::Catalog;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;
use crate::mcp::resources::map_resource;

/// `geomap_register_map`.
pub struct RegisterMap;

impl Tool for RegisterMap {
    const NAME: &'static str = REGISTER_TOOL;
    const TITLE: &'static str = "Register a map scan";
    const HINTS: Hints = Hints { read_only: false, idempotent: true, open_world: false };
    const HEAVY: bool = false;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = RegisterRequest;
    type Output = MapReport;

    fn description(_: &Catalog) -> String {
        "Register a scanned map (PNG, JPEG or TIFF/GeoTIFF) from an allowed map root and get its map_id. A geomap-map-bundle/v1 JSON file (a layout made elsewhere, with an optional georeference; format in geomap_capabilities media.map_bundle_schema) registers too, for a scan this server cannot take. Registering the same unchanged file again returns the same map_id. Paths are absolute inside an allowed root, or relative to the first root (see geomap_capabilities).".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        blocked(status, true)
    }

    async fn call(state: Arc<ServerState>, args: RegisterRequest, _: Call) -> Result<Reply<MapReport>, AppError> {
        Ok(Reply::Done(state.app.register(args).await?))
    }

    fn links(report: &MapReport) -> Vec<Resource> {
        vec![map_resource(report)]
    }
}
