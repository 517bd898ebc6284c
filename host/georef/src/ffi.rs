//! The only `unsafe` GDAL calls: what the `gdal` crate does not wrap
//! (GCPs → geotransform, GCP polynomial and thin-plate-spline transformers,
//! `GDALCreateCopy` with progress, the `gdal_translate` and `gdalwarp`
//! library entry points, and the sieve, polygonize, category names and
//! segmentize the units' layers use).
//!
//! Invariants: every pointer handed to GDAL outlives the call (`GcpList` owns
//! its strings; transformers are destroyed in `Drop`); every C string comes
//! from our own text (no NUL bytes reach here: callers build the options).

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::Path;
use std::ptr;

use gdal::Dataset;
use gdal_sys::GDAL_GCP;

/// One ground control point: pixel/line (GDAL's continuous pixel coordinates,
/// `0,0` = top-left corner of the image) to CRS x/y.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundControl {
    /// Pixel column.
    pub pixel: f64,
    /// Pixel row (line).
    pub line: f64,
    /// CRS x (easting or longitude).
    pub x: f64,
    /// CRS y (northing or latitude).
    pub y: f64,
}

/// GCPs in GDAL's layout, with the C strings they point to kept alive.
struct GcpList {
    _ids: Vec<CString>,
    gcps: Vec<GDAL_GCP>,
}

impl GcpList {
    fn new(points: &[GroundControl]) -> GcpList {
        let ids: Vec<CString> = (0..points.len()).map(|i| CString::new((i + 1).to_string()).expect("digits")).collect();
        let gcps = points
            .iter()
            .zip(&ids)
            .map(|(point, id)| GDAL_GCP {
                pszId: id.as_ptr() as *mut c_char,
                pszInfo: c"".as_ptr() as *mut c_char,
                dfGCPPixel: point.pixel,
                dfGCPLine: point.line,
                dfGCPX: point.x,
                dfGCPY: point.y,
                dfGCPZ: 0.0,
            })
            .collect();
        GcpList { _ids: ids, gcps }
    }

    fn count(&self) -> c_int {
        c_int::try_from(self.gcps.len()).expect("GCP counts are small")
    }
}

/// The least-squares affine geotransform through `points`, or `None` when
/// GDAL finds them degenerate.
pub fn gcps_to_geotransform(points: &[GroundControl]) -> Option<[f64; 6]> {
    let list = GcpList::new(points);
    let mut transform = [0.0f64; 6];
    // SAFETY: `list.gcps` holds `count()` valid GCPs whose strings outlive the call;
    // `transform` has room for the six coefficients GDAL writes.
    let ok = unsafe { gdal_sys::GDALGCPsToGeoTransform(list.count(), list.gcps.as_ptr(), transform.as_mut_ptr(), 1) };
    (ok != 0).then_some(transform)
}

/// Which non-affine model a [`Transformer`] fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// A polynomial of order 1 to 3.
    Polynomial(u8),
    /// A thin-plate spline.
    ThinPlateSpline,
}

/// A GDAL GCP transformer (polynomial or thin-plate spline), pixel ↔ CRS.
pub struct Transformer {
    handle: *mut c_void,
}

impl Transformer {
    /// Fits `model` to `points`; `None` when GDAL finds the points ill-conditioned.
    pub fn fit(model: Model, points: &[GroundControl]) -> Option<Transformer> {
        let list = GcpList::new(points);
        // SAFETY: as in `gcps_to_geotransform`; GDAL copies the GCPs into the transformer.
        let handle = unsafe {
            match model {
                Model::Polynomial(order) => gdal_sys::GDALCreateGCPTransformer(list.count(), list.gcps.as_ptr(), c_int::from(order), 0),
                Model::ThinPlateSpline => gdal_sys::GDALCreateTPSTransformer(list.count(), list.gcps.as_ptr(), 0),
            }
        };
        (!handle.is_null()).then_some(Transformer { handle })
    }

    /// Maps points in place from pixel to CRS. Returns false if GDAL could not map every point.
    pub fn forward(&self, xs: &mut [f64], ys: &mut [f64]) -> bool {
        self.apply(false, xs, ys)
    }

    /// Maps points in place from CRS to pixel (GDAL's own inverse of the fit).
    pub fn inverse(&self, xs: &mut [f64], ys: &mut [f64]) -> bool {
        self.apply(true, xs, ys)
    }

    fn apply(&self, to_pixels: bool, xs: &mut [f64], ys: &mut [f64]) -> bool {
        assert_eq!(xs.len(), ys.len());
        let mut zs = vec![0.0f64; xs.len()];
        let mut success = vec![0 as c_int; xs.len()];
        let count = c_int::try_from(xs.len()).expect("point counts are small");
        // SAFETY: the handle is a live transformer; the four arrays hold `count` elements.
        let ok = unsafe {
            gdal_sys::GDALUseTransformer(self.handle, c_int::from(to_pixels), count, xs.as_mut_ptr(), ys.as_mut_ptr(), zs.as_mut_ptr(), success.as_mut_ptr())
        };
        ok != 0 && success.iter().all(|&s| s != 0)
    }
}

impl Drop for Transformer {
    fn drop(&mut self) {
        // SAFETY: the handle came from a GDALCreate*Transformer call and is destroyed once.
        unsafe { gdal_sys::GDALDestroyTransformer(self.handle) }
    }
}

/// The Rust side of GDAL's progress callback: receives GDAL's progress, from 0.0 to 1.0, on the
/// thread doing the work, and returns whether to go on (callers wrap `geomap_model::progress::Progress`).
pub type Callback<'a> = &'a mut dyn FnMut(f64) -> bool;

/// GDAL's progress callback: forwards to the `Callback` behind `data`. A receiver that
/// says stop, or panics (caught here: it must not unwind into C), stops the work.
unsafe extern "C" fn forward_progress(complete: f64, _message: *const c_char, data: *mut c_void) -> c_int {
    // SAFETY: `data` is the `*mut Callback` that `warp` or `create_copy` passed, alive for their call.
    let progress = unsafe { &mut *(data as *mut Callback<'_>) };
    c_int::from(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| progress(complete))).unwrap_or(false))
}

/// `GDALCreateCopy` with progress: writes `source` to `destination` with `driver`.
pub fn create_copy(driver: &gdal::Driver, source: &Dataset, destination: &Path, options: &[&str], mut progress: Callback<'_>) -> Result<Dataset, String> {
    let destination = c_path(destination)?;
    let options: gdal::cpl::CslStringList = options.iter().copied().collect();
    let data = &mut progress as *mut Callback<'_> as *mut c_void;
    // SAFETY: every handle and string is live for the call; `data` points at `progress`, which outlives it.
    let output =
        unsafe { gdal_sys::GDALCreateCopy(driver.c_driver(), destination.as_ptr(), source.c_dataset(), 0, options.as_ptr(), Some(forward_progress), data) };
    if output.is_null() {
        return Err(last_error_message("GDALCreateCopy failed"));
    }
    // SAFETY: GDALCreateCopy returned a new dataset that we now own.
    Ok(unsafe { Dataset::from_c_dataset(output) })
}

/// Command-line style arguments as the NULL-terminated `char**` GDAL's
/// utility functions take, with the strings kept alive.
struct Arguments {
    _owned: Vec<CString>,
    pointers: Vec<*mut c_char>,
}

impl Arguments {
    fn new(arguments: &[&str]) -> Arguments {
        let owned: Vec<CString> = arguments.iter().map(|a| CString::new(*a).expect("utility arguments hold no NUL")).collect();
        let mut pointers: Vec<*mut c_char> = owned.iter().map(|a| a.as_ptr() as *mut c_char).collect();
        pointers.push(ptr::null_mut());
        Arguments { _owned: owned, pointers }
    }
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.to_str().ok_or("the output path is not UTF-8")?).map_err(|e| e.to_string())
}

/// Runs the `gdal_translate` library entry point on `source` with
/// command-line style `arguments`, writing `destination`, with progress.
pub fn translate(source: &Dataset, destination: &Path, arguments: &[&str], mut progress: Callback<'_>) -> Result<Dataset, String> {
    let mut argv = Arguments::new(arguments);
    let destination = c_path(destination)?;
    // SAFETY: `argv.pointers` is a NULL-terminated array of live C strings; GDAL copies it.
    let options = unsafe { gdal_sys::GDALTranslateOptionsNew(argv.pointers.as_mut_ptr(), ptr::null_mut()) };
    if options.is_null() {
        return Err(last_error_message("invalid gdal_translate options"));
    }
    let data = &mut progress as *mut Callback<'_> as *mut c_void;
    // SAFETY: `options` is live; `data` points at `progress`, which outlives the GDALTranslate call below.
    unsafe { gdal_sys::GDALTranslateOptionsSetProgress(options, Some(forward_progress), data) };
    let mut usage_error: c_int = 0;
    // SAFETY: the source handle and `options` are live for the call.
    let output = unsafe { gdal_sys::GDALTranslate(destination.as_ptr(), source.c_dataset(), options, &mut usage_error) };
    // SAFETY: `options` came from GDALTranslateOptionsNew and is freed once.
    unsafe { gdal_sys::GDALTranslateOptionsFree(options) };
    if output.is_null() {
        return Err(last_error_message("gdal_translate failed"));
    }
    // SAFETY: GDALTranslate returned a new dataset that we now own.
    Ok(unsafe { Dataset::from_c_dataset(output) })
}

/// Runs the `gdalwarp` library entry point on `source` with command-line style
/// `arguments`, writing `destination`. Errors carry GDAL's last message.
pub fn warp(source: &Dataset, destination: &Path, arguments: &[&str], mut progress: Callback<'_>) -> Result<Dataset, String> {
    let mut argv = Arguments::new(arguments);
    let destination = c_path(destination)?;
    // SAFETY: `argv.pointers` is a NULL-terminated array of live C strings; GDAL copies it.
    let options = unsafe { gdal_sys::GDALWarpAppOptionsNew(argv.pointers.as_mut_ptr(), ptr::null_mut()) };
    if options.is_null() {
        return Err(last_error_message("invalid warp options"));
    }
    let data = &mut progress as *mut Callback<'_> as *mut c_void;
    // SAFETY: `options` is live; `data` points at `progress`, which outlives the GDALWarp call below.
    unsafe { gdal_sys::GDALWarpAppOptionsSetProgress(options, Some(forward_progress), data) };
    let mut sources = [source.c_dataset()];
    let mut usage_error: c_int = 0;
    // SAFETY: `sources` holds one live dataset handle; `options` is live until freed below.
    let output = unsafe { gdal_sys::GDALWarp(destination.as_ptr(), ptr::null_mut(), 1, sources.as_mut_ptr(), options, &mut usage_error) };
    // SAFETY: `options` came from GDALWarpAppOptionsNew and is freed once.
    unsafe { gdal_sys::GDALWarpAppOptionsFree(options) };
    if output.is_null() {
        return Err(last_error_message("gdalwarp failed"));
    }
    // SAFETY: GDALWarp returned a new dataset that we now own.
    Ok(unsafe { Dataset::from_c_dataset(output) })
}

/// Grows GDAL's block cache (shared by the whole process) to `bytes`; never shrinks it,
/// so a smaller scan georeferenced beside a larger one does not take the larger one's cache away.
pub fn raise_block_cache(bytes: u64) {
    let wanted = i64::try_from(bytes).unwrap_or(i64::MAX);
    // SAFETY: both calls only read or set GDAL's global cache size.
    unsafe {
        if gdal_sys::GDALGetCacheMax64() < wanted {
            gdal_sys::GDALSetCacheMax64(wanted);
        }
    }
}

/// Gives memory the allocator holds but no longer uses back to the system (glibc keeps freed
/// memory in its arenas, so a finished warp would otherwise still count in the server's RSS).
pub fn release_free_memory() {
    // SAFETY: malloc_trim only walks and trims the allocator's own free lists.
    unsafe { libc::malloc_trim(0) };
}

/// `GDALSieveFilter` in place on `band`: 4-connected regions under `threshold` pixels take the
/// class of their largest neighbour; pixels of value 0 (`mask` off) are left alone.
pub fn sieve(band: &gdal::raster::RasterBand<'_>, threshold: usize, mut progress: Callback<'_>) -> Result<(), String> {
    let threshold = c_int::try_from(threshold).map_err(|_| "the minimum area is too large".to_owned())?;
    let data = &mut progress as *mut Callback<'_> as *mut c_void;
    // SAFETY: the band is live for the call (source, mask and destination alike: GDAL allows
    // sieving in place); `data` points at `progress`, which outlives it.
    let status = unsafe {
        let handle = band.c_rasterband();
        gdal_sys::GDALSieveFilter(handle, handle, handle, threshold, 4, ptr::null_mut(), Some(forward_progress), data)
    };
    if status != gdal_sys::CPLErr::CE_None {
        return Err(last_error_message("GDALSieveFilter failed"));
    }
    Ok(())
}

/// `GDALPolygonize`: one 4-connected polygon per region of equal value of `band` (pixels of
/// value 0 skipped, the band being its own mask) into `layer`, the value in its field 0.
pub fn polygonize(band: &gdal::raster::RasterBand<'_>, layer: &gdal::vector::Layer<'_>, mut progress: Callback<'_>) -> Result<(), String> {
    use gdal::vector::LayerAccess;
    let data = &mut progress as *mut Callback<'_> as *mut c_void;
    // SAFETY: the band and the layer are live for the call; `data` points at `progress`.
    let status = unsafe {
        let handle = band.c_rasterband();
        gdal_sys::GDALPolygonize(handle, handle, layer.c_layer(), 0, ptr::null_mut(), Some(forward_progress), data)
    };
    if status != gdal_sys::CPLErr::CE_None {
        return Err(last_error_message("GDALPolygonize failed"));
    }
    Ok(())
}

/// Names `band`'s values (a raster attribute as GIS tools read it: `names[v]` for value `v`).
pub fn set_category_names(band: &gdal::raster::RasterBand<'_>, names: &[String]) -> Result<(), String> {
    let list: gdal::cpl::CslStringList = names.iter().map(String::as_str).collect();
    // SAFETY: the band is live; GDAL copies the NULL-terminated list.
    let status = unsafe { gdal_sys::GDALSetRasterCategoryNames(band.c_rasterband(), list.as_ptr()) };
    if status != gdal_sys::CPLErr::CE_None {
        return Err(last_error_message("GDALSetRasterCategoryNames failed"));
    }
    Ok(())
}

/// Adds vertices to `geometry` so that no segment is longer than `length` (`OGR_G_Segmentize`).
pub fn segmentize(geometry: &mut gdal::vector::Geometry, length: f64) {
    // SAFETY: the geometry is live and owned by the caller.
    unsafe { gdal_sys::OGR_G_Segmentize(geometry.c_geometry(), length) }
}

fn last_error_message(fallback: &str) -> String {
    // SAFETY: CPLGetLastErrorMsg returns a pointer to a thread-local, NUL-terminated string.
    let message = unsafe { std::ffi::CStr::from_ptr(gdal_sys::CPLGetLastErrorMsg()) }.to_string_lossy().into_owned();
    if message.is_empty() { fallback.to_owned() } else { message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(transform: impl Fn(f64, f64) -> (f64, f64), cells: &[(f64, f64)]) -> Vec<GroundControl> {
        cells
            .iter()
            .map(|&(pixel, line)| {
                let (x, y) = transform(pixel, line);
                GroundControl { pixel, line, x, y }
            })
            .collect()
    }

    const GRID: [(f64, f64); 6] = [(0.0, 0.0), (100.0, 0.0), (0.0, 80.0), (100.0, 80.0), (50.0, 40.0), (20.0, 70.0)];

    #[test]
    fn an_exact_affine_is_recovered() {
        let gt = [500_000.0, 2.5, 0.3, 4_200_000.0, -0.2, -2.5];
        let points = sample(|p, l| (gt[0] + p * gt[1] + l * gt[2], gt[3] + p * gt[4] + l * gt[5]), &GRID);
        let found = gcps_to_geotransform(&points).unwrap();
        for (a, b) in found.iter().zip(gt) {
            assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{found:?} vs {gt:?}");
        }
    }

    #[test]
    fn a_second_order_polynomial_is_recovered_between_the_points() {
        let points = sample(|p, l| (10.0 + p + 0.001 * p * p, 20.0 - l + 0.002 * p * l), &GRID);
        let transformer = Transformer::fit(Model::Polynomial(2), &points).unwrap();
        let (mut xs, mut ys) = (vec![30.0], vec![60.0]);
        assert!(transformer.forward(&mut xs, &mut ys));
        assert!((xs[0] - (10.0 + 30.0 + 0.9)).abs() < 1e-6 && (ys[0] - (20.0 - 60.0 + 3.6)).abs() < 1e-6, "{xs:?} {ys:?}");
    }

    #[test]
    fn collinear_points_do_not_fit_a_polynomial() {
        let points: Vec<_> = (0..6).map(|i| GroundControl { pixel: i as f64, line: i as f64, x: i as f64, y: i as f64 }).collect();
        assert!(Transformer::fit(Model::Polynomial(2), &points).is_none());
    }
}
