//! `geomap_read_text`: the words of a region of the scan (or of a component of
//! a stored layout), read with PP-OCRv4 in full-resolution tiles and stored as
//! a `geomap-text/v1` document.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::mcp::ServerState;
use crate::mcp::adapter::ToolError;
use crate::mcp::arguments::{ArgumentError, ArgumentProblem};
use crate::mcp::progress::{ProgressSink, ProgressUpdate};
use crate::mcp::uris::layout_uri;
use geomap_model::layout::PixelBox;
use geomap_model::trace;
use geomap_store::media::MediaError;
use geomap_store::registry::{Document, StoredDocument};
use geomap_vision::ocr::reader::Line;
use geomap_vision::{VisionError, millis};

use super::open_registered;

/// The schema tag of stored readings.
pub const TEXT_SCHEMA: &str = "geomap-text/v1";

/// Arguments of `geomap_read_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadTextArgs {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// The part of the scan to read, in its pixels (default: the whole scan).
    pub region: Option<PixelBox>,
    /// Read a component of this stored layout instead (with `component`).
    pub layout_id: Option<String>,
    /// The index of that component in the layout's `components`.
    pub component: Option<usize>,
    /// The score floor for lines, 0–1 (default 0.5).
    pub min_score: Option<f64>,
}

/// Milliseconds per stage.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TextTimings {
    /// Loading the models.
    pub load_ms: f64,
    /// Taking the region's pixels from the pixel store (the scan's first read decodes it into tiles).
    pub decode_ms: f64,
    /// Finding text in every tile.
    pub detect_ms: f64,
    /// Recognising the lines.
    pub recognise_ms: f64,
}

/// The result of `geomap_read_text`, stored as `text.json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TextReading {
    /// `geomap-text/v1`.
    pub schema: String,
    /// The map.
    pub map_id: String,
    /// This reading's ID; every call writes a new one.
    pub text_id: String,
    /// The stored reading as an MCP resource.
    pub resource_uri: String,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// The region read, in the scan's pixels.
    pub region: PixelBox,
    /// Tiles read (1024 pixels a side, overlapping by 128).
    pub tiles: usize,
    /// The lines, top to bottom.
    pub lines: Vec<Line>,
    /// Time per stage.
    pub timings: TextTimings,
    /// The files stored with it.
    pub files: Vec<String>,
}

/// `geomap_read_text`: loads the reader (or says what it lacks), takes the region's pixels from the
/// pixel store (the scan's first read decodes it into tiles) and reads it tile by tile.
pub async fn read_text(
    state: Arc<ServerState>,
    args: ReadTextArgs,
    progress: Option<ProgressSink>,
    cancel: CancellationToken,
) -> Result<TextReading, ToolError> {
    let min_score = args.min_score.unwrap_or(0.5);
    let wrong = |field: &str, expected: &str| ArgumentError { field: field.to_owned(), problem: ArgumentProblem::WrongValue, expected: expected.to_owned() };
    if !(0.0..=1.0).contains(&min_score) {
        return Err(wrong("/min_score", "a score from 0 to 1").into());
    }
    let conflict = |field: &str, expected: &str| ArgumentError { field: field.to_owned(), problem: ArgumentProblem::Conflict, expected: expected.to_owned() };
    match (&args.region, &args.layout_id, &args.component) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => return Err(conflict("/region", "either region or layout_id with component, not both").into()),
        (None, Some(_), None) => return Err(conflict("/component", "component (an index into the layout's components) with layout_id").into()),
        (None, None, Some(_)) => return Err(conflict("/layout_id", "layout_id with component").into()),
        _ => {}
    }
    let (updates, received) = tokio::sync::mpsc::unbounded_channel();
    let forwarding = progress.map(|sink| tokio::spawn(sink.forward(received)));
    let outcome = trace::spawn_blocking(move || {
        let map = open_registered(&state, &args.map_id)?;
        if !map.record.media_type.has_pixels() {
            return Err(MediaError::NoPixels { action: "read" }.into());
        }
        let (width, height) = (map.record.width as f64, map.record.height as f64);
        let region = match (args.region, &args.layout_id, args.component) {
            (Some(region), ..) => region,
            (None, Some(layout_id), Some(index)) => component_box(&state, &map.record.map_id, layout_id, index)?,
            _ => PixelBox { x0: 0.0, y0: 0.0, x1: width, y1: height },
        };
        if !region.is_inside(width, height) {
            return Err(wrong("/region", &format!("a box with 0 <= x0 < x1 <= {width} and 0 <= y0 < y1 <= {height} (the scan's pixels)")).into());
        }
        let started = Instant::now();
        let reader = super::text_reader(&state)?;
        let load_ms = millis(started);
        let started = Instant::now();
        let window = region.pixels(map.record.width as u32, map.record.height as u32);
        let image = state.pixels.window(&map.record.sha256, &map.file, state.settings.max_image_pixels, window)?;
        let decode_ms = millis(started);
        let mut total = 1;
        let mut reading = geomap_vision::ocr::read(&reader, &image, (0, 0, image.width, image.height), min_score, |done, tiles| {
            total = tiles as u64 + 1;
            let message = if done < tiles { format!("finding text in tile {} of {tiles}", done + 1) } else { "reading the text boxes".to_owned() };
            let _ = updates.send(ProgressUpdate { done: done as u64, total, message });
            if cancel.is_cancelled() { Err(VisionError::Cancelled) } else { Ok(()) }
        })?;
        let (left, top) = (f64::from(window.0), f64::from(window.1));
        for line in &mut reading.lines {
            let PixelBox { x0, y0, x1, y1 } = line.bbox;
            line.bbox = PixelBox { x0: x0 + left, y0: y0 + top, x1: x1 + left, y1: y1 + top }; // back to the scan's pixels
        }
        let map_id = map.record.map_id.clone();
        let text_id = format!("txt_{}", geomap_model::random_hex(10));
        let reading = TextReading {
            schema: TEXT_SCHEMA.to_owned(),
            resource_uri: layout_uri(&map_id, &text_id, "text.json"),
            map_id,
            text_id,
            created_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            region,
            tiles: reading.tiles,
            lines: reading.lines,
            timings: TextTimings { load_ms, decode_ms, detect_ms: reading.detect_ms, recognise_ms: reading.recognise_ms },
            files: vec!["text.json".to_owned()],
        };
        let document = serde_json::to_string_pretty(&reading).expect("readings serialize");
        let staged = super::stored::stage(&state, &reading.map_id, &reading.text_id)?;
        let record = StoredDocument {
            kind: Document::Reading,
            id: reading.text_id.clone(),
            map_id: reading.map_id.clone(),
            created_at: reading.created_at.clone(),
            document,
        };
        super::stored::store(&state, staged, "text.json", &record)?;
        let _ = updates.send(ProgressUpdate { done: total, total, message: "done".to_owned() });
        Ok(reading)
    })
    .await;
    if let Some(forwarding) = forwarding {
        let _ = forwarding.await; // every progress notification goes out before the result
    }
    outcome
}

/// The box of component `index` of stored layout `layout_id`.
fn component_box(state: &ServerState, map_id: &str, layout_id: &str, index: usize) -> Result<PixelBox, ToolError> {
    let layout = super::stored::layout(state, map_id, layout_id)?;
    let count = layout.components.len();
    let component = layout.components.into_iter().nth(index).ok_or_else(|| ArgumentError {
        field: "/component".to_owned(),
        problem: ArgumentProblem::WrongValue,
        expected: format!("an index below {count} (the layout's components)"),
    })?;
    Ok(component.bbox)
}
