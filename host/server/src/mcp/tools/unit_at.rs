//! `geomap_unit_at`: the legend unit under a point of the map — the swatch
//! whose colour is nearest (CIELAB ΔE) to the map's colour around that point,
//! with the runner-up, from the map's newest stored layout. A point given as
//! longitude and latitude goes through the newest georeference revision.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::ServerState;
use crate::mcp::adapter::ToolError;
use crate::mcp::arguments::{ArgumentError, ArgumentProblem};
use geomap_model::layout::PixelBox;
use geomap_model::trace;
use geomap_store::media::MediaError;
use geomap_vision::colour::{delta_e, ground_colour, hex, lab};
use geomap_vision::units::NO_MATCH_DELTA_E;

use super::layout_words::{AgeSpan, AgeTermInfo, LithologyInfo};
use super::open_registered;
use super::stored::{self, LegendUnit};

/// The map's colour at a point is sampled from the square this many pixels either side of it.
const SAMPLE_RADIUS: f64 = 5.0;

/// Arguments of `geomap_unit_at`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitAtArgs {
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
#[derive(Debug, Serialize, JsonSchema)]
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
    /// What the answer means, in a sentence.
    pub summary: String,
}

/// The parts of a stored layout this tool reads.
fn wrong(field: &str, problem: ArgumentProblem, expected: String) -> ToolError {
    ArgumentError { field: field.to_owned(), problem, expected }.into()
}

/// `geomap_unit_at`: the point in pixels (through the newest revision for lon/lat), the map's
/// colour around it, and the legend swatches nearest that colour.
pub async fn unit_at(state: Arc<ServerState>, args: UnitAtArgs) -> Result<UnitAt, ToolError> {
    let by_pixel = match (args.col, args.row, args.lon, args.lat) {
        (Some(col), Some(row), None, None) => Some((col, row)),
        (None, None, Some(_), Some(_)) => None,
        _ => return Err(wrong("/col", ArgumentProblem::Conflict, "either col and row (pixels) or lon and lat (WGS84), as a pair".to_owned())),
    };
    trace::spawn_blocking(move || {
        let map = open_registered(&state, &args.map_id)?;
        if !map.record.media_type.has_pixels() {
            return Err(MediaError::NoPixels { action: "sample" }.into());
        }
        let map_id = map.record.map_id.clone();
        let (layout_id, layout) = match &args.layout_id {
            Some(id) => (id.clone(), stored::layout(&state, &map_id, id)?),
            None => stored::newest_layout(&state, &map_id)?,
        };
        let swatches = layout.swatches(&map_id)?;
        let (revision_id, (col, row)) = match by_pixel {
            Some(point) => (None, point),
            None => {
                let revision = map.record.revisions.last().ok_or_else(|| ToolError::GeorefRequired { map_id: map_id.clone() })?;
                let point = geomap_georef::pixel_at(revision, args.lon.unwrap_or_default(), args.lat.unwrap_or_default())?;
                (Some(revision.revision_id.clone()), point)
            }
        };
        let (width, height) = (layout.width as f64, layout.height as f64);
        if !(col.is_finite() && row.is_finite() && (0.0..width).contains(&col) && (0.0..height).contains(&row)) {
            let (field, expected) = match revision_id {
                None => ("/col", format!("a point inside the scan: 0 <= col < {width} and 0 <= row < {height}")),
                Some(_) => ("/lon", format!("a point inside the map: it falls at pixel ({col:.0}, {row:.0}), outside the {width} × {height} scan")),
            };
            return Err(wrong(field, ArgumentProblem::WrongValue, expected));
        }
        let window = PixelBox { x0: col - SAMPLE_RADIUS, y0: row - SAMPLE_RADIUS, x1: col + SAMPLE_RADIUS + 1.0, y1: row + SAMPLE_RADIUS + 1.0 };
        let region = window.pixels(layout.width, layout.height);
        let sample = state.pixels.window(&map.record.sha256, &map.file, state.settings.max_image_pixels, region)?;
        let (left, top) = (region.0 as f64, region.1 as f64);
        let local = PixelBox { x0: window.x0 - left, y0: window.y0 - top, x1: window.x1 - left, y1: window.y1 - top };
        let colour = ground_colour(&sample, &local).expect("the point is inside the scan");
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
        let candidates = ranked.clone();
        ranked.truncate(2);
        let extracted = extracted_unit(&state, &map_id, &layout_id, col, row)?;
        let unit = match &extracted {
            Some((_, legend_entry)) => legend_entry.and_then(|entry| candidates.iter().find(|c| c.unit.legend_entry == entry).cloned()),
            None => ranked.first().filter(|best| best.delta_e <= NO_MATCH_DELTA_E).cloned(),
        };
        let name = |c: &UnitCandidate| c.unit.name();
        let summary = match (&extracted, &unit) {
            (Some((units_id, _)), Some(best)) => {
                format!("The extracted units ({units_id}) put {} here; its swatch is ΔE {:.1} from the colour here.", name(best), best.delta_e)
            }
            (Some((units_id, _)), None) => format!("The extracted units ({units_id}) put no unit here: water, paper or a colour the legend lacks."),
            (None, _) => colour_summary(&unit, &ranked, colour, &name),
        };
        let units_id = extracted.map(|(units_id, _)| units_id);
        Ok(UnitAt { map_id, layout_id, revision_id, col, row, colour_hex: hex(colour), unit, nearest: ranked, units_id, summary })
    })
    .await
}

/// The class the newest unit extraction of `layout_id` gives scan pixel `(col, row)`: its ID and
/// the legend entry (none: no unit there), or `None` without an extraction covering the point.
fn extracted_unit(state: &ServerState, map_id: &str, layout_id: &str, col: f64, row: f64) -> Result<Option<(String, Option<usize>)>, ToolError> {
    let Some((units_id, units)) = super::stored::newest_units(state, map_id)?.filter(|(_, units)| units.layout_id == layout_id) else {
        return Ok(None);
    };
    let (x, y) = (col - units.region.x0, row - units.region.y0);
    if x < 0.0 || y < 0.0 {
        return Ok(None);
    }
    let raster = crate::mcp::uris::layout_dir(state, map_id, &units_id).join(geomap_georef::units::UNIT_RASTER);
    let Some(class) = geomap_georef::units::class_at(&raster, x as u32, y as u32)? else { return Ok(None) };
    let entry = units.units.iter().find(|unit| unit.class == class).map(|unit| unit.legend_entry);
    Ok(Some((units_id, entry)))
}

/// What the nearest swatches say of the colour at a point.
fn colour_summary(unit: &Option<UnitCandidate>, ranked: &[UnitCandidate], colour: (u8, u8, u8), name: &dyn Fn(&UnitCandidate) -> String) -> String {
    match (unit, ranked.first()) {
        (Some(best), _) => match ranked.get(1) {
            Some(next) => {
                format!("The map here is {} (ΔE {:.1}); the next nearest swatch is {} (ΔE {:.1}).", name(best), best.delta_e, name(next), next.delta_e)
            }
            None => format!("The map here is {} (ΔE {:.1}).", name(best), best.delta_e),
        },
        (None, Some(best)) => format!(
            "The colour here ({}) matches no legend unit: the nearest swatch, {}, is ΔE {:.1} away (over {NO_MATCH_DELTA_E}). The point may be on a symbol, a label, water or a part of the map the legend does not cover.",
            hex(colour),
            name(best),
            best.delta_e
        ),
        (None, None) => unreachable!("there is at least one swatch"),
    }
}
