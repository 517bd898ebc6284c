//! `geomap_unit_at`: the legend unit under a point of the map.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::status::Status;
use geomap_app::units::{UNIT_AT_TOOL, UnitAt as Answer, UnitAtRequest};
use geomap_assets::Catalog;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;

/// `geomap_unit_at`.
pub struct UnitAt;

impl Tool for UnitAt {
    const NAME: &'static str = UNIT_AT_TOOL;
    const TITLE: &'static str = "The unit under a point";
    const HINTS: Hints = Hints::READS;
    const HEAVY: bool = true;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = UnitAtRequest;
    type Output = Answer;

    fn description(_: &Catalog) -> String {
        "Which legend unit is under a point of a registered scan — `col` and `row` in its pixels, or `lon` and `lat` on WGS84 through its newest georeference (none yet is georef_required) — with its code, description, ages (ICS intervals in Ma) and rock names: the legend swatch whose colour is nearest the map's colour around the point (CIELAB ΔE, ink and labels left out), with the runner-up and both distances. A colour over ΔE 15 from every swatch matches no unit, and the result says so rather than guess. Once the layout has a unit extraction (geomap_extract_units), the unit is the one its polygons give the point, and `line` names the extraction's fault or fold axis passing within 4 pixels of it (its TA1 type and whether it is solid, dashed or dotted there). Reads the map's newest layout (or `layout_id`); without one it fails with artifact_not_found (reason no_layout): call geomap_process_image first.".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        blocked(status, false)
    }

    async fn call(state: Arc<ServerState>, args: UnitAtRequest, _: Call) -> Result<Reply<Answer>, AppError> {
        Ok(Reply::Done(state.app.unit_at(args).await?))
    }

    fn links(_: &Answer) -> Vec<Resource> {
        Vec::new()
    }
}
