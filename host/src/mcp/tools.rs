//! The tool handlers: thin orchestration over `roots`, `media` and `registry`.
//!
//! Invariant: handlers return typed results or a [`ToolError`]; they never
//! build envelopes or MCP results themselves.

use std::sync::Arc;
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::errors::ErrorCode;
use crate::georef::{self, Bounds, ControlPoint, PixelRegion, Placement, Readiness, Revision, TransformKind};
use crate::media::{self, MediaLimits, MediaType};
use crate::registry::{MapRecord, RegistryError, modified_ns};
use crate::roots::RootsError;
use crate::trace;

use super::ServerState;
use super::adapter::{MapGone, ToolError};
use super::arguments::{ArgumentError, ArgumentProblem};
use super::inventory::ToolName;

/// The URI scheme prefix of registered maps.
pub const MAP_URI_PREFIX: &str = "geomap://maps/";

/// `geomap_capabilities` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilitiesArgs {}

/// Arguments of `geomap_register_map`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterMapArgs {
    /// The scan's path: absolute inside an allowed map root, or relative to the first root.
    pub path: String,
}

/// Arguments of `geomap_describe_map`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeMapArgs {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
}

/// Arguments of `geomap_georeference`: `bounds` (with an optional
/// `pixel_region`) or `control_points` (with an optional `transform`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeoreferenceArgs {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// Any CRS GDAL/PROJ accepts: EPSG:4326, EPSG:4267 (NAD27, common on USGS scans), EPSG:326xx (UTM), WKT, a PROJ string.
    pub crs: String,
    /// The CRS box that `pixel_region` covers (x = easting/longitude, y = northing/latitude).
    pub bounds: Option<Bounds>,
    /// The part of the scan the bounds cover, in whole pixels (default: the whole image).
    pub pixel_region: Option<PixelRegion>,
    /// Pixel → CRS points (col/row from the image's top-left corner; pixel centres at +0.5).
    pub control_points: Option<Vec<ControlPoint>>,
    /// How control points map pixels to the CRS (default affine).
    pub transform: Option<TransformKind>,
}

impl GeoreferenceArgs {
    /// The placement these arguments ask for, or the argument that does not fit.
    fn placement(&self) -> Result<Placement, ArgumentError> {
        let conflict =
            |field: &str, expected: &str| ArgumentError { field: field.to_owned(), problem: ArgumentProblem::Conflict, expected: expected.to_owned() };
        match (&self.bounds, &self.control_points) {
            (Some(_), Some(_)) => Err(conflict("/control_points", "either bounds or control_points, not both")),
            (None, None) => Err(ArgumentError {
                field: "/bounds".to_owned(),
                problem: ArgumentProblem::Missing,
                expected: "bounds (with an optional pixel_region) or control_points (with an optional transform)".to_owned(),
            }),
            (Some(bounds), None) => match self.transform {
                Some(kind) if kind != TransformKind::Affine => {
                    Err(conflict("/transform", "no transform with bounds (bounds always give an affine transform); use control_points for other transforms"))
                }
                _ => Ok(Placement::Bounds { bounds: *bounds, region: self.pixel_region }),
            },
            (None, Some(points)) => match self.pixel_region {
                Some(_) => Err(conflict("/pixel_region", "no pixel_region with control_points (their pixels say where they are)")),
                None => Ok(Placement::ControlPoints { points: points.clone(), transform: self.transform.unwrap_or_default() }),
            },
        }
    }
}

/// The result of `geomap_georeference`: the new revision, now the map's current one.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GeoreferenceReport {
    /// The map.
    pub map_id: String,
    /// The revision written.
    #[serde(flatten)]
    pub revision: Revision,
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
    pub registered_maps: Option<usize>,
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
    /// Set-up problems worth telling the user about.
    pub warnings: Vec<String>,
}

/// `geomap_capabilities`.
pub fn capabilities(state: &ServerState) -> CapabilitiesResult {
    let settings = &state.settings;
    let (data_state, registered_maps) = match state.registry.load() {
        Ok(data) => match state.registry.check_writable() {
            Ok(()) => (DataRootState::Ready, Some(data.maps.len())),
            Err(_) => (DataRootState::Unwritable, Some(data.maps.len())),
        },
        Err(RegistryError::Corrupt { .. }) => (DataRootState::RegistryCorrupt, None),
        Err(RegistryError::Io { .. }) => (DataRootState::Unwritable, None),
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
        server: ServerIdentity { name: super::SERVER_NAME.to_owned(), version: super::SERVER_VERSION.to_owned() },
        tools,
        map_roots: state
            .roots
            .configured()
            .enumerate()
            .map(|(index, path)| MapRootInfo { index, path: path.display().to_string(), resolves_relative_paths: index == 0 })
            .collect(),
        media: MediaInfo { supported: MediaType::SUPPORTED.to_vec(), max_image_bytes: settings.max_image_bytes, max_image_pixels: settings.max_image_pixels },
        data_root: DataRootInfo { path: settings.data_root.display().to_string(), state: data_state, registered_maps },
        georeference,
        warnings,
    }
}

/// `geomap_register_map`: resolve inside a root, check the media, record it.
pub async fn register_map(state: Arc<ServerState>, args: RegisterMapArgs) -> Result<MapReport, ToolError> {
    trace::spawn_blocking(move || {
        let requested = args.path;
        let mut opened = state.roots.open_map(&requested).map_err(|error| ToolError::MapPath { requested: requested.clone(), error })?;
        let limits = MediaLimits { max_bytes: state.settings.max_image_bytes, max_pixels: state.settings.max_image_pixels };
        let header = media::inspect(&mut opened.file, limits)?;
        let sha256 = media::content_sha256(&mut opened.file).map_err(media::MediaError::Io)?;
        let metadata = opened.file.metadata().map_err(media::MediaError::Io)?;
        let map_id = map_id_for(&opened.root, &opened.relative_path, &sha256);
        let candidate = MapRecord {
            map_id: map_id.clone(),
            root: opened.root,
            relative_path: opened.relative_path,
            media_type: header.media_type,
            width: header.width,
            height: header.height,
            bytes: metadata.len(),
            sha256,
            modified_ns: modified_ns(&metadata),
            registered_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            revisions: Vec::new(),
        };
        let (record, already_registered) = state.registry.update(|data| match data.maps.get_mut(&map_id) {
            Some(existing) => {
                existing.modified_ns = candidate.modified_ns;
                (existing.clone(), true)
            }
            None => {
                data.maps.insert(map_id.clone(), candidate.clone());
                (candidate, false)
            }
        })?;
        Ok(report(&state, &record, opened.root_index, Some(already_registered)))
    })
    .await
}

/// A registered map whose file is still the one registered, opened inside its root.
struct RegisteredMap {
    record: MapRecord,
    root_index: usize,
    file: std::fs::File,
}

/// Looks `map_id` up and checks its file is unchanged (size, then content when the mtime moved).
fn open_registered(state: &ServerState, map_id: &str) -> Result<RegisteredMap, ToolError> {
    let data = state.registry.load()?;
    let gone = |reason, record: Option<&MapRecord>| ToolError::MapNotFound {
        map_id: map_id.to_owned(),
        reason,
        registered_as: record.map(|r| r.relative_path.clone()),
    };
    let record = data.maps.get(map_id).ok_or_else(|| gone(MapGone::UnknownId, None))?;
    let root_index = state.roots.index_of(&record.root).ok_or_else(|| gone(MapGone::RootNoLongerAllowed, Some(record)))?;
    let mut file = state.roots.reopen(&record.root, &record.relative_path).map_err(|error| match error {
        RootsError::OutsideRoots => gone(MapGone::RootNoLongerAllowed, Some(record)),
        _ => gone(MapGone::FileMissing, Some(record)),
    })?;
    let metadata = file.metadata().map_err(media::MediaError::Io)?;
    if metadata.len() != record.bytes {
        return Err(gone(MapGone::FileChanged, Some(record)));
    }
    if modified_ns(&metadata) != record.modified_ns && media::content_sha256(&mut file).map_err(media::MediaError::Io)? != record.sha256 {
        return Err(gone(MapGone::FileChanged, Some(record)));
    }
    Ok(RegisteredMap { record: record.clone(), root_index, file })
}

/// `geomap_describe_map` (and `resources/read`): the record, after checking the file is unchanged.
pub async fn describe_map(state: Arc<ServerState>, map_id: String) -> Result<MapReport, ToolError> {
    trace::spawn_blocking(move || {
        let map = open_registered(&state, &map_id)?;
        Ok(report(&state, &map.record, map.root_index, None))
    })
    .await
}

/// Where a call's progress goes: the client that asked for it with a progress token.
pub struct ProgressSink {
    /// The client.
    pub peer: rmcp::Peer<rmcp::RoleServer>,
    /// The token from the request's `_meta`.
    pub token: rmcp::model::ProgressToken,
}

impl ProgressSink {
    /// Forwards `(fraction, message)` pairs as `notifications/progress` (0..100)
    /// until the sender is dropped: one per whole percent, strictly increasing, as MCP requires.
    async fn forward(self, mut updates: tokio::sync::mpsc::UnboundedReceiver<(f64, &'static str)>) {
        let mut last: Option<u32> = None;
        while let Some((fraction, message)) = updates.recv().await {
            let percent = (fraction.clamp(0.0, 1.0) * 100.0).floor() as u32;
            if last.is_some_and(|previous| previous >= percent) {
                continue;
            }
            last = Some(percent);
            let param = rmcp::model::ProgressNotificationParam::new(self.token.clone(), f64::from(percent)).with_total(100.0).with_message(message);
            if self.peer.notify_progress(param).await.is_err() {
                break; // the client went away; the work finishes anyway
            }
        }
    }
}

/// `geomap_georeference`: fit, write the artifacts, then append the revision under the registry lock.
pub async fn georeference(state: Arc<ServerState>, args: GeoreferenceArgs, progress: Option<ProgressSink>) -> Result<GeoreferenceReport, ToolError> {
    let placement = args.placement()?;
    let (updates, received) = tokio::sync::mpsc::unbounded_channel();
    let forwarding = progress.map(|sink| tokio::spawn(sink.forward(received)));
    let outcome = trace::spawn_blocking(move || {
        let map = open_registered(&state, &args.map_id)?;
        let revision_id = format!("rev_{}", trace::random_hex(10));
        let output_dir = revision_dir(&state, &map.record.map_id, &revision_id);
        let scan_path = map.record.root.join(&map.record.relative_path);
        let scan = georef::Scan { file: &map.file, path: &scan_path, width: map.record.width, height: map.record.height };
        let request = georef::Request { crs: args.crs, placement };
        let mut report_progress = |fraction: f64, message: &'static str| {
            let _ = updates.send((fraction, message)); // no receiver when nobody asked
        };
        let revision = georef::georeference(&scan, &request, &revision_id, &output_dir, &mut report_progress).inspect_err(|_| {
            // Best effort: a failed revision leaves no half-written files behind.
            let _ = std::fs::remove_dir_all(&output_dir);
        })?;
        let recorded = state.registry.update(|data| data.maps.get_mut(&map.record.map_id).map(|record| record.revisions.push(revision.clone())).is_some())?;
        if !recorded {
            let _ = std::fs::remove_dir_all(&output_dir);
            return Err(ToolError::MapNotFound { map_id: map.record.map_id.clone(), reason: MapGone::UnknownId, registered_as: None });
        }
        Ok(GeoreferenceReport { map_id: map.record.map_id.clone(), revision: located(&state, &map.record.map_id, revision) })
    })
    .await;
    if let Some(forwarding) = forwarding {
        let _ = forwarding.await; // every progress notification goes out before the result
    }
    outcome
}

/// The folder of one revision's artifacts: `<data root>/artifacts/<map_id>/<revision_id>`.
pub fn revision_dir(state: &ServerState, map_id: &str, revision_id: &str) -> std::path::PathBuf {
    state.settings.data_root.join("artifacts").join(map_id).join(revision_id)
}

/// The URI of a registered map.
pub fn map_uri(map_id: &str) -> String {
    format!("{MAP_URI_PREFIX}{map_id}")
}

/// The URI of one artifact.
pub fn artifact_uri(map_id: &str, revision_id: &str, name: &str) -> String {
    format!("{MAP_URI_PREFIX}{map_id}/revisions/{revision_id}/{name}")
}

/// The largest artifact `resources/read` sends (base64 in one JSON message);
/// larger ones are opened from their `path` instead.
pub const MAX_RESOURCE_BLOB_BYTES: u64 = 32 << 20;

/// The bytes and media type of one revision artifact; only names the registry
/// recorded are served, so a URI cannot reach any other file.
pub async fn read_artifact(state: Arc<ServerState>, map_id: String, revision_id: String, name: String) -> Result<(Vec<u8>, String), ToolError> {
    trace::spawn_blocking(move || {
        let data = state.registry.load()?;
        let unknown = || ToolError::MapNotFound { map_id: map_id.clone(), reason: MapGone::UnknownArtifact, registered_as: None };
        let record = data.maps.get(&map_id).ok_or_else(unknown)?;
        let revision = record.revisions.iter().find(|r| r.revision_id == revision_id).ok_or_else(unknown)?;
        let artifact = revision.artifacts.iter().find(|a| a.name == name).ok_or_else(unknown)?;
        let path = revision_dir(&state, &map_id, &revision_id).join(&artifact.name);
        if artifact.bytes > MAX_RESOURCE_BLOB_BYTES {
            return Err(ToolError::ArtifactTooLarge { name: artifact.name.clone(), bytes: artifact.bytes, path });
        }
        let bytes = std::fs::read(path).map_err(|_| unknown())?;
        Ok((bytes, artifact.media_type.clone()))
    })
    .await
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

/// `map_` and 20 hex characters of SHA-256 over the root, the path inside it and the content hash.
fn map_id_for(root: &std::path::Path, relative_path: &str, sha256: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut hasher = Sha256::new();
    for part in [root.as_os_str().as_bytes(), relative_path.as_bytes(), sha256.as_bytes()] {
        hasher.update(part);
        hasher.update([0]);
    }
    let digest: String = hasher.finalize().iter().take(10).map(|b| format!("{b:02x}")).collect();
    format!("map_{digest}")
}
