//! `geomap_capabilities`: what the server can do right now.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use geomap_assets::{AssetKind, AssetOrigin, AssetState};
use geomap_georef::Readiness;
use geomap_model::errors::ErrorCode;
use geomap_model::trace;
use geomap_store::media::MediaType;
use geomap_store::registry::RegistryError;

use super::ToolName;
use crate::mcp::ServerState;
use geomap_providers::{Kind, LoadFailure, LoadState, Origin};

use super::provider_calls::asset_folders;

/// Why no provider of `kind` can answer now, or `None` when one can.
fn providers_ready(providers: &[ProviderInfo], kind: Kind) -> Option<(ErrorCode, &'static str)> {
    let serving: Vec<&ProviderInfo> = providers.iter().filter(|p| p.enabled && p.kinds.contains(&kind)).collect();
    if serving.iter().any(|p| p.ready) {
        None
    } else if serving.is_empty() {
        Some((ErrorCode::UnknownProvider, "no enabled provider serves it (see providers)"))
    } else {
        Some((ErrorCode::MissingKnowledgeAsset, "its providers' knowledge assets are not installed (see providers[].missing_assets; geomap_prepare_knowledge)"))
    }
}

/// `geomap_capabilities` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilitiesArgs {}
/// Name and version of this server.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ServerIdentity {
    /// `stratigraphic-amenity`.
    pub name: String,
    /// The release version.
    pub version: String,
}

/// Whether one tool can succeed right now.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolReadiness {
    /// The tool's name.
    pub name: String,
    /// True when nothing in the server's set-up stops the tool.
    pub ready: bool,
    /// The code the tool would fail with while not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_code: Option<ErrorCode>,
    /// Why it is not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One allowed map root.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MapRootInfo {
    /// Position in the list (`source.root_index` refers to it).
    pub index: usize,
    /// The folder, as the operator configured it.
    pub path: String,
    /// True for the root that relative paths resolve against.
    pub resolves_relative_paths: bool,
}

/// The media this server takes.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MediaInfo {
    /// Supported types (sniffed from the bytes, not the extension).
    pub supported: Vec<MediaType>,
    /// Largest file accepted (GEOMAP_MAX_IMAGE_BYTES).
    pub max_image_bytes: u64,
    /// Largest image accepted, width × height (GEOMAP_MAX_IMAGE_PIXELS); map bundles carry no pixels and are exempt.
    pub max_image_pixels: u64,
    /// The JSON Schema of `geomap-map-bundle/v1`: a layout made elsewhere, registered in place of a scan.
    pub map_bundle_schema: serde_json::Value,
}

/// The data root's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DataRootState {
    /// Registry readable and writable.
    Ready,
    /// The registry file cannot be read; the operator must move it aside.
    RegistryCorrupt,
    /// The server cannot write to the data root.
    Unwritable,
}

/// Facts about the data root.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DataRootInfo {
    /// The folder (GEOMAP_DATA_ROOT).
    pub path: String,
    /// Whether the registry can be used.
    pub state: DataRootState,
    /// Maps in the registry, when it is readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered_maps: Option<u64>,
    /// Revisions (georeferences) of all maps, when the registry is readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revisions: Option<u64>,
    /// Knowledge bundles (geomap_query_knowledge results), when the registry is readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knowledge_bundles: Option<u64>,
}

/// One asset (approved or declared by the operator) as found now.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AssetInfo {
    /// Its ID.
    pub id: String,
    /// What it is.
    pub title: String,
    /// What it is for.
    pub kind: AssetKind,
    /// Approved (in this server's catalog), or declared by the operator in the config file.
    pub origin: AssetOrigin,
    /// Installed, missing, custom (the operator's own copy) or corrupt.
    pub state: AssetState,
    /// Its size in bytes (what preparing it downloads).
    pub bytes: u64,
    /// Its licence.
    pub licence: String,
    /// The attribution its licence asks for.
    pub attribution: String,
    /// Why it is corrupt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A provider's limits.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProviderLimitsInfo {
    /// Wall-clock milliseconds a call may take.
    pub deadline_ms: u64,
    /// Memory a call may grow to.
    pub memory_bytes: u64,
    /// Bytes of text a call may return.
    pub output_bytes: u64,
}

/// One provider found by the server.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProviderInfo {
    /// Its name: what `providers` and `provider_options` take.
    pub name: String,
    /// Its version, when it loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What it does, when it loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Built with this server, or from the operator's provider roots.
    pub origin: Origin,
    /// The requests it serves: lookup (geomap_lookup), knowledge (geomap_query_knowledge).
    pub kinds: Vec<Kind>,
    /// Whether its knowledge queries need an area.
    pub needs_area: bool,
    /// Whether the operator enabled it (GEOMAP_PROVIDERS).
    pub enabled: bool,
    /// Enabled, loaded, and every asset it reads installed.
    pub ready: bool,
    /// The knowledge assets it reads.
    pub assets: Vec<String>,
    /// Those not installed yet (geomap_prepare_knowledge installs them).
    pub missing_assets: Vec<String>,
    /// Why it cannot be loaded, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The JSON Schema of its `provider_options`, when it loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options_schema: Option<serde_json::Value>,
    /// Its limits.
    pub limits: ProviderLimitsInfo,
}

/// Georeferencing: whether GDAL and PROJ are ready, and how images are written (the operator's settings).
#[derive(Debug, Serialize, JsonSchema)]
pub struct GeoreferenceInfo {
    /// GDAL and PROJ as found now.
    #[serde(flatten)]
    pub readiness: Readiness,
    /// The image format: a Cloud Optimized GeoTIFF with internal overviews.
    pub format: String,
    /// How images are compressed (`GEOMAP_GEOREF_COMPRESSION`).
    pub compression: geomap_georef::Compression,
    /// Threads one georeference uses (`GEOMAP_WORKER_THREADS`).
    pub worker_threads: usize,
    /// The most one georeference's warp buffers, and GDAL's block cache, may each take (`GEOMAP_GEOREF_MEMORY`).
    pub memory_ceiling_bytes: u64,
}

/// Whether layout detection can run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DetectorInfo {
    /// True when geomap_process_image can run.
    pub ready: bool,
    /// What is outstanding (assets, system libraries, weights that do not fit).
    pub missing_requirements: Vec<String>,
}

/// Which preparation tools the operator offers over MCP.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PreparationInfo {
    /// `geomap_prepare_knowledge` is offered (GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION).
    pub knowledge: bool,
    /// `geomap_prepare_detectors` is offered (GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION).
    pub detectors: bool,
}

/// The result of `geomap_capabilities`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CapabilitiesResult {
    /// Which server this is.
    pub server: ServerIdentity,
    /// Every offered tool and whether it is ready.
    pub tools: Vec<ToolReadiness>,
    /// Folders maps may be registered from, in order.
    pub map_roots: Vec<MapRootInfo>,
    /// Media types and limits.
    pub media: MediaInfo,
    /// The data root.
    pub data_root: DataRootInfo,
    /// GDAL and PROJ as found now, and how georeferenced images are written.
    pub georeference: GeoreferenceInfo,
    /// Every asset, approved or declared by the operator, and its state as found now.
    pub assets: Vec<AssetInfo>,
    /// Every provider found, enabled or not.
    pub providers: Vec<ProviderInfo>,
    /// Layout detection's readiness.
    pub detectors: DetectorInfo,
    /// Whether the preparation tools are offered over MCP (the operator's settings).
    pub preparation: PreparationInfo,
    /// Set-up problems worth telling the user about.
    pub warnings: Vec<String>,
}

/// How long an answer stands for changes made outside this server's own calls that its inputs do
/// not show (an operator's own asset copy edited, the data root's permissions changed).
const FRESH_FOR: Duration = Duration::from_secs(1);

/// The last answer of `geomap_capabilities`, kept until what it was computed from changes.
///
/// Invariant: an answer is reused only while its [`Inputs`] are unchanged and it is younger than
/// [`FRESH_FOR`]: every call of this server that may write bumps `ServerState::changes`, the assets
/// command's installs move the assets folder's modification time, and every SQLite registry commit
/// (from any process) moves its files' times and sizes. A PostgreSQL registry has no files: other
/// replicas' commits show once the answer is [`FRESH_FOR`] old.
#[derive(Debug, Default)]
pub struct Answers(Mutex<Option<Answered>>);

#[derive(Debug)]
struct Answered {
    inputs: Inputs,
    at: Instant,
    answer: Arc<Answer>,
}

/// An answer as the call returns it: the structured content and its text block.
#[derive(Debug)]
pub struct Answer {
    /// The result as JSON.
    pub structured: Value,
    /// The same as compact JSON (whitespace costs an agent tokens and the transport bytes).
    pub text: String,
}

/// What an answer depends on that can change while the server runs, read cheaply (three `stat`s).
#[derive(Debug, PartialEq)]
struct Inputs {
    changes: u64,
    assets: Option<SystemTime>,
    registry: [Option<(SystemTime, u64)>; 2],
}

impl Inputs {
    fn now(state: &ServerState) -> Inputs {
        let data_root = &state.settings.data_root;
        let stamp = |path: &std::path::Path| std::fs::metadata(path).ok().and_then(|metadata| Some((metadata.modified().ok()?, metadata.len())));
        let database = data_root.join(geomap_store::registry::DATABASE_FILE);
        Inputs {
            changes: state.changes.load(Ordering::Acquire),
            assets: stamp(&data_root.join(geomap_model::data_root::ASSETS_DIR)).map(|(modified, _)| modified),
            registry: [stamp(&database), stamp(&database.with_extension("sqlite-wal"))],
        }
    }
}

/// `geomap_capabilities`: counts, never lists that grow with the archive. Computed again only when
/// its inputs moved (see [`Answers`]); the stat of its inputs runs on the async thread (three
/// metadata reads), the computation on the blocking pool.
pub async fn capabilities(state: Arc<ServerState>) -> Arc<Answer> {
    state.providers().await;
    let inputs = Inputs::now(&state);
    if let Some(kept) = state.answers.0.lock().expect("never poisoned").as_ref().filter(|kept| kept.inputs == inputs && kept.at.elapsed() < FRESH_FOR) {
        return Arc::clone(&kept.answer);
    }
    let computing = Arc::clone(&state);
    let answer = trace::spawn_blocking(move || {
        let structured = serde_json::to_value(capabilities_now(&computing)).expect("capabilities serialize");
        let text = serde_json::to_string(&structured).expect("JSON values always serialize");
        Arc::new(Answer { structured, text })
    })
    .await;
    *state.answers.0.lock().expect("never poisoned") = Some(Answered { inputs, at: Instant::now(), answer: Arc::clone(&answer) });
    answer
}

/// Every provider the server found, as it stands now (assets are read from the disk).
pub fn provider_infos(state: &ServerState) -> Vec<ProviderInfo> {
    let Some(set) = state.loaded_providers() else { return Vec::new() };
    set.entries()
        .iter()
        .map(|entry| {
            let descriptor = entry.descriptor();
            let assets = descriptor.map(|d| d.assets.clone()).unwrap_or_default();
            let (_, missing_assets) = asset_folders(state, &assets);
            let problem = match &entry.state {
                LoadState::Failed(LoadFailure::Incompatible(detail)) => Some(format!("incompatible: {detail}")),
                LoadState::Failed(LoadFailure::Runtime { failure, .. }) => Some(format!("failed while describing itself ({})", failure.as_str())),
                LoadState::NotEnabled | LoadState::Loaded(_) => None,
            };
            ProviderInfo {
                name: entry.name.clone(),
                version: descriptor.map(|d| d.version.clone()),
                description: descriptor.map(|d| d.description.clone()),
                origin: entry.origin,
                kinds: [Kind::Lookup, Kind::Knowledge].into_iter().filter(|kind| entry.serves(*kind)).collect(),
                needs_area: descriptor.is_some_and(|d| d.needs_area),
                enabled: entry.enabled(),
                ready: descriptor.is_some() && missing_assets.is_empty(),
                assets,
                missing_assets,
                problem,
                options_schema: descriptor.map(|d| d.options_schema.clone()),
                limits: ProviderLimitsInfo {
                    deadline_ms: entry.limits.deadline.as_millis() as u64,
                    memory_bytes: entry.limits.memory_bytes as u64,
                    output_bytes: entry.limits.output_bytes as u64,
                },
            }
        })
        .collect()
}

/// The map bundle's JSON Schema: the same for the server's life, so generated once.
static MAP_BUNDLE_SCHEMA: std::sync::LazyLock<serde_json::Value> =
    std::sync::LazyLock::new(|| serde_json::to_value(schemars::schema_for!(geomap_store::media::bundle::MapBundle)).expect("schemas serialize"));

fn capabilities_now(state: &ServerState) -> CapabilitiesResult {
    let providers = provider_infos(state);
    let (missing, _) = geomap_vision::models::outstanding(&state.catalog, &state.settings.data_root, &geomap_vision::detect::REQUIREMENTS);
    let detectors = DetectorInfo { ready: missing.is_empty(), missing_requirements: missing.iter().map(geomap_vision::models::Missing::describe).collect() };
    let reading = geomap_vision::models::outstanding(&state.catalog, &state.settings.data_root, &geomap_vision::ocr::REQUIREMENTS).0.is_empty();
    let settings = &state.settings;
    let (data_state, counts) = match state.registry.counts() {
        Ok(counts) => match state.registry.check_writable() {
            Ok(()) => (DataRootState::Ready, Some(counts)),
            Err(_) => (DataRootState::Unwritable, Some(counts)),
        },
        Err(RegistryError::Corrupt { .. }) => (DataRootState::RegistryCorrupt, None),
        Err(RegistryError::Io { .. } | RegistryError::Database { .. } | RegistryError::NotEmpty { .. } | RegistryError::Settings { .. }) => {
            (DataRootState::Unwritable, None)
        }
    };
    let georeference = GeoreferenceInfo {
        readiness: Readiness::check_for(settings.georef_compression),
        format: "COG".to_owned(),
        compression: settings.georef_compression,
        worker_threads: settings.worker_threads,
        memory_ceiling_bytes: settings.georef_memory,
    };
    let blocked = |writes: bool| match data_state {
        DataRootState::RegistryCorrupt => Some((ErrorCode::RegistryCorrupt, "the registry file cannot be read; the operator must move it aside")),
        DataRootState::Unwritable if writes => Some((ErrorCode::InternalError, "the server cannot write to its data root")),
        _ => None,
    };
    let tools = state
        .inventory
        .specs()
        .iter()
        .map(|spec| {
            let block = match spec.name {
                ToolName::Capabilities => None,
                ToolName::RegisterMap => blocked(true),
                ToolName::DescribeMap => blocked(false),
                ToolName::PrepareKnowledge | ToolName::PrepareDetectors => blocked(true),
                ToolName::ProcessImage => match detectors.ready || reading {
                    true => blocked(true),
                    false => {
                        Some((ErrorCode::MissingExtra, "neither the OCR models (the ONNX Runtime and asset ppocr-v4) nor PEACE's detectors are installed"))
                    }
                },
                ToolName::UnitAt => blocked(false),
                ToolName::ExtractUnits => match georeference.readiness.missing.is_empty() {
                    true => blocked(true),
                    false => Some((ErrorCode::MissingSystemDependency, "GDAL lacks what writing the units' layers needs (see georeference.missing)")),
                },
                ToolName::ReadText => match reading {
                    true => blocked(true),
                    false => Some((ErrorCode::MissingExtra, "the ONNX Runtime or the OCR models (asset ppocr-v4) are not installed")),
                },
                ToolName::Lookup => providers_ready(&providers, Kind::Lookup).or(blocked(false)),
                ToolName::QueryKnowledge => providers_ready(&providers, Kind::Knowledge).or(blocked(true)),
                ToolName::Georeference => match georeference.readiness.missing.is_empty() {
                    true => blocked(true),
                    false => Some((ErrorCode::MissingSystemDependency, "GDAL or PROJ lacks what georeferencing needs (see georeference.missing)")),
                },
            };
            ToolReadiness {
                name: spec.name.as_str().to_owned(),
                ready: block.is_none(),
                unavailable_code: block.map(|(code, _)| code),
                reason: block.map(|(_, reason)| reason.to_owned()),
            }
        })
        .collect();
    let mut warnings = Vec::new();
    if let Some(set) = state.loaded_providers() {
        warnings.extend(set.enabled_but_absent.iter().map(|name| format!("GEOMAP_PROVIDERS enables {name}, but no provider of that name was found.")));
        warnings.extend(set.problems.iter().cloned());
    }
    if !georeference.readiness.missing.is_empty() {
        warnings.push(format!("Georeferencing is unavailable until the operator installs: {}.", georeference.readiness.missing.join(", ")));
    }
    if data_state != DataRootState::Ready {
        warnings.push("The data root is not ready: registering maps will fail until the operator fixes it (see data_root.state).".to_owned());
    }
    CapabilitiesResult {
        server: ServerIdentity { name: crate::mcp::SERVER_NAME.to_owned(), version: crate::mcp::SERVER_VERSION.to_owned() },
        tools,
        map_roots: state
            .roots
            .configured()
            .enumerate()
            .map(|(index, path)| MapRootInfo { index, path: path.display().to_string(), resolves_relative_paths: index == 0 })
            .collect(),
        media: MediaInfo {
            supported: MediaType::SUPPORTED.to_vec(),
            max_image_bytes: settings.max_image_bytes,
            max_image_pixels: settings.max_image_pixels,
            map_bundle_schema: MAP_BUNDLE_SCHEMA.clone(),
        },
        data_root: DataRootInfo {
            path: settings.data_root.display().to_string(),
            state: data_state,
            registered_maps: counts.map(|counts| counts.maps),
            revisions: counts.map(|counts| counts.revisions),
            knowledge_bundles: counts.map(|counts| counts.bundles),
        },
        georeference,
        assets: state
            .catalog
            .assets()
            .iter()
            .map(|asset| {
                let found = geomap_assets::status(asset, &settings.data_root);
                AssetInfo {
                    id: asset.id.clone(),
                    title: asset.title.clone(),
                    kind: asset.kind,
                    origin: asset.origin,
                    state: found.state,
                    bytes: asset.size(),
                    licence: asset.licence.clone(),
                    attribution: asset.attribution.clone(),
                    problem: found.problem,
                }
            })
            .collect(),
        providers,
        detectors,
        preparation: PreparationInfo { knowledge: settings.knowledge_preparation, detectors: settings.detector_preparation },
        warnings,
    }
}
