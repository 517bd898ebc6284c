//! The reader: PP-OCRv4 text detection over a region in full-resolution
//! overlapping tiles, boxes merged across tile borders, then recognition
//! batched by width.
//!
//! Invariants: tiles are never downscaled (small type survives); the models
//! see BGR planes normalised to −1…1, as PaddleOCR trained them; a line is
//! recognised from the scan itself, so a line cut by a tile border is read
//! whole once its two halves are merged.

use std::path::Path;

use ort::value::Tensor;

use super::ctc::Alphabet;
use super::db::{DbSettings, text_boxes};
use crate::detect::postprocess::PixelBox;
use crate::detect::{Resampling, Rgb};
use crate::onnx::{OnnxError, SessionPool};

/// The detector's tile side (a multiple of 32, as the network needs).
pub const TILE: u32 = 1024;
/// How much neighbouring tiles share, so a word on a border is whole in one of them.
pub const OVERLAP: u32 = 128;
/// The recogniser's input height.
const LINE_HEIGHT: u32 = 48;
/// The narrowest line input, as a width-to-height ratio (RapidOCR's 320 × 48).
const MIN_LINE_RATIO: f32 = 320.0 / 48.0;
/// Lines recognised per run.
const BATCH: usize = 6;
/// The files of asset `ppocr-v4` the reader loads.
pub const DETECTOR_FILE: &str = "ch_PP-OCRv4_det_infer.onnx";
/// The recogniser's file.
pub const RECOGNISER_FILE: &str = "ch_PP-OCRv4_rec_infer.onnx";

/// One line of text, in the scan's pixels.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Line {
    /// What it says.
    pub text: String,
    /// Its box in the scan's pixels.
    pub bbox: PixelBox,
    /// The recogniser's mean symbol probability, 0–1.
    pub score: f64,
}

/// The loaded models and the recogniser's alphabet.
#[derive(Debug)]
pub struct Reader {
    detector: SessionPool,
    recogniser: SessionPool,
    alphabet: Alphabet,
}

impl Reader {
    /// Loads the detector and the recogniser from the asset's folder; the alphabet comes from the
    /// recogniser's `character` metadata.
    pub fn load(environment: &'static ort::environment::Environment, folder: &Path) -> Result<Reader, OnnxError> {
        let detector = SessionPool::load(environment, &folder.join(DETECTOR_FILE))?;
        let recogniser = SessionPool::load(environment, &folder.join(RECOGNISER_FILE))?;
        let character = recogniser.with(|session| {
            let metadata = session.metadata().map_err(|error| OnnxError::Model(format!("the recogniser's metadata cannot be read: {error}")))?;
            metadata
                .custom("character")
                .map(|c| c.to_string())
                .ok_or_else(|| OnnxError::Model("the recogniser has no `character` alphabet in its metadata".to_owned()))
        })?;
        Ok(Reader { detector, recogniser, alphabet: Alphabet::from_metadata(&character) })
    }

    /// The tiles covering `region` (whole pixels, inside the image), left to right, top to bottom.
    pub fn tiles(region: (u32, u32, u32, u32)) -> Vec<(u32, u32, u32, u32)> {
        let starts = |from: u32, to: u32| {
            let mut starts = vec![from];
            while starts.last().expect("never empty") + TILE < to {
                starts.push((starts.last().expect("never empty") + TILE - OVERLAP).min(to.saturating_sub(TILE)).max(from));
            }
            starts.dedup();
            starts
        };
        let (x0, y0, x1, y1) = region;
        starts(y0, y1).into_iter().flat_map(|y| starts(x0, x1).into_iter().map(move |x| (x, y, (x + TILE).min(x1), (y + TILE).min(y1)))).collect()
    }

    /// Finds the text boxes of one tile, in the scan's pixels.
    pub fn detect(&self, image: &Rgb, tile: (u32, u32, u32, u32)) -> Result<Vec<PixelBox>, OnnxError> {
        let (x0, y0, x1, y1) = tile;
        let (width, height) = (x1 - x0, y1 - y0);
        let (padded_w, padded_h) = (width.div_ceil(32) * 32, height.div_ceil(32) * 32);
        let plane = (padded_w * padded_h) as usize;
        let mut input = vec![1.0_f32; plane * 3]; // white beyond the tile
        for y in 0..height {
            let row = &image.pixels[(((y0 + y) * image.width + x0) * 3) as usize..(((y0 + y) * image.width + x1) * 3) as usize];
            for (x, pixel) in row.chunks_exact(3).enumerate() {
                let at = (y * padded_w) as usize + x;
                for (channel, value) in [pixel[2], pixel[1], pixel[0]].into_iter().enumerate() {
                    input[channel * plane + at] = value as f32 / 127.5 - 1.0;
                }
            }
        }
        let tensor = Tensor::from_array(([1_usize, 3, padded_h as usize, padded_w as usize], input)).map_err(|error| OnnxError::Run(error.to_string()))?;
        let probability = self.detector.with(|session| {
            let outputs = session.run(ort::inputs![tensor]).map_err(|error| OnnxError::Run(error.to_string()))?;
            let (_, values) = outputs[0].try_extract_tensor::<f32>().map_err(|error| OnnxError::Run(error.to_string()))?;
            Ok(values.to_vec())
        })?;
        if probability.len() != plane {
            return Err(OnnxError::Model(format!("the text detector gave {} values for a {padded_w}×{padded_h} input", probability.len())));
        }
        Ok(text_boxes(&probability, padded_w as usize, padded_h as usize, &DbSettings::default())
            .into_iter()
            .map(|b| PixelBox {
                x0: (b.x0.min(width as f32) + x0 as f32) as f64,
                y0: (b.y0.min(height as f32) + y0 as f32) as f64,
                x1: (b.x1.min(width as f32) + x0 as f32) as f64,
                y1: (b.y1.min(height as f32) + y0 as f32) as f64,
            })
            .filter(|b| b.x1 > b.x0 && b.y1 > b.y0)
            .collect())
    }

    /// Reads the lines in `boxes` (merged first), recognising up to [`BATCH`] of similar width per run.
    pub fn recognise(&self, image: &Rgb, boxes: Vec<PixelBox>, min_score: f64) -> Result<Vec<Line>, OnnxError> {
        let mut boxes = merge_lines(boxes);
        boxes.sort_by(|a, b| ratio(a).total_cmp(&ratio(b)));
        let mut lines = Vec::new();
        for batch in boxes.chunks(BATCH) {
            let widest = batch.iter().map(ratio).fold(MIN_LINE_RATIO, f32::max);
            let input_width = (LINE_HEIGHT as f32 * widest).ceil() as u32;
            let plane = (LINE_HEIGHT * input_width) as usize;
            let mut input = vec![0.0_f32; plane * 3 * batch.len()];
            for (index, bbox) in batch.iter().enumerate() {
                let region = bbox.pixels(image.width, image.height);
                let width = ((LINE_HEIGHT as f32 * ratio(bbox)).ceil() as u32).clamp(1, input_width);
                let line = image.resized_region(region, width, LINE_HEIGHT, Resampling::Interpolated);
                let base = index * plane * 3;
                for (at, pixel) in line.pixels.chunks_exact(3).enumerate() {
                    let (y, x) = (at as u32 / width, at as u32 % width);
                    let offset = (y * input_width + x) as usize;
                    for (channel, value) in [pixel[2], pixel[1], pixel[0]].into_iter().enumerate() {
                        input[base + channel * plane + offset] = value as f32 / 127.5 - 1.0;
                    }
                }
            }
            let shape = [batch.len(), 3, LINE_HEIGHT as usize, input_width as usize];
            let tensor = Tensor::from_array((shape, input)).map_err(|error| OnnxError::Run(error.to_string()))?;
            let (steps, classes, probabilities) = self.recogniser.with(|session| {
                let outputs = session.run(ort::inputs![tensor]).map_err(|error| OnnxError::Run(error.to_string()))?;
                let (shape, values) = outputs[0].try_extract_tensor::<f32>().map_err(|error| OnnxError::Run(error.to_string()))?;
                match shape[..] {
                    [_, steps, classes] => Ok((steps as usize, classes as usize, values.to_vec())),
                    _ => Err(OnnxError::Model(format!("the recogniser's output is {shape:?}, not [lines, steps, classes]"))),
                }
            })?;
            if classes != self.alphabet.classes() {
                return Err(OnnxError::Model(format!("the recogniser has {classes} classes but its alphabet {}", self.alphabet.classes())));
            }
            for (index, bbox) in batch.iter().enumerate() {
                let (text, score) = self.alphabet.decode(&probabilities[index * steps * classes..(index + 1) * steps * classes], classes);
                let score = (score as f64 * 1e4).round() / 1e4;
                if !text.trim().is_empty() && score >= min_score {
                    lines.push(Line { text: text.trim().to_owned(), bbox: *bbox, score });
                }
            }
        }
        lines.sort_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0).then(a.bbox.x0.total_cmp(&b.bbox.x0)));
        Ok(lines)
    }
}

fn ratio(bbox: &PixelBox) -> f32 {
    ((bbox.x1 - bbox.x0) / (bbox.y1 - bbox.y0).max(1.0)) as f32
}

/// Boxes that are the same line seen by two tiles (or both halves of a line a tile border
/// cut) become one. Such boxes span the same rows and overlap by at least half the tiles'
/// overlap, or one holds the other; neighbouring lines (which overlap a little in height once
/// grown) and neighbouring words (which overlap a little in width) stay apart.
pub fn merge_lines(mut boxes: Vec<PixelBox>) -> Vec<PixelBox> {
    boxes.sort_by(|a, b| a.x0.total_cmp(&b.x0));
    let mut merged: Vec<PixelBox> = Vec::new();
    for bbox in boxes {
        let same_line = merged.iter_mut().find(|kept| {
            let rows = (kept.y1.min(bbox.y1) - kept.y0.max(bbox.y0)).max(0.0);
            let columns = (kept.x1.min(bbox.x1) - kept.x0.max(bbox.x0)).max(0.0);
            let narrower = (kept.x1 - kept.x0).min(bbox.x1 - bbox.x0);
            rows >= 0.7 * (kept.y1 - kept.y0).max(bbox.y1 - bbox.y0) && columns >= (OVERLAP as f64 / 2.0).min(0.9 * narrower)
        });
        match same_line {
            Some(kept) => *kept = PixelBox { x0: kept.x0.min(bbox.x0), y0: kept.y0.min(bbox.y0), x1: kept.x1.max(bbox.x1), y1: kept.y1.max(bbox.y1) },
            None => merged.push(bbox),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_region_with_overlap_and_stay_inside_it() {
        assert_eq!(Reader::tiles((0, 0, 500, 300)), [(0, 0, 500, 300)]);
        let tiles = Reader::tiles((100, 0, 2100, 1000));
        assert_eq!(tiles, [(100, 0, 1124, 1000), (996, 0, 2020, 1000), (1076, 0, 2100, 1000)]);
        for pair in tiles.windows(2) {
            assert!(pair[0].2 - pair[1].0 >= OVERLAP, "{pair:?}");
        }
    }

    #[test]
    fn a_line_cut_by_a_tile_border_is_merged_and_neighbours_are_not() {
        let b = |x0: f64, y0: f64, x1: f64, y1: f64| PixelBox { x0, y0, x1, y1 };
        let merged = merge_lines(vec![
            b(700.0, 100.0, 1024.0, 130.0), // a line cut at the tile border ...
            b(896.0, 101.0, 1500.0, 131.0), // ... and its other part, from the next tile
            b(10.0, 100.0, 400.0, 128.0),
            b(390.0, 100.0, 600.0, 128.0),   // the next word: overlaps by the growth only
            b(700.0, 118.0, 1200.0, 148.0),  // the next line: shares a few rows once grown
            b(1100.0, 100.0, 1200.0, 130.0), // inside the merged line
        ]);
        let expected = [b(10.0, 100.0, 400.0, 128.0), b(390.0, 100.0, 600.0, 128.0), b(700.0, 100.0, 1500.0, 131.0), b(700.0, 118.0, 1200.0, 148.0)];
        assert_eq!(merged, expected);
    }
}
