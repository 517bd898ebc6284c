//! `geomap_query_knowledge`: what knowledge providers know about an area —
//! a map's (from its newest georeference) or one given — written as a new
//! knowledge bundle on every call.

use std::sync::Arc;
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::ServerState;
use crate::mcp::adapter::{MapGone, ProviderWarning, ToolError};
use crate::mcp::arguments::{ArgumentError, ArgumentProblem};
use crate::mcp::uris::bundle_uri;
use geomap_model::trace;
use geomap_providers::{Area, Kind, KnowledgeRequest, ProviderError};

use super::provider_calls::{all_at_once, limit, plan, settle};

/// Most items a provider returns when `limit` is not given.
pub const DEFAULT_LIMIT: u32 = 10;
/// The largest `limit` accepted.
pub const MAX_LIMIT: u32 = 100;

/// The field of `area` that is out of range, if any.
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
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryKnowledgeArgs {
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
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct KnowledgeItem {
    /// Its title.
    pub title: String,
    /// Its content.
    pub data: Value,
}

/// What one provider answered.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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

/// `geomap_query_knowledge`: resolves the area, asks each chosen provider
/// concurrently, and records the answers as a new bundle.
pub async fn query_knowledge(state: Arc<ServerState>, args: QueryKnowledgeArgs) -> Result<KnowledgeBundle, ToolError> {
    let limit = limit(args.limit, DEFAULT_LIMIT, MAX_LIMIT)?;
    if let Some((field, expected)) = args.area.as_ref().and_then(area_problem) {
        return Err(ArgumentError { field: field.to_owned(), problem: ArgumentProblem::WrongValue, expected: expected.to_owned() }.into());
    }
    let (source, area) = match (&args.map_id, args.area) {
        (Some(_), Some(_)) => {
            return Err(ArgumentError {
                field: "/area".to_owned(),
                problem: ArgumentProblem::Conflict,
                expected: "either map_id or area, not both".to_owned(),
            }
            .into());
        }
        (Some(map_id), None) => {
            let (revision_id, area) = map_area(&state, map_id.clone()).await?;
            (Some((map_id.clone(), revision_id)), Some(area))
        }
        (None, area) => (None, area),
    };
    let set = state.providers().await;
    let plan = plan(&state, set, args.providers.as_deref(), Kind::Knowledge, &args.provider_options.unwrap_or_default())?;
    let topics = args.topics.unwrap_or_default();
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
            let request = KnowledgeRequest { area, topics: topics.clone(), options: target.options.clone(), limit };
            target.query(set, request)
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
    let (results, warnings) = settle(&state, Kind::Knowledge, answers, failures)?;
    let bundle_id = format!("kb_{}", geomap_model::random_hex(10));
    let (map_id, revision_id) = source.unzip();
    let bundle = KnowledgeBundle {
        resource_uri: bundle_uri(&bundle_id),
        bundle_id,
        created_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        map_id,
        revision_id,
        area,
        topics,
        results,
        warnings,
    };
    let document = serde_json::to_string(&bundle).expect("bundles always serialize");
    let recorded = Arc::clone(&state);
    let (bundle_id, created_at) = (bundle.bundle_id.clone(), bundle.created_at.clone());
    let source = bundle.map_id.clone().zip(bundle.revision_id.clone());
    let written =
        trace::spawn_blocking(move || recorded.registry.add_bundle(&bundle_id, source.as_ref().map(|(m, r)| (m.as_str(), r.as_str())), &created_at, &document))
            .await?;
    if !written {
        let map_id = bundle.map_id.clone().unwrap_or_default();
        return Err(ToolError::MapNotFound { map_id, reason: MapGone::UnknownId, registered_as: None });
    }
    Ok(bundle)
}

/// The newest revision of `map_id` and its WGS84 box.
async fn map_area(state: &Arc<ServerState>, map_id: String) -> Result<(String, Area), ToolError> {
    let state = Arc::clone(state);
    trace::spawn_blocking(move || {
        let record =
            state.registry.map(&map_id)?.ok_or_else(|| ToolError::MapNotFound { map_id: map_id.clone(), reason: MapGone::UnknownId, registered_as: None })?;
        let revision = record.revisions.last().ok_or_else(|| ToolError::GeorefRequired { map_id: map_id.clone() })?;
        Ok((revision.revision_id.clone(), geomap_providers::area_of(&revision.wgs84_bounds)))
    })
    .await
}

/// `resources/read` of `geomap://bundles/{bundle_id}`: the bundle as recorded.
pub async fn read_bundle(state: Arc<ServerState>, bundle_id: String) -> Result<String, ToolError> {
    trace::spawn_blocking(move || {
        state.registry.bundle(&bundle_id)?.ok_or(ToolError::MapNotFound { map_id: bundle_id.clone(), reason: MapGone::UnknownBundle, registered_as: None })
    })
    .await
}
