//! Provider failures: `unknown_provider` (with `details.reason`, and
//! `details.failure` for a runtime failure) and `missing_knowledge_asset`
//! (hints from the preparation setting in force); plus `georef_required`,
//! which only knowledge queries raise.

use serde_json::{Value, json};

use geomap_app::preparation::KNOWLEDGE_TOOL;
use geomap_model::errors::{Cause, ErrorCode, NextCall};
use geomap_providers::{Kind, ProviderError, RuntimeFailure};

use geomap_model::errors::failure::{FailedCall, Parts, parts};

/// Why a knowledge query has no area: the map has no georeference yet.
pub(super) fn describe_georef_required(map_id: &str) -> Parts {
    let next = format!(
        "Call geomap_georeference for map {map_id} first (bounds or control points), then call geomap_query_knowledge again with the same map_id; or pass an area instead of map_id."
    );
    parts(
        ErrorCode::GeorefRequired,
        format!("Map {map_id} has no georeference yet, so it has no area to ask about. {next}"),
        json!({ "map_id": map_id }),
        vec![next],
    )
}

pub(super) fn describe_provider(error: &ProviderError, call: &FailedCall<'_>) -> Parts {
    let unknown = |reason: &str, message: String, mut details: Value| {
        details["reason"] = json!(reason);
        parts(ErrorCode::UnknownProvider, message, details, Vec::new())
    };
    let operator = || {
        format!("The operator is usually the one to fix this: pass them trace_id {} (their log has the details); meanwhile use other providers.", call.trace_id)
    };
    match error {
        ProviderError::NotFound { name, close } => {
            let suggestion = match close.as_slice() {
                [] => "geomap_capabilities lists the providers this server has.".to_owned(),
                close => format!("Did you mean {}? geomap_capabilities lists every provider.", close.join(" or ")),
            };
            unknown(
                "not_found",
                format!("No provider is called {name:?} on this server. {suggestion} Call {} again with a listed name.", call.tool),
                json!({ "provider": name, "suggestions": close }),
            )
        }
        ProviderError::NoneAvailable { kind } => {
            let what = match kind {
                Kind::Lookup => "looks terms up",
                Kind::Knowledge => "answers knowledge queries",
            };
            unknown(
                "not_found",
                format!(
                    "No enabled provider on this server {what}, so {} cannot answer. geomap_capabilities lists the providers and whether they are enabled; the operator enables them with GEOMAP_PROVIDERS.",
                    kind.tool()
                ),
                json!({ "provider": null, "kind": kind }),
            )
        }
        ProviderError::NotEnabled { name } => unknown(
            "not_enabled",
            format!(
                "Provider {name} is installed on this server but the operator has not enabled it (GEOMAP_PROVIDERS), so it cannot be called. Use an enabled provider (geomap_capabilities lists them), or ask the operator to enable {name}."
            ),
            json!({ "provider": name }),
        ),
        ProviderError::CannotServe { name, detail } => unknown(
            "cannot_serve",
            format!(
                "Provider {name} cannot serve this request: {detail}. Call it with a request it serves, or use another provider (geomap_capabilities says which kinds each serves)."
            ),
            json!({ "provider": name }),
        ),
        ProviderError::InvalidOptions { name, field, message } => {
            let pointer = format!("/provider_options/{name}{}", if field == "/" { "" } else { field });
            unknown(
                "invalid_options",
                format!(
                    "provider_options for {name} do not fit its options schema at {field}: {message}. Fix {pointer} (geomap_capabilities shows each provider's options schema) and call {} again.",
                    call.tool
                ),
                json!({ "provider": name, "field": pointer, "option": field }),
            )
        }
        ProviderError::Incompatible { name, detail } => {
            unknown("incompatible", format!("Provider {name} cannot be loaded by this server: {detail}. {}", operator()), json!({ "provider": name }))
        }
        ProviderError::Runtime { name, failure, detail } => {
            let detail = detail.split_whitespace().collect::<Vec<_>>().join(" "); // one log line, however the guest wrote it
            tracing::warn!(target: "providers", "trace_id={} provider {name} failed ({}): {detail}", call.trace_id, failure.as_str());
            let what = match failure {
                RuntimeFailure::Timeout => "ran past its deadline and was stopped",
                RuntimeFailure::MemoryLimit => "tried to use more memory than its limit and was stopped",
                RuntimeFailure::OutputTooLarge => "returned more than its output limit",
                RuntimeFailure::Trap => "crashed (it trapped)",
                RuntimeFailure::Mount => "could not be given its knowledge assets (the server could not open an asset folder), so it never ran",
            };
            unknown(
                "runtime_failure",
                format!("Provider {name} {what}; the server is fine and other providers still work. {}", operator()),
                json!({ "provider": name, "failure": failure.as_str() }),
            )
        }
        ProviderError::Failed { name, message } => {
            tracing::warn!(target: "providers", "trace_id={} provider {name} failed: {message}", call.trace_id);
            unknown("runtime_failure", format!("Provider {name} could not answer: {message}. {}", operator()), json!({ "provider": name, "failure": "failed" }))
        }
        ProviderError::MissingAssets { name, assets } => missing_assets(name, assets, call),
    }
}

/// `missing_knowledge_asset`: what to install, and who can install it under this server's settings.
fn missing_assets(name: &str, assets: &[String], call: &FailedCall<'_>) -> Parts {
    let settings = call.settings;
    let catalog = geomap_assets::Catalog::for_settings(settings).unwrap_or_else(|_| geomap_assets::Catalog::approved());
    let bytes: u64 = assets.iter().filter_map(|id| catalog.get(id)).map(|asset| asset.download_size()).sum();
    let unknown: Vec<&str> = assets.iter().filter(|id| catalog.get(id).is_none()).map(String::as_str).collect();
    let ids = assets.join(", ");
    let quoted: Vec<String> = assets.iter().map(|id| format!("\"{id}\"")).collect();
    let mut hints = Vec::new();
    if !unknown.is_empty() {
        let first = unknown[0];
        hints.push(format!(
            "{} is neither an approved asset nor declared by the operator, so this server cannot install it. Ask the operator to declare it in the config file (GEOMAP_CONFIG): `[assets.{first}]` with `path = \"<their folder>\"`, or with its files pinned under `[assets.{first}.sources.\"<file>\"]` (url, size, sha256), then restart the server; a declared source is installed like any asset (geomap_prepare_knowledge after the user agrees).",
            unknown.join(", ")
        ));
    } else if settings.knowledge_preparation {
        hints.push(format!(
            "Ask the user whether to download {ids} ({:.1} MB); after they agree, call {KNOWLEDGE_TOOL} with {{\"assets\": [{}]}}, then call {} again.",
            bytes as f64 / 1e6,
            quoted.join(", "),
            call.tool
        ));
    } else {
        hints.push(format!(
            "Ask the operator to run `stratigraphic-amenity-assets {} --root \"{}\"` in the server's environment, then call {} again.",
            assets.join(" "),
            settings.data_root.display(),
            call.tool
        ));
    }
    hints.push(
        "Do not run installer commands in your own shell: it is a different environment from the server's, its PATH may lack the command, and anything it installs lands in the wrong data root."
            .to_owned(),
    );
    // The first hint's download, exactly, when a tool here can make it.
    let next_call = (unknown.is_empty() && settings.knowledge_preparation).then(|| NextCall::new(KNOWLEDGE_TOOL, json!({ "assets": assets }), true));
    Parts {
        cause: Some(Cause::AssetNotInstalled),
        next_call,
        ..parts(
            ErrorCode::MissingKnowledgeAsset,
            format!("Provider {name} needs knowledge asset {ids}, which is not installed. {}", hints[0]),
            json!({ "provider": name, "missing_assets": assets, "download_bytes": bytes }),
            hints,
        )
    }
}
