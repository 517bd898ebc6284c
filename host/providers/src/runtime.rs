//! The provider runtime: compiling, sandboxing and calling the WebAssembly
//! components that export the world in `wit/provider.wit`.
//!
//! Invariants:
//! - A component is loaded once: its exports are checked for a supported world
//!   version (0.1.x) before anything runs, it is linked once (`PluginPre`),
//!   and it describes itself once.
//! - Instances are warm: an instance whose call returned normally goes back to
//!   its provider's pool and serves the provider's later calls, so the guest's
//!   `open()` runs once per instance. A pool belongs to one [`LoadedProvider`]:
//!   an instance never serves another provider. It serves a call only when it
//!   was built with the same memory limit and the same asset mounts, each
//!   folder's identity and times unchanged ([`Mount`], one `stat` a call), and
//!   the files directly in them unchanged as last compared (at most [`ProviderPool::revalidate`] ago,
//!   for a file rewritten in place in an operator's own copy). After any
//!   trap, timeout, memory-limit hit, output over the limit or mount failure the
//!   store is dropped, never reused (a trap poisons a store). Slots whose
//!   instance is dropped are wiped (zeroed) by wasmtime before the next
//!   instance gets them, so nothing of one instance reaches another.
//! - Idle instances hold pooling-allocator slots, so they are bounded
//!   ([`ProviderPool::idle_per_provider`], [`ProviderPool::idle_expiry`]) and never make a call wait: a call
//!   that finds no free slot evicts the longest-idle instance of any provider,
//!   and while any call waits for a slot, finished instances are dropped
//!   instead of kept.
//! - The sandbox: no network, no environment, no inherited stdio (stderr is
//!   captured), each asset the provider declared mounted read-only at
//!   `/assets/<asset-id>/`, nothing else on the filesystem.
//! - Limits ([`ProviderLimits`]) hold per call: memory by a store limiter over the instance's whole
//!   memory (what earlier calls left counts); CPU by an epoch deadline set
//!   afresh for each call *and* an outer timeout (epochs do not fire while the
//!   guest blocks in a host call); the output's size is checked before it is
//!   handed on; stderr is captured per call.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use geomap_model::settings::{ProviderLimits, ProviderPool};
use geomap_provider_sdk::{Capability, Descriptor, Entry, Item, Knowledge, KnowledgeRequest, LookupRequest, ProviderError as ProviderFailure};

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, Store};
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
/// follows is reported as `memory_limit`. `desired` is the memory's whole size,
/// so on a warm instance what earlier calls left counts against the limit.
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

/// A provider's stderr: what one call wrote, up to [`STDERR_BYTES`] (the rest is
/// dropped, never refused, so a chatty provider does not fail for it). A warm
/// instance keeps its stream; the host clears it before each call.
#[derive(Clone, Default)]
struct Stderr(Arc<Mutex<Vec<u8>>>);

impl Stderr {
    fn clear(&self) {
        lock(&self.0).clear();
    }

    /// What the call wrote, trimmed.
    fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.0)).trim().to_owned()
    }
}

impl wasmtime_wasi::cli::IsTerminal for Stderr {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl wasmtime_wasi::cli::StdoutStream for Stderr {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl tokio::io::AsyncWrite for Stderr {
    fn poll_write(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>, bytes: &[u8]) -> std::task::Poll<std::io::Result<usize>> {
        let mut kept = lock(&self.0);
        let room = STDERR_BYTES.saturating_sub(kept.len());
        kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        std::task::Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// A mutex's contents, even after a panic elsewhere (nothing here is left half-changed by one).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A pool of instance slots, reused instance after instance. The default allocator maps each
/// instance's memory afresh and unmaps it when the instance goes; with many instances a second that
/// is most of their cost (every `munmap` makes the kernel flush the TLB of every core running the server).
fn instance_pool(sizes: &ProviderPool) -> wasmtime::InstanceAllocationStrategy {
    let slots = sizes.instance_slots;
    let mut pool = wasmtime::PoolingAllocationConfig::new();
    pool.total_component_instances(slots)
        .total_core_instances(8 * slots)
        .total_memories(2 * slots)
        .total_tables(4 * slots)
        .total_stacks(slots)
        .linear_memory_keep_resident(sizes.keep_resident_bytes)
        .table_keep_resident(64 << 10);
    wasmtime::InstanceAllocationStrategy::Pooling(pool)
}

/// The engine, the linker with WASI, the epoch ticker, and where compiled components are cached.
pub struct Runtime {
    engine: Engine,
    linker: Linker<Sandbox>,
    cache: Option<PathBuf>,
    /// How many instances it keeps, and for how long.
    sizes: ProviderPool,
    /// One permit per instance slot, held by every instance, running or idle: a call waits for one
    /// rather than fail when all are in use.
    slots: Arc<Semaphore>,
    /// The pools of the providers linked here, for a call that needs a slot an idle instance holds.
    pools: Mutex<Vec<Weak<Pool>>>,
    /// Calls waiting for a slot: while there are any, a finished instance gives its slot back
    /// instead of going idle.
    waiting: AtomicUsize,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Runtime")
    }
}

impl Runtime {
    /// An engine for provider components with WASI preview 2 linked, keeping instances as `sizes`
    /// says (the settings' [`ProviderPool`]; tests use a few slots, to exhaust them); compiled
    /// components are cached in `cache` (a folder only the server writes) when given.
    pub fn new(cache: Option<PathBuf>, sizes: ProviderPool) -> wasmtime::Result<Runtime> {
        let mut config = Config::new();
        config.wasm_component_model(true).epoch_interruption(true).allocation_strategy(instance_pool(&sizes));
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
        let slots = Arc::new(Semaphore::new(sizes.instance_slots as usize));
        Ok(Runtime { engine, linker, cache, sizes, slots, pools: Mutex::new(Vec::new()), waiting: AtomicUsize::new(0) })
    }

    /// A slot for a new instance: a free one, else one an idle instance gives up (the one idle the
    /// longest, of any provider), else the first a running call gives back. An idle instance never
    /// makes a call wait: once this call waits, finished instances give their slots back instead of
    /// going idle ([`Pool::keep`]), and every idle one there was has been evicted.
    async fn slot(&self) -> OwnedSemaphorePermit {
        if let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() {
            return slot;
        }
        /// Counts this call among the waiting ones until it has a slot (or is cancelled).
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        // SeqCst with Pool::keep's load, and before any pool is locked: an instance that went idle
        // without seeing this call waiting is in its pool by the time the loop looks there.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = Waiting(&self.waiting);
        loop {
            if let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() {
                return slot;
            }
            if !self.evict_one() {
                break;
            }
        }
        Arc::clone(&self.slots).acquire_owned().await.expect("the slots are never closed")
    }

    /// Drops the instance idle the longest, of any provider; `false` when none is idle.
    fn evict_one(&self) -> bool {
        let pools: Vec<Arc<Pool>> = {
            let mut pools = lock(&self.pools);
            pools.retain(|pool| pool.strong_count() > 0);
            pools.iter().filter_map(Weak::upgrade).collect()
        };
        let oldest = pools.iter().filter_map(|pool| lock(&pool.idle).first().map(|warm| (warm.idle_since, pool))).min_by_key(|(since, _)| *since);
        let Some((_, pool)) = oldest else { return false };
        let evicted = {
            let mut idle = lock(&pool.idle);
            (!idle.is_empty()).then(|| idle.remove(0))
        };
        drop(evicted); // outside the lock: the slot is wiped as the store goes
        true
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
        let pool = Arc::new(Pool::default());
        lock(&self.pools).push(Arc::downgrade(&pool));
        let mut loaded = LoadedProvider { pre, descriptor: None, from_cache, pool };
        let describe = |mut instance: Instance| async move {
            instance.plugin.geomap_provider_provider().call_describe(&mut instance.store).await.map(|descriptor| (descriptor, instance))
        };
        // Describing needs no asset and opens nothing: its instance is not kept.
        let descriptor = loaded.run(self, &[], ProviderLimits::default(), Reuse::Never, describe, |_| 0).await.map_err(|error| match error {
            CallError::Runtime { failure, detail } => LoadError::Describe { path: path.to_owned(), failure, detail },
            CallError::Provider(failure) => LoadError::Describe { path: path.to_owned(), failure: RuntimeFailure::Trap, detail: format!("{failure:?}") },
        })?;
        let options_schema = serde_json::from_str(&descriptor.options_schema)
            .map_err(|error| LoadError::Invalid { path: path.to_owned(), message: format!("its options schema is not JSON: {error}") })?;
        let capabilities = descriptor
            .capabilities
            .into_iter()
            .map(|capability| match capability {
                wit::Capability::Lookup => Capability::Lookup,
                wit::Capability::Knowledge => Capability::Knowledge,
            })
            .collect();
        loaded.descriptor = Some(Descriptor {
            name: descriptor.name,
            version: descriptor.version,
            description: descriptor.description,
            capabilities,
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

/// A component, checked and linked, with its warm instances.
pub struct LoadedProvider {
    pre: bindings::PluginPre<Sandbox>,
    descriptor: Option<Descriptor>,
    from_cache: bool,
    /// Its idle instances; never another provider's.
    pool: Arc<Pool>,
}

/// A store and the instance in it.
struct Instance {
    store: Store<Sandbox>,
    plugin: bindings::Plugin,
}

/// An instance between calls, with what it was built with.
struct Warm {
    instance: Instance,
    /// The mounts it was built with: it serves only calls whose mounts are these, unchanged.
    mounts: Vec<Mount>,
    /// Their files, as last compared, and when.
    files: Files,
    files_checked: Instant,
    /// The memory limit its limiter enforces.
    memory_bytes: usize,
    stderr: Stderr,
    exceeded: Arc<AtomicBool>,
    idle_since: Instant,
    /// Declared last, so dropped after the store: a slot is free only once its instance is gone.
    slot: OwnedSemaphorePermit,
}

/// One provider's idle instances, the most recently used last.
#[derive(Default)]
struct Pool {
    idle: Mutex<Vec<Warm>>,
}

impl Pool {
    /// An idle instance built with `mounts` and `memory_bytes`, the most recently used. The others
    /// built with other mounts are stale (an asset changed) and dropped, as are those that sat unused
    /// for `expiry` (the provider has a running instance now).
    fn take(&self, mounts: &[Mount], memory_bytes: usize, expiry: Duration) -> Option<Warm> {
        let now = Instant::now();
        let (found, dropped) = {
            let mut idle = lock(&self.idle);
            let found = idle.iter().rposition(|warm| warm.mounts == mounts && warm.memory_bytes == memory_bytes).map(|at| idle.remove(at));
            let (kept, dropped): (Vec<Warm>, Vec<Warm>) =
                std::mem::take(&mut *idle).into_iter().partition(|warm| warm.mounts == mounts && now.duration_since(warm.idle_since) < expiry);
            *idle = kept;
            (found, dropped)
        };
        drop(dropped); // outside the lock: each slot is wiped as its store goes
        found
    }

    /// Keeps `warm` for a later call, unless a call is waiting for a slot (then its slot goes back
    /// at once). Beyond the runtime's [`ProviderPool::idle_per_provider`] the one idle the longest goes.
    fn keep(&self, runtime: &Runtime, warm: Warm) {
        let dropped = {
            let mut idle = lock(&self.idle);
            // Under the pool's lock, SeqCst with Runtime::slot's increment (see there).
            if runtime.waiting.load(Ordering::SeqCst) > 0 {
                Some(warm)
            } else {
                idle.push(warm);
                (idle.len() > runtime.sizes.idle_per_provider).then(|| idle.remove(0))
            }
        };
        drop(dropped);
    }
}

/// Whether a call's instance may be taken from the pool and kept after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reuse {
    /// A lookup or a query: warm when it can be.
    Warm,
    /// Describing: a fresh instance, dropped after.
    Never,
}

/// One asset folder as a call mounts it, with the folder's identity and times: the installer swaps
/// a new copy in with a rename (another inode), and adding, removing or renaming a file (as most
/// editors save) changes the folder's times. Compared on every call: a warm instance built on an
/// earlier state is never handed a later call.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    id: String,
    folder: PathBuf,
    stamp: Stamp,
}

/// What the host can see of the files directly in each mounted folder without reading them: a file
/// of an operator's own copy rewritten in place changes its stamp, not its folder's. Compared when
/// an instance's last comparison is [`ProviderPool::revalidate`] old.
type Files = Vec<Vec<(std::ffi::OsString, Stamp)>>;

/// A file's or folder's identity and times (ctime too: no tool can set it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path).ok()?;
        Some(Stamp {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }
}

/// The mounts of `assets` as they are now (one `stat` each); `None` when one cannot be read (the
/// call then gets a fresh instance that is not kept, and its mount most likely fails).
fn mounts(assets: &[(String, PathBuf)]) -> Option<Vec<Mount>> {
    assets.iter().map(|(id, folder)| Some(Mount { id: id.clone(), folder: folder.clone(), stamp: Stamp::of(folder)? })).collect()
}

/// The stamps of the files directly in each of `assets`' folders, by name; `None` when one cannot be read.
fn file_stamps(assets: &[(String, PathBuf)]) -> Option<Files> {
    assets
        .iter()
        .map(|(_, folder)| {
            let mut files = Vec::new();
            for entry in std::fs::read_dir(folder).ok()? {
                let path = entry.ok()?.path();
                files.push((path.file_name()?.to_owned(), Stamp::of(&path)?));
            }
            files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            Some(files)
        })
        .collect()
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
    pub async fn lookup(
        &self,
        runtime: &Runtime,
        assets: &[(String, PathBuf)],
        limits: ProviderLimits,
        request: &LookupRequest,
    ) -> Result<Vec<Entry>, CallError> {
        let request =
            wit::LookupRequest { term: request.term.clone(), options: request.options.to_string(), limit: request.limit, language: request.language.clone() };
        let call = |mut instance: Instance| async move {
            instance.plugin.geomap_provider_provider().call_lookup(&mut instance.store, &request).await.map(|answer| (answer, instance))
        };
        let size = |answer: &Result<Vec<wit::Entry>, wit::ProviderError>| match answer {
            Ok(entries) => entries.iter().map(|entry| entry.id.len() + entry.label.len() + entry.summary.len() + entry.data.len()).sum(),
            Err(_) => 0,
        };
        let entries = self.run(runtime, assets, limits, Reuse::Warm, call, size).await?.map_err(|error| CallError::Provider(provider_failure(error)))?;
        Ok(entries.into_iter().map(|entry| Entry { id: entry.id, label: entry.label, summary: entry.summary, data: json_or_text(entry.data) }).collect())
    }

    /// Runs `request` with `assets` (asset id, host folder) mounted read-only.
    pub async fn query(
        &self,
        runtime: &Runtime,
        assets: &[(String, PathBuf)],
        limits: ProviderLimits,
        request: &KnowledgeRequest,
    ) -> Result<Knowledge, CallError> {
        let request = wit::KnowledgeRequest {
            area: request.area.map(|area| wit::Area { west: area.west, south: area.south, east: area.east, north: area.north }),
            topics: request.topics.clone(),
            options: request.options.to_string(),
            limit: request.limit,
        };
        let call = |mut instance: Instance| async move {
            instance.plugin.geomap_provider_provider().call_query(&mut instance.store, &request).await.map(|answer| (answer, instance))
        };
        let size = |answer: &Result<wit::Knowledge, wit::ProviderError>| match answer {
            Ok(knowledge) => knowledge.summary.len() + knowledge.items.iter().map(|item| item.title.len() + item.data.len()).sum::<usize>(),
            Err(_) => 0,
        };
        let knowledge = self.run(runtime, assets, limits, Reuse::Warm, call, size).await?.map_err(|error| CallError::Provider(provider_failure(error)))?;
        Ok(Knowledge {
            items: knowledge.items.into_iter().map(|item| Item { title: item.title, data: json_or_text(item.data) }).collect(),
            summary: knowledge.summary,
        })
    }

    /// Runs `call` within `limits` on an idle instance built with these mounts, or on a fresh one
    /// in a fresh sandbox; `size` is the answer's output size. The instance is kept for a later call
    /// only when the call returned normally within every limit.
    async fn run<T, F, Fut>(
        &self,
        runtime: &Runtime,
        assets: &[(String, PathBuf)],
        limits: ProviderLimits,
        reuse: Reuse,
        call: F,
        size: impl FnOnce(&T) -> usize,
    ) -> Result<T, CallError>
    where
        F: FnOnce(Instance) -> Fut,
        Fut: Future<Output = wasmtime::Result<(T, Instance)>>,
    {
        let mounts = match reuse {
            Reuse::Warm => mounts(assets),
            Reuse::Never => None,
        };
        let mut idle = mounts.as_deref().and_then(|mounts| self.pool.take(mounts, limits.memory_bytes, runtime.sizes.idle_expiry));
        let mut read = None;
        if let Some(warm) = &mut idle
            && warm.files_checked.elapsed() >= runtime.sizes.revalidate
        {
            let now = file_stamps(assets);
            if now.as_ref() == Some(&warm.files) {
                warm.files_checked = Instant::now();
            } else {
                idle = None; // a file changed in place: this instance may have read the earlier one
                read = Some(now);
            }
        }
        // Declared before the store, so dropped after it: the slot is free only once the instance is gone.
        let (slot, ready, files, stderr, exceeded) = match idle {
            Some(Warm { instance, files, files_checked, stderr, exceeded, slot, .. }) => {
                stderr.clear();
                (slot, Ready::Warm(instance), Some((files, files_checked)), stderr, exceeded)
            }
            None => {
                // Read before the folders are opened: a change in between makes the next call's check fail, never pass.
                let files = match mounts {
                    Some(_) => read.unwrap_or_else(|| file_stamps(assets)).map(|files| (files, Instant::now())),
                    None => None,
                };
                let slot = runtime.slot().await;
                let stderr = Stderr::default();
                let mut wasi = WasiCtx::builder();
                wasi.stderr(stderr.clone()).allow_blocking_current_thread(true);
                for (id, folder) in assets {
                    wasi.preopened_dir(folder, format!("/assets/{id}"), FsPerms::ReadOnly)
                        .map_err(|error| CallError::Runtime { failure: RuntimeFailure::Mount, detail: format!("asset {id} cannot be mounted: {error}") })?;
                }
                let exceeded = Arc::new(AtomicBool::new(false));
                let limiter = MemoryLimiter { limit: limits.memory_bytes, exceeded: Arc::clone(&exceeded) };
                let mut store = Store::new(&runtime.engine, Sandbox { wasi: wasi.build(), table: ResourceTable::new(), limiter });
                store.limiter(|sandbox| &mut sandbox.limiter);
                (slot, Ready::Cold(store), files, stderr, exceeded)
            }
        };
        let ticks = (limits.deadline.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
        let failed = |error: wasmtime::Error| {
            let failure = if exceeded.load(Ordering::Relaxed) {
                RuntimeFailure::MemoryLimit
            } else if matches!(error.downcast_ref::<wasmtime::Trap>(), Some(wasmtime::Trap::Interrupt)) {
                RuntimeFailure::Timeout
            } else {
                RuntimeFailure::Trap
            };
            let said = stderr.text();
            CallError::Runtime { failure, detail: if said.is_empty() { format!("{error:#}") } else { format!("{error:#}; stderr: {said}") } }
        };
        let work = async move {
            let instance = match ready {
                Ready::Warm(mut instance) => {
                    // The deadline is relative to now: this call gets the whole of it.
                    instance.store.set_epoch_deadline(ticks);
                    instance
                }
                Ready::Cold(mut store) => {
                    store.set_epoch_deadline(ticks);
                    let plugin = self.pre.instantiate_async(&mut store).await?;
                    Instance { store, plugin }
                }
            };
            call(instance).await
        };
        // On any failure the store is dropped with `work` (before `slot`), never reused.
        let (value, instance) = match tokio::time::timeout(limits.deadline + EPOCH_TICK * 5, work).await {
            Ok(Ok(done)) => done,
            Ok(Err(error)) => return Err(failed(error)),
            Err(_) => return Err(CallError::Runtime { failure: RuntimeFailure::Timeout, detail: format!("still running after {:?}", limits.deadline) }),
        };
        let size = size(&value);
        if size > limits.output_bytes {
            drop(instance);
            return Err(CallError::Runtime {
                failure: RuntimeFailure::OutputTooLarge,
                detail: format!("{size} bytes, over the limit of {}", limits.output_bytes),
            });
        }
        match (mounts, files) {
            (Some(mounts), Some((files, files_checked))) if !exceeded.load(Ordering::Relaxed) => {
                let warm =
                    Warm { instance, mounts, files, files_checked, memory_bytes: limits.memory_bytes, stderr, exceeded, idle_since: Instant::now(), slot };
                self.pool.keep(runtime, warm);
            }
            _ => drop(instance),
        }
        Ok(value)
    }
}

/// The instance a call runs on: an idle one, or a store to instantiate in.
enum Ready {
    Warm(Instance),
    Cold(Store<Sandbox>),
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
    use geomap_provider_sdk::Area;
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
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let descriptor = provider.descriptor();
        assert_eq!((descriptor.name.as_str(), descriptor.serves(Capability::Lookup), descriptor.serves(Capability::Knowledge)), ("k2-rocks", true, false));
        assert_eq!(descriptor.assets, ["k2-rock-knowledge"]);
        let fixtures = k2_fixtures();
        let assets = [("k2-rock-knowledge".to_owned(), fixtures.path().to_owned())];
        let entries = provider.lookup(&runtime, &assets, ProviderLimits::default(), &request("Granite", json!({}))).await.unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].summary, "rock type: Igneous rocks");
        assert_eq!(entries[0].data["description"], "A coarse-grained intrusive rock.");

        let unmounted = provider.lookup(&runtime, &[], ProviderLimits::default(), &request("granite", json!({}))).await;
        assert_eq!(unmounted, Err(CallError::Provider(ProviderFailure::MissingAsset("k2-rock-knowledge".to_owned()))));
        let gone = [("k2-rock-knowledge".to_owned(), fixtures.path().join("removed since it was checked"))];
        let unmountable = provider.lookup(&runtime, &gone, ProviderLimits::default(), &request("granite", json!({}))).await;
        assert!(matches!(unmountable, Err(CallError::Runtime { failure: RuntimeFailure::Mount, .. })), "the host's failure, not the guest's: {unmountable:?}");
        let bad_options = provider.lookup(&runtime, &assets, ProviderLimits::default(), &request("granite", json!({ "colour": 1 }))).await;
        assert!(matches!(bad_options, Err(CallError::Provider(ProviderFailure::InvalidOptions { ref field, .. })) if field == "/colour"), "{bad_options:?}");
        let unknown = provider.lookup(&runtime, &assets, ProviderLimits::default(), &request("grainte", json!({}))).await;
        assert!(
            matches!(unknown, Err(CallError::Provider(ProviderFailure::NotFound(ref close))) if close.first().map(String::as_str) == Some("granite")),
            "{unknown:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_tiny_memory_limit_is_memory_limit_and_the_next_call_succeeds() {
        let Some(wasm) = component("a_tiny_memory_limit_is_memory_limit_and_the_next_call_succeeds", "k2_rocks") else { return };
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let fixtures = k2_fixtures();
        let assets = [("k2-rock-knowledge".to_owned(), fixtures.path().to_owned())];
        let starved = ProviderLimits { memory_bytes: 64 << 10, ..ProviderLimits::default() };
        let failed = provider.lookup(&runtime, &assets, starved, &request("granite", json!({}))).await;
        assert!(matches!(failed, Err(CallError::Runtime { failure: RuntimeFailure::MemoryLimit, .. })), "{failed:?}");
        let fine = provider.lookup(&runtime, &assets, ProviderLimits::default(), &request("granite", json!({}))).await;
        assert_eq!(fine.unwrap().len(), 1, "the instance that hit the limit was dropped: nothing poisoned");
    }

    /// What the counting provider said about the instance that answered.
    #[derive(Debug, PartialEq)]
    struct Counted {
        /// Times `open()` ran in it.
        opens: u64,
        /// Lookups it answered, this one included.
        calls: u64,
        /// Its asset's marker when it opened.
        marker: Option<String>,
        /// Bytes it keeps for its life.
        held: u64,
    }

    impl Counted {
        fn new(opens: u64, calls: u64) -> Counted {
            Counted { opens, calls, marker: None, held: 0 }
        }

        fn marked(self, marker: &str) -> Counted {
            Counted { marker: Some(marker.to_owned()), ..self }
        }

        fn holding(self, held: u64) -> Counted {
            Counted { held, ..self }
        }
    }

    async fn count(
        runtime: &Runtime,
        provider: &LoadedProvider,
        assets: &[(String, PathBuf)],
        limits: ProviderLimits,
        term: &str,
    ) -> Result<Counted, CallError> {
        let entries = provider.lookup(runtime, assets, limits, &request(term, json!({}))).await?;
        let data = &entries[0].data;
        Ok(Counted {
            opens: data["opens"].as_u64().unwrap(),
            calls: data["calls"].as_u64().unwrap(),
            marker: data["marker"].as_str().map(str::to_owned),
            held: data["held_bytes"].as_u64().unwrap(),
        })
    }

    /// A counting-marker asset folder holding `marker.txt` with `marker`.
    fn marker_folder(parent: &Path, name: &str, marker: &str) -> PathBuf {
        let folder = parent.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("marker.txt"), marker).unwrap();
        folder
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn open_runs_once_per_instance_and_the_instance_serves_later_calls_of_its_provider_only() {
        let test = "open_runs_once_per_instance_and_the_instance_serves_later_calls_of_its_provider_only";
        let Some(wasm) = component(test, "counting_provider") else { return };
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let defaults = ProviderLimits::default();
        for call in 1..=5 {
            assert_eq!(count(&runtime, &provider, &[], defaults, "count").await.unwrap(), Counted::new(1, call), "one open, then the same instance");
        }
        let not_found = provider.lookup(&runtime, &[], defaults, &request("nothing", json!({}))).await;
        assert!(matches!(not_found, Err(CallError::Provider(ProviderFailure::NotFound(_)))), "{not_found:?}");
        assert_eq!(count(&runtime, &provider, &[], defaults, "count").await.unwrap(), Counted::new(1, 6), "a typed answer keeps the instance");

        let other = runtime.load(&wasm).await.unwrap();
        assert_eq!(count(&runtime, &other, &[], defaults, "count").await.unwrap(), Counted::new(1, 1), "another provider's instance is never lent");
        assert_eq!(count(&runtime, &provider, &[], defaults, "count").await.unwrap(), Counted::new(1, 7));
        let starved = ProviderLimits { memory_bytes: 8 << 20, ..defaults };
        assert_eq!(count(&runtime, &provider, &[], starved, "count").await.unwrap(), Counted::new(1, 1), "another memory limit, another instance");
        assert_eq!(count(&runtime, &provider, &[], defaults, "count").await.unwrap(), Counted::new(1, 8));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn after_a_trap_the_next_call_gets_a_fresh_instance_and_succeeds() {
        let Some(wasm) = component("after_a_trap_the_next_call_gets_a_fresh_instance_and_succeeds", "counting_provider") else { return };
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let defaults = ProviderLimits::default();
        count(&runtime, &provider, &[], defaults, "count").await.unwrap();
        assert_eq!(count(&runtime, &provider, &[], defaults, "count").await.unwrap(), Counted::new(1, 2));
        let trapped = count(&runtime, &provider, &[], defaults, "panic").await;
        let Err(CallError::Runtime { failure: RuntimeFailure::Trap, detail }) = trapped else { panic!("{trapped:?}") };
        assert!(detail.contains("the counting provider panics on purpose"), "{detail}");
        assert_eq!(count(&runtime, &provider, &[], defaults, "count").await.unwrap(), Counted::new(1, 1), "a fresh instance, opened once");
        assert_eq!(count(&runtime, &provider, &[], defaults, "count").await.unwrap(), Counted::new(1, 2), "and it is kept");
        assert_eq!(count(&runtime, &provider, &[], defaults, "say").await.unwrap(), Counted::new(1, 3), "said on stderr");
        let Err(CallError::Runtime { detail, .. }) = count(&runtime, &provider, &[], defaults, "panic").await else { panic!() };
        assert!(detail.contains("panics on purpose") && !detail.contains("said on purpose"), "stderr is captured per call: {detail}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_memory_limit_holds_on_a_warm_instance_over_all_it_kept() {
        let Some(wasm) = component("the_memory_limit_holds_on_a_warm_instance_over_all_it_kept", "counting_provider") else { return };
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let limits = ProviderLimits { memory_bytes: 40 << 20, ..ProviderLimits::default() };
        assert_eq!(count(&runtime, &provider, &[], limits, "hold:16").await.unwrap(), Counted::new(1, 1).holding(16 << 20));
        assert_eq!(count(&runtime, &provider, &[], limits, "hold:16").await.unwrap(), Counted::new(1, 2).holding(32 << 20), "the same instance");
        let over = count(&runtime, &provider, &[], limits, "hold:16").await;
        assert!(matches!(over, Err(CallError::Runtime { failure: RuntimeFailure::MemoryLimit, .. })), "16 MiB more than the 32 it kept: {over:?}");
        assert_eq!(count(&runtime, &provider, &[], limits, "count").await.unwrap(), Counted::new(1, 1), "a fresh instance after the limit");
        let alone = count(&runtime, &provider, &[], limits, "hold:48").await;
        assert!(matches!(alone, Err(CallError::Runtime { failure: RuntimeFailure::MemoryLimit, .. })), "{alone:?}");
        assert_eq!(count(&runtime, &provider, &[], limits, "hold:16").await.unwrap(), Counted::new(1, 1).holding(16 << 20));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn an_asset_replaced_or_edited_gets_a_fresh_instance_that_sees_the_new_files() {
        let test = "an_asset_replaced_or_edited_gets_a_fresh_instance_that_sees_the_new_files";
        let Some(wasm) = component(test, "counting_provider") else { return };
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let defaults = ProviderLimits::default();
        let base = tempfile::tempdir().unwrap();
        let folder = marker_folder(base.path(), "counting-marker", "one");
        let assets = [("counting-marker".to_owned(), folder.clone())];
        assert_eq!(count(&runtime, &provider, &assets, defaults, "count").await.unwrap(), Counted::new(1, 1).marked("one"));
        assert_eq!(count(&runtime, &provider, &assets, defaults, "count").await.unwrap(), Counted::new(1, 2).marked("one"));

        // As the installer does: a new copy built beside it, swapped in by renames, the old one removed.
        marker_folder(base.path(), ".partial-counting-marker", "two");
        std::fs::rename(&folder, base.path().join("old")).unwrap();
        std::fs::rename(base.path().join(".partial-counting-marker"), &folder).unwrap();
        std::fs::remove_dir_all(base.path().join("old")).unwrap();
        assert_eq!(count(&runtime, &provider, &assets, defaults, "count").await.unwrap(), Counted::new(1, 1).marked("two"), "reinstalled");
        assert_eq!(count(&runtime, &provider, &assets, defaults, "count").await.unwrap(), Counted::new(1, 2).marked("two"));

        // An operator's own copy: a file added (the folder changes; its times are coarse, so not
        // within the same tick as the swap), then a file rewritten in place (only the file changes:
        // seen by calls from `revalidate` on).
        tokio::time::sleep(Duration::from_millis(50)).await;
        std::fs::write(folder.join("more.txt"), "x").unwrap();
        assert_eq!(count(&runtime, &provider, &assets, defaults, "count").await.unwrap(), Counted::new(1, 1).marked("two"), "a file added");
        std::fs::write(folder.join("marker.txt"), "three").unwrap();
        tokio::time::sleep(ProviderPool::default().revalidate + Duration::from_millis(100)).await;
        assert_eq!(count(&runtime, &provider, &assets, defaults, "count").await.unwrap(), Counted::new(1, 1).marked("three"), "edited in place");
        tokio::time::sleep(ProviderPool::default().revalidate + Duration::from_millis(100)).await;
        assert_eq!(count(&runtime, &provider, &assets, defaults, "count").await.unwrap(), Counted::new(1, 2).marked("three"), "unchanged since");
        // Without the asset: another mount, another instance.
        assert_eq!(count(&runtime, &provider, &[], defaults, "count").await.unwrap(), Counted::new(1, 1));
        // The folder gone: the host cannot mount it, and says so.
        std::fs::remove_dir_all(&folder).unwrap();
        let gone = count(&runtime, &provider, &assets, defaults, "count").await;
        assert!(matches!(gone, Err(CallError::Runtime { failure: RuntimeFailure::Mount, .. })), "{gone:?}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn an_open_that_failed_is_not_kept_and_the_next_call_opens_again() {
        let Some(wasm) = component("an_open_that_failed_is_not_kept_and_the_next_call_opens_again", "counting_provider") else { return };
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let base = tempfile::tempdir().unwrap();
        let assets = [("counting-marker".to_owned(), marker_folder(base.path(), "counting-marker", "fail-first-open"))];
        let failed = count(&runtime, &provider, &assets, ProviderLimits::default(), "count").await;
        assert!(matches!(failed, Err(CallError::Provider(ProviderFailure::Failed(_)))), "{failed:?}");
        let again = count(&runtime, &provider, &assets, ProviderLimits::default(), "count").await.unwrap();
        assert_eq!(again, Counted::new(2, 1).marked("fail-first-open"), "the same instance opened again");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn idle_instances_never_make_a_call_wait_for_a_slot() {
        let Some(wasm) = component("idle_instances_never_make_a_call_wait_for_a_slot", "counting_provider") else { return };
        let runtime = Arc::new(Runtime::new(None, ProviderPool { instance_slots: 2, ..ProviderPool::default() }).unwrap());
        let mut providers = Vec::new();
        for _ in 0..3 {
            providers.push(Arc::new(runtime.load(&wasm).await.unwrap()));
        }
        let call = |provider: usize, term: &'static str| {
            let (runtime, provider) = (Arc::clone(&runtime), Arc::clone(&providers[provider]));
            async move {
                let counted = count(&runtime, &provider, &[], ProviderLimits::default(), term);
                tokio::time::timeout(Duration::from_secs(20), counted).await.expect("a call waited for a slot an idle instance held").unwrap()
            }
        };
        for provider in 0..3 {
            assert_eq!(call(provider, "count").await, Counted::new(1, 1));
        }
        // Two slots: the third provider's first call evicted the first's idle instance.
        assert_eq!(call(1, "count").await, Counted::new(1, 2), "still warm");
        assert_eq!(call(0, "count").await, Counted::new(1, 1), "evicted, so fresh");
        // Calls of all three at once, on threads of their own: some wait for a slot, none forever.
        let calls: Vec<_> = (0..6).map(|n| tokio::spawn(call(n % 3, "hold:32"))).collect();
        for call in calls {
            assert_eq!(call.await.unwrap().opens, 1);
        }
    }

    /// Calls the hostile provider with `term` under `limits`.
    async fn hostile(runtime: &Runtime, provider: &LoadedProvider, term: &str, limits: ProviderLimits) -> Result<Vec<Entry>, CallError> {
        provider.lookup(runtime, &[], limits, &request(term, json!({}))).await
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn each_misbehaviour_gets_its_classification_within_its_deadline_and_the_next_call_succeeds() {
        let Some(wasm) = component("each_misbehaviour_gets_its_classification_within_its_deadline_and_the_next_call_succeeds", "hostile_provider") else {
            return;
        };
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        let limits = ProviderLimits { deadline: Duration::from_millis(500), memory_bytes: 64 << 20, output_bytes: 1 << 20 };
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
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        for probe in ["passwd", "escape", "socket", "env"] {
            let entries = hostile(&runtime, &provider, probe, ProviderLimits::default()).await.unwrap();
            assert_eq!(entries[0].data["got"], false, "{probe}: {}", entries[0].data["detail"]);
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_component_for_another_world_version_is_incompatible_and_never_runs() {
        let Some(wasm) = component("a_component_for_another_world_version_is_incompatible_and_never_runs", "wrong_world_provider") else { return };
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let Err(LoadError::Incompatible { found, .. }) = runtime.load(&wasm).await else { panic!("loaded a 0.2 component") };
        assert_eq!(found, "geomap:provider/provider@0.2.0");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_compiled_component_is_cached_and_a_damaged_cache_file_is_a_miss() {
        let Some(wasm) = component("a_compiled_component_is_cached_and_a_damaged_cache_file_is_a_miss", "k2_rocks") else { return };
        let cache = tempfile::tempdir().unwrap();
        let runtime = Runtime::new(Some(cache.path().to_owned()), ProviderPool::default()).unwrap();
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
        let runtime = Runtime::new(None, ProviderPool::default()).unwrap();
        let provider = runtime.load(&wasm).await.unwrap();
        assert!(provider.descriptor().serves(Capability::Knowledge) && provider.descriptor().needs_area);
        let assets = [("usgs-earthquakes-m45".to_owned(), shared)];
        let request = KnowledgeRequest {
            area: Some(Area { west: 128.0, south: 30.0, east: 146.0, north: 46.0 }),
            topics: Vec::new(),
            options: json!({ "min_magnitude": 7.0 }),
            limit: 3,
        };
        let knowledge = provider.query(&runtime, &assets, ProviderLimits::default(), &request).await.unwrap();
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
        assert_eq!(knowledge.items[0].data["count"], magnitudes.len(), "{:?}", knowledge.items[0]);
        assert_eq!(knowledge.items[1].data["magnitude"], magnitudes.iter().copied().fold(0.0, f64::max), "the largest first: {:?}", knowledge.items[1]);
        let no_area = provider.query(&runtime, &assets, ProviderLimits::default(), &KnowledgeRequest { area: None, ..request }).await;
        assert!(matches!(no_area, Err(CallError::Provider(ProviderFailure::UnsupportedRequest(_)))), "{no_area:?}");
    }
}
