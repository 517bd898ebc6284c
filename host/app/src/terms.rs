//! What a layout reads in its legend's words: each unit's code, description,
//! ages and rock names, resolved through the `ics-timescale` and
//! `cgi-lithology` providers when they are ready (a provider that is not
//! becomes a warning, and its terms stay unresolved).
//!
//! A layout keeps its terms: those whose provider was not ready when it was
//! made are resolved when first needed after their knowledge is installed (by
//! `geomap_unit_at`, the extraction, or reading the layout's resource), and the
//! stored layout is then rewritten with them ([`App::resolve_stored_terms`]).
//!
//! Invariants: each distinct term is asked once per layout and provider; a
//! term whose modifier the chart lacks is asked again without it; a provider
//! whose knowledge resolved a layout's terms is listed in its
//! `terms_resolved_by` and never asked again for that layout.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Map;

use geomap_model::page::PixelBox;
use geomap_providers::{CallError, Kind, LookupRequest, ProviderError, ProviderFailure};
use geomap_vision::detect::LegendEntry;
use geomap_vision::layout::terms::{age_terms, lithology_terms, with_age_symbol};
use geomap_vision::layout::unit_code;
use geomap_vision::ocr::reader::TextLine;

use geomap_model::trace;
use geomap_store::registry::{Document, StoredDocument};

use crate::providers::all_at_once;
use crate::uris::layout_dir;
use crate::{App, AppError, Warning};

/// The provider ages are resolved through.
pub const TIMESCALE_PROVIDER: &str = "ics-timescale";
/// The provider rock names are resolved through.
pub const LITHOLOGY_PROVIDER: &str = "cgi-lithology";

/// A legend entry, with the legend it belongs to.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LegendItem {
    /// Index into `components` of its legend.
    pub legend: usize,
    /// The swatch, text and colour.
    #[serde(flatten)]
    pub entry: LegendEntry,
    /// The unit's code, description and ages.
    #[serde(flatten)]
    pub words: UnitWords,
}

/// A legend unit's words.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct UnitWords {
    /// The unit's code, as read in or beside its swatch ("Qal").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Its description, as read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The heading it is listed under in the legend ("Supai Group (Lower Permian, …)"), as read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The ages its description names, each resolved on the ICS chart when ics-timescale is ready.
    pub age_terms: Vec<AgeTermInfo>,
    /// From the oldest beginning to the youngest end of its resolved ages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_ma: Option<AgeSpan>,
    /// The rock names its description uses, each resolved when cgi-lithology is ready.
    pub lithology_terms: Vec<LithologyInfo>,
}

/// An age named in a description.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgeTermInfo {
    /// As written, spelled correctly ("Lower Permian").
    pub term: String,
    /// Written with "(?)".
    pub uncertain: bool,
    /// Its ICS interval: the one it names, or the span an informal modifier means ("Lower Permian" is the
    /// Cisuralian, "middle Miocene" the Langhian–Serravallian); of the term without its modifier when neither.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ics: Option<Resolved>,
}

/// A rock name used in a description.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LithologyInfo {
    /// As written, singular ("sandstone").
    pub term: String,
    /// Its CGI simple-lithology concept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgi: Option<Resolved>,
}

/// A term as a provider resolved it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Resolved {
    /// The concept's identifier.
    pub id: String,
    /// Its name.
    pub label: String,
    /// Its beginning, in millions of years ago (ages only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_ma: Option<f64>,
    /// Its end, in millions of years ago (ages only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_ma: Option<f64>,
}

/// An age range in millions of years ago.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct AgeSpan {
    /// The oldest beginning.
    pub begin_ma: f64,
    /// The youngest end.
    pub end_ma: f64,
}

/// A unit's words from its code, description and group heading (ages and rock names parsed, not yet
/// resolved): a description that states no age takes its group's.
pub fn unit_words(code: Option<String>, description: Option<String>, group: Option<String>) -> UnitWords {
    let text = description.as_deref().unwrap_or_default();
    let mut ages = age_terms(text);
    if ages.is_empty() {
        ages = age_terms(group.as_deref().unwrap_or_default());
    }
    let code = code.map(|code| with_age_symbol(&code, &ages));
    UnitWords {
        age_terms: ages.into_iter().map(|t| AgeTermInfo { term: t.term, uncertain: t.uncertain, ics: None }).collect(),
        lithology_terms: lithology_terms(text).into_iter().map(|term| LithologyInfo { term, cgi: None }).collect(),
        age_ma: None,
        code,
        description,
        group,
    }
}

fn centre_inside(line: &TextLine, bbox: &PixelBox) -> bool {
    let (x, y) = ((line.bbox.x0 + line.bbox.x1) / 2.0, (line.bbox.y0 + line.bbox.y1) / 2.0);
    bbox.x0 <= x && x <= bbox.x1 && bbox.y0 <= y && y <= bbox.y1
}

/// The text of the lines whose centres lie in `bbox`, top to bottom.
pub fn text_in(lines: &[TextLine], bbox: &PixelBox) -> Option<String> {
    let inside: Vec<String> = lines.iter().filter(|line| centre_inside(line, bbox)).map(|line| line.text.clone()).collect();
    (!inside.is_empty()).then(|| inside.join(" "))
}

/// The words of a detected legend entry: the code printed in its swatch, the description in its text box.
pub fn detected_entry_words(lines: &[TextLine], swatch: &PixelBox, text: Option<&PixelBox>) -> UnitWords {
    let code = lines.iter().filter(|line| centre_inside(line, swatch)).find_map(|line| unit_code(&line.text));
    unit_words(code, text.and_then(|text| text_in(lines, text)), None)
}

/// The distinct terms of `terms`, in the order first met.
fn distinct(terms: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = Vec::new();
    for term in terms {
        if !seen.contains(&term) {
            seen.push(term);
        }
    }
    seen
}

/// The span from the oldest beginning to the youngest end of `spans` (begin, end in Ma), when there are any.
fn span_of(spans: &[(f64, f64)]) -> Option<AgeSpan> {
    (!spans.is_empty())
        .then(|| AgeSpan { begin_ma: spans.iter().map(|s| s.0).fold(f64::MIN, f64::max), end_ma: spans.iter().map(|s| s.1).fold(f64::MAX, f64::min) })
}

impl App {
    /// Resolves every entry's ages and rock names through their providers (each distinct term once);
    /// a provider that cannot be asked, or fails, becomes a warning of `tool` and its terms stay unresolved.
    pub async fn resolve_terms(&self, items: &mut [LegendItem], tool: &str) -> Result<Vec<Warning>, AppError> {
        let mut warnings = Vec::new();
        let ages: Vec<String> = distinct(items.iter().flat_map(|item| item.words.age_terms.iter().map(|t| t.term.clone())));
        let rocks: Vec<String> = distinct(items.iter().flat_map(|item| item.words.lithology_terms.iter().map(|t| t.term.clone())));
        let resolved_ages = self.resolve(TIMESCALE_PROVIDER, &ages, tool, &mut warnings).await?;
        let resolved_rocks = self.resolve(LITHOLOGY_PROVIDER, &rocks, tool, &mut warnings).await?;
        for item in items.iter_mut() {
            for term in &mut item.words.age_terms {
                term.ics = resolved_ages.get(&term.term).cloned();
            }
            for term in &mut item.words.lithology_terms {
                term.cgi = resolved_rocks.get(&term.term).cloned();
            }
            let spans: Vec<(f64, f64)> = item.words.age_terms.iter().filter_map(|t| t.ics.as_ref()).filter_map(|r| r.begin_ma.zip(r.end_ma)).collect();
            item.words.age_ma = span_of(&spans);
        }
        Ok(warnings)
    }

    /// Resolves the ages and rock names layout `layout_id` of map `map_id` (its newest when `None`)
    /// left unresolved because their provider was not ready when it was made, when that provider is
    /// ready now, and stores the layout with them (its registry record and `layout.json`). A map
    /// with no such layout, or a provider still not ready, changes nothing.
    pub async fn resolve_stored_terms(self: &Arc<Self>, map_id: &str, layout_id: Option<&str>, tool: &str) -> Result<(), AppError> {
        let app = Arc::clone(self);
        let (map, wanted) = (map_id.to_owned(), layout_id.map(str::to_owned));
        let found = trace::spawn_blocking(move || -> Result<Option<(String, String)>, AppError> {
            Ok(match wanted {
                Some(id) => app.registry.document(Document::Layout, &map, &id)?.map(|document| (id, document)),
                None => app.registry.newest_document(Document::Layout, &map)?,
            })
        })
        .await?;
        let Some((layout_id, text)) = found else { return Ok(()) };
        let Ok(mut document) = serde_json::from_str::<serde_json::Value>(&text) else { return Ok(()) };
        let mut resolved_by: Vec<String> = serde_json::from_value(document["terms_resolved_by"].clone()).unwrap_or_default();
        let mut changed = false;
        for (provider, list, field) in [(TIMESCALE_PROVIDER, "age_terms", "ics"), (LITHOLOGY_PROVIDER, "lithology_terms", "cgi")] {
            if resolved_by.iter().any(|done| done == provider) {
                continue;
            }
            let Some(entries) = document["legend_entries"].as_array_mut() else { continue };
            let unresolved = |entry: &serde_json::Value| -> Vec<String> {
                entry[list]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|term| term[field].is_null())
                    .filter_map(|term| term["term"].as_str().map(str::to_owned))
                    .collect()
            };
            let terms = distinct(entries.iter().flat_map(unresolved));
            if terms.is_empty() {
                continue;
            }
            let mut warnings = Vec::new();
            let answers = self.resolve(provider, &terms, tool, &mut warnings).await?;
            if !warnings.is_empty() {
                continue; // not ready yet: asked again next time
            }
            for entry in entries.iter_mut() {
                for term in entry[list].as_array_mut().into_iter().flatten() {
                    if let Some(answer) = term["term"].as_str().and_then(|name| answers.get(name)) {
                        term[field] = serde_json::to_value(answer).expect("resolved terms serialize");
                    }
                }
                if list == "age_terms" {
                    let ages: Vec<AgeTermInfo> = serde_json::from_value(entry[list].clone()).unwrap_or_default();
                    let spans: Vec<(f64, f64)> = ages.iter().filter_map(|t| t.ics.as_ref()).filter_map(|r| r.begin_ma.zip(r.end_ma)).collect();
                    entry["age_ma"] = serde_json::to_value(span_of(&spans)).expect("spans serialize");
                }
            }
            resolved_by.push(provider.to_owned());
            changed = true;
        }
        if !changed {
            return Ok(());
        }
        document["terms_resolved_by"] = serde_json::to_value(&resolved_by).expect("names serialize");
        let text = serde_json::to_string_pretty(&document).expect("layouts serialize");
        let app = Arc::clone(self);
        let (map_id, created_at) = (map_id.to_owned(), document["created_at"].as_str().unwrap_or_default().to_owned());
        trace::spawn_blocking(move || {
            // The file first (written whole beside, then moved over), then the record.
            let path = layout_dir(&app.settings.artifact_root, &map_id, &layout_id).join("layout.json");
            let partial = path.with_extension(format!("json.partial-{}", geomap_model::random_hex(6)));
            let storage = |error: std::io::Error| AppError::Storage { stage: "rewriting a layout with its resolved terms", detail: error.to_string() };
            std::fs::write(&partial, &text).and_then(|()| std::fs::rename(&partial, &path)).map_err(storage)?;
            app.registry.replace_document(&StoredDocument { kind: Document::Layout, id: layout_id, map_id, created_at, document: text })?;
            Ok(())
        })
        .await
    }

    /// Each of `terms` as `provider` resolves it (its best entry); a term with a modifier the
    /// provider does not know ("middle Cretaceous") is resolved without it ("Cretaceous").
    async fn resolve(&self, provider: &str, terms: &[String], tool: &str, warnings: &mut Vec<Warning>) -> Result<BTreeMap<String, Resolved>, AppError> {
        let mut resolved = BTreeMap::new();
        if terms.is_empty() {
            return Ok(resolved);
        }
        let set = self.providers().await;
        let mut plan = self.plan(set, Some(&[provider.to_owned()]), Kind::Lookup, &Map::new())?;
        let Some(target) = plan.targets.pop() else {
            let failure = plan.failures.into_iter().next().unwrap_or(ProviderError::NoneAvailable { kind: Kind::Lookup });
            warnings.push(self.warning(&AppError::Provider(failure), provider, tool));
            return Ok(resolved);
        };
        for term in terms {
            let base = term.split_once(' ').map(|(_, base)| base.to_owned());
            for asked in std::iter::once(term.clone()).chain(base) {
                let request = LookupRequest { term: asked, options: serde_json::json!({}), limit: 1, language: Some("en".to_owned()) };
                match all_at_once(vec![target.lookup(set, request)]).await.remove(0) {
                    Ok(entries) => {
                        if let Some(entry) = entries.into_iter().next() {
                            let ma = |edge: &str| entry.data[edge]["ma"].as_f64();
                            resolved.insert(term.clone(), Resolved { begin_ma: ma("begin"), end_ma: ma("end"), id: entry.id, label: entry.label });
                            break;
                        }
                    }
                    Err(CallError::Provider(ProviderFailure::NotFound(_))) => {}
                    Err(error) => {
                        warnings.push(self.warning(&AppError::Provider(ProviderError::from_call(provider, error)), provider, tool));
                        return Ok(resolved);
                    }
                }
            }
        }
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_without_an_age_of_its_own_takes_its_groups() {
        let words = unit_words(Some("Pe".into()), Some("Esplanade Sandstone: red sandstone and siltstone".into()), Some("Supai Group (Lower Permian)".into()));
        let ages: Vec<&str> = words.age_terms.iter().map(|term| term.term.as_str()).collect();
        assert_eq!(ages, ["Lower Permian"]);
        let rocks: Vec<&str> = words.lithology_terms.iter().map(|term| term.term.as_str()).collect();
        assert_eq!(rocks, ["sandstone", "siltstone"]);
        let own = unit_words(None, Some("Basalt flows (Miocene)".into()), Some("Volcanic rocks (Pliocene)".into()));
        assert_eq!(own.age_terms[0].term, "Miocene");
    }

    #[test]
    fn the_span_runs_from_the_oldest_beginning_to_the_youngest_end() {
        let span = span_of(&[(298.9, 274.4), (23.03, 5.333)]).unwrap();
        assert_eq!((span.begin_ma, span.end_ma), (298.9, 5.333));
        assert!(span_of(&[]).is_none());
        assert_eq!(distinct(["a", "b", "a"].into_iter().map(str::to_owned)), ["a", "b"]);
    }

    #[test]
    fn a_detected_entry_takes_the_code_in_its_swatch_and_the_words_in_its_text_box() {
        let line = |text: &str, x0: f64| TextLine { text: text.into(), bbox: PixelBox { x0, y0: 10.0, x1: x0 + 40.0, y1: 30.0 }, score: 0.9 };
        let lines = [line("Qal", 10.0), line("Alluvium (Holocene)", 100.0)];
        let swatch = PixelBox { x0: 0.0, y0: 0.0, x1: 60.0, y1: 40.0 };
        let text = PixelBox { x0: 90.0, y0: 0.0, x1: 300.0, y1: 40.0 };
        let words = detected_entry_words(&lines, &swatch, Some(&text));
        assert_eq!((words.code.as_deref(), words.description.as_deref()), (Some("Qal"), Some("Alluvium (Holocene)")));
        assert_eq!(words.age_terms[0].term, "Holocene");
    }
}
