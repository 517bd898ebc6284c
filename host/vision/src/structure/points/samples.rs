//! TestMap samples and maps for the detectors' tests: strokes, attitudes, circles and marks drawn
//! on masks, lightness maps and scans, and a map's symbols found by a list of detectors.

use super::hairline::Lightness;
use super::{FoundPoint, PointDetector, PointMap, PointPrompt, Shape};
use crate::image::Rgb;
use geomap_model::page::segment_distance;

/// A `width × height` mask with each segment `(x0, y0, x1, y1)` drawn `stroke` pixels wide.
pub fn drawn(width: usize, height: usize, segments: &[(f64, f64, f64, f64)], stroke: f64) -> Vec<u8> {
    let mut mask = vec![0; width * height];
    for y in 0..height {
        for x in 0..width {
            let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
            let inked = segments.iter().any(|&(x0, y0, x1, y1)| segment_distance((px, py), (x0, y0), (x1, y1)) <= stroke / 2.0);
            mask[y * width + x] = u8::from(inked);
        }
    }
    mask
}

/// A strike line `strike` long at `(x, y)` with its tick `tick` long pointing `towards` degrees
/// clockwise from up.
pub fn attitude(x: f64, y: f64, towards: f64, strike: f64, tick: f64) -> [(f64, f64, f64, f64); 2] {
    let (dx, dy) = (towards.to_radians().sin(), -towards.to_radians().cos());
    let (sx, sy) = (-dy * strike / 2.0, dx * strike / 2.0);
    [(x - sx, y - sy, x + sx, y + sy), (x, y, x + dx * tick, y + dy * tick)]
}

/// A circle of `radius` at `(x, y)` as 32 segments, and a cross in it when `crossed`.
pub fn circle(x: f64, y: f64, radius: f64, crossed: bool) -> Vec<(f64, f64, f64, f64)> {
    let at = |k: usize| {
        let a = k as f64 * std::f64::consts::TAU / 32.0;
        (x + radius * a.cos(), y + radius * a.sin())
    };
    let mut segments: Vec<(f64, f64, f64, f64)> = (0..32).map(|k| (at(k).0, at(k).1, at(k + 1).0, at(k + 1).1)).collect();
    if crossed {
        segments.extend([(x - radius, y, x + radius, y), (x, y - radius, x, y + radius)]);
    }
    segments
}

/// A `width × height` mask with a disc of `radius` at each of `discs` and a triangle on its
/// base of `side` at each of `triangles`.
pub fn marked(width: usize, height: usize, discs: &[(f64, f64)], radius: f64, triangles: &[(f64, f64)], side: f64) -> Vec<u8> {
    let mut mask = vec![0; width * height];
    for y in 0..height {
        for x in 0..width {
            let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
            let in_disc = discs.iter().any(|&(cx, cy)| (px - cx).hypot(py - cy) <= radius);
            // Apex up: the row's half width grows from 0 at the top to side / 2 at the base.
            let in_triangle = triangles.iter().any(|&(cx, cy)| {
                let down = py - (cy - side / 2.0);
                (0.0..=side).contains(&down) && (px - cx).abs() <= down / 2.0
            });
            mask[y * width + x] = u8::from(in_disc || in_triangle);
        }
    }
    mask
}

/// Whether (x, y) is within a pixel of a line `reach` long each way through `centre` at
/// `bearing` (degrees clockwise from up).
pub fn on_line((x, y): (f64, f64), centre: (f64, f64), bearing: f64, reach: f64) -> bool {
    let (dx, dy) = (bearing.to_radians().sin(), -bearing.to_radians().cos());
    let (along, across) = ((x - centre.0) * dx + (y - centre.1) * dy, (x - centre.0) * dy - (y - centre.1) * dx);
    along.abs() <= reach && across.abs() <= 1.0
}

/// A sample scan `width × height` of `mask`'s pixels in `ink` on white paper.
pub fn scan_of(mask: &[u8], (width, height): (usize, usize), ink: [u8; 3]) -> Rgb {
    Rgb { width: width as u32, height: height as u32, pixels: mask.iter().flat_map(|&m| if m != 0 { ink } else { [250, 250, 250] }).collect() }
}

/// A stroke drawn on a lightness map: its segments, their width, their L*.
pub type Stroke = (Vec<(f64, f64, f64, f64)>, f64, u8);

/// A `width × height` lightness map of paper (L* 90) with each stroke drawn on it.
pub fn lit(width: usize, height: usize, strokes: &[Stroke]) -> Vec<u8> {
    let mut pixels = vec![90; width * height];
    for (segments, stroke, light) in strokes {
        for (pixel, inked) in pixels.iter_mut().zip(drawn(width, height, segments, *stroke)) {
            if inked != 0 {
                *pixel = *light;
            }
        }
    }
    pixels
}

/// A prompt of `shape` measured by `detector`: black, its stroke 3 px, its strike 26 px and its
/// tick 8.
pub fn prompt(shape: Shape, detector: &'static dyn PointDetector) -> PointPrompt {
    PointPrompt {
        entry: Some(0),
        symbol: String::new(),
        words: String::new(),
        ta1_type: "inclined bedding",
        shape,
        colour: (0, 0, 0),
        width_px: 3.0,
        strike_px: 26.0,
        tick_px: 8.0,
        fill: 0.0,
        taper: 0.0,
        detector: Some(detector),
    }
}

/// A map to find symbols on: its colour's mask, the map's dark ink and its lightness, the map's
/// top-left pixel in the scan.
pub struct TestMap<'a> {
    /// The colour's mask.
    pub mask: &'a mut [u8],
    /// Its width and height.
    pub size: (usize, usize),
    /// Whether the map's ink is dark at a point.
    pub dark: &'a dyn Fn((f64, f64)) -> bool,
    /// The map's lightness (all paper when empty).
    pub lightness: &'a [u8],
    /// Its top-left pixel in the scan.
    pub origin: (f64, f64),
}

/// The symbols `detectors` (in turn) find on `map` for all of `prompts`, and how many of the
/// skeleton's branches they took.
pub fn found_by(detectors: &[&dyn PointDetector], map: TestMap, prompts: &mut [PointPrompt]) -> (Vec<FoundPoint>, usize) {
    let paper = vec![90; map.size.0 * map.size.1];
    let pixels = if map.lightness.is_empty() { &paper } else { map.lightness };
    let lightness = Some(Lightness { pixels, width: map.size.0, height: map.size.1 });
    let mut on = PointMap::new(map.mask, map.size, map.origin, map.dark, lightness);
    let group: Vec<usize> = (0..prompts.len()).collect();
    let found: Vec<FoundPoint> = detectors.iter().flat_map(|detector| detector.find(&mut on, prompts, &group)).collect();
    let used = on.skeleton.as_ref().map_or(0, |(_, used)| used.iter().filter(|&&u| u).count());
    (found, used)
}

/// The symbols `detectors` find on `mask` alone (no other dark ink, the map at the scan's origin).
pub fn found_on_mask(detectors: &[&dyn PointDetector], mask: &mut [u8], size: (usize, usize), prompts: &mut [PointPrompt]) -> (Vec<FoundPoint>, usize) {
    found_by(detectors, TestMap { mask, size, dark: &|_| false, lightness: &[], origin: (0.0, 0.0) }, prompts)
}
