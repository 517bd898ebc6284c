//! The map's metadata as its sheet prints it: title, authors, year, publisher and series, scale,
//! quadrangle, base map (source, year, projection, datum) and contour interval, each with the
//! lines it was read from and a confidence.
//!
//! Invariants: pure text work on the lines read; a field is present only where a line says it
//! (never guessed); every field not found is named in `warnings`; confidences are fixed per rule
//! (how directly the line says it), not scores of the recogniser.

use schemars::JsonSchema;
use serde::Serialize;

use super::TitleText;
use super::numbers::{number_word, scale_ratio, years};
use crate::graticule::datum::named_datum;
use crate::ocr::reader::TextLine;

/// One field: its value, the lines it was read from, and how sure the rule that read it is (0–1).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Field<T> {
    /// The value.
    pub value: T,
    /// The lines it was read from, as read.
    pub words: Vec<String>,
    /// How directly those lines say it, 0–1.
    pub confidence: f64,
}

/// A contour interval.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Interval {
    /// The number printed.
    pub value: f64,
    /// `feet` or `metres`.
    pub unit: String,
}

/// The base map the geology is drawn on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct BaseMap {
    /// Who made it ("U.S. Geological Survey").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Field<String>>,
    /// Its year.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<Field<u32>>,
    /// Its projection ("Polyconic", "Universal Transverse Mercator").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<Field<String>>,
    /// Its horizontal datum ("NAD27", "NAD83", "WGS84").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datum: Option<Field<String>>,
}

/// What the sheet says about itself; absent fields were not found (see `warnings`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct MapMetadata {
    /// The title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<Field<String>>,
    /// The authors, in the order printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authors: Option<Field<Vec<String>>>,
    /// The year of publication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<Field<u32>>,
    /// The publisher ("U.S. Geological Survey").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher: Option<Field<String>>,
    /// The series and number ("Scientific Investigations Map 2900").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Field<String>>,
    /// The scale printed, as the `N` of `1:N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<Field<u64>>,
    /// The quadrangle's name ("Peach Springs").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quadrangle: Option<Field<String>>,
    /// The base map, when any of it is printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_map: Option<BaseMap>,
    /// The contour interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contour_interval: Option<Field<Interval>>,
    /// Each field not found, named, with why.
    pub warnings: Vec<String>,
}

/// Series names of the publications geologic maps appear in, as printed (upper case).
const SERIES: [&str; 14] = [
    "SCIENTIFIC INVESTIGATIONS MAP",
    "MISCELLANEOUS INVESTIGATIONS SERIES MAP",
    "MISCELLANEOUS INVESTIGATIONS SERIES",
    "MISCELLANEOUS GEOLOGIC INVESTIGATIONS MAP",
    "MISCELLANEOUS FIELD STUDIES MAP",
    "GEOLOGIC QUADRANGLE MAP",
    "GEOLOGIC INVESTIGATIONS SERIES",
    "OPEN-FILE REPORT",
    "OPEN FILE REPORT",
    "PROFESSIONAL PAPER",
    "DIGITAL GEOLOGIC MAP",
    "CONTRIBUTED MAP",
    "MAP SERIES",
    "BULLETIN",
];

/// Projections a base map names, as printed (upper case), and how this field gives them.
const PROJECTIONS: [(&str, &str); 7] = [
    ("UNIVERSAL TRANSVERSE MERCATOR", "Universal Transverse Mercator"),
    ("TRANSVERSE MERCATOR", "Transverse Mercator"),
    ("LAMBERT CONFORMAL CONIC", "Lambert Conformal Conic"),
    ("ALBERS EQUAL-AREA", "Albers Equal-Area Conic"),
    ("ALBERS EQUAL AREA", "Albers Equal-Area Conic"),
    ("POLYCONIC", "Polyconic"),
    ("UTM", "Universal Transverse Mercator"),
];

/// "From" as printed, and as the reader may leave it.
const FROM_READINGS: [&str; 4] = ["FROM", "FRM", "FR0M", "FROIM"];

/// Reads the metadata from `lines` (in reading order) and the layout's `title`.
pub fn read_metadata(lines: &[TextLine], title: Option<&TitleText>) -> MapMetadata {
    let texts: Vec<&str> = lines.iter().map(|line| line.text.trim()).filter(|text| !text.is_empty()).collect();
    let mut metadata = MapMetadata {
        title: title.map(|title| Field { value: title.text.clone(), words: vec![title.text.clone()], confidence: 0.8 }),
        authors: authors(lines),
        publisher: publisher(&texts),
        series: series(&texts),
        scale: scale(&texts),
        quadrangle: quadrangle(title.map(|title| title.text.as_str()), &texts),
        base_map: base_map(&texts),
        contour_interval: texts.iter().find_map(|text| contour_interval(text)),
        ..MapMetadata::default()
    };
    metadata.year = year(&texts, metadata.series.as_ref(), metadata.publisher.as_ref());
    let absent = [
        ("title", metadata.title.is_none(), "no line of large type stands out in the margins"),
        ("authors", metadata.authors.is_none(), "no line begins with \"By\" (or \"Compiled by\", \"Geology by\")"),
        ("year", metadata.year.is_none(), "no year is printed with the series, the publisher or a publication date"),
        ("publisher", metadata.publisher.is_none(), "no line names a geological survey or society"),
        ("series", metadata.series.is_none(), "no line names a publication series"),
        ("scale", metadata.scale.is_none(), "no line prints a ratio 1:N"),
        ("quadrangle", metadata.quadrangle.is_none(), "no line names a quadrangle"),
        ("base_map", metadata.base_map.is_none(), "no line begins with \"Base\" or names a datum or projection"),
        ("contour_interval", metadata.contour_interval.is_none(), "no line prints \"Contour interval\""),
    ];
    metadata.warnings = absent.iter().filter(|(_, missing, _)| *missing).map(|(name, _, why)| format!("metadata field {name} not read: {why}")).collect();
    metadata
}

fn upper(text: &str) -> String {
    text.to_uppercase()
}

/// A word of a name as printed: a leading `l` before another lower-case letter is a capital I the
/// reader took for an l ("lvo" is "Ivo"; names begin with a capital, particles such as "la" aside).
fn capital_i(word: &str) -> String {
    let mut letters = word.chars();
    match (letters.next(), letters.next()) {
        (Some('l'), Some(second)) if second.is_lowercase() && !matches!(word, "la" | "le" | "los" | "las") => format!("I{}", &word[1..]),
        _ => word.to_owned(),
    }
}

/// The scale: a caption that begins "SCALE" first, then a line that says "scale" anywhere, then any ratio.
fn scale(texts: &[&str]) -> Option<Field<u64>> {
    let rank = |text: &str| {
        let up = upper(text);
        if up.trim_start().starts_with("SCALE") {
            0.9
        } else if up.contains("SCALE") {
            0.6
        } else {
            0.5
        }
    };
    let mut found: Vec<(u64, &str, f64)> = texts.iter().filter_map(|text| scale_ratio(text).map(|ratio| (ratio, *text, rank(text)))).collect();
    // The first of the best rank: sort is stable.
    found.sort_by(|a, b| b.2.total_cmp(&a.2));
    found.first().map(|(ratio, text, confidence)| Field { value: *ratio, words: vec![(*text).to_owned()], confidence: *confidence })
}

/// The authors: the line under a "By" set alone (a title block's), a line that begins "By", or
/// the names after "by" on a line about the geology ("Geology mapped in 1992–1998 by …"); the
/// names split at commas and "and".
fn authors(lines: &[TextLine]) -> Option<Field<Vec<String>>> {
    let names_of = |text: &str| -> Vec<String> {
        text.replace(" and ", ",")
            .replace(" AND ", ",")
            .replace('&', ",")
            .split([',', ';', ':'])
            .map(|name| name.trim().trim_end_matches('.').split_whitespace().map(capital_i).collect::<Vec<_>>().join(" "))
            .filter(|name| name.chars().filter(|c| c.is_alphabetic()).count() >= 3 && name.contains(' ') && !upper(name).starts_with("ET AL"))
            .collect()
    };
    let field = |names: Vec<String>, words: Vec<String>, confidence: f64| (!names.is_empty()).then_some(Field { value: names, words, confidence });
    // "By" alone, the names on the nearest line below it that overlaps it across.
    let alone = lines.iter().filter(|line| upper(line.text.trim()) == "BY").find_map(|by| {
        let height = (by.bbox.y1 - by.bbox.y0).max(1.0);
        let below = lines
            .iter()
            .filter(|line| line.bbox.y0 >= by.bbox.y1 - 0.3 * height && line.bbox.y0 <= by.bbox.y1 + 3.0 * height)
            .filter(|line| line.bbox.x0 <= by.bbox.x1 + 10.0 * height && line.bbox.x1 >= by.bbox.x0 - 10.0 * height)
            .min_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0))?;
        field(names_of(&below.text), vec![by.text.clone(), below.text.clone()], 0.8)
    });
    alone.or_else(|| {
        lines.iter().find_map(|line| {
            let up = upper(&line.text);
            if up.contains("BASE") {
                return None;
            }
            if let Some(rest) = up.strip_prefix("BY ") {
                return field(names_of(&line.text[line.text.len() - rest.len()..]), vec![line.text.clone()], 0.8);
            }
            let about_geology = ["GEOLOGY", "GEOLOGIC", "MAPPED", "COMPILED"].iter().any(|word| up.starts_with(word));
            let at = up.find(" BY ").filter(|_| about_geology)?;
            field(names_of(&line.text[at + 4..]), vec![line.text.clone()], 0.6)
        })
    })
}

/// The publisher: the words of a line that name a geological survey or society (not a base map's source).
fn publisher(texts: &[&str]) -> Option<Field<String>> {
    texts.iter().find_map(|text| {
        let up = upper(text);
        if up.contains("BASE") {
            return None;
        }
        let named = ["GEOLOGICAL SURVEY", "GEOLOGICAL SOCIETY", "BUREAU OF MINES", "BUREAU OF GEOLOGY"]
            .iter()
            .find_map(|name| up.find(name).map(|at| (at, name.len())))?;
        let (at, length) = named;
        // The words before the name that belong to it: capitalised ones ("U.S.", "Arizona").
        let before: Vec<&str> = text[..at].split_whitespace().collect();
        let kept = before.iter().rev().take_while(|word| word.chars().next().is_some_and(|c| c.is_uppercase()) && !word.ends_with(',')).count().min(3);
        let start: Vec<&str> = before[before.len() - kept..].to_vec();
        let value = [start.join(" "), text[at..at + length].to_owned()].iter().filter(|part| !part.is_empty()).cloned().collect::<Vec<_>>().join(" ");
        Some(Field { value: canonical_publisher(&value), words: vec![(*text).to_owned()], confidence: 0.7 })
    })
}

/// "U.S. GEOLOGICAL SURVEY" (or a reading of it up to two letters off, "U.S. Glogical Survey") as
/// "U.S. Geological Survey"; other names as printed.
fn canonical_publisher(value: &str) -> String {
    let squeezed: String = upper(value).chars().filter(char::is_ascii_alphanumeric).collect();
    let near = |name: &str| edit_distance(&squeezed, name) <= 2;
    if near("USGEOLOGICALSURVEY") || near("UNITEDSTATESGEOLOGICALSURVEY") { "U.S. Geological Survey".to_owned() } else { value.to_owned() }
}

/// Levenshtein distance between two ASCII strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            current.push((previous[j] + usize::from(ca != cb)).min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// The series and its number ("Scientific Investigations Map 2900", "Open-File Report 2005-1234").
fn series(texts: &[&str]) -> Option<Field<String>> {
    texts.iter().find_map(|text| {
        let up = upper(text);
        let (at, name) = SERIES.iter().find_map(|name| up.find(name).map(|at| (at, *name)))?;
        let after = text[at + name.len()..].trim_start();
        let number: String = after.split_whitespace().next().unwrap_or_default().trim_end_matches([',', '.', ';']).to_owned();
        let has_number = number.chars().any(|c| c.is_ascii_digit());
        let value = if has_number { format!("{} {number}", &text[at..at + name.len()]) } else { text[at..at + name.len()].to_owned() };
        Some(Field { value, words: vec![(*text).to_owned()], confidence: if has_number { 0.8 } else { 0.5 } })
    })
}

/// The year of publication: one printed with the series or the publisher, or after "Published",
/// "Printed" or "Approved for publication" (the latest on that line).
fn year(texts: &[&str], series: Option<&Field<String>>, publisher: Option<&Field<String>>) -> Option<Field<u32>> {
    let dated = |text: &str| {
        let up = upper(text);
        ["PUBLISHED", "PRINTED", "APPROVED FOR PUBLICATION", "COPYRIGHT", "©"].iter().any(|word| up.contains(word)) && !up.contains("BASE")
    };
    let from = |words: &[String], confidence: f64| {
        words.iter().find_map(|line| years(line).into_iter().max().map(|year| Field { value: year, words: vec![line.clone()], confidence }))
    };
    series
        .and_then(|field| from(&field.words, 0.7))
        .or_else(|| publisher.and_then(|field| from(&field.words, 0.6)))
        .or_else(|| from(&texts.iter().filter(|text| dated(text)).map(|text| (*text).to_owned()).collect::<Vec<_>>(), 0.6))
}

/// The quadrangle a line names: the words before "QUADRANGLE", back to "OF THE", "OF" or the
/// line's start, without a size ("30' X 60'", "7.5-MINUTE").
fn quadrangle(title: Option<&str>, texts: &[&str]) -> Option<Field<String>> {
    let lines = title.into_iter().map(|title| (title, 0.8)).chain(texts.iter().map(|text| (*text, 0.6)));
    lines.into_iter().find_map(|(text, confidence)| {
        let up = upper(text);
        let at = up.find("QUADRANGLE")?;
        let before = &text[..at];
        let start = ["OF THE ", "OF "].iter().filter_map(|lead| upper(before).rfind(lead).map(|i| i + lead.len())).max().unwrap_or(0);
        let words: Vec<&str> = before[start..]
            .split_whitespace()
            .filter(|word| !word.chars().any(|c| c.is_ascii_digit()) && !matches!(upper(word).as_str(), "X" | "BY" | "MINUTE" | "-MINUTE"))
            .collect();
        let name = words.join(" ").trim_matches([',', '.', ' ']).to_owned();
        (name.chars().filter(|c| c.is_alphabetic()).count() >= 3).then(|| Field { value: name, words: vec![text.to_owned()], confidence })
    })
}

/// The base map: its line ("Base from U.S. Geological Survey, 1967"), the projection it or a
/// nearby line names, and the datum any line names.
fn base_map(texts: &[&str]) -> Option<BaseMap> {
    let base_at = texts.iter().position(|text| {
        let up = upper(text);
        let mut words = up.split_whitespace();
        up.contains("BASE MAP") || (words.next() == Some("BASE") && words.next().is_some_and(|word| FROM_READINGS.contains(&word)))
    });
    let mut base = BaseMap::default();
    if let Some(at) = base_at {
        let text = texts[at];
        let up = upper(text);
        // "from" as printed, or as the reader may leave it.
        if let Some((from, length)) = FROM_READINGS.iter().find_map(|word| up.find(&format!("{word} ")).map(|at| (at, word.len() + 1))) {
            let rest = &text[from + length..];
            let end = rest.find([',', ';']).unwrap_or(rest.len());
            let source: String = rest[..end].split_whitespace().take_while(|word| !word.chars().any(|c| c.is_ascii_digit())).collect::<Vec<_>>().join(" ");
            if !source.is_empty() {
                base.source = Some(Field { value: canonical_publisher(&source), words: vec![text.to_owned()], confidence: 0.8 });
            }
        }
        base.year = years(text).into_iter().min().map(|year| Field { value: year, words: vec![text.to_owned()], confidence: 0.8 });
    }
    // The projection on the base line or the three lines after it; else on any line that says "projection".
    let near: Vec<&str> = base_at.map(|at| texts[at..(at + 4).min(texts.len())].to_vec()).unwrap_or_default();
    let projection_lines = near.iter().chain(texts.iter().filter(|text| upper(text).contains("PROJECTION")));
    base.projection = projection_lines.into_iter().find_map(|text| {
        let up = upper(text);
        PROJECTIONS.iter().find(|(printed, _)| up.contains(printed)).map(|(_, name)| Field {
            value: (*name).to_owned(),
            words: vec![(*text).to_owned()],
            confidence: 0.7,
        })
    });
    base.datum = texts
        .iter()
        .find_map(|text| named_datum(text).map(|datum| Field { value: datum.short_name().to_owned(), words: vec![(*text).to_owned()], confidence: 0.9 }));
    (base != BaseMap::default()).then_some(base)
}

/// A line's contour interval ("CONTOUR INTERVAL 50 FEET", "Contour interval 20 meters"; the
/// reader may run the words together and read a 0 as an O).
fn contour_interval(text: &str) -> Option<Field<Interval>> {
    let up = upper(text);
    let at = up.find("CONTOUR")?;
    let after = &up[at + "CONTOUR".len()..];
    let rest = after.trim_start().strip_prefix("INTERVAL")?;
    let mut words = rest.split_whitespace();
    let value: f64 = number_word(words.next()?.trim_end_matches([',', '.']))?.parse().ok()?;
    let unit = match words.next().map(|word| word.trim_end_matches([',', '.', ';'])) {
        Some("FEET" | "FOOT" | "FT") => "feet",
        Some("METERS" | "METRES" | "METER" | "METRE" | "M") => "metres",
        _ => return None,
    };
    Some(Field { value: Interval { value, unit: unit.to_owned() }, words: vec![text.to_owned()], confidence: 0.9 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_model::page::PixelBox;

    fn lines(texts: &[&str]) -> Vec<TextLine> {
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| TextLine {
                text: (*text).to_owned(),
                bbox: PixelBox { x0: 0.0, y0: 20.0 * i as f64, x1: 400.0, y1: 20.0 * i as f64 + 16.0 },
                score: 0.9,
            })
            .collect()
    }

    #[test]
    fn a_usgs_sheet_says_who_when_where_and_on_what_base() {
        let title = TitleText {
            text: "GEOLOGIC MAP OF THE HUALAPAI PEAK QUADRANGLE, MOHAVE COUNTY, ARIZONA".into(),
            bbox: PixelBox { x0: 0.0, y0: 0.0, x1: 1.0, y1: 1.0 },
        };
        let read = lines(&[
            "U.S. DEPARTMENT OF THE INTERIOR",
            "U.S. GEOLOGICAL SURVEY",
            "Scientific Investigations Map 2900",
            "By Ivo Lucchitta, George H. Billingsley and Richard Young",
            "Base from U.S. Geological Survey, 1967",
            "Polyconic projection",
            "North American Datum of 1927",
            "SCALE 1:62 500",
            "CONTOUR INTERVAL 50 FEET",
            "Manuscript approved for publication March 2, 2005",
        ]);
        let metadata = read_metadata(&read, Some(&title));
        assert_eq!(metadata.authors.as_ref().unwrap().value, ["Ivo Lucchitta", "George H. Billingsley", "Richard Young"]);
        assert_eq!(metadata.publisher.as_ref().unwrap().value, "U.S. Geological Survey");
        assert_eq!(metadata.series.as_ref().unwrap().value, "Scientific Investigations Map 2900");
        assert_eq!(metadata.year.as_ref().map(|year| (year.value, year.words[0].as_str())), Some((2005, "Manuscript approved for publication March 2, 2005")));
        assert_eq!(metadata.scale.as_ref().unwrap().value, 62_500);
        assert_eq!(metadata.quadrangle.as_ref().unwrap().value, "HUALAPAI PEAK");
        let base = metadata.base_map.as_ref().unwrap();
        assert_eq!(base.source.as_ref().unwrap().value, "U.S. Geological Survey");
        assert_eq!(base.year.as_ref().unwrap().value, 1967);
        assert_eq!(base.projection.as_ref().unwrap().value, "Polyconic");
        assert_eq!(base.datum.as_ref().unwrap().value, "NAD27");
        assert_eq!(metadata.contour_interval.as_ref().unwrap().value, Interval { value: 50.0, unit: "feet".into() });
        assert!(metadata.warnings.is_empty(), "{:?}", metadata.warnings);
    }

    #[test]
    fn what_is_not_printed_is_absent_and_named() {
        let metadata = read_metadata(&lines(&["Peach Springs 30' x 60' quadrangle", "Colorado River"]), None);
        assert_eq!(metadata.quadrangle.as_ref().unwrap().value, "Peach Springs");
        assert!(metadata.authors.is_none() && metadata.base_map.is_none() && metadata.year.is_none() && metadata.scale.is_none());
        let named: Vec<&str> = metadata.warnings.iter().map(|w| w.split(' ').nth(2).unwrap()).collect();
        assert_eq!(named, ["title", "authors", "year", "publisher", "series", "scale", "base_map", "contour_interval"]);
    }

    #[test]
    fn what_the_usgs_sample_prints_is_read_through_its_misreadings() {
        let mut read = lines(&[
            "base.1",
            "others, 1997, scale 1:48,000)",
            "Base frm U.S. Glogical Survey 1:0000 Pech Springs 986",
            "SCALE 1:100 000",
            "Geology mapped in 1992-1998 by George H. Billingsley",
        ]);
        read.push(TextLine { text: "By".into(), bbox: PixelBox { x0: 1830.0, y0: 2189.0, x1: 1853.0, y1: 2209.0 }, score: 1.0 });
        read.push(TextLine {
            text: "George H. Billingsley and lvo Lucchitta".into(),
            bbox: PixelBox { x0: 1650.0, y0: 2215.0, x1: 2040.0, y1: 2236.0 },
            score: 0.95,
        });
        let metadata = read_metadata(&read, None);
        assert_eq!(metadata.scale.as_ref().map(|scale| scale.value), Some(100_000));
        assert_eq!(metadata.authors.as_ref().unwrap().value, ["George H. Billingsley", "Ivo Lucchitta"]);
        assert_eq!(metadata.authors.as_ref().unwrap().words[0], "By");
        let base = metadata.base_map.as_ref().expect("the base line");
        assert_eq!(base.source.as_ref().unwrap().value, "U.S. Geological Survey");
        assert!(base.year.is_none(), "986 is no year");
        let geology = read_metadata(&read[..5], None);
        assert_eq!(geology.authors.unwrap().value, ["George H. Billingsley"]);
    }

    #[test]
    fn a_contour_interval_is_read_through_run_together_words_and_letter_digits() {
        let interval = contour_interval("CONTOURINTERVAL 5O FEET").unwrap();
        assert_eq!(interval.value, Interval { value: 50.0, unit: "feet".into() });
        assert!(contour_interval("contour lines").is_none());
    }
}
