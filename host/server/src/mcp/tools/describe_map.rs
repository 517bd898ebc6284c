//! `geomap_describe_map`: what is known about a registered map.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use geomap_model::trace;

use super::{MapReport, open_registered, report};
use crate::mcp::ServerState;
use crate::mcp::adapter::ToolError;

/// Arguments of `geomap_describe_map`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeMapArgs {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
}
/// `geomap_describe_map` (and `resources/read`): the record, after checking the file is unchanged.
pub async fn describe_map(state: Arc<ServerState>, map_id: String) -> Result<MapReport, ToolError> {
    trace::spawn_blocking(move || {
        let map = open_registered(&state, &map_id)?;
        Ok(report(&state, &map.record, map.root_index, None))
    })
    .await
}
