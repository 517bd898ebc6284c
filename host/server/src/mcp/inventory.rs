//! The tools this server offers: names, descriptions, annotations and schemas.
//!
//! Invariants: built once at start; every output schema is `anyOf` [the
//! tool's success shape, the `geomap-error/v1` envelope], so clients that
//! validate structured content even on errors (the MCP Inspector does) accept
//! both outcomes; `$defs` of both are hoisted to the root so `$ref`s resolve.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::{JsonSchema, Schema, schema_for};
use serde_json::{Map, Value, json};

use geomap_model::errors::Envelope;

use super::tools::MapReport;
pub use super::tools::ToolName;
use super::tools::capabilities::{CapabilitiesArgs, CapabilitiesResult};
use super::tools::describe_map::DescribeMapArgs;
use super::tools::extract_units::{ExtractUnitsArgs, UnitExtraction};
use super::tools::georeference::{GeoreferenceArgs, GeoreferenceReport};
use super::tools::lookup::{LookupArgs, LookupResult};
use super::tools::prepare_detectors::{PrepareDetectorsArgs, PrepareDetectorsResult};
use super::tools::prepare_knowledge::{PrepareKnowledgeArgs, PrepareKnowledgeResult};
use super::tools::process_image::{Layout, ProcessImageArgs};
use super::tools::query_knowledge::{KnowledgeBundle, QueryKnowledgeArgs};
use super::tools::read_text::{ReadTextArgs, TextReading};
use super::tools::register_map::RegisterMapArgs;
use super::tools::unit_at::{UnitAt, UnitAtArgs};
use geomap_assets::{AssetKind, Catalog};
use geomap_model::settings::Settings;

/// One offered tool.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// Its name.
    pub name: ToolName,
    /// Its MCP definition.
    pub tool: Tool,
}

impl ToolSpec {
    /// Whether the call takes one of the heavy-call slots before it runs: it decodes a whole scan, runs models or warps.
    /// The preparation tools take one themselves, once the user agreed to their download.
    pub fn heavy(&self) -> bool {
        matches!(self.name, ToolName::Georeference | ToolName::ProcessImage | ToolName::ReadText | ToolName::UnitAt | ToolName::ExtractUnits)
    }

    /// Whether the call may change what the server reports: it is not annotated read-only.
    pub fn may_write(&self) -> bool {
        self.tool.annotations.as_ref().is_none_or(|annotations| annotations.read_only_hint != Some(true))
    }

    /// Whether repeating the call unchanged is safe (from its annotations).
    pub fn idempotent(&self) -> bool {
        self.tool.annotations.as_ref().is_some_and(ToolAnnotations::is_idempotent)
    }
}

/// The tools offered to agents.
#[derive(Debug, Clone)]
pub struct Inventory {
    specs: Vec<ToolSpec>,
    /// Tools the operator's settings withhold, with the setting that does it.
    withheld: Vec<(ToolName, &'static str)>,
}

impl Inventory {
    /// Builds the inventory, once: the tools `settings` withhold are left out
    /// (and remembered, so a call to one says who withheld it).
    pub fn new(settings: &Settings, catalog: &Catalog) -> Inventory {
        let knowledge_bytes: u64 = catalog.of_kind(AssetKind::Knowledge).map(|asset| asset.download_size()).sum();
        let knowledge_ids: Vec<&str> = catalog.of_kind(AssetKind::Knowledge).map(|asset| asset.id.as_str()).collect();
        let runtime_bytes: u64 = catalog.of_kind(AssetKind::Runtime).map(|asset| asset.download_size()).sum();
        let ocr_bytes: u64 = catalog.of_kind(AssetKind::OcrModels).map(|asset| asset.download_size()).sum();
        let all = vec![
            spec::<CapabilitiesArgs, CapabilitiesResult>(
                ToolName::Capabilities,
                "Server capabilities",
                "What this server can do right now: its version, each tool and whether it is ready (with the error code it would fail with if not), the allowed map roots, the media limits and the data root's state. Call it first.",
                annotations("Server capabilities", true, true),
            ),
            spec::<RegisterMapArgs, MapReport>(
                ToolName::RegisterMap,
                "Register a map scan",
                "Register a scanned map (PNG, JPEG or TIFF/GeoTIFF) from an allowed map root and get its map_id. A geomap-map-bundle/v1 JSON file (a layout made elsewhere, with an optional georeference; format in geomap_capabilities media.map_bundle_schema) registers too, for a scan this server cannot take. Registering the same unchanged file again returns the same map_id. Paths are absolute inside an allowed root, or relative to the first root (see geomap_capabilities).",
                annotations("Register a map scan", false, true),
            ),
            spec::<DescribeMapArgs, MapReport>(
                ToolName::DescribeMap,
                "Describe a registered map",
                "Everything known about a registered map: file facts (type, size, sha256) and where it was registered from. Fails with artifact_not_found when the ID is unknown or the file changed or vanished; register it again then.",
                annotations("Describe a registered map", true, true),
            ),
            spec::<GeoreferenceArgs, GeoreferenceReport>(
                ToolName::Georeference,
                "Georeference a map",
                "Tie a registered map to the ground: give a CRS and either bounds (the CRS box of the whole scan, or of pixel_region) or control_points (pixel col/row → CRS x/y) with a transform (affine, polynomial2, polynomial3, thin_plate_spline). Or from: \"labels\" (crs optional): the server finds the map's neatline, reads the coordinate labels around it (degrees-minutes-seconds, minutes-only side labels, UTM), ties each to its tick or corner, rejects the ones that disagree and fits control points from them, deciding the datum from the sheet's words (the revision is in degrees, or in the UTM zone on that datum when the graticule is straighter there); dry_run: true shows the points, rejected labels and fit without writing. Every call writes a new revision (the newest is the map's current georeference) with residuals, RMSE, the WGS84 box and GeoTIFF/VRT files for GIS tools. Not idempotent. Wrong bounds, CRS or points fail with invalid_bounds: read the message; labels that give no georeference fail with too_few_labels, listing every label read.",
                annotations("Georeference a map", false, false),
            ),
            spec::<LookupArgs, LookupResult>(
                ToolName::Lookup,
                "Look a term up",
                "Look up a term from a map or its legend in the lookup providers: a time term (\"Jurassic\", \"Lower Cretaceous\", a Chinese chart label) gives the interval with its ages in Ma, a lithology term gives its CGI concept, a rock name its K2 class. Each answer names its provider; a provider that finds nothing gives close matches. Omit `providers` to ask every enabled lookup provider; a provider that fails while others answer is listed in `warnings`.",
                annotations("Look a term up", true, true),
            ),
            spec::<QueryKnowledgeArgs, KnowledgeBundle>(
                ToolName::QueryKnowledge,
                "Query knowledge about an area",
                "Ask the knowledge providers about a georeferenced map's area (map_id: its newest revision's wgs84_bounds) or an explicit WGS84 area: for example earthquakes in it. A map without a georeference fails with georef_required (call geomap_georeference first). Every call writes a new knowledge bundle (bundle_id, resource geomap://bundles/{bundle_id}), so it is not idempotent. A provider that fails while others answer is listed in `warnings`.",
                annotations("Query knowledge about an area", false, false),
            ),
            spec::<ProcessImageArgs, Layout>(
                ToolName::ProcessImage,
                "Find the map's layout",
                "Find a registered map's layout and read its words: its components (title, main_map, legend, scale, index_map, cross_section, stratigraphic_column, others) with boxes in the scan's pixels, the title's text, and each legend unit (colour swatch, colour as hex and name, code, description, the ages it names with their ICS intervals in Ma, its rock names) resolved through ics-timescale and cgi-lithology when they are ready. With PEACE's detectors and the OCR models it reads the words inside the detected boxes (method both); with the OCR models alone it reads the layout from the words and colours (method text, the usual case: PEACE's weights have no public source); `warnings` say what it did without. Stores the layout (geomap-layout/v1) with a PNG crop of every component and an annotated preview, all as resources. Not idempotent: every call writes a new layout. On a map registered from a map bundle it returns the bundle's layout as written. On a fresh install it fails with missing_extra: its hints say who installs the runtime and the OCR models (geomap_prepare_detectors after the user agrees, or the operator).",
                annotations("Find the map's layout", false, false),
            ),
            spec::<ReadTextArgs, TextReading>(
                ToolName::ReadText,
                "Read the map's words",
                "Read the text of a registered scan with PP-OCRv4 on the CPU: the whole scan, a pixel `region`, or a component of a stored layout (`layout_id` and `component`). Reads at full resolution in overlapping 1024-pixel tiles (progress per tile), so small legend type survives; returns lines with text, box in the scan's pixels and score, stored as a geomap-text/v1 resource. Not idempotent: every call writes a new reading. On a fresh install it fails with missing_extra: geomap_prepare_detectors installs the runtime and the OCR models after the user agrees.",
                annotations("Read the map's words", false, false),
            ),
            spec::<UnitAtArgs, UnitAt>(
                ToolName::UnitAt,
                "The unit under a point",
                "Which legend unit is under a point of a registered scan — `col` and `row` in its pixels, or `lon` and `lat` on WGS84 through its newest georeference (none yet is georef_required) — with its code, description, ages (ICS intervals in Ma) and rock names: the legend swatch whose colour is nearest the map's colour around the point (CIELAB ΔE, ink and labels left out), with the runner-up and both distances. A colour over ΔE 15 from every swatch matches no unit, and the result says so rather than guess. Reads the map's newest layout (or `layout_id`); without one it fails with artifact_not_found (reason no_layout): call geomap_process_image first.",
                annotations("The unit under a point", true, true),
            ),
            spec::<ExtractUnitsArgs, UnitExtraction>(
                ToolName::ExtractUnits,
                "The map's units as GIS layers",
                "Turn a registered scan's main map into its geologic units as GIS layers: every pixel goes to the nearest legend swatch (CIELAB), linework, printed codes and thin strokes are filled from the units around them, regions under the minimum mapping unit (`min_area_px`) are merged away, and the regions are polygonized. Writes a GeoPackage in the DARPA CriticalMAAS TA1 schema (map, geologic_unit with ages and rock names, polygon_type, polygon_feature in pixel coordinates, and polygon_feature_georeferenced in the CRS of the map's newest georeference revision when there is one), a unit raster (Cloud Optimized GeoTIFF with the swatches as its palette) and a preview beside the scan, all as resources and with their server paths. Reports per unit its polygons, share, area in km² when georeferenced and mean confidence, and warns of units with no pixels, large unclassified areas and swatches too close to tell apart. Uses the newest layout (or `layout_id`); without one it fails with artifact_not_found (reason no_layout): call geomap_process_image first. Not idempotent: every call writes a new extraction.",
                annotations("The map's units as GIS layers", false, false),
            ),
            spec::<PrepareDetectorsArgs, PrepareDetectorsResult>(
                ToolName::PrepareDetectors,
                "Download the layout detectors",
                format!(
                    "Downloads and installs what geomap_process_image needs: the ONNX Runtime library ({:.1} MB), the PP-OCRv4 text models ({:.1} MB) and the detector weights where a source is configured (PEACE publishes none: otherwise the operator imports them). It downloads and writes to the server's disk, so ask the user first and tell them the size; when the client supports elicitation the server asks the user itself. Reports what was installed, what is still outstanding, and whether detection is ready.",
                    runtime_bytes as f64 / 1e6,
                    ocr_bytes as f64 / 1e6
                ),
                annotations("Download the layout detectors", false, true).open_world(true),
            ),
            spec::<PrepareKnowledgeArgs, PrepareKnowledgeResult>(
                ToolName::PrepareKnowledge,
                "Download knowledge assets",
                format!(
                    "Downloads and installs the knowledge bases that knowledge providers need ({}: {:.1} MB in all, each with its licence). It downloads from the internet and writes to the server's disk, so ask the user first and tell them the size; when the client supports elicitation the server asks the user itself, and a refusal installs nothing. Omit `assets` for all of them. Reports what was installed, what was already there and what failed.",
                    knowledge_ids.join(", "),
                    knowledge_bytes as f64 / 1e6
                ),
                annotations("Download knowledge assets", false, true).open_world(true),
            ),
        ];
        let withheld: Vec<(ToolName, &'static str)> = [
            (ToolName::PrepareKnowledge, !settings.knowledge_preparation, "GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION"),
            (ToolName::PrepareDetectors, !settings.detector_preparation, "GEOMAP_MCP_ENABLE_DETECTOR_PREPARATION"),
        ]
        .into_iter()
        .filter_map(|(name, off, variable)| off.then_some((name, variable)))
        .collect();
        let specs = all.into_iter().filter(|spec| !withheld.iter().any(|(name, _)| *name == spec.name)).collect();
        Inventory { specs, withheld }
    }

    /// The setting that withholds the tool called `name`, if the operator withheld it.
    pub fn withheld(&self, name: &str) -> Option<&'static str> {
        self.withheld.iter().find(|(tool, _)| tool.as_str() == name).map(|(_, variable)| *variable)
    }

    /// The spec of the tool called `name`, if it is offered.
    pub fn find(&self, name: &str) -> Option<&ToolSpec> {
        self.specs.iter().find(|spec| spec.name.as_str() == name)
    }

    /// All offered tools, for `tools/list`.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }
}

fn annotations(title: &str, read_only: bool, idempotent: bool) -> ToolAnnotations {
    ToolAnnotations::with_title(title).read_only(read_only).destructive(false).idempotent(idempotent).open_world(false)
}

fn spec<Args: JsonSchema, Success: JsonSchema>(name: ToolName, title: &str, description: impl Into<String>, annotations: ToolAnnotations) -> ToolSpec {
    let mut input = into_object(schema_for!(Args));
    input.remove("$schema");
    input.remove("title");
    let tool = Tool::new(name.as_str(), description.into(), Arc::new(input))
        .with_title(title)
        .with_raw_output_schema(Arc::new(output_schema(schema_for!(Success))))
        .with_annotations(annotations);
    ToolSpec { name, tool }
}

/// The schema as a JSON object, without schemars' non-standard numeric
/// formats (`uint64`, `double`, ...), which validators such as Ajv warn about;
/// `minimum` already says what they mean.
fn into_object(schema: Schema) -> JsonObject {
    fn strip_numeric_formats(value: &mut Value) {
        match value {
            Value::Object(map) => {
                let numeric = map
                    .get("format")
                    .and_then(Value::as_str)
                    .is_some_and(|format| format.starts_with("int") || format.starts_with("uint") || format == "double" || format == "float");
                if numeric {
                    map.remove("format");
                }
                map.values_mut().for_each(strip_numeric_formats);
            }
            Value::Array(items) => items.iter_mut().for_each(strip_numeric_formats),
            _ => {}
        }
    }
    let mut value = schema.to_value();
    strip_numeric_formats(&mut value);
    match value {
        Value::Object(object) => object,
        other => unreachable!("schemars produced a non-object schema: {other}"),
    }
}

/// `anyOf` [success, envelope], with both `$defs` hoisted to the root.
fn output_schema(success: Schema) -> JsonObject {
    let mut defs = Map::new();
    let mut branch = |schema: Schema| {
        let mut object = into_object(schema);
        object.remove("$schema");
        if let Some(Value::Object(found)) = object.remove("$defs") {
            defs.extend(found);
        }
        Value::Object(object)
    };
    let success = branch(success);
    let envelope = branch(schema_for!(Envelope));
    let Value::Object(schema) = json!({ "type": "object", "anyOf": [success, envelope], "$defs": defs }) else { unreachable!() };
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_object_schemas_and_full_annotations() {
        let settings = Settings::load(|name| (name == "GEOMAP_DATA_ROOT").then(|| "/srv/geomap".into())).unwrap();
        for spec in Inventory::new(&settings, &Catalog::approved()).specs() {
            assert_eq!(spec.tool.input_schema.get("type"), Some(&json!("object")), "{}", spec.name.as_str());
            let output = spec.tool.output_schema.as_ref().unwrap();
            assert_eq!(output.get("type"), Some(&json!("object")));
            assert_eq!(output["anyOf"].as_array().unwrap().len(), 2);
            let a = spec.tool.annotations.as_ref().unwrap();
            assert!(a.read_only_hint.is_some() && a.destructive_hint.is_some() && a.idempotent_hint.is_some() && a.open_world_hint.is_some());
        }
    }

    #[test]
    fn every_ref_in_an_output_schema_resolves_at_the_root() {
        fn refs(value: &Value, found: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    if let Some(Value::String(r)) = map.get("$ref") {
                        found.push(r.clone());
                    }
                    map.values().for_each(|v| refs(v, found));
                }
                Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
                _ => {}
            }
        }
        let settings = Settings::load(|name| (name == "GEOMAP_DATA_ROOT").then(|| "/srv/geomap".into())).unwrap();
        for spec in Inventory::new(&settings, &Catalog::approved()).specs() {
            let output = Value::Object((**spec.tool.output_schema.as_ref().unwrap()).clone());
            let mut found = Vec::new();
            refs(&output, &mut found);
            for reference in found {
                let name = reference.strip_prefix("#/$defs/").expect("local refs only");
                assert!(output["$defs"].get(name).is_some(), "{} has dangling {reference}", spec.name.as_str());
            }
        }
    }
}
