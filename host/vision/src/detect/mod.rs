//! Layout detection with PEACE's two YOLOv10 detectors on ONNX Runtime: the
//! component detector finds the map's parts (title, main map, legend, ...),
//! the legend detector finds colour swatches and their text inside each
//! legend. [`Detectors`] loads both from the installed assets (the runtime
//! and two weight assets, [`REQUIREMENTS`]) and runs components then legends;
//! [`letterbox`] makes a model's input; `postprocess` maps its rows back to the
//! scan; `legend` pairs swatches with their text; `model` checks YOLOv10's contract.
//!
//! Invariants:
//! - The runtime and the weights are approved assets read from the data root
//!   (or the operator's own copies); nothing is looked up on the system's
//!   library path or in the environment (`crate::models`).
//! - No `ort` call happens before the runtime loaded from its asset.
//! - Boxes leave this module in the original scan's pixels.
//! - Post-processing is pure and tested on its own (`postprocess`, `legend`).

pub mod legend;
pub mod model;
pub mod postprocess;

use std::path::Path;

use serde::Serialize;

use crate::colour::{colour_name, hex, swatch_colour};
use crate::error::VisionError;
use crate::image::{Resampling, Rgb};
use crate::models::{Missing, ModelFiles, ModelInfo, RUNTIME_ASSET, current_files, locate, runtime};
use geomap_assets::Catalog;
use geomap_model::page::COMPONENT_CLASSES;
use geomap_model::page::PixelBox;
use model::Model;
use postprocess::{Detection, Letterbox, PAD_GREY, postprocess};

/// The component detector's weights.
pub const COMPONENT_ASSET: &str = "peace-component-weights";
/// The legend detector's weights.
pub const LEGEND_ASSET: &str = "peace-legend-weights";
/// What the detectors give, for messages.
const FEATURE: &str = "Layout detection";
/// What each asset the detectors need is, for people (the runtime first).
pub const REQUIREMENTS: [(&str, &str); 3] = [(RUNTIME_ASSET, "runtime"), (COMPONENT_ASSET, "component weights"), (LEGEND_ASSET, "legend weights")];

/// Component classes a map has at most one of (PEACE's one-box rule).
pub const ONE_BOX_CLASSES: [usize; 4] = [0, 1, 2, 3];
/// The legend detector's classes.
pub const LEGEND_CLASSES: [&str; 2] = ["swatch", "text"];

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

impl Detectors {
    /// Loads the runtime and both models from the installed assets, or says everything that is missing.
    pub fn load(catalog: &Catalog, data_root: &Path) -> Result<Detectors, VisionError> {
        let (found, mut missing) = locate(catalog, data_root, &REQUIREMENTS);
        let environment = runtime(found[0].as_ref(), &mut missing);
        let (Ok(environment), Some(components), Some(legend)) = (&environment, &found[1], &found[2]) else {
            return Err(VisionError::NotReady { feature: FEATURE, missing, detector_error: environment.err() });
        };
        let environment: &'static ort::environment::Environment = environment;
        let load = |id: &str, path: &Path| Model::load(environment, path).map_err(|error| Missing::Model { id: id.to_owned(), problem: error.to_string() });
        let (components_model, legend_model) = (load(COMPONENT_ASSET, components), load(LEGEND_ASSET, legend));
        let (components_model, legend_model) = match (components_model, legend_model) {
            (Ok(c), Ok(l)) => (c, l),
            (c, l) => {
                missing.extend(c.err().into_iter().chain(l.err()));
                return Err(VisionError::NotReady { feature: FEATURE, missing, detector_error: None });
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
    pub fn components(&self, image: &Rgb, min_score: f32) -> Result<Vec<Detection>, VisionError> {
        let (geometry, input) = letterbox(image, self.components.size);
        let rows = self.components.run(input).map_err(|error| VisionError::Inference(error.to_string()))?;
        Ok(postprocess(&rows, COMPONENT_CLASSES.len(), min_score, &geometry, &ONE_BOX_CLASSES))
    }

    /// Reads the legend inside `legend_box` of `image`: swatches paired with their text, in original pixels.
    pub fn legend(&self, image: &Rgb, legend_box: &PixelBox, min_score: f32) -> Result<Vec<LegendEntry>, VisionError> {
        let (x0, y0, x1, y1) = legend_box.pixels(image.width, image.height);
        if x1 <= x0 || y1 <= y0 {
            return Ok(Vec::new());
        }
        let crop = image.crop((x0, y0, x1, y1));
        let (geometry, input) = letterbox(&crop, self.legend.size);
        let rows = self.legend.run(input).map_err(|error| VisionError::Inference(error.to_string()))?;
        let shift = |d: Detection| Detection {
            bbox: PixelBox { x0: d.bbox.x0 + x0 as f64, y0: d.bbox.y0 + y0 as f64, x1: d.bbox.x1 + x0 as f64, y1: d.bbox.y1 + y0 as f64 },
            ..d
        };
        let found: Vec<Detection> = postprocess(&rows, LEGEND_CLASSES.len(), min_score, &geometry, &[]).into_iter().map(shift).collect();
        let (swatches, texts): (Vec<Detection>, Vec<Detection>) = found.into_iter().partition(|d| d.class == 0);
        Ok(legend::pair(&swatches, &texts)
            .into_iter()
            .map(|(swatch, text)| {
                let colour = swatch_colour(&image.pixels, image.width, image.height, &swatch.bbox);
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

/// Letterboxes `image` into a `size` square (bilinear interpolation, grey padding) as a
/// detector's input: `[1, 3, size, size]` floats, RGB planes scaled to 0–1.
pub fn letterbox(image: &Rgb, size: u32) -> (Letterbox, Vec<f32>) {
    let geometry = Letterbox::new(image.width, image.height, size);
    let (inner_w, inner_h) = geometry.inner;
    let resized = image.resized_region((0, 0, image.width, image.height), inner_w, inner_h, Resampling::Interpolated);
    let plane = (size * size) as usize;
    let mut input = vec![PAD_GREY as f32 / 255.0; plane * 3];
    let (pad_x, pad_y) = geometry.pad;
    for (row, line) in resized.pixels.chunks_exact((inner_w * 3) as usize).enumerate() {
        let offset = (row as u32 + pad_y) as usize * size as usize + pad_x as usize;
        for (column, pixel) in line.chunks_exact(3).enumerate() {
            for channel in 0..3 {
                input[channel * plane + offset + column] = pixel[channel] as f32 / 255.0;
            }
        }
    }
    (geometry, input)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letterboxing_puts_the_image_in_the_middle_of_grey() {
        // A 4×2 red image into an 8×8 input: 8×4 inside, 2 rows of grey above and below.
        let image = Rgb { width: 4, height: 2, pixels: [255, 0, 0].repeat(8) };
        let (geometry, input) = letterbox(&image, 8);
        assert_eq!((geometry.inner, geometry.pad), ((8, 4), (0, 2)));
        let at = |channel: usize, x: usize, y: usize| input[channel * 64 + y * 8 + x];
        assert_eq!((at(0, 3, 0), at(1, 3, 0)), (114.0 / 255.0, 114.0 / 255.0), "grey above");
        assert_eq!((at(0, 3, 3), at(1, 3, 3), at(2, 3, 3)), (1.0, 0.0, 0.0), "red inside, planes in RGB order");
        assert_eq!(at(2, 0, 7), 114.0 / 255.0, "grey below");
    }
}
