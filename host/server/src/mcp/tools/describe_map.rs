//! `geomap_describe_map`: what is known about a registered map.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::maps::{DESCRIBE_TOOL, DescribeRequest, MapReport};
use geomap_app::status::Status;
use geomap_assets::Catalog;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;
use crate::mcp::resources::map_resource;

/// `geomap_describe_map`.
pub struct DescribeMap;

impl Tool for DescribeMap {
    const NAME: &'static str = DESCRIBE_TOOL;
    const TITLE: &'static str = "Describe a registered map";
    const HINTS: Hints = Hints::READS;
    const HEAVY: bool = false;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = DescribeRequest;
    type Output = MapReport;

    fn description(_: &Catalog) -> String {
        "Everything known about a registered map: file facts (type, size, sha256) and where it was registered from. Fails with artifact_not_found when the ID is unknown or the file changed or vanished; register it again then.".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        blocked(status, false)
    }

    async fn call(state: Arc<ServerState>, args: DescribeRequest, _: Call) -> Result<Reply<MapReport>, AppError> {
        Ok(Reply::Done(state.app.describe(args).await?))
    }

    fn links(report: &MapReport) -> Vec<Resource> {
        vec![map_resource(report)]
    }
}
