//! From a scan's pixels to findings: the image (decoding, windows, the tiled
//! pixel store), colour science, loading models on ONNX Runtime, layout
//! detection with PEACE's two YOLOv10 detectors, OCR with PP-OCR, the layout
//! read from words and colour, the units' class raster, and the georeference a
//! sheet prints (neatline, coordinate labels, ticks).
//!
//! Invariants: the runtime and every model are approved assets found through
//! `geomap_assets` (nothing from the system's library path); boxes leave this
//! crate in the original scan's pixels; nothing here speaks MCP; every failure
//! is a [`VisionError`] (the georeference from labels adds what only labels can lack).

pub mod classes;
pub mod colour;
pub mod detect;
pub mod error;
pub mod graticule;
pub mod image;
pub mod layout;
pub mod models;
pub mod ocr;
pub mod structure;

use std::time::Instant;

pub use error::VisionError;

/// Milliseconds since `started`, to a tenth.
pub fn millis(started: Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 1e4).round() / 10.0
}
