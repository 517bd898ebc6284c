//! The MCP edge: the rmcp server, the tool inventory, the error adapter and
//! the renderer of error results.
//!
//! Invariants: every `tools/call` gets a fresh trace ID, runs inside
//! [`trace::run_call`] (so panics are caught), ends in exactly one
//! `event=tool_call` log line, and fails only through [`adapter::envelope_for`]
//! and [`error_result::error_result`] (or [`error_result::protocol_error`] for
//! a tool that is not offered).

pub mod adapter;
pub mod arguments;
pub mod calls;
pub mod consent;
pub mod error_result;
pub mod inventory;
pub mod progress;
pub mod resources;
pub mod tools;
pub mod uris;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult, Implementation, InitializeResult, InputRequiredResult,
    JsonObject, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    Resource, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Serialize;
use serde_json::Value;
use sha2::Digest;

use geomap_assets::{Catalog, OverrideError};
use geomap_model::errors::{Envelope, ErrorCode};
use geomap_model::settings::Settings;
use geomap_model::trace::{self, TraceId};
use geomap_providers::ProviderSet;
use geomap_store::registry::{Registry, RegistryError};
use geomap_store::roots::MapRoots;

use adapter::ToolError;
use arguments::{ArgumentError, ArgumentProblem};
use consent::ConsentChannel;
use geomap_model::errors::failure::FailedCall;
use inventory::{Inventory, ToolName, ToolSpec};
use progress::ProgressSink;
use resources::{artifact_resource, map_resource};
use tokio_util::sync::CancellationToken;
use tools::preparation::{FailedAsset, PreparationReport, Prepared};
use tools::prepare_detectors::{self, PrepareDetectorsResult};
use tools::prepare_knowledge::{self, PrepareKnowledgeResult};
use tools::{capabilities, describe_map, extract_units, georeference, lookup, process_image, query_knowledge, read_text, register_map, unit_at};

/// How long a call cancelled by a stopping server gets to reach a stage boundary and clean up.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The server's name on the wire.
pub const SERVER_NAME: &str = "stratigraphic-amenity";
/// The server's version.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What the server tells agents when they connect: the agent guide in brief.
pub const INSTRUCTIONS: &str = "Stratigraphic Amenity works through scanned geologic maps. \
Start with geomap_capabilities, then geomap_register_map a scan from an allowed map root and use its map_id. \
A scan with coordinate labels around its frame is georeferenced from them with geomap_georeference {map_id, from: \"labels\"} \
(too_few_labels: pass crs with bounds or control_points, or ask the user). \
Look map terms up with geomap_lookup; ask about a georeferenced map's area with geomap_query_knowledge. \
Every failed call returns a geomap-error/v1 envelope: branch on `code`, follow `recovery_hints` in order, \
and keep `trace_id` (the operator finds the failure in the server log under it). \
Codes for the agent (invalid_arguments, too_few_labels, artifact_not_found, unknown_tool, unsupported_media, oversize_image) you can fix yourself; \
ask the user before anything is downloaded (geomap_prepare_knowledge downloads: tell them the size it states); hand operator codes (path_not_allowed, registry_corrupt, internal_error, ...) \
to the operator with the trace_id. Retry only internal_error, once, and only when the tool is idempotent (retryable: true).";

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// A configured map root cannot be opened.
    #[error("map root {} cannot be opened ({source}); fix GEOMAP_MAP_ROOTS or create the folder", path.display())]
    MapRoot { path: PathBuf, source: std::io::Error },
    /// The registry cannot be used.
    #[error("{0}")]
    Registry(#[from] RegistryError),
    /// The config file's asset overrides name nothing approved, or pin badly.
    #[error("bad setting: {0}")]
    Assets(#[from] OverrideError),
}

/// Everything a running server shares between calls.
#[derive(Debug)]
pub struct ServerState {
    /// Settings in force.
    pub settings: Settings,
    /// Allowed map roots, opened.
    pub roots: MapRoots,
    /// The registry.
    pub registry: Registry,
    /// The approved assets, with the operator's overrides.
    pub catalog: Catalog,
    /// Offered tools.
    pub inventory: Inventory,
    /// The providers, discovered and loaded at first use (see [`ServerState::providers`]).
    providers: tokio::sync::OnceCell<ProviderSet>,
    /// The layout detectors, loaded at first use and again when their weights change.
    pub detectors: std::sync::Mutex<Option<Arc<geomap_vision::detect::Detectors>>>,
    /// The OCR reader, loaded at first use and again when its models change, with the model files it was loaded from.
    pub reader: std::sync::Mutex<Option<(geomap_vision::models::ModelFiles, Arc<geomap_vision::ocr::reader::Reader>)>>,
    /// Calls running now.
    pub calls: calls::InFlight,
    /// The slots heavy calls share (`GEOMAP_MAX_HEAVY_CALLS`).
    pub heavy: calls::HeavySlots,
    /// Registered scans decoded once into tiles, read by window.
    pub pixels: geomap_vision::image::store::PixelStore,
    /// Cancelled when a stopping server's grace period is over: calls still running end as cancelled.
    pub stopping: CancellationToken,
    /// Calls that may have written something, counted as each ends (what cached answers are checked against).
    pub changes: std::sync::atomic::AtomicU64,
    /// The last answer of `geomap_capabilities`, reused while nothing it depends on changed.
    pub answers: tools::capabilities::Answers,
}

impl ServerState {
    /// Opens the data root, registry and map roots (creating the default map root).
    pub fn start(settings: Settings) -> Result<ServerState, StartupError> {
        let catalog = Catalog::for_settings(&settings)?;
        // Model threads share the operator's budget across calls (a second server state in one process keeps the first's).
        geomap_vision::models::onnx::set_worker_threads(settings.worker_threads);
        let registry = Registry::open(&settings.data_root, settings.registry_url.as_deref())?;
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
        let inventory = Inventory::new(&settings, &catalog);
        Ok(ServerState {
            roots,
            registry,
            catalog,
            inventory,
            providers: tokio::sync::OnceCell::new(),
            detectors: Default::default(),
            reader: Default::default(),
            calls: calls::InFlight::default(),
            heavy: calls::HeavySlots::new(settings.max_heavy_calls),
            pixels: geomap_vision::image::store::PixelStore::new(&settings.artifact_root, settings.pixel_cache),
            stopping: CancellationToken::new(),
            changes: Default::default(),
            answers: Default::default(),
            settings,
        })
    }

    /// The providers if a call has loaded them already.
    pub fn loaded_providers(&self) -> Option<&ProviderSet> {
        self.providers.get()
    }

    /// The providers: discovered, and the enabled ones compiled (or taken
    /// from the compile cache) and described, the first time a call needs them,
    /// so start-up never waits for the compiler.
    pub async fn providers(&self) -> &ProviderSet {
        self.providers.get_or_init(|| ProviderSet::load(&self.settings)).await
    }
}

/// An opaque name for one TCP connection, which the HTTP transport puts on each request, for the
/// call's log line when the protocol era has no MCP session.
#[derive(Debug, Clone)]
pub struct Connection(pub String);

/// The rmcp server handler.
#[derive(Debug, Clone)]
pub struct GeomapServer {
    state: Arc<ServerState>,
}

/// What a call brings from its request besides its arguments.
pub struct CallContext {
    /// Where progress goes, when the client sent a progress token.
    pub progress: Option<ProgressSink>,
    /// How the user can be asked.
    pub consent: ConsentChannel,
    /// Cancelled when the client cancels the request.
    pub cancel: CancellationToken,
    /// An opaque name for the client's HTTP session (or connection), for the log line; `None` over stdio.
    pub session: Option<String>,
}

impl CallContext {
    /// A call with no progress token, no way to ask the user, and no cancellation.
    fn bare() -> CallContext {
        CallContext { progress: None, consent: ConsentChannel::Unavailable, cancel: CancellationToken::new(), session: None }
    }
}

/// How a handler ended, when it did not fail.
enum Dispatched {
    /// A result.
    Output(ToolOutput),
    /// The client must ask its user and call again (2026-07-28).
    InputRequired(InputRequiredResult),
}

/// A successful tool's structured result and the resources it links.
struct ToolOutput {
    structured: Value,
    /// The text block, when it was made beforehand (a kept answer); otherwise `structured` as compact JSON.
    text: Option<String>,
    links: Vec<Resource>,
}

impl ToolOutput {
    fn new(result: &impl Serialize, links: Vec<Resource>) -> ToolOutput {
        ToolOutput { structured: serde_json::to_value(result).expect("tool results always serialize"), text: None, links }
    }

    fn into_result(self) -> CallToolResult {
        let text = self.text.unwrap_or_else(|| serde_json::to_string(&self.structured).expect("JSON values always serialize"));
        let mut content = vec![ContentBlock::text(text)];
        content.extend(self.links.into_iter().map(ContentBlock::resource_link));
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(self.structured);
        result
    }
}

impl GeomapServer {
    /// A server over `state`.
    pub fn new(state: ServerState) -> GeomapServer {
        GeomapServer { state: Arc::new(state) }
    }

    /// What the server shares between calls.
    pub fn state(&self) -> &Arc<ServerState> {
        &self.state
    }

    async fn dispatch(&self, spec: &ToolSpec, arguments: Option<JsonObject>, call: CallContext) -> Result<Dispatched, ToolError> {
        let name = spec.name;
        #[cfg(feature = "fault-injection")]
        if std::env::var("GEOMAP_FAULT_PANIC_TOOL").is_ok_and(|tool| tool == name.as_str()) {
            panic!("fault injection: {} panics on purpose", name.as_str());
        }
        let state = Arc::clone(&self.state);
        let _slot = match spec.heavy() {
            true => Some(state.heavy.take(call.progress.as_ref(), &call.cancel).await.map_err(|_| ToolError::Cancelled)?),
            false => None,
        };
        #[cfg(feature = "fault-injection")]
        if let Some(millis) = std::env::var("GEOMAP_FAULT_SLOW_TOOL").ok().and_then(|slow| slow.strip_prefix(&format!("{}:", name.as_str()))?.parse().ok()) {
            tokio::time::sleep(std::time::Duration::from_millis(millis)).await; // holding its slot, as a long call would
        }
        let progress = call.progress;
        let output = match name {
            ToolName::Capabilities => {
                let _: capabilities::CapabilitiesArgs = arguments::parse(arguments)?;
                let answer = capabilities::capabilities(state).await;
                Ok(ToolOutput { structured: answer.structured.clone(), text: Some(answer.text.clone()), links: Vec::new() })
            }
            ToolName::RegisterMap => {
                let report = register_map::register_map(state, arguments::parse(arguments)?).await?;
                Ok(ToolOutput::new(&report, vec![map_resource(&report)]))
            }
            ToolName::DescribeMap => {
                let args: describe_map::DescribeMapArgs = arguments::parse(arguments)?;
                let report = describe_map::describe_map(state, args.map_id).await?;
                Ok(ToolOutput::new(&report, vec![map_resource(&report)]))
            }
            ToolName::Georeference => {
                let report = georeference::georeference(state, arguments::parse(arguments)?, progress, call.cancel).await?;
                let links = report.revision.artifacts.iter().map(|a| artifact_resource(&report.map_id, &report.revision.revision_id, a)).collect();
                Ok(ToolOutput::new(&report, links))
            }
            ToolName::Lookup => Ok(ToolOutput::new(&lookup::lookup(state, arguments::parse(arguments)?).await?, Vec::new())),
            ToolName::QueryKnowledge => {
                let bundle = query_knowledge::query_knowledge(state, arguments::parse(arguments)?).await?;
                let link = resources::bundle_resource(&bundle.bundle_id);
                Ok(ToolOutput::new(&bundle, vec![link]))
            }
            ToolName::ProcessImage => {
                let layout = process_image::process_image(state, arguments::parse(arguments)?, progress, call.cancel).await?;
                let mut links = vec![resources::layout_resource(&layout.resource_uri, "application/json")];
                let pictures = layout.preview_uri.iter().chain(layout.components.iter().filter_map(|component| component.crop_uri.as_ref()));
                links.extend(pictures.map(|uri| resources::layout_resource(uri, "image/png")));
                Ok(ToolOutput::new(&layout, links))
            }
            ToolName::UnitAt => {
                let answer = unit_at::unit_at(state, arguments::parse(arguments)?).await?;
                Ok(ToolOutput::new(&answer, Vec::new()))
            }
            ToolName::ExtractUnits => {
                let extraction = extract_units::extract_units(state, arguments::parse(arguments)?, progress, call.cancel).await?;
                let links = vec![
                    resources::layout_resource(&extraction.resource_uri, "application/json"),
                    resources::layout_resource(&extraction.geopackage_uri, resources::GEOPACKAGE_MEDIA_TYPE),
                    resources::layout_resource(&extraction.raster_uri, resources::GEOTIFF_MEDIA_TYPE),
                    resources::layout_resource(&extraction.preview_uri, "image/png"),
                ];
                Ok(ToolOutput::new(&extraction, links))
            }
            ToolName::ReadText => {
                let reading = read_text::read_text(state, arguments::parse(arguments)?, progress, call.cancel).await?;
                let link = resources::layout_resource(&reading.resource_uri, "application/json");
                Ok(ToolOutput::new(&reading, vec![link]))
            }
            ToolName::PrepareDetectors => {
                let args = arguments::parse(arguments)?;
                match prepare_detectors::prepare_detectors(Arc::clone(&state), args, call.consent, progress, call.cancel).await? {
                    Prepared::AskFirst(input_required) => return Ok(Dispatched::InputRequired(input_required)),
                    Prepared::Done { consent, installed, already_present, failed, download_bytes } => {
                        let failed = self.failed_assets(failed, spec);
                        let (missing_requirements, detectors_ready) = prepare_detectors::outstanding(&state).await;
                        let summary =
                            prepare_detectors::summary(consent, installed.len(), failed.len(), download_bytes, &missing_requirements, detectors_ready);
                        let report = PreparationReport { consent, installed, already_present, failed, download_bytes };
                        let result = PrepareDetectorsResult { report, detectors_ready, missing_requirements, summary };
                        Ok(ToolOutput::new(&result, Vec::new()))
                    }
                }
            }
            ToolName::PrepareKnowledge => {
                let args = arguments::parse(arguments)?;
                match prepare_knowledge::prepare_knowledge(state, args, call.consent, progress, call.cancel).await? {
                    Prepared::AskFirst(input_required) => return Ok(Dispatched::InputRequired(input_required)),
                    Prepared::Done { consent, installed, already_present, failed, download_bytes } => {
                        let failed = self.failed_assets(failed, spec);
                        let ready_providers = prepare_knowledge::providers_made_ready(&self.state, &installed).await;
                        let summary =
                            prepare_knowledge::summary(consent, installed.len(), already_present.len(), failed.len(), download_bytes, &ready_providers);
                        let report = PreparationReport { consent, installed, already_present, failed, download_bytes };
                        let result = PrepareKnowledgeResult { report, ready_providers, summary };
                        Ok(ToolOutput::new(&result, Vec::new()))
                    }
                }
            }
        };
        output.map(Dispatched::Output)
    }

    /// One tool call from start to its log line: `arguments` is `Err` when the
    /// request already failed to parse.
    async fn run_tool_call(&self, name: &str, arguments: Result<Option<JsonObject>, ArgumentError>, call: CallContext) -> Result<CallToolResponse, ErrorData> {
        let _running = self.state.calls.enter();
        let trace_id = TraceId::random();
        let started = Instant::now();
        let session = call.session.clone();
        let Some(spec) = self.state.inventory.find(name) else {
            let envelope = self.unknown_tool(name, &trace_id);
            crate::log::log_tool_call(name, ErrorCode::UnknownTool.as_str(), started.elapsed(), &trace_id, session.as_deref(), None);
            return Err(error_result::protocol_error(&envelope));
        };
        let outcome = match arguments {
            Ok(arguments) => {
                let cancel = call.cancel.clone();
                let run = trace::run_call(trace_id.clone(), self.dispatch(spec, arguments, call));
                tokio::pin!(run);
                tokio::select! {
                    outcome = &mut run => outcome,
                    () = self.state.stopping.cancelled() => {
                        // The server is stopping: the call stops at its next stage boundary, cleaning up, or is dropped.
                        cancel.cancel();
                        tokio::time::timeout(STOP_WAIT, &mut run).await.unwrap_or(Ok(Err(ToolError::Cancelled)))
                    }
                }
            }
            Err(malformed) => Ok(Err(ToolError::InvalidArguments(malformed))),
        };
        let (result, label, detail): (CallToolResponse, &str, _) = match outcome {
            Ok(Ok(Dispatched::Output(output))) => (output.into_result().into(), "ok", None),
            Ok(Ok(Dispatched::InputRequired(input_required))) => (input_required.into(), "input_required", None),
            Ok(Err(error)) => {
                let envelope = self.envelope(&error, spec, &trace_id);
                let label = if error.is_cancellation() { "cancelled" } else { envelope.code.as_str() };
                (error_result::error_result(&envelope).into(), label, operator_detail(&error, &envelope))
            }
            Err(trace::PanicReport(report)) => {
                let envelope = self.envelope(&ToolError::Panic, spec, &trace_id);
                (error_result::error_result(&envelope).into(), envelope.code.as_str(), Some(report))
            }
        };
        if spec.may_write() {
            self.state.changes.fetch_add(1, std::sync::atomic::Ordering::Release);
        }
        crate::log::log_tool_call(spec.name.as_str(), label, started.elapsed(), &trace_id, session.as_deref(), detail.as_deref());
        Ok(result)
    }

    /// Each asset a preparation could not install, with the code and message its envelope would have.
    fn failed_assets(&self, failed: Vec<geomap_assets::AssetError>, spec: &ToolSpec) -> Vec<FailedAsset> {
        let trace_id = trace::current_trace_id().expect("dispatch runs inside a call's trace scope");
        failed
            .into_iter()
            .map(|error| {
                let asset = error.asset().to_owned();
                let envelope = self.envelope(&ToolError::Asset(error), spec, &trace_id);
                let reason = envelope.details.as_ref().and_then(|d| d.get("reason")).and_then(Value::as_str).map(str::to_owned);
                FailedAsset { asset, code: envelope.code, reason, message: envelope.message }
            })
            .collect()
    }

    fn envelope(&self, error: &ToolError, spec: &ToolSpec, trace_id: &TraceId) -> Envelope {
        let call = FailedCall { tool: spec.name.as_str(), idempotent: spec.idempotent(), trace_id, settings: &self.state.settings };
        adapter::envelope_for(error, &call)
    }

    fn unknown_tool(&self, name: &str, trace_id: &TraceId) -> Envelope {
        let offered: Vec<&str> = self.state.inventory.specs().iter().map(|spec| spec.name.as_str()).collect();
        adapter::unknown_tool(name, &offered, self.state.inventory.withheld(name), trace_id, &self.state.settings)
    }
}

/// An opaque name for the HTTP client a request came from: a digest of its MCP session ID, or the
/// connection's name when its protocol era has no sessions. `None` over stdio.
fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    match parts.headers.get("mcp-session-id") {
        Some(id) => Some(format!("s{}", &geomap_model::lowercase_hex(&sha2::Sha256::digest(id.as_bytes()))[..12])),
        None => parts.extensions.get::<Connection>().map(|connection| connection.0.clone()),
    }
}

/// Operator-facing failures get their domain error logged above the call's line.
/// A cancellation is the client's choice, not a failure: its line says `outcome=cancelled` and nothing more.
fn operator_detail(error: &ToolError, envelope: &Envelope) -> Option<String> {
    let for_operator = matches!(envelope.code, ErrorCode::InternalError | ErrorCode::RegistryCorrupt | ErrorCode::MissingSystemDependency);
    (for_operator && !error.is_cancellation()).then(|| error.to_string())
}

impl ServerHandler for GeomapServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new(SERVER_NAME, SERVER_VERSION).with_title("Stratigraphic Amenity"))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.state.inventory.specs().iter().map(|spec| spec.tool.clone()).collect()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let progress = context.meta.get_progress_token().map(|token| ProgressSink { peer: context.peer.clone(), token });
        let consent = ConsentChannel::of(&context, request.input_responses.as_ref());
        let call = CallContext { progress, consent, cancel: context.ct.clone(), session: session_of(&context) };
        self.run_tool_call(&request.name, Ok(request.arguments), call).await
    }

    /// rmcp hands a `tools/call` whose params do not fit `CallToolRequestParams`
    /// (arguments that are not an object, a name that is not a string) to this
    /// hook as a custom request; it ends in an envelope like any other failure.
    async fn on_custom_request(&self, request: CustomRequest, _context: RequestContext<RoleServer>) -> Result<CustomResult, ErrorData> {
        if request.method != "tools/call" {
            return Err(ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, request.method, None));
        }
        let params = request.params.unwrap_or_default();
        let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
        let malformed =
            ArgumentError { field: "/".to_owned(), problem: ArgumentProblem::WrongValue, expected: "an object holding the tool's arguments".to_owned() };
        let CallToolResponse::Complete(mut result) = self.run_tool_call(name, Err(malformed), CallContext::bare()).await? else {
            unreachable!("a call whose arguments failed to parse always completes with an error result")
        };
        result.result_type = None; // absent means complete, in every protocol era
        Ok(CustomResult(serde_json::to_value(result).expect("tool results always serialize")))
    }

    async fn list_resources(&self, request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
        self.list(request.and_then(|request| request.cursor)).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, _context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData> {
        self.read(request.uri).await.map(Into::into)
    }
}
