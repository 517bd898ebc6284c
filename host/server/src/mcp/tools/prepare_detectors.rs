//! `geomap_prepare_detectors`: installs the ONNX Runtime and the detector
//! weights after the user agreed, and says whether layout detection is ready.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::mcp::ServerState;
use crate::mcp::adapter::ToolError;
use crate::mcp::consent::ConsentChannel;
use crate::mcp::progress::ProgressSink;
use geomap_assets::AssetKind;
use geomap_model::trace;
use geomap_vision::{detect, models};

use super::preparation::{Consent, Preparation, PreparationReport, Prepared, prepare};

/// Arguments of `geomap_prepare_detectors`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrepareDetectorsArgs {
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

/// `geomap_prepare_detectors`: the runtime and weight assets asked for (all when `None`).
pub async fn prepare_detectors(
    state: Arc<ServerState>,
    args: PrepareDetectorsArgs,
    consent: ConsentChannel,
    progress: Option<ProgressSink>,
    cancel: CancellationToken,
) -> Result<Prepared, ToolError> {
    let preparation = Preparation {
        kinds: &[AssetKind::Runtime, AssetKind::OcrModels, AssetKind::DetectorWeights],
        enabled: state.settings.detector_preparation,
        variable: "GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION",
        requested: args.assets.as_deref(),
    };
    prepare(state, preparation, consent, progress, cancel).await
}

/// What is still outstanding for the detectors and the reader (as the result lists it), and
/// whether geomap_process_image can run (the reader, or the detectors, suffice).
pub async fn outstanding(state: &Arc<ServerState>) -> (Vec<String>, bool) {
    let state = Arc::clone(state);
    trace::spawn_blocking(move || {
        let (catalog, root) = (&state.catalog, &state.settings.data_root);
        let (mut missing, _) = models::outstanding(catalog, root, &detect::REQUIREMENTS);
        let (reader_missing, _) = models::outstanding(catalog, root, &geomap_vision::ocr::REQUIREMENTS);
        let ready = missing.is_empty() || reader_missing.is_empty();
        for item in reader_missing {
            if !missing.contains(&item) {
                missing.push(item);
            }
        }
        (missing.iter().map(models::Missing::describe).collect(), ready)
    })
    .await
}

/// The result in a sentence or two.
pub fn summary(consent: Consent, installed: usize, failed: usize, download_bytes: u64, missing: &[String], ready: bool) -> String {
    let done = consent
        .refusal(download_bytes)
        .unwrap_or_else(|| format!("{installed} installed, {failed} not installed ({:.1} MB downloaded).", download_bytes as f64 / 1e6));
    match (missing, ready) {
        ([], _) => format!("{done} Layout detection and reading are ready: retry geomap_process_image calls that failed with missing_extra."),
        (missing, true) => format!(
            "{done} geomap_process_image is ready: it reads the layout from the map's words and colours (retry calls that failed with missing_extra). Still outstanding, for PEACE's detectors: {}.",
            missing.join("; ")
        ),
        (missing, false) => format!("{done} Still outstanding: {}.", missing.join("; ")),
    }
}
