//! The registry: maps, their revisions and the files each revision wrote, as
//! rows of `registry.sqlite` (SQLite in WAL mode) in the data root.
//!
//! Invariants:
//! - Nothing loads the whole registry: every call reads or writes the rows it
//!   needs through an index, so its cost does not grow with the archive.
//! - Writes are single transactions begun `IMMEDIATE` (they wait for another
//!   process's write instead of failing, up to [`BUSY_TIMEOUT`]); a commit is
//!   on disk before the call returns, and a process killed at any moment
//!   leaves a database that opens with every committed write.
//! - An unchanged update writes nothing: re-registering an unchanged file
//!   only reads.
//! - A file that fails a check (not a database, cut short, a newer schema,
//!   damage SQLite reports) is never written: it is [`RegistryError::Corrupt`].
//! - A `registry.json` from an earlier version is imported in one transaction
//!   on open, then kept as `registry.json.migrated` (never deleted); an
//!   interrupted import runs again on the next open.

mod database;
mod document;

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use crate::media::MediaType;
use geomap_model::georeference::{Artifact, Revision};

pub use database::{BUSY_TIMEOUT, SCHEMA_VERSION};
pub use document::{DOCUMENT_VERSION, DocumentWriter, RegistryDocument};

/// The database's file name in the data root.
pub const DATABASE_FILE: &str = "registry.sqlite";
/// The JSON registry of earlier versions, imported on the first open.
pub const LEGACY_FILE: &str = "registry.json";

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
    /// Modification time when last registered, in nanoseconds since the epoch.
    pub modified_ns: i64,
    /// When the map was first registered (RFC 3339, UTC).
    pub registered_at: String,
    /// Georeferences, oldest first; the last is the map's current one.
    #[serde(default)]
    pub revisions: Vec<Revision>,
}

/// What is wrong with a registry file the server refuses to touch.
#[derive(Debug, Clone, PartialEq)]
pub enum CorruptProblem {
    /// A JSON registry that is not JSON, or not the registry's shape.
    InvalidJson(String),
    /// A schema version this server does not know.
    UnknownSchema(u32),
    /// Not an SQLite database at all (what it looks like instead).
    NotADatabase(&'static str),
    /// Shorter than its own header says: the end of the file is missing.
    Truncated { bytes: u64, expected: u64 },
    /// SQLite reports damage, or a row this server cannot read.
    Malformed(String),
}

impl CorruptProblem {
    /// The `details.reason` an agent sees for this problem.
    pub fn reason(&self) -> &'static str {
        match self {
            CorruptProblem::InvalidJson(_) => "invalid_json",
            CorruptProblem::UnknownSchema(_) => "unknown_schema_version",
            CorruptProblem::NotADatabase(_) => "not_a_database",
            CorruptProblem::Truncated { .. } => "truncated",
            CorruptProblem::Malformed(_) => "malformed",
        }
    }
}

impl std::fmt::Display for CorruptProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CorruptProblem::InvalidJson(reason) => write!(f, "not a valid registry file ({reason})"),
            CorruptProblem::UnknownSchema(version) => {
                write!(f, "schema version {version} is newer than this server knows (it knows up to {SCHEMA_VERSION}, or {DOCUMENT_VERSION} for JSON)")
            }
            CorruptProblem::NotADatabase(what) => write!(f, "not an SQLite database (it is {what})"),
            CorruptProblem::Truncated { bytes, expected } => write!(f, "cut short: {bytes} bytes where its header says {expected}"),
            CorruptProblem::Malformed(reason) => write!(f, "damaged ({reason})"),
        }
    }
}

/// Registry failures.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The file exists but cannot be used; it is left untouched.
    #[error("{}: {problem}", path.display())]
    Corrupt { path: PathBuf, problem: CorruptProblem },
    /// An operating-system call failed.
    #[error("{action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: io::Error },
    /// SQLite failed for a reason other than damage (full disk, permissions, a timeout).
    #[error("could not {action} {}: {source}", path.display())]
    Database { action: &'static str, path: PathBuf, source: rusqlite::Error },
    /// `import` restores only into an empty registry.
    #[error("{} already holds {maps} maps; import restores into an empty data root only", path.display())]
    NotEmpty { path: PathBuf, maps: u64 },
}

/// How much the registry holds (kept by triggers: reading it costs the same at any size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Registered maps.
    pub maps: u64,
    /// Revisions of all maps.
    pub revisions: u64,
    /// Knowledge bundles.
    pub bundles: u64,
}

/// A registered map as listed (without its revisions).
#[derive(Debug, Clone, PartialEq)]
pub struct MapListing {
    /// The map's ID.
    pub map_id: String,
    /// Its path inside its root.
    pub relative_path: String,
    /// Its type.
    pub media_type: MediaType,
    /// Width in pixels.
    pub width: u64,
    /// Height in pixels.
    pub height: u64,
}

/// One thing the registry lists as a resource.
#[derive(Debug, Clone, PartialEq)]
pub enum Listed {
    /// A registered map.
    Map(MapListing),
    /// A file a revision wrote.
    Artifact { map_id: String, revision_id: String, artifact: Artifact },
}

/// Where a listing resumes: every map by insertion, then every artifact by
/// insertion. Row ids only grow, so a position stays valid while others insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListPosition {
    /// After the map with this row id ([`ListPosition::START`] is before the first).
    AfterMap(i64),
    /// After the artifact with this row id (every map listed).
    AfterArtifact(i64),
}

impl ListPosition {
    /// The beginning of the listing (row ids start at 1).
    pub const START: ListPosition = ListPosition::AfterMap(0);
}

/// One page of the listing.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The entries, in listing order.
    pub entries: Vec<Listed>,
    /// Where the next page starts, when there is one.
    pub next: Option<ListPosition>,
}

/// What importing a registry document added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Imported {
    /// Maps added.
    pub maps: usize,
    /// Revisions added.
    pub revisions: usize,
}

/// What the full check of `stratigraphic-amenity check` found.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// Sizes.
    pub counts: Counts,
    /// SQLite's `integrity_check` findings (empty when the file is sound).
    pub problems: Vec<String>,
}

/// The registry in one data root.
#[derive(Debug)]
pub struct Registry {
    pool: database::Pool,
    maps: Mutex<KeptMaps>,
}

/// Map records read since the database last changed: [`Registry::map`] answers from them while
/// [`database::Pool::data_version`] stays where it was when they were read.
#[derive(Debug, Default)]
struct KeptMaps {
    data_version: Option<i64>,
    records: HashMap<String, MapRecord>,
}

/// At most this many map records are kept; past it they are all dropped and read again.
const KEPT_MAPS: usize = 4096;

/// What the tools store under a map's `layouts/` folder, each kind in a table of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// A `geomap-layout/v1` document (`lay_` IDs), written by geomap_process_image.
    Layout,
    /// A `geomap-text/v1` document (`txt_` IDs), written by geomap_read_text.
    Reading,
    /// A `geomap-units/v1` document (`unt_` IDs), written by geomap_extract_units.
    Units,
}

impl Document {
    /// Its table and ID column.
    fn table(self) -> (&'static str, &'static str) {
        match self {
            Document::Layout => ("layouts", "layout_id"),
            Document::Reading => ("readings", "reading_id"),
            Document::Units => ("unit_extractions", "units_id"),
        }
    }

    /// What recording one is called in errors.
    fn recording(self) -> &'static str {
        match self {
            Document::Layout => "record a layout in",
            Document::Reading => "record a text reading in",
            Document::Units => "record a unit extraction in",
        }
    }

    /// What reading one is called in errors.
    fn reading(self) -> &'static str {
        match self {
            Document::Layout => "read a layout from",
            Document::Reading => "read a text reading from",
            Document::Units => "read a unit extraction from",
        }
    }
}

impl Registry {
    /// Opens the registry in `data_root` (creating the folder and the
    /// database), refusing a damaged file, and imports a `registry.json` left
    /// by an earlier version.
    pub fn open(data_root: &Path) -> Result<Registry, RegistryError> {
        std::fs::create_dir_all(data_root).map_err(|source| RegistryError::Io { action: "create the data root", path: data_root.to_owned(), source })?;
        let registry = Registry { pool: database::Pool::open(&data_root.join(DATABASE_FILE))?, maps: Mutex::default() };
        registry.migrate_legacy(&data_root.join(LEGACY_FILE))?;
        Ok(registry)
    }

    /// Opens an existing registry read-only, creating and migrating nothing
    /// (for `check`); `None` when the data root has no database yet.
    pub fn open_read_only(data_root: &Path) -> Result<Option<Registry>, RegistryError> {
        let path = data_root.join(DATABASE_FILE);
        match database::inspect_file(&path)? {
            database::FileState::Absent => Ok(None),
            database::FileState::Present => Ok(Some(Registry { pool: database::Pool::read_only(&path)?, maps: Mutex::default() })),
        }
    }

    /// The database file's path (for operator messages; never sent to agents).
    pub fn path(&self) -> &Path {
        self.pool.path()
    }

    /// Whether the server can write here: the database file and its folder (where SQLite keeps its
    /// write-ahead log), asked with access(2). Never by opening the file: closing any descriptor of it
    /// drops every POSIX lock this process holds on it, SQLite's included, and concurrent writers then
    /// corrupt the database (as 50 agents calling geomap_capabilities beside writes did).
    pub fn check_writable(&self) -> io::Result<()> {
        let folder = self.path().parent().expect("the database file is inside the data root");
        for path in [self.path(), folder] {
            rustix::fs::access(path, rustix::fs::Access::WRITE_OK).map_err(io::Error::from)?;
        }
        Ok(())
    }

    /// Records `candidate` (with no revisions), or returns the map already
    /// registered under its ID with the file's new modification time; `true`
    /// when it was already registered. An unchanged file writes nothing.
    pub fn register(&self, candidate: &MapRecord) -> Result<(MapRecord, bool), RegistryError> {
        self.pool.run("register a map in", |connection| {
            if let Some(existing) = map_by_id(connection, &candidate.map_id)?
                && existing.modified_ns == candidate.modified_ns
            {
                return Ok((existing, true));
            }
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let existing: Option<i64> =
                transaction.prepare_cached("SELECT modified_ns FROM maps WHERE map_id = ?1")?.query_row([&candidate.map_id], |row| row.get(0)).optional()?;
            match existing {
                Some(modified_ns) if modified_ns == candidate.modified_ns => {}
                Some(_) => {
                    transaction
                        .prepare_cached("UPDATE maps SET modified_ns = ?2 WHERE map_id = ?1")?
                        .execute(params![candidate.map_id, candidate.modified_ns])?;
                }
                None => insert_map(&transaction, candidate)?,
            }
            let record = map_by_id(&transaction, &candidate.map_id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
            transaction.commit()?;
            Ok((record, existing.is_some()))
        })
    }

    /// The map registered as `map_id`, with its revisions, read from one snapshot.
    /// Kept from an earlier read while no connection has committed since, so a map described again
    /// costs one `PRAGMA data_version` instead of three queries.
    pub fn map(&self, map_id: &str) -> Result<Option<MapRecord>, RegistryError> {
        let version = self.pool.data_version()?;
        {
            let mut kept = self.maps.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if kept.data_version != Some(version) || kept.records.len() >= KEPT_MAPS {
                *kept = KeptMaps { data_version: Some(version), records: HashMap::new() };
            }
            if let Some(record) = kept.records.get(map_id) {
                return Ok(Some(record.clone()));
            }
        }
        let record = self.pool.run("read a map from", |connection| map_by_id(&*connection.transaction()?, map_id))?;
        if let Some(record) = &record {
            let mut kept = self.maps.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            // Read after `version`: at worst newer than it, and the next commit drops it.
            if kept.data_version == Some(version) {
                kept.records.insert(map_id.to_owned(), record.clone());
            }
        }
        Ok(record)
    }

    /// Appends `revision` to the map `map_id`; `false` when no such map exists.
    pub fn add_revision(&self, map_id: &str, revision: &Revision) -> Result<bool, RegistryError> {
        self.pool.run("record a revision in", |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some(map) = transaction.prepare_cached("SELECT id FROM maps WHERE map_id = ?1")?.query_row([map_id], |row| row.get::<_, i64>(0)).optional()?
            else {
                return Ok(false);
            };
            insert_revision(&transaction, map, revision)?;
            transaction.commit()?;
            Ok(true)
        })
    }

    /// The artifact `name` of revision `revision_id` of map `map_id`, if the registry recorded it.
    pub fn artifact(&self, map_id: &str, revision_id: &str, name: &str) -> Result<Option<Artifact>, RegistryError> {
        self.pool.run("read an artifact from", |connection| {
            connection
                .prepare_cached(
                    "SELECT artifacts.name, artifacts.media_type, artifacts.bytes FROM artifacts \
                     JOIN revisions ON artifacts.revision = revisions.id JOIN maps ON revisions.map = maps.id \
                     WHERE maps.map_id = ?1 AND revisions.revision_id = ?2 AND artifacts.name = ?3",
                )?
                .query_row([map_id, revision_id, name], artifact_from_row)
                .optional()
        })
    }

    /// Records a knowledge bundle: `document` (the bundle as JSON) and, when
    /// its area came from a map, that map and revision. `false` when `map_id`
    /// names no registered map.
    pub fn add_bundle(&self, bundle_id: &str, source: Option<(&str, &str)>, created_at: &str, document: &str) -> Result<bool, RegistryError> {
        self.pool.run("record a knowledge bundle in", |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let map = match source {
                Some((map_id, _)) => {
                    match transaction.prepare_cached("SELECT id FROM maps WHERE map_id = ?1")?.query_row([map_id], |row| row.get::<_, i64>(0)).optional()? {
                        Some(map) => Some(map),
                        None => return Ok(false),
                    }
                }
                None => None,
            };
            transaction
                .prepare_cached("INSERT INTO bundles (bundle_id, map, revision_id, created_at, document) VALUES (?1, ?2, ?3, ?4, ?5)")?
                .execute(params![bundle_id, map, source.map(|(_, revision_id)| revision_id), created_at, document])?;
            transaction.commit()?;
            Ok(true)
        })
    }

    /// Every revision, layout, reading and unit extraction ID recorded: what the artifact folders may hold (see [`crate::sweep`]).
    pub fn artifact_ids(&self) -> Result<std::collections::HashSet<String>, RegistryError> {
        self.pool.run("list the artifacts of", |connection| {
            let mut query = connection.prepare_cached(
                "SELECT revision_id FROM revisions UNION ALL SELECT layout_id FROM layouts UNION ALL SELECT reading_id FROM readings \
                 UNION ALL SELECT units_id FROM unit_extractions",
            )?;
            let ids = query.query_map([], |row| row.get::<_, String>(0))?.collect::<Result<_, _>>()?;
            Ok(ids)
        })
    }

    /// Records document `id` of kind `kind` for map `map_id` (`document`: its JSON); `false` when no
    /// such map exists.
    pub fn add_document(&self, kind: Document, id: &str, map_id: &str, created_at: &str, document: &str) -> Result<bool, RegistryError> {
        self.pool.run(kind.recording(), |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some(map) = transaction.prepare_cached("SELECT id FROM maps WHERE map_id = ?1")?.query_row([map_id], |row| row.get::<_, i64>(0)).optional()?
            else {
                return Ok(false);
            };
            let (table, id_column) = kind.table();
            transaction
                .prepare_cached(&format!("INSERT INTO {table} ({id_column}, map, created_at, document) VALUES (?1, ?2, ?3, ?4)"))?
                .execute(params![id, map, created_at, document])?;
            transaction.commit()?;
            Ok(true)
        })
    }

    /// Document `id` of kind `kind` of map `map_id`, as the JSON text it was recorded with.
    pub fn document(&self, kind: Document, map_id: &str, id: &str) -> Result<Option<String>, RegistryError> {
        let (table, id_column) = kind.table();
        self.pool.run(kind.reading(), |connection| {
            connection
                .prepare_cached(&format!(
                    "SELECT {table}.document FROM {table} JOIN maps ON {table}.map = maps.id WHERE maps.map_id = ?1 AND {table}.{id_column} = ?2"
                ))?
                .query_row([map_id, id], |row| row.get(0))
                .optional()
        })
    }

    /// The newest document of `kind` for map `map_id` (a layout made by geomap_process_image, a
    /// reading made by geomap_read_text), as its ID and the JSON text it was recorded with.
    pub fn newest_document(&self, kind: Document, map_id: &str) -> Result<Option<(String, String)>, RegistryError> {
        let (table, id_column) = kind.table();
        self.pool.run(kind.reading(), |connection| {
            connection
                .prepare_cached(&format!(
                    "SELECT {table}.{id_column}, {table}.document FROM {table} JOIN maps ON {table}.map = maps.id \
                     WHERE maps.map_id = ?1 ORDER BY {table}.id DESC LIMIT 1"
                ))?
                .query_row([map_id], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()
        })
    }

    /// The knowledge bundle `bundle_id` as the JSON text it was recorded with.
    pub fn bundle(&self, bundle_id: &str) -> Result<Option<String>, RegistryError> {
        self.pool.run("read a knowledge bundle from", |connection| {
            connection.prepare_cached("SELECT document FROM bundles WHERE bundle_id = ?1")?.query_row([bundle_id], |row| row.get(0)).optional()
        })
    }

    /// How many maps and revisions the registry holds.
    pub fn counts(&self) -> Result<Counts, RegistryError> {
        self.pool.run("count the maps in", |connection| read_counts(connection))
    }

    /// Up to `limit` entries of the listing from `position`: maps, then artifacts.
    pub fn list(&self, position: ListPosition, limit: usize) -> Result<ListPage, RegistryError> {
        self.pool.run("list", |connection| {
            let mut entries = Vec::new();
            let mut last_map = match position {
                ListPosition::AfterMap(id) => Some(id),
                ListPosition::AfterArtifact(_) => None,
            };
            if let Some(after) = last_map {
                let mut statement =
                    connection.prepare_cached("SELECT id, map_id, relative_path, media_type, width, height FROM maps WHERE id > ?1 ORDER BY id LIMIT ?2")?;
                let mut rows = statement.query(params![after, limit as i64 + 1])?;
                while let Some(row) = rows.next()? {
                    if entries.len() == limit {
                        return Ok(ListPage { entries, next: last_map.map(ListPosition::AfterMap) });
                    }
                    last_map = Some(row.get(0)?);
                    entries.push(Listed::Map(MapListing {
                        map_id: row.get(1)?,
                        relative_path: row.get(2)?,
                        media_type: media_type_from(row, 3)?,
                        width: unsigned(row, 4)?,
                        height: unsigned(row, 5)?,
                    }));
                }
            }
            let after_artifact = match position {
                ListPosition::AfterArtifact(id) => id,
                _ => 0,
            };
            let mut statement = connection.prepare_cached(
                "SELECT artifacts.id, maps.map_id, revisions.revision_id, artifacts.name, artifacts.media_type, artifacts.bytes FROM artifacts \
                 JOIN revisions ON artifacts.revision = revisions.id JOIN maps ON revisions.map = maps.id \
                 WHERE artifacts.id > ?1 ORDER BY artifacts.id LIMIT ?2",
            )?;
            let room = limit - entries.len();
            let mut rows = statement.query(params![after_artifact, room as i64 + 1])?;
            let mut last_artifact = None;
            while let Some(row) = rows.next()? {
                if entries.len() == limit {
                    let next = match last_artifact {
                        Some(id) => ListPosition::AfterArtifact(id),
                        None => ListPosition::AfterMap(last_map.unwrap_or_default()),
                    };
                    return Ok(ListPage { entries, next: Some(next) });
                }
                last_artifact = Some(row.get(0)?);
                entries.push(Listed::Artifact {
                    map_id: row.get(1)?,
                    revision_id: row.get(2)?,
                    artifact: Artifact { name: row.get(3)?, media_type: row.get(4)?, bytes: unsigned(row, 5)?, resource_uri: None, path: None },
                });
            }
            Ok(ListPage { entries, next: None })
        })
    }

    /// Writes every map with its revisions to `out` as a registry document,
    /// one map at a time, from one consistent snapshot; returns how many maps.
    pub fn export<W: Write>(&self, out: W) -> Result<usize, RegistryError> {
        let path = self.path().to_owned();
        let write_error = |source| RegistryError::Io { action: "write the export of", path: path.clone(), source };
        let mut writer = DocumentWriter::start(out).map_err(write_error)?;
        let mut failed_write = None;
        self.pool.run("export", |connection| {
            let snapshot = connection.transaction()?; // one read snapshot for the whole export
            let mut after = 0_i64;
            loop {
                let ids: Vec<(i64, String)> = snapshot
                    .prepare_cached("SELECT id, map_id FROM maps WHERE id > ?1 ORDER BY id LIMIT 500")?
                    .query_map([after], |row| Ok((row.get(0)?, row.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?;
                let Some((last, _)) = ids.last() else { break };
                after = *last;
                for (_, map_id) in &ids {
                    let record = map_by_id(&snapshot, map_id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
                    if let Err(error) = writer.map(&record) {
                        failed_write = Some(error);
                        return Ok(());
                    }
                }
            }
            Ok(())
        })?;
        if let Some(error) = failed_write {
            return Err(write_error(error));
        }
        writer.finish().map(|(_, maps)| maps).map_err(write_error)
    }

    /// Restores `document` into this registry, which must hold no map yet,
    /// in one transaction.
    pub fn import(&self, document: &RegistryDocument) -> Result<Imported, RegistryError> {
        let mut held = 0;
        let imported = self.pool.run("import into", |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            held = read_counts(&transaction)?.maps;
            if held > 0 {
                return Ok(None);
            }
            let imported = insert_document(&transaction, document)?;
            transaction.commit()?;
            Ok(Some(imported))
        })?;
        imported.ok_or_else(|| RegistryError::NotEmpty { path: self.path().to_owned(), maps: held })
    }

    /// SQLite's full `integrity_check` (reads every page: for `check`, not for start-up).
    pub fn health(&self) -> Result<Health, RegistryError> {
        self.pool.run("check", |connection| {
            let findings: Vec<String> = connection.prepare("PRAGMA integrity_check")?.query_map([], |row| row.get(0))?.collect::<rusqlite::Result<_>>()?;
            let problems = findings.into_iter().filter(|finding| finding != "ok").collect();
            Ok(Health { counts: read_counts(connection)?, problems })
        })
    }

    /// Imports a `registry.json` of an earlier version (in one transaction;
    /// what is already there is kept), then keeps the file as
    /// `registry.json.migrated` (or `.migrated.N` when that name is taken).
    fn migrate_legacy(&self, legacy: &Path) -> Result<(), RegistryError> {
        if !legacy.exists() {
            return Ok(());
        }
        let document = RegistryDocument::read(legacy)?;
        let imported = self.pool.run("migrate registry.json into", |connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let imported = insert_document(&transaction, &document)?;
            transaction.commit()?;
            Ok(imported)
        })?;
        let Some(kept_as) = keep_aside(legacy)? else {
            return Ok(()); // another server migrated the same file at the same moment
        };
        tracing::info!(
            event = %"registry_migrated",
            maps = imported.maps,
            revisions = imported.revisions,
            from = %legacy.display(),
            kept_as = %kept_as.display(),
            into = %self.path().display(),
        );
        Ok(())
    }
}

/// Links `legacy` to the first free name of `<legacy>.migrated`,
/// `<legacy>.migrated.1`, …, then removes the old name. `None` when the file
/// is already gone.
fn keep_aside(legacy: &Path) -> Result<Option<PathBuf>, RegistryError> {
    for attempt in 0.. {
        let mut name = legacy.as_os_str().to_owned();
        name.push(if attempt == 0 { ".migrated".to_owned() } else { format!(".migrated.{attempt}") });
        let target = PathBuf::from(name);
        match std::fs::hard_link(legacy, &target) {
            Ok(()) => {
                return match std::fs::remove_file(legacy) {
                    Ok(()) => Ok(Some(target)),
                    Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Some(target)),
                    Err(source) => Err(RegistryError::Io { action: "rename", path: legacy.to_owned(), source }),
                };
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(RegistryError::Io { action: "rename", path: legacy.to_owned(), source }),
        }
    }
    unreachable!("some name is always free")
}

/// Adds the maps and revisions of `document` that are not there yet, oldest registration first.
fn insert_document(connection: &Connection, document: &RegistryDocument) -> rusqlite::Result<Imported> {
    let mut records: Vec<&MapRecord> = document.maps.values().collect();
    records.sort_by(|a, b| (&a.registered_at, &a.map_id).cmp(&(&b.registered_at, &b.map_id)));
    let mut imported = Imported::default();
    for record in records {
        let map = match connection.prepare_cached("SELECT id FROM maps WHERE map_id = ?1")?.query_row([&record.map_id], |row| row.get(0)).optional()? {
            Some(id) => id,
            None => {
                insert_map(connection, record)?;
                imported.maps += 1;
                connection.last_insert_rowid()
            }
        };
        for revision in &record.revisions {
            let known = connection.prepare_cached("SELECT 1 FROM revisions WHERE revision_id = ?1")?.exists([&revision.revision_id])?;
            if !known {
                insert_revision(connection, map, revision)?;
                imported.revisions += 1;
            }
        }
    }
    Ok(imported)
}

fn insert_map(connection: &Connection, record: &MapRecord) -> rusqlite::Result<()> {
    let root = record.root.to_str().ok_or_else(|| rusqlite::Error::InvalidPath(record.root.clone()))?;
    connection
        .prepare_cached(
            "INSERT INTO maps (map_id, root, relative_path, media_type, width, height, bytes, sha256, modified_ns, registered_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?
        .execute(params![
            record.map_id,
            root,
            record.relative_path,
            record.media_type.mime(),
            signed(record.width)?,
            signed(record.height)?,
            signed(record.bytes)?,
            record.sha256,
            record.modified_ns,
            record.registered_at,
        ])?;
    Ok(())
}

fn insert_revision(connection: &Connection, map: i64, revision: &Revision) -> rusqlite::Result<()> {
    let document = Revision { artifacts: Vec::new(), ..revision.clone() };
    let document = serde_json::to_string(&document).map_err(|error| rusqlite::Error::ToSqlConversionFailure(Box::new(error)))?;
    connection.prepare_cached("INSERT INTO revisions (revision_id, map, document) VALUES (?1, ?2, ?3)")?.execute(params![
        revision.revision_id,
        map,
        document
    ])?;
    let revision_row = connection.last_insert_rowid();
    let mut insert = connection.prepare_cached("INSERT INTO artifacts (revision, name, media_type, bytes) VALUES (?1, ?2, ?3, ?4)")?;
    for artifact in &revision.artifacts {
        insert.execute(params![revision_row, artifact.name, artifact.media_type, signed(artifact.bytes)?])?;
    }
    Ok(())
}

fn map_by_id(connection: &Connection, map_id: &str) -> rusqlite::Result<Option<MapRecord>> {
    let Some((row_id, mut record)) = connection
        .prepare_cached(
            "SELECT id, map_id, root, relative_path, media_type, width, height, bytes, sha256, modified_ns, registered_at FROM maps WHERE map_id = ?1",
        )?
        .query_row([map_id], |row| {
            let record = MapRecord {
                map_id: row.get(1)?,
                root: PathBuf::from(row.get::<_, String>(2)?),
                relative_path: row.get(3)?,
                media_type: media_type_from(row, 4)?,
                width: unsigned(row, 5)?,
                height: unsigned(row, 6)?,
                bytes: unsigned(row, 7)?,
                sha256: row.get(8)?,
                modified_ns: row.get(9)?,
                registered_at: row.get(10)?,
                revisions: Vec::new(),
            };
            Ok((row.get::<_, i64>(0)?, record))
        })
        .optional()?
    else {
        return Ok(None);
    };
    let revisions: Vec<(i64, String)> = connection
        .prepare_cached("SELECT id, document FROM revisions WHERE map = ?1 ORDER BY id")?
        .query_map([row_id], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut artifacts = connection.prepare_cached("SELECT name, media_type, bytes FROM artifacts WHERE revision = ?1 ORDER BY id")?;
    for (revision_row, document) in revisions {
        let mut revision: Revision =
            serde_json::from_str(&document).map_err(|error| rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, Box::new(error)))?;
        revision.artifacts = artifacts.query_map([revision_row], artifact_from_row)?.collect::<rusqlite::Result<_>>()?;
        record.revisions.push(revision);
    }
    Ok(Some(record))
}

fn read_counts(connection: &Connection) -> rusqlite::Result<Counts> {
    let mut counts = Counts::default();
    let mut statement = connection.prepare_cached("SELECT kind, n FROM counts")?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        match row.get_ref(0)?.as_str()? {
            "maps" => counts.maps = unsigned(row, 1)?,
            "revisions" => counts.revisions = unsigned(row, 1)?,
            "bundles" => counts.bundles = unsigned(row, 1)?,
            _ => {}
        }
    }
    Ok(counts)
}

fn artifact_from_row(row: &Row<'_>) -> rusqlite::Result<Artifact> {
    Ok(Artifact { name: row.get(0)?, media_type: row.get(1)?, bytes: unsigned(row, 2)?, resource_uri: None, path: None })
}

fn media_type_from(row: &Row<'_>, column: usize) -> rusqlite::Result<MediaType> {
    let mime = row.get_ref(column)?.as_str()?;
    MediaType::from_mime(mime)
        .ok_or_else(|| rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, format!("unknown media type {mime:?}").into()))
}

fn unsigned(row: &Row<'_>, column: usize) -> rusqlite::Result<u64> {
    let value: i64 = row.get(column)?;
    u64::try_from(value).map_err(|error| rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Integer, Box::new(error)))
}

fn signed(value: u64) -> rusqlite::Result<i64> {
    i64::try_from(value).map_err(|error| rusqlite::Error::ToSqlConversionFailure(Box::new(error)))
}

/// The shell command that moves a damaged registry file aside so the server
/// can start on a fresh one: the JSON file alone, or the database with its
/// write-ahead log and index (`registry.sqlite*`) into a new folder named for
/// `now` (a stale log must never meet a new database).
pub fn recovery_command(damaged: &Path, now: std::time::SystemTime) -> String {
    let quoted = shell_quote(damaged);
    if damaged.file_name().is_some_and(|name| name == LEGACY_FILE) {
        return format!("mv {quoted} {quoted}.corrupt");
    }
    let stamp: String = humantime::format_rfc3339_seconds(now).to_string().chars().filter(char::is_ascii_digit).collect();
    let folder = shell_quote(&damaged.with_file_name(format!("registry-corrupt-{stamp}")));
    format!("mkdir {folder} && mv {quoted}* {folder}/")
}

/// `path` as one shell word: unchanged when it holds only safe characters, else single-quoted.
fn shell_quote(path: &Path) -> String {
    let text = path.display().to_string();
    if text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=,:@%".contains(c)) { text } else { format!("'{}'", text.replace('\'', "'\\''")) }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn recovery_commands_move_the_damaged_files_aside() {
        let now = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
        assert_eq!(recovery_command(Path::new("/srv/geo/registry.json"), now), "mv /srv/geo/registry.json /srv/geo/registry.json.corrupt");
        assert_eq!(
            recovery_command(Path::new("/srv/geo/registry.sqlite"), now),
            "mkdir /srv/geo/registry-corrupt-20270115080000 && mv /srv/geo/registry.sqlite* /srv/geo/registry-corrupt-20270115080000/"
        );
        assert_eq!(recovery_command(Path::new("/my data/registry.json"), now), "mv '/my data/registry.json' '/my data/registry.json'.corrupt");
    }

    fn revision(id: &str, artifacts: &[&str]) -> Revision {
        let artifact = |name: &&str| Artifact { name: name.to_string(), media_type: "image/tiff".into(), bytes: 10, resource_uri: None, path: None };
        serde_json::from_value(serde_json::json!({
            "revision_id": id, "created_at": "2026-01-01T00:00:00Z", "crs": "EPSG:4326", "crs_name": "WGS 84", "transform": "affine",
            "geotransform": [0.0, 1.0, 0.0, 0.0, 0.0, -1.0], "pixel_region": { "col": 0, "row": 0, "width": 1, "height": 1 },
            "wgs84_bounds": { "west": 0.0, "south": -1.0, "east": 1.0, "north": 0.0 },
            "artifacts": artifacts.iter().map(artifact).collect::<Vec<_>>(), "warnings": []
        }))
        .unwrap()
    }

    fn map_ids(page: &ListPage) -> Vec<String> {
        page.entries
            .iter()
            .map(|entry| match entry {
                Listed::Map(map) => map.map_id.clone(),
                Listed::Artifact { revision_id, artifact, .. } => format!("{revision_id}/{}", artifact.name),
            })
            .collect()
    }

    #[test]
    fn writes_are_seen_by_a_second_handle_on_the_same_root() {
        let dir = tempfile::tempdir().unwrap();
        let first = Registry::open(dir.path()).unwrap();
        let second = Registry::open(dir.path()).unwrap();
        assert_eq!(first.register(&record("a")).unwrap(), (record("a"), false));
        assert!(second.map("a").unwrap().is_some());
        assert_eq!(second.register(&record("a")).unwrap(), (record("a"), true));
        assert!(second.add_revision("a", &revision("rev_1", &["map.tif"])).unwrap());
        assert!(!second.add_revision("missing", &revision("rev_2", &[])).unwrap());
        let read = first.map("a").unwrap().unwrap();
        assert_eq!(read.revisions, vec![revision("rev_1", &["map.tif"])]);
        assert_eq!(first.artifact("a", "rev_1", "map.tif").unwrap().map(|a| a.bytes), Some(10));
        assert_eq!(first.artifact("a", "rev_1", "other.tif").unwrap(), None);
        assert_eq!(first.counts().unwrap(), Counts { maps: 1, revisions: 1, bundles: 0 });
    }

    #[test]
    fn bundles_are_kept_as_written_with_their_map_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        registry.register(&record("a")).unwrap();
        assert!(registry.add_bundle("kb_1", Some(("a", "rev_1")), "2026-01-01T00:00:00Z", "{\"n\":1}").unwrap());
        assert!(registry.add_bundle("kb_2", None, "2026-01-01T00:00:00Z", "{\"n\":2}").unwrap());
        assert!(!registry.add_bundle("kb_3", Some(("missing", "rev_1")), "2026-01-01T00:00:00Z", "{}").unwrap(), "no such map");
        assert_eq!(registry.bundle("kb_1").unwrap().as_deref(), Some("{\"n\":1}"));
        assert_eq!(registry.bundle("kb_3").unwrap(), None);
        assert_eq!(registry.counts().unwrap().bundles, 2);
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
                        registry.register(&record(&id)).unwrap();
                        assert!(registry.add_revision(&id, &revision(&format!("rev_{id}"), &["a.tif", "b.vrt"])).unwrap());
                    }
                });
            }
        });
        let registry = Registry::open(dir.path()).unwrap();
        assert_eq!(registry.counts().unwrap(), Counts { maps: 100, revisions: 100, bundles: 0 });
        assert_eq!(registry.health().unwrap().problems, Vec::<String>::new());
    }

    #[test]
    fn a_kept_map_is_read_again_after_any_commit_of_this_registry_or_another() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        let other_process = Registry::open(dir.path()).unwrap();
        registry.register(&record("a")).unwrap();
        assert_eq!(registry.map("a").unwrap().unwrap().revisions.len(), 0);
        assert_eq!(registry.maps.lock().unwrap().records.len(), 1, "the read is kept");
        assert!(registry.add_revision("a", &revision("r1", &["a.tif"])).unwrap());
        assert_eq!(registry.map("a").unwrap().unwrap().revisions.len(), 1, "its own commit");
        assert!(other_process.add_revision("a", &revision("r2", &["b.tif"])).unwrap());
        let seen = registry.map("a").unwrap().unwrap();
        assert_eq!(seen.revisions.iter().map(|r| r.revision_id.as_str()).collect::<Vec<_>>(), ["r1", "r2"], "another writer's commit");
        assert_eq!(registry.map("missing").unwrap(), None);
    }

    #[test]
    fn an_unchanged_registration_writes_nothing_and_a_touched_file_updates_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        registry.register(&record("a")).unwrap();
        let changes = |registry: &Registry| registry.pool.run("read", |c| c.query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0))).unwrap();
        let watcher = Registry::open(dir.path()).unwrap();
        let before = changes(&watcher);
        assert!(registry.register(&record("a")).unwrap().1);
        assert_eq!(changes(&watcher), before, "no commit for an unchanged file");
        let touched = MapRecord { modified_ns: 42, ..record("a") };
        assert_eq!(registry.register(&touched).unwrap(), (touched.clone(), true));
        assert_ne!(changes(&watcher), before);
    }

    #[test]
    fn the_listing_pages_through_maps_then_artifacts_and_sees_later_inserts() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        for id in ["m1", "m2", "m3"] {
            registry.register(&record(id)).unwrap();
        }
        registry.add_revision("m2", &revision("r1", &["a", "b", "c"])).unwrap();
        let first = registry.list(ListPosition::START, 2).unwrap();
        assert_eq!(map_ids(&first), ["m1", "m2"]);
        registry.register(&record("m4")).unwrap(); // arrives while the listing is under way
        let second = registry.list(first.next.unwrap(), 2).unwrap();
        assert_eq!(map_ids(&second), ["m3", "m4"]);
        let third = registry.list(second.next.unwrap(), 2).unwrap();
        assert_eq!(map_ids(&third), ["r1/a", "r1/b"]);
        let last = registry.list(third.next.unwrap(), 2).unwrap();
        assert_eq!((map_ids(&last), last.next), (vec!["r1/c".to_owned()], None));
        let exact = registry.list(ListPosition::START, 7).unwrap();
        assert_eq!((exact.entries.len(), exact.next), (7, None), "no empty page after an exactly full one");
    }

    #[test]
    fn a_legacy_json_registry_is_imported_once_and_kept_as_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let legacy = dir.path().join(LEGACY_FILE);
        let mut maps = BTreeMap::new();
        maps.insert("a".to_owned(), MapRecord { revisions: vec![revision("r1", &["x.tif"]), revision("r2", &[])], ..record("a") });
        maps.insert("b".to_owned(), record("b"));
        let document = RegistryDocument { schema_version: DOCUMENT_VERSION, maps };
        let bytes = serde_json::to_vec(&document).unwrap();
        std::fs::write(&legacy, &bytes).unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        assert_eq!(registry.map("a").unwrap().unwrap(), document.maps["a"]);
        assert_eq!(registry.counts().unwrap(), Counts { maps: 2, revisions: 2, bundles: 0 });
        assert!(!legacy.exists());
        assert_eq!(std::fs::read(dir.path().join("registry.json.migrated")).unwrap(), bytes);
        std::fs::write(&legacy, &bytes).unwrap(); // the same file again: nothing new, kept under the next name
        drop(registry);
        let registry = Registry::open(dir.path()).unwrap();
        assert_eq!(registry.counts().unwrap(), Counts { maps: 2, revisions: 2, bundles: 0 });
        assert!(dir.path().join("registry.json.migrated.1").exists());
    }

    #[test]
    fn an_export_imports_into_an_empty_registry_only() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(&dir.path().join("one")).unwrap();
        registry.register(&record("a")).unwrap();
        registry.add_revision("a", &revision("r1", &["x.tif"])).unwrap();
        registry.register(&record("b")).unwrap();
        let export = dir.path().join("export.json");
        assert_eq!(registry.export(std::fs::File::create(&export).unwrap()).unwrap(), 2);
        let document = RegistryDocument::read(&export).unwrap();
        let copy = Registry::open(&dir.path().join("two")).unwrap();
        assert_eq!(copy.import(&document).unwrap(), Imported { maps: 2, revisions: 1 });
        assert_eq!(copy.map("a").unwrap(), registry.map("a").unwrap());
        assert!(matches!(copy.import(&document), Err(RegistryError::NotEmpty { maps: 2, .. })));
    }

    #[test]
    fn a_database_from_a_newer_server_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        drop(Registry::open(dir.path()).unwrap());
        let path = dir.path().join(DATABASE_FILE);
        {
            let connection = Connection::open(&path).unwrap();
            connection.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        let error = Registry::open(dir.path()).unwrap_err();
        assert!(matches!(error, RegistryError::Corrupt { problem: CorruptProblem::UnknownSchema(v), .. } if v == SCHEMA_VERSION + 1), "{error:?}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }

    /// A map record with no revisions, for tests.
    #[test]
    fn layouts_readings_and_unit_extractions_are_kept_apart_and_a_schema_3_registry_moves_its_readings() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(dir.path()).unwrap();
        registry.register(&record("map_a")).unwrap();
        assert!(registry.add_document(Document::Layout, "lay_1", "map_a", "2026-01-01T00:00:00Z", r#"{"n":1}"#).unwrap());
        assert!(registry.add_document(Document::Reading, "txt_1", "map_a", "2026-01-01T00:00:01Z", r#"{"n":2}"#).unwrap());
        assert!(!registry.add_document(Document::Reading, "txt_2", "map_unknown", "2026-01-01T00:00:02Z", "{}").unwrap(), "no such map");
        assert!(registry.add_document(Document::Units, "unt_1", "map_a", "2026-01-01T00:00:03Z", r#"{"n":3}"#).unwrap());
        assert_eq!(registry.newest_document(Document::Units, "map_a").unwrap(), Some(("unt_1".to_owned(), r#"{"n":3}"#.to_owned())));
        let newest = registry.newest_document(Document::Layout, "map_a").unwrap();
        assert_eq!(newest, Some(("lay_1".to_owned(), r#"{"n":1}"#.to_owned())), "a newer reading is not a layout");
        assert_eq!(registry.document(Document::Reading, "map_a", "txt_1").unwrap().as_deref(), Some(r#"{"n":2}"#));
        assert_eq!(registry.document(Document::Layout, "map_a", "txt_1").unwrap(), None);
        assert_eq!(registry.artifact_ids().unwrap(), ["lay_1", "txt_1", "unt_1"].map(str::to_owned).into());
        drop(registry);

        // Back to schema 3, where readings were rows of `layouts` and unit extractions did not exist:
        // opening migrates the readings out again and adds the extractions' table.
        let connection = rusqlite::Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
        connection
            .execute_batch(
                "INSERT INTO layouts (layout_id, map, created_at, document) SELECT reading_id, map, created_at, document FROM readings;
                 DROP TABLE readings; DROP TABLE unit_extractions; PRAGMA user_version = 3;",
            )
            .unwrap();
        drop(connection);
        let registry = Registry::open(dir.path()).unwrap();
        assert_eq!(registry.document(Document::Reading, "map_a", "txt_1").unwrap().as_deref(), Some(r#"{"n":2}"#));
        assert_eq!(registry.document(Document::Layout, "map_a", "txt_1").unwrap(), None, "moved, not copied");
        assert_eq!(registry.newest_document(Document::Layout, "map_a").unwrap().map(|(id, _)| id).as_deref(), Some("lay_1"));
        assert_eq!(registry.newest_document(Document::Units, "map_a").unwrap(), None, "the new table starts empty");
    }

    pub(crate) fn record(id: &str) -> MapRecord {
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
}
