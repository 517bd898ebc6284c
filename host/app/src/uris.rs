//! Where a map's things are: their `geomap://` resource URIs, and their folders
//! under the artifact root.
//!
//! Invariant: every URI and folder of a map, revision, layout, reading,
//! extraction or bundle is made here, so the use cases that write them and the
//! edge that serves them agree.

use std::path::{Path, PathBuf};

use geomap_model::data_root::ARTIFACTS_DIR;

/// The URI scheme prefix of registered maps.
pub const MAP_URI_PREFIX: &str = "geomap://maps/";

/// The URI prefix of knowledge bundles.
pub const BUNDLE_URI_PREFIX: &str = "geomap://bundles/";

/// The largest artifact an edge sends whole (`resources/read`: base64 in one JSON message);
/// larger ones are opened from their `path` instead.
pub const MAX_RESOURCE_BLOB_BYTES: u64 = 32 << 20;

/// The URI of a registered map.
pub fn map_uri(map_id: &str) -> String {
    format!("{MAP_URI_PREFIX}{map_id}")
}

/// The URI of one artifact of a revision.
pub fn artifact_uri(map_id: &str, revision_id: &str, name: &str) -> String {
    format!("{MAP_URI_PREFIX}{map_id}/revisions/{revision_id}/{name}")
}

/// The URI of a file stored with layout, reading or extraction `id` of map `map_id`.
pub fn layout_uri(map_id: &str, id: &str, name: &str) -> String {
    format!("{MAP_URI_PREFIX}{map_id}/layouts/{id}/{name}")
}

/// The URI of a knowledge bundle.
pub fn bundle_uri(bundle_id: &str) -> String {
    format!("{BUNDLE_URI_PREFIX}{bundle_id}")
}

/// The folder of one revision's artifacts: `<artifact root>/artifacts/<map_id>/<revision_id>`.
pub fn revision_dir(artifact_root: &Path, map_id: &str, revision_id: &str) -> PathBuf {
    artifact_root.join(ARTIFACTS_DIR).join(map_id).join(revision_id)
}

/// The folder of a stored layout, reading or extraction: `<artifact root>/artifacts/<map_id>/layouts/<id>`.
pub fn layout_dir(artifact_root: &Path, map_id: &str, id: &str) -> PathBuf {
    artifact_root.join(ARTIFACTS_DIR).join(map_id).join("layouts").join(id)
}
