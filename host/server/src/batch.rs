//! `stratigraphic-amenity batch MANIFEST [--shard I/N] [--steps register,layout,georef,units]`: the
//! tools' own work on every map of a manifest, one shard of it per process, for an archive too large
//! for agents to walk one call at a time.
//!
//! Invariants:
//! - Each step is the use case the tool runs (`geomap_register_map`, `geomap_process_image`,
//!   `geomap_georeference` from the map's labels, `geomap_extract_units`), called on the
//!   application with a plain request (never through the MCP tools), under a trace ID of its own,
//!   with the tool's `event=tool_call` log line; a failure is the code the tool would give.
//! - What the registry says is done is not done again (a map registered unchanged, a layout, a
//!   revision, a unit extraction), so a killed run resumes where it stopped, and shards over one
//!   registry (whose lines never overlap) together process every map once per step.
//! - One JSON line per map and step on stdout (`map`, `map_id`, `step`, `outcome`, `duration_ms`,
//!   `trace_id`), progress on stderr. A map's failure is its line's outcome, not the run's; the
//!   exit status is 2 when the manifest cannot be read and 1 when any step ended in
//!   `internal_error` (the registry or the machine failed: the shard is worth running again, and
//!   a scheduler that retries failed shards does).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use geomap_app::georeference::GeoreferenceRequest;
use geomap_app::layout::LayoutRequest;
use geomap_app::maps::RegisterRequest;
use geomap_app::units::ExtractRequest;
use geomap_app::{App, AppError, Progress};
use geomap_model::errors::failure::FailedCall;
use geomap_model::trace::{self, TraceId};
use geomap_store::registry::Document;

/// One step of the work on a map, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `geomap_register_map`.
    Register,
    /// `geomap_process_image`.
    Layout,
    /// `geomap_georeference` with `from: "labels"`.
    Georef,
    /// `geomap_extract_units`.
    Units,
}

impl Step {
    const ALL: [Step; 4] = [Step::Register, Step::Layout, Step::Georef, Step::Units];

    /// Its name on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Step::Register => "register",
            Step::Layout => "layout",
            Step::Georef => "georef",
            Step::Units => "units",
        }
    }

    /// The tool that does it over MCP (its name for the log and the error code).
    fn tool(self) -> &'static str {
        match self {
            Step::Register => geomap_app::maps::REGISTER_TOOL,
            Step::Layout => geomap_app::layout::TOOL,
            Step::Georef => geomap_app::georeference::TOOL,
            Step::Units => geomap_app::units::EXTRACT_TOOL,
        }
    }
}

/// What `batch` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchArgs {
    /// The manifest: one map path per line (as `geomap_register_map` takes it); blank lines and
    /// lines starting with `#` are skipped.
    pub manifest: PathBuf,
    /// This process's shard and how many there are: it takes the manifest's maps whose position
    /// (from 0, counting only maps) modulo `count` is `index`.
    pub shard: (u64, u64),
    /// The steps, in their order, each map going through all of them.
    pub steps: Vec<Step>,
}

/// `batch`'s command line as clap reads it (the text of `batch --help`); [`BatchCommand::resolve`]
/// makes it the [`BatchArgs`] it asks for.
#[derive(Debug, clap::Args)]
#[command(args_override_self = true, after_long_help = BATCH_AFTER_HELP)]
pub struct BatchCommand {
    /// The manifest: one map path per line
    ///
    /// Each path as geomap_register_map takes it (relative to the first map root, or absolute);
    /// blank lines and lines starting with # are skipped.
    #[arg(value_name = "MANIFEST", verbatim_doc_comment)]
    manifest: PathBuf,
    /// This process's shard, I of N; --shard N takes I from JOB_COMPLETION_INDEX [default: 0/1]
    ///
    /// Shard I of N (I from 0) takes the manifest's maps at positions I, I + N, I + 2N, …
    /// (counting only maps); the default, 0/1, takes every map.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, verbatim_doc_comment)]
    shard: Option<Shard>,
    /// The steps, comma-separated: register, layout, georef, units [default: all four]
    ///
    /// They run in that order whatever the order written. A map is registered (unchanged, it only
    /// reads) even when register is not named, to know its ID.
    #[arg(long, value_name = "STEP,…", action = clap::ArgAction::Set, value_delimiter = ',', value_parser = parse_step, verbatim_doc_comment)]
    steps: Option<Vec<Step>>,
}

/// The end of `batch --help`: where the shard's index can come from, what is written, the exit status.
const BATCH_AFTER_HELP: &str = "\
JOB_COMPLETION_INDEX (which a Kubernetes Indexed Job sets in each pod) is the index a --shard N
takes, so every pod runs the same command; when it is set, --shard must be given.

What the registry says is done (a registered, unchanged map; a layout; a revision; a unit
extraction) is not done again: a killed shard simply runs again, and shards over one registry
process every map once per step. Each map and step gives one JSON line on stdout:
    {\"map\": \"sheets/i-2900.tif\", \"map_id\": \"map_…\", \"step\": \"layout\", \"outcome\": \"ok\", \"duration_ms\": 41230, \"trace_id\": \"…\"}
outcome is ok, done_before, or the tool's error code (its trace_id is on the event=tool_call log
line); a map whose registration failed is not taken further. Progress goes to stderr.

Exit status: 0, as a map's failure is its line's, not the run's; but 1 when any step ended in
internal_error (the registry or the machine failed: the shard is worth running again), and 2 when
the manifest cannot be read or the command line is wrong.";

impl BatchCommand {
    /// What the command line asks for; `job_index` is `JOB_COMPLETION_INDEX` (a Kubernetes Indexed
    /// Job's), which `--shard N` takes as this process's index. `Err` says what is wrong.
    pub fn resolve(self, job_index: Option<&str>) -> Result<BatchArgs, String> {
        let shard = match (self.shard, job_index) {
            (Some(Shard { index: Some(index), count }), _) => (index, count),
            (Some(Shard { index: None, count }), None) => return Err(format!("--shard {count} needs JOB_COMPLETION_INDEX, or write it as I/{count}")),
            (Some(Shard { index: None, count }), Some(index)) => {
                let index = index.trim().parse::<u64>().map_err(|_| format!("--shard {count}: JOB_COMPLETION_INDEX {index:?} is not a number"))?;
                if index >= count {
                    return Err(format!("--shard {index}/{count} (the index from JOB_COMPLETION_INDEX): the index must be below the count"));
                }
                (index, count)
            }
            (None, Some(_)) => return Err("JOB_COMPLETION_INDEX is set: say how many shards with --shard N".to_owned()),
            (None, None) => (0, 1),
        };
        let steps = match self.steps {
            Some(named) => Step::ALL.into_iter().filter(|step| named.contains(step)).collect(),
            None => Step::ALL.to_vec(),
        };
        Ok(BatchArgs { manifest: self.manifest, shard, steps })
    }
}

/// `--shard` as written: `I/N`, or `N` with the index to come from `JOB_COMPLETION_INDEX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shard {
    /// `I`, when written.
    index: Option<u64>,
    /// `N`: how many shards there are.
    count: u64,
}

/// `--shard`'s value parser: `I/N` with I below N, or `N` (at least 1).
fn parse_shard(value: &str) -> Result<Shard, String> {
    let number = |text: &str| text.trim().parse::<u64>().map_err(|_| format!("{text:?} is not a number"));
    let shard = match value.split_once('/') {
        Some((index, count)) => Shard { index: Some(number(index)?), count: number(count)? },
        None => Shard { index: None, count: number(value)? },
    };
    match shard.index {
        Some(index) if index >= shard.count => Err("the index must be below the count".to_owned()),
        _ if shard.count == 0 => Err("there must be at least one shard".to_owned()),
        _ => Ok(shard),
    }
}

/// `--steps`' value parser, for each name of the list.
fn parse_step(name: &str) -> Result<Step, String> {
    Step::ALL.into_iter().find(|step| step.name() == name.trim()).ok_or(format!("unknown step {name:?}: register, layout, georef, units"))
}

/// Runs `args` on `app`; the exit status (0 unless the manifest cannot be read, 1 after an `internal_error`).
pub async fn run(app: Arc<App>, args: BatchArgs) -> std::process::ExitCode {
    let text = match std::fs::read_to_string(&args.manifest) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("stratigraphic-amenity: cannot read the manifest {}: {error}", args.manifest.display());
            return std::process::ExitCode::from(2);
        }
    };
    let (index, count) = args.shard;
    let maps: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')).collect();
    let mine: Vec<&str> = maps.iter().enumerate().filter(|(position, _)| *position as u64 % count == index).map(|(_, path)| *path).collect();
    eprintln!("batch: shard {index}/{count}: {} of the manifest's {} maps, steps {}", mine.len(), maps.len(), names(&args.steps));
    let started = Instant::now();
    let mut internal = false;
    for (done, path) in mine.iter().enumerate() {
        let progress = format!("[{}/{}] {path}", done + 1, mine.len());
        // Registration comes first; when it is not a step asked for, it still runs (unchanged, it
        // only reads) to know the map's ID, and says something only when it fails.
        let trace_id = TraceId::random();
        let began = Instant::now();
        let registered = flatten(trace::run_call(trace_id.clone(), app.register(RegisterRequest { path: path.to_string() })).await);
        let map_id: Option<String> = registered.as_ref().ok().map(|report| report.map_id.clone());
        if args.steps.contains(&Step::Register) || registered.is_err() {
            let outcome = registered.map(|report| report.already_registered == Some(true));
            internal |= report(&app, (path, map_id.as_deref(), &progress), Step::Register, outcome, began.elapsed(), &trace_id) == INTERNAL;
        }
        let Some(map_id) = map_id else { continue };
        for &step in args.steps.iter().filter(|step| **step != Step::Register) {
            let trace_id = TraceId::random();
            let began = Instant::now();
            let outcome = flatten(trace::run_call(trace_id.clone(), perform(&app, &map_id, step)).await);
            internal |= report(&app, (path, Some(&map_id), &progress), step, outcome, began.elapsed(), &trace_id) == INTERNAL;
        }
    }
    eprintln!("batch: shard {index}/{count} finished {} maps in {}", mine.len(), seconds(started.elapsed()));
    match internal {
        true => {
            eprintln!("batch: some steps ended in internal_error (their lines say which): run the shard again once the cause is fixed");
            std::process::ExitCode::FAILURE
        }
        false => std::process::ExitCode::SUCCESS,
    }
}

/// The outcome that fails the run: the registry or the machine, not the map.
const INTERNAL: &str = "internal_error";

/// Says how `step` went on one map (its manifest path, ID, and place in the run): its JSON line on
/// stdout, its `event=tool_call` log line, its progress line on stderr. `outcome` is whether the
/// registry said it was done already, or the tool's error. Returns the outcome's word.
fn report(
    app: &App,
    (path, map_id, progress): (&str, Option<&str>, &str),
    step: Step,
    outcome: Result<bool, AppError>,
    duration: Duration,
    trace_id: &TraceId,
) -> String {
    let code = match &outcome {
        Ok(true) => "done_before".to_owned(),
        Ok(false) => "ok".to_owned(),
        Err(error) => {
            let call = FailedCall { tool: step.tool(), idempotent: false, trace_id, settings: &app.settings };
            crate::adapter::envelope_for(error, &call).code.as_str().to_owned()
        }
    };
    crate::log::log_tool_call(step.tool(), if outcome.is_ok() { "ok" } else { &code }, duration, trace_id, None, Some("batch"));
    let line = json!({ "map": path, "map_id": map_id, "step": step.name(), "outcome": code, "duration_ms": duration.as_millis() as u64, "trace_id": trace_id.as_str() });
    println!("{line}");
    eprintln!("batch: {progress}: {} {code} ({})", step.name(), seconds(duration));
    code
}

/// Runs `step` on map `map_id` unless the registry says it is done; `true` when it was.
async fn perform(app: &Arc<App>, map_id: &str, step: Step) -> Result<bool, AppError> {
    let registry = &app.registry;
    match step {
        Step::Register => unreachable!("registration runs first, on its own"),
        Step::Layout if registry.newest_document(Document::Layout, map_id)?.is_some() => Ok(true),
        Step::Layout => app.find_layout(LayoutRequest::of(map_id), Progress::none()).await.map(|_| false),
        Step::Georef if registry.map(map_id)?.is_some_and(|record| !record.revisions.is_empty()) => Ok(true),
        Step::Georef => app.georeference(GeoreferenceRequest::from_labels(map_id), Progress::none()).await.map(|_| false),
        Step::Units if registry.newest_document(Document::Units, map_id)?.is_some() => Ok(true),
        Step::Units => app.extract_units(ExtractRequest::of(map_id), Progress::none()).await.map(|_| false),
    }
}

/// A call's outcome with a caught panic as [`AppError::Panic`].
fn flatten<T>(outcome: Result<Result<T, AppError>, trace::PanicReport>) -> Result<T, AppError> {
    outcome.map_err(|_| AppError::Panic).and_then(|done| done)
}

fn names(steps: &[Step]) -> String {
    steps.iter().map(|step| step.name()).collect::<Vec<_>>().join(",")
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `batch` alone, as the binary's parser holds it.
    #[derive(Debug, Parser)]
    struct Batch {
        #[command(flatten)]
        command: BatchCommand,
    }

    /// What `words` after `batch` ask for, or what is wrong with them.
    fn parse(words: &[&str], job_index: Option<&str>) -> Result<BatchArgs, String> {
        let command = Batch::try_parse_from(std::iter::once("batch").chain(words.iter().copied())).map_err(|error| error.to_string())?.command;
        command.resolve(job_index)
    }

    #[test]
    fn shards_come_from_the_command_line_or_a_kubernetes_indexed_job() {
        let parsed = parse(&["maps.txt", "--shard", "1/4", "--steps", "units,register"], None).unwrap();
        assert_eq!(parsed, BatchArgs { manifest: "maps.txt".into(), shard: (1, 4), steps: vec![Step::Register, Step::Units] });
        assert_eq!(parse(&["maps.txt", "--shard", "4"], Some("3")).unwrap().shard, (3, 4));
        assert_eq!(parse(&["maps.txt"], None).unwrap(), BatchArgs { manifest: "maps.txt".into(), shard: (0, 1), steps: Step::ALL.to_vec() });
        assert_eq!(parse(&["--steps", "georef, layout", "--shard=0/2", "maps.txt"], None).unwrap().steps, vec![Step::Layout, Step::Georef]);
        assert_eq!(
            parse(&["maps.txt", "--shard", "0/2", "--shard", "1/2", "--steps", "units", "--steps", "layout"], None).unwrap().shard,
            (1, 2),
            "the last wins"
        );
        assert_eq!(parse(&["maps.txt", "--steps", "units", "--steps", "layout"], None).unwrap().steps, vec![Step::Layout], "the last wins");
        for (words, job, problem) in [
            (&["maps.txt", "--shard", "4/4"][..], None, "below the count"),
            (&["maps.txt", "--shard", "4"], Some("4"), "below the count"),
            (&["maps.txt", "--shard", "0"], Some("0"), "at least one shard"),
            (&["maps.txt", "--shard", "x/4"], None, "\"x\" is not a number"),
            (&["maps.txt", "--shard", "4"], Some("x"), "\"x\" is not a number"),
            (&["maps.txt", "--shard", "4"], None, "needs JOB_COMPLETION_INDEX"),
            (&["maps.txt"], Some("2"), "--shard N"),
            (&["maps.txt", "--steps", "layout,colour"], None, "unknown step \"colour\""),
            (&["maps.txt", "--steps", "layout,"], None, "unknown step \"\""),
            (&["--shard", "0/2"], None, "<MANIFEST>"),
            (&["maps.txt", "more.txt"], None, "unexpected argument 'more.txt'"),
            (&["maps.txt", "--colour"], None, "unexpected argument '--colour'"),
        ] {
            let error = parse(words, job).unwrap_err();
            assert!(error.contains(problem), "{words:?}: {error}");
        }
    }
}
