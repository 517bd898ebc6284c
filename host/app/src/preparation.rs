//! Preparing what other use cases need, after the user agreed: the knowledge
//! assets providers read (`prepare_knowledge`), and the ONNX Runtime, the OCR
//! models and the detector weights (`prepare_detectors`). Both choose assets of
//! their kinds, ask once for the whole download, install with progress and
//! cancellation, and report each asset.
//!
//! Invariants: nothing is downloaded without an answer of yes, or a client that
//! cannot ask (its agent was told to ask first); no heavy-call slot is held
//! while the user is asked, the download takes one after they agreed; an asset
//! with no source is reported failed (`no_source`: the operator's to provide),
//! never asked about.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_assets::{AssetError, AssetKind, AssetState, CatalogAsset, FailureReason, Installer, Outcome};
use geomap_model::errors::ErrorCode;
use geomap_model::trace;
use geomap_vision::models::{self, Missing};
use geomap_vision::{detect, ocr};

use crate::{App, AppError, Progress, reason_of};

/// The name `geomap_prepare_knowledge` is known by.
pub const KNOWLEDGE_TOOL: &str = "geomap_prepare_knowledge";
/// The name `geomap_prepare_detectors` is known by.
pub const DETECTORS_TOOL: &str = "geomap_prepare_detectors";
/// The setting that offers `geomap_prepare_knowledge` over MCP.
pub const KNOWLEDGE_SETTING: &str = "GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION";
/// The setting that offers `geomap_prepare_detectors` over MCP.
pub const DETECTORS_SETTING: &str = "GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION";

/// What the user said, when the edge asked them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Yes.
    Confirmed,
    /// No, or the question was dismissed.
    Declined,
    /// No answer in time: counts as not given.
    Unanswered,
    /// The client cannot ask; the agent was told to ask before calling.
    NotAsked,
}

/// What asking led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// An answer to act on now.
    Answer(Answer),
    /// The client must ask its user and call again with the answer (the edge knows how).
    Pending,
}

/// How an edge reaches the user to ask before a download.
pub trait AskUser: Send {
    /// Asks one yes/no `question`, waiting at most `timeout` for a user asked during the call.
    fn ask(self, question: &str, timeout: Duration) -> impl Future<Output = Asked> + Send;
}

/// An edge that cannot ask anyone (`batch`, a library caller): the answer is always [`Answer::NotAsked`].
#[derive(Debug, Clone, Copy)]
pub struct NobodyToAsk;

impl AskUser for NobodyToAsk {
    async fn ask(self, _question: &str, _timeout: Duration) -> Asked {
        Asked::Answer(Answer::NotAsked)
    }
}

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

/// How a preparation ended, when it did not fail.
#[derive(Debug, Clone)]
pub enum Prepared<T> {
    /// Finished (or declined).
    Done(T),
    /// The client must ask its user this question and call again with the answer.
    AskFirst {
        /// The yes/no question.
        question: String,
    },
}

/// Arguments of `geomap_prepare_knowledge`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrepareKnowledgeRequest {
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

/// Arguments of `geomap_prepare_detectors`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrepareDetectorsRequest {
    /// Asset ids to install (default: the runtime and both weight sets; geomap_capabilities lists them).
    pub assets: Option<Vec<String>>,
}

/// The result of `geomap_prepare_detectors`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PrepareDetectorsResult {
    /// What was installed, present or failed (weights with no source are the operator's to provide).
    #[serde(flatten)]
    pub report: PreparationReport,
    /// Whether geomap_process_image can run now (with the OCR models, or PEACE's detectors, or both).
    pub detectors_ready: bool,
    /// What is still outstanding.
    pub missing_requirements: Vec<String>,
    /// In a sentence or two.
    pub summary: String,
}

/// Which assets a preparation installs, and the setting that offers it.
struct Preparation<'a> {
    /// The use case's name, for the per-asset failures' wording.
    tool: &'static str,
    /// The asset kinds it installs.
    kinds: &'a [AssetKind],
    /// Whether the operator offers it (the setting's value).
    enabled: bool,
    /// The setting.
    variable: &'static str,
    /// The asset ids asked for (all of its kinds when `None`).
    requested: Option<&'a [String]>,
}

fn prepared(asset: &CatalogAsset) -> PreparedAsset {
    PreparedAsset { asset: asset.id.clone(), bytes: asset.size(), licence: asset.licence.clone(), attribution: asset.attribution.clone() }
}

impl App {
    /// `geomap_prepare_knowledge`: the knowledge assets asked for (all when `None`), after the user agreed.
    pub async fn prepare_knowledge(
        self: &Arc<Self>,
        request: PrepareKnowledgeRequest,
        asking: impl AskUser,
        progress: Progress,
    ) -> Result<Prepared<PrepareKnowledgeResult>, AppError> {
        let preparation = Preparation {
            tool: KNOWLEDGE_TOOL,
            kinds: &[AssetKind::Knowledge],
            enabled: self.settings.knowledge_preparation,
            variable: KNOWLEDGE_SETTING,
            requested: request.assets.as_deref(),
        };
        let report = match self.prepare(preparation, asking, &progress).await? {
            Prepared::AskFirst { question } => return Ok(Prepared::AskFirst { question }),
            Prepared::Done(report) => report,
        };
        let ready_providers = self.providers_made_ready(&report.installed).await;
        let summary = knowledge_summary(&report, &ready_providers);
        Ok(Prepared::Done(PrepareKnowledgeResult { report, ready_providers, summary }))
    }

    /// `geomap_prepare_detectors`: the runtime, OCR model and weight assets asked for (when
    /// `None`, all but the OCR models the operator did not choose), after the user agreed; says
    /// what is still outstanding.
    pub async fn prepare_detectors(
        self: &Arc<Self>,
        request: PrepareDetectorsRequest,
        asking: impl AskUser,
        progress: Progress,
    ) -> Result<Prepared<PrepareDetectorsResult>, AppError> {
        let preparation = Preparation {
            tool: DETECTORS_TOOL,
            kinds: &[AssetKind::Runtime, AssetKind::OcrModels, AssetKind::DetectorWeights],
            enabled: self.settings.detector_preparation,
            variable: DETECTORS_SETTING,
            requested: request.assets.as_deref(),
        };
        let report = match self.prepare(preparation, asking, &progress).await? {
            Prepared::AskFirst { question } => return Ok(Prepared::AskFirst { question }),
            Prepared::Done(report) => report,
        };
        let app = Arc::clone(self);
        let (missing_requirements, detectors_ready) = trace::spawn_blocking(move || app.outstanding()).await;
        let summary = detectors_summary(&report, &missing_requirements, detectors_ready);
        Ok(Prepared::Done(PrepareDetectorsResult { report, detectors_ready, missing_requirements, summary }))
    }

    /// What is still outstanding for the detectors and the reader (as a preparation lists it), and
    /// whether a layout can be found (the reader, or the detectors, suffice).
    pub fn outstanding(&self) -> (Vec<String>, bool) {
        let (catalog, root) = (&self.catalog, &self.settings.data_root);
        let (mut missing, _) = models::outstanding(catalog, root, &detect::REQUIREMENTS);
        let (reader_missing, _) = models::outstanding(catalog, root, ocr::requirements(self.settings.ocr_models));
        let ready = missing.is_empty() || reader_missing.is_empty();
        for item in reader_missing {
            if !missing.contains(&item) {
                missing.push(item);
            }
        }
        (missing.iter().map(Missing::describe).collect(), ready)
    }

    /// The providers that read one of `installed` and now have every asset they read.
    async fn providers_made_ready(&self, installed: &[PreparedAsset]) -> Vec<String> {
        if installed.is_empty() {
            return Vec::new();
        }
        let set = self.providers().await;
        set.entries()
            .iter()
            .filter_map(|entry| entry.descriptor().map(|descriptor| (entry, descriptor)))
            .filter(|(_, descriptor)| descriptor.assets.iter().any(|id| installed.iter().any(|asset| &asset.asset == id)))
            .filter(|(_, descriptor)| tokio::task::block_in_place(|| self.asset_folders(&descriptor.assets).1.is_empty()))
            .map(|(entry, _)| entry.name.clone())
            .collect()
    }

    /// The assets of `kinds` that `requested` names; when `None`, all of them but the OCR models
    /// the operator did not choose (`GEOMAP_OCR_MODELS`), installed only when named.
    fn chosen(&self, kinds: &[AssetKind], requested: Option<&[String]>) -> Result<Vec<&CatalogAsset>, AssetError> {
        let offered: Vec<&CatalogAsset> = self.catalog.assets().iter().filter(|asset| kinds.contains(&asset.kind)).collect();
        let Some(requested) = requested else {
            let chosen_ocr = self.settings.ocr_models.asset();
            return Ok(offered.into_iter().filter(|asset| asset.kind != AssetKind::OcrModels || asset.id == chosen_ocr).collect());
        };
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

    /// Asks the user (when the client can) for what is missing, then installs it with progress in
    /// bytes; a cancelled progress stops it cleanly.
    async fn prepare(&self, preparation: Preparation<'_>, asking: impl AskUser, progress: &Progress) -> Result<Prepared<PreparationReport>, AppError> {
        if !preparation.enabled {
            return Err(AssetError::PreparationDisabled { variable: preparation.variable }.into());
        }
        let installer = Installer::new(&self.settings).map_err(|detail| AssetError::Install {
            id: String::new(),
            file: None,
            url: None,
            reason: FailureReason::Unreachable,
            detail,
        })?;
        let assets = self.chosen(preparation.kinds, preparation.requested)?;
        // An asset's state is read from the disk (a file whose time moved is hashed again): the async worker steps aside.
        let states: Vec<AssetState> =
            tokio::task::block_in_place(|| assets.iter().map(|asset| geomap_assets::status(asset, &self.settings.data_root).state).collect());
        let mut already_present = Vec::new();
        let mut needed = Vec::new();
        let mut failed = Vec::new();
        for (asset, state) in assets.into_iter().zip(states) {
            match (state, preparation.requested.is_some()) {
                (AssetState::Installed, _) | (AssetState::Custom, false) => already_present.push(prepared(asset)),
                (AssetState::Custom, true) => failed.push(AssetError::Unmanaged { id: asset.id.clone(), path: asset.custom_path.clone().unwrap_or_default() }),
                (AssetState::Missing | AssetState::Corrupt, _) if !asset.has_source() => {
                    let unheard = Progress::unheard(progress.cancellation().clone());
                    failed.extend(installer.install(asset, &unheard).await.err()); // fails at once with no_source
                }
                (AssetState::Missing | AssetState::Corrupt, _) => needed.push(asset),
            }
        }
        let download_bytes: u64 = needed.iter().map(|asset| asset.download_size()).sum();
        let mut report = PreparationReport { consent: Consent::NotNeeded, installed: Vec::new(), already_present, failed: Vec::new(), download_bytes };
        if needed.is_empty() {
            report.failed = self.failed_assets(failed, preparation.tool);
            return Ok(Prepared::Done(report));
        }
        let question = format!(
            "Download and install {} ({:.1} MB) into the server's data folder? Licences: {}.",
            needed.iter().map(|asset| asset.title.as_str()).collect::<Vec<_>>().join("; "),
            download_bytes as f64 / 1e6,
            needed.iter().map(|asset| format!("{} ({})", asset.id, asset.licence)).collect::<Vec<_>>().join(", ")
        );
        report.consent = match asking.ask(&question, self.settings.consent_timeout).await {
            Asked::Pending => return Ok(Prepared::AskFirst { question }),
            Asked::Answer(Answer::Declined) => Consent::Declined,
            Asked::Answer(Answer::Unanswered) => Consent::Unanswered,
            Asked::Answer(Answer::Confirmed) => Consent::Confirmed,
            Asked::Answer(Answer::NotAsked) => Consent::NotAsked,
        };
        if matches!(report.consent, Consent::Declined | Consent::Unanswered) {
            report.failed = self.failed_assets(failed, preparation.tool);
            return Ok(Prepared::Done(report));
        }
        let _slot = self.heavy.take(progress).await?;
        let mut done = 0;
        for asset in needed {
            match installer.install(asset, &progress.counted(done, download_bytes)).await {
                Ok(Outcome::Installed) => report.installed.push(prepared(asset)),
                Ok(Outcome::AlreadyPresent) => report.already_present.push(prepared(asset)),
                Err(error @ AssetError::Install { reason: FailureReason::Cancelled, .. }) => return Err(error.into()),
                Err(error) => failed.push(error),
            }
            done += asset.download_size();
        }
        if report.installed.is_empty()
            && report.already_present.is_empty()
            && let Some(first) = failed.first()
        {
            return Err(first.clone().into()); // nothing usable came of it: the call failed
        }
        report.failed = self.failed_assets(failed, preparation.tool);
        Ok(Prepared::Done(report))
    }

    /// Each asset a preparation could not install, with the code and message its failure would have.
    fn failed_assets(&self, failed: Vec<AssetError>, tool: &str) -> Vec<FailedAsset> {
        failed
            .into_iter()
            .map(|error| {
                let asset = error.asset().to_owned();
                let envelope = self.envelope(&AppError::Asset(error), tool);
                FailedAsset { asset, code: envelope.code, reason: reason_of(&envelope), message: envelope.message }
            })
            .collect()
    }
}

/// A knowledge preparation in one sentence, ending with the providers it made ready.
fn knowledge_summary(report: &PreparationReport, ready_providers: &[String]) -> String {
    let (installed, present, failed) = (report.installed.len(), report.already_present.len(), report.failed.len());
    let done = match report.consent.refusal(report.download_bytes) {
        Some(refused) => refused,
        None if report.consent == Consent::NotNeeded && failed == 0 => {
            format!("Nothing to download: all {present} requested knowledge assets are already there.")
        }
        None => format!("{installed} installed, {present} already present, {failed} failed ({:.1} MB downloaded).", report.download_bytes as f64 / 1e6),
    };
    match ready_providers {
        [] => done,
        names => format!("{done} Now ready: {}; retry the requests to them that failed with missing_knowledge_asset.", names.join(", ")),
    }
}

/// A detector preparation in a sentence or two: what it did and what is still outstanding.
fn detectors_summary(report: &PreparationReport, missing: &[String], ready: bool) -> String {
    let done = report.consent.refusal(report.download_bytes).unwrap_or_else(|| {
        format!("{} installed, {} not installed ({:.1} MB downloaded).", report.installed.len(), report.failed.len(), report.download_bytes as f64 / 1e6)
    });
    match (missing, ready) {
        ([], _) => format!("{done} Layout detection and reading are ready: retry geomap_process_image calls that failed with missing_extra."),
        (missing, true) => format!(
            "{done} geomap_process_image is ready: it reads the layout from the map's words and colours (retry calls that failed with missing_extra). Still outstanding, for PEACE's detectors: {}.",
            missing.join("; ")
        ),
        (missing, false) => format!("{done} Still outstanding: {}.", missing.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestApp, mirror, shared};

    /// An edge whose user always gives `answer` (or whose client asks them later: `Pending`).
    #[derive(Clone, Copy)]
    struct Says(Asked);

    impl AskUser for Says {
        async fn ask(self, question: &str, _timeout: Duration) -> Asked {
            assert!(question.contains("MB") && question.contains("Licences"), "{question}");
            self.0
        }
    }

    fn knowledge(assets: &[&str]) -> PrepareKnowledgeRequest {
        PrepareKnowledgeRequest { assets: Some(assets.iter().map(|id| (*id).to_owned()).collect()) }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_download_is_asked_about_first_and_nothing_comes_of_a_no() {
        let test = TestApp::new(&[]);
        let pending = test.app.prepare_knowledge(knowledge(&["ics-chart"]), Says(Asked::Pending), Progress::none()).await.unwrap();
        assert!(matches!(&pending, Prepared::AskFirst { question } if question.contains("ics-chart (CC BY 4.0)")), "{pending:?}");
        let declined = test.app.prepare_knowledge(knowledge(&["ics-chart"]), Says(Asked::Answer(Answer::Declined)), Progress::none()).await.unwrap();
        let Prepared::Done(declined) = declined else { panic!("no second question") };
        assert_eq!((declined.report.consent, declined.report.installed.len()), (Consent::Declined, 0));
        assert!(declined.summary.starts_with("The user declined"), "{}", declined.summary);
        assert!(!test.app.settings.data_root.join("assets").join("ics-chart").exists());
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_disabled_preparation_an_unknown_asset_and_weights_without_a_source_are_refused() {
        let test = TestApp::new(&[("GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION", "false")]);
        let disabled = test.app.prepare_knowledge(knowledge(&["ics-chart"]), NobodyToAsk, Progress::none()).await.unwrap_err();
        assert!(matches!(disabled, AppError::Asset(AssetError::PreparationDisabled { variable: KNOWLEDGE_SETTING })), "{disabled:?}");
        let detectors = |ids: &[&str]| PrepareDetectorsRequest { assets: Some(ids.iter().map(|id| (*id).to_owned()).collect()) };
        let unknown = test.app.prepare_detectors(detectors(&["ics-chart"]), NobodyToAsk, Progress::none()).await.unwrap_err();
        assert!(matches!(unknown, AppError::Asset(AssetError::Unknown { .. })), "{unknown:?}");
        let Prepared::Done(weights) = test.app.prepare_detectors(detectors(&["peace-component-weights"]), NobodyToAsk, Progress::none()).await.unwrap() else {
            panic!("nothing to ask about")
        };
        assert_eq!((weights.report.consent, weights.report.failed.len(), weights.detectors_ready), (Consent::NotNeeded, 1, false));
        assert_eq!(weights.report.failed[0].asset, "peace-component-weights");
        assert!(weights.missing_requirements.iter().any(|missing| missing.contains("peace-yolov10-runtime")), "{:?}", weights.missing_requirements);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_knowledge_asset_installs_from_a_mirror_with_progress_in_bytes() {
        let Some(shared) = shared("preparation::a_knowledge_asset_installs_from_a_mirror_with_progress_in_bytes", &["chart.ttl"]) else { return };
        let base = mirror(&shared);
        let test = TestApp::new(&[("GEOMAP_ASSET_MIRROR", base.as_str())]);
        let (progress, heard, _) = crate::testing::heard();
        let Prepared::Done(done) = test.app.prepare_knowledge(knowledge(&["ics-chart"]), NobodyToAsk, progress).await.unwrap() else { panic!("not asked") };
        assert_eq!(done.report.consent, Consent::NotAsked);
        assert_eq!(done.report.installed.iter().map(|asset| asset.asset.as_str()).collect::<Vec<_>>(), ["ics-chart"]);
        let bytes = std::fs::metadata(shared.join("chart.ttl")).unwrap().len();
        let heard = heard.lock().unwrap().clone();
        assert!(heard.iter().all(|update| update.total == bytes && update.message == "downloading ics-chart"), "{heard:?}");
        assert_eq!(heard.last().map(|update| update.done), Some(bytes));
        let again = test.app.prepare_knowledge(knowledge(&["ics-chart"]), NobodyToAsk, Progress::none()).await.unwrap();
        assert!(matches!(again, Prepared::Done(result) if result.report.consent == Consent::NotNeeded && result.report.already_present.len() == 1));
    }
}
