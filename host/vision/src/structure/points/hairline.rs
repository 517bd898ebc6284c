//! Hairline ticks: a tick symbol printed a pixel wide, its tick a pixel or two no skeleton shows.
//! On its sample it is the straight run of ink with a tick beside its middle on one side; on the
//! map a lone straight stroke on the map's lightness, as dark as its sample and much darker than
//! the ground around it, with its tick and number beside its middle. Its number, often printed in
//! grey lighter than its ink or broken by it, is looked for in the grey ink on its tick's side too.
//!
//! Invariants: reads the map's lightness, not its colour's mask; clears the pieces it takes from
//! that mask; lengths in pixels of the scan it is measured on.

use super::numbers::{gap_to, number_box, padded, whole_number};
use super::pieces::{clear_taken, ink_pieces};
use super::{FoundPoint, NumberBox, NumberBoxes, PointDetector, PointMap, PointPrompt, Reads, SPAN_GAP_PX, SampleInk, Shape, bearing};
use crate::colour::lab;
use crate::image::Rgb;
use geomap_model::page::{PixelBox, segment_distance};

/// A hairline sample's ink: its pixels at least this share of its strongest ink's difference
/// from its paper ([`hairline_sample`]).
const HAIRLINE_INK: f64 = 0.5;
/// A hairline sample's strike line's ink at its ends, as a share of its strongest.
const HAIRLINE_END_INK: f64 = 0.3;
/// The most pixels of ink (as strong as its ends' at least) a hairline sample's strike line has
/// per pixel of its length (a wider stroke is no hairline).
const HAIRLINE_WIDEST: f64 = 2.3;
/// The shortest strike line a hairline sample is measured with, in pixels.
const HAIRLINE_LEAST_PX: f64 = 8.0;
/// How far a hairline's tick reaches from its strike line at most, in pixels (its number stands
/// farther).
const HAIRLINE_TICK_PX: f64 = 3.5;
/// The share of a hairline piece's pixels within a pixel of its axis ([`hairline_attitudes`]).
const HAIRLINE_STRAIGHT: f64 = 0.8;
/// The most pixels a hairline piece has per pixel of the longest strike line looked for.
const HAIRLINE_THICK: f64 = 4.0;
/// A hairline piece's length over its prompt's strike line's.
const HAIRLINE_LENGTHS: std::ops::RangeInclusive<f64> = 0.85..=1.15;
/// How dark a hairline's ink is at most (CIELAB L*).
const HAIRLINE_LIGHTNESS: f64 = 55.0;
/// How far around a pixel its ground is looked for, in pixels ([`Ground`]).
const HAIRLINE_GROUND_PX: i32 = 3;
/// How much darker than its ground a hairline's axis is on average (L*).
const HAIRLINE_DARKER: f64 = 35.0;
/// How much lighter (L*) a hairline's axis may print on average than its sample's ink at most (a
/// unit's contact, a contour printed fainter, is lighter)...
const HAIRLINE_LIGHTER: f64 = 6.0;
/// ...and how much darker at most (a black line's piece is darker).
const HAIRLINE_DARKER_INK: f64 = 12.0;
/// How light a hairline's axis prints on average at most (L*), whatever its sample reads: a
/// one-pixel sample may read lighter than the map's strokes when the scan was resampled.
const HAIRLINE_LIGHTEST: f64 = 46.0;
/// How much darker than its ground the map may be just beyond a hairline's ends at most (L*):
/// more, and the piece is part of a longer line.
const HAIRLINE_ENDS: f64 = 33.0;
/// How much darker than its ground a hairline's tick is, beside its middle (L*).
const HAIRLINE_TICK_DARKER: f64 = 25.0;
/// The fewest pixels of ink beside a hairline piece's middle on one side (its tick, its number).
const HAIRLINE_BESIDE: usize = 3;
/// How much darker than its ground a hairline attitude's number is (L*), its faint digits' edges
/// included ([`hairline_number_boxes`]).
const HAIRLINE_NUMBER_DARKER: f64 = 20.0;
/// The shortest digit of a hairline attitude's number, in pixels.
const HAIRLINE_DIGIT_PX: f64 = 3.0;
/// A hairline attitude's number's pieces are at most this share of its strike line high and wide.
const HAIRLINE_NUMBER_SIZE: f64 = 0.6;
/// How near a hairline attitude's strike line and tick (as measured on its sample) the ink is
/// taken for theirs, not its number's, in pixels.
const HAIRLINE_NUMBER_CLEAR_PX: f64 = 1.5;
/// How many boxes beside a hairline attitude its number is looked for in at most.
const HAIRLINE_NUMBER_TRIES: usize = 3;

/// A tick symbol's sample printed as a hairline (a one-pixel strike line its skeleton shows no tick
/// on): its ink (`strength`, each pixel's difference from its paper, at least [`HAIRLINE_INK`] of
/// the `strongest`; `width × height`) along the straight line the most of it lies along, in the run
/// with the most ink across gaps of at most [`SPAN_GAP_PX`], and beside that run's middle, within
/// [`HAIRLINE_TICK_PX`] of it, on one side only (the tick). Its strike's length and its tick's
/// reach, or `None` when the sample shows no such symbol.
fn hairline_sample(strength: &[f64], strongest: f64, (width, height): (usize, usize)) -> Option<(f64, f64)> {
    let inked: Vec<(f64, f64, f64)> =
        strength.iter().enumerate().filter(|&(_, &s)| s >= HAIRLINE_INK * strongest).map(|(i, &s)| ((i % width) as f64, (i / width) as f64, s)).collect();
    // The line the most ink lies along: per degree of direction, the ink summed in bands a pixel
    // wide across it.
    let reach = (width + height) as f64;
    let mut best = (0.0, 0.0, 0.0);
    for degree in 0..180 {
        let angle = f64::from(degree).to_radians();
        let mut bands = vec![0.0; 2 * (width + height) + 1];
        for &(x, y, s) in &inked {
            bands[(y * angle.cos() - x * angle.sin() + reach).round() as usize] += s;
        }
        let (band, ink) = bands.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
        if *ink > best.0 {
            best = (*ink, angle, band as f64 - reach);
        }
    }
    let (_, angle, offset) = best;
    let along = |x: f64, y: f64| x * angle.cos() + y * angle.sin();
    let across = |x: f64, y: f64| y * angle.cos() - x * angle.sin() - offset;
    // Its run: the ink on the line, split where it breaks for more than a gap.
    // Its run takes the line's fainter ends too (a hairline's last pixels print light).
    let mut on_line: Vec<(f64, f64)> = strength
        .iter()
        .enumerate()
        .filter(|&(_, &s)| s >= HAIRLINE_END_INK * strongest)
        .map(|(i, &s)| ((i % width) as f64, (i / width) as f64, s))
        .filter(|&(x, y, _)| across(x, y).abs() <= 1.0)
        .map(|(x, y, s)| (along(x, y), s))
        .collect();
    on_line.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut runs: Vec<(f64, f64, f64)> = Vec::new();
    for &(t, s) in &on_line {
        match runs.last_mut() {
            Some(run) if t - run.1 <= SPAN_GAP_PX => (run.1, run.2) = (t, run.2 + s),
            _ => runs.push((t, t, s)),
        }
    }
    let &(first, last, _) = runs.iter().max_by(|a, b| a.2.total_cmp(&b.2))?;
    let strike = last - first + 1.0;
    // One pixel wide: its ink along the run, a pixel or two per pixel of its length.
    let on_run = (0..strength.len())
        .filter(|&i| strength[i] >= HAIRLINE_END_INK * strongest)
        .map(|i| ((i % width) as f64, (i / width) as f64))
        .filter(|&(x, y)| across(x, y).abs() <= 2.5 && (first..=last).contains(&along(x, y)))
        .count();
    if strike < HAIRLINE_LEAST_PX || on_run as f64 > HAIRLINE_WIDEST * strike {
        return None;
    }
    // The tick: ink beside the run's middle, on one side only.
    let middle = (first + last) / 2.0;
    let beside = |side: f64| {
        inked
            .iter()
            .filter(|&&(x, y, _)| (along(x, y) - middle).abs() <= (strike / 4.0).max(1.5))
            .map(|&(x, y, _)| side * across(x, y))
            .filter(|&off| off > 1.0 && off <= HAIRLINE_TICK_PX)
            .fold(0.0, f64::max)
    };
    match (beside(1.0), beside(-1.0)) {
        (tick, 0.0) | (0.0, tick) if tick > 0.0 => Some((strike, tick)),
        _ => None,
    }
}

/// A map's lightness, for the hairline attitudes: per pixel its CIELAB L* (0–100), with
/// [`COLOURFUL`] set for a pixel whose chroma is [`HAIRLINE_CHROMA`] or more.
pub struct Lightness<'a> {
    /// The pixels, `width × height`.
    pub pixels: &'a [u8],
    /// The map's width in pixels.
    pub width: usize,
    /// The map's height in pixels.
    pub height: usize,
}

/// The bit a [`Lightness`] pixel carries when it is colourful, not grey or black ink.
pub const COLOURFUL: u8 = 0x80;

/// The chroma from which a pixel is no grey or black ink (CIELAB).
pub const HAIRLINE_CHROMA: f64 = 25.0;

/// A colour as a [`Lightness`] pixel holds it: its L* (0–100), with [`COLOURFUL`] set when its
/// chroma is [`HAIRLINE_CHROMA`] or more.
pub fn lightness_byte(colour: (u8, u8, u8)) -> u8 {
    let [light, a, b] = lab(colour);
    let colourful = if a.hypot(b) >= HAIRLINE_CHROMA { COLOURFUL } else { 0 };
    light.round().clamp(0.0, 100.0) as u8 | colourful
}

impl Lightness<'_> {
    /// Whether a pixel is grey or black ink darker than [`HAIRLINE_LIGHTNESS`].
    fn inked(&self, i: usize) -> bool {
        self.pixels[i] & COLOURFUL == 0 && f64::from(self.pixels[i]) < HAIRLINE_LIGHTNESS
    }
}

/// The ground (the paper or unit) around a piece of ink, over a window of the map: its
/// lightness closed (the lightest within [`HAIRLINE_GROUND_PX`] of each pixel, then the darkest of
/// those within as much), so that a stroke up to twice that wide reads as the ground beside it.
struct Ground {
    /// The window's top-left pixel in the map.
    origin: (isize, isize),
    /// The window's width in pixels.
    wide: usize,
    /// The window's height in pixels.
    tall: usize,
    /// The window's lightness, a row at a time.
    own: Vec<f64>,
    /// The closed lightness, as `own`.
    closed: Vec<f64>,
}

impl Ground {
    /// The ground over the window `(x0, y0)`–`(x1, y1)` (map pixels, last ones included) of `lightness`.
    fn around(lightness: &Lightness, (x0, y0): (isize, isize), (x1, y1): (isize, isize)) -> Ground {
        let r = HAIRLINE_GROUND_PX as isize;
        // The lightness over the window and twice the reach around it, the map's edge pixels repeated beyond it.
        let (ox, oy) = (x0 - 2 * r, y0 - 2 * r);
        let (wide, tall) = ((x1 - x0 + 1 + 4 * r) as usize, (y1 - y0 + 1 + 4 * r) as usize);
        let at = |x: isize, y: isize| {
            let (x, y) = (x.clamp(0, lightness.width as isize - 1) as usize, y.clamp(0, lightness.height as isize - 1) as usize);
            f64::from(lightness.pixels[y * lightness.width + x] & !COLOURFUL)
        };
        let own: Vec<f64> = (0..tall).flat_map(|y| (0..wide).map(move |x| (x, y))).map(|(x, y)| at(ox + x as isize, oy + y as isize)).collect();
        // One pass along rows, one along columns, each taking the lightest (then the darkest) within the reach.
        let pass = |values: &[f64], lightest: bool| {
            let pick = |a: f64, b: f64| if lightest { a.max(b) } else { a.min(b) };
            let rows: Vec<f64> = (0..tall)
                .flat_map(|y| (0..wide).map(move |x| (x, y)))
                .map(|(x, y)| (x.saturating_sub(r as usize)..=(x + r as usize).min(wide - 1)).map(|k| values[y * wide + k]).reduce(pick).expect("a pixel"))
                .collect();
            (0..tall)
                .flat_map(|y| (0..wide).map(move |x| (x, y)))
                .map(|(x, y)| (y.saturating_sub(r as usize)..=(y + r as usize).min(tall - 1)).map(|k| rows[k * wide + x]).reduce(pick).expect("a pixel"))
                .collect::<Vec<f64>>()
        };
        let closed = pass(&pass(&own, true), false);
        Ground { origin: (ox, oy), wide, tall, own, closed }
    }

    /// The window's index of the pixel holding `(x, y)` (map coordinates, a pixel's centre at
    /// its index + 0.5), if the window holds it.
    fn index(&self, (x, y): (f64, f64)) -> Option<usize> {
        let (x, y) = (x.floor() as isize - self.origin.0, y.floor() as isize - self.origin.1);
        (x >= 0 && y >= 0 && (x as usize) < self.wide && (y as usize) < self.tall).then(|| y as usize * self.wide + x as usize)
    }

    /// The map's lightness at `(x, y)` (100 off the window).
    fn light(&self, at: (f64, f64)) -> f64 {
        self.index(at).map_or(100.0, |i| self.own[i])
    }

    /// How much darker than the ground the map is at `(x, y)` (0 off the window).
    fn darkness(&self, at: (f64, f64)) -> f64 {
        self.index(at).map_or(0.0, |i| (self.closed[i] - self.own[i]).max(0.0))
    }
}

/// The hairline attitudes of the prompts of `group` (indices into `all`) measured as hairlines
/// on `map`'s lightness: pieces of grey or black ink
/// darker than L* 55 that are straight (four fifths of their pixels within a pixel of their axis)
/// and 0.85–1.15 times a prompt's strike line long, whose axis prints about as dark as the
/// prompt's ink (at most L* 46) and 35 darker than the ground around it, the ground beyond either
/// end not (a piece of a longer line is), with ink beside the middle (three pixels on a side at
/// least: the tick, the dip's number) and a tick just beside it. The dip direction points to the
/// darker side there. Their pixels are cleared from the map's mask (their colour's), so no line
/// takes them up.
fn hairline_attitudes(map: &mut PointMap, all: &[PointPrompt], group: &[usize]) -> Vec<FoundPoint> {
    let (width, height, origin) = (map.width, map.height, map.origin);
    let Some(lightness) = &map.lightness else { return Vec::new() };
    let hairlines: Vec<usize> = group.iter().copied().filter(|&p| all[p].measured_by(&HairlineTicks) && all[p].strike_px > 0.0).collect();
    let Some(longest) = hairlines.iter().map(|&p| HAIRLINE_LENGTHS.end() * all[p].strike_px).reduce(f64::max) else {
        return Vec::new();
    };
    let shortest = hairlines.iter().map(|&p| HAIRLINE_LENGTHS.start() * all[p].strike_px).fold(f64::INFINITY, f64::min);
    let ink: Vec<u8> = (0..width * height).map(|i| u8::from(lightness.inked(i))).collect();
    let (label, pieces) = ink_pieces(&ink, width, height);
    let mut taken = vec![false; pieces.len()];
    let mut found = Vec::new();
    for (k, piece) in pieces.iter().enumerate() {
        let (wide, tall) = piece.sides();
        if wide.max(tall) > longest + 1.0 || wide.hypot(tall) < shortest || piece.pixels as f64 > HAIRLINE_THICK * longest {
            continue;
        }
        let (x0, y0, x1, y1) = (piece.bbox.0 as usize, piece.bbox.1 as usize, piece.bbox.2 as usize, piece.bbox.3 as usize);
        let own: Vec<(f64, f64)> = (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .filter(|&(x, y)| label[y * width + x] == k as u32 + 1)
            .map(|(x, y)| (x as f64 + 0.5, y as f64 + 0.5))
            .collect();
        // Its axis: the direction its pixels spread along most.
        let n = own.len() as f64;
        let (mx, my) = own.iter().fold((0.0, 0.0), |m, p| (m.0 + p.0 / n, m.1 + p.1 / n));
        let (sxx, syy, sxy) = own.iter().fold((0.0, 0.0, 0.0), |s, p| (s.0 + (p.0 - mx).powi(2), s.1 + (p.1 - my).powi(2), s.2 + (p.0 - mx) * (p.1 - my)));
        let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
        let (u, v) = ((angle.cos(), angle.sin()), (-angle.sin(), angle.cos()));
        let along = |p: (f64, f64)| (p.0 - mx) * u.0 + (p.1 - my) * u.1;
        let across = |p: (f64, f64)| (p.0 - mx) * v.0 + (p.1 - my) * v.1;
        let core: Vec<f64> = own.iter().filter(|&&p| across(p).abs() <= 1.0).map(|&p| along(p)).collect();
        let (first, last) = core.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |r, &t| (r.0.min(t), r.1.max(t)));
        let length = last - first + 1.0;
        if (core.len() as f64) < HAIRLINE_STRAIGHT * n {
            continue;
        }
        let fits = hairlines.iter().map(|&p| (p, length / all[p].strike_px)).filter(|(_, ratio)| HAIRLINE_LENGTHS.contains(ratio));
        let Some((prompt, ratio)) = fits.min_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs())) else { continue };
        let middle = (first + last) / 2.0;
        let centre = (mx + middle * u.0, my + middle * u.1);
        let at = |t: f64, off: f64| (centre.0 + t * u.0 + off * v.0, centre.1 + t * u.1 + off * v.1);
        let steps = |from: f64, to: f64| (0..).map(move |k| from + 0.5 * f64::from(k)).take_while(move |&d| d <= to);
        let half = length / 2.0;
        let margin = (half + 5.0).ceil() as isize;
        let (cx, cy) = (centre.0.floor() as isize, centre.1.floor() as isize);
        let ground = Ground::around(lightness, (cx - margin, cy - margin), (cx + margin, cy + margin));
        let mean = |of: &dyn Fn((f64, f64)) -> f64| {
            let values: Vec<f64> = steps(-half + 1.0, half - 1.0).map(|t| of(at(t, 0.0))).collect();
            values.iter().sum::<f64>() / values.len().max(1) as f64
        };
        let (darker, light) = (mean(&|p| ground.darkness(p)), mean(&|p| ground.light(p)));
        let ends = [1.0, -1.0].map(|end| steps(half + 2.0, half + 4.0).map(|d| ground.darkness(at(end * d, 0.0))).fold(0.0, f64::max));
        // Ink beside its middle, per side: pixels of other pieces of ink, or its own off its axis.
        let reach = (half + f64::from(HAIRLINE_GROUND_PX)).ceil() as isize;
        let beside = |side: f64| {
            (cy - reach..=cy + reach)
                .flat_map(|y| (cx - reach..=cx + reach).map(move |x| (x as f64 + 0.5, y as f64 + 0.5)))
                .filter(|&p| crate::structure::index_at(p, width, height).is_some_and(|i| ink[i] != 0))
                .map(|(x, y)| ((x - centre.0) * u.0 + (y - centre.1) * u.1, side * ((x - centre.0) * v.0 + (y - centre.1) * v.1)))
                .filter(|&(t, off)| t.abs() <= 0.35 * length && off >= 1.5 && off <= half + 1.0)
                .count()
        };
        let (right, left) = (beside(1.0), beside(-1.0));
        // The tick: the darker side just beside the middle.
        let tick = |side: f64| {
            steps(-2.5, 2.5).flat_map(|t| steps(1.5, 2.5).map(move |off| (t, off))).map(|(t, off)| ground.darkness(at(t, side * off))).fold(0.0, f64::max)
        };
        let (tick_right, tick_left) = (tick(1.0), tick(-1.0));
        let ink_light = lab(all[prompt].colour)[0];
        if darker < HAIRLINE_DARKER
            || !(ink_light - HAIRLINE_DARKER_INK..=(ink_light + HAIRLINE_LIGHTER).min(HAIRLINE_LIGHTEST)).contains(&light)
            || ends.iter().any(|&end| end > HAIRLINE_ENDS)
            || right.max(left) < HAIRLINE_BESIDE
            || tick_right.max(tick_left) < HAIRLINE_TICK_DARKER
        {
            continue;
        }
        let side = if tick_right >= tick_left { 1.0 } else { -1.0 };
        taken[k] = true;
        let fit = (-ratio.ln().abs()).exp();
        found.push(FoundPoint {
            prompt,
            at: (centre.0 + origin.0, centre.1 + origin.1),
            dip_direction: Some(bearing((side * v.0, side * v.1))),
            confidence: (fit * 1000.0).round() / 1000.0,
        });
    }
    clear_taken(map.mask(), &label, &taken);
    found
}

/// The boxes a hairline attitude's number may stand in, nearest first, in `window` (the scan
/// around it; `at`, its junction, in the window's pixels; `dip_direction`, degrees clockwise from
/// the sheet's up): where [`number_box`] finds none it can read, a hairline's number printed in
/// grey is often lighter than its ink or broken by it. Here the number's ink is any grey or black
/// 20 L* darker than its ground (the window's lightness closed over 7 × 7 pixels), in digit-sized
/// pieces apart from the symbol's own (its pieces at its junction, or its strike line and tick
/// drawn square to and along `dip_direction`, about as long as its sample's), centred on its tick's side
/// (beyond a strike line's ink) and within its strike line's length, grouped on their lines of
/// type; at most three, the nearest.
fn hairline_number_boxes(window: &Rgb, at: (f64, f64), prompt: &PointPrompt, dip_direction: f64) -> Vec<PixelBox> {
    let (width, height) = (window.width as usize, window.height as usize);
    if width == 0 || height == 0 {
        return Vec::new();
    }
    let pixels: Vec<u8> = window.pixels.chunks_exact(3).map(|p| lightness_byte((p[0], p[1], p[2]))).collect();
    let lightness = Lightness { pixels: &pixels, width, height };
    let ground = Ground::around(&lightness, (0, 0), (width as isize - 1, height as isize - 1));
    let centre_of = |i: usize| ((i % width) as f64 + 0.5, (i / width) as f64 + 0.5);
    let inked: Vec<bool> = (0..width * height).map(|i| pixels[i] & COLOURFUL == 0 && ground.darkness(centre_of(i)) >= HAIRLINE_NUMBER_DARKER).collect();
    // The symbol's own ink is left out twice over: its pieces at its junction (a digit apart from
    // them stays whole), or its strokes where they run (its tick as long as its sample's, its strike
    // line a pixel longer at each end): a digit printed against either comes apart from them.
    let towards = (dip_direction.to_radians().sin(), -dip_direction.to_radians().cos());
    let half = prompt.strike_px / 2.0 + 1.0;
    let strike = ((at.0 + towards.1 * half, at.1 - towards.0 * half), (at.0 - towards.1 * half, at.1 + towards.0 * half));
    let tick = (at, (at.0 + towards.0 * prompt.tick_px, at.1 + towards.1 * prompt.tick_px));
    let on_symbol_strokes = |i: usize| [strike, tick].iter().any(|&(a, b)| segment_distance(centre_of(i), a, b) <= HAIRLINE_NUMBER_CLEAR_PX);
    let junction: Vec<usize> = (-1..=1)
        .flat_map(|dy| (-1..=1).map(move |dx| (at.0 + f64::from(dx), at.1 + f64::from(dy))))
        .filter_map(|near| crate::structure::index_at(near, width, height))
        .collect();
    let largest = HAIRLINE_NUMBER_SIZE * prompt.strike_px;
    let mut numbers: Vec<(f64, f64, f64, f64)> = Vec::new();
    for cleared in [false, true] {
        let mask: Vec<u8> = (0..width * height).map(|i| u8::from(inked[i] && !(cleared && on_symbol_strokes(i)))).collect();
        let (label, pieces) = ink_pieces(&mask, width, height);
        let own: Vec<u32> = junction.iter().map(|&i| label[i]).collect();
        let digits: Vec<&(f64, f64, f64, f64)> = pieces
            .iter()
            .enumerate()
            .filter(|(k, piece)| {
                let (wide, tall) = piece.sides();
                !own.contains(&(*k as u32 + 1)) && tall >= HAIRLINE_DIGIT_PX && tall <= largest && wide <= largest
            })
            .map(|(_, piece)| &piece.bbox)
            .collect();
        for &digit in &digits {
            let number = whole_number(*digit, &digits);
            let centre = ((number.0 + number.2) / 2.0 - at.0, (number.1 + number.3) / 2.0 - at.1);
            let beyond_tick = centre.0 * towards.0 + centre.1 * towards.1 >= HAIRLINE_NUMBER_CLEAR_PX;
            if !numbers.contains(&number) && beyond_tick && gap_to(&number, at) <= prompt.strike_px {
                numbers.push(number);
            }
        }
    }
    numbers.sort_by(|a, b| gap_to(a, at).total_cmp(&gap_to(b, at)));
    numbers.into_iter().take(HAIRLINE_NUMBER_TRIES).map(|number| padded(number, (width, height))).collect()
}

/// The detector of tick symbols printed as hairlines.
#[derive(Debug)]
pub struct HairlineTicks;

impl PointDetector for HairlineTicks {
    fn name(&self) -> &'static str {
        "hairline ticks"
    }

    fn draws(&self, shape: Shape) -> bool {
        shape == Shape::Tick
    }

    fn reads(&self) -> Reads {
        Reads::Lightness
    }

    /// Measured on its sample's straight run of ink and its tick, a pixel wide.
    fn measure(&self, prompt: &PointPrompt, ink: &SampleInk) -> Option<PointPrompt> {
        let (strike_px, tick_px) = hairline_sample(&ink.strength, ink.strongest, ink.size)?;
        Some(PointPrompt { colour: ink.core, width_px: 1.0, strike_px, tick_px, ..prompt.clone() })
    }

    fn find(&self, map: &mut PointMap, prompts: &mut [PointPrompt], group: &[usize]) -> Vec<FoundPoint> {
        hairline_attitudes(map, prompts, group)
    }

    /// The number printed in the symbol's own ink beside it, then the boxes of
    /// grey ink on its tick's side.
    /// (The grey boxes are looked for only when asked for: after the own ink's number reads
    /// nothing.)
    fn number_boxes<'a>(&self, window: &'a Rgb, at: (f64, f64), prompt: &'a PointPrompt, dip_direction: Option<f64>) -> NumberBoxes<'a> {
        let own = number_box(window, at, prompt);
        let grey = std::iter::once_with(move || dip_direction.map(|towards| hairline_number_boxes(window, at, prompt, towards)).unwrap_or_default());
        let grey = grey.flatten().filter(move |region| Some(*region) != own).map(|region| NumberBox { region, own_ink: false });
        Box::new(own.map(|region| NumberBox { region, own_ink: true }).into_iter().chain(grey))
    }
}

#[cfg(test)]
mod tests {
    use super::super::samples::{Stroke, TestMap, attitude, drawn, found_by, lit, prompt, scan_of};
    use super::*;

    /// A stroke a pixel wide drawn on a window of the scan: its segments, their colour.
    type ColouredStroke = (Vec<(f64, f64, f64, f64)>, [u8; 3]);

    /// A hairline's sample `width × height`: a strike line `strike` long at its middle dipping
    /// 45°, its tick a pixel or two beside the middle, apart from it (as a scan prints it), drawn
    /// `stroke` wide in grey.
    fn sample((width, height): (usize, usize), strike: f64, with_tick: bool, stroke: f64) -> Rgb {
        let (x, y) = (width as f64 / 2.0, height as f64 / 2.0);
        let [line, _] = attitude(x, y, 45.0, strike, 2.0);
        let (dx, dy) = (45_f64.to_radians().sin(), -45_f64.to_radians().cos());
        let tick = (x + 2.0 * dx, y + 2.0 * dy, x + 2.8 * dx, y + 2.8 * dy);
        let segments = if with_tick { vec![line, tick] } else { vec![line] };
        scan_of(&drawn(width, height, &segments, stroke), (width, height), [86, 86, 86])
    }

    /// A hairline prompt measured 15 px long with a 2 px tick, in dark grey.
    fn hairline_prompt() -> PointPrompt {
        PointPrompt { colour: (86, 86, 86), width_px: 1.0, strike_px: 15.0, tick_px: 2.0, ..prompt(Shape::Tick, &HairlineTicks) }
    }

    #[test]
    fn a_tick_symbol_printed_as_a_hairline_is_measured_as_one_and_a_line_without_its_tick_or_a_wide_one_is_none() {
        let unmeasured = || PointPrompt { detector: None, strike_px: 0.0, ..hairline_prompt() };
        let hairline = unmeasured().calibrated(&sample((40, 30), 15.0, true, 1.0)).expect("a hairline symbol");
        assert!(hairline.measured_by(&HairlineTicks) && (hairline.strike_px - 15.0).abs() <= 2.0 && hairline.width_px == 1.0, "{hairline:?}");
        assert!(unmeasured().calibrated(&sample((40, 30), 15.0, false, 1.0)).is_none(), "a line without its tick");
        let wide = unmeasured().calibrated(&sample((40, 30), 15.0, true, 3.0));
        assert!(wide.as_ref().is_none_or(|p| !p.measured_by(&HairlineTicks)), "{wide:?}");
    }

    /// A hairline symbol at `(x, y)` with its tick towards `towards`, its strike line `strike`
    /// long, and its number printed beyond the tick.
    fn symbol(x: f64, y: f64, towards: f64, strike: f64) -> Vec<(f64, f64, f64, f64)> {
        let [line, tick] = attitude(x, y, towards, strike, 2.0);
        let (dx, dy) = (towards.to_radians().sin(), -towards.to_radians().cos());
        vec![line, tick, (x + 6.0 * dx, y + 6.0 * dy - 2.0, x + 6.0 * dx, y + 6.0 * dy + 2.0)]
    }

    #[test]
    fn a_hairline_attitude_is_found_by_its_tick_and_number_and_a_contact_a_contour_a_fault_or_a_bare_line_is_not() {
        let towards = [0.0, 70.0, 160.0, 250.0];
        let mut strokes: Vec<Stroke> = towards.iter().enumerate().map(|(k, &t)| (symbol(30.0 + 40.0 * k as f64, 30.0, t, 15.0), 1.0, 40)).collect();
        strokes.push((vec![(10.0, 70.0, 170.0, 75.0)], 1.0, 40)); // a contact
        strokes.push((symbol(30.0, 110.0, 90.0, 15.0), 1.0, 50)); // a contour printed lighter
        strokes.push((symbol(70.0, 110.0, 90.0, 15.0), 3.0, 15)); // a black fault's piece
        strokes.push((vec![attitude(110.0, 110.0, 90.0, 15.0, 0.0)[0]], 1.0, 40)); // a bare line
        let (width, height) = (180, 140);
        let pixels = lit(width, height, &strokes);
        let mut mask = vec![0; width * height];
        let map = TestMap { mask: &mut mask, size: (width, height), dark: &|_| false, lightness: &pixels, origin: (100.0, 200.0) };
        let (mut found, _) = found_by(&[&HairlineTicks], map, &mut [hairline_prompt()]);
        found.sort_by(|a, b| a.at.0.total_cmp(&b.at.0));
        assert_eq!(found.len(), towards.len(), "{found:?}");
        for (k, (point, want)) in found.iter().zip(towards).enumerate() {
            let off = (point.at.0 - 130.0 - 40.0 * k as f64).hypot(point.at.1 - 230.0);
            let turn = (point.dip_direction.expect("a dip direction") - want + 540.0).rem_euclid(360.0) - 180.0;
            assert!(off <= 0.75 && turn.abs() <= 10.0, "{point:?} for {want}");
        }
    }

    #[test]
    fn hairline_ticks_are_measured_on_their_sample_and_found_on_the_map_at_three_sizes() {
        // A hairline stays a pixel wide whatever the scan: its length grows with the sheet's scale.
        for strike in [15.0, 22.0, 30.0] {
            let side = (2.0 * strike) as usize;
            let unmeasured = PointPrompt { detector: None, strike_px: 0.0, ..hairline_prompt() };
            let measured = unmeasured.calibrated(&sample((side, side), strike, true, 1.0)).unwrap_or_else(|| panic!("measured {strike} px long"));
            assert!(measured.measured_by(&HairlineTicks) && (measured.strike_px / strike - 1.0).abs() <= 0.15, "{strike}: {measured:?}");
            // Printed in its sample's ink (L* 37), centred on whole pixels (a tick a pixel or two
            // long prints or not as its pixels fall).
            let gap = (2.5 * strike).round();
            let towards = [0.0, 70.0, 160.0];
            let strokes: Vec<Stroke> =
                towards.iter().enumerate().map(|(k, &t)| (symbol((gap * (k as f64 + 0.5)).round(), (gap / 2.0).round(), t, strike), 1.0, 37)).collect();
            let size = ((gap * 3.0) as usize, gap as usize);
            let pixels = lit(size.0, size.1, &strokes);
            let mut mask = vec![0; size.0 * size.1];
            let map = TestMap { mask: &mut mask, size, dark: &|_| false, lightness: &pixels, origin: (0.0, 0.0) };
            let (found, _) = found_by(&[&HairlineTicks], map, &mut [measured]);
            assert_eq!(found.len(), 3, "{strike}: {found:?}");
        }
    }

    #[test]
    fn a_hairline_attitudes_number_is_looked_for_in_grey_ink_on_its_ticks_side_and_a_colourful_or_far_piece_is_none() {
        // A 64 × 64 window of a unit's blue ground with each of `strokes` (segments, colour) drawn a pixel wide.
        let painted = |strokes: &[ColouredStroke]| {
            let mut pixels: Vec<u8> = [170, 200, 230].repeat(64 * 64);
            for (segments, colour) in strokes {
                for (pixel, inked) in pixels.chunks_exact_mut(3).zip(drawn(64, 64, segments, 1.0)) {
                    if inked != 0 {
                        pixel.copy_from_slice(colour);
                    }
                }
            }
            Rgb { width: 64, height: 64, pixels }
        };
        let (ink, grey) = ([60, 60, 60], [120, 120, 120]);
        // The symbol in dark ink, its tick to the right; its number 15 in lighter grey beyond the tick.
        let symbol = attitude(32.5, 32.5, 90.0, 15.0, 2.5).to_vec();
        let fifteen = vec![
            (38.5, 29.0, 38.5, 34.0),
            (40.5, 29.0, 43.0, 29.0),
            (40.5, 29.0, 40.5, 31.5),
            (40.5, 31.5, 43.0, 31.5),
            (43.0, 31.5, 43.0, 34.0),
            (43.0, 34.0, 40.5, 34.0),
        ];
        // A grey digit on the other side, one farther than the strike line's length, a magenta mark nearer.
        let window = painted(&[
            (symbol.clone(), ink),
            (fifteen, grey),
            (vec![(24.5, 29.0, 24.5, 34.0)], grey),
            (vec![(52.5, 29.0, 52.5, 34.0)], grey),
            (vec![(36.5, 38.0, 36.5, 43.0)], [220, 40, 160]),
        ]);
        let prompt = PointPrompt { colour: (60, 60, 60), tick_px: 2.5, ..hairline_prompt() };
        let boxes = hairline_number_boxes(&window, (32.5, 32.5), &prompt, 90.0);
        assert!(
            matches!(boxes.as_slice(), [number] if number.x0 <= 38.0 && number.x1 >= 44.0 && number.y0 <= 29.0 && number.y1 >= 34.0 && number.x0 > 35.0),
            "{boxes:?}"
        );
        // Dipping the other way, its number is looked for on the left.
        let boxes = hairline_number_boxes(&window, (32.5, 32.5), &prompt, 270.0);
        assert!(matches!(boxes.as_slice(), [number] if number.x0 <= 24.0 && number.x1 >= 25.0 && number.x1 < 30.0), "{boxes:?}");
        // A digit printed against the tick's end is told from the tick where the symbol runs.
        let touching = painted(&[(symbol, ink), (vec![(37.5, 29.0, 37.5, 35.0), (35.5, 33.5, 37.5, 33.5)], grey)]);
        let boxes = hairline_number_boxes(&touching, (32.5, 32.5), &prompt, 90.0);
        assert!(
            matches!(boxes.as_slice(), [number] if (36.0..=38.0).contains(&((number.x0 + number.x1) / 2.0)) && number.y0 <= 29.0 && number.y1 >= 35.0),
            "{boxes:?}"
        );
        // As the detector gives them: the number printed in ink near enough the symbol's own first.
        let given: Vec<NumberBox> = HairlineTicks.number_boxes(&window, (32.5, 32.5), &prompt, Some(90.0)).collect();
        assert!(matches!(given.first(), Some(number) if number.own_ink && number.region.x0 <= 38.5 && number.region.x1 >= 43.0), "{given:?}");
    }
}
