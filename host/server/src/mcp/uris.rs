//! Where a map's things are: their `geomap://` resource URIs, and their
//! folders under the data root.
//!
//! Invariant: every URI and folder of a map, revision, layout or bundle is made
//! here, so the tools that write them and `resources` that serves them agree.

use super::ServerState;
use geomap_model::data_root::ARTIFACTS_DIR;

/// The URI scheme prefix of registered maps.
pub const MAP_URI_PREFIX: &str = "geomap://maps/";

/// The resource URI of a file stored with layout `layout_id` of map `map_id`.
pub fn layout_uri(map_id: &str, layout_id: &str, name: &str) -> String {
    format!("{MAP_URI_PREFIX}{map_id}/layouts/{layout_id}/{name}")
}

/// The URI prefix of knowledge bundles.
pub const BUNDLE_URI_PREFIX: &str = "geomap://bundles/";

/// The resource URI of a knowledge bundle.
pub fn bundle_uri(bundle_id: &str) -> String {
    format!("{BUNDLE_URI_PREFIX}{bundle_id}")
}

/// The largest artifact `resources/read` sends (base64 in one JSON message);
/// larger ones are opened from their `path` instead.
pub const MAX_RESOURCE_BLOB_BYTES: u64 = 32 << 20;

/// The URI of a registered map.
pub fn map_uri(map_id: &str) -> String {
    format!("{MAP_URI_PREFIX}{map_id}")
}

/// The URI of one artifact.
pub fn artifact_uri(map_id: &str, revision_id: &str, name: &str) -> String {
    format!("{MAP_URI_PREFIX}{map_id}/revisions/{revision_id}/{name}")
}

/// The folder of one revision's artifacts: `<artifact root>/artifacts/<map_id>/<revision_id>`.
pub fn revision_dir(state: &ServerState, map_id: &str, revision_id: &str) -> std::path::PathBuf {
    state.settings.artifact_root.join(ARTIFACTS_DIR).join(map_id).join(revision_id)
}

/// The folder of a stored reading (a layout, text, units): `<artifact root>/artifacts/<map_id>/layouts/<id>`.
pub fn layout_dir(state: &ServerState, map_id: &str, id: &str) -> std::path::PathBuf {
    state.settings.artifact_root.join(ARTIFACTS_DIR).join(map_id).join("layouts").join(id)
}
