//! From a scan's pixels to findings: decoding and the tiled pixel store,
//! ONNX Runtime loading, layout detection with PEACE's two YOLOv10 detectors,
//! OCR with PP-OCRv4, the legend read from words, colour science, and the
//! georeference a sheet prints (neatline, coordinate labels, ticks).
//!
//! Invariants: the runtime and every model are approved assets found through
//! `geomap_assets` (nothing from the system's library path); boxes leave this
//! crate in the original scan's pixels; nothing here speaks MCP.

pub mod detect;
pub mod graticule;
pub mod ocr;
pub mod onnx;
pub mod pixels;
pub mod units;
