//! Finding a map's layout — its components, and each legend's units with their
//! swatch, colour, code, description and ages — from PEACE's two detectors,
//! from the map's words and colours (PP-OCR), or both, stored as a
//! `geomap-layout/v1` document with a crop of every component and an annotated
//! preview. A map bundle's layout is returned as written, with no model, crop or
//! preview.
//!
//! Invariants: the detectors and the reader load before the scan is decoded
//! (either suffices; with neither, what the reader lacks is the failure, plus
//! the weights of detectors the request named); what the layout was made
//! without is a [`Warning`]; the files are written into a staged folder that is
//! recorded last, so a failure or cancellation keeps nothing.

use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_model::page::{COMPONENT_CLASSES, PixelBox};
use geomap_model::trace;
use geomap_store::media::{self, bundle::MapBundle};
use geomap_store::registry::{Document, StoredDocument};
use geomap_store::sweep::Staged;
use geomap_vision::colour::{colour_name, hex};
use geomap_vision::detect::postprocess::DEFAULT_MIN_SCORE;
use geomap_vision::detect::{COMPONENT_ASSET, Detectors, LEGEND_ASSET, LegendEntry, score};
use geomap_vision::graticule::LABEL_MIN_SCORE;
use geomap_vision::image::{Rgb, decode};
use geomap_vision::layout::metadata::{MapMetadata, read_metadata};
use geomap_vision::layout::render;
use geomap_vision::layout::symbols::SymbolEntry;
use geomap_vision::layout::{TitleText, WordsLayout, read_layout};
use geomap_vision::models::{Missing, ModelInfo};
use geomap_vision::ocr::reader::{Reader, TextLine};
use geomap_vision::{VisionError, millis};

use crate::provenance::{Made, PROVENANCE_FILE, stored_uris};
use crate::registered::RegisteredMap;
use crate::stored::{StoredWords, WORDS_FILE, WORDS_SCHEMA};
use crate::terms::{LITHOLOGY_PROVIDER, LegendItem, TIMESCALE_PROVIDER, UnitWords, detected_entry_words, text_in, unit_words};
use crate::uris::layout_uri;
use crate::{App, AppError, ArgumentError, Progress, Warning};

/// The name `geomap_process_image` is known by.
pub const TOOL: &str = "geomap_process_image";
/// The schema tag of stored layouts.
pub const LAYOUT_SCHEMA: &str = "geomap-layout/v1";
/// The recogniser's score floor for the layout's words.
const WORDS_MIN_SCORE: f64 = 0.5;

/// Which detectors to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DetectorChoice {
    /// The map's components.
    Components,
    /// The swatches and text of each legend component (needs components).
    Legend,
}

/// Arguments of `geomap_process_image`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayoutRequest {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// Which detectors to run (default both).
    pub detectors: Option<Vec<DetectorChoice>>,
    /// The score floor for boxes, 0–1 (default 0.25).
    pub min_score: Option<f32>,
}

impl LayoutRequest {
    /// The layout of `map_id` with the default detectors and score floor.
    pub fn of(map_id: &str) -> LayoutRequest {
        LayoutRequest { map_id: map_id.to_owned(), ..LayoutRequest::default() }
    }
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
    /// What placed it (the text method): its caption, the block beside it, the words inside.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// A cross section's letters, as `["A", "A′"]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub letters: Option<[String; 2]>,
    /// A scale's ratio: the `N` of `1:N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<u64>,
}

impl Component {
    /// A component found in `bbox`, with its score and the words read in it, not yet written.
    fn found(class: &str, bbox: PixelBox, score: f64, text: Option<String>) -> Component {
        Component { class: class.to_owned(), bbox, score, text, crop_uri: None, crop_scale: None, evidence: Vec::new(), letters: None, ratio: None }
    }
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
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
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
    /// What the sheet says about itself (title, authors, year, publisher, series, scale,
    /// quadrangle, base map, contour interval), each field with the lines it was read from and a
    /// confidence; absent fields were not found and are named in its `warnings` (none for a map
    /// bundle, or without the OCR models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MapMetadata>,
    /// The scan's width in pixels.
    pub width: u32,
    /// The scan's height in pixels.
    pub height: u32,
    /// The components found, best first.
    pub components: Vec<Component>,
    /// The legend entries found, top to bottom per legend.
    pub legend_entries: Vec<LegendItem>,
    /// The explanation's line and point symbols (the text method): each entry's words, its
    /// sample's box, and for a line how it is drawn (width, colour, solid/dashed/dotted and
    /// period, teeth or other marks and their side), for a point the number beside it.
    pub symbol_entries: Vec<SymbolEntry>,
    /// What the text method looked for and did not find, each named with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_found: Vec<String>,
    /// The providers whose knowledge resolved the ages and rock names (`ics-timescale`,
    /// `cgi-lithology`); the others' terms are resolved when first needed after their knowledge
    /// is installed (geomap_unit_at, geomap_extract_units, reading this layout's resource).
    pub terms_resolved_by: Vec<String>,
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

impl Layout {
    /// A new layout of `map_id` with nothing found yet.
    fn new(map_id: &str, method: Method, width: u32, height: u32) -> Layout {
        let layout_id = format!("lay_{}", geomap_model::random_hex(10));
        Layout {
            schema: LAYOUT_SCHEMA.to_owned(),
            resource_uri: layout_uri(map_id, &layout_id, "layout.json"),
            map_id: map_id.to_owned(),
            layout_id,
            created_at: crate::now(),
            source: if method == Method::MapBundle { LayoutSource::MapBundle } else { LayoutSource::Detectors },
            method,
            title: None,
            metadata: None,
            width,
            height,
            components: Vec::new(),
            legend_entries: Vec::new(),
            symbol_entries: Vec::new(),
            not_found: Vec::new(),
            terms_resolved_by: Vec::new(),
            models: Vec::new(),
            preview_uri: None,
            preview_colours: Default::default(),
            timings: Timings::default(),
            files: vec!["layout.json".to_owned()],
            warnings: Vec::new(),
        }
    }

    /// The registry's record of this layout.
    fn record(&self) -> StoredDocument {
        let document = serde_json::to_string_pretty(self).expect("layouts serialize");
        StoredDocument { kind: Document::Layout, id: self.layout_id.clone(), map_id: self.map_id.clone(), created_at: self.created_at.clone(), document }
    }
}

/// What reads the layout: the detectors, the reader, or both (at least one).
struct Readers {
    detectors: Option<Arc<Detectors>>,
    reader: Option<Arc<Reader>>,
    warnings: Vec<Warning>,
}

/// A layout found: a map bundle's, already stored; or a scan's, with its files written in its staged folder.
enum Found {
    Stored(Layout),
    Unstored(Layout, Staged),
}

impl App {
    /// `geomap_process_image`: loads the detectors and the reader (or says what they lack), decodes
    /// the scan, finds its components and legends, reads their words, resolves the ages and rock
    /// names through the providers, and stores the layout.
    pub async fn find_layout(self: &Arc<Self>, request: LayoutRequest, progress: Progress) -> Result<Layout, AppError> {
        let min_score = request.min_score.unwrap_or(DEFAULT_MIN_SCORE);
        if !(0.0..=1.0).contains(&min_score) {
            return Err(ArgumentError::wrong("/min_score", "a score from 0 to 1").into());
        }
        let chosen = request.detectors.clone().unwrap_or_else(|| vec![DetectorChoice::Components, DetectorChoice::Legend]);
        if !chosen.contains(&DetectorChoice::Components) {
            return Err(ArgumentError::wrong(
                "/detectors",
                "detectors including \"components\" (the legend detector reads the legends the component detector finds)",
            )
            .into());
        }
        let (app, finding) = (Arc::clone(self), progress.clone());
        let found = trace::spawn_blocking(move || app.find_now(&request, (&chosen, request.detectors.as_deref()), min_score, &finding)).await?;
        let (mut layout, staged) = match found {
            Found::Stored(layout) => return Ok(layout),
            Found::Unstored(layout, staged) => (layout, staged),
        };
        progress.fraction(0.85, "resolving the legend's ages and rock names")?;
        let warnings = self.resolve_terms(&mut layout.legend_entries, TOOL).await?;
        layout.terms_resolved_by = [TIMESCALE_PROVIDER, LITHOLOGY_PROVIDER]
            .iter()
            .filter(|provider| !warnings.iter().any(|w| w.about == **provider))
            .map(|p| (*p).to_owned())
            .collect();
        layout.warnings.extend(warnings);
        progress.fraction(0.95, "storing the layout")?;
        let app = Arc::clone(self);
        let stored = layout.clone();
        trace::spawn_blocking(move || app.store(staged, "layout.json", &stored.record())).await?;
        let _ = progress.fraction(1.0, "done"); // stored: a cancellation now changes nothing
        Ok(layout)
    }

    /// The loaded detectors, reloaded when their weight files changed since.
    pub fn detectors(&self) -> Result<Arc<Detectors>, VisionError> {
        self.detectors.get(&self.catalog, &self.settings.data_root)
    }

    /// The OCR reader, loaded once and kept while its model files are unchanged (reloaded after a
    /// reinstall; an asset removed since is missing again).
    pub fn text_reader(&self) -> Result<Arc<Reader>, VisionError> {
        self.reader.get(&self.catalog, &self.settings.data_root)
    }

    /// Loads what can read the layout: the reader alone suffices (PEACE's weights missing become a
    /// warning), the detectors alone too (the words are then not read); with neither, the reader's
    /// requirements are the error, with any detector model that does not fit and, when the request
    /// named its detectors (`asked`), every weight set of those it lacks.
    fn readers(&self, asked: Option<&[DetectorChoice]>) -> Result<Readers, AppError> {
        match (self.detectors(), self.text_reader()) {
            (Ok(detectors), Ok(reader)) => Ok(Readers { detectors: Some(detectors), reader: Some(reader), warnings: Vec::new() }),
            (Err(missing), Ok(reader)) => {
                let warning = self.warning(&missing.into(), COMPONENT_ASSET, TOOL);
                let message = format!("The layout was read from the map's words and colours, without PEACE's detectors. {}", warning.message);
                Ok(Readers { detectors: None, reader: Some(reader), warnings: vec![Warning { message, ..warning }] })
            }
            (Ok(detectors), Err(missing)) => {
                let warning = self.warning(&missing.into(), self.settings.ocr_models.asset(), TOOL);
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

    /// The blocking part of finding a layout: everything but resolving terms and storing.
    fn find_now(
        &self,
        request: &LayoutRequest,
        (chosen, asked): (&[DetectorChoice], Option<&[DetectorChoice]>),
        min_score: f32,
        progress: &Progress,
    ) -> Result<Found, AppError> {
        let begun = crate::now();
        let map = self.open_registered(&request.map_id)?;
        if !map.record.media_type.has_pixels() {
            progress.fraction(0.8, "storing the map bundle's layout")?;
            let layout = self.bundle_layout(map, request, &begun)?;
            let _ = progress.fraction(1.0, "done"); // stored: a cancellation now changes nothing
            return Ok(Found::Stored(layout));
        }
        progress.fraction(0.0, "loading the detectors and the OCR models")?;
        let started = Instant::now();
        let Readers { detectors, reader, warnings } = self.readers(asked)?;
        let mut timings = Timings { load_ms: millis(started), ..Timings::default() };
        progress.fraction(0.05, "decoding the scan")?;
        let started = Instant::now();
        let image = decode(&map.file, self.settings.max_image_pixels)?;
        timings.decode_ms = millis(started);
        progress.check()?;
        let method = match (&detectors, &reader) {
            (Some(_), Some(_)) => Method::Both,
            (Some(_), None) => Method::Detector,
            (None, _) => Method::Text,
        };
        let mut layout = Layout::new(map.id(), method, image.width, image.height);
        layout.warnings = warnings;
        // Every line read, kept at the label reader's floor for the stored words; the layout's own
        // rules see those at its floor.
        let mut stored = StoredWords { schema: WORDS_SCHEMA.to_owned(), regions: Vec::new(), min_score: LABEL_MIN_SCORE, lines: Vec::new() };
        let mut read_words = |region: (u32, u32, u32, u32), words: &Progress| -> Result<Vec<TextLine>, AppError> {
            let reader = reader.as_ref().expect("words are read only with a reader");
            let reading = geomap_vision::ocr::read(reader, &image, region, LABEL_MIN_SCORE, |done, tiles| {
                let message = format!("reading the map's words: tile {} of {tiles}", (done + 1).min(tiles));
                words.fraction(done as f64 / tiles.max(1) as f64, message).map_err(VisionError::from)
            })?;
            let (x0, y0, x1, y1) = region;
            stored.regions.push(PixelBox { x0: f64::from(x0), y0: f64::from(y0), x1: f64::from(x1), y1: f64::from(y1) });
            stored.lines.extend(reading.lines.iter().cloned());
            Ok(reading.lines.into_iter().filter(|line| line.score >= WORDS_MIN_SCORE).collect())
        };
        if let Some(detectors) = &detectors {
            progress.fraction(0.1, "finding the map's components")?;
            let started = Instant::now();
            let found = detectors.components(&image, min_score)?;
            timings.components_ms = millis(started);
            progress.fraction(0.2, "reading the legends")?;
            let started = Instant::now();
            if chosen.contains(&DetectorChoice::Legend) {
                for (index, component) in found.iter().enumerate().filter(|(_, c)| COMPONENT_CLASSES[c.class] == "legend") {
                    let entries = detectors.legend(&image, &component.bbox, min_score)?;
                    layout.legend_entries.extend(entries.into_iter().map(|entry| LegendItem { legend: index, entry, words: UnitWords::default() }));
                    progress.check()?;
                }
            }
            timings.legend_ms = millis(started);
            layout.components = found.iter().map(|d| Component::found(COMPONENT_CLASSES[d.class], d.bbox, score(d.score), None)).collect();
            layout.models = detectors.models.clone();
            if reader.is_some() {
                let started = Instant::now();
                read_detected_words(&mut layout, |region| read_words(region, &progress.stage(0.3, 0.8)))?;
                timings.words_ms = millis(started);
            }
        } else {
            let started = Instant::now();
            let lines = read_words((0, 0, image.width, image.height), &progress.stage(0.1, 0.8))?;
            let reader = reader.as_ref().expect("method text has a reader");
            let words = read_layout(&lines, &image, |swatches| reader.read_swatch_codes(&image, swatches, WORDS_MIN_SCORE))
                .map_err(|error| VisionError::Inference(error.to_string()))?;
            timings.words_ms = millis(started);
            layout.title = words.title.as_ref().map(|title| title.text.clone());
            layout.components = text_components(&words);
            layout.legend_entries = text_entries(&words, &layout.components);
            layout.symbol_entries = words.symbols.clone();
            layout.not_found = not_found(&layout.components);
        }
        if let Some(reader) = &reader {
            layout.models.extend(reader.models().iter().cloned());
            let title = layout.title.clone().zip(layout.components.iter().find(|c| c.class == "title")).map(|(text, c)| TitleText { text, bbox: c.bbox });
            let lines: Vec<TextLine> = stored.lines.iter().filter(|line| line.score >= WORDS_MIN_SCORE).cloned().collect();
            layout.metadata = Some(read_metadata(&lines, title.as_ref()));
        }
        progress.fraction(0.8, "writing the crops and the preview")?;
        let started = Instant::now();
        let staged = self.stage(&layout.map_id, &layout.layout_id)?;
        write_layout(staged.path(), &image, &mut layout).map_err(|error| VisionError::Storage(format!("cannot store the layout: {error}")))?;
        if reader.is_some() {
            let words = serde_json::to_vec(&stored).expect("words serialize");
            std::fs::write(staged.path().join(WORDS_FILE), words).map_err(|error| VisionError::Storage(format!("cannot store the layout's words: {error}")))?;
            layout.files.push(WORDS_FILE.to_owned());
        }
        made(&layout, request, (map.id(), &map.record.sha256), (&begun, &crate::now())).write(staged.path())?;
        layout.files.push(PROVENANCE_FILE.to_owned());
        timings.write_ms = millis(started);
        layout.timings = timings;
        Ok(Found::Unstored(layout, staged))
    }

    /// The layout a map bundle gives, stored like a detected one.
    fn bundle_layout(&self, map: RegisteredMap, request: &LayoutRequest, begun: &str) -> Result<Layout, AppError> {
        let started = Instant::now();
        let RegisteredMap { record, mut file, .. } = map;
        let MapBundle { image, components, legend_entries, .. } = media::read_bundle(&mut file)?;
        let mut layout = Layout::new(&record.map_id, Method::MapBundle, image.width, image.height);
        layout.components = components.into_iter().map(|c| Component::found(&c.class, c.bbox, c.score.unwrap_or(1.0), None)).collect();
        layout.legend_entries = legend_entries
            .into_iter()
            .map(|entry| {
                let colour = entry.colour_hex.as_deref().and_then(geomap_model::parse_hex);
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
        let staged = self.stage(&record.map_id, &layout.layout_id)?;
        made(&layout, request, (&record.map_id, &record.sha256), (begun, &crate::now())).write(staged.path())?;
        layout.files.push(PROVENANCE_FILE.to_owned());
        self.store(staged, "layout.json", &layout.record())?;
        Ok(layout)
    }
}

/// How `layout` was made, from `request` on the scan (its map ID and SHA-256) from `begun` to `ended`.
fn made<'a>(layout: &'a Layout, request: &LayoutRequest, scan: (&'a str, &'a str), (begun, ended): (&'a str, &'a str)) -> Made<'a> {
    Made {
        tool: TOOL,
        run_id: &layout.layout_id,
        made: stored_uris(&layout.map_id, &layout.layout_id, &layout.files),
        scan,
        used: Vec::new(),
        models: &layout.models,
        parameters: serde_json::to_value(request).expect("requests serialize"),
        started: begun,
        ended,
    }
}

/// Reads the words inside the detected title and legends: the title's text, and each legend
/// entry's code (in its swatch) and description (in its text box).
fn read_detected_words(layout: &mut Layout, mut read: impl FnMut((u32, u32, u32, u32)) -> Result<Vec<TextLine>, AppError>) -> Result<(), AppError> {
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

/// The components the words give: the title, the main map, each legend (the explanation of
/// symbols one more, when its entries lie outside the unit legends), then the parts found from
/// their captions.
fn text_components(words: &WordsLayout) -> Vec<Component> {
    let mut components = Vec::new();
    if let Some(title) = &words.title {
        components.push(Component::found("title", title.bbox, 1.0, Some(title.text.clone())));
    }
    if let Some(main_map) = words.main_map {
        components.push(Component::found("main_map", main_map, 1.0, None));
    }
    components.extend(words.legends.iter().map(|legend| Component::found("legend", legend.bbox, 1.0, legend.heading.clone())));
    let symbols = words.symbols.iter().map(|entry| union(&entry.sample, &entry.text_box)).reduce(|a, b| union(&a, &b));
    if let Some(block) = symbols.filter(|block| !words.legends.iter().any(|legend| contains(&legend.bbox, block))) {
        let mut explanation = Component::found("legend", block, 1.0, Some("explanation of map symbols".to_owned()));
        explanation.evidence = vec![format!("{} entries that begin with a map symbol, each with its sample", words.symbols.len())];
        components.push(explanation);
    }
    for part in &words.parts {
        let mut component = Component::found(part.class, part.bbox, 1.0, Some(part.caption.clone()));
        component.evidence = part.evidence.clone();
        component.letters = part.letters.clone().map(|(from, to)| [from, to]);
        component.ratio = part.ratio;
        components.push(component);
    }
    components
}

fn union(a: &PixelBox, b: &PixelBox) -> PixelBox {
    PixelBox { x0: a.x0.min(b.x0), y0: a.y0.min(b.y0), x1: a.x1.max(b.x1), y1: a.y1.max(b.y1) }
}

fn contains(outer: &PixelBox, inner: &PixelBox) -> bool {
    outer.x0 <= inner.x0 && outer.y0 <= inner.y0 && inner.x1 <= outer.x1 && inner.y1 <= outer.y1
}

/// The component kinds the text method looks for that it did not find, each with why.
fn not_found(components: &[Component]) -> Vec<String> {
    let why = [
        ("title", "no line of large type stands out in the margins"),
        ("main_map", "no large region of coloured polygons"),
        ("legend", "no column of unit codes beside descriptions, and no entry that begins with a map symbol"),
        ("scale", "no caption \"SCALE 1:N\" (or a ratio alone) outside the main map"),
        (
            "cross_section",
            "no caption \"CROSS SECTION\" (or \"SECTION A–A′\") outside the main map, and no strip with an elevation axis (\"METERS\", \"FEET\") at each end",
        ),
        ("stratigraphic_column", "no heading \"CORRELATION OF MAP UNITS\" (or a stratigraphic column's)"),
        ("index_map", "no caption \"INDEX MAP\", \"LOCATION MAP\" or \"INDEX TO …\""),
    ];
    why.iter().filter(|(class, _)| !components.iter().any(|c| c.class == *class)).map(|(class, why)| format!("component {class} not found: {why}")).collect()
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

/// Writes a crop of every component and the annotated preview into `dir`, giving each component
/// its crop's URI and scale and listing the files in `layout.files`; the preview is drawn on a
/// second thread while the crops are written.
fn write_layout(dir: &std::path::Path, image: &Rgb, layout: &mut Layout) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|error| error.to_string())?;
    let labelled: Vec<(PixelBox, String)> = layout.components.iter().map(|c| (c.bbox, c.class.clone())).collect();
    let legend_boxes: Vec<(PixelBox, &str)> = layout
        .legend_entries
        .iter()
        .flat_map(|item| std::iter::once((item.entry.swatch, "swatch")).chain(item.entry.text.map(|text| (text, "text"))))
        .collect();
    let crops: Vec<(String, PixelBox)> =
        layout.components.iter().enumerate().map(|(index, component)| (format!("component-{index}-{}.png", component.class), component.bbox)).collect();
    let (written, preview) = std::thread::scope(|scope| {
        let preview = scope.spawn(trace::within_call(|| render::write_preview(&dir.join("preview.png"), image, &labelled, &legend_boxes)));
        let written: Result<Vec<Option<f64>>, String> = crops.iter().map(|(name, bbox)| render::write_crop(&dir.join(name), image, bbox)).collect();
        (written, trace::rejoin(preview.join()))
    });
    let mut files = vec!["layout.json".to_owned()];
    for ((component, (name, _)), scale) in layout.components.iter_mut().zip(crops).zip(written?) {
        if let Some(scale) = scale {
            component.crop_uri = Some(layout_uri(&layout.map_id, &layout.layout_id, &name));
            component.crop_scale = Some(scale);
            files.push(name);
        }
    }
    preview?;
    files.push("preview.png".to_owned());
    layout.preview_uri = Some(layout_uri(&layout.map_id, &layout.layout_id, "preview.png"));
    layout.preview_colours = render::class_colours().into_iter().map(|(class, colour)| (class.to_owned(), hex(colour))).collect();
    layout.files = files;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestApp;
    use geomap_vision::layout::{TextLegend, UnitEntry};

    #[tokio::test(flavor = "multi_thread")]
    async fn a_bundles_layout_is_stored_as_written_and_a_scan_needs_a_reader_or_the_detectors() {
        let test = TestApp::new(&[]);
        let bundle = serde_json::json!({
            "schema": "geomap-map-bundle/v1", "image": { "width": 1000, "height": 800 },
            "components": [{ "class": "legend", "bbox": { "x0": 800.0, "y0": 0.0, "x1": 1000.0, "y1": 400.0 } }],
            "legend_entries": [{ "legend": 0, "swatch": { "x0": 810.0, "y0": 10.0, "x1": 830.0, "y1": 25.0 }, "colour_hex": "#aa3300" }]
        });
        std::fs::write(test.maps.join("b.layout.json"), bundle.to_string()).unwrap();
        let map_id = test.register("b.layout.json").await;
        let layout = test.app.find_layout(LayoutRequest::of(&map_id), Progress::none()).await.unwrap();
        assert_eq!(
            (layout.method, layout.source, layout.components.len(), layout.preview_uri.as_deref()),
            (Method::MapBundle, LayoutSource::MapBundle, 1, None)
        );
        assert_eq!(layout.legend_entries[0].entry.colour_hex.as_deref(), Some("#aa3300"));
        assert_eq!(test.app.stored_files(&map_id, &layout.layout_id).unwrap(), ["layout.json", "provenance.json"], "and how it was made");
        test.scan("a.png", 60, 40, |_, _| [240, 240, 240]);
        let scan_id = test.register("a.png").await;
        let missing = test.app.find_layout(LayoutRequest::of(&scan_id), Progress::none()).await.unwrap_err();
        let AppError::Vision(VisionError::NotReady { missing, .. }) = missing else { panic!("not missing_extra: {missing:?}") };
        let ids: Vec<String> = missing.iter().map(Missing::describe).collect();
        assert!(ids.iter().any(|id| id.contains("ppocr-v4")) && !ids.iter().any(|id| id.contains("peace-component-weights")), "{ids:?}");
        let named = LayoutRequest { detectors: Some(vec![DetectorChoice::Components]), ..LayoutRequest::of(&scan_id) };
        let AppError::Vision(VisionError::NotReady { missing, .. }) = test.app.find_layout(named, Progress::none()).await.unwrap_err() else { panic!() };
        assert!(missing.iter().any(|m| m.describe().contains("peace-component-weights")), "naming the detectors asks for their weights too");
        let score = LayoutRequest { min_score: Some(2.0), ..LayoutRequest::of(&scan_id) };
        assert!(matches!(test.app.find_layout(score, Progress::none()).await, Err(AppError::InvalidArguments(argument)) if argument.field == "/min_score"));
        let legend_only = LayoutRequest { detectors: Some(vec![DetectorChoice::Legend]), ..LayoutRequest::of(&scan_id) };
        assert!(
            matches!(test.app.find_layout(legend_only, Progress::none()).await, Err(AppError::InvalidArguments(argument)) if argument.field == "/detectors")
        );
    }

    fn bbox(x0: f64, y0: f64, x1: f64, y1: f64) -> PixelBox {
        PixelBox { x0, y0, x1, y1 }
    }

    #[test]
    fn the_words_give_the_title_the_main_map_then_each_legend_with_its_units() {
        let unit = |code: &str, description: &str, y: f64| UnitEntry {
            code: Some(code.into()),
            code_box: bbox(905.0, y + 2.0, 935.0, y + 18.0),
            description: description.into(),
            swatch: bbox(900.0, y, 940.0, y + 20.0),
            description_box: bbox(950.0, y, 1200.0, y + 20.0),
            colour: Some((250, 220, 120)),
            group: None,
        };
        let words = WordsLayout {
            title: Some(TitleText { text: "GEOLOGIC MAP OF THE PEACH SPRINGS QUADRANGLE".into(), bbox: bbox(100.0, 10.0, 700.0, 60.0) }),
            main_map: Some(bbox(50.0, 80.0, 850.0, 900.0)),
            legends: vec![TextLegend {
                heading: Some("EXPLANATION".into()),
                bbox: bbox(890.0, 80.0, 1210.0, 400.0),
                entries: vec![unit("Qal", "Alluvium (Holocene)", 100.0), unit("Tb", "Basalt (Miocene)", 130.0)],
            }],
            parts: Vec::new(),
            symbols: Vec::new(),
        };
        let components = text_components(&words);
        let classes: Vec<&str> = components.iter().map(|c| c.class.as_str()).collect();
        assert_eq!(classes, ["title", "main_map", "legend"]);
        assert_eq!(components[2].text.as_deref(), Some("EXPLANATION"));
        let entries = text_entries(&words, &components);
        assert_eq!(entries.iter().map(|e| (e.legend, e.words.code.clone().unwrap())).collect::<Vec<_>>(), [(2, "Qal".into()), (2, "Tb".into())]);
        assert_eq!(entries[0].entry.colour_hex.as_deref(), Some("#fadc78"));
        assert_eq!(entries[1].words.age_terms[0].term, "Miocene");
    }
}
