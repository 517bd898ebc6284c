//! The registry of maps (later revisions and bundles): `registry.json` in the data root.
//!
//! Invariants:
//! - Every write happens under an exclusive cross-process lock on
//!   `registry.lock`, re-reads the file under that lock, and replaces it
//!   atomically (temporary file, fsync, rename, fsync of the folder), so two
//!   servers on one data root never lose each other's writes and a killed
//!   writer leaves the old or the new file, never a torn one.
//! - A file that is not valid JSON or has an unknown schema version is never
//!   overwritten: every read and write stops with [`RegistryError::Corrupt`].
//! - Reads take no lock (a rename is atomic); they are cached per file identity.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::georef::Revision;
use crate::media::MediaType;

/// The schema version this server writes. Version 2 added map revisions.
pub const SCHEMA_VERSION: u32 = 2;
/// Older versions this server reads (and upgrades on its next write).
const READABLE_VERSIONS: [u32; 2] = [1, SCHEMA_VERSION];

/// The whole registry as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegistryData {
    /// Always [`SCHEMA_VERSION`] once loaded.
    pub schema_version: u32,
    /// Registered maps by ID.
    #[serde(default)]
    pub maps: BTreeMap<String, MapRecord>,
}

impl Default for RegistryData {
    fn default() -> Self {
        RegistryData { schema_version: SCHEMA_VERSION, maps: BTreeMap::new() }
    }
}

/// One registered map file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapRecord {
    /// Stable ID derived from the file's location and content.
    pub map_id: String,
    /// The canonical map root (server-side only).
    pub root: PathBuf,
    /// The canonical path inside the root.
    pub relative_path: String,
    /// Sniffed media type.
    pub media_type: MediaType,
    /// Width in pixels.
    pub width: u64,
    /// Height in pixels.
    pub height: u64,
    /// File size in bytes.
    pub bytes: u64,
    /// SHA-256 of the content.
    pub sha256: String,
    /// Modification time when registered, in nanoseconds since the epoch.
    pub modified_ns: i128,
    /// When the map was first registered (RFC 3339, UTC).
    pub registered_at: String,
    /// Georeferences, oldest first; the last is the map's current one.
    #[serde(default)]
    pub revisions: Vec<Revision>,
}

/// What is wrong with a registry file the server refuses to touch.
#[derive(Debug, Clone, PartialEq)]
pub enum CorruptProblem {
    /// Not JSON, or not the registry's shape.
    InvalidJson(String),
    /// A schema version this server does not know.
    UnknownSchema(u32),
}

/// Registry failures.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The file exists but cannot be used; it is left untouched.
    #[error("{}: {}", path.display(), describe_problem(problem))]
    Corrupt { path: PathBuf, problem: CorruptProblem },
    /// An operating-system call failed.
    #[error("{action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: io::Error },
}

fn describe_problem(problem: &CorruptProblem) -> String {
    match problem {
        CorruptProblem::InvalidJson(reason) => format!("not a valid registry file ({reason})"),
        CorruptProblem::UnknownSchema(version) => {
            format!("schema_version {version} is not one this server knows (it knows {SCHEMA_VERSION})")
        }
    }
}

/// Identity of the registry file's current version (a rename gives a new inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    inode: u64,
    len: u64,
    mtime_ns: i128,
}

/// The registry in one data root.
#[derive(Debug)]
pub struct Registry {
    path: PathBuf,
    lock_path: PathBuf,
    temp_path: PathBuf,
    cache: Mutex<Option<(FileStamp, Arc<RegistryData>)>>,
}

impl Registry {
    /// Opens the registry in `data_root`, creating the folder; fails if the file is corrupt.
    pub fn open(data_root: &Path) -> Result<Registry, RegistryError> {
        std::fs::create_dir_all(data_root).map_err(io_error("create the data root", data_root))?;
        let registry = Registry {
            path: data_root.join("registry.json"),
            lock_path: data_root.join("registry.lock"),
            temp_path: data_root.join("registry.json.tmp"),
            cache: Mutex::new(None),
        };
        registry.load()?;
        Ok(registry)
    }

    /// The registry file's path (for operator messages; never sent to agents).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the server can write here (opens the lock file for writing).
    pub fn check_writable(&self) -> io::Result<()> {
        self.open_lock_file().map(drop)
    }

    fn open_lock_file(&self) -> io::Result<File> {
        OpenOptions::new().create(true).truncate(false).write(true).open(&self.lock_path)
    }

    /// The current contents, re-read only when the file changed.
    pub fn load(&self) -> Result<Arc<RegistryData>, RegistryError> {
        let Some(mut file) = self.open_current()? else {
            return Ok(Arc::new(RegistryData::default()));
        };
        let stamp = stamp(&file).map_err(io_error("read", &self.path))?;
        let mut cache = self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((cached_stamp, data)) = cache.as_ref()
            && *cached_stamp == stamp
        {
            return Ok(Arc::clone(data));
        }
        let data = Arc::new(self.parse(&mut file)?);
        *cache = Some((stamp, Arc::clone(&data)));
        Ok(data)
    }

    /// Applies `change` under the cross-process lock to a fresh read and writes
    /// the result atomically (nothing is written when nothing changed).
    pub fn update<T>(&self, change: impl FnOnce(&mut RegistryData) -> T) -> Result<T, RegistryError> {
        let lock = self.open_lock_file().map_err(io_error("open the lock file", &self.lock_path))?;
        lock.lock().map_err(io_error("lock", &self.lock_path))?;
        let before = match self.open_current()? {
            Some(mut file) => self.parse(&mut file)?,
            None => RegistryData::default(),
        };
        let mut after = before.clone();
        let outcome = change(&mut after);
        if after != before {
            self.replace_file(&after)?;
        }
        drop(lock);
        Ok(outcome)
    }

    fn open_current(&self) -> Result<Option<File>, RegistryError> {
        match File::open(&self.path) {
            Ok(file) => Ok(Some(file)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(io_error("open", &self.path)(error)),
        }
    }

    fn parse(&self, file: &mut File) -> Result<RegistryData, RegistryError> {
        let corrupt = |problem| RegistryError::Corrupt { path: self.path.clone(), problem };
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(|error| match error.kind() {
            io::ErrorKind::InvalidData => corrupt(CorruptProblem::InvalidJson("not UTF-8 text".into())),
            _ => io_error("read", &self.path)(error),
        })?;
        #[derive(Deserialize)]
        struct VersionOnly {
            schema_version: u32,
        }
        let version: VersionOnly = serde_json::from_str(&text).map_err(|e| corrupt(CorruptProblem::InvalidJson(e.to_string())))?;
        if !READABLE_VERSIONS.contains(&version.schema_version) {
            return Err(corrupt(CorruptProblem::UnknownSchema(version.schema_version)));
        }
        let mut data: RegistryData = serde_json::from_str(&text).map_err(|e| corrupt(CorruptProblem::InvalidJson(e.to_string())))?;
        data.schema_version = SCHEMA_VERSION;
        Ok(data)
    }

    fn replace_file(&self, data: &RegistryData) -> Result<(), RegistryError> {
        let mut bytes = serde_json::to_vec_pretty(data).expect("the registry always serializes");
        bytes.push(b'\n');
        let mut temp = File::create(&self.temp_path).map_err(io_error("create", &self.temp_path))?;
        temp.write_all(&bytes).map_err(io_error("write", &self.temp_path))?;
        temp.sync_all().map_err(io_error("flush", &self.temp_path))?;
        std::fs::rename(&self.temp_path, &self.path).map_err(io_error("replace", &self.path))?;
        let folder = self.path.parent().expect("the registry file is inside the data root");
        File::open(folder).and_then(|dir| dir.sync_all()).map_err(io_error("flush", folder))
    }
}

fn stamp(file: &File) -> io::Result<FileStamp> {
    let metadata = file.metadata()?;
    Ok(FileStamp { inode: metadata.ino(), len: metadata.len(), mtime_ns: modified_ns(&metadata) })
}

/// A file's modification time in nanoseconds since the epoch (as `MapRecord::modified_ns` stores it).
pub fn modified_ns(metadata: &std::fs::Metadata) -> i128 {
    i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec())
}

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> RegistryError + 'a {
    move |source| RegistryError::Io { action, path: path.to_owned(), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> MapRecord {
        MapRecord {
            map_id: id.into(),
            root: "/r".into(),
            relative_path: format!("{id}.png"),
            media_type: MediaType::Png,
            width: 1,
            height: 1,
            bytes: 1,
            sha256: "0".repeat(64),
            modified_ns: 0,
            registered_at: "2026-01-01T00:00:00Z".into(),
            revisions: Vec::new(),
        }
    }

    #[test]
    fn writes_are_seen_by_a_second_handle_on_the_same_root() {
        let dir = tempfile::tempdir().unwrap();
        let first = Registry::open(dir.path()).unwrap();
        let second = Registry::open(dir.path()).unwrap();
        first.update(|data| data.maps.insert("a".into(), record("a"))).unwrap();
        assert!(second.load().unwrap().maps.contains_key("a"));
        second.update(|data| data.maps.insert("b".into(), record("b"))).unwrap();
        let keys: Vec<_> = first.load().unwrap().maps.keys().cloned().collect();
        assert_eq!(keys, ["a", "b"]);
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::thread::scope(|scope| {
            for writer in 0..4 {
                let root = dir.path();
                scope.spawn(move || {
                    let registry = Registry::open(root).unwrap();
                    for n in 0..25 {
                        let id = format!("{writer}-{n}");
                        registry.update(|data| data.maps.insert(id.clone(), record(&id))).unwrap();
                    }
                });
            }
        });
        assert_eq!(Registry::open(dir.path()).unwrap().load().unwrap().maps.len(), 100);
    }

    #[test]
    fn a_corrupt_or_unknown_file_is_refused_and_left_untouched() {
        for (content, expect_schema) in [("{not json", false), ("{\"schema_version\": 9, \"maps\": {}}", true)] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("registry.json");
            std::fs::write(&path, content).unwrap();
            let error = Registry::open(dir.path()).unwrap_err();
            let RegistryError::Corrupt { problem, .. } = &error else { panic!("{error:?}") };
            assert_eq!(matches!(problem, CorruptProblem::UnknownSchema(9)), expect_schema, "{problem:?}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
        }
    }

    #[test]
    fn a_version_1_registry_is_read_and_upgraded_on_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.json");
        let mut v1 = serde_json::to_value(RegistryData { schema_version: 1, maps: BTreeMap::from([("a".to_owned(), record("a"))]) }).unwrap();
        v1["maps"]["a"].as_object_mut().unwrap().remove("revisions");
        std::fs::write(&path, v1.to_string()).unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        assert!(registry.load().unwrap().maps["a"].revisions.is_empty());
        registry.update(|data| data.maps.insert("b".into(), record("b"))).unwrap();
        let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written["schema_version"], SCHEMA_VERSION);
    }

    #[test]
    fn an_unchanged_update_does_not_rewrite_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        registry.update(|data| data.maps.insert("a".into(), record("a"))).unwrap();
        let inode = std::fs::metadata(registry.path()).unwrap().ino();
        registry.update(|data| data.maps.insert("a".into(), record("a"))).unwrap();
        assert_eq!(std::fs::metadata(registry.path()).unwrap().ino(), inode);
    }
}
