//! A map's units, lines and points as GIS layers with GDAL: the class raster
//! sieved to a minimum mapping unit, polygonized, simplified within half a pixel
//! and written as a complete GeoPackage in the DARPA CriticalMAAS TA1 schema
//! (`package`: every table of the schema, the features in its pixel coordinates,
//! and `polygon_feature`, `line_feature`, `point_feature`, `cross_section` and
//! `ground_control_point` again with `_georeferenced` in the revision's CRS when
//! there is one; `styles`: QGIS's default style for each feature layer), with
//! the raster as a Cloud Optimized GeoTIFF whose palette is the swatches.
//!
//! Invariants: the class raster holds 0 for no unit and `1..=n` for the units
//! (0 is never a polygon and is the raster's nodata); pixel coordinates are the
//! scan's (x = column, y = row from the top, the TA1 convention), whatever part
//! of the scan the raster covers; a georeferenced vertex goes through the
//! revision's own transform (affine, polynomial or thin-plate spline), edges
//! densified first when it is not affine; files are written into the folder the
//! caller gives and nowhere else.

use std::path::Path;

use gdal::raster::{Buffer, ColorEntry, ColorTable, PaletteInterpretation};
use gdal::spatial_ref::SpatialRef;
use gdal::vector::{Geometry, LayerAccess, LayerOptions, OGRFieldType, OGRwkbGeometryType};
use gdal::{Dataset, DatasetOptions, DriverManager, GdalOpenFlags};
use geomap_model::georeference::Revision;
use geomap_model::layout::segment_distance;

use geomap_model::progress::Progress;

use crate::ffi::{self, GroundControl, Transformer};
use crate::ground::GroundScale;
use crate::package::{self, MapRow, SheetRecord, Structure, TableName, UnitRow, add_feature, point_at, real, text};
use crate::styles;
use crate::{GeorefError, Readiness, gdal_error, gdal_model, resolve_crs};

/// The GeoPackage's file name.
pub const GEOPACKAGE: &str = "units.gpkg";
/// The unit raster's file name.
pub const UNIT_RASTER: &str = "units.tif";
/// Polygon outlines are simplified within this many pixels.
const SIMPLIFY_PX: f64 = 0.5;
/// Before a transform that is not affine, no edge is longer than this many pixels.
const DENSIFY_PX: f64 = 8.0;

/// The class raster of a part of the scan, in GDAL's memory.
pub struct UnitRaster {
    dataset: Dataset,
    left: u32,
    top: u32,
    width: usize,
    height: usize,
    threads: usize,
}

/// What [`UnitRaster::write`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// Polygons per class (index 0: no unit, always 0).
    pub polygons: Vec<u64>,
    /// The georeferenced layer's CRS as given, when written.
    pub crs: Option<String>,
    /// Each line feature's length on the ground in km, when georeferenced (in the order given).
    pub line_lengths_km: Vec<Option<f64>>,
    /// Each line of section's length on the ground in km, when georeferenced (in the order given).
    pub section_lengths_km: Vec<Option<f64>>,
}

/// The unit raster's regions as [`UnitRaster::outlines`] drew them, for [`UnitRaster::write`].
pub struct Outlines {
    /// Each region kept (of a unit), in the order polygonized.
    regions: Vec<Region>,
    /// Each region's outline simplified, as WKB (`None`: nothing was left of it).
    simplified: Vec<Option<Vec<u8>>>,
}

/// A region of the unit raster: its place among the polygonized outlines (its feature's ID is
/// `index + 1`), its class and the top-left corner of its first pixel in the scan.
struct Region {
    index: usize,
    class: usize,
    first_pixel: (u32, u32),
}

/// Pixel → CRS through a revision.
enum ToCrs {
    Affine([f64; 6]),
    Warp(Transformer),
}

impl ToCrs {
    fn of(revision: &Revision) -> Result<ToCrs, GeorefError> {
        if let Some(geotransform) = revision.geotransform {
            return Ok(ToCrs::Affine(geotransform));
        }
        let gcps: Vec<GroundControl> = revision.control_points.iter().map(|p| GroundControl { pixel: p.col.0, line: p.row.0, x: p.x.0, y: p.y.0 }).collect();
        match gdal_model(revision.transform) {
            Some(model) => Transformer::fit(model, &gcps).map(ToCrs::Warp),
            None => ffi::gcps_to_geotransform(&gcps).map(ToCrs::Affine),
        }
        .ok_or_else(|| GeorefError::InvalidBounds("The revision's control points no longer fit a transform.".to_owned()))
    }

    fn apply(&self, xs: &mut [f64], ys: &mut [f64]) -> bool {
        match self {
            ToCrs::Affine([x0, a, b, y0, c, d]) => {
                for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                    (*x, *y) = (x0 + a * *x + b * *y, y0 + c * *x + d * *y);
                }
                true
            }
            ToCrs::Warp(transformer) => transformer.forward(xs, ys),
        }
    }
}

/// Directions on the sheet as bearings from grid north: each `(at, degrees)` (a pixel and a
/// direction there, clockwise from the sheet's up) through `revision`'s transform, measured on
/// the ground ([`GroundScale`]) so a geographic CRS's degrees of longitude count at their length.
pub fn grid_bearings(revision: &Revision, directions: &[((f64, f64), f64)]) -> Result<Vec<f64>, GeorefError> {
    Readiness::check().require()?;
    let srs = resolve_crs(&revision.crs)?;
    let to_crs = ToCrs::of(revision)?;
    let step = 10.0;
    let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = directions
        .iter()
        .flat_map(|&((x, y), degrees)| {
            let (dx, dy) = (degrees.to_radians().sin(), -degrees.to_radians().cos());
            [(x, y), (x + step * dx, y + step * dy)]
        })
        .unzip();
    if !to_crs.apply(&mut xs, &mut ys) {
        return Err(GeorefError::InvalidBounds("A point lies where the revision's transform does not reach.".to_owned()));
    }
    Ok((0..directions.len())
        .map(|k| {
            let scale = GroundScale::of(&srs, ys[2 * k]);
            let (east, north) = ((xs[2 * k + 1] - xs[2 * k]) * scale.x, (ys[2 * k + 1] - ys[2 * k]) * scale.y);
            (east.atan2(north).to_degrees().rem_euclid(360.0) * 10.0).round() / 10.0 % 360.0
        })
        .collect())
}

/// The area in km² of one scan pixel at `(col, row)` under `revision`: the transform's local
/// Jacobian there, on the ground ([`GroundScale`]: the CRS's own unit, or degrees on the ellipsoid at that latitude).
pub fn pixel_area_km2(revision: &Revision, col: f64, row: f64) -> Result<f64, GeorefError> {
    Readiness::check().require()?;
    let srs = resolve_crs(&revision.crs)?;
    let to_crs = ToCrs::of(revision)?;
    let (mut xs, mut ys) = (vec![col, col + 1.0, col], vec![row, row, row + 1.0]);
    if !to_crs.apply(&mut xs, &mut ys) {
        return Err(GeorefError::InvalidBounds("The revision's transform does not reach the map's centre.".to_owned()));
    }
    let (dx_col, dy_col, dx_row, dy_row) = (xs[1] - xs[0], ys[1] - ys[0], xs[2] - xs[0], ys[2] - ys[0]);
    let area = (dx_col * dy_row - dx_row * dy_col).abs();
    let scale = GroundScale::of(&srs, ys[0]);
    Ok(area * scale.x * scale.y / 1e6)
}

impl UnitRaster {
    /// The class raster `classes` (`width × height`) of the part of the scan whose top-left
    /// pixel is `(left, top)`, moved into GDAL's memory; [`UnitRaster::read_classes`] gives it back.
    /// Its polygons are simplified and its GeoTIFF compressed on `threads` threads (at least one).
    pub fn new(classes: Vec<u8>, (width, height): (usize, usize), (left, top): (u32, u32), threads: usize) -> Result<UnitRaster, GeorefError> {
        Readiness::check().require()?;
        let driver = DriverManager::get_driver_by_name("MEM").map_err(gdal_error("find GDAL's memory driver"))?;
        let mut dataset = driver.create_with_band_type::<u8, _>("", width, height, 1).map_err(gdal_error("hold the unit raster in memory"))?;
        let mut buffer = Buffer::new((width, height), classes);
        dataset.rasterband(1).and_then(|mut band| band.write((0, 0), (width, height), &mut buffer)).map_err(gdal_error("fill the unit raster"))?;
        drop(buffer);
        // Pixel coordinates of the scan: x = column, y = row from the top.
        dataset.set_geo_transform(&[f64::from(left), 1.0, 0.0, f64::from(top), 0.0, 1.0]).map_err(gdal_error("place the unit raster"))?;
        Ok(UnitRaster { dataset, left, top, width, height, threads: threads.max(1) })
    }

    /// Removes regions under `min_area` pixels (GDAL's sieve filter, 4-connected): each takes the
    /// class of its largest neighbour.
    pub fn sieve(&self, min_area: usize, progress: &Progress) -> Result<(), GeorefError> {
        let band = self.dataset.rasterband(1).map_err(gdal_error("read the unit raster"))?;
        let mut stopped = false;
        let message = "removing speckle below the minimum mapping unit";
        progress.fraction(0.0, message)?;
        let mut go_on = |done: f64| crate::told_to_go_on(progress.fraction(done, message).is_ok(), &mut stopped);
        let sieved = ffi::sieve(&band, min_area, &mut go_on);
        match (stopped, sieved) {
            (true, _) => Err(GeorefError::Cancelled),
            (false, Err(message)) => Err(GeorefError::Gdal { action: "sieve the unit raster", message }),
            (false, Ok(())) => Ok(()),
        }
    }

    /// The classes as they are now, into `into` (`width × height`).
    pub fn read_classes(&self, into: &mut [u8]) -> Result<(), GeorefError> {
        let band = self.dataset.rasterband(1).map_err(gdal_error("read the unit raster"))?;
        band.read_into_slice((0, 0), (self.width, self.height), (self.width, self.height), into, None).map_err(gdal_error("read the unit raster"))
    }

    /// The outlines of the regions of every class but 0, polygonized and each simplified within
    /// half a pixel (on the raster's threads): all of writing that needs nothing but the sieved
    /// raster, so it can run while the map's structure is traced. Cancelled through `progress`
    /// between steps.
    pub fn outlines(&self, progress: &Progress) -> Result<Outlines, GeorefError> {
        let message = "polygonizing the units";
        progress.fraction(0.0, message)?;
        let mut stopped = false;
        let memory = DriverManager::get_driver_by_name("Memory").map_err(gdal_error("find GDAL's memory vector driver"))?;
        let mut drawn_outlines = memory.create_vector_only("").map_err(gdal_error("hold the outlines in memory"))?;
        {
            let layer = drawn_outlines
                .create_layer(LayerOptions { name: "outlines", ty: OGRwkbGeometryType::wkbPolygon, ..Default::default() })
                .map_err(gdal_error("hold the outlines in memory"))?;
            layer.create_defn_fields(&[("class", OGRFieldType::OFTInteger)]).map_err(gdal_error("hold the outlines in memory"))?;
            let band = self.dataset.rasterband(1).map_err(gdal_error("read the unit raster"))?;
            let mut go_on = |done: f64| crate::told_to_go_on(progress.fraction(0.6 * done, message).is_ok(), &mut stopped);
            let drawn = ffi::polygonize(&band, &layer, &mut go_on);
            match (stopped, drawn) {
                (true, _) => return Err(GeorefError::Cancelled),
                (false, Err(message)) => return Err(GeorefError::Gdal { action: "polygonize the unit raster", message }),
                (false, Ok(())) => {}
            }
        }
        // Each unit's outline (its place among the outlines, its class, its first pixel, its WKB),
        // then all of them simplified at once.
        let mut kept = Vec::new();
        let mut shapes = Vec::new();
        for (index, feature) in drawn_outlines.layer(0).map_err(gdal_error("read the outlines"))?.features().enumerate() {
            let class = feature.field_as_integer(0).ok().flatten().unwrap_or(0);
            let (Some(outline), Ok(class)) = (feature.geometry(), usize::try_from(class)) else { continue };
            if class == 0 {
                continue;
            }
            kept.push(Region { index, class, first_pixel: first_vertex(outline) });
            shapes.push(outline.wkb().map_err(gdal_error("read the outlines"))?);
        }
        drop(drawn_outlines);
        let message = "simplifying the units' outlines";
        let mut go_on = |done: f64| crate::told_to_go_on(progress.fraction(0.6 + 0.4 * done, message).is_ok(), &mut stopped);
        let simplified = simplified_all(&shapes, self.threads, &mut go_on);
        match (stopped, simplified) {
            (true, _) => Err(GeorefError::Cancelled),
            (false, result) => Ok(Outlines { regions: kept, simplified: result? }),
        }
    }

    /// Writes the GeoPackage (the units' `outlines`, `lines`, points and sections) and the unit
    /// raster into `folder` (then the raster is styled and placed for GIS tools: write it once).
    /// `units[k - 1]` describes class `k`; `confidence(x, y)` is the mean confidence of the region
    /// whose first pixel (raster order, scan pixels) is `(x, y)`; with `revision`, the
    /// georeferenced layers and raster too.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        outlines: Outlines,
        folder: &Path,
        map: &MapRow,
        units: &[UnitRow],
        structure: &Structure,
        sheet: &SheetRecord,
        confidence: &dyn Fn(u32, u32) -> Option<f64>,
        revision: Option<&Revision>,
        progress: &Progress,
    ) -> Result<Written, GeorefError> {
        let georeferenced = match revision {
            Some(revision) => Some((revision, resolve_crs(&revision.crs)?, ToCrs::of(revision)?)),
            None => None,
        };
        let message = "writing the GeoPackage";
        progress.fraction(0.0, message)?;
        let mut polygons = vec![0_u64; units.len() + 1];
        let path = folder.join(GEOPACKAGE);
        let driver = DriverManager::get_driver_by_name("GPKG").map_err(gdal_error("find GDAL's GeoPackage driver"))?;
        package::create_schema(&driver.create_vector_only(&path).map_err(gdal_error("create the GeoPackage"))?)?;
        let update = DatasetOptions { open_flags: GdalOpenFlags::GDAL_OF_UPDATE | GdalOpenFlags::GDAL_OF_VECTOR, ..Default::default() };
        let mut package = Dataset::open_ex(&path, update).map_err(gdal_error("open the GeoPackage"))?;
        if let Some((_, srs, _)) = &georeferenced {
            georeferenced_layers(&mut package, srs)?;
        }
        package::write_rows(&package, map, units, structure, sheet)?;
        styles::write(&package, units, structure, georeferenced.is_some())?;
        let transaction = package.start_transaction().map_err(gdal_error("write the GeoPackage"))?;
        let total = outlines.regions.len().max(1) as f64;
        for (k, (Region { index, class, first_pixel: (first_x, first_y) }, simplified)) in outlines.regions.into_iter().zip(outlines.simplified).enumerate() {
            if k % 256 == 0 {
                progress.fraction(0.8 * k as f64 / total, message)?;
            }
            // A class beyond `units` is no unit's.
            let (Some(simplified), Some(count)) = (simplified, polygons.get_mut(class)) else { continue };
            let simplified = Geometry::from_wkb(&simplified).map_err(gdal_error("simplify a polygon"))?;
            let sure = confidence(first_x, first_y).unwrap_or(0.0);
            *count += 1;
            let values = [
                text(format!("{}_p{}", map.map_id, index + 1)),
                text(map.map_id.clone()),
                text(package::polygon_type_id(class)),
                real(Some(sure)),
                text("modelled".to_owned()),
            ];
            if let Some((revision, _, to_crs)) = &georeferenced {
                let mut dense = simplified.clone();
                if revision.geotransform.is_none() {
                    ffi::segmentize(&mut dense, DENSIFY_PX);
                }
                let placed = multi(transformed(&dense, to_crs)?).map_err(gdal_error("build a polygon"))?;
                add_feature(&transaction, "polygon_feature_georeferenced", placed, &values)?;
            }
            add_feature(&transaction, "polygon_feature", multi(simplified).map_err(gdal_error("build a polygon"))?, &values)?;
        }
        let mut line_lengths_km = Vec::with_capacity(structure.lines.len());
        for (index, line) in structure.lines.iter().enumerate() {
            let values = [
                text(format!("{}_l{}", map.map_id, index + 1)),
                text(map.map_id.clone()),
                text(line.name.clone()),
                text(line.type_id.clone()),
                gdal::vector::FieldValue::IntegerValue(i32::from(line.polarity)),
                real(Some(line.confidence)),
                text("modelled".to_owned()),
            ];
            line_lengths_km.push(add_line(&transaction, "line_feature", &line.points, &values, georeferenced.as_ref(), multi_line)?);
        }
        let mut section_lengths_km = Vec::with_capacity(structure.sections.len());
        for (index, section) in structure.sections.iter().enumerate() {
            let (x0, y0, x1, y1) = section.section_bbox;
            let values = [
                text(format!("{}_s{}", map.map_id, index + 1)),
                text(map.map_id.clone()),
                real(Some(section.confidence)),
                text("modelled".to_owned()),
                text(section.name.clone()),
                text(format!("{x0} {y0} {x1} {y1}")),
            ];
            section_lengths_km.push(add_line(&transaction, "cross_section", &section.points, &values, georeferenced.as_ref(), line_string)?);
        }
        for (index, point) in structure.points.iter().enumerate() {
            let values = [
                text(format!("{}_pt{}", map.map_id, index + 1)),
                text(map.map_id.clone()),
                text(point.type_id.clone()),
                real(point.dip_direction),
                real(point.dip),
                real(Some(point.confidence)),
                text("modelled".to_owned()),
                text(point.dip_words.map_or_else(String::new, |(x0, y0, x1, y1)| format!("{x0} {y0} {x1} {y1}"))),
            ];
            if let Some((_, _, to_crs)) = &georeferenced {
                let (mut xs, mut ys) = ([point.at.0], [point.at.1]);
                if !to_crs.apply(&mut xs, &mut ys) {
                    return Err(GeorefError::InvalidBounds("A point lies where the revision's transform does not reach.".to_owned()));
                }
                add_feature(&transaction, "point_feature_georeferenced", point_at((xs[0], ys[0]))?, &values)?;
            }
            add_feature(&transaction, "point_feature", point_at(point.at)?, &values)?;
        }
        package::write_sheet(&transaction, &map.map_id, sheet, revision)?;
        let featured = [TableName::PolygonFeature, TableName::LineFeature, TableName::PointFeature, TableName::CrossSection];
        package::write_confidences(&transaction, &sheet.extraction_run, &featured)?;
        package::index(&transaction)?;
        transaction.commit().map_err(gdal_error("write the GeoPackage"))?;
        self.write_raster(folder, units, georeferenced.as_ref().map(|(revision, srs, _)| (*revision, srs)), &progress.stage(0.8, 1.0))?;
        Ok(Written { polygons, crs: revision.map(|revision| revision.crs.clone()), line_lengths_km, section_lengths_km })
    }

    /// The unit raster as a Cloud Optimized GeoTIFF: the swatches as its palette, the codes as
    /// its category names, 0 as nodata; georeferenced through `georeferenced` when given. Styles
    /// the memory dataset itself (its polygons are drawn by now), so no second copy is made.
    fn write_raster(
        &mut self,
        folder: &Path,
        units: &[UnitRow],
        georeferenced: Option<(&Revision, &SpatialRef)>,
        progress: &Progress,
    ) -> Result<(), GeorefError> {
        let (left, top) = (f64::from(self.left), f64::from(self.top));
        if let Some((revision, srs)) = georeferenced {
            match revision.geotransform {
                Some([x0, a, b, y0, c, d]) => {
                    self.dataset.set_spatial_ref(srs).map_err(gdal_error("georeference the unit raster"))?;
                    self.dataset
                        .set_geo_transform(&[x0 + a * left + b * top, a, b, y0 + c * left + d * top, c, d])
                        .map_err(gdal_error("georeference the unit raster"))?
                }
                None => {
                    let gcps = revision
                        .control_points
                        .iter()
                        .enumerate()
                        .map(|(i, p)| gdal::Gcp {
                            id: (i + 1).to_string(),
                            info: String::new(),
                            pixel: p.col.0 - left,
                            line: p.row.0 - top,
                            x: p.x.0,
                            y: p.y.0,
                            z: 0.0,
                        })
                        .collect();
                    // GDAL's default transform reads as none, so the GeoTIFF carries the GCPs alone.
                    self.dataset.set_geo_transform(&[0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).map_err(gdal_error("georeference the unit raster"))?;
                    self.dataset.set_gcps(gcps, srs).map_err(gdal_error("georeference the unit raster"))?
                }
            }
        }
        {
            let mut band = self.dataset.rasterband(1).map_err(gdal_error("style the unit raster"))?;
            let mut palette = ColorTable::new(PaletteInterpretation::Rgba);
            palette.set_color_entry(0, &ColorEntry::rgba(0, 0, 0, 0));
            let mut names = vec!["no unit".to_owned()];
            for (index, unit) in units.iter().enumerate() {
                let (r, g, b) = unit.colour;
                palette.set_color_entry((index + 1) as u16, &ColorEntry::rgba(r.into(), g.into(), b.into(), 255));
                names.push(unit.code.clone().or(unit.description.clone()).unwrap_or_else(|| format!("unit {}", index + 1)));
            }
            band.set_color_table(&palette);
            band.set_no_data_value(Some(0.0)).map_err(gdal_error("style the unit raster"))?;
            ffi::set_category_names(&band, &names).map_err(|message| GeorefError::Gdal { action: "name the unit raster's classes", message })?;
        }
        let cog = DriverManager::get_driver_by_name("COG").map_err(gdal_error("find GDAL's COG driver"))?;
        let threads = format!("NUM_THREADS={}", self.threads);
        let options = ["COMPRESS=DEFLATE", "OVERVIEW_RESAMPLING=NEAREST", threads.as_str()];
        let mut stopped = false;
        let mut go_on = |done: f64| crate::told_to_go_on(progress.fraction(done, "writing the unit raster").is_ok(), &mut stopped);
        let written = ffi::create_copy(&cog, &self.dataset, &folder.join(UNIT_RASTER), &options, &mut go_on);
        match (stopped, written) {
            (true, _) => Err(GeorefError::Cancelled),
            (false, Err(message)) => Err(GeorefError::Gdal { action: "write the unit raster", message }),
            (false, Ok(_)) => Ok(()),
        }
    }
}

/// The class at pixel `(x, y)` of the unit raster `path` (its own pixels: 0 is no unit), or
/// `None` outside it.
pub fn class_at(path: &Path, x: u32, y: u32) -> Result<Option<u8>, GeorefError> {
    Readiness::check().require()?;
    let dataset = Dataset::open(path).map_err(gdal_error("open the unit raster"))?;
    let (width, height) = dataset.raster_size();
    if x as usize >= width || y as usize >= height {
        return Ok(None);
    }
    let band = dataset.rasterband(1).map_err(gdal_error("read the unit raster"))?;
    let mut value = [0_u8];
    band.read_into_slice((x as isize, y as isize), (1, 1), (1, 1), &mut value, None).map_err(gdal_error("read the unit raster"))?;
    Ok(Some(value[0]))
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

/// Each of `shapes` (WKB polygons) simplified within [`SIMPLIFY_PX`] keeping its topology, as
/// WKB (`None` when nothing is left of it), in order, on `threads` threads taking 64 at a time;
/// `go_on(done)` (the share done, 0–1) is asked between batches on the calling thread, and
/// every thread stops when it says no.
fn simplified_all(shapes: &[Vec<u8>], threads: usize, go_on: &mut dyn FnMut(f64) -> bool) -> Result<Vec<Option<Vec<u8>>>, GeorefError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    /// A batch's first index and its shapes simplified.
    type Batch = (usize, Vec<Option<Vec<u8>>>);
    const BATCH: usize = 64;
    let (next, done, stop) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicBool::new(false));
    let simplify = |shape: &[u8]| -> Result<Option<Vec<u8>>, GeorefError> {
        let simplified = Geometry::from_wkb(shape).and_then(|outline| outline.simplify_preserve_topology(SIMPLIFY_PX));
        let simplified = simplified.map_err(gdal_error("simplify a polygon"))?;
        if simplified.is_empty() { Ok(None) } else { simplified.wkb().map(Some).map_err(gdal_error("simplify a polygon")) }
    };
    // One batch: its first index and its shapes simplified; `None` when none is left or all stop.
    let batch = || -> Option<Result<Batch, GeorefError>> {
        let first = next.fetch_add(BATCH, Ordering::Relaxed);
        if first >= shapes.len() || stop.load(Ordering::Relaxed) {
            return None;
        }
        let result: Result<Vec<_>, _> = shapes[first..(first + BATCH).min(shapes.len())].iter().map(|shape| simplify(shape)).collect();
        done.fetch_add(BATCH, Ordering::Relaxed);
        Some(result.map(|simplified| (first, simplified)))
    };
    // Batches until none is left, `report`ing after each; the first failure stops every thread.
    let work = |report: &mut dyn FnMut()| -> Result<Vec<Batch>, GeorefError> {
        let mut batches = Vec::new();
        while let Some(result) = batch() {
            batches.push(result.inspect_err(|_| stop.store(true, Ordering::Relaxed))?);
            report();
        }
        Ok(batches)
    };
    let mut batches = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(|| work(&mut || {}))).collect();
        let mut report = || {
            if !go_on(done.load(Ordering::Relaxed).min(shapes.len()) as f64 / shapes.len().max(1) as f64) {
                stop.store(true, Ordering::Relaxed);
            }
        };
        let mut all = work(&mut report)?;
        for helper in helpers {
            all.extend(helper.join().expect("a simplifying thread panicked")?);
        }
        Ok::<_, GeorefError>(all)
    })?;
    batches.sort_by_key(|(first, _)| *first);
    Ok(batches.into_iter().flat_map(|(_, simplified)| simplified).collect())
}

/// The lowest, then leftmost vertex of `outline`'s outer ring: the top-left corner of its
/// region's first pixel in raster order.
fn first_vertex(outline: &Geometry) -> (u32, u32) {
    let mut points = Vec::new();
    if outline.geometry_count() > 0 {
        outline.get_geometry(0).get_points(&mut points);
    }
    let (x, y) = points.iter().map(|&(x, y, _)| (x, y)).min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0))).unwrap_or((0.0, 0.0));
    (x.round() as u32, y.round() as u32)
}

/// `polygon` with every vertex taken through `to_crs`.
fn transformed(polygon: &Geometry, to_crs: &ToCrs) -> Result<Geometry, GeorefError> {
    let mut placed = Geometry::empty(OGRwkbGeometryType::wkbPolygon).map_err(gdal_error("build a polygon"))?;
    let mut points = Vec::new();
    for ring in 0..polygon.geometry_count() {
        points.clear();
        polygon.get_geometry(ring).get_points(&mut points);
        let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = points.iter().map(|&(x, y, _)| (x, y)).unzip();
        if !to_crs.apply(&mut xs, &mut ys) {
            return Err(GeorefError::InvalidBounds("A polygon's vertex lies where the revision's transform does not reach.".to_owned()));
        }
        let mut out = Geometry::empty(OGRwkbGeometryType::wkbLinearRing).map_err(gdal_error("build a polygon"))?;
        xs.into_iter().zip(ys).for_each(|point| out.add_point_2d(point));
        placed.add_geometry(out).map_err(gdal_error("build a polygon"))?;
    }
    Ok(placed)
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

/// Adds a line feature of `points` (drawn as `shape`) and `values` to `table` in pixels and, when
/// `georeferenced`, to its `_georeferenced` twin; returns its length on the ground in km then.
fn add_line(
    package: &Dataset,
    table: &str,
    points: &[(f64, f64)],
    values: &[gdal::vector::FieldValue],
    georeferenced: Option<&(&Revision, SpatialRef, ToCrs)>,
    shape: fn(&[(f64, f64)]) -> gdal::errors::Result<Geometry>,
) -> Result<Option<f64>, GeorefError> {
    let mut length_km = None;
    if let Some((revision, srs, to_crs)) = georeferenced {
        let placed = placed_line(points, revision, to_crs)?;
        length_km = Some(ground_km(&placed, srs));
        add_feature(package, &format!("{table}_georeferenced"), shape(&placed).map_err(gdal_error("build a line"))?, values)?;
    }
    add_feature(package, table, shape(points).map_err(gdal_error("build a line"))?, values)?;
    Ok(length_km)
}

/// A line's vertices taken through the revision's transform (densified first when it is not affine).
fn placed_line(points: &[(f64, f64)], revision: &Revision, to_crs: &ToCrs) -> Result<Vec<(f64, f64)>, GeorefError> {
    let dense = if revision.geotransform.is_none() { densified(points) } else { points.to_vec() };
    let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = dense.into_iter().unzip();
    if !to_crs.apply(&mut xs, &mut ys) {
        return Err(GeorefError::InvalidBounds("A line's vertex lies where the revision's transform does not reach.".to_owned()));
    }
    Ok(xs.into_iter().zip(ys).collect())
}

/// The length on the ground in km of a line placed in `srs`.
fn ground_km(placed: &[(f64, f64)], srs: &SpatialRef) -> f64 {
    placed
        .windows(2)
        .map(|pair| {
            let scale = GroundScale::of(srs, (pair[0].1 + pair[1].1) / 2.0);
            ((pair[1].0 - pair[0].0) * scale.x).hypot((pair[1].1 - pair[0].1) * scale.y)
        })
        .sum::<f64>()
        / 1000.0
}

/// `points` with vertices added so no edge is longer than [`DENSIFY_PX`].
fn densified(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut dense = Vec::with_capacity(points.len());
    for pair in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        let steps = ((x1 - x0).hypot(y1 - y0) / DENSIFY_PX).ceil().max(1.0) as usize;
        dense.extend((0..steps).map(|k| (x0 + (x1 - x0) * k as f64 / steps as f64, y0 + (y1 - y0) * k as f64 / steps as f64)));
    }
    dense.extend(points.last());
    dense
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::{LineRow, LineTypeRow, PointRow, PointTypeRow, RunRow, SectionRow};
    use std::cell::RefCell;

    /// What a package records of a sheet with nothing read but the run that wrote it.
    fn one_run() -> SheetRecord {
        let run = RunRow {
            id: "run_1".to_owned(),
            model_name: "test".to_owned(),
            version: "0".to_owned(),
            timestamp: "2026-12-04T00:00:00Z".to_owned(),
            batch_id: None,
        };
        SheetRecord { runs: vec![run], extraction_run: "run_1".to_owned(), ..SheetRecord::default() }
    }

    #[test]
    fn each_polygon_asks_for_its_regions_first_pixel_and_small_regions_are_sieved() {
        // At scan offset (10, 20): a U of class 1 around a 2, a lone pixel of 2 (sieved into
        // the 1 around it), class 0 left out.
        #[rustfmt::skip]
        let classes = vec![
            1, 1, 1, 1, 1, 1,
            1, 2, 2, 1, 2, 1,
            1, 2, 2, 1, 1, 1,
            1, 1, 1, 1, 0, 0,
        ];
        let mut raster = UnitRaster::new(classes, (6, 4), (10, 20), 2).unwrap();
        raster.sieve(2, &Progress::none()).unwrap();
        let mut sieved = vec![0; 24];
        raster.read_classes(&mut sieved).unwrap();
        assert_eq!(sieved[10], 1, "the lone pixel joined its neighbour");
        let folder = tempfile::tempdir().unwrap();
        let asked = RefCell::new(Vec::new());
        let map = MapRow { map_id: "map_x".to_owned(), name: "a map".to_owned(), image_url: "geomap://maps/map_x".to_owned(), width: 100, height: 100 };
        let units = [
            UnitRow { code: Some("Qal".to_owned()), colour: (250, 235, 150), ..Default::default() },
            UnitRow { code: Some("Tb".to_owned()), colour: (230, 120, 110), ..Default::default() },
        ];
        let outlines = raster.outlines(&Progress::none()).unwrap();
        let written = raster
            .write(
                outlines,
                folder.path(),
                &map,
                &units,
                &Structure::default(),
                &one_run(),
                &|x, y| {
                    asked.borrow_mut().push((x, y));
                    Some(0.5)
                },
                None,
                &Progress::none(),
            )
            .unwrap();
        assert_eq!(written.polygons, vec![0, 1, 1]);
        let mut asked = asked.into_inner();
        asked.sort();
        assert_eq!(asked, vec![(10, 20), (11, 21)], "the top-left corners of each region's first pixel, in the scan's pixels");
        let package = Dataset::open(folder.path().join(GEOPACKAGE)).unwrap();
        let mut layer = package.layer_by_name("polygon_feature").unwrap();
        assert_eq!(layer.feature_count(), 2);
        let feature = layer.features().next().unwrap();
        assert_eq!(feature.field_as_double(3).unwrap(), Some(0.5));
        let class_of_corner = class_at(&folder.path().join(UNIT_RASTER), 1, 1).unwrap();
        assert_eq!(class_of_corner, Some(2));
        assert_eq!(class_at(&folder.path().join(UNIT_RASTER), 6, 0).unwrap(), None, "outside the raster");
    }

    #[test]
    fn outlines_simplified_on_several_threads_come_back_in_order_and_stop_when_told() {
        // 300 staircase triangles of different sizes.
        let shapes: Vec<Vec<u8>> = (0..300)
            .map(|k| {
                let size = 4 + k % 17;
                let mut ring = vec![(0.0, 0.0)];
                for step in 0..size {
                    ring.extend([(f64::from(step + 1), f64::from(step)), (f64::from(step + 1), f64::from(step + 1))]);
                }
                ring.extend([(0.0, f64::from(size)), (0.0, 0.0)]);
                let text = ring.iter().map(|(x, y)| format!("{x} {y}")).collect::<Vec<_>>().join(",");
                Geometry::from_wkt(&format!("POLYGON(({text}))")).unwrap().wkb().unwrap()
            })
            .collect();
        let one = simplified_all(&shapes, 1, &mut |_| true).unwrap();
        let three = simplified_all(&shapes, 3, &mut |_| true).unwrap();
        assert_eq!(one.len(), 300);
        assert_eq!(one, three, "the same shapes in the same order");
        for (shape, simplified) in shapes.iter().zip(&one) {
            let alone = Geometry::from_wkb(shape).unwrap().simplify_preserve_topology(SIMPLIFY_PX).unwrap();
            assert_eq!(simplified.as_deref(), Some(alone.wkb().unwrap().as_slice()), "each as simplified alone");
        }
        let stopped = simplified_all(&shapes, 1, &mut |_| false).unwrap();
        assert_eq!(stopped.len(), 64, "told to stop after its first batch");
    }

    #[test]
    fn lines_are_written_beside_the_units_and_found_near_a_point() {
        let mut raster = UnitRaster::new(vec![1; 40 * 30], (40, 30), (0, 0), 2).unwrap();
        let folder = tempfile::tempdir().unwrap();
        let map = MapRow { map_id: "map_x".to_owned(), name: "a map".to_owned(), image_url: "geomap://maps/map_x".to_owned(), width: 40, height: 30 };
        let units = [UnitRow { code: Some("Qal".to_owned()), colour: (250, 235, 150), ..Default::default() }];
        let structure = Structure {
            line_types: vec![LineTypeRow {
                id: "line_type_2_dashed".to_owned(),
                name: "fault".to_owned(),
                description: "Fault—Dashed where approximately located".to_owned(),
                dash_pattern: "dashed".to_owned(),
                symbol: "fault".to_owned(),
            }],
            lines: vec![LineRow {
                type_id: "line_type_2_dashed".to_owned(),
                name: "fault".to_owned(),
                points: vec![(2.0, 2.0), (38.0, 20.0)],
                polarity: 0,
                confidence: 0.9,
            }],
            point_types: vec![PointTypeRow {
                id: "point_type_6".to_owned(),
                name: "inclined bedding".to_owned(),
                description: "Strike and dip of beds".to_owned(),
                mark_colour: None,
                mark_triangle: false,
            }],
            points: vec![
                PointRow {
                    type_id: "point_type_6".to_owned(),
                    at: (10.0, 25.0),
                    dip_direction: Some(135.0),
                    dip: Some(35.0),
                    dip_words: Some((12.0, 20.0, 20.0, 28.0)),
                    confidence: 0.8,
                },
                PointRow { type_id: "point_type_6".to_owned(), at: (30.0, 5.0), dip_direction: Some(10.0), dip: None, dip_words: None, confidence: 0.6 },
            ],
            sections: vec![SectionRow {
                name: "A–A′".to_owned(),
                points: vec![(3.0, 28.0), (37.0, 26.0)],
                confidence: 0.9,
                section_bbox: (50.0, 0.0, 90.0, 20.0),
            }],
        };
        let outlines = raster.outlines(&Progress::none()).unwrap();
        let written = raster.write(outlines, folder.path(), &map, &units, &structure, &one_run(), &|_, _| Some(1.0), None, &Progress::none()).unwrap();
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
        assert_eq!(written.line_lengths_km, vec![None], "no revision, no ground length");
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
        assert_eq!(written.section_lengths_km, vec![None]);
        let section = sections.features().next().expect("the line of section");
        let mut vertices = Vec::new();
        section.geometry().unwrap().get_points(&mut vertices);
        assert_eq!(vertices, [(3.0, 28.0, 0.0), (37.0, 26.0, 0.0)], "a LINESTRING from A to A′");
        assert_eq!(section.field_as_string(section.field_index("section_bbox").unwrap()).unwrap().as_deref(), Some("50 0 90 20"));
    }

    #[test]
    fn a_direction_on_the_sheet_is_a_bearing_from_grid_north() {
        // A north-up sheet twice as wide on the ground as it is tall, at 60°N: a pixel spans the
        // same ground both ways only once longitude is counted at its length.
        let bounds =
            crate::Bounds { west: crate::Coordinate(10.0), south: crate::Coordinate(59.5), east: crate::Coordinate(11.0), north: crate::Coordinate(60.0) };
        let request = crate::Request { crs: "EPSG:4326".to_owned(), placement: crate::Placement::Bounds { bounds, region: None } };
        let revision = crate::describe(1000, 1000, &request, "rev_test").unwrap();
        let bearings = grid_bearings(&revision, &[((500.0, 500.0), 0.0), ((500.0, 500.0), 90.0), ((500.0, 500.0), 45.0)]).unwrap();
        assert_eq!(&bearings[..2], [0.0, 90.0]);
        // One pixel east is 0.001° of longitude (about 55.6 m), one pixel south 0.0005° of latitude (about 55.7 m).
        assert!((bearings[2] - 45.0).abs() < 0.5, "{bearings:?}");
        let rotated = grid_bearings(&revision, &[((500.0, 500.0), 200.0)]).unwrap();
        assert!((rotated[0] - 200.0).abs() < 0.5, "{rotated:?}");
    }
}
