//! Distances and areas on the ground from a CRS's own units: the one
//! conversion every ground figure goes through (a revision's RMSE in metres, a
//! pixel's area in km², a line's length in km, a direction's bearing from grid north).
//!
//! Invariants: a projected CRS's unit is what PROJ says it is (metres, feet,
//! US survey feet: `OSRGetLinearUnits`), never assumed to be the metre; a
//! geographic CRS's degrees are scaled on the WGS84 ellipsoid at the latitude
//! asked (meridian and prime-vertical radii of curvature), which is within a
//! fraction of a percent of any other datum's there.

use gdal::spatial_ref::SpatialRef;

use crate::{GeorefError, PixelToCrs, Readiness, Revision, resolve_crs};

/// WGS84's semi-major axis, in metres.
const SEMI_MAJOR_M: f64 = 6_378_137.0;
/// WGS84's first eccentricity squared.
const ECCENTRICITY_SQUARED: f64 = 0.006_694_379_990_14;

/// Metres on the ground per unit of x and of y of a CRS near latitude `lat` (degrees).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundScale {
    /// Metres per unit along x (easting or longitude).
    pub x: f64,
    /// Metres per unit along y (northing or latitude).
    pub y: f64,
}

impl GroundScale {
    /// The scale of `srs` at latitude `lat`: its linear unit both ways when projected, degrees on the ellipsoid when geographic.
    pub(crate) fn of(srs: &SpatialRef, lat: f64) -> GroundScale {
        match srs.is_geographic() {
            true => degrees_at(lat),
            false => {
                let unit = srs.linear_units();
                GroundScale { x: unit, y: unit }
            }
        }
    }

    /// The scale of `crs` (anything PROJ resolves) at latitude `lat`.
    pub fn at(crs: &str, lat: f64) -> Result<GroundScale, GeorefError> {
        Readiness::check().require()?;
        Ok(GroundScale::of(&resolve_crs(crs)?, lat))
    }

    /// The ground length in metres of a step of `dx`, `dy` CRS units.
    pub fn metres(&self, dx: f64, dy: f64) -> f64 {
        (dx * self.x).hypot(dy * self.y)
    }
}

/// Metres per degree of longitude and of latitude at latitude `lat`, on the WGS84 ellipsoid.
fn degrees_at(lat: f64) -> GroundScale {
    let phi = lat.to_radians();
    let w = (1.0 - ECCENTRICITY_SQUARED * phi.sin().powi(2)).sqrt();
    let prime_vertical = SEMI_MAJOR_M / w;
    let meridian = SEMI_MAJOR_M * (1.0 - ECCENTRICITY_SQUARED) / w.powi(3);
    let per_radian_to_degree = std::f64::consts::PI / 180.0;
    GroundScale { x: prime_vertical * phi.cos() * per_radian_to_degree, y: meridian * per_radian_to_degree }
}

/// The length on the ground in km of a line placed in `srs` (each step at its own latitude).
pub fn length_km(placed: &[(f64, f64)], srs: &SpatialRef) -> f64 {
    placed.windows(2).map(|pair| GroundScale::of(srs, (pair[0].1 + pair[1].1) / 2.0).metres(pair[1].0 - pair[0].0, pair[1].1 - pair[0].1)).sum::<f64>() / 1000.0
}

/// The root-mean-square residual of `revision`'s control points on the ground, in metres, at the
/// middle latitude of its WGS84 box; `None` without residuals (a revision from bounds).
pub fn rmse_m(revision: &Revision) -> Result<Option<f64>, GeorefError> {
    if revision.residuals.is_empty() {
        return Ok(None);
    }
    let lat = (revision.wgs84_bounds.south + revision.wgs84_bounds.north) / 2.0;
    let scale = GroundScale::at(&revision.crs, lat)?;
    let squares: f64 = revision.residuals.iter().map(|r| scale.metres(r.dx, r.dy).powi(2)).sum();
    Ok(Some((squares / revision.residuals.len() as f64).sqrt()))
}

/// Directions on the sheet as bearings from grid north: each `(at, degrees)` (a pixel and a
/// direction there, clockwise from the sheet's up) through `revision`'s transform, measured on
/// the ground ([`GroundScale`]) so a geographic CRS's degrees of longitude count at their length.
pub fn grid_bearings(revision: &Revision, directions: &[((f64, f64), f64)]) -> Result<Vec<f64>, GeorefError> {
    Readiness::check().require()?;
    let srs = resolve_crs(&revision.crs)?;
    let to_crs = PixelToCrs::of(revision)?;
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
    let to_crs = PixelToCrs::of(revision)?;
    let (mut xs, mut ys) = (vec![col, col + 1.0, col], vec![row, row, row + 1.0]);
    if !to_crs.apply(&mut xs, &mut ys) {
        return Err(GeorefError::InvalidBounds("The revision's transform does not reach the map's centre.".to_owned()));
    }
    let (dx_col, dy_col, dx_row, dy_row) = (xs[1] - xs[0], ys[1] - ys[0], xs[2] - xs[0], ys[2] - ys[0]);
    let area = (dx_col * dy_row - dx_row * dy_col).abs();
    let scale = GroundScale::of(&srs, ys[0]);
    Ok(area * scale.x * scale.y / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_scale_as_the_ellipsoid_does() {
        let equator = degrees_at(0.0);
        assert!((equator.x - 111_319.49).abs() < 0.01 && (equator.y - 110_574.28).abs() < 0.01, "{equator:?}");
        let thirty_six = degrees_at(36.0);
        assert!((thirty_six.x - 90_163.69).abs() < 0.01 && (thirty_six.y - 110_959.00).abs() < 0.01, "{thirty_six:?}");
    }

    #[test]
    fn a_crs_in_us_survey_feet_is_measured_in_its_own_feet() {
        // NAD83 / California zone 5 (ftUS): one unit is 1200/3937 m.
        let feet = GroundScale::at("EPSG:2229", 34.0).unwrap();
        assert!((feet.x - 1200.0 / 3937.0).abs() < 1e-12 && feet.x == feet.y, "{feet:?}");
        let metres = GroundScale::at("EPSG:32611", 34.0).unwrap();
        assert_eq!((metres.x, metres.y), (1.0, 1.0));
        assert!((feet.metres(3.0, 4.0) - 5.0 * 1200.0 / 3937.0).abs() < 1e-9);
    }

    #[test]
    fn a_revision_in_us_survey_feet_gives_its_rmse_in_metres() {
        use crate::{ControlPoint, Coordinate, Placement, Request, TransformKind};
        // Four corners of a 1000 × 1000 scan, 10 ftUS a pixel, one point 3 ftUS east of where the others put it.
        let point = |col: f64, row: f64, dx: f64| ControlPoint {
            col: Coordinate(col),
            row: Coordinate(row),
            x: Coordinate(6_400_000.0 + col * 10.0 + dx),
            y: Coordinate(1_800_000.0 - row * 10.0),
        };
        let points = vec![point(0.0, 0.0, 0.0), point(1000.0, 0.0, 0.0), point(1000.0, 1000.0, 3.0), point(0.0, 1000.0, 0.0), point(500.0, 500.0, 0.0)];
        let request = Request { crs: "EPSG:2229".into(), placement: Placement::ControlPoints { points, transform: TransformKind::Affine, region: None } };
        let revision = crate::describe(1000, 1000, &request, "rev_feet").unwrap();
        let in_feet = revision.rmse.as_ref().unwrap().crs_units;
        assert!(in_feet > 0.5, "the odd point leaves a residual: {in_feet}");
        let in_metres = rmse_m(&revision).unwrap().unwrap();
        assert!((in_metres - in_feet * 1200.0 / 3937.0).abs() < 1e-6 * in_feet, "{in_metres} m for {in_feet} ftUS");
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
