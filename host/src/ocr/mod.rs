//! Reading a map's words offline with PP-OCRv4 on ONNX Runtime (asset
//! `ppocr-v4`): text detection (DB), then recognition (CTC).
//!
//! Invariants: everything here is pure arithmetic on model outputs, tested on
//! its own; boxes leave in the pixels of the map the model saw, and the caller
//! maps them back. The model runs themselves are not wired yet (issue 10).

pub mod ctc;
pub mod db;
pub mod reader;
