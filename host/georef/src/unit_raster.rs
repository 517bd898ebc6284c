//! A map's unit raster with GDAL: the class raster sieved to a minimum mapping unit,
//! polygonized and simplified within half a pixel ([`UnitRaster::outlines`], the polygons the
//! exporters write), and written as a Cloud Optimized GeoTIFF whose palette is the swatches
//! ([`UnitRaster::write_raster`]).
//!
//! Invariants: the class raster holds 0 for no unit and `1..=n` for the units (0 is never a
//! polygon and is the raster's nodata); pixel coordinates are the scan's (x = column, y = row
//! from the top, the TA1 convention), whatever part of the scan the raster covers; files are
//! written into the folder the caller gives and nowhere else.

use std::path::Path;

use gdal::raster::{Buffer, ColorEntry, ColorTable, PaletteInterpretation};
use gdal::vector::{Geometry, LayerAccess, LayerOptions, OGRFieldType, OGRwkbGeometryType};
use gdal::{Dataset, DriverManager};
use geomap_model::georeference::Revision;
use geomap_model::progress::Progress;

use crate::ffi;
use crate::{GeorefError, Readiness, gdal_error, resolve_crs};

/// The unit raster's file name.
pub const UNIT_RASTER: &str = "units.tif";
/// Polygon outlines are simplified within this many pixels.
const SIMPLIFY_PX: f64 = 0.5;

/// The class raster of a part of the scan, in GDAL's memory.
pub struct UnitRaster {
    dataset: Dataset,
    left: u32,
    top: u32,
    width: usize,
    height: usize,
    threads: usize,
}

/// The unit raster's regions as [`UnitRaster::outlines`] drew them.
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

/// One region's outline, simplified.
#[derive(Debug, Clone)]
pub struct Outline {
    /// Its place among the polygonized outlines, from 0.
    pub index: usize,
    /// Its class (1 or more).
    pub class: usize,
    /// The top-left corner of its first pixel (raster order) in the scan.
    pub first_pixel: (u32, u32),
    /// The POLYGON, as WKB in the scan's pixels.
    pub wkb: Vec<u8>,
}

impl Outlines {
    /// Each region's outline that simplifying left something of, in the order polygonized.
    pub fn into_outlines(self) -> Vec<Outline> {
        self.regions
            .into_iter()
            .zip(self.simplified)
            .filter_map(|(Region { index, class, first_pixel }, wkb)| Some(Outline { index, class, first_pixel, wkb: wkb? }))
            .collect()
    }
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

    /// The unit raster as the Cloud Optimized GeoTIFF [`UNIT_RASTER`] in `folder`: `classes[k - 1]`
    /// (a swatch's colour and its unit's name) as class `k`'s palette entry and category name, 0 as
    /// nodata; georeferenced through `revision` when given. Styles the memory dataset itself (its
    /// polygons are drawn by now), so no second copy is made: write it last, once.
    pub fn write_raster(
        &mut self,
        folder: &Path,
        classes: &[((u8, u8, u8), String)],
        revision: Option<&Revision>,
        progress: &Progress,
    ) -> Result<(), GeorefError> {
        let (left, top) = (f64::from(self.left), f64::from(self.top));
        if let Some(revision) = revision {
            let srs = &resolve_crs(&revision.crs)?;
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
            for (index, ((r, g, b), name)) in classes.iter().enumerate() {
                palette.set_color_entry((index + 1) as u16, &ColorEntry::rgba((*r).into(), (*g).into(), (*b).into(), 255));
                names.push(name.clone());
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let outlines = raster.outlines(&Progress::none()).unwrap().into_outlines();
        let mut regions: Vec<(usize, (u32, u32))> = outlines.iter().map(|outline| (outline.class, outline.first_pixel)).collect();
        regions.sort();
        assert_eq!(regions, [(1, (10, 20)), (2, (11, 21))], "the top-left corners of each region's first pixel, in the scan's pixels; class 0 left out");
        let folder = tempfile::tempdir().unwrap();
        let classes = [((250, 235, 150), "Qal".to_owned()), ((230, 120, 110), "Tb".to_owned())];
        raster.write_raster(folder.path(), &classes, None, &Progress::none()).unwrap();
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
}
