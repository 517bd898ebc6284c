//! The TA1 GeoPackage exporter: every table of the DARPA CriticalMAAS schema ([`crate::ta1`]), the
//! features in its pixel coordinates, and `polygon_feature`, `line_feature`, `point_feature`,
//! `cross_section` and `ground_control_point` again with `_georeferenced` in the revision's CRS
//! when the map is georeferenced, with QGIS's default style for each feature layer
//! ([`crate::styles`]); and [`line_near`], which reads one back.
//!
//! Invariants: one file, [`GEOPACKAGE`], written in one transaction after its schema; a feature
//! and its `_georeferenced` twin have the same fields; every foreign key holds.

use std::path::Path;

use gdal::spatial_ref::SpatialRef;
use gdal::vector::{Geometry, LayerAccess, LayerOptions, OGRFieldType, OGRwkbGeometryType};
use gdal::{Dataset, DatasetOptions, DriverManager, GdalOpenFlags};
use geomap_georef::{GeorefError, Readiness, gdal_error, resolve_crs};
use geomap_model::page::segment_distance;
use geomap_model::progress::Progress;

use crate::ta1::{self, TableName, add_feature, field_values, point_at};
use crate::{Exported, Exporter, Extraction};

/// The GeoPackage's file name.
pub const GEOPACKAGE: &str = "units.gpkg";
/// The GeoPackage's media type.
pub const GEOPACKAGE_MEDIA_TYPE: &str = "application/geopackage+sqlite3";

/// The TA1 GeoPackage, with QGIS's styles.
pub struct GeoPackage;

impl Exporter for GeoPackage {
    fn file_type(&self) -> (&'static str, &'static str) {
        (".gpkg", GEOPACKAGE_MEDIA_TYPE)
    }

    fn write(&self, extraction: &Extraction, folder: &Path, progress: &Progress) -> Result<Exported, GeorefError> {
        write(extraction, &folder.join(GEOPACKAGE), progress)?;
        Ok(Exported { files: vec![GEOPACKAGE.to_owned()], warnings: Vec::new() })
    }
}

/// Writes `extraction` as the GeoPackage `path`.
fn write(extraction: &Extraction, path: &Path, progress: &Progress) -> Result<(), GeorefError> {
    Readiness::check().require()?;
    let Extraction { map, units, polygons, structure, sheet, ground } = extraction;
    let message = "writing the GeoPackage";
    progress.fraction(0.0, message)?;
    let driver = DriverManager::get_driver_by_name("GPKG").map_err(gdal_error("find GDAL's GeoPackage driver"))?;
    ta1::create_schema(&driver.create_vector_only(path).map_err(gdal_error("create the GeoPackage"))?)?;
    let update = DatasetOptions { open_flags: GdalOpenFlags::GDAL_OF_UPDATE | GdalOpenFlags::GDAL_OF_VECTOR, ..Default::default() };
    let mut package = Dataset::open_ex(path, update).map_err(gdal_error("open the GeoPackage"))?;
    if let Some(ground) = ground {
        georeferenced_layers(&mut package, &resolve_crs(&ground.revision.crs)?)?;
    }
    ta1::write_rows(&package, map, units, structure, sheet)?;
    crate::styles::write(&package, units, structure, ground.is_some())?;
    let transaction = package.start_transaction().map_err(gdal_error("write the GeoPackage"))?;
    let total = polygons.len().max(1) as f64;
    for (k, polygon) in polygons.iter().enumerate() {
        if k % 256 == 0 {
            progress.fraction(0.9 * k as f64 / total, message)?;
        }
        let values = field_values(&ta1::polygon_fields(&map.map_id, polygon));
        if let Some(ground) = ground {
            let placed = Geometry::from_wkb(&ground.polygons[k]).and_then(multi).map_err(gdal_error("build a polygon"))?;
            add_feature(&transaction, "polygon_feature_georeferenced", placed, &values)?;
        }
        let outline = Geometry::from_wkb(&polygon.wkb).and_then(multi).map_err(gdal_error("build a polygon"))?;
        add_feature(&transaction, "polygon_feature", outline, &values)?;
    }
    for (index, line) in structure.lines.iter().enumerate() {
        let values = field_values(&ta1::line_fields(&map.map_id, index, line));
        let placed = ground.as_ref().map(|ground| ground.lines[index].as_slice());
        add_line(&transaction, "line_feature", &line.points, placed, &values, multi_line)?;
    }
    for (index, section) in structure.sections.iter().enumerate() {
        let values = field_values(&ta1::section_fields(&map.map_id, index, section));
        let placed = ground.as_ref().map(|ground| ground.sections[index].as_slice());
        add_line(&transaction, "cross_section", &section.points, placed, &values, line_string)?;
    }
    for (index, point) in structure.points.iter().enumerate() {
        let values = field_values(&ta1::point_fields(&map.map_id, index, point));
        if let Some(ground) = ground {
            add_feature(&transaction, "point_feature_georeferenced", point_at(ground.points[index])?, &values)?;
        }
        add_feature(&transaction, "point_feature", point_at(point.at)?, &values)?;
    }
    ta1::write_sheet(&transaction, &map.map_id, sheet, ground.as_ref().map(|ground| &ground.revision))?;
    let featured = [TableName::PolygonFeature, TableName::LineFeature, TableName::PointFeature, TableName::CrossSection];
    ta1::write_confidences(&transaction, &sheet.extraction_run, &featured)?;
    ta1::index(&transaction)?;
    transaction.commit().map_err(gdal_error("write the GeoPackage"))?;
    progress.fraction(1.0, message)?;
    Ok(())
}

/// `polygon` as a one-part MULTIPOLYGON (the TA1 geometry type).
fn multi(polygon: Geometry) -> gdal::errors::Result<Geometry> {
    let mut multi = Geometry::empty(OGRwkbGeometryType::wkbMultiPolygon)?;
    multi.add_geometry(polygon)?;
    Ok(multi)
}

/// `points` as a LINESTRING.
fn line_string(points: &[(f64, f64)]) -> gdal::errors::Result<Geometry> {
    let mut line = Geometry::empty(OGRwkbGeometryType::wkbLineString)?;
    points.iter().for_each(|&point| line.add_point_2d(point));
    Ok(line)
}

/// `points` as a one-part MULTILINESTRING (the TA1 geometry type).
fn multi_line(points: &[(f64, f64)]) -> gdal::errors::Result<Geometry> {
    let mut multi = Geometry::empty(OGRwkbGeometryType::wkbMultiLineString)?;
    multi.add_geometry(line_string(points)?)?;
    Ok(multi)
}

/// A table's field: its name and type.
type Field<'a> = (&'a str, OGRFieldType::Type);

/// The `_georeferenced` twins of the schema's feature tables, in `srs`: each with the TA1 `id` and
/// `map_id` fields, then its table's other columns in the schema's order (the values written to
/// both are the same).
fn georeferenced_layers(package: &mut Dataset, srs: &SpatialRef) -> Result<(), GeorefError> {
    let (text, real, integer) = (OGRFieldType::OFTString, OGRFieldType::OFTReal, OGRFieldType::OFTInteger);
    let tables: [(&str, OGRwkbGeometryType::Type, &[Field]); 5] = [
        ("polygon_feature", OGRwkbGeometryType::wkbMultiPolygon, &[("type", text), ("confidence", real), ("provenance", text)]),
        (
            "line_feature",
            OGRwkbGeometryType::wkbMultiLineString,
            &[("name", text), ("type", text), ("polarity", integer), ("confidence", real), ("provenance", text)],
        ),
        (
            "point_feature",
            OGRwkbGeometryType::wkbPoint,
            &[("type", text), ("dip_direction", real), ("dip", real), ("confidence", real), ("provenance", text), ("dip_words_bbox", text)],
        ),
        ("cross_section", OGRwkbGeometryType::wkbLineString, &[("confidence", real), ("provenance", text), ("name", text), ("section_bbox", text)]),
        ("ground_control_point", OGRwkbGeometryType::wkbPoint, &[("x", real), ("y", real), ("confidence", real), ("provenance", text)]),
    ];
    let options = ["FID=fid", "GEOMETRY_NAME=geometry"];
    for (name, geometry, fields) in tables {
        let all: Vec<Field> = [("id", text), ("map_id", text)].into_iter().chain(fields.iter().copied()).collect();
        let name = format!("{name}_georeferenced");
        let layer = package
            .create_layer(LayerOptions { name: &name, srs: Some(srs), ty: geometry, options: Some(&options) })
            .map_err(gdal_error("create a GeoPackage layer"))?;
        layer.create_defn_fields(&all).map_err(gdal_error("create a GeoPackage layer"))?;
    }
    Ok(())
}

/// Adds a line feature of `points` (drawn as `shape`) and `values` to `table` in pixels and, with
/// its `placed` vertices, to its `_georeferenced` twin.
fn add_line(
    package: &Dataset,
    table: &str,
    points: &[(f64, f64)],
    placed: Option<&[(f64, f64)]>,
    values: &[gdal::vector::FieldValue],
    shape: fn(&[(f64, f64)]) -> gdal::errors::Result<Geometry>,
) -> Result<(), GeorefError> {
    if let Some(placed) = placed {
        add_feature(package, &format!("{table}_georeferenced"), shape(placed).map_err(gdal_error("build a line"))?, values)?;
    }
    add_feature(package, table, shape(points).map_err(gdal_error("build a line"))?, values)
}

/// A line feature near a point of the scan.
#[derive(Debug, Clone, PartialEq)]
pub struct NearLine {
    /// Its ID in the GeoPackage.
    pub id: String,
    /// Its name (its symbol's).
    pub name: String,
    /// Its TA1 line type.
    pub line_type: String,
    /// `solid`, `dashed` or `dotted`.
    pub dash_pattern: String,
    /// How far it passes from the point, in pixels.
    pub distance_px: f64,
}

/// The line feature of the GeoPackage at `path` passing nearest scan pixel `(col, row)`, when one
/// passes within `within_px`; none for a GeoPackage without line tables (written before them).
pub fn line_near(path: &Path, (col, row): (f64, f64), within_px: f64) -> Result<Option<NearLine>, GeorefError> {
    Readiness::check().require()?;
    let package = Dataset::open(path).map_err(gdal_error("open the GeoPackage"))?;
    let Ok(mut lines) = package.layer_by_name("line_feature") else { return Ok(None) };
    lines.set_spatial_filter_rect(col - within_px, row - within_px, col + within_px, row + within_px);
    let text = |feature: &gdal::vector::Feature, name: &str| {
        feature.field_index(name).ok().and_then(|i| feature.field_as_string(i).ok().flatten()).unwrap_or_default()
    };
    let mut best: Option<(f64, String, String, String)> = None;
    let mut points = Vec::new();
    for feature in lines.features() {
        let Some(geometry) = feature.geometry() else { continue };
        for part in 0..geometry.geometry_count() {
            points.clear();
            geometry.get_geometry(part).get_points(&mut points);
            let distance =
                points.windows(2).map(|pair| segment_distance((col, row), (pair[0].0, pair[0].1), (pair[1].0, pair[1].1))).fold(f64::INFINITY, f64::min);
            if distance <= within_px && best.as_ref().is_none_or(|(nearest, ..)| distance < *nearest) {
                best = Some((distance, text(&feature, "id"), text(&feature, "name"), text(&feature, "type")));
            }
        }
    }
    let Some((distance, id, name, type_id)) = best else { return Ok(None) };
    let mut types = package.layer_by_name("line_type").map_err(gdal_error("read the GeoPackage's line types"))?;
    let (line_type, dash_pattern) =
        types.features().find(|row| text(row, "id") == type_id).map(|row| (text(&row, "name"), text(&row, "dash_pattern"))).unwrap_or_default();
    Ok(Some(NearLine { id, name, line_type, dash_pattern, distance_px: (distance * 10.0).round() / 10.0 }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn the_features_are_written_with_their_types_and_styles_and_a_line_is_found_near_a_point() {
        let folder = tempfile::tempdir().unwrap();
        let exported = GeoPackage.write(&testing::extraction(false), folder.path(), &Progress::none()).unwrap();
        assert_eq!(exported.files, [GEOPACKAGE]);
        // Every foreign key of the schema holds; the attitude's type is the schema's `bedding`, its finer kind kept.
        {
            let checked = Dataset::open(folder.path().join(GEOPACKAGE)).unwrap();
            let sql = |statement: &str| checked.execute_sql(statement, None, gdal::vector::sql::Dialect::DEFAULT).unwrap();
            assert_eq!(sql("PRAGMA foreign_key_check").map_or(0, |rows| rows.feature_count()), 0);
            let kinds: Vec<(String, String)> = sql("SELECT name, symbol FROM point_type")
                .unwrap()
                .features()
                .map(|row| (row.field_as_string(0).unwrap().unwrap(), row.field_as_string(1).unwrap().unwrap()))
                .collect();
            assert_eq!(kinds, [("bedding".to_owned(), "inclined bedding".to_owned())]);
            let styles = sql("SELECT f_table_name FROM layer_styles WHERE useAsDefault").unwrap().feature_count();
            assert_eq!(styles, 3, "the units, lines and points, each with its default style");
            let mut indexed =
                sql("SELECT count(*) FROM sqlite_master WHERE name IN ('rtree_polygon_feature_geometry', 'rtree_line_feature_geometry')").unwrap();
            assert_eq!(indexed.features().next().unwrap().field_as_integer(0).unwrap(), Some(2), "the schema's tables are indexed");
        }
        let package = folder.path().join(GEOPACKAGE);
        let near = line_near(&package, (20.0, 12.0), 4.0).unwrap().expect("the fault passes 1 px away");
        assert_eq!((near.line_type.as_str(), near.dash_pattern.as_str(), near.name.as_str()), ("fault", "dashed", "fault"));
        assert!(near.distance_px <= 1.5, "{near:?}");
        assert_eq!(line_near(&package, (5.0, 25.0), 4.0).unwrap(), None, "nothing within 4 px");
        let dataset = Dataset::open(&package).unwrap();
        let mut points = dataset.layer_by_name("point_feature").unwrap();
        let read: Vec<(Option<f64>, Option<f64>, String)> = points
            .features()
            .map(|f| {
                let number = |name: &str| f.field_as_double(f.field_index(name).unwrap()).unwrap();
                (number("dip"), number("dip_direction"), f.field_as_string(f.field_index("type").unwrap()).unwrap().unwrap())
            })
            .collect();
        assert_eq!(read, [(Some(35.0), Some(135.0), "point_type_6".to_owned()), (None, Some(10.0), "point_type_6".to_owned())], "no dip read is NULL");
        let mut sections = dataset.layer_by_name("cross_section").unwrap();
        let section = sections.features().next().expect("the line of section");
        let mut vertices = Vec::new();
        section.geometry().unwrap().get_points(&mut vertices);
        assert_eq!(vertices, [(3.0, 28.0, 0.0), (37.0, 26.0, 0.0)], "a LINESTRING from A to A′");
        assert_eq!(section.field_as_string(section.field_index("section_bbox").unwrap()).unwrap().as_deref(), Some("50 0 90 20"));
    }

    #[test]
    fn a_georeferenced_extraction_has_each_feature_layer_twice_with_the_same_fields() {
        let folder = tempfile::tempdir().unwrap();
        let extraction = testing::extraction(true);
        let ground = extraction.ground.as_ref().unwrap();
        // 36 px east at 1.40 km a pixel (1° of longitude at 59.75°N over 40 px), 18 px south at 1.86 km.
        assert!((ground.line_lengths_km[0] - 60.6).abs() < 0.5, "{:?}", ground.line_lengths_km);
        GeoPackage.write(&extraction, folder.path(), &Progress::none()).unwrap();
        let package = Dataset::open(folder.path().join(GEOPACKAGE)).unwrap();
        for (table, count) in [("polygon_feature", 1), ("line_feature", 1), ("point_feature", 2), ("cross_section", 1)] {
            let twin = format!("{table}_georeferenced");
            assert_eq!(package.layer_by_name(table).unwrap().feature_count(), count, "{table}");
            let mut placed = package.layer_by_name(&twin).unwrap();
            assert_eq!(placed.feature_count(), count, "{twin}");
            let (x0, x1, y0, y1) = {
                let e = placed.get_extent().unwrap();
                (e.MinX, e.MaxX, e.MinY, e.MaxY)
            };
            assert!(
                (10.0..=11.0).contains(&x0) && (10.0..=11.0).contains(&x1) && (59.5..=60.0).contains(&y0) && (59.5..=60.0).contains(&y1),
                "{twin} on the sheet's ground"
            );
            let id = |layer: &mut gdal::vector::Layer| {
                let feature = layer.features().next().unwrap();
                feature.field_as_string(feature.field_index("id").unwrap()).unwrap()
            };
            assert_eq!(id(&mut package.layer_by_name(table).unwrap()), id(&mut placed), "{table}: a feature and its twin are one");
        }
    }
}
