//! `fault-glossary`: a fault or fracture term in, its definition and related
//! terms out, from the operator's asset `fault-glossary-data`.
//!
//! A third-party-style provider written from `sdk/README.md` alone, to show
//! that the README is enough. The asset holds one file, `glossary.json`: a
//! JSON list of `{"term": "...", "definition": "...", "see_also": ["..."]}`
//! (`see_also` optional). It is built for `wasm32-wasip2` as
//! `glossary_provider.wasm`; installed, that file is `fault-glossary.wasm`.

use geomap_provider_sdk::text::{close_matches, fold};
use geomap_provider_sdk::{Descriptor, Entry, LookupRequest, Provider, ProviderError, export_provider, parse_options, read_json_asset};
use serde::Deserialize;
use serde_json::json;

/// The asset this provider reads (the operator's `[assets.fault-glossary-data]`).
pub const ASSET: &str = "fault-glossary-data";

/// The asset's one file.
pub const FILE: &str = "glossary.json";

/// One entry of `glossary.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Term {
    term: String,
    definition: String,
    #[serde(default)]
    see_also: Vec<String>,
}

/// Its options, as the options schema in the descriptor allows them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    /// Only the whole term (case, accents, spaces and hyphens aside), not terms that contain it.
    #[serde(default)]
    exact: bool,
}

/// The glossary, loaded.
pub struct FaultGlossary {
    terms: Vec<Term>,
}

impl FaultGlossary {
    fn entry(term: &Term) -> Entry {
        Entry::new(&format!("fault-glossary:{}", fold(&term.term)), &term.term, &term.definition)
            .with_data(json!({ "definition": term.definition, "see_also": term.see_also }))
    }
}

impl Provider for FaultGlossary {
    fn descriptor() -> Descriptor {
        Descriptor::new("fault-glossary", env!("CARGO_PKG_VERSION"), "Definitions of fault and fracture terms, with related terms.")
            .serves_lookup()
            .reads_asset(ASSET)
            .with_options_schema(json!({
                "type": "object",
                "properties": {
                    "exact": { "type": "boolean", "description": "Only the whole term, not terms that contain it (default false)." }
                },
                "additionalProperties": false
            }))
    }

    fn open() -> Result<FaultGlossary, ProviderError> {
        let terms: Vec<Term> = read_json_asset(ASSET, FILE)?;
        if let Some(blank) = terms.iter().position(|term| fold(&term.term).is_empty()) {
            return Err(ProviderError::Failed(format!("entry {blank} of {FILE} of asset {ASSET} has no term")));
        }
        Ok(FaultGlossary { terms })
    }

    fn lookup(&self, request: &LookupRequest) -> Result<Vec<Entry>, ProviderError> {
        let options: Options = parse_options(&request.options)?;
        let wanted = fold(&request.term);
        if wanted.is_empty() {
            return Err(ProviderError::Failed("the term has no letters or digits to look up".to_owned()));
        }
        // The whole term first; otherwise (unless `exact`) the terms that contain it, shortest first.
        let mut found: Vec<&Term> = self.terms.iter().filter(|term| fold(&term.term) == wanted).collect();
        if found.is_empty() && !options.exact {
            found = self.terms.iter().filter(|term| fold(&term.term).contains(&wanted)).collect();
            found.sort_by_key(|term| (term.term.len(), term.term.as_str()));
        }
        if found.is_empty() {
            return Err(ProviderError::NotFound(close_matches(&request.term, self.terms.iter().map(|term| term.term.as_str()), 5)));
        }
        Ok(found.into_iter().map(FaultGlossary::entry).collect())
    }
}

export_provider!(FaultGlossary);

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_provider_sdk::harness::Harness;
    use std::sync::OnceLock;

    /// The fixture asset, written once for the whole test process (the harness maps an id to one folder).
    fn harness() -> Harness {
        static FOLDER: OnceLock<tempfile::TempDir> = OnceLock::new();
        let folder = FOLDER.get_or_init(|| {
            let folder = tempfile::tempdir().unwrap();
            let glossary = json!([
                { "term": "thrust fault", "definition": "A reverse fault that dips less than 45 degrees.", "see_also": ["reverse fault", "nappe"] },
                { "term": "reverse fault", "definition": "A dip-slip fault whose hanging wall moved up." },
                { "term": "normal fault", "definition": "A dip-slip fault whose hanging wall moved down.", "see_also": ["graben"] },
                { "term": "strike-slip fault", "definition": "A fault whose blocks moved past each other horizontally." },
                { "term": "fault", "definition": "A fracture along which the rocks on either side have moved." }
            ]);
            std::fs::write(folder.path().join(FILE), glossary.to_string()).unwrap();
            folder
        });
        Harness::new().with_asset(ASSET, folder.path())
    }

    fn request(term: &str, options: serde_json::Value) -> LookupRequest {
        LookupRequest { term: term.to_owned(), options, limit: 10, language: None }
    }

    #[test]
    fn a_term_gives_its_definition_and_related_terms() {
        let entries = harness().lookup::<FaultGlossary>("Thrust-Fault").unwrap();
        assert_eq!(entries.len(), 1, "the whole term wins over terms that contain it");
        assert_eq!((entries[0].id.as_str(), entries[0].label.as_str()), ("fault-glossary:thrustfault", "thrust fault"));
        assert_eq!(entries[0].summary, "A reverse fault that dips less than 45 degrees.");
        assert_eq!(entries[0].data["see_also"], json!(["reverse fault", "nappe"]));
        let reverse = harness().lookup::<FaultGlossary>("reverse fault").unwrap();
        assert_eq!(reverse[0].data["see_also"], json!([]), "see_also is optional");
    }

    #[test]
    fn part_of_a_term_finds_the_terms_that_hold_it_unless_exact() {
        let slip = harness().lookup::<FaultGlossary>("slip").unwrap();
        assert_eq!(slip.iter().map(|entry| entry.label.as_str()).collect::<Vec<_>>(), ["strike-slip fault"]);
        let faults = harness().lookup::<FaultGlossary>("fault").unwrap();
        assert_eq!(faults.iter().map(|entry| entry.label.as_str()).collect::<Vec<_>>(), ["fault"], "the whole term only");
        let Err(ProviderError::NotFound(_)) = harness().lookup_with::<FaultGlossary>(&request("slip", json!({ "exact": true }))) else {
            panic!("exact asks for the whole term")
        };
        let limited = harness().with_limit(2).lookup::<FaultGlossary>("ault").unwrap();
        assert_eq!(limited.iter().map(|entry| entry.label.as_str()).collect::<Vec<_>>(), ["fault", "normal fault"], "shortest first, cut to the limit");
    }

    #[test]
    fn a_term_it_lacks_is_not_found_with_close_matches() {
        let Err(ProviderError::NotFound(close)) = harness().lookup::<FaultGlossary>("thrust falt") else { panic!("a misspelling matched") };
        assert_eq!(close[0], "thrust fault");
        let Err(ProviderError::NotFound(close)) = harness().lookup::<FaultGlossary>("syncline") else { panic!("nothing is called syncline") };
        assert!(close.is_empty(), "{close:?}");
    }

    #[test]
    fn a_bad_option_is_refused_by_the_options_schema_as_the_host_would() {
        let Err(ProviderError::InvalidOptions { field, message }) = harness().lookup_with::<FaultGlossary>(&request("fault", json!({ "exact": "yes" }))) else {
            panic!("\"yes\" is not a boolean")
        };
        assert_eq!((field.as_str(), message.as_str()), ("/exact", r#""yes" is not of type "boolean""#));
        let Err(ProviderError::InvalidOptions { field, message }) = harness().lookup_with::<FaultGlossary>(&request("fault", json!({ "colour": "red" })))
        else {
            panic!("colour is not an option")
        };
        assert_eq!((field.as_str(), message.as_str()), ("/colour", "Additional properties are not allowed ('colour' was unexpected)"));
        assert!(harness().lookup_with::<FaultGlossary>(&request("fault", json!({ "exact": true }))).is_ok());
    }

    #[test]
    fn it_declares_its_asset_and_an_unmounted_one_is_missing() {
        assert_eq!(FaultGlossary::descriptor().assets, [ASSET]);
        assert_eq!(FaultGlossary::descriptor().name, "fault-glossary");
        assert_eq!(
            geomap_provider_sdk::read_asset("fault-glossary-elsewhere", FILE).unwrap_err(),
            ProviderError::MissingAsset("fault-glossary-elsewhere".to_owned())
        );
    }
}
