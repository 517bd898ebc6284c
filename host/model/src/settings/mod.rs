//! Operator settings: environment variables plus an optional TOML file named by
//! `GEOMAP_CONFIG` (the environment wins). Read once at start; errors and hints
//! read this same value at the moment of a failure.
//!
//! Invariant: a bad value never reaches the server; [`Settings::load`] rejects
//! it with the variable's name and what it accepts.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::georeference::{Compression, Writing};

pub mod variables;

/// The folder name under the platform data directory.
pub const APP_DIR_NAME: &str = "stratigraphic-amenity";
/// Default media limits: room for a 10000×10000 scan with margin.
pub const DEFAULT_MAX_IMAGE_PIXELS: u64 = 150_000_000;
/// A 10000×10000 RGBA TIFF without compression is 400 MB.
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 1 << 30;

/// Everything the operator can set.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Registry, artifacts, assets and caches (`GEOMAP_DATA_ROOT`).
    pub data_root: PathBuf,
    /// Where revision and layout folders (`artifacts/`) and the pixel store (`cache/pixels/`) are
    /// written (`GEOMAP_ARTIFACT_ROOT`): storage every replica mounts; the data root by default.
    pub artifact_root: PathBuf,
    /// Allowed folders for map files (`GEOMAP_MAP_ROOTS`); the first resolves relative paths.
    pub map_roots: Vec<PathBuf>,
    /// Whether `map_roots` came from the operator rather than the default.
    pub map_roots_configured: bool,
    /// Allowed folders for provider components (`GEOMAP_PROVIDER_ROOTS`).
    pub provider_roots: Vec<PathBuf>,
    /// Providers the operator enables (`GEOMAP_PROVIDERS`); `None` enables all found.
    pub providers: Option<Vec<String>>,
    /// Per-provider limits: for each provider the config file names (`[provider_limits.<name>]`),
    /// the defaults with the operator's values over them ([`Settings::provider_limits_for`] reads it).
    pub provider_limits: BTreeMap<String, ProviderLimits>,
    /// How many provider instances the runtime keeps and for how long: data, not a setting
    /// (no variable or key changes it), always [`ProviderPool::default`].
    pub provider_pool: ProviderPool,
    /// Whether `geomap_prepare_detectors` is offered over MCP.
    pub detector_preparation: bool,
    /// Whether `geomap_prepare_knowledge` is offered over MCP.
    pub knowledge_preparation: bool,
    /// Largest map file accepted, in bytes.
    pub max_image_bytes: u64,
    /// Largest map accepted, in pixels (width × height).
    pub max_image_pixels: u64,
    /// Base URL to fetch approved assets from instead of upstream.
    pub asset_mirror: Option<String>,
    /// The PostgreSQL registry's `postgres://` URL (`GEOMAP_REGISTRY_URL`); unset: SQLite in the data root.
    pub registry_url: Option<String>,
    /// This replica's name behind a load balancer (`GEOMAP_REPLICA_ID`): the prefix of its session IDs.
    pub replica_id: Option<String>,
    /// How long a download may go without receiving a byte (`GEOMAP_ASSET_TIMEOUT`).
    pub asset_timeout: Duration,
    /// How long a preparation tool waits for the user's answer to its download question (`GEOMAP_CONSENT_TIMEOUT`).
    pub consent_timeout: Duration,
    /// Per-asset overrides from the config file (`[assets.<id>]`).
    pub assets: BTreeMap<String, AssetOverride>,
    /// The tracing filter for the log (`GEOMAP_LOG`).
    pub log_filter: String,
    /// The TOML file the settings were read from, if any.
    pub config_file: Option<PathBuf>,
    /// Serve streamable HTTP on this address instead of stdio (`GEOMAP_HTTP_LISTEN`, or `serve --http`).
    pub http_listen: Option<SocketAddr>,
    /// A file of bearer tokens, one per line (`GEOMAP_HTTP_TOKENS_FILE`); required off loopback.
    pub http_tokens_file: Option<PathBuf>,
    /// Host names (or `host:port`) besides loopback that HTTP requests may name in `Host` and `Origin`
    /// (`GEOMAP_HTTP_ALLOWED_HOSTS`, comma-separated).
    pub http_allowed_hosts: Vec<String>,
    /// How many heavy calls (detection, reading, georeference, downloads) run at once (`GEOMAP_MAX_HEAVY_CALLS`).
    pub max_heavy_calls: usize,
    /// How long calls in flight may finish after SIGTERM or SIGINT before they are cancelled (`GEOMAP_SHUTDOWN_GRACE`).
    pub shutdown_grace: Duration,
    /// Threads one georeference warps, compresses and builds overviews on, and one unit extraction simplifies
    /// and compresses on (`GEOMAP_WORKER_THREADS`, default all cores).
    pub worker_threads: usize,
    /// How georeferenced images are compressed (`GEOMAP_GEOREF_COMPRESSION`: deflate, jpeg or webp).
    pub georef_compression: Compression,
    /// The most one georeference's warp buffers, and GDAL's block cache, may each take, in bytes (`GEOMAP_GEOREF_MEMORY`).
    pub georef_memory: u64,
    /// The most the decoded scans of the pixel store may take on disk, in bytes (`GEOMAP_PIXEL_CACHE`).
    pub pixel_cache: u64,
    /// Which generation of PP-OCR models reads the maps' words (`GEOMAP_OCR_MODELS`).
    pub ocr_models: OcrModels,
}

/// The generation of PP-OCR models that reads the maps' words (`GEOMAP_OCR_MODELS`): each is one approved asset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OcrModels {
    /// PP-OCRv4 as RapidOCR ships it (asset `ppocr-v4`): the default.
    #[default]
    PpOcrV4,
    /// PP-OCRv5 mobile (asset `ppocr-v5`).
    PpOcrV5,
}

impl OcrModels {
    /// Every generation's name, as the operator writes it: the id of its asset.
    pub const NAMES: [&'static str; 2] = ["ppocr-v4", "ppocr-v5"];

    /// The generation named `name` (any case).
    pub fn parse(name: &str) -> Option<OcrModels> {
        let name = name.trim().to_ascii_lowercase();
        [OcrModels::PpOcrV4, OcrModels::PpOcrV5].into_iter().find(|models| models.asset() == name)
    }

    /// The id of the asset holding its models.
    pub const fn asset(self) -> &'static str {
        OcrModels::NAMES[self as usize]
    }
}

/// Default for `GEOMAP_ASSET_TIMEOUT`.
pub const DEFAULT_ASSET_TIMEOUT: Duration = Duration::from_secs(30);
/// Default for `GEOMAP_CONSENT_TIMEOUT`.
pub const DEFAULT_CONSENT_TIMEOUT: Duration = Duration::from_secs(600);
/// Default for `GEOMAP_SHUTDOWN_GRACE`.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Default for `GEOMAP_PIXEL_CACHE`: thirteen decoded 10000×10000 scans.
pub const DEFAULT_PIXEL_CACHE: u64 = 4 << 30;
/// Default for `GEOMAP_GEOREF_MEMORY`: room for a 10000×10000 RGB scan and its warped copy.
pub const DEFAULT_GEOREF_MEMORY: u64 = 1 << 30;

/// The limits every call of one provider runs under: [`ProviderLimits::default`], with what the
/// operator set in `[provider_limits.<name>]` (config file only) over it. The provider runtime
/// takes this type as it is; there is no other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderLimits {
    /// Wall-clock time a call may take (`deadline = "5s"`; default 10 s).
    pub deadline: Duration,
    /// Memory the instance a call runs on may grow to, what earlier calls left included
    /// (`memory = "256MiB"`; default 512 MiB).
    pub memory_bytes: usize,
    /// Bytes of text a call may return (`output = "1MiB"`; default 4 MiB).
    pub output_bytes: usize,
}

impl Default for ProviderLimits {
    fn default() -> ProviderLimits {
        ProviderLimits { deadline: Duration::from_secs(10), memory_bytes: 512 << 20, output_bytes: 4 << 20 }
    }
}

/// How many provider instances the runtime keeps ready, and for how long. No variable or key
/// sets it (these are not settings): [`Settings`] carries the defaults, and the runtime is built
/// from what it is given, so tests can build one with other sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderPool {
    /// Instances (with their memories, tables and stacks) the runtime has slots for, running or
    /// idle; a call beyond them waits for one to be free (default 256).
    pub instance_slots: u32,
    /// Of each linear memory, how much stays mapped between instances and is cleared by writing
    /// zeros (beyond it, pages go back to the kernel): a lookup's whole memory, so a new instance
    /// costs no `madvise` (default 4 MiB).
    pub keep_resident_bytes: usize,
    /// Idle instances one provider keeps at most, each holding a slot and its memory (default 2).
    pub idle_per_provider: usize,
    /// An idle instance that sat unused this long is dropped at its provider's next call, or
    /// sooner when a call of any provider needs its slot (default 5 minutes).
    pub idle_expiry: Duration,
    /// How old a warm instance's comparison of the files in its mounted folders may be before a
    /// call compares them again: a file rewritten in place is seen from this long after (default 1 s).
    pub revalidate: Duration,
}

impl Default for ProviderPool {
    fn default() -> ProviderPool {
        ProviderPool {
            instance_slots: 256,
            keep_resident_bytes: 4 << 20,
            idle_per_provider: 2,
            idle_expiry: Duration::from_secs(300),
            revalidate: Duration::from_secs(1),
        }
    }
}

/// `[provider_limits.<name>]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderLimitsFile {
    deadline: Option<String>,
    memory: Option<String>,
    output: Option<String>,
}

/// `[assets.<id>]` in the config file: a change to an approved asset, or an asset the operator
/// declares for a provider of their own (an id the catalog does not know).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssetOverride {
    /// The operator's own folder holding the asset's files: the installer never touches it.
    pub path: Option<PathBuf>,
    /// Sources by file name: replacements for an approved asset's files, or every file of a declared asset.
    #[serde(default)]
    pub sources: BTreeMap<String, SourceOverride>,
    /// What a declared asset is (approved assets keep the catalog's).
    pub title: Option<String>,
    /// A declared asset's licence.
    pub licence: Option<String>,
    /// The attribution a declared asset's licence asks for.
    pub attribution: Option<String>,
}

/// Where to fetch one file instead, pinned anew.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceOverride {
    /// An http(s) URL.
    pub url: String,
    /// The file's size in bytes.
    pub size: u64,
    /// The file's SHA-256 (lowercase hex).
    pub sha256: String,
    /// With a zip archive at `url`: the member to extract.
    pub member: Option<String>,
    /// With `member`: the archive's size.
    pub archive_size: Option<u64>,
    /// With `member`: the archive's SHA-256.
    pub archive_sha256: Option<String>,
}

/// A setting the server cannot start with.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SettingsError {
    /// A variable's value is not acceptable.
    #[error("{variable}={value:?} is not valid: {accepts}")]
    Invalid { variable: &'static str, value: String, accepts: String },
    /// The config file named by GEOMAP_CONFIG cannot be used.
    #[error("GEOMAP_CONFIG={}: {reason}", path.display())]
    ConfigFile { path: PathBuf, reason: String },
    /// No data root was set and the platform has no data directory.
    #[error("GEOMAP_DATA_ROOT is not set and this platform has no user data directory; set GEOMAP_DATA_ROOT to an absolute folder")]
    NoDataRoot,
}

/// The TOML file's keys: each variable's name without `GEOMAP_`, in lower case.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    data_root: Option<PathBuf>,
    artifact_root: Option<PathBuf>,
    map_roots: Option<Vec<PathBuf>>,
    provider_roots: Option<Vec<PathBuf>>,
    providers: Option<Vec<String>>,
    mcp_enable_detector_preparation: Option<bool>,
    mcp_enable_knowledge_preparation: Option<bool>,
    max_image_bytes: Option<FileCount>,
    max_image_pixels: Option<FileCount>,
    asset_mirror: Option<String>,
    registry_url: Option<String>,
    replica_id: Option<String>,
    asset_timeout: Option<String>,
    consent_timeout: Option<String>,
    #[serde(default)]
    assets: BTreeMap<String, AssetOverride>,
    #[serde(default)]
    provider_limits: BTreeMap<String, ProviderLimitsFile>,
    log: Option<String>,
    http_listen: Option<String>,
    http_tokens_file: Option<PathBuf>,
    http_allowed_hosts: Option<Vec<String>>,
    max_heavy_calls: Option<FileCount>,
    shutdown_grace: Option<String>,
    worker_threads: Option<FileCount>,
    georef_compression: Option<String>,
    georef_memory: Option<FileCount>,
    pixel_cache: Option<FileCount>,
    ocr_models: Option<String>,
}

/// A count in the config file: a number, or text as the environment takes it (`"1GiB"`, `"150_000_000"`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum FileCount {
    Number(u64),
    Text(String),
}

impl Settings {
    /// Reads the settings from the process environment.
    pub fn from_process_env() -> Result<Settings, SettingsError> {
        Settings::load(|name| std::env::var_os(name))
    }

    /// Reads the settings through `env`, a lookup of environment variables.
    pub fn load(env: impl Fn(&str) -> Option<OsString>) -> Result<Settings, SettingsError> {
        let var = |name: &str| env(name).filter(|value| !value.is_empty());
        let config_file = var("GEOMAP_CONFIG").map(PathBuf::from);
        let file = match &config_file {
            Some(path) => read_config_file(path)?,
            None => ConfigFile::default(),
        };

        let data_root = match var("GEOMAP_DATA_ROOT") {
            Some(value) => absolute_path("GEOMAP_DATA_ROOT", &value)?,
            None => match file.data_root {
                Some(path) => absolute_path("GEOMAP_DATA_ROOT", path.as_os_str())?,
                None => dirs::data_dir().ok_or(SettingsError::NoDataRoot)?.join(APP_DIR_NAME),
            },
        };
        let artifact_root = match var("GEOMAP_ARTIFACT_ROOT") {
            Some(value) => absolute_path("GEOMAP_ARTIFACT_ROOT", &value)?,
            None => match file.artifact_root {
                Some(path) => absolute_path("GEOMAP_ARTIFACT_ROOT", path.as_os_str())?,
                None => data_root.clone(),
            },
        };
        let env_or_file_paths = |name: &'static str, from_file: Option<Vec<PathBuf>>| match var(name) {
            Some(value) => path_list(name, &value).map(Some),
            None => from_file.map(|paths| paths.iter().map(|p| absolute_path(name, p.as_os_str())).collect()).transpose(),
        };
        let map_roots = env_or_file_paths("GEOMAP_MAP_ROOTS", file.map_roots)?;
        let map_roots_configured = map_roots.is_some();
        let map_roots = map_roots.unwrap_or_else(|| vec![data_root.join("maps")]);
        let provider_roots = env_or_file_paths("GEOMAP_PROVIDER_ROOTS", file.provider_roots)?.unwrap_or_else(|| vec![data_root.join("providers")]);

        let providers = match var("GEOMAP_PROVIDERS") {
            Some(value) => Some(provider_names(&text("GEOMAP_PROVIDERS", &value)?)?),
            None => file.providers,
        };
        let provider_limits = file.provider_limits.iter().map(|(name, limits)| provider_limits(name, limits)).collect::<Result<_, _>>()?;
        let flag = |name: &'static str, from_file: Option<bool>| match var(name) {
            Some(value) => boolean(name, &text(name, &value)?),
            None => Ok(from_file.unwrap_or(true)),
        };
        let limit = |name: &'static str, from_file: Option<FileCount>, default: u64, bytes: bool| match var(name) {
            Some(value) => positive_count(name, &text(name, &value)?, bytes),
            None => match from_file {
                Some(FileCount::Number(number)) => positive_count(name, &number.to_string(), bytes),
                Some(FileCount::Text(value)) => positive_count(name, &value, bytes),
                None => Ok(default),
            },
        };
        let asset_mirror = match var("GEOMAP_ASSET_MIRROR") {
            Some(value) => Some(text("GEOMAP_ASSET_MIRROR", &value)?),
            None => file.asset_mirror,
        };
        if let Some(url) = &asset_mirror {
            mirror_url(url)?;
        }
        let registry_url = match var("GEOMAP_REGISTRY_URL") {
            Some(value) => Some(text("GEOMAP_REGISTRY_URL", &value)?),
            None => file.registry_url,
        };
        if let Some(url) = registry_url.as_deref().filter(|url| !url.starts_with("postgres://") && !url.starts_with("postgresql://")) {
            return Err(invalid("GEOMAP_REGISTRY_URL", &without_password(url), "a postgres:// or postgresql:// URL"));
        }
        let replica_id = match var("GEOMAP_REPLICA_ID") {
            Some(value) => Some(text("GEOMAP_REPLICA_ID", &value)?),
            None => file.replica_id,
        };
        if let Some(name) =
            replica_id.as_deref().filter(|name| name.is_empty() || name.len() > 32 || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        {
            return Err(invalid("GEOMAP_REPLICA_ID", name, "up to 32 letters, digits, `-` or `_`"));
        }
        let duration = |name: &'static str, from_file: Option<String>, default: Duration| {
            let value = match var(name) {
                Some(value) => Some(text(name, &value)?),
                None => from_file,
            };
            match value {
                Some(value) => humantime::parse_duration(&value)
                    .ok()
                    .filter(|duration| !duration.is_zero())
                    .ok_or_else(|| invalid(name, &value, "a duration above zero such as `30s` or `2m`")),
                None => Ok(default),
            }
        };
        let asset_timeout = duration("GEOMAP_ASSET_TIMEOUT", file.asset_timeout, DEFAULT_ASSET_TIMEOUT)?;
        let shutdown_grace = duration("GEOMAP_SHUTDOWN_GRACE", file.shutdown_grace, DEFAULT_SHUTDOWN_GRACE)?;
        let consent_timeout = duration("GEOMAP_CONSENT_TIMEOUT", file.consent_timeout, DEFAULT_CONSENT_TIMEOUT)?;
        let http_listen = match var("GEOMAP_HTTP_LISTEN") {
            Some(value) => Some(text("GEOMAP_HTTP_LISTEN", &value)?),
            None => file.http_listen,
        };
        let http_listen = http_listen.map(|value| listen_address(&value)).transpose()?;
        let http_tokens_file = match var("GEOMAP_HTTP_TOKENS_FILE") {
            Some(value) => Some(absolute_path("GEOMAP_HTTP_TOKENS_FILE", &value)?),
            None => file.http_tokens_file.map(|path| absolute_path("GEOMAP_HTTP_TOKENS_FILE", path.as_os_str())).transpose()?,
        };
        let http_allowed_hosts = match var("GEOMAP_HTTP_ALLOWED_HOSTS") {
            Some(value) => host_names(&text("GEOMAP_HTTP_ALLOWED_HOSTS", &value)?)?,
            None => match file.http_allowed_hosts {
                Some(hosts) => host_names(&hosts.join(","))?,
                None => Vec::new(),
            },
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let max_heavy_calls = limit("GEOMAP_MAX_HEAVY_CALLS", file.max_heavy_calls, cores, false)? as usize;
        let worker_threads = limit("GEOMAP_WORKER_THREADS", file.worker_threads, cores, false)? as usize;
        let georef_memory = limit("GEOMAP_GEOREF_MEMORY", file.georef_memory, DEFAULT_GEOREF_MEMORY, true)?;
        let pixel_cache = limit("GEOMAP_PIXEL_CACHE", file.pixel_cache, DEFAULT_PIXEL_CACHE, true)?;
        let georef_compression = match var("GEOMAP_GEOREF_COMPRESSION") {
            Some(value) => Some(text("GEOMAP_GEOREF_COMPRESSION", &value)?),
            None => file.georef_compression,
        };
        let georef_compression = match georef_compression {
            Some(name) => Compression::parse(&name)
                .ok_or_else(|| invalid("GEOMAP_GEOREF_COMPRESSION", &name, "deflate (lossless, the default), jpeg or webp (smaller files, lossy)"))?,
            None => Compression::default(),
        };
        let ocr_models = match var("GEOMAP_OCR_MODELS") {
            Some(value) => Some(text("GEOMAP_OCR_MODELS", &value)?),
            None => file.ocr_models,
        };
        let ocr_models = match ocr_models {
            Some(name) => OcrModels::parse(&name).ok_or_else(|| invalid("GEOMAP_OCR_MODELS", &name, "ppocr-v4 (the default) or ppocr-v5"))?,
            None => OcrModels::default(),
        };
        let log_filter = match var("GEOMAP_LOG") {
            Some(value) => text("GEOMAP_LOG", &value)?,
            None => file.log.unwrap_or_else(|| "info".to_owned()),
        };
        tracing_subscriber::EnvFilter::try_new(&log_filter)
            .map_err(|error| invalid("GEOMAP_LOG", &log_filter, &format!("a tracing filter such as `info` or `warn,stratigraphic_amenity=debug` ({error})")))?;

        Ok(Settings {
            data_root,
            artifact_root,
            map_roots,
            map_roots_configured,
            provider_roots,
            providers,
            provider_limits,
            provider_pool: ProviderPool::default(),
            detector_preparation: flag("GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION", file.mcp_enable_detector_preparation)?,
            knowledge_preparation: flag("GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION", file.mcp_enable_knowledge_preparation)?,
            max_image_bytes: limit("GEOMAP_MAX_IMAGE_BYTES", file.max_image_bytes, DEFAULT_MAX_IMAGE_BYTES, true)?,
            max_image_pixels: limit("GEOMAP_MAX_IMAGE_PIXELS", file.max_image_pixels, DEFAULT_MAX_IMAGE_PIXELS, false)?,
            asset_mirror,
            registry_url,
            replica_id,
            asset_timeout,
            consent_timeout,
            assets: file.assets,
            log_filter,
            config_file,
            http_listen,
            http_tokens_file,
            http_allowed_hosts,
            max_heavy_calls,
            shutdown_grace,
            worker_threads,
            georef_compression,
            georef_memory,
            pixel_cache,
            ocr_models,
        })
    }

    /// The limits of provider `name`'s calls: the defaults, with the operator's `[provider_limits.<name>]` over them.
    pub fn provider_limits_for(&self, name: &str) -> ProviderLimits {
        self.provider_limits.get(name).copied().unwrap_or_default()
    }

    /// How georeferences write their image under these settings.
    pub fn georef_writing(&self) -> Writing {
        Writing { threads: self.worker_threads, compression: self.georef_compression, memory_ceiling: self.georef_memory }
    }

    /// Serving HTTP on `address` instead of what the settings say (`serve --http`).
    pub fn with_http_listen(self, address: &str) -> Result<Settings, SettingsError> {
        Ok(Settings { http_listen: Some(listen_address(address)?), ..self })
    }

    /// Whether a server with these settings may start: off loopback, HTTP requires bearer tokens.
    pub fn http_problem(&self) -> Option<String> {
        let address = self.http_listen?;
        (!address.ip().is_loopback() && self.http_tokens_file.is_none()).then(|| {
            format!(
                "GEOMAP_HTTP_LISTEN={address} is not a loopback address, and anyone who can reach it could use this server: \
                 set GEOMAP_HTTP_TOKENS_FILE to a file of bearer tokens (one per line), or listen on 127.0.0.1"
            )
        })
    }
}

/// Parses `ADDR:PORT` for `GEOMAP_HTTP_LISTEN` and `serve --http`.
fn listen_address(value: &str) -> Result<SocketAddr, SettingsError> {
    value.trim().parse().map_err(|_| invalid("GEOMAP_HTTP_LISTEN", value, "an IP address and port such as 127.0.0.1:8080 or [::1]:8080"))
}

/// Host names or `host:port` authorities, comma-separated (`GEOMAP_HTTP_ALLOWED_HOSTS`).
fn host_names(value: &str) -> Result<Vec<String>, SettingsError> {
    let names: Vec<String> = value.split(',').map(str::trim).filter(|n| !n.is_empty()).map(str::to_ascii_lowercase).collect();
    let valid = |n: &String| n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    if !names.iter().all(valid) {
        return Err(invalid("GEOMAP_HTTP_ALLOWED_HOSTS", value, "host names or host:port, separated by commas (e.g. maps.example.org,10.0.0.5:8080)"));
    }
    Ok(names)
}

fn invalid(variable: &'static str, value: &str, accepts: &str) -> SettingsError {
    SettingsError::Invalid { variable, value: value.to_owned(), accepts: accepts.to_owned() }
}

fn read_config_file(path: &Path) -> Result<ConfigFile, SettingsError> {
    let fail = |reason: String| SettingsError::ConfigFile { path: path.to_owned(), reason };
    let source = std::fs::read_to_string(path).map_err(|error| fail(format!("cannot be read ({error})")))?;
    toml::from_str(&source).map_err(|error| fail(format!("is not a valid settings file: {error}")))
}

fn text(variable: &'static str, value: &OsString) -> Result<String, SettingsError> {
    value.to_str().map(str::to_owned).ok_or_else(|| invalid(variable, &value.to_string_lossy(), "UTF-8 text"))
}

fn absolute_path(variable: &'static str, value: &std::ffi::OsStr) -> Result<PathBuf, SettingsError> {
    let path = PathBuf::from(value);
    if path.is_absolute() { Ok(path) } else { Err(invalid(variable, &value.to_string_lossy(), "an absolute path")) }
}

fn path_list(variable: &'static str, value: &OsString) -> Result<Vec<PathBuf>, SettingsError> {
    let paths: Vec<PathBuf> = std::env::split_paths(value).filter(|p| !p.as_os_str().is_empty()).collect();
    if paths.is_empty() {
        return Err(invalid(variable, &value.to_string_lossy(), "one or more absolute folders, separated by ':'"));
    }
    paths.iter().map(|p| absolute_path(variable, p.as_os_str())).collect()
}

fn provider_names(value: &str) -> Result<Vec<String>, SettingsError> {
    let names: Vec<String> = value.split(',').map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).collect();
    let valid = |n: &String| n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if names.is_empty() || !names.iter().all(valid) {
        return Err(invalid("GEOMAP_PROVIDERS", value, "provider names (lowercase letters, digits, '-') separated by commas"));
    }
    Ok(names)
}

/// Checks one `[provider_limits.<name>]` table.
fn provider_limits(name: &str, file: &ProviderLimitsFile) -> Result<(String, ProviderLimits), SettingsError> {
    provider_names(name)?;
    const TABLE: &str = "GEOMAP_CONFIG [provider_limits]";
    let deadline = file
        .deadline
        .as_ref()
        .map(|value| {
            humantime::parse_duration(value)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| invalid(TABLE, value, &format!("{name}.deadline: a duration such as `5s`")))
        })
        .transpose()?;
    let bytes = |value: &Option<String>| {
        value.as_deref().map(|value| positive_count(TABLE, value, true).map(|bytes| usize::try_from(bytes).unwrap_or(usize::MAX))).transpose()
    };
    let defaults = ProviderLimits::default();
    let limits = ProviderLimits {
        deadline: deadline.unwrap_or(defaults.deadline),
        memory_bytes: bytes(&file.memory)?.unwrap_or(defaults.memory_bytes),
        output_bytes: bytes(&file.output)?.unwrap_or(defaults.output_bytes),
    };
    Ok((name.to_owned(), limits))
}

fn boolean(variable: &'static str, value: &str) -> Result<bool, SettingsError> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(invalid(variable, value, "true or false (also 1/0, yes/no, on/off)")),
    }
}

fn positive_count(variable: &'static str, value: &str, bytes: bool) -> Result<u64, SettingsError> {
    let accepts = if bytes {
        "a whole number of bytes above 0, optionally with a KiB, MiB or GiB suffix (e.g. 512MiB)"
    } else {
        "a whole number above 0 (underscores allowed, e.g. 150_000_000)"
    };
    let compact: String = value.trim().chars().filter(|&c| c != '_').collect();
    let (digits, scale) = match bytes {
        true => [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
            .into_iter()
            .find_map(|(suffix, scale)| compact.strip_suffix(suffix).map(|d| (d.trim().to_owned(), scale)))
            .unwrap_or((compact.clone(), 1)),
        false => (compact.clone(), 1),
    };
    digits.parse::<u64>().ok().and_then(|n| n.checked_mul(scale)).filter(|&n| n > 0).ok_or_else(|| invalid(variable, value, accepts))
}

/// `url` with the password it may hold (`user:password@`) left out, for messages.
pub fn without_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = url[scheme + 3..at].split(':').next().unwrap_or("");
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// Checks an asset mirror's base URL (`GEOMAP_ASSET_MIRROR`, the installer's `--mirror`).
pub fn mirror_url(url: &str) -> Result<(), SettingsError> {
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() && !url.contains(char::is_whitespace) => Ok(()),
        _ => Err(invalid("GEOMAP_ASSET_MIRROR", url, "an http:// or https:// base URL")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn load(vars: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        let map: HashMap<String, OsString> = vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        Settings::load(|name| map.get(name).cloned())
    }

    #[test]
    fn defaults_hang_off_the_data_root() {
        let s = load(&[("GEOMAP_DATA_ROOT", "/srv/geomap")]).unwrap();
        assert_eq!(s.map_roots, [PathBuf::from("/srv/geomap/maps")]);
        assert!(!s.map_roots_configured);
        assert_eq!(s.provider_roots, [PathBuf::from("/srv/geomap/providers")]);
        assert_eq!((s.artifact_root.as_path(), s.registry_url.as_deref()), (Path::new("/srv/geomap"), None), "artifacts and SQLite in the data root");
        let shared =
            load(&[("GEOMAP_DATA_ROOT", "/srv/geomap"), ("GEOMAP_ARTIFACT_ROOT", "/mnt/shared"), ("GEOMAP_REGISTRY_URL", "postgres://db/geomap")]).unwrap();
        assert_eq!((shared.artifact_root.as_path(), shared.registry_url.as_deref()), (Path::new("/mnt/shared"), Some("postgres://db/geomap")));
        assert_eq!((s.max_image_pixels, s.max_image_bytes), (DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MAX_IMAGE_BYTES));
        assert!(s.detector_preparation && s.knowledge_preparation);
        assert_eq!(s.log_filter, "info");
    }

    #[test]
    fn bad_values_name_the_variable_and_what_it_accepts() {
        let cases = [
            ("GEOMAP_MAX_IMAGE_PIXELS", "lots"),
            ("GEOMAP_MAX_IMAGE_BYTES", "0"),
            ("GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION", "maybe"),
            ("GEOMAP_MAP_ROOTS", "relative/maps"),
            ("GEOMAP_ASSET_MIRROR", "ftp://mirror"),
            ("GEOMAP_REGISTRY_URL", "mysql://geo:secret@db/geomap"),
            ("GEOMAP_REPLICA_ID", "replica one"),
            ("GEOMAP_ARTIFACT_ROOT", "relative/artifacts"),
            ("GEOMAP_PROVIDERS", "Bad Name"),
        ];
        for (variable, value) in cases {
            let error = load(&[("GEOMAP_DATA_ROOT", "/d"), (variable, value)]).unwrap_err();
            let SettingsError::Invalid { variable: named, accepts, .. } = &error else { panic!("{error:?}") };
            assert_eq!(*named, variable);
            assert!(!accepts.is_empty());
            assert!(error.to_string().starts_with(variable) && !error.to_string().contains("secret"), "{error}");
        }
    }

    #[test]
    fn byte_limits_take_binary_suffixes() {
        let s = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_MAX_IMAGE_BYTES", "512MiB"), ("GEOMAP_MAX_IMAGE_PIXELS", "1_000")]).unwrap();
        assert_eq!((s.max_image_bytes, s.max_image_pixels), (512 << 20, 1000));
    }

    #[test]
    fn the_config_file_takes_counts_as_the_environment_does() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("geomap.toml");
        std::fs::write(
            &file,
            "max_image_bytes = \"1GiB\"\ngeoref_memory = \"256 MiB\"\nmax_image_pixels = \"1_000\"\nworker_threads = 3\nconsent_timeout = \"2s\"\n",
        )
        .unwrap();
        let s = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_CONFIG", file.to_str().unwrap())]).unwrap();
        assert_eq!((s.max_image_bytes, s.georef_memory, s.max_image_pixels, s.worker_threads), (1 << 30, 256 << 20, 1000, 3));
        assert_eq!(s.consent_timeout, Duration::from_secs(2));
        for (key, value) in [("max_image_bytes", "\"lots\""), ("worker_threads", "0"), ("max_image_pixels", "\"1MiB\"")] {
            std::fs::write(&file, format!("{key} = {value}\n")).unwrap();
            let error = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_CONFIG", file.to_str().unwrap())]).unwrap_err();
            assert!(error.to_string().starts_with(&format!("GEOMAP_{}", key.to_ascii_uppercase())), "{key}: {error}");
        }
    }

    #[test]
    fn the_environment_wins_over_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("geomap.toml");
        std::fs::write(&file, "data_root = \"/from/file\"\nmax_image_pixels = 42\nmap_roots = [\"/a\", \"/b\"]\n").unwrap();
        let path = file.to_str().unwrap();
        let s = load(&[("GEOMAP_CONFIG", path), ("GEOMAP_MAX_IMAGE_PIXELS", "7")]).unwrap();
        assert_eq!(s.data_root, PathBuf::from("/from/file"));
        assert_eq!(s.max_image_pixels, 7);
        assert_eq!(s.map_roots, [PathBuf::from("/a"), PathBuf::from("/b")]);
        assert!(s.map_roots_configured);
    }

    #[test]
    fn provider_limits_come_from_the_config_file_and_bad_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("geomap.toml");
        std::fs::write(&file, "[provider_limits.usgs-seismicity]\ndeadline = \"2s\"\nmemory = \"64MiB\"\n").unwrap();
        let s = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_CONFIG", file.to_str().unwrap())]).unwrap();
        let limits = s.provider_limits_for("usgs-seismicity");
        assert_eq!(limits, ProviderLimits { deadline: Duration::from_secs(2), memory_bytes: 64 << 20, ..ProviderLimits::default() }, "unset: the default");
        assert_eq!(s.provider_limits_for("k2-rocks"), ProviderLimits::default());
        std::fs::write(&file, "[provider_limits.k2-rocks]\ndeadline = \"soon\"\n").unwrap();
        let error = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_CONFIG", file.to_str().unwrap())]).unwrap_err();
        assert!(error.to_string().contains("k2-rocks.deadline"), "{error}");
    }

    #[test]
    fn an_unknown_key_in_the_config_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("geomap.toml");
        std::fs::write(&file, "max_pixels = 3\n").unwrap();
        let error = load(&[("GEOMAP_CONFIG", file.to_str().unwrap())]).unwrap_err();
        assert!(matches!(error, SettingsError::ConfigFile { .. }), "{error:?}");
        assert!(error.to_string().contains("max_pixels"), "{error}");
    }

    #[test]
    fn http_settings_parse_and_off_loopback_needs_tokens() {
        let s = load(&[("GEOMAP_DATA_ROOT", "/d")]).unwrap();
        assert_eq!((s.http_listen, s.shutdown_grace), (None, DEFAULT_SHUTDOWN_GRACE));
        assert!(s.max_heavy_calls >= 1 && s.http_problem().is_none());
        let s = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_HTTP_LISTEN", "127.0.0.1:8080"), ("GEOMAP_MAX_HEAVY_CALLS", "2")]).unwrap();
        assert_eq!((s.http_listen, s.max_heavy_calls), (Some("127.0.0.1:8080".parse().unwrap()), 2));
        assert!(s.http_problem().is_none(), "loopback needs no token");
        let open = s.with_http_listen("0.0.0.0:8080").unwrap();
        assert!(open.http_problem().unwrap().contains("GEOMAP_HTTP_TOKENS_FILE"));
        let guarded = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_HTTP_LISTEN", "[::]:8080"), ("GEOMAP_HTTP_TOKENS_FILE", "/etc/geomap/tokens")]).unwrap();
        assert!(guarded.http_problem().is_none());
        let hosts = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_HTTP_ALLOWED_HOSTS", "Maps.Example.org, 10.0.0.5:8080")]).unwrap();
        assert_eq!(hosts.http_allowed_hosts, ["maps.example.org", "10.0.0.5:8080"]);
        for (variable, value) in [
            ("GEOMAP_HTTP_LISTEN", "localhost:80"),
            ("GEOMAP_HTTP_TOKENS_FILE", "tokens.txt"),
            ("GEOMAP_HTTP_ALLOWED_HOSTS", "evil.example/path"),
            ("GEOMAP_MAX_HEAVY_CALLS", "0"),
            ("GEOMAP_SHUTDOWN_GRACE", "forever"),
            ("GEOMAP_CONSENT_TIMEOUT", "0s"),
        ] {
            let error = load(&[("GEOMAP_DATA_ROOT", "/d"), (variable, value)]).unwrap_err();
            assert!(error.to_string().starts_with(variable), "{error}");
        }
    }

    #[test]
    fn georeference_writing_settings_parse_and_bad_ones_are_refused() {
        let s = load(&[("GEOMAP_DATA_ROOT", "/d")]).unwrap();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(s.georef_writing(), Writing { threads: cores, compression: Compression::Deflate, memory_ceiling: DEFAULT_GEOREF_MEMORY });
        let s = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_WORKER_THREADS", "1"), ("GEOMAP_GEOREF_COMPRESSION", "JPEG"), ("GEOMAP_GEOREF_MEMORY", "256MiB")])
            .unwrap();
        assert_eq!(s.georef_writing(), Writing { threads: 1, compression: Compression::Jpeg, memory_ceiling: 256 << 20 });
        for (variable, value) in [("GEOMAP_WORKER_THREADS", "0"), ("GEOMAP_GEOREF_COMPRESSION", "lzw"), ("GEOMAP_GEOREF_MEMORY", "lots")] {
            let error = load(&[("GEOMAP_DATA_ROOT", "/d"), (variable, value)]).unwrap_err();
            assert!(error.to_string().starts_with(variable), "{error}");
        }
    }

    #[test]
    fn the_ocr_generation_is_the_operators_choice() {
        assert_eq!(load(&[("GEOMAP_DATA_ROOT", "/d")]).unwrap().ocr_models, OcrModels::PpOcrV4);
        let chosen = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_OCR_MODELS", "PPOCR-v5")]).unwrap().ocr_models;
        assert_eq!((chosen, chosen.asset()), (OcrModels::PpOcrV5, "ppocr-v5"));
        let error = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_OCR_MODELS", "tesseract")]).unwrap_err();
        assert!(error.to_string().starts_with("GEOMAP_OCR_MODELS") && error.to_string().contains("ppocr-v5"), "{error}");
    }

    #[test]
    fn a_bad_log_filter_is_rejected() {
        let error = load(&[("GEOMAP_DATA_ROOT", "/d"), ("GEOMAP_LOG", "info,[bad")]).unwrap_err();
        assert!(error.to_string().starts_with("GEOMAP_LOG"), "{error}");
    }
}
