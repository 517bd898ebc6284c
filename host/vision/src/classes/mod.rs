//! A map's units as a class raster: every pixel of the main map to the legend
//! swatch nearest in CIELAB (`classify`), linework and speckle of other
//! colours filled from the units around them (`filter`), and the 4-connected
//! regions the polygons will be, with their areas and confidences (`regions`).
//!
//! Invariants: pure arithmetic on buffers the caller owns (one byte a pixel
//! for the classes, one for the confidences); class 0 is no unit, classes
//! `1..=n` are the swatches in the order given, [`INK`] is a stroke still to
//! be filled; nothing here decodes, allocates the whole scan, or calls GDAL.

pub mod filter;
pub mod preview;
pub mod regions;

use crate::colour::{delta_e, lab};
use crate::image::Rgb;
use preview::Preview;

/// A pixel that matches no swatch and is not ink: water, paper, an area the legend does not cover.
pub const NO_UNIT: u8 = 0;
/// A pixel of linework, a printed code or a symbol: dark or grey and matching no swatch, to be
/// filled from the classified pixels around it.
pub const INK: u8 = 255;
/// At most this many swatches (classes `1..=MAX_UNITS`; 0 and 255 are taken).
pub const MAX_UNITS: usize = 253;
/// Beyond this ΔE from every swatch a colour matches no unit (about where two printed map colours
/// read as different); `geomap_unit_at` uses it too.
pub const NO_MATCH_DELTA_E: f64 = 15.0;
/// Swatches closer than this (CIE76 ΔE) cannot be told apart reliably on a scan.
pub const INDISTINCT_DELTA_E: f64 = 5.0;
/// Bits kept per channel in the colour table (7: a colour is placed within one level in 128).
const TABLE_BITS: u32 = 7;
/// An entry of the table not yet computed.
const UNSET: u16 = u16::MAX;

/// Nearest-swatch classification with a lazily filled table of 2²¹ quantised colours (4 MiB),
/// so each distinct colour is compared with the swatches once.
pub struct Classifier {
    swatches: Vec<[f64; 3]>,
    table: Vec<u16>,
}

impl Classifier {
    /// A classifier for `swatches` (sRGB), which become classes `1..=swatches.len()`; at most
    /// [`MAX_UNITS`] are used.
    pub fn new(swatches: &[(u8, u8, u8)]) -> Classifier {
        Classifier { swatches: swatches.iter().take(MAX_UNITS).map(|&c| lab(c)).collect(), table: vec![UNSET; 1 << (3 * TABLE_BITS)] }
    }

    /// The class and confidence (0–255) of `rgb`: the nearest swatch within
    /// [`NO_MATCH_DELTA_E`], confident in proportion to how close it is and how far the
    /// runner-up is; otherwise [`INK`] when nearly black or grey (a stroke), else [`NO_UNIT`].
    pub fn classify(&mut self, rgb: (u8, u8, u8)) -> (u8, u8) {
        let shift = 8 - TABLE_BITS;
        let key = ((rgb.0 as usize >> shift) << (2 * TABLE_BITS)) | ((rgb.1 as usize >> shift) << TABLE_BITS) | (rgb.2 as usize >> shift);
        if self.table[key] == UNSET {
            let centre = |c: u8| (c >> shift << shift) | (1 << (shift - 1));
            self.table[key] = self.decide((centre(rgb.0), centre(rgb.1), centre(rgb.2)));
        }
        let entry = self.table[key];
        ((entry >> 8) as u8, entry as u8)
    }

    /// The table entry of colour `rgb`: class in the high byte, confidence in the low.
    fn decide(&self, rgb: (u8, u8, u8)) -> u16 {
        let here = lab(rgb);
        let (mut best, mut first, mut second) = (0, f64::INFINITY, f64::INFINITY);
        for (index, swatch) in self.swatches.iter().enumerate() {
            let distance = delta_e(here, *swatch);
            if distance < first {
                (best, first, second) = (index, distance, first);
            } else if distance < second {
                second = distance;
            }
        }
        if first <= NO_MATCH_DELTA_E {
            let fit = 1.0 - first / NO_MATCH_DELTA_E;
            let separation = ((second - first) / INDISTINCT_DELTA_E).min(1.0);
            let confidence = (255.0 * (0.5 + 0.5 * fit) * (0.5 + 0.5 * separation)).round() as u16;
            return ((best as u16 + 1) << 8) | confidence;
        }
        let chroma = here[1].hypot(here[2]);
        let class = if here[0] < 25.0 || (chroma < 12.0 && here[0] < 90.0) { INK } else { NO_UNIT };
        u16::from(class) << 8
    }

    /// Classifies `rgb` (`width × rows × 3` bytes) into `classes` and `confidence` (`width × rows` each).
    pub fn classify_rows(&mut self, rgb: &[u8], classes: &mut [u8], confidence: &mut [u8]) {
        for ((pixel, class), sure) in rgb.chunks_exact(3).zip(classes.iter_mut()).zip(confidence.iter_mut()) {
            (*class, *sure) = self.classify((pixel[0], pixel[1], pixel[2]));
        }
    }
}

/// Rows of the map classified per window read.
pub const STRIP_ROWS: u32 = 256;

/// The main map classified: a class and a confidence per pixel, and the preview's scan half.
pub struct Classified {
    /// Classes, `width × height`, row-major.
    pub classes: Vec<u8>,
    /// Confidences 0–255, likewise.
    pub confidence: Vec<u8>,
    /// The preview, its scan half drawn.
    pub preview: Preview,
}

/// Classifies the `width × height` map by strips of [`STRIP_ROWS`] rows: `read(first_row, rows)`
/// gives a strip's pixels (`width` wide), and says whether to go on (progress, cancellation)
/// through its error. Memory: the two rasters and one strip.
pub fn classify_map<E>(swatches: &[(u8, u8, u8)], width: u32, height: u32, mut read: impl FnMut(u32, u32) -> Result<Rgb, E>) -> Result<Classified, E> {
    let mut classifier = Classifier::new(swatches);
    let pixels = width as usize * height as usize;
    let (mut classes, mut confidence) = (vec![NO_UNIT; pixels], vec![0_u8; pixels]);
    let mut preview = Preview::new(width, height);
    for first_row in (0..height).step_by(STRIP_ROWS as usize) {
        let rows = STRIP_ROWS.min(height - first_row);
        let strip = read(first_row, rows)?;
        let range = first_row as usize * width as usize..(first_row + rows) as usize * width as usize;
        classifier.classify_rows(&strip.pixels, &mut classes[range.clone()], &mut confidence[range]);
        preview.sample_scan(&strip, first_row);
    }
    Ok(Classified { classes, confidence, preview })
}

/// The pairs of swatches (indices into `swatches`) closer than [`INDISTINCT_DELTA_E`], with their distance.
pub fn indistinct_pairs(swatches: &[(u8, u8, u8)]) -> Vec<(usize, usize, f64)> {
    let labs: Vec<[f64; 3]> = swatches.iter().map(|&c| lab(c)).collect();
    let mut pairs = Vec::new();
    for (i, a) in labs.iter().enumerate() {
        for (j, b) in labs.iter().enumerate().skip(i + 1) {
            let distance = delta_e(*a, *b);
            if distance < INDISTINCT_DELTA_E {
                pairs.push((i, j, distance));
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_go_to_the_nearest_swatch_ink_and_no_unit_apart() {
        let mut classifier = Classifier::new(&[(230, 120, 110), (120, 170, 230), (235, 233, 38)]);
        assert_eq!(classifier.classify((228, 122, 108)).0, 1);
        assert_eq!(classifier.classify((118, 168, 232)).0, 2);
        assert_eq!(classifier.classify((20, 20, 20)).0, INK, "black linework");
        assert_eq!(classifier.classify((128, 128, 128)).0, INK, "a grey stroke");
        assert_eq!(classifier.classify((30, 60, 200)).0, NO_UNIT, "a saturated colour no swatch has");
        assert_eq!(classifier.classify((252, 250, 244)).0, NO_UNIT, "paper");
        let (_, close) = classifier.classify((230, 120, 110));
        let (_, far) = classifier.classify((215, 130, 115));
        assert!(close > far, "a colour nearer its swatch is surer: {close} vs {far}");
    }

    #[test]
    fn close_swatches_are_named() {
        let pairs = indistinct_pairs(&[(200, 100, 100), (202, 101, 99), (20, 200, 20)]);
        assert_eq!(pairs.len(), 1);
        assert_eq!((pairs[0].0, pairs[0].1), (0, 1));
    }
}
