//! The MCP edge: the rmcp server, the tool inventory and the renderer of
//! error results, over the application (`geomap_app`) and the one adapter
//! (`crate::adapter`).
//!
//! Invariants: every `tools/call` gets a fresh trace ID, runs inside
//! [`trace::run_call`] (so panics are caught), ends in exactly one
//! `event=tool_call` log line, and fails only through [`adapter::envelope_for`]
//! and [`error_result::error_result`] (or [`error_result::protocol_error`] for
//! a tool that is not offered). Every call's progress goes through one
//! [`Progress`] that `GeomapServer::dispatch` makes, forwards and flushes
//! before the result is sent.

pub mod calls;
pub mod consent;
pub mod error_result;
pub mod inventory;
pub mod progress;
pub mod resources;
pub mod tools;

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
use tokio_util::sync::CancellationToken;

use geomap_app::{App, AppError, ArgumentError, ArgumentProblem, Progress, StartupError};
use geomap_model::errors::failure::FailedCall;
use geomap_model::errors::{Envelope, ErrorCode};
use geomap_model::settings::Settings;
use geomap_model::trace::{self, TraceId};

use crate::adapter;
use consent::ConsentChannel;
use inventory::{Inventory, Offered};
use progress::ProgressSink;
use tools::Call;

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
Every failed call returns a geomap-error/v1 envelope: branch on `code`, follow `recovery_hints` in order \
(when `details.next_call` is there, it is the first hint's exact call: make it as given, asking the user first when its `ask_user` is true), \
and keep `trace_id` (the operator finds the failure in the server log under it). \
Codes for the agent (invalid_arguments, too_few_labels, artifact_not_found, unknown_tool, unsupported_media, oversize_image) you can fix yourself; \
ask the user before anything is downloaded (geomap_prepare_knowledge downloads: tell them the size it states); hand operator codes (path_not_allowed, registry_corrupt, internal_error, ...) \
to the operator with the trace_id. Retry only internal_error, once, and only when the tool is idempotent (retryable: true).";

/// Everything a running server shares between calls: the application, and what only the MCP edge keeps.
#[derive(Debug)]
pub struct ServerState {
    /// The use cases, with the settings, registry, roots and loaded models they share.
    pub app: Arc<App>,
    /// Offered tools.
    pub inventory: Inventory,
    /// Calls running now.
    pub calls: calls::InFlight,
    /// Cancelled when a stopping server's grace period is over: calls still running end as cancelled.
    pub stopping: CancellationToken,
    /// Calls that may have written something, counted as each ends (what cached answers are checked against).
    pub changes: std::sync::atomic::AtomicU64,
    /// The last answer of `geomap_capabilities`, reused while nothing it depends on changed.
    pub answers: tools::capabilities::Answers,
}

impl ServerState {
    /// Starts the application (registry, map roots, the sweep) with this edge's adapter, and makes the inventory.
    pub fn start(settings: Settings) -> Result<ServerState, StartupError> {
        let app = App::start(settings, adapter::envelope_for)?;
        let inventory = Inventory::new(&app.settings, &app.catalog);
        Ok(ServerState {
            app: Arc::new(app),
            inventory,
            calls: calls::InFlight::default(),
            stopping: CancellationToken::new(),
            changes: Default::default(),
            answers: Default::default(),
        })
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.app.settings
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
pub enum Dispatched {
    /// A result.
    Output(ToolOutput),
    /// The client must ask its user and call again (2026-07-28).
    InputRequired(InputRequiredResult),
}

/// A successful tool's structured result and the resources it links.
pub struct ToolOutput {
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

    /// Runs one offered tool: its progress forwarded to the client (when it asked) and flushed before
    /// the result, a heavy-call slot taken first when the tool is heavy, then its handler.
    async fn dispatch(&self, offered: &Offered, arguments: Option<JsonObject>, call: CallContext) -> Result<Dispatched, AppError> {
        #[cfg(feature = "fault-injection")]
        let name = offered.entry.name;
        #[cfg(feature = "fault-injection")]
        if std::env::var("GEOMAP_FAULT_PANIC_TOOL").is_ok_and(|tool| tool == name) {
            panic!("fault injection: {name} panics on purpose");
        }
        let (updates, received) = tokio::sync::mpsc::unbounded_channel();
        let forwarding = call.progress.map(|sink| tokio::spawn(sink.forward(received)));
        let progress = Progress::new(move |update| drop(updates.send(update)), call.cancel);
        let outcome = async {
            let _slot = match offered.entry.heavy {
                true => Some(self.state.app.heavy.take(&progress).await?),
                false => None,
            };
            #[cfg(feature = "fault-injection")]
            if let Some(millis) = std::env::var("GEOMAP_FAULT_SLOW_TOOL").ok().and_then(|slow| slow.strip_prefix(&format!("{name}:"))?.parse().ok()) {
                tokio::time::sleep(std::time::Duration::from_millis(millis)).await; // holding its slot, as a long call would
            }
            (offered.entry.handler)(Arc::clone(&self.state), arguments, Call { progress, consent: call.consent }).await
        }
        .await;
        if let Some(forwarding) = forwarding {
            let _ = forwarding.await; // every progress notification goes out before the result
        }
        outcome
    }

    /// One tool call from start to its log line: `arguments` is `Err` when the request already failed to parse.
    async fn run_tool_call(&self, name: &str, arguments: Result<Option<JsonObject>, ArgumentError>, call: CallContext) -> Result<CallToolResponse, ErrorData> {
        let _running = self.state.calls.enter();
        let trace_id = TraceId::random();
        let started = Instant::now();
        let session = call.session.clone();
        let Some(offered) = self.state.inventory.find(name) else {
            let envelope = self.unknown_tool(name, &trace_id);
            crate::log::log_tool_call(name, ErrorCode::UnknownTool.as_str(), started.elapsed(), &trace_id, session.as_deref(), None);
            return Err(error_result::protocol_error(&envelope));
        };
        let outcome = match arguments {
            Ok(arguments) => {
                let cancel = call.cancel.clone();
                let run = trace::run_call(trace_id.clone(), self.dispatch(offered, arguments, call));
                tokio::pin!(run);
                tokio::select! {
                    outcome = &mut run => outcome,
                    () = self.state.stopping.cancelled() => {
                        // The server is stopping: the call stops at its next stage boundary, cleaning up, or is dropped.
                        cancel.cancel();
                        tokio::time::timeout(STOP_WAIT, &mut run).await.unwrap_or(Ok(Err(AppError::Cancelled)))
                    }
                }
            }
            Err(malformed) => Ok(Err(AppError::InvalidArguments(malformed))),
        };
        let (result, label, detail): (CallToolResponse, &str, _) = match outcome {
            Ok(Ok(Dispatched::Output(output))) => (output.into_result().into(), "ok", None),
            Ok(Ok(Dispatched::InputRequired(input_required))) => (input_required.into(), "input_required", None),
            Ok(Err(error)) => {
                let envelope = self.envelope(&error, offered, &trace_id);
                let label = if error.is_cancellation() { "cancelled" } else { envelope.code.as_str() };
                (error_result::error_result(&envelope).into(), label, operator_detail(&error, &envelope))
            }
            Err(trace::PanicReport(report)) => {
                let envelope = self.envelope(&AppError::Panic, offered, &trace_id);
                (error_result::error_result(&envelope).into(), envelope.code.as_str(), Some(report))
            }
        };
        if offered.may_write() {
            self.state.changes.fetch_add(1, std::sync::atomic::Ordering::Release);
        }
        crate::log::log_tool_call(name, label, started.elapsed(), &trace_id, session.as_deref(), detail.as_deref());
        Ok(result)
    }

    fn envelope(&self, error: &AppError, offered: &Offered, trace_id: &TraceId) -> Envelope {
        let call = FailedCall { tool: offered.entry.name, idempotent: offered.idempotent(), trace_id, settings: self.state.settings() };
        adapter::envelope_for(error, &call)
    }

    fn unknown_tool(&self, name: &str, trace_id: &TraceId) -> Envelope {
        let offered: Vec<&str> = self.state.inventory.entries().map(|entry| entry.name).collect();
        adapter::unknown_tool(name, &offered, self.state.inventory.withheld(name), trace_id, self.state.settings())
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
fn operator_detail(error: &AppError, envelope: &Envelope) -> Option<String> {
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
        Ok(ListToolsResult::with_all_items(self.state.inventory.offered().iter().map(|offered| offered.tool.clone()).collect()))
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
