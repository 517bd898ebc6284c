//! `geomap_process_image`: the map's layout and its words, stored as a `geomap-layout/v1` document
//! with a crop of every component and an annotated preview.

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::layout::{Layout, LayoutRequest, TOOL};
use geomap_app::status::Status;
use geomap_assets::Catalog;
use geomap_model::errors::ErrorCode;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, blocked};
use crate::mcp::ServerState;
use crate::mcp::resources::layout_resource;

/// `geomap_process_image`.
pub struct ProcessImage;

impl Tool for ProcessImage {
    const NAME: &'static str = TOOL;
    const TITLE: &'static str = "Find the map's layout";
    const HINTS: Hints = Hints::WRITES_ANEW;
    const HEAVY: bool = true;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = LayoutRequest;
    type Output = Layout;

    fn description(_: &Catalog) -> String {
        "Find a registered map's layout and read its words: its components (title, main_map, legend, scale, index_map, cross_section, stratigraphic_column, others) with boxes in the scan's pixels, the title's text, the map's metadata (authors, year, publisher and series, scale, quadrangle, base map with its projection and datum, contour interval: each field with the words it came from; a field not printed is absent and named in metadata.warnings), and each legend unit (colour swatch, colour as hex and name, code, description, the ages it names with their ICS intervals in Ma, its rock names) resolved through ics-timescale and cgi-lithology when they are ready (knowledge installed later resolves them when first needed, by geomap_unit_at, geomap_extract_units or reading the layout's resource: no second layout call). With PEACE's detectors and the OCR models it reads the words inside the detected boxes (method both); with the OCR models alone it reads the layout from the words and colours (method text, the usual case: PEACE's weights have no public source): the scale, cross sections, correlation chart and index map from their captions (each with the evidence that placed it), and the explanation's line and point symbols as symbol_entries (each sample measured: a line's width, colour, solid/dashed/dotted pattern and period, teeth or other marks and their side; a point's number), with what it did not find in not_found; `warnings` say what it did without. Stores the layout (geomap-layout/v1) with a PNG crop of every component, an annotated preview and the words it read (words.json), all as resources. Not idempotent: every call writes a new layout. On a map registered from a map bundle it returns the bundle's layout as written. On a fresh install it fails with missing_extra: its hints say who installs the runtime and the OCR models (geomap_prepare_detectors after the user agrees, or the operator).".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        match status.detectors.ready || status.reading {
            true => blocked(status, true),
            false => Some((ErrorCode::MissingExtra, "neither the OCR models (the ONNX Runtime and asset ppocr-v4, or ppocr-v5 as GEOMAP_OCR_MODELS chooses) nor PEACE's detectors are installed")),
        }
    }

    async fn call(state: Arc<ServerState>, args: LayoutRequest, call: Call) -> Result<Reply<Layout>, AppError> {
        Ok(Reply::Done(state.app.find_layout(args, call.progress).await?))
    }

    fn links(layout: &Layout) -> Vec<Resource> {
        let mut links = vec![layout_resource(&layout.resource_uri, "application/json")];
        let pictures = layout.preview_uri.iter().chain(layout.components.iter().filter_map(|component| component.crop_uri.as_ref()));
        links.extend(pictures.map(|uri| layout_resource(uri, "image/png")));
        links
    }
}
