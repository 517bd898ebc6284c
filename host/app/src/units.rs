//! A map's units: the legend unit under a point (`unit_at`), and the whole main
//! map as GIS layers (`extract_units`): every pixel of the layout's main map to
//! the nearest legend swatch in CIELAB (`geomap_vision::classes`), linework
//! filled, speckle under the minimum mapping unit sieved, and the regions
//! polygonized (`geomap_georef::unit_raster`) into one `geomap_export::Extraction`
//! with the structure and the sheet's record, placed on the ground through the
//! newest revision when there is one, and written by every exporter (the TA1
//! GeoPackage, GeoJSON) beside a unit raster and a preview; stored as a
//! `geomap-units/v1` document whose files are resources.
//!
//! Invariants: the point and the polygons agree (once an extraction of a
//! layout exists, `unit_at` answers from its raster); an extraction's files are
//! written into a staged folder recorded last, so a failure or cancellation
//! between stages keeps nothing; memory is about one decoded main map (the class
//! and confidence rasters, GDAL's copy of the classes, one strip), plus the
//! tracer's colour marks, stroke mask and skeleton while it runs beside them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_export::geopackage::{GEOPACKAGE, line_near};
use geomap_export::ta1::{MapRow, StructureRows, UnitRow};
use geomap_export::{Exported, Extraction, Ground, UnitPolygon, export_all};
use geomap_georef::unit_raster::{Outlines, UNIT_RASTER, UnitRaster};
use geomap_model::georeference::Revision;
use geomap_model::page::PixelBox;
use geomap_model::scale::{ScaleEstimate, SheetScale};
use geomap_model::symbols::catalog;
use geomap_model::trace;
use geomap_store::registry::{Document, StoredDocument};
use geomap_store::sweep::Staged;
use geomap_vision::classes::preview::Preview;
use geomap_vision::classes::{self, Classified, NO_MATCH_DELTA_E, filter, regions};
use geomap_vision::colour::{delta_e, ground_colour, hex, lab};
use geomap_vision::models::ModelInfo;
use geomap_vision::ocr::reader::{Reader, TextLine};
use geomap_vision::structure::dips::{dips, reread_dips};
use geomap_vision::structure::lines::{LinePrompt, sample_window};
use geomap_vision::structure::points::{FoundPoint, PointPrompt, Reads, Shape, sample_box, sample_ink};
use geomap_vision::structure::section_letters::{SectionLine, letters_at_ends, section_lines, type_height};
use geomap_vision::structure::sections::{ShrunkMap, Straight};
use geomap_vision::structure::{Structure, StructureFinder};
use geomap_vision::{VisionError, millis};

use crate::provenance::{Made, PROVENANCE_FILE, stored_uris};
use crate::record;
use crate::registered::RegisteredMap;
use crate::stored::{LegendUnit, StoredEntry, StoredLayout, Swatch};
use crate::structure::{
    LineSummary, PointSummary, SectionSummary, add_point_rows, line_rows, line_summaries, line_warnings, point_summaries, point_warnings, section_row,
    section_summary, section_warnings,
};
use crate::terms::{AgeSpan, AgeTermInfo, LithologyInfo};
use crate::uris::{layout_dir, layout_uri, map_uri};
use crate::{App, AppError, ArgumentError, Progress};

/// The name `geomap_unit_at` is known by.
pub const UNIT_AT_TOOL: &str = "geomap_unit_at";
/// The name `geomap_extract_units` is known by.
pub const EXTRACT_TOOL: &str = "geomap_extract_units";
/// The schema tag of stored unit extractions.
pub const UNITS_SCHEMA: &str = "geomap-units/v1";
/// The preview's file name.
pub const PREVIEW: &str = "preview.png";
/// Over this share of the main map unclassified, the result warns.
const UNCLASSIFIED_WARNING: f64 = 0.25;
/// The paper's colour: a pixel nearer to it than to a line symbol's colour is not on that line.
const PAPER: (u8, u8, u8) = (255, 255, 255);
/// `geomap_unit_at` names a line feature passing this close to the point, in pixels.
pub const LINE_REACH_PX: f64 = 4.0;
/// The map's colour at a point is sampled from the square this many pixels either side of it.
const SAMPLE_RADIUS: f64 = 5.0;

/// Arguments of `geomap_unit_at`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitAtRequest {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// The point's pixel column in the scan (with `row`).
    pub col: Option<f64>,
    /// The point's pixel row in the scan (with `col`).
    pub row: Option<f64>,
    /// The point's longitude on WGS84 (with `lat`; needs a georeference revision).
    pub lon: Option<f64>,
    /// The point's latitude on WGS84 (with `lon`).
    pub lat: Option<f64>,
    /// The layout whose legend to compare with (default: the map's newest).
    pub layout_id: Option<String>,
}

/// A legend unit compared with the map's colour.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnitCandidate {
    /// The unit: its legend entry, code, description and swatch colour.
    #[serde(flatten)]
    pub unit: LegendUnit,
    /// Perceptual distance (CIE76 ΔE) from the map's colour: under about 2 looks the same, over 15 matches no unit.
    pub delta_e: f64,
    /// The ages its description names, resolved on the ICS chart when they were.
    pub age_terms: Vec<AgeTermInfo>,
    /// Its age range in Ma, when resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_ma: Option<AgeSpan>,
    /// Its rock names.
    pub lithology_terms: Vec<LithologyInfo>,
}

/// The result of `geomap_unit_at`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnitAt {
    /// The map.
    pub map_id: String,
    /// The layout whose legend was compared.
    pub layout_id: String,
    /// The revision a longitude and latitude went through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_id: Option<String>,
    /// The point in the scan's pixels.
    pub col: f64,
    /// The point in the scan's pixels.
    pub row: f64,
    /// The map's colour around the point (the median of the brighter half of 11 × 11 pixels, so ink and labels do not count).
    pub colour_hex: String,
    /// The unit whose swatch is nearest in colour; none when every swatch is over ΔE 15 away.
    pub unit: Option<UnitCandidate>,
    /// The nearest and the next nearest swatches, with their distances, whether they match or not.
    pub nearest: Vec<UnitCandidate>,
    /// The unit extraction `unit` was read from (the class its polygons give the point), when the
    /// map has one for this layout; absent: `unit` is the nearest swatch to the colour here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units_id: Option<String>,
    /// The line feature of that extraction (a fault, a fold axis) passing within
    /// [`LINE_REACH_PX`] pixels of the point, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<LineAt>,
    /// What the answer means, in a sentence.
    pub summary: String,
}

/// A line feature at a point.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LineAt {
    /// Its ID in the extraction's GeoPackage (`line_feature.id`).
    pub feature_id: String,
    /// Its TA1 line type (`fault`, `thrust fault`, `anticline`, …).
    #[serde(rename = "type")]
    pub line_type: String,
    /// Its symbol's name, as the explanation begins it.
    pub name: String,
    /// `solid` (certain), `dashed` or `dotted` where it passes.
    pub dash_pattern: String,
    /// How far it passes from the point, in pixels.
    pub distance_px: f64,
}

/// Arguments of `geomap_extract_units`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractRequest {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// The layout whose main map and legend to use (default: the map's newest).
    pub layout_id: Option<String>,
    /// The minimum mapping unit in pixels: regions smaller than this are merged into their
    /// largest neighbour (default: 1/20000 of the main map, at least 16).
    pub min_area_px: Option<u64>,
}

impl ExtractRequest {
    /// The extraction of `map_id`'s newest layout with the default minimum mapping unit.
    pub fn of(map_id: &str) -> ExtractRequest {
        ExtractRequest { map_id: map_id.to_owned(), ..ExtractRequest::default() }
    }
}

/// One legend unit's share of the map.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnitSummary {
    /// The unit: its legend entry, code, description and swatch colour.
    #[serde(flatten)]
    pub unit: LegendUnit,
    /// Its class in the unit raster (`units.tif`).
    pub class: u8,
    /// Polygons written.
    pub polygons: u64,
    /// Its share of the main map, 0–1.
    pub share: f64,
    /// Its area in km², when the map is georeferenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub area_km2: Option<f64>,
    /// Its pixels' mean confidence, 0–1 (colour fit and separation from the next swatch; filled pixels count half).
    pub mean_confidence: f64,
}

/// Milliseconds per stage. With two worker threads or more, the line and point symbols are traced
/// on a thread of their own while the units are filled, sieved and polygonized, so the stages add
/// up to more than the call took.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct UnitTimings {
    /// Reading the main map and classifying it.
    pub classify_ms: f64,
    /// Filling linework and removing thin strokes.
    pub fill_ms: f64,
    /// Tracing the line and point symbols (faults, folds, attitudes) on the main map (beside the
    /// fill, sieve and polygonizing), reading the attitudes' dips and finding the lines of section.
    pub lines_ms: f64,
    /// The sieve to the minimum mapping unit.
    pub sieve_ms: f64,
    /// Polygonizing and simplifying the units, writing the GeoPackage, the raster and the preview.
    pub write_ms: f64,
}

/// The result of `geomap_extract_units`, stored as `units.json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnitExtraction {
    /// `geomap-units/v1`.
    pub schema: String,
    /// The map.
    pub map_id: String,
    /// This extraction's ID; every call writes a new one.
    pub units_id: String,
    /// The layout whose main map and legend were used.
    pub layout_id: String,
    /// The georeference revision the georeferenced layer went through, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_id: Option<String>,
    /// The revision's CRS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crs: Option<String>,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// The main map's box in the scan's pixels (the unit raster's extent).
    pub region: PixelBox,
    /// The minimum mapping unit used, in pixels.
    pub min_area_px: u64,
    /// Per legend unit with a swatch colour, in legend order.
    pub units: Vec<UnitSummary>,
    /// Per line symbol of the explanation, or looked for by its look without one (contacts
    /// aside: they are the polygons' edges), the lines found with it, in the GeoPackage's
    /// `line_type` and `line_feature` tables.
    pub lines: Vec<LineSummary>,
    /// Per point symbol of the explanation (strike and dip of beds, vertical beds, foliation, a
    /// filled mark such as a breccia pipe), or attitude looked for by its shape without one, the
    /// point features found with it, in the GeoPackage's `point_type` and `point_feature` tables.
    pub points: Vec<PointSummary>,
    /// Per cross section of the layout whose line of section was found on the main map: its
    /// letters, ends and length, in the GeoPackage's `cross_section` table.
    pub sections: Vec<SectionSummary>,
    /// The share of the main map that matches no unit (water, paper, colours the legend lacks).
    pub unclassified_share: f64,
    /// The sheet's scale: paper millimetres per pixel, from its printed ratio through its
    /// georeference, its explanation's symbols or its type, with every estimate made; absent when
    /// none could be.
    pub scale: Option<SheetScale>,
    /// The stored document as an MCP resource.
    pub resource_uri: String,
    /// The GeoPackage (TA1 schema: `map`, `geologic_unit`, `polygon_type`, `polygon_feature`,
    /// `line_type`, `line_feature`, `point_type`, `point_feature`, `cross_section` in pixel
    /// coordinates, and the four feature tables again with `_georeferenced` in the revision's
    /// CRS) as a resource.
    pub geopackage_uri: String,
    /// The unit raster (a Cloud Optimized GeoTIFF, the swatches as its palette) as a resource.
    pub raster_uri: String,
    /// The scan's main map beside its classification, as a resource.
    pub preview_uri: String,
    /// Where the GeoPackage is on the server's disk, for a GIS user there to open directly.
    pub geopackage_path: String,
    /// Where the unit raster is on the server's disk.
    pub raster_path: String,
    /// Each feature layer as GeoJSON (RFC 7946: one FeatureCollection per layer, in WGS 84), as
    /// resources; none when the map is not georeferenced (a warning says so).
    pub geojson_uris: Vec<String>,
    /// Time per stage.
    pub timings: UnitTimings,
    /// Things to check: a unit with no pixels, a large unclassified area, swatches too close to
    /// tell apart, symbols found nowhere or found by their look, attitudes without a dip, lines of
    /// section not found.
    pub warnings: Vec<String>,
    /// The files stored with it.
    pub files: Vec<String>,
}

/// Where and against what an extraction classifies: the main map's box in whole pixels and the
/// legend's swatch colours, with what the plan already warns of.
struct Plan<'a> {
    legend: Vec<Swatch<'a>>,
    swatches: Vec<(u8, u8, u8)>,
    /// `(left, top, right, bottom)` in the scan's pixels.
    region: (u32, u32, u32, u32),
    /// The scan's width and height in pixels.
    scan: (u32, u32),
    min_area: u64,
    warnings: Vec<String>,
}

impl Plan<'_> {
    fn width(&self) -> u32 {
        self.region.2 - self.region.0
    }

    fn height(&self) -> u32 {
        self.region.3 - self.region.1
    }

    fn pixels(&self) -> u64 {
        u64::from(self.width()) * u64::from(self.height())
    }

    /// The main map's box in the scan's pixels, its edges on whole pixels.
    fn main_map(&self) -> PixelBox {
        let (left, top, right, bottom) = self.region;
        PixelBox { x0: f64::from(left), y0: f64::from(top), x1: f64::from(right), y1: f64::from(bottom) }
    }
}

/// What the classes come to: per class (0: no unit), its area in pixels and the sum of their
/// confidences.
struct Tally {
    area_px: Vec<u64>,
    confidence: Vec<f64>,
}

impl App {
    /// `geomap_unit_at`: the point in pixels (through the newest revision for lon/lat), the map's
    /// colour around it, and the legend swatches nearest that colour; the unit an extraction of
    /// the same layout gives the point, when there is one.
    pub async fn unit_at(self: &Arc<Self>, request: UnitAtRequest) -> Result<UnitAt, AppError> {
        let by_pixel = match (request.col, request.row, request.lon, request.lat) {
            (Some(col), Some(row), None, None) => Some((col, row)),
            (None, None, Some(_), Some(_)) => None,
            _ => return Err(ArgumentError::conflict("/col", "either col and row (pixels) or lon and lat (WGS84), as a pair").into()),
        };
        self.resolve_stored_terms(&request.map_id, request.layout_id.as_deref(), UNIT_AT_TOOL).await?;
        let app = Arc::clone(self);
        trace::spawn_blocking(move || app.unit_at_now(&request, by_pixel)).await
    }

    fn unit_at_now(&self, request: &UnitAtRequest, by_pixel: Option<(f64, f64)>) -> Result<UnitAt, AppError> {
        let map = self.open_registered(&request.map_id)?;
        map.pixels("sample")?;
        let map_id = map.id().to_owned();
        let (layout_id, layout) = self.chosen_layout(&map_id, request.layout_id.as_deref())?;
        let swatches = layout.swatches(&map_id)?;
        let (revision_id, (col, row)) = match by_pixel {
            Some(point) => (None, point),
            None => {
                let revision = map.record.revisions.last().ok_or_else(|| AppError::GeorefRequired { map_id: map_id.clone() })?;
                let point = geomap_georef::pixel_at(revision, request.lon.unwrap_or_default(), request.lat.unwrap_or_default())?;
                (Some(revision.revision_id.clone()), point)
            }
        };
        let (width, height) = (layout.width as f64, layout.height as f64);
        if !(col.is_finite() && row.is_finite() && (0.0..width).contains(&col) && (0.0..height).contains(&row)) {
            let (field, expected) = match revision_id {
                None => ("/col", format!("a point inside the scan: 0 <= col < {width} and 0 <= row < {height}")),
                Some(_) => ("/lon", format!("a point inside the map: it falls at pixel ({col:.0}, {row:.0}), outside the {width} × {height} scan")),
            };
            return Err(ArgumentError::wrong(field, expected).into());
        }
        let window = PixelBox { x0: col - SAMPLE_RADIUS, y0: row - SAMPLE_RADIUS, x1: col + SAMPLE_RADIUS + 1.0, y1: row + SAMPLE_RADIUS + 1.0 };
        let region = window.pixels(layout.width, layout.height);
        let sample = map.window(self, region)?;
        let (left, top) = (region.0 as f64, region.1 as f64);
        let local = PixelBox { x0: window.x0 - left, y0: window.y0 - top, x1: window.x1 - left, y1: window.y1 - top };
        let colour = ground_colour(&sample, &local).expect("the point is inside the scan");
        let candidates = ranked(&swatches, colour);
        let nearest: Vec<UnitCandidate> = candidates.iter().take(2).cloned().collect();
        let extracted = self.extracted_unit(&map_id, &layout_id, col, row)?;
        let unit = match &extracted {
            Some((_, legend_entry)) => legend_entry.and_then(|entry| candidates.iter().find(|c| c.unit.legend_entry == entry).cloned()),
            None => nearest.first().filter(|best| best.delta_e <= NO_MATCH_DELTA_E).cloned(),
        };
        let summary = match (&extracted, &unit) {
            (Some((units_id, _)), Some(best)) => {
                format!("The extracted units ({units_id}) put {} here; its swatch is ΔE {:.1} from the colour here.", best.unit.name(), best.delta_e)
            }
            (Some((units_id, _)), None) => format!("The extracted units ({units_id}) put no unit here: water, paper or a colour the legend lacks."),
            (None, _) => colour_summary(unit.as_ref(), &nearest, colour),
        };
        let units_id = extracted.map(|(units_id, _)| units_id);
        let line = match &units_id {
            Some(units_id) => {
                let package = layout_dir(&self.settings.artifact_root, &map_id, units_id).join(GEOPACKAGE);
                line_near(&package, (col, row), LINE_REACH_PX)?.map(|near| LineAt {
                    feature_id: near.id,
                    line_type: near.line_type,
                    name: near.name,
                    dash_pattern: near.dash_pattern,
                    distance_px: near.distance_px,
                })
            }
            None => None,
        };
        let summary = match &line {
            Some(line) => format!("{summary} A {} ({}) passes {} px from the point.", line.line_type, line.dash_pattern, line.distance_px),
            None => summary,
        };
        Ok(UnitAt { map_id, layout_id, revision_id, col, row, colour_hex: hex(colour), unit, nearest, units_id, line, summary })
    }

    /// The class the newest unit extraction of `layout_id` gives scan pixel `(col, row)`: its ID and
    /// the legend entry (none: no unit there), or `None` without an extraction covering the point.
    fn extracted_unit(&self, map_id: &str, layout_id: &str, col: f64, row: f64) -> Result<Option<(String, Option<usize>)>, AppError> {
        let Some((units_id, units)) = self.newest_units(map_id)?.filter(|(_, units)| units.layout_id == layout_id) else {
            return Ok(None);
        };
        let (x, y) = (col - units.region.x0, row - units.region.y0);
        if x < 0.0 || y < 0.0 {
            return Ok(None);
        }
        let raster = layout_dir(&self.settings.artifact_root, map_id, &units_id).join(UNIT_RASTER);
        let Some(class) = geomap_georef::unit_raster::class_at(&raster, x as u32, y as u32)? else { return Ok(None) };
        let entry = units.units.iter().find(|unit| unit.class == class).map(|unit| unit.legend_entry);
        Ok(Some((units_id, entry)))
    }

    /// `geomap_extract_units`: classifies the newest layout's main map (or `layout_id`'s) against its
    /// legend's swatches and writes the layers, with progress per stage and cancellation between them.
    pub async fn extract_units(self: &Arc<Self>, request: ExtractRequest, progress: Progress) -> Result<UnitExtraction, AppError> {
        if request.min_area_px == Some(0) {
            return Err(ArgumentError::wrong("/min_area_px", "a positive number of pixels").into());
        }
        self.resolve_stored_terms(&request.map_id, request.layout_id.as_deref(), EXTRACT_TOOL).await?;
        let app = Arc::clone(self);
        trace::spawn_blocking(move || app.extract_now(&request, &progress)).await
    }

    /// The blocking part of `geomap_extract_units`: the plan, then the stages in turn, each handing
    /// the next what it made.
    fn extract_now(&self, request: &ExtractRequest, progress: &Progress) -> Result<UnitExtraction, AppError> {
        let begun = crate::now();
        let map = self.open_registered(&request.map_id)?;
        map.pixels("classify")?;
        let (layout_id, layout) = self.chosen_layout(map.id(), request.layout_id.as_deref())?;
        let plan = plan(&layout, map.id(), (map.record.width as u32, map.record.height as u32), request.min_area_px)?;
        let sheet = Sheet { map: &map, layout_id: &layout_id, layout: &layout, plan };
        let mut timings = UnitTimings::default();
        // Classifying is timed from its first report, the prompts measured included and the lines
        // of section read from the words left to the lines' time.
        let started = Instant::now();
        let classifying = progress.stage(0.0, 0.4);
        classifying.fraction(0.0, CLASSIFYING)?;
        let (finder, unmeasured) = self.measured_prompts(&map, &layout)?.finder(&sheet.plan);
        let (mut sections, shrunk) = self.sections_by_words(&sheet)?;
        let marked = self.classified(&sheet, (finder, shrunk), &classifying)?;
        timings.classify_ms = millis(started) - sections.ms;
        let traced = self.traced(&sheet.plan, marked, progress, &mut timings)?;
        let readings = self.dips_and_sections(&sheet, &traced, &mut sections, progress, &mut timings)?;
        let Traced { units, structure, .. } = traced;
        // Placing on the ground is timed with the writing.
        let started = Instant::now();
        let placed = placed(&sheet, &structure, readings, (units.outlines, &units.by_first), progress)?;
        let (staged, exported) = self.written(&sheet, &placed, (units.raster, &units.preview), progress)?;
        timings.write_ms += millis(started);
        let summaries = summaries(&sheet, &placed, &units.tally, &structure, &unmeasured, sections);
        let extraction = self.unit_extraction(&sheet, &placed, summaries, exported, timings);
        self.recorded(&sheet, extraction, staged, &placed.models, (request, &begun), progress)
    }
}

/// What an extraction is of, which each of its stages reads: the map, the layout chosen (its ID
/// and itself) and the plan.
struct Sheet<'a> {
    map: &'a RegisteredMap,
    layout_id: &'a str,
    layout: &'a StoredLayout,
    plan: Plan<'a>,
}

impl Sheet<'_> {
    /// The map's newest georeference revision, which the extraction is placed through.
    fn revision(&self) -> Option<&Revision> {
        self.map.record.revisions.last()
    }
}

/// What the line and point symbols are looked for with: the measured prompts, and the words of each
/// point symbol whose sample shows no whole symbol of its shape, with its ink's colour.
struct Prompts {
    lines: Vec<LinePrompt>,
    points: Vec<PointPrompt>,
    unmeasured: Vec<String>,
    unmeasured_inks: Vec<(u8, u8, u8)>,
}

impl Prompts {
    /// A finder of these prompts over `plan`'s main map, the point symbols not looked for kept off
    /// its masks by their inks; with those symbols' words, for the warnings.
    fn finder(self, plan: &Plan<'_>) -> (StructureFinder, Vec<String>) {
        let origin = (plan.region.0, plan.region.1);
        let finder = StructureFinder::new(self.lines, self.points, &self.unmeasured_inks, &plan.swatches, PAPER, (plan.width(), plan.height()), origin);
        (finder, self.unmeasured)
    }
}

/// Each cross section's line of section on the main map, and what it is read with: the sheet's
/// words and the OCR reader.
struct Sections {
    /// The words the layout and the readings read of the sheet.
    words: Vec<TextLine>,
    /// Whether any of them may cover the main map.
    words_read: bool,
    /// The layout's cross sections: each one's box and letters.
    cross_sections: Vec<(PixelBox, [String; 2])>,
    /// Per cross section, its line on the main map; `None` while it is not found.
    lines: Vec<Option<SectionLine>>,
    /// The OCR reader, when its models are installed.
    reader: Option<Arc<Reader>>,
    /// Whether the letters at the thin straight lines' ends are read, for the lines the words left unfound.
    ends_read: bool,
    /// The time the words took, in milliseconds: counted as the lines', not the classifying's.
    ms: f64,
}

/// The main map classified, and what its structure is traced from: the finder with the prompts'
/// colours marked, and the shrunk map when its thin straight lines are looked for.
struct Marked {
    classified: Classified,
    finder: StructureFinder,
    shrunk: Option<ShrunkMap>,
}

/// The units drawn: GDAL's raster of their classes after the sieve (written as the unit raster),
/// its regions' outlines and each region's confidence by its first pixel (placed as the polygons),
/// what the classes come to, and the preview with the classes painted.
struct Units {
    raster: UnitRaster,
    outlines: Outlines,
    by_first: HashMap<(u32, u32), f64>,
    tally: Tally,
    preview: Preview,
}

/// The units drawn beside the structure traced: the lines and attitude symbols found, the thin
/// straight lines (none unless they were looked for), and the tracing's time in milliseconds.
struct Traced {
    units: Units,
    structure: Structure,
    straights: Vec<Straight>,
    ms: f64,
}

/// The structure read: its rows so far (the lines and the lines of section; the points' are added
/// once their directions are on the ground), each found attitude's dip with its number's box, and
/// the OCR models that read any.
struct Readings {
    rows: StructureRows,
    dips: Vec<Option<(u32, PixelBox)>>,
    models: Vec<ModelInfo>,
}

/// The extraction as one value, placed on the ground when the map is georeferenced, with its ID,
/// when it was made, a pixel's area on the ground in km² (at the main map's centre) and the OCR
/// models its sheet record names.
struct Placed {
    extraction: Extraction,
    units_id: String,
    created_at: String,
    pixel_km2: Option<f64>,
    models: Vec<ModelInfo>,
}

/// What an extraction found, as its result tells it: per legend unit, line and point symbol and
/// line of section, the share of the main map that matches no unit, and what to check so far.
struct Summaries {
    units: Vec<UnitSummary>,
    lines: Vec<LineSummary>,
    points: Vec<PointSummary>,
    sections: Vec<SectionSummary>,
    unclassified_share: f64,
    scale: Option<SheetScale>,
    warnings: Vec<String>,
}

impl App {
    /// The extraction's first stage: each line symbol of `layout`'s explanation measured on its
    /// own sample (read from `map`) the way its lines will be on the map, else the lines looked
    /// for by their look; each point symbol measured on its sample (a tick symbol printed a pixel
    /// wide as a hairline), one whose sample shows no whole symbol of its shape not looked for but
    /// its ink, when no line's colour, still kept off the lines' masks; without any attitude
    /// symbol, attitudes looked for by their shape.
    fn measured_prompts(&self, map: &RegisteredMap, layout: &StoredLayout) -> Result<Prompts, AppError> {
        let mut lines = Vec::new();
        for (entry, prompt) in LinePrompt::of_entries(&layout.symbol_entries).into_iter().filter_map(|p| Some((p.entry?, p))) {
            let around = sample_window(&layout.symbol_entries[entry]);
            lines.push(prompt.calibrated(&map.window(self, around.pixels(layout.width, layout.height))?));
        }
        if lines.is_empty() {
            lines = LinePrompt::by_look();
        }
        let (mut points, mut unmeasured, mut unmeasured_inks) = (Vec::new(), Vec::new(), Vec::new());
        let point_entries = PointPrompt::of_entries(&layout.symbol_entries);
        let no_attitude_entries = point_entries.iter().all(|prompt| prompt.shape.is_mark());
        for (entry, prompt) in point_entries.into_iter().filter_map(|p| Some((p.entry?, p))) {
            let around = sample_box(&layout.symbol_entries[entry]);
            let sample = map.window(self, around.pixels(layout.width, layout.height))?;
            match prompt.calibrated(&sample) {
                Some(measured) => points.push(measured),
                None => {
                    unmeasured.push(prompt.words);
                    unmeasured_inks.extend(sample_ink(&sample));
                }
            }
        }
        if no_attitude_entries {
            points.extend(PointPrompt::by_look());
        }
        Ok(Prompts { lines, points, unmeasured, unmeasured_inks })
    }

    /// Each cross section's line between its letters on the main map, as the sheet's words read
    /// them; handed on with the words and the OCR reader. Should one not be found so, and the OCR
    /// models be installed, a blank shrunk map is handed on too, to be filled as the map is
    /// classified, for its thin straight lines (the letters at whose ends are read once they are
    /// traced).
    fn sections_by_words(&self, sheet: &Sheet<'_>) -> Result<(Sections, Option<ShrunkMap>), AppError> {
        let started = Instant::now();
        let (map, plan) = (sheet.map, &sheet.plan);
        let (words, words_read) = self.words_read(map.id(), sheet.layout_id)?;
        let cross_sections = sheet.layout.cross_sections();
        let lines = section_lines(&cross_sections, (&words, &[]), &plan.main_map(), &|region| Ok::<_, AppError>(map.window(self, region)?), plan.scan)?;
        let reader = self.text_reader().ok();
        let shrunk =
            (reader.is_some() && lines.iter().any(Option::is_none)).then(|| ShrunkMap::new((plan.width(), plan.height()), (plan.region.0, plan.region.1)));
        let sections = Sections { words, words_read, cross_sections, lines, reader, ends_read: shrunk.is_some(), ms: millis(started) };
        Ok((sections, shrunk))
    }

    /// The main map classified against the plan's swatches strip by strip, reporting through
    /// `classifying`: each strip's pixels of the prompts' colours marked in `finder`, and the strip
    /// shrunk into `shrunk`, as it is read. Hands on the classes with the marks.
    fn classified(
        &self,
        sheet: &Sheet<'_>,
        (mut finder, mut shrunk): (StructureFinder, Option<ShrunkMap>),
        classifying: &Progress,
    ) -> Result<Marked, AppError> {
        let plan = &sheet.plan;
        let (height, (left, top, right, _)) = (plan.height(), plan.region);
        let classified = classes::classify_map(&plan.swatches, plan.width(), height, |first_row, rows| {
            classifying.fraction(f64::from(first_row) / f64::from(height.max(1)), CLASSIFYING)?;
            let strip = sheet.map.window(self, (left, top + first_row, right, top + first_row + rows))?;
            finder.mark(&strip, first_row);
            if let Some(shrunk) = shrunk.as_mut() {
                shrunk.mark(&strip, first_row);
            }
            Ok::<_, AppError>(strip)
        })?;
        Ok(Marked { classified, finder, shrunk })
    }

    /// The units drawn ([`App::drawn_units`]) beside the structure traced from `marked`'s marks:
    /// hands on both, with the thin straight lines and the tracing's time.
    fn traced(&self, plan: &Plan<'_>, marked: Marked, progress: &Progress, timings: &mut UnitTimings) -> Result<Traced, AppError> {
        let Marked { classified, finder, shrunk } = marked;
        // With two worker threads or more, the structure is traced on a thread of its own while this
        // one fills, sieves and polygonizes the units: neither needs the other until the GeoPackage
        // is written. Should the units fail or panic, the tracing stops at its next check. With one
        // worker thread, the structure is traced first. (A progress report that fails means a
        // cancellation, which the tracing and the units' stages see for themselves.)
        let abandoned = AtomicBool::new(false);
        let tracing = || {
            let started = Instant::now();
            let stop = || progress.is_cancelled() || abandoned.load(Ordering::Relaxed);
            let structure = finder.found(&stop);
            let straights = shrunk.map(|shrunk| shrunk.straight_lines(&stop));
            (structure, straights, millis(started))
        };
        let beside = self.settings.worker_threads > 1;
        let (traced, units) = std::thread::scope(|scope| {
            let tracing = if beside {
                Tracing::Beside(scope.spawn(trace::within_call(tracing)))
            } else {
                let _ = progress.fraction(0.4, TRACING);
                Tracing::Done(tracing())
            };
            let mut stop_tracing = StopUnlessDone { flag: &abandoned, done: false };
            let units = self.drawn_units(plan, classified, beside, progress, timings);
            stop_tracing.done = units.is_ok();
            drop(stop_tracing);
            let traced = match tracing {
                Tracing::Beside(thread) => {
                    if !thread.is_finished() {
                        let _ = progress.fraction(0.8, TRACING);
                    }
                    trace::rejoin(thread.join())
                }
                Tracing::Done(traced) => traced,
            };
            (traced, units)
        });
        let units = units?;
        let (structure, straights, ms) = traced;
        let structure = structure.ok_or(VisionError::Cancelled)?;
        let straights = straights.map(|straights| straights.ok_or(VisionError::Cancelled)).transpose()?.unwrap_or_default();
        Ok(Traced { units, structure, straights, ms })
    }

    /// The units drawn from `classified`: linework filled, speckle under the plan's minimum mapping
    /// unit sieved in GDAL's raster, the regions tallied and painted on the preview, and their
    /// outlines polygonized, each step timed in `timings` (`beside`: while the structure is traced).
    fn drawn_units(&self, plan: &Plan<'_>, classified: Classified, beside: bool, progress: &Progress, timings: &mut UnitTimings) -> Result<Units, AppError> {
        let Classified { classes: mut raster, mut confidence, mut preview } = classified;
        let (width, height, (left, top, _, _)) = (plan.width(), plan.height(), plan.region);
        let started = Instant::now();
        progress.fraction(0.4, if beside { "filling linework while the line and point symbols are traced" } else { "filling linework" })?;
        if !filter::fill_strokes(&mut raster, &mut confidence, width as usize, height as usize, plan.swatches.len() as u8, &|| progress.is_cancelled()) {
            return Err(AppError::from(VisionError::Cancelled));
        }
        timings.fill_ms = millis(started);
        let started = Instant::now();
        let gdal_raster = UnitRaster::new(raster, (width as usize, height as usize), (left, top), self.settings.worker_threads)?;
        gdal_raster.sieve(plan.min_area as usize, &progress.stage(0.45, 0.5))?;
        let mut raster = vec![0_u8; plan.pixels() as usize];
        gdal_raster.read_classes(&mut raster)?;
        timings.sieve_ms = millis(started);
        progress.check()?;
        let started = Instant::now();
        let found = regions::regions(&raster, &confidence, width as usize, height as usize);
        drop(confidence);
        let by_first: HashMap<(u32, u32), f64> = found.iter().map(|r| ((r.first_x + left, r.first_y + top), r.confidence)).collect();
        let tally = tally(&found, plan.swatches.len(), plan.pixels());
        preview.paint_classes(&raster, &plan.swatches);
        drop(raster);
        let outlines = gdal_raster.outlines(&progress.stage(0.5, 0.8))?;
        timings.write_ms = millis(started);
        Ok(Units { raster: gdal_raster, outlines, by_first, tally, preview })
    }

    /// The structure read from `traced`: the lines' rows and each attitude's dip as the words give
    /// it; when the OCR models are installed, each dip read again where its number's ink stands, and
    /// the lines of section the words left unfound looked for by the letters at the thin straight
    /// lines' ends (set in `sections`). Timed with the tracing and the words as the lines'.
    fn dips_and_sections(
        &self,
        sheet: &Sheet<'_>,
        traced: &Traced,
        sections: &mut Sections,
        progress: &Progress,
        timings: &mut UnitTimings,
    ) -> Result<Readings, AppError> {
        let started = Instant::now();
        progress.fraction(0.8, "reading the attitudes' dips and finding the lines of section")?;
        let (found, plan) = (&traced.structure, &sheet.plan);
        let mut rows = line_rows(&found.line_prompts, &found.lines);
        let mut dips = dips(&found.points, &found.point_prompts, &sections.words);
        // Each number read again where its ink stands, and the letters at the thin straight lines'
        // ends, when the OCR models are installed.
        let mut models = Vec::new();
        if let (false, Some(reader)) = (found.points.is_empty() && traced.straights.is_empty(), &sections.reader) {
            models = reader.models().to_vec();
            let window = |region| Ok::<_, AppError>(sheet.map.window(self, region)?);
            dips = reread_dips(&found.points, &found.point_prompts, dips, reader, plan.scan, &window)?;
            let unfound: Vec<usize> = (0..sections.lines.len()).filter(|&k| sections.lines[k].is_none()).collect();
            let wanted: Vec<&str> = unfound.iter().map(|&k| sections.cross_sections[k].1[0].as_str()).collect();
            let lettered = letters_at_ends(&traced.straights, &wanted, type_height(&sections.words), reader, plan.scan, &window, &|| progress.is_cancelled())?;
            let unfound_sections: Vec<(PixelBox, [String; 2])> = unfound.iter().map(|&k| sections.cross_sections[k].clone()).collect();
            for (k, line) in unfound.into_iter().zip(section_lines(&unfound_sections, (&[], &lettered), &plan.main_map(), &window, plan.scan)?) {
                sections.lines[k] = line;
            }
        }
        rows.sections = sections.lines.iter().flatten().map(section_row).collect();
        timings.lines_ms = sections.ms + traced.ms + millis(started);
        Ok(Readings { rows, dips, models })
    }

    /// Writes `placed`'s extraction by every exporter into a staged folder, then the unit `raster`
    /// (georeferenced through the sheet's revision, when there is one) and the `preview`, in that
    /// order. Hands on the folder and what the exporters wrote.
    fn written(
        &self,
        sheet: &Sheet<'_>,
        placed: &Placed,
        (mut raster, preview): (UnitRaster, &Preview),
        progress: &Progress,
    ) -> Result<(Staged, Exported), AppError> {
        let staged = self.stage(sheet.map.id(), &placed.units_id)?;
        let exported = export_all(&placed.extraction, staged.path(), &progress.stage(0.86, 0.94))?;
        let raster_classes: Vec<((u8, u8, u8), String)> = placed
            .extraction
            .units
            .iter()
            .enumerate()
            .map(|(index, unit)| (unit.colour, unit.code.clone().or(unit.description.clone()).unwrap_or_else(|| format!("unit {}", index + 1))))
            .collect();
        raster.write_raster(staged.path(), &raster_classes, sheet.revision(), &progress.stage(0.94, 0.97))?;
        preview
            .image
            .write_png(&staged.path().join(PREVIEW), (0, 0, preview.image.width, preview.image.height))
            .map_err(|error| VisionError::Storage(format!("cannot write the preview: {error}")))?;
        Ok((staged, exported))
    }

    /// The result of `geomap_extract_units`: `summaries` (the exporters' warnings last) with the
    /// extraction's IDs, region and `timings`, and the files made (the document, what the exporters
    /// wrote, the unit raster and the preview) as resources and paths.
    fn unit_extraction(&self, sheet: &Sheet<'_>, placed: &Placed, summaries: Summaries, exported: Exported, timings: UnitTimings) -> UnitExtraction {
        let Summaries { units, lines, points, sections, unclassified_share, scale, mut warnings } = summaries;
        warnings.extend(exported.warnings);
        let (map_id, units_id) = (sheet.map.id(), placed.units_id.as_str());
        let folder = layout_dir(&self.settings.artifact_root, map_id, units_id);
        let mut files = vec!["units.json".to_owned()];
        files.extend(exported.files.iter().cloned());
        files.extend([UNIT_RASTER.to_owned(), PREVIEW.to_owned()]);
        let path_of = |name: &str| folder.join(name).to_string_lossy().into_owned();
        UnitExtraction {
            schema: UNITS_SCHEMA.to_owned(),
            resource_uri: layout_uri(map_id, units_id, "units.json"),
            geopackage_uri: layout_uri(map_id, units_id, GEOPACKAGE),
            raster_uri: layout_uri(map_id, units_id, UNIT_RASTER),
            preview_uri: layout_uri(map_id, units_id, PREVIEW),
            geopackage_path: path_of(GEOPACKAGE),
            raster_path: path_of(UNIT_RASTER),
            geojson_uris: exported.files.iter().filter(|name| name.ends_with(".geojson")).map(|name| layout_uri(map_id, units_id, name)).collect(),
            map_id: map_id.to_owned(),
            units_id: units_id.to_owned(),
            layout_id: sheet.layout_id.to_owned(),
            revision_id: sheet.revision().map(|revision| revision.revision_id.clone()),
            crs: sheet.revision().map(|revision| revision.crs.clone()),
            created_at: placed.created_at.clone(),
            region: sheet.plan.main_map(),
            min_area_px: sheet.plan.min_area,
            units,
            lines,
            points,
            sections,
            unclassified_share,
            scale,
            timings,
            warnings,
            files,
        }
    }

    /// Writes the provenance of `extraction`'s files into `staged` (`request` run from `begun` with
    /// `models`), then stores the folder with the extraction as its document unless the call was
    /// cancelled meanwhile. Hands the extraction back, the provenance among its files.
    fn recorded(
        &self,
        sheet: &Sheet<'_>,
        mut extraction: UnitExtraction,
        staged: Staged,
        models: &[ModelInfo],
        (request, begun): (&ExtractRequest, &str),
        progress: &Progress,
    ) -> Result<UnitExtraction, AppError> {
        // The files made, then the provenance that says what made them.
        let made = stored_uris(&extraction.map_id, &extraction.units_id, &extraction.files);
        extraction.files.push(PROVENANCE_FILE.to_owned());
        let mut used = vec![(layout_uri(&extraction.map_id, &extraction.layout_id, "layout.json"), "layout")];
        used.extend(extraction.revision_id.iter().map(|revision_id| (format!("{}/revisions/{revision_id}", map_uri(&extraction.map_id)), "revision")));
        Made {
            tool: EXTRACT_TOOL,
            run_id: &extraction.units_id,
            made,
            scan: (&extraction.map_id, &sheet.map.record.sha256),
            used,
            models,
            parameters: serde_json::to_value(request).expect("requests serialize"),
            started: begun,
            ended: &crate::now(),
        }
        .write(staged.path())?;
        progress.check()?; // the staged folder goes with a cancelled call
        let document = serde_json::to_string_pretty(&extraction).expect("extractions serialize");
        let record = StoredDocument {
            kind: Document::Units,
            id: extraction.units_id.clone(),
            map_id: extraction.map_id.clone(),
            created_at: extraction.created_at.clone(),
            document,
        };
        self.store(staged, "units.json", &record)?;
        let _ = progress.fraction(1.0, "done"); // stored: a cancellation now changes nothing
        Ok(extraction)
    }
}

/// The extraction as one value under a new ID: the map's and the units' rows, the units'
/// `outlines` as polygons with their regions' confidences (`by_first`), the structure's rows with
/// the points' added (their dips from `readings`, their directions on the ground) and the sheet's
/// record; placed on the ground through the sheet's revision, when there is one, before any file
/// is written, so a revision whose transform fails here leaves nothing behind.
fn placed(
    sheet: &Sheet<'_>,
    found: &Structure,
    readings: Readings,
    (outlines, by_first): (Outlines, &HashMap<(u32, u32), f64>),
    progress: &Progress,
) -> Result<Placed, AppError> {
    let Readings { mut rows, dips, models } = readings;
    let (map, plan, revision) = (sheet.map, &sheet.plan, sheet.revision());
    let (left, top, right, bottom) = plan.region;
    let centre = ((f64::from(left) + f64::from(right)) / 2.0, (f64::from(top) + f64::from(bottom)) / 2.0);
    let pixel_km2 = revision.map(|revision| geomap_georef::ground::pixel_area_km2(revision, centre.0, centre.1)).transpose()?;
    let dip_directions = dip_directions(&found.points, &found.point_prompts, revision)?;
    add_point_rows(&mut rows, &found.point_prompts, &found.points, &dips, &dip_directions);
    let units_id = format!("unt_{}", geomap_model::random_hex(10));
    let title = sheet.layout.title.clone().filter(|title| !title.trim().is_empty()).unwrap_or_else(|| map.record.relative_path.clone());
    let map_row = MapRow { map_id: map.id().to_owned(), name: title, image_url: map_uri(map.id()), width: map.record.width, height: map.record.height };
    let units: Vec<UnitRow> = plan.legend.iter().map(|swatch| unit_row(swatch.entry, swatch.colour)).collect();
    let created_at = crate::now();
    let sheet_record = record::sheet_record(map.id(), (sheet.layout_id, sheet.layout), &plan.legend, revision, (&units_id, &created_at, &models));
    // A region of a class beyond the legend's is no unit's.
    let polygons: Vec<UnitPolygon> = outlines
        .into_outlines()
        .into_iter()
        .filter(|outline| outline.class <= units.len())
        .map(|outline| UnitPolygon {
            id: outline.index + 1,
            class: outline.class,
            confidence: by_first.get(&outline.first_pixel).copied().unwrap_or(0.0),
            wkb: outline.wkb,
        })
        .collect();
    let ground = revision.map(|revision| Ground::place(revision, &polygons, &rows, &progress.stage(0.82, 0.86))).transpose()?;
    let extraction = Extraction { map: map_row, units, polygons, structure: rows, sheet: sheet_record, ground };
    Ok(Placed { extraction, units_id, created_at, pixel_km2, models })
}

/// Each found point's dip direction (`found`, of `prompts`): from grid north through `revision`,
/// else as found, from the sheet's up. A vertical joint's strike is carried to the ground, its
/// dip direction square to it there (0–180°).
fn dip_directions(found: &[FoundPoint], prompts: &[PointPrompt], revision: Option<&Revision>) -> Result<Vec<Option<f64>>, AppError> {
    let Some(revision) = revision else { return Ok(found.iter().map(|p| p.dip_direction).collect()) };
    let joint = |p: &FoundPoint| prompts[p.prompt].shape == Shape::Strung;
    let carried = |p: &FoundPoint, towards: f64| if joint(p) { towards - 90.0 } else { towards };
    let directions: Vec<((f64, f64), f64)> = found.iter().filter_map(|p| Some((p.at, carried(p, p.dip_direction?)))).collect();
    let mut bearings = geomap_georef::ground::grid_bearings(revision, &directions)?.into_iter();
    let ground = |p: &FoundPoint, bearing: f64| if joint(p) { (bearing + 90.0).rem_euclid(180.0) } else { bearing };
    Ok(found.iter().map(|p| p.dip_direction.and_then(|_| bearings.next()).map(|bearing| ground(p, bearing))).collect())
}

/// What `placed` comes to, per legend unit (with the `tally` of its classes), line and point
/// symbol (as `found` looked for them; `unmeasured` the point symbols not looked for) and line of
/// section (the lines in `sections`), with what to check: the plan's warnings, then the units',
/// the lines', the points' and the sections'.
fn summaries(sheet: &Sheet<'_>, placed: &Placed, tally: &Tally, found: &Structure, unmeasured: &[String], sections: Sections) -> Summaries {
    let plan = &sheet.plan;
    let Extraction { structure, ground, .. } = &placed.extraction;
    let units = unit_summaries(&plan.legend, tally, &placed.extraction.polygons_per_class(), plan.pixels(), placed.pixel_km2);
    let unclassified_share = round(tally.area_px[0] as f64 / plan.pixels() as f64, 5);
    let mut warnings = plan.warnings.clone();
    warnings.extend(extraction_warnings(&units, unclassified_share, plan.min_area));
    let lines = line_summaries(&found.line_prompts, structure, ground.as_ref().map(|ground| ground.line_lengths_km.as_slice()));
    warnings.extend(line_warnings(&found.line_prompts, &lines));
    let mut points = point_summaries(&found.point_prompts, structure, sheet.revision().is_some());
    warnings.extend(point_warnings(unmeasured, &found.point_prompts, &points, sections.words_read));
    // A shape looked for without an explanation and found nowhere is said in the warnings alone.
    points.retain(|summary| summary.prompted_by != "look" || summary.count > 0);
    let scale = sheet_scale(sheet, placed.pixel_km2, found, &sections.words);
    let unlettered = sheet.layout.components.iter().filter(|c| c.class == "cross_section" && c.letters.is_none()).count();
    warnings.extend(section_warnings(&sections.cross_sections, &sections.lines, unlettered, (sections.words_read, sections.ends_read)));
    let sections = sections
        .lines
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(k, line)| section_summary(line, ground.as_ref().map(|ground| ground.section_lengths_km[k])))
        .collect();
    Summaries { units, lines, points, sections, unclassified_share, scale, warnings }
}

/// The sheet's scale from what it prints: its scale ratio with the ground a pixel spans at the
/// main map's middle (`pixel_km2`, through its georeference), the point symbols of its explanation
/// measured on their samples (`found`'s prompts; its line symbols when it has none: a stroke's
/// width is known to a pixel) against the catalog's sizes, and the height of its type (`words`).
/// A symbol measured on its skeleton is a stroke longer than its skeleton; a strung dot is left
/// out (the catalog sizes its strike line, its sample measures its dot).
fn sheet_scale(sheet: &Sheet<'_>, pixel_km2: Option<f64>, found: &Structure, words: &[TextLine]) -> Option<SheetScale> {
    let ratio = sheet.layout.metadata.as_ref().and_then(|metadata| metadata.scale.as_ref()).map(|scale| scale.value);
    let mut estimates: Vec<ScaleEstimate> =
        ratio.zip(pixel_km2).and_then(|(ratio, km2)| ScaleEstimate::from_ratio(ratio, km2.sqrt() * 1000.0)).into_iter().collect();
    let measured_points = found.point_prompts.iter().filter(|prompt| prompt.entry.is_some() && prompt.shape != Shape::Strung);
    let points: Vec<ScaleEstimate> = measured_points
        .filter_map(|prompt| {
            let on_skeleton = prompt.detector?.reads() == Reads::Skeleton;
            let across = prompt.strike_px + if on_skeleton { prompt.width_px } else { 0.0 };
            ScaleEstimate::from_symbol(&prompt.symbol, catalog().named(&prompt.symbol)?.size_mm?, across)
        })
        .collect();
    if points.is_empty() {
        let measured_lines = found.line_prompts.iter().filter(|prompt| prompt.entry.is_some());
        estimates
            .extend(measured_lines.filter_map(|prompt| ScaleEstimate::from_symbol(&prompt.symbol, catalog().named(&prompt.symbol)?.line_mm?, prompt.width_px)));
    }
    estimates.extend(points);
    estimates.extend(type_height(words).and_then(ScaleEstimate::from_type));
    SheetScale::reconciled(estimates)
}

/// The progress message while the main map is classified.
const CLASSIFYING: &str = "classifying the main map";

/// The progress message while the line and point symbols are traced and nothing else is left.
const TRACING: &str = "tracing the line and point symbols";

/// The structure's tracing: on a thread of its own beside the units, or done before them.
enum Tracing<'scope, T> {
    Beside(std::thread::ScopedJoinHandle<'scope, T>),
    Done(T),
}

/// Raises `flag` when dropped before `done` is set: the units' stage failing or panicking stops
/// the tracing beside it.
struct StopUnlessDone<'a> {
    flag: &'a AtomicBool,
    done: bool,
}

impl Drop for StopUnlessDone<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.flag.store(true, Ordering::Relaxed);
        }
    }
}

/// What an extraction of `layout` on a `width`×`height` scan classifies: its main map (or the whole
/// scan, with a warning) against its swatches (at most [`classes::MAX_UNITS`]), the minimum mapping
/// unit (`asked`, or 1/20000 of the map, at least 16 pixels), and a warning for each pair of
/// swatches too close to tell apart.
fn plan<'a>(layout: &'a StoredLayout, map_id: &str, (width, height): (u32, u32), asked: Option<u64>) -> Result<Plan<'a>, AppError> {
    let mut legend = layout.swatches(map_id)?;
    legend.truncate(classes::MAX_UNITS);
    let mut warnings = Vec::new();
    let region = layout.main_map().unwrap_or_else(|| {
        warnings.push("The layout has no main map: the whole scan was classified, legend and margins included.".to_owned());
        PixelBox { x0: 0.0, y0: 0.0, x1: f64::from(width), y1: f64::from(height) }
    });
    let swatches: Vec<(u8, u8, u8)> = legend.iter().map(|swatch| swatch.colour).collect();
    for (a, b, distance) in classes::indistinct_pairs(&swatches) {
        warnings.push(format!(
            "The swatches of {} and {} are ΔE {distance:.1} apart: on a scan their units cannot be told apart reliably, so check where either was mapped.",
            legend[a].unit.name(),
            legend[b].unit.name()
        ));
    }
    let mut plan = Plan { legend, swatches, region: region.pixels(width, height), scan: (width, height), min_area: 0, warnings };
    plan.min_area = asked.unwrap_or((plan.pixels() / 20_000).max(16));
    Ok(plan)
}

/// Per class, the pixels of `found` and their summed confidence; class 0 (no unit) takes what the
/// regions of units leave of the map's `pixels`.
fn tally(found: &[regions::Region], units: usize, pixels: u64) -> Tally {
    let mut tally = Tally { area_px: vec![0; units + 1], confidence: vec![0.0; units + 1] };
    for region in found {
        tally.area_px[region.class as usize] += region.pixels;
        tally.confidence[region.class as usize] += region.confidence * region.pixels as f64;
    }
    tally.area_px[0] = pixels - tally.area_px.iter().skip(1).sum::<u64>();
    tally
}

/// `value` rounded to `places` decimals.
fn round(value: f64, places: i32) -> f64 {
    (value * 10f64.powi(places)).round() / 10f64.powi(places)
}

/// Each legend unit's share of the map's `pixels`: polygons written, share, area (with a pixel's
/// km² when georeferenced) and mean confidence.
fn unit_summaries(legend: &[Swatch<'_>], tally: &Tally, polygons: &[u64], pixels: u64, pixel_km2: Option<f64>) -> Vec<UnitSummary> {
    legend
        .iter()
        .enumerate()
        .map(|(index, swatch)| {
            let class = index + 1;
            let count = tally.area_px[class];
            UnitSummary {
                unit: swatch.unit.clone(),
                class: class as u8,
                polygons: polygons[class],
                share: round(count as f64 / pixels as f64, 5),
                area_km2: pixel_km2.map(|km2| round(km2 * count as f64, 4)),
                mean_confidence: if count == 0 { 0.0 } else { round(tally.confidence[class] / count as f64, 3) },
            }
        })
        .collect()
}

/// What to check in an extraction: each unit with no polygon, and a large unclassified share.
fn extraction_warnings(units: &[UnitSummary], unclassified_share: f64, min_area: u64) -> Vec<String> {
    let mut warnings: Vec<String> = units
        .iter()
        .filter(|unit| unit.polygons == 0)
        .map(|unit| {
            format!(
                "No part of the main map was classified as {} ({}): its colour may not occur on the map, or it is too small for the minimum mapping unit of {min_area} pixels.",
                unit.unit.name(),
                unit.unit.colour_hex
            )
        })
        .collect();
    if unclassified_share > UNCLASSIFIED_WARNING {
        warnings.push(format!(
            "{:.0}% of the main map matches no legend swatch (over ΔE {NO_MATCH_DELTA_E} from all): water, unmapped paper, patterns or a legend read incompletely.",
            unclassified_share * 100.0
        ));
    }
    warnings
}

/// The swatches ranked by their distance from `colour`, nearest first.
fn ranked(swatches: &[Swatch<'_>], colour: (u8, u8, u8)) -> Vec<UnitCandidate> {
    let here = lab(colour);
    let mut ranked: Vec<UnitCandidate> = swatches
        .iter()
        .map(|swatch| UnitCandidate {
            unit: swatch.unit.clone(),
            delta_e: (delta_e(here, lab(swatch.colour)) * 100.0).round() / 100.0,
            age_terms: swatch.entry.age_terms.clone(),
            age_ma: swatch.entry.age_ma,
            lithology_terms: swatch.entry.lithology_terms.clone(),
        })
        .collect();
    ranked.sort_by(|a, b| a.delta_e.total_cmp(&b.delta_e));
    ranked
}

/// What the nearest swatches say of the colour at a point.
fn colour_summary(unit: Option<&UnitCandidate>, nearest: &[UnitCandidate], colour: (u8, u8, u8)) -> String {
    match (unit, nearest.first()) {
        (Some(best), _) => match nearest.get(1) {
            Some(next) => format!(
                "The map here is {} (ΔE {:.1}); the next nearest swatch is {} (ΔE {:.1}).",
                best.unit.name(),
                best.delta_e,
                next.unit.name(),
                next.delta_e
            ),
            None => format!("The map here is {} (ΔE {:.1}).", best.unit.name(), best.delta_e),
        },
        (None, Some(best)) => format!(
            "The colour here ({}) matches no legend unit: the nearest swatch, {}, is ΔE {:.1} away (over {NO_MATCH_DELTA_E}). The point may be on a symbol, a label, water or a part of the map the legend does not cover.",
            hex(colour),
            best.unit.name(),
            best.delta_e
        ),
        (None, None) => unreachable!("there is at least one swatch"),
    }
}

/// A legend entry as the GeoPackage's unit and type rows: its ages' words, the youngest and oldest
/// ICS intervals named, their ages, and its rock names.
fn unit_row(entry: &StoredEntry, colour: (u8, u8, u8)) -> UnitRow {
    let resolved: Vec<_> = entry.age_terms.iter().filter_map(|term| term.ics.as_ref().map(|ics| (ics, term))).collect();
    let youngest = resolved.iter().min_by(|a, b| a.0.end_ma.unwrap_or(f64::MAX).total_cmp(&b.0.end_ma.unwrap_or(f64::MAX)));
    let oldest = resolved.iter().max_by(|a, b| a.0.begin_ma.unwrap_or(f64::MIN).total_cmp(&b.0.begin_ma.unwrap_or(f64::MIN)));
    let words: Vec<&str> = entry.age_terms.iter().map(|term| term.term.as_str()).collect();
    let rocks: Vec<&str> = entry.lithology_terms.iter().map(|term| term.cgi.as_ref().map_or(term.term.as_str(), |cgi| cgi.label.as_str())).collect();
    UnitRow {
        code: entry.code.clone(),
        description: entry.description.clone(),
        colour,
        category: entry.group.clone(),
        age_text: (!words.is_empty()).then(|| words.join(", ")),
        // A modifier's span ("upper Miocene": Tortonian–Messinian) names its oldest interval first.
        t_interval: youngest.and_then(|(ics, _)| ics.label.split('–').next_back()).map(|label| label.trim().to_owned()),
        b_interval: oldest.and_then(|(ics, _)| ics.label.split('–').next()).map(|label| label.trim().to_owned()),
        t_age: entry.age_ma.map(|span| span.end_ma),
        b_age: entry.age_ma.map(|span| span.begin_ma),
        lithology: (!rocks.is_empty()).then(|| rocks.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapGone;
    use crate::testing::{TestApp, heard};

    /// A 200 × 150 map: red on the left, blue on the right, a black contact between them.
    async fn two_units(test: &TestApp) -> String {
        test.scan("two.png", 200, 150, |x, _| match x {
            99..=100 => [10, 10, 10],
            0..99 => [220, 60, 60],
            _ => [60, 120, 220],
        });
        test.register("two.png").await
    }

    const SWATCHES: [(&str, &str); 3] = [("Qr", "#dc3c3c"), ("Qb", "#3c78dc"), ("Qx", "#00ff00")];

    #[tokio::test(flavor = "multi_thread")]
    async fn an_extraction_writes_the_layers_and_the_point_then_agrees_with_them() {
        let test = TestApp::new(&[]);
        let map_id = two_units(&test).await;
        let layout_id = test.store_layout(&map_id, (200, 150), [0.0, 0.0, 200.0, 150.0], &SWATCHES);
        let before = test.app.unit_at(UnitAtRequest { map_id: map_id.clone(), col: Some(20.0), row: Some(20.0), ..UnitAtRequest::default() }).await.unwrap();
        assert_eq!((before.unit.as_ref().and_then(|unit| unit.unit.code.as_deref()), before.units_id.as_deref()), (Some("Qr"), None), "{}", before.summary);
        let (progress, heard, _) = heard();
        let extraction = test.app.extract_units(ExtractRequest::of(&map_id), progress).await.unwrap();
        assert_eq!(extraction.layout_id, layout_id);
        let polygons: Vec<u64> = extraction.units.iter().map(|unit| unit.polygons).collect();
        assert_eq!(polygons, [1, 1, 0], "one region each, none of the absent green unit");
        assert!((extraction.units[0].share - 0.5).abs() < 0.02 && extraction.unclassified_share < 0.02, "{:?}", extraction.units);
        assert!(extraction.warnings.iter().any(|warning| warning.contains("Qx")), "{:?}", extraction.warnings);
        let folder = layout_dir(&test.app.settings.artifact_root, &map_id, &extraction.units_id);
        for file in &extraction.files {
            assert!(folder.join(file).is_file(), "{file} is written");
        }
        assert_eq!(heard.lock().unwrap().last().map(|update| update.done), Some(100));
        let after = test.app.unit_at(UnitAtRequest { map_id: map_id.clone(), col: Some(150.0), row: Some(75.0), ..UnitAtRequest::default() }).await.unwrap();
        assert_eq!(after.units_id.as_deref(), Some(extraction.units_id.as_str()), "{}", after.summary);
        assert_eq!(after.unit.and_then(|unit| unit.unit.code), Some("Qb".to_owned()));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn without_a_layout_or_a_georeference_or_with_a_bad_point_the_unit_is_not_given() {
        let test = TestApp::new(&[]);
        let map_id = two_units(&test).await;
        let at = |col: Option<f64>, lon: Option<f64>| UnitAtRequest { map_id: map_id.clone(), col, row: col, lon, lat: lon, layout_id: None };
        let no_layout = test.app.unit_at(at(Some(10.0), None)).await.unwrap_err();
        assert!(matches!(no_layout, AppError::MapNotFound { reason: MapGone::NoLayout, .. }), "{no_layout:?}");
        let no_extraction_layout = test.app.extract_units(ExtractRequest::of(&map_id), Progress::none()).await.unwrap_err();
        assert!(matches!(no_extraction_layout, AppError::MapNotFound { reason: MapGone::NoLayout, .. }));
        test.store_layout(&map_id, (200, 150), [0.0, 0.0, 200.0, 150.0], &SWATCHES);
        let no_revision = test.app.unit_at(at(None, Some(-113.5))).await.unwrap_err();
        assert!(matches!(no_revision, AppError::GeorefRequired { .. }), "{no_revision:?}");
        let both = test.app.unit_at(at(Some(10.0), Some(-113.5))).await.unwrap_err();
        assert!(matches!(&both, AppError::InvalidArguments(argument) if argument.field == "/col"), "{both:?}");
        let outside = test.app.unit_at(at(Some(500.0), None)).await.unwrap_err();
        assert!(matches!(&outside, AppError::InvalidArguments(argument) if argument.field == "/col"), "{outside:?}");
        let zero = test.app.extract_units(ExtractRequest { min_area_px: Some(0), ..ExtractRequest::of(&map_id) }, Progress::none()).await.unwrap_err();
        assert!(matches!(&zero, AppError::InvalidArguments(argument) if argument.field == "/min_area_px"), "{zero:?}");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_cancelled_extraction_keeps_nothing() {
        let test = TestApp::new(&[]);
        let map_id = two_units(&test).await;
        test.store_layout(&map_id, (200, 150), [0.0, 0.0, 200.0, 150.0], &SWATCHES);
        let (progress, _, cancel) = heard();
        cancel.cancel();
        let cancelled = test.app.extract_units(ExtractRequest::of(&map_id), progress).await.unwrap_err();
        assert!(cancelled.is_cancellation(), "{cancelled:?}");
        assert!(test.app.newest_units(&map_id).unwrap().is_none());
    }

    #[test]
    fn a_unit_row_spans_its_youngest_and_oldest_intervals() {
        let resolved =
            |label: &str, begin: f64, end: f64| crate::terms::Resolved { id: label.into(), label: label.into(), begin_ma: Some(begin), end_ma: Some(end) };
        let term = |term: &str, ics| AgeTermInfo { term: term.into(), uncertain: false, ics: Some(ics) };
        let entry = StoredEntry {
            swatch: None,
            score: None,
            colour_hex: Some("#dc3c3c".into()),
            code: Some("Tv".into()),
            description: Some("Volcanic rocks (Miocene and Pliocene)".into()),
            group: None,
            age_terms: vec![term("Miocene", resolved("Miocene", 23.03, 5.333)), term("Pliocene", resolved("Pliocene", 5.333, 2.58))],
            age_ma: Some(AgeSpan { begin_ma: 23.03, end_ma: 2.58 }),
            lithology_terms: vec![LithologyInfo { term: "basalt".into(), cgi: None }],
        };
        let row = unit_row(&entry, (220, 60, 60));
        assert_eq!((row.t_interval.as_deref(), row.b_interval.as_deref()), (Some("Pliocene"), Some("Miocene")));
        assert_eq!(
            (row.t_age, row.b_age, row.age_text.as_deref(), row.lithology.as_deref()),
            (Some(2.58), Some(23.03), Some("Miocene, Pliocene"), Some("basalt"))
        );
        // An informal modifier's span names one interval each way: the youngest and the oldest.
        let spans = StoredEntry {
            age_terms: vec![
                term("middle Miocene", resolved("Langhian–Serravallian", 15.98, 11.63)),
                term("lower Miocene", resolved("Aquitanian–Burdigalian", 23.03, 15.98)),
            ],
            ..entry
        };
        let row = unit_row(&spans, (220, 60, 60));
        assert_eq!((row.t_interval.as_deref(), row.b_interval.as_deref()), (Some("Serravallian"), Some("Aquitanian")));
    }
}
