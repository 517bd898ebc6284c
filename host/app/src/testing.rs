//! What the use cases' unit tests share: an application on a data root and a
//! map root of the test's own, scans and map bundles drawn there, layouts
//! stored as a layout use case would store them, and a progress that records
//! what it heard.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use geomap_model::errors::failure::FailedCall;
use geomap_model::errors::{Envelope, ErrorCode};
use geomap_model::progress::{Progress, ProgressUpdate};
use geomap_model::settings::Settings;
use geomap_store::registry::{Document, StoredDocument};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{App, AppError};

/// An application with its own data root and map root, removed with it.
pub struct TestApp {
    /// The application.
    pub app: Arc<App>,
    /// The map root (the first and only one).
    pub maps: PathBuf,
    /// Holds the folders.
    _folder: tempfile::TempDir,
}

/// How the tests word a failure: its code where the test cares (a provider's or an asset's), its text.
fn describe(error: &AppError, call: &FailedCall<'_>) -> Envelope {
    let code = match error {
        AppError::Provider(_) => ErrorCode::UnknownProvider,
        AppError::Asset(_) => ErrorCode::InstallFailed,
        AppError::Vision(_) => ErrorCode::MissingExtra,
        _ => ErrorCode::InternalError,
    };
    Envelope::new(code, format!("{}: {error}", call.tool), call.trace_id.as_str())
}

impl TestApp {
    /// An application with the default settings but for the folders and `variables`.
    pub fn new(variables: &[(&str, &str)]) -> TestApp {
        TestApp::in_folder(tempfile::tempdir().unwrap(), variables)
    }

    /// An application whose data root and map root are in `folder`, with `variables` set.
    pub fn in_folder(folder: tempfile::TempDir, variables: &[(&str, &str)]) -> TestApp {
        let (data, maps) = (folder.path().join("data"), folder.path().join("maps"));
        std::fs::create_dir_all(&maps).unwrap();
        let settings = Settings::load(|name| match name {
            "GEOMAP_DATA_ROOT" => Some(data.clone().into_os_string()),
            "GEOMAP_MAP_ROOTS" => Some(maps.clone().into_os_string()),
            other => variables.iter().find(|(variable, _)| *variable == other).map(|(_, value)| (*value).into()),
        })
        .unwrap();
        TestApp { app: Arc::new(App::start(settings, describe).unwrap()), maps, _folder: folder }
    }

    /// Writes a `width`×`height` RGB PNG at `name` in the map root, each pixel `colour(x, y)`; its path.
    pub fn scan(&self, name: &str, width: u32, height: u32, colour: impl Fn(u32, u32) -> [u8; 3]) -> PathBuf {
        let path = self.maps.join(name);
        write_png(&path, width, height, colour);
        path
    }

    /// Registers the file `name` of the map root; its map ID.
    pub async fn register(&self, name: &str) -> String {
        self.app.register(crate::maps::RegisterRequest { path: name.to_owned() }).await.unwrap().map_id
    }

    /// Stores a layout of `map_id` as the layout use case would: the main map's box and one legend
    /// entry per swatch colour (`code`, `#rrggbb`), in legend order; its layout ID.
    pub fn store_layout(&self, map_id: &str, (width, height): (u32, u32), main_map: [f64; 4], swatches: &[(&str, &str)]) -> String {
        let layout_id = format!("lay_{}", geomap_model::random_hex(10));
        let [x0, y0, x1, y1] = main_map;
        let entries: Vec<serde_json::Value> = swatches
            .iter()
            .enumerate()
            .map(|(index, (code, colour))| {
                let y = 10.0 + 30.0 * index as f64;
                json!({ "legend": 1, "swatch": { "x0": 0.0, "y0": y, "x1": 20.0, "y1": y + 20.0 }, "text": null, "colour_hex": colour,
                        "colour_name": "test", "score": 1.0, "code": code, "description": format!("{code} unit"), "age_terms": [], "lithology_terms": [] })
            })
            .collect();
        let document = json!({
            "schema": "geomap-layout/v1", "map_id": map_id, "layout_id": layout_id, "title": "A drawn map", "width": width, "height": height,
            "components": [{ "class": "main_map", "bbox": { "x0": x0, "y0": y0, "x1": x1, "y1": y1 }, "score": 1.0 },
                           { "class": "legend", "bbox": { "x0": 0.0, "y0": 0.0, "x1": 40.0, "y1": 40.0 }, "score": 1.0 }],
            "legend_entries": entries, "files": ["layout.json"]
        });
        let record = StoredDocument {
            kind: Document::Layout,
            id: layout_id.clone(),
            map_id: map_id.to_owned(),
            created_at: crate::now(),
            document: serde_json::to_string(&document).unwrap(),
        };
        let staged = self.app.stage(map_id, &layout_id).unwrap();
        self.app.store(staged, "layout.json", &record).unwrap();
        layout_id
    }
}

/// Writes a `width`×`height` RGB PNG at `path`, each pixel `colour(x, y)`.
pub fn write_png(path: &Path, width: u32, height: u32, colour: impl Fn(u32, u32) -> [u8; 3]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().unwrap();
    let pixels: Vec<u8> = (0..height).flat_map(|y| (0..width).map(move |x| (x, y))).flat_map(|(x, y)| colour(x, y)).collect();
    writer.write_image_data(&pixels).unwrap();
}

/// A progress that records every update it hears, with the token that cancels it.
pub fn heard() -> (Progress, Arc<Mutex<Vec<ProgressUpdate>>>, CancellationToken) {
    let updates = Arc::new(Mutex::new(Vec::new()));
    let cancel = CancellationToken::new();
    let into = Arc::clone(&updates);
    (Progress::new(move |update| into.lock().unwrap().push(update), cancel.clone()), updates, cancel)
}

/// The workplace's real upstream files when they hold `files` (a clone with nothing beside it
/// has none: the test is skipped, by name).
pub fn shared(test: &str, files: &[&str]) -> Option<PathBuf> {
    geomap_model::testing::shared_assets(test, files)
}

/// Settings that load the first-party components `./dev` builds (only `providers` enabled) with
/// the upstream knowledge files of `shared` as the operator's own copies, written as a config file
/// in `folder`; `None` when the components are not built (the test is skipped, by name).
pub fn provider_settings(test: &str, folder: &Path, shared: &Path, providers: &str) -> Option<Vec<(String, String)>> {
    let components = geomap_model::testing::components(test, &["ics_timescale", "usgs_seismicity"])?;
    let config = folder.join("geomap.toml");
    let shared = shared.display();
    std::fs::write(&config, format!("[assets.ics-chart]\npath = \"{shared}\"\n\n[assets.usgs-earthquakes-m45]\npath = \"{shared}\"\n")).unwrap();
    Some(vec![
        ("GEOMAP_PROVIDER_ROOTS".to_owned(), components.display().to_string()),
        ("GEOMAP_PROVIDERS".to_owned(), providers.to_owned()),
        ("GEOMAP_CONFIG".to_owned(), config.display().to_string()),
    ])
}

/// Serves the files of `folder` over plain HTTP on loopback (GET `/<name>`), as an asset mirror;
/// its base URL. The server lives as long as the test process.
pub fn mirror(folder: &Path) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let folder = folder.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|read| read > 2) {
                header.clear();
            }
            let name = request_line.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_owned();
            let mut stream = &stream;
            match std::fs::read(folder.join(&name)).ok().filter(|_| !name.contains('/')) {
                Some(body) => {
                    let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                    let _ = stream.write_all(&body);
                }
                None => {
                    let _ = write!(stream, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                }
            }
        }
    });
    base
}

/// The folder of the pinned wheels the ONNX Runtime and the OCR models are installed from
/// (`./dev test` fetches them into `tests/.cache/wheels` before the unit tests); `None`, after
/// saying so, when they are not there (the test is skipped, by name).
pub fn model_wheels(test: &str) -> Option<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/.cache/wheels");
    let wheels = ["onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl", "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"];
    match wheels.iter().find(|wheel| !folder.join(wheel).is_file()) {
        None => Some(folder),
        Some(wheel) => {
            eprintln!("SKIPPED {test}: {} is absent (./dev test fetches it with pip before the unit tests)", folder.join(wheel).display());
            None
        }
    }
}
