//! A georeference read from the map itself: the neatline, the coordinate labels in a ring
//! around it, each label tied to its tick or corner, the values fitted per axis with the labels
//! that disagree rejected, and control points where the ticks are.
//!
//! Stages: [`neatline::find`] (a reduced mask, then each side refined at full resolution);
//! the ring's four bands read with the OCR reader (only the ring: never the whole scan);
//! [`labels::parse`]; [`ticks::tie`]; [`solve::fit_axis`] for longitude and latitude (or
//! easting and northing); [`datum::decide`] for the CRS. The fit of the control points to a
//! transform is the georef crate's.
//!
//! Invariants: every line read in the ring leaves as a used label (with its value and tick) or a
//! rejected one (with a reason); a control point is a tick or corner with at least one label's
//! value on it, the other coordinate taken from the other axis's fit along the same side.

pub mod datum;
pub mod labels;
pub mod neatline;
pub mod places;
pub mod signs;
pub mod solve;
pub mod ticks;

use crate::error::VisionError;
use crate::image::Rgb;
use crate::millis;
use crate::ocr::reader::{Reader, TextLine};
use geomap_model::page::PixelBox;
use geomap_model::progress::Progress;

use datum::CrsDecision;
use labels::{Hemisphere, MetricAxis, Value};
use neatline::Neatline;
use signs::Hemispheres;
use ticks::{Anchor, Edge};

/// Reads the pixels of a window `(x0, y0, x1, y1)` of the scan.
pub type Window<'a> = &'a mut dyn FnMut(Region) -> Result<Rgb, VisionError>;

/// Lines below this recogniser score are not read as labels.
pub const LABEL_MIN_SCORE: f64 = 0.3;

/// Which coordinate a label gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Degrees east (negative west), along the top and bottom sides.
    Longitude,
    /// Degrees north (negative south), along the left and right sides.
    Latitude,
    /// UTM metres east, along the top and bottom sides.
    Easting,
    /// UTM metres north, along the left and right sides.
    Northing,
}

/// One line of text read in the ring, and what became of it.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct LabelReport {
    /// What the reader read.
    pub text: String,
    /// Its box in the scan's pixels.
    pub bbox: PixelBox,
    /// The recogniser's score, 0–1.
    pub score: f64,
    /// The side of the neatline it labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<Edge>,
    /// The coordinate it gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub axis: Option<Axis>,
    /// Its value as used (signed degrees, or metres).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The point of the neatline it is tied to, `[col, row]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<[f64; 2]>,
    /// What that point is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<Anchor>,
    /// Whether a control point uses it.
    pub used: bool,
    /// Why it is not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A control point made from labels.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct LabelPoint {
    /// Column of the tick or corner.
    pub col: f64,
    /// Row.
    pub row: f64,
    /// Easting or longitude.
    pub x: f64,
    /// Northing or latitude.
    pub y: f64,
    /// What the point is.
    pub anchor: Anchor,
    /// The labels whose values it carries (indices into `labels`).
    pub labels: Vec<usize>,
    /// The lowest score of those labels' reading (0–1), halved for a point with no tick found.
    pub confidence: f64,
}

/// Milliseconds per stage.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct LabelTimings {
    /// Finding the neatline.
    pub neatline_ms: f64,
    /// Reading the ring's words (or taking them from the words already read of the sheet).
    pub read_ms: f64,
    /// Bands of the ring (of 4) whose words were taken from the words already read of the sheet
    /// (a stored layout's) instead of read again.
    pub bands_reused: usize,
    /// Parsing, tying to ticks and fitting.
    pub solve_ms: f64,
}

/// What the labels give.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct LabelGeoreference {
    /// The frame.
    pub neatline: Neatline,
    /// The control points, in `crs`.
    pub control_points: Vec<LabelPoint>,
    /// Every line read in the ring: used, or rejected with the reason.
    pub labels: Vec<LabelReport>,
    /// The hemispheres the labels were given, decided by all the sheet's evidence together.
    pub hemispheres: Hemispheres,
    /// The CRS the sheet's words point to, and why (absent when they give none: see `crs_problem`).
    pub crs: Option<CrsDecision>,
    /// Why no CRS could be decided, when none was.
    pub crs_problem: Option<String>,
    /// The scale printed on the sheet (`1:N`), when the ring carries it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<u64>,
    /// Time per stage.
    pub timings: LabelTimings,
}

/// Why labels gave no georeference.
#[derive(Debug, thiserror::Error)]
pub enum GraticuleError {
    /// The scan's pixels could not be read, the reader failed, or the call was cancelled.
    #[error(transparent)]
    Vision(#[from] VisionError),
    /// No neatline was found.
    #[error("no neatline: {0}")]
    NoNeatline(String),
    /// Too few labels could be used (or their CRS cannot be told); every label read, with why.
    #[error("{why}")]
    TooFewLabels {
        /// What is missing, in plain words.
        why: String,
        /// Every line read in the ring.
        labels: Vec<LabelReport>,
        /// The neatline's corners, clockwise from the top left (the ring was read around them).
        corners: [[f64; 2]; 4],
    },
}

/// The scan to read: its size and a window reader.
pub struct Sheet<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Reads windows of its pixels.
    pub read: Window<'a>,
}

/// What the server has already read of the sheet.
#[derive(Default)]
pub struct Known<'a> {
    /// The main map's box, from a layout.
    pub main_map: Option<PixelBox>,
    /// Lines read at the scan's full size in `regions` (a stored layout's words), kept at
    /// [`LABEL_MIN_SCORE`] or lower: a band of the ring inside one of these regions is not read again.
    pub lines: &'a [TextLine],
    /// The regions `lines` cover.
    pub regions: &'a [PixelBox],
    /// Every word read of the sheet (the layout's, the readings'), searched with the ring's for the
    /// datum, the UTM zone and the places it names.
    pub words: &'a [String],
}

/// Reads the georeference the sheet prints, with what is already `known` of it; `metric` chooses
/// UTM labels over degrees (`None`: degrees when both axes have them).
pub fn read(reader: &Reader, sheet: Sheet<'_>, known: &Known<'_>, metric: Option<bool>, progress: &Progress) -> Result<LabelGeoreference, GraticuleError> {
    let Sheet { width, height, read } = sheet;
    let mut timings = LabelTimings::default();
    let started = std::time::Instant::now();
    progress.fraction(0.0, "finding the neatline").map_err(VisionError::from)?;
    let neatline = neatline::find(width, height, read, known.main_map)?.map_err(GraticuleError::NoNeatline)?;
    timings.neatline_ms = millis(started);
    let started = std::time::Instant::now();
    let (lines, reused) = read_ring(reader, &neatline, (width, height), read, known, progress)?;
    timings.read_ms = millis(started);
    timings.bands_reused = reused;
    let started = std::time::Instant::now();
    progress.fraction(0.9, "tying labels to ticks and fitting").map_err(VisionError::from)?;
    let mut solved = solve_labels(&neatline, lines, (width, height), read, known.words, metric)?;
    timings.solve_ms = millis(started);
    solved.timings = timings;
    Ok(solved)
}

/// A window of the scan in whole pixels: `(x0, y0, x1, y1)`.
type Region = (u32, u32, u32, u32);

/// The ring's bands (top, bottom, left, right), as windows in whole pixels, and how far the ring
/// reaches outside and inside the frame.
fn ring(neatline: &Neatline, (width, height): (u32, u32)) -> ([Region; 4], f64, f64) {
    let [tl, tr, br, bl] = neatline.corners;
    let frame_w = ((tr[0] - tl[0]) + (br[0] - bl[0])) / 2.0;
    let frame_h = ((bl[1] - tl[1]) + (br[1] - tr[1])) / 2.0;
    let outside = (0.1 * frame_w.max(frame_h)).clamp(80.0, 800.0);
    let inside = 0.25 * outside;
    let (left, right) = (tl[0].min(bl[0]), tr[0].max(br[0]));
    let (top, bottom) = (tl[1].min(tr[1]), bl[1].max(br[1]));
    let (top_lo, top_hi) = (tl[1].min(tr[1]), tl[1].max(tr[1]));
    let (bottom_lo, bottom_hi) = (bl[1].min(br[1]), bl[1].max(br[1]));
    let (left_lo, left_hi) = (tl[0].min(bl[0]), tl[0].max(bl[0]));
    let (right_lo, right_hi) = (tr[0].min(br[0]), tr[0].max(br[0]));
    let window = |x0: f64, y0: f64, x1: f64, y1: f64| PixelBox { x0, y0, x1, y1 }.pixels(width, height);
    (
        [
            window(left - outside, top_lo - outside, right + outside, top_hi + inside),
            window(left - outside, bottom_lo - inside, right + outside, bottom_hi + outside),
            window(left_lo - outside, top - outside, left_hi + inside, bottom + outside),
            window(right_lo - inside, top - outside, right_hi + outside, bottom + outside),
        ],
        outside,
        inside,
    )
}

/// The lines read in the ring, in the scan's pixels, each once (the bands overlap at the corners),
/// and how many bands were taken from the `known` lines instead of read.
fn read_ring(
    reader: &Reader,
    neatline: &Neatline,
    size: (u32, u32),
    read: Window<'_>,
    known: &Known<'_>,
    progress: &Progress,
) -> Result<(Vec<TextLine>, usize), GraticuleError> {
    let (bands, ..) = ring(neatline, size);
    let zoom = if neatline.thickness_px < 2.0 { 2 } else { 1 };
    let region = |&(x0, y0, x1, y1): &Region| PixelBox { x0: f64::from(x0), y0: f64::from(y0), x1: f64::from(x1), y1: f64::from(y1) };
    // A band read before at full size is taken from those words; a thin frame's is read again at twice the size.
    let covered = |band: &Region| {
        let b = region(band);
        zoom == 1 && known.regions.iter().any(|r| r.x0 <= b.x0 && r.y0 <= b.y0 && r.x1 >= b.x1 && r.y1 >= b.y1)
    };
    let tiles: Vec<usize> =
        bands.iter().map(|band @ &(x0, y0, x1, y1)| if covered(band) { 0 } else { Reader::tiles((0, 0, (x1 - x0) * zoom, (y1 - y0) * zoom)).len() }).collect();
    let total: usize = tiles.iter().sum();
    let mut done = 0;
    let mut reused = 0;
    let mut lines: Vec<TextLine> = Vec::new();
    let keep = |line: TextLine, lines: &mut Vec<TextLine>| {
        if let Some(same) = lines.iter_mut().find(|kept| kept.bbox.iou(&line.bbox) > 0.5) {
            if line.score > same.score {
                *same = line;
            }
        } else {
            lines.push(line);
        }
    };
    for (band, count) in bands.iter().zip(&tiles) {
        let (x0, y0, x1, y1) = *band;
        if x1 <= x0 || y1 <= y0 {
            continue;
        }
        if covered(band) {
            let b = region(band);
            let inside = |line: &&TextLine| {
                let (x, y) = ((line.bbox.x0 + line.bbox.x1) / 2.0, (line.bbox.y0 + line.bbox.y1) / 2.0);
                line.score >= LABEL_MIN_SCORE && (b.x0..b.x1).contains(&x) && (b.y0..b.y1).contains(&y)
            };
            for line in known.lines.iter().filter(inside) {
                keep(line.clone(), &mut lines);
            }
            reused += 1;
            continue;
        }
        let image = read(*band)?;
        // A frame line one pixel thin marks a scan at low resolution, whose labels are too small for
        // the reader: it reads the ring at twice the size.
        let image = if zoom == 1 { image } else { image.resized(image.width * zoom, image.height * zoom) };
        let before = done;
        let reading = crate::ocr::read(reader, &image, (0, 0, image.width, image.height), LABEL_MIN_SCORE, |tile, _| {
            let at = (before + tile) as u64;
            let message = format!("reading the margins: tile {} of {total}", (before + tile + 1).min(total));
            progress.fraction(0.05 + 0.85 * at as f64 / total.max(1) as f64, message).map_err(VisionError::from)
        })?;
        done += count;
        for mut line in reading.lines {
            let (b, z) = (line.bbox, f64::from(zoom));
            line.bbox = PixelBox { x0: b.x0 / z + f64::from(x0), y0: b.y0 / z + f64::from(y0), x1: b.x1 / z + f64::from(x0), y1: b.y1 / z + f64::from(y0) };
            keep(line, &mut lines);
        }
    }
    lines.sort_by(|a, b| a.bbox.y0.total_cmp(&b.bbox.y0).then(a.bbox.x0.total_cmp(&b.bbox.x0)));
    Ok((lines, reused))
}

/// A label ready for its axis: which line, its tie, and what it may be worth.
struct Candidate {
    index: usize,
    edge: Edge,
    axis: Axis,
    tie: ticks::Tie,
    value: Value,
    hemisphere: Option<Hemisphere>,
}

/// Parses, ties and fits the lines read in the ring.
fn solve_labels(
    neatline: &Neatline,
    lines: Vec<TextLine>,
    size: (u32, u32),
    read: Window<'_>,
    words: &[String],
    metric: Option<bool>,
) -> Result<LabelGeoreference, GraticuleError> {
    let (_, outside, inside) = ring(neatline, size);
    let mut reports: Vec<LabelReport> = lines
        .iter()
        .map(|line| LabelReport {
            text: line.text.clone(),
            bbox: line.bbox,
            score: line.score,
            edge: None,
            axis: None,
            value: None,
            tick: None,
            anchor: None,
            used: false,
            reason: None,
        })
        .collect();
    let mut candidates = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let parsed = match labels::parse(&line.text) {
            Ok(parsed) => parsed,
            Err(reason) => {
                reports[index].reason = Some(reason);
                continue;
            }
        };
        let allowed = |edge: Edge| match parsed.value {
            Value::Metres(_, Some(MetricAxis::Easting)) => edge.horizontal(),
            Value::Metres(_, Some(MetricAxis::Northing)) => !edge.horizontal(),
            _ => true,
        };
        let edge = [Edge::Top, Edge::Bottom, Edge::Left, Edge::Right]
            .into_iter()
            .filter(|edge| allowed(*edge))
            .filter_map(|edge| ticks::placement(edge, neatline, &line.bbox).map(|(out, from_corner)| (edge, out, from_corner)))
            .filter(|(_, out, _)| (-inside..=outside).contains(out))
            .min_by(|a, b| a.2.total_cmp(&b.2))
            .map(|(edge, ..)| edge);
        let Some(edge) = edge else {
            reports[index].reason = Some("a coordinate, but not beside any side of the neatline".to_owned());
            continue;
        };
        let axis = match (&parsed.value, edge.horizontal()) {
            (Value::Metres(..), true) => Axis::Easting,
            (Value::Metres(..), false) => Axis::Northing,
            (_, true) => Axis::Longitude,
            (_, false) => Axis::Latitude,
        };
        let tie = ticks::tie(edge, neatline, &line.bbox, size, read)?;
        reports[index].edge = Some(edge);
        reports[index].axis = Some(axis);
        reports[index].anchor = Some(tie.anchor);
        candidates.push(Candidate { index, edge, axis, tie, value: parsed.value, hemisphere: parsed.hemisphere });
    }
    for horizontal in [true, false] {
        calibrate(&mut candidates, &lines, neatline, horizontal);
    }
    for c in &candidates {
        reports[c.index].tick = Some(c.tie.pixel);
    }
    let [tl, tr, br, bl] = neatline.corners;
    let across = (((tr[0] - tl[0]) + (br[0] - bl[0])) / 2.0, ((bl[1] - tl[1]) + (br[1] - tr[1])) / 2.0);
    let mut fits = std::collections::HashMap::new();
    let mut inputs = std::collections::HashMap::new();
    for axis in [Axis::Longitude, Axis::Latitude, Axis::Easting, Axis::Northing] {
        let on_axis: Vec<&Candidate> = candidates.iter().filter(|c| c.axis == axis).collect();
        if on_axis.is_empty() {
            continue;
        }
        let length = if matches!(axis, Axis::Longitude | Axis::Easting) { across.0 } else { across.1 };
        let placed: Vec<solve::Placed> = on_axis
            .iter()
            .map(|c| match &c.value {
                Value::Degrees(values) => solve::Placed { position: c.tie.position, candidates: values.clone(), full: true, minutes: None },
                Value::Minutes(minutes) => solve::Placed { position: c.tie.position, candidates: Vec::new(), full: false, minutes: Some(*minutes) },
                Value::DegreesOrMinutes(values, minutes) => {
                    solve::Placed { position: c.tie.position, candidates: values.clone(), full: true, minutes: Some(*minutes) }
                }
                Value::Metres(metres, _) => solve::Placed { position: c.tie.position, candidates: vec![*metres], full: true, minutes: None },
            })
            .collect();
        let tolerance = (10.0_f64.max(0.01 * length)) / length.max(1.0);
        // From 3 minutes (or 1 km) to 10 degrees (or 500 km) across the neatline.
        let span = if matches!(axis, Axis::Easting | Axis::Northing) { 1_000.0..=500_000.0 } else { 0.05..=10.0 };
        let indices: Vec<usize> = on_axis.iter().map(|c| c.index).collect();
        match solve::fit_axis(&placed, tolerance, span.clone()) {
            Ok(fit) => {
                record(&mut reports, &indices, &fit);
                fits.insert(axis, (fit, indices));
            }
            Err(solve::AxisProblem::TooFew) => {
                for c in &on_axis {
                    reports[c.index].reason = Some(format!("too few labels on the {} axis agree (two at different places are needed)", axis_name(axis)));
                }
            }
        }
        inputs.insert(axis, AxisInput { placed, tolerance, span });
    }
    for (x_axis, y_axis) in [(Axis::Longitude, Axis::Latitude), (Axis::Easting, Axis::Northing)] {
        square_pixels((x_axis, y_axis), across, &inputs, &mut fits, &mut reports);
    }
    let geographic = fits.contains_key(&Axis::Longitude) && fits.contains_key(&Axis::Latitude);
    let utm = fits.contains_key(&Axis::Easting) && fits.contains_key(&Axis::Northing);
    let use_metric = match metric {
        Some(wanted) => wanted,
        None => !geographic && utm,
    };
    let (x_axis, y_axis) = if use_metric { (Axis::Easting, Axis::Northing) } else { (Axis::Longitude, Axis::Latitude) };
    if !(fits.contains_key(&x_axis) && fits.contains_key(&y_axis)) {
        let count = |axis| reports.iter().filter(|r| r.axis == Some(axis) && r.value.is_some()).count();
        let why = format!(
            "too few usable coordinate labels: {} {} and {} {} labels agree, and each axis needs two at different places along the neatline",
            count(x_axis),
            axis_name(x_axis),
            count(y_axis),
            axis_name(y_axis)
        );
        return Err(GraticuleError::TooFewLabels { why, labels: reports, corners: neatline.corners });
    }
    // Signs: all the sheet's evidence together, then each label whose own mark disagrees rejected.
    let mut sheet_words: Vec<String> = reports.iter().map(|r| r.text.clone()).collect();
    sheet_words.extend(words.iter().cloned());
    let hemispheres = decide_hemispheres(&candidates, &mut reports, &fits, &sheet_words, use_metric);
    let (x_fit, x_labels) = &fits[&x_axis];
    let (y_fit, y_labels) = &fits[&y_axis];
    let (x_sign, y_sign) = if use_metric { (1.0, 1.0) } else { (hemispheres.longitude_sign(), hemispheres.latitude_sign()) };
    let centre_lon_lat = fits
        .get(&Axis::Longitude)
        .zip(fits.get(&Axis::Latitude))
        .map(|((lon, _), (lat, _))| (lon.at(0.5) * hemispheres.longitude_sign(), lat.at(0.5) * hemispheres.latitude_sign()));
    for index in x_labels.iter().chain(y_labels) {
        let sign = if x_labels.contains(index) { x_sign } else { y_sign };
        if let Some(value) = reports[*index].value.as_mut() {
            *value *= sign;
        }
    }
    // A label whose tick was not found sits somewhere beside it (USGS sheets print latitudes above
    // their ticks): once an axis has three labels on ticks or corners, those alone place it.
    let anchored = |axis: Axis| candidates.iter().filter(|c| c.axis == axis && reports[c.index].value.is_some() && c.tie.anchor != Anchor::LabelCentre).count();
    let precise = [(x_axis, anchored(x_axis) >= 3), (y_axis, anchored(y_axis) >= 3)];
    // A neatline's sides are graticule lines at round values: a side whose corner carries a label
    // of an axis has that label's value, not the fit's near it. [axis][side: 0 near, 1 far].
    let mut at_side = [[None; 2]; 2];
    for c in candidates.iter().filter(|c| c.tie.anchor == Anchor::Corner) {
        let is_x = c.axis == x_axis;
        if let Some(value) = reports[c.index].value.filter(|_| is_x || c.axis == y_axis) {
            at_side[usize::from(!is_x)][corner_position(neatline, c.tie.pixel, is_x) as usize] = Some(value);
        }
    }
    let side_value = |is_x: bool, position: f64| {
        let (fit, sign) = if is_x { (x_fit, x_sign) } else { (y_fit, y_sign) };
        at_side[usize::from(!is_x)][position as usize].unwrap_or_else(|| sign * fit.at(position))
    };
    let mut points: Vec<LabelPoint> = Vec::new();
    for c in candidates.iter().filter(|c| c.axis == x_axis || c.axis == y_axis) {
        let Some(value) = reports[c.index].value else { continue };
        if c.tie.anchor == Anchor::LabelCentre && precise.iter().any(|(axis, enough)| *axis == c.axis && *enough) {
            reports[c.index].reason = Some("no tick found beside it, and the labels on ticks and corners place this axis".to_owned());
            continue;
        }
        // The other coordinate: the other axis's fit at this side (top/left 0, bottom/right 1).
        let across_side = if matches!(c.edge, Edge::Bottom | Edge::Right) { 1.0 } else { 0.0 };
        let (mut x, mut y) = if c.axis == x_axis { (Some(value), None) } else { (None, Some(value)) };
        let confidence = reports[c.index].score * if c.tie.anchor == Anchor::LabelCentre { 0.5 } else { 1.0 };
        if let Some(point) = points.iter_mut().find(|p| ((p.col - c.tie.pixel[0]).powi(2) + (p.row - c.tie.pixel[1]).powi(2)).sqrt() < 1.0) {
            // One corner labelled on both axes: each label gives its own coordinate.
            if c.axis == x_axis {
                point.x = value;
            } else {
                point.y = value;
            }
            point.labels.push(c.index);
            point.confidence = point.confidence.min(confidence);
            continue;
        }
        if x.is_none() {
            x = Some(side_value(true, if c.tie.anchor == Anchor::Corner { corner_position(neatline, c.tie.pixel, true) } else { across_side }));
        }
        if y.is_none() {
            y = Some(side_value(false, if c.tie.anchor == Anchor::Corner { corner_position(neatline, c.tie.pixel, false) } else { across_side }));
        }
        let same = |p: &LabelPoint| (p.x - x.unwrap_or_default()).abs() < 1e-9 && (p.y - y.unwrap_or_default()).abs() < 1e-9;
        if let Some(first) = points.iter().find(|p| same(p)) {
            // The same label read twice (the ring's bands overlap at the corners), tied elsewhere.
            reports[c.index].reason = Some(format!("gives the same coordinates as line {} of this list, which is used", first.labels[0]));
            reports[c.index].value = None;
            continue;
        }
        points.push(LabelPoint {
            col: c.tie.pixel[0],
            row: c.tie.pixel[1],
            x: x.unwrap_or_default(),
            y: y.unwrap_or_default(),
            anchor: c.tie.anchor,
            labels: vec![c.index],
            confidence,
        });
    }
    for point in &points {
        for index in &point.labels {
            reports[*index].used = true;
        }
    }
    let (crs, crs_problem) = match datum::decide(&sheet_words, centre_lon_lat, use_metric, hemispheres.latitude == Hemisphere::South) {
        Ok(decision) => (Some(decision), None),
        Err(why) => (None, Some(why)),
    };
    let scale = sheet_words.iter().find_map(|line| crate::layout::numbers::scale_ratio(line));
    Ok(LabelGeoreference {
        neatline: neatline.clone(),
        control_points: points,
        labels: reports,
        hemispheres,
        crs,
        crs_problem,
        scale,
        timings: LabelTimings::default(),
    })
}

/// Each label's verdict from `fit` (`indices` are the labels' lines, in the fit's order): its value, or why not.
fn record(reports: &mut [LabelReport], indices: &[usize], fit: &solve::AxisFit) {
    for (index, verdict) in indices.iter().zip(&fit.verdicts) {
        let report = &mut reports[*index];
        (report.value, report.reason) = match verdict {
            Ok(value) => (Some(*value), None),
            Err(reason) => (None, Some(reason.clone())),
        };
    }
}

/// How far apart the ground one pixel spans along the two axes may be: a scan's pixels are square,
/// and a sheet's projection or a scanner's stretch changes that by a few percent at most.
const SQUARE: f64 = 1.25;

/// Metres on the ground per unit of `axis`'s value (a degree of latitude, of longitude at `latitude`, a metre).
fn metres_per_unit(axis: Axis, latitude: f64) -> f64 {
    match axis {
        Axis::Latitude => 110_574.0,
        Axis::Longitude => 111_320.0 * latitude.to_radians().cos(),
        Axis::Easting | Axis::Northing => 1.0,
    }
}

/// Holds the two fitted `axes` (x along the top and bottom, y along the sides; `across` is the
/// neatline's width and height in pixels) to square pixels: when one pixel spans more than
/// [`SQUARE`] times the ground along one axis as along the other, the axis fewer labels placed is
/// fitted again with its scale within that of the other's, and is not fitted at all (its labels
/// say why) when no two of its labels then agree. One misread label cannot stretch a sheet so:
/// PP-OCRv5 read the USGS sample's 36°00′ as "3800", which with one other latitude made its 30′
/// of latitude 4.5°.
fn square_pixels(
    (x_axis, y_axis): (Axis, Axis),
    across: (f64, f64),
    inputs: &std::collections::HashMap<Axis, AxisInput>,
    fits: &mut std::collections::HashMap<Axis, (solve::AxisFit, Vec<usize>)>,
    reports: &mut [LabelReport],
) {
    let (Some((x_fit, _)), Some((y_fit, _))) = (fits.get(&x_axis), fits.get(&y_axis)) else { return };
    // The median latitude a label gives (one misread moves it little), within the poles.
    let mut latitudes: Vec<f64> = y_fit.verdicts.iter().filter_map(|verdict| verdict.as_ref().ok().copied()).collect();
    latitudes.sort_by(f64::total_cmp);
    let latitude = if y_axis == Axis::Latitude { latitudes.get(latitudes.len() / 2).map_or(0.0, |l| l.abs().min(89.0)) } else { 0.0 };
    let ground = |axis: Axis, fit: &solve::AxisFit, pixels: f64| fit.slope.abs() * metres_per_unit(axis, latitude) / pixels.max(1.0);
    let (x_ground, y_ground) = (ground(x_axis, x_fit, across.0), ground(y_axis, y_fit, across.1));
    if (x_ground / y_ground).max(y_ground / x_ground) <= SQUARE {
        return;
    }
    let used = |fit: &solve::AxisFit| fit.verdicts.iter().filter(|verdict| verdict.is_ok()).count();
    let (weak, strong, weak_ground, strong_ground, pixels) =
        if used(y_fit) <= used(x_fit) { (y_axis, x_axis, y_ground, x_ground, across.1) } else { (x_axis, y_axis, x_ground, y_ground, across.0) };
    let input = &inputs[&weak];
    let expected = strong_ground * pixels / metres_per_unit(weak, latitude);
    let span = (expected / SQUARE).max(*input.span.start())..=(expected * SQUARE).min(*input.span.end());
    let Some((_, indices)) = fits.remove(&weak) else { return };
    match solve::fit_axis(&input.placed, input.tolerance, span) {
        Ok(fit) => {
            record(reports, &indices, &fit);
            fits.insert(weak, (fit, indices));
        }
        Err(solve::AxisProblem::TooFew) => {
            for index in indices {
                if reports[index].value.take().is_none() {
                    continue; // rejected already, for its own reason
                }
                reports[index].reason = Some(format!(
                    "its axis's labels make a pixel span {:.2} times as much ground along the {} axis as along the {} axis, and no two of them agree with square pixels",
                    weak_ground / strong_ground,
                    axis_name(weak),
                    axis_name(strong)
                ));
            }
        }
    }
}

/// What one axis was fitted from, to fit it again: its labels, how far one may sit from the line,
/// and the bounds of the value's change across the neatline.
struct AxisInput {
    placed: Vec<solve::Placed>,
    tolerance: f64,
    span: std::ops::RangeInclusive<f64>,
}

/// Where a sheet prints its labels beside their lines (centred on them, or standing on them, as
/// the latitudes of USGS sheets do) shows at its corners: the median offset of the corner labels
/// of the top and bottom sides (or the left and right), in their own size along the side, moves
/// the labels of those sides whose tick was not found by as much. Two corner labels are needed.
fn calibrate(candidates: &mut [Candidate], lines: &[TextLine], neatline: &Neatline, horizontal: bool) {
    let along = |bbox: &PixelBox| if horizontal { ((bbox.x0 + bbox.x1) / 2.0, bbox.x1 - bbox.x0) } else { ((bbox.y0 + bbox.y1) / 2.0, bbox.y1 - bbox.y0) };
    let axis_index = usize::from(!horizontal);
    let mut offsets: Vec<f64> = candidates
        .iter()
        .filter(|c| c.edge.horizontal() == horizontal && c.tie.anchor == Anchor::Corner)
        .map(|c| {
            let (centre, extent) = along(&lines[c.index].bbox);
            (c.tie.pixel[axis_index] - centre) / extent.max(1.0)
        })
        .collect();
    if offsets.len() < 2 {
        return;
    }
    offsets.sort_by(f64::total_cmp);
    let offset = offsets[offsets.len() / 2];
    for c in candidates.iter_mut().filter(|c| c.edge.horizontal() == horizontal && c.tie.anchor == Anchor::LabelCentre) {
        let (start, end) = c.edge.ends(neatline);
        let (from, to) = (start[axis_index], end[axis_index]);
        let (centre, extent) = along(&lines[c.index].bbox);
        let at = (centre + offset * extent).clamp(from, to);
        let side = c.edge.side(neatline);
        c.tie.pixel = if horizontal { [at, side.at(at)] } else { [side.at(at), at] };
        c.tie.position = ((at - from) / (to - from).max(1.0)).clamp(0.0, 1.0);
    }
}

/// A corner's position across the other axis: for `x`, 0 at the left side and 1 at the right;
/// otherwise 0 at the top and 1 at the bottom.
fn corner_position(neatline: &Neatline, pixel: [f64; 2], x: bool) -> f64 {
    let [_, tr, br, bl] = neatline.corners;
    let is = |corner: [f64; 2]| (corner[0] - pixel[0]).abs() < 1e-6 && (corner[1] - pixel[1]).abs() < 1e-6;
    let far = if x { is(tr) || is(br) } else { is(bl) || is(br) };
    if far { 1.0 } else { 0.0 }
}

/// Decides each axis's hemisphere from all the evidence ([`signs::decide`]) and rejects the labels
/// whose own letter or minus sign disagrees with it. Northing labels carry no sign: a UTM sheet's
/// hemisphere is the latitudes' when it has them, else its letters and places.
fn decide_hemispheres(
    candidates: &[Candidate],
    reports: &mut [LabelReport],
    fits: &std::collections::HashMap<Axis, (solve::AxisFit, Vec<usize>)>,
    sheet_words: &[String],
    metric: bool,
) -> Hemispheres {
    let states = places::named_states(sheet_words);
    let zone = sheet_words.iter().find_map(|line| datum::named_zone(line));
    let agreeing = |reports: &[LabelReport], axis: Axis| candidates.iter().filter(|c| c.axis == axis && reports[c.index].value.is_some()).collect::<Vec<_>>();
    let decide = |reports: &[LabelReport], axis: Axis| {
        let on_axis = agreeing(reports, axis);
        let marks: Vec<Hemisphere> = on_axis.iter().filter_map(|c| c.hemisphere).collect();
        let fit = fits.get(&axis).map(|(fit, _)| fit);
        signs::decide(&signs::Evidence {
            axis,
            slope: fit.map(|fit| fit.slope),
            agreeing: on_axis.len(),
            marks: &marks,
            states: &states,
            zone: zone.zip(fit.map(|fit| fit.at(0.5))),
        })
    };
    let longitude = fits.contains_key(&Axis::Longitude).then(|| decide(reports, Axis::Longitude));
    let latitude = if fits.contains_key(&Axis::Latitude) || !metric { decide(reports, Axis::Latitude) } else { decide(reports, Axis::Northing) };
    for (axis, decision) in [(Axis::Longitude, longitude.as_ref()), (Axis::Latitude, Some(&latitude))] {
        let Some(decision) = decision else { continue };
        for c in candidates.iter().filter(|c| c.axis == axis) {
            let disagrees = |mark: &Hemisphere| signs::says_negative(axis, *mark) == Some(!decision.negative);
            let Some(mark) = c.hemisphere.filter(disagrees).filter(|_| reports[c.index].value.is_some()) else { continue };
            reports[c.index].value = None;
            reports[c.index].reason = Some(format!(
                "prints {}, but the {} axis is {} by the sheet's evidence ({})",
                signs::mark_words(mark),
                axis_name(axis),
                if decision.negative { signs::side(axis).1 } else { signs::side(axis).0 },
                decision.evidence.join("; ")
            ));
        }
    }
    let mut evidence: Vec<String> = longitude.iter().flat_map(|d| d.evidence.iter().map(|e| format!("longitude: {e}"))).collect();
    evidence.extend(latitude.evidence.iter().map(|e| format!("latitude: {e}")));
    Hemispheres {
        latitude: if latitude.negative { Hemisphere::South } else { Hemisphere::North },
        longitude: longitude.map(|d| if d.negative { Hemisphere::West } else { Hemisphere::East }),
        evidence,
    }
}

fn axis_name(axis: Axis) -> &'static str {
    match axis {
        Axis::Longitude => "longitude",
        Axis::Latitude => "latitude",
        Axis::Easting => "easting",
        Axis::Northing => "northing",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TextLine;

    /// A white `width`×`height` scan with a frame 3 pixels thick around `frame` (left, top, right, bottom).
    fn frame_only(width: u32, height: u32, frame: (u32, u32, u32, u32)) -> Rgb {
        let mut image = Rgb { width, height, pixels: vec![255; (width * height * 3) as usize] };
        let (x0, y0, x1, y1) = frame;
        for y in 0..height {
            for x in 0..width {
                let inside = (x0 - 1..=x1 + 1).contains(&x) && (y0 - 1..=y1 + 1).contains(&y);
                let on_side = x.abs_diff(x0) <= 1 || x.abs_diff(x1) <= 1 || y.abs_diff(y0) <= 1 || y.abs_diff(y1) <= 1;
                if inside && on_side {
                    let at = ((y * width + x) * 3) as usize;
                    image.pixels[at..at + 3].copy_from_slice(&[20, 20, 20]);
                }
            }
        }
        image
    }

    /// The labels of a 15'×30' quadrangle (36°45'–37°00' N, 114°00'–113°30' W) printed without
    /// hemisphere letters around the frame `(200, 150)–(1200, 850)`, with `misread` replacing the
    /// text of the right side's latitude labels.
    fn quadrangle_labels(misread: &[(&str, &str)]) -> Vec<TextLine> {
        let label = |text: &str, cx: f64, cy: f64| {
            let half = 4.5 * text.chars().count() as f64;
            TextLine { text: text.to_owned(), bbox: PixelBox { x0: cx - half, y0: cy - 10.0, x1: cx + half, y1: cy + 10.0 }, score: 0.95 }
        };
        let mut lines = Vec::new();
        for (i, text) in ["114°00'", "52'30\"", "45'", "37'30\"", "113°30'"].iter().enumerate() {
            let x = 200.0 + 250.0 * i as f64;
            lines.push(label(text, x, 125.0));
            lines.push(label(text, x, 875.0));
        }
        for (i, text) in ["37°00'", "56'15\"", "52'30\"", "48'45\"", "36°45'"].iter().enumerate() {
            let y = 150.0 + 175.0 * i as f64;
            lines.push(label(text, 150.0, y));
            let right = misread.iter().find(|(truth, _)| truth == text).map_or(*text, |(_, read)| *read);
            lines.push(label(right, 1250.0, y));
        }
        lines
    }

    /// `lines` solved around the frame `(200, 150)–(1200, 850)` of a 1400×1000 scan.
    fn solve_lines(lines: Vec<TextLine>, words: &[&str]) -> Result<LabelGeoreference, GraticuleError> {
        let image = frame_only(1400, 1000, (200, 150, 1200, 850));
        let mut read = |window: (u32, u32, u32, u32)| Ok(image.crop(window));
        let neatline = neatline::find(1400, 1000, &mut read, None).unwrap().expect("the frame");
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        solve_labels(&neatline, lines, (1400, 1000), &mut read, &words, None)
    }

    fn solved(misread: &[(&str, &str)], words: &[&str]) -> LabelGeoreference {
        solve_lines(quadrangle_labels(misread), words).unwrap_or_else(|error| panic!("{error}"))
    }

    /// The quadrangle's longitude labels, and `latitudes` (text, row) along its left side only.
    fn few_latitudes(latitudes: &[(&str, f64)]) -> Vec<TextLine> {
        let all = quadrangle_labels(&[]);
        let mut lines: Vec<TextLine> = all.into_iter().filter(|line| line.bbox.y1 < 150.0 || line.bbox.y0 > 850.0).collect();
        for (text, y) in latitudes {
            let half = 4.5 * text.chars().count() as f64;
            lines.push(TextLine { text: (*text).to_owned(), bbox: PixelBox { x0: 150.0 - half, y0: y - 10.0, x1: 150.0 + half, y1: y + 10.0 }, score: 0.95 });
        }
        lines
    }

    #[test]
    fn a_misread_latitude_cannot_stretch_the_sheet_out_of_square_pixels() {
        // 37°00' read as 39°00': with the middle label alone it would make 15' of latitude 4.25°.
        let with_corner = [("39°00'", 150.0), ("36°52'30\"", 500.0), ("36°45'", 850.0)];
        let found = solve_lines(few_latitudes(&with_corner), &["Arizona"]).expect("two latitudes agree with square pixels");
        assert!(found.control_points.iter().all(|p| p.y > 36.7 && p.y < 37.05), "{:?}", found.control_points);
        let misread = found.labels.iter().find(|l| l.text == "39°00'").expect("the misread label");
        assert!(!misread.used && misread.reason.as_deref().unwrap_or_default().starts_with("inconsistent"), "{misread:?}");
        // Without the bottom label, no two latitudes agree with square pixels: no georeference, and the labels say why.
        let Err(GraticuleError::TooFewLabels { labels, .. }) = solve_lines(few_latitudes(&with_corner[..2]), &[]) else {
            panic!("one latitude cannot place the sheet")
        };
        let reason = labels.iter().find(|l| l.text == "39°00'").and_then(|l| l.reason.clone()).unwrap_or_default();
        assert!(reason.contains("times as much ground along the latitude axis as along the longitude axis"), "{reason}");
    }

    #[test]
    fn a_latitude_read_with_a_minus_sign_is_rejected_and_the_sheet_stays_north() {
        let found = solved(&[("52'30\"", "-52'30\"")], &["Mohave County, Arizona"]);
        assert_eq!((found.hemispheres.latitude, found.hemispheres.longitude), (Hemisphere::North, Some(Hemisphere::West)), "{:?}", found.hemispheres);
        assert!(found.control_points.iter().all(|p| p.y > 36.7 && p.y < 37.05 && p.x < -113.4 && p.x > -114.05), "{:?}", found.control_points);
        let minus = found.labels.iter().find(|l| l.text == "-52'30\"").expect("the misread label");
        assert!(!minus.used, "{minus:?}");
        let reason = minus.reason.as_deref().unwrap_or_default();
        assert!(reason.starts_with("prints a minus sign, but the latitude axis is north"), "{reason}");
        assert!(reason.contains("the sheet names Arizona") && reason.contains("grow up the sheet"), "{reason}");
        assert!(found.hemispheres.evidence.iter().any(|e| e.starts_with("latitude: 1 label prints a minus sign: 1 vote south")), "{:?}", found.hemispheres);
    }

    #[test]
    fn minus_signs_on_every_label_still_follow_the_direction_of_the_values() {
        let all: Vec<(&str, &str)> =
            vec![("37°00'", "-37°00'"), ("56'15\"", "-56'15\""), ("52'30\"", "-52'30\""), ("48'45\"", "-48'45\""), ("36°45'", "-36°45'")];
        let found = solved(&all, &[]);
        assert_eq!(found.hemispheres.latitude, Hemisphere::North, "{:?}", found.hemispheres);
        assert!(found.control_points.iter().all(|p| p.y > 0.0));
    }
}
