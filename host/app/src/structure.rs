//! The map's structure as the extraction writes it: the lines `geomap_vision::structure` found,
//! prompted by the explanation's line symbols, as TA1 `line_type` and `line_feature` rows (one
//! feature per part of one pattern, so a fault solid where certain and dashed where approximate is
//! two features of two types), and the summary per symbol the result reports.
//!
//! Invariants: every line symbol of the explanation but a contact has a `line_type` row, found or
//! not, and one found nowhere is a warning; a line type's ID names its symbol's entry and pattern.

use schemars::JsonSchema;
use serde::Serialize;

use geomap_georef::units::{LineRow, LineTypeRow, Lines};
use geomap_vision::colour::hex;
use geomap_vision::layout::symbols::Pattern;
use geomap_vision::structure::{Away, FoundLine, LinePrompt, Marks};

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
    /// What found them: `explanation` (the symbol's sample as the prompt).
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

/// The ID of `prompt`'s line type drawn with `pattern`.
fn type_id(prompt: &LinePrompt, pattern: Pattern) -> String {
    format!("line_type_{}_{}", prompt.entry + 1, pattern_name(pattern))
}

/// The GeoPackage's line rows: a type per symbol (as its sample is drawn) and per other pattern
/// its lines show; a feature per part of each line.
pub(crate) fn line_rows(prompts: &[LinePrompt], found: &[FoundLine]) -> Lines {
    let mut lines = Lines::default();
    let add_type = |lines: &mut Lines, prompt: &LinePrompt, pattern: Pattern, ta1: &str| {
        let id = type_id(prompt, pattern);
        if !lines.types.iter().any(|t| t.id == id) {
            lines.types.push(LineTypeRow {
                id,
                name: ta1.to_owned(),
                description: prompt.words.clone(),
                dash_pattern: pattern_name(pattern).to_owned(),
                symbol: prompt.symbol.clone(),
            });
        }
    };
    for prompt in prompts {
        if let Some(ta1) = prompt.ta1_type {
            add_type(&mut lines, prompt, prompt.pattern, ta1);
        }
    }
    for line in found {
        let prompt = &prompts[line.prompt];
        let Some(ta1) = prompt.ta1_type else { continue };
        for (pattern, points) in &line.parts {
            add_type(&mut lines, prompt, *pattern, ta1);
            lines.features.push(LineRow {
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
/// (`lengths_km`, in the order of `lines.features`).
pub(crate) fn line_summaries(prompts: &[LinePrompt], lines: &Lines, lengths_km: &[Option<f64>]) -> Vec<LineSummary> {
    prompts
        .iter()
        .filter_map(|prompt| {
            let ta1 = prompt.ta1_type?;
            let prefix = format!("line_type_{}_", prompt.entry + 1);
            let mine: Vec<(usize, &LineRow)> = lines.features.iter().enumerate().filter(|(_, f)| f.type_id.starts_with(&prefix)).collect();
            // Sums start from 0.0 (an empty float sum is -0.0).
            let length_px =
                mine.iter().map(|(_, f)| f.points.windows(2).map(|w| (w[1].0 - w[0].0).hypot(w[1].1 - w[0].1)).sum::<f64>()).fold(0.0, |a, b| a + b);
            let length_km = mine.iter().map(|(i, _)| lengths_km.get(*i).copied().flatten()).sum::<Option<f64>>();
            let mean_confidence = mine.iter().map(|(_, f)| f.confidence).fold(0.0, |a, b| a + b) / mine.len().max(1) as f64;
            Some(LineSummary {
                line_type: ta1.to_owned(),
                symbol: prompt.symbol.clone(),
                words: prompt.words.clone(),
                count: mine.len() as u64,
                length_px: (length_px * 10.0).round() / 10.0,
                length_km: length_km.filter(|_| !mine.is_empty()).map(|km| (km * 1000.0).round() / 1000.0),
                mean_confidence: (mean_confidence * 1000.0).round() / 1000.0,
                prompted_by: "explanation".to_owned(),
                colour_hex: hex(prompt.colour),
                width_px: prompt.width_px,
                marks: marks_name(prompt.marks).to_owned(),
            })
        })
        .collect()
}

/// What the result warns of: no explanation of line symbols at all, or a symbol found nowhere.
pub(crate) fn line_warnings(prompts: &[LinePrompt], summaries: &[LineSummary]) -> Vec<String> {
    if prompts.is_empty() {
        return vec!["No explanation of line symbols was read on this sheet (it may be on another sheet or in a pamphlet), so no faults or folds were extracted: the GeoPackage's line tables are empty.".to_owned()];
    }
    summaries
        .iter()
        .filter(|summary| summary.count == 0)
        .map(|summary| format!("The explanation's line symbol “{}” was found nowhere on the main map.", summary.words))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_vision::structure::ta1_line_type;

    fn prompt(entry: usize, symbol: &str, pattern: Pattern) -> LinePrompt {
        LinePrompt {
            entry,
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
        let ids: Vec<&str> = lines.types.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["line_type_2_dashed", "line_type_3_solid", "line_type_2_solid"], "no contact type");
        assert_eq!(lines.features.len(), 2);
        assert_eq!(lines.features[0].type_id, "line_type_2_solid");
        let summaries = line_summaries(&prompts, &lines, &[Some(1.5), Some(1.0)]);
        assert_eq!(summaries.len(), 2);
        assert_eq!((summaries[0].count, summaries[0].length_px, summaries[0].length_km), (2, 100.0, Some(2.5)));
        assert_eq!(summaries[1].length_km, None);
        let warnings = line_warnings(&prompts, &summaries);
        assert_eq!(warnings, ["The explanation's line symbol “thrust fault—words” was found nowhere on the main map."]);
        assert!(line_warnings(&[], &[])[0].starts_with("No explanation of line symbols"));
    }
}
