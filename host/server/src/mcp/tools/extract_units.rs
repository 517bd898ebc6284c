//! `geomap_extract_units`: the map's units as GIS layers. Every pixel of the
//! newest layout's main map goes to the nearest legend swatch in CIELAB
//! (`geomap_vision::units`), linework is filled, speckle under the minimum
//! mapping unit sieved, and the regions polygonized into a TA1 GeoPackage with
//! a unit raster (`geomap_georef::units`), georeferenced through the newest
//! revision when there is one, plus a preview; all stored as a
//! `geomap-units/v1` document whose files are resources.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::mcp::ServerState;
use crate::mcp::adapter::ToolError;
use crate::mcp::arguments::{ArgumentError, ArgumentProblem};
use crate::mcp::progress::{ProgressSink, ProgressUpdate};
use crate::mcp::uris::{layout_dir, layout_uri, map_uri};
use geomap_georef::units::{GEOPACKAGE, MapRow, UNIT_RASTER, UnitRaster, UnitRow};
use geomap_model::layout::PixelBox;
use geomap_model::trace;
use geomap_store::media::MediaError;
use geomap_store::registry::{Document, StoredDocument};
use geomap_vision::units::{self as classes, filter, regions};
use geomap_vision::{VisionError, millis};

use super::open_registered;
use super::stored::{self, LegendUnit, StoredEntry};

/// The schema tag of stored unit extractions.
pub const UNITS_SCHEMA: &str = "geomap-units/v1";
/// The preview's file name.
pub const PREVIEW: &str = "preview.png";
/// Over this share of the main map unclassified, the result warns.
const UNCLASSIFIED_WARNING: f64 = 0.25;

/// Arguments of `geomap_extract_units`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractUnitsArgs {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// The layout whose main map and legend to use (default: the map's newest).
    pub layout_id: Option<String>,
    /// The minimum mapping unit in pixels: regions smaller than this are merged into their
    /// largest neighbour (default: 1/20000 of the main map, at least 16).
    pub min_area_px: Option<u64>,
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

/// Milliseconds per stage.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnitTimings {
    /// Reading the main map and classifying it.
    pub classify_ms: f64,
    /// Filling linework and removing thin strokes.
    pub fill_ms: f64,
    /// The sieve to the minimum mapping unit.
    pub sieve_ms: f64,
    /// Polygonizing and writing the GeoPackage, the raster and the preview.
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
    /// The share of the main map that matches no unit (water, paper, colours the legend lacks).
    pub unclassified_share: f64,
    /// The stored document as an MCP resource.
    pub resource_uri: String,
    /// The GeoPackage (TA1 schema: `map`, `geologic_unit`, `polygon_type`, `polygon_feature` in
    /// pixel coordinates, `polygon_feature_georeferenced` in the revision's CRS) as a resource.
    pub geopackage_uri: String,
    /// The unit raster (a Cloud Optimized GeoTIFF, the swatches as its palette) as a resource.
    pub raster_uri: String,
    /// The scan's main map beside its classification, as a resource.
    pub preview_uri: String,
    /// Where the GeoPackage is on the server's disk, for a GIS user there to open directly.
    pub geopackage_path: String,
    /// Where the unit raster is on the server's disk.
    pub raster_path: String,
    /// Time per stage.
    pub timings: UnitTimings,
    /// Things to check: a unit with no pixels, a large unclassified area, swatches too close to tell apart.
    pub warnings: Vec<String>,
    /// The files stored with it.
    pub files: Vec<String>,
}

/// `geomap_extract_units`: classifies the newest layout's main map (or `layout_id`'s) against its
/// legend's swatches and writes the layers, with progress per stage and cancellation between them.
pub async fn extract_units(
    state: Arc<ServerState>,
    args: ExtractUnitsArgs,
    progress: Option<ProgressSink>,
    cancel: CancellationToken,
) -> Result<UnitExtraction, ToolError> {
    if args.min_area_px == Some(0) {
        return Err(ArgumentError {
            field: "/min_area_px".to_owned(),
            problem: ArgumentProblem::WrongValue,
            expected: "a positive number of pixels".to_owned(),
        }
        .into());
    }
    let (updates, received) = tokio::sync::mpsc::unbounded_channel();
    let forwarding = progress.map(|sink| tokio::spawn(sink.forward(received)));
    let outcome = trace::spawn_blocking(move || {
        let send = |done: u64, message: &str| {
            let _ = updates.send(ProgressUpdate { done, total: 100, message: message.to_owned() });
        };
        let stop = || if cancel.is_cancelled() { Err(ToolError::from(VisionError::Cancelled)) } else { Ok(()) };
        let map = open_registered(&state, &args.map_id)?;
        if !map.record.media_type.has_pixels() {
            return Err(MediaError::NoPixels { action: "classify" }.into());
        }
        let map_id = map.record.map_id.clone();
        let (layout_id, layout) = match &args.layout_id {
            Some(id) => (id.clone(), stored::layout(&state, &map_id, id)?),
            None => stored::newest_layout(&state, &map_id)?,
        };
        let mut legend = layout.swatches(&map_id)?;
        legend.truncate(classes::MAX_UNITS);
        let mut warnings = Vec::new();
        let (scan_width, scan_height) = (map.record.width as u32, map.record.height as u32);
        let region = match layout.components.iter().find(|component| component.class == "main_map") {
            Some(main) => main.bbox,
            None => {
                warnings.push("The layout has no main map: the whole scan was classified, legend and margins included.".to_owned());
                PixelBox { x0: 0.0, y0: 0.0, x1: f64::from(scan_width), y1: f64::from(scan_height) }
            }
        };
        let (left, top, right, bottom) = region.pixels(scan_width, scan_height);
        let (width, height) = (right - left, bottom - top);
        let pixels = u64::from(width) * u64::from(height);
        let min_area = args.min_area_px.unwrap_or((pixels / 20_000).max(16));
        let swatches: Vec<(u8, u8, u8)> = legend.iter().map(|swatch| swatch.colour).collect();
        for (a, b, distance) in classes::indistinct_pairs(&swatches) {
            warnings.push(format!(
                "The swatches of {} and {} are ΔE {distance:.1} apart: on a scan their units cannot be told apart reliably, so check where either was mapped.",
                legend[a].unit.name(),
                legend[b].unit.name()
            ));
        }

        let started = Instant::now();
        send(0, "classifying the main map");
        let classified = classes::classify_map(&swatches, width, height, |first_row, rows| {
            stop()?;
            send(u64::from(first_row) * 40 / u64::from(height.max(1)), "classifying the main map");
            Ok::<_, ToolError>(state.pixels.window(&map.record.sha256, &map.file, state.settings.max_image_pixels, (left, top + first_row, right, top + first_row + rows))?)
        })?;
        let classify_ms = millis(started);
        let classes::Classified { classes: mut raster, mut confidence, mut preview } = classified;

        let started = Instant::now();
        send(40, "filling linework");
        if !filter::fill_strokes(&mut raster, &mut confidence, width as usize, height as usize, swatches.len() as u8, &|| cancel.is_cancelled()) {
            return Err(VisionError::Cancelled.into());
        }
        let fill_ms = millis(started);

        let started = Instant::now();
        send(55, "removing speckle below the minimum mapping unit");
        let mut gdal_raster = UnitRaster::new(raster, width as usize, height as usize, left, top)?;
        gdal_raster.sieve(min_area as usize, &mut |done| {
            send(55 + (done * 10.0) as u64, "removing speckle below the minimum mapping unit");
            !cancel.is_cancelled()
        })?;
        let mut raster = vec![0_u8; pixels as usize];
        gdal_raster.read_classes(&mut raster)?;
        let sieve_ms = millis(started);
        stop()?;

        let started = Instant::now();
        let found = regions::regions(&raster, &confidence, width as usize, height as usize);
        drop(confidence);
        let by_first: HashMap<(u32, u32), f64> = found.iter().map(|r| ((r.first_x + left, r.first_y + top), r.confidence)).collect();
        let (mut class_pixels, mut class_confidence) = (vec![0_u64; swatches.len() + 1], vec![0.0_f64; swatches.len() + 1]);
        for region in &found {
            class_pixels[region.class as usize] += region.pixels;
            class_confidence[region.class as usize] += region.confidence * region.pixels as f64;
        }
        class_pixels[0] = pixels - class_pixels.iter().skip(1).sum::<u64>();
        preview.paint_classes(&raster, &swatches);
        drop(raster);
        let revision = map.record.revisions.last();
        // Before any file is written, so a revision whose transform fails here leaves nothing behind.
        let centre = ((f64::from(left) + f64::from(right)) / 2.0, (f64::from(top) + f64::from(bottom)) / 2.0);
        let pixel_km2 = revision.map(|revision| geomap_georef::units::pixel_area_km2(revision, centre.0, centre.1)).transpose()?;
        let units_id = format!("unt_{}", geomap_model::random_hex(10));
        let folder = layout_dir(&state, &map_id, &units_id);
        let title = layout.title.clone().filter(|title| !title.trim().is_empty()).unwrap_or_else(|| map.record.relative_path.clone());
        let map_row = MapRow { map_id: map_id.clone(), name: title, image_url: map_uri(&map_id), width: map.record.width, height: map.record.height };
        let rows: Vec<UnitRow> = legend.iter().map(|swatch| unit_row(swatch.entry, swatch.colour)).collect();
        let staged = stored::stage(&state, &map_id, &units_id)?;
        send(65, "polygonizing and writing the GeoPackage");
        let written = gdal_raster.write(staged.path(), &map_row, &rows, &|x, y| by_first.get(&(x, y)).copied(), revision, &mut |done| {
            send(65 + (done * 30.0) as u64, "polygonizing and writing the GeoPackage");
            !cancel.is_cancelled()
        })?;
        let preview_path = staged.path().join(PREVIEW);
        preview.image.write_png(&preview_path, (0, 0, preview.image.width, preview.image.height)).map_err(|error| VisionError::Storage(format!("cannot write the preview: {error}")))?;
        drop(gdal_raster);
        let write_ms = millis(started);

        let round = |value: f64, places: i32| (value * 10f64.powi(places)).round() / 10f64.powi(places);
        let units: Vec<UnitSummary> = legend
            .iter()
            .enumerate()
            .map(|(index, swatch)| {
                let class = index + 1;
                let count = class_pixels[class];
                UnitSummary {
                    unit: swatch.unit.clone(),
                    class: class as u8,
                    polygons: written.polygons[class],
                    share: round(count as f64 / pixels as f64, 5),
                    area_km2: pixel_km2.map(|km2| round(km2 * count as f64, 4)),
                    mean_confidence: if count == 0 { 0.0 } else { round(class_confidence[class] / count as f64, 3) },
                }
            })
            .collect();
        for unit in units.iter().filter(|unit| unit.polygons == 0) {
            warnings.push(format!(
                "No part of the main map was classified as {} ({}): its colour may not occur on the map, or it is too small for the minimum mapping unit of {min_area} pixels.",
                unit.unit.name(),
                unit.unit.colour_hex
            ));
        }
        let unclassified_share = round(class_pixels[0] as f64 / pixels as f64, 5);
        if unclassified_share > UNCLASSIFIED_WARNING {
            warnings.push(format!(
                "{:.0}% of the main map matches no legend swatch (over ΔE {} from all): water, unmapped paper, patterns or a legend read incompletely.",
                unclassified_share * 100.0,
                classes::NO_MATCH_DELTA_E
            ));
        }
        let files = vec!["units.json".to_owned(), GEOPACKAGE.to_owned(), UNIT_RASTER.to_owned(), PREVIEW.to_owned()];
        let path_of = |name: &str| folder.join(name).to_string_lossy().into_owned();
        let extraction = UnitExtraction {
            schema: UNITS_SCHEMA.to_owned(),
            resource_uri: layout_uri(&map_id, &units_id, "units.json"),
            geopackage_uri: layout_uri(&map_id, &units_id, GEOPACKAGE),
            raster_uri: layout_uri(&map_id, &units_id, UNIT_RASTER),
            preview_uri: layout_uri(&map_id, &units_id, PREVIEW),
            geopackage_path: path_of(GEOPACKAGE),
            raster_path: path_of(UNIT_RASTER),
            map_id,
            units_id,
            layout_id,
            revision_id: revision.map(|revision| revision.revision_id.clone()),
            crs: written.crs,
            created_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            region: PixelBox { x0: f64::from(left), y0: f64::from(top), x1: f64::from(right), y1: f64::from(bottom) },
            min_area_px: min_area,
            units,
            unclassified_share,
            timings: UnitTimings { classify_ms, fill_ms, sieve_ms, write_ms },
            warnings,
            files,
        };
        if cancel.is_cancelled() {
            return Err(VisionError::Cancelled.into()); // the staged folder goes with it
        }
        let document = serde_json::to_string_pretty(&extraction).expect("extractions serialize");
        let record = StoredDocument { kind: Document::Units, id: extraction.units_id.clone(), map_id: extraction.map_id.clone(), created_at: extraction.created_at.clone(), document };
        stored::store(&state, staged, "units.json", &record)?;
        send(100, "done");
        Ok(extraction)
    })
    .await;
    if let Some(forwarding) = forwarding {
        let _ = forwarding.await; // every progress notification goes out before the result
    }
    outcome
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
        t_interval: youngest.map(|(ics, _)| ics.label.clone()),
        b_interval: oldest.map(|(ics, _)| ics.label.clone()),
        t_age: entry.age_ma.map(|span| span.end_ma),
        b_age: entry.age_ma.map(|span| span.begin_ma),
        lithology: (!rocks.is_empty()).then(|| rocks.join(", ")),
    }
}
