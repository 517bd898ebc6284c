//! `geomap_query_knowledge`: what the knowledge providers know about an area, written as a new knowledge bundle.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::knowledge::{KnowledgeBundle, KnowledgeQuery, QUERY_TOOL};
use geomap_app::status::Status;
use geomap_assets::Catalog;
use geomap_providers::Kind;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;
use crate::mcp::resources::bundle_resource;

/// `geomap_query_knowledge`.
pub struct QueryKnowledge;

impl Tool for QueryKnowledge {
    const NAME: &'static str = QUERY_TOOL;
    const TITLE: &'static str = "Query knowledge about an area";
    const HINTS: Hints = Hints::WRITES_ANEW;
    const HEAVY: bool = false;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = KnowledgeQuery;
    type Output = KnowledgeBundle;

    fn description(_: &Catalog) -> String {
        "Ask the knowledge providers about a georeferenced map's area (map_id: its newest revision's wgs84_bounds) or an explicit WGS84 area: for example earthquakes in it. A map without a georeference fails with georef_required (call geomap_georeference first). Every call writes a new knowledge bundle (bundle_id, resource geomap://bundles/{bundle_id}), so it is not idempotent. A provider that fails while others answer is listed in `warnings`.".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        status.providers_ready(Kind::Knowledge).or(blocked(status, true))
    }

    async fn call(state: Arc<ServerState>, args: KnowledgeQuery, _: Call) -> Result<Reply<KnowledgeBundle>, AppError> {
        Ok(Reply::Done(state.app.query_knowledge(args).await?))
    }

    fn links(bundle: &KnowledgeBundle) -> Vec<Resource> {
        vec![bundle_resource(&bundle.bundle_id)]
    }
}
