//! `geomap_prepare_detectors`: installs the ONNX Runtime, the OCR models and the detector weights after the user agreed.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::preparation::{DETECTORS_SETTING, DETECTORS_TOOL, PrepareDetectorsRequest, PrepareDetectorsResult, Prepared};
use geomap_app::status::Status;
use geomap_assets::{AssetKind, Catalog};

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;
use crate::mcp::consent::input_required;

/// `geomap_prepare_detectors`.
pub struct PrepareDetectors;

impl Tool for PrepareDetectors {
    const NAME: &'static str = DETECTORS_TOOL;
    const TITLE: &'static str = "Download the layout detectors";
    const HINTS: Hints = Hints { read_only: false, idempotent: true, open_world: true };
    const HEAVY: bool = false;
    const WITHHELD_BY: Option<Withholding> = Some(Withholding { setting: DETECTORS_SETTING, offered: |settings| settings.detector_preparation });
    type Args = PrepareDetectorsRequest;
    type Output = PrepareDetectorsResult;

    fn description(catalog: &Catalog) -> String {
        let megabytes = |kind| catalog.of_kind(kind).map(|asset| asset.download_size()).sum::<u64>() as f64 / 1e6;
        let ocr: Vec<String> = catalog.of_kind(AssetKind::OcrModels).map(|asset| format!("{} {:.1} MB", asset.id, asset.download_size() as f64 / 1e6)).collect();
        format!(
            "Downloads and installs what geomap_process_image needs: the ONNX Runtime library ({:.1} MB), the PP-OCR text models the operator chose ({}; the other only when named in `assets`) and the detector weights where a source is configured (PEACE publishes none: otherwise the operator imports them). It downloads and writes to the server's disk, so ask the user first and tell them the size; when the client supports elicitation the server asks the user itself. Reports what was installed, what is still outstanding, and whether detection is ready.",
            megabytes(AssetKind::Runtime),
            ocr.join(" or ")
        )
    }

    fn readiness(status: &Status) -> Option<Unready> {
        blocked(status, true)
    }

    async fn call(state: Arc<ServerState>, args: PrepareDetectorsRequest, call: Call) -> Result<Reply<PrepareDetectorsResult>, AppError> {
        Ok(match state.app.prepare_detectors(args, call.consent, call.progress).await? {
            Prepared::Done(result) => Reply::Done(result),
            Prepared::AskFirst { question } => Reply::AskFirst(input_required(&question)),
        })
    }

    fn links(_: &PrepareDetectorsResult) -> Vec<Resource> {
        Vec::new()
    }
}
