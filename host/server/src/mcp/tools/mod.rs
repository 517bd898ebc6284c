//! The tool handlers, one file per tool: thin orchestration over `roots`,
//! `media`, `registry` and `georef`. This file holds what several tools share:
//! the map report and the check that a registered map's file is unchanged.
//!
//! Invariant: handlers return typed results or a [`ToolError`]; they never
//! build envelopes or MCP results themselves.

pub mod capabilities;
pub mod describe_map;
pub mod extract_units;
pub mod georeference;
pub mod layout_words;
pub mod lookup;
pub mod preparation;
pub mod prepare_detectors;
pub mod prepare_knowledge;
pub mod process_image;
pub mod provider_calls;
pub mod query_knowledge;
pub mod read_text;
pub mod register_map;
pub mod stored;
pub mod unit_at;

use schemars::JsonSchema;
use serde::Serialize;

use geomap_georef::Revision;
use geomap_model::modified_ns;
use geomap_store::media::{self, MediaType};
use geomap_store::registry::MapRecord;
use geomap_store::roots::RootsError;

use super::ServerState;
use super::adapter::{MapGone, ToolError};
use super::uris::{artifact_uri, map_uri, revision_dir};

/// Every tool, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    /// `geomap_capabilities`
    Capabilities,
    /// `geomap_register_map`
    RegisterMap,
    /// `geomap_describe_map`
    DescribeMap,
    /// `geomap_georeference`
    Georeference,
    /// `geomap_lookup`
    Lookup,
    /// `geomap_process_image`
    ProcessImage,
    /// `geomap_read_text`
    ReadText,
    /// `geomap_unit_at`
    UnitAt,
    /// `geomap_extract_units`
    ExtractUnits,
    /// `geomap_prepare_detectors`
    PrepareDetectors,
    /// `geomap_query_knowledge`
    QueryKnowledge,
    /// `geomap_prepare_knowledge`
    PrepareKnowledge,
}

impl ToolName {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::Capabilities => "geomap_capabilities",
            ToolName::RegisterMap => "geomap_register_map",
            ToolName::DescribeMap => "geomap_describe_map",
            ToolName::Georeference => "geomap_georeference",
            ToolName::Lookup => "geomap_lookup",
            ToolName::ProcessImage => "geomap_process_image",
            ToolName::ReadText => "geomap_read_text",
            ToolName::UnitAt => "geomap_unit_at",
            ToolName::ExtractUnits => "geomap_extract_units",
            ToolName::PrepareDetectors => "geomap_prepare_detectors",
            ToolName::QueryKnowledge => "geomap_query_knowledge",
            ToolName::PrepareKnowledge => "geomap_prepare_knowledge",
        }
    }
}

/// Where a registered map's file is, relative to the allowed roots.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MapSource {
    /// Index of the map root in geomap_capabilities' `map_roots` (0 resolves relative paths).
    pub root_index: usize,
    /// The file's path inside that root, symbolic links resolved.
    pub relative_path: String,
}

/// What is known about a registered map (the result of register and describe).
#[derive(Debug, Serialize, JsonSchema)]
pub struct MapReport {
    /// Stable ID: the same unchanged file always gets the same one.
    pub map_id: String,
    /// The map as an MCP resource.
    pub resource_uri: String,
    /// Type sniffed from the file's bytes.
    pub media_type: MediaType,
    /// Width in pixels, from the header.
    pub width: u64,
    /// Height in pixels, from the header.
    pub height: u64,
    /// File size.
    pub bytes: u64,
    /// SHA-256 of the file, lowercase hex.
    pub sha256: String,
    /// When the map was first registered (RFC 3339, UTC).
    pub registered_at: String,
    /// Where the file is.
    pub source: MapSource,
    /// geomap_register_map only: true when this file was already registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_registered: Option<bool>,
    /// Georeferences, oldest first.
    pub revisions: Vec<Revision>,
    /// The newest revision: the map's current georeference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_revision_id: Option<String>,
    /// Things the agent should know that are not failures.
    pub warnings: Vec<String>,
}

/// A registered map whose file is still the one registered, opened inside its root.
struct RegisteredMap {
    record: MapRecord,
    root_index: usize,
    file: std::fs::File,
}

/// Looks `map_id` up and checks its file is unchanged (size, then content when the mtime moved).
fn open_registered(state: &ServerState, map_id: &str) -> Result<RegisteredMap, ToolError> {
    let record = state.registry.map(map_id)?;
    let gone = |reason, record: Option<&MapRecord>| ToolError::MapNotFound {
        map_id: map_id.to_owned(),
        reason,
        registered_as: record.map(|r| r.relative_path.clone()),
    };
    let record = record.ok_or_else(|| gone(MapGone::UnknownId, None))?;
    let root_index = state.roots.index_of(&record.root).ok_or_else(|| gone(MapGone::RootNoLongerAllowed, Some(&record)))?;
    let mut file = state.roots.reopen(&record.root, &record.relative_path).map_err(|error| match error {
        RootsError::OutsideRoots => gone(MapGone::RootNoLongerAllowed, Some(&record)),
        _ => gone(MapGone::FileMissing, Some(&record)),
    })?;
    let metadata = file.metadata().map_err(media::MediaError::Io)?;
    if metadata.len() != record.bytes {
        return Err(gone(MapGone::FileChanged, Some(&record)));
    }
    if modified_ns(&metadata) != record.modified_ns && geomap_model::content_sha256(&mut file).map_err(media::MediaError::Io)? != record.sha256 {
        return Err(gone(MapGone::FileChanged, Some(&record)));
    }
    Ok(RegisteredMap { record, root_index, file })
}

/// `revision` with each artifact's resource URI and server path filled in.
fn located(state: &ServerState, map_id: &str, mut revision: Revision) -> Revision {
    let dir = revision_dir(state, map_id, &revision.revision_id);
    for artifact in &mut revision.artifacts {
        artifact.resource_uri = Some(artifact_uri(map_id, &revision.revision_id, &artifact.name));
        artifact.path = Some(dir.join(&artifact.name).display().to_string());
    }
    revision
}

fn report(state: &ServerState, record: &MapRecord, root_index: usize, already_registered: Option<bool>) -> MapReport {
    MapReport {
        map_id: record.map_id.clone(),
        resource_uri: map_uri(&record.map_id),
        media_type: record.media_type,
        width: record.width,
        height: record.height,
        bytes: record.bytes,
        sha256: record.sha256.clone(),
        registered_at: record.registered_at.clone(),
        source: MapSource { root_index, relative_path: record.relative_path.clone() },
        already_registered,
        revisions: record.revisions.iter().map(|revision| located(state, &record.map_id, revision.clone())).collect(),
        current_revision_id: record.revisions.last().map(|revision| revision.revision_id.clone()),
        warnings: Vec::new(),
    }
}

/// The OCR reader, loaded once and kept while its model files are unchanged (reloaded after a
/// reinstall; an asset removed since is missing again).
pub(crate) fn text_reader(state: &ServerState) -> Result<std::sync::Arc<geomap_vision::ocr::reader::Reader>, geomap_vision::VisionError> {
    let files = geomap_vision::models::current_files(&state.catalog, &state.settings.data_root, &geomap_vision::ocr::REQUIREMENTS);
    let mut cached = state.reader.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, loaded)) = cached.as_ref().filter(|(loaded_from, _)| *loaded_from == files) {
        return Ok(std::sync::Arc::clone(loaded));
    }
    *cached = None;
    let loaded = std::sync::Arc::new(geomap_vision::ocr::load(&state.catalog, &state.settings.data_root)?);
    *cached = Some((files, std::sync::Arc::clone(&loaded)));
    Ok(loaded)
}
