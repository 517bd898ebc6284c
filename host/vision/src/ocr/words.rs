//! A map's layout read from its words and colours, for servers without PEACE's
//! detectors: the legend from its heading and its column of unit codes beside
//! descriptions, each swatch's colour from the area around its code, the main
//! map as the largest region of coloured polygons, and the title as the
//! largest type in the margins.
//!
//! Invariant: pure functions of the recognised lines and the scan's pixels;
//! every threshold is relative to the type's height, so the rules hold at any
//! scan resolution.

use crate::detect::Rgb;
use crate::detect::legend::{delta_e, lab, median_colour};
use crate::ocr::reader::Line;
use geomap_model::layout::PixelBox;

/// Headings that open a legend, written without spaces.
const HEADINGS: [&str; 6] = ["EXPLANATION", "LISTOFMAPUNITS", "DESCRIPTIONOFMAPUNITS", "CORRELATIONOFMAPUNITS", "LEGEND", "图例"];
/// Fewest codes in a column for it to be a legend without a heading above it.
const MIN_COLUMN: usize = 3;
/// A colour this close (CIE76 ΔE) to a sampled colour belongs to the same swatch.
const SAME_COLOUR: f64 = 12.0;

/// The layout the words give.
#[derive(Debug, Clone, PartialEq)]
pub struct WordsLayout {
    /// The title, when one line of large type stands out in the margins.
    pub title: Option<TitleText>,
    /// Every legend column found.
    pub legends: Vec<TextLegend>,
    /// The largest region of coloured polygons outside the legends.
    pub main_map: Option<PixelBox>,
}

/// The title's words and box.
#[derive(Debug, Clone, PartialEq)]
pub struct TitleText {
    /// Its lines, joined.
    pub text: String,
    /// Their box.
    pub bbox: PixelBox,
}

/// One legend column.
#[derive(Debug, Clone, PartialEq)]
pub struct TextLegend {
    /// Its heading, codes, descriptions and swatches together.
    pub bbox: PixelBox,
    /// The heading above it, as read, when there is one.
    pub heading: Option<String>,
    /// Its units, top to bottom.
    pub entries: Vec<UnitEntry>,
}

/// One unit of a legend.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitEntry {
    /// The unit's code, as read ("Qal", "Pk").
    pub code: String,
    /// The code's box.
    pub code_box: PixelBox,
    /// The description's lines, joined.
    pub description: String,
    /// The description's box.
    pub description_box: PixelBox,
    /// The swatch: the area of the code's colour around it (the code's own box when it sits on paper).
    pub swatch: PixelBox,
    /// The swatch's colour; none when the code sits on paper with no coloured box beside it.
    pub colour: Option<(u8, u8, u8)>,
}

/// Reads the layout from `lines` (the whole scan's) and the scan's pixels.
pub fn read_layout(lines: &[Line], image: &Rgb) -> WordsLayout {
    let legends = legends(lines, image);
    let legend_boxes: Vec<PixelBox> = legends.iter().map(|legend| legend.bbox).collect();
    let main_map = main_map(image, &legend_boxes);
    let title = title(lines, main_map.as_ref(), &legend_boxes);
    WordsLayout { title, legends, main_map }
}

/// The heading `text` reads as (spaces, punctuation and case aside; up to one slip in six letters).
pub fn legend_heading(text: &str) -> Option<&'static str> {
    let letters: String =
        text.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_uppercase).map(|c| if c == '1' || c == '|' { 'I' } else { c }).collect();
    let letters = letters.replace('0', "O");
    HEADINGS.into_iter().find(|heading| {
        let allowed = heading.chars().count().div_ceil(6);
        letters.chars().count().abs_diff(heading.chars().count()) <= allowed && strsim::levenshtein(&letters, heading) <= allowed
    })
}

/// `text` as a unit code ("Qal", "TRm", "Pk", "Tbmi"), or `None`: a capital letter then up to
/// five letters or digits, not a capitalised word of five letters or more ("Basalt", "Price").
pub fn unit_code(text: &str) -> Option<String> {
    let code = text.trim().trim_end_matches(['.', ',', ':', ';']);
    let mut chars = code.chars();
    let first = chars.next()?;
    let rest: Vec<char> = chars.collect();
    let shaped = first.is_ascii_uppercase() && rest.len() <= 5 && rest.iter().all(|c| c.is_ascii_alphanumeric());
    let word_like = rest.len() >= 4 && rest.iter().all(|c| c.is_ascii_lowercase());
    (shaped && !word_like).then(|| code.to_owned())
}

fn height(bbox: &PixelBox) -> f64 {
    bbox.y1 - bbox.y0
}

fn centre_y(bbox: &PixelBox) -> f64 {
    (bbox.y0 + bbox.y1) / 2.0
}

fn union(a: &PixelBox, b: &PixelBox) -> PixelBox {
    PixelBox { x0: a.x0.min(b.x0), y0: a.y0.min(b.y0), x1: a.x1.max(b.x1), y1: a.y1.max(b.y1) }
}

fn overlaps(a: &PixelBox, b: &PixelBox) -> bool {
    a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

/// A code and the first line of its description, on one row.
struct Candidate {
    code: usize,
    first: usize,
}

/// Every legend column: codes with a description to their right, aligned in a column.
fn legends(lines: &[Line], image: &Rgb) -> Vec<TextLegend> {
    let codes: Vec<usize> = (0..lines.len()).filter(|&i| unit_code(&lines[i].text).is_some()).collect();
    let mut candidates: Vec<Candidate> = codes
        .iter()
        .filter_map(|&code| {
            let c = &lines[code].bbox;
            let h = height(c);
            (0..lines.len())
                .filter(|&d| {
                    let b = &lines[d].bbox;
                    let shared_rows = (c.y1.min(b.y1) - c.y0.max(b.y0)).max(0.0);
                    let words = lines[d].text.chars().filter(|ch| ch.is_alphabetic()).count();
                    d != code
                        && unit_code(&lines[d].text).is_none()
                        && words >= 4
                        && shared_rows >= 0.5 * h.min(height(b))
                        && b.x0 >= c.x1 - 0.2 * h
                        && b.x0 - c.x1 <= 3.0 * h
                })
                .min_by(|&a, &b| lines[a].bbox.x0.total_cmp(&lines[b].bbox.x0))
                .map(|first| Candidate { code, first })
        })
        .collect();
    candidates.sort_by(|a, b| centre_x(&lines[a.code].bbox).total_cmp(&centre_x(&lines[b.code].bbox)));
    let mut columns: Vec<Vec<Candidate>> = Vec::new();
    for candidate in candidates {
        let bbox = &lines[candidate.code].bbox;
        match columns.last_mut() {
            Some(column) if (centre_x(bbox) - centre_x(&lines[column[0].code].bbox)).abs() <= 1.5 * height(bbox) => column.push(candidate),
            _ => columns.push(vec![candidate]),
        }
    }
    let headings: Vec<&Line> = lines.iter().filter(|line| legend_heading(&line.text).is_some()).collect();
    columns
        .into_iter()
        .filter_map(|mut column| {
            column.sort_by(|a, b| lines[a.code].bbox.y0.total_cmp(&lines[b.code].bbox.y0));
            // The same code seen twice (two tiles, or a code inside a code's box): keep the first.
            column.dedup_by(|later, kept| overlaps(&lines[later.code].bbox, &lines[kept.code].bbox) || later.first == kept.first);
            let top = column.first().map(|c| lines[c.code].bbox)?;
            let span = column.iter().fold(top, |acc, c| union(&union(&acc, &lines[c.code].bbox), &lines[c.first].bbox));
            let heading = headings
                .iter()
                .filter(|h| h.bbox.y1 <= top.y0 + 1.0 && top.y0 - h.bbox.y1 <= 12.0 * height(&top) && h.bbox.x1 > span.x0 && h.bbox.x0 < span.x1)
                .min_by(|a, b| (top.y0 - a.bbox.y1).total_cmp(&(top.y0 - b.bbox.y1)));
            if column.len() < MIN_COLUMN && !(heading.is_some() && column.len() >= 2) {
                return None;
            }
            let entries = entries(lines, &column, image);
            if entries.iter().filter(|e| e.colour.is_some()).count() * 2 < entries.len() {
                return None; // codes on paper: a table or an index, not a legend
            }
            let mut bbox = entries.iter().fold(span, |acc, e| union(&union(&acc, &e.swatch), &e.description_box));
            if let Some(heading) = heading {
                bbox = union(&bbox, &heading.bbox);
            }
            Some(TextLegend { bbox, heading: heading.map(|h| h.text.clone()), entries })
        })
        .collect()
}

fn centre_x(bbox: &PixelBox) -> f64 {
    (bbox.x0 + bbox.x1) / 2.0
}

/// The entries of one column: each code's description runs from its row down through the lines
/// that continue it (indented, or after an open parenthesis or a hyphen), up to the next code.
fn entries(lines: &[Line], column: &[Candidate], image: &Rgb) -> Vec<UnitEntry> {
    let taken: Vec<usize> = column.iter().flat_map(|c| [c.code, c.first]).collect();
    column
        .iter()
        .enumerate()
        .map(|(index, candidate)| {
            let code_box = lines[candidate.code].bbox;
            let first = &lines[candidate.first];
            let h = height(&first.bbox);
            let next_row = column.get(index + 1).map_or(f64::INFINITY, |next| lines[next.code].bbox.y0.min(lines[next.first].bbox.y0));
            let mut parts = vec![first.text.clone()];
            let mut description_box = first.bbox;
            let mut last = first.bbox;
            loop {
                let open = parts.join(" ");
                let unfinished = open.matches('(').count() > open.matches(')').count() || open.ends_with(['-', ',']);
                let next = (0..lines.len())
                    .filter(|i| !taken.contains(i))
                    .map(|i| &lines[i])
                    .filter(|l| {
                        let b = &l.bbox;
                        centre_y(b) > last.y1
                            && b.y0 - last.y1 <= 0.8 * h
                            && centre_y(b) < next_row
                            && b.x0 >= first.bbox.x0 - 0.5 * h
                            && b.x0 <= first.bbox.x0 + 4.0 * h
                    })
                    .min_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0));
                match next {
                    Some(line) if !is_section_heading(&line.text) && (unfinished || line.bbox.x0 >= first.bbox.x0 + 0.4 * h) => {
                        parts.push(line.text.clone());
                        description_box = union(&description_box, &line.bbox);
                        last = line.bbox;
                    }
                    _ => break,
                }
            }
            let (swatch, colour) = swatch(image, &code_box);
            UnitEntry { code: unit_code(&lines[candidate.code].text).unwrap_or_default(), code_box, description: join(&parts), description_box, swatch, colour }
        })
        .collect()
}

/// A legend's section heading ("VOLCANIC ROCKS"): capitals only, which no description's continuation is.
fn is_section_heading(text: &str) -> bool {
    text.chars().filter(|c| c.is_alphabetic()).count() >= 6 && !text.chars().any(char::is_lowercase)
}

/// Lines of one description as one text: a word a hyphen split is rejoined.
fn join(parts: &[String]) -> String {
    let mut text = String::new();
    for part in parts {
        let part = part.trim();
        if text.ends_with('-') && part.starts_with(|c: char| c.is_lowercase()) {
            text.pop();
        } else if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(part);
    }
    text
}

/// The pixels of `bbox` (clipped to the image).
fn pixels<'a>(image: &'a Rgb, bbox: &PixelBox) -> impl Iterator<Item = (u8, u8, u8)> + 'a {
    let (x0, y0, x1, y1) = bbox.pixels(image.width, image.height);
    (y0..y1)
        .flat_map(move |y| (x0..x1).map(move |x| (y * image.width + x) as usize * 3))
        .map(|at| (image.pixels[at], image.pixels[at + 1], image.pixels[at + 2]))
}

/// The median colour of the brighter half of `bbox`'s pixels: a swatch's ground, not its printed code.
pub fn ground_colour(image: &Rgb, bbox: &PixelBox) -> Option<(u8, u8, u8)> {
    let mut found: Vec<(u32, (u8, u8, u8))> = pixels(image, bbox).map(|p| (p.0 as u32 * 299 + p.1 as u32 * 587 + p.2 as u32 * 114, p)).collect();
    found.sort_unstable_by_key(|(luminance, _)| *luminance);
    median_colour(found[found.len() / 2..].iter().map(|(_, pixel)| *pixel))
}

/// Paper: nearly white and grey.
fn is_paper(colour: (u8, u8, u8)) -> bool {
    let [l, a, b] = lab(colour);
    l > 92.0 && a.hypot(b) < 8.0
}

/// The swatch of a code: the area of one colour around it (or, when the code sits on paper,
/// the coloured box left of it), grown from the code out while its edges keep that colour.
fn swatch(image: &Rgb, code: &PixelBox) -> (PixelBox, Option<(u8, u8, u8)>) {
    let h = height(code);
    let around = PixelBox { x0: code.x0 - 0.3 * h, y0: code.y0 - 0.3 * h, x1: code.x1 + 0.3 * h, y1: code.y1 + 0.3 * h };
    let mut seed = *code;
    let mut colour = ground_colour(image, &around).unwrap_or((255, 255, 255));
    if is_paper(colour) {
        let left = PixelBox { x0: code.x0 - 4.0 * h, y0: code.y0, x1: code.x0 - 0.3 * h, y1: code.y1 };
        let coloured: Vec<(u8, u8, u8)> = pixels(image, &left).filter(|p| !is_paper(*p) && lab(*p)[0] > 25.0).collect();
        let enough = coloured.len() * 3 >= pixels(image, &left).count();
        if let Some(found) = median_colour(coloured).filter(|_| enough) {
            colour = found;
            let target = lab(colour);
            let rows = (code.y0 + 0.25 * h, code.y1 - 0.25 * h);
            let (from, to) = (left.x0.max(0.0).floor() as u32, left.x1.max(0.0).floor() as u32);
            let nearest = (from..to).rev().map(|x| PixelBox { x0: x as f64, y0: rows.0, x1: x as f64 + 1.0, y1: rows.1 }).find(|column| {
                let (total, same) = pixels(image, column).fold((0, 0), |(t, s), p| (t + 1, s + (delta_e(lab(p), target) <= SAME_COLOUR) as usize));
                same * 2 >= total && total > 0
            });
            match nearest {
                Some(column) => seed = column,
                None => return (*code, None),
            }
        } else {
            return (*code, None);
        }
    }
    (grow(image, seed, colour, h), Some(colour))
}

/// `seed` grown a pixel at a time on each side while at least half of the new edge is `colour`
/// (its code's ink aside), up to four type heights each way.
fn grow(image: &Rgb, seed: PixelBox, colour: (u8, u8, u8), h: f64) -> PixelBox {
    let target = lab(colour);
    let matches = |edge: PixelBox| {
        let (total, same) = pixels(image, &edge).fold((0, 0), |(t, s), p| (t + 1, s + (delta_e(lab(p), target) <= SAME_COLOUR) as usize));
        total > 0 && same * 2 >= total
    };
    let limit = 4.0 * h;
    let mut bbox = seed;
    let (width, height) = (image.width as f64, image.height as f64);
    let mut growing = [true; 4];
    while growing.iter().any(|g| *g) {
        if growing[0] && bbox.x0 >= 1.0 && seed.x0 - bbox.x0 < limit && matches(PixelBox { x0: bbox.x0 - 1.0, x1: bbox.x0, ..bbox }) {
            bbox.x0 -= 1.0;
        } else {
            growing[0] = false;
        }
        if growing[1] && bbox.x1 + 1.0 <= width && bbox.x1 - seed.x1 < limit && matches(PixelBox { x0: bbox.x1, x1: bbox.x1 + 1.0, ..bbox }) {
            bbox.x1 += 1.0;
        } else {
            growing[1] = false;
        }
        if growing[2] && bbox.y0 >= 1.0 && seed.y0 - bbox.y0 < limit && matches(PixelBox { y0: bbox.y0 - 1.0, y1: bbox.y0, ..bbox }) {
            bbox.y0 -= 1.0;
        } else {
            growing[2] = false;
        }
        if growing[3] && bbox.y1 + 1.0 <= height && bbox.y1 - seed.y1 < limit && matches(PixelBox { y0: bbox.y1, y1: bbox.y1 + 1.0, ..bbox }) {
            bbox.y1 += 1.0;
        } else {
            growing[3] = false;
        }
    }
    PixelBox { x0: bbox.x0.floor(), y0: bbox.y0.floor(), x1: bbox.x1.ceil(), y1: bbox.y1.ceil() }
}

/// The cells of the coarse grid the main map is looked for in, per longer side.
const GRID: u32 = 256;

/// The largest connected region of coloured cells outside the legends, when it covers at least
/// 2% of the scan: a cell is coloured when most of it is neither paper, grey nor ink.
fn main_map(image: &Rgb, legends: &[PixelBox]) -> Option<PixelBox> {
    let cell = (image.width.max(image.height).div_ceil(GRID)).max(1);
    let (columns, rows) = (image.width.div_ceil(cell) as usize, image.height.div_ceil(cell) as usize);
    let mut coloured = vec![false; columns * rows];
    for row in 0..rows {
        for column in 0..columns {
            let bbox = PixelBox {
                x0: (column as u32 * cell) as f64,
                y0: (row as u32 * cell) as f64,
                x1: ((column as u32 + 1) * cell).min(image.width) as f64,
                y1: ((row as u32 + 1) * cell).min(image.height) as f64,
            };
            if legends.iter().any(|legend| overlaps(legend, &bbox)) {
                continue;
            }
            let (total, hits) = pixels(image, &bbox).step_by(3).fold((0, 0), |(t, c), (r, g, b)| {
                let chroma = r.max(g).max(b) - r.min(g).min(b);
                (t + 1, c + (chroma >= 24 && r.max(g).max(b) >= 60) as usize)
            });
            coloured[row * columns + column] = hits * 2 >= total && total > 0;
        }
    }
    let mut seen = vec![false; coloured.len()];
    let mut best: Option<(usize, (usize, usize, usize, usize))> = None;
    for start in 0..coloured.len() {
        if !coloured[start] || seen[start] {
            continue;
        }
        let (mut count, mut extent) = (0, (usize::MAX, usize::MAX, 0, 0));
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(at) = stack.pop() {
            let (row, column) = (at / columns, at % columns);
            count += 1;
            extent = (extent.0.min(column), extent.1.min(row), extent.2.max(column), extent.3.max(row));
            let neighbours =
                [(row > 0).then(|| at - columns), (row + 1 < rows).then(|| at + columns), (column > 0).then(|| at - 1), (column + 1 < columns).then(|| at + 1)];
            for next in neighbours.into_iter().flatten() {
                if coloured[next] && !seen[next] {
                    seen[next] = true;
                    stack.push(next);
                }
            }
        }
        if best.is_none_or(|(most, _)| count > most) {
            best = Some((count, extent));
        }
    }
    let (count, (c0, r0, c1, r1)) = best?;
    (count * 50 >= columns * rows).then(|| PixelBox {
        x0: (c0 as u32 * cell) as f64,
        y0: (r0 as u32 * cell) as f64,
        x1: ((c1 as u32 + 1) * cell).min(image.width) as f64,
        y1: ((r1 as u32 + 1) * cell).min(image.height) as f64,
    })
}

/// Whether a line runs across the page (a vertical one's box height is its length, not its type size).
fn horizontal(bbox: &PixelBox) -> bool {
    bbox.x1 - bbox.x0 > bbox.y1 - bbox.y0
}

/// The largest type outside the main map and the legends (horizontal lines of at least eight letters),
/// with the lines of nearly the same size stacked with it.
fn title(lines: &[Line], main_map: Option<&PixelBox>, legends: &[PixelBox]) -> Option<TitleText> {
    let outside =
        |b: &PixelBox| !main_map.is_some_and(|m| m.x0 <= b.x0 && b.x1 <= m.x1 && m.y0 <= b.y0 && b.y1 <= m.y1) && !legends.iter().any(|l| overlaps(l, b));
    let candidates: Vec<&Line> = lines
        .iter()
        .filter(|l| l.score >= 0.6 && horizontal(&l.bbox) && l.text.chars().filter(|c| c.is_alphabetic()).count() >= 8 && outside(&l.bbox))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, x0: f64, y0: f64, x1: f64, y1: f64) -> Line {
        Line { text: text.to_owned(), bbox: PixelBox { x0, y0, x1, y1 }, score: 0.95 }
    }

    /// A white image with `boxes` filled in their colours.
    fn image(width: u32, height: u32, boxes: &[(PixelBox, (u8, u8, u8))]) -> Rgb {
        let mut image = Rgb { width, height, pixels: vec![255; (width * height * 3) as usize] };
        for (bbox, colour) in boxes {
            let (x0, y0, x1, y1) = bbox.pixels(width, height);
            for y in y0..y1 {
                for x in x0..x1 {
                    let at = ((y * width + x) * 3) as usize;
                    image.pixels[at..at + 3].copy_from_slice(&[colour.0, colour.1, colour.2]);
                }
            }
        }
        image
    }

    fn b(x0: f64, y0: f64, x1: f64, y1: f64) -> PixelBox {
        PixelBox { x0, y0, x1, y1 }
    }

    #[test]
    fn headings_are_read_through_ocr_damage() {
        for text in [
            "EXPLANATION",
            "Explanation",
            "EXPLANAT1ON",
            "EXPLANATlON",
            "LISTOFMAPUNITS",
            "LIST OF MAP UNlTS",
            "DESCRIPTION OF MAP UNITS",
            "LEGEND",
            "L E G E N D",
            "图例",
        ] {
            assert!(legend_heading(text).is_some(), "{text}");
        }
        for text in ["EXPLANATIONS OF THE FAULTS AND FOLDS", "LEGENDARY", "LAGOON", "Qal"] {
            assert_eq!(legend_heading(text), None, "{text}");
        }
    }

    #[test]
    fn unit_codes_are_short_and_capitalised() {
        for (text, code) in [("Qal", "Qal"), ("Pk", "Pk"), ("QTg", "QTg"), ("Xgr", "Xgr"), ("Yg.", "Yg"), ("Ts1", "Ts1"), ("J", "J"), ("Tbmi", "Tbmi")] {
            assert_eq!(unit_code(text).as_deref(), Some(code), "{text}");
        }
        for text in ["Basalt", "Price", "Basalt flows", "qal", "15.", "Holocene", ""] {
            assert_eq!(unit_code(text), None, "{text}");
        }
    }

    #[test]
    fn a_legend_column_gives_codes_descriptions_and_swatch_colours() {
        let (tan, green, purple) = ((222, 184, 135), (120, 200, 120), (160, 110, 190));
        let swatches = [(b(100.0, 100.0, 160.0, 130.0), tan), (b(100.0, 150.0, 160.0, 180.0), green), (b(100.0, 230.0, 160.0, 260.0), purple)];
        let picture = image(800, 400, &swatches);
        let lines = [
            line("EXPLANAT1ON", 100.0, 40.0, 300.0, 70.0),
            line("Qal", 115.0, 105.0, 145.0, 125.0),
            line("Alluvium (Holocene)", 190.0, 105.0, 400.0, 125.0),
            line("Tb", 118.0, 155.0, 142.0, 175.0),
            line("Basalt flows and dikes (Pliocene to", 190.0, 155.0, 500.0, 175.0),
            line("upper Miocene)", 200.0, 180.0, 330.0, 200.0),
            line("Unrelated paragraph below", 190.0, 205.0, 500.0, 225.0),
            line("SEDIMENTARY ROCKS", 230.0, 205.0, 400.0, 225.0),
            line("Pk", 118.0, 235.0, 142.0, 255.0),
            line("Kaibab Formation (Lower Permian)", 190.0, 235.0, 480.0, 255.0),
        ];
        let legends = legends(&lines, &picture);
        assert_eq!(legends.len(), 1);
        let legend = &legends[0];
        assert_eq!(legend.heading.as_deref(), Some("EXPLANAT1ON"));
        type Read<'a> = (&'a str, &'a str, Option<(u8, u8, u8)>);
        let read: Vec<Read> = legend.entries.iter().map(|e| (e.code.as_str(), e.description.as_str(), e.colour)).collect();
        assert_eq!(
            read,
            [
                ("Qal", "Alluvium (Holocene)", Some(tan)),
                ("Tb", "Basalt flows and dikes (Pliocene to upper Miocene)", Some(green)),
                ("Pk", "Kaibab Formation (Lower Permian)", Some(purple))
            ]
        );
        assert_eq!(legend.entries[0].swatch, swatches[0].0, "grown to the swatch's edges");
        assert_eq!(legend.bbox.y0, 40.0, "the heading is part of the legend");
    }

    #[test]
    fn a_swatch_left_of_a_code_on_paper_is_found() {
        let picture = image(400, 100, &[(b(20.0, 20.0, 70.0, 50.0), (200, 60, 60))]);
        let (swatch, colour) = swatch(&picture, &b(90.0, 25.0, 120.0, 45.0));
        assert_eq!(colour, Some((200, 60, 60)));
        assert_eq!(swatch, b(20.0, 20.0, 70.0, 50.0));
    }

    #[test]
    fn the_main_map_is_the_largest_coloured_region_and_the_title_the_largest_type_outside_it() {
        let picture = image(
            1000,
            800,
            &[(b(50.0, 50.0, 450.0, 450.0), (200, 150, 100)), (b(450.0, 50.0, 650.0, 450.0), (100, 180, 220)), (b(800.0, 600.0, 900.0, 650.0), (250, 0, 0))],
        );
        let map = main_map(&picture, &[]).expect("a main map");
        assert!(map.x0 <= 50.0 && map.x1 >= 650.0 && map.y0 <= 50.0 && map.y1 >= 450.0 && map.x1 <= 660.0, "{map:?}");
        let lines = [
            line("Geologic map of the", 200.0, 500.0, 600.0, 540.0),
            line("Testing Quadrangle", 250.0, 545.0, 550.0, 584.0),
            line("Huge labelling inside", 100.0, 100.0, 400.0, 160.0),
            line("by A. Author and B. Author", 300.0, 600.0, 500.0, 620.0),
            line("FLATMONOCLINE", 900.0, 500.0, 930.0, 700.0), // a label running up the page
        ];
        let title = title(&lines, Some(&map), &[]).expect("a title");
        assert_eq!(title.text, "Geologic map of the Testing Quadrangle");
    }
}
