//! The sandbox a provider instance runs in: its store's host state (WASI, its resource table, the
//! memory limiter), the imports it may link (WASI preview 2, nothing else), and what the host
//! watches of it from outside the store ([`Watch`]: stderr, and whether the limiter refused).
//!
//! Invariants:
//! - No network, no environment, no inherited stdio: the WASI context gets stderr (captured) and
//!   the mounts, nothing else. Each asset folder is preopened read-only at `/assets/<asset-id>/`;
//!   nothing else of the filesystem is reachable (`..` does not leave a preopen).
//! - A folder that cannot be opened fails the sandbox's making: the provider never runs without a
//!   mount it was given.
//! - stderr is what one call wrote, at most [`STDERR_BYTES`] of it; the rest is dropped, never
//!   refused (a chatty provider does not fail for it). A warm instance keeps its stream, and the
//!   host clears it before each call.
//! - Memory is bounded by the limiter over the instance's whole memory (what earlier calls left
//!   counts), and the limiter records that it refused growth, so the trap that follows is
//!   reported as `memory_limit`.
//! - The WASI context (preopens, clocks, random) lives as long as the instance; nothing of a
//!   request is kept here.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use wasmtime::component::{Linker, ResourceTable};
use wasmtime::{Engine, ResourceLimiter, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};

use crate::lock;

/// How much of what a provider writes to stderr in one call is kept.
pub(crate) const STDERR_BYTES: usize = 16 << 10;

/// A store's host state: WASI, its resources, and the memory limiter.
pub(crate) struct Sandbox {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// The imports a provider component may link: WASI preview 2, and nothing else.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<Sandbox>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    Ok(linker)
}

impl Sandbox {
    /// A store on `engine` for one instance, with `assets` (asset id, host folder) mounted
    /// read-only and its memory limited to `memory_bytes`, and the watch on it. `Err` says which
    /// asset cannot be mounted.
    pub(crate) fn store(engine: &Engine, assets: &[(String, PathBuf)], memory_bytes: usize) -> Result<(Store<Sandbox>, Watch), String> {
        let watch = Watch { stderr: Stderr::default(), exceeded: Arc::new(AtomicBool::new(false)) };
        let mut wasi = WasiCtx::builder();
        wasi.stderr(watch.stderr.clone()).allow_blocking_current_thread(true);
        for (id, folder) in assets {
            wasi.preopened_dir(folder, format!("/assets/{id}"), FsPerms::ReadOnly).map_err(|error| format!("asset {id} cannot be mounted: {error}"))?;
        }
        let limiter = MemoryLimiter { limit: memory_bytes, exceeded: Arc::clone(&watch.exceeded) };
        let mut store = Store::new(engine, Sandbox { wasi: wasi.build(), table: ResourceTable::new(), limiter });
        store.limiter(|sandbox| &mut sandbox.limiter);
        Ok((store, watch))
    }
}

/// What the host sees of a sandbox from outside its store: the instance's stderr and whether its
/// memory limiter refused growth. It lives as long as the instance.
#[derive(Clone)]
pub(crate) struct Watch {
    stderr: Stderr,
    exceeded: Arc<AtomicBool>,
}

impl Watch {
    /// Forgets what earlier calls wrote to stderr (before a call on a warm instance).
    pub(crate) fn clear_stderr(&self) {
        lock(&self.stderr.0).clear();
    }

    /// What the instance wrote to stderr since it was last cleared, trimmed.
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&lock(&self.stderr.0)).trim().to_owned()
    }

    /// Whether the memory limiter refused growth: the instance is then never kept.
    pub(crate) fn memory_exceeded(&self) -> bool {
        self.exceeded.load(Ordering::Relaxed)
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

/// A provider's stderr: up to [`STDERR_BYTES`] kept, the rest dropped.
#[derive(Clone, Default)]
struct Stderr(Arc<Mutex<Vec<u8>>>);

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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn stderr_keeps_what_fits_drops_the_rest_and_is_cleared_per_call() {
        let watch = Watch { stderr: Stderr::default(), exceeded: Arc::new(AtomicBool::new(false)) };
        let mut stream = watch.stderr.clone();
        stream.write_all(b"  first call  ").await.unwrap();
        assert_eq!(watch.stderr(), "first call");
        watch.clear_stderr();
        stream.write_all(&vec![b'x'; STDERR_BYTES + 100]).await.expect("more than is kept is accepted, not refused");
        assert_eq!(watch.stderr().len(), STDERR_BYTES);
    }

    #[test]
    fn the_limiter_refuses_growth_past_the_whole_memory_limit_and_says_so() {
        let exceeded = Arc::new(AtomicBool::new(false));
        let mut limiter = MemoryLimiter { limit: 40 << 20, exceeded: Arc::clone(&exceeded) };
        assert!(limiter.memory_growing(32 << 20, 40 << 20, None).unwrap(), "up to the limit");
        assert!(!exceeded.load(Ordering::Relaxed));
        assert!(limiter.memory_growing(32 << 20, 48 << 20, None).is_err(), "16 MiB more than the 32 it holds");
        assert!(exceeded.load(Ordering::Relaxed));
    }

    #[test]
    fn a_folder_that_cannot_be_mounted_fails_the_sandbox() {
        let engine = Engine::default();
        let gone = [("k2-rock-knowledge".to_owned(), PathBuf::from("/nonexistent/removed since it was checked"))];
        let Err(problem) = Sandbox::store(&engine, &gone, 1 << 20) else { panic!("mounted a folder that is not there") };
        assert!(problem.starts_with("asset k2-rock-knowledge cannot be mounted"), "{problem}");
        assert!(Sandbox::store(&engine, &[], 1 << 20).is_ok());
    }
}
