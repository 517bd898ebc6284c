//! Reading back what the use cases recorded, for an edge that serves it (MCP
//! resources): a revision's artifact, a file stored with a layout, reading or
//! extraction, a page of the registry's listing.
//!
//! Invariant: only names the registry recorded are served (an artifact of a
//! revision, a file a stored document lists), never an arbitrary path; a file's
//! size is checked on the open file before anything is read.

use std::path::PathBuf;
use std::sync::Arc;

use geomap_model::trace;
use geomap_store::registry::{ListPage, ListPosition};

use crate::uris::{MAX_RESOURCE_BLOB_BYTES, layout_dir, revision_dir};
use crate::{App, AppError, MapGone};

pub use geomap_export::geopackage::GEOPACKAGE_MEDIA_TYPE;
/// The media type of a (Cloud Optimized) GeoTIFF.
pub const GEOTIFF_MEDIA_TYPE: &str = "image/tiff; application=geotiff; profile=cloud-optimized";

/// The media type of a stored document's file, by its name: what an exporter says of its files,
/// else by the names the use cases write (`application/octet-stream` for any other).
pub fn media_type_of(name: &str) -> &'static str {
    if let Some(exported) = geomap_export::media_type(name) {
        return exported;
    }
    match name.rsplit('.').next() {
        Some("json") => "application/json",
        Some("tif") => GEOTIFF_MEDIA_TYPE,
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// The bytes of a file the registry recorded, named `name` in messages. Its size is checked on the
/// open file before anything is read (over [`MAX_RESOURCE_BLOB_BYTES`]: `ArtifactTooLarge`); a file
/// that is gone is `unknown`, any other failure to read it the operator's (`Storage`).
fn read_recorded(path: PathBuf, name: &str, unknown: impl Fn() -> AppError) -> Result<Vec<u8>, AppError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let failed = |error: std::io::Error| AppError::Storage { stage: "reading", detail: format!("{shown}: {error}") };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Err(unknown()),
        Err(error) => return Err(failed(error)),
    };
    let bytes = file.metadata().map_err(failed)?.len();
    if bytes > MAX_RESOURCE_BLOB_BYTES {
        return Err(AppError::ArtifactTooLarge { name: name.to_owned(), bytes, path });
    }
    let mut contents = Vec::with_capacity(bytes as usize);
    file.take(MAX_RESOURCE_BLOB_BYTES + 1).read_to_end(&mut contents).map_err(failed)?;
    match contents.len() as u64 {
        grown if grown > MAX_RESOURCE_BLOB_BYTES => Err(AppError::ArtifactTooLarge { name: name.to_owned(), bytes: grown, path }),
        _ => Ok(contents),
    }
}

impl App {
    /// The bytes and media type of a file stored with a layout, a reading or a unit extraction;
    /// only names the recorded document lists are served.
    pub async fn stored_file(self: &Arc<Self>, map_id: String, id: String, name: String) -> Result<(Vec<u8>, &'static str), AppError> {
        if name == "layout.json" && id.starts_with("lay_") {
            self.resolve_stored_terms(&map_id, Some(&id), "resources/read").await?;
        }
        let app = Arc::clone(self);
        trace::spawn_blocking(move || {
            let unknown = || AppError::gone(&map_id, MapGone::UnknownArtifact);
            if !app.stored_files(&map_id, &id)?.contains(&name) {
                return Err(unknown());
            }
            let path = layout_dir(&app.settings.artifact_root, &map_id, &id).join(&name);
            Ok((read_recorded(path, &name, unknown)?, media_type_of(&name)))
        })
        .await
    }

    /// The bytes and media type of one revision artifact; only names the registry recorded are
    /// served, so a URI cannot reach any other file.
    pub async fn artifact(self: &Arc<Self>, map_id: String, revision_id: String, name: String) -> Result<(Vec<u8>, String), AppError> {
        let app = Arc::clone(self);
        trace::spawn_blocking(move || {
            let unknown = || AppError::gone(&map_id, MapGone::UnknownArtifact);
            let artifact = app.registry.artifact(&map_id, &revision_id, &name)?.ok_or_else(unknown)?;
            let path = revision_dir(&app.settings.artifact_root, &map_id, &revision_id).join(&artifact.name);
            Ok((read_recorded(path, &artifact.name, unknown)?, artifact.media_type.clone()))
        })
        .await
    }

    /// One page of every registered map, then every revision artifact, `size` at a time from `position`.
    pub async fn listing(self: &Arc<Self>, position: ListPosition, size: usize) -> Result<ListPage, AppError> {
        let app = Arc::clone(self);
        Ok(trace::spawn_blocking(move || app.registry.list(position, size)).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestApp;

    #[tokio::test(flavor = "multi_thread")]
    async fn only_what_the_registry_recorded_is_served() {
        let test = TestApp::new(&[]);
        test.scan("a.png", 20, 20, |_, _| [9, 9, 9]);
        let map_id = test.register("a.png").await;
        let layout_id = test.store_layout(&map_id, (20, 20), [0.0, 0.0, 20.0, 20.0], &[("Qa", "#ffffff")]);
        let (bytes, media_type) = test.app.stored_file(map_id.clone(), layout_id.clone(), "layout.json".into()).await.unwrap();
        assert_eq!(media_type, "application/json");
        assert!(String::from_utf8(bytes).unwrap().contains(&layout_id));
        for name in ["../../registry.sqlite", "preview.png"] {
            let refused = test.app.stored_file(map_id.clone(), layout_id.clone(), name.into()).await.unwrap_err();
            assert!(matches!(refused, AppError::MapNotFound { reason: MapGone::UnknownArtifact, .. }), "{name}: {refused:?}");
        }
        let artifact = test.app.artifact(map_id.clone(), "rev_x".into(), "georeferenced.tif".into()).await.unwrap_err();
        assert!(matches!(artifact, AppError::MapNotFound { reason: MapGone::UnknownArtifact, .. }));
        let page = test.app.listing(ListPosition::START, 10).await.unwrap();
        assert_eq!(page.entries.len(), 1);
        let named = ["units.gpkg", "units.tif", "line_feature.geojson", "preview.png", "notes.txt"].map(media_type_of);
        assert_eq!(named, [GEOPACKAGE_MEDIA_TYPE, GEOTIFF_MEDIA_TYPE, "application/geo+json", "image/png", "application/octet-stream"]);
    }
}
