//! The provider runtime: loading components and running their calls, over the world's bindings
//! (`wit`), the sandbox (`sandbox`), the engine and compile cache (`engine`) and the warm pool
//! (`pool`).
//!
//! Invariants:
//! - A component is loaded once: its exports are checked for a supported world version before
//!   anything runs, it is linked once, and it describes itself once, on an instance that opens
//!   nothing and is never kept.
//! - A call runs on an idle instance of its own provider fit for it, or on a fresh one in a fresh
//!   sandbox; the instance goes back to the provider's pool only when the call returned normally
//!   (an answer or a typed failure) within every limit. After any trap, timeout (epoch or outer),
//!   memory-limit hit, output over the limit or mount failure its store is dropped with the call's
//!   future, before its slot is released, and never reused (a trap poisons a store).
//! - Limits ([`ProviderLimits`]) hold per call: an epoch deadline set afresh for each call *and*
//!   an outer timeout (epochs do not fire while the guest blocks in a host call); the sandbox's
//!   memory limiter over the instance's whole memory; the answer's size checked before it is
//!   converted and handed on; stderr captured per call.
//! - A runtime stop is classified once, here: `memory_limit` when the limiter refused growth,
//!   `timeout` on the epoch's interrupt or the outer timeout, `trap` otherwise, each with the
//!   call's stderr; `mount` when an asset folder could not be mounted (the provider never ran).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::Linker;

use geomap_model::settings::{ProviderLimits, ProviderPool};
use geomap_provider_sdk::{Descriptor, Entry, Knowledge, KnowledgeRequest, LookupRequest, ProviderError as ProviderFailure};

use crate::engine::{CompileCache, Compiled, EPOCH_TICK};
use crate::pool::{Checkout, Instance, Pool, Slots, Warm};
use crate::sandbox::Sandbox;
use crate::wit::{PluginPre, Reply, Unlinkable};

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

/// The engine, the linker with WASI, the epoch ticker, the instance slots, and where compiled
/// components are cached.
pub struct Runtime {
    engine: Engine,
    linker: Linker<Sandbox>,
    cache: CompileCache,
    slots: Slots,
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
        let engine = crate::engine::engine(&sizes)?;
        let linker = crate::sandbox::linker(&engine)?;
        Ok(Runtime { engine, linker, cache: CompileCache::new(cache), slots: Slots::new(sizes) })
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
        self.cache.compile(&self.engine, wasm).map_err(|error| LoadError::Invalid { path: path.to_owned(), message: format!("{error:#}") })
    }

    /// Checks a compiled component's world version, links it, and asks it to describe itself.
    pub async fn link(&self, path: &Path, compiled: Compiled) -> Result<LoadedProvider, LoadError> {
        let Compiled { component, from_cache } = compiled;
        let pre = PluginPre::new(&self.engine, &self.linker, &component).map_err(|unlinkable| match unlinkable {
            Unlinkable::Incompatible(found) => LoadError::Incompatible { path: path.to_owned(), found },
            Unlinkable::Invalid(error) => LoadError::Invalid { path: path.to_owned(), message: format!("{error:#}") },
        })?;
        let mut loaded = LoadedProvider { pre, descriptor: None, from_cache, pool: self.slots.pool() };
        let describe = |mut instance: Instance| async move {
            let described = instance.plugin.describe(&mut instance.store).await?;
            Ok((described, instance))
        };
        // Describing needs no asset and opens nothing: its instance is not kept.
        let described = loaded.run(self, &[], ProviderLimits::default(), Reuse::Never, describe, |_| 0).await.map_err(|error| match error {
            CallError::Runtime { failure, detail } => LoadError::Describe { path: path.to_owned(), failure, detail },
            CallError::Provider(failure) => LoadError::Describe { path: path.to_owned(), failure: RuntimeFailure::Trap, detail: format!("{failure:?}") },
        })?;
        loaded.descriptor = Some(described.map_err(|message| LoadError::Invalid { path: path.to_owned(), message })?);
        Ok(loaded)
    }
}

/// A component, checked and linked, with its warm instances.
pub struct LoadedProvider {
    pre: PluginPre<Sandbox>,
    descriptor: Option<Descriptor>,
    from_cache: bool,
    /// Its idle instances; never another provider's.
    pool: Arc<Pool>,
}

/// Whether a call's instance may be taken from the pool and kept after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reuse {
    /// A lookup or a query: warm when it can be.
    Warm,
    /// Describing: a fresh instance, dropped after.
    Never,
}

/// The instance a call runs on: an idle one, or a store to instantiate in.
enum Ready {
    Warm(Instance),
    Cold(wasmtime::Store<Sandbox>),
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
        let call = |mut instance: Instance| async move {
            let reply = instance.plugin.lookup(&mut instance.store, request).await?;
            Ok((reply, instance))
        };
        let reply = self.run(runtime, assets, limits, Reuse::Warm, call, Reply::output_bytes).await?;
        reply.into_answer().map_err(CallError::Provider)
    }

    /// Runs `request` with `assets` (asset id, host folder) mounted read-only.
    pub async fn query(
        &self,
        runtime: &Runtime,
        assets: &[(String, PathBuf)],
        limits: ProviderLimits,
        request: &KnowledgeRequest,
    ) -> Result<Knowledge, CallError> {
        let call = |mut instance: Instance| async move {
            let reply = instance.plugin.query(&mut instance.store, request).await?;
            Ok((reply, instance))
        };
        let reply = self.run(runtime, assets, limits, Reuse::Warm, call, Reply::output_bytes).await?;
        reply.into_answer().map_err(CallError::Provider)
    }

    /// Runs `call` within `limits` on an idle instance fit for these mounts, or on a fresh one in
    /// a fresh sandbox; `size` is the answer's output size. The instance is kept for a later call
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
        // The slot is declared before the store, so dropped after it: free only once the instance is gone.
        let (slot, ready, fit, watch) = match self.pool.checkout(assets, limits.memory_bytes, reuse == Reuse::Warm) {
            Checkout::Warm(warm) => {
                let (slot, instance, fit, watch) = warm.into_parts();
                watch.clear_stderr();
                (slot, Ready::Warm(instance), Some(fit), watch)
            }
            Checkout::Fresh(fit) => {
                let slot = runtime.slots.take().await;
                let (store, watch) = Sandbox::store(&runtime.engine, assets, limits.memory_bytes)
                    .map_err(|detail| CallError::Runtime { failure: RuntimeFailure::Mount, detail })?;
                (slot, Ready::Cold(store), fit, watch)
            }
        };
        let ticks = (limits.deadline.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
        let failed = |error: wasmtime::Error| {
            let failure = if watch.memory_exceeded() {
                RuntimeFailure::MemoryLimit
            } else if matches!(error.downcast_ref::<wasmtime::Trap>(), Some(wasmtime::Trap::Interrupt)) {
                RuntimeFailure::Timeout
            } else {
                RuntimeFailure::Trap
            };
            let said = watch.stderr();
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
                    let plugin = self.pre.instantiate(&mut store).await?;
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
        match fit {
            Some(fit) if !watch.memory_exceeded() => self.pool.keep(&runtime.slots, Warm::new(instance, fit, watch, slot)),
            _ => drop(instance),
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_provider_sdk::{Area, Capability};
    use serde_json::json;
    use std::time::Duration;

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
    async fn a_component_from_the_cache_loads_and_describes_itself_as_when_compiled() {
        let Some(wasm) = component("a_component_from_the_cache_loads_and_describes_itself_as_when_compiled", "k2_rocks") else { return };
        let cache = tempfile::tempdir().unwrap();
        let runtime = Runtime::new(Some(cache.path().to_owned()), ProviderPool::default()).unwrap();
        let cold = runtime.load(&wasm).await.unwrap();
        let warm = runtime.load(&wasm).await.unwrap();
        assert_eq!((cold.from_cache(), warm.from_cache()), (false, true));
        assert_eq!(cold.descriptor(), warm.descriptor());
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
