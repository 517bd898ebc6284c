//! The DARPA CriticalMAAS TA1 GeoPackage: the schema of `criticalmaas-ta1-geopackage` (its 24
//! tables with their columns, enumerations and foreign keys, written out here in its meaning) and
//! the rows that say what the server knows of a sheet beyond its features: `map`, `map_metadata`,
//! `page_extraction` (each component with its box and words), `georeference_meta` and
//! `ground_control_point` (the revision's CRS, extent and control points), `model_run` (the tools,
//! models and assets that made the file) and a `confidence_measurement` with its
//! `extraction_pointer` for each feature's confidence.
//!
//! Invariants: every enumerated value written is the schema's (a finer kind the schema lacks is
//! kept in the type row's `symbol`, its enumerated name is `other` or the broader kind); the
//! schema's geometry tables are in its pixel coordinates (`srs_id` 0, `CRITICALMAAS` pixels, x =
//! column, y = row from the top); a row the schema requires a value for is written only when that
//! value is known (no `map_metadata` row without a year), never with a made-up one; every foreign
//! key holds (`PRAGMA foreign_key_check` finds nothing), which the tests check with the schema's
//! own package.

use gdal::Dataset;
use gdal::vector::{Geometry, LayerAccess, OGRwkbGeometryType};
use geomap_georef::{GeorefError, gdal_error};
use geomap_model::georeference::{PlacementSource, Revision};
use geomap_model::symbols::catalog;

/// The schema's line types (`enum_line_type`).
pub const LINE_TYPES: [&str; 21] = [
    "anticline",
    "antiform",
    "normal fault",
    "reverse fault",
    "thrust fault",
    "left-lateral strike-slip fault",
    "right-lateral strike-slip fault",
    "strike-slip fault",
    "fault",
    "lineament",
    "scarp",
    "syncline",
    "synform",
    "bed",
    "crater",
    "caldera",
    "dike",
    "escarpment",
    "fold",
    "other",
    "unknown",
];

/// The schema's point types (`enum_point_type`).
pub const POINT_TYPES: [&str; 14] = [
    "bedding",
    "foliation",
    "lineation",
    "joint",
    "fault",
    "fracture",
    "fold axis",
    "sample location",
    "outcrop",
    "mine site",
    "contact",
    "cleavage",
    "other",
    "unknown",
];

/// The schema's kinds of provenance (`enum_provenance_type`).
const PROVENANCE_TYPES: [&str; 6] = ["ground truth", "human verified", "human modified", "modelled", "raw data", "not processed"];

/// The schema's kinds of polygon (`enum_polygon_type`).
const POLYGON_TYPES: [&str; 6] = ["geologic unit", "tailings", "outcrop", "body of water", "other", "unknown"];

/// The schema's geometry tables: name, geometry column, geometry type, description.
const GEOMETRY_TABLES: [(&str, &str, &str, &str); 7] = [
    ("polygon_feature", "geometry", "MULTIPOLYGON", "Polygon map features"),
    ("line_feature", "geometry", "MULTILINESTRING", "Line map features"),
    ("point_feature", "geometry", "POINT", "Point map features"),
    ("cross_section", "geometry", "LINESTRING", "Lines of section"),
    ("ground_control_point", "geometry", "POINT", "Ground control points"),
    ("georeference_meta", "bounds", "POLYGON", "Georeferencing metadata"),
    ("page_extraction", "px_geometry", "GEOMETRY", "Page extractions"),
];

/// The name of the scale every confidence here is on (`confidence_scale`).
pub const CONFIDENCE_SCALE: &str = "geomap 0-1";

/// The schema's pixel coordinate system, `srs_id` 0.
const PIXEL_CRS: &str = "PIXELCS[\"Pixel coordinates\", ENGRUNITS[\"m\", 1.0]]";

/// The tables an extraction pointer may point into (`enum_table_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableName {
    /// `geologic_unit`.
    GeologicUnit,
    /// `polygon_feature`.
    PolygonFeature,
    /// `polygon_type`.
    PolygonType,
    /// `line_feature`.
    LineFeature,
    /// `line_type`.
    LineType,
    /// `point_feature`.
    PointFeature,
    /// `point_type`.
    PointType,
    /// `cross_section`.
    CrossSection,
    /// `map_metadata`.
    MapMetadata,
    /// `projection_info`: the georeference.
    ProjectionInfo,
}

impl TableName {
    /// Every table name, in the schema's order.
    const ALL: [TableName; 10] = [
        TableName::GeologicUnit,
        TableName::PolygonFeature,
        TableName::PolygonType,
        TableName::LineFeature,
        TableName::LineType,
        TableName::PointFeature,
        TableName::PointType,
        TableName::CrossSection,
        TableName::MapMetadata,
        TableName::ProjectionInfo,
    ];

    /// The name as the schema spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            TableName::GeologicUnit => "geologic_unit",
            TableName::PolygonFeature => "polygon_feature",
            TableName::PolygonType => "polygon_type",
            TableName::LineFeature => "line_feature",
            TableName::LineType => "line_type",
            TableName::PointFeature => "point_feature",
            TableName::PointType => "point_type",
            TableName::CrossSection => "cross_section",
            TableName::MapMetadata => "map_metadata",
            TableName::ProjectionInfo => "projection_info",
        }
    }
}

/// One legend unit, as the GeoPackage's `geologic_unit` and `polygon_type` rows describe it.
#[derive(Debug, Clone, Default)]
pub struct UnitRow {
    /// Its code (`polygon_type.abbreviation`).
    pub code: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its swatch colour.
    pub colour: (u8, u8, u8),
    /// The legend heading it is listed under (`polygon_type.category`, TA1's containing legend block).
    pub category: Option<String>,
    /// Its ages as the legend words them.
    pub age_text: Option<String>,
    /// The youngest ICS interval named.
    pub t_interval: Option<String>,
    /// The oldest ICS interval named.
    pub b_interval: Option<String>,
    /// The youngest age, Ma.
    pub t_age: Option<f64>,
    /// The oldest age, Ma.
    pub b_age: Option<f64>,
    /// Its rock names, comma-separated.
    pub lithology: Option<String>,
}

/// One line type: a symbol of the explanation drawn one way, as TA1's `line_type` row describes it.
#[derive(Debug, Clone)]
pub struct LineTypeRow {
    /// Its ID in the GeoPackage.
    pub id: String,
    /// Its TA1 name (`enum_line_type`: "fault", "thrust fault", "anticline", …).
    pub name: String,
    /// The explanation's words for it.
    pub description: String,
    /// `solid`, `dashed` or `dotted`.
    pub dash_pattern: String,
    /// The symbol's name as the explanation begins it ("thrust fault").
    pub symbol: String,
}

/// One line feature, in the scan's pixels.
#[derive(Debug, Clone)]
pub struct LineRow {
    /// Its line type's ID.
    pub type_id: String,
    /// Its name (the symbol's name).
    pub name: String,
    /// Its vertices, in order.
    pub points: Vec<(f64, f64)>,
    /// 1 or -1: the side of the line its marks are on (right or left as its points run); 0 none.
    pub polarity: i8,
    /// 0–1.
    pub confidence: f64,
}

/// One point type: a point symbol of the explanation, as TA1's `point_type` row describes it.
#[derive(Debug, Clone)]
pub struct PointTypeRow {
    /// Its ID in the GeoPackage.
    pub id: String,
    /// Its TA1 name (`enum_point_type`) or a finer kind filed under one ([`point_type_name`]:
    /// "inclined bedding", "vertical bedding", "breccia pipe", …).
    pub name: String,
    /// The explanation's words for it.
    pub description: String,
    /// A filled mark's colour (sRGB), styled as a dot of it; `None` for an attitude (styled as a
    /// strike line turned to its dip direction).
    pub mark_colour: Option<(u8, u8, u8)>,
    /// Whether a filled mark is printed as a triangle on its base (a sinkhole), styled as one;
    /// else as a dot.
    pub mark_triangle: bool,
}

/// One point feature, in the scan's pixels.
#[derive(Debug, Clone)]
pub struct PointRow {
    /// Its point type's ID.
    pub type_id: String,
    /// Where it stands.
    pub at: (f64, f64),
    /// Degrees clockwise from north (grid north when georeferenced, else the sheet's up).
    pub dip_direction: Option<f64>,
    /// Degrees, as the number printed beside it reads; `None` when none was read.
    pub dip: Option<f64>,
    /// The box of the words the dip was read from, in the scan's pixels.
    pub dip_words: Option<(f64, f64, f64, f64)>,
    /// 0–1.
    pub confidence: f64,
}

/// One line of section (TA1's `cross_section`), in the scan's pixels.
#[derive(Debug, Clone)]
pub struct SectionRow {
    /// Its letters, `A–A′`.
    pub name: String,
    /// Its vertices, from the unprimed letter's end to the primed one's.
    pub points: Vec<(f64, f64)>,
    /// 0–1.
    pub confidence: f64,
    /// The box of the cross section it is drawn for, in the scan's pixels.
    pub section_bbox: (f64, f64, f64, f64),
}

/// The structure to write beside the units: the line and point types (every explanation symbol,
/// found or not), their features and the lines of section.
#[derive(Debug, Clone, Default)]
pub struct StructureRows {
    /// `line_type` rows.
    pub line_types: Vec<LineTypeRow>,
    /// `line_feature` rows.
    pub lines: Vec<LineRow>,
    /// `point_type` rows.
    pub point_types: Vec<PointTypeRow>,
    /// `point_feature` rows.
    pub points: Vec<PointRow>,
    /// `cross_section` rows.
    pub sections: Vec<SectionRow>,
}

/// What the GeoPackage's `map` row says of the map.
#[derive(Debug, Clone)]
pub struct MapRow {
    /// The map's ID.
    pub map_id: String,
    /// Its name (the title read, else the file's name).
    pub name: String,
    /// Where the scan is (`geomap://maps/{map_id}`).
    pub image_url: String,
    /// The scan's width in pixels.
    pub width: u64,
    /// The scan's height in pixels.
    pub height: u64,
}

/// What the sheet says about itself, as the `map_metadata` row holds it.
#[derive(Debug, Clone)]
pub struct MetadataRow {
    /// The authors, comma-separated (empty when none was read).
    pub authors: String,
    /// The title (empty when none was read).
    pub title: String,
    /// The publisher (empty when none was read).
    pub publisher: String,
    /// The year of publication.
    pub year: u32,
    /// The series and number, when read.
    pub organization: Option<String>,
    /// `1:N`, when read.
    pub scale: Option<String>,
    /// The mean confidence of the fields read, 0–1.
    pub confidence: f64,
}

/// One part of the page a run found (`page_extraction`), with what it describes.
#[derive(Debug, Clone)]
pub struct PageRow {
    /// What it is (`title`, `legend`, `swatch`, `line symbol`, …).
    pub name: String,
    /// Its box in the scan's pixels: left, top, right, bottom.
    pub bbox: [f64; 4],
    /// The words read in it.
    pub text: Option<String>,
    /// Its colour, `#rrggbb` (a swatch's).
    pub colour: Option<String>,
    /// 0–1.
    pub confidence: Option<f64>,
    /// The table of the record it describes.
    pub table: TableName,
    /// The column of that record it gives.
    pub column: String,
    /// That record's ID.
    pub record_id: String,
    /// The run that found it (a [`RunRow::id`]).
    pub run: String,
}

/// One run of a tool, model or asset that made the file (`model_run`).
#[derive(Debug, Clone)]
pub struct RunRow {
    /// Its ID.
    pub id: String,
    /// The tool's or asset's name.
    pub model_name: String,
    /// Its version (an asset's is `sha256:` and its hash).
    pub version: String,
    /// When it ran (RFC 3339, UTC).
    pub timestamp: String,
    /// The run it was part of (an asset's: its tool's run).
    pub batch_id: Option<String>,
}

/// What the GeoPackage records of a sheet beyond its units and structure.
#[derive(Debug, Clone, Default)]
pub struct SheetRecord {
    /// The `map_metadata` row, when the sheet's year was read.
    pub metadata: Option<MetadataRow>,
    /// The parts of the page found.
    pub pages: Vec<PageRow>,
    /// The runs that made the file; the features' confidences are the extraction run's.
    pub runs: Vec<RunRow>,
    /// The run that extracted the features (a [`RunRow::id`]).
    pub extraction_run: String,
}

/// The ID of polygon type `class` (1-based: the unit raster's class).
pub fn polygon_type_id(class: usize) -> String {
    format!("type_{class}")
}

/// The ID of the `map_metadata` row of `map_id`.
pub fn metadata_id(map_id: &str) -> String {
    format!("{map_id}_metadata")
}

/// The ID of the `georeference_meta` row of `revision_id`.
pub fn georeference_id(revision_id: &str) -> String {
    format!("{revision_id}_meta")
}

/// The schema's line type for `name`: itself when the schema has it, else `other`.
pub fn line_type_name(name: &str) -> &str {
    if LINE_TYPES.contains(&name) { name } else { "other" }
}

/// The schema's point type for a finer `kind`, as the catalog files it ("inclined bedding" under
/// `bedding`, "vertical joint" under `joint`); a schema type is its own; `other` for any other.
pub fn point_type_name(kind: &str) -> &'static str {
    if let Some(filed) = catalog().point_of_kind(kind).and_then(|symbol| symbol.point_type.as_deref()) {
        return filed;
    }
    POINT_TYPES.iter().copied().find(|&name| name == kind).unwrap_or("other")
}

/// A field's value in a feature layer, the same in every format.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Text.
    Text(String),
    /// A measure, written to three places; `None` is NULL.
    Real(Option<f64>),
    /// A number written as it is (a control point's pixel position).
    Exact(f64),
    /// A whole number.
    Integer(i32),
}

/// A feature's fields: each column of its table after `geometry`, in the table's order.
pub type Fields = Vec<(&'static str, Value)>;

/// How sure the server is of what it extracted (TA1's `provenance`).
const MODELLED: &str = "modelled";

/// The fields of `polygon` of map `map_id` (`polygon_feature`).
pub fn polygon_fields(map_id: &str, polygon: &crate::UnitPolygon) -> Fields {
    vec![
        ("id", Value::Text(format!("{map_id}_p{}", polygon.id))),
        ("map_id", Value::Text(map_id.to_owned())),
        ("type", Value::Text(polygon_type_id(polygon.class))),
        ("confidence", Value::Real(Some(polygon.confidence))),
        ("provenance", Value::Text(MODELLED.to_owned())),
    ]
}

/// The fields of line feature `index` (0-based) of map `map_id` (`line_feature`).
pub fn line_fields(map_id: &str, index: usize, line: &LineRow) -> Fields {
    vec![
        ("id", Value::Text(format!("{map_id}_l{}", index + 1))),
        ("map_id", Value::Text(map_id.to_owned())),
        ("name", Value::Text(line.name.clone())),
        ("type", Value::Text(line.type_id.clone())),
        ("polarity", Value::Integer(i32::from(line.polarity))),
        ("confidence", Value::Real(Some(line.confidence))),
        ("provenance", Value::Text(MODELLED.to_owned())),
    ]
}

/// The fields of line of section `index` (0-based) of map `map_id` (`cross_section`).
pub fn section_fields(map_id: &str, index: usize, section: &SectionRow) -> Fields {
    let (x0, y0, x1, y1) = section.section_bbox;
    vec![
        ("id", Value::Text(format!("{map_id}_s{}", index + 1))),
        ("map_id", Value::Text(map_id.to_owned())),
        ("confidence", Value::Real(Some(section.confidence))),
        ("provenance", Value::Text(MODELLED.to_owned())),
        ("name", Value::Text(section.name.clone())),
        ("section_bbox", Value::Text(format!("{x0} {y0} {x1} {y1}"))),
    ]
}

/// The fields of point feature `index` (0-based) of map `map_id` (`point_feature`).
pub fn point_fields(map_id: &str, index: usize, point: &PointRow) -> Fields {
    vec![
        ("id", Value::Text(format!("{map_id}_pt{}", index + 1))),
        ("map_id", Value::Text(map_id.to_owned())),
        ("type", Value::Text(point.type_id.clone())),
        ("dip_direction", Value::Real(point.dip_direction)),
        ("dip", Value::Real(point.dip)),
        ("confidence", Value::Real(Some(point.confidence))),
        ("provenance", Value::Text(MODELLED.to_owned())),
        ("dip_words_bbox", Value::Text(point.dip_words.map_or_else(String::new, |(x0, y0, x1, y1)| format!("{x0} {y0} {x1} {y1}")))),
    ]
}

/// The provenance of `revision`'s control points: read from the sheet's labels, or given.
pub fn control_provenance(revision: &Revision) -> &'static str {
    match revision.source {
        Some(PlacementSource::MapLabels) => MODELLED,
        None => "raw data",
    }
}

/// The fields of control point `index` (0-based) of `revision` of map `map_id`
/// (`ground_control_point`: `x` and `y` are its pixel column and row).
pub fn control_point_fields(map_id: &str, revision: &Revision, index: usize) -> Fields {
    let point = &revision.control_points[index];
    vec![
        ("id", Value::Text(format!("{}_gcp{}", revision.revision_id, index + 1))),
        ("map_id", Value::Text(map_id.to_owned())),
        ("x", Value::Exact(point.col.0)),
        ("y", Value::Exact(point.row.0)),
        ("confidence", Value::Real(None)),
        ("provenance", Value::Text(control_provenance(revision).to_owned())),
    ]
}

/// `fields`' values as GDAL writes them (a NaN real is written as NULL).
pub fn field_values(fields: &Fields) -> Vec<gdal::vector::FieldValue> {
    fields
        .iter()
        .map(|(_, value)| match value {
            Value::Text(value) => text(value.clone()),
            Value::Real(value) => real(*value),
            Value::Exact(value) => gdal::vector::FieldValue::RealValue(*value),
            Value::Integer(value) => gdal::vector::FieldValue::IntegerValue(*value),
        })
        .collect()
}

/// `value` as JSON: a measure to three places, NULL as `null`.
pub fn json_value(value: &Value) -> serde_json::Value {
    match value {
        Value::Text(value) => serde_json::Value::from(value.as_str()),
        Value::Real(value) => value.map_or(serde_json::Value::Null, |value| serde_json::Value::from(rounded(value))),
        Value::Exact(value) => serde_json::Value::from(*value),
        Value::Integer(value) => serde_json::Value::from(*value),
    }
}

/// The schema's statements, in an order its foreign keys allow: the enumerations with their
/// values, then the tables (TA1's columns, then the server's own evidence columns after them).
fn schema() -> Vec<String> {
    let values = |names: &[&str]| names.iter().map(|name| format!("({})", literal(Some(name)))).collect::<Vec<_>>().join(", ");
    let enumeration =
        |table: &str, names: &[&str]| [format!("CREATE TABLE {table} (name TEXT PRIMARY KEY)"), format!("INSERT INTO {table} (name) VALUES {}", values(names))];
    let table_names: Vec<&str> = TableName::ALL.iter().map(|name| name.as_str()).collect();
    let mut statements = Vec::new();
    statements.extend(enumeration("enum_provenance_type", &PROVENANCE_TYPES));
    statements.extend(enumeration("enum_polygon_type", &POLYGON_TYPES));
    statements.extend(enumeration("enum_line_type", &LINE_TYPES));
    statements.extend([
        "CREATE TABLE enum_line_polarity (value TINYINT PRIMARY KEY)".to_owned(),
        "INSERT INTO enum_line_polarity (value) VALUES (1), (-1), (0)".to_owned(),
    ]);
    statements.extend(enumeration("enum_point_type", &POINT_TYPES));
    statements.extend(enumeration("enum_table_name", &table_names));
    let map = "FOREIGN KEY (map_id) REFERENCES map(id)";
    let provenance = "FOREIGN KEY (provenance) REFERENCES enum_provenance_type(name)";
    let tables = [
        "map (id TEXT PRIMARY KEY, name TEXT NOT NULL, source_url TEXT NOT NULL, image_url TEXT NOT NULL, image_width INTEGER NOT NULL, image_height INTEGER NOT NULL)".to_owned(),
        "geologic_unit (id TEXT PRIMARY KEY, name TEXT, description TEXT, age_text TEXT, t_interval TEXT, b_interval TEXT, t_age REAL, b_age REAL, lithology TEXT)".to_owned(),
        "polygon_type (id TEXT PRIMARY KEY, name TEXT NOT NULL, color TEXT NOT NULL, pattern TEXT, abbreviation TEXT, description TEXT, category TEXT, \
         map_unit TEXT, FOREIGN KEY (map_unit) REFERENCES geologic_unit(id), FOREIGN KEY (name) REFERENCES enum_polygon_type(name))"
            .to_owned(),
        "line_type (id TEXT PRIMARY KEY, name TEXT NOT NULL, description TEXT, dash_pattern TEXT, symbol TEXT, FOREIGN KEY (name) REFERENCES enum_line_type(name))"
            .to_owned(),
        "point_type (id TEXT PRIMARY KEY, name TEXT NOT NULL, description TEXT, symbol TEXT, FOREIGN KEY (name) REFERENCES enum_point_type(name))".to_owned(),
        format!(
            "polygon_feature (id TEXT PRIMARY KEY, map_id TEXT NOT NULL, geometry MULTIPOLYGON NOT NULL, type TEXT, confidence REAL, provenance TEXT, \
             {map}, FOREIGN KEY (type) REFERENCES polygon_type(id), {provenance})"
        ),
        format!(
            "line_feature (id TEXT PRIMARY KEY, map_id TEXT NOT NULL, geometry MULTILINESTRING NOT NULL, name TEXT, type TEXT, polarity INTEGER, \
             confidence REAL, provenance TEXT, {map}, FOREIGN KEY (type) REFERENCES line_type(id), {provenance}, \
             FOREIGN KEY (polarity) REFERENCES enum_line_polarity(value))"
        ),
        format!(
            "point_feature (id TEXT PRIMARY KEY, map_id TEXT NOT NULL, geometry POINT NOT NULL, type TEXT, dip_direction REAL, dip REAL, \
             confidence REAL, provenance TEXT, dip_words_bbox TEXT, {map}, FOREIGN KEY (type) REFERENCES point_type(id), {provenance})"
        ),
        "extraction_pointer (id TEXT PRIMARY KEY, table_name TEXT NOT NULL, column_name TEXT NOT NULL, record_id TEXT NOT NULL, \
         FOREIGN KEY (table_name) REFERENCES enum_table_name(name))"
            .to_owned(),
        "confidence_scale (name TEXT PRIMARY KEY, description TEXT NOT NULL, min_value REAL NOT NULL, max_value REAL NOT NULL)".to_owned(),
        format!("model_run (id TEXT PRIMARY KEY, model_name TEXT NOT NULL, version TEXT NOT NULL, timestamp TEXT NOT NULL, batch_id TEXT, map_id TEXT NOT NULL, {map})"),
        "confidence_measurement (id TEXT PRIMARY KEY, model_run TEXT NOT NULL, pointer TEXT NOT NULL, confidence REAL NOT NULL, scale TEXT NOT NULL, \
         extra_data TEXT, FOREIGN KEY (model_run) REFERENCES model_run(id), FOREIGN KEY (pointer) REFERENCES extraction_pointer(id), \
         FOREIGN KEY (scale) REFERENCES confidence_scale(name))"
            .to_owned(),
        format!(
            "page_extraction (id TEXT PRIMARY KEY, name TEXT NOT NULL, pointer TEXT NOT NULL, model_run TEXT NOT NULL, ocr_text TEXT, \
             color_estimation TEXT, px_geometry GEOMETRY, bounds TEXT, confidence REAL, provenance TEXT, \
             FOREIGN KEY (pointer) REFERENCES extraction_pointer(id), FOREIGN KEY (model_run) REFERENCES model_run(id), {provenance})"
        ),
        format!(
            "ground_control_point (id TEXT PRIMARY KEY, map_id TEXT NOT NULL, geometry POINT NOT NULL, x REAL NOT NULL, y REAL NOT NULL, \
             confidence REAL, provenance TEXT, {map}, {provenance})"
        ),
        format!(
            "cross_section (id TEXT PRIMARY KEY, map_id TEXT NOT NULL, geometry LINESTRING NOT NULL, confidence REAL, provenance TEXT, \
             name TEXT, section_bbox TEXT, {map}, {provenance})"
        ),
        format!("georeference_meta (id TEXT PRIMARY KEY, map_id TEXT NOT NULL, projection TEXT NOT NULL, bounds POLYGON NOT NULL, provenance TEXT, {map}, {provenance})"),
        format!(
            "map_metadata (id TEXT PRIMARY KEY, map_id TEXT NOT NULL, authors TEXT NOT NULL, title TEXT NOT NULL, publisher TEXT NOT NULL, \
             year INTEGER NOT NULL, organization TEXT, scale TEXT, confidence REAL, provenance TEXT, {map}, {provenance})"
        ),
        // GeoAlchemy (under the schema's package) looks for this table; the schema leaves it empty.
        "geometry_columns (f_table_name TEXT NOT NULL, f_geometry_column TEXT NOT NULL, geometry_type INTEGER NOT NULL, \
         coord_dimension INTEGER NOT NULL, srid INTEGER NOT NULL, geometry_format TEXT NOT NULL)"
            .to_owned(),
    ];
    statements.extend(tables.iter().map(|table| format!("CREATE TABLE {table}")));
    statements.push(format!(
        "UPDATE gpkg_spatial_ref_sys SET srs_name = 'Pixel coordinates', organization = 'CRITICALMAAS', organization_coordsys_id = 0, \
         definition = {}, description = 'Pixel coordinates' WHERE srs_id = 0",
        literal(Some(PIXEL_CRS))
    ));
    // The geometry tables, in pixels: GIS tools list them and GDAL writes them as layers.
    for (table, column, geometry, description) in GEOMETRY_TABLES {
        statements.push(format!(
            "INSERT INTO gpkg_contents (table_name, data_type, identifier, description, srs_id) VALUES ('{table}', 'features', '{table}', {}, 0)",
            literal(Some(description))
        ));
        statements.push(format!(
            "INSERT INTO gpkg_geometry_columns (table_name, column_name, geometry_type_name, srs_id, z, m) VALUES ('{table}', '{column}', '{geometry}', 0, 0, 0)"
        ));
    }
    let attributes = [
        ("map", "The map"),
        ("geologic_unit", "Geologic units from the legend"),
        ("polygon_type", "Polygon types: one per legend unit"),
        ("line_type", "Line types: one per line symbol of the explanation and pattern"),
        ("point_type", "Point types: one per attitude symbol of the explanation"),
        ("map_metadata", "What the sheet says about itself"),
        ("model_run", "The tools, models and assets that made this file"),
        ("extraction_pointer", "What each confidence and page extraction is about"),
        ("confidence_scale", "The scales confidences are on"),
        ("confidence_measurement", "Each feature's confidence, from its run"),
    ];
    for (table, description) in attributes {
        statements.push(format!(
            "INSERT INTO gpkg_contents (table_name, data_type, identifier, description) VALUES ('{table}', 'attributes', '{table}', {})",
            literal(Some(description))
        ));
    }
    statements
}

/// Creates the schema's tables in `package`, a GeoPackage GDAL has just created (reopen it before
/// writing the geometry tables: GDAL lists a file's layers when it opens it).
pub(crate) fn create_schema(package: &Dataset) -> Result<(), GeorefError> {
    execute(package, &schema())
}

/// Runs `statements` on `package`, in order.
fn execute(package: &Dataset, statements: &[String]) -> Result<(), GeorefError> {
    for statement in statements {
        package.execute_sql(statement, None, gdal::vector::sql::Dialect::DEFAULT).map_err(gdal_error("write the GeoPackage's tables"))?;
    }
    Ok(())
}

/// The attribute rows: `map`, `geologic_unit`, `polygon_type`, `line_type`, `point_type`,
/// `map_metadata`, `model_run` and the confidence scale.
pub(crate) fn write_rows(package: &Dataset, map: &MapRow, units: &[UnitRow], structure: &StructureRows, sheet: &SheetRecord) -> Result<(), GeorefError> {
    let mut statements = vec![format!(
        "INSERT INTO map VALUES ({}, {}, {}, {}, {}, {})",
        literal(Some(&map.map_id)),
        literal(Some(&map.name)),
        literal(Some(&map.image_url)),
        literal(Some(&map.image_url)),
        map.width,
        map.height
    )];
    for (index, unit) in units.iter().enumerate() {
        let class = index + 1;
        let name = unit.description.as_deref().map(|d| d.split(['(', ',']).next().unwrap_or(d).trim().to_owned());
        statements.push(format!(
            "INSERT INTO geologic_unit VALUES ('unit_{class}', {}, {}, {}, {}, {}, {}, {}, {})",
            literal(name.as_deref().or(unit.code.as_deref())),
            literal(unit.description.as_deref()),
            literal(unit.age_text.as_deref()),
            literal(unit.t_interval.as_deref()),
            literal(unit.b_interval.as_deref()),
            number(unit.t_age),
            number(unit.b_age),
            literal(unit.lithology.as_deref()),
        ));
        let (r, g, b) = unit.colour;
        statements.push(format!(
            "INSERT INTO polygon_type VALUES ({}, 'geologic unit', '#{r:02x}{g:02x}{b:02x}', NULL, {}, {}, {}, 'unit_{class}')",
            literal(Some(&polygon_type_id(class))),
            literal(unit.code.as_deref()),
            literal(unit.description.as_deref()),
            literal(unit.category.as_deref()),
        ));
    }
    for line_type in &structure.line_types {
        statements.push(format!(
            "INSERT INTO line_type VALUES ({}, {}, {}, {}, {})",
            literal(Some(&line_type.id)),
            literal(Some(line_type_name(&line_type.name))),
            literal(Some(&line_type.description)),
            literal(Some(&line_type.dash_pattern)),
            literal(Some(&line_type.symbol)),
        ));
    }
    for point_type in &structure.point_types {
        statements.push(format!(
            "INSERT INTO point_type VALUES ({}, {}, {}, {})",
            literal(Some(&point_type.id)),
            literal(Some(point_type_name(&point_type.name))),
            literal(Some(&point_type.description)),
            literal(Some(&point_type.name)),
        ));
    }
    if let Some(metadata) = &sheet.metadata {
        statements.push(format!(
            "INSERT INTO map_metadata VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, 'modelled')",
            literal(Some(&metadata_id(&map.map_id))),
            literal(Some(&map.map_id)),
            literal(Some(&metadata.authors)),
            literal(Some(&metadata.title)),
            literal(Some(&metadata.publisher)),
            metadata.year,
            literal(metadata.organization.as_deref()),
            literal(metadata.scale.as_deref()),
            number(Some(rounded(metadata.confidence))),
        ));
    }
    for run in &sheet.runs {
        statements.push(format!(
            "INSERT INTO model_run VALUES ({}, {}, {}, {}, {}, {})",
            literal(Some(&run.id)),
            literal(Some(&run.model_name)),
            literal(Some(&run.version)),
            literal(Some(&run.timestamp)),
            literal(run.batch_id.as_deref()),
            literal(Some(&map.map_id)),
        ));
    }
    statements.push(format!(
        "INSERT INTO confidence_scale VALUES ('{CONFIDENCE_SCALE}', 'How sure the server is of an extraction: 0 a guess, 1 certain (the colour, shape or words matched fully)', 0, 1)"
    ));
    execute(package, &statements)
}

/// The page's parts, each pointing at what it is, and the revision's control points (in pixels and,
/// in the `_georeferenced` twin, at their coordinates) and extent.
pub(crate) fn write_sheet(package: &Dataset, map_id: &str, sheet: &SheetRecord, revision: Option<&Revision>) -> Result<(), GeorefError> {
    let mut pointers = Vec::new();
    for (index, page) in sheet.pages.iter().enumerate() {
        let id = format!("{map_id}_page{}", index + 1);
        let pointer = format!("{id}_pointer");
        pointers.push(format!(
            "INSERT INTO extraction_pointer VALUES ({}, '{}', {}, {})",
            literal(Some(&pointer)),
            page.table.as_str(),
            literal(Some(&page.column)),
            literal(Some(&page.record_id))
        ));
        let [x0, y0, x1, y1] = page.bbox;
        let values = [
            text(id),
            text(page.name.clone()),
            text(pointer),
            text(page.run.clone()),
            optional_text(page.text.clone()),
            optional_text(page.colour.clone()),
            text(format!("{x0} {y0} {x1} {y1}")),
            real(page.confidence),
            text("modelled".to_owned()),
        ];
        add_feature(package, "page_extraction", rectangle(page.bbox)?, &values)?;
    }
    execute(package, &pointers)?;
    let Some(revision) = revision else { return Ok(()) };
    for index in 0..revision.control_points.len() {
        let point = &revision.control_points[index];
        let values = field_values(&control_point_fields(map_id, revision, index));
        add_feature(package, "ground_control_point_georeferenced", point_at((point.x.0, point.y.0))?, &values)?;
        add_feature(package, "ground_control_point", point_at((point.col.0, point.row.0))?, &values)?;
    }
    let region = &revision.pixel_region;
    let provenance = control_provenance(revision);
    let values = [text(georeference_id(&revision.revision_id)), text(map_id.to_owned()), text(revision.crs.clone()), text(provenance.to_owned())];
    let (left, top) = (region.col as f64, region.row as f64);
    let bounds = [left, top, left + region.width as f64, top + region.height as f64];
    add_feature(package, "georeference_meta", rectangle(bounds)?, &values)
}

/// An extraction pointer and a confidence measurement for each feature's confidence in `tables`,
/// made by `run`.
pub(crate) fn write_confidences(package: &Dataset, run: &str, tables: &[TableName]) -> Result<(), GeorefError> {
    let mut statements = Vec::new();
    for table in tables {
        let table = table.as_str();
        statements.push(format!(
            "INSERT INTO extraction_pointer (id, table_name, column_name, record_id) SELECT id || '_confidence', '{table}', 'confidence', id FROM {table} WHERE confidence IS NOT NULL"
        ));
        statements.push(format!(
            "INSERT INTO confidence_measurement (id, model_run, pointer, confidence, scale) SELECT id || '_confidence', {}, id || '_confidence', confidence, '{CONFIDENCE_SCALE}' FROM {table} WHERE confidence IS NOT NULL",
            literal(Some(run))
        ));
    }
    execute(package, &statements)
}

/// An R-tree spatial index on each of the schema's geometry tables, built once they are written
/// (GDAL indexes only the layers it creates; GIS tools and [`crate::geopackage::line_near`] filter by it).
pub(crate) fn index(package: &Dataset) -> Result<(), GeorefError> {
    // GDAL registers each index in the GeoPackage's extensions table, made when its first layer needs one.
    let mut statements = vec![
        "CREATE TABLE IF NOT EXISTS gpkg_extensions (table_name TEXT, column_name TEXT, extension_name TEXT NOT NULL, definition TEXT NOT NULL, \
         scope TEXT NOT NULL, CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name))"
            .to_owned(),
    ];
    statements.extend(GEOMETRY_TABLES.iter().map(|(table, column, ..)| format!("SELECT gpkgAddSpatialIndex('{table}', '{column}')")));
    execute(package, &statements)
}

/// A text field's value.
fn text(value: String) -> gdal::vector::FieldValue {
    gdal::vector::FieldValue::StringValue(value)
}

/// A text field's value; `None` is NULL.
fn optional_text(value: Option<String>) -> gdal::vector::FieldValue {
    value.map_or(gdal::vector::FieldValue::RealValue(f64::NAN), gdal::vector::FieldValue::StringValue)
}

/// A number field's value, to three places; `None` is NULL.
fn real(value: Option<f64>) -> gdal::vector::FieldValue {
    gdal::vector::FieldValue::RealValue(value.map_or(f64::NAN, rounded))
}

/// `value` to three places.
fn rounded(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// A POINT at `(x, y)`.
pub(crate) fn point_at((x, y): (f64, f64)) -> Result<Geometry, GeorefError> {
    let mut point = Geometry::empty(OGRwkbGeometryType::wkbPoint).map_err(gdal_error("build a point"))?;
    point.add_point_2d((x, y));
    Ok(point)
}

/// The POLYGON of box `[x0, y0, x1, y1]`.
fn rectangle([x0, y0, x1, y1]: [f64; 4]) -> Result<Geometry, GeorefError> {
    Geometry::from_wkt(&format!("POLYGON(({x0} {y0},{x1} {y0},{x1} {y1},{x0} {y1},{x0} {y0}))")).map_err(gdal_error("build a box"))
}

/// Adds a feature of `geometry` and `values` (its layer's fields, in order; a NaN real is NULL) to layer `name`.
pub(crate) fn add_feature(package: &Dataset, name: &str, geometry: Geometry, values: &[gdal::vector::FieldValue]) -> Result<(), GeorefError> {
    let layer = package.layer_by_name(name).map_err(gdal_error("find a GeoPackage layer"))?;
    let mut feature = gdal::vector::Feature::new(layer.defn()).map_err(gdal_error("write a feature"))?;
    for (index, value) in values.iter().enumerate() {
        match value {
            // An absent value (a dip not read) is NULL, not a NaN that only SQLite turns into one.
            gdal::vector::FieldValue::RealValue(number) if number.is_nan() => feature.set_field_null(index),
            value => feature.set_field(index, value),
        }
        .map_err(gdal_error("write a feature"))?;
    }
    feature.set_geometry(geometry).map_err(gdal_error("write a feature"))?;
    feature.create(&layer).map_err(gdal_error("write a feature"))
}

/// A text value as an SQL literal (`NULL` when absent).
fn literal(value: Option<&str>) -> String {
    value.map_or_else(|| "NULL".to_owned(), |text| format!("'{}'", text.replace('\0', "").replace('\'', "''")))
}

/// A number as an SQL literal.
fn number(value: Option<f64>) -> String {
    value.filter(|v| v.is_finite()).map_or_else(|| "NULL".to_owned(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use geomap_model::symbols::Family;

    #[test]
    fn finer_kinds_take_the_schemas_broader_name() {
        assert_eq!(point_type_name("inclined bedding"), "bedding");
        assert_eq!(point_type_name("vertical bedding"), "bedding");
        assert_eq!(point_type_name("foliation"), "foliation");
        assert_eq!(point_type_name("sample location"), "sample location");
        assert_eq!(point_type_name("joint"), "joint");
        assert_eq!(point_type_name("vertical joint"), "joint");
        assert_eq!(point_type_name("volcanic vent"), "other");
        assert_eq!(point_type_name("mine shaft"), "other", "a kind the catalog does not hold");
        assert_eq!(line_type_name("thrust fault"), "thrust fault");
        assert_eq!(line_type_name("vein"), "other");
    }

    #[test]
    fn every_point_kind_of_the_catalog_is_filed_under_a_type_of_the_schema() {
        for symbol in catalog().symbols.iter().filter(|symbol| symbol.family == Family::Point) {
            if let Some(filed) = &symbol.point_type {
                assert!(POINT_TYPES.contains(&filed.as_str()), "{}: {filed}", symbol.name);
            }
        }
    }
}
