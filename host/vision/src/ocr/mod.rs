//! Reading a map's words offline with PP-OCRv4 on ONNX Runtime (asset
//! `ppocr-v4`): text detection (DB), then recognition (CTC); the reader and its
//! models only (what the words say about the layout is [`crate::layout`]'s).
//!
//! Invariants: the post-processing (`db`, `ctc`) and the swatch renditions
//! (`swatch`) are pure arithmetic, tested on their own; the reader loads only
//! the approved runtime and `ppocr-v4` (what is missing is told as the
//! detectors tell it, [`crate::models::Missing`]); lines leave in the scan's pixels.

pub mod ctc;
pub mod db;
pub mod reader;
pub mod swatch;

use std::path::Path;
use std::time::Instant;

use crate::error::VisionError;
use crate::image::Rgb;
use crate::millis;
use crate::models::{RUNTIME_ASSET, locate, runtime};
use geomap_assets::Catalog;
use reader::{Line, Reader};

/// The asset holding the OCR models.
pub const OCR_ASSET: &str = "ppocr-v4";
/// What reading text needs (the runtime first).
pub const REQUIREMENTS: [(&str, &str); 2] = [(RUNTIME_ASSET, "runtime"), (OCR_ASSET, "OCR models")];

/// Loads the reader from the installed assets, or says everything that is missing.
pub fn load(catalog: &Catalog, data_root: &Path) -> Result<Reader, VisionError> {
    let (found, mut missing) = locate(catalog, data_root, &REQUIREMENTS);
    let environment = runtime(found[0].as_ref(), &mut missing);
    let (Ok(environment), Some(first_model)) = (&environment, &found[1]) else {
        return Err(VisionError::NotReady { feature: "Reading text", missing, detector_error: environment.err() });
    };
    let folder = first_model.parent().expect("an asset file is inside its folder");
    Reader::load(environment, folder).map_err(|error| VisionError::Inference(format!("the OCR models do not load: {error}")))
}

/// The words of one region of a scan.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The lines, top to bottom.
    pub lines: Vec<Line>,
    /// Tiles read.
    pub tiles: usize,
    /// Milliseconds finding text in the tiles.
    pub detect_ms: f64,
    /// Milliseconds recognising the lines.
    pub recognise_ms: f64,
}

/// Reads `region` (whole pixels, inside `image`) tile by tile; `before_tile(done, tiles)` runs
/// before each tile and after the last, and stops the reading when it returns an error (cancellation).
pub fn read(
    reader: &Reader,
    image: &Rgb,
    region: (u32, u32, u32, u32),
    min_score: f64,
    mut before_tile: impl FnMut(usize, usize) -> Result<(), VisionError>,
) -> Result<Reading, VisionError> {
    let tiles = Reader::tiles(region);
    let started = Instant::now();
    let mut boxes = Vec::new();
    for (done, tile) in tiles.iter().enumerate() {
        before_tile(done, tiles.len())?;
        boxes.extend(reader.detect(image, *tile).map_err(|error| VisionError::Inference(error.to_string()))?);
    }
    before_tile(tiles.len(), tiles.len())?;
    let detect_ms = millis(started);
    let started = Instant::now();
    let lines = reader.recognise(image, boxes, min_score).map_err(|error| VisionError::Inference(error.to_string()))?;
    Ok(Reading { lines, tiles: tiles.len(), detect_ms, recognise_ms: millis(started) })
}
