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
/// A code this many of the column's typical row steps below the previous one starts another list
/// (the sample's symbols list, whose "M207" sits 22 steps below the last unit).
const COLUMN_BREAK: f64 = 8.0;

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
    /// The unit's code, as read ("Qal", "Pk"); none when its swatch holds a code the recogniser
    /// cannot read (the entry is still a unit, with its description and colour).
    pub code: Option<String>,
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
    /// The heading the unit is listed under ("Supai Group (Lower Permian, …)"), when its
    /// description is indented beneath one.
    pub group: Option<String>,
}

/// Reads the layout from `lines` (the whole scan's) and the scan's pixels. `read_codes` reads
/// the codes of swatches the text detector found no words in: it gets each swatch's inside (in the
/// scan's pixels) and returns the lines it read there, each with the box it was given.
pub fn read_layout<E>(lines: &[Line], image: &Rgb, mut read_codes: impl FnMut(&[PixelBox]) -> Result<Vec<Line>, E>) -> Result<WordsLayout, E> {
    let legends = legends(lines, image, &mut read_codes)?;
    let legend_boxes: Vec<PixelBox> = legends.iter().map(|legend| legend.bbox).collect();
    let main_map = main_map(image, &legend_boxes);
    let title = title(lines, main_map.as_ref(), &legend_boxes);
    Ok(WordsLayout { title, legends, main_map })
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
/// A capital I or V after the first letter is read small ("QI" is Ql, "TV" is Tv): the recogniser
/// takes l for I and v for V, and neither is a period's symbol (I before P, the Pennsylvanian's, aside).
pub fn unit_code(text: &str) -> Option<String> {
    let code = text.trim().trim_end_matches(['.', ',', ':', ';']);
    let mut chars = code.chars();
    let first = chars.next()?;
    let rest: Vec<char> = chars.collect();
    let shaped = first.is_ascii_uppercase() && rest.len() <= 5 && rest.iter().all(|c| c.is_ascii_alphanumeric());
    let word_like = rest.len() >= 4 && rest.iter().all(|c| c.is_ascii_lowercase());
    let small = |(index, c): (usize, &char)| match c {
        'I' if rest.get(index + 1) != Some(&'P') => 'l',
        'V' => 'v',
        other => *other,
    };
    (shaped && !word_like).then(|| std::iter::once(first).chain(rest.iter().enumerate().map(small)).collect())
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
    /// The swatch, when the code was read from its inside (the code's box is then the swatch's).
    swatch: Option<PixelBox>,
}

/// Each code with the nearest description to its right on its row: a line of at least four
/// letters that shares half the rows of the lower of the two and starts within three type heights
/// (the larger of the two: a code of capitals without ascenders is boxed lower than its text).
fn candidates(lines: &[Line]) -> Vec<Candidate> {
    (0..lines.len())
        .filter(|&i| unit_code(&lines[i].text).is_some())
        .filter_map(|code| {
            let c = &lines[code].bbox;
            (0..lines.len())
                .filter(|&d| {
                    let b = &lines[d].bbox;
                    let h = height(c).max(height(b));
                    let shared_rows = (c.y1.min(b.y1) - c.y0.max(b.y0)).max(0.0);
                    let words = lines[d].text.chars().filter(|ch| ch.is_alphabetic()).count();
                    d != code
                        && unit_code(&lines[d].text).is_none()
                        && words >= 4
                        && shared_rows >= 0.5 * height(c).min(height(b))
                        && b.x0 >= c.x1 - 0.2 * height(c)
                        && b.x0 - c.x1 <= 3.0 * h
                })
                .min_by(|&a, &b| lines[a].bbox.x0.total_cmp(&lines[b].bbox.x0))
                .map(|first| Candidate { code, first, swatch: None })
        })
        .collect()
}

/// The candidates in columns: codes aligned within 1.5 type heights, top to bottom, the same code
/// seen twice kept once, and a column cut where a code lies [`COLUMN_BREAK`] row steps below the
/// one before it.
fn columns(lines: &[Line], mut candidates: Vec<Candidate>) -> Vec<Vec<Candidate>> {
    candidates.sort_by(|a, b| centre_x(&lines[a.code].bbox).total_cmp(&centre_x(&lines[b.code].bbox)));
    let mut columns: Vec<Vec<Candidate>> = Vec::new();
    for candidate in candidates {
        let bbox = &lines[candidate.code].bbox;
        match columns.last_mut() {
            Some(column) if (centre_x(bbox) - centre_x(&lines[column[0].code].bbox)).abs() <= 1.5 * height(bbox) => column.push(candidate),
            _ => columns.push(vec![candidate]),
        }
    }
    let mut cut = Vec::new();
    for mut column in columns {
        column.sort_by(|a, b| lines[a.code].bbox.y0.total_cmp(&lines[b.code].bbox.y0));
        // The same code seen twice (two tiles, or a code inside a code's box): keep the first.
        column.dedup_by(|later, kept| overlaps(&lines[later.code].bbox, &lines[kept.code].bbox) || later.first == kept.first);
        let steps: Vec<f64> = column.windows(2).map(|pair| lines[pair[1].code].bbox.y0 - lines[pair[0].code].bbox.y0).collect();
        let step = median(&steps).unwrap_or(0.0);
        let mut part = Vec::new();
        for (index, candidate) in column.into_iter().enumerate() {
            if index > 0 && steps[index - 1] > COLUMN_BREAK * step {
                cut.push(std::mem::take(&mut part));
            }
            part.push(candidate);
        }
        cut.push(part);
    }
    cut
}

/// The median of `values` (the upper one of an even count), or none of none.
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied()
}

/// Every legend column: codes with a description to their right, aligned in a column; then the
/// rows of the column whose swatch holds a code the text detector missed, read by `read_codes`;
/// then the headings grouped units are listed under.
fn legends<E>(lines: &[Line], image: &Rgb, read_codes: &mut impl FnMut(&[PixelBox]) -> Result<Vec<Line>, E>) -> Result<Vec<TextLegend>, E> {
    let mut lines = lines.to_vec();
    let headings: Vec<Line> = lines.iter().filter(|line| legend_heading(&line.text).is_some()).cloned().collect();
    let mut legends = Vec::new();
    for mut column in columns(&lines, candidates(&lines)) {
        let Some(top) = column.first().map(|c| lines[c.code].bbox) else { continue };
        let span = column.iter().fold(top, |acc, c| union(&union(&acc, &lines[c.code].bbox), &lines[c.first].bbox));
        let heading = headings
            .iter()
            .filter(|h| h.bbox.y1 <= top.y0 + 1.0 && top.y0 - h.bbox.y1 <= 12.0 * height(&top) && h.bbox.x1 > span.x0 && h.bbox.x0 < span.x1)
            .min_by(|a, b| (top.y0 - a.bbox.y1).total_cmp(&(top.y0 - b.bbox.y1)));
        if column.len() < MIN_COLUMN && !(heading.is_some() && column.len() >= 2) {
            continue;
        }
        let mut found = entries(&lines, &column, image);
        if found.iter().filter(|e| e.colour.is_some_and(|c| !is_paper(c))).count() * 2 < found.len() {
            continue; // codes on paper, framed or not: a table or an index, not a legend
        }
        let unread = unread_swatches(&lines, &found, image);
        if !unread.is_empty() {
            let insides: Vec<PixelBox> = unread.iter().map(|(_, inside)| *inside).collect();
            let readings = read_codes(&insides)?;
            for (first, inside) in unread {
                lines.push(swatch_code(&readings, &inside));
                column.push(Candidate { code: lines.len() - 1, first, swatch: Some(inside) });
            }
            column.sort_by(|a, b| lines[a.first].bbox.y0.total_cmp(&lines[b.first].bbox.y0));
            found = entries(&lines, &column, image);
        }
        group(&lines, &column, &mut found);
        let mut bbox = found.iter().fold(span, |acc, e| union(&union(&acc, &e.swatch), &e.description_box));
        if let Some(heading) = heading {
            bbox = union(&bbox, &heading.bbox);
        }
        legends.push(TextLegend { bbox, heading: heading.map(|h| h.text.clone()), entries: found });
    }
    Ok(legends)
}

/// The code read in the swatch `inside` from its `readings` (each boxed as the swatch it was
/// read in): the readings that are unit codes vote with their scores, and the code with the most
/// wins ("Qf" read twice at 0.6 beats "Q" read once at 0.9). When no reading is a code, an empty
/// line in the swatch: its entry is a unit with no code ([`unit_code`] of it is none).
fn swatch_code(readings: &[Line], inside: &PixelBox) -> Line {
    let codes: Vec<(String, &Line)> = readings.iter().filter(|r| r.bbox == *inside).filter_map(|r| unit_code(&r.text).map(|code| (code, r))).collect();
    let votes = |code: &str| codes.iter().filter(|(other, _)| other == code).map(|(_, r)| r.score).sum::<f64>();
    let best = codes.iter().max_by(|a, b| votes(&a.0).total_cmp(&votes(&b.0)).then(a.1.score.total_cmp(&b.1.score)));
    best.map_or_else(|| Line { text: String::new(), bbox: *inside, score: 0.0 }, |(code, line)| Line { text: code.clone(), bbox: *inside, score: line.score })
}

/// Whether a line's centre lies in an entry's code or description box (it is read already).
fn is_read(entries: &[UnitEntry], bbox: &PixelBox) -> bool {
    let (x, y) = (centre_x(bbox), centre_y(bbox));
    let inside = |b: &PixelBox| b.x0 <= x && x <= b.x1 && b.y0 <= y && y <= b.y1;
    entries.iter().any(|e| inside(&e.code_box) || inside(&e.description_box))
}

/// The column's description edge (the lower quartile of its entries' descriptions' left sides:
/// grouped units are indented beyond it) and its type height (the median code height).
fn description_edge(entries: &[UnitEntry]) -> (f64, f64) {
    let mut edges: Vec<f64> = entries.iter().map(|e| e.description_box.x0).collect();
    edges.sort_by(f64::total_cmp);
    let heights: Vec<f64> = entries.iter().map(|e| height(&e.code_box)).collect();
    (edges[edges.len() / 4], median(&heights).unwrap_or(0.0))
}

/// The rows of a legend column that have a description and a swatch but no code read: each line
/// not yet read into an entry that starts at the column's description edge (or a grouped unit's
/// indent) within the column's rows, with a box of one colour to its left the size of the column's
/// swatches (within 20% of their width, 30% of their height). Each comes with its swatch's inside.
fn unread_swatches(lines: &[Line], entries: &[UnitEntry], image: &Rgb) -> Vec<(usize, PixelBox)> {
    let swatches: Vec<&PixelBox> = entries.iter().filter(|e| e.colour.is_some()).map(|e| &e.swatch).collect();
    if entries.len() < MIN_COLUMN || swatches.len() < MIN_COLUMN {
        return Vec::new();
    }
    let typical = |side: fn(&PixelBox) -> f64| median(&swatches.iter().map(|b| side(b)).collect::<Vec<_>>()).unwrap_or(0.0);
    let (left, right) = (typical(|b| b.x0), typical(|b| b.x1));
    let (width, tall) = (right - left, typical(height));
    let (edge, h) = description_edge(entries);
    let rows = (entries[0].swatch.y0 - 3.0 * tall, entries[entries.len() - 1].swatch.y1 + 3.0 * tall);
    let mut unread: Vec<(usize, PixelBox)> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let b = &line.bbox;
        let letters = line.text.chars().filter(|c| c.is_alphabetic()).count();
        let at_edge = b.x0 >= edge - 0.5 * h && b.x0 <= edge + 1.5 * h && horizontal(b);
        if !at_edge || letters < 4 || centre_y(b) < rows.0 || centre_y(b) > rows.1 || is_read(entries, b) || is_section_heading(&line.text) {
            continue;
        }
        let y = centre_y(b);
        let seed = PixelBox { x0: left + 0.3 * width, y0: y - 0.2 * tall, x1: right - 0.3 * width, y1: y + 0.2 * tall };
        let Some(colour) = ground_colour(image, &seed).filter(|c| !is_paper(*c) && lab(*c)[0] > 25.0) else { continue };
        let inside = grow(image, seed, colour, tall);
        let fits = ((inside.x1 - inside.x0) - width).abs() <= 0.2 * width && (height(&inside) - tall).abs() <= 0.3 * tall;
        let free = !entries.iter().any(|e| overlaps(&e.swatch, &inside)) && !unread.iter().any(|(_, other)| overlaps(other, &inside));
        if fits && free && (centre_y(&inside) - y).abs() <= 0.5 * tall {
            unread.push((index, inside));
        }
    }
    unread
}

/// Records the heading each grouped unit is listed under: a unit whose description is indented
/// beyond the column's edge belongs to the nearest line above it at the edge that no entry holds
/// (with the lines that continue it), unless an unindented unit or a section heading came between.
fn group(lines: &[Line], column: &[Candidate], entries: &mut [UnitEntry]) {
    if entries.is_empty() {
        return;
    }
    let (edge, h) = description_edge(entries);
    let mut heading: Option<String> = None;
    for index in 0..entries.len() {
        let first = &lines[column[index].first].bbox;
        let from = if index == 0 { first.y0 - 4.0 * h } else { entries[index - 1].description_box.y1.max(entries[index - 1].swatch.y1) };
        let mut between: Vec<&Line> = lines
            .iter()
            .filter(|l| centre_y(&l.bbox) > from && centre_y(&l.bbox) < first.y0 && l.bbox.x0 >= edge - 0.5 * h && horizontal(&l.bbox))
            .filter(|l| unit_code(&l.text).is_none() && !is_read(entries, &l.bbox))
            .collect();
        between.sort_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0));
        if let Some(start) = between.iter().rposition(|l| l.bbox.x0 <= edge + 0.3 * h && !is_section_heading(&l.text)) {
            let parts: Vec<String> = between[start..].iter().map(|l| l.text.clone()).collect();
            heading = Some(join(&parts));
        } else if between.iter().any(|l| is_section_heading(&l.text)) {
            heading = None;
        }
        if entries[index].description_box.x0 > edge + 0.3 * h {
            entries[index].group = heading.clone();
        } else {
            heading = None;
        }
    }
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
            let (swatch, colour) = match candidate.swatch {
                Some(inside) => (inside, ground_colour(image, &inside)),
                None => swatch(image, &code_box),
            };
            let code = unit_code(&lines[candidate.code].text);
            UnitEntry { code, code_box, description: join(&parts), description_box, swatch, colour, group: None }
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
/// the coloured box left of it), grown from the code out while its edges keep that colour; or,
/// when nothing coloured is near, the paper a frame drawn around the code closes off.
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
            return outlined(image, code, colour).map_or((*code, None), |inside| (inside, ground_colour(image, &inside)));
        }
    }
    (grow(image, seed, colour, h), Some(colour))
}

/// The inside of a frame drawn around a code on `paper`: a swatch whose colour is the paper's
/// (as the USGS draws diabase). It is the largest region of paper, 4-connected, that a line at
/// least 12 L* darker than the paper closes off within four type heights across and two down from
/// the code, when it holds the code's centre and spans the code (a letter's counter does not).
fn outlined(image: &Rgb, code: &PixelBox, paper: (u8, u8, u8)) -> Option<PixelBox> {
    let h = height(code);
    let window = PixelBox { x0: code.x0 - 4.0 * h, y0: code.y0 - 2.0 * h, x1: code.x1 + 4.0 * h, y1: code.y1 + 2.0 * h };
    let (x0, y0, x1, _) = window.pixels(image.width, image.height);
    let width = (x1 - x0) as usize;
    let ink_below = lab(paper)[0] - 12.0;
    let mut open: Vec<bool> = pixels(image, &window).map(|p| lab(p)[0] > ink_below).collect();
    let (cx0, cy0, cx1, cy1) = code.pixels(image.width, image.height);
    let centre = (centre_x(code), centre_y(code));
    let mut best: Option<(usize, PixelBox)> = None;
    for start in (cy0..cy1).flat_map(|y| (cx0..cx1).map(move |x| (y - y0) as usize * width + (x - x0) as usize)) {
        if !open[start] {
            continue;
        }
        open[start] = false;
        let (mut stack, mut size, mut enclosed) = (vec![start], 0, true);
        let mut region = PixelBox { x0: f64::INFINITY, y0: f64::INFINITY, x1: 0.0, y1: 0.0 };
        while let Some(at) = stack.pop() {
            let (x, y) = (at % width, at / width);
            size += 1;
            region = union(&region, &PixelBox { x0: x as f64, y0: y as f64, x1: x as f64 + 1.0, y1: y as f64 + 1.0 });
            enclosed &= x > 0 && y > 0 && x + 1 < width && at + width < open.len();
            let neighbours = [(x > 0).then(|| at - 1), (x + 1 < width).then(|| at + 1), at.checked_sub(width), Some(at + width).filter(|&n| n < open.len())];
            for next in neighbours.into_iter().flatten() {
                if open[next] {
                    open[next] = false;
                    stack.push(next);
                }
            }
        }
        let region = PixelBox { x0: region.x0 + x0 as f64, y0: region.y0 + y0 as f64, x1: region.x1 + x0 as f64, y1: region.y1 + y0 as f64 };
        let holds = region.x0 <= centre.0 && centre.0 <= region.x1 && region.y0 <= centre.1 && centre.1 <= region.y1;
        let spans = region.x1 - region.x0 >= code.x1 - code.x0 && height(&region) >= 0.6 * h;
        if enclosed && holds && spans && best.is_none_or(|(most, _)| size > most) {
            best = Some((size, region));
        }
    }
    best.map(|(_, region)| region)
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
        paint(&mut image, boxes);
        image
    }

    /// Fills `boxes` of `image` in their colours.
    fn paint(image: &mut Rgb, boxes: &[(PixelBox, (u8, u8, u8))]) {
        for (bbox, colour) in boxes {
            let (x0, y0, x1, y1) = bbox.pixels(image.width, image.height);
            let width = image.width;
            for at in (y0..y1).flat_map(|y| (x0..x1).map(move |x| ((y * width + x) * 3) as usize)) {
                image.pixels[at..at + 3].copy_from_slice(&[colour.0, colour.1, colour.2]);
            }
        }
    }

    fn b(x0: f64, y0: f64, x1: f64, y1: f64) -> PixelBox {
        PixelBox { x0, y0, x1, y1 }
    }

    /// A reader of swatch codes that reads none.
    fn no_codes(_: &[PixelBox]) -> Result<Vec<Line>, std::convert::Infallible> {
        Ok(Vec::new())
    }

    /// A column of swatches 60 × 30 at x 100, one row every 40 pixels from y 100, each with its
    /// code (when given; capitals without ascenders, boxed 8 high) and its description (type 16
    /// high) at x 170 plus `indent`: an indented description starts more than three code heights
    /// from its code, as on the USGS scan.
    /// A legend row: its code (if the detector found one), description, indent and swatch colour.
    type Row<'a> = (Option<&'a str>, &'a str, f64, (u8, u8, u8));

    fn column(rows: &[Row]) -> (Rgb, Vec<Line>) {
        let mut swatches = Vec::new();
        let mut lines = Vec::new();
        for (index, (code, description, indent, colour)) in rows.iter().enumerate() {
            let top = 100.0 + 40.0 * index as f64;
            if *colour != (255, 255, 255) {
                swatches.push((b(100.0, top, 160.0, top + 30.0), *colour));
            }
            if let Some(code) = code {
                lines.push(line(code, 120.0, top + 11.0, 148.0, top + 19.0));
            }
            lines.push(line(description, 170.0 + indent, top + 7.0, 420.0 + indent, top + 23.0));
        }
        (image(600, 140 + 40 * rows.len() as u32, &swatches), lines)
    }

    #[test]
    fn a_code_the_text_detector_missed_is_read_from_its_swatch() {
        let (tan, red, blue, grey) = ((222, 184, 135), (220, 20, 60), (90, 140, 220), (180, 180, 170));
        let (picture, lines) = column(&[
            (Some("Qs"), "Stream-channel deposits (Holocene)", 0.0, tan),
            (None, "227-Mile intrusive (Miocene)", 0.0, red),
            (Some("Pe"), "Esplanade Sandstone (Lower Permian)", 0.0, blue),
            (Some("Xu"), "Crystalline rocks, undifferentiated", 0.0, grey),
        ]);
        let mut asked = Vec::new();
        // Three readings of the one swatch: "T227" twice outvotes "T221" once, surer as it is.
        let mut read = |insides: &[PixelBox]| {
            asked.extend_from_slice(insides);
            let reading = |text: &str, score| Line { text: text.to_owned(), bbox: insides[0], score };
            Ok::<_, std::convert::Infallible>(vec![reading("T227", 0.6), reading("T221", 0.9), reading("T227.", 0.5)])
        };
        let coded = legends(&lines, &picture, &mut read).expect("no reading fails");
        assert_eq!(asked, [b(100.0, 140.0, 160.0, 170.0)], "the red swatch's inside, and nothing else");
        type Read<'a> = (Option<&'a str>, Option<(u8, u8, u8)>);
        let read: Vec<Read> = coded[0].entries.iter().map(|e| (e.code.as_deref(), e.colour)).collect();
        assert_eq!(read, [(Some("Qs"), Some(tan)), (Some("T227"), Some(red)), (Some("Pe"), Some(blue)), (Some("Xu"), Some(grey))]);
        assert_eq!(coded[0].entries[1].description, "227-Mile intrusive (Miocene)");
        assert_eq!(coded[0].entries[1].swatch, b(100.0, 140.0, 160.0, 170.0));
        let mut unreadable = |_: &[PixelBox]| Ok::<_, std::convert::Infallible>(vec![Line { text: "rocks".to_owned(), bbox: asked[0], score: 0.9 }]);
        let uncoded = legends(&lines, &picture, &mut unreadable).expect("no reading fails");
        let read: Vec<Read> = uncoded[0].entries.iter().map(|e| (e.code.as_deref(), e.colour)).collect();
        assert_eq!(
            read,
            [(Some("Qs"), Some(tan)), (None, Some(red)), (Some("Pe"), Some(blue)), (Some("Xu"), Some(grey))],
            "an unreadable code is still a unit"
        );
        assert_eq!(uncoded[0].entries[1].description, "227-Mile intrusive (Miocene)");
    }

    #[test]
    fn grouped_units_carry_their_heading_and_a_far_code_is_another_list() {
        let (tan, green, blue, purple, paper) = ((222, 184, 135), (120, 200, 120), (90, 140, 220), (160, 110, 190), (255, 255, 255));
        let (mut picture, mut lines) = column(&[
            (Some("Ph"), "Hermit Formation (Lower Permian)", 0.0, tan),
            (None, "Supai Group (Lower Permian and Upper", 0.0, paper),
            (Some("Pe"), "Esplanade Sandstone (Lower Permian)", 10.0, green),
            (Some("Pw"), "Wescogame Formation and", 10.0, blue),
            (Some("Ms"), "Surprise Canyon Formation", 0.0, purple),
        ]);
        lines.insert(2, line("Pennsylvanian)", 190.0, 164.0, 310.0, 180.0)); // the heading's second line
        lines.push(line("Watahomigi Formation", 190.0, 244.0, 380.0, 260.0)); // Pw's second line
        // A symbols list far below: a mile marker on paper.
        picture = Rgb { height: 1200, pixels: [picture.pixels, vec![255; 600 * (1200 - picture.height as usize) * 3]].concat(), ..picture };
        lines.push(line("M207", 118.0, 1100.0, 142.0, 1112.0));
        lines.push(line("River mile measured from Lees Ferry", 170.0, 1098.0, 480.0, 1114.0));
        let legends = legends(&lines, &picture, &mut no_codes).expect("no reading fails");
        assert_eq!(legends.len(), 1);
        type Read<'a> = (&'a str, &'a str, Option<&'a str>);
        let read: Vec<Read> = legends[0].entries.iter().map(|e| (e.code.as_deref().unwrap_or(""), e.description.as_str(), e.group.as_deref())).collect();
        let supai = Some("Supai Group (Lower Permian and Upper Pennsylvanian)");
        assert_eq!(
            read,
            [
                ("Ph", "Hermit Formation (Lower Permian)", None),
                ("Pe", "Esplanade Sandstone (Lower Permian)", supai),
                ("Pw", "Wescogame Formation and Watahomigi Formation", supai),
                ("Ms", "Surprise Canyon Formation", None),
            ]
        );
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
        let read = [("Qal", "Qal"), ("Pk", "Pk"), ("QTg", "QTg"), ("Xgr", "Xgr"), ("Yg.", "Yg"), ("Ts1", "Ts1"), ("J", "J"), ("Tbmi", "Tbmi")];
        let small = [("QI", "Ql"), ("TV", "Tv"), ("IPMs", "IPMs"), ("PIPs", "PIPs"), ("Vs", "Vs")];
        for (text, code) in read.into_iter().chain(small) {
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
        let legends = legends(&lines, &picture, &mut no_codes).expect("no reading fails");
        assert_eq!(legends.len(), 1);
        let legend = &legends[0];
        assert_eq!(legend.heading.as_deref(), Some("EXPLANAT1ON"));
        type Read<'a> = (&'a str, &'a str, Option<(u8, u8, u8)>);
        let read: Vec<Read> = legend.entries.iter().map(|e| (e.code.as_deref().unwrap_or(""), e.description.as_str(), e.colour)).collect();
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

    /// A frame two pixels wide of `colour` along the inside of `bbox`.
    fn frame(bbox: PixelBox, colour: (u8, u8, u8)) -> [(PixelBox, (u8, u8, u8)); 4] {
        let PixelBox { x0, y0, x1, y1 } = bbox;
        [(b(x0, y0, x1, y0 + 2.0), colour), (b(x0, y1 - 2.0, x1, y1), colour), (b(x0, y0, x0 + 2.0, y1), colour), (b(x1 - 2.0, y0, x1, y1), colour)]
    }

    #[test]
    fn a_framed_white_swatch_is_a_unit_and_framed_codes_alone_are_a_table() {
        let (tan, green, grey) = ((222, 184, 135), (120, 200, 120), (150, 150, 150));
        let rows: [Row; 4] = [
            (Some("Qs"), "Stream-channel deposits (Holocene)", 0.0, tan),
            (Some("Yd"), "Diabase intrusive rocks", 0.0, (255, 255, 255)),
            (Some("Yg"), "Young granite and pegmatite", 0.0, green),
            (Some("Xu"), "Crystalline rocks, undifferentiated", 0.0, tan),
        ];
        let (mut picture, lines) = column(&rows);
        let framed = b(100.0, 140.0, 160.0, 170.0);
        // A hatched line across the frame's top, as on the USGS's diabase, and the frame itself.
        paint(&mut picture, &frame(framed, grey));
        paint(&mut picture, &[(b(100.0, 146.0, 160.0, 147.0), grey)]);
        let found = legends(&lines, &picture, &mut no_codes).expect("no reading fails");
        type Read<'a> = (Option<&'a str>, Option<(u8, u8, u8)>);
        let read: Vec<Read> = found[0].entries.iter().map(|e| (e.code.as_deref(), e.colour)).collect();
        assert_eq!(read, [(Some("Qs"), Some(tan)), (Some("Yd"), Some((255, 255, 255))), (Some("Yg"), Some(green)), (Some("Xu"), Some(tan))]);
        assert_eq!(found[0].entries[1].swatch, b(102.0, 147.0, 158.0, 168.0), "the paper the frame and its hatching close off");

        // The same codes, every one framed on paper and none coloured: a table, not a legend.
        let paper = rows.map(|(code, description, indent, _)| (code, description, indent, (255, 255, 255)));
        let (mut table, lines) = column(&paper);
        for index in 0..paper.len() {
            let top = 100.0 + 40.0 * index as f64;
            paint(&mut table, &frame(b(100.0, top, 160.0, top + 30.0), grey));
        }
        assert!(legends(&lines, &table, &mut no_codes).expect("no reading fails").is_empty());
        // A code on open paper has no swatch.
        assert_eq!(swatch(&image(400, 100, &[]), &b(90.0, 25.0, 120.0, 45.0)), (b(90.0, 25.0, 120.0, 45.0), None));
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
