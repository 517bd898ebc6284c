//! A registered map as every use case meets it: its record, and its file opened
//! again inside its root after checking it is still the one registered.
//!
//! Invariants: a map's file is read only through the handle its root opens
//! (`MapRoots`), and only after its size (and, when its time moved, its hash)
//! still matches the registry; anything else is `artifact_not_found` with the
//! reason, and the path to register again when there is one.

use geomap_georef::Revision;
use geomap_model::modified_ns;
use geomap_store::media::MediaError;
use geomap_store::registry::MapRecord;
use geomap_store::roots::RootsError;
use geomap_vision::VisionError;
use geomap_vision::image::Rgb;

use crate::uris::{artifact_uri, revision_dir};
use crate::{App, AppError, MapGone};

/// A registered map whose file is still the one registered, opened inside its root.
pub struct RegisteredMap {
    /// What the registry holds.
    pub record: MapRecord,
    /// Its root's index among the allowed roots.
    pub root_index: usize,
    /// The file, opened through its root's handle.
    pub file: std::fs::File,
}

impl RegisteredMap {
    /// The map's ID.
    pub fn id(&self) -> &str {
        &self.record.map_id
    }

    /// Fails with `unsupported_media` (`no_pixels`) for a map bundle, which has no pixels to `action`.
    pub fn pixels(&self, action: &'static str) -> Result<(), AppError> {
        match self.record.media_type.has_pixels() {
            true => Ok(()),
            false => Err(MediaError::NoPixels { action }.into()),
        }
    }

    /// The scan's pixels in `region` (whole pixels), from the pixel store (the first read decodes the scan into tiles).
    pub fn window(&self, app: &App, region: (u32, u32, u32, u32)) -> Result<Rgb, VisionError> {
        app.pixels.window(&self.record.sha256, &self.file, app.settings.max_image_pixels, region)
    }
}

impl App {
    /// Looks `map_id` up and checks its file is unchanged (size, then content when the mtime moved).
    pub fn open_registered(&self, map_id: &str) -> Result<RegisteredMap, AppError> {
        let record = self.registry.map(map_id)?;
        let gone = |reason, record: Option<&MapRecord>| AppError::MapNotFound {
            map_id: map_id.to_owned(),
            reason,
            registered_as: record.map(|r| r.relative_path.clone()),
        };
        let record = record.ok_or_else(|| gone(MapGone::UnknownId, None))?;
        let root_index = self.roots.index_of(&record.root).ok_or_else(|| gone(MapGone::RootNoLongerAllowed, Some(&record)))?;
        let mut file = self.roots.reopen(&record.root, &record.relative_path).map_err(|error| match error {
            RootsError::OutsideRoots => gone(MapGone::RootNoLongerAllowed, Some(&record)),
            _ => gone(MapGone::FileMissing, Some(&record)),
        })?;
        let metadata = file.metadata().map_err(MediaError::Io)?;
        if metadata.len() != record.bytes {
            return Err(gone(MapGone::FileChanged, Some(&record)));
        }
        if modified_ns(&metadata) != record.modified_ns && geomap_model::content_sha256(&mut file).map_err(MediaError::Io)? != record.sha256 {
            return Err(gone(MapGone::FileChanged, Some(&record)));
        }
        Ok(RegisteredMap { record, root_index, file })
    }

    /// `revision` with each artifact's resource URI and server path filled in.
    pub fn located(&self, map_id: &str, mut revision: Revision) -> Revision {
        let dir = revision_dir(&self.settings.artifact_root, map_id, &revision.revision_id);
        for artifact in &mut revision.artifacts {
            artifact.resource_uri = Some(artifact_uri(map_id, &revision.revision_id, &artifact.name));
            artifact.path = Some(dir.join(&artifact.name).display().to_string());
        }
        revision
    }
}
