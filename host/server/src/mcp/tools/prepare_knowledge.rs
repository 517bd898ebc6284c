//! `geomap_prepare_knowledge`: installs knowledge assets after the user agreed.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::preparation::{KNOWLEDGE_SETTING, KNOWLEDGE_TOOL, PrepareKnowledgeRequest, PrepareKnowledgeResult, Prepared};
use geomap_app::status::Status;
use geomap_assets::{AssetKind, Catalog};

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;
use crate::mcp::consent::input_required;

/// `geomap_prepare_knowledge`.
pub struct PrepareKnowledge;

impl Tool for PrepareKnowledge {
    const NAME: &'static str = KNOWLEDGE_TOOL;
    const TITLE: &'static str = "Download knowledge assets";
    const HINTS: Hints = Hints { read_only: false, idempotent: true, open_world: true };
    const HEAVY: bool = false;
    const WITHHELD_BY: Option<Withholding> = Some(Withholding { setting: KNOWLEDGE_SETTING, offered: |settings| settings.knowledge_preparation });
    type Args = PrepareKnowledgeRequest;
    type Output = PrepareKnowledgeResult;

    fn description(catalog: &Catalog) -> String {
        let ids: Vec<&str> = catalog.of_kind(AssetKind::Knowledge).map(|asset| asset.id.as_str()).collect();
        let bytes: u64 = catalog.of_kind(AssetKind::Knowledge).map(|asset| asset.download_size()).sum();
        format!(
            "Downloads and installs the knowledge bases that knowledge providers need ({}: {:.1} MB in all, each with its licence). It downloads from the internet and writes to the server's disk, so ask the user first and tell them the size; when the client supports elicitation the server asks the user itself, and a refusal installs nothing. Omit `assets` for all of them. Reports what was installed, what was already there and what failed.",
            ids.join(", "),
            bytes as f64 / 1e6
        )
    }

    fn readiness(status: &Status) -> Option<Unready> {
        blocked(status, true)
    }

    async fn call(state: Arc<ServerState>, args: PrepareKnowledgeRequest, call: Call) -> Result<Reply<PrepareKnowledgeResult>, AppError> {
        Ok(match state.app.prepare_knowledge(args, call.consent, call.progress).await? {
            Prepared::Done(result) => Reply::Done(result),
            Prepared::AskFirst { question } => Reply::AskFirst(input_required(&question)),
        })
    }

    fn links(_: &PrepareKnowledgeResult) -> Vec<Resource> {
        Vec::new()
    }
}
