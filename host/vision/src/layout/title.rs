//! The title found from words: the largest type outside the main map and the
//! legends, with the lines of nearly its size stacked on it.
//!
//! Invariant: a pure function of the lines; sizes are relative to the title's type.

use super::{TitleText, centre_x, height, horizontal, overlaps, union};
use crate::ocr::reader::TextLine;
use geomap_model::page::PixelBox;

/// The largest type outside the main map and the legends (horizontal lines of at least eight letters,
/// a part's heading aside), with the lines of nearly the same size stacked with it.
pub(super) fn title(lines: &[TextLine], main_map: Option<&PixelBox>, legends: &[PixelBox]) -> Option<TitleText> {
    let outside =
        |b: &PixelBox| !main_map.is_some_and(|m| m.x0 <= b.x0 && b.x1 <= m.x1 && m.y0 <= b.y0 && b.y1 <= m.y1) && !legends.iter().any(|l| overlaps(l, b));
    let candidates: Vec<&TextLine> = lines
        .iter()
        .filter(|l| l.score >= 0.6 && horizontal(&l.bbox) && l.text.chars().filter(|c| c.is_alphabetic()).count() >= 8 && outside(&l.bbox))
        .filter(|l| !super::parts::is_heading(&l.text))
        .collect();
    let largest = candidates.iter().max_by(|a, b| height(&a.bbox).total_cmp(&height(&b.bbox)))?;
    let h = height(&largest.bbox);
    let mut chosen = vec![*largest];
    let mut bbox = largest.bbox;
    loop {
        let next = candidates.iter().find(|l| {
            !chosen.contains(l)
                && height(&l.bbox) >= 0.85 * h
                && height(&l.bbox) <= h / 0.85
                && (l.bbox.y0 - bbox.y1).max(bbox.y0 - l.bbox.y1) <= 0.8 * h
                && centre_x(&l.bbox) > bbox.x0
                && centre_x(&l.bbox) < bbox.x1
        });
        match next {
            Some(line) => {
                chosen.push(line);
                bbox = union(&bbox, &line.bbox);
            }
            None => break,
        }
    }
    chosen.sort_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0));
    Some(TitleText { text: chosen.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" "), bbox })
}
