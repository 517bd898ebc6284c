//! The detectors as a whole: what they need (the runtime and two weight
//! assets, and the system libraries the runtime links), loading them, and
//! running a scan through both.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::legend::{self, colour_name, hex};
use super::model::Model;
use super::postprocess::{Detection, postprocess};
use super::{LEGEND_CLASSES, ONE_BOX_CLASSES, Rgb};
use crate::onnx::{self, OnnxError};
use geomap_assets::{AssetState, Catalog};
use geomap_model::layout::COMPONENT_CLASSES;
use geomap_model::layout::PixelBox;

/// The asset holding the ONNX Runtime library.
pub const RUNTIME_ASSET: &str = "peace-yolov10-runtime";
/// The component detector's weights.
pub const COMPONENT_ASSET: &str = "peace-component-weights";
/// The legend detector's weights.
pub const LEGEND_ASSET: &str = "peace-legend-weights";
/// What the detectors give, for messages.
const FEATURE: &str = "Layout detection";
/// What each asset is, for people.
pub const REQUIREMENTS: [(&str, &str); 3] = [(RUNTIME_ASSET, "runtime"), (COMPONENT_ASSET, "component weights"), (LEGEND_ASSET, "legend weights")];

/// One thing the detectors lack.
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

/// Why detection could not run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DetectError {
    /// Requirements of `feature` ("Layout detection", "Reading text") are outstanding;
    /// `detector_error` is the loader's own text.
    #[error("{feature} is not ready: {}", missing.iter().map(Missing::describe).collect::<Vec<_>>().join("; "))]
    NotReady { feature: &'static str, missing: Vec<Missing>, detector_error: Option<String> },
    /// The scan could not be decoded.
    #[error("{0}")]
    Decode(String),
    /// Inference failed.
    #[error("{0}")]
    Inference(String),
    /// The server's own files under the data root could not be written or read back (a full or
    /// read-only disk): a stored layout or reading, or the pixel store's tiles.
    #[error("{0}")]
    Storage(String),
    /// The caller cancelled between stages.
    #[error("cancelled")]
    Cancelled,
}

/// A model in use: its asset and the sha256 of its file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ModelInfo {
    /// The asset id.
    pub asset: String,
    /// The file's SHA-256.
    pub sha256: String,
}

/// The loaded detectors.
#[derive(Debug)]
pub struct Detectors {
    components: Model,
    legend: Model,
    /// The models, with their hashes.
    pub models: Vec<ModelInfo>,
    /// The weight files as loaded (to notice a reinstall).
    pub files: ModelFiles,
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

/// What `requirements` (the runtime first: the detectors' [`REQUIREMENTS`] or the reader's) lack
/// now, without loading models (for capabilities): assets, and system libraries when the runtime
/// is installed (loading the library once tells).
pub fn outstanding(catalog: &Catalog, data_root: &Path, requirements: &[(&str, &'static str)]) -> (Vec<Missing>, Option<String>) {
    let (found, mut missing) = locate(catalog, data_root, requirements);
    let detector_error = runtime(found[0].as_ref(), &mut missing).err();
    (missing, detector_error)
}

impl Detectors {
    /// Loads the runtime and both models from the installed assets, or says everything that is missing.
    pub fn load(catalog: &Catalog, data_root: &Path) -> Result<Detectors, DetectError> {
        let (found, mut missing) = locate(catalog, data_root, &REQUIREMENTS);
        let environment = runtime(found[0].as_ref(), &mut missing);
        let (Ok(environment), Some(components), Some(legend)) = (&environment, &found[1], &found[2]) else {
            return Err(DetectError::NotReady { feature: FEATURE, missing, detector_error: environment.err() });
        };
        let environment: &'static ort::environment::Environment = environment;
        let load = |id: &str, path: &Path| Model::load(environment, path).map_err(|error| Missing::Model { id: id.to_owned(), problem: error.to_string() });
        let (components_model, legend_model) = (load(COMPONENT_ASSET, components), load(LEGEND_ASSET, legend));
        let (components_model, legend_model) = match (components_model, legend_model) {
            (Ok(c), Ok(l)) => (c, l),
            (c, l) => {
                missing.extend(c.err().into_iter().chain(l.err()));
                return Err(DetectError::NotReady { feature: FEATURE, missing, detector_error: None });
            }
        };
        let hash = |path: &Path| geomap_assets::file_sha256(path).unwrap_or_default();
        Ok(Detectors {
            components: components_model,
            legend: legend_model,
            models: vec![
                ModelInfo { asset: COMPONENT_ASSET.to_owned(), sha256: hash(components) },
                ModelInfo { asset: LEGEND_ASSET.to_owned(), sha256: hash(legend) },
            ],
            files: current_files(catalog, data_root, &REQUIREMENTS),
        })
    }

    /// Finds the map's components (classes of [`COMPONENT_CLASSES`]) in `image`.
    pub fn components(&self, image: &Rgb, min_score: f32) -> Result<Vec<Detection>, DetectError> {
        let (geometry, input) = image.letterbox(self.components.size);
        let rows = self.components.run(input).map_err(|error| DetectError::Inference(error.to_string()))?;
        Ok(postprocess(&rows, COMPONENT_CLASSES.len(), min_score, &geometry, &ONE_BOX_CLASSES))
    }

    /// Reads the legend inside `legend_box` of `image`: swatches paired with their text, in original pixels.
    pub fn legend(&self, image: &Rgb, legend_box: &PixelBox, min_score: f32) -> Result<Vec<LegendEntry>, DetectError> {
        let (x0, y0, x1, y1) = legend_box.pixels(image.width, image.height);
        if x1 <= x0 || y1 <= y0 {
            return Ok(Vec::new());
        }
        let crop = image.crop((x0, y0, x1, y1));
        let (geometry, input) = crop.letterbox(self.legend.size);
        let rows = self.legend.run(input).map_err(|error| DetectError::Inference(error.to_string()))?;
        let shift = |d: Detection| Detection {
            bbox: PixelBox { x0: d.bbox.x0 + x0 as f64, y0: d.bbox.y0 + y0 as f64, x1: d.bbox.x1 + x0 as f64, y1: d.bbox.y1 + y0 as f64 },
            ..d
        };
        let found: Vec<Detection> = postprocess(&rows, LEGEND_CLASSES.len(), min_score, &geometry, &[]).into_iter().map(shift).collect();
        let (swatches, texts): (Vec<Detection>, Vec<Detection>) = found.into_iter().partition(|d| d.class == 0);
        Ok(legend::pair(&swatches, &texts)
            .into_iter()
            .map(|(swatch, text)| {
                let colour = legend::swatch_colour(&image.pixels, image.width, image.height, &swatch.bbox);
                LegendEntry {
                    swatch: swatch.bbox,
                    text: text.map(|t| t.bbox),
                    colour_hex: Some(hex(colour)),
                    colour_name: Some(colour_name(colour).to_owned()),
                    score: score(swatch.score),
                }
            })
            .collect())
    }
}

/// One legend entry: a swatch, the text beside it, its colour.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LegendEntry {
    /// The colour swatch, in the scan's pixels.
    pub swatch: PixelBox,
    /// The text on its row, when there is one.
    pub text: Option<PixelBox>,
    /// The swatch's colour (median of its non-black pixels), `#rrggbb`; absent when a map bundle gives none.
    pub colour_hex: Option<String>,
    /// The nearest of PEACE's 25 named colours.
    pub colour_name: Option<String>,
    /// The swatch's score (1 for a map bundle's entries).
    pub score: f64,
}

/// A model's score as reported: four decimals (an f32 printed as f64 would show float noise).
pub fn score(value: f32) -> f64 {
    (value as f64 * 1e4).round() / 1e4
}

/// Milliseconds since `started`.
pub fn millis(started: Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 1e4).round() / 10.0
}
