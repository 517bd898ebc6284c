//! The registry in SQLite (the default): checking the file before SQLite
//! touches it, creating it, migrating its schema, a small pool of connections,
//! and the statements of [`Session`] on them.
//!
//! Invariants:
//! - A file that fails a check is never written: [`inspect_file`] reads only
//!   its first 100 bytes, and the checks that need SQLite
//!   ([`Pool::open`]) run before any statement that could write.
//! - A new database is built under a temporary name and linked into place
//!   (`link` never replaces an existing file), so no process ever sees a
//!   half-created registry, and an empty or short `registry.sqlite` is always
//!   a damaged one.
//! - Every connection is in WAL mode with `synchronous=FULL` (a commit is on
//!   disk before the call is acknowledged), foreign keys on, and a busy
//!   timeout: a database that is merely busy with another process's write is
//!   waited for, never reported.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::sql::{Cell, Fault, Row, Session, Value};
use super::{CorruptProblem, Location, RegistryError};

/// The schema migrations, in order: migration `i` takes `user_version` from `i` to `i + 1`.
const MIGRATIONS: [&str; 5] = [
    include_str!("migrations/sqlite/0001_maps_and_revisions.sql"),
    include_str!("migrations/sqlite/0002_knowledge_bundles.sql"),
    include_str!("migrations/sqlite/0003_layouts.sql"),
    include_str!("migrations/sqlite/0004_readings.sql"),
    include_str!("migrations/sqlite/0005_unit_extractions.sql"),
];

/// The schema version this server writes (SQLite's `user_version`).
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// How long a statement waits for another process's write before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

const HEADER_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What [`inspect_file`] found at the registry's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// No file yet: the first start creates it.
    Absent,
    /// A file whose header is an SQLite database's.
    Present,
}

/// Reads the first 100 bytes of `path` and checks what can be checked without
/// SQLite: the magic string, the page size, and that the file is as long as
/// its header says (skipped while a write-ahead log holds newer pages, since
/// a checkpoint interrupted by a crash legitimately leaves the file short
/// until SQLite replays the log).
pub fn inspect_file(path: &Path) -> Result<FileState, RegistryError> {
    let corrupt = |problem| RegistryError::Corrupt { location: Location::File(path.to_owned()), problem };
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(FileState::Absent),
        Err(source) => return Err(RegistryError::Io { action: "open", path: path.to_owned(), source }),
    };
    let io_error = |source| RegistryError::Io { action: "read", path: path.to_owned(), source };
    let bytes = file.metadata().map_err(io_error)?.len();
    let mut header = Vec::with_capacity(100);
    file.by_ref().take(100).read_to_end(&mut header).map_err(io_error)?;
    let compared = header.len().min(HEADER_MAGIC.len());
    if header[..compared] != HEADER_MAGIC[..compared] {
        let looks_like = if header.trim_ascii_start().starts_with(b"{") { "a JSON file" } else { "some other kind of file" };
        return Err(corrupt(CorruptProblem::NotADatabase(looks_like)));
    }
    if header.len() < 100 {
        return Err(corrupt(CorruptProblem::Truncated { bytes, expected: 100 }));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        size if size >= 512 && size.is_power_of_two() => u64::from(size),
        _ => return Err(corrupt(CorruptProblem::NotADatabase("a file with an SQLite header but no valid page size"))),
    };
    let header_pages = u64::from(u32::from_be_bytes([header[28], header[29], header[30], header[31]]));
    let expected = (header_pages * page_size).max(bytes.next_multiple_of(page_size)); // whole pages, at least as many as the header counts
    if bytes < expected && !wal_holds_pages(path)? {
        return Err(corrupt(CorruptProblem::Truncated { bytes, expected }));
    }
    Ok(FileState::Present)
}

/// Whether a non-empty write-ahead log sits beside the database.
fn wal_holds_pages(path: &Path) -> Result<bool, RegistryError> {
    let wal = wal_path(path);
    match std::fs::metadata(&wal) {
        Ok(metadata) => Ok(metadata.len() > 32), // a WAL header alone holds no page
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(RegistryError::Io { action: "inspect", path: wal, source }),
    }
}

fn wal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// Whether `fault` says the file is damaged (SQLite says so, or a row holds
/// what this server never writes) rather than that a call failed.
fn is_corruption(fault: &Fault) -> bool {
    match fault {
        Fault::Malformed(_) => true,
        Fault::Sqlite(error) => {
            matches!(error, rusqlite::Error::FromSqlConversionFailure(..) | rusqlite::Error::InvalidColumnType(..))
                || matches!(error.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase))
        }
        Fault::Postgres(_) | Fault::Unstorable(_) => false,
    }
}

/// Connections to one registry file, opened on demand and reused.
#[derive(Debug)]
pub struct Pool {
    path: PathBuf,
    location: Location,
    flags: OpenFlags,
    idle: Mutex<Vec<Connection>>,
    /// A connection that never writes, kept for [`Pool::data_version`].
    watcher: Mutex<Option<Connection>>,
}

impl Pool {
    /// Opens the registry at `path`, creating it when absent, after checking
    /// that an existing file is a registry this server can use; then brings
    /// its schema up to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Pool, RegistryError> {
        if inspect_file(path)? == FileState::Absent {
            create(path)?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let pool = Pool { path: path.to_owned(), location: Location::File(path.to_owned()), flags, idle: Mutex::new(Vec::new()), watcher: Mutex::new(None) };
        let mut connection = pool.connect()?;
        migrate(&mut connection, path)?;
        pool.give_back(connection);
        Ok(pool)
    }

    /// Opens an existing registry read-only, as it is, without creating or
    /// migrating anything (the caller checked the file with [`inspect_file`]).
    pub fn read_only(path: &Path) -> Result<Pool, RegistryError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let pool = Pool { path: path.to_owned(), location: Location::File(path.to_owned()), flags, idle: Mutex::new(Vec::new()), watcher: Mutex::new(None) };
        let connection = pool.connect()?;
        pool.give_back(connection);
        Ok(pool)
    }

    /// The database file, as operators are told where the registry is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Whether this process may write the database file and its folder (asked with access(2),
    /// never by opening the file: see `Registry::check_writable`).
    pub fn check_writable(&self) -> io::Result<()> {
        let folder = self.path.parent().expect("the database file is inside the data root");
        for path in [self.path.as_path(), folder] {
            rustix::fs::access(path, rustix::fs::Access::WRITE_OK).map_err(io::Error::from)?;
        }
        Ok(())
    }

    /// Runs `work` on an idle connection (or a new one); SQLite's corruption
    /// codes become [`RegistryError::Corrupt`], other failures
    /// [`RegistryError::Database`] naming `action`.
    pub fn run<T, E: Into<Fault>>(&self, action: &'static str, work: impl FnOnce(&mut Connection) -> Result<T, E>) -> Result<T, RegistryError> {
        let mut connection = self.connect()?;
        let outcome = work(&mut connection);
        self.give_back(connection);
        outcome.map_err(|error| database_error(&self.path, action, error.into()))
    }

    /// Runs `work` in one transaction: a write begins `IMMEDIATE` (it waits for any other
    /// writer, up to [`BUSY_TIMEOUT`]) and commits; a read sees one snapshot.
    pub fn transact<T>(&self, write: bool, action: &'static str, work: impl FnOnce(&mut dyn Session) -> Result<T, Fault>) -> Result<T, RegistryError> {
        self.run(action, |connection| {
            let behaviour = if write { TransactionBehavior::Immediate } else { TransactionBehavior::Deferred };
            let transaction = connection.transaction_with_behavior(behaviour)?;
            let value = work(&mut SqliteSession(&transaction))?;
            transaction.commit()?;
            Ok::<_, Fault>(value)
        })
    }

    /// SQLite's full `integrity_check`: what it finds wrong (nothing when the file is sound).
    pub fn integrity_problems(&self) -> Result<Vec<String>, RegistryError> {
        self.run("check", |connection| {
            let findings: Vec<String> = connection.prepare("PRAGMA integrity_check")?.query_map([], |row| row.get(0))?.collect::<rusqlite::Result<_>>()?;
            Ok::<_, Fault>(findings.into_iter().filter(|finding| finding != "ok").collect())
        })
    }

    /// SQLite's `PRAGMA data_version` on a connection that never writes: it changes whenever any
    /// other connection commits, this pool's and other processes' alike, so a value read again
    /// unchanged means the database is as it was.
    pub fn data_version(&self) -> Result<i64, RegistryError> {
        let mut watcher = self.watcher.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let connection = match watcher.take() {
            Some(connection) => connection,
            None => self.connect()?,
        };
        let version = connection.prepare_cached("PRAGMA data_version").and_then(|mut statement| statement.query_row([], |row| row.get(0)));
        *watcher = Some(connection);
        version.map_err(|error| database_error(&self.path, "read", error.into()))
    }

    fn connect(&self) -> Result<Connection, RegistryError> {
        if let Some(connection) = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop() {
            return Ok(connection);
        }
        let connection = Connection::open_with_flags(&self.path, self.flags)
            .and_then(|connection| configure(&connection).map(|()| connection))
            .map_err(|error| database_error(&self.path, "open", error.into()))?;
        check_schema_version(&connection, &self.path)?;
        Ok(connection)
    }

    fn give_back(&self, connection: Connection) {
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(connection);
    }
}

/// Settings every connection needs; none of them writes to the file.
fn configure(connection: &Connection) -> rusqlite::Result<()> {
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.pragma_update(None, "foreign_keys", true)?;
    connection.pragma_update(None, "synchronous", "FULL")?;
    connection.set_prepared_statement_cache_capacity(32);
    Ok(())
}

/// Refuses a database whose schema is newer than this server's (the first
/// statement on a connection, so it also catches a file SQLite cannot read).
fn check_schema_version(connection: &Connection, path: &Path) -> Result<u32, RegistryError> {
    let version: u32 = connection.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(|error| database_error(path, "read", error.into()))?;
    if version > SCHEMA_VERSION {
        return Err(RegistryError::Corrupt { location: Location::File(path.to_owned()), problem: CorruptProblem::UnknownSchema(version) });
    }
    Ok(version)
}

fn database_error(path: &Path, action: &'static str, fault: Fault) -> RegistryError {
    let location = Location::File(path.to_owned());
    if is_corruption(&fault) {
        RegistryError::Corrupt { location, problem: CorruptProblem::Malformed(fault.to_string()) }
    } else {
        RegistryError::Database { action, location, source: Box::new(fault) }
    }
}

/// Builds an empty registry under a temporary name (WAL mode, schema
/// applied, closed so its log is folded in) and links it into place; when
/// another process got there first, its file wins.
fn create(path: &Path) -> Result<(), RegistryError> {
    let mut temp_name = path.as_os_str().to_owned();
    temp_name.push(format!(".new-{}-{}", std::process::id(), geomap_model::random_hex(4)));
    let temp = PathBuf::from(temp_name);
    let built = (|| {
        let connection = Connection::open(&temp)?;
        configure(&connection)?;
        connection.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        apply_migrations(&connection, 0)?;
        connection.close().map_err(|(_, error)| error)
    })();
    let linked = built.map_err(|error| database_error(&temp, "create", error.into())).and_then(|()| match std::fs::hard_link(&temp, path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(RegistryError::Io { action: "create", path: path.to_owned(), source }),
    });
    let _ = std::fs::remove_file(&temp); // best effort: only this process ever uses the name
    linked
}

/// Brings an opened registry to [`SCHEMA_VERSION`] in one write transaction
/// (re-reading the version under the write lock, so two servers starting at
/// once migrate once), and makes sure it is in WAL mode.
fn migrate(connection: &mut Connection, path: &Path) -> Result<(), RegistryError> {
    if check_schema_version(connection, path)? < SCHEMA_VERSION {
        let transaction =
            connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|error| database_error(path, "migrate", error.into()))?;
        let current = check_schema_version(&transaction, path)?;
        apply_migrations(&transaction, current).and_then(|()| transaction.commit()).map_err(|error| database_error(path, "migrate", error.into()))?;
    }
    let mode: String = connection.query_row("PRAGMA journal_mode", [], |row| row.get(0)).map_err(|error| database_error(path, "read", error.into()))?;
    if !mode.eq_ignore_ascii_case("wal") {
        connection.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(())).map_err(|error| database_error(path, "set the journal mode of", error.into()))?;
    }
    Ok(())
}

fn apply_migrations(connection: &Connection, from: u32) -> rusqlite::Result<()> {
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        connection.execute_batch(migration)?;
        connection.pragma_update(None, "user_version", index as u32 + 1)?;
    }
    Ok(())
}

/// A transaction on one SQLite connection.
struct SqliteSession<'a>(&'a Connection);

impl Session for SqliteSession<'_> {
    fn query(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Vec<Row>, Fault> {
        let mut statement = self.0.prepare_cached(sql)?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        let mut found = Vec::new();
        while let Some(row) = rows.next()? {
            let cells = (0..columns).map(|column| cell(row.get_ref(column)?)).collect::<Result<_, Fault>>()?;
            found.push(Row(cells));
        }
        Ok(found)
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, Fault> {
        Ok(self.0.prepare_cached(sql)?.execute(rusqlite::params_from_iter(params))? as u64)
    }
}

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Value::Int(Some(number)) => ToSqlOutput::from(number),
            Value::Text(Some(text)) => ToSqlOutput::from(text),
            Value::Int(None) | Value::Text(None) => ToSqlOutput::from(rusqlite::types::Null),
        })
    }
}

/// A stored value as a cell: the registry writes integers, text and NULL only.
fn cell(value: ValueRef<'_>) -> Result<Cell, Fault> {
    match value {
        ValueRef::Null => Ok(Cell::Null),
        ValueRef::Integer(number) => Ok(Cell::Int(number)),
        ValueRef::Text(bytes) => String::from_utf8(bytes.to_vec()).map(Cell::Text).map_err(|_| Fault::Malformed("text that is not UTF-8".into())),
        ValueRef::Real(_) | ValueRef::Blob(_) => Err(Fault::Malformed(format!("a {:?} value, which the registry never writes", value.data_type()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_version_counts_the_migrations() {
        assert_eq!(SCHEMA_VERSION as usize, MIGRATIONS.len());
    }

    #[test]
    fn a_new_registry_is_created_in_wal_mode_at_the_current_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.sqlite");
        let pool = Pool::open(&path).unwrap();
        let (mode, version): (String, u32) = pool
            .run("read", |c| {
                Ok::<_, rusqlite::Error>((c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?, c.query_row("PRAGMA user_version", [], |r| r.get(0))?))
            })
            .unwrap();
        assert_eq!((mode.as_str(), version), ("wal", SCHEMA_VERSION));
        let leftovers: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).filter(|n| n.to_string_lossy().contains(".new-")).collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn damaged_files_are_named_for_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.sqlite");
        let problem = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            match inspect_file(&path) {
                Err(RegistryError::Corrupt { problem, .. }) => problem,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(problem(b"{\"schema_version\": 2}"), CorruptProblem::NotADatabase("a JSON file"));
        assert_eq!(problem(&[0xde, 0xad, 0xbe, 0xef]), CorruptProblem::NotADatabase("some other kind of file"));
        assert_eq!(problem(b""), CorruptProblem::Truncated { bytes: 0, expected: 100 });
        assert_eq!(problem(b"SQLite format"), CorruptProblem::Truncated { bytes: 13, expected: 100 });
    }

    #[test]
    fn a_file_cut_short_is_truncated_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.sqlite");
        let pool = Pool::open(&path).unwrap();
        pool.run("fill", |c| c.execute_batch("CREATE TABLE filler (x BLOB); INSERT INTO filler VALUES (zeroblob(100000));")).unwrap();
        drop(pool); // the last connection folds the log into the file
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
        let Err(RegistryError::Corrupt { problem: CorruptProblem::Truncated { bytes, expected }, .. }) = Pool::open(&path) else { panic!() };
        assert_eq!((bytes, expected), (whole.len() as u64 / 2, whole.len() as u64));
        assert_eq!(std::fs::read(&path).unwrap(), &whole[..whole.len() / 2]);
    }
}
