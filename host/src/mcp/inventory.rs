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

use crate::errors::Envelope;

use super::tools::MapReport;
use super::tools::capabilities::{CapabilitiesArgs, CapabilitiesResult};
use super::tools::describe_map::DescribeMapArgs;
use super::tools::georeference::{GeoreferenceArgs, GeoreferenceReport};
use super::tools::register_map::RegisterMapArgs;

/// Every tool, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    /// `geomap_capabilities`
    Capabilities,
    /// `geomap_register_map`
    RegisterMap,
    /// `geomap_describe_map`
    DescribeMap,
    /// `geomap_georeference`
    Georeference,
}

impl ToolName {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::Capabilities => "geomap_capabilities",
            ToolName::RegisterMap => "geomap_register_map",
            ToolName::DescribeMap => "geomap_describe_map",
            ToolName::Georeference => "geomap_georeference",
        }
    }
}

/// One offered tool.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// Its name.
    pub name: ToolName,
    /// Its MCP definition.
    pub tool: Tool,
}

impl ToolSpec {
    /// Whether repeating the call unchanged is safe (from its annotations).
    pub fn idempotent(&self) -> bool {
        self.tool.annotations.as_ref().is_some_and(ToolAnnotations::is_idempotent)
    }
}

/// The tools offered to agents.
#[derive(Debug, Clone)]
pub struct Inventory {
    specs: Vec<ToolSpec>,
}

impl Inventory {
    /// Builds the inventory. (The preparation tools that settings can withhold
    /// arrive with their issues; this is where they will be filtered, once.)
    pub fn new() -> Inventory {
        let specs = vec![
            spec::<CapabilitiesArgs, CapabilitiesResult>(
                ToolName::Capabilities,
                "Server capabilities",
                "What this server can do right now: its version, each tool and whether it is ready (with the error code it would fail with if not), the allowed map roots, the media limits and the data root's state. Call it first.",
                annotations("Server capabilities", true, true),
            ),
            spec::<RegisterMapArgs, MapReport>(
                ToolName::RegisterMap,
                "Register a map scan",
                "Register a scanned map (PNG, JPEG or TIFF/GeoTIFF) from an allowed map root and get its map_id. Registering the same unchanged file again returns the same map_id. Paths are absolute inside an allowed root, or relative to the first root (see geomap_capabilities).",
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
                "Tie a registered map to the ground: give a CRS and either bounds (the CRS box of the whole scan, or of pixel_region) or control_points (pixel col/row → CRS x/y) with a transform (affine, polynomial2, polynomial3, thin_plate_spline). Every call writes a new revision (the newest is the map's current georeference) with residuals, RMSE, the WGS84 box and GeoTIFF/VRT files for GIS tools. Not idempotent. Wrong bounds, CRS or points fail with invalid_bounds: read the message.",
                annotations("Georeference a map", false, false),
            ),
        ];
        Inventory { specs }
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

impl Default for Inventory {
    fn default() -> Self {
        Inventory::new()
    }
}

fn annotations(title: &str, read_only: bool, idempotent: bool) -> ToolAnnotations {
    ToolAnnotations::with_title(title).read_only(read_only).destructive(false).idempotent(idempotent).open_world(false)
}

fn spec<Args: JsonSchema, Success: JsonSchema>(name: ToolName, title: &str, description: &'static str, annotations: ToolAnnotations) -> ToolSpec {
    let mut input = into_object(schema_for!(Args));
    input.remove("$schema");
    input.remove("title");
    let tool = Tool::new(name.as_str(), description, Arc::new(input))
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
        for spec in Inventory::new().specs() {
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
        for spec in Inventory::new().specs() {
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
