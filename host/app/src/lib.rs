//! The use cases of Stratigraphic Amenity, as functions over plain typed
//! requests and results: register and describe a map, georeference it (bounds,
//! control points, or the labels it prints), read its words, find its layout,
//! tell the unit under a point, extract its units as GIS layers, look terms up,
//! ask about its area, and prepare what those need. Every edge calls these: the
//! MCP tools, `batch`, and any later one.
//!
//! Invariants:
//! - No MCP here (no rmcp, no JSON-RPC): requests are Rust values an edge fills
//!   in (serde and schemars derive on them so an edge may read them from JSON
//!   and describe them; nothing here builds JSON to reach another use case).
//! - Failures are typed ([`AppError`]); the one adapter at the edge words them
//!   as envelopes. What a call did without (a provider, a model) becomes a
//!   [`Warning`] worded by that same adapter, which the edge hands in as
//!   [`Describe`].
//! - Blocking work runs on the blocking pool inside the call's trace scope;
//!   long work reports through one [`Progress`] and stops at its next step
//!   once the progress is cancelled, keeping nothing half-written.

pub mod error;
pub mod georeference;
pub mod knowledge;
pub mod layout;
pub mod maps;
#[cfg(test)]
mod models;
pub mod preparation;
mod provenance;
pub mod providers;
mod record;
pub mod registered;
pub mod resources;
pub mod slots;
pub mod status;
pub mod stored;
pub mod structure;
pub mod terms;
#[cfg(test)]
mod testing;
pub mod text;
pub mod units;
pub mod uris;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use geomap_assets::{Catalog, OverrideError};
use geomap_model::errors::failure::FailedCall;
use geomap_model::errors::{Envelope, ErrorCode};
use geomap_model::settings::Settings;
use geomap_model::trace::{self, TraceId};
use geomap_providers::ProviderSet;
use geomap_store::registry::{Registry, RegistryError};
use geomap_store::roots::MapRoots;
use geomap_vision::VisionError;
use geomap_vision::detect::Detectors;
use geomap_vision::image::store::PixelStore;
use geomap_vision::models::ModelFiles;
use geomap_vision::ocr::reader::Reader;

pub use error::{AppError, ArgumentError, ArgumentProblem, MapGone};
pub use geomap_model::progress::Progress;

/// How the edge words a failure as an envelope: the server's one adapter.
pub type Describe = fn(&AppError, &FailedCall<'_>) -> Envelope;

/// Why the application cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// A configured map root cannot be opened.
    #[error("map root {} cannot be opened ({source}); fix GEOMAP_MAP_ROOTS or create the folder", path.display())]
    MapRoot {
        /// The folder.
        path: PathBuf,
        /// Why it cannot be opened.
        source: std::io::Error,
    },
    /// The registry cannot be used.
    #[error("{0}")]
    Registry(#[from] RegistryError),
    /// The config file's asset overrides name nothing approved, or pin badly.
    #[error("bad setting: {0}")]
    Assets(#[from] OverrideError),
}

/// Everything the use cases share between calls: settings, the allowed roots, the registry, the
/// asset catalog, the providers and models once loaded, the pixel store and the heavy-call slots.
pub struct App {
    /// Settings in force.
    pub settings: Settings,
    /// Allowed map roots, opened.
    pub roots: MapRoots,
    /// The registry.
    pub registry: Registry,
    /// The approved assets, with the operator's overrides.
    pub catalog: Catalog,
    /// Registered scans decoded once into tiles, read by window.
    pub pixels: PixelStore,
    /// The slots heavy calls share (`GEOMAP_MAX_HEAVY_CALLS`).
    pub heavy: slots::HeavySlots,
    /// The providers, discovered and loaded at first use (see [`App::providers`]).
    providers: tokio::sync::OnceCell<ProviderSet>,
    /// The layout detectors, loaded at first use and again when their weights change.
    detectors: ModelCache<Detectors>,
    /// The OCR reader, loaded at first use and again when its models change.
    reader: ModelCache<Reader>,
    /// The edge's adapter, for the warnings of calls that succeed without something.
    describe: Describe,
}

impl std::fmt::Debug for App {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("App").field("data_root", &self.settings.data_root).field("registry", &self.registry.location()).finish_non_exhaustive()
    }
}

impl App {
    /// Opens the registry and the map roots (creating the default map root), sweeps what
    /// interrupted work left, and remembers how the edge words failures (`describe`).
    pub fn start(settings: Settings, describe: Describe) -> Result<App, StartupError> {
        let catalog = Catalog::for_settings(&settings)?;
        // Model threads share the operator's budget across calls (a second application in one process keeps the first's).
        geomap_vision::models::onnx::set_worker_threads(settings.worker_threads);
        let registry = Registry::open(&settings.data_root, settings.registry_url.as_deref())?;
        let ocr_models = settings.ocr_models;
        let removed = geomap_store::sweep::sweep(&settings.data_root, &settings.artifact_root);
        if !removed.is_empty() {
            let paths: Vec<String> = removed.iter().map(|path| path.display().to_string()).collect();
            tracing::info!(event = %"sweep", removed = removed.len(), "removed the leftovers of interrupted work: {}", paths.join(", "));
        }
        if !settings.map_roots_configured {
            for root in &settings.map_roots {
                std::fs::create_dir_all(root).map_err(|source| StartupError::MapRoot { path: root.clone(), source })?;
            }
        }
        let roots = MapRoots::open(&settings.map_roots).map_err(|(path, source)| StartupError::MapRoot { path, source })?;
        Ok(App {
            roots,
            registry,
            catalog,
            pixels: PixelStore::new(&settings.artifact_root, settings.pixel_cache),
            heavy: slots::HeavySlots::new(settings.max_heavy_calls),
            providers: tokio::sync::OnceCell::new(),
            detectors: ModelCache::new(&geomap_vision::detect::REQUIREMENTS, Detectors::load),
            reader: ModelCache::new(geomap_vision::ocr::requirements(ocr_models), move |catalog, root| geomap_vision::ocr::load(catalog, root, ocr_models)),
            describe,
            settings,
        })
    }

    /// The providers if a call has loaded them already.
    pub fn loaded_providers(&self) -> Option<&ProviderSet> {
        self.providers.get()
    }

    /// The providers: discovered, and the enabled ones compiled (or taken from the compile cache)
    /// and described, the first time a call needs them, so start-up never waits for the compiler.
    pub async fn providers(&self) -> &ProviderSet {
        self.providers.get_or_init(|| ProviderSet::load(&self.settings)).await
    }

    /// The envelope the edge would give `error` in a call to `tool` (for warnings and per-asset reports).
    pub(crate) fn envelope(&self, error: &AppError, tool: &str) -> Envelope {
        let trace_id = trace::current_trace_id().unwrap_or_else(TraceId::random);
        (self.describe)(error, &FailedCall { tool, idempotent: false, trace_id: &trace_id, settings: &self.settings })
    }

    /// The warning of a call to `tool` that succeeded without `about` (a provider, an asset) because of `error`.
    pub fn warning(&self, error: &AppError, about: &str, tool: &str) -> Warning {
        let envelope = self.envelope(error, tool);
        Warning { about: about.to_owned(), code: envelope.code, reason: reason_of(&envelope), message: envelope.message }
    }
}

/// Models loaded once and kept while their files are unchanged: loaded again after a reinstall, and
/// missing again when an asset was removed since.
struct ModelCache<T> {
    /// What the models need (asset id, what it is), the runtime first.
    requirements: &'static [(&'static str, &'static str)],
    /// How they load from the installed assets.
    load: Box<ModelLoader<T>>,
    /// The models, with the files they were loaded from.
    loaded: Mutex<Option<(ModelFiles, Arc<T>)>>,
}

/// How a [`ModelCache`]'s models load from the installed assets.
type ModelLoader<T> = dyn Fn(&Catalog, &std::path::Path) -> Result<T, VisionError> + Send + Sync;

impl<T> ModelCache<T> {
    fn new(
        requirements: &'static [(&'static str, &'static str)],
        load: impl Fn(&Catalog, &std::path::Path) -> Result<T, VisionError> + Send + Sync + 'static,
    ) -> ModelCache<T> {
        ModelCache { requirements, load: Box::new(load), loaded: Mutex::new(None) }
    }

    /// The models, loaded now when their files changed since (or were never loaded).
    fn get(&self, catalog: &Catalog, data_root: &std::path::Path) -> Result<Arc<T>, VisionError> {
        let files = geomap_vision::models::current_files(catalog, data_root, self.requirements);
        let mut loaded = self.loaded.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, models)) = loaded.as_ref().filter(|(from, _)| *from == files) {
            return Ok(Arc::clone(models));
        }
        *loaded = None;
        let models = Arc::new((self.load)(catalog, data_root)?);
        *loaded = Some((files, Arc::clone(&models)));
        Ok(models)
    }
}

/// `details.reason` of an envelope, when it has one.
pub fn reason_of(envelope: &Envelope) -> Option<String> {
    envelope.details.as_ref().and_then(|details| details.get("reason")).and_then(serde_json::Value::as_str).map(str::to_owned)
}

/// Something a call did without, though it succeeded: a provider, a model.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warning {
    /// What it did without: a provider's name, or an asset's id.
    pub about: String,
    /// The code a call needing it would have failed with.
    pub code: ErrorCode,
    /// `details.reason` of that failure, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened and what to do, in plain words (the failure's message and first hint).
    pub message: String,
}

/// The present moment as a registry records it (RFC 3339, UTC, whole seconds).
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
