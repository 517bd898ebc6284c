//! The explanation of the map's line and point symbols: each entry's words ("Fault—Dashed where
//! approximately located") found by the symbol they begin with, and the sample printed left of
//! them, measured: for a line, its width, colour, pattern (solid, dashed, dotted) and period, and
//! the decorations beside it (teeth, a ball and bar, arrows) with their side; for a point, the
//! number printed beside it. These are the prompts lines and points are extracted with, as the
//! unit swatches are for units.
//!
//! Attitudes listed under a bedding heading ("Strike and dip of beds" over "Inclined",
//! "Vertical") are entries of their own. The symbols, their words and the headings are the
//! catalog's (`geomap_model::symbols`).
//!
//! Invariants: pure functions of the lines and the scan's pixels; an entry needs both its words
//! and a sample (ink left of them); measures scale with the words' type height.

use std::sync::OnceLock;

use geomap_model::symbols::{Symbol, catalog};

use super::swatches::inked;
use super::{height, horizontal, overlaps};
use crate::colour::median_colour;
use crate::image::Rgb;
use crate::ocr::reader::TextLine;
use geomap_model::page::PixelBox;

pub use geomap_model::symbols::Family;

/// How a line is drawn along its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Unbroken.
    Solid,
    /// Dashes longer than two widths.
    Dashed,
    /// Dots.
    Dotted,
}

/// A mark drawn beside a line.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Decoration {
    /// `teeth` (three or more marks along one side), `ball_and_bar` (one filled mark on one side),
    /// `arrows` (marks on both sides at one place) or `marks`.
    pub kind: String,
    /// `above` or `below` the line (the sample drawn left to right), or `both`.
    pub side: String,
    /// How many marks.
    pub count: usize,
}

/// How a line symbol is drawn.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct LineStyle {
    /// The stroke's width in pixels.
    pub width_px: f64,
    /// Its colour, `#rrggbb`.
    pub colour_hex: String,
    /// Solid, dashed or dotted.
    pub pattern: Pattern,
    /// A dash and its gap (or a dot and its gap), in pixels, when broken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_px: Option<f64>,
    /// The marks beside it.
    pub decorations: Vec<Decoration>,
}

/// One entry of the explanation of map symbols.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SymbolEntry {
    /// A line or a point symbol.
    pub kind: Family,
    /// What it is, as its words begin ("fault", "strike and dip of beds"), or as the heading it is
    /// listed under makes it ("Inclined" under "Strike and dip of beds": "inclined bedding").
    pub symbol: String,
    /// Its words, as read.
    pub text: String,
    /// Their box in the scan's pixels.
    pub text_box: PixelBox,
    /// The sample's box.
    pub sample: PixelBox,
    /// How a line sample is drawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<LineStyle>,
    /// The number printed beside a point sample (a dip, say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
}

/// The symbol a line of words begins with: its name or word as the catalog
/// (`geomap_model::symbols`) gives it, the longer first, and its kind, when the name stands alone
/// or is followed by a dash, a colon, a comma or words of its own ("Fault—Dashed where …").
fn symbol_of(text: &str) -> Option<(&'static str, Family)> {
    static BEGINNINGS: OnceLock<Vec<(&'static str, &'static Symbol)>> = OnceLock::new();
    let beginnings = BEGINNINGS.get_or_init(|| catalog().beginnings());
    beginnings.iter().find(|(name, _)| begins_with(text, name)).map(|&(name, symbol)| (name, symbol.family))
}

/// Whether a line of words begins an entry named `name` (lower case): with a capital, the name
/// standing alone or followed by a dash, a colon, a comma or words of its own.
fn begins_with(text: &str, name: &str) -> bool {
    let text = text.trim();
    // An entry begins with a capital; a line that does not continues the one above.
    if !text.chars().next().is_some_and(char::is_uppercase) {
        return false;
    }
    let Some(rest) = text.to_lowercase().strip_prefix(name).map(str::to_owned) else { return false };
    // The reader may run the name into its description ("Collapse structureCircular …").
    let run_together = text.get(name.len()..).and_then(|rest| rest.chars().next()).is_some_and(char::is_uppercase);
    rest.is_empty() || rest.starts_with(['—', '–', '-', ':', ',', ' ', '.', '(']) || run_together
}

/// The attitude a line listed under a bedding heading is ("Inclined—Measured in the field" below
/// "Strike and dip of beds": inclined bedding), with that heading's index among `lines`; `None`
/// for a line that names its symbol in full ("Vertical bedding" is an entry of its own, and the
/// strike-and-dip entry above it no heading).
fn listed_under(lines: &[TextLine], line: &TextLine) -> Option<(&'static str, usize)> {
    if symbol_of(&line.text).is_some() {
        return None;
    }
    let (_, symbol) = catalog().listed().find(|(begins, _)| begins_with(&line.text, begins))?;
    let symbol = symbol.name.as_str();
    // Upwards, line by line (each starting higher than the one below it, within six type heights
    // and under the listed line's words), through the lines listed at its indent before it and
    // their continuations, to the heading, which is not indented further.
    let h = height(&line.bbox);
    let mut below = line;
    loop {
        let (index, above) = lines
            .iter()
            .enumerate()
            .filter(|(_, above)| above.bbox.y0 < below.bbox.y0 && above.bbox.y1 <= below.bbox.y0 + 0.2 * h && below.bbox.y0 - above.bbox.y1 <= 6.0 * h)
            .filter(|(_, above)| above.bbox.x0 < line.bbox.x1 && above.bbox.x1 > line.bbox.x0)
            .max_by(|a, b| a.1.bbox.y1.total_cmp(&b.1.bbox.y1))?;
        if catalog().listing.headings.iter().any(|name| begins_with(&above.text, name)) {
            return (above.bbox.x0 <= line.bbox.x0 + 0.5 * h).then_some((symbol, index));
        }
        let continues = !above.text.trim().chars().next().is_some_and(char::is_uppercase);
        let sibling = catalog().listed().any(|(begins, _)| begins_with(&above.text, begins)) && (above.bbox.x0 - line.bbox.x0).abs() <= 0.5 * h;
        if !continues && !sibling {
            return None;
        }
        below = above;
    }
}

/// Every entry of the explanation: lines of words that begin with a symbol, or that are listed
/// under a bedding heading ([`listed_under`]: the heading's own entry is then dropped), and have a
/// sample left of them, outside `taken` (the main map, the legends).
pub(super) fn symbol_entries(lines: &[TextLine], image: &Rgb, taken: &[PixelBox]) -> Vec<SymbolEntry> {
    let mut entries = Vec::new();
    // Headings whose attitudes are listed below them: the listed lines are the entries.
    let mut headings = Vec::new();
    for line in lines.iter().filter(|line| horizontal(&line.bbox) && line.score >= 0.5) {
        let listed = listed_under(lines, line);
        let Some((name, kind)) = listed.map(|(symbol, _)| (symbol, Family::Point)).or_else(|| symbol_of(&line.text)) else { continue };
        if taken.iter().any(|t| overlaps(t, &line.bbox)) {
            continue;
        }
        let h = height(&line.bbox);
        // Other words are not the sample; a number or a lone letter may be (the reader takes a dip's
        // symbol with its number, or a pipe's circle for an O), so their ink stays.
        let words = |text: &str| text.chars().filter(|c| c.is_alphabetic()).count() >= 2;
        let others: Vec<&PixelBox> = lines.iter().filter(|other| !std::ptr::eq(*other, line) && words(&other.text)).map(|other| &other.bbox).collect();
        let Some(sample) = sample_left_of(image, &line.bbox, &others) else { continue };
        let (width, tall) = (sample.x1 - sample.x0, sample.y1 - sample.y0);
        // The sample's shape has the last word: a long thin one is a line whatever the words say,
        // unless they name a point symbol with its number printed beside it (a strike line and its
        // dip); a point's name asks for a longer, thinner sample (a strike line is long too).
        let number = number_beside(lines, &sample, h);
        let (named_point, thin) = (kind == Family::Point, if kind == Family::Point { 5.0 } else { 3.0 });
        let kind = if width >= thin * tall && width >= 2.0 * h && !(named_point && number.is_some()) {
            Family::Line
        } else if kind == Family::Line && width < 1.5 * h {
            Family::Point
        } else {
            kind
        };
        let line_style = (kind == Family::Line).then(|| line_style(image, &sample));
        let number = number.filter(|_| kind == Family::Point);
        entries.push(SymbolEntry { kind, symbol: name.to_owned(), text: line.text.clone(), text_box: line.bbox, sample, line: line_style, number });
        headings.extend(listed.map(|(_, heading)| lines[heading].bbox));
    }
    entries.retain(|entry| !headings.contains(&entry.text_box));
    entries
}

/// The ink left of a line of words: within twelve type heights of its start, from half a type
/// height above to half below, clear of other words, the cluster nearest the words.
fn sample_left_of(image: &Rgb, words: &PixelBox, others: &[&PixelBox]) -> Option<PixelBox> {
    let h = height(words);
    let window = PixelBox {
        x0: (words.x0 - 12.0 * h).max(0.0),
        y0: (words.y0 - 0.6 * h).max(0.0),
        x1: words.x0 - 0.4 * h,
        y1: (words.y1 + 0.6 * h).min(f64::from(image.height)),
    };
    if window.x1 <= window.x0 + 2.0 {
        return None;
    }
    let (x0, y0, x1, y1) = window.pixels(image.width, image.height);
    let in_words = |x: u32, y: u32| others.iter().any(|o| f64::from(x) >= o.x0 && f64::from(x) < o.x1 && f64::from(y) >= o.y0 && f64::from(y) < o.y1);
    let ink = |x: u32, y: u32| inked(image, x, y) && !in_words(x, y);
    // The ink nearest the words: from the last inked column leftwards, up to a gap of one and a
    // half type heights (a frame line or a neighbour further left is not the sample).
    let inked: Vec<bool> = (x0..x1).map(|x| (y0..y1).any(|y| ink(x, y))).collect();
    let right = inked.iter().rposition(|i| *i)?;
    let gap = (1.5 * h) as usize;
    let mut left = right;
    let mut paper = 0;
    for i in (0..right).rev() {
        if inked[i] {
            left = i;
            paper = 0;
        } else {
            paper += 1;
            if paper > gap {
                break;
            }
        }
    }
    let (sx0, sx1) = (x0 + left as u32, x0 + right as u32 + 1);
    let rows: Vec<u32> = (y0..y1).filter(|&y| (sx0..sx1).any(|x| ink(x, y))).collect();
    let count: usize = rows.iter().map(|&y| (sx0..sx1).filter(|&x| ink(x, y)).count()).sum();
    let (&top, &bottom) = (rows.first()?, rows.last()?);
    (count as f64 >= 0.5 * h).then(|| PixelBox { x0: f64::from(sx0), y0: f64::from(top), x1: f64::from(sx1), y1: f64::from(bottom + 1) })
}

/// Measures a line sample: the stroke is the band of rows with the most ink; its pattern is read
/// along the band; marks outside it are decorations.
fn line_style(image: &Rgb, sample: &PixelBox) -> LineStyle {
    let (x0, y0, x1, y1) = sample.pixels(image.width, image.height);
    let ink = |x: u32, y: u32| inked(image, x, y);
    let per_row: Vec<usize> = (y0..y1).map(|y| (x0..x1).filter(|&x| ink(x, y)).count()).collect();
    let (peak_at, peak) = per_row.iter().enumerate().max_by_key(|(_, n)| **n).map(|(i, n)| (i, *n)).unwrap_or((0, 0));
    let strong = |i: usize| per_row.get(i).is_some_and(|n| *n * 2 >= peak);
    let (mut top, mut bottom) = (peak_at, peak_at);
    while top > 0 && strong(top - 1) {
        top -= 1;
    }
    while strong(bottom + 1) {
        bottom += 1;
    }
    let (band0, band1) = (y0 + top as u32, y0 + bottom as u32 + 1);
    let width_px = f64::from(band1 - band0);
    let colour = median_colour((band0..band1).flat_map(|y| (x0..x1).filter(move |&x| ink(x, y)).map(move |x| (x, y))).map(|(x, y)| {
        let at = ((y * image.width + x) * 3) as usize;
        (image.pixels[at], image.pixels[at + 1], image.pixels[at + 2])
    }))
    .unwrap_or((0, 0, 0));
    // Along the band: runs of inked columns and of gaps between them.
    let inked: Vec<bool> = (x0..x1).map(|x| (band0..band1).any(|y| ink(x, y))).collect();
    let runs = runs_of(&inked);
    let dashes: Vec<usize> = runs.iter().filter(|r| r.0).map(|r| r.1).collect();
    let inner_gaps: Vec<usize> = {
        let trimmed: Vec<&(bool, usize)> = runs.iter().skip_while(|r| !r.0).collect();
        let end = trimmed.iter().rposition(|r| r.0).map_or(0, |i| i + 1);
        trimmed[..end].iter().filter(|r| !r.0).map(|r| r.1).collect()
    };
    let mean = |values: &[usize]| values.iter().sum::<usize>() as f64 / values.len().max(1) as f64;
    let (pattern, period_px) = if inner_gaps.iter().all(|g| *g <= 1) || dashes.len() < 2 {
        (Pattern::Solid, None)
    } else {
        let dash = mean(&dashes);
        let pattern = if dash <= 2.0 * width_px.max(1.0) { Pattern::Dotted } else { Pattern::Dashed };
        (pattern, Some(dash + mean(&inner_gaps)))
    };
    LineStyle { width_px, colour_hex: crate::colour::hex(colour), pattern, period_px, decorations: decorations(&ink, (x0, x1), (y0, y1), (band0, band1)) }
}

/// Runs of equal values: (value, length), in order.
fn runs_of(values: &[bool]) -> Vec<(bool, usize)> {
    let mut runs: Vec<(bool, usize)> = Vec::new();
    for &value in values {
        match runs.last_mut() {
            Some((last, length)) if *last == value => *length += 1,
            _ => runs.push((value, 1)),
        }
    }
    runs
}

/// Marks beside the stroke band: clusters of inked columns above it and below it (a gap of a
/// column ends one).
fn decorations(ink: &dyn Fn(u32, u32) -> bool, (x0, x1): (u32, u32), (y0, y1): (u32, u32), (band0, band1): (u32, u32)) -> Vec<Decoration> {
    let clusters = |rows: std::ops::Range<u32>| -> Vec<(u32, u32, usize)> {
        let marked: Vec<bool> = (x0..x1).map(|x| rows.clone().any(|y| ink(x, y))).collect();
        let mut found = Vec::new();
        let mut at = x0;
        for (value, length) in runs_of(&marked) {
            if value {
                let filled = (at..at + length as u32).map(|x| rows.clone().filter(|&y| ink(x, y)).count()).sum();
                found.push((at, at + length as u32, filled));
            }
            at += length as u32;
        }
        found
    };
    // One pixel off the band, so its antialiased edge is not a mark.
    let above = clusters(y0..band0.saturating_sub(1).max(y0));
    let below = clusters((band1 + 1).min(y1)..y1);
    let describe = |marks: &[(u32, u32, usize)], side: &str| -> Option<Decoration> {
        match marks.len() {
            0 => None,
            1 | 2 => {
                let (a, b, filled) = marks[0];
                let solid = filled as f64 >= 0.5 * f64::from((b - a).max(1)) * f64::from((band0 - y0).max(y1 - band1).max(1));
                Some(Decoration {
                    kind: if marks.len() == 1 && solid { "ball_and_bar" } else { "marks" }.to_owned(),
                    side: side.to_owned(),
                    count: marks.len(),
                })
            }
            n => Some(Decoration { kind: "teeth".to_owned(), side: side.to_owned(), count: n }),
        }
    };
    let facing = |a: &(u32, u32, usize), b: &(u32, u32, usize)| a.0 < b.1 && b.0 < a.1;
    if !above.is_empty() && above.len() <= 2 && above.len() == below.len() && above.iter().zip(&below).all(|(a, b)| facing(a, b)) {
        return vec![Decoration { kind: "arrows".to_owned(), side: "both".to_owned(), count: above.len() + below.len() }];
    }
    describe(&above, "above").into_iter().chain(describe(&below, "below")).collect()
}

/// The number printed beside a point sample: a line of one to three digits (a stray mark aside,
/// [`super::numbers::printed_number`]) within two type heights.
fn number_beside(lines: &[TextLine], sample: &PixelBox, h: f64) -> Option<String> {
    let near = PixelBox { x0: sample.x0 - 2.0 * h, y0: sample.y0 - 2.0 * h, x1: sample.x1 + 2.0 * h, y1: sample.y1 + 2.0 * h };
    lines.iter().filter(|line| overlaps(&near, &line.bbox)).find_map(|line| super::numbers::printed_number(&line.text)).map(|number| number.to_string())
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{b, image, line, paint};
    use super::*;

    #[test]
    fn an_entry_begins_with_its_symbol() {
        assert_eq!(symbol_of("Fault—Dashed where approximately located"), Some(("fault", Family::Line)));
        assert_eq!(symbol_of("Thrust fault—Teeth on upper plate"), Some(("thrust fault", Family::Line)));
        assert_eq!(symbol_of("Strike and dip of beds"), Some(("strike and dip of beds", Family::Point)));
        assert_eq!(symbol_of("Faulted basalt flows (Miocene)"), None);
        assert_eq!(symbol_of("Mineralized zone"), None);
        assert_eq!(symbol_of("reverse fault. Faults shown bounding surficial deposits"), None, "a continuation line");
        assert_eq!(symbol_of("Collapse structureCircular collapse structures"), Some(("collapse structure", Family::Point)));
    }

    #[test]
    fn line_samples_are_measured_and_a_point_reads_its_number() {
        let mut picture = image(900, 400, &[]);
        // A solid contact 2 px wide; a dashed fault 4 px wide (dashes of 20, gaps of 10); a thrust with
        // four teeth below; a strike-and-dip sample with "35" beside it.
        paint(&mut picture, &[(b(100.0, 49.0, 220.0, 51.0), (0, 0, 0))]);
        for k in 0..4 {
            let x = 100.0 + 30.0 * f64::from(k);
            paint(&mut picture, &[(b(x, 118.0, x + 20.0, 122.0), (200, 0, 0))]);
        }
        paint(&mut picture, &[(b(100.0, 188.0, 220.0, 192.0), (0, 0, 0))]);
        for k in 0..4 {
            let x = 105.0 + 30.0 * f64::from(k);
            paint(&mut picture, &[(b(x, 193.0, x + 8.0, 201.0), (0, 0, 0))]);
        }
        paint(&mut picture, &[(b(150.0, 268.0, 180.0, 271.0), (0, 0, 0)), (b(164.0, 271.0, 167.0, 282.0), (0, 0, 0))]);
        // A frame line further left, within reach of every sample's window: not part of any.
        paint(&mut picture, &[(b(20.0, 0.0, 23.0, 400.0), (0, 0, 0))]);
        let lines = [
            line("Contact", 250.0, 40.0, 340.0, 60.0),
            line("Fault—Dashed where approximately located", 250.0, 110.0, 700.0, 130.0),
            line("Thrust fault—Teeth on upper plate", 250.0, 180.0, 650.0, 200.0),
            line("Strike and dip of beds", 250.0, 260.0, 500.0, 280.0),
            line("35", 185.0, 262.0, 205.0, 278.0),
        ];
        let entries = symbol_entries(&lines, &picture, &[]);
        assert_eq!(entries.len(), 4, "{entries:?}");
        let contact = entries[0].line.as_ref().unwrap();
        assert_eq!((contact.pattern, contact.width_px, contact.colour_hex.as_str()), (Pattern::Solid, 2.0, "#000000"));
        assert!(entries.iter().all(|entry| entry.sample.x0 >= 100.0), "{entries:?}");
        let fault = entries[1].line.as_ref().unwrap();
        assert_eq!((fault.pattern, fault.period_px, fault.colour_hex.as_str()), (Pattern::Dashed, Some(30.0), "#c80000"));
        let thrust = entries[2].line.as_ref().unwrap();
        assert_eq!(thrust.decorations, [Decoration { kind: "teeth".into(), side: "below".into(), count: 4 }], "{thrust:?}");
        assert_eq!((entries[3].kind, entries[3].number.as_deref()), (Family::Point, Some("35")));
    }

    #[test]
    fn attitudes_listed_under_a_bedding_heading_are_its_entries() {
        let mut picture = image(900, 400, &[]);
        // A heading with a stray mark left of it; below it, indented, an inclined strike line with
        // its tick and "12", and a vertical one with a tick on each side.
        paint(&mut picture, &[(b(200.0, 30.0, 206.0, 36.0), (0, 0, 0))]);
        paint(&mut picture, &[(b(150.0, 78.0, 180.0, 81.0), (0, 0, 0)), (b(164.0, 81.0, 167.0, 92.0), (0, 0, 0))]);
        paint(&mut picture, &[(b(150.0, 168.0, 180.0, 171.0), (0, 0, 0)), (b(164.0, 158.0, 167.0, 181.0), (0, 0, 0))]);
        // Further down, unindented and far below the heading: a line that only begins like one listed.
        paint(&mut picture, &[(b(150.0, 338.0, 180.0, 341.0), (0, 0, 0))]);
        let lines = [
            line("Strike and dip of beds", 230.0, 22.0, 500.0, 42.0),
            line("Inclined—Measured in the field", 260.0, 70.0, 600.0, 90.0),
            line("12", 185.0, 72.0, 205.0, 88.0),
            line("Vertical", 260.0, 160.0, 400.0, 180.0),
            line("Horizontal gravel terraces", 260.0, 330.0, 560.0, 350.0),
        ];
        let entries = symbol_entries(&lines, &picture, &[]);
        let named: Vec<(&str, &str, Option<&str>)> = entries.iter().map(|e| (e.symbol.as_str(), e.text.as_str(), e.number.as_deref())).collect();
        assert_eq!(named, [("inclined bedding", "Inclined—Measured in the field", Some("12")), ("vertical bedding", "Vertical", None)], "{entries:?}");
        assert!(entries.iter().all(|e| e.kind == Family::Point));

        // Under the list, less indented and within reach of the heading: a unit's words. A thin
        // dash read just above the listed line is passed (the walk always goes upwards). Under a
        // foliation heading, "Vertical" is no bedding.
        let lines = [
            line("Strike and dip of beds", 230.0, 22.0, 500.0, 42.0),
            line("—", 262.0, 66.0, 275.0, 69.0),
            line("Inclined—Measured in the field", 260.0, 70.0, 600.0, 90.0),
            line("Vertical", 260.0, 160.0, 400.0, 180.0),
            line("Horizontal gravel terraces", 230.0, 220.0, 560.0, 240.0),
        ];
        paint(&mut picture, &[(b(150.0, 228.0, 180.0, 231.0), (0, 0, 0))]);
        let named: Vec<String> = symbol_entries(&lines, &picture, &[]).into_iter().map(|e| e.symbol).collect();
        assert_eq!(named, ["inclined bedding", "vertical bedding"]);
        let lines = [line("Strike and dip of foliation", 230.0, 120.0, 500.0, 140.0), line("Vertical", 260.0, 160.0, 400.0, 180.0)];
        assert!(symbol_entries(&lines, &picture, &[]).iter().all(|e| e.symbol != "vertical bedding"));

        // Lines that name their symbol in full are entries of their own: the strike-and-dip
        // entry above them keeps its sample and is no heading.
        let mut picture = image(900, 400, &[]);
        for top in [30.0, 80.0, 130.0] {
            paint(&mut picture, &[(b(150.0, top + 8.0, 180.0, top + 11.0), (0, 0, 0)), (b(164.0, top, 167.0, top + 19.0), (0, 0, 0))]);
        }
        let lines = [
            line("Strike and dip of beds", 230.0, 30.0, 500.0, 50.0),
            line("Vertical bedding", 230.0, 80.0, 450.0, 100.0),
            line("Horizontal bedding", 230.0, 130.0, 470.0, 150.0),
        ];
        let named: Vec<String> = symbol_entries(&lines, &picture, &[]).into_iter().map(|e| e.symbol).collect();
        assert_eq!(named, ["strike and dip of beds", "vertical bedding", "horizontal bedding"]);
    }
}
