//! Registering a scan (or a map bundle) from an allowed root, and describing a
//! registered map.
//!
//! Invariants: `map_id` is `map_` + 20 hex of SHA-256(root, path inside it,
//! content hash), so the same unchanged file always gets the same ID, across
//! processes; registering an unchanged file again reads only; a bundle's
//! georeference is checked as a georeference request and becomes the map's
//! first revision.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use geomap_georef::{GeorefError, Revision};
use geomap_model::{modified_ns, trace};
use geomap_store::media::bundle::{BundleError, MapBundle};
use geomap_store::media::{self, MediaError, MediaLimits, MediaType};
use geomap_store::registry::MapRecord;

use crate::georeference::GeoreferenceRequest;
use crate::uris::map_uri;
use crate::{App, AppError, error};

/// The name `geomap_register_map` is known by.
pub const REGISTER_TOOL: &str = "geomap_register_map";
/// The name `geomap_describe_map` is known by.
pub const DESCRIBE_TOOL: &str = "geomap_describe_map";

/// Arguments of `geomap_register_map`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    /// The scan's path: absolute inside an allowed map root, or relative to the first root.
    pub path: String,
}

/// Arguments of `geomap_describe_map`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeRequest {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
}

/// Where a registered map's file is, relative to the allowed roots.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MapSource {
    /// Index of the map root in geomap_capabilities' `map_roots` (0 resolves relative paths).
    pub root_index: usize,
    /// The file's path inside that root, symbolic links resolved.
    pub relative_path: String,
}

/// What is known about a registered map (the result of register and describe).
#[derive(Debug, Clone, Serialize, JsonSchema)]
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

impl App {
    /// `geomap_register_map`: resolves the path inside a root, checks the media and records it; a
    /// bundle's georeference becomes the map's first revision.
    pub async fn register(self: &Arc<Self>, request: RegisterRequest) -> Result<MapReport, AppError> {
        let app = Arc::clone(self);
        trace::spawn_blocking(move || app.register_now(request)).await
    }

    fn register_now(&self, request: RegisterRequest) -> Result<MapReport, AppError> {
        let requested = request.path;
        let mut opened = self.roots.open_map(&requested).map_err(|error| AppError::MapPath { requested: requested.clone(), error })?;
        let limits = MediaLimits { max_bytes: self.settings.max_image_bytes, max_pixels: self.settings.max_image_pixels };
        let header = media::inspect(&mut opened.file, limits)?;
        let bundle_revision = header.bundle.as_ref().map(bundle_revision).transpose()?.flatten();
        let sha256 = geomap_model::content_sha256(&mut opened.file).map_err(MediaError::Io)?;
        let metadata = opened.file.metadata().map_err(MediaError::Io)?;
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
            registered_at: crate::now(),
            revisions: Vec::new(),
        };
        let (mut record, already_registered) = self.registry.register(&candidate)?;
        if let Some(revision) = bundle_revision
            && record.revisions.is_empty()
            && self.registry.add_revision(&record.map_id, &revision)?
        {
            record.revisions.push(revision);
        }
        Ok(self.report(&record, opened.root_index, Some(already_registered)))
    }

    /// `geomap_describe_map`: the record, after checking the file is unchanged.
    pub async fn describe(self: &Arc<Self>, request: DescribeRequest) -> Result<MapReport, AppError> {
        let app = Arc::clone(self);
        trace::spawn_blocking(move || {
            let map = app.open_registered(&request.map_id)?;
            Ok(app.report(&map.record, map.root_index, None))
        })
        .await
    }

    fn report(&self, record: &MapRecord, root_index: usize, already_registered: Option<bool>) -> MapReport {
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
            revisions: record.revisions.iter().map(|revision| self.located(&record.map_id, revision.clone())).collect(),
            current_revision_id: record.revisions.last().map(|revision| revision.revision_id.clone()),
            warnings: Vec::new(),
        }
    }
}

/// The revision a bundle's `georeference` describes (checked as a georeference request's
/// fields), if it has one.
fn bundle_revision(bundle: &MapBundle) -> Result<Option<Revision>, AppError> {
    let Some(fields) = &bundle.georeference else { return Ok(None) };
    let invalid = |field: &str, problem: String| AppError::Media(MediaError::InvalidBundle(BundleError { field: format!("/georeference{field}"), problem }));
    if fields.contains_key("map_id") {
        return Err(invalid("/map_id", "no map_id here: the bundle is the map".to_owned()));
    }
    let mut fields = fields.clone();
    fields.insert("map_id".to_owned(), serde_json::Value::String(String::new()));
    let checked = error::from_json::<GeoreferenceRequest>(Some(fields)).and_then(|request| request.explicit());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapGone;
    use crate::testing::TestApp;
    use geomap_store::roots::RootsError;

    fn register(path: &str) -> RegisterRequest {
        RegisterRequest { path: path.to_owned() }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_scan_registers_once_and_is_described_while_unchanged() {
        let test = TestApp::new(&[]);
        test.scan("a.png", 40, 30, |_, _| [200, 180, 120]);
        let first = test.app.register(register("a.png")).await.unwrap();
        assert_eq!((first.width, first.height, first.media_type, first.already_registered), (40, 30, MediaType::Png, Some(false)));
        assert!(first.map_id.starts_with("map_") && first.resource_uri.ends_with(&first.map_id));
        let again = test.app.register(register(&test.maps.join("a.png").display().to_string())).await.unwrap();
        assert_eq!((again.map_id.as_str(), again.already_registered), (first.map_id.as_str(), Some(true)), "the same unchanged file is the same map");
        let described = test.app.describe(DescribeRequest { map_id: first.map_id.clone() }).await.unwrap();
        assert_eq!((described.sha256, described.already_registered, described.source.relative_path), (first.sha256, None, "a.png".to_owned()));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_path_outside_the_roots_or_a_file_that_is_not_a_map_is_refused() {
        let test = TestApp::new(&[("GEOMAP_MAX_IMAGE_PIXELS", "100")]);
        let outside = test.app.register(register("/etc/hostname")).await.unwrap_err();
        assert!(matches!(outside, AppError::MapPath { error: RootsError::OutsideRoots, .. }), "{outside:?}");
        std::fs::write(test.maps.join("notes.txt"), "not a map").unwrap();
        let text = test.app.register(register("notes.txt")).await.unwrap_err();
        assert!(matches!(text, AppError::Media(MediaError::Unsupported { .. })), "{text:?}");
        test.scan("big.png", 20, 20, |_, _| [0, 0, 0]);
        let big = test.app.register(register("big.png")).await.unwrap_err();
        assert!(matches!(big, AppError::Media(MediaError::Oversize { .. })), "{big:?}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_changed_or_vanished_file_is_gone_with_the_reason() {
        let test = TestApp::new(&[]);
        let path = test.scan("a.png", 10, 10, |_, _| [1, 2, 3]);
        let map_id = test.register("a.png").await;
        let gone = |error: AppError| match error {
            AppError::MapNotFound { reason, registered_as, .. } => (reason, registered_as),
            other => panic!("not gone: {other:?}"),
        };
        test.scan("a.png", 10, 11, |_, _| [1, 2, 3]);
        let changed = test.app.describe(DescribeRequest { map_id: map_id.clone() }).await.unwrap_err();
        assert_eq!(gone(changed), (MapGone::FileChanged, Some("a.png".to_owned())));
        std::fs::remove_file(path).unwrap();
        let missing = test.app.describe(DescribeRequest { map_id }).await.unwrap_err();
        assert_eq!(gone(missing).0, MapGone::FileMissing);
        let unknown = test.app.describe(DescribeRequest { map_id: "map_00000000000000000000".into() }).await.unwrap_err();
        assert_eq!(gone(unknown), (MapGone::UnknownId, None));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_bundle_registers_with_its_georeference_as_the_first_revision() {
        let test = TestApp::new(&[]);
        let bundle = |georeference: serde_json::Value| {
            serde_json::json!({ "schema": "geomap-map-bundle/v1", "image": { "width": 1000, "height": 800 }, "georeference": georeference }).to_string()
        };
        let bounds = serde_json::json!({ "west": -114.0, "south": 35.0, "east": -113.0, "north": 36.0 });
        std::fs::write(test.maps.join("map.layout.json"), bundle(serde_json::json!({ "crs": "EPSG:4326", "bounds": bounds }))).unwrap();
        let report = test.app.register(register("map.layout.json")).await.unwrap();
        assert_eq!((report.media_type, report.revisions.len()), (MediaType::MapBundle, 1));
        assert!((report.revisions[0].wgs84_bounds.north - 36.0).abs() < 1e-9);
        std::fs::write(test.maps.join("bad.layout.json"), bundle(serde_json::json!({ "crs": "EPSG:4326", "bounds": bounds, "control_points": [] }))).unwrap();
        let refused = test.app.register(register("bad.layout.json")).await.unwrap_err();
        assert!(matches!(&refused, AppError::Media(MediaError::InvalidBundle(problem)) if problem.field == "/georeference/control_points"), "{refused:?}");
    }
}
