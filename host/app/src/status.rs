//! What the server can do right now, as `geomap_capabilities` reports it
//! (everything but the tool list, which is the edge's): the allowed roots, the
//! media limits, the data root's state, GDAL and PROJ, every asset and
//! provider, the detectors' and the reader's readiness.
//!
//! Invariants: counts, never lists that grow with the archive; asset states
//! are read from the disk at every call, so a running server sees what the
//! assets command installed; providers appear once a call has loaded them.

use schemars::JsonSchema;
use serde::Serialize;

use geomap_assets::{AssetKind, AssetOrigin, AssetState};
use geomap_georef::Readiness;
use geomap_providers::{Kind, LoadFailure, LoadState, Origin};
use geomap_store::media::MediaType;
use geomap_store::registry::RegistryError;
use geomap_vision::models::{self, Missing};
use geomap_vision::{detect, ocr};

use crate::App;

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

/// What the server can do right now (all `geomap_capabilities` says but its tools).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Status {
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
    /// Whether the OCR models (and the runtime) are installed, so words can be read.
    #[serde(skip)]
    pub reading: bool,
}

impl Status {
    /// Why no provider of `kind` can answer now (its would-be error code and a reason), or `None` when one can.
    pub fn providers_ready(&self, kind: Kind) -> Option<(geomap_model::errors::ErrorCode, &'static str)> {
        use geomap_model::errors::ErrorCode;
        let serving: Vec<&ProviderInfo> = self.providers.iter().filter(|p| p.enabled && p.kinds.contains(&kind)).collect();
        if serving.iter().any(|p| p.ready) {
            None
        } else if serving.is_empty() {
            Some((ErrorCode::UnknownProvider, "no enabled provider serves it (see providers)"))
        } else {
            Some((
                ErrorCode::MissingKnowledgeAsset,
                "its providers' knowledge assets are not installed (see providers[].missing_assets; geomap_prepare_knowledge)",
            ))
        }
    }
}

/// The map bundle's JSON Schema: the same for the server's life, so generated once.
static MAP_BUNDLE_SCHEMA: std::sync::LazyLock<serde_json::Value> =
    std::sync::LazyLock::new(|| serde_json::to_value(schemars::schema_for!(geomap_store::media::bundle::MapBundle)).expect("schemas serialize"));

impl App {
    /// What the server can do right now (blocking: it reads asset manifests, the registry's counts
    /// and GDAL's drivers).
    pub fn status(&self) -> Status {
        let providers = self.provider_infos();
        let (catalog, settings) = (&self.catalog, &self.settings);
        let (missing, _) = models::outstanding(catalog, &settings.data_root, &detect::REQUIREMENTS);
        let detectors = DetectorInfo { ready: missing.is_empty(), missing_requirements: missing.iter().map(Missing::describe).collect() };
        let reading = models::outstanding(catalog, &settings.data_root, ocr::requirements(settings.ocr_models)).0.is_empty();
        let (data_state, counts) = match self.registry.counts() {
            Ok(counts) => match self.registry.check_writable() {
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
        let mut warnings = Vec::new();
        if let Some(set) = self.loaded_providers() {
            warnings.extend(set.enabled_but_absent.iter().map(|name| format!("GEOMAP_PROVIDERS enables {name}, but no provider of that name was found.")));
            warnings.extend(set.problems.iter().cloned());
        }
        if !georeference.readiness.missing.is_empty() {
            warnings.push(format!("Georeferencing is unavailable until the operator installs: {}.", georeference.readiness.missing.join(", ")));
        }
        if data_state != DataRootState::Ready {
            warnings.push("The data root is not ready: registering maps will fail until the operator fixes it (see data_root.state).".to_owned());
        }
        Status {
            map_roots: self
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
            assets: catalog
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
            reading,
        }
    }

    /// Every provider the server found, as it stands now (assets are read from the disk).
    fn provider_infos(&self) -> Vec<ProviderInfo> {
        let Some(set) = self.loaded_providers() else { return Vec::new() };
        set.entries()
            .iter()
            .map(|entry| {
                let descriptor = entry.descriptor();
                let assets = descriptor.map(|d| d.assets.clone()).unwrap_or_default();
                let (_, missing_assets) = self.asset_folders(&assets);
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
}
