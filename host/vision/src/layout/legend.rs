//! The legend read from words: a column of unit codes, each with a description
//! starting on its row to its right, under a heading or at least three long;
//! the rows whose swatch holds a code the text detector missed, read by the
//! caller's reader; and the headings grouped units are listed under.
//!
//! Invariant: pure functions of the lines and the scan's pixels; thresholds
//! scale with the type's height.

use super::swatches::{grow, is_paper, swatch};
use super::{TextLegend, UnitEntry, centre_x, centre_y, height, horizontal, overlaps, union};
use crate::colour::{ground_colour, lab};
use crate::image::Rgb;
use crate::ocr::reader::TextLine;
use geomap_model::page::PixelBox;

/// Headings that open a legend, written without spaces.
const HEADINGS: [&str; 6] = ["EXPLANATION", "LISTOFMAPUNITS", "DESCRIPTIONOFMAPUNITS", "CORRELATIONOFMAPUNITS", "LEGEND", "图例"];
/// Fewest codes in a column for it to be a legend without a heading above it.
const MIN_COLUMN: usize = 3;
/// A code this many of the column's typical row steps below the previous one starts another list
/// (the sample's symbols list, whose "M207" sits 22 steps below the last unit).
const COLUMN_BREAK: f64 = 8.0;

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
fn candidates(lines: &[TextLine]) -> Vec<Candidate> {
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
fn columns(lines: &[TextLine], mut candidates: Vec<Candidate>) -> Vec<Vec<Candidate>> {
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
pub(super) fn legends<E>(lines: &[TextLine], image: &Rgb, read_codes: &mut impl FnMut(&[PixelBox]) -> Result<Vec<TextLine>, E>) -> Result<Vec<TextLegend>, E> {
    let mut lines = lines.to_vec();
    let headings: Vec<TextLine> = lines.iter().filter(|line| legend_heading(&line.text).is_some()).cloned().collect();
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
fn swatch_code(readings: &[TextLine], inside: &PixelBox) -> TextLine {
    let codes: Vec<(String, &TextLine)> = readings.iter().filter(|r| r.bbox == *inside).filter_map(|r| unit_code(&r.text).map(|code| (code, r))).collect();
    let votes = |code: &str| codes.iter().filter(|(other, _)| other == code).map(|(_, r)| r.score).sum::<f64>();
    let best = codes.iter().max_by(|a, b| votes(&a.0).total_cmp(&votes(&b.0)).then(a.1.score.total_cmp(&b.1.score)));
    best.map_or_else(
        || TextLine { text: String::new(), bbox: *inside, score: 0.0 },
        |(code, line)| TextLine { text: code.clone(), bbox: *inside, score: line.score },
    )
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
fn unread_swatches(lines: &[TextLine], entries: &[UnitEntry], image: &Rgb) -> Vec<(usize, PixelBox)> {
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
fn group(lines: &[TextLine], column: &[Candidate], entries: &mut [UnitEntry]) {
    if entries.is_empty() {
        return;
    }
    let (edge, h) = description_edge(entries);
    let mut heading: Option<String> = None;
    for index in 0..entries.len() {
        let first = &lines[column[index].first].bbox;
        let from = if index == 0 { first.y0 - 4.0 * h } else { entries[index - 1].description_box.y1.max(entries[index - 1].swatch.y1) };
        let mut between: Vec<&TextLine> = lines
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

/// The entries of one column: each code's description runs from its row down through the lines
/// that continue it (indented, or after an open parenthesis or a hyphen), up to the next code.
fn entries(lines: &[TextLine], column: &[Candidate], image: &Rgb) -> Vec<UnitEntry> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::fixtures::{b, image, line, paint};

    /// A reader of swatch codes that reads none.
    fn no_codes(_: &[PixelBox]) -> Result<Vec<TextLine>, std::convert::Infallible> {
        Ok(Vec::new())
    }

    /// A column of swatches 60 × 30 at x 100, one row every 40 pixels from y 100, each with its
    /// code (when given; capitals without ascenders, boxed 8 high) and its description (type 16
    /// high) at x 170 plus `indent`: an indented description starts more than three code heights
    /// from its code, as on the USGS scan.
    /// A legend row: its code (if the detector found one), description, indent and swatch colour.
    type Row<'a> = (Option<&'a str>, &'a str, f64, (u8, u8, u8));

    fn column(rows: &[Row]) -> (Rgb, Vec<TextLine>) {
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
            let reading = |text: &str, score| TextLine { text: text.to_owned(), bbox: insides[0], score };
            Ok::<_, std::convert::Infallible>(vec![reading("T227", 0.6), reading("T221", 0.9), reading("T227.", 0.5)])
        };
        let coded = legends(&lines, &picture, &mut read).expect("no reading fails");
        assert_eq!(asked, [b(100.0, 140.0, 160.0, 170.0)], "the red swatch's inside, and nothing else");
        type Read<'a> = (Option<&'a str>, Option<(u8, u8, u8)>);
        let read: Vec<Read> = coded[0].entries.iter().map(|e| (e.code.as_deref(), e.colour)).collect();
        assert_eq!(read, [(Some("Qs"), Some(tan)), (Some("T227"), Some(red)), (Some("Pe"), Some(blue)), (Some("Xu"), Some(grey))]);
        assert_eq!(coded[0].entries[1].description, "227-Mile intrusive (Miocene)");
        assert_eq!(coded[0].entries[1].swatch, b(100.0, 140.0, 160.0, 170.0));
        let mut unreadable = |_: &[PixelBox]| Ok::<_, std::convert::Infallible>(vec![TextLine { text: "rocks".to_owned(), bbox: asked[0], score: 0.9 }]);
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
}
