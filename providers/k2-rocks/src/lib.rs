//! `k2-rocks`: a rock name in, its rock type class, age class and description
//! out, from the K2 rock knowledge (asset `k2-rock-knowledge`).

use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider, parse_options, read_json_asset};
use serde::Deserialize;
use serde_json::json;

/// The asset this provider reads.
pub const ASSET: &str = "k2-rock-knowledge";

/// One `{rock_value, rock_name}` pair of `k2_rock_type.json` or `k2_rock_age.json`.
#[derive(Debug, Clone, Deserialize)]
struct Classified {
    rock_value: String,
    rock_name: String,
}

/// One entry of `k2_rock_detail.json`.
#[derive(Debug, Clone, Deserialize)]
struct Detail {
    id: String,
    answer: String,
}

/// Options: none yet, and none unknown.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {}

/// The K2 rock knowledge, loaded.
pub struct K2Rocks {
    types: Vec<Classified>,
    ages: Vec<Classified>,
    details: Vec<Detail>,
}

/// Lower case, single spaces, no surrounding punctuation.
fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").trim_matches(|c: char| c.is_ascii_punctuation()).to_lowercase()
}

impl K2Rocks {
    /// Every rock name the knowledge holds, for suggestions.
    fn names(&self) -> impl Iterator<Item = &str> {
        self.types.iter().chain(&self.ages).map(|pair| pair.rock_name.as_str())
    }

    fn entry(&self, name: &str) -> Entry {
        let key = normalise(name);
        let classes = |pairs: &[Classified]| -> Vec<String> {
            let mut found: Vec<String> = pairs.iter().filter(|pair| normalise(&pair.rock_name) == key).map(|pair| pair.rock_value.clone()).collect();
            found.dedup();
            found
        };
        let (rock_type, age) = (classes(&self.types), classes(&self.ages));
        let description = self.details.iter().find(|detail| normalise(&detail.id) == key).map(|detail| detail.answer.clone());
        let mut summary = Vec::new();
        if !rock_type.is_empty() {
            summary.push(format!("rock type: {}", rock_type.join(", ")));
        }
        if !age.is_empty() {
            summary.push(format!("age class: {}", age.join(", ")));
        }
        if summary.is_empty() && description.is_some() {
            summary.push("described in K2".to_owned());
        }
        Entry::new(&format!("k2:{key}"), name, &summary.join("; ")).with_data(json!({ "rock_type": rock_type, "age_class": age, "description": description }))
    }
}

impl Provider for K2Rocks {
    fn descriptor() -> Descriptor {
        Descriptor::new("k2-rocks", env!("CARGO_PKG_VERSION"), "Rock names to rock type class, age class and description (K2 geoscience knowledge).")
            .serves_lookup()
            .reads_asset(ASSET)
    }

    fn open() -> Result<K2Rocks, ProviderError> {
        Ok(K2Rocks {
            types: read_json_asset(ASSET, "k2_rock_type.json")?,
            ages: read_json_asset(ASSET, "k2_rock_age.json")?,
            details: read_json_asset(ASSET, "k2_rock_detail.json")?,
        })
    }

    fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        let _: Options = parse_options(&request.options)?;
        let term = normalise(&request.term);
        if term.is_empty() {
            return Err(ProviderError::Failed("the term is empty".to_owned()));
        }
        let mut exact: Vec<&str> = self.names().chain(self.details.iter().map(|detail| detail.id.as_str())).filter(|name| normalise(name) == term).collect();
        exact.truncate(1);
        let mut matches: Vec<&str> = exact;
        if matches.is_empty() {
            let mut containing: Vec<&str> = self.names().filter(|name| normalise(name).contains(&term)).collect();
            containing.sort_by_key(|name| (name.len(), *name));
            containing.dedup_by_key(|name| normalise(name));
            matches = containing;
        }
        if matches.is_empty() {
            let mut scored: Vec<(f64, &str)> = self.names().map(|name| (strsim::normalized_levenshtein(&normalise(name), &term), name)).collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            scored.dedup_by_key(|(_, name)| normalise(name));
            return Err(ProviderError::NotFound(scored.into_iter().take(5).map(|(_, name)| name.to_owned()).collect()));
        }
        Ok(matches.into_iter().take(request.limit as usize).map(|name| self.entry(name)).collect())
    }
}

export_provider!(K2Rocks);

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_provider_sdk::harness::Harness;

    /// Fixture K2 files the test writes: two rock names with types, one with an age and a description.
    fn fixtures() -> Harness {
        static FOLDER: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
        let folder = FOLDER.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let write = |name: &str, value: serde_json::Value| std::fs::write(dir.path().join(name), value.to_string()).unwrap();
            write(
                "k2_rock_type.json",
                json!([
                    { "rock_value": "Sedimentary rocks", "rock_name": "sandstone" },
                    { "rock_value": "Sedimentary rocks", "rock_name": "red sandstone" },
                    { "rock_value": "Igneous rocks", "rock_name": "granite" }
                ]),
            );
            write("k2_rock_age.json", json!([{ "rock_value": "Mesozoic", "rock_name": "Jurassic" }]));
            write("k2_rock_detail.json", json!([{ "id": "Granite", "question": "What is Granite?", "answer": "A coarse-grained intrusive rock." }]));
            dir
        });
        Harness::new().with_asset(ASSET, folder.path())
    }

    #[test]
    fn an_exact_name_gives_its_type_age_and_description() {
        let granite = fixtures().lookup::<K2Rocks>("  GRANITE ").unwrap();
        assert_eq!(granite.len(), 1);
        assert_eq!(granite[0].summary, "rock type: Igneous rocks");
        assert_eq!(granite[0].data["description"], "A coarse-grained intrusive rock.");
        let jurassic = fixtures().lookup::<K2Rocks>("jurassic").unwrap();
        assert_eq!(jurassic[0].data["age_class"], json!(["Mesozoic"]));
    }

    #[test]
    fn a_part_of_a_name_finds_the_names_that_hold_it_shortest_first() {
        let found = fixtures().lookup::<K2Rocks>("sandst").unwrap();
        assert_eq!(found.iter().map(|entry| entry.label.as_str()).collect::<Vec<_>>(), ["sandstone", "red sandstone"]);
    }

    #[test]
    fn an_unknown_name_suggests_close_ones() {
        let Err(ProviderError::NotFound(close)) = fixtures().lookup::<K2Rocks>("granit3") else { panic!("nothing is called granit3") };
        assert_eq!(close[0], "granite");
    }

    #[test]
    fn an_unknown_option_is_invalid_options_naming_it() {
        let request = LookupRequest { term: "granite".into(), options: json!({ "colour": "red" }), limit: 5, language: None };
        let Err(ProviderError::InvalidOptions { field, message }) = fixtures().lookup_with::<K2Rocks>(&request) else { panic!() };
        assert_eq!(field, "/colour", "{message}");
        assert!(matches!(K2Rocks::descriptor().assets.as_slice(), [asset] if asset == ASSET));
    }
}
