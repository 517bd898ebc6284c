//! QGIS's default styles for the GeoPackage's layers, in the `layer_styles` table QGIS reads a
//! layer's default style from: the units in their legend colours with their codes as labels and
//! legend entries, the line types drawn by their pattern at their symbol's width in the catalog, the attitudes as strike lines
//! turned to their strike with their dips beside them, filled marks as dots or triangles of their
//! colour.
//!
//! Invariants: one default style per feature layer written (pixel and `_georeferenced` alike);
//! every value is escaped for XML; the styles use only QGIS 3's categorized renderer, simple
//! fill, line and marker layers and simple labels, which every QGIS 3 reads.

use gdal::Dataset;

use geomap_georef::{GeorefError, gdal_error};
use geomap_model::symbols::catalog;

use crate::ta1::{self, StructureRows, UnitRow};

/// A line symbol the catalog (`geomap_model::symbols`) has no width for is drawn this wide, in mm.
const OTHER_LINE_MM: f64 = 0.4;
/// A filled mark the catalog has no size for is drawn this large, in mm.
const OTHER_MARK_MM: f64 = 2.0;
/// An attitude the catalog has no size for is drawn this long, in mm.
const OTHER_ATTITUDE_MM: f64 = 4.0;

/// QGIS's table of layer styles.
const TABLE: &str = "CREATE TABLE layer_styles (id INTEGER PRIMARY KEY AUTOINCREMENT, f_table_catalog TEXT(256), f_table_schema TEXT(256), \
     f_table_name TEXT(256), f_geometry_column TEXT(256), styleName TEXT(30), styleQML TEXT, styleSLD TEXT, useAsDefault BOOLEAN, \
     description TEXT, owner TEXT(30), ui TEXT(30), update_time DATETIME DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))";

/// `text` escaped for an XML attribute.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&apos;")
}

/// A QML document around `body`.
fn qml(body: &str) -> String {
    format!("<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n<qgis version=\"3.22.0\" styleCategories=\"Symbology|Labeling\">\n{body}</qgis>\n")
}

/// A categorized renderer on the `type` column: one `(value, label, symbol)` per category.
fn categorized(categories: &[(String, String, String)]) -> String {
    let mut out =
        String::from("<renderer-v2 type=\"categorizedSymbol\" attr=\"type\" forceraster=\"0\" symbollevels=\"0\" enableorderby=\"0\">\n<categories>\n");
    for (index, (value, label, _)) in categories.iter().enumerate() {
        out.push_str(&format!("<category render=\"true\" value=\"{}\" symbol=\"{index}\" label=\"{}\"/>\n", xml(value), xml(label)));
    }
    out.push_str("</categories>\n<symbols>\n");
    for (index, (_, _, symbol)) in categories.iter().enumerate() {
        out.push_str(&symbol.replace("name=\"\"", &format!("name=\"{index}\"")));
    }
    out.push_str("</symbols>\n</renderer-v2>\n");
    out
}

/// Properties of a symbol layer.
fn props(pairs: &[(&str, String)]) -> String {
    pairs.iter().map(|(key, value)| format!("<prop k=\"{key}\" v=\"{}\"/>", xml(value))).collect()
}

/// A simple label of `expression`, `placement` as QGIS numbers it (1 over the centroid, 0 around a point).
fn labels(expression: &str, size: f64, placement: u8) -> String {
    format!(
        "<labeling type=\"simple\">\n<settings calloutType=\"simple\">\n<text-style fieldName=\"{}\" isExpression=\"1\" fontFamily=\"Sans Serif\" \
         fontSize=\"{size}\" fontSizeUnit=\"Point\" textColor=\"0,0,0,255\" textOpacity=\"1\" namedStyle=\"Regular\">\n\
         <text-buffer bufferDraw=\"1\" bufferSize=\"0.6\" bufferSizeUnits=\"MM\" bufferColor=\"255,255,255,255\" bufferOpacity=\"0.7\"/>\n</text-style>\n\
         <placement placement=\"{placement}\" dist=\"1\" distUnits=\"MM\"/>\n<rendering obstacle=\"1\" scaleVisibility=\"0\"/>\n</settings>\n</labeling>\n",
        xml(expression)
    )
}

/// The units' style: each polygon type filled with its swatch colour, labelled with its code.
fn units_style(units: &[UnitRow]) -> String {
    let mut categories = Vec::new();
    let mut cases = String::from("CASE");
    for (index, unit) in units.iter().enumerate() {
        let id = ta1::polygon_type_id(index + 1);
        let label = unit.code.clone().or(unit.description.clone()).unwrap_or_else(|| format!("unit {}", index + 1));
        let (r, g, b) = unit.colour;
        let fill = props(&[
            ("color", format!("{r},{g},{b},255")),
            ("style", "solid".to_owned()),
            ("outline_color", "60,60,60,255".to_owned()),
            ("outline_style", "solid".to_owned()),
            ("outline_width", "0.1".to_owned()),
            ("outline_width_unit", "MM".to_owned()),
        ]);
        let symbol = format!(
            "<symbol type=\"fill\" name=\"\" alpha=\"1\" clip_to_extent=\"1\" force_rhr=\"0\"><layer class=\"SimpleFill\" enabled=\"1\" pass=\"0\" locked=\"0\">{fill}</layer></symbol>\n"
        );
        cases.push_str(&format!(" WHEN \"type\" = '{id}' THEN '{}'", label.replace('\'', "''")));
        categories.push((id, label, symbol));
    }
    cases.push_str(" END");
    qml(&(categorized(&categories) + &labels(&cases, 7.0, 1)))
}

/// The lines' style: each line type drawn black, heavier for faults and thrusts, dashed or
/// dotted as its pattern is.
fn lines_style(structure: &StructureRows) -> String {
    let categories: Vec<_> = structure
        .line_types
        .iter()
        .map(|line_type| {
            let width = catalog().named(&line_type.symbol).and_then(|symbol| symbol.line_mm).unwrap_or(OTHER_LINE_MM);
            let style = match line_type.dash_pattern.as_str() {
                "dashed" => "dash",
                "dotted" => "dot",
                _ => "solid",
            };
            let line = props(&[
                ("line_color", "0,0,0,255".to_owned()),
                ("line_width", width.to_string()),
                ("line_width_unit", "MM".to_owned()),
                ("line_style", style.to_owned()),
                ("capstyle", "round".to_owned()),
                ("joinstyle", "round".to_owned()),
            ]);
            let symbol = format!("<symbol type=\"line\" name=\"\" alpha=\"1\" clip_to_extent=\"1\" force_rhr=\"0\"><layer class=\"SimpleLine\" enabled=\"1\" pass=\"0\" locked=\"0\">{line}</layer></symbol>\n");
            (line_type.id.clone(), format!("{} ({})", line_type.symbol, line_type.dash_pattern), symbol)
        })
        .collect();
    qml(&categorized(&categories))
}

/// The point features' style: an attitude a strike line turned to the strike (the dip direction
/// less 90°), the dip as its label; a filled mark a dot (a triangle) of its colour.
fn points_style(structure: &StructureRows) -> String {
    let turned = "<data_defined_properties><Option type=\"Map\"><Option type=\"QString\" name=\"name\" value=\"\"/><Option type=\"Map\" name=\"properties\">\
         <Option type=\"Map\" name=\"angle\"><Option type=\"bool\" name=\"active\" value=\"true\"/><Option type=\"QString\" name=\"expression\" \
         value=\"coalesce(&quot;dip_direction&quot;, 90) - 90\"/><Option type=\"int\" name=\"type\" value=\"3\"/></Option></Option>\
         <Option type=\"QString\" name=\"type\" value=\"collection\"/></Option></data_defined_properties>";
    let categories: Vec<_> = structure
        .point_types
        .iter()
        .map(|point_type| {
            // An attitude is a strike line turned square to its dip direction; a filled mark a dot
            // or a triangle of its colour.
            let (shape, size, colour, turned) = match point_type.mark_colour {
                Some((r, g, b)) => (if point_type.mark_triangle { "triangle" } else { "circle" }, OTHER_MARK_MM, format!("{r},{g},{b},255"), ""),
                None => ("line", OTHER_ATTITUDE_MM, "0,0,0,255".to_owned(), turned),
            };
            let size = catalog().point_of_kind(&point_type.name).and_then(|symbol| symbol.size_mm).unwrap_or(size);
            let marker = props(&[
                ("name", shape.to_owned()),
                ("size", size.to_string()),
                ("size_unit", "MM".to_owned()),
                ("color", colour.clone()),
                ("outline_color", colour),
                ("outline_width", "0.5".to_owned()),
                ("outline_width_unit", "MM".to_owned()),
            ]);
            let symbol = format!(
                "<symbol type=\"marker\" name=\"\" alpha=\"1\" clip_to_extent=\"1\" force_rhr=\"0\"><layer class=\"SimpleMarker\" enabled=\"1\" pass=\"0\" locked=\"0\">{marker}{turned}</layer></symbol>\n"
            );
            (point_type.id.clone(), point_type.name.clone(), symbol)
        })
        .collect();
    qml(&(categorized(&categories) + &labels("\"dip\"", 6.0, 0)))
}

/// Writes QGIS's `layer_styles` table into `package`: a default style for the units, lines and
/// attitudes, in pixels and (when `georeferenced`) in the revision's CRS.
pub(crate) fn write(package: &Dataset, units: &[UnitRow], structure: &StructureRows, georeferenced: bool) -> Result<(), GeorefError> {
    let styles = [
        ("polygon_feature", "units in their legend colours", units_style(units)),
        ("line_feature", "line types by kind and pattern", lines_style(structure)),
        ("point_feature", "attitudes as strike lines with their dips, marks as dots or triangles", points_style(structure)),
    ];
    let mut statements = vec![
        TABLE.to_owned(),
        "INSERT INTO gpkg_contents (table_name, data_type, identifier, description) VALUES ('layer_styles', 'attributes', 'layer_styles', 'QGIS layer styles')"
            .to_owned(),
    ];
    for (table, description, style) in &styles {
        let twin = format!("{table}_georeferenced");
        let tables = if georeferenced { vec![table.to_string(), twin] } else { vec![table.to_string()] };
        for name in tables {
            statements.push(format!(
                "INSERT INTO layer_styles (f_table_catalog, f_table_schema, f_table_name, f_geometry_column, styleName, styleQML, styleSLD, useAsDefault, description, owner, ui) \
                 VALUES ('', '', '{name}', 'geometry', '{name}', '{}', '', 1, '{description}', '', NULL)",
                style.replace('\'', "''")
            ));
        }
    }
    for statement in &statements {
        package.execute_sql(statement, None, gdal::vector::sql::Dialect::DEFAULT).map_err(gdal_error("write the GeoPackage's styles"))?;
    }
    Ok(())
}
