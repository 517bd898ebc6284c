//! `stratigraphic-amenity-assets`: lists, checks and installs the approved assets.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use geomap_assets::{AssetError, AssetOrigin, AssetState, Catalog, CatalogAsset, Installer, Outcome};
use geomap_model::errors::failure::{self, FailedCall};
use geomap_model::progress::Progress;
use geomap_model::settings::Settings;
use geomap_model::trace::TraceId;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const HELP: &str = "\
stratigraphic-amenity-assets — install the approved assets (knowledge bases, runtimes, detector weights)
and those the operator declares in the config file for providers of their own

USAGE:
    stratigraphic-amenity-assets --list                 the catalog: ids, sizes, licences
    stratigraphic-amenity-assets --status               what is installed, missing, custom or corrupt
    stratigraphic-amenity-assets --all                  install every installable asset
    stratigraphic-amenity-assets ID [ID ...]            install these assets
    stratigraphic-amenity-assets ID --from FILE         install FILE as the one file of asset ID (detector
                                                        weights you exported: its sha256 is recorded)

OPTIONS:
    --root DIR      the data root to install into (default: GEOMAP_DATA_ROOT, else the server's default)
    --mirror URL    fetch every file from URL/<file name> instead of its source (default: GEOMAP_ASSET_MIRROR)
    --json          print one JSON document instead of text
    --help, --version

Files are pinned by size and sha256 and land in DIR/assets/<id>/, whole or not at all.
Settings come from the environment and GEOMAP_CONFIG as for the server
(GEOMAP_ASSET_TIMEOUT: how long a download may receive nothing, default 30s).
An asset the catalog does not have is declared in the GEOMAP_CONFIG file, as the
operator's own folder or as files to install, each pinned:
    [assets.my-data]
    path = \"/srv/geo/my-data\"
or
    [assets.my-data.sources.\"data.json\"]
    url = \"https://example.org/data.json\"
    size = 18342
    sha256 = \"<64 lowercase hex>\"

EXIT CODES:
    0  everything asked for is installed (or was already)
    1  at least one asset failed to install, or is corrupt (--status)
    2  bad arguments or settings
";

#[derive(Debug, Default)]
struct Options {
    list: bool,
    status: bool,
    all: bool,
    ids: Vec<String>,
    root: Option<PathBuf>,
    mirror: Option<String>,
    json: bool,
    from: Option<PathBuf>,
}

enum Parsed {
    Run(Options),
    Help,
    Version,
}

fn parse(args: Vec<String>) -> Result<Parsed, String> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--help" | "-h" => return Ok(Parsed::Help),
            "--version" | "-V" => return Ok(Parsed::Version),
            "--list" => options.list = true,
            "--status" => options.status = true,
            "--all" => options.all = true,
            "--json" => options.json = true,
            "--root" => options.root = Some(PathBuf::from(args.next().ok_or("--root needs a folder")?)),
            "--mirror" => options.mirror = Some(args.next().ok_or("--mirror needs a URL")?),
            "--from" => options.from = Some(PathBuf::from(args.next().ok_or("--from needs a file")?)),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            id => options.ids.push(id.to_owned()),
        }
    }
    let actions = [options.list, options.status, options.all || !options.ids.is_empty()].iter().filter(|chosen| **chosen).count();
    if options.from.is_some() && (options.ids.len() != 1 || options.all) {
        return Err("--from installs one file as one asset: give exactly one asset id".to_owned());
    }
    match actions {
        0 => Err("say what to do: --list, --status, --all or asset ids".to_owned()),
        1 if options.all && !options.ids.is_empty() => Err("give --all or asset ids, not both".to_owned()),
        1 => Ok(Parsed::Run(options)),
        _ => Err("give one of --list, --status, or what to install".to_owned()),
    }
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1).collect()) {
        Ok(Parsed::Run(options)) => options,
        Ok(Parsed::Help) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Version) => {
            println!("stratigraphic-amenity-assets {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(problem) => return usage_error(&problem),
    };
    let mut settings = match Settings::from_process_env() {
        Ok(settings) => settings,
        Err(error) => return usage_error(&format!("bad setting: {error}")),
    };
    // --root and --mirror win over the environment, for everything below (messages and hints included).
    if let Some(root) = &options.root {
        match std::path::absolute(root) {
            Ok(root) => settings.data_root = root,
            Err(error) => return usage_error(&format!("--root {}: {error}", root.display())),
        }
    }
    if let Some(mirror) = &options.mirror {
        if let Err(error) = geomap_model::settings::mirror_url(mirror) {
            return usage_error(&format!("--mirror: {error}"));
        }
        settings.asset_mirror = Some(mirror.clone());
    }
    let catalog = match Catalog::for_settings(&settings) {
        Ok(catalog) => catalog,
        Err(error) => return usage_error(&format!("bad setting: {error}")),
    };
    if let Some(unknown) = options.ids.iter().find(|id| catalog.get(id).is_none()) {
        return usage_error(&AssetError::Unknown { id: unknown.clone(), known: catalog.ids().iter().map(|id| id.to_string()).collect() }.to_string());
    }
    if options.from.is_some() && options.ids.iter().filter_map(|id| catalog.get(id)).any(|asset| asset.files.len() != 1) {
        return usage_error("--from takes an asset of one file (detector weights); the others install from their sources");
    }
    let installer = match Installer::new(&settings) {
        Ok(installer) => installer,
        Err(problem) => return usage_error(&problem),
    };
    if options.list {
        return list(&catalog, options.json);
    }
    if options.status {
        return status(&catalog, &installer, options.json);
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("the Tokio runtime starts");
    runtime.block_on(install(&catalog, &installer, &options, &settings))
}

fn usage_error(problem: &str) -> ExitCode {
    eprintln!("stratigraphic-amenity-assets: {problem}\nRun stratigraphic-amenity-assets --help for usage.");
    ExitCode::from(2)
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn describe(asset: &CatalogAsset) -> Value {
    json!({
        "id": asset.id, "title": asset.title, "kind": asset.kind, "origin": asset.origin, "version": asset.version, "bytes": asset.size(),
        "licence": asset.licence, "attribution": asset.attribution,
        "files": asset.files.iter().map(|file| json!({ "name": file.name, "bytes": file.size, "sha256": file.sha256, "url": file.url })).collect::<Vec<_>>(),
    })
}

/// ` (declared in the config file)` after an asset the operator declared; nothing after an approved one.
fn declared_mark(asset: &CatalogAsset) -> &'static str {
    match asset.origin {
        AssetOrigin::Approved => "",
        AssetOrigin::Operator => " (declared in the config file)",
    }
}

fn list(catalog: &Catalog, as_json: bool) -> ExitCode {
    if as_json {
        println!("{}", json!({ "assets": catalog.assets().iter().map(describe).collect::<Vec<_>>() }));
        return ExitCode::SUCCESS;
    }
    for asset in catalog.assets() {
        let size = if asset.has_source() { megabytes(asset.size()) } else { "no source".to_owned() };
        println!(
            "{:<24} {:<16} {:>9}  {}  [{}]{}",
            asset.id,
            format!("{:?}", asset.kind).to_lowercase(),
            size,
            asset.title,
            asset.licence,
            declared_mark(asset)
        );
    }
    ExitCode::SUCCESS
}

fn status(catalog: &Catalog, installer: &Installer, as_json: bool) -> ExitCode {
    let mut corrupt = false;
    let mut reports = Vec::new();
    for asset in catalog.assets() {
        let found = geomap_assets::status(asset, installer.data_root());
        corrupt |= found.state == AssetState::Corrupt;
        if as_json {
            let mut report = describe(asset);
            report["state"] = json!(found.state);
            report["path"] = json!(found.path);
            if let Some(problem) = &found.problem {
                report["problem"] = json!(problem);
            }
            reports.push(report);
        } else {
            let state = format!("{:?}", found.state).to_lowercase();
            let problem = found.problem.map(|problem| format!(" ({problem}; install it again)")).unwrap_or_default();
            println!("{:<24} {state:<10} {}{problem}{}", asset.id, found.path.display(), declared_mark(asset));
            if found.state.usable() {
                println!("{:<24} {}: {}", "", asset.licence, asset.attribution);
            }
        }
    }
    if as_json {
        println!("{}", json!({ "data_root": installer.data_root(), "assets": reports }));
    }
    if corrupt { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

async fn install(catalog: &Catalog, installer: &Installer, options: &Options, settings: &Settings) -> ExitCode {
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel(); // the installer removes what it had started
        }
    });
    let chosen: Vec<&CatalogAsset> = match options.all {
        true => catalog.assets().iter().collect(),
        false => options.ids.iter().filter_map(|id| catalog.get(id)).collect(),
    };
    let mut report = json!({ "installed": [], "already_present": [], "skipped": [], "failed": [] });
    let mut failed = false;
    for asset in chosen {
        if let Some(own) = asset.custom_path.as_ref().filter(|_| options.all) {
            let why = format!("the operator's own copy at {} (config [assets.{}] path)", own.display(), asset.id);
            say(options.json, &format!("{}: skipped: {why}", asset.id));
            push(&mut report, "skipped", json!({ "id": asset.id, "why": why }));
            continue;
        }
        if options.all && !asset.has_source() {
            let why = format!("no public source: the operator provides it (--from FILE, or a source in the config file [assets.{}.sources])", asset.id);
            say(options.json, &format!("{}: skipped: {why}", asset.id));
            push(&mut report, "skipped", json!({ "id": asset.id, "why": why }));
            continue;
        }
        let outcome = match &options.from {
            Some(from) => installer.import(asset, from, &cancel).await,
            None => {
                let bar = std::sync::Arc::new(std::sync::Mutex::new(ProgressLine::new(&asset.id, options.json)));
                let shown = std::sync::Arc::clone(&bar);
                let progress = Progress::new(move |update| shown.lock().expect("never poisoned").update(update.done, update.total), cancel.clone());
                let outcome = installer.install(asset, &progress).await;
                bar.lock().expect("never poisoned").finish();
                outcome
            }
        };
        match outcome {
            Ok(Outcome::Installed) => {
                say(options.json, &format!("{}: installed ({}) — {}: {}", asset.id, megabytes(asset.size()), asset.licence, asset.attribution));
                push(&mut report, "installed", json!({ "id": asset.id, "licence": asset.licence, "attribution": asset.attribution }));
            }
            Ok(Outcome::AlreadyPresent) => {
                say(options.json, &format!("{}: already installed", asset.id));
                push(&mut report, "already_present", json!({ "id": asset.id }));
            }
            Err(error) => {
                failed = true;
                // The same envelope an agent would get: code, message, details, hints.
                let trace_id = TraceId::random();
                let call = FailedCall { tool: "stratigraphic-amenity-assets", idempotent: true, trace_id: &trace_id, settings };
                let envelope = failure::envelope(geomap_assets::failure::describe(&error, &call), &call);
                let reason = envelope.details.as_ref().and_then(|details| details.get("reason")).and_then(Value::as_str).map(str::to_owned);
                eprintln!(
                    "{}: FAILED ({}{}): {}\n    detail: {error}",
                    asset.id,
                    envelope.code,
                    reason.as_ref().map(|r| format!(", {r}")).unwrap_or_default(),
                    envelope.message
                );
                push(
                    &mut report,
                    "failed",
                    json!({ "id": asset.id, "code": envelope.code, "reason": reason, "message": envelope.message, "hints": envelope.recovery_hints }),
                );
            }
        }
    }
    if options.json {
        println!("{report}");
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

fn say(as_json: bool, line: &str) {
    if !as_json {
        println!("{line}");
    }
}

fn push(report: &mut Value, key: &str, entry: Value) {
    report[key].as_array_mut().expect("report keys are arrays").push(entry);
}

/// A progress bar on a terminal; otherwise a plain line every tenth of the way (none with --json).
struct ProgressLine {
    bar: Option<indicatif::ProgressBar>,
    id: String,
    quiet: bool,
    last_tenth: Option<u64>,
}

impl ProgressLine {
    fn new(id: &str, quiet: bool) -> ProgressLine {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{prefix:>22} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                    .expect("the template is valid")
                    .progress_chars("=> "),
            );
            bar.set_prefix(id.to_owned());
            bar
        });
        ProgressLine { bar, id: id.to_owned(), quiet, last_tenth: None }
    }

    fn update(&mut self, done: u64, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
            bar.set_position(done);
            return;
        }
        let tenth = done * 10 / total.max(1);
        if !self.quiet && self.last_tenth != Some(tenth) {
            self.last_tenth = Some(tenth);
            eprintln!("{}: {}% ({} of {})", self.id, tenth * 10, megabytes(done), megabytes(total));
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
