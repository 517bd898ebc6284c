//! A cross section's line of section by its letters: a thin straight line drawn on the main map
//! between two of the section's letters (A and A′) read among the sheet's words
//! ([`section_lines`]), or a thin straight line ([`super::sections::Straight`]) at whose ends the
//! letters are read on the scan itself ([`letters_at_ends`]: the ink at each end boxed and
//! recognised, upright and along the line, and where the ink beside the line widens a little way
//! back).
//!
//! Invariants: the scan is read only through the caller's window reader, in regions clamped to
//! the scan; points leave in the scan's pixels; a line of section ends where its letters' boxes
//! begin; a section's line has its primed end told by the prime read, else the wider letter, else
//! left to right (or top to bottom), and says which.

use geomap_model::page::PixelBox;

use super::clamped;
use super::sections::{Crossing, Straight};
use crate::VisionError;
use crate::image::{Rgb, grey};
use crate::layout::parts::is_prime;
use crate::ocr::reader::{Reader, TextLine};

/// A cross section's line of section found on the main map.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionLine {
    /// Its letters, as the cross section's caption gives them (`A–A′`).
    pub name: String,
    /// The cross section it is drawn for: its box in the scan's pixels, as the layout found it.
    pub section_bbox: PixelBox,
    /// Its end at the unprimed letter (A), in the scan's pixels.
    pub from: (f64, f64),
    /// Its end at the primed letter (A′), in the scan's pixels.
    pub to: (f64, f64),
    /// 0–1: 0.9 when the prime was read at one end, 0.75 when the primed letter was told by its
    /// wider box, 0.6 when the ends were taken left to right or top to bottom, and
    /// [`ONE_LETTER_CONFIDENCE`] when a letter was read at one end only.
    pub confidence: f64,
    /// How its ends were told apart: `prime read`, `wider letter`, `left to right` or `top to
    /// bottom`; with one letter read, `one letter read, ` and `its prime`, `left to right` or `top
    /// to bottom`.
    pub ends_from: String,
}

impl SectionLine {
    /// Its length in the scan's pixels.
    pub fn length_px(&self) -> f64 {
        (self.to.0 - self.from.0).hypot(self.to.1 - self.from.1)
    }
}

/// A letter printed on the main map: whether it carries a prime, and its box.
struct Letter<'a> {
    primed: bool,
    bbox: &'a PixelBox,
    score: f64,
}

/// The words that are `letter` alone or with a prime (A, A', A′).
fn letters<'a>(words: &'a [TextLine], letter: &str) -> Vec<Letter<'a>> {
    words
        .iter()
        .filter_map(|line| {
            let text: String = line.text.chars().filter(|c| !c.is_whitespace()).collect();
            let mut rest = text.strip_prefix(letter)?.chars();
            let primed = match (rest.next(), rest.next()) {
                (None, _) => false,
                (Some(mark), None) if is_prime(mark) => true,
                _ => return None,
            };
            Some(Letter { primed, bbox: &line.bbox, score: line.score })
        })
        .collect()
}

/// Steps of a letter-to-letter segment read from the scan at once.
const SECTION_CHUNK_STEPS: usize = 512;
/// At most this many of a section's letters on the main map are paired (the best read first).
const SECTION_MAX_LETTERS: usize = 8;
/// A thin straight line with a section's letter read at one end only is its line of section when
/// its length is this share of the section's width: a cross section is drawn at the map's scale,
/// its box a little wider for its elevation axes (0.92–0.97 on the USGS sample's three).
pub const ONE_LETTER_WIDTHS: std::ops::RangeInclusive<f64> = 0.8..=1.1;
/// The confidence of a line of section with one letter read.
pub const ONE_LETTER_CONFIDENCE: f64 = 0.5;

/// A line of section drawn between two letters: its ends, nearest the first letter first.
fn drawn_between<E: From<VisionError>>(
    first: &Letter,
    second: &Letter,
    window: &dyn Fn((u32, u32, u32, u32)) -> Result<Rgb, E>,
    (width, height): (u32, u32),
) -> Result<Option<[(f64, f64); 2]>, E> {
    let centre = |b: &PixelBox| ((b.x0 + b.x1) / 2.0, (b.y0 + b.y1) / 2.0);
    let (from, to) = (centre(first.bbox), centre(second.bbox));
    let tall = (first.bbox.y1 - first.bbox.y0).max(second.bbox.y1 - second.bbox.y0).max(1.0);
    let length = (to.0 - from.0).hypot(to.1 - from.1);
    if length < 4.0 * tall {
        return Ok(None);
    }
    // A crossing line is narrower than half the smaller letter is tall; the letters stand further off.
    let short = (first.bbox.y1 - first.bbox.y0).min(second.bbox.y1 - second.bbox.y0).max(1.0);
    let crossing = Crossing { from, to, reach: 1.5 * tall, gap_steps: (short / 2.0) as usize };
    let steps = crossing.steps();
    // How far along the segment each letter's box reaches from its centre.
    let (ux, uy) = ((to.0 - from.0).abs() / length, (to.1 - from.1).abs() / length);
    let half = |b: &PixelBox| ((b.x1 - b.x0) / 2.0 / ux.max(1e-9)).min((b.y1 - b.y0) / 2.0 / uy.max(1e-9)).ceil() as usize;
    let inner = (half(first.bbox), steps.saturating_sub(half(second.bbox) + 1));
    let mut dips = Vec::with_capacity(steps);
    for first_step in (0..steps).step_by(SECTION_CHUNK_STEPS) {
        let last_step = (first_step + SECTION_CHUNK_STEPS).min(steps);
        let Some(region) = clamped(crossing.window(first_step, last_step), (width, height)) else {
            dips.extend(std::iter::repeat_n(Vec::new(), last_step - first_step));
            continue;
        };
        dips.extend(crossing.dips(&window(region)?, (f64::from(region.0), f64::from(region.1)), first_step, last_step));
    }
    Ok(crossing.line(&dips, inner))
}

/// Pixels at most this grey (0–255) are a letter's ink at a straight line's end.
const LETTER_GREY: u8 = 110;
/// When that ink's box covers at least this share of the picture read, other ink crowds the
/// letter (dark contacts), and its ink is taken as the darkest ink alone: a letter is printed in
/// the darkest ink.
const LETTER_CROWDED: f64 = 0.8;
/// A crowded letter's ink is at most this many grey levels lighter than the darkest pixel that
/// could be a letter's, and still at most [`LETTER_GREY`].
const LETTER_DARKEST_SPAN: u8 = 40;
/// A letter at a straight line's end is looked for within this many of the shrunk map's pixels of
/// the end, and as far again beyond it…
const LETTER_REACH: f64 = 12.0;
/// …then within this many of the sheet's type heights ([`type_height`]).
const LETTER_REACH_TYPES: f64 = 1.0;
/// The type is measured on at least this many words.
pub const TYPE_LEAST_WORDS: usize = 20;
/// Smallest recogniser score a letter read at a line's end is kept at.
const LETTER_MIN_SCORE: f64 = 0.5;
/// A line at least this far from level (radians, about 10°) has its letters read along it too.
const LETTER_TILT: f64 = 0.17;

/// The box of the ink (at most [`LETTER_GREY`], or the darkest ink when that crowds the picture,
/// see [`LETTER_CROWDED`]) of `square`, a picture `2 · reach` wide around a line's end (`end`,
/// and `outward` the line's direction there, both in the picture): the line itself, more than
/// `run_in` before the end, left out (a line may end inside its letter), grown by a sixth of a
/// reach; `None` when too little ink is there for a letter.
fn ink_box(square: &Rgb, (end, outward, run_in): ((f64, f64), (f64, f64), f64), reach: f64) -> Option<PixelBox> {
    let (width, height) = (square.width as usize, square.height as usize);
    // The pixels that may be a letter's (the line itself left out), with their grey.
    let candidates: Vec<(f64, f64, u8)> = square
        .pixels
        .chunks_exact(3)
        .enumerate()
        .map(|(i, p)| ((i % width) as f64, (i / width) as f64, grey(p)))
        .filter(|&(x, y, _)| {
            let (dx, dy) = (x + 0.5 - end.0, y + 0.5 - end.1);
            let (ahead, across) = (dx * outward.0 + dy * outward.1, (dx * outward.1 - dy * outward.0).abs());
            !(ahead < -run_in && across <= reach / 5.0)
        })
        .collect();
    let ink_within = |limit: u8| {
        candidates.iter().filter(|&&(_, _, grey)| grey <= limit).fold(None, |bbox: Option<(f64, f64, f64, f64)>, &(x, y, _)| {
            Some(bbox.map_or((x, y, x + 1.0, y + 1.0), |b| (b.0.min(x), b.1.min(y), b.2.max(x + 1.0), b.3.max(y + 1.0))))
        })
    };
    let mut bbox = ink_within(LETTER_GREY);
    // Ink all over the picture (dark contacts around the letter): the letter is the darkest ink.
    if let Some((x0, y0, x1, y1)) = bbox
        && (x1 - x0) * (y1 - y0) >= LETTER_CROWDED * (width * height) as f64
    {
        let darkest = candidates.iter().map(|&(_, _, grey)| grey).min().unwrap_or(0);
        bbox = ink_within(darkest.saturating_add(LETTER_DARKEST_SPAN).min(LETTER_GREY));
    }
    let (x0, y0, x1, y1) = bbox?;
    let grow = reach / 6.0;
    (y1 - y0 >= reach / 3.0).then(|| PixelBox {
        x0: (x0 - grow).max(0.0),
        y0: (y0 - grow).max(0.0),
        x1: (x1 + grow).min(width as f64),
        y1: (y1 + grow).min(height as f64),
    })
}

/// A line's letter is also looked for this many reaches back from its end, where the ink beside
/// it widens (its run may go on past its letter, along ink in line with it).
const LETTER_BACK_REACHES: f64 = 8.0;
/// At most this many places back from a line's end, where the ink beside it widens, are read.
const LETTER_BACK_MAX: usize = 6;

/// How far back from a line's end (`end`, `outward` its direction there, both on `pixels` whose
/// top left is `origin` on the scan) the ink beside it widens as a letter's does, at most
/// [`LETTER_BACK_REACHES`] reaches back: the inner edge of each stretch at least a quarter reach
/// long where two or more pixels within half a reach across (the line's own `width` left out)
/// are ink, the nearest first, at most [`LETTER_BACK_MAX`]. A stretch whose inner edge is within
/// half a reach of the end is read with the end; one from the end on further (a letter touching
/// a line crossed beyond it) is not.
fn widenings(pixels: &Rgb, origin: (f64, f64), (end, outward): ((f64, f64), (f64, f64)), reach: f64, width: f64) -> Vec<f64> {
    let ink = |x: f64, y: f64| {
        let (x, y) = ((x - origin.0).floor(), (y - origin.1).floor());
        x >= 0.0 && y >= 0.0 && x < f64::from(pixels.width) && y < f64::from(pixels.height) && {
            let i = 3 * (y as usize * pixels.width as usize + x as usize);
            grey(&pixels.pixels[i..i + 3]) <= LETTER_GREY
        }
    };
    let half = (reach / 2.0).floor() as i64;
    let wide: Vec<i64> = (0..=(LETTER_BACK_REACHES * reach) as i64)
        .filter(|&t| {
            let at = (end.0 - outward.0 * t as f64, end.1 - outward.1 * t as f64);
            let across = (-half..=half).filter(|&s| (s as f64).abs() > width && ink(at.0 - outward.1 * s as f64, at.1 + outward.0 * s as f64));
            across.count() >= 2
        })
        .collect();
    let gap = (reach / 6.0).ceil() as i64;
    wide.chunk_by(|a, b| b - a <= gap + 1)
        .filter(|stretch| (stretch[stretch.len() - 1] - stretch[0] + 1) as f64 >= reach / 4.0)
        .map(|stretch| stretch[stretch.len() - 1] as f64 + 1.0)
        .filter(|&inner| inner > reach / 2.0)
        .take(LETTER_BACK_MAX)
        .collect()
}

/// The best reading of a wanted letter at a line's end (`end`, `outward` its direction there, in
/// the scan's pixels; the line's ink kept `run_in` before it, see [`ink_box`]) on `pixels` (whose
/// top left is `origin` on the scan): the ink there and the ink just beyond it, read in each of
/// `ways` (upright, and along the line), its box in the scan's pixels (upright, the size of the ink's).
fn letter_at<E: From<VisionError>>(
    (end, outward, run_in): ((f64, f64), (f64, f64), f64),
    (pixels, origin): (&Rgb, (f64, f64)),
    (reach, ways): (f64, &[(f64, f64)]),
    wanted: &dyn Fn(&TextLine) -> bool,
    reader: &Reader,
) -> Result<Option<TextLine>, E> {
    let side = 2 * reach.ceil() as u32 + 1;
    let mut best: Option<TextLine> = None;
    for beyond in [0.0, reach] {
        let centre = (end.0 + outward.0 * beyond - origin.0, end.1 + outward.1 * beyond - origin.1);
        for &way in ways {
            // The picture's rows run along `way`, its middle at `centre`: where the end and the
            // line's direction fall in it.
            let square = pixels.turned_about(centre, way, (side, side));
            let into = |(x, y): (f64, f64)| (x * way.0 + y * way.1, y * way.0 - x * way.1);
            let end_at = into((-outward.0 * beyond, -outward.1 * beyond));
            let line = ((end_at.0 + f64::from(side) / 2.0, end_at.1 + f64::from(side) / 2.0), into(outward));
            let Some(ink) = ink_box(&square, (line.0, line.1, run_in), reach) else { continue };
            // Read at least as wide as tall, so a letter is not taken for vertical text.
            let widen = ((ink.y1 - ink.y0) - (ink.x1 - ink.x0)).max(0.0) / 2.0;
            let wide = PixelBox { x0: (ink.x0 - widen).max(0.0), x1: (ink.x1 + widen).min(f64::from(side)), ..ink };
            let reading = reader.recognise(&square, vec![wide], LETTER_MIN_SCORE).map_err(|error| E::from(VisionError::Inference(error.to_string())))?;
            let (half_w, half_h) = ((ink.x1 - ink.x0) / 2.0, (ink.y1 - ink.y0) / 2.0);
            let (u, v) = ((ink.x0 + ink.x1 - f64::from(side)) / 2.0, (ink.y0 + ink.y1 - f64::from(side)) / 2.0);
            let (x, y) = (centre.0 + origin.0 + u * way.0 - v * way.1, centre.1 + origin.1 + u * way.1 + v * way.0);
            let bbox = PixelBox { x0: x - half_w, y0: y - half_h, x1: x + half_w, y1: y + half_h };
            for line in reading {
                let line = TextLine { bbox, ..line };
                if wanted(&line) && best.as_ref().is_none_or(|b| line.score > b.score) {
                    best = Some(line);
                }
            }
        }
    }
    Ok(best)
}

/// The sheet's type height in pixels: the median height of the boxes of `words` (the lines read on
/// it); `None` with fewer than [`TYPE_LEAST_WORDS`]. A sheet shrunk for its straight lines by a
/// whole factor says less of its letters' size: the USGS sample resized from 3869 to 5000 px
/// (1.3 times) is shrunk by 2, and its words' median height grows from 11.8 to 13.9 px.
pub fn type_height(words: &[TextLine]) -> Option<f64> {
    let mut heights: Vec<f64> = words.iter().map(|line| line.bbox.y1 - line.bbox.y0).collect();
    if heights.len() < TYPE_LEAST_WORDS {
        return None;
    }
    heights.sort_by(f64::total_cmp);
    Some(heights[heights.len() / 2])
}

/// The thin straight lines of `straights` (found on the main map without their letters read,
/// the longest first) at one or both ends of which a letter of `wanted` (the cross sections'
/// unprimed letters) is read, alone or primed, until each wanted letter has a line read at both
/// ends: at each end, the ink there boxed and read with `reader`'s recogniser alone (the detector
/// misses letters this small), else where the ink beside the line widens a little way back from
/// it, the line then ending there; with none read, it ends at the nearest such
/// place. A letter is looked for as large as the shrunk map's scale says, then, when none is read
/// so, as large as the sheet's type (`type_px`, see [`type_height`]) says, unless the two differ by
/// under a pixel; where the ink widens is measured at the first size. `cancelled` is asked before
/// each line.
pub fn letters_at_ends<E: From<VisionError>>(
    straights: &[Straight],
    wanted: &[&str],
    type_px: Option<f64>,
    reader: &Reader,
    scan: (u32, u32),
    window: &dyn Fn((u32, u32, u32, u32)) -> Result<Rgb, E>,
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<LetteredLine>, E> {
    let mut lettered: Vec<LetteredLine> = Vec::new();
    let is_of = |line: &TextLine, letter: &str| !letters(std::slice::from_ref(line), letter).is_empty();
    let is_wanted = |line: &TextLine| wanted.iter().any(|letter| is_of(line, letter));
    for straight in straights {
        if cancelled() {
            return Err(E::from(VisionError::Cancelled));
        }
        if wanted.iter().all(|letter| lettered.iter().any(|found| matches!(found.read(letter), [Some(_), Some(_)]))) {
            break;
        }
        let length = (straight.to.0 - straight.from.0).hypot(straight.to.1 - straight.from.1).max(1e-9);
        let along = ((straight.to.0 - straight.from.0) / length, (straight.to.1 - straight.from.1) / length);
        // Along the line as text runs: left to right, or up a line standing upright.
        let text_way = if along.0 > 1e-9 || (along.0.abs() <= 1e-9 && along.1 < 0.0) { along } else { (-along.0, -along.1) };
        // The letters' size as the shrunk map's scale says it, then as the sheet's type does.
        let scaled = LETTER_REACH * straight.scale;
        let typed = type_px.map(|type_px| (LETTER_REACH_TYPES * type_px).round()).filter(|typed| (typed - scaled).abs() >= 1.0);
        let mut ways = vec![(1.0, 0.0)];
        if text_way.1.abs() >= LETTER_TILT.sin() {
            ways.push(text_way);
        }
        let mut ends = [straight.from, straight.to];
        let mut read: [Option<TextLine>; 2] = [None, None];
        for (k, outward) in [(0, (-along.0, -along.1)), (1, along)] {
            let end = ends[k];
            let mut found = None;
            let mut widens = None;
            for (attempt, reach) in std::iter::once(scaled).chain(typed).enumerate() {
                let looked = EndLooked { end, outward, reach, width: 1.5 * straight.scale, ways: &ways };
                let read_there = letter_at_end(&looked, scan, window, &is_wanted, reader)?;
                if attempt == 0 {
                    widens = read_there.widens;
                }
                found = read_there.letter;
                if found.is_some() {
                    break;
                }
            }
            // Unread, the line ends where the ink beside it first widens (a letter no reader
            // takes, a bar printed for it), if anywhere.
            if let (None, Some(back)) = (&found, widens) {
                ends[k] = (end.0 - outward.0 * back, end.1 - outward.1 * back);
            }
            if let Some((at, letter)) = found {
                (ends[k], read[k]) = (at, Some(letter));
            }
        }
        if read.iter().any(Option::is_some) {
            lettered.push(LetteredLine { ends, letters: read });
        }
    }
    Ok(lettered)
}

/// A line's end as its letter is looked for there.
struct EndLooked<'a> {
    /// The end, in the scan's pixels.
    end: (f64, f64),
    /// The line's direction there, out of the line.
    outward: (f64, f64),
    /// How far from the end the letter is looked for, in the scan's pixels (a letter's size).
    reach: f64,
    /// The line's width, in the scan's pixels.
    width: f64,
    /// The directions text is read in.
    ways: &'a [(f64, f64)],
}

/// What was read at a line's end.
struct EndRead {
    /// The wanted letter read there and where (the end, or where the ink beside the line widens).
    letter: Option<((f64, f64), TextLine)>,
    /// How far back from the end the ink beside the line first widens, if it does; not measured
    /// (`None`) when the letter was read at the end itself.
    widens: Option<f64>,
}

/// The wanted letter read at a line's end (`looked`), and where: by [`letter_at`] at the end, else
/// where the ink beside the line widens ([`widenings`]), nearest first; with how far back the ink
/// first widens, if it does. Nothing when the end's surroundings lie wholly outside the `scan`.
fn letter_at_end<E: From<VisionError>>(
    looked: &EndLooked,
    scan: (u32, u32),
    window: &dyn Fn((u32, u32, u32, u32)) -> Result<Rgb, E>,
    is_wanted: &dyn Fn(&TextLine) -> bool,
    reader: &Reader,
) -> Result<EndRead, E> {
    let EndLooked { end, outward, reach, width, ways } = *looked;
    let around = (LETTER_BACK_REACHES + 2.0) * reach;
    let Some(region) = clamped((end.0 - around, end.1 - around, end.0 + around + 1.0, end.1 + around + 1.0), scan) else {
        return Ok(EndRead { letter: None, widens: None });
    };
    let pixels = (&window(region)?, (f64::from(region.0), f64::from(region.1)));
    if let Some(letter) = letter_at((end, outward, reach / 2.0), pixels, (reach, ways), is_wanted, reader)? {
        return Ok(EndRead { letter: Some((end, letter)), widens: None });
    }
    let backs = widenings(pixels.0, pixels.1, (end, outward), reach, width);
    for &back in &backs {
        let inner = (end.0 - outward.0 * back, end.1 - outward.1 * back);
        if let Some(letter) = letter_at((inner, outward, 0.0), pixels, (reach, ways), is_wanted, reader)? {
            return Ok(EndRead { letter: Some((inner, letter)), widens: backs.first().copied() });
        }
    }
    Ok(EndRead { letter: None, widens: backs.first().copied() })
}

/// A thin straight line on the main map with a letter read at one end or both.
pub struct LetteredLine {
    /// Its ends in the scan's pixels (maybe inside their letters); an end with no letter read moved
    /// back to where the ink beside the line first widens, if it does.
    pub ends: [(f64, f64); 2],
    /// The letter read at each end, in the order of `ends`; `None` where none was.
    pub letters: [Option<TextLine>; 2],
}

impl LetteredLine {
    /// At each end, the letter read there when it is `letter` alone or primed.
    fn read(&self, letter: &str) -> [Option<Letter<'_>>; 2] {
        self.letters.each_ref().map(|read| read.as_ref().and_then(|read| letters(std::slice::from_ref(read), letter).pop()))
    }
}

/// `end` moved along the line towards `other` to where it leaves `bbox`, should it lie inside it
/// (a line of section ends where its letter begins), at most halfway.
fn out_of(end: (f64, f64), other: (f64, f64), bbox: &PixelBox) -> (f64, f64) {
    if !(bbox.x0 <= end.0 && end.0 <= bbox.x1 && bbox.y0 <= end.1 && end.1 <= bbox.y1) {
        return end;
    }
    let length = (other.0 - end.0).hypot(other.1 - end.1).max(1e-9);
    let inward = ((other.0 - end.0) / length, (other.1 - end.1) / length);
    let leaves = |at: f64, way: f64, low: f64, high: f64| match way {
        w if w > 1e-9 => (high - at) / w,
        w if w < -1e-9 => (low - at) / w,
        _ => f64::INFINITY,
    };
    let distance = leaves(end.0, inward.0, bbox.x0, bbox.x1).min(leaves(end.1, inward.1, bbox.y0, bbox.y1)).min(length / 2.0);
    (end.0 + inward.0 * distance, end.1 + inward.1 * distance)
}

/// The line of section of each cross section (`sections`: the layout's boxes and letters): a thin
/// straight line drawn between two of its letters (lines of `words` that are the letter alone or
/// primed) on the main map (`main_map`), found on the scan's pixels (`window` reads a region of
/// the `scan`-sized image), a pair of a letter and its primed twin first, then the longest. Its end
/// at the primed letter is the one whose prime was read, else the wider letter's, else the
/// right-hand (or, up and down, the lower) one. With no such line, a thin straight line with the
/// letter read at one end and nothing at the other (`lettered`), as long as [`ONE_LETTER_WIDTHS`]
/// of the section's width, the best read first: its primed end the read one when its prime was
/// read, else as above (a letter read without its prime may be the primed one, its prime missed).
/// Per section, its line, `None` when none was found.
pub fn section_lines<E: From<VisionError>>(
    sections: &[(PixelBox, [String; 2])],
    (words, lettered): (&[TextLine], &[LetteredLine]),
    main_map: &PixelBox,
    window: &dyn Fn((u32, u32, u32, u32)) -> Result<Rgb, E>,
    scan: (u32, u32),
) -> Result<Vec<Option<SectionLine>>, E> {
    let mut found = Vec::with_capacity(sections.len());
    for (section_bbox, [letter, primed]) in sections {
        let on_map = |b: &PixelBox| main_map.x0 <= b.x0 && b.x1 <= main_map.x1 && main_map.y0 <= b.y0 && b.y1 <= main_map.y1;
        let mut marks: Vec<Letter> = letters(words, letter).into_iter().filter(|mark| on_map(mark.bbox)).collect();
        marks.sort_by(|a, b| b.score.total_cmp(&a.score));
        marks.truncate(SECTION_MAX_LETTERS);
        let mut drawn = Vec::new();
        for i in 0..marks.len() {
            for j in i + 1..marks.len() {
                if let Some(ends) = drawn_between(&marks[i], &marks[j], window, scan)? {
                    drawn.push((i, j, ends));
                }
            }
        }
        // A straight line with this section's letter read at both ends is drawn between them.
        for line in lettered {
            let [Some(first), Some(second)] = line.read(letter) else { continue };
            let [a, b] = line.ends;
            let ends = [out_of(a, b, first.bbox), out_of(b, a, second.bbox)];
            marks.extend([first, second]);
            drawn.push((marks.len() - 2, marks.len() - 1, ends));
        }
        // A pair whose one letter is primed first (A and A′, not A and A), then the longest line.
        let span = |[a, b]: &[(f64, f64); 2]| (b.0 - a.0).hypot(b.1 - a.1);
        let rank = |&(i, j, ends): &(usize, usize, [(f64, f64); 2])| (marks[i].primed != marks[j].primed, span(&ends));
        // The right-hand end primed, or, for a line running more up and down than across, the lower.
        let left_to_right = |a: (f64, f64), b: (f64, f64)| {
            if (b.0 - a.0).abs() >= (b.1 - a.1).abs() { (a.0 > b.0, "left to right") } else { (a.1 > b.1, "top to bottom") }
        };
        let best = drawn.iter().max_by(|x, y| rank(x).partial_cmp(&rank(y)).unwrap_or(std::cmp::Ordering::Equal));
        let ([a, b], a_is_primed, ends_from, confidence) = match best {
            Some(&(i, j, ends)) => {
                let width = |k: usize| marks[k].bbox.x1 - marks[k].bbox.x0;
                let (a_is_primed, ends_from, confidence) = if marks[i].primed != marks[j].primed {
                    (marks[i].primed, "prime read", 0.9)
                } else if width(i).max(width(j)) >= 1.2 * width(i).min(width(j)) {
                    (width(i) > width(j), "wider letter", 0.75)
                } else {
                    let (a_is_primed, ends_from) = left_to_right(ends[0], ends[1]);
                    (a_is_primed, ends_from, 0.6)
                };
                (ends, a_is_primed, ends_from.to_owned(), confidence)
            }
            None => {
                // A line with the letter read at one end and nothing at the other, as long as the
                // section is wide.
                let wide = section_bbox.x1 - section_bbox.x0;
                let one_read = lettered.iter().filter_map(|line| {
                    let k = match line.letters.each_ref().map(Option::is_some) {
                        [true, false] => 0,
                        [false, true] => 1,
                        _ => return None,
                    };
                    let mark = line.read(letter).into_iter().nth(k).flatten()?;
                    Some((out_of(line.ends[k], line.ends[1 - k], mark.bbox), line.ends[1 - k], mark))
                });
                let Some((read, other, mark)) = one_read
                    .filter(|&(read, other, _)| ONE_LETTER_WIDTHS.contains(&(span(&[read, other]) / wide)))
                    .max_by(|x, y| x.2.score.total_cmp(&y.2.score))
                else {
                    found.push(None);
                    continue;
                };
                let (a_is_primed, how) = if mark.primed { (true, "its prime") } else { left_to_right(read, other) };
                ([read, other], a_is_primed, format!("one letter read, {how}"), ONE_LETTER_CONFIDENCE)
            }
        };
        let (from, to) = if a_is_primed { (b, a) } else { (a, b) };
        let name = format!("{letter}–{primed}");
        found.push(Some(SectionLine { name, section_bbox: *section_bbox, from, to, confidence, ends_from }));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_line_lettered_at_both_ends_is_its_sections_line_ending_where_its_letters_begin() {
        let read =
            |text: &str, (x0, y0, x1, y1): (f64, f64, f64, f64), score: f64| TextLine { text: text.to_owned(), bbox: PixelBox { x0, y0, x1, y1 }, score };
        let main_map = PixelBox { x0: 0.0, y0: 0.0, x1: 1000.0, y1: 1000.0 };
        let sections = [(PixelBox { x0: 10.0, y0: 900.0, x1: 300.0, y1: 990.0 }, ["B".to_owned(), "B′".to_owned()])];
        // The line runs on into its primed letter at its first end; its other end stops short of its letter.
        let lettered = [
            LetteredLine {
                ends: [(600.0, 200.0), (100.0, 700.0)],
                letters: [Some(read("B'", (592.0, 190.0, 608.0, 206.0), 0.8)), Some(read("B", (80.0, 700.0, 95.0, 715.0), 0.95))],
            },
            LetteredLine {
                ends: [(100.0, 100.0), (500.0, 100.0)],
                letters: [Some(read("A", (80.0, 92.0, 95.0, 108.0), 0.9)), Some(read("B", (505.0, 92.0, 520.0, 108.0), 0.9))],
            },
        ];
        let no_window = |_| -> Result<Rgb, VisionError> { unreachable!("no words to pair: nothing is read from the scan") };
        let found = section_lines(&sections, (&[], &lettered), &main_map, &no_window, (1000, 1000)).expect("found");
        let line = found[0].as_ref().expect("the B–B′ line");
        assert_eq!((line.name.as_str(), line.ends_from.as_str(), line.confidence), ("B–B′", "prime read", 0.9));
        let round = |(x, y): (f64, f64)| ((x * 10.0).round() / 10.0, (y * 10.0).round() / 10.0);
        assert_eq!(round(line.to), (594.0, 206.0), "the primed end, moved to where its letter's box ends");
        assert_eq!(line.from, (100.0, 700.0), "an end outside its letter stays, and B is where the line begins");
        let unlettered = section_lines(&sections, (&[], &lettered[1..]), &main_map, &no_window, (1000, 1000)).expect("found");
        assert!(unlettered[0].is_none(), "a line lettered A and B is no line of section B–B′");
    }
    #[test]
    fn a_straight_line_with_one_letter_read_is_its_sections_line_only_when_as_long_as_the_section_is_wide() {
        let read = |text: &str, (x0, y0, x1, y1): (f64, f64, f64, f64)| TextLine { text: text.to_owned(), bbox: PixelBox { x0, y0, x1, y1 }, score: 0.9 };
        let main_map = PixelBox { x0: 0.0, y0: 0.0, x1: 1000.0, y1: 1000.0 };
        // A section 500 px wide, drawn at the map's scale between its axes.
        let sections = [(PixelBox { x0: 100.0, y0: 900.0, x1: 600.0, y1: 990.0 }, ["C".to_owned(), "C′".to_owned()])];
        let one_read = |ends: [(f64, f64); 2], letters: [Option<TextLine>; 2]| [LetteredLine { ends, letters }];
        let no_window = |_| -> Result<Rgb, VisionError> { unreachable!("no words to pair: nothing is read from the scan") };
        let found = |lettered: &[LetteredLine]| section_lines(&sections, (&[], lettered), &main_map, &no_window, (1000, 1000)).expect("found").remove(0);
        // 470 px long, its prime missed at its right-hand end: C taken at the left.
        let line = one_read([(80.0, 300.0), (550.0, 300.0)], [None, Some(read("C", (545.0, 292.0, 560.0, 308.0)))]);
        let summary = found(&line).expect("a line as long as the section is wide");
        assert_eq!((summary.ends_from.as_str(), summary.confidence), ("one letter read, left to right", ONE_LETTER_CONFIDENCE));
        assert_eq!((summary.from, summary.to), ((80.0, 300.0), (545.0, 300.0)), "the read end moved to where its letter's box begins");
        // The same with its prime read at its left-hand end: C′ is there.
        let line = one_read([(80.0, 300.0), (550.0, 300.0)], [Some(read("C′", (65.0, 292.0, 85.0, 308.0))), None]);
        let summary = found(&line).expect("a line as long as the section is wide");
        assert_eq!((summary.ends_from.as_str(), summary.to), ("one letter read, its prime", (85.0, 300.0)));
        // Up and down, without its prime: C taken at the top.
        let line = one_read([(300.0, 540.0), (300.0, 60.0)], [Some(read("C", (292.0, 540.0, 308.0, 555.0))), None]);
        let summary = found(&line).expect("a line as long as the section is wide");
        assert_eq!((summary.ends_from.as_str(), summary.from, summary.to), ("one letter read, top to bottom", (300.0, 60.0), (300.0, 540.0)));
        // Too short or too long for the section, another section's letter, or another letter read
        // at its other end: no line of section.
        let c_at = Some(read("C", (65.0, 292.0, 80.0, 308.0)));
        assert!(found(&one_read([(80.0, 300.0), (350.0, 300.0)], [c_at.clone(), None])).is_none());
        assert!(found(&one_read([(80.0, 300.0), (700.0, 300.0)], [c_at.clone(), None])).is_none());
        assert!(found(&one_read([(80.0, 300.0), (550.0, 300.0)], [Some(read("A", (65.0, 292.0, 80.0, 308.0))), None])).is_none());
        assert!(found(&one_read([(80.0, 300.0), (550.0, 300.0)], [c_at.clone(), Some(read("B", (550.0, 292.0, 565.0, 308.0)))])).is_none());
        // A line with both letters read wins over a longer one with one.
        let both = LetteredLine { ends: [(80.0, 600.0), (380.0, 600.0)], letters: [c_at.clone(), Some(read("C′", (380.0, 592.0, 400.0, 608.0)))] };
        let [one] = one_read([(80.0, 300.0), (550.0, 300.0)], [c_at, None]);
        let summary = found(&[one, both]).expect("the line read at both ends");
        assert_eq!((summary.ends_from.as_str(), summary.to), ("prime read", (380.0, 600.0)));
    }
    #[test]
    fn a_letter_back_from_a_lines_end_is_where_the_ink_beside_it_widens_and_a_crossing_or_the_end_alone_is_not() {
        // A level line 3 px wide to its end at x = 180, a letter's blot on it from x = 140 to 147,
        // a line crossing it at x = 165 and a blot at the end itself.
        let (width, height) = (200_u32, 100_u32);
        let mut pixels = vec![230_u8; (width * height * 3) as usize];
        let mut ink = |x: u32, y: u32| pixels[3 * (y * width + x) as usize..3 * (y * width + x) as usize + 3].fill(40);
        (20..=180).for_each(|x| (49..=51).for_each(|y| ink(x, y)));
        (140..148).for_each(|x| (44..57).for_each(|y| ink(x, y)));
        (30..70).for_each(|y| ink(165, y));
        (177..181).for_each(|x| (46..55).for_each(|y| ink(x, y)));
        let picture = Rgb { width, height, pixels };
        let end = ((180.5, 50.5), (1.0, 0.0));
        assert_eq!(widenings(&picture, (0.0, 0.0), end, 12.0, 1.5), vec![41.0], "the blot's inner edge, 41 px back");
        // On the scan, offset by the picture's origin.
        let shifted = ((1180.5, 2050.5), (1.0, 0.0));
        assert_eq!(widenings(&picture, (1000.0, 2000.0), shifted, 12.0, 1.5), vec![41.0]);
        // Looked for at most 8 reaches back: 35 px takes 3 of the blot's pixels (a stretch, cut
        // there), 32 px none. (Nearer, a reach this small takes the end's blot and the crossing
        // for letters too.)
        let beyond = |reach: f64| widenings(&picture, (0.0, 0.0), end, reach, 1.5).into_iter().filter(|&back| back > 20.0).collect::<Vec<_>>();
        assert_eq!(beyond(35.0 / LETTER_BACK_REACHES), vec![36.0]);
        assert_eq!(beyond(32.0 / LETTER_BACK_REACHES), Vec::<f64>::new());
        // A letter from 21 px back touching a line crossed at the end: read where it begins.
        let mut touching = Rgb { width, height, pixels: picture.pixels.clone() };
        (160..=180).for_each(|x| (45..56).for_each(|y| touching.pixels[3 * (y * width + x) as usize..3 * (y * width + x) as usize + 3].fill(40)));
        assert_eq!(widenings(&touching, (0.0, 0.0), end, 12.0, 1.5), vec![21.0, 41.0]);
    }
    #[test]
    fn a_letters_ink_is_boxed_without_the_tilted_line_leading_up_to_it() {
        // A 25-px picture: a line coming up from the lower left at 30° to its end in the middle,
        // and a 6 × 8 blot (a letter) just beyond the end.
        let (side, reach) = (25_u32, 12.0);
        let outward = (30_f64.to_radians().cos(), -30_f64.to_radians().sin());
        let end = (12.5, 12.5);
        let mut pixels = vec![230_u8; (side * side * 3) as usize];
        for y in 0..side {
            for x in 0..side {
                let (dx, dy) = (f64::from(x) + 0.5 - end.0, f64::from(y) + 0.5 - end.1);
                let on_line = dx * outward.0 + dy * outward.1 <= 0.0 && (dx * outward.1 - dy * outward.0).abs() <= 0.7;
                let on_letter = (15..21).contains(&x) && (4..12).contains(&y);
                if on_line || on_letter {
                    pixels[3 * (y * side + x) as usize..3 * (y * side + x) as usize + 3].fill(40);
                }
            }
        }
        let square = Rgb { width: side, height: side, pixels };
        let ink = ink_box(&square, (end, outward, reach / 2.0), reach).expect("the letter");
        // The line's last half reach stays (it may run into its letter); the rest of it does not.
        assert!(ink.x0 >= 4.0 && ink.x0 <= 6.0 && ink.y1 <= 18.0, "{ink:?}");
        assert!(ink.x1 >= 21.0 && ink.y0 <= 4.0, "the letter is in the box: {ink:?}");
        // Where the line is known to end (at a widening), none of it stays.
        let ink = ink_box(&square, (end, outward, 0.0), reach).expect("the letter");
        assert!(ink.x0 >= 10.0 && ink.y1 <= 15.0 && ink.x1 >= 21.0, "{ink:?}");
        let blank = Rgb { width: side, height: side, pixels: vec![230; (side * side * 3) as usize] };
        assert_eq!(ink_box(&blank, (end, outward, reach / 2.0), reach), None);
        // Among dark grey contacts from corner to corner, the letter is the darkest ink.
        let mut crowded = Rgb { width: side, height: side, pixels: square.pixels.clone() };
        for k in 0..side {
            for (x, y) in [(k, 0), (side - 1 - k, side - 1), (0, k)] {
                crowded.pixels[3 * (y * side + x) as usize..3 * (y * side + x) as usize + 3].fill(100);
            }
        }
        let ink = ink_box(&crowded, (end, outward, 0.0), reach).expect("the letter");
        assert!(ink.x0 >= 10.0 && ink.y0 >= 2.0 && ink.y1 <= 15.0 && ink.x1 <= 23.0, "{ink:?}");
    }

    #[test]
    fn the_sheets_type_is_its_words_median_height_once_enough_are_read() {
        let word = |height: f64| TextLine { text: "Qal".to_owned(), bbox: PixelBox { x0: 0.0, y0: 10.0, x1: 30.0, y1: 10.0 + height }, score: 0.9 };
        // A title and a heading among the body's words leave the median the body's.
        let mut words: Vec<TextLine> = (0..TYPE_LEAST_WORDS - 1).map(|k| word(if k % 2 == 0 { 11.0 } else { 12.0 })).collect();
        assert_eq!(type_height(&words), None, "too few words");
        words.extend([word(40.0), word(30.0), word(12.0)]);
        assert_eq!(type_height(&words), Some(12.0));
    }
}
