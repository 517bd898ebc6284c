//! `geomap_lookup`: a term looked up by the lookup providers, each answer tagged with its provider.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::knowledge::{LOOKUP_TOOL, LookupResult, LookupTermRequest};
use geomap_app::status::Status;
use geomap_assets::Catalog;
use geomap_providers::Kind;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;

/// `geomap_lookup`.
pub struct Lookup;

impl Tool for Lookup {
    const NAME: &'static str = LOOKUP_TOOL;
    const TITLE: &'static str = "Look a term up";
    const HINTS: Hints = Hints::READS;
    const HEAVY: bool = false;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = LookupTermRequest;
    type Output = LookupResult;

    fn description(_: &Catalog) -> String {
        "Look up a term from a map or its legend in the lookup providers: a time term (\"Jurassic\", \"Lower Cretaceous\", a Chinese chart label) gives the interval with its ages in Ma, a lithology term gives its CGI concept, a rock name its K2 class. Each answer names its provider; a provider that finds nothing gives close matches. Omit `providers` to ask every enabled lookup provider; a provider that fails while others answer is listed in `warnings`.".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        status.providers_ready(Kind::Lookup).or(blocked(status, false))
    }

    async fn call(state: Arc<ServerState>, args: LookupTermRequest, _: Call) -> Result<Reply<LookupResult>, AppError> {
        Ok(Reply::Done(state.app.lookup(args).await?))
    }

    fn links(_: &LookupResult) -> Vec<Resource> {
        Vec::new()
    }
}
