//! The `stratigraphic-amenity` binary: serve MCP over stdio, or check the set-up.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use geomap_app::{App, StartupError};
use geomap_assets::{AssetState, Catalog};
use geomap_model::settings::{Settings, SettingsError, variables};
use geomap_model::trace;
use geomap_providers::{Capability, LoadFailure, LoadState, Origin, ProviderSet};
use geomap_store::registry::{self, CorruptProblem, Location, Registry, RegistryDocument, RegistryError};
use geomap_store::roots::MapRoots;
use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use stratigraphic_amenity::batch::BatchArgs;
use stratigraphic_amenity::http::HttpServer;
use stratigraphic_amenity::mcp::{GeomapServer, SERVER_NAME, SERVER_VERSION, ServerState};
use tokio_util::sync::CancellationToken;

const HELP: &str = "\
stratigraphic-amenity — an MCP server for scanned geologic maps

USAGE:
    stratigraphic-amenity            serve MCP over stdio (what MCP hosts run)
    stratigraphic-amenity serve --http ADDR:PORT
                                     serve MCP over streamable HTTP at /mcp (health check at /healthz)
    stratigraphic-amenity check      validate settings, data root and registry (full integrity check), print them, exit
    stratigraphic-amenity registry export [FILE]
                                     write the whole registry as JSON to FILE (default: standard output)
    stratigraphic-amenity registry import FILE
                                     restore an exported registry into an empty data root
    stratigraphic-amenity batch MANIFEST [--shard I/N] [--steps register,layout,georef,units]
                                     run the tools on every map of MANIFEST (one path per line), skipping what the
                                     registry says is done; one JSON line per map and step on stdout. `--shard N`
                                     takes I from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)
    stratigraphic-amenity providers  list the providers found, enabled, loadable and ready, and why not
    stratigraphic-amenity providers check FILE.wasm
                                     check that a provider component loads: its world version, name, options schema
    stratigraphic-amenity --help     this text
    stratigraphic-amenity --version  the version

SETTINGS (environment; GEOMAP_CONFIG may name a TOML file with the same keys,
lower case without GEOMAP_; the environment wins):
";

enum Command {
    Serve { http: Option<String> },
    Check,
    Export(Option<PathBuf>),
    Import(PathBuf),
    Providers,
    Batch(stratigraphic_amenity::batch::BatchArgs),
    CheckProvider(PathBuf),
    Help,
    Version,
}

fn parse_command(args: &[String]) -> Result<Command, String> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        [] | ["serve"] => Ok(Command::Serve { http: None }),
        ["serve", "--http", address] => Ok(Command::Serve { http: Some((*address).to_owned()) }),
        ["serve", ..] => Err("serve takes nothing (stdio), or `--http ADDR:PORT`".to_owned()),
        ["check"] => Ok(Command::Check),
        ["--help" | "-h" | "help"] => Ok(Command::Help),
        ["--version" | "-V"] => Ok(Command::Version),
        ["registry", "export"] => Ok(Command::Export(None)),
        ["registry", "export", file] => Ok(Command::Export(Some(PathBuf::from(file)))),
        ["registry", "import", file] => Ok(Command::Import(PathBuf::from(file))),
        ["providers"] => Ok(Command::Providers),
        ["providers", "check", file] => Ok(Command::CheckProvider(PathBuf::from(file))),
        ["providers", ..] => Err("providers takes nothing, or `check FILE.wasm`".to_owned()),
        ["batch", rest @ ..] => BatchArgs::parse(rest, std::env::var("JOB_COMPLETION_INDEX").ok().as_deref()).map(Command::Batch),
        ["registry", ..] => Err("registry takes `export [FILE]` or `import FILE`".to_owned()),
        [one] => Err(format!("unknown argument {one:?}")),
        _ => Err(format!("unknown arguments: {}", args.join(" "))),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match parse_command(&args) {
        Ok(command) => command,
        Err(problem) => {
            eprintln!("stratigraphic-amenity: {problem}\n\n{HELP}{}", variables::help_text());
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => {
            print!("{HELP}{}", variables::help_text());
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            println!("{SERVER_NAME} {SERVER_VERSION}");
            return ExitCode::SUCCESS;
        }
        Command::CheckProvider(file) => return check_provider(&file, Settings::from_process_env()),
        Command::Serve { .. } | Command::Check | Command::Export(_) | Command::Import(_) | Command::Providers | Command::Batch(_) => {}
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
        Command::Help | Command::Version | Command::CheckProvider(_) => unreachable!("answered above"),
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
