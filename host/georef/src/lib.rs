//! Georeferencing with GDAL and PROJ: bounds, or control points and a
//! transform, become a revision with residuals, a WGS84 box and files GIS
//! tools open (a Cloud Optimized GeoTIFF with overviews; for non-affine
//! transforms also the GCP VRT it was warped from).
//!
//! Invariants:
//! - Coordinates follow GIS order everywhere: x is easting or longitude, y is
//!   northing or latitude, whatever the CRS's authority says
//!   (`AxisMappingStrategy::TraditionalGisOrder`).
//! - Pixel coordinates are GDAL's continuous ones: `col,row = 0,0` is the
//!   top-left corner of the image, pixel centres sit at `+0.5`.
//! - Everything an agent can get wrong is checked before GDAL runs and comes
//!   back as [`GeorefError::InvalidBounds`]; GDAL and PROJ messages go to the
//!   log through the handler `init_gdal` installs before GDAL's first use
//!   (every entry point starts with [`Readiness::check`]), never raw to stderr.
//! - The scan is read through a file descriptor the caller opened inside a map
//!   root (`/proc/self/fd/N`), never by re-resolving its path.
//! - `unsafe` lives only in `ffi` (private: GDAL's C calls and callbacks).
//! - The image is written in two steps, as a GIS expert would: the scan is
//!   read (or warped, on every allowed thread) once into an uncompressed tiled
//!   staging file in the revision's folder, then copied to a COG with
//!   overviews; the staging file is removed when the call ends, whatever the outcome.

mod ffi;
pub mod fit;
pub mod ground;
pub mod unit_raster;

use std::fs;
use std::path::Path;

use gdal::raster::RasterCreationOptions;
use gdal::spatial_ref::{AxisMappingStrategy, CoordTransform, SpatialRef};
use gdal::{Dataset, DriverManager, GeoTransformEx, Metadata};
use schemars::JsonSchema;
use serde::Serialize;

pub use geomap_model::georeference::*;
use geomap_model::progress::{Cancelled, Progress};

use ffi::{GroundControl, Model, Transformer};

/// Points per image edge when the outline is mapped to WGS84 (so curved
/// edges of projected maps are followed, not just the corners).
pub const OUTLINE_POINTS_PER_EDGE: usize = 101;
/// GDAL drivers the georeferencer needs.
pub const REQUIRED_DRIVERS: [&str; 5] = ["GTiff", "COG", "VRT", "PNG", "JPEG"];
/// The uncompressed tiled file a georeference reads or warps the scan into before the COG copy.
const STAGING_NAME: &str = ".staging.tif";

/// GDAL's name for `compression` (a value of the COG driver's `COMPRESS` option).
fn gdal_compression(compression: Compression) -> &'static str {
    match compression {
        Compression::Deflate => "DEFLATE",
        Compression::Jpeg => "JPEG",
        Compression::Webp => "WEBP",
    }
}

/// The COG driver's creation options for `compression`.
fn creation_options(compression: Compression) -> [String; 2] {
    let second = match compression {
        Compression::Deflate => "PREDICTOR=YES",
        Compression::Jpeg | Compression::Webp => "QUALITY=90",
    };
    [format!("COMPRESS={}", gdal_compression(compression)), second.to_owned()]
}

/// GDAL's transformer model for `transform` (`None`: affine, fitted by least squares here).
fn gdal_model(transform: TransformKind) -> Option<Model> {
    match transform {
        TransformKind::Affine => None,
        TransformKind::Polynomial2 => Some(Model::Polynomial(2)),
        TransformKind::Polynomial3 => Some(Model::Polynomial(3)),
        TransformKind::ThinPlateSpline => Some(Model::ThinPlateSpline),
    }
}

/// Why a georeference failed.
#[derive(Debug, thiserror::Error)]
pub enum GeorefError {
    /// The agent's bounds, CRS or control points are wrong; the text says how and what is accepted.
    #[error("{0}")]
    InvalidBounds(String),
    /// GDAL or PROJ lacks something the server needs.
    #[error("missing {what}: {detail}")]
    MissingDependency { what: String, detail: String },
    /// GDAL failed while reading the scan or writing outputs.
    #[error("GDAL could not {action}: {message}")]
    Gdal { action: &'static str, message: String },
    /// The filesystem failed.
    #[error("{action}: {source}")]
    Io { action: &'static str, source: std::io::Error },
    /// The caller's progress receiver said stop (the call was cancelled); nothing was kept.
    #[error("georeferencing was cancelled")]
    Cancelled,
}

impl From<Cancelled> for GeorefError {
    fn from(_: Cancelled) -> GeorefError {
        GeorefError::Cancelled
    }
}

/// Passes a progress receiver's answer on, remembering a stop (GDAL then fails with its own message).
fn told_to_go_on(go_on: bool, stopped: &mut bool) -> bool {
    *stopped |= !go_on;
    go_on
}

/// A GDAL failure while doing `action`, as a [`GeorefError`].
pub fn gdal_error(action: &'static str) -> impl FnOnce(gdal::errors::GdalError) -> GeorefError {
    move |error| GeorefError::Gdal { action, message: error.to_string() }
}

/// Sends GDAL's and PROJ's messages to the log instead of stderr, and stops
/// GDAL from listing the scan's folder for sidecar files. Runs once, on the
/// first use of GDAL (registering GDAL's drivers costs ~30 ms, which server
/// start-up should not pay).
fn init_gdal() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        gdal::config::set_error_handler(|class, number, message| {
            // GDAL reports on the working thread, inside the call's trace scope.
            let trace_id = geomap_model::trace::current_trace_id().map_or_else(|| "-".to_owned(), |id| id.to_string());
            tracing::debug!(target: "gdal", "trace_id={trace_id} GDAL {class:?} {number}: {message}");
        });
        // Best effort: an unknown option is harmless.
        let _ = gdal::config::set_config_option("GDAL_DISABLE_READDIR_ON_OPEN", "EMPTY_DIR");
    });
}

/// What georeferencing needs from the system, as found now.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Readiness {
    /// GDAL's release name.
    pub gdal_version: String,
    /// Whether PROJ's database resolves EPSG codes.
    pub proj_database: bool,
    /// What is missing (GDAL drivers, the PROJ database); empty when ready.
    pub missing: Vec<String>,
}

impl Readiness {
    /// Checks GDAL's drivers and PROJ's database.
    pub fn check() -> Readiness {
        init_gdal();
        let proj_database = SpatialRef::from_epsg(4326).is_ok();
        let mut missing: Vec<String> =
            REQUIRED_DRIVERS.iter().filter(|name| DriverManager::get_driver_by_name(name).is_err()).map(|name| format!("GDAL driver {name}")).collect();
        if !proj_database {
            missing.push("PROJ database (proj.db)".to_owned());
        }
        Readiness { gdal_version: gdal::version_info("RELEASE_NAME"), proj_database, missing }
    }

    /// Checks as [`Readiness::check`] does, and also that GDAL's COG driver can write `compression`.
    pub fn check_for(compression: Compression) -> Readiness {
        let mut readiness = Readiness::check();
        // Read once per process: the COG driver builds this list on its first reading, and two
        // threads reading it first at once may see it half-built (georeferences that fail at a
        // replica's start with `missing_system_dependency` found that).
        static COG_OPTIONS: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        let options =
            COG_OPTIONS.get_or_init(|| DriverManager::get_driver_by_name("COG").ok().and_then(|driver| driver.metadata_item("DMD_CREATIONOPTIONLIST", "")));
        let offered = options.as_deref().is_some_and(|options| options.contains(&format!("<Value>{}</Value>", gdal_compression(compression))));
        if !offered && readiness.missing.iter().all(|what| what != "GDAL driver COG") {
            readiness.missing.push(format!(
                "{} compression in GDAL's COG driver (GEOMAP_GEOREF_COMPRESSION={})",
                gdal_compression(compression),
                compression.name()
            ));
        }
        readiness
    }

    /// `Ok` when nothing is missing, else [`GeorefError::MissingDependency`] naming what is.
    pub fn require(&self) -> Result<(), GeorefError> {
        match self.missing.is_empty() {
            true => Ok(()),
            false => Err(GeorefError::MissingDependency { what: self.missing.join(", "), detail: "GDAL or PROJ was installed without it".to_owned() }),
        }
    }
}

/// The scan to georeference: an open file and where it really is.
#[derive(Debug)]
pub struct Scan<'a> {
    /// The file, opened inside a map root.
    pub file: &'a fs::File,
    /// Its real path (recorded in the VRT so GIS tools find the scan).
    pub path: &'a Path,
    /// Width in pixels.
    pub width: u64,
    /// Height in pixels.
    pub height: u64,
}

/// The image's width and height in pixels.
#[derive(Debug, Clone, Copy)]
struct Size {
    width: u64,
    height: u64,
}

/// A request checked and fitted: the revision without its files, and what writing them needs.
struct Placed {
    revision: Revision,
    fitted: PixelToCrs,
    srs: SpatialRef,
}

/// Checks `request` against the scan, fits it, and writes the artifacts into
/// `output_dir` as `writing` says, reporting progress as it writes.
pub fn georeference(
    scan: &Scan<'_>,
    request: &Request,
    revision_id: &str,
    output_dir: &Path,
    writing: &Writing,
    progress: &Progress,
) -> Result<Revision, GeorefError> {
    progress.fraction(0.0, "checking and fitting")?;
    Readiness::check_for(writing.compression).require()?;
    let Placed { mut revision, fitted, srs } = place(Size { width: scan.width, height: scan.height }, request, revision_id)?;
    fs::create_dir_all(output_dir).map_err(|source| GeorefError::Io { action: "create the revision folder", source })?;
    revision.artifacts = write_artifacts(scan, &fitted, &request.placement, &srs, output_dir, writing, progress)?;
    revision.compression = Some(writing.compression);
    progress.fraction(1.0, "done")?;
    Ok(revision)
}

/// Checks and fits `request` for a `width`×`height` image that has no pixels
/// here (a map bundle): the revision, with no files.
pub fn describe(width: u64, height: u64, request: &Request, revision_id: &str) -> Result<Revision, GeorefError> {
    Readiness::check().require()?;
    Ok(place(Size { width, height }, request, revision_id)?.revision)
}

/// Whether `crs` is geographic (degrees) rather than projected, as PROJ resolves it.
pub fn is_geographic(crs: &str) -> Result<bool, GeorefError> {
    Readiness::check().require()?;
    Ok(resolve_crs(crs)?.is_geographic())
}

/// For each of `points`, how far in pixels an affine fit of the others (CRS to pixel, by least
/// squares) puts it from its own pixel; `None` where the others do not fix an affine (fewer than
/// three, or all on one line).
pub fn leave_one_out_px(points: &[ControlPoint]) -> Vec<Option<f64>> {
    (0..points.len())
        .map(|left_out| {
            let others: Vec<&ControlPoint> = points.iter().enumerate().filter(|(i, _)| *i != left_out).map(|(_, p)| p).collect();
            let fitted = crs_to_pixel(&others)?;
            let point = &points[left_out];
            let (col, row) = fitted(point.x.0, point.y.0);
            Some((col - point.col.0).hypot(row - point.row.0))
        })
        .collect()
}

/// The least-squares affine from CRS (x, y) to pixel (col, row) through `points`, if they fix one.
fn crs_to_pixel(points: &[&ControlPoint]) -> Option<impl Fn(f64, f64) -> (f64, f64)> {
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = points.iter().fold((0.0, 0.0), |(x, y), p| (x + p.x.0 / n, y + p.y.0 / n));
    // Normal equations of value = a + b·dx + c·dy, with dx and dy taken from the mean (well conditioned in degrees and in metres alike).
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for p in points {
        let (dx, dy) = (p.x.0 - mx, p.y.0 - my);
        (sxx, sxy, syy) = (sxx + dx * dx, sxy + dx * dy, syy + dy * dy);
    }
    let det = sxx * syy - sxy * sxy;
    if det.abs() <= 1e-12 * (sxx * syy).max(f64::MIN_POSITIVE) {
        return None;
    }
    let solve = |value: &dyn Fn(&ControlPoint) -> f64| {
        let (mut sv, mut sxv, mut syv) = (0.0, 0.0, 0.0);
        for p in points {
            let (dx, dy, v) = (p.x.0 - mx, p.y.0 - my, value(p));
            (sv, sxv, syv) = (sv + v, sxv + dx * v, syv + dy * v);
        }
        (sv / n, (syy * sxv - sxy * syv) / det, (sxx * syv - sxy * sxv) / det)
    };
    let (col, row) = (solve(&|p| p.col.0), solve(&|p| p.row.0));
    Some(move |x: f64, y: f64| {
        let (dx, dy) = (x - mx, y - my);
        (col.0 + col.1 * dx + col.2 * dy, row.0 + row.1 * dx + row.2 * dy)
    })
}

/// `points` (x, y: easting/longitude, northing/latitude) taken from CRS `from` to CRS `to` through PROJ.
pub fn reproject(from: &str, to: &str, points: &[(f64, f64)]) -> Result<Vec<(f64, f64)>, GeorefError> {
    Readiness::check().require()?;
    let (source, target) = (resolve_crs(from)?, resolve_crs(to)?);
    let failed = |detail: String| GeorefError::InvalidBounds(format!("PROJ cannot take points from {from} to {to} ({detail})."));
    let transform = CoordTransform::new(&source, &target).map_err(|error| failed(error.to_string()))?;
    let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
    transform.transform_coords(&mut xs, &mut ys, &mut []).map_err(|error| failed(error.to_string()))?;
    Ok(xs.into_iter().zip(ys).collect())
}

/// The scan's pixel position (column, row) of WGS84 `lon`, `lat` under `revision`: through PROJ
/// to its CRS, then through the inverse of its fitted transform.
pub fn pixel_at(revision: &Revision, lon: f64, lat: f64) -> Result<(f64, f64), GeorefError> {
    Readiness::check().require()?;
    let srs = resolve_crs(&revision.crs)?;
    let mut wgs84 = SpatialRef::from_epsg(4326)
        .map_err(|error| GeorefError::MissingDependency { what: "PROJ database (proj.db)".to_owned(), detail: error.to_string() })?;
    wgs84.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    let outside = |detail: String| {
        GeorefError::InvalidBounds(format!("The point ({lon}, {lat}) does not map into the map's CRS ({detail}). Give a point inside the map's wgs84_bounds."))
    };
    let to_crs = CoordTransform::new(&wgs84, &srs).map_err(|error| outside(error.to_string()))?;
    let (mut xs, mut ys) = (vec![lon], vec![lat]);
    to_crs.transform_coords(&mut xs, &mut ys, &mut []).map_err(|error| outside(error.to_string()))?;
    let geotransform = match revision.geotransform {
        Some(geotransform) => geotransform,
        None => {
            let gcps: Vec<GroundControl> =
                revision.control_points.iter().map(|p| GroundControl { pixel: p.col.0, line: p.row.0, x: p.x.0, y: p.y.0 }).collect();
            match fit(&gcps, revision.transform)?.0 {
                Mapping::Warp(transformer, _) if transformer.inverse(&mut xs, &mut ys) => return Ok((xs[0], ys[0])),
                Mapping::Warp(..) => return Err(outside("the fitted transform has no inverse there".to_owned())),
                Mapping::Affine(geotransform) => geotransform,
            }
        }
    };
    let ([x0, a, b, y0, c, d], x, y) = (geotransform, xs[0], ys[0]);
    let det = a * d - b * c;
    Ok(((d * (x - x0) - b * (y - y0)) / det, (a * (y - y0) - c * (x - x0)) / det))
}

/// Checks and fits `request`; the caller has checked [`Readiness`].
fn place(scan: Size, request: &Request, revision_id: &str) -> Result<Placed, GeorefError> {
    let srs = resolve_crs(&request.crs)?;
    let crs_name = srs.name().unwrap_or_else(|| request.crs.clone());
    let full_image = PixelRegion { col: 0, row: 0, width: scan.width, height: scan.height };
    let (fitted, pixel_region) = match &request.placement {
        Placement::Bounds { bounds, region } => {
            let region = region.unwrap_or(full_image);
            check_bounds(bounds, &region, scan, srs.is_geographic())?;
            (PixelToCrs(Mapping::Affine(bounds_geotransform(bounds, &region))), region)
        }
        Placement::ControlPoints { points, transform, region } => {
            let gcps = check_control_points(points, *transform, scan, srs.is_geographic())?;
            (fit(&gcps, *transform)?, region.unwrap_or(full_image))
        }
    };

    let (control_points, residuals, rmse) = match &request.placement {
        Placement::ControlPoints { points, .. } => {
            let residuals = residuals(&fitted, points)?;
            let rmse = root_mean_square(&residuals);
            (points.clone(), residuals, Some(rmse))
        }
        Placement::Bounds { .. } => (Vec::new(), Vec::new(), None),
    };
    let mut warnings = fit_warnings(&request.placement, &residuals);
    let wgs84_bounds = outline_on_wgs84(&fitted, &pixel_region, &srs)?;
    if srs.is_geographic() && (wgs84_bounds.east - wgs84_bounds.west) > 180.0 {
        warnings.push("The map spans more than 180° of longitude; if it crosses the antimeridian, wgs84_bounds covers the long way round.".to_owned());
    }
    let revision = Revision {
        revision_id: revision_id.to_owned(),
        created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        crs: request.crs.clone(),
        crs_name,
        transform: match &request.placement {
            Placement::Bounds { .. } => TransformKind::Affine,
            Placement::ControlPoints { transform, .. } => *transform,
        },
        geotransform: match &fitted.0 {
            Mapping::Affine(gt) => Some(*gt),
            Mapping::Warp(..) => None,
        },
        bounds: match &request.placement {
            Placement::Bounds { bounds, .. } => Some(*bounds),
            Placement::ControlPoints { .. } => None,
        },
        pixel_region,
        control_points,
        residuals,
        rmse,
        wgs84_bounds,
        artifacts: Vec::new(),
        compression: None,
        warnings,
        source: None,
    };
    Ok(Placed { revision, fitted, srs })
}

/// The CRS with GIS axis order, or `InvalidBounds` naming what PROJ said.
pub fn resolve_crs(crs: &str) -> Result<SpatialRef, GeorefError> {
    let trimmed = crs.trim();
    if trimmed.is_empty() {
        return Err(GeorefError::InvalidBounds(
            "crs is empty. Give a CRS GDAL/PROJ accepts: an EPSG code (EPSG:4326, EPSG:4267, EPSG:32633), WKT or a PROJ string.".to_owned(),
        ));
    }
    let mut srs = SpatialRef::from_definition(trimmed).map_err(|error| {
        GeorefError::InvalidBounds(format!(
            "PROJ cannot resolve the CRS {trimmed:?} ({error}). Give a CRS GDAL/PROJ accepts: an EPSG code (EPSG:4326, EPSG:4267, EPSG:32633), WKT or a PROJ string."
        ))
    })?;
    srs.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    Ok(srs)
}

fn not_finite(what: &str) -> GeorefError {
    GeorefError::InvalidBounds(format!("{what} is not a finite number (JSON clients send NaN and infinity as null). Give finite numbers."))
}

fn check_bounds(bounds: &Bounds, region: &PixelRegion, scan: Size, geographic: bool) -> Result<(), GeorefError> {
    let fields = [("bounds.west", bounds.west.0), ("bounds.south", bounds.south.0), ("bounds.east", bounds.east.0), ("bounds.north", bounds.north.0)];
    if let Some((name, _)) = fields.iter().find(|(_, v)| !v.is_finite()) {
        return Err(not_finite(name));
    }
    let (west, south, east, north) = (bounds.west.0, bounds.south.0, bounds.east.0, bounds.north.0);
    if west >= east {
        return Err(GeorefError::InvalidBounds(format!("bounds.west ({west}) must be less than bounds.east ({east}). Give west < east in the CRS's x units.")));
    }
    if south >= north {
        return Err(GeorefError::InvalidBounds(format!(
            "bounds.south ({south}) must be less than bounds.north ({north}). Give south < north in the CRS's y units."
        )));
    }
    if geographic {
        check_geographic("bounds", west, south)?;
        check_geographic("bounds", east, north)?;
    }
    if region.width == 0 || region.height == 0 {
        return Err(GeorefError::InvalidBounds("pixel_region.width and pixel_region.height must be at least 1.".to_owned()));
    }
    let inside = region.col.checked_add(region.width).is_some_and(|right| right <= scan.width)
        && region.row.checked_add(region.height).is_some_and(|bottom| bottom <= scan.height);
    if !inside {
        return Err(GeorefError::InvalidBounds(format!(
            "pixel_region (col {}, row {}, width {}, height {}) reaches outside the {}×{} image. Give a region inside it.",
            region.col, region.row, region.width, region.height, scan.width, scan.height
        )));
    }
    Ok(())
}

fn check_geographic(what: &str, longitude: f64, latitude: f64) -> Result<(), GeorefError> {
    if !(-90.0..=90.0).contains(&latitude) {
        return Err(GeorefError::InvalidBounds(format!(
            "{what}: latitude {latitude} is outside -90..90 in a geographic CRS. Give latitudes in -90..90 (y/south/north) and longitudes in -180..180 (x/west/east)."
        )));
    }
    if !(-180.0..=180.0).contains(&longitude) {
        return Err(GeorefError::InvalidBounds(format!(
            "{what}: longitude {longitude} is outside -180..180 in a geographic CRS. Give longitudes in -180..180 (x/west/east)."
        )));
    }
    Ok(())
}

fn check_control_points(points: &[ControlPoint], transform: TransformKind, scan: Size, geographic: bool) -> Result<Vec<GroundControl>, GeorefError> {
    let needed = transform.minimum_points();
    if points.len() < needed {
        return Err(GeorefError::InvalidBounds(format!(
            "{} control points given; transform {} needs at least {needed} (affine 3, polynomial2 6, polynomial3 10, thin_plate_spline 3). Add points or choose a simpler transform.",
            points.len(),
            transform.name()
        )));
    }
    let mut gcps = Vec::with_capacity(points.len());
    for (index, point) in points.iter().enumerate() {
        for (name, value) in [("col", point.col.0), ("row", point.row.0), ("x", point.x.0), ("y", point.y.0)] {
            if !value.is_finite() {
                return Err(not_finite(&format!("control_points[{index}].{name}")));
            }
        }
        let (col, row) = (point.col.0, point.row.0);
        if col < 0.0 || row < 0.0 || col > scan.width as f64 || row > scan.height as f64 {
            return Err(GeorefError::InvalidBounds(format!(
                "control_points[{index}] at pixel ({col}, {row}) is outside the {}×{} image (col 0..{}, row 0..{}). Give pixels inside the scan.",
                scan.width, scan.height, scan.width, scan.height
            )));
        }
        if geographic {
            check_geographic(&format!("control_points[{index}]"), point.x.0, point.y.0)?;
        }
        gcps.push(GroundControl { pixel: col, line: row, x: point.x.0, y: point.y.0 });
    }
    for (i, a) in gcps.iter().enumerate() {
        for (j, b) in gcps.iter().enumerate().skip(i + 1) {
            if (a.pixel, a.line) == (b.pixel, b.line) || (a.x, a.y) == (b.x, b.y) {
                return Err(GeorefError::InvalidBounds(format!(
                    "control_points[{i}] and control_points[{j}] are duplicates (same pixel or same coordinates). Give distinct points."
                )));
            }
        }
    }
    let pixel_spread = spread(gcps.iter().map(|g| (g.pixel, g.line)));
    let ground_spread = spread(gcps.iter().map(|g| (g.x, g.y)));
    if pixel_spread < COLLINEAR || ground_spread < COLLINEAR {
        return Err(GeorefError::InvalidBounds(
            "The control points lie on one line, so they fix nothing across it. Give points spread over the map, not all along one edge or line.".to_owned(),
        ));
    }
    Ok(gcps)
}

/// Below this [`spread`], points count as collinear; below [`WEAK_SPREAD`], as nearly so.
const COLLINEAR: f64 = 1e-10;
const WEAK_SPREAD: f64 = 1e-3;

/// How two-dimensional a point set is: the ratio of the smaller to the larger
/// eigenvalue of its covariance (0 for collinear points, 1 for a round cloud).
fn spread(points: impl Iterator<Item = (f64, f64)> + Clone) -> f64 {
    let n = points.clone().count() as f64;
    let (mx, my) = points.clone().fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x / n, sy + y / n));
    let (sxx, syy, sxy) = points.fold((0.0, 0.0, 0.0), |(a, b, c), (x, y)| {
        let (dx, dy) = (x - mx, y - my);
        (a + dx * dx, b + dy * dy, c + dx * dy)
    });
    let trace = sxx + syy;
    if trace == 0.0 {
        return 0.0;
    }
    let root = ((sxx - syy).powi(2) + 4.0 * sxy * sxy).sqrt();
    ((trace - root) / 2.0).max(0.0) / ((trace + root) / 2.0)
}

/// Before a transform that is not affine, no edge of a placed line or polygon is longer than
/// this many pixels.
pub const DENSIFY_PX: f64 = 8.0;

/// A pixel → CRS mapping: the transform a georeference fits, and the one every feature is placed
/// on the ground through ([`PixelToCrs::of`] a stored revision).
pub struct PixelToCrs(Mapping);

/// How a [`PixelToCrs`] maps.
enum Mapping {
    /// A geotransform.
    Affine([f64; 6]),
    /// GDAL's transformer fitted to the control points.
    Warp(Transformer, TransformKind),
}

impl PixelToCrs {
    /// `revision`'s transform: its geotransform, else fitted again to its control points.
    pub fn of(revision: &Revision) -> Result<PixelToCrs, GeorefError> {
        if let Some(geotransform) = revision.geotransform {
            return Ok(PixelToCrs(Mapping::Affine(geotransform)));
        }
        let gcps: Vec<GroundControl> = revision.control_points.iter().map(|p| GroundControl { pixel: p.col.0, line: p.row.0, x: p.x.0, y: p.y.0 }).collect();
        fit(&gcps, revision.transform).map_err(|_| GeorefError::InvalidBounds("The revision's control points no longer fit a transform.".to_owned()))
    }

    /// Whether it is affine (straight lines stay straight).
    pub fn is_affine(&self) -> bool {
        matches!(self.0, Mapping::Affine(_))
    }

    /// Maps pixel positions to the CRS, in place; `false` when a point lies where the transform
    /// does not reach.
    pub fn apply(&self, xs: &mut [f64], ys: &mut [f64]) -> bool {
        match &self.0 {
            Mapping::Affine(gt) => {
                for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                    (*x, *y) = gt.apply(*x, *y);
                }
                true
            }
            Mapping::Warp(transformer, _) => transformer.forward(xs, ys),
        }
    }

    /// Maps pixel positions to the CRS, in place, for a fit just made: an error says how to fit better.
    fn to_crs(&self, xs: &mut [f64], ys: &mut [f64]) -> Result<(), GeorefError> {
        match self.apply(xs, ys) {
            true => Ok(()),
            false => Err(GeorefError::InvalidBounds(
                "The fitted transform cannot map every point (it folds over itself). Spread the control points more evenly or use a lower-order transform."
                    .to_owned(),
            )),
        }
    }

    /// Feature points (the scan's pixels) placed in the CRS, in place.
    pub fn place_points(&self, xs: &mut [f64], ys: &mut [f64]) -> Result<(), GeorefError> {
        match self.apply(xs, ys) {
            true => Ok(()),
            false => Err(GeorefError::InvalidBounds("A point lies where the revision's transform does not reach.".to_owned())),
        }
    }

    /// A line's vertices placed in the CRS (densified first to [`DENSIFY_PX`] when not affine).
    pub fn place_line(&self, points: &[(f64, f64)]) -> Result<Vec<(f64, f64)>, GeorefError> {
        let dense = if self.is_affine() { points.to_vec() } else { densified(points) };
        let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = dense.into_iter().unzip();
        if !self.apply(&mut xs, &mut ys) {
            return Err(GeorefError::InvalidBounds("A line's vertex lies where the revision's transform does not reach.".to_owned()));
        }
        Ok(xs.into_iter().zip(ys).collect())
    }

    /// A POLYGON placed in the CRS (its edges densified first to [`DENSIFY_PX`] when not affine).
    pub fn place_polygon(&self, polygon: &gdal::vector::Geometry) -> Result<gdal::vector::Geometry, GeorefError> {
        use gdal::vector::{Geometry, OGRwkbGeometryType};
        let mut dense = polygon.clone();
        if !self.is_affine() {
            ffi::segmentize(&mut dense, DENSIFY_PX);
        }
        let mut placed = Geometry::empty(OGRwkbGeometryType::wkbPolygon).map_err(gdal_error("build a polygon"))?;
        let mut points = Vec::new();
        for ring in 0..dense.geometry_count() {
            points.clear();
            dense.get_geometry(ring).get_points(&mut points);
            let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = points.iter().map(|&(x, y, _)| (x, y)).unzip();
            if !self.apply(&mut xs, &mut ys) {
                return Err(GeorefError::InvalidBounds("A polygon's vertex lies where the revision's transform does not reach.".to_owned()));
            }
            let mut out = Geometry::empty(OGRwkbGeometryType::wkbLinearRing).map_err(gdal_error("build a polygon"))?;
            xs.into_iter().zip(ys).for_each(|point| out.add_point_2d(point));
            placed.add_geometry(out).map_err(gdal_error("build a polygon"))?;
        }
        Ok(placed)
    }
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

fn bounds_geotransform(bounds: &Bounds, region: &PixelRegion) -> [f64; 6] {
    let dx = (bounds.east.0 - bounds.west.0) / region.width as f64;
    let dy = (bounds.north.0 - bounds.south.0) / region.height as f64;
    [bounds.west.0 - region.col as f64 * dx, dx, 0.0, bounds.north.0 + region.row as f64 * dy, 0.0, -dy]
}

fn fit(gcps: &[GroundControl], transform: TransformKind) -> Result<PixelToCrs, GeorefError> {
    let degenerate = || {
        GeorefError::InvalidBounds(format!(
            "The control points are too degenerate to fit a {} transform (nearly collinear, or clustered). Spread them over the map or choose a simpler transform.",
            transform.name()
        ))
    };
    match gdal_model(transform) {
        None => ffi::gcps_to_geotransform(gcps).map(|gt| PixelToCrs(Mapping::Affine(gt))).ok_or_else(degenerate),
        Some(model) => Transformer::fit(model, gcps).map(|t| PixelToCrs(Mapping::Warp(t, transform))).ok_or_else(degenerate),
    }
}

/// Residuals in CRS units (fitted minus given), and in pixels through the
/// inverse of the transform's local Jacobian at each point (exact for affine,
/// first-order otherwise), so a zero CRS residual is a zero pixel residual.
fn residuals(fitted: &PixelToCrs, points: &[ControlPoint]) -> Result<Vec<Residual>, GeorefError> {
    const STEP: f64 = 0.5;
    // Per point: the point itself, then ±STEP along col and along row.
    let offsets = [(0.0, 0.0), (STEP, 0.0), (-STEP, 0.0), (0.0, STEP), (0.0, -STEP)];
    let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = points.iter().flat_map(|p| offsets.iter().map(move |(dc, dr)| (p.col.0 + dc, p.row.0 + dr))).unzip();
    fitted.to_crs(&mut xs, &mut ys)?;
    Ok(points
        .iter()
        .enumerate()
        .map(|(index, point)| {
            let at = |k: usize| (xs[5 * index + k], ys[5 * index + k]);
            let (x, y) = at(0);
            let (dx, dy) = (x - point.x.0, y - point.y.0);
            let ((xc1, yc1), (xc0, yc0), (xr1, yr1), (xr0, yr0)) = (at(1), at(2), at(3), at(4));
            let (a, b) = ((xc1 - xc0) / (2.0 * STEP), (xr1 - xr0) / (2.0 * STEP));
            let (c, d) = ((yc1 - yc0) / (2.0 * STEP), (yr1 - yr0) / (2.0 * STEP));
            let det = a * d - b * c;
            let (dcol, drow) = if det == 0.0 { (f64::NAN, f64::NAN) } else { ((d * dx - b * dy) / det, (a * dy - c * dx) / det) };
            Residual { index, dx, dy, crs_units: dx.hypot(dy), dcol, drow, pixels: dcol.hypot(drow) }
        })
        .collect())
}

fn root_mean_square(residuals: &[Residual]) -> Rmse {
    let n = residuals.len() as f64;
    let mean = |f: fn(&Residual) -> f64| (residuals.iter().map(|r| f(r).powi(2)).sum::<f64>() / n).sqrt();
    Rmse { pixels: mean(|r| r.pixels), crs_units: mean(|r| r.crs_units) }
}

fn fit_warnings(placement: &Placement, residuals: &[Residual]) -> Vec<String> {
    let Placement::ControlPoints { points, transform, .. } = placement else { return Vec::new() };
    let mut warnings = Vec::new();
    if *transform == TransformKind::ThinPlateSpline {
        warnings.push("A thin-plate spline passes through every control point, so its residuals are zero and say nothing about accuracy; check it against points you left out.".to_owned());
    } else if points.len() == transform.minimum_points() {
        warnings.push(format!(
            "Exactly {} control points fit a {} transform with nothing left over, so the residuals are zero by construction; add points to judge the fit.",
            points.len(),
            transform.name()
        ));
    }
    let pixel_spread = spread(points.iter().map(|p| (p.col.0, p.row.0)));
    if pixel_spread < WEAK_SPREAD {
        warnings.push(format!(
            "The control points are nearly collinear (spread {pixel_spread:.1e}); the fit is poorly constrained across that line. Add points away from it."
        ));
    }
    if residuals.len() > transform.minimum_points() {
        for residual in residuals {
            let others: Vec<f64> = residuals.iter().filter(|r| r.index != residual.index).map(|r| r.pixels).collect();
            let others_rmse = (others.iter().map(|p| p * p).sum::<f64>() / others.len() as f64).sqrt();
            if residual.pixels > (3.0 * others_rmse).max(1.0) {
                warnings.push(format!(
                    "control_points[{}] is off by {:.2} pixels, far above the others (RMS {:.2}); check its coordinates.",
                    residual.index, residual.pixels, others_rmse
                ));
            }
        }
    }
    warnings
}

/// The region's outline, densified along each edge, mapped to the CRS, then to WGS84.
fn outline_on_wgs84(fitted: &PixelToCrs, region: &PixelRegion, srs: &SpatialRef) -> Result<Wgs84Bounds, GeorefError> {
    let (c0, r0) = (region.col as f64, region.row as f64);
    let (c1, r1) = (c0 + region.width as f64, r0 + region.height as f64);
    let steps = (OUTLINE_POINTS_PER_EDGE - 1) as f64;
    let mut xs = Vec::with_capacity(4 * OUTLINE_POINTS_PER_EDGE);
    let mut ys = Vec::with_capacity(4 * OUTLINE_POINTS_PER_EDGE);
    for i in 0..OUTLINE_POINTS_PER_EDGE {
        let t = i as f64 / steps;
        for (x, y) in [(c0 + t * (c1 - c0), r0), (c1, r0 + t * (r1 - r0)), (c1 - t * (c1 - c0), r1), (c0, r1 - t * (r1 - r0))] {
            xs.push(x);
            ys.push(y);
        }
    }
    fitted.to_crs(&mut xs, &mut ys)?;
    let mut wgs84 = SpatialRef::from_epsg(4326)
        .map_err(|error| GeorefError::MissingDependency { what: "PROJ database (proj.db)".to_owned(), detail: error.to_string() })?;
    wgs84.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    let to_wgs84 = CoordTransform::new(srs, &wgs84).map_err(|error| {
        GeorefError::InvalidBounds(format!(
            "PROJ has no transformation from this CRS to WGS84 ({error}). Give a CRS tied to the Earth (not an engineering or local CRS)."
        ))
    })?;
    to_wgs84.transform_coords(&mut xs, &mut ys, &mut []).map_err(|error| {
        GeorefError::InvalidBounds(format!(
            "The map's outline does not map to WGS84 ({error}): the coordinates are probably outside the CRS's area of use. Check the CRS and the numbers."
        ))
    })?;
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Ok(Wgs84Bounds { west: min(&xs), south: min(&ys), east: max(&xs), north: max(&ys) })
}

/// Creation options for the staging file: tiled, uncompressed, RGB photometric for `bands` bytes per pixel.
fn staging_options(bands: u64, byte: bool) -> Vec<String> {
    let mut options = vec!["TILED=YES".to_owned(), "BIGTIFF=IF_SAFER".to_owned()];
    if byte && (bands == 3 || bands == 4) {
        options.push("PHOTOMETRIC=RGB".to_owned());
        if bands == 4 {
            options.push("ALPHA=YES".to_owned());
        }
    }
    options
}

/// The bands the georeferenced image will have, and whether they are bytes (a palette becomes RGB or
/// RGBA, as `expand` from [`palette_expansion`] says).
fn output_bands(source: &Dataset, expand: Option<&str>) -> (u64, bool) {
    match expand {
        Some("rgba") => (4, true),
        Some(_) => (3, true),
        None => (source.raster_count() as u64, source.rasterband(1).is_ok_and(|band| band.band_type() == gdal::raster::GdalDataType::UInt8)),
    }
}

/// The COG's creation options: compression, threads, and BigTIFF when the file could pass 4 GB.
fn cog_options(writing: &Writing) -> Vec<String> {
    let mut options = creation_options(writing.compression).to_vec();
    options.extend([format!("NUM_THREADS={}", writing.threads), "BIGTIFF=IF_SAFER".to_owned()]);
    options
}

/// Removes the staging file when the call ends, whether it succeeded, failed or was cancelled.
struct Staging(std::path::PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0); // absent when GDAL never created it
    }
}

/// GDAL's worker threads for this thread's calls (overviews read `GDAL_NUM_THREADS`) until dropped.
struct GdalThreads;

impl GdalThreads {
    fn set(threads: usize) -> GdalThreads {
        let _ = gdal::config::set_thread_local_config_option("GDAL_NUM_THREADS", &threads.to_string()); // a plain number is always accepted
        GdalThreads
    }
}

impl Drop for GdalThreads {
    fn drop(&mut self) {
        let _ = gdal::config::clear_thread_local_config_option("GDAL_NUM_THREADS");
    }
}

/// Writes the georeferenced image (and for control points the GCP VRT) into `dir`: the scan is read
/// or warped into a staging file, then copied to a Cloud Optimized GeoTIFF with overviews.
fn write_artifacts(
    scan: &Scan<'_>,
    fitted: &PixelToCrs,
    placement: &Placement,
    srs: &SpatialRef,
    dir: &Path,
    writing: &Writing,
    progress: &Progress,
) -> Result<Vec<Artifact>, GeorefError> {
    use std::os::fd::AsRawFd;
    let mut source = Dataset::open(format!("/proc/self/fd/{}", scan.file.as_raw_fd())).map_err(gdal_error("open the scan"))?;
    // VRTs record the source by its description: make it the scan's real path.
    source.set_description(&scan.path.to_string_lossy()).map_err(gdal_error("name the scan"))?;
    let expand = palette_expansion(&source);
    let (bands, byte) = output_bands(&source, expand);
    let memory = writing.memory_for(scan.width, scan.height, bands);
    ffi::raise_block_cache(memory);
    let _threads = GdalThreads::set(writing.threads);
    let staging = Staging(dir.join(STAGING_NAME));
    let mut staging_arguments: Vec<String> = staging_options(bands, byte).into_iter().flat_map(|option| ["-co".to_owned(), option]).collect();
    staging_arguments.splice(0..0, ["-of".to_owned(), "GTiff".to_owned()]);
    if let Some(expand) = expand {
        // Resampling or compressing palette indices would mix unrelated colours: write RGB(A) instead.
        staging_arguments.extend(["-expand".to_owned(), expand.to_owned()]);
    }
    let mut stopped = false;
    let (staged, name, copy_from, mut written) = match (&fitted.0, placement) {
        (Mapping::Affine(gt), _) => {
            let vrt = DriverManager::get_driver_by_name("VRT").map_err(gdal_error("load the VRT driver"))?;
            let mut virtual_copy = source.create_copy(&vrt, "", &RasterCreationOptions::new()).map_err(gdal_error("wrap the scan"))?;
            if !virtual_copy.gcps().is_empty() {
                virtual_copy.set_gcps(Vec::new(), srs).map_err(gdal_error("drop the scan's own GCPs"))?;
            }
            virtual_copy.set_geo_transform(gt).map_err(gdal_error("set the geotransform"))?;
            virtual_copy.set_spatial_ref(srs).map_err(gdal_error("set the CRS"))?;
            let arguments: Vec<&str> = staging_arguments.iter().map(String::as_str).collect();
            let staged = ffi::translate(&virtual_copy, &staging.0, &arguments, &mut |done| {
                told_to_go_on(progress.fraction(0.05 + 0.30 * done, "reading the scan").is_ok(), &mut stopped)
            })
            .map_err(|message| if stopped { GeorefError::Cancelled } else { GeorefError::Gdal { action: "read the scan", message } })?;
            (staged, "georeferenced.tif", 0.35, Vec::new())
        }
        (Mapping::Warp(_, transform), Placement::ControlPoints { points, .. }) => {
            // `gdal_translate -gcp` (as on the command line) drops any geotransform
            // the scan already has, so the warp follows the control points alone.
            let gcp_path = dir.join("gcps.vrt");
            let crs_wkt = srs.to_wkt().map_err(gdal_error("describe the CRS"))?;
            let mut arguments = vec!["-of".to_owned(), "VRT".to_owned(), "-a_srs".to_owned(), crs_wkt];
            if let Some(expand) = expand {
                arguments.extend(["-expand".to_owned(), expand.to_owned()]);
            }
            for point in points {
                arguments.push("-gcp".to_owned());
                arguments.extend([point.col.0, point.row.0, point.x.0, point.y.0].map(|v| format!("{v:?}")));
            }
            let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
            let with_gcps =
                ffi::translate(&source, &gcp_path, &arguments, &mut |_| true).map_err(|message| GeorefError::Gdal { action: "write the GCP VRT", message })?;
            let arguments = warp_arguments(*transform, writing, memory, &staging_options(bands, byte));
            let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
            let staged = ffi::warp(&with_gcps, &staging.0, &arguments, &mut |done| {
                told_to_go_on(progress.fraction(0.05 + 0.50 * done, "warping the scan").is_ok(), &mut stopped)
            })
            .map_err(|message| if stopped { GeorefError::Cancelled } else { GeorefError::Gdal { action: "warp the scan", message } })?;
            (staged, "warped.tif", 0.55, vec![gcp_path])
        }
        (Mapping::Warp(..), Placement::Bounds { .. }) => unreachable!("bounds always fit an affine transform"),
    };
    // The warp's buffers are freed by now, but glibc would keep them beside what the COG copy takes.
    ffi::release_free_memory();
    let cog = DriverManager::get_driver_by_name("COG").map_err(gdal_error("load the COG driver"))?;
    let options = cog_options(writing);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let output = dir.join(name);
    ffi::create_copy(&cog, &staged, &output, &options, &mut |done| {
        told_to_go_on(progress.fraction(copy_from + (0.99 - copy_from) * done, "writing the Cloud Optimized GeoTIFF").is_ok(), &mut stopped)
    })
    .map_err(|message| if stopped { GeorefError::Cancelled } else { GeorefError::Gdal { action: "write the Cloud Optimized GeoTIFF", message } })?;
    drop(staged);
    drop(staging);
    ffi::release_free_memory();
    written.push(output);
    written
        .into_iter()
        .map(|path| {
            let bytes = fs::metadata(&path).map_err(|source| GeorefError::Io { action: "measure an output", source })?.len();
            let name = path.file_name().expect("outputs have names").to_string_lossy().into_owned();
            let media_type = if name.ends_with(".vrt") { "application/xml" } else { "image/tiff" };
            Ok(Artifact { name, media_type: media_type.to_owned(), bytes, resource_uri: None, path: None })
        })
        .collect()
}

/// `rgb` or `rgba` (when any entry is transparent) for a paletted scan, else `None`.
fn palette_expansion(dataset: &Dataset) -> Option<&'static str> {
    let band = dataset.rasterband(1).ok()?;
    let table = band.color_table()?;
    let transparent = (0..table.entry_count()).any(|i| table.entry_as_rgb(i).is_some_and(|entry| entry.a < 255));
    Some(if transparent { "rgba" } else { "rgb" })
}

/// The `gdalwarp` arguments for a GCP transform into the staging file: bilinear, on `writing.threads`
/// threads, with `memory` bytes of warp buffers; the benchmark runs the CLI with the same ones.
fn warp_arguments(transform: TransformKind, writing: &Writing, memory: u64, creation: &[String]) -> Vec<String> {
    let mut arguments: Vec<String> = vec!["-of".into(), "GTiff".into(), "-r".into(), "bilinear".into()];
    match transform {
        TransformKind::Polynomial2 => arguments.extend(["-order".into(), "2".into()]),
        TransformKind::Polynomial3 => arguments.extend(["-order".into(), "3".into()]),
        TransformKind::ThinPlateSpline => arguments.push("-tps".into()),
        TransformKind::Affine => arguments.extend(["-order".into(), "1".into()]),
    }
    if writing.threads > 1 {
        arguments.push("-multi".into());
    }
    arguments.extend(["-wo".into(), format!("NUM_THREADS={}", writing.threads), "-wm".into(), format!("{}MB", memory.div_ceil(1 << 20))]);
    for option in creation {
        arguments.extend(["-co".into(), option.clone()]);
    }
    arguments
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaving_one_out_finds_the_point_the_others_put_elsewhere() {
        let point = |col: f64, row: f64| ControlPoint {
            col: Coordinate(col),
            row: Coordinate(row),
            x: Coordinate(-114.0 + col / 2000.0),
            y: Coordinate(36.0 - row / 3000.0),
        };
        let mut points: Vec<ControlPoint> =
            [(0.0, 0.0), (2000.0, 0.0), (2000.0, 1500.0), (0.0, 1500.0), (1000.0, 0.0), (1000.0, 1500.0)].map(|(c, r)| point(c, r)).to_vec();
        points[4].col = Coordinate(1012.0); // a false tick, 12 px off
        let errors: Vec<f64> = leave_one_out_px(&points).into_iter().map(Option::unwrap).collect();
        let worst = (0..errors.len()).max_by(|a, b| errors[*a].total_cmp(&errors[*b])).unwrap();
        assert_eq!(worst, 4, "{errors:?}");
        assert!((errors[4] - 12.0).abs() < 0.5, "{errors:?}");
        assert_eq!(leave_one_out_px(&points[..3]), vec![None, None, None], "two points fix no affine");
    }

    #[test]
    fn spread_tells_collinear_from_spread_out_points() {
        assert!(spread([(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)].into_iter()) < COLLINEAR);
        assert!(spread([(0.0, 0.0), (10.0, 0.0), (0.0, 10.0), (10.0, 10.0)].into_iter()) > 0.9);
    }

    #[test]
    fn bounds_map_the_region_corners_exactly() {
        let bounds = Bounds { west: Coordinate(-120.0), south: Coordinate(35.0), east: Coordinate(-119.0), north: Coordinate(36.0) };
        let gt = bounds_geotransform(&bounds, &PixelRegion { col: 100, row: 50, width: 1000, height: 500 });
        assert_eq!(gt.apply(100.0, 50.0), (-120.0, 36.0));
        assert_eq!(gt.apply(1100.0, 550.0), (-119.0, 35.0));
    }

    #[test]
    fn a_point_on_the_ground_maps_back_to_its_pixel_under_each_transform() {
        let bounds = Bounds { west: Coordinate(-120.0), south: Coordinate(35.0), east: Coordinate(-119.0), north: Coordinate(36.0) };
        let request = Request { crs: "EPSG:4326".to_owned(), placement: Placement::Bounds { bounds, region: None } };
        let revision = describe(1000, 500, &request, "rev_test").unwrap();
        let (col, row) = pixel_at(&revision, -119.25, 35.5).unwrap();
        assert!((col - 750.0).abs() < 1e-6 && (row - 250.0).abs() < 1e-6, "{col} {row}");
        // A second-order polynomial through points on a gently curved grid, in UTM: each point maps back near its pixel.
        let point = |col: f64, row: f64| ControlPoint {
            col: Coordinate(col),
            row: Coordinate(row),
            x: Coordinate(500_000.0 + col * 10.0 + row * row * 1e-3),
            y: Coordinate(4_000_000.0 - row * 10.0 + col * 2e-3),
        };
        let points: Vec<ControlPoint> = [(0.0, 0.0), (1000.0, 0.0), (0.0, 800.0), (1000.0, 800.0), (500.0, 400.0), (250.0, 600.0), (800.0, 200.0)]
            .into_iter()
            .map(|(c, r)| point(c, r))
            .collect();
        let request = Request {
            crs: "EPSG:32612".to_owned(),
            placement: Placement::ControlPoints { points: points.clone(), transform: TransformKind::Polynomial2, region: None },
        };
        let revision = describe(1000, 800, &request, "rev_test").unwrap();
        let mut xs = vec![points[4].x.0];
        let mut ys = vec![points[4].y.0];
        let utm = resolve_crs("EPSG:32612").unwrap();
        let mut wgs84 = SpatialRef::from_epsg(4326).unwrap();
        wgs84.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
        CoordTransform::new(&utm, &wgs84).unwrap().transform_coords(&mut xs, &mut ys, &mut []).unwrap();
        let (col, row) = pixel_at(&revision, xs[0], ys[0]).unwrap();
        assert!((col - 500.0).abs() < 0.5 && (row - 400.0).abs() < 0.5, "{col} {row}");
    }

    #[test]
    fn null_coordinates_are_not_finite_rather_than_a_type_error() {
        let point: ControlPoint = serde_json::from_str(r#"{"col": 1, "row": null, "x": 2.5, "y": 3}"#).unwrap();
        assert!(point.row.0.is_nan() && point.x.0 == 2.5);
        let missing = serde_json::from_str::<ControlPoint>(r#"{"col": 1, "x": 2.5, "y": 3}"#).unwrap_err();
        assert!(missing.to_string().contains("missing field `row`"), "{missing}");
        assert!(serde_json::from_str::<ControlPoint>(r#"{"col": "1", "row": 1, "x": 2.5, "y": 3}"#).is_err());
    }
}
