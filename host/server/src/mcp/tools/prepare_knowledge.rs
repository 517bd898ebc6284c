//! `geomap_prepare_knowledge`: installs knowledge assets after the user agreed,
//! and says which providers that made ready.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::mcp::ServerState;
use crate::mcp::adapter::ToolError;
use crate::mcp::consent::ConsentChannel;
use crate::mcp::progress::ProgressSink;
use geomap_assets::AssetKind;

use super::preparation::{Consent, Preparation, PreparationReport, Prepared, PreparedAsset, prepare};

/// Arguments of `geomap_prepare_knowledge`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrepareKnowledgeArgs {
    /// Knowledge asset ids to install (default: every knowledge asset; geomap_capabilities lists them).
    pub assets: Option<Vec<String>>,
}

/// The result of `geomap_prepare_knowledge`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PrepareKnowledgeResult {
    /// What was installed, present or failed.
    #[serde(flatten)]
    pub report: PreparationReport,
    /// Providers this call made ready (every asset they read is now installed).
    pub ready_providers: Vec<String>,
    /// In a sentence or two; ends with the providers that became ready.
    pub summary: String,
}

/// `geomap_prepare_knowledge`: the knowledge assets asked for (all when `None`).
pub async fn prepare_knowledge(
    state: Arc<ServerState>,
    args: PrepareKnowledgeArgs,
    consent: ConsentChannel,
    progress: Option<ProgressSink>,
    cancel: CancellationToken,
) -> Result<Prepared, ToolError> {
    let enabled = state.settings.knowledge_preparation;
    let preparation =
        Preparation { kinds: &[AssetKind::Knowledge], enabled, variable: "GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION", requested: args.assets.as_deref() };
    prepare(state, preparation, consent, progress, cancel).await
}

/// The result in one sentence.
pub fn summary(consent: Consent, installed: usize, present: usize, failed: usize, download_bytes: u64, ready_providers: &[String]) -> String {
    let done = match consent.refusal(download_bytes) {
        Some(refused) => refused,
        None if consent == Consent::NotNeeded && failed == 0 => format!("Nothing to download: all {present} requested knowledge assets are already there."),
        None => format!("{installed} installed, {present} already present, {failed} failed ({:.1} MB downloaded).", download_bytes as f64 / 1e6),
    };
    match ready_providers {
        [] => done,
        names => format!("{done} Now ready: {}; retry the requests to them that failed with missing_knowledge_asset.", names.join(", ")),
    }
}

/// The providers that read one of `installed` and now have every asset they read.
pub async fn providers_made_ready(state: &ServerState, installed: &[PreparedAsset]) -> Vec<String> {
    if installed.is_empty() {
        return Vec::new();
    }
    let set = state.providers().await;
    set.entries()
        .iter()
        .filter_map(|entry| entry.descriptor().map(|descriptor| (entry, descriptor)))
        .filter(|(_, descriptor)| descriptor.assets.iter().any(|id| installed.iter().any(|asset| &asset.asset == id)))
        .filter(|(_, descriptor)| super::provider_calls::asset_folders(state, &descriptor.assets).1.is_empty())
        .map(|(entry, _)| entry.name.clone())
        .collect()
}
