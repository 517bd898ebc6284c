//! `geomap_process_image`: the map's layout — its components, and each
//! legend's units with their swatch, colour, code, description and ages —
//! from PEACE's two detectors, from the map's words and colours (PP-OCRv4),
//! or both, stored as a `geomap-layout/v1` document with a crop of every
//! component and an annotated preview. A map bundle's layout is returned as
//! written, with no detector, crop or preview.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::mcp::ServerState;
use crate::mcp::adapter::{ToolError, Warning, warning};
use crate::mcp::arguments::{ArgumentError, ArgumentProblem};
use crate::mcp::progress::{ProgressSink, ProgressUpdate};
use crate::mcp::uris::layout_uri;
use geomap_model::layout::COMPONENT_CLASSES;
use geomap_model::layout::PixelBox;
use geomap_model::trace;
use geomap_store::media;
use geomap_store::media::bundle::{self, MapBundle};
use geomap_store::registry::{Document, StoredDocument};
use geomap_store::sweep::Staged;
use geomap_vision::colour::{colour_name, hex};
use geomap_vision::detect::postprocess::DEFAULT_MIN_SCORE;
use geomap_vision::detect::{COMPONENT_ASSET, Detectors, LEGEND_ASSET, LegendEntry, REQUIREMENTS, score};
use geomap_vision::image::{Resampling, Rgb, decode, label};
use geomap_vision::layout::{WordsLayout, read_layout};
use geomap_vision::models::{Missing, ModelInfo, current_files};
use geomap_vision::ocr::OCR_ASSET;
use geomap_vision::ocr::reader::{Line, Reader};
use geomap_vision::{VisionError, millis};

use super::layout_words::{LegendItem, UnitWords, detected_entry_words, resolve_terms, text_in, unit_words};
use super::{RegisteredMap, open_registered};

/// The schema tag of stored layouts.
pub const LAYOUT_SCHEMA: &str = "geomap-layout/v1";
/// The longer side of the annotated preview, in pixels.
const PREVIEW_SIDE: u32 = 1600;
/// The longest side of a component's crop: larger components are downscaled to it (vision
/// models read at most about 2000 pixels a side, and a resource blob is at most 32 MiB).
const CROP_MAX_SIDE: u32 = 2048;
/// The recogniser's score floor for the layout's words.
const WORDS_MIN_SCORE: f64 = 0.5;

/// Which detectors to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DetectorChoice {
    /// The map's components.
    Components,
    /// The swatches and text of each legend component (needs components).
    Legend,
}

/// Arguments of `geomap_process_image`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessImageArgs {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// Which detectors to run (default both).
    pub detectors: Option<Vec<DetectorChoice>>,
    /// The score floor for boxes, 0–1 (default 0.25).
    pub min_score: Option<f32>,
}

/// One component of the map.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Component {
    /// title, main_map, legend, scale, index_map, cross_section, stratigraphic_column or others.
    pub class: String,
    /// Its box in the scan's pixels.
    pub bbox: PixelBox,
    /// The detector's score (a map bundle's, or 1 when it gives none).
    pub score: f64,
    /// The words read in it: a title's text, a legend's heading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its crop as a PNG resource (none for a map bundle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crop_uri: Option<String>,
    /// The crop's pixels per scan pixel: 1, or less when the component is over 2048 pixels a side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crop_scale: Option<f64>,
}

/// Where a layout came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LayoutSource {
    /// This server's models (PEACE's detectors, the OCR models or both: see `method`), on the scan's pixels.
    Detectors,
    /// The map bundle the map was registered from, as written.
    MapBundle,
}

/// How a layout was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// PEACE's detectors alone (the OCR models are not installed).
    Detector,
    /// The map's words and colours (PEACE's weights are not installed).
    Text,
    /// The detectors' boxes, with the words read inside them.
    Both,
    /// The map bundle, as written.
    MapBundle,
}

/// Milliseconds per stage.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Timings {
    /// Loading the detectors (0 when already loaded).
    pub load_ms: f64,
    /// Decoding the scan.
    pub decode_ms: f64,
    /// The component detector, letterboxing included.
    pub components_ms: f64,
    /// The legend detector on every legend.
    pub legend_ms: f64,
    /// Reading the words (text detection and recognition).
    pub words_ms: f64,
    /// Writing the layout, crops and preview.
    pub write_ms: f64,
}

/// The result of `geomap_process_image`, stored as `layout.json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Layout {
    /// `geomap-layout/v1`.
    pub schema: String,
    /// The map.
    pub map_id: String,
    /// This layout's ID; every call writes a new one.
    pub layout_id: String,
    /// The stored layout as an MCP resource.
    pub resource_uri: String,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// The detectors, or the map bundle the map was registered from.
    pub source: LayoutSource,
    /// How the layout was found: detector, text, both, or map_bundle.
    pub method: Method,
    /// The map's title, when one was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The scan's width in pixels.
    pub width: u32,
    /// The scan's height in pixels.
    pub height: u32,
    /// The components found, best first.
    pub components: Vec<Component>,
    /// The legend entries found, top to bottom per legend.
    pub legend_entries: Vec<LegendItem>,
    /// The models used.
    pub models: Vec<ModelInfo>,
    /// The annotated preview (the scan downscaled, every box drawn in its class's colour, each
    /// component labelled with its index and class); none for a map bundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview_uri: Option<String>,
    /// The preview's box colours by class (empty without a preview).
    pub preview_colours: std::collections::BTreeMap<String, String>,
    /// Time per stage.
    pub timings: Timings,
    /// The files stored with it.
    pub files: Vec<String>,
    /// What the layout was made without (PEACE's weights, the OCR models, a provider), and what to install.
    pub warnings: Vec<Warning>,
}

/// The preview colour of each component class, and of legend swatches and text.
fn class_colour(class: &str) -> [u8; 3] {
    match class {
        "title" => [230, 25, 75],
        "main_map" => [60, 180, 75],
        "legend" => [0, 130, 200],
        "scale" => [245, 130, 48],
        "index_map" => [145, 30, 180],
        "cross_section" => [70, 240, 240],
        "stratigraphic_column" => [240, 50, 230],
        "swatch" => [255, 225, 25],
        "text" => [128, 128, 128],
        _ => [0, 0, 0],
    }
}

/// The loaded detectors, reloaded when their weight files changed since.
fn detectors(state: &ServerState) -> Result<Arc<Detectors>, VisionError> {
    let mut cached = state.detectors.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(loaded) = cached.as_ref().filter(|loaded| loaded.files == current_files(&state.catalog, &state.settings.data_root, &REQUIREMENTS)) {
        return Ok(Arc::clone(loaded));
    }
    let loaded = Arc::new(Detectors::load(&state.catalog, &state.settings.data_root)?);
    *cached = Some(Arc::clone(&loaded));
    Ok(loaded)
}

/// What reads the layout: the detectors, the reader, or both (at least one).
struct Readers {
    detectors: Option<Arc<Detectors>>,
    reader: Option<Arc<Reader>>,
    warnings: Vec<Warning>,
}

/// Loads what can read the layout: the reader alone suffices (PEACE's weights missing become a
/// warning), the detectors alone too (the words are then not read); with neither, the reader's
/// requirements are the error, with any detector model that does not fit and, when the call named
/// its detectors (`asked`), every weight set of those it lacks.
fn readers(state: &ServerState, asked: Option<&[DetectorChoice]>) -> Result<Readers, ToolError> {
    let tool = "geomap_process_image";
    let (detectors, reader) = (detectors(state), super::text_reader(state));
    match (detectors, reader) {
        (Ok(detectors), Ok(reader)) => Ok(Readers { detectors: Some(detectors), reader: Some(reader), warnings: Vec::new() }),
        (Err(missing), Ok(reader)) => {
            let warning = warning(&ToolError::Vision(missing), COMPONENT_ASSET, tool, &state.settings);
            let message = format!("The layout was read from the map's words and colours, without PEACE's detectors. {}", warning.message);
            Ok(Readers { detectors: None, reader: Some(reader), warnings: vec![Warning { message, ..warning }] })
        }
        (Ok(detectors), Err(missing)) => {
            let warning = warning(&ToolError::Vision(missing), OCR_ASSET, tool, &state.settings);
            let message = format!("The layout's words were not read (no title, codes or descriptions). {}", warning.message);
            Ok(Readers { detectors: Some(detectors), reader: None, warnings: vec![Warning { message, ..warning }] })
        }
        (Err(VisionError::NotReady { missing: detector_missing, .. }), Err(VisionError::NotReady { feature, mut missing, detector_error })) => {
            let wanted = |id: &str| match asked {
                None => false,
                Some(chosen) => id == COMPONENT_ASSET || (id == LEGEND_ASSET && chosen.contains(&DetectorChoice::Legend)),
            };
            missing.extend(detector_missing.into_iter().filter(|m| match m {
                Missing::Model { .. } => true,
                Missing::Asset { id, .. } => wanted(id),
                Missing::Library(_) => false,
            }));
            Err(VisionError::NotReady { feature, missing, detector_error }.into())
        }
        (_, Err(error)) => Err(error.into()),
    }
}

/// `geomap_process_image`: loads the detectors and the reader (or says what they lack), decodes
/// the scan, finds its components and legends, reads their words, resolves the ages and rock
/// names through the providers, and stores the layout.
pub async fn process_image(
    state: Arc<ServerState>,
    args: ProcessImageArgs,
    progress: Option<ProgressSink>,
    cancel: CancellationToken,
) -> Result<Layout, ToolError> {
    let min_score = args.min_score.unwrap_or(DEFAULT_MIN_SCORE);
    if !(0.0..=1.0).contains(&min_score) {
        return Err(ArgumentError { field: "/min_score".to_owned(), problem: ArgumentProblem::WrongValue, expected: "a score from 0 to 1".to_owned() }.into());
    }
    let asked = args.detectors.clone();
    let chosen = args.detectors.unwrap_or_else(|| vec![DetectorChoice::Components, DetectorChoice::Legend]);
    if !chosen.contains(&DetectorChoice::Components) {
        let expected = "detectors including \"components\" (the legend detector reads the legends the component detector finds)";
        return Err(ArgumentError { field: "/detectors".to_owned(), problem: ArgumentProblem::WrongValue, expected: expected.to_owned() }.into());
    }
    let (updates, received) = tokio::sync::mpsc::unbounded_channel();
    let forwarding = progress.map(|sink| tokio::spawn(sink.forward(received)));
    let blocking_state = Arc::clone(&state);
    let blocking_updates = updates.clone();
    let blocking_cancel = cancel.clone();
    let found =
        trace::spawn_blocking(move || find_layout(&blocking_state, &args.map_id, (&chosen, asked.as_deref()), min_score, &blocking_updates, &blocking_cancel))
            .await;
    let outcome = match found {
        Ok(Found::Stored(layout)) => Ok(layout),
        Ok(Found::Unstored(mut layout, staged)) => {
            let _ = updates.send(ProgressUpdate { done: 85, total: 100, message: "resolving the legend's ages and rock names".to_owned() });
            let resolved = resolve_terms(&state, &mut layout.legend_entries).await;
            let stored = match resolved {
                Ok(warnings) if !cancel.is_cancelled() => {
                    layout.warnings.extend(warnings);
                    let _ = updates.send(ProgressUpdate { done: 95, total: 100, message: "storing the layout".to_owned() });
                    let storing = Arc::clone(&state);
                    let layout_stored = layout.clone();
                    trace::spawn_blocking(move || store(&storing, staged, &layout_stored)).await
                }
                Ok(_) => Err(VisionError::Cancelled.into()),
                Err(error) => Err(error),
            };
            stored.map(|()| {
                let _ = updates.send(ProgressUpdate { done: 100, total: 100, message: "done".to_owned() });
                layout
            })
        }
        Err(error) => Err(error),
    };
    drop(updates);
    if let Some(forwarding) = forwarding {
        let _ = forwarding.await; // every progress notification goes out before the result
    }
    outcome
}

/// A layout found: a map bundle's, already stored; or a scan's, with its files written in its
/// staged folder.
enum Found {
    Stored(Layout),
    Unstored(Layout, Staged),
}

/// The blocking part of `geomap_process_image`: everything but resolving terms and storing.
fn find_layout(
    state: &ServerState,
    map_id: &str,
    (chosen, asked): (&[DetectorChoice], Option<&[DetectorChoice]>),
    min_score: f32,
    updates: &tokio::sync::mpsc::UnboundedSender<ProgressUpdate>,
    cancel: &CancellationToken,
) -> Result<Found, ToolError> {
    let stage = |done: u64, message: &str| {
        let _ = updates.send(ProgressUpdate { done, total: 100, message: message.to_owned() }); // no receiver when nobody asked
    };
    let between = || if cancel.is_cancelled() { Err(ToolError::Vision(VisionError::Cancelled)) } else { Ok(()) };
    let map = open_registered(state, map_id)?;
    if !map.record.media_type.has_pixels() {
        stage(80, "storing the map bundle's layout");
        let layout = bundle_layout(state, map)?;
        stage(100, "done");
        return Ok(Found::Stored(layout));
    }
    stage(0, "loading the detectors and the OCR models");
    let started = Instant::now();
    let Readers { detectors, reader, warnings } = readers(state, asked)?;
    let load_ms = millis(started);
    between()?;
    stage(5, "decoding the scan");
    let started = Instant::now();
    let image = decode(&map.file, state.settings.max_image_pixels)?;
    let decode_ms = millis(started);
    between()?;
    let method = match (&detectors, &reader) {
        (Some(_), Some(_)) => Method::Both,
        (Some(_), None) => Method::Detector,
        (None, _) => Method::Text,
    };
    let mut layout = new_layout(&map.record.map_id, method, image.width, image.height);
    layout.warnings = warnings;
    let (map_id, layout_id) = (layout.map_id.clone(), layout.layout_id.clone());
    let mut timings = Timings { load_ms, decode_ms, components_ms: 0.0, legend_ms: 0.0, words_ms: 0.0, write_ms: 0.0 };
    let read_words = |region: (u32, u32, u32, u32), from: u64, to: u64| -> Result<Vec<Line>, ToolError> {
        let reader = reader.as_ref().expect("words are read only with a reader");
        let reading = geomap_vision::ocr::read(reader, &image, region, WORDS_MIN_SCORE, |done, tiles| {
            stage(from + (to - from) * done as u64 / tiles.max(1) as u64, &format!("reading the map's words: tile {} of {tiles}", (done + 1).min(tiles)));
            between().map_err(|_| VisionError::Cancelled)
        })?;
        Ok(reading.lines)
    };
    if let Some(detectors) = &detectors {
        stage(10, "finding the map's components");
        let started = Instant::now();
        let found = detectors.components(&image, min_score)?;
        timings.components_ms = millis(started);
        between()?;
        stage(20, "reading the legends");
        let started = Instant::now();
        if chosen.contains(&DetectorChoice::Legend) {
            for (index, component) in found.iter().enumerate().filter(|(_, c)| COMPONENT_CLASSES[c.class] == "legend") {
                let entries = detectors.legend(&image, &component.bbox, min_score)?;
                layout.legend_entries.extend(entries.into_iter().map(|entry| LegendItem { legend: index, entry, words: UnitWords::default() }));
                between()?;
            }
        }
        timings.legend_ms = millis(started);
        layout.components = found
            .iter()
            .map(|d| Component {
                class: COMPONENT_CLASSES[d.class].to_owned(),
                bbox: d.bbox,
                score: score(d.score),
                text: None,
                crop_uri: None,
                crop_scale: None,
            })
            .collect();
        layout.models = detectors.models.clone();
        if reader.is_some() {
            let started = Instant::now();
            read_detected_words(&mut layout, |region| read_words(region, 30, 80))?;
            timings.words_ms = millis(started);
        }
    } else {
        let started = Instant::now();
        let lines = read_words((0, 0, image.width, image.height), 10, 80)?;
        let reader = reader.as_ref().expect("method text has a reader");
        let words = read_layout(&lines, &image, |swatches| reader.read_swatch_codes(&image, swatches, WORDS_MIN_SCORE))
            .map_err(|error| VisionError::Inference(error.to_string()))?;
        timings.words_ms = millis(started);
        layout.title = words.title.as_ref().map(|title| title.text.clone());
        layout.components = text_components(&words);
        layout.legend_entries = text_entries(&words, &layout.components);
    }
    between()?;
    stage(80, "writing the crops and the preview");
    let started = Instant::now();
    for (index, component) in layout.components.iter_mut().enumerate() {
        component.crop_uri = Some(layout_uri(&map_id, &layout_id, &format!("component-{index}-{}.png", component.class)));
    }
    layout.preview_uri = Some(layout_uri(&map_id, &layout_id, "preview.png"));
    layout.preview_colours = COMPONENT_CLASSES.iter().chain(&["swatch", "text"]).map(|c| (c.to_string(), hex(rgb(class_colour(c))))).collect();
    let staged = super::stored::stage(state, &layout.map_id, &layout.layout_id)?;
    write_layout(staged.path(), &image, &mut layout).map_err(|error| VisionError::Storage(format!("cannot store the layout: {error}")))?;
    timings.write_ms = millis(started);
    layout.timings = timings;
    Ok(Found::Unstored(layout, staged))
}

/// Reads the words inside the detected title and legends: the title's text, and each legend
/// entry's code (in its swatch) and description (in its text box).
fn read_detected_words(layout: &mut Layout, mut read: impl FnMut((u32, u32, u32, u32)) -> Result<Vec<Line>, ToolError>) -> Result<(), ToolError> {
    let (width, height) = (layout.width, layout.height);
    for index in 0..layout.components.len() {
        let component = &layout.components[index];
        if component.class != "title" && component.class != "legend" {
            continue;
        }
        let region = component.bbox.pixels(width, height);
        if region.2 <= region.0 || region.3 <= region.1 {
            continue;
        }
        let lines = read(region)?;
        if component.class == "title" {
            let text = text_in(&lines, &component.bbox);
            layout.title = layout.title.clone().or(text.clone());
            layout.components[index].text = text;
            continue;
        }
        for item in layout.legend_entries.iter_mut().filter(|item| item.legend == index) {
            item.words = detected_entry_words(&lines, &item.entry.swatch, item.entry.text.as_ref());
        }
    }
    Ok(())
}

/// The components the words give: the title, the main map, then each legend.
fn text_components(words: &WordsLayout) -> Vec<Component> {
    let component =
        |class: &str, bbox: PixelBox, text: Option<String>| Component { class: class.to_owned(), bbox, score: 1.0, text, crop_uri: None, crop_scale: None };
    let mut components = Vec::new();
    if let Some(title) = &words.title {
        components.push(component("title", title.bbox, Some(title.text.clone())));
    }
    if let Some(main_map) = words.main_map {
        components.push(component("main_map", main_map, None));
    }
    components.extend(words.legends.iter().map(|legend| component("legend", legend.bbox, legend.heading.clone())));
    components
}

/// The legend entries the words give, each pointing at its legend among `components`.
fn text_entries(words: &WordsLayout, components: &[Component]) -> Vec<LegendItem> {
    let first_legend = components.iter().position(|c| c.class == "legend").unwrap_or(0);
    words
        .legends
        .iter()
        .enumerate()
        .flat_map(|(index, legend)| {
            legend.entries.iter().map(move |unit| LegendItem {
                legend: first_legend + index,
                entry: LegendEntry {
                    swatch: unit.swatch,
                    text: Some(unit.description_box),
                    colour_hex: unit.colour.map(hex),
                    colour_name: unit.colour.map(|c| colour_name(c).to_owned()),
                    score: 1.0,
                },
                words: unit_words(unit.code.clone(), Some(unit.description.clone()), unit.group.clone()),
            })
        })
        .collect()
}

/// A new layout of `map_id` with nothing found yet.
fn new_layout(map_id: &str, method: Method, width: u32, height: u32) -> Layout {
    let layout_id = format!("lay_{}", geomap_model::random_hex(10));
    Layout {
        schema: LAYOUT_SCHEMA.to_owned(),
        resource_uri: layout_uri(map_id, &layout_id, "layout.json"),
        map_id: map_id.to_owned(),
        layout_id,
        created_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        source: if method == Method::MapBundle { LayoutSource::MapBundle } else { LayoutSource::Detectors },
        method,
        title: None,
        width,
        height,
        components: Vec::new(),
        legend_entries: Vec::new(),
        models: Vec::new(),
        preview_uri: None,
        preview_colours: Default::default(),
        timings: Timings { load_ms: 0.0, decode_ms: 0.0, components_ms: 0.0, legend_ms: 0.0, words_ms: 0.0, write_ms: 0.0 },
        files: vec!["layout.json".to_owned()],
        warnings: Vec::new(),
    }
}

/// Writes `layout.json` into its staged folder (which holds the layout's other files), moves the
/// folder into place and records the layout.
fn store(state: &ServerState, staged: Staged, layout: &Layout) -> Result<(), ToolError> {
    let document = serde_json::to_string_pretty(layout).expect("layouts serialize");
    let record =
        StoredDocument { kind: Document::Layout, id: layout.layout_id.clone(), map_id: layout.map_id.clone(), created_at: layout.created_at.clone(), document };
    super::stored::store(state, staged, "layout.json", &record)
}

/// The layout a map bundle gives, stored like a detected one.
fn bundle_layout(state: &ServerState, map: RegisteredMap) -> Result<Layout, ToolError> {
    let started = Instant::now();
    let RegisteredMap { record, mut file, .. } = map;
    let MapBundle { image, components, legend_entries, .. } = media::read_bundle(&mut file)?;
    let mut layout = new_layout(&record.map_id, Method::MapBundle, image.width, image.height);
    layout.components = components
        .into_iter()
        .map(|component| Component {
            class: component.class,
            bbox: component.bbox,
            score: component.score.unwrap_or(1.0),
            text: None,
            crop_uri: None,
            crop_scale: None,
        })
        .collect();
    layout.legend_entries = legend_entries
        .into_iter()
        .map(|entry| {
            let colour = entry.colour_hex.as_deref().and_then(bundle::parse_hex);
            let entry_read = LegendEntry {
                swatch: entry.swatch,
                text: entry.text,
                colour_hex: colour.map(hex),
                colour_name: colour.map(|c| colour_name(c).to_owned()),
                score: 1.0,
            };
            LegendItem { legend: entry.legend, entry: entry_read, words: UnitWords::default() }
        })
        .collect();
    layout.timings.decode_ms = millis(started);
    store(state, super::stored::stage(state, &record.map_id, &layout.layout_id)?, &layout)?;
    Ok(layout)
}

fn rgb(colour: [u8; 3]) -> (u8, u8, u8) {
    (colour[0], colour[1], colour[2])
}

/// Writes a crop of every component and the annotated preview into `dir`, listing them in
/// `layout.files`; the preview is drawn on a second thread while the crops are written.
fn write_layout(dir: &std::path::Path, image: &Rgb, layout: &mut Layout) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|error| error.to_string())?;
    let labelled: Vec<(PixelBox, String)> = layout.components.iter().map(|c| (c.bbox, c.class.clone())).collect();
    let legend_boxes: Vec<(PixelBox, &str)> = layout
        .legend_entries
        .iter()
        .flat_map(|item| std::iter::once((item.entry.swatch, "swatch")).chain(item.entry.text.map(|text| (text, "text"))))
        .collect();
    let (crops, preview) = std::thread::scope(|scope| {
        let preview = scope.spawn(geomap_model::trace::within_call(|| write_preview(dir, image, &labelled, &legend_boxes)));
        (write_crops(dir, image, &mut layout.components), geomap_model::trace::rejoin(preview.join()))
    });
    let mut files = vec!["layout.json".to_owned()];
    files.extend(crops?);
    preview?;
    files.push("preview.png".to_owned());
    layout.files = files;
    Ok(())
}

/// Writes each component's crop (downscaled to [`CROP_MAX_SIDE`] when larger) and returns the file names.
fn write_crops(dir: &std::path::Path, image: &Rgb, components: &mut [Component]) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    for component in components {
        let Some(uri) = &component.crop_uri else { continue };
        let name = uri.rsplit('/').next().expect("a URI has a last segment").to_owned();
        let region = component.bbox.pixels(image.width, image.height);
        let (width, height) = (region.2 - region.0, region.3 - region.1);
        if width == 0 || height == 0 {
            component.crop_uri = None;
            continue;
        }
        let scale = (CROP_MAX_SIDE as f64 / width.max(height) as f64).min(1.0);
        let written = if scale < 1.0 {
            let (small_width, small_height) = (((width as f64 * scale).round() as u32).max(1), ((height as f64 * scale).round() as u32).max(1));
            let small = image.resized_region(region, small_width, small_height, Resampling::Averaged);
            small.write_png(&dir.join(&name), (0, 0, small.width, small.height))
        } else {
            image.write_png(&dir.join(&name), region)
        };
        written.map_err(|error| format!("{name}: {error}"))?;
        component.crop_scale = Some((scale * 1e4).round() / 1e4);
        files.push(name);
    }
    Ok(files)
}

/// Writes `preview.png`: the scan downscaled, the legend boxes, then the components' boxes, then their labels.
fn write_preview(dir: &std::path::Path, image: &Rgb, components: &[(PixelBox, String)], legend_boxes: &[(PixelBox, &str)]) -> Result<(), String> {
    let scale = (PREVIEW_SIDE as f64 / image.width.max(image.height) as f64).min(1.0);
    let mut preview = image.resized(((image.width as f64 * scale).round() as u32).max(1), ((image.height as f64 * scale).round() as u32).max(1));
    let scaled = |bbox: &PixelBox| PixelBox { x0: bbox.x0 * scale, y0: bbox.y0 * scale, x1: bbox.x1 * scale, y1: bbox.y1 * scale };
    for (bbox, kind) in legend_boxes {
        preview.outline(&scaled(bbox), class_colour(kind), 2);
    }
    for (bbox, class) in components {
        preview.outline(&scaled(bbox), class_colour(class), 3);
    }
    // Labels last, so no outline crosses one: above the box when there is room, else inside its corner.
    for (index, (bbox, class)) in components.iter().enumerate() {
        let text = format!("{index} {class}");
        let (x0, y0, ..) = scaled(bbox).pixels(preview.width, preview.height);
        let height = label::size(&text).1;
        label::draw(&mut preview, x0, if y0 >= height { y0 - height } else { y0 }, &text, class_colour(class));
    }
    preview.write_png(&dir.join("preview.png"), (0, 0, preview.width, preview.height)).map_err(|error| format!("preview.png: {error}"))
}
