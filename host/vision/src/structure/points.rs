//! Bedding attitudes: a point symbol of the explanation drawn as a strike line with a dip tick on
//! one side (inclined beds, foliation), ticks on both (vertical beds) or a cross in a circle
//! (horizontal beds); the filled marks other point symbols are printed as (a collapse structure's
//! dot, a sinkhole's triangle); and a dot strung on a hairline (the strike of a vertical joint). On
//! a mask's skeleton a tick symbol is one junction with three (four) short arms to free ends and
//! nothing else: two arms in one line (the strike), the others across it; a circled cross is a
//! small closed web of branches, its spokes meeting at the circle's centre. A filled mark is a
//! piece of ink on its own, as wide, as tall and as full of its box as the sample's; a strung dot
//! is one with a line running through it. Each symbol is measured on its own sample and looked for
//! with those lengths and its stroke's width. A tick symbol whose sample prints a pixel wide (its
//! tick a pixel or two no skeleton shows) is a hairline: a lone straight stroke on the map's
//! lightness, as dark as its sample, with its tick and number beside its middle.
//!
//! Invariants: pure arithmetic on branches the caller traced (a filled mark: on the mask, before
//! it is thinned; a hairline: on the lightness); a branch belongs to one symbol at most; directions
//! leave in degrees clockwise from the sheet's up (rows grow downwards).

use std::collections::HashMap;

use super::skeleton::{self, Branch, Spur};
use crate::colour::{delta_e, lab};
use crate::image::Rgb;
use crate::layout::symbols::SymbolEntry;
use geomap_model::page::{PixelBox, segment_distance};
use geomap_model::symbols::{Family, catalog};

/// Arms whose bases are this close (pixels, plus [`JUNCTION_WIDTHS`] stroke widths) leave from one junction.
const JUNCTION_PX: f64 = 3.0;
/// See [`JUNCTION_PX`].
const JUNCTION_WIDTHS: f64 = 1.5;
/// The strike's two arms point at least this far apart, in degrees.
const STRAIGHT_DEGREES: f64 = 150.0;
/// A tick stands within this many degrees of square to the strike.
const SQUARE_DEGREES: f64 = 30.0;
/// The shorter strike arm is at least this share of the longer (the strike is centred on its tick).
const BALANCE: f64 = 0.5;
/// Without an explanation, an attitude's arms are at most this many of the map's common strokes long.
const LOOK_ARM_WIDTHS: f64 = 12.0;
/// Without an explanation, attitudes are looked for when at least this many symbols of their
/// shape are on the map (their lengths are measured on them); a circled cross, a shape little
/// else on a map takes, when at least [`LOOK_LEAST_CIRCLED`] are.
const LOOK_LEAST: usize = 5;
/// See [`LOOK_LEAST`].
const LOOK_LEAST_CIRCLED: usize = 3;
/// A circled cross's web has at least this many branches joined at both ends (its four spokes
/// and four arcs, give or take what thinning merges).
const CIRCLED_BRANCHES: usize = 6;
/// A circled cross's web is at least this share as wide as it is tall, and as tall as wide.
const ROUND: f64 = 0.7;
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
/// A strung dot's sample: its dot is the ink at least this share as strong as its strongest (its
/// hairline prints lighter).
const STRUNG_DOT: f64 = 0.8;
/// A strung dot's sample is also looked at as this many pixels wider all round: its blurred rim,
/// which the map's mask takes with the dot (on an enlarged scan, the hairline lightest beside it).
const STRUNG_RIM_PX: f64 = 2.0;
/// A filled mark whose top rows hold less than this share of its bottom rows' ink is a triangle
/// on its base (about a half; a dot about 1).
const TRIANGLE_TAPER: f64 = 0.75;
/// A tick or cross measured on its sample spans, with the stroke's width its skeleton stops short
/// of, at least this share of the ink its strike line runs along ([`ink_span`]). A shorter one is a
/// piece of a strike line the sample's mask broke (a one-pixel stroke the scan left in pieces),
/// and the map's symbols would break alike.
const SAMPLE_SPAN: f64 = 0.75;
/// The widest gap in a strike line's ink [`ink_span`] runs across, in pixels.
const SPAN_GAP_PX: f64 = 2.0;
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

pub use geomap_model::symbols::Shape;

/// The TA1 point type (`enum_point_type`, or a finer kind the GeoPackage files under the schema's
/// type: "inclined bedding" under `bedding`, "breccia pipe" under `other`) and the shape of an
/// explanation's point symbol, as the catalog (`geomap_model::symbols`) gives them, for the
/// symbols a detector looks for; `None` for the rest (a mine's crossed picks, a spring).
pub fn ta1_point_type(symbol: &str) -> Option<(&'static str, Shape)> {
    let known = catalog().named(symbol).filter(|known| known.family == Family::Point)?;
    Some((known.ta1.as_deref()?, known.shape?))
}

/// An attitude symbol of the explanation, or one looked for by its shape alone, as its symbols are looked for.
#[derive(Debug, Clone)]
pub struct PointPrompt {
    /// Its index among the layout's symbol entries; `None` for a symbol looked for by its shape
    /// alone ([`PointPrompt::by_look`]).
    pub entry: Option<usize>,
    /// Its name as the entry begins ("strike and dip of beds").
    pub symbol: String,
    /// The entry's words.
    pub words: String,
    /// Its TA1 point type.
    pub ta1_type: &'static str,
    /// How it is drawn.
    pub shape: Shape,
    /// The colour its sample is drawn in.
    pub colour: (u8, u8, u8),
    /// The stroke's width in pixels.
    pub width_px: f64,
    /// The strike line's length along its skeleton, in pixels (a circled cross: its circle's
    /// diameter, the bar across it; a filled mark, a strung dot: its box's wider side).
    pub strike_px: f64,
    /// A tick's length from the strike line, in pixels (a circled cross: its circle's radius; a
    /// filled mark, a strung dot: its box's narrower side).
    pub tick_px: f64,
    /// A filled mark's (a strung dot's) share of its box that its ink fills; 0 for the other
    /// shapes.
    pub fill: f64,
    /// A filled mark's (a strung dot's) ink in its top rows over that in its bottom rows (a third
    /// of its height each): a dot about 1, a triangle on its base about a half; 0 for the other
    /// shapes.
    pub taper: f64,
    /// A tick symbol printed as a hairline: a one-pixel strike line whose tick (a pixel or two)
    /// no skeleton shows. It is looked for as a straight piece of ink with its number beside it
    /// ([`hairline_attitudes`]), not on the skeleton.
    pub hairline: bool,
}

impl PointPrompt {
    /// The attitude symbols among the layout's symbol entries (in order), not yet measured.
    pub fn of_entries(entries: &[SymbolEntry]) -> Vec<PointPrompt> {
        entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| entry.kind == Family::Point)
            .filter_map(|(index, entry)| {
                let kind = ta1_point_type(&entry.symbol)?;
                Some(PointPrompt::unmeasured(Some(index), (entry.symbol.clone(), entry.text.clone()), kind, (0, 0, 0)))
            })
            .collect()
    }

    /// The attitudes looked for when the explanation has none, their lengths measured on the map
    /// ([`PointPrompt::measure_on_map`]): a dark strike line with a dip tick (inclined beds) and a
    /// dark cross in a circle (horizontal beds): the catalog's point symbols with a look. A cross
    /// alone is not looked for: a graticule's crosses are drawn so.
    pub fn by_look() -> Vec<PointPrompt> {
        catalog()
            .looks(Family::Point)
            .filter_map(|symbol| {
                let kind = (symbol.ta1.as_deref()?, symbol.shape?);
                Some(PointPrompt::unmeasured(None, (symbol.name.clone(), symbol.look.clone()?), kind, super::LOOK_INK))
            })
            .collect()
    }

    /// A prompt for a symbol (its name and words, its TA1 kind and shape, the explanation's
    /// `entry` of it if any) drawn in `colour`, its sizes unknown until measured on its sample or
    /// on the map.
    pub fn unmeasured(entry: Option<usize>, (symbol, words): (String, String), (ta1_type, shape): (&'static str, Shape), colour: (u8, u8, u8)) -> PointPrompt {
        PointPrompt { entry, symbol, words, ta1_type, shape, colour, width_px: 1.0, strike_px: 0.0, tick_px: 0.0, fill: 0.0, taper: 0.0, hairline: false }
    }

    /// Measures a prompt looked for by its shape on the map's skeleton (`branches`, its strokes
    /// commonly `common_width` wide): the median lengths and width of the symbols of its shape
    /// whose arms (a circled cross: its width) are at most twelve strokes long. Fewer than five
    /// such symbols (three circled crosses) leave it unmeasured (its strike 0), and it is not looked for.
    pub fn measure_on_map(&mut self, branches: &[Branch], common_width: f64) {
        let seen = of_shape(branches, self.shape, LOOK_ARM_WIDTHS * common_width);
        if seen.len() < if self.shape == Shape::CircledCross { LOOK_LEAST_CIRCLED } else { LOOK_LEAST } {
            return;
        }
        let median = |of: fn(&Symbol) -> f64| {
            let mut values: Vec<f64> = seen.iter().map(of).collect();
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        (self.width_px, self.strike_px, self.tick_px) = (median(|s| s.width_px).max(1.0), median(|s| s.strike_px), median(|s| s.tick_px));
    }

    /// The prompt measured on its sample's pixels: the ink's colour (the median of its most
    /// strongly inked pixels), then on that colour's mask the largest symbol of its shape (a
    /// filled mark: the largest piece of ink, when it is one; a strung dot: the largest piece of
    /// its strongest ink, when it is one with a line of ink through it; a tick or cross: the
    /// largest, when it spans three quarters of its strike line's ink; else a tick symbol printed
    /// as a hairline, a pixel wide, measured on its ink's straight run); `None` when the sample
    /// shows none.
    pub fn calibrated(mut self, sample: &Rgb) -> Option<PointPrompt> {
        let SampleInk { labs, paper, strength, strongest, core } = SampleInk::of(sample)?;
        let mask = super::stroke_pixels(&labs, lab(core), paper, sample.width as usize);
        if self.shape.is_mark() {
            let (width, height) = (sample.width as usize, sample.height as usize);
            // A strung dot's hairline prints lighter than its dot, and may touch it.
            let dot_mask = if self.shape == Shape::Strung { strength.iter().map(|&s| u8::from(s >= STRUNG_DOT * strongest)).collect() } else { mask };
            let (label, pieces) = ink_pieces(&dot_mask, width, height);
            let (index, largest) = pieces.iter().enumerate().max_by_key(|(_, piece)| piece.pixels)?;
            let (wide, tall) = largest.sides();
            let (fill, square) = (largest.fill(), wide.min(tall) / wide.max(tall));
            if fill < FILLED_SHARE || square < FILLED_SQUARE || wide.min(tall) < FILLED_LEAST_PX {
                return None;
            }
            // Its hairline dark as the map's dark ink is (the map's strung dots are looked for so),
            // from the strongest ink or from its blurred rim, which the map's mask takes with it.
            let inked = |at: (f64, f64)| super::index_at(at, width, height).is_some_and(|i| labs[i][0] < super::DARK_LIGHTNESS);
            let grown = |by: f64| InkPiece { bbox: (largest.bbox.0 - by, largest.bbox.1 - by, largest.bbox.2 + by, largest.bbox.3 + by), ..*largest };
            if self.shape == Shape::Strung && [0.0, STRUNG_RIM_PX].iter().all(|&by| thread(&grown(by), &inked).is_none()) {
                return None;
            }
            (self.colour, self.width_px, self.strike_px, self.tick_px) = (core, wide.min(tall), wide.max(tall), wide.min(tall));
            (self.fill, self.taper) = (fill, largest.taper(index as u32 + 1, &label, width));
            return Some(self);
        }
        let dims = (sample.width as usize, sample.height as usize);
        let branches = skeleton::branches(&mask, dims.0, dims.1);
        let largest =
            of_shape(&branches, self.shape, f64::from(sample.width.max(sample.height))).into_iter().max_by(|a, b| a.strike_px.total_cmp(&b.strike_px));
        match largest {
            Some(largest) if self.shape == Shape::CircledCross || largest.strike_px + largest.width_px >= SAMPLE_SPAN * ink_span(&mask, dims, &largest) => {
                (self.colour, self.width_px, self.strike_px, self.tick_px) = (core, largest.width_px.max(1.0), largest.strike_px, largest.tick_px);
            }
            // No whole symbol on the skeleton: a tick symbol may be printed as a hairline.
            _ if self.shape == Shape::Tick => {
                (self.strike_px, self.tick_px) = hairline_sample(&strength, strongest, dims)?;
                (self.colour, self.width_px, self.hairline) = (core, 1.0, true);
            }
            _ => return None,
        }
        Some(self)
    }

    /// Whether it is a filled mark printed as a triangle on its base (a sinkhole), not a dot.
    pub fn printed_as_triangle(&self) -> bool {
        self.shape == Shape::Filled && self.taper < TRIANGLE_TAPER
    }

    /// How well a symbol seen on the map fits this one, 0–1 (0: not this symbol).
    fn fit(&self, seen: &Symbol) -> f64 {
        if self.strike_px <= 0.0 || self.hairline || seen.shape != self.shape {
            return 0.0; // not measured, not looked for on the skeleton, or not this shape
        }
        let ratio = |seen: f64, expected: f64| seen / expected.max(1.0);
        let (strike, tick, width) = (ratio(seen.strike_px, self.strike_px), ratio(seen.tick_px, self.tick_px), ratio(seen.width_px, self.width_px));
        // A circle's radius is its diameter's half: only a tick's length says more.
        let (strikes, tick_weight) = if self.shape == Shape::CircledCross { (0.7..=1.4, 0.0) } else { (0.6..=1.6, 0.5) };
        // A small symbol's stroke measures one to four pixels wide as the scan's blur and JPEG
        // take it: its width counts least.
        if !strikes.contains(&strike) || (tick_weight > 0.0 && !(0.5..=2.0).contains(&tick)) || !(1.0 / 3.0..=3.0).contains(&width) {
            return 0.0;
        }
        (-(strike.ln().abs() + tick_weight * tick.ln().abs() + 0.25 * width.ln().abs())).exp()
    }
}

/// Where an attitude entry's sample is measured: its box, four pixels wider on every side (a
/// point sample may stand below its words' row, under a heading such as "Strike and dip of beds").
pub fn sample_box(entry: &SymbolEntry) -> PixelBox {
    let (sample, margin) = (&entry.sample, super::SAMPLE_MARGIN);
    PixelBox { x0: sample.x0 - margin, y0: sample.y0 - margin, x1: sample.x1 + margin, y1: sample.y1 + margin }
}

/// A point symbol found on the map: an attitude or a filled mark.
#[derive(Debug, Clone)]
pub struct FoundPoint {
    /// The prompt (index into the finder's point prompts) it was given to.
    pub prompt: usize,
    /// Where its strike line and tick meet (a circled cross, a filled mark: its box's middle), in
    /// the scan's pixels.
    pub at: (f64, f64),
    /// Its tick's direction, degrees clockwise from the sheet's up (a strung dot: square to its
    /// line, 0–180°); `None` for a cross (vertical beds), a circled cross (horizontal beds) or a
    /// filled mark.
    pub dip_direction: Option<f64>,
    /// 0–1: how well its lengths and width (a mark: its size, squareness, fill and taper) agree
    /// with its symbol's.
    pub confidence: f64,
}

/// A symbol of an attitude's shape seen on a skeleton.
#[derive(Debug, Clone)]
struct Symbol {
    shape: Shape,
    /// The junction, in the skeleton's pixels.
    at: (f64, f64),
    strike_px: f64,
    tick_px: f64,
    width_px: f64,
    /// The dip side's direction square to the strike line (a unit vector, rows downwards): the
    /// strike is long enough to give the angle, the tick only says which side; for a cross, either;
    /// for a circled cross, none.
    tick: (f64, f64),
    /// Its arms, as indices into the branches (a circled cross: all its branches).
    arms: Vec<usize>,
}

/// A sample's ink as it reads on its paper.
struct SampleInk {
    /// Its pixels in CIELAB.
    labs: Vec<[f64; 3]>,
    /// Its paper: the median of its lightest pixels, in CIELAB.
    paper: [f64; 3],
    /// Each pixel's colour difference from the paper.
    strength: Vec<f64>,
    /// The largest of them.
    strongest: f64,
    /// The ink's colour: the median of the pixels within a tenth of the strongest.
    core: (u8, u8, u8),
}

impl SampleInk {
    /// `sample`'s ink, or `None` when nothing on it stands out from its paper by a line's colour
    /// difference.
    fn of(sample: &Rgb) -> Option<SampleInk> {
        let pixels: Vec<(u8, u8, u8)> = sample.pixels.chunks_exact(3).map(|p| (p[0], p[1], p[2])).collect();
        let labs: Vec<[f64; 3]> = pixels.iter().map(|&p| lab(p)).collect();
        let lightest = labs.iter().map(|l| l[0]).fold(0.0, f64::max);
        let paper = lab(crate::colour::median_colour(pixels.iter().zip(&labs).filter(|(_, l)| l[0] >= lightest - 8.0).map(|(p, _)| *p))?);
        let strength: Vec<f64> = labs.iter().map(|l| delta_e(*l, paper)).collect();
        let strongest = strength.iter().copied().fold(0.0, f64::max);
        if strongest < super::LINE_DELTA_E {
            return None;
        }
        let core = crate::colour::median_colour(pixels.iter().zip(&strength).filter(|(_, s)| **s >= 0.9 * strongest).map(|(p, _)| *p))?;
        Some(SampleInk { labs, paper, strength, strongest, core })
    }
}

/// The colour a point symbol's sample is printed in (as [`PointPrompt::calibrated`] reads it),
/// whether or not its shape shows.
pub fn sample_ink(sample: &Rgb) -> Option<(u8, u8, u8)> {
    SampleInk::of(sample).map(|ink| ink.core)
}

/// How far the sample's ink (`mask`, `width × height`) runs along `symbol`'s strike line from its
/// junction each way, across gaps of at most [`SPAN_GAP_PX`] (the few pixels a mask breaks a
/// one-pixel stroke by), end to end in pixels: its last inked pixels counted whole. Its points,
/// as the skeleton's, are pixel centres.
fn ink_span(mask: &[u8], (width, height): (usize, usize), symbol: &Symbol) -> f64 {
    let (across_x, across_y) = symbol.tick;
    let inked = |along: f64| {
        (-1..=1).any(|k| {
            let at = (symbol.at.0 - along * across_y + f64::from(k) * across_x, symbol.at.1 + along * across_x + f64::from(k) * across_y);
            super::index_at(at, width, height).is_some_and(|index| mask[index] != 0)
        })
    };
    let farthest = (width + height) as f64;
    let reach = |sign: f64| {
        let (mut step, mut last) = (0.0, 0.0);
        while step - last <= SPAN_GAP_PX && step < farthest {
            step += 0.5;
            if inked(sign * step) {
                last = step;
            }
        }
        last
    };
    reach(1.0) + reach(-1.0) + 1.0
}

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

/// The hairline attitudes of `prompts` (indices `group` into `all`; those printed as hairlines)
/// on a map's `lightness`, its pixels offset by `origin` in the scan: pieces of grey or black ink
/// darker than L* 55 that are straight (four fifths of their pixels within a pixel of their axis)
/// and 0.85–1.15 times a prompt's strike line long, whose axis prints about as dark as the
/// prompt's ink (at most L* 46) and 35 darker than the ground around it, the ground beyond either
/// end not (a piece of a longer line is), with ink beside the middle (three pixels on a side at
/// least: the tick, the dip's number) and a tick just beside it. The dip direction points to the
/// darker side there. Their pixels are cleared from `mask` (their colour's), so no line takes them
/// up.
pub fn hairline_attitudes(mask: &mut [u8], lightness: &Lightness, all: &[PointPrompt], group: &[usize], origin: (f64, f64)) -> Vec<FoundPoint> {
    let (width, height) = (lightness.width, lightness.height);
    let hairlines: Vec<usize> = group.iter().copied().filter(|&p| all[p].hairline && all[p].strike_px > 0.0).collect();
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
                .filter(|&p| super::index_at(p, width, height).is_some_and(|i| ink[i] != 0))
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
    clear_taken(mask, &label, &taken);
    found
}

/// The symbols of `shape` among `branches`, none larger than `largest_px` (a tick symbol's
/// longest arm, a circled cross's width); none for a filled mark or a strung dot, which are found
/// on the mask ([`filled_marks`]).
fn of_shape(branches: &[Branch], shape: Shape, largest_px: f64) -> Vec<Symbol> {
    match shape {
        Shape::Filled | Shape::Strung => Vec::new(),
        Shape::CircledCross => circled_crosses(branches, largest_px),
        Shape::Tick | Shape::Cross => symbols(branches, largest_px).into_iter().filter(|symbol| symbol.shape == shape).collect(),
    }
}

/// A grid cell wide enough that ends meeting at a junction ([`JUNCTION_PX`] plus
/// [`JUNCTION_WIDTHS`] of their stroke apart) are in the same or neighbouring cells.
fn junction_cell(branches: &[Branch]) -> f64 {
    branches.iter().map(|branch| JUNCTION_PX + JUNCTION_WIDTHS * branch.piece.width()).fold(8.0, f64::max)
}

/// The circled crosses among `branches`, none wider than `widest_px`: webs of branches joined
/// end to end and to nothing else (any free branch a spur under a third of the web's width), at
/// least [`CIRCLED_BRANCHES`] of them joined at both ends, nearly round, with the ends of at least
/// four meeting at the web's centre (the cross's bars).
fn circled_crosses(branches: &[Branch], widest_px: f64) -> Vec<Symbol> {
    let cell = junction_cell(branches);
    let key = |p: (f64, f64)| ((p.0 / cell).floor() as i64, (p.1 / cell).floor() as i64);
    let reach = |index: usize| JUNCTION_PX + JUNCTION_WIDTHS * branches[index].piece.width();
    let ends_of = |branch: &Branch| {
        let points = &branch.piece.points;
        [(points[0], branch.free.0), (points[points.len() - 1], branch.free.1)].into_iter().filter(|(_, free)| !free).map(|(end, _)| end)
    };
    // Every joined end (its branch, its point), and by cell the ends there.
    let ends: Vec<(usize, (f64, f64))> = branches.iter().enumerate().flat_map(|(index, branch)| ends_of(branch).map(move |end| (index, end))).collect();
    let mut joined_ends: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (k, (_, end)) in ends.iter().enumerate() {
        joined_ends.entry(key(*end)).or_default().push(k);
    }
    // Branches whose joined ends meet are one web (union–find).
    let mut parent: Vec<usize> = (0..branches.len()).collect();
    for (index, branch) in branches.iter().enumerate() {
        for end in ends_of(branch) {
            let (cx, cy) = key(end);
            for &k in (-1..=1).flat_map(|dx| (-1..=1).map(move |dy| (cx + dx, cy + dy))).flat_map(|c| joined_ends.get(&c).into_iter().flatten()) {
                let other = ends[k];
                if super::chains::distance(other.1, end) <= reach(index).max(reach(other.0)) {
                    let (a, b) = (super::chains::root(&mut parent, index), super::chains::root(&mut parent, other.0));
                    parent[a] = b;
                }
            }
        }
    }
    let mut webs: HashMap<usize, Vec<usize>> = HashMap::new();
    for index in 0..branches.len() {
        webs.entry(super::chains::root(&mut parent, index)).or_default().push(index);
    }
    let mut found: Vec<Symbol> = webs.into_values().filter_map(|web| circled_cross(branches, web, widest_px)).collect();
    found.sort_by(|a, b| a.at.1.total_cmp(&b.at.1).then(a.at.0.total_cmp(&b.at.0)));
    found
}

/// The circled cross a web of branches (`web`, indices into `branches`) draws, if it draws one
/// no wider than `widest_px` ([`circled_crosses`]).
fn circled_cross(branches: &[Branch], web: Vec<usize>, widest_px: f64) -> Option<Symbol> {
    let (closed, spurs): (Vec<usize>, Vec<usize>) = web.iter().partition(|&&index| branches[index].free == (false, false));
    if closed.len() < CIRCLED_BRANCHES {
        return None;
    }
    let points = || closed.iter().flat_map(|&index| branches[index].piece.points.iter().copied());
    let (x0, y0, x1, y1) =
        points().fold((f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY), |b, p| (b.0.min(p.0), b.1.min(p.1), b.2.max(p.0), b.3.max(p.1)));
    let (wide, tall) = (x1 - x0, y1 - y0);
    let across = wide.max(tall);
    if across > widest_px || wide.min(tall) < ROUND * across || spurs.iter().any(|&index| branches[index].piece.length() > across / 3.0) {
        return None;
    }
    let centre = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
    let near_centre = JUNCTION_PX + JUNCTION_WIDTHS * branches[closed[0]].piece.width() + 0.15 * across;
    let ends = closed.iter().flat_map(|&index| {
        let points = &branches[index].piece.points;
        [points[0], points[points.len() - 1]]
    });
    if ends.filter(|&end| super::chains::distance(end, centre) <= near_centre).count() < 4 {
        return None;
    }
    let mut widths: Vec<f64> = closed.iter().flat_map(|&index| branches[index].piece.widths.iter().copied()).collect();
    widths.sort_by(f64::total_cmp);
    let diameter = (wide + tall) / 2.0;
    Some(Symbol {
        shape: Shape::CircledCross,
        at: centre,
        strike_px: diameter,
        tick_px: diameter / 2.0,
        width_px: widths[widths.len() / 2],
        tick: (0.0, 0.0),
        arms: web,
    })
}

/// The symbols of an attitude's shape among `branches`: junctions with three or four arms no
/// longer than `longest_arm_px` and no other branch.
fn symbols(branches: &[Branch], longest_arm_px: f64) -> Vec<Symbol> {
    // Every branch end that is not free, by cell, to tell a junction of arms alone from one on a line.
    let cell = junction_cell(branches);
    let key = |p: (f64, f64)| ((p.0 / cell).floor() as i64, (p.1 / cell).floor() as i64);
    let mut joined_ends: HashMap<(i64, i64), Vec<(f64, f64)>> = HashMap::new();
    let mut inner: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    let mut arms: Vec<(usize, Spur)> = Vec::new();
    for (index, branch) in branches.iter().enumerate() {
        let points = &branch.piece.points;
        // A thick stroke's junction thins to two nodes a stroke's width apart: the piece between
        // them is inside the junction, not a branch leaving it.
        if branch.free == (false, false) && branch.piece.length() <= JUNCTION_WIDTHS * branch.piece.width() {
            inner.entry(key(points[0])).or_default().push(index);
            continue;
        }
        for (end, free) in [(points[0], branch.free.0), (points[points.len() - 1], branch.free.1)] {
            if !free {
                joined_ends.entry(key(end)).or_default().push(end);
            }
        }
        if let Some(arm) = branch.arm().filter(|_| branch.piece.length() <= longest_arm_px) {
            arms.push((index, arm));
        }
    }
    let mut by_cell: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (k, (_, arm)) in arms.iter().enumerate() {
        by_cell.entry(key(arm.base)).or_default().push(k);
    }
    let mut taken = vec![false; arms.len()];
    let mut found = Vec::new();
    for k in 0..arms.len() {
        if taken[k] {
            continue;
        }
        let (index, arm) = arms[k];
        let reach = JUNCTION_PX + JUNCTION_WIDTHS * branches[index].piece.width();
        let near = |p: (f64, f64)| {
            let (cx, cy) = key(p);
            (-1..=1).flat_map(move |dx| (-1..=1).map(move |dy| (cx + dx, cy + dy)))
        };
        let group: Vec<usize> = near(arm.base)
            .flat_map(|c| by_cell.get(&c).into_iter().flatten().copied())
            .filter(|&j| !taken[j] && super::chains::distance(arms[j].1.base, arm.base) <= reach)
            .collect();
        let ends =
            near(arm.base).flat_map(|c| joined_ends.get(&c).into_iter().flatten().copied()).filter(|&e| super::chains::distance(e, arm.base) <= reach).count();
        group.iter().for_each(|&j| taken[j] = true);
        // Every joined end at the junction is one of its arms' bases: nothing else meets there.
        if ends != group.len() {
            continue;
        }
        let spurs: Vec<(usize, Spur)> = group.iter().map(|&j| arms[j]).collect();
        if let Some(mut symbol) = shaped(branches, &spurs) {
            // The junction's inner piece goes with it, so no line takes it for a mark.
            let inside = near(arm.base).flat_map(|c| inner.get(&c).into_iter().flatten().copied());
            symbol.arms.extend(inside.filter(|&j| super::chains::distance(branches[j].piece.points[0], arm.base) <= reach));
            found.push(symbol);
        }
    }
    found
}

/// The attitude that arms leaving one junction draw, if they draw one.
fn shaped(branches: &[Branch], arms: &[(usize, Spur)]) -> Option<Symbol> {
    let length = |spur: &Spur| super::chains::distance(spur.base, spur.tip);
    let direction = |spur: &Spur| {
        let l = length(spur).max(1e-9);
        ((spur.tip.0 - spur.base.0) / l, (spur.tip.1 - spur.base.1) / l)
    };
    let cos = |a: (f64, f64), b: (f64, f64)| a.0 * b.0 + a.1 * b.1;
    // The strike: the pair of arms pointing most nearly apart.
    let mut pairs = Vec::new();
    for i in 0..arms.len() {
        for j in i + 1..arms.len() {
            pairs.push((i, j, cos(direction(&arms[i].1), direction(&arms[j].1))));
        }
    }
    let straight = STRAIGHT_DEGREES.to_radians().cos();
    let square = (90.0 - SQUARE_DEGREES).to_radians().cos();
    let (shape, strike, ticks) = match arms.len() {
        3 => {
            let &(i, j, c) = pairs.iter().min_by(|a, b| a.2.total_cmp(&b.2))?;
            (c <= straight).then_some((Shape::Tick, (i, j), vec![3 - i - j]))?
        }
        4 => {
            // Two straight pairs: the longer is the strike.
            let straight_pairs: Vec<(usize, usize)> = pairs.iter().filter(|p| p.2 <= straight).map(|p| (p.0, p.1)).collect();
            let [a, b] = straight_pairs[..] else { return None };
            let span = |(i, j): (usize, usize)| length(&arms[i].1) + length(&arms[j].1);
            let (strike, ticks) = if span(a) >= span(b) { (a, b) } else { (b, a) };
            (Shape::Cross, strike, vec![ticks.0, ticks.1])
        }
        _ => return None,
    };
    let (a, b) = (length(&arms[strike.0].1), length(&arms[strike.1].1));
    if a.min(b) < BALANCE * a.max(b) {
        return None;
    }
    let axis = direction(&arms[strike.0].1);
    if ticks.iter().any(|&t| cos(direction(&arms[t].1), axis).abs() > square) {
        return None;
    }
    let tick_px = ticks.iter().map(|&t| length(&arms[t].1)).sum::<f64>() / ticks.len() as f64;
    if tick_px > 0.8 * (a + b) {
        return None; // a letter T: its stem is longer than its bar
    }
    let mut widths: Vec<f64> = arms.iter().flat_map(|(index, _)| branches[*index].piece.widths.iter().copied()).collect();
    widths.sort_by(f64::total_cmp);
    let bases = arms.iter().map(|(_, arm)| arm.base);
    let at = bases.fold((0.0, 0.0), |sum, p| (sum.0 + p.0 / arms.len() as f64, sum.1 + p.1 / arms.len() as f64));
    Some(Symbol {
        shape,
        at,
        strike_px: a + b,
        tick_px,
        width_px: widths[widths.len() / 2],
        tick: square_to_strike(arms[strike.0].1.tip, arms[strike.1].1.tip, direction(&arms[ticks[0]].1)),
        arms: arms.iter().map(|(index, _)| *index).collect(),
    })
}

/// The unit vector square to the strike line from `a` to `b` on the side `tick` points to.
fn square_to_strike(a: (f64, f64), b: (f64, f64), tick: (f64, f64)) -> (f64, f64) {
    let length = super::chains::distance(a, b).max(1e-9);
    let (nx, ny) = (-(b.1 - a.1) / length, (b.0 - a.0) / length);
    if nx * tick.0 + ny * tick.1 >= 0.0 { (nx, ny) } else { (-nx, -ny) }
}

/// The attitude symbols of `prompts` (indices `group` into `all`, all drawn in one colour) among
/// `branches` (that colour's skeleton, its pixels offset by `origin` in the scan), and the branches
/// they are drawn with.
pub fn attitudes(branches: &[Branch], all: &[PointPrompt], group: &[usize], origin: (f64, f64)) -> (Vec<FoundPoint>, Vec<usize>) {
    let largest = |circled: bool| {
        let of = group.iter().filter(|&&p| !all[p].shape.is_mark() && !all[p].hairline && (all[p].shape == Shape::CircledCross) == circled);
        // A tick symbol's arms are shorter than its strike line; a circle is as wide as its bar.
        of.map(|&p| if circled { 1.4 * all[p].strike_px } else { 0.8 * all[p].strike_px }).fold(0.0, f64::max)
    };
    let mut seen = symbols(branches, largest(false));
    if largest(true) > 0.0 {
        seen.extend(circled_crosses(branches, largest(true)));
    }
    let mut found = Vec::new();
    let mut used = Vec::new();
    for symbol in seen {
        // A branch is one symbol's at most.
        if symbol.arms.iter().any(|arm| used.contains(arm)) {
            continue;
        }
        let best = group.iter().map(|&p| (p, all[p].fit(&symbol))).max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((prompt, fit)) = best.filter(|(_, fit)| *fit >= 0.2) else { continue };
        let confidence = if all[prompt].entry.is_none() { super::LOOK_CONFIDENCE * fit } else { fit };
        let dip_direction = (symbol.shape == Shape::Tick).then(|| bearing(symbol.tick));
        found.push(FoundPoint {
            prompt,
            at: (symbol.at.0 + origin.0, symbol.at.1 + origin.1),
            dip_direction,
            confidence: (confidence * 1000.0).round() / 1000.0,
        });
        used.extend(symbol.arms);
    }
    (found, used)
}

/// A piece of ink: 8-connected pixels of a mask.
#[derive(Debug, Clone, Copy)]
struct InkPiece {
    /// Its box, `(x0, y0, x1, y1)` in the mask's pixels (`x1`, `y1` past its last pixels).
    bbox: (f64, f64, f64, f64),
    /// How many pixels it has.
    pixels: usize,
}

impl InkPiece {
    /// Its box's width and height.
    fn sides(&self) -> (f64, f64) {
        (self.bbox.2 - self.bbox.0, self.bbox.3 - self.bbox.1)
    }

    /// The share of its box it fills.
    fn fill(&self) -> f64 {
        let (wide, tall) = self.sides();
        self.pixels as f64 / (wide * tall)
    }

    /// Its box's wider side.
    fn size(&self) -> f64 {
        let (wide, tall) = self.sides();
        wide.max(tall)
    }

    /// Its box's middle.
    fn centre(&self) -> (f64, f64) {
        ((self.bbox.0 + self.bbox.2) / 2.0, (self.bbox.1 + self.bbox.3) / 2.0)
    }

    /// Its ink in the top third of its box's rows over that in the bottom third
    /// ([`PointPrompt::taper`]), its pixels being those labelled `label` in `labels` (`width` wide).
    fn taper(&self, label: u32, labels: &[u32], width: usize) -> f64 {
        let third = ((self.bbox.3 - self.bbox.1) / 3.0).ceil() as usize;
        let (x0, x1, y0, y1) = (self.bbox.0 as usize, self.bbox.2 as usize, self.bbox.1 as usize, self.bbox.3 as usize);
        let ink = |rows: std::ops::Range<usize>| rows.flat_map(|y| (x0..x1).map(move |x| y * width + x)).filter(|&i| labels[i] == label).count();
        ink(y0..y0 + third) as f64 / ink(y1 - third..y1).max(1) as f64
    }
}

/// Clears from `mask` the pixels of the pieces (`label`, per pixel its piece's index + 1, as
/// [`ink_pieces`] gives) that are `taken`.
fn clear_taken(mask: &mut [u8], label: &[u32], taken: &[bool]) {
    for (m, &l) in mask.iter_mut().zip(label) {
        if l != 0 && taken[l as usize - 1] {
            *m = 0;
        }
    }
}

/// The pieces of ink of a `width × height` mask (nonzero pixels, 8-connected): per pixel its
/// piece's index + 1 (0 off the ink), and the pieces.
fn ink_pieces(mask: &[u8], width: usize, height: usize) -> (Vec<u32>, Vec<InkPiece>) {
    let mut label = vec![0_u32; mask.len()];
    let mut pieces: Vec<InkPiece> = Vec::new();
    let mut queue = Vec::new();
    for start in 0..mask.len() {
        if mask[start] == 0 || label[start] != 0 {
            continue;
        }
        let (sx, sy) = ((start % width) as f64, (start / width) as f64);
        let mut piece = InkPiece { bbox: (sx, sy, sx + 1.0, sy + 1.0), pixels: 0 };
        let id = pieces.len() as u32 + 1;
        label[start] = id;
        queue.push(start);
        while let Some(i) = queue.pop() {
            let (x, y) = ((i % width) as isize, (i / width) as isize);
            let b = &mut piece.bbox;
            (b.0, b.1, b.2, b.3) = (b.0.min(x as f64), b.1.min(y as f64), b.2.max(x as f64 + 1.0), b.3.max(y as f64 + 1.0));
            piece.pixels += 1;
            for (dx, dy) in skeleton::AROUND {
                let (nx, ny) = (x + dx, y + dy);
                if nx >= 0 && ny >= 0 && (nx as usize) < width && (ny as usize) < height {
                    let n = ny as usize * width + nx as usize;
                    if mask[n] != 0 && label[n] == 0 {
                        label[n] = id;
                        queue.push(n);
                    }
                }
            }
        }
        pieces.push(piece);
    }
    (label, pieces)
}

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
fn thread(piece: &InkPiece, dark: &dyn Fn((f64, f64)) -> bool) -> Option<f64> {
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
                let d = super::chains::distance(at, centre);
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

/// The filled marks of `prompts` (indices `group` into `all`, all drawn in one colour) on `mask`
/// (that colour's `width × height` stroke pixels, offset by `origin` in the scan): each piece of
/// ink whose wider side is 0.6–1.6 times a mark's sample's, as square as it within a third,
/// filling its box at least 0.7 times as much (and 0.45 of it), its top and bottom rows as the
/// sample's (a dot, not a triangle), given to the mark it fits best: a strung dot when a `dark`
/// line runs through it (its dip direction square to that line), else a filled mark;
/// when it is inked at its middle, on its own (clear of the colour's other ink by half its size)
/// and not one of a row of its like (a dotted line). The marks' pixels are cleared from `mask`, so
/// no line takes them up.
pub fn filled_marks(
    mask: &mut [u8],
    (width, height): (usize, usize),
    dark: &dyn Fn((f64, f64)) -> bool,
    all: &[PointPrompt],
    group: &[usize],
    origin: (f64, f64),
) -> Vec<FoundPoint> {
    let marks: Vec<usize> = group.iter().copied().filter(|&p| all[p].shape.is_mark() && all[p].strike_px > 0.0).collect();
    if marks.is_empty() {
        return Vec::new();
    }
    let (least, largest) = marks
        .iter()
        .map(|&p| all[p].strike_px)
        .fold((f64::INFINITY, 0.0_f64), |(least, largest), size| (least.min(FILLED_SIZE.start() * size), largest.max(FILLED_SIZE.end() * size)));
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
        let fit = |p: usize| {
            let prompt = &all[p];
            let size = wide.max(tall) / prompt.strike_px;
            let square = (wide.min(tall) / wide.max(tall)) / (prompt.tick_px / prompt.strike_px);
            let full = piece.fill() / prompt.fill.min(DISC_FILL);
            if !FILLED_SIZE.contains(&size) || !(0.67..=1.5).contains(&square) || full < FILLED_FULL {
                return 0.0;
            }
            let taper = (taper.max(0.1) / prompt.taper.max(0.1)).ln().abs();
            (-(size.ln().abs() + square.ln().abs() + full.min(1.0).ln().abs() + taper)).exp()
        };
        let fits: Vec<(usize, f64)> = marks.iter().map(|&p| (p, fit(p))).filter(|(_, fit)| *fit >= 0.2).collect();
        if fits.is_empty() {
            continue;
        }
        // A dot with a line through it is a strung dot's, one without a filled mark's.
        let line = thread(piece, dark);
        let Some(&(prompt, fit)) = fits.iter().filter(|&&(p, _)| (all[p].shape == Shape::Strung) == line.is_some()).max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        // A filled mark is inked at its middle (a ring, a letter C is not).
        let centre = piece.centre();
        if label[centre.1 as usize * width + centre.0 as usize] != k as u32 + 1 || !alone(k, &pieces, &label, (width, height)) || in_a_row(k, &pieces, &near) {
            continue;
        }
        taken[k] = true;
        // A vertical joint dips square to its strike, either way: given as the one 0–180° from up.
        let dip_direction = line.map(|angle| bearing((-angle.sin(), angle.cos())) % 180.0);
        found.push(FoundPoint { prompt, at: (centre.0 + origin.0, centre.1 + origin.1), dip_direction, confidence: (fit * 1000.0).round() / 1000.0 });
    }
    clear_taken(mask, &label, &taken);
    found
}

/// Where the number printed beside an attitude is, in `window` (the scan around it; `at`, its
/// junction, in the window's pixels): the ink of `prompt`'s colour as the symbol is printed there
/// (its darkest pixels at its junction, when within ΔE 30 of `prompt`'s), in pieces apart from the symbol's own, digit-sized (shorter than the strike line, taller than its
/// stroke), the nearest one and those beside it on its line of type, within twice the strike
/// line's length. `None` when no such ink is there.
pub fn number_box(window: &Rgb, at: (f64, f64), prompt: &PointPrompt) -> Option<PixelBox> {
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
    let ink = printed.filter(|&ink| delta_e(lab(ink), lab(prompt.colour)) <= super::LINE_DELTA_E).unwrap_or(prompt.colour);
    let mask = super::stroke_pixels(&labs, lab(ink), ground, width);
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

/// The boxes a hairline attitude's number may stand in, nearest first, in `window` (the scan
/// around it; `at`, its junction, in the window's pixels; `dip_direction`, degrees clockwise from
/// the sheet's up): where [`number_box`] finds none it can read, a hairline's number printed in
/// grey is often lighter than its ink or broken by it. Here the number's ink is any grey or black
/// 20 L* darker than its ground (the window's lightness closed over 7 × 7 pixels), in digit-sized
/// pieces apart from the symbol's own (its pieces at its junction, or its strike line and tick
/// drawn square to and along `dip_direction`, about as long as its sample's), centred on its tick's side
/// (beyond a strike line's ink) and within its strike line's length, grouped on their lines of
/// type; at most three, the nearest.
pub fn hairline_number_boxes(window: &Rgb, at: (f64, f64), prompt: &PointPrompt, dip_direction: f64) -> Vec<PixelBox> {
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
        .filter_map(|near| super::index_at(near, width, height))
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

/// The number `first` (a digit's box) is part of: grown by each of the other `digits` on its line
/// of type (overlapping half the shorter's height) within 0.6 of the grown box's height of it.
fn whole_number(first: (f64, f64, f64, f64), digits: &[&(f64, f64, f64, f64)]) -> (f64, f64, f64, f64) {
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
fn gap_to(b: &(f64, f64, f64, f64), point: (f64, f64)) -> f64 {
    (b.0 - point.0).max(point.0 - b.2).max(0.0).hypot((b.1 - point.1).max(point.1 - b.3).max(0.0))
}

/// A number's box with a quarter of its height around it, within a `width × height` window.
fn padded(number: (f64, f64, f64, f64), (width, height): (usize, usize)) -> PixelBox {
    let pad = 0.25 * (number.3 - number.1);
    PixelBox { x0: (number.0 - pad).max(0.0), y0: (number.1 - pad).max(0.0), x1: (number.2 + pad).min(width as f64), y1: (number.3 + pad).min(height as f64) }
}

/// A direction (rows downwards) in degrees clockwise from the sheet's up, 0–360.
fn bearing((dx, dy): (f64, f64)) -> f64 {
    let degrees = dx.atan2(-dy).to_degrees().rem_euclid(360.0);
    (degrees * 10.0).round() / 10.0 % 360.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `width × height` mask with each segment `(x0, y0, x1, y1)` drawn `stroke` pixels wide.
    fn drawn(width: usize, height: usize, segments: &[(f64, f64, f64, f64)], stroke: f64) -> Vec<u8> {
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
    fn attitude(x: f64, y: f64, towards: f64, strike: f64, tick: f64) -> [(f64, f64, f64, f64); 2] {
        let (dx, dy) = (towards.to_radians().sin(), -towards.to_radians().cos());
        let (sx, sy) = (-dy * strike / 2.0, dx * strike / 2.0);
        [(x - sx, y - sy, x + sx, y + sy), (x, y, x + dx * tick, y + dy * tick)]
    }

    fn prompt(shape: Shape) -> PointPrompt {
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
            hairline: false,
        }
    }

    #[test]
    fn an_attitude_is_found_with_its_dip_direction_and_a_letter_t_or_a_crossing_line_is_not() {
        let mut segments = Vec::new();
        for (k, towards) in [0.0, 35.0, 90.0, 160.0, 200.0, 300.0].into_iter().enumerate() {
            segments.extend(attitude(30.0 + 50.0 * k as f64, 30.0, towards, 28.0, 9.0));
        }
        // A letter T (its stem longer than its bar) and a line crossing a strike line.
        segments.extend([(20.0, 80.0, 34.0, 80.0), (27.0, 80.0, 27.0, 97.0)]);
        segments.extend(attitude(100.0, 90.0, 90.0, 28.0, 9.0));
        segments.push((60.0, 90.0, 140.0, 90.0));
        let (w, h) = (340, 120);
        let mask = drawn(w, h, &segments, 3.0);
        let branches = skeleton::branches(&mask, w, h);
        let (found, used) = attitudes(&branches, &[prompt(Shape::Tick)], &[0], (1000.0, 2000.0));
        assert_eq!(found.len(), 6, "{found:?}");
        assert_eq!(used.len(), 18);
        for (k, towards) in [0.0, 35.0, 90.0, 160.0, 200.0, 300.0].into_iter().enumerate() {
            let point = found.iter().find(|p| (p.at.0 - 1030.0 - 50.0 * k as f64).abs() < 3.0).unwrap_or_else(|| panic!("{k}: {found:?}"));
            assert!((point.at.1 - 2030.0).abs() < 3.0, "{point:?}");
            let off = (point.dip_direction.unwrap() - towards + 540.0).rem_euclid(360.0) - 180.0;
            assert!(off.abs() <= 6.0, "{towards}: {point:?}");
            assert!(point.confidence > 0.5, "{point:?}");
        }
    }

    #[test]
    fn without_an_explanation_attitudes_are_measured_on_the_map_when_enough_of_them_agree() {
        let mut segments = Vec::new();
        for (k, towards) in [10.0, 80.0, 150.0, 220.0, 290.0, 340.0].into_iter().enumerate() {
            segments.extend(attitude(30.0 + 50.0 * k as f64, 30.0, towards, 28.0, 9.0));
        }
        let mask = drawn(340, 60, &segments, 3.0);
        let branches = skeleton::branches(&mask, 340, 60);
        let (mut looked, mut few) = (PointPrompt::by_look().remove(0), PointPrompt::by_look().remove(0));
        looked.measure_on_map(&branches, 3.0);
        assert!((looked.strike_px - 28.0).abs() <= 4.0 && (looked.tick_px - 9.0).abs() <= 3.0, "{looked:?}");
        let (found, _) = attitudes(&branches, &[looked], &[0], (0.0, 0.0));
        assert_eq!(found.len(), 6, "{found:?}");
        assert!(found.iter().all(|p| p.confidence <= super::super::LOOK_CONFIDENCE), "{found:?}");

        let branches = skeleton::branches(&drawn(340, 60, &segments[..8], 3.0), 340, 60);
        few.measure_on_map(&branches, 3.0);
        assert_eq!(few.strike_px, 0.0, "four symbols are too few to say what an attitude looks like");
        assert!(attitudes(&branches, &[few], &[0], (0.0, 0.0)).0.is_empty());
    }

    #[test]
    fn a_thick_attitude_on_a_large_scan_is_found_as_a_thin_one() {
        let mut segments = Vec::new();
        for (k, towards) in [20.0, 135.0, 250.0].into_iter().enumerate() {
            segments.extend(attitude(70.0 + 130.0 * k as f64, 70.0, towards, 100.0, 32.0));
        }
        let mask = drawn(420, 140, &segments, 10.0);
        let branches = skeleton::branches(&mask, 420, 140);

        let thick = PointPrompt { width_px: 10.0, strike_px: 90.0, tick_px: 26.0, ..prompt(Shape::Tick) };
        let (mut found, _) = attitudes(&branches, &[thick], &[0], (0.0, 0.0));
        assert_eq!(found.len(), 3, "{found:?}");
        found.sort_by(|a, b| a.at.0.total_cmp(&b.at.0));
        for (point, towards) in found.iter().zip([20.0, 135.0, 250.0]) {
            assert!((point.dip_direction.unwrap() - towards).abs() <= 3.0, "{towards}: {point:?}");
        }
    }

    #[test]
    fn vertical_beds_are_a_cross_without_a_dip_direction() {
        let [strike, tick] = attitude(40.0, 40.0, 60.0, 30.0, 9.0);
        let (dx, dy) = (tick.2 - tick.0, tick.3 - tick.1);
        let mask = drawn(80, 80, &[strike, tick, (40.0, 40.0, 40.0 - dx, 40.0 - dy)], 3.0);
        let branches = skeleton::branches(&mask, 80, 80);
        let (found, _) = attitudes(&branches, &[prompt(Shape::Tick), PointPrompt { strike_px: 28.0, ..prompt(Shape::Cross) }], &[0, 1], (0.0, 0.0));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].prompt, found[0].dip_direction), (1, None));
    }

    /// A circle of `radius` at `(x, y)` as 32 segments, and a cross in it when `crossed`.
    fn circle(x: f64, y: f64, radius: f64, crossed: bool) -> Vec<(f64, f64, f64, f64)> {
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

    #[test]
    fn horizontal_beds_are_a_circled_cross_and_a_ring_a_letter_or_a_cross_on_a_line_is_not() {
        let mut segments = Vec::new();
        for x in [30.0, 90.0, 150.0] {
            segments.extend(circle(x, 30.0, 10.0, true));
        }
        segments.extend(circle(210.0, 30.0, 10.0, false)); // a ring (an O)
        segments.extend(circle(270.0, 30.0, 20.0, true)); // twice as large
        segments.extend(circle(330.0, 30.0, 10.0, true)); // on a line
        segments.push((300.0, 40.0, 380.0, 40.0));
        let mask = drawn(400, 70, &segments, 3.0);
        let branches = skeleton::branches(&mask, 400, 70);
        let circled = PointPrompt { ta1_type: "horizontal bedding", strike_px: 20.0, tick_px: 10.0, ..prompt(Shape::CircledCross) };
        let (found, used) = attitudes(&branches, &[prompt(Shape::Tick), circled], &[0, 1], (100.0, 0.0));
        let mut at: Vec<(f64, f64)> = found.iter().map(|p| p.at).collect();
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(at.len(), 3, "{found:?}");
        for (point, x) in at.iter().zip([130.0, 190.0, 250.0]) {
            assert!((point.0 - x).abs() < 2.0 && (point.1 - 30.0).abs() < 2.0, "{found:?}");
        }
        assert!(found.iter().all(|p| p.prompt == 1 && p.dip_direction.is_none() && p.confidence > 0.5), "{found:?}");
        assert!(used.len() >= 18, "each circled cross's branches go with it: {used:?}");

        // Without an explanation, three alike are enough to measure them on the map.
        let mut looked = PointPrompt::by_look().remove(1);
        looked.measure_on_map(&branches, 3.0);
        assert!((looked.strike_px - 20.0).abs() <= 2.0, "{looked:?}");
        let (found, _) = attitudes(&branches, &[looked], &[0], (0.0, 0.0));
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found.iter().all(|p| p.confidence <= super::super::LOOK_CONFIDENCE), "{found:?}");

        // Measured on its own sample, as the explanation draws it.
        let sample = drawn(40, 40, &circle(20.0, 20.0, 10.0, true), 3.0);
        let sample_branches = skeleton::branches(&sample, 40, 40);
        let seen = of_shape(&sample_branches, Shape::CircledCross, 40.0);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!((seen[0].strike_px - 20.0).abs() <= 2.0, "{seen:?}");
        assert_eq!(ta1_point_type("horizontal bedding"), Some(("horizontal bedding", Shape::CircledCross)));
    }

    /// A `width × height` mask with a disc of `radius` at each of `discs` and a triangle on its
    /// base of `side` at each of `triangles`.
    fn marked(width: usize, height: usize, discs: &[(f64, f64)], radius: f64, triangles: &[(f64, f64)], side: f64) -> Vec<u8> {
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

    fn mark(symbol: &str, strike_px: f64, fill: f64, taper: f64) -> PointPrompt {
        PointPrompt { symbol: symbol.to_owned(), ta1_type: "collapse structure", strike_px, tick_px: strike_px, fill, taper, ..prompt(Shape::Filled) }
    }

    #[test]
    fn a_filled_mark_on_its_own_is_found_and_one_strung_on_a_line_or_of_another_size_or_shape_is_not() {
        let (dot, triangle) = (mark("collapse structure", 6.0, 0.78, 1.0), mark("sinkhole", 8.0, 0.5, 0.35));
        let discs = [(20.0, 20.0), (60.0, 20.0), (100.0, 22.0), (140.0, 20.0), (180.0, 20.0)];
        let mut mask = marked(260, 60, &discs, 3.0, &[(60.0, 46.0)], 8.0);
        // A disc twice as large as the triangle, and a ring (a letter O): neither is a mark.
        for (k, m) in marked(260, 60, &[(220.0, 20.0)], 8.0, &[], 0.0).into_iter().enumerate() {
            mask[k] |= m;
        }
        for (k, m) in marked(260, 60, &[(220.0, 48.0)], 5.0, &[], 0.0).into_iter().enumerate() {
            let inside = marked(260, 60, &[(220.0, 48.0)], 3.5, &[], 0.0)[k];
            mask[k] |= m & (1 - inside);
        }
        // (A triangle's place is its box's middle.) The dot at x 180 is also joined to a line of its own ink, and the one at x 140 has a dark
        // line (of another colour) running through it, as a joint's dot has.
        for x in 180..200 {
            mask[20 * 260 + x] = 1;
        }
        let dark = |(x, y): (f64, f64)| (y - 20.0).abs() < 1.0 && (125.0..=155.0).contains(&x);
        let mut found = filled_marks(&mut mask, (260, 60), &dark, &[dot.clone(), triangle.clone()], &[0, 1], (1000.0, 0.0));
        found.sort_by(|a, b| a.at.0.total_cmp(&b.at.0).then(a.at.1.total_cmp(&b.at.1)));
        let at: Vec<(usize, (f64, f64))> = found.iter().map(|p| (p.prompt, p.at)).collect();
        assert_eq!(at, [(0, (1020.0, 20.0)), (0, (1060.0, 20.0)), (1, (1060.0, 46.5)), (0, (1100.0, 22.0))], "{found:?}");
        assert!(found.iter().all(|p| p.dip_direction.is_none() && p.confidence > 0.4), "{found:?}");
        assert_eq!(mask[20 * 260 + 20], 0, "a mark's ink is taken from the mask");
        assert_eq!(mask[20 * 260 + 140], 1, "the strung dot's is not");

        // A dot a pixel from a digit-sized bar, and a dotted line of dots the mark's size, are no
        // marks; a dot on a dark unit (dark all round) is one.
        let row: Vec<(f64, f64)> = (0..5).map(|k| (60.0 + 15.0 * k as f64, 40.0)).collect();
        let mut mask = marked(200, 60, &[&[(20.0, 20.0), (160.0, 20.0)][..], &row].concat(), 3.0, &[], 0.0);
        for y in 15..26 {
            mask[y * 200 + 25] = 1;
        }
        let dark_unit = |(x, _): (f64, f64)| x >= 140.0;
        let found = filled_marks(&mut mask, (200, 60), &dark_unit, &[dot, triangle], &[0, 1], (0.0, 0.0));
        let at: Vec<(f64, f64)> = found.iter().map(|p| p.at).collect();
        assert_eq!(at, [(160.0, 20.0)], "{found:?}");
    }

    #[test]
    fn a_filled_mark_is_measured_on_its_sample_and_a_speck_or_a_stroke_is_none() {
        let sample = |mask: Vec<u8>, width: u32| Rgb {
            width,
            height: 20,
            pixels: mask.iter().flat_map(|&m| if m != 0 { [20, 20, 20] } else { [250, 250, 250] }).collect(),
        };
        let collapse = || PointPrompt { entry: Some(3), ..mark("collapse structure", 0.0, 0.0, 0.0) };
        let measured = collapse().calibrated(&sample(marked(20, 20, &[(10.0, 10.0)], 3.0, &[], 0.0), 20)).expect("a dot");
        assert!((measured.strike_px - 6.0).abs() <= 2.0 && measured.fill >= 0.7 && (0.7..=1.4).contains(&measured.taper), "{measured:?}");
        let triangle = collapse().calibrated(&sample(marked(20, 20, &[], 0.0, &[(10.0, 10.0)], 9.0), 20)).expect("a triangle");
        assert!(triangle.taper < 0.6 && triangle.fill < measured.fill, "{triangle:?}");
        assert!(collapse().calibrated(&sample(marked(20, 20, &[(10.0, 10.0)], 1.0, &[], 0.0), 20)).is_none(), "a speck");
        assert!(collapse().calibrated(&sample(drawn(40, 20, &[(5.0, 10.0, 35.0, 10.0)], 3.0), 40)).is_none(), "a stroke");
        assert_eq!(ta1_point_type("breccia pipe"), Some(("breccia pipe", Shape::Filled)));
        assert_eq!(ta1_point_type("sample locality"), Some(("sample location", Shape::Filled)));
    }

    #[test]
    fn a_tick_measured_on_a_piece_of_its_samples_broken_strike_line_is_none() {
        let sample = |segments: &[(f64, f64, f64, f64)]| Rgb {
            width: 60,
            height: 30,
            pixels: drawn(60, 30, segments, 2.0).iter().flat_map(|&m| if m != 0 { [20, 20, 20] } else { [250, 250, 250] }).collect(),
        };
        let tick = (20.0, 15.0, 20.0, 9.0);
        let whole = prompt(Shape::Tick).calibrated(&sample(&[(10.0, 15.0, 36.0, 15.0), tick])).expect("a whole strike line");
        assert!((whole.strike_px - 26.0).abs() <= 3.0, "{whole:?}");
        // Its strike line broken by a pixel's gap: the piece with the tick is a symbol of its own,
        // but no measure of it.
        let piece = [(14.0, 15.0, 26.0, 15.0), tick];
        assert!(prompt(Shape::Tick).calibrated(&sample(&piece)).is_some(), "a piece on its own");
        assert!(prompt(Shape::Tick).calibrated(&sample(&[piece[0], piece[1], (29.5, 15.0, 50.0, 15.0)])).is_none());
        // Ink in line with it past a wider gap (its dip, a word) is not its strike line.
        let beside = prompt(Shape::Tick).calibrated(&sample(&[(10.0, 15.0, 36.0, 15.0), (41.0, 15.0, 55.0, 15.0), tick])).expect("a whole strike line");
        assert!((beside.strike_px - whole.strike_px).abs() < 0.5, "{beside:?}");
    }

    /// Whether (x, y) is within a pixel of a line `reach` long each way through `centre` at
    /// `bearing` (degrees clockwise from up).
    fn on_line((x, y): (f64, f64), centre: (f64, f64), bearing: f64, reach: f64) -> bool {
        let (dx, dy) = (bearing.to_radians().sin(), -bearing.to_radians().cos());
        let (along, across) = ((x - centre.0) * dx + (y - centre.1) * dy, (x - centre.0) * dy - (y - centre.1) * dx);
        along.abs() <= reach && across.abs() <= 1.0
    }

    #[test]
    fn a_dot_with_a_dark_line_through_it_is_a_vertical_joint_dipping_square_to_the_line_and_one_without_is_a_filled_mark() {
        let joint = joint_prompt();
        let collapse = mark("collapse structure", 6.0, 0.78, 1.0);
        let centres = [(20.0, 20.0), (60.0, 20.0), (100.0, 20.0), (140.0, 20.0), (180.0, 20.0)];
        let mut mask = marked(210, 40, &centres, 3.0, &[], 0.0);
        // Lines striking 30°, 90° and 163° through the first three dots, dark but of another ink;
        // through the fifth, a line striking 20° crossing a shorter one striking 110°.
        let lines = [(0, 30.0, 12.0), (1, 90.0, 12.0), (2, 163.0, 12.0), (4, 20.0, 12.0), (4, 110.0, 7.0)];
        let dark = |at: (f64, f64)| lines.iter().any(|&(k, strike, reach)| on_line(at, centres[k], strike, reach));
        let mut found = filled_marks(&mut mask, (210, 40), &dark, &[collapse, joint], &[0, 1], (0.0, 0.0));
        found.sort_by(|a, b| a.at.0.total_cmp(&b.at.0));
        let kinds: Vec<(usize, (f64, f64))> = found.iter().map(|p| (p.prompt, p.at)).collect();
        assert_eq!(kinds, [(1, (20.0, 20.0)), (1, (60.0, 20.0)), (1, (100.0, 20.0)), (0, (140.0, 20.0)), (1, (180.0, 20.0))], "{found:?}");
        for (point, expected) in found.iter().zip([Some(120.0), Some(0.0), Some(73.0), None, Some(110.0)]) {
            let Some(expected) = expected else { continue };
            let off = (point.dip_direction.expect("a joint's dip direction") - expected + 90.0).rem_euclid(180.0) - 90.0;
            assert!(off.abs() <= 1.5, "dip direction {expected}: {found:?}");
        }
        assert!(found[3].dip_direction.is_none(), "a filled mark has none");

        // Measured on its sample: the dot is its strongest ink, the lighter hairline through it
        // makes it strung; a dot alone, or a line alone, is no strung dot.
        // (`beside`: the hairline lighter within two pixels of the dot, as an enlarged scan prints it.)
        let sample = |dot: bool, line: Option<u8>, beside: bool| Rgb {
            width: 30,
            height: 30,
            pixels: (0..900)
                .flat_map(|k| {
                    let at = ((k % 30) as f64 + 0.5, (k / 30) as f64 + 0.5);
                    if dot && (at.0 - 15.0).hypot(at.1 - 15.0) <= 3.0 {
                        [20, 20, 20]
                    } else if let Some(grey) = line.filter(|_| on_line(at, (15.0, 15.0), 135.0, 11.0)) {
                        if beside && (at.0 - 15.0).hypot(at.1 - 15.0) <= 5.0 { [170; 3] } else { [grey; 3] }
                    } else {
                        [250, 250, 250]
                    }
                })
                .collect(),
        };
        let strung = || PointPrompt { strike_px: 0.0, ..joint_prompt() };
        let measured = strung().calibrated(&sample(true, Some(110), false)).expect("a strung dot");
        assert!((measured.strike_px - 6.0).abs() <= 2.0 && measured.colour.0 < 60, "{measured:?}");
        assert!(strung().calibrated(&sample(true, Some(110), true)).is_some(), "a hairline light beside its dot");
        assert!(strung().calibrated(&sample(true, None, false)).is_none(), "a dot alone");
        assert!(strung().calibrated(&sample(false, Some(110), false)).is_none(), "a line alone");
        // A hairline too light to be the map's dark ink would leave its joints as filled marks.
        assert!(strung().calibrated(&sample(true, Some(170), false)).is_none(), "a light hairline");
        assert_eq!(ta1_point_type("strike of vertical"), Some(("vertical joint", Shape::Strung)));
    }

    #[test]
    fn a_tick_symbol_printed_as_a_hairline_is_measured_as_one_and_a_line_without_its_tick_or_a_wide_one_is_none() {
        let sample = |segments: &[(f64, f64, f64, f64)], stroke: f64| Rgb {
            width: 40,
            height: 30,
            pixels: drawn(40, 30, segments, stroke).iter().flat_map(|&m| if m != 0 { [86, 86, 86] } else { [250, 250, 250] }).collect(),
        };
        // Its tick a pixel or two beside the strike line's middle, apart from it (as a scan prints it).
        let [strike, _] = attitude(20.0, 15.0, 45.0, 15.0, 2.0);
        let (dx, dy) = (45_f64.to_radians().sin(), -45_f64.to_radians().cos());
        let tick = (20.0 + 2.0 * dx, 15.0 + 2.0 * dy, 20.0 + 2.8 * dx, 15.0 + 2.8 * dy);
        let hairline = prompt(Shape::Tick).calibrated(&sample(&[strike, tick], 1.0)).expect("a hairline symbol");
        assert!(hairline.hairline && (hairline.strike_px - 15.0).abs() <= 2.0 && hairline.width_px == 1.0, "{hairline:?}");
        assert!(prompt(Shape::Tick).calibrated(&sample(&[strike], 1.0)).is_none(), "a line without its tick");
        let wide = prompt(Shape::Tick).calibrated(&sample(&[strike, tick], 3.0));
        assert!(wide.as_ref().is_none_or(|p| !p.hairline), "{wide:?}");
    }

    /// A stroke drawn on a lightness map: its segments, their width, their L*.
    type Stroke = (Vec<(f64, f64, f64, f64)>, f64, u8);

    /// A stroke a pixel wide drawn on a window of the scan: its segments, their colour.
    type ColouredStroke = (Vec<(f64, f64, f64, f64)>, [u8; 3]);

    /// A `width × height` lightness map of paper (L* 90) with each stroke drawn on it.
    fn lit(width: usize, height: usize, strokes: &[Stroke]) -> Vec<u8> {
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

    #[test]
    fn a_hairline_attitude_is_found_by_its_tick_and_number_and_a_contact_a_contour_a_fault_or_a_bare_line_is_not() {
        // A strike line at `(x, y)` with its tick towards `towards` and its number printed beyond the tick.
        let symbol = |x: f64, y: f64, towards: f64, tick: f64| {
            let [strike, tick] = attitude(x, y, towards, 15.0, tick);
            let (dx, dy) = (towards.to_radians().sin(), -towards.to_radians().cos());
            vec![strike, tick, (x + 6.0 * dx, y + 6.0 * dy - 2.0, x + 6.0 * dx, y + 6.0 * dy + 2.0)]
        };
        let towards = [0.0, 70.0, 160.0, 250.0];
        let mut strokes: Vec<Stroke> = towards.iter().enumerate().map(|(k, &t)| (symbol(30.0 + 40.0 * k as f64, 30.0, t, 2.0), 1.0, 40)).collect();
        strokes.push((vec![(10.0, 70.0, 170.0, 75.0)], 1.0, 40)); // a contact
        strokes.push((symbol(30.0, 110.0, 90.0, 2.0), 1.0, 50)); // a contour printed lighter
        strokes.push((symbol(70.0, 110.0, 90.0, 2.0), 3.0, 15)); // a black fault's piece
        strokes.push((vec![attitude(110.0, 110.0, 90.0, 15.0, 0.0)[0]], 1.0, 40)); // a bare line
        let (width, height) = (180, 140);
        let pixels = lit(width, height, &strokes);
        let prompt = PointPrompt { colour: (86, 86, 86), width_px: 1.0, strike_px: 15.0, tick_px: 2.0, hairline: true, ..prompt(Shape::Tick) };
        let lightness = Lightness { pixels: &pixels, width, height };
        let mut mask = vec![0; width * height];
        let mut found = hairline_attitudes(&mut mask, &lightness, &[prompt], &[0], (100.0, 200.0));
        found.sort_by(|a, b| a.at.0.total_cmp(&b.at.0));
        assert_eq!(found.len(), towards.len(), "{found:?}");
        for (k, (point, want)) in found.iter().zip(towards).enumerate() {
            let off = (point.at.0 - 130.0 - 40.0 * k as f64).hypot(point.at.1 - 230.0);
            let turn = (point.dip_direction.expect("a dip direction") - want + 540.0).rem_euclid(360.0) - 180.0;
            assert!(off <= 0.75 && turn.abs() <= 10.0, "{point:?} for {want}");
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
        let prompt = PointPrompt { colour: (60, 60, 60), width_px: 1.0, strike_px: 15.0, tick_px: 2.5, hairline: true, ..prompt(Shape::Tick) };
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
    }

    fn joint_prompt() -> PointPrompt {
        PointPrompt { symbol: "strike of vertical".to_owned(), ta1_type: "vertical joint", shape: Shape::Strung, ..mark("", 6.0, 0.78, 1.0) }
    }
}
