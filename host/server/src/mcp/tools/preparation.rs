//! What `geomap_prepare_knowledge` and `geomap_prepare_detectors` share:
//! choosing assets of their kinds, asking the user once for the download,
//! installing with progress and cancellation, and reporting each asset.
//!
//! Invariant: no heavy-call slot is held while the user is asked; the
//! download takes one after the user agreed.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::mcp::ServerState;
use crate::mcp::adapter::ToolError;
use crate::mcp::consent::{Answer, Asked, ConsentChannel};
use crate::mcp::progress::{ProgressSink, ProgressUpdate};
use geomap_assets::{AssetError, AssetKind, AssetState, CatalogAsset, FailureReason, Installer, Outcome};
use geomap_model::errors::ErrorCode;

/// Whether the user was asked, and what they said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Consent {
    /// The user agreed when the server asked.
    Confirmed,
    /// The user declined: nothing was installed.
    Declined,
    /// The user gave no answer within `GEOMAP_CONSENT_TIMEOUT`: nothing was installed.
    Unanswered,
    /// The client cannot ask its user; the agent was told to ask first.
    NotAsked,
    /// Nothing needed downloading.
    NotNeeded,
}

/// An asset the call installed or found present.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PreparedAsset {
    /// Its ID.
    pub asset: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its licence.
    pub licence: String,
    /// The attribution its licence asks for.
    pub attribution: String,
}

/// An asset the call could not install.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FailedAsset {
    /// Its ID.
    pub asset: String,
    /// The error code, as a failed call would have it.
    pub code: ErrorCode,
    /// `details.reason` of that error, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What went wrong and what to do.
    pub message: String,
}

/// What a preparation call did, asset by asset (both preparation tools' results start with it).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PreparationReport {
    /// Whether the user was asked and agreed.
    pub consent: Consent,
    /// Installed by this call.
    pub installed: Vec<PreparedAsset>,
    /// Already installed (or the operator's own copy).
    pub already_present: Vec<PreparedAsset>,
    /// Not installed, each with its code and message.
    pub failed: Vec<FailedAsset>,
    /// Bytes this call downloaded (or would have, when declined).
    pub download_bytes: u64,
}

/// What the handler decided, before failures become envelopes at the edge.
pub enum Prepared {
    /// Finished (or declined).
    Done { consent: Consent, installed: Vec<PreparedAsset>, already_present: Vec<PreparedAsset>, failed: Vec<AssetError>, download_bytes: u64 },
    /// The client must ask its user and call again.
    AskFirst(rmcp::model::InputRequiredResult),
}

impl Consent {
    /// The sentence a summary starts with when the user did not agree, `None` when the download went ahead.
    pub fn refusal(self, download_bytes: u64) -> Option<String> {
        let asked = download_bytes as f64 / 1e6;
        match self {
            Consent::Declined => Some(format!("The user declined: nothing was downloaded ({asked:.1} MB were asked for).")),
            Consent::Unanswered => Some(format!(
                "The user did not answer within GEOMAP_CONSENT_TIMEOUT, which counts as no: nothing was downloaded ({asked:.1} MB were asked for); ask again when they are there."
            )),
            Consent::Confirmed | Consent::NotAsked | Consent::NotNeeded => None,
        }
    }
}

fn prepared(asset: &CatalogAsset) -> PreparedAsset {
    PreparedAsset { asset: asset.id.clone(), bytes: asset.size(), licence: asset.licence.clone(), attribution: asset.attribution.clone() }
}

/// The assets of `kinds` that `requested` names (all of them when `None`).
fn chosen<'a>(state: &'a ServerState, kinds: &[AssetKind], requested: Option<&[String]>) -> Result<Vec<&'a CatalogAsset>, AssetError> {
    let offered: Vec<&CatalogAsset> = state.catalog.assets().iter().filter(|asset| kinds.contains(&asset.kind)).collect();
    let Some(requested) = requested else { return Ok(offered) };
    requested
        .iter()
        .map(|id| {
            offered
                .iter()
                .copied()
                .find(|asset| &asset.id == id)
                .ok_or_else(|| AssetError::Unknown { id: id.clone(), known: offered.iter().map(|asset| asset.id.clone()).collect() })
        })
        .collect()
}

/// Which assets a preparation tool installs, and the setting that offers it.
pub struct Preparation<'a> {
    /// The asset kinds it installs.
    pub kinds: &'a [AssetKind],
    /// Whether the operator offers it (the setting's value).
    pub enabled: bool,
    /// The setting.
    pub variable: &'static str,
    /// The asset ids asked for (all of its kinds when `None`).
    pub requested: Option<&'a [String]>,
}

/// Asks the user (when the client can) for what is missing, then installs it
/// with progress; `cancel` stops it cleanly. An asset without a source is
/// reported failed (`no_source`: the operator's to provide), never asked about.
pub async fn prepare(
    state: Arc<ServerState>,
    preparation: Preparation<'_>,
    consent: ConsentChannel,
    progress: Option<ProgressSink>,
    cancel: CancellationToken,
) -> Result<Prepared, ToolError> {
    if !preparation.enabled {
        return Err(AssetError::PreparationDisabled { variable: preparation.variable }.into());
    }
    let installer = Installer::new(&state.settings).map_err(|detail| AssetError::Install {
        id: String::new(),
        file: None,
        url: None,
        reason: FailureReason::Unreachable,
        detail,
    })?;
    let assets = chosen(&state, preparation.kinds, preparation.requested)?;
    let mut already_present = Vec::new();
    let mut needed = Vec::new();
    let mut failed = Vec::new();
    for asset in assets {
        match (geomap_assets::status(asset, &state.settings.data_root).state, preparation.requested.is_some()) {
            (AssetState::Installed, _) | (AssetState::Custom, false) => already_present.push(prepared(asset)),
            (AssetState::Custom, true) => failed.push(AssetError::Unmanaged { id: asset.id.clone(), path: asset.custom_path.clone().unwrap_or_default() }),
            (AssetState::Missing | AssetState::Corrupt, _) if !asset.has_source() => {
                let mut report = |_: u64, _: u64| {};
                failed.extend(installer.install(asset, &mut report, &cancel).await.err()); // fails at once with no_source
            }
            (AssetState::Missing | AssetState::Corrupt, _) => needed.push(asset),
        }
    }
    let download_bytes: u64 = needed.iter().map(|asset| asset.download_size()).sum();
    if needed.is_empty() {
        return Ok(Prepared::Done { consent: Consent::NotNeeded, installed: Vec::new(), already_present, failed, download_bytes });
    }
    let question = format!(
        "Download and install {} ({:.1} MB) into the server's data folder? Licences: {}.",
        needed.iter().map(|asset| asset.title.as_str()).collect::<Vec<_>>().join("; "),
        download_bytes as f64 / 1e6,
        needed.iter().map(|asset| format!("{} ({})", asset.id, asset.licence)).collect::<Vec<_>>().join(", ")
    );
    let consent = match consent.ask(&question, state.settings.consent_timeout).await {
        Asked::Pending(input_required) => return Ok(Prepared::AskFirst(input_required)),
        Asked::Answer(refused @ (Answer::Declined | Answer::Unanswered)) => {
            let consent = if refused == Answer::Declined { Consent::Declined } else { Consent::Unanswered };
            return Ok(Prepared::Done { consent, installed: Vec::new(), already_present, failed, download_bytes });
        }
        Asked::Answer(Answer::Confirmed) => Consent::Confirmed,
        Asked::Answer(Answer::NotAsked) => Consent::NotAsked,
    };
    let _slot = state.heavy.take(progress.as_ref(), &cancel).await.map_err(|_| ToolError::Cancelled)?;
    let (updates, received) = tokio::sync::mpsc::unbounded_channel();
    let forwarding = progress.map(|sink| tokio::spawn(sink.forward(received)));
    let mut installed = Vec::new();
    let mut done = 0;
    for asset in needed {
        let start = done;
        let updates = updates.clone();
        let id = asset.id.clone();
        let mut report = move |bytes: u64, _: u64| {
            let _ = updates.send(ProgressUpdate { done: start + bytes, total: download_bytes, message: format!("downloading {id}") });
        };
        match installer.install(asset, &mut report, &cancel).await {
            Ok(Outcome::Installed) => installed.push(prepared(asset)),
            Ok(Outcome::AlreadyPresent) => already_present.push(prepared(asset)),
            Err(error @ AssetError::Install { reason: FailureReason::Cancelled, .. }) => return Err(error.into()),
            Err(error) => failed.push(error),
        }
        done += asset.download_size();
    }
    drop(updates);
    if let Some(forwarding) = forwarding {
        let _ = forwarding.await; // every progress notification goes out before the result
    }
    if installed.is_empty()
        && already_present.is_empty()
        && let Some(first) = failed.first()
    {
        return Err(first.clone().into()); // nothing usable came of it: the call failed
    }
    Ok(Prepared::Done { consent, installed, already_present, failed, download_bytes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::adapter::envelope_for;
    use geomap_model::errors::failure::FailedCall;
    use geomap_model::settings::Settings;
    use geomap_model::trace::TraceId;

    #[tokio::test]
    async fn a_library_caller_with_preparation_disabled_gets_preparation_disabled() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(|name| match name {
            "GEOMAP_DATA_ROOT" => Some(dir.path().into()),
            "GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION" => Some("false".into()),
            _ => None,
        })
        .unwrap();
        let state = Arc::new(ServerState::start(settings).unwrap());
        let preparation = Preparation { kinds: &[AssetKind::Knowledge], enabled: false, variable: "GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION", requested: None };
        let outcome = prepare(Arc::clone(&state), preparation, ConsentChannel::Unavailable, None, CancellationToken::new()).await;
        let Err(error) = outcome else { panic!("preparation ran although it is disabled") };
        let trace_id = TraceId::random();
        let envelope = envelope_for(&error, &FailedCall { tool: "library", idempotent: true, trace_id: &trace_id, settings: &state.settings });
        assert_eq!(envelope.code, ErrorCode::PreparationDisabled);
        assert!(envelope.message.contains("GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION=false"), "{}", envelope.message);
        assert!(!dir.path().join("assets").exists(), "nothing was written");
    }
}
