//! `geomap_lookup`: a term looked up by lookup providers (time scale,
//! lithology, rock names), each answer tagged with its provider.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::ServerState;
use crate::mcp::adapter::{ProviderWarning, ToolError};
use crate::mcp::arguments::{ArgumentError, ArgumentProblem};
use geomap_providers::{CallError, Kind, LookupRequest, ProviderError, ProviderFailure};

use super::provider_calls::{all_at_once, limit, plan, settle};

/// Most entries a provider returns when `limit` is not given.
pub const DEFAULT_LIMIT: u32 = 5;
/// The largest `limit` accepted.
pub const MAX_LIMIT: u32 = 50;

/// Arguments of `geomap_lookup`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LookupArgs {
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
#[derive(Debug, Serialize, JsonSchema)]
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
#[derive(Debug, Serialize, JsonSchema)]
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
#[derive(Debug, Serialize, JsonSchema)]
pub struct LookupResult {
    /// The term as asked.
    pub term: String,
    /// One answer per provider that answered.
    pub results: Vec<ProviderEntries>,
    /// Providers that failed while others answered (provider, code, reason, message).
    pub warnings: Vec<ProviderWarning>,
}

/// `geomap_lookup`: asks each chosen provider, concurrently; a provider that
/// finds nothing answers with close matches, one that fails becomes a warning.
pub async fn lookup(state: Arc<ServerState>, args: LookupArgs) -> Result<LookupResult, ToolError> {
    if args.term.trim().is_empty() {
        return Err(ArgumentError { field: "/term".to_owned(), problem: ArgumentProblem::WrongValue, expected: "a non-empty term".to_owned() }.into());
    }
    let limit = limit(args.limit, DEFAULT_LIMIT, MAX_LIMIT)?;
    let set = state.providers().await;
    let plan = plan(&state, set, args.providers.as_deref(), Kind::Lookup, &args.provider_options.unwrap_or_default())?;
    let calls: Vec<_> = plan
        .targets
        .iter()
        .map(|target| {
            let request = LookupRequest { term: args.term.clone(), options: target.options.clone(), limit, language: args.language.clone() };
            target.lookup(set, request)
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
    let (results, warnings) = settle(&state, Kind::Lookup, answers, failures)?;
    Ok(LookupResult { term: args.term, results, warnings })
}
