//! The engine provider components are compiled for, and the cache of compiled components.
//!
//! Invariants:
//! - One engine per runtime: Cranelift, the component model, epoch interruption (a thread
//!   advances the epoch every [`EPOCH_TICK`] for as long as the engine lives), and wasmtime's
//!   pooling allocator sized by the settings' `ProviderPool`. A slot whose instance is dropped is
//!   wiped (zeroed) before the next instance gets it, so nothing of one instance reaches another.
//! - The cache (when the runtime is given a folder) holds
//!   `<sha256 of the wasm>-<engine compatibility hash>.cwasm`, with the sha256 of the compiled
//!   bytes written beside it last. Only a file whose bytes match that sum is deserialized, so
//!   only bytes this server serialized ever are (the one `unsafe` outside `georef::ffi`); a file
//!   that does not match is a miss, compiled and written again.
//! - A cache that cannot be read or written is only slower, never an error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use geomap_model::settings::ProviderPool;

/// How often the epoch advances: the grain of every call's deadline.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// An engine for provider components with `sizes`' instance slots, and the thread that advances
/// its epoch for as long as it lives.
pub(crate) fn engine(sizes: &ProviderPool) -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config.wasm_component_model(true).epoch_interruption(true).allocation_strategy(instance_pool(sizes));
    let engine = Engine::new(&config)?;
    let ticking = engine.weak();
    std::thread::Builder::new().name("provider-epochs".to_owned()).spawn(move || {
        while let Some(engine) = ticking.upgrade() {
            engine.increment_epoch();
            drop(engine);
            std::thread::sleep(EPOCH_TICK);
        }
    })?;
    Ok(engine)
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

/// A compiled component, not yet checked or linked.
pub struct Compiled {
    pub(crate) component: Component,
    pub(crate) from_cache: bool,
}

/// Where compiled components are cached, if anywhere (a folder only the server writes).
pub(crate) struct CompileCache {
    folder: Option<PathBuf>,
}

impl CompileCache {
    /// A cache in `folder`, or none.
    pub(crate) fn new(folder: Option<PathBuf>) -> CompileCache {
        CompileCache { folder }
    }

    /// The cache file of `wasm` for `engine`: `<sha256 of the wasm>-<engine compatibility hash>.cwasm`.
    fn file(&self, engine: &Engine, wasm: &[u8]) -> Option<PathBuf> {
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
        let folder = self.folder.as_ref()?;
        let mut hash = Sha(sha2::Sha256::new());
        std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut hash);
        let engine = geomap_model::lowercase_hex(&hash.0.finalize()[..12]);
        let wasm = geomap_model::lowercase_hex(&sha2::Sha256::digest(wasm));
        Some(folder.join(format!("{wasm}-{engine}.cwasm")))
    }

    /// The component for `wasm` on `engine`: from the cache when a file this server wrote is
    /// there and intact (its sha256 matches the one recorded beside it), else compiled and
    /// cached. A bad or missing cache file is a miss, never an error. CPU-bound.
    pub(crate) fn compile(&self, engine: &Engine, wasm: &[u8]) -> wasmtime::Result<Compiled> {
        use sha2::Digest;
        let Some(file) = self.file(engine, wasm) else { return Ok(Compiled { component: Component::new(engine, wasm)?, from_cache: false }) };
        let recorded = file.with_extension("cwasm.sha256");
        if let (Ok(compiled), Ok(sum)) = (std::fs::read(&file), std::fs::read_to_string(&recorded))
            && geomap_model::lowercase_hex(&sha2::Sha256::digest(&compiled)) == sum.trim()
        {
            // SAFETY: these bytes are exactly what `Component::serialize` produced in this
            // server's cache folder (their sha256 matches the one written after them), for an
            // engine with the same compatibility hash (it is in the file name).
            if let Ok(component) = unsafe { Component::deserialize(engine, &compiled) } {
                return Ok(Compiled { component, from_cache: true });
            }
        }
        let component = Component::new(engine, wasm)?;
        if let Ok(compiled) = component.serialize() {
            let _ = write_cache(&file, &recorded, &compiled); // a cache that cannot be written is only slower
        }
        Ok(Compiled { component, from_cache: false })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiled_component_is_cached_and_a_damaged_cache_file_is_a_miss() {
        let Some(folder) = geomap_model::testing::components("a_compiled_component_is_cached_and_a_damaged_cache_file_is_a_miss", &["k2_rocks"]) else {
            return;
        };
        let wasm = std::fs::read(folder.join("k2_rocks.wasm")).unwrap();
        let engine = engine(&ProviderPool { instance_slots: 2, ..ProviderPool::default() }).unwrap();
        let folder = tempfile::tempdir().unwrap();
        let cache = CompileCache::new(Some(folder.path().to_owned()));
        let cold = cache.compile(&engine, &wasm).unwrap();
        let warm = cache.compile(&engine, &wasm).unwrap();
        assert_eq!((cold.from_cache, warm.from_cache), (false, true));
        let exports = |compiled: &Compiled| compiled.component.component_type().exports(&engine).map(|(name, _)| name.to_owned()).collect::<Vec<_>>();
        assert_eq!(exports(&cold), exports(&warm), "the same component");
        let cached: Vec<PathBuf> =
            std::fs::read_dir(folder.path()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "cwasm")).collect();
        assert_eq!(cached.len(), 1);
        let mut bytes = std::fs::read(&cached[0]).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&cached[0], &bytes).unwrap();
        assert!(!cache.compile(&engine, &wasm).unwrap().from_cache, "a changed cache file is never deserialized");
        assert!(cache.compile(&engine, &wasm).unwrap().from_cache, "and it was written again");
        assert!(!CompileCache::new(None).compile(&engine, &wasm).unwrap().from_cache, "no folder, no cache");
    }
}
