//! `geomap_georeference`: bounds, control points, or the map's own coordinate labels become a new revision.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_georef::{Bounds, ControlPoint, Coordinate, PixelRegion, Placement, PlacementSource, Revision, TransformKind};
use geomap_model::trace;
use geomap_store::media::MediaError;
use geomap_vision::VisionError;
use geomap_vision::graticule::datum::CrsDecision;
use geomap_vision::graticule::neatline::Neatline;
use geomap_vision::graticule::ticks::Anchor;
use geomap_vision::graticule::{GraticuleError, LabelPoint, LabelReport, LabelTimings, Sheet};

use super::{RegisteredMap, located, open_registered};
use crate::mcp::ServerState;
use crate::mcp::adapter::{MapGone, ToolError};
use crate::mcp::arguments::{ArgumentError, ArgumentProblem};
use crate::mcp::progress::{ProgressSink, ProgressUpdate};
use crate::mcp::uris::revision_dir;
use geomap_store::sweep::Staged;
use tokio_util::sync::CancellationToken;

/// Arguments of `geomap_georeference`: `bounds` (with an optional `pixel_region`) or
/// `control_points` (with an optional `transform`), or `from: "labels"` to read the
/// georeference from the map's own coordinate labels.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeoreferenceArgs {
    /// A map_id returned by geomap_register_map.
    pub map_id: String,
    /// Any CRS GDAL/PROJ accepts: EPSG:4326, EPSG:4267 (NAD27, common on USGS scans), EPSG:326xx (UTM), WKT, a PROJ string.
    /// Required, except with `from: "labels"`, where it is decided from the sheet's words when omitted.
    pub crs: Option<String>,
    /// The CRS box that `pixel_region` covers (x = easting/longitude, y = northing/latitude).
    pub bounds: Option<Bounds>,
    /// The part of the scan the bounds cover, in whole pixels (default: the whole image).
    pub pixel_region: Option<PixelRegion>,
    /// Pixel → CRS points (col/row from the image's top-left corner; pixel centres at +0.5). With
    /// `from: "labels"`, points added to those the labels give, in `crs` or else in the labels' CRS
    /// (`labels.crs_decision.crs`).
    pub control_points: Option<Vec<ControlPoint>>,
    /// How control points map pixels to the CRS (default affine; with `from: "labels"`, affine
    /// unless a second-order polynomial fits many spread points much better).
    pub transform: Option<TransformKind>,
    /// `labels`: find the neatline, read the coordinate labels around it, tie each to its tick and
    /// fit control points from them (the OCR models must be installed).
    pub from: Option<GeorefFrom>,
    /// With `from: "labels"`: return the points, the rejected labels and the fit without writing a revision.
    pub dry_run: Option<bool>,
}

/// Where `geomap_georeference` takes its placement from, besides the arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GeorefFrom {
    /// The coordinate labels and ticks printed around the map's neatline.
    Labels,
}

/// Two arguments that exclude each other: `field` is the one to drop or change.
fn conflict(field: &str, expected: &str) -> ArgumentError {
    ArgumentError { field: field.to_owned(), problem: ArgumentProblem::Conflict, expected: expected.to_owned() }
}

impl GeoreferenceArgs {
    /// The CRS and placement these arguments ask for (bounds or control points, not labels), or
    /// the argument that does not fit.
    pub(crate) fn explicit(&self) -> Result<(String, Placement), ArgumentError> {
        if self.from.is_some() {
            return Err(conflict("/from", "no from here: bounds or control_points"));
        }
        if self.dry_run.is_some() {
            return Err(conflict("/dry_run", "dry_run only with from: \"labels\""));
        }
        let crs = self.crs.clone().ok_or_else(|| ArgumentError {
            field: "/crs".to_owned(),
            problem: ArgumentProblem::Missing,
            expected: "a CRS GDAL/PROJ accepts (EPSG:4326, EPSG:4267, …); only from: \"labels\" may leave it out".to_owned(),
        })?;
        let placement = match (&self.bounds, &self.control_points) {
            (Some(_), Some(_)) => return Err(conflict("/control_points", "either bounds or control_points, not both")),
            (None, None) => {
                return Err(ArgumentError {
                    field: "/bounds".to_owned(),
                    problem: ArgumentProblem::Missing,
                    expected: "bounds (with an optional pixel_region), control_points (with an optional transform), or from: \"labels\"".to_owned(),
                });
            }
            (Some(bounds), None) => match self.transform {
                Some(kind) if kind != TransformKind::Affine => {
                    return Err(conflict(
                        "/transform",
                        "no transform with bounds (bounds always give an affine transform); use control_points for other transforms",
                    ));
                }
                _ => Placement::Bounds { bounds: *bounds, region: self.pixel_region },
            },
            (None, Some(points)) => match self.pixel_region {
                Some(_) => return Err(conflict("/pixel_region", "no pixel_region with control_points (their pixels say where they are)")),
                None => Placement::ControlPoints { points: points.clone(), transform: self.transform.unwrap_or_default(), region: None },
            },
        };
        Ok((crs, placement))
    }

    /// Checks the arguments of a call with `from: "labels"`.
    fn check_labels(&self) -> Result<(), ArgumentError> {
        if self.bounds.is_some() {
            return Err(conflict("/bounds", "no bounds with from: \"labels\" (the labels place the map; add control_points if you know more)"));
        }
        if self.pixel_region.is_some() {
            return Err(conflict("/pixel_region", "no pixel_region with from: \"labels\""));
        }
        Ok(())
    }
}

/// The result of `geomap_georeference`: the new revision, now the map's current one (with
/// `dry_run`, the revision it would write, unwritten and without files).
#[derive(Debug, Serialize, JsonSchema)]
pub struct GeoreferenceReport {
    /// The map.
    pub map_id: String,
    /// The revision written.
    #[serde(flatten)]
    pub revision: Revision,
    /// With `from: "labels"`: the neatline, the labels used and rejected, the CRS decision and the fit's accuracy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<LabelsReport>,
    /// True when nothing was written (`dry_run`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// What the map's labels gave, beside the revision.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LabelsReport {
    /// The frame found, its sides fitted at sub-pixel precision.
    pub neatline: Neatline,
    /// The control points the labels gave (the revision's `control_points` also holds any the agent added), with their evidence.
    pub control_points: Vec<LabelPoint>,
    /// Every line read in the ring around the neatline: used, or rejected with the reason.
    pub labels: Vec<LabelReport>,
    /// The CRS the sheet's words point to, and why (absent when the agent gave `crs` and the words name none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crs_decision: Option<CrsDecision>,
    /// Whether the revision's CRS is the agent's `crs` rather than the decision.
    pub crs_given: bool,
    /// Which transform was fitted, and why.
    pub transform_choice: String,
    /// How well the points fit, in metres, against the map accuracy standard at the printed scale.
    pub accuracy: Accuracy,
    /// Milliseconds per stage.
    pub timings: LabelTimings,
}

/// The fit's accuracy on the ground.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Accuracy {
    /// Root-mean-square residual of the control points, in metres.
    pub rmse_m: Option<f64>,
    /// The scale printed on the sheet (`1:N`), when read.
    pub scale: Option<u64>,
    /// What the U.S. National Map Accuracy Standard allows at that scale (1/50 inch), in metres.
    pub allowed_m: Option<f64>,
    /// Whether `rmse_m` is within `allowed_m`.
    pub within_standard: Option<bool>,
}

/// `geomap_georeference`: fit and write the artifacts, then record the revision in one registry transaction.
/// With `from: "labels"` the control points come from the sheet's labels first (and `dry_run` stops
/// before writing). A cancelled call (`cancel`) stops at the next tile read or GDAL progress report and keeps nothing.
pub async fn georeference(
    state: Arc<ServerState>,
    args: GeoreferenceArgs,
    progress: Option<ProgressSink>,
    cancel: CancellationToken,
) -> Result<GeoreferenceReport, ToolError> {
    let explicit = match args.from {
        Some(GeorefFrom::Labels) => {
            args.check_labels()?;
            None
        }
        None => Some(args.explicit()?),
    };
    let (updates, received) = tokio::sync::mpsc::unbounded_channel();
    let forwarding = progress.map(|sink| tokio::spawn(sink.forward(received)));
    let outcome = trace::spawn_blocking(move || {
        let map = open_registered(&state, &args.map_id)?;
        if !map.record.media_type.has_pixels() {
            return Err(MediaError::NoPixels { action: "georeference" }.into());
        }
        let send = |done: u64, message: String| {
            let _ = updates.send(ProgressUpdate { done, total: 100, message }); // no receiver when nobody asked
        };
        let (request, labels) = match explicit {
            Some((crs, placement)) => (geomap_georef::Request { crs, placement }, None),
            None => {
                let (request, labels) = from_labels(&state, &map, &args, &send, &cancel)?;
                (request, Some(labels))
            }
        };
        let source = labels.as_ref().map(|_| PlacementSource::MapLabels);
        let revision_id = format!("rev_{}", geomap_model::random_hex(10));
        if args.dry_run == Some(true) {
            let revision = geomap_georef::describe(map.record.width, map.record.height, &request, &revision_id)?;
            let labels = labels.map(|labels| with_accuracy(labels, &revision));
            return Ok(GeoreferenceReport { map_id: map.record.map_id.clone(), revision: Revision { source, ..revision }, labels, dry_run: true });
        }
        let output_dir = revision_dir(&state, &map.record.map_id, &revision_id);
        let scan_path = map.record.root.join(&map.record.relative_path);
        let scan = geomap_georef::Scan { file: &map.file, path: &scan_path, width: map.record.width, height: map.record.height };
        let (start, share) = if labels.is_some() { (50.0, 50.0) } else { (0.0, 100.0) };
        let mut report_progress = |fraction: f64, message: &'static str| {
            send((start + fraction.clamp(0.0, 1.0) * share).floor() as u64, message.to_owned());
            !cancel.is_cancelled()
        };
        let staged = Staged::create(&output_dir).map_err(|source| geomap_georef::GeorefError::Io { action: "create the revision folder", source })?;
        let writing = state.settings.georef_writing();
        // A failed revision's folder goes with `staged`: nothing half-written is left behind.
        let revision = geomap_georef::georeference(&scan, &request, &revision_id, staged.path(), &writing, &mut report_progress)
            .map(|revision| Revision { source, ..revision })?;
        staged.publish().map_err(|source| geomap_georef::GeorefError::Io { action: "move the revision folder into place", source })?;
        // On an error the folder stays: whole, and perhaps recorded (a commit whose answer was lost).
        let recorded = state.registry.add_revision(&map.record.map_id, &revision)?;
        if !recorded {
            let _ = std::fs::remove_dir_all(&output_dir);
            return Err(ToolError::MapNotFound { map_id: map.record.map_id.clone(), reason: MapGone::UnknownId, registered_as: None });
        }
        let labels = labels.map(|labels| with_accuracy(labels, &revision));
        Ok(GeoreferenceReport { map_id: map.record.map_id.clone(), revision: located(&state, &map.record.map_id, revision), labels, dry_run: false })
    })
    .await;
    if let Some(forwarding) = forwarding {
        let _ = forwarding.await; // every progress notification goes out before the result
    }
    outcome
}

/// Reads the sheet's labels (the first half of the call's progress) and makes the request from
/// them: the decided CRS unless the agent gave one, the agent's points added, the transform chosen.
fn from_labels(
    state: &ServerState,
    map: &RegisteredMap,
    args: &GeoreferenceArgs,
    send: &dyn Fn(u64, String),
    cancel: &CancellationToken,
) -> Result<(geomap_georef::Request, LabelsReport), ToolError> {
    let reader = super::text_reader(state)?;
    let hint = super::stored::newest_layout(state, &map.record.map_id)
        .ok()
        .and_then(|(_, layout)| layout.components.into_iter().find(|component| component.class == "main_map").map(|component| component.bbox));
    let metric = args.crs.as_deref().map(geomap_georef::is_geographic).transpose()?.map(|geographic| !geographic);
    let mut window = |region: (u32, u32, u32, u32)| state.pixels.window(&map.record.sha256, &map.file, state.settings.max_image_pixels, region);
    let mut progress = |done: u64, total: u64, message: String| {
        send(done * 50 / total.max(1), message);
        if cancel.is_cancelled() { Err(VisionError::Cancelled) } else { Ok(()) }
    };
    let sheet = Sheet { width: map.record.width as u32, height: map.record.height as u32, read: &mut window };
    // Words read elsewhere on the sheet (the newest geomap_read_text) may name the datum the ring lacks.
    let words = super::stored::newest_reading_lines(state, &map.record.map_id)?;
    let found = geomap_vision::graticule::read(&reader, sheet, hint, &words, metric, &mut progress)?;
    let crs = match (&args.crs, &found.crs) {
        (Some(crs), _) => crs.clone(),
        (None, Some(decision)) => decision.crs.clone(),
        (None, None) => {
            let why = found.crs_problem.clone().unwrap_or_else(|| "the sheet's words give no CRS".to_owned());
            return Err(GraticuleError::TooFewLabels { why, labels: found.labels, corners: found.neatline.corners }.into());
        }
    };
    let mut points: Vec<ControlPoint> =
        found.control_points.iter().map(|p| ControlPoint { col: Coordinate(p.col), row: Coordinate(p.row), x: Coordinate(p.x), y: Coordinate(p.y) }).collect();
    points.extend(args.control_points.iter().flatten().cloned());
    // A sheet's graticule is straight in its projection, not in degrees: degrees decided from the
    // sheet's words are also tried in the UTM zone of the map on the same datum.
    let mut fits = vec![(crs, points)];
    if let Some(utm) = found.crs.as_ref().filter(|_| args.crs.is_none()).and_then(|decision| utm_alternative(decision, &fits[0].1)) {
        // Only an alternative: where PROJ cannot take the points there, the fit stays in degrees.
        if let Ok(projected) = geomap_georef::reproject(&fits[0].0, &utm, &fits[0].1.iter().map(|p| (p.x.0, p.y.0)).collect::<Vec<_>>()) {
            let points = fits[0].1.iter().zip(projected).map(|(p, (x, y))| ControlPoint { x: Coordinate(x), y: Coordinate(y), ..*p }).collect();
            fits.push((utm, points));
        }
    }
    // A corner is where two fitted sides cross, and the agent's points are the agent's: only ticks may be false.
    let droppable: Vec<bool> = found.control_points.iter().map(|p| p.anchor != Anchor::Corner).chain(std::iter::repeat(false)).take(fits[0].1.len()).collect();
    let chosen = choose_fit(map.record.width, map.record.height, fits, &droppable, args.transform)?;
    let (crs, transform, transform_choice) = (chosen.crs, chosen.transform, chosen.why);
    let mut labels = found.labels;
    for &(index, error_px) in &chosen.dropped {
        for &label in &found.control_points[index].labels {
            labels[label].used = false;
            labels[label].reason = Some(format!("its tick lies {error_px:.1} px from where the other points put it: a line of the map taken for a tick?"));
        }
    }
    let points = chosen.kept;
    let label_points: Vec<LabelPoint> =
        found.control_points.into_iter().enumerate().filter(|(i, _)| !chosen.dropped.iter().any(|(dropped, _)| dropped == i)).map(|(_, point)| point).collect();
    send(50, "labels read; fitting".to_owned());
    let report = LabelsReport {
        neatline: found.neatline,
        control_points: label_points,
        labels,
        crs_decision: found.crs,
        crs_given: args.crs.is_some(),
        transform_choice,
        accuracy: Accuracy { rmse_m: None, scale: found.scale, allowed_m: None, within_standard: None },
        timings: found.timings,
    };
    // The transform covers the map area: the neatline's box, so wgs84_bounds is the map's, not the sheet's.
    let [tl, tr, br, bl] = report.neatline.corners;
    let (x0, y0) = (tl[0].min(bl[0]).max(0.0).floor() as u64, tl[1].min(tr[1]).max(0.0).floor() as u64);
    let (x1, y1) = ((tr[0].max(br[0]).ceil() as u64).min(map.record.width), (bl[1].max(br[1]).ceil() as u64).min(map.record.height));
    let region = PixelRegion { col: x0, row: y0, width: x1.saturating_sub(x0).max(1), height: y1.saturating_sub(y0).max(1) };
    Ok((geomap_georef::Request { crs, placement: Placement::ControlPoints { points, transform, region: Some(region) } }, report))
}

/// The UTM CRS, on the decision's datum, of the zone the points' mean longitude lies in, for a
/// decision in degrees.
fn utm_alternative(decision: &CrsDecision, points: &[ControlPoint]) -> Option<String> {
    if decision.utm_zone.is_some() || points.is_empty() {
        return None;
    }
    let n = points.len() as f64;
    let (lon, lat) = points.iter().fold((0.0, 0.0), |(x, y), p| (x + p.x.0 / n, y + p.y.0 / n));
    decision.datum.utm_crs_at(lon, lat)
}

/// The root-mean-square residual in pixels of `points` in `crs` under `transform`.
fn rmse_px(width: u64, height: u64, crs: &str, points: &[ControlPoint], transform: TransformKind) -> Result<f64, geomap_georef::GeorefError> {
    let request = geomap_georef::Request { crs: crs.to_owned(), placement: Placement::ControlPoints { points: points.to_vec(), transform, region: None } };
    Ok(geomap_georef::describe(width, height, &request, "rev_trial")?.rmse.map_or(0.0, |rmse| rmse.pixels))
}

/// A tick lies at least this far (pixels) from where the other points put it before it is dropped.
const FALSE_TICK_PX: f64 = 3.0;
/// Points kept at the least, whatever their residuals.
const KEPT_AT_LEAST: usize = 5;

/// The points of `points` that `droppable` allows to drop and that an affine fit of the others
/// puts far from where they are, worst first, with how far (pixels): one at a time while the worst
/// lies past both [`FALSE_TICK_PX`] and twice the median of every point's such distance.
fn false_ticks(points: &[ControlPoint], droppable: &[bool]) -> Vec<(usize, f64)> {
    let mut kept: Vec<usize> = (0..points.len()).collect();
    let mut dropped = Vec::new();
    while kept.len() > KEPT_AT_LEAST {
        let errors = geomap_georef::leave_one_out_px(&kept.iter().map(|i| points[*i]).collect::<Vec<_>>());
        let mut known: Vec<f64> = errors.iter().flatten().copied().collect();
        known.sort_by(f64::total_cmp);
        let Some(&median) = known.get(known.len() / 2) else { break };
        let worst = (0..kept.len()).filter(|k| droppable[kept[*k]]).filter_map(|k| errors[k].map(|error| (k, error))).max_by(|a, b| a.1.total_cmp(&b.1));
        match worst {
            Some((k, error)) if error > FALSE_TICK_PX.max(2.0 * median) => dropped.push((kept.remove(k), error)),
            _ => break,
        }
    }
    dropped
}

/// The fit [`choose_fit`] chose.
struct ChosenFit {
    crs: String,
    /// The points in that CRS, without the false ticks.
    kept: Vec<ControlPoint>,
    /// Indices into the points given of the false ticks, with how far off they lie (pixels).
    dropped: Vec<(usize, f64)>,
    transform: TransformKind,
    why: String,
}

/// The points of one CRS without their false ticks, and the affine residual they leave (pixels).
struct Trial {
    crs: String,
    kept: Vec<ControlPoint>,
    dropped: Vec<(usize, f64)>,
    affine: f64,
}

/// Of the same points in one CRS or more (the first is the labels' own), the CRS and transform to
/// write, and why. In each CRS the false ticks are found ([`false_ticks`]); the CRS whose affine
/// fit of the rest leaves the smaller residual wins (another than the first only when it leaves
/// under 80% of the first's); in it, `asked`, or affine unless twice the points a second-order
/// polynomial needs fit one with under half the affine residual (with fewer points a polynomial
/// fits its points' errors too).
fn choose_fit(
    width: u64,
    height: u64,
    fits: Vec<(String, Vec<ControlPoint>)>,
    droppable: &[bool],
    asked: Option<TransformKind>,
) -> Result<ChosenFit, ToolError> {
    let mut trials = Vec::new();
    for (crs, points) in fits {
        let dropped = false_ticks(&points, droppable);
        let kept: Vec<ControlPoint> = points.iter().enumerate().filter(|(i, _)| !dropped.iter().any(|(d, _)| d == i)).map(|(_, p)| *p).collect();
        let affine = rmse_px(width, height, &crs, &kept, TransformKind::Affine)?;
        trials.push(Trial { crs, kept, dropped, affine });
    }
    let chosen =
        (1..trials.len()).filter(|i| trials[*i].affine < 0.8 * trials[0].affine).min_by(|a, b| trials[*a].affine.total_cmp(&trials[*b].affine)).unwrap_or(0);
    let projection = match chosen {
        0 if trials.len() > 1 => format!(" in {} (in {} it leaves {:.2} px)", trials[0].crs, trials[1].crs, trials[1].affine),
        0 => String::new(),
        _ => format!(" in {}: the graticule is straighter there than in {}, where it leaves {:.2} px", trials[chosen].crs, trials[0].crs, trials[0].affine),
    };
    let Trial { crs, kept, dropped, affine } = trials.swap_remove(chosen);
    let dropped_note = match dropped.len() {
        0 => String::new(),
        n => format!("; {n} tick(s) dropped as false"),
    };
    let (transform, why) = match asked {
        Some(transform) => (transform, format!("{}, as asked", transform.name())),
        None => {
            let enough = kept.len() >= 2 * TransformKind::Polynomial2.minimum_points() && affine > 1.0;
            match enough.then(|| rmse_px(width, height, &crs, &kept, TransformKind::Polynomial2)).transpose()? {
                Some(polynomial) if polynomial < 0.5 * affine => (
                    TransformKind::Polynomial2,
                    format!("polynomial2: its RMSE is {polynomial:.2} px against the affine's {affine:.2} px over {} points", kept.len()),
                ),
                Some(polynomial) => {
                    (TransformKind::Affine, format!("affine: RMSE {affine:.2} px (a second-order polynomial gave {polynomial:.2} px, not enough better)"))
                }
                None => (TransformKind::Affine, format!("affine: RMSE {affine:.2} px over {} points", kept.len())),
            }
        }
    };
    Ok(ChosenFit { crs, kept, dropped, transform, why: format!("{why}{projection}{dropped_note}") })
}

/// `labels` with the fit's accuracy in metres, against the standard at the printed scale.
fn with_accuracy(mut labels: LabelsReport, revision: &Revision) -> LabelsReport {
    let mean_lat = (revision.wgs84_bounds.south + revision.wgs84_bounds.north) / 2.0;
    let geographic = geomap_georef::is_geographic(&revision.crs).unwrap_or(false);
    let metres = |r: &geomap_georef::Residual| {
        if geographic {
            ((r.dx * 111_320.0 * mean_lat.to_radians().cos()).powi(2) + (r.dy * 110_574.0).powi(2)).sqrt()
        } else {
            (r.dx.powi(2) + r.dy.powi(2)).sqrt()
        }
    };
    let rmse_m =
        (!revision.residuals.is_empty()).then(|| (revision.residuals.iter().map(|r| metres(r).powi(2)).sum::<f64>() / revision.residuals.len() as f64).sqrt());
    let allowed_m = labels.accuracy.scale.map(|scale| scale as f64 * 0.0254 / 50.0);
    labels.accuracy =
        Accuracy { rmse_m, scale: labels.accuracy.scale, allowed_m, within_standard: rmse_m.zip(allowed_m).map(|(rmse, allowed)| rmse <= allowed) };
    labels
}
