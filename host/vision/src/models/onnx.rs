//! ONNX Runtime through `ort` (`load-dynamic`), shared by layout detection and
//! reading text: the library is loaded only from the path the caller gives (the
//! installed runtime asset), never from `ORT_DYLIB_PATH` or the system's
//! library path; each model runs from a small session pool.
//!
//! Invariants: nothing here touches `ort` before [`load_runtime`] succeeded, so
//! `ort`'s own fallback search for a library can never run. Every session runs
//! only while it holds one of the process's worker permits per thread it uses
//! (`GEOMAP_WORKER_THREADS`, shared by every call), so concurrent calls never
//! put more model threads to work than the operator allowed, and a pool never
//! holds more sessions than could run at once.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ort::session::Session;

/// The one runtime this process loaded (`ort` keeps the library for the process's life).
static LOADED: OnceLock<(PathBuf, ort::environment::Environment)> = OnceLock::new();

/// Why the runtime or a model could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OnnxError {
    /// The library did not load; `missing_libraries` names shared libraries the system lacks.
    #[error("the ONNX Runtime library did not load: {detail}")]
    Runtime { detail: String, missing_libraries: Vec<String> },
    /// Another runtime file was loaded earlier in this process (it stays until a restart).
    #[error("ONNX Runtime was already loaded from {} in this process; restart the server to use {}", loaded.display(), wanted.display())]
    AlreadyLoaded { loaded: PathBuf, wanted: PathBuf },
    /// A model file does not load or does not fit what its caller expects.
    #[error("{0}")]
    Model(String),
    /// Inference failed.
    #[error("inference failed: {0}")]
    Run(String),
}

/// Shared libraries a `dlopen` error says are missing (`libgomp.so.1: cannot open shared object file`).
pub fn missing_libraries(detail: &str) -> Vec<String> {
    let mut found: Vec<String> = detail
        .split(|c: char| c.is_whitespace() || c == '`' || c == '\'' || c == '"')
        .filter_map(|word| word.strip_suffix(':'))
        .filter(|word| word.contains(".so") && !word.contains('/'))
        .map(str::to_owned)
        .collect();
    found.dedup();
    if detail.contains("cannot open shared object file") { found } else { Vec::new() }
}

/// Loads the ONNX Runtime library at `library` (once per process).
pub fn load_runtime(library: &Path) -> Result<&'static ort::environment::Environment, OnnxError> {
    if let Some((loaded, environment)) = LOADED.get() {
        return if loaded == library { Ok(environment) } else { Err(OnnxError::AlreadyLoaded { loaded: loaded.clone(), wanted: library.to_owned() }) };
    }
    // A first dlopen only for the loader's message (naming a missing shared library), which
    // ort's error does not keep; ort then opens the same file again.
    // SAFETY: this is the approved runtime asset (or the operator's own copy of it), whose
    // initialisers are ONNX Runtime's; nothing else is ever opened here.
    if let Err(error) = unsafe { libloading::Library::new(library) } {
        let mut detail = format!("cannot load {}: {error}", library.display());
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            detail.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        return Err(OnnxError::Runtime { missing_libraries: missing_libraries(&detail), detail });
    }
    let builder = ort::init_from(library).map_err(|error| OnnxError::Runtime { detail: error.to_string(), missing_libraries: Vec::new() })?;
    let environment = builder
        .with_name("stratigraphic-amenity")
        .with_telemetry(false)
        .build()
        .map_err(|error| OnnxError::Runtime { detail: error.to_string(), missing_libraries: Vec::new() })?;
    let (_, environment) = LOADED.get_or_init(|| (library.to_owned(), environment));
    Ok(environment)
}

/// A model and a pool of its sessions: `Session::run` needs exclusive access,
/// so a session is taken only while it runs and another is made when all are busy.
/// Bounded: a session runs only with its worker permits, so no more exist than
/// could run at once; a session beyond the first that sat unused for
/// `IDLE_SESSION` (five minutes) is dropped the next time the pool is used.
pub struct SessionPool {
    path: PathBuf,
    threads: usize,
    environment: &'static ort::environment::Environment,
    /// Sessions not running, each with when it last finished.
    idle: Mutex<Vec<(Session, Instant)>>,
}

impl std::fmt::Debug for SessionPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionPool").field("path", &self.path).finish()
    }
}

/// The threads model work may use at once, across every call: permits taken per thread a session runs.
struct Workers {
    total: usize,
    free: Mutex<usize>,
    freed: Condvar,
}

static WORKERS: OnceLock<Workers> = OnceLock::new();

fn workers() -> &'static Workers {
    WORKERS.get_or_init(|| {
        let total = std::thread::available_parallelism().map_or(1, usize::from);
        Workers { total, free: Mutex::new(total), freed: Condvar::new() }
    })
}

/// Sets how many threads model work may use at once (`GEOMAP_WORKER_THREADS`), before any model
/// loads; without it, every core. Returns false (and changes nothing) when it was already set or used.
pub fn set_worker_threads(threads: usize) -> bool {
    let threads = threads.max(1);
    WORKERS.set(Workers { total: threads, free: Mutex::new(threads), freed: Condvar::new() }).is_ok()
}

/// The threads model work may use at once.
pub fn cores() -> usize {
    workers().total
}

/// Worker permits held while a session runs; given back when dropped.
struct Permits(usize);

impl Permits {
    /// Waits until `wanted` permits (at most all of them) are free at once, and takes them.
    fn take(wanted: usize) -> Permits {
        let workers = workers();
        let wanted = wanted.clamp(1, workers.total);
        let mut free = workers.free.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while *free < wanted {
            free = workers.freed.wait(free).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *free -= wanted;
        Permits(wanted)
    }
}

impl Drop for Permits {
    fn drop(&mut self) {
        let workers = workers();
        *workers.free.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) += self.0;
        workers.freed.notify_all();
    }
}

/// How long a pool keeps a session nobody used beyond its first.
const IDLE_SESSION: Duration = Duration::from_secs(300);

/// A session on `threads` threads, without ONNX Runtime's memory pattern: the pattern plans one
/// input size's activations and keeps their peak allocated per session, and the readers' inputs
/// change size with every tile and line (with two text detectors running at once on a 10000×8000
/// scan, the server's peak grew by 480 MiB with it, and detection was no faster).
fn session(environment: &ort::environment::Environment, path: &Path, threads: usize) -> Result<Session, OnnxError> {
    Session::builder(environment)
        .and_then(|builder| Ok(builder.with_intra_threads(threads)?))
        .and_then(|builder| Ok(builder.with_memory_pattern(false)?))
        .and_then(|mut builder| builder.commit_from_file(path))
        .map_err(|error| OnnxError::Model(format!("the model does not load: {error}")))
}

impl SessionPool {
    /// Loads the model at `path` (one session, kept in the pool); each session runs on `threads` threads.
    pub fn load(environment: &'static ort::environment::Environment, path: &Path, threads: usize) -> Result<SessionPool, OnnxError> {
        let first = session(environment, path, threads)?;
        Ok(SessionPool { path: path.to_owned(), threads, environment, idle: Mutex::new(vec![(first, Instant::now())]) })
    }

    /// Runs `work` with a session of its own, which goes back to the pool afterwards.
    /// Waits for the session's worker permits first.
    pub fn with<T>(&self, work: impl FnOnce(&mut Session) -> Result<T, OnnxError>) -> Result<T, OnnxError> {
        let _permits = Permits::take(self.threads);
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut kept = 0;
            idle.retain(|(_, finished)| {
                kept += 1;
                kept == 1 || finished.elapsed() < IDLE_SESSION
            });
            idle.pop()
        };
        let mut session = match idle {
            Some((session, _)) => session,
            None => session(self.environment, &self.path, self.threads)?,
        };
        let outcome = work(&mut session);
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((session, Instant::now()));
        outcome
    }
}

/// A tensor's shape as the model declares it (-1 for an open dimension).
pub fn declared_shape(outlet: Option<&ort::value::Outlet>) -> Option<Vec<i64>> {
    outlet.and_then(|o| o.dtype().tensor_shape()).map(|s| s.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_permits_are_shared_and_a_wait_ends_when_they_are_given_back() {
        let all = Permits::take(usize::MAX);
        assert_eq!(all.0, cores(), "a request for more than there are takes them all");
        let (sender, received) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let one = Permits::take(1);
            sender.send(one.0).unwrap();
        });
        assert!(received.recv_timeout(Duration::from_millis(200)).is_err(), "no permit is free while all are held");
        drop(all);
        assert_eq!(received.recv_timeout(Duration::from_secs(5)), Ok(1), "the waiter runs once they are given back");
        waiter.join().unwrap();
        assert_eq!(*workers().free.lock().unwrap(), cores(), "every permit is back");
    }

    #[test]
    fn missing_libraries_are_read_from_the_loader_message() {
        let detail = "failed to load from `/srv/lib/libonnxruntime.so.1.32.0`: libgomp.so.1: cannot open shared object file: No such file or directory";
        assert_eq!(missing_libraries(detail), ["libgomp.so.1"]);
        assert!(missing_libraries("failed to load: invalid ELF header").is_empty());
    }
}
