//! The neatline: the dark frame around the map area, found on a reduced darkness mask (the
//! rectangle of long straight lines, skewed by up to 2°, whose four sides are most covered by
//! dark pixels), then refined at full resolution side by side: the line's centre at sub-pixel
//! precision at many places along it, a straight line fitted through them with outliers dropped.
//! The corners are the crossings of the fitted sides.
//!
//! Invariants: pixels are read in strips and bands through the caller's window reader, never the
//! whole scan at once; every side is a fitted line, never a box edge taken on trust.

use super::Window;
use super::solve::least_squares;
use crate::error::VisionError;
use crate::image::Rgb;
use geomap_model::page::PixelBox;

/// Darker than this (luma, 0–255) is ink on the reduced mask: light enough for a one-pixel frame line that JPEG has blurred to grey.
const INK: u8 = 160;
/// The reduced mask's longest side, in cells.
const MASK_SIDE: u32 = 1600;
/// The steepest skew looked for, in degrees.
const MAX_SKEW: f64 = 2.0;
/// The step between skews tried on the mask, in degrees.
const SKEW_STEP: f64 = 0.1;
/// Candidate lines kept per direction.
const CANDIDATES: usize = 12;
/// The least share of a side that must be ink for a rectangle to be a neatline.
const MIN_COVERAGE: f64 = 0.6;
/// Places along each side where the line is measured at full resolution.
const SAMPLES: usize = 96;

/// A straight side: `across = offset + slope × along` (across is y for the top and bottom sides,
/// x for the left and right ones).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Side {
    /// Across at along 0.
    pub offset: f64,
    /// Change of across per pixel along.
    pub slope: f64,
    /// Root-mean-square distance of the measured line centres from the fitted side, in pixels.
    pub rms_px: f64,
    /// Measurements kept for the fit.
    pub samples: usize,
}

impl Side {
    /// Across at `along`.
    pub fn at(&self, along: f64) -> f64 {
        self.offset + self.slope * along
    }
}

/// The frame found.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Neatline {
    /// Top side (y as a function of x).
    pub top: Side,
    /// Bottom side (y of x).
    pub bottom: Side,
    /// Left side (x of y).
    pub left: Side,
    /// Right side (x of y).
    pub right: Side,
    /// Corners, clockwise from the top left, as `[col, row]` (pixel centres at +0.5).
    pub corners: [[f64; 2]; 4],
    /// The mean skew of the sides, in degrees (positive: turned clockwise).
    pub skew_degrees: f64,
    /// The line's typical thickness, in pixels.
    pub thickness_px: f64,
}

/// A candidate line on the mask: `across = offset + tan × along`, with the ink cells it passes.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    offset: f64,
    tan: f64,
    votes: u32,
}

/// The reduced darkness mask: a cell is ink when any pixel of its block is.
struct Mask {
    width: u32,
    height: u32,
    factor: u32,
    ink: Vec<bool>,
}

impl Mask {
    fn get(&self, x: i64, y: i64) -> bool {
        x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height && self.ink[(y as u32 * self.width + x as u32) as usize]
    }
}

/// Luma of pixel `(x, y)` of `image`.
pub(super) fn luma(image: &Rgb, x: u32, y: u32) -> u8 {
    let at = ((y * image.width + x) * 3) as usize;
    let [r, g, b] = [image.pixels[at], image.pixels[at + 1], image.pixels[at + 2]].map(u32::from);
    ((77 * r + 150 * g + 29 * b) >> 8) as u8
}

fn mask(width: u32, height: u32, read: Window<'_>) -> Result<Mask, VisionError> {
    let factor = width.max(height).div_ceil(MASK_SIDE).max(1);
    let (mask_w, mask_h) = (width.div_ceil(factor), height.div_ceil(factor));
    let mut ink = vec![false; (mask_w * mask_h) as usize];
    let strip = factor * 64;
    let mut top = 0;
    while top < height {
        let bottom = (top + strip).min(height);
        let image = read((0, top, width, bottom))?;
        for y in 0..image.height {
            let cell_row = (top + y) / factor;
            for x in 0..image.width {
                if luma(&image, x, y) < INK {
                    ink[(cell_row * mask_w + x / factor) as usize] = true;
                }
            }
        }
        top = bottom;
    }
    Ok(Mask { width: mask_w, height: mask_h, factor, ink })
}

/// The strongest straight lines of one direction on the mask, one per place across.
fn candidates(mask: &Mask, horizontal: bool) -> Vec<Candidate> {
    let (along_len, across_len) = if horizontal { (mask.width, mask.height) } else { (mask.height, mask.width) };
    let steps = (MAX_SKEW / SKEW_STEP).round() as i32;
    let reach = (along_len as f64 * (MAX_SKEW.to_radians()).tan()).ceil() as i64 + 1;
    let bins = across_len as i64 + 2 * reach;
    let tans: Vec<f64> = (-steps..=steps).map(|s| (f64::from(s) * SKEW_STEP).to_radians().tan()).collect();
    let mut votes = vec![0_u32; tans.len() * bins as usize];
    for y in 0..mask.height {
        for x in 0..mask.width {
            if !mask.ink[(y * mask.width + x) as usize] {
                continue;
            }
            let (along, across) = if horizontal { (f64::from(x), f64::from(y)) } else { (f64::from(y), f64::from(x)) };
            for (t, tan) in tans.iter().enumerate() {
                let offset = (across - tan * along).round() as i64 + reach;
                if (0..bins).contains(&offset) {
                    votes[t * bins as usize + offset as usize] += 1;
                }
            }
        }
    }
    let mut all: Vec<Candidate> = votes
        .iter()
        .enumerate()
        .filter(|(_, v)| **v as f64 >= 0.2 * f64::from(along_len))
        .map(|(i, v)| Candidate { offset: (i % bins as usize) as f64 - reach as f64, tan: tans[i / bins as usize], votes: *v })
        .collect();
    all.sort_by_key(|c| std::cmp::Reverse(c.votes));
    let mut kept: Vec<Candidate> = Vec::new();
    for candidate in all {
        let middle = |c: &Candidate| c.offset + c.tan * f64::from(along_len) / 2.0;
        if kept.iter().all(|k| (middle(k) - middle(&candidate)).abs() > 4.0) {
            kept.push(candidate);
            if kept.len() == 16 * CANDIDATES {
                break;
            }
        }
    }
    // A neatline divides paper from map: on a scan whose map is dense with ink, a thin frame line
    // has fewer ink cells than lines through the map, but far more contrast between its two sides.
    let side = |c: &Candidate, direction: f64| -> f64 {
        (3..=6)
            .map(|d| {
                let shift = direction * f64::from(d);
                let (a, b) = ((0.0, c.offset + shift), (f64::from(along_len), c.offset + shift + c.tan * f64::from(along_len)));
                if horizontal { density(mask, a, b) } else { density(mask, (a.1, a.0), (b.1, b.0)) }
            })
            .sum::<f64>()
            / 4.0
    };
    let mut ranked: Vec<(f64, Candidate)> = kept.into_iter().map(|c| (f64::from(c.votes) * (0.25 + (side(&c, -1.0) - side(&c, 1.0)).abs()), c)).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranked.into_iter().take(CANDIDATES).map(|(_, c)| c).collect()
}

/// The crossing of horizontal `h` (y = offset + tan·x) and vertical `v` (x = offset + tan·y).
fn crossing(h: (f64, f64), v: (f64, f64)) -> (f64, f64) {
    let x = (v.0 + v.1 * h.0) / (1.0 - v.1 * h.1);
    (x, h.0 + h.1 * x)
}

/// The share of the segment from `a` to `b` that is ink on the mask (a cell either side counts).
fn coverage(mask: &Mask, a: (f64, f64), b: (f64, f64)) -> f64 {
    let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
    let steps = length.max(1.0) as usize;
    let (mut inked, mut total) = (0, 0);
    for i in (steps / 50)..=(steps - steps / 50) {
        let t = i as f64 / steps as f64;
        let (x, y) = ((a.0 + t * (b.0 - a.0)).round() as i64, (a.1 + t * (b.1 - a.1)).round() as i64);
        total += 1;
        if (-1..=1).any(|d| mask.get(x + d, y) || mask.get(x, y + d)) {
            inked += 1;
        }
    }
    if total == 0 { 0.0 } else { f64::from(inked) / f64::from(total) }
}

/// The share of ink cells on the segment from `a` to `b` (exactly on it, unlike [`coverage`]).
fn density(mask: &Mask, a: (f64, f64), b: (f64, f64)) -> f64 {
    let steps = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt().max(1.0) as usize;
    let inked = (0..=steps)
        .filter(|i| {
            let t = *i as f64 / steps as f64;
            mask.get((a.0 + t * (b.0 - a.0)).round() as i64, (a.1 + t * (b.1 - a.1)).round() as i64)
        })
        .count();
    inked as f64 / (steps + 1) as f64
}

/// The rectangle on the mask whose sides are most covered by ink, with the least ink just outside them (weighted by their length),
/// near `hint` when there is one: corners clockwise from the top left, in mask cells.
fn coarse(mask: &Mask, hint: Option<PixelBox>) -> Option<[(f64, f64); 4]> {
    let horizontal = candidates(mask, true);
    let vertical = candidates(mask, false);
    let hint = hint.map(|b| {
        let f = f64::from(mask.factor);
        PixelBox { x0: b.x0 / f, y0: b.y0 / f, x1: b.x1 / f, y1: b.y1 / f }
    });
    let mut best: Option<(f64, [(f64, f64); 4])> = None;
    let (min_w, min_h) = (0.15 * f64::from(mask.width), 0.15 * f64::from(mask.height));
    for (i, top) in horizontal.iter().enumerate() {
        for bottom in &horizontal[i + 1..] {
            let (top, bottom) = if top.offset < bottom.offset { (top, bottom) } else { (bottom, top) };
            for (j, left) in vertical.iter().enumerate() {
                for right in &vertical[j + 1..] {
                    let (left, right) = if left.offset < right.offset { (left, right) } else { (right, left) };
                    let corners = [
                        crossing((top.offset, top.tan), (left.offset, left.tan)),
                        crossing((top.offset, top.tan), (right.offset, right.tan)),
                        crossing((bottom.offset, bottom.tan), (right.offset, right.tan)),
                        crossing((bottom.offset, bottom.tan), (left.offset, left.tan)),
                    ];
                    if corners[1].0 - corners[0].0 < min_w || corners[3].1 - corners[0].1 < min_h {
                        continue;
                    }
                    let mut score = 0.0;
                    let mut covered = true;
                    // Clockwise from the top: outwards is up, right, down, left.
                    for (k, outwards) in [(0.0, -1.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0)].into_iter().enumerate() {
                        let (a, b) = (corners[k], corners[(k + 1) % 4]);
                        let share = coverage(mask, a, b);
                        covered &= share >= MIN_COVERAGE;
                        // A neatline has paper outside it; a line inside the map has ink on both sides.
                        let beyond = |d: f64| ((a.0 + outwards.0 * d, a.1 + outwards.1 * d), (b.0 + outwards.0 * d, b.1 + outwards.1 * d));
                        let outside = (4..=8).map(|d| beyond(f64::from(d))).map(|(a, b)| density(mask, a, b)).sum::<f64>() / 5.0;
                        // Length not covered counts against: a side run on past the frame's corner loses.
                        score += (2.0 * share - 1.0) * (1.0 - outside) * ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
                    }
                    if !covered {
                        continue;
                    }
                    if let Some(hint) = &hint {
                        let found = PixelBox {
                            x0: corners[0].0.min(corners[3].0),
                            y0: corners[0].1.min(corners[1].1),
                            x1: corners[1].0.max(corners[2].0),
                            y1: corners[2].1.max(corners[3].1),
                        };
                        score *= 0.5 + found.iou(hint);
                    }
                    if best.as_ref().is_none_or(|(s, _)| score > *s) {
                        best = Some((score, corners));
                    }
                }
            }
        }
    }
    best.map(|(_, corners)| corners)
}

/// Where the frame's outer edge crosses `across_range` at `along` on `image` (whose top-left pixel
/// is `origin`), coming from the paper side (`outside_first`: the range's low end is outside the
/// map): the sub-pixel place where the first dark run met reaches half its darkness, and how long
/// that run stays at half of it or darker. Just inside a frame a map's colours are often as dark
/// as the line, so the run is the line's thickness only where the map is light.
fn outer_edge(image: &Rgb, origin: (u32, u32), horizontal: bool, along: u32, across_range: (i64, i64), outside_first: bool) -> Option<(f64, f64)> {
    let darkness = |across: i64| -> f64 {
        let mut total = 0.0;
        for a in along.saturating_sub(2)..=along + 2 {
            let (x, y) = if horizontal { (i64::from(a), across) } else { (across, i64::from(a)) };
            let (x, y) = (x - i64::from(origin.0), y - i64::from(origin.1));
            if x >= 0 && y >= 0 && (x as u32) < image.width && (y as u32) < image.height {
                total += f64::from(200_u8.saturating_sub(luma(image, x as u32, y as u32)));
            }
        }
        total
    };
    let mut inwards: Vec<i64> = (across_range.0..=across_range.1).collect();
    if !outside_first {
        inwards.reverse();
    }
    let profile: Vec<f64> = inwards.iter().copied().map(darkness).collect();
    // Darker than light grey across five pixels; the line's core lies within its next two pixels.
    let dark = profile.iter().position(|d| *d >= 5.0 * 40.0)?;
    let core = profile.len().min(dark + 3);
    let half = profile[dark..core].iter().copied().fold(0.0, f64::max) / 2.0;
    let first = profile[..core].iter().position(|d| *d >= half)?;
    let before = if first == 0 { 0.0 } else { profile[first - 1] };
    // Between pixel centres: a sharp edge at a pixel boundary lands on that boundary.
    let edge = first as f64 - 0.5 + (half - before) / (profile[first] - before).max(f64::EPSILON);
    let run = profile[first..].iter().take_while(|d| **d >= half).count() as f64;
    let across = if outside_first { across_range.0 as f64 + edge } else { across_range.1 as f64 + 1.0 - edge };
    Some((across, run))
}

/// Fits `across = offset + slope × along` through `points`, dropping those far from the line.
fn fit_side(points: &[(f64, f64)]) -> Option<Side> {
    let mut kept: Vec<(f64, f64)> = points.to_vec();
    for _ in 0..3 {
        let (offset, slope) = least_squares(&kept)?;
        let mut residuals: Vec<f64> = kept.iter().map(|(a, c)| (c - offset - slope * a).abs()).collect();
        residuals.sort_by(f64::total_cmp);
        let limit = (3.0 * 1.4826 * residuals[residuals.len() / 2]).max(1.0);
        kept.retain(|(a, c)| (c - offset - slope * a).abs() <= limit);
    }
    let (offset, slope) = least_squares(&kept)?;
    let rms = (kept.iter().map(|(a, c)| (c - offset - slope * a).powi(2)).sum::<f64>() / kept.len() as f64).sqrt();
    (kept.len() >= 8).then_some(Side { offset, slope, rms_px: rms, samples: kept.len() })
}

/// Refines one side (horizontal or not, with the paper at the low end across or not) at full
/// resolution between its coarse ends `a` and `b` (pixels), reading one band around it; also
/// returns the line's thickness.
fn refine(
    width: u32,
    height: u32,
    read: Window<'_>,
    (horizontal, outside_first): (bool, bool),
    a: (f64, f64),
    b: (f64, f64),
    reach: f64,
) -> Result<Option<(Side, f64)>, VisionError> {
    let (along_a, across_a, along_b, across_b) = if horizontal { (a.0, a.1, b.0, b.1) } else { (a.1, a.0, b.1, b.0) };
    let (along_max, across_max) = if horizontal { (width, height) } else { (height, width) };
    let clamp = |v: f64, max: u32| v.clamp(0.0, f64::from(max)) as u32;
    let (from, to) = (clamp(along_a.min(along_b), along_max), clamp(along_a.max(along_b), along_max));
    let (low, high) = (clamp(across_a.min(across_b) - reach, across_max), clamp(across_a.max(across_b) + reach + 1.0, across_max));
    if to <= from || high <= low {
        return Ok(None);
    }
    let window = if horizontal { (from, low, to, high) } else { (low, from, high, to) };
    let image = read(window)?;
    let origin = (window.0, window.1);
    let span = f64::from(to - from);
    let mut edges = Vec::new();
    let mut runs = Vec::new();
    for i in 0..SAMPLES {
        let along = f64::from(from) + span * (0.03 + 0.94 * i as f64 / (SAMPLES - 1) as f64);
        let expected = across_a + (across_b - across_a) * (along - along_a) / (along_b - along_a);
        let range = ((expected - reach).floor() as i64, (expected + reach).ceil() as i64);
        if let Some((edge, run)) = outer_edge(&image, origin, horizontal, along as u32, range, outside_first) {
            edges.push((along.floor() + 0.5, edge));
            runs.push(run);
        }
    }
    // The line alone is its thinnest common run (where the map beside it is light); its centre
    // lies half that inside its outer edge.
    runs.sort_by(f64::total_cmp);
    let Some(&thickness) = runs.get(runs.len() / 4) else { return Ok(None) };
    let inwards = if outside_first { thickness / 2.0 } else { -thickness / 2.0 };
    let centres: Vec<(f64, f64)> = edges.iter().map(|(along, edge)| (*along, edge + inwards)).collect();
    Ok(fit_side(&centres).map(|side| (side, thickness)))
}

/// Finds the neatline of a `width`×`height` scan, near `hint` (the layout's main map) when given.
pub fn find(width: u32, height: u32, read: Window<'_>, hint: Option<PixelBox>) -> Result<Result<Neatline, String>, VisionError> {
    let mask = mask(width, height, read)?;
    let Some(corners) = coarse(&mask, hint) else {
        return Ok(Err("no frame of long dark lines encloses the map area (looked for skews up to 2°)".to_owned()));
    };
    let f = f64::from(mask.factor);
    let full = corners.map(|(x, y)| (x * f + f / 2.0, y * f + f / 2.0));
    let reach = 2.0 * f + 6.0;
    // (horizontal, paper at the low end across, one end, the other): top, bottom, left, right.
    let sides = [(true, true, full[0], full[1]), (true, false, full[3], full[2]), (false, true, full[0], full[3]), (false, false, full[1], full[2])];
    let mut fitted = Vec::new();
    let mut thickness = Vec::new();
    for (name, (horizontal, outside_first, a, b)) in ["top", "bottom", "left", "right"].iter().zip(sides) {
        match refine(width, height, read, (horizontal, outside_first), a, b, reach)? {
            Some((side, run)) => {
                fitted.push(side);
                thickness.push(run);
            }
            None => return Ok(Err(format!("the {name} side of the frame could not be traced at full resolution"))),
        }
    }
    let [top, bottom, left, right] = [fitted[0], fitted[1], fitted[2], fitted[3]];
    let corner = |h: &Side, v: &Side| {
        let (x, y) = crossing((h.offset, h.slope), (v.offset, v.slope));
        [x, y]
    };
    thickness.sort_by(f64::total_cmp);
    let skew = (top.slope.atan() + bottom.slope.atan() - left.slope.atan() - right.slope.atan()).to_degrees() / 4.0;
    Ok(Ok(Neatline {
        corners: [corner(&top, &left), corner(&top, &right), corner(&bottom, &right), corner(&bottom, &left)],
        top,
        bottom,
        left,
        right,
        skew_degrees: skew,
        thickness_px: thickness.get(thickness.len() / 2).copied().unwrap_or(1.0),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A white scan with a black frame of `thickness` pixels, turned by `degrees` about its centre.
    fn framed(width: u32, height: u32, frame: (f64, f64, f64, f64), degrees: f64, thickness: f64) -> Rgb {
        framed_map(width, height, frame, degrees, thickness, (10, (255, 0.0)))
    }

    /// The same with the frame line in grey `line` and, along half of each side in stretches of
    /// 150 pixels, the map just inside it dark for `map.1` pixels, in grey `map.0`.
    fn framed_map(width: u32, height: u32, frame: (f64, f64, f64, f64), degrees: f64, thickness: f64, (line, map): (u8, (u8, f64))) -> Rgb {
        let (cx, cy) = (f64::from(width) / 2.0, f64::from(height) / 2.0);
        let (sin, cos) = degrees.to_radians().sin_cos();
        let mut pixels = vec![255_u8; (width * height * 3) as usize];
        for y in 0..height {
            for x in 0..width {
                // Back into the unturned sheet (a clockwise turn on screen).
                let (dx, dy) = (f64::from(x) + 0.5 - cx, f64::from(y) + 0.5 - cy);
                let (ux, uy) = (cx + dx * cos + dy * sin, cy - dx * sin + dy * cos);
                let (x0, y0, x1, y1) = frame;
                let inside = ux >= x0 - thickness / 2.0 && ux <= x1 + thickness / 2.0 && uy >= y0 - thickness / 2.0 && uy <= y1 + thickness / 2.0;
                let near = (ux - x0).abs() <= thickness / 2.0
                    || (ux - x1).abs() <= thickness / 2.0
                    || (uy - y0).abs() <= thickness / 2.0
                    || (uy - y1).abs() <= thickness / 2.0;
                let at = ((y * width + x) * 3) as usize;
                if inside && near {
                    pixels[at..at + 3].copy_from_slice(&[line; 3]);
                } else if inside && (ux + uy).rem_euclid(300.0) < 150.0 && [ux - x0, x1 - ux, uy - y0, y1 - uy].iter().any(|d| *d <= map.1) {
                    pixels[at..at + 3].copy_from_slice(&[map.0; 3]);
                }
            }
        }
        Rgb { width, height, pixels }
    }

    #[test]
    fn a_turned_frame_is_found_to_a_fraction_of_a_pixel() {
        let (width, height) = (1400, 1000);
        let frame = (200.0, 150.0, 1200.0, 850.0);
        let image = framed(width, height, frame, 0.8, 3.0);
        let mut read = |window: (u32, u32, u32, u32)| Ok(image.crop(window));
        let found = find(width, height, &mut read, None).unwrap().unwrap();
        assert!((found.skew_degrees - 0.8).abs() < 0.02, "{}", found.skew_degrees);
        let (sin, cos) = 0.8_f64.to_radians().sin_cos();
        let (cx, cy) = (700.0, 500.0);
        let truth = [(frame.0, frame.1), (frame.2, frame.1), (frame.2, frame.3), (frame.0, frame.3)].map(|(x, y)| {
            let (dx, dy) = (x - cx, y - cy);
            [cx + dx * cos - dy * sin, cy + dx * sin + dy * cos]
        });
        for (corner, expected) in found.corners.iter().zip(truth) {
            let error = ((corner[0] - expected[0]).powi(2) + (corner[1] - expected[1]).powi(2)).sqrt();
            assert!(error < 0.5, "{corner:?} against {expected:?}");
        }
    }

    #[test]
    fn a_thin_grey_frame_around_a_darker_map_is_found_at_the_line_not_inside_it() {
        let (width, height) = (1400, 1000);
        let frame = (200.0, 150.0, 1200.0, 850.0);
        let image = framed_map(width, height, frame, 0.3, 1.0, (100, (70, 12.0)));
        let mut read = |window: (u32, u32, u32, u32)| Ok(image.crop(window));
        let found = find(width, height, &mut read, None).unwrap().expect("a frame");
        let (sin, cos) = 0.3_f64.to_radians().sin_cos();
        let truth = [(frame.0, frame.1), (frame.2, frame.1), (frame.2, frame.3), (frame.0, frame.3)]
            .map(|(x, y)| (700.0 + (x - 700.0) * cos - (y - 500.0) * sin, 500.0 + (x - 700.0) * sin + (y - 500.0) * cos));
        for (corner, expected) in found.corners.iter().zip(truth) {
            let error = ((corner[0] - expected.0).powi(2) + (corner[1] - expected.1).powi(2)).sqrt();
            assert!(error < 0.75, "{corner:?} against {expected:?} ({found:?})");
        }
    }

    #[test]
    fn a_blank_scan_has_no_neatline() {
        let image = Rgb { width: 400, height: 300, pixels: vec![255; 400 * 300 * 3] };
        let mut read = |window: (u32, u32, u32, u32)| Ok(image.crop(window));
        assert!(find(400, 300, &mut read, None).unwrap().is_err());
    }
}
