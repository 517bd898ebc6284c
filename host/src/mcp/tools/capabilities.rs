//! `geomap_capabilities`: what the server can do right now.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::assets::{self, AssetKind, AssetState};
use crate::errors::ErrorCode;
use crate::georef::Readiness;
use crate::media::MediaType;
use crate::registry::RegistryError;
use crate::trace;

use crate::mcp::ServerState;
use crate::mcp::inventory::ToolName;

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
    /// Largest image accepted, width × height (GEOMAP_MAX_IMAGE_PIXELS).
    pub max_image_pixels: u64,
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
}

/// One approved asset as found now.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AssetInfo {
    /// Its ID.
    pub id: String,
    /// What it is.
    pub title: String,
    /// What it is for.
    pub kind: AssetKind,
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
    /// GDAL and PROJ as found now.
    pub georeference: Readiness,
    /// Every approved asset and its state as found now.
    pub assets: Vec<AssetInfo>,
    /// Whether the preparation tools are offered over MCP (the operator's settings).
    pub preparation: PreparationInfo,
    /// Set-up problems worth telling the user about.
    pub warnings: Vec<String>,
}

/// `geomap_capabilities`: counts, never lists that grow with the archive.
pub async fn capabilities(state: Arc<ServerState>) -> CapabilitiesResult {
    trace::spawn_blocking(move || capabilities_now(&state)).await
}

fn capabilities_now(state: &ServerState) -> CapabilitiesResult {
    let settings = &state.settings;
    let (data_state, counts) = match state.registry.counts() {
        Ok(counts) => match state.registry.check_writable() {
            Ok(()) => (DataRootState::Ready, Some(counts)),
            Err(_) => (DataRootState::Unwritable, Some(counts)),
        },
        Err(RegistryError::Corrupt { .. }) => (DataRootState::RegistryCorrupt, None),
        Err(RegistryError::Io { .. } | RegistryError::Database { .. } | RegistryError::NotEmpty { .. }) => (DataRootState::Unwritable, None),
    };
    let georeference = Readiness::check();
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
                ToolName::PrepareKnowledge => blocked(true),
                ToolName::Georeference => match georeference.missing.is_empty() {
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
    if !georeference.missing.is_empty() {
        warnings.push(format!("Georeferencing is unavailable until the operator installs: {}.", georeference.missing.join(", ")));
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
        media: MediaInfo { supported: MediaType::SUPPORTED.to_vec(), max_image_bytes: settings.max_image_bytes, max_image_pixels: settings.max_image_pixels },
        data_root: DataRootInfo {
            path: settings.data_root.display().to_string(),
            state: data_state,
            registered_maps: counts.map(|counts| counts.maps),
            revisions: counts.map(|counts| counts.revisions),
        },
        georeference,
        assets: state
            .catalog
            .assets()
            .iter()
            .map(|asset| {
                let found = assets::status(asset, &settings.data_root);
                AssetInfo {
                    id: asset.id.clone(),
                    title: asset.title.clone(),
                    kind: asset.kind,
                    state: found.state,
                    bytes: asset.size(),
                    licence: asset.licence.clone(),
                    attribution: asset.attribution.clone(),
                    problem: found.problem,
                }
            })
            .collect(),
        preparation: PreparationInfo { knowledge: settings.knowledge_preparation, detectors: settings.detector_preparation },
        warnings,
    }
}
