//! Where an attitude's number is printed beside it: in the symbol's own ink (a tick symbol's
//! and a hairline's first look), grouped into a whole number on its line of type.
//!
//! Invariants: boxes are in the window's pixels, padded by a quarter of the number's height and
//! kept within the window.

use super::PointPrompt;
use super::pieces::ink_pieces;
use crate::colour::{delta_e, lab};
use crate::image::Rgb;
use geomap_model::page::PixelBox;

/// Where the number printed beside an attitude is, in `window` (the scan around it; `at`, its
/// junction, in the window's pixels): the ink of `prompt`'s colour as the symbol is printed there
/// (its darkest pixels at its junction, when within ΔE 30 of `prompt`'s), in pieces apart from the symbol's own, digit-sized (shorter than the strike line, taller than its
/// stroke), the nearest one and those beside it on its line of type, within twice the strike
/// line's length. `None` when no such ink is there.
pub(super) fn number_box(window: &Rgb, at: (f64, f64), prompt: &PointPrompt) -> Option<PixelBox> {
    let (width, height) = (window.width as usize, window.height as usize);
    let pixels: Vec<(u8, u8, u8)> = window.pixels.chunks_exact(3).map(|p| (p[0], p[1], p[2])).collect();
    let ground = lab(crate::colour::median_colour(pixels.iter().copied())?);
    let labs: Vec<[f64; 3]> = pixels.iter().map(|&p| lab(p)).collect();
    // The ink as the symbol is printed here: its darkest pixels at its junction.
    let radius = (prompt.width_px + 1.0).ceil() as isize;
    let around: Vec<usize> = (-radius..=radius)
        .flat_map(|dy| (-radius..=radius).map(move |dx| (at.0 as isize + dx, at.1 as isize + dy)))
        .filter(|&(x, y)| x >= 0 && y >= 0 && (x as usize) < width && (y as usize) < height)
        .map(|(x, y)| y as usize * width + x as usize)
        .collect();
    let darkest = around.iter().map(|&i| labs[i][0]).fold(f64::INFINITY, f64::min);
    let printed = crate::colour::median_colour(around.iter().filter(|&&i| labs[i][0] <= darkest + 15.0).map(|&i| pixels[i]));
    // Only when it is the prompt's ink (not paper, not a crossing line of another colour).
    let ink = printed.filter(|&ink| delta_e(lab(ink), lab(prompt.colour)) <= crate::structure::LINE_DELTA_E).unwrap_or(prompt.colour);
    let mask = crate::structure::stroke_pixels(&labs, lab(ink), ground, width);
    // Pieces of ink (8-connected) as boxes, the symbol's own (the one at its junction) left out.
    let (label, pieces) = ink_pieces(&mask, width, height);
    let boxes: Vec<(f64, f64, f64, f64)> = pieces.iter().map(|piece| piece.bbox).collect();
    let own = (at.1 as usize).checked_mul(width).map(|row| row + at.0 as usize).and_then(|i| label.get(i).copied()).unwrap_or(0);
    let reach = 2.0 * prompt.strike_px;
    let digits: Vec<&(f64, f64, f64, f64)> = boxes
        .iter()
        .enumerate()
        .filter(|(k, b)| *k as u32 + 1 != own && (b.3 - b.1) < prompt.strike_px && (b.3 - b.1) > 1.5 * prompt.width_px && gap_to(b, at) <= reach)
        .map(|(_, b)| b)
        .collect();
    let nearest = **digits.iter().min_by(|a, b| gap_to(a, at).total_cmp(&gap_to(b, at)))?;
    Some(padded(whole_number(nearest, &digits), (width, height)))
}

/// The number `first` (a digit's box) is part of: grown by each of the other `digits` on its line
/// of type (overlapping half the shorter's height) within 0.6 of the grown box's height of it.
pub(super) fn whole_number(first: (f64, f64, f64, f64), digits: &[&(f64, f64, f64, f64)]) -> (f64, f64, f64, f64) {
    let mut number = first;
    loop {
        let tall = number.3 - number.1;
        let beside = digits.iter().find(|b| {
            let overlap = b.3.min(number.3) - b.1.max(number.1);
            let gap = (b.0 - number.2).max(number.0 - b.2);
            overlap >= 0.5 * tall.min(b.3 - b.1) && gap <= 0.6 * tall && !(b.0 >= number.0 && b.2 <= number.2)
        });
        match beside {
            Some(b) => number = (number.0.min(b.0), number.1.min(b.1), number.2.max(b.2), number.3.max(b.3)),
            None => return number,
        }
    }
}

/// How far box `(x0, y0, x1, y1)` lies from `point`, 0 when it holds it.
pub(super) fn gap_to(b: &(f64, f64, f64, f64), point: (f64, f64)) -> f64 {
    (b.0 - point.0).max(point.0 - b.2).max(0.0).hypot((b.1 - point.1).max(point.1 - b.3).max(0.0))
}

/// A number's box with a quarter of its height around it, within a `width × height` window.
pub(super) fn padded(number: (f64, f64, f64, f64), (width, height): (usize, usize)) -> PixelBox {
    let pad = 0.25 * (number.3 - number.1);
    PixelBox { x0: (number.0 - pad).max(0.0), y0: (number.1 - pad).max(0.0), x1: (number.2 + pad).min(width as f64), y1: (number.3 + pad).min(height as f64) }
}
