//! `ics-timescale`: a geologic time term in, its interval on the ICS
//! International Chronostratigraphic Chart out (asset `ics-chart`): rank,
//! begin and end ages in Ma with their uncertainties, the chain of parent
//! intervals, colour and short code, with labels in the asked language.
//!
//! Matching folds case, diacritics, spaces and punctuation, reads the
//! chronostratigraphic "Lower/Upper" as the geochronologic "Early/Late" (the
//! chart names series "Lower Jurassic"; their epochs are "Early Jurassic"),
//! and knows every label in every language the chart carries, and the short codes.

use std::collections::HashMap;

use geomap_provider_sdk::skos::{Value, Vocabulary, local_name};
use geomap_provider_sdk::text::{close_matches, fold};
use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider, parse_options};
use serde::Deserialize;
use serde_json::{Value as Json, json};

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
        IcsTimescale { chart, index }
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

    fn entry(&self, concept: &str, language: Option<&str>) -> Entry {
        let label = self.label(concept, language);
        let rank = self.rank(concept);
        let (begin, end) = (boundary(&self.chart, concept, BEGINNING), boundary(&self.chart, concept, END));
        let mut parents = Vec::new();
        let mut current = concept.to_owned();
        while let Some(parent) = self.chart.links(&current, "broader").first().map(|p| p.to_string()) {
            if parents.iter().any(|p: &Json| p["id"] == parent.as_str()) {
                break; // a cycle in the data: stop rather than loop
            }
            parents.push(json!({ "id": parent, "label": self.label(&parent, language), "rank": self.rank(&parent) }));
            current = parent;
        }
        let series_name = words(local_name(concept));
        let definition = Vocabulary::best(&self.chart.texts(concept, "definition"), language).map(str::to_owned);
        let chain: Vec<&str> = parents.iter().filter_map(|p| p["label"].as_str()).collect();
        let summary = format!(
            "{}{}, {} to {} Ma{}",
            rank.as_deref().unwrap_or("Interval"),
            if chain.is_empty() { String::new() } else { format!(" in {}", chain.join(" < ")) },
            age_text(&begin),
            age_text(&end),
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
        let found: Vec<&String> = self
            .index
            .get(&key(&request.term))
            .into_iter()
            .flatten()
            .filter(|concept| wanted_rank.is_none_or(|rank| self.rank(concept).as_deref() == Some(rank)))
            .collect();
        if found.is_empty() {
            let names: Vec<String> = self.chart.concepts().iter().map(|concept| self.label(concept, request.language.as_deref())).collect();
            return Err(ProviderError::NotFound(close_matches(&request.term, names.iter().map(String::as_str), 5)));
        }
        Ok(found.into_iter().take(request.limit as usize).map(|concept| self.entry(concept, request.language.as_deref())).collect())
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
}
