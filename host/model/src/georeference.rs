//! The plain data of a georeference: what an agent asks for (bounds, control
//! points, a transform), what a revision records (residuals, the WGS84 outline,
//! its files) and how images are written. The georef crate computes them with
//! GDAL; the registry stores them; the MCP layer takes and returns them as JSON.
//!
//! Invariant: coordinates follow GIS order (x is easting or longitude, y is
//! northing or latitude); pixel coordinates are GDAL's continuous ones
//! (`col,row = 0,0` is the image's top-left corner).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// How the georeferenced image is compressed (`GEOMAP_GEOREF_COMPRESSION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// DEFLATE with the horizontal predictor: lossless (the default).
    #[default]
    Deflate,
    /// JPEG, quality 90: small files, lossy.
    Jpeg,
    /// WebP, quality 90: smaller still, lossy.
    Webp,
}

impl Compression {
    /// Every setting's name, as the operator writes it.
    pub const NAMES: [&'static str; 3] = ["deflate", "jpeg", "webp"];

    /// The setting named `name` (any case).
    pub fn parse(name: &str) -> Option<Compression> {
        match name.trim().to_ascii_lowercase().as_str() {
            "deflate" => Some(Compression::Deflate),
            "jpeg" => Some(Compression::Jpeg),
            "webp" => Some(Compression::Webp),
            _ => None,
        }
    }

    /// Its name, as the operator writes it.
    pub fn name(self) -> &'static str {
        Compression::NAMES[self as usize]
    }
}

/// How georeferences write their image: the operator's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writing {
    /// Threads for warping, compression and overviews (`GEOMAP_WORKER_THREADS`).
    pub threads: usize,
    /// The COG's compression (`GEOMAP_GEOREF_COMPRESSION`).
    pub compression: Compression,
    /// The most a call's warp buffers, and GDAL's block cache, may each take, in bytes (`GEOMAP_GEOREF_MEMORY`).
    pub memory_ceiling: u64,
}

impl Writing {
    /// Warp buffers and block cache for a `width`×`height` image of `bands` bytes per pixel:
    /// room for the whole image and its warped copy, never more than the ceiling.
    pub fn memory_for(&self, width: u64, height: u64, bands: u64) -> u64 {
        const SLACK: u64 = 64 << 20;
        (width.saturating_mul(height).saturating_mul(bands).saturating_mul(2) + SLACK).min(self.memory_ceiling)
    }
}

/// How pixels map to the CRS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransformKind {
    /// Six-coefficient affine (at least 3 control points).
    #[default]
    Affine,
    /// Second-order polynomial (at least 6).
    Polynomial2,
    /// Third-order polynomial (at least 10).
    Polynomial3,
    /// Thin-plate spline: passes through every point (at least 3).
    ThinPlateSpline,
}

impl TransformKind {
    /// The fewest control points the transform needs.
    pub fn minimum_points(self) -> usize {
        match self {
            TransformKind::Affine | TransformKind::ThinPlateSpline => 3,
            TransformKind::Polynomial2 => 6,
            TransformKind::Polynomial3 => 10,
        }
    }

    /// The transform's name, as the agent writes it.
    pub fn name(self) -> &'static str {
        match self {
            TransformKind::Affine => "affine",
            TransformKind::Polynomial2 => "polynomial2",
            TransformKind::Polynomial3 => "polynomial3",
            TransformKind::ThinPlateSpline => "thin_plate_spline",
        }
    }
}

/// A coordinate as sent: a JSON number, or `null`, which is how JSON clients
/// encode NaN and infinity (it is then reported as not finite, not as a type error).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Coordinate(pub f64);

impl<'de> Deserialize<'de> for Coordinate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Numbers as they are, `null` as NaN; a missing field stays a missing-field error.
        struct NumberOrNull;
        impl serde::de::Visitor<'_> for NumberOrNull {
            type Value = f64;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E>(self, v: f64) -> Result<f64, E> {
                Ok(v)
            }
            fn visit_i64<E>(self, v: i64) -> Result<f64, E> {
                Ok(v as f64)
            }
            fn visit_u64<E>(self, v: u64) -> Result<f64, E> {
                Ok(v as f64)
            }
            fn visit_unit<E>(self) -> Result<f64, E> {
                Ok(f64::NAN)
            }
        }
        deserializer.deserialize_any(NumberOrNull).map(Coordinate)
    }
}

/// A box in the CRS: west/east are x, south/north are y.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    /// Smallest x (easting or longitude).
    pub west: Coordinate,
    /// Smallest y (northing or latitude).
    pub south: Coordinate,
    /// Largest x.
    pub east: Coordinate,
    /// Largest y.
    pub north: Coordinate,
}

/// A rectangle of the scan, in whole pixels from its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PixelRegion {
    /// Left edge.
    pub col: u64,
    /// Top edge.
    pub row: u64,
    /// Width in pixels.
    pub width: u64,
    /// Height in pixels.
    pub height: u64,
}

/// A pixel position and its CRS coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ControlPoint {
    /// Pixel column (0 = left edge of the image; pixel centres at +0.5).
    pub col: Coordinate,
    /// Pixel row (0 = top edge of the image).
    pub row: Coordinate,
    /// CRS x (easting or longitude).
    pub x: Coordinate,
    /// CRS y (northing or latitude).
    pub y: Coordinate,
}

/// Where the scan sits on the ground.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// `bounds` cover `region` of the scan.
    Bounds { bounds: Bounds, region: Option<PixelRegion> },
    /// A transform fitted to control points, covering `region` of the scan (the map area; default the whole image).
    ControlPoints { points: Vec<ControlPoint>, transform: TransformKind, region: Option<PixelRegion> },
}

/// A georeference to compute.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Any CRS GDAL/PROJ accepts (EPSG code, WKT, PROJ string, ...).
    pub crs: String,
    /// Bounds or control points.
    pub placement: Placement,
}

/// How far one control point is from the fitted transform.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Residual {
    /// Index into `control_points`.
    pub index: usize,
    /// Fitted minus given x, in CRS units.
    pub dx: f64,
    /// Fitted minus given y, in CRS units.
    pub dy: f64,
    /// Distance in CRS units.
    pub crs_units: f64,
    /// The CRS residual in image columns (through the transform's local inverse).
    pub dcol: f64,
    /// The CRS residual in image rows.
    pub drow: f64,
    /// Distance in pixels.
    pub pixels: f64,
}

/// Root-mean-square residual.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rmse {
    /// In pixels.
    pub pixels: f64,
    /// In CRS units.
    pub crs_units: f64,
}

/// A longitude/latitude box on WGS84 (EPSG:4326).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Wgs84Bounds {
    /// Smallest longitude.
    pub west: f64,
    /// Smallest latitude.
    pub south: f64,
    /// Largest longitude.
    pub east: f64,
    /// Largest latitude.
    pub north: f64,
}

/// A file a revision wrote under the data root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Artifact {
    /// File name inside the revision's folder.
    pub name: String,
    /// MIME type.
    pub media_type: String,
    /// Size in bytes.
    pub bytes: u64,
    /// The artifact as an MCP resource (filled in when reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Where the file is on the server, to open in QGIS or GDAL (filled in when reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// One georeference of a map: what was asked, what was fitted, what was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Revision {
    /// ID of this revision (`rev_` + 20 hex).
    pub revision_id: String,
    /// When it was made (RFC 3339, UTC).
    pub created_at: String,
    /// The CRS as given.
    pub crs: String,
    /// The CRS's name as PROJ knows it.
    pub crs_name: String,
    /// The transform used.
    pub transform: TransformKind,
    /// GDAL geotransform `[x0, dx/dcol, dx/drow, y0, dy/dcol, dy/drow]` (affine only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geotransform: Option<[f64; 6]>,
    /// The bounds given (bounds mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// The part of the scan the bounds or the transform cover.
    pub pixel_region: PixelRegion,
    /// The control points given (control-point mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub control_points: Vec<ControlPoint>,
    /// Per-point residuals (control-point mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub residuals: Vec<Residual>,
    /// Root-mean-square residual (control-point mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmse: Option<Rmse>,
    /// The map area on WGS84, through PROJ, along densified edges.
    pub wgs84_bounds: Wgs84Bounds,
    /// Files written for GIS tools.
    pub artifacts: Vec<Artifact>,
    /// How the georeferenced image (a Cloud Optimized GeoTIFF with overviews) is compressed;
    /// absent when no image was written (a map bundle) or for revisions older than COG output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<Compression>,
    /// Things to check that are not failures (an outlying point, a weak fit).
    pub warnings: Vec<String>,
    /// Where the placement came from: `map_labels` when read from the sheet's own coordinate
    /// labels (absent: the bounds or control points the agent gave).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<PlacementSource>,
}

/// Where a revision's placement came from, when the agent did not give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlacementSource {
    /// The coordinate labels and ticks printed around the map's neatline.
    MapLabels,
}
