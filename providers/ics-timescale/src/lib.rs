//! `ics-timescale`: a geologic time term in, its interval on the ICS
//! International Chronostratigraphic Chart out (asset `ics-chart`): rank,
//! begin and end ages in Ma with their uncertainties, the chain of parent
//! intervals, colour and short code, with labels in the asked language.
//!
//! Matching folds case, diacritics, spaces and punctuation, reads the
//! chronostratigraphic "Lower/Upper" as the geochronologic "Early/Late" (the
//! chart names series "Lower Jurassic"; their epochs are "Early Jurassic"),
//! and knows every label in every language the chart carries, and the short codes.
//!
//! A modifier the chart has no interval for is read by the informal
//! conventions of [`informal::PARTS`]: "Lower Permian" answers the Cisuralian,
//! "middle Miocene" the span of the Langhian and Serravallian (from the
//! oldest beginning to the youngest end; its `id` is their IRIs joined by
//! spaces). Such an answer keeps the words asked and the intervals it spans in
//! `data.informal`. Any other modifier is not found, as before.

pub mod informal;

use std::collections::HashMap;

use geomap_provider_sdk::skos::{Value, Vocabulary, local_name};
use geomap_provider_sdk::text::{close_matches, fold};
use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider, parse_options};
use serde::Deserialize;
use serde_json::{Value as Json, json};

use crate::informal::{PARTS, Part, readings};

/// The asset this provider reads.
pub const ASSET: &str = "ics-chart";
/// The chart's file in that asset.
pub const FILE: &str = "chart.ttl";

const RANK: &str = "http://resource.geosciml.org/ontology/timescale/gts#rank";
const BEGINNING: &str = "http://www.w3.org/2006/time#hasBeginning";
const END: &str = "http://www.w3.org/2006/time#hasEnd";
const IN_MYA: &str = "http://resource.geosciml.org/classifier/ics/ischart/inMYA";
const MARGIN: &str = "https://schema.org/marginOfError";
const COLOUR: &str = "https://schema.org/color";
const NOTATION: &str = "http://www.w3.org/2004/02/skos/core#notation";
const NOTE: &str = "http://www.w3.org/2004/02/skos/core#note";

/// Options.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    /// Keep to intervals of this rank (Eon, Era, Period, Epoch, Age, ...).
    rank: Option<String>,
}

/// The chart, indexed by folded name.
pub struct IcsTimescale {
    chart: Vocabulary,
    /// Folded (and Early/Late-normalised) name → concept IRIs.
    index: HashMap<String, Vec<String>>,
    /// (part, IRI of the interval it divides) → the IRIs of the intervals it means, oldest first
    /// ([`informal::PARTS`] with the rows whose intervals the chart holds).
    parts: HashMap<(Part, String), Vec<String>>,
}

/// "LowerCretaceous" → "Lower Cretaceous", "CambrianStage10" → "Cambrian Stage 10".
fn words(local: &str) -> String {
    let mut out = String::new();
    let mut previous: Option<char> = None;
    for c in local.chars() {
        if let Some(p) = previous
            && ((c.is_uppercase() && !p.is_uppercase()) || (c.is_ascii_digit() && !p.is_ascii_digit()))
        {
            out.push(' ');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

/// The geochronologic form of an English name: "Lower X" → "Early X", "Upper X" → "Late X".
fn early_late(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("Lower ") {
        format!("Early {rest}")
    } else if let Some(rest) = name.strip_prefix("Upper ") {
        format!("Late {rest}")
    } else {
        name.to_owned()
    }
}

/// The matching key of a name: folded, with a leading lower/upper read as early/late.
fn key(name: &str) -> String {
    let folded = fold(name);
    if let Some(rest) = folded.strip_prefix("lower") {
        format!("early{rest}")
    } else if let Some(rest) = folded.strip_prefix("upper") {
        format!("late{rest}")
    } else {
        folded
    }
}

/// An age boundary: Ma, its margin of error, and whether the chart calls it uncertain.
fn boundary(chart: &Vocabulary, concept: &str, predicate: &str) -> Json {
    let Some(Value::Blank(node)) = chart.values(concept, predicate).next() else { return Json::Null };
    let number = |p: &str| chart.values(node, p).next().and_then(Value::text).and_then(|t| t.parse::<f64>().ok());
    let uncertain = chart.values(node, NOTE).filter_map(Value::text).any(|note| note.contains("uncertain"));
    json!({ "ma": number(IN_MYA), "plus_minus_ma": number(MARGIN), "uncertain": uncertain })
}

/// "201.4 ± 0.2" (or "~491.0" when uncertain).
fn age_text(age: &Json) -> String {
    match (age["ma"].as_f64(), age["plus_minus_ma"].as_f64()) {
        (Some(ma), Some(pm)) => format!("{ma} ± {pm}"),
        (Some(ma), None) if age["uncertain"] == true => format!("~{ma}"),
        (Some(ma), None) => format!("{ma}"),
        _ => "?".to_owned(),
    }
}

impl IcsTimescale {
    /// Builds the index from a parsed chart.
    pub fn from_chart(chart: Vocabulary) -> IcsTimescale {
        let mut index: HashMap<String, Vec<String>> = HashMap::new();
        for concept in chart.concepts() {
            let mut names: Vec<String> = chart.texts(concept, "prefLabel").iter().chain(&chart.texts(concept, "altLabel")).map(|t| t.text.to_owned()).collect();
            names.push(words(local_name(concept)));
            names.extend(chart.values(concept, NOTATION).filter_map(Value::text).map(str::to_owned));
            for name in names {
                let iris = index.entry(key(&name)).or_default();
                if !iris.contains(concept) {
                    iris.push(concept.clone());
                }
            }
        }
        let by_local_name: HashMap<&str, &String> = chart.concepts().iter().map(|concept| (local_name(concept), concept)).collect();
        let parts = PARTS
            .iter()
            .filter_map(|(part, of, means)| {
                let means: Option<Vec<String>> = means.iter().map(|name| by_local_name.get(name).map(|iri| (*iri).clone())).collect();
                Some(((*part, by_local_name.get(of)?.to_string()), means?))
            })
            .collect();
        IcsTimescale { chart, index, parts }
    }

    /// The interval's name in `language` (English names in their Early/Late form).
    fn label(&self, concept: &str, language: Option<&str>) -> String {
        let labels = self.chart.texts(concept, "prefLabel");
        let english = Vocabulary::best(&labels, Some("en")).filter(|_| labels.iter().any(|t| t.language == "en"));
        let english = early_late(&english.map_or_else(|| words(local_name(concept)), str::to_owned));
        match language.map(|l| l.split('-').next().unwrap_or_default().to_ascii_lowercase()) {
            Some(wanted) if wanted != "en" => {
                labels.iter().find(|t| t.language.split('-').next() == Some(wanted.as_str())).map_or(english, |t| t.text.to_owned())
            }
            _ => english,
        }
    }

    fn rank(&self, concept: &str) -> Option<String> {
        self.chart.values(concept, RANK).next().and_then(Value::iri).map(|iri| local_name(iri).to_owned())
    }

    /// The chain of broader intervals, nearest first.
    fn parents(&self, concept: &str, language: Option<&str>) -> Vec<Json> {
        let mut parents = Vec::new();
        let mut current = concept.to_owned();
        while let Some(parent) = self.chart.links(&current, "broader").first().map(|p| p.to_string()) {
            if parents.iter().any(|p: &Json| p["id"] == parent.as_str()) {
                break; // a cycle in the data: stop rather than loop
            }
            parents.push(json!({ "id": parent, "label": self.label(&parent, language), "rank": self.rank(&parent) }));
            current = parent;
        }
        parents
    }

    fn entry(&self, concept: &str, language: Option<&str>) -> Entry {
        let label = self.label(concept, language);
        let rank = self.rank(concept);
        let (begin, end) = (boundary(&self.chart, concept, BEGINNING), boundary(&self.chart, concept, END));
        let parents = self.parents(concept, language);
        let series_name = words(local_name(concept));
        let definition = Vocabulary::best(&self.chart.texts(concept, "definition"), language).map(str::to_owned);
        let summary = format!(
            "{}{}",
            summary(rank.as_deref().unwrap_or("Interval"), &parents, &begin, &end),
            if series_name.starts_with("Lower ") || series_name.starts_with("Upper ") { format!(" (as rocks: {series_name} Series)") } else { String::new() }
        );
        Entry::new(concept, &label, &summary).with_data(json!({
            "rank": rank,
            "begin": begin,
            "end": end,
            "parents": parents,
            "colour": self.chart.values(concept, COLOUR).next().and_then(Value::text),
            "short_code": self.chart.values(concept, NOTATION).next().and_then(Value::text),
            "definition": definition,
            "english_name": self.label(concept, Some("en")),
        }))
    }

    /// Several chart intervals (never none: every row of [`informal::PARTS`] names one) as one
    /// answer: from the first's beginning to the last's end, in the first's parents, of the rank
    /// they share; its `id` is their IRIs joined by spaces.
    fn span_entry(&self, concepts: &[String], language: Option<&str>) -> Entry {
        let (first, last) = (&concepts[0], &concepts[concepts.len() - 1]);
        let ranks: Vec<Option<String>> = concepts.iter().map(|concept| self.rank(concept)).collect();
        let rank = ranks[0].clone().filter(|rank| ranks.iter().all(|other| other.as_ref() == Some(rank)));
        let (begin, end) = (boundary(&self.chart, first, BEGINNING), boundary(&self.chart, last, END));
        let parents = self.parents(first, language);
        let names = |language: Option<&str>| concepts.iter().map(|concept| self.label(concept, language)).collect::<Vec<_>>().join("–");
        let summary = summary(&format!("{}s", rank.as_deref().unwrap_or("Interval")), &parents, &begin, &end);
        Entry::new(&concepts.join(" "), &names(language), &summary).with_data(json!({
            "rank": rank,
            "begin": begin,
            "end": end,
            "parents": parents,
            "colour": null,
            "short_code": null,
            "definition": null,
            "english_name": names(Some("en")),
        }))
    }

    /// Each informal reading of `term` ([`informal::PARTS`]): the part named, the IRI of the
    /// interval it divides, and the IRIs of the intervals it means.
    fn informal(&self, term: &str) -> Vec<(Part, &str, &[String])> {
        let folded = fold(term);
        let mut found: Vec<(Part, &str, &[String])> = Vec::new();
        for (part, rest) in readings(&folded) {
            for of in self.index.get(&key(rest)).into_iter().flatten() {
                if let Some(means) = self.parts.get(&(part, of.clone()))
                    && !found.iter().any(|(p, o, _)| (*p, *o) == (part, of.as_str()))
                {
                    found.push((part, of.as_str(), means.as_slice()));
                }
            }
        }
        found
    }

    /// The answer for an informal reading: the one interval it means, or the span of several, with
    /// `data.informal` keeping the words asked, the part, the interval divided and the intervals spanned.
    fn informal_entry(&self, term: &str, (part, of, means): (Part, &str, &[String]), language: Option<&str>) -> Entry {
        let mut entry = match means {
            [one] => self.entry(one, language),
            _ => self.span_entry(means, language),
        };
        let spans: Vec<Json> = means
            .iter()
            .map(|concept| {
                json!({
                    "id": concept,
                    "label": self.label(concept, language),
                    "rank": self.rank(concept),
                    "begin": boundary(&self.chart, concept, BEGINNING),
                    "end": boundary(&self.chart, concept, END),
                })
            })
            .collect();
        let names: Vec<&str> = spans.iter().filter_map(|span| span["label"].as_str()).collect();
        let divided = self.label(of, language);
        entry.summary = format!("{}; \"{term}\" is informal: the {} {divided}, {}", entry.summary, part.word(), names.join(" + "));
        entry.data["informal"] = json!({ "term": term, "part": part.word(), "of": { "id": of, "label": divided }, "spans": spans });
        entry
    }
}

/// "Epoch in Permian < Paleozoic, 298.9 ± 0.15 to 274.4 ± 0.4 Ma".
fn summary(rank: &str, parents: &[Json], begin: &Json, end: &Json) -> String {
    let chain: Vec<&str> = parents.iter().filter_map(|p| p["label"].as_str()).collect();
    format!("{rank}{}, {} to {} Ma", if chain.is_empty() { String::new() } else { format!(" in {}", chain.join(" < ")) }, age_text(begin), age_text(end))
}

impl Provider for IcsTimescale {
    fn descriptor() -> Descriptor {
        Descriptor::new(
            "ics-timescale",
            env!("CARGO_PKG_VERSION"),
            "Geologic time terms in any language of the ICS International Chronostratigraphic Chart: rank, begin and end ages in Ma with uncertainties, parents, colour, short code.",
        )
        .serves_lookup()
        .reads_asset(ASSET)
        .with_options_schema(json!({
            "type": "object",
            "properties": {
                "rank": {
                    "description": "Keep to intervals of this rank.",
                    "enum": ["Super-Eon", "Eon", "Era", "Period", "Sub-Period", "Epoch", "Age"]
                }
            },
            "additionalProperties": false
        }))
    }

    fn open() -> Result<IcsTimescale, ProviderError> {
        Ok(IcsTimescale::from_chart(Vocabulary::read_asset(ASSET, FILE)?))
    }

    fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        let options: Options = parse_options(&request.options)?;
        let wanted_rank = options.rank.as_deref();
        let language = request.language.as_deref();
        let named = self.index.get(&key(&request.term));
        let entries: Vec<Entry> = match named {
            Some(concepts) => concepts
                .iter()
                .filter(|concept| wanted_rank.is_none_or(|rank| self.rank(concept).as_deref() == Some(rank)))
                .take(request.limit as usize)
                .map(|concept| self.entry(concept, language))
                .collect(),
            None => self
                .informal(&request.term)
                .into_iter()
                .map(|reading| self.informal_entry(&request.term, reading, language))
                .filter(|entry| wanted_rank.is_none_or(|rank| entry.data["rank"] == rank))
                .take(request.limit as usize)
                .collect(),
        };
        if entries.is_empty() {
            let names: Vec<String> = self.chart.concepts().iter().map(|concept| self.label(concept, language)).collect();
            return Err(ProviderError::NotFound(close_matches(&request.term, names.iter().map(String::as_str), 5)));
        }
        Ok(entries)
    }
}

export_provider!(IcsTimescale);

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_provider_sdk::harness::Harness;

    /// A chart fragment in the real chart's shape, written by the test.
    const CHART: &str = r##"
PREFIX ischart: <http://resource.geosciml.org/classifier/ics/ischart/>
PREFIX gts: <http://resource.geosciml.org/ontology/timescale/gts#>
PREFIX rank: <http://resource.geosciml.org/ontology/timescale/rank/>
PREFIX schema: <https://schema.org/>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX time: <http://www.w3.org/2006/time#>
ischart:Mesozoic a skos:Concept ; gts:rank rank:Era ; skos:prefLabel "Mesozoic"@en ;
    time:hasBeginning [ ischart:inMYA 251.902 ; schema:marginOfError 0.024 ] ; time:hasEnd [ ischart:inMYA 66.0 ] .
ischart:Jurassic a skos:Concept ; gts:rank rank:Period ; skos:broader ischart:Mesozoic ;
    skos:prefLabel "Jurassic"@en , "Jurásico"@es , "侏罗 系"@zh ; skos:notation "J" ;
    skos:definition "A time period from 201.4 to 143.1 million years ago"@en ;
    time:hasBeginning [ ischart:inMYA 201.4 ; schema:marginOfError 0.2 ] ; time:hasEnd [ ischart:inMYA 143.1 ; schema:marginOfError 0.6 ] ;
    schema:color "#34B2C9" .
ischart:Cretaceous a skos:Concept ; gts:rank rank:Period ; skos:broader ischart:Mesozoic ; skos:prefLabel "Cretaceous"@en .
ischart:LowerCretaceous a skos:Concept ; gts:rank rank:Epoch ; skos:broader ischart:Cretaceous ; skos:notation "K1" ;
    time:hasBeginning [ ischart:inMYA 143.1 ; schema:marginOfError 0.6 ] ; time:hasEnd [ ischart:inMYA 100.5 ; schema:marginOfError 0.1 ] .
ischart:Permian a skos:Concept ; gts:rank rank:Period ; skos:prefLabel "Permian"@en , "Pérmico"@es .
ischart:Cisuralian a skos:Concept ; gts:rank rank:Epoch ; skos:broader ischart:Permian ; skos:prefLabel "Cisuralian"@en , "Cisuraliense"@es ;
    time:hasBeginning [ ischart:inMYA 298.9 ; schema:marginOfError 0.15 ] ; time:hasEnd [ ischart:inMYA 274.4 ; schema:marginOfError 0.4 ] .
ischart:Miocene a skos:Concept ; gts:rank rank:Epoch ; skos:prefLabel "Miocene"@en .
ischart:Langhian a skos:Concept ; gts:rank rank:Age ; skos:broader ischart:Miocene ; skos:prefLabel "Langhian"@en ;
    time:hasBeginning [ ischart:inMYA 15.98 ] ; time:hasEnd [ ischart:inMYA 13.82 ] .
ischart:Serravallian a skos:Concept ; gts:rank rank:Age ; skos:broader ischart:Miocene ; skos:prefLabel "Serravallian"@en ;
    time:hasBeginning [ ischart:inMYA 13.82 ] ; time:hasEnd [ ischart:inMYA 11.63 ] .
"##;

    fn harness() -> Harness {
        static FOLDER: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
        let folder = FOLDER.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(FILE), CHART).unwrap();
            dir
        });
        Harness::new().with_asset(ASSET, folder.path())
    }

    #[test]
    fn a_period_gives_its_ages_parents_and_colour() {
        let entries = harness().lookup::<IcsTimescale>("jurassic").unwrap();
        assert_eq!(entries.len(), 1);
        let data = &entries[0].data;
        assert_eq!((data["begin"]["ma"].as_f64(), data["begin"]["plus_minus_ma"].as_f64()), (Some(201.4), Some(0.2)));
        assert_eq!((data["end"]["ma"].as_f64(), data["end"]["plus_minus_ma"].as_f64()), (Some(143.1), Some(0.6)));
        assert_eq!(data["parents"][0]["label"], "Mesozoic");
        assert_eq!((data["rank"].as_str(), data["colour"].as_str(), data["short_code"].as_str()), (Some("Period"), Some("#34B2C9"), Some("J")));
        assert_eq!(entries[0].summary, "Period in Mesozoic, 201.4 ± 0.2 to 143.1 ± 0.6 Ma");
    }

    #[test]
    fn lower_reads_as_early_and_labels_in_other_languages_resolve() {
        for term in ["Lower Cretaceous", "early cretaceous", "LOWER-CRETACEOUS", "K1"] {
            let entries = harness().lookup::<IcsTimescale>(term).unwrap();
            assert_eq!(entries[0].label, "Early Cretaceous", "{term}");
        }
        assert_eq!(harness().lookup::<IcsTimescale>("侏罗系").unwrap()[0].id, "http://resource.geosciml.org/classifier/ics/ischart/Jurassic");
        assert_eq!(harness().lookup::<IcsTimescale>("jurasico").unwrap()[0].label, "Jurassic", "diacritics fold");
        let request = LookupRequest { term: "Jurassic".into(), options: json!({}), limit: 5, language: Some("zh".into()) };
        assert_eq!(harness().lookup_with::<IcsTimescale>(&request).unwrap()[0].label, "侏罗 系");
    }

    #[test]
    fn an_unknown_term_suggests_close_names_and_options_are_checked() {
        let Err(ProviderError::NotFound(close)) = harness().lookup::<IcsTimescale>("Jurasic") else { panic!() };
        assert_eq!(close[0], "Jurassic");
        let request = LookupRequest { term: "Jurassic".into(), options: json!({ "rank": "Epoch" }), limit: 5, language: None };
        assert!(matches!(harness().lookup_with::<IcsTimescale>(&request), Err(ProviderError::NotFound(_))));
        let request = LookupRequest { term: "Jurassic".into(), options: json!({ "colour": true }), limit: 5, language: None };
        assert!(matches!(harness().lookup_with::<IcsTimescale>(&request), Err(ProviderError::InvalidOptions { .. })));
    }

    #[test]
    fn an_informal_modifier_reads_as_the_intervals_it_means() {
        let lower = &harness().lookup::<IcsTimescale>("Lower Permian").unwrap()[0];
        assert_eq!((lower.id.as_str(), lower.label.as_str()), ("http://resource.geosciml.org/classifier/ics/ischart/Cisuralian", "Cisuralian"));
        assert_eq!((lower.data["begin"]["ma"].as_f64(), lower.data["end"]["ma"].as_f64()), (Some(298.9), Some(274.4)));
        assert_eq!(lower.data["informal"]["term"], "Lower Permian", "the words asked are kept");
        assert_eq!((lower.data["informal"]["part"].as_str(), lower.data["informal"]["of"]["label"].as_str()), (Some("early"), Some("Permian")));
        assert!(lower.summary.ends_with("; \"Lower Permian\" is informal: the early Permian, Cisuralian"), "{}", lower.summary);
        assert_eq!(harness().lookup::<IcsTimescale>("early pérmico").unwrap()[0].label, "Cisuralian", "the interval in any language of the chart");

        let middle = &harness().lookup::<IcsTimescale>("mid-Miocene").unwrap()[0];
        assert_eq!(middle.label, "Langhian–Serravallian");
        assert_eq!(middle.id, "http://resource.geosciml.org/classifier/ics/ischart/Langhian http://resource.geosciml.org/classifier/ics/ischart/Serravallian");
        assert_eq!((middle.data["begin"]["ma"].as_f64(), middle.data["end"]["ma"].as_f64()), (Some(15.98), Some(11.63)));
        assert_eq!((middle.data["rank"].as_str(), middle.data["parents"][0]["label"].as_str()), (Some("Age"), Some("Miocene")));
        let spans: Vec<&str> = middle.data["informal"]["spans"].as_array().unwrap().iter().filter_map(|span| span["label"].as_str()).collect();
        assert_eq!(spans, ["Langhian", "Serravallian"]);
        assert_eq!(middle.summary, "Ages in Miocene, 15.98 to 11.63 Ma; \"mid-Miocene\" is informal: the middle Miocene, Langhian + Serravallian");

        let ranked = |rank: &str| LookupRequest { term: "middle Miocene".into(), options: json!({ "rank": rank }), limit: 5, language: None };
        assert_eq!(harness().lookup_with::<IcsTimescale>(&ranked("Age")).unwrap().len(), 1, "a span has the rank its intervals share");
        assert!(matches!(harness().lookup_with::<IcsTimescale>(&ranked("Epoch")), Err(ProviderError::NotFound(_))));
    }

    #[test]
    fn a_modifier_with_no_reading_is_not_found() {
        for term in ["Middle Cretaceous", "upper Permian", "Lower"] {
            // No row for the Cretaceous; the row for the late Permian names a Lopingian this chart lacks.
            assert!(matches!(harness().lookup::<IcsTimescale>(term), Err(ProviderError::NotFound(_))), "{term}");
        }
        assert!(harness().lookup::<IcsTimescale>("Lower Cretaceous").unwrap()[0].data.get("informal").is_none(), "a formal name is no informal reading");
    }

    /// The real chart (`shared/assets` beside the clone), parsed once; `None` after saying `test` is skipped.
    fn real_chart(test: &str) -> Option<&'static IcsTimescale> {
        static CHART: std::sync::OnceLock<Option<IcsTimescale>> = std::sync::OnceLock::new();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/assets").join(FILE);
        let chart = CHART.get_or_init(|| std::fs::read(&path).ok().map(|turtle| IcsTimescale::from_chart(Vocabulary::parse(&turtle, FILE).unwrap())));
        if chart.is_none() {
            eprintln!("SKIPPED {test}: {} is absent (real upstream data beside the clone)", path.display());
        }
        chart.as_ref()
    }

    /// (label, begin Ma, end Ma, the informal term when it was read as one) of the best answer for `term`.
    fn answer(chart: &IcsTimescale, term: &str) -> (String, f64, f64, Option<String>) {
        let request = LookupRequest { term: term.into(), options: json!({}), limit: 1, language: Some("en".into()) };
        let entry = chart.lookup(&request).unwrap().remove(0);
        let ma = |edge: &str| entry.data[edge]["ma"].as_f64().unwrap();
        (entry.label.clone(), ma("begin"), ma("end"), entry.data.get("informal").map(|informal| informal["term"].as_str().unwrap().to_owned()))
    }

    #[test]
    fn the_real_chart_answers_modifiers_at_the_precision_of_the_words() {
        let Some(chart) = real_chart("the_real_chart_answers_modifiers_at_the_precision_of_the_words") else { return };
        let informal = |label: &str, begin: f64, end: f64, term: &str| (label.to_owned(), begin, end, Some(term.to_owned()));
        let formal = |label: &str, begin: f64, end: f64| (label.to_owned(), begin, end, None);
        // Figures as the chart file (ICS 2024-12) gives them.
        assert_eq!(answer(chart, "Lower Permian"), informal("Cisuralian", 298.9, 274.4, "Lower Permian"));
        assert_eq!(answer(chart, "Middle Permian"), informal("Guadalupian", 274.4, 259.51, "Middle Permian"));
        assert_eq!(answer(chart, "Lower Cambrian"), informal("Terreneuvian–Cambrian Series 2", 538.8, 506.5, "Lower Cambrian"));
        assert_eq!(answer(chart, "Middle Cambrian"), informal("Miaolingian", 506.5, 497.0, "Middle Cambrian"));
        assert_eq!(answer(chart, "Late Cambrian"), informal("Furongian", 497.0, 486.85, "Late Cambrian"));
        assert_eq!(answer(chart, "Upper Silurian"), informal("Ludlow–Pridoli", 426.7, 419.62, "Upper Silurian"));
        assert_eq!(answer(chart, "early Miocene"), informal("Aquitanian–Burdigalian", 23.03, 15.98, "early Miocene"));
        assert_eq!(answer(chart, "middle Miocene"), informal("Langhian–Serravallian", 15.98, 11.63, "middle Miocene"));
        assert_eq!(answer(chart, "upper Miocene"), informal("Tortonian–Messinian", 11.63, 5.333, "upper Miocene"));
        assert_eq!(answer(chart, "Lower Pleistocene"), informal("Gelasian–Calabrian", 2.58, 0.774, "Lower Pleistocene"));
        assert_eq!(answer(chart, "Middle Pleistocene"), informal("Chibanian", 0.774, 0.129, "Middle Pleistocene"));
        assert_eq!(answer(chart, "Early Proterozoic"), informal("Paleoproterozoic", 2500.0, 1600.0, "Early Proterozoic"));
        assert_eq!(answer(chart, "Late Proterozoic"), informal("Neoproterozoic", 1000.0, 538.8, "Late Proterozoic"));
        assert_eq!(answer(chart, "Early Archean"), informal("Eoarchean–Paleoarchean", 4031.0, 3200.0, "Early Archean"));
        // Names the chart holds keep answering by name.
        assert_eq!(answer(chart, "Upper Mississippian"), formal("Late Mississippian", 330.3, 323.4));
        assert_eq!(answer(chart, "Upper Cretaceous"), formal("Late Cretaceous", 100.5, 66.0));
        assert_eq!(answer(chart, "Middle Jurassic"), formal("Middle Jurassic", 174.7, 161.5));
        assert_eq!(answer(chart, "upper Pleistocene"), formal("Late Pleistocene", 0.129, 0.0117));
        // No reading: not found, so the host asks for the interval without its modifier, as before.
        for term in ["Middle Cretaceous", "Middle Silurian", "middle Pliocene", "late Quaternary"] {
            let request = LookupRequest { term: term.into(), options: json!({}), limit: 1, language: None };
            assert!(matches!(chart.lookup(&request), Err(ProviderError::NotFound(_))), "{term}");
        }
    }

    #[test]
    fn every_informal_part_is_children_of_its_interval_in_order() {
        let Some(chart) = real_chart("every_informal_part_is_children_of_its_interval_in_order") else { return };
        let iri = |name: &str| format!("http://resource.geosciml.org/classifier/ics/ischart/{name}");
        let ma = |concept: &str, edge: &str| boundary(&chart.chart, concept, edge)["ma"].as_f64().unwrap();
        let mut previous: Option<(&str, f64)> = None;
        for (part, of, _) in PARTS {
            let means: &Vec<String> = chart.parts.get(&(part, iri(of))).unwrap_or_else(|| panic!("the chart lacks a {part:?} {of} interval"));
            for concept in means {
                assert!(chart.parents(concept, None).iter().any(|parent| parent["id"] == iri(of)), "{concept} is not in {of}");
            }
            // Oldest first, with no gap between them (the chart's Ludlow ends at 419.62 Ma, overlapping the
            // Pridoli's 422.7 to 419.62 Ma: only a gap would mean an interval left out).
            for pair in means.windows(2) {
                assert!(ma(&pair[0], BEGINNING) > ma(&pair[1], BEGINNING), "{part:?} {of}: {} before {}", pair[0], pair[1]);
                assert!(ma(&pair[0], END) <= ma(&pair[1], BEGINNING), "{part:?} {of}: no gap after {}", pair[0]);
            }
            let (begin, end) = (ma(&means[0], BEGINNING), ma(&means[means.len() - 1], END));
            assert!(begin <= ma(&iri(of), BEGINNING) && end >= ma(&iri(of), END), "{part:?} {of} lies in {of}");
            if let Some((previous_of, previous_end)) = previous.filter(|(previous_of, _)| *previous_of == of) {
                assert_eq!(previous_end, begin, "the parts of {previous_of} follow each other");
            }
            previous = Some((of, end));
            for name in chart.index.keys() {
                let shadows = readings(name).any(|(p, rest)| p == part && chart.index.get(rest).is_some_and(|concepts| concepts.contains(&iri(of))));
                assert!(!shadows, "the chart's own {name:?} is read before the {part:?} {of} row, which is then never read");
            }
        }
    }
}
