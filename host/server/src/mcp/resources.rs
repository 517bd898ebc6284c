//! Registered maps and revision artifacts as MCP resources under `geomap://`.
//!
//! Invariant: a resource URI only ever reaches what the registry recorded
//! (a map's report, or an artifact name of one of its revisions), never an
//! arbitrary file.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

use geomap_app::maps::{DescribeRequest, MapReport};
use geomap_app::uris::{BUNDLE_URI_PREFIX, MAP_URI_PREFIX, artifact_uri, bundle_uri, map_uri};
use geomap_app::{AppError, ArgumentError};
use geomap_georef::Artifact;
use geomap_model::errors::failure::FailedCall;
use geomap_model::trace::{self, TraceId};
use geomap_store::media::MediaType;
use geomap_store::registry::{ListPosition, Listed};

use super::{GeomapServer, adapter, error_result};

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
    let bad = || ArgumentError::wrong("/cursor", "the nextCursor of an earlier resources/list answer, unchanged (or no cursor to start from the beginning)");
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
    fn resource_failure(&self, method: &str, uri: Option<&str>, error: &AppError, trace_id: &TraceId) -> ErrorData {
        let call = FailedCall { tool: method, idempotent: true, trace_id, settings: self.state.settings() };
        error_result::resource_error(&adapter::envelope_for(error, &call), uri)
    }

    /// `resources/list`: one page of every registered map, then every
    /// revision artifact, [`RESOURCES_PER_PAGE`] at a time.
    pub(super) async fn list(&self, cursor: Option<String>) -> Result<ListResourcesResult, ErrorData> {
        let trace_id = TraceId::random();
        let app = Arc::clone(&self.state.app);
        let listed = trace::run_call(trace_id.clone(), async move {
            let position = match cursor {
                Some(cursor) => decode_cursor(&cursor)?,
                None => ListPosition::START,
            };
            app.listing(position, RESOURCES_PER_PAGE).await
        })
        .await;
        let page = match listed {
            Ok(Ok(page)) => page,
            Ok(Err(error)) => return Err(self.resource_failure("resources/list", None, &error, &trace_id)),
            Err(_) => return Err(self.resource_failure("resources/list", None, &AppError::Panic, &trace_id)),
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
        let app = Arc::clone(&self.state.app);
        if let Some(bundle_id) = uri.strip_prefix(BUNDLE_URI_PREFIX) {
            let error = match trace::run_call(trace_id.clone(), app.bundle(bundle_id.to_owned())).await {
                Ok(Ok(text)) => return Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri.clone()).with_mime_type("application/json")])),
                Ok(Err(error)) => error,
                Err(_) => AppError::Panic,
            };
            return Err(self.resource_failure("resources/read", Some(&uri), &error, &trace_id));
        }
        let path = uri.strip_prefix(MAP_URI_PREFIX).unwrap_or(&uri).to_owned();
        let contents = match path.split('/').collect::<Vec<_>>().as_slice() {
            [map_id, "layouts", layout_id, name] => {
                let read = app.stored_file(map_id.to_string(), layout_id.to_string(), name.to_string());
                trace::run_call(trace_id.clone(), read).await.map(|outcome| outcome.map(|(bytes, media_type)| file_contents(bytes, media_type, &uri)))
            }
            [map_id, "revisions", revision_id, name] => {
                let read = app.artifact(map_id.to_string(), revision_id.to_string(), name.to_string());
                trace::run_call(trace_id.clone(), read).await.map(|outcome| outcome.map(|(bytes, media_type)| file_contents(bytes, &media_type, &uri)))
            }
            _ => trace::run_call(trace_id.clone(), app.describe(DescribeRequest { map_id: path.clone() })).await.map(|outcome| {
                outcome.map(|report| {
                    let text = serde_json::to_string_pretty(&report).expect("reports always serialize");
                    ResourceContents::text(text, uri.clone()).with_mime_type("application/json")
                })
            }),
        };
        let error = match contents {
            Ok(Ok(contents)) => return Ok(ReadResourceResult::new(vec![contents])),
            Ok(Err(error)) => error,
            Err(_) => AppError::Panic,
        };
        Err(self.resource_failure("resources/read", Some(&uri), &error, &trace_id))
    }
}

/// A stored file as resource contents: JSON as text (an agent reads it as it is), anything else as
/// base64 bytes.
fn file_contents(bytes: Vec<u8>, media_type: &str, uri: &str) -> ResourceContents {
    use base64::Engine;
    match media_type {
        "application/json" => ResourceContents::text(String::from_utf8_lossy(&bytes).into_owned(), uri.to_owned()).with_mime_type(media_type),
        _ => ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri.to_owned()).with_mime_type(media_type),
    }
}
