//! Providers: discovery, enablement, loading and calls of the WebAssembly
//! components that export the world in `wit/provider.wit`, over the runtime that
//! compiles, sandboxes and calls them, one concern a module:
//!
//! - `wit`: the world, one module per version (`wit/v0_1.rs`: its bindings and every
//!   conversion between its types and the SDK's plain ones), and the dispatch over them;
//! - `sandbox`: a store's host state (WASI with only the mounts, stderr captured, the
//!   memory limiter);
//! - `engine`: the wasmtime engine (epochs, the pooling allocator) and the compile cache;
//! - `pool`: warm instances, each provider's pool of them and the slots they hold;
//! - `runtime`: [`Runtime`] and [`LoadedProvider`]: load, describe, lookup and query, each
//!   call run within its [`ProviderLimits`] (an epoch deadline and an outer timeout).
//!
//! The plain types are the SDK's, re-exported here; the limits and the pool's sizes are the
//! settings' ([`ProviderLimits`], [`ProviderPool`]).
//!
//! Invariants:
//! - Components are found only through directory handles (`cap-std`) of the
//!   first-party folder and the operator's `GEOMAP_PROVIDER_ROOTS`: a symlink
//!   that leads out of a root is refused by the open, not by comparing strings.
//! - A provider's name is its file's stem with `_` read as `-`
//!   (`k2_rocks.wasm` is `k2-rocks`); the name it declares must match, so
//!   enablement and "not found" are decided without running anything.
//! - The first component found under a name wins: first-party providers,
//!   then the provider roots in order; later ones are reported and ignored.
//! - Only enabled providers are compiled and run; one that fails to load is
//!   reported with its reason and never half-loaded.
//! - Options are checked against the provider's JSON Schema on the host side
//!   before the provider sees them.

mod engine;
mod pool;
mod runtime;
mod sandbox;
mod wit;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use schemars::JsonSchema;
use serde::Serialize;

use geomap_model::georeference::Wgs84Bounds;
use geomap_model::settings::{ProviderLimits, ProviderPool, Settings};

pub use engine::Compiled;
pub use runtime::{CallError, LoadError, LoadedProvider, Runtime, RuntimeFailure};
pub use wit::SUPPORTED_WORLD;

/// The plain types of the provider world, one set for the SDK, the runtime and the server: the
/// SDK's. A provider's typed failure is the SDK's `ProviderError`, called [`ProviderFailure`] here
/// because [`ProviderError`] is the host's (a name, a kind, the reason an agent can act on).
/// [`Area`] is the one WGS84 box: the world's `area`, what providers get, and
/// `geomap_query_knowledge`'s argument (its JSON Schema from the SDK's `schema` feature);
/// [`area_of`] reads a revision's stored bounds as one.
pub use geomap_provider_sdk::{Area, Capability, Descriptor, Entry, Item, Knowledge, KnowledgeRequest, LookupRequest, ProviderError as ProviderFailure};

/// The providers this workspace builds, always looked for beside the server binary.
pub const FIRST_PARTY: [&str; 4] = ["ics-timescale", "cgi-lithology", "k2-rocks", "usgs-seismicity"];

/// The folder under the data root where compiled components are cached.
pub const COMPILE_CACHE_DIR: &str = "cache/providers";

/// The kinds of request a provider can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A term in, entries out (`geomap_lookup`).
    Lookup,
    /// An area in, knowledge out (`geomap_query_knowledge`).
    Knowledge,
}

impl Kind {
    /// The capability a provider declares to serve this kind of request.
    pub fn capability(self) -> Capability {
        match self {
            Kind::Lookup => Capability::Lookup,
            Kind::Knowledge => Capability::Knowledge,
        }
    }

    /// The tool that makes this kind of request.
    pub fn tool(self) -> &'static str {
        match self {
            Kind::Lookup => "geomap_lookup",
            Kind::Knowledge => "geomap_query_knowledge",
        }
    }
}

/// Where a provider's component was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Origin {
    /// Built with this server (beside its binary).
    FirstParty,
    /// In the operator's provider root number `index` (`GEOMAP_PROVIDER_ROOTS`).
    ProviderRoot {
        /// Position in GEOMAP_PROVIDER_ROOTS.
        index: usize,
    },
}

/// Why a found, enabled provider could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadFailure {
    /// Built for another world version, or not a provider component at all.
    Incompatible(String),
    /// It trapped or ran out of a limit while describing itself.
    Runtime { failure: RuntimeFailure, detail: String },
}

/// A loaded provider and its compiled options schema.
pub struct Loaded {
    /// The linked component.
    pub provider: LoadedProvider,
    options: jsonschema::Validator,
}

/// Whether a found provider can be called.
pub enum LoadState {
    /// The operator did not enable it (`GEOMAP_PROVIDERS`); it was not compiled.
    NotEnabled,
    /// Loaded and described.
    Loaded(Arc<Loaded>),
    /// Enabled, but it cannot be loaded.
    Failed(LoadFailure),
}

/// One provider found on disk.
pub struct ProviderEntry {
    /// Its name (the file's stem, `_` read as `-`).
    pub name: String,
    /// Where it was found.
    pub origin: Origin,
    /// Its file (server-side only; never sent to agents).
    pub path: PathBuf,
    /// Its limits: the defaults with the operator's `[provider_limits.<name>]` over them.
    pub limits: ProviderLimits,
    /// Loaded, not enabled, or why it failed.
    pub state: LoadState,
}

impl ProviderEntry {
    /// Whether the operator enabled it.
    pub fn enabled(&self) -> bool {
        !matches!(self.state, LoadState::NotEnabled)
    }

    /// What it said about itself, when it loaded.
    pub fn descriptor(&self) -> Option<&Descriptor> {
        match &self.state {
            LoadState::Loaded(loaded) => Some(loaded.provider.descriptor()),
            _ => None,
        }
    }

    /// Whether it serves `kind`, when it loaded.
    pub fn serves(&self, kind: Kind) -> bool {
        self.descriptor().is_some_and(|descriptor| descriptor.serves(kind.capability()))
    }
}

/// Why a provider could not answer; `mcp::adapter` turns each into an envelope.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// No provider has this name.
    #[error("no provider is called {name:?}")]
    NotFound { name: String, close: Vec<String> },
    /// No enabled, loaded provider serves this kind of request.
    #[error("no enabled provider serves {}", kind.tool())]
    NoneAvailable { kind: Kind },
    /// Found, but the operator did not enable it.
    #[error("provider {name} is not enabled")]
    NotEnabled { name: String },
    /// It does not serve this request.
    #[error("provider {name} cannot serve this request: {detail}")]
    CannotServe { name: String, detail: String },
    /// Its options do not fit its schema (JSON pointer into its options).
    #[error("provider {name}: invalid option at {field}: {message}")]
    InvalidOptions { name: String, field: String, message: String },
    /// It cannot be loaded by this server.
    #[error("provider {name} is incompatible: {detail}")]
    Incompatible { name: String, detail: String },
    /// The runtime stopped it.
    #[error("provider {name} failed in the runtime ({}): {detail}", failure.as_str())]
    Runtime { name: String, failure: RuntimeFailure, detail: String },
    /// It reported a failure of its own.
    #[error("provider {name} failed: {message}")]
    Failed { name: String, message: String },
    /// Knowledge assets it needs are not installed.
    #[error("provider {name} needs assets that are not installed: {}", assets.join(", "))]
    MissingAssets { name: String, assets: Vec<String> },
}

impl ProviderError {
    /// The provider the failure is about (empty for [`ProviderError::NoneAvailable`]).
    pub fn provider(&self) -> &str {
        match self {
            ProviderError::NotFound { name, .. }
            | ProviderError::NotEnabled { name }
            | ProviderError::CannotServe { name, .. }
            | ProviderError::InvalidOptions { name, .. }
            | ProviderError::Incompatible { name, .. }
            | ProviderError::Runtime { name, .. }
            | ProviderError::Failed { name, .. }
            | ProviderError::MissingAssets { name, .. } => name,
            ProviderError::NoneAvailable { .. } => "",
        }
    }

    /// How soon the agent can act on it: lower is more actionable. When every
    /// provider of a call fails, the call fails with the lowest.
    pub fn actionability(&self) -> u8 {
        match self {
            ProviderError::InvalidOptions { .. } | ProviderError::NotFound { .. } | ProviderError::CannotServe { .. } => 0,
            ProviderError::MissingAssets { .. } => 1,
            ProviderError::NotEnabled { .. } | ProviderError::NoneAvailable { .. } => 2,
            ProviderError::Incompatible { .. } | ProviderError::Runtime { .. } | ProviderError::Failed { .. } => 3,
        }
    }

    /// A call's error, named for `name`.
    pub fn from_call(name: &str, error: CallError) -> ProviderError {
        let name = name.to_owned();
        match error {
            CallError::Runtime { failure, detail } => ProviderError::Runtime { name, failure, detail },
            CallError::Provider(ProviderFailure::UnsupportedRequest(detail)) => ProviderError::CannotServe { name, detail },
            CallError::Provider(ProviderFailure::InvalidOptions { field, message }) => ProviderError::InvalidOptions { name, field, message },
            CallError::Provider(ProviderFailure::MissingAsset(asset)) => ProviderError::MissingAssets { name, assets: vec![asset] },
            CallError::Provider(ProviderFailure::Failed(message)) => ProviderError::Failed { name, message },
            CallError::Provider(ProviderFailure::NotFound(close)) => {
                ProviderError::Failed { name, message: format!("found nothing (close: {})", close.join(", ")) }
            }
        }
    }
}

/// Every provider found, enabled or not, loaded or not.
pub struct ProviderSet {
    runtime: Arc<Runtime>,
    entries: Vec<ProviderEntry>,
    /// Names the operator enabled that no component has.
    pub enabled_but_absent: Vec<String>,
    /// What discovery could not use (an unreadable root, a duplicate name), for the operator.
    pub problems: Vec<String>,
}

impl std::fmt::Debug for ProviderSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSet").field("providers", &self.entries.iter().map(|entry| &entry.name).collect::<Vec<_>>()).finish()
    }
}

/// A component found by discovery, read through its folder's handle.
struct Found {
    name: String,
    origin: Origin,
    path: PathBuf,
    wasm: std::io::Result<Vec<u8>>,
}

/// The folders the first-party providers are looked for in: `providers/`
/// beside the server binary (an installed server), then the workspace's
/// `target/wasm32-wasip2/release/` when the binary runs from `target/release/`.
pub fn first_party_folders() -> Vec<PathBuf> {
    let Some(bin_dir) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_owned)) else { return Vec::new() };
    let mut folders = vec![bin_dir.join("providers")];
    if let Some(target) = bin_dir.parent() {
        folders.push(target.join("wasm32-wasip2").join(bin_dir.file_name().unwrap_or_default()));
    }
    folders
}

/// A provider's name from its file name: `k2_rocks.wasm` is `k2-rocks`; `None` for other files.
fn name_of(file_name: &str) -> Option<String> {
    let stem = file_name.strip_suffix(".wasm")?;
    let name = stem.replace('_', "-");
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    valid.then_some(name)
}

/// Finds every component: first-party ones from `first_party` (the first
/// folder holding each wins), then every `*.wasm` in the operator's roots.
fn discover(settings: &Settings, first_party: &[PathBuf], problems: &mut Vec<String>) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    let open = |folder: &Path| Dir::open_ambient_dir(folder, ambient_authority());
    let first_party_dirs: Vec<(PathBuf, Dir)> = first_party.iter().filter_map(|folder| open(folder).ok().map(|dir| (folder.clone(), dir))).collect();
    for name in FIRST_PARTY {
        let file_name = format!("{}.wasm", name.replace('-', "_"));
        if let Some((folder, dir)) = first_party_dirs.iter().find(|(_, dir)| dir.is_file(&file_name)) {
            found.push(Found { name: name.to_owned(), origin: Origin::FirstParty, path: folder.join(&file_name), wasm: dir.read(&file_name) });
        }
    }
    for (index, root) in settings.provider_roots.iter().enumerate() {
        let dir = match open(root) {
            Ok(dir) => dir,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue, // an empty root is a root without providers
            Err(error) => {
                problems.push(format!("provider root {} cannot be opened: {error}", root.display()));
                continue;
            }
        };
        let Ok(listing) = dir.entries() else {
            problems.push(format!("provider root {} cannot be listed", root.display()));
            continue;
        };
        let mut names: Vec<String> = listing.filter_map(|entry| entry.ok()?.file_name().into_string().ok()).filter(|n| n.ends_with(".wasm")).collect();
        names.sort();
        for file_name in names {
            let Some(name) = name_of(&file_name) else {
                problems.push(format!(
                    "{} is ignored: a provider's file name is its name (lowercase letters, digits, '-' or '_') and .wasm",
                    root.join(&file_name).display()
                ));
                continue;
            };
            if let Some(first) = found.iter().find(|earlier| earlier.name == name) {
                problems.push(format!("{} is ignored: provider {name} was already found at {}", root.join(&file_name).display(), first.path.display()));
                continue;
            }
            // Opened through the root's handle: a symlink leading out of the root fails here.
            found.push(Found { name, origin: Origin::ProviderRoot { index }, path: root.join(&file_name), wasm: dir.read(&file_name) });
        }
    }
    found
}

impl ProviderSet {
    /// Discovers the providers and loads the enabled ones (in parallel),
    /// caching compiled components under the data root.
    pub async fn load(settings: &Settings) -> ProviderSet {
        ProviderSet::load_from(settings, &first_party_folders()).await
    }

    /// [`ProviderSet::load`] with the first-party providers looked for in `first_party`.
    pub async fn load_from(settings: &Settings, first_party: &[PathBuf]) -> ProviderSet {
        let mut problems = Vec::new();
        let runtime = match Runtime::new(Some(settings.data_root.join(COMPILE_CACHE_DIR)), settings.provider_pool) {
            Ok(runtime) => Arc::new(runtime),
            Err(error) => panic!("the WebAssembly engine cannot start on this machine: {error:#}"),
        };
        let found = discover(settings, first_party, &mut problems);
        let enabled = |name: &str| settings.providers.as_ref().is_none_or(|names| names.iter().any(|n| n == name));
        let loads = found.into_iter().map(|found| {
            let runtime = Arc::clone(&runtime);
            let limits = settings.provider_limits_for(&found.name);
            let enabled = enabled(&found.name);
            async move {
                let state = match enabled {
                    false => LoadState::NotEnabled,
                    true => match load_one(&runtime, &found).await {
                        Ok(loaded) => LoadState::Loaded(Arc::new(loaded)),
                        Err(failure) => LoadState::Failed(failure),
                    },
                };
                ProviderEntry { name: found.name, origin: found.origin, path: found.path, limits, state }
            }
        });
        let entries: Vec<ProviderEntry> = futures::future::join_all(loads).await;
        let enabled_but_absent = settings.providers.iter().flatten().filter(|name| !entries.iter().any(|entry| &entry.name == *name)).cloned().collect();
        ProviderSet { runtime, entries, enabled_but_absent, problems }
    }

    /// Every provider found, first-party ones first.
    pub fn entries(&self) -> &[ProviderEntry] {
        &self.entries
    }

    /// The runtime the providers run in.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// The enabled, loaded providers that serve `kind`.
    pub fn serving(&self, kind: Kind) -> impl Iterator<Item = &ProviderEntry> {
        self.entries.iter().filter(move |entry| entry.serves(kind))
    }

    /// The provider `name`, loaded and able to serve `kind`, or why not.
    pub fn resolve(&self, name: &str, kind: Kind) -> Result<(&ProviderEntry, Arc<Loaded>), ProviderError> {
        let Some(entry) = self.entries.iter().find(|entry| entry.name == name) else {
            let known = self.entries.iter().map(|entry| entry.name.as_str());
            return Err(ProviderError::NotFound { name: name.to_owned(), close: close_matches(name, known) });
        };
        let loaded = match &entry.state {
            LoadState::NotEnabled => return Err(ProviderError::NotEnabled { name: name.to_owned() }),
            LoadState::Failed(LoadFailure::Incompatible(detail)) => return Err(ProviderError::Incompatible { name: name.to_owned(), detail: detail.clone() }),
            LoadState::Failed(LoadFailure::Runtime { failure, detail }) => {
                return Err(ProviderError::Runtime { name: name.to_owned(), failure: *failure, detail: detail.clone() });
            }
            LoadState::Loaded(loaded) => loaded,
        };
        if !entry.serves(kind) {
            let serves = if kind == Kind::Lookup { "knowledge queries (geomap_query_knowledge)" } else { "lookups (geomap_lookup)" };
            return Err(ProviderError::CannotServe { name: name.to_owned(), detail: format!("it serves only {serves}, not {}", kind.tool()) });
        }
        Ok((entry, Arc::clone(loaded)))
    }
}

impl Loaded {
    /// Checks `options` against the provider's schema; the error names the
    /// offending option by JSON pointer.
    pub fn check_options(&self, name: &str, options: &serde_json::Value) -> Result<(), ProviderError> {
        // The SDK's harness runs this same check natively, so a provider's tests see what agents see.
        geomap_provider_sdk::harness::check_compiled_options(&self.options, options).map_err(|problem| ProviderError::InvalidOptions {
            name: name.to_owned(),
            field: problem.field,
            message: problem.message,
        })
    }
}

/// What `providers check` found in a component file.
#[derive(Debug, Clone)]
pub struct CheckedFile {
    /// How it describes itself.
    pub descriptor: Descriptor,
    /// Whether the server would load it under the file's present name (`<name>.wasm`, `_` for `-`);
    /// otherwise it loads only once copied as `<descriptor name>.wasm`.
    pub named_as_loaded: bool,
}

/// Loads the component at `path` as the server would (world version, self-description, options
/// schema), without caching, whatever the file is called; says whether its name would do.
pub async fn check_file(path: &Path) -> Result<CheckedFile, String> {
    let file_name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    let runtime = Arc::new(Runtime::new(None, ProviderPool::default()).map_err(|error| format!("the WebAssembly engine cannot start: {error:#}"))?);
    let found = Found { name: name_of(file_name).unwrap_or_default(), origin: Origin::FirstParty, path: path.to_owned(), wasm: std::fs::read(path) };
    match describe_one(&runtime, &found).await {
        Ok(loaded) => {
            let descriptor = loaded.provider.descriptor().clone();
            if name_of(&format!("{}.wasm", descriptor.name)).as_deref() != Some(descriptor.name.as_str()) {
                return Err(format!(
                    "it calls itself {:?}, which no file name can carry: a provider's name is lowercase letters, digits and '-'",
                    descriptor.name
                ));
            }
            Ok(CheckedFile { named_as_loaded: descriptor.name == found.name, descriptor })
        }
        Err(LoadFailure::Incompatible(detail)) => Err(detail),
        Err(LoadFailure::Runtime { failure, detail }) => Err(format!("it failed while describing itself ({}): {detail}", failure.as_str())),
    }
}

/// [`describe_one`], refusing a component whose file names another provider than it calls itself.
async fn load_one(runtime: &Arc<Runtime>, found: &Found) -> Result<Loaded, LoadFailure> {
    let loaded = describe_one(runtime, found).await?;
    let declared = &loaded.provider.descriptor().name;
    if *declared != found.name {
        return Err(LoadFailure::Incompatible(format!("it calls itself {declared:?}, but its file names it {:?}; rename one to match", found.name)));
    }
    Ok(loaded)
}

/// Compiles (on a blocking thread), links and describes one component, and compiles its options schema.
async fn describe_one(runtime: &Arc<Runtime>, found: &Found) -> Result<Loaded, LoadFailure> {
    let wasm = match &found.wasm {
        Ok(wasm) => wasm.clone(),
        Err(error) => return Err(LoadFailure::Incompatible(format!("its file cannot be read: {error}"))),
    };
    let compiling = Arc::clone(runtime);
    let path = found.path.clone();
    let compiled = tokio::task::spawn_blocking(move || compiling.compile(&path, &wasm))
        .await
        .map_err(|error| LoadFailure::Incompatible(format!("compiling it failed: {error}")))?;
    let provider = match compiled {
        Ok(compiled) => runtime.link(&found.path, compiled).await,
        Err(error) => Err(error),
    }
    .map_err(|error| match error {
        LoadError::Describe { failure, detail, .. } => LoadFailure::Runtime { failure, detail },
        LoadError::Incompatible { found, .. } => LoadFailure::Incompatible(format!("it exports {found}, but this server loads geomap:provider@0.1.x")),
        LoadError::Invalid { message, .. } => LoadFailure::Incompatible(format!("it is not a provider component this server can load: {message}")),
        LoadError::Unreadable { source, .. } => LoadFailure::Incompatible(format!("its file cannot be read: {source}")),
    })?;
    let options = jsonschema::validator_for(&provider.descriptor().options_schema)
        .map_err(|error| LoadFailure::Incompatible(format!("its options schema is not a valid JSON Schema: {error}")))?;
    Ok(Loaded { provider, options })
}

/// A revision's WGS84 bounds (stored data, in `geomap-model`) as the box providers are asked about.
pub fn area_of(bounds: &Wgs84Bounds) -> Area {
    Area { west: bounds.west, south: bounds.south, east: bounds.east, north: bounds.north }
}

/// A mutex's contents, even after a panic elsewhere (nothing here is left half-changed by one).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Up to three names from `known` close to `name`, closest first.
pub fn close_matches<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = known.map(|candidate| (strsim::jaro_winkler(name, candidate), candidate)).filter(|(score, _)| *score >= 0.7).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(3).map(|(_, candidate)| candidate.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(data_root: &Path, roots: &[&Path], enabled: Option<&[&str]>) -> Settings {
        let mut settings = Settings::load(|name| (name == "GEOMAP_DATA_ROOT").then(|| data_root.as_os_str().to_owned())).unwrap();
        settings.provider_roots = roots.iter().map(|root| root.to_path_buf()).collect();
        settings.providers = enabled.map(|names| names.iter().map(|name| name.to_string()).collect());
        settings
    }

    #[test]
    fn names_come_from_file_names() {
        assert_eq!(name_of("k2_rocks.wasm").as_deref(), Some("k2-rocks"));
        assert_eq!(name_of("ics-timescale.wasm").as_deref(), Some("ics-timescale"));
        assert_eq!(name_of("Bad Name.wasm"), None);
        assert_eq!(name_of("notes.txt"), None);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn roots_are_searched_through_handles_and_enablement_decides_what_loads() {
        let test = "roots_are_searched_through_handles_and_enablement_decides_what_loads";
        let Some(built) = geomap_model::testing::components(test, &["hostile_provider", "wrong_world_provider", "k2_rocks"]) else { return };
        let data = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::copy(built.join("hostile_provider.wasm"), root.path().join("hostile_provider.wasm")).unwrap();
        std::fs::copy(built.join("wrong_world_provider.wasm"), root.path().join("wrong-world.wasm")).unwrap();
        std::fs::copy(built.join("k2_rocks.wasm"), outside.path().join("k2_rocks.wasm")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("k2_rocks.wasm"), root.path().join("escaping.wasm")).unwrap();
        let settings = settings(data.path(), &[root.path()], Some(&["hostile-provider", "wrong-world", "escaping", "absent-one"]));
        let set = ProviderSet::load_from(&settings, &[built]).await;
        let names: Vec<&str> = set.entries().iter().map(|entry| entry.name.as_str()).collect();
        assert_eq!(names[..4], FIRST_PARTY, "first-party providers come first");
        assert!(!set.entries()[0].enabled(), "not in GEOMAP_PROVIDERS");
        assert!(matches!(set.resolve("k2-rocks", Kind::Lookup), Err(ProviderError::NotEnabled { .. })));
        assert!(set.resolve("hostile-provider", Kind::Lookup).is_ok());
        assert!(matches!(set.resolve("hostile-provider", Kind::Knowledge), Err(ProviderError::CannotServe { .. })));
        let Err(ProviderError::Incompatible { detail, .. }) = set.resolve("wrong-world", Kind::Lookup) else { panic!("wrong-world loaded") };
        assert!(detail.contains("@0.2.0"), "{detail}");
        let Err(ProviderError::Incompatible { detail, .. }) = set.resolve("escaping", Kind::Lookup) else { panic!("a symlink out of the root loaded") };
        assert!(detail.contains("cannot be read"), "{detail}");
        let Err(ProviderError::NotFound { close, .. }) = set.resolve("hostile-provder", Kind::Lookup) else { panic!() };
        assert_eq!(close[0], "hostile-provider");
        assert_eq!(set.enabled_but_absent, ["absent-one"]);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn options_are_checked_against_the_schema_on_the_host() {
        let Some(built) = geomap_model::testing::components("options_are_checked_against_the_schema_on_the_host", &["usgs_seismicity"]) else { return };
        let data = tempfile::tempdir().unwrap();
        let set = ProviderSet::load_from(&settings(data.path(), &[], None), &[built]).await;
        let (_, loaded) = set.resolve("usgs-seismicity", Kind::Knowledge).unwrap();
        assert!(loaded.check_options("usgs-seismicity", &serde_json::json!({ "min_magnitude": 6.0 })).is_ok());
        let Err(ProviderError::InvalidOptions { field, .. }) = loaded.check_options("usgs-seismicity", &serde_json::json!({ "min_magnitude": "big" })) else {
            panic!()
        };
        assert_eq!(field, "/min_magnitude");
        let Err(ProviderError::InvalidOptions { field, .. }) = loaded.check_options("usgs-seismicity", &serde_json::json!({ "colour": 1 })) else { panic!() };
        assert_eq!(field, "/colour");
    }
}
