//! Assets: the pinned catalog of approved ones and those the operator declares
//! in the config file, what is installed under `$GEOMAP_DATA_ROOT/assets/<id>/`,
//! and the installer.
//!
//! Invariants:
//! - Only catalog files (approved, or declared by the operator), pinned by size
//!   and sha256, are ever installed; a download that does not match is never
//!   moved into place.
//! - An asset appears whole or not at all: it is built in a temporary folder
//!   inside `assets/` and swapped into place with one `rename` (an earlier good
//!   copy stays until then). Every asset folder holds a manifest
//!   (`.asset.json`) written last; a folder without one is not installed.
//! - An operator's own copy (`custom_path`) is never written.
//! - State is read from the disk on every call, so a running server sees what
//!   the CLI installed; only a file's hash is remembered, with the modification
//!   time it was taken at (a file that moves again is hashed again).

mod catalog;
pub mod failure;
mod install;

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use catalog::{AssetKind, AssetOrigin, Catalog, CatalogAsset, CatalogFile, OverrideError, declaration_lines};
pub use install::{Installer, Outcome, file_sha256};

use geomap_model::data_root::ASSETS_DIR;

/// The manifest inside an installed asset's folder.
pub const MANIFEST_FILE: &str = ".asset.json";

/// Whether an asset can be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssetState {
    /// Installed by the installer, every file as pinned.
    Installed,
    /// Not installed.
    Missing,
    /// The operator's own files (config `[assets.<id>] path`); never installed over.
    Custom,
    /// Installed, but a file's bytes no longer match: never used; install again.
    Corrupt,
}

impl AssetState {
    /// Whether an asset in this state can be read: installed, or the operator's own copy.
    pub fn usable(self) -> bool {
        matches!(self, AssetState::Installed | AssetState::Custom)
    }
}

/// An asset's state and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetStatus {
    /// The state.
    pub state: AssetState,
    /// The folder the asset is (or would be) read from.
    pub path: PathBuf,
    /// Why it is corrupt.
    pub problem: Option<String>,
}

/// What the installer wrote beside an asset's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    id: String,
    version: String,
    files: Vec<ManifestFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ManifestFile {
    name: String,
    size: u64,
    sha256: String,
    /// Modification time when installed: unchanged means the bytes were not rewritten.
    modified_ns: i64,
}

/// Why installing failed, as `details.reason` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureReason {
    /// The bytes do not match the pinned size or sha256.
    ChecksumMismatch,
    /// The server answered with an HTTP error status.
    HttpStatus(u16),
    /// The host could not be reached.
    Unreachable,
    /// No byte arrived for `GEOMAP_ASSET_TIMEOUT`.
    Timeout,
    /// The body ended before the pinned size.
    Truncated,
    /// The disk is full.
    DiskFull,
    /// The data root cannot be written.
    ReadOnly,
    /// The caller cancelled.
    Cancelled,
    /// No source is known: the operator provides the file (a pinned source in the config file, or `--from FILE`).
    NoSource,
}

impl FailureReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureReason::ChecksumMismatch => "checksum_mismatch",
            FailureReason::HttpStatus(_) => "http_status",
            FailureReason::Unreachable => "unreachable",
            FailureReason::Timeout => "timeout",
            FailureReason::Truncated => "truncated",
            FailureReason::DiskFull => "disk_full",
            FailureReason::ReadOnly => "read_only",
            FailureReason::Cancelled => "cancelled",
            FailureReason::NoSource => "no_source",
        }
    }
}

/// Asset failures.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AssetError {
    /// No asset has this ID, approved or declared in the config file.
    #[error("no asset is called {id:?} (known: {}); an asset a provider of the operator's own reads is declared in the config file (GEOMAP_CONFIG) under [assets.{id}]", known.join(", "))]
    Unknown { id: String, known: Vec<String> },
    /// The asset is the operator's own copy; the installer never touches it.
    #[error("asset {id} is the operator's own copy at {}; it is never installed over", path.display())]
    Unmanaged { id: String, path: PathBuf },
    /// A library caller asked to prepare while the operator's settings disable it.
    #[error("preparation is disabled ({variable}=false)")]
    PreparationDisabled { variable: &'static str },
    /// Installing failed; nothing half-installed is visible.
    #[error("installing {id} failed ({}): {detail}", reason.as_str())]
    Install { id: String, file: Option<String>, url: Option<String>, reason: FailureReason, detail: String },
}

impl AssetError {
    /// The asset the failure is about (empty when it is about none).
    pub fn asset(&self) -> &str {
        match self {
            AssetError::Unknown { id, .. } | AssetError::Unmanaged { id, .. } | AssetError::Install { id, .. } => id,
            AssetError::PreparationDisabled { .. } => "",
        }
    }
}

/// The state of `asset` under `data_root` as the disk says now: sizes and
/// modification times against the manifest, and a full hash of any file
/// whose time moved.
pub fn status(asset: &CatalogAsset, data_root: &Path) -> AssetStatus {
    if let Some(path) = &asset.custom_path {
        return AssetStatus { state: AssetState::Custom, path: path.clone(), problem: None };
    }
    let path = asset_dir(data_root, &asset.id);
    let at = |state, problem: Option<String>| AssetStatus { state, path: path.clone(), problem };
    let manifest = match std::fs::read(path.join(MANIFEST_FILE)) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && !path.exists() => return at(AssetState::Missing, None),
        Err(_) => return at(AssetState::Corrupt, Some("its manifest is missing".to_owned())),
    };
    let Ok(manifest) = serde_json::from_slice::<Manifest>(&manifest) else {
        return at(AssetState::Corrupt, Some("its manifest is not readable".to_owned()));
    };
    for file in &asset.files {
        let Some(recorded) = manifest.files.iter().find(|recorded| recorded.name == file.name) else {
            return at(AssetState::Corrupt, Some(format!("{} is not part of the installed copy", file.name)));
        };
        // An unpinned file (imported by the operator) is held to the hash recorded at import.
        if file.pinned() && recorded.sha256 != file.sha256 {
            return at(AssetState::Corrupt, Some(format!("{} is not the approved version", file.name)));
        }
        let on_disk = path.join(&file.name);
        let Ok(metadata) = std::fs::metadata(&on_disk) else {
            return at(AssetState::Corrupt, Some(format!("{} is missing", file.name)));
        };
        if metadata.len() != recorded.size {
            return at(AssetState::Corrupt, Some(format!("{} has {} bytes, not {}", file.name, metadata.len(), recorded.size)));
        }
        let modified = geomap_model::modified_ns(&metadata);
        if modified != recorded.modified_ns && !verified_since(&on_disk, modified, &recorded.sha256) {
            return at(AssetState::Corrupt, Some(format!("{}'s bytes no longer match its sha256", file.name)));
        }
    }
    at(AssetState::Installed, None)
}

/// Whether `file`, whose modification time moved since its install to `modified`, still hashes to
/// `sha256`. A match is remembered with that time, so the file is hashed again only when it moves
/// again (a copy touched by a backup tool is not re-hashed on every call).
fn verified_since(file: &Path, modified: i64, sha256: &str) -> bool {
    static VERIFIED: std::sync::Mutex<Vec<(PathBuf, i64, String)>> = std::sync::Mutex::new(Vec::new());
    let known = |list: &Vec<(PathBuf, i64, String)>| list.iter().any(|(path, time, sum)| path == file && *time == modified && sum == sha256);
    if VERIFIED.lock().is_ok_and(|list| known(&list)) {
        return true;
    }
    let matches = install::file_sha256(file).ok().as_deref() == Some(sha256);
    if matches && let Ok(mut list) = VERIFIED.lock() {
        list.retain(|(path, ..)| path != file);
        list.push((file.to_owned(), modified, sha256.to_owned()));
    }
    matches
}

/// `$data_root/assets/<id>`.
pub fn asset_dir(data_root: &Path, id: &str) -> PathBuf {
    data_root.join(ASSETS_DIR).join(id)
}
