//! What the use cases that ask providers share: choosing the providers a call
//! goes to, checking their options and assets on the host side first, running
//! them at once, and sorting answers from failures.
//!
//! Invariants: a provider is only called with options that fit its schema and
//! with every asset it declared mounted; anything else is a typed
//! [`ProviderError`] decided before it runs. The providers of one call run at
//! once, each on a blocking-pool thread of its own ([`all_at_once`]), never on
//! an async worker.

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use geomap_model::errors::ErrorCode;
use geomap_model::settings::ProviderLimits;
use geomap_model::trace;
use geomap_providers::{CallError, Entry, Kind, Knowledge, KnowledgeRequest, Loaded, LookupRequest, ProviderError, ProviderSet};

use crate::{App, AppError, ArgumentError, Warning};

/// A provider's failure inside a call that still succeeded, as the result's `warnings` carry it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ProviderWarning {
    /// The provider that failed.
    pub provider: String,
    /// The code the call would have failed with for this provider alone.
    pub code: ErrorCode,
    /// `details.reason` of that failure, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened and what to do, in plain words.
    pub message: String,
}

/// Runs `calls` (one per provider) at once and returns their outcomes in order. A guest computes
/// synchronously inside its future (and its blocking WASI calls block the thread it runs on), so on
/// an async worker the calls of one task would run one after another and hold that worker: each
/// runs on a thread of the blocking pool (which keeps and reuses its threads), in the call's trace
/// scope, while the call awaits them.
pub async fn all_at_once<F>(calls: Vec<F>) -> Vec<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let runtime = tokio::runtime::Handle::current();
    futures::future::join_all(calls.into_iter().map(|call| {
        let runtime = runtime.clone();
        trace::spawn_blocking(move || runtime.block_on(call))
    }))
    .await
}

/// A provider a call goes to, checked and ready to run.
pub struct Target {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The loaded component.
    pub loaded: Arc<Loaded>,
    /// Its limits.
    pub limits: ProviderLimits,
    /// Its assets: (asset id, folder), each mounted read-only.
    pub assets: Vec<(String, PathBuf)>,
    /// Its options (a JSON object).
    pub options: Value,
}

impl Target {
    /// `request` to this provider, as a future that owns what it needs (for [`all_at_once`]).
    pub fn lookup(&self, set: &ProviderSet, request: LookupRequest) -> impl Future<Output = Result<Vec<Entry>, CallError>> + Send + 'static {
        let (loaded, runtime, assets, limits) = (Arc::clone(&self.loaded), Arc::clone(set.runtime()), self.assets.clone(), self.limits);
        async move { loaded.provider.lookup(&runtime, &assets, limits, &request).await }
    }

    /// `request` to this provider, as a future that owns what it needs (for [`all_at_once`]).
    pub fn query(&self, set: &ProviderSet, request: KnowledgeRequest) -> impl Future<Output = Result<Knowledge, CallError>> + Send + 'static {
        let (loaded, runtime, assets, limits) = (Arc::clone(&self.loaded), Arc::clone(set.runtime()), self.assets.clone(), self.limits);
        async move { loaded.provider.query(&runtime, &assets, limits, &request).await }
    }
}

/// The providers a call goes to, and the ones that cannot take it.
pub struct Plan {
    /// Ready to call.
    pub targets: Vec<Target>,
    /// Failed before running.
    pub failures: Vec<ProviderError>,
}

/// The `limit` argument: `default` when absent, else a whole number from 1 to `max`.
pub fn limit(asked: Option<u32>, default: u32, max: u32) -> Result<u32, ArgumentError> {
    let limit = asked.unwrap_or(default);
    match (1..=max).contains(&limit) {
        true => Ok(limit),
        false => Err(ArgumentError::wrong("/limit", format!("a whole number from 1 to {max}"))),
    }
}

impl App {
    /// Chooses the providers for a `kind` request: those in `names`, or every enabled provider that
    /// serves `kind`. `options` maps provider names to their options; naming a provider the call does
    /// not go to is an argument error. Asset states are read from the disk, so the async worker
    /// steps aside while it plans.
    pub fn plan(&self, set: &ProviderSet, names: Option<&[String]>, kind: Kind, options: &Map<String, Value>) -> Result<Plan, AppError> {
        tokio::task::block_in_place(|| self.choose(set, names, kind, options))
    }

    fn choose(&self, set: &ProviderSet, names: Option<&[String]>, kind: Kind, options: &Map<String, Value>) -> Result<Plan, AppError> {
        let names: Vec<String> = match names {
            Some([]) => return Err(ArgumentError::wrong("/providers", "one or more provider names, or no `providers` for every enabled provider").into()),
            Some(names) => names.iter().fold(Vec::new(), |mut unique, name| {
                if !unique.contains(name) {
                    unique.push(name.clone());
                }
                unique
            }),
            None => set.serving(kind).map(|entry| entry.name.clone()).collect(),
        };
        for (name, value) in options {
            let field = format!("/provider_options/{name}");
            if !names.contains(name) {
                let going_to = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
                return Err(ArgumentError::conflict(&field, format!("options only for providers this call goes to ({going_to})")).into());
            }
            if !value.is_object() {
                return Err(ArgumentError::wrong(&field, "an object of that provider's options").into());
            }
        }
        if names.is_empty() {
            return Ok(Plan { targets: Vec::new(), failures: vec![ProviderError::NoneAvailable { kind }] });
        }
        let mut plan = Plan { targets: Vec::new(), failures: Vec::new() };
        for name in names {
            match self.target(set, &name, kind, options.get(&name).cloned().unwrap_or_else(|| Value::Object(Map::new()))) {
                Ok(target) => plan.targets.push(target),
                Err(error) => plan.failures.push(error),
            }
        }
        Ok(plan)
    }

    /// One provider, checked: it exists, is enabled and loaded, serves `kind`, takes `options`, and has its assets.
    fn target(&self, set: &ProviderSet, name: &str, kind: Kind, options: Value) -> Result<Target, ProviderError> {
        let (entry, loaded) = set.resolve(name, kind)?;
        loaded.check_options(name, &options)?;
        let descriptor = loaded.provider.descriptor();
        let (mounted, missing) = self.asset_folders(&descriptor.assets);
        if !missing.is_empty() {
            return Err(ProviderError::MissingAssets { name: name.to_owned(), assets: missing });
        }
        Ok(Target { name: name.to_owned(), version: descriptor.version.clone(), loaded, limits: entry.limits, assets: mounted, options })
    }

    /// The folders of the assets `ids` that can be used now (installed, or the operator's own), and
    /// the ids of those that cannot.
    pub fn asset_folders(&self, ids: &[String]) -> (Vec<(String, PathBuf)>, Vec<String>) {
        let mut usable = Vec::new();
        let mut missing = Vec::new();
        for id in ids {
            match self.catalog.get(id).map(|asset| geomap_assets::status(asset, &self.settings.data_root)) {
                Some(status) if status.state.usable() => usable.push((id.clone(), status.path)),
                _ => missing.push(id.clone()),
            }
        }
        (usable, missing)
    }

    /// The answers, or — when no provider answered — the most actionable failure. Failures beside
    /// answers become warnings.
    pub fn settle<T>(&self, kind: Kind, answers: Vec<T>, mut failures: Vec<ProviderError>) -> Result<(Vec<T>, Vec<ProviderWarning>), AppError> {
        if answers.is_empty() {
            failures.sort_by_key(ProviderError::actionability);
            let first = failures.into_iter().next().unwrap_or(ProviderError::NoneAvailable { kind });
            return Err(first.into());
        }
        let warnings = failures.iter().map(|error| self.provider_warning(error, kind.tool())).collect();
        Ok((answers, warnings))
    }

    /// The warning for `error` in a call to `tool` that succeeded through other providers.
    pub fn provider_warning(&self, error: &ProviderError, tool: &str) -> ProviderWarning {
        let Warning { about, code, reason, message } = self.warning(&AppError::Provider(error.clone()), error.provider(), tool);
        ProviderWarning { provider: about, code, reason, message }
    }
}
