//! The symbol catalog: every map symbol the server knows, one row each, read from the data file
//! `symbols.toml` beside this module (compiled in). The layout reads an explanation's entries by
//! a symbol's name and words, the detectors look for it by its family, marks and shape, the
//! extraction files its features under its TA1 type, and the styles draw it at its size in paper
//! millimetres.
//!
//! Invariants: names and words are lower case and each names one symbol; a line symbol has no
//! shape and a point symbol no marks; the file is checked whole the first time it is read (a bad
//! row fails every test at once, never a call).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Whether a symbol is drawn along a line or at a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Contacts, faults, fold axes, dikes.
    Line,
    /// Bedding attitudes, pipes, sinkholes, localities.
    Point,
}

/// What a line symbol's marks beside its line say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineMarks {
    /// Three or more marks along one side (a thrust's teeth).
    Teeth,
    /// One filled mark on one side (a normal fault's ball and bar).
    Ball,
    /// Arrows on both sides pointing away from the line (an anticline).
    ArrowsOut,
    /// Arrows on both sides pointing towards the line (a syncline).
    ArrowsIn,
    /// Arrows on both sides, either way (a monocline, a fold axis).
    Arrows,
}

/// How a point symbol is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// A strike line with a dip tick at its middle (inclined beds, foliation).
    Tick,
    /// A strike line with a tick on each side (vertical beds).
    Cross,
    /// A cross in a circle (horizontal beds).
    CircledCross,
    /// A dot or a triangle printed filled on its own (a breccia pipe, a sinkhole).
    Filled,
    /// A dot strung on a hairline (the strike of vertical joints).
    Strung,
}

impl Shape {
    /// Whether it is a mark found as a piece of ink on its colour's mask (a filled mark, a strung
    /// dot), not as a bedding attitude's strokes on the skeleton.
    pub fn is_mark(self) -> bool {
        matches!(self, Shape::Filled | Shape::Strung)
    }
}

/// One symbol of the catalog (see `symbols.toml` for each field's meaning).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Symbol {
    /// The symbol, as the server names it.
    pub name: String,
    /// Other ways an explanation's entry begins for it.
    #[serde(default)]
    pub words: Vec<String>,
    /// How a line listed under a listing heading begins for it.
    #[serde(default)]
    pub listed: Vec<String>,
    /// A line or a point symbol.
    pub family: Family,
    /// A line's TA1 type, or a point's finer kind; `None`: no feature is written.
    pub ta1: Option<String>,
    /// The TA1 point type (`enum_point_type`) a point's finer kind is filed under.
    pub point_type: Option<String>,
    /// What a line's marks say it is.
    pub marks: Option<LineMarks>,
    /// Whether publishers draw its marks several ways (its sample's are used).
    #[serde(default)]
    pub marks_vary: bool,
    /// How a point symbol is drawn.
    pub shape: Option<Shape>,
    /// The words it is reported with when looked for by its look alone; `None`: never looked for so.
    pub look: Option<String>,
    /// A line's stroke width in paper millimetres.
    pub line_mm: Option<f64>,
    /// A point symbol's size in paper millimetres.
    pub size_mm: Option<f64>,
    /// Its section of FGDC-STD-013-2006, or `unchecked`.
    pub fgdc: String,
}

impl Symbol {
    /// Its name and the other words its entries begin with.
    pub fn beginnings(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.words.iter().map(String::as_str))
    }

    /// The marks its name says it has, whatever its sample shows (`None` when they vary or it has none).
    pub fn named_marks(&self) -> Option<LineMarks> {
        self.marks.filter(|_| !self.marks_vary)
    }
}

/// Headings whose indented lines each name a symbol by its listed beginnings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listing {
    /// The headings, lower case.
    pub headings: Vec<String>,
}

/// The catalog: its listing headings and its symbols, in the file's order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// The headings symbols are listed under.
    pub listing: Listing,
    /// Every symbol.
    #[serde(rename = "symbol")]
    pub symbols: Vec<Symbol>,
}

/// The catalog compiled in from `symbols.toml`.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::parse(include_str!("symbols.toml")).unwrap_or_else(|problem| panic!("symbols.toml: {problem}")))
}

impl Catalog {
    /// The catalog in `text` (TOML), checked: a problem is named.
    pub fn parse(text: &str) -> Result<Catalog, String> {
        let catalog: Catalog = toml::from_str(text).map_err(|error| error.to_string())?;
        let mut seen = std::collections::HashSet::new();
        for symbol in &catalog.symbols {
            for word in symbol.beginnings().chain(symbol.listed.iter().map(String::as_str)) {
                if word != word.to_lowercase() || !seen.insert(word) {
                    return Err(format!("“{word}” is not lower case or names two symbols"));
                }
            }
            let fits = match symbol.family {
                Family::Line => symbol.shape.is_none() && symbol.size_mm.is_none() && symbol.point_type.is_none(),
                Family::Point => symbol.marks.is_none() && symbol.line_mm.is_none() && symbol.ta1.is_some() == symbol.point_type.is_some(),
            };
            if !fits {
                return Err(format!("{} has a field of the other family, or a point kind without its TA1 point type", symbol.name));
            }
        }
        Ok(catalog)
    }

    /// The symbol named `word` (its name or one of its words).
    pub fn named(&self, word: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|symbol| symbol.beginnings().any(|name| name == word))
    }

    /// Every name and word an entry may begin with, with its symbol, the longer first (so "strike
    /// and dip of beds" is tried before "strike and dip").
    pub fn beginnings(&self) -> Vec<(&str, &Symbol)> {
        let mut all: Vec<(&str, &Symbol)> = self.symbols.iter().flat_map(|symbol| symbol.beginnings().map(move |word| (word, symbol))).collect();
        all.sort_by_key(|(word, _)| std::cmp::Reverse(word.len()));
        all
    }

    /// Every listed beginning, with its symbol.
    pub fn listed(&self) -> impl Iterator<Item = (&str, &Symbol)> {
        self.symbols.iter().flat_map(|symbol| symbol.listed.iter().map(move |word| (word.as_str(), symbol)))
    }

    /// The symbols of `family` looked for by their look alone, in the file's order.
    pub fn looks(&self, family: Family) -> impl Iterator<Item = &Symbol> {
        self.symbols.iter().filter(move |symbol| symbol.family == family && symbol.look.is_some())
    }

    /// The point symbol whose finer TA1 kind is `kind`.
    pub fn point_of_kind(&self, kind: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|symbol| symbol.family == Family::Point && symbol.ta1.as_deref() == Some(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_reads_and_each_word_names_one_symbol() {
        let catalog = catalog();
        assert_eq!(catalog.named("strike and dip").map(|s| s.name.as_str()), Some("inclined bedding"));
        assert_eq!(catalog.named("thrust fault").and_then(Symbol::named_marks), Some(LineMarks::Teeth));
        assert_eq!(catalog.named("normal fault").map(|s| (s.marks, s.named_marks())), Some((Some(LineMarks::Ball), None)), "a normal fault's marks vary");
        let beginnings = catalog.beginnings();
        let at = |word: &str| beginnings.iter().position(|(w, _)| *w == word).unwrap();
        assert!(at("strike and dip of beds") < at("strike and dip") && at("thrust fault") < at("fault"), "the longer first");
        let looks: Vec<&str> = catalog.looks(Family::Line).map(|s| s.name.as_str()).collect();
        assert_eq!(looks, ["contact", "fault", "thrust fault", "normal fault", "anticline", "syncline"]);
        assert!(catalog.symbols.iter().all(|s| s.fgdc == "unchecked" || s.fgdc.chars().next().is_some_and(|c| c.is_ascii_digit())));
    }

    #[test]
    fn a_word_named_twice_or_a_field_of_the_other_family_is_refused() {
        let row = |name: &str, extra: &str| format!("[[symbol]]\nname = \"{name}\"\nfamily = \"line\"\nfgdc = \"2\"\n{extra}\n");
        let listing = "[listing]\nheadings = []\n";
        assert!(Catalog::parse(&format!("{listing}{}{}", row("fault", ""), row("thrust fault", ""))).is_ok());
        let twice = Catalog::parse(&format!("{listing}{}{}", row("fault", ""), row("thrust fault", "words = [\"fault\"]"))).unwrap_err();
        assert!(twice.contains("“fault”"), "{twice}");
        let shaped = Catalog::parse(&format!("{listing}{}", row("fault", "shape = \"tick\""))).unwrap_err();
        assert!(shaped.contains("other family"), "{shaped}");
        assert!(Catalog::parse(&format!("{listing}{}", row("fault", "colour = \"red\""))).is_err(), "an unknown field");
    }
}
