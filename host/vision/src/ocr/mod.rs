//! Reading a map's words offline with PP-OCR on ONNX Runtime (asset `ppocr-v4`,
//! or `ppocr-v5` as the operator chooses): text detection (DB), then recognition
//! (CTC); the reader and its models only (what the words say about the layout
//! is [`crate::layout`]'s).
//!
//! Invariants: the post-processing (`db`, `ctc`) and the swatch renditions
//! (`swatch`) are pure arithmetic, tested on their own; the reader loads only
//! the approved runtime and the chosen generation's asset (what is missing is
//! told as the detectors tell it, [`crate::models::Missing`]); lines leave in
//! the scan's pixels.

pub mod ctc;
pub mod db;
pub mod reader;
pub mod swatch;

use std::path::Path;
use std::time::Instant;

use crate::error::VisionError;
use crate::image::Rgb;
use crate::millis;
use crate::models::ModelInfo;
use crate::models::{RUNTIME_ASSET, locate, runtime};
use geomap_assets::Catalog;
use geomap_model::page::PixelBox;
use geomap_model::settings::OcrModels;
use reader::{Generation, PP_OCR_V4, PP_OCR_V5, Reader, TextLine, on_every_core};

/// What reading text with `models` needs (the runtime first).
pub fn requirements(models: OcrModels) -> &'static [(&'static str, &'static str)] {
    const V4: [(&str, &str); 2] = [(RUNTIME_ASSET, "runtime"), (OcrModels::PpOcrV4.asset(), "OCR models")];
    const V5: [(&str, &str); 2] = [(RUNTIME_ASSET, "runtime"), (OcrModels::PpOcrV5.asset(), "OCR models")];
    match models {
        OcrModels::PpOcrV4 => &V4,
        OcrModels::PpOcrV5 => &V5,
    }
}

/// The files and ways of `models`.
pub fn generation(models: OcrModels) -> Generation {
    match models {
        OcrModels::PpOcrV4 => PP_OCR_V4,
        OcrModels::PpOcrV5 => PP_OCR_V5,
    }
}

/// Loads the reader of `models` from the installed assets, or says everything that is missing.
pub fn load(catalog: &Catalog, data_root: &Path, models: OcrModels) -> Result<Reader, VisionError> {
    let (found, mut missing) = locate(catalog, data_root, requirements(models));
    let environment = runtime(found[0].as_ref(), &mut missing);
    let (Ok(environment), Some(first_model)) = (&environment, &found[1]) else {
        return Err(VisionError::NotReady { feature: "Reading text", missing, detector_error: environment.err() });
    };
    let folder = first_model.parent().expect("an asset file is inside its folder");
    let files = generation(models);
    let reader = Reader::load(environment, folder, files).map_err(|error| VisionError::Inference(format!("the OCR models do not load: {error}")))?;
    // Each model file as `asset/file` with its SHA-256, as a layout or a reading records it.
    let hashed = [files.detector, files.classifier, files.recogniser]
        .map(|file| ModelInfo { asset: format!("{}/{file}", models.asset()), sha256: geomap_assets::file_sha256(&folder.join(file)).unwrap_or_default() });
    Ok(reader.with_models(hashed.into()))
}

/// The words of one region of a scan.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The lines, top to bottom.
    pub lines: Vec<TextLine>,
    /// Tiles the text detector read (at either scale).
    pub tiles: usize,
    /// How many times smaller the text detector saw the region: 1, or [`COARSE`] when the
    /// region's type is large enough (see [`read`]).
    pub detect_scale: u32,
    /// Milliseconds finding text in the tiles.
    pub detect_ms: f64,
    /// Milliseconds recognising the lines.
    pub recognise_ms: f64,
}

/// How many times smaller the coarse detection pass sees a large region.
pub const COARSE: u32 = 2;
/// Regions of at least this many full-size tiles are first detected coarsely: below it the check
/// costs more than the coarse pass can save (the USGS sample is 15 tiles, a 10000-pixel scan 84).
const COARSE_FROM_TILES: usize = 40;
/// The full-size tiles the coarse pass is checked against (see `checked_tiles`).
const CHECKED_TILES: usize = 4;
/// The coarse pass stands when it covers at least this share of the text boxes the full-size pass
/// finds in the checked tiles, and as large a share of its boxes there are tight (see `covered`) ...
const MIN_COVERED: f64 = 0.95;
/// ... a box being covered when the coarse boxes hold at least this share of its area ...
const COVERED_AREA: f64 = 0.7;
/// ... and a coarse box tight when at most this many times as tall as the tallest full-size box it
/// holds (on a drawn sheet, lines of 11-pixel type were boxed 1.6–1.9 times too tall at half size
/// and misread, 14-pixel type 1.4 times and read right) ...
const TALLER: f64 = 1.5;
/// ... and the checked tiles hold at least this many boxes (fewer cannot tell).
const MIN_CHECKED_BOXES: usize = 30;

/// Reads `region` (whole pixels, inside `image`) tile by tile, the tiles [`on_every_core`];
/// `progress(done, tiles)` runs first and as each tile is done, and stops the reading when it
/// returns an error (cancellation).
///
/// A large region (at least `COARSE_FROM_TILES` tiles) is first detected [`COARSE`] times smaller,
/// then `CHECKED_TILES` tiles, where that found the most text and its smallest type, are detected
/// as scanned: when the coarse boxes cover `MIN_COVERED` of the boxes found there, the type is large enough
/// for the coarse pass, which stands; otherwise every tile is detected as scanned (small type
/// survives). The lines are always recognised from the scan as it is.
pub fn read(
    reader: &Reader,
    image: &Rgb,
    region: (u32, u32, u32, u32),
    min_score: f64,
    mut progress: impl FnMut(usize, usize) -> Result<(), VisionError>,
) -> Result<Reading, VisionError> {
    let fine = Reader::tiles(region);
    let coarse = if fine.len() >= COARSE_FROM_TILES { Reader::tiles_at(region, COARSE) } else { Vec::new() };
    let total = coarse.len() + fine.len();
    let started = Instant::now();
    progress(0, total)?;
    let mut done = 0;
    let mut detect = |tiles: &[(u32, u32, u32, u32)], scale: u32| -> Result<Vec<Vec<PixelBox>>, VisionError> {
        let mut found = vec![Vec::new(); tiles.len()];
        let work = |tile: &(u32, u32, u32, u32)| reader.detect(image, *tile, scale).map_err(|error| VisionError::Inference(error.to_string()));
        on_every_core(tiles, work, |index, boxes| {
            found[index] = boxes;
            done += 1;
            progress(done, total)
        })?;
        Ok(found)
    };
    let coarse_boxes: Vec<PixelBox> = detect(&coarse, COARSE)?.concat();
    let checked = checked_tiles(&fine, &coarse_boxes, CHECKED_TILES);
    let checked_tiles: Vec<_> = checked.iter().map(|&index| fine[index]).collect();
    let mut fine_boxes = detect(&checked_tiles, 1)?.concat();
    let (boxes, detect_scale) = if covered(&coarse_boxes, &fine_boxes) {
        (coarse_boxes, COARSE)
    } else {
        let rest: Vec<_> = fine.iter().enumerate().filter(|(index, _)| !checked.contains(index)).map(|(_, tile)| *tile).collect();
        fine_boxes.extend(detect(&rest, 1)?.concat());
        (fine_boxes, 1)
    };
    if done < total {
        progress(total, total)?;
    }
    let detect_ms = millis(started);
    let started = Instant::now();
    let lines = reader.recognise(image, boxes, min_score).map_err(|error| VisionError::Inference(error.to_string()))?;
    Ok(Reading { lines, tiles: done, detect_scale, detect_ms, recognise_ms: millis(started) })
}

/// The tiles the coarse pass is checked in: the `count / 2` holding the most of its boxes (where
/// the sheet's text is) and then those holding its lowest boxes (its smallest type, which the
/// coarse pass is likeliest to have missed or boxed loosely), `count` in all when there are as many
/// tiles with boxes; none without a coarse box.
fn checked_tiles(tiles: &[(u32, u32, u32, u32)], boxes: &[PixelBox], count: usize) -> Vec<usize> {
    let holds = |&(x0, y0, x1, y1): &(u32, u32, u32, u32), b: &PixelBox| {
        let (x, y) = ((b.x0 + b.x1) / 2.0, (b.y0 + b.y1) / 2.0);
        f64::from(x0) <= x && x < f64::from(x1) && f64::from(y0) <= y && y < f64::from(y1)
    };
    let mut fullest: Vec<(usize, usize)> =
        tiles.iter().map(|tile| boxes.iter().filter(|b| holds(tile, b)).count()).enumerate().filter(|(_, n)| *n > 0).collect();
    fullest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chosen: Vec<usize> = fullest.iter().take(count / 2).map(|(index, _)| *index).collect();
    let mut lowest: Vec<&PixelBox> = boxes.iter().collect();
    lowest.sort_by(|a, b| (a.y1 - a.y0).total_cmp(&(b.y1 - b.y0)));
    for b in lowest {
        if chosen.len() >= count {
            break;
        }
        if let Some(index) = (0..tiles.len()).find(|&index| holds(&tiles[index], b) && !chosen.contains(&index)) {
            chosen.push(index);
        }
    }
    chosen
}

/// Whether the `coarse` boxes stand for the `fine` ones, there being at least [`MIN_CHECKED_BOXES`]
/// fine ones: they hold [`COVERED_AREA`] of the area of [`MIN_COVERED`] of the fine boxes, and as
/// large a share of the coarse boxes that meet fine ones are at most [`TALLER`] times the tallest
/// fine box they hold half of (small type found coarsely is boxed too tall, and the recogniser
/// misreads it in so loose a box; large type that the fine pass breaks into pieces is not).
fn covered(coarse: &[PixelBox], fine: &[PixelBox]) -> bool {
    let area = |b: &PixelBox| (b.x1 - b.x0).max(0.0) * (b.y1 - b.y0).max(0.0);
    let shared = |a: &PixelBox, b: &PixelBox| (a.x1.min(b.x1) - a.x0.max(b.x0)).max(0.0) * (a.y1.min(b.y1) - a.y0.max(b.y0)).max(0.0);
    let held = fine.iter().filter(|f| coarse.iter().map(|c| shared(c, f)).sum::<f64>() >= COVERED_AREA * area(f)).count();
    let tallest_held = |c: &PixelBox| fine.iter().filter(|f| shared(c, f) >= 0.5 * area(f)).map(|f| f.y1 - f.y0).reduce(f64::max);
    let judged: Vec<f64> = coarse.iter().filter_map(|c| tallest_held(c).map(|tallest| (c.y1 - c.y0) / tallest)).collect();
    let tight = judged.iter().filter(|&&ratio| ratio <= TALLER).count();
    let enough = |count: usize, of: usize| count as f64 >= MIN_COVERED * of as f64;
    fine.len() >= MIN_CHECKED_BOXES && enough(held, fine.len()) && enough(tight, judged.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(x0: f64, y0: f64, x1: f64, y1: f64) -> PixelBox {
        PixelBox { x0, y0, x1, y1 }
    }

    /// `count` lines of `height` pixels, one above the other, 500 wide.
    fn lines(count: usize, height: f64) -> Vec<PixelBox> {
        (0..count).map(|i| b(100.0, 100.0 + 2.0 * height * i as f64, 600.0, 100.0 + 2.0 * height * i as f64 + height)).collect()
    }

    #[test]
    fn the_coarse_pass_stands_when_it_boxes_what_full_size_finds_as_tightly() {
        let fine = lines(40, 20.0);
        assert!(covered(&lines(40, 20.0), &fine), "the same boxes");
        // Large type that the full-size pass breaks into two pieces per line: the coarse lines stand.
        let pieces: Vec<PixelBox> = fine.iter().flat_map(|l| [b(l.x0, l.y0 + 4.0, 340.0, l.y1), b(360.0, l.y0, l.x1, l.y1 - 4.0)]).collect();
        assert!(covered(&fine, &pieces));
        // Small type boxed 1.7 times too tall at half size: it does not.
        let loose: Vec<PixelBox> = fine.iter().map(|l| b(l.x0, l.y0 - 7.0, l.x1, l.y1 + 7.0)).collect();
        assert!(!covered(&loose, &fine));
        // Three lines of forty missed by the coarse pass: 92.5 % covered, under 95 %.
        assert!(!covered(&lines(40, 20.0)[3..], &fine));
        assert!(!covered(&lines(20, 20.0), &lines(20, 20.0)), "twenty boxes cannot tell");
    }

    #[test]
    fn the_tiles_checked_are_the_fullest_then_those_with_the_smallest_type() {
        let tiles = [(0, 0, 1000, 1000), (1000, 0, 2000, 1000), (0, 1000, 1000, 2000), (1000, 1000, 2000, 2000), (2000, 0, 3000, 1000)];
        let mut boxes = lines(10, 30.0); // tile 0: ten lines
        boxes.extend((0..6).map(|i| b(1100.0, 100.0 + 60.0 * f64::from(i), 1500.0, 130.0 + 60.0 * f64::from(i)))); // tile 1: six
        boxes.push(b(100.0, 1100.0, 200.0, 1108.0)); // tile 2: one line of small type
        boxes.push(b(2100.0, 100.0, 2200.0, 1112.0 - 1000.0)); // tile 4: one line, a little larger
        assert_eq!(checked_tiles(&tiles, &boxes, 4), [0, 1, 2, 4]);
        assert_eq!(checked_tiles(&tiles, &boxes, 2), [0, 2], "one fullest, then the smallest type");
        assert!(checked_tiles(&tiles, &[], 4).is_empty(), "nothing found coarsely: nothing to check");
    }
}
