//! The registry in PostgreSQL (`GEOMAP_REGISTRY_URL`): connecting (the URL,
//! then the standard `PG*` variables, then libpq's defaults), TLS, the schema
//! and its migrations, and a small pool of connections.
//!
//! Invariants:
//! - A database this server did not make is never written: the schema check
//!   runs in a transaction that only reads until it has found either an empty
//!   database or `registry_schema` at a version this server knows; tables of
//!   anything else, or a newer version, are [`RegistryError::Corrupt`].
//! - Every write transaction first takes one advisory lock, so writes are
//!   serialised as SQLite's are: row ids grow in commit order (a listing's
//!   cursor never skips a row committed later), and two servers starting at
//!   once migrate once.
//! - A commit is acknowledged after PostgreSQL's (`synchronous_commit` as the
//!   operator set it: on by default, so durable).
//! - Statements run on a runtime of the pool's own, waited for with a plain
//!   blocking wait, so the registry's calls stay synchronous (as SQLite's) and
//!   are safe from any thread, a Tokio worker's included.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Statement};

use super::sql::{Cell, Fault, Row, Session, Value};
use super::{CorruptProblem, Location, RegistryError};

/// The schema migrations, in order: migration `i` takes `registry_schema.version` from `i` to `i + 1`.
const MIGRATIONS: [&str; 5] = [
    include_str!("migrations/postgres/0001_maps_and_revisions.sql"),
    include_str!("migrations/postgres/0002_knowledge_bundles.sql"),
    include_str!("migrations/postgres/0003_layouts.sql"),
    include_str!("migrations/postgres/0004_readings.sql"),
    include_str!("migrations/postgres/0005_unit_extractions.sql"),
];

/// How long connecting may take unless the URL's `connect_timeout` says otherwise.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The advisory lock every write transaction takes first ("geomap" in ASCII).
const WRITE_LOCK: i64 = 0x6765_6f6d_6170;

/// How a connection protects itself, as libpq's `sslmode` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protection {
    /// `disable`: no TLS.
    Plain,
    /// `allow`, `prefer` (the default) or `require`: TLS when the server offers it (always, for
    /// `require`), the certificate checked only against `sslrootcert` when one is given.
    Encrypted { required: bool },
    /// `verify-ca` or `verify-full`: TLS, the certificate and host name checked against
    /// `sslrootcert` or the system's trust store.
    Verified,
}

/// Connections to one PostgreSQL registry.
pub struct Pool {
    location: Location,
    /// Boxed: the driver's settings are large, and a pool is made once per server.
    config: Box<Config>,
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    runtime: Option<tokio::runtime::Runtime>,
    idle: Mutex<Vec<Connection>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("location", &self.location).finish_non_exhaustive()
    }
}

/// One connection, with the statements it has prepared.
struct Connection {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl Pool {
    /// Connects to the registry at `url` (what it leaves out from `variables`, the process's
    /// environment in production) and checks the database is this server's or empty. With
    /// `prepare`, brings its schema to this server's version (creating it in an empty database);
    /// without (for `check`, which writes nothing), `None` for an empty database.
    pub fn open(url: &str, variables: impl Fn(&str) -> Option<String>, prepare: bool) -> Result<Option<Pool>, RegistryError> {
        let (config, protection, root_certificate) = settings(url, &variables)?;
        let location = Location::Database(describe(&config));
        let tls = match protection {
            Protection::Plain => None,
            _ => Some(tls_connector(protection, root_certificate.as_deref()).map_err(|reason| RegistryError::Settings { location: location.clone(), reason })?),
        };
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).thread_name("registry-postgres").enable_all().build().map_err(|source| {
                RegistryError::Io { action: "start the registry's connection thread for", path: PathBuf::from(location.to_string()), source }
            })?;
        let pool = Pool { location, config: Box::new(config), tls, runtime: Some(runtime), idle: Mutex::new(Vec::new()) };
        Ok(pool.check_schema(prepare)?.then_some(pool))
    }

    /// Where the registry is, for operator messages (the URL without its password).
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Runs `work` in a transaction: a write takes the registry's write lock first and commits;
    /// a read sees one snapshot. Failures become [`RegistryError`]s naming `action`.
    pub fn transact<T>(&self, write: bool, action: &'static str, work: impl FnOnce(&mut dyn Session) -> Result<T, Fault>) -> Result<T, RegistryError> {
        self.within(write, action, |session| work(session))
    }

    /// [`Pool::transact`] with the session as it is (for the schema's migrations).
    fn within<T>(&self, write: bool, action: &'static str, work: impl FnOnce(&mut PostgresSession<'_>) -> Result<T, Fault>) -> Result<T, RegistryError> {
        let mut connection = self.connect()?;
        let begin =
            if write { format!("BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})") } else { "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY".to_owned() };
        let outcome =
            block_on(connection.client.batch_execute(&begin)).map_err(Fault::from).and_then(|()| work(&mut PostgresSession { connection: &mut connection }));
        // A failure anywhere (the lock's wait cancelled by a timeout included) rolls the transaction
        // back; a connection whose transaction did not end cleanly is dropped, never pooled.
        let end = if outcome.is_ok() { "COMMIT" } else { "ROLLBACK" };
        let ended = block_on(connection.client.batch_execute(end)).map_err(Fault::from);
        if ended.is_ok() && !connection.client.is_closed() {
            self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(connection);
        }
        outcome.and_then(|value| ended.map(|()| value)).map_err(|fault| self.error(action, fault))
    }

    /// The failure `fault` of `action`: damage PostgreSQL reports, or rows this server never
    /// wrote, are [`RegistryError::Corrupt`]; anything else (the server gone, a permission) is
    /// [`RegistryError::Database`].
    fn error(&self, action: &'static str, fault: Fault) -> RegistryError {
        let damaged = match &fault {
            Fault::Malformed(_) => true,
            Fault::Postgres(error) => error.code().is_some_and(|code| matches!(code.code(), "XX001" | "XX002")),
            Fault::Sqlite(_) | Fault::Unstorable(_) => false,
        };
        match damaged {
            true => RegistryError::Corrupt { location: self.location.clone(), problem: CorruptProblem::Malformed(fault.to_string()) },
            false => RegistryError::Database { action, location: self.location.clone(), source: Box::new(fault) },
        }
    }

    /// An idle connection that is still open (after a PostgreSQL restart the pooled ones are
    /// not), or a new one.
    fn connect(&self) -> Result<Connection, RegistryError> {
        while let Some(connection) = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop() {
            if !connection.client.is_closed() {
                return Ok(connection);
            }
        }
        let runtime = self.runtime.as_ref().expect("the runtime lives as long as the pool");
        let config = (*self.config).clone();
        let connecting = match self.tls.clone() {
            None => runtime.spawn(async move {
                let (client, connection) = config.connect(NoTls).await?;
                tokio::spawn(connection);
                Ok::<_, tokio_postgres::Error>(client)
            }),
            Some(tls) => runtime.spawn(async move {
                let (client, connection) = config.connect(tls).await?;
                tokio::spawn(connection);
                Ok(client)
            }),
        };
        let client = block_on(connecting)
            .map_err(|error| RegistryError::Io { action: "connect to", path: PathBuf::from(self.location.to_string()), source: std::io::Error::other(error) })?
            .map_err(|error| RegistryError::Database { action: "connect to", location: self.location.clone(), source: with_causes(&error).into() })?;
        Ok(Connection { client, statements: HashMap::new() })
    }

    /// Refuses a database that holds anything but this server's registry, or a registry of a
    /// newer schema. With `prepare`, creates the schema in an empty database and applies the
    /// migrations an older one lacks, all under the write lock, in one transaction. Whether the
    /// database holds a registry now.
    fn check_schema(&self, prepare: bool) -> Result<bool, RegistryError> {
        let mut problem = None;
        let held = self.within(prepare, "prepare the schema of", |session| {
            let tables: Vec<String> = session
                .query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name", &[])?
                .iter()
                .map(|row| row.text(0))
                .collect::<Result<_, _>>()?;
            let version = if tables.iter().any(|table| table == "registry_schema") {
                let session: &mut dyn Session = session;
                session.one("SELECT version FROM registry_schema", &[])?.int(0)?
            } else if tables.is_empty() && !prepare {
                return Ok(false);
            } else if tables.is_empty() {
                session.execute("CREATE TABLE registry_schema (version BIGINT NOT NULL)", &[])?;
                session.execute("INSERT INTO registry_schema (version) VALUES (0)", &[])?;
                0
            } else {
                let named = tables.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
                problem = Some(CorruptProblem::Foreign(format!("a database with {} tables that are not a registry's ({named}…)", tables.len())));
                return Ok(false);
            };
            if version > MIGRATIONS.len() as i64 {
                problem = Some(CorruptProblem::UnknownSchema(u32::try_from(version).unwrap_or(u32::MAX)));
                return Ok(false);
            }
            for (index, migration) in MIGRATIONS.iter().enumerate().skip(version as usize).filter(|_| prepare) {
                session.batch(migration)?;
                session.execute("UPDATE registry_schema SET version = ?1", &[Value::from(index as i64 + 1)])?;
            }
            Ok(true)
        })?;
        match problem {
            Some(problem) => Err(RegistryError::Corrupt { location: self.location.clone(), problem }),
            None => Ok(held),
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background(); // dropping a runtime inside another one's task would panic
        }
    }
}

/// A transaction on one connection.
struct PostgresSession<'a> {
    connection: &'a mut Connection,
}

impl PostgresSession<'_> {
    /// The prepared form of `sql` (`?N` parameters as `$N`), prepared once per connection.
    fn statement(&mut self, sql: &str) -> Result<Statement, Fault> {
        if let Some(statement) = self.connection.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = block_on(self.connection.client.prepare(&numbered(sql)))?;
        self.connection.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Runs several statements with no parameters (a migration), as one simple query.
    fn batch(&mut self, sql: &str) -> Result<(), Fault> {
        Ok(block_on(self.connection.client.batch_execute(sql))?)
    }
}

impl Session for PostgresSession<'_> {
    fn query(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Vec<Row>, Fault> {
        let statement = self.statement(sql)?;
        let rows = block_on(self.connection.client.query(&statement, &arguments(params)))?;
        rows.iter().map(row).collect()
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, Fault> {
        let statement = self.statement(sql)?;
        Ok(block_on(self.connection.client.execute(&statement, &arguments(params)))?)
    }
}

/// `sql` with SQLite's `?N` parameters written as PostgreSQL's `$N` (no statement of the
/// registry's holds a question mark in a literal).
fn numbered(sql: &str) -> String {
    sql.replace('?', "$")
}

/// The parameters as the driver takes them.
fn arguments<'a>(params: &'a [Value<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params
        .iter()
        .map(|value| match value {
            Value::Int(number) => number as &(dyn ToSql + Sync),
            Value::Text(text) => text as &(dyn ToSql + Sync),
        })
        .collect()
}

/// A result row as cells: the registry's columns are all BIGINT or TEXT.
fn row(row: &tokio_postgres::Row) -> Result<Row, Fault> {
    let cells = row.columns().iter().enumerate().map(|(index, column)| {
        let cell = match *column.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(index)?.map(Cell::Int),
            Type::INT4 => row.try_get::<_, Option<i32>>(index)?.map(|n| Cell::Int(n.into())),
            Type::TEXT | Type::VARCHAR | Type::NAME => row.try_get::<_, Option<String>>(index)?.map(Cell::Text),
            ref other => return Err(Fault::Malformed(format!("column {} is of type {other}, which the registry never writes", column.name()))),
        };
        Ok(cell.unwrap_or(Cell::Null))
    });
    Ok(Row(cells.collect::<Result<_, Fault>>()?))
}

/// The connection settings: `url`, then what it leaves out from the `PG*` variables, then libpq's
/// defaults (`localhost`, 5432, the user's name as user and database). Also the TLS protection
/// and the root certificate (`sslmode`, `sslrootcert`), which the URL's query or `PGSSLMODE` and
/// `PGSSLROOTCERT` give.
fn settings(url: &str, variables: &dyn Fn(&str) -> Option<String>) -> Result<(Config, Protection, Option<PathBuf>), RegistryError> {
    let invalid = |reason: String| RegistryError::Settings { location: Location::Database(geomap_model::settings::without_password(url)), reason };
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let (mut mode, mut root) = (variables("PGSSLMODE"), variables("PGSSLROOTCERT"));
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        match pair.split_once('=') {
            Some(("sslmode", value)) => mode = Some(value.to_owned()),
            Some(("sslrootcert", value)) => root = Some(value.to_owned()),
            _ => kept.push(pair),
        }
    }
    let port = variables("PGPORT").map(|port| port.parse::<u16>().map_err(|_| invalid(format!("PGPORT {port:?} is not a port")))).transpose()?;
    let base = match (port, base.split_once("://")) {
        // The driver reads a host without a port as port 5432, where libpq takes PGPORT first.
        (Some(port), Some((scheme, rest))) if !names_port(base) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            match authority.rsplit_once('@').map_or(authority, |(_, host)| host).is_empty() {
                true => base.to_owned(),
                false => format!("{scheme}://{authority}:{port}{path}"),
            }
        }
        _ => base.to_owned(),
    };
    let url = if kept.is_empty() { base } else { format!("{base}?{}", kept.join("&")) };
    let mut config: Config = url.parse().map_err(|error: tokio_postgres::Error| invalid(format!("not a PostgreSQL URL ({error})")))?;
    if config.get_hosts().is_empty() {
        config.host(variables("PGHOST").as_deref().unwrap_or("localhost"));
    }
    if config.get_ports().is_empty() {
        config.port(port.unwrap_or(5432));
    }
    if config.get_user().is_none() {
        let user = variables("PGUSER").or_else(|| variables("USER")).ok_or_else(|| invalid("no user: the URL, PGUSER and USER name none".to_owned()))?;
        config.user(&user);
    }
    if config.get_password().is_none()
        && let Some(password) = variables("PGPASSWORD")
    {
        config.password(password);
    }
    if config.get_dbname().is_none() {
        let database = variables("PGDATABASE").or_else(|| config.get_user().map(str::to_owned)).unwrap_or_default();
        config.dbname(&database);
    }
    let protection = match mode.as_deref().unwrap_or("prefer") {
        "disable" => Protection::Plain,
        "allow" | "prefer" => Protection::Encrypted { required: false },
        "require" => Protection::Encrypted { required: true },
        "verify-ca" | "verify-full" => Protection::Verified,
        other => return Err(invalid(format!("sslmode {other:?} is none of disable, allow, prefer, require, verify-ca, verify-full"))),
    };
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT); // an unreachable server is an error, not a hang
    }
    config.ssl_mode(match protection {
        Protection::Plain => SslMode::Disable,
        Protection::Encrypted { required: false } => SslMode::Prefer,
        _ => SslMode::Require,
    });
    Ok((config, protection, root.map(PathBuf::from)))
}

/// Whether the URL `base` (without its query) names a port.
fn names_port(base: &str) -> bool {
    let authority = base.split_once("://").map_or("", |(_, rest)| rest.split('/').next().unwrap_or(""));
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    host.rsplit_once(']').map_or(host, |(_, after)| after).contains(':')
}

/// TLS for `protection`: certificates checked against `root` (a PEM file) when given, else against
/// the system's trust store when verification is asked for, else not checked (libpq's `require`).
fn tls_connector(protection: Protection, root: Option<&std::path::Path>) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions().map_err(|error| error.to_string())?;
    let config = match (protection, root) {
        (_, Some(root)) => {
            use rustls::pki_types::pem::PemObject;
            let mut store = rustls::RootCertStore::empty();
            for certificate in CertificateDer::pem_file_iter(root).map_err(|error| format!("cannot read sslrootcert {}: {error}", root.display()))? {
                let certificate = certificate.map_err(|error| format!("sslrootcert {} is not PEM certificates: {error}", root.display()))?;
                store.add(certificate).map_err(|error| format!("sslrootcert {}: {error}", root.display()))?;
            }
            builder.with_root_certificates(store).with_no_client_auth()
        }
        (Protection::Verified, None) => {
            use rustls_platform_verifier::BuilderVerifierExt;
            builder.with_platform_verifier().map_err(|error| error.to_string())?.with_no_client_auth()
        }
        _ => builder.dangerous().with_custom_certificate_verifier(Arc::new(Unchecked(provider))).with_no_client_auth(),
    };
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// libpq's `prefer` and `require` without a root certificate: the connection is encrypted, the
/// server's certificate is not checked (its handshake signature is).
#[derive(Debug)]
struct Unchecked(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signed: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, certificate, signed, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signed: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, certificate, signed, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `error` and the errors that caused it, in one line (the driver's own message says only "error
/// performing TLS handshake", its cause which certificate check failed).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text = format!("{text}: {next}");
        cause = next.source();
    }
    text
}

/// `postgres://user@host:port/database`: where the registry is, without a password.
fn describe(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        Some(Host::Unix(path)) => path.display().to_string(),
        None => String::new(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("postgres://{}@{host}:{port}/{}", config.get_user().unwrap_or(""), config.get_dbname().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(url: &str, variables: &[(&str, &str)]) -> (Config, Protection, Option<PathBuf>) {
        let variables: HashMap<String, String> = variables.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        settings(url, &|name| variables.get(name).cloned()).unwrap()
    }

    #[test]
    fn the_url_wins_then_the_pg_variables_then_libpqs_defaults() {
        let (config, protection, root) = from("postgres://geo:secret@db.example:6543/maps?sslmode=verify-full&sslrootcert=/etc/ca.pem", &[("PGUSER", "other")]);
        assert_eq!(config.get_user(), Some("geo"));
        assert_eq!(config.get_password(), Some(&b"secret"[..]));
        assert_eq!(config.get_ports(), [6543]);
        assert_eq!(config.get_dbname(), Some("maps"));
        assert_eq!((protection, root), (Protection::Verified, Some(PathBuf::from("/etc/ca.pem"))));
        assert_eq!(describe(&config), "postgres://geo@db.example:6543/maps", "no password");

        let pg = [("PGHOST", "127.0.0.1"), ("PGPORT", "5433"), ("PGUSER", "survey"), ("PGPASSWORD", "pw"), ("PGSSLMODE", "disable"), ("USER", "root")];
        let (config, protection, _) = from("postgres://", &pg);
        assert_eq!(describe(&config), "postgres://survey@127.0.0.1:5433/survey", "the database defaults to the user's name");
        assert_eq!((config.get_password(), protection), (Some(&b"pw"[..]), Protection::Plain));
        let (config, _, _) = from("postgres://geo@db.example/maps", &[("PGPORT", "5433")]);
        assert_eq!(config.get_ports(), [5433], "a URL without a port takes PGPORT");
        let (config, _, _) = from("postgres://geo@[::1]:6000/maps", &[("PGPORT", "5433")]);
        assert_eq!(config.get_ports(), [6000]);
        let (config, protection, _) = from("postgresql:///registry", &[("USER", "root")]);
        assert_eq!(describe(&config), "postgres://root@localhost:5432/registry");
        assert_eq!(protection, Protection::Encrypted { required: false }, "libpq's default, prefer");
    }

    #[test]
    fn bad_settings_say_what_is_wrong_without_the_password() {
        let error = settings("postgres://geo:secret@host/db?sslmode=maybe", &|_| None).unwrap_err().to_string();
        assert!(error.contains("sslmode \"maybe\"") && !error.contains("secret"), "{error}");
        let error = settings("postgres://geo:secret@host/db", &|name| (name == "PGPORT").then(|| "lots".to_owned())).unwrap_err().to_string();
        assert!(error.contains("PGPORT") && !error.contains("secret"), "{error}");
    }

    #[test]
    fn parameters_are_numbered_as_postgresql_numbers_them() {
        assert_eq!(numbered("SELECT id FROM maps WHERE id > ?1 LIMIT ?2"), "SELECT id FROM maps WHERE id > $1 LIMIT $2");
    }
}
