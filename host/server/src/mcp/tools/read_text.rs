//! `geomap_read_text`: the words of a region of the scan, read with PP-OCR and stored as a `geomap-text/v1` document.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::status::Status;
use geomap_app::text::{ReadTextRequest, TOOL, TextReading};
use geomap_assets::Catalog;
use geomap_model::errors::ErrorCode;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;
use crate::mcp::resources::layout_resource;

/// `geomap_read_text`.
pub struct ReadText;

impl Tool for ReadText {
    const NAME: &'static str = TOOL;
    const TITLE: &'static str = "Read the map's words";
    const HINTS: Hints = Hints::WRITES_ANEW;
    const HEAVY: bool = true;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = ReadTextRequest;
    type Output = TextReading;

    fn description(_: &Catalog) -> String {
        "Read the text of a registered scan with PP-OCR (v4, or v5 as the operator chooses) on the CPU: the whole scan, a pixel `region`, or a component of a stored layout (`layout_id` and `component`). Finds text in overlapping 1024-pixel tiles at full resolution (progress per tile), so small legend type survives; a scan of 40 tiles or more is searched at half size when that finds what full resolution finds in its densest tiles; returns lines with text, box in the scan's pixels and score, stored as a geomap-text/v1 resource. Not idempotent: every call writes a new reading. On a fresh install it fails with missing_extra: geomap_prepare_detectors installs the runtime and the OCR models after the user agrees.".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        match status.reading {
            true => blocked(status, true),
            false => Some((ErrorCode::MissingExtra, "the ONNX Runtime or the OCR models (asset ppocr-v4, or ppocr-v5 as GEOMAP_OCR_MODELS chooses) are not installed")),
        }
    }

    async fn call(state: Arc<ServerState>, args: ReadTextRequest, call: Call) -> Result<Reply<TextReading>, AppError> {
        Ok(Reply::Done(state.app.read_text(args, call.progress).await?))
    }

    fn links(reading: &TextReading) -> Vec<Resource> {
        vec![layout_resource(&reading.resource_uri, "application/json")]
    }
}
