//! `geomap_register_map`: a scan (or a map bundle) from an allowed root becomes
//! a registered map; a bundle's georeference becomes its first revision.

use std::sync::Arc;
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use geomap_georef::{GeorefError, Revision};
use geomap_model::modified_ns;
use geomap_model::trace;
use geomap_store::media::bundle::{BundleError, MapBundle};
use geomap_store::media::{self, MediaError, MediaLimits};
use geomap_store::registry::MapRecord;

use super::georeference::GeoreferenceArgs;
use super::{MapReport, report};
use crate::mcp::ServerState;
use crate::mcp::adapter::ToolError;

/// Arguments of `geomap_register_map`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterMapArgs {
    /// The scan's path: absolute inside an allowed map root, or relative to the first root.
    pub path: String,
}
/// `geomap_register_map`: resolve inside a root, check the media, record it.
pub async fn register_map(state: Arc<ServerState>, args: RegisterMapArgs) -> Result<MapReport, ToolError> {
    trace::spawn_blocking(move || {
        let requested = args.path;
        let mut opened = state.roots.open_map(&requested).map_err(|error| ToolError::MapPath { requested: requested.clone(), error })?;
        let limits = MediaLimits { max_bytes: state.settings.max_image_bytes, max_pixels: state.settings.max_image_pixels };
        let header = media::inspect(&mut opened.file, limits)?;
        let bundle_revision = header.bundle.as_ref().map(bundle_revision).transpose()?.flatten();
        let sha256 = geomap_model::content_sha256(&mut opened.file).map_err(media::MediaError::Io)?;
        let metadata = opened.file.metadata().map_err(media::MediaError::Io)?;
        let map_id = map_id_for(&opened.root, &opened.relative_path, &sha256);
        let candidate = MapRecord {
            map_id,
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
        let (mut record, already_registered) = state.registry.register(&candidate)?;
        if let Some(revision) = bundle_revision
            && record.revisions.is_empty()
            && state.registry.add_revision(&record.map_id, &revision)?
        {
            record.revisions.push(revision);
        }
        Ok(report(&state, &record, opened.root_index, Some(already_registered)))
    })
    .await
}

/// The revision a bundle's `georeference` describes (checked as `geomap_georeference`'s arguments), if it has one.
fn bundle_revision(bundle: &MapBundle) -> Result<Option<Revision>, ToolError> {
    let Some(fields) = &bundle.georeference else { return Ok(None) };
    let invalid = |field: &str, problem: String| ToolError::Media(MediaError::InvalidBundle(BundleError { field: format!("/georeference{field}"), problem }));
    if fields.contains_key("map_id") {
        return Err(invalid("/map_id", "no map_id here: the bundle is the map".to_owned()));
    }
    let mut arguments = fields.clone();
    arguments.insert("map_id".to_owned(), serde_json::Value::String(String::new()));
    let checked = crate::mcp::arguments::parse::<GeoreferenceArgs>(Some(arguments)).and_then(|args| args.explicit());
    let (crs, placement) =
        checked.map_err(|error| invalid(error.field.trim_end_matches('/'), format!("{}: expected {}", error.problem_text(), error.expected)))?;
    let request = geomap_georef::Request { crs, placement };
    let revision_id = format!("rev_{}", geomap_model::random_hex(10));
    match geomap_georef::describe(bundle.image.width as u64, bundle.image.height as u64, &request, &revision_id) {
        Ok(revision) => Ok(Some(revision)),
        Err(GeorefError::InvalidBounds(problem)) => Err(invalid("", problem)),
        Err(other) => Err(other.into()),
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
    let digest = geomap_model::lowercase_hex(&hasher.finalize()[..10]);
    format!("map_{digest}")
}
