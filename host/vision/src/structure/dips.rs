//! Attitudes' dips: the number printed beside each strike-and-dip symbol, matched from the words
//! the sheet's readings hold ([`dips`]) and read again where its ink stands ([`reread_dips`], in
//! the boxes its detector gives: [`PointDetector::number_boxes`]).
//!
//! Invariants: a dip is a number read on the map, never guessed, at most [`MAX_DIP`]; each number
//! is one attitude's at most (the nearest keeps it); the scan is read only through the caller's
//! window reader, in regions clamped to the scan.

use geomap_model::page::PixelBox;

use super::clamped;
#[cfg(doc)]
use super::points::PointDetector;
use super::points::{FoundPoint, NumberBox, PointPrompt, Shape};
use crate::VisionError;
use crate::image::Rgb;
use crate::layout::numbers::printed_number;
use crate::ocr::reader::{Reader, TextLine};

/// The largest dip a number beside an attitude may say, in degrees.
pub const MAX_DIP: u32 = 90;

/// The dip a line of words says, when it is one number up to [`MAX_DIP`] with at most one stray
/// mark on either side (the symbol's tick read as a letter).
pub fn dip_of(text: &str) -> Option<u32> {
    printed_number(text).filter(|&number| number <= MAX_DIP)
}

/// Each attitude's dip: the number (a line of `words`) whose box's centre is nearest its junction,
/// within the symbol's strike length plus two of the number's heights; nearest pairs first, each
/// number given once. Returns per point the dip and the words' box.
pub fn dips(points: &[FoundPoint], prompts: &[PointPrompt], words: &[TextLine]) -> Vec<Option<(u32, PixelBox)>> {
    // A number read more than once (by the layout and by a reading) is one number.
    let mut numbers: Vec<(u32, &PixelBox)> = Vec::new();
    for (dip, bbox) in words.iter().filter_map(|line| Some((dip_of(&line.text)?, &line.bbox))) {
        if !numbers.iter().any(|(other, seen)| *other == dip && overlaps(seen, bbox)) {
            numbers.push((dip, bbox));
        }
    }
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (p, point) in points.iter().enumerate() {
        let prompt = &prompts[point.prompt];
        if prompt.shape != Shape::Tick {
            continue;
        }
        for (n, (_, bbox)) in numbers.iter().enumerate() {
            let centre = ((bbox.x0 + bbox.x1) / 2.0, (bbox.y0 + bbox.y1) / 2.0);
            let distance = (centre.0 - point.at.0).hypot(centre.1 - point.at.1);
            if distance <= prompt.strike_px + 2.0 * (bbox.y1 - bbox.y0) {
                pairs.push((distance, p, n));
            }
        }
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut dips = vec![None; points.len()];
    let mut used = vec![false; numbers.len()];
    for (_, p, n) in pairs {
        if dips[p].is_none() && !used[n] {
            used[n] = true;
            dips[p] = Some((numbers[n].0, *numbers[n].1));
        }
    }
    dips
}

/// Smallest recogniser score a number read beside an attitude is kept at.
const DIP_MIN_SCORE: f64 = 0.6;
/// Smallest recogniser score a number read in grey ink not its symbol's own ([`NumberBox::own_ink`]
/// false: beside a hairline attitude) is kept at: those boxes also hold pieces of other grey lines, and
/// on the USGS sample one such piece beside an 8 read as 1 at 0.63.
const GREY_INK_DIP_MIN_SCORE: f64 = 0.8;

/// Each attitude's dip read where its number's ink stands (in the scan around it, `window` giving
/// the scan's pixels in a region, each of the boxes its detector gives in turn,
/// [`PointDetector::number_boxes`], by `reader`'s recogniser, until one reads), else as
/// `from_words` gave it (the words the layout and the readings read, matched by [`dips`]).
pub fn reread_dips<E: From<VisionError>>(
    points: &[FoundPoint],
    prompts: &[PointPrompt],
    from_words: Vec<Option<(u32, PixelBox)>>,
    reader: &Reader,
    (width, height): (u32, u32),
    window: &dyn Fn((u32, u32, u32, u32)) -> Result<Rgb, E>,
) -> Result<Vec<Option<(u32, PixelBox)>>, E> {
    let mut dips = from_words;
    for (point, dip) in points.iter().zip(dips.iter_mut()) {
        let prompt = &prompts[point.prompt];
        let Some(detector) = prompt.detector.filter(|_| prompt.shape == Shape::Tick) else { continue };
        let reach = 2.5 * prompt.strike_px;
        let Some(region) = clamped((point.at.0 - reach, point.at.1 - reach, point.at.0 + reach, point.at.1 + reach), (width, height)) else { continue };
        let pixels = window(region)?;
        let (left, top) = (f64::from(region.0), f64::from(region.1));
        let at = (point.at.0 - left, point.at.1 - top);
        // Each box its detector gives, in turn (a later one looked for only when the one before
        // read no number).
        for NumberBox { region: number, own_ink } in detector.number_boxes(&pixels, at, prompt, point.dip_direction) {
            let min_score = if own_ink { DIP_MIN_SCORE } else { GREY_INK_DIP_MIN_SCORE };
            let read = reader.recognise(&pixels, vec![number], min_score).map_err(|error| E::from(VisionError::Inference(error.to_string())))?;
            if let Some(degrees) = read.first().and_then(|line| dip_of(&line.text)) {
                *dip = Some((degrees, PixelBox { x0: number.x0 + left, y0: number.y0 + top, x1: number.x1 + left, y1: number.y1 + top }));
                break;
            }
        }
    }
    // A number is one attitude's: the nearest of those it was read for keeps it.
    let distance = |p: usize, b: &PixelBox| ((b.x0 + b.x1) / 2.0 - points[p].at.0).hypot((b.y0 + b.y1) / 2.0 - points[p].at.1);
    let read: Vec<usize> = (0..dips.len()).filter(|&p| dips[p].is_some()).collect();
    let mut dropped = Vec::new();
    for (k, &a) in read.iter().enumerate() {
        for &b in &read[k + 1..] {
            let (Some((_, box_a)), Some((_, box_b))) = (&dips[a], &dips[b]) else { continue };
            if overlaps(box_a, box_b) {
                dropped.push(if distance(a, box_a) <= distance(b, box_b) { b } else { a });
            }
        }
    }
    for p in dropped {
        dips[p] = None;
    }
    Ok(dips)
}

/// Whether two boxes share any area.
fn overlaps(a: &PixelBox, b: &PixelBox) -> bool {
    a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dip_is_the_nearest_number_beside_its_attitude_and_never_a_word() {
        assert_eq!([dip_of("35"), dip_of("8"), dip_of("T35"), dip_of("35'"), dip_of("90")], [Some(35), Some(8), Some(35), Some(35), Some(90)]);
        assert_eq!([dip_of("95"), dip_of("Tb"), dip_of("135")], [None; 3]);
        let prompt = PointPrompt {
            width_px: 3.0,
            strike_px: 26.0,
            tick_px: 8.0,
            ..PointPrompt::unmeasured(
                Some(5),
                ("strike and dip of beds".to_owned(), "Strike and dip of beds".to_owned()),
                ("inclined bedding", Shape::Tick),
                (0, 0, 0),
            )
        };
        let at = |x: f64, y: f64| FoundPoint { prompt: 0, at: (x, y), dip_direction: Some(90.0), confidence: 0.9 };
        let word = |text: &str, x: f64, y: f64| TextLine { text: text.to_owned(), bbox: PixelBox { x0: x, y0: y, x1: x + 20.0, y1: y + 14.0 }, score: 0.9 };
        let points = [at(100.0, 100.0), at(140.0, 100.0), at(400.0, 400.0)];
        let words = [word("35", 105.0, 105.0), word("12", 150.0, 108.0), word("Tb", 395.0, 395.0), word("60", 600.0, 600.0)];
        let found = dips(&points, std::slice::from_ref(&prompt), &words);
        let twice = [word("35", 105.0, 105.0), word("35", 106.0, 105.0), word("12", 150.0, 108.0)];
        let once = dips(&[at(100.0, 100.0), at(80.0, 100.0)], std::slice::from_ref(&prompt), &twice);
        assert_eq!(once.iter().filter(|d| d.is_some_and(|(dip, _)| dip == 35)).count(), 1, "one number read twice is one attitude's: {once:?}");
        assert_eq!(found.iter().map(|d| d.map(|(dip, _)| dip)).collect::<Vec<_>>(), [Some(35), Some(12), None]);
    }
}
