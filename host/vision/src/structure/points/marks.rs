//! What the two detectors of filled marks share ([`super::filled`], [`super::strung`]): a
//! piece of ink measured on its sample, and the map's pieces of a mark's size, fill and taper, on
//! their own and not one of a row (a dotted line), with or without a dark line through them.
//!
//! Invariants: a mark's size is its box's wider side; pieces taken are cleared from the mask.

use std::collections::HashMap;

use super::pieces::{InkPiece, clear_taken, ink_pieces};
use super::{FoundPoint, PointDetector, PointMap, PointPrompt, SampleInk};

/// A sample's piece of ink is a filled mark when it fills at least this share of its box (a dot
/// about 0.8, a triangle about 0.5; a stroke's ring or a letter less)…
const FILLED_SHARE: f64 = 0.45;
/// …and is at least this share as wide as it is tall, and as tall as wide.
const FILLED_SQUARE: f64 = 0.5;
/// A mark on the map is its sample's when its wider side is within this range of times the
/// sample's…
const FILLED_SIZE: std::ops::RangeInclusive<f64> = 0.6..=1.6;
/// …and it fills its box at least this share as much as the sample fills its own (or a disc its
/// square, when the sample fills more: a few pixels' dot may print square on paper, round over a
/// unit's colour).
const FILLED_FULL: f64 = 0.7;
/// The share of its square a disc fills.
const DISC_FILL: f64 = std::f64::consts::FRAC_PI_4;
/// A mark stands clear of its colour's other ink by this share of its size ([`alone`]).
const FILLED_CLEAR: f64 = 0.5;
/// A line through a mark is looked for along this many directions over half a turn
/// ([`thread`]): 7.5° at most off a line, under a pixel at the distances looked at.
const THREAD_SPOKES: usize = 12;
/// A strung dot's line is followed this many half pixels beyond its dot's edge and a pixel and a
/// half ([`thread`]).
const THREAD_STEPS: usize = 6;
/// A mark's like within this many of its sizes on either side make it a dot of a dotted line
/// ([`in_a_row`])…
const ROW_REACH: f64 = 3.0;
/// …when they stand within 30° of straight across it: the cosine.
const ROW_STRAIGHT_COS: f64 = 0.866;
/// A sample's filled mark is at least this many pixels across either way (a speck is none).
const FILLED_LEAST_PX: f64 = 3.0;
/// A sample's mark is also looked at as this many pixels wider all round for a line through it:
/// its blurred rim, which the map's mask takes with the dot (on an enlarged scan, a strung dot's
/// hairline is lightest beside it).
const RIM_PX: f64 = 2.0;

/// Whether piece `k` of `pieces` (labelled `k + 1` in `labels`, a mask `width × height` pixels)
/// stands clear of the other pieces by half its size (at least two pixels), but for specks under a
/// quarter of its pixels: a fold's arrowhead by its line, a digit beside the next are not marks on
/// their own.
fn alone(k: usize, pieces: &[InkPiece], labels: &[u32], (width, height): (usize, usize)) -> bool {
    let piece = &pieces[k];
    let (wide, tall) = piece.sides();
    let margin = (FILLED_CLEAR * wide.max(tall)).max(2.0);
    let (x0, y0) = ((piece.bbox.0 - margin).max(0.0) as usize, (piece.bbox.1 - margin).max(0.0) as usize);
    let (x1, y1) = (((piece.bbox.2 + margin).ceil() as usize).min(width), ((piece.bbox.3 + margin).ceil() as usize).min(height));
    let speck = |l: u32| l == 0 || l as usize == k + 1 || 4 * pieces[l as usize - 1].pixels < piece.pixels;
    (y0..y1).all(|y| (x0..x1).all(|x| speck(labels[y * width + x])))
}

/// The direction of a line running through `piece` (a joint's dot, a dot strung on a road), in
/// radians from the scan's x axis towards its y axis (0–π), `None` when none does: along some
/// direction and its opposite, one and a half and three pixels beyond its half width, `dark`
/// (there or within 0.7 px across) each time, while at least two thirds of the directions all
/// round are not (a line passing beside it darkens one side, or one of the two distances; a dark
/// unit around it darkens them all). The line's direction is then found to the degree: the middle
/// of the directions with the most dark points on them both ways (at least half of them), so of
/// two lines crossing at it the clearer.
pub(super) fn thread(piece: &InkPiece, dark: &dyn Fn((f64, f64)) -> bool) -> Option<f64> {
    let (wide, tall) = piece.sides();
    let centre = piece.centre();
    let half = wide.max(tall) / 2.0;
    // A hairline's pixels step from side to side: a pixel either side of the spoke counts too.
    let spoke = |angle: f64| {
        let (dx, dy) = (angle.cos(), angle.sin());
        [half + 1.5, half + 3.0].iter().all(|&reach| {
            let (x, y) = (centre.0 + dx * reach, centre.1 + dy * reach);
            [-0.7, 0.0, 0.7].iter().any(|&side| dark((x - dy * side, y + dx * side)))
        })
    };
    let inked: Vec<bool> = (0..2 * THREAD_SPOKES).map(|k| spoke(k as f64 * std::f64::consts::PI / THREAD_SPOKES as f64)).collect();
    let through: Vec<usize> = (0..THREAD_SPOKES).filter(|&k| inked[k] && inked[k + THREAD_SPOKES]).collect();
    if through.is_empty() || 3 * inked.iter().filter(|&&d| d).count() > 2 * THREAD_SPOKES {
        return None;
    }
    // Per degree over the half turn, the dark points along it both ways.
    let along = |degrees: usize| {
        let (dy, dx) = (degrees as f64).to_radians().sin_cos();
        (0..=THREAD_STEPS).map(|step| half + 1.5 + 0.5 * step as f64).flat_map(|r| [r, -r]).filter(|r| dark((centre.0 + dx * r, centre.1 + dy * r))).count()
    };
    let counts: Vec<usize> = (0..180).map(along).collect();
    let most = counts.iter().copied().max()?;
    if most <= THREAD_STEPS {
        return None; // no line along any one direction for half its points
    }
    // The middle of the longest run of degrees (round the half turn) with the most; none when
    // every degree has it.
    let (start, length) = (0..180)
        .filter(|&d| counts[d] == most && counts[(d + 179) % 180] != most)
        .map(|start| (start, (0..180).take_while(|k| counts[(start + k) % 180] == most).count()))
        .max_by_key(|&(_, length)| length)?;
    Some((start as f64 + (length - 1) as f64 / 2.0).to_radians().rem_euclid(std::f64::consts::PI))
}

/// Whether piece `k` is one of a row of pieces its size (a dotted line's dots): it, or one of
/// its like beside it, has two of its like on opposite sides (within 30° of straight). Its like
/// are pieces within a factor of two of its size whose middles lie within three of its sizes
/// (`near` gives the pieces whose middles lie near a point).
fn in_a_row(k: usize, pieces: &[InkPiece], near: &dyn Fn((f64, f64)) -> Vec<usize>) -> bool {
    // Its like, with the direction to each.
    let alike = |k: usize| -> Vec<(usize, (f64, f64))> {
        let size = pieces[k].size();
        let centre = pieces[k].centre();
        near(centre)
            .into_iter()
            .filter(|&j| j != k)
            .filter_map(|j| {
                let (other, at) = (pieces[j].size(), pieces[j].centre());
                let d = crate::structure::chains::distance(at, centre);
                ((0.5..=2.0).contains(&(other / size)) && d <= ROW_REACH * size)
                    .then(|| (j, ((at.0 - centre.0) / d.max(1e-9), (at.1 - centre.1) / d.max(1e-9))))
            })
            .collect()
    };
    let between =
        |like: &[(usize, (f64, f64))]| like.iter().enumerate().any(|(i, (_, a))| like[i + 1..].iter().any(|(_, b)| a.0 * b.0 + a.1 * b.1 <= -ROW_STRAIGHT_COS));
    let mine = alike(k);
    between(&mine) || mine.iter().any(|&(j, _)| between(&alike(j)))
}

/// A detector of marks: pieces of a colour's ink about as large, square and full as their sample.
pub(super) trait Mark: PointDetector {
    /// Whether a piece of ink a mark's size is this detector's, given the direction of the dark
    /// line running through it if one does ([`thread`]): `None` when it is not; else its dip
    /// direction, if it has one.
    fn dip_if_mine(&self, line: Option<f64>) -> Option<Option<f64>>;
}

/// `prompt` measured on the largest piece of `mask` (its sample's ink, `ink.size`), when it is a
/// mark: it fills at least [`FILLED_SHARE`] of its box, is [`FILLED_SQUARE`] as wide as tall at
/// least and [`FILLED_LEAST_PX`] across either way; with that piece.
pub(super) fn measured_mark(prompt: &PointPrompt, ink: &SampleInk, mask: &[u8]) -> Option<(PointPrompt, InkPiece)> {
    let (width, height) = ink.size;
    let (label, pieces) = ink_pieces(mask, width, height);
    let (index, largest) = pieces.iter().enumerate().max_by_key(|(_, piece)| piece.pixels)?;
    let (wide, tall) = largest.sides();
    let (fill, square) = (largest.fill(), wide.min(tall) / wide.max(tall));
    if fill < FILLED_SHARE || square < FILLED_SQUARE || wide.min(tall) < FILLED_LEAST_PX {
        return None;
    }
    let measured = PointPrompt {
        colour: ink.core,
        width_px: wide.min(tall),
        strike_px: wide.max(tall),
        tick_px: wide.min(tall),
        fill,
        taper: largest.taper(index as u32 + 1, &label, width),
        ..prompt.clone()
    };
    Some((measured, *largest))
}

/// Whether a line as dark as the map's dark ink runs through `piece` of a sample's `ink` (the
/// map's marks are told apart so), from the piece or from its blurred rim ([`RIM_PX`] all round),
/// which the map's mask takes with it ([`thread`]).
pub(super) fn threaded_on_sample(piece: &InkPiece, ink: &SampleInk) -> bool {
    let (width, height) = ink.size;
    let inked = |at: (f64, f64)| crate::structure::index_at(at, width, height).is_some_and(|i| ink.labs[i][0] < crate::structure::DARK_LIGHTNESS);
    let grown = |by: f64| InkPiece { bbox: (piece.bbox.0 - by, piece.bbox.1 - by, piece.bbox.2 + by, piece.bbox.3 + by), ..*piece };
    [0.0, RIM_PX].iter().any(|&by| thread(&grown(by), &inked).is_some())
}

/// The marks `detector` finds on `map` for the prompts of `group` (indices into `prompts`, all
/// drawn in the map's colour) it measured: each piece of ink whose wider side is 0.6–1.6 times a
/// mark's sample's, as square as it within a third, filling its box at least 0.7 times as much
/// (and 0.45 of it), its top and bottom rows as the sample's (a dot, not a triangle), and that
/// the detector takes with the dark line through it or none ([`Mark::dip_if_mine`]); when it is
/// inked at its middle, on its own (clear of the colour's other ink by half its size) and not one
/// of a row of its like (a dotted line). Each is given to the prompt it fits best; the marks'
/// pixels are cleared from the mask, so no line takes them up.
pub(super) fn find_marks<D: Mark>(detector: &D, map: &mut PointMap, prompts: &[PointPrompt], group: &[usize]) -> Vec<FoundPoint> {
    let marks: Vec<usize> = group.iter().copied().filter(|&p| prompts[p].measured_by(detector) && prompts[p].strike_px > 0.0).collect();
    if marks.is_empty() {
        return Vec::new();
    }
    let (least, largest) = marks
        .iter()
        .map(|&p| prompts[p].strike_px)
        .fold((f64::INFINITY, 0.0_f64), |(least, largest), size| (least.min(FILLED_SIZE.start() * size), largest.max(FILLED_SIZE.end() * size)));
    let (width, height, origin, dark) = (map.width, map.height, map.origin, map.dark);
    let mask = map.mask();
    let (label, pieces) = ink_pieces(mask, width, height);
    // The pieces about a mark's size, by cell, for the rows of dots.
    let cell = ROW_REACH * 2.0 * largest;
    let key = |(x, y): (f64, f64)| ((x / cell).floor() as i64, (y / cell).floor() as i64);
    let mut by_cell: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (k, piece) in pieces.iter().enumerate() {
        if (0.5 * least..=2.0 * largest).contains(&piece.size()) {
            by_cell.entry(key(piece.centre())).or_default().push(k);
        }
    }
    let near = |at: (f64, f64)| {
        let (cx, cy) = key(at);
        (-1..=1).flat_map(|dx| (-1..=1).map(move |dy| (cx + dx, cy + dy))).flat_map(|c| by_cell.get(&c).into_iter().flatten().copied()).collect()
    };
    let mut taken = vec![false; pieces.len()];
    let mut found = Vec::new();
    for (k, piece) in pieces.iter().enumerate() {
        let (wide, tall) = piece.sides();
        if !(least..=largest).contains(&wide.max(tall)) || piece.fill() < FILLED_SHARE {
            continue;
        }
        let taper = piece.taper(k as u32 + 1, &label, width);
        let fit = |p: usize| -> f64 {
            let prompt = &prompts[p];
            let size = wide.max(tall) / prompt.strike_px;
            let square = (wide.min(tall) / wide.max(tall)) / (prompt.tick_px / prompt.strike_px);
            let full = piece.fill() / prompt.fill.min(DISC_FILL);
            if !FILLED_SIZE.contains(&size) || !(0.67..=1.5).contains(&square) || full < FILLED_FULL {
                return 0.0;
            }
            let taper = (taper.max(0.1) / prompt.taper.max(0.1)).ln().abs();
            (-(size.ln().abs() + square.ln().abs() + full.min(1.0).ln().abs() + taper)).exp()
        };
        let Some((prompt, fit)) = marks.iter().map(|&p| (p, fit(p))).filter(|(_, fit)| *fit >= 0.2).max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let Some(dip_direction) = detector.dip_if_mine(thread(piece, dark)) else { continue };
        // A mark is inked at its middle (a ring, a letter C is not).
        let centre = piece.centre();
        if label[centre.1 as usize * width + centre.0 as usize] != k as u32 + 1 || !alone(k, &pieces, &label, (width, height)) || in_a_row(k, &pieces, &near) {
            continue;
        }
        taken[k] = true;
        found.push(FoundPoint { prompt, at: (centre.0 + origin.0, centre.1 + origin.1), dip_direction, confidence: (fit * 1000.0).round() / 1000.0 });
    }
    clear_taken(mask, &label, &taken);
    found
}
