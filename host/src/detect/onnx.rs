//! ONNX Runtime through `ort` (`load-dynamic`): the library is loaded only
//! from the path the caller gives (the installed runtime asset), never from
//! `ORT_DYLIB_PATH` or the system's library path; models are checked against
//! YOLOv10's contract at load and run from a small session pool.
//!
//! Invariant: nothing here touches `ort` before [`load_runtime`] succeeded, so
//! `ort`'s own fallback search for a library can never run.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::session::Session;
use ort::value::Tensor;

use super::postprocess::MAX_DETECTIONS;

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
    /// A model file does not load or does not fit YOLOv10's contract.
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

/// A YOLOv10 detector: its input side and classes, and a pool of sessions
/// (`Session::run` needs exclusive access; a session is held only while it runs).
pub struct Model {
    path: PathBuf,
    environment: &'static ort::environment::Environment,
    /// The input's side in pixels (the `S` of `[1, 3, S, S]`; 640 when the model leaves it open).
    pub size: u32,
    input: String,
    idle: Mutex<Vec<Session>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model").field("path", &self.path).field("size", &self.size).finish()
    }
}

fn session(environment: &ort::environment::Environment, path: &Path) -> Result<Session, OnnxError> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    Session::builder(environment)
        .and_then(|builder| Ok(builder.with_intra_threads(threads)?))
        .and_then(|mut builder| builder.commit_from_file(path))
        .map_err(|error| OnnxError::Model(format!("the model does not load: {error}")))
}

impl Model {
    /// Loads the model at `path` and checks it takes `images` `[1, 3, S, S]` and gives `[1, 300, 6]`.
    pub fn load(environment: &'static ort::environment::Environment, path: &Path) -> Result<Model, OnnxError> {
        let first = session(environment, path)?;
        let shape = |outlet: Option<&ort::value::Outlet>| outlet.and_then(|o| o.dtype().tensor_shape()).map(|s| s.to_vec());
        let input = shape(first.inputs().first());
        let output = shape(first.outputs().first());
        let open = |dim: i64| dim <= 0;
        let size = match input.as_deref() {
            Some([1, 3, h, w]) if h == w && *h > 0 => *h as u32,
            Some([1, 3, h, w]) if open(*h) && open(*w) => 640,
            other => return Err(OnnxError::Model(format!("its input is {other:?}, not YOLOv10's [1, 3, S, S]"))),
        };
        match output.as_deref() {
            Some([1, rows, 6]) if *rows == MAX_DETECTIONS as i64 || open(*rows) => {}
            other => return Err(OnnxError::Model(format!("its output is {other:?}, not YOLOv10's [1, 300, 6] (x1, y1, x2, y2, score, class)"))),
        }
        let input = first.inputs()[0].name().to_owned();
        Ok(Model { path: path.to_owned(), environment, size, input, idle: Mutex::new(vec![first]) })
    }

    /// Runs one letterboxed image (`[1, 3, size, size]`, RGB scaled to 0–1) and returns its rows.
    pub fn run(&self, pixels: Vec<f32>) -> Result<Vec<[f32; 6]>, OnnxError> {
        let idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
        let mut session = match idle {
            Some(session) => session,
            None => session(self.environment, &self.path)?,
        };
        let side = self.size as usize;
        let rows = Tensor::from_array(([1_usize, 3, side, side], pixels)).map_err(|error| OnnxError::Run(error.to_string())).and_then(|tensor| {
            let outputs = session.run(ort::inputs![self.input.as_str() => tensor]).map_err(|error| OnnxError::Run(error.to_string()))?;
            let (_, values) = outputs[0].try_extract_tensor::<f32>().map_err(|error| OnnxError::Run(error.to_string()))?;
            Ok(values.chunks_exact(6).map(|row| [row[0], row[1], row[2], row[3], row[4], row[5]]).collect::<Vec<_>>())
        });
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(session);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_libraries_are_read_from_the_loader_message() {
        let detail = "failed to load from `/srv/lib/libonnxruntime.so.1.32.0`: libgomp.so.1: cannot open shared object file: No such file or directory";
        assert_eq!(missing_libraries(detail), ["libgomp.so.1"]);
        assert!(missing_libraries("failed to load: invalid ELF header").is_empty());
    }
}
