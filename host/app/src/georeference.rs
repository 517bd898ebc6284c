//! Georeferencing a registered map: bounds, control points, or the coordinate
//! labels the sheet prints become a new revision (or, with `dry_run`, the
//! revision that would be written).
//!
//! Invariants: the fit and its files are made outside the registry's write
//! transaction, in a staged folder published before the revision is recorded
//! (concurrent georeferences lose none; a failed one leaves nothing); a
//! revision from labels records `source: map_labels`, covers the neatline's box
//! (so `wgs84_bounds` is the map's, not the sheet's) and reports its accuracy on
//! the ground through the one conversion of `geomap_georef::ground`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use geomap_georef::{Artifact, Bounds, ControlPoint, Coordinate, PixelRegion, Placement, PlacementSource, Revision, TransformKind, Wgs84Bounds};
use geomap_model::trace;
use geomap_store::registry::Document;
use geomap_store::sweep::Staged;
use geomap_vision::graticule::datum::CrsDecision;
use geomap_vision::graticule::neatline::Neatline;
use geomap_vision::graticule::places;
use geomap_vision::graticule::signs::Hemispheres;
use geomap_vision::graticule::ticks::Anchor;
use geomap_vision::graticule::{GraticuleError, Known, LabelPoint, LabelReport, LabelTimings, Sheet};

use crate::provenance::{Made, PROVENANCE_FILE};
use crate::registered::RegisteredMap;
use crate::stored::StoredWords;
use crate::uris::{artifact_uri, layout_uri, revision_dir};
use crate::{App, AppError, ArgumentError, Progress};

/// The name `geomap_georeference` is known by.
pub const TOOL: &str = "geomap_georeference";

/// Arguments of `geomap_georeference`: `bounds` (with an optional `pixel_region`) or
/// `control_points` (with an optional `transform`), or `from: "labels"` to read the
/// georeference from the map's own coordinate labels.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeoreferenceRequest {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GeorefFrom {
    /// The coordinate labels and ticks printed around the map's neatline.
    Labels,
}

impl GeoreferenceRequest {
    /// The labels georeference of `map_id` (what `batch` runs): the CRS decided from the sheet's words.
    pub fn from_labels(map_id: &str) -> GeoreferenceRequest {
        GeoreferenceRequest { map_id: map_id.to_owned(), from: Some(GeorefFrom::Labels), ..GeoreferenceRequest::default() }
    }

    /// The CRS and placement this request asks for (bounds or control points, not labels), or the
    /// argument that does not fit.
    pub fn explicit(&self) -> Result<(String, Placement), ArgumentError> {
        if self.from.is_some() {
            return Err(ArgumentError::conflict("/from", "no from here: bounds or control_points"));
        }
        if self.dry_run.is_some() {
            return Err(ArgumentError::conflict("/dry_run", "dry_run only with from: \"labels\""));
        }
        let crs = self
            .crs
            .clone()
            .ok_or_else(|| ArgumentError::missing("/crs", "a CRS GDAL/PROJ accepts (EPSG:4326, EPSG:4267, …); only from: \"labels\" may leave it out"))?;
        let placement = match (&self.bounds, &self.control_points) {
            (Some(_), Some(_)) => return Err(ArgumentError::conflict("/control_points", "either bounds or control_points, not both")),
            (None, None) => {
                return Err(ArgumentError::missing(
                    "/bounds",
                    "bounds (with an optional pixel_region), control_points (with an optional transform), or from: \"labels\"",
                ));
            }
            (Some(bounds), None) => match self.transform {
                Some(kind) if kind != TransformKind::Affine => {
                    return Err(ArgumentError::conflict(
                        "/transform",
                        "no transform with bounds (bounds always give an affine transform); use control_points for other transforms",
                    ));
                }
                _ => Placement::Bounds { bounds: *bounds, region: self.pixel_region },
            },
            (None, Some(points)) => match self.pixel_region {
                Some(_) => return Err(ArgumentError::conflict("/pixel_region", "no pixel_region with control_points (their pixels say where they are)")),
                None => Placement::ControlPoints { points: points.clone(), transform: self.transform.unwrap_or_default(), region: None },
            },
        };
        Ok((crs, placement))
    }

    /// Checks a request with `from: "labels"`.
    fn check_labels(&self) -> Result<(), ArgumentError> {
        if self.bounds.is_some() {
            return Err(ArgumentError::conflict("/bounds", "no bounds with from: \"labels\" (the labels place the map; add control_points if you know more)"));
        }
        if self.pixel_region.is_some() {
            return Err(ArgumentError::conflict("/pixel_region", "no pixel_region with from: \"labels\""));
        }
        Ok(())
    }
}

/// The result of `geomap_georeference`: the new revision, now the map's current one (with
/// `dry_run`, the revision it would write, unwritten and without files).
#[derive(Debug, Clone, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LabelsReport {
    /// The frame found, its sides fitted at sub-pixel precision.
    pub neatline: Neatline,
    /// The control points the labels gave (the revision's `control_points` also holds any the agent added), with their evidence.
    pub control_points: Vec<LabelPoint>,
    /// Every line read in the ring around the neatline: used, or rejected with the reason.
    pub labels: Vec<LabelReport>,
    /// The hemispheres the labels were given, decided by all the sheet's evidence together (the
    /// direction the values run, hemisphere letters and minus signs, the places and UTM zone the
    /// sheet names), with each piece of evidence and its votes.
    pub hemispheres: Hemispheres,
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
#[derive(Debug, Clone, Serialize, JsonSchema)]
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

impl App {
    /// Fits and writes the artifacts, then records the revision in one registry transaction. With
    /// `from: "labels"` the control points come from the sheet's labels first (the first half of the
    /// progress), and `dry_run` stops before writing. Cancelled, it stops at the next tile read or
    /// GDAL progress report and keeps nothing.
    pub async fn georeference(self: &Arc<Self>, request: GeoreferenceRequest, progress: Progress) -> Result<GeoreferenceReport, AppError> {
        let explicit = match request.from {
            Some(GeorefFrom::Labels) => {
                request.check_labels()?;
                None
            }
            None => Some(request.explicit()?),
        };
        let app = Arc::clone(self);
        trace::spawn_blocking(move || app.georeference_now(&request, explicit, &progress)).await
    }

    fn georeference_now(
        &self,
        request: &GeoreferenceRequest,
        explicit: Option<(String, Placement)>,
        progress: &Progress,
    ) -> Result<GeoreferenceReport, AppError> {
        let begun = crate::now();
        let map = self.open_registered(&request.map_id)?;
        map.pixels("georeference")?;
        let source = (explicit.is_none()).then_some(PlacementSource::MapLabels);
        // What the server has read of the sheet: the label reader searches it for the datum and places,
        // and every revision is checked against the places it names.
        let stored = self.newest_layout_words(map.id())?;
        let layout_lines = stored.iter().flat_map(|words| &words.lines);
        let mut words: Vec<String> =
            layout_lines.map(|line| line.text.clone()).chain(self.reading_lines(map.id())?.into_iter().map(|line| line.text)).collect();
        let (placement, labels) = match explicit {
            Some((crs, placement)) => (geomap_georef::Request { crs, placement }, None),
            None => {
                let (placement, labels) = self.placement_from_labels(&map, request, (stored.as_ref(), &words), &progress.stage(0.0, 0.5))?;
                words.extend(labels.labels.iter().map(|label| label.text.clone()));
                (placement, Some(labels))
            }
        };
        let checked = |mut revision: Revision| {
            revision.warnings.extend(place_warning(&words, &revision.wgs84_bounds));
            Revision { source, ..revision }
        };
        let revision_id = format!("rev_{}", geomap_model::random_hex(10));
        let map_id = map.id().to_owned();
        if request.dry_run == Some(true) {
            let revision = checked(geomap_georef::describe(map.record.width, map.record.height, &placement, &revision_id)?);
            let labels = labels.map(|labels| with_accuracy(labels, &revision)).transpose()?;
            return Ok(GeoreferenceReport { map_id, revision, labels, dry_run: true });
        }
        let output_dir = revision_dir(&self.settings.artifact_root, &map_id, &revision_id);
        let scan_path = map.record.root.join(&map.record.relative_path);
        let scan = geomap_georef::Scan { file: &map.file, path: &scan_path, width: map.record.width, height: map.record.height };
        let writing = if labels.is_some() { progress.stage(0.5, 1.0) } else { progress.clone() };
        let staged = Staged::create(&output_dir).map_err(|source| geomap_georef::GeorefError::Io { action: "create the revision folder", source })?;
        // A failed revision's folder goes with `staged`: nothing half-written is left behind.
        let mut revision =
            geomap_georef::georeference(&scan, &placement, &revision_id, staged.path(), &self.settings.georef_writing(), &writing).map(checked)?;
        // Everything that can fail is done before the revision is published and recorded.
        let labels = labels.map(|labels| with_accuracy(labels, &revision)).transpose()?;
        // Read from the labels: the OCR models read them, and the newest layout's words were searched.
        let (models, used) = match labels {
            Some(_) => {
                let models = self.text_reader().map(|reader| reader.models().to_vec()).unwrap_or_default();
                let layout =
                    self.registry.newest_document(Document::Layout, &map_id)?.map(|(layout_id, _)| (layout_uri(&map_id, &layout_id, "layout.json"), "layout"));
                (models, layout.into_iter().collect())
            }
            None => (Vec::new(), Vec::new()),
        };
        let bytes = Made {
            tool: TOOL,
            run_id: &revision_id,
            made: revision.artifacts.iter().map(|artifact| artifact_uri(&map_id, &revision_id, &artifact.name)).collect(),
            scan: (&map_id, &map.record.sha256),
            used,
            models: &models,
            parameters: serde_json::to_value(request).expect("requests serialize"),
            started: &begun,
            ended: &crate::now(),
        }
        .write(staged.path())?;
        revision.artifacts.push(Artifact {
            name: PROVENANCE_FILE.to_owned(),
            media_type: "application/json".to_owned(),
            bytes,
            resource_uri: None,
            path: None,
        });
        staged.publish().map_err(|source| geomap_georef::GeorefError::Io { action: "move the revision folder into place", source })?;
        // On an error the folder stays: whole, and perhaps recorded (a commit whose answer was lost).
        if !self.registry.add_revision(&map_id, &revision)? {
            let _ = std::fs::remove_dir_all(&output_dir);
            return Err(AppError::unknown_map(&map_id));
        }
        Ok(GeoreferenceReport { revision: self.located(&map_id, revision), map_id, labels, dry_run: false })
    }

    /// Reads the sheet's labels and makes the placement from them: the decided CRS unless the
    /// request gives one, the request's points added, the fit chosen (`geomap_georef::fit`).
    fn placement_from_labels(
        &self,
        map: &RegisteredMap,
        request: &GeoreferenceRequest,
        (stored, words): (Option<&StoredWords>, &[String]),
        progress: &Progress,
    ) -> Result<(geomap_georef::Request, LabelsReport), AppError> {
        let reader = self.text_reader()?;
        let main_map = self
            .newest_layout(map.id())
            .ok()
            .and_then(|(_, layout)| layout.components.into_iter().find(|component| component.class == "main_map").map(|component| component.bbox));
        let metric = request.crs.as_deref().map(geomap_georef::is_geographic).transpose()?.map(|geographic| !geographic);
        let mut window = |region: (u32, u32, u32, u32)| map.window(self, region);
        let sheet = Sheet { width: map.record.width as u32, height: map.record.height as u32, read: &mut window };
        // The newest layout's words spare reading the ring again where they cover it; every word read
        // of the sheet (the layout's, the readings') may name the datum or places the ring lacks.
        let known =
            Known { main_map, lines: stored.map_or(&[], |words| words.lines.as_slice()), regions: stored.map_or(&[], |words| words.regions.as_slice()), words };
        let found = geomap_vision::graticule::read(&reader, sheet, &known, metric, progress)?;
        let crs = match (&request.crs, &found.crs) {
            (Some(crs), _) => crs.clone(),
            (None, Some(decision)) => decision.crs.clone(),
            (None, None) => {
                let why = found.crs_problem.clone().unwrap_or_else(|| "the sheet's words give no CRS".to_owned());
                return Err(GraticuleError::TooFewLabels { why, labels: found.labels, corners: found.neatline.corners }.into());
            }
        };
        let mut points: Vec<ControlPoint> = found
            .control_points
            .iter()
            .map(|p| ControlPoint { col: Coordinate(p.col), row: Coordinate(p.row), x: Coordinate(p.x), y: Coordinate(p.y) })
            .collect();
        points.extend(request.control_points.iter().flatten().cloned());
        // A sheet's graticule is straight in its projection, not in degrees: degrees decided from the
        // sheet's words are also tried in the UTM zone of the map on the same datum.
        let mut fits = vec![(crs, points)];
        if let Some(utm) = found.crs.as_ref().filter(|_| request.crs.is_none()).and_then(|decision| utm_alternative(decision, &fits[0].1)) {
            // Only an alternative: where PROJ cannot take the points there, the fit stays in degrees.
            if let Ok(projected) = geomap_georef::reproject(&fits[0].0, &utm, &fits[0].1.iter().map(|p| (p.x.0, p.y.0)).collect::<Vec<_>>()) {
                let points = fits[0].1.iter().zip(projected).map(|(p, (x, y))| ControlPoint { x: Coordinate(x), y: Coordinate(y), ..*p }).collect();
                fits.push((utm, points));
            }
        }
        // A corner is where two fitted sides cross, and the agent's points are the agent's: only ticks may be false.
        let droppable: Vec<bool> =
            found.control_points.iter().map(|p| p.anchor != Anchor::Corner).chain(std::iter::repeat(false)).take(fits[0].1.len()).collect();
        let chosen = geomap_georef::fit::choose((map.record.width, map.record.height), fits, &droppable, request.transform)?;
        let mut labels = found.labels;
        for &(index, error_px) in &chosen.dropped {
            for &label in &found.control_points[index].labels {
                labels[label].used = false;
                labels[label].reason = Some(format!("its tick lies {error_px:.1} px from where the other points put it: a line of the map taken for a tick?"));
            }
        }
        let label_points: Vec<LabelPoint> = found
            .control_points
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !chosen.dropped.iter().any(|(dropped, _)| dropped == i))
            .map(|(_, point)| point)
            .collect();
        progress.fraction(1.0, "labels read; fitting")?;
        let report = LabelsReport {
            neatline: found.neatline,
            control_points: label_points,
            labels,
            hemispheres: found.hemispheres,
            crs_decision: found.crs,
            crs_given: request.crs.is_some(),
            transform_choice: chosen.why,
            accuracy: Accuracy { rmse_m: None, scale: found.scale, allowed_m: None, within_standard: None },
            timings: found.timings,
        };
        let region = neatline_region(&report.neatline, map.record.width, map.record.height);
        let placement = Placement::ControlPoints { points: chosen.kept, transform: chosen.transform, region: Some(region) };
        Ok((geomap_georef::Request { crs: chosen.crs, placement }, report))
    }
}

/// How far (degrees) a revision may reach past the box of a state the sheet names before it is said to be elsewhere.
const PLACE_MARGIN_DEGREES: f64 = 0.5;

/// A warning when the revision's area meets none of the U.S. states the sheet's words name (the
/// map placed in another hemisphere, or far from where it says it is).
fn place_warning(words: &[String], bounds: &Wgs84Bounds) -> Option<String> {
    let named = places::named_states(words);
    if named.is_empty() || named.iter().any(|named| named.place.meets(bounds, PLACE_MARGIN_DEGREES)) {
        return None;
    }
    let names: Vec<String> = named.iter().map(|named| format!("{} (\"{}\")", named.place.name, named.line)).collect();
    let degrees = |value: f64, positive: char, negative: char| format!("{:.2}°{}", value.abs(), if value < 0.0 { negative } else { positive });
    Some(format!(
        "The sheet names {}, but this revision places the map at {} to {}, {} to {}, outside it: check the signs and values of the bounds or control points (with from: \"labels\", the labels report says which hemisphere each axis was given and why).",
        names.join(" and "),
        degrees(bounds.south, 'N', 'S'),
        degrees(bounds.north, 'N', 'S'),
        degrees(bounds.west, 'E', 'W'),
        degrees(bounds.east, 'E', 'W'),
    ))
}

/// The neatline's box in whole pixels, inside a `width`×`height` scan: the region a labels
/// georeference covers, so its `wgs84_bounds` is the map's, not the sheet's.
fn neatline_region(neatline: &Neatline, width: u64, height: u64) -> PixelRegion {
    let [tl, tr, br, bl] = neatline.corners;
    let (x0, y0) = (tl[0].min(bl[0]).max(0.0).floor() as u64, tl[1].min(tr[1]).max(0.0).floor() as u64);
    let (x1, y1) = ((tr[0].max(br[0]).ceil() as u64).min(width), (bl[1].max(br[1]).ceil() as u64).min(height));
    PixelRegion { col: x0, row: y0, width: x1.saturating_sub(x0).max(1), height: y1.saturating_sub(y0).max(1) }
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

/// `labels` with the fit's accuracy on the ground, against the standard at the printed scale.
fn with_accuracy(mut labels: LabelsReport, revision: &Revision) -> Result<LabelsReport, AppError> {
    let rmse_m = geomap_georef::ground::rmse_m(revision)?;
    let allowed_m = labels.accuracy.scale.map(allowed_error_m);
    labels.accuracy =
        Accuracy { rmse_m, scale: labels.accuracy.scale, allowed_m, within_standard: rmse_m.zip(allowed_m).map(|(rmse, allowed)| rmse <= allowed) };
    Ok(labels)
}

/// What the U.S. National Map Accuracy Standard allows at scale `1:scale`: 1/50 inch on the map, in metres.
fn allowed_error_m(scale: u64) -> f64 {
    scale as f64 * 0.0254 / 50.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgumentProblem;

    #[test]
    fn a_request_names_the_argument_that_does_not_fit() {
        let bounds = Bounds { west: Coordinate(-114.0), south: Coordinate(35.0), east: Coordinate(-113.0), north: Coordinate(36.0) };
        let base = GeoreferenceRequest { map_id: "map_x".into(), crs: Some("EPSG:4326".into()), ..GeoreferenceRequest::default() };
        let cases = [
            (GeoreferenceRequest { crs: None, bounds: Some(bounds), ..base.clone() }, "/crs", ArgumentProblem::Missing),
            (base.clone(), "/bounds", ArgumentProblem::Missing),
            (GeoreferenceRequest { bounds: Some(bounds), control_points: Some(Vec::new()), ..base.clone() }, "/control_points", ArgumentProblem::Conflict),
            (
                GeoreferenceRequest { bounds: Some(bounds), transform: Some(TransformKind::Polynomial2), ..base.clone() },
                "/transform",
                ArgumentProblem::Conflict,
            ),
            (GeoreferenceRequest { bounds: Some(bounds), dry_run: Some(true), ..base.clone() }, "/dry_run", ArgumentProblem::Conflict),
        ];
        for (request, field, problem) in cases {
            let error = request.explicit().unwrap_err();
            assert_eq!((error.field.as_str(), error.problem), (field, problem), "{error}");
        }
        let (crs, placement) = GeoreferenceRequest { bounds: Some(bounds), ..base.clone() }.explicit().unwrap();
        assert_eq!((crs.as_str(), placement), ("EPSG:4326", Placement::Bounds { bounds, region: None }));
        let labels = GeoreferenceRequest { bounds: Some(bounds), ..GeoreferenceRequest::from_labels("map_x") };
        assert_eq!(labels.check_labels().unwrap_err().field, "/bounds");
    }

    fn bounds() -> Bounds {
        Bounds { west: Coordinate(-114.0), south: Coordinate(35.0), east: Coordinate(-113.0), north: Coordinate(36.0) }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn bounds_write_a_revision_with_its_files_and_progress_to_the_end() {
        let test = crate::testing::TestApp::new(&[]);
        test.scan("a.png", 64, 48, |x, y| [(x * 4) as u8, (y * 5) as u8, 90]);
        let map_id = test.register("a.png").await;
        let (progress, heard, _) = crate::testing::heard();
        let request = GeoreferenceRequest { map_id: map_id.clone(), crs: Some("EPSG:4326".into()), bounds: Some(bounds()), ..GeoreferenceRequest::default() };
        let report = test.app.georeference(request, progress).await.unwrap();
        assert!(!report.dry_run && report.labels.is_none());
        let folder = revision_dir(&test.app.settings.artifact_root, &map_id, &report.revision.revision_id);
        assert!(folder.join("georeferenced.tif").is_file(), "the COG is written");
        assert_eq!(
            report.revision.artifacts[0].resource_uri.as_deref(),
            Some(format!("geomap://maps/{map_id}/revisions/{}/georeferenced.tif", report.revision.revision_id).as_str())
        );
        let done: Vec<u64> = heard.lock().unwrap().iter().map(|update| update.done).collect();
        assert_eq!((done.first(), done.last()), (Some(&0), Some(&100)), "{done:?}");
        assert_eq!(test.app.registry.map(&map_id).unwrap().unwrap().revisions.len(), 1, "recorded");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_revision_outside_the_state_the_sheet_names_carries_a_warning() {
        use geomap_store::registry::{Document, StoredDocument};
        let test = crate::testing::TestApp::new(&[]);
        test.scan("a.png", 64, 48, |x, y| [(x * 4) as u8, (y * 5) as u8, 90]);
        let map_id = test.register("a.png").await;
        let reading = serde_json::json!({ "schema": "geomap-text/v1", "lines": [
            { "text": "GEOLOGIC MAP OF THE PEACH SPRINGS QUADRANGLE", "bbox": { "x0": 0.0, "y0": 0.0, "x1": 60.0, "y1": 5.0 }, "score": 0.9 },
            { "text": "Mohave County, Arizona", "bbox": { "x0": 0.0, "y0": 6.0, "x1": 60.0, "y1": 10.0 }, "score": 0.9 } ] });
        let record =
            StoredDocument { kind: Document::Reading, id: "txt_a".into(), map_id: map_id.clone(), created_at: crate::now(), document: reading.to_string() };
        assert!(test.app.registry.add_document(&record).unwrap());
        let placed = |bounds: Bounds| GeoreferenceRequest {
            map_id: map_id.clone(),
            crs: Some("EPSG:4326".into()),
            bounds: Some(bounds),
            ..GeoreferenceRequest::default()
        };
        let right = test.app.georeference(placed(bounds()), Progress::none()).await.unwrap();
        assert!(right.revision.warnings.iter().all(|w| !w.contains("Arizona")), "{:?}", right.revision.warnings);
        let mirrored = Bounds { south: Coordinate(-36.0), north: Coordinate(-35.0), ..bounds() };
        let wrong = test.app.georeference(placed(mirrored), Progress::none()).await.unwrap();
        let warning = wrong.revision.warnings.iter().find(|w| w.contains("Arizona")).expect("a warning");
        assert!(
            warning.starts_with("The sheet names Arizona (\"Mohave County, Arizona\"), but this revision places the map at 36.00°S to 35.00°S"),
            "{warning}"
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn control_points_give_residuals_and_a_wrong_placement_is_invalid_bounds() {
        let test = crate::testing::TestApp::new(&[]);
        test.scan("a.png", 100, 100, |_, _| [250, 250, 250]);
        let map_id = test.register("a.png").await;
        let point = |col: f64, row: f64, dx: f64| ControlPoint {
            col: Coordinate(col),
            row: Coordinate(row),
            x: Coordinate(500_000.0 + col * 10.0 + dx),
            y: Coordinate(4_000_000.0 - row * 10.0),
        };
        let points = vec![point(0.0, 0.0, 0.0), point(100.0, 0.0, 0.0), point(100.0, 100.0, 4.0), point(0.0, 100.0, 0.0)];
        let request =
            GeoreferenceRequest { map_id: map_id.clone(), crs: Some("EPSG:32612".into()), control_points: Some(points), ..GeoreferenceRequest::default() };
        let report = test.app.georeference(request, Progress::none()).await.unwrap();
        assert_eq!(report.revision.residuals.len(), 4);
        assert!(report.revision.rmse.unwrap().crs_units > 0.5);
        let upside_down = Bounds { south: Coordinate(36.0), north: Coordinate(35.0), ..bounds() };
        let request =
            GeoreferenceRequest { map_id: map_id.clone(), crs: Some("EPSG:4326".into()), bounds: Some(upside_down), ..GeoreferenceRequest::default() };
        let refused = test.app.georeference(request, Progress::none()).await.unwrap_err();
        assert!(matches!(refused, AppError::Georef(geomap_georef::GeorefError::InvalidBounds(_))), "{refused:?}");
        assert_eq!(test.app.registry.map(&map_id).unwrap().unwrap().revisions.len(), 1, "a refused placement records nothing");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_bundle_has_no_pixels_labels_need_the_reader_and_a_cancelled_call_keeps_nothing() {
        let test = crate::testing::TestApp::new(&[]);
        let bundle = serde_json::json!({ "schema": "geomap-map-bundle/v1", "image": { "width": 100, "height": 100 } });
        std::fs::write(test.maps.join("b.layout.json"), bundle.to_string()).unwrap();
        let bundle_id = test.register("b.layout.json").await;
        let request = |map_id: &str| GeoreferenceRequest {
            map_id: map_id.to_owned(),
            crs: Some("EPSG:4326".into()),
            bounds: Some(bounds()),
            ..GeoreferenceRequest::default()
        };
        let no_pixels = test.app.georeference(request(&bundle_id), Progress::none()).await.unwrap_err();
        assert!(matches!(no_pixels, AppError::Media(geomap_store::media::MediaError::NoPixels { .. })), "{no_pixels:?}");
        test.scan("a.png", 50, 50, |_, _| [0, 0, 0]);
        let map_id = test.register("a.png").await;
        let no_reader = test.app.georeference(GeoreferenceRequest::from_labels(&map_id), Progress::none()).await.unwrap_err();
        assert!(matches!(no_reader, AppError::Vision(geomap_vision::VisionError::NotReady { .. })), "{no_reader:?}");
        let (progress, _, cancel) = crate::testing::heard();
        cancel.cancel();
        let cancelled = test.app.georeference(request(&map_id), progress).await.unwrap_err();
        assert!(cancelled.is_cancellation(), "{cancelled:?}");
        assert!(test.app.registry.map(&map_id).unwrap().unwrap().revisions.is_empty());
        let folder = test.app.settings.artifact_root.join(geomap_model::data_root::ARTIFACTS_DIR).join(&map_id);
        assert!(std::fs::read_dir(&folder).map_or(true, |mut entries| entries.next().is_none()), "nothing is left in {}", folder.display());
    }

    #[test]
    fn the_accuracy_standard_is_a_fiftieth_of_an_inch_at_the_printed_scale() {
        assert!((allowed_error_m(24_000) - 12.192).abs() < 1e-9);
        assert!((allowed_error_m(100_000) - 50.8).abs() < 1e-9);
    }
}
