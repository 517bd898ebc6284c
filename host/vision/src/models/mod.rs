//! Models from installed assets: where each required asset's file is now, what
//! is missing ([`Missing`]: an asset, a system library the runtime links, a model
//! that does not fit), loading ONNX Runtime from its asset, and telling whether
//! loaded models are still current ([`ModelFiles`]). [`onnx`] holds the runtime
//! itself and the session pools every model runs from.
//!
//! Invariants: the runtime and every model are approved assets found through
//! `geomap_assets` (or the operator's own copies), never on the system's
//! library path; requirement lists name the runtime first.

pub mod onnx;

use std::path::{Path, PathBuf};

use serde::Serialize;

use geomap_assets::{AssetState, Catalog};
use onnx::OnnxError;

/// The asset holding the ONNX Runtime library.
pub const RUNTIME_ASSET: &str = "peace-yolov10-runtime";

/// One thing a model family lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// An asset that is not installed (or is damaged).
    Asset { id: String, requirement: &'static str, has_source: bool, bytes: u64 },
    /// A shared library the runtime links that the system lacks.
    Library(String),
    /// A weights file that does not fit YOLOv10's contract.
    Model { id: String, problem: String },
}

impl Missing {
    /// One line for `details.missing_requirements`.
    pub fn describe(&self) -> String {
        match self {
            Missing::Asset { id, requirement, .. } => format!("{requirement} (asset {id})"),
            Missing::Library(library) => format!("{library} is missing"),
            Missing::Model { id, problem } => format!("asset {id} does not fit YOLOv10's contract: {problem}"),
        }
    }
}

/// A model in use: its asset and the sha256 of its file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelInfo {
    /// The asset id.
    pub asset: String,
    /// The file's SHA-256.
    pub sha256: String,
}

/// Where each of `requirements` (asset id, what it is) is now — its first file — or what is
/// missing (the runtime is not loaded here).
pub(crate) fn locate(catalog: &Catalog, data_root: &Path, requirements: &[(&str, &'static str)]) -> (Vec<Option<PathBuf>>, Vec<Missing>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for &(id, requirement) in requirements {
        let asset = catalog.get(id).expect("required assets are in the catalog");
        let status = geomap_assets::status(asset, data_root);
        match status.state {
            AssetState::Installed | AssetState::Custom => found.push(Some(status.path.join(&asset.files[0].name))),
            AssetState::Missing | AssetState::Corrupt => {
                found.push(None);
                missing.push(Missing::Asset { id: id.to_owned(), requirement, has_source: asset.has_source(), bytes: asset.download_size() });
            }
        }
    }
    (found, missing)
}

/// Model files and their modification times (nanoseconds), as loaded.
pub type ModelFiles = Vec<(PathBuf, i64)>;

/// The first file of each model asset of `requirements` (all but the runtime, which never
/// reloads) with its modification time, to tell whether loaded models are current; an asset
/// that is missing now is left out, so the list no longer matches.
pub fn current_files(catalog: &Catalog, data_root: &Path, requirements: &[(&str, &'static str)]) -> ModelFiles {
    let (found, _) = locate(catalog, data_root, requirements);
    found.into_iter().skip(1).flatten().map(|path| (path.clone(), std::fs::metadata(&path).map_or(0, |m| geomap_model::modified_ns(&m)))).collect()
}

/// Loads the runtime at `library` when it is installed; on failure, adds the system libraries
/// it lacks to `missing` and returns the loader's text.
pub(crate) fn runtime(library: Option<&PathBuf>, missing: &mut Vec<Missing>) -> Result<&'static ort::environment::Environment, String> {
    let Some(library) = library else { return Err(format!("the ONNX Runtime library is not installed (asset {RUNTIME_ASSET})")) };
    onnx::load_runtime(library).map_err(|error| {
        if let OnnxError::Runtime { missing_libraries, .. } = &error {
            missing.extend(missing_libraries.iter().cloned().map(Missing::Library));
        }
        error.to_string()
    })
}

/// What `requirements` (the runtime first: the detectors' [`crate::detect::REQUIREMENTS`] or the
/// reader's [`crate::ocr::requirements`]) lack now, without loading models (for capabilities):
/// assets, and system libraries when the runtime is installed (loading the library once tells).
pub fn outstanding(catalog: &Catalog, data_root: &Path, requirements: &[(&str, &'static str)]) -> (Vec<Missing>, Option<String>) {
    let (found, mut missing) = locate(catalog, data_root, requirements);
    let detector_error = runtime(found[0].as_ref(), &mut missing).err();
    (missing, detector_error)
}
