//! The registry: maps, their revisions and the files each revision wrote,
//! knowledge bundles, layouts, readings and unit extractions; as rows of
//! `registry.sqlite` (SQLite in WAL mode) in the data root, or of a PostgreSQL
//! database that many servers share (`GEOMAP_REGISTRY_URL`).
//!
//! Invariants:
//! - One registry, two backends: every call is written once, against
//!   `sql::Session`, in SQL both run; only opening, transactions, the schema
//!   and the integrity check differ (`sqlite.rs`, `postgres.rs`), and the two
//!   schemas are the same tables at the same version.
//! - Nothing loads the whole registry: every call reads or writes the rows it
//!   needs through an index, so its cost does not grow with the archive.
//! - Writes are single transactions that wait for any other writer (SQLite's
//!   `IMMEDIATE`, PostgreSQL's advisory lock), from this process or another; a
//!   commit is durable before the call returns, and a process killed at any
//!   moment leaves every committed write.
//! - An unchanged update writes nothing: re-registering an unchanged file
//!   only reads.
//! - A registry that fails a check (not a database, cut short, a newer schema,
//!   damage the database reports, a PostgreSQL database holding other tables)
//!   is never written: it is [`RegistryError::Corrupt`].
//! - A `registry.json` from an earlier version is imported in one transaction
//!   on open, then kept as `registry.json.migrated` (never deleted); an
//!   interrupted import runs again on the next open.

mod document;
mod postgres;
mod sql;
mod sqlite;

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::media::MediaType;
use geomap_model::georeference::{Artifact, Revision};
use sql::{Fault, Row, Session};

pub use document::{DOCUMENT_VERSION, DocumentWriter, RegistryDocument, StoredBundle, StoredDocument};
pub use sqlite::{BUSY_TIMEOUT, SCHEMA_VERSION};

/// The SQLite database's file name in the data root.
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
    /// The database reports damage, or a row this server cannot read.
    Malformed(String),
    /// A PostgreSQL database that holds tables of something else (what it holds).
    Foreign(String),
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
            CorruptProblem::Foreign(_) => "foreign_database",
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
            CorruptProblem::Foreign(what) => write!(f, "not a registry: {what}"),
        }
    }
}

/// Where a registry is, as operators are told: its SQLite file, or its PostgreSQL database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file (or a `registry.json` of an earlier version).
    File(PathBuf),
    /// A PostgreSQL database, as `postgres://user@host:port/database` (never with a password).
    Database(String),
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::File(path) => write!(f, "{}", path.display()),
            Location::Database(url) => f.write_str(url),
        }
    }
}

/// Registry failures.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The file or database exists but cannot be used; it is left untouched.
    #[error("{location}: {problem}")]
    Corrupt { location: Location, problem: CorruptProblem },
    /// An operating-system call failed.
    #[error("{action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: io::Error },
    /// The database failed for a reason other than damage (full disk, permissions, a timeout,
    /// a PostgreSQL server that cannot be reached).
    #[error("could not {action} {location}: {source}")]
    Database { action: &'static str, location: Location, source: Box<dyn std::error::Error + Send + Sync> },
    /// `import` restores only into an empty registry.
    #[error("{location} already holds {maps} maps; import restores into an empty registry only")]
    NotEmpty { location: Location, maps: u64 },
    /// `GEOMAP_REGISTRY_URL` and the `PG*` variables do not say how to reach a database.
    #[error("{location}: {reason}")]
    Settings { location: Location, reason: String },
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
    /// Knowledge bundles added.
    pub bundles: usize,
    /// Layouts, readings and unit extractions added.
    pub documents: usize,
}

/// What the full check of `stratigraphic-amenity check` found.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// Sizes.
    pub counts: Counts,
    /// What the check found wrong (empty when the registry is sound): SQLite's `integrity_check`
    /// findings, and on either backend counts that disagree with the rows they count.
    pub problems: Vec<String>,
}

/// The registry of one data root (SQLite) or one PostgreSQL database.
#[derive(Debug)]
pub struct Registry {
    backend: Backend,
    maps: Mutex<KeptMaps>,
}

/// Where the rows are.
#[derive(Debug)]
enum Backend {
    Sqlite(sqlite::Pool),
    Postgres(postgres::Pool),
}

/// Map records read since the database last changed: [`Registry::map`] answers from them while
/// SQLite's `data_version` stays where it was when they were read (PostgreSQL has no such
/// number, so there every read goes to the database).
#[derive(Debug, Default)]
struct KeptMaps {
    data_version: Option<i64>,
    records: HashMap<String, MapRecord>,
}

/// At most this many map records are kept; past it they are all dropped and read again.
const KEPT_MAPS: usize = 4096;

/// What the tools store under a map's `layouts/` folder, each kind in a table of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Document {
    /// A `geomap-layout/v1` document (`lay_` IDs), written by geomap_process_image.
    Layout,
    /// A `geomap-text/v1` document (`txt_` IDs), written by geomap_read_text.
    Reading,
    /// A `geomap-units/v1` document (`unt_` IDs), written by geomap_extract_units.
    Units,
}

impl Document {
    /// Every kind, in the order an export lists them.
    pub const ALL: [Document; 3] = [Document::Layout, Document::Reading, Document::Units];

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
    /// Opens the registry: in PostgreSQL at `url` when given (what the URL leaves out comes from
    /// the `PG*` variables), else in `data_root`'s SQLite file (creating the folder and the
    /// database). A damaged or foreign registry is refused; a `registry.json` left in `data_root`
    /// by an earlier version is imported.
    pub fn open(data_root: &Path, url: Option<&str>) -> Result<Registry, RegistryError> {
        std::fs::create_dir_all(data_root).map_err(|source| RegistryError::Io { action: "create the data root", path: data_root.to_owned(), source })?;
        let backend = match url {
            Some(url) => Backend::Postgres(postgres::Pool::open(url, |name| std::env::var(name).ok(), true)?.expect("a prepared database holds a registry")),
            None => Backend::Sqlite(sqlite::Pool::open(&data_root.join(DATABASE_FILE))?),
        };
        let registry = Registry { backend, maps: Mutex::default() };
        registry.migrate_legacy(&data_root.join(LEGACY_FILE))?;
        Ok(registry)
    }

    /// Opens an existing registry to check it (for `check`), creating, migrating and importing
    /// nothing; `None` when there is no registry yet (no SQLite file, an empty PostgreSQL database).
    pub fn open_to_check(data_root: &Path, url: Option<&str>) -> Result<Option<Registry>, RegistryError> {
        if let Some(url) = url {
            let pool = postgres::Pool::open(url, |name| std::env::var(name).ok(), false)?;
            return Ok(pool.map(|pool| Registry { backend: Backend::Postgres(pool), maps: Mutex::default() }));
        }
        let path = data_root.join(DATABASE_FILE);
        match sqlite::inspect_file(&path)? {
            sqlite::FileState::Absent => Ok(None),
            sqlite::FileState::Present => Ok(Some(Registry { backend: Backend::Sqlite(sqlite::Pool::read_only(&path)?), maps: Mutex::default() })),
        }
    }

    /// Where the registry is (for operator messages; never sent to agents).
    pub fn location(&self) -> &Location {
        match &self.backend {
            Backend::Sqlite(pool) => pool.location(),
            Backend::Postgres(pool) => pool.location(),
        }
    }

    /// Whether the server can write here. SQLite: the database file and its folder (where it keeps
    /// its write-ahead log), asked with access(2), never by opening the file: closing any
    /// descriptor of it drops every POSIX lock this process holds on it, SQLite's included, and
    /// concurrent writers then corrupt the database (as 50 agents calling geomap_capabilities
    /// beside writes did). PostgreSQL: the connection's role may insert maps.
    pub fn check_writable(&self) -> io::Result<()> {
        match &self.backend {
            Backend::Sqlite(pool) => pool.check_writable(),
            Backend::Postgres(_) => {
                let may = self.read("check the privileges on", |session| {
                    session.one("SELECT CASE WHEN has_table_privilege('maps', 'INSERT') THEN 1 ELSE 0 END", &[])?.int(0)
                });
                match may {
                    Ok(1) => Ok(()),
                    Ok(_) => Err(io::Error::new(io::ErrorKind::PermissionDenied, "the registry's role may not insert maps")),
                    Err(error) => Err(io::Error::other(error.to_string())),
                }
            }
        }
    }

    /// Runs `work` in one write transaction, which waits for every other writer.
    fn write<T>(&self, action: &'static str, work: impl FnOnce(&mut dyn Session) -> Result<T, Fault>) -> Result<T, RegistryError> {
        match &self.backend {
            Backend::Sqlite(pool) => pool.transact(true, action, work),
            Backend::Postgres(pool) => pool.transact(true, action, work),
        }
    }

    /// Runs `work` in one read transaction: everything it reads is from one snapshot.
    fn read<T>(&self, action: &'static str, work: impl FnOnce(&mut dyn Session) -> Result<T, Fault>) -> Result<T, RegistryError> {
        match &self.backend {
            Backend::Sqlite(pool) => pool.transact(false, action, work),
            Backend::Postgres(pool) => pool.transact(false, action, work),
        }
    }

    /// Records `candidate` (with no revisions), or returns the map already
    /// registered under its ID with the file's new modification time; `true`
    /// when it was already registered. An unchanged file writes nothing.
    pub fn register(&self, candidate: &MapRecord) -> Result<(MapRecord, bool), RegistryError> {
        if let Some(existing) = self.read("register a map in", |session| map_by_id(session, &candidate.map_id))?
            && existing.modified_ns == candidate.modified_ns
        {
            return Ok((existing, true));
        }
        self.write("register a map in", |session| {
            let existing = session.first("SELECT modified_ns FROM maps WHERE map_id = ?1", &[(&candidate.map_id).into()])?;
            match existing.as_ref().map(|row| row.int(0)).transpose()? {
                Some(modified_ns) if modified_ns == candidate.modified_ns => {}
                Some(_) => {
                    session.execute("UPDATE maps SET modified_ns = ?1 WHERE map_id = ?2", &[candidate.modified_ns.into(), (&candidate.map_id).into()])?;
                }
                None => {
                    insert_map(session, candidate)?;
                }
            }
            let record = map_by_id(session, &candidate.map_id)?.ok_or_else(|| Fault::Malformed("a map gone within its own transaction".into()))?;
            Ok((record, existing.is_some()))
        })
    }

    /// The map registered as `map_id`, with its revisions, read from one snapshot.
    /// On SQLite, kept from an earlier read while no connection has committed since, so a map
    /// described again costs one `PRAGMA data_version` instead of three queries.
    pub fn map(&self, map_id: &str) -> Result<Option<MapRecord>, RegistryError> {
        let Backend::Sqlite(pool) = &self.backend else {
            return self.read("read a map from", |session| map_by_id(session, map_id));
        };
        let version = pool.data_version()?;
        {
            let mut kept = self.maps.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if kept.data_version != Some(version) || kept.records.len() >= KEPT_MAPS {
                *kept = KeptMaps { data_version: Some(version), records: HashMap::new() };
            }
            if let Some(record) = kept.records.get(map_id) {
                return Ok(Some(record.clone()));
            }
        }
        let record = self.read("read a map from", |session| map_by_id(session, map_id))?;
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
        self.write("record a revision in", |session| {
            let Some(map) = map_row(session, map_id)? else { return Ok(false) };
            insert_revision(session, map, revision)?;
            Ok(true)
        })
    }

    /// The artifact `name` of revision `revision_id` of map `map_id`, if the registry recorded it.
    pub fn artifact(&self, map_id: &str, revision_id: &str, name: &str) -> Result<Option<Artifact>, RegistryError> {
        self.read("read an artifact from", |session| {
            session
                .first(
                    "SELECT artifacts.name, artifacts.media_type, artifacts.bytes FROM artifacts \
                     JOIN revisions ON artifacts.revision = revisions.id JOIN maps ON revisions.map = maps.id \
                     WHERE maps.map_id = ?1 AND revisions.revision_id = ?2 AND artifacts.name = ?3",
                    &[map_id.into(), revision_id.into(), name.into()],
                )?
                .map(|row| artifact_from_row(&row, 0))
                .transpose()
        })
    }

    /// Records a knowledge bundle: `document` (the bundle as JSON) and, when
    /// its area came from a map, that map and revision. `false` when `map_id`
    /// names no registered map.
    pub fn add_bundle(&self, bundle_id: &str, source: Option<(&str, &str)>, created_at: &str, document: &str) -> Result<bool, RegistryError> {
        let bundle = StoredBundle {
            bundle_id: bundle_id.to_owned(),
            map_id: source.map(|(map_id, _)| map_id.to_owned()),
            revision_id: source.map(|(_, revision_id)| revision_id.to_owned()),
            created_at: created_at.to_owned(),
            document: document.to_owned(),
        };
        self.write("record a knowledge bundle in", |session| insert_bundle(session, &bundle))
    }

    /// Records `stored` (a layout, reading or unit extraction of its map); `false` when no such map exists.
    pub fn add_document(&self, stored: &StoredDocument) -> Result<bool, RegistryError> {
        self.write(stored.kind.recording(), |session| insert_stored_document(session, stored))
    }

    /// Replaces the JSON text of document `stored.id` of its kind and map (a layout whose ages and
    /// rock names were resolved since); `false` when no such document exists.
    pub fn replace_document(&self, stored: &StoredDocument) -> Result<bool, RegistryError> {
        let (table, id_column) = stored.kind.table();
        self.write(stored.kind.recording(), |session| {
            let sql = format!("UPDATE {table} SET document = ?3 WHERE {id_column} = ?2 AND map = (SELECT id FROM maps WHERE map_id = ?1)");
            Ok(session.execute(&sql, &[(&stored.map_id).into(), (&stored.id).into(), (&stored.document).into()])? == 1)
        })
    }

    /// Document `id` of kind `kind` of map `map_id`, as the JSON text it was recorded with.
    pub fn document(&self, kind: Document, map_id: &str, id: &str) -> Result<Option<String>, RegistryError> {
        let (table, id_column) = kind.table();
        self.read(kind.reading(), |session| {
            let sql = format!("SELECT {table}.document FROM {table} JOIN maps ON {table}.map = maps.id WHERE maps.map_id = ?1 AND {table}.{id_column} = ?2");
            session.first(&sql, &[map_id.into(), id.into()])?.map(|row| row.text(0)).transpose()
        })
    }

    /// The newest document of `kind` for map `map_id` (a layout made by geomap_process_image, a
    /// reading made by geomap_read_text), as its ID and the JSON text it was recorded with.
    pub fn newest_document(&self, kind: Document, map_id: &str) -> Result<Option<(String, String)>, RegistryError> {
        Ok(self.newest_documents(kind, map_id, 1)?.into_iter().next())
    }

    /// Up to `limit` documents of `kind` for map `map_id`, newest first, each as its ID and JSON text.
    pub fn newest_documents(&self, kind: Document, map_id: &str, limit: usize) -> Result<Vec<(String, String)>, RegistryError> {
        let (table, id_column) = kind.table();
        self.read(kind.reading(), |session| {
            let sql = format!(
                "SELECT {table}.{id_column}, {table}.document FROM {table} JOIN maps ON {table}.map = maps.id \
                 WHERE maps.map_id = ?1 ORDER BY {table}.id DESC LIMIT {limit}"
            );
            session.query(&sql, &[map_id.into()])?.into_iter().map(|row| Ok((row.text(0)?, row.text(1)?))).collect()
        })
    }

    /// The knowledge bundle `bundle_id` as the JSON text it was recorded with.
    pub fn bundle(&self, bundle_id: &str) -> Result<Option<String>, RegistryError> {
        self.read("read a knowledge bundle from", |session| {
            session.first("SELECT document FROM bundles WHERE bundle_id = ?1", &[bundle_id.into()])?.map(|row| row.text(0)).transpose()
        })
    }

    /// How many maps, revisions and bundles the registry holds.
    pub fn counts(&self) -> Result<Counts, RegistryError> {
        self.read("count the maps in", read_counts)
    }

    /// Up to `limit` entries of the listing from `position`: maps, then artifacts.
    pub fn list(&self, position: ListPosition, limit: usize) -> Result<ListPage, RegistryError> {
        self.read("list", |session| {
            let mut entries = Vec::new();
            let mut last_map = match position {
                ListPosition::AfterMap(id) => Some(id),
                ListPosition::AfterArtifact(_) => None,
            };
            if let Some(after) = last_map {
                let rows = session.query(
                    "SELECT id, map_id, relative_path, media_type, width, height FROM maps WHERE id > ?1 ORDER BY id LIMIT ?2",
                    &[after.into(), (limit as i64 + 1).into()],
                )?;
                for row in rows {
                    if entries.len() == limit {
                        return Ok(ListPage { entries, next: last_map.map(ListPosition::AfterMap) });
                    }
                    last_map = Some(row.int(0)?);
                    entries.push(Listed::Map(MapListing {
                        map_id: row.text(1)?,
                        relative_path: row.text(2)?,
                        media_type: media_type_from(&row, 3)?,
                        width: row.unsigned(4)?,
                        height: row.unsigned(5)?,
                    }));
                }
            }
            let after_artifact = match position {
                ListPosition::AfterArtifact(id) => id,
                _ => 0,
            };
            let room = limit - entries.len();
            let rows = session.query(
                "SELECT artifacts.id, maps.map_id, revisions.revision_id, artifacts.name, artifacts.media_type, artifacts.bytes FROM artifacts \
                 JOIN revisions ON artifacts.revision = revisions.id JOIN maps ON revisions.map = maps.id \
                 WHERE artifacts.id > ?1 ORDER BY artifacts.id LIMIT ?2",
                &[after_artifact.into(), (room as i64 + 1).into()],
            )?;
            let mut last_artifact = None;
            for row in rows {
                if entries.len() == limit {
                    let next = match last_artifact {
                        Some(id) => ListPosition::AfterArtifact(id),
                        None => ListPosition::AfterMap(last_map.unwrap_or_default()),
                    };
                    return Ok(ListPage { entries, next: Some(next) });
                }
                last_artifact = Some(row.int(0)?);
                entries.push(Listed::Artifact { map_id: row.text(1)?, revision_id: row.text(2)?, artifact: artifact_from_row(&row, 3)? });
            }
            Ok(ListPage { entries, next: None })
        })
    }

    /// Writes the whole registry to `out` as a registry document (every map with its revisions,
    /// every bundle, layout, reading and unit extraction), a page of rows at a time, from one
    /// consistent snapshot; returns how many maps.
    pub fn export<W: Write>(&self, out: W) -> Result<usize, RegistryError> {
        let path = PathBuf::from(self.location().to_string());
        let write_error = |source| RegistryError::Io { action: "write the export of", path: path.clone(), source };
        let mut writer = DocumentWriter::start(out).map_err(write_error)?;
        let mut failed_write = None;
        self.read("export", |session| {
            let mut written = |outcome: io::Result<()>| match outcome {
                Ok(()) => true,
                Err(error) => {
                    failed_write = Some(error);
                    false
                }
            };
            let mut after = 0_i64;
            loop {
                let rows = session.query("SELECT id, map_id FROM maps WHERE id > ?1 ORDER BY id LIMIT 500", &[after.into()])?;
                let Some(last) = rows.last() else { break };
                after = last.int(0)?;
                for row in &rows {
                    let record = map_by_id(session, &row.text(1)?)?.ok_or_else(|| Fault::Malformed("a map gone within a snapshot".into()))?;
                    if !written(writer.map(&record)) {
                        return Ok(());
                    }
                }
            }
            let mut after = 0_i64;
            loop {
                let rows = session.query(
                    "SELECT bundles.id, bundle_id, maps.map_id, revision_id, created_at, document FROM bundles LEFT JOIN maps ON bundles.map = maps.id \
                     WHERE bundles.id > ?1 ORDER BY bundles.id LIMIT 500",
                    &[after.into()],
                )?;
                let Some(last) = rows.last() else { break };
                after = last.int(0)?;
                for row in &rows {
                    let bundle = StoredBundle {
                        bundle_id: row.text(1)?,
                        map_id: row.optional_text(2)?,
                        revision_id: row.optional_text(3)?,
                        created_at: row.text(4)?,
                        document: row.text(5)?,
                    };
                    if !written(writer.bundle(&bundle)) {
                        return Ok(());
                    }
                }
            }
            for kind in Document::ALL {
                let (table, id_column) = kind.table();
                let sql = format!(
                    "SELECT {table}.id, {table}.{id_column}, maps.map_id, {table}.created_at, {table}.document FROM {table} JOIN maps ON {table}.map = maps.id \
                     WHERE {table}.id > ?1 ORDER BY {table}.id LIMIT 500"
                );
                let mut after = 0_i64;
                loop {
                    let rows = session.query(&sql, &[after.into()])?;
                    let Some(last) = rows.last() else { break };
                    after = last.int(0)?;
                    for row in &rows {
                        let document = StoredDocument { kind, id: row.text(1)?, map_id: row.text(2)?, created_at: row.text(3)?, document: row.text(4)? };
                        if !written(writer.document(&document)) {
                            return Ok(());
                        }
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
        let imported = self.write("import into", |session| {
            held = read_counts(session)?.maps;
            if held > 0 {
                return Ok(None);
            }
            insert_document(session, document).map(Some)
        })?;
        imported.ok_or_else(|| RegistryError::NotEmpty { location: self.location().clone(), maps: held })
    }

    /// The full check (for `check`, not for start-up): SQLite's `integrity_check`, which reads
    /// every page; and on both backends, that the kept counts are the rows' counts and every
    /// artifact's revision and every revision's map exist.
    pub fn health(&self) -> Result<Health, RegistryError> {
        let mut problems = match &self.backend {
            Backend::Sqlite(pool) => pool.integrity_problems()?,
            Backend::Postgres(_) => Vec::new(),
        };
        let (counts, found) = self.read("check", |session| {
            let counts = read_counts(session)?;
            let found = session.one(
                "SELECT (SELECT count(*) FROM maps), (SELECT count(*) FROM revisions), (SELECT count(*) FROM bundles), \
                 (SELECT count(*) FROM revisions WHERE map NOT IN (SELECT id FROM maps)), \
                 (SELECT count(*) FROM artifacts WHERE revision NOT IN (SELECT id FROM revisions))",
                &[],
            )?;
            Ok((counts, (0..5).map(|column| found.unsigned(column)).collect::<Result<Vec<u64>, Fault>>()?))
        })?;
        for (kind, kept, rows) in [("maps", counts.maps, found[0]), ("revisions", counts.revisions, found[1]), ("bundles", counts.bundles, found[2])] {
            if kept != rows {
                problems.push(format!("the count of {kind} says {kept} but there are {rows}"));
            }
        }
        for (what, orphans) in [("revisions of no map", found[3]), ("artifacts of no revision", found[4])] {
            if orphans > 0 {
                problems.push(format!("{orphans} {what}"));
            }
        }
        Ok(Health { counts, problems })
    }

    /// Imports a `registry.json` of an earlier version (in one transaction;
    /// what is already there is kept), then keeps the file as
    /// `registry.json.migrated` (or `.migrated.N` when that name is taken).
    fn migrate_legacy(&self, legacy: &Path) -> Result<(), RegistryError> {
        if !legacy.exists() {
            return Ok(());
        }
        let document = RegistryDocument::read(legacy)?;
        let imported = self.write("migrate registry.json into", |session| insert_document(session, &document))?;
        let Some(kept_as) = keep_aside(legacy)? else {
            return Ok(()); // another server migrated the same file at the same moment
        };
        tracing::info!(
            event = %"registry_migrated",
            maps = imported.maps,
            revisions = imported.revisions,
            from = %legacy.display(),
            kept_as = %kept_as.display(),
            into = %self.location(),
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

/// Adds what `document` holds that is not there yet: its maps (oldest registration first) with
/// their revisions, then its bundles and documents in their order.
fn insert_document(session: &mut dyn Session, document: &RegistryDocument) -> Result<Imported, Fault> {
    let mut records: Vec<&MapRecord> = document.maps.values().collect();
    records.sort_by(|a, b| (&a.registered_at, &a.map_id).cmp(&(&b.registered_at, &b.map_id)));
    let mut imported = Imported::default();
    for record in records {
        let map = match map_row(session, &record.map_id)? {
            Some(id) => id,
            None => {
                imported.maps += 1;
                insert_map(session, record)?
            }
        };
        for revision in &record.revisions {
            if session.first("SELECT id FROM revisions WHERE revision_id = ?1", &[(&revision.revision_id).into()])?.is_none() {
                insert_revision(session, map, revision)?;
                imported.revisions += 1;
            }
        }
    }
    for bundle in &document.bundles {
        if session.first("SELECT id FROM bundles WHERE bundle_id = ?1", &[(&bundle.bundle_id).into()])?.is_none() {
            if !insert_bundle(session, bundle)? {
                return Err(Fault::Unstorable(format!("bundle {} names map {:?}, which the document does not hold", bundle.bundle_id, bundle.map_id)));
            }
            imported.bundles += 1;
        }
    }
    for stored in &document.documents {
        let (table, id_column) = stored.kind.table();
        if session.first(&format!("SELECT id FROM {table} WHERE {id_column} = ?1"), &[(&stored.id).into()])?.is_none() {
            if !insert_stored_document(session, stored)? {
                return Err(Fault::Unstorable(format!("{} names map {}, which the document does not hold", stored.id, stored.map_id)));
            }
            imported.documents += 1;
        }
    }
    Ok(imported)
}

/// The row id of map `map_id`.
fn map_row(session: &mut dyn Session, map_id: &str) -> Result<Option<i64>, Fault> {
    session.first("SELECT id FROM maps WHERE map_id = ?1", &[map_id.into()])?.map(|row| row.int(0)).transpose()
}

/// Inserts `record` without its revisions; returns its row id.
fn insert_map(session: &mut dyn Session, record: &MapRecord) -> Result<i64, Fault> {
    let root = record.root.to_str().ok_or_else(|| Fault::Unstorable(format!("the map root {} is not UTF-8", record.root.display())))?;
    let size = |value: u64| i64::try_from(value).map_err(|_| Fault::Unstorable(format!("{value} is too large to store")));
    session
        .one(
            "INSERT INTO maps (map_id, root, relative_path, media_type, width, height, bytes, sha256, modified_ns, registered_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
            &[
                (&record.map_id).into(),
                root.into(),
                (&record.relative_path).into(),
                record.media_type.mime().into(),
                size(record.width)?.into(),
                size(record.height)?.into(),
                size(record.bytes)?.into(),
                (&record.sha256).into(),
                record.modified_ns.into(),
                (&record.registered_at).into(),
            ],
        )?
        .int(0)
}

/// Appends `revision` (and its artifacts) to the map with row id `map`.
fn insert_revision(session: &mut dyn Session, map: i64, revision: &Revision) -> Result<(), Fault> {
    let document = Revision { artifacts: Vec::new(), ..revision.clone() };
    let document = serde_json::to_string(&document).map_err(|error| Fault::Unstorable(error.to_string()))?;
    let revision_row = session
        .one(
            "INSERT INTO revisions (revision_id, map, document) VALUES (?1, ?2, ?3) RETURNING id",
            &[(&revision.revision_id).into(), map.into(), (&document).into()],
        )?
        .int(0)?;
    for artifact in &revision.artifacts {
        let bytes = i64::try_from(artifact.bytes).map_err(|_| Fault::Unstorable(format!("{} bytes is too large to store", artifact.bytes)))?;
        session.execute(
            "INSERT INTO artifacts (revision, name, media_type, bytes) VALUES (?1, ?2, ?3, ?4)",
            &[revision_row.into(), (&artifact.name).into(), (&artifact.media_type).into(), bytes.into()],
        )?;
    }
    Ok(())
}

/// Inserts `bundle`; `false` when it names a map the registry does not hold.
fn insert_bundle(session: &mut dyn Session, bundle: &StoredBundle) -> Result<bool, Fault> {
    let map = match &bundle.map_id {
        Some(map_id) => match map_row(session, map_id)? {
            Some(map) => Some(map),
            None => return Ok(false),
        },
        None => None,
    };
    session.execute(
        "INSERT INTO bundles (bundle_id, map, revision_id, created_at, document) VALUES (?1, ?2, ?3, ?4, ?5)",
        &[(&bundle.bundle_id).into(), map.into(), bundle.revision_id.as_deref().into(), (&bundle.created_at).into(), (&bundle.document).into()],
    )?;
    Ok(true)
}

/// Inserts `stored` into its kind's table; `false` when it names a map the registry does not hold.
fn insert_stored_document(session: &mut dyn Session, stored: &StoredDocument) -> Result<bool, Fault> {
    let Some(map) = map_row(session, &stored.map_id)? else { return Ok(false) };
    let (table, id_column) = stored.kind.table();
    let sql = format!("INSERT INTO {table} ({id_column}, map, created_at, document) VALUES (?1, ?2, ?3, ?4)");
    session.execute(&sql, &[(&stored.id).into(), map.into(), (&stored.created_at).into(), (&stored.document).into()])?;
    Ok(true)
}

/// The map `map_id` with its revisions and their artifacts.
fn map_by_id(session: &mut dyn Session, map_id: &str) -> Result<Option<MapRecord>, Fault> {
    let Some(row) = session.first(
        "SELECT id, map_id, root, relative_path, media_type, width, height, bytes, sha256, modified_ns, registered_at FROM maps WHERE map_id = ?1",
        &[map_id.into()],
    )?
    else {
        return Ok(None);
    };
    let mut record = MapRecord {
        map_id: row.text(1)?,
        root: PathBuf::from(row.text(2)?),
        relative_path: row.text(3)?,
        media_type: media_type_from(&row, 4)?,
        width: row.unsigned(5)?,
        height: row.unsigned(6)?,
        bytes: row.unsigned(7)?,
        sha256: row.text(8)?,
        modified_ns: row.int(9)?,
        registered_at: row.text(10)?,
        revisions: Vec::new(),
    };
    for revision_row in session.query("SELECT id, document FROM revisions WHERE map = ?1 ORDER BY id", &[row.int(0)?.into()])? {
        let mut revision: Revision = sql::parse_json(&revision_row.text(1)?)?;
        revision.artifacts = session
            .query("SELECT name, media_type, bytes FROM artifacts WHERE revision = ?1 ORDER BY id", &[revision_row.int(0)?.into()])?
            .iter()
            .map(|artifact| artifact_from_row(artifact, 0))
            .collect::<Result<_, _>>()?;
        record.revisions.push(revision);
    }
    Ok(Some(record))
}

fn read_counts(session: &mut dyn Session) -> Result<Counts, Fault> {
    let mut counts = Counts::default();
    for row in session.query("SELECT kind, n FROM counts", &[])? {
        match row.text(0)?.as_str() {
            "maps" => counts.maps = row.unsigned(1)?,
            "revisions" => counts.revisions = row.unsigned(1)?,
            "bundles" => counts.bundles = row.unsigned(1)?,
            _ => {}
        }
    }
    Ok(counts)
}

/// The artifact in columns `first..first + 3` (name, media type, bytes).
fn artifact_from_row(row: &Row, first: usize) -> Result<Artifact, Fault> {
    Ok(Artifact { name: row.text(first)?, media_type: row.text(first + 1)?, bytes: row.unsigned(first + 2)?, resource_uri: None, path: None })
}

fn media_type_from(row: &Row, column: usize) -> Result<MediaType, Fault> {
    let mime = row.text(column)?;
    MediaType::from_mime(&mime).ok_or_else(|| Fault::Malformed(format!("unknown media type {mime:?}")))
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

/// What an operator does about a registry that is [`RegistryError::Corrupt`] at `location`
/// (the server never repairs one by itself): a file is moved aside with [`recovery_command`]; a
/// PostgreSQL database is left as it is and the servers pointed at a new one.
pub fn recovery_step(location: &Location, now: std::time::SystemTime) -> String {
    match location {
        Location::File(path) => {
            format!("stop every server on this data root, move the damaged registry aside (`{}`) and start again", recovery_command(path, now))
        }
        Location::Database(url) => format!(
            "stop every server on {url}, then point GEOMAP_REGISTRY_URL at a new, empty database (`createdb` makes one) and start again; the database at {url} is left as it is"
        ),
    }
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

    /// Where one test's registries live: a data root and, for PostgreSQL, a database of its own
    /// (dropped afterwards) on the server `GEOMAP_TEST_POSTGRES_URL` names.
    pub(crate) struct Place {
        pub(crate) dir: tempfile::TempDir,
        pub(crate) url: Option<String>,
    }

    impl Place {
        /// A registry handle here, as one more server would open it.
        pub(crate) fn open(&self) -> Registry {
            Registry::open(self.dir.path(), self.url.as_deref()).unwrap()
        }

        /// Whether this is the PostgreSQL place.
        fn postgres(&self) -> bool {
            self.url.is_some()
        }
    }

    impl Drop for Place {
        fn drop(&mut self) {
            if let Some(url) = &self.url {
                let name = url.rsplit('/').next().unwrap().split('?').next().unwrap().to_owned();
                postgres_admin(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }

    /// Every backend a test runs on: SQLite always; PostgreSQL when `GEOMAP_TEST_POSTGRES_URL`
    /// names a server (`./dev test` starts one), which the test says it skips otherwise.
    pub(crate) fn places() -> Vec<Place> {
        let mut places = vec![Place { dir: tempfile::tempdir().unwrap(), url: None }];
        match std::env::var("GEOMAP_TEST_POSTGRES_URL") {
            Ok(admin) => {
                let name = format!("registry_test_{}", geomap_model::random_hex(6));
                postgres_admin(&format!("CREATE DATABASE {name}"));
                let base = admin.split('?').next().unwrap();
                let url = format!("{}/{name}?sslmode=disable", &base[..base.rfind('/').unwrap()]);
                places.push(Place { dir: tempfile::tempdir().unwrap(), url: Some(url) });
            }
            Err(_) => eprintln!("skipped on PostgreSQL: GEOMAP_TEST_POSTGRES_URL is unset"),
        }
        places
    }

    /// Runs `sql` on the test server's administrative database.
    fn postgres_admin(sql: &str) {
        postgres_run(&std::env::var("GEOMAP_TEST_POSTGRES_URL").unwrap(), sql);
    }

    /// Runs `sql` (statements without parameters) on the database at `url`, as another program would.
    pub(crate) fn postgres_run(url: &str, sql: &str) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
            let driver = tokio::spawn(connection);
            client.batch_execute(sql).await.unwrap();
            drop(client);
            let _ = driver.await;
        });
    }

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
        for place in places() {
            writes_are_seen_by_a_second_handle(&place);
        }
    }

    fn writes_are_seen_by_a_second_handle(place: &Place) {
        let (first, second) = (place.open(), place.open());
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
        for place in places() {
            bundles_are_kept_as_written(&place.open());
        }
    }

    fn bundles_are_kept_as_written(registry: &Registry) {
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
        for place in places() {
            concurrent_writers_lose_nothing_on(&place);
        }
    }

    fn concurrent_writers_lose_nothing_on(place: &Place) {
        std::thread::scope(|scope| {
            for writer in 0..4 {
                scope.spawn(move || {
                    let registry = place.open();
                    for n in 0..25 {
                        let id = format!("{writer}-{n}");
                        registry.register(&record(&id)).unwrap();
                        assert!(registry.add_revision(&id, &revision(&format!("rev_{id}"), &["a.tif", "b.vrt"])).unwrap());
                    }
                });
            }
        });
        let registry = place.open();
        assert_eq!(registry.counts().unwrap(), Counts { maps: 100, revisions: 100, bundles: 0 });
        assert_eq!(registry.health().unwrap().problems, Vec::<String>::new());
    }

    #[test]
    fn a_kept_map_is_read_again_after_any_commit_of_this_registry_or_another() {
        for place in places() {
            a_map_is_read_again_after_any_commit(&place);
        }
    }

    fn a_map_is_read_again_after_any_commit(place: &Place) {
        let (registry, other_process) = (place.open(), place.open());
        registry.register(&record("a")).unwrap();
        assert_eq!(registry.map("a").unwrap().unwrap().revisions.len(), 0);
        let kept = if place.postgres() { 0 } else { 1 };
        assert_eq!(registry.maps.lock().unwrap().records.len(), kept, "the read is kept on SQLite only");
        assert!(registry.add_revision("a", &revision("r1", &["a.tif"])).unwrap());
        assert_eq!(registry.map("a").unwrap().unwrap().revisions.len(), 1, "its own commit");
        assert!(other_process.add_revision("a", &revision("r2", &["b.tif"])).unwrap());
        let seen = registry.map("a").unwrap().unwrap();
        assert_eq!(seen.revisions.iter().map(|r| r.revision_id.as_str()).collect::<Vec<_>>(), ["r1", "r2"], "another writer's commit");
        assert_eq!(registry.map("missing").unwrap(), None);
    }

    #[test]
    fn an_unchanged_registration_writes_nothing_and_a_touched_file_updates_its_time() {
        for place in places() {
            an_unchanged_registration_writes_nothing(&place);
        }
    }

    /// How often the row of map "a" was written: SQLite's data version, PostgreSQL's row version.
    fn changes(registry: &Registry) -> i64 {
        match &registry.backend {
            Backend::Sqlite(pool) => pool.run("read", |c| c.query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0))).unwrap(),
            Backend::Postgres(_) => {
                registry.read("read", |s| s.one("SELECT CAST(CAST(xmin AS TEXT) AS BIGINT) FROM maps WHERE map_id = 'a'", &[])?.int(0)).unwrap()
            }
        }
    }

    fn an_unchanged_registration_writes_nothing(place: &Place) {
        let registry = place.open();
        registry.register(&record("a")).unwrap();
        let watcher = place.open();
        let before = changes(&watcher);
        assert!(registry.register(&record("a")).unwrap().1);
        assert_eq!(changes(&watcher), before, "no commit for an unchanged file");
        let touched = MapRecord { modified_ns: 42, ..record("a") };
        assert_eq!(registry.register(&touched).unwrap(), (touched.clone(), true));
        assert_ne!(changes(&watcher), before);
    }

    #[test]
    fn the_listing_pages_through_maps_then_artifacts_and_sees_later_inserts() {
        for place in places() {
            the_listing_pages_through_maps_then_artifacts(&place.open());
        }
    }

    fn the_listing_pages_through_maps_then_artifacts(registry: &Registry) {
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
        for place in places() {
            a_legacy_json_registry_is_imported_once(&place);
        }
    }

    fn a_legacy_json_registry_is_imported_once(place: &Place) {
        let dir = &place.dir;
        let legacy = dir.path().join(LEGACY_FILE);
        let mut maps = BTreeMap::new();
        maps.insert("a".to_owned(), MapRecord { revisions: vec![revision("r1", &["x.tif"]), revision("r2", &[])], ..record("a") });
        maps.insert("b".to_owned(), record("b"));
        let document = RegistryDocument { schema_version: 2, maps, bundles: Vec::new(), documents: Vec::new() };
        let bytes = serde_json::to_vec(&document).unwrap();
        std::fs::write(&legacy, &bytes).unwrap();
        let registry = place.open();
        assert_eq!(registry.map("a").unwrap().unwrap(), document.maps["a"]);
        assert_eq!(registry.counts().unwrap(), Counts { maps: 2, revisions: 2, bundles: 0 });
        assert!(!legacy.exists());
        assert_eq!(std::fs::read(dir.path().join("registry.json.migrated")).unwrap(), bytes);
        std::fs::write(&legacy, &bytes).unwrap(); // the same file again: nothing new, kept under the next name
        drop(registry);
        let registry = place.open();
        assert_eq!(registry.counts().unwrap(), Counts { maps: 2, revisions: 2, bundles: 0 });
        assert!(dir.path().join("registry.json.migrated.1").exists());
    }

    #[test]
    fn an_export_imports_into_an_empty_registry_only_and_moves_everything_between_backends() {
        let (sources, targets) = (places(), places());
        for (source, target) in sources.iter().zip(targets.iter().rev()) {
            an_export_moves_everything(&source.open(), &target.open());
        }
    }

    /// Fills `source`, exports it and imports the export into `target`: every row arrives, as written.
    fn an_export_moves_everything(source: &Registry, target: &Registry) {
        source.register(&record("a")).unwrap();
        source.add_revision("a", &revision("r1", &["x.tif", "x.vrt"])).unwrap();
        source.register(&record("b")).unwrap();
        source.add_bundle("kb_1", Some(("a", "r1")), "2026-01-01T00:00:00Z", r#"{"answers": [1, 2]}"#).unwrap();
        source.add_bundle("kb_2", None, "2026-01-01T00:00:01Z", "{}").unwrap();
        source.add_document(&stored(Document::Layout, "lay_1", "b", "2026-01-01T00:00:02Z", r#"{ "spaced":  true }"#)).unwrap();
        source.add_document(&stored(Document::Layout, "lay_2", "b", "2026-01-01T00:00:03Z", "{}")).unwrap();
        source.add_document(&stored(Document::Units, "unt_1", "a", "2026-01-01T00:00:04Z", r#"{"u":"é"}"#)).unwrap();
        let mut export = Vec::new();
        assert_eq!(source.export(&mut export).unwrap(), 2);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("export.json"), &export).unwrap();
        let document = RegistryDocument::read(&dir.path().join("export.json")).unwrap();
        assert_eq!(target.import(&document).unwrap(), Imported { maps: 2, revisions: 1, bundles: 2, documents: 3 });
        assert_eq!(target.map("a").unwrap(), source.map("a").unwrap());
        assert_eq!(target.counts().unwrap(), source.counts().unwrap());
        assert_eq!(target.bundle("kb_1").unwrap(), source.bundle("kb_1").unwrap());
        assert_eq!(target.newest_document(Document::Layout, "b").unwrap(), Some(("lay_2".to_owned(), "{}".to_owned())), "in their order");
        assert_eq!(target.document(Document::Layout, "b", "lay_1").unwrap().as_deref(), Some(r#"{ "spaced":  true }"#), "byte for byte");
        let mut again = Vec::new();
        target.export(&mut again).unwrap();
        assert_eq!(String::from_utf8(again).unwrap(), String::from_utf8(export).unwrap(), "the copy exports as the original did");
        assert!(matches!(target.import(&document), Err(RegistryError::NotEmpty { maps: 2, .. })));
        assert_eq!(target.health().unwrap().problems, Vec::<String>::new());
    }

    #[test]
    fn a_database_from_a_newer_server_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        drop(Registry::open(dir.path(), None).unwrap());
        let path = dir.path().join(DATABASE_FILE);
        {
            let connection = rusqlite::Connection::open(&path).unwrap();
            connection.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        let error = Registry::open(dir.path(), None).unwrap_err();
        assert!(matches!(error, RegistryError::Corrupt { problem: CorruptProblem::UnknownSchema(v), .. } if v == SCHEMA_VERSION + 1), "{error:?}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }

    #[test]
    fn a_postgresql_database_of_a_newer_server_or_of_something_else_is_refused_and_left_untouched() {
        for place in places().into_iter().filter(Place::postgres) {
            let url = place.url.clone().unwrap();
            postgres_run(&url, "CREATE TABLE parcels (id BIGINT PRIMARY KEY); INSERT INTO parcels VALUES (7)");
            let with_password = url.replacen("postgres://geomap@", "postgres://geomap:sekret@", 1); // the test server trusts loopback
            let error = Registry::open(place.dir.path(), Some(&with_password)).unwrap_err();
            assert!(matches!(&error, RegistryError::Corrupt { problem: CorruptProblem::Foreign(what), .. } if what.contains("parcels")), "{error:?}");
            assert!(!error.to_string().contains("sekret") && !format!("{error:?}").contains("sekret"), "{error:?}");
            postgres_run(&url, "DELETE FROM parcels WHERE id = 7; DROP TABLE parcels"); // still there to drop: untouched
            drop(place.open());
            postgres_run(&url, &format!("UPDATE registry_schema SET version = {}", SCHEMA_VERSION + 1));
            let error = Registry::open(place.dir.path(), Some(&url)).unwrap_err();
            assert!(matches!(error, RegistryError::Corrupt { problem: CorruptProblem::UnknownSchema(v), .. } if v == SCHEMA_VERSION + 1), "{error:?}");
        }
    }

    #[test]
    fn layouts_readings_and_unit_extractions_are_kept_apart_and_a_schema_3_registry_moves_its_readings() {
        for place in places() {
            documents_are_kept_apart(&place.open());
        }
        let place = Place { dir: tempfile::tempdir().unwrap(), url: None };
        documents_are_kept_apart(&place.open());
        let dir = &place.dir;
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
        let registry = place.open();
        assert_eq!(registry.document(Document::Reading, "map_a", "txt_1").unwrap().as_deref(), Some(r#"{"n":2}"#));
        assert_eq!(registry.document(Document::Layout, "map_a", "txt_1").unwrap(), None, "moved, not copied");
        assert_eq!(registry.newest_document(Document::Layout, "map_a").unwrap().map(|(id, _)| id).as_deref(), Some("lay_1"));
        assert_eq!(registry.newest_document(Document::Units, "map_a").unwrap(), None, "the new table starts empty");
    }

    fn documents_are_kept_apart(registry: &Registry) {
        registry.register(&record("map_a")).unwrap();
        assert!(registry.add_document(&stored(Document::Layout, "lay_1", "map_a", "2026-01-01T00:00:00Z", r#"{"n":1}"#)).unwrap());
        assert!(registry.add_document(&stored(Document::Reading, "txt_1", "map_a", "2026-01-01T00:00:01Z", r#"{"n":2}"#)).unwrap());
        assert!(!registry.add_document(&stored(Document::Reading, "txt_2", "map_unknown", "2026-01-01T00:00:02Z", "{}")).unwrap(), "no such map");
        assert!(registry.add_document(&stored(Document::Units, "unt_1", "map_a", "2026-01-01T00:00:03Z", r#"{"n":3}"#)).unwrap());
        assert_eq!(registry.newest_document(Document::Units, "map_a").unwrap(), Some(("unt_1".to_owned(), r#"{"n":3}"#.to_owned())));
        assert!(registry.add_document(&stored(Document::Reading, "txt_3", "map_a", "2026-01-01T00:00:04Z", r#"{"n":4}"#)).unwrap());
        let replaced = stored(Document::Units, "unt_1", "map_a", "2026-01-01T00:00:03Z", r#"{"n":5}"#);
        assert!(registry.replace_document(&replaced).unwrap());
        assert_eq!(registry.document(Document::Units, "map_a", "unt_1").unwrap().as_deref(), Some(r#"{"n":5}"#));
        assert!(!registry.replace_document(&stored(Document::Units, "unt_9", "map_a", "2026-01-01T00:00:03Z", "{}")).unwrap(), "no such document");
        let readings: Vec<String> = registry.newest_documents(Document::Reading, "map_a", 5).unwrap().into_iter().map(|(id, _)| id).collect();
        assert_eq!(readings, ["txt_3", "txt_1"], "newest first, this map's only");
        assert_eq!(registry.newest_documents(Document::Reading, "map_a", 1).unwrap().len(), 1);
        let newest = registry.newest_document(Document::Layout, "map_a").unwrap();
        assert_eq!(newest, Some(("lay_1".to_owned(), r#"{"n":1}"#.to_owned())), "a newer reading is not a layout");
        assert_eq!(registry.document(Document::Reading, "map_a", "txt_1").unwrap().as_deref(), Some(r#"{"n":2}"#));
        assert_eq!(registry.document(Document::Layout, "map_a", "txt_1").unwrap(), None);
    }

    #[test]
    fn tls_checks_the_certificate_when_asked_and_encrypts_when_required() {
        let (Some(place), Ok(ca)) = (places().into_iter().find(Place::postgres), std::env::var("GEOMAP_TEST_POSTGRES_CA")) else {
            return eprintln!("skipped TLS: GEOMAP_TEST_POSTGRES_URL or GEOMAP_TEST_POSTGRES_CA is unset");
        };
        // The test server's certificate is for `localhost`, signed by itself.
        let base = place.url.as_deref().unwrap().split('?').next().unwrap().replace("127.0.0.1", "localhost");
        let encrypted = |registry: &Registry| {
            registry.read("read", |s| s.one("SELECT CASE WHEN ssl THEN 1 ELSE 0 END FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[])?.int(0)).unwrap()
        };
        let verified = Registry::open(place.dir.path(), Some(&format!("{base}?sslmode=verify-full&sslrootcert={ca}"))).unwrap();
        assert_eq!(encrypted(&verified), 1);
        let unchecked = Registry::open(place.dir.path(), Some(&format!("{base}?sslmode=require"))).unwrap();
        assert_eq!(encrypted(&unchecked), 1, "require encrypts without checking, as libpq does");
        let error = Registry::open(place.dir.path(), Some(&format!("{base}?sslmode=verify-full"))).unwrap_err();
        assert!(matches!(error, RegistryError::Database { .. }) && error.to_string().to_lowercase().contains("certificate"), "{error}");
        let plain = Registry::open(place.dir.path(), place.url.as_deref()).unwrap();
        assert_eq!(encrypted(&plain), 0, "sslmode=disable");
    }

    /// A document of `kind` for tests.
    fn stored(kind: Document, id: &str, map_id: &str, created_at: &str, document: &str) -> StoredDocument {
        StoredDocument { kind, id: id.into(), map_id: map_id.into(), created_at: created_at.into(), document: document.into() }
    }

    /// A map record with no revisions, for tests.
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
