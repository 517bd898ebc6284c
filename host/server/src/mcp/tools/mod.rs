//! The tools, each described once: one file per tool holds one type that
//! implements [`Tool`] (its wire name, title, description, argument and result
//! types, annotations, whether it is heavy, the setting that withholds it, when
//! it is ready, how it is called and which resources its result links), and
//! `tools!` below lists them, in `tools/list` order. `tools/list`, the
//! inventory's filtering, `geomap_capabilities` and README's tool table are all
//! made from that list.
//!
//! Invariants: adding a tool is one new file and one line in the list; leaving
//! out any part of its description fails to compile (every item of [`Tool`] is
//! required), and leaving it out of README's table or of the end-to-end tests
//! fails a unit test. A handler calls the application (`geomap_app`) with a
//! plain request and returns its result or error; it never builds an envelope.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{InputRequiredResult, JsonObject, Resource};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use geomap_app::status::{DataRootState, Status};
use geomap_app::{AppError, Progress};
use geomap_assets::Catalog;
use geomap_model::errors::ErrorCode;
use geomap_model::settings::Settings;

use super::consent::ConsentChannel;
use super::{Dispatched, ServerState, ToolOutput};

/// Declares each tool's module and lists the tools, in `tools/list` order: one line per tool.
macro_rules! tools {
    ($($module:ident :: $tool:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every tool this server has, each described once, in `tools/list` order.
        pub fn all(catalog: &Catalog) -> Vec<ToolEntry> {
            vec![$(entry::<$module::$tool>(catalog)),*]
        }
    };
}

tools! {
    capabilities::Capabilities,
    register_map::RegisterMap,
    describe_map::DescribeMap,
    georeference::Georeference,
    lookup::Lookup,
    query_knowledge::QueryKnowledge,
    process_image::ProcessImage,
    read_text::ReadText,
    unit_at::UnitAt,
    extract_units::ExtractUnits,
    prepare_detectors::PrepareDetectors,
    prepare_knowledge::PrepareKnowledge,
}

/// What a tool's annotations say of it (it is never destructive: nothing it does removes an agent's work).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// It changes nothing the server reports.
    pub read_only: bool,
    /// Repeating it unchanged is safe.
    pub idempotent: bool,
    /// It reaches outside the server (downloads).
    pub open_world: bool,
}

/// A setting that withholds a tool from agents.
#[derive(Debug, Clone, Copy)]
pub struct Withholding {
    /// The setting, as operators write it.
    pub setting: &'static str,
    /// Whether the settings in force offer the tool.
    pub offered: fn(&Settings) -> bool,
}

/// Why a tool cannot succeed now: the code it would fail with, and why, for `geomap_capabilities`.
pub type Unready = (ErrorCode, &'static str);

/// What a call brings from its request besides its arguments.
pub struct Call {
    /// Where its progress goes, and how it learns it was cancelled (by the client or a stopping server).
    pub progress: Progress,
    /// How the user can be asked before a download.
    pub consent: ConsentChannel,
}

/// How a tool answered.
pub enum Reply<T> {
    /// Its result.
    Done(T),
    /// A result made earlier and kept, with its text block (see `capabilities::Answers`).
    Kept {
        /// The result as JSON.
        structured: serde_json::Value,
        /// The same as compact JSON.
        text: String,
    },
    /// The client must ask its user and call again (2026-07-28).
    AskFirst(InputRequiredResult),
}

/// One tool, described once.
pub trait Tool {
    /// Its name on the wire.
    const NAME: &'static str;
    /// Its title, for people.
    const TITLE: &'static str;
    /// What its annotations say.
    const HINTS: Hints;
    /// Whether a call takes one of the heavy-call slots before it runs (it decodes a whole scan,
    /// runs models or warps). The preparation tools take one themselves, once the user agreed.
    const HEAVY: bool;
    /// The setting that withholds it, when one can.
    const WITHHELD_BY: Option<Withholding>;
    /// Its arguments, as agents send them.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// Its result.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// What agents read about it (some descriptions state download sizes from the catalog).
    fn description(catalog: &Catalog) -> String;
    /// Why it cannot succeed now, or `None` when nothing in the server's set-up stops it.
    fn readiness(status: &Status) -> Option<Unready>;
    /// Runs a call.
    fn call(state: Arc<ServerState>, args: Self::Args, call: Call) -> impl Future<Output = Result<Reply<Self::Output>, AppError>> + Send;
    /// The resources a result links.
    fn links(output: &Self::Output) -> Vec<Resource>;
}

/// How the server runs a tool: the arguments as sent, parsed and handed to [`Tool::call`].
pub type Handler = fn(Arc<ServerState>, Option<JsonObject>, Call) -> BoxFuture<'static, Result<Dispatched, AppError>>;

/// A tool as the server holds it: its description made once, and its handler.
pub struct ToolEntry {
    /// Its name on the wire.
    pub name: &'static str,
    /// Its title.
    pub title: &'static str,
    /// What its annotations say.
    pub hints: Hints,
    /// Whether a call takes a heavy-call slot first.
    pub heavy: bool,
    /// The setting that withholds it, when one can.
    pub withheld_by: Option<Withholding>,
    /// Its description.
    pub description: String,
    /// Its input schema.
    pub input_schema: schemars::Schema,
    /// Its result's schema (the success branch of its output schema).
    pub output_schema: schemars::Schema,
    /// Why it cannot succeed now.
    pub readiness: fn(&Status) -> Option<Unready>,
    /// Parses the arguments and runs the call.
    pub handler: Handler,
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ToolEntry").field("name", &self.name).field("hints", &self.hints).field("heavy", &self.heavy).finish_non_exhaustive()
    }
}

/// The entry of tool `T`.
fn entry<T: Tool + 'static>(catalog: &Catalog) -> ToolEntry {
    ToolEntry {
        name: T::NAME,
        title: T::TITLE,
        hints: T::HINTS,
        heavy: T::HEAVY,
        withheld_by: T::WITHHELD_BY,
        description: T::description(catalog),
        input_schema: schemars::schema_for!(T::Args),
        output_schema: schemars::schema_for!(T::Output),
        readiness: T::readiness,
        handler: |state, arguments, call| {
            Box::pin(async move {
                let args: T::Args = geomap_app::error::from_json(arguments)?;
                Ok(match T::call(state, args, call).await? {
                    Reply::Done(output) => {
                        let links = T::links(&output);
                        Dispatched::Output(ToolOutput::new(&output, links))
                    }
                    Reply::Kept { structured, text } => Dispatched::Output(ToolOutput { structured, text: Some(text), links: Vec::new() }),
                    Reply::AskFirst(input_required) => Dispatched::InputRequired(input_required),
                })
            })
        },
    }
}

/// What stops a tool that writes to the data root (`writes`) or only reads it, as `status` finds it.
pub fn blocked(status: &Status, writes: bool) -> Option<Unready> {
    match status.data_root.state {
        DataRootState::RegistryCorrupt => Some((ErrorCode::RegistryCorrupt, "the registry file cannot be read; the operator must move it aside")),
        DataRootState::Unwritable if writes => Some((ErrorCode::InternalError, "the server cannot write to its data root")),
        _ => None,
    }
}

/// What stops a tool that needs GDAL (`why` says for what), as `status` finds it.
pub fn needs_gdal(status: &Status, why: &'static str) -> Option<Unready> {
    match status.georeference.readiness.missing.is_empty() {
        true => blocked(status, true),
        false => Some((ErrorCode::MissingSystemDependency, why)),
    }
}

impl Hints {
    /// A tool that only reads: read-only and idempotent.
    pub const READS: Hints = Hints { read_only: true, idempotent: true, open_world: false };
    /// A tool that writes a new record on every call: neither read-only nor idempotent.
    pub const WRITES_ANEW: Hints = Hints { read_only: false, idempotent: false, open_world: false };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<ToolEntry> {
        all(&Catalog::approved())
    }

    #[test]
    fn every_tool_has_a_unique_name_a_title_and_a_description() {
        let entries = entries();
        let mut names: Vec<&str> = entries.iter().map(|entry| entry.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), entries.len(), "tool names are unique");
        for entry in &entries {
            assert!(entry.name.starts_with("geomap_"), "{}", entry.name);
            assert!(!entry.title.is_empty() && entry.description.len() > 80, "{}", entry.name);
        }
    }

    #[test]
    fn readme_lists_every_tool_as_the_list_describes_it() {
        let readme = include_str!("../../../../../README.md");
        let table = super::super::inventory::markdown_table(&entries());
        assert!(readme.contains(&table), "README's tool table drifted from the tool list (host/server/src/mcp/tools); it should read:\n{table}");
    }

    #[test]
    fn every_tool_is_called_by_an_end_to_end_test() {
        let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
        let sources: String = std::fs::read_dir(&tests)
            .unwrap()
            .filter_map(Result::ok)
            .map(|file| file.path())
            .filter(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("test_")) && path.extension().is_some_and(|e| e == "py"))
            .map(|path| std::fs::read_to_string(path).unwrap())
            .collect();
        for entry in entries() {
            assert!(sources.contains(&format!("call_tool(\"{}\"", entry.name)), "no tests/test_*.py calls {} through the MCP client", entry.name);
        }
    }
}
