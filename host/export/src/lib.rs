//! GIS export: one [`Extraction`] value (a sheet's units, lines, points, lines of section,
//! metadata and, when the map is georeferenced, every feature placed on the ground) and the
//! [`EXPORTERS`] that write it, each one file of this crate: the DARPA CriticalMAAS TA1 GeoPackage
//! with QGIS's styles ([`geopackage`]) and GeoJSON, one RFC 7946 FeatureCollection per layer
//! ([`geojson`]). A new format is one file and one line in [`EXPORTERS`].
//!
//! Invariants: exporters read the extraction and write only into the folder they are given;
//! features are placed on the ground once ([`Ground::place`], through the revision's own
//! transform), so every exporter writes the same geometries and the ground lengths come from
//! those; every feature's fields are the TA1 table's ([`ta1`]), the same in every format. GDAL's
//! and the file system's failures are [`GeorefError`]s, the GDAL crates' one error type.

pub mod geojson;
pub mod geopackage;
pub mod styles;
pub mod ta1;
#[cfg(test)]
mod testing;

use std::path::Path;

use gdal::vector::Geometry;
use geomap_georef::{GeorefError, PixelToCrs, gdal_error, ground, resolve_crs};
use geomap_model::georeference::Revision;
use geomap_model::progress::Progress;

use ta1::{MapRow, SheetRecord, StructureRows, UnitRow};

/// Everything an extraction found on a sheet, as the exporters take it.
pub struct Extraction {
    /// The map (`map` row).
    pub map: MapRow,
    /// The legend's units: `units[k - 1]` describes class `k`.
    pub units: Vec<UnitRow>,
    /// The units' polygons, in the scan's pixels.
    pub polygons: Vec<UnitPolygon>,
    /// The line and point types, their features and the lines of section, in the scan's pixels.
    pub structure: StructureRows,
    /// What the sheet says of itself: metadata, the page's parts, the runs.
    pub sheet: SheetRecord,
    /// Every feature placed on the ground, when the map is georeferenced.
    pub ground: Option<Ground>,
}

/// One polygon of a unit.
pub struct UnitPolygon {
    /// Its number among the unit raster's outlines (its feature's ID ends `_p{id}`).
    pub id: usize,
    /// Its class: 1 for `units[0]`, …
    pub class: usize,
    /// The mean confidence of its pixels, 0–1.
    pub confidence: f64,
    /// Its outline (a POLYGON, simplified), as WKB in the scan's pixels.
    pub wkb: Vec<u8>,
}

/// An extraction's features on the ground: each placed through the revision's transform (edges
/// densified first when it is not affine), in the order of the extraction's own.
pub struct Ground {
    /// The georeference.
    pub revision: Revision,
    /// Each polygon's outline in the revision's CRS, as WKB.
    pub polygons: Vec<Vec<u8>>,
    /// Each line feature's vertices in the revision's CRS.
    pub lines: Vec<Vec<(f64, f64)>>,
    /// Each line of section's vertices in the revision's CRS.
    pub sections: Vec<Vec<(f64, f64)>>,
    /// Each point feature in the revision's CRS.
    pub points: Vec<(f64, f64)>,
    /// Each line feature's length on the ground, km.
    pub line_lengths_km: Vec<f64>,
    /// Each line of section's length on the ground, km.
    pub section_lengths_km: Vec<f64>,
}

/// Lines placed in a CRS, and their lengths on the ground in km.
type PlacedLines = (Vec<Vec<(f64, f64)>>, Vec<f64>);

impl Ground {
    /// `polygons` and `structure` placed through `revision`, reporting through `progress`.
    pub fn place(revision: &Revision, polygons: &[UnitPolygon], structure: &StructureRows, progress: &Progress) -> Result<Ground, GeorefError> {
        let message = "placing the features on the ground";
        progress.fraction(0.0, message)?;
        let srs = resolve_crs(&revision.crs)?;
        let to_crs = PixelToCrs::of(revision)?;
        let total = polygons.len().max(1) as f64;
        let mut placed_polygons = Vec::with_capacity(polygons.len());
        for (k, polygon) in polygons.iter().enumerate() {
            if k % 256 == 0 {
                progress.fraction(0.9 * k as f64 / total, message)?;
            }
            let outline = Geometry::from_wkb(&polygon.wkb).map_err(gdal_error("read a polygon"))?;
            placed_polygons.push(to_crs.place_polygon(&outline)?.wkb().map_err(gdal_error("place a polygon"))?);
        }
        let place_lines = |lines: Vec<&[(f64, f64)]>| -> Result<PlacedLines, GeorefError> {
            let placed = lines.into_iter().map(|points| to_crs.place_line(points)).collect::<Result<Vec<_>, _>>()?;
            let lengths = placed.iter().map(|line| ground::length_km(line, &srs)).collect();
            Ok((placed, lengths))
        };
        let (lines, line_lengths_km) = place_lines(structure.lines.iter().map(|line| line.points.as_slice()).collect())?;
        let (sections, section_lengths_km) = place_lines(structure.sections.iter().map(|section| section.points.as_slice()).collect())?;
        let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = structure.points.iter().map(|point| point.at).unzip();
        to_crs.place_points(&mut xs, &mut ys)?;
        Ok(Ground {
            revision: revision.clone(),
            polygons: placed_polygons,
            lines,
            sections,
            points: xs.into_iter().zip(ys).collect(),
            line_lengths_km,
            section_lengths_km,
        })
    }
}

impl Extraction {
    /// Polygons per class (index 0, no unit, always 0; a class beyond the units is no unit's).
    pub fn polygons_per_class(&self) -> Vec<u64> {
        let mut counts = vec![0_u64; self.units.len() + 1];
        for polygon in &self.polygons {
            if let Some(count) = counts.get_mut(polygon.class).filter(|_| polygon.class > 0) {
                *count += 1;
            }
        }
        counts
    }
}

/// What an exporter wrote.
#[derive(Debug, Clone, Default)]
pub struct Exported {
    /// The files, by name in the folder, in the order written.
    pub files: Vec<String>,
    /// What the format could not hold (GeoJSON of a map with no georeference).
    pub warnings: Vec<String>,
}

/// A format an extraction is written in.
pub trait Exporter: Sync {
    /// The end of its files' names (`.gpkg`) and the media type they are served as.
    fn file_type(&self) -> (&'static str, &'static str);
    /// Writes `extraction` into `folder`, reporting through `progress`.
    fn write(&self, extraction: &Extraction, folder: &Path, progress: &Progress) -> Result<Exported, GeorefError>;
}

/// Every format an extraction is written in, in order.
pub const EXPORTERS: [&dyn Exporter; 2] = [&geopackage::GeoPackage, &geojson::GeoJson];

/// The media type of an exported file named `name`, when an exporter writes such files.
pub fn media_type(name: &str) -> Option<&'static str> {
    EXPORTERS.iter().map(|exporter| exporter.file_type()).find(|(ending, _)| name.ends_with(ending)).map(|(_, media_type)| media_type)
}

/// Writes `extraction` in every format of [`EXPORTERS`] into `folder`, each with its share of
/// `progress`; what they wrote, in order.
pub fn export_all(extraction: &Extraction, folder: &Path, progress: &Progress) -> Result<Exported, GeorefError> {
    let mut all = Exported::default();
    let share = 1.0 / EXPORTERS.len() as f64;
    for (k, exporter) in EXPORTERS.iter().enumerate() {
        let exported = exporter.write(extraction, folder, &progress.stage(k as f64 * share, (k + 1) as f64 * share))?;
        all.files.extend(exported.files);
        all.warnings.extend(exported.warnings);
    }
    Ok(all)
}
