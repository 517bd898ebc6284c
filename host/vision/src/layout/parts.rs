//! The sheet's other parts, found from their captions: the scale (its caption and the bar with
//! its numbers beside it), each cross section (its caption with its letters, A–A′, and the strip
//! beside it), the correlation of map units (its heading and the chart under it) and the index map.
//! A part is its caption and the block of ink and colour next to it: the rows below (or above)
//! the caption that are not paper, up to a gap of paper, and the columns of those rows around the
//! caption. A cross section printed without a caption is found by the elevation axes ("METERS")
//! at both ends of its strip.
//!
//! Invariants: pure functions of the lines and the scan's pixels; a caption inside the main map or
//! a legend is a place name or a unit's words, never a part; distances scale with the caption's
//! type height.

use super::numbers::scale_ratio;
use super::swatches::inked;
use super::{centre_x, height, horizontal, overlaps, union};
use crate::image::Rgb;
use crate::ocr::reader::TextLine;
use geomap_model::page::PixelBox;

/// A part of the sheet found from its caption.
#[derive(Debug, Clone, PartialEq)]
pub struct SheetPart {
    /// `scale`, `cross_section`, `stratigraphic_column` or `index_map`.
    pub class: &'static str,
    /// The caption and the block beside it.
    pub bbox: PixelBox,
    /// The caption, as read (empty for a cross section found by its elevation axes).
    pub caption: String,
    /// What placed it, in plain words: the caption, the block's extent, the words inside it.
    pub evidence: Vec<String>,
    /// A cross section's letters (`A`, `A′`).
    pub letters: Option<(String, String)>,
    /// A scale's ratio, the `N` of `1:N`.
    pub ratio: Option<u64>,
}

/// Upper case, letters only.
fn letters_only(text: &str) -> String {
    text.chars().filter(|c| c.is_alphabetic()).map(|c| c.to_ascii_uppercase()).collect()
}

/// The part a line captions, if it is a caption.
fn caption_class(text: &str) -> Option<&'static str> {
    let squeezed = letters_only(text);
    // A scale caption is set in capitals ("SCALE 1:100 000") or is the ratio alone; "scale 1:48,000"
    // in running text cites another map's.
    if (text.trim_start().starts_with("SCALE") || squeezed.is_empty()) && scale_ratio(text).is_some() {
        Some("scale")
    } else if squeezed.contains("CROSSSECTION") || squeezed.contains("GEOLOGICSECTION") || (squeezed.starts_with("SECTION") && section_letters(text).is_some())
    {
        Some("cross_section")
    } else if ["CORRELATIONOFMAPUNITS", "CORRELATIONOFUNITS", "STRATIGRAPHICCOLUMN", "COLUMNARSECTION", "GENERALIZEDSECTION"]
        .iter()
        .any(|h| squeezed.contains(h))
    {
        Some("stratigraphic_column")
    } else if ["INDEXMAP", "LOCATIONMAP", "MAPSHOWINGLOCATION", "INDEXTO"].iter().any(|h| squeezed.starts_with(h) || (squeezed.contains(h) && h.len() > 7)) {
        Some("index_map")
    } else {
        None
    }
}

/// The headings a part's caption begins with.
const HEADINGS: [&str; 11] = [
    "CROSSSECTION",
    "GEOLOGICSECTION",
    "SECTION",
    "CORRELATION",
    "STRATIGRAPHICCOLUMN",
    "COLUMNARSECTION",
    "GENERALIZEDSECTION",
    "INDEXMAP",
    "INDEXTO",
    "LOCATIONMAP",
    "MAPSHOWINGLOCATION",
];

/// Whether a line is a part's caption that begins with its heading ("CROSS SECTION A-A'",
/// "CORRELATION OF MAP UNITS"): never the map's title ("Geologic map and cross sections of …" may be).
pub(super) fn is_heading(text: &str) -> bool {
    let squeezed = letters_only(text);
    caption_class(text).is_some() && HEADINGS.iter().any(|heading| squeezed.starts_with(heading))
}

/// Whether a mark is a letter's prime as printed or read (A′, A', A’, A`).
pub fn is_prime(c: char) -> bool {
    matches!(c, '\'' | '′' | '’' | '`' | '´')
}

/// A cross section's letters as printed ("A-A'", "B–B′"): a capital, a dash, the same capital and a prime.
pub fn section_letters(text: &str) -> Option<(String, String)> {
    let mut chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    chars.push(' ');
    // The prime is small: the reader may drop it ("A-A").
    chars.windows(4).find_map(|w| {
        let dash = matches!(w[1], '-' | '–' | '—' | '‐' | '−');
        let prime = is_prime(w[3]) || w[3] == ' ';
        (w[0].is_ascii_uppercase() && dash && w[2] == w[0] && prime).then(|| (w[0].to_string(), format!("{}′", w[0])))
    })
}

/// Every part the lines caption, with the block beside each; `taken` are the main map, the
/// legends and the title (a caption inside them is not one, and a block stops short of them).
pub(super) fn parts(lines: &[TextLine], image: &Rgb, taken: &[PixelBox]) -> Vec<SheetPart> {
    let mut found: Vec<SheetPart> = Vec::new();
    for line in lines.iter().filter(|line| horizontal(&line.bbox) && line.score >= 0.5) {
        let Some(class) = caption_class(&line.text) else { continue };
        if taken.iter().any(|t| t.x0 <= line.bbox.x0 && line.bbox.x1 <= t.x1 && t.y0 <= line.bbox.y0 && line.bbox.y1 <= t.y1) {
            continue;
        }
        if found.iter().any(|part| overlaps(&part.bbox, &line.bbox)) {
            continue;
        }
        let mut evidence = vec![format!("caption \"{}\"", line.text)];
        // Below first (scales, sections and charts hang under their captions), else above; a block
        // that begins with another figure's caption ("Table 1.") is that figure's.
        let own = |block: &PixelBox| {
            let first = lines.iter().filter(|other| !std::ptr::eq(*other, line) && overlaps(block, &other.bbox)).min_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0));
            !first.is_some_and(|first| ["TABLE", "FIGURE", "FIG."].iter().any(|word| first.text.trim_start().to_uppercase().starts_with(word)))
        };
        let block = block_beside(image, &line.bbox, true, taken).filter(own).or_else(|| block_beside(image, &line.bbox, false, taken).filter(own));
        let bbox = match block {
            Some(block) => {
                evidence.push(format!(
                    "a block of ink and colour {:.0}×{:.0} px {} it",
                    block.x1 - block.x0,
                    block.y1 - block.y0,
                    if block.y0 >= line.bbox.y1 - 1.0 { "below" } else { "above" }
                ));
                union(&line.bbox, &block)
            }
            None => line.bbox,
        };
        let inside: Vec<&TextLine> = lines.iter().filter(|other| !std::ptr::eq(*other, line) && overlaps(&bbox, &other.bbox)).collect();
        if !inside.is_empty() {
            let words: Vec<&str> = inside.iter().take(8).map(|other| other.text.as_str()).collect();
            evidence.push(format!("words inside: {}", words.join(" | ")));
        }
        let letters = (class == "cross_section").then(|| section_letters(&line.text)).flatten();
        let ratio = (class == "scale").then(|| scale_ratio(&line.text)).flatten();
        found.push(SheetPart { class, bbox, caption: line.text.clone(), evidence, letters, ratio });
    }
    found.extend(uncaptioned_sections(lines, image, taken, &found));
    found
}

/// Whether a line is an elevation axis's unit, as a cross section prints it at each end of its strip.
fn axis_unit(text: &str) -> bool {
    matches!(letters_only(text).as_str(), "METERS" | "METRES" | "FEET" | "FT")
}

/// Cross sections printed without a caption: a pair of elevation-axis units ("METERS") on one
/// row, at least ten type heights apart, with ink between them; the strip is the rows around that
/// row that hold ink between the pair, up to one and a half type heights of paper. Its letters are
/// a line such as "B'" within four type heights of either end.
fn uncaptioned_sections(lines: &[TextLine], image: &Rgb, taken: &[PixelBox], found: &[SheetPart]) -> Vec<SheetPart> {
    let units: Vec<&TextLine> = lines.iter().filter(|line| axis_unit(&line.text) && horizontal(&line.bbox)).collect();
    let inside_taken = |b: &PixelBox| taken.iter().any(|t| overlaps(t, b));
    let mut sections: Vec<SheetPart> = Vec::new();
    for (i, left) in units.iter().enumerate() {
        let h = height(&left.bbox).max(4.0);
        // The nearest unit to its right on the same row.
        let right = units[i + 1..]
            .iter()
            .chain(&units[..i])
            .filter(|other| (other.bbox.y0 - left.bbox.y0).abs() < 0.7 * h && other.bbox.x0 - left.bbox.x1 >= 10.0 * h)
            .min_by(|a, b| a.bbox.x0.total_cmp(&b.bbox.x0));
        let Some(right) = right else { continue };
        let row = PixelBox { x0: left.bbox.x0, y0: left.bbox.y0.min(right.bbox.y0), x1: right.bbox.x1, y1: left.bbox.y1.max(right.bbox.y1) };
        if inside_taken(&row) || found.iter().chain(&sections).any(|part| overlaps(&part.bbox, &row)) {
            continue;
        }
        let (x0, x1) = (left.bbox.x1.ceil() as u32, (right.bbox.x0.floor() as u32).min(image.width));
        let has_ink = |y: u32| (x0..x1).any(|x| inked(image, x, y));
        let gap = (1.5 * h) as u32;
        let reach = (40.0 * h) as u32;
        let walk = |down: bool| {
            let start = if down { row.y1 as u32 } else { row.y0 as u32 };
            let (mut edge, mut paper) = (start, 0);
            for step in 0..reach {
                let y = if down { start + step } else { start.saturating_sub(step) };
                if y >= image.height || (!down && y == 0) {
                    break;
                }
                if has_ink(y) {
                    edge = y;
                    paper = 0;
                } else {
                    paper += 1;
                    if paper > gap {
                        break;
                    }
                }
            }
            edge
        };
        let (top, bottom) = (walk(false), walk(true) + 1);
        let bbox = PixelBox { x0: row.x0, y0: f64::from(top).min(row.y0), x1: row.x1, y1: f64::from(bottom).max(row.y1) };
        if inside_taken(&bbox) {
            continue;
        }
        let near_ends =
            |line: &&TextLine| (centre_x(&line.bbox) - bbox.x0).abs().min((centre_x(&line.bbox) - bbox.x1).abs()) <= 4.0 * h && overlaps(&bbox, &line.bbox);
        let letters = lines.iter().filter(near_ends).find_map(|line| {
            let text: String = line.text.chars().filter(|c| !c.is_whitespace()).collect();
            let mut chars = text.chars();
            match (chars.next(), chars.next(), chars.next()) {
                (Some(letter), Some(mark), None) if letter.is_ascii_uppercase() && is_prime(mark) => Some((letter.to_string(), format!("{letter}′"))),
                _ => None,
            }
        });
        let evidence = vec![
            format!("elevation axes \"{}\" and \"{}\" at both ends of one row", left.text, right.text),
            format!("a strip of ink {:.0}×{:.0} px between them", bbox.x1 - bbox.x0, bbox.y1 - bbox.y0),
        ];
        sections.push(SheetPart { class: "cross_section", bbox, caption: String::new(), evidence, letters, ratio: None });
    }
    sections
}

/// The block of ink and colour below (or above) `caption`: the rows that hold anything but paper
/// under the caption (two type heights either side of it), up to one and a half type heights of
/// paper; then the columns of those rows, from the caption's centre outwards up to a gap of one
/// type height, at most forty type heights either side. None when nothing is there, or it runs into `taken`.
fn block_beside(image: &Rgb, caption: &PixelBox, below: bool, taken: &[PixelBox]) -> Option<PixelBox> {
    let h = height(caption).max(4.0);
    let step = (h / 6.0).floor().max(1.0) as u32;
    let (width, image_height) = (image.width as f64, image.height as f64);
    let reach = 40.0 * h;
    let (x_lo, x_hi) = ((centre_x(caption) - reach).max(0.0) as u32, (centre_x(caption) + reach).min(width - 1.0) as u32);
    let ink = |x: u32, y: u32| inked(image, x, y);
    // A row belongs to the block when it has ink under (or over) the caption itself: a frame line or
    // a neighbour's words far to the side do not carry the block on.
    let (near_lo, near_hi) = ((caption.x0 - 2.0 * h).max(0.0) as u32, (caption.x1 + 2.0 * h).min(width - 1.0) as u32);
    let row_has = |y: u32| (near_lo..=near_hi).any(|x| ink(x, y));
    let gap = (1.5 * h) as u32;
    let limit = 60.0 * h;
    let (start, end) =
        if below { (caption.y1 + 0.3 * h, (caption.y1 + limit).min(image_height - 1.0)) } else { (caption.y0 - 0.3 * h, (caption.y0 - limit).max(0.0)) };
    let rows: Vec<u32> = if below {
        (start as u32..=end as u32).step_by(step as usize).collect()
    } else {
        (end as u32..=start.max(0.0) as u32).rev().step_by(step as usize).collect()
    };
    let (mut first, mut last, mut paper) = (None, None, 0u32);
    for &y in &rows {
        if row_has(y) {
            first.get_or_insert(y);
            last = Some(y);
            paper = 0;
        } else {
            paper += step;
            if paper > gap && (first.is_some() || paper > 2 * gap) {
                break;
            }
        }
    }
    let (first, last) = (first?, last?);
    let (y0, y1) = (first.min(last), first.max(last) + 1);
    // Columns of those rows, around the caption's centre, up to a gap of two type heights.
    // Every row of a column: a scale bar's white segments are closed by lines one pixel thin.
    let column_has = |x: u32| (y0..y1).any(|y| ink(x, y));
    let centre = centre_x(caption) as u32;
    let column_gap = h as u32;
    let walk = |forward: bool| {
        let (mut edge, mut paper, mut x) = (centre, 0u32, centre);
        loop {
            if column_has(x) {
                edge = x;
                paper = 0;
            } else {
                paper += step;
                if paper > column_gap && (edge != centre || paper > 6 * gap) {
                    break;
                }
            }
            let next = if forward { x.checked_add(step).filter(|n| *n <= x_hi) } else { x.checked_sub(step).filter(|n| *n >= x_lo) };
            match next {
                Some(n) => x = n,
                None => break,
            }
        }
        edge
    };
    let block = PixelBox { x0: f64::from(walk(false)), y0: f64::from(y0), x1: f64::from(walk(true) + 1), y1: f64::from(y1) };
    let meaningful = block.x1 - block.x0 >= 2.0 * h && block.y1 - block.y0 >= 0.5 * h;
    let clear = !taken.iter().any(|t| {
        let overlap = (block.x1.min(t.x1) - block.x0.max(t.x0)).max(0.0) * (block.y1.min(t.y1) - block.y0.max(t.y0)).max(0.0);
        overlap > 0.2 * block.area()
    });
    (meaningful && clear).then_some(block)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{b, image, line};
    use super::*;

    #[test]
    fn captions_name_their_parts_and_a_section_its_letters() {
        assert_eq!(caption_class("SCALE 1:62 500"), Some("scale"));
        assert_eq!(caption_class("1:24,000"), Some("scale"));
        assert_eq!(caption_class("others, 1997, scale 1:48,000)"), None, "a citation of another map's scale");
        assert_eq!(caption_class("CROSS SECTION A-A'"), Some("cross_section"));
        assert_eq!(caption_class("CORRELATION OF MAP UNITS"), Some("stratigraphic_column"));
        assert_eq!(caption_class("INDEX MAP"), Some("index_map"));
        assert_eq!(caption_class("Index to geologic mapping"), Some("index_map"));
        assert_eq!(caption_class("Fault—Dashed where approximately located"), None);
        assert_eq!(section_letters("CROSS SECTION B–B′"), Some(("B".into(), "B′".into())));
        assert_eq!(section_letters("CROSS SECTION A-A"), Some(("A".into(), "A′".into())), "the prime dropped");
        assert_eq!(section_letters("A-B'"), None);
    }

    #[test]
    fn a_part_is_its_caption_and_the_block_beside_it() {
        // A cross section: its caption, then a coloured strip under it; a caption inside the main map is a place name.
        let picture = image(1200, 900, &[(b(100.0, 420.0, 900.0, 560.0), (200, 160, 120)), (b(0.0, 0.0, 1200.0, 300.0), (150, 200, 150))]);
        let lines = [line("CROSS SECTION A-A'", 380.0, 380.0, 620.0, 400.0), line("SECTION A-A'", 500.0, 100.0, 640.0, 120.0)];
        let found = parts(&lines, &picture, &[b(0.0, 0.0, 1200.0, 300.0)]);
        assert_eq!(found.len(), 1, "{found:?}");
        let part = &found[0];
        assert_eq!((part.class, part.letters.clone()), ("cross_section", Some(("A".into(), "A′".into()))));
        let (bx, strip) = (part.bbox, b(100.0, 380.0, 900.0, 560.0));
        assert!((bx.x0 - strip.x0).abs() <= 4.0 && (bx.x1 - strip.x1).abs() <= 4.0 && (bx.y1 - strip.y1).abs() <= 4.0 && bx.y0 <= 380.0, "{bx:?}");
    }

    #[test]
    fn a_section_without_a_caption_is_found_by_its_elevation_axes() {
        let picture = image(1200, 600, &[(b(160.0, 300.0, 1000.0, 420.0), (200, 160, 120))]);
        let lines = [line("METERS", 100.0, 340.0, 150.0, 352.0), line("METERS", 1010.0, 340.0, 1060.0, 352.0), line("B'", 1010.0, 290.0, 1024.0, 302.0)];
        let found = parts(&lines, &picture, &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].class, found[0].letters.clone()), ("cross_section", Some(("B".into(), "B′".into()))));
        let bbox = found[0].bbox;
        assert!(bbox.x0 <= 100.0 && bbox.x1 >= 1060.0 && bbox.y0 <= 301.0 && bbox.y1 >= 419.0, "{bbox:?}");
        assert!(parts(&lines[..1], &picture, &[]).is_empty(), "one axis alone is no section");
        // The prime read as any of its marks ("A`" on the USGS sheet).
        let lines = [lines[0].clone(), lines[1].clone(), line("A`", 1010.0, 290.0, 1024.0, 302.0)];
        assert_eq!(parts(&lines, &picture, &[])[0].letters, Some(("A".into(), "A′".into())));
    }
}
