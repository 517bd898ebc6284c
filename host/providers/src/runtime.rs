//! The provider runtime: compiling, sandboxing and calling the WebAssembly
//! components that export the world in `wit/provider.wit`.
//!
//! Invariants:
//! - A component is loaded once: its exports are checked for a supported world
//!   version (0.1.x) before anything runs, it is linked once (`PluginPre`),
//!   and it describes itself once.
//! - Every call gets a fresh store and instance: a trap poisons a store, so
//!   none is ever reused after any error. Instances come from a pool of
//!   slots whose memory wasmtime wipes (zeroes) before the next instance gets
//!   it, so nothing of one call, or one provider, reaches another.
//! - The sandbox: no network, no environment, no inherited stdio (stderr is
//!   captured), each asset the provider declared mounted read-only at
//!   `/assets/<asset-id>/`, nothing else on the filesystem.
//! - Limits: memory by a store limiter; CPU by an epoch deadline *and* an outer
//!   timeout (epochs do not fire while the guest blocks in a host call); the
//!   output's size is checked before it is handed on.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};

mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "geomap:provider/plugin",
        exports: { default: async },
    });
}

use bindings::exports::geomap::provider::provider as wit;

/// The world versions this host loads: any patch of 0.1.
pub const SUPPORTED_WORLD: (u64, u64) = (0, 1);
/// The export name prefix of the provider interface.
const INTERFACE: &str = "geomap:provider/provider@";
/// How often the epoch advances.
const EPOCH_TICK: Duration = Duration::from_millis(10);
/// How much of a provider's stderr is kept.
const STDERR_BYTES: usize = 16 << 10;

/// Per-provider limits (the operator may change them per provider).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a call may take.
    pub deadline: Duration,
    /// Linear memory a call may grow to.
    pub memory_bytes: usize,
    /// Bytes of text a call may return.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { deadline: Duration::from_secs(10), memory_bytes: 512 << 20, output_bytes: 4 << 20 }
    }
}

/// What the provider says it is (the WIT `descriptor`, with options as JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// One sentence for agents.
    pub description: String,
    /// Whether it looks terms up.
    pub lookup: bool,
    /// Whether it answers knowledge queries.
    pub knowledge: bool,
    /// The asset ids it reads.
    pub assets: Vec<String>,
    /// Whether its knowledge queries need an area.
    pub needs_area: bool,
    /// The JSON Schema of its options.
    pub options_schema: serde_json::Value,
}

/// A term to look up.
#[derive(Debug, Clone, PartialEq)]
pub struct LookupRequest {
    /// As the user wrote it.
    pub term: String,
    /// The provider's options (a JSON object).
    pub options: serde_json::Value,
    /// At most this many entries.
    pub limit: u32,
    /// A preferred language for labels.
    pub language: Option<String>,
}

/// An area to ask about.
#[derive(Debug, Clone, PartialEq)]
pub struct KnowledgeRequest {
    /// A WGS84 box (west, south, east, north), when there is one.
    pub area: Option<[f64; 4]>,
    /// Topics to keep to.
    pub topics: Vec<String>,
    /// The provider's options (a JSON object).
    pub options: serde_json::Value,
    /// At most this many items.
    pub limit: u32,
}

/// What a knowledge query found.
#[derive(Debug, Clone, PartialEq)]
pub struct Knowledge {
    /// (title, data) pairs, most relevant first.
    pub items: Vec<(String, serde_json::Value)>,
    /// One paragraph.
    pub summary: String,
}

/// One entry a lookup returned (data is a JSON object).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Stable identifier.
    pub id: String,
    /// Name.
    pub label: String,
    /// One line.
    pub summary: String,
    /// Everything else.
    pub data: serde_json::Value,
}

/// How a call went wrong in the runtime rather than in the provider's logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeFailure {
    /// It ran past its deadline.
    Timeout,
    /// It tried to grow its memory past the limit.
    MemoryLimit,
    /// It trapped (a panic, unbounded recursion, an unreachable).
    Trap,
    /// It returned more than the output limit.
    OutputTooLarge,
    /// The host could not mount one of its asset folders (gone since it was checked, or unreadable):
    /// the provider never ran.
    Mount,
}

impl RuntimeFailure {
    /// The wire name (`details.failure`).
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeFailure::Timeout => "timeout",
            RuntimeFailure::MemoryLimit => "memory_limit",
            RuntimeFailure::Trap => "trap",
            RuntimeFailure::OutputTooLarge => "output_too_large",
            RuntimeFailure::Mount => "mount",
        }
    }
}

/// The typed failure a provider returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderFailure {
    /// It does not serve this kind of request.
    UnsupportedRequest(String),
    /// An option does not fit (JSON pointer, message).
    InvalidOptions { field: String, message: String },
    /// An asset it needs is not mounted.
    MissingAsset(String),
    /// Nothing matched; close matches.
    NotFound(Vec<String>),
    /// Anything else.
    Failed(String),
}

/// Why loading a component failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable { path: PathBuf, source: std::io::Error },
    /// Not a component this engine can compile, or it cannot be linked.
    #[error("{} is not a loadable provider component: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    /// It exports another version of the world (or none).
    #[error("{} exports {found}, but this server loads geomap:provider@0.1.x", path.display())]
    Incompatible { path: PathBuf, found: String },
    /// Describing itself failed.
    #[error("{} could not describe itself: {failure:?} {detail}", path.display())]
    Describe { path: PathBuf, failure: RuntimeFailure, detail: String },
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The provider answered with a typed failure.
    #[error("the provider answered {0:?}")]
    Provider(ProviderFailure),
    /// The runtime stopped it; `detail` says how (with its stderr, scrubbed of paths).
    #[error("{} ({detail})", failure.as_str())]
    Runtime { failure: RuntimeFailure, detail: String },
}

/// A store's host state: WASI, its resources, and the memory limiter.
struct Sandbox {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// Refuses growth past `limit` and remembers that it did, so the trap that
/// follows is reported as `memory_limit`.
struct MemoryLimiter {
    limit: usize,
    exceeded: Arc<AtomicBool>,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.exceeded.store(true, Ordering::Relaxed);
            return Err(wasmtime::Error::msg(format!("memory limit of {} bytes reached", self.limit)));
        }
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// Provider instances (with their memories, tables and stacks) a runtime keeps ready; a call beyond
/// them waits for one to be free.
pub const INSTANCE_SLOTS: u32 = 256;
/// Of each linear memory, how much stays mapped between calls and is cleared by writing zeros
/// (beyond it, pages go back to the kernel): a lookup's whole memory, so a call costs no `madvise`.
const KEEP_RESIDENT: usize = 4 << 20;

/// A pool of instance slots, reused call after call. The default allocator maps each instance's
/// memory afresh and unmaps it after the call; with many calls a second that is most of their cost
/// (every `munmap` makes the kernel flush the TLB of every core running the server).
fn instance_pool() -> wasmtime::InstanceAllocationStrategy {
    let mut pool = wasmtime::PoolingAllocationConfig::new();
    pool.total_component_instances(INSTANCE_SLOTS)
        .total_core_instances(8 * INSTANCE_SLOTS)
        .total_memories(2 * INSTANCE_SLOTS)
        .total_tables(4 * INSTANCE_SLOTS)
        .total_stacks(INSTANCE_SLOTS)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(64 << 10);
    wasmtime::InstanceAllocationStrategy::Pooling(pool)
}

/// The engine, the linker with WASI, the epoch ticker, and where compiled components are cached.
pub struct Runtime {
    engine: Engine,
    linker: Linker<Sandbox>,
    cache: Option<PathBuf>,
    /// One permit per instance slot: a call waits for one rather than fail when all are in use.
    slots: Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Runtime")
    }
}

impl Runtime {
    /// An engine for provider components with WASI preview 2 linked; compiled
    /// components are cached in `cache` (a folder only the server writes) when given.
    pub fn new(cache: Option<PathBuf>) -> wasmtime::Result<Runtime> {
        let mut config = Config::new();
        config.wasm_component_model(true).epoch_interruption(true).allocation_strategy(instance_pool());
        let engine = Engine::new(&config)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        let ticking = engine.weak();
        std::thread::Builder::new().name("provider-epochs".to_owned()).spawn(move || {
            while let Some(engine) = ticking.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })?;
        Ok(Runtime { engine, linker, cache, slots: Arc::new(tokio::sync::Semaphore::new(INSTANCE_SLOTS as usize)) })
    }

    /// The cache file of `wasm` for this engine: `<sha256 of the wasm>-<engine compatibility hash>.cwasm`.
    fn cache_file(&self, wasm: &[u8]) -> Option<PathBuf> {
        use sha2::Digest;
        struct Sha(sha2::Sha256);
        impl std::hash::Hasher for Sha {
            fn finish(&self) -> u64 {
                0 // unused: the digest is read instead
            }
            fn write(&mut self, bytes: &[u8]) {
                self.0.update(bytes);
            }
        }
        let mut engine = Sha(sha2::Sha256::new());
        std::hash::Hash::hash(&self.engine.precompile_compatibility_hash(), &mut engine);
        let engine = geomap_model::lowercase_hex(&engine.0.finalize()[..12]);
        let wasm = geomap_model::lowercase_hex(&sha2::Sha256::digest(wasm));
        self.cache.as_ref().map(|dir| dir.join(format!("{wasm}-{engine}.cwasm")))
    }

    /// The component for `wasm`: from the cache when a file this server wrote
    /// is there and intact (its sha256 matches the one recorded beside it),
    /// else compiled and cached. `true` when it came from the cache. A bad or
    /// missing cache file is a miss, never an error.
    fn component(&self, wasm: &[u8]) -> wasmtime::Result<(Component, bool)> {
        use sha2::Digest;
        let Some(file) = self.cache_file(wasm) else { return Ok((Component::new(&self.engine, wasm)?, false)) };
        let recorded = file.with_extension("cwasm.sha256");
        if let (Ok(compiled), Ok(sum)) = (std::fs::read(&file), std::fs::read_to_string(&recorded))
            && geomap_model::lowercase_hex(&sha2::Sha256::digest(&compiled)) == sum.trim()
        {
            // SAFETY: these bytes are exactly what `Component::serialize` produced in this
            // server's cache folder (their sha256 matches the one written after them), for an
            // engine with the same compatibility hash (it is in the file name).
            if let Ok(component) = unsafe { Component::deserialize(&self.engine, &compiled) } {
                return Ok((component, true));
            }
        }
        let component = Component::new(&self.engine, wasm)?;
        if let Ok(compiled) = component.serialize() {
            let _ = write_cache(&file, &recorded, &compiled); // a cache that cannot be written is only slower
        }
        Ok((component, false))
    }

    /// Compiles, checks and links the component at `path`, and asks it to describe itself.
    pub async fn load(&self, path: &Path) -> Result<LoadedProvider, LoadError> {
        let bytes = std::fs::read(path).map_err(|source| LoadError::Unreadable { path: path.to_owned(), source })?;
        let compiled = self.compile(path, &bytes)?;
        self.link(path, compiled).await
    }

    /// Compiles `wasm` (read from `path`), or takes it from the cache: CPU-bound, so callers on
    /// an async runtime run it on a blocking thread.
    pub fn compile(&self, path: &Path, wasm: &[u8]) -> Result<Compiled, LoadError> {
        let (component, from_cache) = self.component(wasm).map_err(|error| LoadError::Invalid { path: path.to_owned(), message: format!("{error:#}") })?;
        Ok(Compiled { component, from_cache })
    }

    /// Checks a compiled component's world version, links it, and asks it to describe itself.
    pub async fn link(&self, path: &Path, compiled: Compiled) -> Result<LoadedProvider, LoadError> {
        let invalid = |error: wasmtime::Error| LoadError::Invalid { path: path.to_owned(), message: format!("{error:#}") };
        let Compiled { component, from_cache } = compiled;
        let exports: Vec<String> = component.component_type().exports(&self.engine).map(|(name, _)| name.to_owned()).collect();
        let version = exports.iter().find_map(|name| name.strip_prefix(INTERFACE)).map(str::to_owned);
        let supported = version.as_deref().and_then(|version| {
            let mut parts = version.split('.').map(|part| part.parse::<u64>().ok());
            Some((parts.next()??, parts.next()??)).filter(|found| *found == SUPPORTED_WORLD)
        });
        if supported.is_none() {
            let found = version.map_or_else(|| format!("no {INTERFACE}* interface (exports: {})", exports.join(", ")), |v| format!("{INTERFACE}{v}"));
            return Err(LoadError::Incompatible { path: path.to_owned(), found });
        }
        let pre = self.linker.instantiate_pre(&component).map_err(invalid)?;
        let pre = bindings::PluginPre::new(pre).map_err(invalid)?;
        let mut loaded = LoadedProvider { pre, descriptor: None, from_cache };
        let describe = |plugin: bindings::Plugin, mut store: Store<Sandbox>| async move {
            plugin.geomap_provider_provider().call_describe(&mut store).await.map(|descriptor| (descriptor, store))
        };
        let descriptor = loaded.run(self, &[], Limits::default(), describe).await.map_err(|error| match error {
            CallError::Runtime { failure, detail } => LoadError::Describe { path: path.to_owned(), failure, detail },
            CallError::Provider(failure) => LoadError::Describe { path: path.to_owned(), failure: RuntimeFailure::Trap, detail: format!("{failure:?}") },
        })?;
        let options_schema = serde_json::from_str(&descriptor.options_schema)
            .map_err(|error| LoadError::Invalid { path: path.to_owned(), message: format!("its options schema is not JSON: {error}") })?;
        loaded.descriptor = Some(Descriptor {
            name: descriptor.name,
            version: descriptor.version,
            description: descriptor.description,
            lookup: descriptor.capabilities.contains(&wit::Capability::Lookup),
            knowledge: descriptor.capabilities.contains(&wit::Capability::Knowledge),
            assets: descriptor.assets,
            needs_area: descriptor.needs_area,
            options_schema,
        });
        Ok(loaded)
    }
}

/// A compiled component, not yet checked or linked.
pub struct Compiled {
    component: Component,
    from_cache: bool,
}

/// A component, checked and linked, ready to instantiate per call.
pub struct LoadedProvider {
    pre: bindings::PluginPre<Sandbox>,
    descriptor: Option<Descriptor>,
    from_cache: bool,
}

impl LoadedProvider {
    /// What it said about itself when loaded.
    pub fn descriptor(&self) -> &Descriptor {
        self.descriptor.as_ref().expect("a loaded provider has described itself")
    }

    /// Whether its compiled code came from the cache.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// Runs `request` with `assets` (asset id, host folder) mounted read-only.
    pub async fn lookup(&self, runtime: &Runtime, assets: &[(String, PathBuf)], limits: Limits, request: &LookupRequest) -> Result<Vec<Entry>, CallError> {
        let request =
            wit::LookupRequest { term: request.term.clone(), options: request.options.to_string(), limit: request.limit, language: request.language.clone() };
        let call = |plugin: bindings::Plugin, mut store: Store<Sandbox>| async move {
            plugin.geomap_provider_provider().call_lookup(&mut store, &request).await.map(|answer| (answer, store))
        };
        let answer = self.run(runtime, assets, limits, call).await?;
        let entries = answer.map_err(|error| CallError::Provider(provider_failure(error)))?;
        check_output(entries.iter().map(|entry| entry.id.len() + entry.label.len() + entry.summary.len() + entry.data.len()).sum(), limits)?;
        Ok(entries.into_iter().map(|entry| Entry { id: entry.id, label: entry.label, summary: entry.summary, data: json_or_text(entry.data) }).collect())
    }

    /// Runs `request` with `assets` (asset id, host folder) mounted read-only.
    pub async fn query(&self, runtime: &Runtime, assets: &[(String, PathBuf)], limits: Limits, request: &KnowledgeRequest) -> Result<Knowledge, CallError> {
        let request = wit::KnowledgeRequest {
            area: request.area.map(|[west, south, east, north]| wit::Area { west, south, east, north }),
            topics: request.topics.clone(),
            options: request.options.to_string(),
            limit: request.limit,
        };
        let call = |plugin: bindings::Plugin, mut store: Store<Sandbox>| async move {
            plugin.geomap_provider_provider().call_query(&mut store, &request).await.map(|answer| (answer, store))
        };
        let knowledge = self.run(runtime, assets, limits, call).await?.map_err(|error| CallError::Provider(provider_failure(error)))?;
        let size = knowledge.summary.len() + knowledge.items.iter().map(|item| item.title.len() + item.data.len()).sum::<usize>();
        check_output(size, limits)?;
        Ok(Knowledge { items: knowledge.items.into_iter().map(|item| (item.title, json_or_text(item.data))).collect(), summary: knowledge.summary })
    }

    /// Runs `call` on a fresh instance in a fresh sandbox, within `limits`.
    async fn run<T, F, Fut>(&self, runtime: &Runtime, assets: &[(String, PathBuf)], limits: Limits, call: F) -> Result<T, CallError>
    where
        F: FnOnce(bindings::Plugin, Store<Sandbox>) -> Fut,
        Fut: Future<Output = wasmtime::Result<(T, Store<Sandbox>)>>,
    {
        // Held until the instance is gone (the store is dropped before the permit, at the end of this call).
        let _slot = runtime.slots.acquire().await.expect("the slots are never closed");
        let stderr = MemoryOutputPipe::new(STDERR_BYTES);
        let mut wasi = WasiCtx::builder();
        wasi.stderr(stderr.clone()).allow_blocking_current_thread(true);
        for (id, folder) in assets {
            wasi.preopened_dir(folder, format!("/assets/{id}"), FsPerms::ReadOnly)
                .map_err(|error| CallError::Runtime { failure: RuntimeFailure::Mount, detail: format!("asset {id} cannot be mounted: {error}") })?;
        }
        let exceeded = Arc::new(AtomicBool::new(false));
        let sandbox =
            Sandbox { wasi: wasi.build(), table: ResourceTable::new(), limiter: MemoryLimiter { limit: limits.memory_bytes, exceeded: Arc::clone(&exceeded) } };
        let mut store = Store::new(&runtime.engine, sandbox);
        store.limiter(|sandbox| &mut sandbox.limiter);
        let ticks = (limits.deadline.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
        store.set_epoch_deadline(ticks);
        let failed = |error: wasmtime::Error, stderr: &MemoryOutputPipe| {
            let failure = if exceeded.load(Ordering::Relaxed) {
                RuntimeFailure::MemoryLimit
            } else if matches!(error.downcast_ref::<wasmtime::Trap>(), Some(wasmtime::Trap::Interrupt)) {
                RuntimeFailure::Timeout
            } else {
                RuntimeFailure::Trap
            };
            let said = String::from_utf8_lossy(&stderr.contents()).trim().to_owned();
            CallError::Runtime { failure, detail: if said.is_empty() { format!("{error:#}") } else { format!("{error:#}; stderr: {said}") } }
        };
        let work = async move {
            let plugin = self.pre.instantiate_async(&mut store).await?;
            call(plugin, store).await
        };
        match tokio::time::timeout(limits.deadline + EPOCH_TICK * 5, work).await {
            Ok(Ok((value, _store))) => Ok(value),
            Ok(Err(error)) => Err(failed(error, &stderr)),
            Err(_) => Err(CallError::Runtime { failure: RuntimeFailure::Timeout, detail: format!("still running after {:?}", limits.deadline) }),
        }
    }
}

/// A result over the output limit is `output_too_large`.
fn check_output(size: usize, limits: Limits) -> Result<(), CallError> {
    match size > limits.output_bytes {
        true => Err(CallError::Runtime { failure: RuntimeFailure::OutputTooLarge, detail: format!("{size} bytes, over the limit of {}", limits.output_bytes) }),
        false => Ok(()),
    }
}

/// A provider's JSON text as a value (text that is not JSON stays text).
fn json_or_text(text: String) -> serde_json::Value {
    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
}

/// Writes a compiled component, then its sha256 (written last, so a torn write is a miss).
fn write_cache(file: &Path, recorded: &Path, compiled: &[u8]) -> std::io::Result<()> {
    use sha2::Digest;
    std::fs::create_dir_all(file.parent().expect("the cache file is inside the cache folder"))?;
    let temp = file.with_extension(format!("cwasm.{}", geomap_model::random_hex(4)));
    std::fs::write(&temp, compiled)?;
    std::fs::rename(&temp, file)?;
    std::fs::write(recorded, geomap_model::lowercase_hex(&sha2::Sha256::digest(compiled)))
}

fn provider_failure(error: wit::ProviderError) -> ProviderFailure {
    match error {
        wit::ProviderError::UnsupportedRequest(what) => ProviderFailure::UnsupportedRequest(what),
        wit::ProviderError::InvalidOptions(option) => ProviderFailure::InvalidOptions { field: option.field, message: option.message },
        wit::ProviderError::MissingAsset(id) => ProviderFailure::MissingAsset(id),
        wit::ProviderError::NotFound(close) => ProviderFailure::NotFound(close),
        wit::ProviderError::Failed(message) => ProviderFailure::Failed(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The built component `file` (a file stem such as `k2_rocks`), or `None` when `test` skips.
    fn component(test: &str, file: &str) -> Option<PathBuf> {
        geomap_model::testing::components(test, &[file]).map(|folder| folder.join(format!("{file}.wasm")))
    }

    fn request(term: &str, options: serde_json::Value) -> LookupRequest {
        LookupRequest { term: term.to_owned(), options, limit: 5, language: None }
    }

    fn k2_fixtures() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, value: serde_json::Value| std::fs::write(dir.path().join(name), value.to_string()).unwrap();
        write("k2_rock_type.json", json!([{ "rock_value": "Igneous rocks", "rock_name": "granite" }]));
        write("k2_rock_age.json", json!([]));
        write("k2_rock_detail.json", json!([{ "id": "granite", "question": "?", "answer": "A coarse-grained intrusive rock." }]));
        dir
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_component_loads_describes_itself_and_reads_only_its_mounted_asset() {
        let Some(wasm) = component("a_component_loads_describes_itself_and_reads_only_its_mounted_asset", "k2_rocks") else { return };
        let runtime = Runtime::new(None).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let descriptor = provider.descriptor();
        assert_eq!((descriptor.name.as_str(), descriptor.lookup, descriptor.knowledge), ("k2-rocks", true, false));
        assert_eq!(descriptor.assets, ["k2-rock-knowledge"]);
        let fixtures = k2_fixtures();
        let assets = [("k2-rock-knowledge".to_owned(), fixtures.path().to_owned())];
        let entries = provider.lookup(&runtime, &assets, Limits::default(), &request("Granite", json!({}))).await.unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].summary, "rock type: Igneous rocks");
        assert_eq!(entries[0].data["description"], "A coarse-grained intrusive rock.");

        let unmounted = provider.lookup(&runtime, &[], Limits::default(), &request("granite", json!({}))).await;
        assert_eq!(unmounted, Err(CallError::Provider(ProviderFailure::MissingAsset("k2-rock-knowledge".to_owned()))));
        let gone = [("k2-rock-knowledge".to_owned(), fixtures.path().join("removed since it was checked"))];
        let unmountable = provider.lookup(&runtime, &gone, Limits::default(), &request("granite", json!({}))).await;
        assert!(matches!(unmountable, Err(CallError::Runtime { failure: RuntimeFailure::Mount, .. })), "the host's failure, not the guest's: {unmountable:?}");
        let bad_options = provider.lookup(&runtime, &assets, Limits::default(), &request("granite", json!({ "colour": 1 }))).await;
        assert!(matches!(bad_options, Err(CallError::Provider(ProviderFailure::InvalidOptions { ref field, .. })) if field == "/colour"), "{bad_options:?}");
        let unknown = provider.lookup(&runtime, &assets, Limits::default(), &request("grainte", json!({}))).await;
        assert!(
            matches!(unknown, Err(CallError::Provider(ProviderFailure::NotFound(ref close))) if close.first().map(String::as_str) == Some("granite")),
            "{unknown:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_tiny_memory_limit_is_memory_limit_and_the_next_call_succeeds() {
        let Some(wasm) = component("a_tiny_memory_limit_is_memory_limit_and_the_next_call_succeeds", "k2_rocks") else { return };
        let runtime = Runtime::new(None).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let fixtures = k2_fixtures();
        let assets = [("k2-rock-knowledge".to_owned(), fixtures.path().to_owned())];
        let starved = Limits { memory_bytes: 64 << 10, ..Limits::default() };
        let failed = provider.lookup(&runtime, &assets, starved, &request("granite", json!({}))).await;
        assert!(matches!(failed, Err(CallError::Runtime { failure: RuntimeFailure::MemoryLimit, .. })), "{failed:?}");
        let fine = provider.lookup(&runtime, &assets, Limits::default(), &request("granite", json!({}))).await;
        assert_eq!(fine.unwrap().len(), 1, "a fresh instance for every call: nothing poisoned");
    }

    /// Calls the hostile provider with `term` under `limits`.
    async fn hostile(runtime: &Runtime, provider: &LoadedProvider, term: &str, limits: Limits) -> Result<Vec<Entry>, CallError> {
        provider.lookup(runtime, &[], limits, &request(term, json!({}))).await
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn each_misbehaviour_gets_its_classification_within_its_deadline_and_the_next_call_succeeds() {
        let Some(wasm) = component("each_misbehaviour_gets_its_classification_within_its_deadline_and_the_next_call_succeeds", "hostile_provider") else {
            return;
        };
        let runtime = Runtime::new(None).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let limits = Limits { deadline: Duration::from_millis(500), memory_bytes: 64 << 20, output_bytes: 1 << 20 };
        for (term, expected) in [
            ("loop", RuntimeFailure::Timeout),
            ("sleep", RuntimeFailure::Timeout),
            ("memory", RuntimeFailure::MemoryLimit),
            ("panic", RuntimeFailure::Trap),
            ("recurse", RuntimeFailure::Trap),
            ("huge", RuntimeFailure::OutputTooLarge),
        ] {
            let started = std::time::Instant::now();
            let outcome = hostile(&runtime, &provider, term, limits).await;
            let elapsed = started.elapsed();
            assert!(matches!(outcome, Err(CallError::Runtime { failure, .. }) if failure == expected), "{term}: {outcome:?}");
            assert!(elapsed < limits.deadline * 3, "{term} took {elapsed:?}");
            let healthy = hostile(&runtime, &provider, "healthy", limits).await.unwrap();
            assert_eq!(healthy[0].summary, "all is well", "after {term}");
        }
        let Err(CallError::Runtime { detail, .. }) = hostile(&runtime, &provider, "panic", limits).await else { panic!() };
        assert!(detail.contains("the hostile provider panics on purpose"), "the panic message comes from the captured stderr: {detail}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_sandbox_has_no_files_no_network_and_no_environment() {
        let Some(wasm) = component("the_sandbox_has_no_files_no_network_and_no_environment", "hostile_provider") else { return };
        let runtime = Runtime::new(None).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        for probe in ["passwd", "escape", "socket", "env"] {
            let entries = hostile(&runtime, &provider, probe, Limits::default()).await.unwrap();
            assert_eq!(entries[0].data["got"], false, "{probe}: {}", entries[0].data["detail"]);
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_component_for_another_world_version_is_incompatible_and_never_runs() {
        let Some(wasm) = component("a_component_for_another_world_version_is_incompatible_and_never_runs", "wrong_world_provider") else { return };
        let runtime = Runtime::new(None).unwrap();
        let Err(LoadError::Incompatible { found, .. }) = runtime.load(&wasm).await else { panic!("loaded a 0.2 component") };
        assert_eq!(found, "geomap:provider/provider@0.2.0");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_compiled_component_is_cached_and_a_damaged_cache_file_is_a_miss() {
        let Some(wasm) = component("a_compiled_component_is_cached_and_a_damaged_cache_file_is_a_miss", "k2_rocks") else { return };
        let cache = tempfile::tempdir().unwrap();
        let runtime = Runtime::new(Some(cache.path().to_owned())).unwrap();
        let cold = runtime.load(&wasm).await.unwrap();
        let warm = runtime.load(&wasm).await.unwrap();
        assert_eq!((cold.from_cache(), warm.from_cache()), (false, true));
        assert_eq!(cold.descriptor(), warm.descriptor());
        let cached: Vec<PathBuf> =
            std::fs::read_dir(cache.path()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "cwasm")).collect();
        assert_eq!(cached.len(), 1);
        let mut bytes = std::fs::read(&cached[0]).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&cached[0], &bytes).unwrap();
        let recompiled = runtime.load(&wasm).await.unwrap();
        assert!(!recompiled.from_cache(), "a changed cache file is never deserialized");
        assert!(runtime.load(&wasm).await.unwrap().from_cache(), "and it was written again");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_knowledge_query_on_the_real_catalogue_finds_the_largest_events_in_the_area() {
        let Some(wasm) = component("a_knowledge_query_on_the_real_catalogue_finds_the_largest_events_in_the_area", "usgs_seismicity") else { return };
        let test = "a_knowledge_query_on_the_real_catalogue_finds_the_largest_events_in_the_area";
        let Some(shared) = geomap_model::testing::shared_assets(test, &["earthquake_1970_4.5mag.csv"]) else { return };
        let runtime = Runtime::new(None).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        assert!(provider.descriptor().knowledge && provider.descriptor().needs_area);
        let assets = [("usgs-earthquakes-m45".to_owned(), shared)];
        let request = KnowledgeRequest { area: Some([128.0, 30.0, 146.0, 46.0]), topics: Vec::new(), options: json!({ "min_magnitude": 7.0 }), limit: 3 };
        let knowledge = provider.query(&runtime, &assets, Limits::default(), &request).await.unwrap();
        // The same question answered independently: the catalogue's columns 1, 2 and 4 are latitude, longitude, magnitude.
        let text = std::fs::read_to_string(assets[0].1.join("earthquake_1970_4.5mag.csv")).unwrap();
        let magnitudes: Vec<f64> = text
            .lines()
            .skip(1)
            .map(|line| line.splitn(6, ',').collect::<Vec<_>>())
            .filter(|f| (128.0..=146.0).contains(&f[2].parse::<f64>().unwrap()) && (30.0..=46.0).contains(&f[1].parse::<f64>().unwrap()))
            .filter_map(|f| f[4].parse::<f64>().ok())
            .filter(|magnitude| *magnitude >= 7.0)
            .collect();
        assert_eq!(knowledge.items.len(), 3);
        assert_eq!(knowledge.items[0].1["count"], magnitudes.len(), "{:?}", knowledge.items[0]);
        assert_eq!(knowledge.items[1].1["magnitude"], magnitudes.iter().copied().fold(0.0, f64::max), "the largest first: {:?}", knowledge.items[1]);
        let no_area = provider.query(&runtime, &assets, Limits::default(), &KnowledgeRequest { area: None, ..request }).await;
        assert!(matches!(no_area, Err(CallError::Provider(ProviderFailure::UnsupportedRequest(_)))), "{no_area:?}");
    }
}
