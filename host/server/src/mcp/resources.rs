//! Registered maps and revision artifacts as MCP resources under `geomap://`.
//!
//! Invariant: a resource URI only ever reaches what the registry recorded
//! (a map's report, or an artifact name of one of its revisions), never an
//! arbitrary file.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

use geomap_georef::Artifact;
use geomap_model::trace::{self, TraceId};
use geomap_store::media::MediaType;
use geomap_store::registry::{ListPosition, Listed};

use super::adapter::{self, MapGone, ToolError};
use super::arguments::{ArgumentError, ArgumentProblem};
use super::tools::MapReport;
use super::tools::describe_map::describe_map;
use super::tools::query_knowledge::read_bundle;
use super::uris::{BUNDLE_URI_PREFIX, MAP_URI_PREFIX, MAX_RESOURCE_BLOB_BYTES, artifact_uri, bundle_uri, layout_dir, map_uri, revision_dir};
use super::{GeomapServer, ServerState, error_result};
use geomap_model::errors::failure::FailedCall;

/// How many resources one `resources/list` page holds.
pub const RESOURCES_PER_PAGE: usize = 200;

/// The opaque `nextCursor` of a listing position: `m<row>` or `a<row>`, base64url.
fn encode_cursor(position: ListPosition) -> String {
    use base64::Engine;
    let text = match position {
        ListPosition::AfterMap(row) => format!("m{row}"),
        ListPosition::AfterArtifact(row) => format!("a{row}"),
    };
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

/// The position a cursor names; anything this server did not hand out is `invalid_arguments` for `/cursor`.
fn decode_cursor(cursor: &str) -> Result<ListPosition, ArgumentError> {
    use base64::Engine;
    let bad = || ArgumentError {
        field: "/cursor".to_owned(),
        problem: ArgumentProblem::WrongValue,
        expected: "the nextCursor of an earlier resources/list answer, unchanged (or no cursor to start from the beginning)".to_owned(),
    };
    let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor).ok().and_then(|bytes| String::from_utf8(bytes).ok()).ok_or_else(bad)?;
    let row = |digits: &str| digits.parse::<i64>().ok().filter(|row| *row >= 0 && digits == row.to_string());
    match text.split_at_checked(1) {
        Some(("m", digits)) => row(digits).map(ListPosition::AfterMap).ok_or_else(bad),
        Some(("a", digits)) => row(digits).map(ListPosition::AfterArtifact).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// The MCP resource of a map a tool just reported.
pub fn map_resource(report: &MapReport) -> Resource {
    registered_map_resource(&report.map_id, &report.source.relative_path, report.media_type, report.width, report.height)
}

/// The MCP resource of a registered map.
fn registered_map_resource(map_id: &str, relative_path: &str, media_type: MediaType, width: u64, height: u64) -> Resource {
    Resource::new(map_uri(map_id), relative_path)
        .with_title(format!("Map {map_id}"))
        .with_description(format!("{} {width}×{height} registered map", media_type.mime()))
        .with_mime_type("application/json")
}

/// The MCP resource of a file stored with a layout.
pub fn layout_resource(uri: &str, media_type: &str) -> Resource {
    let name = uri.rsplit('/').next().unwrap_or(uri);
    Resource::new(uri, name).with_title(format!("Layout file {name}")).with_mime_type(media_type)
}

/// The MCP resource of a knowledge bundle.
pub fn bundle_resource(bundle_id: &str) -> Resource {
    Resource::new(bundle_uri(bundle_id), bundle_id)
        .with_title(format!("Knowledge bundle {bundle_id}"))
        .with_description("What the knowledge providers answered about an area")
        .with_mime_type("application/json")
}

/// The MCP resource of one revision artifact.
pub fn artifact_resource(map_id: &str, revision_id: &str, artifact: &Artifact) -> Resource {
    Resource::new(artifact_uri(map_id, revision_id, &artifact.name), artifact.name.clone())
        .with_mime_type(artifact.media_type.clone())
        .with_size(artifact.bytes)
}

/// The resource template agents fill in with a `map_id`.
pub fn templates() -> ListResourceTemplatesResult {
    let template = ResourceTemplate::new(format!("{MAP_URI_PREFIX}{{map_id}}"), "map")
        .with_title("A registered map")
        .with_description("What is known about a map registered with geomap_register_map (JSON).")
        .with_mime_type("application/json");
    let bundle = ResourceTemplate::new(format!("{BUNDLE_URI_PREFIX}{{bundle_id}}"), "knowledge bundle")
        .with_title("A knowledge bundle")
        .with_description("What knowledge providers answered to one geomap_query_knowledge call, with the map, revision and area asked about (JSON).")
        .with_mime_type("application/json");
    ListResourceTemplatesResult::with_all_items(vec![template, bundle])
}

impl GeomapServer {
    /// A resource request's failure as a JSON-RPC error carrying the envelope.
    fn resource_failure(&self, method: &str, error: &ToolError, trace_id: &TraceId) -> ErrorData {
        let call = FailedCall { tool: method, idempotent: true, trace_id, settings: &self.state.settings };
        error_result::resource_error(&adapter::envelope_for(error, &call))
    }

    /// `resources/list`: one page of every registered map, then every
    /// revision artifact, [`RESOURCES_PER_PAGE`] at a time.
    pub(super) async fn list(&self, cursor: Option<String>) -> Result<ListResourcesResult, ErrorData> {
        let trace_id = TraceId::random();
        let state = Arc::clone(&self.state);
        let listed = trace::run_call(trace_id.clone(), async move {
            let position = match cursor {
                Some(cursor) => decode_cursor(&cursor)?,
                None => ListPosition::START,
            };
            let page = trace::spawn_blocking(move || state.registry.list(position, RESOURCES_PER_PAGE)).await?;
            Ok::<_, ToolError>(page)
        })
        .await;
        let page = match listed {
            Ok(Ok(page)) => page,
            Ok(Err(error)) => return Err(self.resource_failure("resources/list", &error, &trace_id)),
            Err(_) => return Err(self.resource_failure("resources/list", &ToolError::Panic, &trace_id)),
        };
        let resources = page
            .entries
            .iter()
            .map(|entry| match entry {
                Listed::Map(map) => registered_map_resource(&map.map_id, &map.relative_path, map.media_type, map.width, map.height),
                Listed::Artifact { map_id, revision_id, artifact } => artifact_resource(map_id, revision_id, artifact),
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = page.next.map(encode_cursor);
        Ok(result)
    }

    /// `resources/read`: a map's report (JSON) or an artifact's bytes (base64).
    pub(super) async fn read(&self, uri: String) -> Result<ReadResourceResult, ErrorData> {
        let trace_id = TraceId::random();
        let state = Arc::clone(&self.state);
        if let Some(bundle_id) = uri.strip_prefix(BUNDLE_URI_PREFIX) {
            let read = read_bundle(state, bundle_id.to_owned());
            let error = match trace::run_call(trace_id.clone(), read).await {
                Ok(Ok(text)) => return Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri.clone()).with_mime_type("application/json")])),
                Ok(Err(error)) => error,
                Err(_) => ToolError::Panic,
            };
            return Err(self.resource_failure("resources/read", &error, &trace_id));
        }
        let path = uri.strip_prefix(MAP_URI_PREFIX).unwrap_or(&uri).to_owned();
        let contents = match path.split('/').collect::<Vec<_>>().as_slice() {
            [map_id, "layouts", layout_id, name] => {
                let read = read_layout_file(state, map_id.to_string(), layout_id.to_string(), name.to_string());
                trace::run_call(trace_id.clone(), read).await.map(|outcome| {
                    outcome.map(|(bytes, media_type)| match media_type {
                        "application/json" => ResourceContents::text(String::from_utf8_lossy(&bytes).into_owned(), uri.clone()).with_mime_type(media_type),
                        _ => {
                            use base64::Engine;
                            ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri.clone()).with_mime_type(media_type)
                        }
                    })
                })
            }
            [map_id, "revisions", revision_id, name] => {
                let read = read_artifact(state, map_id.to_string(), revision_id.to_string(), name.to_string());
                trace::run_call(trace_id.clone(), read).await.map(|outcome| {
                    outcome.map(|(bytes, media_type)| {
                        use base64::Engine;
                        let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
                        ResourceContents::blob(blob, uri.clone()).with_mime_type(media_type)
                    })
                })
            }
            _ => trace::run_call(trace_id.clone(), describe_map(state, path.clone())).await.map(|outcome| {
                outcome.map(|report| {
                    let text = serde_json::to_string_pretty(&report).expect("reports always serialize");
                    ResourceContents::text(text, uri.clone()).with_mime_type("application/json")
                })
            }),
        };
        let error = match contents {
            Ok(Ok(contents)) => return Ok(ReadResourceResult::new(vec![contents])),
            Ok(Err(error)) => error,
            Err(_) => ToolError::Panic,
        };
        Err(self.resource_failure("resources/read", &error, &trace_id))
    }
}

/// The bytes of a file the registry recorded, named `name` in messages. Its size is checked on the
/// open file before anything is read (over `MAX_RESOURCE_BLOB_BYTES`: `ArtifactTooLarge`); a file
/// that is gone is `unknown`, any other failure to read it the operator's (`Storage`).
fn read_recorded(path: std::path::PathBuf, name: &str, unknown: impl Fn() -> ToolError) -> Result<Vec<u8>, ToolError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let failed = |error: std::io::Error| ToolError::Storage { stage: "reading", detail: format!("{shown}: {error}") };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Err(unknown()),
        Err(error) => return Err(failed(error)),
    };
    let bytes = file.metadata().map_err(failed)?.len();
    if bytes > MAX_RESOURCE_BLOB_BYTES {
        return Err(ToolError::ArtifactTooLarge { name: name.to_owned(), bytes, path });
    }
    let mut contents = Vec::with_capacity(bytes as usize);
    file.take(MAX_RESOURCE_BLOB_BYTES + 1).read_to_end(&mut contents).map_err(failed)?;
    match contents.len() as u64 {
        grown if grown > MAX_RESOURCE_BLOB_BYTES => Err(ToolError::ArtifactTooLarge { name: name.to_owned(), bytes: grown, path }),
        _ => Ok(contents),
    }
}

/// The media type of a GeoPackage.
pub const GEOPACKAGE_MEDIA_TYPE: &str = "application/geopackage+sqlite3";
/// The media type of a (Cloud Optimized) GeoTIFF.
pub const GEOTIFF_MEDIA_TYPE: &str = "image/tiff; application=geotiff; profile=cloud-optimized";

/// The media type of a stored document's file, by its name.
fn media_type_of(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("json") => "application/json",
        Some("gpkg") => GEOPACKAGE_MEDIA_TYPE,
        Some("tif") => GEOTIFF_MEDIA_TYPE,
        _ => "image/png",
    }
}

/// The bytes and media type of a file stored with a layout, a reading or a unit extraction;
/// only names the recorded document lists are served.
pub async fn read_layout_file(state: Arc<ServerState>, map_id: String, layout_id: String, name: String) -> Result<(Vec<u8>, &'static str), ToolError> {
    trace::spawn_blocking(move || {
        let unknown = || ToolError::MapNotFound { map_id: map_id.clone(), reason: MapGone::UnknownArtifact, registered_as: None };
        if !super::tools::stored::files(&state, &map_id, &layout_id)?.contains(&name) {
            return Err(unknown());
        }
        let media_type = media_type_of(&name);
        let path = layout_dir(&state, &map_id, &layout_id).join(&name);
        Ok((read_recorded(path, &name, unknown)?, media_type))
    })
    .await
}

/// The bytes and media type of one revision artifact; only names the registry
/// recorded are served, so a URI cannot reach any other file.
pub async fn read_artifact(state: Arc<ServerState>, map_id: String, revision_id: String, name: String) -> Result<(Vec<u8>, String), ToolError> {
    trace::spawn_blocking(move || {
        let unknown = || ToolError::MapNotFound { map_id: map_id.clone(), reason: MapGone::UnknownArtifact, registered_as: None };
        let artifact = state.registry.artifact(&map_id, &revision_id, &name)?.ok_or_else(unknown)?;
        let path = revision_dir(&state, &map_id, &revision_id).join(&artifact.name);
        Ok((read_recorded(path, &artifact.name, unknown)?, artifact.media_type.clone()))
    })
    .await
}
