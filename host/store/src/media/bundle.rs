//! `geomap-map-bundle/v1`: a map's layout made elsewhere, as JSON — the
//! image's size, its components, its legend entries and optionally a
//! georeference — for scans this server cannot or may not decode.
//!
//! Invariants: a bundle is read whole (it is small and under the byte limit)
//! and checked before it is registered: every box lies inside the image, every
//! class is one the component detector knows, every legend entry points at a
//! legend component. A bundle carries no pixels, so the pixel limit does not
//! apply to it. The georeference stays JSON here: the MCP layer checks it as
//! `geomap_georeference`'s arguments.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_model::page::COMPONENT_CLASSES;
use geomap_model::page::PixelBox;

/// The schema tag a bundle starts with.
pub const BUNDLE_SCHEMA: &str = "geomap-map-bundle/v1";

/// A map bundle as written by an agent or another tool.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MapBundle {
    /// Always `geomap-map-bundle/v1`.
    pub schema: String,
    /// The scan the layout describes.
    pub image: BundleImage,
    /// The map's components, in the scan's pixels.
    #[serde(default)]
    pub components: Vec<BundleComponent>,
    /// The legends' entries.
    #[serde(default)]
    pub legend_entries: Vec<BundleLegendEntry>,
    /// The scan's georeference: the arguments of `geomap_georeference` without `map_id`
    /// (`crs` with `bounds` and an optional `pixel_region`, or `crs` with `control_points`
    /// and an optional `transform`). It becomes the map's first revision, with no files.
    #[serde(default)]
    pub georeference: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The scan a bundle describes.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BundleImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The scan's file name or title, for people.
    #[serde(default)]
    pub name: Option<String>,
    /// The scan's SHA-256 (64 lowercase hex), when known.
    #[serde(default)]
    pub sha256: Option<String>,
}

/// One component of a bundle.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BundleComponent {
    /// title, main_map, legend, scale, index_map, cross_section, stratigraphic_column or others.
    pub class: String,
    /// Its box in the scan's pixels.
    pub bbox: PixelBox,
    /// How sure its maker was, 0–1 (default 1).
    #[serde(default)]
    pub score: Option<f64>,
}

/// One legend entry of a bundle.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BundleLegendEntry {
    /// Index into `components` of its legend (a component of class `legend`).
    pub legend: usize,
    /// The colour swatch.
    pub swatch: PixelBox,
    /// The text on its row.
    #[serde(default)]
    pub text: Option<PixelBox>,
    /// The swatch's colour, `#rrggbb`.
    #[serde(default)]
    pub colour_hex: Option<String>,
}

/// What is wrong with a bundle, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct BundleError {
    /// JSON pointer into the bundle (`` for the whole file).
    pub field: String,
    /// What is wrong and what would be accepted.
    pub problem: String,
}

fn wrong(field: impl Into<String>, problem: impl Into<String>) -> BundleError {
    BundleError { field: field.into(), problem: problem.into() }
}

/// Reads and checks a bundle from the file's bytes.
pub fn parse(bytes: &[u8]) -> Result<MapBundle, BundleError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|error| wrong("", format!("not valid JSON ({error})")))?;
    match value.get("schema") {
        Some(serde_json::Value::String(schema)) if schema == BUNDLE_SCHEMA => {}
        Some(other) => return Err(wrong("/schema", format!("{other} is not a schema this server reads; expected \"{BUNDLE_SCHEMA}\""))),
        None => return Err(wrong("/schema", format!("missing; a map bundle is a JSON object starting with \"schema\": \"{BUNDLE_SCHEMA}\""))),
    }
    let bundle: MapBundle = serde_path_to_error::deserialize(value).map_err(|error| {
        let message = error.inner().to_string();
        wrong(geomap_model::json_pointer(&error), message)
    })?;
    check(&bundle)?;
    Ok(bundle)
}

fn check(bundle: &MapBundle) -> Result<(), BundleError> {
    let BundleImage { width, height, .. } = bundle.image;
    if width == 0 || height == 0 {
        return Err(wrong("/image", "width and height must be at least 1 pixel"));
    }
    if let Some(sha256) = &bundle.image.sha256
        && !(sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    {
        return Err(wrong("/image/sha256", "expected 64 lowercase hex characters"));
    }
    let inside = |field: String, bbox: &PixelBox| {
        if bbox.is_inside(width as f64, height as f64) {
            Ok(())
        } else {
            Err(wrong(field, format!("expected a box with 0 <= x0 < x1 <= {width} and 0 <= y0 < y1 <= {height} (the image's pixels)")))
        }
    };
    for (index, component) in bundle.components.iter().enumerate() {
        if !COMPONENT_CLASSES.contains(&component.class.as_str()) {
            return Err(wrong(
                format!("/components/{index}/class"),
                format!("{:?} is not a component class; expected one of {}", component.class, COMPONENT_CLASSES.join(", ")),
            ));
        }
        inside(format!("/components/{index}/bbox"), &component.bbox)?;
        if let Some(score) = component.score
            && !(0.0..=1.0).contains(&score)
        {
            return Err(wrong(format!("/components/{index}/score"), "expected a score from 0 to 1"));
        }
    }
    for (index, entry) in bundle.legend_entries.iter().enumerate() {
        if bundle.components.get(entry.legend).is_none_or(|component| component.class != "legend") {
            return Err(wrong(
                format!("/legend_entries/{index}/legend"),
                "expected the index (from 0) of a component of class \"legend\" among the components",
            ));
        }
        inside(format!("/legend_entries/{index}/swatch"), &entry.swatch)?;
        if let Some(text) = &entry.text {
            inside(format!("/legend_entries/{index}/text"), text)?;
        }
        if let Some(colour) = &entry.colour_hex
            && geomap_model::parse_hex(colour).is_none()
        {
            return Err(wrong(format!("/legend_entries/{index}/colour_hex"), "expected a colour as #rrggbb"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bundle(extra: serde_json::Value) -> serde_json::Value {
        let mut value = json!({
            "schema": BUNDLE_SCHEMA,
            "image": {"width": 1000, "height": 800},
            "components": [
                {"class": "main_map", "bbox": {"x0": 0, "y0": 0, "x1": 700, "y1": 800}, "score": 0.9},
                {"class": "legend", "bbox": {"x0": 720, "y0": 100, "x1": 990, "y1": 600}}
            ],
            "legend_entries": [
                {"legend": 1, "swatch": {"x0": 730, "y0": 110, "x1": 760, "y1": 130}, "text": {"x0": 770, "y0": 110, "x1": 980, "y1": 130}, "colour_hex": "#FFA500"}
            ]
        });
        for (key, v) in extra.as_object().unwrap() {
            value[key] = v.clone();
        }
        value
    }

    fn error_of(value: serde_json::Value) -> BundleError {
        parse(&serde_json::to_vec(&value).unwrap()).unwrap_err()
    }

    #[test]
    fn a_good_bundle_reads() {
        let read = parse(&serde_json::to_vec(&bundle(json!({}))).unwrap()).unwrap();
        assert_eq!((read.image.width, read.components.len(), read.legend_entries.len()), (1000, 2, 1));
        assert_eq!(geomap_model::parse_hex(read.legend_entries[0].colour_hex.as_deref().unwrap()), Some((255, 165, 0)));
    }

    #[test]
    fn every_problem_names_its_field() {
        assert_eq!(parse(b"{ not json").unwrap_err().field, "");
        assert_eq!(error_of(json!({"image": 1})).field, "/schema");
        assert_eq!(error_of(bundle(json!({"schema": "geomap-map-bundle/v2"}))).field, "/schema");
        assert_eq!(error_of(bundle(json!({"image": {"width": 10}}))).field, "/image/height");
        assert_eq!(error_of(bundle(json!({"image": {"width": 0, "height": 4}}))).field, "/image");
        assert_eq!(error_of(bundle(json!({"extra": 1}))).field, "/extra");
        let outside = json!([{"class": "legend", "bbox": {"x0": 0, "y0": 0, "x1": 1001, "y1": 10}}]);
        assert_eq!(error_of(bundle(json!({"components": outside, "legend_entries": []}))).field, "/components/0/bbox");
        let unknown = json!([{"class": "map", "bbox": {"x0": 0, "y0": 0, "x1": 10, "y1": 10}}]);
        assert_eq!(error_of(bundle(json!({"components": unknown, "legend_entries": []}))).field, "/components/0/class");
        let to_main_map = json!([{"legend": 0, "swatch": {"x0": 1, "y0": 1, "x1": 2, "y1": 2}}]);
        assert_eq!(error_of(bundle(json!({"legend_entries": to_main_map}))).field, "/legend_entries/0/legend");
        let bad_colour = json!([{"legend": 1, "swatch": {"x0": 1, "y0": 1, "x1": 2, "y1": 2}, "colour_hex": "orange"}]);
        assert_eq!(error_of(bundle(json!({"legend_entries": bad_colour}))).field, "/legend_entries/0/colour_hex");
    }
}
