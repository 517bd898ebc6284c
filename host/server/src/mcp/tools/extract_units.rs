//! `geomap_extract_units`: the map's units and structure as GIS layers (a TA1 GeoPackage, a unit raster and a preview).

use std::sync::Arc;

use rmcp::model::Resource;

use geomap_app::AppError;
use geomap_app::resources::{GEOPACKAGE_MEDIA_TYPE, GEOTIFF_MEDIA_TYPE, media_type_of};
use geomap_app::status::Status;
use geomap_app::units::{EXTRACT_TOOL, ExtractRequest, UnitExtraction};
use geomap_assets::Catalog;

use super::{Call, Hints, Reply, Tool, Unready, Withholding, needs_gdal};
use crate::mcp::ServerState;
use crate::mcp::resources::layout_resource;

/// `geomap_extract_units`.
pub struct ExtractUnits;

impl Tool for ExtractUnits {
    const NAME: &'static str = EXTRACT_TOOL;
    const TITLE: &'static str = "The map's units and structure as GIS layers";
    const HINTS: Hints = Hints::WRITES_ANEW;
    const HEAVY: bool = true;
    const WITHHELD_BY: Option<Withholding> = None;
    type Args = ExtractRequest;
    type Output = UnitExtraction;

    fn description(_: &Catalog) -> String {
        "Turn a registered scan's main map into its geologic units and its structure as GIS layers: every pixel goes to the nearest legend swatch (CIELAB), linework, printed codes and thin strokes are filled from the units around them, regions under the minimum mapping unit (`min_area_px`) are merged away, and the regions are polygonized; each line symbol of the explanation the layout read (its colour, width, dash pattern and teeth or arrows) is traced on the main map, so faults, thrusts and fold axes become lines of their TA1 type, split where their pattern changes (solid: certain; dashed or dotted: approximate or concealed), with the side of their teeth as polarity (contacts stay the polygons' edges); without an explanation of line symbols, dark lines are found by their look at lower confidence (much wider than the map's common dark stroke: a fault; with teeth: a thrust; with a ball: a normal fault; arrows across: an anticline or a syncline); each strike-and-dip symbol of the explanation (a strike line with its dip tick, measured on its sample; one printed a pixel wide, its tick too small to thin, is found as a lone straight stroke as dark as its sample with its tick and number beside it) is found on the main map as a bedding attitude: its dip direction (degrees clockwise from grid north through the newest georeference, else from the sheet's up, as the result says) and its dip read from the number printed beside it (absent when none is read, never guessed; the words' box kept as evidence); vertical beds (a tick on each side) and horizontal beds (a cross in a circle) are found by their own symbols, with the dip the symbol says (90°, 0°); the filled marks the explanation lists (collapse structures, breccia pipes, sinkholes, vents: a dot or triangle on its own, by its sample's colour, size and shape, none strung on a line) are point features of their kind without a dip, and the strike of vertical joints (a dot strung on a hairline) a TA1 joint dipping 90° square to its hairline; without an explanation of attitude symbols (none, or only marks explained), strike-and-dip symbols and horizontal beds' circled crosses are found by their shape, measured on the map, at lower confidence; each cross section the layout found with its letters has its line of section looked for (the thin line drawn between A and A′ on the main map, from A to A′; letters too small for the text detector are read at the ends of the map's thin straight lines or where the ink beside one widens a little way back; a line with one letter read is taken, at lower confidence, when as long as its cross section is wide, sections being drawn at the map's scale). Writes a complete GeoPackage in the DARPA CriticalMAAS TA1 schema, as its own package (criticalmaas-ta1-geopackage) opens and checks it: map, map_metadata (as the sheet prints it), geologic_unit with ages (the youngest and oldest chart interval) and rock names, polygon_type, polygon_feature, line_type, line_feature, point_type, point_feature and cross_section in the schema's pixel coordinates, page_extraction (each component and swatch the layout found, with its box and words), ground_control_point and georeference_meta (the newest revision's control points, CRS and extent), model_run (the layout, georeference and extraction, and each model with its file's SHA-256) and a confidence_measurement for every feature's confidence, and the polygon, line, point, section and control-point layers again with _georeferenced in the CRS of the map's newest georeference revision when there is one; QGIS opens it coloured as the printed map (a default style per layer in its layer_styles table: the units in their legend colours labelled with their codes, the line types by kind and pattern, the attitudes as strike lines with their dips, the marks as dots or triangles of their colour, the joints as strike lines), each feature layer as GeoJSON when the map is georeferenced (RFC 7946: one FeatureCollection per layer in WGS 84, the same features and fields), a unit raster (Cloud Optimized GeoTIFF with the swatches as its palette) and a preview beside the scan, all as resources and with their server paths. Reports per unit its polygons, share, area in km² when georeferenced and mean confidence, per line symbol its features, length (in km when georeferenced), mean confidence and whether the explanation or the look prompted it, per point symbol its features, dips read, mean confidence and prompt, per line of section its ends and length, the sheet's scale (paper millimetres per pixel and dpi, from the printed ratio through the georeference, else the explanation's symbols measured on their samples, else the type's height, with every estimate and how far they disagree), and warns of units with no pixels, large unclassified areas, swatches too close to tell apart, line and point symbols found nowhere, not measurable on their sample, attitudes without a dip, cross sections whose line was not found and a sheet without an explanation of its symbols. Uses the newest layout (or `layout_id`); without one it fails with artifact_not_found (reason no_layout): call geomap_process_image first. Not idempotent: every call writes a new extraction.".to_owned()
    }

    fn readiness(status: &Status) -> Option<Unready> {
        needs_gdal(status, "GDAL lacks what writing the units' layers needs (see georeference.missing)")
    }

    async fn call(state: Arc<ServerState>, args: ExtractRequest, call: Call) -> Result<Reply<UnitExtraction>, AppError> {
        Ok(Reply::Done(state.app.extract_units(args, call.progress).await?))
    }

    fn links(extraction: &UnitExtraction) -> Vec<Resource> {
        let mut links = vec![
            layout_resource(&extraction.resource_uri, "application/json"),
            layout_resource(&extraction.geopackage_uri, GEOPACKAGE_MEDIA_TYPE),
            layout_resource(&extraction.raster_uri, GEOTIFF_MEDIA_TYPE),
            layout_resource(&extraction.preview_uri, "image/png"),
        ];
        links.extend(extraction.geojson_uris.iter().map(|uri| layout_resource(uri, media_type_of(uri))));
        links
    }
}
