//! The `stratigraphic-amenity` binary: serve MCP over stdio, or check the set-up.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use clap::{CommandFactory, Parser, Subcommand};
use geomap_app::{App, StartupError};
use geomap_assets::{AssetState, Catalog};
use geomap_model::settings::{Settings, SettingsError, variables};
use geomap_model::trace;
use geomap_providers::{Capability, LoadFailure, LoadState, Origin, ProviderSet};
use geomap_store::registry::{self, CorruptProblem, Location, Registry, RegistryDocument, RegistryError};
use geomap_store::roots::MapRoots;
use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use stratigraphic_amenity::batch::{BatchArgs, BatchCommand};
use stratigraphic_amenity::http::HttpServer;
use stratigraphic_amenity::mcp::{GeomapServer, SERVER_NAME, SERVER_VERSION, ServerState};
use tokio_util::sync::CancellationToken;

/// An MCP server for scanned geologic maps; with no command, it serves MCP over stdio (what MCP hosts run)
///
/// (The doc comments of the command line's types are its `--help`.)
#[derive(Debug, Parser)]
#[command(name = SERVER_NAME, bin_name = SERVER_NAME, version = SERVER_VERSION, long_about = None, after_help = settings_help())]
struct Cli {
    /// The command; none serves over stdio.
    #[command(subcommand)]
    command: Option<CliCommand>,
}

/// The commands, as `--help` lists them.
#[derive(Debug, Subcommand)]
enum CliCommand {
    /// Serve MCP over stdio, or over streamable HTTP with --http
    Serve {
        /// Serve MCP over streamable HTTP at /mcp (health check at /healthz) on this address instead
        /// of stdio, as GEOMAP_HTTP_LISTEN does
        #[arg(long, value_name = "ADDR:PORT", verbatim_doc_comment)]
        http: Option<String>,
    },
    /// Validate settings, data root and registry (full integrity check), print them, exit
    Check,
    /// Export the whole registry as JSON, or import an export into an empty registry
    #[command(arg_required_else_help = false)]
    Registry {
        /// What to do with the registry.
        #[command(subcommand)]
        command: RegistryCommand,
    },
    /// Run the tools on every map of a manifest (one shard of it), one JSON line per map and step
    Batch(BatchCommand),
    /// List the providers found, enabled, loadable and ready, and why not; or check one component
    Providers {
        /// `check FILE.wasm`, or none to list them.
        #[command(subcommand)]
        command: Option<ProvidersCommand>,
    },
}

/// `registry`'s commands.
#[derive(Debug, Subcommand)]
enum RegistryCommand {
    /// Write the whole registry as JSON to FILE (atomically), or to standard output
    Export {
        /// Where to write it [default: standard output]
        file: Option<PathBuf>,
    },
    /// Restore an exported registry into an empty data root (or empty GEOMAP_REGISTRY_URL database)
    Import {
        /// The export to restore
        file: PathBuf,
    },
}

/// `providers`' commands.
#[derive(Debug, Subcommand)]
enum ProvidersCommand {
    /// Check that a provider component loads (its world version, name, options schema) and say what enables it
    Check {
        /// The component
        #[arg(value_name = "FILE.wasm")]
        file: PathBuf,
    },
}

/// The end of `--help`: the settings, from the one list of them.
fn settings_help() -> String {
    format!(
        "SETTINGS (environment; GEOMAP_CONFIG may name a TOML file with the same keys,\nlower case without GEOMAP_; the environment wins):\n{}",
        variables::help_text()
    )
}

/// What the command line asks for, checked.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Serve { http: Option<String> },
    Check,
    Export(Option<PathBuf>),
    Import(PathBuf),
    Providers,
    Batch(BatchArgs),
    CheckProvider(PathBuf),
}

/// Why a command line runs nothing.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// Help or the version, for stdout (exit 0).
    Print(String),
    /// A usage error, for stderr (exit 2): one line saying what is wrong, one pointing at the `--help` that explains.
    Usage(String),
}

/// Reads `args` (the program's name first); `job_index` is `JOB_COMPLETION_INDEX`.
fn parse_command(args: &[OsString], job_index: Option<&str>) -> Result<Command, Stop> {
    let usage = |problem: &str| Stop::Usage(format!("error: {problem}\nFor more information, try '{} --help'.\n", command_path(args)));
    let cli = Cli::try_parse_from(args).map_err(|error| match error.use_stderr() {
        false => Stop::Print(error.render().to_string()),
        true => usage(&problem(&error)),
    })?;
    Ok(match cli.command {
        None => Command::Serve { http: None },
        Some(CliCommand::Serve { http }) => Command::Serve { http },
        Some(CliCommand::Check) => Command::Check,
        Some(CliCommand::Registry { command: RegistryCommand::Export { file } }) => Command::Export(file),
        Some(CliCommand::Registry { command: RegistryCommand::Import { file } }) => Command::Import(file),
        Some(CliCommand::Batch(batch)) => Command::Batch(batch.resolve(job_index).map_err(|problem| usage(&problem))?),
        Some(CliCommand::Providers { command: None }) => Command::Providers,
        Some(CliCommand::Providers { command: Some(ProvidersCommand::Check { file }) }) => Command::CheckProvider(file),
    })
}

/// clap's message for `error` on one line, without the usage and tips it adds.
fn problem(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let message = rendered.split("\n\n").next().unwrap_or_default();
    let lines: Vec<&str> = message.strip_prefix("error: ").unwrap_or(message).lines().map(str::trim).collect();
    lines.join(" ")
}

/// The command whose `--help` `args` need: the program and the subcommands named first.
fn command_path(args: &[OsString]) -> String {
    let mut command = Cli::command();
    let mut path = vec![SERVER_NAME.to_owned()];
    for word in args.iter().skip(1) {
        let Some(sub) = word.to_str().and_then(|word| command.find_subcommand(word)).cloned() else { break };
        path.push(sub.get_name().to_owned());
        command = sub;
    }
    path.join(" ")
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let command = match parse_command(&args, std::env::var("JOB_COMPLETION_INDEX").ok().as_deref()) {
        Ok(command) => command,
        Err(Stop::Print(text)) => {
            // A closed pipe (`--help | head`) is not an error worth a panic.
            let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
            return ExitCode::SUCCESS;
        }
        Err(Stop::Usage(text)) => {
            eprint!("{text}");
            return ExitCode::from(2);
        }
    };
    if let Command::CheckProvider(file) = &command {
        return check_provider(file, Settings::from_process_env());
    }
    let settings = match (Settings::from_process_env(), &command) {
        (Ok(settings), Command::Serve { http: Some(address) }) => settings.with_http_listen(address),
        (settings, _) => settings,
    };
    let settings = match settings {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("stratigraphic-amenity: bad setting: {error}");
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Check => check(&settings),
        Command::Export(file) => export(&settings, file.as_deref()),
        Command::Import(file) => import(&settings, &file),
        Command::Providers => list_providers(&settings),
        Command::Serve { .. } => serve(settings),
        Command::Batch(args) => batch(settings, args),
        Command::CheckProvider(_) => unreachable!("answered above"),
    }
}

/// `stratigraphic-amenity batch`: the tools on a manifest's maps, in this process.
fn batch(settings: Settings, args: BatchArgs) -> ExitCode {
    stratigraphic_amenity::log::init_logging(&settings.log_filter);
    trace::install_panic_hook();
    let app = match App::start(settings, stratigraphic_amenity::adapter::envelope_for) {
        Ok(app) => std::sync::Arc::new(app),
        Err(error) => {
            eprintln!("stratigraphic-amenity: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the Tokio runtime starts");
    runtime.block_on(stratigraphic_amenity::batch::run(app, args))
}

fn serve(settings: Settings) -> ExitCode {
    stratigraphic_amenity::log::init_logging(&settings.log_filter);
    trace::install_panic_hook();
    let http = match settings.http_listen.map(|_| HttpServer::configure(&settings)).transpose() {
        Ok(http) => http,
        Err(error) => {
            eprintln!("stratigraphic-amenity: cannot start: {error}");
            return ExitCode::from(2);
        }
    };
    let state = match ServerState::start(settings) {
        Ok(state) => state,
        Err(error) => {
            eprintln!("stratigraphic-amenity: cannot start: {error}");
            match &error {
                StartupError::Registry(RegistryError::Corrupt { location, .. }) => {
                    eprintln!("error.code: registry_corrupt\n{}", corrupt_registry_advice(location))
                }
                StartupError::Assets(_) => return ExitCode::from(2),
                _ => {}
            }
            return ExitCode::FAILURE;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the Tokio runtime starts");
    let server = GeomapServer::new(state);
    let outcome = runtime.block_on(async {
        let state = server.state();
        let transport = if http.is_some() { "http" } else { "stdio" };
        tracing::info!(event = %"server_start", version = %SERVER_VERSION, transport = %transport, data_root = %state.settings().data_root.display());
        let stop = CancellationToken::new();
        tokio::spawn(stop_on_signal(stop.clone()));
        match http {
            Some(http) => {
                let drained = CancellationToken::new();
                let mut serving = tokio::spawn(http.serve(server.clone(), stop.clone(), drained.clone()));
                tokio::select! {
                    served = &mut serving => return served.expect("the HTTP server does not panic").map_err(Into::into),
                    () = stop.cancelled() => {}
                }
                drain(state).await;
                drained.cancel();
                serving.await.expect("the HTTP server does not panic")?;
            }
            None => {
                let running = match server.clone().serve(rmcp::transport::io::stdio_pipes()).await {
                    Ok(running) => running,
                    Err(ServerInitializeError::ExpectedInitializeRequest(None) | ServerInitializeError::ConnectionClosed(_)) => {
                        tracing::info!(event = %"server_stop", "standard input ended before the client initialized; nothing to serve");
                        return Ok(());
                    }
                    Err(error) => return Err(error.into()),
                };
                let cancel = running.cancellation_token();
                tokio::select! {
                    ended = running.waiting() => { ended?; }
                    () = stop.cancelled() => {
                        drain(state).await;
                        cancel.cancel();
                    }
                }
            }
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("the MCP server ended with an error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Cancels `stop` at the first SIGTERM or SIGINT.
async fn stop_on_signal(stop: CancellationToken) {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM can be watched");
    let signal = tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = tokio::signal::ctrl_c() => "SIGINT",
    };
    tracing::info!(event = %"server_stop", signal = %signal, "stopping: no new connections; calls in flight may finish");
    stop.cancel();
}

/// Lets the calls in flight finish within `GEOMAP_SHUTDOWN_GRACE`, then cancels the rest (each still
/// writes its log line, as cancelled).
async fn drain(state: &ServerState) {
    let grace = state.settings().shutdown_grace;
    if tokio::time::timeout(grace, state.calls.idle()).await.is_err() {
        tracing::warn!(event = %"server_stop", calls = state.calls.count(), "the grace period ({grace:?}, GEOMAP_SHUTDOWN_GRACE) is over: cancelling the calls still running");
        state.stopping.cancel();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), state.calls.idle()).await;
    }
}

/// A runtime for the subcommands that call providers.
fn block_on<T>(work: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the Tokio runtime starts").block_on(work)
}

/// `stratigraphic-amenity providers`: every provider found, and whether it can serve.
fn list_providers(settings: &Settings) -> ExitCode {
    let catalog = match Catalog::for_settings(settings) {
        Ok(catalog) => catalog,
        Err(error) => {
            eprintln!("stratigraphic-amenity: bad setting: {error}");
            return ExitCode::from(2);
        }
    };
    let set = block_on(ProviderSet::load(settings));
    let mut out = String::new();
    let folders: Vec<String> = geomap_providers::first_party_folders().iter().map(|p| p.display().to_string()).collect();
    out.push_str(&format!(
        "first-party providers are looked for in: {}
",
        folders.join(", ")
    ));
    let roots: Vec<String> = settings.provider_roots.iter().map(|p| p.display().to_string()).collect();
    out.push_str(&format!(
        "provider roots (GEOMAP_PROVIDER_ROOTS): {}
",
        roots.join(", ")
    ));
    out.push_str(&format!(
        "enabled (GEOMAP_PROVIDERS): {}
",
        settings.providers.as_ref().map_or("all found".into(), |p| p.join(", "))
    ));
    let mut unusable = 0;
    for entry in set.entries() {
        let origin = match entry.origin {
            Origin::FirstParty => "first-party".to_owned(),
            Origin::ProviderRoot { index } => format!("provider root [{index}]"),
        };
        let state = match &entry.state {
            LoadState::NotEnabled => "found, not enabled".to_owned(),
            LoadState::Failed(LoadFailure::Incompatible(detail)) => format!("NOT LOADABLE: {detail}"),
            LoadState::Failed(LoadFailure::Runtime { failure, detail }) => {
                format!("NOT LOADABLE: it failed describing itself ({}): {detail}", failure.as_str())
            }
            LoadState::Loaded(loaded) => {
                let d = loaded.provider.descriptor();
                let kinds: Vec<&str> = [(d.serves(Capability::Lookup), "lookup"), (d.serves(Capability::Knowledge), "knowledge")]
                    .into_iter()
                    .filter(|(on, _)| *on)
                    .map(|(_, kind)| kind)
                    .collect();
                let missing = unusable_assets(&d.assets, &catalog, settings);
                let ready = match missing.as_slice() {
                    [] => "ready".to_owned(),
                    ids => format!("not ready: missing assets {}\n{}", ids.join(", "), asset_steps(ids, &catalog, settings)),
                };
                format!("{} {}, serves {}; {ready}", d.name, d.version, kinds.join(" and "))
            }
        };
        if matches!(entry.state, LoadState::Failed(_)) {
            unusable += 1;
        }
        let limits = entry.limits;
        out.push_str(&format!(
            "{:<18} {origin}: {}\n{:<18} limits: deadline {:?}, memory {} MiB, output {} KiB; {state}\n",
            entry.name,
            entry.path.display(),
            "",
            limits.deadline,
            limits.memory_bytes >> 20,
            limits.output_bytes >> 10
        ));
    }
    for name in &set.enabled_but_absent {
        unusable += 1;
        out.push_str(&format!("{name:<18} NOT FOUND: GEOMAP_PROVIDERS enables it, but no component of that name is in any folder above\n"));
    }
    for problem in &set.problems {
        out.push_str(&format!("note: {problem}\n"));
    }
    let _ = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes());
    if unusable == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Those of `ids` that are neither installed nor the operator's own copy (or that the catalog lacks).
fn unusable_assets<'a>(ids: &'a [String], catalog: &Catalog, settings: &Settings) -> Vec<&'a str> {
    let usable = |id: &String| catalog.get(id).is_some_and(|asset| geomap_assets::status(asset, &settings.data_root).state.usable());
    ids.iter().filter(|id| !usable(id)).map(String::as_str).collect()
}

/// What an operator does to make the assets `ids` usable: the install command for those the
/// catalog has (approved or declared), the config lines to add for those it does not.
fn asset_steps(ids: &[&str], catalog: &Catalog, settings: &Settings) -> String {
    let config = settings.config_file.as_ref().map_or("the config file (name it with GEOMAP_CONFIG)".to_owned(), |file| format!("{}", file.display()));
    let (known, unknown): (Vec<&str>, Vec<&str>) = ids.iter().partition(|id| catalog.get(id).is_some());
    let mut steps = String::new();
    if !known.is_empty() {
        steps.push_str(&format!("    install: stratigraphic-amenity-assets {} --root \"{}\"\n", known.join(" "), settings.data_root.display()));
    }
    for id in unknown {
        let [folder, sources] = geomap_assets::declaration_lines(id, "<file>");
        let indent = |lines: &str| lines.lines().map(|line| format!("        {line}\n")).collect::<String>();
        steps.push_str(&format!(
            "    {id} is not in this server's catalog: declare it in {config}, either as your own folder\n{}    or as files to install, each pinned (then: stratigraphic-amenity-assets {id})\n{}",
            indent(&folder),
            indent(&sources)
        ));
    }
    steps.trim_end().to_owned()
}

/// `stratigraphic-amenity providers check FILE.wasm`: loads one component as the server would, and
/// says what enables it: the file name the server will read, the settings, and its assets.
fn check_provider(file: &Path, settings: Result<Settings, SettingsError>) -> ExitCode {
    let checked = match block_on(geomap_providers::check_file(file)) {
        Ok(checked) => checked,
        Err(problem) => {
            eprintln!("stratigraphic-amenity: {} is not a usable provider: {problem}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let d = &checked.descriptor;
    let kinds: Vec<&str> = [(d.serves(Capability::Lookup), "lookup"), (d.serves(Capability::Knowledge), "knowledge")]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, kind)| kind)
        .collect();
    println!("ok: {} {} exports geomap:provider@{}.{}.x", d.name, d.version, geomap_providers::SUPPORTED_WORLD.0, geomap_providers::SUPPORTED_WORLD.1);
    println!("description: {}", d.description);
    println!("serves: {}{}", kinds.join(", "), if d.needs_area { " (knowledge needs an area)" } else { "" });
    println!("assets: {}", if d.assets.is_empty() { "none".to_owned() } else { d.assets.join(", ") });
    println!("options schema: {}", d.options_schema);
    let settings = match settings {
        Ok(settings) => settings,
        Err(error) => {
            println!("to enable it: fix this server's settings first ({error}), then run this check again");
            return ExitCode::SUCCESS;
        }
    };
    let roots: Vec<String> = settings.provider_roots.iter().map(|root| root.display().to_string()).collect();
    let target = settings.provider_roots.first().map_or_else(|| format!("{}.wasm", d.name), |root| root.join(format!("{}.wasm", d.name)).display().to_string());
    println!("to enable it:");
    println!("  1. copy it to {target} (any folder of GEOMAP_PROVIDER_ROOTS: {}); the server reads <name>.wasm, `_` counting as `-`", roots.join(", "));
    if !checked.named_as_loaded {
        println!(
            "     (under its present name, {}, the server would not load it: a file's name must be the provider's)",
            file.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    match &settings.providers {
        None => println!("  2. GEOMAP_PROVIDERS is unset, so every provider found is enabled"),
        Some(enabled) if enabled.contains(&d.name) => println!("  2. GEOMAP_PROVIDERS already enables {}", d.name),
        Some(enabled) => println!("  2. add {} to GEOMAP_PROVIDERS: GEOMAP_PROVIDERS={},{}", d.name, enabled.join(","), d.name),
    }
    let catalog = match Catalog::for_settings(&settings) {
        Ok(catalog) => catalog,
        Err(error) => {
            println!("  3. fix the config file first: {error}");
            return ExitCode::SUCCESS;
        }
    };
    let missing = unusable_assets(&d.assets, &catalog, &settings);
    match missing.as_slice() {
        [] => println!("  3. its assets are ready{}", if d.assets.is_empty() { " (it reads none)" } else { "" }),
        ids => println!("  3. make its assets ready:\n{}", asset_steps(ids, &catalog, &settings)),
    }
    println!("  4. restart the server; `stratigraphic-amenity providers` then shows it ready");
    ExitCode::SUCCESS
}

/// What the operator reads about a registry that failed: the error and, when
/// the file is damaged, how to recover.
fn registry_problem(error: &RegistryError) -> String {
    match error {
        RegistryError::Corrupt { location, .. } => format!("registry: {error}\n        {}", corrupt_registry_advice(location).replace('\n', "\n        ")),
        _ => format!("registry: {error}"),
    }
}

/// The recovery steps for a damaged or foreign registry (which the server never touches).
fn corrupt_registry_advice(location: &Location) -> String {
    let steps = match location {
        Location::File(path) => format!(
            "The registry file is left untouched. To recover, stop every server on this data root, move it aside and start again:\n    recover with: {}",
            registry::recovery_command(path, SystemTime::now())
        ),
        Location::Database(_) => format!("The registry is left untouched. To recover, {}.", registry::recovery_step(location, SystemTime::now())),
    };
    format!("{steps}\nthen restore a backup (`stratigraphic-amenity registry import FILE`) or register the maps again.")
}

/// `stratigraphic-amenity registry export [FILE]`: the whole registry as JSON,
/// written to FILE atomically (or to standard output).
fn export(settings: &Settings, file: Option<&Path>) -> ExitCode {
    let registry = match Registry::open(&settings.data_root, settings.registry_url.as_deref()) {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("stratigraphic-amenity: cannot open the registry: {}", registry_problem(&error));
            return ExitCode::FAILURE;
        }
    };
    let outcome = match file {
        None => registry.export(std::io::stdout().lock()),
        Some(file) => {
            let mut temp_name = file.as_os_str().to_owned();
            temp_name.push(".partial");
            let temp = PathBuf::from(temp_name);
            std::fs::File::create(&temp)
                .map_err(|source| RegistryError::Io { action: "create", path: temp.clone(), source })
                .and_then(|out| registry.export(std::io::BufWriter::new(out)))
                .and_then(|maps| {
                    std::fs::rename(&temp, file).map(|()| maps).map_err(|source| RegistryError::Io { action: "rename", path: temp.clone(), source })
                })
                .inspect_err(|_| {
                    let _ = std::fs::remove_file(&temp);
                })
        }
    };
    match outcome {
        Ok(maps) => {
            eprintln!("stratigraphic-amenity: exported {maps} maps from {}", registry.location());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("stratigraphic-amenity: export failed: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `stratigraphic-amenity registry import FILE`: restores an export into an empty data root.
fn import(settings: &Settings, file: &Path) -> ExitCode {
    let outcome = RegistryDocument::read(file)
        .and_then(|document| Registry::open(&settings.data_root, settings.registry_url.as_deref()).and_then(|registry| registry.import(&document)));
    match outcome {
        Ok(imported) => {
            eprintln!(
                "stratigraphic-amenity: imported {} maps, {} revisions, {} knowledge bundles and {} layouts, readings and unit extractions from {}",
                imported.maps,
                imported.revisions,
                imported.bundles,
                imported.documents,
                file.display()
            );
            ExitCode::SUCCESS
        }
        Err(RegistryError::Corrupt { location: Location::File(path), problem }) if path == file => {
            eprintln!("stratigraphic-amenity: {} is not a registry export: {problem}", file.display());
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("stratigraphic-amenity: import failed: {}", registry_problem(&error));
            ExitCode::FAILURE
        }
    }
}

/// `stratigraphic-amenity check`: reports every setting and whether the server could start.
fn check(settings: &Settings) -> ExitCode {
    let mut report = format!("{SERVER_NAME} {SERVER_VERSION}: settings check\n");
    let mut problems = 0;
    let mut line = |ok: bool, text: String| {
        if !ok {
            problems += 1;
        }
        report.push_str(&format!("{} {text}\n", if ok { "ok     " } else { "PROBLEM" }));
    };
    line(true, format!("config file: {}", settings.config_file.as_ref().map_or("(none)".into(), |p| p.display().to_string())));
    if settings.data_root.is_dir() {
        line(true, format!("data root: {}", settings.data_root.display()));
        let legacy = settings.data_root.join(registry::LEGACY_FILE);
        if legacy.exists() {
            match RegistryDocument::read(&legacy) {
                Ok(document) => line(true, format!("{}: {} maps, imported into the database at the next start", legacy.display(), document.maps.len())),
                Err(error) => line(false, registry_problem(&error)),
            }
        }
        let url = settings.registry_url.as_deref();
        match Registry::open_to_check(&settings.data_root, url).and_then(|registry| registry.map(|r| r.health().map(|health| (r, health))).transpose()) {
            Ok(None) if url.is_some() => {
                line(true, "registry: the PostgreSQL database GEOMAP_REGISTRY_URL names is empty (its tables are created at start)".into())
            }
            Ok(None) => line(true, format!("registry: {} (created at start)", settings.data_root.join(registry::DATABASE_FILE).display())),
            Ok(Some((registry, health))) => {
                let sizes = format!("{} maps, {} revisions", health.counts.maps, health.counts.revisions);
                match health.problems.is_empty() {
                    true => line(true, format!("registry: {} ({sizes}; integrity check passed)", registry.location())),
                    false => {
                        let found = CorruptProblem::Malformed(format!("the integrity check found: {}", health.problems.join("; ")));
                        line(false, registry_problem(&RegistryError::Corrupt { location: registry.location().clone(), problem: found }))
                    }
                }
                match registry.check_writable() {
                    Ok(()) => line(true, "data root is writable".into()),
                    Err(error) => line(false, format!("data root is not writable: {error}")),
                }
            }
            Err(error) => line(false, registry_problem(&error)),
        }
    } else {
        line(true, format!("data root: {} (will be created at start)", settings.data_root.display()));
    }
    for (index, root) in settings.map_roots.iter().enumerate() {
        let role = if index == 0 { ", resolves relative paths" } else { "" };
        match MapRoots::open(std::slice::from_ref(root)) {
            Ok(_) => line(true, format!("map root [{index}]: {}{role}", root.display())),
            Err(_) if !settings.map_roots_configured => line(true, format!("map root [{index}]: {} (will be created at start){role}", root.display())),
            Err((_, error)) => line(false, format!("map root [{index}]: {} cannot be opened: {error}", root.display())),
        }
    }
    line(true, format!("media limits: {} bytes, {} pixels", settings.max_image_bytes, settings.max_image_pixels));
    let georef = geomap_georef::Readiness::check_for(settings.georef_compression);
    match georef.missing.is_empty() {
        true => line(true, format!("georeferencing: GDAL {}, PROJ database found", georef.gdal_version)),
        false => line(false, format!("georeferencing: GDAL {} is missing {}", georef.gdal_version, georef.missing.join(", "))),
    }
    line(
        true,
        format!(
            "georeferenced images: Cloud Optimized GeoTIFF, {} compression (GEOMAP_GEOREF_COMPRESSION), {} worker threads (GEOMAP_WORKER_THREADS), \
             warp buffers and block cache up to {} MiB each (GEOMAP_GEOREF_MEMORY)",
            settings.georef_compression.name(),
            settings.worker_threads,
            settings.georef_memory >> 20
        ),
    );
    let roots: Vec<String> = settings.provider_roots.iter().map(|p| p.display().to_string()).collect();
    line(true, format!("provider roots: {}", roots.join(", ")));
    line(true, format!("providers: {}", settings.providers.as_ref().map_or("all found".into(), |p| p.join(", "))));
    line(
        true,
        format!(
            "preparation over MCP: detectors {}, knowledge {}",
            if settings.detector_preparation { "offered" } else { "withheld" },
            if settings.knowledge_preparation { "offered" } else { "withheld" }
        ),
    );
    line(true, format!("asset mirror: {}", settings.asset_mirror.as_deref().unwrap_or("(none: upstream)")));
    match Catalog::for_settings(settings) {
        Ok(catalog) => {
            for asset in catalog.assets() {
                let found = geomap_assets::status(asset, &settings.data_root);
                let state = format!("{:?}", found.state).to_lowercase();
                let problem =
                    found.problem.map(|problem| format!(": {problem}; install it again with stratigraphic-amenity-assets {}", asset.id)).unwrap_or_default();
                line(found.state != AssetState::Corrupt, format!("asset {}: {state} at {} ({}){problem}", asset.id, found.path.display(), asset.licence));
            }
        }
        Err(error) => line(false, format!("assets: {error}")),
    }
    match settings.http_listen {
        None => line(true, "transport: stdio (GEOMAP_HTTP_LISTEN unset)".into()),
        Some(address) => match HttpServer::configure(settings) {
            Ok(http) => line(true, format!("transport: streamable HTTP on {address} at /mcp; {}", http.describe_access())),
            Err(error) => line(false, format!("transport: streamable HTTP on {address}: {error}")),
        },
    }
    line(true, format!("heavy calls at once: {} (GEOMAP_MAX_HEAVY_CALLS)", settings.max_heavy_calls));
    line(true, format!("shutdown grace: {:?} (GEOMAP_SHUTDOWN_GRACE)", settings.shutdown_grace));
    line(true, format!("log filter: {}", settings.log_filter));
    let ready = problems == 0;
    report.push_str(&match ready {
        true => "result: ready to serve\n".to_owned(),
        false => format!("result: {problems} problem(s); the server would not start or would fail calls\n"),
    });
    // A closed pipe (`check | head`) is not an error worth a panic.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), report.as_bytes());
    if ready { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stratigraphic_amenity::batch::Step;

    fn parse(words: &[&str], job_index: Option<&str>) -> Result<Command, Stop> {
        let args: Vec<OsString> = std::iter::once("stratigraphic-amenity").chain(words.iter().copied()).map(OsString::from).collect();
        parse_command(&args, job_index)
    }

    /// The text `words` print (help or the version).
    fn printed(words: &[&str]) -> String {
        match parse(words, None) {
            Err(Stop::Print(text)) => text,
            other => panic!("{words:?}: {other:?}"),
        }
    }

    #[test]
    fn the_parser_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_command_shape_parses() {
        let path = |text: &str| PathBuf::from(text);
        let all = [Step::Register, Step::Layout, Step::Georef, Step::Units];
        let batch = |manifest: &str, shard, steps: &[Step]| Command::Batch(BatchArgs { manifest: path(manifest), shard, steps: steps.to_vec() });
        for (words, job_index, command) in [
            (&[][..], None, Command::Serve { http: None }),
            (&["serve"], None, Command::Serve { http: None }),
            (&["serve", "--http", "127.0.0.1:8080"], None, Command::Serve { http: Some("127.0.0.1:8080".into()) }),
            (&["serve", "--http=0.0.0.0:80"], None, Command::Serve { http: Some("0.0.0.0:80".into()) }),
            (&["check"], None, Command::Check),
            (&["registry", "export"], None, Command::Export(None)),
            (&["registry", "export", "backup.json"], None, Command::Export(Some(path("backup.json")))),
            (&["registry", "import", "backup.json"], None, Command::Import(path("backup.json"))),
            (&["batch", "maps.txt"], None, batch("maps.txt", (0, 1), &all)),
            (&["batch", "maps.txt", "--shard", "1/4", "--steps", "units,register"], None, batch("maps.txt", (1, 4), &[Step::Register, Step::Units])),
            (&["batch", "maps.txt", "--shard", "4"], Some("3"), batch("maps.txt", (3, 4), &all)),
            (&["providers"], None, Command::Providers),
            (&["providers", "check", "k2_rocks.wasm"], None, Command::CheckProvider(path("k2_rocks.wasm"))),
        ] {
            assert_eq!(parse(words, job_index).unwrap(), command, "{words:?}");
        }
    }

    #[test]
    fn help_lists_the_commands_and_every_setting() {
        let help = printed(&["--help"]);
        assert!(help.contains("Usage: stratigraphic-amenity [COMMAND]"), "{help}");
        for command in ["serve", "check", "registry", "batch", "providers"] {
            assert!(help.contains(&format!("\n  {command} ")), "{command}: {help}");
        }
        assert!(help.ends_with(&variables::help_text()), "{help}");
        for variable in variables::VARIABLES {
            assert!(help.contains(&format!("\n    {} ", variable.name)), "{}: {help}", variable.name);
        }
        assert_eq!(printed(&["-h"]), help);
        assert_eq!(printed(&["help"]), help);
    }

    #[test]
    fn every_command_has_its_help() {
        let batch = printed(&["batch", "--help"]);
        for word in [
            "Usage: stratigraphic-amenity batch [OPTIONS] <MANIFEST>",
            "--shard <I/N>",
            "--steps <STEP,…>",
            "JOB_COMPLETION_INDEX",
            "JSON line",
            "Exit status",
            "internal_error",
        ] {
            assert!(batch.contains(word), "{word}: {batch}");
        }
        assert_eq!(printed(&["help", "batch"]), batch);
        for (words, says) in [
            (&["serve", "--help"][..], "--http <ADDR:PORT>"),
            (&["check", "--help"], "integrity check"),
            (&["registry", "--help"], "export"),
            (&["registry", "export", "--help"], "[FILE]"),
            (&["registry", "import", "--help"], "<FILE>"),
            (&["providers", "--help"], "check"),
            (&["providers", "check", "--help"], "<FILE.wasm>"),
            (&["batch", "-h"], "<MANIFEST>"),
        ] {
            assert!(printed(words).contains(says), "{words:?}: {}", printed(words));
        }
    }

    #[test]
    fn the_version_is_the_servers() {
        assert_eq!(printed(&["--version"]), format!("stratigraphic-amenity {SERVER_VERSION}\n"));
        assert_eq!(printed(&["-V"]), printed(&["--version"]));
    }

    #[test]
    fn a_usage_error_is_one_line_and_a_pointer_to_help() {
        for (words, job_index, problem, help) in [
            (&["--bogus"][..], None, "unexpected argument '--bogus'", "stratigraphic-amenity"),
            (&["bogus"], None, "unrecognized subcommand 'bogus'", "stratigraphic-amenity"),
            (&["serve", "--bogus"], None, "unexpected argument '--bogus'", "stratigraphic-amenity serve"),
            (&["serve", "--http"], None, "a value is required for '--http <ADDR:PORT>'", "stratigraphic-amenity serve"),
            (&["check", "extra"], None, "unexpected argument 'extra'", "stratigraphic-amenity check"),
            (&["registry"], None, "'stratigraphic-amenity registry' requires a subcommand", "stratigraphic-amenity registry"),
            (&["registry", "import"], None, "required arguments were not provided: <FILE>", "stratigraphic-amenity registry import"),
            (&["registry", "export", "a.json", "b.json"], None, "unexpected argument 'b.json'", "stratigraphic-amenity registry export"),
            (&["providers", "bogus"], None, "unrecognized subcommand 'bogus'", "stratigraphic-amenity providers"),
            (&["batch"], None, "required arguments were not provided: <MANIFEST>", "stratigraphic-amenity batch"),
            (
                &["batch", "maps.txt", "--shard", "2/2"],
                None,
                "invalid value '2/2' for '--shard <I/N>': the index must be below the count",
                "stratigraphic-amenity batch",
            ),
            (&["batch", "maps.txt", "--shard", "2"], None, "--shard 2 needs JOB_COMPLETION_INDEX", "stratigraphic-amenity batch"),
            (&["batch", "maps.txt"], Some("0"), "JOB_COMPLETION_INDEX is set", "stratigraphic-amenity batch"),
        ] {
            let Err(Stop::Usage(text)) = parse(words, job_index) else { panic!("{words:?} is a usage error") };
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 2, "{words:?}: {text}");
            assert!(lines[0].starts_with("error: ") && lines[0].contains(problem), "{words:?}: {text}");
            assert_eq!(lines[1], format!("For more information, try '{help} --help'."), "{words:?}");
        }
    }
}
