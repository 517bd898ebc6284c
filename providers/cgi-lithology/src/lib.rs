//! `cgi-lithology`: a lithology term in, its concept in the CGI Simple
//! Lithology vocabulary out (asset `cgi-simple-lithology`): concept URI,
//! preferred label, definition, the broader chain up to the vocabulary's top,
//! and the narrower concepts. Every preferred and alternative label in every
//! language the vocabulary carries is matched, folding case and diacritics.

use std::collections::HashMap;

use geomap_provider_sdk::skos::Vocabulary;
use geomap_provider_sdk::text::{close_matches, fold};
use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider, parse_options};
use serde::Deserialize;
use serde_json::json;

/// The asset this provider reads.
pub const ASSET: &str = "cgi-simple-lithology";
/// The vocabulary's file in that asset.
pub const FILE: &str = "simplelithology.ttl";

/// Options: none yet, and none unknown.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {}

/// The vocabulary, indexed by folded label.
pub struct CgiLithology {
    vocabulary: Vocabulary,
    /// Folded label → (concept IRI, the label as written), preferred labels first.
    index: HashMap<String, Vec<(String, String)>>,
}

impl CgiLithology {
    /// Builds the index from a parsed vocabulary.
    pub fn from_vocabulary(vocabulary: Vocabulary) -> CgiLithology {
        let mut index: HashMap<String, Vec<(String, String)>> = HashMap::new();
        for kind in ["prefLabel", "altLabel"] {
            for concept in vocabulary.concepts() {
                for label in vocabulary.texts(concept, kind) {
                    let found = index.entry(fold(label.text)).or_default();
                    if !found.iter().any(|(iri, _)| iri == concept) {
                        found.push((concept.clone(), label.text.to_owned()));
                    }
                }
            }
        }
        CgiLithology { vocabulary, index }
    }

    fn label(&self, concept: &str, language: Option<&str>) -> String {
        Vocabulary::best(&self.vocabulary.texts(concept, "prefLabel"), language).unwrap_or(concept).to_owned()
    }

    fn entry(&self, concept: &str, matched: &str, language: Option<&str>) -> Entry {
        let label = self.label(concept, language);
        let definition = Vocabulary::best(&self.vocabulary.texts(concept, "definition"), language).map(str::to_owned);
        let linked = |name: &str| -> Vec<serde_json::Value> {
            self.vocabulary.links(concept, name).into_iter().map(|iri| json!({ "id": iri, "label": self.label(iri, language) })).collect()
        };
        // The chain up the first broader concept of each step, to the top.
        let mut chain: Vec<String> = Vec::new();
        let mut current = concept.to_owned();
        while let Some(up) = self.vocabulary.links(&current, "broader").first().map(|iri| iri.to_string()) {
            if chain.contains(&up) || up == concept {
                break; // a cycle in the data: stop rather than loop
            }
            chain.push(up.clone());
            current = up;
        }
        let chain_labels: Vec<String> = chain.iter().map(|iri| self.label(iri, language)).collect();
        let summary = match (&definition, chain_labels.first()) {
            (Some(definition), _) => definition.clone(),
            (None, Some(parent)) => format!("a kind of {parent}"),
            (None, None) => "a top concept of CGI Simple Lithology".to_owned(),
        };
        Entry::new(concept, &label, &summary).with_data(json!({
            "uri": concept,
            "preferred_label": label,
            "matched_label": matched,
            "definition": definition,
            "broader": linked("broader"),
            "broader_chain": chain.iter().zip(&chain_labels).map(|(id, label)| json!({ "id": id, "label": label })).collect::<Vec<_>>(),
            "narrower": linked("narrower"),
        }))
    }
}

impl Provider for CgiLithology {
    fn descriptor() -> Descriptor {
        Descriptor::new(
            "cgi-lithology",
            env!("CARGO_PKG_VERSION"),
            "Lithology terms in any language of the CGI Simple Lithology vocabulary: concept URI, preferred label, definition, broader and narrower concepts.",
        )
        .serves_lookup()
        .reads_asset(ASSET)
    }

    fn open() -> Result<CgiLithology, ProviderError> {
        Ok(CgiLithology::from_vocabulary(Vocabulary::read_asset(ASSET, FILE)?))
    }

    fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        let _: Options = parse_options(&request.options)?;
        let language = request.language.as_deref();
        match self.index.get(&fold(&request.term)) {
            Some(found) => Ok(found.iter().take(request.limit as usize).map(|(concept, matched)| self.entry(concept, matched, language)).collect()),
            None => {
                let labels: Vec<String> = self.vocabulary.concepts().iter().map(|concept| self.label(concept, language)).collect();
                Err(ProviderError::NotFound(close_matches(&request.term, labels.iter().map(String::as_str), 5)))
            }
        }
    }
}

export_provider!(CgiLithology);

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_provider_sdk::harness::Harness;

    /// A vocabulary fragment in the real one's shape, written by the test.
    const VOCABULARY: &str = r#"
PREFIX : <http://resource.geosciml.org/classifier/cgi/lithology/>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
:compound_material a skos:Concept ; skos:prefLabel "compound material"@en ; skos:narrower :sedimentary_rock .
:sedimentary_rock a skos:Concept ; skos:prefLabel "sedimentary rock"@en ; skos:broader :compound_material ; skos:narrower :clastic_sandstone .
:clastic_sandstone a skos:Concept ;
    skos:altLabel "sandy rock"@en, "沙"@zh ;
    skos:broader :sedimentary_rock ;
    skos:definition "Clastic sedimentary rock in which less than 30 percent of particles are greater than 2 mm in diameter."@en ;
    skos:prefLabel "sandstone"@en, "Sandstein"@de, "grès"@fr, "砂岩"@zh .
"#;

    fn harness() -> Harness {
        static FOLDER: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
        let folder = FOLDER.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(FILE), VOCABULARY).unwrap();
            dir
        });
        Harness::new().with_asset(ASSET, folder.path())
    }

    #[test]
    fn a_term_gives_its_concept_definition_and_broader_chain() {
        let entries = harness().lookup::<CgiLithology>("Sandstone").unwrap();
        assert_eq!(entries[0].id, "http://resource.geosciml.org/classifier/cgi/lithology/clastic_sandstone");
        assert!(entries[0].summary.starts_with("Clastic sedimentary rock"));
        let chain: Vec<&str> = entries[0].data["broader_chain"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
        assert_eq!(chain, ["sedimentary rock", "compound material"]);
        assert_eq!(harness().lookup::<CgiLithology>("sedimentary rock").unwrap()[0].data["narrower"][0]["label"], "sandstone");
    }

    #[test]
    fn labels_in_other_languages_and_alternative_labels_resolve() {
        for term in ["gres", "Sandstein", "砂岩", "sandy rock"] {
            assert_eq!(harness().lookup::<CgiLithology>(term).unwrap()[0].label, "sandstone", "{term}");
        }
        let request = LookupRequest { term: "sandstone".into(), options: json!({}), limit: 5, language: Some("de".into()) };
        assert_eq!(harness().lookup_with::<CgiLithology>(&request).unwrap()[0].label, "Sandstein");
    }

    #[test]
    fn an_unknown_term_suggests_close_labels() {
        let Err(ProviderError::NotFound(close)) = harness().lookup::<CgiLithology>("sandstonne") else { panic!() };
        assert_eq!(close[0], "sandstone");
    }
}
