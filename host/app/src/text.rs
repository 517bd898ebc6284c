//! Reading the words of a region of a scan (or of a component of a stored
//! layout) with PP-OCR (`GEOMAP_OCR_MODELS`) in tiles, stored as a
//! `geomap-text/v1` document.
//!
//! Invariants: the region's pixels come from the pixel store (the scan's first
//! read decodes it into tiles); lines leave in the scan's pixels; progress
//! counts tiles, and a cancelled reading stops at the next tile and stores
//! nothing.

use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_model::page::PixelBox;
use geomap_model::trace;
use geomap_store::registry::{Document, StoredDocument};
use geomap_vision::ocr::reader::TextLine;
use geomap_vision::{VisionError, millis};

use crate::provenance::{Made, PROVENANCE_FILE, stored_uris};
use crate::uris::layout_uri;
use crate::{App, AppError, ArgumentError, Progress};

/// The name `geomap_read_text` is known by.
pub const TOOL: &str = "geomap_read_text";
/// The schema tag of stored readings.
pub const TEXT_SCHEMA: &str = "geomap-text/v1";

/// Arguments of `geomap_read_text`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadTextRequest {
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

impl ReadTextRequest {
    /// The score floor, or the argument that is out of range or conflicts with another.
    fn check(&self) -> Result<f64, ArgumentError> {
        let min_score = self.min_score.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&min_score) {
            return Err(ArgumentError::wrong("/min_score", "a score from 0 to 1"));
        }
        match (&self.region, &self.layout_id, &self.component) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(ArgumentError::conflict("/region", "either region or layout_id with component, not both")),
            (None, Some(_), None) => Err(ArgumentError::conflict("/component", "component (an index into the layout's components) with layout_id")),
            (None, None, Some(_)) => Err(ArgumentError::conflict("/layout_id", "layout_id with component")),
            _ => Ok(min_score),
        }
    }
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
    /// How many times smaller the text detector saw the region: 1 (as scanned), or 2 when the
    /// region is 40 tiles or more and its type large enough to be found at half size.
    pub detect_scale: u32,
    /// The lines, top to bottom.
    pub lines: Vec<TextLine>,
    /// Time per stage.
    pub timings: TextTimings,
    /// The files stored with it.
    pub files: Vec<String>,
}

impl App {
    /// `geomap_read_text`: loads the reader (or says what it lacks), takes the region's pixels from
    /// the pixel store and reads it tile by tile, then stores the reading.
    pub async fn read_text(self: &Arc<Self>, request: ReadTextRequest, progress: Progress) -> Result<TextReading, AppError> {
        let min_score = request.check()?;
        let app = Arc::clone(self);
        trace::spawn_blocking(move || app.read_text_now(&request, min_score, &progress)).await
    }

    fn read_text_now(&self, request: &ReadTextRequest, min_score: f64, progress: &Progress) -> Result<TextReading, AppError> {
        let begun = crate::now();
        let map = self.open_registered(&request.map_id)?;
        map.pixels("read")?;
        let (width, height) = (map.record.width as f64, map.record.height as f64);
        let region = match (request.region, &request.layout_id, request.component) {
            (Some(region), ..) => region,
            (None, Some(layout_id), Some(index)) => self.component_box(map.id(), layout_id, index)?,
            _ => PixelBox { x0: 0.0, y0: 0.0, x1: width, y1: height },
        };
        if !region.is_inside(width, height) {
            return Err(ArgumentError::wrong("/region", format!("a box with 0 <= x0 < x1 <= {width} and 0 <= y0 < y1 <= {height} (the scan's pixels)")).into());
        }
        let started = Instant::now();
        let reader = self.text_reader()?;
        let load_ms = millis(started);
        let started = Instant::now();
        let window = region.pixels(map.record.width as u32, map.record.height as u32);
        let image = map.window(self, window)?;
        let decode_ms = millis(started);
        let mut total = 1;
        let mut reading = geomap_vision::ocr::read(&reader, &image, (0, 0, image.width, image.height), min_score, |done, tiles| {
            total = tiles as u64 + 1;
            let message = if done < tiles { format!("finding text in tile {} of {tiles}", done + 1) } else { "reading the text boxes".to_owned() };
            progress.units(done as u64, total, message).map_err(VisionError::from)
        })?;
        let (left, top) = (f64::from(window.0), f64::from(window.1));
        for line in &mut reading.lines {
            let PixelBox { x0, y0, x1, y1 } = line.bbox;
            line.bbox = PixelBox { x0: x0 + left, y0: y0 + top, x1: x1 + left, y1: y1 + top }; // back to the scan's pixels
        }
        let map_id = map.id().to_owned();
        let text_id = format!("txt_{}", geomap_model::random_hex(10));
        let reading = TextReading {
            schema: TEXT_SCHEMA.to_owned(),
            resource_uri: layout_uri(&map_id, &text_id, "text.json"),
            map_id,
            text_id,
            created_at: crate::now(),
            region,
            tiles: reading.tiles,
            detect_scale: reading.detect_scale,
            lines: reading.lines,
            timings: TextTimings { load_ms, decode_ms, detect_ms: reading.detect_ms, recognise_ms: reading.recognise_ms },
            files: vec!["text.json".to_owned(), PROVENANCE_FILE.to_owned()],
        };
        let staged = self.stage(&reading.map_id, &reading.text_id)?;
        Made {
            tool: TOOL,
            run_id: &reading.text_id,
            made: stored_uris(&reading.map_id, &reading.text_id, &reading.files[..1]),
            scan: (&reading.map_id, &map.record.sha256),
            used: request.layout_id.iter().map(|layout_id| (layout_uri(&reading.map_id, layout_id, "layout.json"), "layout")).collect(),
            models: reader.models(),
            parameters: serde_json::to_value(request).expect("requests serialize"),
            started: &begun,
            ended: &crate::now(),
        }
        .write(staged.path())?;
        let document = serde_json::to_string_pretty(&reading).expect("readings serialize");
        let record = StoredDocument {
            kind: Document::Reading,
            id: reading.text_id.clone(),
            map_id: reading.map_id.clone(),
            created_at: reading.created_at.clone(),
            document,
        };
        self.store(staged, "text.json", &record)?;
        let _ = progress.units(total, total, "done"); // stored: a cancellation now changes nothing
        Ok(reading)
    }

    /// The box of component `index` of stored layout `layout_id`.
    fn component_box(&self, map_id: &str, layout_id: &str, index: usize) -> Result<PixelBox, AppError> {
        let layout = self.layout(map_id, layout_id)?;
        let count = layout.components.len();
        let component = layout
            .components
            .into_iter()
            .nth(index)
            .ok_or_else(|| ArgumentError::wrong("/component", format!("an index below {count} (the layout's components)")))?;
        Ok(component.bbox)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgumentProblem;

    #[test]
    fn a_region_and_a_component_exclude_each_other() {
        let region = PixelBox { x0: 0.0, y0: 0.0, x1: 10.0, y1: 10.0 };
        let base = ReadTextRequest { map_id: "map_x".into(), ..ReadTextRequest::default() };
        let cases = [
            (ReadTextRequest { min_score: Some(1.5), ..base.clone() }, "/min_score", ArgumentProblem::WrongValue),
            (ReadTextRequest { region: Some(region), layout_id: Some("lay_x".into()), ..base.clone() }, "/region", ArgumentProblem::Conflict),
            (ReadTextRequest { layout_id: Some("lay_x".into()), ..base.clone() }, "/component", ArgumentProblem::Conflict),
            (ReadTextRequest { component: Some(0), ..base.clone() }, "/layout_id", ArgumentProblem::Conflict),
        ];
        for (request, field, problem) in cases {
            let error = request.check().unwrap_err();
            assert_eq!((error.field.as_str(), error.problem), (field, problem), "{error}");
        }
        assert_eq!(ReadTextRequest { layout_id: Some("lay_x".into()), component: Some(1), ..base }.check(), Ok(0.5));
    }
}

#[cfg(test)]
mod async_tests {
    use super::*;
    use crate::testing::TestApp;

    #[tokio::test(flavor = "multi_thread")]
    async fn a_region_outside_the_scan_or_a_missing_reader_stops_the_reading() {
        let test = TestApp::new(&[]);
        test.scan("a.png", 100, 80, |_, _| [255, 255, 255]);
        let map_id = test.register("a.png").await;
        let request = |region: Option<PixelBox>| ReadTextRequest { map_id: map_id.clone(), region, ..ReadTextRequest::default() };
        let outside = test.app.read_text(request(Some(PixelBox { x0: 0.0, y0: 0.0, x1: 200.0, y1: 10.0 })), Progress::none()).await.unwrap_err();
        assert!(matches!(&outside, AppError::InvalidArguments(argument) if argument.field == "/region"), "{outside:?}");
        let no_reader = test.app.read_text(request(None), Progress::none()).await.unwrap_err();
        assert!(matches!(no_reader, AppError::Vision(VisionError::NotReady { feature: "Reading text", .. })), "{no_reader:?}");
        let no_layout = ReadTextRequest { layout_id: Some("lay_x".into()), component: Some(0), ..request(None) };
        let unknown = test.app.read_text(no_layout, Progress::none()).await.unwrap_err();
        assert!(matches!(unknown, AppError::MapNotFound { reason: crate::MapGone::UnknownArtifact, .. }), "{unknown:?}");
    }
}
