//! `geomap_capabilities`: what the server can do right now — each offered tool
//! and whether it is ready (each tool says so itself, [`super::Tool::readiness`]),
//! and the application's status.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rmcp::model::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use geomap_app::AppError;
use geomap_app::status::Status;
use geomap_assets::Catalog;
use geomap_model::errors::ErrorCode;
use geomap_model::trace;

use super::{Call, Hints, Reply, Tool, Unready, Withholding};
use crate::mcp::{SERVER_NAME, SERVER_VERSION, ServerState};

/// `geomap_capabilities`.
pub struct Capabilities;

/// `geomap_capabilities` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilitiesArgs {}

/// Name and version of this server.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ServerIdentity {
    /// `stratigraphic-amenity`.
    pub name: String,
    /// The release version.
    pub version: String,
}

/// Whether one tool can succeed right now.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolReadiness {
    /// The tool's name.
    pub name: String,
    /// True when nothing in the server's set-up stops the tool.
    pub ready: bool,
    /// The code the tool would fail with while not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_code: Option<ErrorCode>,
    /// Why it is not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The result of `geomap_capabilities`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CapabilitiesResult {
    /// Which server this is.
    pub server: ServerIdentity,
    /// Every offered tool and whether it is ready.
    pub tools: Vec<ToolReadiness>,
    /// The roots, media, data root, GDAL, assets, providers and detectors as found now.
    #[serde(flatten)]
    pub status: Status,
}

impl Tool for Capabilities {
    const NAME: &'static str = "geomap_capabilities";
    const TITLE: &'static str = "Server capabilities";
    const HINTS: Hints = Hints::READS;
    const HEAVY: bool = false;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = CapabilitiesArgs;
    type Output = CapabilitiesResult;

    fn description(_: &Catalog) -> String {
        "What this server can do right now: its version, each tool and whether it is ready (with the error code it would fail with if not), the allowed map roots, the media limits and the data root's state. Call it first.".to_owned()
    }

    fn readiness(_: &Status) -> Option<Unready> {
        None
    }

    async fn call(state: Arc<ServerState>, _: CapabilitiesArgs, _: Call) -> Result<Reply<CapabilitiesResult>, AppError> {
        let answer = capabilities(state).await;
        Ok(Reply::Kept { structured: answer.structured.clone(), text: answer.text.clone() })
    }

    fn links(_: &CapabilitiesResult) -> Vec<Resource> {
        Vec::new()
    }
}

/// How long an answer stands for changes made outside this server's own calls that its inputs do
/// not show (an operator's own asset copy edited, the data root's permissions changed).
const FRESH_FOR: Duration = Duration::from_secs(1);

/// The last answer of `geomap_capabilities`, kept until what it was computed from changes.
///
/// Invariant: an answer is reused only while its `Inputs` are unchanged and it is younger than
/// `FRESH_FOR`: every call of this server that may write bumps `ServerState::changes`, the assets
/// command's installs move the assets folder's modification time, and every SQLite registry commit
/// (from any process) moves its files' times and sizes. A PostgreSQL registry has no files: other
/// replicas' commits show once the answer is `FRESH_FOR` old.
#[derive(Debug, Default)]
pub struct Answers(Mutex<Option<Answered>>);

#[derive(Debug)]
struct Answered {
    inputs: Inputs,
    at: Instant,
    answer: Arc<Answer>,
}

/// An answer as the call returns it: the structured content and its text block.
#[derive(Debug)]
pub struct Answer {
    /// The result as JSON.
    pub structured: Value,
    /// The same as compact JSON (whitespace costs an agent tokens and the transport bytes).
    pub text: String,
}

/// What an answer depends on that can change while the server runs, read cheaply (three `stat`s).
#[derive(Debug, PartialEq)]
struct Inputs {
    changes: u64,
    assets: Option<SystemTime>,
    registry: [Option<(SystemTime, u64)>; 2],
}

impl Inputs {
    fn now(state: &ServerState) -> Inputs {
        let data_root = &state.app.settings.data_root;
        let stamp = |path: &std::path::Path| std::fs::metadata(path).ok().and_then(|metadata| Some((metadata.modified().ok()?, metadata.len())));
        let database = data_root.join(geomap_store::registry::DATABASE_FILE);
        Inputs {
            changes: state.changes.load(Ordering::Acquire),
            assets: stamp(&data_root.join(geomap_model::data_root::ASSETS_DIR)).map(|(modified, _)| modified),
            registry: [stamp(&database), stamp(&database.with_extension("sqlite-wal"))],
        }
    }
}

/// `geomap_capabilities`: counts, never lists that grow with the archive. Computed again only when
/// its inputs moved (see [`Answers`]); the stat of its inputs runs on the async thread (three
/// metadata reads), the computation on the blocking pool.
pub async fn capabilities(state: Arc<ServerState>) -> Arc<Answer> {
    state.app.providers().await;
    let inputs = Inputs::now(&state);
    if let Some(kept) = state.answers.0.lock().expect("never poisoned").as_ref().filter(|kept| kept.inputs == inputs && kept.at.elapsed() < FRESH_FOR) {
        return Arc::clone(&kept.answer);
    }
    let computing = Arc::clone(&state);
    let answer = trace::spawn_blocking(move || {
        let structured = serde_json::to_value(capabilities_now(&computing)).expect("capabilities serialize");
        let text = serde_json::to_string(&structured).expect("JSON values always serialize");
        Arc::new(Answer { structured, text })
    })
    .await;
    *state.answers.0.lock().expect("never poisoned") = Some(Answered { inputs, at: Instant::now(), answer: Arc::clone(&answer) });
    answer
}

fn capabilities_now(state: &ServerState) -> CapabilitiesResult {
    let status = state.app.status();
    let tools = state
        .inventory
        .entries()
        .map(|entry| {
            let block = (entry.readiness)(&status);
            ToolReadiness {
                name: entry.name.to_owned(),
                ready: block.is_none(),
                unavailable_code: block.map(|(code, _)| code),
                reason: block.map(|(_, reason)| reason.to_owned()),
            }
        })
        .collect();
    CapabilitiesResult { server: ServerIdentity { name: SERVER_NAME.to_owned(), version: SERVER_VERSION.to_owned() }, tools, status }
}
