//! Asking the providers: a term looked up by the lookup providers (time scale,
//! lithology, rock names), and what the knowledge providers know about an area
//! — a map's (from its newest georeference) or one given — written as a new
//! knowledge bundle on every query.
//!
//! Invariants: a provider that finds nothing answers with close matches, one
//! that fails while others answer is a warning, and only when none answers does
//! the call fail (with the most actionable failure); a bundle is recorded
//! before it is returned.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use geomap_model::trace;
use geomap_providers::{Area, CallError, Kind, KnowledgeRequest, LookupRequest, ProviderError, ProviderFailure};

use crate::providers::{ProviderWarning, all_at_once, limit};
use crate::uris::bundle_uri;
use crate::{App, AppError, ArgumentError, MapGone};

/// The name `geomap_lookup` is known by.
pub const LOOKUP_TOOL: &str = "geomap_lookup";
/// The name `geomap_query_knowledge` is known by.
pub const QUERY_TOOL: &str = "geomap_query_knowledge";
/// Most entries a provider returns when a lookup gives no `limit`.
pub const LOOKUP_LIMIT: u32 = 5;
/// The largest lookup `limit` accepted.
pub const MAX_LOOKUP_LIMIT: u32 = 50;
/// Most items a provider returns when a query gives no `limit`.
pub const QUERY_LIMIT: u32 = 10;
/// The largest query `limit` accepted.
pub const MAX_QUERY_LIMIT: u32 = 100;

/// Arguments of `geomap_lookup`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LookupTermRequest {
    /// What to look up, as written on the map or by the user: "Jurassic", "Lower Cretaceous", "侏罗系", "sandstone", "granite".
    pub term: String,
    /// Provider names to ask (geomap_capabilities lists them); omit for every enabled lookup provider.
    pub providers: Option<Vec<String>>,
    /// Options per provider, by name: {"ics-timescale": {...}}; each provider's options schema is in geomap_capabilities.
    pub provider_options: Option<Map<String, Value>>,
    /// At most this many entries per provider (1–50, default 5).
    pub limit: Option<u32>,
    /// Preferred language for labels (BCP 47: "en", "zh", "de").
    pub language: Option<String>,
}

/// One entry a provider found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LookupEntry {
    /// A stable identifier (a URI where the source has one).
    pub id: String,
    /// Its name.
    pub label: String,
    /// One line.
    pub summary: String,
    /// Everything else the provider knows about it.
    pub data: Value,
}

/// What one provider answered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProviderEntries {
    /// The provider.
    pub provider: String,
    /// Its version.
    pub version: String,
    /// What it found, best first (empty when it found nothing).
    pub entries: Vec<LookupEntry>,
    /// When it found nothing: names it knows that are close to the term, best first.
    pub close_matches: Vec<String>,
}

/// The result of `geomap_lookup`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LookupResult {
    /// The term as asked.
    pub term: String,
    /// One answer per provider that answered.
    pub results: Vec<ProviderEntries>,
    /// Providers that failed while others answered (provider, code, reason, message).
    pub warnings: Vec<ProviderWarning>,
}

/// The field of `area` that is out of range, with what it takes, if any.
fn area_problem(area: &Area) -> Option<(&'static str, &'static str)> {
    let longitude = |x: f64| (-180.0..=180.0).contains(&x);
    let latitude = |y: f64| (-90.0..=90.0).contains(&y);
    if !longitude(area.west) {
        Some(("/area/west", "a longitude from -180 to 180"))
    } else if !longitude(area.east) {
        Some(("/area/east", "a longitude from -180 to 180"))
    } else if !latitude(area.south) {
        Some(("/area/south", "a latitude from -90 to 90"))
    } else if !latitude(area.north) || area.north <= area.south {
        Some(("/area/north", "a latitude from -90 to 90, north of south"))
    } else {
        None
    }
}

/// Arguments of `geomap_query_knowledge`: `map_id` or `area` (or neither, for providers that need no area).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeQuery {
    /// A georeferenced map: its newest revision's wgs84_bounds is the area.
    pub map_id: Option<String>,
    /// An area instead of a map.
    pub area: Option<Area>,
    /// Provider names to ask (geomap_capabilities lists them); omit for every enabled knowledge provider.
    pub providers: Option<Vec<String>>,
    /// Options per provider, by name: {"usgs-seismicity": {"min_magnitude": 6}}.
    pub provider_options: Option<Map<String, Value>>,
    /// Topics to keep to (empty or omitted: all a provider knows).
    pub topics: Option<Vec<String>>,
    /// At most this many items per provider (1–100, default 10).
    pub limit: Option<u32>,
}

/// One piece of knowledge.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct KnowledgeItem {
    /// Its title.
    pub title: String,
    /// Its content.
    pub data: Value,
}

/// What one provider answered.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProviderKnowledge {
    /// The provider.
    pub provider: String,
    /// Its version.
    pub version: String,
    /// One paragraph.
    pub summary: String,
    /// Its items, most relevant first.
    pub items: Vec<KnowledgeItem>,
}

/// A knowledge bundle: the result of `geomap_query_knowledge`, also kept in
/// the registry and readable as `geomap://bundles/{bundle_id}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct KnowledgeBundle {
    /// This bundle's ID; every call writes a new one.
    pub bundle_id: String,
    /// The bundle as an MCP resource.
    pub resource_uri: String,
    /// When it was written (RFC 3339, UTC).
    pub created_at: String,
    /// The map the area came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_id: Option<String>,
    /// The revision whose wgs84_bounds was the area.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_id: Option<String>,
    /// The area asked about (none when neither map_id nor area was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub area: Option<Area>,
    /// The topics asked about.
    pub topics: Vec<String>,
    /// One answer per provider that answered.
    pub results: Vec<ProviderKnowledge>,
    /// Providers that failed while others answered (provider, code, reason, message).
    pub warnings: Vec<ProviderWarning>,
}

impl App {
    /// `geomap_lookup`: asks each chosen provider, concurrently; a provider that finds nothing
    /// answers with close matches, one that fails becomes a warning.
    pub async fn lookup(&self, request: LookupTermRequest) -> Result<LookupResult, AppError> {
        if request.term.trim().is_empty() {
            return Err(ArgumentError::wrong("/term", "a non-empty term").into());
        }
        let limit = limit(request.limit, LOOKUP_LIMIT, MAX_LOOKUP_LIMIT)?;
        let set = self.providers().await;
        let plan = self.plan(set, request.providers.as_deref(), Kind::Lookup, &request.provider_options.unwrap_or_default())?;
        let calls: Vec<_> = plan
            .targets
            .iter()
            .map(|target| {
                let asked = LookupRequest { term: request.term.clone(), options: target.options.clone(), limit, language: request.language.clone() };
                target.lookup(set, asked)
            })
            .collect();
        let outcomes = all_at_once(calls).await;
        let mut answers = Vec::new();
        let mut failures = plan.failures;
        for (target, outcome) in plan.targets.iter().zip(outcomes) {
            let answer = |entries: Vec<LookupEntry>, close_matches: Vec<String>| ProviderEntries {
                provider: target.name.clone(),
                version: target.version.clone(),
                entries,
                close_matches,
            };
            match outcome {
                Ok(entries) => answers.push(answer(
                    entries.into_iter().map(|entry| LookupEntry { id: entry.id, label: entry.label, summary: entry.summary, data: entry.data }).collect(),
                    Vec::new(),
                )),
                Err(CallError::Provider(ProviderFailure::NotFound(close))) => answers.push(answer(Vec::new(), close)),
                Err(error) => failures.push(ProviderError::from_call(&target.name, error)),
            }
        }
        let (results, warnings) = self.settle(Kind::Lookup, answers, failures)?;
        Ok(LookupResult { term: request.term, results, warnings })
    }

    /// `geomap_query_knowledge`: resolves the area, asks each chosen provider concurrently, and
    /// records the answers as a new bundle.
    pub async fn query_knowledge(self: &Arc<Self>, request: KnowledgeQuery) -> Result<KnowledgeBundle, AppError> {
        let limit = limit(request.limit, QUERY_LIMIT, MAX_QUERY_LIMIT)?;
        if let Some((field, expected)) = request.area.as_ref().and_then(area_problem) {
            return Err(ArgumentError::wrong(field, expected).into());
        }
        let (source, area) = match (&request.map_id, request.area) {
            (Some(_), Some(_)) => return Err(ArgumentError::conflict("/area", "either map_id or area, not both").into()),
            (Some(map_id), None) => {
                let (revision_id, area) = self.map_area(map_id.clone()).await?;
                (Some((map_id.clone(), revision_id)), Some(area))
            }
            (None, area) => (None, area),
        };
        let set = self.providers().await;
        let plan = self.plan(set, request.providers.as_deref(), Kind::Knowledge, &request.provider_options.unwrap_or_default())?;
        let topics = request.topics.unwrap_or_default();
        let mut failures = plan.failures;
        let mut targets = Vec::new();
        for target in plan.targets {
            match (target.loaded.provider.descriptor().needs_area, area) {
                (true, None) => failures.push(ProviderError::CannotServe {
                    name: target.name.clone(),
                    detail: "it needs an area: pass map_id (of a georeferenced map) or area".to_owned(),
                }),
                _ => targets.push(target),
            }
        }
        let calls: Vec<_> = targets
            .iter()
            .map(|target| {
                let asked = KnowledgeRequest { area, topics: topics.clone(), options: target.options.clone(), limit };
                target.query(set, asked)
            })
            .collect();
        let outcomes = all_at_once(calls).await;
        let mut answers = Vec::new();
        for (target, outcome) in targets.iter().zip(outcomes) {
            match outcome {
                Ok(knowledge) => answers.push(ProviderKnowledge {
                    provider: target.name.clone(),
                    version: target.version.clone(),
                    summary: knowledge.summary,
                    items: knowledge.items.into_iter().map(|item| KnowledgeItem { title: item.title, data: item.data }).collect(),
                }),
                Err(error) => failures.push(ProviderError::from_call(&target.name, error)),
            }
        }
        let (results, warnings) = self.settle(Kind::Knowledge, answers, failures)?;
        let bundle_id = format!("kb_{}", geomap_model::random_hex(10));
        let (map_id, revision_id) = source.unzip();
        let bundle =
            KnowledgeBundle { resource_uri: bundle_uri(&bundle_id), bundle_id, created_at: crate::now(), map_id, revision_id, area, topics, results, warnings };
        let document = serde_json::to_string(&bundle).expect("bundles always serialize");
        let app = Arc::clone(self);
        let (bundle_id, created_at) = (bundle.bundle_id.clone(), bundle.created_at.clone());
        let source = bundle.map_id.clone().zip(bundle.revision_id.clone());
        let written =
            trace::spawn_blocking(move || app.registry.add_bundle(&bundle_id, source.as_ref().map(|(m, r)| (m.as_str(), r.as_str())), &created_at, &document))
                .await?;
        if !written {
            return Err(AppError::unknown_map(bundle.map_id.as_deref().unwrap_or_default()));
        }
        Ok(bundle)
    }

    /// The newest revision of `map_id` and its WGS84 box (`georef_required` without one).
    async fn map_area(self: &Arc<Self>, map_id: String) -> Result<(String, Area), AppError> {
        let app = Arc::clone(self);
        trace::spawn_blocking(move || {
            let record = app.registry.map(&map_id)?.ok_or_else(|| AppError::unknown_map(&map_id))?;
            let revision = record.revisions.last().ok_or_else(|| AppError::GeorefRequired { map_id: map_id.clone() })?;
            Ok((revision.revision_id.clone(), geomap_providers::area_of(&revision.wgs84_bounds)))
        })
        .await
    }

    /// A knowledge bundle as recorded (`resources/read` of `geomap://bundles/{bundle_id}`).
    pub async fn bundle(self: &Arc<Self>, bundle_id: String) -> Result<String, AppError> {
        let app = Arc::clone(self);
        trace::spawn_blocking(move || app.registry.bundle(&bundle_id)?.ok_or_else(|| AppError::gone(&bundle_id, MapGone::UnknownBundle))).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_area_names_the_edge_that_is_out_of_range() {
        let area = Area { west: -114.0, south: 35.0, east: -113.0, north: 36.0 };
        assert_eq!(area_problem(&area), None);
        assert_eq!(area_problem(&Area { west: -190.0, ..area }).unwrap().0, "/area/west");
        assert_eq!(area_problem(&Area { east: 181.0, ..area }).unwrap().0, "/area/east");
        assert_eq!(area_problem(&Area { south: -91.0, ..area }).unwrap().0, "/area/south");
        assert_eq!(area_problem(&Area { north: 34.0, ..area }).unwrap().0, "/area/north");
        assert_eq!(area_problem(&Area { west: 179.0, east: -179.0, ..area }), None, "across the antimeridian");
    }
}

#[cfg(test)]
mod async_tests {
    use super::*;
    use crate::testing::{TestApp, provider_settings, shared};

    /// An application whose providers `ics-timescale` and `usgs-seismicity` read the upstream files; `None` to skip.
    fn with_providers(test: &str) -> Option<TestApp> {
        let shared = shared(test, &["chart.ttl", "earthquake_1970_4.5mag.csv"])?;
        let folder = tempfile::tempdir().unwrap();
        let variables = provider_settings(test, folder.path(), &shared, "ics-timescale,usgs-seismicity")?;
        let variables: Vec<(&str, &str)> = variables.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
        Some(TestApp::in_folder(folder, &variables))
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_term_is_looked_up_and_an_area_asked_about_by_the_providers() {
        let Some(test) = with_providers("knowledge::a_term_is_looked_up_and_an_area_asked_about_by_the_providers") else { return };
        let found = test.app.lookup(LookupTermRequest { term: "Jurassic".into(), ..LookupTermRequest::default() }).await.unwrap();
        let timescale = found.results.iter().find(|answer| answer.provider == "ics-timescale").expect("ics-timescale answers");
        assert!(timescale.entries[0].label.contains("Jurassic"), "{:?}", timescale.entries[0]);
        assert!(found.warnings.is_empty(), "{:?}", found.warnings);
        let missing = test.app.lookup(LookupTermRequest { term: "Jurasic".into(), ..LookupTermRequest::default() }).await.unwrap();
        assert!(missing.results[0].entries.is_empty() && missing.results[0].close_matches.iter().any(|close| close.contains("Jurassic")));
        let japan = Area { west: 138.0, south: 34.0, east: 141.0, north: 37.0 };
        let query = KnowledgeQuery { area: Some(japan), providers: Some(vec!["usgs-seismicity".into()]), ..KnowledgeQuery::default() };
        let bundle = test.app.query_knowledge(query).await.unwrap();
        assert_eq!(bundle.results[0].provider, "usgs-seismicity");
        assert!(!bundle.results[0].items.is_empty(), "{:?}", bundle.results[0].summary);
        let recorded = test.app.bundle(bundle.bundle_id.clone()).await.unwrap();
        assert!(recorded.contains(&bundle.bundle_id), "the bundle is recorded before it is returned");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_request_that_does_not_fit_or_a_map_without_a_georeference_is_refused() {
        let test = TestApp::new(&[]);
        let field = |error: AppError| match error {
            AppError::InvalidArguments(argument) => argument.field,
            other => panic!("not an argument error: {other:?}"),
        };
        assert_eq!(field(test.app.lookup(LookupTermRequest { term: " ".into(), ..LookupTermRequest::default() }).await.unwrap_err()), "/term");
        assert_eq!(
            field(test.app.lookup(LookupTermRequest { term: "Jurassic".into(), limit: Some(0), ..LookupTermRequest::default() }).await.unwrap_err()),
            "/limit"
        );
        let area = Area { west: 0.0, south: 0.0, east: 1.0, north: 1.0 };
        let both = KnowledgeQuery { map_id: Some("map_x".into()), area: Some(area), ..KnowledgeQuery::default() };
        assert_eq!(field(test.app.query_knowledge(both).await.unwrap_err()), "/area");
        test.scan("a.png", 10, 10, |_, _| [1, 1, 1]);
        let map_id = test.register("a.png").await;
        let unplaced = test.app.query_knowledge(KnowledgeQuery { map_id: Some(map_id), ..KnowledgeQuery::default() }).await.unwrap_err();
        assert!(matches!(unplaced, AppError::GeorefRequired { .. }), "{unplaced:?}");
        let nobody =
            test.app.lookup(LookupTermRequest { term: "Jurassic".into(), providers: Some(vec!["ics-timescal".into()]), ..LookupTermRequest::default() }).await;
        assert!(matches!(nobody, Err(AppError::Provider(geomap_providers::ProviderError::NotFound { .. }))), "{nobody:?}");
        let unknown = test.app.bundle("kb_00000000000000000000".into()).await.unwrap_err();
        assert!(matches!(unknown, AppError::MapNotFound { reason: MapGone::UnknownBundle, .. }), "{unknown:?}");
    }
}
