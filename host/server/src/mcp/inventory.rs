//! The tools offered to agents, made once at start from the one tool list
//! (`tools::all`): each tool's MCP definition (name, title, description,
//! annotations, input and output schemas), less the tools the operator's
//! settings withhold.
//!
//! Invariants: every output schema is `anyOf` [the tool's success shape, the
//! `geomap-error/v1` envelope], so clients that validate structured content
//! even on errors (the MCP Inspector does) accept both outcomes; `$defs` of
//! both are hoisted to the root so `$ref`s resolve; a withheld tool is
//! remembered with its setting, so a call to it says who withheld it.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::{Schema, schema_for};
use serde_json::{Map, Value, json};

use geomap_assets::Catalog;
use geomap_model::errors::Envelope;
use geomap_model::settings::Settings;

use super::tools::{self, Hints, ToolEntry};

/// One offered tool: its entry in the tool list and its MCP definition.
#[derive(Debug)]
pub struct Offered {
    /// The tool, described once.
    pub entry: ToolEntry,
    /// Its MCP definition, as `tools/list` gives it.
    pub tool: Tool,
}

impl Offered {
    /// Whether the call may change what the server reports: it is not annotated read-only.
    pub fn may_write(&self) -> bool {
        !self.entry.hints.read_only
    }

    /// Whether repeating the call unchanged is safe.
    pub fn idempotent(&self) -> bool {
        self.entry.hints.idempotent
    }
}

/// The tools offered to agents.
#[derive(Debug)]
pub struct Inventory {
    offered: Vec<Offered>,
    /// Tools the operator's settings withhold, with the setting that does it.
    withheld: Vec<(&'static str, &'static str)>,
}

impl Inventory {
    /// Builds the inventory, once: the tools `settings` withhold are left out (and remembered, so a
    /// call to one says who withheld it).
    pub fn new(settings: &Settings, catalog: &Catalog) -> Inventory {
        let mut offered = Vec::new();
        let mut withheld = Vec::new();
        for entry in tools::all(catalog) {
            match entry.withheld_by.filter(|withholding| !(withholding.offered)(settings)) {
                Some(withholding) => withheld.push((entry.name, withholding.setting)),
                None => offered.push(Offered { tool: definition(&entry), entry }),
            }
        }
        Inventory { offered, withheld }
    }

    /// The setting that withholds the tool called `name`, if the operator withheld it.
    pub fn withheld(&self, name: &str) -> Option<&'static str> {
        self.withheld.iter().find(|(tool, _)| *tool == name).map(|(_, setting)| *setting)
    }

    /// The tool called `name`, if it is offered.
    pub fn find(&self, name: &str) -> Option<&Offered> {
        self.offered.iter().find(|offered| offered.entry.name == name)
    }

    /// All offered tools, in `tools/list` order.
    pub fn offered(&self) -> &[Offered] {
        &self.offered
    }

    /// The entries of all offered tools, in `tools/list` order.
    pub fn entries(&self) -> impl Iterator<Item = &ToolEntry> {
        self.offered.iter().map(|offered| &offered.entry)
    }
}

/// The MCP annotations of `hints` (with `title`): never destructive.
fn annotations(title: &str, hints: Hints) -> ToolAnnotations {
    ToolAnnotations::with_title(title).read_only(hints.read_only).destructive(false).idempotent(hints.idempotent).open_world(hints.open_world)
}

/// The MCP definition of `entry`.
fn definition(entry: &ToolEntry) -> Tool {
    let mut input = into_object(entry.input_schema.clone());
    input.remove("$schema");
    input.remove("title");
    Tool::new(entry.name, entry.description.clone(), Arc::new(input))
        .with_title(entry.title)
        .with_raw_output_schema(Arc::new(output_schema(entry.output_schema.clone())))
        .with_annotations(annotations(entry.title, entry.hints))
}

/// The schema as a JSON object, without schemars' non-standard numeric formats (`uint64`,
/// `double`, ...), which validators such as Ajv warn about; `minimum` already says what they mean.
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

/// The words README's tool table gives a tool's annotations.
fn annotation_words(hints: Hints) -> String {
    let mut words = vec![if hints.read_only { "read-only" } else { "not read-only" }, if hints.idempotent { "idempotent" } else { "not idempotent" }];
    if hints.open_world {
        words.push("open world");
    }
    words.join(", ")
}

/// A tool's arguments as README shows them: `{map_id, crs?, ...}`, a `?` on each optional one.
fn signature(entry: &ToolEntry) -> String {
    let schema = entry.input_schema.as_value();
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let arguments: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, _)| if required.contains(&name.as_str()) { name.clone() } else { format!("{name}?") })
        .collect();
    format!("{{{}}}", arguments.join(", "))
}

/// README's tool table, in Markdown: each tool's name and arguments, its description, its annotations.
pub fn markdown_table(entries: &[ToolEntry]) -> String {
    let mut table = String::from("| tool | what it does | annotations |\n|---|---|---|\n");
    for entry in entries {
        let description = entry.description.replace('|', "\\|");
        table.push_str(&format!("| `{} {}` | {} | {} |\n", entry.name, signature(entry), description, annotation_words(entry.hints)));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inventory(variables: &[(&str, &str)]) -> Inventory {
        let settings = Settings::load(|name| match name {
            "GEOMAP_DATA_ROOT" => Some("/srv/geomap".into()),
            other => variables.iter().find(|(variable, _)| *variable == other).map(|(_, value)| (*value).into()),
        })
        .unwrap();
        Inventory::new(&settings, &Catalog::approved())
    }

    #[test]
    fn every_tool_has_object_schemas_and_full_annotations() {
        for offered in inventory(&[]).offered() {
            let tool = &offered.tool;
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")), "{}", tool.name);
            let output = tool.output_schema.as_ref().unwrap();
            assert_eq!(output.get("type"), Some(&json!("object")));
            assert_eq!(output["anyOf"].as_array().unwrap().len(), 2);
            let a = tool.annotations.as_ref().unwrap();
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
        for offered in inventory(&[]).offered() {
            let output = Value::Object((**offered.tool.output_schema.as_ref().unwrap()).clone());
            let mut found = Vec::new();
            refs(&output, &mut found);
            for reference in found {
                let name = reference.strip_prefix("#/$defs/").expect("local refs only");
                assert!(output["$defs"].get(name).is_some(), "{} has dangling {reference}", offered.tool.name);
            }
        }
    }

    #[test]
    fn a_withheld_tool_is_not_offered_and_names_its_setting() {
        let all = inventory(&[]);
        assert!(all.find("geomap_prepare_knowledge").is_some() && all.withheld("geomap_prepare_knowledge").is_none());
        let withheld = inventory(&[("GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION", "false")]);
        assert!(withheld.find("geomap_prepare_knowledge").is_none());
        assert_eq!(withheld.withheld("geomap_prepare_knowledge"), Some("GEOMAP_MCP_ENABLE_KNOWLEDGE_PREPARATION"));
        assert_eq!(withheld.offered().len(), all.offered().len() - 1);
    }
}
