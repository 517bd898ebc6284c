//! The map's structure as the extraction writes it: the lines and attitude symbols
//! `geomap_vision::structure` found, prompted by the explanation's symbols, as TA1 `line_type`
//! and `line_feature` rows (one feature per part of one pattern, so a fault solid where certain
//! and dashed where approximate is two features of two types) and `point_type` and
//! `point_feature` rows (each attitude with the dip `geomap_vision::structure::dips` read beside
//! it), the lines of section `geomap_vision::structure::section_letters` found as `cross_section`
//! rows, and the summary per symbol the result reports. It reads no pixel.
//!
//! Invariants: every line symbol of the explanation but a contact, and every attitude symbol, has
//! a type row, found or not, and one found nowhere is a warning; a type's ID names its symbol's
//! entry (and a line type's, its pattern).

use schemars::JsonSchema;
use serde::Serialize;

use geomap_export::ta1::{LineRow, LineTypeRow, PointRow, PointTypeRow, SectionRow, StructureRows};
use geomap_model::page::PixelBox;
use geomap_model::symbols::{Family, catalog};
use geomap_vision::colour::hex;
use geomap_vision::layout::symbols::Pattern;
use geomap_vision::structure::lines::{Away, FoundLine, LinePrompt, Marks};
use geomap_vision::structure::points::{FoundPoint, PointPrompt, Shape};
use geomap_vision::structure::section_letters::SectionLine;

/// One line symbol of the explanation and what the extraction found of it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LineSummary {
    /// Its TA1 line type (`fault`, `thrust fault`, `anticline`, …; `other` when TA1 has none).
    #[serde(rename = "type")]
    pub line_type: String,
    /// The symbol as the explanation's entry begins ("thrust fault").
    pub symbol: String,
    /// The entry's words.
    pub words: String,
    /// Line features written (a line solid in one part and dashed in another counts twice).
    pub count: u64,
    /// Their total length in the scan's pixels.
    pub length_px: f64,
    /// Their total length on the ground in km, when the map is georeferenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_km: Option<f64>,
    /// Their mean confidence, 0–1 (width and marks against the symbol's sample).
    pub mean_confidence: f64,
    /// What found them: `explanation` (the symbol's sample as the prompt) or `look` (no
    /// explanation of line symbols: dark lines by their width and marks).
    pub prompted_by: String,
    /// The colour looked for, as measured on the symbol's sample.
    pub colour_hex: String,
    /// The stroke width looked for, in pixels, as measured on the sample.
    pub width_px: f64,
    /// The marks looked for beside the line: `none`, `teeth`, `arrows` (`away` or `towards` the
    /// line, as the fold's name says) or `ball`.
    pub marks: String,
}

/// The name a pattern has in `line_type.dash_pattern`.
fn pattern_name(pattern: Pattern) -> &'static str {
    match pattern {
        Pattern::Solid => "solid",
        Pattern::Dashed => "dashed",
        Pattern::Dotted => "dotted",
    }
}

/// How a summary names the marks a symbol is looked for with.
fn marks_name(marks: Marks) -> &'static str {
    match marks {
        Marks::None => "none",
        Marks::Teeth => "teeth",
        Marks::Arrows(Some(Away(true))) => "arrows away",
        Marks::Arrows(Some(Away(false))) => "arrows towards",
        Marks::Arrows(None) => "arrows",
        Marks::Ball => "ball",
    }
}

/// What a type's ID begins with for `symbol` and its explanation `entry`: the entry's number,
/// or `look` and the symbol's name for one looked for by its look alone.
fn type_key(kind: &str, entry: Option<usize>, symbol: &str) -> String {
    match entry {
        Some(entry) => format!("{kind}_type_{}", entry + 1),
        None => format!("{kind}_type_look_{}", symbol.replace(' ', "_")),
    }
}

/// The ID of `prompt`'s line type drawn with `pattern`.
fn type_id(prompt: &LinePrompt, pattern: Pattern) -> String {
    format!("{}_{}", type_key("line", prompt.entry, &prompt.symbol), pattern_name(pattern))
}

/// What found a prompt's features: `explanation` (its entry's sample) or `look`.
fn prompted_by(entry: Option<usize>) -> String {
    if entry.is_some() { "explanation" } else { "look" }.to_owned()
}

/// The GeoPackage's line rows: a type per symbol (as its sample is drawn) and per other pattern
/// its lines show; a feature per part of each line.
pub(crate) fn line_rows(prompts: &[LinePrompt], found: &[FoundLine]) -> StructureRows {
    let mut lines = StructureRows::default();
    let add_type = |lines: &mut StructureRows, prompt: &LinePrompt, pattern: Pattern, ta1: &str| {
        let id = type_id(prompt, pattern);
        if !lines.line_types.iter().any(|t| t.id == id) {
            lines.line_types.push(LineTypeRow {
                id,
                name: ta1.to_owned(),
                description: prompt.words.clone(),
                dash_pattern: pattern_name(pattern).to_owned(),
                symbol: prompt.symbol.clone(),
            });
        }
    };
    // Every symbol of the explanation has its type, found or not; one looked for by its look, when found.
    for prompt in prompts.iter().filter(|prompt| prompt.entry.is_some()) {
        if let Some(ta1) = prompt.ta1_type {
            add_type(&mut lines, prompt, prompt.pattern, ta1);
        }
    }
    for line in found {
        let prompt = &prompts[line.prompt];
        let Some(ta1) = prompt.ta1_type else { continue };
        for (pattern, points) in &line.parts {
            add_type(&mut lines, prompt, *pattern, ta1);
            lines.lines.push(LineRow {
                type_id: type_id(prompt, *pattern),
                name: prompt.symbol.clone(),
                points: points.clone(),
                polarity: line.polarity,
                confidence: line.confidence,
            });
        }
    }
    lines
}

/// Per line symbol (contacts left out), what was found of it, with the features' ground lengths
/// (`lengths_km`, in the order of `lines.lines`, when the map is georeferenced).
pub(crate) fn line_summaries(prompts: &[LinePrompt], lines: &StructureRows, lengths_km: Option<&[f64]>) -> Vec<LineSummary> {
    prompts
        .iter()
        .filter_map(|prompt| {
            let ta1 = prompt.ta1_type?;
            let prefix = format!("{}_", type_key("line", prompt.entry, &prompt.symbol));
            let mine: Vec<(usize, &LineRow)> = lines.lines.iter().enumerate().filter(|(_, f)| f.type_id.starts_with(&prefix)).collect();
            // Sums start from 0.0 (an empty float sum is -0.0).
            let length_px =
                mine.iter().map(|(_, f)| f.points.windows(2).map(|w| (w[1].0 - w[0].0).hypot(w[1].1 - w[0].1)).sum::<f64>()).fold(0.0, |a, b| a + b);
            let length_km = mine.iter().map(|(i, _)| lengths_km.and_then(|lengths| lengths.get(*i).copied())).sum::<Option<f64>>();
            let mean_confidence = mine.iter().map(|(_, f)| f.confidence).fold(0.0, |a, b| a + b) / mine.len().max(1) as f64;
            Some(LineSummary {
                line_type: ta1.to_owned(),
                symbol: prompt.symbol.clone(),
                words: prompt.words.clone(),
                count: mine.len() as u64,
                length_px: (length_px * 10.0).round() / 10.0,
                length_km: length_km.filter(|_| !mine.is_empty()).map(|km| (km * 1000.0).round() / 1000.0),
                mean_confidence: (mean_confidence * 1000.0).round() / 1000.0,
                prompted_by: prompted_by(prompt.entry),
                colour_hex: hex(prompt.colour),
                width_px: (prompt.width_px * 10.0).round() / 10.0,
                marks: marks_name(prompt.marks).to_owned(),
            })
        })
        .collect()
}

/// What the result warns of: no explanation of line symbols at all (the lines were looked for by
/// their look), or a symbol of the explanation found nowhere.
pub(crate) fn line_warnings(prompts: &[LinePrompt], summaries: &[LineSummary]) -> Vec<String> {
    if prompts.iter().all(|prompt| prompt.entry.is_none()) {
        return vec!["No explanation of line symbols was read on this sheet (it may be on another sheet or in a pamphlet): faults and folds were found by their look alone, at lower confidence (dark lines much wider than the map's common dark stroke as faults, their teeth or ball for the finer type, arrows across a line as a fold), and lines of other colours were not looked for.".to_owned()];
    }
    summaries
        .iter()
        .filter(|summary| summary.count == 0)
        .map(|summary| format!("The explanation's line symbol “{}” was found nowhere on the main map.", summary.words))
        .collect()
}

/// One point symbol of the explanation (an attitude or a filled mark) and what the extraction
/// found of it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PointSummary {
    /// Its TA1 point type, or the finer kind the GeoPackage files under one (`inclined bedding`,
    /// `vertical bedding`, `foliation`, `breccia pipe`, …).
    #[serde(rename = "type")]
    pub point_type: String,
    /// The symbol as the explanation's entry begins ("strike and dip of beds").
    pub symbol: String,
    /// The entry's words.
    pub words: String,
    /// Point features written.
    pub count: u64,
    /// How many of them have a dip read from the number printed beside them.
    pub dips_read: u64,
    /// Their mean confidence, 0–1 (strike, tick and stroke, or a mark's size, squareness, fill and
    /// taper, against the symbol's sample).
    pub mean_confidence: f64,
    /// What found them: `explanation` (the symbol's sample as the prompt) or `look` (no
    /// explanation of attitude symbols: dark strike lines with a tick, measured on the map).
    pub prompted_by: String,
    /// What `dip_direction` is measured from, clockwise: `grid north` (through the newest
    /// georeference) or `sheet up` (the map is not georeferenced).
    pub dip_direction_from: String,
    /// The stroke width looked for, in pixels, as measured on the sample (a mark: its narrower side).
    pub width_px: f64,
    /// The strike line's and the tick's lengths looked for, in pixels, as measured on the sample
    /// (a mark: its wider and narrower sides).
    pub strike_px: f64,
    /// See `strike_px`.
    pub tick_px: f64,
}

/// The ID of `prompt`'s point type.
fn point_type_id(prompt: &PointPrompt) -> String {
    type_key("point", prompt.entry, &prompt.symbol)
}

/// Adds the point rows to `structure`: a type per attitude symbol and a feature per attitude
/// found, with its dip (`dips`, per point) and its dip direction (`dip_directions`, per point:
/// from grid north when georeferenced, else as found, from the sheet's up).
pub(crate) fn add_point_rows(
    structure: &mut StructureRows,
    prompts: &[PointPrompt],
    found: &[FoundPoint],
    dips: &[Option<(u32, PixelBox)>],
    dip_directions: &[Option<f64>],
) {
    // Every symbol of the explanation has its type, found or not; one looked for by its shape, when found.
    let written = |p: usize| prompts[p].entry.is_some() || found.iter().any(|point| point.prompt == p);
    structure.point_types.extend((0..prompts.len()).filter(|&p| written(p)).map(|p| &prompts[p]).map(|prompt| PointTypeRow {
        id: point_type_id(prompt),
        name: prompt.ta1_type.to_owned(),
        description: prompt.words.clone(),
        mark_colour: (prompt.shape == Shape::Filled).then_some(prompt.colour),
        mark_triangle: prompt.printed_as_triangle(),
    }));
    for ((point, dip), dip_direction) in found.iter().zip(dips).zip(dip_directions) {
        let prompt = &prompts[point.prompt];
        structure.points.push(PointRow {
            type_id: point_type_id(prompt),
            at: point.at,
            dip_direction: *dip_direction,
            dip: match prompt.shape {
                Shape::Cross | Shape::Strung => Some(90.0), // the symbol says the beds (joints) stand vertical
                Shape::CircledCross => Some(0.0),           // and that they lie flat
                Shape::Tick => dip.map(|(degrees, _)| f64::from(degrees)),
                Shape::Filled => None, // a mark, not an attitude
            },
            dip_words: dip.map(|(_, b)| (b.x0, b.y0, b.x1, b.y1)),
            confidence: point.confidence,
        });
    }
}

/// Per attitude symbol, what was found of it (`georeferenced`: the dip directions are from grid north).
pub(crate) fn point_summaries(prompts: &[PointPrompt], structure: &StructureRows, georeferenced: bool) -> Vec<PointSummary> {
    prompts
        .iter()
        .map(|prompt| {
            let id = point_type_id(prompt);
            let mine: Vec<&PointRow> = structure.points.iter().filter(|p| p.type_id == id).collect();
            let mean_confidence = mine.iter().map(|p| p.confidence).fold(0.0, |a, b| a + b) / mine.len().max(1) as f64;
            PointSummary {
                point_type: prompt.ta1_type.to_owned(),
                symbol: prompt.symbol.clone(),
                words: prompt.words.clone(),
                count: mine.len() as u64,
                dips_read: mine.iter().filter(|p| p.dip_words.is_some()).count() as u64,
                mean_confidence: (mean_confidence * 1000.0).round() / 1000.0,
                prompted_by: prompted_by(prompt.entry),
                dip_direction_from: if georeferenced { "grid north" } else { "sheet up" }.to_owned(),
                width_px: (prompt.width_px * 10.0).round() / 10.0,
                strike_px: (prompt.strike_px * 10.0).round() / 10.0,
                tick_px: (prompt.tick_px * 10.0).round() / 10.0,
            }
        })
        .collect()
}

/// What the result warns of for point symbols (`summaries`, one per prompt of `prompts`):
/// attitudes found by their shape alone (no explanation read), one whose sample shows no symbol of
/// its shape (`unmeasured`, its words), one found nowhere, and found strike-and-dip attitudes
/// without a dip read (vertical and horizontal beds' symbols say their dip, and a filled mark has none).
pub(crate) fn point_warnings(unmeasured: &[String], prompts: &[PointPrompt], summaries: &[PointSummary], words_read: bool) -> Vec<String> {
    let mut warnings: Vec<String> = unmeasured
        .iter()
        .map(|words| {
            format!("The explanation's point symbol “{words}” shows no whole symbol of the shape its words name on its sample, so it was not looked for.")
        })
        .collect();
    let looked: Vec<&PointSummary> = summaries.iter().filter(|s| s.prompted_by == "look").collect();
    let found: Vec<String> = looked.iter().filter(|s| s.count > 0).map(|s| format!("{} {}", s.count, s.point_type)).collect();
    // The shapes looked for, as the catalog's looks begin ("Dark strike line with a dip tick (…)").
    let looks = catalog().looks(Family::Point).filter_map(|symbol| symbol.look.as_deref()?.split(" (").next().map(str::to_lowercase));
    let shapes = looks.collect::<Vec<String>>().join(", ");
    if !found.is_empty() {
        warnings.push(format!(
            "No explanation of attitude symbols was read on this sheet: attitudes were found by their shape alone ({shapes}), their sizes measured on the map, at lower confidence: {}.",
            found.join(", ")
        ));
    } else if !looked.is_empty() {
        warnings.push(format!("No explanation of attitude symbols was read on this sheet, and no attitude was found by its shape alone ({shapes})."));
    }
    for (prompt, summary) in prompts.iter().zip(summaries) {
        if summary.count == 0 && summary.prompted_by == "explanation" {
            warnings.push(format!("The explanation's point symbol “{}” was found nowhere on the main map.", summary.words));
        } else if summary.dips_read < summary.count && prompt.shape == Shape::Tick {
            let why = if words_read {
                "no number was read beside them"
            } else {
                "the main map's words were not read (geomap_process_image reads them with the text method, or geomap_read_text)"
            };
            warnings.push(format!("{} of {} “{}” attitudes have no dip: {why}.", summary.count - summary.dips_read, summary.count, summary.symbol));
        }
    }
    warnings
}

/// One line of section found on the main map for a cross section the layout found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SectionSummary {
    /// Its letters, as the cross section's caption gives them (`A–A′`).
    pub name: String,
    /// The cross section it is drawn for: its box in the scan's pixels, as the layout found it.
    pub section_bbox: PixelBox,
    /// Its end at the unprimed letter (A), in the scan's pixels.
    pub from: [f64; 2],
    /// Its end at the primed letter (A′), in the scan's pixels.
    pub to: [f64; 2],
    /// Its length in the scan's pixels.
    pub length_px: f64,
    /// Its length on the ground in km, when the map is georeferenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_km: Option<f64>,
    /// 0–1: 0.9 when the prime was read at one end, 0.75 when the primed letter was told by its
    /// wider box, 0.6 when the ends were taken left to right or, for a line running more up and
    /// down than across, top to bottom (the prime read at neither); 0.5 when a letter was read at
    /// one end only.
    pub confidence: f64,
    /// How its ends were told apart: `prime read`, `wider letter`, `left to right` or `top to
    /// bottom`; with one letter read, `one letter read, ` and `its prime`, `left to right` or `top
    /// to bottom`.
    pub ends_from: String,
}

/// A line of section's TA1 row.
pub(crate) fn section_row(line: &SectionLine) -> SectionRow {
    let bbox = &line.section_bbox;
    SectionRow { name: line.name.clone(), points: vec![line.from, line.to], confidence: line.confidence, section_bbox: (bbox.x0, bbox.y0, bbox.x1, bbox.y1) }
}

/// A line of section as the result reports it, with its ground length (`length_km`) when the map
/// is georeferenced.
pub(crate) fn section_summary(line: SectionLine, length_km: Option<f64>) -> SectionSummary {
    let round = |v: f64| (v * 10.0).round() / 10.0;
    SectionSummary {
        length_px: round(line.length_px()),
        from: [round(line.from.0), round(line.from.1)],
        to: [round(line.to.0), round(line.to.1)],
        name: line.name,
        section_bbox: line.section_bbox,
        length_km: length_km.map(|km| (km * 1000.0).round() / 1000.0),
        confidence: line.confidence,
        ends_from: line.ends_from,
    }
}

/// What the result warns of for the cross sections: one whose line of section was found nowhere,
/// one whose letters were not read, and, without the main map's words, why none was looked for.
pub(crate) fn section_warnings(
    sections: &[(PixelBox, [String; 2])],
    found: &[Option<SectionLine>],
    unlettered: usize,
    (words_read, ends_read): (bool, bool),
) -> Vec<String> {
    let mut warnings: Vec<String> = sections
        .iter()
        .zip(found)
        .filter(|(_, found)| found.is_none())
        .map(|((_, [letter, primed]), _)| {
            let why = match (words_read, ends_read) {
                (_, true) => {
                    "no two of its letters read on the main map have a line drawn between them, and no thin straight line there has them read at its ends (a letter a few pixels high is missed)"
                }
                (true, false) => {
                    "no two of its letters read on the main map have a line drawn between them, and without the OCR models (geomap_prepare_detectors installs ppocr-v4) no letters were read at the ends of its thin straight lines"
                }
                (false, false) => {
                    "the main map's words were not read (geomap_process_image reads them with the text method, or geomap_read_text), nor, without the OCR models, the letters at the ends of its thin straight lines"
                }
            };
            format!("The line of section of cross section {letter}–{primed} was not found: {why}.")
        })
        .collect();
    if unlettered > 0 {
        warnings.push(format!("{unlettered} cross section(s) of the layout have no letters read, so their lines of section were not looked for."));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_model::page::PixelBox;
    use geomap_vision::structure::lines::ta1_line_type;
    use geomap_vision::structure::points::FoundPoint;

    fn prompt(entry: usize, symbol: &str, pattern: Pattern) -> LinePrompt {
        LinePrompt {
            entry: Some(entry),
            symbol: symbol.to_owned(),
            words: format!("{symbol}—words"),
            ta1_type: ta1_line_type(symbol),
            colour: (0, 0, 0),
            width_px: 3.0,
            pattern,
            period_px: None,
            marks: Marks::None,
        }
    }

    #[test]
    fn each_part_is_a_feature_of_its_patterns_type_and_a_symbol_found_nowhere_is_warned_of() {
        let prompts = [prompt(0, "contact", Pattern::Solid), prompt(1, "fault", Pattern::Dashed), prompt(2, "thrust fault", Pattern::Solid)];
        let found = [FoundLine {
            prompt: 1,
            parts: vec![(Pattern::Solid, vec![(0.0, 0.0), (30.0, 40.0)]), (Pattern::Dashed, vec![(30.0, 40.0), (30.0, 90.0)])],
            polarity: 0,
            confidence: 0.8,
        }];
        let lines = line_rows(&prompts, &found);
        let ids: Vec<&str> = lines.line_types.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["line_type_2_dashed", "line_type_3_solid", "line_type_2_solid"], "no contact type");
        assert_eq!(lines.lines.len(), 2);
        assert_eq!(lines.lines[0].type_id, "line_type_2_solid");
        let summaries = line_summaries(&prompts, &lines, Some(&[1.5, 1.0]));
        assert_eq!(summaries.len(), 2);
        assert_eq!((summaries[0].count, summaries[0].length_px, summaries[0].length_km), (2, 100.0, Some(2.5)));
        assert_eq!(summaries[1].length_km, None);
        assert_eq!(line_summaries(&prompts, &lines, None)[0].length_km, None, "not georeferenced");
        let warnings = line_warnings(&prompts, &summaries);
        assert_eq!(warnings, ["The explanation's line symbol “thrust fault—words” was found nowhere on the main map."]);
        assert!(line_warnings(&[], &[])[0].starts_with("No explanation of line symbols"));
    }

    #[test]
    fn each_attitude_is_a_feature_with_the_dip_read_beside_it_and_one_without_is_warned_of() {
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
        let number = |x: f64, y: f64| PixelBox { x0: x, y0: y, x1: x + 20.0, y1: y + 14.0 };
        let points = [at(100.0, 100.0), at(140.0, 100.0), at(400.0, 400.0)];
        // The dips read beside the first two (geomap_vision::structure::dips), none beside the third.
        let found = [Some((35, number(105.0, 105.0))), Some((12, number(150.0, 108.0))), None];
        let mut structure = StructureRows::default();
        add_point_rows(&mut structure, std::slice::from_ref(&prompt), &points, &found, &[Some(91.0), Some(92.0), Some(93.0)]);
        assert_eq!(structure.point_types[0].id, "point_type_6");
        assert_eq!(structure.points[2].dip, None, "no number read: no dip");
        assert_eq!(structure.points[0].dip_words, Some((105.0, 105.0, 125.0, 119.0)));
        let summaries = point_summaries(std::slice::from_ref(&prompt), &structure, false);
        assert_eq!((summaries[0].count, summaries[0].dips_read, summaries[0].dip_direction_from.as_str()), (3, 2, "sheet up"));
        assert_eq!(
            point_warnings(&[], std::slice::from_ref(&prompt), &summaries, true),
            ["1 of 3 “strike and dip of beds” attitudes have no dip: no number was read beside them."]
        );

        // Found by their shape alone: the warning names what was found, and only that.
        let looked = |point_type: &str, count: u64| PointSummary {
            point_type: point_type.to_owned(),
            prompted_by: "look".to_owned(),
            count,
            dips_read: count,
            ..summaries[0].clone()
        };
        let two = [prompt.clone(), PointPrompt { shape: Shape::CircledCross, ..prompt.clone() }];
        let warnings = point_warnings(&[], &two, &[looked("inclined bedding", 12), looked("horizontal bedding", 0)], true);
        assert!(warnings.len() == 1 && warnings[0].ends_with("at lower confidence: 12 inclined bedding."), "{warnings:?}");
        let warnings = point_warnings(&[], &two, &[looked("inclined bedding", 0), looked("horizontal bedding", 0)], true);
        assert!(warnings.len() == 1 && warnings[0].contains("no attitude was found by its shape alone"), "{warnings:?}");
    }

    #[test]
    fn a_line_of_section_is_a_row_from_its_unprimed_letter_and_a_summary_rounded_with_its_ground_length() {
        let line = SectionLine {
            name: "B–B′".to_owned(),
            section_bbox: PixelBox { x0: 10.0, y0: 900.0, x1: 300.0, y1: 990.0 },
            from: (100.0, 700.0),
            to: (594.04, 205.96),
            confidence: 0.9,
            ends_from: "prime read".to_owned(),
        };
        let row = section_row(&line);
        assert_eq!(
            (row.name.as_str(), row.points.as_slice(), row.section_bbox),
            ("B–B′", &[(100.0, 700.0), (594.04, 205.96)][..], (10.0, 900.0, 300.0, 990.0))
        );
        let summary = section_summary(line, Some(1.23456));
        assert_eq!((summary.from, summary.to, summary.length_px, summary.length_km), ([100.0, 700.0], [594.0, 206.0], 698.7, Some(1.235)));
    }
}
