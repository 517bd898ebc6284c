//! Reading a map's words offline with PP-OCRv4 on ONNX Runtime (asset
//! `ppocr-v4`): text detection (DB), then recognition (CTC).
//!
//! Invariants: the post-processing (`db`, `ctc`) is pure arithmetic, tested on
//! its own; the reader loads only the approved runtime and `ppocr-v4`
//! (what is missing is told as the detectors tell it); lines leave in the
//! scan's pixels.

pub mod ctc;
pub mod db;
pub mod reader;
pub mod terms;
pub mod words;

use std::path::Path;

use crate::assets::Catalog;
use crate::detect::pipeline::{DetectError, RUNTIME_ASSET, locate, runtime};
use reader::Reader;

/// The asset holding the OCR models.
pub const OCR_ASSET: &str = "ppocr-v4";
/// What reading text needs.
pub const REQUIREMENTS: [(&str, &str); 2] = [(RUNTIME_ASSET, "runtime"), (OCR_ASSET, "OCR models")];

/// Loads the reader from the installed assets, or says everything that is missing.
pub fn load(catalog: &Catalog, data_root: &Path) -> Result<Reader, DetectError> {
    let (found, mut missing) = locate(catalog, data_root, &REQUIREMENTS);
    let environment = runtime(found[0].as_ref(), &mut missing);
    let (Ok(environment), Some(first_model)) = (&environment, &found[1]) else {
        return Err(DetectError::NotReady { feature: "Reading text", missing, detector_error: environment.err() });
    };
    let folder = first_model.parent().expect("an asset file is inside its folder");
    Reader::load(environment, folder).map_err(|error| DetectError::Inference(format!("the OCR models do not load: {error}")))
}

/// Whether the assets reading text needs are installed (nothing is loaded to tell).
pub fn assets_ready(catalog: &Catalog, data_root: &Path) -> bool {
    locate(catalog, data_root, &REQUIREMENTS).1.is_empty()
}
