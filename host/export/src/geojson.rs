//! The GeoJSON exporter: one RFC 7946 FeatureCollection per feature layer of the TA1 schema
//! (`polygon_feature.geojson`, `line_feature.geojson`, `point_feature.geojson`,
//! `cross_section.geojson`, `ground_control_point.geojson`), in WGS 84 longitude and latitude,
//! with the fields the GeoPackage's tables hold ([`crate::ta1`]). RFC 7946 has no pixel
//! coordinates, so a map without a georeference gets no GeoJSON and a warning saying so.
//!
//! Invariants: every file is one FeatureCollection, streamed feature by feature; a feature's
//! `id` and properties are its GeoPackage row's; coordinates are the ground placement
//! ([`crate::Ground`]) taken to WGS 84 by PROJ, longitude first.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use gdal::spatial_ref::{AxisMappingStrategy, CoordTransform, SpatialRef};
use gdal::vector::{Geometry, OGRwkbGeometryType};
use geomap_georef::{GeorefError, Readiness, gdal_error, resolve_crs};
use geomap_model::progress::Progress;

use crate::ta1::{self, Fields, json_value};
use crate::{Exported, Exporter, Extraction};

/// GeoJSON's media type (RFC 7946).
pub const GEOJSON_MEDIA_TYPE: &str = "application/geo+json";

/// GeoJSON, one file per feature layer, for a georeferenced map.
pub struct GeoJson;

impl Exporter for GeoJson {
    fn file_type(&self) -> (&'static str, &'static str) {
        (".geojson", GEOJSON_MEDIA_TYPE)
    }

    fn write(&self, extraction: &Extraction, folder: &Path, progress: &Progress) -> Result<Exported, GeorefError> {
        let Some(ground) = &extraction.ground else {
            return Ok(Exported {
                files: Vec::new(),
                warnings: vec![
                    "No GeoJSON was written: GeoJSON (RFC 7946) holds longitude and latitude only, and this map has no georeference (geomap_georeference places it; extract again after). The GeoPackage holds every feature in the scan's pixels."
                        .to_owned(),
                ],
            });
        };
        Readiness::check().require()?;
        let to_wgs84 = to_wgs84(&ground.revision.crs)?;
        let map_id = &extraction.map.map_id;
        let structure = &extraction.structure;
        let mut files = Vec::new();
        let mut layer = |name: &str, features: &mut dyn Iterator<Item = Feature>| -> Result<(), GeorefError> {
            let file = format!("{name}.geojson");
            write_collection(&folder.join(&file), name, features, &to_wgs84)?;
            files.push(file);
            Ok(())
        };
        progress.fraction(0.0, "writing the GeoJSON layers")?;
        let polygons = extraction.polygons.iter().zip(&ground.polygons);
        layer(
            "polygon_feature",
            &mut polygons
                .map(|(polygon, placed)| Ok((ta1::polygon_fields(map_id, polygon), Geometry::from_wkb(placed).map_err(gdal_error("read a polygon"))?))),
        )?;
        progress.fraction(0.6, "writing the GeoJSON layers")?;
        let lines = structure.lines.iter().zip(&ground.lines).enumerate();
        layer("line_feature", &mut lines.map(|(k, (line, placed))| Ok((ta1::line_fields(map_id, k, line), line_string(placed)?))))?;
        let points = structure.points.iter().zip(&ground.points).enumerate();
        layer("point_feature", &mut points.map(|(k, (point, &at))| Ok((ta1::point_fields(map_id, k, point), point_at(at)?))))?;
        let sections = structure.sections.iter().zip(&ground.sections).enumerate();
        layer("cross_section", &mut sections.map(|(k, (section, placed))| Ok((ta1::section_fields(map_id, k, section), line_string(placed)?))))?;
        let revision = &ground.revision;
        let controls = revision.control_points.iter().enumerate();
        layer("ground_control_point", &mut controls.map(|(k, point)| Ok((ta1::control_point_fields(map_id, revision, k), point_at((point.x.0, point.y.0))?))))?;
        progress.fraction(1.0, "writing the GeoJSON layers")?;
        Ok(Exported { files, warnings: Vec::new() })
    }
}

/// The transform from the CRS `crs` to WGS 84, both in GIS order (easting or longitude first).
fn to_wgs84(crs: &str) -> Result<CoordTransform, GeorefError> {
    let source = resolve_crs(crs)?;
    let mut wgs84 = SpatialRef::from_epsg(4326).map_err(gdal_error("find WGS 84 in PROJ's database"))?;
    wgs84.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    CoordTransform::new(&source, &wgs84).map_err(gdal_error("take the features to WGS 84"))
}

/// A POINT at `(x, y)`.
fn point_at((x, y): (f64, f64)) -> Result<Geometry, GeorefError> {
    let mut point = Geometry::empty(OGRwkbGeometryType::wkbPoint).map_err(gdal_error("build a point"))?;
    point.add_point_2d((x, y));
    Ok(point)
}

/// `points` as a LINESTRING.
fn line_string(points: &[(f64, f64)]) -> Result<Geometry, GeorefError> {
    let mut line = Geometry::empty(OGRwkbGeometryType::wkbLineString).map_err(gdal_error("build a line"))?;
    points.iter().for_each(|&point| line.add_point_2d(point));
    Ok(line)
}

/// One feature to write: its fields and its geometry in the ground CRS.
type Feature = Result<(Fields, Geometry), GeorefError>;

/// Writes `features` (in the ground CRS) as the FeatureCollection `name` at `path`, one at a time,
/// each taken through `to_wgs84`.
fn write_collection(path: &Path, name: &str, features: &mut dyn Iterator<Item = Feature>, to_wgs84: &CoordTransform) -> Result<(), GeorefError> {
    let failed = |source: std::io::Error| GeorefError::Io { action: "write a GeoJSON layer", source };
    let mut out = BufWriter::new(File::create(path).map_err(failed)?);
    write!(out, "{{\"type\":\"FeatureCollection\",\"name\":{},\"features\":[", serde_json::Value::from(name)).map_err(failed)?;
    for (k, feature) in features.enumerate() {
        let (fields, geometry) = feature?;
        let placed = geometry.transform(to_wgs84).map_err(gdal_error("take a feature to WGS 84"))?;
        let id = fields.iter().find(|(name, _)| *name == "id").map(|(_, value)| json_value(value)).unwrap_or(serde_json::Value::Null);
        let properties: serde_json::Map<String, serde_json::Value> = fields.iter().map(|(name, value)| ((*name).to_owned(), json_value(value))).collect();
        let geometry = placed.json().map_err(gdal_error("write a feature's geometry as GeoJSON"))?;
        let separator = if k == 0 { "" } else { "," };
        write!(out, "{separator}\n{{\"type\":\"Feature\",\"id\":{id},\"properties\":{},\"geometry\":{geometry}}}", serde_json::Value::Object(properties))
            .map_err(failed)?;
    }
    write!(out, "\n]}}\n").map_err(failed)?;
    out.into_inner().map_err(|error| failed(error.into_error()))?.sync_all().map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn each_layer_is_a_feature_collection_in_wgs84_with_the_geopackages_fields() {
        let folder = tempfile::tempdir().unwrap();
        let extraction = testing::extraction(true);
        let exported = GeoJson.write(&extraction, folder.path(), &Progress::none()).unwrap();
        let layers = ["polygon_feature", "line_feature", "point_feature", "cross_section", "ground_control_point"];
        assert_eq!(exported.files, layers.map(|layer| format!("{layer}.geojson")));
        assert!(exported.warnings.is_empty());
        let read =
            |layer: &str| -> serde_json::Value { serde_json::from_slice(&std::fs::read(folder.path().join(format!("{layer}.geojson"))).unwrap()).unwrap() };
        for (layer, count) in layers.iter().zip([1, 1, 2, 1, 0]) {
            let collection = read(layer);
            assert_eq!((collection["type"].as_str(), collection["name"].as_str()), (Some("FeatureCollection"), Some(*layer)));
            assert_eq!(collection["features"].as_array().unwrap().len(), count, "{layer}");
        }
        let points = read("point_feature");
        let first = &points["features"][0];
        assert_eq!(first["id"], "map_x_pt1");
        assert_eq!((first["properties"]["dip"].as_f64(), first["properties"]["type"].as_str()), (Some(35.0), Some("point_type_6")));
        assert!(points["features"][1]["properties"]["dip"].is_null(), "no dip read is null");
        // Longitude first: 10 px east of the west edge (10°E) of a 40-px-wide degree, 25 px down a 30-px half degree from 60°N.
        let at = first["geometry"]["coordinates"].as_array().unwrap();
        let (lon, lat) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        assert!((lon - 10.25).abs() < 1e-9 && (lat - (60.0 - 25.0 / 60.0)).abs() < 1e-9, "({lon}, {lat})");
        let polygon = &read("polygon_feature")["features"][0];
        assert_eq!((polygon["geometry"]["type"].as_str(), polygon["properties"]["confidence"].as_f64()), (Some("Polygon"), Some(0.5)));
    }

    #[test]
    fn a_map_without_a_georeference_gets_no_geojson_and_a_warning_saying_so() {
        let folder = tempfile::tempdir().unwrap();
        let exported = GeoJson.write(&testing::extraction(false), folder.path(), &Progress::none()).unwrap();
        assert!(exported.files.is_empty());
        assert!(exported.warnings[0].starts_with("No GeoJSON was written"), "{:?}", exported.warnings);
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 0, "nothing written");
    }
}
